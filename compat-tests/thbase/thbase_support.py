"""Shared settings, constructors and helpers for the thbase (Thrift2) suite.

Owns: reading the TABULA_* environment, opening thbase clients (thbase's own
Connection and its generated THBaseService client, so every byte on the wire is
produced and parsed by code this project did not generate), unique table and
namespace names, short constructors for the generated structs, and helpers that
turn TResults and scanners into plain Python values. It never talks to the server
by itself; fixtures in conftest.py do that.
"""

import os
import re
import struct
import uuid
from dataclasses import dataclass

from thbase.config import ClientConfig, ProtocolType, TransportType
from thbase.hbase.ttypes import (
    TColumn,
    TColumnFamilyDescriptor,
    TColumnValue,
    TTableDescriptor,
    TTableName,
)
from thbase.thrift2.client import Client

TRANSPORTS = {"buffered": TransportType.BUFFERED, "framed": TransportType.FRAMED}
PROTOCOLS = {"binary": ProtocolType.BINARY, "compact": ProtocolType.COMPACT}

# HBase's "forever" TTL (Integer.MAX_VALUE).
FOREVER_TTL = 2147483647
# Cell type code of a put (KeyValue.Type.Put), as HBase reports it in TColumnValue.type.
PUT_TYPE = 4

# Families every `table` fixture gets: cf1 keeps 10 versions, cf2 3, cf3 the
# HBase 2 default (maxVersions unset = 1).
DEFAULT_FAMILIES = {b"cf1": 10, b"cf2": 3, b"cf3": None}


@dataclass(frozen=True)
class Settings:
    """Where the Thrift2 server under test listens and how to speak to it."""

    host: str
    port: int
    transport: str
    protocol: str
    timeout_ms: int

    @property
    def address(self):
        return f"{self.host}:{self.port}"

    def describe(self):
        return (
            f"{self.address} (transport={self.transport}, "
            f"protocol={self.protocol}, timeout={self.timeout_ms} ms)"
        )


def load_settings(environ=None):
    """Read TABULA_HOST/THRIFT2_PORT/TRANSPORT/PROTOCOL/TIMEOUT_MS; ValueError if invalid."""
    env = os.environ if environ is None else environ
    host = env.get("TABULA_HOST", "127.0.0.1") or "127.0.0.1"
    port_text = env.get("TABULA_THRIFT2_PORT", "9091") or "9091"
    transport = (env.get("TABULA_TRANSPORT", "buffered") or "buffered").lower()
    protocol = (env.get("TABULA_PROTOCOL", "binary") or "binary").lower()
    timeout_text = env.get("TABULA_TIMEOUT_MS", "60000") or "60000"
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"TABULA_THRIFT2_PORT must be an integer, got {port_text!r}")
    if not 0 < port < 65536:
        raise ValueError(f"TABULA_THRIFT2_PORT must be in 1..65535, got {port}")
    if transport not in TRANSPORTS:
        raise ValueError(
            f"TABULA_TRANSPORT must be one of {', '.join(TRANSPORTS)}, got {transport!r}"
        )
    if protocol not in PROTOCOLS:
        raise ValueError(
            f"TABULA_PROTOCOL must be one of {', '.join(PROTOCOLS)}, got {protocol!r}"
        )
    try:
        timeout_ms = int(timeout_text)
    except ValueError:
        raise ValueError(f"TABULA_TIMEOUT_MS must be an integer, got {timeout_text!r}")
    if timeout_ms <= 0:
        raise ValueError(f"TABULA_TIMEOUT_MS must be positive, got {timeout_ms}")
    return Settings(host, port, transport, protocol, timeout_ms)


def _tsocket_of(transport):
    """The TSocket under thbase's buffered or framed transport (kept in a private slot)."""
    for attr in ("_TBufferedTransport__trans", "_TFramedTransport__trans"):
        inner = getattr(transport, attr, None)
        if inner is not None:
            return inner
    raise RuntimeError(f"cannot find the socket under {type(transport).__name__}")


def new_client(settings):
    """An unopened thbase Client (high-level API; `.client` is the generated
    THBaseService.Client). Retries are kept to one, one second apart, so a
    retriable error cannot stall the suite; the socket gets the settings' timeout."""
    conf = ClientConfig(
        thrift_host=settings.host,
        port=settings.port,
        retry_timeout=1,
        retry_times=1,
        connection_retry_times=1,
        connection_retry_timeout=1,
        transport_type=TRANSPORTS[settings.transport],
        protocol_type=PROTOCOLS[settings.protocol],
        batch_size=10,
    )
    client = Client(conf)
    _tsocket_of(client.connection.transport).setTimeout(settings.timeout_ms)
    return client


def open_client(settings):
    """A connected thbase Client; the transport's own exception on failure."""
    client = new_client(settings)
    client.connection.open()
    return client


_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]+")


def unique_name(prefix, hint="t"):
    """A name no other test (or earlier run) uses: <prefix>_<hint>_<random>."""
    cleaned = _UNSAFE_NAME_CHARS.sub("_", hint).strip("_")[:40] or "t"
    return f"{prefix}_{cleaned}_{uuid.uuid4().hex[:10]}"


def ttable_name(name):
    """b'ns:t' or b't' as a TTableName (namespace left unset for the default one)."""
    if isinstance(name, str):
        name = name.encode("utf-8")
    if b":" in name:
        ns, qualifier = name.split(b":", 1)
        return TTableName(ns=ns, qualifier=qualifier)
    return TTableName(qualifier=name)


def family(name, max_versions=None, **fields):
    """A TColumnFamilyDescriptor; unset fields take the server's defaults."""
    return TColumnFamilyDescriptor(name=name, maxVersions=max_versions, **fields)


def table_descriptor(name, families):
    """A TTableDescriptor for `name` (b'ns:t' or b't') with `families`
    ({b'cf': max_versions or None} or a list of TColumnFamilyDescriptor)."""
    if isinstance(families, dict):
        families = [family(f, mv) for f, mv in families.items()]
    return TTableDescriptor(tableName=ttable_name(name), columns=list(families))


def cv(fam, qualifier, value, ts=None):
    """A TColumnValue."""
    return TColumnValue(family=fam, qualifier=qualifier, value=value, timestamp=ts)


def col(fam, qualifier=None, ts=None):
    """A TColumn (no qualifier = the whole family for reads)."""
    return TColumn(family=fam, qualifier=qualifier, timestamp=ts)


def i64(value):
    """The 8-byte big-endian signed encoding HBase uses for counters."""
    return struct.pack(">q", value)


def cells(result):
    """A TResult's cells as [(family, qualifier, value, timestamp), ...] in wire order."""
    return [(c.family, c.qualifier, c.value, c.timestamp) for c in result.columnValues]


def cell_values(result):
    """A TResult's cells as [(b'family:qualifier', value), ...] in wire order."""
    return [(c.family + b":" + c.qualifier, c.value) for c in result.columnValues]


def timestamps(result, fam, qualifier):
    """Timestamps of one column's cells in a TResult, in wire order."""
    return [
        c.timestamp
        for c in result.columnValues
        if c.family == fam and c.qualifier == qualifier
    ]


def is_empty_result(result):
    """HBase's answer for a row with nothing to show: no row key, no cells."""
    return result.row is None and result.columnValues == []


def scan_all(service, table, tscan, batch=2):
    """openScanner, getScannerRows(batch) until `[]`, closeScanner; the TResults."""
    scanner_id = service.openScanner(table, tscan)
    out = []
    try:
        while True:
            chunk = service.getScannerRows(scanner_id, batch)
            if not chunk:
                break
            out.extend(chunk)
    finally:
        service.closeScanner(scanner_id)
    return out


def rows_of(results):
    """Row keys of TResults, in order."""
    return [r.row for r in results]
