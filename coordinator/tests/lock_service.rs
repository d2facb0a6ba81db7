//! Behaviour of the embedded lock service: the shared `LockService` contract
//! (common/lock_contract.rs) with a manual clock, plus what only the embedded service
//! promises (lease ends to the millisecond, the reaper on the system clock).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::lock_contract::{contract_tests, Subject};
use tabula_coordinator::lock::{
    EmbeddedConfig, EmbeddedLockService, LockError, LockService, ManualClock, WatchEvent,
};

const TTL: Duration = Duration::from_secs(10);

fn manual() -> (EmbeddedLockService, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new());
    let service =
        EmbeddedLockService::start(EmbeddedConfig::in_memory().with_clock(clock.clone())).unwrap();
    (service, clock)
}

fn memory() -> EmbeddedLockService {
    EmbeddedLockService::in_memory().unwrap()
}

/// A fresh in-memory service whose time passes only when a test says so.
fn subject() -> Subject {
    let (svc, clock) = manual();
    Subject::new(
        Arc::new(svc),
        TTL,
        Box::new(move |d| clock.advance(d)),
        None,
    )
}

contract_tests!(subject);

#[test]
fn a_session_expires_after_its_ttl_without_keep_alive() {
    let (svc, clock) = manual();
    let s = svc.create_session(TTL).unwrap();
    clock.advance(TTL - Duration::from_millis(1));
    assert!(svc.session_alive(s).unwrap());
    clock.advance(Duration::from_millis(1));
    assert!(!svc.session_alive(s).unwrap());
    assert!(matches!(svc.keep_alive(s), Err(LockError::SessionExpired(id)) if id == s));
    // Closing an ended session is harmless.
    svc.close_session(s).unwrap();
}

#[test]
fn keep_alive_extends_the_lease_by_a_full_ttl() {
    let (svc, clock) = manual();
    let s = svc.create_session(TTL).unwrap();
    for _ in 0..5 {
        clock.advance(TTL / 2 + Duration::from_secs(1));
        svc.keep_alive(s).unwrap();
    }
    assert!(svc.session_alive(s).unwrap());
    clock.advance(TTL);
    assert!(!svc.session_alive(s).unwrap());
}

#[test]
fn the_reaper_ends_lapsed_sessions_without_any_call() {
    let svc = memory();
    let s = svc.create_session(Duration::from_millis(100)).unwrap();
    svc.put_ephemeral("/servers/rs1", b"addr", s).unwrap();
    let watcher = svc.watch("/servers/").unwrap();
    let started = Instant::now();
    let event = watcher.next_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        matches!(&event, Some(WatchEvent::Delete { path, .. }) if path == "/servers/rs1"),
        "{event:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn the_trait_is_object_safe_and_shareable() {
    fn assert_send_sync<T: Send + Sync + ?Sized>() {}
    assert_send_sync::<dyn LockService>();
    let svc: Arc<dyn LockService> = Arc::new(memory());
    let r = svc.put("/x", b"1").unwrap();
    assert_eq!(svc.get("/x").unwrap().unwrap().revision, r);
}
