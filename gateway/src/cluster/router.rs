//! The router: finds which tablet, on which regionserver, holds a row.
//!
//! Owns: the three-level lookup (lock service file -> root tablet -> METADATA
//! tablet -> user tablet) and the client-side location cache in front of it. The
//! cache fills lazily; callers invalidate entries when a regionserver answers "not
//! serving" (the tablet moved or split) and look again.
//! Must not: apply mutations or read user data.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use tabula_coordinator::catalog::{self, TabletLocation, META_TABLE};
use tabula_coordinator::ServerRef;
use tabula_regionserver::TabletService;

use super::control::Control;
use super::unavailable::{Unavailable, UNAVAILABLE};
use crate::backend::{BackendError, BackendResult};

/// Cached locations of one table, keyed by start row. Shared: a cache hit hands
/// out a reference count, not a copy of the location.
type TableCache = BTreeMap<Bytes, Arc<TabletLocation>>;

/// The location cache of every table: read without a lock on the per-call path
/// (a lock's shared counter would be one more cache line the threads serving
/// calls pass back and forth), replaced whole by each change.
type LocationCache = HashMap<Bytes, Arc<TableCache>>;

/// Locates tablets, with a cache.
pub struct Router {
    coordinator: Arc<dyn Control>,
    cache: ArcSwap<LocationCache>,
    /// Serializes the changes of `cache` (each copies the table it changes).
    cache_changes: Mutex<()>,
    meta_cache: RwLock<TableCache>,
}

fn io(message: impl Into<String>) -> BackendError {
    BackendError::Io {
        message: message.into(),
        retry: true,
    }
}

impl Router {
    /// A router asking `coordinator` for the root location and regionservers.
    pub fn new(coordinator: Arc<dyn Control>) -> Self {
        Router {
            coordinator,
            cache: ArcSwap::from_pointee(HashMap::new()),
            cache_changes: Mutex::new(()),
            meta_cache: RwLock::new(BTreeMap::new()),
        }
    }

    /// The regionserver named `name`; one the coordinator no longer knows (gone,
    /// its tablets moving) answers every call "not serving".
    pub fn server(&self, name: &str) -> BackendResult<Arc<dyn TabletService>> {
        Ok(self
            .coordinator
            .server(name)
            .unwrap_or_else(|| Arc::new(Unavailable)))
    }

    fn cached(cache: &TableCache, row: &[u8]) -> Option<Arc<TabletLocation>> {
        Self::cached_ref(cache, row).cloned()
    }

    fn cached_ref<'c>(cache: &'c TableCache, row: &[u8]) -> Option<&'c Arc<TabletLocation>> {
        cache
            .range::<[u8], _>((Bound::Unbounded, Bound::Included(row)))
            .next_back()
            .map(|(_, l)| l)
            .filter(|l| l.contains(row))
    }

    /// The METADATA tablet holding catalog key `key`.
    fn meta_location(&self, key: &[u8]) -> BackendResult<Arc<TabletLocation>> {
        if let Some(l) = Self::cached(&self.meta_cache.read(), key) {
            return Ok(l);
        }
        let root = self
            .coordinator
            .root_location()
            .map_err(|e| io(e.to_string()))?;
        let svc = self.server(&root.server)?;
        let search = catalog::search_key(META_TABLE.as_bytes(), key);
        let (_, stop) = catalog::table_range(META_TABLE.as_bytes());
        let loc = catalog::scan_catalog(svc.as_ref(), root.tablet_id, &search, &stop, 1)
            .map_err(|e| io(e.to_string()))?
            .into_iter()
            .next()
            .ok_or_else(|| io("the root tablet lists no METADATA tablet"))?;
        let loc = Arc::new(loc);
        self.meta_cache
            .write()
            .insert(loc.start_row.clone(), Arc::clone(&loc));
        Ok(loc)
    }

    /// The tablet of `table` (canonical name) holding `row` and the regionserver
    /// serving it, borrowed: the per-call path of point reads and writes takes no
    /// reference count on a cache hit (a count every call bumps is one cache line
    /// passed between the cores).
    pub fn route(&self, table: &[u8], row: &[u8]) -> BackendResult<(u64, ServerRef<'_>)> {
        let hit = {
            let cache = self.cache.load();
            cache.get(table).and_then(|c| {
                Self::cached_ref(c, row).map(|l| (l.tablet_id, self.server_ref(&l.server)))
            })
        };
        match hit {
            Some((tablet, server)) => Ok((tablet, server?)),
            None => {
                let loc = self.locate(table, row)?;
                Ok((loc.tablet_id, self.server_ref(&loc.server)?))
            }
        }
    }

    /// The regionserver named `name`, borrowed from the coordinator when it is in
    /// this process; see [`Router::server`] for one it no longer knows.
    fn server_ref(&self, name: &str) -> BackendResult<ServerRef<'_>> {
        Ok(self
            .coordinator
            .server_ref(name)
            .unwrap_or(ServerRef::Local(&UNAVAILABLE)))
    }

    /// The tablet of `table` (canonical name) holding `row`.
    pub fn locate(&self, table: &[u8], row: &[u8]) -> BackendResult<Arc<TabletLocation>> {
        if let Some(l) = self
            .cache
            .load()
            .get(table)
            .and_then(|c| Self::cached(c, row))
        {
            return Ok(l);
        }
        let key = catalog::search_key(table, row);
        let loc = self.lookup_first_at_or_after(table, &key)?;
        if !loc.contains(row) {
            return Err(io(format!(
                "the catalog has no tablet of table {} for this row",
                String::from_utf8_lossy(table)
            )));
        }
        Ok(loc)
    }

    /// The tablet of `table` whose end row is `end` (the tablet before the one
    /// starting at `end`), for reverse scans.
    pub fn locate_ending_at(&self, table: &[u8], end: &[u8]) -> BackendResult<Arc<TabletLocation>> {
        if let Some(c) = self.cache.load().get(table) {
            if let Some(l) = c.values().find(|l| l.end_row.as_ref() == end) {
                return Ok(Arc::clone(l));
            }
        }
        let key = catalog::row_key(table, end);
        let loc = self.lookup_first_at_or_after(table, &key)?;
        if loc.end_row.as_ref() != end {
            return Err(io("no tablet ends at the requested row"));
        }
        Ok(loc)
    }

    /// The first catalog row of `table` at or after catalog key `key`, retrying once
    /// with a fresh METADATA location if the cached one is stale.
    fn lookup_first_at_or_after(
        &self,
        table: &[u8],
        key: &[u8],
    ) -> BackendResult<Arc<TabletLocation>> {
        let (_, stop) = catalog::table_range(table);
        for attempt in 0..3 {
            let meta = self.meta_location(key)?;
            let svc = self.server(&meta.server)?;
            match catalog::scan_catalog(
                svc.as_ref(),
                meta.tablet_id,
                &Bytes::copy_from_slice(key),
                &stop,
                1,
            ) {
                Ok(rows) => {
                    let loc = rows.into_iter().next().ok_or_else(|| {
                        BackendError::TableNotFound(String::from_utf8_lossy(table).into_owned())
                    })?;
                    if loc.server.is_empty() {
                        return Err(io(format!("tablet {} is not assigned", loc.tablet_id)));
                    }
                    let loc = Arc::new(loc);
                    self.change_table_cache(table, |c| {
                        c.insert(loc.start_row.clone(), Arc::clone(&loc));
                    });
                    return Ok(loc);
                }
                Err(e) if attempt < 2 => {
                    tracing::debug!(error = %e, "METADATA lookup failed; refreshing its location");
                    self.meta_cache.write().clear();
                }
                Err(e) => return Err(io(e.to_string())),
            }
        }
        Err(io("METADATA lookup failed"))
    }

    /// Forgets a cached location (the tablet moved or split).
    pub fn invalidate(&self, table: &[u8], loc: &TabletLocation) {
        self.change_cached_table(table, |c| {
            c.remove(&loc.start_row);
            c.retain(|_, l| l.tablet_id != loc.tablet_id);
        });
    }

    /// Forgets every cached location of tablet `tablet_id` of `table` (it moved,
    /// or split: the parent's neighbours stay valid but its range is stale).
    pub fn invalidate_tablet(&self, table: &[u8], tablet_id: u64) {
        self.change_cached_table(table, |c| c.retain(|_, l| l.tablet_id != tablet_id));
    }

    /// Forgets every cached location of a table (dropped, disabled, truncated).
    pub fn forget_table(&self, table: &[u8]) {
        let _changing = self.cache_changes.lock();
        let current = self.cache.load_full();
        if current.contains_key(table) {
            let mut next = LocationCache::clone(&current);
            next.remove(table);
            self.cache.store(Arc::new(next));
        }
    }

    /// Applies `change` to a copy of `table`'s cached locations (empty if none are
    /// cached) and publishes it.
    fn change_table_cache(&self, table: &[u8], change: impl FnOnce(&mut TableCache)) {
        let _changing = self.cache_changes.lock();
        let current = self.cache.load_full();
        let mut locations = current
            .get(table)
            .map(|c| TableCache::clone(c))
            .unwrap_or_default();
        change(&mut locations);
        let mut next = LocationCache::clone(&current);
        next.insert(Bytes::copy_from_slice(table), Arc::new(locations));
        self.cache.store(Arc::new(next));
    }

    /// Like [`Router::change_table_cache`], for a table with cached locations only.
    fn change_cached_table(&self, table: &[u8], change: impl FnOnce(&mut TableCache)) {
        if self.cache.load().contains_key(table) {
            self.change_table_cache(table, change);
        }
    }
}
