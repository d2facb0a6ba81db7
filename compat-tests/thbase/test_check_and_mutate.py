"""checkAndPut / checkAndDelete / checkAndMutate / mutateRow as HBase's Thrift2
server answers them: equality checks, absence checks (checkAndPut/checkAndDelete
with the value unset), compare operators (provided value on the left) and atomic
row mutations."""

import pytest
from thbase.hbase.ttypes import (
    TCompareOp,
    TDelete,
    TGet,
    TIOError,
    TMutation,
    TPut,
    TRowMutations,
)

from thbase_support import cell_values, col, cv, is_empty_result


def put_one(service, table, row, fam, qualifier, value):
    service.put(table, TPut(row=row, columnValues=[cv(fam, qualifier, value)]))


def row_values(service, table, row=b"r"):
    return cell_values(service.get(table, TGet(row=row)))


def test_check_and_put_applies_when_the_value_matches(service, table):
    put_one(service, table, b"r", b"cf1", b"a", b"v1")
    applied = service.checkAndPut(
        table, b"r", b"cf1", b"a", b"v1", TPut(row=b"r", columnValues=[cv(b"cf1", b"b", b"new")])
    )
    assert applied is True
    assert row_values(service, table) == [(b"cf1:a", b"v1"), (b"cf1:b", b"new")]


def test_check_and_put_refuses_when_the_value_differs(service, table):
    put_one(service, table, b"r", b"cf1", b"a", b"v1")
    applied = service.checkAndPut(
        table, b"r", b"cf1", b"a", b"other",
        TPut(row=b"r", columnValues=[cv(b"cf1", b"b", b"new")]),
    )
    assert applied is False
    assert row_values(service, table) == [(b"cf1:a", b"v1")]


def test_check_and_put_refuses_when_the_checked_column_is_missing(service, table):
    applied = service.checkAndPut(
        table, b"r", b"cf1", b"a", b"v1", TPut(row=b"r", columnValues=[cv(b"cf1", b"b", b"x")])
    )
    assert applied is False
    assert is_empty_result(service.get(table, TGet(row=b"r")))


def test_check_and_put_without_value_checks_absence(service, table):
    first = service.checkAndPut(
        table, b"r", b"cf1", b"a", None, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"1st")])
    )
    assert first is True
    second = service.checkAndPut(
        table, b"r", b"cf1", b"a", None, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"2nd")])
    )
    assert second is False
    assert row_values(service, table) == [(b"cf1:a", b"1st")]


def test_check_and_put_can_overwrite_the_checked_column(service, table):
    put_one(service, table, b"r", b"cf1", b"n", b"1")
    assert service.checkAndPut(
        table, b"r", b"cf1", b"n", b"1", TPut(row=b"r", columnValues=[cv(b"cf1", b"n", b"2")])
    ) is True
    assert service.checkAndPut(
        table, b"r", b"cf1", b"n", b"1", TPut(row=b"r", columnValues=[cv(b"cf1", b"n", b"3")])
    ) is False
    assert row_values(service, table) == [(b"cf1:n", b"2")]


def test_check_and_put_with_a_put_for_another_row_is_an_io_error(service, table):
    put_one(service, table, b"r", b"cf1", b"a", b"v1")
    with pytest.raises(TIOError):
        service.checkAndPut(
            table, b"r", b"cf1", b"a", b"v1",
            TPut(row=b"elsewhere", columnValues=[cv(b"cf1", b"b", b"x")]),
        )
    assert is_empty_result(service.get(table, TGet(row=b"elsewhere")))


def test_check_and_delete_applies_when_the_value_matches(service, table):
    service.put(
        table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"v1"), cv(b"cf1", b"b", b"x")])
    )
    assert service.checkAndDelete(
        table, b"r", b"cf1", b"a", b"v1", TDelete(row=b"r", columns=[col(b"cf1", b"b")])
    ) is True
    assert row_values(service, table) == [(b"cf1:a", b"v1")]


def test_check_and_delete_refuses_when_the_value_differs(service, table):
    service.put(
        table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"v1"), cv(b"cf1", b"b", b"x")])
    )
    assert service.checkAndDelete(
        table, b"r", b"cf1", b"a", b"nope", TDelete(row=b"r")
    ) is False
    assert row_values(service, table) == [(b"cf1:a", b"v1"), (b"cf1:b", b"x")]


def test_check_and_delete_without_value_checks_absence(service, table):
    put_one(service, table, b"r1", b"cf1", b"b", b"x")
    # cf1:a is absent: the delete goes ahead.
    assert service.checkAndDelete(
        table, b"r1", b"cf1", b"a", None, TDelete(row=b"r1", columns=[col(b"cf1", b"b")])
    ) is True
    assert is_empty_result(service.get(table, TGet(row=b"r1")))
    # cf1:a is present: it does not. (Another row: a put right after a delete of the
    # same column could share its millisecond and stay masked, in HBase too.)
    service.put(
        table, TPut(row=b"r2", columnValues=[cv(b"cf1", b"a", b"here"), cv(b"cf1", b"b", b"y")])
    )
    assert service.checkAndDelete(
        table, b"r2", b"cf1", b"a", None, TDelete(row=b"r2")
    ) is False
    assert row_values(service, table, b"r2") == [(b"cf1:a", b"here"), (b"cf1:b", b"y")]


def test_empty_check_value_also_matches_an_empty_stored_value(service, table):
    # HBase treats a null and an empty expected value alike: the check passes when
    # the column is absent or holds an empty value.
    put_one(service, table, b"r", b"cf1", b"e", b"")
    put_one(service, table, b"r", b"cf1", b"full", b"x")
    assert service.checkAndPut(
        table, b"r", b"cf1", b"e", None, TPut(row=b"r", columnValues=[cv(b"cf1", b"p1", b"1")])
    ) is True
    assert service.checkAndPut(
        table, b"r", b"cf1", b"absent", b"", TPut(row=b"r", columnValues=[cv(b"cf1", b"p2", b"2")])
    ) is True
    assert service.checkAndPut(
        table, b"r", b"cf1", b"full", b"", TPut(row=b"r", columnValues=[cv(b"cf1", b"p3", b"3")])
    ) is False
    assert row_values(service, table) == [
        (b"cf1:e", b""),
        (b"cf1:full", b"x"),
        (b"cf1:p1", b"1"),
        (b"cf1:p2", b"2"),
    ]

def mutations(row, put_values=(), delete_columns=()):
    out = []
    if put_values:
        out.append(TMutation(put=TPut(row=row, columnValues=list(put_values))))
    if delete_columns:
        out.append(TMutation(deleteSingle=TDelete(row=row, columns=list(delete_columns))))
    return TRowMutations(row=row, mutations=out)


def test_mutate_row_applies_puts_and_deletes_together(service, table):
    service.put(
        table, TPut(row=b"r", columnValues=[cv(b"cf1", b"old", b"x"), cv(b"cf2", b"keep", b"k")])
    )
    service.mutateRow(
        table,
        mutations(b"r", put_values=[cv(b"cf1", b"new", b"n")], delete_columns=[col(b"cf1", b"old")]),
    )
    assert row_values(service, table) == [(b"cf1:new", b"n"), (b"cf2:keep", b"k")]


def test_mutate_row_with_a_mutation_for_another_row_is_an_io_error(service, table):
    bad = TRowMutations(
        row=b"r",
        mutations=[
            TMutation(put=TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"1")])),
            TMutation(put=TPut(row=b"other", columnValues=[cv(b"cf1", b"a", b"2")])),
        ],
    )
    with pytest.raises(TIOError):
        service.mutateRow(table, bad)
    # Atomic: nothing of it was applied.
    assert is_empty_result(service.get(table, TGet(row=b"r")))
    assert is_empty_result(service.get(table, TGet(row=b"other")))


@pytest.mark.parametrize(
    "op, provided, applies",
    [
        (TCompareOp.EQUAL, b"m", True),
        (TCompareOp.EQUAL, b"n", False),
        (TCompareOp.NOT_EQUAL, b"n", True),
        # The provided value is on the left: GREATER passes when provided > stored.
        (TCompareOp.GREATER, b"z", True),
        (TCompareOp.GREATER, b"a", False),
        (TCompareOp.LESS, b"a", True),
        (TCompareOp.LESS, b"z", False),
        (TCompareOp.GREATER_OR_EQUAL, b"m", True),
        (TCompareOp.LESS_OR_EQUAL, b"l", True),
    ],
)
def test_check_and_mutate_compares_provided_against_stored(service, table, op, provided, applies):
    put_one(service, table, b"r", b"cf1", b"c", b"m")
    result = service.checkAndMutate(
        table, b"r", b"cf1", b"c", op, provided,
        mutations(b"r", put_values=[cv(b"cf1", b"flag", b"set")]),
    )
    assert result is applies
    expected = [(b"cf1:c", b"m")] + ([(b"cf1:flag", b"set")] if applies else [])
    assert row_values(service, table) == expected

