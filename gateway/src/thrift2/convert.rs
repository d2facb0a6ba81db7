//! Thrift2 structs to engine types and back.
//!
//! Owns: TGet/TScan to read and scan specs (HBase's defaults for every unset
//! field), TPut/TDelete/TRowMutations to row mutations, cells to TResult, table
//! names, family and table descriptors, region locations, durability.
//! Must not: call the backend.

use std::collections::BTreeMap;

use bytes::Bytes;
use tabula_coordinator::tables::TableSettings;
use tabula_regionserver::filter::parse_filter;
use tabula_regionserver::{ReadSpec, ScanSpec};
use tabula_storage::schema::{MAX_BLOCK_SIZE, MIN_BLOCK_SIZE};
use tabula_storage::tablet::CompareOp;
use tabula_storage::{
    BloomType, Cell, ColumnSelector, CompressionName, Durability, FamilyExtras, FamilySchema,
    KeepDeleted, Mutation, RowMutation, TimeRange, LATEST_TIMESTAMP,
};
use tabula_thrift::hbase2::{
    TBloomFilterType, TColumn, TColumnFamilyDescriptor, TColumnValue, TCompareOperator,
    TCompressionAlgorithm, TDataBlockEncoding, TDelete, TDeleteType, TDurability, TGet,
    THRegionInfo, THRegionLocation, TKeepDeletedCells, TPut, TResult, TScan, TServerName,
    TTableDescriptor, TTableName, TTimeRange,
};

use super::errors::{Thrift2Error, Thrift2Result};
use super::filter_bytes;
use crate::backend::{RegionInfo, TableInfo};

/// HBase's cell type code of a put (`Cell.Type.Put`), reported in TColumnValue.type.
pub const PUT_TYPE_CODE: i8 = 4;
/// Versions a new family keeps when its descriptor does not say (HBase 2.x: 1).
pub const DEFAULT_MAX_VERSIONS: u32 = 1;
/// HBase's "forever" TTL, in seconds.
pub const TTL_FOREVER: i32 = i32::MAX;
/// zstd level for families created with a compressing algorithm.
pub const ZSTD_LEVEL: i32 = 3;
/// The namespace of tables named without one.
pub const DEFAULT_NAMESPACE: &str = "default";

/// The name data calls and the backend use for `t`: `ns:qualifier`, or just the
/// qualifier in the default namespace.
pub fn table_name(t: &TTableName) -> Thrift2Result<Vec<u8>> {
    if t.qualifier.is_empty() {
        return Err(Thrift2Error::Invalid(
            "table name qualifier is empty".to_string(),
        ));
    }
    match t.ns.as_deref() {
        None | Some(b"") => Ok(t.qualifier.clone()),
        Some(ns) if ns == DEFAULT_NAMESPACE.as_bytes() => Ok(t.qualifier.clone()),
        Some(ns) => {
            let mut name = Vec::with_capacity(ns.len() + 1 + t.qualifier.len());
            name.extend_from_slice(ns);
            name.push(b':');
            name.extend_from_slice(&t.qualifier);
            Ok(name)
        }
    }
}

/// `ns:qualifier` (or `qualifier`) as a TTableName; the default namespace is named.
pub fn ttable_name(name: &[u8]) -> TTableName {
    match name.iter().position(|&b| b == b':') {
        Some(i) => TTableName::new(
            name.get(..i).map(<[u8]>::to_vec),
            name.get(i + 1..).unwrap_or_default().to_vec(),
        ),
        None => TTableName::new(DEFAULT_NAMESPACE.as_bytes().to_vec(), name.to_vec()),
    }
}

/// The namespace a backend table name lives in.
pub fn namespace_of(name: &[u8]) -> String {
    match name.iter().position(|&b| b == b':') {
        Some(i) => String::from_utf8_lossy(name.get(..i).unwrap_or_default()).into_owned(),
        None => DEFAULT_NAMESPACE.to_string(),
    }
}

/// A table descriptor's durability and attributes.
pub fn table_settings(desc: &TTableDescriptor) -> TableSettings {
    TableSettings {
        durability: durability(desc.durability),
        attributes: desc
            .attributes
            .iter()
            .flatten()
            .map(|(k, v)| (Bytes::copy_from_slice(k), Bytes::copy_from_slice(v)))
            .collect(),
    }
}

/// The commit-log mode a TDurability names; `None` for unset and USE_DEFAULT (and
/// values this server does not know): the table's durability then, a synced log
/// unless the table says otherwise. SYNC_WAL's wait is an fsync or, with the
/// server's `log_fsync` off, a write to the OS.
pub fn durability(d: Option<TDurability>) -> Option<Durability> {
    match d {
        Some(TDurability::SKIP_WAL) => Some(Durability::Skip),
        Some(TDurability::ASYNC_WAL) => Some(Durability::Async),
        Some(TDurability::SYNC_WAL) => Some(Durability::Sync),
        Some(TDurability::FSYNC_WAL) => Some(Durability::Fsync),
        _ => None,
    }
}

/// A table's durability as a TDurability (`None`: USE_DEFAULT).
pub fn tdurability(d: Option<Durability>) -> TDurability {
    match d {
        None => TDurability::USE_DEFAULT,
        Some(Durability::Skip) => TDurability::SKIP_WAL,
        Some(Durability::Async) => TDurability::ASYNC_WAL,
        Some(Durability::Sync) => TDurability::SYNC_WAL,
        Some(Durability::Fsync) => TDurability::FSYNC_WAL,
    }
}

/// A TTimeRange as `[min, max)`, refusing negative or inverted bounds.
pub fn half_open(tr: &TTimeRange) -> Thrift2Result<TimeRange> {
    if tr.min_stamp < 0 || tr.max_stamp < 0 {
        return Err(Thrift2Error::Invalid(format!(
            "time range [{}, {}) has a negative timestamp",
            tr.min_stamp, tr.max_stamp
        )));
    }
    if tr.max_stamp < tr.min_stamp {
        return Err(Thrift2Error::Invalid(format!(
            "time range [{}, {}): maxStamp is smaller than minStamp",
            tr.min_stamp, tr.max_stamp
        )));
    }
    Ok(TimeRange::new(tr.min_stamp, tr.max_stamp))
}

/// Column selectors of a read: a qualifier selects one column, none the family.
pub fn selectors(columns: &[TColumn]) -> Vec<ColumnSelector> {
    columns
        .iter()
        .map(|c| match &c.qualifier {
            Some(q) => {
                ColumnSelector::Column(Bytes::copy_from_slice(&c.family), Bytes::copy_from_slice(q))
            }
            None => ColumnSelector::Family(Bytes::copy_from_slice(&c.family)),
        })
        .collect()
}

/// A filter string checked up front so a bad one fails the call naming the problem.
/// A string that is set must hold a filter (an empty one fails as in HBase).
fn checked_filter(filter: Option<Vec<u8>>) -> Thrift2Result<Option<Bytes>> {
    match filter {
        None => Ok(None),
        Some(f) => {
            parse_filter(&f).map_err(|e| Thrift2Error::Internal(e.to_string()))?;
            Ok(Some(Bytes::from(f)))
        }
    }
}

/// The filter of a TGet or TScan: filterBytes (a filter as HBase's Java client
/// serializes it) wins over filterString, as in HBase; a filterBytes value that
/// does not decode, or names a filter Tabula does not run, is a TIOError that
/// says so (HBase's DoNotRetryIOException).
fn read_filter(
    filter_string: Option<Vec<u8>>,
    filter_bytes: Option<Vec<u8>>,
) -> Thrift2Result<Option<Bytes>> {
    let from_string = checked_filter(filter_string)?;
    match filter_bytes {
        Some(b) if !b.is_empty() => {
            let filter = filter_bytes::filter_string(&b)
                .map_err(|e| Thrift2Error::Invalid(e.to_string()))?;
            if let Some(f) = &filter {
                parse_filter(f).map_err(|e| Thrift2Error::Invalid(format!("filterBytes: {e}")))?;
            }
            Ok(filter)
        }
        _ => Ok(from_string),
    }
}

/// Per-family cell window of a read (TGet/TScan storeLimit and storeOffset).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StoreWindow {
    /// Cells per family kept at most; `None` = all.
    pub limit: Option<usize>,
    /// Cells per family skipped first.
    pub offset: usize,
}

impl StoreWindow {
    fn new(limit: Option<i32>, offset: Option<i32>) -> Self {
        StoreWindow {
            limit: limit
                .filter(|l| *l >= 0)
                .and_then(|l| usize::try_from(l).ok()),
            offset: offset.and_then(|o| usize::try_from(o).ok()).unwrap_or(0),
        }
    }

    /// True when the window keeps every cell.
    pub fn is_all(&self) -> bool {
        self.limit.is_none() && self.offset == 0
    }

    /// Keeps, per family, the cells after `offset` and at most `limit` of them
    /// (cells arrive grouped by family).
    pub fn apply(&self, cells: Vec<Cell>) -> Vec<Cell> {
        if self.is_all() {
            return cells;
        }
        let mut out = Vec::with_capacity(cells.len());
        let mut family: Option<Bytes> = None;
        let mut seen = 0usize;
        for cell in cells {
            if family.as_ref() != Some(&cell.family) {
                family = Some(cell.family.clone());
                seen = 0;
            }
            let index = seen;
            seen += 1;
            if index < self.offset {
                continue;
            }
            if self.limit.is_some_and(|l| index - self.offset >= l) {
                continue;
            }
            out.push(cell);
        }
        out
    }
}

/// What a TGet asks for.
#[derive(Debug, Clone)]
pub struct GetRequest {
    pub row: Bytes,
    pub spec: ReadSpec,
    pub window: StoreWindow,
    /// existence_only: the answer carries no cells.
    pub existence_only: bool,
}

/// A TGet as a read: `timestamp` is an exact match and wins over `timeRange`;
/// maxVersions unset means 1 and must be positive when set.
pub fn get_request(get: TGet) -> Thrift2Result<GetRequest> {
    let time_range = match (get.timestamp, &get.time_range) {
        (Some(ts), _) => {
            if ts < 0 {
                return Err(Thrift2Error::Invalid(format!(
                    "timestamp {ts} is negative; timestamps are milliseconds since the epoch"
                )));
            }
            TimeRange::exactly(ts)
        }
        (None, Some(tr)) => half_open(tr)?,
        (None, None) => TimeRange::ALL,
    };
    let max_versions = match get.max_versions {
        None => 1,
        Some(n) if n > 0 => n.unsigned_abs(),
        Some(n) => {
            return Err(Thrift2Error::Invalid(format!(
                "maxVersions is {n}; versions must be positive"
            )))
        }
    };
    Ok(GetRequest {
        row: Bytes::from(get.row),
        spec: ReadSpec {
            columns: selectors(get.columns.as_deref().unwrap_or_default()),
            time_range,
            family_time_ranges: Vec::new(),
            max_versions,
            filter: read_filter(get.filter_string, get.filter_bytes)?,
        },
        window: StoreWindow::new(get.store_limit, get.store_offset),
        existence_only: get.existence_only.unwrap_or(false),
    })
}

/// What a TScan asks for.
#[derive(Debug, Clone)]
pub struct ScanRequest {
    pub spec: ScanSpec,
    /// Rows returned at most (TScan.limit); `None` = all.
    pub limit: Option<usize>,
}

/// A TScan as a scan: start inclusive, stop exclusive, maxVersions default 1,
/// batchSize splits wide rows, colFamTimeRangeMap per family.
pub fn scan_request(scan: TScan) -> Thrift2Result<ScanRequest> {
    let time_range = match &scan.time_range {
        Some(tr) => half_open(tr)?,
        None => TimeRange::ALL,
    };
    let mut family_time_ranges = Vec::new();
    for (family, tr) in scan.col_fam_time_range_map.unwrap_or_default() {
        family_time_ranges.push((Bytes::from(family), half_open(&tr)?));
    }
    let max_versions = scan
        .max_versions
        .filter(|n| *n > 0)
        .map_or(1, i32::unsigned_abs);
    let batch = scan
        .batch_size
        .and_then(|b| u32::try_from(b).ok())
        .unwrap_or(0);
    Ok(ScanRequest {
        spec: ScanSpec {
            start_row: Bytes::from(scan.start_row.unwrap_or_default()),
            stop_row: Bytes::from(scan.stop_row.unwrap_or_default()),
            reverse: scan.reversed.unwrap_or(false),
            read: ReadSpec {
                columns: selectors(scan.columns.as_deref().unwrap_or_default()),
                time_range,
                family_time_ranges,
                max_versions,
                filter: read_filter(scan.filter_string, scan.filter_bytes)?,
            },
            batch,
        },
        limit: scan
            .limit
            .filter(|l| *l > 0)
            .and_then(|l| usize::try_from(l).ok()),
    })
}

/// Cells as a TResult (family, qualifier ascending, newest first); no cells gives
/// HBase's empty result: no row, no column values.
pub fn tresult(row: &[u8], mut cells: Vec<Cell>, partial: bool) -> TResult {
    if cells.is_empty() {
        return TResult::new(None, Vec::new(), false, false);
    }
    crate::thrift1::convert::sort_like_hbase(&mut cells);
    let values = cells
        .into_iter()
        .map(|c| {
            TColumnValue::new(
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.value,
                c.timestamp,
                None,
                PUT_TYPE_CODE,
            )
        })
        .collect();
    TResult::new(row.to_vec(), values, false, partial)
}

/// A TPut as a row mutation: each cell at its own timestamp, else the put's, else
/// server time.
/// The put as a row mutation and the durability it names (`None`: the table's).
pub fn put_mutation(put: TPut) -> Thrift2Result<(RowMutation, Option<Durability>)> {
    if put.column_values.is_empty() {
        return Err(Thrift2Error::Invalid(
            "No columns to insert: a TPut needs at least one column value".to_string(),
        ));
    }
    let default_ts = put.timestamp.unwrap_or(LATEST_TIMESTAMP);
    let mut rm = RowMutation::new(put.row);
    for cv in put.column_values {
        rm.mutations.push(Mutation::Put {
            family: Bytes::from(cv.family),
            qualifier: Bytes::from(cv.qualifier),
            timestamp: cv.timestamp.unwrap_or(default_ts),
            value: cv.value,
        });
    }
    Ok((rm, durability(put.durability)))
}

/// A TDelete as a row mutation. No columns: the whole row (`<= TDelete.timestamp`,
/// else everything). With columns, TDelete.timestamp is not used (as in HBase) and
/// each column's own timestamp counts, by deleteType (default DELETE_COLUMNS):
/// DELETE_COLUMN one version (at the column's timestamp, else the newest),
/// DELETE_COLUMNS every version `<=` it, DELETE_FAMILY the family `<=` it,
/// DELETE_FAMILY_VERSION the family's cells at exactly it (the column must carry a
/// timestamp; without one HBase fails the call with an INTERNAL_ERROR). A column
/// without a qualifier names the empty qualifier, except for the family types.
/// The delete as a row mutation and the durability it names (`None`: the table's).
pub fn delete_mutation(delete: TDelete) -> Thrift2Result<(RowMutation, Option<Durability>)> {
    let kind = delete.delete_type.unwrap_or(TDeleteType::DELETE_COLUMNS);
    let mut rm = RowMutation::new(delete.row);
    let columns = delete.columns.unwrap_or_default();
    if columns.is_empty() {
        rm.mutations.push(Mutation::DeleteRow {
            timestamp: delete.timestamp.unwrap_or(LATEST_TIMESTAMP),
        });
    }
    for c in columns {
        let family = Bytes::from(c.family);
        let qualifier = Bytes::from(c.qualifier.unwrap_or_default());
        let ts = c.timestamp.unwrap_or(LATEST_TIMESTAMP);
        let m = match kind {
            TDeleteType::DELETE_COLUMN => Mutation::DeleteVersion {
                family,
                qualifier,
                timestamp: ts,
            },
            TDeleteType::DELETE_COLUMNS => Mutation::DeleteColumn {
                family,
                qualifier,
                timestamp: ts,
            },
            TDeleteType::DELETE_FAMILY => Mutation::DeleteFamily {
                family,
                timestamp: ts,
            },
            TDeleteType::DELETE_FAMILY_VERSION => {
                if c.timestamp.is_none() {
                    return Err(Thrift2Error::Internal(
                        "Timestamp is required for TDelete with DeleteFamilyVersion type"
                            .to_string(),
                    ));
                }
                Mutation::DeleteFamilyVersion {
                    family,
                    timestamp: ts,
                }
            }
            other => {
                return Err(Thrift2Error::Invalid(format!(
                    "unknown TDeleteType {}; expected DELETE_COLUMN (0), DELETE_COLUMNS (1), \
                     DELETE_FAMILY (2) or DELETE_FAMILY_VERSION (3)",
                    other.0
                )))
            }
        };
        rm.mutations.push(m);
    }
    Ok((rm, durability(delete.durability)))
}

/// A TCompareOperator as the engine's comparison (`provided <op> stored`).
pub fn compare_op(op: TCompareOperator) -> Thrift2Result<CompareOp> {
    Ok(match op {
        TCompareOperator::LESS => CompareOp::Less,
        TCompareOperator::LESS_OR_EQUAL => CompareOp::LessOrEqual,
        TCompareOperator::EQUAL => CompareOp::Equal,
        TCompareOperator::NOT_EQUAL => CompareOp::NotEqual,
        TCompareOperator::GREATER_OR_EQUAL => CompareOp::GreaterOrEqual,
        TCompareOperator::GREATER => CompareOp::Greater,
        // HBase's region server has no comparison for NO_OP and fails the call
        // ("Unknown Compare op NO_OP"); nothing is applied.
        TCompareOperator::NO_OP => {
            return Err(Thrift2Error::Invalid(
                "Unknown Compare op NO_OP: checkAndMutate needs a comparison".to_string(),
            ))
        }
        other => {
            return Err(Thrift2Error::Invalid(format!(
                "unknown TCompareOperator {}; expected 0 (LESS) to 6 (NO_OP)",
                other.0
            )))
        }
    })
}

/// A family descriptor as a schema, with HBase 2.x defaults for unset fields
/// (1 version, no TTL, no compression, row bloom, block cache on).
pub fn family_from_descriptor(d: &TColumnFamilyDescriptor) -> Thrift2Result<FamilySchema> {
    let name = String::from_utf8_lossy(&d.name).into_owned();
    if d.name.is_empty() {
        return Err(Thrift2Error::Invalid(
            "column family name is empty".to_string(),
        ));
    }
    let max_versions = match d.max_versions {
        None => DEFAULT_MAX_VERSIONS,
        Some(n) if n > 0 => n.unsigned_abs(),
        Some(n) => {
            return Err(Thrift2Error::Invalid(format!(
                "Maximum versions must be positive (column family {name}: maxVersions {n})"
            )))
        }
    };
    let ttl_seconds = match d.time_to_live {
        None | Some(TTL_FOREVER) => None,
        Some(n) if n > 0 => Some(u64::from(n.unsigned_abs())),
        Some(n) => {
            return Err(Thrift2Error::Invalid(format!(
                "TTL for column family {name} must be positive (got {n})"
            )))
        }
    };
    // HBase's table checks: kept versions between 0 and the maximum.
    let min_versions = match d.min_versions {
        None => 0,
        Some(n) if n >= 0 && n.unsigned_abs() <= max_versions => n.unsigned_abs(),
        Some(n) => {
            return Err(Thrift2Error::Invalid(format!(
                "Min versions for column family {name} must be between 0 and the Max \
                 versions ({max_versions}); got {n}"
            )))
        }
    };
    let keep_deleted = match d.keep_deleted_cells {
        None | Some(TKeepDeletedCells::FALSE) => KeepDeleted::No,
        Some(TKeepDeletedCells::TRUE) => KeepDeleted::Yes,
        Some(TKeepDeletedCells::TTL) => KeepDeleted::UntilTtl,
        Some(other) => {
            return Err(Thrift2Error::Invalid(format!(
                "unknown TKeepDeletedCells {} for column family {name}",
                other.0
            )))
        }
    };
    // Every compressing choice is stored with zstd and reported as named.
    let compression_name = match d.compression_type {
        None | Some(TCompressionAlgorithm::NONE) => CompressionName::None,
        Some(TCompressionAlgorithm::ZSTD) => CompressionName::Zstd,
        Some(TCompressionAlgorithm::GZ) => CompressionName::Gz,
        Some(TCompressionAlgorithm::LZO) => CompressionName::Lzo,
        Some(TCompressionAlgorithm::SNAPPY) => CompressionName::Snappy,
        Some(TCompressionAlgorithm::LZ4) => CompressionName::Lz4,
        Some(TCompressionAlgorithm::BZIP2) => CompressionName::Bzip2,
        Some(other) => {
            return Err(Thrift2Error::Invalid(format!(
                "unknown TCompressionAlgorithm {} for column family {name}",
                other.0
            )))
        }
    };
    let bloom = match d.bloomn_filter_type {
        None | Some(TBloomFilterType::ROW) | Some(TBloomFilterType::ROWPREFIX_FIXED_LENGTH) => {
            BloomType::Row
        }
        Some(TBloomFilterType::NONE) => BloomType::None,
        Some(TBloomFilterType::ROWCOL) => BloomType::RowCol,
        Some(other) => {
            return Err(Thrift2Error::Invalid(format!(
                "unknown TBloomFilterType {} for column family {name}",
                other.0
            )))
        }
    };
    let mut f = FamilySchema::new(Bytes::copy_from_slice(&d.name))
        .max_versions(max_versions)
        .ttl(ttl_seconds)
        .min_versions(min_versions)
        .keep_deleted(keep_deleted)
        .compression_named(compression_name, ZSTD_LEVEL);
    f.bloom = bloom;
    f.block_cache = d.block_cache_enabled.unwrap_or(true);
    f.in_memory = d.in_memory.unwrap_or(false);
    f.block_size = match d.block_size {
        None => None,
        Some(size) => Some(
            u32::try_from(size)
                .ok()
                .filter(|s| (MIN_BLOCK_SIZE..=MAX_BLOCK_SIZE).contains(s))
                .ok_or_else(|| {
                    Thrift2Error::Invalid(format!(
                        "Block size for column family {name} must be between 1K and 16MB"
                    ))
                })?,
        ),
    };
    f.extras = extras_from_descriptor(d, &name)?;
    Ok(f)
}

/// The settings of `d` kept for clients only, HBase's defaults where unset.
fn extras_from_descriptor(d: &TColumnFamilyDescriptor, name: &str) -> Thrift2Result<FamilyExtras> {
    let defaults = FamilyExtras::default();
    let data_block_encoding = match d.data_block_encoding {
        None => defaults.data_block_encoding,
        Some(e) if TDataBlockEncoding::ENUM_VALUES.contains(&e) => e.0,
        Some(e) => {
            return Err(Thrift2Error::Invalid(format!(
                "unknown TDataBlockEncoding {} for column family {name}",
                e.0
            )))
        }
    };
    Ok(FamilyExtras {
        scope: d.scope.unwrap_or(defaults.scope),
        dfs_replication: d.dfs_replication.unwrap_or(defaults.dfs_replication),
        data_block_encoding,
        cache_data_on_write: d
            .cache_data_on_write
            .unwrap_or(defaults.cache_data_on_write),
        cache_indexes_on_write: d
            .cache_indexes_on_write
            .unwrap_or(defaults.cache_indexes_on_write),
        cache_blooms_on_write: d
            .cache_blooms_on_write
            .unwrap_or(defaults.cache_blooms_on_write),
        evict_blocks_on_close: d
            .evict_blocks_on_close
            .unwrap_or(defaults.evict_blocks_on_close),
        compress_tags: d.compress_tags.unwrap_or(defaults.compress_tags),
        attributes: d
            .attributes
            .iter()
            .flatten()
            .map(|(k, v)| (Bytes::copy_from_slice(k), Bytes::copy_from_slice(v)))
            .collect(),
        configuration: d.configuration.clone().unwrap_or_default(),
    })
}

/// A family schema as HBase describes it.
pub fn descriptor_from_family(f: &FamilySchema) -> TColumnFamilyDescriptor {
    TColumnFamilyDescriptor {
        name: f.name.to_vec(),
        attributes: Some(
            f.extras
                .attributes
                .iter()
                .map(|(k, v)| (k.to_vec(), v.to_vec()))
                .collect(),
        ),
        configuration: Some(f.extras.configuration.clone()),
        block_size: f.block_size.and_then(|s| i32::try_from(s).ok()),
        bloomn_filter_type: Some(match f.bloom {
            BloomType::None => TBloomFilterType::NONE,
            BloomType::Row => TBloomFilterType::ROW,
            BloomType::RowCol => TBloomFilterType::ROWCOL,
        }),
        compression_type: Some(match f.compression_name {
            CompressionName::None => TCompressionAlgorithm::NONE,
            CompressionName::Gz => TCompressionAlgorithm::GZ,
            CompressionName::Snappy => TCompressionAlgorithm::SNAPPY,
            CompressionName::Lzo => TCompressionAlgorithm::LZO,
            CompressionName::Lz4 => TCompressionAlgorithm::LZ4,
            CompressionName::Bzip2 => TCompressionAlgorithm::BZIP2,
            CompressionName::Zstd => TCompressionAlgorithm::ZSTD,
        }),
        dfs_replication: Some(f.extras.dfs_replication),
        data_block_encoding: Some(TDataBlockEncoding(f.extras.data_block_encoding)),
        keep_deleted_cells: Some(match f.keep_deleted {
            KeepDeleted::No => TKeepDeletedCells::FALSE,
            KeepDeleted::Yes => TKeepDeletedCells::TRUE,
            KeepDeleted::UntilTtl => TKeepDeletedCells::TTL,
        }),
        max_versions: Some(i32::try_from(f.max_versions).unwrap_or(i32::MAX)),
        min_versions: Some(i32::try_from(f.min_versions).unwrap_or(i32::MAX)),
        scope: Some(f.extras.scope),
        time_to_live: Some(
            f.ttl_seconds
                .map_or(TTL_FOREVER, |s| i32::try_from(s).unwrap_or(TTL_FOREVER)),
        ),
        block_cache_enabled: Some(f.block_cache),
        cache_blooms_on_write: Some(f.extras.cache_blooms_on_write),
        cache_data_on_write: Some(f.extras.cache_data_on_write),
        cache_indexes_on_write: Some(f.extras.cache_indexes_on_write),
        compress_tags: Some(f.extras.compress_tags),
        evict_blocks_on_close: Some(f.extras.evict_blocks_on_close),
        in_memory: Some(f.in_memory),
    }
}

/// A table as a TTableDescriptor.
pub fn table_descriptor(t: &TableInfo) -> TTableDescriptor {
    TTableDescriptor::new(
        ttable_name(&t.name),
        t.families
            .iter()
            .map(descriptor_from_family)
            .collect::<Vec<_>>(),
        t.attributes
            .iter()
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect::<BTreeMap<_, _>>(),
        tdurability(t.durability),
    )
}

/// A region and its server as a THRegionLocation.
pub fn region_location(r: &RegionInfo) -> THRegionLocation {
    THRegionLocation::new(
        TServerName::new(
            r.server_host.clone(),
            r.server_port,
            (r.server_start_code > 0).then_some(r.server_start_code),
        ),
        THRegionInfo::new(
            r.id,
            r.table.to_vec(),
            r.start_key.to_vec(),
            r.end_key.to_vec(),
            false,
            false,
            0,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tget(row: &[u8]) -> TGet {
        TGet {
            row: row.to_vec(),
            columns: None,
            timestamp: None,
            time_range: None,
            max_versions: None,
            filter_string: None,
            attributes: None,
            authorizations: None,
            consistency: None,
            target_replica_id: None,
            cache_blocks: None,
            store_limit: None,
            store_offset: None,
            existence_only: None,
            filter_bytes: None,
        }
    }

    #[test]
    fn a_tresult_shares_the_values_of_its_cells() {
        let stored = Bytes::from(vec![b'v'; 1000]);
        let cell = Cell {
            row: Bytes::from_static(b"r"),
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: 5,
            value: stored.clone(),
        };
        let result = tresult(b"r", vec![cell], false);
        assert_eq!(result.column_values.len(), 1);
        let value = &result.column_values[0].value;
        assert_eq!(value, &stored);
        assert_eq!(
            value.as_ptr(),
            stored.as_ptr(),
            "the reply copied the value"
        );
    }

    fn tdelete(row: &[u8]) -> TDelete {
        TDelete {
            row: row.to_vec(),
            columns: None,
            timestamp: None,
            delete_type: None,
            attributes: None,
            durability: None,
            cell_visibility: None,
        }
    }

    fn family(name: &[u8], max_versions: Option<i32>) -> TColumnFamilyDescriptor {
        let mut d = descriptor_from_family(&FamilySchema::new(Bytes::copy_from_slice(name)));
        d.max_versions = max_versions;
        d.time_to_live = None;
        d.compression_type = None;
        d
    }

    fn cell(f: &str, q: &str, ts: i64) -> Cell {
        Cell {
            row: Bytes::from_static(b"r"),
            family: Bytes::copy_from_slice(f.as_bytes()),
            qualifier: Bytes::copy_from_slice(q.as_bytes()),
            timestamp: ts,
            value: Bytes::new(),
        }
    }

    #[test]
    fn table_names_round_trip_through_namespaces() {
        let t = TTableName::new(None, b"t".to_vec());
        assert_eq!(table_name(&t).unwrap(), b"t");
        let t = TTableName::new(b"default".to_vec(), b"t".to_vec());
        assert_eq!(table_name(&t).unwrap(), b"t");
        let t = TTableName::new(b"ns".to_vec(), b"t".to_vec());
        assert_eq!(table_name(&t).unwrap(), b"ns:t");
        assert_eq!(ttable_name(b"ns:t"), t);
        assert_eq!(ttable_name(b"t").ns.as_deref(), Some(&b"default"[..]));
        assert!(table_name(&TTableName::new(None, Vec::new())).is_err());
        assert_eq!(namespace_of(b"ns:t"), "ns");
        assert_eq!(namespace_of(b"t"), "default");
    }

    #[test]
    fn get_timestamp_is_exact_and_wins_over_the_range() {
        let mut g = tget(b"r");
        g.timestamp = Some(10);
        g.time_range = Some(TTimeRange::new(0, 5));
        let r = get_request(g.clone()).unwrap();
        assert_eq!(r.spec.time_range, TimeRange::exactly(10));
        assert_eq!(r.spec.max_versions, 1);
        g.timestamp = None;
        assert_eq!(
            get_request(g.clone()).unwrap().spec.time_range,
            TimeRange::new(0, 5)
        );
        g.max_versions = Some(0);
        assert!(matches!(get_request(g), Err(Thrift2Error::Invalid(_))));
    }

    #[test]
    fn bad_filter_bytes_and_bad_filter_strings_are_refused() {
        let mut g = tget(b"r");
        g.filter_bytes = Some(vec![1, 2]);
        assert!(matches!(get_request(g), Err(Thrift2Error::Invalid(_))));
        let s = TScan {
            filter_string: Some(b"NoSuchFilter()".to_vec()),
            ..TScan::default()
        };
        assert!(matches!(scan_request(s), Err(Thrift2Error::Internal(_))));
    }

    #[test]
    fn filter_bytes_win_over_the_filter_string() {
        // hbase.pb.Filter { name: "...PrefixFilter", serialized_filter: { prefix: "ab" } }
        let class = b"org.apache.hadoop.hbase.filter.PrefixFilter";
        let mut bytes = vec![0x0a, class.len() as u8];
        bytes.extend_from_slice(class);
        bytes.extend_from_slice(&[0x12, 4, 0x0a, 2, b'a', b'b']);
        let s = TScan {
            filter_string: Some(b"KeyOnlyFilter()".to_vec()),
            filter_bytes: Some(bytes),
            ..TScan::default()
        };
        let filter = scan_request(s).unwrap().spec.read.filter;
        assert_eq!(filter.as_deref(), Some(&b"PrefixFilter('ab')"[..]));
    }

    #[test]
    fn deletes_follow_the_delete_type() {
        let mut d = tdelete(b"r");
        d.columns = Some(vec![TColumn {
            family: b"f".to_vec(),
            qualifier: Some(b"q".to_vec()),
            timestamp: Some(7),
        }]);
        // The delete's own timestamp is not used once columns are named.
        d.timestamp = Some(99);
        let (rm, _) = delete_mutation(d.clone()).unwrap();
        assert!(matches!(
            rm.mutations[0],
            Mutation::DeleteColumn { timestamp: 7, .. }
        ));
        let mut one = d.clone();
        one.delete_type = Some(TDeleteType::DELETE_COLUMN);
        let (rm, _) = delete_mutation(one).unwrap();
        assert!(matches!(
            rm.mutations[0],
            Mutation::DeleteVersion { timestamp: 7, .. }
        ));
        let mut fv = d.clone();
        fv.delete_type = Some(TDeleteType::DELETE_FAMILY_VERSION);
        if let Some(c) = fv.columns.as_mut().and_then(|c| c.first_mut()) {
            c.timestamp = None;
        }
        assert!(matches!(
            delete_mutation(fv),
            Err(Thrift2Error::Internal(_))
        ));
        let (rm, _) = delete_mutation(tdelete(b"r")).unwrap();
        assert_eq!(
            rm.mutations,
            vec![Mutation::DeleteRow {
                timestamp: LATEST_TIMESTAMP
            }]
        );
    }

    #[test]
    fn store_window_counts_per_family() {
        let cells = vec![
            cell("a", "1", 1),
            cell("a", "2", 1),
            cell("a", "3", 1),
            cell("b", "1", 1),
            cell("b", "2", 1),
        ];
        let w = StoreWindow::new(Some(1), Some(1));
        let kept: Vec<_> = w
            .apply(cells)
            .into_iter()
            .map(|c| (c.family, c.qualifier))
            .collect();
        assert_eq!(
            kept,
            vec![
                (Bytes::from_static(b"a"), Bytes::from_static(b"2")),
                (Bytes::from_static(b"b"), Bytes::from_static(b"2"))
            ]
        );
    }

    #[test]
    fn family_descriptors_take_hbase2_defaults() {
        let f = family_from_descriptor(&family(b"f", None)).unwrap();
        assert_eq!(f.max_versions, 1);
        assert_eq!(f.ttl_seconds, None);
        let back = descriptor_from_family(&f);
        assert_eq!(back.max_versions, Some(1));
        assert_eq!(back.time_to_live, Some(TTL_FOREVER));
        assert!(family_from_descriptor(&family(b"f", Some(0))).is_err());
    }
}
