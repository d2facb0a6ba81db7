//! The Thrift1 scanner registry: open table scans under the i32 ids clients hold.
//!
//! Owns: id allocation (sequential from 0, shared by every connection, as HBase's
//! handler does), leases (each scanner is closed after `lease` without a call; every
//! call on it renews it; a background sweeper frees idle ones and an expired id is
//! refused even before the sweeper runs), closing every scanner a connection opened
//! when it closes, and a bound on how many may be open.
//! Must not: know Thrift types or how scans run (the backend's [`TableScanner`]).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tabula_storage::tablet::RowResult;

use crate::backend::{BackendResult, TableScanner};
use crate::server::{ConnectionId, ConnectionObserver};

/// A scanner id as clients see it (`ScannerID` in the IDL).
pub type ScannerId = i32;

/// One open scan and how its results are shaped.
pub struct OpenScan {
    scanner: Box<dyn TableScanner>,
    /// Fill `sortedColumns` instead of `columns` (TScan.sortColumns).
    pub sort_columns: bool,
    finished: bool,
}

impl OpenScan {
    /// A scan whose results are shaped by `sort_columns`.
    pub fn new(scanner: Box<dyn TableScanner>, sort_columns: bool) -> Self {
        OpenScan {
            scanner,
            sort_columns,
            finished: false,
        }
    }

    /// Up to `n` results; empty once the scan is over (and on every later call).
    pub fn next(&mut self, n: usize) -> BackendResult<Vec<RowResult>> {
        if self.finished || n == 0 {
            return Ok(Vec::new());
        }
        let rows = self.scanner.next_rows(n)?;
        if rows.is_empty() {
            self.finished = true;
        }
        Ok(rows)
    }
}

struct Slot {
    scan: Arc<Mutex<OpenScan>>,
    last_used: Instant,
    connection: Option<ConnectionId>,
}

#[derive(Default)]
struct Inner {
    next_id: ScannerId,
    slots: HashMap<ScannerId, Slot>,
    by_connection: HashMap<ConnectionId, HashSet<ScannerId>>,
}

impl Inner {
    fn remove(&mut self, id: ScannerId) -> Option<Slot> {
        let slot = self.slots.remove(&id)?;
        if let Some(conn) = slot.connection {
            if let Some(ids) = self.by_connection.get_mut(&conn) {
                ids.remove(&id);
                if ids.is_empty() {
                    self.by_connection.remove(&conn);
                }
            }
        }
        Some(slot)
    }

    fn allocate_id(&mut self) -> ScannerId {
        loop {
            let id = self.next_id;
            self.next_id = self.next_id.checked_add(1).unwrap_or(0);
            if !self.slots.contains_key(&id) {
                return id;
            }
        }
    }
}

/// Why a scanner could not be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    #[error("too many open scanners ({limit}); close finished scanners with scannerClose")]
    TooManyScanners { limit: usize },
}

/// The open scanners of one Thrift1 service.
pub struct ScannerRegistry {
    inner: Mutex<Inner>,
    lease: Duration,
    max_open: usize,
}

impl ScannerRegistry {
    /// A registry closing scanners idle for `lease`, holding at most `max_open`.
    /// A background thread sweeps expired scanners; it stops when the registry is
    /// dropped.
    pub fn start(lease: Duration, max_open: usize) -> Arc<ScannerRegistry> {
        let registry = Arc::new(ScannerRegistry {
            inner: Mutex::new(Inner::default()),
            lease,
            max_open: max_open.max(1),
        });
        let weak = Arc::downgrade(&registry);
        let period = (lease / 4).clamp(Duration::from_millis(10), Duration::from_secs(1));
        let spawned = std::thread::Builder::new()
            .name("thrift1-scanner-sweeper".into())
            .spawn(move || sweep_until_dropped(weak, period));
        if let Err(e) = spawned {
            tracing::warn!("no scanner sweeper thread ({e}); idle scanners expire on access only");
        }
        registry
    }

    /// The idle time after which a scanner is closed.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Registers a scan opened by `connection`; returns its id.
    pub fn register(
        &self,
        scan: OpenScan,
        connection: Option<ConnectionId>,
    ) -> Result<ScannerId, RegistryError> {
        let mut inner = self.inner.lock();
        if inner.slots.len() >= self.max_open {
            self.expire_locked(&mut inner, Instant::now());
            if inner.slots.len() >= self.max_open {
                return Err(RegistryError::TooManyScanners {
                    limit: self.max_open,
                });
            }
        }
        let id = inner.allocate_id();
        inner.slots.insert(
            id,
            Slot {
                scan: Arc::new(Mutex::new(scan)),
                last_used: Instant::now(),
                connection,
            },
        );
        if let Some(conn) = connection {
            inner.by_connection.entry(conn).or_default().insert(id);
        }
        tracing::debug!(
            scanner = id,
            open_scanners = inner.slots.len(),
            "scanner opened"
        );
        Ok(id)
    }

    /// The scan under `id`, its lease renewed; `None` when unknown or expired.
    pub fn checkout(&self, id: ScannerId) -> Option<Arc<Mutex<OpenScan>>> {
        let now = Instant::now();
        let mut inner = self.inner.lock();
        let slot = inner.slots.get_mut(&id)?;
        if now.duration_since(slot.last_used) <= self.lease || Arc::strong_count(&slot.scan) > 1 {
            slot.last_used = now;
            return Some(Arc::clone(&slot.scan));
        }
        inner.remove(id);
        tracing::info!(
            scanner = id,
            open_scanners = inner.slots.len(),
            "scanner lease expired"
        );
        None
    }

    /// Renews the lease of `id` (after a call on it finished).
    pub fn touch(&self, id: ScannerId) {
        if let Some(slot) = self.inner.lock().slots.get_mut(&id) {
            slot.last_used = Instant::now();
        }
    }

    /// Closes `id`; false when it was unknown or expired.
    pub fn close(&self, id: ScannerId) -> bool {
        let now = Instant::now();
        let mut inner = self.inner.lock();
        let live = inner.slots.get(&id).is_some_and(|s| {
            now.duration_since(s.last_used) <= self.lease || Arc::strong_count(&s.scan) > 1
        });
        let removed = inner.remove(id);
        let open = inner.slots.len();
        drop(inner);
        let closed = removed.is_some() && live;
        if closed {
            tracing::debug!(scanner = id, open_scanners = open, "scanner closed");
        }
        closed
    }

    /// Closes every scanner `connection` opened; returns how many.
    pub fn close_connection(&self, connection: ConnectionId) -> usize {
        let mut inner = self.inner.lock();
        let ids = inner.by_connection.remove(&connection).unwrap_or_default();
        let mut released = Vec::with_capacity(ids.len());
        for id in &ids {
            if let Some(slot) = inner.slots.remove(id) {
                released.push(slot);
            }
        }
        let open = inner.slots.len();
        drop(inner);
        let n = released.len();
        if n > 0 {
            tracing::debug!(%connection, closed = n, open_scanners = open, "connection closed; its scanners were closed");
        }
        n
    }

    /// Closes every scanner idle longer than the lease; returns how many.
    pub fn expire_idle(&self) -> usize {
        let mut inner = self.inner.lock();
        self.expire_locked(&mut inner, Instant::now())
    }

    fn expire_locked(&self, inner: &mut Inner, now: Instant) -> usize {
        let expired: Vec<ScannerId> = inner
            .slots
            .iter()
            .filter(|(_, s)| {
                now.duration_since(s.last_used) > self.lease && Arc::strong_count(&s.scan) == 1
            })
            .map(|(id, _)| *id)
            .collect();
        for id in &expired {
            inner.remove(*id);
        }
        if !expired.is_empty() {
            tracing::info!(
                expired = expired.len(),
                open_scanners = inner.slots.len(),
                "idle scanners closed"
            );
        }
        expired.len()
    }

    /// How many scanners are open.
    pub fn open_count(&self) -> usize {
        self.inner.lock().slots.len()
    }
}

fn sweep_until_dropped(registry: Weak<ScannerRegistry>, period: Duration) {
    loop {
        std::thread::sleep(period);
        match registry.upgrade() {
            Some(r) => {
                r.expire_idle();
            }
            None => return,
        }
    }
}

/// Closes a connection's scanners when the server reports its close.
pub struct ScannerConnectionObserver {
    registry: Weak<ScannerRegistry>,
}

impl ScannerConnectionObserver {
    /// An observer for `registry`.
    pub fn new(registry: &Arc<ScannerRegistry>) -> Self {
        ScannerConnectionObserver {
            registry: Arc::downgrade(registry),
        }
    }
}

impl ConnectionObserver for ScannerConnectionObserver {
    fn on_close(&self, id: ConnectionId) {
        if let Some(r) = self.registry.upgrade() {
            r.close_connection(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    /// Returns `rows` rows, one per result, then nothing.
    struct Counting {
        left: usize,
    }

    impl TableScanner for Counting {
        fn next_rows(&mut self, n: usize) -> BackendResult<Vec<RowResult>> {
            let k = n.min(self.left);
            self.left -= k;
            Ok((0..k)
                .map(|i| RowResult {
                    cells: vec![tabula_storage::Cell {
                        row: Bytes::from(format!("r{i}")),
                        family: Bytes::from_static(b"f"),
                        qualifier: Bytes::new(),
                        timestamp: 1,
                        value: Bytes::new(),
                    }],
                    partial: false,
                })
                .collect())
        }
    }

    fn scan(rows: usize) -> OpenScan {
        OpenScan::new(Box::new(Counting { left: rows }), false)
    }

    #[test]
    fn ids_are_sequential_from_zero() {
        let r = ScannerRegistry::start(Duration::from_secs(60), 100);
        assert_eq!(r.register(scan(1), None), Ok(0));
        assert_eq!(r.register(scan(1), None), Ok(1));
        assert!(r.close(0));
        assert_eq!(r.register(scan(1), None), Ok(2));
        assert_eq!(r.open_count(), 2);
    }

    #[test]
    fn closed_ids_are_invalid() {
        let r = ScannerRegistry::start(Duration::from_secs(60), 100);
        let id = r.register(scan(1), None).unwrap();
        assert!(r.checkout(id).is_some());
        assert!(r.close(id));
        assert!(r.checkout(id).is_none());
        assert!(!r.close(id));
        assert!(r.checkout(12345).is_none());
    }

    #[test]
    fn scans_end_with_empty_batches_forever() {
        let mut s = scan(3);
        assert_eq!(s.next(2).unwrap().len(), 2);
        assert_eq!(s.next(2).unwrap().len(), 1);
        assert!(s.next(2).unwrap().is_empty());
        assert!(s.next(2).unwrap().is_empty());
        assert!(scan(3).next(0).unwrap().is_empty());
    }

    #[test]
    fn idle_scanners_expire_and_calls_renew_the_lease() {
        let r = ScannerRegistry::start(Duration::from_millis(150), 100);
        let idle = r.register(scan(1), None).unwrap();
        let busy = r.register(scan(1), None).unwrap();
        for _ in 0..6 {
            std::thread::sleep(Duration::from_millis(50));
            assert!(r.checkout(busy).is_some());
        }
        assert!(
            r.checkout(idle).is_none(),
            "idle scanner outlived its lease"
        );
        assert_eq!(r.open_count(), 1);
    }

    #[test]
    fn a_scanner_in_use_does_not_expire() {
        let r = ScannerRegistry::start(Duration::from_millis(50), 100);
        let id = r.register(scan(1), None).unwrap();
        let held = r.checkout(id).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(r.expire_idle(), 0);
        drop(held);
        std::thread::sleep(Duration::from_millis(100));
        assert!(r.checkout(id).is_none());
    }

    #[test]
    fn closing_a_connection_closes_only_its_scanners() {
        let r = ScannerRegistry::start(Duration::from_secs(60), 100);
        let a = r.register(scan(1), Some(ConnectionId(1))).unwrap();
        let b = r.register(scan(1), Some(ConnectionId(2))).unwrap();
        let c = r.register(scan(1), None).unwrap();
        let observer = ScannerConnectionObserver::new(&r);
        observer.on_close(ConnectionId(1));
        assert!(r.checkout(a).is_none());
        assert!(r.checkout(b).is_some());
        assert!(r.checkout(c).is_some());
        assert_eq!(r.close_connection(ConnectionId(2)), 1);
        assert_eq!(r.open_count(), 1);
    }

    #[test]
    fn the_open_limit_is_enforced_and_named() {
        let r = ScannerRegistry::start(Duration::from_secs(60), 2);
        r.register(scan(1), None).unwrap();
        r.register(scan(1), None).unwrap();
        let err = r.register(scan(1), None).unwrap_err();
        assert_eq!(err, RegistryError::TooManyScanners { limit: 2 });
        assert!(err.to_string().contains('2'));
    }

    #[test]
    fn the_sweeper_frees_idle_scanners_without_calls() {
        let r = ScannerRegistry::start(Duration::from_millis(40), 100);
        r.register(scan(1), None).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(r.open_count(), 0);
    }
}
