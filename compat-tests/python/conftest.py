"""Fixtures for the happybase compatibility suite.

Owns: the one-time reachability probe of the server under test, per-test
connections, uniquely named tables with cf1/cf2/cf3 (dropped afterwards), and a
connection pool. Every fixture that needs the server goes through
`tabula_server`, which fails with "cannot connect to Tabula at host:port" when
nothing answers, so a missing server is one clear message rather than a hang.
"""

import contextlib
import queue
import socket

import happybase
import pytest

from compat_support import (
    DEFAULT_FAMILIES,
    TException,
    load_settings,
    unique_table_name,
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
    return f"happybase {happybase.__version__} against {settings.describe()}"


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
            f"cannot connect to Tabula at {settings.address}: {connect_error}. "
            "Start the server, or point TABULA_HOST / TABULA_PORT at it.",
            pytrace=False,
        )

    call_error = None
    conn = happybase.Connection(
        **settings.connection_kwargs(timeout=PROBE_CALL_TIMEOUT_MS, autoconnect=False)
    )
    try:
        conn.open()
        conn.tables()
    except (TException, OSError) as exc:
        call_error = exc
    finally:
        conn.close()
    if call_error is not None:
        pytest.fail(
            f"cannot talk to Tabula at {settings.address}: the TCP connection was "
            f"accepted but getTableNames over transport={settings.transport} "
            f"protocol={settings.protocol} failed: {call_error!r}. Check "
            "TABULA_TRANSPORT and TABULA_PROTOCOL against the server's mode.",
            pytrace=False,
        )


@pytest.fixture(scope="session")
def tabula_server(settings):
    """The verified server settings; a failure here is cached for the session."""
    _probe(settings)
    return settings


@contextlib.contextmanager
def _admin(settings):
    conn = happybase.Connection(**settings.connection_kwargs())
    try:
        yield conn
    finally:
        conn.close()


def _drop_tables(settings, names):
    """Delete whichever of `names` still exist; teardown must not mask test results."""
    if not names:
        return
    with _admin(settings) as admin:
        existing = set(admin.tables())
        for name in names:
            if name in existing:
                admin.delete_table(name, disable=True)


@pytest.fixture
def connection_factory(tabula_server):
    """Open extra Connections (closed at teardown); keyword overrides allowed."""
    opened = []

    def _open(**overrides):
        conn = happybase.Connection(**tabula_server.connection_kwargs(**overrides))
        opened.append(conn)
        return conn

    yield _open
    for conn in opened:
        conn.close()


@pytest.fixture
def connection(connection_factory):
    """A fresh, open happybase.Connection to the server under test."""
    return connection_factory()


class TableNames:
    """Unique table names for one test; every name handed out or registered is
    dropped at teardown if it still exists."""

    def __init__(self, default_hint):
        self._default_hint = default_hint
        self.names = []

    def __call__(self, hint=None):
        name = unique_table_name(hint or self._default_hint)
        self.names.append(name)
        return name

    def register(self, name):
        """Also clean up `name` (a full, prefixed name created some other way)."""
        self.names.append(name)
        return name


@pytest.fixture
def table_names(tabula_server, request):
    """Hand out unique (unprefixed) table names; any that exist afterwards are dropped."""
    names = TableNames(request.node.name)
    yield names
    _drop_tables(tabula_server, names.names)


@pytest.fixture
def make_table(tabula_server, connection, table_names):
    """Create a uniquely named table (default families cf1/cf2/cf3) bound to `connection`."""

    def _make(families=None, hint=None):
        name = table_names(hint)
        with _admin(tabula_server) as admin:
            admin.create_table(name, families if families is not None else DEFAULT_FAMILIES)
        return connection.table(name)

    return _make


@pytest.fixture
def table(make_table):
    """A new empty table with cf1 (10 versions), cf2 (3 versions), cf3 (1 version)."""
    return make_table()


@pytest.fixture
def pool(tabula_server):
    """A ConnectionPool of three connections to the server under test."""
    connection_pool = happybase.ConnectionPool(size=3, **tabula_server.connection_kwargs())
    yield connection_pool
    while True:
        try:
            conn = connection_pool._queue.get_nowait()
        except queue.Empty:
            break
        conn.close()
