//! The benchmark's error type.
//!
//! Owns: [`BenchError`], every way a benchmark run can fail (either engine, the
//! file system, a worker thread, or a read that did not find what was written).
//! Must not: decide how errors are reported (the binary's `main` prints them).

use thiserror::Error;

/// A failure while preparing or running a workload.
#[derive(Debug, Error)]
pub enum BenchError {
    /// Tabula's storage engine failed.
    #[error("tabula: {0}")]
    Tabula(#[from] tabula_storage::Error),
    /// RocksDB failed.
    #[error("rocksdb: {0}")]
    Rocks(#[from] rocksdb::Error),
    /// A file-system operation of the harness failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
    /// A worker thread panicked.
    #[error("a {0} worker thread panicked")]
    WorkerPanicked(&'static str),
    /// A read did not return what the fill wrote: the comparison would be invalid.
    #[error("{engine}: {what}")]
    WrongResult { engine: &'static str, what: String },
    /// The command line asks for something impossible.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
}

impl BenchError {
    /// An I/O error with what the harness was doing.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        BenchError::Io {
            context: context.into(),
            source,
        }
    }
}

/// Results of the harness.
pub type BenchResult<T> = Result<T, BenchError>;
