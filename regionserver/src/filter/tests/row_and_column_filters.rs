//! Behaviour of the row and column filters over the sample table.

use bytes::Bytes;

use super::harness::{cell, everything, run_filter, sample, scan, scan_rows, table};
use crate::filter::{parse_filter, prefix_while_filter};

#[test]
fn key_only_strips_values() {
    let rows = sample();
    let out = scan("KeyOnlyFilter()", &rows);
    assert_eq!(out.len(), everything(&rows).len());
    assert!(out.iter().all(|c| c.ends_with('=')), "{out:?}");
}

#[test]
fn key_only_with_length_as_value_gives_four_byte_big_endian_length() {
    let rows = table(vec![
        cell("r", "cf", "a", 1, "hello"),
        cell("r", "cf", "b", 1, ""),
    ]);
    let mut filter = parse_filter(b"KeyOnlyFilter(true)").unwrap();
    let out = run_filter(filter.as_mut(), &rows);
    let values: Vec<Bytes> = out[0].1.iter().map(|c| c.value.clone()).collect();
    assert_eq!(
        values,
        vec![
            Bytes::from_static(&[0, 0, 0, 5]),
            Bytes::from_static(&[0, 0, 0, 0])
        ]
    );
}

#[test]
fn first_key_only_keeps_the_first_cell_of_each_row() {
    assert_eq!(
        scan("FirstKeyOnlyFilter()", &sample()),
        vec![
            "row1 cf:a@3=apple",
            "row2 cf:a@5=Cherry",
            "row3 cf:b@1=blueberry",
            "rox4 cf:a@1=date",
        ]
    );
}

#[test]
fn prefix_filter_keeps_matching_rows_and_ends_past_them() {
    let rows = sample();
    assert_eq!(
        scan_rows("PrefixFilter('row')", &rows),
        vec!["row1", "row2", "row3"]
    );
    let mut filter = parse_filter(b"PrefixFilter('row2')").unwrap();
    let out = run_filter(filter.as_mut(), &rows);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].0, Bytes::from_static(b"row2"));
    assert!(
        filter.filter_all_remaining(),
        "a row past the prefix ends the scan"
    );
    assert_eq!(scan_rows("PrefixFilter('')", &rows).len(), 4);
    assert!(scan_rows("PrefixFilter('row1xx')", &rows).is_empty());
}

#[test]
fn prefix_while_filter_ends_at_the_first_row_past_the_prefix() {
    let rows = table(vec![
        cell("ab1", "cf", "q", 1, "v"),
        cell("ab2", "cf", "q", 1, "v"),
        cell("ac", "cf", "q", 1, "v"),
        cell("ad", "cf", "q", 1, "v"),
    ]);
    let mut filter = prefix_while_filter(Bytes::from_static(b"ab"));
    let out = run_filter(filter.as_mut(), &rows);
    let keys: Vec<_> = out.iter().map(|(k, _)| k.clone()).collect();
    assert_eq!(
        keys,
        vec![Bytes::from_static(b"ab1"), Bytes::from_static(b"ab2")]
    );
    assert!(filter.filter_all_remaining());
}

#[test]
fn column_prefix_filter_looks_at_every_family() {
    assert_eq!(
        scan("ColumnPrefixFilter('a')", &sample()),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:a@2=apricot",
            "row1 cf2:a@3=avocado",
            "row2 cf:a@5=Cherry",
            "rox4 cf:a@1=date",
        ]
    );
}

#[test]
fn multiple_column_prefix_filter_matches_any_prefix() {
    let rows = table(vec![
        cell("r", "cf", "abc", 1, "1"),
        cell("r", "cf", "abd", 1, "2"),
        cell("r", "cf", "az", 1, "3"),
        cell("r", "cf", "b", 1, "4"),
        cell("r", "cf", "ca", 1, "5"),
    ]);
    // Overlapping prefixes: "az" matches "a" although "ab" sorts between them.
    assert_eq!(
        scan("MultipleColumnPrefixFilter('ab', 'a', 'c')", &rows),
        vec!["r cf:abc@1=1", "r cf:abd@1=2", "r cf:az@1=3", "r cf:ca@1=5"]
    );
}

#[test]
fn column_count_get_filter_limits_columns_and_ends_a_scan_once_exceeded() {
    let rows = sample();
    // row1 has three columns: the first is kept, then the scan ends.
    assert_eq!(
        scan("ColumnCountGetFilter(1)", &rows),
        vec!["row1 cf:a@3=apple"]
    );
    // Rows within the limit pass whole (newest version per column).
    assert_eq!(
        scan("ColumnCountGetFilter(3)", &rows),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:b@3=banana",
            "row1 cf2:a@3=avocado",
            "row2 cf:a@5=Cherry",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry",
            "rox4 cf:a@1=date",
        ]
    );
}

#[test]
fn page_filter_counts_rows_that_reach_it() {
    let rows = sample();
    assert_eq!(scan_rows("PageFilter(2)", &rows), vec!["row1", "row2"]);
    assert!(scan_rows("PageFilter(0)", &rows).is_empty());
    // Rows rejected before PageFilter sees them do not count.
    assert_eq!(
        scan_rows("RowFilter(!=, 'binary:row1') AND PageFilter(2)", &rows),
        vec!["row2", "row3"]
    );
    // Rows left without cells do not count either.
    assert_eq!(
        scan_rows(
            "ValueFilter(=, 'regexstring:^[bd]') AND PageFilter(2)",
            &rows
        ),
        vec!["row1", "row3"]
    );
    // As in HBase, AND asks its filters in order: a row counted by PageFilter and then
    // dropped by a later filter still uses up the page (row1 here; row2 lacks cf:b and
    // so passes the SingleColumnValueFilter).
    assert!(scan_rows(
        "PageFilter(1) AND SingleColumnValueFilter('cf', 'b', =, 'binary:blueberry')",
        &rows
    )
    .is_empty());
    assert_eq!(
        scan_rows(
            "SingleColumnValueFilter('cf', 'b', =, 'binary:blueberry') AND PageFilter(1)",
            &rows
        ),
        vec!["row2"]
    );
}

#[test]
fn column_pagination_filter_skips_offset_columns_and_returns_limit() {
    let rows = sample();
    assert_eq!(
        scan("ColumnPaginationFilter(1, 1)", &rows),
        vec!["row1 cf:b@3=banana", "row2 cf:c@5=coconut"]
    );
    assert_eq!(
        scan("ColumnPaginationFilter(2, 0)", &rows),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:b@3=banana",
            "row2 cf:a@5=Cherry",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry",
            "rox4 cf:a@1=date",
        ]
    );
    assert!(scan("ColumnPaginationFilter(0, 0)", &rows).is_empty());
}

#[test]
fn column_pagination_filter_with_a_column_offset_starts_at_that_qualifier() {
    let rows = sample();
    // Once a column is returned the rest follow unchecked, a later family's too.
    assert_eq!(
        scan("ColumnPaginationFilter(2, 'b')", &rows),
        vec![
            "row1 cf:b@3=banana",
            "row1 cf2:a@3=avocado",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry",
        ]
    );
    assert_eq!(
        scan("ColumnPaginationFilter(1, 'c')", &rows),
        vec!["row2 cf:c@5=coconut"]
    );
    assert!(scan("ColumnPaginationFilter(0, 'a')", &rows).is_empty());
    assert!(parse_filter(b"ColumnPaginationFilter(-1, 'a')").is_err());
}

#[test]
fn inclusive_stop_filter_includes_the_stop_row() {
    let rows = sample();
    let mut filter = parse_filter(b"InclusiveStopFilter('row2')").unwrap();
    let keys: Vec<_> = run_filter(filter.as_mut(), &rows)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    assert_eq!(
        keys,
        vec![Bytes::from_static(b"row1"), Bytes::from_static(b"row2")]
    );
    assert!(filter.filter_all_remaining());
}

#[test]
fn timestamps_filter_keeps_listed_versions() {
    assert_eq!(
        scan("TimestampsFilter(5, 2)", &sample()),
        vec![
            "row1 cf:a@2=apricot",
            "row2 cf:a@5=Cherry",
            "row2 cf:c@5=coconut",
        ]
    );
    assert!(scan("TimestampsFilter()", &sample()).is_empty());
}

#[test]
fn row_filter_compares_keys() {
    let rows = sample();
    assert_eq!(
        scan_rows("RowFilter(<, 'binary:row2')", &rows),
        vec!["row1"]
    );
    assert_eq!(
        scan_rows("RowFilter(=, 'regexstring:[13]$')", &rows),
        vec!["row1", "row3"]
    );
    assert_eq!(
        scan_rows("RowFilter(!=, 'binaryprefix:row')", &rows),
        vec!["rox4"]
    );
}

#[test]
fn family_filter_keeps_other_families_of_the_row() {
    let rows = sample();
    assert_eq!(
        scan("FamilyFilter(=, 'binary:cf2')", &rows),
        vec!["row1 cf2:a@3=avocado"]
    );
    assert_eq!(
        scan("FamilyFilter(>, 'binary:cf')", &rows),
        vec!["row1 cf2:a@3=avocado"]
    );
}

#[test]
fn qualifier_filter_compares_qualifiers() {
    assert_eq!(
        scan("QualifierFilter(>=, 'binary:b')", &sample()),
        vec![
            "row1 cf:b@3=banana",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry",
        ]
    );
}

#[test]
fn column_range_filter_bounds_qualifiers_in_every_family() {
    let rows = sample();
    assert_eq!(
        scan("ColumnRangeFilter('a', false, 'c', true)", &rows),
        vec![
            "row1 cf:b@3=banana",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry",
        ]
    );
    assert_eq!(
        scan("ColumnRangeFilter('', true, 'a', true)", &rows),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:a@2=apricot",
            "row1 cf2:a@3=avocado",
            "row2 cf:a@5=Cherry",
            "rox4 cf:a@1=date",
        ]
    );
    assert_eq!(
        scan("ColumnRangeFilter('b', true, 'c', false)", &rows),
        vec!["row1 cf:b@3=banana", "row3 cf:b@1=blueberry"]
    );
}
