"""Table.batch: buffered mutations sent with mutateRows/mutateRowsTs, context
manager and transaction behaviour, automatic sends, batch-wide timestamp and WAL."""

import pytest

from compat_support import scan_keys


class _Boom(Exception):
    pass


def test_batch_mutations_are_invisible_until_send(table):
    batch = table.batch()
    batch.put(b"r1", {b"cf1:a": b"1"})
    batch.put(b"r2", {b"cf1:a": b"2", b"cf2:b": b"3"})
    assert table.row(b"r1") == {}
    batch.send()
    assert table.rows([b"r1", b"r2"]) == [
        (b"r1", {b"cf1:a": b"1"}),
        (b"r2", {b"cf1:a": b"2", b"cf2:b": b"3"}),
    ]


def test_send_of_empty_batch_is_harmless(table):
    batch = table.batch()
    batch.send()
    batch.send()
    assert scan_keys(table) == []


def test_batch_is_reusable_after_send(table):
    batch = table.batch()
    batch.put(b"r1", {b"cf1:a": b"1"})
    batch.send()
    batch.put(b"r2", {b"cf1:a": b"2"})
    batch.send()
    assert scan_keys(table) == [b"r1", b"r2"]


def test_context_manager_sends_on_exit(table):
    with table.batch() as batch:
        batch.put(b"r1", {b"cf1:a": b"1"})
        batch.put(b"r2", {b"cf1:a": b"2"})
        batch.delete(b"r1", columns=[b"cf1:a"])
        assert table.row(b"r2") == {}
    assert table.row(b"r1") == {}
    assert table.row(b"r2") == {b"cf1:a": b"2"}


def test_batch_delete_whole_row_and_columns(table):
    table.put(b"r1", {b"cf1:a": b"1", b"cf2:b": b"2"})
    table.put(b"r2", {b"cf1:a": b"1", b"cf2:b": b"2"})
    with table.batch() as batch:
        batch.delete(b"r1")
        batch.delete(b"r2", columns=[b"cf2:b"])
    assert table.row(b"r1") == {}
    assert table.row(b"r2") == {b"cf1:a": b"1"}


def test_transaction_batch_sends_nothing_when_block_raises(table):
    with pytest.raises(_Boom):
        with table.batch(transaction=True) as batch:
            batch.put(b"r1", {b"cf1:a": b"1"})
            batch.put(b"r2", {b"cf1:a": b"2"})
            raise _Boom()
    assert table.rows([b"r1", b"r2"]) == []


def test_transaction_batch_sends_everything_when_block_succeeds(table):
    with table.batch(transaction=True) as batch:
        batch.put(b"r1", {b"cf1:a": b"1"})
        batch.put(b"r2", {b"cf1:a": b"2"})
    assert scan_keys(table) == [b"r1", b"r2"]


def test_non_transaction_batch_still_sends_when_block_raises(table):
    with pytest.raises(_Boom):
        with table.batch() as batch:
            batch.put(b"r1", {b"cf1:a": b"1"})
            raise _Boom()
    assert table.row(b"r1") == {b"cf1:a": b"1"}


def test_batch_size_sends_automatically_once_reached(table):
    with table.batch(batch_size=3) as batch:
        batch.put(b"r1", {b"cf1:a": b"1"})
        batch.put(b"r2", {b"cf1:a": b"2"})
        assert scan_keys(table) == []
        batch.put(b"r3", {b"cf1:a": b"3"})
        assert scan_keys(table) == [b"r1", b"r2", b"r3"]
        batch.put(b"r4", {b"cf1:a": b"4"})
        assert scan_keys(table) == [b"r1", b"r2", b"r3"]
    assert scan_keys(table) == [b"r1", b"r2", b"r3", b"r4"]


def test_batch_size_counts_columns_not_rows(table):
    with table.batch(batch_size=4) as batch:
        batch.put(b"r1", {b"cf1:a": b"1", b"cf1:b": b"2", b"cf1:c": b"3", b"cf1:d": b"4"})
        assert table.row(b"r1") == {b"cf1:a": b"1", b"cf1:b": b"2", b"cf1:c": b"3", b"cf1:d": b"4"}


def test_many_rows_through_auto_sending_batch(table):
    with table.batch(batch_size=100) as batch:
        for i in range(1000):
            batch.put(b"row-%04d" % i, {b"cf1:n": b"%d" % i})
    keys = scan_keys(table)
    assert keys == [b"row-%04d" % i for i in range(1000)]
    with table.batch(batch_size=64) as batch:
        for i in range(0, 1000, 2):
            batch.delete(b"row-%04d" % i)
    assert scan_keys(table) == [b"row-%04d" % i for i in range(1, 1000, 2)]


def test_batch_timestamp_applies_to_puts(table):
    with table.batch(timestamp=424242) as batch:
        batch.put(b"r1", {b"cf1:a": b"1", b"cf2:b": b"2"})
        batch.put(b"r2", {b"cf1:a": b"3"})
    assert table.row(b"r1", include_timestamp=True) == {
        b"cf1:a": (b"1", 424242),
        b"cf2:b": (b"2", 424242),
    }
    assert table.row(b"r2", include_timestamp=True) == {b"cf1:a": (b"3", 424242)}


def test_batch_timestamp_applies_to_deletes(table):
    for ts in (100, 200, 300):
        table.put(b"r", {b"cf1:a": b"v%d" % ts}, timestamp=ts)
    with table.batch(timestamp=200) as batch:
        batch.delete(b"r", columns=[b"cf1:a"])
    assert table.cells(b"r", b"cf1:a") == [b"v300"]


def test_batch_with_wal_disabled(table):
    with table.batch(wal=False) as batch:
        batch.put(b"r1", {b"cf1:a": b"1"})
        batch.put(b"r2", {b"cf1:a": b"2"}, wal=True)
        batch.delete(b"r1", columns=[b"cf1:zzz"], wal=False)
    assert table.rows([b"r1", b"r2"]) == [
        (b"r1", {b"cf1:a": b"1"}),
        (b"r2", {b"cf1:a": b"2"}),
    ]


def test_put_and_delete_of_same_column_in_one_batch_loses_the_put(table):
    # mutateRows applies every put of the call first and every delete after it,
    # and a delete without timestamp covers all versions up to "now".
    table.put(b"r", {b"cf1:other": b"kept"})
    with table.batch() as batch:
        batch.put(b"r", {b"cf1:a": b"new"})
        batch.delete(b"r", columns=[b"cf1:a"])
    assert table.row(b"r") == {b"cf1:other": b"kept"}


def test_batch_mutations_on_one_row_merge(table):
    with table.batch() as batch:
        batch.put(b"r", {b"cf1:a": b"1"})
        batch.put(b"r", {b"cf1:b": b"2"})
        batch.put(b"r", {b"cf2:c": b"3"})
    assert table.row(b"r") == {b"cf1:a": b"1", b"cf1:b": b"2", b"cf2:c": b"3"}
