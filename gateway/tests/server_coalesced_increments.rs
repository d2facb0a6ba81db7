//! Coalesced increments (setting `coalesce_increments`, HBase's
//! `hbase.regionserver.thrift.coalesceIncrement`) on a real server over TCP:
//! Thrift1 increment and incrementRows from many connections all land, summed;
//! a missing table or family is still an error to the caller; and increments
//! queued when the server is asked to stop are applied before it exits.

mod common;

use std::time::Duration;

use common::*;
use tabula_thrift::hbase::{THbaseSyncClient, TIncrement};

fn inc(table: &[u8], row: &str, column: &str, amount: i64) -> TIncrement {
    TIncrement::new(
        table.to_vec(),
        row.as_bytes().to_vec(),
        column.as_bytes().to_vec(),
        amount,
    )
}

/// The counter's value (an increment by 0 writes nothing and answers it).
fn counter(c: &mut Client, table: &[u8], row: &str, column: &str) -> i64 {
    c.atomic_increment(
        table.to_vec(),
        row.as_bytes().to_vec(),
        column.as_bytes().to_vec(),
        0,
    )
    .expect("counter read")
}

#[test]
fn coalesced_increments_all_land_and_survive_a_stop() {
    const THREADS: usize = 4;
    const CALLS: usize = 250;
    let dir = tempfile::tempdir().expect("temp dir");
    let data_dir = dir.path().join("data");
    let table = b"ctr".to_vec();
    let metrics = free_local_addr();
    let coalescing = [
        ("TABULA_COALESCE_INCREMENTS", "true"),
        ("TABULA_METRICS_LISTEN", metrics.as_str()),
    ];
    let mut server = Tabula::start_at_with(&data_dir, &coalescing);
    let mut c = server.client();
    create(&mut c, &table, &["cf"]);

    // Errors the caller can act on are answered, not queued.
    let missing = io_message(c.increment(inc(b"no_such_table", "r", "cf:a", 1)));
    assert!(missing.contains("TableNotFoundException"), "{missing}");
    let no_family = io_message(c.increment(inc(&table, "r", "nope:a", 1)));
    assert!(
        no_family.contains("NoSuchColumnFamilyException"),
        "{no_family}"
    );

    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let mut c = server.client();
            let table = table.clone();
            std::thread::spawn(move || {
                for i in 0..CALLS {
                    if t == 0 && i % 10 == 0 {
                        // incrementRows: ten at once, over two rows.
                        let batch = (0..5)
                            .flat_map(|_| {
                                [inc(&table, "r1", "cf:a", 1), inc(&table, "r2", "cf:b", 2)]
                            })
                            .collect();
                        c.increment_rows(batch).expect("incrementRows");
                    } else {
                        c.increment(inc(&table, "r1", "cf:a", 1))
                            .expect("increment");
                    }
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    // Thread 0 made 25 incrementRows calls (5 of r1 and 5 of r2 each) and 225
    // single increments; the others 250 each.
    let want_a = (THREADS * CALLS - 25 + 25 * 5) as i64;
    let want_b = (25 * 5 * 2) as i64;
    wait_for(
        "every queued increment applied",
        Duration::from_secs(20),
        || {
            counter(&mut c, &table, "r1", "cf:a") == want_a
                && counter(&mut c, &table, "r2", "cf:b") == want_b
        },
    );

    // Every increment went through the queue; nothing is left in it.
    let queued = (THREADS * CALLS - 25 + 25 * 10) as f64;
    assert_eq!(
        metric(&metrics, "tabula_thrift1_increments_queued_total"),
        Some(queued)
    );
    assert_eq!(
        metric(&metrics, "tabula_thrift1_increments_pending_cells"),
        Some(0.0)
    );
    assert_eq!(
        metric(&metrics, "tabula_thrift1_increments_failed_total"),
        Some(0.0)
    );

    // A burst over many rows (a backlog the worker applies one row at a time),
    // then a stop at once: what was queued is applied before the process exits.
    const BURST_ROWS: usize = 3000;
    for chunk in 0..BURST_ROWS / 100 {
        let batch = (0..100)
            .map(|i| inc(&table, &format!("b{:04}", chunk * 100 + i), "cf:a", 1))
            .collect();
        c.increment_rows(batch).expect("incrementRows");
    }
    server.stop();
    let server = Tabula::start_at(&data_dir);
    let mut c = server.client();
    let landed = (0..BURST_ROWS)
        .filter(|i| counter(&mut c, &table, &format!("b{i:04}"), "cf:a") == 1)
        .count();
    assert_eq!(landed, BURST_ROWS, "every queued increment was applied");
    assert_eq!(counter(&mut c, &table, "r1", "cf:a"), want_a);
}
