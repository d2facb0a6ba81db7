//! Log splitting and recovered edits: how logged writes reach their tablets again.
//!
//! Owns: splitting commit-log segments (this server's after a restart, or a dead
//! server's) into one "recovered edits" file per tablet and segment
//! (`<tablet dir>/recovered/<log dir>-<segment>.edits`, records in the commit-log record
//! format, no header), and reading a tablet's edits back in sequence order.
//! Splitting is idempotent: each output is written to a temporary name, fsynced and
//! renamed, so a crash mid-split leaves either nothing or a complete file, and a
//! second split of the same segment rewrites the same file.
//! Must not: apply edits to memtables (the engine does, when opening a tablet).

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::entry::{decode_payload, Entry};
use crate::error::{Error, Result};
use crate::log::{decode_record, encode_record, read_segment, torn_tail_allowed};
use crate::manifest::sync_dir;

const RECOVERED_DIR: &str = "recovered";
const EDITS_SUFFIX: &str = ".edits";

/// One replayed RowMutation.
#[derive(Debug, Clone)]
pub struct RecoveredEdit {
    pub seq: u64,
    pub row: Bytes,
    pub entries: Vec<Entry>,
}

/// Splits `segments` (oldest first) into recovered-edits files under each tablet's
/// directory in `tablets_root`. Records of tablets without a directory (dropped
/// tables) are discarded with a log line.
pub fn split_segments(segments: &[PathBuf], tablets_root: &Path) -> Result<()> {
    let may_be_torn = torn_tail_allowed(segments)?;
    for (i, segment) in segments.iter().enumerate() {
        let records = read_segment(segment, may_be_torn.get(i).copied().unwrap_or(false))?;
        let mut per_tablet: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for r in &records {
            per_tablet
                .entry(r.tablet_id)
                .or_default()
                .extend_from_slice(&encode_record(r.tablet_id, r.seq, &r.payload)?);
        }
        // Named after the log's directory and the segment: segments of different
        // servers' logs share file names, and a tablet may hold edits of several
        // dead servers at once (one file must never replace another's).
        let log_name = segment
            .parent()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let segment_name = segment
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| format!("segment-{i}"));
        let name = format!("{log_name}-{segment_name}");
        for (tablet, bytes) in per_tablet {
            let tdir = tablets_root.join(tablet.to_string());
            if !tdir.is_dir() {
                tracing::warn!(tablet, segment = %segment.display(), "discarding log records of a tablet with no directory");
                continue;
            }
            let rdir = tdir.join(RECOVERED_DIR);
            fs::create_dir_all(&rdir)
                .map_err(|e| Error::io(format!("creating {}", rdir.display()), e))?;
            let target = rdir.join(format!("{name}{EDITS_SUFFIX}"));
            let tmp = rdir.join(format!("{name}{EDITS_SUFFIX}.tmp"));
            let io = |what: &str, e| Error::io(format!("{what} {}", tmp.display()), e);
            let mut f = fs::File::create(&tmp).map_err(|e| io("creating", e))?;
            f.write_all(&bytes).map_err(|e| io("writing", e))?;
            f.sync_all().map_err(|e| io("syncing", e))?;
            fs::rename(&tmp, &target).map_err(|e| io("renaming", e))?;
            sync_dir(&rdir)?;
            fail::fail_point!("recovery-edits-written");
        }
        tracing::info!(segment = %segment.display(), records = records.len(), "split commit log segment");
    }
    Ok(())
}

fn edit_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let rdir = dir.join(RECOVERED_DIR);
    let entries = match fs::read_dir(&rdir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("listing {}", rdir.display()), e)),
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(EDITS_SUFFIX))
        .collect();
    files.sort();
    Ok(files)
}

/// Reads a tablet's recovered edits with sequence numbers above `flushed_seq`, in
/// sequence order.
pub fn load_edits(dir: &Path, flushed_seq: u64) -> Result<Vec<RecoveredEdit>> {
    let mut out = Vec::new();
    for path in edit_files(dir)? {
        let bytes =
            fs::read(&path).map_err(|e| Error::io(format!("reading {}", path.display()), e))?;
        let mut rest = bytes.as_slice();
        while !rest.is_empty() {
            let (record, used) = decode_record(rest)
                .map_err(|e| Error::corruption(&path, format!("recovered edit: {e}")))?;
            rest = rest.get(used..).unwrap_or(&[]);
            if record.seq <= flushed_seq {
                continue;
            }
            let (row, entries) = decode_payload(&record.payload)
                .ok_or_else(|| Error::corruption(&path, "recovered edit payload is malformed"))?;
            out.push(RecoveredEdit {
                seq: record.seq,
                row,
                entries,
            });
        }
    }
    out.sort_by_key(|e| e.seq);
    Ok(out)
}

/// Deletes a tablet's recovered edits (after they were replayed and flushed).
pub fn remove_edits(dir: &Path) -> Result<()> {
    let files = edit_files(dir)?;
    for f in &files {
        fs::remove_file(f).map_err(|e| Error::io(format!("deleting {}", f.display()), e))?;
    }
    if !files.is_empty() {
        sync_dir(&dir.join(RECOVERED_DIR))?;
    }
    Ok(())
}
