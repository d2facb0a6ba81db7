//! The results table: one line per workload with both rates, their ratio, the
//! target and whether it was met.
//!
//! Owns: [`Target`], [`ResultRow`], the version-target line, and their text layout.
//! Must not: run anything.

use std::fmt::Write as _;

/// What a workload's ratio (Tabula / RocksDB) must reach.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Target {
    /// Tabula must reach at least this share of RocksDB's rate.
    AtLeast(f64),
    /// Printed for information only.
    Informative,
}

/// One workload's figures; a rate is `None` when that engine was not run.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    pub workload: String,
    pub tabula: Option<f64>,
    pub rocksdb: Option<f64>,
    pub target: Target,
}

/// `numerator / denominator` when both are known and the denominator is positive.
pub fn ratio(numerator: Option<f64>, denominator: Option<f64>) -> Option<f64> {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d > 0.0 => Some(n / d),
        _ => None,
    }
}

/// "PASS", "MISS", "info", or "-" when a rate is missing.
pub fn verdict(ratio: Option<f64>, target: Target) -> &'static str {
    match (ratio, target) {
        (_, Target::Informative) => "info",
        (None, _) => "-",
        (Some(r), Target::AtLeast(min)) if r >= min => "PASS",
        (Some(_), Target::AtLeast(_)) => "MISS",
    }
}

fn rate(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |r| format!("{r:.0}"))
}

fn times(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |r| format!("{r:.2}x"))
}

fn target_text(t: Target) -> String {
    match t {
        Target::AtLeast(min) => format!(">={min:.2}x"),
        Target::Informative => "-".to_string(),
    }
}

/// The table of workload rows, with a header.
pub fn render_table(rows: &[ResultRow]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<26} {:>14} {:>14} {:>8} {:>8} {:>7}",
        "workload", "tabula_ops_s", "rocksdb_ops_s", "ratio", "target", "result"
    );
    for r in rows {
        let q = ratio(r.tabula, r.rocksdb);
        let _ = writeln!(
            out,
            "{:<26} {:>14} {:>14} {:>8} {:>8} {:>7}",
            r.workload,
            rate(r.tabula),
            rate(r.rocksdb),
            times(q),
            target_text(r.target),
            verdict(q, r.target)
        );
    }
    out
}

/// The lines comparing one engine's as-of-T reads of the many-versioned cell with
/// its reads of one-version cells: the same cell again and again (its block stays
/// in the processor's caches), and random cells holding as much data as the
/// versioned one (the same cache misses, no versions).
pub fn render_version_lines(
    engine: &str,
    versions: u64,
    as_of: f64,
    single: f64,
    spread: f64,
    target: Target,
) -> String {
    let line = |baseline: &str, rate: f64| {
        let q = ratio(Some(as_of), Some(rate));
        format!(
            "{engine}: as-of-T read of a {versions}-version cell {as_of:.0} ops/s vs \
             {baseline} {rate:.0} ops/s = {}  target {}  {}\n",
            times(q),
            target_text(target),
            verdict(q, target)
        )
    };
    line("reads of one 1-version cell", single)
        + &line(
            &format!("random reads of {versions} 1-version cells"),
            spread,
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_follow_the_target() {
        assert_eq!(verdict(Some(1.0), Target::AtLeast(1.0)), "PASS");
        assert_eq!(verdict(Some(0.99), Target::AtLeast(1.0)), "MISS");
        assert_eq!(verdict(None, Target::AtLeast(1.0)), "-");
        assert_eq!(verdict(Some(0.1), Target::Informative), "info");
    }

    #[test]
    fn version_lines_compare_with_both_baselines() {
        let text = render_version_lines("tabula", 100, 300.0, 1000.0, 500.0, Target::AtLeast(0.5));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2);
        assert!(lines[0].contains("one 1-version cell 1000") && lines[0].contains("0.30x"));
        assert!(lines[0].ends_with("MISS"));
        assert!(lines[1].contains("random reads of 100 1-version cells 500"));
        assert!(lines[1].contains("0.60x") && lines[1].ends_with("PASS"));
    }

    #[test]
    fn ratio_needs_both_rates() {
        assert_eq!(ratio(Some(3.0), Some(2.0)), Some(1.5));
        assert_eq!(ratio(None, Some(2.0)), None);
        assert_eq!(ratio(Some(3.0), Some(0.0)), None);
    }

    #[test]
    fn table_has_one_line_per_row_plus_header() {
        let rows = vec![
            ResultRow {
                workload: "fillseq".into(),
                tabula: Some(200_000.0),
                rocksdb: Some(100_000.0),
                target: Target::AtLeast(1.0),
            },
            ResultRow {
                workload: "readrandom_warm".into(),
                tabula: Some(50_000.0),
                rocksdb: None,
                target: Target::AtLeast(0.8),
            },
        ];
        let text = render_table(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("fillseq") && lines[1].contains("2.00x"));
        assert!(lines[1].ends_with("PASS"));
        assert!(lines[2].contains(" - ") && lines[2].ends_with('-'));
    }
}
