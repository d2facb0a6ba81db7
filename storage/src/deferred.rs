//! Synced writes whose wait for the commit log is handed to another thread.
//!
//! Owns: the per-thread collector a caller opens with [`DeferScope::enter`] around a
//! call, the [`DeferredWrite`]s a synced single-row write ([`crate::Tablet::mutate`],
//! check-and-mutate, increment, append) leaves in it instead of waiting for its
//! group commit, and [`complete`], which syncs each
//! commit log once up to the last of a set of such writes and then publishes them
//! all. A deferred write is in the log buffer and the memtable but invisible to
//! readers and unacknowledged until it is completed; whoever takes it must complete
//! it and only then acknowledge it. A scope dropped with writes still in it
//! completes them on the spot, and so does a write dropped uncompleted, so no
//! write is ever left unpublished.
//! Must not: decide which calls may be deferred (the caller does) or touch the
//! write path's ordering (see `tablet::write`).

use std::cell::{Cell, RefCell};
use std::sync::Arc;

use crate::engine::Shared;
use crate::error::Error;
use crate::log::LogPosition;
use crate::mvcc::Mvcc;
use crate::types::Durability;

thread_local! {
    /// The open scope's writes on this thread; `None` outside a scope.
    static COLLECTED: RefCell<Option<Vec<DeferredWrite>>> = const { RefCell::new(None) };
}

/// A synced write committed to the log buffer and the memtable, still to be synced
/// and published.
///
/// Dropped without [`complete`] (a path that lost it), it completes itself: it
/// waits for its log and publishes, so no flush or reader waits for it forever.
pub struct DeferredWrite {
    engine: Arc<Shared>,
    mvcc: Arc<Mvcc>,
    seq: u64,
    pos: LogPosition,
    /// `Sync` or `Fsync`: what the log wait must achieve.
    durability: Durability,
    published: Cell<bool>,
}

impl std::fmt::Debug for DeferredWrite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeferredWrite")
            .field("seq", &self.seq)
            .field("log_end", &self.pos.end())
            .finish()
    }
}

impl DeferredWrite {
    pub(crate) fn new(
        engine: Arc<Shared>,
        mvcc: Arc<Mvcc>,
        seq: u64,
        pos: LogPosition,
        durability: Durability,
    ) -> Self {
        DeferredWrite {
            engine,
            mvcc,
            seq,
            pos,
            durability,
            published: Cell::new(false),
        }
    }

    fn publish(&self) {
        self.mvcc.complete(self.seq);
        self.published.set(true);
    }
}

impl Drop for DeferredWrite {
    fn drop(&mut self) {
        if self.published.get() {
            return;
        }
        if let Err(e) = self.engine.log.sync(self.pos, self.durability) {
            tracing::warn!(
                seq = self.seq,
                "a deferred write dropped uncompleted did not sync: {e}"
            );
        }
        self.publish();
    }
}

/// The collector of this thread's deferred writes while it lives.
#[derive(Debug)]
pub struct DeferScope {
    _not_send: std::marker::PhantomData<*const ()>,
}

impl DeferScope {
    /// Opens a scope on this thread: until it is dropped, synced single-row writes
    /// made here leave their log wait in it. Scopes do not nest: entering one while
    /// another is open keeps the outer collection.
    pub fn enter() -> DeferScope {
        COLLECTED.with(|c| {
            let mut c = c.borrow_mut();
            if c.is_none() {
                *c = Some(Vec::new());
            }
        });
        DeferScope {
            _not_send: std::marker::PhantomData,
        }
    }

    /// Takes the writes deferred so far; the caller must [`complete`] them.
    pub fn take(&self) -> Vec<DeferredWrite> {
        COLLECTED.with(|c| {
            c.borrow_mut()
                .as_mut()
                .map(std::mem::take)
                .unwrap_or_default()
        })
    }
}

impl Drop for DeferScope {
    fn drop(&mut self) {
        let left = COLLECTED
            .with(|c| c.borrow_mut().take())
            .unwrap_or_default();
        if !left.is_empty() {
            if let Some(Err(e)) = complete(&left).into_iter().find(|r| r.is_err()) {
                tracing::warn!("deferred writes completed at the end of their scope failed: {e}");
            }
        }
    }
}

/// Whether this thread collects deferred writes.
#[cfg(test)]
pub(crate) fn is_collecting() -> bool {
    COLLECTED.with(|c| c.borrow().is_some())
}

/// Adds the write `make` builds to this thread's scope, if one is open (`make` runs
/// only then); returns whether it did.
pub(crate) fn defer_with(make: impl FnOnce() -> DeferredWrite) -> bool {
    COLLECTED.with(|c| match c.borrow_mut().as_mut() {
        Some(writes) => {
            writes.push(make());
            true
        }
        None => false,
    })
}

/// Whether a deferred write's commit log synced (the error is shared by every write
/// of that sync).
pub type SyncOutcome = std::result::Result<(), Arc<Error>>;

/// Syncs every commit log the writes went to, once each, up to the last of them
/// there (the log is written in order, so that covers every earlier one) and as
/// hard as the strongest of them asks (an fsync covers a write to the OS), then
/// publishes every write. One result per write, in order: the failed sync of its
/// log, if it failed. The writes are published either way (as a write whose own
/// wait failed is); the caller must answer the failed ones' clients with an error.
pub fn complete(writes: &[DeferredWrite]) -> Vec<SyncOutcome> {
    let mut logs: Vec<(&Arc<Shared>, LogPosition, Durability)> = Vec::new();
    for w in writes {
        match logs.iter_mut().find(|(e, _, _)| Arc::ptr_eq(e, &w.engine)) {
            Some((_, last, durability)) => {
                if last.end() < w.pos.end() {
                    *last = w.pos;
                }
                *durability = durability.strongest(w.durability);
            }
            None => logs.push((&w.engine, w.pos, w.durability)),
        }
    }
    let synced: Vec<(&Arc<Shared>, SyncOutcome)> = logs
        .into_iter()
        .map(|(engine, last, durability)| {
            (engine, engine.log.sync(last, durability).map_err(Arc::new))
        })
        .collect();
    writes
        .iter()
        .map(|w| {
            w.publish();
            synced
                .iter()
                .find(|(e, _)| Arc::ptr_eq(e, &w.engine))
                .map_or(Ok(()), |(_, r)| r.clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;

    use super::*;
    use crate::engine::Engine;
    use crate::read::ReadOptions;
    use crate::tablet::Tablet;
    use crate::types::RowMutation;

    fn open(dir: &std::path::Path) -> (Engine, Arc<Tablet>) {
        Engine::with_one_tablet(dir, "a")
    }

    fn put(row: &'static str, value: &'static str) -> RowMutation {
        RowMutation::new(Bytes::from_static(row.as_bytes())).put(&b"a"[..], &b"q"[..], 5, value)
    }

    fn cells(tablet: &Tablet, row: &'static str) -> usize {
        tablet
            .get(&Bytes::from_static(row.as_bytes()), ReadOptions::latest())
            .expect("get")
            .len()
    }

    /// Synced puts of `rows` made in a scope: the writes they deferred.
    fn deferred_puts(tablet: &Tablet, rows: &[&'static str]) -> Vec<DeferredWrite> {
        let scope = DeferScope::enter();
        for row in rows {
            tablet
                .mutate(&put(row, "v"), Durability::Sync)
                .expect("put");
        }
        scope.take()
    }

    #[test]
    fn a_deferred_write_is_invisible_until_completed_and_then_durable() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (engine, tablet) = open(dir.path());
        let synced_before = engine.log_fsyncs();
        let scope = DeferScope::enter();
        tablet
            .mutate(&put("r", "v"), Durability::Sync)
            .expect("put");
        tablet
            .mutate(&put("s", "v"), Durability::Sync)
            .expect("put");
        assert_eq!(cells(&tablet, "r"), 0, "not visible before its sync");
        assert_eq!(engine.log_fsyncs(), synced_before, "no sync waited for");
        let writes = scope.take();
        assert_eq!(writes.len(), 2);
        drop(scope);
        let results = complete(&writes);
        assert!(results.iter().all(|r| r.is_ok()), "{results:?}");
        assert_eq!(cells(&tablet, "r"), 1);
        assert_eq!(cells(&tablet, "s"), 1);
        assert_eq!(
            engine.log_fsyncs(),
            synced_before + 1,
            "one sync covers both"
        );
    }

    #[test]
    fn without_log_fsync_deferred_writes_fsync_only_when_one_asks_for_fsync_wal() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut opts = crate::engine::EngineOptions::new(dir.path());
        opts.log_fsync = false;
        opts.async_log_interval = std::time::Duration::from_secs(3600);
        let (engine, tablet) = Engine::with_one_tablet_and(opts, "a");
        let fsyncs = engine.log_fsyncs();
        let writes = deferred_puts(&tablet, &["r", "s"]);
        assert!(complete(&writes).iter().all(|r| r.is_ok()));
        assert_eq!(cells(&tablet, "s"), 1);
        assert_eq!(engine.log_fsyncs(), fsyncs, "written to the OS, no fsync");
        let stats = engine.log_stats();
        assert!(stats.written_bytes >= stats.appended_bytes, "{stats:?}");

        let scope = DeferScope::enter();
        tablet
            .mutate(&put("t", "v"), Durability::Fsync)
            .expect("put");
        tablet
            .mutate(&put("u", "v"), Durability::Sync)
            .expect("put");
        let writes = scope.take();
        assert_eq!(writes.len(), 2, "FSYNC_WAL writes are deferred too");
        drop(scope);
        assert!(complete(&writes).iter().all(|r| r.is_ok()));
        assert_eq!(cells(&tablet, "t"), 1);
        assert_eq!(engine.log_fsyncs(), fsyncs + 1, "one fsync for the set");
        let stats = engine.log_stats();
        assert!(stats.synced_bytes >= stats.appended_bytes, "{stats:?}");
    }

    #[test]
    fn unsynced_writes_and_writes_outside_a_scope_are_not_deferred() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = open(dir.path());
        tablet
            .mutate(&put("a", "v"), Durability::Sync)
            .expect("put");
        assert_eq!(cells(&tablet, "a"), 1, "no scope: synced and visible");
        let scope = DeferScope::enter();
        tablet
            .mutate(&put("b", "v"), Durability::Skip)
            .expect("put");
        tablet
            .mutate(&put("c", "v"), Durability::Async)
            .expect("put");
        assert!(scope.take().is_empty());
        assert_eq!(cells(&tablet, "b"), 1);
        assert_eq!(cells(&tablet, "c"), 1);
    }

    #[test]
    fn a_scope_dropped_with_writes_completes_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = open(dir.path());
        {
            let _scope = DeferScope::enter();
            tablet
                .mutate(&put("r", "v"), Durability::Sync)
                .expect("put");
            assert_eq!(cells(&tablet, "r"), 0);
        }
        assert_eq!(cells(&tablet, "r"), 1);
        assert!(!is_collecting(), "the scope is closed");
    }

    #[test]
    fn deferred_writes_survive_a_reopen_once_completed() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let (_engine, tablet) = open(dir.path());
            let writes = deferred_puts(&tablet, &["r"]);
            assert!(complete(&writes).iter().all(|r| r.is_ok()));
        }
        let (_engine, tablet) = open(dir.path());
        assert_eq!(cells(&tablet, "r"), 1, "replayed from the log");
    }

    #[test]
    fn a_failed_sync_fails_each_of_its_writes_and_still_publishes_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (engine, tablet) = open(dir.path());
        let writes = deferred_puts(&tablet, &["r", "s"]);
        engine.log().fail_fsyncs(true);
        let results = complete(&writes);
        assert_eq!(results.len(), 2);
        assert!(results.iter().all(|r| r.is_err()), "{results:?}");
        // Published all the same (as a write whose own wait failed is), so no
        // reader or flush waits for them forever: a read returns.
        assert_eq!(cells(&tablet, "s"), 1);
    }

    #[test]
    fn deferred_increments_build_on_each_other_and_publish_together() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = open(dir.path());
        let row = Bytes::from_static(b"n");
        let counter = [(Bytes::from_static(b"a"), Bytes::from_static(b"q"), 5i64)];
        let scope = DeferScope::enter();
        let first = tablet
            .increment(&row, &counter, Durability::Sync)
            .expect("increment");
        let second = tablet
            .increment(&row, &counter, Durability::Sync)
            .expect("increment");
        let value = |cells: &[crate::types::Cell]| {
            cells
                .first()
                .map(|c| i64::from_be_bytes(c.value.as_ref().try_into().expect("8 bytes")))
        };
        // The second read the first's value although neither is published yet.
        assert_eq!((value(&first), value(&second)), (Some(5), Some(10)));
        assert_eq!(cells(&tablet, "n"), 0, "not visible before the sync");
        let writes = scope.take();
        assert_eq!(writes.len(), 2);
        drop(scope);
        assert!(complete(&writes).iter().all(|r| r.is_ok()));
        let now = tablet.get(&row, ReadOptions::latest()).expect("get");
        assert_eq!(value(&now), Some(10));
    }

    #[test]
    fn a_deferred_write_dropped_uncompleted_completes_itself() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (engine, tablet) = open(dir.path());
        let writes = deferred_puts(&tablet, &["r"]);
        let before = engine.log_fsyncs();
        assert_eq!(cells(&tablet, "r"), 0);
        drop(writes);
        assert_eq!(cells(&tablet, "r"), 1, "published");
        assert!(engine.log_fsyncs() > before, "synced first");
    }
}
