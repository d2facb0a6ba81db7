"""Namespaces over Thrift2 as HBase 2 answers them: create/list/get/delete, and
tables named `ns:table` in data and admin calls."""

import pytest
from thbase.hbase.ttypes import TGet, TIOError, TNamespaceDescriptor, TPut, TScan, TTableName

from thbase_support import cell_values, cv, rows_of, table_descriptor, ttable_name


def test_builtin_namespaces_are_listed(service):
    names = service.listNamespaces()
    assert "default" in names
    assert "hbase" in names
    described = [d.name for d in service.listNamespaceDescriptors()]
    assert "default" in described and "hbase" in described


def test_create_list_describe_and_delete_a_namespace(service, namespace_names):
    ns = namespace_names()
    assert ns not in service.listNamespaces()
    service.createNamespace(TNamespaceDescriptor(name=ns))
    assert ns in service.listNamespaces()
    assert ns in [d.name for d in service.listNamespaceDescriptors()]
    assert service.getNamespaceDescriptor(ns).name == ns
    assert service.getTableNamesByNamespace(ns) == []
    service.deleteNamespace(ns)
    assert ns not in service.listNamespaces()


def test_namespace_configuration_round_trips(service, namespace_names):
    ns = namespace_names()
    service.createNamespace(TNamespaceDescriptor(name=ns, configuration={"owner": "compat"}))
    desc = service.getNamespaceDescriptor(ns)
    assert desc.configuration.get("owner") == "compat"


def test_create_existing_namespace_is_an_io_error(service, namespace_names):
    ns = namespace_names()
    service.createNamespace(TNamespaceDescriptor(name=ns))
    with pytest.raises(TIOError):
        service.createNamespace(TNamespaceDescriptor(name=ns))
    with pytest.raises(TIOError):
        service.createNamespace(TNamespaceDescriptor(name="default"))


def test_missing_namespace_is_an_io_error(service, namespace_names):
    ns = namespace_names()
    with pytest.raises(TIOError):
        service.getNamespaceDescriptor(ns)
    with pytest.raises(TIOError):
        service.deleteNamespace(ns)
    with pytest.raises(TIOError):
        service.createTable(table_descriptor(ns.encode() + b":t", {b"cf": None}), None)
    assert ns not in service.listNamespaces()


def test_namespaced_table_in_data_and_admin_calls(service, namespace_names, make_table):
    ns = namespace_names()
    service.createNamespace(TNamespaceDescriptor(name=ns))
    name = make_table(families={b"cf": None}, namespace=ns)
    ns_b, qualifier = name.split(b":", 1)
    tn = TTableName(ns=ns_b, qualifier=qualifier)

    assert service.tableExists(tn) is True
    # The same qualifier in the default namespace is another (missing) table.
    assert service.tableExists(TTableName(qualifier=qualifier)) is False
    desc = service.getTableDescriptor(tn)
    assert (desc.tableName.ns, desc.tableName.qualifier) == (ns_b, qualifier)
    assert service.getTableNamesByNamespace(ns) == [tn]

    service.put(name, TPut(row=b"r1", columnValues=[cv(b"cf", b"q", b"in-ns")]))
    assert cell_values(service.get(name, TGet(row=b"r1"))) == [(b"cf:q", b"in-ns")]
    assert rows_of(service.getScannerResults(name, TScan(), 10)) == [b"r1"]
    with pytest.raises(TIOError):
        service.get(qualifier, TGet(row=b"r1"))

    # Only empty namespaces can be removed.
    with pytest.raises(TIOError):
        service.deleteNamespace(ns)
    service.disableTable(tn)
    service.deleteTable(tn)
    assert service.tableExists(ttable_name(name)) is False
    service.deleteNamespace(ns)
    assert ns not in service.listNamespaces()
