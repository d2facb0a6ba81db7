//! Sizes a table sets for itself in place of the engine's: a family's block size
//! (HBase's BLOCKSIZE) sets the data block size of the SSTables its flushes and
//! compactions write (sizes outside HBase's bounds are refused), and a table's
//! flush size (HBase's MEMSTORE_FLUSHSIZE) the memtable size its tablets flush at.

mod common;

use bytes::Bytes;
use common::{files_with_suffix, quiet_options, sst_layout, whole_table};
use tabula_storage::types::Mutation;
use tabula_storage::{Durability, Engine, FamilySchema, RowMutation, TableSchema, Tablet};

const NOW: i64 = 1_000_000;
const ROWS: usize = 400;

fn table(name: &str, block_size: Option<u32>) -> TableSchema {
    let mut f = FamilySchema::new(&b"f"[..]);
    f.block_size = block_size;
    TableSchema::new(name, vec![f]).expect("valid schema")
}

/// Writes every row (100-byte values), and flushes them into a file.
fn fill(tablet: &Tablet) {
    write_rows(tablet);
    tablet.flush().expect("flush");
}

/// Writes every row (100-byte values).
fn write_rows(tablet: &Tablet) {
    for i in 0..ROWS {
        let rm = RowMutation {
            row: Bytes::from(format!("row{i:05}")),
            mutations: vec![Mutation::Put {
                family: Bytes::from_static(b"f"),
                qualifier: Bytes::from_static(b"q"),
                timestamp: NOW,
                value: Bytes::from(vec![b'v'; 100]),
            }],
        };
        tablet.mutate(&rm, Durability::Sync).expect("put");
    }
}

/// The data blocks of the one SSTable of tablet `id`, and the largest's size.
fn blocks(dir: &std::path::Path, id: u64) -> (usize, u64) {
    let files = files_with_suffix(&dir.join("tablets").join(id.to_string()), ".sst");
    assert_eq!(files.len(), 1, "{files:?}");
    let layout = sst_layout(&files[0]);
    let largest = layout.data_blocks.iter().map(|b| b.size).max().unwrap_or(0);
    (layout.data_blocks.len(), largest)
}

#[test]
fn a_familys_block_size_shapes_its_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = quiet_options(dir.path(), NOW);
    opts.block_size = 16 << 10;
    let engine = Engine::open(opts).expect("engine");
    let default = engine
        .open_tablet(whole_table(1, table("default", None)))
        .expect("tablet");
    let small = engine
        .open_tablet(whole_table(2, table("small", Some(1024))))
        .expect("tablet");
    fill(&default);
    fill(&small);
    let (default_blocks, _) = blocks(dir.path(), 1);
    let (small_blocks, small_largest) = blocks(dir.path(), 2);
    // About 50 KB of entries: a few 16 KiB blocks, or dozens of 1 KiB ones.
    assert!(default_blocks <= 5, "{default_blocks} blocks of 16 KiB");
    assert!(small_blocks >= 30, "{small_blocks} blocks of 1 KiB");
    assert!(
        small_largest < 2048,
        "a 1 KiB block holds {small_largest} bytes"
    );
    // A compaction keeps the family's size.
    small.major_compact().expect("major compaction");
    let (compacted, _) = blocks(dir.path(), 2);
    assert!(compacted >= 30, "{compacted} blocks after compaction");
}

#[test]
fn block_sizes_outside_hbases_bounds_are_refused() {
    for size in [0, 1023, (16 << 20) + 1] {
        let mut f = FamilySchema::new(&b"f"[..]);
        f.block_size = Some(size);
        assert!(
            TableSchema::new("t", vec![f]).is_err(),
            "block size {size} accepted"
        );
    }
    for size in [1024, 16 << 20] {
        let mut f = FamilySchema::new(&b"f"[..]);
        f.block_size = Some(size);
        assert!(TableSchema::new("t", vec![f]).is_ok(), "block size {size}");
    }
}

#[test]
fn a_tables_flush_size_freezes_its_memtable_early() {
    // The engine flushes memtables at 64 MiB; a table with its own flush size
    // (HBase's MEMSTORE_FLUSHSIZE) of 16 KiB flushes one every 16 KiB written.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = quiet_options(dir.path(), NOW);
    opts.memtable_size = 64 << 20;
    opts.background_work = true;
    let engine = Engine::open(opts).expect("engine");
    let default = engine
        .open_tablet(whole_table(1, table("default", None)))
        .expect("tablet");
    let small = engine
        .open_tablet(whole_table(
            2,
            table("small", None).with_flush_size(Some(16 << 10)),
        ))
        .expect("tablet");
    assert_eq!(small.schema().flush_size(), Some(16 << 10));
    write_rows(&default);
    write_rows(&small);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while small.version().files.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(
        !small.version().files.is_empty(),
        "16 KiB memtables flushed"
    );
    let default_version = default.version();
    assert!(
        default_version.files.is_empty() && default_version.frozen.is_empty(),
        "64 MiB not reached: nothing frozen or flushed"
    );
}
