//! The as-of-T workload: reads of a cell with many versions against reads of a
//! cell with one.
//!
//! Owns: loading one cell with timestamps `1..=versions` plus a one-version cell
//! beside it (then settling, so reads hit one SSTable), and the timed as-of-T reads
//! at random T (each must return the version at T-1) and latest reads of the
//! one-version cell.
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
/// The timestamp of the one-version cell.
const SINGLE_TIMESTAMP: i64 = 1;

/// Both read rates of one engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VersionFigures {
    /// As-of-T reads of the many-versioned cell.
    pub as_of: Measured,
    /// Latest reads of the one-version cell.
    pub single: Measured,
}

/// Writes `versions` versions of the versioned cell, one version of the single
/// cell, and settles.
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
    store.settle()
}

/// Reads timed per round: the two kinds of read alternate in rounds of this many.
const ROUND: usize = 1_000;

/// Reads each cell `reads` times untimed (warm-up), then times `reads` as-of-T
/// reads at random T and `reads` latest reads of the single cell, alternating in
/// rounds of [`ROUND`] so that both rates are taken over the same stretch of time
/// (on a shared virtual machine the speed drifts between two back-to-back phases
/// by more than the effect measured).
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
    for &t in &targets {
        check_as_of(store, t)?;
        check_single(store)?;
    }
    let mut as_of = Measured::default();
    let mut single = Measured::default();
    for round in targets.chunks(ROUND) {
        as_of.add(measure_as_of(store, round)?);
        single.add(measure_single(store, round.len() as u64)?);
    }
    Ok(VersionFigures { as_of, single })
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
        check_single(store)?;
    }
    Ok(Measured {
        ops: reads,
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

fn check_single(store: &dyn VersionedStore) -> BenchResult<()> {
    let got = store.read_latest(SINGLE_ROW)?;
    if got != Some(SINGLE_TIMESTAMP) {
        return Err(BenchError::WrongResult {
            engine: store.name(),
            what: format!("one-version read: expected version {SINGLE_TIMESTAMP}, read {got:?}"),
        });
    }
    Ok(())
}
