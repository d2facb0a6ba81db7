//! Tabula's side of the benchmark: one engine, one tablet covering every row.
//!
//! Owns: translating [`StoreSettings`] into [`EngineOptions`] and a family schema,
//! and the [`Store`] / [`VersionedStore`] calls through Tabula's public API
//! (`Tablet::mutate`, `Tablet::get`, `Tablet::scan`, `Tablet::major_compact`).
//! Must not: change how the engine works; only its public options are used.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use tabula_storage::cache::CacheStats;
use tabula_storage::{
    ColumnSelector, Compression, Durability, Engine, EngineOptions, FamilySchema, ReadOptions,
    RowMutation, ScanRequest, TableSchema, Tablet, TabletDescriptor, TimeRange, LATEST_TIMESTAMP,
};

use crate::error::BenchResult;
use crate::settings::{self, CompressionChoice, StoreSettings, ZSTD_LEVEL};
use crate::store::{Store, VersionedStore, WriteMode};

/// The id of the benchmark's tablet.
const TABLET_ID: u64 = 1;

/// An open Tabula engine with the benchmark tablet.
pub struct TabulaStore {
    tablet: Arc<Tablet>,
    engine: Engine,
}

impl TabulaStore {
    /// Opens (or reopens) the engine rooted at `dir`.
    pub fn open(dir: &Path, s: &StoreSettings) -> BenchResult<Self> {
        let mut opts = EngineOptions::new(dir);
        // The engine gives a quarter of its budget to the block cache.
        opts.memory_budget = s.cache_bytes.saturating_mul(4);
        opts.memtable_size = s.memtable_bytes;
        opts.block_size = s.block_size;
        let compression = match s.compression {
            CompressionChoice::None => Compression::None,
            CompressionChoice::Zstd => Compression::Zstd(ZSTD_LEVEL),
        };
        let family = FamilySchema::new(settings::family())
            .max_versions(s.max_versions)
            .compression(compression);
        let schema = TableSchema::new("bench", vec![family])?;
        let engine = Engine::open(opts)?;
        let tablet = engine.open_tablet(TabletDescriptor {
            id: TABLET_ID,
            schema,
            start_row: Bytes::new(),
            end_row: Bytes::new(),
        })?;
        Ok(TabulaStore { tablet, engine })
    }

    /// Flushes and closes the engine.
    pub fn close(self) -> BenchResult<()> {
        let TabulaStore { tablet, engine } = self;
        drop(tablet);
        engine.shutdown()?;
        Ok(())
    }

    /// Hit and miss counters of the block cache.
    pub fn cache_stats(&self) -> CacheStats {
        self.engine.block_cache().stats()
    }

    fn column() -> Vec<ColumnSelector> {
        vec![ColumnSelector::Column(
            settings::family(),
            settings::qualifier(),
        )]
    }

    fn write(&self, row: &[u8], timestamp: i64, value: &Bytes, d: Durability) -> BenchResult<()> {
        let rm = RowMutation::new(Bytes::copy_from_slice(row)).put(
            settings::family(),
            settings::qualifier(),
            timestamp,
            value.clone(),
        );
        self.tablet.mutate(&rm, d)?;
        Ok(())
    }
}

impl Store for TabulaStore {
    fn name(&self) -> &'static str {
        "tabula"
    }

    fn put(&self, key: &[u8], value: &Bytes, mode: WriteMode) -> BenchResult<()> {
        let durability = match mode {
            WriteMode::Logged => Durability::Async,
            WriteMode::Synced => Durability::Sync,
        };
        self.write(key, LATEST_TIMESTAMP, value, durability)
    }

    fn get_len(&self, key: &[u8]) -> BenchResult<Option<usize>> {
        let row = Bytes::copy_from_slice(key);
        let cells = self
            .tablet
            .get(&row, ReadOptions::latest().columns(Self::column()))?;
        Ok(cells.first().map(|c| c.value.len()))
    }

    fn scan(&self, start: &[u8], rows: usize) -> BenchResult<(usize, usize)> {
        let mut scanner = self.tablet.scan(ScanRequest {
            start_row: Bytes::copy_from_slice(start),
            read: ReadOptions::latest().columns(Self::column()),
            ..ScanRequest::default()
        })?;
        let (mut read, mut bytes) = (0, 0);
        while read < rows {
            let Some(row) = scanner.next_row()? else {
                break;
            };
            read += 1;
            bytes += row.cells.iter().map(|c| c.value.len()).sum::<usize>();
        }
        Ok((read, bytes))
    }

    fn settle(&self) -> BenchResult<()> {
        self.tablet.major_compact()?;
        Ok(())
    }
}

impl VersionedStore for TabulaStore {
    fn name(&self) -> &'static str {
        "tabula"
    }

    fn put_version(&self, row: &[u8], timestamp: i64, value: &Bytes) -> BenchResult<()> {
        self.write(row, timestamp, value, Durability::Async)
    }

    fn read_as_of(&self, row: &[u8], before: i64) -> BenchResult<Option<i64>> {
        let row = Bytes::copy_from_slice(row);
        let opts = ReadOptions::latest()
            .columns(Self::column())
            .time_range(TimeRange::before(before));
        let cells = self.tablet.get(&row, opts)?;
        Ok(cells.first().map(|c| c.timestamp))
    }

    fn read_latest(&self, row: &[u8]) -> BenchResult<Option<i64>> {
        let row = Bytes::copy_from_slice(row);
        let cells = self
            .tablet
            .get(&row, ReadOptions::latest().columns(Self::column()))?;
        Ok(cells.first().map(|c| c.timestamp))
    }

    fn settle(&self) -> BenchResult<()> {
        self.tablet.major_compact()?;
        Ok(())
    }
}
