//! Tablets being opened go to the server holding the fewest, and placing many asks
//! each server for its tablets once: three regionservers in this process, one
//! table created with 59 split keys (60 tablets), then disabled and enabled again.
//! Every server is wrapped in a counter of the reports it is asked for.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tabula_coordinator::lock::{EmbeddedLockService, LockService};
use tabula_coordinator::{Coordinator, CoordinatorOptions};
use tabula_regionserver::{
    ReadSpec, RegionServer, RegionServerOptions, RsResult, ScanBatch, ScanSpec, SplitOutcome,
    TabletReport, TabletService,
};
use tabula_storage::tablet::{Condition, TabletDescriptor};
use tabula_storage::{
    Cell, Durability, Engine, EngineOptions, FamilySchema, RowMutation, TableSchema,
};

const TABLE: &[u8] = b"wide";

/// A real regionserver that counts the reports it is asked for.
struct Counted {
    inner: Arc<dyn TabletService>,
    reports: AtomicUsize,
}

impl TabletService for Counted {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn start_code(&self) -> i64 {
        self.inner.start_code()
    }
    fn get(&self, tablet: u64, row: &Bytes, spec: &ReadSpec) -> RsResult<Vec<Cell>> {
        self.inner.get(tablet, row, spec)
    }
    fn mutate(&self, tablet: u64, mutation: &RowMutation, durability: Durability) -> RsResult<()> {
        self.inner.mutate(tablet, mutation, durability)
    }
    fn mutate_batch(
        &self,
        batches: &[(u64, Vec<&RowMutation>)],
        durability: Durability,
    ) -> Vec<RsResult<Vec<RsResult<()>>>> {
        self.inner.mutate_batch(batches, durability)
    }
    fn check_and_mutate(
        &self,
        tablet: u64,
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> RsResult<bool> {
        self.inner
            .check_and_mutate(tablet, condition, mutation, durability)
    }
    fn increment(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>> {
        self.inner.increment(tablet, row, columns, durability)
    }
    fn append(
        &self,
        tablet: u64,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> RsResult<Vec<Cell>> {
        self.inner.append(tablet, row, columns, durability)
    }
    fn open_scanner(&self, tablet: u64, spec: &ScanSpec) -> RsResult<u64> {
        self.inner.open_scanner(tablet, spec)
    }
    fn scanner_next(&self, scanner: u64, max_rows: usize) -> RsResult<ScanBatch> {
        self.inner.scanner_next(scanner, max_rows)
    }
    fn close_scanner(&self, scanner: u64) {
        self.inner.close_scanner(scanner)
    }
    fn open_tablet(&self, desc: &TabletDescriptor) -> RsResult<()> {
        self.inner.open_tablet(desc)
    }
    fn close_tablet(&self, tablet: u64) -> RsResult<()> {
        self.inner.close_tablet(tablet)
    }
    fn destroy_tablet(&self, tablet: u64) -> RsResult<()> {
        self.inner.destroy_tablet(tablet)
    }
    fn split_tablet(
        &self,
        tablet: u64,
        at: Option<Bytes>,
        left: u64,
        right: u64,
    ) -> RsResult<SplitOutcome> {
        self.inner.split_tablet(tablet, at, left, right)
    }
    fn flush_tablet(&self, tablet: u64) -> RsResult<()> {
        self.inner.flush_tablet(tablet)
    }
    fn compact_tablet(&self, tablet: u64, major: bool) -> RsResult<()> {
        self.inner.compact_tablet(tablet, major)
    }
    fn update_schema(&self, tablet: u64, schema: &TableSchema) -> RsResult<()> {
        self.inner.update_schema(tablet, schema)
    }
    fn report(&self) -> Vec<TabletReport> {
        self.reports.fetch_add(1, Ordering::Relaxed);
        self.inner.report()
    }
    fn collect_garbage(&self, live: &HashSet<u64>) -> RsResult<usize> {
        self.inner.collect_garbage(live)
    }
    fn recover_log_of(&self, server: &str) -> RsResult<()> {
        self.inner.recover_log_of(server)
    }
    fn slow_calls(&self) -> RsResult<Vec<tabula_regionserver::slow_log::SlowCall>> {
        self.inner.slow_calls()
    }
    fn clear_slow_calls(&self) -> RsResult<bool> {
        self.inner.clear_slow_calls()
    }
}

fn counted(dir: &Path, name: &str) -> Arc<Counted> {
    let mut options = EngineOptions::new(dir.join("data"));
    options.log_dir = Some(dir.join("logs").join(name));
    options.memory_budget = 64 << 20;
    let engine = Arc::new(Engine::open(options).expect("engine opens"));
    let inner = Arc::new(RegionServer::new(
        engine,
        RegionServerOptions {
            name: name.into(),
            logs_root: Some(dir.join("logs")),
            ..RegionServerOptions::default()
        },
    ));
    Arc::new(Counted {
        inner,
        reports: AtomicUsize::new(0),
    })
}

fn reports_asked(servers: &[Arc<Counted>]) -> usize {
    servers
        .iter()
        .map(|s| s.reports.swap(0, Ordering::Relaxed))
        .sum()
}

/// Tablets each server holds, by server name.
fn held(servers: &[Arc<Counted>]) -> BTreeMap<String, usize> {
    servers
        .iter()
        .map(|s| (s.name(), s.inner.report().len()))
        .collect()
}

/// The servers hold `total` tablets between them, no two counts apart by more
/// than one.
fn assert_spread_evenly(servers: &[Arc<Counted>], total: usize, when: &str) {
    let counts = held(servers);
    assert_eq!(counts.values().sum::<usize>(), total, "{when}");
    let least = counts.values().min().copied().unwrap_or(0);
    let most = counts.values().max().copied().unwrap_or(0);
    assert!(
        most - least <= 1,
        "{when}: tablets spread evenly: {counts:?}"
    );
}

#[test]
fn many_tablets_spread_evenly_with_one_report_per_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let servers: Vec<Arc<Counted>> = ["rs-a", "rs-b", "rs-c"]
        .iter()
        .map(|name| counted(dir.path(), name))
        .collect();
    let lock: Arc<dyn LockService> =
        Arc::new(EmbeddedLockService::in_memory().expect("lock service"));
    let services: Vec<Arc<dyn TabletService>> = servers
        .iter()
        .map(|s| Arc::clone(s) as Arc<dyn TabletService>)
        .collect();
    let coord = Coordinator::start(
        lock,
        services,
        CoordinatorOptions {
            split_threshold_bytes: 0,
            ..CoordinatorOptions::default()
        },
    )
    .expect("coordinator starts");
    // The root and first METADATA tablet went somewhere at start.
    let catalog_tablets: usize = held(&servers).values().sum();
    reports_asked(&servers);

    let splits: Vec<Bytes> = (1..60).map(|i| Bytes::from(format!("row{i:03}"))).collect();
    coord
        .create_table(
            TABLE,
            vec![FamilySchema::new(&b"f"[..])],
            splits,
            Default::default(),
        )
        .expect("table created");
    assert_eq!(
        reports_asked(&servers),
        servers.len(),
        "creating 60 tablets asks each server for its tablets once"
    );
    assert_spread_evenly(&servers, 60 + catalog_tablets, "after the create");

    coord.disable_table(TABLE).expect("table disabled");
    assert_eq!(held(&servers).values().sum::<usize>(), catalog_tablets);
    reports_asked(&servers);
    coord.enable_table(TABLE).expect("table enabled");
    assert_eq!(
        reports_asked(&servers),
        servers.len(),
        "enabling 60 tablets asks each server for its tablets once"
    );
    assert_spread_evenly(&servers, 60 + catalog_tablets, "after the enable");

    // Dropping the table asks no server for its tablets.
    coord.disable_table(TABLE).expect("table disabled");
    reports_asked(&servers);
    coord.delete_table(TABLE).expect("table deleted");
    assert_eq!(reports_asked(&servers), 0, "deleting 60 tablets");
    assert_eq!(held(&servers).values().sum::<usize>(), catalog_tablets);
    let tablet_dirs: Vec<_> = std::fs::read_dir(dir.path().join("data").join("tablets"))
        .expect("tablets directory")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| name.parse::<u64>().is_ok())
        .collect();
    assert_eq!(
        tablet_dirs.len(),
        catalog_tablets,
        "the table's directories are gone: {tablet_dirs:?}"
    );
}
