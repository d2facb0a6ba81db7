//! The grammar, the argument typing, and every parse and build error with its message.

use bytes::Bytes;

use crate::filter::{
    parse, parse_filter, Arg, CompareOp, FilterCall, FilterError, FilterExpr, SyntaxProblem,
    EXTENSION_FILTERS, MAX_NESTING, REGISTERED_FILTERS,
};

fn call(name: &str, args: Vec<Arg>) -> FilterExpr {
    FilterExpr::Call(FilterCall::new(name.as_bytes().to_vec(), args))
}

fn leaf(name: &str) -> FilterExpr {
    call(name, vec![])
}

fn quoted(text: &[u8]) -> Arg {
    Arg::Quoted(Bytes::copy_from_slice(text))
}

fn parsed(input: &str) -> FilterExpr {
    parse(input.as_bytes()).unwrap_or_else(|e| panic!("{input}: {e}"))
}

fn parse_error(input: &[u8]) -> String {
    match parse(input) {
        Ok(expr) => panic!("{} parsed as {expr:?}", String::from_utf8_lossy(input)),
        Err(e) => e.to_string(),
    }
}

fn build_error(input: &str) -> String {
    match parse_filter(input.as_bytes()) {
        Ok(_) => panic!("{input} was accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn a_simple_call_with_every_argument_kind() {
    assert_eq!(
        parsed("SingleColumnValueFilter ('cf1', 'qual1', =, 'binary:val1', TRUE, false)"),
        call(
            "SingleColumnValueFilter",
            vec![
                quoted(b"cf1"),
                quoted(b"qual1"),
                Arg::Operator(CompareOp::Equal),
                quoted(b"binary:val1"),
                Arg::Boolean(true),
                Arg::Boolean(false),
            ]
        )
    );
    assert_eq!(
        parsed("ColumnPaginationFilter(10, -3)"),
        call(
            "ColumnPaginationFilter",
            vec![Arg::Integer(10), Arg::Integer(-3)]
        )
    );
}

#[test]
fn doubled_quotes_escape_a_quote_and_quotes_hold_any_bytes() {
    assert_eq!(
        parsed("PrefixFilter('it''s')"),
        call("PrefixFilter", vec![quoted(b"it's")])
    );
    assert_eq!(
        parsed("PrefixFilter('''')"),
        call("PrefixFilter", vec![quoted(b"'")])
    );
    assert_eq!(
        parsed("PrefixFilter('')"),
        call("PrefixFilter", vec![quoted(b"")])
    );
    assert_eq!(
        parse(b"PrefixFilter('a)b, c\n\xfe\x00')").unwrap(),
        call("PrefixFilter", vec![quoted(b"a)b, c\n\xfe\x00")])
    );
}

#[test]
fn every_compare_operator_parses() {
    for op in CompareOp::ALL {
        let text = format!("ValueFilter({}, 'binary:x')", op.symbol());
        assert_eq!(
            parsed(&text),
            call("ValueFilter", vec![Arg::Operator(op), quoted(b"binary:x")])
        );
    }
}

#[test]
fn nested_parentheses_are_transparent() {
    assert_eq!(parsed("((KeyOnlyFilter()))"), leaf("KeyOnlyFilter"));
    assert_eq!(
        parsed("((A()) AND ((B())))"),
        FilterExpr::And(vec![leaf("A"), leaf("B")])
    );
}

#[test]
fn and_binds_tighter_than_or() {
    assert_eq!(
        parsed("A() OR B() AND C()"),
        FilterExpr::Or(vec![leaf("A"), FilterExpr::And(vec![leaf("B"), leaf("C")])])
    );
    assert_eq!(
        parsed("A() AND B() OR C() AND D()"),
        FilterExpr::Or(vec![
            FilterExpr::And(vec![leaf("A"), leaf("B")]),
            FilterExpr::And(vec![leaf("C"), leaf("D")]),
        ])
    );
    assert_eq!(
        parsed("A() AND (B() OR C())"),
        FilterExpr::And(vec![leaf("A"), FilterExpr::Or(vec![leaf("B"), leaf("C")])])
    );
}

#[test]
fn skip_and_while_bind_tightest() {
    assert_eq!(
        parsed("SKIP A() AND B()"),
        FilterExpr::And(vec![FilterExpr::Skip(Box::new(leaf("A"))), leaf("B")])
    );
    assert_eq!(
        parsed("A() OR WHILE B()"),
        FilterExpr::Or(vec![leaf("A"), FilterExpr::While(Box::new(leaf("B")))])
    );
    assert_eq!(
        parsed("WHILE (A() OR B())"),
        FilterExpr::While(Box::new(FilterExpr::Or(vec![leaf("A"), leaf("B")])))
    );
    assert_eq!(
        parsed("SKIP WHILE A()"),
        FilterExpr::Skip(Box::new(FilterExpr::While(Box::new(leaf("A")))))
    );
    assert_eq!(parsed("SKIP(A())"), FilterExpr::Skip(Box::new(leaf("A"))));
}

#[test]
fn chains_flatten_but_groups_stay_nested() {
    assert_eq!(
        parsed("A() AND B() AND C()"),
        FilterExpr::And(vec![leaf("A"), leaf("B"), leaf("C")])
    );
    assert_eq!(
        parsed("A() OR B() OR C() OR D()"),
        FilterExpr::Or(vec![leaf("A"), leaf("B"), leaf("C"), leaf("D")])
    );
    assert_eq!(
        parsed("(A() AND B()) AND C()"),
        FilterExpr::And(vec![FilterExpr::And(vec![leaf("A"), leaf("B")]), leaf("C")])
    );
}

#[test]
fn whitespace_rules() {
    // Tabs and spaces anywhere between tokens; none needed around parentheses.
    assert_eq!(
        parsed("\t A ( ) \tAND\t( B() )OR(C())  "),
        FilterExpr::Or(vec![FilterExpr::And(vec![leaf("A"), leaf("B")]), leaf("C")])
    );
    assert_eq!(
        parsed("A()AND B()"),
        FilterExpr::And(vec![leaf("A"), leaf("B")])
    );
    // A keyword must be followed by a space or '(', and is upper case only.
    assert_eq!(
        parse_error(b"A() ANDB()"),
        "Incorrect filter string: expected AND or OR at position 4"
    );
    assert_eq!(
        parse_error(b"A() and B()"),
        "Incorrect filter string: expected '(' after the filter name at position 8"
    );
    // Newlines are not whitespace.
    assert_eq!(
        parse_error(b"A()\nAND B()"),
        "Incorrect filter string: unexpected byte 0x0a at position 3"
    );
    assert_eq!(
        parse_error(b"A() AND\nB()"),
        "Incorrect filter string: unexpected byte 0x0a at position 7"
    );
}

#[test]
fn syntax_errors_name_the_rule_and_position() {
    let cases: [(&[u8], &str); 20] = [
        (b"", "empty filter string at position 0"),
        (b" \t ", "empty filter string at position 0"),
        (b"ValueFilter(= 'binary:a')", "expected ',' or ')' at position 14"),
        (b"PrefixFilter('a'", "argument list not closed at position 12"),
        (b"PrefixFilter('a)", "quoted argument not closed at position 13"),
        (
            b"PrefixFilter('a') PrefixFilter('b')",
            "expected AND or OR at position 18",
        ),
        (b"(PrefixFilter('a')", "'(' not closed at position 0"),
        (b"PrefixFilter('a'))", "unmatched ')' at position 17"),
        (b"PrefixFilter('a') AND", "misplaced keyword AND at position 18"),
        (b"AND PrefixFilter('a')", "misplaced keyword AND at position 0"),
        (b"A() OR", "misplaced keyword OR at position 4"),
        (b"SKIP", "misplaced keyword SKIP at position 0"),
        (b"SKIP ", "expected a filter, SKIP, WHILE or '(' at position 5"),
        (b"()", "expected a filter, SKIP, WHILE or '(' at position 1"),
        (b"A() AND AND B()", "expected a filter, SKIP, WHILE or '(' at position 8"),
        (b"PrefixFilter", "expected '(' after the filter name at position 12"),
        (
            b"PageFilter(abc)",
            "unrecognised argument abc (expected a quoted string, integer, boolean or compare operator) at position 11",
        ),
        (b"PageFilter(,)", "expected an argument at position 11"),
        (b"PageFilter(1,)", "expected an argument at position 13"),
        (
            b"PageFilter(99999999999999999999)",
            "integer argument 99999999999999999999 does not fit in 64 bits at position 11",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(
            parse_error(input),
            format!("Incorrect filter string: {message}"),
            "{}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn nesting_is_bounded_without_overflowing_the_stack() {
    let deep = format!("{}A(){}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
    assert_eq!(parsed(&deep), leaf("A"));
    let too_deep = format!(
        "{}A(){}",
        "(".repeat(MAX_NESTING + 1),
        ")".repeat(MAX_NESTING + 1)
    );
    assert_eq!(
        parse(too_deep.as_bytes()).unwrap_err(),
        FilterError::Syntax {
            problem: SyntaxProblem::NestingTooDeep(MAX_NESTING),
            position: MAX_NESTING,
        }
    );
    let hostile = "SKIP ".repeat(100_000) + &"(".repeat(100_000);
    assert!(matches!(
        parse(hostile.as_bytes()),
        Err(FilterError::Syntax {
            problem: SyntaxProblem::NestingTooDeep(_),
            ..
        })
    ));
}

#[test]
fn build_errors_name_the_filter_and_argument() {
    let cases = [
        ("FooFilter()", "Filter Name FooFilter not supported"),
        ("prefixfilter('a')", "Filter Name prefixfilter not supported"),
        (
            "ValueFilter(=, 'binary:a', 'x')",
            "ValueFilter expects 2 arguments but got 3",
        ),
        (
            "ValueFilter(<, 'regexstring:a')",
            "regexstring comparator only allows = and !=",
        ),
        (
            "QualifierFilter(>=, 'substring:a')",
            "substring comparator only allows = and !=",
        ),
        (
            "SingleColumnValueFilter('f', 'q', <, 'regexstring:a')",
            "regexstring comparator only allows = and !=",
        ),
        (
            "ValueFilter(=, 'regexstring:(a')",
            "Invalid regular expression '(a': unclosed group",
        ),
        (
            "ColumnCountGetFilter(3000000000)",
            "ColumnCountGetFilter argument 1: 3000000000 is out of range (a 32-bit integer)",
        ),
        (
            "ColumnPaginationFilter(1, -2)",
            "ColumnPaginationFilter argument 2: -2 is out of range (must not be negative)",
        ),
        (
            "PageFilter(-1)",
            "PageFilter argument 1: -1 is out of range (must not be negative)",
        ),
        (
            "TimestampsFilter(5, -1)",
            "TimestampsFilter argument 2: -1 is out of range (must not be negative)",
        ),
        (
            "PrefixFilter(1)",
            "PrefixFilter argument 1 must be a quoted string",
        ),
        (
            "KeyOnlyFilter('x')",
            "KeyOnlyFilter argument 1 must be a boolean (true or false)",
        ),
        (
            "PageFilter(true)",
            "PageFilter argument 1 must be an integer",
        ),
        (
            "ValueFilter('=', 'binary:a')",
            "ValueFilter argument 1 must be a compare operator (<, <=, =, !=, >=, >)",
        ),
        (
            "ValueFilter(=, 'a')",
            "Incorrect comparator 'a': expected 'type:value'",
        ),
        (
            "ValueFilter(=, 'Binary:a')",
            "Incorrect comparator type 'Binary': expected binary, binaryprefix, regexstring or substring (or long, bitand, bitor, bitxor, null)",
        ),
        (
            "SingleColumnValueFilter('f', 'q', =, 'binary:v', true)",
            "SingleColumnValueFilter expects 4 or 6 arguments but got 5",
        ),
        (
            "DependentColumnFilter('f')",
            "DependentColumnFilter expects 2, 3 or 5 arguments but got 1",
        ),
        (
            "KeyOnlyFilter(true, true)",
            "KeyOnlyFilter expects 0 or 1 arguments but got 2",
        ),
        (
            "FirstKeyOnlyFilter(1)",
            "FirstKeyOnlyFilter expects 0 arguments but got 1",
        ),
        (
            "MultipleColumnPrefixFilter('a', 'b', 'a')",
            "MultipleColumnPrefixFilter: prefixes must be distinct",
        ),
        (
            "PrefixFilter('a') AND NoSuchFilter()",
            "Filter Name NoSuchFilter not supported",
        ),
        (
            "FilterAllFilter(1)",
            "FilterAllFilter expects 0 arguments but got 1",
        ),
        (
            "MultiRowRangeFilter()",
            "MultiRowRangeFilter expects 4 arguments per range ('start', startInclusive, \
             'stop', stopInclusive), at least one range but got 0",
        ),
        (
            "MultiRowRangeFilter('a', true, 'b')",
            "MultiRowRangeFilter expects 4 arguments per range ('start', startInclusive, \
             'stop', stopInclusive), at least one range but got 3",
        ),
        (
            "MultiRowRangeFilter('a', true, 'b', false, 'c', 'd', 'e', true)",
            "MultiRowRangeFilter argument 6 must be a boolean (true or false)",
        ),
        (
            "MultiRowRangeFilter('b', true, 'a', true)",
            "MultiRowRangeFilter: a range's start row must sort before its stop row \
             (or equal it, with an inclusive stop)",
        ),
        (
            "MultiRowRangeFilter('a', true, 'a', false)",
            "MultiRowRangeFilter: a range's start row must sort before its stop row \
             (or equal it, with an inclusive stop)",
        ),
        (
            "FuzzyRowFilter('ab')",
            "FuzzyRowFilter expects 2 arguments per fuzzy key ('key', 'mask'), \
             at least one key but got 1",
        ),
        (
            "FuzzyRowFilter()",
            "FuzzyRowFilter expects 2 arguments per fuzzy key ('key', 'mask'), \
             at least one key but got 0",
        ),
        (
            "FuzzyRowFilter('ab', 01)",
            "FuzzyRowFilter argument 2 must be a quoted string",
        ),
        (
            "FuzzyRowFilter('ab', '0')",
            "FuzzyRowFilter: a mask must be as long as its fuzzy key",
        ),
        (
            "FuzzyRowFilter('ab', '02')",
            "FuzzyRowFilter: mask bytes must be 0 (the byte must match) or 1 (any byte), \
             as the bytes 0x00/0x01 or the digits '0'/'1'",
        ),
        (
            "RandomRowFilter()",
            "RandomRowFilter expects 1 argument but got 0",
        ),
        (
            "RandomRowFilter(1)",
            "RandomRowFilter argument 1 must be a quoted decimal number (e.g. '0.25')",
        ),
        (
            "RandomRowFilter('half')",
            "RandomRowFilter argument 1 must be a quoted decimal number (e.g. '0.25')",
        ),
        (
            "RandomRowFilter('NaN')",
            "RandomRowFilter argument 1 must be a quoted decimal number (e.g. '0.25')",
        ),
        (
            "RandomRowFilter('inf')",
            "RandomRowFilter argument 1 must be a quoted decimal number (e.g. '0.25')",
        ),
    ];
    for (input, message) in cases {
        assert_eq!(build_error(input), message, "{input}");
    }
}

#[test]
fn every_registered_and_extension_filter_builds() {
    let examples = [
        "KeyOnlyFilter()",
        "KeyOnlyFilter(true)",
        "FirstKeyOnlyFilter()",
        "PrefixFilter('row')",
        "ColumnPrefixFilter('q')",
        "MultipleColumnPrefixFilter('a', 'b')",
        "ColumnCountGetFilter(2)",
        "PageFilter(10)",
        "ColumnPaginationFilter(2, 1)",
        "InclusiveStopFilter('row9')",
        "TimestampsFilter(1, 2, 3)",
        "TimestampsFilter()",
        "RowFilter(<=, 'binary:row5')",
        "FamilyFilter(=, 'binaryprefix:c')",
        "QualifierFilter(!=, 'substring:x')",
        "ValueFilter(=, 'regexstring:^a.*z$')",
        "ColumnRangeFilter('a', true, 'c', false)",
        "ColumnRangeFilter('', true, '', true)",
        "SingleColumnValueFilter('cf', 'q', =, 'binary:v')",
        "SingleColumnValueFilter('cf', 'q', =, 'binary:v', true, false)",
        "SingleColumnValueExcludeFilter('cf', 'q', >, 'binary:v')",
        "DependentColumnFilter('cf', 'q')",
        "DependentColumnFilter('cf', 'q', true)",
        "DependentColumnFilter('cf', 'q', false, <, 'regexstring:x')",
        "ColumnValueFilter('cf', 'q', >=, 'binary:5')",
        "FilterAllFilter()",
        "MultiRowRangeFilter('a', true, 'c', false)",
        "MultiRowRangeFilter('', false, 'c', true, 'x', false, '', false)",
        "FuzzyRowFilter('??_99', '11000')",
        "FuzzyRowFilter('ab', '\x00\x01', 'cd', '10')",
        "RandomRowFilter('0.25')",
        "RandomRowFilter('-1')",
        "RandomRowFilter('1e-3')",
    ];
    let mut seen = std::collections::BTreeSet::new();
    for example in examples {
        parse_filter(example.as_bytes()).unwrap_or_else(|e| panic!("{example}: {e}"));
        seen.insert(example.split('(').next().unwrap_or_default().to_owned());
    }
    let known: std::collections::BTreeSet<String> = REGISTERED_FILTERS
        .iter()
        .chain(EXTENSION_FILTERS.iter())
        .map(|s| s.to_string())
        .collect();
    assert_eq!(seen, known);
    // The extensions are no part of HBase's registry.
    assert!(EXTENSION_FILTERS
        .iter()
        .all(|name| !REGISTERED_FILTERS.contains(name)));
}

#[test]
fn printing_gives_back_a_parsable_canonical_string() {
    let expr = parsed(
        "PrefixFilter('row')AND(QualifierFilter(=,'regexstring:^a')OR SKIP KeyOnlyFilter(TRUE))",
    );
    assert_eq!(
        expr.to_string(),
        "PrefixFilter('row') AND (QualifierFilter(=, 'regexstring:^a') OR SKIP KeyOnlyFilter(true))"
    );
    assert_eq!(parse(&expr.to_filter_string()).unwrap(), expr);
    let quoted_expr = parsed("ValueFilter(=, 'binary:it''s')");
    assert_eq!(
        quoted_expr.to_filter_string(),
        b"ValueFilter(=, 'binary:it''s')".to_vec()
    );
}
