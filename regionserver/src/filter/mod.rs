//! The HBase filter language (HBASE-4176, HBase's ParseFilter): filter strings sent in
//! Thrift scans and gets, parsed and turned into engine filters implementing
//! [`tabula_storage::Filter`].
//!
//! [`parse_filter`] is the whole pipeline; [`parse`] exposes the expression tree and
//! [`compile`] builds filters from one. Filter strings are bytes (not validated UTF-8).
//! The registered filters are listed in [`REGISTERED_FILTERS`], and the filters the
//! language accepts beyond HBase's registry in [`EXTENSION_FILTERS`]; each filter module
//! documents its semantics and where it departs from HBase.
//!
//! Must not: read or write storage, or know the Thrift wire format (the server maps
//! [`FilterError`] to the client's error).

mod args;
mod ast;
mod column_filters;
mod comparator;
mod compile;
mod error;
mod fuzzy_row;
mod java_regex;
mod lexer;
mod list;
mod parser;
mod printer;
mod row_filters;
mod row_ranges;
mod row_set;
mod value_filters;
mod wrappers;

#[cfg(test)]
mod tests;

use bytes::Bytes;
use tabula_storage::Filter;

pub use ast::{Arg, FilterCall, FilterExpr};
pub use comparator::{java_decimal_text, Comparator, CompareOp, Comparison};
pub use compile::{compile, EXTENSION_FILTERS, REGISTERED_FILTERS};
pub use error::{FilterError, SyntaxProblem};
pub use parser::{parse, MAX_NESTING};

/// Parses a filter string and builds the filter a read should run.
pub fn parse_filter(input: &[u8]) -> Result<Box<dyn Filter>, FilterError> {
    compile(&parse(input)?)
}

/// `WHILE PrefixFilter(prefix)`: rows starting with `prefix`, ending the scan at the
/// first row past them (what `scannerOpenWithPrefix` runs).
pub fn prefix_while_filter(prefix: Bytes) -> Box<dyn Filter> {
    Box::new(wrappers::ScanFilter::new(Box::new(
        wrappers::WhileMatchFilter::new(Box::new(row_filters::PrefixFilter::new(prefix))),
    )))
}
