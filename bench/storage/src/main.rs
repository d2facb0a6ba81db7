//! `tabula-bench-storage`: Tabula's storage engine against RocksDB, configured
//! alike (block size, block cache, memtable size, compression, bloom filters,
//! write-ahead log on), measured in one run on one machine.
//!
//! Owns: the binary's entry point: parse the arguments, run, print the table.
//! Must not: hold workload logic (see `runner`, `measure`, `versions`).

mod args;
mod data;
mod error;
mod measure;
mod report;
mod rocks_store;
mod runner;
mod settings;
mod store;
mod tabula_store;
mod versions;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Args, EngineChoice};
use crate::report::Target;

fn main() -> ExitCode {
    let args = Args::parse();
    println!(
        "tabula-bench-storage: num={} value_size={} reads={} scans={}x{} sync_keys={} \
         sync_writers={} fill_rounds={} versions={} version_reads={} compression={:?} \
         block_size={} memtable={}MiB",
        args.num,
        args.value_size,
        args.reads,
        args.scans,
        args.scan_rows,
        args.sync_keys,
        args.sync_writers,
        args.fill_rounds,
        args.versions,
        args.version_reads,
        args.compression,
        args.block_size,
        args.memtable_mib
    );
    let outcome = match runner::run(&args) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!();
    print!("{}", report::render_table(&outcome.rows));
    for (engine, f) in &outcome.versions {
        let (label, target) = match engine {
            EngineChoice::Tabula => ("tabula", runner::VERSION_TARGET),
            EngineChoice::Rocksdb => (
                "rocksdb (model: key row|cf:q|!ts, seek)",
                Target::Informative,
            ),
        };
        print!(
            "{}",
            report::render_version_lines(
                label,
                args.versions,
                f.as_of.ops_per_sec(),
                f.single.ops_per_sec(),
                f.spread.ops_per_sec(),
                target
            )
        );
    }
    println!();
    for n in &outcome.notes {
        println!("note: {n}");
    }
    ExitCode::SUCCESS
}
