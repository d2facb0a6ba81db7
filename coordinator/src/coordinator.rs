//! The coordinator: the one process that changes the shape of the cluster.
//!
//! Owns: election through the lock service, the registry of regionservers, table and
//! namespace descriptors (stored in the lock service), bootstrap of the root and
//! METADATA tablets, assignment of every tablet to a regionserver, table admin
//! (create, delete, enable, disable, truncate, schema changes), compactions on
//! request, and splitting tablets that grew too large.
//! Must not: serve reads or writes of user data, or cache locations for clients.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use bytes::Bytes;
use parking_lot::{Mutex, RwLock};
use tabula_regionserver::{RsError, TabletReport, TabletService};
use tabula_storage::tablet::TabletDescriptor;
use tabula_storage::{Durability, FamilySchema, TableSchema};

use crate::balance::{
    HotSplitRule, HotTablet, Loads, Movable, RequestRates, SplitFacts, Spread, Swap,
    MAX_MOVES_PER_ROUND,
};
use crate::catalog::{
    self, CatalogError, TabletLocation, FIRST_META_TABLET_ID, FIRST_USER_TABLET_ID, META_TABLE,
    ROOT_TABLE, ROOT_TABLET_ID,
};
use crate::directory::{
    self, CoordinatorAddress, CLUSTER_ID_FILE, COORDINATOR_LOCK, DELETING_PREFIX,
    NAMESPACES_PREFIX, PERMISSIONS_PREFIX, ROOT_FILE, SERVERS_PREFIX, SPLIT_PLANS_PREFIX,
    TABLES_PREFIX,
};
use crate::lock::{LockError, LockService, LockToken, SessionId, Txn, TxnOutcome, Versioned};
use crate::tables::{
    canonical_name, canonical_slice, decode_split_plan, encode_split_plan, split_name,
    validate_namespace, validate_table_name, NamespaceDescriptor, TableDescriptor,
    DEFAULT_NAMESPACE, SYSTEM_NAMESPACE,
};

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

/// Times compact_table lists a table's tablets again after some split or moved.
const COMPACT_TABLE_ROUNDS: usize = 10;
/// First wait before listing a table's tablets again during a compaction; it
/// doubles each round, up to 64 times (about 3 s over all rounds).
const COMPACT_TABLE_BACKOFF: std::time::Duration = std::time::Duration::from_millis(10);

/// What one balancing round knows and changes as tablets move.
struct Balanced<'a> {
    movable: Movable,
    spread: Spread,
    loads: Loads,
    rates: &'a mut RequestRates,
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

/// What the last balancing round learnt of each server (for metrics).
#[derive(Default)]
struct RoundFigures {
    /// Tablets each server reported.
    tablets: BTreeMap<String, usize>,
    /// Requests per second of each server whose rate the round knew.
    requests_per_second: BTreeMap<String, f64>,
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

    /// The server with the fewest tablets.
    fn pick_server(&self) -> CoordResult<Arc<dyn TabletService>> {
        let servers = self.servers();
        servers
            .into_iter()
            .min_by_key(|s| s.report().len())
            .ok_or(CoordError::NoServers)
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

    /// Whether user table `name` (any spelling) is enabled, `None` when there is
    /// no such table: the per-call check of the data path, which copies nothing.
    /// The table's canonical name is `canonical_slice(name)`.
    pub fn table_enabled(&self, name: &[u8]) -> Option<bool> {
        self.tables
            .load()
            .get(canonical_slice(name))
            .map(|t| t.enabled)
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

    /// Opens every tablet: root, METADATA, then the tablets of enabled tables,
    /// recording where each went.
    /// Makes every tablet served: at start-up (`reopen_live`) every tablet is
    /// opened, on the live server the catalog names (this process's own server lost
    /// them with the previous process; opening is idempotent on a remote one that
    /// kept them) or elsewhere; later, only tablets of servers that are gone move.
    /// A gone server's commit log is split before the first of its tablets opens
    /// elsewhere. Returns how many tablets moved. Callers hold the admin lock.
    fn assign(&self, reopen_live: bool) -> CoordResult<usize> {
        let mut recovered = HashSet::new();
        let mut moved = 0;
        // Root tablet.
        let root_server = match self.lock.get(ROOT_FILE)? {
            Some(v) => String::from_utf8_lossy(&v.value).into_owned(),
            None => String::new(),
        };
        let root = Self::catalog_descriptor(ROOT_TABLET_ID, ROOT_TABLE, Bytes::new(), Bytes::new());
        if let Some(server) = self.place(&root_server, &root, reopen_live, &mut recovered)? {
            self.fenced(Txn::new().put(ROOT_FILE, server.name().into_bytes()))?;
            moved += 1;
        }
        // METADATA tablets listed in the root; a new cluster gets its first one.
        let mut metas = self.meta_tablets()?;
        if metas.is_empty() {
            metas.push(TabletLocation {
                table: Bytes::from_static(META_TABLE.as_bytes()),
                start_row: Bytes::new(),
                end_row: Bytes::new(),
                tablet_id: FIRST_META_TABLET_ID,
                server: String::new(),
            });
        }
        for mut meta in metas {
            let desc = Self::catalog_descriptor(
                meta.tablet_id,
                META_TABLE,
                meta.start_row.clone(),
                meta.end_row.clone(),
            );
            if let Some(server) = self.place(&meta.server, &desc, reopen_live, &mut recovered)? {
                meta.server = server.name();
                self.write_catalog(&meta)?;
                moved += 1;
            }
        }
        // User tablets.
        for t in self.tables() {
            if reopen_live {
                if self.lock.get(&deleting_path(&t.name))?.is_some() {
                    // A deleteTable stopped midway goes on, like a truncate.
                    self.finish_delete(&t)?;
                    continue;
                }
                if let (false, Some(keys)) = (t.enabled, self.stored_plan(&t.name)?) {
                    // A truncateTable stopped midway: it goes on (as HBase's
                    // procedure rolls forward); its new tablets open as they are made.
                    self.finish_truncate(t, &keys)?;
                    continue;
                }
                self.repair_catalog(&t)?;
            }
            if !t.enabled {
                continue;
            }
            let schema = t
                .schema()
                .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
            for mut loc in self.table_tablets(&t.name)? {
                let desc = TabletDescriptor {
                    id: loc.tablet_id,
                    schema: schema.clone(),
                    start_row: loc.start_row.clone(),
                    end_row: loc.end_row.clone(),
                };
                if let Some(server) = self.place(&loc.server, &desc, reopen_live, &mut recovered)? {
                    loc.server = server.name();
                    self.write_catalog(&loc)?;
                    moved += 1;
                }
            }
        }
        Ok(moved)
    }

    /// Opens tablet `desc`, last served by `server`: there again when that server
    /// is live (only when `reopen_live`; `None` is returned, the catalog stays),
    /// otherwise, after recovering that server's log (once per `recovered`), on the
    /// least loaded live server, which is returned.
    fn place(
        &self,
        server: &str,
        desc: &TabletDescriptor,
        reopen_live: bool,
        recovered: &mut HashSet<String>,
    ) -> CoordResult<Option<Arc<dyn TabletService>>> {
        if let Some(live) = self.server(server) {
            if reopen_live {
                live.open_tablet(desc)?;
            }
            return Ok(None);
        }
        if !server.is_empty() && !recovered.contains(server) {
            self.recover_log_of(server)?;
            recovered.insert(server.to_owned());
        }
        let target = self.pick_server()?;
        target.open_tablet(desc)?;
        Ok(Some(target))
    }

    /// Splits the commit log of the gone server `name` into recovered edits, holding
    /// its registration lock meanwhile so that a server restarting under that name
    /// waits until its old log is split.
    fn recover_log_of(&self, name: &str) -> CoordResult<()> {
        let path = format!("{SERVERS_PREFIX}{name}");
        let session = self.held.read().0;
        let Some(token) = self.lock.try_lock(&path, session, b"recovering")? else {
            return Err(CoordError::ServerAlive(name.to_owned()));
        };
        let recovery = match self.servers.values().next() {
            Some(local) => Ok(Arc::clone(local)),
            None => self.pick_server(),
        };
        let result = recovery.and_then(|s| s.recover_log_of(name).map_err(CoordError::from));
        if let Err(e) = self.lock.release(&token) {
            tracing::warn!(server = %name, error = %e, "releasing a recovered server's lock");
        }
        result
    }

    /// Repairs what an operation the previous process did not finish left in table
    /// `t`'s catalog rows: first a split stopped between its two rows, then rows no
    /// tablet covers (see the two steps). Reads the rows once, and again only
    /// after a completed split changed them.
    fn repair_catalog(&self, t: &TableDescriptor) -> CoordResult<()> {
        let mut tablets = self.sorted_table_tablets(&t.name)?;
        if self.complete_interrupted_splits(&t.name, &tablets)? > 0 {
            tablets = self.sorted_table_tablets(&t.name)?;
        }
        let plan = self.stored_plan(&t.name)?;
        self.fill_tablet_gaps(t, &tablets, plan.as_deref().unwrap_or_default())?;
        if plan.is_some() {
            self.fenced(Txn::new().delete(plan_path(&t.name)))?;
        }
        Ok(())
    }

    /// The split keys a `createTable` or `truncateTable` of table `name` stored
    /// before making its tablets, if it has not finished.
    fn stored_plan(&self, name: &[u8]) -> CoordResult<Option<Vec<Bytes>>> {
        let path = plan_path(name);
        match self.lock.get(&path)? {
            Some(v) => Ok(Some(
                decode_split_plan(&v.value).ok_or(CoordError::Corrupt { what: path })?,
            )),
            None => Ok(None),
        }
    }

    /// Table `name`'s catalog rows by start row, and of two with the same start the
    /// one ending first (an empty end row is the table's end).
    fn sorted_table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        let mut tablets = self.table_tablets(name)?;
        tablets.sort_by(|a, b| {
            a.start_row.cmp(&b.start_row).then_with(|| {
                match (a.end_row.is_empty(), b.end_row.is_empty()) {
                    (true, true) => std::cmp::Ordering::Equal,
                    (true, false) => std::cmp::Ordering::Greater,
                    (false, true) => std::cmp::Ordering::Less,
                    (false, false) => a.end_row.cmp(&b.end_row),
                }
            })
        });
        Ok(tablets)
    }

    /// Gives every range of table `t`'s rows that no catalog row covers an empty
    /// tablet of its own. Only an operation the process did not finish leaves such
    /// a gap: a `createTable` that stored the table's descriptor but not all its
    /// first tablets (the client was never answered, and asking again would only
    /// hear that the table exists), or a `truncateTable` that had enabled the
    /// table but not made all its new tablets. A table with a gap cannot take a
    /// row in it; with the gap filled, it can. The new tablets are opened
    /// with the table's other tablets (enabled tables only). Returns how many were
    /// made.
    /// `tablets` are the table's rows as [`Self::sorted_table_tablets`] reads them;
    /// a gap is cut at the `planned` split keys inside it (those of an unfinished
    /// `createTable` or `truncateTable`), so the table gets the tablets asked for.
    fn fill_tablet_gaps(
        &self,
        t: &TableDescriptor,
        tablets: &[TabletLocation],
        planned: &[Bytes],
    ) -> CoordResult<usize> {
        let mut gaps: Vec<(Bytes, Bytes)> = Vec::new();
        let mut covered_to = Some(Bytes::new());
        for loc in tablets {
            match &covered_to {
                Some(end) if loc.start_row > *end => {
                    gaps.push((end.clone(), loc.start_row.clone()));
                }
                _ => {}
            }
            // `None` once a tablet runs to the table's end.
            covered_to = match (&covered_to, loc.end_row.is_empty()) {
                (_, true) => None,
                (Some(end), false) => Some(std::cmp::max(end, &loc.end_row).clone()),
                (None, false) => None,
            };
        }
        if let Some(end) = covered_to {
            gaps.push((end, Bytes::new()));
        }
        let gaps = cut_at(gaps, planned);
        if gaps.is_empty() {
            return Ok(0);
        }
        let first_id = self.allocate_ids(gaps.len() as u64)?;
        for (i, (start, end)) in gaps.iter().enumerate() {
            let id = first_id + i as u64;
            self.write_catalog(&TabletLocation {
                table: t.name.clone(),
                start_row: start.clone(),
                end_row: end.clone(),
                tablet_id: id,
                server: String::new(),
            })?;
            tracing::warn!(
                table = %shown(&t.name),
                tablet = id,
                start = %shown(start),
                end = %shown(end),
                "gave rows no tablet covered an empty tablet (an unfinished create, delete or truncate)"
            );
        }
        Ok(gaps.len())
    }

    /// Completes the splits of table `name` that stopped between their two catalog
    /// rows. [`Self::split_tablet`] writes the left child's row, then the right
    /// child's over the parent's; a process that ended between the two leaves the
    /// left child `[s, at)` beside the parent `[s, e)`, overlapping it. The storage
    /// step had stored both children's manifests before either row was written, so
    /// the split is finished here rather than undone (the left child may hold
    /// acknowledged writes the parent does not): the right child, whose id follows
    /// the left one's, takes the parent's row over `[at, e)`. Rows that overlap in
    /// any other way are left as they are, with an error in the log. `tablets` are
    /// the table's rows as [`Self::sorted_table_tablets`] reads them. Returns how
    /// many splits were completed.
    fn complete_interrupted_splits(
        &self,
        name: &[u8],
        tablets: &[TabletLocation],
    ) -> CoordResult<usize> {
        let mut completed = 0;
        for pair in tablets.windows(2) {
            let [left, next] = pair else { continue };
            let overlaps = !left.end_row.is_empty() && next.start_row < left.end_row;
            if !overlaps {
                continue;
            }
            let left_of_parent = next.start_row == left.start_row;
            let right_id = left.tablet_id.checked_add(1);
            match right_id.filter(|_| left_of_parent) {
                Some(right_id) => {
                    self.write_catalog(&TabletLocation {
                        table: next.table.clone(),
                        start_row: left.end_row.clone(),
                        end_row: next.end_row.clone(),
                        tablet_id: right_id,
                        server: next.server.clone(),
                    })?;
                    tracing::warn!(
                        table = %shown(name),
                        parent = next.tablet_id,
                        left = left.tablet_id,
                        right = right_id,
                        "completed a split that stopped between its catalog rows"
                    );
                    completed += 1;
                }
                None => tracing::error!(
                    table = %shown(name),
                    first = left.tablet_id,
                    second = next.tablet_id,
                    "catalog rows overlap in a way no split leaves; left as they are"
                ),
            }
        }
        Ok(completed)
    }

    fn open_table_tablets(&self, t: &TableDescriptor) -> CoordResult<()> {
        let schema = t
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        for mut loc in self.table_tablets(&t.name)? {
            let server = self.pick_server()?;
            server.open_tablet(&TabletDescriptor {
                id: loc.tablet_id,
                schema: schema.clone(),
                start_row: loc.start_row.clone(),
                end_row: loc.end_row.clone(),
            })?;
            loc.server = server.name();
            self.write_catalog(&loc)?;
        }
        Ok(())
    }

    fn close_table_tablets(&self, name: &[u8]) -> CoordResult<Vec<TabletLocation>> {
        let tablets = self.table_tablets(name)?;
        for loc in &tablets {
            if let Some(s) = self.server(&loc.server) {
                s.close_tablet(loc.tablet_id)?;
            }
        }
        Ok(tablets)
    }

    // ------------------------------------------------------------ namespaces

    /// Every namespace.
    pub fn namespaces(&self) -> Vec<NamespaceDescriptor> {
        self.namespaces.read().values().cloned().collect()
    }

    /// One namespace.
    pub fn namespace(&self, name: &str) -> CoordResult<NamespaceDescriptor> {
        self.namespaces
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| CoordError::NamespaceNotFound(name.into()))
    }

    /// Creates a namespace.
    pub fn create_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        validate_namespace(&ns.name).map_err(CoordError::InvalidArgument)?;
        let _g = self.admin.lock();
        if self.namespaces.read().contains_key(&ns.name) {
            return Err(CoordError::NamespaceExists(ns.name));
        }
        self.fenced(Txn::new().put(format!("{NAMESPACES_PREFIX}{}", ns.name), ns.encode()))?;
        self.namespaces.write().insert(ns.name.clone(), ns);
        Ok(())
    }

    /// Replaces a namespace's configuration.
    pub fn modify_namespace(&self, ns: NamespaceDescriptor) -> CoordResult<()> {
        let _g = self.admin.lock();
        if !self.namespaces.read().contains_key(&ns.name) {
            return Err(CoordError::NamespaceNotFound(ns.name));
        }
        self.fenced(Txn::new().put(format!("{NAMESPACES_PREFIX}{}", ns.name), ns.encode()))?;
        self.namespaces.write().insert(ns.name.clone(), ns);
        Ok(())
    }

    /// Deletes an empty namespace (never `default` or `hbase`).
    pub fn delete_namespace(&self, name: &str) -> CoordResult<()> {
        let _g = self.admin.lock();
        if name == DEFAULT_NAMESPACE || name == SYSTEM_NAMESPACE {
            return Err(CoordError::InvalidArgument(format!(
                "namespace {name} cannot be deleted"
            )));
        }
        if !self.namespaces.read().contains_key(name) {
            return Err(CoordError::NamespaceNotFound(name.into()));
        }
        let used = self
            .tables
            .load()
            .keys()
            .any(|t| split_name(t).0 == name.as_bytes());
        if used {
            return Err(CoordError::NamespaceNotEmpty(name.into()));
        }
        self.fenced(Txn::new().delete(format!("{NAMESPACES_PREFIX}{name}")))?;
        self.namespaces.write().remove(name);
        Ok(())
    }

    // ------------------------------------------------------------ tables

    /// Creates a table with one tablet per split key + 1, enabled.
    pub fn create_table(
        &self,
        name: &[u8],
        families: Vec<FamilySchema>,
        mut split_keys: Vec<Bytes>,
    ) -> CoordResult<()> {
        validate_table_name(name).map_err(CoordError::InvalidArgument)?;
        let name = canonical_name(name);
        let (ns, _) = split_name(&name);
        let ns = shown(ns);
        if ns == SYSTEM_NAMESPACE {
            return Err(CoordError::InvalidArgument(format!(
                "tables cannot be created in the {SYSTEM_NAMESPACE} namespace"
            )));
        }
        if families.is_empty() {
            return Err(CoordError::InvalidArgument(format!(
                "table {} must have at least one column family",
                shown(&name)
            )));
        }
        let schema = TableSchema::new(shown(&name), families)
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        split_keys.sort();
        split_keys.dedup();
        if split_keys.iter().any(|k| k.is_empty()) {
            return Err(CoordError::InvalidArgument(
                "split keys must not be empty".into(),
            ));
        }
        let _g = self.admin.lock();
        if !self.namespaces.read().contains_key(&ns) {
            return Err(CoordError::NamespaceNotFound(ns));
        }
        if self.tables.load().contains_key(&name) {
            return Err(CoordError::TableExists(shown(&name)));
        }
        let desc = TableDescriptor {
            name: name.clone(),
            families: schema.families().to_vec(),
            enabled: true,
            created_ms: now_ms(),
        };
        // The descriptor and the plan of its first tablets in one write: a restart
        // after a crash midway finishes the plan (see `repair_catalog`).
        let plan = Txn::new().put(plan_path(&name), encode_split_plan(&split_keys));
        self.store_table_with(&desc, plan)?;
        fail::fail_point!("create-table-descriptor-stored");
        self.create_tablets(&desc, &schema, &split_keys)?;
        self.fenced(Txn::new().delete(plan_path(&name)))?;
        Ok(())
    }

    fn create_tablets(
        &self,
        desc: &TableDescriptor,
        schema: &TableSchema,
        split_keys: &[Bytes],
    ) -> CoordResult<()> {
        let n = split_keys.len() as u64 + 1;
        let first_id = self.allocate_ids(n)?;
        let mut bounds = Vec::with_capacity(split_keys.len() + 2);
        bounds.push(Bytes::new());
        bounds.extend(split_keys.iter().cloned());
        bounds.push(Bytes::new());
        for (i, w) in bounds.windows(2).enumerate() {
            let (start, end) = match w {
                [s, e] => (s.clone(), e.clone()),
                _ => continue,
            };
            let server = self.pick_server()?;
            let id = first_id + i as u64;
            server.open_tablet(&TabletDescriptor {
                id,
                schema: schema.clone(),
                start_row: start.clone(),
                end_row: end.clone(),
            })?;
            self.write_catalog(&TabletLocation {
                table: desc.name.clone(),
                start_row: start,
                end_row: end,
                tablet_id: id,
                server: server.name(),
            })?;
            fail::fail_point!("create-table-tablet-written");
        }
        Ok(())
    }

    /// Deletes a disabled table: its catalog rows, files and descriptor. The intent
    /// is stored first: a coordinator that restarts before the delete is done
    /// finishes it.
    pub fn delete_table(&self, name: &[u8]) -> CoordResult<()> {
        let _g = self.admin.lock();
        let t = self.table_or_err(name)?;
        if t.enabled {
            return Err(CoordError::TableNotDisabled(shown(&t.name)));
        }
        self.fenced(Txn::new().put(deleting_path(&t.name), Vec::new()))?;
        self.finish_delete(&t)
    }

    /// The rest of a delete whose intent is stored: drops the table's tablets,
    /// then its descriptor, any plan and the intent in one write.
    fn finish_delete(&self, t: &TableDescriptor) -> CoordResult<()> {
        self.drop_tablets(&t.name)?;
        self.fenced(
            Txn::new()
                .delete(table_path(&t.name))
                .delete(plan_path(&t.name))
                .delete(deleting_path(&t.name)),
        )?;
        self.tables.rcu(|tables| {
            let mut tables = BTreeMap::clone(tables);
            tables.remove(&t.name);
            tables
        });
        Ok(())
    }

    /// Removes every tablet of a (disabled) table.
    fn drop_tablets(&self, name: &Bytes) -> CoordResult<()> {
        let tablets = self.table_tablets(name)?;
        let server = self.pick_server()?;
        for loc in &tablets {
            if let Some(s) = self.server(&loc.server) {
                s.close_tablet(loc.tablet_id)?;
            }
            let delete = catalog::delete_mutation(name, &loc.end_row, self.catalog_timestamp());
            self.apply_catalog(&delete)?;
            server.destroy_tablet(loc.tablet_id)?;
            fail::fail_point!("drop-tablets-tablet-dropped");
        }
        Ok(())
    }

    /// Empties a disabled table; it comes back enabled. The split keys its new
    /// tablets get (the old ones, or none) are stored first: a coordinator that
    /// restarts before the truncate is done finishes it with them.
    pub fn truncate_table(&self, name: &[u8], preserve_splits: bool) -> CoordResult<()> {
        let _g = self.admin.lock();
        let t = self.table_or_err(name)?;
        if t.enabled {
            return Err(CoordError::TableNotDisabled(shown(&t.name)));
        }
        let keys: Vec<Bytes> = if preserve_splits {
            let mut ends: Vec<Bytes> = self
                .table_tablets(&t.name)?
                .into_iter()
                .map(|l| l.end_row)
                .filter(|e| !e.is_empty())
                .collect();
            ends.sort();
            ends.dedup();
            ends
        } else {
            Vec::new()
        };
        self.fenced(Txn::new().put(plan_path(&t.name), encode_split_plan(&keys)))?;
        self.finish_truncate(t, &keys)
    }

    /// The rest of a truncate whose split keys are stored: drops the table's
    /// tablets, enables it, makes its new tablets, forgets the plan.
    fn finish_truncate(&self, mut t: TableDescriptor, keys: &[Bytes]) -> CoordResult<()> {
        self.drop_tablets(&t.name)?;
        let schema = t
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        t.enabled = true;
        self.store_table(&t)?;
        self.create_tablets(&t, &schema, keys)?;
        self.fenced(Txn::new().delete(plan_path(&t.name)))
    }

    /// Enables a disabled table (opens its tablets).
    pub fn enable_table(&self, name: &[u8]) -> CoordResult<()> {
        let _g = self.admin.lock();
        let mut t = self.table_or_err(name)?;
        if t.enabled {
            return Err(CoordError::TableNotDisabled(shown(&t.name)));
        }
        self.open_table_tablets(&t)?;
        t.enabled = true;
        self.store_table(&t)
    }

    /// Disables an enabled table (closes its tablets after flushing them).
    pub fn disable_table(&self, name: &[u8]) -> CoordResult<()> {
        let _g = self.admin.lock();
        let mut t = self.table_or_err(name)?;
        if !t.enabled {
            return Err(CoordError::TableDisabled(shown(&t.name)));
        }
        t.enabled = false;
        self.store_table(&t)?;
        self.close_table_tablets(&t.name)?;
        Ok(())
    }

    /// Applies a new family list to a table and its open tablets.
    fn change_families(
        &self,
        name: &[u8],
        edit: impl FnOnce(&mut Vec<FamilySchema>, &str) -> CoordResult<()>,
    ) -> CoordResult<()> {
        let _g = self.admin.lock();
        let mut t = self.table_or_err(name)?;
        let table = shown(&t.name);
        edit(&mut t.families, &table)?;
        if t.families.is_empty() {
            return Err(CoordError::InvalidArgument(format!(
                "table {table} must keep at least one column family"
            )));
        }
        let schema = t
            .schema()
            .map_err(|e| CoordError::InvalidArgument(e.to_string()))?;
        t.families = schema.families().to_vec();
        self.store_table(&t)?;
        if t.enabled {
            for loc in self.table_tablets(&t.name)? {
                if let Some(s) = self.server(&loc.server) {
                    s.update_schema(loc.tablet_id, &schema)?;
                }
            }
        }
        Ok(())
    }

    /// Adds a column family.
    pub fn add_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.change_families(name, |fams, table| {
            if fams.iter().any(|f| f.name == family.name) {
                return Err(CoordError::InvalidArgument(format!(
                    "column family {} already exists in table {table}",
                    shown(&family.name)
                )));
            }
            fams.push(family);
            Ok(())
        })
    }

    /// Changes a column family's settings.
    pub fn modify_family(&self, name: &[u8], family: FamilySchema) -> CoordResult<()> {
        self.change_families(name, |fams, table| {
            let slot = fams
                .iter_mut()
                .find(|f| f.name == family.name)
                .ok_or_else(|| CoordError::NoSuchFamily {
                    table: table.into(),
                    family: shown(&family.name),
                })?;
            *slot = family;
            Ok(())
        })
    }

    /// Removes a column family (its data becomes unreadable and is dropped by the
    /// next major compaction).
    pub fn delete_family(&self, name: &[u8], family: &[u8]) -> CoordResult<()> {
        self.change_families(name, |fams, table| {
            let before = fams.len();
            fams.retain(|f| f.name.as_ref() != family);
            if fams.len() == before {
                return Err(CoordError::NoSuchFamily {
                    table: table.into(),
                    family: shown(family),
                });
            }
            Ok(())
        })
    }

    /// Replaces the family list.
    pub fn modify_table(&self, name: &[u8], families: Vec<FamilySchema>) -> CoordResult<()> {
        self.change_families(name, |fams, _| {
            *fams = families;
            Ok(())
        })
    }

    /// Compacts every tablet of a table.
    pub fn compact_table(&self, name: &[u8], major: bool) -> CoordResult<()> {
        let t = self.table_or_err(name)?;
        if !t.enabled {
            return Err(CoordError::TableDisabled(shown(&t.name)));
        }
        // A tablet split (or moved) while this runs answers "not serving": the
        // table's tablets are listed again and the new ones compacted.
        let mut done = std::collections::HashSet::new();
        let mut last_not_serving = None;
        for round in 0..COMPACT_TABLE_ROUNDS {
            if round > 0 {
                // A split answers "not serving" from the moment its parent closes
                // until its children are in the METADATA table: give it time.
                std::thread::sleep(COMPACT_TABLE_BACKOFF * (1 << round.min(6)));
            }
            let mut changed = false;
            for loc in self.table_tablets(&t.name)? {
                if done.contains(&loc.tablet_id) {
                    continue;
                }
                match self
                    .server_or_err(&loc.server)?
                    .compact_tablet(loc.tablet_id, major)
                {
                    Ok(()) => {
                        done.insert(loc.tablet_id);
                    }
                    Err(e) if e.is_not_serving() => {
                        changed = true;
                        last_not_serving = Some(e);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            if !changed {
                return Ok(());
            }
        }
        // The tablets kept changing: report the last "not serving" (retryable).
        match last_not_serving {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Compacts one tablet.
    pub fn compact_tablet(&self, loc: &TabletLocation, major: bool) -> CoordResult<()> {
        Ok(self
            .server_or_err(&loc.server)?
            .compact_tablet(loc.tablet_id, major)?)
    }

    // ------------------------------------------------------------ permissions

    /// Stores a permission entry (user, scope, actions).
    pub fn put_permission(&self, key: &str, actions: &str) -> CoordResult<()> {
        self.fenced(Txn::new().put(format!("{PERMISSIONS_PREFIX}{key}"), actions.as_bytes()))?;
        Ok(())
    }

    /// Removes a permission entry.
    pub fn remove_permission(&self, key: &str) -> CoordResult<()> {
        self.fenced(Txn::new().delete(format!("{PERMISSIONS_PREFIX}{key}")))?;
        Ok(())
    }

    /// A stored permission entry's actions.
    pub fn permission(&self, key: &str) -> CoordResult<Option<String>> {
        directory::permission(&*self.lock, key)
    }

    // ------------------------------------------------------------ maintenance

    /// Splits user tablets that grew past the threshold. Returns how many split.
    pub fn split_large_tablets(&self) -> CoordResult<usize> {
        if self.opts.split_threshold_bytes == 0 {
            return Ok(0);
        }
        let mut splits = 0;
        let servers = self.servers();
        for server in servers {
            for report in server.report() {
                if report.tablet < FIRST_USER_TABLET_ID
                    || report.stats.file_bytes < self.opts.split_threshold_bytes
                {
                    continue;
                }
                match self.split_tablet(server.as_ref(), report.tablet, None) {
                    Ok(true) => splits += 1,
                    Ok(false) => {}
                    Err(e) => tracing::warn!(tablet = report.tablet, error = %e, "split failed"),
                }
            }
        }
        Ok(splits)
    }

    /// Splits one tablet (at `at`, or its midpoint) and records the children in the
    /// catalog. Returns false when the tablet could not be split (too little data).
    pub fn split_tablet(
        &self,
        server: &dyn TabletService,
        tablet: u64,
        at: Option<Bytes>,
    ) -> CoordResult<bool> {
        let _g = self.admin.lock();
        Ok(self.split_holding_admin(server, tablet, at)?.is_some())
    }

    /// [`Coordinator::split_tablet`] with the admin lock held by the caller.
    /// Returns the children's ids, or `None` when the tablet could not be split.
    fn split_holding_admin(
        &self,
        server: &dyn TabletService,
        tablet: u64,
        at: Option<Bytes>,
    ) -> CoordResult<Option<[u64; 2]>> {
        let Some(parent) = self.find_user_tablet(tablet)? else {
            return Ok(None);
        };
        // The right child's id is the left one's plus one: a split stopped between
        // the catalog rows below is completed from that (`complete_interrupted_splits`).
        let ids = self.allocate_ids(2)?;
        let outcome = match server.split_tablet(tablet, at, ids, ids + 1) {
            Ok(o) => o,
            Err(RsError::Storage(tabula_storage::Error::InvalidArgument(_))) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        fail::fail_point!("split-catalog-unwritten");
        // Left child first (a new row), then the right child over the parent's row:
        // a reader between the two writes finds either the new left child or the
        // closed parent, which answers "not serving" and is looked up again.
        self.write_catalog(&TabletLocation {
            table: parent.table.clone(),
            start_row: outcome.left.start_row.clone(),
            end_row: outcome.left.end_row.clone(),
            tablet_id: outcome.left.id,
            server: server.name(),
        })?;
        fail::fail_point!("split-catalog-left-written");
        self.write_catalog(&TabletLocation {
            table: parent.table.clone(),
            start_row: outcome.right.start_row.clone(),
            end_row: outcome.right.end_row.clone(),
            tablet_id: outcome.right.id,
            server: server.name(),
        })?;
        tracing::info!(
            table = %shown(&parent.table),
            parent = tablet,
            left = outcome.left.id,
            right = outcome.right.id,
            at = ?outcome.at,
            "split tablet"
        );
        Ok(Some([outcome.left.id, outcome.right.id]))
    }

    fn find_user_tablet(&self, tablet: u64) -> CoordResult<Option<TabletLocation>> {
        for t in self.tables() {
            if let Some(loc) = self
                .table_tablets(&t.name)?
                .into_iter()
                .find(|l| l.tablet_id == tablet)
            {
                return Ok(Some(loc));
            }
        }
        Ok(None)
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

    /// Moves user tablets from the server serving the most tablets to the one
    /// serving the fewest while they differ by two or more, each time a tablet of
    /// the table most crowded on the one against the other; then, with the counts
    /// even, swaps tablets between two servers where one table is crowded on each
    /// (by two or more), so every table's tablets spread over the servers, not
    /// only their number; then swaps a busy tablet of the server serving the most
    /// requests per second (rows read and mutated, from the counters the servers
    /// report, over the time since the last round) for a quieter one of another
    /// server, while that lowers the busiest server's rate by a tenth or more
    /// (HBase's balancer weighs read and write request counts the same way). At
    /// most [`MAX_MOVES_PER_ROUND`] moves. When no trade helps because one tablet
    /// carries too much of the busiest server's load, that tablet is split in two
    /// (see [`CoordinatorOptions::hot_split`]), and a later round trades a half
    /// away. Returns how many moved. With one server there is nothing to do.
    pub fn balance(&self) -> CoordResult<usize> {
        let servers = self.servers();
        if self.is_deposed() {
            return Ok(0);
        }
        let _g = self.admin.lock();
        let reports: Vec<(String, Vec<TabletReport>)> =
            servers.iter().map(|s| (s.name(), s.report())).collect();
        let mut load: BTreeMap<String, usize> = reports
            .iter()
            .map(|(s, report)| (s.clone(), report.len()))
            .collect();
        let facts: HashMap<u64, SplitFacts> = reports
            .iter()
            .flat_map(|(_, report)| {
                report.iter().map(|t| {
                    let facts = SplitFacts {
                        file_bytes: t.stats.file_bytes,
                        load_split: t.load_split.clone(),
                    };
                    (t.tablet, facts)
                })
            })
            .collect();
        let readings: Vec<(String, Vec<(u64, u64)>)> = reports
            .iter()
            .map(|(s, report)| {
                let requests = report
                    .iter()
                    .map(|t| (t.tablet, t.requests.reads.saturating_add(t.requests.writes)))
                    .collect();
                (s.clone(), requests)
            })
            .collect();
        let mut rates = self.request_rates.lock();
        let loads = rates.observe(&readings, Instant::now());
        *self.last_round.lock() = RoundFigures {
            tablets: load.clone(),
            requests_per_second: servers
                .iter()
                .filter_map(|s| {
                    let name = s.name();
                    loads.server(&name).map(|rate| (name, rate))
                })
                .collect(),
        };
        if servers.len() < 2 {
            return Ok(0);
        }
        let mut movable = Movable::new();
        let mut spread = Spread::default();
        for t in self.tables() {
            if !t.enabled {
                continue;
            }
            for loc in self.table_tablets(&t.name)? {
                spread.add(&loc.server, &t.name);
                movable
                    .entry(loc.server.clone())
                    .or_default()
                    .push((t.clone(), loc));
            }
        }
        let mut round = Balanced {
            movable,
            spread,
            loads,
            rates: &mut rates,
        };
        round.loads.require_reported(&round.movable);
        let mut moved = 0;
        while moved < MAX_MOVES_PER_ROUND {
            let most = load
                .iter()
                .max_by_key(|(_, n)| **n)
                .map(|(s, n)| (s.clone(), *n));
            let least = load
                .iter()
                .min_by_key(|(_, n)| **n)
                .map(|(s, n)| (s.clone(), *n));
            let (Some((from, high)), Some((to, low))) = (most, least) else {
                break;
            };
            if high < low + 2 {
                break;
            }
            let picked = round
                .movable
                .get_mut(&from)
                .and_then(|list| round.spread.take_most_crowded(list, &from, &to));
            let Some((table, loc)) = picked else {
                // Only catalog tablets make it the busiest: they stay.
                load.remove(&from);
                continue;
            };
            self.relocate(&mut round, &table, loc, &from, &to)?;
            load.entry(from).and_modify(|n| *n -= 1);
            load.entry(to).and_modify(|n| *n += 1);
            moved += 1;
        }
        while moved + 2 <= MAX_MOVES_PER_ROUND {
            let Some(swap) = round.spread.best_swap(&round.movable) else {
                break;
            };
            moved += self.trade(&swap, &mut round)?;
        }
        let moved_for_spread = moved;
        while moved + 2 <= MAX_MOVES_PER_ROUND {
            let Some(swap) = round.loads.best_swap(&round.movable, &mut round.spread) else {
                break;
            };
            let busiest = round.loads.server(&swap.a);
            moved += self.trade(&swap, &mut round)?;
            tracing::info!(
                busiest = %swap.a,
                requests_per_sec = busiest.unwrap_or(0.0),
                now = round.loads.server(&swap.a).unwrap_or(0.0),
                other = %swap.b,
                "traded a busy tablet for a quiet one"
            );
        }
        if moved > 0 {
            tracing::info!(
                moved,
                for_load = moved - moved_for_spread,
                "balanced tablets between regionservers"
            );
        }
        if moved == moved_for_spread {
            let hot =
                round
                    .loads
                    .hot_split(&round.movable, &facts, self.opts.hot_split, round.rates);
            if let Some(hot) = hot {
                self.split_for_load(&servers, hot, round.rates);
            }
        }
        Ok(moved)
    }

    /// Splits a tablet serving more requests than any trade could spread (see
    /// [`Loads::hot_split`]) where its sampled requests part, or at its data's
    /// middle; the next rounds, once the halves' rates are read, trade one of them
    /// away. Runs with the admin lock held.
    fn split_for_load(
        &self,
        servers: &[Arc<dyn TabletService>],
        hot: HotTablet,
        rates: &mut RequestRates,
    ) {
        let HotTablet {
            server,
            tablet,
            rate,
            at,
        } = hot;
        let Some(service) = servers.iter().find(|s| s.name() == server) else {
            return;
        };
        match self.split_holding_admin(service.as_ref(), tablet, at) {
            Ok(Some(children)) => {
                rates.split_for_load(tablet, rate, children, &server, Instant::now());
                tracing::info!(
                    tablet,
                    server,
                    requests_per_sec = rate,
                    "split a tablet too busy for any trade to spread"
                );
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(tablet, error = %e, "split for load failed"),
        }
    }

    /// Carries out `swap`: each tablet moves to the other server. Returns how many
    /// moved.
    fn trade(&self, swap: &Swap, round: &mut Balanced<'_>) -> CoordResult<usize> {
        let mut moved = 0;
        for (from, index, to) in [
            (&swap.a, swap.from_a, &swap.b),
            (&swap.b, swap.from_b, &swap.a),
        ] {
            let Some(list) = round.movable.get_mut(from) else {
                continue;
            };
            if index >= list.len() {
                continue;
            }
            let (table, loc) = list.swap_remove(index);
            self.relocate(round, &table, loc, from, to)?;
            moved += 1;
        }
        Ok(moved)
    }

    /// Moves a tablet taken out of the round's movable ones from `from` to `to`,
    /// and notes the move in what the round knows.
    fn relocate(
        &self,
        round: &mut Balanced<'_>,
        table: &TableDescriptor,
        loc: TabletLocation,
        from: &str,
        to: &str,
    ) -> CoordResult<()> {
        let tablet = loc.tablet_id;
        self.move_tablet(table, loc, to)?;
        round.spread.moved(&table.name, from, to);
        round.loads.moved(tablet, from, to);
        round.rates.opened(tablet, to, Instant::now());
        Ok(())
    }

    /// Moves one user tablet to server `to`: closed where it is (its memtable
    /// flushed to the shared storage), opened there, then the catalog row changed.
    /// Calls in between hear "not serving" and look again. If `to` cannot open it,
    /// it is opened again where it was.
    fn move_tablet(
        &self,
        table: &TableDescriptor,
        mut loc: TabletLocation,
        to: &str,
    ) -> CoordResult<()> {
        let from = self.server_or_err(&loc.server)?;
        let target = self.server_or_err(to)?;
        let desc = TabletDescriptor {
            id: loc.tablet_id,
            schema: table
                .schema()
                .map_err(|e| CoordError::InvalidArgument(e.to_string()))?,
            start_row: loc.start_row.clone(),
            end_row: loc.end_row.clone(),
        };
        from.close_tablet(loc.tablet_id)?;
        if let Err(e) = target.open_tablet(&desc) {
            if let Err(back) = from.open_tablet(&desc) {
                tracing::error!(tablet = loc.tablet_id, error = %back, "a tablet that could not move could not be reopened either");
            }
            return Err(e.into());
        }
        tracing::info!(tablet = loc.tablet_id, from = %loc.server, to, "moved a tablet");
        loc.server = to.to_owned();
        self.write_catalog(&loc)
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

    /// Requests (rows read and row mutations) per second each server served
    /// between the last two balancing rounds, for the servers whose rate they
    /// could tell (not those with a tablet just opened).
    pub fn request_rates(&self) -> BTreeMap<String, f64> {
        self.last_round.lock().requests_per_second.clone()
    }

    /// How many tablets each server reported in the last balancing round (for
    /// metrics: no server is called).
    pub fn tablet_counts(&self) -> BTreeMap<String, usize> {
        self.last_round.lock().tablets.clone()
    }

    /// How many tablets each server holds (each server is asked).
    pub fn load(&self) -> HashMap<String, usize> {
        self.servers()
            .iter()
            .map(|s| (s.name(), s.report().len()))
            .collect()
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
