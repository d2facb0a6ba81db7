//! The HBase filter language over Thrift1 `scannerOpenWithScan` (`TScan.filterString`)
//! against the real `tabula` binary: every registered filter, every comparator and
//! compare operator, AND/OR precedence, parentheses, SKIP, WHILE, quoting, and the
//! errors a bad filter string gets (INTERNAL_ERROR naming the problem, connection
//! still usable).
//!
//! Results are shown as one line per returned row: the row key, then
//! `family:qualifier=value` for each column in column order (`@ts` appended where the
//! version matters). Thrift1 scans return one version per column; with a filter,
//! HBase 2 applies that limit after the filter, so a filter may pick an older version.

mod common;

use common::*;
use tabula_thrift::hbase::{THbaseSyncClient, TRowResult, TScan};
use thrift::ApplicationErrorKind;

/// The start of every INTERNAL_ERROR message of this call.
const OPEN_ERROR: &str = "Internal error processing scannerOpenWithScan: ";

/// A TScan carrying only a filter string.
fn with_filter(filter: &[u8]) -> TScan {
    TScan {
        filter_string: Some(filter.to_vec()),
        ..tscan()
    }
}

/// Every result of a scan with `filter` (raw bytes), drained `n` rows at a time.
fn scan_bytes(c: &mut Client, t: &[u8], filter: &[u8], n: i32) -> Vec<TRowResult> {
    let id = c
        .scanner_open_with_scan(t.to_vec(), with_filter(filter), no_attrs())
        .unwrap_or_else(|e| panic!("{:?} was refused: {e:?}", text(filter)));
    drain(c, id, n)
}

/// Every result of a scan with `filter`.
fn scan(c: &mut Client, t: &[u8], filter: &str) -> Vec<TRowResult> {
    scan_bytes(c, t, filter.as_bytes(), 100)
}

/// One line per result: `row fam:qual=value ...`.
fn render(results: &[TRowResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let mut line = text(r.row.as_deref().unwrap_or_default());
            for (column, value) in columns_of(r) {
                line.push_str(&format!(" {column}={value}"));
            }
            line
        })
        .collect()
}

/// One line per result with timestamps: `row fam:qual=value@ts ...`.
fn render_ts(results: &[TRowResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| {
            let mut line = text(r.row.as_deref().unwrap_or_default());
            for (column, (value, ts)) in columns_ts_of(r) {
                line.push_str(&format!(" {column}={value}@{ts}"));
            }
            line
        })
        .collect()
}

/// The rendered result of a scan with `filter`.
fn show(c: &mut Client, t: &[u8], filter: &str) -> Vec<String> {
    render(&scan(c, t, filter))
}

/// The rendered result with timestamps.
fn show_ts(c: &mut Client, t: &[u8], filter: &str) -> Vec<String> {
    render_ts(&scan(c, t, filter))
}

/// The row keys a scan with `filter` returns.
fn keys(c: &mut Client, t: &[u8], filter: &str) -> Vec<String> {
    rows_of(&scan(c, t, filter))
}

/// Raw values of one result: `family:qualifier` -> bytes.
fn raw_values(r: &TRowResult) -> Vec<(String, Vec<u8>)> {
    r.columns
        .as_ref()
        .map(|m| {
            m.iter()
                .map(|(k, cell)| (text(k), cell.value.as_deref().unwrap_or_default().to_vec()))
                .collect()
        })
        .unwrap_or_default()
}

/// One put of raw bytes (mutateRow).
fn put_raw(c: &mut Client, t: &[u8], row: &[u8], column: &str, value: &[u8]) {
    c.mutate_row(
        t.to_vec(),
        row.to_vec(),
        vec![put_m(column, value)],
        no_attrs(),
    )
    .expect("mutateRow");
}

/// Opens a scan with a bad filter string, checks it is refused with INTERNAL_ERROR and
/// a message saying why, that the connection still answers and still runs a good
/// filtered scan; returns the message after the standard prefix.
fn refused(c: &mut Client, t: &[u8], filter: &[u8]) -> String {
    let shown = text(filter);
    let a = match c.scanner_open_with_scan(t.to_vec(), with_filter(filter), no_attrs()) {
        Ok(id) => {
            let got = render(&drain(c, id, 100));
            panic!("{shown:?} was accepted (rows {got:?}); it must be refused");
        }
        other => app_error(other),
    };
    assert_eq!(a.kind, ApplicationErrorKind::InternalError, "{shown:?}");
    let Some(why) = a.message.strip_prefix(OPEN_ERROR) else {
        panic!("{shown:?}: unexpected message {:?}", a.message);
    };
    assert!(
        !why.trim().is_empty(),
        "{shown:?}: the message names the problem"
    );
    assert_usable(c);
    let id = c
        .scanner_open_with_scan(t.to_vec(), with_filter(b"KeyOnlyFilter()"), no_attrs())
        .unwrap_or_else(|e| panic!("a good scan after {shown:?} failed: {e:?}"));
    drain(c, id, 100);
    why.to_string()
}

/// Rows `a`..`d`, each with cf:x = row key, cf:y = "y", other:z = "z".
fn four_rows(prefix: &str) -> (Client, Vec<u8>) {
    let (mut c, t) = fresh_table(prefix, &["cf", "other"]);
    for r in ["a", "b", "c", "d"] {
        put(
            &mut c,
            &t,
            r,
            &[("cf:x", r), ("cf:y", "y"), ("other:z", "z")],
        );
    }
    (c, t)
}

#[test]
fn key_only_filter_strips_values() {
    let (mut c, t) = fresh_table("f_keyonly", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[("cf:x", "hello"), ("cf:e", ""), ("other:z", "zz")],
    );
    put(&mut c, &t, "b", &[("cf:y", "0123456789")]);
    assert_eq!(
        show(&mut c, &t, "KeyOnlyFilter()"),
        ["a cf:e= cf:x= other:z=", "b cf:y="]
    );
    assert_eq!(
        show(&mut c, &t, "KeyOnlyFilter(false)"),
        ["a cf:e= cf:x= other:z=", "b cf:y="]
    );
    // Timestamps are kept.
    let id = c
        .scanner_open_with_scan(t.clone(), tscan(), no_attrs())
        .unwrap();
    let plain = drain(&mut c, id, 100);
    let stripped = scan(&mut c, &t, "KeyOnlyFilter()");
    let stamps = |rs: &[TRowResult]| -> Vec<Vec<(String, i64)>> {
        rs.iter()
            .map(|r| {
                columns_ts_of(r)
                    .into_iter()
                    .map(|(k, (_, ts))| (k, ts))
                    .collect()
            })
            .collect()
    };
    assert_eq!(stamps(&stripped), stamps(&plain));

    for with_length in ["KeyOnlyFilter(true)", "KeyOnlyFilter(TRUE)"] {
        let got = scan(&mut c, &t, with_length);
        assert_eq!(rows_of(&got), ["a", "b"], "{with_length}");
        assert_eq!(
            raw_values(&got[0]),
            vec![
                ("cf:e".to_string(), vec![0, 0, 0, 0]),
                ("cf:x".to_string(), vec![0, 0, 0, 5]),
                ("other:z".to_string(), vec![0, 0, 0, 2]),
            ],
            "{with_length}: the value is the 4-byte big-endian length"
        );
        assert_eq!(
            raw_values(&got[1]),
            vec![("cf:y".to_string(), vec![0, 0, 0, 10])],
            "{with_length}"
        );
    }
}

#[test]
fn first_key_only_filter_returns_the_first_cell_of_each_row() {
    let (mut c, t) = fresh_table("f_firstkey", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[("cf:y", "ay"), ("cf:x", "ax"), ("other:z", "az")],
    );
    put(&mut c, &t, "b", &[("other:z", "bz"), ("other:w", "bw")]);
    put(&mut c, &t, "c", &[("cf:m", "cm")]);
    assert_eq!(
        show(&mut c, &t, "FirstKeyOnlyFilter()"),
        ["a cf:x=ax", "b other:w=bw", "c cf:m=cm"]
    );
}

#[test]
fn prefix_filter_keeps_rows_starting_with_the_prefix() {
    let (mut c, t) = fresh_table("f_prefix", &["cf"]);
    for r in ["a", "ab", "abc", "abd", "ac", "b", "ba"] {
        put(&mut c, &t, r, &[("cf:x", r)]);
    }
    assert_eq!(keys(&mut c, &t, "PrefixFilter('ab')"), ["ab", "abc", "abd"]);
    assert_eq!(keys(&mut c, &t, "PrefixFilter('b')"), ["b", "ba"]);
    assert_eq!(
        keys(&mut c, &t, "PrefixFilter('')"),
        ["a", "ab", "abc", "abd", "ac", "b", "ba"]
    );
    assert!(keys(&mut c, &t, "PrefixFilter('abcd')").is_empty());
    assert!(keys(&mut c, &t, "PrefixFilter('0')").is_empty());
    assert_eq!(
        show(&mut c, &t, "PrefixFilter('abc')"),
        ["abc cf:x=abc"],
        "whole rows"
    );
}

#[test]
fn column_prefix_filter_keeps_matching_qualifiers() {
    let (mut c, t) = fresh_table("f_colprefix", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[
            ("cf:apple", "1"),
            ("cf:apricot", "2"),
            ("cf:banana", "3"),
            ("cf:a", "4"),
            ("other:ape", "5"),
            ("other:zap", "6"),
        ],
    );
    put(&mut c, &t, "b", &[("cf:banana", "7")]);
    assert_eq!(
        show(&mut c, &t, "ColumnPrefixFilter('ap')"),
        ["a cf:apple=1 cf:apricot=2 other:ape=5"],
        "every family is searched; rows without a match are left out"
    );
    assert_eq!(
        show(&mut c, &t, "ColumnPrefixFilter('apr')"),
        ["a cf:apricot=2"]
    );
    assert_eq!(
        show(&mut c, &t, "ColumnPrefixFilter('banana')"),
        ["a cf:banana=3", "b cf:banana=7"]
    );
    assert!(show(&mut c, &t, "ColumnPrefixFilter('q')").is_empty());
}

#[test]
fn multiple_column_prefix_filter_keeps_qualifiers_matching_any_prefix() {
    let (mut c, t) = fresh_table("f_multiprefix", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[
            ("cf:apple", "1"),
            ("cf:banana", "2"),
            ("cf:cherry", "3"),
            ("cf:date", "4"),
            ("other:blue", "5"),
        ],
    );
    put(&mut c, &t, "b", &[("cf:date", "6")]);
    assert_eq!(
        show(&mut c, &t, "MultipleColumnPrefixFilter('ap', 'b')"),
        ["a cf:apple=1 cf:banana=2 other:blue=5"]
    );
    assert_eq!(
        show(&mut c, &t, "MultipleColumnPrefixFilter('d', 'cher', 'zz')"),
        ["a cf:cherry=3 cf:date=4", "b cf:date=6"]
    );
    assert_eq!(
        show(&mut c, &t, "MultipleColumnPrefixFilter('date')"),
        ["a cf:date=4", "b cf:date=6"]
    );
}

#[test]
fn multiple_column_prefix_filter_without_prefixes_passes_every_cell() {
    // HBase's parser takes any number of prefixes, and an empty prefix set includes
    // every cell.
    let (mut c, t) = fresh_table("f_multiprefix_none", &["cf"]);
    put(&mut c, &t, "a", &[("cf:apple", "1"), ("cf:banana", "2")]);
    assert_eq!(
        show(&mut c, &t, "MultipleColumnPrefixFilter()"),
        ["a cf:apple=1 cf:banana=2"]
    );
}

#[test]
fn column_count_get_filter_takes_the_first_columns_then_ends_the_scan() {
    let (mut c, t) = fresh_table("f_colcount", &["cf"]);
    put(&mut c, &t, "a", &[("cf:1", "a1"), ("cf:2", "a2")]);
    put(
        &mut c,
        &t,
        "b",
        &[("cf:1", "b1"), ("cf:2", "b2"), ("cf:3", "b3")],
    );
    put(&mut c, &t, "c", &[("cf:1", "c1")]);
    for n in [1, 100] {
        let got = render(&scan_bytes(&mut c, &t, b"ColumnCountGetFilter(2)", n));
        assert_eq!(
            got,
            ["a cf:1=a1 cf:2=a2", "b cf:1=b1 cf:2=b2"],
            "row b goes past the limit, which ends the scan after it (batches of {n})"
        );
    }
    assert_eq!(
        show(&mut c, &t, "ColumnCountGetFilter(3)"),
        [
            "a cf:1=a1 cf:2=a2",
            "b cf:1=b1 cf:2=b2 cf:3=b3",
            "c cf:1=c1"
        ]
    );
    assert_eq!(
        show(&mut c, &t, "ColumnCountGetFilter(1)"),
        ["a cf:1=a1"],
        "the second cell of row a is past the limit"
    );
}

#[test]
fn page_filter_limits_the_rows_of_the_scan() {
    let (mut c, t) = fresh_table("f_page", &["cf"]);
    for i in 0..10 {
        put(
            &mut c,
            &t,
            &format!("r{i}"),
            &[("cf:x", if i % 2 == 1 { "keep" } else { "drop" })],
        );
    }
    for n in [1, 2, 100] {
        assert_eq!(
            rows_of(&scan_bytes(&mut c, &t, b"PageFilter(3)", n)),
            ["r0", "r1", "r2"],
            "batches of {n}"
        );
    }
    assert!(keys(&mut c, &t, "PageFilter(0)").is_empty());
    assert_eq!(keys(&mut c, &t, "PageFilter(10)").len(), 10);
    assert_eq!(keys(&mut c, &t, "PageFilter(2147483648)").len(), 10);
    // Only rows that survive the other filters count towards the page.
    assert_eq!(
        keys(
            &mut c,
            &t,
            "ValueFilter(=, 'binary:keep') AND PageFilter(2)"
        ),
        ["r1", "r3"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "PrefixFilter('r5') OR PrefixFilter('r7') AND PageFilter(1)"
        ),
        ["r5", "r7"]
    );
}

#[test]
fn column_pagination_filter_pages_through_the_columns_of_each_row() {
    let (mut c, t) = fresh_table("f_colpage", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[
            ("cf:q1", "v1"),
            ("cf:q2", "v2"),
            ("cf:q3", "v3"),
            ("cf:q4", "v4"),
            ("cf:q5", "v5"),
        ],
    );
    put(&mut c, &t, "b", &[("cf:q1", "b1")]);
    put(
        &mut c,
        &t,
        "c",
        &[("cf:q1", "c1"), ("cf:q2", "c2"), ("cf:q3", "c3")],
    );
    put(
        &mut c,
        &t,
        "d",
        &[
            ("cf:a", "d1"),
            ("cf:b", "d2"),
            ("other:c", "d3"),
            ("other:d", "d4"),
        ],
    );
    assert_eq!(
        show(&mut c, &t, "ColumnPaginationFilter(2, 1)"),
        [
            "a cf:q2=v2 cf:q3=v3",
            "c cf:q2=c2 cf:q3=c3",
            "d cf:b=d2 other:c=d3"
        ],
        "the offset skips b's only column; columns count across families"
    );
    assert_eq!(
        show(&mut c, &t, "ColumnPaginationFilter(2, 0)"),
        [
            "a cf:q1=v1 cf:q2=v2",
            "b cf:q1=b1",
            "c cf:q1=c1 cf:q2=c2",
            "d cf:a=d1 cf:b=d2"
        ]
    );
    assert_eq!(
        show(&mut c, &t, "ColumnPaginationFilter(10, 3)"),
        ["a cf:q4=v4 cf:q5=v5", "d other:d=d4"]
    );
    assert!(show(&mut c, &t, "ColumnPaginationFilter(0, 0)").is_empty());
}

#[test]
fn inclusive_stop_filter_includes_the_stop_row() {
    let (mut c, t) = fresh_table("f_inclstop", &["cf"]);
    for r in ["a", "b", "ba", "c"] {
        put(&mut c, &t, r, &[("cf:x", r)]);
    }
    assert_eq!(keys(&mut c, &t, "InclusiveStopFilter('b')"), ["a", "b"]);
    assert_eq!(
        keys(&mut c, &t, "InclusiveStopFilter('bb')"),
        ["a", "b", "ba"]
    );
    assert_eq!(
        keys(&mut c, &t, "InclusiveStopFilter('z')"),
        ["a", "b", "ba", "c"]
    );
    assert!(keys(&mut c, &t, "InclusiveStopFilter('0')").is_empty());
    let scan_from_b = TScan {
        start_row: Some(b"b".to_vec()),
        ..with_filter(b"InclusiveStopFilter('ba')")
    };
    let id = c
        .scanner_open_with_scan(t, scan_from_b, no_attrs())
        .unwrap();
    assert_eq!(rows_of(&drain(&mut c, id, 10)), ["b", "ba"]);
}

#[test]
fn timestamps_filter_keeps_cells_with_listed_timestamps() {
    let (mut c, t) = fresh_table("f_timestamps", &["cf"]);
    put_ts(&mut c, &t, "a", &[("cf:x", "ax")], 100);
    put_ts(&mut c, &t, "a", &[("cf:y", "ay")], 200);
    put_ts(&mut c, &t, "a", &[("cf:z", "az")], 300);
    put_ts(&mut c, &t, "b", &[("cf:x", "bx")], 300);
    assert_eq!(
        show_ts(&mut c, &t, "TimestampsFilter(100, 200)"),
        ["a cf:x=ax@100 cf:y=ay@200"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "TimestampsFilter(300)"),
        ["a cf:z=az@300", "b cf:x=bx@300"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "TimestampsFilter(300, 5, 100)"),
        ["a cf:x=ax@100 cf:z=az@300", "b cf:x=bx@300"]
    );
    assert!(show(&mut c, &t, "TimestampsFilter(150)").is_empty());
    assert!(
        show(&mut c, &t, "TimestampsFilter()").is_empty(),
        "an empty list keeps nothing"
    );
}

#[test]
fn cell_filters_may_pick_an_older_version() {
    // With a filter, the one-version limit of a Thrift1 scan applies to the cells the
    // filter passed, so the newest passing version is returned.
    let (mut c, t) = fresh_table("f_versions", &["cf"]);
    put_ts(&mut c, &t, "a", &[("cf:x", "old")], 100);
    put_ts(&mut c, &t, "a", &[("cf:x", "mid")], 200);
    put_ts(&mut c, &t, "a", &[("cf:x", "new")], 300);
    put_ts(&mut c, &t, "a", &[("cf:y", "y")], 100);
    assert_eq!(
        show_ts(&mut c, &t, "TimestampsFilter(100)"),
        ["a cf:x=old@100 cf:y=y@100"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "TimestampsFilter(100, 200)"),
        ["a cf:x=mid@200 cf:y=y@100"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "ValueFilter(=, 'binary:old')"),
        ["a cf:x=old@100"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "ColumnValueFilter('cf', 'x', =, 'binary:mid')"),
        ["a cf:x=mid@200"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "KeyOnlyFilter()"),
        ["a cf:x=@300 cf:y=@100"],
        "a filter passing every version still returns only the newest"
    );
}

#[test]
fn row_filter_with_every_compare_operator() {
    let (mut c, t) = four_rows("f_rowfilter");
    let cases: [(&str, &[&str]); 6] = [
        ("<", &["a"]),
        ("<=", &["a", "b"]),
        ("=", &["b"]),
        ("!=", &["a", "c", "d"]),
        (">=", &["b", "c", "d"]),
        (">", &["c", "d"]),
    ];
    for (op, want) in cases {
        let filter = format!("RowFilter({op}, 'binary:b')");
        assert_eq!(keys(&mut c, &t, &filter), want, "{filter}");
    }
    assert_eq!(
        show(&mut c, &t, "RowFilter(=, 'binary:c')"),
        ["c cf:x=c cf:y=y other:z=z"],
        "whole rows"
    );
}

#[test]
fn family_filter_compares_the_family() {
    let (mut c, t) = fresh_table("f_family", &["cf", "fam2", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[("cf:x", "1"), ("fam2:y", "2"), ("other:z", "3")],
    );
    put(&mut c, &t, "b", &[("cf:x", "4")]);
    assert_eq!(
        show(&mut c, &t, "FamilyFilter(=, 'binary:fam2')"),
        ["a fam2:y=2"]
    );
    assert_eq!(
        show(&mut c, &t, "FamilyFilter(!=, 'binary:cf')"),
        ["a fam2:y=2 other:z=3"]
    );
    assert_eq!(
        show(&mut c, &t, "FamilyFilter(<, 'binary:f')"),
        ["a cf:x=1", "b cf:x=4"]
    );
    assert_eq!(
        show(&mut c, &t, "FamilyFilter(>=, 'binary:fam2')"),
        ["a fam2:y=2 other:z=3"]
    );
    assert_eq!(
        show(&mut c, &t, "FamilyFilter(=, 'regexstring:^f')"),
        ["a fam2:y=2"]
    );
    assert_eq!(
        show(&mut c, &t, "FamilyFilter(=, 'substring:TH')"),
        ["a other:z=3"]
    );
}

#[test]
fn qualifier_filter_compares_the_qualifier() {
    let (mut c, t) = fresh_table("f_qualifier", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[
            ("cf:alpha", "1"),
            ("cf:beta", "2"),
            ("cf:gamma", "3"),
            ("other:beta", "4"),
        ],
    );
    put(&mut c, &t, "b", &[("cf:alpha", "5")]);
    assert_eq!(
        show(&mut c, &t, "QualifierFilter(=, 'binary:beta')"),
        ["a cf:beta=2 other:beta=4"]
    );
    assert_eq!(
        show(&mut c, &t, "QualifierFilter(>=, 'binary:beta')"),
        ["a cf:beta=2 cf:gamma=3 other:beta=4"]
    );
    assert_eq!(
        show(&mut c, &t, "QualifierFilter(<, 'binary:beta')"),
        ["a cf:alpha=1", "b cf:alpha=5"]
    );
    assert_eq!(
        show(&mut c, &t, "QualifierFilter(=, 'binaryprefix:al')"),
        ["a cf:alpha=1", "b cf:alpha=5"]
    );
    assert_eq!(
        show(&mut c, &t, "QualifierFilter(!=, 'regexstring:^.e')"),
        ["a cf:alpha=1 cf:gamma=3", "b cf:alpha=5"]
    );
}

#[test]
fn value_filter_tests_each_cell_on_its_own() {
    let (mut c, t) = fresh_table("f_value", &["cf"]);
    put(&mut c, &t, "a", &[("cf:x", "apple"), ("cf:y", "banana")]);
    put(&mut c, &t, "b", &[("cf:x", "cherry")]);
    assert_eq!(
        show(&mut c, &t, "ValueFilter(=, 'binary:banana')"),
        ["a cf:y=banana"]
    );
    assert_eq!(
        show(&mut c, &t, "ValueFilter(<, 'binary:b')"),
        ["a cf:x=apple"],
        "a cell passes when its value < 'b'"
    );
    assert_eq!(
        show(&mut c, &t, "ValueFilter(>, 'binary:b')"),
        ["a cf:y=banana", "b cf:x=cherry"]
    );
    assert_eq!(
        show(&mut c, &t, "ValueFilter(!=, 'binary:banana')"),
        ["a cf:x=apple", "b cf:x=cherry"]
    );
    assert!(show(&mut c, &t, "ValueFilter(=, 'binary:nothing')").is_empty());
}

#[test]
fn binary_comparator_orders_unsigned_bytes() {
    let (mut c, t) = fresh_table("f_binary", &["cf"]);
    put_raw(&mut c, &t, b"r1", "cf:v", b"a");
    put_raw(&mut c, &t, b"r2", "cf:v", b"ab");
    put_raw(&mut c, &t, b"r3", "cf:v", &[0xff]);
    put_raw(&mut c, &t, b"r4", "cf:v", &[0x00]);
    put_raw(&mut c, &t, b"r5", "cf:v", b"b");
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(>, 'binary:a')"),
        ["r2", "r3", "r5"],
        "0xff sorts after 'a' (unsigned), 'ab' after its prefix 'a'"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(<=, 'binary:ab')"),
        ["r1", "r2", "r4"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'binary:a')"),
        ["r1"],
        "equality is exact, not a prefix test"
    );
    // Any bytes may appear inside a quoted argument.
    assert_eq!(
        rows_of(&scan_bytes(
            &mut c,
            &t,
            b"ValueFilter(=, 'binary:\xff')",
            10
        )),
        ["r3"]
    );
    assert_eq!(
        rows_of(&scan_bytes(
            &mut c,
            &t,
            b"ValueFilter(<, 'binary:\x01')",
            10
        )),
        ["r4"]
    );
}

#[test]
fn binaryprefix_comparator_compares_only_the_prefix_length() {
    let (mut c, t) = fresh_table("f_binaryprefix", &["cf"]);
    for (row, value) in [
        ("r1", "a"),
        ("r2", "a1"),
        ("r3", "ab"),
        ("r4", "abc"),
        ("r5", "b"),
        ("r6", "ba"),
    ] {
        put(&mut c, &t, row, &[("cf:v", value)]);
    }
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'binaryprefix:ab')"),
        ["r3", "r4"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(!=, 'binaryprefix:ab')"),
        ["r1", "r2", "r5", "r6"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(>, 'binaryprefix:a')"),
        ["r5", "r6"],
        "values starting with 'a' compare equal to it"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(<, 'binaryprefix:ab')"),
        ["r1", "r2"],
        "a value shorter than the prefix compares whole"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(<=, 'binaryprefix:b')"),
        ["r1", "r2", "r3", "r4", "r5", "r6"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(>=, 'binaryprefix:b')"),
        ["r5", "r6"]
    );
}

#[test]
fn regexstring_comparator_finds_the_pattern_anywhere() {
    let (mut c, t) = fresh_table("f_regex", &["cf"]);
    for (row, value) in [
        ("r1", "abc"),
        ("r2", "xabcx"),
        ("r3", "ABC"),
        ("r4", "a\nc"),
        ("r5", "zzz"),
    ] {
        put(&mut c, &t, row, &[("cf:v", value)]);
    }
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:bc')"),
        ["r1", "r2"],
        "find() anywhere, case-sensitive"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:^a')"),
        ["r1", "r4"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:c$')"),
        ["r1", "r4"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:a.c')"),
        ["r1", "r2", "r4"],
        "'.' matches a newline (DOTALL)"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:^[xz]+')"),
        ["r2", "r5"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:^(abc|zzz)$')"),
        ["r1", "r5"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(!=, 'regexstring:b')"),
        ["r3", "r4", "r5"]
    );
    assert_eq!(
        keys(&mut c, &t, "RowFilter(=, 'regexstring:[24]')"),
        ["r2", "r4"]
    );
}

#[test]
fn substring_comparator_ignores_case() {
    let (mut c, t) = fresh_table("f_substring", &["cf"]);
    for (row, value) in [
        ("r1", "abcd"),
        ("r2", "xBcx"),
        ("r3", "ABC"),
        ("r4", "a\nc"),
        ("r5", "zzz"),
    ] {
        put(&mut c, &t, row, &[("cf:v", value)]);
    }
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'substring:BC')"),
        ["r1", "r2", "r3"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'substring:bc')"),
        ["r1", "r2", "r3"]
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(!=, 'substring:bc')"),
        ["r4", "r5"]
    );
    assert_eq!(keys(&mut c, &t, "ValueFilter(=, 'substring:Z')"), ["r5"]);
    assert_eq!(keys(&mut c, &t, "RowFilter(=, 'substring:R3')"), ["r3"]);
}

/// Reference column cf:ref and other columns at chosen timestamps:
/// r1: cf:ref@100=yes, cf:a@100, cf:b@200, other:c@100;  r2: no cf:ref;
/// r3: cf:ref@300=yes, cf:a@100;  r4: cf:ref@100=no, cf:a@100.
fn dependent_rows(prefix: &str) -> (Client, Vec<u8>) {
    let (mut c, t) = fresh_table(prefix, &["cf", "other"]);
    put_ts(
        &mut c,
        &t,
        "r1",
        &[("cf:ref", "yes"), ("cf:a", "a1"), ("other:c", "c1")],
        100,
    );
    put_ts(&mut c, &t, "r1", &[("cf:b", "b1")], 200);
    put_ts(&mut c, &t, "r2", &[("cf:a", "a2")], 100);
    put_ts(&mut c, &t, "r3", &[("cf:ref", "yes")], 300);
    put_ts(&mut c, &t, "r3", &[("cf:a", "a3")], 100);
    put_ts(&mut c, &t, "r4", &[("cf:ref", "no"), ("cf:a", "a4")], 100);
    (c, t)
}

#[test]
fn dependent_column_filter_keeps_cells_stamped_like_the_reference() {
    let (mut c, t) = dependent_rows("f_dependent2");
    let all = [
        "r1 cf:a=a1 cf:ref=yes other:c=c1",
        "r3 cf:ref=yes",
        "r4 cf:a=a4 cf:ref=no",
    ];
    assert_eq!(
        show(&mut c, &t, "DependentColumnFilter('cf', 'ref')"),
        all,
        "rows without the reference column are dropped"
    );
    assert_eq!(
        show(&mut c, &t, "DependentColumnFilter('cf', 'ref', false)"),
        all
    );
}

#[test]
fn dependent_column_filter_can_drop_the_reference_column() {
    let (mut c, t) = dependent_rows("f_dependent3");
    assert_eq!(
        show(&mut c, &t, "DependentColumnFilter('cf', 'ref', true)"),
        ["r1 cf:a=a1 other:c=c1", "r4 cf:a=a4"]
    );
}

#[test]
fn dependent_column_filter_can_test_the_reference_value() {
    let (mut c, t) = dependent_rows("f_dependent5");
    assert_eq!(
        show(
            &mut c,
            &t,
            "DependentColumnFilter('cf', 'ref', false, =, 'binary:yes')"
        ),
        ["r1 cf:a=a1 cf:ref=yes other:c=c1", "r3 cf:ref=yes"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "DependentColumnFilter('cf', 'ref', true, =, 'binary:yes')"
        ),
        ["r1 cf:a=a1 other:c=c1"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "DependentColumnFilter('cf', 'ref', false, !=, 'binary:yes')"
        ),
        ["r4 cf:a=a4 cf:ref=no"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "DependentColumnFilter('cf', 'ref', false, <, 'binary:z')"
        ),
        [
            "r1 cf:a=a1 cf:ref=yes other:c=c1",
            "r3 cf:ref=yes",
            "r4 cf:a=a4 cf:ref=no"
        ]
    );
}

#[test]
fn dependent_column_filter_uses_every_version_of_the_reference() {
    // The filter sees each stored version of the reference column (the one-version
    // limit applies to what it passes), so cells stamped like an older reference
    // version are kept too; the reference itself shows its newest version.
    let (mut c, t) = fresh_table("f_dependent_versions", &["cf"]);
    put_ts(&mut c, &t, "r", &[("cf:ref", "old"), ("cf:a", "a")], 100);
    put_ts(&mut c, &t, "r", &[("cf:ref", "new"), ("cf:b", "b")], 200);
    put_ts(&mut c, &t, "r", &[("cf:c", "c")], 300);
    assert_eq!(
        show_ts(&mut c, &t, "DependentColumnFilter('cf', 'ref')"),
        ["r cf:a=a@100 cf:b=b@200 cf:ref=new@200"]
    );
    assert_eq!(
        show_ts(&mut c, &t, "DependentColumnFilter('cf', 'ref', true)"),
        ["r cf:a=a@100 cf:b=b@200"]
    );
    assert_eq!(
        show_ts(
            &mut c,
            &t,
            "DependentColumnFilter('cf', 'ref', false, =, 'binary:old')"
        ),
        ["r cf:a=a@100 cf:ref=old@100"],
        "only the passing version counts, and it is the one returned"
    );
}

/// a: cf:s=yes; b: cf:s=no; c: no cf:s. Each also has cf:o and other:p.
fn single_column_rows(prefix: &str) -> (Client, Vec<u8>) {
    let (mut c, t) = fresh_table(prefix, &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[("cf:s", "yes"), ("cf:o", "1"), ("other:p", "p1")],
    );
    put(
        &mut c,
        &t,
        "b",
        &[("cf:s", "no"), ("cf:o", "2"), ("other:p", "p2")],
    );
    put(&mut c, &t, "c", &[("cf:o", "3"), ("other:p", "p3")]);
    (c, t)
}

#[test]
fn single_column_value_filter_emits_whole_rows_and_passes_rows_missing_the_column() {
    let (mut c, t) = single_column_rows("f_scvf");
    assert_eq!(
        show(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'binary:yes')"
        ),
        ["a cf:o=1 cf:s=yes other:p=p1", "c cf:o=3 other:p=p3"],
        "row c lacks cf:s and passes by default"
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "SingleColumnValueFilter ('cf', 's', !=, 'binary:yes')"
        ),
        ["b", "c"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'binary:yes', false, true)"
        ),
        ["a", "c"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'binary:yes', true, true)"
        ),
        ["a cf:o=1 cf:s=yes other:p=p1"],
        "filterIfColumnMissing drops row c"
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', <, 'binary:x', true, true)"
        ),
        ["b"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'substring:E', true, true)"
        ),
        ["a"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "SingleColumnValueFilter('other', 's', =, 'binary:yes', true, true)"
        ),
        Vec::<String>::new(),
        "the family matters"
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "SingleColumnValueFilter('other', 's', =, 'binary:yes')"
        ),
        ["a", "b", "c"],
        "no row has other:s, so all pass"
    );
}

#[test]
fn single_column_value_filter_latest_version_only() {
    let (mut c, t) = fresh_table("f_scvf_versions", &["cf"]);
    put_ts(&mut c, &t, "d", &[("cf:s", "yes"), ("cf:o", "4")], 100);
    put_ts(&mut c, &t, "d", &[("cf:s", "no")], 200);
    put_ts(&mut c, &t, "e", &[("cf:s", "yes")], 100);
    assert_eq!(
        show_ts(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'binary:yes')"
        ),
        ["e cf:s=yes@100"],
        "by default only the newest version of cf:s is tested"
    );
    assert_eq!(
        show_ts(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'binary:yes', true, true)"
        ),
        ["e cf:s=yes@100"]
    );
    assert_eq!(
        show_ts(
            &mut c,
            &t,
            "SingleColumnValueFilter('cf', 's', =, 'binary:yes', true, false)"
        ),
        ["d cf:o=4@100 cf:s=no@200", "e cf:s=yes@100"],
        "an older version may match; the row still shows the newest"
    );
}

#[test]
fn single_column_value_exclude_filter_hides_the_tested_column() {
    let (mut c, t) = single_column_rows("f_scvef");
    put(&mut c, &t, "d", &[("cf:s", "yes")]);
    assert_eq!(
        show(
            &mut c,
            &t,
            "SingleColumnValueExcludeFilter('cf', 's', =, 'binary:yes')"
        ),
        ["a cf:o=1 other:p=p1", "c cf:o=3 other:p=p3"],
        "row d has nothing left once cf:s is removed"
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "SingleColumnValueExcludeFilter('cf', 's', =, 'binary:yes', true, true)"
        ),
        ["a cf:o=1 other:p=p1"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "SingleColumnValueExcludeFilter('cf', 's', =, 'binary:no', true, true)"
        ),
        ["b cf:o=2 other:p=p2"]
    );
}

#[test]
fn column_range_filter_bounds() {
    let (mut c, t) = fresh_table("f_colrange", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "a",
        &[
            ("cf:a", "1"),
            ("cf:b", "2"),
            ("cf:c", "3"),
            ("cf:d", "4"),
            ("cf:e", "5"),
        ],
    );
    put(&mut c, &t, "b", &[("cf:z", "6")]);
    put(
        &mut c,
        &t,
        "c",
        &[
            ("cf:a", "7"),
            ("cf:cc", "8"),
            ("other:b", "9"),
            ("other:z", "0"),
        ],
    );
    let cases: [(&str, &[&str]); 8] = [
        (
            "ColumnRangeFilter('b', true, 'd', false)",
            &["a cf:b=2 cf:c=3", "c cf:cc=8 other:b=9"],
        ),
        (
            "ColumnRangeFilter('b', false, 'd', true)",
            &["a cf:c=3 cf:d=4", "c cf:cc=8"],
        ),
        (
            "ColumnRangeFilter('b', true, 'd', true)",
            &["a cf:b=2 cf:c=3 cf:d=4", "c cf:cc=8 other:b=9"],
        ),
        (
            "ColumnRangeFilter('b', false, 'd', false)",
            &["a cf:c=3", "c cf:cc=8"],
        ),
        (
            "ColumnRangeFilter('', true, 'b', true)",
            &["a cf:a=1 cf:b=2", "c cf:a=7 other:b=9"],
        ),
        (
            "ColumnRangeFilter('', false, 'b', false)",
            &["a cf:a=1", "c cf:a=7"],
        ),
        (
            "ColumnRangeFilter('d', true, '', false)",
            &["a cf:d=4 cf:e=5", "b cf:z=6", "c other:z=0"],
        ),
        (
            "ColumnRangeFilter('', false, '', false)",
            &[
                "a cf:a=1 cf:b=2 cf:c=3 cf:d=4 cf:e=5",
                "b cf:z=6",
                "c cf:a=7 cf:cc=8 other:b=9 other:z=0",
            ],
        ),
    ];
    for (filter, want) in cases {
        assert_eq!(show(&mut c, &t, filter), want, "{filter}");
    }
}

#[test]
fn column_value_filter_returns_only_the_matching_cell() {
    let (mut c, t) = fresh_table("f_colvalue", &["cf", "other"]);
    put(
        &mut c,
        &t,
        "r1",
        &[("cf:q", "match"), ("cf:z", "z1"), ("other:q", "match")],
    );
    put(&mut c, &t, "r2", &[("cf:q", "nomatch"), ("cf:z", "z2")]);
    put(&mut c, &t, "r3", &[("cf:z", "z3")]);
    assert_eq!(
        show(
            &mut c,
            &t,
            "ColumnValueFilter('cf', 'q', =, 'binary:match')"
        ),
        ["r1 cf:q=match"]
    );
    assert_eq!(
        show(&mut c, &t, "ColumnValueFilter('cf', 'q', >, 'binary:m')"),
        ["r1 cf:q=match", "r2 cf:q=nomatch"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "ColumnValueFilter('cf', 'q', =, 'substring:NO')"
        ),
        ["r2 cf:q=nomatch"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "ColumnValueFilter('other', 'q', =, 'regexstring:^m')"
        ),
        ["r1 other:q=match"]
    );
    assert!(show(&mut c, &t, "ColumnValueFilter('cf', 'q', <, 'binary:a')").is_empty());
}

#[test]
fn and_binds_tighter_than_or_and_parentheses_override() {
    let (mut c, t) = four_rows("f_precedence");
    let d = "RowFilter(=, 'binary:d')";
    let ge_b = "RowFilter(>=, 'binary:b')";
    let le_b = "RowFilter(<=, 'binary:b')";
    assert_eq!(
        keys(&mut c, &t, &format!("{d} OR {ge_b} AND {le_b}")),
        ["b", "d"],
        "A OR B AND C = A OR (B AND C)"
    );
    assert_eq!(
        keys(&mut c, &t, &format!("{ge_b} AND {le_b} OR {d}")),
        ["b", "d"]
    );
    assert_eq!(
        keys(&mut c, &t, &format!("({d} OR {ge_b}) AND {le_b}")),
        ["b"]
    );
    assert_eq!(
        keys(&mut c, &t, &format!("{ge_b} AND ({le_b} OR {d})")),
        ["b", "d"]
    );
    assert_eq!(
        keys(&mut c, &t, &format!("(({d}))")),
        ["d"],
        "redundant parentheses"
    );
    // Chains of one operator.
    assert_eq!(
        keys(
            &mut c,
            &t,
            "RowFilter(=, 'binary:a') OR RowFilter(=, 'binary:c') OR RowFilter(=, 'binary:d')"
        ),
        ["a", "c", "d"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "RowFilter(>, 'binary:a') AND RowFilter(<, 'binary:d') AND RowFilter(!=, 'binary:c')"
        ),
        ["b"]
    );
    // Row and cell filters together.
    assert_eq!(
        show(
            &mut c,
            &t,
            "RowFilter(>=, 'binary:c') AND QualifierFilter(=, 'binary:x')"
        ),
        ["c cf:x=c", "d cf:x=d"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "QualifierFilter(=, 'binary:x') OR ValueFilter(=, 'binary:z')"
        ),
        [
            "a cf:x=a other:z=z",
            "b cf:x=b other:z=z",
            "c cf:x=c other:z=z",
            "d cf:x=d other:z=z"
        ]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "RowFilter(=, 'binary:a') OR ValueFilter(=, 'binary:d')"
        ),
        ["a cf:x=a cf:y=y other:z=z", "d cf:x=d"]
    );
}

#[test]
fn combined_filters_test_original_values() {
    // The reference document's example, and a value test combined with KeyOnlyFilter.
    let (mut c, t) = fresh_table("f_combined", &["cf"]);
    put(&mut c, &t, "row1", &[("cf:abc", "v1"), ("cf:bcd", "v2")]);
    put(&mut c, &t, "row2", &[("cf:a", "v3")]);
    put(&mut c, &t, "zzz", &[("cf:abc", "v4")]);
    assert_eq!(
        show(
            &mut c,
            &t,
            "PrefixFilter('row') AND QualifierFilter(=, 'regexstring:^a')"
        ),
        ["row1 cf:abc=v1", "row2 cf:a=v3"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "PrefixFilter('row') AND (QualifierFilter(=, 'regexstring:^a') OR KeyOnlyFilter())"
        ),
        ["row1 cf:abc= cf:bcd=", "row2 cf:a="]
    );
    for filter in [
        "KeyOnlyFilter() AND ValueFilter(=, 'binary:v2')",
        "ValueFilter(=, 'binary:v2') AND KeyOnlyFilter()",
    ] {
        assert_eq!(show(&mut c, &t, filter), ["row1 cf:bcd="], "{filter}");
    }
    assert_eq!(
        show(
            &mut c,
            &t,
            "KeyOnlyFilter() AND SingleColumnValueFilter('cf', 'abc', =, 'binary:v4', true, true)"
        ),
        ["zzz cf:abc="]
    );
}

#[test]
fn skip_drops_rows_with_any_failing_cell() {
    let (mut c, t) = fresh_table("f_skip", &["cf"]);
    put(&mut c, &t, "a", &[("cf:x", "1"), ("cf:y", "bad")]);
    put(&mut c, &t, "b", &[("cf:x", "2"), ("cf:y", "3")]);
    put(&mut c, &t, "c", &[("cf:x", "bad")]);
    put(&mut c, &t, "d", &[("cf:x", "4")]);
    assert_eq!(
        show(&mut c, &t, "ValueFilter(!=, 'binary:bad')"),
        ["a cf:x=1", "b cf:x=2 cf:y=3", "d cf:x=4"],
        "without SKIP only the failing cells go"
    );
    assert_eq!(
        show(&mut c, &t, "SKIP ValueFilter(!=, 'binary:bad')"),
        ["b cf:x=2 cf:y=3", "d cf:x=4"]
    );
    assert_eq!(
        show(&mut c, &t, "SKIP QualifierFilter(=, 'binary:x')"),
        ["c cf:x=bad", "d cf:x=4"]
    );
    // SKIP binds tighter than AND.
    assert_eq!(
        show(
            &mut c,
            &t,
            "SKIP ValueFilter(!=, 'binary:bad') AND QualifierFilter(=, 'binary:x')"
        ),
        ["b cf:x=2", "d cf:x=4"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "SKIP (ValueFilter(!=, 'binary:bad') AND QualifierFilter(=, 'binary:x'))"
        ),
        ["d cf:x=4"]
    );
    assert_eq!(
        show(
            &mut c,
            &t,
            "(SKIP ValueFilter(!=, 'binary:bad')) OR RowFilter(=, 'binary:c')"
        ),
        ["b cf:x=2 cf:y=3", "c cf:x=bad", "d cf:x=4"]
    );
}

#[test]
fn while_ends_the_scan_at_the_first_failure() {
    let (mut c, t) = four_rows("f_while");
    assert_eq!(
        keys(&mut c, &t, "RowFilter(!=, 'binary:c')"),
        ["a", "b", "d"]
    );
    assert_eq!(
        keys(&mut c, &t, "WHILE RowFilter(!=, 'binary:c')"),
        ["a", "b"]
    );
    assert_eq!(keys(&mut c, &t, "WHILE PrefixFilter('a')"), ["a"]);
    assert!(keys(&mut c, &t, "WHILE RowFilter(=, 'binary:b')").is_empty());
    // WHILE binds tighter than OR.
    assert_eq!(
        keys(
            &mut c,
            &t,
            "WHILE RowFilter(<, 'binary:b') OR RowFilter(=, 'binary:d')"
        ),
        ["a", "d"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "WHILE (RowFilter(<, 'binary:b') OR RowFilter(=, 'binary:d'))"
        ),
        ["a"]
    );

    // A cell failing the wrapped filter ends the scan at that cell: the row's cells
    // before it are still returned (the wrapped filter does not drop the row), the
    // cells after it and the later rows are not.
    let (mut c, t) = fresh_table("f_while_cells", &["cf"]);
    put(&mut c, &t, "a", &[("cf:x", "1")]);
    put(
        &mut c,
        &t,
        "b",
        &[("cf:x", "2"), ("cf:y", "stop"), ("cf:z", "after")],
    );
    put(&mut c, &t, "c", &[("cf:x", "3")]);
    assert_eq!(
        show(&mut c, &t, "WHILE ValueFilter(!=, 'binary:stop')"),
        ["a cf:x=1", "b cf:x=2"]
    );
}

#[test]
fn quoting_and_whitespace() {
    let (mut c, t) = fresh_table("f_quoting", &["cf"]);
    put(&mut c, &t, "it's", &[("cf:x", "o'clock")]);
    put(&mut c, &t, "it's2", &[("cf:x", "a:b")]);
    put(&mut c, &t, "its", &[("cf:x", "x, y) AND 'z'")]);
    put(&mut c, &t, "it''s", &[("cf:x", "''")]);
    assert_eq!(keys(&mut c, &t, "PrefixFilter('it''s')"), ["it's", "it's2"]);
    assert_eq!(
        keys(&mut c, &t, "PrefixFilter('it''''s')"),
        ["it''s"],
        "each doubled quote is one quote"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'binary:o''clock')"),
        ["it's"]
    );
    assert_eq!(keys(&mut c, &t, "ValueFilter(=, 'binary:''''')"), ["it''s"]);
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'binary:a:b')"),
        ["it's2"],
        "the comparator splits at the first colon"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'binary:x, y) AND ''z''')"),
        ["its"],
        "commas, parentheses and keywords inside quotes are data"
    );
    assert_eq!(
        keys(&mut c, &t, "ValueFilter(=, 'regexstring:^o''c')"),
        ["it's"]
    );
    // Spaces and tabs between tokens.
    assert_eq!(keys(&mut c, &t, "  PrefixFilter ( 'its' )  "), ["its"]);
    assert_eq!(
        keys(
            &mut c,
            &t,
            "\tPrefixFilter('its') \t OR \t RowFilter(=,'binary:it''s2')\t"
        ),
        ["it's2", "its"]
    );
    assert_eq!(
        keys(
            &mut c,
            &t,
            "ValueFilter( = ,'binary:a:b' )AND(PrefixFilter('it'))"
        ),
        ["it's2"]
    );
}

#[test]
fn unknown_filter_names_are_internal_errors() {
    let (mut c, t) = four_rows("f_err_name");
    for (filter, name) in [
        ("NoSuchFilter('a')", "NoSuchFilter"),
        ("prefixfilter('a')", "prefixfilter"),
        ("PREFIXFILTER('a')", "PREFIXFILTER"),
        ("FuzzyRowFilter('a')", "FuzzyRowFilter"),
        ("FilterList('a')", "FilterList"),
        ("PrefixFilter('a') AND Nope()", "Nope"),
    ] {
        let why = refused(&mut c, &t, filter.as_bytes());
        assert!(why.contains(name), "{filter}: {why}");
    }
}

#[test]
fn bad_syntax_is_an_internal_error() {
    let (mut c, t) = four_rows("f_err_syntax");
    for filter in [
        "   ",
        "PrefixFilter('a'",
        "PrefixFilter('a)",
        "PrefixFilter'a')",
        "PrefixFilter('a') AND",
        "AND PrefixFilter('a')",
        "PrefixFilter('a') OR OR PrefixFilter('b')",
        "PrefixFilter('a') PrefixFilter('b')",
        "(PrefixFilter('a')",
        "PrefixFilter('a'))",
        "()",
        "PrefixFilter('a') and PrefixFilter('b')",
        "PrefixFilter('a')\nOR PrefixFilter('b')",
        "SKIP",
        "WHILE",
        "ValueFilter(=, binary:a)",
        "ValueFilter(==, 'binary:a')",
        "ValueFilter(=, 'binary')",
        "ValueFilter(=, 'nosuch:a')",
        "ValueFilter(=, 'BINARY:a')",
    ] {
        refused(&mut c, &t, filter.as_bytes());
    }
}

#[test]
fn an_empty_filter_string_is_an_internal_error() {
    // HBase's Thrift1 handler parses any filterString that is set, and the parser
    // rejects one with no filter in it.
    let (mut c, t) = four_rows("f_err_empty");
    refused(&mut c, &t, b"");
}

#[test]
fn wrong_argument_counts_are_internal_errors() {
    let (mut c, t) = four_rows("f_err_count");
    for (filter, got) in [
        ("PrefixFilter('a', 'b')", "2"),
        ("PrefixFilter()", "0"),
        ("KeyOnlyFilter(true, false)", "2"),
        ("FirstKeyOnlyFilter(true)", "1"),
        ("ColumnPrefixFilter()", "0"),
        ("ColumnCountGetFilter(1, 2)", "2"),
        ("PageFilter()", "0"),
        ("ColumnPaginationFilter(1)", "1"),
        ("InclusiveStopFilter('a', 'b')", "2"),
        ("RowFilter(=)", "1"),
        ("FamilyFilter(=, 'binary:a', 'x')", "3"),
        ("QualifierFilter()", "0"),
        ("ValueFilter('binary:a')", "1"),
        ("ColumnRangeFilter('a', true)", "2"),
        ("SingleColumnValueFilter('cf', 'q', =)", "3"),
        (
            "SingleColumnValueFilter('cf', 'q', =, 'binary:a', true)",
            "5",
        ),
        ("SingleColumnValueExcludeFilter('cf', 'q')", "2"),
        ("DependentColumnFilter('cf')", "1"),
        ("DependentColumnFilter('cf', 'q', true, =)", "4"),
        ("ColumnValueFilter('cf', 'q', =)", "3"),
    ] {
        let why = refused(&mut c, &t, filter.as_bytes());
        assert!(
            why.to_lowercase().contains("expect") && why.contains(got),
            "{filter}: {why}"
        );
    }
}

#[test]
fn bad_argument_values_are_internal_errors() {
    let (mut c, t) = four_rows("f_err_values");
    for filter in [
        "KeyOnlyFilter(yes)",
        "KeyOnlyFilter('true')",
        "PrefixFilter(1)",
        "PageFilter('3')",
        "PageFilter(-1)",
        "ColumnCountGetFilter(-1)",
        "ColumnCountGetFilter(2147483648)",
        "ColumnPaginationFilter(-1, 0)",
        "ColumnPaginationFilter(1, -1)",
        "TimestampsFilter('1')",
        "TimestampsFilter(-5)",
        "RowFilter('=', 'binary:a')",
        "RowFilter(=, 3)",
        "ColumnRangeFilter('a', 1, 'b', true)",
        "SingleColumnValueFilter('cf', 'q', =, 'binary:a', yes, true)",
        "ValueFilter(=, 'regexstring:(')",
        "MultipleColumnPrefixFilter('a', 'b', 'a')",
    ] {
        refused(&mut c, &t, filter.as_bytes());
    }
}

#[test]
fn regexstring_and_substring_allow_only_equal_and_not_equal() {
    let (mut c, t) = four_rows("f_err_regexop");
    for (filter, comparator) in [
        ("ValueFilter(<, 'regexstring:a')", "regexstring"),
        ("RowFilter(>=, 'regexstring:a')", "regexstring"),
        (
            "SingleColumnValueFilter('cf', 'x', >, 'regexstring:a')",
            "regexstring",
        ),
        ("QualifierFilter(<=, 'substring:a')", "substring"),
        (
            "ColumnValueFilter('cf', 'x', >, 'substring:a')",
            "substring",
        ),
    ] {
        let why = refused(&mut c, &t, filter.as_bytes());
        assert!(why.contains(comparator), "{filter}: {why}");
    }
    // = and != are fine.
    assert_eq!(
        keys(&mut c, &t, "RowFilter(!=, 'regexstring:[ab]')"),
        ["c", "d"]
    );
}
