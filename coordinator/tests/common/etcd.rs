//! A real etcd server for tests: Debian's `etcd` binary (package etcd-server) on
//! loopback ports of its own, its data in a temporary directory, killed on drop.
//! Shared with the gateway's tests of `tabula serve` on etcd.
//! Must not: mock anything; when the binary is missing the test fails saying so.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tabula_coordinator::lock::{EtcdConfig, EtcdLockService, EtcdTls};

/// The etcd binary: `$TABULA_TEST_ETCD`, else `etcd` on the PATH.
fn binary() -> PathBuf {
    std::env::var_os("TABULA_TEST_ETCD")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("etcd"))
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free loopback port")
}

/// PEM files of an etcd serving TLS: its certificate and key, which its clients
/// also present, and the authority both are checked against.
#[derive(Debug, Clone)]
pub struct EtcdTlsFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// One single-member etcd cluster.
pub struct EtcdServer {
    child: Option<Child>,
    dir: tempfile::TempDir,
    client_url: String,
    peer_url: String,
    tls: Option<EtcdTlsFiles>,
}

impl EtcdServer {
    /// Starts etcd on fresh ports and waits until it answers.
    pub fn start() -> EtcdServer {
        Self::start_with(None)
    }

    /// Starts etcd serving clients over TLS only, requiring client certificates of
    /// the files' authority (`--client-cert-auth`).
    pub fn start_tls(files: EtcdTlsFiles) -> EtcdServer {
        Self::start_with(Some(files))
    }

    fn start_with(tls: Option<EtcdTlsFiles>) -> EtcdServer {
        let dir = tempfile::tempdir().expect("temporary directory");
        let scheme = if tls.is_some() { "https" } else { "http" };
        let client_url = format!("{scheme}://127.0.0.1:{}", free_port());
        let peer_url = format!("http://127.0.0.1:{}", free_port());
        let mut server = EtcdServer {
            child: None,
            dir,
            client_url,
            peer_url,
            tls,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let data = self.dir.path().join("data");
        let log = std::fs::File::create(self.dir.path().join("etcd.log")).expect("etcd log file");
        let mut command = Command::new(binary());
        if let Some(tls) = &self.tls {
            command
                .arg("--cert-file")
                .arg(&tls.cert)
                .arg("--key-file")
                .arg(&tls.key)
                .arg("--trusted-ca-file")
                .arg(&tls.ca)
                .arg("--client-cert-auth");
        }
        let child = command
            .args(["--name", "test"])
            .arg("--data-dir")
            .arg(&data)
            .args(["--listen-client-urls", &self.client_url])
            .args(["--advertise-client-urls", &self.client_url])
            .args(["--listen-peer-urls", &self.peer_url])
            .args(["--initial-advertise-peer-urls", &self.peer_url])
            .arg("--initial-cluster")
            .arg(format!("test={}", self.peer_url))
            .args(["--log-level", "warn"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {:?} ({e}); install Debian's etcd-server package",
                    binary()
                )
            });
        self.child = Some(child);
        self.wait_ready();
    }

    fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if EtcdLockService::connect(self.config("")).is_ok() {
                return;
            }
            if let Some(child) = self.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    panic!("etcd exited with {status}: {}", self.log());
                }
            }
            assert!(
                Instant::now() < deadline,
                "etcd did not answer within 30 s: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// What etcd logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("etcd.log")).unwrap_or_default()
    }

    /// The client URL (`http://127.0.0.1:port`, or `https://`).
    pub fn url(&self) -> &str {
        &self.client_url
    }

    /// A client configuration with every path under `namespace` (with the
    /// server's certificate as the client's, when it serves TLS).
    pub fn config(&self, namespace: &str) -> EtcdConfig {
        let config = EtcdConfig::new(vec![self.client_url.clone()]).with_namespace(namespace);
        match &self.tls {
            None => config,
            Some(files) => {
                let read = |path: &PathBuf| std::fs::read(path).expect("a test TLS file");
                config.with_tls(EtcdTls {
                    ca_pem: read(&files.ca),
                    client_pem: Some((read(&files.cert), read(&files.key))),
                })
            }
        }
    }

    /// A connected lock service under `namespace`.
    pub fn service(&self, namespace: &str) -> EtcdLockService {
        EtcdLockService::connect(self.config(namespace)).expect("connecting to the test etcd")
    }

    /// Kills the server (SIGKILL) and waits for it to go.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same ports and data.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        self.kill();
    }
}
