//! Running workloads: connections as tasks on a small async runtime, the operation
//! budget, timing, the progress bar, server sampling, and handing each finished run
//! to the reports.
//!
//! Owns: [`run`] (the whole `tabula bench` invocation, and the runtime it drives
//! its connections on) and the per-run driver.
//! Must not: know how an operation is made (see [`crate::worker`]) or how results are
//! formatted (see [`crate::report`]).

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{BenchArgs, ClientSchedArg, TransportArg};
use crate::client::{Connection, Endpoint};
use crate::error::BenchError;
use crate::probe::ServerProbe;
use crate::report::{self, RunReport, RunSettings};
use crate::stats::Recorder;
use crate::worker::{Shared, Task, Worker, COLUMN, MANY_VERSIONS_ROW, ONE_VERSION_ROW};
use crate::workload::{DataSet, Workload};

/// How often the server is sampled.
const SAMPLE_INTERVAL: Duration = Duration::from_millis(100);
/// How often the progress bar is updated while the workers run.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(20);
/// Most connections one run may open.
const MAX_CONNECTIONS: usize = 4096;
/// Most threads driving the connections.
const MAX_CLIENT_THREADS: usize = 256;

/// When a run stops.
enum Budget {
    /// After this many operations over all workers (or the deadline, if any).
    Count {
        left: AtomicU64,
        deadline: Option<Instant>,
    },
    /// Each worker walks its slice once (or stops at the deadline, if any).
    Slices { deadline: Option<Instant> },
}

impl Budget {
    /// A shared budget of `operations`, or, with a deadline, of as many operations
    /// as fit before it (`--duration` stands instead of `--operations`).
    fn counted(operations: u64, deadline: Option<Instant>) -> Budget {
        let operations = if deadline.is_some() {
            u64::MAX
        } else {
            operations
        };
        Budget::Count {
            left: AtomicU64::new(operations),
            deadline,
        }
    }

    /// Claims one operation; false when the run is over.
    fn take(&self) -> bool {
        let before_deadline = |d: &Option<Instant>| d.is_none_or(|d| Instant::now() < d);
        match self {
            Budget::Count { left, deadline } => {
                before_deadline(deadline)
                    && left
                        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
                        .is_ok()
            }
            Budget::Slices { deadline } => before_deadline(deadline),
        }
    }
}

fn validate(args: &BenchArgs) -> Result<(), BenchError> {
    let bad = |m: &str| Err(BenchError::InvalidOption(m.to_string()));
    if args.connections == 0 || args.connections > MAX_CONNECTIONS {
        return bad("--connections must be between 1 and 4096");
    }
    if args.client_threads > MAX_CLIENT_THREADS {
        return bad("--client-threads must be at most 256");
    }
    if args.records == 0 || args.operations == 0 {
        return bad("--records and --operations must be positive");
    }
    if args.value_size == 0 || args.ycsb_field_size == 0 || args.ycsb_fields == 0 {
        return bad("--value-size, --ycsb-fields and --ycsb-field-size must be positive");
    }
    if args.scan_rows == 0 || args.write_batch == 0 || args.read_batch == 0 {
        return bad("--scan-rows, --write-batch and --read-batch must be positive");
    }
    if args.versions == 0 || args.versions >= i32::MAX as u64 {
        return bad("--versions must be between 1 and 2147483646");
    }
    if args.duration.is_some_and(|d| !(d > 0.0 && d.is_finite())) {
        return bad("--duration must be a positive number of seconds");
    }
    Ok(())
}

fn shared_state(args: &BenchArgs) -> Result<Shared, BenchError> {
    let tls = match (args.transport, &args.tls_ca_file) {
        (TransportArg::Https, Some(ca)) => Some(crate::tls::client_config(ca)?),
        (TransportArg::Https, None) => {
            return Err(BenchError::InvalidOption(
                "--transport https needs --tls-ca-file".into(),
            ))
        }
        _ => None,
    };
    Ok(Shared {
        endpoint: Endpoint {
            addr: args.addr.clone(),
            transport: args.transport,
            protocol: args.protocol,
            durability: args.durability,
            tls,
        },
        bigtable_table: args.table.as_bytes().to_vec(),
        ycsb_table: format!("{}_ycsb", args.table).into_bytes(),
        versions_table: format!("{}_versions", args.table).into_bytes(),
        records: args.records,
        mem_records: args.mem_records,
        value_size: args.value_size,
        ycsb_fields: args.ycsb_fields,
        ycsb_field_size: args.ycsb_field_size,
        scan_rows: args.scan_rows,
        scan_filter: args.scan_filter.as_ref().map(|f| f.as_bytes().to_vec()),
        versions: args.versions,
        write_batch: args.write_batch,
        read_batch: args.read_batch,
        ycsb_inserted: Arc::new(AtomicU64::new(args.records)),
        ycsb_next_insert: AtomicU64::new(args.records),
    })
}

/// Creates (or, with --fresh, recreates) the tables the workloads need.
async fn set_up_tables(
    shared: &Shared,
    workloads: &[Workload],
    args: &BenchArgs,
) -> Result<(), BenchError> {
    let mut conn = Connection::open(&shared.endpoint).await?;
    let mut sets: Vec<DataSet> = workloads.iter().map(Workload::data_set).collect();
    sets.sort();
    sets.dedup();
    for set in sets {
        let (table, versions) = match set {
            DataSet::Bigtable => (&args.table, 1),
            DataSet::Ycsb => (&format!("{}_ycsb", args.table), 1),
            DataSet::Versions => (
                &format!("{}_versions", args.table),
                args.versions as i32 + 1,
            ),
        };
        conn.ensure_table(table, "cf", versions, args.fresh).await?;
    }
    Ok(())
}

/// The timed runs a workload consists of, with their report names.
async fn tasks_of(workload: Workload, shared: &Shared) -> Result<Vec<(String, Task)>, BenchError> {
    let named = |n: &str, t| (n.to_string(), t);
    Ok(match workload {
        Workload::SeqWrite => vec![named("seqwrite", Task::SeqWrite)],
        Workload::RandWrite => vec![named("randwrite", Task::RandWrite)],
        Workload::SeqRead => vec![named("seqread", Task::SeqRead)],
        Workload::RandRead => vec![named("randread", Task::RandRead)],
        Workload::RandReadMem => vec![named("randread-mem", Task::RandReadMem)],
        Workload::Scan => vec![named("scan", Task::Scan)],
        Workload::YcsbLoad => vec![named("ycsb-load", Task::YcsbLoad)],
        Workload::Compact => vec![named("compact", Task::Compact)],
        Workload::Counters => vec![named("counters", Task::Counters)],
        Workload::Ycsb(mix) => vec![(workload.name(), Task::Ycsb(mix))],
        Workload::Versions => {
            let mut runs = Vec::new();
            if !versions_loaded(shared).await? {
                let mut conn = Connection::open(&shared.endpoint).await?;
                let value = vec![b'v'; shared.value_size];
                conn.put_at(&shared.versions_table, ONE_VERSION_ROW, COLUMN, &value, 1)
                    .await
                    .map_err(BenchError::setup)?;
                runs.push(named("versions-load", Task::VersionsLoad));
            }
            runs.push(named("versions-asof", Task::AsOf));
            runs.push(named("versions-one", Task::OneVersion));
            runs
        }
    })
}

/// Whether the versions table already holds both cells in full.
async fn versions_loaded(shared: &Shared) -> Result<bool, BenchError> {
    let mut conn = Connection::open(&shared.endpoint).await?;
    let table = &shared.versions_table;
    let newest = conn
        .get_as_of(table, MANY_VERSIONS_ROW, COLUMN, i64::MAX)
        .await
        .map_err(BenchError::setup)?;
    let oldest = conn
        .get_as_of(table, MANY_VERSIONS_ROW, COLUMN, 2)
        .await
        .map_err(BenchError::setup)?;
    let one = conn
        .get(table, ONE_VERSION_ROW, COLUMN)
        .await
        .map_err(BenchError::setup)?;
    Ok(newest == Some(shared.versions as i64) && oldest == Some(1) && one == shared.value_size)
}

fn progress_bar(args: &BenchArgs, name: &str, length: u64) -> ProgressBar {
    if args.quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(length);
    if let Ok(style) =
        ProgressStyle::with_template("{msg:>14} [{bar:40}] {percent:>3}% {elapsed}/{duration}")
    {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(name.to_string());
    bar
}

/// Runs one task on every connection and reports it.
async fn run_task(
    args: &BenchArgs,
    shared: &Arc<Shared>,
    name: &str,
    task: Task,
    seed: u64,
) -> Result<RunReport, BenchError> {
    let workers = args.connections;
    let deadline_after = args.duration.map(Duration::from_secs_f64);
    let slice_total = match task {
        Task::VersionsLoad => shared.versions,
        _ => shared.records,
    };
    // A scan counts as many operations as rows it asks for, so that --operations
    // means about the same amount of data for every workload.
    let operations = match task {
        Task::Scan => args.operations.div_ceil(u64::from(args.scan_rows)),
        Task::Compact => 1,
        _ => args.operations,
    };
    let bar_length = match deadline_after {
        Some(d) => d.as_millis() as u64,
        None if task.walks_slice() => slice_total,
        None => operations,
    };
    // Every connection is open before the clock starts.
    let mut connecting = tokio::task::JoinSet::new();
    for index in 0..workers {
        let shared = Arc::clone(shared);
        connecting.spawn(async move { Worker::connect(shared, task, index, workers, seed).await });
    }
    let mut ready = Vec::with_capacity(workers);
    while let Some(joined) = connecting.join_next().await {
        ready.push(joined.map_err(|e| BenchError::AllConnectionsFailed(e.to_string()))??);
    }
    let probe = match args.server_pid {
        Some(pid) => Some(ServerProbe::start(pid, SAMPLE_INTERVAL)?),
        None => None,
    };
    let bar = progress_bar(args, name, bar_length);
    let done = Arc::new(AtomicU64::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let deadline = deadline_after.map(|d| started + d);
    let budget = Arc::new(if task.walks_slice() {
        Budget::Slices { deadline }
    } else if task == Task::Compact {
        // One call, however long the run may last.
        Budget::counted(operations, None)
    } else {
        Budget::counted(operations, deadline)
    });
    let mut running = tokio::task::JoinSet::new();
    for mut worker in ready {
        let (budget, done, finished) = (
            Arc::clone(&budget),
            Arc::clone(&done),
            Arc::clone(&finished),
        );
        running.spawn(async move {
            while budget.take() && worker.step(task).await {
                done.fetch_add(1, Ordering::Relaxed);
            }
            let ended = Instant::now();
            finished.fetch_add(1, Ordering::AcqRel);
            (worker.recorder, ended)
        });
    }
    while finished.load(Ordering::Acquire) < workers {
        tokio::time::sleep(PROGRESS_INTERVAL).await;
        bar.set_position(match deadline_after {
            Some(_) => started.elapsed().as_millis() as u64,
            None => done.load(Ordering::Relaxed),
        });
    }
    let mut results = Vec::with_capacity(workers);
    while let Some(joined) = running.join_next().await {
        results.push(
            joined.map_err(|e| BenchError::AllConnectionsFailed(format!("a worker failed: {e}"))),
        );
    }
    // The run ends when its last worker does, not when the progress loop
    // next wakes to notice (up to a progress interval later).
    let ended = results
        .iter()
        .filter_map(|r| r.as_ref().ok().map(|(_, end)| *end))
        .max()
        .unwrap_or_else(Instant::now);
    let elapsed = ended.saturating_duration_since(started);
    bar.finish_and_clear();
    let server = probe.map(ServerProbe::stop);
    let mut recorder = Recorder::new();
    let mut first_error = None;
    for r in results {
        match r {
            Ok((rec, _)) => recorder.merge(&rec),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let settings = RunSettings {
        workload: name.to_string(),
        addr: args.addr.clone(),
        records: if task == Task::VersionsLoad || task == Task::AsOf {
            shared.versions
        } else {
            shared.records
        },
        operations: recorder.total_ops() + recorder.total_errors(),
        connections: workers,
        value_size: if matches!(task, Task::YcsbLoad | Task::Ycsb(_)) {
            shared.ycsb_fields * shared.ycsb_field_size
        } else {
            shared.value_size
        },
        durability: args.durability.name().to_string(),
        transport: args.transport.name().to_string(),
        protocol: args.protocol.name().to_string(),
        client_sched: args.client_sched.name().to_string(),
        seed,
    };
    Ok(RunReport::new(settings, elapsed, &recorder, server))
        .map(|r| (r, recorder))
        .and_then(|(r, rec)| publish(args, r, &rec))
}

/// Prints a finished run and writes it to the requested files.
fn publish(
    args: &BenchArgs,
    report: RunReport,
    recorder: &Recorder,
) -> Result<RunReport, BenchError> {
    let mut out = std::io::stdout().lock();
    let _ = report::print_text(&report, &mut out);
    let _ = out.flush();
    if let Some(path) = &args.json {
        report::append_json_line(&report, path)?;
    }
    if let Some(path) = &args.csv {
        report::append_csv_line(&report, path)?;
    }
    if let Some(dir) = &args.plot_dir {
        std::fs::create_dir_all(dir).map_err(|e| {
            BenchError::InvalidOption(format!("cannot create {}: {e}", dir.display()))
        })?;
        let path = dir.join(format!("{}-{}c.png", report.workload, report.connections));
        let title = format!(
            "{}: {:.0} ops/s, {} connections",
            report.workload, report.ops_per_sec, report.connections
        );
        report::write_latency_plot(&title, recorder, &path)?;
    }
    Ok(report)
}

/// Runs every workload `args` names against the server, in order, and returns their
/// reports (also printed, and written where asked).
pub fn run(args: &BenchArgs) -> Result<Vec<RunReport>, BenchError> {
    validate(args)?;
    let workloads = Workload::parse_list(&args.workloads)?;
    let threads = match args.client_threads {
        0 => std::thread::available_parallelism().map_or(1, usize::from),
        n => n,
    };
    // The runtime's threads inherit the policy of the thread that starts them.
    // A system that refuses the policy still gets its run, reported as run.
    // The calling thread gets its own policy back when the run is over.
    let mut args = args.clone();
    let _policy = match crate::sched::apply(args.client_sched) {
        Ok(scope) => Some(scope),
        Err(e) => {
            tracing::warn!("{e}; the client runs under the normal policy");
            args.client_sched = ClientSchedArg::Normal;
            None
        }
    };
    let args = &args;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("bench-client")
        .enable_all()
        .build()
        .map_err(|e| BenchError::InvalidOption(format!("cannot start the client runtime: {e}")))?;
    let reports = runtime.block_on(run_workloads(args, &workloads))?;
    print_summary(&reports);
    Ok(reports)
}

async fn run_workloads(
    args: &BenchArgs,
    workloads: &[Workload],
) -> Result<Vec<RunReport>, BenchError> {
    let shared = Arc::new(shared_state(args)?);
    set_up_tables(&shared, workloads, args).await?;
    let mut reports = Vec::new();
    for (i, workload) in workloads.iter().enumerate() {
        for (name, task) in tasks_of(*workload, &shared).await? {
            let seed = args.seed.wrapping_add(i as u64);
            reports.push(run_task(args, &shared, &name, task, seed).await?);
        }
    }
    Ok(reports)
}

/// One line per run, and the as-of-T ratio when the versions workload ran.
fn print_summary(reports: &[RunReport]) {
    println!(
        "\n{:<16} {:>12} {:>12} {:>10} {:>8}",
        "run", "ops/s", "rows/s", "p99 ms", "errors"
    );
    for r in reports {
        let p99 = r.ops.iter().map(|o| o.p99_us).max().unwrap_or(0) as f64 / 1000.0;
        println!(
            "{:<16} {:>12.0} {:>12.0} {:>10.3} {:>8}",
            r.workload, r.ops_per_sec, r.units_per_sec, p99, r.errors
        );
    }
    let rate = |name: &str| {
        reports
            .iter()
            .find(|r| r.workload == name)
            .map(|r| r.ops_per_sec)
    };
    if let (Some(asof), Some(one)) = (rate("versions-asof"), rate("versions-one")) {
        if one > 0.0 {
            println!(
                "as-of-T gets on the many-version cell run at {:.2}x the rate of one-version gets",
                asof / one
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_budget_ends_after_its_operations() {
        let budget = Budget::counted(3, None);
        assert_eq!((0..5).filter(|_| budget.take()).count(), 3);
    }

    #[test]
    fn a_deadline_budget_runs_past_the_operation_count_until_its_deadline() {
        let budget = Budget::counted(3, Some(Instant::now() + Duration::from_secs(60)));
        assert_eq!((0..1000).filter(|_| budget.take()).count(), 1000);
        let over = Budget::counted(3, Some(Instant::now() - Duration::from_millis(1)));
        assert!(!over.take());
    }
}
