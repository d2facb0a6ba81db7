//! Transactions: a list of comparisons and a list of writes applied atomically when
//! every comparison holds (the shape of an etcd `Txn` whose failure branch reads the
//! compared files back).
//!
//! Owns: [`Txn`], [`Compare`], [`Op`], [`TxnOutcome`] and the rules a transaction must
//! meet before any implementation runs it. Must not: apply anything.

use std::collections::BTreeSet;

use super::error::{LockError, LockResult};
use super::types::{validate_path, LockToken, SessionId, Versioned, MAX_TXN_OPS, MAX_WRITE_BYTES};

/// A condition on one file, checked atomically with the writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compare {
    /// The file exists and was last written at exactly `revision`.
    /// (etcd: `mod_revision(path) == revision`.)
    Revision { path: String, revision: u64 },
    /// No file exists at `path`. (etcd: `create_revision(path) == 0`.)
    Absent { path: String },
}

impl Compare {
    /// The file the comparison reads.
    pub fn path(&self) -> &str {
        match self {
            Compare::Revision { path, .. } | Compare::Absent { path } => path,
        }
    }

    /// True when `current` (the file's state, `None` = absent) satisfies it.
    pub fn holds(&self, current: Option<&Versioned>) -> bool {
        match (self, current) {
            (Compare::Revision { revision, .. }, Some(file)) => file.revision == *revision,
            (Compare::Revision { .. }, None) => false,
            (Compare::Absent { .. }, current) => current.is_none(),
        }
    }
}

/// One write of a transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Creates or replaces the file. With an `owner` the file is ephemeral: it is
    /// deleted when that session ends, and the session must be alive. Without one it
    /// is persistent, even if it was ephemeral before (the old owner loses it).
    Put {
        path: String,
        value: Vec<u8>,
        owner: Option<SessionId>,
    },
    /// Deletes the file if it exists (deleting an absent file changes nothing).
    Delete { path: String },
}

impl Op {
    /// The file the operation writes.
    pub fn path(&self) -> &str {
        match self {
            Op::Put { path, .. } | Op::Delete { path } => path,
        }
    }
}

/// Comparisons plus writes, applied all-or-nothing.
///
/// Rules (checked by [`Txn::validate`]): at most [`MAX_TXN_OPS`] comparisons and at most
/// [`MAX_TXN_OPS`] operations; no path written twice; every path valid; paths and values
/// written total at most [`MAX_WRITE_BYTES`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Txn {
    pub compares: Vec<Compare>,
    pub ops: Vec<Op>,
}

/// What a transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxnOutcome {
    /// Every comparison held and the writes were applied at `revision`. When the writes
    /// changed nothing (none, or only deletes of absent files) no revision is consumed
    /// and `revision` is the store's current one.
    Committed { revision: u64 },
    /// A comparison failed; nothing was written. `current` has one entry per
    /// comparison, in order: the compared file as it was (`None` = absent).
    Failed { current: Vec<Option<Versioned>> },
}

impl Txn {
    /// An empty transaction (it commits without writing).
    pub fn new() -> Self {
        Self::default()
    }

    /// Requires the file at `path` to exist at exactly `revision`.
    pub fn require_revision(mut self, path: impl Into<String>, revision: u64) -> Self {
        self.compares.push(Compare::Revision {
            path: path.into(),
            revision,
        });
        self
    }

    /// Requires no file at `path`.
    pub fn require_absent(mut self, path: impl Into<String>) -> Self {
        self.compares.push(Compare::Absent { path: path.into() });
        self
    }

    /// Requires the lock behind `token` to be still held, unchanged: the fencing check
    /// that keeps a deposed holder from writing.
    pub fn fenced_by(self, token: &LockToken) -> Self {
        self.require_revision(token.path.clone(), token.revision)
    }

    /// Writes a persistent file.
    pub fn put(mut self, path: impl Into<String>, value: impl Into<Vec<u8>>) -> Self {
        self.ops.push(Op::Put {
            path: path.into(),
            value: value.into(),
            owner: None,
        });
        self
    }

    /// Writes a file owned by `owner`, deleted when that session ends.
    pub fn put_ephemeral(
        mut self,
        path: impl Into<String>,
        value: impl Into<Vec<u8>>,
        owner: SessionId,
    ) -> Self {
        self.ops.push(Op::Put {
            path: path.into(),
            value: value.into(),
            owner: Some(owner),
        });
        self
    }

    /// Deletes a file.
    pub fn delete(mut self, path: impl Into<String>) -> Self {
        self.ops.push(Op::Delete { path: path.into() });
        self
    }

    /// Checks the rules listed on [`Txn`].
    pub fn validate(&self) -> LockResult<()> {
        if self.compares.len() > MAX_TXN_OPS || self.ops.len() > MAX_TXN_OPS {
            return Err(LockError::InvalidTxn(format!(
                "{} comparisons and {} operations; at most {MAX_TXN_OPS} of each",
                self.compares.len(),
                self.ops.len()
            )));
        }
        for compare in &self.compares {
            validate_path(compare.path())?;
        }
        let mut written = BTreeSet::new();
        let mut size = 0usize;
        for op in &self.ops {
            validate_path(op.path())?;
            if !written.insert(op.path()) {
                return Err(LockError::InvalidTxn(format!(
                    "{} is written twice in one transaction",
                    op.path()
                )));
            }
            let value_len = match op {
                Op::Put { value, .. } => value.len(),
                Op::Delete { .. } => 0,
            };
            size = size
                .saturating_add(op.path().len())
                .saturating_add(value_len);
        }
        if size > MAX_WRITE_BYTES {
            return Err(LockError::TooLarge {
                size,
                limit: MAX_WRITE_BYTES,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(revision: u64) -> Versioned {
        Versioned {
            value: b"v".to_vec(),
            revision,
            create_revision: 1,
            owner: None,
        }
    }

    #[test]
    fn compares_match_exact_revision_or_absence() {
        let at3 = Compare::Revision {
            path: "/a".into(),
            revision: 3,
        };
        assert!(at3.holds(Some(&file(3))));
        assert!(!at3.holds(Some(&file(4))));
        assert!(!at3.holds(None));
        let absent = Compare::Absent { path: "/a".into() };
        assert!(absent.holds(None));
        assert!(!absent.holds(Some(&file(3))));
    }

    #[test]
    fn validate_rejects_duplicates_bad_paths_and_oversize() {
        assert!(Txn::new().put("/a", b"1".to_vec()).validate().is_ok());
        let twice = Txn::new().put("/a", b"1".to_vec()).delete("/a");
        assert!(matches!(twice.validate(), Err(LockError::InvalidTxn(_))));
        let bad = Txn::new().require_absent("relative");
        assert!(matches!(bad.validate(), Err(LockError::InvalidPath { .. })));
        let big = Txn::new().put("/a", vec![0u8; MAX_WRITE_BYTES]);
        assert!(matches!(big.validate(), Err(LockError::TooLarge { .. })));
        let mut many = Txn::new();
        for i in 0..=MAX_TXN_OPS {
            many = many.delete(format!("/f{i}"));
        }
        assert!(matches!(many.validate(), Err(LockError::InvalidTxn(_))));
    }

    #[test]
    fn fenced_by_compares_the_token_revision() {
        let token = LockToken {
            path: "/lock".into(),
            session: SessionId(7),
            revision: 12,
        };
        let txn = Txn::new().fenced_by(&token).put("/data", b"x".to_vec());
        assert_eq!(
            txn.compares,
            vec![Compare::Revision {
                path: "/lock".into(),
                revision: 12
            }]
        );
    }
}
