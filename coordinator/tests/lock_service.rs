//! Behaviour of the embedded lock service through the `LockService` contract:
//! sessions, files, transactions, locks with fencing, and watches.

use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use tabula_coordinator::lock::{
    CasOutcome, EmbeddedConfig, EmbeddedLockService, LockError, LockService, ManualClock,
    SessionId, Txn, TxnOutcome, WatchEvent,
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

// ---------------------------------------------------------------- sessions

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
fn closed_sessions_are_dead_and_ids_are_distinct() {
    let svc = memory();
    let a = svc.create_session(TTL).unwrap();
    let b = svc.create_session(TTL).unwrap();
    assert_ne!(a, b);
    assert_ne!(a, SessionId(0));
    svc.close_session(a).unwrap();
    assert!(!svc.session_alive(a).unwrap());
    assert!(svc.session_alive(b).unwrap());
    assert!(matches!(
        svc.keep_alive(a),
        Err(LockError::SessionExpired(_))
    ));
}

#[test]
fn session_ttl_must_be_positive_and_bounded() {
    let svc = memory();
    assert!(matches!(
        svc.create_session(Duration::ZERO),
        Err(LockError::InvalidTtl { .. })
    ));
    assert!(matches!(
        svc.create_session(Duration::from_secs(10 * 24 * 3600)),
        Err(LockError::InvalidTtl { .. })
    ));
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

// ---------------------------------------------------------------- files

#[test]
fn revisions_increase_across_the_store_and_create_revision_sticks() {
    let svc = memory();
    let r1 = svc.put("/a", b"1").unwrap();
    let r2 = svc.put("/b", b"2").unwrap();
    let r3 = svc.put("/a", b"3").unwrap();
    assert!(r1 >= 1 && r1 < r2 && r2 < r3);
    let a = svc.get("/a").unwrap().unwrap();
    assert_eq!(a.value, b"3");
    assert_eq!(a.revision, r3);
    assert_eq!(a.create_revision, r1);
    assert_eq!(a.owner, None);
    assert_eq!(svc.get("/missing").unwrap(), None);
}

#[test]
fn compare_and_put_creates_if_absent_and_reports_conflicts() {
    let svc = memory();
    let created = svc.compare_and_put("/counter", None, b"16").unwrap();
    let CasOutcome::Applied { revision: r1 } = created else {
        panic!("create-if-absent failed: {created:?}");
    };
    // A second create-if-absent loses and sees the winner.
    match svc.compare_and_put("/counter", None, b"99").unwrap() {
        CasOutcome::Conflict {
            current: Some(file),
        } => {
            assert_eq!(file.value, b"16");
            assert_eq!(file.revision, r1);
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    // Advancing from the read revision works once; a stale revision then conflicts.
    let CasOutcome::Applied { revision: r2 } =
        svc.compare_and_put("/counter", Some(r1), b"17").unwrap()
    else {
        panic!("compare on the current revision failed");
    };
    assert!(r2 > r1);
    assert!(matches!(
        svc.compare_and_put("/counter", Some(r1), b"18").unwrap(),
        CasOutcome::Conflict { current: Some(f) } if f.revision == r2
    ));
    // Comparing against an absent file conflicts with `current: None`.
    assert_eq!(
        svc.compare_and_put("/nothing", Some(r1), b"x").unwrap(),
        CasOutcome::Conflict { current: None }
    );
    assert_eq!(svc.get("/nothing").unwrap(), None);
}

#[test]
fn compare_and_delete_needs_the_current_revision() {
    let svc = memory();
    let r1 = svc.put("/split/7", b"pending").unwrap();
    let r2 = svc.put("/split/7", b"pending2").unwrap();
    assert!(matches!(
        svc.compare_and_delete("/split/7", r1).unwrap(),
        CasOutcome::Conflict { current: Some(_) }
    ));
    assert!(matches!(
        svc.compare_and_delete("/split/7", r2).unwrap(),
        CasOutcome::Applied { revision } if revision > r2
    ));
    assert_eq!(svc.get("/split/7").unwrap(), None);
}

#[test]
fn deleting_an_absent_file_consumes_no_revision() {
    let svc = memory();
    let r = svc.put("/a", b"").unwrap();
    svc.delete("/ghost").unwrap();
    assert_eq!(svc.list("").unwrap().revision, r);
    svc.delete("/a").unwrap();
    assert_eq!(svc.list("").unwrap().revision, r + 1);
    assert_eq!(svc.get("/a").unwrap(), None);
}

#[test]
fn list_is_sorted_prefix_bounded_and_carries_the_revision() {
    let svc = memory();
    for path in [
        "/servers/c",
        "/servers/a",
        "/serversX",
        "/root",
        "/servers/b",
    ] {
        svc.put(path, path.as_bytes()).unwrap();
    }
    let listing = svc.list("/servers/").unwrap();
    let paths: Vec<&str> = listing.files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["/servers/a", "/servers/b", "/servers/c"]);
    assert!(listing.files.iter().all(|(p, f)| f.value == p.as_bytes()));
    let top = svc.list("").unwrap();
    assert_eq!(top.files.len(), 5);
    assert_eq!(
        top.revision,
        top.files.iter().map(|(_, f)| f.revision).max().unwrap()
    );
}

#[test]
fn a_transaction_is_all_or_nothing_at_one_revision() {
    let svc = memory();
    let r_counter = svc.put("/counter", b"16").unwrap();
    let txn = Txn::new()
        .require_revision("/counter", r_counter)
        .require_absent("/tables/t1")
        .put("/counter", b"17")
        .put("/tables/t1", b"schema")
        .delete("/root");
    let TxnOutcome::Committed { revision } = svc.commit(&txn).unwrap() else {
        panic!("transaction should commit");
    };
    assert_eq!(svc.get("/counter").unwrap().unwrap().revision, revision);
    assert_eq!(svc.get("/tables/t1").unwrap().unwrap().revision, revision);

    // Re-running it fails on both comparisons and writes nothing.
    match svc.commit(&txn).unwrap() {
        TxnOutcome::Failed { current } => {
            assert_eq!(current.len(), 2);
            assert_eq!(
                current[0].as_ref().map(|f| f.value.clone()),
                Some(b"17".to_vec())
            );
            assert_eq!(current[1].as_ref().map(|f| f.revision), Some(revision));
        }
        other => panic!("expected failure, got {other:?}"),
    }
    assert_eq!(svc.list("").unwrap().revision, revision);
}

#[test]
fn malformed_requests_are_rejected() {
    let svc = memory();
    assert!(matches!(
        svc.commit(&Txn::new().put("/a", b"1").put("/a", b"2")),
        Err(LockError::InvalidTxn(_))
    ));
    assert!(matches!(
        svc.put("relative", b""),
        Err(LockError::InvalidPath { .. })
    ));
    assert!(matches!(svc.get(""), Err(LockError::InvalidPath { .. })));
    assert!(matches!(
        svc.put("/big", &vec![0u8; 2 << 20]),
        Err(LockError::TooLarge { .. })
    ));
    assert_eq!(svc.list("").unwrap().revision, 0);
}

#[test]
fn ephemeral_files_vanish_with_their_session() {
    let (svc, clock) = manual();
    let closing = svc.create_session(TTL).unwrap();
    let lapsing = svc.create_session(TTL).unwrap();
    svc.put_ephemeral("/e/closing", b"x", closing).unwrap();
    svc.put_ephemeral("/e/lapsing", b"y", lapsing).unwrap();
    svc.put("/e/persistent", b"z").unwrap();
    assert_eq!(svc.get("/e/closing").unwrap().unwrap().owner, Some(closing));

    svc.close_session(closing).unwrap();
    assert_eq!(svc.get("/e/closing").unwrap(), None);
    assert!(svc.get("/e/lapsing").unwrap().is_some());

    clock.advance(TTL);
    assert_eq!(svc.get("/e/lapsing").unwrap(), None);
    let left: Vec<String> = svc
        .list("/e/")
        .unwrap()
        .files
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    assert_eq!(left, ["/e/persistent"]);
}

#[test]
fn a_plain_put_over_an_ephemeral_file_makes_it_persistent() {
    let svc = memory();
    let s = svc.create_session(TTL).unwrap();
    svc.put_ephemeral("/f", b"eph", s).unwrap();
    svc.put("/f", b"kept").unwrap();
    svc.close_session(s).unwrap();
    let f = svc.get("/f").unwrap().unwrap();
    assert_eq!((f.value.as_slice(), f.owner), (&b"kept"[..], None));
}

#[test]
fn ephemeral_writes_need_a_live_session() {
    let svc = memory();
    let s = svc.create_session(TTL).unwrap();
    svc.close_session(s).unwrap();
    assert!(matches!(
        svc.put_ephemeral("/e", b"", s),
        Err(LockError::SessionExpired(id)) if id == s
    ));
    assert_eq!(svc.get("/e").unwrap(), None);
}

// ---------------------------------------------------------------- locks

#[test]
fn a_lock_is_exclusive_and_passes_on_after_unlock_with_a_higher_token() {
    let svc = memory();
    let a = svc.create_session(TTL).unwrap();
    let b = svc.create_session(TTL).unwrap();
    let ta = svc.try_lock("/coordinator", a, b"host-a").unwrap().unwrap();
    assert_eq!(svc.try_lock("/coordinator", b, b"host-b").unwrap(), None);
    let holder = svc.lock_holder("/coordinator").unwrap().unwrap();
    assert_eq!(holder.session, a);
    assert_eq!(holder.info, b"host-a");
    assert_eq!(holder.revision, ta.revision);

    assert!(matches!(
        svc.unlock("/coordinator", b),
        Err(LockError::NotLockHolder { .. })
    ));
    svc.unlock("/coordinator", a).unwrap();
    assert_eq!(svc.lock_holder("/coordinator").unwrap(), None);
    let tb = svc.try_lock("/coordinator", b, b"host-b").unwrap().unwrap();
    assert!(tb.revision > ta.revision);
    assert!(!svc.holds_lock(&ta).unwrap());
    assert!(svc.holds_lock(&tb).unwrap());
}

#[test]
fn try_lock_by_the_holder_returns_its_token() {
    let svc = memory();
    let a = svc.create_session(TTL).unwrap();
    let first = svc.try_lock("/l", a, b"i").unwrap().unwrap();
    let again = svc.try_lock("/l", a, b"i").unwrap().unwrap();
    assert_eq!(first, again);
}

#[test]
fn locks_are_released_when_the_session_closes_or_lapses() {
    let (svc, clock) = manual();
    let a = svc.create_session(TTL).unwrap();
    let b = svc.create_session(TTL * 3).unwrap();
    let ta = svc.try_lock("/servers/rs1", a, b"").unwrap().unwrap();
    assert_eq!(svc.try_lock("/servers/rs1", b, b"").unwrap(), None);
    clock.advance(TTL);
    let tb = svc.try_lock("/servers/rs1", b, b"").unwrap().unwrap();
    assert!(tb.revision > ta.revision);

    let c = svc.create_session(TTL * 3).unwrap();
    assert_eq!(svc.try_lock("/servers/rs1", c, b"").unwrap(), None);
    svc.close_session(b).unwrap();
    assert!(svc.try_lock("/servers/rs1", c, b"").unwrap().is_some());
}

#[test]
fn a_persistent_file_cannot_be_locked() {
    let svc = memory();
    let s = svc.create_session(TTL).unwrap();
    svc.put("/root", b"rs1").unwrap();
    assert!(matches!(
        svc.try_lock("/root", s, b""),
        Err(LockError::NotLockable { .. })
    ));
    assert_eq!(svc.lock_holder("/root").unwrap(), None);
}

#[test]
fn a_dead_session_cannot_lock() {
    let svc = memory();
    let s = svc.create_session(TTL).unwrap();
    svc.close_session(s).unwrap();
    assert!(matches!(
        svc.try_lock("/l", s, b""),
        Err(LockError::SessionExpired(_))
    ));
}

#[test]
fn fenced_writes_fail_once_the_lock_passed_to_someone_else() {
    let (svc, clock) = manual();
    let old = svc.create_session(TTL).unwrap();
    let t_old = svc.try_lock("/coordinator", old, b"old").unwrap().unwrap();
    let fenced = |token, value: &'static [u8]| Txn::new().fenced_by(token).put("/root", value);
    assert!(matches!(
        svc.commit(&fenced(&t_old, b"by-old")).unwrap(),
        TxnOutcome::Committed { .. }
    ));

    // The old holder stalls; its lease lapses and a new coordinator takes over.
    clock.advance(TTL);
    let new = svc.create_session(TTL).unwrap();
    let t_new = svc.try_lock("/coordinator", new, b"new").unwrap().unwrap();
    assert!(t_new.revision > t_old.revision);

    // The stale holder's fenced write is refused; the new one's succeeds.
    assert!(matches!(
        svc.commit(&fenced(&t_old, b"stale")).unwrap(),
        TxnOutcome::Failed { .. }
    ));
    assert!(matches!(
        svc.commit(&fenced(&t_new, b"by-new")).unwrap(),
        TxnOutcome::Committed { .. }
    ));
    assert_eq!(svc.get("/root").unwrap().unwrap().value, b"by-new");
    assert!(matches!(
        svc.release(&t_old),
        Err(LockError::NotLockHolder { .. })
    ));
}

#[test]
fn deleting_a_lock_file_breaks_the_lock() {
    let svc = memory();
    let server = svc.create_session(TTL).unwrap();
    let token = svc
        .try_lock("/servers/rs1", server, b"rs1:9000")
        .unwrap()
        .unwrap();
    // The coordinator declares the server dead by deleting its file.
    let holder = svc.lock_holder("/servers/rs1").unwrap().unwrap();
    assert!(matches!(
        svc.compare_and_delete("/servers/rs1", holder.revision)
            .unwrap(),
        CasOutcome::Applied { .. }
    ));
    assert!(svc.session_alive(server).unwrap());
    assert!(!svc.holds_lock(&token).unwrap());
    assert!(matches!(
        svc.commit(&Txn::new().fenced_by(&token).put("/x", b""))
            .unwrap(),
        TxnOutcome::Failed { .. }
    ));
    assert!(matches!(
        svc.unlock("/servers/rs1", server),
        Err(LockError::NotLockHolder { .. })
    ));
}

#[test]
fn release_drops_exactly_the_named_lock() {
    let svc = memory();
    let s = svc.create_session(TTL).unwrap();
    let token = svc.try_lock("/l", s, b"").unwrap().unwrap();
    svc.release(&token).unwrap();
    assert_eq!(svc.get("/l").unwrap(), None);
    assert!(matches!(
        svc.release(&token),
        Err(LockError::NotLockHolder { .. })
    ));
}

#[test]
fn lock_waits_for_the_holder_to_let_go() {
    let svc: Arc<dyn LockService> = Arc::new(memory());
    let a = svc.create_session(TTL).unwrap();
    let b = svc.create_session(TTL).unwrap();
    let ta = svc.try_lock("/l", a, b"a").unwrap().unwrap();
    let waiter = {
        let svc = Arc::clone(&svc);
        thread::spawn(move || {
            let started = Instant::now();
            let token = svc.lock("/l", b, b"b", Duration::from_secs(30)).unwrap();
            (token, started.elapsed())
        })
    };
    thread::sleep(Duration::from_millis(100));
    svc.unlock("/l", a).unwrap();
    let (token, waited) = waiter.join().unwrap();
    let token = token.expect("the waiter should get the lock");
    assert_eq!(token.session, b);
    assert!(token.revision > ta.revision);
    assert!(waited < Duration::from_secs(30));
}

#[test]
fn lock_times_out_while_held() {
    let svc = memory();
    let a = svc.create_session(TTL).unwrap();
    let b = svc.create_session(TTL).unwrap();
    svc.try_lock("/l", a, b"").unwrap().unwrap();
    let started = Instant::now();
    assert_eq!(
        svc.lock("/l", b, b"", Duration::from_millis(150)).unwrap(),
        None
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
}

#[test]
fn lock_fails_when_the_waiting_session_ends() {
    let clock = Arc::new(ManualClock::new());
    let svc: Arc<dyn LockService> = Arc::new(
        EmbeddedLockService::start(EmbeddedConfig::in_memory().with_clock(clock.clone())).unwrap(),
    );
    let holder = svc.create_session(TTL * 10).unwrap();
    let waiter_session = svc.create_session(TTL).unwrap();
    svc.try_lock("/l", holder, b"").unwrap().unwrap();
    let waiter = {
        let svc = Arc::clone(&svc);
        thread::spawn(move || svc.lock("/l", waiter_session, b"", Duration::from_secs(60)))
    };
    thread::sleep(Duration::from_millis(50));
    clock.advance(TTL);
    let result = waiter.join().unwrap();
    assert!(
        matches!(result, Err(LockError::SessionExpired(s)) if s == waiter_session),
        "{result:?}"
    );
}

#[test]
fn racing_try_locks_have_exactly_one_winner() {
    const THREADS: usize = 8;
    let svc: Arc<dyn LockService> = Arc::new(memory());
    for round in 0..20 {
        let path = format!("/race/{round}");
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let svc = Arc::clone(&svc);
                let barrier = Arc::clone(&barrier);
                let path = path.clone();
                thread::spawn(move || {
                    let s = svc.create_session(TTL).unwrap();
                    barrier.wait();
                    svc.try_lock(&path, s, format!("t{i}").as_bytes())
                        .unwrap()
                        .map(|token| (s, token))
                })
            })
            .collect();
        let winners: Vec<_> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        let (session, token) = &winners[0];
        assert_eq!(svc.lock_holder(&path).unwrap().unwrap().session, *session);
        assert!(svc.holds_lock(token).unwrap());
    }
}

// ---------------------------------------------------------------- watches

#[test]
fn watches_see_puts_deletes_and_expiries_under_their_prefix() {
    let (svc, clock) = manual();
    let watcher = svc.watch("/servers/").unwrap();
    let s = svc.create_session(TTL).unwrap();
    let r_put = svc.put_ephemeral("/servers/rs1", b"rs1:9000", s).unwrap();
    svc.put("/root", b"ignored").unwrap();
    svc.put("/servers/rs2", b"rs2:9000").unwrap();
    svc.delete("/servers/rs2").unwrap();
    clock.advance(TTL);
    assert!(!svc.session_alive(s).unwrap());

    let events = watcher.drain().unwrap();
    let summary: Vec<(&str, &str)> = events
        .iter()
        .map(|e| match e {
            WatchEvent::Put { path, .. } => ("put", path.as_str()),
            WatchEvent::Delete { path, .. } => ("delete", path.as_str()),
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("put", "/servers/rs1"),
            ("put", "/servers/rs2"),
            ("delete", "/servers/rs2"),
            ("delete", "/servers/rs1"),
        ]
    );
    let revisions: Vec<u64> = events.iter().map(WatchEvent::revision).collect();
    assert!(revisions.windows(2).all(|w| w[0] < w[1]), "{revisions:?}");
    assert_eq!(revisions[0], r_put);
    match &events[0] {
        WatchEvent::Put { file, .. } => {
            assert_eq!(file.value, b"rs1:9000");
            assert_eq!(file.owner, Some(s));
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn watch_then_list_misses_nothing() {
    let svc = memory();
    svc.put("/servers/a", b"").unwrap();
    let watcher = svc.watch("/servers/").unwrap();
    svc.put("/servers/b", b"").unwrap();
    let listing = svc.list("/servers/").unwrap();
    svc.put("/servers/c", b"").unwrap();
    let newer: Vec<String> = watcher
        .drain()
        .unwrap()
        .into_iter()
        .filter(|e| e.revision() > listing.revision)
        .map(|e| e.path().to_owned())
        .collect();
    assert_eq!(listing.files.len(), 2);
    assert_eq!(newer, ["/servers/c"]);
}

#[test]
fn watches_close_when_the_service_goes_away() {
    let svc = memory();
    let watcher = svc.watch("").unwrap();
    drop(svc);
    assert!(matches!(
        watcher.next_timeout(Duration::from_secs(1)),
        Err(LockError::WatchClosed)
    ));
}

#[test]
fn the_trait_is_object_safe_and_shareable() {
    fn assert_send_sync<T: Send + Sync + ?Sized>() {}
    assert_send_sync::<dyn LockService>();
    let svc: Arc<dyn LockService> = Arc::new(memory());
    let r = svc.put("/x", b"1").unwrap();
    assert_eq!(svc.get("/x").unwrap().unwrap().revision, r);
}
