//! Latency recording for the load generator.
//!
//! Owns the per-operation latency histograms (microseconds, HdrHistogram), the error and
//! unit counters, merging of per-connection recorders and the summaries derived from them.
//! It does no I/O, no timing of its own and no formatting: callers measure, the report
//! module prints.

use std::collections::BTreeMap;
use std::time::Duration;

use hdrhistogram::Histogram;

/// Lowest latency the histograms distinguish, in microseconds.
const LOWEST_US: u64 = 1;
/// Highest latency the histograms track (60 s); larger samples are saturated to it.
const HIGHEST_US: u64 = 60_000_000;
/// Significant decimal figures kept by the histograms.
const SIGNIFICANT_FIGURES: u8 = 3;
/// Quantile iteration density for [`Recorder::percentile_curve`]: points per halving of
/// the distance to 100%, so each extra "nine" of the tail gets about as many points.
const CURVE_TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Summary of one operation's latencies, as reported for a run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OpSummary {
    pub op: String,
    /// Latency samples recorded (successful operations).
    pub count: u64,
    /// Failed operations (no latency sample).
    pub errors: u64,
    /// What the first failure said (the server's exception, a transport error, or
    /// the wrong value read), so a failed run shows why without a server log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Units of work done, e.g. rows returned by scans; one per sample by default.
    pub units: u64,
    pub mean_us: f64,
    pub p50_us: u64,
    pub p95_us: u64,
    pub p99_us: u64,
    pub p999_us: u64,
    pub max_us: u64,
}

/// Latencies, errors and units of one operation.
#[derive(Debug, Clone)]
struct OpStats {
    latencies: Histogram<u64>,
    errors: u64,
    first_error: Option<String>,
    units: u64,
}

impl OpStats {
    /// `None` only if the histogram bounds were invalid, which the constants rule out.
    fn new() -> Option<OpStats> {
        let latencies =
            Histogram::new_with_bounds(LOWEST_US, HIGHEST_US, SIGNIFICANT_FIGURES).ok()?;
        Some(OpStats {
            latencies,
            errors: 0,
            first_error: None,
            units: 0,
        })
    }

    fn merge(&mut self, other: &OpStats) {
        if self.latencies.add(&other.latencies).is_err() {
            // Same bounds on both sides, so this does not happen; saturate rather than lose.
            for value in other.latencies.iter_recorded() {
                self.latencies
                    .saturating_record_n(value.value_iterated_to(), value.count_at_value());
            }
        }
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&other.first_error);
        }
        self.units += other.units;
    }

    fn summary(&self, op: &str) -> OpSummary {
        let latencies = &self.latencies;
        let max_us = if latencies.is_empty() {
            0
        } else {
            latencies.max()
        };
        OpSummary {
            op: op.to_string(),
            count: latencies.len(),
            errors: self.errors,
            first_error: self.first_error.clone(),
            units: self.units,
            mean_us: latencies.mean(),
            p50_us: latencies.value_at_quantile(0.50),
            p95_us: latencies.value_at_quantile(0.95),
            p99_us: latencies.value_at_quantile(0.99),
            p999_us: latencies.value_at_quantile(0.999),
            max_us,
        }
    }
}

/// Records latencies per operation name; one per connection, merged at the end of a run.
#[derive(Debug, Clone, Default)]
pub struct Recorder {
    ops: BTreeMap<&'static str, OpStats>,
}

impl Recorder {
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Records one successful operation taking `latency`, counting one unit.
    pub fn record(&mut self, op: &'static str, latency: Duration) {
        self.record_units(op, latency, 1);
    }

    /// Records one successful operation taking `latency` that did `units` units of work
    /// (e.g. a scan returning `units` rows).
    pub fn record_units(&mut self, op: &'static str, latency: Duration, units: u64) {
        if let Some(stats) = self.stats_mut(op) {
            stats.latencies.saturating_record(micros(latency));
            stats.units += units;
        }
    }

    /// Counts one failed operation; it adds no latency sample. `detail` says what
    /// went wrong; the first one per operation is kept.
    pub fn record_error(&mut self, op: &'static str, detail: &dyn std::fmt::Display) {
        if let Some(stats) = self.stats_mut(op) {
            stats.errors += 1;
            if stats.first_error.is_none() {
                stats.first_error = Some(detail.to_string());
            }
        }
    }

    /// Adds everything `other` recorded to this recorder.
    pub fn merge(&mut self, other: &Recorder) {
        for (op, other_stats) in &other.ops {
            match self.ops.get_mut(op) {
                Some(stats) => stats.merge(other_stats),
                None => {
                    self.ops.insert(op, other_stats.clone());
                }
            }
        }
    }

    /// Latency samples over all operations.
    pub fn total_ops(&self) -> u64 {
        self.ops.values().map(|stats| stats.latencies.len()).sum()
    }

    pub fn total_errors(&self) -> u64 {
        self.ops.values().map(|stats| stats.errors).sum()
    }

    pub fn total_units(&self) -> u64 {
        self.ops.values().map(|stats| stats.units).sum()
    }

    /// One summary per operation, sorted by operation name.
    pub fn summaries(&self) -> Vec<OpSummary> {
        self.ops
            .iter()
            .map(|(op, stats)| stats.summary(op))
            .collect()
    }

    /// Operation names seen so far, sorted.
    pub fn ops(&self) -> Vec<&'static str> {
        self.ops.keys().copied().collect()
    }

    /// Latency distribution of `op` as `(percentile, latency_us)` points, percentile in
    /// 0..=100, ascending. Points get denser towards the tail (about as many between 99 and
    /// 99.9 as between 90 and 99); points past the resolution of the sample count
    /// (percentile above `100 * (1 - 1/count)`) are dropped, and the last point is always
    /// `(100.0, max)`. Empty for an unknown op or one with no samples.
    pub fn percentile_curve(&self, op: &str) -> Vec<(f64, u64)> {
        let Some(stats) = self.ops.get(op) else {
            return Vec::new();
        };
        let latencies = &stats.latencies;
        if latencies.is_empty() {
            return Vec::new();
        }
        let resolvable = 1.0 - 1.0 / latencies.len() as f64;
        let mut curve: Vec<(f64, u64)> = latencies
            .iter_quantiles(CURVE_TICKS_PER_HALF_DISTANCE)
            .map(|point| (point.quantile_iterated_to(), point.value_iterated_to()))
            .filter(|&(quantile, _)| quantile < 1.0 && quantile <= resolvable)
            .map(|(quantile, value)| (quantile * 100.0, value))
            .collect();
        curve.push((100.0, latencies.max()));
        curve
    }

    fn stats_mut(&mut self, op: &'static str) -> Option<&mut OpStats> {
        if !self.ops.contains_key(op) {
            let Some(stats) = OpStats::new() else {
                tracing::error!(op, "latency histogram could not be created");
                return None;
            };
            self.ops.insert(op, stats);
        }
        self.ops.get_mut(op)
    }
}

/// Whole microseconds in `latency` (sub-microsecond latencies count as 0), saturated to u64.
fn micros(latency: Duration) -> u64 {
    u64::try_from(latency.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(value: u64) -> Duration {
        Duration::from_micros(value)
    }

    /// Records 1..=n microseconds for `op`.
    fn uniform(op: &'static str, n: u64) -> Recorder {
        let mut recorder = Recorder::new();
        for value in 1..=n {
            recorder.record(op, us(value));
        }
        recorder
    }

    fn within_precision(actual: u64, expected: u64) -> bool {
        let tolerance = (expected / 1000).max(1);
        actual.abs_diff(expected) <= tolerance
    }

    #[test]
    fn histogram_bounds_are_valid() {
        assert!(OpStats::new().is_some());
    }

    #[test]
    fn known_samples_give_count_and_percentiles() {
        let recorder = uniform("read", 10_000);
        let summaries = recorder.summaries();
        assert_eq!(summaries.len(), 1);
        let read = &summaries[0];
        assert_eq!(read.op, "read");
        assert_eq!(read.count, 10_000);
        assert_eq!(read.units, 10_000);
        assert_eq!(read.errors, 0);
        assert!(within_precision(read.p50_us, 5_000), "p50 {}", read.p50_us);
        assert!(within_precision(read.p95_us, 9_500), "p95 {}", read.p95_us);
        assert!(within_precision(read.p99_us, 9_900), "p99 {}", read.p99_us);
        assert!(
            within_precision(read.p999_us, 9_990),
            "p999 {}",
            read.p999_us
        );
        assert!(within_precision(read.max_us, 10_000), "max {}", read.max_us);
        assert!(
            (read.mean_us - 5_000.5).abs() < 5.0,
            "mean {}",
            read.mean_us
        );
    }

    #[test]
    fn latencies_above_range_saturate() {
        let mut recorder = Recorder::new();
        recorder.record("get", Duration::from_secs(3_600));
        let summary = &recorder.summaries()[0];
        assert_eq!(summary.count, 1);
        assert!(
            within_precision(summary.max_us, HIGHEST_US),
            "max {}",
            summary.max_us
        );
    }

    #[test]
    fn merge_adds_counts_errors_and_units() {
        let mut left = uniform("read", 100);
        left.record_error("read", &"timed out");
        let mut right = uniform("read", 50);
        right.record_units("scan", us(700), 25);
        right.record_error("scan", &"first");
        right.record_error("scan", &"second");

        left.merge(&right);

        assert_eq!(left.ops(), vec!["read", "scan"]);
        assert_eq!(left.total_ops(), 151);
        assert_eq!(left.total_errors(), 3);
        assert_eq!(left.total_units(), 175);
        let summaries = left.summaries();
        assert_eq!(summaries[0].count, 150);
        assert_eq!(summaries[0].errors, 1);
        assert_eq!(summaries[1].count, 1);
        assert_eq!(summaries[1].errors, 2);
        assert_eq!(summaries[1].units, 25);
        assert!(within_precision(summaries[1].p50_us, 700));
        assert_eq!(summaries[0].first_error.as_deref(), Some("timed out"));
        assert_eq!(
            summaries[1].first_error.as_deref(),
            Some("first"),
            "the first failure is kept, later ones only counted"
        );
    }

    #[test]
    fn errors_are_counted_apart_from_samples() {
        let mut recorder = Recorder::new();
        recorder.record_error("update", &"IOError: row locked");
        recorder.record_error("update", &"later");
        recorder.record("update", us(40));
        let summary = &recorder.summaries()[0];
        assert_eq!(summary.count, 1);
        assert_eq!(summary.errors, 2);
        assert_eq!(summary.units, 1);
        assert_eq!(recorder.total_ops(), 1);
        assert_eq!(recorder.total_errors(), 2);
        assert_eq!(summary.first_error.as_deref(), Some("IOError: row locked"));
        let clean = uniform("read", 3);
        assert_eq!(clean.summaries()[0].first_error, None);
    }

    #[test]
    fn op_with_only_errors_has_zero_latencies() {
        let mut recorder = Recorder::new();
        recorder.record_error("insert", &"refused");
        let summary = &recorder.summaries()[0];
        assert_eq!(summary.count, 0);
        assert_eq!(summary.max_us, 0);
        assert_eq!(summary.p99_us, 0);
        assert_eq!(summary.mean_us, 0.0);
        assert!(recorder.percentile_curve("insert").is_empty());
    }

    #[test]
    fn units_count_rows_of_scans() {
        let mut recorder = Recorder::new();
        recorder.record_units("scan", us(900), 100);
        recorder.record_units("scan", us(800), 60);
        recorder.record("put", us(30));
        assert_eq!(recorder.total_ops(), 3);
        assert_eq!(recorder.total_units(), 161);
    }

    #[test]
    fn summaries_are_sorted_by_op_name() {
        let mut recorder = Recorder::new();
        for op in ["update", "read", "scan", "insert"] {
            recorder.record(op, us(10));
        }
        let names: Vec<String> = recorder.summaries().into_iter().map(|s| s.op).collect();
        assert_eq!(names, ["insert", "read", "scan", "update"]);
        assert_eq!(recorder.ops(), ["insert", "read", "scan", "update"]);
    }

    #[test]
    fn percentile_curve_is_ascending_and_samples_the_tail() {
        let recorder = uniform("read", 100_000);
        let curve = recorder.percentile_curve("read");
        assert!(curve.windows(2).all(|pair| pair[0].0 <= pair[1].0));
        assert!(curve.windows(2).all(|pair| pair[0].1 <= pair[1].1));
        assert_eq!(curve.first().map(|point| point.0), Some(0.0));
        assert_eq!(curve.last().map(|point| point.0), Some(100.0));
        let between = |low: f64, high: f64| {
            curve
                .iter()
                .filter(|(percentile, _)| *percentile > low && *percentile <= high)
                .count()
        };
        assert!(between(99.0, 99.9) >= 5, "{curve:?}");
        assert!(between(99.9, 99.99) >= 5, "{curve:?}");
        // 100 000 samples resolve percentiles up to 99.999, not beyond.
        assert!(curve
            .iter()
            .all(|(percentile, _)| *percentile <= 99.999 + 1e-9 || *percentile == 100.0));
        let p99 = curve
            .iter()
            .find(|(percentile, _)| *percentile >= 99.0)
            .map(|point| point.1);
        assert!(
            p99.is_some_and(|value| within_precision(value, 99_000)),
            "{p99:?}"
        );
    }

    #[test]
    fn percentile_curve_of_single_sample() {
        let mut recorder = Recorder::new();
        recorder.record("rmw", us(250));
        let curve = recorder.percentile_curve("rmw");
        assert_eq!(curve.len(), 2, "{curve:?}");
        assert_eq!(curve[0].0, 0.0);
        assert_eq!(curve[1].0, 100.0);
        assert!(within_precision(curve[1].1, 250));
        assert!(recorder.percentile_curve("unknown").is_empty());
    }
}
