//! Shared support for the Thrift1 integration tests: runs the real `tabula` binary
//! in a temporary data directory, waits for its ready line, and hands out
//! `HbaseSyncClient`s over TCP for every transport and protocol, plus helpers that
//! build requests the way happybase does and unpack HBase's exceptions.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tabula_thrift::hbase::{
    AlreadyExists, BatchMutation, ColumnDescriptor, HbaseSyncClient, IOError, IllegalArgument,
    Mutation, TCell, THbaseSyncClient, TRowResult, TScan,
};
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TCompactInputProtocol, TCompactOutputProtocol,
    TInputProtocol, TOutputProtocol,
};
use thrift::transport::{
    TBufferedReadTransport, TBufferedWriteTransport, TFramedReadTransport, TFramedWriteTransport,
    TIoChannel, TTcpChannel,
};
use thrift::ApplicationError;

pub mod t2;

/// How long the server may take to print its ready line.
pub const READY_TIMEOUT: Duration = Duration::from_secs(90);
/// Bound on any single client read.
pub const IO_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a stopped server may take to exit after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

/// A Thrift1 client over any transport and protocol.
pub type Client = HbaseSyncClient<Box<dyn TInputProtocol + Send>, Box<dyn TOutputProtocol + Send>>;

/// A Thrift2 client over TCP.
pub type Client2 = tabula_thrift::hbase2::THBaseServiceSyncClient<
    Box<dyn TInputProtocol + Send>,
    Box<dyn TOutputProtocol + Send>,
>;

/// How a client frames messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    Buffered,
    Framed,
}

/// Which protocol a client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    Binary,
    Compact,
}

/// The binary under test: `TABULA_BIN` when set (to test another build), else the
/// crate's `tabula` binary.
pub fn binary_path() -> PathBuf {
    if let Some(p) = std::env::var_os("TABULA_BIN") {
        return PathBuf::from(p);
    }
    match option_env!("CARGO_BIN_EXE_tabula") {
        Some(p) => PathBuf::from(p),
        None => {
            // Before the crate declares the binary target, fall back to the usual
            // location next to the test executable.
            let exe = std::env::current_exe().unwrap_or_default();
            let dir = exe
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .unwrap_or_default();
            dir.join("tabula")
        }
    }
}

/// A running `tabula serve`, stopped (SIGTERM, then SIGKILL) when dropped.
pub struct Tabula {
    child: Option<Child>,
    pub thrift1: SocketAddr,
    /// `None` when the server runs without Thrift2 (`thrift2=off`).
    pub thrift2: Option<SocketAddr>,
    pub data_dir: PathBuf,
    log: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

/// A started child: the process, its Thrift1 and Thrift2 (unless off) addresses,
/// its log file.
type Spawned = (Child, SocketAddr, Option<SocketAddr>, PathBuf);

/// Starts `tabula serve` with extra `TABULA_*` settings.
fn spawn(
    data_dir: &Path,
    env: &[(&str, &str)],
    extra_args: &[&str],
    die_with_thread: bool,
) -> Spawned {
    spawn_command("serve", data_dir, env, extra_args, die_with_thread)
}

/// Starts `tabula <command>` (`serve`, or `gateway`, which has no data directory:
/// `data_dir` then only names its log file) and waits for its ready line.
fn spawn_command(
    command: &str,
    data_dir: &Path,
    env: &[(&str, &str)],
    extra_args: &[&str],
    die_with_thread: bool,
) -> Spawned {
    let bin = binary_path();
    assert!(
        bin.exists(),
        "the tabula binary is missing at {} (build it with `cargo build -p tabula-gateway --bin tabula`)",
        bin.display()
    );
    let log = data_dir.with_extension("log");
    let log_file = std::fs::File::create(&log).expect("create the server log");
    let mut cmd = Command::new(&bin);
    cmd.arg(command);
    if command == "serve" {
        cmd.arg("--data-dir").arg(data_dir);
    }
    cmd.arg("--listen")
        .arg("127.0.0.1:0")
        .args(extra_args)
        .env("TABULA_THRIFT2_LISTEN", "127.0.0.1:0")
        .env(
            "RUST_LOG",
            std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into()),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log_file));
    for (k, v) in env {
        cmd.env(k, v);
    }
    if die_with_thread {
        use std::os::unix::process::CommandExt;
        // SAFETY: prctl is async-signal-safe; the closure touches nothing else.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
    }
    let mut child = cmd.spawn().expect("spawn tabula");
    let stdout = child.stdout.take().expect("piped stdout");
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut tx = Some(tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.starts_with("tabula ready") || line.starts_with("tabula gateway ready") {
                if let Some(tx) = tx.take() {
                    let _ = tx.send(line);
                }
            }
        }
    });
    let line = match rx.recv_timeout(READY_TIMEOUT) {
        Ok(line) => line,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            let log_text = std::fs::read_to_string(&log).unwrap_or_default();
            panic!("tabula did not print its ready line ({e:?}); its log:\n{log_text}");
        }
    };
    let addr_of = |key: &str| -> SocketAddr {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no {key} address in the ready line {line:?}"))
    };
    let thrift2 = match line.split_whitespace().any(|w| w == "thrift2=off") {
        true => None,
        false => Some(addr_of("thrift2=")),
    };
    (child, addr_of("thrift1="), thrift2, log)
}

fn stop_child(child: &mut Child) {
    let pid = child.id() as libc::pid_t;
    // SAFETY: signalling our own child by pid.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let deadline = Instant::now() + STOP_TIMEOUT;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
}

impl Tabula {
    /// A fresh server with default settings.
    pub fn start() -> Tabula {
        Self::start_with(&[])
    }

    /// A fresh server with extra `TABULA_*` environment settings, e.g.
    /// `("TABULA_SCANNER_LEASE_SECS", "1")`.
    pub fn start_with(env: &[(&str, &str)]) -> Tabula {
        Self::start_in_tempdir(env, &[])
    }

    /// A server in `--null-backend` mode (stores nothing; reads return fixed
    /// 1000-byte values).
    pub fn start_null_backend() -> Tabula {
        Self::start_in_tempdir(&[], &["--null-backend"])
    }

    /// A fresh server on a temporary data directory, with extra environment
    /// settings and `serve` flags.
    fn start_in_tempdir(env: &[(&str, &str)], extra_args: &[&str]) -> Tabula {
        let dir = tempfile::tempdir().expect("tempdir");
        let data_dir = dir.path().join("data");
        let (child, thrift1, thrift2, log) = spawn(&data_dir, env, extra_args, true);
        Tabula {
            child: Some(child),
            thrift1,
            thrift2,
            data_dir,
            log,
            _dir: Some(dir),
        }
    }

    /// The server's process id while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(|c| c.id())
    }

    /// A server on an existing data directory (for restart tests); the caller
    /// owns the directory.
    pub fn start_at(data_dir: &Path) -> Tabula {
        Self::start_at_with(data_dir, &[])
    }

    /// [`Tabula::start_at`] with extra `TABULA_*` environment settings.
    pub fn start_at_with(data_dir: &Path, env: &[(&str, &str)]) -> Tabula {
        Self::start_at_with_args(data_dir, env, &[])
    }

    /// [`Tabula::start_at_with`] with extra `serve` flags.
    pub fn start_at_with_args(data_dir: &Path, env: &[(&str, &str)], args: &[&str]) -> Tabula {
        let (child, thrift1, thrift2, log) = spawn(data_dir, env, args, true);
        Tabula {
            child: Some(child),
            thrift1,
            thrift2,
            data_dir: data_dir.to_path_buf(),
            log,
            _dir: None,
        }
    }

    /// A `tabula gateway` (a gateway in a process of its own) with `TABULA_*`
    /// settings (etcd's endpoints among them); its log is `log_name.log`.
    pub fn start_gateway(log_name: &Path, env: &[(&str, &str)]) -> Tabula {
        let (child, thrift1, thrift2, log) = spawn_command("gateway", log_name, env, &[], true);
        Tabula {
            child: Some(child),
            thrift1,
            thrift2,
            data_dir: log_name.to_path_buf(),
            log,
            _dir: None,
        }
    }

    /// Waits up to `timeout` for the server to end on its own (e.g. at a crash
    /// point) and returns its exit status; `None` if it still runs.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            let status = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = status {
                self.child = None;
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills the server with SIGKILL (no flush, no orderly stop) and reaps it.
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// A buffered binary client (happybase's default).
    pub fn client(&self) -> Client {
        connect(self.thrift1, Framing::Buffered, Protocol::Binary)
    }

    /// A client with the given framing and protocol.
    pub fn client_with(&self, framing: Framing, protocol: Protocol) -> Client {
        connect(self.thrift1, framing, protocol)
    }

    /// A Thrift2 client with the given framing and protocol.
    pub fn client2(&self, framing: Framing, protocol: Protocol) -> Client2 {
        connect2(self.thrift2.expect("Thrift2 is on"), framing, protocol)
    }

    /// The server's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Stops the server (SIGTERM) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            stop_child(&mut child);
        }
    }
}

impl Drop for Tabula {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The server shared by every test of one test binary (tables must be unique per
/// test: use [`unique`]). It runs until the test binary exits.
pub struct Shared {
    pub thrift1: SocketAddr,
    pub thrift2: SocketAddr,
}

impl Shared {
    pub fn client2(&self, framing: Framing, protocol: Protocol) -> Client2 {
        connect2(self.thrift2, framing, protocol)
    }

    pub fn client(&self) -> Client {
        connect(self.thrift1, Framing::Buffered, Protocol::Binary)
    }

    pub fn client_with(&self, framing: Framing, protocol: Protocol) -> Client {
        connect(self.thrift1, framing, protocol)
    }
}

static SHARED: OnceLock<Shared> = OnceLock::new();
static SHARED_PROCESS: Mutex<Option<(Child, PathBuf)>> = Mutex::new(None);

extern "C" fn stop_shared_at_exit() {
    if let Ok(mut guard) = SHARED_PROCESS.lock() {
        if let Some((mut child, dir)) = guard.take() {
            stop_child(&mut child);
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The shared server, started on first use. It is spawned from a thread that lives
/// as long as the test binary, and stopped when the binary exits.
pub fn shared() -> &'static Shared {
    SHARED.get_or_init(|| {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let dir =
                std::env::temp_dir().join(format!("tabula-thrift1-test-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).expect("create the shared data dir");
            let data_dir = dir.join("data");
            let (child, addr1, addr2, _log) = spawn(&data_dir, &[], &[], true);
            if let Ok(mut guard) = SHARED_PROCESS.lock() {
                *guard = Some((child, dir));
            }
            // SAFETY: registering a plain extern "C" function.
            unsafe {
                libc::atexit(stop_shared_at_exit);
            }
            let _ = tx.send((addr1, addr2.expect("the shared server serves Thrift2")));
            loop {
                std::thread::park();
            }
        });
        let (thrift1, thrift2) = rx.recv().expect("the shared server started");
        Shared { thrift1, thrift2 }
    })
}

/// A client over a new TCP connection.
pub fn connect(addr: SocketAddr, framing: Framing, protocol: Protocol) -> Client {
    let (i, o) = protocols(addr, framing, protocol);
    HbaseSyncClient::new(i, o)
}

/// A Thrift2 client over a new TCP connection.
pub fn connect2(addr: SocketAddr, framing: Framing, protocol: Protocol) -> Client2 {
    let (i, o) = protocols(addr, framing, protocol);
    tabula_thrift::hbase2::THBaseServiceSyncClient::new(i, o)
}

/// Input and output protocols over a new TCP connection.
fn protocols(
    addr: SocketAddr,
    framing: Framing,
    protocol: Protocol,
) -> (
    Box<dyn TInputProtocol + Send>,
    Box<dyn TOutputProtocol + Send>,
) {
    let stream = TcpStream::connect(addr).expect("connect to tabula");
    stream
        .set_read_timeout(Some(IO_TIMEOUT))
        .expect("read timeout");
    stream.set_nodelay(true).expect("nodelay");
    let (r, w) = TTcpChannel::with_stream(stream)
        .split()
        .expect("split the channel");
    let (input, output): (
        Box<dyn thrift::transport::TReadTransport + Send>,
        Box<dyn thrift::transport::TWriteTransport + Send>,
    ) = match framing {
        Framing::Buffered => (
            Box::new(TBufferedReadTransport::new(r)),
            Box::new(TBufferedWriteTransport::new(w)),
        ),
        Framing::Framed => (
            Box::new(TFramedReadTransport::new(r)),
            Box::new(TFramedWriteTransport::new(w)),
        ),
    };
    let (i, o): (
        Box<dyn TInputProtocol + Send>,
        Box<dyn TOutputProtocol + Send>,
    ) = match protocol {
        Protocol::Binary => (
            Box::new(TBinaryInputProtocol::new(input, true)),
            Box::new(TBinaryOutputProtocol::new(output, true)),
        ),
        Protocol::Compact => (
            Box::new(TCompactInputProtocol::new(input)),
            Box::new(TCompactOutputProtocol::new(output)),
        ),
    };
    (i, o)
}

static UNIQUE: AtomicUsize = AtomicUsize::new(0);

/// A table name no other test of this binary uses.
pub fn unique(prefix: &str) -> Vec<u8> {
    format!(
        "{prefix}_{}_{}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    )
    .into_bytes()
}

/// A column descriptor as happybase sends it for `create_table(name, {family: {}})`.
pub fn descriptor(family: &str) -> ColumnDescriptor {
    ColumnDescriptor::new(
        format!("{family}:").into_bytes(),
        3,
        "NONE".to_string(),
        false,
        "NONE".to_string(),
        0,
        0,
        false,
        -1,
    )
}

/// Creates `name` with happybase-style descriptors for `families`.
pub fn create(client: &mut Client, name: &[u8], families: &[&str]) {
    client
        .create_table(
            name.to_vec(),
            families.iter().map(|f| descriptor(f)).collect(),
        )
        .expect("createTable");
}

/// A fresh table with `families` on the shared server; returns a client and its name.
pub fn fresh_table(prefix: &str, families: &[&str]) -> (Client, Vec<u8>) {
    let mut client = shared().client();
    let name = unique(prefix);
    create(&mut client, &name, families);
    (client, name)
}

/// A put mutation as happybase builds it.
pub fn put_m(column: &str, value: &[u8]) -> Mutation {
    Mutation::new(false, column.as_bytes().to_vec(), value.to_vec(), true)
}

/// A delete mutation as happybase builds it (value unset).
pub fn delete_m(column: &str) -> Mutation {
    Mutation::new(true, column.as_bytes().to_vec(), None, true)
}

/// happybase's `table.put(row, data)` (mutateRows with one batch).
pub fn put(client: &mut Client, table: &[u8], row: &str, cells: &[(&str, &str)]) {
    let mutations: Vec<Mutation> = cells.iter().map(|(c, v)| put_m(c, v.as_bytes())).collect();
    client
        .mutate_rows(
            table.to_vec(),
            vec![BatchMutation::new(row.as_bytes().to_vec(), mutations)],
            BTreeMap::new(),
        )
        .expect("mutateRows");
}

/// happybase's `table.put(row, data, timestamp=ts)`.
pub fn put_ts(client: &mut Client, table: &[u8], row: &str, cells: &[(&str, &str)], ts: i64) {
    let mutations: Vec<Mutation> = cells.iter().map(|(c, v)| put_m(c, v.as_bytes())).collect();
    client
        .mutate_rows_ts(
            table.to_vec(),
            vec![BatchMutation::new(row.as_bytes().to_vec(), mutations)],
            ts,
            BTreeMap::new(),
        )
        .expect("mutateRowsTs");
}

/// No attributes (what happybase sends).
pub fn no_attrs() -> BTreeMap<Vec<u8>, Vec<u8>> {
    BTreeMap::new()
}

/// A TScan with every field unset.
pub fn tscan() -> TScan {
    TScan::new(None, None, None, None, None, None, None, None, None, None)
}

/// A result's `columns` map as text: `family:qualifier` -> value.
pub fn columns_of(r: &TRowResult) -> BTreeMap<String, String> {
    r.columns
        .as_ref()
        .map(|m| {
            m.iter()
                .map(|(k, c)| (text(k), text(c.value.as_deref().unwrap_or_default())))
                .collect()
        })
        .unwrap_or_default()
}

/// The `columns` map with timestamps.
pub fn columns_ts_of(r: &TRowResult) -> BTreeMap<String, (String, i64)> {
    r.columns
        .as_ref()
        .map(|m| {
            m.iter()
                .map(|(k, c)| {
                    (
                        text(k),
                        (
                            text(c.value.as_deref().unwrap_or_default()),
                            c.timestamp.unwrap_or(-1),
                        ),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Cells as (value, timestamp).
pub fn cells_of(cells: &[TCell]) -> Vec<(String, i64)> {
    cells
        .iter()
        .map(|c| {
            (
                text(c.value.as_deref().unwrap_or_default()),
                c.timestamp.unwrap_or(-1),
            )
        })
        .collect()
}

/// Cell values only.
pub fn values_of(cells: &[TCell]) -> Vec<String> {
    cells
        .iter()
        .map(|c| text(c.value.as_deref().unwrap_or_default()))
        .collect()
}

/// Row keys of results, as text.
pub fn rows_of(results: &[TRowResult]) -> Vec<String> {
    results
        .iter()
        .map(|r| text(r.row.as_deref().unwrap_or_default()))
        .collect()
}

/// Bytes as lossy text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The IOError inside a failed call (panics on anything else).
pub fn io_error<T: std::fmt::Debug>(r: thrift::Result<T>) -> IOError {
    match r {
        Err(thrift::Error::User(u)) => match u.downcast::<IOError>() {
            Ok(e) => *e,
            Err(other) => panic!("expected IOError, got user error {other:?}"),
        },
        other => panic!("expected IOError, got {other:?}"),
    }
}

/// The IOError's message.
pub fn io_message<T: std::fmt::Debug>(r: thrift::Result<T>) -> String {
    io_error(r).message.unwrap_or_default()
}

/// The IllegalArgument inside a failed call.
pub fn illegal_argument<T: std::fmt::Debug>(r: thrift::Result<T>) -> IllegalArgument {
    match r {
        Err(thrift::Error::User(u)) => match u.downcast::<IllegalArgument>() {
            Ok(e) => *e,
            Err(other) => panic!("expected IllegalArgument, got user error {other:?}"),
        },
        other => panic!("expected IllegalArgument, got {other:?}"),
    }
}

/// The AlreadyExists inside a failed call.
pub fn already_exists<T: std::fmt::Debug>(r: thrift::Result<T>) -> AlreadyExists {
    match r {
        Err(thrift::Error::User(u)) => match u.downcast::<AlreadyExists>() {
            Ok(e) => *e,
            Err(other) => panic!("expected AlreadyExists, got user error {other:?}"),
        },
        other => panic!("expected AlreadyExists, got {other:?}"),
    }
}

/// The TApplicationException of a failed call.
pub fn app_error<T: std::fmt::Debug>(r: thrift::Result<T>) -> ApplicationError {
    match r {
        Err(thrift::Error::Application(a)) => a,
        other => panic!("expected a TApplicationException, got {other:?}"),
    }
}

/// Asserts the connection still answers calls after an error.
pub fn assert_usable(client: &mut Client) {
    client
        .get_thrift_server_type()
        .expect("the connection must stay usable after an error");
}

/// Every row of a scanner, collected with scannerGetList(n) until `[]`, then closed.
pub fn drain(client: &mut Client, id: i32, n: i32) -> Vec<TRowResult> {
    let mut all = Vec::new();
    loop {
        let batch = client.scanner_get_list(id, n).expect("scannerGetList");
        if batch.is_empty() {
            break;
        }
        assert!(
            batch.len() <= n as usize,
            "scannerGetList returned more than asked"
        );
        all.extend(batch);
    }
    client.scanner_close(id).expect("scannerClose");
    all
}

/// Waits (polling every 200 ms) until `done` holds; fails the test after `timeout`.
pub fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "{what} did not happen within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Kills `active` (SIGKILL) once the server logging to `standby_log` says it is
/// standing by for the coordinator lock, from a thread of its own (a standby's
/// start blocks the test's thread until it took over).
pub fn kill_when_standby_waits(
    mut active: Tabula,
    standby_log: PathBuf,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        wait_for(
            "the second server standing by",
            Duration::from_secs(60),
            || {
                std::fs::read_to_string(&standby_log)
                    .unwrap_or_default()
                    .contains("standing by")
            },
        );
        active.kill9();
    })
}

/// Writes `rows` (row key, value of `column`) with mutateRows, 50 rows a call.
pub fn put_rows(client: &mut Client, table: &[u8], column: &str, rows: &[(String, String)]) {
    for chunk in rows.chunks(50) {
        let batch: Vec<BatchMutation> = chunk
            .iter()
            .map(|(row, value)| BatchMutation {
                row: Some(row.clone().into_bytes()),
                mutations: Some(vec![put_m(column, value.as_bytes())]),
            })
            .collect();
        client
            .mutate_rows(table.to_vec(), batch, no_attrs())
            .expect("mutateRows");
    }
}

/// Whether every one of `rows` reads back with its value in `column` (by getRow);
/// the first that does not, or the failed call, as the error.
pub fn rows_hold(
    client: &mut Client,
    table: &[u8],
    column: &str,
    rows: &[(String, String)],
) -> Result<(), String> {
    for (row, value) in rows {
        let found = client
            .get_row(table.to_vec(), row.clone().into_bytes(), no_attrs())
            .map_err(|e| format!("{row}: {e:?}"))?;
        let got = found.first().map(columns_of).unwrap_or_default();
        if got.get(column) != Some(value) {
            return Err(format!("{row} reads {got:?}"));
        }
    }
    Ok(())
}

/// A data directory under `dir` and a second name for it, for two servers sharing
/// it (an active and a standby): each server's log file is named after the path
/// it was given.
pub fn data_dir_with_second_name(dir: &Path) -> (PathBuf, PathBuf) {
    let data = dir.join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    let data2 = dir.join("data2");
    std::os::unix::fs::symlink(&data, &data2).expect("symlink");
    (data, data2)
}

/// `GET path` over HTTP on `addr`: the status code and the body.
pub fn http_get(addr: &str, path: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut s = TcpStream::connect(addr).expect("connect to the metrics port");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("send");
    let mut reply = String::new();
    s.read_to_string(&mut reply).expect("read");
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, body.to_owned())
}

/// The value of the unlabelled sample `name` on the metrics port at `addr`.
pub fn metric(addr: &str, name: &str) -> Option<f64> {
    let (_, body) = http_get(addr, "/metrics");
    body.lines().find_map(|l| {
        let (k, v) = l.rsplit_once(' ')?;
        (k == name).then(|| v.parse().ok()).flatten()
    })
}

/// A loopback address with a port free a moment ago (for a fixed metrics port).
pub fn free_local_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").to_string()
}
