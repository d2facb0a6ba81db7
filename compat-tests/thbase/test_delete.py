"""deleteSingle / deleteMultiple as HBase 2's Thrift2 server applies them: whole
rows, columns, families and single versions, by TDeleteType."""

import pytest
from thbase.hbase.ttypes import TDelete, TDeleteType, TGet, TPut

from thbase_support import cell_values, col, cv, is_empty_result, timestamps

STAMPS = (1000, 2000, 3000)


@pytest.fixture
def versioned(service, table):
    """Row b'r' with cf1:a, cf1:b and cf2:c at 1000, 2000 and 3000 (cf2 keeps 3)."""
    for ts in STAMPS:
        service.put(
            table,
            TPut(
                row=b"r",
                columnValues=[
                    cv(b"cf1", b"a", b"a%d" % ts, ts),
                    cv(b"cf1", b"b", b"b%d" % ts, ts),
                    cv(b"cf2", b"c", b"c%d" % ts, ts),
                ],
            ),
        )
    return table


def every_version(service, table, row=b"r"):
    return service.get(table, TGet(row=row, maxVersions=10))


def test_delete_whole_row(service, versioned):
    service.put(versioned, TPut(row=b"other", columnValues=[cv(b"cf1", b"a", b"keep")]))
    service.deleteSingle(versioned, TDelete(row=b"r"))
    assert is_empty_result(every_version(service, versioned))
    assert cell_values(service.get(versioned, TGet(row=b"other"))) == [(b"cf1:a", b"keep")]


def test_delete_whole_row_up_to_a_timestamp(service, versioned):
    service.deleteSingle(versioned, TDelete(row=b"r", timestamp=2000))
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == [3000]
    assert timestamps(result, b"cf1", b"b") == [3000]
    assert timestamps(result, b"cf2", b"c") == [3000]


def test_default_delete_type_removes_every_version_of_the_column(service, versioned):
    # deleteType unset on the Python side still travels as DELETE_COLUMNS (IDL default).
    service.deleteSingle(versioned, TDelete(row=b"r", columns=[col(b"cf1", b"a")]))
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == []
    assert timestamps(result, b"cf1", b"b") == [3000, 2000, 1000]
    assert timestamps(result, b"cf2", b"c") == [3000, 2000, 1000]


def test_delete_columns_up_to_the_column_timestamp(service, versioned):
    service.deleteSingle(
        versioned,
        TDelete(
            row=b"r",
            columns=[col(b"cf1", b"a", ts=2000)],
            deleteType=TDeleteType.DELETE_COLUMNS,
        ),
    )
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == [3000]
    assert timestamps(result, b"cf1", b"b") == [3000, 2000, 1000]


def test_delete_column_removes_only_the_latest_version(service, versioned):
    service.deleteSingle(
        versioned,
        TDelete(row=b"r", columns=[col(b"cf1", b"a")], deleteType=TDeleteType.DELETE_COLUMN),
    )
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == [2000, 1000]
    # The next-older version now answers a plain get.
    latest = service.get(versioned, TGet(row=b"r", columns=[col(b"cf1", b"a")]))
    assert cell_values(latest) == [(b"cf1:a", b"a2000")]


def test_delete_column_at_an_exact_timestamp(service, versioned):
    service.deleteSingle(
        versioned,
        TDelete(
            row=b"r",
            columns=[col(b"cf1", b"a", ts=2000)],
            deleteType=TDeleteType.DELETE_COLUMN,
        ),
    )
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == [3000, 1000]


@pytest.mark.parametrize(
    "delete_type, column, expected_a",
    [
        # Every version of cf1:a, not just those <= 2000.
        (TDeleteType.DELETE_COLUMNS, col(b"cf1", b"a"), []),
        # The latest version of cf1:a (3000), not the one at 2000.
        (TDeleteType.DELETE_COLUMN, col(b"cf1", b"a"), [2000, 1000]),
        # The whole family, not just the cells <= 2000.
        (TDeleteType.DELETE_FAMILY, col(b"cf1"), []),
    ],
    ids=["DELETE_COLUMNS", "DELETE_COLUMN", "DELETE_FAMILY"],
)
def test_tdelete_timestamp_does_not_apply_to_listed_columns(
    service, versioned, delete_type, column, expected_a
):
    # HBase's deleteFromThrift builds `new Delete(row)` when columns are listed:
    # TDelete.timestamp is then ignored, and only TColumn.timestamp counts.
    service.deleteSingle(
        versioned,
        TDelete(row=b"r", columns=[column], timestamp=2000, deleteType=delete_type),
    )
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == expected_a
    assert timestamps(result, b"cf2", b"c") == [3000, 2000, 1000]

def test_delete_family(service, versioned):
    service.deleteSingle(
        versioned,
        TDelete(row=b"r", columns=[col(b"cf1")], deleteType=TDeleteType.DELETE_FAMILY),
    )
    result = every_version(service, versioned)
    assert [c.family for c in result.columnValues] == [b"cf2"] * 3


def test_delete_family_up_to_a_timestamp(service, versioned):
    service.deleteSingle(
        versioned,
        TDelete(
            row=b"r", columns=[col(b"cf1", ts=2000)], deleteType=TDeleteType.DELETE_FAMILY
        ),
    )
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == [3000]
    assert timestamps(result, b"cf1", b"b") == [3000]
    assert timestamps(result, b"cf2", b"c") == [3000, 2000, 1000]


def test_delete_family_version(service, versioned):
    service.deleteSingle(
        versioned,
        TDelete(
            row=b"r",
            columns=[col(b"cf1", ts=2000)],
            deleteType=TDeleteType.DELETE_FAMILY_VERSION,
        ),
    )
    result = every_version(service, versioned)
    assert timestamps(result, b"cf1", b"a") == [3000, 1000]
    assert timestamps(result, b"cf1", b"b") == [3000, 1000]
    assert timestamps(result, b"cf2", b"c") == [3000, 2000, 1000]


def test_family_only_column_under_delete_columns_targets_the_empty_qualifier(service, table):
    # HBase >= 2.2: the TColumn's missing qualifier is passed on as the empty one.
    service.put(
        table,
        TPut(row=b"r", columnValues=[cv(b"cf1", b"", b"empty"), cv(b"cf1", b"q", b"named")]),
    )
    service.deleteSingle(table, TDelete(row=b"r", columns=[col(b"cf1")]))
    assert cell_values(service.get(table, TGet(row=b"r"))) == [(b"cf1:q", b"named")]


def test_delete_of_missing_row_or_column_is_not_an_error(service, table):
    service.deleteSingle(table, TDelete(row=b"never-written"))
    service.deleteSingle(table, TDelete(row=b"never-written", columns=[col(b"cf1", b"x")]))
    assert is_empty_result(service.get(table, TGet(row=b"never-written")))


def test_delete_multiple(service, table):
    service.putMultiple(
        table,
        [
            TPut(row=b"r1", columnValues=[cv(b"cf1", b"a", b"1"), cv(b"cf1", b"b", b"1")]),
            TPut(row=b"r2", columnValues=[cv(b"cf1", b"a", b"2")]),
            TPut(row=b"r3", columnValues=[cv(b"cf1", b"a", b"3")]),
        ],
    )
    leftover = service.deleteMultiple(
        table,
        [
            TDelete(row=b"r1", columns=[col(b"cf1", b"a")]),
            TDelete(row=b"r2"),
        ],
    )
    assert leftover == []
    results = service.getMultiple(table, [TGet(row=b"r1"), TGet(row=b"r2"), TGet(row=b"r3")])
    assert cell_values(results[0]) == [(b"cf1:b", b"1")]
    assert is_empty_result(results[1])
    assert cell_values(results[2]) == [(b"cf1:a", b"3")]


def test_put_after_delete_at_the_same_timestamp_stays_hidden(service, table):
    # A delete marker masks puts at or below its timestamp, even later ones.
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"old", 1000)]))
    service.deleteSingle(
        table,
        TDelete(row=b"r", columns=[col(b"cf1", b"a", ts=1000)],
                deleteType=TDeleteType.DELETE_COLUMNS),
    )
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"again", 1000)]))
    assert is_empty_result(service.get(table, TGet(row=b"r")))
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"newer", 1001)]))
    assert cell_values(service.get(table, TGet(row=b"r"))) == [(b"cf1:a", b"newer")]
