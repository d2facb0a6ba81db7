//! The Thrift2 `THBaseService`: HBase's `hbase thrift2` API translated into
//! [`Backend`] calls.
//!
//! Owns: [`Thrift2Handler`], which implements the generated
//! [`tabula_thrift::hbase2::THBaseServiceSyncHandler`]. Each group of calls lives in
//! its own module: [`data`] (get, exists, put, delete, check-and-*, increment,
//! append, mutateRow and their *Multiple forms), [`scans`] (openScanner,
//! getScannerRows, closeScanner, getScannerResults), [`admin`] (tables, families,
//! namespaces, regions, grants, cluster identity), [`slow_log`] (the slow-call
//! logs); [`convert`] maps Thrift2 structs
//! onto engine types and back, [`errors`] maps failures onto TIOError,
//! TIllegalArgument or TApplicationException, and [`service`] ties them to method
//! names.
//! Must not: touch sockets or wire formats, or reach past [`Backend`].
//!
//! Semantic choices where HBase leaves room or Tabula differs:
//! - Table names in data calls are `ns:table` (or `table` for the default
//!   namespace); TTableName with no or `default` namespace names the same table, so
//!   Thrift1 and Thrift2 see the same tables.
//! - TDurability: SKIP_WAL writes without the commit log, ASYNC_WAL logs without
//!   waiting, SYNC_WAL waits for the group commit's fsync (or, with the server's
//!   `log_fsync` off, its write to the OS), FSYNC_WAL always for the fsync. A write
//!   naming none (unset or USE_DEFAULT) gets its table's durability
//!   (TTableDescriptor.durability, set by createTable and modifyTable and reported
//!   by getTableDescriptor; USE_DEFAULT there means SYNC_WAL); a TRowMutations
//!   gets the strongest of its mutations'.
//! - TScan.filterBytes and TGet.filterBytes (filters as HBase's Java client
//!   serializes them) are translated into the filter language ([`filter_bytes`]) and
//!   win over filterString, as in HBase; what the filter language cannot say (a
//!   ColumnPaginationFilter column offset, NO_OP, the decimal and component
//!   comparators) is a TIOError naming it. filterString runs
//!   on the same engine as Thrift1; a bad one is an INTERNAL_ERROR naming the
//!   problem, as HBase's parser throws an unchecked exception.
//! - deleteMultiple applies each delete on its own and returns the ones that failed
//!   for a reason of their own row (unknown family, bad timestamp); a table-level
//!   failure (missing or disabled table) is a TIOError.
//! - A put with no columns, an increment or append with no columns, and a mutation
//!   of mutateRow/checkAnd* whose row differs from the call's row fail with a
//!   TIOError naming the problem.
//! - Family descriptors: compression other than NONE is stored as zstd and read back
//!   by the name the client gave; ROWPREFIX_FIXED_LENGTH blooms are row blooms;
//!   min versions, keep-deleted-cells and the block size are stored and obeyed;
//!   encoding, replication, scope, the cache-on-write flags, attributes and
//!   configuration are stored and read back, and change nothing (Tabula's engine
//!   has one block encoding).
//! - Table attributes are stored and read back; MAX_FILESIZE, MEMSTORE_FLUSHSIZE,
//!   READONLY and COMPACTION_ENABLED are obeyed (see the coordinator's `tables`).
//! - getSlowLogResponses reads the slow-call logs of the regionservers named (as
//!   region locations name them), kept when `slow_log_enabled` is set (HBase's
//!   `hbase.regionserver.slowlog.buffer.enabled`, off by default: `[]`, and
//!   clearSlowLogResponses `false` per server, as HBase answers); see [`slow_log`].
//! - Scanners: ids are i32 from 0, shared by every Thrift2 connection and separate
//!   from Thrift1's; a scanner idle longer than its lease (default 60 s) is closed, as
//!   are a connection's scanners when it closes; closeScanner of an unknown id is
//!   ignored (HBase 2.x).

pub mod admin;
pub mod convert;
pub mod data;
pub mod errors;
pub mod filter_bytes;
pub mod scans;
pub mod service;
pub mod slow_log;

use std::sync::Arc;

use crate::backend::Backend;
use crate::server::ConnectionObserver;
use crate::thrift1::scanners::{ScannerConnectionObserver, ScannerRegistry};
use crate::thrift1::Thrift1Options;

/// Calls whose synced write the connection server may acknowledge from its
/// acknowledger thread once the commit log has synced (`server::ServerOptions::
/// deferrable_calls`): each ends with exactly one single-row write (a mutation,
/// check-and-*, increment or append) and reads nothing after it, and declares
/// TIOError as its field 1 (what answers a failed sync). Calls writing several rows
/// wait for the log themselves.
pub const DEFERRABLE_CALLS: &[&str] = &[
    "put",
    "deleteSingle",
    "mutateRow",
    "increment",
    "append",
    "checkAndPut",
    "checkAndDelete",
    "checkAndMutate",
];

/// Calls quick enough to run on the connection server's event loops besides the
/// single-row writes of [`DEFERRABLE_CALLS`] (`server::ServerOptions::
/// loop_calls`): gets and existence checks of one row or a few named rows.
/// Scanners, batches of writes and table administration run on a connection
/// thread of their own.
pub const LOOP_CALLS: &[&str] = &["get", "exists", "existsAll", "getMultiple"];

/// The Thrift2 `THBaseService` over a [`Backend`].
pub struct Thrift2Handler {
    backend: Arc<dyn Backend>,
    scanners: Arc<ScannerRegistry>,
    options: Thrift1Options,
}

impl Thrift2Handler {
    /// A handler with `options` (scanner lease, bounds; shared with Thrift1's).
    pub fn with_options(backend: Arc<dyn Backend>, options: Thrift1Options) -> Self {
        let scanners = ScannerRegistry::start(options.scanner_lease, options.max_open_scanners);
        Thrift2Handler {
            backend,
            scanners,
            options,
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
}
