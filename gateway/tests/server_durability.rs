//! Durability of the whole server: data survives an orderly restart, every write
//! acknowledged over Thrift survives `kill -9` of the `tabula serve` process, with no
//! RowMutation half-applied (also with `log_fsync` off, where a synced write waits
//! for the log's write to the OS, not its fsync, and only FSYNC_WAL puts fsync),
//! a table's own durability (Thrift2 TTableDescriptor.durability) is what writes
//! naming none get, and a second `tabula serve` started by mistake on the same data
//! directory is refused before it touches the first one's files.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::t2::{family, fresh2, table_desc, tget, tname, tput, values};
use common::*;
use rand::{Rng, SeedableRng};
use tabula_thrift::hbase::{BatchMutation, THbaseSyncClient};
use tabula_thrift::hbase2::{TDurability, TTHBaseServiceSyncClient};

/// The columns of a row as `column -> value`, or empty when the row is absent.
fn row_columns(client: &mut Client, table: &[u8], row: &[u8]) -> BTreeMap<String, String> {
    let rows = client
        .get_row(table.to_vec(), row.to_vec(), no_attrs())
        .expect("getRow");
    rows.first().map(columns_of).unwrap_or_default()
}

#[test]
fn tables_rows_counters_and_deletes_survive_an_orderly_restart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let table = b"restart_me".to_vec();
    {
        let mut server = Tabula::start_at(&data);
        let mut c = server.client();
        create(&mut c, &table, &["cf", "other"]);
        for i in 0..200 {
            put(
                &mut c,
                &table,
                &format!("row{i:04}"),
                &[("cf:a", &format!("a{i}")), ("other:b", &format!("b{i}"))],
            );
        }
        c.atomic_increment(table.clone(), b"counter".to_vec(), b"cf:n".to_vec(), 42)
            .expect("atomicIncrement");
        c.delete_all_row(table.clone(), b"row0007".to_vec(), no_attrs())
            .expect("deleteAllRow");
        c.disable_table(b"restart_me".to_vec()).expect("disable");
        c.enable_table(b"restart_me".to_vec()).expect("enable");
        server.stop();
    }
    let server = Tabula::start_at(&data);
    let mut c = server.client();
    let names = c.get_table_names().expect("getTableNames");
    assert!(names.contains(&table), "tables after restart: {names:?}");
    assert!(c.is_table_enabled(table.clone()).expect("isTableEnabled"));
    let families: Vec<Vec<u8>> = c
        .get_column_descriptors(table.clone())
        .expect("getColumnDescriptors")
        .into_keys()
        .collect();
    assert_eq!(families, vec![b"cf:".to_vec(), b"other:".to_vec()]);
    for i in [0, 1, 99, 199] {
        let row = format!("row{i:04}");
        let got = row_columns(&mut c, &table, row.as_bytes());
        assert_eq!(got.get("cf:a"), Some(&format!("a{i}")), "{row}");
        assert_eq!(got.get("other:b"), Some(&format!("b{i}")), "{row}");
    }
    assert!(row_columns(&mut c, &table, b"row0007").is_empty());
    assert_eq!(
        c.atomic_increment(table.clone(), b"counter".to_vec(), b"cf:n".to_vec(), 1)
            .expect("atomicIncrement"),
        43
    );
    let id = c
        .scanner_open(table.clone(), b"".to_vec(), vec![], no_attrs())
        .expect("scannerOpen");
    let mut rows = 0;
    loop {
        let batch = c.scanner_get_list(id, 64).expect("scannerGetList");
        if batch.is_empty() {
            break;
        }
        rows += batch.len();
    }
    c.scanner_close(id).expect("scannerClose");
    // 200 rows, one deleted, plus the counter row.
    assert_eq!(rows, 200);
}

/// Writers acknowledged by the server, as (writer, sequence) pairs.
type Acked = Arc<Mutex<Vec<(usize, u64)>>>;

fn row_key(writer: usize, seq: u64) -> Vec<u8> {
    format!("w{writer}-{seq:08}").into_bytes()
}

fn value_of(writer: usize, seq: u64, column: &str) -> String {
    format!("{column}/{writer}/{seq}")
}

/// Rows per mutateRows call of the writers that batch.
const BATCH: u64 = 4;

/// Writes rows (two columns per row) until the server goes away, recording each
/// acknowledged one: even-numbered writers one mutateRow per row, odd-numbered
/// ones mutateRows of [`BATCH`] rows (which share one commit-log wait). Returns
/// the sequence numbers of the call in flight when the server went away.
fn write_until_killed(
    addr: std::net::SocketAddr,
    table: Vec<u8>,
    writer: usize,
    first: u64,
    acked: Acked,
) -> std::ops::Range<u64> {
    let mut c = connect(addr, Framing::Buffered, Protocol::Binary);
    let per_call = if writer % 2 == 1 { BATCH } else { 1 };
    let mut seq = first;
    loop {
        let mutations = |seq: u64| {
            vec![
                put_m("cf:a", value_of(writer, seq, "a").as_bytes()),
                put_m("cf:b", value_of(writer, seq, "b").as_bytes()),
            ]
        };
        let result = if per_call == 1 {
            c.mutate_row(
                table.clone(),
                row_key(writer, seq),
                mutations(seq),
                no_attrs(),
            )
        } else {
            let batch = (seq..seq + per_call)
                .map(|s| BatchMutation::new(row_key(writer, s), mutations(s)))
                .collect();
            c.mutate_rows(table.clone(), batch, no_attrs())
        };
        match result {
            Ok(()) => {
                if let Ok(mut a) = acked.lock() {
                    a.extend((seq..seq + per_call).map(|s| (writer, s)));
                }
                seq += per_call;
            }
            Err(_) => return seq..seq + per_call,
        }
    }
}

#[test]
fn acknowledged_writes_survive_kill_dash_nine() {
    kill_nine_cycles(&[], 6, 0x7ab01a);
}

#[test]
fn acknowledged_writes_survive_kill_dash_nine_without_log_fsync() {
    kill_nine_cycles(&[("TABULA_LOG_FSYNC", "false")], 4, 0x7ab01b);
}

/// `cycles` times: writers write until the server (with settings `env`) is killed
/// with SIGKILL at a random moment; the restarted server must hold every
/// acknowledged row, and no in-flight row half-applied.
fn kill_nine_cycles(env: &[(&str, &str)], cycles: usize, seed: u64) {
    const WRITERS: usize = 4;
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let table = b"kill9".to_vec();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let acked: Acked = Arc::new(Mutex::new(Vec::new()));
    let mut next_seq = [0u64; WRITERS];
    {
        let server = Tabula::start_at_with(&data, env);
        create(&mut server.client(), &table, &["cf"]);
    }
    for cycle in 0..cycles {
        let mut server = Tabula::start_at_with(&data, env);
        let handles: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (addr, table, acked, first) = (
                    server.thrift1,
                    table.clone(),
                    Arc::clone(&acked),
                    next_seq[w],
                );
                std::thread::spawn(move || write_until_killed(addr, table, w, first, acked))
            })
            .collect();
        std::thread::sleep(Duration::from_millis(rng.gen_range(150..900)));
        server.kill9();
        let mut in_flight = Vec::new();
        for (w, h) in handles.into_iter().enumerate() {
            // The rows of the unacknowledged call may or may not have landed; the
            // next cycle starts past them so each is checked as "all or nothing".
            let rows = h.join().expect("writer thread");
            next_seq[w] = rows.end;
            in_flight.extend(rows.map(|s| (w, s)));
        }

        let server = Tabula::start_at_with(&data, env);
        let mut c = server.client();
        let acked_now = acked.lock().expect("acked").clone();
        assert!(
            !acked_now.is_empty(),
            "cycle {cycle}: no write was acknowledged"
        );
        for &(w, seq) in &acked_now {
            let got = row_columns(&mut c, &table, &row_key(w, seq));
            assert_eq!(
                got.get("cf:a"),
                Some(&value_of(w, seq, "a")),
                "cycle {cycle}: acknowledged row w{w}-{seq} lost"
            );
            assert_eq!(got.get("cf:b"), Some(&value_of(w, seq, "b")));
        }
        // The in-flight rows of each writer: both columns or neither.
        for &(w, seq) in &in_flight {
            let got = row_columns(&mut c, &table, &row_key(w, seq));
            assert!(
                got.is_empty() || got.len() == 2,
                "cycle {cycle}: half-applied row {got:?}"
            );
        }
    }
}

/// A fresh server with `log_fsync` off and its metrics port at the returned address.
fn server_without_log_fsync() -> (Tabula, String) {
    let metrics = free_local_addr();
    let server = Tabula::start_with(&[
        ("TABULA_LOG_FSYNC", "false"),
        ("TABULA_METRICS_LISTEN", metrics.as_str()),
    ]);
    (server, metrics)
}

/// The commit log's fsync count on the metrics port at `metrics`.
fn log_fsyncs(metrics: &str) -> f64 {
    metric(metrics, "tabula_commit_log_fsyncs_total").expect("fsync counter")
}

/// `count` one-cell puts to `table`, rows `{prefix}{i}`, each naming `durability`.
fn put_rows(
    c: &mut Client2,
    table: &[u8],
    prefix: &str,
    count: usize,
    durability: Option<TDurability>,
) {
    for i in 0..count {
        let mut put = tput(&format!("{prefix}{i}"), &[("cf:q", "v")], None);
        put.durability = durability;
        c.put(table.to_vec(), put).expect("put");
    }
}

#[test]
fn without_log_fsync_only_fsync_wal_puts_wait_for_an_fsync() {
    const PUTS: usize = 30;
    let (server, metrics) = server_without_log_fsync();
    let mut c = server.client2(Framing::Buffered, Protocol::Binary);
    let table = fresh2(&mut c, "fsyncwal", &["cf"], 1);
    let fsyncs = || log_fsyncs(&metrics);
    let put_all = |c: &mut Client2, prefix: &str, durability: Option<TDurability>| {
        put_rows(c, &table, prefix, PUTS, durability)
    };

    let before = fsyncs();
    put_all(&mut c, "default-", None);
    put_all(&mut c, "sync-", Some(TDurability::SYNC_WAL));
    let after_sync = fsyncs();
    // The background fsync runs once a second at most while the puts go on.
    assert!(
        after_sync - before <= 4.0,
        "{} fsyncs for {} SYNC_WAL puts without log_fsync",
        after_sync - before,
        2 * PUTS
    );
    put_all(&mut c, "fsync-", Some(TDurability::FSYNC_WAL));
    let after_fsync = fsyncs();
    assert!(
        after_fsync - after_sync >= PUTS as f64,
        "{} fsyncs for {PUTS} FSYNC_WAL puts made one after another",
        after_fsync - after_sync
    );
    for prefix in ["default-", "sync-", "fsync-"] {
        let got = c
            .get(table.clone(), tget(&format!("{prefix}7")))
            .expect("get");
        assert_eq!(values(&got).get("cf:q").map(String::as_str), Some("v"));
    }
}

#[test]
fn a_tables_durability_applies_to_writes_that_name_none() {
    const PUTS: usize = 20;
    let (server, metrics) = server_without_log_fsync();
    let mut c = server.client2(Framing::Buffered, Protocol::Binary);
    let fsyncs = || log_fsyncs(&metrics);
    let appended =
        || metric(&metrics, "tabula_commit_log_appended_bytes_total").expect("appended counter");
    let table = b"durable_table".to_vec();
    let mut desc = table_desc(&table, vec![family("cf", Some(1))]);
    desc.durability = Some(TDurability::FSYNC_WAL);
    c.create_table(desc.clone(), Vec::new())
        .expect("createTable");
    let described = c.get_table_descriptor(tname(&table)).expect("descriptor");
    assert_eq!(described.durability, Some(TDurability::FSYNC_WAL));
    let put_all = |c: &mut Client2, prefix: &str, durability: Option<TDurability>| {
        put_rows(c, &table, prefix, PUTS, durability)
    };

    // Unset and USE_DEFAULT take the table's FSYNC_WAL: an fsync per put.
    let before = fsyncs();
    put_all(&mut c, "unset-", None);
    put_all(&mut c, "default-", Some(TDurability::USE_DEFAULT));
    let after_default = fsyncs();
    assert!(
        after_default - before >= (2 * PUTS) as f64,
        "{} fsyncs for {} puts to an FSYNC_WAL table",
        after_default - before,
        2 * PUTS
    );
    // A put naming its durability keeps it.
    put_all(&mut c, "sync-", Some(TDurability::SYNC_WAL));
    assert!(fsyncs() - after_default <= 4.0, "SYNC_WAL puts fsynced");

    // modifyTable replaces it: SKIP_WAL writes nothing to the log.
    desc.durability = Some(TDurability::SKIP_WAL);
    c.modify_table(desc.clone()).expect("modifyTable");
    let described = c.get_table_descriptor(tname(&table)).expect("descriptor");
    assert_eq!(described.durability, Some(TDurability::SKIP_WAL));
    let before = appended();
    put_all(&mut c, "skip-", None);
    assert_eq!(appended(), before, "a SKIP_WAL table's puts were logged");
    put_all(&mut c, "logged-", Some(TDurability::ASYNC_WAL));
    assert!(appended() > before, "a put naming ASYNC_WAL is logged");

    // A descriptor without one is USE_DEFAULT again.
    desc.durability = None;
    c.modify_table(desc).expect("modifyTable");
    let described = c.get_table_descriptor(tname(&table)).expect("descriptor");
    assert_eq!(described.durability, Some(TDurability::USE_DEFAULT));
    for prefix in ["unset-", "default-", "sync-", "skip-", "logged-"] {
        let got = c
            .get(table.clone(), tget(&format!("{prefix}3")))
            .expect("get");
        assert_eq!(values(&got).get("cf:q").map(String::as_str), Some("v"));
    }
}

#[test]
fn a_second_server_on_the_same_data_directory_is_refused_and_nothing_is_lost() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let table = b"one_owner".to_vec();
    let mut first = Tabula::start_at(&data);
    let mut c = first.client();
    create(&mut c, &table, &["cf"]);
    for i in 0..100 {
        put(&mut c, &table, &format!("row{i:03}"), &[("cf:a", "before")]);
    }

    let second = std::process::Command::new(binary_path())
        .args(["serve", "--data-dir"])
        .arg(&data)
        .args(["--listen", "127.0.0.1:0", "--thrift2-listen", "127.0.0.1:0"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("second server spawns");
    let output = wait_with_deadline(second, Duration::from_secs(60));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the second server must not run");
    assert!(
        stderr.contains("in use by another process"),
        "the refusal says why: {stderr}"
    );

    // The first server goes on, and every write it acknowledged survives kill -9.
    for i in 100..200 {
        put(&mut c, &table, &format!("row{i:03}"), &[("cf:a", "after")]);
    }
    first.kill9();
    let restarted = Tabula::start_at(&data);
    let mut c = restarted.client();
    for i in 0..200 {
        let columns = row_columns(&mut c, &table, format!("row{i:03}").as_bytes());
        let want = if i < 100 { "before" } else { "after" };
        assert_eq!(
            columns.get("cf:a").map(String::as_str),
            Some(want),
            "row{i:03}"
        );
    }
}

/// Waits for `child` to exit, killing it after `deadline`.
fn wait_with_deadline(mut child: std::process::Child, deadline: Duration) -> std::process::Output {
    let until = std::time::Instant::now() + deadline;
    while std::time::Instant::now() < until {
        if let Ok(Some(_)) = child.try_wait() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    child.wait_with_output().expect("second server's output")
}
