"""Fixtures for the thbase (Thrift2) compatibility suite.

Owns: the one-time reachability probe of the Thrift2 server under test, per-test
thbase clients, uniquely named tables (cf1/cf2/cf3 by default) and namespaces that
are dropped afterwards. Every fixture that needs the server goes through
`tabula_server`, which fails with one clear message when nothing answers rather
than letting each test hang or fail on its own.
"""

import socket

import pytest
import thbase
from thbase.hbase.ttypes import TException
from thrift.transport.TTransport import TTransportException

from thbase_support import (
    DEFAULT_FAMILIES,
    load_settings,
    new_client,
    open_client,
    table_descriptor,
    ttable_name,
    unique_name,
)

PROBE_CONNECT_TIMEOUT_S = 5.0
PROBE_CALL_TIMEOUT_MS = 15000


def pytest_configure(config):
    try:
        config._tabula_settings = load_settings()
    except ValueError as exc:
        raise pytest.UsageError(str(exc))


def pytest_report_header(config):
    settings = getattr(config, "_tabula_settings", None)
    if settings is None:
        return None
    return f"thbase ({thbase.__file__}) against Thrift2 at {settings.describe()}"


@pytest.fixture(scope="session")
def settings(pytestconfig):
    return pytestconfig._tabula_settings


def _probe(settings):
    """Fail (without a traceback) unless the server accepts TCP and answers one call."""
    connect_error = None
    try:
        sock = socket.create_connection(
            (settings.host, settings.port), timeout=PROBE_CONNECT_TIMEOUT_S
        )
        sock.close()
    except OSError as exc:
        connect_error = exc
    if connect_error is not None:
        pytest.fail(
            f"cannot connect to Tabula's Thrift2 port at {settings.address}: "
            f"{connect_error}. Start the server, or point TABULA_HOST / "
            "TABULA_THRIFT2_PORT at it.",
            pytrace=False,
        )

    call_error = None
    client = new_client(settings)
    try:
        client.connection.open()
        client.client.listNamespaces()
    except (TException, TTransportException, OSError) as exc:
        call_error = exc
    finally:
        client.close_connection()
    if call_error is not None:
        pytest.fail(
            f"cannot talk to Tabula at {settings.address}: the TCP connection was "
            f"accepted but listNamespaces over transport={settings.transport} "
            f"protocol={settings.protocol} failed: {call_error!r}. Is this the "
            "Thrift2 port? Check TABULA_TRANSPORT and TABULA_PROTOCOL.",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def tabula_server(settings):
    """The verified server settings; a failure here is cached for the session."""
    _probe(settings)
    return settings


@pytest.fixture
def client_factory(tabula_server):
    """Open extra thbase Clients (closed at teardown)."""
    opened = []

    def _open():
        client = open_client(tabula_server)
        opened.append(client)
        return client

    yield _open
    for client in opened:
        client.close_connection()


@pytest.fixture
def client(client_factory):
    """A connected thbase Client (thbase's high-level API)."""
    return client_factory()


@pytest.fixture
def service(client):
    """thbase's generated THBaseService.Client on that client's connection."""
    return client.client


def _drop_table(service, name):
    tn = ttable_name(name)
    if not service.tableExists(tn):
        return
    if service.isTableEnabled(tn):
        service.disableTable(tn)
    service.deleteTable(tn)


class Names:
    """Unique names for one test; whatever exists of them at teardown is dropped."""

    def __init__(self, prefix, default_hint):
        self._prefix = prefix
        self._default_hint = default_hint
        self.names = []

    def __call__(self, hint=None):
        name = unique_name(self._prefix, hint or self._default_hint)
        self.names.append(name)
        return name


@pytest.fixture
def table_names(tabula_server, request):
    """Hand out unique table names (bytes, default namespace); dropped afterwards."""
    names = Names("compat2", request.node.name)

    def _name(hint=None):
        return names(hint).encode("ascii")

    yield _name
    if names.names:
        admin = open_client(tabula_server)
        try:
            for name in names.names:
                _drop_table(admin.client, name.encode("ascii"))
        finally:
            admin.close_connection()


@pytest.fixture
def namespace_names(tabula_server, request):
    """Hand out unique namespace names (str); each is emptied and dropped afterwards."""
    names = Names("ns2", request.node.name[:20])
    yield names
    if names.names:
        admin = open_client(tabula_server)
        try:
            existing = set(admin.client.listNamespaces())
            for ns in names.names:
                if ns not in existing:
                    continue
                for tn in admin.client.getTableNamesByNamespace(ns):
                    _drop_table(admin.client, tn.ns + b":" + tn.qualifier)
                admin.client.deleteNamespace(ns)
        finally:
            admin.close_connection()


@pytest.fixture
def make_table(tabula_server, table_names):
    """Create a uniquely named table (default families cf1/cf2/cf3); its name (bytes).
    With `namespace`, the table is `namespace:name` (the namespace must exist)."""

    def _make(families=None, hint=None, namespace=None):
        name = table_names(hint)
        if namespace is not None:
            name = namespace.encode("ascii") + b":" + name
        admin = open_client(tabula_server)
        try:
            admin.client.createTable(
                table_descriptor(name, families if families is not None else DEFAULT_FAMILIES),
                None,
            )
        finally:
            admin.close_connection()
        return name

    return _make


@pytest.fixture
def table(make_table):
    """A new empty table: cf1 (10 versions), cf2 (3 versions), cf3 (1 version)."""
    return make_table()
