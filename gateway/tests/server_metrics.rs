//! The metrics port of a real `tabula serve`: `GET /metrics` over HTTP reports the
//! Thrift calls, the tablets, the block cache and the commit log as they change, in
//! the Prometheus text format; other paths are 404s; `metrics_listen = ""` turns
//! the port off.

mod common;

use std::time::Duration;

use common::*;
use tabula_thrift::hbase::THbaseSyncClient;

/// The value of the sample `name{labels}` (labels as printed, `""` for none).
fn sample(text: &str, name: &str, labels: &str) -> Option<f64> {
    let key = if labels.is_empty() {
        name.to_owned()
    } else {
        format!("{name}{{{labels}}}")
    };
    text.lines().find_map(|l| {
        let (k, v) = l.rsplit_once(' ')?;
        (k == key).then(|| v.parse().ok()).flatten()
    })
}

#[test]
fn metrics_follow_calls_tablets_and_the_commit_log() {
    let addr = free_local_addr();
    let server = Tabula::start_with(&[
        ("TABULA_METRICS_LISTEN", addr.as_str()),
        ("TABULA_MAINTENANCE_INTERVAL_SECS", "1"),
    ]);
    let (status, before) = http_get(&addr, "/metrics");
    assert_eq!(status, 200, "{before}");
    let calls = |t: &str| sample(t, "tabula_thrift_calls_total", "api=\"thrift1\"");
    let calls_before = calls(&before).expect("thrift1 calls");
    let fsyncs_before = sample(&before, "tabula_commit_log_fsyncs_total", "").expect("fsyncs");

    let mut c = server.client();
    create(&mut c, b"metrics_t", &["cf"]);
    for i in 0..20 {
        put(
            &mut c,
            b"metrics_t",
            &format!("r{i:02}"),
            &[("cf:v", "value")],
        );
    }
    // Three gets and a scan of the 20 rows: 23 rows read.
    for row in ["r00", "r05", "r19"] {
        let got = c
            .get_row(b"metrics_t".to_vec(), row.as_bytes().to_vec(), no_attrs())
            .expect("getRow");
        assert_eq!(got.len(), 1);
    }
    let id = c
        .scanner_open_with_scan(b"metrics_t".to_vec(), tscan(), no_attrs())
        .expect("scannerOpenWithScan");
    assert_eq!(drain(&mut c, id, 7).len(), 20);
    let (_, after) = http_get(&addr, "/metrics");
    assert!(
        calls(&after).expect("thrift1 calls") >= calls_before + 21.0,
        "{after}"
    );
    let tablet_counter = |name: &str| {
        let prefix = format!("{name}{{table=\"metrics_t\"");
        after
            .lines()
            .find(|l| l.starts_with(&prefix))
            .and_then(|l| l.rsplit_once(' '))
            .and_then(|(_, v)| v.parse::<f64>().ok())
            .unwrap_or_else(|| panic!("no {name} of the new table: {after}"))
    };
    assert_eq!(tablet_counter("tabula_tablet_write_requests_total"), 20.0);
    assert_eq!(tablet_counter("tabula_tablet_read_requests_total"), 23.0);
    assert_eq!(
        sample(&after, "tabula_thrift_connections_open", "api=\"thrift1\""),
        Some(1.0)
    );
    assert!(
        sample(&after, "tabula_commit_log_fsyncs_total", "").expect("fsyncs") > fsyncs_before,
        "synced puts fsync the log"
    );
    // The new table's tablet holds the rows in its memtable.
    let tablet_line = after
        .lines()
        .find(|l| l.starts_with("tabula_tablet_memtable_bytes{table=\"metrics_t\""))
        .unwrap_or_else(|| panic!("no memtable gauge of the new table: {after}"));
    let bytes: f64 = tablet_line
        .rsplit_once(' ')
        .and_then(|(_, v)| v.parse().ok())
        .expect("a number");
    assert!(bytes > 0.0, "{tablet_line}");
    assert_eq!(
        sample(&after, "tabula_coordinator_tables", ""),
        Some(1.0),
        "{after}"
    );
    assert!(after.contains("# TYPE tabula_block_cache_hits counter"));
    // The in-memory families' cache: a quarter of the block cache (a quarter of
    // the default 1 GiB budget).
    assert_eq!(
        sample(&after, "tabula_block_cache_in_memory_capacity_bytes", ""),
        Some((64u64 << 20) as f64),
        "{after}"
    );
    // The coordinator's view of its one regionserver, as its balancing rounds (a
    // second apart) read it: its tablets (root, META and the new table's) and,
    // once two rounds have read the counters, the requests per second it served.
    let per_server = |text: &str, name: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{name}{{server=")))
            .and_then(|l| l.rsplit_once(' '))
            .and_then(|(_, v)| v.parse::<f64>().ok())
    };
    wait_for(
        "three tablets and a request rate measured while gets run",
        Duration::from_secs(30),
        || {
            for _ in 0..50 {
                c.get_row(b"metrics_t".to_vec(), b"r01".to_vec(), no_attrs())
                    .expect("getRow");
            }
            let (_, now) = http_get(&addr, "/metrics");
            per_server(&now, "tabula_coordinator_server_tablets") == Some(3.0)
                && per_server(&now, "tabula_coordinator_server_requests_per_second")
                    .is_some_and(|rate| rate >= 1.0)
        },
    );
    // A major compaction flushes the table and rewrites its family.
    let flushes_before = sample(&after, "tabula_flushes_total", "").expect("flushes");
    c.major_compact(b"metrics_t".to_vec())
        .expect("majorCompact");
    wait_for(
        "the flush and compaction counted",
        Duration::from_secs(20),
        || {
            let (_, compacted) = http_get(&addr, "/metrics");
            let major = sample(&compacted, "tabula_compactions_total", "kind=\"major\"");
            sample(&compacted, "tabula_flushes_total", "").is_some_and(|f| f > flushes_before)
                && major.is_some_and(|m| m >= 1.0)
        },
    );
    assert!(after.trim_end().ends_with("# EOF"));

    let (status, _) = http_get(&addr, "/nothing-here");
    assert_eq!(status, 404);
}

#[test]
fn an_empty_metrics_listen_turns_the_port_off() {
    let server = Tabula::start_with(&[("TABULA_METRICS_LISTEN", "")]);
    // The server runs; no metrics= in its ready line is checked by the harness
    // (it only needs the Thrift ports), so look at the log instead.
    let mut c = server.client();
    assert!(c.get_table_names().expect("getTableNames").is_empty());
    assert!(!server.log().contains("metrics listening"));
}

#[test]
fn an_empty_thrift2_listen_turns_thrift2_off() {
    let server = Tabula::start_with(&[("TABULA_THRIFT2_LISTEN", "")]);
    assert_eq!(server.thrift2, None, "the ready line says thrift2=off");
    let mut c = server.client();
    assert!(c.get_table_names().expect("getTableNames").is_empty());
    let servers = server.log().matches("Thrift server listening").count();
    assert_eq!(servers, 1, "only Thrift1 listens: {}", server.log());
}

/// The SSTables of `table`'s tablets, as the metrics port reports them.
fn sstables_of(addr: &str, table: &str) -> f64 {
    let (_, text) = http_get(addr, "/metrics");
    let prefix = format!("tabula_tablet_sstables{{table=\"{table}\"");
    text.lines()
        .filter(|l| l.starts_with(&prefix))
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<f64>().ok())
        .sum()
}

#[test]
fn a_table_with_compactions_off_keeps_the_files_its_flushes_write() {
    use common::t2::{family, table_desc};
    use tabula_thrift::hbase2::TTHBaseServiceSyncClient;

    let addr = free_local_addr();
    let server = Tabula::start_with(&[("TABULA_METRICS_LISTEN", addr.as_str())]);
    let mut c2 = server.client2(Framing::Buffered, Protocol::Binary);
    let mut c = server.client();
    let name = "compactions_off";
    let mut desc = table_desc(name.as_bytes(), vec![family("cf", Some(1))]);
    let attributes = |enabled: &str| {
        Some(
            [(b"COMPACTION_ENABLED".to_vec(), enabled.as_bytes().to_vec())]
                .into_iter()
                .collect(),
        )
    };
    desc.attributes = attributes("false");
    c2.create_table(desc.clone(), vec![]).expect("createTable");
    // Each round rewrites the same rows and flushes them (HBase's `compact`
    // flushes first): every file overlaps the others, more than a read may
    // consult (8) before a merging compaction would step in.
    const ROUNDS: usize = 12;
    for round in 0..ROUNDS {
        for i in 0..10 {
            put(
                &mut c,
                name.as_bytes(),
                &format!("r{i}"),
                &[("cf:v", &format!("round {round}"))],
            );
        }
        c.compact(name.as_bytes().to_vec()).expect("compact");
    }
    assert_eq!(sstables_of(&addr, name), ROUNDS as f64);
    // A major compaction asked for is ignored, as HBase ignores it.
    c.major_compact(name.as_bytes().to_vec())
        .expect("majorCompact");
    assert_eq!(sstables_of(&addr, name), ROUNDS as f64);
    let got = c
        .get_row(name.as_bytes().to_vec(), b"r3".to_vec(), no_attrs())
        .expect("getRow");
    assert_eq!(columns_of(&got[0])["cf:v"], format!("round {}", ROUNDS - 1));

    // Turned back on, the files are merged in the background, and a major
    // compaction leaves one.
    desc.attributes = attributes("true");
    c2.modify_table(desc).expect("modifyTable");
    wait_for("a merging compaction", Duration::from_secs(30), || {
        sstables_of(&addr, name) <= 8.0
    });
    c.major_compact(name.as_bytes().to_vec())
        .expect("majorCompact");
    wait_for("a major compaction", Duration::from_secs(30), || {
        sstables_of(&addr, name) == 1.0
    });
    let got = c
        .get_row(name.as_bytes().to_vec(), b"r3".to_vec(), no_attrs())
        .expect("getRow");
    assert_eq!(columns_of(&got[0])["cf:v"], format!("round {}", ROUNDS - 1));
}
