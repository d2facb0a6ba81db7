"""Shared settings, exception classes and small helpers for the happybase suite.

Owns: reading the TABULA_* environment, the happybase keyword arguments derived
from it, the Thrift exception classes tests assert on, unique table names, and
helpers that turn scans into lists. It never talks to the server by itself;
fixtures in conftest.py do that.
"""

import os
import re
import struct
import uuid
from dataclasses import dataclass

import happybase  # noqa: F401  (loads the Hbase_thrift module)
from Hbase_thrift import AlreadyExists, IllegalArgument, TScan
from Hbase_thrift import IOError as HBaseIOError
from thriftpy2.thrift import TApplicationException, TException

__all__ = [
    "AlreadyExists",
    "DEFAULT_FAMILIES",
    "FOREVER_TTL",
    "HBaseIOError",
    "IllegalArgument",
    "Settings",
    "TApplicationException",
    "TException",
    "TScan",
    "default_descriptor",
    "i64",
    "load_settings",
    "scan_keys",
    "scan_list",
    "unique_table_name",
]

TRANSPORTS = ("buffered", "framed")
PROTOCOLS = ("binary", "compact")

# Families every `table` fixture gets: cf1 keeps 10 versions, cf2 the
# ColumnDescriptor default (3), cf3 a single version.
DEFAULT_FAMILIES = {
    "cf1": {"max_versions": 10},
    "cf2": {},
    "cf3": {"max_versions": 1},
}

# What HBase reports as time_to_live for a family created with TTL <= 0
# (happybase sends -1 unless told otherwise): Integer.MAX_VALUE, "forever".
FOREVER_TTL = 2147483647


@dataclass(frozen=True)
class Settings:
    """Where the server under test listens and how to speak to it."""

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

    def connection_kwargs(self, **overrides):
        """Keyword arguments for happybase.Connection / ConnectionPool."""
        kwargs = dict(
            host=self.host,
            port=self.port,
            transport=self.transport,
            protocol=self.protocol,
            timeout=self.timeout_ms,
        )
        kwargs.update(overrides)
        return kwargs


def load_settings(environ=None):
    """Read TABULA_HOST/PORT/TRANSPORT/PROTOCOL/TIMEOUT_MS; ValueError if invalid."""
    env = os.environ if environ is None else environ
    host = env.get("TABULA_HOST", "127.0.0.1") or "127.0.0.1"
    port_text = env.get("TABULA_PORT", "9090") or "9090"
    transport = (env.get("TABULA_TRANSPORT", "buffered") or "buffered").lower()
    protocol = (env.get("TABULA_PROTOCOL", "binary") or "binary").lower()
    timeout_text = env.get("TABULA_TIMEOUT_MS", "60000") or "60000"
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"TABULA_PORT must be an integer, got {port_text!r}")
    if not 0 < port < 65536:
        raise ValueError(f"TABULA_PORT must be in 1..65535, got {port}")
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


_UNSAFE_NAME_CHARS = re.compile(r"[^A-Za-z0-9_]+")


def unique_table_name(hint="t"):
    """A table name no other test (or earlier run) uses: compat_<hint>_<random>."""
    cleaned = _UNSAFE_NAME_CHARS.sub("_", hint).strip("_")[:40] or "t"
    return f"compat_{cleaned}_{uuid.uuid4().hex[:10]}".encode("ascii")


def i64(value):
    """The 8-byte big-endian signed encoding HBase uses for counters."""
    return struct.pack(">q", value)


def default_descriptor(family, max_versions=3):
    """families() entry HBase reports for a family created with happybase defaults."""
    return {
        "name": family + b":",
        "max_versions": max_versions,
        "compression": b"NONE",
        "in_memory": False,
        "bloom_filter_type": b"NONE",
        "bloom_filter_vector_size": 0,
        "bloom_filter_nb_hashes": 0,
        "block_cache_enabled": False,
        "time_to_live": FOREVER_TTL,
    }


def scan_list(table, **kwargs):
    """Run Table.scan to completion and return [(key, row), ...]."""
    return list(table.scan(**kwargs))


def scan_keys(table, **kwargs):
    """Row keys a scan returns, in order."""
    return [key for key, _ in table.scan(**kwargs)]
