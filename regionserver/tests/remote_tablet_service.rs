//! The regionserver over gRPC answers like the regionserver called directly: the
//! same calls go to a local `RegionServer` and, through a real TCP connection, to
//! another `RegionServer` behind the RPC server, and every answer (errors included,
//! by kind and message) is compared. Also: tablet administration over the wire, and
//! a server that went away is an error, never a hang.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use proptest::prelude::*;
use tabula_regionserver::rpc::client::RemoteOptions;
use tabula_regionserver::rpc::{serve, RemoteTabletService};
use tabula_regionserver::{
    ReadSpec, RegionServer, RegionServerOptions, RemoteFailure, RsError, RsResult, ScanSpec,
    TabletService,
};
use tabula_storage::tablet::{CompareOp, Condition, TabletDescriptor};
use tabula_storage::{
    BloomType, ColumnSelector, Compression, Durability, Engine, EngineOptions, FamilySchema,
    Mutation, RowMutation, TableSchema, TimeRange, LATEST_TIMESTAMP,
};

const NOW_MS: i64 = 1_700_000_000_000;
const TABLET: u64 = 100;

fn regionserver(dir: &std::path::Path, name: &str) -> Arc<RegionServer> {
    let mut options = EngineOptions::new(dir);
    options.background_work = false;
    options.block_size = 512;
    options.memory_budget = 64 << 20;
    options.clock = Arc::new(|| NOW_MS);
    let engine = Arc::new(Engine::open(options).expect("engine opens"));
    Arc::new(RegionServer::new(
        engine,
        RegionServerOptions {
            name: name.into(),
            ..RegionServerOptions::default()
        },
    ))
}

/// A regionserver served over gRPC on a loopback port, on a runtime thread of its
/// own; stopped when dropped.
struct Served {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    fn start(service: Arc<dyn TabletService>) -> Served {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                addr_tx
                    .send(listener.local_addr().expect("addr"))
                    .expect("send");
                serve(listener, service, async {
                    let _ = stopped.await;
                })
                .await
                .expect("serve");
            });
        });
        let addr = addr_rx.recv().expect("server address");
        Served {
            addr,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The same regionserver twice: one called directly, one over gRPC.
struct Pair {
    local: Arc<RegionServer>,
    remote: RemoteTabletService,
    served: Served,
    _dirs: (tempfile::TempDir, tempfile::TempDir),
}

fn schema() -> TableSchema {
    let mut a = FamilySchema::new(&b"a"[..]).max_versions(3);
    a.bloom = BloomType::RowCol;
    let z = FamilySchema::new(&b"z"[..])
        .max_versions(2)
        .ttl(Some(3600))
        .compression(Compression::Zstd(3));
    TableSchema::new("t", vec![a, z]).expect("schema")
}

fn descriptor(id: u64) -> TabletDescriptor {
    TabletDescriptor {
        id,
        schema: schema(),
        start_row: Bytes::new(),
        end_row: Bytes::new(),
    }
}

fn pair() -> Pair {
    let (d1, d2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let local = regionserver(d1.path(), "local");
    let behind = regionserver(d2.path(), "behind-rpc");
    let served = Served::start(behind);
    let remote =
        RemoteTabletService::connect(&served.addr.to_string(), RemoteOptions::default()).unwrap();
    for rs in [&*local as &dyn TabletService, &remote] {
        rs.open_tablet(&descriptor(TABLET)).unwrap();
    }
    Pair {
        local,
        remote,
        served,
        _dirs: (d1, d2),
    }
}

/// What a caller can tell apart in an error: its kind and, where callers show it,
/// its message.
fn class(e: &RsError) -> String {
    use tabula_storage::Error as S;
    if e.is_not_serving() {
        return "not serving".into();
    }
    match e {
        RsError::BadFilter(f) => format!("filter: {f}"),
        RsError::UnknownScanner { .. } => "unknown scanner".into(),
        RsError::Remote {
            kind: RemoteFailure::BadFilter,
            message,
        } => format!("filter: {message}"),
        RsError::Remote {
            kind: RemoteFailure::InvalidArgument,
            message,
        } => format!("invalid: {message}"),
        RsError::Remote {
            kind: RemoteFailure::Other { permanent },
            message,
        } => format!("other({permanent}): {message}"),
        RsError::Storage(s @ S::UnknownFamily { .. }) => format!("family: {s}"),
        RsError::Storage(
            s @ (S::EmptyRowKey
            | S::RowKeyTooLong { .. }
            | S::ValueTooLarge { .. }
            | S::InvalidTimestamp { .. }
            | S::InvalidArgument(_)),
        ) => format!("invalid: {s}"),
        RsError::Storage(s) => format!("other({}): {s}", s.is_permanent()),
        RsError::NotServing { .. } | RsError::Unreachable { .. } => "not serving".into(),
        RsError::Interrupted { message, .. } => format!("interrupted: {message}"),
    }
}

fn same<T: PartialEq + std::fmt::Debug>(
    what: &str,
    local: RsResult<T>,
    remote: RsResult<T>,
) -> Result<(), TestCaseError> {
    match (local, remote) {
        (Ok(l), Ok(r)) => prop_assert_eq!(l, r, "{}", what),
        (Err(l), Err(r)) => prop_assert_eq!(class(&l), class(&r), "{}", what),
        (l, r) => prop_assert!(false, "{what}: local {l:?}, remote {r:?}"),
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Mutate(RowMutation),
    Get(Bytes, ReadSpec),
    CheckAndPut(Bytes, Option<Bytes>, Bytes),
    Increment(Bytes, i64),
    Append(Bytes, Bytes),
    Scan(ScanSpec, usize),
    Batch(Vec<RowMutation>),
}

fn row() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        9 => (0u8..8).prop_map(|i| Bytes::from(format!("r{i}"))),
        1 => Just(Bytes::new()),
    ]
}

fn family() -> impl Strategy<Value = Bytes> {
    prop_oneof![
        5 => Just(Bytes::from_static(b"a")),
        4 => Just(Bytes::from_static(b"z")),
        1 => Just(Bytes::from_static(b"nope")),
    ]
}

fn qualifier() -> impl Strategy<Value = Bytes> {
    (0u8..3).prop_map(|i| Bytes::from(format!("q{i}")))
}

fn timestamp() -> impl Strategy<Value = i64> {
    prop_oneof![Just(LATEST_TIMESTAMP), 1i64..6, Just(-5)]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    let value = proptest::collection::vec(any::<u8>(), 0..6).prop_map(Bytes::from);
    prop_oneof![
        6 => (family(), qualifier(), timestamp(), value).prop_map(|(family, qualifier, timestamp, value)| {
            Mutation::Put { family, qualifier, timestamp, value }
        }),
        1 => (family(), qualifier(), timestamp()).prop_map(|(family, qualifier, timestamp)| {
            Mutation::DeleteVersion { family, qualifier, timestamp }
        }),
        1 => (family(), qualifier(), timestamp()).prop_map(|(family, qualifier, timestamp)| {
            Mutation::DeleteColumn { family, qualifier, timestamp }
        }),
        1 => (family(), timestamp()).prop_map(|(family, timestamp)| Mutation::DeleteFamily { family, timestamp }),
        1 => (family(), 1i64..6).prop_map(|(family, timestamp)| Mutation::DeleteFamilyVersion { family, timestamp }),
        1 => timestamp().prop_map(|timestamp| Mutation::DeleteRow { timestamp }),
    ]
}

fn row_mutation() -> impl Strategy<Value = RowMutation> {
    (row(), proptest::collection::vec(mutation(), 1..4))
        .prop_map(|(row, mutations)| RowMutation { row, mutations })
}

fn read_spec() -> impl Strategy<Value = ReadSpec> {
    let column = prop_oneof![
        family().prop_map(ColumnSelector::Family),
        (family(), qualifier()).prop_map(|(f, q)| ColumnSelector::Column(f, q)),
    ];
    let filter = prop_oneof![
        6 => Just(None),
        1 => Just(Some(Bytes::from_static(b"ValueFilter(=, 'binary:')"))),
        1 => Just(Some(Bytes::from_static(b"QualifierFilter(>=, 'binary:q1')"))),
        1 => Just(Some(Bytes::from_static(b"NoSuchFilter(1)"))),
        1 => Just(Some(Bytes::from_static(b"ValueFilter(=,"))),
    ];
    (
        proptest::collection::vec(column, 0..3),
        prop_oneof![
            Just(TimeRange::ALL),
            (0i64..4, 3i64..8).prop_map(|(a, b)| TimeRange::new(a, b))
        ],
        0u32..4,
        filter,
    )
        .prop_map(|(columns, time_range, max_versions, filter)| ReadSpec {
            columns,
            time_range,
            family_time_ranges: Vec::new(),
            max_versions,
            filter,
        })
}

fn op() -> impl Strategy<Value = Op> {
    let value = proptest::collection::vec(any::<u8>(), 0..4).prop_map(Bytes::from);
    prop_oneof![
        6 => row_mutation().prop_map(Op::Mutate),
        4 => (row(), read_spec()).prop_map(|(r, s)| Op::Get(r, s)),
        2 => (row(), proptest::option::of(value.clone()), value.clone())
            .prop_map(|(r, expected, v)| Op::CheckAndPut(r, expected, v)),
        1 => (row(), -3i64..4).prop_map(|(r, n)| Op::Increment(r, n)),
        1 => (row(), value).prop_map(|(r, v)| Op::Append(r, v)),
        2 => (read_spec(), any::<bool>(), 0u32..3, 1usize..4).prop_map(|(read, reverse, batch, n)| {
            Op::Scan(ScanSpec { start_row: Bytes::new(), stop_row: Bytes::new(), reverse, read, batch }, n)
        }),
        1 => proptest::collection::vec(row_mutation(), 1..4).prop_map(Op::Batch),
    ]
}

/// Drains a scanner `n` rows at a time.
fn scan(rs: &dyn TabletService, spec: &ScanSpec, n: usize) -> RsResult<Vec<Vec<u8>>> {
    let scanner = rs.open_scanner(TABLET, spec)?;
    let mut out = Vec::new();
    loop {
        let batch = rs.scanner_next(scanner, n)?;
        for r in &batch.rows {
            out.push(format!("{:?} partial={}", r.cells, r.partial).into_bytes());
        }
        if batch.exhausted || batch.ended_by_filter {
            out.push(format!("ended_by_filter={}", batch.ended_by_filter).into_bytes());
            break;
        }
    }
    rs.close_scanner(scanner);
    Ok(out)
}

fn apply(op: &Op, rs: &dyn TabletService) -> RsResult<String> {
    let durability = Durability::Sync;
    Ok(match op {
        Op::Mutate(m) => format!("{:?}", rs.mutate(TABLET, m, durability)?),
        Op::Get(row, spec) => format!("{:?}", rs.get(TABLET, row, spec)?),
        Op::CheckAndPut(row, expected, value) => {
            let condition = Condition {
                family: Bytes::from_static(b"a"),
                qualifier: Bytes::from_static(b"q0"),
                op: CompareOp::Equal,
                value: expected.clone(),
                time_range: TimeRange::ALL,
            };
            let mut m = RowMutation::new(row.clone());
            m.mutations.push(Mutation::Put {
                family: Bytes::from_static(b"a"),
                qualifier: Bytes::from_static(b"q0"),
                timestamp: LATEST_TIMESTAMP,
                value: value.clone(),
            });
            format!(
                "{:?}",
                rs.check_and_mutate(TABLET, &condition, &m, durability)?
            )
        }
        Op::Increment(row, n) => {
            let columns = [(Bytes::from_static(b"a"), Bytes::from_static(b"n"), *n)];
            format!("{:?}", rs.increment(TABLET, row, &columns, durability)?)
        }
        Op::Append(row, v) => {
            let columns = [(
                Bytes::from_static(b"z"),
                Bytes::from_static(b"s"),
                v.clone(),
            )];
            format!("{:?}", rs.append(TABLET, row, &columns, durability)?)
        }
        Op::Scan(spec, n) => format!("{:?}", scan(rs, spec, *n)?),
        Op::Batch(rows) => {
            let refs: Vec<&RowMutation> = rows.iter().collect();
            let outcome =
                rs.mutate_batch(&[(TABLET, refs.clone()), (TABLET + 77, refs)], durability);
            outcome
                .iter()
                .map(|tablet| match tablet {
                    Err(e) => class(e),
                    Ok(rows) => rows
                        .iter()
                        .map(|r| r.as_ref().map_or_else(class, |()| "ok".into()))
                        .collect::<Vec<_>>()
                        .join(","),
                })
                .collect::<Vec<_>>()
                .join(" | ")
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn remote_calls_answer_like_direct_ones(ops in proptest::collection::vec(op(), 1..40)) {
        let p = pair();
        for (i, op) in ops.iter().enumerate() {
            same(&format!("op {i} {op:?}"), apply(op, &*p.local), apply(op, &p.remote))?;
        }
        // A flush and a major compaction change nothing either side can see.
        for rs in [&*p.local as &dyn TabletService, &p.remote] {
            rs.flush_tablet(TABLET).unwrap();
            rs.compact_tablet(TABLET, true).unwrap();
        }
        let everything = Op::Scan(ScanSpec { read: ReadSpec { max_versions: 3, ..ReadSpec::default() }, ..ScanSpec::default() }, 2);
        same("final scan", apply(&everything, &*p.local), apply(&everything, &p.remote))?;
    }
}

#[test]
fn tablets_are_administered_over_the_wire() {
    let p = pair();
    let rs: &dyn TabletService = &p.remote;
    assert_eq!(rs.name(), "behind-rpc");
    for i in 0..200u32 {
        let mut m = RowMutation::new(Bytes::from(format!("row{i:04}")));
        m.mutations.push(Mutation::Put {
            family: Bytes::from_static(b"a"),
            qualifier: Bytes::from_static(b"q"),
            timestamp: LATEST_TIMESTAMP,
            value: Bytes::from(vec![b'x'; 100]),
        });
        rs.mutate(TABLET, &m, Durability::Sync).unwrap();
    }
    for i in 0..7u32 {
        let row = Bytes::from(format!("row{i:04}"));
        assert_eq!(rs.get(TABLET, &row, &ReadSpec::default()).unwrap().len(), 1);
    }
    rs.flush_tablet(TABLET).unwrap();
    let report = rs.report();
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].tablet, TABLET);
    assert!(report[0].stats.file_count >= 1, "{report:?}");
    // The request counters travel too: what the balancer weighs servers by.
    assert_eq!(report[0].requests.writes, 200, "{report:?}");
    assert_eq!(report[0].requests.reads, 7, "{report:?}");

    let split = rs.split_tablet(TABLET, None, 101, 102).unwrap();
    assert_eq!(split.left.id, 101);
    assert_eq!(split.right.id, 102);
    assert_eq!(split.left.end_row, split.at);
    assert_eq!(split.right.start_row, split.at);
    assert_eq!(split.left.schema, schema());
    assert!(matches!(
        rs.get(TABLET, &Bytes::from_static(b"row0001"), &ReadSpec::default()),
        Err(e) if e.is_not_serving()
    ));
    let (left_row, right_row) = (
        Bytes::from_static(b"row0000"),
        Bytes::from_static(b"row0199"),
    );
    assert_eq!(
        rs.get(101, &left_row, &ReadSpec::default()).unwrap().len(),
        1
    );
    assert_eq!(
        rs.get(102, &right_row, &ReadSpec::default()).unwrap().len(),
        1
    );

    // A schema change adds a family; the old data stays.
    let mut families = schema().families().to_vec();
    families.push(FamilySchema::new(&b"new"[..]));
    let wider = TableSchema::new("t", families).unwrap();
    rs.update_schema(101, &wider).unwrap();
    let mut m = RowMutation::new(left_row.clone());
    m.mutations.push(Mutation::Put {
        family: Bytes::from_static(b"new"),
        qualifier: Bytes::from_static(b"c"),
        timestamp: 7,
        value: Bytes::from_static(b"v"),
    });
    rs.mutate(101, &m, Durability::Sync).unwrap();
    assert_eq!(
        rs.get(101, &left_row, &ReadSpec::default()).unwrap().len(),
        2
    );

    rs.compact_tablet(101, true).unwrap();
    rs.compact_tablet(102, true).unwrap();
    let live: HashSet<u64> = [101, 102].into_iter().collect();
    rs.collect_garbage(&live).unwrap();
    rs.close_tablet(102).unwrap();
    rs.destroy_tablet(102).unwrap();
    assert!(matches!(
        rs.get(102, &right_row, &ReadSpec::default()),
        Err(e) if e.is_not_serving()
    ));
    assert!(matches!(
        rs.scanner_next(987_654, 10),
        Err(RsError::UnknownScanner { scanner: 987_654 })
    ));
    // Opening an open tablet again is harmless (an assignment may be repeated).
    rs.open_tablet(&TabletDescriptor {
        start_row: Bytes::new(),
        end_row: split.at.clone(),
        ..descriptor(101)
    })
    .unwrap();
    assert_eq!(
        rs.get(101, &left_row, &ReadSpec::default()).unwrap().len(),
        2
    );
    // A schema the engine refuses travels back as its error.
    let bad = rs.update_schema(101, &TableSchema::new("t", Vec::new()).unwrap());
    let local_bad = p
        .local
        .update_schema(TABLET, &TableSchema::new("t", Vec::new()).unwrap());
    assert_eq!(
        bad.as_ref().map_err(class),
        local_bad.as_ref().map_err(class)
    );
}

#[test]
fn a_server_that_went_away_is_an_error_not_a_hang() {
    let mut p = pair();
    p.served.stop();
    let started = Instant::now();
    let result = p
        .remote
        .get(TABLET, &Bytes::from_static(b"r"), &ReadSpec::default());
    // Nothing listens any more: the request never left, and the caller is told to
    // look the tablet up again.
    assert!(
        matches!(&result, Err(e @ RsError::Unreachable { .. }) if e.is_not_serving()),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(p.remote.report().is_empty());

    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let options = RemoteOptions {
        connect_timeout: Duration::from_millis(500),
        ..RemoteOptions::default()
    };
    assert!(RemoteTabletService::connect(&port.to_string(), options).is_err());
}

/// A TCP relay between a client and a server that can cut every connection it
/// carries: once cut, the next bytes a client sends close its connection
/// unanswered, as when a server dies with a call on the wire.
struct CuttingRelay {
    addr: SocketAddr,
    cut: Arc<std::sync::atomic::AtomicBool>,
}

impl CuttingRelay {
    fn start(upstream: SocketAddr) -> CuttingRelay {
        use std::io::{Read, Write};
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind relay");
        let addr = listener.local_addr().expect("relay address");
        let cut = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cutting = Arc::clone(&cut);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(mut client) = client else { return };
                let Ok(mut server) = std::net::TcpStream::connect(upstream) else {
                    continue;
                };
                let (Ok(mut client_out), Ok(mut server_in)) =
                    (client.try_clone(), server.try_clone())
                else {
                    continue;
                };
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut server_in, &mut client_out);
                    let _ = client_out.shutdown(std::net::Shutdown::Both);
                });
                let cutting = Arc::clone(&cutting);
                std::thread::spawn(move || {
                    let mut buf = vec![0u8; 64 << 10];
                    loop {
                        let n = match client.read(&mut buf) {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        if cutting.load(Ordering::SeqCst) || server.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = client.shutdown(std::net::Shutdown::Both);
                    let _ = server.shutdown(std::net::Shutdown::Both);
                });
            }
        });
        CuttingRelay { addr, cut }
    }

    fn cut(&self) {
        self.cut.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn a_connection_cut_under_a_call_is_an_interrupted_call_not_a_move() {
    let p = pair();
    let relay = CuttingRelay::start(p.served.addr);
    let remote = RemoteTabletService::connect(&relay.addr.to_string(), RemoteOptions::default())
        .expect("connect through the relay");
    let row = Bytes::from_static(b"r");
    let m = RowMutation::new(row.clone()).put(&b"a"[..], &b"q"[..], NOW_MS, &b"v"[..]);
    remote
        .mutate(TABLET, &m, Durability::Sync)
        .expect("a write through the relay");
    relay.cut();
    // The request left; whether it was carried out is unknown. The caller must not
    // take it for "not serving" (which promises it was not carried out).
    let result = remote.get(TABLET, &row, &ReadSpec::default());
    assert!(
        matches!(&result, Err(e @ RsError::Interrupted { .. }) if !e.is_not_serving()),
        "{result:?}"
    );
}

#[test]
fn every_part_of_a_batch_to_a_server_that_went_away_says_so() {
    let mut p = pair();
    p.served.stop();
    let (a, b) = (
        RowMutation::new(&b"a"[..]).put(&b"a"[..], &b"q"[..], NOW_MS, &b"v"[..]),
        RowMutation::new(&b"b"[..]).put(&b"a"[..], &b"q"[..], NOW_MS, &b"v"[..]),
    );
    let outcomes = p.remote.mutate_batch(
        &[(TABLET, vec![&a]), (TABLET + 1, vec![&b])],
        Durability::Sync,
    );
    assert_eq!(outcomes.len(), 2);
    for outcome in &outcomes {
        // Nothing was delivered: each part may go to wherever its tablet moved.
        assert!(
            matches!(outcome, Err(e @ RsError::Unreachable { .. }) if e.is_not_serving()),
            "{outcome:?}"
        );
    }
}

#[test]
fn the_slow_call_log_travels_and_names_the_calling_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut options = EngineOptions::new(dir.path());
    options.background_work = false;
    let engine = Arc::new(Engine::open(options).expect("engine opens"));
    // Every call is slow at a threshold of 0.
    let behind = Arc::new(RegionServer::new(
        engine,
        RegionServerOptions {
            name: "127.0.0.1:16020".into(),
            slow_log: tabula_regionserver::slow_log::SlowLogSettings {
                enabled: true,
                slow_after: Duration::ZERO,
                ..Default::default()
            },
            ..RegionServerOptions::default()
        },
    ));
    let served = Served::start(Arc::clone(&behind) as Arc<dyn TabletService>);
    let remote =
        RemoteTabletService::connect(&served.addr.to_string(), RemoteOptions::default()).unwrap();
    remote.open_tablet(&descriptor(TABLET)).unwrap();
    // The start code travels with the name.
    assert!(behind.start_code() > 1_600_000_000_000);
    assert_eq!(remote.start_code(), behind.start_code());
    let row = Bytes::from_static(b"r1");
    let m = RowMutation::new(row.clone()).put(&b"a"[..], &b"q"[..], 5, &b"v"[..]);
    remote.mutate(TABLET, &m, Durability::Sync).unwrap();
    assert_eq!(
        remote
            .get(TABLET, &row, &ReadSpec::default())
            .unwrap()
            .len(),
        1
    );
    // A call made in the server's own process names its host.
    behind.get(TABLET, &row, &ReadSpec::default()).unwrap();

    let calls = remote.slow_calls().unwrap();
    let seen: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.method.as_str(), c.param.as_str()))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("Get", "tablet=100, row=r1"),
            ("Get", "tablet=100, row=r1"),
            ("Mutate", "tablet=100, row=r1")
        ]
    );
    assert_eq!(calls[0].client, "127.0.0.1", "{calls:?}");
    // Over the wire: the calling socket's address.
    assert!(calls[1].client.starts_with("127.0.0.1:"), "{calls:?}");
    assert_eq!(calls[1].table, "t");
    assert!(calls[1].response_bytes > 0, "{calls:?}");
    assert!(remote.clear_slow_calls().unwrap());
    assert!(remote.slow_calls().unwrap().is_empty());
}
