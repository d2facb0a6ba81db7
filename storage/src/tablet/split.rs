//! Splitting a tablet into two children that share its files.
//!
//! Owns: the split protocol on the storage side: stop writes, flush, then write two
//! child manifests whose files are the parent's files bounded to each child's rows,
//! leaving out files with no row in a child's range (no data is rewritten; later
//! compactions of each child rewrite its half). The
//! parent is closed and its log records are no longer needed.
//! Must not: open the children or update any routing table (the regionserver and
//! coordinator do that with the returned manifests).

use std::collections::HashMap;
use std::path::Path;

use bytes::Bytes;

use super::Tablet;
use crate::error::{Error, Result};
use crate::manifest::{self, FileEntry, ManifestState};

/// The two halves of a split, as written to disk.
#[derive(Debug, Clone)]
pub struct SplitChildren {
    pub left: ManifestState,
    pub right: ManifestState,
}

/// Intersects `[a_start, a_end)` with `[b_start, b_end)` (empty end = unbounded).
fn intersect(a_start: &Bytes, a_end: &Bytes, b_start: &Bytes, b_end: &Bytes) -> (Bytes, Bytes) {
    let start = std::cmp::max(a_start, b_start).clone();
    let end = match (a_end.is_empty(), b_end.is_empty()) {
        (true, _) => b_end.clone(),
        (_, true) => a_end.clone(),
        _ => std::cmp::min(a_end, b_end).clone(),
    };
    (start, end)
}

/// The parent's files as a child over `[start, end)` reads them: bounded to its
/// rows, and without the files none of whose rows (`spans`: path -> first and last
/// row, where known) fall in its range.
fn child_files(
    files: &[FileEntry],
    spans: &HashMap<&str, (Vec<u8>, Vec<u8>)>,
    start: &Bytes,
    end: &Bytes,
) -> Vec<FileEntry> {
    files
        .iter()
        .filter_map(|f| {
            let (s, e) = intersect(&f.bound_start, &f.bound_end, start, end);
            let outside = spans.get(f.path.as_str()).is_some_and(|(first, last)| {
                last.as_slice() < s.as_ref() || (!e.is_empty() && first.as_slice() >= e.as_ref())
            });
            let empty = (!e.is_empty() && s >= e) || outside;
            (!empty).then(|| FileEntry {
                bound_start: s,
                bound_end: e,
                owned: false,
                ..f.clone()
            })
        })
        .collect()
}

impl Tablet {
    /// Splits at `at` into tablets `left_id` (`[start, at)`) and `right_id`
    /// (`[at, end)`). Returns the children's manifests, already stored in their
    /// directories. The parent is closed when this returns Ok.
    pub fn split(&self, at: &[u8], left_id: u64, right_id: u64) -> Result<SplitChildren> {
        self.check_open()?;
        if at.is_empty() || !self.contains_row(at) || at == self.start_row.as_ref() {
            return Err(Error::InvalidArgument(format!(
                "split row is not strictly inside tablet {}",
                self.id
            )));
        }
        if left_id == right_id || left_id == self.id || right_id == self.id {
            return Err(Error::InvalidArgument(
                "split children need two new tablet ids".into(),
            ));
        }
        let _c = self.compaction_lock.lock();
        self.flush()?;
        // Stop writes: nothing may land in the memtable after the final flush.
        self.close_for_writes();
        match self.hand_over(at, left_id, right_id) {
            Ok(children) => Ok(children),
            Err(e) => {
                // The split did not happen: serve the parent again rather than leave
                // its rows unserved until a restart. Child directories written so far
                // are not in any catalog and are collected as garbage.
                self.closed
                    .store(false, std::sync::atomic::Ordering::Release);
                tracing::warn!(tablet = self.id, error = %e, "split failed; the tablet serves on");
                Err(e)
            }
        }
    }

    /// The part of a split after writes stopped: the final flush, then the files
    /// handed to the two children's manifests.
    fn hand_over(&self, at: &[u8], left_id: u64, right_id: u64) -> Result<SplitChildren> {
        self.flush()?;
        // From now on the parent's files belong to the children: should the parent
        // ever be reopened, it must not delete them.
        let parent = {
            let mut m = self.manifest.lock();
            for f in &mut m.files {
                f.owned = false;
            }
            manifest::store(&self.dir, &m)?;
            m.clone()
        };
        fail::fail_point!("split-parent-disowned");
        // Each file's first and last row, so that a child is not handed files
        // wholly outside its rows (a sequential load's files each cover a stretch).
        let version = self.version();
        let spans: HashMap<&str, (Vec<u8>, Vec<u8>)> = version
            .files
            .iter()
            .filter_map(|f| Some((f.entry.path.as_str(), f.row_span()?)))
            .collect();
        let at = Bytes::copy_from_slice(at);
        let make = |id: u64, start: Bytes, end: Bytes| ManifestState {
            tablet_id: id,
            files: child_files(&parent.files, &spans, &start, &end),
            start_row: start,
            end_row: end,
            flushed_seq: parent.max_seq(),
            next_file_no: 1,
        };
        let left = make(left_id, parent.start_row.clone(), at.clone());
        let right = make(right_id, at, parent.end_row.clone());
        let root = self.shared.tablets_root();
        for child in [&left, &right] {
            let dir = root.join(child.tablet_id.to_string());
            create_dir(&dir)?;
            manifest::store(&dir, child)?;
        }
        manifest::sync_dir(root)?;
        fail::fail_point!("split-children-written");
        if let Err(e) = self.shared.log.forget_tablet(self.id) {
            tracing::warn!(tablet = self.id, error = %e, "could not release commit log segments");
        }
        Ok(SplitChildren { left, right })
    }
}

fn create_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}
