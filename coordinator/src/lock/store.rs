//! The embedded service's file table and revision counter, and how a transaction turns
//! into changes to it.
//!
//! Owns: the in-memory files, the revision counter, comparison evaluation, planning
//! writes into [`Mutation`]s, applying and reverting them. Must not: do I/O, track
//! sessions, or publish events.

use std::collections::BTreeMap;
use std::ops::Bound;

use super::error::{LockError, LockResult};
use super::txn::{Compare, Op};
use super::types::{Listing, SessionId, Versioned};

/// One file's change: its state before and after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mutation {
    pub(crate) path: String,
    pub(crate) before: Option<Versioned>,
    pub(crate) after: Option<Versioned>,
}

/// Changes that commit together at one revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) revision: u64,
    pub(crate) mutations: Vec<Mutation>,
}

/// Files by path, plus the last revision issued.
#[derive(Debug, Default)]
pub(crate) struct Store {
    files: BTreeMap<String, Versioned>,
    revision: u64,
}

impl Store {
    /// A store holding `files` (persistent ones) at `revision`.
    pub(crate) fn restore(files: BTreeMap<String, Versioned>, revision: u64) -> Self {
        Self { files, revision }
    }

    /// The last revision issued.
    pub(crate) fn revision(&self) -> u64 {
        self.revision
    }

    /// The file at `path`.
    pub(crate) fn get(&self, path: &str) -> Option<&Versioned> {
        self.files.get(path)
    }

    /// Files whose path starts with `prefix`, sorted, with the current revision.
    pub(crate) fn list(&self, prefix: &str) -> Listing {
        let files = self
            .files
            .range::<str, _>((Bound::Included(prefix), Bound::Unbounded))
            .take_while(|(path, _)| path.starts_with(prefix))
            .map(|(path, file)| (path.clone(), file.clone()))
            .collect();
        Listing {
            revision: self.revision,
            files,
        }
    }

    /// Persistent files (those without an owner), sorted by path.
    pub(crate) fn persistent_files(&self) -> impl Iterator<Item = (&str, &Versioned)> {
        self.files
            .iter()
            .filter(|(_, file)| file.owner.is_none())
            .map(|(path, file)| (path.as_str(), file))
    }

    /// `Ok` when every comparison holds; otherwise the compared files' current states.
    pub(crate) fn evaluate(&self, compares: &[Compare]) -> Result<(), Vec<Option<Versioned>>> {
        if compares
            .iter()
            .all(|compare| compare.holds(self.files.get(compare.path())))
        {
            return Ok(());
        }
        Err(compares
            .iter()
            .map(|compare| self.files.get(compare.path()).cloned())
            .collect())
    }

    /// The changes `ops` make at the next revision. Puts owned by a session that
    /// `is_alive` rejects fail the whole plan. Deletes of absent files are no change.
    pub(crate) fn plan(
        &self,
        ops: &[Op],
        is_alive: impl Fn(SessionId) -> bool,
    ) -> LockResult<Plan> {
        let revision = self.next_revision()?;
        let mut mutations = Vec::with_capacity(ops.len());
        for op in ops {
            let before = self.files.get(op.path()).cloned();
            match op {
                Op::Put { path, value, owner } => {
                    if let Some(owner) = *owner {
                        if !is_alive(owner) {
                            return Err(LockError::SessionExpired(owner));
                        }
                    }
                    let create_revision = before.as_ref().map_or(revision, |b| b.create_revision);
                    mutations.push(Mutation {
                        path: path.clone(),
                        before,
                        after: Some(Versioned {
                            value: value.clone(),
                            revision,
                            create_revision,
                            owner: *owner,
                        }),
                    });
                }
                Op::Delete { path } => {
                    if before.is_some() {
                        mutations.push(Mutation {
                            path: path.clone(),
                            before,
                            after: None,
                        });
                    }
                }
            }
        }
        Ok(Plan {
            revision,
            mutations,
        })
    }

    /// A plan deleting `paths` (those present) at the next revision.
    pub(crate) fn plan_deletes<'a>(
        &self,
        paths: impl IntoIterator<Item = &'a String>,
    ) -> LockResult<Plan> {
        let ops: Vec<Op> = paths
            .into_iter()
            .map(|path| Op::Delete { path: path.clone() })
            .collect();
        self.plan(&ops, |_| true)
    }

    /// Applies a plan made against the current state. An empty plan changes nothing.
    pub(crate) fn apply(&mut self, plan: &Plan) {
        if plan.mutations.is_empty() {
            return;
        }
        for mutation in &plan.mutations {
            self.set(&mutation.path, mutation.after.clone());
        }
        self.revision = plan.revision;
    }

    /// Undoes an applied plan, restoring `previous_revision`.
    pub(crate) fn revert(&mut self, plan: &Plan, previous_revision: u64) {
        for mutation in plan.mutations.iter().rev() {
            self.set(&mutation.path, mutation.before.clone());
        }
        self.revision = previous_revision;
    }

    fn set(&mut self, path: &str, file: Option<Versioned>) {
        match file {
            Some(file) => {
                self.files.insert(path.to_owned(), file);
            }
            None => {
                self.files.remove(path);
            }
        }
    }

    fn next_revision(&self) -> LockResult<u64> {
        self.revision
            .checked_add(1)
            .ok_or(LockError::Exhausted("revisions"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(path: &str, value: &[u8]) -> Op {
        Op::Put {
            path: path.into(),
            value: value.to_vec(),
            owner: None,
        }
    }

    #[test]
    fn plan_apply_revert_round_trip() {
        let mut store = Store::default();
        let plan = store
            .plan(&[put("/a", b"1"), put("/b", b"2")], |_| true)
            .unwrap();
        assert_eq!(plan.revision, 1);
        store.apply(&plan);
        assert_eq!(store.revision(), 1);
        assert_eq!(store.get("/a").map(|f| f.create_revision), Some(1));

        let plan = store
            .plan(&[put("/a", b"3"), Op::Delete { path: "/b".into() }], |_| {
                true
            })
            .unwrap();
        store.apply(&plan);
        let a = store.get("/a").unwrap();
        assert_eq!(
            (a.revision, a.create_revision, a.value.as_slice()),
            (2, 1, &b"3"[..])
        );
        assert!(store.get("/b").is_none());

        store.revert(&plan, 1);
        assert_eq!(store.revision(), 1);
        assert_eq!(
            store.get("/a").map(|f| f.value.clone()),
            Some(b"1".to_vec())
        );
        assert!(store.get("/b").is_some());
    }

    #[test]
    fn deleting_absent_files_is_no_change() {
        let store = Store::default();
        let plan = store
            .plan(&[Op::Delete { path: "/x".into() }], |_| true)
            .unwrap();
        assert!(plan.mutations.is_empty());
    }

    #[test]
    fn puts_owned_by_dead_sessions_fail() {
        let store = Store::default();
        let op = Op::Put {
            path: "/e".into(),
            value: Vec::new(),
            owner: Some(SessionId(9)),
        };
        assert!(matches!(
            store.plan(&[op], |_| false),
            Err(LockError::SessionExpired(SessionId(9)))
        ));
    }

    #[test]
    fn list_is_prefix_bounded_and_sorted() {
        let mut store = Store::default();
        let plan = store
            .plan(
                &[
                    put("/s/b", b""),
                    put("/s/a", b""),
                    put("/t", b""),
                    put("/s", b""),
                ],
                |_| true,
            )
            .unwrap();
        store.apply(&plan);
        let paths: Vec<_> = store
            .list("/s/")
            .files
            .into_iter()
            .map(|(p, _)| p)
            .collect();
        assert_eq!(paths, vec!["/s/a".to_string(), "/s/b".to_string()]);
        assert_eq!(store.list("").files.len(), 4);
    }
}
