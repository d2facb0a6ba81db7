"""Table administration over Thrift2 as HBase 2 answers it: createTable with
TTableDescriptor and family descriptors, tableExists, getTableDescriptor(s),
enable/disable, deleteTable, table listings, server type."""

import pytest
from thbase.hbase.ttypes import (
    TBloomFilterType,
    TCompressionAlgorithm,
    TGet,
    TIOError,
    TPut,
    TTableName,
    TThriftServerType,
)

from thbase_support import (
    FOREVER_TTL,
    cv,
    family,
    table_descriptor,
    timestamps,
    ttable_name,
)


def families_by_name(descriptor):
    return {f.name: f for f in descriptor.columns}


def test_create_table_then_it_exists_with_its_families(service, table_names):
    name = table_names()
    tn = ttable_name(name)
    assert service.tableExists(tn) is False
    service.createTable(
        table_descriptor(name, [family(b"cf1", 5), family(b"cf2")]), None
    )
    assert service.tableExists(tn) is True
    assert service.tableExists(TTableName(ns=b"default", qualifier=name)) is True

    desc = service.getTableDescriptor(tn)
    assert desc.tableName.ns == b"default"
    assert desc.tableName.qualifier == name
    fams = families_by_name(desc)
    assert sorted(fams) == [b"cf1", b"cf2"]
    assert fams[b"cf1"].maxVersions == 5
    # HBase 2 defaults for a family described by name only.
    cf2 = fams[b"cf2"]
    assert cf2.maxVersions == 1
    assert cf2.timeToLive == FOREVER_TTL
    assert cf2.compressionType == TCompressionAlgorithm.NONE
    assert cf2.bloomnFilterType == TBloomFilterType.ROW
    assert cf2.blockCacheEnabled is True
    assert cf2.inMemory is False


def test_family_descriptor_fields_round_trip(service, table_names):
    name = table_names()
    service.createTable(
        table_descriptor(
            name,
            [
                family(
                    b"cf",
                    7,
                    timeToLive=3600,
                    inMemory=True,
                    bloomnFilterType=TBloomFilterType.ROWCOL,
                    blockCacheEnabled=False,
                )
            ],
        ),
        None,
    )
    (cf,) = service.getTableDescriptor(ttable_name(name)).columns
    assert cf.name == b"cf"
    assert cf.maxVersions == 7
    assert cf.timeToLive == 3600
    assert cf.inMemory is True
    assert cf.bloomnFilterType == TBloomFilterType.ROWCOL
    assert cf.blockCacheEnabled is False


def test_max_versions_of_a_created_family_is_enforced(service, table_names):
    name = table_names()
    service.createTable(table_descriptor(name, {b"cf": 2}), None)
    for ts in (1, 2, 3, 4):
        service.put(name, TPut(row=b"r", columnValues=[cv(b"cf", b"q", b"%d" % ts, ts)]))
    result = service.get(name, TGet(row=b"r", maxVersions=10))
    assert timestamps(result, b"cf", b"q") == [4, 3]


def test_get_table_descriptors_of_several_tables(service, make_table):
    first = make_table(families={b"x": None})
    second = make_table(families={b"y": 2, b"z": None})
    descs = service.getTableDescriptors([ttable_name(first), ttable_name(second)])
    by_name = {d.tableName.qualifier: d for d in descs}
    assert sorted(by_name) == sorted([first, second])
    assert [f.name for f in by_name[first].columns] == [b"x"]
    assert sorted(f.name for f in by_name[second].columns) == [b"y", b"z"]


def test_disable_enable_and_is_table_enabled(service, table):
    tn = ttable_name(table)
    assert service.isTableEnabled(tn) is True
    assert service.isTableDisabled(tn) is False
    service.disableTable(tn)
    assert service.isTableEnabled(tn) is False
    assert service.isTableDisabled(tn) is True
    service.enableTable(tn)
    assert service.isTableEnabled(tn) is True
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"back")]))
    assert service.get(table, TGet(row=b"r")).columnValues[0].value == b"back"


def test_disable_twice_and_enable_twice_are_io_errors(service, table):
    tn = ttable_name(table)
    with pytest.raises(TIOError):
        service.enableTable(tn)
    service.disableTable(tn)
    with pytest.raises(TIOError):
        service.disableTable(tn)
    assert service.isTableDisabled(tn) is True


def test_data_calls_on_a_disabled_table_are_io_errors(service, table):
    service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"x")]))
    service.disableTable(ttable_name(table))
    with pytest.raises(TIOError):
        service.get(table, TGet(row=b"r"))
    with pytest.raises(TIOError):
        service.put(table, TPut(row=b"r", columnValues=[cv(b"cf1", b"a", b"y")]))
    service.enableTable(ttable_name(table))
    assert service.get(table, TGet(row=b"r")).columnValues[0].value == b"x"


def test_delete_table_needs_it_disabled(service, table):
    tn = ttable_name(table)
    with pytest.raises(TIOError):
        service.deleteTable(tn)
    assert service.tableExists(tn) is True
    service.disableTable(tn)
    service.deleteTable(tn)
    assert service.tableExists(tn) is False
    with pytest.raises(TIOError):
        service.getTableDescriptor(tn)


def test_recreated_table_starts_empty(service, table_names):
    name = table_names()
    tn = ttable_name(name)
    service.createTable(table_descriptor(name, {b"cf": None}), None)
    service.put(name, TPut(row=b"r", columnValues=[cv(b"cf", b"q", b"old")]))
    service.disableTable(tn)
    service.deleteTable(tn)
    service.createTable(table_descriptor(name, {b"cf": None}), None)
    result = service.get(name, TGet(row=b"r"))
    assert result.row is None and result.columnValues == []


def test_create_existing_table_is_an_io_error(service, table):
    with pytest.raises(TIOError):
        service.createTable(table_descriptor(table, {b"cf1": None}), None)
    # The original is untouched.
    fams = families_by_name(service.getTableDescriptor(ttable_name(table)))
    assert sorted(fams) == [b"cf1", b"cf2", b"cf3"]


def test_table_names_by_namespace_and_pattern(service, make_table):
    name = make_table()
    listed = service.getTableNamesByNamespace("default")
    assert TTableName(ns=b"default", qualifier=name) in listed
    by_pattern = service.getTableNamesByPattern(name.decode("ascii"), False)
    assert by_pattern == [TTableName(ns=b"default", qualifier=name)]
    everything = service.getTableNamesByPattern(None, False)
    assert TTableName(ns=b"default", qualifier=name) in everything
    descs = service.getTableDescriptorsByPattern(name.decode("ascii"), False)
    assert [d.tableName.qualifier for d in descs] == [name]


def test_server_says_it_is_thrift2(service):
    assert service.getThriftServerType() == TThriftServerType.TWO
