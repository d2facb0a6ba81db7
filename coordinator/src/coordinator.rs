//! The coordinator: the one process that changes the shape of the cluster.
//!
//! Owns: the `Coordinator` itself: election through the lock service and its
//! session, the registry of regionservers, table and namespace descriptors (stored
//! in the lock service), bootstrap of the root and METADATA tablets, the catalog's
//! reads and writes, and the maintenance threads. Its other duties live in the
//! submodules, each an `impl Coordinator` of its own: `assignment` (every tablet
//! served, catalog repair, a dead server's log), `admin` (tables, families,
//! namespaces, permissions, compactions on request), `splitting` (by size),
//! `balancing` (moves by count, spread and load, splits for load) and `placement`
//! (which server a tablet being opened goes to).
//! Must not: serve reads or writes of user data, or cache locations for clients.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use tabula_regionserver::{RsError, TabletService};
use tabula_storage::tablet::TabletDescriptor;
use tabula_storage::Durability;

use crate::balance::{HotSplitRule, RequestRates};
use crate::catalog::{
    self, CatalogError, TabletLocation, FIRST_USER_TABLET_ID, META_TABLE, ROOT_TABLET_ID,
};
use crate::directory::{
    self, CoordinatorAddress, CLUSTER_ID_FILE, COORDINATOR_LOCK, DELETING_PREFIX,
    NAMESPACES_PREFIX, SPLIT_PLANS_PREFIX, TABLES_PREFIX,
};
use crate::lock::{LockError, LockService, LockToken, SessionId, Txn, TxnOutcome, Versioned};
use crate::tables::{
    canonical_name, canonical_slice, NamespaceDescriptor, TableDescriptor, DEFAULT_NAMESPACE,
    SYSTEM_NAMESPACE,
};

mod admin;
mod assignment;
mod balancing;
mod placement;
mod splitting;

use balancing::RoundFigures;
use placement::Placement;

/// How long a starting coordinator waits for the coordinator lock by default.
const COORDINATOR_LOCK_WAIT: Duration = Duration::from_secs(30);
/// How often a standby coordinator says it is still waiting.
const STANDBY_NOTICE: Duration = Duration::from_secs(60);
const TABLET_ID_COUNTER: &str = "/tabula/next-tablet-id";

/// Why a coordinator call failed.
#[derive(Debug, thiserror::Error)]
pub enum CoordError {
    #[error("table {0} does not exist")]
    TableNotFound(String),
    #[error("table {0} already exists")]
    TableExists(String),
    #[error("table {0} is disabled")]
    TableDisabled(String),
    #[error("table {0} is enabled")]
    TableNotDisabled(String),
    #[error("namespace {0} does not exist")]
    NamespaceNotFound(String),
    #[error("namespace {0} already exists")]
    NamespaceExists(String),
    #[error("namespace {0} is not empty")]
    NamespaceNotEmpty(String),
    #[error("column family {family} does not exist in table {table}")]
    NoSuchFamily { table: String, family: String },
    #[error("{0}")]
    InvalidArgument(String),
    #[error("no regionserver is available")]
    NoServers,
    #[error("another coordinator holds the coordinator lock")]
    AnotherCoordinator,
    /// This coordinator lost its session or its lock: another may act now, so it
    /// must not change anything again.
    #[error("this coordinator was deposed: {0}")]
    Deposed(String),
    #[error("lock service: {0}")]
    Lock(#[from] LockError),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("regionserver: {0}")]
    Rs(#[from] RsError),
    #[error("stored {what} is corrupt")]
    Corrupt { what: String },
    /// A coordinator in another process refused a call for a reason without a
    /// variant of its own, or could not be reached; `retry` says whether trying
    /// again may succeed.
    #[error("{message}")]
    Remote { message: String, retry: bool },
    /// A server whose tablets were to move is registered again: they stay.
    #[error("regionserver {0} is registered; its tablets stay where they are")]
    ServerAlive(String),
}

/// Result type of coordinator calls.
pub type CoordResult<T> = std::result::Result<T, CoordError>;

/// Settings of the coordinator.
#[derive(Debug, Clone)]
pub struct CoordinatorOptions {
    /// Lease of the coordinator's lock-service session.
    pub session_ttl: Duration,
    /// A user tablet whose files exceed this is split in two (0 = never).
    pub split_threshold_bytes: u64,
    /// How often splits and balance are considered.
    pub maintenance_interval: Duration,
    /// When balancing splits a tablet too busy for any trade to help.
    pub hot_split: HotSplitRule,
    /// How long a starting coordinator waits for the coordinator lock (held by another
    /// coordinator, or by one that died and whose lease must lapse); `None`: as long
    /// as it takes (a standby coordinator, taking over when the active one is gone).
    pub lock_wait: Option<Duration>,
    /// When the session or the lock is lost, take the lock again with a new session
    /// instead of standing down. Only for a lock service no other coordinator can
    /// reach (the embedded one): there, a loss means this process stalled past its
    /// lease, and nobody else can have changed anything meanwhile.
    pub retake_lost_lock: bool,
    /// Where other processes reach this coordinator (written in its lock); `None`
    /// when no other process can (the embedded lock service).
    pub address: Option<CoordinatorAddress>,
}

impl CoordinatorOptions {
    /// The coordinator lock's value.
    fn lock_info(&self) -> Vec<u8> {
        match &self.address {
            Some(address) => address.encode(),
            None => b"coordinator".to_vec(),
        }
    }
}

impl Default for CoordinatorOptions {
    fn default() -> Self {
        CoordinatorOptions {
            session_ttl: Duration::from_secs(10),
            split_threshold_bytes: 256 << 20,
            maintenance_interval: Duration::from_secs(10),
            hot_split: HotSplitRule {
                min_rate: 5000.0,
                min_bytes: 16 << 20,
            },
            lock_wait: Some(COORDINATOR_LOCK_WAIT),
            retake_lost_lock: false,
            address: None,
        }
    }
}

/// A regionserver as routing finds it: borrowed when it lives in this process,
/// shared when it is a client of one in another process.
pub enum ServerRef<'a> {
    Local(&'a (dyn TabletService + 'static)),
    Remote(Arc<dyn TabletService>),
}

impl std::ops::Deref for ServerRef<'_> {
    type Target = dyn TabletService;

    fn deref(&self) -> &Self::Target {
        match self {
            ServerRef::Local(server) => *server,
            ServerRef::Remote(server) => server.as_ref(),
        }
    }
}

/// What a coordinator calls when it is deposed, with the reason.
pub type DeposedHook = Box<dyn Fn(&str) + Send + Sync>;

/// The coordinator of one cluster.
pub struct Coordinator {
    lock: Arc<dyn LockService>,
    /// The session and the coordinator lock as taken with it: every write to the
    /// lock service is fenced by the lock, so a deposed coordinator's late writes
    /// fail. Replaced only when a lost lock is taken again
    /// ([`CoordinatorOptions::retake_lost_lock`]).
    held: RwLock<(SessionId, LockToken)>,
    /// Serializes taking a lost lock again.
    retaking: Mutex<()>,
    /// Set once the session or the lock is lost; never cleared.
    deposed: AtomicBool,
    /// Called once when this coordinator is deposed (`tabula serve` exits).
    on_deposed: std::sync::OnceLock<DeposedHook>,
    opts: CoordinatorOptions,
    /// The regionservers of this process, fixed at construction (read without a
    /// lock).
    servers: BTreeMap<String, Arc<dyn TabletService>>,
    /// Regionservers of other processes, as they register and go away.
    remote_servers: RwLock<BTreeMap<String, Arc<dyn TabletService>>>,
    /// The user tables, read on every data call without a lock; replaced whole
    /// when a table is created, changed or deleted.
    tables: ArcSwap<BTreeMap<Bytes, TableDescriptor>>,
    namespaces: RwLock<BTreeMap<String, NamespaceDescriptor>>,
    /// Serializes admin operations (create/delete/enable/disable/split).
    admin: Mutex<()>,
    cluster_id: String,
    stopping: AtomicBool,
    /// Timestamps of catalog writes.
    catalog_clock: catalog::CatalogClock,
    /// The tablets' request counters as the last balancing round read them.
    request_rates: Mutex<RequestRates>,
    /// Each server's figures as the last balancing round read them.
    last_round: Mutex<RoundFigures>,
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn shown(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

fn table_path(name: &[u8]) -> String {
    format!("{TABLES_PREFIX}{}", shown(name))
}

/// `gaps` (start, end; an empty end is the table's end) cut at every key of
/// `keys` strictly inside one.
fn cut_at(gaps: Vec<(Bytes, Bytes)>, keys: &[Bytes]) -> Vec<(Bytes, Bytes)> {
    let mut out = Vec::with_capacity(gaps.len() + keys.len());
    for (start, end) in gaps {
        let mut from = start;
        for k in keys {
            if *k > from && (end.is_empty() || *k < end) {
                out.push((from, k.clone()));
                from = k.clone();
            }
        }
        out.push((from, end));
    }
    out
}

fn plan_path(name: &[u8]) -> String {
    format!("{SPLIT_PLANS_PREFIX}{}", shown(name))
}

fn deleting_path(name: &[u8]) -> String {
    format!("{DELETING_PREFIX}{}", shown(name))
}

impl Coordinator {
    /// Becomes the coordinator: takes the coordinator lock, loads descriptors,
    /// bootstraps the catalog on a new cluster and assigns every tablet to one of
    /// `servers`.
    pub fn start(
        lock: Arc<dyn LockService>,
        servers: Vec<Arc<dyn TabletService>>,
        opts: CoordinatorOptions,
    ) -> CoordResult<Arc<Coordinator>> {
        Self::start_with_remote(lock, servers, Vec::new(), opts)
    }

    /// [`Coordinator::start`] with regionservers of other processes already
    /// registered: the tablets they serve stay there.
    pub fn start_with_remote(
        lock: Arc<dyn LockService>,
        servers: Vec<Arc<dyn TabletService>>,
        remote: Vec<Arc<dyn TabletService>>,
        opts: CoordinatorOptions,
    ) -> CoordResult<Arc<Coordinator>> {
        let session = lock.create_session(opts.session_ttl)?;
        let token = Self::take_coordinator_lock(
            &*lock,
            session,
            &opts.lock_info(),
            opts.session_ttl,
            opts.lock_wait,
        )?;
        let cluster_id = match lock.get(CLUSTER_ID_FILE)? {
            Some(v) => String::from_utf8_lossy(&v.value).into_owned(),
            None => {
                let id = format!("tabula-{:x}", now_ms());
                let txn = Txn::new()
                    .fenced_by(&token)
                    .put(CLUSTER_ID_FILE, id.as_bytes());
                if let TxnOutcome::Failed { .. } = lock.commit(&txn)? {
                    return Err(CoordError::Deposed(
                        "the coordinator lock was taken from it while starting".into(),
                    ));
                }
                id
            }
        };
        let coord = Arc::new(Coordinator {
            lock,
            held: RwLock::new((session, token)),
            retaking: Mutex::new(()),
            deposed: AtomicBool::new(false),
            on_deposed: std::sync::OnceLock::new(),
            cluster_id,
            opts,
            servers: servers.into_iter().map(|s| (s.name(), s)).collect(),
            remote_servers: RwLock::new(remote.into_iter().map(|s| (s.name(), s)).collect()),
            tables: ArcSwap::from_pointee(BTreeMap::new()),
            namespaces: RwLock::new(BTreeMap::new()),
            admin: Mutex::new(()),
            stopping: AtomicBool::new(false),
            catalog_clock: catalog::CatalogClock::default(),
            request_rates: Mutex::new(RequestRates::default()),
            last_round: Mutex::new(RoundFigures::default()),
        });
        coord.load_descriptors()?;
        {
            let _g = coord.admin.lock();
            coord.assign(true)?;
        }
        Ok(coord)
    }

    /// Waits up to `limit` (`None`: as long as it takes) for the coordinator lock,
    /// renewing `session` between waits: the lock may be held by a coordinator that
    /// died and whose lease must lapse first, or by the active coordinator this one
    /// stands by for, and the waiting session's own lease (no heartbeat runs yet)
    /// must not lapse meanwhile.
    fn take_coordinator_lock(
        lock: &dyn LockService,
        session: SessionId,
        lock_info: &[u8],
        session_ttl: Duration,
        limit: Option<Duration>,
    ) -> CoordResult<LockToken> {
        let started = std::time::Instant::now();
        let wait = (session_ttl / 3).max(Duration::from_millis(100));
        let mut noticed = Duration::ZERO;
        loop {
            if let Some(token) = lock.lock(COORDINATOR_LOCK, session, lock_info, wait)? {
                if limit.is_none() && !noticed.is_zero() {
                    tracing::info!("the standby coordinator took over");
                }
                return Ok(token);
            }
            let waited = started.elapsed();
            match limit {
                Some(limit) if waited >= limit => return Err(CoordError::AnotherCoordinator),
                Some(_) => {}
                None if waited >= noticed => {
                    tracing::info!(
                        waited_secs = waited.as_secs(),
                        "standing by: another coordinator holds the coordinator lock"
                    );
                    noticed = waited + STANDBY_NOTICE;
                }
                None => {}
            }
            lock.keep_alive(session)?;
        }
    }

    /// The cluster's id.
    pub fn cluster_id(&self) -> &str {
        &self.cluster_id
    }

    /// The lock service.
    pub fn lock_service(&self) -> &Arc<dyn LockService> {
        &self.lock
    }

    /// Keeps the coordinator's session alive and checks it still holds the
    /// coordinator lock; call periodically. Deposes this coordinator when the session
    /// ended or the lock is gone.
    pub fn heartbeat(&self) -> CoordResult<()> {
        self.check_not_deposed()?;
        let (session, token) = self.held.read().clone();
        let lost = match self.lock.keep_alive(session) {
            Err(LockError::SessionExpired(_)) => "its lock-service session ended",
            Err(e) => return Err(e.into()),
            Ok(()) if !self.lock.holds_lock(&token)? => "the coordinator lock was taken from it",
            Ok(()) => return Ok(()),
        };
        self.retake(&token, lost)
    }

    /// After the lock `seen` was lost: takes it again with a new session when the
    /// options allow (once, however many callers noticed), else stands down.
    fn retake(&self, seen: &LockToken, lost: &str) -> CoordResult<()> {
        if !self.opts.retake_lost_lock {
            return Err(self.depose(lost));
        }
        let _one_at_a_time = self.retaking.lock();
        let (session, token) = self.held.read().clone();
        if token != *seen {
            return Ok(());
        }
        tracing::warn!(reason = lost, "the coordinator takes its lock again");
        let _ = self.lock.close_session(session);
        let session = self.lock.create_session(self.opts.session_ttl)?;
        let token = Self::take_coordinator_lock(
            &*self.lock,
            session,
            &self.opts.lock_info(),
            self.opts.session_ttl,
            Some(COORDINATOR_LOCK_WAIT),
        )?;
        *self.held.write() = (session, token);
        Ok(())
    }

    /// Calls `hook` (once) when this coordinator is deposed. Only the first hook set
    /// is kept.
    pub fn on_deposed(&self, hook: DeposedHook) {
        let _ = self.on_deposed.set(hook);
    }

    /// True once this coordinator lost its session or its lock.
    pub fn is_deposed(&self) -> bool {
        self.deposed.load(Ordering::Acquire)
    }

    fn check_not_deposed(&self) -> CoordResult<()> {
        if self.is_deposed() {
            return Err(CoordError::Deposed(
                "it lost its lock-service session or lock earlier".into(),
            ));
        }
        Ok(())
    }

    /// Marks this coordinator deposed (the first time: logs it and calls the hook).
    fn depose(&self, why: &str) -> CoordError {
        if !self.deposed.swap(true, Ordering::AcqRel) {
            tracing::error!(reason = why, "this coordinator is deposed and stops acting");
            if let Some(hook) = self.on_deposed.get() {
                hook(why);
            }
        }
        CoordError::Deposed(why.into())
    }

    /// Commits `txn` only while this coordinator still holds its lock. A failed
    /// comparison deposes it unless the lock is intact (then `Ok(Some(current))`
    /// gives the other compared files, in order, for the caller to retry on).
    fn fenced_commit(&self, txn: Txn) -> CoordResult<Option<Vec<Option<Versioned>>>> {
        let lost = "the coordinator lock was taken from it";
        for _attempt in 0..2 {
            self.check_not_deposed()?;
            let token = self.held.read().1.clone();
            match self.lock.commit(&txn.clone().fenced_by(&token))? {
                TxnOutcome::Committed { .. } => return Ok(None),
                TxnOutcome::Failed { mut current } => {
                    // fenced_by added the lock's comparison last.
                    let lock_file = current.pop().flatten();
                    if lock_file.map(|f| f.revision) == Some(token.revision) {
                        return Ok(Some(current));
                    }
                    self.retake(&token, lost)?;
                }
            }
        }
        Err(self.depose(lost))
    }

    /// Writes to the lock service while this coordinator holds its lock.
    fn fenced(&self, txn: Txn) -> CoordResult<()> {
        match self.fenced_commit(txn)? {
            None => Ok(()),
            Some(_) => Err(CoordError::Lock(LockError::Protocol(
                "a write without comparisons of its own failed one".into(),
            ))),
        }
    }

    /// A registered regionserver.
    pub fn server(&self, name: &str) -> Option<Arc<dyn TabletService>> {
        match self.servers.get(name) {
            Some(s) => Some(Arc::clone(s)),
            None => self.remote_servers.read().get(name).cloned(),
        }
    }

    /// The regionserver named `name`: borrowed when it is in this process (the
    /// set is fixed for the coordinator's life, so a routed call takes no reference
    /// count), shared when it is a remote one.
    pub fn server_ref(&self, name: &str) -> Option<ServerRef<'_>> {
        match self.servers.get(name) {
            Some(s) => Some(ServerRef::Local(s.as_ref())),
            None => self
                .remote_servers
                .read()
                .get(name)
                .map(|s| ServerRef::Remote(Arc::clone(s))),
        }
    }

    /// Every registered regionserver.
    pub fn servers(&self) -> Vec<Arc<dyn TabletService>> {
        let mut all: Vec<_> = self.servers.values().cloned().collect();
        all.extend(self.remote_servers.read().values().cloned());
        all
    }

    /// Registers a regionserver of another process: tablets may be placed on it
    /// from now on.
    pub fn add_server(&self, server: Arc<dyn TabletService>) {
        let name = server.name();
        if self.servers.contains_key(&name) {
            return;
        }
        tracing::info!(server = %name, "a regionserver joined");
        self.remote_servers.write().insert(name, server);
    }

    /// Names of the regionservers of other processes.
    pub fn remote_server_names(&self) -> Vec<String> {
        self.remote_servers.read().keys().cloned().collect()
    }

    /// A regionserver of another process is gone (its registration ended): its
    /// commit log is split into recovered edits and its tablets are opened on live
    /// servers. Returns how many tablets moved.
    pub fn server_lost(&self, name: &str) -> CoordResult<usize> {
        self.check_not_deposed()?;
        let _g = self.admin.lock();
        self.remote_servers.write().remove(name);
        tracing::warn!(server = %name, "a regionserver is gone; moving its tablets");
        let moved = self.assign(false)?;
        tracing::info!(server = %name, moved, "the lost regionserver's tablets are served again");
        Ok(moved)
    }

    fn server_or_err(&self, name: &str) -> CoordResult<Arc<dyn TabletService>> {
        self.server(name)
            .ok_or_else(|| CoordError::Catalog(CatalogError::UnknownServer(name.into())))
    }

    // ------------------------------------------------------------ descriptors

    fn load_descriptors(&self) -> CoordResult<()> {
        let mut namespaces = directory::namespaces(&*self.lock)?;
        for builtin in [DEFAULT_NAMESPACE, SYSTEM_NAMESPACE] {
            if !namespaces.contains_key(builtin) {
                let ns = NamespaceDescriptor {
                    name: builtin.into(),
                    configuration: BTreeMap::new(),
                };
                self.fenced(Txn::new().put(format!("{NAMESPACES_PREFIX}{builtin}"), ns.encode()))?;
                namespaces.insert(builtin.into(), ns);
            }
        }
        *self.namespaces.write() = namespaces;
        self.tables.store(Arc::new(directory::tables(&*self.lock)?));
        Ok(())
    }

    fn store_table(&self, t: &TableDescriptor) -> CoordResult<()> {
        self.store_table_with(t, Txn::new())
    }

    /// Stores `t`'s descriptor in one transaction with the writes of `also`.
    fn store_table_with(&self, t: &TableDescriptor, also: Txn) -> CoordResult<()> {
        self.fenced(also.put(table_path(&t.name), t.encode()))?;
        self.tables.rcu(|tables| {
            let mut tables = BTreeMap::clone(tables);
            tables.insert(t.name.clone(), t.clone());
            tables
        });
        Ok(())
    }

    /// A user table's descriptor (by any spelling of its name).
    pub fn table(&self, name: &[u8]) -> Option<TableDescriptor> {
        self.tables.load().get(canonical_slice(name)).cloned()
    }

    /// Whether user table `name` (any spelling) is enabled and whether it refuses
    /// changes, `None` when there is no such table: the per-call check of the data
    /// path, which copies nothing. The table's canonical name is
    /// `canonical_slice(name)`.
    pub fn table_state(&self, name: &[u8]) -> Option<crate::tables::TableState> {
        self.tables
            .load()
            .get(canonical_slice(name))
            .map(|t| t.state())
    }

    /// The durability a user table gives writes that name none (`Some(None)`:
    /// USE_DEFAULT); `None` when there is no such table. Copies nothing.
    pub fn table_durability(&self, name: &[u8]) -> Option<Option<tabula_storage::Durability>> {
        self.tables
            .load()
            .get(canonical_slice(name))
            .map(|t| t.durability)
    }

    fn table_or_err(&self, name: &[u8]) -> CoordResult<TableDescriptor> {
        self.table(name)
            .ok_or_else(|| CoordError::TableNotFound(shown(name)))
    }

    /// Every user table.
    pub fn tables(&self) -> Vec<TableDescriptor> {
        self.tables.load().values().cloned().collect()
    }

    /// The system tables (the catalog), described like user tables.
    pub fn system_tables(&self) -> Vec<TableDescriptor> {
        catalog::system_tables()
    }

    // ------------------------------------------------------------ tablet ids

    /// Allocates `n` consecutive tablet ids.
    fn allocate_ids(&self, n: u64) -> CoordResult<u64> {
        loop {
            let current = self.lock.get(TABLET_ID_COUNTER)?;
            let (expected, first) = match &current {
                Some(v) => {
                    let b: [u8; 8] =
                        v.value
                            .as_slice()
                            .try_into()
                            .map_err(|_| CoordError::Corrupt {
                                what: TABLET_ID_COUNTER.into(),
                            })?;
                    (Some(v.revision), u64::from_be_bytes(b))
                }
                None => (None, FIRST_USER_TABLET_ID),
            };
            let next = first + n;
            let txn = match expected {
                Some(revision) => Txn::new().require_revision(TABLET_ID_COUNTER, revision),
                None => Txn::new().require_absent(TABLET_ID_COUNTER),
            };
            match self.fenced_commit(txn.put(TABLET_ID_COUNTER, next.to_be_bytes().to_vec()))? {
                None => return Ok(first),
                Some(_) => continue,
            }
        }
    }

    // ------------------------------------------------------------ catalog access

    /// Where the root tablet is.
    pub fn root_location(&self) -> CoordResult<TabletLocation> {
        directory::root_location(&*self.lock)
    }

    /// Every METADATA tablet, from the root tablet.
    pub fn meta_tablets(&self) -> CoordResult<Vec<TabletLocation>> {
        let root = self.root_location()?;
        Ok(catalog::meta_tablets(&root, &|name| self.server(name))?)
    }

    /// The METADATA tablet whose rows include catalog key `key`.
    fn meta_tablet_for(&self, key: &[u8]) -> CoordResult<TabletLocation> {
        let root = self.root_location()?;
        let svc = self.server_or_err(&root.server)?;
        let search = catalog::search_key(META_TABLE.as_bytes(), key);
        let (_, stop) = catalog::table_range(META_TABLE.as_bytes());
        catalog::scan_catalog(svc.as_ref(), ROOT_TABLET_ID, &search, &stop, 1)?
            .into_iter()
            .next()
            .ok_or_else(|| {
                CoordError::Catalog(CatalogError::NoTablet {
                    table: META_TABLE.into(),
                    row: key.to_vec(),
                })
            })
    }

    /// Every tablet of a user table, in row order.
    pub fn table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        let root = self.root_location()?;
        Ok(catalog::table_tablets(
            &root,
            &|server| self.server(server),
            &canonical_name(name),
        )?)
    }

    fn write_catalog(&self, loc: &TabletLocation) -> CoordResult<()> {
        let m = catalog::location_mutation(loc, self.catalog_timestamp());
        self.apply_catalog(&m)
    }

    /// The timestamp of the next catalog write (see [`catalog::CatalogClock`]).
    fn catalog_timestamp(&self) -> i64 {
        self.catalog_clock.next(now_ms())
    }

    fn apply_catalog(&self, m: &tabula_storage::RowMutation) -> CoordResult<()> {
        if m.row.starts_with(META_TABLE.as_bytes())
            && matches!(m.row.get(META_TABLE.len()), Some(0x00) | Some(0x01))
        {
            // A row about a METADATA tablet: it lives in the root tablet.
            let root = self.root_location()?;
            self.server_or_err(&root.server)?
                .mutate(ROOT_TABLET_ID, m, Durability::Sync)?;
        } else {
            let meta = self.meta_tablet_for(&m.row)?;
            self.server_or_err(&meta.server)?
                .mutate(meta.tablet_id, m, Durability::Sync)?;
        }
        Ok(())
    }

    // ------------------------------------------------------------ assignment

    fn catalog_descriptor(id: u64, name: &str, start: Bytes, end: Bytes) -> TabletDescriptor {
        TabletDescriptor {
            id,
            schema: catalog::catalog_schema(name),
            start_row: start,
            end_row: end,
        }
    }

    /// Ids of every tablet the catalog lists: the root tablet, the METADATA tablets
    /// and every user tablet (of enabled and disabled tables alike).
    fn live_tablet_ids(&self) -> CoordResult<HashSet<u64>> {
        let mut live = HashSet::from([ROOT_TABLET_ID]);
        let everything = Bytes::new();
        for meta in self.meta_tablets()? {
            live.insert(meta.tablet_id);
            let svc = self.server_or_err(&meta.server)?;
            let rows = catalog::scan_catalog(
                svc.as_ref(),
                meta.tablet_id,
                &everything,
                &everything,
                usize::MAX,
            )?;
            live.extend(rows.iter().map(|l| l.tablet_id));
        }
        Ok(live)
    }

    /// Deletes the directories of tablets the catalog no longer lists once no live
    /// tablet reads their files: a split parent after both children rewrote their
    /// halves, what a dropped table's split parents left. Returns how many went.
    pub fn collect_garbage(&self) -> CoordResult<usize> {
        // Splits and table creation write tablet directories before the catalog
        // lists them: hold them back while the live set is read and used.
        let _g = self.admin.lock();
        let live = self.live_tablet_ids()?;
        let mut removed = 0;
        for server in self.servers() {
            removed += server.collect_garbage(&live)?;
        }
        Ok(removed)
    }

    /// One round of background maintenance: session heartbeat, splits and garbage.
    pub fn maintenance(&self) {
        self.keep_session();
        self.check_splits();
        self.check_garbage();
    }

    fn check_garbage(&self) {
        if let Err(e) = self.collect_garbage() {
            tracing::warn!(error = %e, "collecting retired tablet directories failed");
        }
    }

    fn keep_session(&self) {
        match self.heartbeat() {
            Ok(()) | Err(CoordError::Deposed(_)) => {}
            Err(e) => tracing::warn!(error = %e, "coordinator heartbeat failed; retrying"),
        }
    }

    fn check_splits(&self) {
        if let Err(e) = self.split_large_tablets() {
            tracing::warn!(error = %e, "split check failed");
        }
    }

    fn check_balance(&self) {
        if let Err(e) = self.balance() {
            tracing::warn!(error = %e, "balancing tablets failed");
        }
    }

    /// Runs the background work until [`Coordinator::stop`], on two threads: the
    /// session heartbeat (every third of the session TTL) on one, split checks and
    /// garbage collection (every maintenance interval, or as often as the heartbeat
    /// if that is sooner) on the other. They are apart because a split
    /// flushes its tablet and may wait for a compaction, which can outlast the
    /// session: the heartbeat must never wait behind it.
    pub fn spawn_maintenance(self: &Arc<Self>) -> Vec<std::thread::JoinHandle<()>> {
        let heartbeat_every = self.opts.session_ttl / 3;
        // Split checks keep the pace they had beside the heartbeat.
        let splits_every = self.opts.maintenance_interval.min(heartbeat_every);
        let mut threads = Vec::new();
        let lease = self.every("tabula-coord-lease", heartbeat_every, Self::keep_session);
        let splits = self.every("tabula-coordinator", splits_every, |c| {
            c.check_splits();
            c.check_balance();
            c.check_garbage();
        });
        threads.extend(lease);
        threads.extend(splits);
        threads
    }

    /// A thread calling `work` every `period` until stopped.
    fn every(
        self: &Arc<Self>,
        name: &str,
        period: Duration,
        work: fn(&Coordinator),
    ) -> Option<std::thread::JoinHandle<()>> {
        let me = Arc::clone(self);
        let tick = Duration::from_millis(200).min(period.max(Duration::from_millis(1)));
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut waited = Duration::ZERO;
                while !me.stopping.load(Ordering::Acquire) {
                    std::thread::sleep(tick);
                    waited += tick;
                    if waited >= period {
                        waited = Duration::ZERO;
                        work(&me);
                    }
                }
            })
            .ok()
    }

    /// Stops background work and gives up the coordinator lock.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Release);
        let session = self.held.read().0;
        let _ = self.lock.unlock(COORDINATOR_LOCK, session);
        if let Err(e) = self.lock.close_session(session) {
            tracing::warn!(error = %e, "could not close the coordinator's lock-service session");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Bytes {
        Bytes::copy_from_slice(s.as_bytes())
    }

    #[test]
    fn gaps_are_cut_at_the_planned_keys_inside_them() {
        let keys = [b("c"), b("f"), b("m"), b("t")];
        // The whole table uncovered: every key cuts.
        assert_eq!(
            cut_at(vec![(b(""), b(""))], &keys),
            vec![
                (b(""), b("c")),
                (b("c"), b("f")),
                (b("f"), b("m")),
                (b("m"), b("t")),
                (b("t"), b(""))
            ]
        );
        // Two gaps; keys on a gap's bounds or outside it do not cut.
        assert_eq!(
            cut_at(vec![(b("c"), b("m")), (b("t"), b(""))], &keys),
            vec![(b("c"), b("f")), (b("f"), b("m")), (b("t"), b(""))]
        );
        assert_eq!(cut_at(Vec::new(), &keys), Vec::new());
        assert_eq!(cut_at(vec![(b("a"), b("b"))], &[]), vec![(b("a"), b("b"))]);
    }
}
