//! The lock service: Tabula's coordination substrate, in the role Chubby plays for
//! Bigtable.
//!
//! Owns: the [`LockService`] contract and its types, the in-process implementation
//! [`EmbeddedLockService`] and the etcd one [`EtcdLockService`]. Must not: know about
//! tablets, servers or assignment (the coordinator gives paths their meaning).
//!
//! # Model
//! * **Sessions** are leases: [`create_session`](LockService::create_session) with a
//!   time-to-live, renewed by [`keep_alive`](LockService::keep_alive). A session whose
//!   lease lapses is gone, with everything it owned.
//! * **Files** are small byte values under absolute paths. Each carries the revision of
//!   its last write and of its creation, from one counter for the whole store. A file
//!   is *persistent* or *ephemeral* (owned by a session and deleted when it ends).
//! * **Transactions** ([`Txn`]) compare files' revisions (or absence) and write
//!   atomically; this is the one write primitive, so an etcd implementation maps it to
//!   one etcd `Txn`.
//! * **Locks** are ephemeral files created only if absent. The holder's session owns the
//!   file and its value is the holder's info. The revision of the write that took it
//!   is the *fencing token*: a write that must only happen while the lock is held
//!   compares that revision in the same transaction ([`Txn::fenced_by`]). A lock call
//!   alone never proves the lock is still held. Replacing or deleting a lock file (for
//!   instance the coordinator deleting a dead server's file) breaks the lock; the
//!   holder's fenced writes then fail.
//! * **Watches** stream every change under a prefix; polling
//!   [`list`](LockService::list) works as well.
//!
//! Everything is synchronous; implementations use their own threads.
#![cfg_attr(not(test), deny(clippy::indexing_slicing))]

mod clock;
mod embedded;
mod error;
mod etcd;
mod persist;
mod session;
mod store;
mod txn;
mod types;
mod watch;

use std::time::{Duration, Instant};

pub use clock::{Clock, ManualClock, SystemClock};
pub use embedded::{EmbeddedConfig, EmbeddedLockService};
pub use error::{LockError, LockResult};
pub use etcd::{EtcdConfig, EtcdLockService, EtcdTls};
pub use persist::STATE_FILE;
pub use txn::{Compare, Op, Txn, TxnOutcome};
pub use types::{
    validate_path, validate_prefix, validate_ttl, CasOutcome, Listing, LockHolder, LockToken,
    SessionId, Versioned, MAX_PATH_LEN, MAX_SESSION_TTL, MAX_TXN_OPS, MAX_WRITE_BYTES,
};
pub use watch::{follow_changes, WatchEvent, WatchHub, Watcher};

/// How many times a read-then-compare loop retries before reporting contention.
const COMPARE_ATTEMPTS: u32 = 16;
/// How often a blocked [`LockService::lock`] re-checks even without a watch event.
const LOCK_RECHECK: Duration = Duration::from_secs(1);

/// Sessions, versioned files, fenced locks and watches.
///
/// Object-safe and shareable: used as `Arc<dyn LockService>`. Implementations provide
/// the eight required methods; the rest are defined on top of them and should not be
/// overridden with different semantics.
///
/// Paths follow [`validate_path`]; prefixes follow [`validate_prefix`]. A call that
/// returns `Ok` after writing has made the write durable.
pub trait LockService: Send + Sync {
    /// Starts a session whose lease lasts `ttl` from now (and from each
    /// [`keep_alive`](Self::keep_alive)). An implementation may round `ttl` up (etcd
    /// grants whole seconds, at least its minimum), never down. Fails with
    /// [`LockError::InvalidTtl`] outside `(0, MAX_SESSION_TTL]`.
    fn create_session(&self, ttl: Duration) -> LockResult<SessionId>;

    /// Renews the lease to a full `ttl` from now. Fails with
    /// [`LockError::SessionExpired`] when the session already ended; then it stays
    /// ended, and its holder must stop acting on its locks.
    fn keep_alive(&self, session: SessionId) -> LockResult<()>;

    /// Ends the session now: its locks are released and its ephemeral files deleted (in
    /// one revision). Closing an ended or unknown session does nothing.
    fn close_session(&self, session: SessionId) -> LockResult<()>;

    /// True while the session's lease has not lapsed and it was not closed.
    fn session_alive(&self, session: SessionId) -> LockResult<bool>;

    /// The file at `path`, if any.
    fn get(&self, path: &str) -> LockResult<Option<Versioned>>;

    /// Every file whose path starts with `prefix`, sorted by path, read at one revision
    /// (reported in the listing).
    fn list(&self, prefix: &str) -> LockResult<Listing>;

    /// Runs a transaction: if every comparison holds, applies every operation atomically
    /// at one new revision ([`TxnOutcome::Committed`]); otherwise writes nothing and
    /// reports the compared files ([`TxnOutcome::Failed`]). Fails with
    /// [`LockError::SessionExpired`] when a put it would apply is owned by an ended
    /// session, and with [`LockError::InvalidTxn`], [`LockError::InvalidPath`] or
    /// [`LockError::TooLarge`] when `txn` breaks the rules on [`Txn`].
    fn commit(&self, txn: &Txn) -> LockResult<TxnOutcome>;

    /// Streams every change committed from now on to files whose path starts with
    /// `prefix`, including deletes caused by sessions ending.
    fn watch(&self, prefix: &str) -> LockResult<Watcher>;

    /// Writes a persistent file unconditionally; returns its new revision. Over an
    /// ephemeral file (or a lock) this makes the file persistent and breaks the lock.
    fn put(&self, path: &str, value: &[u8]) -> LockResult<u64> {
        committed(self.commit(&Txn::new().put(path, value))?)
    }

    /// Writes a file owned by `session`, deleted when the session ends; returns its
    /// revision. Fails with [`LockError::SessionExpired`] if the session ended.
    fn put_ephemeral(&self, path: &str, value: &[u8], session: SessionId) -> LockResult<u64> {
        committed(self.commit(&Txn::new().put_ephemeral(path, value, session))?)
    }

    /// Writes a persistent file only if it is at `expected_revision` (`None`: only if
    /// it does not exist).
    fn compare_and_put(
        &self,
        path: &str,
        expected_revision: Option<u64>,
        value: &[u8],
    ) -> LockResult<CasOutcome> {
        let txn = match expected_revision {
            Some(revision) => Txn::new().require_revision(path, revision),
            None => Txn::new().require_absent(path),
        };
        cas_outcome(self.commit(&txn.put(path, value))?)
    }

    /// Deletes the file if it exists (a lock file's deletion breaks the lock).
    fn delete(&self, path: &str) -> LockResult<()> {
        committed(self.commit(&Txn::new().delete(path))?).map(|_| ())
    }

    /// Deletes the file only if it is at `expected_revision`.
    fn compare_and_delete(&self, path: &str, expected_revision: u64) -> LockResult<CasOutcome> {
        let txn = Txn::new()
            .require_revision(path, expected_revision)
            .delete(path);
        cas_outcome(self.commit(&txn)?)
    }

    /// Takes the exclusive lock at `path` for `session` if no file is there, writing
    /// `holder_info` as the file's value. Returns the token, or `None` when another
    /// session holds it. If `session` already holds it, returns its current token
    /// (so a retry after an unknown outcome is safe). Fails with
    /// [`LockError::NotLockable`] when a persistent file is at `path`, and with
    /// [`LockError::SessionExpired`] when the session ended.
    fn try_lock(
        &self,
        path: &str,
        session: SessionId,
        holder_info: &[u8],
    ) -> LockResult<Option<LockToken>> {
        for _ in 0..COMPARE_ATTEMPTS {
            let txn = Txn::new()
                .require_absent(path)
                .put_ephemeral(path, holder_info, session);
            let current = match self.commit(&txn)? {
                TxnOutcome::Committed { revision } => {
                    return Ok(Some(token(path, session, revision)));
                }
                TxnOutcome::Failed { current } => current.into_iter().next().flatten(),
            };
            match current {
                Some(file) => {
                    return match file.owner {
                        Some(owner) if owner == session => {
                            Ok(Some(token(path, session, file.revision)))
                        }
                        Some(_) => Ok(None),
                        None => Err(LockError::NotLockable { path: path.into() }),
                    };
                }
                // Deleted between the comparison and the read-back: try again.
                None => continue,
            }
        }
        Err(LockError::Contended {
            path: path.into(),
            attempts: COMPARE_ATTEMPTS,
        })
    }

    /// Like [`try_lock`](Self::try_lock) but waits up to `timeout` (real time) for the
    /// lock to be free; `Ok(None)` on timeout. Fails with [`LockError::SessionExpired`]
    /// as soon as the waiting session ends. Waiters are not served in order.
    fn lock(
        &self,
        path: &str,
        session: SessionId,
        holder_info: &[u8],
        timeout: Duration,
    ) -> LockResult<Option<LockToken>> {
        let deadline = Instant::now().checked_add(timeout);
        let watcher = self.watch(path)?;
        loop {
            if let Some(token) = self.try_lock(path, session, holder_info)? {
                return Ok(Some(token));
            }
            if !self.session_alive(session)? {
                return Err(LockError::SessionExpired(session));
            }
            let remaining = deadline.map_or(LOCK_RECHECK, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if remaining.is_zero() {
                return Ok(None);
            }
            // Any change under the path may have freed the lock; the periodic re-check
            // covers holders whose end is noticed lazily.
            watcher.next_timeout(remaining.min(LOCK_RECHECK))?;
        }
    }

    /// Releases the lock `session` holds at `path`. Fails with
    /// [`LockError::NotLockHolder`] when it does not hold it.
    fn unlock(&self, path: &str, session: SessionId) -> LockResult<()> {
        for _ in 0..COMPARE_ATTEMPTS {
            let file = self.get(path)?;
            let Some(file) = file.filter(|f| f.owner == Some(session)) else {
                return Err(LockError::NotLockHolder {
                    path: path.into(),
                    session,
                });
            };
            let txn = Txn::new()
                .require_revision(path, file.revision)
                .delete(path);
            if let TxnOutcome::Committed { .. } = self.commit(&txn)? {
                return Ok(());
            }
        }
        Err(LockError::Contended {
            path: path.into(),
            attempts: COMPARE_ATTEMPTS,
        })
    }

    /// Releases the lock only if it is still exactly the one `token` names. Fails with
    /// [`LockError::NotLockHolder`] when it is not (lost, broken, or rewritten).
    fn release(&self, token: &LockToken) -> LockResult<()> {
        match self.compare_and_delete(&token.path, token.revision)? {
            CasOutcome::Applied { .. } => Ok(()),
            CasOutcome::Conflict { .. } => Err(LockError::NotLockHolder {
                path: token.path.clone(),
                session: token.session,
            }),
        }
    }

    /// Who holds the lock at `path`: `None` when no file is there or the file is
    /// persistent.
    fn lock_holder(&self, path: &str) -> LockResult<Option<LockHolder>> {
        Ok(self.get(path)?.and_then(|file| {
            file.owner.map(|session| LockHolder {
                session,
                info: file.value,
                revision: file.revision,
            })
        }))
    }

    /// True while the lock `token` names is held unchanged by its session. Only a
    /// snapshot: writes that depend on the lock must use [`Txn::fenced_by`].
    fn holds_lock(&self, token: &LockToken) -> LockResult<bool> {
        Ok(self
            .get(&token.path)?
            .is_some_and(|f| f.revision == token.revision && f.owner == Some(token.session)))
    }
}

fn token(path: &str, session: SessionId, revision: u64) -> LockToken {
    LockToken {
        path: path.to_owned(),
        session,
        revision,
    }
}

fn committed(outcome: TxnOutcome) -> LockResult<u64> {
    match outcome {
        TxnOutcome::Committed { revision } => Ok(revision),
        TxnOutcome::Failed { .. } => Err(LockError::Protocol(
            "a transaction without comparisons reported a failed comparison".into(),
        )),
    }
}

fn cas_outcome(outcome: TxnOutcome) -> LockResult<CasOutcome> {
    Ok(match outcome {
        TxnOutcome::Committed { revision } => CasOutcome::Applied { revision },
        TxnOutcome::Failed { current } => CasOutcome::Conflict {
            current: current.into_iter().next().flatten(),
        },
    })
}
