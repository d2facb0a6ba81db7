"""increment / append as HBase's Thrift2 server answers them: 8-byte big-endian
counters, default amounts, returned cells, byte appends."""

import pytest
from thbase.hbase.ttypes import (
    TAppend,
    TColumnIncrement,
    TGet,
    TIncrement,
    TIOError,
    TPut,
)

from thbase_support import cell_values, col, cv, i64


def test_increment_missing_counter_starts_from_zero(service, table):
    result = service.increment(
        table, TIncrement(row=b"r", columns=[TColumnIncrement(family=b"cf1", qualifier=b"n", amount=5)])
    )
    assert result.row == b"r"
    assert cell_values(result) == [(b"cf1:n", i64(5))]
    stored = service.get(table, TGet(row=b"r", columns=[col(b"cf1", b"n")]))
    assert cell_values(stored) == [(b"cf1:n", i64(5))]


def test_increment_accumulates_and_accepts_negative_amounts(service, table):
    inc = lambda amount: service.increment(  # noqa: E731
        table,
        TIncrement(row=b"r", columns=[TColumnIncrement(family=b"cf1", qualifier=b"n", amount=amount)]),
    )
    inc(10)
    inc(32)
    result = inc(-50)
    assert cell_values(result) == [(b"cf1:n", i64(-8))]


def test_increment_amount_defaults_to_one(service, table):
    for _ in range(3):
        result = service.increment(
            table, TIncrement(row=b"r", columns=[TColumnIncrement(family=b"cf1", qualifier=b"n")])
        )
    assert cell_values(result) == [(b"cf1:n", i64(3))]


def test_increment_of_several_columns_returns_them_all(service, table):
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"b", i64(100))]))
    result = service.increment(
        table,
        TIncrement(
            row=b"r",
            columns=[
                TColumnIncrement(family=b"cf2", qualifier=b"c", amount=7),
                TColumnIncrement(family=b"cf1", qualifier=b"b", amount=1),
                TColumnIncrement(family=b"cf1", qualifier=b"a", amount=2),
            ],
        ),
    )
    assert cell_values(result) == [
        (b"cf1:a", i64(2)),
        (b"cf1:b", i64(101)),
        (b"cf2:c", i64(7)),
    ]


def test_increment_of_a_counter_set_by_put(service, table):
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"n", i64(2**40))]))
    result = service.increment(
        table, TIncrement(row=b"r", columns=[TColumnIncrement(family=b"cf1", qualifier=b"n", amount=1)])
    )
    assert cell_values(result) == [(b"cf1:n", i64(2**40 + 1))]


def test_increment_of_a_non_counter_value_is_an_io_error(service, table):
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"n", b"abc")]))
    with pytest.raises(TIOError):
        service.increment(
            table, TIncrement(row=b"r", columns=[TColumnIncrement(family=b"cf1", qualifier=b"n")])
        )
    assert cell_values(service.get(table, TGet(row=b"r"))) == [(b"cf1:n", b"abc")]


def test_increment_without_results_still_increments(service, table):
    result = service.increment(
        table,
        TIncrement(
            row=b"r",
            columns=[TColumnIncrement(family=b"cf1", qualifier=b"n", amount=4)],
            returnResults=False,
        ),
    )
    assert result.columnValues == []
    stored = service.get(table, TGet(row=b"r"))
    assert cell_values(stored) == [(b"cf1:n", i64(4))]


def test_append_to_existing_and_missing_columns(service, table):
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"s", b"ab")]))
    result = service.append(
        table,
        TAppend(row=b"r", columns=[cv(b"cf1", b"s", b"cd"), cv(b"cf1", b"t", b"new")]),
    )
    assert result.row == b"r"
    assert cell_values(result) == [(b"cf1:s", b"abcd"), (b"cf1:t", b"new")]
    again = service.append(table, TAppend(row=b"r", columns=[cv(b"cf1", b"s", b"\x00\xff")]))
    assert cell_values(again) == [(b"cf1:s", b"abcd\x00\xff")]
    stored = service.get(table, TGet(row=b"r"))
    assert cell_values(stored) == [(b"cf1:s", b"abcd\x00\xff"), (b"cf1:t", b"new")]


def test_append_without_results_still_appends(service, table):
    result = service.append(
        table, TAppend(row=b"r", columns=[cv(b"cf1", b"s", b"xy")], returnResults=False)
    )
    assert result.columnValues == []
    assert cell_values(service.get(table, TGet(row=b"r"))) == [(b"cf1:s", b"xy")]
