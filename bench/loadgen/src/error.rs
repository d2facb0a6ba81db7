//! Why a benchmark could not run.
//!
//! Owns: [`BenchError`]. Failed individual operations are not errors here: they are
//! counted per operation type in the results.
//! Must not: hold anything but error types.

/// A failure that stops the benchmark.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("cannot connect to {addr}: {message}")]
    Connect { addr: String, message: String },
    #[error("setting up the benchmark tables failed: {0}")]
    Setup(String),
    #[error("unknown workload {0:?} (see --help for the list)")]
    UnknownWorkload(String),
    #[error("{0}")]
    InvalidOption(String),
    #[error("every connection failed: {0}")]
    AllConnectionsFailed(String),
    #[error("writing results: {0}")]
    Report(#[from] crate::report::ReportError),
    #[error("sampling the server: {0}")]
    Probe(#[from] crate::probe::ProbeError),
}

impl BenchError {
    pub(crate) fn setup(e: thrift::Error) -> BenchError {
        BenchError::Setup(e.to_string())
    }
}
