//! The filters the language accepts beyond HBase's registry: FilterAllFilter,
//! MultiRowRangeFilter, FuzzyRowFilter and RandomRowFilter, alone, combined, in forward
//! and reverse scans, and against brute-force models over random rows.

use bytes::Bytes;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use tabula_storage::types::Cell;

use super::harness::{cell, run_filter, sample, scan_rows, table, Row};
use crate::filter::row_filters::RandomRowFilter;
use crate::filter::{parse_filter, Arg, FilterCall, FilterExpr, EXTENSION_FILTERS};

/// One single-cell row per key, in ascending order.
fn rows_of(keys: &[&[u8]]) -> Vec<Row> {
    let mut keys: Vec<&[u8]> = keys.to_vec();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .map(|key| {
            let row = Bytes::copy_from_slice(key);
            let cell = Cell {
                row: row.clone(),
                family: Bytes::from_static(b"cf"),
                qualifier: Bytes::from_static(b"q"),
                timestamp: 1,
                value: Bytes::from_static(b"v"),
            };
            (row, vec![cell])
        })
        .collect()
}

/// The filter string of one call.
fn call_text(name: &str, args: Vec<Arg>) -> Vec<u8> {
    FilterExpr::Call(FilterCall::new(name.as_bytes().to_vec(), args)).to_filter_string()
}

/// Runs `filter` over `rows` in the given order, returning the emitted row keys and
/// whether the filter ended the scan.
fn keys_and_end(filter: &[u8], rows: &[Row]) -> (Vec<Bytes>, bool) {
    let mut compiled =
        parse_filter(filter).unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(filter)));
    let keys = run_filter(compiled.as_mut(), rows)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    (keys, compiled.filter_all_remaining())
}

fn keys(filter: &[u8], rows: &[Row]) -> Vec<Bytes> {
    keys_and_end(filter, rows).0
}

fn reversed(rows: &[Row]) -> Vec<Row> {
    rows.iter().rev().cloned().collect()
}

fn bytes_list(keys: &[&[u8]]) -> Vec<Bytes> {
    keys.iter().map(|k| Bytes::copy_from_slice(k)).collect()
}

#[test]
fn filter_all_filter_filters_every_row_and_ends_the_scan_at_once() {
    let rows = sample();
    let (out, ended) = keys_and_end(b"FilterAllFilter()", &rows);
    assert!(out.is_empty());
    assert!(ended);
    // Under OR the other operand still decides; under AND nothing passes.
    assert_eq!(
        scan_rows("FilterAllFilter() OR PrefixFilter('row2')", &rows),
        vec!["row2"]
    );
    assert!(scan_rows("PrefixFilter('row') AND FilterAllFilter()", &rows).is_empty());
    assert!(scan_rows("SKIP FilterAllFilter()", &rows).is_empty());
    assert!(scan_rows("WHILE FilterAllFilter()", &rows).is_empty());
}

#[test]
fn multi_row_range_keeps_the_rows_of_every_range() {
    let rows = sample();
    assert_eq!(
        scan_rows(
            "MultiRowRangeFilter('row2', true, 'row3', false, 'rox', true, '', false)",
            &rows
        ),
        vec!["row2", "rox4"]
    );
    // Ranges given out of order and overlapping mean their union.
    assert_eq!(
        scan_rows(
            "MultiRowRangeFilter('row3', true, 'row4', false, 'row1', true, 'row2', true, \
             'row15', true, 'row25', false)",
            &rows
        ),
        vec!["row1", "row2", "row3"]
    );
    // An open start reaches back to the first row.
    assert_eq!(
        scan_rows("MultiRowRangeFilter('', true, 'row2', true)", &rows),
        vec!["row1", "row2"]
    );
}

#[test]
fn multi_row_range_honours_inclusive_and_exclusive_ends() {
    let rows = rows_of(&[b"a", b"b", b"c", b"d", b"e"]);
    let cases: [(&str, &[&[u8]]); 5] = [
        ("'b', true, 'd', true", &[b"b", b"c", b"d"]),
        ("'b', false, 'd', true", &[b"c", b"d"]),
        ("'b', true, 'd', false", &[b"b", b"c"]),
        ("'b', false, 'd', false", &[b"c"]),
        ("'c', true, 'c', true", &[b"c"]),
    ];
    for (ranges, expected) in cases {
        let filter = format!("MultiRowRangeFilter({ranges})");
        assert_eq!(
            keys(filter.as_bytes(), &rows),
            bytes_list(expected),
            "{filter}"
        );
    }
    // (c, c] holds no row; [b, c) and (c, d] leave c out.
    assert!(keys(b"MultiRowRangeFilter('c', false, 'c', true)", &rows).is_empty());
    assert_eq!(
        keys(
            b"MultiRowRangeFilter('b', true, 'c', false, 'c', false, 'd', true)",
            &rows
        ),
        bytes_list(&[b"b", b"d"])
    );
}

#[test]
fn multi_row_range_ends_the_scan_past_the_last_range_either_way() {
    let rows = rows_of(&[b"a", b"b", b"c", b"d", b"e", b"f"]);
    let filter = b"MultiRowRangeFilter('b', true, 'c', true)";
    let (forward, ended) = keys_and_end(filter, &rows);
    assert_eq!(forward, bytes_list(&[b"b", b"c"]));
    assert!(ended, "a forward scan ends after the last range");

    // A reverse scan starts above the ranges: that must not end it.
    let (backward, ended) = keys_and_end(filter, &reversed(&rows));
    assert_eq!(backward, bytes_list(&[b"c", b"b"]));
    assert!(ended, "a reverse scan ends below the first range");

    // Still inside the ranges' reach: the scan goes on.
    let (_, ended) = keys_and_end(b"MultiRowRangeFilter('b', true, '', false)", &rows);
    assert!(!ended);
}

#[test]
fn multi_row_range_in_a_get_judges_the_one_row() {
    let rows = rows_of(&[b"k"]);
    assert_eq!(
        keys(b"MultiRowRangeFilter('a', true, 'z', false)", &rows),
        bytes_list(&[b"k"])
    );
    let (out, ended) = keys_and_end(b"MultiRowRangeFilter('a', true, 'b', false)", &rows);
    assert!(out.is_empty());
    // A get is read forward: past the last range, nothing after it could pass.
    assert!(ended);
}

#[test]
fn fuzzy_row_filter_matches_fixed_positions_only() {
    let rows = rows_of(&[
        b"0001_99_2020_01",
        b"0002_99_2021_01",
        b"0003_98_2020_01",
        b"0004_99_2020_02",
        b"0005_99_2020_01_extra",
        b"0006_9",
    ]);
    let expected = bytes_list(&[
        b"0001_99_2020_01",
        b"0002_99_2021_01",
        b"0005_99_2020_01_extra",
        b"0006_9",
    ]);
    // The same mask as digits and as the bytes 0 and 1.
    let digits = b"FuzzyRowFilter('????_99_????_01', '111100001111000')".to_vec();
    assert_eq!(keys(&digits, &rows), expected);
    let raw = call_text(
        "FuzzyRowFilter",
        vec![
            Arg::Quoted(Bytes::from_static(b"????_99_????_01")),
            Arg::Quoted(Bytes::from_static(&[
                1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0,
            ])),
        ],
    );
    assert_eq!(keys(&raw, &rows), expected);
}

#[test]
fn fuzzy_row_filter_passes_rows_matching_any_key() {
    let rows = rows_of(&[b"a1", b"a2", b"b1", b"b2", b"c1"]);
    assert_eq!(
        keys(b"FuzzyRowFilter('a?', '01', '?1', '10')", &rows),
        bytes_list(&[b"a1", b"a2", b"b1", b"c1"])
    );
    // An empty key matches every row.
    assert_eq!(keys(b"FuzzyRowFilter('', '')", &rows).len(), rows.len());
}

#[test]
fn fuzzy_row_filter_ends_the_scan_past_every_match_either_way() {
    let rows = rows_of(&[b"a1", b"b1", b"b2", b"c1", b"d1"]);
    let filter = b"FuzzyRowFilter('b?', '01')";
    let (forward, ended) = keys_and_end(filter, &rows);
    assert_eq!(forward, bytes_list(&[b"b1", b"b2"]));
    assert!(ended);
    let (backward, ended) = keys_and_end(filter, &reversed(&rows));
    assert_eq!(backward, bytes_list(&[b"b2", b"b1"]));
    assert!(ended);
    // A free first byte can match anywhere ahead: the scan goes on to the end.
    let (_, ended) = keys_and_end(b"FuzzyRowFilter('?1', '10')", &rows);
    assert!(!ended);
}

#[test]
fn random_row_filter_extremes_filter_all_or_nothing() {
    let rows = sample();
    assert!(scan_rows("RandomRowFilter('0')", &rows).is_empty());
    assert!(scan_rows("RandomRowFilter('-2.5')", &rows).is_empty());
    assert_eq!(scan_rows("RandomRowFilter('1')", &rows).len(), rows.len());
    assert_eq!(scan_rows("RandomRowFilter('7')", &rows).len(), rows.len());
}

#[test]
fn random_row_filter_passes_about_its_chance_of_rows() {
    let cells: Vec<Cell> = (0..4000)
        .map(|i| cell(&format!("row{i:05}"), "cf", "q", 1, "v"))
        .collect();
    let rows = table(cells);
    // Seeded: the same seed draws the same rows.
    let mut first = RandomRowFilter::with_seed(0.25, 7);
    let mut second = RandomRowFilter::with_seed(0.25, 7);
    let drawn = run_filter(&mut first, &rows);
    assert_eq!(drawn, run_filter(&mut second, &rows));
    assert!((850..1150).contains(&drawn.len()), "{}", drawn.len());
    // Unseeded, through the language (about 16 standard deviations of room).
    let passed = scan_rows("RandomRowFilter('0.5')", &rows).len();
    assert!((1500..2500).contains(&passed), "{passed}");
    // Whole rows pass or fail.
    let wide = table(
        (0..200)
            .flat_map(|i| {
                let row = format!("r{i:03}");
                [cell(&row, "cf", "a", 1, "v"), cell(&row, "cf", "b", 1, "v")]
            })
            .collect(),
    );
    let mut filter = parse_filter(b"RandomRowFilter('0.5')").unwrap();
    for (_, cells) in run_filter(filter.as_mut(), &wide) {
        assert_eq!(cells.len(), 2);
    }
}

/// A range as given to the filter: (start, start inclusive, stop, stop inclusive).
type RangeSpec = (Vec<u8>, bool, Vec<u8>, bool);

/// HBase's validity rule.
fn valid(range: &RangeSpec) -> bool {
    let (start, _, stop, stop_inclusive) = range;
    start.is_empty() || stop.is_empty() || start < stop || (start == stop && *stop_inclusive)
}

/// HBase's containment rule, empty ends open.
fn in_range(range: &RangeSpec, row: &[u8]) -> bool {
    let (start, start_inclusive, stop, stop_inclusive) = range;
    let after_start =
        start.is_empty() || row > start.as_slice() || (*start_inclusive && row == start.as_slice());
    let before_stop =
        stop.is_empty() || row < stop.as_slice() || (*stop_inclusive && row == stop.as_slice());
    after_start && before_stop
}

fn range_args(ranges: &[RangeSpec]) -> Vec<Arg> {
    ranges
        .iter()
        .flat_map(|(start, si, stop, ti)| {
            [
                Arg::Quoted(Bytes::copy_from_slice(start)),
                Arg::Boolean(*si),
                Arg::Quoted(Bytes::copy_from_slice(stop)),
                Arg::Boolean(*ti),
            ]
        })
        .collect()
}

/// A fuzzy key as given to the filter: the key and its 0/1 mask.
type FuzzySpec = (Vec<u8>, Vec<u8>);

fn fuzzy_match(spec: &FuzzySpec, row: &[u8]) -> bool {
    let (key, mask) = spec;
    key.iter()
        .zip(mask)
        .zip(row)
        .all(|((k, m), r)| *m == 1 || k == r)
}

fn fuzzy_args(specs: &[FuzzySpec]) -> Vec<Arg> {
    specs
        .iter()
        .flat_map(|(key, mask)| {
            [
                Arg::Quoted(Bytes::copy_from_slice(key)),
                Arg::Quoted(Bytes::copy_from_slice(mask)),
            ]
        })
        .collect()
}

/// Short keys over few byte values, including the extremes, so ranges and fuzzy keys
/// hit rows, prefixes and ends often.
fn key_bytes(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(select(vec![0x00u8, b'a', b'b', b'c', 0xff]), 0..=max_len)
}

fn row_keys() -> impl Strategy<Value = Vec<Vec<u8>>> {
    vec(
        key_bytes(4).prop_filter("rows are not empty", |k| !k.is_empty()),
        0..40,
    )
}

fn range_spec() -> impl Strategy<Value = RangeSpec> {
    (key_bytes(3), any::<bool>(), key_bytes(3), any::<bool>())
}

fn fuzzy_spec() -> impl Strategy<Value = FuzzySpec> {
    (0usize..4).prop_flat_map(|len| {
        (
            vec(select(vec![0x00u8, b'a', b'b', b'c', 0xff]), len),
            vec(0u8..2, len),
        )
    })
}

fn expected_keys(rows: &[Row], keep: impl Fn(&[u8]) -> bool) -> Vec<Bytes> {
    rows.iter()
        .map(|(key, _)| key.clone())
        .filter(|key| keep(key))
        .collect()
}

fn rows_from(keys: &[Vec<u8>]) -> Vec<Row> {
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    rows_of(&refs)
}

proptest! {
    #[test]
    fn multi_row_range_matches_the_brute_force_model(
        keys in row_keys(),
        ranges in vec(range_spec(), 1..5),
        reverse in any::<bool>(),
    ) {
        let mut rows = rows_from(&keys);
        if reverse {
            rows.reverse();
        }
        let text = call_text("MultiRowRangeFilter", range_args(&ranges));
        match parse_filter(&text) {
            Err(e) => prop_assert!(!ranges.iter().all(valid), "{e}"),
            Ok(mut filter) => {
                prop_assert!(ranges.iter().all(valid));
                let out: Vec<Bytes> = run_filter(filter.as_mut(), &rows)
                    .into_iter()
                    .map(|(key, _)| key)
                    .collect();
                let expected = expected_keys(&rows, |row| ranges.iter().any(|r| in_range(r, row)));
                prop_assert_eq!(out, expected);
            }
        }
    }

    #[test]
    fn fuzzy_row_matches_the_brute_force_model(
        keys in row_keys(),
        specs in vec(fuzzy_spec(), 1..4),
        reverse in any::<bool>(),
    ) {
        let mut rows = rows_from(&keys);
        if reverse {
            rows.reverse();
        }
        let text = call_text("FuzzyRowFilter", fuzzy_args(&specs));
        let out: Vec<Bytes> = {
            let mut filter = parse_filter(&text).expect("builds");
            run_filter(filter.as_mut(), &rows).into_iter().map(|(key, _)| key).collect()
        };
        let expected = expected_keys(&rows, |row| specs.iter().any(|s| fuzzy_match(s, row)));
        prop_assert_eq!(out, expected);
    }

    #[test]
    fn combined_row_set_filters_match_the_model(
        keys in row_keys(),
        ranges in vec(range_spec().prop_filter("valid", valid), 1..4),
        specs in vec(fuzzy_spec(), 1..3),
        and in any::<bool>(),
        reverse in any::<bool>(),
    ) {
        let mut rows = rows_from(&keys);
        if reverse {
            rows.reverse();
        }
        let operands = vec![
            FilterExpr::Call(FilterCall::new(&b"MultiRowRangeFilter"[..], range_args(&ranges))),
            FilterExpr::Call(FilterCall::new(&b"FuzzyRowFilter"[..], fuzzy_args(&specs))),
        ];
        let expr = if and { FilterExpr::And(operands) } else { FilterExpr::Or(operands) };
        let mut filter = parse_filter(&expr.to_filter_string()).expect("builds");
        let out: Vec<Bytes> =
            run_filter(filter.as_mut(), &rows).into_iter().map(|(key, _)| key).collect();
        let expected = expected_keys(&rows, |row| {
            let ranged = ranges.iter().any(|r| in_range(r, row));
            let fuzzy = specs.iter().any(|s| fuzzy_match(s, row));
            if and { ranged && fuzzy } else { ranged || fuzzy }
        });
        prop_assert_eq!(out, expected);
    }

    #[test]
    fn extension_calls_with_any_arguments_never_panic(
        name in select(EXTENSION_FILTERS.to_vec()),
        args in vec(
            prop_oneof![
                vec(any::<u8>(), 0..6).prop_map(|v| Arg::Quoted(Bytes::from(v))),
                key_bytes(3).prop_map(|v| Arg::Quoted(Bytes::from(v))),
                vec(0u8..2, 0..4).prop_map(|v| Arg::Quoted(Bytes::from(v))),
                "-?[0-9]{0,2}(\\.[0-9]{0,3})?(e-?[0-9])?"
                    .prop_map(|s| Arg::Quoted(Bytes::from(s))),
                any::<i64>().prop_map(Arg::Integer),
                any::<bool>().prop_map(Arg::Boolean),
            ],
            0..9,
        ),
        keys in row_keys(),
    ) {
        let text = call_text(name, args);
        if let Ok(mut filter) = parse_filter(&text) {
            let rows = rows_from(&keys);
            let _ = run_filter(filter.as_mut(), &rows);
            let _ = run_filter(filter.as_mut(), &reversed(&rows));
        }
    }
}
