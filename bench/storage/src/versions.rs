//! The as-of-T workload: reads of a cell with many versions against reads of a
//! cell with one.
//!
//! Owns: loading one cell with timestamps `1..=versions` plus a one-version cell
//! beside it and as many one-version cells as the first has versions (then
//! settling, so reads hit one SSTable), and the timed reads: as-of-T reads at
//! random T (each must return the version at T-1), latest reads of the one
//! one-version cell (its block stays in the processor's caches), and latest reads
//! of random one-version cells (as much data as the versioned cell, read at random
//! like its versions: the same cache misses without the versions).
//! Must not: know how an engine represents versions (see the stores).

use std::time::Instant;

use crate::data::{uniform, ValuePool};
use crate::error::{BenchError, BenchResult};
use crate::measure::Measured;
use crate::store::VersionedStore;

/// The row whose cell holds every version.
pub const VERSIONED_ROW: &[u8] = b"row-with-versions";
/// The row whose cell holds one version.
pub const SINGLE_ROW: &[u8] = b"row-with-one-version";
/// The timestamp of the one-version cells.
const SINGLE_TIMESTAMP: i64 = 1;

/// The row of the `i`th of the spread one-version cells.
fn spread_row(i: u64) -> Vec<u8> {
    format!("row-spread-{i:010}").into_bytes()
}

/// Both read rates of one engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VersionFigures {
    /// As-of-T reads of the many-versioned cell.
    pub as_of: Measured,
    /// Latest reads of the one-version cell.
    pub single: Measured,
    /// Latest reads of random cells among `versions` one-version cells.
    pub spread: Measured,
}

/// Writes `versions` versions of the versioned cell, one version of the single
/// cell and of `versions` spread cells, and settles.
pub fn load_versions(
    store: &dyn VersionedStore,
    versions: u64,
    values: &ValuePool,
) -> BenchResult<()> {
    for ts in 1..=versions {
        let t = i64::try_from(ts)
            .map_err(|_| BenchError::InvalidArguments(format!("{versions} versions")))?;
        store.put_version(VERSIONED_ROW, t, &values.value(ts))?;
    }
    store.put_version(SINGLE_ROW, SINGLE_TIMESTAMP, &values.value(0))?;
    for i in 0..versions {
        store.put_version(&spread_row(i), SINGLE_TIMESTAMP, &values.value(i))?;
    }
    store.settle()
}

/// Reads timed per round: the three kinds of read alternate in rounds of this many.
const ROUND: usize = 1_000;

/// Reads each cell `reads` times untimed (warm-up), then times `reads` as-of-T
/// reads at random T, `reads` latest reads of the single cell and `reads` of random
/// spread cells, alternating in rounds of [`ROUND`] so that the rates are taken
/// over the same stretch of time (on a shared virtual machine the speed drifts
/// between two back-to-back phases by more than the effect measured).
pub fn measure_versions(
    store: &dyn VersionedStore,
    versions: u64,
    reads: u64,
    seed: u64,
) -> BenchResult<VersionFigures> {
    // T in 2..=versions+1, so that the answer T-1 is always a stored version.
    let targets: Vec<i64> = uniform(reads, versions, seed)
        .into_iter()
        .map(|d| i64::try_from(d + 2).unwrap_or(i64::MAX))
        .collect();
    let spread_rows: Vec<Vec<u8>> = uniform(reads, versions, seed ^ 0x5b7ead)
        .into_iter()
        .map(spread_row)
        .collect();
    for (&t, row) in targets.iter().zip(&spread_rows) {
        check_as_of(store, t)?;
        check_single(store, SINGLE_ROW)?;
        check_single(store, row)?;
    }
    let mut as_of = Measured::default();
    let mut single = Measured::default();
    let mut spread = Measured::default();
    for (round, rows) in targets.chunks(ROUND).zip(spread_rows.chunks(ROUND)) {
        as_of.add(measure_as_of(store, round)?);
        single.add(measure_single(store, round.len() as u64)?);
        spread.add(measure_spread(store, rows)?);
    }
    Ok(VersionFigures {
        as_of,
        single,
        spread,
    })
}

#[inline(never)] // a named frame for profilers
fn measure_as_of(store: &dyn VersionedStore, targets: &[i64]) -> BenchResult<Measured> {
    let start = Instant::now();
    for &t in targets {
        check_as_of(store, t)?;
    }
    Ok(Measured {
        ops: targets.len() as u64,
        elapsed: start.elapsed(),
    })
}

#[inline(never)] // a named frame for profilers
fn measure_single(store: &dyn VersionedStore, reads: u64) -> BenchResult<Measured> {
    let start = Instant::now();
    for _ in 0..reads {
        check_single(store, SINGLE_ROW)?;
    }
    Ok(Measured {
        ops: reads,
        elapsed: start.elapsed(),
    })
}

#[inline(never)] // a named frame for profilers
fn measure_spread(store: &dyn VersionedStore, rows: &[Vec<u8>]) -> BenchResult<Measured> {
    let start = Instant::now();
    for row in rows {
        check_single(store, row)?;
    }
    Ok(Measured {
        ops: rows.len() as u64,
        elapsed: start.elapsed(),
    })
}

fn check_as_of(store: &dyn VersionedStore, before: i64) -> BenchResult<()> {
    let got = store.read_as_of(VERSIONED_ROW, before)?;
    if got != Some(before - 1) {
        return Err(BenchError::WrongResult {
            engine: store.name(),
            what: format!(
                "as-of read before {before}: expected version {}, read {got:?}",
                before - 1
            ),
        });
    }
    Ok(())
}

fn check_single(store: &dyn VersionedStore, row: &[u8]) -> BenchResult<()> {
    let got = store.read_latest(row)?;
    if got != Some(SINGLE_TIMESTAMP) {
        return Err(BenchError::WrongResult {
            engine: store.name(),
            what: format!("one-version read: expected version {SINGLE_TIMESTAMP}, read {got:?}"),
        });
    }
    Ok(())
}
