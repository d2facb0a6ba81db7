//! Prints an expression tree back as a filter string that parses to the same tree
//! (given filter names that are names: no whitespace, parentheses or control bytes, and
//! not a keyword).
//!
//! Must not: normalise or validate the tree.

use std::fmt;

use super::ast::{Arg, FilterCall, FilterExpr};

impl FilterExpr {
    /// The expression as filter-string bytes.
    pub fn to_filter_string(&self) -> Vec<u8> {
        let mut out = Vec::new();
        write_expr(self, &mut out);
        out
    }
}

impl fmt::Display for FilterExpr {
    /// The filter string, with bytes that are not UTF-8 replaced.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&String::from_utf8_lossy(&self.to_filter_string()))
    }
}

fn write_expr(expr: &FilterExpr, out: &mut Vec<u8>) {
    match expr {
        FilterExpr::Call(call) => write_call(call, out),
        FilterExpr::And(operands) => write_list(operands, b" AND ", out, |e| {
            matches!(e, FilterExpr::And(_) | FilterExpr::Or(_))
        }),
        FilterExpr::Or(operands) => {
            write_list(operands, b" OR ", out, |e| matches!(e, FilterExpr::Or(_)))
        }
        FilterExpr::Skip(inner) => write_prefixed(b"SKIP ", inner, out),
        FilterExpr::While(inner) => write_prefixed(b"WHILE ", inner, out),
    }
}

fn write_list(
    operands: &[FilterExpr],
    separator: &[u8],
    out: &mut Vec<u8>,
    needs_parentheses: impl Fn(&FilterExpr) -> bool,
) {
    for (index, operand) in operands.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(separator);
        }
        write_grouped(operand, needs_parentheses(operand), out);
    }
}

fn write_prefixed(keyword: &[u8], inner: &FilterExpr, out: &mut Vec<u8>) {
    out.extend_from_slice(keyword);
    let is_list = matches!(inner, FilterExpr::And(_) | FilterExpr::Or(_));
    write_grouped(inner, is_list, out);
}

fn write_grouped(expr: &FilterExpr, parenthesise: bool, out: &mut Vec<u8>) {
    if parenthesise {
        out.push(b'(');
        write_expr(expr, out);
        out.push(b')');
    } else {
        write_expr(expr, out);
    }
}

fn write_call(call: &FilterCall, out: &mut Vec<u8>) {
    out.extend_from_slice(&call.name);
    out.push(b'(');
    for (index, arg) in call.args.iter().enumerate() {
        if index > 0 {
            out.extend_from_slice(b", ");
        }
        write_arg(arg, out);
    }
    out.push(b')');
}

fn write_arg(arg: &Arg, out: &mut Vec<u8>) {
    match arg {
        Arg::Quoted(bytes) => {
            out.push(b'\'');
            for &b in bytes.iter() {
                if b == b'\'' {
                    out.push(b'\'');
                }
                out.push(b);
            }
            out.push(b'\'');
        }
        Arg::Integer(value) => out.extend_from_slice(value.to_string().as_bytes()),
        Arg::Boolean(value) => out.extend_from_slice(if *value { b"true" } else { b"false" }),
        Arg::Operator(op) => out.extend_from_slice(op.symbol().as_bytes()),
    }
}
