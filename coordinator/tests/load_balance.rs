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
use tabula_coordinator::catalog::TabletLocation;
use tabula_coordinator::lock::{EmbeddedLockService, LockService};
use tabula_coordinator::{Coordinator, CoordinatorOptions, HotSplitRule};
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

/// A coordinator over two regionservers `rs-a` and `rs-b` sharing `dir`, with
/// `options` (no split for size).
fn two_servers(dir: &Path, options: CoordinatorOptions) -> Arc<Coordinator> {
    let lock: Arc<dyn LockService> =
        Arc::new(EmbeddedLockService::in_memory().expect("lock service"));
    let servers = vec![regionserver(dir, "rs-a"), regionserver(dir, "rs-b")];
    Coordinator::start(
        lock,
        servers,
        CoordinatorOptions {
            split_threshold_bytes: 0,
            ..options
        },
    )
    .expect("coordinator starts")
}

#[test]
fn the_busiest_server_trades_a_hot_tablet_for_a_quiet_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let coord = two_servers(dir.path(), CoordinatorOptions::default());
    let splits: Vec<Bytes> = ["b", "c", "d", "e", "f", "g", "h"]
        .iter()
        .map(|k| Bytes::from_static(k.as_bytes()))
        .collect();
    coord
        .create_table(
            TABLE,
            vec![FamilySchema::new(&b"f"[..])],
            splits,
            Default::default(),
        )
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

/// The tablet serving `row` and its server (reads the catalog).
fn locate(coord: &Coordinator, row: &[u8]) -> (u64, String) {
    locate_in(&coord.table_tablets(TABLE).expect("tablets listed"), row)
}

fn locate_in(tablets: &[TabletLocation], row: &[u8]) -> (u64, String) {
    tablets
        .iter()
        .find(|loc| {
            loc.start_row.as_ref() <= row && (loc.end_row.is_empty() || row < loc.end_row.as_ref())
        })
        .map(|loc| (loc.tablet_id, loc.server.clone()))
        .expect("every row has a tablet")
}

fn row_name(i: usize) -> Bytes {
    Bytes::from(format!("a{i:04}"))
}

/// Reads each of `rows` `rounds` times where the catalog says it is (the
/// catalog is read once: its reads count in its server's load too).
fn read_rows(coord: &Coordinator, rows: std::ops::Range<usize>, rounds: usize) {
    let tablets = coord.table_tablets(TABLE).expect("tablets listed");
    let placed: Vec<(Bytes, u64, String)> = rows
        .map(|i| {
            let row = row_name(i);
            let (tablet, server) = locate_in(&tablets, &row);
            (row, tablet, server)
        })
        .collect();
    for _ in 0..rounds {
        for (row, tablet, server) in &placed {
            let cells = coord
                .server(server)
                .expect("server registered")
                .get(*tablet, row, &ReadSpec::default())
                .expect("get");
            assert_eq!(cells.len(), 1, "row {row:?} is there");
        }
    }
}

#[test]
fn a_tablet_too_hot_to_trade_is_split_and_a_half_moves() {
    const ROWS: usize = 1000;
    const HOT_ROWS: usize = 200;
    let dir = tempfile::tempdir().expect("temp dir");
    let coord = two_servers(
        dir.path(),
        CoordinatorOptions {
            hot_split: HotSplitRule {
                min_rate: 100.0,
                min_bytes: 1000,
            },
            ..CoordinatorOptions::default()
        },
    );
    coord
        .create_table(
            TABLE,
            vec![FamilySchema::new(&b"f"[..])],
            vec![Bytes::from_static(b"m")],
            Default::default(),
        )
        .expect("table created");
    coord.balance().expect("balance");
    // Every row in the first tablet, flushed to a file: it alone takes the load.
    let (hot, hot_server) = locate(&coord, b"a");
    let server = coord.server(&hot_server).expect("server");
    for i in 0..ROWS {
        let mut m = RowMutation::new(row_name(i));
        m.mutations.push(Mutation::Put {
            family: Bytes::from_static(b"f"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: 1,
            value: Bytes::from(vec![b'v'; 200]),
        });
        server.mutate(hot, &m, Durability::Skip).expect("put");
    }
    server.flush_tablet(hot).expect("flush");
    let before = placement(&coord);
    assert_eq!(before.len(), 2);

    // The writes, and reads of the first fifth of the rows: no trade helps (the
    // hot tablet's load goes wherever it goes), so the round splits it where
    // its server saw the load part, not at its data's middle.
    read_rows(&coord, 0..HOT_ROWS, 25);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(coord.balance().expect("balance"), 0, "no trade helps");
    let split = placement(&coord);
    assert_eq!(
        split.len(),
        3,
        "the hot tablet was split: {before:?} -> {split:?}"
    );
    assert!(!split.contains_key(&hot));
    let (first_half, _) = locate(&coord, &row_name(0));
    let (second_half, _) = locate(&coord, &row_name(HOT_ROWS - 1));
    assert_ne!(
        first_half, second_half,
        "the hot rows are parted: {split:?}"
    );

    // The halves' load read: a later round puts them on different servers.
    read_rows(&coord, 0..HOT_ROWS, 25);
    std::thread::sleep(Duration::from_millis(300));
    coord.balance().expect("balance");
    let after = placement(&coord);
    assert_ne!(
        after[&first_half].1, after[&second_half].1,
        "the halves are on different servers: {split:?} -> {after:?}"
    );
    // Every row is still there, and with the load spread nothing more moves or
    // splits.
    read_rows(&coord, 0..ROWS, 1);
    read_rows(&coord, 0..HOT_ROWS, 25);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(coord.balance().expect("balance"), 0);
    assert_eq!(placement(&coord), after, "no further split or move");
}
