//! Crash tests of a whole server at chosen points: `tabula serve` built with the
//! `failpoints` feature and started with `TABULA_CRASH_AT=<point>[:hit]` ends at
//! once (no destructor, no flush) at that hit of that point.
//!
//! Writes: between a split's storage step and its catalog rows, between its two
//! catalog rows, after a split's child manifests, in a flush or a compaction. A
//! client writes rows with `mutateRows` until the server dies (or all are written
//! and the server reaches the point in the background); the server is started
//! again on the same data directory, and then every acknowledged row reads back,
//! the table's regions tile the key space without overlap, and the server goes on:
//! every row rewritten (more splits follow), read back, and read back again after
//! one more restart.
//!
//! Table admin: a `createTable` with split keys stopped after the descriptor or
//! after its first tablet, a `deleteTable` stopped after dropping some tablets, a
//! `truncateTable` stopped while dropping or remaking them. After a restart the
//! table is usable (an interrupted delete or truncate is finished by the
//! restart).
//!
//! Run with `cargo test -p tabula-gateway --features failpoints --test
//! server_crash_points` (`.ci/test` does); without the feature this file is empty.
#![cfg(feature = "failpoints")]

mod common;

use std::time::Duration;

use common::t2::{family, table_desc, tname};
use common::*;
use tabula_gateway::crash_points::{CRASH_AT_VAR, CRASH_EXIT_CODE};
use tabula_thrift::hbase::{BatchMutation, THbaseSyncClient};
use tabula_thrift::hbase2::TTHBaseServiceSyncClient;

const ROWS: usize = 2_400;
const VALUE_BYTES: usize = 2_000;
const BATCH: usize = 100;
/// Small enough that the ~5 MB written split the table more than once.
const SETTINGS: &[(&str, &str)] = &[
    ("TABULA_SPLIT_THRESHOLD_MB", "1"),
    ("TABULA_MEMTABLE_SIZE_MB", "1"),
    ("TABULA_BLOCK_SIZE_KB", "4"),
];
const TABLE: &[u8] = b"crashes";

fn row(i: usize) -> String {
    format!("row{i:06}")
}

/// A value naming its row and round, long enough to fill the table quickly.
fn value(i: usize, round: u32) -> Vec<u8> {
    let mut v = format!("round-{round}-row-{i}-").into_bytes();
    v.resize(VALUE_BYTES, b'a' + (i % 26) as u8);
    v
}

/// Writes every row (round `round`) in batches; returns the rows of the batches
/// the server acknowledged, stopping at the first that failed.
fn write_rows(client: &mut Client, round: u32) -> Vec<usize> {
    let mut acked = Vec::new();
    for chunk in (0..ROWS).collect::<Vec<_>>().chunks(BATCH) {
        let batch = chunk
            .iter()
            .map(|&i| {
                BatchMutation::new(row(i).into_bytes(), vec![put_m("cf:v", &value(i, round))])
            })
            .collect();
        if client
            .mutate_rows(TABLE.to_vec(), batch, no_attrs())
            .is_err()
        {
            break;
        }
        acked.extend_from_slice(chunk);
    }
    acked
}

/// The table's regions, sorted, tile the row space: there is one at least, the
/// first starts at the beginning, each starts where the one before ends, the last runs to the end.
fn check_regions(what: &str, client: &mut Client) -> usize {
    let bounds = region_bounds(client);
    assert!(!bounds.is_empty(), "{what}: the table has no region");
    let mut expected_start = String::new();
    for (start, end) in &bounds {
        assert_eq!(
            start, &expected_start,
            "{what}: regions overlap or leave a gap: {bounds:?}"
        );
        expected_start = end.clone();
    }
    assert_eq!(
        expected_start, "",
        "{what}: the last region ends before the end: {bounds:?}"
    );
    bounds.len()
}

/// The table's regions as (start, end) rows, in row order.
fn region_bounds(client: &mut Client) -> Vec<(String, String)> {
    let mut regions = client
        .get_table_regions(TABLE.to_vec())
        .expect("getTableRegions");
    regions.sort_by(|a, b| a.start_key.cmp(&b.start_key));
    regions
        .iter()
        .map(|r| {
            (
                text(r.start_key.as_deref().unwrap_or_default()),
                text(r.end_key.as_deref().unwrap_or_default()),
            )
        })
        .collect()
}

/// Each of `rows` holds one of `rounds`' values (gets of every seventh row and
/// the last, then one full scan, whose rows must all be written ones).
fn check_rows(what: &str, client: &mut Client, rows: &[usize], rounds: &[u32]) {
    let holds =
        |i: usize, got: Option<&[u8]>| rounds.iter().any(|&r| got == Some(&value(i, r)[..]));
    for &i in rows.iter().step_by(7).chain(rows.last()) {
        let got = client
            .get(
                TABLE.to_vec(),
                row(i).into_bytes(),
                b"cf:v".to_vec(),
                no_attrs(),
            )
            .expect("get");
        assert!(
            holds(i, got.first().and_then(|c| c.value.as_deref())),
            "{what}: acknowledged row {i} reads back wrong or not at all"
        );
    }
    let id = client
        .scanner_open_with_scan(TABLE.to_vec(), tscan(), no_attrs())
        .expect("scannerOpenWithScan");
    let scanned = drain(client, id, 250);
    let mut seen = std::collections::BTreeSet::new();
    for r in &scanned {
        let name = text(r.row.as_deref().unwrap_or_default());
        let i: usize = name
            .strip_prefix("row")
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{what}: unexpected row {name}"));
        let cell = r
            .columns
            .as_ref()
            .and_then(|columns| columns.get(b"cf:v".as_slice()))
            .and_then(|cell| cell.value.as_deref());
        assert!(
            holds(i, cell) || (i < ROWS && cell.is_some_and(|v| v.starts_with(b"round-"))),
            "{what}: scanned row {i} holds a value never written"
        );
        assert!(seen.insert(i), "{what}: the scan returned row {i} twice");
    }
    for &i in rows {
        assert!(
            seen.contains(&i),
            "{what}: acknowledged row {i} missing from a full scan"
        );
    }
}

/// Split keys at a third and two thirds of the rows: three tablets.
fn split_keys() -> Vec<Vec<u8>> {
    vec![row(ROWS / 3).into_bytes(), row(2 * ROWS / 3).into_bytes()]
}

/// The table with split keys at a third and two thirds of the rows (three
/// tablets), every row written, then disabled; the server stopped.
/// Creates the table, fills it (it splits), disables it; returns its regions.
fn load_and_disable(data: &std::path::Path) -> Vec<(String, String)> {
    let server = Tabula::start_at_with(data, SETTINGS);
    let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
    c2.create_table(table_desc(TABLE, vec![family("cf", None)]), split_keys())
        .expect("createTable");
    let mut c = server.client();
    assert_eq!(write_rows(&mut c, 1).len(), ROWS);
    c.disable_table(TABLE.to_vec()).expect("disableTable");
    region_bounds(&mut c)
}

/// A full scan of the table returns no row.
fn assert_empty(what: &str, client: &mut Client) {
    let id = client
        .scanner_open_with_scan(TABLE.to_vec(), tscan(), no_attrs())
        .expect("scannerOpenWithScan");
    let left = drain(client, id, 250);
    assert!(
        left.is_empty(),
        "{what}: the table holds {} rows",
        left.len()
    );
}

/// Starts a server on `data` once more and checks that the regions tile the row
/// space and that every row holds its value of round `round`.
fn restart_and_check(data: &std::path::Path, what: &str, round: u32) {
    let server = Tabula::start_at_with(data, SETTINGS);
    let mut c = server.client();
    check_regions(what, &mut c);
    check_rows(what, &mut c, &(0..ROWS).collect::<Vec<_>>(), &[round]);
}

/// Starts a server armed with `point` on `data`, runs `call` (which the crash
/// interrupts) and waits for the server to end there.
fn crash_during(data: &std::path::Path, point: &str, call: impl FnOnce(&Tabula)) {
    let mut armed: Vec<(&str, &str)> = SETTINGS.to_vec();
    armed.push((CRASH_AT_VAR, point));
    let mut server = Tabula::start_at_with(data, &armed);
    call(&server);
    let status = server
        .wait_exit(Duration::from_secs(60))
        .unwrap_or_else(|| {
            panic!(
                "{point}: the server never reached its crash point\n{}",
                server.log()
            )
        });
    assert_eq!(
        status.code(),
        Some(CRASH_EXIT_CODE),
        "{point}: the server ended otherwise ({status})\n{}",
        server.log()
    );
}

/// Runs a server to `point` (armed through `TABULA_CRASH_AT`), restarts it and
/// checks it as the module doc says; `logged`, when given, must appear in the
/// restarted server's log (what recovery had to repair).
fn crash_and_recover(point: &str, logged: Option<&str>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut armed: Vec<(&str, &str)> = SETTINGS.to_vec();
    armed.push((CRASH_AT_VAR, point));
    let acked = {
        let mut server = Tabula::start_at_with(&data, &armed);
        let mut c = server.client();
        create(&mut c, TABLE, &["cf"]);
        let acked = write_rows(&mut c, 1);
        let status = server
            .wait_exit(Duration::from_secs(120))
            .unwrap_or_else(|| {
                panic!(
                    "{point}: the server never reached its crash point ({} rows acknowledged)\n{}",
                    acked.len(),
                    server.log()
                )
            });
        assert_eq!(
            status.code(),
            Some(CRASH_EXIT_CODE),
            "{point}: the server ended otherwise ({status})\n{}",
            server.log()
        );
        acked
    };
    assert!(
        !acked.is_empty(),
        "{point}: no write was acknowledged before the crash"
    );
    eprintln!(
        "{point}: {} rows acknowledged before the crash",
        acked.len()
    );

    let all: Vec<usize> = (0..ROWS).collect();
    {
        let server = Tabula::start_at_with(&data, SETTINGS);
        let mut c = server.client();
        let what = format!("{point}, after the restart");
        if let Some(line) = logged {
            assert!(
                server.log().contains(line),
                "{what}: the log says {line:?}\n{}",
                server.log()
            );
        }
        check_regions(&what, &mut c);
        check_rows(&what, &mut c, &acked, &[1]);
        // Going on: every row again; the table splits further as it grows.
        let rewritten = write_rows(&mut c, 2);
        assert_eq!(
            rewritten.len(),
            ROWS,
            "{what}: every rewrite is acknowledged"
        );
        check_regions(&format!("{what} and the rewrite"), &mut c);
        check_rows(&format!("{what} and the rewrite"), &mut c, &all, &[2]);
    }
    restart_and_check(&data, &format!("{point}, after a second restart"), 2);
}

#[test]
fn a_crash_after_a_split_before_its_catalog_rows() {
    crash_and_recover("split-catalog-unwritten", None);
}

#[test]
fn a_crash_between_a_splits_two_catalog_rows() {
    crash_and_recover(
        "split-catalog-left-written",
        Some("completed a split that stopped between its catalog rows"),
    );
}

#[test]
fn a_crash_after_a_splits_child_manifests() {
    crash_and_recover("split-children-written", None);
}

#[test]
fn a_crash_after_a_flush_installed_its_files() {
    crash_and_recover("flush-installed:3", None);
}

#[test]
fn a_crash_after_a_compaction_installed_its_output() {
    crash_and_recover("compaction-installed", None);
}

/// A `createTable` with split keys stopped after the table's descriptor was
/// stored (`create-table-descriptor-stored`) or after its first tablet
/// (`create-table-tablet-written`): after a restart the table exists (asking again
/// hears so), its regions tile the row space at the split keys asked for, and it
/// takes and keeps every row.
fn create_stopped_at(point: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    crash_during(&data, point, |server| {
        let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
        let answered = c2.create_table(table_desc(TABLE, vec![family("cf", None)]), split_keys());
        assert!(
            answered.is_err(),
            "{point}: createTable was answered before the crash"
        );
    });
    let all: Vec<usize> = (0..ROWS).collect();
    {
        let server = Tabula::start_at_with(&data, SETTINGS);
        let what = format!("{point}, after the restart");
        assert!(
            server
                .log()
                .contains("gave rows no tablet covered an empty tablet"),
            "{what}: the log names the tablets made\n{}",
            server.log()
        );
        let mut c = server.client();
        let again = c.create_table(TABLE.to_vec(), vec![descriptor("cf")]);
        already_exists(again);
        let regions = check_regions(&what, &mut c);
        assert_eq!(
            regions,
            split_keys().len() + 1,
            "{what}: the table has the tablets its split keys asked for"
        );
        let written = write_rows(&mut c, 1);
        assert_eq!(written.len(), ROWS, "{what}: every write is acknowledged");
        check_rows(&what, &mut c, &all, &[1]);
    }
    restart_and_check(&data, &format!("{point}, after a second restart"), 1);
}

#[test]
fn a_crash_after_a_new_tables_descriptor() {
    create_stopped_at("create-table-descriptor-stored");
}

#[test]
fn a_crash_after_a_new_tables_first_tablet() {
    create_stopped_at("create-table-tablet-written");
}

/// A `deleteTable` stopped after dropping the first of the table's tablets: the
/// restart finishes it (the table is gone, as HBase's master rolls the delete
/// forward); a table created again under its name starts empty.
#[test]
fn a_crash_while_deleting_a_table() {
    let point = "drop-tablets-tablet-dropped";
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    load_and_disable(&data);
    crash_during(&data, point, |server| {
        let mut c = server.client();
        assert!(
            c.delete_table(TABLE.to_vec()).is_err(),
            "{point}: deleteTable was answered before the crash"
        );
    });
    let server = Tabula::start_at_with(&data, SETTINGS);
    let mut c = server.client();
    let names = c.get_table_names().expect("getTableNames");
    assert!(
        !names.iter().any(|n| n.as_slice() == TABLE),
        "{point}: the restart finished the delete"
    );
    create(&mut c, TABLE, &["cf"]);
    check_regions(&format!("{point}, created again"), &mut c);
    assert_empty(&format!("{point}, created again"), &mut c);
}

/// A `truncateTable` (keeping the split points) stopped after dropping the second
/// of the table's tablets, or after making the first of its new ones: a restart
/// finishes it, as HBase's master rolls an interrupted truncate forward. The
/// table comes back enabled, empty, with the regions it had, and takes every row
/// again.
#[test]
fn a_crash_while_truncating_a_table() {
    for point in [
        "drop-tablets-tablet-dropped:2",
        "create-table-tablet-written:1",
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        let data = dir.path().join("data");
        let before = load_and_disable(&data);
        assert!(
            before.len() >= 3,
            "the table has its split keys: {before:?}"
        );
        crash_during(&data, point, |server| {
            let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
            assert!(
                c2.truncate_table(tname(TABLE), true).is_err(),
                "{point}: truncateTable was answered before the crash"
            );
        });
        let server = Tabula::start_at_with(&data, SETTINGS);
        let mut c = server.client();
        let what = format!("{point}, after the restart");
        assert!(
            c.is_table_enabled(TABLE.to_vec()).expect("isTableEnabled"),
            "{what}: the truncate was finished"
        );
        check_regions(&what, &mut c);
        assert_eq!(
            region_bounds(&mut c),
            before,
            "{what}: the split points were kept"
        );
        assert_empty(&what, &mut c);
        assert_eq!(
            write_rows(&mut c, 2).len(),
            ROWS,
            "{what}: writes after the truncate"
        );
        check_rows(&what, &mut c, &(0..ROWS).collect::<Vec<_>>(), &[2]);
    }
}
