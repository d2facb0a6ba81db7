//! The engine-wide memtable budget. Each tablet freezes its memtable only when that
//! one memtable is full, so many tablets written at once could together hold far
//! more than the engine's memory budget; writers must instead stall while all
//! memtables together are over the budget, and the background flushes must release
//! them. Before the stall a 10 M-row load over several tablets pushed the server
//! past its budget.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tabula_storage::tablet::TabletDescriptor;
use tabula_storage::{
    Durability, Engine, EngineOptions, FamilySchema, ReadOptions, RowMutation, TableSchema,
};

const TABLETS: usize = 4;
const ROWS_PER_TABLET: usize = 3_000;
const VALUE_SIZE: usize = 4_096;

fn schema() -> TableSchema {
    TableSchema::new("t", vec![FamilySchema::new(&b"f"[..]).max_versions(1)]).expect("schema")
}

fn row(tablet: usize, i: usize) -> Bytes {
    Bytes::from(format!("{tablet}/{i:06}"))
}

fn value(tablet: usize, i: usize) -> Bytes {
    let mut v = format!("{tablet}/{i}/").into_bytes();
    v.resize(VALUE_SIZE, b'x');
    Bytes::from(v)
}

#[test]
fn writers_across_tablets_stay_within_the_memtable_budget() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut opts = EngineOptions::new(dir.path());
    // Memtables may hold half the budget: 4 MiB. Each tablet's own memtable limit
    // (64 MiB) is never reached, so only the engine-wide stall can hold them.
    opts.memory_budget = 8 << 20;
    let engine = Arc::new(Engine::open(opts).expect("engine opens"));
    let limit = engine.memtable_memory().limit();
    assert_eq!(limit, 4 << 20);

    let mut tablets = Vec::new();
    for t in 0..TABLETS {
        let start = if t == 0 {
            Bytes::new()
        } else {
            Bytes::from(format!("{t}/"))
        };
        let end = if t + 1 == TABLETS {
            Bytes::new()
        } else {
            Bytes::from(format!("{}/", t + 1))
        };
        tablets.push(
            engine
                .open_tablet(TabletDescriptor {
                    id: 10 + t as u64,
                    schema: schema(),
                    start_row: start,
                    end_row: end,
                })
                .expect("tablet opens"),
        );
    }

    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicUsize::new(0));
    let sampler = {
        let (engine, done, peak) = (Arc::clone(&engine), Arc::clone(&done), Arc::clone(&peak));
        std::thread::spawn(move || {
            while !done.load(Ordering::Acquire) {
                peak.fetch_max(engine.memtable_memory().bytes(), Ordering::Relaxed);
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
        })
    };
    let writers: Vec<_> = tablets
        .iter()
        .enumerate()
        .map(|(t, tablet)| {
            let tablet = Arc::clone(tablet);
            std::thread::spawn(move || {
                for i in 0..ROWS_PER_TABLET {
                    let m = RowMutation::new(row(t, i)).put(&b"f"[..], &b"q"[..], 1, value(t, i));
                    tablet.mutate(&m, Durability::Skip).expect("put");
                }
            })
        })
        .collect();
    for w in writers {
        w.join().expect("writer");
    }
    done.store(true, Ordering::Release);
    sampler.join().expect("sampler");

    let written = TABLETS * ROWS_PER_TABLET * VALUE_SIZE;
    assert!(written > 10 * limit, "the test writes well past the budget");
    // Writers check the gauge before they insert, so each may add one row past it.
    let slack = TABLETS * (VALUE_SIZE + 1024);
    let peak = peak.load(Ordering::Relaxed);
    assert!(
        peak <= limit + slack,
        "memtables held {peak} bytes, budget {limit} + {slack}"
    );
    assert!(
        tablets.iter().all(|t| t.stats().file_count > 0),
        "the budget made every tablet flush"
    );
    for (t, tablet) in tablets.iter().enumerate() {
        for i in (0..ROWS_PER_TABLET).step_by(97) {
            let cells = tablet.get(&row(t, i), ReadOptions::latest()).expect("get");
            assert_eq!(cells.first().map(|c| c.value.clone()), Some(value(t, i)));
        }
    }
}
