//! Properties: the parser never panics, printing then parsing gives the tree back, and
//! value and qualifier filters (alone, under AND and under OR) agree with a direct model.

use std::cmp::Ordering;

use bytes::Bytes;
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use super::harness::{cell, render, run_filter, table, Row};
use crate::filter::{
    parse, parse_filter, Arg, CompareOp, FilterCall, FilterExpr, EXTENSION_FILTERS,
    REGISTERED_FILTERS,
};

fn arg() -> impl Strategy<Value = Arg> {
    prop_oneof![
        vec(any::<u8>(), 0..8).prop_map(|v| Arg::Quoted(Bytes::from(v))),
        any::<i64>().prop_map(Arg::Integer),
        any::<bool>().prop_map(Arg::Boolean),
        select(CompareOp::ALL.to_vec()).prop_map(Arg::Operator),
    ]
}

fn name() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        select([&REGISTERED_FILTERS[..], &EXTENSION_FILTERS[..]].concat())
            .prop_map(|n| Bytes::from_static(n.as_bytes())),
        "[A-Za-z][A-Za-z0-9_:'.,]{0,10}"
            .prop_filter("keywords are not names", |n| {
                !["AND", "OR", "SKIP", "WHILE"].contains(&n.as_str())
            })
            .prop_map(Bytes::from),
    ]
}

fn expr() -> impl Strategy<Value = FilterExpr> {
    let call = (name(), vec(arg(), 0..4))
        .prop_map(|(name, args)| FilterExpr::Call(FilterCall::new(name, args)));
    call.prop_recursive(5, 48, 4, |inner| {
        prop_oneof![
            vec(inner.clone(), 2..4).prop_map(FilterExpr::And),
            vec(inner.clone(), 2..4).prop_map(FilterExpr::Or),
            inner.clone().prop_map(|e| FilterExpr::Skip(Box::new(e))),
            inner.prop_map(|e| FilterExpr::While(Box::new(e))),
        ]
    })
}

/// Filter-string fragments, to reach deeper into the grammar than random bytes do.
const FRAGMENTS: [&str; 24] = [
    "(",
    ")",
    " ",
    "\t",
    "\n",
    ",",
    "'",
    "''",
    "AND ",
    " OR ",
    "SKIP ",
    "WHILE ",
    "PrefixFilter",
    "ValueFilter",
    "PageFilter",
    "SingleColumnValueFilter",
    "=",
    "!=",
    "<=",
    "'binary:a'",
    "'regexstring:(a|b'",
    "-12",
    "true",
    "99999999999999999999",
];

proptest! {
    #[test]
    fn parsing_random_bytes_never_panics(input in vec(any::<u8>(), 0..256)) {
        let _ = parse_filter(&input);
    }

    #[test]
    fn parsing_random_fragments_never_panics(pieces in vec(select(FRAGMENTS.to_vec()), 0..40)) {
        let input = pieces.concat();
        let _ = parse_filter(input.as_bytes());
    }

    #[test]
    fn printing_then_parsing_round_trips(tree in expr()) {
        let text = tree.to_filter_string();
        let reparsed = parse(&text);
        prop_assert_eq!(reparsed, Ok(tree), "{}", String::from_utf8_lossy(&text));
    }
}

/// A compare test as the model sees it.
#[derive(Debug, Clone)]
struct Test {
    op: CompareOp,
    operand: String,
}

impl Test {
    fn holds(&self, part: &str) -> bool {
        let order = part.cmp(&self.operand);
        match self.op {
            CompareOp::Less => order == Ordering::Less,
            CompareOp::LessOrEqual => order != Ordering::Greater,
            CompareOp::Equal => order == Ordering::Equal,
            CompareOp::NotEqual => order != Ordering::Equal,
            CompareOp::GreaterOrEqual => order != Ordering::Less,
            CompareOp::Greater => order == Ordering::Greater,
        }
    }

    fn filter(&self, name: &str) -> String {
        format!("{name}({}, 'binary:{}')", self.op.symbol(), self.operand)
    }
}

fn test() -> impl Strategy<Value = Test> {
    (select(CompareOp::ALL.to_vec()), "[abc]{0,3}").prop_map(|(op, operand)| Test { op, operand })
}

/// Rows of single-version cells with short values over a small alphabet.
fn rows() -> impl Strategy<Value = Vec<Row>> {
    vec(
        ("[rs][12]", "[xy]", "[abc]{0,3}", 1i64..4, "[abc]{0,3}"),
        0..24,
    )
    .prop_map(|cells| {
        let mut seen = std::collections::HashSet::new();
        table(
            cells
                .into_iter()
                .filter(|(row, family, qualifier, ts, _)| {
                    seen.insert((row.clone(), family.clone(), qualifier.clone(), *ts))
                })
                .map(|(row, family, qualifier, ts, value)| {
                    cell(&row, &family, &qualifier, ts, &value)
                })
                .collect(),
        )
    })
}

fn expected(rows: &[Row], keep: impl Fn(&str, &str) -> bool) -> Vec<String> {
    rows.iter()
        .flat_map(|(_, cells)| cells.iter())
        .filter(|c| {
            keep(
                &String::from_utf8_lossy(&c.qualifier),
                &String::from_utf8_lossy(&c.value),
            )
        })
        .map(render)
        .collect()
}

fn actual(filter: &str, rows: &[Row]) -> Vec<String> {
    let mut compiled = parse_filter(filter.as_bytes()).unwrap();
    run_filter(compiled.as_mut(), rows)
        .iter()
        .flat_map(|(_, cells)| cells.iter().map(render))
        .collect()
}

proptest! {
    #[test]
    fn value_filter_matches_the_model(rows in rows(), value in test()) {
        let filter = value.filter("ValueFilter");
        prop_assert_eq!(actual(&filter, &rows), expected(&rows, |_, v| value.holds(v)));
    }

    #[test]
    fn and_of_value_and_qualifier_filters_matches_the_model(
        rows in rows(), value in test(), qualifier in test()
    ) {
        let filter = format!(
            "{} AND {}",
            value.filter("ValueFilter"),
            qualifier.filter("QualifierFilter")
        );
        prop_assert_eq!(
            actual(&filter, &rows),
            expected(&rows, |q, v| value.holds(v) && qualifier.holds(q))
        );
    }

    #[test]
    fn or_of_value_and_qualifier_filters_matches_the_model(
        rows in rows(), value in test(), qualifier in test()
    ) {
        let filter = format!(
            "{} OR {}",
            value.filter("ValueFilter"),
            qualifier.filter("QualifierFilter")
        );
        prop_assert_eq!(
            actual(&filter, &rows),
            expected(&rows, |q, v| value.holds(v) || qualifier.holds(q))
        );
    }
}
