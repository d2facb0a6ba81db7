//! The parsed form of a filter string: filter calls with their typed arguments, combined
//! by AND, OR, SKIP and WHILE.
//!
//! Must not: know what any filter name means (the registry lives in `compile`).

use bytes::Bytes;

use super::comparator::CompareOp;

/// A parsed filter expression.
///
/// `And` and `Or` hold at least two operands: a chain of the same operator is one list,
/// while a parenthesised group stays a nested list, exactly as HBase builds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterExpr {
    /// `Name(arg, ...)`.
    Call(FilterCall),
    /// `a AND b AND ...` (FilterList MUST_PASS_ALL).
    And(Vec<FilterExpr>),
    /// `a OR b OR ...` (FilterList MUST_PASS_ONE).
    Or(Vec<FilterExpr>),
    /// `SKIP x`: drop a whole row when any of its cells fails `x`.
    Skip(Box<FilterExpr>),
    /// `WHILE x`: end the scan at the first cell or row that fails `x`.
    While(Box<FilterExpr>),
}

/// One filter call: its name (bytes, case-sensitive) and arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterCall {
    pub name: Bytes,
    pub args: Vec<Arg>,
}

/// One argument of a filter call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Arg {
    /// `'...'` with `''` standing for one quote; any bytes inside.
    Quoted(Bytes),
    /// A bare decimal integer (optional leading `-`).
    Integer(i64),
    /// A bare `true` or `false`, in any letter case.
    Boolean(bool),
    /// A bare compare operator: `<`, `<=`, `=`, `!=`, `>=`, `>`.
    Operator(CompareOp),
}

impl FilterCall {
    /// A call of `name` with `args`.
    pub fn new(name: impl Into<Bytes>, args: Vec<Arg>) -> Self {
        FilterCall {
            name: name.into(),
            args,
        }
    }
}
