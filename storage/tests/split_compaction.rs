//! Compactions around a split. A compaction that reaches a tablet after it was
//! split (it waited for the compaction lock while the split ran) must leave the
//! parent's files alone: they belong to the children now. Before the fix such a
//! compaction merged the parent's files and deleted them, and the children lost
//! their data. The children's own compactions then rewrite what they inherited, and
//! the parent's directory is collected.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use common::{open_engine, open_range, quiet_options};
use tabula_storage::{
    Durability, Engine, EngineOptions, Error, FamilySchema, ReadOptions, RowMutation, TableSchema,
    Tablet,
};

const ROWS: usize = 40;

fn row(i: usize) -> Bytes {
    Bytes::from(format!("row{i:03}"))
}

fn value_of(engine: &Engine, tablet: u64, r: &Bytes) -> Option<Bytes> {
    let t = engine.tablet(tablet).expect("child is open");
    let cells = t.get(r, ReadOptions::latest()).expect("get");
    cells.first().map(|c| c.value.clone())
}

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"a"[..]).max_versions(1)]).expect("schema")
}

/// Tablet 1 holding rows 0..ROWS in `files` flushed files (row i in file i % files).
fn filled_tablet(opts: &EngineOptions, files: usize) -> (Engine, Arc<Tablet>) {
    let (engine, tablet) = open_engine(opts.clone(), schema());
    for round in 0..files {
        for i in (round..ROWS).step_by(files) {
            let m = RowMutation::new(row(i)).put(&b"a"[..], &b"q"[..], 10, format!("v{i}"));
            tablet.mutate(&m, Durability::Sync).expect("put");
        }
        tablet.flush().expect("flush");
    }
    (engine, tablet)
}

/// Every row reads back from its child (2 below `row020`, 3 from it on).
fn assert_rows_in_children(engine: &Engine) {
    for i in 0..ROWS {
        let child = if i < 20 { 2 } else { 3 };
        assert_eq!(
            value_of(engine, child, &row(i)),
            Some(Bytes::from(format!("v{i}"))),
            "row {i}"
        );
    }
}

/// A new engine on `opts` with the two children of a split at `row020` open.
fn reopen_children(opts: EngineOptions) -> Engine {
    let engine = Engine::open(opts).expect("reopen");
    for (id, start, end) in [(2u64, "", "row020"), (3, "row020", "")] {
        open_range(&engine, id, schema(), start, end);
    }
    engine
}

#[test]
fn compactions_of_a_split_parent_delete_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = quiet_options(dir.path(), 1_000);
    opts.max_files_per_read = 2;
    // Five flushes: five files, more than the two a read may consult.
    let (engine, parent) = filled_tablet(&opts, 5);
    engine.split_tablet(1, b"row020", 2, 3).expect("split");

    // What a compaction worker holding the parent does once it gets the lock.
    let report = parent.compact_if_needed().expect("skipped, not failed");
    assert_eq!(report.input_files, 0, "a split parent is not compacted");
    assert!(matches!(
        parent.major_compact(),
        Err(Error::TabletClosed { tablet: 1 })
    ));
    assert_rows_in_children(&engine);

    // The children still open from disk alone.
    drop(parent);
    drop(engine);
    assert_rows_in_children(&reopen_children(opts));
}

/// After a split each child rewrites the files it inherited into files of its own;
/// once both have, nothing reads the parent's directory and garbage collection
/// removes it, while every row stays readable (also after a reopen).
#[test]
fn children_rewrite_inherited_files_then_the_parent_directory_is_collected() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = quiet_options(dir.path(), 1_000);
    let (engine, parent) = filled_tablet(&opts, 3);
    drop(parent);
    engine.split_tablet(1, b"row020", 2, 3).expect("split");
    let parent_dir = dir.path().join("tablets").join("1");
    let live = std::collections::HashSet::from([2u64, 3]);

    assert_eq!(engine.collect_garbage(&live).expect("gc"), 0);
    assert!(
        parent_dir.exists(),
        "both children still read the parent's files"
    );

    let left = engine.tablet(2).expect("left child");
    let report = left.compact_if_needed().expect("compact left");
    assert_eq!(report.input_files, 3, "every inherited file is rewritten");
    assert_eq!(report.output_files, 1);
    assert!(left.version().files.iter().all(|f| f.entry.owned));
    assert_eq!(engine.collect_garbage(&live).expect("gc"), 0);
    assert!(
        parent_dir.exists(),
        "the right child still reads the parent's files"
    );
    assert_rows_in_children(&engine);

    let right = engine.tablet(3).expect("right child");
    assert_eq!(
        right
            .compact_if_needed()
            .expect("compact right")
            .input_files,
        3
    );
    // Nothing more to do once the files are the child's own.
    assert_eq!(right.compact_if_needed().expect("again").input_files, 0);
    assert_eq!(engine.collect_garbage(&live).expect("gc"), 1);
    assert!(!parent_dir.exists(), "the parent's directory is collected");
    assert_rows_in_children(&engine);

    drop((left, right));
    drop(engine);
    assert_rows_in_children(&reopen_children(opts));
}

/// A split that fails after the parent stopped taking writes (here: the right
/// child's directory cannot be created) leaves the parent serving reads and writes
/// instead of closed until a restart, and a later split of it succeeds.
#[test]
fn a_failed_split_leaves_the_parent_serving() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = quiet_options(dir.path(), 1_000);
    let (engine, parent) = filled_tablet(&opts, 2);
    drop(parent);
    let blocker = dir.path().join("tablets").join("3");
    std::fs::write(&blocker, b"not a directory").expect("blocker");

    assert!(engine.split_tablet(1, b"row020", 2, 3).is_err());
    let parent = engine.tablet(1).expect("the parent is still open");
    assert!(!parent.is_closed());
    let m = RowMutation::new(row(7)).put(&b"a"[..], &b"q"[..], 11, "after");
    parent
        .mutate(&m, Durability::Sync)
        .expect("the parent takes writes");
    for i in 0..ROWS {
        let expected = if i == 7 {
            Bytes::from("after")
        } else {
            Bytes::from(format!("v{i}"))
        };
        assert_eq!(value_of(&engine, 1, &row(i)), Some(expected), "row {i}");
    }

    drop(parent);
    std::fs::remove_file(&blocker).expect("remove blocker");
    engine
        .split_tablet(1, b"row020", 2, 3)
        .expect("the retry splits");
    assert_eq!(value_of(&engine, 2, &row(7)), Some(Bytes::from("after")));
    assert_eq!(value_of(&engine, 3, &row(30)), Some(Bytes::from("v30")));
}

/// A sequential load's files each hold a stretch of rows: a child is handed only the
/// parent's files with rows in its range, and reads every row all the same.
#[test]
fn children_inherit_only_files_with_rows_in_their_range() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = quiet_options(dir.path(), 1_000);
    let (engine, parent) = open_engine(opts.clone(), schema());
    // Four files of ten consecutive rows each.
    for f in 0..4 {
        for i in f * 10..(f + 1) * 10 {
            let m = RowMutation::new(row(i)).put(&b"a"[..], &b"q"[..], 10, format!("v{i}"));
            parent.mutate(&m, Durability::Sync).expect("put");
        }
        parent.flush().expect("flush");
    }
    drop(parent);
    engine.split_tablet(1, b"row020", 2, 3).expect("split");
    for child in [2, 3] {
        let files = engine.tablet(child).expect("child").version().files.len();
        assert_eq!(files, 2, "child {child} holds the two files of its rows");
    }
    assert_rows_in_children(&engine);
    drop(engine);
    assert_rows_in_children(&reopen_children(opts));
}
