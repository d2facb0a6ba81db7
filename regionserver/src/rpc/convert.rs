//! Translation between the regionserver's and the engine's types and their wire
//! messages (proto/tablet_service.proto), both ways, and between failures and
//! [`RsError`].
//!
//! Owns: every field-by-field mapping, and the checks that a decoded message names
//! only values the types allow (an unknown enum number, a missing required message,
//! an invalid schema is an error, never a default). Must not: do I/O or call a
//! service.

use bytes::Bytes;
use tabula_storage::tablet::{
    CompareOp, Condition, LoadSplit, RequestCounts, RowResult, TabletDescriptor, TabletStats,
};
use tabula_storage::{
    BloomType, Cell, ColumnSelector, Compression, Durability, FamilySchema, KeepDeleted, Mutation,
    RowMutation, SplitRule, TableSchema, TimeRange,
};

use super::pb;
use crate::api::{
    ReadSpec, RemoteFailure, RsError, RsResult, ScanBatch, ScanSpec, SplitOutcome, TabletReport,
};
use crate::slow_log::{SlowCall, SlowKind};

/// A message that does not decode into the type it stands for.
fn malformed(what: &str) -> RsError {
    RsError::Storage(tabula_storage::Error::InvalidArgument(format!(
        "malformed {what} in a regionserver call"
    )))
}

fn required<T>(value: Option<T>, what: &str) -> RsResult<T> {
    value.ok_or_else(|| malformed(what))
}

// ------------------------------------------------------------------ cells

pub fn cell_to_wire(cell: &Cell) -> pb::Cell {
    pb::Cell {
        row: cell.row.clone(),
        family: cell.family.clone(),
        qualifier: cell.qualifier.clone(),
        timestamp: cell.timestamp,
        value: cell.value.clone(),
    }
}

pub fn cell_from_wire(cell: pb::Cell) -> Cell {
    Cell {
        row: cell.row,
        family: cell.family,
        qualifier: cell.qualifier,
        timestamp: cell.timestamp,
        value: cell.value,
    }
}

pub fn cells_to_wire(cells: &[Cell]) -> pb::CellsReply {
    pb::CellsReply {
        cells: cells.iter().map(cell_to_wire).collect(),
    }
}

pub fn cells_from_wire(reply: pb::CellsReply) -> Vec<Cell> {
    reply.cells.into_iter().map(cell_from_wire).collect()
}

pub fn time_range_to_wire(range: &TimeRange) -> pb::TimeRange {
    pb::TimeRange {
        min: range.min,
        max: range.max,
    }
}

pub fn time_range_from_wire(range: Option<pb::TimeRange>) -> RsResult<TimeRange> {
    let range = required(range, "time range")?;
    Ok(TimeRange::new(range.min, range.max))
}

// ------------------------------------------------------------------ mutations

pub fn mutation_to_wire(mutation: &RowMutation) -> pb::RowMutation {
    use pb::MutationKind as K;
    let one =
        |kind: K, family: &Bytes, qualifier: &Bytes, timestamp: i64, value: &Bytes| pb::Mutation {
            kind: kind as i32,
            family: family.clone(),
            qualifier: qualifier.clone(),
            timestamp,
            value: value.clone(),
        };
    let none = Bytes::new();
    pb::RowMutation {
        row: mutation.row.clone(),
        mutations: mutation
            .mutations
            .iter()
            .map(|m| match m {
                Mutation::Put {
                    family,
                    qualifier,
                    timestamp,
                    value,
                } => one(K::Put, family, qualifier, *timestamp, value),
                Mutation::DeleteVersion {
                    family,
                    qualifier,
                    timestamp,
                } => one(K::DeleteVersion, family, qualifier, *timestamp, &none),
                Mutation::DeleteColumn {
                    family,
                    qualifier,
                    timestamp,
                } => one(K::DeleteColumn, family, qualifier, *timestamp, &none),
                Mutation::DeleteFamily { family, timestamp } => {
                    one(K::DeleteFamily, family, &none, *timestamp, &none)
                }
                Mutation::DeleteFamilyVersion { family, timestamp } => {
                    one(K::DeleteFamilyVersion, family, &none, *timestamp, &none)
                }
                Mutation::DeleteRow { timestamp } => {
                    one(K::DeleteRow, &none, &none, *timestamp, &none)
                }
            })
            .collect(),
    }
}

pub fn mutation_from_wire(mutation: Option<pb::RowMutation>) -> RsResult<RowMutation> {
    use pb::MutationKind as K;
    let mutation = required(mutation, "row mutation")?;
    let mut out = RowMutation::new(mutation.row);
    for m in mutation.mutations {
        let kind = K::try_from(m.kind).map_err(|_| malformed("mutation kind"))?;
        let (family, qualifier, timestamp, value) = (m.family, m.qualifier, m.timestamp, m.value);
        out.mutations.push(match kind {
            K::Put => Mutation::Put {
                family,
                qualifier,
                timestamp,
                value,
            },
            K::DeleteVersion => Mutation::DeleteVersion {
                family,
                qualifier,
                timestamp,
            },
            K::DeleteColumn => Mutation::DeleteColumn {
                family,
                qualifier,
                timestamp,
            },
            K::DeleteFamily => Mutation::DeleteFamily { family, timestamp },
            K::DeleteFamilyVersion => Mutation::DeleteFamilyVersion { family, timestamp },
            K::DeleteRow => Mutation::DeleteRow { timestamp },
        });
    }
    Ok(out)
}

pub fn durability_to_wire(durability: Durability) -> i32 {
    (match durability {
        Durability::Fsync => pb::Durability::Fsync,
        Durability::Sync => pb::Durability::Sync,
        Durability::Async => pb::Durability::Async,
        Durability::Skip => pb::Durability::Skip,
    }) as i32
}

pub fn durability_from_wire(durability: i32) -> RsResult<Durability> {
    Ok(
        match pb::Durability::try_from(durability).map_err(|_| malformed("durability"))? {
            pb::Durability::Fsync => Durability::Fsync,
            pb::Durability::Sync => Durability::Sync,
            pb::Durability::Async => Durability::Async,
            pb::Durability::Skip => Durability::Skip,
        },
    )
}

// ------------------------------------------------------------------ reads

pub fn read_spec_to_wire(spec: &ReadSpec) -> pb::ReadSpec {
    pb::ReadSpec {
        columns: spec
            .columns
            .iter()
            .map(|c| match c {
                ColumnSelector::Family(family) => pb::Column {
                    family: family.clone(),
                    whole_family: true,
                    qualifier: Bytes::new(),
                },
                ColumnSelector::Column(family, qualifier) => pb::Column {
                    family: family.clone(),
                    whole_family: false,
                    qualifier: qualifier.clone(),
                },
            })
            .collect(),
        time_range: Some(time_range_to_wire(&spec.time_range)),
        family_time_ranges: spec
            .family_time_ranges
            .iter()
            .map(|(family, range)| pb::FamilyTimeRange {
                family: family.clone(),
                range: Some(time_range_to_wire(range)),
            })
            .collect(),
        max_versions: spec.max_versions,
        filter: spec.filter.clone(),
    }
}

pub fn read_spec_from_wire(spec: Option<pb::ReadSpec>) -> RsResult<ReadSpec> {
    let spec = required(spec, "read spec")?;
    let mut family_time_ranges = Vec::with_capacity(spec.family_time_ranges.len());
    for f in spec.family_time_ranges {
        family_time_ranges.push((f.family, time_range_from_wire(f.range)?));
    }
    Ok(ReadSpec {
        columns: spec
            .columns
            .into_iter()
            .map(|c| {
                if c.whole_family {
                    ColumnSelector::Family(c.family)
                } else {
                    ColumnSelector::Column(c.family, c.qualifier)
                }
            })
            .collect(),
        time_range: time_range_from_wire(spec.time_range)?,
        family_time_ranges,
        max_versions: spec.max_versions,
        filter: spec.filter,
    })
}

pub fn scan_spec_to_wire(spec: &ScanSpec) -> pb::ScanSpec {
    pb::ScanSpec {
        start_row: spec.start_row.clone(),
        stop_row: spec.stop_row.clone(),
        reverse: spec.reverse,
        read: Some(read_spec_to_wire(&spec.read)),
        batch: spec.batch,
    }
}

pub fn scan_spec_from_wire(spec: Option<pb::ScanSpec>) -> RsResult<ScanSpec> {
    let spec = required(spec, "scan spec")?;
    Ok(ScanSpec {
        start_row: spec.start_row,
        stop_row: spec.stop_row,
        reverse: spec.reverse,
        read: read_spec_from_wire(spec.read)?,
        batch: spec.batch,
    })
}

pub fn scan_batch_to_wire(batch: &ScanBatch) -> pb::ScanBatch {
    pb::ScanBatch {
        rows: batch
            .rows
            .iter()
            .map(|r| pb::RowResult {
                cells: r.cells.iter().map(cell_to_wire).collect(),
                partial: r.partial,
            })
            .collect(),
        exhausted: batch.exhausted,
        ended_by_filter: batch.ended_by_filter,
    }
}

pub fn scan_batch_from_wire(batch: pb::ScanBatch) -> ScanBatch {
    ScanBatch {
        rows: batch
            .rows
            .into_iter()
            .map(|r| RowResult {
                cells: r.cells.into_iter().map(cell_from_wire).collect(),
                partial: r.partial,
            })
            .collect(),
        exhausted: batch.exhausted,
        ended_by_filter: batch.ended_by_filter,
    }
}

pub fn condition_to_wire(condition: &Condition) -> pb::Condition {
    use pb::CompareOp as W;
    pb::Condition {
        family: condition.family.clone(),
        qualifier: condition.qualifier.clone(),
        op: (match condition.op {
            CompareOp::Less => W::Less,
            CompareOp::LessOrEqual => W::LessOrEqual,
            CompareOp::Equal => W::Equal,
            CompareOp::NotEqual => W::NotEqual,
            CompareOp::GreaterOrEqual => W::GreaterOrEqual,
            CompareOp::Greater => W::Greater,
            CompareOp::NoOp => W::NoOp,
        }) as i32,
        value: condition.value.clone(),
        time_range: Some(time_range_to_wire(&condition.time_range)),
    }
}

pub fn condition_from_wire(condition: Option<pb::Condition>) -> RsResult<Condition> {
    use pb::CompareOp as W;
    let condition = required(condition, "condition")?;
    let op = match W::try_from(condition.op).map_err(|_| malformed("compare op"))? {
        W::Less => CompareOp::Less,
        W::LessOrEqual => CompareOp::LessOrEqual,
        W::Equal => CompareOp::Equal,
        W::NotEqual => CompareOp::NotEqual,
        W::GreaterOrEqual => CompareOp::GreaterOrEqual,
        W::Greater => CompareOp::Greater,
        W::NoOp => CompareOp::NoOp,
    };
    Ok(Condition {
        family: condition.family,
        qualifier: condition.qualifier,
        op,
        value: condition.value,
        time_range: time_range_from_wire(condition.time_range)?,
    })
}

// ------------------------------------------------------------------ schema

pub fn schema_to_wire(schema: &TableSchema) -> pb::TableSchema {
    pb::TableSchema {
        name: schema.name.clone(),
        families: schema
            .families()
            .iter()
            .map(|f| {
                let (compression, compression_level) = match f.compression {
                    Compression::None => (pb::Compression::None, 0),
                    Compression::Zstd(level) => (pb::Compression::Zstd, level),
                };
                pb::FamilySchema {
                    name: f.name.clone(),
                    max_versions: f.max_versions,
                    ttl_seconds: f.ttl_seconds,
                    compression: compression as i32,
                    compression_level,
                    bloom: (match f.bloom {
                        BloomType::None => pb::BloomType::BloomNone,
                        BloomType::Row => pb::BloomType::BloomRow,
                        BloomType::RowCol => pb::BloomType::BloomRowCol,
                    }) as i32,
                    block_cache: f.block_cache,
                    in_memory: f.in_memory,
                    block_size: f.block_size,
                    min_versions: f.min_versions,
                    keep_deleted: (match f.keep_deleted {
                        KeepDeleted::No => pb::KeepDeleted::No,
                        KeepDeleted::Yes => pb::KeepDeleted::Yes,
                        KeepDeleted::UntilTtl => pb::KeepDeleted::UntilTtl,
                    }) as i32,
                }
            })
            .collect(),
        flush_size: schema.flush_size().map(|b| b as u64),
        compactions_disabled: !schema.compactions_enabled(),
        splits_disabled: *schema.split_rule() == SplitRule::Never,
        split_prefix_length: match schema.split_rule() {
            SplitRule::KeyPrefix(n) => u32::try_from(*n).unwrap_or(u32::MAX),
            _ => 0,
        },
        split_delimiter: match schema.split_rule() {
            SplitRule::Delimiter(d) => d.clone(),
            _ => Bytes::new(),
        },
    }
}

pub fn schema_from_wire(schema: Option<pb::TableSchema>) -> RsResult<TableSchema> {
    let schema = required(schema, "table schema")?;
    let mut families = Vec::with_capacity(schema.families.len());
    for f in schema.families {
        let compression =
            match pb::Compression::try_from(f.compression).map_err(|_| malformed("compression"))? {
                pb::Compression::None => Compression::None,
                pb::Compression::Zstd => Compression::Zstd(f.compression_level),
            };
        let bloom = match pb::BloomType::try_from(f.bloom).map_err(|_| malformed("bloom type"))? {
            pb::BloomType::BloomNone => BloomType::None,
            pb::BloomType::BloomRow => BloomType::Row,
            pb::BloomType::BloomRowCol => BloomType::RowCol,
        };
        let keep_deleted = match pb::KeepDeleted::try_from(f.keep_deleted)
            .map_err(|_| malformed("keep deleted cells"))?
        {
            pb::KeepDeleted::No => KeepDeleted::No,
            pb::KeepDeleted::Yes => KeepDeleted::Yes,
            pb::KeepDeleted::UntilTtl => KeepDeleted::UntilTtl,
        };
        let mut family = FamilySchema::new(f.name)
            .max_versions(f.max_versions)
            .ttl(f.ttl_seconds)
            .min_versions(f.min_versions)
            .keep_deleted(keep_deleted)
            .compression(compression);
        family.bloom = bloom;
        family.block_cache = f.block_cache;
        family.in_memory = f.in_memory;
        family.block_size = f.block_size;
        families.push(family);
    }
    let flush_size = schema
        .flush_size
        .map(|b| usize::try_from(b).map_err(|_| malformed("flush size")))
        .transpose()?;
    let split_rule = if schema.splits_disabled {
        SplitRule::Never
    } else if schema.split_prefix_length > 0 {
        SplitRule::KeyPrefix(
            usize::try_from(schema.split_prefix_length).map_err(|_| malformed("split prefix"))?,
        )
    } else if !schema.split_delimiter.is_empty() {
        SplitRule::Delimiter(schema.split_delimiter)
    } else {
        SplitRule::Anywhere
    };
    Ok(TableSchema::new(schema.name, families)?
        .with_flush_size(flush_size)
        .with_compactions_disabled(schema.compactions_disabled)
        .with_split_rule(split_rule))
}

pub fn descriptor_to_wire(desc: &TabletDescriptor) -> pb::TabletDescriptor {
    pb::TabletDescriptor {
        id: desc.id,
        schema: Some(schema_to_wire(&desc.schema)),
        start_row: desc.start_row.clone(),
        end_row: desc.end_row.clone(),
    }
}

pub fn descriptor_from_wire(desc: Option<pb::TabletDescriptor>) -> RsResult<TabletDescriptor> {
    let desc = required(desc, "tablet descriptor")?;
    Ok(TabletDescriptor {
        id: desc.id,
        schema: schema_from_wire(desc.schema)?,
        start_row: desc.start_row,
        end_row: desc.end_row,
    })
}

pub fn split_to_wire(split: &SplitOutcome) -> pb::SplitReply {
    pb::SplitReply {
        at: split.at.clone(),
        left: Some(descriptor_to_wire(&split.left)),
        right: Some(descriptor_to_wire(&split.right)),
    }
}

pub fn split_from_wire(split: pb::SplitReply) -> RsResult<SplitOutcome> {
    Ok(SplitOutcome {
        at: split.at,
        left: descriptor_from_wire(split.left)?,
        right: descriptor_from_wire(split.right)?,
    })
}

fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

pub fn report_to_wire(report: &[TabletReport]) -> pb::ReportReply {
    pb::ReportReply {
        tablets: report
            .iter()
            .map(|r| pb::TabletReport {
                tablet: r.tablet,
                stats: Some(pb::TabletStats {
                    memtable_bytes: count(r.stats.memtable_bytes),
                    frozen_memtables: count(r.stats.frozen_memtables),
                    file_count: count(r.stats.file_count),
                    file_bytes: r.stats.file_bytes,
                    flushed_seq: r.stats.flushed_seq,
                    last_seq: r.stats.last_seq,
                }),
                reads: r.requests.reads,
                writes: r.requests.writes,
                load_split_row: match &r.load_split {
                    LoadSplit::At(row) => row.clone(),
                    LoadSplit::Unknown | LoadSplit::Concentrated => Bytes::new(),
                },
                load_concentrated: r.load_split == LoadSplit::Concentrated,
            })
            .collect(),
    }
}

pub fn slow_call_to_wire(call: &SlowCall) -> pb::SlowCall {
    pb::SlowCall {
        start_ms: call.start_ms,
        processing_ms: call.processing_ms,
        response_bytes: call.response_bytes,
        client: call.client.clone(),
        method: call.method.clone(),
        details: call.details.clone(),
        param: call.param.clone(),
        user: call.user.clone(),
        multi_gets: call.multi_gets,
        multi_mutations: call.multi_mutations,
        tablet: call.tablet,
        table: call.table.clone(),
        kind: match call.kind {
            SlowKind::Slow => pb::SlowKind::Slow,
            SlowKind::Large => pb::SlowKind::Large,
            SlowKind::Both => pb::SlowKind::Both,
        } as i32,
    }
}

pub fn slow_call_from_wire(call: pb::SlowCall) -> RsResult<SlowCall> {
    let kind = match pb::SlowKind::try_from(call.kind).map_err(|_| malformed("slow call kind"))? {
        pb::SlowKind::Slow => SlowKind::Slow,
        pb::SlowKind::Large => SlowKind::Large,
        pb::SlowKind::Both => SlowKind::Both,
    };
    Ok(SlowCall {
        start_ms: call.start_ms,
        processing_ms: call.processing_ms,
        response_bytes: call.response_bytes,
        client: call.client,
        method: call.method,
        details: call.details,
        param: call.param,
        user: call.user,
        multi_gets: call.multi_gets,
        multi_mutations: call.multi_mutations,
        tablet: call.tablet,
        table: call.table,
        kind,
    })
}

pub fn report_from_wire(report: pb::ReportReply) -> RsResult<Vec<TabletReport>> {
    report
        .tablets
        .into_iter()
        .map(|r| {
            let stats = required(r.stats, "tablet stats")?;
            Ok(TabletReport {
                tablet: r.tablet,
                stats: TabletStats {
                    memtable_bytes: size(stats.memtable_bytes),
                    frozen_memtables: size(stats.frozen_memtables),
                    file_count: size(stats.file_count),
                    file_bytes: stats.file_bytes,
                    flushed_seq: stats.flushed_seq,
                    last_seq: stats.last_seq,
                },
                requests: RequestCounts {
                    reads: r.reads,
                    writes: r.writes,
                },
                // A split row is never empty (the empty row starts the table).
                load_split: if r.load_concentrated {
                    LoadSplit::Concentrated
                } else if r.load_split_row.is_empty() {
                    LoadSplit::Unknown
                } else {
                    LoadSplit::At(r.load_split_row)
                },
            })
        })
        .collect()
}

// ------------------------------------------------------------------ failures

/// How `error` travels: what kind of failure it is, with the fields a caller acts on.
pub fn failure_to_wire(error: &RsError) -> pb::Failure {
    use pb::FailureKind as K;
    use tabula_storage::Error as S;
    let mut failure = pb::Failure {
        kind: K::Other as i32,
        message: error.to_string(),
        ..pb::Failure::default()
    };
    let not_serving = |failure: &mut pb::Failure, tablet: u64| {
        failure.kind = K::NotServing as i32;
        failure.tablet = tablet;
    };
    match error {
        RsError::NotServing { tablet } => not_serving(&mut failure, *tablet),
        RsError::UnknownScanner { scanner } => {
            failure.kind = K::UnknownScanner as i32;
            failure.scanner = *scanner;
        }
        RsError::BadFilter(_) => failure.kind = K::BadFilter as i32,
        RsError::Unreachable { .. } | RsError::Interrupted { .. } => {}
        RsError::Remote { kind, .. } => match kind {
            RemoteFailure::BadFilter => failure.kind = K::BadFilter as i32,
            RemoteFailure::InvalidArgument => failure.kind = K::InvalidArgument as i32,
            RemoteFailure::Other { permanent } => failure.permanent = *permanent,
        },
        RsError::Storage(storage) => match storage {
            S::TabletClosed { tablet }
            | S::TabletNotOpen { tablet }
            | S::RowOutOfRange { tablet } => not_serving(&mut failure, *tablet),
            S::UnknownFamily { table, family } => {
                failure.kind = K::UnknownFamily as i32;
                failure.table = table.clone();
                failure.family = family.clone();
            }
            S::EmptyRowKey
            | S::RowKeyTooLong { .. }
            | S::ValueTooLarge { .. }
            | S::InvalidTimestamp { .. }
            | S::InvalidArgument(_) => failure.kind = K::InvalidArgument as i32,
            other => failure.permanent = other.is_permanent(),
        },
    }
    failure
}

/// The error a caller sees for a failure a remote regionserver reported.
pub fn failure_from_wire(failure: pb::Failure) -> RsError {
    use pb::FailureKind as K;
    let message = failure.message;
    match K::try_from(failure.kind).unwrap_or(K::Other) {
        K::NotServing => RsError::NotServing {
            tablet: failure.tablet,
        },
        K::UnknownScanner => RsError::UnknownScanner {
            scanner: failure.scanner,
        },
        K::BadFilter => RsError::Remote {
            kind: RemoteFailure::BadFilter,
            message,
        },
        K::UnknownFamily => RsError::Storage(tabula_storage::Error::UnknownFamily {
            table: failure.table,
            family: failure.family,
        }),
        K::InvalidArgument => RsError::Remote {
            kind: RemoteFailure::InvalidArgument,
            message,
        },
        K::Other => RsError::Remote {
            kind: RemoteFailure::Other {
                permanent: failure.permanent,
            },
            message,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn where_a_split_parts_the_load_round_trips() {
        for load_split in [
            LoadSplit::Unknown,
            LoadSplit::Concentrated,
            LoadSplit::At(Bytes::from_static(b"row0042")),
        ] {
            let report = vec![TabletReport {
                tablet: 9,
                stats: TabletStats::default(),
                requests: RequestCounts {
                    reads: 3,
                    writes: 4,
                },
                load_split: load_split.clone(),
            }];
            let back = report_from_wire(report_to_wire(&report)).unwrap();
            assert_eq!(back.len(), 1);
            assert_eq!(back[0].load_split, load_split);
            assert_eq!(back[0].requests, report[0].requests);
        }
    }

    #[test]
    fn every_durability_round_trips_and_an_unknown_one_is_refused() {
        for d in [
            Durability::Fsync,
            Durability::Sync,
            Durability::Async,
            Durability::Skip,
        ] {
            assert_eq!(durability_from_wire(durability_to_wire(d)).unwrap(), d);
        }
        assert!(durability_from_wire(99).is_err());
    }

    #[test]
    fn a_mutation_round_trips_and_an_unknown_kind_is_refused() {
        let m = RowMutation::new(Bytes::from_static(b"r")).put(
            &b"f"[..],
            &b"q"[..],
            7,
            Bytes::from_static(b"v"),
        );
        let wire = mutation_to_wire(&m);
        assert_eq!(mutation_from_wire(Some(wire.clone())).unwrap(), m);
        let mut bad = wire;
        bad.mutations[0].kind = 99;
        assert!(mutation_from_wire(Some(bad)).is_err());
        assert!(mutation_from_wire(None).is_err());
    }

    #[test]
    fn schemas_round_trip_and_invalid_ones_are_refused() {
        let mut a = FamilySchema::new(&b"a"[..])
            .max_versions(5)
            .ttl(Some(60))
            .min_versions(2)
            .keep_deleted(KeepDeleted::Yes);
        a.bloom = BloomType::RowCol;
        a.in_memory = true;
        a.block_size = Some(16 << 10);
        let z = FamilySchema::new(&b"z"[..]).compression(Compression::Zstd(3));
        let schema = TableSchema::new("t", vec![a, z])
            .unwrap()
            .with_flush_size(Some(8 << 20))
            .with_compactions_disabled(true);
        for rule in [
            SplitRule::Anywhere,
            SplitRule::Never,
            SplitRule::KeyPrefix(4),
            SplitRule::Delimiter(Bytes::from_static(b"|")),
        ] {
            let schema = schema.clone().with_split_rule(rule);
            assert_eq!(
                schema_from_wire(Some(schema_to_wire(&schema))).unwrap(),
                schema
            );
        }
        let wire = schema_to_wire(&schema);
        assert_eq!(schema_from_wire(Some(wire.clone())).unwrap(), schema);
        let mut bad = wire.clone();
        bad.families[0].bloom = 7;
        assert!(schema_from_wire(Some(bad)).is_err());
        let mut twice = wire;
        twice.families[1].name = twice.families[0].name.clone();
        assert!(schema_from_wire(Some(twice)).is_err(), "duplicate families");
        assert!(descriptor_from_wire(Some(pb::TabletDescriptor::default())).is_err());
    }

    #[test]
    fn failures_keep_what_callers_act_on() {
        let not_serving = RsError::Storage(tabula_storage::Error::TabletClosed { tablet: 9 });
        assert!(matches!(
            failure_from_wire(failure_to_wire(&not_serving)),
            RsError::NotServing { tablet: 9 }
        ));
        let family = RsError::Storage(tabula_storage::Error::UnknownFamily {
            table: "t".into(),
            family: "x".into(),
        });
        let back = failure_from_wire(failure_to_wire(&family));
        assert_eq!(back.to_string(), family.to_string());
        let invalid = RsError::Storage(tabula_storage::Error::EmptyRowKey);
        assert!(matches!(
            failure_from_wire(failure_to_wire(&invalid)),
            RsError::Remote { kind: RemoteFailure::InvalidArgument, message } if message == invalid.to_string()
        ));
        let unknown_kind = pb::Failure {
            kind: 42,
            message: "m".into(),
            ..pb::Failure::default()
        };
        assert!(matches!(
            failure_from_wire(unknown_kind),
            RsError::Remote {
                kind: RemoteFailure::Other { permanent: false },
                ..
            }
        ));
    }
}
