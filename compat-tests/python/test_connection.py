"""Connection life cycle, table listing and client-side table prefixes."""

from compat_support import DEFAULT_FAMILIES


def test_autoconnect_false_opens_only_on_open(connection_factory, table):
    conn = connection_factory(autoconnect=False)
    assert conn.transport.is_open() is False
    conn.open()
    assert conn.transport.is_open() is True
    assert table.name in conn.tables()


def test_close_then_reopen_serves_calls_again(connection, table):
    assert table.name in connection.tables()
    connection.close()
    assert connection.transport.is_open() is False
    connection.open()
    assert table.name in connection.tables()
    table.put(b"r", {b"cf1:c": b"v"})
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_open_and_close_are_idempotent(connection, table):
    connection.open()
    connection.open()
    assert table.name in connection.tables()
    connection.close()
    connection.close()
    assert connection.transport.is_open() is False


def test_tables_returns_a_list_of_bytes_including_new_table(connection, table):
    names = connection.tables()
    assert isinstance(names, list)
    assert all(isinstance(name, bytes) for name in names)
    assert names.count(table.name) == 1


def test_tables_excludes_system_tables(connection, table):
    names = connection.tables()
    assert b"hbase:meta" not in names
    assert b"hbase:namespace" not in names
    assert [name for name in names if name.startswith(b"hbase:")] == []


def test_deleted_table_disappears_from_listing(connection, table_names):
    name = table_names()
    connection.create_table(name, {"cf1": {}})
    assert name in connection.tables()
    connection.delete_table(name, disable=True)
    assert name not in connection.tables()


def test_str_and_bytes_table_names_are_the_same_table(connection, table):
    as_text = connection.table(table.name.decode("ascii"))
    assert as_text.name == table.name
    as_text.put(b"r", {b"cf1:c": b"v"})
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_table_prefix_applies_to_create_list_and_data(connection_factory, table_names):
    prefix = table_names("pfx")
    full_name = table_names.register(prefix + b"_people")
    prefixed = connection_factory(table_prefix=prefix)
    plain = connection_factory()

    prefixed.create_table("people", DEFAULT_FAMILIES)

    assert full_name in plain.tables()
    assert prefixed.tables() == [b"people"]
    assert prefixed.table("people").name == full_name
    prefixed.table("people").put(b"r1", {b"cf1:name": b"ann"})
    assert plain.table(full_name).row(b"r1") == {b"cf1:name": b"ann"}
    assert prefixed.is_table_enabled("people") is True

    prefixed.delete_table("people", disable=True)
    assert full_name not in plain.tables()
    assert prefixed.tables() == []


def test_table_prefix_with_custom_separator(connection_factory, table_names):
    prefix = table_names("sep")
    full_name = table_names.register(prefix + b"--items")
    prefixed = connection_factory(table_prefix=prefix, table_prefix_separator=b"--")

    prefixed.create_table(b"items", {"cf1": {}})

    assert full_name in connection_factory().tables()
    assert prefixed.tables() == [b"items"]
    assert prefixed.table(b"items").name == full_name


def test_use_prefix_false_reaches_unprefixed_table(connection_factory, table):
    prefixed = connection_factory(table_prefix=b"compat_other_prefix")
    outside = prefixed.table(table.name, use_prefix=False)
    assert outside.name == table.name
    outside.put(b"r", {b"cf2:x": b"1"})
    assert table.row(b"r") == {b"cf2:x": b"1"}
    assert b"compat_other_prefix_" + table.name == prefixed.table(table.name).name


def test_writes_on_one_connection_are_seen_by_another(connection_factory, table):
    reader = connection_factory().table(table.name)
    table.put(b"shared", {b"cf1:a": b"1", b"cf2:b": b"2"})
    assert reader.row(b"shared") == {b"cf1:a": b"1", b"cf2:b": b"2"}


def test_many_sequential_calls_on_one_connection(table):
    for i in range(300):
        table.put(b"row-%03d" % i, {b"cf1:n": b"%d" % i})
    for i in range(0, 300, 7):
        assert table.row(b"row-%03d" % i) == {b"cf1:n": b"%d" % i}
    assert len(list(table.scan())) == 300

