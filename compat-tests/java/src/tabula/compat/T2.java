package tabula.compat;

import static tabula.compat.Bytes.bb;
import static tabula.compat.Bytes.str;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.thrift.TApplicationException;
import tabula.compat.thrift2.TColumn;
import tabula.compat.thrift2.TColumnFamilyDescriptor;
import tabula.compat.thrift2.TColumnValue;
import tabula.compat.thrift2.TGet;
import tabula.compat.thrift2.THBaseService;
import tabula.compat.thrift2.TIOError;
import tabula.compat.thrift2.TPut;
import tabula.compat.thrift2.TResult;
import tabula.compat.thrift2.TTableDescriptor;
import tabula.compat.thrift2.TTableName;

/** Builders and renderers for Thrift2 structs, shared by the Thrift2 and cross-API checks. */
final class T2 {
    private T2() {}

    /** A table in the default namespace (ns left unset). */
    static TTableName tn(String qualifier) {
        return new TTableName(bb(qualifier));
    }

    static TTableName tn(String ns, String qualifier) {
        TTableName t = new TTableName(bb(qualifier));
        t.setNs(bb(ns));
        return t;
    }

    static TColumnFamilyDescriptor family(String name, int maxVersions) {
        TColumnFamilyDescriptor f = new TColumnFamilyDescriptor(bb(name));
        f.setMaxVersions(maxVersions);
        return f;
    }

    /** Creates a default-namespace table with cf1 (10 versions) and cf2 (3 versions). */
    static String createTable(Ctx c) throws Exception {
        String t = c.table();
        createTable(c.t2(), tn(t), List.of(), family("cf1", 10), family("cf2", 3));
        return t;
    }

    static void createTable(THBaseService.Client h, TTableName name, List<String> splitKeys,
            TColumnFamilyDescriptor... families) throws Exception {
        TTableDescriptor d = new TTableDescriptor(name);
        d.setColumns(new ArrayList<>(Arrays.asList(families)));
        h.createTable(d, splitKeys.isEmpty() ? null : bbs(splitKeys));
    }

    static List<ByteBuffer> bbs(List<String> items) {
        List<ByteBuffer> out = new ArrayList<>();
        for (String s : items) out.add(bb(s));
        return out;
    }

    static TColumnValue cv(String family, String qualifier, String value) {
        return new TColumnValue(bb(family), bb(qualifier), bb(value));
    }

    static TColumnValue cv(String family, String qualifier, String value, long ts) {
        TColumnValue v = cv(family, qualifier, value);
        v.setTimestamp(ts);
        return v;
    }

    static TPut tput(String row, TColumnValue... values) {
        return new TPut(bb(row), new ArrayList<>(Arrays.asList(values)));
    }

    static void put(THBaseService.Client h, String table, String row, TColumnValue... values) throws Exception {
        h.put(bb(table), tput(row, values));
    }

    static TGet tget(String row) {
        return new TGet(bb(row));
    }

    static TGet tget(String row, TColumn... columns) {
        TGet g = tget(row);
        g.setColumns(new ArrayList<>(Arrays.asList(columns)));
        return g;
    }

    static TColumn col(String family) {
        return new TColumn(bb(family));
    }

    static TColumn col(String family, String qualifier) {
        TColumn c = new TColumn(bb(family));
        c.setQualifier(bb(qualifier));
        return c;
    }

    /**
     * Runs a call HBase cannot serve as sent: it must fail with the declared TIOError or a
     * TApplicationException INTERNAL_ERROR (what HBase answers when its Java code throws an
     * unchecked exception) - not succeed, and not with an undeclared error the client cannot
     * decode (MISSING_RESULT).
     */
    static Throwable refused(String what, Assert.Call call) {
        try {
            call.run();
        } catch (TIOError e) {
            return e;
        } catch (TApplicationException e) {
            if (e.getType() == TApplicationException.INTERNAL_ERROR) return e;
            throw Assert.fail(what + ": expected TIOError or INTERNAL_ERROR, got " + Assert.describe(e));
        } catch (Throwable t) {
            throw Assert.fail(what + ": expected TIOError or INTERNAL_ERROR, got " + Assert.describe(t));
        }
        throw Assert.fail(what + ": expected TIOError or INTERNAL_ERROR, but the call succeeded");
    }

    /** Cells as "family:qualifier=value@timestamp", in the order returned. */
    static List<String> cells(TResult r) {
        List<String> out = new ArrayList<>();
        for (TColumnValue v : r.getColumnValues()) {
            out.add(str(v.getFamily()) + ":" + str(v.getQualifier()) + "=" + str(v.getValue()) + "@"
                    + (v.isSetTimestamp() ? String.valueOf(v.getTimestamp()) : "?"));
        }
        return out;
    }

    /** Cells as "family:qualifier=value", in the order returned. */
    static List<String> values(TResult r) {
        List<String> out = new ArrayList<>();
        for (TColumnValue v : r.getColumnValues()) {
            out.add(str(v.getFamily()) + ":" + str(v.getQualifier()) + "=" + str(v.getValue()));
        }
        return out;
    }

    static String row(TResult r) {
        return r.isSetRow() ? str(r.getRow()) : null;
    }

    static List<String> rows(List<TResult> results) {
        List<String> out = new ArrayList<>();
        for (TResult r : results) out.add(row(r));
        return out;
    }

    static String name(TTableName t) {
        String ns = t.isSetNs() ? str(t.getNs()) : "default";
        return ns + ":" + str(t.getQualifier());
    }

    static List<String> names(List<TTableName> names) {
        List<String> out = new ArrayList<>();
        for (TTableName t : names) out.add(name(t));
        return out;
    }
}
