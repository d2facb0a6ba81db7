//! The in-process lock service used by `tabula serve`.
//!
//! Owns: [`EmbeddedLockService`]: the state behind one mutex (files, sessions,
//! watches), the reaper thread that ends lapsed sessions, and when the service is
//! durable, writing `STATE` (see `persist`) before any write returns. Must not: keep
//! sessions, locks or ephemeral files across a restart (reopening = every session
//! ended), or serve anything after a durability failure.
//!
//! Sessions are also checked lazily: every call first ends the sessions whose lease
//! lapsed, so the reaper's timing never shows in results; the reaper only makes
//! expiries (and their watch events) happen without calls.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::clock::{Clock, SystemClock};
use super::error::{LockError, LockResult};
use super::persist::{encode, StateDir};
use super::session::SessionTable;
use super::store::{Plan, Store};
use super::txn::{Txn, TxnOutcome};
use super::types::{validate_path, validate_prefix, Listing, SessionId, Versioned};
use super::watch::{WatchEvent, WatchHub, Watcher};
use super::LockService;

/// Longest the reaper sleeps between checks (bounds expiry lag under a
/// [`ManualClock`](super::ManualClock), whose moves do not wake it).
const REAPER_MAX_SLEEP: Duration = Duration::from_millis(250);
/// Shortest reaper sleep, so a deadline equal to `now` cannot spin it.
const REAPER_MIN_SLEEP: Duration = Duration::from_millis(1);

/// How to start an [`EmbeddedLockService`].
#[derive(Debug, Clone)]
pub struct EmbeddedConfig {
    /// Directory of the durable state; `None` keeps everything in memory.
    pub dir: Option<PathBuf>,
    /// Time source for leases.
    pub clock: Arc<dyn Clock>,
}

impl EmbeddedConfig {
    /// Nothing on disk, real time.
    pub fn in_memory() -> Self {
        Self {
            dir: None,
            clock: Arc::new(SystemClock),
        }
    }

    /// Durable in `dir`, real time.
    pub fn durable(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: Some(dir.into()),
            clock: Arc::new(SystemClock),
        }
    }

    /// The same, with leases measured by `clock`.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }
}

/// The in-process [`LockService`].
pub struct EmbeddedLockService {
    inner: Arc<Inner>,
    reaper: Option<JoinHandle<()>>,
}

struct Inner {
    state: Mutex<State>,
    wake: Condvar,
    clock: Arc<dyn Clock>,
}

struct Durable {
    dir: StateDir,
    boot_epoch: u64,
}

struct State {
    store: Store,
    sessions: SessionTable,
    watches: WatchHub,
    durable: Option<Durable>,
    failure: Option<String>,
    shutdown: bool,
}

impl EmbeddedLockService {
    /// Opens (creating if needed) a durable service in `dir`. Persistent files and the
    /// revision counter are as the last successful write left them; no session, lock
    /// or ephemeral file survives. Fails with [`LockError::Corrupt`] when the state
    /// cannot be trusted.
    pub fn open(dir: &Path) -> LockResult<Self> {
        Self::start(EmbeddedConfig::durable(dir))
    }

    /// A service that keeps nothing on disk.
    pub fn in_memory() -> LockResult<Self> {
        Self::start(EmbeddedConfig::in_memory())
    }

    /// Starts a service as `config` says.
    pub fn start(config: EmbeddedConfig) -> LockResult<Self> {
        let (store, durable) = match &config.dir {
            None => (Store::default(), None),
            Some(dir) => {
                let (state_dir, persisted) = StateDir::open(dir)?;
                let persisted = persisted.unwrap_or_default();
                let boot_epoch = persisted
                    .boot_epoch
                    .checked_add(1)
                    .ok_or(LockError::Exhausted("boot epochs"))?;
                let store = Store::restore(persisted.files, persisted.revision);
                // Record the new epoch before handing out any session id.
                state_dir.write(&encode(
                    boot_epoch,
                    store.revision(),
                    store.persistent_files(),
                )?)?;
                tracing::info!(
                    dir = %dir.display(),
                    revision = store.revision(),
                    boot_epoch,
                    "lock service opened"
                );
                (
                    store,
                    Some(Durable {
                        dir: state_dir,
                        boot_epoch,
                    }),
                )
            }
        };
        let boot_epoch = durable.as_ref().map_or(1, |d| d.boot_epoch);
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                store,
                sessions: SessionTable::new(boot_epoch)?,
                watches: WatchHub::default(),
                durable,
                failure: None,
                shutdown: false,
            }),
            wake: Condvar::new(),
            clock: config.clock,
        });
        let reaper_inner = Arc::clone(&inner);
        let reaper = thread::Builder::new()
            .name("lock-reaper".into())
            .spawn(move || reap(&reaper_inner))
            .map_err(|e| LockError::io("starting the session reaper thread", e))?;
        Ok(Self {
            inner,
            reaper: Some(reaper),
        })
    }

    /// Runs `f` on the state after ending lapsed sessions; fails when out of service.
    fn with_state<T>(&self, f: impl FnOnce(&mut State, Instant) -> LockResult<T>) -> LockResult<T> {
        let mut state = self.inner.state.lock();
        state.usable()?;
        let now = self.inner.clock.now();
        state.expire_due(now)?;
        f(&mut state, now)
    }
}

impl fmt::Debug for EmbeddedLockService {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("EmbeddedLockService")
            .field("revision", &state.store.revision())
            .field("durable", &state.durable.is_some())
            .field("failure", &state.failure)
            .finish_non_exhaustive()
    }
}

impl Drop for EmbeddedLockService {
    fn drop(&mut self) {
        {
            let mut state = self.inner.state.lock();
            state.shutdown = true;
            state.watches.close_all();
        }
        self.inner.wake.notify_all();
        if let Some(reaper) = self.reaper.take() {
            if reaper.join().is_err() {
                tracing::error!("lock service reaper thread panicked");
            }
        }
    }
}

fn reap(inner: &Inner) {
    let mut state = inner.state.lock();
    while !state.shutdown {
        if state.failure.is_none() {
            let now = inner.clock.now();
            if let Err(error) = state.expire_due(now) {
                tracing::error!(%error, "lock service could not end lapsed sessions");
            }
        }
        let now = inner.clock.now();
        let sleep = state
            .sessions
            .next_deadline()
            .map_or(REAPER_MAX_SLEEP, |deadline| {
                deadline.saturating_duration_since(now)
            })
            .clamp(REAPER_MIN_SLEEP, REAPER_MAX_SLEEP);
        inner.wake.wait_for(&mut state, sleep);
    }
}

impl State {
    fn usable(&self) -> LockResult<()> {
        match &self.failure {
            Some(reason) => Err(LockError::Poisoned(reason.clone())),
            None => Ok(()),
        }
    }

    /// Ends every session whose lease lapsed at or before `now`, one revision each.
    fn expire_due(&mut self, now: Instant) -> LockResult<()> {
        while let Some((session, owned)) = self.sessions.pop_due(now) {
            let held: Vec<&String> = owned
                .iter()
                .filter(|path| {
                    self.store
                        .get(path)
                        .is_some_and(|file| file.owner == Some(session))
                })
                .collect();
            tracing::info!(%session, files = held.len(), "lock service session expired");
            let plan = self.store.plan_deletes(held)?;
            self.commit_plan(plan)?;
        }
        Ok(())
    }

    /// Applies `plan`, makes it durable, then updates ownership and tells watchers.
    /// Returns the revision the plan committed at (the current one if it is empty).
    fn commit_plan(&mut self, plan: Plan) -> LockResult<u64> {
        if plan.mutations.is_empty() {
            return Ok(self.store.revision());
        }
        let previous_revision = self.store.revision();
        self.store.apply(&plan);
        if let Err(error) = self.persist() {
            self.store.revert(&plan, previous_revision);
            self.poison(&error);
            return Err(error);
        }
        let mut events = Vec::with_capacity(plan.mutations.len());
        for mutation in plan.mutations {
            if let Some(owner) = mutation.before.as_ref().and_then(|f| f.owner) {
                self.sessions.disown(owner, &mutation.path);
            }
            events.push(match mutation.after {
                Some(file) => {
                    if let Some(owner) = file.owner {
                        self.sessions.own(owner, &mutation.path);
                    }
                    WatchEvent::Put {
                        path: mutation.path,
                        file,
                    }
                }
                None => WatchEvent::Delete {
                    path: mutation.path,
                    revision: plan.revision,
                },
            });
        }
        self.watches.publish(&events);
        Ok(plan.revision)
    }

    fn persist(&self) -> LockResult<()> {
        let Some(durable) = &self.durable else {
            return Ok(());
        };
        let bytes = encode(
            durable.boot_epoch,
            self.store.revision(),
            self.store.persistent_files(),
        )?;
        durable.dir.write(&bytes)
    }

    /// Takes the service out of service: after a failed write the disk may hold the
    /// old or the new state, so nothing may be served from memory any more.
    fn poison(&mut self, error: &LockError) {
        tracing::error!(%error, "lock service is out of service");
        self.failure = Some(error.to_string());
        self.sessions.clear();
        self.watches.close_all();
    }
}

impl LockService for EmbeddedLockService {
    fn create_session(&self, ttl: Duration) -> LockResult<SessionId> {
        let session = self.with_state(|state, now| state.sessions.create(ttl, now))?;
        // The new deadline may be earlier than the one the reaper sleeps towards.
        self.inner.wake.notify_all();
        Ok(session)
    }

    fn keep_alive(&self, session: SessionId) -> LockResult<()> {
        self.with_state(|state, now| {
            if state.sessions.renew(session, now) {
                Ok(())
            } else {
                Err(LockError::SessionExpired(session))
            }
        })
    }

    fn close_session(&self, session: SessionId) -> LockResult<()> {
        self.with_state(|state, _| {
            let Some(owned) = state.sessions.remove(session) else {
                return Ok(());
            };
            let plan = state.store.plan_deletes(owned.iter())?;
            state.commit_plan(plan).map(|_| ())
        })
    }

    fn session_alive(&self, session: SessionId) -> LockResult<bool> {
        self.with_state(|state, _| Ok(state.sessions.is_alive(session)))
    }

    fn get(&self, path: &str) -> LockResult<Option<Versioned>> {
        validate_path(path)?;
        self.with_state(|state, _| Ok(state.store.get(path).cloned()))
    }

    fn list(&self, prefix: &str) -> LockResult<Listing> {
        validate_prefix(prefix)?;
        self.with_state(|state, _| Ok(state.store.list(prefix)))
    }

    fn commit(&self, txn: &Txn) -> LockResult<TxnOutcome> {
        txn.validate()?;
        self.with_state(|state, _| {
            if let Err(current) = state.store.evaluate(&txn.compares) {
                return Ok(TxnOutcome::Failed { current });
            }
            let sessions = &state.sessions;
            let plan = state
                .store
                .plan(&txn.ops, |owner| sessions.is_alive(owner))?;
            let revision = state.commit_plan(plan)?;
            Ok(TxnOutcome::Committed { revision })
        })
    }

    fn watch(&self, prefix: &str) -> LockResult<Watcher> {
        validate_prefix(prefix)?;
        self.with_state(|state, _| Ok(state.watches.subscribe(prefix)))
    }
}
