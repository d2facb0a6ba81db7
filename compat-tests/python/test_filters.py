"""Server-side filter strings (HBase's filter language) passed through Table.scan."""

import struct

import pytest

from compat_support import TApplicationException, scan_list

ROWS = {
    b"other-d": {b"cf1:a1": b"aa", b"cf1:q": b"v"},
    b"row-a": {b"cf1:abc": b"hello world", b"cf1:q": b"v", b"cf2:x": b"1"},
    b"row-b": {b"cf1:apple": b"HELLO", b"cf1:q": b"w", b"cf1:zz": b"z"},
    b"row-c": {b"cf1:other": b"xyz"},
}


@pytest.fixture
def people(table):
    with table.batch() as batch:
        for key, data in ROWS.items():
            batch.put(key, data)
    return table


def _only(key, *columns):
    return (key, {column: ROWS[key][column] for column in columns})


def _whole(key):
    return (key, dict(ROWS[key]))


def _stripped(key):
    return (key, {column: b"" for column in ROWS[key]})


EXPECTED = {
    # Row-level test; rows lacking cf1:q pass because filterIfMissing defaults to false.
    "SingleColumnValueFilter ('cf1', 'q', =, 'binary:v')": [
        _whole(b"other-d"),
        _whole(b"row-a"),
        _whole(b"row-c"),
    ],
    "SingleColumnValueFilter('cf1', 'q', =, 'binary:v', true, true)": [
        _whole(b"other-d"),
        _whole(b"row-a"),
    ],
    "SingleColumnValueFilter('cf1', 'q', !=, 'binary:v')": [
        _whole(b"row-b"),
        _whole(b"row-c"),
    ],
    "SingleColumnValueExcludeFilter('cf1', 'q', =, 'binary:v', true, true)": [
        _only(b"other-d", b"cf1:a1"),
        _only(b"row-a", b"cf1:abc", b"cf2:x"),
    ],
    "PrefixFilter('row') AND QualifierFilter(=, 'regexstring:^a')": [
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:apple"),
    ],
    "PrefixFilter('row') AND (QualifierFilter(=, 'regexstring:^a') OR KeyOnlyFilter())": [
        _stripped(b"row-a"),
        _stripped(b"row-b"),
        _stripped(b"row-c"),
    ],
    "KeyOnlyFilter()": [_stripped(key) for key in sorted(ROWS)],
    "FirstKeyOnlyFilter()": [
        _only(b"other-d", b"cf1:a1"),
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:apple"),
        _only(b"row-c", b"cf1:other"),
    ],
    "ColumnPrefixFilter('a')": [
        _only(b"other-d", b"cf1:a1"),
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:apple"),
    ],
    "MultipleColumnPrefixFilter('ab', 'zz')": [
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:zz"),
    ],
    "QualifierFilter(=, 'binaryprefix:a')": [
        _only(b"other-d", b"cf1:a1"),
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:apple"),
    ],
    "ColumnRangeFilter('a', true, 'b', false)": [
        _only(b"other-d", b"cf1:a1"),
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:apple"),
    ],
    # substring comparisons ignore case.
    "ValueFilter(=, 'substring:hello')": [
        _only(b"row-a", b"cf1:abc"),
        _only(b"row-b", b"cf1:apple"),
    ],
    # regexstring finds the pattern anywhere and is case-sensitive.
    "ValueFilter(=, 'regexstring:ell')": [_only(b"row-a", b"cf1:abc")],
    "ValueFilter(=, 'regexstring:^h.*d$')": [_only(b"row-a", b"cf1:abc")],
    "ValueFilter(=, 'binary:v')": [
        _only(b"other-d", b"cf1:q"),
        _only(b"row-a", b"cf1:q"),
    ],
    # A cell passes when `cell value < 'w'` holds.
    "ValueFilter(<, 'binary:w')": [
        _only(b"other-d", b"cf1:a1", b"cf1:q"),
        _only(b"row-a", b"cf1:abc", b"cf1:q", b"cf2:x"),
        _only(b"row-b", b"cf1:apple"),
    ],
    "RowFilter(=, 'regexstring:^row-[ab]$')": [_whole(b"row-a"), _whole(b"row-b")],
    "RowFilter(>=, 'binary:row-b')": [_whole(b"row-b"), _whole(b"row-c")],
    "FamilyFilter(=, 'binary:cf2')": [_only(b"row-a", b"cf2:x")],
    "PageFilter(2)": [_whole(b"other-d"), _whole(b"row-a")],
    "ColumnPaginationFilter(1, 1)": [
        _only(b"other-d", b"cf1:q"),
        _only(b"row-a", b"cf1:q"),
        _only(b"row-b", b"cf1:q"),
    ],
    "InclusiveStopFilter('row-b')": [_whole(b"other-d"), _whole(b"row-a"), _whole(b"row-b")],
    "WHILE RowFilter(<, 'binary:row-b')": [_whole(b"other-d"), _whole(b"row-a")],
    "SKIP ValueFilter(!=, 'binary:w')": [_whole(b"other-d"), _whole(b"row-a"), _whole(b"row-c")],
}


@pytest.mark.parametrize("filter_string", list(EXPECTED))
def test_filter_string(people, filter_string):
    assert scan_list(people, filter=filter_string.encode("ascii")) == EXPECTED[filter_string]


def test_key_only_filter_with_length_as_value(people):
    expected = [
        (key, {column: struct.pack(">i", len(value)) for column, value in ROWS[key].items()})
        for key in sorted(ROWS)
    ]
    assert scan_list(people, filter=b"KeyOnlyFilter(true)") == expected


def test_filter_combined_with_prefix_and_columns(people):
    assert scan_list(
        people, row_prefix=b"row", columns=[b"cf1"], filter=b"ValueFilter(=, 'binary:v')"
    ) == [_only(b"row-a", b"cf1:q")]


def test_filter_with_reverse_scan(people):
    assert scan_list(people, reverse=True, filter=b"ColumnPrefixFilter('a')") == [
        _only(b"row-b", b"cf1:apple"),
        _only(b"row-a", b"cf1:abc"),
        _only(b"other-d", b"cf1:a1"),
    ]


def test_filter_with_limit_and_batch_size(people):
    assert scan_list(people, filter=b"KeyOnlyFilter()", batch_size=1, limit=2) == [
        _stripped(b"other-d"),
        _stripped(b"row-a"),
    ]


def test_quoted_literal_with_doubled_quote(table):
    table.put(b"r1", {b"cf1:q": b"it's"})
    table.put(b"r2", {b"cf1:q": b"its"})
    assert scan_list(table, filter=b"ValueFilter(=, 'binary:it''s')") == [(b"r1", {b"cf1:q": b"it's"})]


def test_binary_bytes_inside_quoted_literal(table):
    table.put(b"r1", {b"cf1:q": b"\xff\xfe"})
    table.put(b"r2", {b"cf1:q": b"\xff\xfd"})
    assert scan_list(table, filter=b"ValueFilter(=, 'binary:\xff\xfe')") == [
        (b"r1", {b"cf1:q": b"\xff\xfe"})
    ]


def test_timestamps_filter_keeps_listed_versions(table):
    for ts in (10, 20, 30):
        table.put(b"r", {b"cf1:c": b"v%d" % ts}, timestamp=ts)
    table.put(b"s", {b"cf1:c": b"other"}, timestamp=25)
    assert scan_list(table, filter=b"TimestampsFilter(10, 20)", include_timestamp=True) == [
        (b"r", {b"cf1:c": (b"v20", 20)})
    ]


@pytest.mark.parametrize(
    "bad_filter",
    [
        b"NoSuchFilter()",
        b"PrefixFilter('row'",
        b"ValueFilter(=, 'nosuchcomparator:x')",
    ],
    ids=["unknown-name", "unbalanced", "unknown-comparator"],
)
def test_malformed_filter_raises_application_exception(people, bad_filter):
    with pytest.raises(TApplicationException) as raised:
        scan_list(people, filter=bad_filter)
    assert raised.value.type == TApplicationException.INTERNAL_ERROR
    assert [key for key, _ in people.scan(filter=b"PrefixFilter('row-c')")] == [b"row-c"]
