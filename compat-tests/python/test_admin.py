"""Table administration: create/delete/enable/disable/compact, families() and regions()."""

import pytest

from compat_support import (
    DEFAULT_FAMILIES,
    FOREVER_TTL,
    AlreadyExists,
    HBaseIOError,
    IllegalArgument,
    default_descriptor,
)


def test_families_report_every_descriptor_field(table):
    assert table.families() == {
        b"cf1": default_descriptor(b"cf1", max_versions=10),
        b"cf2": default_descriptor(b"cf2", max_versions=3),
        b"cf3": default_descriptor(b"cf3", max_versions=1),
    }


def test_create_table_with_none_and_empty_options_uses_defaults(connection, table_names):
    name = table_names()
    connection.create_table(name, {"plain": None, "empty": {}})
    assert connection.table(name).families() == {
        b"plain": default_descriptor(b"plain"),
        b"empty": default_descriptor(b"empty"),
    }


def test_create_table_with_every_family_option(connection, table_names):
    name = table_names()
    connection.create_table(
        name,
        {
            "tuned": dict(
                max_versions=7,
                compression="NONE",
                in_memory=True,
                bloom_filter_type="ROWCOL",
                bloom_filter_vector_size=0,
                bloom_filter_nb_hashes=0,
                block_cache_enabled=True,
                time_to_live=86400,
            ),
            "rowbloom": dict(bloom_filter_type="ROW", max_versions=1),
        },
    )
    families = connection.table(name).families()
    assert families[b"tuned"] == {
        "name": b"tuned:",
        "max_versions": 7,
        "compression": b"NONE",
        "in_memory": True,
        "bloom_filter_type": b"ROWCOL",
        "bloom_filter_vector_size": 0,
        "bloom_filter_nb_hashes": 0,
        "block_cache_enabled": True,
        "time_to_live": 86400,
    }
    assert families[b"rowbloom"]["bloom_filter_type"] == b"ROW"
    assert families[b"rowbloom"]["max_versions"] == 1
    assert families[b"rowbloom"]["block_cache_enabled"] is False
    assert set(families) == {b"tuned", b"rowbloom"}


def test_bloom_filter_vector_size_and_hash_count_are_ignored(connection, table_names):
    name = table_names()
    connection.create_table(
        name, {"cf": dict(bloom_filter_vector_size=1000, bloom_filter_nb_hashes=4)}
    )
    descriptor = connection.table(name).families()[b"cf"]
    assert descriptor["bloom_filter_vector_size"] == 0
    assert descriptor["bloom_filter_nb_hashes"] == 0


def test_compression_name_is_case_insensitive_and_reported_as_hbase_spells_it(
    connection, table_names
):
    # Tabula compresses every compressing family with zstd
    # (docs/DIFFERENCES.md) but reports the algorithm asked for, as HBase does.
    name = table_names()
    connection.create_table(
        name, {"cf": dict(compression="gz"), "plain": dict(compression="none")}
    )
    families = connection.table(name).families()
    assert families[b"cf"]["compression"] == b"GZ"
    assert families[b"plain"]["compression"] == b"NONE"


@pytest.mark.parametrize("ttl", [-1, 0])
def test_non_positive_time_to_live_means_forever(connection, table_names, ttl):
    name = table_names()
    connection.create_table(name, {"cf": dict(time_to_live=ttl)})
    assert connection.table(name).families()[b"cf"]["time_to_live"] == FOREVER_TTL


def test_family_name_given_with_trailing_colon(connection, table_names):
    name = table_names()
    connection.create_table(name, {"fam:": {}})
    assert list(connection.table(name).families()) == [b"fam"]
    connection.table(name).put(b"r", {b"fam:q": b"v"})
    assert connection.table(name).row(b"r") == {b"fam:q": b"v"}


@pytest.mark.parametrize(
    "options",
    [dict(bloom_filter_type="NO_SUCH_BLOOM"), dict(compression="no-such-codec")],
    ids=["bloom_filter_type", "compression"],
)
def test_invalid_family_option_raises_illegal_argument(connection, table_names, options):
    name = table_names()
    with pytest.raises(IllegalArgument):
        connection.create_table(name, {"cf": options})
    assert name not in connection.tables()


def test_create_existing_table_raises_already_exists(connection, table):
    with pytest.raises(AlreadyExists):
        connection.create_table(table.name, {"other": {}})
    assert list(table.families()) == [b"cf1", b"cf2", b"cf3"]
    assert connection.tables().count(table.name) == 1


def test_recreated_table_starts_empty(connection, table_names):
    name = table_names()
    connection.create_table(name, {"cf1": {}})
    connection.table(name).put(b"r", {b"cf1:c": b"old"})
    connection.delete_table(name, disable=True)
    connection.create_table(name, {"cfx": {"max_versions": 2}})
    again = connection.table(name)
    assert again.row(b"r") == {}
    assert list(again.families()) == [b"cfx"]


def test_new_table_has_one_region_spanning_all_keys(table):
    regions = table.regions()
    assert len(regions) == 1
    region = regions[0]
    assert set(region) == {
        "start_key",
        "end_key",
        "id",
        "name",
        "version",
        "server_name",
        "port",
    }
    assert region["start_key"] == b""
    assert region["end_key"] == b""
    assert isinstance(region["id"], int) and region["id"] > 0
    assert region["version"] == 1
    assert region["name"].startswith(table.name + b",," + str(region["id"]).encode() + b".")
    assert region["name"].endswith(b".")
    assert isinstance(region["server_name"], bytes) and region["server_name"] != b""
    assert isinstance(region["port"], int) and 0 < region["port"] < 65536


def test_regions_of_missing_table_is_empty_list(connection, table_names):
    assert connection.table(table_names()).regions() == []


def test_new_table_is_enabled(connection, table):
    assert connection.is_table_enabled(table.name) is True


def test_disable_then_enable(connection, table):
    connection.disable_table(table.name)
    assert connection.is_table_enabled(table.name) is False
    connection.enable_table(table.name)
    assert connection.is_table_enabled(table.name) is True
    table.put(b"r", {b"cf1:c": b"v"})
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_data_survives_disable_and_enable(connection, table):
    table.put(b"r", {b"cf1:c": b"kept"}, timestamp=5000)
    connection.disable_table(table.name)
    connection.enable_table(table.name)
    assert table.row(b"r", include_timestamp=True) == {b"cf1:c": (b"kept", 5000)}


def test_disabling_a_disabled_table_raises_io_error(connection, table):
    connection.disable_table(table.name)
    with pytest.raises(HBaseIOError):
        connection.disable_table(table.name)
    assert connection.is_table_enabled(table.name) is False


def test_enabling_an_enabled_table_raises_io_error(connection, table):
    with pytest.raises(HBaseIOError):
        connection.enable_table(table.name)
    assert connection.is_table_enabled(table.name) is True


def test_reading_a_disabled_table_raises_io_error(connection, table):
    table.put(b"r", {b"cf1:c": b"v"})
    connection.disable_table(table.name)
    with pytest.raises(HBaseIOError):
        table.row(b"r")
    connection.enable_table(table.name)
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_delete_enabled_table_without_disable_raises_io_error(connection, table):
    with pytest.raises(HBaseIOError):
        connection.delete_table(table.name)
    assert table.name in connection.tables()
    assert connection.is_table_enabled(table.name) is True


def test_delete_disabled_table_without_disable_flag(connection, table_names):
    name = table_names()
    connection.create_table(name, DEFAULT_FAMILIES)
    connection.disable_table(name)
    connection.delete_table(name)
    assert name not in connection.tables()


def test_delete_table_with_disable_flag_on_enabled_table(connection, table_names):
    name = table_names()
    connection.create_table(name, DEFAULT_FAMILIES)
    connection.delete_table(name, disable=True)
    assert name not in connection.tables()


def test_delete_table_with_disable_flag_on_disabled_table(connection, table_names):
    name = table_names()
    connection.create_table(name, DEFAULT_FAMILIES)
    connection.disable_table(name)
    connection.delete_table(name, disable=True)
    assert name not in connection.tables()


@pytest.mark.parametrize("major", [False, True], ids=["minor", "major"])
def test_compaction_keeps_visible_data_and_versions(connection, table, major):
    for ts in (10, 20, 30):
        table.put(b"r", {b"cf1:c": b"v%d" % ts}, timestamp=ts)
    table.put(b"gone", {b"cf1:c": b"x"})
    table.delete(b"gone")
    connection.compact_table(table.name, major=major)
    assert table.cells(b"r", b"cf1:c", include_timestamp=True) == [
        (b"v30", 30),
        (b"v20", 20),
        (b"v10", 10),
    ]
    assert table.row(b"gone") == {}
    assert [key for key, _ in table.scan()] == [b"r"]


def test_time_to_live_hides_cells_older_than_ttl(make_table):
    table = make_table({"short": dict(time_to_live=3600)})
    table.put(b"r", {b"short:old": b"expired"}, timestamp=1000)
    table.put(b"r", {b"short:new": b"fresh"})
    assert table.row(b"r") == {b"short:new": b"fresh"}
    assert table.cells(b"r", b"short:old") == []
