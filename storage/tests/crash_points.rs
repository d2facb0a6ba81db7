//! Crash tests at chosen points: where the SIGKILL test (`kill_nine.rs`) stops a
//! writer at random moments, these stop it exactly between two steps of a
//! multi-step change of durable state (the engine's `fail::fail_point!`s, compiled
//! in with the `failpoints` feature): a manifest written but not renamed, flushed
//! files not yet in the manifest, a compaction installed but its inputs not yet
//! deleted, a log segment sealed or deleted, a split half done, a recovery half
//! done. A child process writes synced RowMutations (reporting each
//! acknowledgement on stdout), flushes, compacts and finally splits the tablet (or,
//! for the recovery points, reopens a log another child left); at the chosen hit
//! of the chosen point it ends at once with `_exit`, running no destructor and no
//! further step. The parent
//! then reopens the engine and checks that every acknowledged mutation is there in
//! full, that nothing is half-applied, and that the reopened tablet still takes
//! writes, flushes and compactions and keeps them across another reopen.
//!
//! Run with `cargo test -p tabula-storage --features failpoints --test crash_points`
//! (`.ci/test` does); without the feature this file is empty.
#![cfg(feature = "failpoints")]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use common::{latest_rows, two_family_schema, whole_table};
use tabula_storage::{
    Durability, Engine, EngineOptions, RowMutation, Tablet, TabletDescriptor, LATEST_TIMESTAMP,
};

/// Set in the child: the engine's directory.
const CHILD_DIR_VAR: &str = "TABULA_CRASH_CHILD_DIR";
/// Set in the child: the crash point's name.
const CHILD_POINT_VAR: &str = "TABULA_CRASH_POINT";
/// Set in the child: which hit of the point ends the process (1 = the first).
const CHILD_HIT_VAR: &str = "TABULA_CRASH_HIT";
/// Set in the child: `recover` to only open the engine and the tablet (the crash
/// point then lies in recovery), `write` to write [`WRITE_MODE_ROUNDS`] rounds of
/// mutations and stop without a flush (over more than one log segment); unset,
/// the whole work of [`ROUNDS`].
const CHILD_MODE_VAR: &str = "TABULA_CRASH_MODE";
/// The child's exit status when it stopped at its crash point (or, in `write`
/// mode, after its writes).
const CRASHED: i32 = 86;

/// The columns every mutation writes: (family, qualifier), across both families.
const COLUMNS: [(&str, &str); 3] = [("a", "x"), ("a", "y"), ("z", "q")];
/// The child's work: this many rounds of [`WRITES_PER_ROUND`] synced mutations,
/// each round ending in a flush and every second one in a major compaction; then
/// a split of the tablet at [`SPLIT_ROW`].
const ROUNDS: u64 = 6;
const WRITES_PER_ROUND: u64 = 40;
const WRITE_MODE_ROUNDS: u64 = 3;
const SPLIT_ROW: &str = "r000100";
const PARENT: u64 = 1;
const LEFT: u64 = 2;
const RIGHT: u64 = 3;

/// Every crash point and the hits of it the test stops at.
const POINTS: [(&str, &[u32]); 12] = [
    ("manifest-tmp-written", &[1, 4]),
    ("manifest-renamed", &[1, 4]),
    ("flush-files-written", &[1, 3]),
    ("flush-installed", &[1, 3]),
    ("compaction-output-written", &[1, 2]),
    ("compaction-installed", &[1, 2]),
    ("log-segment-created", &[1, 3]),
    ("log-segment-prepared", &[1, 2]),
    ("log-segment-sealed", &[1, 2]),
    ("log-segment-deleted", &[1, 2]),
    ("split-parent-disowned", &[1]),
    ("split-children-written", &[1]),
];

/// The crash points of recovery (splitting the log of a stopped process into
/// recovered edits, replaying them into their tablet) and the hits the test stops
/// at. The process that recovers is itself stopped there, and the next one
/// recovers again.
const RECOVERY_POINTS: [(&str, &[u32]); 3] = [
    ("recovery-edits-written", &[1, 2]),
    ("recovery-segments-split", &[1]),
    ("recovery-edits-replayed", &[1]),
];

/// Small log segments, so that segments are sealed and deleted within a run; no
/// background work, so that flushes and compactions happen where the child asks.
fn options(dir: &Path) -> EngineOptions {
    let mut o = EngineOptions::new(dir);
    o.background_work = false;
    o.block_size = 4096;
    o.memory_budget = 64 << 20;
    o.log_segment_size = 32 << 10;
    o
}

fn row_key(seq: u64) -> Bytes {
    Bytes::from(format!("r{seq:06}"))
}

fn value_of(seq: u64, qualifier: &str) -> Bytes {
    Bytes::from(format!("{seq}/{qualifier}/{:0>100}", seq))
}

fn mutation(seq: u64) -> RowMutation {
    COLUMNS
        .iter()
        .fold(RowMutation::new(row_key(seq)), |rm, (f, q)| {
            rm.put(
                Bytes::from_static(f.as_bytes()),
                Bytes::from_static(q.as_bytes()),
                LATEST_TIMESTAMP,
                value_of(seq, q),
            )
        })
}

/// The row written after recovery: in the first tablet of every set the test
/// reopens (it sorts before the split row), and apart from the child's rows.
const EXTRA_ROW: &str = "a-extra";

fn extra_mutation() -> RowMutation {
    RowMutation::new(Bytes::from_static(EXTRA_ROW.as_bytes())).put(
        Bytes::from_static(b"a"),
        Bytes::from_static(b"x"),
        LATEST_TIMESTAMP,
        Bytes::from_static(b"written after recovery"),
    )
}

fn range(id: u64, start: &str, end: &str) -> TabletDescriptor {
    TabletDescriptor {
        id,
        schema: two_family_schema(),
        start_row: Bytes::copy_from_slice(start.as_bytes()),
        end_row: Bytes::copy_from_slice(end.as_bytes()),
    }
}

/// The child's body (ignored as a test of its own; the parent runs it with
/// `--ignored`): sets up its crash point, then does the work described at
/// [`ROUNDS`], printing `ack <seq>` for each acknowledged mutation. Returns
/// normally only if the point was never reached.
#[test]
#[ignore = "the body of the child process of the crash-point tests"]
fn crash_point_child() {
    let (Ok(dir), Ok(point)) = (std::env::var(CHILD_DIR_VAR), std::env::var(CHILD_POINT_VAR))
    else {
        return;
    };
    let hit: u32 = std::env::var(CHILD_HIT_VAR)
        .ok()
        .and_then(|h| h.parse().ok())
        .unwrap_or(1);
    let mode = std::env::var(CHILD_MODE_VAR).unwrap_or_default();
    let hits = Arc::new(AtomicU32::new(0));
    fail::cfg_callback(point.clone(), move || {
        if hits.fetch_add(1, Ordering::SeqCst) + 1 == hit {
            // Every acknowledgement is on stdout already (each line is flushed as
            // it is written; this may run on another thread than the writer's).
            // SAFETY: `_exit` ends the process at once; nothing after it runs.
            unsafe { libc::_exit(CRASHED) }
        }
    })
    .expect("child: crash point configured");

    let engine = Engine::open(options(Path::new(&dir))).expect("child: engine opens");
    let tablet = engine
        .open_tablet(whole_table(PARENT, two_family_schema()))
        .expect("child: tablet opens");
    if mode == "recover" {
        eprintln!("child: crash point {point} hit {hit} was never reached in recovery");
        return;
    }
    let rounds = if mode == "write" {
        WRITE_MODE_ROUNDS
    } else {
        ROUNDS
    };
    for round in 0..rounds {
        for seq in round * WRITES_PER_ROUND..(round + 1) * WRITES_PER_ROUND {
            tablet
                .mutate(&mutation(seq), Durability::Sync)
                .expect("child: synced write");
            let mut out = std::io::stdout().lock();
            writeln!(out, "ack {seq}").expect("child: stdout");
            out.flush().expect("child: stdout");
        }
        if mode == "write" {
            continue;
        }
        tablet.flush().expect("child: flush");
        if round % 2 == 1 {
            tablet.major_compact().expect("child: major compaction");
        }
    }
    if mode == "write" {
        // SAFETY: as above; the writes stay in the log only.
        unsafe { libc::_exit(CRASHED) }
    }
    engine
        .split_tablet(PARENT, SPLIT_ROW.as_bytes(), LEFT, RIGHT)
        .expect("child: split");
    eprintln!("child: crash point {point} hit {hit} was never reached");
}

/// Runs the child to its crash point; returns the sequence numbers it reported
/// acknowledged. Fails when the child did not stop at the point.
fn run_child(dir: &Path, point: &str, hit: u32) -> Vec<u64> {
    run_child_in(dir, "", point, hit)
}

/// [`run_child`] in child mode `mode` (see [`CHILD_MODE_VAR`]).
fn run_child_in(dir: &Path, mode: &str, point: &str, hit: u32) -> Vec<u64> {
    let exe = std::env::current_exe().expect("test binary path");
    let child = Command::new(exe)
        .args(["crash_point_child", "--exact", "--nocapture", "--ignored"])
        .env(CHILD_DIR_VAR, dir)
        .env(CHILD_POINT_VAR, point)
        .env(CHILD_HIT_VAR, hit.to_string())
        .env(CHILD_MODE_VAR, mode)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("child starts");
    let output = child.wait_with_output().expect("child runs");
    assert_eq!(
        output.status.code(),
        Some(CRASHED),
        "{point} hit {hit}: the child did not stop at its crash point ({})",
        output.status
    );
    BufReader::new(&output.stdout[..])
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| line.strip_prefix("ack ")?.parse().ok())
        .collect()
}

/// Checks `rows` (the union of what the tablets serve) against the child's
/// acknowledgements: each acknowledged row in full; any other row only the one
/// call in flight at the crash, and in full too.
fn check_rows(what: &str, rows: &BTreeMap<Bytes, BTreeMap<String, Bytes>>, acked: &[u64]) {
    let next = acked.iter().max().map_or(0, |s| s + 1);
    for &seq in acked {
        assert!(
            rows.contains_key(&row_key(seq)),
            "{what}: acknowledged row {seq} lost"
        );
    }
    for (row, cols) in rows {
        let text = String::from_utf8_lossy(row);
        let seq: u64 = text
            .strip_prefix('r')
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{what}: unexpected row {text}"));
        assert!(seq <= next, "{what}: row {text} was never written");
        assert_eq!(
            cols.len(),
            COLUMNS.len(),
            "{what}: row {text} is half-applied: {:?}",
            cols.keys().collect::<Vec<_>>()
        );
        for (f, q) in COLUMNS {
            assert_eq!(
                cols.get(&format!("{f}:{q}")),
                Some(&value_of(seq, q)),
                "{what}: row {text} column {f}:{q}"
            );
        }
    }
}

/// Checks that each tablet's directory holds no SSTable that none of `tablets`
/// lists: a flush's or compaction's output the crash left out of every manifest
/// is deleted when the tablet opens.
fn check_no_unlisted_files(what: &str, tablets: &[Arc<Tablet>]) {
    let listed: Vec<String> = tablets
        .iter()
        .flat_map(|t| t.version().files.clone())
        .map(|f| f.entry.path.clone())
        .collect();
    for t in tablets {
        let entries = std::fs::read_dir(t.dir()).expect("tablet directory lists");
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(".sst") {
                let rel = format!("{}/{name}", t.id());
                assert!(
                    listed.contains(&rel),
                    "{what}: {rel} is in no manifest but still on disk"
                );
            }
        }
    }
}

/// Reopens the tablets `descriptors` name, checks them against `acked`, then
/// writes one more row into the first, flushes and compacts it, and checks
/// everything again after a second reopen.
fn recover_and_go_on(dir: &Path, what: &str, descriptors: &[TabletDescriptor], acked: &[u64]) {
    let union = |tablets: &[Arc<Tablet>]| {
        let mut rows = BTreeMap::new();
        for t in tablets {
            rows.extend(latest_rows(t));
        }
        rows
    };
    let open = |engine: &Engine| -> Vec<Arc<Tablet>> {
        descriptors
            .iter()
            .map(|d| {
                engine
                    .open_tablet(d.clone())
                    .unwrap_or_else(|e| panic!("{what}: tablet {} reopens: {e}", d.id))
            })
            .collect()
    };
    {
        let engine = Engine::open(options(dir))
            .unwrap_or_else(|e| panic!("{what}: engine reopens after the crash: {e}"));
        let tablets = open(&engine);
        check_rows(what, &union(&tablets), acked);
        check_no_unlisted_files(what, &tablets);
        let first = tablets.first().expect("one tablet at least");
        first
            .mutate(&extra_mutation(), Durability::Sync)
            .unwrap_or_else(|e| panic!("{what}: a write after recovery: {e}"));
        first
            .flush()
            .unwrap_or_else(|e| panic!("{what}: a flush after recovery: {e}"));
        first
            .major_compact()
            .unwrap_or_else(|e| panic!("{what}: a compaction after recovery: {e}"));
        drop(tablets);
        engine
            .shutdown()
            .unwrap_or_else(|e| panic!("{what}: shutdown after recovery: {e}"));
    }
    let engine = Engine::open(options(dir))
        .unwrap_or_else(|e| panic!("{what}: engine opens a second time: {e}"));
    let tablets = open(&engine);
    let mut rows = union(&tablets);
    assert!(
        rows.remove(EXTRA_ROW.as_bytes()).is_some(),
        "{what}: the row written after recovery is lost"
    );
    check_rows(&format!("{what}, second reopen"), &rows, acked);
    drop(tablets);
    engine
        .shutdown()
        .unwrap_or_else(|e| panic!("{what}: second shutdown: {e}"));
}

#[test]
fn every_crash_point_keeps_acknowledged_writes_and_recovers() {
    for (point, hits) in POINTS {
        for &hit in hits {
            let tmp = tempfile::tempdir().expect("tempdir");
            let dir = tmp.path().join("data");
            let acked = run_child(&dir, point, hit);
            eprintln!("{point} hit {hit}: {} acknowledged", acked.len());
            // A split's crash points included: until the catalog names the
            // children, the parent is the tablet and, reopened, serves every row.
            recover_and_go_on(
                &dir,
                &format!("{point} hit {hit}"),
                &[whole_table(PARENT, two_family_schema())],
                &acked,
            );
        }
    }
}

#[test]
fn a_split_stopped_after_its_child_manifests_serves_from_the_children() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("data");
    let acked = run_child(&dir, "split-children-written", 1);
    assert_eq!(
        acked.len() as u64,
        ROUNDS * WRITES_PER_ROUND,
        "the split comes after every write"
    );
    // Had the catalog been updated before the crash, the children serve: together
    // they hold every row, each only its own.
    recover_and_go_on(
        &dir,
        "split-children-written, children",
        &[range(LEFT, "", SPLIT_ROW), range(RIGHT, SPLIT_ROW, "")],
        &acked,
    );
}

#[test]
fn a_crash_during_recovery_loses_nothing_and_the_next_recovery_completes() {
    for (point, hits) in RECOVERY_POINTS {
        for &hit in hits {
            let tmp = tempfile::tempdir().expect("tempdir");
            let dir = tmp.path().join("data");
            // The first process leaves its writes in the log only; the second
            // stops while splitting that log or replaying it.
            let acked = run_child_in(&dir, "write", "none", 1);
            assert_eq!(
                acked.len() as u64,
                WRITE_MODE_ROUNDS * WRITES_PER_ROUND,
                "{point}: the writer wrote"
            );
            let replayed = run_child_in(&dir, "recover", point, hit);
            assert!(
                replayed.is_empty(),
                "{point}: recovery writes nothing of its own"
            );
            recover_and_go_on(
                &dir,
                &format!("{point} hit {hit}"),
                &[whole_table(PARENT, two_family_schema())],
                &acked,
            );
        }
    }
}
