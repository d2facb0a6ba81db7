//! Skip hints: passing over the rows a filter's hint names must never change what a
//! scan returns. Random filter trees mixing the hinting filters (MultiRowRangeFilter,
//! FuzzyRowFilter, PrefixFilter) with stateful ones (WHILE, PageFilter,
//! InclusiveStopFilter) run over random rows twice, once showing every row to the
//! filter and once following its hints, forward and reversed; plus checks that the
//! hints do pass over rows.

use bytes::Bytes;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use tabula_storage::types::Cell;
use tabula_storage::{Filter, RowVerdict, SkipHint};

use super::harness::{run_filter_with, Hints, Row};
use crate::filter::{parse_filter, Arg, CompareOp, FilterCall, FilterExpr};

/// Short keys over few byte values, extremes included.
fn key_bytes(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    vec(select(vec![0x00u8, b'a', b'b', b'c', 0xff]), 0..=max_len)
}

fn quoted(bytes: Vec<u8>) -> Arg {
    Arg::Quoted(Bytes::from(bytes))
}

fn call(name: &str, args: Vec<Arg>) -> FilterExpr {
    FilterExpr::Call(FilterCall::new(name.as_bytes().to_vec(), args))
}

/// Valid MultiRowRangeFilter ranges (start no later than stop).
fn row_ranges() -> impl Strategy<Value = FilterExpr> {
    vec(
        (key_bytes(3), any::<bool>(), key_bytes(3), any::<bool>()).prop_map(
            |(a, a_in, b, b_in)| {
                let (start, stop) = if b.is_empty() || a <= b {
                    (a, b)
                } else {
                    (b, a)
                };
                // An exclusive stop equal to the start is invalid: make it inclusive.
                let stop_in = b_in || start == stop;
                vec![
                    quoted(start),
                    Arg::Boolean(a_in),
                    quoted(stop),
                    Arg::Boolean(stop_in),
                ]
            },
        ),
        1..4,
    )
    .prop_map(|ranges| call("MultiRowRangeFilter", ranges.concat()))
}

fn fuzzy_keys() -> impl Strategy<Value = FilterExpr> {
    vec(
        (1usize..4).prop_flat_map(|len| {
            (
                vec(select(vec![0x00u8, b'a', b'b', b'c', 0xff]), len),
                vec(0u8..2, len),
            )
        }),
        1..3,
    )
    .prop_map(|keys| {
        let args = keys
            .into_iter()
            .flat_map(|(key, mask)| [quoted(key), quoted(mask)])
            .collect();
        call("FuzzyRowFilter", args)
    })
}

fn leaf() -> impl Strategy<Value = FilterExpr> {
    prop_oneof![
        row_ranges(),
        fuzzy_keys(),
        key_bytes(2).prop_map(|p| call("PrefixFilter", vec![quoted(p)])),
        key_bytes(3).prop_map(|s| call("InclusiveStopFilter", vec![quoted(s)])),
        (1i64..4).prop_map(|n| call("PageFilter", vec![Arg::Integer(n)])),
        (select(CompareOp::ALL.to_vec()), key_bytes(2)).prop_map(|(op, v)| {
            let mut comparator = b"binary:".to_vec();
            comparator.extend(v);
            call("RowFilter", vec![Arg::Operator(op), quoted(comparator)])
        }),
        select(vec![&b"a"[..], b"b", b"\xff"]).prop_map(|v| {
            let mut comparator = b"substring:".to_vec();
            comparator.extend_from_slice(v);
            call(
                "RowFilter",
                vec![Arg::Operator(CompareOp::NotEqual), quoted(comparator)],
            )
        }),
        select(vec![&b"x"[..], b"y"]).prop_map(|v| {
            let mut comparator = b"binary:".to_vec();
            comparator.extend_from_slice(v);
            call(
                "ValueFilter",
                vec![Arg::Operator(CompareOp::Equal), quoted(comparator)],
            )
        }),
    ]
}

fn tree() -> impl Strategy<Value = FilterExpr> {
    leaf().prop_recursive(3, 12, 3, |inner| {
        prop_oneof![
            vec(inner.clone(), 2..4).prop_map(FilterExpr::And),
            vec(inner.clone(), 2..4).prop_map(FilterExpr::Or),
            inner.clone().prop_map(|e| FilterExpr::While(Box::new(e))),
            inner.prop_map(|e| FilterExpr::Skip(Box::new(e))),
        ]
    })
}

/// Rows of one or two cells with values `x` or `y`, ascending.
fn rows() -> impl Strategy<Value = Vec<Row>> {
    vec(
        (
            key_bytes(4).prop_filter("rows are not empty", |k| !k.is_empty()),
            vec(select(vec!["x", "y"]), 1..3),
        ),
        0..40,
    )
    .prop_map(|mut rows| {
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        rows.into_iter()
            .map(|(key, values)| {
                let row = Bytes::from(key);
                let cells = values
                    .into_iter()
                    .enumerate()
                    .map(|(i, value)| Cell {
                        row: row.clone(),
                        family: Bytes::from_static(b"cf"),
                        qualifier: Bytes::from(format!("q{i}")),
                        timestamp: 1,
                        value: Bytes::from_static(value.as_bytes()),
                    })
                    .collect();
                (row, cells)
            })
            .collect()
    })
}

fn run(expr: &FilterExpr, rows: &[Row], hints: Hints) -> Vec<Row> {
    let text = expr.to_filter_string();
    let mut filter =
        parse_filter(&text).unwrap_or_else(|e| panic!("{}: {e}", String::from_utf8_lossy(&text)));
    run_filter_with(filter.as_mut(), rows, hints)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn following_skip_hints_returns_what_seeing_every_row_does(
        expr in tree(),
        rows in rows(),
        reverse in any::<bool>(),
    ) {
        let mut rows = rows;
        if reverse {
            rows.reverse();
        }
        let every_row = run(&expr, &rows, Hints::Ignore);
        let hinted = run(&expr, &rows, Hints::Follow);
        prop_assert_eq!(
            hinted,
            every_row,
            "{}",
            String::from_utf8_lossy(&expr.to_filter_string())
        );
    }
}

/// Counts the row keys a filter is shown.
struct Counting {
    inner: Box<dyn Filter>,
    shown: usize,
}

impl Filter for Counting {
    fn set_reversed(&mut self, reversed: bool) {
        self.inner.set_reversed(reversed);
    }
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        self.shown += 1;
        self.inner.filter_row_key(row)
    }
    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        self.inner.skip_hint(row)
    }
    fn filter_cell(&mut self, cell: &Cell) -> tabula_storage::CellVerdict {
        self.inner.filter_cell(cell)
    }
    fn filter_row(&mut self) -> bool {
        self.inner.filter_row()
    }
    fn filter_all_remaining(&self) -> bool {
        self.inner.filter_all_remaining()
    }
}

/// 1,000 rows `r000`..`r999`, one cell each.
fn numbered_rows() -> Vec<Row> {
    (0..1000)
        .map(|i| {
            let row = Bytes::from(format!("r{i:03}"));
            let cell = Cell {
                row: row.clone(),
                family: Bytes::from_static(b"cf"),
                qualifier: Bytes::from_static(b"q"),
                timestamp: 1,
                value: Bytes::from_static(b"x"),
            };
            (row, vec![cell])
        })
        .collect()
}

/// Runs `filter` over `rows` following hints: (rows emitted, row keys shown).
fn shown(filter: &str, rows: &[Row]) -> (Vec<Bytes>, usize) {
    let inner = parse_filter(filter.as_bytes()).expect("parses");
    let mut counting = Counting { inner, shown: 0 };
    let out = run_filter_with(&mut counting, rows, Hints::Follow)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    (out, counting.shown)
}

#[test]
fn row_ranges_show_the_filter_only_rows_near_their_ranges() {
    let filter = "MultiRowRangeFilter('r100', true, 'r103', false, 'r500', false, 'r502', true)";
    let (out, seen) = shown(filter, &numbered_rows());
    assert_eq!(out, ["r100", "r101", "r102", "r501", "r502"]);
    // r000, the three rows of the first range, r103 (past it), then r501, r502, r503.
    assert_eq!(seen, 8);
    let mut reversed = numbered_rows();
    reversed.reverse();
    let (out, seen) = shown(filter, &reversed);
    assert_eq!(out, ["r502", "r501", "r102", "r101", "r100"]);
    assert_eq!(seen, 8);
}

#[test]
fn fuzzy_keys_jump_to_the_next_possible_match() {
    // Rows r?5? with any middle digit: 10 matches among 1,000 rows.
    let (out, seen) = shown("FuzzyRowFilter('r?5', '\x00\x01\x00')", &numbered_rows());
    let expected: Vec<String> = (0..10).map(|d| format!("r{d}5")).collect();
    assert_eq!(out.len(), 100);
    assert!(out
        .iter()
        .all(|row| expected.iter().any(|e| row.starts_with(e.as_bytes()))));
    // Per hundred: its first row, the ten matches, and the row after them.
    assert_eq!(seen, 120);
}

#[test]
fn prefix_filter_jumps_to_its_prefix_and_an_and_list_to_the_farthest_bound() {
    let (out, seen) = shown("PrefixFilter('r7')", &numbered_rows());
    assert_eq!(out.len(), 100);
    // r000, then r700..r799, then r800 ends the scan.
    assert_eq!(seen, 102);
    let (out, seen) = shown(
        "PrefixFilter('r7') AND MultiRowRangeFilter('r790', true, 'r900', false)",
        &numbered_rows(),
    );
    assert_eq!(out.len(), 10);
    assert_eq!(seen, 12);
}

#[test]
fn while_keeps_every_row_shown() {
    let (out, seen) = shown(
        "WHILE RowFilter(<, 'binary:r500') AND MultiRowRangeFilter('r900', true, '', false)",
        &numbered_rows(),
    );
    assert!(out.is_empty());
    assert_eq!(seen, 501);
}
