//! The set of segments a running commit log owns, and segment file naming.
//!
//! Owns: segment file names and directory discovery; the bookkeeping of which
//! tablets have records in which segment (the highest sequence number per tablet),
//! the tablets' flushed sequence numbers, rotation of the current segment, and the
//! rule that decides when a closed segment is obsolete.
//! Must not: perform file I/O on segment contents or buffer records (the writer
//! does that); it deletes nothing itself, it only says what may be deleted.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::log::record::SEGMENT_HEADER_LEN;

/// Digits in a segment file name's number.
const NAME_DIGITS: usize = 20;
/// Suffix of segment files.
const SEGMENT_SUFFIX: &str = ".log";
/// Suffix of a segment file still being created.
const TEMP_SUFFIX: &str = ".log.tmp";

/// The file name of segment `number`.
pub fn segment_file_name(number: u64) -> String {
    format!("{number:0width$}{SEGMENT_SUFFIX}", width = NAME_DIGITS)
}

/// The name a segment file has while its header is being written.
pub(crate) fn temp_file_name(number: u64) -> String {
    format!("{number:0width$}{TEMP_SUFFIX}", width = NAME_DIGITS)
}

/// The name segment `number` has while it is prepared ahead of time (see
/// `prepare.rs`); like every temporary name, removed when the log opens.
pub(crate) fn prepared_file_name(number: u64) -> String {
    format!(
        "{number:0width$}.prepared{TEMP_SUFFIX}",
        width = NAME_DIGITS
    )
}

/// The segment number in a segment file name, if the name is one.
pub fn parse_segment_file_name(name: &str) -> Option<u64> {
    let digits = name.strip_suffix(SEGMENT_SUFFIX)?;
    if digits.len() != NAME_DIGITS || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The segment number of a path whose file name is a segment name.
pub(crate) fn segment_number_of(path: &Path) -> Option<u64> {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(parse_segment_file_name)
}

/// The segment files in `dir`, oldest (lowest number) first.
pub fn list_segments(dir: &Path) -> Result<Vec<(u64, PathBuf)>> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("listing log directory {}", dir.display()), e))?;
    let mut found = Vec::new();
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::io(format!("listing log directory {}", dir.display()), e))?;
        if let Some(number) = entry.file_name().to_str().and_then(parse_segment_file_name) {
            found.push((number, entry.path()));
        }
    }
    found.sort_unstable_by_key(|(n, _)| *n);
    Ok(found)
}

/// The segment file paths in `dir`, oldest first.
pub fn list_segment_paths(dir: &Path) -> Result<Vec<PathBuf>> {
    Ok(list_segments(dir)?
        .into_iter()
        .map(|(_, path)| path)
        .collect())
}

/// Removes half-created segment files left by a crash during segment creation, and
/// prepared ones a crashed (or recovered) log never used.
pub(crate) fn remove_temp_files(dir: &Path) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::io(format!("listing log directory {}", dir.display()), e))?;
    for entry in entries {
        let entry =
            entry.map_err(|e| Error::io(format!("listing log directory {}", dir.display()), e))?;
        let is_temp = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.ends_with(TEMP_SUFFIX));
        if is_temp {
            let path = entry.path();
            tracing::info!(path = %path.display(), "removing half-created log segment");
            std::fs::remove_file(&path)
                .map_err(|e| Error::io(format!("removing {}", path.display()), e))?;
        }
    }
    Ok(())
}

/// The segment records are currently appended to.
#[derive(Debug, Clone)]
struct ActiveSegment {
    number: u64,
    size: u64,
    records: u64,
    max_seq: HashMap<u64, u64>,
}

/// A segment that no longer receives records.
#[derive(Debug, Clone)]
pub(crate) struct ClosedSegment {
    size: u64,
    /// True once every byte of the segment is written and fsynced.
    sealed: bool,
    /// Highest sequence number per tablet among records still needed.
    max_seq: HashMap<u64, u64>,
}

/// A closed segment that may be deleted.
#[derive(Debug, Clone)]
pub(crate) struct ObsoleteSegment {
    pub(crate) number: u64,
    segment: ClosedSegment,
}

/// What the log knows about its own segments.
#[derive(Debug, Clone)]
pub(crate) struct SegmentSet {
    current: ActiveSegment,
    closed: BTreeMap<u64, ClosedSegment>,
    /// Per tablet: every record with seq <= this is persisted elsewhere.
    flushed: HashMap<u64, u64>,
}

impl SegmentSet {
    /// A set whose only segment is the fresh, empty segment `number`.
    pub(crate) fn new(number: u64) -> Self {
        SegmentSet {
            current: ActiveSegment {
                number,
                size: SEGMENT_HEADER_LEN as u64,
                records: 0,
                max_seq: HashMap::new(),
            },
            closed: BTreeMap::new(),
            flushed: HashMap::new(),
        }
    }

    /// The number of the segment records go to.
    pub(crate) fn current_number(&self) -> u64 {
        self.current.number
    }

    /// Bytes of the current segment, counting records not yet written.
    pub(crate) fn current_size(&self) -> u64 {
        self.current.size
    }

    /// Records appended to the current segment.
    pub(crate) fn current_records(&self) -> u64 {
        self.current.records
    }

    /// True when a record of `len` bytes must go to a new segment: the current one
    /// already holds a record and would grow past `limit`.
    pub(crate) fn should_rotate(&self, len: u64, limit: u64) -> bool {
        self.current.records > 0 && self.current.size.saturating_add(len) > limit
    }

    /// Notes a record appended to the current segment.
    pub(crate) fn record_appended(&mut self, tablet_id: u64, seq: u64, len: u64) {
        let current = &mut self.current;
        current.size = current.size.saturating_add(len);
        current.records += 1;
        let max = current.max_seq.entry(tablet_id).or_insert(seq);
        if seq > *max {
            *max = seq;
        }
    }

    /// Closes the current segment and makes `number + 1` current. Returns the
    /// number of the closed segment.
    pub(crate) fn rotate(&mut self) -> Result<u64> {
        let next =
            self.current.number.checked_add(1).ok_or_else(|| {
                Error::InvalidArgument("commit log segment numbers exhausted".into())
            })?;
        let old = std::mem::replace(
            &mut self.current,
            ActiveSegment {
                number: next,
                size: SEGMENT_HEADER_LEN as u64,
                records: 0,
                max_seq: HashMap::new(),
            },
        );
        let mut max_seq = old.max_seq;
        let flushed = &self.flushed;
        max_seq.retain(|tablet, max| flushed.get(tablet).is_none_or(|f| *f < *max));
        self.closed.insert(
            old.number,
            ClosedSegment {
                size: old.size,
                sealed: false,
                max_seq,
            },
        );
        Ok(old.number)
    }

    /// Notes that closed segment `number` is completely on disk.
    pub(crate) fn mark_sealed(&mut self, number: u64) {
        if let Some(seg) = self.closed.get_mut(&number) {
            seg.sealed = true;
        }
    }

    /// Notes that the tablet's records with seq <= `flushed_seq` are persisted.
    pub(crate) fn mark_flushed(&mut self, tablet_id: u64, flushed_seq: u64) {
        let entry = self.flushed.entry(tablet_id).or_insert(flushed_seq);
        if flushed_seq > *entry {
            *entry = flushed_seq;
        }
        let flushed = *entry;
        for seg in self.closed.values_mut() {
            if seg
                .max_seq
                .get(&tablet_id)
                .is_some_and(|max| *max <= flushed)
            {
                seg.max_seq.remove(&tablet_id);
            }
        }
    }

    /// Notes that none of the tablet's records so far are needed any more.
    pub(crate) fn forget_tablet(&mut self, tablet_id: u64) {
        self.flushed.remove(&tablet_id);
        self.current.max_seq.remove(&tablet_id);
        for seg in self.closed.values_mut() {
            seg.max_seq.remove(&tablet_id);
        }
    }

    /// Removes and returns the closed segments that are sealed and hold no record
    /// any tablet still needs.
    pub(crate) fn take_obsolete(&mut self) -> Vec<ObsoleteSegment> {
        let numbers: Vec<u64> = self
            .closed
            .iter()
            .filter(|(_, seg)| seg.sealed && seg.max_seq.is_empty())
            .map(|(n, _)| *n)
            .collect();
        numbers
            .into_iter()
            .filter_map(|number| {
                self.closed
                    .remove(&number)
                    .map(|segment| ObsoleteSegment { number, segment })
            })
            .collect()
    }

    /// Puts back an obsolete segment whose file could not be deleted.
    pub(crate) fn restore(&mut self, obsolete: ObsoleteSegment) {
        self.closed.insert(obsolete.number, obsolete.segment);
    }

    /// Tablets whose unflushed records keep the oldest closed segment alive, sorted.
    pub(crate) fn oldest_blockers(&self) -> Vec<u64> {
        let mut tablets: Vec<u64> = self
            .closed
            .values()
            .next()
            .map(|seg| seg.max_seq.keys().copied().collect())
            .unwrap_or_default();
        tablets.sort_unstable();
        tablets
    }

    /// Segments on disk owned by this log: the closed ones plus the current one.
    pub(crate) fn count(&self) -> usize {
        self.closed.len() + 1
    }

    /// Bytes of all owned segments, counting records not yet written.
    pub(crate) fn size_bytes(&self) -> u64 {
        self.closed
            .values()
            .fold(self.current.size, |acc, seg| acc.saturating_add(seg.size))
    }

    /// True when `number` is one of this log's own segments.
    pub(crate) fn owns(&self, number: u64) -> bool {
        number == self.current.number || self.closed.contains_key(&number)
    }

    /// The numbers of the closed segments, oldest first (for tests and diagnostics).
    #[cfg(test)]
    pub(crate) fn closed_numbers(&self) -> Vec<u64> {
        self.closed.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn names_roundtrip_and_reject_strangers() {
        assert_eq!(segment_file_name(7), "00000000000000000007.log");
        assert_eq!(parse_segment_file_name("00000000000000000007.log"), Some(7));
        assert_eq!(
            parse_segment_file_name(&segment_file_name(u64::MAX)),
            Some(u64::MAX)
        );
        assert_eq!(parse_segment_file_name("7.log"), None);
        assert_eq!(parse_segment_file_name("0000000000000000000x.log"), None);
        assert_eq!(
            parse_segment_file_name("00000000000000000007.log.tmp"),
            None
        );
        assert_eq!(parse_segment_file_name("99999999999999999999.log"), None);
    }

    #[test]
    fn listing_sorts_and_skips_other_files() {
        let dir = tempfile::tempdir().unwrap();
        for n in [12u64, 3, 7] {
            std::fs::write(dir.path().join(segment_file_name(n)), b"").unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), b"").unwrap();
        std::fs::write(dir.path().join(temp_file_name(13)), b"").unwrap();
        let listed: Vec<u64> = list_segments(dir.path())
            .unwrap()
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert_eq!(listed, vec![3, 7, 12]);
        remove_temp_files(dir.path()).unwrap();
        assert!(!dir.path().join(temp_file_name(13)).exists());
        assert!(dir.path().join("notes.txt").exists());
    }

    #[test]
    fn rotation_is_refused_for_an_empty_segment() {
        let mut set = SegmentSet::new(1);
        assert!(!set.should_rotate(1 << 30, 100));
        set.record_appended(1, 1, 50);
        assert!(!set.should_rotate(14, 100));
        assert!(set.should_rotate(15, 100));
    }

    #[test]
    fn unsealed_segments_are_never_obsolete() {
        let mut set = SegmentSet::new(1);
        set.record_appended(5, 10, 100);
        set.rotate().unwrap();
        set.mark_flushed(5, 10);
        assert!(set.take_obsolete().is_empty());
        assert_eq!(set.closed_numbers(), vec![1]);
        set.mark_sealed(1);
        let gone: Vec<u64> = set.take_obsolete().iter().map(|o| o.number).collect();
        assert_eq!(gone, vec![1]);
        assert_eq!(set.count(), 1);
    }

    #[test]
    fn blockers_name_the_unflushed_tablets_of_the_oldest_segment() {
        let mut set = SegmentSet::new(1);
        set.record_appended(3, 1, 10);
        set.record_appended(1, 4, 10);
        set.record_appended(2, 9, 10);
        set.rotate().unwrap();
        set.record_appended(4, 1, 10);
        set.rotate().unwrap();
        set.mark_flushed(1, 4);
        assert_eq!(set.oldest_blockers(), vec![2, 3]);
        set.mark_flushed(2, 8);
        assert_eq!(set.oldest_blockers(), vec![2, 3]);
        set.forget_tablet(3);
        assert_eq!(set.oldest_blockers(), vec![2]);
    }

    #[derive(Debug, Clone)]
    enum Op {
        Append { tablet: u64 },
        Rotate,
        SealAll,
        Flush { tablet: u64, back: u64 },
        Forget { tablet: u64 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (0u64..4).prop_map(|tablet| Op::Append { tablet }),
            2 => Just(Op::Rotate),
            1 => Just(Op::SealAll),
            3 => (0u64..4, 0u64..3).prop_map(|(tablet, back)| Op::Flush { tablet, back }),
            1 => (0u64..4).prop_map(|tablet| Op::Forget { tablet }),
        ]
    }

    /// A record in the model: which tablet, which seq, and whether a later
    /// `forget_tablet` made it unnecessary.
    #[derive(Debug, Clone)]
    struct ModelRecord {
        tablet: u64,
        seq: u64,
        forgotten: bool,
    }

    proptest! {
        /// The set deletes exactly the sealed closed segments whose every record is
        /// flushed or forgotten, and never the current one.
        #[test]
        fn obsolete_rule_matches_model(ops in proptest::collection::vec(op(), 1..80)) {
            let mut set = SegmentSet::new(1);
            let mut segments: BTreeMap<u64, Vec<ModelRecord>> = BTreeMap::new();
            segments.insert(1, Vec::new());
            let mut current = 1u64;
            let mut sealed: BTreeSet<u64> = BTreeSet::new();
            let mut next_seq: HashMap<u64, u64> = HashMap::new();
            let mut flushed: HashMap<u64, u64> = HashMap::new();
            let mut deleted: BTreeSet<u64> = BTreeSet::new();

            for op in ops {
                match op {
                    Op::Append { tablet } => {
                        let seq = next_seq.entry(tablet).or_insert(0);
                        *seq += 1;
                        set.record_appended(tablet, *seq, 10);
                        segments.entry(current).or_default().push(ModelRecord { tablet, seq: *seq, forgotten: false });
                    }
                    Op::Rotate => {
                        if set.current_records() > 0 {
                            set.rotate().unwrap();
                            current += 1;
                            segments.insert(current, Vec::new());
                        }
                    }
                    Op::SealAll => {
                        for n in *segments.keys().next().unwrap_or(&1)..current {
                            set.mark_sealed(n);
                            sealed.insert(n);
                        }
                    }
                    Op::Flush { tablet, back } => {
                        let s = next_seq.get(&tablet).copied().unwrap_or(0).saturating_sub(back);
                        set.mark_flushed(tablet, s);
                        let f = flushed.entry(tablet).or_insert(s);
                        *f = (*f).max(s);
                    }
                    Op::Forget { tablet } => {
                        set.forget_tablet(tablet);
                        flushed.remove(&tablet);
                        for recs in segments.values_mut() {
                            for r in recs.iter_mut().filter(|r| r.tablet == tablet) {
                                r.forgotten = true;
                            }
                        }
                    }
                }
                for o in set.take_obsolete() {
                    deleted.insert(o.number);
                }
                for (n, recs) in &segments {
                    let needed = recs.iter().any(|r| {
                        !r.forgotten && flushed.get(&r.tablet).is_none_or(|f| r.seq > *f)
                    });
                    let expect_deleted = *n != current && sealed.contains(n) && !needed;
                    prop_assert_eq!(deleted.contains(n), expect_deleted, "segment {}", n);
                }
                let live = segments.keys().filter(|n| !deleted.contains(n)).count();
                prop_assert_eq!(set.count(), live);
                prop_assert!(set.owns(current));
            }
        }
    }
}
