//! The storage engine's error type.
//!
//! Owns: every failure the engine can report to its callers, as one typed enum.
//! Must not: carry formatting for any particular client protocol (the gateway maps
//! these variants onto HBase exceptions).

use std::path::PathBuf;

/// Everything that can go wrong inside the storage engine.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A row key was empty; HBase requires at least one byte.
    #[error("row key is empty")]
    EmptyRowKey,
    /// A row key was longer than the engine allows.
    #[error("row key is {len} bytes, longer than the maximum of {max} bytes")]
    RowKeyTooLong { len: usize, max: usize },
    /// A value was larger than the configured maximum.
    #[error("value is {len} bytes, larger than the maximum of {max} bytes")]
    ValueTooLarge { len: usize, max: usize },
    /// A column family that the table does not declare.
    #[error("column family '{family}' does not exist in table '{table}'")]
    UnknownFamily { table: String, family: String },
    /// A timestamp outside the range the engine accepts.
    #[error("invalid timestamp {ts}: {reason}")]
    InvalidTimestamp { ts: i64, reason: &'static str },
    /// A cell used as a counter does not hold an 8-byte big-endian integer.
    #[error("cell {column} holds {len} bytes and is not a 64-bit counter")]
    NotACounter { column: String, len: usize },
    /// A counter would overflow i64.
    #[error("increment of {column} overflows a 64-bit counter")]
    CounterOverflow { column: String },
    /// A request that makes no sense, named in the message.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// The row is outside the key range this tablet serves.
    #[error("row is outside the range of tablet {tablet}")]
    RowOutOfRange { tablet: u64 },
    /// The tablet has been closed (moved, split or shut down).
    #[error("tablet {tablet} is closed")]
    TabletClosed { tablet: u64 },
    /// The tablet is unknown to this engine.
    #[error("tablet {tablet} is not open here")]
    TabletNotOpen { tablet: u64 },
    /// A tablet with this id is already open.
    #[error("tablet {tablet} is already open")]
    TabletAlreadyOpen { tablet: u64 },
    /// Bytes on disk failed a checksum or did not parse.
    #[error("corruption in {}: {detail}", path.display())]
    Corruption { path: PathBuf, detail: String },
    /// An operating-system I/O error, with what the engine was doing.
    #[error("I/O error while {context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// An earlier fsync failed; the commit log refuses further writes because the
    /// state of unsynced data is unknown.
    #[error("commit log is poisoned after an earlier write failure: {0}")]
    Poisoned(String),
    /// Another process holds the directory's lock (see `crate::dir_lock`).
    #[error(
        "{} is in use by another process (its LOCK is held): is another tabula process running on this data directory?",
        path.display()
    )]
    DirectoryInUse { path: PathBuf },
    /// The engine is shutting down.
    #[error("storage engine is shutting down")]
    ShuttingDown,
}

impl Error {
    /// Wraps an I/O error with a description of the operation that failed.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }

    /// A corruption error for a file.
    pub fn corruption(path: impl Into<PathBuf>, detail: impl Into<String>) -> Self {
        Error::Corruption {
            path: path.into(),
            detail: detail.into(),
        }
    }

    /// True when retrying the same call cannot succeed (HBase's DoNotRetryIOException).
    pub fn is_permanent(&self) -> bool {
        !matches!(
            self,
            Error::Io { .. }
                | Error::TabletClosed { .. }
                | Error::TabletNotOpen { .. }
                | Error::RowOutOfRange { .. }
                | Error::ShuttingDown
        )
    }
}

/// The engine's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
