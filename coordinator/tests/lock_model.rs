//! Property tests: files, compare-and-write and transactions behave exactly like a
//! sorted map with one revision counter: the embedded service in memory and across
//! reopens, and the etcd service (a real etcd) across reconnects.

#[path = "common/etcd.rs"]
#[allow(dead_code)]
mod etcd;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};

use etcd::EtcdServer;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tabula_coordinator::lock::{
    CasOutcome, EmbeddedLockService, LockService, Txn, TxnOutcome, Versioned,
};

/// The reference: path -> (value, create revision, mod revision), plus the counter.
#[derive(Debug, Default, Clone)]
struct Model {
    files: BTreeMap<String, (Vec<u8>, u64, u64)>,
    revision: u64,
}

impl Model {
    fn get(&self, path: &str) -> Option<Versioned> {
        self.files
            .get(path)
            .map(|(value, create, modified)| Versioned {
                value: value.clone(),
                revision: *modified,
                create_revision: *create,
                owner: None,
            })
    }

    /// Applies puts and deletes at one new revision (none if nothing changes).
    fn write(&mut self, puts: &[(String, Vec<u8>)], deletes: &[String]) -> u64 {
        let changes = !puts.is_empty() || deletes.iter().any(|p| self.files.contains_key(p));
        if !changes {
            return self.revision;
        }
        self.revision += 1;
        for (path, value) in puts {
            let create = self.files.get(path).map_or(self.revision, |f| f.1);
            self.files
                .insert(path.clone(), (value.clone(), create, self.revision));
        }
        for path in deletes {
            self.files.remove(path);
        }
        self.revision
    }
}

#[derive(Debug, Clone)]
enum Action {
    Put(usize, Vec<u8>),
    Delete(usize),
    /// Compare-and-put against: 0 = the current revision, 1 = a wrong one, 2 = absent.
    CasPut(usize, u8, Vec<u8>),
    /// Compare-and-delete against the current revision (`true`) or a wrong one.
    CasDelete(usize, bool),
    /// Move a value from one file to another if the source is at its current revision.
    Move(usize, usize),
    Get(usize),
    List(usize),
    Reopen,
}

const PATHS: [&str; 6] = ["/a", "/a/b", "/a/c", "/b", "/servers/x", "/servers/y"];
const PREFIXES: [&str; 5] = ["", "/a", "/a/", "/servers/", "/z"];

fn path(i: usize) -> String {
    PATHS[i % PATHS.len()].to_owned()
}

fn action(with_reopen: bool) -> BoxedStrategy<Action> {
    let value = proptest::collection::vec(any::<u8>(), 0..8);
    let base = prop_oneof![
        4 => (any::<usize>(), value.clone()).prop_map(|(p, v)| Action::Put(p, v)),
        2 => any::<usize>().prop_map(Action::Delete),
        4 => (any::<usize>(), 0u8..3, value).prop_map(|(p, e, v)| Action::CasPut(p, e, v)),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(p, c)| Action::CasDelete(p, c)),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Action::Move(a, b)),
        2 => any::<usize>().prop_map(Action::Get),
        2 => any::<usize>().prop_map(Action::List),
    ];
    if with_reopen {
        prop_oneof![9 => base, 1 => Just(Action::Reopen)].boxed()
    } else {
        base.boxed()
    }
}

/// Runs `actions` against the service and the model, comparing every answer. The
/// model's counter starts at the service's revision (etcd's revision is shared by
/// every namespace; nothing else writes while a case runs).
fn check<L: LockService>(
    actions: &[Action],
    mut reopen: impl FnMut() -> Option<L>,
) -> Result<(), TestCaseError> {
    let mut svc = reopen().ok_or_else(|| TestCaseError::fail("cannot open"))?;
    let mut model = Model {
        revision: svc.list("").unwrap().revision,
        ..Model::default()
    };
    for action in actions {
        match action {
            Action::Put(p, v) => {
                let got = svc.put(&path(*p), v).unwrap();
                prop_assert_eq!(got, model.write(&[(path(*p), v.clone())], &[]));
            }
            Action::Delete(p) => {
                svc.delete(&path(*p)).unwrap();
                model.write(&[], &[path(*p)]);
            }
            Action::CasPut(p, expectation, v) => {
                let current = model.get(&path(*p));
                let expected = match expectation {
                    0 => current.as_ref().map(|f| f.revision),
                    1 => Some(current.as_ref().map_or(1, |f| f.revision + 1)),
                    _ => None,
                };
                let got = svc.compare_and_put(&path(*p), expected, v).unwrap();
                let holds = expected == current.as_ref().map(|f| f.revision);
                let want = if holds {
                    CasOutcome::Applied {
                        revision: model.write(&[(path(*p), v.clone())], &[]),
                    }
                } else {
                    CasOutcome::Conflict { current }
                };
                prop_assert_eq!(got, want);
            }
            Action::CasDelete(p, correct) => {
                let current = model.get(&path(*p));
                let revision = current.as_ref().map_or(1, |f| f.revision) + u64::from(!*correct);
                let got = svc.compare_and_delete(&path(*p), revision).unwrap();
                let want = if current.as_ref().map(|f| f.revision) == Some(revision) {
                    CasOutcome::Applied {
                        revision: model.write(&[], &[path(*p)]),
                    }
                } else {
                    CasOutcome::Conflict { current }
                };
                prop_assert_eq!(got, want);
            }
            Action::Move(from, to) => {
                let (from, to) = (path(*from), path(*to));
                if from == to {
                    continue;
                }
                let source = model.get(&from);
                let txn = match &source {
                    Some(f) => Txn::new()
                        .require_revision(from.clone(), f.revision)
                        .put(to.clone(), f.value.clone())
                        .delete(from.clone()),
                    None => Txn::new()
                        .require_revision(from.clone(), 1)
                        .delete(from.clone()),
                };
                let got = svc.commit(&txn).unwrap();
                let want = match source {
                    Some(f) => TxnOutcome::Committed {
                        revision: model.write(&[(to, f.value)], &[from]),
                    },
                    None => TxnOutcome::Failed {
                        current: vec![None],
                    },
                };
                prop_assert_eq!(got, want);
            }
            Action::Get(p) => {
                prop_assert_eq!(svc.get(&path(*p)).unwrap(), model.get(&path(*p)));
            }
            Action::List(i) => {
                let prefix = PREFIXES[i % PREFIXES.len()];
                let listing = svc.list(prefix).unwrap();
                let want: Vec<(String, Versioned)> = model
                    .files
                    .keys()
                    .filter(|p| p.starts_with(prefix))
                    .map(|p| (p.clone(), model.get(p).unwrap()))
                    .collect();
                prop_assert_eq!(listing.files, want);
                prop_assert_eq!(listing.revision, model.revision);
            }
            Action::Reopen => {
                drop(svc);
                svc = reopen().ok_or_else(|| TestCaseError::fail("cannot reopen"))?;
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn files_match_a_sorted_map_in_memory(actions in proptest::collection::vec(action(false), 1..60)) {
        check(&actions, || EmbeddedLockService::in_memory().ok())?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn files_match_a_sorted_map_across_reopens(actions in proptest::collection::vec(action(true), 1..30)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_path_buf();
        check(&actions, move || EmbeddedLockService::open(&path).ok())?;
    }
}

/// The same model check on etcd: each case in a namespace of its own on one etcd,
/// `Reopen` connecting a new client.
#[test]
fn etcd_files_match_a_sorted_map_across_reconnects() {
    let etcd = EtcdServer::start();
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse::<u32>().ok())
        .map_or(24, |n| n.min(64));
    let mut runner = TestRunner::new(Config::with_cases(cases));
    let case = AtomicU32::new(0);
    let result = runner.run(&proptest::collection::vec(action(true), 1..40), |actions| {
        let namespace = format!("/case{}", case.fetch_add(1, Ordering::Relaxed));
        check(&actions, || {
            tabula_coordinator::lock::EtcdLockService::connect(etcd.config(&namespace)).ok()
        })
    });
    if let Err(failure) = result {
        panic!("{failure}");
    }
}
