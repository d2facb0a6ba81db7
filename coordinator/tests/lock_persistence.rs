//! Durability of the embedded lock service: what survives a reopen, what does not,
//! how a damaged state is reported, and what happens when a write cannot be made
//! durable.

use std::fs;
use std::time::Duration;

use tabula_coordinator::lock::{
    EmbeddedLockService, LockError, LockService, Txn, TxnOutcome, STATE_FILE,
};

const TTL: Duration = Duration::from_secs(30);

#[test]
fn reopen_keeps_persistent_files_and_drops_sessions_locks_and_ephemeral_files() {
    let dir = tempfile::tempdir().unwrap();
    let (old_session, last_revision, root) = {
        let svc = EmbeddedLockService::open(dir.path()).unwrap();
        let s = svc.create_session(TTL).unwrap();
        svc.put("/root", b"rs1:9000").unwrap();
        svc.put("/tables/t1", b"schema-1").unwrap();
        svc.put("/tables/t1", b"schema-2").unwrap();
        svc.put("/gone", b"").unwrap();
        svc.delete("/gone").unwrap();
        svc.try_lock("/coordinator", s, b"me").unwrap().unwrap();
        let last = svc.put_ephemeral("/servers/rs1", b"rs1", s).unwrap();
        (s, last, svc.get("/root").unwrap().unwrap())
    };

    let svc = EmbeddedLockService::open(dir.path()).unwrap();
    let listing = svc.list("").unwrap();
    let paths: Vec<&str> = listing.files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["/root", "/tables/t1"]);
    assert_eq!(svc.get("/root").unwrap().unwrap(), root);
    let t1 = svc.get("/tables/t1").unwrap().unwrap();
    assert_eq!(t1.value, b"schema-2");
    assert!(t1.create_revision < t1.revision);
    // The revision counter continues past everything issued before, ephemeral writes
    // included.
    assert_eq!(listing.revision, last_revision);
    assert!(svc.put("/next", b"").unwrap() > last_revision);

    // Old sessions are ended; new ones never reuse their ids; the lock is free.
    assert!(!svc.session_alive(old_session).unwrap());
    assert!(matches!(
        svc.keep_alive(old_session),
        Err(LockError::SessionExpired(_))
    ));
    let fresh = svc.create_session(TTL).unwrap();
    assert_ne!(fresh, old_session);
    assert_eq!(svc.lock_holder("/coordinator").unwrap(), None);
    let token = svc.try_lock("/coordinator", fresh, b"me").unwrap().unwrap();
    assert!(token.revision > last_revision);
}

#[test]
fn revisions_stay_monotonic_over_many_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut last = 0;
    let mut sessions = Vec::new();
    for round in 0..5u8 {
        let svc = EmbeddedLockService::open(dir.path()).unwrap();
        let s = svc.create_session(TTL).unwrap();
        assert!(!sessions.contains(&s));
        sessions.push(s);
        let r = svc.put("/counter", &[round]).unwrap();
        assert!(r > last, "round {round}: {r} <= {last}");
        last = r;
    }
    let svc = EmbeddedLockService::open(dir.path()).unwrap();
    assert_eq!(svc.get("/counter").unwrap().unwrap().value, [4]);
}

#[test]
fn an_empty_directory_opens_as_an_empty_store() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("lock");
    let svc = EmbeddedLockService::open(&nested).unwrap();
    assert_eq!(svc.list("").unwrap().files.len(), 0);
    assert!(nested.join(STATE_FILE).exists());
}

fn written_state() -> (tempfile::TempDir, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    {
        let svc = EmbeddedLockService::open(dir.path()).unwrap();
        svc.put("/root", b"rs1:9000").unwrap();
        svc.put("/tables/t1", b"schema").unwrap();
    }
    let bytes = fs::read(dir.path().join(STATE_FILE)).unwrap();
    (dir, bytes)
}

fn assert_corrupt(dir: &tempfile::TempDir) {
    match EmbeddedLockService::open(dir.path()) {
        Err(LockError::Corrupt { path, .. }) => assert!(path.ends_with(STATE_FILE)),
        Err(other) => panic!("expected Corrupt, got {other}"),
        Ok(_) => panic!("a damaged state opened"),
    }
}

#[test]
fn a_flipped_byte_in_the_state_is_reported() {
    let (dir, bytes) = written_state();
    for index in [0, 10, 30, bytes.len() / 2, bytes.len() - 1] {
        let mut damaged = bytes.clone();
        damaged[index] ^= 0x01;
        fs::write(dir.path().join(STATE_FILE), &damaged).unwrap();
        assert_corrupt(&dir);
    }
}

#[test]
fn a_truncated_empty_or_foreign_state_is_reported() {
    let (dir, bytes) = written_state();
    for damaged in [
        bytes[..bytes.len() - 1].to_vec(),
        bytes[..bytes.len() / 2].to_vec(),
        Vec::new(),
        b"not a lock service state at all".to_vec(),
    ] {
        fs::write(dir.path().join(STATE_FILE), &damaged).unwrap();
        assert_corrupt(&dir);
    }
    // The damaged file is left alone for inspection.
    assert_eq!(
        fs::read(dir.path().join(STATE_FILE)).unwrap(),
        b"not a lock service state at all"
    );
}

#[test]
fn a_leftover_temporary_file_is_ignored() {
    let (dir, _) = written_state();
    fs::write(dir.path().join("STATE.tmp"), b"torn write").unwrap();
    let svc = EmbeddedLockService::open(dir.path()).unwrap();
    assert_eq!(svc.get("/root").unwrap().unwrap().value, b"rs1:9000");
}

#[test]
fn a_failed_durable_write_takes_the_service_out_of_service() {
    let dir = tempfile::tempdir().unwrap();
    let state_dir = dir.path().join("lock");
    let svc = EmbeddedLockService::open(&state_dir).unwrap();
    let s = svc.create_session(TTL).unwrap();
    let r = svc.put("/root", b"before").unwrap();
    let watcher = svc.watch("").unwrap();
    fs::remove_dir_all(&state_dir).unwrap();

    assert!(matches!(
        svc.put("/root", b"after"),
        Err(LockError::Io { .. })
    ));
    // Nothing is served from memory any more; watchers are told.
    assert!(matches!(svc.get("/root"), Err(LockError::Poisoned(_))));
    assert!(matches!(svc.keep_alive(s), Err(LockError::Poisoned(_))));
    assert!(matches!(
        svc.commit(&Txn::new().require_revision("/root", r)),
        Err(LockError::Poisoned(_))
    ));
    assert!(matches!(watcher.drain(), Err(LockError::WatchClosed)));
}

#[test]
fn writes_are_on_disk_when_the_call_returns() {
    let dir = tempfile::tempdir().unwrap();
    let svc = EmbeddedLockService::open(dir.path()).unwrap();
    let TxnOutcome::Committed { revision } = svc
        .commit(&Txn::new().require_absent("/a").put("/a", b"1"))
        .unwrap()
    else {
        panic!("create should commit");
    };
    // A second service reading the same directory (as after a crash) sees the write.
    let bytes = fs::read(dir.path().join(STATE_FILE)).unwrap();
    assert!(bytes.windows(2).any(|w| w == b"/a"));
    drop(svc);
    let reopened = EmbeddedLockService::open(dir.path()).unwrap();
    assert_eq!(reopened.get("/a").unwrap().unwrap().revision, revision);
}
