//! Command-line options of `tabula bench`.
//!
//! Owns: [`BenchArgs`] (parsed by clap inside the `tabula` binary) and the small
//! enums naming durability, transport and protocol.
//! Must not: open connections or run anything.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// How writes ask the server to log them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DurabilityArg {
    /// `writeToWAL = true`: the commit log is fsynced before the reply.
    Sync,
    /// `writeToWAL = false`: no commit log for these writes.
    NoWal,
}

impl DurabilityArg {
    pub fn name(self) -> &'static str {
        match self {
            DurabilityArg::Sync => "sync",
            DurabilityArg::NoWal => "no-wal",
        }
    }
}

/// Scheduling policy of the client's threads (Linux; elsewhere the system default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ClientSchedArg {
    /// `SCHED_BATCH`: a reply that wakes a client thread does not preempt the
    /// server thread that sent it; the client runs when that thread blocks or its
    /// time slice ends, as a client on another machine would never take the
    /// server's processor.
    Batch,
    /// `SCHED_OTHER`, the default policy of every process.
    Normal,
}

impl ClientSchedArg {
    pub fn name(self) -> &'static str {
        match self {
            ClientSchedArg::Batch => "batch",
            ClientSchedArg::Normal => "normal",
        }
    }
}

/// Thrift transport.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TransportArg {
    Buffered,
    Framed,
    /// HBase's HTTP mode: each call an HTTP/1.1 POST on a kept-alive connection.
    Http,
    /// HBase's HTTP mode over TLS (trusting the authorities in --tls-ca-file).
    Https,
}

impl TransportArg {
    pub fn name(self) -> &'static str {
        match self {
            TransportArg::Buffered => "buffered",
            TransportArg::Framed => "framed",
            TransportArg::Http => "http",
            TransportArg::Https => "https",
        }
    }
}

/// Thrift protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolArg {
    Binary,
    Compact,
}

impl ProtocolArg {
    pub fn name(self) -> &'static str {
        match self {
            ProtocolArg::Binary => "binary",
            ProtocolArg::Compact => "compact",
        }
    }
}

/// `tabula bench`: a load generator speaking Thrift1 to a running server.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Thrift1 address of the server.
    #[arg(long, default_value = "127.0.0.1:9090")]
    pub addr: String,
    /// Workloads to run in order, comma separated: the Bigtable paper's seqwrite,
    /// randwrite, seqread, randread, randread-mem, scan; YCSB's ycsb-load, ycsb-a ..
    /// ycsb-f; versions (as-of-T gets on a cell with --versions versions, beside gets
    /// of a one-version cell); counters (Thrift1 increments of zipfian rows);
    /// compact (one majorCompact of the Bigtable table).
    /// `bigtable` and `ycsb` name the whole groups.
    #[arg(long, value_delimiter = ',', default_value = "bigtable")]
    pub workloads: Vec<String>,
    /// Rows the data set holds (written by seqwrite and ycsb-load, read by the rest).
    #[arg(long, default_value_t = 100_000)]
    pub records: u64,
    /// Operations per timed workload (seqwrite and ycsb-load write --records rows;
    /// scan makes --operations / --scan-rows scans).
    #[arg(long, default_value_t = 100_000)]
    pub operations: u64,
    /// Run each workload for this many seconds instead of --operations (the
    /// walking workloads, seqwrite, ycsb-load and the versions load, stop at their
    /// slice's end if that comes first).
    #[arg(long)]
    pub duration: Option<f64>,
    /// Client connections, each with one call in flight at a time.
    #[arg(long, default_value_t = 16)]
    pub connections: usize,
    /// Threads driving the connections (an event loop each; 0 = one per CPU core).
    #[arg(long, default_value_t = 0)]
    pub client_threads: usize,
    /// Scheduling policy of the client's threads. With the server on the same
    /// cores, `normal` lets every reply switch the processor from the server to the
    /// client it wakes, a cost a remote client never puts on a server.
    #[arg(long, value_enum, default_value = "batch")]
    pub client_sched: ClientSchedArg,
    /// Bytes per value in the Bigtable workloads.
    #[arg(long, default_value_t = 1000)]
    pub value_size: usize,
    /// Fields per YCSB record.
    #[arg(long, default_value_t = 10)]
    pub ycsb_fields: usize,
    /// Bytes per YCSB field.
    #[arg(long, default_value_t = 100)]
    pub ycsb_field_size: usize,
    /// Rows per mutateRows call in seqwrite, randwrite and ycsb-load (1 = one
    /// mutateRow per row; more = a client-side write buffer, as HBase's
    /// PerformanceEvaluation uses by default).
    #[arg(long, default_value_t = 1)]
    pub write_batch: usize,
    /// Rows per getRowsWithColumns call in randread and randread-mem (1 = one get
    /// per row; more = a batched multi-get, as HBase's PerformanceEvaluation sends
    /// with --multiGet).
    #[arg(long, default_value_t = 1)]
    pub read_batch: usize,
    /// Rows read by randread-mem (a set small enough to stay in the block cache).
    #[arg(long, default_value_t = 100_000)]
    pub mem_records: u64,
    /// Rows read by each scan of the `scan` workload.
    #[arg(long, default_value_t = 1000)]
    pub scan_rows: u32,
    /// A filter (HBase's filter language) every scanner of the `scan` workload
    /// carries. With --scan-rows at or above --records each scan reads the table
    /// from its first row, so a filter keeping a few rows of it times how fast the
    /// server passes over the rest. Any bytes (a FuzzyRowFilter mask is binary).
    #[arg(long)]
    pub scan_filter: Option<std::ffi::OsString>,
    /// Versions of the one cell the `versions` workload reads as of random times.
    #[arg(long, default_value_t = 100_000)]
    pub versions: u64,
    /// Durability of every write.
    #[arg(long, value_enum, default_value = "sync")]
    pub durability: DurabilityArg,
    #[arg(long, value_enum, default_value = "buffered")]
    pub transport: TransportArg,
    /// Certificate authorities (a PEM file) trusted by --transport https; the
    /// server's certificate must name the host of --addr.
    #[arg(long)]
    pub tls_ca_file: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "binary")]
    pub protocol: ProtocolArg,
    /// Seed of every random choice (keys, values, mixes).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Table of the Bigtable workloads; YCSB uses TABLE_ycsb and versions TABLE_versions.
    #[arg(long, default_value = "bench")]
    pub table: String,
    /// Drop the benchmark tables first (else existing tables and data are reused).
    #[arg(long)]
    pub fresh: bool,
    /// PID of the server process, to sample its RSS and CPU during each run.
    #[arg(long)]
    pub server_pid: Option<u32>,
    /// Append one JSON object per run to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Append one CSV row per run and operation type to this file.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// Write a latency-distribution PNG per run into this directory.
    #[arg(long)]
    pub plot_dir: Option<PathBuf>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}
