//! Sorted runs: a family's files grouped into sequences whose key ranges do not
//! overlap, and the cursor that reads one such sequence as a single source.
//!
//! Owns: [`partition`] (files -> the fewest runs), [`SortedRun`] (the files of one run
//! in key order, with the lookup of the one file that may hold a row) and [`RunIter`]
//! (a cursor that opens the run's files one at a time, as a seek or a step reaches
//! them).
//! Must not: decide which files exist or when they are merged (compaction does), or
//! interpret entries (the read path does).
//!
//! A read consults one cursor per run, not per file, and a get at most one file per
//! run: the number of runs, not of files, is a family's read amplification. A
//! sequential load flushes files that follow one another and form a single run, so
//! they never need merging. Internal keys carry the write's sequence number, so two
//! sources never hold the same key for different writes: runs may mix files of any
//! age and be merged in any order.

use std::sync::Arc;

use bytes::Bytes;

use super::TabletFile;
use crate::error::Result;
use crate::iter::KvIter;
use crate::sstable::SstIter;

/// Files of one family whose key ranges are disjoint, in ascending key order.
#[derive(Clone)]
pub struct SortedRun {
    files: Arc<[Arc<TabletFile>]>,
    bytes: u64,
    holds_markers: bool,
}

impl std::fmt::Debug for SortedRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortedRun")
            .field("files", &self.files.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl SortedRun {
    fn new(files: Vec<Arc<TabletFile>>) -> SortedRun {
        SortedRun {
            bytes: files.iter().map(|f| f.entry.size).sum(),
            holds_markers: files.iter().any(|f| f.reader.meta().delete_count > 0),
            files: files.into(),
        }
    }

    /// The run's files in key order.
    pub fn files(&self) -> &[Arc<TabletFile>] {
        &self.files
    }

    /// Bytes of the run's files.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Whether any file of the run holds a delete marker.
    pub fn holds_markers(&self) -> bool {
        self.holds_markers
    }

    /// The one file whose key range may hold entries of the row whose keys start
    /// with `row_key` (`key::row_start(row)`; runs are disjoint by row); `None`
    /// when no file's range does.
    pub fn file_for_row(&self, row_key: &[u8]) -> Option<&Arc<TabletFile>> {
        let i = self
            .files
            .partition_point(|f| f.reader.meta().largest_key.as_slice() < row_key);
        let f = self.files.get(i)?;
        // Every key of the row starts with `row_key`: the file reaches the row when
        // its first key is below the row's keys or one of them.
        let first = f.reader.meta().smallest_key.as_slice();
        (first < row_key || first.starts_with(row_key)).then_some(f)
    }

    /// The file holding the middle byte of the run.
    pub fn middle_file(&self) -> Option<&Arc<TabletFile>> {
        let half = self.bytes / 2;
        let mut seen = 0u64;
        for f in self.files.iter() {
            seen += f.entry.size;
            if seen > half {
                return Some(f);
            }
        }
        self.files.last()
    }

    /// One cursor over the whole run: the file's own for a run of one (which may be
    /// a bounded view), a [`RunIter`] otherwise.
    pub fn cursor(&self, fill_cache: bool) -> Box<dyn KvIter> {
        match &self.files[..] {
            [only] => only.cursor(fill_cache),
            _ => Box::new(self.iter(fill_cache)),
        }
    }

    /// A cursor over the whole run; `fill_cache` as for [`crate::sstable::SstReader`]
    /// cursors. Every file of a run of several is unbounded (see [`partition`]).
    pub fn iter(&self, fill_cache: bool) -> RunIter {
        RunIter {
            files: Arc::clone(&self.files),
            fill_cache,
            current: 0,
            cursor: None,
        }
    }
}

/// The runs of one family.
#[derive(Debug, Clone)]
pub struct FamilyRuns {
    pub family: Bytes,
    pub runs: Vec<SortedRun>,
}

/// Groups `files` into the fewest sorted runs: sorted by first key, each file joins
/// the first run whose last file's rows all come before its first row. (Taken in
/// order of their first rows, row spans need no more runs than the most that share
/// one row.) Runs are disjoint by row, not only by key, so that a row's entries are
/// in one file of a run. A file read through row bounds (a split child's view of its
/// parent's file), shared with another tablet, or holding no entries (or keys that
/// do not parse) forms a run of its own.
pub fn partition<'a>(files: impl IntoIterator<Item = &'a Arc<TabletFile>>) -> Vec<SortedRun> {
    let mut alone: Vec<Vec<Arc<TabletFile>>> = Vec::new();
    // (file, first row, last row)
    let mut sortable: Vec<(&Arc<TabletFile>, Vec<u8>, Vec<u8>)> = Vec::new();
    for f in files {
        let bounded = !f.entry.bound_start.is_empty() || !f.entry.bound_end.is_empty();
        match f.row_span() {
            Some((first, last)) if !bounded && f.entry.owned => sortable.push((f, first, last)),
            _ => alone.push(vec![Arc::clone(f)]),
        }
    }
    sortable.sort_by(|a, b| {
        a.0.reader
            .meta()
            .smallest_key
            .cmp(&b.0.reader.meta().smallest_key)
    });
    // Each run with the last row of its last file.
    let mut runs: Vec<(Vec<Arc<TabletFile>>, Vec<u8>)> = Vec::new();
    for (f, first, last) in sortable {
        match runs.iter_mut().find(|(_, end)| *end < first) {
            Some((run, end)) => {
                run.push(Arc::clone(f));
                *end = last;
            }
            None => runs.push((vec![Arc::clone(f)], last)),
        }
    }
    runs.into_iter()
        .map(|(run, _)| run)
        .chain(alone)
        .map(SortedRun::new)
        .collect()
}

/// A cursor over a [`SortedRun`]: one file's cursor at a time.
pub struct RunIter {
    files: Arc<[Arc<TabletFile>]>,
    fill_cache: bool,
    /// Index of the file `cursor` is over.
    current: usize,
    cursor: Option<SstIter>,
}

impl RunIter {
    /// Points the cursor at file `i` (reusing it when it is there already).
    fn open(&mut self, i: usize) -> Option<&mut SstIter> {
        if self.current != i || self.cursor.is_none() {
            let file = self.files.get(i)?;
            self.cursor = Some(file.reader.iter_filling_cache(self.fill_cache));
            self.current = i;
        }
        self.cursor.as_mut()
    }

    fn invalidate(&mut self) {
        self.cursor = None;
    }

    /// Moves past exhausted files to the first entry of the next non-empty one.
    fn skip_forward(&mut self) -> Result<()> {
        while !self.valid() {
            let next = self.current + 1;
            match self.open(next) {
                Some(c) => c.seek_to_first()?,
                None => {
                    self.invalidate();
                    return Ok(());
                }
            }
        }
        Ok(())
    }
}

impl KvIter for RunIter {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self
            .files
            .partition_point(|f| f.reader.meta().largest_key.as_slice() < target);
        match self.open(i) {
            Some(c) => c.seek(target)?,
            None => {
                self.invalidate();
                return Ok(());
            }
        }
        self.skip_forward()
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        // Files from `i` on start at or after `target`: nothing in them is below it.
        let mut i = self
            .files
            .partition_point(|f| f.reader.meta().smallest_key.as_slice() < target);
        while i > 0 {
            i -= 1;
            if let Some(c) = self.open(i) {
                c.seek_for_prev(target)?;
                if c.valid() {
                    return Ok(());
                }
            }
        }
        self.invalidate();
        Ok(())
    }

    fn seek_to_first(&mut self) -> Result<()> {
        match self.open(0) {
            Some(c) => c.seek_to_first()?,
            None => {
                self.invalidate();
                return Ok(());
            }
        }
        self.skip_forward()
    }

    fn next(&mut self) -> Result<()> {
        match self.cursor.as_mut() {
            Some(c) if c.valid() => c.next()?,
            _ => return Ok(()),
        }
        self.skip_forward()
    }

    fn valid(&self) -> bool {
        self.cursor.as_ref().is_some_and(KvIter::valid)
    }

    fn key(&self) -> &[u8] {
        self.cursor.as_ref().map(KvIter::key).unwrap_or_default()
    }

    fn value(&self) -> &[u8] {
        self.cursor.as_ref().map(KvIter::value).unwrap_or_default()
    }

    fn value_bytes(&self) -> Bytes {
        self.cursor
            .as_ref()
            .map(KvIter::value_bytes)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::Path;

    use proptest::prelude::*;

    use super::*;
    use crate::key::{self, KeyKind};
    use crate::manifest::FileEntry;
    use crate::schema::{BloomType, Compression};
    use crate::sstable::{SstOptions, SstReader, SstWriter};

    type Model = BTreeMap<Vec<u8>, Vec<u8>>;

    fn cell_key(row: u32, ts: i64) -> Vec<u8> {
        key::encode(
            format!("r{row:05}").as_bytes(),
            b"f",
            b"q",
            KeyKind::Put,
            ts,
            1,
        )
    }

    /// Writes `entries` (ascending) as file `name` under `dir`.
    fn file(
        dir: &Path,
        name: &str,
        entries: &[(Vec<u8>, Vec<u8>)],
        owned: bool,
    ) -> Arc<TabletFile> {
        let path = dir.join(name);
        let opts = SstOptions {
            block_size: 128,
            restart_interval: 4,
            compression: Compression::None,
            bloom: BloomType::RowCol,
            bloom_bits_per_key: 10,
        };
        let mut w = SstWriter::create(&path, opts).expect("create");
        for (k, v) in entries {
            w.add(k, v).expect("add");
        }
        let meta = w.finish().expect("finish");
        Arc::new(TabletFile {
            entry: FileEntry {
                family: Bytes::from_static(b"f"),
                path: name.to_string(),
                bound_start: Bytes::new(),
                bound_end: Bytes::new(),
                owned,
                size: meta.file_size,
                max_seq: meta.max_seq,
            },
            reader: SstReader::open(&path, 0, None).expect("open"),
        })
    }

    fn collect(it: &mut RunIter) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut out = Vec::new();
        while it.valid() {
            out.push((it.key().to_vec(), it.value().to_vec()));
            it.next().expect("next");
        }
        out
    }

    proptest! {
        /// Consecutive slices of one sorted key set, in any order, make one run,
        /// and its cursor reads exactly what one sorted map holds.
        #[test]
        fn a_run_reads_like_one_sorted_map(
            cells in proptest::collection::btree_set((0u32..200, 0i64..4), 1..120),
            cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..6),
            probes in proptest::collection::vec((0u32..210, 0i64..5), 0..30),
        ) {
            let dir = tempfile::tempdir().expect("tempdir");
            let model: Model = cells
                .iter()
                .map(|&(r, ts)| (cell_key(r, ts), format!("{r}/{ts}").into_bytes()))
                .collect();
            let entries: Vec<(Vec<u8>, Vec<u8>)> =
                model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
            // Files end between rows: a run's files hold disjoint rows.
            let row_starts: Vec<usize> = (0..entries.len())
                .filter(|&i| i == 0 || key::row_of(&entries[i].0) != key::row_of(&entries[i - 1].0))
                .collect();
            let mut bounds: Vec<usize> =
                cuts.iter().map(|c| row_starts[c.index(row_starts.len())]).collect();
            bounds.push(0);
            bounds.push(entries.len());
            bounds.sort_unstable();
            bounds.dedup();
            let mut files: Vec<Arc<TabletFile>> = bounds
                .windows(2)
                .enumerate()
                .map(|(i, w)| file(dir.path(), &format!("{i}.sst"), &entries[w[0]..w[1]], true))
                .collect();
            files.reverse();
            let runs = partition(&files);
            prop_assert_eq!(runs.len(), 1);
            let run = &runs[0];
            prop_assert_eq!(run.files().len(), bounds.len() - 1);

            let mut it = run.iter(true);
            it.seek_to_first().expect("seek_to_first");
            prop_assert_eq!(collect(&mut it), entries.clone());

            let mut targets: Vec<Vec<u8>> = model.keys().cloned().collect();
            targets.extend(probes.iter().map(|&(r, ts)| cell_key(r, ts)));
            targets.push(Vec::new());
            targets.push(vec![0xFF; 4]);
            for t in &targets {
                it.seek(t).expect("seek");
                let expect = model.range(t.clone()..).next();
                prop_assert_eq!(
                    it.valid().then(|| (it.key().to_vec(), it.value().to_vec())),
                    expect.map(|(k, v)| (k.clone(), v.clone()))
                );
                it.seek_for_prev(t).expect("seek_for_prev");
                let expect = model.range(..t.clone()).next_back();
                prop_assert_eq!(
                    it.valid().then(|| (it.key().to_vec(), it.value().to_vec())),
                    expect.map(|(k, v)| (k.clone(), v.clone()))
                );
            }
            // A row's lookup finds the file holding its entries, or none.
            for &(r, _) in probes.iter().chain(cells.iter()) {
                let row = format!("r{r:05}");
                let (lower, upper) = (key::row_start(row.as_bytes()), key::row_end(row.as_bytes()));
                let holds = model.range(lower.clone()..upper.clone()).next().is_some();
                match run.file_for_row(&lower) {
                    None => prop_assert!(!holds, "row {} is in a file", row),
                    Some(f) => {
                        let mut c = f.reader.iter();
                        c.seek(&lower).expect("seek");
                        prop_assert_eq!(c.valid() && c.key() < upper.as_slice(), holds);
                    }
                }
            }
        }

        /// Runs are disjoint by row and sorted, and there are as many as the most
        /// files that share one row.
        #[test]
        fn runs_are_as_few_as_the_deepest_overlap(
            spans in proptest::collection::vec((0u32..50, 0u32..12), 1..14),
        ) {
            let dir = tempfile::tempdir().expect("tempdir");
            let files: Vec<Arc<TabletFile>> = spans
                .iter()
                .enumerate()
                .map(|(i, &(start, len))| {
                    let entries: Vec<(Vec<u8>, Vec<u8>)> = (start..=start + len)
                        .map(|r| (cell_key(r, i as i64), vec![b'v']))
                        .collect();
                    file(dir.path(), &format!("{i}.sst"), &entries, true)
                })
                .collect();
            let runs = partition(&files);
            prop_assert_eq!(runs.iter().map(|r| r.files().len()).sum::<usize>(), files.len());
            for run in &runs {
                for pair in run.files().windows(2) {
                    prop_assert!(
                        key::row_of(&pair[0].reader.meta().largest_key)
                            < key::row_of(&pair[1].reader.meta().smallest_key)
                    );
                }
            }
            let deepest = spans
                .iter()
                .map(|&(s, _)| spans.iter().filter(|&&(s2, l2)| s2 <= s && s <= s2 + l2).count())
                .max()
                .unwrap_or(0);
            prop_assert_eq!(runs.len(), deepest);
        }
    }

    #[test]
    fn files_shared_with_a_split_sibling_stay_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = file(
            dir.path(),
            "a.sst",
            &[(cell_key(1, 1), b"a".to_vec())],
            false,
        );
        let b = file(
            dir.path(),
            "b.sst",
            &[(cell_key(5, 1), b"b".to_vec())],
            false,
        );
        let c = file(
            dir.path(),
            "c.sst",
            &[(cell_key(9, 1), b"c".to_vec())],
            true,
        );
        let d = file(
            dir.path(),
            "d.sst",
            &[(cell_key(12, 1), b"d".to_vec())],
            true,
        );
        let runs = partition([&a, &b, &c, &d]);
        assert_eq!(runs.len(), 3, "{runs:?}");
        assert_eq!(runs[0].files().len(), 2, "the owned files form one run");
    }

    #[test]
    fn the_middle_file_holds_the_middle_byte() {
        let dir = tempfile::tempdir().expect("tempdir");
        let files: Vec<Arc<TabletFile>> = (0..5u32)
            .map(|i| {
                let entries: Vec<(Vec<u8>, Vec<u8>)> = (i * 10..i * 10 + 10)
                    .map(|r| (cell_key(r, 1), vec![b'v'; 100]))
                    .collect();
                file(dir.path(), &format!("{i}.sst"), &entries, true)
            })
            .collect();
        let runs = partition(&files);
        assert_eq!(runs.len(), 1);
        let middle = runs[0].middle_file().expect("a middle file");
        assert_eq!(middle.entry.path, "2.sst");
    }
}
