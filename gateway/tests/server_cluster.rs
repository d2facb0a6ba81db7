//! A cluster of several processes on one machine: `tabula serve` (coordinator,
//! gateway and a regionserver) and a `tabula regionserver` of its own, sharing the
//! data directory, with etcd as the lock service. Tablets are placed on both
//! servers, Thrift calls reach the rows on either, and when the regionserver is
//! killed (kill -9) the coordinator splits its commit log and serves its tablets
//! elsewhere: every acknowledged write is read back.

mod common;
#[path = "../../coordinator/tests/common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::t2::{family, table_desc};
use common::*;
use etcd::{EtcdServer, EtcdTlsFiles};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair,
    KeyUsagePurpose, SanType,
};
use tabula_regionserver::rpc::client::RemoteOptions;
use tabula_regionserver::rpc::{ClusterTls, RemoteTabletService};
use tabula_regionserver::{RsError, TabletService};
use tabula_thrift::hbase::THbaseSyncClient;
use tabula_thrift::hbase2::TTHBaseServiceSyncClient;

const TABLE: &[u8] = b"spread";
const ROWS: usize = 400;

/// A `tabula regionserver` process, killed when dropped.
struct RegionServerProcess {
    child: Child,
    name: String,
}

impl RegionServerProcess {
    fn start(data: &Path, etcd: &EtcdServer, log: &Path) -> RegionServerProcess {
        Self::start_with(data, etcd, log, &[])
    }

    /// [`RegionServerProcess::start`] with extra `TABULA_*` settings.
    fn start_with(
        data: &Path,
        etcd: &EtcdServer,
        log: &Path,
        env: &[(&str, &str)],
    ) -> RegionServerProcess {
        let log_file = std::fs::File::create(log).expect("log file");
        let mut child = Command::new(binary_path())
            .arg("regionserver")
            .arg("--data-dir")
            .arg(data)
            .args(["--etcd-endpoints", etcd.url()])
            .args(["--listen", "127.0.0.1:0"])
            .envs(env.iter().copied())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log_file))
            .spawn()
            .expect("spawn tabula regionserver");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.starts_with("tabula regionserver ready") {
                    let _ = tx.send(line);
                }
            }
        });
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "the regionserver did not start: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                )
            });
        let name = line
            .split_whitespace()
            .find_map(|w| w.strip_prefix("name="))
            .expect("name on the ready line")
            .to_owned();
        RegionServerProcess { child, name }
    }

    fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends `signal` to the process.
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: signalling our own child by pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, signal);
        }
    }

    /// Waits for the process to end on its own.
    fn wait_exit(&mut self, timeout: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the regionserver did not exit within {timeout:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for RegionServerProcess {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// The server name of each region of the table.
fn region_servers(c: &mut Client) -> Vec<String> {
    regions_of(c, TABLE)
}

/// The server name of each region of `table`.
fn regions_of(c: &mut Client, table: &[u8]) -> Vec<String> {
    c.get_table_regions(table.to_vec())
        .expect("getTableRegions")
        .into_iter()
        .map(|r| {
            format!(
                "{}:{}",
                r.server_name.map(|n| text(&n)).unwrap_or_default(),
                r.port.unwrap_or(0)
            )
        })
        .collect()
}

fn row(i: usize) -> String {
    // Spread over the split keys b..y.
    format!("{}{i:05}", (b'a' + (i % 26) as u8) as char)
}

/// A cluster: etcd, `tabula serve` and one `tabula regionserver` on a shared data
/// directory, the table created with seven tablets on both servers and every row
/// written (acknowledged) and read back.
struct Cluster {
    serve: Tabula,
    rs: RegionServerProcess,
    etcd: EtcdServer,
    _dir: tempfile::TempDir,
}

/// The rows the cluster was loaded with: row key and value of `cf:v`.
fn loaded_rows() -> Vec<(String, String)> {
    (0..ROWS).map(|i| (row(i), format!("value{i}"))).collect()
}

fn check_all(c: &mut Client) -> Result<(), String> {
    rows_hold(c, TABLE, "cf:v", &loaded_rows())
}

/// Waits for `serve`'s coordinator to see `rs`, then creates the table with six
/// split keys: seven tablets, placed on the least loaded server each, so both
/// servers hold some.
fn spread_table(serve: &Tabula, rs: &RegionServerProcess) {
    wait_for(
        "the coordinator seeing the regionserver",
        Duration::from_secs(30),
        || serve.log().contains("a regionserver joined"),
    );
    let mut c2 = serve.client2(Framing::Buffered, Protocol::Binary);
    let splits: Vec<Vec<u8>> = ["e", "i", "m", "q", "u", "y"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    c2.create_table(table_desc(TABLE, vec![family("cf", None)]), splits)
        .expect("createTable");
    let servers = region_servers(&mut serve.client());
    assert_eq!(servers.len(), 7);
    let on_rs = servers.iter().filter(|s| **s == rs.name).count();
    assert!(
        (2..7).contains(&on_rs),
        "tablets should be on both servers: {servers:?} (regionserver {})",
        rs.name
    );
}

/// etcd, a temporary directory and `tabula serve` on etcd with its data in the
/// directory's `data`.
fn serve_on_etcd() -> (EtcdServer, tempfile::TempDir, std::path::PathBuf, Tabula) {
    let etcd = EtcdServer::start();
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    let serve = Tabula::start_at_with(&data, &[("TABULA_ETCD_ENDPOINTS", etcd.url())]);
    (etcd, dir, data, serve)
}

fn cluster_with_rows() -> Cluster {
    let (etcd, dir, data, serve) = serve_on_etcd();
    let rs = RegionServerProcess::start(&data, &etcd, &dir.path().join("rs.log"));
    spread_table(&serve, &rs);
    let mut c = serve.client();

    // Every row written through the gateway, acknowledged, and read back.
    put_rows(&mut c, TABLE, "cf:v", &loaded_rows());
    check_all(&mut c).expect("every row before the failure");
    Cluster {
        serve,
        rs,
        etcd,
        _dir: dir,
    }
}

/// Waits for the coordinator to move the lost server's tablets, then checks every
/// acknowledged row is read back, no tablet is left on the lost server, and the
/// table still takes writes.
fn recovered(cluster: &Cluster) {
    let serve = &cluster.serve;
    wait_for(
        "the coordinator moving the lost server's tablets",
        Duration::from_secs(60),
        || {
            serve
                .log()
                .contains("the lost regionserver's tablets are served again")
        },
    );
    assert!(
        serve
            .log()
            .contains("recovering a dead regionserver's commit log"),
        "the dead server's log was split: {}",
        serve.log()
    );
    let mut last = Err(String::new());
    wait_for("every row readable again", Duration::from_secs(60), || {
        let mut c = serve.client();
        last = check_all(&mut c);
        last.is_ok()
    });
    let mut c = serve.client();
    let servers = region_servers(&mut c);
    assert!(
        servers.iter().all(|s| *s != cluster.rs.name),
        "no tablet left on the lost server: {servers:?}"
    );
    put(&mut c, TABLE, "zzz-after", &[("cf:v", "after")]);
    put(&mut c, TABLE, "aaa-after", &[("cf:v", "after")]);
    let after = [("zzz-after".to_owned(), "after".to_owned())];
    rows_hold(&mut c, TABLE, "cf:v", &after).expect("a row written after the failover reads back");
}

#[test]
fn a_killed_regionserver_loses_no_acknowledged_write() {
    let mut cluster = cluster_with_rows();
    // kill -9: its memtables are gone; its log holds the acknowledged writes.
    cluster.rs.kill9();
    // Clients see no error: calls to the dead server's tablets wait (the gateway
    // finds nothing listening, looks the tablet up again, retries) until the
    // coordinator has moved them, within the gateway's 30 s relocation limit.
    let started = Instant::now();
    check_all(&mut cluster.serve.client()).expect("reads through the failover");
    assert!(started.elapsed() < Duration::from_secs(30));
    recovered(&cluster);
}

#[test]
fn a_stalled_regionserver_stops_serving_and_exits_while_its_tablets_move() {
    let mut cluster = cluster_with_rows();
    cluster.rs.signal(libc::SIGSTOP);
    // Past its 10 s lease: the coordinator splits its log and moves its tablets.
    std::thread::sleep(Duration::from_secs(13));
    cluster.rs.signal(libc::SIGCONT);
    // Woken, it finds its registration stale, refuses calls and exits.
    let status = cluster.rs.wait_exit(Duration::from_secs(20));
    assert_eq!(status.code(), Some(3));
    recovered(&cluster);
}

#[test]
fn a_regionserver_that_leaves_on_sigterm_hands_its_tablets_back() {
    let mut cluster = cluster_with_rows();
    cluster.rs.signal(libc::SIGTERM);
    let status = cluster.rs.wait_exit(Duration::from_secs(30));
    assert!(status.success(), "{status:?}");
    recovered(&cluster);
}

#[test]
fn a_restarted_coordinator_keeps_the_tablets_a_live_regionserver_serves() {
    let mut cluster = cluster_with_rows();
    let mut c = cluster.serve.client();
    let before: Vec<String> = region_servers(&mut c)
        .into_iter()
        .filter(|s| *s == cluster.rs.name)
        .collect();
    drop(c);
    let data = cluster.serve.data_dir.clone();
    cluster.serve.kill9();
    let env = [("TABULA_ETCD_ENDPOINTS", cluster.etcd.url())];
    cluster.serve = Tabula::start_at_with(&data, &env);
    let mut c = cluster.serve.client();
    let after: Vec<String> = region_servers(&mut c)
        .into_iter()
        .filter(|s| *s == cluster.rs.name)
        .collect();
    assert_eq!(after, before, "the regionserver's tablets stay with it");
    check_all(&mut c).expect("every row after the coordinator's restart");
    put(&mut c, TABLE, "mmm-after", &[("cf:v", "after")]);
}

#[test]
fn tablets_move_to_a_regionserver_that_joins() {
    let (etcd, dir, data, serve) = serve_on_etcd();
    let mut c2 = serve.client2(Framing::Buffered, Protocol::Binary);
    let splits: Vec<Vec<u8>> = ["e", "i", "m", "q", "u", "y"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    c2.create_table(table_desc(TABLE, vec![family("cf", None)]), splits)
        .expect("createTable");
    let mut c = serve.client();
    for i in 0..ROWS {
        put(&mut c, TABLE, &row(i), &[("cf:v", &format!("value{i}"))]);
    }
    let alone = region_servers(&mut c);
    assert_eq!(alone.len(), 7);
    // A second table of four tablets, also all on the one server.
    let other: &[u8] = b"other";
    let other_splits: Vec<Vec<u8>> = ["f", "m", "t"]
        .iter()
        .map(|k| k.as_bytes().to_vec())
        .collect();
    c2.create_table(table_desc(other, vec![family("cf", None)]), other_splits)
        .expect("createTable");

    // Thirteen tablets (eleven, the root and METADATA) on one server, none on the
    // new one: six user tablets move, and each table's spread over both servers
    // (the table most crowded on the busy server moves first each time).
    let rs = RegionServerProcess::start(&data, &etcd, &dir.path().join("rs.log"));
    wait_for(
        "tablets moving to the new server",
        Duration::from_secs(60),
        || {
            serve
                .log()
                .contains("balanced tablets between regionservers")
        },
    );
    let servers = region_servers(&mut c);
    let on_rs = servers.iter().filter(|s| **s == rs.name).count();
    assert_eq!(on_rs, 4, "{servers:?}");
    let other_servers = regions_of(&mut c, other);
    let other_on_rs = other_servers.iter().filter(|s| **s == rs.name).count();
    assert_eq!(other_on_rs, 2, "{other_servers:?}");
    // Every row written before the moves is read back from wherever it is now.
    check_all(&mut serve.client()).expect("every row after the moves");
    put(&mut c, TABLE, "zzz-moved", &[("cf:v", "after")]);
    let after = [("zzz-moved".to_owned(), "after".to_owned())];
    rows_hold(&mut c, TABLE, "cf:v", &after).expect("a row written after the moves reads back");
}

#[test]
fn a_regionserver_without_etcd_refuses_to_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let output = Command::new(binary_path())
        .arg("regionserver")
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .expect("run tabula regionserver");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("etcd_endpoints"), "{stderr}");
}

/// Certificates for a cluster's own traffic: an authority, a certificate it issued
/// for 127.0.0.1 that every process (and etcd) serves and presents, and a
/// certificate of another authority.
struct ClusterPki {
    dir: tempfile::TempDir,
}

impl ClusterPki {
    fn new() -> ClusterPki {
        let dir = tempfile::tempdir().expect("tempdir");
        let write = |name: &str, pem: String| {
            std::fs::write(dir.path().join(name), pem).expect("write a PEM file");
        };
        let authority = |name: &str| {
            let key = KeyPair::generate().expect("CA key");
            let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.distinguished_name.push(DnType::CommonName, name);
            params.key_usages = vec![
                KeyUsagePurpose::KeyCertSign,
                KeyUsagePurpose::CrlSign,
                KeyUsagePurpose::DigitalSignature,
            ];
            let cert = params.self_signed(&key).expect("CA certificate");
            (cert, key)
        };
        let node = |ca: &(rcgen::Certificate, KeyPair)| {
            let key = KeyPair::generate().expect("key");
            let mut params = CertificateParams::new(vec!["localhost".to_string()]).expect("params");
            params
                .subject_alt_names
                .push(SanType::IpAddress([127, 0, 0, 1].into()));
            params.extended_key_usages = vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ];
            let cert = params.signed_by(&key, &ca.0, &ca.1).expect("certificate");
            (cert.pem(), key.serialize_pem())
        };
        let ca = authority("tabula cluster test CA");
        write("ca.pem", ca.0.pem());
        let (cert, key) = node(&ca);
        write("node.pem", cert);
        write("node-key.pem", key);
        let stranger_ca = authority("another CA");
        let (cert, key) = node(&stranger_ca);
        write("stranger.pem", cert);
        write("stranger-key.pem", key);
        ClusterPki { dir }
    }

    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    fn etcd_files(&self) -> EtcdTlsFiles {
        EtcdTlsFiles {
            ca: self.path("ca.pem").into(),
            cert: self.path("node.pem").into(),
            key: self.path("node-key.pem").into(),
        }
    }

    /// Settings for mutual TLS between the processes and towards etcd.
    fn settings(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TABULA_RPC_TLS_CERT_FILE", self.path("node.pem")),
            ("TABULA_RPC_TLS_KEY_FILE", self.path("node-key.pem")),
            ("TABULA_RPC_TLS_CA_FILE", self.path("ca.pem")),
            ("TABULA_ETCD_CA_FILE", self.path("ca.pem")),
            ("TABULA_ETCD_CERT_FILE", self.path("node.pem")),
            ("TABULA_ETCD_KEY_FILE", self.path("node-key.pem")),
        ]
    }

    /// A gRPC client's TLS presenting `cert` (with its key) and trusting the
    /// cluster's authority.
    fn client_tls(&self, cert: &str) -> ClusterTls {
        ClusterTls::from_pem_files(
            Path::new(&self.path(&format!("{cert}.pem"))),
            Path::new(&self.path(&format!("{cert}-key.pem"))),
            Path::new(&self.path("ca.pem")),
            None,
        )
        .expect("client TLS")
    }
}

#[test]
fn a_cluster_on_tls_serves_through_every_process_and_refuses_peers_without_its_certificate() {
    let pki = ClusterPki::new();
    let etcd = EtcdServer::start_tls(pki.etcd_files());
    let settings = pki.settings();
    let env: Vec<(&str, &str)> = settings.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut with_etcd = env.clone();
    with_etcd.push(("TABULA_ETCD_ENDPOINTS", etcd.url()));
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&data).expect("data dir");
    let serve = Tabula::start_at_with(&data, &with_etcd);
    let rs = RegionServerProcess::start_with(&data, &etcd, &dir.path().join("rs.log"), &env);

    // Tablets on both servers: rows written through the serve process reach the
    // regionserver's over TLS.
    spread_table(&serve, &rs);
    let mut c = serve.client();
    put_rows(&mut c, TABLE, "cf:v", &loaded_rows());
    check_all(&mut c).expect("every row through the serve process");

    // A gateway of its own reads them from both servers and sends admin calls to
    // the coordinator, all over TLS.
    let gateway = Tabula::start_gateway(&dir.path().join("gateway"), &with_etcd);
    let mut g = gateway.client();
    check_all(&mut g).expect("every row through the gateway");
    g.create_table(b"made-through-tls".to_vec(), vec![descriptor("cf")])
        .expect("createTable through the gateway");
    put(&mut g, b"made-through-tls", "r1", &[("cf:v", "v1")]);
    let made = [("r1".to_owned(), "v1".to_owned())];
    rows_hold(&mut c, b"made-through-tls", "cf:v", &made).expect("the gateway's row");

    // The regionserver's port (its name is its address) takes only peers holding
    // a certificate of the cluster's authority.
    let plain = RemoteTabletService::connect(&rs.name, RemoteOptions::default());
    // Refused at the handshake, which a process tells from nothing listening.
    assert!(
        matches!(&plain, Err(e) if !matches!(e, RsError::Unreachable { .. })),
        "a plaintext client was served, or could not tell it was refused: {:?}",
        plain.as_ref().err()
    );
    let stranger = RemoteOptions {
        tls: Some(pki.client_tls("stranger")),
        ..RemoteOptions::default()
    };
    let refused = RemoteTabletService::connect(&rs.name, stranger);
    assert!(refused.is_err(), "a client of another authority was served");
    let member = RemoteOptions {
        tls: Some(pki.client_tls("node")),
        ..RemoteOptions::default()
    };
    let client = RemoteTabletService::connect(&rs.name, member).expect("a cluster member");
    assert_eq!(client.name(), rs.name);

    // etcd wants a client certificate: a server without one does not start, and
    // says etcd is why.
    let output = Command::new(binary_path())
        .arg("serve")
        .arg("--data-dir")
        .arg(dir.path().join("other"))
        .args(["--listen", "127.0.0.1:0"])
        .env("TABULA_THRIFT2_LISTEN", "127.0.0.1:0")
        .env("TABULA_ETCD_ENDPOINTS", etcd.url())
        .env("TABULA_ETCD_CA_FILE", pki.path("ca.pem"))
        .stdin(Stdio::null())
        .output()
        .expect("run tabula serve");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("etcd at https://"), "{stderr}");
}
