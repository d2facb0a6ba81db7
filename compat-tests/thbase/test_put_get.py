"""put / putMultiple / get / getMultiple / exists / existsAll as HBase's Thrift2
server answers them: cell order, versions, timestamps, time ranges."""

import time

from thbase.hbase.ttypes import TGet, TPut, TTimeRange

from thbase_support import (
    PUT_TYPE,
    cell_values,
    cells,
    col,
    cv,
    is_empty_result,
    timestamps,
)


def put_versions(service, table, row, fam, qualifier, stamps, prefix=b"v"):
    """One put per timestamp, value = prefix + str(ts)."""
    for ts in stamps:
        service.put(
            table,
            TPut(row=row, columnValues=[cv(fam, qualifier, prefix + str(ts).encode(), ts)]),
        )


def test_put_then_get_returns_row_and_cells(service, table):
    service.put(table, TPut(row=b"r1", columnValues=[cv(b"cf1", b"a", b"va", 1000)]))
    result = service.get(table, TGet(row=b"r1"))
    assert result.row == b"r1"
    assert cells(result) == [(b"cf1", b"a", b"va", 1000)]
    only = result.columnValues[0]
    assert only.type == PUT_TYPE
    assert only.tags is None
    assert result.stale is False
    assert result.partial is False


def test_get_multiple_columns_sorted_by_family_then_qualifier(service, table):
    service.put(
        table,
        TPut(
            row=b"r1",
            columnValues=[
                cv(b"cf2", b"z", b"2z"),
                cv(b"cf1", b"b", b"1b"),
                cv(b"cf2", b"a", b"2a"),
                cv(b"cf1", b"a", b"1a"),
            ],
        ),
    )
    result = service.get(table, TGet(row=b"r1"))
    assert cell_values(result) == [
        (b"cf1:a", b"1a"),
        (b"cf1:b", b"1b"),
        (b"cf2:a", b"2a"),
        (b"cf2:z", b"2z"),
    ]


def test_get_selected_columns_and_families(service, table):
    service.put(
        table,
        TPut(
            row=b"r1",
            columnValues=[
                cv(b"cf1", b"a", b"1a"),
                cv(b"cf1", b"b", b"1b"),
                cv(b"cf2", b"a", b"2a"),
                cv(b"cf3", b"x", b"3x"),
            ],
        ),
    )
    one = service.get(table, TGet(row=b"r1", columns=[col(b"cf1", b"b")]))
    assert cell_values(one) == [(b"cf1:b", b"1b")]
    mixed = service.get(
        table, TGet(row=b"r1", columns=[col(b"cf2"), col(b"cf1", b"a")])
    )
    assert cell_values(mixed) == [(b"cf1:a", b"1a"), (b"cf2:a", b"2a")]
    absent = service.get(table, TGet(row=b"r1", columns=[col(b"cf1", b"nope")]))
    assert is_empty_result(absent)


def test_get_missing_row_is_an_empty_result(service, table):
    result = service.get(table, TGet(row=b"no-such-row"))
    assert is_empty_result(result)


def test_put_cell_timestamps_and_put_timestamp(service, table):
    service.put(
        table,
        TPut(
            row=b"r1",
            timestamp=5000,
            columnValues=[cv(b"cf1", b"own", b"x", 6000), cv(b"cf1", b"inherited", b"y")],
        ),
    )
    result = service.get(table, TGet(row=b"r1"))
    assert cells(result) == [
        (b"cf1", b"inherited", b"y", 5000),
        (b"cf1", b"own", b"x", 6000),
    ]


def test_put_without_timestamps_uses_server_time_in_milliseconds(service, table):
    before = int(time.time() * 1000)
    service.put(table, TPut(row=b"r1", columnValues=[cv(b"cf1", b"a", b"now")]))
    after = int(time.time() * 1000)
    (ts,) = timestamps(service.get(table, TGet(row=b"r1")), b"cf1", b"a")
    # The server's clock, not ours: allow a minute of skew either way.
    assert before - 60000 <= ts <= after + 60000


def test_get_returns_one_version_unless_max_versions(service, table):
    put_versions(service, table, b"r1", b"cf1", b"a", [1000, 2000, 3000])
    latest = service.get(table, TGet(row=b"r1"))
    assert cells(latest) == [(b"cf1", b"a", b"v3000", 3000)]
    two = service.get(table, TGet(row=b"r1", maxVersions=2))
    assert timestamps(two, b"cf1", b"a") == [3000, 2000]
    every = service.get(table, TGet(row=b"r1", maxVersions=10))
    assert cells(every) == [
        (b"cf1", b"a", b"v3000", 3000),
        (b"cf1", b"a", b"v2000", 2000),
        (b"cf1", b"a", b"v1000", 1000),
    ]


def test_family_max_versions_caps_what_a_get_returns(service, table):
    # cf2 keeps 3 versions, cf3 one (the HBase 2 default).
    put_versions(service, table, b"r1", b"cf2", b"a", [1, 2, 3, 4, 5])
    put_versions(service, table, b"r1", b"cf3", b"a", [1, 2, 3])
    result = service.get(table, TGet(row=b"r1", maxVersions=10))
    assert timestamps(result, b"cf2", b"a") == [5, 4, 3]
    assert timestamps(result, b"cf3", b"a") == [3]


def test_time_range_is_half_open(service, table):
    put_versions(service, table, b"r1", b"cf1", b"a", [1000, 2000, 3000])
    result = service.get(
        table,
        TGet(row=b"r1", maxVersions=10, timeRange=TTimeRange(minStamp=1000, maxStamp=3000)),
    )
    assert timestamps(result, b"cf1", b"a") == [2000, 1000]
    latest_in_range = service.get(
        table, TGet(row=b"r1", timeRange=TTimeRange(minStamp=0, maxStamp=2500))
    )
    assert cells(latest_in_range) == [(b"cf1", b"a", b"v2000", 2000)]
    empty = service.get(
        table, TGet(row=b"r1", timeRange=TTimeRange(minStamp=3001, maxStamp=9000))
    )
    assert is_empty_result(empty)


def test_get_timestamp_is_an_exact_match(service, table):
    put_versions(service, table, b"r1", b"cf1", b"a", [1000, 2000, 3000])
    exact = service.get(table, TGet(row=b"r1", timestamp=2000, maxVersions=10))
    assert cells(exact) == [(b"cf1", b"a", b"v2000", 2000)]
    between = service.get(table, TGet(row=b"r1", timestamp=2500, maxVersions=10))
    assert is_empty_result(between)


def test_get_timestamp_wins_over_time_range(service, table):
    put_versions(service, table, b"r1", b"cf1", b"a", [1000, 2000, 3000])
    result = service.get(
        table,
        TGet(
            row=b"r1",
            timestamp=1000,
            timeRange=TTimeRange(minStamp=2000, maxStamp=4000),
            maxVersions=10,
        ),
    )
    assert cells(result) == [(b"cf1", b"a", b"v1000", 1000)]


def test_get_filter_string_applies_to_the_row(service, table):
    service.put(
        table,
        TPut(
            row=b"r1",
            columnValues=[cv(b"cf1", b"alpha", b"1"), cv(b"cf1", b"beta", b"2")],
        ),
    )
    result = service.get(
        table, TGet(row=b"r1", filterString=b"ColumnPrefixFilter('al')")
    )
    assert cell_values(result) == [(b"cf1:alpha", b"1")]


def test_put_multiple_then_get_multiple_keeps_positions(service, table):
    service.putMultiple(
        table,
        [
            TPut(row=b"r1", columnValues=[cv(b"cf1", b"a", b"one")]),
            TPut(row=b"r2", columnValues=[cv(b"cf1", b"a", b"two"), cv(b"cf2", b"b", b"2b")]),
        ],
    )
    results = service.getMultiple(
        table, [TGet(row=b"r2"), TGet(row=b"missing"), TGet(row=b"r1")]
    )
    assert len(results) == 3
    assert results[0].row == b"r2"
    assert cell_values(results[0]) == [(b"cf1:a", b"two"), (b"cf2:b", b"2b")]
    assert is_empty_result(results[1])
    assert results[2].row == b"r1"
    assert cell_values(results[2]) == [(b"cf1:a", b"one")]


def test_get_multiple_of_nothing_is_an_empty_list(service, table):
    assert service.getMultiple(table, []) == []


def test_exists_and_exists_all(service, table):
    service.put(table, TPut(row=b"r1", columnValues=[cv(b"cf1", b"a", b"x")]))
    assert service.exists(table, TGet(row=b"r1")) is True
    assert service.exists(table, TGet(row=b"r2")) is False
    assert service.exists(table, TGet(row=b"r1", columns=[col(b"cf1", b"a")])) is True
    assert service.exists(table, TGet(row=b"r1", columns=[col(b"cf2")])) is False
    assert service.existsAll(
        table, [TGet(row=b"r1"), TGet(row=b"r2"), TGet(row=b"r1", columns=[col(b"cf1")])]
    ) == [True, False, True]


def test_binary_keys_and_values_round_trip(service, table):
    row = bytes(range(256))
    qualifier = b"\x00q\xff:"
    value = b"\x00\x01\x80\xff" * 64
    service.put(table, TPut(row=row, columnValues=[cv(b"cf1", qualifier, value)]))
    result = service.get(table, TGet(row=row))
    assert result.row == row
    assert cell_values(result) == [(b"cf1:" + qualifier, value)]


def test_empty_qualifier_and_empty_value(service, table):
    service.put(
        table,
        TPut(row=b"r1", columnValues=[cv(b"cf1", b"", b"empty-q"), cv(b"cf1", b"q", b"")]),
    )
    result = service.get(table, TGet(row=b"r1"))
    assert cell_values(result) == [(b"cf1:", b"empty-q"), (b"cf1:q", b"")]
    # A family-only TColumn reads the whole family, not just the empty qualifier.
    fam = service.get(table, TGet(row=b"r1", columns=[col(b"cf1")]))
    assert len(fam.columnValues) == 2


def test_store_limit_and_offset_count_cells_per_family(service, table):
    service.put(
        table,
        TPut(
            row=b"r",
            columnValues=[
                cv(b"cf1", b"a", b"1a"),
                cv(b"cf1", b"b", b"1b"),
                cv(b"cf1", b"c", b"1c"),
                cv(b"cf2", b"x", b"2x"),
                cv(b"cf2", b"y", b"2y"),
            ],
        ),
    )
    limited = service.get(table, TGet(row=b"r", storeLimit=2))
    assert [k for k, _ in cell_values(limited)] == [b"cf1:a", b"cf1:b", b"cf2:x", b"cf2:y"]
    offset = service.get(table, TGet(row=b"r", storeOffset=1))
    assert [k for k, _ in cell_values(offset)] == [b"cf1:b", b"cf1:c", b"cf2:y"]
    window = service.get(table, TGet(row=b"r", storeLimit=1, storeOffset=1))
    assert [k for k, _ in cell_values(window)] == [b"cf1:b", b"cf2:y"]


def test_large_values_round_trip(service, table):
    big = bytes(range(256)) * 2048  # 512 KiB
    service.put(table, TPut(row=b"big", columnValues=[cv(b"cf1", b"blob", big)]))
    result = service.get(table, TGet(row=b"big"))
    assert cell_values(result) == [(b"cf1:blob", big)]


def test_wide_row_round_trips(service, table):
    values = [cv(b"cf1", b"q%04d" % i, b"v%d" % i) for i in range(1000)]
    service.put(table, TPut(row=b"wide", columnValues=values))
    result = service.get(table, TGet(row=b"wide"))
    assert cell_values(result) == [(b"cf1:q%04d" % i, b"v%d" % i) for i in range(1000)]
