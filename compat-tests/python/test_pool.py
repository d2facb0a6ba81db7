"""happybase.ConnectionPool against the server: reuse, size limit, and recovery
after a server-side error (the pool replaces the connection and re-raises)."""

import threading

import happybase
import pytest

from compat_support import HBaseIOError, TApplicationException, TException, scan_keys


def test_pool_connection_serves_calls(pool, table):
    with pool.connection() as conn:
        assert isinstance(conn, happybase.Connection)
        assert table.name in conn.tables()
        conn.table(table.name).put(b"r", {b"cf1:c": b"v"})
    assert table.row(b"r") == {b"cf1:c": b"v"}


def test_nested_pool_requests_on_one_thread_share_the_connection(pool, table):
    with pool.connection() as outer:
        with pool.connection() as inner:
            assert inner is outer
            assert table.name in inner.tables()


def test_single_connection_pool_reuses_its_connection(tabula_server, table):
    single = happybase.ConnectionPool(size=1, **tabula_server.connection_kwargs())
    with single.connection() as first:
        first.tables()
    with single.connection() as second:
        assert second is first
        assert table.name in second.tables()
    second.close()


def test_pool_hands_out_at_most_size_connections(tabula_server, table):
    limited = happybase.ConnectionPool(size=2, **tabula_server.connection_kwargs())
    holding = threading.Event()
    release = threading.Event()
    outcome = {}

    def hold():
        with limited.connection() as conn:
            outcome["holder"] = table.name in conn.tables()
            holding.set()
            release.wait(timeout=60)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert holding.wait(timeout=60)
        with limited.connection() as mine:
            assert table.name in mine.tables()
            waiter_error = []

            def try_third():
                try:
                    with limited.connection(timeout=0.2):
                        pass
                except happybase.NoConnectionsAvailable as exc:
                    waiter_error.append(exc)

            third = threading.Thread(target=try_third)
            third.start()
            third.join(timeout=30)
            assert len(waiter_error) == 1
    finally:
        release.set()
        holder.join(timeout=60)
    assert outcome["holder"] is True
    with limited.connection(timeout=5) as again:
        assert table.name in again.tables()


def test_pool_survives_server_io_error(pool, table, table_names):
    missing = table_names()
    with pytest.raises(HBaseIOError):
        with pool.connection() as conn:
            conn.table(missing).row(b"r")
    with pool.connection() as conn:
        assert table.name in conn.tables()
        conn.table(table.name).put(b"r", {b"cf1:c": b"after-error"})
    assert table.row(b"r") == {b"cf1:c": b"after-error"}


def test_pool_survives_application_exception(pool, table):
    table.put(b"r", {b"cf1:c": b"v"})
    with pytest.raises(TApplicationException):
        with pool.connection() as conn:
            list(conn.table(table.name).scan(filter=b"NoSuchFilter()"))
    with pool.connection() as conn:
        assert scan_keys(conn.table(table.name)) == [b"r"]


def test_pool_replaces_a_connection_whose_transport_broke(pool, table):
    with pytest.raises(TException):
        with pool.connection() as conn:
            conn.transport.close()
            raise TException("simulated transport failure")
    for _ in range(5):
        with pool.connection() as conn:
            assert table.name in conn.tables()


def test_pool_shared_by_threads(pool, table):
    failures = []

    def worker(worker_id):
        try:
            for i in range(25):
                with pool.connection() as conn:
                    conn.table(table.name).put(b"w%d-%02d" % (worker_id, i), {b"cf1:n": b"%d" % i})
        except Exception as exc:  # recorded and asserted below
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert failures == []
    keys = scan_keys(table)
    assert len(keys) == 200
    assert keys == sorted(b"w%d-%02d" % (w, i) for w in range(8) for i in range(25))
