"""Atomic counters: counter_get/inc/dec/set over 8-byte big-endian signed cells."""

import threading
import time

import pytest

from compat_support import HBaseIOError, i64

ROW = b"counters"
COL = b"cf1:hits"


def test_counter_get_of_missing_counter_is_zero(table):
    assert table.counter_get(ROW, COL) == 0
    # Whether the zero read wrote a cell differs across HBase releases; either
    # way the next increment starts from zero.
    assert table.counter_inc(ROW, COL, 5) == 5


def test_counter_inc_returns_each_new_value(table):
    assert table.counter_inc(ROW, COL) == 1
    assert table.counter_inc(ROW, COL) == 2
    assert table.counter_inc(ROW, COL, 10) == 12
    assert table.counter_inc(ROW, COL, -2) == 10
    assert table.counter_get(ROW, COL) == 10


def test_counter_dec_returns_each_new_value(table):
    assert table.counter_dec(ROW, COL) == -1
    assert table.counter_dec(ROW, COL, 4) == -5
    assert table.counter_dec(ROW, COL, -7) == 2
    assert table.counter_get(ROW, COL) == 2


def test_counter_set_then_get_and_inc(table):
    table.counter_set(ROW, COL, 3)
    assert table.counter_get(ROW, COL) == 3
    assert table.counter_inc(ROW, COL, 5) == 8
    assert table.counter_get(ROW, COL) == 8


def test_counter_set_replaces_an_incremented_counter(table):
    assert table.counter_inc(ROW, COL, 5) == 5
    assert table.counter_inc(ROW, COL, 5) == 10
    # An increment stamps its cell max(now, previous + 1), so a burst of
    # increments can run a few milliseconds ahead of the clock; a put at server
    # time only shadows them once the clock has caught up.
    time.sleep(0.05)
    table.counter_set(ROW, COL, 0)
    assert table.counter_get(ROW, COL) == 0
    assert table.counter_inc(ROW, COL) == 1


def test_counter_cell_is_eight_byte_big_endian(table):
    assert table.counter_inc(ROW, COL, 258) == 258
    assert table.row(ROW) == {COL: b"\x00\x00\x00\x00\x00\x00\x01\x02"}
    table.counter_set(ROW, b"cf2:minus", -1)
    assert table.row(ROW, columns=[b"cf2"]) == {b"cf2:minus": b"\xff" * 8}
    assert table.counter_inc(ROW, b"cf2:minus") == 0
    assert table.row(ROW, columns=[b"cf2"]) == {b"cf2:minus": i64(0)}


def test_counter_written_by_put_is_readable_as_counter(table):
    table.put(ROW, {COL: i64(2**40)})
    assert table.counter_get(ROW, COL) == 2**40
    assert table.counter_inc(ROW, COL, 2**40) == 2**41


def test_negative_and_large_counter_values(table):
    table.counter_set(ROW, COL, -(2**62))
    assert table.counter_get(ROW, COL) == -(2**62)
    assert table.counter_dec(ROW, COL, 2**62) == -(2**63)
    table.counter_set(ROW, b"cf1:max", 2**63 - 1)
    assert table.counter_get(ROW, b"cf1:max") == 2**63 - 1


def test_counters_in_several_columns_and_rows_are_independent(table):
    assert table.counter_inc(b"r1", b"cf1:a", 1) == 1
    assert table.counter_inc(b"r1", b"cf2:a", 2) == 2
    assert table.counter_inc(b"r2", b"cf1:a", 3) == 3
    assert [table.counter_get(b"r1", b"cf1:a"), table.counter_get(b"r1", b"cf2:a"),
            table.counter_get(b"r2", b"cf1:a")] == [1, 2, 3]


def test_counter_on_bare_family_uses_empty_qualifier(table):
    assert table.counter_inc(ROW, b"cf1", 3) == 3
    assert table.row(ROW) == {b"cf1:": i64(3)}
    assert table.counter_get(ROW, b"cf1:") == 3


def test_counter_over_non_eight_byte_cell_raises_io_error(table):
    table.put(ROW, {COL: b"abc"})
    with pytest.raises(HBaseIOError):
        table.counter_inc(ROW, COL)
    with pytest.raises(HBaseIOError):
        table.counter_get(ROW, COL)
    assert table.row(ROW) == {COL: b"abc"}
    assert table.counter_inc(ROW, b"cf1:fresh") == 1


def test_counter_in_unknown_family_raises_io_error(table):
    with pytest.raises(HBaseIOError):
        table.counter_inc(ROW, b"nofamily:c")
    assert table.counter_inc(ROW, COL) == 1


def test_concurrent_increments_from_many_connections_are_atomic(connection_factory, table):
    workers, per_worker = 4, 25
    tables = [connection_factory().table(table.name) for _ in range(workers)]
    failures = []

    def bump(worker_table):
        try:
            for _ in range(per_worker):
                worker_table.counter_inc(ROW, COL)
        except Exception as exc:  # recorded and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=bump, args=(t,)) for t in tables]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    assert table.counter_get(ROW, COL) == workers * per_worker
