//! Behaviour of the value filters and the comparators as filters use them.

use bytes::Bytes;
use tabula_storage::types::Cell;

use super::harness::{cell, everything, run_filter, sample, scan, scan_rows, table};
use crate::filter::parse_filter;

#[test]
fn value_filter_reads_cell_op_operand_with_unsigned_bytes() {
    // "Cherry" sorts below "b": 'C' is 0x43.
    assert_eq!(
        scan("ValueFilter(<, 'binary:b')", &sample()),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:a@2=apricot",
            "row1 cf2:a@3=avocado",
            "row2 cf:a@5=Cherry",
        ]
    );
    assert_eq!(
        scan("ValueFilter(>=, 'binary:date')", &sample()),
        vec!["rox4 cf:a@1=date"]
    );
}

#[test]
fn binaryprefix_compares_the_operand_length_only() {
    assert_eq!(
        scan("ValueFilter(=, 'binaryprefix:ap')", &sample()),
        vec!["row1 cf:a@3=apple", "row1 cf:a@2=apricot"]
    );
}

#[test]
fn substring_is_case_insensitive() {
    assert_eq!(
        scan("ValueFilter(=, 'substring:CHERRY')", &sample()),
        vec!["row2 cf:a@5=Cherry"]
    );
    assert_eq!(
        scan("ValueFilter(!=, 'substring:A')", &sample()),
        vec![
            "row2 cf:a@5=Cherry",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry"
        ]
    );
}

#[test]
fn regexstring_finds_anywhere() {
    assert_eq!(
        scan("ValueFilter(=, 'regexstring:an')", &sample()),
        vec!["row1 cf:b@3=banana"]
    );
    assert_eq!(
        scan("ValueFilter(!=, 'regexstring:a')", &sample()),
        vec![
            "row2 cf:a@5=Cherry",
            "row2 cf:c@5=coconut",
            "row3 cf:b@1=blueberry"
        ]
    );
    assert_eq!(
        scan("ValueFilter(=, 'regexstring:^a.*t$')", &sample()),
        vec!["row1 cf:a@2=apricot"]
    );
}

#[test]
fn regexstring_decodes_cells_lossily_and_dot_matches_newline() {
    let mut weird = cell("r", "cf", "a", 1, "");
    weird.value = Bytes::from_static(b"a\xffb");
    let rows = table(vec![weird, cell("r", "cf", "b", 1, "x\ny")]);
    let mut filter = parse_filter(b"ValueFilter(=, 'regexstring:^a.b$|x.y')").unwrap();
    let out = run_filter(filter.as_mut(), &rows);
    assert_eq!(out[0].1.len(), 2);
}

#[test]
fn single_column_value_filter_passes_rows_without_the_column() {
    let rows = sample();
    let plain = "SingleColumnValueFilter('cf', 'b', =, 'binary:banana')";
    // row1 matches and comes whole; row2 and rox4 lack cf:b and pass; row3 fails.
    assert_eq!(scan_rows(plain, &rows), vec!["row1", "row2", "rox4"]);
    let row1: Vec<String> = everything(&rows).into_iter().take(4).collect();
    assert_eq!(scan(plain, &rows)[..4], row1[..]);
    assert_eq!(
        scan_rows(
            "SingleColumnValueFilter('cf', 'b', =, 'binary:banana', true, true)",
            &rows
        ),
        vec!["row1"]
    );
}

#[test]
fn single_column_value_filter_tests_only_the_latest_version_by_default() {
    let rows = sample();
    // row1's cf:a is "apple" now and "apricot" before.
    assert_eq!(
        scan_rows(
            "SingleColumnValueFilter('cf', 'a', =, 'binary:apricot', true, true)",
            &rows
        ),
        Vec::<String>::new()
    );
    assert_eq!(
        scan_rows(
            "SingleColumnValueFilter('cf', 'a', =, 'binary:apricot', true, false)",
            &rows
        ),
        vec!["row1"]
    );
    assert_eq!(
        scan(
            "SingleColumnValueFilter('cf', 'a', =, 'binary:apricot', true, false)",
            &rows
        )
        .len(),
        4
    );
}

#[test]
fn single_column_value_filter_needs_whole_rows() {
    let filter = parse_filter(b"SingleColumnValueFilter('cf', 'b', =, 'binary:x')").unwrap();
    assert!(filter.needs_whole_row());
    assert!(!parse_filter(b"ValueFilter(=, 'binary:x')")
        .unwrap()
        .needs_whole_row());
    assert!(
        parse_filter(b"ValueFilter(=, 'binary:x') OR SKIP KeyOnlyFilter()")
            .unwrap()
            .needs_whole_row()
    );
}

#[test]
fn single_column_value_exclude_filter_drops_the_tested_column() {
    assert_eq!(
        scan(
            "SingleColumnValueExcludeFilter('cf', 'b', =, 'binary:banana', true, true)",
            &sample()
        ),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:a@2=apricot",
            "row1 cf2:a@3=avocado"
        ]
    );
}

#[test]
fn dependent_column_filter_keeps_cells_stamped_like_the_reference() {
    let rows = table(vec![
        cell("r1", "cf", "ref", 10, "on"),
        cell("r1", "cf", "ref", 20, "off"),
        cell("r1", "cf", "x", 10, "x10"),
        cell("r1", "cf", "x", 15, "x15"),
        cell("r1", "cf2", "y", 20, "y20"),
        cell("r2", "cf", "x", 10, "lonely"),
    ]);
    assert_eq!(
        scan("DependentColumnFilter('cf', 'ref')", &rows),
        vec![
            "r1 cf:ref@20=off",
            "r1 cf:ref@10=on",
            "r1 cf:x@10=x10",
            "r1 cf2:y@20=y20",
        ]
    );
    assert_eq!(
        scan("DependentColumnFilter('cf', 'ref', true)", &rows),
        vec!["r1 cf:x@10=x10", "r1 cf2:y@20=y20"]
    );
    assert_eq!(
        scan(
            "DependentColumnFilter('cf', 'ref', false, =, 'binary:on')",
            &rows
        ),
        vec!["r1 cf:ref@10=on", "r1 cf:x@10=x10"]
    );
    assert_eq!(
        scan(
            "DependentColumnFilter('cf', 'ref', true, !=, 'binary:on')",
            &rows
        ),
        vec!["r1 cf2:y@20=y20"]
    );
}

#[test]
fn column_value_filter_returns_only_the_matching_cells() {
    let rows = sample();
    assert_eq!(
        scan("ColumnValueFilter('cf', 'a', =, 'binaryprefix:a')", &rows),
        vec!["row1 cf:a@3=apple", "row1 cf:a@2=apricot"]
    );
    assert_eq!(
        scan("ColumnValueFilter('cf', 'a', >, 'binary:b')", &rows),
        vec!["rox4 cf:a@1=date"]
    );
}

#[test]
fn empty_rows_are_never_emitted() {
    let rows = sample();
    let mut filter = parse_filter(b"ValueFilter(=, 'binary:nothing')").unwrap();
    let out: Vec<(Bytes, Vec<Cell>)> = run_filter(filter.as_mut(), &rows);
    assert!(out.is_empty());
}
