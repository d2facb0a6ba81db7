//! TGet.filterBytes and TScan.filterBytes: a filter as HBase's Java client sends it
//! (a `Filter` protobuf message naming the filter's Java class, with that filter's
//! own message inside, as HBase's ThriftTable writes it), translated into the
//! filter language the regionservers run.
//!
//! Owns: decoding those messages (their field numbers are HBase's wire contract)
//! and mapping each filter and comparator onto the filter-language expression that
//! means the same, including the filters only Tabula's filter language names
//! (FuzzyRowFilter, MultiRowRangeFilter, RandomRowFilter, FilterAllFilter; their
//! argument forms are the regionserver's `filter::compile`'s) and the comparators
//! only it names (`long:`, `bitand:`/`bitor:`/`bitxor:`, `null:`, `bigdecimal:`,
//! `binarycomponent:` for LongComparator, BitComparator, NullComparator,
//! BigDecimalComparator, BinaryComponentComparator), and ColumnPaginationFilter's
//! column offset (a quoted second argument). What it cannot say (a NO_OP
//! comparison, a filter or comparator class it does not know) is refused with a
//! message naming it, never dropped.
//! Must not: run filters; the regionservers compile and run the string.

use bytes::Bytes;
use prost::Message;
use tabula_regionserver::filter::{java_decimal_text, Arg, CompareOp, FilterCall, FilterExpr};

/// How deep filter lists may nest inside each other.
const MAX_DEPTH: usize = 32;

/// Why a filterBytes value cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FilterBytesError {
    #[error("filterBytes does not decode as a {message} message: {reason}")]
    Malformed { message: String, reason: String },
    #[error("filterBytes names {0}, which Tabula does not run (use a filter of the HBase filter language)")]
    Unsupported(String),
    #[error("filterBytes: {0}")]
    Invalid(String),
}

type Result<T> = std::result::Result<T, FilterBytesError>;

/// `hbase.pb.Filter`: a filter's Java class and its serialized message.
#[derive(Clone, PartialEq, Message)]
struct WireFilter {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    serialized_filter: Option<Vec<u8>>,
}

/// `hbase.pb.Comparator`: a comparator's Java class and its serialized message.
#[derive(Clone, PartialEq, Message)]
struct WireComparator {
    #[prost(string, optional, tag = "1")]
    name: Option<String>,
    #[prost(bytes = "vec", optional, tag = "2")]
    serialized_comparator: Option<Vec<u8>>,
}

/// The message of a filter holding one other filter (FilterWrapper, SkipFilter,
/// WhileMatchFilter).
#[derive(Clone, PartialEq, Message)]
struct Wrapping {
    #[prost(message, optional, tag = "1")]
    filter: Option<WireFilter>,
}

#[derive(Clone, PartialEq, Message)]
struct FilterList {
    /// 1 = MUST_PASS_ALL, 2 = MUST_PASS_ONE.
    #[prost(int32, optional, tag = "1")]
    operator: Option<i32>,
    #[prost(message, repeated, tag = "2")]
    filters: Vec<WireFilter>,
}

#[derive(Clone, PartialEq, Message)]
struct CompareFilter {
    #[prost(int32, optional, tag = "1")]
    compare_op: Option<i32>,
    #[prost(message, optional, tag = "2")]
    comparator: Option<WireComparator>,
}

/// RowFilter, FamilyFilter, QualifierFilter and ValueFilter.
#[derive(Clone, PartialEq, Message)]
struct Comparing {
    #[prost(message, optional, tag = "1")]
    compare_filter: Option<CompareFilter>,
}

#[derive(Clone, PartialEq, Message)]
struct DependentColumnFilter {
    #[prost(message, optional, tag = "1")]
    compare_filter: Option<CompareFilter>,
    #[prost(bytes = "vec", optional, tag = "2")]
    column_family: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "3")]
    column_qualifier: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "4")]
    drop_dependent_column: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
struct SingleColumnValueFilter {
    #[prost(bytes = "vec", optional, tag = "1")]
    column_family: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "2")]
    column_qualifier: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "3")]
    compare_op: Option<i32>,
    #[prost(message, optional, tag = "4")]
    comparator: Option<WireComparator>,
    #[prost(bool, optional, tag = "5")]
    filter_if_missing: Option<bool>,
    #[prost(bool, optional, tag = "6")]
    latest_version_only: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
struct SingleColumnValueExcludeFilter {
    #[prost(message, optional, tag = "1")]
    single_column_value_filter: Option<SingleColumnValueFilter>,
}

#[derive(Clone, PartialEq, Message)]
struct ColumnValueFilter {
    #[prost(bytes = "vec", optional, tag = "1")]
    family: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "2")]
    qualifier: Option<Vec<u8>>,
    #[prost(int32, optional, tag = "3")]
    compare_op: Option<i32>,
    #[prost(message, optional, tag = "4")]
    comparator: Option<WireComparator>,
}

/// A message whose field 1 is one byte string (PrefixFilter, ColumnPrefixFilter,
/// InclusiveStopFilter; ByteArrayComparable).
#[derive(Clone, PartialEq, Message)]
struct OneBytes {
    #[prost(bytes = "vec", optional, tag = "1")]
    value: Option<Vec<u8>>,
}

/// A message whose field 1 is a list of byte strings (MultipleColumnPrefixFilter).
#[derive(Clone, PartialEq, Message)]
struct ManyBytes {
    #[prost(bytes = "vec", repeated, tag = "1")]
    values: Vec<Vec<u8>>,
}

/// A message whose field 1 is one integer (ColumnCountGetFilter's int32 limit,
/// PageFilter's int64 page size: the varint reads the same either way).
#[derive(Clone, PartialEq, Message)]
struct OneInteger {
    #[prost(int64, optional, tag = "1")]
    value: Option<i64>,
}

#[derive(Clone, PartialEq, Message)]
struct ColumnPaginationFilter {
    #[prost(int32, optional, tag = "1")]
    limit: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    offset: Option<i32>,
    #[prost(bytes = "vec", optional, tag = "3")]
    column_offset: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct ColumnRangeFilter {
    #[prost(bytes = "vec", optional, tag = "1")]
    min_column: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "2")]
    min_column_inclusive: Option<bool>,
    #[prost(bytes = "vec", optional, tag = "3")]
    max_column: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "4")]
    max_column_inclusive: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
struct KeyOnlyFilter {
    #[prost(bool, optional, tag = "1")]
    len_as_val: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
struct TimestampsFilter {
    #[prost(int64, repeated, tag = "1")]
    timestamps: Vec<i64>,
}

/// `hbase.pb.RowRange`: an empty or missing row leaves that end open; a missing
/// inclusive flag reads as false (the message's default).
#[derive(Clone, PartialEq, Message)]
struct RowRange {
    #[prost(bytes = "vec", optional, tag = "1")]
    start_row: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "2")]
    start_row_inclusive: Option<bool>,
    #[prost(bytes = "vec", optional, tag = "3")]
    stop_row: Option<Vec<u8>>,
    #[prost(bool, optional, tag = "4")]
    stop_row_inclusive: Option<bool>,
}

#[derive(Clone, PartialEq, Message)]
struct MultiRowRangeFilter {
    #[prost(message, repeated, tag = "1")]
    row_range_list: Vec<RowRange>,
}

/// `hbase.pb.BytesBytesPair`: for FuzzyRowFilter, a fuzzy key and its mask.
#[derive(Clone, PartialEq, Message)]
struct BytesBytesPair {
    #[prost(bytes = "vec", optional, tag = "1")]
    first: Option<Vec<u8>>,
    #[prost(bytes = "vec", optional, tag = "2")]
    second: Option<Vec<u8>>,
}

#[derive(Clone, PartialEq, Message)]
struct FuzzyRowFilter {
    #[prost(message, repeated, tag = "1")]
    fuzzy_keys_data: Vec<BytesBytesPair>,
}

#[derive(Clone, PartialEq, Message)]
struct RandomRowFilter {
    #[prost(float, optional, tag = "1")]
    chance: Option<f32>,
}

/// The comparators that carry a `ByteArrayComparable` as field 1.
#[derive(Clone, PartialEq, Message)]
struct WithComparable {
    #[prost(message, optional, tag = "1")]
    comparable: Option<OneBytes>,
}

/// `BitComparator`: its operand and how it combines it (1 AND, 2 OR, 3 XOR).
#[derive(Clone, PartialEq, Message)]
struct BitComparator {
    #[prost(message, optional, tag = "1")]
    comparable: Option<OneBytes>,
    #[prost(int32, optional, tag = "2")]
    bitwise_op: Option<i32>,
}

#[derive(Clone, PartialEq, Message)]
struct RegexStringComparator {
    #[prost(string, optional, tag = "1")]
    pattern: Option<String>,
    #[prost(int32, optional, tag = "2")]
    pattern_flags: Option<i32>,
    #[prost(string, optional, tag = "3")]
    charset: Option<String>,
}

#[derive(Clone, PartialEq, Message)]
struct SubstringComparator {
    #[prost(string, optional, tag = "1")]
    substr: Option<String>,
}

/// `BinaryComponentComparator`: the component's bytes and its offset in the value.
#[derive(Clone, PartialEq, Message)]
struct BinaryComponentComparator {
    #[prost(bytes = "vec", optional, tag = "1")]
    value: Option<Vec<u8>>,
    #[prost(uint32, optional, tag = "2")]
    offset: Option<u32>,
}

/// Java's `Pattern` flags HBase's RegexStringComparator passes on.
const JAVA_CASE_INSENSITIVE: i32 = 0x02;
const JAVA_COMMENTS: i32 = 0x04;
const JAVA_MULTILINE: i32 = 0x08;
const JAVA_DOTALL: i32 = 0x20;
const JAVA_UNICODE_CASE: i32 = 0x40;

/// The filter string meaning what `bytes` (a serialized `hbase.pb.Filter`) means;
/// `None` when it lets everything through (an empty filter list).
pub fn filter_string(bytes: &[u8]) -> Result<Option<Bytes>> {
    let filter = decode::<WireFilter>(bytes, "Filter")?;
    Ok(expression(&filter, 0)?.map(|e| Bytes::from(e.to_filter_string())))
}

fn decode<M: Message + Default>(bytes: &[u8], message: &str) -> Result<M> {
    M::decode(bytes).map_err(|e| FilterBytesError::Malformed {
        message: message.to_owned(),
        reason: e.to_string(),
    })
}

/// The last part of a Java class name (`org.apache.hadoop.hbase.filter.PrefixFilter`
/// -> `PrefixFilter`), whatever package (shaded or not) it comes from.
fn simple_name(class: &str) -> &str {
    class.rsplit('.').next().unwrap_or(class)
}

fn call(name: &'static str, args: Vec<Arg>) -> FilterExpr {
    FilterExpr::Call(FilterCall::new(Bytes::from_static(name.as_bytes()), args))
}

fn quoted(bytes: Option<Vec<u8>>) -> Arg {
    Arg::Quoted(Bytes::from(bytes.unwrap_or_default()))
}

fn expression(filter: &WireFilter, depth: usize) -> Result<Option<FilterExpr>> {
    if depth > MAX_DEPTH {
        return Err(FilterBytesError::Invalid(format!(
            "filters nest more than {MAX_DEPTH} deep"
        )));
    }
    let class = filter.name.as_deref().unwrap_or_default();
    let body = filter.serialized_filter.as_deref().unwrap_or_default();
    let name = simple_name(class);
    let expr = match name {
        "FilterList" => return filter_list(decode(body, "FilterList")?, depth),
        "FilterWrapper" => return wrapped(decode(body, name)?, depth),
        "SkipFilter" => wrapped(decode(body, name)?, depth)?.map(|e| FilterExpr::Skip(e.into())),
        "WhileMatchFilter" => {
            wrapped(decode(body, name)?, depth)?.map(|e| FilterExpr::While(e.into()))
        }
        "PrefixFilter" => Some(call(
            "PrefixFilter",
            vec![quoted(decode::<OneBytes>(body, name)?.value)],
        )),
        "ColumnPrefixFilter" => Some(call(
            "ColumnPrefixFilter",
            vec![quoted(decode::<OneBytes>(body, name)?.value)],
        )),
        "InclusiveStopFilter" => Some(call(
            "InclusiveStopFilter",
            vec![quoted(decode::<OneBytes>(body, name)?.value)],
        )),
        "MultipleColumnPrefixFilter" => {
            let prefixes = decode::<ManyBytes>(body, name)?.values;
            Some(call(
                "MultipleColumnPrefixFilter",
                prefixes.into_iter().map(|p| quoted(Some(p))).collect(),
            ))
        }
        "FirstKeyOnlyFilter" => Some(call("FirstKeyOnlyFilter", Vec::new())),
        "FilterAllFilter" => Some(call("FilterAllFilter", Vec::new())),
        "MultiRowRangeFilter" => Some(multi_row_range(decode(body, name)?)?),
        "FuzzyRowFilter" => Some(fuzzy_row(decode(body, name)?)?),
        "RandomRowFilter" => {
            let chance = decode::<RandomRowFilter>(body, name)?
                .chance
                .ok_or_else(|| {
                    FilterBytesError::Invalid("RandomRowFilter without its chance".into())
                })?;
            Some(call(
                "RandomRowFilter",
                vec![Arg::Quoted(Bytes::from(chance_text(chance)))],
            ))
        }
        "KeyOnlyFilter" => {
            let length_as_value = decode::<KeyOnlyFilter>(body, name)?.len_as_val;
            Some(call(
                "KeyOnlyFilter",
                vec![Arg::Boolean(length_as_value.unwrap_or(false))],
            ))
        }
        "ColumnCountGetFilter" => Some(call(
            "ColumnCountGetFilter",
            vec![Arg::Integer(required(
                decode::<OneInteger>(body, name)?.value,
                name,
                "limit",
            )?)],
        )),
        "PageFilter" => Some(call(
            "PageFilter",
            vec![Arg::Integer(required(
                decode::<OneInteger>(body, name)?.value,
                name,
                "page_size",
            )?)],
        )),
        "ColumnPaginationFilter" => {
            let p = decode::<ColumnPaginationFilter>(body, name)?;
            let limit = Arg::Integer(required(p.limit.map(i64::from), name, "limit")?);
            // The column-offset form wins, as in HBase's parseFrom.
            let start = match p.column_offset {
                Some(qualifier) => Arg::Quoted(Bytes::from(qualifier)),
                None => Arg::Integer(i64::from(p.offset.unwrap_or(0))),
            };
            Some(call("ColumnPaginationFilter", vec![limit, start]))
        }
        "ColumnRangeFilter" => {
            let r = decode::<ColumnRangeFilter>(body, name)?;
            Some(call(
                "ColumnRangeFilter",
                vec![
                    quoted(r.min_column),
                    Arg::Boolean(r.min_column_inclusive.unwrap_or(false)),
                    quoted(r.max_column),
                    Arg::Boolean(r.max_column_inclusive.unwrap_or(false)),
                ],
            ))
        }
        "TimestampsFilter" => {
            let t = decode::<TimestampsFilter>(body, name)?;
            Some(call(
                "TimestampsFilter",
                t.timestamps.into_iter().map(Arg::Integer).collect(),
            ))
        }
        "RowFilter" => Some(comparing("RowFilter", decode(body, name)?)?),
        "FamilyFilter" => Some(comparing("FamilyFilter", decode(body, name)?)?),
        "QualifierFilter" => Some(comparing("QualifierFilter", decode(body, name)?)?),
        "ValueFilter" => Some(comparing("ValueFilter", decode(body, name)?)?),
        "DependentColumnFilter" => Some(dependent_column(decode(body, name)?)?),
        "SingleColumnValueFilter" => Some(single_column_value(
            "SingleColumnValueFilter",
            decode(body, name)?,
        )?),
        "SingleColumnValueExcludeFilter" => {
            let outer = decode::<SingleColumnValueExcludeFilter>(body, name)?;
            let inner = outer.single_column_value_filter.ok_or_else(|| {
                FilterBytesError::Invalid(format!("{name} holds no SingleColumnValueFilter"))
            })?;
            Some(single_column_value(
                "SingleColumnValueExcludeFilter",
                inner,
            )?)
        }
        "ColumnValueFilter" => {
            let c = decode::<ColumnValueFilter>(body, name)?;
            Some(call(
                "ColumnValueFilter",
                vec![
                    quoted(c.family),
                    quoted(c.qualifier),
                    Arg::Operator(compare_op(c.compare_op, name)?),
                    comparator(c.comparator, name)?,
                ],
            ))
        }
        "" => return Err(FilterBytesError::Invalid("a filter without a name".into())),
        _ => return Err(FilterBytesError::Unsupported(class.to_owned())),
    };
    Ok(expr)
}

/// One group of four arguments per range. Ranges whose start sorts after their stop
/// are left for the filter language to refuse, naming the rule.
fn multi_row_range(m: MultiRowRangeFilter) -> Result<FilterExpr> {
    if m.row_range_list.is_empty() {
        return Err(FilterBytesError::Invalid(
            "MultiRowRangeFilter without row ranges".into(),
        ));
    }
    let args = m
        .row_range_list
        .into_iter()
        .flat_map(|r| {
            [
                quoted(r.start_row),
                Arg::Boolean(r.start_row_inclusive.unwrap_or(false)),
                quoted(r.stop_row),
                Arg::Boolean(r.stop_row_inclusive.unwrap_or(false)),
            ]
        })
        .collect();
    Ok(call("MultiRowRangeFilter", args))
}

/// One (key, mask) pair per fuzzy key, the mask rewritten as the filter language's
/// digits. HBase takes an empty list and returns no rows; the filter language wants
/// at least one key, so an empty list is the filter that keeps no row.
fn fuzzy_row(f: FuzzyRowFilter) -> Result<FilterExpr> {
    if f.fuzzy_keys_data.is_empty() {
        return Ok(call("FilterAllFilter", Vec::new()));
    }
    let mut args = Vec::with_capacity(f.fuzzy_keys_data.len() * 2);
    for pair in f.fuzzy_keys_data {
        let (Some(key), Some(mask)) = (pair.first, pair.second) else {
            return Err(FilterBytesError::Invalid(
                "FuzzyRowFilter with a fuzzy key or mask missing".into(),
            ));
        };
        if key.len() != mask.len() {
            return Err(FilterBytesError::Invalid(
                "FuzzyRowFilter: a fuzzy key and its mask differ in length".into(),
            ));
        }
        args.push(quoted(Some(key)));
        args.push(Arg::Quoted(Bytes::from(fuzzy_mask(&mask)?)));
    }
    Ok(call("FuzzyRowFilter", args))
}

/// A FuzzyRowFilter mask as HBase's Java client sends it, as the filter language's
/// digits ('0' = the byte must match, '1' = any byte). The client's public mask says
/// 0 for a fixed byte and 1 for a free one, but its constructor rewrites the mask
/// before the filter is serialized (on every platform with unaligned memory access,
/// i.e. all usual ones) into 0xff for a fixed byte and 0x02 for a free one. HBase's
/// server reads either form, a byte at a time (0x00 and 0xff fixed, 0x01 and 0x02
/// free), and so does this; any other byte value is refused.
fn fuzzy_mask(mask: &[u8]) -> Result<Vec<u8>> {
    mask.iter()
        .map(|byte| match byte {
            0x00 | 0xff => Ok(b'0'),
            0x01 | 0x02 => Ok(b'1'),
            other => Err(FilterBytesError::Invalid(format!(
                "FuzzyRowFilter mask byte {other:#04x} (expected 0x00 or 0xff for a fixed \
                 byte, 0x01 or 0x02 for any byte)"
            ))),
        })
        .collect()
}

/// The chance as the filter language's quoted decimal. A row passes when a draw in
/// [0, 1) is below the chance, so anything at or below 0 (and NaN, which no draw is
/// below) passes no row and anything at or above 1 passes every row; finite values
/// between print exactly (Rust prints the shortest decimal that reads back as the
/// same float).
fn chance_text(chance: f32) -> String {
    if chance.is_nan() || chance <= 0.0 {
        "0".to_owned()
    } else if chance >= 1.0 {
        "1".to_owned()
    } else {
        chance.to_string()
    }
}

fn required(value: Option<i64>, filter: &str, field: &str) -> Result<i64> {
    value.ok_or_else(|| FilterBytesError::Invalid(format!("{filter} without its {field}")))
}

fn wrapped(w: Wrapping, depth: usize) -> Result<Option<FilterExpr>> {
    let inner = w
        .filter
        .ok_or_else(|| FilterBytesError::Invalid("a wrapping filter holds no filter".into()))?;
    expression(&inner, depth + 1)
}

/// MUST_PASS_ALL is AND, MUST_PASS_ONE is OR; a list with no filters (or only
/// filters that let everything through) lets everything through, as in HBase.
fn filter_list(list: FilterList, depth: usize) -> Result<Option<FilterExpr>> {
    let all = match list.operator {
        Some(1) | None => true,
        Some(2) => false,
        Some(other) => {
            return Err(FilterBytesError::Invalid(format!(
                "FilterList operator {other} (1 = MUST_PASS_ALL, 2 = MUST_PASS_ONE)"
            )))
        }
    };
    let mut operands = Vec::with_capacity(list.filters.len());
    for f in &list.filters {
        match expression(f, depth + 1)? {
            Some(e) => operands.push(e),
            // An operand that passes everything: AND ignores it, OR passes all.
            None if all => {}
            None => return Ok(None),
        }
    }
    Ok(match operands.len() {
        0 => None,
        1 => operands.pop(),
        _ if all => Some(FilterExpr::And(operands)),
        _ => Some(FilterExpr::Or(operands)),
    })
}

/// HBase's CompareType: LESS, LESS_OR_EQUAL, EQUAL, NOT_EQUAL, GREATER_OR_EQUAL,
/// GREATER (NO_OP has no filter-language form).
fn compare_op(op: Option<i32>, filter: &str) -> Result<CompareOp> {
    match op {
        Some(0) => Ok(CompareOp::Less),
        Some(1) => Ok(CompareOp::LessOrEqual),
        Some(2) => Ok(CompareOp::Equal),
        Some(3) => Ok(CompareOp::NotEqual),
        Some(4) => Ok(CompareOp::GreaterOrEqual),
        Some(5) => Ok(CompareOp::Greater),
        Some(6) => Err(FilterBytesError::Unsupported(format!(
            "{filter} with compare operator NO_OP"
        ))),
        Some(other) => Err(FilterBytesError::Invalid(format!(
            "{filter}: compare operator {other} is not one of HBase's"
        ))),
        None => Err(FilterBytesError::Invalid(format!(
            "{filter} without its compare operator"
        ))),
    }
}

fn comparing(name: &'static str, c: Comparing) -> Result<FilterExpr> {
    let compare = c
        .compare_filter
        .ok_or_else(|| FilterBytesError::Invalid(format!("{name} without its comparison")))?;
    Ok(call(
        name,
        vec![
            Arg::Operator(compare_op(compare.compare_op, name)?),
            comparator(compare.comparator, name)?,
        ],
    ))
}

fn dependent_column(d: DependentColumnFilter) -> Result<FilterExpr> {
    const NAME: &str = "DependentColumnFilter";
    let mut args = vec![
        quoted(d.column_family),
        quoted(d.column_qualifier),
        Arg::Boolean(d.drop_dependent_column.unwrap_or(false)),
    ];
    // NO_OP (or no comparator) is the three-argument form: no value check.
    if let Some(compare) = d.compare_filter {
        if compare.compare_op != Some(6) && compare.comparator.is_some() {
            args.push(Arg::Operator(compare_op(compare.compare_op, NAME)?));
            args.push(comparator(compare.comparator, NAME)?);
        }
    }
    Ok(call(NAME, args))
}

fn single_column_value(name: &'static str, s: SingleColumnValueFilter) -> Result<FilterExpr> {
    Ok(call(
        name,
        vec![
            quoted(s.column_family),
            quoted(s.column_qualifier),
            Arg::Operator(compare_op(s.compare_op, name)?),
            comparator(s.comparator, name)?,
            Arg::Boolean(s.filter_if_missing.unwrap_or(false)),
            Arg::Boolean(s.latest_version_only.unwrap_or(true)),
        ],
    ))
}

/// A comparator as the filter language's quoted `type:value` argument.
fn comparator(c: Option<WireComparator>, filter: &str) -> Result<Arg> {
    let c = c.ok_or_else(|| FilterBytesError::Invalid(format!("{filter} without a comparator")))?;
    let class = c.name.as_deref().unwrap_or_default();
    let body = c.serialized_comparator.as_deref().unwrap_or_default();
    let name = simple_name(class);
    let (kind, value): (&[u8], Vec<u8>) = match name {
        "BinaryComparator" => (b"binary", comparable(body, name)?),
        "BinaryPrefixComparator" => (b"binaryprefix", comparable(body, name)?),
        "SubstringComparator" => {
            let s = decode::<SubstringComparator>(body, name)?;
            (b"substring", s.substr.unwrap_or_default().into_bytes())
        }
        "RegexStringComparator" => (b"regexstring", regex_pattern(decode(body, name)?)?),
        "LongComparator" => {
            let value = comparable(body, name)?;
            let bytes: [u8; 8] = value.as_slice().try_into().map_err(|_| {
                FilterBytesError::Invalid(format!(
                    "LongComparator holds {} bytes, not 8",
                    value.len()
                ))
            })?;
            (b"long", i64::from_be_bytes(bytes).to_string().into_bytes())
        }
        "BitComparator" => {
            let bit = decode::<BitComparator>(body, name)?;
            let kind: &[u8] = match bit.bitwise_op {
                Some(1) => b"bitand",
                Some(2) => b"bitor",
                Some(3) => b"bitxor",
                other => {
                    return Err(FilterBytesError::Invalid(format!(
                        "BitComparator operator {other:?} (1 = AND, 2 = OR, 3 = XOR)"
                    )))
                }
            };
            (
                kind,
                bit.comparable.and_then(|c| c.value).unwrap_or_default(),
            )
        }
        "NullComparator" => (b"null", Vec::new()),
        "BigDecimalComparator" => {
            let value = comparable(body, name)?;
            let text = java_decimal_text(&value).ok_or_else(|| {
                FilterBytesError::Invalid(format!(
                    "BigDecimalComparator holds {} bytes, not a BigDecimal (4 bytes of scale and the unscaled value)",
                    value.len()
                ))
            })?;
            (b"bigdecimal", text.into_bytes())
        }
        "BinaryComponentComparator" => {
            let c = decode::<BinaryComponentComparator>(body, name)?;
            let offset = required(c.offset.map(i64::from), name, "offset")?;
            let mut spec = offset.to_string().into_bytes();
            spec.push(b':');
            spec.extend_from_slice(&c.value.unwrap_or_default());
            (b"binarycomponent", spec)
        }
        "" => {
            return Err(FilterBytesError::Invalid(format!(
                "{filter} has a comparator without a name"
            )))
        }
        _ => return Err(FilterBytesError::Unsupported(class.to_owned())),
    };
    let mut spec = kind.to_vec();
    spec.push(b':');
    spec.extend_from_slice(&value);
    Ok(Arg::Quoted(Bytes::from(spec)))
}

fn comparable(body: &[u8], name: &str) -> Result<Vec<u8>> {
    Ok(decode::<WithComparable>(body, name)?
        .comparable
        .and_then(|c| c.value)
        .unwrap_or_default())
}

/// The pattern, with Java's flags other than the filter language's own (DOTALL,
/// what `regexstring:` compiles with) written as an inline flag group.
fn regex_pattern(r: RegexStringComparator) -> Result<Vec<u8>> {
    let flags = r.pattern_flags.unwrap_or(JAVA_DOTALL);
    if let Some(charset) = r.charset.as_deref() {
        if !charset.is_empty() && !charset.eq_ignore_ascii_case("UTF-8") {
            return Err(FilterBytesError::Unsupported(format!(
                "RegexStringComparator with charset {charset}"
            )));
        }
    }
    let known =
        JAVA_CASE_INSENSITIVE | JAVA_COMMENTS | JAVA_MULTILINE | JAVA_DOTALL | JAVA_UNICODE_CASE;
    if flags & !known != 0 {
        return Err(FilterBytesError::Unsupported(format!(
            "RegexStringComparator with pattern flags {flags:#x}"
        )));
    }
    let mut on = String::new();
    for (flag, letter) in [
        (JAVA_CASE_INSENSITIVE, 'i'),
        (JAVA_COMMENTS, 'x'),
        (JAVA_MULTILINE, 'm'),
        (JAVA_UNICODE_CASE, 'u'),
    ] {
        if flags & flag != 0 {
            on.push(letter);
        }
    }
    let off = if flags & JAVA_DOTALL == 0 { "-s" } else { "" };
    let mut pattern = String::new();
    if !on.is_empty() || !off.is_empty() {
        pattern = format!("(?{on}{off})");
    }
    pattern.push_str(r.pattern.as_deref().unwrap_or_default());
    Ok(pattern.into_bytes())
}

/// Filter messages written field by field, as HBase's Java client puts them on the
/// wire (not with this module's message types), so the tests check the field
/// numbers too.
#[cfg(test)]
mod tests_support {
    // Messages written field by field, as HBase's Java client puts them on the wire
    // (not with this module's message types), so the field numbers are checked too.

    pub(super) fn varint(mut v: u64, out: &mut Vec<u8>) {
        while v >= 0x80 {
            out.push((v as u8) | 0x80);
            v >>= 7;
        }
        out.push(v as u8);
    }

    pub(super) fn bytes_field(tag: u64, value: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        varint(tag << 3 | 2, &mut out);
        varint(value.len() as u64, &mut out);
        out.extend_from_slice(value);
        out
    }

    pub(super) fn varint_field(tag: u64, value: i64) -> Vec<u8> {
        let mut out = Vec::new();
        varint(tag << 3, &mut out);
        varint(value as u64, &mut out);
        out
    }

    /// A `float` field: wire type 5, four little-endian bytes.
    pub(super) fn float_field(tag: u64, value: f32) -> Vec<u8> {
        let mut out = Vec::new();
        varint(tag << 3 | 5, &mut out);
        out.extend_from_slice(&value.to_le_bytes());
        out
    }

    /// An `hbase.pb.RowRange`; `None` leaves a field out.
    pub(super) fn row_range(
        start: Option<&[u8]>,
        start_inclusive: Option<bool>,
        stop: Option<&[u8]>,
        stop_inclusive: Option<bool>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some(start) = start {
            out.extend(bytes_field(1, start));
        }
        if let Some(inclusive) = start_inclusive {
            out.extend(varint_field(2, i64::from(inclusive)));
        }
        if let Some(stop) = stop {
            out.extend(bytes_field(3, stop));
        }
        if let Some(inclusive) = stop_inclusive {
            out.extend(varint_field(4, i64::from(inclusive)));
        }
        out
    }

    pub(super) fn row_ranges_filter(ranges: &[Vec<u8>]) -> Vec<u8> {
        let body: Vec<u8> = ranges.iter().flat_map(|r| bytes_field(1, r)).collect();
        filter("MultiRowRangeFilter", &body)
    }

    /// A FuzzyRowFilter of (key, mask) pairs, the masks as given (wire form).
    pub(super) fn fuzzy_filter(pairs: &[(&[u8], &[u8])]) -> Vec<u8> {
        let body: Vec<u8> = pairs
            .iter()
            .flat_map(|(key, mask)| {
                bytes_field(1, &[bytes_field(1, key), bytes_field(2, mask)].concat())
            })
            .collect();
        filter("FuzzyRowFilter", &body)
    }

    /// A public-convention mask (0 = fixed, 1 = any) as HBase's Java client serializes
    /// it: fixed bytes 0xff, free bytes 0x02, and the key's free bytes zeroed.
    pub(super) fn java_fuzzy_pair(key: &[u8], public_mask: &[u8]) -> (Vec<u8>, Vec<u8>) {
        let key = key
            .iter()
            .zip(public_mask)
            .map(|(k, m)| if *m == 0 { *k } else { 0 })
            .collect();
        let mask = public_mask
            .iter()
            .map(|m| if *m == 0 { 0xff } else { 0x02 })
            .collect();
        (key, mask)
    }

    pub(super) fn filter(class: &str, body: &[u8]) -> Vec<u8> {
        let name = format!("org.apache.hadoop.hbase.filter.{class}");
        [bytes_field(1, name.as_bytes()), bytes_field(2, body)].concat()
    }

    pub(super) fn wire_comparator(class: &str, body: &[u8]) -> Vec<u8> {
        let name = format!("org.apache.hadoop.hbase.filter.{class}");
        [bytes_field(1, name.as_bytes()), bytes_field(2, body)].concat()
    }

    pub(super) fn binary(value: &[u8]) -> Vec<u8> {
        wire_comparator("BinaryComparator", &bytes_field(1, &bytes_field(1, value)))
    }

    pub(super) fn list(operator: i64, filters: &[Vec<u8>]) -> Vec<u8> {
        let mut body = varint_field(1, operator);
        for f in filters {
            body.extend(bytes_field(2, f));
        }
        filter("FilterList", &body)
    }

    pub(super) fn prefix(p: &[u8]) -> Vec<u8> {
        filter("PrefixFilter", &bytes_field(1, p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_regionserver::filter::{parse, parse_filter};

    use super::tests_support::*;

    fn translated(bytes: &[u8]) -> String {
        let f = filter_string(bytes).expect("translates").expect("a filter");
        parse_filter(&f).expect("the translation compiles");
        String::from_utf8(f.to_vec()).expect("utf-8")
    }

    #[test]
    fn single_filters_become_their_filter_language_calls() {
        assert_eq!(translated(&prefix(b"row")), "PrefixFilter('row')");
        let scvf = [
            bytes_field(1, b"cf"),
            bytes_field(2, b"q"),
            varint_field(3, 2),
            bytes_field(4, &binary(b"it's")),
            varint_field(5, 1),
            varint_field(6, 1),
        ]
        .concat();
        assert_eq!(
            translated(&filter("SingleColumnValueFilter", &scvf)),
            "SingleColumnValueFilter('cf', 'q', =, 'binary:it''s', true, true)"
        );
        let row_filter = filter(
            "RowFilter",
            &bytes_field(
                1,
                &[varint_field(1, 4), bytes_field(2, &binary(b"m"))].concat(),
            ),
        );
        assert_eq!(translated(&row_filter), "RowFilter(>=, 'binary:m')");
        assert_eq!(
            translated(&filter("PageFilter", &varint_field(1, 25))),
            "PageFilter(25)"
        );
        let timestamps = filter("TimestampsFilter", &bytes_field(1, &[5, 7]));
        assert_eq!(translated(&timestamps), "TimestampsFilter(5, 7)");
        assert_eq!(
            translated(&filter("KeyOnlyFilter", &varint_field(1, 0))),
            "KeyOnlyFilter(false)"
        );
        let range = [
            bytes_field(1, b"a"),
            varint_field(2, 1),
            bytes_field(3, b"c"),
            varint_field(4, 0),
        ]
        .concat();
        assert_eq!(
            translated(&filter("ColumnRangeFilter", &range)),
            "ColumnRangeFilter('a', true, 'c', false)"
        );
    }

    #[test]
    fn filter_lists_nest_as_and_or_with_the_grouping_kept() {
        let inner = list(1, &[prefix(b"a"), filter("FirstKeyOnlyFilter", &[])]);
        let outer = list(2, &[inner, prefix(b"b")]);
        let text = translated(&outer);
        assert_eq!(
            text,
            "PrefixFilter('a') AND FirstKeyOnlyFilter() OR PrefixFilter('b')"
        );
        let tree = parse(text.as_bytes()).expect("parses");
        assert!(matches!(&tree, FilterExpr::Or(ops) if matches!(ops[0], FilterExpr::And(_))));
        let skip = filter("SkipFilter", &bytes_field(1, &prefix(b"x")));
        assert_eq!(translated(&skip), "SKIP PrefixFilter('x')");
        let wrapped = filter(
            "WhileMatchFilter",
            &bytes_field(1, &list(1, &[prefix(b"x"), prefix(b"y")])),
        );
        assert_eq!(
            translated(&wrapped),
            "WHILE (PrefixFilter('x') AND PrefixFilter('y'))"
        );
    }

    #[test]
    fn an_empty_list_lets_everything_through() {
        assert_eq!(filter_string(&list(1, &[])), Ok(None));
        // OR with an operand that passes everything passes everything; AND drops it.
        assert_eq!(
            filter_string(&list(2, &[prefix(b"a"), list(1, &[])])),
            Ok(None)
        );
        assert_eq!(
            translated(&list(1, &[prefix(b"a"), list(2, &[])])),
            "PrefixFilter('a')"
        );
    }

    #[test]
    fn regex_flags_other_than_dotall_travel_inline() {
        let regex = |flags: i64| {
            let body = [
                bytes_field(1, b"^ab.c"),
                varint_field(2, flags),
                bytes_field(3, b"UTF-8"),
            ]
            .concat();
            let cmp = wire_comparator("RegexStringComparator", &body);
            let compare = [varint_field(1, 2), bytes_field(2, &cmp)].concat();
            translated(&filter("ValueFilter", &bytes_field(1, &compare)))
        };
        assert_eq!(regex(0x20), "ValueFilter(=, 'regexstring:^ab.c')");
        assert_eq!(regex(0x22), "ValueFilter(=, 'regexstring:(?i)^ab.c')");
        assert_eq!(regex(0), "ValueFilter(=, 'regexstring:(?-s)^ab.c')");
    }

    /// The rows of `rows` the translated filter lets through, judged by row key the way
    /// a scan does (in the order given).
    fn passing_rows(bytes: &[u8], rows: &[&[u8]]) -> Vec<Vec<u8>> {
        use tabula_storage::RowVerdict;
        let text = filter_string(bytes).expect("translates").expect("a filter");
        let mut f = parse_filter(&text).expect("the translation compiles");
        let mut passed = Vec::new();
        for row in rows {
            if f.filter_all_remaining() {
                break;
            }
            f.reset();
            if f.filter_row_key(row) == RowVerdict::Include {
                passed.push(row.to_vec());
            }
        }
        passed
    }

    #[test]
    fn filter_all_filter_translates() {
        assert_eq!(
            translated(&filter("FilterAllFilter", &[])),
            "FilterAllFilter()"
        );
        assert!(passing_rows(&filter("FilterAllFilter", &[]), &[b"a", b"b"]).is_empty());
    }

    #[test]
    fn multi_row_range_translates_range_by_range() {
        let ranges = [
            row_range(Some(b"a"), Some(true), Some(b"c"), Some(false)),
            // Missing flags read as false; a missing stop leaves the range open.
            row_range(Some(b"x"), None, None, None),
        ];
        let bytes = row_ranges_filter(&ranges);
        assert_eq!(
            translated(&bytes),
            "MultiRowRangeFilter('a', true, 'c', false, 'x', false, '', false)"
        );
        let rows: [&[u8]; 6] = [b"a", b"b", b"c", b"x", b"xa", b"z"];
        assert_eq!(
            passing_rows(&bytes, &rows),
            vec![b"a".to_vec(), b"b".to_vec(), b"xa".to_vec(), b"z".to_vec()]
        );
        // No ranges is an error in HBase too; an inverted range is refused when the
        // translation is compiled, naming the rule.
        assert!(matches!(
            filter_string(&row_ranges_filter(&[])),
            Err(FilterBytesError::Invalid(m)) if m.contains("MultiRowRangeFilter")
        ));
        let inverted =
            row_ranges_filter(&[row_range(Some(b"b"), Some(true), Some(b"a"), Some(true))]);
        let text = filter_string(&inverted)
            .expect("translates")
            .expect("a filter");
        let error = parse_filter(&text).err().expect("refused").to_string();
        assert!(error.contains("MultiRowRangeFilter"), "{error}");
    }

    #[test]
    fn fuzzy_masks_travel_in_either_wire_form_and_mean_the_public_mask() {
        // The key "??_9" with the public mask 1100, as the Java client sends it.
        let (key, mask) = java_fuzzy_pair(b"ab_9", &[1, 1, 0, 0]);
        assert_eq!(mask, vec![0x02, 0x02, 0xff, 0xff]);
        let java = fuzzy_filter(&[(&key, &mask)]);
        assert_eq!(translated(&java), "FuzzyRowFilter('\0\0_9', '1100')");
        // The public form, as a client without the rewrite sends it, means the same.
        let public = fuzzy_filter(&[(b"ab_9", &[1, 1, 0, 0])]);
        assert_eq!(translated(&public), "FuzzyRowFilter('ab_9', '1100')");
        let rows: [&[u8]; 5] = [b"xy_9", b"xy_9zz", b"xy-9", b"zz_8", b"q"];
        let expected = vec![b"xy_9".to_vec(), b"xy_9zz".to_vec(), b"q".to_vec()];
        assert_eq!(passing_rows(&java, &rows), expected);
        assert_eq!(passing_rows(&public, &rows), expected);
        // Several keys: a row matching any passes.
        let two = fuzzy_filter(&[(b"a?", &[0xff, 0x02]), (b"?b", &[0x01, 0x00])]);
        assert_eq!(translated(&two), "FuzzyRowFilter('a?', '01', '?b', '10')");
        let rows: [&[u8]; 4] = [b"ax", b"xb", b"xx", b"bb"];
        assert_eq!(
            passing_rows(&two, &rows),
            vec![b"ax".to_vec(), b"xb".to_vec(), b"bb".to_vec()]
        );
    }

    #[test]
    fn fuzzy_filters_that_cannot_be_read_are_refused() {
        let odd_byte = fuzzy_filter(&[(b"ab", &[0x00, 0x05])]);
        assert!(matches!(
            filter_string(&odd_byte),
            Err(FilterBytesError::Invalid(m)) if m.contains("0x05")
        ));
        let short_mask = fuzzy_filter(&[(b"ab", &[0x00])]);
        assert!(matches!(
            filter_string(&short_mask),
            Err(FilterBytesError::Invalid(m)) if m.contains("length")
        ));
        let no_mask = filter("FuzzyRowFilter", &bytes_field(1, &bytes_field(1, b"ab")));
        assert!(matches!(
            filter_string(&no_mask),
            Err(FilterBytesError::Invalid(_))
        ));
        // No fuzzy keys: HBase returns no rows.
        assert_eq!(
            translated(&filter("FuzzyRowFilter", &[])),
            "FilterAllFilter()"
        );
    }

    #[test]
    fn random_row_filter_chance_travels_as_a_quoted_decimal() {
        let random = |chance: f32| filter("RandomRowFilter", &float_field(1, chance));
        assert_eq!(translated(&random(0.25)), "RandomRowFilter('0.25')");
        assert_eq!(translated(&random(0.1)), "RandomRowFilter('0.1')");
        assert_eq!(translated(&random(1e-7)), "RandomRowFilter('0.0000001')");
        // Out of [0, 1] (and NaN) the chance means "no row" or "every row".
        assert_eq!(translated(&random(-3.0)), "RandomRowFilter('0')");
        assert_eq!(translated(&random(f32::NAN)), "RandomRowFilter('0')");
        assert_eq!(translated(&random(7.5)), "RandomRowFilter('1')");
        assert_eq!(translated(&random(f32::INFINITY)), "RandomRowFilter('1')");
        let rows: [&[u8]; 3] = [b"a", b"b", b"c"];
        assert!(passing_rows(&random(0.0), &rows).is_empty());
        assert_eq!(passing_rows(&random(1.0), &rows).len(), 3);
        assert!(matches!(
            filter_string(&filter("RandomRowFilter", &[])),
            Err(FilterBytesError::Invalid(m)) if m.contains("chance")
        ));
    }

    #[test]
    fn long_bit_and_null_comparators_become_tabulas_comparator_types() {
        let value_filter = |comparator: Vec<u8>| {
            let compare = [varint_field(1, 4), bytes_field(2, &comparator)].concat();
            filter("ValueFilter", &bytes_field(1, &compare))
        };
        let long = wire_comparator(
            "LongComparator",
            &bytes_field(1, &bytes_field(1, &(-42i64).to_be_bytes())),
        );
        assert_eq!(
            translated(&value_filter(long)),
            "ValueFilter(>=, 'long:-42')"
        );
        let bit = wire_comparator(
            "BitComparator",
            &[bytes_field(1, &bytes_field(1, &[0x0f])), varint_field(2, 3)].concat(),
        );
        assert_eq!(
            translated(&value_filter(bit)),
            "ValueFilter(>=, 'bitxor:\u{f}')"
        );
        let null = wire_comparator("NullComparator", &[]);
        assert_eq!(translated(&value_filter(null)), "ValueFilter(>=, 'null:')");
        let short = wire_comparator("LongComparator", &bytes_field(1, &bytes_field(1, &[1, 2])));
        assert!(matches!(
            filter_string(&value_filter(short)),
            Err(FilterBytesError::Invalid(m)) if m.contains("2 bytes")
        ));
        let no_op = wire_comparator("BitComparator", &bytes_field(1, &bytes_field(1, &[1])));
        assert!(matches!(
            filter_string(&value_filter(no_op)),
            Err(FilterBytesError::Invalid(_))
        ));
    }

    #[test]
    fn decimal_and_component_comparators_and_column_offsets_are_translated() {
        let value_filter = |comparator: Vec<u8>| {
            let compare = [varint_field(1, 2), bytes_field(2, &comparator)].concat();
            filter("ValueFilter", &bytes_field(1, &compare))
        };
        // Scale 2, unscaled 1234 (0x04d2): 12.34.
        let decimal = wire_comparator(
            "BigDecimalComparator",
            &bytes_field(1, &bytes_field(1, &[0, 0, 0, 2, 0x04, 0xd2])),
        );
        assert_eq!(
            translated(&value_filter(decimal)),
            "ValueFilter(=, 'bigdecimal:12.34')"
        );
        // Scale -3, unscaled -5 (0xfb): -5000.
        let negative = wire_comparator(
            "BigDecimalComparator",
            &bytes_field(1, &bytes_field(1, &[0xff, 0xff, 0xff, 0xfd, 0xfb])),
        );
        let text = translated(&value_filter(negative));
        let spec = text
            .strip_prefix("ValueFilter(=, 'bigdecimal:")
            .and_then(|rest| rest.strip_suffix("')"))
            .expect("a bigdecimal comparator");
        assert!(["-5000", "-5E+3", "-5e3", "-5E3"].contains(&spec), "{text}");
        let short = wire_comparator(
            "BigDecimalComparator",
            &bytes_field(1, &bytes_field(1, &[0, 0, 0, 1])),
        );
        assert!(matches!(
            filter_string(&value_filter(short)),
            Err(FilterBytesError::Invalid(m)) if m.contains("4 bytes")
        ));
        let component = wire_comparator(
            "BinaryComponentComparator",
            &[bytes_field(1, b"a:b"), varint_field(2, 3)].concat(),
        );
        assert_eq!(
            translated(&value_filter(component)),
            "ValueFilter(=, 'binarycomponent:3:a:b')"
        );
        let paged = [varint_field(1, 5), bytes_field(3, b"q")].concat();
        assert_eq!(
            translated(&filter("ColumnPaginationFilter", &paged)),
            "ColumnPaginationFilter(5, 'q')"
        );
    }

    #[test]
    fn what_the_filter_language_cannot_say_is_refused_by_name() {
        let retired = filter("FirstKeyValueMatchingQualifiersFilter", &[]);
        assert!(matches!(
            filter_string(&retired),
            Err(FilterBytesError::Unsupported(n))
                if n.ends_with("FirstKeyValueMatchingQualifiersFilter")
        ));
        let no_op = [varint_field(1, 6), bytes_field(2, &binary(b"x"))].concat();
        assert!(filter_string(&filter("RowFilter", &bytes_field(1, &no_op))).is_err());
    }

    #[test]
    fn garbage_and_bombs_are_errors_not_crashes() {
        assert!(matches!(
            filter_string(&[0xff, 0xff, 0xff]),
            Err(FilterBytesError::Malformed { .. })
        ));
        assert!(matches!(
            filter_string(&bytes_field(2, b"body")),
            Err(FilterBytesError::Invalid(_))
        ));
        let mut nested = prefix(b"a");
        for _ in 0..40 {
            nested = list(1, &[nested]);
        }
        assert!(matches!(
            filter_string(&nested),
            Err(FilterBytesError::Invalid(m)) if m.contains("nest")
        ));
        // A wrong wire type inside a filter's body.
        let bad = filter("PageFilter", &bytes_field(1, b"not a varint"));
        assert!(matches!(
            filter_string(&bad),
            Err(FilterBytesError::Malformed { .. })
        ));
    }
}

#[cfg(test)]
mod properties {
    use super::tests_support::*;
    use super::*;
    use proptest::prelude::*;
    use tabula_regionserver::filter::{parse, parse_filter};

    /// A filter tree as a Java client builds it, with the expression it must mean.
    #[derive(Debug, Clone)]
    enum Tree {
        Prefix(Vec<u8>),
        ColumnPrefix(Vec<u8>),
        Page(i64),
        Row(i32, Vec<u8>),
        FilterAll,
        /// Valid ranges: (start, start inclusive, stop, stop inclusive).
        Ranges(Vec<(Vec<u8>, bool, Vec<u8>, bool)>),
        /// (key, public mask) pairs, and whether they travel as the Java client
        /// rewrites them (0xff/0x02, free key bytes zeroed) or in the public form.
        Fuzzy(Vec<(Vec<u8>, Vec<u8>)>, bool),
        Random(f32),
        List(bool, Vec<Tree>),
        Skip(Box<Tree>),
        While(Box<Tree>),
    }

    fn tree() -> impl Strategy<Value = Tree> {
        let bytes = prop::collection::vec(any::<u8>(), 0..6);
        let leaf = prop_oneof![
            bytes.clone().prop_map(Tree::Prefix),
            bytes.clone().prop_map(Tree::ColumnPrefix),
            (0i64..1000).prop_map(Tree::Page),
            (0i32..6, bytes.clone()).prop_map(|(op, v)| Tree::Row(op, v)),
            Just(Tree::FilterAll),
            prop::collection::vec(
                (bytes.clone(), any::<bool>(), bytes.clone(), any::<bool>()),
                1..4
            )
            .prop_map(|ranges| Tree::Ranges(
                ranges
                    .into_iter()
                    .map(|(a, ai, b, bi)| {
                        // Ordered, and a single row when both ends are equal.
                        let (start, stop) = if a <= b { (a, b) } else { (b, a) };
                        let stop_inclusive = bi || start == stop;
                        (start, ai, stop, stop_inclusive)
                    })
                    .collect()
            )),
            (
                prop::collection::vec(
                    (0usize..5).prop_flat_map(|n| (
                        prop::collection::vec(any::<u8>(), n),
                        prop::collection::vec(0u8..2, n)
                    )),
                    1..3
                ),
                any::<bool>()
            )
                .prop_map(|(pairs, java)| Tree::Fuzzy(pairs, java)),
            (0.0f32..1.0).prop_map(Tree::Random),
            // Empty lists pass everything: how a list holding one means is the
            // case most worth drawing often.
            any::<bool>().prop_map(|all| Tree::List(all, Vec::new())),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                (any::<bool>(), prop::collection::vec(inner.clone(), 0..4))
                    .prop_map(|(all, children)| Tree::List(all, children)),
                inner.clone().prop_map(|t| Tree::Skip(Box::new(t))),
                inner.prop_map(|t| Tree::While(Box::new(t))),
            ]
        })
    }

    fn encode(t: &Tree) -> Vec<u8> {
        match t {
            Tree::Prefix(p) => filter("PrefixFilter", &bytes_field(1, p)),
            Tree::ColumnPrefix(p) => filter("ColumnPrefixFilter", &bytes_field(1, p)),
            Tree::Page(n) => filter("PageFilter", &varint_field(1, *n)),
            Tree::Row(op, v) => filter(
                "RowFilter",
                &bytes_field(
                    1,
                    &[varint_field(1, i64::from(*op)), bytes_field(2, &binary(v))].concat(),
                ),
            ),
            Tree::FilterAll => filter("FilterAllFilter", &[]),
            Tree::Ranges(ranges) => {
                let encoded: Vec<Vec<u8>> = ranges
                    .iter()
                    .map(|(start, si, stop, ti)| {
                        row_range(Some(start), Some(*si), Some(stop), Some(*ti))
                    })
                    .collect();
                row_ranges_filter(&encoded)
            }
            Tree::Fuzzy(pairs, java) => {
                let wire: Vec<(Vec<u8>, Vec<u8>)> = pairs
                    .iter()
                    .map(|(key, mask)| {
                        if *java {
                            java_fuzzy_pair(key, mask)
                        } else {
                            (key.clone(), mask.clone())
                        }
                    })
                    .collect();
                let refs: Vec<(&[u8], &[u8])> = wire
                    .iter()
                    .map(|(k, m)| (k.as_slice(), m.as_slice()))
                    .collect();
                fuzzy_filter(&refs)
            }
            Tree::Random(chance) => filter("RandomRowFilter", &float_field(1, *chance)),
            Tree::List(all, children) => {
                let encoded: Vec<Vec<u8>> = children.iter().map(encode).collect();
                list(if *all { 1 } else { 2 }, &encoded)
            }
            Tree::Skip(inner) => filter("SkipFilter", &bytes_field(1, &encode(inner))),
            Tree::While(inner) => filter("WhileMatchFilter", &bytes_field(1, &encode(inner))),
        }
    }

    fn quoted_arg(b: &[u8]) -> Arg {
        Arg::Quoted(Bytes::copy_from_slice(b))
    }

    /// What the tree means; `None` lets everything through (HBase's empty list).
    fn meaning(t: &Tree) -> Option<FilterExpr> {
        let named = |name: &'static str, args| Some(call(name, args));
        match t {
            Tree::Prefix(p) => named("PrefixFilter", vec![quoted_arg(p)]),
            Tree::ColumnPrefix(p) => named("ColumnPrefixFilter", vec![quoted_arg(p)]),
            Tree::Page(n) => named("PageFilter", vec![Arg::Integer(*n)]),
            Tree::Row(op, v) => {
                let spec = [&b"binary:"[..], v].concat();
                named(
                    "RowFilter",
                    vec![
                        Arg::Operator(CompareOp::ALL[*op as usize]),
                        quoted_arg(&spec),
                    ],
                )
            }
            Tree::FilterAll => named("FilterAllFilter", vec![]),
            Tree::Ranges(ranges) => named(
                "MultiRowRangeFilter",
                ranges
                    .iter()
                    .flat_map(|(start, si, stop, ti)| {
                        [
                            quoted_arg(start),
                            Arg::Boolean(*si),
                            quoted_arg(stop),
                            Arg::Boolean(*ti),
                        ]
                    })
                    .collect(),
            ),
            Tree::Fuzzy(pairs, java) => named(
                "FuzzyRowFilter",
                pairs
                    .iter()
                    .flat_map(|(key, mask)| {
                        // Free key bytes travel zeroed in the Java client's form.
                        let key: Vec<u8> = key
                            .iter()
                            .zip(mask)
                            .map(|(k, m)| if *java && *m == 1 { 0 } else { *k })
                            .collect();
                        let digits: Vec<u8> = mask.iter().map(|m| b'0' + m).collect();
                        [quoted_arg(&key), quoted_arg(&digits)]
                    })
                    .collect(),
            ),
            Tree::Random(chance) => {
                let text = if *chance <= 0.0 {
                    "0".to_owned()
                } else {
                    chance.to_string()
                };
                named("RandomRowFilter", vec![quoted_arg(text.as_bytes())])
            }
            Tree::List(all, children) => {
                let mut operands = Vec::new();
                for c in children {
                    match meaning(c) {
                        Some(e) => operands.push(e),
                        None if *all => {}
                        None => return None,
                    }
                }
                match operands.len() {
                    0 => None,
                    1 => operands.pop(),
                    _ if *all => Some(FilterExpr::And(operands)),
                    _ => Some(FilterExpr::Or(operands)),
                }
            }
            Tree::Skip(inner) => meaning(inner).map(|e| FilterExpr::Skip(Box::new(e))),
            Tree::While(inner) => meaning(inner).map(|e| FilterExpr::While(Box::new(e))),
        }
    }

    proptest! {
        #[test]
        fn translations_parse_back_to_what_the_filter_means(t in tree()) {
            let translated = filter_string(&encode(&t)).expect("translates");
            let expected = meaning(&t);
            match (&translated, &expected) {
                (None, None) => {}
                (Some(text), Some(e)) => {
                    prop_assert_eq!(&parse(text).expect("parses"), e);
                    prop_assert!(parse_filter(text).is_ok());
                }
                _ => prop_assert!(false, "{:?} vs {:?}", translated, expected),
            }
        }
    }
}
