//! Offline verification of a data directory (`tabula check`), as an operator runs
//! it on a stopped server or a copy of its disk after a disk or file-system
//! incident: every tablet's manifest decoded and its listed files found at their
//! recorded sizes, every SSTable read end to end (footer, meta, index and bloom
//! blocks, then every data block through its checksum, keys strictly ascending,
//! entry count as the meta block records), every commit-log segment's records,
//! and every tablet's recovered edits.
//!
//! Owns: [`check_data_dir`] and its [`CheckReport`].
//! Must not: change, repair or delete any file (it only takes the tablets'
//! `LOCK` while it reads, refusing a directory a server is using), or share a block
//! cache with a running engine (files are opened on their own).

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use crate::dir_lock::DirLock;
use crate::error::{Error, Result};
use crate::iter::KvIter;
use crate::log::{torn_tail_allowed, LogReader, TailPolicy};
use crate::manifest::{self, MANIFEST_FILE};
use crate::recovery::load_edits;
use crate::sstable::SstReader;

/// Directory of the tablets under a data directory.
const TABLETS_DIR: &str = "tablets";
/// This server's commit log under a data directory (embedded lock service).
const LOG_DIR: &str = "log";
/// Every server's commit log, by server name (etcd).
const LOGS_DIR: &str = "logs";
const SST_SUFFIX: &str = ".sst";

/// One file found damaged, missing or inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileProblem {
    pub path: PathBuf,
    pub problem: String,
}

/// What a check read and what it found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// Tablet directories with a manifest.
    pub tablets: usize,
    /// SSTables manifests list, read end to end (each once, however many
    /// manifests list it).
    pub sstables: usize,
    pub sstable_entries: u64,
    pub sstable_bytes: u64,
    /// Commit-log segments read, and their records.
    pub log_segments: usize,
    pub log_records: u64,
    /// Segments that end in a partly written record where the log allows it (the
    /// newest of a log: a crash mid-append, dropped at the next open).
    pub torn_tails: usize,
    /// Recovered edits waiting for their tablet to open.
    pub recovered_edits: u64,
    /// SSTables no manifest lists: outputs of a flush or compaction cut short, or
    /// files of a retired tablet, which the server deletes; not damage, and not
    /// read.
    pub unlisted_sstables: Vec<PathBuf>,
    /// Tablet directories without a manifest (a tablet being created when the
    /// process stopped, or a retired one); not damage.
    pub tablets_without_manifest: Vec<PathBuf>,
    pub problems: Vec<FileProblem>,
}

impl CheckReport {
    /// True when nothing was found damaged, missing or inconsistent.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    fn problem(&mut self, path: &Path, problem: impl Into<String>) {
        self.problems.push(FileProblem {
            path: path.to_path_buf(),
            problem: problem.into(),
        });
    }
}

/// Verifies every file under `data_dir` the storage engine wrote. An error is
/// returned when the directory cannot be read or a process is using it
/// ([`Error::DirectoryInUse`]); damage found in files is in the report.
pub fn check_data_dir(data_dir: &Path) -> Result<CheckReport> {
    if !data_dir.is_dir() {
        return Err(Error::InvalidArgument(format!(
            "{} is not a data directory",
            data_dir.display()
        )));
    }
    let tablets = data_dir.join(TABLETS_DIR);
    // Every engine on the directory holds the tablets' lock (exclusive or shared)
    // and would delete files under the check: refuse while one runs.
    let _held = tablets
        .is_dir()
        .then(|| DirLock::acquire(&tablets))
        .transpose()?;
    let mut report = CheckReport::default();
    check_tablets(&tablets, &mut report)?;
    let mut logs = vec![data_dir.join(LOG_DIR)];
    logs.extend(subdirectories(&data_dir.join(LOGS_DIR))?);
    for log in logs {
        check_log(&log, &mut report)?;
    }
    Ok(report)
}

/// The directories directly under `dir`, sorted; none when `dir` is absent.
fn subdirectories(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(format!("listing {}", dir.display()), e)),
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            dirs.push(entry.path());
        }
    }
    dirs.sort();
    Ok(dirs)
}

/// The SSTable files directly in `dir`, sorted.
fn sstables_in(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries =
        fs::read_dir(dir).map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::io(format!("listing {}", dir.display()), e))?;
        if entry.file_name().to_string_lossy().ends_with(SST_SUFFIX) {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

fn check_tablets(root: &Path, report: &mut CheckReport) -> Result<()> {
    let mut listed = BTreeSet::new();
    let mut present = BTreeSet::new();
    for dir in subdirectories(root)? {
        present.extend(sstables_in(&dir)?);
        if !dir.join(MANIFEST_FILE).exists() {
            report.tablets_without_manifest.push(dir);
            continue;
        }
        let state = match manifest::load(&dir) {
            Ok(Some(state)) => state,
            Ok(None) => continue,
            Err(e) => {
                report.problem(&dir.join(MANIFEST_FILE), e.to_string());
                continue;
            }
        };
        report.tablets += 1;
        for file in &state.files {
            let path = root.join(&file.path);
            match fs::metadata(&path) {
                Ok(meta) if meta.len() != file.size => report.problem(
                    &path,
                    format!(
                        "the manifest of tablet {} records {} bytes, the file has {}",
                        state.tablet_id,
                        file.size,
                        meta.len()
                    ),
                ),
                Ok(_) => {}
                Err(e) => report.problem(
                    &path,
                    format!("listed by the manifest of tablet {}: {e}", state.tablet_id),
                ),
            }
            listed.insert(path);
        }
        match load_edits(&dir, 0) {
            Ok(edits) => report.recovered_edits += edits.len() as u64,
            Err(e) => report.problem(&dir, e.to_string()),
        }
    }
    for (file_id, path) in present.iter().enumerate() {
        if !listed.contains(path) {
            // Garbage the server never reads (often cut short): not verified.
            report.unlisted_sstables.push(path.clone());
            continue;
        }
        match check_sstable(path, file_id as u64) {
            Ok((entries, bytes)) => {
                report.sstables += 1;
                report.sstable_entries += entries;
                report.sstable_bytes += bytes;
            }
            Err(e) => report.problem(path, e.to_string()),
        }
    }
    Ok(())
}

/// Reads one SSTable end to end; returns its entries and size.
fn check_sstable(path: &Path, file_id: u64) -> Result<(u64, u64)> {
    let reader = SstReader::open(path, file_id, None)?;
    let mut iter = reader.iter_without_cache_fill();
    iter.seek_to_first()?;
    let mut entries = 0u64;
    let mut previous: Vec<u8> = Vec::new();
    while iter.valid() {
        if entries > 0 && iter.key() <= previous.as_slice() {
            return Err(Error::corruption(
                path,
                format!("entry {entries}: key not above the one before it"),
            ));
        }
        previous.clear();
        previous.extend_from_slice(iter.key());
        entries += 1;
        iter.next()?;
    }
    let expected = reader.meta().entry_count;
    if entries != expected {
        return Err(Error::corruption(
            path,
            format!("{entries} entries read, the meta block records {expected}"),
        ));
    }
    Ok((entries, reader.file_size()))
}

fn check_log(dir: &Path, report: &mut CheckReport) -> Result<()> {
    let segments = match crate::log::list_segment_paths(dir) {
        Ok(segments) => segments,
        Err(_) if !dir.exists() => return Ok(()),
        Err(e) => return Err(e),
    };
    let allowed = match torn_tail_allowed(&segments) {
        Ok(allowed) => allowed,
        Err(e) => {
            // A header could not be read: check each segment on its own, strictly.
            report.problem(dir, e.to_string());
            vec![false; segments.len()]
        }
    };
    for (path, may_end_torn) in segments.iter().zip(allowed) {
        let policy = if may_end_torn {
            TailPolicy::TolerateTorn
        } else {
            TailPolicy::Strict
        };
        let mut reader = match LogReader::open_with_policy(path, policy) {
            Ok(reader) => reader,
            Err(e) => {
                report.problem(path, e.to_string());
                continue;
            }
        };
        let mut failed = false;
        for record in reader.by_ref() {
            match record {
                Ok(_) => report.log_records += 1,
                Err(e) => {
                    report.problem(path, e.to_string());
                    failed = true;
                    break;
                }
            }
        }
        report.log_segments += 1;
        if !failed && reader.dropped_bytes() > 0 {
            report.torn_tails += 1;
        }
    }
    Ok(())
}
