//! `check_data_dir` (what `tabula check` runs) reads a whole data directory and
//! reports damage without changing a file: a clean directory reports its tablets,
//! SSTables, entries and log records; a flipped byte in an SSTable's data block, a
//! missing listed SSTable, a damaged manifest and a flipped byte in an earlier log
//! segment's record are each a problem naming the file; an SSTable no manifest
//! lists is noted, not a problem.

mod common;

use std::path::{Path, PathBuf};

use bytes::Bytes;
use tabula_storage::check::{check_data_dir, CheckReport};
use tabula_storage::{Durability, RowMutation};

const NOW: i64 = 1_700_000_000_000;

fn row_mutation(i: usize) -> RowMutation {
    RowMutation::new(Bytes::from(format!("row{i:05}")))
        .put(
            Bytes::from_static(b"a"),
            Bytes::from_static(b"q"),
            100 + i as i64,
            format!("value-{i}").repeat(5),
        )
        .put(
            Bytes::from_static(b"z"),
            Bytes::from_static(b"q"),
            100 + i as i64,
            format!("{i:06}").repeat(8),
        )
}

/// A data directory with rows 0..300 flushed to SSTables and rows 300..500 in the
/// commit log only, over segments of 4 KiB.
fn written() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = common::quiet_options(dir.path(), NOW);
    opts.log_segment_size = 4096;
    let (engine, tablet) = common::open_engine(opts, common::two_family_schema());
    for i in 0..300 {
        tablet
            .mutate(&row_mutation(i), Durability::Async)
            .expect("write");
    }
    tablet.flush().expect("flush");
    for i in 300..500 {
        tablet
            .mutate(&row_mutation(i), Durability::Async)
            .expect("write");
    }
    drop(tablet);
    drop(engine);
    dir
}

/// A copy of `pristine` to damage.
fn copy_of(pristine: &Path) -> tempfile::TempDir {
    let work = tempfile::tempdir().expect("tempdir");
    common::copy_dir(pristine, work.path());
    work
}

fn sstables(dir: &Path) -> Vec<PathBuf> {
    common::files_with_suffix(&dir.join("tablets"), ".sst")
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    common::files_with_suffix(&dir.join("log"), ".log")
}

fn problem_files(report: &CheckReport) -> Vec<PathBuf> {
    report.problems.iter().map(|p| p.path.clone()).collect()
}

#[test]
fn a_clean_directory_reports_what_it_holds() {
    let dir = written();
    let report = check_data_dir(dir.path()).expect("check runs");
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.tablets, 1);
    // One file per family from the flush, each row one entry per family.
    assert_eq!(report.sstables, 2);
    assert_eq!(report.sstable_entries, 600);
    assert!(report.log_segments >= 4, "{report:?}");
    // Every logged write is a record (the flushed ones too, until the log is
    // trimmed at a later open).
    assert!(report.log_records >= 200, "{report:?}");
    assert!(report.unlisted_sstables.is_empty());
}

#[test]
fn a_flipped_byte_in_a_data_block_names_the_sstable() {
    let pristine = written();
    for sst in sstables(pristine.path()) {
        let layout = common::sst_layout(&sst);
        let block = layout.data_blocks[layout.data_blocks.len() / 2];
        let work = copy_of(pristine.path());
        let damaged = work
            .path()
            .join(sst.strip_prefix(pristine.path()).expect("inside"));
        common::flip_byte(&damaged, block.offset + block.size / 2, 0x10);
        let report = check_data_dir(work.path()).expect("check runs");
        assert_eq!(problem_files(&report), vec![damaged.clone()], "{report:?}");
        // The check changed nothing: the byte is still flipped.
        let again = check_data_dir(work.path()).expect("check runs");
        assert_eq!(again.problems, report.problems);
    }
}

#[test]
fn a_missing_sstable_and_a_damaged_manifest_are_problems() {
    let pristine = written();
    let work = copy_of(pristine.path());
    let sst = sstables(work.path()).remove(0);
    std::fs::remove_file(&sst).expect("remove");
    let report = check_data_dir(work.path()).expect("check runs");
    assert_eq!(problem_files(&report), vec![sst], "{report:?}");

    let work = copy_of(pristine.path());
    let manifest = common::files_with_suffix(&work.path().join("tablets"), "MANIFEST").remove(0);
    common::flip_byte(&manifest, 10, 0x01);
    let report = check_data_dir(work.path()).expect("check runs");
    assert_eq!(problem_files(&report), vec![manifest], "{report:?}");
    // With no manifest to list them, the tablet's files are unlisted, not read.
    assert_eq!(report.unlisted_sstables.len(), 2);
}

#[test]
fn an_unlisted_sstable_is_noted_not_a_problem() {
    let pristine = written();
    let work = copy_of(pristine.path());
    let sst = sstables(work.path()).remove(0);
    let stray = sst.with_file_name("999999.sst");
    std::fs::write(&stray, b"a flush cut short").expect("write");
    let report = check_data_dir(work.path()).expect("check runs");
    assert!(report.is_clean(), "{:?}", report.problems);
    assert_eq!(report.unlisted_sstables, vec![stray]);
}

#[test]
fn a_flipped_byte_in_an_earlier_log_segment_names_it() {
    let pristine = written();
    let segs = segments(pristine.path());
    assert!(segs.len() >= 4, "{segs:?}");
    let work = copy_of(pristine.path());
    let seg = work
        .path()
        .join("log")
        .join(segs[1].file_name().expect("name"));
    let record = common::log_records(&seg)[1];
    common::flip_byte(&seg, record.offset + record.len / 2, 0x40);
    let report = check_data_dir(work.path()).expect("check runs");
    assert_eq!(problem_files(&report), vec![seg], "{report:?}");
}

#[test]
fn a_path_that_is_not_a_directory_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    assert!(check_data_dir(&dir.path().join("absent")).is_err());
}

#[test]
fn a_directory_a_server_is_using_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = common::open_engine(
        common::quiet_options(dir.path(), NOW),
        common::two_family_schema(),
    );
    assert!(matches!(
        check_data_dir(dir.path()),
        Err(tabula_storage::Error::DirectoryInUse { .. })
    ));
    drop(tablet);
    drop(engine);
    assert!(check_data_dir(dir.path()).expect("check runs").is_clean());
}
