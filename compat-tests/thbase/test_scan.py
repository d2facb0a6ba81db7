"""openScanner / getScannerRows / closeScanner / getScannerResults as HBase's
Thrift2 server answers them: row ranges, reversed scans, filters, versions,
batching, limits and scanner ids."""

import pytest
from thbase.hbase.ttypes import TGet, TIllegalArgument, TPut, TScan, TTimeRange

from thbase_support import cell_values, cells, col, cv, rows_of, scan_all, timestamps

ROWS = [b"a1", b"b1", b"b2", b"b3", b"c1"]


@pytest.fixture
def filled(service, table):
    """`table` with one row per key in ROWS: cf1:q = b'v-' + key, and cf2:x on b-rows."""
    puts = []
    for key in ROWS:
        values = [cv(b"cf1", b"q", b"v-" + key)]
        if key.startswith(b"b"):
            values.append(cv(b"cf2", b"x", b"x-" + key))
        puts.append(TPut(row=key, columnValues=values))
    service.putMultiple(table, puts)
    return table


def test_full_scan_returns_every_row_in_order(service, filled):
    results = scan_all(service, filled, TScan())
    assert rows_of(results) == ROWS
    assert cell_values(results[0]) == [(b"cf1:q", b"v-a1")]
    assert cell_values(results[1]) == [(b"cf1:q", b"v-b1"), (b"cf2:x", b"x-b1")]


def test_get_scanner_rows_returns_at_most_num_rows_then_empty(service, filled):
    scanner_id = service.openScanner(filled, TScan())
    try:
        assert rows_of(service.getScannerRows(scanner_id, 2)) == [b"a1", b"b1"]
        assert rows_of(service.getScannerRows(scanner_id, 2)) == [b"b2", b"b3"]
        assert rows_of(service.getScannerRows(scanner_id, 2)) == [b"c1"]
        assert service.getScannerRows(scanner_id, 2) == []
        assert service.getScannerRows(scanner_id, 2) == []
    finally:
        service.closeScanner(scanner_id)


def test_start_row_inclusive_stop_row_exclusive(service, filled):
    results = scan_all(service, filled, TScan(startRow=b"b1", stopRow=b"b3"))
    assert rows_of(results) == [b"b1", b"b2"]
    # Start and stop need not be existing keys.
    results = scan_all(service, filled, TScan(startRow=b"b", stopRow=b"c"))
    assert rows_of(results) == [b"b1", b"b2", b"b3"]
    assert rows_of(scan_all(service, filled, TScan(startRow=b"b2"))) == [b"b2", b"b3", b"c1"]
    assert rows_of(scan_all(service, filled, TScan(stopRow=b"b2"))) == [b"a1", b"b1"]


def test_reversed_scan(service, filled):
    everything = scan_all(service, filled, TScan(reversed=True))
    assert rows_of(everything) == list(reversed(ROWS))
    # Reversed: start is the upper, inclusive bound; stop the lower, exclusive one.
    ranged = scan_all(service, filled, TScan(startRow=b"b3", stopRow=b"a1", reversed=True))
    assert rows_of(ranged) == [b"b3", b"b2", b"b1"]


def test_prefix_filter_string(service, filled):
    results = scan_all(service, filled, TScan(filterString=b"PrefixFilter('b')"))
    assert rows_of(results) == [b"b1", b"b2", b"b3"]


def test_compound_filter_string(service, filled):
    results = scan_all(
        service,
        filled,
        TScan(filterString=b"PrefixFilter('b') AND QualifierFilter(=, 'binary:x')"),
    )
    assert rows_of(results) == [b"b1", b"b2", b"b3"]
    assert all(cell_values(r) == [(b"cf2:x", b"x-" + r.row)] for r in results)


def test_value_filter_and_key_only_filter(service, filled):
    results = scan_all(service, filled, TScan(filterString=b"ValueFilter(=, 'binary:v-b2')"))
    assert [(r.row, cell_values(r)) for r in results] == [(b"b2", [(b"cf1:q", b"v-b2")])]
    key_only = scan_all(service, filled, TScan(filterString=b"KeyOnlyFilter()"))
    assert rows_of(key_only) == ROWS
    assert all(c.value == b"" for r in key_only for c in r.columnValues)


def test_scan_columns_select_families_and_skip_rows_without_them(service, filled):
    results = scan_all(service, filled, TScan(columns=[col(b"cf2")]))
    assert rows_of(results) == [b"b1", b"b2", b"b3"]
    assert all(cell_values(r) == [(b"cf2:x", b"x-" + r.row)] for r in results)
    results = scan_all(service, filled, TScan(columns=[col(b"cf1", b"q")]))
    assert rows_of(results) == ROWS


def test_scan_versions_and_time_range(service, table):
    for ts in (1000, 2000, 3000):
        service.put(
            table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", str(ts).encode(), ts)])
        )
    (latest,) = scan_all(service, table, TScan())
    assert cells(latest) == [(b"cf1", b"a", b"3000", 3000)]
    (every,) = scan_all(service, table, TScan(maxVersions=10))
    assert timestamps(every, b"cf1", b"a") == [3000, 2000, 1000]
    (ranged,) = scan_all(
        service, table, TScan(maxVersions=10, timeRange=TTimeRange(minStamp=1000, maxStamp=3000))
    )
    assert timestamps(ranged, b"cf1", b"a") == [2000, 1000]
    assert scan_all(service, table, TScan(timeRange=TTimeRange(minStamp=3001, maxStamp=4000))) == []


def test_scan_limit(service, filled):
    assert rows_of(scan_all(service, filled, TScan(limit=2), batch=10)) == [b"a1", b"b1"]


def test_batch_size_splits_wide_rows(service, table):
    service.put(
        table,
        TPut(row=b"wide", columnValues=[cv(b"cf1", b"q%d" % i, b"%d" % i) for i in range(5)]),
    )
    results = scan_all(service, table, TScan(batchSize=2), batch=10)
    assert rows_of(results) == [b"wide"] * 3
    assert [len(r.columnValues) for r in results] == [2, 2, 1]
    assert [c.qualifier for r in results for c in r.columnValues] == [
        b"q0", b"q1", b"q2", b"q3", b"q4"
    ]
    assert results[0].partial is True


def test_get_scanner_results_opens_reads_and_closes(service, filled):
    first = service.getScannerResults(filled, TScan(startRow=b"b1"), 2)
    assert rows_of(first) == [b"b1", b"b2"]
    everything = service.getScannerResults(filled, TScan(), 100)
    assert rows_of(everything) == ROWS
    prefixed = service.getScannerResults(filled, TScan(filterString=b"PrefixFilter('c')"), 10)
    assert rows_of(prefixed) == [b"c1"]


def test_scan_of_empty_table(service, table):
    assert scan_all(service, table, TScan()) == []
    assert service.getScannerResults(table, TScan(), 10) == []


def test_scanner_ids_are_distinct(service, filled):
    first = service.openScanner(filled, TScan())
    second = service.openScanner(filled, TScan(startRow=b"c"))
    try:
        assert first != second
        assert rows_of(service.getScannerRows(second, 10)) == [b"c1"]
        assert rows_of(service.getScannerRows(first, 1)) == [b"a1"]
    finally:
        service.closeScanner(first)
        service.closeScanner(second)


def test_closed_scanner_id_is_an_illegal_argument(service, filled):
    scanner_id = service.openScanner(filled, TScan())
    service.closeScanner(scanner_id)
    with pytest.raises(TIllegalArgument):
        service.getScannerRows(scanner_id, 1)
    # The connection is still usable.
    assert rows_of(service.getScannerResults(filled, TScan(), 1)) == [b"a1"]


def test_unknown_scanner_id_is_an_illegal_argument(service, filled):
    with pytest.raises(TIllegalArgument):
        service.getScannerRows(2147483600, 1)
    assert service.exists(filled, TGet(row=b"a1")) is True


def test_column_family_time_ranges(service, table):
    for ts in (1000, 3000):
        service.put(
            table,
            TPut(
                row=b"r",
                columnValues=[cv(b"cf1", b"a", b"a%d" % ts, ts), cv(b"cf2", b"c", b"c%d" % ts, ts)],
            ),
        )
    (result,) = scan_all(
        service, table, TScan(colFamTimeRangeMap={b"cf1": TTimeRange(minStamp=0, maxStamp=2000)})
    )
    assert cells(result) == [(b"cf1", b"a", b"a1000", 1000), (b"cf2", b"c", b"c3000", 3000)]
