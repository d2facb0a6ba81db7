"""Table.scan with every argument: ranges, prefixes, columns, timestamps,
batch_size (rows per scannerGetList), scan_batching (cells per result), limit,
sorted_columns and reverse; plus scanner life cycle on one connection."""

from collections import OrderedDict

import pytest

from compat_support import scan_keys, scan_list

KEYS = [b"row-%02d" % i for i in range(20)]


@pytest.fixture
def twenty(table):
    """Rows row-00..row-19, each with cf1:a, cf1:b and cf2:c, written at ts 1000."""
    with table.batch(timestamp=1000) as batch:
        for i in reversed(range(20)):
            batch.put(KEYS[i], {b"cf1:a": b"a%d" % i, b"cf1:b": b"b%d" % i, b"cf2:c": b"c%d" % i})
    return table


def _row(i):
    return {b"cf1:a": b"a%d" % i, b"cf1:b": b"b%d" % i, b"cf2:c": b"c%d" % i}


def test_scan_of_empty_table_yields_nothing(table):
    assert scan_list(table) == []


def test_full_scan_returns_all_rows_in_key_order(twenty):
    assert scan_list(twenty) == [(KEYS[i], _row(i)) for i in range(20)]


def test_row_start_is_inclusive_and_row_stop_exclusive(twenty):
    assert scan_keys(twenty, row_start=b"row-05", row_stop=b"row-10") == KEYS[5:10]


def test_row_start_only(twenty):
    assert scan_keys(twenty, row_start=b"row-15") == KEYS[15:]


def test_row_stop_only(twenty):
    assert scan_keys(twenty, row_stop=b"row-03") == KEYS[:3]


def test_range_bounds_between_existing_keys(twenty):
    assert scan_keys(twenty, row_start=b"row-05x", row_stop=b"row-07x") == [b"row-06", b"row-07"]


def test_range_past_last_row_is_empty(twenty):
    assert scan_keys(twenty, row_start=b"xyz") == []
    assert scan_keys(twenty, row_start=b"xyz", row_stop=b"zyx") == []


def test_row_prefix(table):
    for key in (b"app", b"apple", b"apply", b"apq", b"ap", b"b", b"aa"):
        table.put(key, {b"cf1:k": key})
    assert scan_keys(table, row_prefix=b"appl") == [b"apple", b"apply"]
    assert scan_keys(table, row_prefix=b"ap") == [b"ap", b"app", b"apple", b"apply", b"apq"]
    assert scan_keys(table, row_prefix=b"zz") == []


def test_row_prefix_ending_in_ff_bytes(table):
    keys = [b"a\xfe", b"a\xff", b"a\xff\x00", b"a\xff\xff", b"b", b"b\x00"]
    for key in keys:
        table.put(key, {b"cf1:k": b"1"})
    assert scan_keys(table, row_prefix=b"a\xff") == [b"a\xff", b"a\xff\x00", b"a\xff\xff"]


def test_columns_select_families_and_qualifiers(twenty):
    assert scan_list(twenty, row_stop=b"row-02", columns=[b"cf2"]) == [
        (b"row-00", {b"cf2:c": b"c0"}),
        (b"row-01", {b"cf2:c": b"c1"}),
    ]
    assert scan_list(twenty, row_stop=b"row-02", columns=[b"cf1:b", b"cf2:c"]) == [
        (b"row-00", {b"cf1:b": b"b0", b"cf2:c": b"c0"}),
        (b"row-01", {b"cf1:b": b"b1", b"cf2:c": b"c1"}),
    ]


def test_columns_skip_rows_without_selected_columns(table):
    table.put(b"r1", {b"cf1:a": b"1"})
    table.put(b"r2", {b"cf2:z": b"2"})
    table.put(b"r3", {b"cf1:a": b"3", b"cf2:z": b"4"})
    assert scan_list(table, columns=[b"cf2:z"]) == [(b"r2", {b"cf2:z": b"2"}), (b"r3", {b"cf2:z": b"4"})]


def test_family_with_colon_scans_only_empty_qualifier(table):
    table.put(b"r1", {b"cf1:": b"e1", b"cf1:x": b"x1"})
    table.put(b"r2", {b"cf1:x": b"x2"})
    assert scan_list(table, columns=[b"cf1:"]) == [(b"r1", {b"cf1:": b"e1"})]


def test_scan_timestamp_is_an_exclusive_upper_bound(table):
    table.put(b"r1", {b"cf1:a": b"old"}, timestamp=100)
    table.put(b"r1", {b"cf1:a": b"new"}, timestamp=200)
    table.put(b"r2", {b"cf1:a": b"only-new"}, timestamp=200)
    assert scan_list(table, timestamp=200) == [(b"r1", {b"cf1:a": b"old"})]
    assert scan_list(table, timestamp=201) == [(b"r1", {b"cf1:a": b"new"}), (b"r2", {b"cf1:a": b"only-new"})]
    assert scan_list(table, timestamp=100) == []


def test_include_timestamp(twenty):
    assert scan_list(twenty, row_stop=b"row-01", include_timestamp=True) == [
        (b"row-00", {b"cf1:a": (b"a0", 1000), b"cf1:b": (b"b0", 1000), b"cf2:c": (b"c0", 1000)})
    ]


def test_batch_size_smaller_than_result_fetches_in_chunks(connection, twenty):
    returned = []
    real_get_list = connection.client.scannerGetList

    def recording_get_list(scanner_id, how_many):
        rows = real_get_list(scanner_id, how_many)
        returned.append((how_many, len(rows)))
        return rows

    connection.client.scannerGetList = recording_get_list
    try:
        assert scan_list(twenty, batch_size=3) == [(KEYS[i], _row(i)) for i in range(20)]
    finally:
        del connection.client.scannerGetList
    assert all(requested == 3 and 0 <= got <= 3 for requested, got in returned)
    assert sum(got for _, got in returned) == 20
    assert returned[-1][1] == 0
    assert len(returned) >= 8


def test_batch_size_one(twenty):
    assert scan_keys(twenty, batch_size=1) == KEYS


def test_limit(twenty):
    assert scan_keys(twenty, limit=5) == KEYS[:5]
    assert scan_keys(twenty, limit=1) == KEYS[:1]
    assert scan_keys(twenty, limit=500) == KEYS


def test_limit_with_small_batch_size_and_range(twenty):
    assert scan_keys(twenty, row_start=b"row-04", batch_size=2, limit=5) == KEYS[4:9]


def test_limit_and_batch_size_over_many_rows(table):
    with table.batch(batch_size=500) as batch:
        for i in range(2000):
            batch.put(b"big-%05d" % i, {b"cf1:a": b"v1", b"cf2:b": b"v2"})
    assert len(scan_keys(table, row_prefix=b"big-", batch_size=499, limit=1000)) == 1000
    assert scan_keys(table, row_prefix=b"big-", batch_size=1, limit=10) == [b"big-%05d" % i for i in range(10)]
    assert len(scan_keys(table, row_prefix=b"big-")) == 2000
    assert len(scan_keys(table, row_start=b"big-00012", row_stop=b"big-00022")) == 10


def test_scan_batching_splits_wide_row_into_results_with_same_key(table):
    table.put(b"wide", {b"cf1:c%d" % i: b"v%d" % i for i in range(5)})
    table.put(b"zz", {b"cf1:c0": b"last"})
    assert scan_list(table, scan_batching=2) == [
        (b"wide", {b"cf1:c0": b"v0", b"cf1:c1": b"v1"}),
        (b"wide", {b"cf1:c2": b"v2", b"cf1:c3": b"v3"}),
        (b"wide", {b"cf1:c4": b"v4"}),
        (b"zz", {b"cf1:c0": b"last"}),
    ]


def test_scan_batching_larger_than_rows_keeps_rows_whole(twenty):
    assert scan_list(twenty, row_stop=b"row-02", scan_batching=100) == [
        (b"row-00", _row(0)),
        (b"row-01", _row(1)),
    ]


def test_limit_counts_partial_rows_from_scan_batching(table):
    table.put(b"wide", {b"cf1:c%d" % i: b"v" for i in range(6)})
    results = scan_list(table, scan_batching=2, limit=2)
    assert [key for key, _ in results] == [b"wide", b"wide"]
    assert [sorted(row) for _, row in results] == [[b"cf1:c0", b"cf1:c1"], [b"cf1:c2", b"cf1:c3"]]


def test_sorted_columns_returns_ordered_dict_sorted_by_column(table):
    table.put(b"r", {b"cf2:a": b"4", b"cf1:zz": b"3", b"cf1:b": b"2", b"cf1:a": b"1", b"cf3:": b"5"})
    results = scan_list(table, sorted_columns=True)
    assert len(results) == 1
    key, row = results[0]
    assert key == b"r"
    assert isinstance(row, OrderedDict)
    assert list(row.items()) == [
        (b"cf1:a", b"1"),
        (b"cf1:b", b"2"),
        (b"cf1:zz", b"3"),
        (b"cf2:a", b"4"),
        (b"cf3:", b"5"),
    ]


def test_sorted_columns_with_many_columns_and_timestamps(table):
    columns = [b"cf1:col-%03d" % i for i in range(100)]
    shuffled = columns[::2][::-1] + columns[1::2]
    table.put(b"r", {column: column[-3:] for column in shuffled}, timestamp=77)
    [(key, row)] = scan_list(table, sorted_columns=True, include_timestamp=True)
    assert key == b"r"
    assert list(row.items()) == [(column, (column[-3:], 77)) for column in columns]


def test_reverse_full_scan(twenty):
    assert scan_keys(twenty, reverse=True) == KEYS[::-1]


def test_reverse_range_start_inclusive_stop_exclusive(twenty):
    assert scan_keys(twenty, row_start=b"row-09", row_stop=b"row-04", reverse=True) == [
        b"row-09",
        b"row-08",
        b"row-07",
        b"row-06",
        b"row-05",
    ]


def test_reverse_with_only_start_or_only_stop(twenty):
    assert scan_keys(twenty, row_start=b"row-02", reverse=True) == [b"row-02", b"row-01", b"row-00"]
    assert scan_keys(twenty, row_stop=b"row-16", reverse=True) == [b"row-19", b"row-18", b"row-17"]


def test_reverse_with_limit_and_data(twenty):
    assert scan_list(twenty, reverse=True, limit=2) == [(KEYS[19], _row(19)), (KEYS[18], _row(18))]


def test_reverse_with_row_prefix(table):
    for key in (b"p0-z", b"p1-a", b"p1-b", b"p1-c", b"p2-a"):
        table.put(key, {b"cf1:k": key})
    assert scan_keys(table, row_prefix=b"p1-", reverse=True) == [b"p1-c", b"p1-b", b"p1-a"]


def test_reverse_with_columns_and_batch_size(twenty):
    assert scan_list(twenty, row_start=b"row-03", reverse=True, columns=[b"cf1:a"], batch_size=2) == [
        (b"row-03", {b"cf1:a": b"a3"}),
        (b"row-02", {b"cf1:a": b"a2"}),
        (b"row-01", {b"cf1:a": b"a1"}),
        (b"row-00", {b"cf1:a": b"a0"}),
    ]


def test_abandoned_scan_closes_and_connection_keeps_working(twenty):
    scanner = twenty.scan(batch_size=2)
    assert next(scanner)[0] == b"row-00"
    assert next(scanner)[0] == b"row-01"
    scanner.close()
    with pytest.raises(StopIteration):
        next(scanner)
    assert scan_keys(twenty, limit=3) == KEYS[:3]


def test_interleaved_scanners_on_one_connection(twenty):
    forward = twenty.scan(batch_size=1)
    backward = twenty.scan(batch_size=1, reverse=True)
    seen = []
    for _ in range(20):
        seen.append((next(forward)[0], next(backward)[0]))
    assert seen == list(zip(KEYS, KEYS[::-1]))
    assert list(forward) == []
    assert list(backward) == []


def test_many_short_scans_in_a_row(twenty):
    for i in range(50):
        assert scan_keys(twenty, row_start=KEYS[i % 20], limit=1) == [KEYS[i % 20]]


def test_compat_090_scans_use_the_older_scanner_calls(connection_factory, table):
    with table.batch(timestamp=500) as batch:
        for key in (b"a", b"b", b"c"):
            batch.put(key, {b"cf1:x": key, b"cf2:y": key})
    table.put(b"b", {b"cf1:x": b"newer"}, timestamp=900)
    old = connection_factory(compat="0.90").table(table.name)
    assert scan_keys(old) == [b"a", b"b", b"c"]
    assert scan_keys(old, row_start=b"b") == [b"b", b"c"]
    assert scan_list(old, row_start=b"a", row_stop=b"c", columns=[b"cf1"]) == [
        (b"a", {b"cf1:x": b"a"}),
        (b"b", {b"cf1:x": b"newer"}),
    ]
    assert scan_list(old, row_start=b"b", timestamp=900, columns=[b"cf1:x"]) == [
        (b"b", {b"cf1:x": b"b"}),
        (b"c", {b"cf1:x": b"c"}),
    ]
    assert scan_list(old, row_start=b"a", row_stop=b"b", timestamp=501, columns=[b"cf2:y"]) == [
        (b"a", {b"cf2:y": b"a"})
    ]
