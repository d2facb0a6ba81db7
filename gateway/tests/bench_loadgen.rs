//! `tabula bench` against real servers over TCP: every workload runs with no failed
//! operation against `tabula serve`, the result files are written, the counters
//! workload adds one per call whether or not the server coalesces increments, and
//! the null-backend ceiling answers the same calls without storing anything.

mod common;

use clap::Parser;
use common::{drain, no_attrs, Tabula};
use tabula_loadgen::report::RunReport;
use tabula_loadgen::BenchArgs;
use tabula_thrift::hbase::THbaseSyncClient;

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

fn bench_args(addr: std::net::SocketAddr, extra: &[&str]) -> BenchArgs {
    let addr = addr.to_string();
    let mut argv = vec!["bench", "--addr", addr.as_str(), "--quiet"];
    argv.extend_from_slice(extra);
    Cli::parse_from(argv).bench
}

fn report<'a>(reports: &'a [RunReport], name: &str) -> &'a RunReport {
    reports
        .iter()
        .find(|r| r.workload == name)
        .unwrap_or_else(|| panic!("no report named {name}"))
}

fn count(r: &RunReport, op: &str) -> u64 {
    r.ops.iter().find(|o| o.op == op).map_or(0, |o| o.count)
}

#[test]
fn every_workload_runs_without_a_failed_operation() {
    let server = Tabula::start();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("runs.jsonl");
    let csv = out.path().join("runs.csv");
    let plots = out.path().join("plots");
    let args = bench_args(
        server.thrift1,
        &[
            "--workloads",
            "bigtable,ycsb,versions",
            "--records",
            "600",
            "--operations",
            "400",
            "--connections",
            "4",
            "--versions",
            "300",
            "--scan-rows",
            "50",
            "--server-pid",
            &server.pid().unwrap().to_string(),
            "--json",
            json.to_str().unwrap(),
            "--csv",
            csv.to_str().unwrap(),
            "--plot-dir",
            plots.to_str().unwrap(),
        ],
    );
    let reports = tabula_loadgen::run(&args).expect("the benchmark runs");
    let names: Vec<&str> = reports.iter().map(|r| r.workload.as_str()).collect();
    assert_eq!(
        names,
        [
            "seqwrite",
            "randwrite",
            "seqread",
            "randread",
            "randread-mem",
            "scan",
            "ycsb-load",
            "ycsb-a",
            "ycsb-b",
            "ycsb-c",
            "ycsb-d",
            "ycsb-e",
            "ycsb-f",
            "versions-load",
            "versions-asof",
            "versions-one"
        ]
    );
    for r in &reports {
        assert_eq!(r.errors, 0, "{} had failed operations", r.workload);
        assert!(r.ops_per_sec > 0.0, "{}", r.workload);
        let server = r.server.as_ref().expect("the server was sampled");
        assert!(server.rss_max_bytes > 0);
    }
    // Loads write every record once; timed workloads make --operations calls.
    assert_eq!(count(report(&reports, "seqwrite"), "write"), 600);
    assert_eq!(count(report(&reports, "ycsb-load"), "insert"), 600);
    assert_eq!(count(report(&reports, "versions-load"), "write"), 300);
    assert_eq!(count(report(&reports, "randread"), "read"), 400);
    // Reads check every value, so a read of a missing row would be an error above.
    // 400 rows asked for in scans of 50 rows: 8 scans of 50 rows each.
    let scan = report(&reports, "scan");
    assert_eq!(count(scan, "scan"), 8);
    assert_eq!(scan.ops[0].units, 400);
    let a = report(&reports, "ycsb-a");
    assert_eq!(count(a, "read") + count(a, "update"), 400);
    assert!(count(a, "read") > 100 && count(a, "update") > 100);
    let e = report(&reports, "ycsb-e");
    assert!(count(e, "scan") > count(e, "insert"));

    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), reports.len());
    assert_eq!(lines[3]["workload"], "randread");
    assert!(lines[3]["ops"][0]["p99_us"].as_u64().unwrap() > 0);
    let csv_text = std::fs::read_to_string(&csv).unwrap();
    assert!(csv_text.starts_with("date,workload,op,"));
    let ops_total: usize = reports.iter().map(|r| r.ops.len()).sum();
    assert_eq!(csv_text.lines().count(), 1 + ops_total);
    let png = std::fs::read(plots.join("randread-4c.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

    // A second run on the same tables reuses the loaded versions.
    let again = tabula_loadgen::run(&bench_args(
        server.thrift1,
        &[
            "--workloads",
            "versions",
            "--versions",
            "300",
            "--operations",
            "50",
        ],
    ))
    .unwrap();
    let names: Vec<&str> = again.iter().map(|r| r.workload.as_str()).collect();
    assert_eq!(names, ["versions-asof", "versions-one"]);
    assert!(again.iter().all(|r| r.errors == 0));
}

/// The sum of the `cf:n` counters of the Bigtable workloads' table.
fn counters_sum(server: &Tabula) -> i64 {
    let mut client = server.client();
    let id = client
        .scanner_open(
            b"bench".to_vec(),
            Vec::new(),
            vec![b"cf:n".to_vec()],
            no_attrs(),
        )
        .expect("scanner opens");
    drain(&mut client, id, 100)
        .iter()
        .flat_map(|row| row.columns.iter().flat_map(|c| c.values()))
        .map(|cell| {
            let value = cell.value.as_deref().unwrap_or_default();
            let bytes: [u8; 8] = value.try_into().expect("an 8-byte counter");
            i64::from_be_bytes(bytes)
        })
        .sum()
}

#[test]
fn counters_add_one_per_call_whether_or_not_increments_are_coalesced() {
    for env in [&[][..], &[("TABULA_COALESCE_INCREMENTS", "true")][..]] {
        let server = Tabula::start_with(env);
        let reports = tabula_loadgen::run(&bench_args(
            server.thrift1,
            &[
                "--workloads",
                "counters",
                "--records",
                "50",
                "--operations",
                "300",
                "--connections",
                "4",
            ],
        ))
        .expect("the benchmark runs");
        let run = report(&reports, "counters");
        assert_eq!(run.errors, 0, "{env:?}");
        assert_eq!(count(run, "increment"), 300, "{env:?}");
        // Coalesced increments are applied after their calls answer.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut sum = counters_sum(&server);
        while sum != 300 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
            sum = counters_sum(&server);
        }
        assert_eq!(sum, 300, "every call added one ({env:?})");
    }
}

#[test]
fn reads_of_rows_never_written_count_as_errors() {
    let server = Tabula::start();
    let reports = tabula_loadgen::run(&bench_args(
        server.thrift1,
        &[
            "--workloads",
            "randread",
            "--records",
            "100",
            "--operations",
            "50",
            "--connections",
            "2",
            "--client-threads",
            "1",
        ],
    ))
    .unwrap();
    assert_eq!(reports[0].errors, 50);
    assert_eq!(reports[0].ops_per_sec, 0.0);
}

#[test]
fn duration_bounds_a_run_and_no_wal_writes_are_readable() {
    let server = Tabula::start();
    let started = std::time::Instant::now();
    let reports = tabula_loadgen::run(&bench_args(
        server.thrift1,
        &[
            "--workloads",
            "seqwrite,compact,randread",
            "--records",
            "200",
            "--duration",
            "0.5",
            "--durability",
            "no-wal",
            "--transport",
            "framed",
            "--protocol",
            "compact",
        ],
    ))
    .unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    assert_eq!(count(report(&reports, "compact"), "compact"), 1);
    let read = report(&reports, "randread");
    assert_eq!(read.errors, 0);
    assert!(count(read, "read") > 0);
    assert!(read.elapsed_secs >= 0.5 && read.elapsed_secs < 5.0);
    assert_eq!(read.durability, "no-wal");
    assert_eq!(read.transport, "framed");
}

#[test]
fn the_null_backend_answers_without_storing() {
    let server = Tabula::start_null_backend();
    let reports = tabula_loadgen::run(&bench_args(
        server.thrift1,
        &[
            "--workloads",
            "randwrite,randread,scan",
            "--records",
            "100",
            "--operations",
            "200",
            "--scan-rows",
            "10",
        ],
    ))
    .unwrap();
    // Every get returns a 1000-byte value although nothing was stored.
    let read = report(&reports, "randread");
    assert_eq!(read.errors, 0);
    assert_eq!(count(read, "read"), 200);
    assert_eq!(count(report(&reports, "randwrite"), "write"), 200);
    // Scans find nothing.
    assert_eq!(report(&reports, "scan").ops[0].units, 0);
}

#[test]
fn bad_options_and_a_missing_server_are_clear_errors() {
    let server = Tabula::start_null_backend();
    let err =
        tabula_loadgen::run(&bench_args(server.thrift1, &["--workloads", "ycsb-z"])).unwrap_err();
    assert!(err.to_string().contains("ycsb-z"), "{err}");
    let err =
        tabula_loadgen::run(&bench_args(server.thrift1, &["--connections", "0"])).unwrap_err();
    assert!(err.to_string().contains("--connections"), "{err}");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = listener.local_addr().unwrap();
    drop(listener);
    let err = tabula_loadgen::run(&bench_args(closed, &[])).unwrap_err();
    assert!(err.to_string().contains("cannot connect"), "{err}");
}

#[test]
fn the_binary_runs_a_short_benchmark() {
    let server = Tabula::start();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tabula"))
        .args([
            "bench",
            "--addr",
            &server.thrift1.to_string(),
            "--workloads",
            "seqwrite,randread",
            "--records",
            "300",
            "--duration",
            "0.5",
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("randread"), "{stdout}");
    assert!(stdout.contains("ops/s"), "{stdout}");
}
