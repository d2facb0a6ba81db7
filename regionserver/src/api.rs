//! The regionserver's interface: the calls a gateway or coordinator makes on it.
//!
//! Owns: [`TabletService`] and the request/response types it uses. In one process the
//! trait is implemented by [`crate::RegionServer`] and called directly; across
//! processes the same calls travel over RPC ([`crate::rpc`]). Everything here is
//! plain data (no closures or trait objects) so it can be serialized.
//! Must not: contain routing (which tablet holds a row is the caller's business).

use bytes::Bytes;
use tabula_storage::tablet::{
    Condition, LoadSplit, RequestCounts, RowResult, TabletDescriptor, TabletStats,
};
use tabula_storage::{Cell, ColumnSelector, Durability, RowMutation, TimeRange};

use crate::filter::FilterError;
use crate::slow_log::SlowCall;

/// What a read asks for (the serializable form of the engine's ReadOptions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSpec {
    /// Columns and families in request order; empty = all families.
    pub columns: Vec<ColumnSelector>,
    pub time_range: TimeRange,
    /// Per-family time ranges (Thrift2 colFamTimeRangeMap).
    pub family_time_ranges: Vec<(Bytes, TimeRange)>,
    /// Versions per column (0 = 1).
    pub max_versions: u32,
    /// A filter in the HBase filter language.
    pub filter: Option<Bytes>,
}

impl Default for ReadSpec {
    fn default() -> Self {
        ReadSpec {
            columns: Vec::new(),
            time_range: TimeRange::ALL,
            family_time_ranges: Vec::new(),
            max_versions: 1,
            filter: None,
        }
    }
}

/// A scan of one tablet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScanSpec {
    /// First row (inclusive; the highest row for reverse scans); empty = unbounded.
    pub start_row: Bytes,
    /// Stop row (exclusive); empty = unbounded.
    pub stop_row: Bytes,
    pub reverse: bool,
    pub read: ReadSpec,
    /// Maximum cells per result (0 = whole rows).
    pub batch: u32,
}

/// One call's worth of scan results.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScanBatch {
    pub rows: Vec<RowResult>,
    /// The tablet has no more rows for this scan.
    pub exhausted: bool,
    /// The filter ended the scan: the caller must not continue in later tablets.
    pub ended_by_filter: bool,
}

/// Why a regionserver call failed.
#[derive(Debug, thiserror::Error)]
pub enum RsError {
    /// The tablet is not open here (moved, split, closed): refresh the location.
    #[error("tablet {tablet} is not served by this regionserver")]
    NotServing { tablet: u64 },
    /// The scanner id is unknown or its lease expired.
    #[error("scanner {scanner} does not exist or its lease expired")]
    UnknownScanner { scanner: u64 },
    /// The filter string did not parse or build.
    #[error("{0}")]
    BadFilter(#[from] FilterError),
    /// An error from the storage engine.
    #[error(transparent)]
    Storage(#[from] tabula_storage::Error),
    /// A regionserver in another process could not be reached at all (nothing
    /// listens at its address: it is gone): the request was not delivered, so the
    /// caller looks the tablet up again, as for [`RsError::NotServing`].
    #[error("regionserver {server} cannot be reached: {message}")]
    Unreachable { server: String, message: String },
    /// The connection to a regionserver in another process broke while a call was
    /// on it (the server died or the network dropped it): the request may or may
    /// not have been carried out. A caller may send it again only where doing so
    /// twice is harmless ([`RsError::is_interrupted`]).
    #[error("call to regionserver {server} was cut off, outcome unknown: {message}")]
    Interrupted { server: String, message: String },
    /// A failure a regionserver in another process reported (its message as it
    /// said it), or a call that did not reach it.
    #[error("{message}")]
    Remote {
        kind: RemoteFailure,
        message: String,
    },
}

/// What kind of failure a remote regionserver reported, where the caller treats
/// kinds differently (the others travel as their own [`RsError`] variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteFailure {
    /// The filter string did not parse or build.
    BadFilter,
    /// The request broke a rule (row key, value size, timestamp...).
    InvalidArgument,
    /// Anything else; `permanent` when retrying cannot help.
    Other { permanent: bool },
}

impl RsError {
    /// True when the caller should look the tablet up again and retry.
    pub fn is_not_serving(&self) -> bool {
        matches!(
            self,
            RsError::NotServing { .. }
                | RsError::Unreachable { .. }
                | RsError::Storage(tabula_storage::Error::TabletClosed { .. })
                | RsError::Storage(tabula_storage::Error::TabletNotOpen { .. })
                | RsError::Storage(tabula_storage::Error::RowOutOfRange { .. })
        )
    }

    /// True when the call was cut off in transit: the caller may look the tablet up
    /// again and resend it if the call is a read, or a write that may be applied
    /// twice (what HBase's client resends after a lost connection: puts and
    /// deletes, not increments, appends or check-and-mutates).
    pub fn is_interrupted(&self) -> bool {
        matches!(self, RsError::Interrupted { .. })
    }

    /// A copy of a failure that concerns a whole call (the connection's fate), to
    /// hand to each part of a call that carried several; anything else keeps its
    /// message as an unknown-outcome failure.
    pub fn copy_for_part(&self) -> RsError {
        match self {
            RsError::Unreachable { server, message } => RsError::Unreachable {
                server: server.clone(),
                message: message.clone(),
            },
            RsError::Interrupted { server, message } => RsError::Interrupted {
                server: server.clone(),
                message: message.clone(),
            },
            RsError::NotServing { tablet } => RsError::NotServing { tablet: *tablet },
            RsError::Remote { kind, message } => RsError::Remote {
                kind: *kind,
                message: message.clone(),
            },
            other => RsError::Remote {
                kind: RemoteFailure::Other { permanent: false },
                message: other.to_string(),
            },
        }
    }
}

/// Result type of regionserver calls.
pub type RsResult<T> = std::result::Result<T, RsError>;

/// Where a split happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitOutcome {
    pub at: Bytes,
    pub left: TabletDescriptor,
    pub right: TabletDescriptor,
}

/// A tablet's counters as reported to the coordinator.
#[derive(Debug, Clone)]
pub struct TabletReport {
    pub tablet: u64,
    pub stats: TabletStats,
    /// Requests served since the tablet was opened on this server: the
    /// coordinator's balancer turns two readings into a request rate.
    pub requests: RequestCounts,
    /// Where a split would part those requests (for splits for load).
    pub load_split: LoadSplit,
}

/// The calls a regionserver serves.
pub trait TabletService: Send + Sync {
    /// This server's name (host:port or a name given at start).
    fn name(&self) -> String;

    /// When this server started, ms since the epoch (HBase's start code: the
    /// same name with another start code is another life of the server).
    fn start_code(&self) -> i64;

    /// Reads one row.
    fn get(&self, tablet: u64, row: &Bytes, spec: &ReadSpec) -> RsResult<Vec<Cell>>;

    /// Applies a RowMutation atomically.
    fn mutate(&self, tablet: u64, mutation: &RowMutation, durability: Durability) -> RsResult<()>;

    /// Applies batches of RowMutations to tablets of this server, each row
    /// atomically on its own, with one commit-log wait for all of them. Per
    /// tablet: an error when it is not reached (not served here, closed),
    /// otherwise one result per row.
    fn mutate_batch(
        &self,
        batches: &[(u64, Vec<&RowMutation>)],
        durability: Durability,
    ) -> Vec<RsResult<Vec<RsResult<()>>>>;

    /// Applies `mutation` if `condition` holds; returns whether it did.
    fn check_and_mutate(
        &self,
        tablet: u64,
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> RsResult<bool>;

    /// Adds to 8-byte counters; returns the new cells.
    fn increment(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>>;

    /// Appends to values; returns the new cells.
    fn append(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>>;

    /// Opens a scanner on a tablet; returns its id (leased, renewed by every call).
    fn open_scanner(&self, tablet: u64, spec: &ScanSpec) -> RsResult<u64>;

    /// Returns up to `max_rows` results of a scanner.
    fn scanner_next(&self, scanner: u64, max_rows: usize) -> RsResult<ScanBatch>;

    /// Closes a scanner (unknown ids are ignored).
    fn close_scanner(&self, scanner: u64);

    /// Opens (loads) a tablet.
    fn open_tablet(&self, desc: &TabletDescriptor) -> RsResult<()>;

    /// Flushes and unloads a tablet.
    fn close_tablet(&self, tablet: u64) -> RsResult<()>;

    /// Deletes a closed tablet's files (its table was dropped or truncated).
    fn destroy_tablet(&self, tablet: u64) -> RsResult<()>;

    /// Splits a tablet at `at` (or its midpoint) into two new tablets, opened here.
    fn split_tablet(
        &self,
        tablet: u64,
        at: Option<Bytes>,
        left: u64,
        right: u64,
    ) -> RsResult<SplitOutcome>;

    /// Flushes a tablet's memtable.
    fn flush_tablet(&self, tablet: u64) -> RsResult<()>;

    /// Compacts a tablet (major: drop dead data).
    fn compact_tablet(&self, tablet: u64, major: bool) -> RsResult<()>;

    /// Replaces a tablet's schema (families added, changed or removed).
    fn update_schema(&self, tablet: u64, schema: &tabula_storage::TableSchema) -> RsResult<()>;

    /// Counters of every open tablet.
    fn report(&self) -> Vec<TabletReport>;

    /// Deletes the directories of tablets not in `live` once no live tablet's files
    /// lie in them (split parents whose children rewrote their halves, what dropped
    /// tables left). Returns how many went. The caller must hold back splits and
    /// table creation meanwhile: their new tablets are not yet in `live`.
    fn collect_garbage(&self, live: &std::collections::HashSet<u64>) -> RsResult<usize>;

    /// Splits the commit log of the dead regionserver `server` (on the storage the
    /// servers share) into recovered edits for its tablets and removes it, so the
    /// tablets can be opened here or elsewhere with every acknowledged write. Does
    /// nothing when that server left no log, or when this server shares no storage
    /// with others. The caller must make sure `server` is dead and stays so.
    fn recover_log_of(&self, server: &str) -> RsResult<()>;

    /// The calls the slow-call log holds, newest first (none when it is not kept).
    fn slow_calls(&self) -> RsResult<Vec<SlowCall>>;

    /// Forgets the slow-call log's calls; false when it is not kept.
    fn clear_slow_calls(&self) -> RsResult<bool>;
}
