//! Skip hints: passing over the rows or columns a filter's hint names must never
//! change what a scan returns. Random filter trees mixing the hinting filters
//! (MultiRowRangeFilter, FuzzyRowFilter, PrefixFilter; ColumnRangeFilter,
//! ColumnPrefixFilter, MultipleColumnPrefixFilter, ColumnPaginationFilter,
//! ColumnValueFilter) with stateful ones (WHILE, SKIP, PageFilter, InclusiveStopFilter,
//! ColumnCountGetFilter, SingleColumnValueFilter, FirstKeyOnlyFilter) run over random
//! rows twice, once showing every row and cell to the filter and once following its
//! hints, forward and reversed; plus checks that the hints do pass over rows and
//! columns.

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

/// Qualifiers and column bounds over a small alphabet (a zero byte included: the
/// first qualifier after another is it with 0x00 appended).
fn qualifier() -> impl Strategy<Value = Vec<u8>> {
    vec(select(vec![0u8, b'a', b'b', b'c']), 0..=2)
}

fn column_leaf() -> impl Strategy<Value = FilterExpr> {
    prop_oneof![
        (qualifier(), any::<bool>(), qualifier(), any::<bool>()).prop_map(|(a, ai, b, bi)| {
            call(
                "ColumnRangeFilter",
                vec![quoted(a), Arg::Boolean(ai), quoted(b), Arg::Boolean(bi)],
            )
        }),
        qualifier().prop_map(|p| call("ColumnPrefixFilter", vec![quoted(p)])),
        proptest::collection::btree_set(qualifier(), 1..3).prop_map(|ps| {
            call(
                "MultipleColumnPrefixFilter",
                ps.into_iter().map(quoted).collect(),
            )
        }),
        (0i64..3, qualifier()).prop_map(|(n, q)| {
            call("ColumnPaginationFilter", vec![Arg::Integer(n), quoted(q)])
        }),
        (0i64..3, 0i64..3).prop_map(|(n, o)| {
            call(
                "ColumnPaginationFilter",
                vec![Arg::Integer(n), Arg::Integer(o)],
            )
        }),
        (0i64..4).prop_map(|n| call("ColumnCountGetFilter", vec![Arg::Integer(n)])),
        (select(vec!["cf", "cg"]), qualifier()).prop_map(|(f, q)| {
            call(
                "ColumnValueFilter",
                vec![
                    quoted(f.as_bytes().to_vec()),
                    quoted(q),
                    Arg::Operator(CompareOp::Equal),
                    quoted(b"binary:x".to_vec()),
                ],
            )
        }),
        (select(vec!["cf", "cg"]), qualifier(), any::<bool>()).prop_map(|(f, q, missing)| {
            call(
                "SingleColumnValueFilter",
                vec![
                    quoted(f.as_bytes().to_vec()),
                    quoted(q),
                    Arg::Operator(CompareOp::Equal),
                    quoted(b"binary:x".to_vec()),
                    Arg::Boolean(missing),
                    Arg::Boolean(true),
                ],
            )
        }),
        Just(call("FirstKeyOnlyFilter", vec![])),
        Just(call("KeyOnlyFilter", vec![])),
        (1i64..4).prop_map(|t| call("TimestampsFilter", vec![Arg::Integer(t)])),
    ]
}

fn leaf() -> impl Strategy<Value = FilterExpr> {
    prop_oneof![
        column_leaf(),
        column_leaf(),
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

/// Rows of up to eight cells over two families, qualifiers of up to two bytes of
/// 0x00 and `a`..`c`, versions 1..3, values `x` or `y`, ascending as the engine delivers them.
fn rows() -> impl Strategy<Value = Vec<Row>> {
    let cell = (
        select(vec!["cf", "cg"]),
        vec(select(vec![0u8, b'a', b'b', b'c']), 0..=2),
        1i64..4,
        select(vec!["x", "y"]),
    );
    vec(
        (
            key_bytes(4).prop_filter("rows are not empty", |k| !k.is_empty()),
            vec(cell, 1..8),
        ),
        0..30,
    )
    .prop_map(|mut rows| {
        rows.sort_by(|a, b| a.0.cmp(&b.0));
        rows.dedup_by(|a, b| a.0 == b.0);
        rows.into_iter()
            .map(|(key, cells)| {
                let row = Bytes::from(key);
                let mut cells: Vec<Cell> = cells
                    .into_iter()
                    .map(|(family, qualifier, timestamp, value)| Cell {
                        row: row.clone(),
                        family: Bytes::from_static(family.as_bytes()),
                        qualifier: Bytes::from(qualifier),
                        timestamp,
                        value: Bytes::from_static(value.as_bytes()),
                    })
                    .collect();
                cells.sort_by(|a, b| {
                    (&a.family, &a.qualifier)
                        .cmp(&(&b.family, &b.qualifier))
                        .then(b.timestamp.cmp(&a.timestamp))
                });
                cells.dedup_by(|a, b| {
                    (&a.family, &a.qualifier, a.timestamp) == (&b.family, &b.qualifier, b.timestamp)
                });
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

/// Passes every call to the filter it wraps, counting the row keys and the cells
/// it is shown.
struct Counting {
    inner: Box<dyn Filter>,
    rows: usize,
    cells: usize,
}

impl Counting {
    fn new(filter: &str) -> Counting {
        let inner = parse_filter(filter.as_bytes()).expect("parses");
        Counting {
            inner,
            rows: 0,
            cells: 0,
        }
    }
}

impl Filter for Counting {
    fn set_reversed(&mut self, reversed: bool) {
        self.inner.set_reversed(reversed);
    }
    fn reset(&mut self) {
        self.inner.reset();
    }
    fn filter_row_key(&mut self, row: &[u8]) -> RowVerdict {
        self.rows += 1;
        self.inner.filter_row_key(row)
    }
    fn skip_hint(&self, row: &[u8]) -> SkipHint {
        self.inner.skip_hint(row)
    }
    fn filter_cell(&mut self, cell: &Cell) -> tabula_storage::CellVerdict {
        self.cells += 1;
        self.inner.filter_cell(cell)
    }
    fn column_hint(&self, cell: &Cell) -> tabula_storage::ColumnHint {
        self.inner.column_hint(cell)
    }
    fn transform_cell(&mut self, cell: Cell) -> Cell {
        self.inner.transform_cell(cell)
    }
    fn filter_row_cells(&mut self, cells: &mut Vec<Cell>) {
        self.inner.filter_row_cells(cells);
    }
    fn filter_row(&mut self) -> bool {
        self.inner.filter_row()
    }
    fn filter_all_remaining(&self) -> bool {
        self.inner.filter_all_remaining()
    }
    fn needs_whole_row(&self) -> bool {
        self.inner.needs_whole_row()
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
    let mut counting = Counting::new(filter);
    let out = run_filter_with(&mut counting, rows, Hints::Follow)
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    (out, counting.rows)
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

/// One row `r` with columns `cf:c000`..`cf:c999`, one version each.
fn wide_row() -> Vec<Row> {
    let row = Bytes::from_static(b"r");
    let cells = (0..1000)
        .map(|i| Cell {
            row: row.clone(),
            family: Bytes::from_static(b"cf"),
            qualifier: Bytes::from(format!("c{i:03}")),
            timestamp: 1,
            value: Bytes::from_static(b"x"),
        })
        .collect();
    vec![(row, cells)]
}

/// Runs `filter` over a wide row following hints: (qualifiers returned, cells shown).
fn cells_shown(filter: &str) -> (Vec<String>, usize) {
    let mut counting = Counting::new(filter);
    let out = run_filter_with(&mut counting, &wide_row(), Hints::Follow)
        .into_iter()
        .flat_map(|(_, cells)| cells)
        .map(|c| String::from_utf8_lossy(&c.qualifier).into_owned())
        .collect();
    (out, counting.cells)
}

#[test]
fn column_filters_jump_to_their_columns_in_a_wide_row() {
    let (out, shown) = cells_shown("ColumnRangeFilter('c500', true, 'c503', false)");
    assert_eq!(out, ["c500", "c501", "c502"]);
    // c000, the three, c503 (past the range: the rest of the family goes).
    assert_eq!(shown, 5);
    let (out, shown) = cells_shown("ColumnPaginationFilter(2, 'c900')");
    assert_eq!(out, ["c900", "c901"]);
    assert_eq!(shown, 4);
    let (out, shown) = cells_shown("MultipleColumnPrefixFilter('c77', 'c12')");
    assert_eq!(out.len(), 20);
    assert!(shown <= 24, "{shown} cells shown");
    let (out, shown) = cells_shown("ColumnPrefixFilter('c12') AND ValueFilter(=, 'binary:x')");
    assert_eq!(out.len(), 10);
    assert!(shown <= 12, "{shown} cells shown");
    // A filter counting the columns it is shown must see them all; after the
    // rejecting filter it is not shown the rejected ones anyway.
    let (out, shown) = cells_shown(
        "ColumnCountGetFilter(1000) AND ColumnRangeFilter('c500', true, 'c503', false)",
    );
    assert_eq!(out, ["c500", "c501", "c502"]);
    assert_eq!(shown, 1000);
    let (out, shown) = cells_shown(
        "ColumnRangeFilter('c500', true, 'c503', false) AND ColumnCountGetFilter(1000)",
    );
    assert_eq!(out, ["c500", "c501", "c502"]);
    assert_eq!(shown, 5);
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
