package tabula.compat;

import static tabula.compat.Assert.check;
import static tabula.compat.Assert.eq;
import static tabula.compat.Assert.expect;
import static tabula.compat.Assert.expectApp;
import static tabula.compat.Assert.fail;
import static tabula.compat.Bytes.bb;
import static tabula.compat.Bytes.str;
import static tabula.compat.T2.cells;
import static tabula.compat.T2.col;
import static tabula.compat.T2.createTable;
import static tabula.compat.T2.cv;
import static tabula.compat.T2.put;
import static tabula.compat.T2.refused;
import static tabula.compat.T2.row;
import static tabula.compat.T2.rows;
import static tabula.compat.T2.tget;
import static tabula.compat.T2.tn;
import static tabula.compat.T2.tput;
import static tabula.compat.T2.values;

import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.TApplicationException;
import org.apache.thrift.protocol.TProtocol;
import tabula.compat.thrift1.Hbase;
import tabula.compat.thrift2.TAppend;
import tabula.compat.thrift2.TColumnIncrement;
import tabula.compat.thrift2.TColumnValue;
import tabula.compat.thrift2.TCompareOperator;
import tabula.compat.thrift2.TDelete;
import tabula.compat.thrift2.TDeleteType;
import tabula.compat.thrift2.TGet;
import tabula.compat.thrift2.THBaseService;
import tabula.compat.thrift2.TIOError;
import tabula.compat.thrift2.TIncrement;
import tabula.compat.thrift2.TMutation;
import tabula.compat.thrift2.TNamespaceDescriptor;
import tabula.compat.thrift2.TPut;
import tabula.compat.thrift2.TResult;
import tabula.compat.thrift2.TRowMutations;
import tabula.compat.thrift2.TThriftServerType;
import tabula.compat.thrift2.TTimeRange;

/** Thrift2 (`THBaseService`) data-path checks: reads, writes, deletes, check-and-*, counters. */
final class Thrift2DataChecks {
    private Thrift2DataChecks() {}

    /** Three versions of cf1:q at 10, 20, 30 (values v10, v20, v30). */
    static void threeVersions(THBaseService.Client h, String t, String row) throws Exception {
        for (long ts : new long[] {10, 20, 30}) put(h, t, row, cv("cf1", "q", "v" + ts, ts));
    }

    static TGet versions(String row, int maxVersions) {
        TGet g = tget(row, col("cf1", "q"));
        g.setMaxVersions(maxVersions);
        return g;
    }

    static TDelete tdelete(String row) {
        return new TDelete(bb(row));
    }

    static TDelete tdelete(String row, TDeleteType type, tabula.compat.thrift2.TColumn... columns) {
        TDelete d = tdelete(row);
        d.setColumns(new ArrayList<>(List.of(columns)));
        if (type == null) {
            d.unsetDeleteType(); // absent on the wire: HBase reads DELETE_COLUMNS
        } else {
            d.setDeleteType(type);
        }
        return d;
    }

    static tabula.compat.thrift2.TColumn colTs(String family, String qualifier, long ts) {
        tabula.compat.thrift2.TColumn c = qualifier == null ? col(family) : col(family, qualifier);
        c.setTimestamp(ts);
        return c;
    }

    /** Every version of every cell of a row, rendered with timestamps. */
    static List<String> all(THBaseService.Client h, String t, String row) throws Exception {
        TGet g = tget(row);
        g.setMaxVersions(100);
        return cells(h.get(bb(t), g));
    }

    static void register(Suite s) {
        s.thrift2("t2.getThriftServerType.is_TWO", c ->
                eq("getThriftServerType on the Thrift2 port", TThriftServerType.TWO, c.t2().getThriftServerType()));

        s.thrift2("t2.getClusterId.same_as_thrift1", c -> {
            String id = c.t2().getClusterId();
            check(id != null && !id.isEmpty(), "getClusterId returned an empty id");
            eq("cluster id seen by Thrift1", id, c.t1().getClusterId());
        });

        s.thrift2("t2.put_get.sorted_cells_with_timestamp_and_type", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf2", "b", "3", 5), cv("cf1", "b", "2", 5), cv("cf1", "a", "1", 5));
            TResult r = c.t2().get(bb(t), tget("r"));
            eq("row", "r", row(r));
            eq("cells (family, qualifier ascending)", List.of("cf1:a=1@5", "cf1:b=2@5", "cf2:b=3@5"), cells(r));
            for (TColumnValue v : r.getColumnValues()) {
                check(v.isSetType(), "TColumnValue.type must be set on results");
                eq("TColumnValue.type (Put)", (byte) 4, v.getType());
            }
        });

        s.thrift2("t2.get.missing_row_is_empty_result", c -> {
            String t = createTable(c);
            TResult r = c.t2().get(bb(t), tget("nope"));
            check(!r.isSetRow(), "TResult.row must be unset for a missing row, got " + row(r));
            eq("columnValues", List.of(), cells(r));
        });

        s.thrift2("t2.get.columns_family_or_qualifier", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"), cv("cf1", "b", "2"), cv("cf2", "c", "3"));
            eq("TColumn(cf1, a)", List.of("cf1:a=1"), values(c.t2().get(bb(t), tget("r", col("cf1", "a")))));
            eq("TColumn(cf1)", List.of("cf1:a=1", "cf1:b=2"), values(c.t2().get(bb(t), tget("r", col("cf1")))));
            eq("TColumn(cf2), TColumn(cf1, b)", List.of("cf1:b=2", "cf2:c=3"),
                    values(c.t2().get(bb(t), tget("r", col("cf2"), col("cf1", "b")))));
        });

        s.thrift2("t2.get.maxVersions_default_is_1", c -> {
            String t = createTable(c);
            threeVersions(c.t2(), t, "r");
            eq("maxVersions unset", List.of("cf1:q=v30@30"), cells(c.t2().get(bb(t), tget("r", col("cf1", "q")))));
            eq("maxVersions 2", List.of("cf1:q=v30@30", "cf1:q=v20@20"), cells(c.t2().get(bb(t), versions("r", 2))));
        });

        s.thrift2("t2.get.timestamp_is_exact_match", c -> {
            String t = createTable(c);
            threeVersions(c.t2(), t, "r");
            TGet g = versions("r", 10);
            g.setTimestamp(20);
            eq("timestamp 20", List.of("cf1:q=v20@20"), cells(c.t2().get(bb(t), g)));
            g.setTimestamp(25);
            eq("timestamp 25 (no cell there)", List.of(), cells(c.t2().get(bb(t), g)));
            g.setTimestamp(20);
            g.setTimeRange(new TTimeRange(0, 100));
            eq("timestamp wins over timeRange", List.of("cf1:q=v20@20"), cells(c.t2().get(bb(t), g)));
        });

        s.thrift2("t2.get.timeRange_is_half_open", c -> {
            String t = createTable(c);
            threeVersions(c.t2(), t, "r");
            TGet g = versions("r", 10);
            g.setTimeRange(new TTimeRange(10, 30));
            eq("[10, 30)", List.of("cf1:q=v20@20", "cf1:q=v10@10"), cells(c.t2().get(bb(t), g)));
            g.setTimeRange(new TTimeRange(20, 31));
            eq("[20, 31)", List.of("cf1:q=v30@30", "cf1:q=v20@20"), cells(c.t2().get(bb(t), g)));
            g.setTimeRange(new TTimeRange(31, 100));
            eq("[31, 100)", List.of(), cells(c.t2().get(bb(t), g)));
            TGet one = tget("r", col("cf1", "q"));
            one.setTimeRange(new TTimeRange(0, 25));
            eq("[0, 25) with maxVersions unset", List.of("cf1:q=v20@20"), cells(c.t2().get(bb(t), one)));
        });

        s.thrift2("t2.get.storeLimit_storeOffset", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"), cv("cf1", "b", "2"), cv("cf1", "c", "3"), cv("cf2", "x", "4"),
                    cv("cf2", "y", "5"));
            TGet limit = tget("r");
            limit.setStoreLimit(2);
            eq("storeLimit 2 (per family)", List.of("cf1:a=1", "cf1:b=2", "cf2:x=4", "cf2:y=5"),
                    values(c.t2().get(bb(t), limit)));
            TGet offset = tget("r");
            offset.setStoreOffset(1);
            eq("storeOffset 1 (per family)", List.of("cf1:b=2", "cf1:c=3", "cf2:y=5"),
                    values(c.t2().get(bb(t), offset)));
            offset.setStoreLimit(1);
            eq("storeOffset 1, storeLimit 1", List.of("cf1:b=2", "cf2:y=5"), values(c.t2().get(bb(t), offset)));
        });

        s.thrift2("t2.get.filterString", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "hit"), cv("cf1", "b", "miss"));
            TGet g = tget("r");
            g.setFilterString(bb("ValueFilter(=, 'binary:hit')"));
            eq("ValueFilter", List.of("cf1:a=hit"), values(c.t2().get(bb(t), g)));
        });

        s.thrift2("t2.get.filterBytes_refused", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"));
            TGet g = tget("r");
            g.setFilterBytes(new byte[] {1, 2, 3});
            refused("get with TGet.filterBytes (not a serialized filter)", () -> c.t2().get(bb(t), g));
            eq("connection usable", List.of("cf1:a=1"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.get.filterBytes_as_HBase_client_sends_them", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "hit"), cv("cf1", "b", "miss"));
            TGet g = tget("r");
            g.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.EQUAL, FilterBytes.binary("hit")));
            eq("ValueFilter from filterBytes", List.of("cf1:a=hit"), values(c.t2().get(bb(t), g)));
            TGet none = tget("r");
            none.setFilterBytes(FilterBytes.singleColumnValue("cf1", "a", FilterBytes.EQUAL,
                    FilterBytes.binary("other"), true));
            eq("SingleColumnValueFilter that fails", List.of(), values(c.t2().get(bb(t), none)));
        });

        s.thrift2("t2.get.filterBytes_LongComparator", c -> {
            String t = createTable(c);
            TPut p = new TPut(bb("r"), List.of(new TColumnValue(bb("cf1"), bb("n"),
                    java.nio.ByteBuffer.wrap(java.nio.ByteBuffer.allocate(8).putLong(100L).array()))));
            c.t2().put(bb(t), p);
            TGet atLeast50 = tget("r");
            atLeast50.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.GREATER_OR_EQUAL,
                    FilterBytes.longValue(50L)));
            eq("cells whose long value is >= 50", 1, c.t2().get(bb(t), atLeast50).getColumnValuesSize());
            TGet atLeast200 = tget("r");
            atLeast200.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.GREATER_OR_EQUAL,
                    FilterBytes.longValue(200L)));
            eq("cells whose long value is >= 200", 0, c.t2().get(bb(t), atLeast200).getColumnValuesSize());
        });

        s.thrift2("t2.get.filterBytes_BigDecimalComparator", c -> {
            String t = createTable(c);
            TPut p = new TPut(bb("r"), List.of(
                    new TColumnValue(bb("cf1"), bb("n"), java.nio.ByteBuffer.wrap(
                            FilterBytes.decimalBytes(new java.math.BigDecimal("12.50")))),
                    new TColumnValue(bb("cf1"), bb("m"), java.nio.ByteBuffer.wrap(
                            FilterBytes.decimalBytes(new java.math.BigDecimal("-3E+2"))))));
            c.t2().put(bb(t), p);
            TGet atLeast10 = tget("r");
            atLeast10.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.GREATER_OR_EQUAL,
                    FilterBytes.decimal(new java.math.BigDecimal("10"))));
            eq("cells whose decimal value is >= 10", 1, c.t2().get(bb(t), atLeast10).getColumnValuesSize());
            TGet equal = tget("r");
            equal.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.EQUAL,
                    FilterBytes.decimal(new java.math.BigDecimal("12.5000"))));
            eq("cells equal to 12.5000 by value", 1, c.t2().get(bb(t), equal).getColumnValuesSize());
            TGet below = tget("r");
            below.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.LESS,
                    FilterBytes.decimal(new java.math.BigDecimal("-299.99"))));
            eq("cells below -299.99", 1, c.t2().get(bb(t), below).getColumnValuesSize());
        });

        s.thrift2("t2.get.filterBytes_BinaryComponentComparator", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "ab-01"), cv("cf1", "b", "ab-02"), cv("cf1", "c", "x"));
            TGet g = tget("r");
            g.setFilterBytes(FilterBytes.compare("ValueFilter", FilterBytes.EQUAL, FilterBytes.component("02", 3)));
            eq("cells whose value holds 02 at offset 3", List.of("cf1:b=ab-02"), values(c.t2().get(bb(t), g)));
        });

        s.thrift2("t2.get.filterBytes_ColumnPaginationFilter_column_offset", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"), cv("cf1", "b", "2"), cv("cf1", "c", "3"), cv("cf1", "d", "4"));
            TGet g = tget("r");
            g.setFilterBytes(FilterBytes.columnPage(2, "b"));
            eq("two columns from b", List.of("cf1:b=2", "cf1:c=3"), values(c.t2().get(bb(t), g)));
        });

        s.thrift2("t2.get.bad_filterString_is_INTERNAL_ERROR", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"));
            TGet g = tget("r");
            g.setFilterString(bb("NoSuchFilter('x')"));
            expectApp(TApplicationException.INTERNAL_ERROR, "get with an unknown filter name",
                    () -> c.t2().get(bb(t), g));
            eq("connection usable", List.of("cf1:a=1"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.getMultiple.keeps_positions", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r1", cv("cf1", "a", "1"));
            put(c.t2(), t, "r2", cv("cf1", "a", "2"));
            List<TResult> out = c.t2().getMultiple(bb(t), List.of(tget("r2"), tget("missing"), tget("r1")));
            eq("result count", 3, out.size());
            eq("rows", java.util.Arrays.asList("r2", null, "r1"), rows(out));
            eq("values of r2", List.of("cf1:a=2"), values(out.get(0)));
            eq("values of the missing row", List.of(), values(out.get(1)));
        });

        s.thrift2("t2.exists_and_existsAll", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r1", cv("cf1", "a", "1"));
            put(c.t2(), t, "r3", cv("cf1", "a", "3"));
            eq("exists r1", true, c.t2().exists(bb(t), tget("r1")));
            eq("exists missing", false, c.t2().exists(bb(t), tget("r2")));
            eq("exists r1 in cf2 (no cells)", false, c.t2().exists(bb(t), tget("r1", col("cf2"))));
            eq("existsAll", List.of(true, false, true),
                    c.t2().existsAll(bb(t), List.of(tget("r1"), tget("r2"), tget("r3"))));
        });

        s.thrift2("t2.put.timestamps", c -> {
            String t = createTable(c);
            TPut p = tput("r", cv("cf1", "a", "x"), cv("cf1", "b", "y", 60));
            p.setTimestamp(50);
            c.t2().put(bb(t), p);
            eq("cell without timestamp takes TPut.timestamp", List.of("cf1:a=x@50", "cf1:b=y@60"),
                    cells(c.t2().get(bb(t), tget("r"))));
            long before = System.currentTimeMillis();
            put(c.t2(), t, "now", cv("cf1", "a", "z"));
            long ts = c.t2().get(bb(t), tget("now")).getColumnValues().get(0).getTimestamp();
            check(Math.abs(ts - before) < 10 * 60 * 1000,
                    "a cell without any timestamp should get the server time (ms), got " + ts + " vs client " + before);
        });

        s.thrift2("t2.put.durability_SKIP_WAL_is_readable", c -> {
            String t = createTable(c);
            TPut p = tput("r", cv("cf1", "a", "fast"));
            p.setDurability(tabula.compat.thrift2.TDurability.SKIP_WAL);
            c.t2().put(bb(t), p);
            TPut q = tput("r", cv("cf1", "b", "safe"));
            q.setDurability(tabula.compat.thrift2.TDurability.FSYNC_WAL);
            c.t2().put(bb(t), q);
            eq("row", List.of("cf1:a=fast", "cf1:b=safe"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.putMultiple.rows", c -> {
            String t = createTable(c);
            c.t2().putMultiple(bb(t), List.of(tput("r1", cv("cf1", "a", "1")), tput("r2", cv("cf2", "b", "2"))));
            eq("r1", List.of("cf1:a=1"), values(c.t2().get(bb(t), tget("r1"))));
            eq("r2", List.of("cf2:b=2"), values(c.t2().get(bb(t), tget("r2"))));
        });

        s.thrift2("t2.put.unknown_family_is_TIOError", c -> {
            String t = createTable(c);
            expect(TIOError.class, "put to family nofam", () -> put(c.t2(), t, "r", cv("nofam", "a", "1")));
            expect(TIOError.class, "putMultiple with family nofam",
                    () -> c.t2().putMultiple(bb(t), List.of(tput("r", cv("nofam", "a", "1")))));
            put(c.t2(), t, "r", cv("cf1", "a", "ok"));
            eq("connection usable", List.of("cf1:a=ok"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.deleteSingle.whole_row", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"), cv("cf2", "b", "2"));
            put(c.t2(), t, "keep", cv("cf1", "a", "k"));
            c.t2().deleteSingle(bb(t), tdelete("r"));
            eq("deleted row", List.of(), all(c.t2(), t, "r"));
            eq("other row", List.of("cf1:a=k"), values(c.t2().get(bb(t), tget("keep"))));
        });

        s.thrift2("t2.deleteSingle.row_up_to_timestamp", c -> {
            String t = createTable(c);
            threeVersions(c.t2(), t, "r");
            put(c.t2(), t, "r", cv("cf2", "b", "old", 15));
            TDelete d = tdelete("r");
            d.setTimestamp(20);
            c.t2().deleteSingle(bb(t), d);
            eq("cells left after a row delete at 20", List.of("cf1:q=v30@30"), all(c.t2(), t, "r"));
        });

        s.thrift2("t2.deleteSingle.DELETE_COLUMN_latest_or_exact", c -> {
            String t = createTable(c);
            threeVersions(c.t2(), t, "r");
            c.t2().deleteSingle(bb(t), tdelete("r", TDeleteType.DELETE_COLUMN, col("cf1", "q")));
            eq("after DELETE_COLUMN without timestamp", List.of("cf1:q=v20@20", "cf1:q=v10@10"),
                    cells(c.t2().get(bb(t), versions("r", 10))));
            threeVersions(c.t2(), t, "s");
            c.t2().deleteSingle(bb(t), tdelete("s", TDeleteType.DELETE_COLUMN, colTs("cf1", "q", 20)));
            eq("after DELETE_COLUMN at 20", List.of("cf1:q=v30@30", "cf1:q=v10@10"),
                    cells(c.t2().get(bb(t), versions("s", 10))));
        });

        s.thrift2("t2.deleteSingle.DELETE_COLUMNS_is_the_default", c -> {
            String t = createTable(c);
            threeVersions(c.t2(), t, "r");
            put(c.t2(), t, "r", cv("cf1", "other", "o", 10));
            c.t2().deleteSingle(bb(t), tdelete("r", null, colTs("cf1", "q", 20)));
            eq("after a delete with deleteType absent at 20", List.of("cf1:other=o@10", "cf1:q=v30@30"),
                    all(c.t2(), t, "r"));
            c.t2().deleteSingle(bb(t), tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "q")));
            eq("after DELETE_COLUMNS without timestamp", List.of("cf1:other=o@10"), all(c.t2(), t, "r"));
        });

        s.thrift2("t2.deleteSingle.DELETE_FAMILY", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1", 10), cv("cf1", "b", "2", 30), cv("cf2", "c", "3", 10));
            c.t2().deleteSingle(bb(t), tdelete("r", TDeleteType.DELETE_FAMILY, colTs("cf1", null, 20)));
            eq("after DELETE_FAMILY cf1 at 20", List.of("cf1:b=2@30", "cf2:c=3@10"), all(c.t2(), t, "r"));
            c.t2().deleteSingle(bb(t), tdelete("r", TDeleteType.DELETE_FAMILY, col("cf1")));
            eq("after DELETE_FAMILY cf1", List.of("cf2:c=3@10"), all(c.t2(), t, "r"));
        });

        s.thrift2("t2.deleteSingle.DELETE_FAMILY_VERSION", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "a10", 10), cv("cf1", "a", "a20", 20), cv("cf1", "b", "b20", 20),
                    cv("cf1", "b", "b30", 30), cv("cf2", "c", "c20", 20));
            c.t2().deleteSingle(bb(t), tdelete("r", TDeleteType.DELETE_FAMILY_VERSION, colTs("cf1", null, 20)));
            eq("after DELETE_FAMILY_VERSION cf1 at 20", List.of("cf1:a=a10@10", "cf1:b=b30@30", "cf2:c=c20@20"),
                    all(c.t2(), t, "r"));
        });

        s.thrift2("t2.deleteSingle.family_only_column_targets_empty_qualifier", c -> {
            // HBase 2.2+: under DELETE_COLUMN(S) a TColumn without qualifier names the
            // empty qualifier, not the family (use DELETE_FAMILY for that).
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "", "empty", 10), cv("cf1", "a", "1", 10));
            c.t2().deleteSingle(bb(t), tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1")));
            eq("after DELETE_COLUMNS of TColumn(cf1)", List.of("cf1:a=1@10"), all(c.t2(), t, "r"));
        });

        s.thrift2("t2.deleteMultiple.returns_empty_list", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r1", cv("cf1", "a", "1"));
            put(c.t2(), t, "r2", cv("cf1", "a", "2"), cv("cf1", "b", "3"));
            List<TDelete> failed = c.t2().deleteMultiple(bb(t),
                    List.of(tdelete("r1"), tdelete("r2", TDeleteType.DELETE_COLUMNS, col("cf1", "a"))));
            eq("deleteMultiple result", 0, failed.size());
            eq("r1", List.of(), all(c.t2(), t, "r1"));
            eq("r2", List.of("cf1:b=3"), values(c.t2().get(bb(t), tget("r2"))));
        });

        s.thrift2("t2.deleteMultiple.failed_delete", c -> {
            // HBase applies the good deletes and answers TIOError for the batch; Tabula's
            // contract returns the deletes that failed. Either way the good delete is applied.
            String t = createTable(c);
            put(c.t2(), t, "r1", cv("cf1", "a", "1"));
            put(c.t2(), t, "r2", cv("cf1", "a", "2"));
            TDelete bad = tdelete("r2", TDeleteType.DELETE_COLUMNS, col("nofam", "a"));
            try {
                List<TDelete> failed = c.t2().deleteMultiple(bb(t), List.of(tdelete("r1"), bad));
                eq("deletes returned as failed", 1, failed.size());
                eq("the failed delete's row", "r2", str(failed.get(0).getRow()));
            } catch (TIOError e) {
                // HBase's answer.
            }
            eq("good delete applied", List.of(), all(c.t2(), t, "r1"));
            eq("r2 untouched", List.of("cf1:a=2"), values(c.t2().get(bb(t), tget("r2"))));
        });

        s.thrift2("t2.checkAndPut.value_and_absence", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "v1"));
            eq("matching value", true, c.t2().checkAndPut(bb(t), bb("r"), bb("cf1"), bb("a"), bb("v1"),
                    tput("r", cv("cf1", "b", "applied"))));
            eq("other value", false, c.t2().checkAndPut(bb(t), bb("r"), bb("cf1"), bb("a"), bb("zz"),
                    tput("r", cv("cf1", "c", "no"))));
            eq("value unset, column absent", true, c.t2().checkAndPut(bb(t), bb("r"), bb("cf1"), bb("none"), null,
                    tput("r", cv("cf1", "d", "yes"))));
            eq("value unset, column present", false, c.t2().checkAndPut(bb(t), bb("r"), bb("cf1"), bb("a"), null,
                    tput("r", cv("cf1", "e", "no"))));
            eq("row", List.of("cf1:a=v1", "cf1:b=applied", "cf1:d=yes"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.checkAndDelete.value_and_absence", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "v1"), cv("cf1", "b", "x"), cv("cf1", "c", "y"), cv("cf1", "d", "z"));
            eq("other value", false, c.t2().checkAndDelete(bb(t), bb("r"), bb("cf1"), bb("a"), bb("zz"),
                    tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "b"))));
            eq("matching value", true, c.t2().checkAndDelete(bb(t), bb("r"), bb("cf1"), bb("a"), bb("v1"),
                    tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "b"))));
            eq("value unset, column absent", true, c.t2().checkAndDelete(bb(t), bb("r"), bb("cf1"), bb("none"),
                    null, tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "c"))));
            eq("value unset, column present", false, c.t2().checkAndDelete(bb(t), bb("r"), bb("cf1"), bb("a"),
                    null, tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "d"))));
            eq("row", List.of("cf1:a=v1", "cf1:d=z"), values(c.t2().get(bb(t), tget("r"))));
        });

        // checkAndMutate compares `provided <op> stored`; stored is "m".
        String[] provided = {"a", "m", "z"};
        for (TCompareOperator op : TCompareOperator.values()) {
            if (op == TCompareOperator.NO_OP) continue;
            s.thrift2("t2.checkAndMutate." + op.name(), c -> {
                String t = createTable(c);
                for (String p : provided) {
                    String r = "row_" + p;
                    put(c.t2(), t, r, cv("cf1", "q", "m"), cv("cf1", "gone", "g"));
                    int cmp = Integer.signum(p.compareTo("m"));
                    boolean expected = holds(op, cmp);
                    boolean got = c.t2().checkAndMutate(bb(t), bb(r), bb("cf1"), bb("q"), op, bb(p),
                            flagAndDelete(r));
                    eq(op.name() + " with provided '" + p + "' vs stored 'm'", expected, got);
                    eq("row " + r + " after checkAndMutate",
                            expected ? List.of("cf1:flag=yes", "cf1:q=m") : List.of("cf1:gone=g", "cf1:q=m"),
                            values(c.t2().get(bb(t), tget(r))));
                }
                String missing = "absent_row";
                eq(op.name() + " with a value against a missing cell", false,
                        c.t2().checkAndMutate(bb(t), bb(missing), bb("cf1"), bb("q"), op, bb("m"), flagAndDelete(missing)));
                eq("missing row untouched", List.of(), values(c.t2().get(bb(t), tget(missing))));
            });
        }

        s.thrift2("t2.checkAndMutate.NO_OP_never_applies", c -> {
            // HBase's region server has no comparison for NO_OP: the call fails (TIOError) or
            // reports false; it never applies the mutations.
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "q", "m"), cv("cf1", "gone", "g"));
            try {
                eq("NO_OP result", false, c.t2().checkAndMutate(bb(t), bb("r"), bb("cf1"), bb("q"),
                        TCompareOperator.NO_OP, bb("m"), flagAndDelete("r")));
            } catch (TIOError e) {
                // acceptable
            }
            eq("row untouched", List.of("cf1:gone=g", "cf1:q=m"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.checkAndMutate.value_unset_is_absence_check", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "gone", "g"));
            eq("EQUAL, value unset, cell absent", true, c.t2().checkAndMutate(bb(t), bb("r"), bb("cf1"), bb("q"),
                    TCompareOperator.EQUAL, null, flagAndDelete("r")));
            eq("row", List.of("cf1:flag=yes"), values(c.t2().get(bb(t), tget("r"))));
            put(c.t2(), t, "s", cv("cf1", "q", "m"), cv("cf1", "gone", "g"));
            eq("EQUAL, value unset, cell present", false, c.t2().checkAndMutate(bb(t), bb("s"), bb("cf1"), bb("q"),
                    TCompareOperator.EQUAL, null, flagAndDelete("s")));
        });

        s.thrift2("t2.increment.counters", c -> {
            String t = createTable(c);
            TIncrement inc = new TIncrement(bb("r"), new ArrayList<>(List.of(amount("n", 5L), amount("m", -2L))));
            TResult r = c.t2().increment(bb(t), inc);
            eq("increment result cells", List.of("cf1:m", "cf1:n"), names(r));
            eq("cf1:m", -2L, Bytes.toI64(value(r, "m")));
            eq("cf1:n", 5L, Bytes.toI64(value(r, "n")));
            TColumnIncrement byDefault = new TColumnIncrement(bb("cf1"), bb("n"));
            byDefault.unsetAmount(); // absent on the wire: amount 1
            r = c.t2().increment(bb(t), new TIncrement(bb("r"), new ArrayList<>(List.of(byDefault))));
            eq("cf1:n after an increment without amount", 6L, Bytes.toI64(value(r, "n")));
            TIncrement quiet = new TIncrement(bb("r"), new ArrayList<>(List.of(amount("n", 10L))));
            quiet.setReturnResults(false);
            r = c.t2().increment(bb(t), quiet);
            eq("returnResults=false", List.of(), values(r));
            TResult stored = c.t2().get(bb(t), tget("r", col("cf1", "n")));
            eq("stored counter (8-byte big-endian)", Bytes.i64(16), stored.getColumnValues().get(0).getValue());
        });

        s.thrift2("t2.increment.not_a_counter_is_TIOError", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "n", "abc"));
            expect(TIOError.class, "increment of a 3-byte cell", () -> c.t2().increment(bb(t),
                    new TIncrement(bb("r"), new ArrayList<>(List.of(amount("n", 1L))))));
            eq("cell unchanged", List.of("cf1:n=abc"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.append.concatenates", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "s", "ab"));
            TAppend a = new TAppend(bb("r"), new ArrayList<>(List.of(cv("cf1", "s", "cd"), cv("cf1", "fresh", "x"))));
            TResult r = c.t2().append(bb(t), a);
            eq("append result", List.of("cf1:fresh=x", "cf1:s=abcd"), values(r));
            TAppend quiet = new TAppend(bb("r"), new ArrayList<>(List.of(cv("cf1", "s", "!"))));
            quiet.setReturnResults(false);
            eq("returnResults=false", List.of(), values(c.t2().append(bb(t), quiet)));
            eq("stored", List.of("cf1:fresh=x", "cf1:s=abcd!"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.mutateRow.put_and_delete", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "old", "o"), cv("cf2", "keep", "k"));
            TRowMutations rm = new TRowMutations(bb("r"), new ArrayList<>(List.of(
                    TMutation.put(tput("r", cv("cf1", "new", "n"))),
                    TMutation.deleteSingle(tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "old"))))));
            c.t2().mutateRow(bb(t), rm);
            eq("row after mutateRow", List.of("cf1:new=n", "cf2:keep=k"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.mutateRow.failure_applies_nothing", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "old", "o"));
            TRowMutations rm = new TRowMutations(bb("r"), new ArrayList<>(List.of(
                    TMutation.deleteSingle(tdelete("r", TDeleteType.DELETE_COLUMNS, col("cf1", "old"))),
                    TMutation.put(tput("r", cv("nofam", "x", "1"))))));
            expect(TIOError.class, "mutateRow with a put to family nofam", () -> c.t2().mutateRow(bb(t), rm));
            eq("row unchanged (atomic)", List.of("cf1:old=o"), values(c.t2().get(bb(t), tget("r"))));
        });

        s.thrift2("t2.errors.missing_table_is_TIOError", c -> {
            String t = c.table();
            TIOError e = expect(TIOError.class, "get", () -> c.t2().get(bb(t), tget("r")));
            check(!e.isSetCanRetry() || !e.isCanRetry(), "a missing table is not retryable (canRetry=false)");
            expect(TIOError.class, "getMultiple", () -> c.t2().getMultiple(bb(t), List.of(tget("r"))));
            expect(TIOError.class, "exists", () -> c.t2().exists(bb(t), tget("r")));
            expect(TIOError.class, "put", () -> put(c.t2(), t, "r", cv("cf1", "a", "1")));
            expect(TIOError.class, "deleteSingle", () -> c.t2().deleteSingle(bb(t), tdelete("r")));
            expect(TIOError.class, "increment", () -> c.t2().increment(bb(t),
                    new TIncrement(bb("r"), new ArrayList<>(List.of(amount("n", 1L))))));
            expect(TIOError.class, "openScanner", () -> c.t2().openScanner(bb(t), new tabula.compat.thrift2.TScan()));
            expect(TIOError.class, "getScannerResults",
                    () -> c.t2().getScannerResults(bb(t), new tabula.compat.thrift2.TScan(), 5));
            eq("connection usable", TThriftServerType.TWO, c.t2().getThriftServerType());
        });

        s.thrift2("t2.unknown_method_keeps_connection", c -> {
            TProtocol p = c.open(c.settings.thrift2Port);
            Hbase.Client wrong = new Hbase.Client(p);
            THBaseService.Client right = new THBaseService.Client(p);
            expectApp(TApplicationException.UNKNOWN_METHOD, "Thrift1 getTableNames on the Thrift2 port",
                    wrong::getTableNames);
            eq("Thrift2 call on the same connection", TThriftServerType.TWO, right.getThriftServerType());
        });

        s.thrift2("t2.namespaced_table.data", c -> {
            String ns = c.namespace();
            c.t2().createNamespace(new TNamespaceDescriptor(ns));
            String q = c.table();
            String full = ns + ":" + q;
            T2.createTable(c.t2(), tn(ns, q), List.of(), T2.family("cf1", 3));
            T2.createTable(c.t2(), tn(q), List.of(), T2.family("cf1", 3));
            put(c.t2(), full, "r", cv("cf1", "a", "in-ns"));
            put(c.t2(), q, "r", cv("cf1", "a", "in-default"));
            eq("get from " + full, List.of("cf1:a=in-ns"), values(c.t2().get(bb(full), tget("r"))));
            eq("get from " + q, List.of("cf1:a=in-default"), values(c.t2().get(bb(q), tget("r"))));
            eq("get from default:" + q, List.of("cf1:a=in-default"),
                    values(c.t2().get(bb("default:" + q), tget("r"))));
        });
    }

    static boolean holds(TCompareOperator op, int cmp) {
        switch (op) {
            case LESS: return cmp < 0;
            case LESS_OR_EQUAL: return cmp <= 0;
            case EQUAL: return cmp == 0;
            case NOT_EQUAL: return cmp != 0;
            case GREATER_OR_EQUAL: return cmp >= 0;
            case GREATER: return cmp > 0;
            default: throw fail("no expectation for " + op);
        }
    }

    /** Mutations: put cf1:flag=yes, delete cf1:gone. */
    static TRowMutations flagAndDelete(String row) {
        return new TRowMutations(bb(row), new ArrayList<>(List.of(
                TMutation.put(tput(row, cv("cf1", "flag", "yes"))),
                TMutation.deleteSingle(tdelete(row, TDeleteType.DELETE_COLUMNS, col("cf1", "gone"))))));
    }

    static TColumnIncrement amount(String qualifier, long amount) {
        TColumnIncrement i = new TColumnIncrement(bb("cf1"), bb(qualifier));
        i.setAmount(amount);
        return i;
    }

    static List<String> names(TResult r) {
        List<String> out = new ArrayList<>();
        for (TColumnValue v : r.getColumnValues()) out.add(str(v.getFamily()) + ":" + str(v.getQualifier()));
        return out;
    }

    static byte[] value(TResult r, String qualifier) {
        for (TColumnValue v : r.getColumnValues()) {
            if (str(v.getQualifier()).equals(qualifier)) return v.getValue();
        }
        throw fail("no cell cf1:" + qualifier + " in " + values(r));
    }
}
