//! The catalog: how tablet locations are stored in the root and METADATA tablets.
//!
//! Owns: the row format of the two catalog levels and the lookups over them.
//! * The root tablet (one tablet, never split) lists the METADATA tablets.
//! * The METADATA table (`hbase:meta`) lists the tablets of every user table.
//!
//! Both are keyed by `(table, end row)`: `table 0x00 end_row`, or `table 0x01` for a
//! table's last tablet (no end row), so the tablet holding row R of table T is the
//! first catalog row at or after `T 0x00 R 0x00`. Table names never contain bytes
//! below 0x20, which keeps tables apart. Each row has family `info` with columns
//! `start`, `end`, `id` (u64 big-endian) and `server`.
//!
//! Must not: decide assignments (the coordinator) or cache locations (the gateway's
//! router does, on top of these lookups).

use std::sync::atomic::{AtomicI64, Ordering};

use std::sync::Arc;

use bytes::Bytes;
use tabula_regionserver::{ReadSpec, RsError, ScanSpec, TabletService};
use tabula_storage::tablet::RowResult;
use tabula_storage::{FamilySchema, Mutation, RowMutation, TableSchema};

use crate::tables::TableDescriptor;

/// Name of the METADATA table.
pub const META_TABLE: &str = "hbase:meta";
/// Name used for the root tablet's table.
pub const ROOT_TABLE: &str = "hbase:root";
/// The root tablet's id.
pub const ROOT_TABLET_ID: u64 = 1;
/// The first METADATA tablet's id.
pub const FIRST_META_TABLET_ID: u64 = 2;
/// First id handed to user tablets.
pub const FIRST_USER_TABLET_ID: u64 = 16;
/// The catalog family.
pub const INFO: &[u8] = b"info";

const COL_START: &[u8] = b"start";
const COL_END: &[u8] = b"end";
const COL_ID: &[u8] = b"id";
const COL_SERVER: &[u8] = b"server";

/// Where one tablet is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TabletLocation {
    pub table: Bytes,
    pub start_row: Bytes,
    /// Empty = the table's last tablet.
    pub end_row: Bytes,
    pub tablet_id: u64,
    /// Name of the regionserver serving it; empty when unassigned.
    pub server: String,
}

impl TabletLocation {
    /// True when `row` falls inside this tablet.
    pub fn contains(&self, row: &[u8]) -> bool {
        row >= self.start_row.as_ref() && (self.end_row.is_empty() || row < self.end_row.as_ref())
    }
}

/// Why a catalog operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("catalog row is malformed: {0}")]
    Malformed(String),
    #[error("no tablet of table {table} holds row {row:?}")]
    NoTablet { table: String, row: Vec<u8> },
    #[error("catalog tablet {tablet} is unreachable: {source}")]
    Rs {
        tablet: u64,
        #[source]
        source: RsError,
    },
    #[error("regionserver {0} is unknown")]
    UnknownServer(String),
}

/// Finds a regionserver by name (`None`: not known to the caller).
pub type ServerLookup<'a> = dyn Fn(&str) -> Option<Arc<dyn TabletService>> + 'a;

/// Result type of catalog calls.
pub type CatalogResult<T> = std::result::Result<T, CatalogError>;

/// The schema of catalog tablets (root and METADATA).
pub fn catalog_schema(name: &str) -> TableSchema {
    // A catalog row has one version per column; nothing else lives here.
    let info = FamilySchema::new(Bytes::from_static(INFO)).max_versions(1);
    TableSchema::new(name, vec![info]).unwrap_or_default()
}

/// The catalog row key of a tablet of `table` ending at `end_row`.
pub fn row_key(table: &[u8], end_row: &[u8]) -> Bytes {
    let mut k = Vec::with_capacity(table.len() + end_row.len() + 1);
    k.extend_from_slice(table);
    if end_row.is_empty() {
        k.push(0x01);
    } else {
        k.push(0x00);
        k.extend_from_slice(end_row);
    }
    Bytes::from(k)
}

/// The catalog key to start searching from for `row` of `table`.
pub fn search_key(table: &[u8], row: &[u8]) -> Bytes {
    let mut k = Vec::with_capacity(table.len() + row.len() + 2);
    k.extend_from_slice(table);
    k.push(0x00);
    k.extend_from_slice(row);
    k.push(0x00);
    Bytes::from(k)
}

/// First and stop keys of every catalog row of `table`.
pub fn table_range(table: &[u8]) -> (Bytes, Bytes) {
    let mut start = table.to_vec();
    start.push(0x00);
    let mut stop = table.to_vec();
    stop.push(0x02);
    (Bytes::from(start), Bytes::from(stop))
}

/// Timestamps for catalog writes: the clock's, but each after the one before, so a
/// tablet's new row is never masked by the delete of an earlier row with the same
/// key written in the same millisecond (a truncated table's last tablet has the
/// same key, the table and an empty end row, before and after).
#[derive(Debug, Default)]
pub struct CatalogClock {
    last: AtomicI64,
}

impl CatalogClock {
    /// The timestamp of the next catalog write when the clock reads `now_ms`.
    pub fn next(&self, now_ms: i64) -> i64 {
        let next = |last: i64| now_ms.max(last.saturating_add(1));
        let previous = self
            .last
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |last| Some(next(last)))
            .unwrap_or(now_ms);
        next(previous)
    }
}

/// The mutation writing a tablet's catalog row, its cells at `timestamp`.
pub fn location_mutation(loc: &TabletLocation, timestamp: i64) -> RowMutation {
    let put = |q: &'static [u8], v: Bytes| Mutation::Put {
        family: Bytes::from_static(INFO),
        qualifier: Bytes::from_static(q),
        timestamp,
        value: v,
    };
    RowMutation {
        row: row_key(&loc.table, &loc.end_row),
        mutations: vec![
            put(COL_START, loc.start_row.clone()),
            put(COL_END, loc.end_row.clone()),
            put(COL_ID, Bytes::copy_from_slice(&loc.tablet_id.to_be_bytes())),
            put(COL_SERVER, Bytes::from(loc.server.clone().into_bytes())),
        ],
    }
}

/// The mutation deleting a tablet's catalog row: every version up to `timestamp`.
pub fn delete_mutation(table: &[u8], end_row: &[u8], timestamp: i64) -> RowMutation {
    RowMutation {
        row: row_key(table, end_row),
        mutations: vec![Mutation::DeleteRow { timestamp }],
    }
}

/// Decodes a catalog row.
pub fn parse_row(row: &RowResult) -> CatalogResult<TabletLocation> {
    let key = row.row();
    let sep = key
        .iter()
        .position(|&b| b == 0x00 || b == 0x01)
        .ok_or_else(|| CatalogError::Malformed("row key has no table separator".into()))?;
    let table = key.slice(..sep);
    let mut start = None;
    let mut end = None;
    let mut id = None;
    let mut server = String::new();
    for c in &row.cells {
        match c.qualifier.as_ref() {
            COL_START => start = Some(c.value.clone()),
            COL_END => end = Some(c.value.clone()),
            COL_ID => {
                let b: [u8; 8] = c
                    .value
                    .as_ref()
                    .try_into()
                    .map_err(|_| CatalogError::Malformed("tablet id is not 8 bytes".into()))?;
                id = Some(u64::from_be_bytes(b));
            }
            COL_SERVER => server = String::from_utf8_lossy(&c.value).into_owned(),
            _ => {}
        }
    }
    let missing = |what: &str| CatalogError::Malformed(format!("catalog row lacks {what}"));
    Ok(TabletLocation {
        table,
        start_row: start.ok_or_else(|| missing("start"))?,
        end_row: end.ok_or_else(|| missing("end"))?,
        tablet_id: id.ok_or_else(|| missing("id"))?,
        server,
    })
}

/// Reads catalog rows of one catalog tablet in `[start, stop)`, at most `limit`.
pub fn scan_catalog(
    service: &dyn TabletService,
    tablet: u64,
    start: &Bytes,
    stop: &Bytes,
    limit: usize,
) -> CatalogResult<Vec<TabletLocation>> {
    let rs = |source| CatalogError::Rs { tablet, source };
    let spec = ScanSpec {
        start_row: start.clone(),
        stop_row: stop.clone(),
        reverse: false,
        read: ReadSpec::default(),
        batch: 0,
    };
    let id = service.open_scanner(tablet, &spec).map_err(rs)?;
    let mut out = Vec::new();
    let result = (|| {
        loop {
            let want = limit.saturating_sub(out.len()).min(1024);
            if want == 0 {
                break;
            }
            let batch = service.scanner_next(id, want).map_err(rs)?;
            for r in &batch.rows {
                out.push(parse_row(r)?);
            }
            if batch.exhausted {
                break;
            }
        }
        Ok(())
    })();
    service.close_scanner(id);
    result.map(|()| out)
}

fn server_of(server: &ServerLookup<'_>, name: &str) -> CatalogResult<Arc<dyn TabletService>> {
    server(name).ok_or_else(|| CatalogError::UnknownServer(name.into()))
}

/// Every METADATA tablet, as the root tablet at `root` lists them.
pub fn meta_tablets(
    root: &TabletLocation,
    server: &ServerLookup<'_>,
) -> CatalogResult<Vec<TabletLocation>> {
    let svc = server_of(server, &root.server)?;
    let (start, stop) = table_range(META_TABLE.as_bytes());
    scan_catalog(svc.as_ref(), ROOT_TABLET_ID, &start, &stop, usize::MAX)
}

/// Every tablet of user table `table` (canonical name), in row order, read from
/// the METADATA tablets the root tablet at `root` lists.
pub fn table_tablets(
    root: &TabletLocation,
    server: &ServerLookup<'_>,
    table: &[u8],
) -> CatalogResult<Vec<TabletLocation>> {
    let (start, stop) = table_range(table);
    let mut out = Vec::new();
    for meta in meta_tablets(root, server)? {
        // Only METADATA tablets overlapping the table's key range.
        if !meta.end_row.is_empty() && meta.end_row <= start {
            continue;
        }
        if meta.start_row >= stop {
            continue;
        }
        let svc = server_of(server, &meta.server)?;
        out.extend(scan_catalog(
            svc.as_ref(),
            meta.tablet_id,
            &start,
            &stop,
            usize::MAX,
        )?);
    }
    Ok(out)
}

/// The system tables (the catalog), described like user tables.
pub fn system_tables() -> Vec<TableDescriptor> {
    [META_TABLE]
        .iter()
        .map(|n| TableDescriptor {
            name: Bytes::from_static(n.as_bytes()),
            families: catalog_schema(n).families().to_vec(),
            enabled: true,
            created_ms: 0,
            durability: None,
            attributes: Default::default(),
        })
        .collect()
}

#[cfg(test)]
mod clock_tests {
    use super::*;

    #[test]
    fn catalog_timestamps_follow_the_clock_and_never_repeat() {
        let clock = CatalogClock::default();
        assert_eq!(clock.next(5), 5);
        assert_eq!(clock.next(5), 6, "same millisecond: one after the last");
        assert_eq!(clock.next(5), 7);
        assert_eq!(clock.next(100), 100, "the clock moved on");
        assert_eq!(clock.next(50), 101, "the clock went back: still increasing");
    }
}
