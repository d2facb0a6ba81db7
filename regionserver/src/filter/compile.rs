//! The filter registry: turns an expression tree into engine filters, checking every
//! filter name and argument the way HBase's `createFilterFromArguments` methods do.
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
use super::list::{AndList, OrList};
use super::row_filters::{
    FirstKeyOnlyFilter, InclusiveStopFilter, PageFilter, PrefixFilter, RowFilter,
};
use super::value_filters::{
    ColumnValueFilter, DependentColumnFilter, SingleColumnOptions, SingleColumnValueFilter,
    ValueFilter,
};
use super::wrappers::{ScanFilter, SkipFilter, WhileMatchFilter};

/// The names the filter language knows, as HBase registers them.
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
            Box::new(ColumnPaginationFilter::new(
                args.non_negative_int(0)?,
                args.non_negative_int(1)?,
            ))
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
        _ => {
            // "ColumnValueFilter", the last registered name.
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
