"""Error replies HBase gives happybase, and that the connection stays usable
after each of them (declared exceptions travel in a normal reply)."""

import pytest

from compat_support import (
    TScan,
    AlreadyExists,
    HBaseIOError,
    IllegalArgument,
    TApplicationException,
    scan_list,
)

MISSING_TABLE_OPERATIONS = {
    "row": lambda t: t.row(b"r"),
    "row-with-timestamp": lambda t: t.row(b"r", timestamp=10),
    "rows": lambda t: t.rows([b"r1", b"r2"]),
    "cells": lambda t: t.cells(b"r", b"cf1:c"),
    "scan": lambda t: scan_list(t),
    "put": lambda t: t.put(b"r", {b"cf1:c": b"v"}),
    "delete-columns": lambda t: t.delete(b"r", columns=[b"cf1:c"]),
    "delete-row": lambda t: t.delete(b"r"),
    "counter_inc": lambda t: t.counter_inc(b"r", b"cf1:c"),
    "families": lambda t: t.families(),
}


@pytest.mark.parametrize("operation", list(MISSING_TABLE_OPERATIONS))
def test_operation_on_missing_table_raises_io_error(connection, table, table_names, operation):
    missing = connection.table(table_names())
    with pytest.raises(HBaseIOError):
        MISSING_TABLE_OPERATIONS[operation](missing)
    table.put(b"after", {b"cf1:c": b"ok"})
    assert table.row(b"after") == {b"cf1:c": b"ok"}


@pytest.mark.parametrize("admin_call", ["is_table_enabled", "enable_table", "disable_table", "delete_table"])
def test_admin_call_on_missing_table_raises_io_error(connection, table, table_names, admin_call):
    name = table_names()
    with pytest.raises(HBaseIOError):
        getattr(connection, admin_call)(name)
    assert connection.is_table_enabled(table.name) is True
    assert name not in connection.tables()


def test_missing_table_error_names_the_java_exception(connection, table_names):
    with pytest.raises(HBaseIOError) as raised:
        connection.table(table_names()).row(b"r")
    assert isinstance(raised.value.message, bytes)
    assert b"TableNotFoundException" in raised.value.message


def test_create_existing_table_raises_already_exists_and_connection_survives(connection, table):
    with pytest.raises(AlreadyExists):
        connection.create_table(table.name, {"cf1": {}})
    assert table.name in connection.tables()


def test_put_to_unknown_family_raises_io_error(connection, table):
    with pytest.raises(HBaseIOError) as raised:
        table.put(b"r", {b"nofamily:c": b"v"})
    assert b"NoSuchColumnFamilyException" in raised.value.message
    table.put(b"r", {b"cf1:c": b"v"})
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_read_of_unknown_family_raises_io_error(table):
    table.put(b"r", {b"cf1:c": b"v"})
    with pytest.raises(HBaseIOError):
        table.row(b"r", columns=[b"nofamily:c"])
    with pytest.raises(HBaseIOError):
        table.cells(b"r", b"nofamily:c")
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_scan_of_unknown_family_raises_io_error(table):
    table.put(b"r", {b"cf1:c": b"v"})
    with pytest.raises(HBaseIOError):
        scan_list(table, columns=[b"nofamily"])
    assert scan_list(table) == [(b"r", {b"cf1:c": b"v"})]


def test_put_to_bare_family_raises_application_exception(table):
    # mutateRows cannot put a cell without a qualifier; HBase's handler throws
    # an unchecked exception, which Thrift reports as an internal error.
    with pytest.raises(TApplicationException) as raised:
        table.put(b"r", {b"cf1": b"v"})
    assert raised.value.type == TApplicationException.INTERNAL_ERROR
    assert table.row(b"r") == {}
    table.put(b"r", {b"cf1:": b"v"})
    assert table.row(b"r") == {b"cf1:": b"v"}


def test_unknown_scanner_id_raises_illegal_argument(connection, table):
    with pytest.raises(IllegalArgument):
        connection.client.scannerGetList(-7, 10)
    with pytest.raises(IllegalArgument):
        connection.client.scannerClose(-7)
    table.put(b"r", {b"cf1:c": b"v"})
    assert scan_list(table) == [(b"r", {b"cf1:c": b"v"})]


def test_closed_scanner_id_is_no_longer_valid(connection, table):
    table.put(b"r", {b"cf1:c": b"v"})
    scanner_id = connection.client.scannerOpenWithScan(table.name, TScan(startRow=b""), {})
    assert [r.row for r in connection.client.scannerGetList(scanner_id, 10)] == [b"r"]
    assert connection.client.scannerGetList(scanner_id, 10) == []
    connection.client.scannerClose(scanner_id)
    with pytest.raises(IllegalArgument):
        connection.client.scannerGetList(scanner_id, 10)


def test_connection_survives_a_run_of_different_errors(connection, table, table_names):
    missing = connection.table(table_names())
    for _ in range(3):
        with pytest.raises(HBaseIOError):
            missing.row(b"r")
        with pytest.raises(AlreadyExists):
            connection.create_table(table.name, {"cf1": {}})
        with pytest.raises(TApplicationException):
            scan_list(table, filter=b"NoSuchFilter()")
        with pytest.raises(HBaseIOError):
            table.put(b"r", {b"nofamily:c": b"v"})
        with pytest.raises(IllegalArgument):
            connection.client.scannerGetList(-7, 1)
    table.put(b"r", {b"cf1:c": b"v"})
    assert table.row(b"r") == {b"cf1:c": b"v"}
    assert scan_list(table) == [(b"r", {b"cf1:c": b"v"})]
    assert table.counter_inc(b"r", b"cf1:n") == 1
