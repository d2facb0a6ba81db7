"""Error replies HBase's Thrift2 server gives, and that the connection stays usable
after each of them: declared exceptions (TIOError, TIllegalArgument) travel in a
normal reply, unchecked server failures and unknown methods as
TApplicationException."""

import pytest
from thbase.hbase.ttypes import (
    TAppend,
    TApplicationException,
    TColumnIncrement,
    TDelete,
    TDeleteType,
    TGet,
    TIncrement,
    TIOError,
    TPermissionScope,
    TPut,
    TRowMutations,
    TMutation,
    TScan,
)

from thbase_support import cell_values, col, cv, scan_all, table_descriptor, ttable_name

MISSING_TABLE_DATA_CALLS = {
    "get": lambda s, t: s.get(t, TGet(row=b"r")),
    "getMultiple": lambda s, t: s.getMultiple(t, [TGet(row=b"r")]),
    "exists": lambda s, t: s.exists(t, TGet(row=b"r")),
    "put": lambda s, t: s.put(t, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"v")])),
    "putMultiple": lambda s, t: s.putMultiple(
        t, [TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"v")])]
    ),
    "deleteSingle": lambda s, t: s.deleteSingle(t, TDelete(row=b"r")),
    "deleteMultiple": lambda s, t: s.deleteMultiple(t, [TDelete(row=b"r")]),
    "checkAndPut": lambda s, t: s.checkAndPut(
        t, b"r", b"cf1", b"a", None, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"v")])
    ),
    "increment": lambda s, t: s.increment(
        t, TIncrement(row=b"r", columns=[TColumnIncrement(family=b"cf1", qualifier=b"n")])
    ),
    "append": lambda s, t: s.append(t, TAppend(row=b"r", columns=[cv(b"cf1", b"a", b"v")])),
    "mutateRow": lambda s, t: s.mutateRow(
        t,
        TRowMutations(
            row=b"r",
            mutations=[TMutation(put=TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"v")]))],
        ),
    ),
    "openScanner": lambda s, t: s.openScanner(t, TScan()),
    "getScannerResults": lambda s, t: s.getScannerResults(t, TScan(), 10),
}

MISSING_TABLE_ADMIN_CALLS = {
    "getTableDescriptor": lambda s, tn: s.getTableDescriptor(tn),
    "isTableEnabled": lambda s, tn: s.isTableEnabled(tn),
    "enableTable": lambda s, tn: s.enableTable(tn),
    "disableTable": lambda s, tn: s.disableTable(tn),
    "deleteTable": lambda s, tn: s.deleteTable(tn),
}


def assert_connection_works(service, table):
    service.put(table, TPut(row=b"after", columnValues=[cv(b"cf1", b"c", b"ok")]))
    assert cell_values(service.get(table, TGet(row=b"after"))) == [(b"cf1:c", b"ok")]


@pytest.mark.parametrize("call", list(MISSING_TABLE_DATA_CALLS))
def test_data_call_on_missing_table_is_a_tioerror(service, table, table_names, call):
    missing = table_names()
    with pytest.raises(TIOError) as raised:
        MISSING_TABLE_DATA_CALLS[call](service, missing)
    assert isinstance(raised.value.message, str)
    assert raised.value.message
    assert_connection_works(service, table)


@pytest.mark.parametrize("call", list(MISSING_TABLE_ADMIN_CALLS))
def test_admin_call_on_missing_table_is_a_tioerror(service, table, table_names, call):
    missing = ttable_name(table_names())
    with pytest.raises(TIOError):
        MISSING_TABLE_ADMIN_CALLS[call](service, missing)
    assert service.tableExists(missing) is False
    assert_connection_works(service, table)


def test_missing_table_error_names_the_table_and_is_not_retriable(service, table_names):
    missing = table_names()
    with pytest.raises(TIOError) as raised:
        service.get(missing, TGet(row=b"r"))
    # HBase: TableNotFoundException's message is the table name; a
    # DoNotRetryIOException, so canRetry is false (thbase retries when it is true).
    assert missing.decode("ascii") in raised.value.message
    assert raised.value.canRetry is False


def test_unknown_family_is_a_tioerror(service, table):
    with pytest.raises(TIOError):
        service.put(table, TPut(row=b"r", columnValues=[cv(b"nope", b"a", b"v")]))
    with pytest.raises(TIOError):
        service.get(table, TGet(row=b"r", columns=[col(b"nope")]))
    assert_connection_works(service, table)


def test_bad_filter_string_is_an_internal_error(service, table):
    with pytest.raises(TApplicationException) as raised:
        service.getScannerResults(table, TScan(filterString=b"NoSuchFilter('x')"), 10)
    assert raised.value.type == TApplicationException.INTERNAL_ERROR
    with pytest.raises(TApplicationException) as raised:
        service.get(table, TGet(row=b"r", filterString=b"PrefixFilter("))
    assert raised.value.type == TApplicationException.INTERNAL_ERROR
    assert_connection_works(service, table)


def test_method_hbase_does_not_serve_is_unknown_method(service, table):
    # thbase's IDL has getUserPermission; HBase's THBaseService does not.
    with pytest.raises(TApplicationException) as raised:
        service.getUserPermission("default", TPermissionScope.NAMESPACE)
    assert raised.value.type == TApplicationException.UNKNOWN_METHOD
    assert_connection_works(service, table)


def test_many_errors_in_a_row_then_calls_still_work(service, table, table_names):
    missing = table_names()
    for _ in range(20):
        with pytest.raises(TIOError):
            service.get(missing, TGet(row=b"r"))
    assert_connection_works(service, table)
    assert scan_all(service, table, TScan()) != []


def test_errors_do_not_leak_into_other_connections(client_factory, table, table_names):
    first = client_factory().client
    second = client_factory().client
    with pytest.raises(TIOError):
        first.get(table_names(), TGet(row=b"r"))
    assert_connection_works(second, table)
    assert_connection_works(first, table)


def test_create_table_without_families_is_an_io_error(service, table_names):
    name = table_names()
    with pytest.raises(TIOError):
        service.createTable(table_descriptor(name, []), None)
    assert service.tableExists(ttable_name(name)) is False


def test_delete_family_version_without_timestamp_is_an_internal_error(service, table):
    # HBase's deleteFromThrift throws IllegalArgumentException ("Timestamp is required
    # for TDelete with DeleteFamilyVersion type"), which the handler does not catch.
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"kept")]))
    with pytest.raises(TApplicationException) as raised:
        service.deleteSingle(
            table,
            TDelete(row=b"r", columns=[col(b"cf1")], deleteType=TDeleteType.DELETE_FAMILY_VERSION),
        )
    assert raised.value.type == TApplicationException.INTERNAL_ERROR
    assert cell_values(service.get(table, TGet(row=b"r"))) == [(b"cf1:a", b"kept")]
