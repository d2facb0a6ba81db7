//! The timed loops: fills, point reads and scans, the same code for both engines.
//!
//! Owns: [`Measured`] and the `measure_*` functions, which run a prepared list of
//! key numbers against a [`Store`] and time only the loop (key lists and values
//! are made beforehand). Reads check that every key is found with its full value,
//! so a broken store cannot look fast.
//! Must not: open, settle or close stores (see `runner`).

use std::time::{Duration, Instant};

use crate::data::{key, ValuePool};
use crate::error::{BenchError, BenchResult};
use crate::store::{Store, WriteMode};

/// Operations done and the time they took.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Measured {
    pub ops: u64,
    pub elapsed: Duration,
}

impl Measured {
    /// Adds another measurement's operations and time to this one.
    pub fn add(&mut self, other: Measured) {
        self.ops += other.ops;
        self.elapsed += other.elapsed;
    }

    /// Throughput in operations per second.
    pub fn ops_per_sec(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.ops as f64 / secs
        } else {
            0.0
        }
    }
}

/// Times `f` and pairs the time with `ops`.
fn timed(ops: u64, f: impl FnOnce() -> BenchResult<()>) -> BenchResult<Measured> {
    let start = Instant::now();
    f()?;
    Ok(Measured {
        ops,
        elapsed: start.elapsed(),
    })
}

/// Writes the keys numbered in `order`, one writer.
#[inline(never)] // a named frame for profilers
pub fn measure_fill(
    store: &dyn Store,
    order: &[u64],
    values: &ValuePool,
    mode: WriteMode,
) -> BenchResult<Measured> {
    timed(order.len() as u64, || {
        for &i in order {
            store.put(&key(i), &values.value(i), mode)?;
        }
        Ok(())
    })
}

/// Writes the keys numbered in `order` from `writers` threads at once, each taking
/// an interleaved share.
#[inline(never)] // a named frame for profilers
pub fn measure_concurrent_fill(
    store: &dyn Store,
    order: &[u64],
    values: &ValuePool,
    writers: usize,
    mode: WriteMode,
) -> BenchResult<Measured> {
    let writers = writers.max(1);
    timed(order.len() as u64, || {
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..writers)
                .map(|w| {
                    scope.spawn(move || -> BenchResult<()> {
                        for &i in order.iter().skip(w).step_by(writers) {
                            store.put(&key(i), &values.value(i), mode)?;
                        }
                        Ok(())
                    })
                })
                .collect();
            for h in handles {
                h.join()
                    .map_err(|_| BenchError::WorkerPanicked("writer"))??;
            }
            Ok(())
        })
    })
}

/// Reads the keys numbered in `order`; each must hold a `value_size` value.
#[inline(never)] // a named frame for profilers
pub fn measure_reads(store: &dyn Store, order: &[u64], value_size: usize) -> BenchResult<Measured> {
    timed(order.len() as u64, || {
        for &i in order {
            match store.get_len(&key(i))? {
                Some(len) if len == value_size => {}
                other => {
                    return Err(BenchError::WrongResult {
                        engine: store.name(),
                        what: format!(
                            "key {i}: expected a {value_size}-byte value, read {other:?}"
                        ),
                    })
                }
            }
        }
        Ok(())
    })
}

/// Seeks to each key numbered in `starts` and reads `rows` rows from there; each
/// scan must return `rows` full rows.
#[inline(never)] // a named frame for profilers
pub fn measure_scans(
    store: &dyn Store,
    starts: &[u64],
    rows: usize,
    value_size: usize,
) -> BenchResult<Measured> {
    timed(starts.len() as u64, || {
        for &i in starts {
            let (read, bytes) = store.scan(&key(i), rows)?;
            if read != rows || bytes != rows * value_size {
                return Err(BenchError::WrongResult {
                    engine: store.name(),
                    what: format!(
                        "scan from key {i}: expected {rows} rows of {value_size} bytes, \
                         read {read} rows, {bytes} bytes"
                    ),
                });
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ops_per_sec_divides_by_seconds() {
        let m = Measured {
            ops: 500,
            elapsed: Duration::from_millis(250),
        };
        assert!((m.ops_per_sec() - 2000.0).abs() < 1e-6);
        let zero = Measured {
            ops: 5,
            elapsed: Duration::ZERO,
        };
        assert_eq!(zero.ops_per_sec(), 0.0);
    }
}
