"""Bytes are bytes: non-UTF-8 keys, qualifiers and values, unsigned key order,
large values and long keys round-trip unchanged."""

import random

import pytest

from compat_support import scan_keys, scan_list

ODD_KEYS = [
    b"\x00",
    b"\x00\x00",
    b"\x00\x01",
    b"\x01",
    b"\x7f",
    b"\x80",
    b"a",
    b"a\x00",
    b"aa",
    b"\xfe\xff",
    b"\xff",
    b"\xff\x00",
    b"\xff\xff",
]


@pytest.fixture
def odd_keys(table):
    shuffled = list(ODD_KEYS)
    random.Random(7).shuffle(shuffled)
    for key in shuffled:
        table.put(key, {b"cf1:k": key})
    return table


def test_keys_sort_as_unsigned_bytes(odd_keys):
    assert scan_keys(odd_keys) == sorted(ODD_KEYS)
    assert scan_list(odd_keys, limit=2) == [(b"\x00", {b"cf1:k": b"\x00"}), (b"\x00\x00", {b"cf1:k": b"\x00\x00"})]


def test_reverse_scan_over_binary_keys(odd_keys):
    assert scan_keys(odd_keys, reverse=True) == sorted(ODD_KEYS, reverse=True)


def test_binary_range_bounds(odd_keys):
    assert scan_keys(odd_keys, row_start=b"\x00\x00", row_stop=b"\x80") == [
        key for key in sorted(ODD_KEYS) if b"\x00\x00" <= key < b"\x80"
    ]
    assert scan_keys(odd_keys, row_start=b"\x80") == [key for key in sorted(ODD_KEYS) if key >= b"\x80"]


def test_prefix_of_zero_and_ff_bytes(odd_keys):
    assert scan_keys(odd_keys, row_prefix=b"\x00") == [b"\x00", b"\x00\x00", b"\x00\x01"]
    assert scan_keys(odd_keys, row_prefix=b"\xff") == [b"\xff", b"\xff\x00", b"\xff\xff"]
    assert scan_keys(odd_keys, row_prefix=b"\xff\xff") == [b"\xff\xff"]


def test_rows_with_binary_keys(odd_keys):
    assert odd_keys.rows([b"\xff\xff", b"\x00", b"\x00\x02"]) == [
        (b"\xff\xff", {b"cf1:k": b"\xff\xff"}),
        (b"\x00", {b"cf1:k": b"\x00"}),
    ]


def test_every_byte_value_in_key_qualifier_and_value(table):
    all_bytes = bytes(range(256))
    column = b"cf1:" + all_bytes
    table.put(all_bytes, {column: all_bytes[::-1]})
    assert table.row(all_bytes) == {column: all_bytes[::-1]}
    assert table.cells(all_bytes, column) == [all_bytes[::-1]]
    assert scan_list(table) == [(all_bytes, {column: all_bytes[::-1]})]
    assert scan_list(table, sorted_columns=True)[0][1] == {column: all_bytes[::-1]}


def test_non_utf8_qualifiers_sort_as_unsigned_bytes(table):
    qualifiers = [b"\xff", b"\x00", b"\x80\x81", b"z", b"\xc3\x28"]
    table.put(b"r", {b"cf1:" + q: q for q in qualifiers})
    [(_, row)] = scan_list(table, sorted_columns=True)
    assert list(row) == [b"cf1:" + q for q in sorted(qualifiers)]
    assert table.row(b"r", columns=[b"cf1:\xff", b"cf1:\x00"]) == {b"cf1:\xff": b"\xff", b"cf1:\x00": b"\x00"}


def test_text_arguments_are_sent_as_bytes(table):
    table.put("plain-key", {"cf1:plain": "plain value"})
    assert table.row(b"plain-key") == {b"cf1:plain": b"plain value"}
    assert table.row("plain-key", columns=["cf1:plain"]) == {b"cf1:plain": b"plain value"}
    assert scan_keys(table, row_prefix=b"plain") == [b"plain-key"]


def test_non_ascii_text_arguments_are_sent_as_utf8(settings, table):
    if settings.protocol == "compact":
        pytest.skip(
            "thriftpy2's compact writer sizes a text value by characters, not by "
            "its UTF-8 bytes, so non-ASCII text corrupts the request stream"
        )
    table.put("ключ", {"cf1:名前": "значение"})
    assert table.row("ключ".encode("utf-8")) == {"cf1:名前".encode("utf-8"): "значение".encode("utf-8")}
    assert scan_keys(table) == ["ключ".encode("utf-8")]


def test_one_mebibyte_value_round_trips(table):
    value = random.Random(1).randbytes(1024 * 1024)
    table.put(b"big", {b"cf1:blob": value})
    assert table.row(b"big") == {b"cf1:blob": value}
    assert table.cells(b"big", b"cf1:blob") == [value]
    assert scan_list(table) == [(b"big", {b"cf1:blob": value})]


def test_several_large_values_in_one_row_and_scan(table):
    rng = random.Random(2)
    data = {b"cf1:part-%d" % i: rng.randbytes(256 * 1024) for i in range(4)}
    table.put(b"r1", data)
    table.put(b"r2", {b"cf2:small": b"s"})
    assert table.row(b"r1") == data
    assert scan_list(table, batch_size=1) == [(b"r1", data), (b"r2", {b"cf2:small": b"s"})]


def test_long_row_key(table):
    key = random.Random(3).randbytes(10000)
    table.put(key, {b"cf1:c": b"v"})
    assert table.row(key) == {b"cf1:c": b"v"}
    assert scan_keys(table) == [key]
