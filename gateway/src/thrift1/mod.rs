//! The Thrift1 `Hbase` service: HBase's `hbase thrift` API translated into
//! [`Backend`] calls.
//!
//! Owns: [`Thrift1Handler`], which implements the generated
//! [`tabula_thrift::hbase::HbaseSyncHandler`]. Each group of calls lives in its own
//! module: [`reads`] (get*, getRow*, getRows*, getRowOrBefore), [`writes`]
//! (mutateRow*, deleteAll*, atomicIncrement, increment*, append, checkAndPut),
//! [`admin`] (tables, regions, compactions, grants), [`scanner_calls`] (scannerOpen*,
//! scannerGet*, scannerClose) over the registry in [`scanners`]; [`columns`] parses
//! column strings, [`convert`] maps Thrift structs, [`errors`] maps failures onto
//! HBase's exceptions, and [`service`] is the trait implementation tying them to
//! method names.
//! Must not: touch sockets or wire formats (the server and the generated processor
//! do), or reach past [`Backend`] into the cluster.
//!
//! Semantic choices where HBase leaves room or Tabula differs:
//! - Each row's mutations in mutateRow(s)(Ts) are applied as one atomic
//!   RowMutation (HBase issues a Delete and a Put separately). Deletes cover versions
//!   `<= ts` and puts are written at `ts`, so a delete and a put of the same column in
//!   one call leave the column deleted, also at server time (where both get the same
//!   time). The row is written without the commit log only when every one of its
//!   mutations says `writeToWAL = false`. A put to a bare family is skipped by
//!   mutateRow(Ts) and is an INTERNAL_ERROR in mutateRows(Ts), as in HBase.
//!   mutateRows(Ts) validates every row before writing any; a failing row does not
//!   stop the others (as HBase's batch), and the first failure is reported.
//! - The generated decoder cannot tell an absent `Mutation.writeToWAL` from `false`;
//!   every real client (happybase, Java) always sends it, so `false` is honoured.
//! - atomicIncrement by 0 returns the current value (0 when the cell is missing)
//!   and writes nothing (the behaviour of HBase 0.98 to 2.0, HBASE-10252), so
//!   happybase's `counter_get` has no side effect.
//! - createTable: an absent `maxVersions` decodes as 0 and means HBase's default 3;
//!   any compression other than NONE is stored as zstd and reported back by the
//!   name the client gave.
//!   majorCompact runs a major compaction (HBase's handler runs a minor one).
//! - Row keys over 65,536 bytes and values over the configured maximum are refused
//!   with an IOError (DoNotRetryIOException) naming the limit.
//! - Scanners: ids are i32, sequential from 0 and shared by all connections; each
//!   scanner is closed after its lease (default 60 s) without a call, and when the
//!   connection that opened it closes. scannerGetList returns at most
//!   [`Thrift1Options::max_rows_per_call`] results per call (short batches are
//!   allowed; only `[]` means the end). TScan.caching and cacheBlocks are accepted and
//!   have no effect; a filterString that is set must hold a filter (an empty one is an
//!   INTERNAL_ERROR, as HBase's parser refuses it).
//! - With [`Thrift1Options::coalesce_increments`] (HBase's
//!   `hbase.regionserver.thrift.coalesceIncrement`), increment and incrementRows
//!   answer once queued ([`coalescer`]); the table and family are checked first, so
//!   those errors still reach the caller.

pub mod admin;
pub mod coalescer;
pub mod columns;
pub mod convert;
pub mod errors;
pub mod reads;
pub mod scanner_calls;
pub mod scanners;
pub mod service;
pub mod writes;

use std::sync::Arc;
use std::time::Duration;

use tabula_storage::{TimeRange, MAX_ROW_KEY_LEN};

use crate::backend::Backend;
use crate::server::ConnectionObserver;
use coalescer::IncrementCoalescer;
use errors::{Thrift1Error, Thrift1Result};
use scanners::{ScannerConnectionObserver, ScannerRegistry};

/// Calls whose synced write the connection server may acknowledge from its
/// acknowledger thread once the commit log has synced (`server::ServerOptions::
/// deferrable_calls`): each ends with exactly one single-row write (a mutation,
/// check-and-put, increment or append) and reads nothing after it, and declares
/// IOError as its field 1 (what answers a failed sync). Calls writing several rows
/// wait for the log themselves.
pub const DEFERRABLE_CALLS: &[&str] = &[
    "mutateRow",
    "mutateRowTs",
    "deleteAll",
    "deleteAllTs",
    "deleteAllRow",
    "deleteAllRowTs",
    "atomicIncrement",
    "increment",
    "append",
    "checkAndPut",
];

/// Calls quick enough to run on the connection server's event loops besides the
/// single-row writes of [`DEFERRABLE_CALLS`] (`server::ServerOptions::
/// loop_calls`): gets of one row or a few named rows. Scanners, batches of writes
/// and table administration run on a connection thread of their own.
pub const LOOP_CALLS: &[&str] = &[
    "get",
    "getVer",
    "getVerTs",
    "getRow",
    "getRowWithColumns",
    "getRowTs",
    "getRowWithColumnsTs",
    "getRows",
    "getRowsWithColumns",
    "getRowsTs",
    "getRowsWithColumnsTs",
];

/// Default idle time after which a scanner is closed.
pub const DEFAULT_SCANNER_LEASE: Duration = Duration::from_secs(60);
/// Default bound on open scanners.
pub const DEFAULT_MAX_OPEN_SCANNERS: usize = 100_000;
/// Default bound on the results one scannerGetList returns.
pub const DEFAULT_MAX_ROWS_PER_CALL: usize = 10_000;

/// Tunables of the Thrift1 handler.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thrift1Options {
    /// Scanners idle this long are closed. Default 60 s.
    pub scanner_lease: Duration,
    /// Scanners open at once; scannerOpen* beyond it fails with an IOError naming the
    /// limit. Default 100,000.
    pub max_open_scanners: usize,
    /// Results returned by one scannerGetList at most. Default 10,000.
    pub max_rows_per_call: usize,
    /// Close a connection's scanners when it closes. Default true.
    pub close_scanners_with_connection: bool,
    /// Queue increment and incrementRows and apply them summed per cell on a
    /// worker thread ([`coalescer`]). Default false.
    pub coalesce_increments: bool,
}

impl Default for Thrift1Options {
    fn default() -> Self {
        Thrift1Options {
            scanner_lease: DEFAULT_SCANNER_LEASE,
            max_open_scanners: DEFAULT_MAX_OPEN_SCANNERS,
            max_rows_per_call: DEFAULT_MAX_ROWS_PER_CALL,
            close_scanners_with_connection: true,
            coalesce_increments: false,
        }
    }
}

/// The Thrift1 `Hbase` service over a [`Backend`].
pub struct Thrift1Handler {
    backend: Arc<dyn Backend>,
    scanners: Arc<ScannerRegistry>,
    options: Thrift1Options,
    /// Set with [`Thrift1Options::coalesce_increments`].
    coalescer: Option<Arc<IncrementCoalescer>>,
}

impl Thrift1Handler {
    /// A handler with default options and the given scanner lease.
    pub fn new(backend: Arc<dyn Backend>, scanner_lease: Duration) -> Self {
        Self::with_options(
            backend,
            Thrift1Options {
                scanner_lease,
                ..Thrift1Options::default()
            },
        )
    }

    /// A handler with `options`.
    pub fn with_options(backend: Arc<dyn Backend>, options: Thrift1Options) -> Self {
        let scanners = ScannerRegistry::start(options.scanner_lease, options.max_open_scanners);
        let coalescer = options
            .coalesce_increments
            .then(|| IncrementCoalescer::start(Arc::clone(&backend)));
        Thrift1Handler {
            backend,
            scanners,
            options,
            coalescer,
        }
    }

    /// The observer the server must be given so that a connection's scanners are
    /// closed when it closes.
    pub fn connection_observer(&self) -> Arc<dyn ConnectionObserver> {
        Arc::new(ScannerConnectionObserver::new(&self.scanners))
    }

    /// The scanner registry (e.g. for a gauge of open scanners).
    pub fn scanners(&self) -> &Arc<ScannerRegistry> {
        &self.scanners
    }

    /// The increment coalescer, when increments are coalesced (to drain it at
    /// shutdown).
    pub fn coalescer(&self) -> Option<&Arc<IncrementCoalescer>> {
        self.coalescer.as_ref()
    }

    /// The options in force.
    pub fn options(&self) -> &Thrift1Options {
        &self.options
    }
}

/// Refuses row keys longer than the engine accepts, naming the limit.
pub(crate) fn check_row_len(row: &[u8]) -> Thrift1Result<()> {
    if row.len() > MAX_ROW_KEY_LEN {
        return Err(Thrift1Error::DoNotRetry(format!(
            "row key is {} bytes, longer than the maximum of {MAX_ROW_KEY_LEN} bytes",
            row.len()
        )));
    }
    Ok(())
}

/// The "as of `ts`" range of the *Ts reads, `[0, ts)`; HBase fails a negative
/// timestamp with an unchecked exception (INTERNAL_ERROR).
pub(crate) fn as_of(ts: i64) -> Thrift1Result<TimeRange> {
    if ts < 0 {
        return Err(Thrift1Error::Internal(format!(
            "timestamp {ts} is negative; timestamps are milliseconds since the epoch"
        )));
    }
    Ok(TimeRange::before(ts))
}
