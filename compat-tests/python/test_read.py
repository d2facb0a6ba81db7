"""Point reads: Table.row, Table.rows and Table.cells, with column selectors,
version limits and timestamp bounds (reads see versions strictly below `timestamp`)."""

import time

import pytest


@pytest.fixture
def person(table):
    """One row spread over two families, with two versions of cf1:name."""
    table.put(b"p1", {b"cf1:name": b"old-name"}, timestamp=1000)
    table.put(b"p1", {b"cf1:name": b"new-name"}, timestamp=3000)
    table.put(b"p1", {b"cf1:age": b"42", b"cf2:city": b"Oslo"}, timestamp=2000)
    table.put(b"p1", {b"cf1:": b"empty-qualifier"}, timestamp=2000)
    return table


def test_row_of_missing_row_is_empty_dict(table):
    assert table.row(b"no-such-row") == {}


def test_row_returns_latest_value_of_every_column(person):
    assert person.row(b"p1") == {
        b"cf1:name": b"new-name",
        b"cf1:age": b"42",
        b"cf1:": b"empty-qualifier",
        b"cf2:city": b"Oslo",
    }


def test_row_with_include_timestamp_returns_value_timestamp_pairs(person):
    assert person.row(b"p1", include_timestamp=True) == {
        b"cf1:name": (b"new-name", 3000),
        b"cf1:age": (b"42", 2000),
        b"cf1:": (b"empty-qualifier", 2000),
        b"cf2:city": (b"Oslo", 2000),
    }


def test_bare_family_selects_whole_family(person):
    assert person.row(b"p1", columns=[b"cf1"]) == {
        b"cf1:name": b"new-name",
        b"cf1:age": b"42",
        b"cf1:": b"empty-qualifier",
    }


def test_family_with_colon_selects_only_empty_qualifier(person):
    assert person.row(b"p1", columns=[b"cf1:"]) == {b"cf1:": b"empty-qualifier"}


def test_row_with_explicit_columns_across_families(person):
    assert person.row(b"p1", columns=[b"cf1:age", b"cf2:city"]) == {
        b"cf1:age": b"42",
        b"cf2:city": b"Oslo",
    }


def test_row_mixing_family_and_column_selectors(person):
    assert person.row(b"p1", columns=[b"cf2", b"cf1:name"]) == {
        b"cf1:name": b"new-name",
        b"cf2:city": b"Oslo",
    }


def test_row_with_absent_columns_is_empty(person):
    assert person.row(b"p1", columns=[b"cf1:nope", b"cf3"]) == {}


def test_row_timestamp_is_an_exclusive_upper_bound(table):
    table.put(b"r", {b"cf1:c": b"at-1234"}, timestamp=1234)
    assert table.row(b"r", timestamp=2345) == {b"cf1:c": b"at-1234"}
    assert table.row(b"r", timestamp=1235) == {b"cf1:c": b"at-1234"}
    assert table.row(b"r", timestamp=1234) == {}
    assert table.row(b"r", timestamp=123) == {}


def test_row_timestamp_picks_newest_version_below_bound(person):
    assert person.row(b"p1", timestamp=2500) == {
        b"cf1:name": b"old-name",
        b"cf1:age": b"42",
        b"cf1:": b"empty-qualifier",
        b"cf2:city": b"Oslo",
    }
    assert person.row(b"p1", timestamp=3000, include_timestamp=True)[b"cf1:name"] == (
        b"old-name",
        1000,
    )
    assert person.row(b"p1", timestamp=3001)[b"cf1:name"] == b"new-name"
    assert person.row(b"p1", timestamp=1001) == {b"cf1:name": b"old-name"}


def test_row_timestamp_with_columns(person):
    assert person.row(b"p1", columns=[b"cf1:name", b"cf2"], timestamp=2001) == {
        b"cf1:name": b"old-name",
        b"cf2:city": b"Oslo",
    }


def test_put_without_timestamp_gets_server_time_in_milliseconds(table):
    before = int(time.time() * 1000)
    table.put(b"r", {b"cf1:c": b"v"})
    after = int(time.time() * 1000)
    value, ts = table.row(b"r", include_timestamp=True)[b"cf1:c"]
    assert value == b"v"
    # Server and test share a clock in CI; allow generous skew for remote servers.
    assert before - 300_000 <= ts <= after + 300_000


def test_rows_keeps_request_order_and_omits_missing_rows(table):
    for key in (b"a", b"b", b"c"):
        table.put(key, {b"cf1:k": key})
    result = table.rows([b"c", b"missing", b"a", b"b"])
    assert result == [
        (b"c", {b"cf1:k": b"c"}),
        (b"a", {b"cf1:k": b"a"}),
        (b"b", {b"cf1:k": b"b"}),
    ]


def test_rows_of_only_missing_rows_is_empty_list(table):
    assert table.rows([b"x", b"y"]) == []


def test_rows_returns_duplicate_keys_once_per_request(table):
    table.put(b"a", {b"cf1:k": b"1"})
    assert table.rows([b"a", b"a"]) == [(b"a", {b"cf1:k": b"1"}), (b"a", {b"cf1:k": b"1"})]


def test_rows_with_columns(person):
    person.put(b"p2", {b"cf1:name": b"bob", b"cf2:city": b"Rome"})
    assert person.rows([b"p1", b"p2"], columns=[b"cf2:city"]) == [
        (b"p1", {b"cf2:city": b"Oslo"}),
        (b"p2", {b"cf2:city": b"Rome"}),
    ]


def test_rows_with_timestamp_and_no_columns(table):
    for key in (b"r1", b"r2"):
        table.put(key, {b"cf1:c": b"old", b"cf2:d": b"old-d"}, timestamp=4000)
        table.put(key, {b"cf1:c": b"new"}, timestamp=6000)
    table.put(b"r3", {b"cf1:c": b"late"}, timestamp=7000)
    assert table.rows([b"r1", b"r2", b"r3"], timestamp=5000) == [
        (b"r1", {b"cf1:c": b"old", b"cf2:d": b"old-d"}),
        (b"r2", {b"cf1:c": b"old", b"cf2:d": b"old-d"}),
    ]


def test_rows_with_timestamp_columns_and_include_timestamp(table):
    table.put(b"r1", {b"cf1:c": b"old"}, timestamp=4000)
    table.put(b"r1", {b"cf1:c": b"new"}, timestamp=6000)
    assert table.rows([b"r1"], columns=[b"cf1:c"], timestamp=6001, include_timestamp=True) == [
        (b"r1", {b"cf1:c": (b"new", 6000)})
    ]


def test_cells_returns_versions_newest_first(table):
    for ts in (300, 100, 200):
        table.put(b"r", {b"cf1:c": b"v%d" % ts}, timestamp=ts)
    assert table.cells(b"r", b"cf1:c") == [b"v300", b"v200", b"v100"]
    assert table.cells(b"r", b"cf1:c", include_timestamp=True) == [
        (b"v300", 300),
        (b"v200", 200),
        (b"v100", 100),
    ]


def test_cells_of_missing_cell_is_empty_list(table):
    assert table.cells(b"nope", b"cf1:c") == []


def test_cells_versions_limit_returns_newest(table):
    for ts in range(1, 11):
        table.put(b"r", {b"cf1:c": b"v%02d" % ts}, timestamp=ts * 100)
    assert table.cells(b"r", b"cf1:c", versions=5, include_timestamp=True) == [
        (b"v10", 1000),
        (b"v09", 900),
        (b"v08", 800),
        (b"v07", 700),
        (b"v06", 600),
    ]
    assert table.cells(b"r", b"cf1:c", versions=1) == [b"v10"]
    assert len(table.cells(b"r", b"cf1:c")) == 10


def test_cells_timestamp_is_an_exclusive_upper_bound(table):
    for ts in (1234, 2000, 3000):
        table.put(b"r", {b"cf1:c": b"v%d" % ts}, timestamp=ts)
    assert table.cells(b"r", b"cf1:c", timestamp=3000) == [b"v2000", b"v1234"]
    assert table.cells(b"r", b"cf1:c", timestamp=2001, versions=1, include_timestamp=True) == [
        (b"v2000", 2000)
    ]
    assert table.cells(b"r", b"cf1:c", timestamp=1234) == []


def test_cells_of_bare_family_lists_each_column_newest_first(table):
    table.put(b"r", {b"cf1:a": b"a1"}, timestamp=1)
    table.put(b"r", {b"cf1:a": b"a2"}, timestamp=2)
    table.put(b"r", {b"cf1:b": b"b1"}, timestamp=1)
    table.put(b"r", {b"cf2:z": b"other-family"}, timestamp=1)
    assert table.cells(b"r", b"cf1", include_timestamp=True) == [
        (b"a2", 2),
        (b"a1", 1),
        (b"b1", 1),
    ]


def test_family_max_versions_caps_stored_versions(table):
    for ts in range(1, 13):
        table.put(b"r", {b"cf1:c": b"%d" % ts, b"cf2:c": b"%d" % ts, b"cf3:c": b"%d" % ts},
                  timestamp=ts)
    assert table.cells(b"r", b"cf1:c") == [b"%d" % ts for ts in range(12, 2, -1)]
    assert table.cells(b"r", b"cf2:c") == [b"12", b"11", b"10"]
    assert table.cells(b"r", b"cf3:c") == [b"12"]


def test_same_timestamp_put_replaces_the_version(table):
    table.put(b"r", {b"cf1:c": b"first"}, timestamp=500)
    table.put(b"r", {b"cf1:c": b"second"}, timestamp=500)
    assert table.cells(b"r", b"cf1:c", include_timestamp=True) == [(b"second", 500)]


def test_older_timestamp_put_does_not_shadow_newer_value(table):
    table.put(b"r", {b"cf1:c": b"newer"}, timestamp=900)
    table.put(b"r", {b"cf1:c": b"older"}, timestamp=100)
    assert table.row(b"r") == {b"cf1:c": b"newer"}
    assert table.cells(b"r", b"cf1:c") == [b"newer", b"older"]
