//! Typed access to one filter call's arguments, with errors that name the filter and the
//! argument (counted from 1).
//!
//! Must not: know which filter wants which arguments (compile says).

use bytes::Bytes;

use super::ast::Arg;
use super::comparator::{Comparator, CompareOp, Comparison};
use super::error::FilterError;

/// The arguments of a call to `filter`.
pub(crate) struct Args<'a> {
    filter: &'static str,
    args: &'a [Arg],
}

impl<'a> Args<'a> {
    pub(crate) fn new(filter: &'static str, args: &'a [Arg]) -> Self {
        Args { filter, args }
    }

    pub(crate) fn len(&self) -> usize {
        self.args.len()
    }

    /// Fails unless the call has one of the `allowed` counts; `expected` describes them.
    pub(crate) fn expect_count(
        &self,
        allowed: &[usize],
        expected: &'static str,
    ) -> Result<(), FilterError> {
        if allowed.contains(&self.args.len()) {
            Ok(())
        } else {
            Err(self.count_error(expected))
        }
    }

    pub(crate) fn count_error(&self, expected: &'static str) -> FilterError {
        FilterError::ArgumentCount {
            filter: self.filter,
            expected,
            got: self.args.len(),
        }
    }

    fn type_error(&self, index: usize, expected: &'static str) -> FilterError {
        FilterError::ArgumentType {
            filter: self.filter,
            index: index + 1,
            expected,
        }
    }

    fn get(&self, index: usize, expected: &'static str) -> Result<&'a Arg, FilterError> {
        self.args
            .get(index)
            .ok_or_else(|| self.type_error(index, expected))
    }

    pub(crate) fn quoted(&self, index: usize) -> Result<Bytes, FilterError> {
        const EXPECTED: &str = "a quoted string";
        match self.get(index, EXPECTED)? {
            Arg::Quoted(bytes) => Ok(bytes.clone()),
            _ => Err(self.type_error(index, EXPECTED)),
        }
    }

    pub(crate) fn boolean(&self, index: usize) -> Result<bool, FilterError> {
        const EXPECTED: &str = "a boolean (true or false)";
        match self.get(index, EXPECTED)? {
            Arg::Boolean(value) => Ok(*value),
            _ => Err(self.type_error(index, EXPECTED)),
        }
    }

    pub(crate) fn long(&self, index: usize) -> Result<i64, FilterError> {
        const EXPECTED: &str = "an integer";
        match self.get(index, EXPECTED)? {
            Arg::Integer(value) => Ok(*value),
            _ => Err(self.type_error(index, EXPECTED)),
        }
    }

    /// A 64-bit integer that must not be negative.
    pub(crate) fn non_negative_long(&self, index: usize) -> Result<i64, FilterError> {
        let value = self.long(index)?;
        if value < 0 {
            return Err(self.range_error(index, value, "must not be negative"));
        }
        Ok(value)
    }

    /// A 32-bit integer that must not be negative.
    pub(crate) fn non_negative_int(&self, index: usize) -> Result<i32, FilterError> {
        let value = self.long(index)?;
        let int =
            i32::try_from(value).map_err(|_| self.range_error(index, value, "a 32-bit integer"))?;
        if int < 0 {
            return Err(self.range_error(index, value, "must not be negative"));
        }
        Ok(int)
    }

    /// A quoted finite decimal number, such as '0.25' or '1e-3'.
    pub(crate) fn decimal(&self, index: usize) -> Result<f32, FilterError> {
        const EXPECTED: &str = "a quoted decimal number (e.g. '0.25')";
        let Arg::Quoted(text) = self.get(index, EXPECTED)? else {
            return Err(self.type_error(index, EXPECTED));
        };
        std::str::from_utf8(text)
            .ok()
            .and_then(|text| text.parse::<f32>().ok())
            .filter(|value| value.is_finite())
            .ok_or_else(|| self.type_error(index, EXPECTED))
    }

    fn range_error(&self, index: usize, value: i64, range: &'static str) -> FilterError {
        FilterError::OutOfRange {
            filter: self.filter,
            index: index + 1,
            value,
            range,
        }
    }

    pub(crate) fn operator(&self, index: usize) -> Result<CompareOp, FilterError> {
        const EXPECTED: &str = "a compare operator (<, <=, =, !=, >=, >)";
        match self.get(index, EXPECTED)? {
            Arg::Operator(op) => Ok(*op),
            _ => Err(self.type_error(index, EXPECTED)),
        }
    }

    /// An operator at `op_index` and a quoted comparator at `op_index + 1`. With
    /// `match_only_needs_equality`, regexstring and substring accept only = and !=.
    pub(crate) fn comparison(
        &self,
        op_index: usize,
        match_only_needs_equality: bool,
    ) -> Result<Comparison, FilterError> {
        let op = self.operator(op_index)?;
        let comparator = Comparator::parse(&self.quoted(op_index + 1)?)?;
        if match_only_needs_equality
            && comparator.is_match_only()
            && !matches!(op, CompareOp::Equal | CompareOp::NotEqual)
        {
            return Err(FilterError::ComparatorOperator {
                comparator: comparator.type_name(),
            });
        }
        Ok(Comparison { op, comparator })
    }
}
