package tabula.compat;

import static tabula.compat.Assert.check;
import static tabula.compat.Assert.eq;
import static tabula.compat.Assert.eqBytes;
import static tabula.compat.Assert.expect;
import static tabula.compat.Assert.expectApp;
import static tabula.compat.Assert.fail;
import static tabula.compat.Bytes.bb;
import static tabula.compat.Bytes.str;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TProtocol;
import tabula.compat.thrift1.AlreadyExists;
import tabula.compat.thrift1.BatchMutation;
import tabula.compat.thrift1.ColumnDescriptor;
import tabula.compat.thrift1.Hbase;
import tabula.compat.thrift1.IOError;
import tabula.compat.thrift1.IllegalArgument;
import tabula.compat.thrift1.Mutation;
import tabula.compat.thrift1.TAccessControlEntity;
import tabula.compat.thrift1.TAppend;
import tabula.compat.thrift1.TCell;
import tabula.compat.thrift1.TColumn;
import tabula.compat.thrift1.TIncrement;
import tabula.compat.thrift1.TPermissionScope;
import tabula.compat.thrift1.TRegionInfo;
import tabula.compat.thrift1.TRowResult;
import tabula.compat.thrift1.TScan;
import tabula.compat.thrift1.TThriftServerType;
import tabula.compat.thrift2.THBaseService;

/** Thrift1 (`Hbase` service) checks; each asserts what HBase's Thrift1 server answers. */
final class Thrift1Checks {
    private Thrift1Checks() {}

    /** Operation attributes: clients usually send an empty map. */
    static final Map<ByteBuffer, ByteBuffer> NO_ATTRS = Collections.emptyMap();

    // ---- helpers shared with the cross-API checks

    static ColumnDescriptor family(String name, int maxVersions) {
        ColumnDescriptor cd = new ColumnDescriptor();
        cd.setName(bb(name + ":"));
        cd.setMaxVersions(maxVersions);
        return cd;
    }

    /** Creates a table with families cf1 (10 versions) and cf2 (3 versions). */
    static String createTable(Ctx c) throws Exception {
        String t = c.table();
        createTable(c.t1(), t, family("cf1", 10), family("cf2", 3));
        return t;
    }

    static void createTable(Hbase.Client h, String table, ColumnDescriptor... families) throws Exception {
        h.createTable(bb(table), Arrays.asList(families));
    }

    static Mutation put(String column, String value) {
        Mutation m = new Mutation();
        m.setColumn(bb(column));
        m.setValue(bb(value));
        return m;
    }

    static Mutation delete(String column) {
        Mutation m = new Mutation();
        m.setIsDelete(true);
        m.setColumn(bb(column));
        return m;
    }

    static void put(Hbase.Client h, String table, String row, String column, String value) throws Exception {
        h.mutateRow(bb(table), bb(row), List.of(put(column, value)), NO_ATTRS);
    }

    static void putTs(Hbase.Client h, String table, String row, String column, String value, long ts)
            throws Exception {
        h.mutateRowTs(bb(table), bb(row), List.of(put(column, value)), ts, NO_ATTRS);
    }

    /** Cells as "value@timestamp", in the order returned. */
    static List<String> cells(List<TCell> cells) {
        List<String> out = new ArrayList<>();
        for (TCell cell : cells) out.add(str(cell.getValue()) + "@" + cell.getTimestamp());
        return out;
    }

    /** A TRowResult's `columns` map as column -> value, sorted. */
    static Map<String, String> columns(TRowResult r) {
        check(r.isSetColumns(), "TRowResult.columns must be set for " + str(r.getRow()));
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<ByteBuffer, TCell> e : r.getColumns().entrySet()) {
            out.put(str(e.getKey()), str(e.getValue().getValue()));
        }
        return out;
    }

    static Map<String, String> map(String... kv) {
        Map<String, String> out = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) out.put(kv[i], kv[i + 1]);
        return out;
    }

    static List<String> rowKeys(List<TRowResult> rows) {
        List<String> out = new ArrayList<>();
        for (TRowResult r : rows) out.add(str(r.getRow()));
        return out;
    }

    /** Drains a scanner with scannerGetList(id, n) until it returns [], then closes it. */
    static List<TRowResult> drain(Hbase.Client h, int id, int n) throws Exception {
        List<TRowResult> all = new ArrayList<>();
        for (int guard = 0; guard < 10_000; guard++) {
            List<TRowResult> batch = h.scannerGetList(id, n);
            if (batch.isEmpty()) {
                h.scannerClose(id);
                return all;
            }
            check(batch.size() <= n, "scannerGetList(" + n + ") returned " + batch.size() + " rows");
            all.addAll(batch);
        }
        throw fail("scanner " + id + " never ended");
    }

    static List<ByteBuffer> bbs(String... items) {
        List<ByteBuffer> out = new ArrayList<>();
        for (String s : items) out.add(bb(s));
        return out;
    }

    // ---- the checks

    static void register(Suite s) {
        s.thrift1("t1.getThriftServerType.is_ONE", c ->
                eq("getThriftServerType on the Thrift1 port", TThriftServerType.ONE, c.t1().getThriftServerType()));

        s.thrift1("t1.getClusterId.non_empty", c -> {
            String id = c.t1().getClusterId();
            check(id != null && !id.isEmpty(), "getClusterId returned an empty id");
        });

        s.thrift1("t1.createTable.column_descriptors", c -> {
            String t = c.table();
            ColumnDescriptor cf1 = family("cf1", 5);
            cf1.setInMemory(true);
            cf1.setBlockCacheEnabled(true);
            cf1.setBloomFilterType("ROW");
            ColumnDescriptor cf2 = new ColumnDescriptor();
            cf2.setName(bb("cf2")); // no colon: the family is the name up to ':'
            createTable(c.t1(), t, cf1, cf2);
            Map<ByteBuffer, ColumnDescriptor> got = c.t1().getColumnDescriptors(bb(t));
            List<String> keys = new ArrayList<>();
            for (ByteBuffer k : got.keySet()) keys.add(str(k));
            Collections.sort(keys);
            eq("descriptor keys", List.of("cf1:", "cf2:"), keys);
            ColumnDescriptor d1 = got.get(bb("cf1:"));
            eqBytes("cf1 name", "cf1:", d1.getName());
            eq("cf1 maxVersions", 5, d1.getMaxVersions());
            eq("cf1 inMemory", true, d1.isInMemory());
            eq("cf1 blockCacheEnabled", true, d1.isBlockCacheEnabled());
            eq("cf1 bloomFilterType", "ROW", d1.getBloomFilterType());
            eq("cf1 compression", "NONE", d1.getCompression());
            eq("cf1 timeToLive (forever)", Integer.MAX_VALUE, d1.getTimeToLive());
            ColumnDescriptor d2 = got.get(bb("cf2:"));
            eqBytes("cf2 name", "cf2:", d2.getName());
            eq("cf2 maxVersions (IDL default)", 3, d2.getMaxVersions());
            eq("cf2 blockCacheEnabled (IDL default false)", false, d2.isBlockCacheEnabled());
            eq("cf2 inMemory", false, d2.isInMemory());
        });

        s.thrift1("t1.createTable.nonpositive_ttl_is_forever", c -> {
            String t = c.table();
            ColumnDescriptor cf = family("cf", 1);
            cf.setTimeToLive(-1);
            createTable(c.t1(), t, cf);
            eq("timeToLive", Integer.MAX_VALUE, c.t1().getColumnDescriptors(bb(t)).get(bb("cf:")).getTimeToLive());
        });

        s.thrift1("t1.createTable.existing_is_AlreadyExists", c -> {
            String t = createTable(c);
            expect(AlreadyExists.class, "createTable of an existing table",
                    () -> createTable(c.t1(), t, family("cf1", 1)));
            eq("table still listed after the error", true, c.t1().getTableNames().contains(bb(t)));
        });

        s.thrift1("t1.createTable.empty_family_is_IllegalArgument", c -> {
            String t = c.table();
            ColumnDescriptor cf = new ColumnDescriptor();
            cf.setName(bb(":"));
            expect(IllegalArgument.class, "createTable with family name ':'", () -> createTable(c.t1(), t, cf));
            eq("table not created", false, c.t1().getTableNames().contains(bb(t)));
        });

        s.thrift1("t1.getTableNames.lists_created_tables", c -> {
            String a = createTable(c);
            String b2 = createTable(c);
            List<ByteBuffer> names = c.t1().getTableNames();
            check(names.contains(bb(a)) && names.contains(bb(b2)), "getTableNames lacks " + a + " or " + b2);
            for (ByteBuffer n : names) {
                check(!str(n).startsWith("hbase:"), "getTableNames lists system table " + str(n));
            }
            Map<ByteBuffer, Boolean> enabled = c.t1().getTableNamesWithIsTableEnabled();
            eq("getTableNamesWithIsTableEnabled[" + a + "]", true, enabled.get(bb(a)));
        });

        s.thrift1("t1.get.latest_version_and_missing", c -> {
            String t = createTable(c);
            putTs(c.t1(), t, "r1", "cf1:a", "old", 100);
            putTs(c.t1(), t, "r1", "cf1:a", "new", 200);
            eq("get cf1:a", List.of("new@200"), cells(c.t1().get(bb(t), bb("r1"), bb("cf1:a"), NO_ATTRS)));
            eq("get of a missing row", List.of(), cells(c.t1().get(bb(t), bb("nope"), bb("cf1:a"), NO_ATTRS)));
            eq("get of a missing column", List.of(), cells(c.t1().get(bb(t), bb("r1"), bb("cf1:zz"), NO_ATTRS)));
        });

        s.thrift1("t1.get.family_vs_empty_qualifier", c -> {
            String t = createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "va", 5);
            putTs(c.t1(), t, "r", "cf1:", "vempty", 5);
            List<String> family = cells(c.t1().get(bb(t), bb("r"), bb("cf1"), NO_ATTRS));
            Collections.sort(family);
            eq("get 'cf1' (whole family)", List.of("va@5", "vempty@5"), family);
            eq("get 'cf1:' (empty qualifier only)", List.of("vempty@5"),
                    cells(c.t1().get(bb(t), bb("r"), bb("cf1:"), NO_ATTRS)));
        });

        s.thrift1("t1.getVer.newest_first", c -> {
            String t = createTable(c);
            for (long ts : new long[] {10, 30, 20}) putTs(c.t1(), t, "r", "cf1:q", "v" + ts, ts);
            eq("getVer(2)", List.of("v30@30", "v20@20"),
                    cells(c.t1().getVer(bb(t), bb("r"), bb("cf1:q"), 2, NO_ATTRS)));
            eq("getVer(10)", List.of("v30@30", "v20@20", "v10@10"),
                    cells(c.t1().getVer(bb(t), bb("r"), bb("cf1:q"), 10, NO_ATTRS)));
        });

        s.thrift1("t1.getVerTs.timestamp_is_exclusive", c -> {
            String t = createTable(c);
            for (long ts : new long[] {10, 20, 30}) putTs(c.t1(), t, "r", "cf1:q", "v" + ts, ts);
            eq("getVerTs(ts=30)", List.of("v20@20", "v10@10"),
                    cells(c.t1().getVerTs(bb(t), bb("r"), bb("cf1:q"), 30, 10, NO_ATTRS)));
        });

        s.thrift1("t1.getRow.columns_map", c -> {
            String t = createTable(c);
            c.t1().mutateRow(bb(t), bb("r"), List.of(put("cf1:a", "1"), put("cf2:b", "2")), NO_ATTRS);
            List<TRowResult> rows = c.t1().getRow(bb(t), bb("r"), NO_ATTRS);
            eq("getRow result count", 1, rows.size());
            eqBytes("row key", "r", rows.get(0).getRow());
            eq("columns", map("cf1:a", "1", "cf2:b", "2"), columns(rows.get(0)));
            check(!rows.get(0).isSetSortedColumns(), "getRow must not fill sortedColumns");
            eq("getRow of a missing row", 0, c.t1().getRow(bb(t), bb("missing"), NO_ATTRS).size());
        });

        s.thrift1("t1.getRowTs.timestamp_is_exclusive", c -> {
            String t = createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "v", 1234);
            eq("getRowTs(2345) sees the cell at 1234", 1, c.t1().getRowTs(bb(t), bb("r"), 2345, NO_ATTRS).size());
            eq("getRowTs(1234) does not", 0, c.t1().getRowTs(bb(t), bb("r"), 1234, NO_ATTRS).size());
            eq("getRowTs(123) does not", 0, c.t1().getRowTs(bb(t), bb("r"), 123, NO_ATTRS).size());
        });

        s.thrift1("t1.getRowWithColumns.column_and_family", c -> {
            String t = createTable(c);
            c.t1().mutateRow(bb(t), bb("r"),
                    List.of(put("cf1:a", "1"), put("cf1:b", "2"), put("cf2:c", "3")), NO_ATTRS);
            List<TRowResult> one = c.t1().getRowWithColumns(bb(t), bb("r"), bbs("cf1:a"), NO_ATTRS);
            eq("getRowWithColumns [cf1:a]", map("cf1:a", "1"), columns(one.get(0)));
            List<TRowResult> fam = c.t1().getRowWithColumns(bb(t), bb("r"), bbs("cf1"), NO_ATTRS);
            eq("getRowWithColumns [cf1]", map("cf1:a", "1", "cf1:b", "2"), columns(fam.get(0)));
        });

        s.thrift1("t1.getRows.missing_rows_omitted_in_order", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r1", "cf1:a", "1");
            put(c.t1(), t, "r3", "cf1:a", "3");
            List<TRowResult> rows = c.t1().getRows(bb(t), bbs("r3", "missing", "r1"), NO_ATTRS);
            eq("row keys", List.of("r3", "r1"), rowKeys(rows));
            eq("r3 columns", map("cf1:a", "3"), columns(rows.get(0)));
            List<TRowResult> cols = c.t1().getRowsWithColumns(bb(t), bbs("r1", "r3"), bbs("cf2"), NO_ATTRS);
            eq("getRowsWithColumns on a family without cells", List.of(), rowKeys(cols));
        });

        s.thrift1("t1.mutateRow.delete_and_put", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:a", "1");
            c.t1().mutateRow(bb(t), bb("r"), List.of(delete("cf1:a"), put("cf1:b", "2")), NO_ATTRS);
            eq("row after mutateRow", map("cf1:b", "2"), columns(c.t1().getRow(bb(t), bb("r"), NO_ATTRS).get(0)));
        });

        s.thrift1("t1.mutateRow.unknown_family_is_IOError", c -> {
            String t = createTable(c);
            expect(IOError.class, "mutateRow to family nofam",
                    () -> put(c.t1(), t, "r", "nofam:a", "1"));
            put(c.t1(), t, "r", "cf1:a", "ok");
            eq("connection usable after the error", 1, c.t1().getRow(bb(t), bb("r"), NO_ATTRS).size());
        });

        s.thrift1("t1.mutateRows.several_rows", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r2", "cf1:old", "x");
            List<BatchMutation> batch = List.of(
                    new BatchMutation(bb("r1"), List.of(put("cf1:a", "1"), put("cf2:b", "2"))),
                    new BatchMutation(bb("r2"), List.of(delete("cf1:old"), put("cf1:new", "y"))));
            c.t1().mutateRows(bb(t), batch, NO_ATTRS);
            List<TRowResult> rows = c.t1().getRows(bb(t), bbs("r1", "r2"), NO_ATTRS);
            eq("row keys", List.of("r1", "r2"), rowKeys(rows));
            eq("r1", map("cf1:a", "1", "cf2:b", "2"), columns(rows.get(0)));
            eq("r2", map("cf1:new", "y"), columns(rows.get(1)));
        });

        s.thrift1("t1.mutateRowsTs.sets_timestamp", c -> {
            String t = createTable(c);
            c.t1().mutateRowsTs(bb(t), List.of(new BatchMutation(bb("r"), List.of(put("cf1:a", "v")))), 777,
                    NO_ATTRS);
            eq("cell", List.of("v@777"), cells(c.t1().getVer(bb(t), bb("r"), bb("cf1:a"), 10, NO_ATTRS)));
        });

        s.thrift1("t1.deleteAll.column_all_versions", c -> {
            String t = createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "1", 10);
            putTs(c.t1(), t, "r", "cf1:a", "2", 20);
            putTs(c.t1(), t, "r", "cf1:b", "3", 10);
            c.t1().deleteAll(bb(t), bb("r"), bb("cf1:a"), NO_ATTRS);
            eq("cf1:a versions", List.of(), cells(c.t1().getVer(bb(t), bb("r"), bb("cf1:a"), 10, NO_ATTRS)));
            eq("cf1:b untouched", List.of("3@10"), cells(c.t1().get(bb(t), bb("r"), bb("cf1:b"), NO_ATTRS)));
        });

        s.thrift1("t1.deleteAllTs.timestamp_is_inclusive", c -> {
            String t = createTable(c);
            for (long ts : new long[] {10, 20, 30}) putTs(c.t1(), t, "r", "cf1:a", "v" + ts, ts);
            c.t1().deleteAllTs(bb(t), bb("r"), bb("cf1:a"), 20, NO_ATTRS);
            eq("versions left", List.of("v30@30"),
                    cells(c.t1().getVer(bb(t), bb("r"), bb("cf1:a"), 10, NO_ATTRS)));
        });

        s.thrift1("t1.deleteAllRow.whole_row", c -> {
            String t = createTable(c);
            c.t1().mutateRow(bb(t), bb("r"), List.of(put("cf1:a", "1"), put("cf2:b", "2")), NO_ATTRS);
            put(c.t1(), t, "other", "cf1:a", "x");
            c.t1().deleteAllRow(bb(t), bb("r"), NO_ATTRS);
            eq("getRow after deleteAllRow", 0, c.t1().getRow(bb(t), bb("r"), NO_ATTRS).size());
            eq("other row untouched", 1, c.t1().getRow(bb(t), bb("other"), NO_ATTRS).size());
        });

        s.thrift1("t1.deleteAllRowTs.timestamp_is_inclusive", c -> {
            String t = createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "old", 10);
            putTs(c.t1(), t, "r", "cf2:b", "new", 30);
            c.t1().deleteAllRowTs(bb(t), bb("r"), 10, NO_ATTRS);
            eq("row after deleteAllRowTs(10)", map("cf2:b", "new"),
                    columns(c.t1().getRow(bb(t), bb("r"), NO_ATTRS).get(0)));
        });

        s.thrift1("t1.atomicIncrement.counter", c -> {
            String t = createTable(c);
            eq("increment of a missing counter", 5L, c.t1().atomicIncrement(bb(t), bb("r"), bb("cf1:n"), 5));
            eq("+3", 8L, c.t1().atomicIncrement(bb(t), bb("r"), bb("cf1:n"), 3));
            eq("-10", -2L, c.t1().atomicIncrement(bb(t), bb("r"), bb("cf1:n"), -10));
            List<TCell> cell = c.t1().get(bb(t), bb("r"), bb("cf1:n"), NO_ATTRS);
            eq("stored as 8-byte big-endian", Bytes.i64(-2), cell.get(0).getValue());
        });

        s.thrift1("t1.atomicIncrement.not_a_counter_is_IOError", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:n", "abc");
            expect(IOError.class, "atomicIncrement of a 3-byte cell",
                    () -> c.t1().atomicIncrement(bb(t), bb("r"), bb("cf1:n"), 1));
            eq("cell unchanged", List.of("abc"), values(c.t1().get(bb(t), bb("r"), bb("cf1:n"), NO_ATTRS)));
        });

        s.thrift1("t1.increment.and_incrementRows", c -> {
            String t = createTable(c);
            c.t1().increment(new TIncrement(bb(t), bb("r"), bb("cf1:n"), 4));
            c.t1().incrementRows(List.of(new TIncrement(bb(t), bb("r"), bb("cf1:n"), 2),
                    new TIncrement(bb(t), bb("r2"), bb("cf1:n"), 7)));
            eq("r counter", 6L, Bytes.toI64(c.t1().get(bb(t), bb("r"), bb("cf1:n"), NO_ATTRS).get(0).getValue()));
            eq("r2 counter", 7L, Bytes.toI64(c.t1().get(bb(t), bb("r2"), bb("cf1:n"), NO_ATTRS).get(0).getValue()));
        });

        s.thrift1("t1.append.concatenates", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:s", "ab");
            List<TCell> out = c.t1().append(new TAppend(bb(t), bb("r"), bbs("cf1:s", "cf1:fresh"), bbs("cd", "x")));
            List<String> got = values(out);
            Collections.sort(got);
            eq("append result values", List.of("abcd", "x"), got);
            eq("stored", List.of("abcd"), values(c.t1().get(bb(t), bb("r"), bb("cf1:s"), NO_ATTRS)));
        });

        s.thrift1("t1.checkAndPut.value_and_absence", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:a", "v1");
            eq("matching value", true, c.t1().checkAndPut(bb(t), bb("r"), bb("cf1:a"), bb("v1"),
                    put("cf1:b", "applied"), NO_ATTRS));
            eq("cf1:b", List.of("applied"), values(c.t1().get(bb(t), bb("r"), bb("cf1:b"), NO_ATTRS)));
            eq("other value", false, c.t1().checkAndPut(bb(t), bb("r"), bb("cf1:a"), bb("zz"),
                    put("cf1:c", "no"), NO_ATTRS));
            eq("cf1:c not written", List.of(), values(c.t1().get(bb(t), bb("r"), bb("cf1:c"), NO_ATTRS)));
            eq("value unset, column absent", true, c.t1().checkAndPut(bb(t), bb("r"), bb("cf1:none"), null,
                    put("cf1:d", "yes"), NO_ATTRS));
            eq("value unset, column present", false, c.t1().checkAndPut(bb(t), bb("r"), bb("cf1:a"), null,
                    put("cf1:e", "no"), NO_ATTRS));
            eq("cf1:d", List.of("yes"), values(c.t1().get(bb(t), bb("r"), bb("cf1:d"), NO_ATTRS)));
            eq("cf1:e not written", List.of(), values(c.t1().get(bb(t), bb("r"), bb("cf1:e"), NO_ATTRS)));
        });

        s.thrift1("t1.scannerOpenWithScan.range_end_and_close", c -> {
            String t = createTable(c);
            for (String r : new String[] {"a", "b", "c", "d"}) put(c.t1(), t, r, "cf1:q", "v" + r);
            TScan scan = new TScan();
            scan.setStartRow(bb("b"));
            scan.setStopRow(bb("d"));
            int id = c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS);
            List<TRowResult> first = c.t1().scannerGetList(id, 10);
            eq("rows in [b, d)", List.of("b", "c"), rowKeys(first));
            eq("columns of b", map("cf1:q", "vb"), columns(first.get(0)));
            eq("exhausted scanner", 0, c.t1().scannerGetList(id, 10).size());
            eq("still exhausted", 0, c.t1().scannerGetList(id, 10).size());
            c.t1().scannerClose(id);
            expect(IllegalArgument.class, "scannerGetList after scannerClose",
                    () -> c.t1().scannerGetList(id, 10));
            expect(IllegalArgument.class, "scannerClose twice", () -> c.t1().scannerClose(id));
        });

        s.thrift1("t1.scannerGetList.batches_and_scannerGet", c -> {
            String t = createTable(c);
            for (String r : new String[] {"a", "b", "c"}) put(c.t1(), t, r, "cf1:q", r);
            int id = c.t1().scannerOpenWithScan(bb(t), new TScan(), NO_ATTRS);
            eq("scannerGet", List.of("a"), rowKeys(c.t1().scannerGet(id)));
            eq("rest in batches of 1", List.of("b", "c"), rowKeys(drain(c.t1(), id, 1)));
        });

        s.thrift1("t1.scannerOpenWithScan.filterString_prefix", c -> {
            String t = createTable(c);
            for (String r : new String[] {"a", "ba", "bb", "c"}) put(c.t1(), t, r, "cf1:q", r);
            TScan scan = new TScan();
            scan.setFilterString(bb("PrefixFilter('b')"));
            eq("PrefixFilter('b')", List.of("ba", "bb"),
                    rowKeys(drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS), 10)));
        });

        s.thrift1("t1.scannerOpenWithScan.bad_filter_is_INTERNAL_ERROR", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:q", "v");
            TScan scan = new TScan();
            scan.setFilterString(bb("NoSuchFilter('x')"));
            expectApp(TApplicationException.INTERNAL_ERROR, "scanner with an unknown filter name",
                    () -> drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS), 10));
            eq("connection usable after the error", 1, c.t1().getRow(bb(t), bb("r"), NO_ATTRS).size());
        });

        s.thrift1("t1.scannerOpenWithScan.sortColumns", c -> {
            String t = createTable(c);
            c.t1().mutateRow(bb(t), bb("r"),
                    List.of(put("cf2:a", "3"), put("cf1:b", "2"), put("cf1:a", "1")), NO_ATTRS);
            TScan scan = new TScan();
            scan.setSortColumns(true);
            List<TRowResult> rows = drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS), 10);
            eq("rows", 1, rows.size());
            check(rows.get(0).isSetSortedColumns(), "sortedColumns must be set when sortColumns=true");
            check(!rows.get(0).isSetColumns(), "columns must be unset when sortColumns=true");
            List<String> order = new ArrayList<>();
            for (TColumn col : rows.get(0).getSortedColumns()) {
                order.add(str(col.getColumnName()) + "=" + str(col.getCell().getValue()));
            }
            eq("sorted columns", List.of("cf1:a=1", "cf1:b=2", "cf2:a=3"), order);
        });

        s.thrift1("t1.scannerOpenWithScan.batchSize_splits_rows", c -> {
            String t = createTable(c);
            List<Mutation> ms = new ArrayList<>();
            for (int i = 0; i < 5; i++) ms.add(put("cf1:q" + i, "v" + i));
            c.t1().mutateRow(bb(t), bb("wide"), ms, NO_ATTRS);
            TScan scan = new TScan();
            scan.setBatchSize(2);
            List<TRowResult> rows = drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS), 10);
            eq("row keys", List.of("wide", "wide", "wide"), rowKeys(rows));
            List<Integer> sizes = new ArrayList<>();
            for (TRowResult r : rows) sizes.add(r.getColumnsSize());
            eq("cells per chunk", List.of(2, 2, 1), sizes);
        });

        s.thrift1("t1.scannerOpenWithScan.reversed", c -> {
            String t = createTable(c);
            for (String r : new String[] {"a", "b", "c", "d"}) put(c.t1(), t, r, "cf1:q", r);
            TScan scan = new TScan();
            scan.setReversed(true);
            scan.setStartRow(bb("c"));
            scan.setStopRow(bb("a"));
            eq("reversed from c to a (exclusive)", List.of("c", "b"),
                    rowKeys(drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS), 10)));
        });

        s.thrift1("t1.scannerOpenWithScan.timestamp_and_columns", c -> {
            String t = createTable(c);
            putTs(c.t1(), t, "r", "cf1:a", "old", 10);
            putTs(c.t1(), t, "r", "cf1:a", "new", 20);
            putTs(c.t1(), t, "r", "cf1:b", "b", 10);
            putTs(c.t1(), t, "r", "cf2:c", "c", 10);
            TScan scan = new TScan();
            scan.setTimestamp(20);
            List<TRowResult> rows = drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), scan, NO_ATTRS), 10);
            eq("TScan.timestamp=20 (exclusive)", map("cf1:a", "old", "cf1:b", "b", "cf2:c", "c"),
                    columns(rows.get(0)));
            TScan cols = new TScan();
            cols.setColumns(bbs("cf1:a", "cf2"));
            rows = drain(c.t1(), c.t1().scannerOpenWithScan(bb(t), cols, NO_ATTRS), 10);
            eq("TScan.columns [cf1:a, cf2]", map("cf1:a", "new", "cf2:c", "c"), columns(rows.get(0)));
        });

        s.thrift1("t1.scannerOpen.start_stop_prefix", c -> {
            String t = createTable(c);
            for (String r : new String[] {"a", "b1", "b2", "c", "d"}) put(c.t1(), t, r, "cf1:q", r);
            List<ByteBuffer> cols = bbs("cf1");
            eq("scannerOpen from b1", List.of("b1", "b2", "c", "d"),
                    rowKeys(drain(c.t1(), c.t1().scannerOpen(bb(t), bb("b1"), cols, NO_ATTRS), 2)));
            eq("scannerOpenWithStop [b2, d)", List.of("b2", "c"),
                    rowKeys(drain(c.t1(), c.t1().scannerOpenWithStop(bb(t), bb("b2"), bb("d"), cols, NO_ATTRS), 2)));
            eq("scannerOpenWithPrefix b", List.of("b1", "b2"),
                    rowKeys(drain(c.t1(), c.t1().scannerOpenWithPrefix(bb(t), bb("b"), cols, NO_ATTRS), 2)));
            eq("scannerOpen from '' (table start)", 5,
                    drain(c.t1(), c.t1().scannerOpen(bb(t), bb(""), cols, NO_ATTRS), 10).size());
        });

        s.thrift1("t1.scanner.unknown_id_is_IllegalArgument", c -> {
            int bogus = Integer.MAX_VALUE - 17;
            expect(IllegalArgument.class, "scannerGet of an unknown id", () -> c.t1().scannerGet(bogus));
            expect(IllegalArgument.class, "scannerGetList of an unknown id", () -> c.t1().scannerGetList(bogus, 5));
            expect(IllegalArgument.class, "scannerClose of an unknown id", () -> c.t1().scannerClose(bogus));
            c.t1().getTableNames(); // the connection is still usable
        });

        s.thrift1("t1.errors.missing_table_is_IOError", c -> {
            String t = c.table();
            IOError e = expect(IOError.class, "get on a missing table",
                    () -> c.t1().get(bb(t), bb("r"), bb("cf1:a"), NO_ATTRS));
            check(e.getMessage() != null && e.getMessage().contains("TableNotFoundException"),
                    "IOError.message should name TableNotFoundException, got: " + e.getMessage());
            expect(IOError.class, "mutateRow on a missing table", () -> put(c.t1(), t, "r", "cf1:a", "v"));
            expect(IOError.class, "getColumnDescriptors of a missing table",
                    () -> c.t1().getColumnDescriptors(bb(t)));
            expect(IOError.class, "scannerOpenWithScan on a missing table",
                    () -> c.t1().scannerOpenWithScan(bb(t), new TScan(), NO_ATTRS));
            check(c.t1().getTableNames() != null, "connection usable after errors");
        });

        s.thrift1("t1.errors.unknown_family_read_is_IOError", c -> {
            String t = createTable(c);
            expect(IOError.class, "get of family nofam", () -> c.t1().get(bb(t), bb("r"), bb("nofam:x"), NO_ATTRS));
            eq("connection usable", 0, c.t1().getRow(bb(t), bb("r"), NO_ATTRS).size());
        });

        s.thrift1("t1.enable_disable.isTableEnabled", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:a", "v");
            eq("isTableEnabled after create", true, c.t1().isTableEnabled(bb(t)));
            c.t1().disableTable(bb(t));
            eq("isTableEnabled after disable", false, c.t1().isTableEnabled(bb(t)));
            expect(IOError.class, "get on a disabled table", () -> c.t1().getRow(bb(t), bb("r"), NO_ATTRS));
            eq("getTableNamesWithIsTableEnabled", false, c.t1().getTableNamesWithIsTableEnabled().get(bb(t)));
            c.t1().enableTable(bb(t));
            eq("isTableEnabled after enable", true, c.t1().isTableEnabled(bb(t)));
            eq("data kept", 1, c.t1().getRow(bb(t), bb("r"), NO_ATTRS).size());
            expect(IOError.class, "isTableEnabled of a missing table", () -> c.t1().isTableEnabled(bb(c.table())));
        });

        s.thrift1("t1.deleteTable.needs_disabled", c -> {
            String t = createTable(c);
            expect(IOError.class, "deleteTable of an enabled table", () -> c.t1().deleteTable(bb(t)));
            c.t1().disableTable(bb(t));
            c.t1().deleteTable(bb(t));
            eq("listed after delete", false, c.t1().getTableNames().contains(bb(t)));
            expect(IOError.class, "deleteTable of a missing table", () -> c.t1().deleteTable(bb(t)));
            createTable(c.t1(), t, family("cf9", 1));
            eq("re-created table starts empty", 0, c.t1().getRow(bb(t), bb("r"), NO_ATTRS).size());
        });

        s.thrift1("t1.getTableRegions.one_region", c -> {
            String t = createTable(c);
            List<TRegionInfo> regions = c.t1().getTableRegions(bb(t));
            eq("region count", 1, regions.size());
            eqBytes("startKey", "", regions.get(0).getStartKey());
            eqBytes("endKey", "", regions.get(0).getEndKey());
            eq("getTableRegions of a missing table", 0, c.t1().getTableRegions(bb(c.table())).size());
        });

        s.thrift1("t1.compact.and_majorCompact", c -> {
            String t = createTable(c);
            put(c.t1(), t, "r", "cf1:a", "v");
            c.t1().compact(bb(t));
            c.t1().majorCompact(bb(t));
            eq("data after compactions", List.of("v"), values(c.t1().get(bb(t), bb("r"), bb("cf1:a"), NO_ATTRS)));
        });

        s.thrift1("t1.grant_revoke.return_true", c -> {
            String t = createTable(c);
            TAccessControlEntity table = new TAccessControlEntity("alice", TPermissionScope.TABLE, "RW");
            table.setTableName(bb(t));
            eq("grant on a table", true, c.t1().grant(table));
            eq("revoke on a table", true, c.t1().revoke(table));
            TAccessControlEntity ns = new TAccessControlEntity("bob", TPermissionScope.NAMESPACE, "R");
            ns.setNsName("default");
            eq("grant on a namespace", true, c.t1().grant(ns));
            eq("revoke on a namespace", true, c.t1().revoke(ns));
        });

        s.thrift1("t1.unknown_method_keeps_connection", c -> {
            TProtocol p = c.open(c.settings.thrift1Port);
            THBaseService.Client wrong = new THBaseService.Client(p);
            Hbase.Client right = new Hbase.Client(p);
            expectApp(TApplicationException.UNKNOWN_METHOD, "Thrift2 listNamespaces on the Thrift1 port",
                    wrong::listNamespaces);
            eq("Thrift1 call on the same connection", TThriftServerType.ONE, right.getThriftServerType());
        });
    }

    static List<String> values(List<TCell> cells) {
        List<String> out = new ArrayList<>();
        for (TCell cell : cells) out.add(str(cell.getValue()));
        return out;
    }
}
