package tabula.compat;

import static tabula.compat.Assert.check;
import static tabula.compat.Assert.eq;
import static tabula.compat.Bytes.bb;
import static tabula.compat.T2.cells;
import static tabula.compat.T2.col;
import static tabula.compat.T2.cv;
import static tabula.compat.T2.names;
import static tabula.compat.T2.tget;
import static tabula.compat.T2.tn;
import static tabula.compat.T2.values;
import static tabula.compat.Thrift1Checks.NO_ATTRS;
import static tabula.compat.Thrift1Checks.columns;
import static tabula.compat.Thrift1Checks.map;
import static tabula.compat.Thrift1Checks.putTs;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import tabula.compat.thrift1.ColumnDescriptor;
import tabula.compat.thrift1.TCell;
import tabula.compat.thrift1.TRowResult;
import tabula.compat.thrift2.TColumnIncrement;
import tabula.compat.thrift2.TDelete;
import tabula.compat.thrift2.TGet;
import tabula.compat.thrift2.TIncrement;
import tabula.compat.thrift2.TNamespaceDescriptor;
import tabula.compat.thrift2.TResult;
import tabula.compat.thrift2.TScan;

/**
 * Thrift1 and Thrift2 are two doors into one HBase: what one writes the other reads
 * identically (values, timestamps, versions, schema), namespaced tables included.
 */
final class CrossApiChecks {
    private CrossApiChecks() {}

    static TGet allVersions(String row) {
        TGet g = tget(row);
        g.setMaxVersions(100);
        return g;
    }

    /** Every cell of a Thrift1 getVer as "value@ts". */
    static List<String> t1versions(Ctx c, String table, String row, String column) throws Exception {
        return Thrift1Checks.cells(c.t1().getVer(bb(table), bb(row), bb(column), 100, NO_ATTRS));
    }

    static void register(Suite s) {
        s.thrift2("x.thrift1_writes_thrift2_reads", c -> {
            String t = Thrift1Checks.createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "one", 100);
            putTs(c.t1(), t, "r", "cf1:a", "two", 200);
            putTs(c.t1(), t, "r", "cf2:b", "bee", 150);
            putTs(c.t1(), t, "r", "cf1:", "empty-qualifier", 100);
            TResult r = c.t2().get(bb(t), allVersions("r"));
            eq("Thrift2 view of Thrift1 cells",
                    List.of("cf1:=empty-qualifier@100", "cf1:a=two@200", "cf1:a=one@100", "cf2:b=bee@150"), cells(r));
            Map<String, tabula.compat.thrift2.TColumnFamilyDescriptor> f =
                    Thrift2AdminChecks.families(c.t2().getTableDescriptor(tn(t)));
            eq("Thrift2 families of a Thrift1 table", List.of("cf1", "cf2"), new ArrayList<>(f.keySet()));
            eq("cf1 maxVersions", 10, f.get("cf1").getMaxVersions());
            eq("cf2 maxVersions", 3, f.get("cf2").getMaxVersions());
        });

        s.thrift2("x.thrift2_writes_thrift1_reads", c -> {
            String t = T2.createTable(c);
            T2.put(c.t2(), t, "r", cv("cf1", "a", "one", 100), cv("cf1", "a", "two", 200), cv("cf2", "b", "bee", 150));
            eq("Thrift1 getVer of cf1:a", List.of("two@200", "one@100"), t1versions(c, t, "r", "cf1:a"));
            List<TRowResult> rows = c.t1().getRow(bb(t), bb("r"), NO_ATTRS);
            eq("Thrift1 getRow", map("cf1:a", "two", "cf2:b", "bee"), columns(rows.get(0)));
            eq("cf2:b timestamp", 150L, rows.get(0).getColumns().get(bb("cf2:b")).getTimestamp());
            Map<ByteBuffer, ColumnDescriptor> cds = c.t1().getColumnDescriptors(bb(t));
            eq("Thrift1 cf1 maxVersions", 10, cds.get(bb("cf1:")).getMaxVersions());
            eq("Thrift1 cf2 maxVersions", 3, cds.get(bb("cf2:")).getMaxVersions());
            check(c.t1().getTableNames().contains(bb(t)), "Thrift1 getTableNames lacks the Thrift2 table " + t);
        });

        s.thrift2("x.deletes_seen_by_the_other_api", c -> {
            String t = Thrift1Checks.createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "1", 10);
            putTs(c.t1(), t, "r", "cf1:b", "2", 10);
            putTs(c.t1(), t, "s", "cf1:a", "3", 10);
            c.t1().deleteAll(bb(t), bb("r"), bb("cf1:a"), NO_ATTRS);
            eq("Thrift2 after Thrift1 deleteAll", List.of("cf1:b=2"), values(c.t2().get(bb(t), tget("r"))));
            c.t2().deleteSingle(bb(t), new TDelete(bb("s")));
            eq("Thrift1 after Thrift2 deleteSingle", 0, c.t1().getRow(bb(t), bb("s"), NO_ATTRS).size());
        });

        s.thrift2("x.counters_shared", c -> {
            String t = Thrift1Checks.createTable(c);
            eq("Thrift1 atomicIncrement", 5L, c.t1().atomicIncrement(bb(t), bb("r"), bb("cf1:n"), 5));
            TColumnIncrement two = new TColumnIncrement(bb("cf1"), bb("n"));
            two.setAmount(2);
            TResult r = c.t2().increment(bb(t), new TIncrement(bb("r"), new ArrayList<>(List.of(two))));
            eq("Thrift2 increment", 7L, Bytes.toI64(r.getColumnValues().get(0).getValue()));
            eq("Thrift1 atomicIncrement again", 8L, c.t1().atomicIncrement(bb(t), bb("r"), bb("cf1:n"), 1));
        });

        s.thrift2("x.namespaced_table_created_by_thrift1", c -> {
            String ns = c.namespace();
            c.t2().createNamespace(new TNamespaceDescriptor(ns));
            String q = "t1made";
            String full = ns + ":" + q;
            Thrift1Checks.createTable(c.t1(), full, Thrift1Checks.family("cf1", 5));
            eq("Thrift2 tableExists", true, c.t2().tableExists(tn(ns, q)));
            eq("Thrift2 getTableNamesByNamespace", List.of(full), names(c.t2().getTableNamesByNamespace(ns)));
            check(c.t1().getTableNames().contains(bb(full)), "Thrift1 getTableNames lacks " + full);
            putTs(c.t1(), full, "r", "cf1:a", "from-t1", 100);
            eq("Thrift2 read of " + full, List.of("cf1:a=from-t1@100"), cells(c.t2().get(bb(full), tget("r"))));
            T2.put(c.t2(), full, "s", cv("cf1", "b", "from-t2", 200));
            List<TRowResult> rows = c.t1().getRows(bb(full), Thrift1Checks.bbs("r", "s"), NO_ATTRS);
            eq("Thrift1 getRows of " + full, List.of("r", "s"), Thrift1Checks.rowKeys(rows));
            eq("Thrift1 view of the Thrift2 write", map("cf1:b", "from-t2"), columns(rows.get(1)));
            int id = c.t1().scannerOpenWithScan(bb(full), new tabula.compat.thrift1.TScan(), NO_ATTRS);
            eq("Thrift1 scan of " + full, List.of("r", "s"), Thrift1Checks.rowKeys(Thrift1Checks.drain(c.t1(), id, 10)));
            eq("Thrift2 scan of " + full, List.of("r", "s"),
                    T2.rows(c.t2().getScannerResults(bb(full), new TScan(), 10)));
            eq("a same-named default-namespace table does not exist", false, c.t2().tableExists(tn(q)));
        });

        s.thrift2("x.namespaced_table_created_by_thrift2", c -> {
            String ns = c.namespace();
            c.t2().createNamespace(new TNamespaceDescriptor(ns));
            String q = "t2made";
            String full = ns + ":" + q;
            T2.createTable(c.t2(), tn(ns, q), List.of(), T2.family("cf1", 4));
            eq("Thrift1 getColumnDescriptors maxVersions", 4,
                    c.t1().getColumnDescriptors(bb(full)).get(bb("cf1:")).getMaxVersions());
            T2.put(c.t2(), full, "r", cv("cf1", "a", "v", 42));
            List<TCell> got = c.t1().get(bb(full), bb("r"), bb("cf1:a"), NO_ATTRS);
            eq("Thrift1 get", List.of("v@42"), Thrift1Checks.cells(got));
            c.t1().disableTable(bb(full));
            eq("Thrift2 isTableDisabled after Thrift1 disableTable", true, c.t2().isTableDisabled(tn(ns, q)));
            c.t1().deleteTable(bb(full));
            eq("Thrift2 tableExists after Thrift1 deleteTable", false, c.t2().tableExists(tn(ns, q)));
        });

        s.thrift2("x.default_namespace_spellings", c -> {
            String t = Thrift1Checks.createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "v", 7);
            eq("Thrift2 get on default:" + t, List.of("cf1:a=v@7"), cells(c.t2().get(bb("default:" + t), tget("r"))));
            eq("Thrift2 tableExists(ns=default)", true, c.t2().tableExists(tn("default", t)));
            TGet g = tget("r", col("cf1", "a"));
            eq("Thrift2 get on " + t, List.of("cf1:a=v@7"), cells(c.t2().get(bb(t), g)));
            eq("Thrift1 name has no default: prefix", true, c.t1().getTableNames().contains(bb(t)));
            check(!c.t1().getTableNames().contains(bb("default:" + t)), "Thrift1 lists default:" + t);
        });
    }
}
