//! The run: which stores are opened with which settings, in what order the
//! workloads go, and what ends up in the report.
//!
//! Owns: [`run`], the store lifecycle (fresh directory per database, settle after
//! loading, reopen with a small cache for the cold reads, delete afterwards), the
//! rounds the engines take in turn (fills on fresh databases; warm reads, scans
//! and cold reads on both engines' databases open side by side), the untimed
//! warm-up passes, and the block cache notes.
//! Must not: format the table (see `report`) or time individual operations (see
//! `measure` and `versions`).

use std::path::Path;

use tempfile::TempDir;

use crate::args::{Args, EngineChoice, Workload};
use crate::data::{self, ValuePool, KEY_LEN};
use crate::error::{BenchError, BenchResult};
use crate::measure::{self, Measured};
use crate::report::{ResultRow, Target};
use crate::rocks_store::RocksStore;
use crate::settings::StoreSettings;
use crate::store::{Store, VersionedStore, WriteMode};
use crate::tabula_store::TabulaStore;
use crate::versions::{self, VersionFigures};

/// Smallest block cache of the warm workloads.
const MIN_WARM_CACHE: u64 = 64 << 20;
/// Target of the fills.
const FILL_TARGET: Target = Target::AtLeast(1.0);
/// Target of the reads and scans.
const READ_TARGET: Target = Target::AtLeast(0.8);
/// A many-versioned as-of-T read must be within 2x of a one-version read.
pub const VERSION_TARGET: Target = Target::AtLeast(0.5);

/// Everything a run produced.
#[derive(Debug, Default)]
pub struct Outcome {
    pub rows: Vec<ResultRow>,
    /// Version figures per engine.
    pub versions: Vec<(EngineChoice, VersionFigures)>,
    /// Side facts (cache hit rates, sizes).
    pub notes: Vec<String>,
}

/// One of the two engines, opened.
enum AnyStore {
    Tabula(TabulaStore),
    Rocks(RocksStore),
}

impl AnyStore {
    fn open(engine: EngineChoice, dir: &Path, s: &StoreSettings) -> BenchResult<Self> {
        Ok(match engine {
            EngineChoice::Tabula => AnyStore::Tabula(TabulaStore::open(dir, s)?),
            EngineChoice::Rocksdb => AnyStore::Rocks(RocksStore::open(dir, s)?),
        })
    }

    fn store(&self) -> &dyn Store {
        match self {
            AnyStore::Tabula(t) => t,
            AnyStore::Rocks(r) => r,
        }
    }

    fn versioned(&self) -> &dyn VersionedStore {
        match self {
            AnyStore::Tabula(t) => t,
            AnyStore::Rocks(r) => r,
        }
    }

    fn close(self) -> BenchResult<()> {
        match self {
            AnyStore::Tabula(t) => t.close(),
            AnyStore::Rocks(r) => r.close(),
        }
    }

    /// Block cache (hits, misses) so far, where the engine exposes them cheaply.
    fn cache_counts(&self) -> Option<(u64, u64)> {
        match self {
            AnyStore::Tabula(t) => {
                let s = t.cache_stats();
                Some((s.hits, s.misses))
            }
            AnyStore::Rocks(_) => None,
        }
    }
}

/// Rates of one workload, per engine.
#[derive(Debug, Default, Clone, Copy)]
struct Pair {
    tabula: Option<f64>,
    rocksdb: Option<f64>,
}

impl Pair {
    fn set(&mut self, engine: EngineChoice, m: Measured) {
        let r = Some(m.ops_per_sec());
        match engine {
            EngineChoice::Tabula => self.tabula = r,
            EngineChoice::Rocksdb => self.rocksdb = r,
        }
    }

    fn row(self, workload: impl Into<String>, target: Target) -> ResultRow {
        ResultRow {
            workload: workload.into(),
            tabula: self.tabula,
            rocksdb: self.rocksdb,
            target,
        }
    }
}

/// The sizes every store of a run derives from the arguments.
struct Sizes {
    data_bytes: u64,
    warm: StoreSettings,
    cold: StoreSettings,
    versioned: StoreSettings,
}

impl Sizes {
    fn from_args(args: &Args) -> BenchResult<Sizes> {
        if args.num == 0 || args.value_size == 0 || args.scan_rows == 0 {
            return Err(BenchError::InvalidArguments(
                "--num, --value-size and --scan-rows must be positive".into(),
            ));
        }
        if args.num <= args.scan_rows as u64 {
            return Err(BenchError::InvalidArguments(
                "--num must exceed --scan-rows".into(),
            ));
        }
        let max_versions = u32::try_from(args.versions)
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| {
                BenchError::InvalidArguments("--versions must be in 1..=4294967295".into())
            })?;
        let data_bytes = args.num.saturating_mul((KEY_LEN + args.value_size) as u64);
        let warm = StoreSettings {
            cache_bytes: data_bytes.saturating_mul(2).max(MIN_WARM_CACHE),
            memtable_bytes: args.memtable_mib << 20,
            block_size: args.block_size,
            compression: args.compression,
            max_versions: 1,
        };
        let cold = StoreSettings {
            // A quarter of the data, but at least one block.
            cache_bytes: (data_bytes / 4).max(args.block_size as u64),
            ..warm
        };
        let version_bytes = args
            .versions
            .saturating_mul((KEY_LEN + args.value_size) as u64);
        let versioned = StoreSettings {
            // The versioned cell and as much again in one-version cells, twice over.
            cache_bytes: version_bytes.saturating_mul(4).max(MIN_WARM_CACHE),
            max_versions,
            ..warm
        };
        Ok(Sizes {
            data_bytes,
            warm,
            cold,
            versioned,
        })
    }
}

/// Runs the selected workloads on the selected engines.
pub fn run(args: &Args) -> BenchResult<Outcome> {
    let sizes = Sizes::from_args(args)?;
    std::fs::create_dir_all(&args.dir)
        .map_err(|e| BenchError::io(format!("creating {}", args.dir.display()), e))?;
    let values = ValuePool::new(args.value_size, args.seed);
    let engines: Vec<EngineChoice> = [EngineChoice::Tabula, EngineChoice::Rocksdb]
        .into_iter()
        .filter(|e| args.runs_engine(*e))
        .collect();
    let mut out = Outcome::default();
    out.notes.push(format!(
        "data {:.1} MiB ({} keys x {} B + {} B key); warm block cache {:.0} MiB; \
         cold block cache {:.0} MiB",
        mib(sizes.data_bytes),
        args.num,
        args.value_size,
        KEY_LEN,
        mib(sizes.warm.cache_bytes),
        mib(sizes.cold.cache_bytes)
    ));

    if args.runs(Workload::Fillseq) {
        let order: Vec<u64> = (0..args.num).collect();
        let pair = alternating_rounds(args.fill_rounds, &engines, |e| {
            fresh_fill(args, e, &sizes.warm, &order, &values, 1, WriteMode::Logged)
        })?;
        out.rows.push(pair.row("fillseq", FILL_TARGET));
    }

    let random_db = [
        Workload::Fillrandom,
        Workload::Readwarm,
        Workload::Scan,
        Workload::Readcold,
    ];
    if random_db.iter().any(|w| args.runs(*w)) {
        let pairs = random_db_workloads(args, &engines, &sizes, &values, &mut out.notes)?;
        let names = [
            ("fillrandom", FILL_TARGET),
            ("readrandom_warm", READ_TARGET),
            ("seek_scan100", READ_TARGET),
            ("readrandom_cache_1/4", READ_TARGET),
        ];
        for ((w, (name, target)), pair) in random_db.iter().zip(names).zip(pairs) {
            if args.runs(*w) {
                let name = if *w == Workload::Scan {
                    format!("seek_scan{}", args.scan_rows)
                } else {
                    name.to_string()
                };
                out.rows.push(pair.row(name, target));
            }
        }
    }

    if args.runs(Workload::Fillsync) {
        let order = data::shuffled(args.sync_keys, args.seed ^ 0x5eed);
        let pair = alternating_rounds(args.fill_rounds, &engines, |e| {
            fresh_fill(
                args,
                e,
                &sizes.warm,
                &order,
                &values,
                args.sync_writers,
                WriteMode::Synced,
            )
        })?;
        out.rows.push(pair.row(
            format!("fillrandom_sync_{}w", args.sync_writers),
            FILL_TARGET,
        ));
    }

    if args.runs(Workload::Versions) {
        let mut as_of = Pair::default();
        let mut single = Pair::default();
        let mut spread = Pair::default();
        for &e in &engines {
            let dir = temp_dir(&args.dir, e)?;
            let store = AnyStore::open(e, dir.path(), &sizes.versioned)?;
            versions::load_versions(store.versioned(), args.versions, &values)?;
            let f = versions::measure_versions(
                store.versioned(),
                args.versions,
                args.version_reads,
                args.seed,
            )?;
            store.close()?;
            as_of.set(e, f.as_of);
            single.set(e, f.single);
            spread.set(e, f.spread);
            out.versions.push((e, f));
        }
        out.rows
            .push(single.row("get_1_version", Target::Informative));
        out.rows
            .push(spread.row("get_1_version_random", Target::Informative));
        out.rows.push(as_of.row(
            format!("get_asof_T_{}_versions", args.versions),
            Target::Informative,
        ));
    }
    Ok(out)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / f64::from(1u32 << 20)
}

fn temp_dir(root: &Path, engine: EngineChoice) -> BenchResult<TempDir> {
    let prefix = match engine {
        EngineChoice::Tabula => "bench-tabula-",
        EngineChoice::Rocksdb => "bench-rocksdb-",
    };
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(root)
        .map_err(|e| BenchError::io(format!("creating a directory in {}", root.display()), e))
}

/// Runs `measure` `rounds` times per engine, the engines taking turns (the first
/// engine alternates between rounds), and pairs each engine's median round.
fn alternating_rounds(
    rounds: usize,
    engines: &[EngineChoice],
    mut measure: impl FnMut(EngineChoice) -> BenchResult<Measured>,
) -> BenchResult<Pair> {
    let mut per_engine: Vec<(EngineChoice, Vec<Measured>)> =
        engines.iter().map(|&e| (e, Vec::new())).collect();
    for round in 0..rounds.max(1) {
        let n = per_engine.len();
        for i in 0..n {
            if let Some((e, measured)) = per_engine.get_mut((i + round) % n) {
                measured.push(measure(*e)?);
            }
        }
    }
    let mut pair = Pair::default();
    for (e, measured) in per_engine {
        if let Some(m) = median(measured) {
            pair.set(e, m);
        }
    }
    Ok(pair)
}

/// The measurement with the median rate (the lower middle one of an even count).
fn median(mut measured: Vec<Measured>) -> Option<Measured> {
    measured.sort_by(|a, b| a.ops_per_sec().total_cmp(&b.ops_per_sec()));
    let middle = measured.len().checked_sub(1)? / 2;
    measured.get(middle).copied()
}

/// A fill into a new database, which is deleted afterwards.
fn fresh_fill(
    args: &Args,
    engine: EngineChoice,
    settings: &StoreSettings,
    order: &[u64],
    values: &ValuePool,
    writers: usize,
    mode: WriteMode,
) -> BenchResult<Measured> {
    let dir = temp_dir(&args.dir, engine)?;
    let store = AnyStore::open(engine, dir.path(), settings)?;
    let m = if writers > 1 {
        measure::measure_concurrent_fill(store.store(), order, values, writers, mode)?
    } else {
        measure::measure_fill(store.store(), order, values, mode)?
    };
    store.close()?;
    Ok(m)
}

/// One engine's database of the random-order workloads, open.
struct RandomDb {
    engine: EngineChoice,
    store: AnyStore,
}

/// The store of `engine` among `dbs`.
fn store_of(dbs: &[RandomDb], engine: EngineChoice) -> BenchResult<&AnyStore> {
    dbs.iter()
        .find(|d| d.engine == engine)
        .map(|d| &d.store)
        .ok_or_else(|| BenchError::InvalidArguments(format!("no database of {engine:?}")))
}

/// Tabula's block cache (hits, misses) among `dbs`, if it is there.
fn tabula_cache_counts(dbs: &[RandomDb]) -> Option<(u64, u64)> {
    store_of(dbs, EngineChoice::Tabula)
        .ok()
        .and_then(AnyStore::cache_counts)
}

/// Fills one database per engine in random order and settles them; then, with
/// both open, times the warm reads and the scans, and after reopening both with a
/// quarter-size cache the cold reads, each in `args.read_rounds` rounds the
/// engines take in turn. Returns the fillrandom, readwarm, scan and readcold
/// pairs (empty where not selected).
fn random_db_workloads(
    args: &Args,
    engines: &[EngineChoice],
    sizes: &Sizes,
    values: &ValuePool,
    notes: &mut Vec<String>,
) -> BenchResult<[Pair; 4]> {
    let mut pairs = [Pair::default(); 4];
    let order = data::shuffled(args.num, args.seed);
    let mut dirs = Vec::new();
    let mut dbs = Vec::new();
    for &engine in engines {
        let dir = temp_dir(&args.dir, engine)?;
        let store = AnyStore::open(engine, dir.path(), &sizes.warm)?;
        let fill = measure::measure_fill(store.store(), &order, values, WriteMode::Logged)?;
        store.store().settle()?;
        notes.push(format!(
            "{}: settled database {:.1} MiB of SSTables",
            store.store().name(),
            mib(sst_bytes(dir.path()))
        ));
        if args.runs(Workload::Fillrandom) {
            pairs[0].set(engine, fill);
        }
        if args.runs(Workload::Readwarm) || args.runs(Workload::Scan) {
            // Warm-up: every key once, so every block is cached.
            measure::measure_reads(store.store(), &order, args.value_size)?;
        }
        dirs.push(dir);
        dbs.push(RandomDb { engine, store });
    }

    let reads = data::uniform(args.reads, args.num, args.seed ^ 0x1);
    if args.runs(Workload::Readwarm) {
        let before = tabula_cache_counts(&dbs);
        pairs[1] = alternating_rounds(args.read_rounds, engines, |e| {
            measure::measure_reads(store_of(&dbs, e)?.store(), &reads, args.value_size)
        })?;
        note_cache(notes, "readrandom_warm", before, tabula_cache_counts(&dbs));
    }
    if args.runs(Workload::Scan) {
        let span = args.num - args.scan_rows as u64;
        let starts = data::uniform(args.scans, span + 1, args.seed ^ 0x2);
        let before = tabula_cache_counts(&dbs);
        pairs[2] = alternating_rounds(args.read_rounds, engines, |e| {
            measure::measure_scans(
                store_of(&dbs, e)?.store(),
                &starts,
                args.scan_rows,
                args.value_size,
            )
        })?;
        note_cache(notes, "seek_scan", before, tabula_cache_counts(&dbs));
    }
    for db in dbs.drain(..) {
        db.store.close()?;
    }

    if args.runs(Workload::Readcold) {
        for (&engine, dir) in engines.iter().zip(&dirs) {
            let store = AnyStore::open(engine, dir.path(), &sizes.cold)?;
            // Warm-up: enough random reads to fill the small cache.
            let warmup = data::uniform((args.num / 4).max(1), args.num, args.seed ^ 0x3);
            measure::measure_reads(store.store(), &warmup, args.value_size)?;
            dbs.push(RandomDb { engine, store });
        }
        let before = tabula_cache_counts(&dbs);
        pairs[3] = alternating_rounds(args.read_rounds, engines, |e| {
            measure::measure_reads(store_of(&dbs, e)?.store(), &reads, args.value_size)
        })?;
        note_cache(
            notes,
            "readrandom_cache_1/4",
            before,
            tabula_cache_counts(&dbs),
        );
        for db in dbs.drain(..) {
            db.store.close()?;
        }
    }
    Ok(pairs)
}

fn note_cache(
    notes: &mut Vec<String>,
    workload: &str,
    before: Option<(u64, u64)>,
    after: Option<(u64, u64)>,
) {
    if let (Some((h0, m0)), Some((h1, m1))) = (before, after) {
        let hits = h1.saturating_sub(h0);
        let misses = m1.saturating_sub(m0);
        let total = (hits + misses).max(1);
        notes.push(format!(
            "tabula {workload}: block cache {hits} hits, {misses} misses ({:.1}% hits)",
            100.0 * hits as f64 / total as f64
        ));
    }
}

/// Total bytes of the `.sst` files under `dir` (best effort; both engines name
/// their tables so).
fn sst_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => sst_bytes(&e.path()),
            Ok(m) if e.path().extension().is_some_and(|x| x == "sst") => m.len(),
            _ => 0,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use clap::Parser;

    use super::*;

    fn tiny_args(dir: &Path, extra: &[&str]) -> Args {
        let dir = dir.to_string_lossy().into_owned();
        let mut argv = vec![
            "bench",
            "--num",
            "3000",
            "--reads",
            "2000",
            "--scans",
            "200",
            "--scan-rows",
            "20",
            "--sync-keys",
            "200",
            "--sync-writers",
            "4",
            "--versions",
            "600",
            "--version-reads",
            "300",
            "--value-size",
            "256",
            "--dir",
            &dir,
        ];
        argv.extend_from_slice(extra);
        Args::parse_from(argv)
    }

    #[test]
    fn every_workload_runs_on_both_engines() {
        let root = tempfile::tempdir().expect("temp dir");
        let out = run(&tiny_args(root.path(), &[])).expect("run");
        let names: Vec<&str> = out.rows.iter().map(|r| r.workload.as_str()).collect();
        assert_eq!(
            names,
            [
                "fillseq",
                "fillrandom",
                "readrandom_warm",
                "seek_scan20",
                "readrandom_cache_1/4",
                "fillrandom_sync_4w",
                "get_1_version",
                "get_1_version_random",
                "get_asof_T_600_versions",
            ]
        );
        for r in &out.rows {
            assert!(r.tabula.is_some_and(|v| v > 0.0), "{r:?}");
            assert!(r.rocksdb.is_some_and(|v| v > 0.0), "{r:?}");
        }
        assert_eq!(out.versions.len(), 2);
        // Every database was deleted afterwards.
        let left = std::fs::read_dir(root.path()).expect("list").count();
        assert_eq!(left, 0);
    }

    fn rate(ops: u64) -> Measured {
        Measured {
            ops,
            elapsed: Duration::from_secs(1),
        }
    }

    #[test]
    fn the_median_round_is_reported() {
        assert_eq!(median(vec![rate(30), rate(10), rate(20)]), Some(rate(20)));
        assert_eq!(
            median(vec![rate(40), rate(10), rate(30), rate(20)]),
            Some(rate(20))
        );
        assert_eq!(median(vec![rate(7)]), Some(rate(7)));
        assert_eq!(median(Vec::new()), None);
    }

    #[test]
    fn fill_rounds_alternate_the_engines() {
        let root = tempfile::tempdir().expect("temp dir");
        let args = tiny_args(root.path(), &["--fill-rounds", "3"]);
        let engines = [EngineChoice::Tabula, EngineChoice::Rocksdb];
        let mut order = Vec::new();
        let mut next = 0;
        let pair = alternating_rounds(args.fill_rounds, &engines, |e| {
            order.push(e);
            next += 1;
            // Tabula's rounds: 1, 4, 5 ops; RocksDB's: 2, 3, 6.
            Ok(rate(next))
        })
        .expect("rounds");
        use EngineChoice::{Rocksdb, Tabula};
        assert_eq!(order, [Tabula, Rocksdb, Rocksdb, Tabula, Tabula, Rocksdb]);
        assert_eq!(pair.tabula, Some(4.0));
        assert_eq!(pair.rocksdb, Some(3.0));
    }

    #[test]
    fn cold_reads_use_a_quarter_size_cache() {
        let root = tempfile::tempdir().expect("temp dir");
        let args = tiny_args(
            root.path(),
            &["--engines", "tabula", "--workloads", "readcold"],
        );
        let out = run(&args).expect("run");
        assert_eq!(out.rows.len(), 1);
        assert!(out.rows[0].rocksdb.is_none());
        let note = out
            .notes
            .iter()
            .find(|n| n.contains("readrandom_cache_1/4"))
            .expect("cache note");
        assert!(note.contains("misses"), "{note}");
        assert!(
            !note.contains(" 0 misses"),
            "a quarter cache must miss: {note}"
        );
    }

    #[test]
    fn sizes_follow_the_arguments() {
        let root = tempfile::tempdir().expect("temp dir");
        let sizes = Sizes::from_args(&tiny_args(root.path(), &[])).expect("sizes");
        assert_eq!(sizes.data_bytes, 3000 * (16 + 256));
        assert_eq!(sizes.warm.cache_bytes, MIN_WARM_CACHE);
        assert_eq!(sizes.cold.cache_bytes, 3000 * (16 + 256) / 4);
        assert_eq!(sizes.versioned.max_versions, 600);
        assert_eq!(sizes.warm.max_versions, 1);
    }

    #[test]
    fn impossible_sizes_are_refused() {
        let root = tempfile::tempdir().expect("temp dir");
        let mut args = tiny_args(root.path(), &[]);
        args.num = 10;
        assert!(matches!(
            Sizes::from_args(&args),
            Err(BenchError::InvalidArguments(_))
        ));
    }
}
