//! What `tabula serve` does when its coordinator loses its lock-service session or
//! its lock: with etcd (where another coordinator may take over) it stops acting at
//! once and exits with status 3, and a restart recovers every acknowledged write;
//! with the embedded lock service (nobody else can take the lock) it takes the lock
//! again and goes on serving. The loss is caused the way it happens: the process
//! stalls (SIGSTOP) past its lease, or an operator removes the lock.

mod common;
#[path = "../../coordinator/tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::time::Duration;

use common::*;
use etcd::EtcdServer;
use tabula_coordinator::lock::LockService;
use tabula_thrift::hbase::THbaseSyncClient;

/// The coordinator's lease in `tabula serve`, and a stall safely past it.
const STALL: Duration = Duration::from_secs(13);
/// Status of a server whose coordinator was deposed (`serve::DEPOSED_EXIT_CODE`).
const DEPOSED: i32 = 3;

fn signal(server: &Tabula, sig: libc::c_int) {
    let pid = server.pid().expect("server running") as libc::pid_t;
    // SAFETY: signalling our own child by pid.
    unsafe {
        libc::kill(pid, sig);
    }
}

fn stall(server: &Tabula) {
    signal(server, libc::SIGSTOP);
    std::thread::sleep(STALL);
    signal(server, libc::SIGCONT);
}

fn write_rows(c: &mut Client, table: &[u8], n: usize) {
    for i in 0..n {
        put(
            c,
            table,
            &format!("row{i:04}"),
            &[("cf:a", &format!("v{i}"))],
        );
    }
}

fn assert_rows(c: &mut Client, table: &[u8], n: usize) {
    for i in 0..n {
        let rows = c
            .get_row(
                table.to_vec(),
                format!("row{i:04}").into_bytes(),
                no_attrs(),
            )
            .expect("getRow");
        assert_eq!(rows.len(), 1, "row{i:04} is missing");
        assert_eq!(columns_of(&rows[0])["cf:a"], format!("v{i}"));
    }
}

#[test]
fn an_embedded_coordinator_takes_its_lock_again_after_a_stall() {
    let server = Tabula::start();
    let mut c = server.client();
    create(&mut c, b"before_stall", &["cf"]);
    write_rows(&mut c, b"before_stall", 50);
    stall(&server);
    // Admin calls write the lock service, fenced by the lock: they work again once
    // the heartbeat (or the write itself) has taken the lock anew.
    let mut c = server.client();
    create(&mut c, b"after_stall", &["cf"]);
    write_rows(&mut c, b"after_stall", 50);
    assert_rows(&mut c, b"before_stall", 50);
    assert!(
        server.log().contains("takes its lock again"),
        "{}",
        server.log()
    );
}

/// An etcd, and a data directory for servers on it.
struct OnEtcd {
    etcd: EtcdServer,
    data: std::path::PathBuf,
    _dir: tempfile::TempDir,
}

impl OnEtcd {
    fn new() -> OnEtcd {
        let dir = tempfile::tempdir().expect("tempdir");
        OnEtcd {
            etcd: EtcdServer::start(),
            data: dir.path().join("data"),
            _dir: dir,
        }
    }

    /// A server on the data directory with etcd as its lock service.
    fn server(&self) -> Tabula {
        Tabula::start_at_with(&self.data, &[("TABULA_ETCD_ENDPOINTS", self.etcd.url())])
    }

    /// A server with table `table` holding `rows` rows.
    fn server_with(&self, table: &[u8], rows: usize) -> (Tabula, Client) {
        let server = self.server();
        let mut c = server.client();
        create(&mut c, table, &["cf"]);
        write_rows(&mut c, table, rows);
        (server, c)
    }
}

/// Waits for `server` to exit as a deposed coordinator does.
fn assert_deposed(server: &mut Tabula) {
    let status = server
        .wait_exit(Duration::from_secs(20))
        .expect("the deposed server exits");
    assert_eq!(status.code(), Some(DEPOSED), "{}", server.log());
    assert!(server.log().contains("deposed"), "{}", server.log());
}

#[test]
fn an_etcd_coordinator_that_stalled_past_its_lease_exits_and_a_restart_recovers() {
    let cluster = OnEtcd::new();
    let (mut server, _) = cluster.server_with(b"stalled", 100);
    stall(&server);
    assert_deposed(&mut server);

    let server = cluster.server();
    let mut c = server.client();
    assert_rows(&mut c, b"stalled", 100);
    create(&mut c, b"after_restart", &["cf"]);
}

#[test]
fn an_etcd_coordinator_whose_lock_was_removed_refuses_admin_writes_and_exits() {
    let cluster = OnEtcd::new();
    let (mut server, mut c) = cluster.server_with(b"kept", 20);

    let lock = cluster.etcd.service("");
    assert!(lock.lock_holder("/tabula/coordinator").unwrap().is_some());
    lock.delete("/tabula/coordinator").unwrap();
    // The next fenced write fails (the client hears an error, or the server is
    // already gone); nothing of the table is created.
    let refused = c.create_table(b"not_created".to_vec(), vec![descriptor("cf")]);
    assert!(refused.is_err(), "createTable succeeded without the lock");
    assert_deposed(&mut server);

    let server = cluster.server();
    let mut c = server.client();
    let names: Vec<String> = c
        .get_table_names()
        .expect("getTableNames")
        .iter()
        .map(|n| text(n))
        .collect();
    assert_eq!(names, ["kept"]);
    assert_rows(&mut c, b"kept", 20);
}
