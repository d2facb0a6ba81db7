//! The filter registry: turns an expression tree into engine filters, checking every
//! filter name and argument the way HBase's `createFilterFromArguments` methods do.
//!
//! Besides HBase's own names ([`REGISTERED_FILTERS`]) the language accepts the filters
//! HBase's Java clients can only send serialized ([`EXTENSION_FILTERS`]), in these forms:
//! - `FilterAllFilter()`;
//! - `MultiRowRangeFilter('start', startInclusive, 'stop', stopInclusive, ...)`, one
//!   group of four per range (at least one), empty start or stop = open;
//! - `FuzzyRowFilter('key', 'mask', ...)`, one pair per fuzzy key (at least one), the
//!   mask as long as the key, each mask byte 0 (must match) or 1 (any byte), written
//!   as the bytes 0x00/0x01 or the digits '0'/'1';
//! - `RandomRowFilter('chance')`, the chance a quoted decimal such as '0.25'.
//!
//! Must not: parse text (the parser does) or implement filter behaviour (the filter
//! modules do).

use std::collections::BTreeSet;

use bytes::Bytes;
use tabula_storage::Filter;

use super::args::Args;
use super::ast::{FilterCall, FilterExpr};
use super::column_filters::{
    ColumnCountGetFilter, ColumnPaginationFilter, ColumnPrefixFilter, ColumnRangeFilter,
    FamilyFilter, KeyOnlyFilter, MultipleColumnPrefixFilter, QualifierFilter, TimestampsFilter,
};
use super::comparator::lossy;
use super::error::FilterError;
use super::fuzzy_row::{FuzzyKey, FuzzyKeys, FuzzyRowFilter};
use super::list::{AndList, OrList};
use super::row_filters::{
    FilterAllFilter, FirstKeyOnlyFilter, InclusiveStopFilter, PageFilter, PrefixFilter,
    RandomRowFilter, RowFilter,
};
use super::row_ranges::{MultiRowRangeFilter, RowRange, RowRanges};
use super::value_filters::{
    ColumnValueFilter, DependentColumnFilter, SingleColumnOptions, SingleColumnValueFilter,
    ValueFilter,
};
use super::wrappers::{ScanFilter, SkipFilter, WhileMatchFilter};

/// The names HBase's filter language knows, as HBase registers them.
pub const REGISTERED_FILTERS: [&str; 19] = [
    "KeyOnlyFilter",
    "FirstKeyOnlyFilter",
    "PrefixFilter",
    "ColumnPrefixFilter",
    "MultipleColumnPrefixFilter",
    "ColumnCountGetFilter",
    "PageFilter",
    "ColumnPaginationFilter",
    "InclusiveStopFilter",
    "TimestampsFilter",
    "RowFilter",
    "FamilyFilter",
    "QualifierFilter",
    "ValueFilter",
    "ColumnRangeFilter",
    "SingleColumnValueFilter",
    "SingleColumnValueExcludeFilter",
    "DependentColumnFilter",
    "ColumnValueFilter",
];

/// Filters Tabula's filter language accepts beyond HBase's registry: those HBase runs
/// only when a Java client sends them serialized.
pub const EXTENSION_FILTERS: [&str; 4] = [
    "FilterAllFilter",
    "MultiRowRangeFilter",
    "FuzzyRowFilter",
    "RandomRowFilter",
];

/// Builds the engine filter for a parsed expression, ready to hand to a read.
pub fn compile(expr: &FilterExpr) -> Result<Box<dyn Filter>, FilterError> {
    Ok(Box::new(ScanFilter::new(build(expr)?)))
}

fn build(expr: &FilterExpr) -> Result<Box<dyn Filter>, FilterError> {
    Ok(match expr {
        FilterExpr::Call(call) => build_call(call)?,
        FilterExpr::And(operands) => Box::new(AndList::new(build_all(operands)?)),
        FilterExpr::Or(operands) => Box::new(OrList::new(build_all(operands)?)),
        FilterExpr::Skip(inner) => Box::new(SkipFilter::new(build(inner)?)),
        FilterExpr::While(inner) => Box::new(WhileMatchFilter::new(build(inner)?)),
    })
}

fn build_all(operands: &[FilterExpr]) -> Result<Vec<Box<dyn Filter>>, FilterError> {
    operands.iter().map(build).collect()
}

fn build_call(call: &FilterCall) -> Result<Box<dyn Filter>, FilterError> {
    let Some(name) = REGISTERED_FILTERS
        .into_iter()
        .chain(EXTENSION_FILTERS)
        .find(|name| name.as_bytes() == call.name.as_ref())
    else {
        return Err(FilterError::UnknownFilter(lossy(&call.name)));
    };
    let args = Args::new(name, &call.args);
    Ok(match name {
        "KeyOnlyFilter" => {
            args.expect_count(&[0, 1], "0 or 1 arguments")?;
            let length_as_value = args.len() == 1 && args.boolean(0)?;
            Box::new(KeyOnlyFilter::new(length_as_value))
        }
        "FirstKeyOnlyFilter" => {
            args.expect_count(&[0], "0 arguments")?;
            Box::new(FirstKeyOnlyFilter::default())
        }
        "PrefixFilter" => {
            args.expect_count(&[1], "1 argument")?;
            Box::new(PrefixFilter::new(args.quoted(0)?))
        }
        "ColumnPrefixFilter" => {
            args.expect_count(&[1], "1 argument")?;
            Box::new(ColumnPrefixFilter::new(args.quoted(0)?))
        }
        "MultipleColumnPrefixFilter" => multiple_column_prefix(&args)?,
        "ColumnCountGetFilter" => {
            args.expect_count(&[1], "1 argument")?;
            Box::new(ColumnCountGetFilter::new(args.non_negative_int(0)?))
        }
        "PageFilter" => {
            args.expect_count(&[1], "1 argument")?;
            Box::new(PageFilter::new(args.non_negative_long(0)?))
        }
        "ColumnPaginationFilter" => {
            args.expect_count(&[2], "2 arguments")?;
            let limit = args.non_negative_int(0)?;
            // A quoted second argument is a column offset (the qualifier to start at).
            match args.quoted(1) {
                Ok(qualifier) => Box::new(ColumnPaginationFilter::from_column(limit, qualifier)),
                Err(_) => Box::new(ColumnPaginationFilter::new(
                    limit,
                    args.non_negative_int(1)?,
                )),
            }
        }
        "InclusiveStopFilter" => {
            args.expect_count(&[1], "1 argument")?;
            Box::new(InclusiveStopFilter::new(args.quoted(0)?))
        }
        "TimestampsFilter" => {
            let timestamps = (0..args.len())
                .map(|index| args.non_negative_long(index))
                .collect::<Result<BTreeSet<i64>, _>>()?;
            Box::new(TimestampsFilter::new(timestamps))
        }
        "RowFilter" => {
            args.expect_count(&[2], "2 arguments")?;
            Box::new(RowFilter::new(args.comparison(0, true)?))
        }
        "FamilyFilter" => {
            args.expect_count(&[2], "2 arguments")?;
            Box::new(FamilyFilter::new(args.comparison(0, true)?))
        }
        "QualifierFilter" => {
            args.expect_count(&[2], "2 arguments")?;
            Box::new(QualifierFilter::new(args.comparison(0, true)?))
        }
        "ValueFilter" => {
            args.expect_count(&[2], "2 arguments")?;
            Box::new(ValueFilter::new(args.comparison(0, true)?))
        }
        "ColumnRangeFilter" => {
            args.expect_count(&[4], "4 arguments")?;
            let bound = |bytes: Bytes| (!bytes.is_empty()).then_some(bytes);
            Box::new(ColumnRangeFilter::new(
                bound(args.quoted(0)?),
                args.boolean(1)?,
                bound(args.quoted(2)?),
                args.boolean(3)?,
            ))
        }
        "SingleColumnValueFilter" => single_column_value(&args, false)?,
        "SingleColumnValueExcludeFilter" => single_column_value(&args, true)?,
        "DependentColumnFilter" => dependent_column(&args)?,
        "FilterAllFilter" => {
            args.expect_count(&[0], "0 arguments")?;
            Box::new(FilterAllFilter)
        }
        "MultiRowRangeFilter" => multi_row_range(&args)?,
        "FuzzyRowFilter" => fuzzy_row(&args)?,
        "RandomRowFilter" => {
            args.expect_count(&[1], "1 argument")?;
            Box::new(RandomRowFilter::new(args.decimal(0)?))
        }
        _ => {
            // "ColumnValueFilter", the one name left.
            args.expect_count(&[4], "4 arguments")?;
            Box::new(ColumnValueFilter::new(
                args.quoted(0)?,
                args.quoted(1)?,
                args.comparison(2, true)?,
            ))
        }
    })
}

/// No prefixes at all is allowed and passes every cell, as in HBase.
fn multiple_column_prefix(args: &Args<'_>) -> Result<Box<dyn Filter>, FilterError> {
    let mut prefixes = (0..args.len())
        .map(|index| args.quoted(index))
        .collect::<Result<Vec<_>, _>>()?;
    prefixes.sort();
    let count = prefixes.len();
    prefixes.dedup();
    if prefixes.len() != count {
        return Err(FilterError::InvalidArgument {
            filter: "MultipleColumnPrefixFilter",
            reason: "prefixes must be distinct",
        });
    }
    Ok(Box::new(MultipleColumnPrefixFilter::new(prefixes)))
}

fn single_column_value(args: &Args<'_>, exclude: bool) -> Result<Box<dyn Filter>, FilterError> {
    args.expect_count(&[4, 6], "4 or 6 arguments")?;
    let family = args.quoted(0)?;
    let qualifier = args.quoted(1)?;
    let test = args.comparison(2, true)?;
    let (filter_if_missing, latest_version_only) = if args.len() == 6 {
        (args.boolean(4)?, args.boolean(5)?)
    } else {
        (false, true)
    };
    let options = SingleColumnOptions {
        filter_if_missing,
        latest_version_only,
        exclude_tested_column: exclude,
    };
    Ok(Box::new(SingleColumnValueFilter::new(
        family, qualifier, test, options,
    )))
}

fn dependent_column(args: &Args<'_>) -> Result<Box<dyn Filter>, FilterError> {
    args.expect_count(&[2, 3, 5], "2, 3 or 5 arguments")?;
    let family = args.quoted(0)?;
    let qualifier = args.quoted(1)?;
    let drop_reference = args.len() >= 3 && args.boolean(2)?;
    // HBase does not restrict the operators of this filter's comparator.
    let test = if args.len() == 5 {
        Some(args.comparison(3, false)?)
    } else {
        None
    };
    Ok(Box::new(DependentColumnFilter::new(
        family,
        qualifier,
        drop_reference,
        test,
    )))
}

/// Groups of (start, start inclusive, stop, stop inclusive); at least one.
fn multi_row_range(args: &Args<'_>) -> Result<Box<dyn Filter>, FilterError> {
    const NAME: &str = "MultiRowRangeFilter";
    if args.len() == 0 || !args.len().is_multiple_of(4) {
        return Err(args.count_error(
            "4 arguments per range ('start', startInclusive, 'stop', stopInclusive), \
             at least one range",
        ));
    }
    let mut ranges = Vec::with_capacity(args.len() / 4);
    for first in (0..args.len()).step_by(4) {
        let range = RowRange::new(
            args.quoted(first)?,
            args.boolean(first + 1)?,
            args.quoted(first + 2)?,
            args.boolean(first + 3)?,
        )
        .map_err(|_| FilterError::InvalidArgument {
            filter: NAME,
            reason: "a range's start row must sort before its stop row \
                     (or equal it, with an inclusive stop)",
        })?;
        ranges.extend(range);
    }
    Ok(Box::new(MultiRowRangeFilter::new(RowRanges::new(ranges))))
}

/// Pairs of (fuzzy key, mask); at least one (HBase takes an empty list and returns no
/// rows; a filter that can match nothing is refused here as the mistake it must be).
fn fuzzy_row(args: &Args<'_>) -> Result<Box<dyn Filter>, FilterError> {
    const NAME: &str = "FuzzyRowFilter";
    if args.len() == 0 || !args.len().is_multiple_of(2) {
        return Err(args.count_error("2 arguments per fuzzy key ('key', 'mask'), at least one key"));
    }
    let mut keys = Vec::with_capacity(args.len() / 2);
    for first in (0..args.len()).step_by(2) {
        let key = args.quoted(first)?;
        let fixed = args
            .quoted(first + 1)?
            .iter()
            .map(|byte| match byte {
                0 | b'0' => Ok(true),
                1 | b'1' => Ok(false),
                _ => Err(FilterError::InvalidArgument {
                    filter: NAME,
                    reason: "mask bytes must be 0 (the byte must match) or 1 (any byte), \
                             as the bytes 0x00/0x01 or the digits '0'/'1'",
                }),
            })
            .collect::<Result<Vec<bool>, _>>()?;
        let key = FuzzyKey::new(key, fixed).ok_or(FilterError::InvalidArgument {
            filter: NAME,
            reason: "a mask must be as long as its fuzzy key",
        })?;
        keys.push(key);
    }
    Ok(Box::new(FuzzyRowFilter::new(FuzzyKeys(keys))))
}
