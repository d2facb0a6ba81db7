//! TLS on the Thrift ports (HBase's `hbase.thrift.ssl.enabled`): HTTPS carries
//! Thrift calls on a kept-alive connection, a TLS port closes plaintext connections
//! of every kind, and with a client CA only clients presenting a certificate it
//! issued get in. Real TCP and a real TLS client (rustls) throughout; the last
//! tests drive the `tabula` binary, the generated Thrift1 and Thrift2 clients
//! speaking HBase's HTTP mode over HTTPS.

mod common;
mod server_common;

use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, Certificate, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use tabula_gateway::server::{ServerOptions, TlsConfig};
use tabula_thrift::hbase::{HbaseSyncClient, THbaseSyncClient};
use tabula_thrift::hbase2::TTHBaseServiceSyncClient;
use thrift::protocol::{
    TBinaryInputProtocol, TBinaryOutputProtocol, TInputProtocol, TOutputProtocol,
};

use common::t2;
use server_common::{
    assert_echo, decode_reply_bytes, encode_call, frame, http_post, is_closed_by_server,
    read_http_response, Flavor, TestServer, IO_TIMEOUT,
};

/// A test certificate authority, a server certificate it issued for localhost and
/// 127.0.0.1, a client certificate it issued, and a client certificate it did not.
struct Pki {
    dir: tempfile::TempDir,
    ca: Certificate,
    client: (Certificate, KeyPair),
    stranger: (Certificate, KeyPair),
}

impl Pki {
    fn new() -> Pki {
        let dir = tempfile::tempdir().expect("tempdir");
        let ca_key = KeyPair::generate().expect("CA key");
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "tabula test CA");
        ca_params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let ca = ca_params.self_signed(&ca_key).expect("CA certificate");

        let issue = |names: Vec<String>, purpose: ExtendedKeyUsagePurpose| {
            let key = KeyPair::generate().expect("key");
            let mut params = CertificateParams::new(names).expect("params");
            params.extended_key_usages = vec![purpose];
            (params, key)
        };
        let (mut server_params, server_key) = issue(
            vec!["localhost".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        );
        server_params
            .subject_alt_names
            .push(SanType::IpAddress([127, 0, 0, 1].into()));
        let server = server_params
            .signed_by(&server_key, &ca, &ca_key)
            .expect("server certificate");
        let (client_params, client_key) =
            issue(vec!["client".into()], ExtendedKeyUsagePurpose::ClientAuth);
        let client = client_params
            .signed_by(&client_key, &ca, &ca_key)
            .expect("client certificate");
        let (stranger_params, stranger_key) =
            issue(vec!["client".into()], ExtendedKeyUsagePurpose::ClientAuth);
        let stranger = stranger_params
            .self_signed(&stranger_key)
            .expect("stranger certificate");

        let write = |name: &str, pem: String| {
            std::fs::write(dir.path().join(name), pem).expect("write a PEM file");
        };
        write("ca.pem", ca.pem());
        write("server.pem", server.pem());
        write("server-key.pem", server_key.serialize_pem());
        Pki {
            dir,
            ca,
            client: (client, client_key),
            stranger: (stranger, stranger_key),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// The server side, asking clients for a certificate of the CA when `mutual`.
    fn server(&self, mutual: bool) -> TlsConfig {
        let ca = self.path("ca.pem");
        TlsConfig::from_pem_files(
            &self.path("server.pem"),
            &self.path("server-key.pem"),
            mutual.then_some(ca.as_path()),
        )
        .expect("server TLS")
    }

    /// A test server (echoing every call) whose port takes TLS only.
    fn test_server(&self, mutual: bool) -> TestServer {
        TestServer::start(ServerOptions {
            tls: Some(self.server(mutual)),
            ..ServerOptions::default()
        })
    }

    /// A client trusting the CA, presenting `identity` if given.
    fn client(&self, identity: Option<&(Certificate, KeyPair)>) -> Arc<ClientConfig> {
        let mut roots = RootCertStore::empty();
        roots.add(self.ca.der().clone()).expect("trust the CA");
        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_root_certificates(roots);
        let config = match identity {
            None => builder.with_no_client_auth(),
            Some((cert, key)) => builder
                .with_client_auth_cert(
                    vec![cert.der().clone()],
                    PrivateKeyDer::try_from(key.serialize_der()).expect("client key"),
                )
                .expect("client identity"),
        };
        Arc::new(config)
    }
}

/// A TLS session to `addr`, checking the server is `localhost` as the CA says.
fn tls_connect(
    addr: SocketAddr,
    config: Arc<ClientConfig>,
) -> StreamOwned<ClientConnection, TcpStream> {
    let socket = TcpStream::connect(addr).expect("connect");
    socket.set_read_timeout(Some(IO_TIMEOUT)).expect("timeout");
    let name = ServerName::try_from("localhost").expect("server name");
    let session = ClientConnection::new(config, name).expect("client session");
    StreamOwned::new(session, socket)
}

/// Posts `body` on `session` and reads the response.
fn post(
    session: &mut BufReader<StreamOwned<ClientConnection, TcpStream>>,
    body: &[u8],
) -> io::Result<server_common::HttpResponse> {
    session.get_mut().write_all(&http_post("/", body))?;
    session.get_mut().flush()?;
    read_http_response(session)
}

#[test]
fn https_carries_thrift_calls_on_a_kept_alive_connection() {
    let pki = Pki::new();
    let server = pki.test_server(false);
    let mut session = BufReader::new(tls_connect(server.addr, pki.client(None)));
    for seqid in 1..=3 {
        let response = post(
            &mut session,
            &encode_call(Flavor::StrictBinary, "getTableNames", seqid),
        )
        .expect("response");
        assert_eq!(response.status, 200);
        assert_eq!(
            response.header("content-type"),
            Some("application/x-thrift")
        );
        let (reply, _) = decode_reply_bytes(Flavor::StrictBinary, &response.body);
        assert_echo(&reply, "getTableNames", seqid);
    }
    let modes = server.stats.snapshot().modes;
    assert_eq!(modes.http, 1, "one connection, served as HTTP inside TLS");
}

#[test]
fn a_tls_port_closes_plaintext_connections_of_every_kind() {
    let pki = Pki::new();
    let server = pki.test_server(false);
    let call = encode_call(Flavor::StrictBinary, "getTableNames", 1);
    let compact = encode_call(Flavor::Compact, "getTableNames", 1);
    for (kind, request) in [
        ("unframed binary", call.clone()),
        ("framed binary", frame(&call)),
        ("compact", compact),
        ("plain HTTP", http_post("/", &call)),
    ] {
        let stream = server.connect();
        (&stream).write_all(&request).expect("send");
        assert!(is_closed_by_server(&stream), "{kind} was not closed");
    }
    assert_eq!(
        server
            .processor
            .calls
            .load(std::sync::atomic::Ordering::SeqCst),
        0,
        "no plaintext call ran"
    );
    let stats = server.stats.snapshot();
    assert_eq!(stats.unrecognized_connections, 4, "{stats:?}");
    assert_eq!(
        stats.modes,
        Default::default(),
        "no plaintext mode was served"
    );
    // The port still serves TLS.
    let mut session = BufReader::new(tls_connect(server.addr, pki.client(None)));
    let response = post(&mut session, &call).expect("response");
    assert_eq!(response.status, 200);
}

#[test]
fn a_client_quiet_inside_its_handshake_is_cut_off() {
    let pki = Pki::new();
    let server = TestServer::start(ServerOptions {
        tls: Some(pki.server(false)),
        idle_timeout: Some(Duration::from_millis(300)),
        ..ServerOptions::default()
    });
    // The start of a TLS record, then nothing more.
    let stream = server.connect();
    (&stream).write_all(&[0x16, 0x03, 0x01]).expect("send");
    let started = Instant::now();
    assert!(
        is_closed_by_server(&stream),
        "a stalled handshake was kept open"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // Counted as the connection task ends, which may be just after the close.
    server.wait_for_stats("the failed handshake", |s| s.tls_handshake_failures == 1);
    // A client that completes its handshake is still served.
    let mut session = BufReader::new(tls_connect(server.addr, pki.client(None)));
    let call = encode_call(Flavor::StrictBinary, "getTableNames", 9);
    assert_eq!(post(&mut session, &call).expect("response").status, 200);
}

#[test]
fn with_a_client_ca_only_clients_holding_its_certificates_get_in() {
    let pki = Pki::new();
    let server = pki.test_server(true);
    let call = encode_call(Flavor::StrictBinary, "getTableNames", 5);
    for (who, identity) in [
        ("no certificate", None),
        ("a stranger's", Some(&pki.stranger)),
    ] {
        let mut session = BufReader::new(tls_connect(server.addr, pki.client(identity)));
        let answered = post(&mut session, &call);
        assert!(answered.is_err(), "a client with {who} got {answered:?}");
    }
    server.wait_for_stats("two failed handshakes", |s| s.tls_handshake_failures == 2);
    let mut session = BufReader::new(tls_connect(server.addr, pki.client(Some(&pki.client))));
    let response = post(&mut session, &call).expect("the CA's client is served");
    assert_eq!(response.status, 200);
    assert_echo(
        &decode_reply_bytes(Flavor::StrictBinary, &response.body).0,
        "getTableNames",
        5,
    );
}

/// Whether a client trusting `pki`'s CA completes a call on `addr`.
fn served_for(pki: &Pki, addr: SocketAddr, seqid: i32) -> bool {
    let mut session = BufReader::new(tls_connect(addr, pki.client(None)));
    post(
        &mut session,
        &encode_call(Flavor::StrictBinary, "getTableNames", seqid),
    )
    .is_ok_and(|r| r.status == 200)
}

#[test]
fn a_rotated_certificate_is_served_without_a_restart() {
    let pki = Pki::new();
    let server = pki.test_server(false);
    assert!(served_for(&pki, server.addr, 1));
    // The files are replaced by a certificate of another authority.
    let next = Pki::new();
    for name in ["server.pem", "server-key.pem"] {
        std::fs::copy(next.path(name), pki.path(name)).expect("replace a PEM file");
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while !served_for(&next, server.addr, 2) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(
        served_for(&next, server.addr, 3),
        "the new certificate is served"
    );
    assert!(!served_for(&pki, server.addr, 4), "the old one is not");
    // A file that makes no server leaves the set-up in use as it is.
    std::fs::write(pki.path("server-key.pem"), "not a key").expect("write a broken key");
    std::thread::sleep(Duration::from_millis(1200));
    assert!(
        served_for(&next, server.addr, 5),
        "served while the key is broken"
    );
    assert!(
        served_for(&next, server.addr, 5),
        "still served after a bad change"
    );
}

/// A Thrift transport posting each message over HTTPS, as Thrift's THttpClient
/// does over HTTP: written bytes are buffered, a flush posts them and keeps the
/// response body for the reads that follow.
#[derive(Clone)]
struct HttpsChannel {
    inner: Arc<Mutex<HttpsState>>,
}

struct HttpsState {
    session: BufReader<StreamOwned<ClientConnection, TcpStream>>,
    request: Vec<u8>,
    response: io::Cursor<Vec<u8>>,
}

impl HttpsChannel {
    fn new(addr: SocketAddr, config: Arc<ClientConfig>) -> HttpsChannel {
        HttpsChannel {
            inner: Arc::new(Mutex::new(HttpsState {
                session: BufReader::new(tls_connect(addr, config)),
                request: Vec::new(),
                response: io::Cursor::new(Vec::new()),
            })),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, HttpsState> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Read for HttpsChannel {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.state().response.read(buf)
    }
}

impl Write for HttpsChannel {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.state().request.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut state = self.state();
        let body = std::mem::take(&mut state.request);
        let response = post(&mut state.session, &body)?;
        if response.status != 200 {
            return Err(io::Error::other(format!("HTTP status {}", response.status)));
        }
        state.response = io::Cursor::new(response.body);
        Ok(())
    }
}

/// Input and output protocols (strict binary, as HBase's HTTP mode speaks) over one
/// HTTPS connection.
fn https_protocols(
    addr: SocketAddr,
    config: Arc<ClientConfig>,
) -> (
    Box<dyn TInputProtocol + Send>,
    Box<dyn TOutputProtocol + Send>,
) {
    let channel = HttpsChannel::new(addr, config);
    (
        Box::new(TBinaryInputProtocol::new(channel.clone(), true)),
        Box::new(TBinaryOutputProtocol::new(channel, true)),
    )
}

/// `tabula serve` with the PKI's server certificate (and its CA for clients when
/// `mutual`).
fn tabula_with_tls(pki: &Pki, mutual: bool) -> common::Tabula {
    let cert = pki.path("server.pem");
    let key = pki.path("server-key.pem");
    let ca = pki.path("ca.pem");
    let mut env = vec![
        ("TABULA_TLS_CERT_FILE", cert.to_str().expect("utf-8 path")),
        ("TABULA_TLS_KEY_FILE", key.to_str().expect("utf-8 path")),
    ];
    if mutual {
        env.push((
            "TABULA_TLS_CLIENT_CA_FILE",
            ca.to_str().expect("utf-8 path"),
        ));
    }
    common::Tabula::start_with(&env)
}

#[test]
fn tabula_serve_answers_thrift1_and_thrift2_clients_over_https() {
    let pki = Pki::new();
    let server = tabula_with_tls(&pki, true);
    let identity = Some(&pki.client);

    let (i, o) = https_protocols(server.thrift1, pki.client(identity));
    let mut client = HbaseSyncClient::new(i, o);
    let table = common::unique("tls");
    common::create(&mut client, &table, &["cf"]);
    common::put(&mut client, &table, "row1", &[("cf:a", "secret")]);
    let rows = client
        .get_row(table.clone(), b"row1".to_vec(), common::no_attrs())
        .expect("getRow over HTTPS");
    let columns = common::columns_of(rows.first().expect("the row"));
    assert_eq!(columns.get("cf:a").map(String::as_str), Some("secret"));

    let (i, o) = https_protocols(server.thrift2.expect("Thrift2 is on"), pki.client(identity));
    let mut client2 = tabula_thrift::hbase2::THBaseServiceSyncClient::new(i, o);
    client2
        .put(
            table.clone(),
            t2::tput("row2", &[("cf:b", "also secret")], None),
        )
        .expect("Thrift2 put over HTTPS");
    let got = client2
        .get(table.clone(), t2::tget("row2"))
        .expect("Thrift2 get over HTTPS");
    let values = t2::values(&got);
    assert_eq!(
        values.get("cf:b").map(String::as_str),
        Some("also secret"),
        "{values:?}"
    );

    // A client without TLS (or without a certificate) gets nothing.
    let mut plain = common::connect(
        server.thrift1,
        common::Framing::Buffered,
        common::Protocol::Binary,
    );
    assert!(plain.get_table_names().is_err(), "plaintext was served");
    let (i, o) = https_protocols(server.thrift1, pki.client(None));
    let mut anonymous = HbaseSyncClient::new(i, o);
    assert!(
        anonymous.get_table_names().is_err(),
        "a client without a certificate was served"
    );
}

#[test]
fn synced_writes_over_https_read_back_at_once_from_every_connection() {
    // Single-row writes in HTTP mode run on the worker serving their connection
    // and hand their log sync to the acknowledger, or, while the memtables are over
    // their budget (a 1 MiB budget here, overrun by these 8 KiB values), run on the
    // blocking pool: either way a write is answered only once it is synced and
    // visible, so the same connection's next read sees it.
    let pki = Pki::new();
    let server = {
        let cert = pki.path("server.pem");
        let key = pki.path("server-key.pem");
        common::Tabula::start_with(&[
            ("TABULA_TLS_CERT_FILE", cert.to_str().expect("utf-8 path")),
            ("TABULA_TLS_KEY_FILE", key.to_str().expect("utf-8 path")),
            ("TABULA_MEMORY_BUDGET_MB", "1"),
            ("TABULA_MEMTABLE_SIZE_MB", "1"),
        ])
    };
    let table = common::unique("tls-writes");
    {
        let (i, o) = https_protocols(server.thrift1, pki.client(None));
        let mut client = HbaseSyncClient::new(i, o);
        common::create(&mut client, &table, &["cf"]);
    }
    let value = |worker: usize, i: usize| format!("{worker}-{i}-{}", "v".repeat(8 << 10));
    std::thread::scope(|s| {
        for worker in 0..4 {
            let (table, server, pki) = (&table, &server, &pki);
            s.spawn(move || {
                let (i, o) = https_protocols(server.thrift1, pki.client(None));
                let mut client = HbaseSyncClient::new(i, o);
                for i in 0..60 {
                    let row = format!("w{worker}-{i:03}");
                    let written = value(worker, i);
                    client
                        .mutate_row(
                            table.clone(),
                            row.clone().into_bytes(),
                            vec![common::put_m("cf:a", written.as_bytes())],
                            common::no_attrs(),
                        )
                        .expect("mutateRow over HTTPS");
                    let rows = client
                        .get_row(table.clone(), row.into_bytes(), common::no_attrs())
                        .expect("getRow over HTTPS");
                    let columns = common::columns_of(rows.first().expect("the row just written"));
                    assert_eq!(columns.get("cf:a"), Some(&written));
                }
            });
        }
    });
    let (i, o) = https_protocols(server.thrift2.expect("Thrift2 is on"), pki.client(None));
    let mut client2 = tabula_thrift::hbase2::THBaseServiceSyncClient::new(i, o);
    let mut put = t2::tput("fsynced", &[("cf:b", "durable")], None);
    put.durability = Some(tabula_thrift::hbase2::TDurability::FSYNC_WAL);
    client2
        .put(table.clone(), put)
        .expect("Thrift2 put over HTTPS");
    let got = client2
        .get(table.clone(), t2::tget("fsynced"))
        .expect("Thrift2 get over HTTPS");
    assert_eq!(
        t2::values(&got).get("cf:b").map(String::as_str),
        Some("durable")
    );
}

#[test]
fn tabula_serve_refuses_to_start_on_unreadable_tls_files() {
    let pki = Pki::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.pem");
    let run = |cert: &Path, key: &Path| {
        Command::new(common::binary_path())
            .arg("serve")
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--listen", "127.0.0.1:0"])
            .env("TABULA_THRIFT2_LISTEN", "127.0.0.1:0")
            .env("TABULA_TLS_CERT_FILE", cert)
            .env("TABULA_TLS_KEY_FILE", key)
            .stdin(Stdio::null())
            .output()
            .expect("run tabula serve")
    };
    let output = run(&pki.path("server.pem"), &missing);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("missing.pem"), "{stderr}");
    // The CA's key is not the server certificate's: refused too.
    let output = run(&pki.path("ca.pem"), &pki.path("server-key.pem"));
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("TLS"), "{stderr}");
}
