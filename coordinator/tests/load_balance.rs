//! The coordinator spreads request load, not only tablet counts: two regionservers
//! in this process share one storage directory (each with its own commit log), a
//! table's tablets are spread evenly by number, and then two tablets of one server
//! take all the reads. The next balancing round, reading the request counters the
//! servers report, trades one of them for a quiet tablet of the other server; a
//! round after that, with the load even, moves nothing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tabula_coordinator::lock::{EmbeddedLockService, LockService};
use tabula_coordinator::{Coordinator, CoordinatorOptions};
use tabula_regionserver::{ReadSpec, RegionServer, RegionServerOptions, TabletService};
use tabula_storage::{Durability, Engine, EngineOptions, FamilySchema, Mutation, RowMutation};

const TABLE: &[u8] = b"hot";

fn regionserver(dir: &Path, name: &str) -> Arc<dyn TabletService> {
    let mut options = EngineOptions::new(dir.join("data"));
    options.log_dir = Some(dir.join("logs").join(name));
    options.memory_budget = 64 << 20;
    let engine = Arc::new(Engine::open(options).expect("engine opens"));
    Arc::new(RegionServer::new(
        engine,
        RegionServerOptions {
            name: name.into(),
            logs_root: Some(dir.join("logs")),
            ..RegionServerOptions::default()
        },
    ))
}

/// Tablet id -> (its start row, the server serving it).
fn placement(coord: &Coordinator) -> HashMap<u64, (Bytes, String)> {
    coord
        .table_tablets(TABLE)
        .expect("tablets listed")
        .into_iter()
        .map(|loc| (loc.tablet_id, (loc.start_row, loc.server)))
        .collect()
}

/// `gets` reads of the row at the start of each of `tablets`, where it is served.
fn read_hot(coord: &Coordinator, tablets: &[u64], gets: usize) {
    let placed = placement(coord);
    for tablet in tablets {
        let (row, server) = &placed[tablet];
        let server = coord.server(server).expect("server registered");
        for _ in 0..gets {
            let cells = server
                .get(*tablet, &hot_row(row), &ReadSpec::default())
                .expect("get");
            assert_eq!(cells.len(), 1, "the hot row is there");
        }
    }
}

fn hot_row(start: &Bytes) -> Bytes {
    let mut row = start.to_vec();
    row.extend_from_slice(b"-hot");
    Bytes::from(row)
}

#[test]
fn the_busiest_server_trades_a_hot_tablet_for_a_quiet_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let lock: Arc<dyn LockService> =
        Arc::new(EmbeddedLockService::in_memory().expect("lock service"));
    let servers = vec![
        regionserver(dir.path(), "rs-a"),
        regionserver(dir.path(), "rs-b"),
    ];
    let coord = Coordinator::start(
        lock,
        servers,
        CoordinatorOptions {
            split_threshold_bytes: 0,
            ..CoordinatorOptions::default()
        },
    )
    .expect("coordinator starts");
    let splits: Vec<Bytes> = ["b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .map(|k| Bytes::from_static(k.as_bytes()))
        .collect();
    coord
        .create_table(TABLE, vec![FamilySchema::new(&b"f"[..])], splits)
        .expect("table created");
    // Counts even first (catalog tablets count too), and a first reading of the
    // counters: no rates yet, so nothing moves for load.
    coord.balance().expect("balance");
    let before = placement(&coord);
    assert_eq!(before.len(), 8);
    let load = coord.load();
    let counts: Vec<usize> = load.values().copied().collect();
    assert!(
        counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1,
        "{load:?}"
    );

    // One row per tablet; two tablets of one server take all the reads.
    for (tablet, (start, server)) in &before {
        let mut m = RowMutation::new(hot_row(start));
        m.mutations.push(Mutation::Put {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: 1,
            value: Bytes::from_static(b"v"),
        });
        coord
            .server(server)
            .expect("server")
            .mutate(*tablet, &m, Durability::Sync)
            .expect("put");
    }
    let busy_server = before
        .values()
        .map(|(_, s)| s.clone())
        .max_by_key(|s| before.values().filter(|(_, t)| t == s).count())
        .expect("a server");
    let mut hot: Vec<u64> = before
        .iter()
        .filter(|(_, (_, s))| *s == busy_server)
        .map(|(t, _)| *t)
        .collect();
    hot.sort_unstable();
    hot.truncate(2);
    assert_eq!(hot.len(), 2, "{before:?}");
    read_hot(&coord, &hot, 3000);
    std::thread::sleep(Duration::from_millis(400));

    let moved = coord.balance().expect("balance");
    let after = placement(&coord);
    assert_eq!(
        moved, 2,
        "one trade: a hot tablet for a quiet one. {before:?} -> {after:?}"
    );
    assert_ne!(
        after[&hot[0]].1, after[&hot[1]].1,
        "the hot tablets are on different servers now: {after:?}"
    );
    let moved_tablets: Vec<u64> = after
        .iter()
        .filter(|(t, (_, s))| before[t].1 != *s)
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(moved_tablets.len(), 2, "{before:?} -> {after:?}");
    assert!(
        moved_tablets.iter().any(|t| hot.contains(t)),
        "{moved_tablets:?}"
    );
    let load = coord.load();
    let counts: Vec<usize> = load.values().copied().collect();
    assert!(
        counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 1,
        "a trade keeps the counts: {load:?}"
    );

    // The same load again, now even: nothing moves (no trading back).
    read_hot(&coord, &hot, 3000);
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(coord.balance().expect("balance"), 0);
    assert_eq!(placement(&coord), after);
    // Every row is still there, where the catalog says.
    read_hot(&coord, &before.keys().copied().collect::<Vec<_>>(), 1);
}
