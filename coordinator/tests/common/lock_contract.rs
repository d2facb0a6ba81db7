//! The `LockService` contract as tests any implementation must pass: sessions, files,
//! transactions, locks with fencing, and watches. `lock_service.rs` runs them on the
//! embedded service (a manual clock makes leases lapse), `lock_etcd.rs` on a real etcd
//! (leases lapse in real time).
//! Must not: rely on one implementation's timing: watch events are awaited, never
//! assumed delivered, and revisions are compared, never assumed to start anywhere.

use std::any::Any;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use tabula_coordinator::lock::{
    CasOutcome, LockError, LockService, SessionId, Txn, TxnOutcome, WatchEvent, Watcher,
};

/// The lease of sessions a test never lets lapse.
pub const LONG: Duration = Duration::from_secs(120);
/// How long an awaited watch event may take.
const EVENT_WAIT: Duration = Duration::from_secs(10);

/// A fresh, empty lock service and how time passes for it.
pub struct Subject {
    pub svc: Arc<dyn LockService>,
    /// The lease of sessions a test lets lapse (what the service grants for it).
    pub short_ttl: Duration,
    pass: Box<dyn Fn(Duration)>,
    /// Whatever must live as long as the service (an etcd process).
    _keep: Option<Box<dyn Any>>,
}

impl Subject {
    /// `pass` lets time go by for the service: a manual clock advanced, or a sleep.
    pub fn new(
        svc: Arc<dyn LockService>,
        short_ttl: Duration,
        pass: Box<dyn Fn(Duration)>,
        keep: Option<Box<dyn Any>>,
    ) -> Self {
        Subject {
            svc,
            short_ttl,
            pass,
            _keep: keep,
        }
    }

    /// Lets `duration` go by.
    pub fn pass(&self, duration: Duration) {
        (self.pass)(duration);
    }

    /// Lets time go by, without keep-alives, until `session` has ended (at most a
    /// minute of it). Sessions with a [`LONG`] lease live on.
    pub fn lapse(&self, session: SessionId) {
        let step = Duration::from_millis(100);
        for _ in 0..600 {
            if !self.svc.session_alive(session).unwrap() {
                return;
            }
            self.pass(step);
        }
        panic!("session {session} did not lapse within a minute");
    }
}

/// Waits for `n` events, then checks that no other one follows at once.
fn next_events(watcher: &Watcher, n: usize) -> Vec<WatchEvent> {
    let mut events = Vec::with_capacity(n);
    while events.len() < n {
        match watcher.next_timeout(EVENT_WAIT).unwrap() {
            Some(event) => events.push(event),
            None => panic!("only {} of {n} events came: {events:?}", events.len()),
        }
    }
    let extra = watcher.next_timeout(Duration::from_millis(200)).unwrap();
    assert_eq!(extra, None, "more events than expected after {events:?}");
    events
}

fn summary(events: &[WatchEvent]) -> Vec<(&'static str, &str)> {
    events
        .iter()
        .map(|e| match e {
            WatchEvent::Put { path, .. } => ("put", path.as_str()),
            WatchEvent::Delete { path, .. } => ("delete", path.as_str()),
        })
        .collect()
}

/// One `#[test]` per contract test, each on a fresh subject from `$subject()`.
macro_rules! contract_tests {
    ($subject:path) => {
        $crate::common::lock_contract::contract_tests!(@each $subject;
            closed_sessions_are_dead_and_ids_are_distinct,
            session_ttl_must_be_positive_and_bounded,
            keep_alive_keeps_a_session_past_its_ttl,
            revisions_increase_across_the_store_and_create_revision_sticks,
            compare_and_put_creates_if_absent_and_reports_conflicts,
            compare_and_delete_needs_the_current_revision,
            deleting_an_absent_file_consumes_no_revision,
            list_is_sorted_prefix_bounded_and_carries_the_revision,
            a_transaction_is_all_or_nothing_at_one_revision,
            malformed_requests_are_rejected,
            ephemeral_files_vanish_with_their_session,
            a_plain_put_over_an_ephemeral_file_makes_it_persistent,
            ephemeral_writes_need_a_live_session,
            a_lock_is_exclusive_and_passes_on_after_unlock_with_a_higher_token,
            try_lock_by_the_holder_returns_its_token,
            locks_are_released_when_the_session_closes_or_lapses,
            a_persistent_file_cannot_be_locked,
            a_dead_session_cannot_lock,
            fenced_writes_fail_once_the_lock_passed_to_someone_else,
            deleting_a_lock_file_breaks_the_lock,
            release_drops_exactly_the_named_lock,
            lock_waits_for_the_holder_to_let_go,
            lock_times_out_while_held,
            lock_fails_when_the_waiting_session_ends,
            racing_try_locks_have_exactly_one_winner,
            watches_see_puts_deletes_and_expiries_under_their_prefix,
            watch_then_list_misses_nothing,
            watches_close_when_the_service_goes_away,
        );
    };
    (@each $subject:path; $($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                $crate::common::lock_contract::$name($subject());
            }
        )*
    };
}
pub(crate) use contract_tests;

// ---------------------------------------------------------------- sessions

pub fn closed_sessions_are_dead_and_ids_are_distinct(s: Subject) {
    let svc = &s.svc;
    let a = svc.create_session(LONG).unwrap();
    let b = svc.create_session(LONG).unwrap();
    assert_ne!(a, b);
    assert_ne!(a, SessionId(0));
    svc.close_session(a).unwrap();
    assert!(!svc.session_alive(a).unwrap());
    assert!(svc.session_alive(b).unwrap());
    let renewed = svc.keep_alive(a);
    assert!(
        matches!(renewed, Err(LockError::SessionExpired(_))),
        "{renewed:?}"
    );
    // Closing an ended session is harmless.
    svc.close_session(a).unwrap();
}

pub fn session_ttl_must_be_positive_and_bounded(s: Subject) {
    assert!(matches!(
        s.svc.create_session(Duration::ZERO),
        Err(LockError::InvalidTtl { .. })
    ));
    assert!(matches!(
        s.svc.create_session(Duration::from_secs(10 * 24 * 3600)),
        Err(LockError::InvalidTtl { .. })
    ));
}

pub fn keep_alive_keeps_a_session_past_its_ttl(s: Subject) {
    let svc = &s.svc;
    let kept = svc.create_session(s.short_ttl).unwrap();
    let left = svc.create_session(s.short_ttl).unwrap();
    svc.put_ephemeral("/kept", b"", kept).unwrap();
    for _ in 0..6 {
        s.pass(s.short_ttl / 2);
        svc.keep_alive(kept).unwrap();
    }
    s.lapse(left);
    assert!(svc.session_alive(kept).unwrap());
    assert!(svc.get("/kept").unwrap().is_some());
}

// ---------------------------------------------------------------- files

pub fn revisions_increase_across_the_store_and_create_revision_sticks(s: Subject) {
    let svc = &s.svc;
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

pub fn compare_and_put_creates_if_absent_and_reports_conflicts(s: Subject) {
    let svc = &s.svc;
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

pub fn compare_and_delete_needs_the_current_revision(s: Subject) {
    let svc = &s.svc;
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

pub fn deleting_an_absent_file_consumes_no_revision(s: Subject) {
    let svc = &s.svc;
    let r = svc.put("/a", b"").unwrap();
    svc.delete("/ghost").unwrap();
    assert_eq!(svc.list("").unwrap().revision, r);
    svc.delete("/a").unwrap();
    assert_eq!(svc.list("").unwrap().revision, r + 1);
    assert_eq!(svc.get("/a").unwrap(), None);
}

pub fn list_is_sorted_prefix_bounded_and_carries_the_revision(s: Subject) {
    let svc = &s.svc;
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
    // Longer than one page of a remote implementation's reads.
    for i in 0..1500 {
        svc.put(&format!("/many/{i:05}"), b"").unwrap();
    }
    let many = svc.list("/many/").unwrap();
    assert_eq!(many.files.len(), 1500);
    assert!(many.files.windows(2).all(|w| w[0].0 < w[1].0));
}

pub fn a_transaction_is_all_or_nothing_at_one_revision(s: Subject) {
    let svc = &s.svc;
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

pub fn malformed_requests_are_rejected(s: Subject) {
    let svc = &s.svc;
    let before = svc.list("").unwrap().revision;
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
        svc.put("/nul\0", b""),
        Err(LockError::InvalidPath { .. })
    ));
    assert!(matches!(
        svc.put("/big", &vec![0u8; 2 << 20]),
        Err(LockError::TooLarge { .. })
    ));
    assert_eq!(svc.list("").unwrap().revision, before);
}

pub fn ephemeral_files_vanish_with_their_session(s: Subject) {
    let svc = &s.svc;
    let closing = svc.create_session(LONG).unwrap();
    let lapsing = svc.create_session(s.short_ttl).unwrap();
    svc.put_ephemeral("/e/closing", b"x", closing).unwrap();
    svc.put_ephemeral("/e/lapsing", b"y", lapsing).unwrap();
    svc.put("/e/persistent", b"z").unwrap();
    assert_eq!(svc.get("/e/closing").unwrap().unwrap().owner, Some(closing));

    svc.close_session(closing).unwrap();
    assert_eq!(svc.get("/e/closing").unwrap(), None);
    assert!(svc.get("/e/lapsing").unwrap().is_some());

    s.lapse(lapsing);
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

pub fn a_plain_put_over_an_ephemeral_file_makes_it_persistent(s: Subject) {
    let svc = &s.svc;
    let session = svc.create_session(LONG).unwrap();
    svc.put_ephemeral("/f", b"eph", session).unwrap();
    svc.put("/f", b"kept").unwrap();
    svc.close_session(session).unwrap();
    let f = svc.get("/f").unwrap().unwrap();
    assert_eq!((f.value.as_slice(), f.owner), (&b"kept"[..], None));
}

pub fn ephemeral_writes_need_a_live_session(s: Subject) {
    let svc = &s.svc;
    let session = svc.create_session(LONG).unwrap();
    svc.close_session(session).unwrap();
    assert!(matches!(
        svc.put_ephemeral("/e", b"", session),
        Err(LockError::SessionExpired(id)) if id == session
    ));
    assert!(matches!(
        svc.put_ephemeral("/e", b"", SessionId(0)),
        Err(LockError::SessionExpired(_))
    ));
    assert_eq!(svc.get("/e").unwrap(), None);
}

// ---------------------------------------------------------------- locks

pub fn a_lock_is_exclusive_and_passes_on_after_unlock_with_a_higher_token(s: Subject) {
    let svc = &s.svc;
    let a = svc.create_session(LONG).unwrap();
    let b = svc.create_session(LONG).unwrap();
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

pub fn try_lock_by_the_holder_returns_its_token(s: Subject) {
    let svc = &s.svc;
    let a = svc.create_session(LONG).unwrap();
    let first = svc.try_lock("/l", a, b"i").unwrap().unwrap();
    let again = svc.try_lock("/l", a, b"i").unwrap().unwrap();
    assert_eq!(first, again);
}

pub fn locks_are_released_when_the_session_closes_or_lapses(s: Subject) {
    let svc = &s.svc;
    let a = svc.create_session(s.short_ttl).unwrap();
    let b = svc.create_session(LONG).unwrap();
    let ta = svc.try_lock("/servers/rs1", a, b"").unwrap().unwrap();
    assert_eq!(svc.try_lock("/servers/rs1", b, b"").unwrap(), None);
    s.lapse(a);
    let tb = svc.try_lock("/servers/rs1", b, b"").unwrap().unwrap();
    assert!(tb.revision > ta.revision);

    let c = svc.create_session(LONG).unwrap();
    assert_eq!(svc.try_lock("/servers/rs1", c, b"").unwrap(), None);
    svc.close_session(b).unwrap();
    assert!(svc.try_lock("/servers/rs1", c, b"").unwrap().is_some());
}

pub fn a_persistent_file_cannot_be_locked(s: Subject) {
    let svc = &s.svc;
    let session = svc.create_session(LONG).unwrap();
    svc.put("/root", b"rs1").unwrap();
    assert!(matches!(
        svc.try_lock("/root", session, b""),
        Err(LockError::NotLockable { .. })
    ));
    assert_eq!(svc.lock_holder("/root").unwrap(), None);
}

pub fn a_dead_session_cannot_lock(s: Subject) {
    let svc = &s.svc;
    let session = svc.create_session(LONG).unwrap();
    svc.close_session(session).unwrap();
    assert!(matches!(
        svc.try_lock("/l", session, b""),
        Err(LockError::SessionExpired(_))
    ));
}

pub fn fenced_writes_fail_once_the_lock_passed_to_someone_else(s: Subject) {
    let svc = &s.svc;
    let old = svc.create_session(s.short_ttl).unwrap();
    let t_old = svc.try_lock("/coordinator", old, b"old").unwrap().unwrap();
    let fenced = |token, value: &'static [u8]| Txn::new().fenced_by(token).put("/root", value);
    assert!(matches!(
        svc.commit(&fenced(&t_old, b"by-old")).unwrap(),
        TxnOutcome::Committed { .. }
    ));

    // The old holder stalls; its lease lapses and a new coordinator takes over.
    s.lapse(old);
    let new = svc.create_session(LONG).unwrap();
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

pub fn deleting_a_lock_file_breaks_the_lock(s: Subject) {
    let svc = &s.svc;
    let server = svc.create_session(LONG).unwrap();
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

pub fn release_drops_exactly_the_named_lock(s: Subject) {
    let svc = &s.svc;
    let session = svc.create_session(LONG).unwrap();
    let token = svc.try_lock("/l", session, b"").unwrap().unwrap();
    svc.release(&token).unwrap();
    assert_eq!(svc.get("/l").unwrap(), None);
    assert!(matches!(
        svc.release(&token),
        Err(LockError::NotLockHolder { .. })
    ));
}

pub fn lock_waits_for_the_holder_to_let_go(s: Subject) {
    let svc = &s.svc;
    let a = svc.create_session(LONG).unwrap();
    let b = svc.create_session(LONG).unwrap();
    let ta = svc.try_lock("/l", a, b"a").unwrap().unwrap();
    let waiter = {
        let svc = Arc::clone(svc);
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

pub fn lock_times_out_while_held(s: Subject) {
    let svc = &s.svc;
    let a = svc.create_session(LONG).unwrap();
    let b = svc.create_session(LONG).unwrap();
    svc.try_lock("/l", a, b"").unwrap().unwrap();
    let started = Instant::now();
    assert_eq!(
        svc.lock("/l", b, b"", Duration::from_millis(150)).unwrap(),
        None
    );
    assert!(started.elapsed() >= Duration::from_millis(150));
}

pub fn lock_fails_when_the_waiting_session_ends(s: Subject) {
    let svc = &s.svc;
    let holder = svc.create_session(LONG).unwrap();
    let waiter_session = svc.create_session(s.short_ttl).unwrap();
    svc.try_lock("/l", holder, b"").unwrap().unwrap();
    let waiter = {
        let svc = Arc::clone(svc);
        thread::spawn(move || svc.lock("/l", waiter_session, b"", Duration::from_secs(60)))
    };
    thread::sleep(Duration::from_millis(50));
    s.lapse(waiter_session);
    let result = waiter.join().unwrap();
    assert!(
        matches!(result, Err(LockError::SessionExpired(id)) if id == waiter_session),
        "{result:?}"
    );
}

pub fn racing_try_locks_have_exactly_one_winner(s: Subject) {
    const THREADS: usize = 8;
    for round in 0..20 {
        let path = format!("/race/{round}");
        let barrier = Arc::new(Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|i| {
                let svc = Arc::clone(&s.svc);
                let barrier = Arc::clone(&barrier);
                let path = path.clone();
                thread::spawn(move || {
                    let session = svc.create_session(LONG).unwrap();
                    barrier.wait();
                    svc.try_lock(&path, session, format!("t{i}").as_bytes())
                        .unwrap()
                        .map(|token| (session, token))
                })
            })
            .collect();
        let winners: Vec<_> = handles
            .into_iter()
            .filter_map(|h| h.join().unwrap())
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {winners:?}");
        let (session, token) = &winners[0];
        assert_eq!(s.svc.lock_holder(&path).unwrap().unwrap().session, *session);
        assert!(s.svc.holds_lock(token).unwrap());
    }
}

// ---------------------------------------------------------------- watches

pub fn watches_see_puts_deletes_and_expiries_under_their_prefix(s: Subject) {
    let svc = &s.svc;
    let watcher = svc.watch("/servers/").unwrap();
    let session = svc.create_session(s.short_ttl).unwrap();
    let r_put = svc
        .put_ephemeral("/servers/rs1", b"rs1:9000", session)
        .unwrap();
    svc.put("/root", b"ignored").unwrap();
    svc.put("/servers/rs2", b"rs2:9000").unwrap();
    svc.delete("/servers/rs2").unwrap();
    s.lapse(session);

    let events = next_events(&watcher, 4);
    assert_eq!(
        summary(&events),
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
            assert_eq!(file.owner, Some(session));
        }
        other => panic!("{other:?}"),
    }
}

pub fn watch_then_list_misses_nothing(s: Subject) {
    let svc = &s.svc;
    svc.put("/servers/a", b"").unwrap();
    let watcher = svc.watch("/servers/").unwrap();
    svc.put("/servers/b", b"").unwrap();
    let listing = svc.list("/servers/").unwrap();
    svc.put("/servers/c", b"").unwrap();
    let newer: Vec<String> = next_events(&watcher, 2)
        .into_iter()
        .filter(|e| e.revision() > listing.revision)
        .map(|e| e.path().to_owned())
        .collect();
    assert_eq!(listing.files.len(), 2);
    assert_eq!(newer, ["/servers/c"]);
}

pub fn watches_close_when_the_service_goes_away(s: Subject) {
    let Subject { svc, _keep, .. } = s;
    let watcher = svc.watch("").unwrap();
    drop(svc);
    assert!(matches!(
        watcher.next_timeout(Duration::from_secs(5)),
        Err(LockError::WatchClosed)
    ));
    drop(_keep);
}
