"""Table.put and Table.delete: values, qualifiers, WAL flag and delete timestamps
(a delete at `timestamp` removes versions at or below it)."""

import pytest


def test_put_then_row_round_trip_over_families(table):
    table.put(b"r", {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3", b"cf3:d": b"4"})
    assert table.row(b"r") == {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3", b"cf3:d": b"4"}


def test_put_overwrites_latest_value_and_keeps_old_version(table):
    table.put(b"r", {b"cf1:a": b"first"}, timestamp=10)
    table.put(b"r", {b"cf1:a": b"second"}, timestamp=20)
    assert table.row(b"r") == {b"cf1:a": b"second"}
    assert table.cells(b"r", b"cf1:a") == [b"second", b"first"]


def test_put_with_timestamp_stores_that_timestamp(table):
    table.put(b"r", {b"cf1:a": b"x", b"cf2:b": b"y"}, timestamp=1369168852994)
    assert table.row(b"r", include_timestamp=True) == {
        b"cf1:a": (b"x", 1369168852994),
        b"cf2:b": (b"y", 1369168852994),
    }


def test_put_empty_value_is_stored(table):
    table.put(b"r", {b"cf1:empty": b""})
    assert table.row(b"r") == {b"cf1:empty": b""}


def test_put_empty_qualifier(table):
    table.put(b"r", {b"cf1:": b"no-qualifier"})
    assert table.row(b"r") == {b"cf1:": b"no-qualifier"}
    assert table.cells(b"r", b"cf1:") == [b"no-qualifier"]


def test_qualifier_may_contain_colons(table):
    table.put(b"r", {b"cf1:a:b:c": b"v"})
    assert table.row(b"r") == {b"cf1:a:b:c": b"v"}
    assert table.row(b"r", columns=[b"cf1:a:b:c"]) == {b"cf1:a:b:c": b"v"}
    assert table.row(b"r", columns=[b"cf1:a"]) == {}


def test_put_with_wal_disabled_is_readable(table):
    table.put(b"r", {b"cf1:a": b"fast"}, wal=False)
    assert table.row(b"r") == {b"cf1:a": b"fast"}


def test_delete_whole_row(table):
    table.put(b"r", {b"cf1:a": b"1", b"cf2:b": b"2", b"cf3:c": b"3"})
    table.put(b"keep", {b"cf1:a": b"1"})
    table.delete(b"r")
    assert table.row(b"r") == {}
    assert table.cells(b"r", b"cf1:a") == []
    assert table.row(b"keep") == {b"cf1:a": b"1"}


def test_delete_missing_row_is_not_an_error(table):
    table.delete(b"never-written")
    table.delete(b"never-written", columns=[b"cf1:x"])
    assert table.row(b"never-written") == {}


def test_delete_listed_columns_only(table):
    table.put(b"r", {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3"})
    table.delete(b"r", columns=[b"cf1:a", b"cf2:c"])
    assert table.row(b"r") == {b"cf1:b": b"2"}


def test_delete_column_removes_all_its_versions(table):
    for ts in (1, 2, 3):
        table.put(b"r", {b"cf1:a": b"v%d" % ts}, timestamp=ts)
    table.delete(b"r", columns=[b"cf1:a"])
    assert table.cells(b"r", b"cf1:a") == []


def test_delete_bare_family_removes_whole_family(table):
    table.put(b"r", {b"cf1:a": b"1", b"cf1:b": b"2", b"cf1:": b"3", b"cf2:c": b"4"})
    table.delete(b"r", columns=[b"cf1"])
    assert table.row(b"r") == {b"cf2:c": b"4"}


def test_delete_family_with_colon_removes_only_empty_qualifier(table):
    table.put(b"r", {b"cf1:a": b"1", b"cf1:": b"empty"})
    table.delete(b"r", columns=[b"cf1:"])
    assert table.row(b"r") == {b"cf1:a": b"1"}


def test_delete_column_with_timestamp_removes_versions_at_or_below(table):
    for ts in (10, 20, 30):
        table.put(b"r", {b"cf1:a": b"v%d" % ts}, timestamp=ts)
    table.delete(b"r", columns=[b"cf1:a"], timestamp=20)
    assert table.cells(b"r", b"cf1:a", include_timestamp=True) == [(b"v30", 30)]


def test_delete_row_with_timestamp_removes_older_cells_in_every_family(table):
    table.put(b"r", {b"cf1:a": b"a-old", b"cf2:b": b"b-old"}, timestamp=10)
    table.put(b"r", {b"cf1:a": b"a-new"}, timestamp=30)
    table.put(b"r", {b"cf3:c": b"c-at-20"}, timestamp=20)
    table.delete(b"r", timestamp=20)
    assert table.row(b"r", include_timestamp=True) == {b"cf1:a": (b"a-new", 30)}
    assert table.cells(b"r", b"cf1:a") == [b"a-new"]


def test_delete_with_old_timestamp_keeps_current_cells(table):
    table.put(b"r", {b"cf1:a": b"old"}, timestamp=1234)
    table.put(b"r", {b"cf1:a": b"current", b"cf1:b": b"b"})
    table.delete(b"r", columns=[b"cf1:a"], timestamp=2345)
    assert table.cells(b"r", b"cf1:a", versions=2) == [b"current"]
    table.delete(b"r", timestamp=12345)
    assert table.row(b"r") == {b"cf1:a": b"current", b"cf1:b": b"b"}


def test_delete_marker_masks_later_put_with_older_timestamp(table):
    table.put(b"r", {b"cf1:a": b"before"}, timestamp=80)
    table.delete(b"r", columns=[b"cf1:a"], timestamp=100)
    table.put(b"r", {b"cf1:a": b"masked"}, timestamp=50)
    assert table.row(b"r") == {}
    table.put(b"r", {b"cf1:a": b"visible"}, timestamp=150)
    assert table.cells(b"r", b"cf1:a") == [b"visible"]


def test_delete_with_wal_disabled(table):
    table.put(b"r", {b"cf1:a": b"1", b"cf1:b": b"2"})
    table.delete(b"r", columns=[b"cf1:a"], wal=False)
    assert table.row(b"r") == {b"cf1:b": b"2"}


@pytest.mark.parametrize("count", [1, 50, 1000])
def test_wide_row_round_trip(table, count):
    data = {b"cf1:col-%05d" % i: b"value-%d" % i for i in range(count)}
    table.put(b"wide", data)
    assert table.row(b"wide") == data
