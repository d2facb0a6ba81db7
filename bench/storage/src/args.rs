//! The command line of the benchmark binary.
//!
//! Owns: [`Args`] (sizes, counts, compression, directory, which engines and
//! workloads run) and the names of engines and workloads.
//! Must not: run anything.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

use crate::settings::CompressionChoice;

/// An engine under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    Tabula,
    Rocksdb,
}

/// A workload, in the order a run performs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum Workload {
    /// Keys written in ascending order, one writer, log not fsynced per write.
    Fillseq,
    /// Keys written in random order, one writer, log not fsynced per write.
    Fillrandom,
    /// Random keys from many writers, each write fsynced by a group commit.
    Fillsync,
    /// Random point reads, every block in the cache.
    Readwarm,
    /// Seek to a random key and read the rows that follow.
    Scan,
    /// Random point reads with a block cache a quarter of the data.
    Readcold,
    /// As-of-T reads of a cell with many versions vs reads of a one-version cell.
    Versions,
}

/// Compares Tabula's storage engine with RocksDB, configured alike, in one run.
#[derive(Debug, Parser)]
#[command(name = "tabula-bench-storage", version)]
pub struct Args {
    /// Keys written by the fills (and read by the reads and scans).
    #[arg(long, default_value_t = 1_000_000)]
    pub num: u64,
    /// Bytes per value.
    #[arg(long, default_value_t = 1024)]
    pub value_size: usize,
    /// Timed point reads per readrandom workload.
    #[arg(long, default_value_t = 1_000_000)]
    pub reads: u64,
    /// Timed scans.
    #[arg(long, default_value_t = 50_000)]
    pub scans: u64,
    /// Rows read per scan.
    #[arg(long, default_value_t = 100)]
    pub scan_rows: usize,
    /// Keys written by the fsynced concurrent fill.
    #[arg(long, default_value_t = 50_000)]
    pub sync_keys: u64,
    /// Writer threads of the fsynced concurrent fill.
    #[arg(long, default_value_t = 16)]
    pub sync_writers: usize,
    /// Rounds of fillseq and of the fsynced fill, the engines taking turns (each
    /// round on a fresh database); each engine's median round is reported. A fill
    /// races its own background flushes and compactions for the machine's cores, so
    /// one run of it varies by up to a third from the next.
    #[arg(long, default_value_t = 3)]
    pub fill_rounds: usize,
    /// Rounds of the timed warm reads, scans and cold reads: both engines' databases
    /// stay open and the engines take turns; each engine's median round is
    /// reported. The machine's speed drifts by a third over seconds, which one run
    /// per engine, a minute apart, turned into the ratio.
    #[arg(long, default_value_t = 3)]
    pub read_rounds: usize,
    /// Versions of the many-versioned cell.
    #[arg(long, default_value_t = 100_000)]
    pub versions: u64,
    /// Timed reads of each cell in the versions workload.
    #[arg(long, default_value_t = 200_000)]
    pub version_reads: u64,
    /// Block compression of both engines.
    #[arg(long, value_enum, default_value_t = CompressionChoice::None)]
    pub compression: CompressionChoice,
    /// Target data block size in bytes.
    #[arg(long, default_value_t = 64 * 1024)]
    pub block_size: usize,
    /// Memtable size in MiB.
    #[arg(long, default_value_t = 64)]
    pub memtable_mib: usize,
    /// Directory under which the databases are created (and deleted afterwards).
    #[arg(long, default_value_os_t = std::env::temp_dir())]
    pub dir: PathBuf,
    /// Engines to run.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [EngineChoice::Tabula, EngineChoice::Rocksdb])]
    pub engines: Vec<EngineChoice>,
    /// Workloads to run (all by default).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub workloads: Vec<Workload>,
    /// Seed of every random order.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

impl Args {
    /// Whether `w` runs (every workload when none was named).
    pub fn runs(&self, w: Workload) -> bool {
        self.workloads.is_empty() || self.workloads.contains(&w)
    }

    /// Whether `e` runs.
    pub fn runs_engine(&self, e: EngineChoice) -> bool {
        self.engines.contains(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_run_everything_on_both_engines() {
        let args = Args::parse_from(["bench"]);
        assert_eq!(args.num, 1_000_000);
        assert!(args.runs(Workload::Versions) && args.runs(Workload::Fillseq));
        assert!(args.runs_engine(EngineChoice::Tabula) && args.runs_engine(EngineChoice::Rocksdb));
        assert_eq!(args.compression, CompressionChoice::None);
    }

    #[test]
    fn selections_narrow_the_run() {
        let args = Args::parse_from([
            "bench",
            "--engines",
            "tabula",
            "--workloads",
            "readwarm,scan",
            "--compression",
            "zstd",
        ]);
        assert!(args.runs(Workload::Scan) && !args.runs(Workload::Fillseq));
        assert!(!args.runs_engine(EngineChoice::Rocksdb));
        assert_eq!(args.compression, CompressionChoice::Zstd);
    }
}
