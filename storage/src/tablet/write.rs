//! The write path of a tablet: validate, resolve timestamps, log, insert, publish.
//!
//! Owns: turning a [`RowMutation`] into [`Entry`]s with concrete timestamps, and the
//! commit protocol: under the tablet's write lock a mutation takes one sequence
//! number, is appended to the shared commit log and inserted into the active
//! memtable; outside the lock it waits for the log sync (group commit) and is
//! published (complete; reads starting later see it, see [`crate::mvcc`]). Also freezes the memtable when full and stalls writers while too
//! many frozen memtables wait for their flush.
//! Must not: read-modify-write logic (see `rmw`) or flushing itself (see `flush`).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::Tablet;
use crate::deferred::{self, DeferredWrite};
use crate::entry::{encode_payload, Entry};
use crate::error::{Error, Result};
use crate::key::KeyKind;
use crate::log::LogPosition;
use crate::memtable::Memtable;
use crate::types::{
    check_row, check_timestamp, Durability, Mutation, RowMutation, LATEST_TIMESTAMP,
};

/// Frozen memtables allowed before writers stall.
const MAX_FROZEN_MEMTABLES: usize = 2;
/// Longest a writer waits for a flush before failing the write.
const MAX_STALL: Duration = Duration::from_secs(60);

/// A write that is in the memtable and the log buffer but not yet acknowledged.
pub(crate) struct PendingWrite {
    seq: u64,
    log: Option<(LogPosition, Durability)>,
}

impl PendingWrite {
    /// Where the write's log record ends and how durable it must be, if logged.
    pub(crate) fn log(&self) -> Option<(LogPosition, Durability)> {
        self.log
    }
}

impl Tablet {
    /// Applies a RowMutation atomically and durably (per `durability`).
    ///
    /// A synced write made inside a [`crate::deferred::DeferScope`] returns as soon as
    /// it is in the log buffer and the memtable, leaving its log wait and its
    /// publication in the scope: it is then neither durable nor visible, nor to be
    /// acknowledged, until the scope's taker completes it.
    pub fn mutate(&self, rm: &RowMutation, durability: Durability) -> Result<()> {
        match self.commit_for_batch(rm, durability, true)? {
            Some(pending) => self.finish_or_defer(pending),
            None => Ok(()),
        }
    }

    /// Applies several RowMutations in order, each atomically on its own row (the
    /// batch as a whole is not atomic), and waits for the commit log once for all
    /// of them: a client's batch of puts costs one group commit, not one per row.
    /// Returns one result per mutation. A write is visible only once the batch's
    /// log wait is over, as for [`Tablet::mutate`].
    pub fn mutate_batch(&self, rms: &[RowMutation], durability: Durability) -> Vec<Result<()>> {
        let rows: Vec<&RowMutation> = rms.iter().collect();
        super::batch::apply_batches(&[(self, &rows)], durability)
            .into_iter()
            .next()
            .unwrap_or_default()
    }

    /// Validates, locks, resolves and commits one row without publishing it (the row
    /// lock is released on return). `may_stall`: whether it may wait for flush room
    /// (a batch allows it only while it holds no unpublished write). `None` for an
    /// empty mutation.
    pub(crate) fn commit_for_batch(
        &self,
        rm: &RowMutation,
        durability: Durability,
        may_stall: bool,
    ) -> Result<Option<PendingWrite>> {
        self.validate(rm)?;
        if rm.mutations.is_empty() {
            return Ok(None);
        }
        let _row = self.row_locks.lock(&rm.row);
        let now = self.shared.now_ms();
        let entries = self.resolve(rm, now)?;
        let p = if may_stall {
            self.commit(&rm.row, &entries, durability)?
        } else {
            self.commit_now(&rm.row, &entries, durability)?
        };
        self.requests.wrote(&rm.row);
        Ok(Some(p))
    }

    /// Publishes a write committed by [`Tablet::commit_for_batch`] once its log wait
    /// is over. It may then be acknowledged: a read that starts later waits, if it
    /// must, until the write is visible (see [`crate::mvcc`]).
    pub(crate) fn publish(&self, pending: &PendingWrite) {
        self.mvcc.complete(pending.seq);
    }

    /// Checks a mutation against the tablet's range and schema.
    pub(crate) fn validate(&self, rm: &RowMutation) -> Result<()> {
        self.check_open()?;
        check_row(&rm.row)?;
        if !self.contains_row(&rm.row) {
            return Err(Error::RowOutOfRange { tablet: self.id });
        }
        let schema = self.schema();
        let max_value = self.shared.opts.max_value_size;
        for m in &rm.mutations {
            if let Some(f) = m.family() {
                schema.require_family(f)?;
            }
            check_timestamp(m.timestamp())?;
            if let Mutation::Put { value, .. } = m {
                if value.len() > max_value {
                    return Err(Error::ValueTooLarge {
                        len: value.len(),
                        max: max_value,
                    });
                }
            }
        }
        Ok(())
    }

    /// Resolves LATEST timestamps and expands row deletes. Call with the row locked.
    pub(crate) fn resolve(&self, rm: &RowMutation, now: i64) -> Result<Vec<Entry>> {
        let at = |ts: i64| if ts == LATEST_TIMESTAMP { now } else { ts };
        let mut out = Vec::with_capacity(rm.mutations.len());
        for m in &rm.mutations {
            match m {
                Mutation::Put {
                    family,
                    qualifier,
                    timestamp,
                    value,
                } => out.push(Entry {
                    kind: KeyKind::Put,
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: at(*timestamp),
                    value: value.clone(),
                }),
                Mutation::DeleteVersion {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    let ts = if *timestamp == LATEST_TIMESTAMP {
                        // HBase deletes the newest existing version; none = no-op.
                        match self.latest_timestamp(&rm.row, family, qualifier)? {
                            Some(ts) => ts,
                            None => continue,
                        }
                    } else {
                        *timestamp
                    };
                    out.push(Entry {
                        kind: KeyKind::DeleteVersion,
                        family: family.clone(),
                        qualifier: qualifier.clone(),
                        timestamp: ts,
                        value: Bytes::new(),
                    });
                }
                Mutation::DeleteColumn {
                    family,
                    qualifier,
                    timestamp,
                } => out.push(Entry {
                    kind: KeyKind::DeleteColumn,
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp: at(*timestamp),
                    value: Bytes::new(),
                }),
                Mutation::DeleteFamily { family, timestamp } => out.push(Entry {
                    kind: KeyKind::DeleteFamily,
                    family: family.clone(),
                    qualifier: Bytes::new(),
                    timestamp: at(*timestamp),
                    value: Bytes::new(),
                }),
                Mutation::DeleteFamilyVersion { family, timestamp } => out.push(Entry {
                    kind: KeyKind::DeleteFamilyVersion,
                    family: family.clone(),
                    qualifier: Bytes::new(),
                    timestamp: at(*timestamp),
                    value: Bytes::new(),
                }),
                Mutation::DeleteRow { timestamp } => {
                    for f in self.schema().families() {
                        out.push(Entry {
                            kind: KeyKind::DeleteFamily,
                            family: f.name.clone(),
                            qualifier: Bytes::new(),
                            timestamp: at(*timestamp),
                            value: Bytes::new(),
                        });
                    }
                }
            }
        }
        Ok(out)
    }

    /// Logs and inserts resolved entries under one new sequence number. Call with
    /// the row locked; call [`Tablet::finish`] after releasing it.
    pub(crate) fn commit(
        &self,
        row: &[u8],
        entries: &[Entry],
        durability: Durability,
    ) -> Result<PendingWrite> {
        self.wait_for_flush_room()?;
        self.commit_now(row, entries, durability)
    }

    /// [`Tablet::commit`] without waiting for flush room.
    ///
    /// Under the tablet's write lock the write takes its sequence number, appends
    /// its log record and registers with the active memtable (whose `max_seq` then
    /// covers it); the memtable insert itself runs after the lock is released
    /// (under the memtable's own lock, held for one insert at a time), so that the
    /// next writer's sequence number and log append need not wait for it. A flush
    /// waits until every sequence number up to its memtable's `max_seq` is
    /// published, and a write is published only after its insert, so no flush
    /// misses an insert still in flight.
    fn commit_now(
        &self,
        row: &[u8],
        entries: &[Entry],
        durability: Durability,
    ) -> Result<PendingWrite> {
        let (seq, log, memtable) = {
            let _w = self.write_lock.lock();
            self.check_open()?;
            let seq = self.mvcc.begin();
            let log = if durability == Durability::Skip || entries.is_empty() {
                None
            } else {
                let payload = encode_payload(row, entries);
                match self.shared.log.append(self.id, seq, &payload) {
                    Ok(pos) => Some((pos, durability)),
                    Err(e) => {
                        self.mvcc.complete(seq);
                        return Err(e);
                    }
                }
            };
            let (memtable, full) = {
                let version = self.version_guard();
                let memtable = Arc::clone(&version.active);
                memtable.note_seq(seq);
                let limit = self
                    .schema_guard()
                    .flush_size()
                    .unwrap_or(self.shared.opts.memtable_size);
                let full = memtable.approximate_size() >= limit;
                (memtable, full)
            };
            if full {
                // The insert below still goes to the memtable just frozen: its flush
                // waits for this write to be published.
                self.freeze_locked();
            }
            (seq, log, memtable)
        };
        memtable.note_row(crate::key::bloom_row_hash(row));
        insert_entries(&memtable, row, entries, seq);
        Ok(PendingWrite { seq, log })
    }

    /// [`Tablet::finish`], unless the write is synced and this thread collects
    /// deferred writes (see [`crate::deferred`]): then the log wait and the
    /// publication are left in the thread's scope and the write returns at once,
    /// neither durable nor visible until the scope's taker completes it.
    pub(crate) fn finish_or_defer(&self, pending: PendingWrite) -> Result<()> {
        let Some((pos, durability)) = pending.log.filter(|(_, d)| d.waits_for_log()) else {
            return self.finish(pending);
        };
        let deferred = deferred::defer_with(|| {
            DeferredWrite::new(
                Arc::clone(&self.shared),
                Arc::clone(&self.mvcc),
                pending.seq,
                pos,
                durability,
            )
        });
        if deferred {
            Ok(())
        } else {
            self.finish(pending)
        }
    }

    /// Waits for the log (group commit) and publishes the write.
    pub(crate) fn finish(&self, pending: PendingWrite) -> Result<()> {
        let synced = match pending.log {
            Some((pos, durability)) => self.shared.log.sync(pos, durability),
            None => Ok(()),
        };
        self.publish(&pending);
        synced
    }

    /// Applies already-resolved entries replayed from a log (tablet open).
    pub(crate) fn apply_replayed(&self, row: &[u8], entries: &[Entry], seq: u64) {
        let version = self.version();
        version.active.note_row(crate::key::bloom_row_hash(row));
        insert_entries(&version.active, row, entries, seq);
    }

    /// Freezes the active memtable if it holds anything; returns whether it did.
    pub fn freeze(&self) -> bool {
        let _w = self.write_lock.lock();
        self.freeze_locked()
    }

    /// Freezes with the write lock held.
    pub(crate) fn freeze_locked(&self) -> bool {
        let replacing = self.version_lock.lock();
        let current = self.version.load_full();
        if current.active.is_empty() {
            return false;
        }
        let mut frozen = current.frozen.clone();
        frozen.push(std::sync::Arc::clone(&current.active));
        self.version.store(std::sync::Arc::new(
            current.with_memtables(std::sync::Arc::new(self.shared.new_memtable()), frozen),
        ));
        drop(replacing);
        self.shared.request_flush(self.id);
        true
    }

    /// True when a write would not stall in [`Tablet::wait_for_flush_room`].
    pub(crate) fn has_flush_room(&self) -> bool {
        !self.shared.memtable_memory.over_limit() && self.frozen_memtables() < MAX_FROZEN_MEMTABLES
    }

    /// Frozen memtables waiting for their flush (read without taking a reference to
    /// the version).
    fn frozen_memtables(&self) -> usize {
        self.version_guard().frozen.len()
    }

    /// Blocks while too many frozen memtables of this tablet wait for their flush, or
    /// while the memtables of the whole engine are over its memtable budget.
    fn wait_for_flush_room(&self) -> Result<()> {
        if self.has_flush_room() {
            return Ok(());
        }
        let deadline = std::time::Instant::now() + MAX_STALL;
        if !self.shared.memtable_memory.wait_for_room(deadline) {
            return Err(Error::io(
                format!("writing to tablet {}", self.id),
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "memtable flushes are not keeping up with the engine's memory budget",
                ),
            ));
        }
        let mut g = self.flushed_mutex.lock();
        while self.frozen_memtables() >= MAX_FROZEN_MEMTABLES {
            self.check_open()?;
            if self.flushed.wait_until(&mut g, deadline).timed_out() {
                return Err(Error::io(
                    format!("writing to tablet {}", self.id),
                    std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "memtable flush is not keeping up",
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Inserts the resolved entries of one row's write into `memtable` in one go,
/// telling it whether any is a delete marker.
fn insert_entries(memtable: &Memtable, row: &[u8], entries: &[Entry], seq: u64) {
    let markers = entries.iter().any(|e| e.kind.is_delete());
    let keyed = entries
        .iter()
        .map(|e| (e.key(row, seq), e.value.clone()))
        .collect();
    memtable.insert_row(keyed, seq, markers);
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};

    use super::*;
    use crate::engine::Engine;
    use crate::read::ReadOptions;

    fn put(row: &'static str) -> RowMutation {
        RowMutation::new(Bytes::from_static(row.as_bytes())).put(&b"a"[..], &b"q"[..], 5, "v")
    }

    /// A put acknowledged while an earlier write of the tablet (another row) is still
    /// between its sequence number and its publication is not yet visible; a get
    /// the client sends right after the acknowledgement must still see it.
    #[test]
    fn an_acknowledged_put_is_seen_by_the_next_get() {
        let dir = tempfile::tempdir().expect("tempdir");
        let (_engine, tablet) = Engine::with_one_tablet(dir.path(), "a");

        // An earlier write, committed but not yet published (its log wait not over).
        let earlier = tablet
            .commit_for_batch(&put("a"), Durability::Skip, false)
            .expect("commit")
            .expect("not empty");
        let acked = Arc::new(AtomicBool::new(false));
        let client = {
            let (tablet, acked) = (Arc::clone(&tablet), Arc::clone(&acked));
            std::thread::spawn(move || {
                tablet.mutate(&put("b"), Durability::Skip).expect("put");
                acked.store(true, Ordering::SeqCst);
                let row = Bytes::from_static(b"b");
                tablet.get(&row, ReadOptions::latest()).expect("get").len()
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        assert!(
            acked.load(Ordering::SeqCst),
            "writers do not wait for each other"
        );
        assert!(
            !client.is_finished(),
            "the get waits until the acknowledged put is visible"
        );
        tablet.publish(&earlier);
        assert_eq!(client.join().ok(), Some(1), "the client reads its own put");
    }
}
