//! The etcd lock service against a real etcd (Debian's etcd-server): the shared
//! `LockService` contract (common/lock_contract.rs) in real time, plus what only a
//! remote service has: namespaces shared on one etcd, an unreachable or restarted
//! etcd, and the durability of files across an etcd restart.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::etcd::EtcdServer;
use common::lock_contract::{contract_tests, Subject, LONG};
use tabula_coordinator::lock::{EtcdConfig, EtcdLockService, LockError, LockService, WatchEvent};

/// etcd's shortest lease with its default timing (1.5 s, granted in whole seconds).
const SHORT_TTL: Duration = Duration::from_secs(2);

/// A fresh etcd of its own, the service under a namespace on it.
fn subject() -> Subject {
    let etcd = EtcdServer::start();
    let svc = etcd.service("/contract");
    Subject::new(
        Arc::new(svc),
        SHORT_TTL,
        Box::new(std::thread::sleep),
        Some(Box::new(etcd)),
    )
}

contract_tests!(subject);

/// Every path the service lists.
fn paths(svc: &EtcdLockService) -> Vec<String> {
    svc.list("")
        .unwrap()
        .files
        .into_iter()
        .map(|(p, _)| p)
        .collect()
}

#[test]
fn namespaces_keep_clusters_apart_on_one_etcd() {
    let etcd = EtcdServer::start();
    let a = etcd.service("/a");
    let ab = etcd.service("/ab");
    let watch_a = a.watch("").unwrap();
    a.put("/tabula/root", b"a").unwrap();
    ab.put("/tabula/root", b"ab").unwrap();
    ab.put("/x", b"").unwrap();
    assert_eq!(a.get("/tabula/root").unwrap().unwrap().value, b"a");
    assert_eq!(ab.get("/tabula/root").unwrap().unwrap().value, b"ab");
    assert_eq!(paths(&a), ["/tabula/root"]);
    let event = watch_a.next_timeout(Duration::from_secs(5)).unwrap();
    assert!(
        matches!(&event, Some(WatchEvent::Put { path, file }) if path == "/tabula/root" && file.value == b"a"),
        "{event:?}"
    );
    assert_eq!(
        watch_a.next_timeout(Duration::from_millis(300)).unwrap(),
        None
    );
    // The unnamespaced service sees both, under their full keys.
    assert_eq!(
        paths(&etcd.service("")),
        ["/a/tabula/root", "/ab/tabula/root", "/ab/x"]
    );
}

#[test]
fn an_unreachable_etcd_is_reported_unavailable() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut config = EtcdConfig::new(vec![format!("http://127.0.0.1:{port}")]);
    config.connect_timeout = Duration::from_millis(500);
    let started = Instant::now();
    let result = EtcdLockService::connect(config);
    assert!(
        matches!(result, Err(LockError::Unavailable(_))),
        "{result:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(
        EtcdLockService::connect(EtcdConfig::new(Vec::new())),
        Err(LockError::Unavailable(_))
    ));
}

#[test]
fn files_survive_an_etcd_restart_and_calls_fail_cleanly_while_it_is_down() {
    let mut etcd = EtcdServer::start();
    let mut config = etcd.config("/t");
    config.request_timeout = Duration::from_secs(2);
    let svc = EtcdLockService::connect(config).unwrap();
    let session = svc.create_session(LONG).unwrap();
    let written = svc.put("/tabula/tables/t1", b"schema").unwrap();
    svc.put_ephemeral("/tabula/servers/rs1", b"rs1", session)
        .unwrap();
    let watcher = svc.watch("/tabula/").unwrap();

    etcd.kill();
    let started = Instant::now();
    let down = svc.get("/tabula/tables/t1");
    assert!(matches!(down, Err(LockError::Unavailable(_))), "{down:?}");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The watch ends rather than staying silent (HTTP/2 keep-alive notices).
    let ended = Instant::now();
    loop {
        match watcher.next_timeout(Duration::from_secs(1)) {
            Err(LockError::WatchClosed) => break,
            other => assert!(
                ended.elapsed() < Duration::from_secs(30),
                "watch still open: {other:?}"
            ),
        }
    }

    etcd.restart();
    // The same client reconnects; what was acknowledged is still there.
    let deadline = Instant::now() + Duration::from_secs(30);
    let file = loop {
        match svc.get("/tabula/tables/t1") {
            Ok(file) => break file,
            Err(e) => assert!(Instant::now() < deadline, "etcd did not come back: {e}"),
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let file = file.expect("an acknowledged file survives the restart");
    assert_eq!(
        (file.value.as_slice(), file.revision),
        (&b"schema"[..], written)
    );
    assert!(svc.session_alive(session).unwrap());
    assert_eq!(
        svc.get("/tabula/servers/rs1").unwrap().unwrap().owner,
        Some(session)
    );
}
