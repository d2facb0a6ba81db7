package tabula.compat;

import static tabula.compat.Assert.check;
import static tabula.compat.Assert.eq;
import static tabula.compat.Assert.expect;
import static tabula.compat.Assert.expectApp;
import static tabula.compat.Assert.fail;
import static tabula.compat.Bytes.bb;
import static tabula.compat.T2.cells;
import static tabula.compat.T2.col;
import static tabula.compat.T2.createTable;
import static tabula.compat.T2.cv;
import static tabula.compat.T2.put;
import static tabula.compat.T2.refused;
import static tabula.compat.T2.rows;
import static tabula.compat.T2.values;

import java.util.ArrayList;
import java.util.List;
import org.apache.thrift.TApplicationException;
import tabula.compat.thrift2.THBaseService;
import tabula.compat.thrift2.TIllegalArgument;
import tabula.compat.thrift2.TResult;
import tabula.compat.thrift2.TScan;
import tabula.compat.thrift2.TTimeRange;

/** Thrift2 scanner checks: openScanner / getScannerRows / closeScanner / getScannerResults. */
final class Thrift2ScanChecks {
    private Thrift2ScanChecks() {}

    static void rowsWithOneCell(THBaseService.Client h, String t, String... keys) throws Exception {
        for (String k : keys) put(h, t, k, cv("cf1", "q", "v_" + k));
    }

    /** Reads a scanner n rows at a time until [] and closes it. */
    static List<TResult> drain(THBaseService.Client h, int id, int n) throws Exception {
        List<TResult> all = new ArrayList<>();
        for (int guard = 0; guard < 10_000; guard++) {
            List<TResult> batch = h.getScannerRows(id, n);
            if (batch.isEmpty()) {
                h.closeScanner(id);
                return all;
            }
            check(batch.size() <= n, "getScannerRows(" + n + ") returned " + batch.size() + " rows");
            all.addAll(batch);
        }
        throw fail("scanner " + id + " never ended");
    }

    static List<TResult> scan(Ctx c, String t, TScan scan) throws Exception {
        return drain(c.t2(), c.t2().openScanner(bb(t), scan), 100);
    }

    static TScan range(String start, String stop) {
        TScan s = new TScan();
        if (start != null) s.setStartRow(bb(start));
        if (stop != null) s.setStopRow(bb(stop));
        return s;
    }

    static void register(Suite s) {
        s.thrift2("t2.openScanner.rows_end_and_close", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a", "b", "c", "d", "e");
            int id = c.t2().openScanner(bb(t), range("b", "e"));
            List<TResult> first = c.t2().getScannerRows(id, 2);
            eq("first batch", List.of("b", "c"), rows(first));
            eq("cells of b", List.of("cf1:q=v_b"), values(first.get(0)));
            eq("second batch", List.of("d"), rows(c.t2().getScannerRows(id, 2)));
            eq("exhausted", List.of(), rows(c.t2().getScannerRows(id, 2)));
            eq("still exhausted", List.of(), rows(c.t2().getScannerRows(id, 2)));
            c.t2().closeScanner(id);
            expect(TIllegalArgument.class, "getScannerRows on a closed scanner", () -> c.t2().getScannerRows(id, 1));
            eq("connection usable", List.of("a", "b", "c", "d", "e"), rows(scan(c, t, new TScan())));
        });

        s.thrift2("t2.getScannerRows.unknown_id_is_TIllegalArgument", c -> {
            int bogus = Integer.MAX_VALUE - 23;
            expect(TIllegalArgument.class, "getScannerRows of an unknown id", () -> c.t2().getScannerRows(bogus, 1));
            try {
                c.t2().closeScanner(bogus); // newer HBase ignores unknown ids
            } catch (TIllegalArgument e) {
                // older HBase
            }
            c.t2().getThriftServerType();
        });

        s.thrift2("t2.openScanner.maxVersions_and_timeRange", c -> {
            String t = createTable(c);
            Thrift2DataChecks.threeVersions(c.t2(), t, "r");
            eq("default maxVersions (1)", List.of("cf1:q=v30@30"), cells(scan(c, t, new TScan()).get(0)));
            TScan two = new TScan();
            two.setMaxVersions(2);
            eq("maxVersions 2", List.of("cf1:q=v30@30", "cf1:q=v20@20"), cells(scan(c, t, two).get(0)));
            TScan ranged = new TScan();
            ranged.setMaxVersions(10);
            ranged.setTimeRange(new TTimeRange(10, 30));
            eq("timeRange [10, 30)", List.of("cf1:q=v20@20", "cf1:q=v10@10"), cells(scan(c, t, ranged).get(0)));
            TScan none = new TScan();
            none.setTimeRange(new TTimeRange(31, 40));
            eq("timeRange [31, 40) matches no row", List.of(), rows(scan(c, t, none)));
        });

        s.thrift2("t2.openScanner.columns", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "1"), cv("cf1", "b", "2"), cv("cf2", "c", "3"));
            put(c.t2(), t, "s", cv("cf2", "c", "4"));
            TScan sc = new TScan();
            sc.setColumns(new ArrayList<>(List.of(col("cf1", "b"))));
            List<TResult> out = scan(c, t, sc);
            eq("rows having cf1:b", List.of("r"), rows(out));
            eq("cells", List.of("cf1:b=2"), values(out.get(0)));
            sc.setColumns(new ArrayList<>(List.of(col("cf2"))));
            eq("rows having cf2", List.of("r", "s"), rows(scan(c, t, sc)));
        });

        s.thrift2("t2.openScanner.colFamTimeRangeMap", c -> {
            String t = createTable(c);
            put(c.t2(), t, "r", cv("cf1", "a", "old", 10), cv("cf1", "b", "new", 20), cv("cf2", "c", "new", 20));
            TScan sc = new TScan();
            sc.setColFamTimeRangeMap(new java.util.HashMap<>(java.util.Map.of(bb("cf1"), new TTimeRange(0, 15))));
            eq("cf1 limited to [0, 15), cf2 unrestricted", List.of("cf1:a=old@10", "cf2:c=new@20"),
                    cells(scan(c, t, sc).get(0)));
        });

        s.thrift2("t2.openScanner.reversed", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a", "b", "c", "d");
            TScan sc = range("c", "a");
            sc.setReversed(true);
            eq("reversed from c down to a (exclusive)", List.of("c", "b"), rows(scan(c, t, sc)));
            TScan all = new TScan();
            all.setReversed(true);
            eq("reversed whole table", List.of("d", "c", "b", "a"), rows(scan(c, t, all)));
        });

        s.thrift2("t2.openScanner.limit", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a", "b", "c", "d");
            TScan sc = new TScan();
            sc.setLimit(2);
            eq("limit 2", List.of("a", "b"), rows(scan(c, t, sc)));
        });

        s.thrift2("t2.openScanner.batchSize_partial", c -> {
            String t = createTable(c);
            List<tabula.compat.thrift2.TColumnValue> wide = new ArrayList<>();
            for (int i = 0; i < 5; i++) wide.add(cv("cf1", "q" + i, "v" + i));
            put(c.t2(), t, "wide", wide.toArray(new tabula.compat.thrift2.TColumnValue[0]));
            put(c.t2(), t, "x", cv("cf1", "q", "v"));
            TScan sc = new TScan();
            sc.setBatchSize(2);
            List<TResult> out = scan(c, t, sc);
            eq("rows", List.of("wide", "wide", "wide", "x"), rows(out));
            List<Integer> sizes = new ArrayList<>();
            for (TResult r : out) sizes.add(r.getColumnValuesSize());
            eq("cells per chunk", List.of(2, 2, 1, 1), sizes);
            check(out.get(0).isPartial() && out.get(1).isPartial(), "chunks followed by more of the row must be partial");
        });

        s.thrift2("t2.openScanner.filterString_prefix", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a1", "a2", "b1", "ab");
            TScan sc = new TScan();
            sc.setFilterString(bb("PrefixFilter('a')"));
            eq("PrefixFilter('a')", List.of("a1", "a2", "ab"), rows(scan(c, t, sc)));
        });

        s.thrift2("t2.openScanner.filterBytes_refused", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a", "b");
            TScan sc = new TScan();
            sc.setFilterBytes(new byte[] {1, 2, 3});
            refused("openScanner with TScan.filterBytes (not a serialized filter)", () -> c.t2().openScanner(bb(t), sc));
            refused("getScannerResults with TScan.filterBytes",
                    () -> c.t2().getScannerResults(bb(t), sc, 10));
            eq("connection usable", List.of("a", "b"), rows(scan(c, t, new TScan())));
        });

        s.thrift2("t2.openScanner.filterBytes_as_HBase_client_sends_them", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a1", "a2", "b1", "ab", "c1");
            // (PrefixFilter('a') AND RowFilter(>=, 'binary:a2')) OR PrefixFilter('c'),
            // and filterBytes win over filterString.
            byte[] filter = FilterBytes.list(false,
                    FilterBytes.list(true, FilterBytes.prefix("a"),
                            FilterBytes.compare("RowFilter", FilterBytes.GREATER_OR_EQUAL, FilterBytes.binary("a2"))),
                    FilterBytes.prefix("c"));
            TScan sc = new TScan();
            sc.setFilterString(bb("PrefixFilter('b')"));
            sc.setFilterBytes(filter);
            eq("FilterList from filterBytes", List.of("a2", "ab", "c1"), rows(scan(c, t, sc)));
            TScan regex = new TScan();
            regex.setFilterBytes(FilterBytes.compare("RowFilter", FilterBytes.EQUAL,
                    FilterBytes.regex("^A", java.util.regex.Pattern.CASE_INSENSITIVE)));
            eq("case-insensitive RegexStringComparator", List.of("a1", "a2", "ab"), rows(scan(c, t, regex)));
            TScan noKeys = new TScan();
            noKeys.setFilterBytes(FilterBytes.named("FuzzyRowFilter", new byte[0]));
            eq("a FuzzyRowFilter without fuzzy keys", List.of(), rows(scan(c, t, noKeys)));
            TScan retired = new TScan();
            retired.setFilterBytes(FilterBytes.named("FirstKeyValueMatchingQualifiersFilter", new byte[0]));
            refused("openScanner with a filter Tabula does not run",
                    () -> c.t2().openScanner(bb(t), retired));
        });

        s.thrift2("t2.openScanner.bad_filterString_is_INTERNAL_ERROR", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a");
            TScan sc = new TScan();
            sc.setFilterString(bb("PrefixFilter('a'"));
            expectApp(TApplicationException.INTERNAL_ERROR, "scan with an unbalanced filter string",
                    () -> scan(c, t, sc));
            eq("connection usable", List.of("a"), rows(scan(c, t, new TScan())));
        });

        s.thrift2("t2.getScannerResults.numRows", c -> {
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a", "b", "c", "d", "e");
            eq("first 3 rows", List.of("a", "b", "c"), rows(c.t2().getScannerResults(bb(t), new TScan(), 3)));
            eq("[b, d) with room for 10", List.of("b", "c"),
                    rows(c.t2().getScannerResults(bb(t), range("b", "d"), 10)));
            eq("empty range", List.of(), rows(c.t2().getScannerResults(bb(t), range("x", "y"), 10)));
        });

        s.thrift2("t2.scanner.shared_across_connections", c -> {
            // Scanner ids are server-wide: another connection may continue a scan.
            String t = createTable(c);
            rowsWithOneCell(c.t2(), t, "a", "b", "c");
            int id = c.t2().openScanner(bb(t), new TScan());
            eq("first row on connection 1", List.of("a"), rows(c.t2().getScannerRows(id, 1)));
            THBaseService.Client other = c.newT2();
            eq("rest on connection 2", List.of("b", "c"), rows(drain(other, id, 5)));
        });
    }
}
