//! AND, OR, SKIP and WHILE: how sub-filter answers combine.

use super::harness::{cell, everything, run_filter, sample, scan, scan_rows, table};
use crate::filter::parse_filter;

#[test]
fn the_happybase_example_combo() {
    let rows = sample();
    // KeyOnlyFilter includes every cell, so the OR passes every cell of the "row" rows,
    // and its transform strips every value.
    let out = scan(
        "PrefixFilter('row') AND (QualifierFilter(=, 'regexstring:^a') OR KeyOnlyFilter())",
        &rows,
    );
    assert_eq!(
        out,
        vec![
            "row1 cf:a@3=",
            "row1 cf:a@2=",
            "row1 cf:b@3=",
            "row1 cf2:a@3=",
            "row2 cf:a@5=",
            "row2 cf:c@5=",
            "row3 cf:b@1=",
        ]
    );
}

#[test]
fn or_transforms_only_with_the_filters_that_included_the_cell() {
    assert_eq!(
        scan(
            "(QualifierFilter(=, 'binary:a') AND KeyOnlyFilter()) OR ValueFilter(=, 'binary:banana')",
            &sample(),
        ),
        vec![
            "row1 cf:a@3=",
            "row1 cf:a@2=",
            "row1 cf:b@3=banana",
            "row1 cf2:a@3=",
            "row2 cf:a@5=",
            "rox4 cf:a@1=",
        ]
    );
}

#[test]
fn and_transforms_chain() {
    let rows = table(vec![cell("r", "cf", "q", 1, "value")]);
    let mut filter = parse_filter(b"KeyOnlyFilter(true) AND KeyOnlyFilter(true)").unwrap();
    let out = run_filter(filter.as_mut(), &rows);
    // The second sees the first's 4-byte value.
    assert_eq!(out[0].1[0].value.as_ref(), &[0, 0, 0, 4]);
}

#[test]
fn or_of_row_filters_keeps_rows_any_of_them_wants() {
    assert_eq!(
        scan_rows("PrefixFilter('row1') OR PrefixFilter('rox')", &sample()),
        vec!["row1", "rox4"]
    );
    assert_eq!(
        scan_rows(
            "PrefixFilter('row1') OR ValueFilter(=, 'binary:coconut')",
            &sample()
        ),
        vec!["row1", "row2"]
    );
    assert_eq!(
        scan(
            "PrefixFilter('row1') OR ValueFilter(=, 'binary:coconut')",
            &sample()
        )
        .last()
        .cloned(),
        Some("row2 cf:c@5=coconut".to_owned())
    );
}

#[test]
fn and_of_row_filters_needs_all_of_them() {
    assert_eq!(
        scan_rows(
            "PrefixFilter('row') AND RowFilter(>, 'binary:row1')",
            &sample()
        ),
        vec!["row2", "row3"]
    );
}

#[test]
fn and_stops_asking_once_a_cell_is_out() {
    // The pagination filter only counts cells the value filter lets through.
    assert_eq!(
        scan(
            "ValueFilter(=, 'regexstring:^(banana|avocado)$') AND ColumnPaginationFilter(1, 0)",
            &sample()
        ),
        vec!["row1 cf:b@3=banana"]
    );
}

#[test]
fn or_does_not_ask_a_filter_again_for_a_column_it_left() {
    // The pagination filter said IncludeAndNextColumn for cf:a@3; the value filter keeps
    // the older version, which the pagination filter must not count as a new column.
    assert_eq!(
        scan(
            "ColumnPaginationFilter(2, 0) OR ValueFilter(=, 'binary:apricot')",
            &sample()
        )[..3],
        [
            "row1 cf:a@3=apple",
            "row1 cf:a@2=apricot",
            "row1 cf:b@3=banana"
        ]
    );
}

#[test]
fn or_does_not_ask_a_filter_again_in_a_row_it_left() {
    // FirstKeyOnlyFilter leaves each row after its first cell; ValueFilter still adds
    // the cells it wants.
    assert_eq!(
        scan(
            "FirstKeyOnlyFilter() OR ValueFilter(=, 'binaryprefix:a')",
            &sample()
        ),
        vec![
            "row1 cf:a@3=apple",
            "row1 cf:a@2=apricot",
            "row1 cf2:a@3=avocado",
            "row2 cf:a@5=Cherry",
            "row3 cf:b@1=blueberry",
            "rox4 cf:a@1=date",
        ]
    );
}

#[test]
fn skip_drops_rows_with_any_failing_cell() {
    let rows = sample();
    assert_eq!(
        scan_rows("SKIP ValueFilter(!=, 'binary:banana')", &rows),
        vec!["row2", "row3", "rox4"]
    );
    // Older versions count too.
    assert_eq!(
        scan_rows("SKIP ValueFilter(!=, 'binary:apricot')", &rows),
        vec!["row2", "row3", "rox4"]
    );
    // Kept rows are whole.
    assert_eq!(
        scan("SKIP ValueFilter(!=, 'binary:banana')", &rows),
        everything(&rows)[4..].to_vec()
    );
    // The wrapped filter's row decisions apply as well.
    assert_eq!(scan_rows("SKIP PrefixFilter('row2')", &rows), vec!["row2"]);
}

#[test]
fn while_ends_the_scan_at_the_first_failing_row() {
    let rows = sample();
    let mut filter = parse_filter(b"WHILE RowFilter(<, 'binary:row3')").unwrap();
    let keys: Vec<_> = run_filter(filter.as_mut(), &rows)
        .into_iter()
        .map(|(k, _)| String::from_utf8_lossy(&k).into_owned())
        .collect();
    assert_eq!(keys, vec!["row1", "row2"]);
    assert!(filter.filter_all_remaining());
}

#[test]
fn while_ends_the_scan_at_the_first_failing_cell() {
    // banana fails: the cells before it are returned, nothing after it.
    assert_eq!(
        scan("WHILE ValueFilter(!=, 'binary:banana')", &sample()),
        vec!["row1 cf:a@3=apple", "row1 cf:a@2=apricot"]
    );
}

#[test]
fn while_inside_or_only_silences_its_own_branch() {
    // Once the WHILE branch has filtered all remaining, the OR goes on with the other.
    assert_eq!(
        scan_rows(
            "WHILE RowFilter(<, 'binary:row2') OR RowFilter(=, 'binary:rox4')",
            &sample()
        ),
        vec!["row1", "rox4"]
    );
}

#[test]
fn and_with_a_finished_filter_ends_the_scan() {
    let rows = sample();
    let mut filter =
        parse_filter(b"InclusiveStopFilter('row1') AND ValueFilter(!=, 'binary:x')").unwrap();
    let out = run_filter(filter.as_mut(), &rows);
    assert_eq!(out.len(), 1);
    assert!(filter.filter_all_remaining());
}
