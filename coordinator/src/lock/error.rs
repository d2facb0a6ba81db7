//! Why a lock-service call failed.
//!
//! Owns: [`LockError`], shared by every [`LockService`](super::LockService)
//! implementation, and the [`LockResult`] alias. Must not: carry implementation state.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use super::types::SessionId;

/// Result type of lock-service calls.
pub type LockResult<T> = std::result::Result<T, LockError>;

/// Why a lock-service call failed.
///
/// A failed comparison is not an error: it is reported as
/// [`TxnOutcome::Failed`](super::TxnOutcome::Failed) or
/// [`CasOutcome::Conflict`](super::CasOutcome::Conflict).
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// The session's lease lapsed, it was closed, or it never existed. Everything it
    /// owned (locks, ephemeral files) is gone; the caller must stop acting on them.
    #[error("session {0} has expired or was closed")]
    SessionExpired(SessionId),
    /// `unlock` by a session that does not hold the lock (it never did, it already
    /// released it, or the lock was broken by a write or delete of its file).
    #[error("session {session} does not hold the lock {path}")]
    NotLockHolder { path: String, session: SessionId },
    /// The path holds a persistent file, which no session can lock.
    #[error("{path} holds a persistent file and cannot be locked")]
    NotLockable { path: String },
    /// A read-then-compare loop kept losing races against concurrent writers.
    #[error("{path} kept changing; gave up after {attempts} attempts")]
    Contended { path: String, attempts: u32 },
    /// The path or prefix breaks the naming rules (see [`validate_path`](super::validate_path)).
    #[error("invalid path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },
    /// The requested session lifetime is zero or above [`MAX_SESSION_TTL`](super::MAX_SESSION_TTL).
    #[error("invalid session ttl {ttl:?}: {reason}")]
    InvalidTtl { ttl: Duration, reason: &'static str },
    /// The transaction is malformed (too many operations, a path written twice).
    #[error("invalid transaction: {0}")]
    InvalidTxn(String),
    /// The paths and values a transaction writes exceed [`MAX_WRITE_BYTES`](super::MAX_WRITE_BYTES).
    #[error("a write of {size} bytes exceeds the limit of {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    /// The service ended the watch (it shut down, or a remote service dropped the
    /// stream). The watcher must list again and open a new watch.
    #[error("the watch was closed by the lock service; list again and watch anew")]
    WatchClosed,
    /// Reading or writing the service's own state failed.
    #[error("lock service I/O failed while {context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// Another process holds the state directory's lock.
    #[error("lock service state {} is in use by another process (its LOCK is held): is another tabula serve running on this data directory?", path.display())]
    InUse { path: PathBuf },
    /// The on-disk state cannot be trusted; the service refuses to start on it.
    #[error("lock service state {path} is corrupt: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    /// An earlier durability failure put the service out of service: every later call
    /// fails, so no one acts on state that may not be on disk. Restart to recover.
    #[error("lock service is out of service after an earlier failure: {0}")]
    Poisoned(String),
    /// A remote service could not be reached; the outcome of a write is unknown.
    /// Callers retry idempotently (re-read, then compare-and-write).
    #[error("lock service is unreachable: {0}")]
    Unavailable(String),
    /// A remote service answered in a way the protocol does not allow.
    #[error("lock service answered inconsistently: {0}")]
    Protocol(String),
    /// A counter (revisions, session ids, boot epochs) ran out of values.
    #[error("the lock service ran out of {0}")]
    Exhausted(&'static str),
}

impl LockError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        LockError::Io {
            context: context.into(),
            source,
        }
    }
}
