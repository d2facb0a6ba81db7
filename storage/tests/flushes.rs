//! Flushes: what a memtable becomes on disk, and flushes racing writers.
//!
//! Writers of one tablet insert into its memtable outside the tablet's write lock,
//! so a memtable can be frozen, and its flush can start, while inserts into it are
//! still in flight. No flush may miss one: every write acknowledged while flushes
//! and freezes run concurrently must be in the files afterwards. A flush that
//! missed an insert would still claim its sequence number as flushed, so the
//! reopened tablet would not replay it from the log either.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tabula_storage::{
    Durability, Engine, EngineOptions, FamilySchema, ReadOptions, RowMutation, TableSchema,
};

mod common;

const WRITERS: usize = 6;
const ROWS_PER_WRITER: usize = 1_000;

fn row(writer: usize, i: usize) -> Bytes {
    Bytes::from(format!("{writer}/{i:06}"))
}

#[test]
fn flushes_racing_writers_lose_no_acknowledged_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let schema =
        TableSchema::new("t", vec![FamilySchema::new(&b"f"[..]).max_versions(1)]).expect("schema");
    let mut opts = EngineOptions::new(dir.path());
    // Small memtables: writers freeze them often on their own, besides the flusher.
    opts.memtable_size = 64 << 10;
    {
        let engine = Engine::open(opts.clone()).expect("engine opens");
        let tablet = engine
            .open_tablet(common::whole_table(1, schema.clone()))
            .expect("tablet opens");
        let done = Arc::new(AtomicBool::new(false));
        let flusher = {
            let tablet = Arc::clone(&tablet);
            let done = Arc::clone(&done);
            std::thread::spawn(move || {
                let mut flushes = 0;
                while !done.load(Ordering::Acquire) {
                    tablet.flush().expect("flush");
                    flushes += 1;
                }
                flushes
            })
        };
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let tablet = Arc::clone(&tablet);
                std::thread::spawn(move || {
                    for i in 0..ROWS_PER_WRITER {
                        let value = format!("value {w}/{i}").repeat(8);
                        let m = RowMutation::new(row(w, i)).put(&b"f"[..], &b"q"[..], 1, value);
                        tablet.mutate(&m, Durability::Sync).expect("write");
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().expect("writer");
        }
        done.store(true, Ordering::Release);
        let flushes = flusher.join().expect("flusher");
        assert!(flushes > 1, "the flusher ran {flushes} times");
        tablet.flush().expect("last flush");
        engine.close_tablet(1).expect("close");
    }
    // Reopened: the log holds nothing past the flushed sequence numbers.
    let engine = Engine::open(opts).expect("engine reopens");
    let tablet = engine
        .open_tablet(common::whole_table(1, schema))
        .expect("tablet reopens");
    let mut missing = Vec::new();
    for w in 0..WRITERS {
        for i in 0..ROWS_PER_WRITER {
            let cells = tablet.get(&row(w, i), ReadOptions::latest()).expect("get");
            let expected = Bytes::from(format!("value {w}/{i}").repeat(8));
            if cells.first().map(|c| &c.value) != Some(&expected) {
                missing.push((w, i));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} acknowledged writes lost, first {:?}",
        missing.len(),
        missing.first()
    );
}

/// Keys sort by row first, so the families of a table interleave in a memtable; a
/// flush still writes exactly one file per family, each holding only its family.
#[test]
fn a_flush_writes_one_file_per_family() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = common::open_engine(
        common::quiet_options(dir.path(), 1_000),
        common::two_family_schema(),
    );
    for i in 0..500 {
        let m = RowMutation::new(row(0, i))
            .put(&b"a"[..], &b"q"[..], 5, format!("a{i}"))
            .put(&b"z"[..], &b"q"[..], 5, format!("z{i}"));
        tablet.mutate(&m, Durability::Skip).expect("write");
    }
    tablet.flush().expect("flush");
    assert_eq!(tablet.stats().file_count, 2);
    for i in [0, 250, 499] {
        let cells = tablet.get(&row(0, i), ReadOptions::latest()).expect("get");
        let values: Vec<Bytes> = cells.iter().map(|c| c.value.clone()).collect();
        assert_eq!(
            values,
            vec![Bytes::from(format!("a{i}")), Bytes::from(format!("z{i}"))]
        );
    }
    drop(engine);
}

/// The engine counts its flushes and compactions with the bytes they wrote and
/// read (what the metrics port reports).
#[test]
fn flushes_and_compactions_are_counted() {
    let dir = tempfile::tempdir().expect("tempdir");
    let opts = common::quiet_options(dir.path(), 1_000);
    let (engine, tablet) = common::open_engine(opts, common::two_family_schema());
    assert_eq!(engine.activity(), Default::default());
    for round in 0..3u8 {
        for i in 0..50 {
            let m = RowMutation::new(Bytes::from(format!("r{i:03}"))).put(
                &b"a"[..],
                &b"q"[..],
                1 + i64::from(round),
                vec![round; 100],
            );
            tablet.mutate(&m, Durability::Sync).expect("write");
        }
        tablet.flush().expect("flush");
    }
    let flushed = engine.activity();
    assert_eq!(flushed.flushes, 3);
    assert!(flushed.flushed_bytes > 3 * 50 * 100 / 4, "{flushed:?}");
    assert_eq!(flushed.major_compactions, 0);
    tablet.major_compact().expect("major compaction");
    let compacted = engine.activity();
    assert_eq!(compacted.major_compactions, 1, "one family has files");
    assert_eq!(
        compacted.compaction_read_bytes, flushed.flushed_bytes,
        "the major compaction read every flushed file"
    );
    assert!(compacted.compaction_written_bytes > 0);
}
