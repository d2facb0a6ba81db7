//! In-memory families (HBase's IN_MEMORY, Bigtable's in-memory locality groups):
//! their blocks are cached apart from every other family's, so reading a table
//! larger than the block cache does not push them out, and a family with its
//! block cache off is cached nowhere.

mod common;

use bytes::Bytes;
use common::{open_engine, quiet_options};
use tabula_storage::engine::Engine;
use tabula_storage::types::{ColumnSelector, Mutation};
use tabula_storage::{Durability, FamilySchema, ReadOptions, RowMutation, TableSchema, Tablet};

const NOW: i64 = 1_000_000;
/// Rows of the in-memory family: about 30 KiB of values.
const HOT_ROWS: usize = 300;
/// Rows of the other family: about 6 MiB of values, three times the block cache.
const COLD_ROWS: usize = 20_000;

fn schema(hot_in_memory: bool) -> TableSchema {
    let mut hot = FamilySchema::new(&b"hot"[..]);
    hot.in_memory = hot_in_memory;
    let cold = FamilySchema::new(&b"cold"[..]);
    let mut uncached = FamilySchema::new(&b"uncached"[..]);
    uncached.block_cache = false;
    uncached.in_memory = true;
    TableSchema::new("t", vec![hot, cold, uncached]).expect("valid schema")
}

fn row(i: usize) -> Bytes {
    Bytes::from(format!("row{i:06}"))
}

fn value(family: &str, i: usize, len: usize) -> Bytes {
    let text = format!("{family}-{i}-");
    Bytes::from(format!(
        "{text}{}",
        "x".repeat(len.saturating_sub(text.len()))
    ))
}

fn put(tablet: &Tablet, family: &'static str, rows: usize, len: usize) {
    for i in 0..rows {
        let rm = RowMutation {
            row: row(i),
            mutations: vec![Mutation::Put {
                family: Bytes::from_static(family.as_bytes()),
                qualifier: Bytes::from_static(b"q"),
                timestamp: NOW,
                value: value(family, i, len),
            }],
        };
        tablet.mutate(&rm, Durability::Sync).expect("put");
        // No background flushes here: keep the memtables under their budget.
        if i % 2_000 == 1_999 {
            tablet.flush().expect("flush");
        }
    }
}

/// Reads `rows` rows of `family`, checking each value.
fn read(tablet: &Tablet, family: &'static str, rows: usize, len: usize) {
    for i in 0..rows {
        let cells = tablet
            .get(
                &row(i),
                ReadOptions::latest().columns(vec![ColumnSelector::Family(Bytes::from_static(
                    family.as_bytes(),
                ))]),
            )
            .expect("get");
        assert_eq!(cells.len(), 1, "{family} row {i}");
        assert_eq!(cells[0].value, value(family, i, len), "{family} row {i}");
    }
}

/// An engine with a 2 MiB block cache (and 512 KiB for in-memory families) and the
/// three families written and flushed.
fn loaded(dir: &std::path::Path, hot_in_memory: bool) -> (Engine, std::sync::Arc<Tablet>) {
    let mut opts = quiet_options(dir, NOW);
    opts.memory_budget = 8 << 20;
    opts.block_size = 4096;
    let (engine, tablet) = open_engine(opts, schema(hot_in_memory));
    put(&tablet, "hot", HOT_ROWS, 100);
    put(&tablet, "cold", COLD_ROWS, 300);
    put(&tablet, "uncached", HOT_ROWS, 100);
    tablet.flush().expect("flush");
    (engine, tablet)
}

fn settled_bytes(cache: &tabula_storage::cache::BlockCache) -> u64 {
    cache.run_pending_tasks();
    cache.stats().weighted_bytes
}

#[test]
fn an_in_memory_familys_blocks_stay_cached_through_a_scan_of_more_than_the_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = loaded(dir.path(), true);
    let in_memory = engine.in_memory_block_cache();
    assert_eq!(in_memory.capacity_bytes(), 512 << 10);
    assert_eq!(engine.block_cache().capacity_bytes(), 2 << 20);

    read(&tablet, "hot", HOT_ROWS, 100);
    let hot_bytes = settled_bytes(in_memory);
    assert!(
        hot_bytes > 0,
        "the in-memory family's blocks are cached apart"
    );
    let general_before = settled_bytes(engine.block_cache());

    // Three passes over three times the block cache's worth of another family.
    for _ in 0..3 {
        read(&tablet, "cold", COLD_ROWS, 300);
    }
    assert!(
        settled_bytes(engine.block_cache()) > general_before,
        "the other family fills the general cache"
    );
    assert_eq!(
        settled_bytes(in_memory),
        hot_bytes,
        "nothing but in-memory blocks enters their cache"
    );
    let misses = in_memory.stats().misses;
    read(&tablet, "hot", HOT_ROWS, 100);
    assert_eq!(
        in_memory.stats().misses,
        misses,
        "every in-memory block is still cached after the scan"
    );

    // A family with its block cache off is cached nowhere, in-memory or not.
    let (general, apart) = (
        settled_bytes(engine.block_cache()),
        settled_bytes(in_memory),
    );
    read(&tablet, "uncached", HOT_ROWS, 100);
    assert_eq!(settled_bytes(in_memory), apart);
    assert!(settled_bytes(engine.block_cache()) <= general);
}

#[test]
fn other_families_never_use_the_in_memory_cache() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (engine, tablet) = loaded(dir.path(), false);
    read(&tablet, "hot", HOT_ROWS, 100);
    read(&tablet, "cold", COLD_ROWS, 300);
    let in_memory = engine.in_memory_block_cache();
    assert_eq!(settled_bytes(in_memory), 0);
    assert_eq!(in_memory.stats().hits + in_memory.stats().misses, 0);
    assert!(settled_bytes(engine.block_cache()) > 0);
}
