//! The workloads `tabula bench` knows.
//!
//! Owns: [`Workload`] (the Bigtable paper's six, YCSB's load phase and core workloads
//! A-F, the time-dimension workload, hot counters) with the names users type, and [`YcsbMix`], the
//! operation proportions of each YCSB workload.
//! Must not: open connections or time anything.

use crate::error::BenchError;

/// Operation proportions and key distribution of one YCSB core workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct YcsbMix {
    pub letter: char,
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
    /// Keys by recency (workload D) instead of scrambled zipfian.
    pub latest: bool,
}

impl YcsbMix {
    /// YCSB's core workloads as its documentation defines them.
    pub fn core(letter: char) -> Option<YcsbMix> {
        let mix = |read, update, insert, scan, rmw, latest| YcsbMix {
            letter,
            read,
            update,
            insert,
            scan,
            read_modify_write: rmw,
            latest,
        };
        Some(match letter {
            'a' => mix(0.5, 0.5, 0.0, 0.0, 0.0, false),
            'b' => mix(0.95, 0.05, 0.0, 0.0, 0.0, false),
            'c' => mix(1.0, 0.0, 0.0, 0.0, 0.0, false),
            'd' => mix(0.95, 0.0, 0.05, 0.0, 0.0, true),
            'e' => mix(0.0, 0.0, 0.05, 0.95, 0.0, false),
            'f' => mix(0.5, 0.0, 0.0, 0.0, 0.5, false),
            _ => return None,
        })
    }

    /// The operation a uniform draw `x` in `[0, 1)` selects.
    pub fn pick(&self, x: f64) -> YcsbOp {
        let mut edge = self.read;
        if x < edge {
            return YcsbOp::Read;
        }
        edge += self.update;
        if x < edge {
            return YcsbOp::Update;
        }
        edge += self.insert;
        if x < edge {
            return YcsbOp::Insert;
        }
        edge += self.scan;
        if x < edge {
            return YcsbOp::Scan;
        }
        if self.read_modify_write > 0.0 {
            YcsbOp::ReadModifyWrite
        } else {
            YcsbOp::Read
        }
    }
}

/// One YCSB operation type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbOp {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

/// Which table a workload uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DataSet {
    /// One cell `cf:q` per row (Bigtable workloads).
    Bigtable,
    /// Records of N fields `cf:field0..` (YCSB).
    Ycsb,
    /// One cell with many versions beside a one-version cell.
    Versions,
}

/// A benchmark workload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// Writes every record once, in key order.
    SeqWrite,
    /// Writes records chosen uniformly at random.
    RandWrite,
    /// Reads records in key order, one get each.
    SeqRead,
    /// Reads records chosen uniformly at random.
    RandRead,
    /// Random reads over a subset small enough to stay cached.
    RandReadMem,
    /// Scans of `--scan-rows` rows from random start rows.
    Scan,
    /// Inserts every YCSB record once.
    YcsbLoad,
    /// A YCSB core workload.
    Ycsb(YcsbMix),
    /// Thrift1 `increment` calls of one counter column on zipfian rows (hot
    /// counters, as page-view or metrics counters are).
    Counters,
    /// As-of-T gets on a many-version cell, then gets of a one-version cell.
    Versions,
    /// One majorCompact call on the Bigtable workloads' table (after a load, so that
    /// the timed runs see the data settled rather than the load's compactions).
    Compact,
}

/// The Bigtable paper's six, in the paper's order of data dependence.
const BIGTABLE: [Workload; 6] = [
    Workload::SeqWrite,
    Workload::RandWrite,
    Workload::SeqRead,
    Workload::RandRead,
    Workload::RandReadMem,
    Workload::Scan,
];

impl Workload {
    /// The name users type and reports carry.
    pub fn name(&self) -> String {
        match self {
            Workload::SeqWrite => "seqwrite".into(),
            Workload::RandWrite => "randwrite".into(),
            Workload::SeqRead => "seqread".into(),
            Workload::RandRead => "randread".into(),
            Workload::RandReadMem => "randread-mem".into(),
            Workload::Scan => "scan".into(),
            Workload::YcsbLoad => "ycsb-load".into(),
            Workload::Ycsb(mix) => format!("ycsb-{}", mix.letter),
            Workload::Versions => "versions".into(),
            Workload::Counters => "counters".into(),
            Workload::Compact => "compact".into(),
        }
    }

    pub fn data_set(&self) -> DataSet {
        match self {
            Workload::YcsbLoad | Workload::Ycsb(_) => DataSet::Ycsb,
            Workload::Versions => DataSet::Versions,
            _ => DataSet::Bigtable,
        }
    }

    /// Parses one name; `bigtable` and `ycsb` expand to their groups.
    pub fn parse(name: &str) -> Result<Vec<Workload>, BenchError> {
        let name = name.trim().to_ascii_lowercase();
        let one = |w| Ok(vec![w]);
        match name.as_str() {
            "bigtable" => Ok(BIGTABLE.to_vec()),
            "ycsb" => {
                let mut all = vec![Workload::YcsbLoad];
                all.extend(
                    "abcdef"
                        .chars()
                        .filter_map(YcsbMix::core)
                        .map(Workload::Ycsb),
                );
                Ok(all)
            }
            "seqwrite" => one(Workload::SeqWrite),
            "randwrite" => one(Workload::RandWrite),
            "seqread" => one(Workload::SeqRead),
            "randread" => one(Workload::RandRead),
            "randread-mem" => one(Workload::RandReadMem),
            "scan" => one(Workload::Scan),
            "ycsb-load" => one(Workload::YcsbLoad),
            "versions" => one(Workload::Versions),
            "counters" => one(Workload::Counters),
            "compact" => one(Workload::Compact),
            other => {
                let mix = other
                    .strip_prefix("ycsb-")
                    .filter(|l| l.len() == 1)
                    .and_then(|l| l.chars().next())
                    .and_then(YcsbMix::core);
                match mix {
                    Some(m) => one(Workload::Ycsb(m)),
                    None => Err(BenchError::UnknownWorkload(other.to_string())),
                }
            }
        }
    }

    /// Parses a list of names in order.
    pub fn parse_list(names: &[String]) -> Result<Vec<Workload>, BenchError> {
        let mut all = Vec::new();
        for n in names.iter().filter(|n| !n.trim().is_empty()) {
            all.extend(Workload::parse(n)?);
        }
        if all.is_empty() {
            return Err(BenchError::InvalidOption("no workload named".into()));
        }
        Ok(all)
    }

    /// Writes every record once instead of running for --operations.
    pub fn is_load(&self) -> bool {
        matches!(self, Workload::SeqWrite | Workload::YcsbLoad)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_expand_in_order() {
        let names: Vec<String> = Workload::parse_list(&["bigtable".into(), "ycsb".into()])
            .unwrap()
            .iter()
            .map(Workload::name)
            .collect();
        assert_eq!(
            names,
            [
                "seqwrite",
                "randwrite",
                "seqread",
                "randread",
                "randread-mem",
                "scan",
                "ycsb-load",
                "ycsb-a",
                "ycsb-b",
                "ycsb-c",
                "ycsb-d",
                "ycsb-e",
                "ycsb-f"
            ]
        );
    }

    #[test]
    fn unknown_names_are_refused() {
        assert!(matches!(
            Workload::parse("ycsb-g"),
            Err(BenchError::UnknownWorkload(_))
        ));
        assert!(Workload::parse("sideways").is_err());
        assert_eq!(Workload::parse("compact").unwrap(), vec![Workload::Compact]);
        assert_eq!(
            Workload::parse("Counters").unwrap(),
            vec![Workload::Counters]
        );
        assert!(Workload::parse_list(&[]).is_err());
    }

    #[test]
    fn every_mix_sums_to_one() {
        for l in "abcdef".chars() {
            let m = YcsbMix::core(l).unwrap();
            let sum = m.read + m.update + m.insert + m.scan + m.read_modify_write;
            assert!((sum - 1.0).abs() < 1e-9, "{l}: {sum}");
        }
    }

    #[test]
    fn picks_follow_the_proportions() {
        let a = YcsbMix::core('a').unwrap();
        assert_eq!(a.pick(0.1), YcsbOp::Read);
        assert_eq!(a.pick(0.7), YcsbOp::Update);
        let e = YcsbMix::core('e').unwrap();
        assert_eq!(e.pick(0.01), YcsbOp::Insert);
        assert_eq!(e.pick(0.5), YcsbOp::Scan);
        let f = YcsbMix::core('f').unwrap();
        assert_eq!(f.pick(0.9), YcsbOp::ReadModifyWrite);
        let d = YcsbMix::core('d').unwrap();
        assert!(d.latest);
        assert_eq!(d.pick(0.99), YcsbOp::Insert);
    }
}
