//! Crash tests of the engine: a child process writes RowMutations with a synced
//! commit log and reports each acknowledgement on its stdout; the parent kills it
//! with SIGKILL at a random point (while it writes, flushes, compacts, or while it
//! is still replaying the log on open), reopens the engine itself and checks that
//! every acknowledged mutation is there in full and that no mutation, acknowledged
//! or not, is half-applied. The child is this test binary run again with
//! [`CHILD_DIR_VAR`] set, so it exercises the library exactly as linked here.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use common::{latest_rows, seeded_rng, two_family_schema, whole_table};
use rand::Rng;
use tabula_storage::{Durability, Engine, EngineOptions, RowMutation, Tablet, LATEST_TIMESTAMP};

/// Set in the child: the engine's directory.
const CHILD_DIR_VAR: &str = "TABULA_KILL_NINE_CHILD_DIR";
/// Set in the child: the first sequence number of each writer, comma-separated.
const CHILD_FIRST_VAR: &str = "TABULA_KILL_NINE_FIRST";
/// Writer threads in the child; odd-numbered writers send batches of
/// [`BATCH_ROWS`] rows, even-numbered ones a row per call.
const WRITERS: usize = 4;
const BATCH_ROWS: u64 = 4;
const CYCLES: usize = 24;

/// The columns every mutation writes: (family, qualifier), across both families.
const COLUMNS: [(&str, &str); 3] = [("a", "x"), ("a", "y"), ("z", "q")];

/// Options shared by the child and the parent's checks: small memtables and log
/// segments, so that flushes, compactions, log rotation and segment deletion all
/// happen within a cycle and kills land in the middle of them.
fn options(dir: &Path) -> EngineOptions {
    let mut o = EngineOptions::new(dir);
    o.memtable_size = 128 << 10;
    o.block_size = 4096;
    o.memory_budget = 64 << 20;
    o.log_segment_size = 512 << 10;
    o.max_files_per_read = 3;
    o
}

fn row_key(writer: usize, seq: u64) -> Bytes {
    Bytes::from(format!("w{writer}-{seq:08}"))
}

/// The value of one column of one mutation: names the mutation and the column,
/// padded so that a cycle writes enough to flush.
fn value_of(writer: usize, seq: u64, qualifier: &str) -> Bytes {
    Bytes::from(format!("{writer}/{seq}/{qualifier}/{:0>200}", seq))
}

fn mutation(writer: usize, seq: u64) -> RowMutation {
    COLUMNS
        .iter()
        .fold(RowMutation::new(row_key(writer, seq)), |rm, (f, q)| {
            rm.put(
                Bytes::from_static(f.as_bytes()),
                Bytes::from_static(q.as_bytes()),
                LATEST_TIMESTAMP,
                value_of(writer, seq, q),
            )
        })
}

/// The child's body: writes until killed, printing `ack <writer> <seq>` once a
/// mutation is acknowledged. Not a test of its own (ignored; the parent runs it
/// with `--ignored`), and it returns at once without [`CHILD_DIR_VAR`].
#[test]
#[ignore = "the body of the child process of the SIGKILL test"]
fn kill_nine_child_writer() {
    let Ok(dir) = std::env::var(CHILD_DIR_VAR) else {
        return;
    };
    let first: Vec<u64> = std::env::var(CHILD_FIRST_VAR)
        .unwrap_or_default()
        .split(',')
        .map(|s| s.parse().unwrap_or(0))
        .collect();
    let engine = Arc::new(Engine::open(options(Path::new(&dir))).expect("child: engine opens"));
    let tablet = engine
        .open_tablet(whole_table(1, two_family_schema()))
        .expect("child: tablet opens");
    let compactor = {
        let tablet = Arc::clone(&tablet);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(60));
            if tablet.major_compact().is_err() {
                return;
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let tablet = Arc::clone(&tablet);
            let start = first.get(w).copied().unwrap_or(0);
            std::thread::spawn(move || write_until_killed(&tablet, w, start))
        })
        .collect();
    for h in writers {
        let _ = h.join();
    }
    let _ = compactor.join();
}

fn write_until_killed(tablet: &Tablet, writer: usize, first: u64) {
    let per_call = if writer % 2 == 1 { BATCH_ROWS } else { 1 };
    let mut seq = first;
    loop {
        let ok = if per_call == 1 {
            tablet
                .mutate(&mutation(writer, seq), Durability::Sync)
                .is_ok()
        } else {
            let batch: Vec<RowMutation> =
                (seq..seq + per_call).map(|s| mutation(writer, s)).collect();
            tablet
                .mutate_batch(&batch, Durability::Sync)
                .iter()
                .all(Result::is_ok)
        };
        if !ok {
            return;
        }
        // One write for the whole call's lines, so a kill rarely splits them (the
        // parent allows for it anyway).
        let lines: String = (seq..seq + per_call)
            .map(|s| format!("ack {writer} {s}\n"))
            .collect();
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(lines.as_bytes());
        let _ = out.flush();
        seq += per_call;
    }
}

/// Runs one child from `first` and kills it: at a random point after it has
/// acknowledged its first write, or (one cycle in four) at a random point soon
/// after it starts, which may be before or during its log replay. Returns the
/// `(writer, seq)` of every acknowledgement the child reported.
fn run_child(dir: &Path, first: &[u64; WRITERS], rng: &mut impl Rng) -> Vec<(usize, u64)> {
    let exe = std::env::current_exe().expect("test binary path");
    let firsts: Vec<String> = first.iter().map(u64::to_string).collect();
    let mut child = Command::new(exe)
        .args([
            "kill_nine_child_writer",
            "--exact",
            "--nocapture",
            "--ignored",
        ])
        .env(CHILD_DIR_VAR, dir)
        .env(CHILD_FIRST_VAR, firsts.join(","))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("child starts");
    let stdout = child.stdout.take().expect("child stdout");
    let (tx, rx) = mpsc::channel::<String>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Every line the child printed, in order.
    let mut lines: Vec<String> = Vec::new();
    if rng.gen_ratio(1, 4) {
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..60)));
    } else {
        // Wait for the first acknowledgement (the child has opened and written),
        // then let it run on for a while.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < deadline {
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(line) => {
                    let is_ack = line.starts_with("ack ");
                    lines.push(line);
                    if is_ack {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
        std::thread::sleep(Duration::from_millis(rng.gen_range(20..400)));
    }
    child.kill().expect("SIGKILL the child");
    let _ = child.wait();
    let _ = reader.join();
    lines.extend(rx.try_iter());
    let mut acked = Vec::new();
    for line in lines {
        let mut parts = line.split(' ');
        if let (Some("ack"), Some(w), Some(s)) = (parts.next(), parts.next(), parts.next()) {
            let w: usize = w.parse().expect("writer number");
            let s: u64 = s.parse().expect("sequence number");
            acked.push((w, s));
        }
    }
    acked
}

#[test]
fn acknowledged_mutations_survive_sigkill_and_none_is_half_applied() {
    let (mut rng, _seed) = seeded_rng("acknowledged_mutations_survive_sigkill");
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let mut acked: HashSet<(usize, u64)> = HashSet::new();
    let mut next = [0u64; WRITERS];
    let mut cycles_with_acks = 0;
    for cycle in 0..CYCLES {
        let reported = run_child(&data, &next, &mut rng);
        if !reported.is_empty() {
            cycles_with_acks += 1;
        }
        // Each writer had at most one call in flight when killed, starting just
        // past its last reported row (or, when the kill split a batch's lines,
        // within one call of it): those rows may or may not have landed, and the
        // next cycle starts past them so that each is checked all-or-nothing.
        let mut in_flight: HashSet<(usize, u64)> = HashSet::new();
        for (w, first) in next.iter_mut().enumerate() {
            let last = reported
                .iter()
                .filter(|(aw, _)| *aw == w)
                .map(|&(_, s)| s + 1)
                .max()
                .unwrap_or(*first);
            let per_call = if w % 2 == 1 { BATCH_ROWS } else { 1 };
            in_flight.extend((last..last + 2 * per_call).map(|s| (w, s)));
            *first = last + 2 * per_call;
        }
        acked.extend(reported.iter().copied());
        eprintln!(
            "cycle {cycle}: {} acknowledgements reported, {} in all",
            reported.len(),
            acked.len()
        );

        let engine = Engine::open(options(&data)).expect("engine reopens after SIGKILL");
        let tablet = engine
            .open_tablet(whole_table(1, two_family_schema()))
            .expect("tablet reopens after SIGKILL");
        let rows = latest_rows(&tablet);
        for &(w, s) in &acked {
            let cols = rows.get(&row_key(w, s));
            assert!(
                cols.is_some(),
                "cycle {cycle}: acknowledged row {:?} lost",
                row_key(w, s)
            );
        }
        for (row, cols) in &rows {
            let text = String::from_utf8_lossy(row);
            let (w, s) = text
                .strip_prefix('w')
                .and_then(|t| t.split_once('-'))
                .and_then(|(w, s)| Some((w.parse::<usize>().ok()?, s.parse::<u64>().ok()?)))
                .unwrap_or_else(|| panic!("cycle {cycle}: unexpected row {text}"));
            assert!(
                acked.contains(&(w, s)) || in_flight.contains(&(w, s)) || s < next[w],
                "cycle {cycle}: row {text} was never written"
            );
            assert_eq!(
                cols.len(),
                COLUMNS.len(),
                "cycle {cycle}: row {text} is half-applied: {:?}",
                cols.keys().collect::<Vec<_>>()
            );
            for (f, q) in COLUMNS {
                assert_eq!(
                    cols.get(&format!("{f}:{q}")),
                    Some(&value_of(w, s, q)),
                    "cycle {cycle}: row {text} column {f}:{q}"
                );
            }
        }
        drop(tablet);
        engine.shutdown().expect("engine shuts down");
    }
    assert!(
        cycles_with_acks >= CYCLES / 2,
        "only {cycles_with_acks} of {CYCLES} children acknowledged a write"
    );
    assert!(!acked.is_empty());
}
