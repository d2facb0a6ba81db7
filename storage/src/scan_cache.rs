//! The scan cache: the entries one SSTable holds for one row, kept for gets that
//! read the row again (the Bigtable paper's Scan Cache, above the block cache).
//!
//! Owns: [`ScanCache`], keyed by `(file id, row key)` and bounded in bytes, and its
//! hit/miss counters. A file never changes and its id is never reused by the
//! engine, so an entry needs no invalidation: a flush or compaction that replaces
//! the file leaves the entry unread until eviction takes it.
//! Must not: hold memtable data (every read merges the memtables on top), cache a
//! file read through row bounds (a file shared by split daughters has one id but
//! shows each daughter other rows), or decide which reads use it (the tablet's get
//! path does).

use std::fmt;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use crate::error::Result;
use crate::iter::KvIter;
use crate::striped::StripedCounter;

/// Bytes charged per cached row on top of its keys and values (key copy, vector
/// headers, the cache's own bookkeeping).
const ROW_OVERHEAD: usize = 128;
/// Bytes charged per entry of a cached row on top of its key and value.
const ENTRY_OVERHEAD: usize = 48;
/// A row whose entries in one file take more than this is not cached: a cell with
/// many versions is read by seeking to the version, which the file's index does
/// without copying the others.
pub const MAX_ROW_BYTES: usize = 16 * 1024;

/// Key-value pairs in key order.
type Entries = Vec<(Vec<u8>, Vec<u8>)>;

/// The entries of one row in one file, in key order.
pub type RowEntries = Arc<Entries>;

/// What the cache knows of one row in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CachedRow {
    /// The row's entries (none when the file does not hold the row).
    Entries(RowEntries),
    /// The row takes more than [`MAX_ROW_BYTES`]: read it from the file. Kept so
    /// that later gets do not copy the row's first entries again to find out.
    TooLarge,
}

/// Counters and occupancy of a [`ScanCache`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ScanCacheStats {
    /// Lookups that found their row.
    pub hits: u64,
    /// Lookups that did not.
    pub misses: u64,
    /// Rows held.
    pub entries: u64,
    /// Bytes charged for the rows held.
    pub weighted_bytes: u64,
    /// The byte bound.
    pub capacity_bytes: u64,
}

/// A concurrent cache of the rows gets read from SSTables, bounded in bytes.
pub struct ScanCache {
    rows: Option<RowCache>,
    hits: StripedCounter,
    misses: StripedCounter,
    capacity_bytes: u64,
}

type RowCache = quick_cache::sync::Cache<
    CachedRowKey,
    CachedRow,
    RowWeighter,
    rustc_hash::FxBuildHasher,
    quick_cache::sync::DefaultLifecycle<CachedRowKey, CachedRow>,
>;

/// A cached row's key: the file and the row's internal start key.
#[derive(PartialEq, Eq)]
struct CachedRowKey {
    file_id: u64,
    row_key: Vec<u8>,
}

/// A lookup's key, borrowing the row: hashes and compares as [`CachedRowKey`].
struct RowLookup<'a> {
    file_id: u64,
    row_key: &'a [u8],
}

impl Hash for CachedRowKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.file_id.hash(state);
        self.row_key.as_slice().hash(state);
    }
}

impl Hash for RowLookup<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.file_id.hash(state);
        self.row_key.hash(state);
    }
}

impl quick_cache::Equivalent<CachedRowKey> for RowLookup<'_> {
    fn equivalent(&self, key: &CachedRowKey) -> bool {
        self.file_id == key.file_id && self.row_key == key.row_key.as_slice()
    }
}

/// Weighs a cached row by its bytes.
#[derive(Clone)]
struct RowWeighter;

impl quick_cache::Weighter<CachedRowKey, CachedRow> for RowWeighter {
    fn weight(&self, key: &CachedRowKey, row: &CachedRow) -> u64 {
        let entries: &[(Vec<u8>, Vec<u8>)] = match row {
            CachedRow::Entries(e) => e,
            CachedRow::TooLarge => &[],
        };
        u64::try_from(row_weight(&key.row_key, entries)).unwrap_or(u64::MAX)
    }
}

/// The row size the cache expects on average, for sizing its tables.
const TYPICAL_ROW_BYTES: u64 = 1024;

impl ScanCache {
    /// A cache holding at most `capacity_bytes` of rows (0: the cache is off and
    /// every lookup misses without being counted).
    pub fn new(capacity_bytes: u64) -> Self {
        let rows = (capacity_bytes > 0)
            .then(|| {
                let items =
                    usize::try_from(capacity_bytes / TYPICAL_ROW_BYTES).unwrap_or(usize::MAX);
                quick_cache::OptionsBuilder::new()
                    .estimated_items_capacity(items.max(1))
                    .weight_capacity(capacity_bytes)
                    .build()
                    .ok()
            })
            .flatten()
            .map(|options| {
                RowCache::with_options(
                    options,
                    RowWeighter,
                    rustc_hash::FxBuildHasher,
                    Default::default(),
                )
            });
        ScanCache {
            rows,
            hits: StripedCounter::default(),
            misses: StripedCounter::default(),
            capacity_bytes,
        }
    }

    /// True when the cache may hold rows.
    pub fn enabled(&self) -> bool {
        self.rows.is_some()
    }

    /// The cached entries of the row `row_key` (an internal row-start key) in file
    /// `file_id`, counting a hit or a miss.
    pub fn get(&self, file_id: u64, row_key: &[u8]) -> Option<CachedRow> {
        let rows = self.rows.as_ref()?;
        let found = rows.get(&RowLookup { file_id, row_key });
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.add_one();
        found
    }

    /// Reads the entries of row `row_key` from `cursor` (a cursor over file
    /// `file_id`) and caches them, or caches that the row takes more than
    /// [`MAX_ROW_BYTES`]. Returns what it cached (`None` when the cache is off).
    pub fn load(
        &self,
        file_id: u64,
        row_key: &[u8],
        cursor: &mut dyn KvIter,
    ) -> Result<Option<CachedRow>> {
        let Some(rows) = self.rows.as_ref() else {
            return Ok(None);
        };
        let row = match read_row_entries(row_key, cursor)? {
            Some(entries) => CachedRow::Entries(Arc::new(entries)),
            None => CachedRow::TooLarge,
        };
        let key = CachedRowKey {
            file_id,
            row_key: row_key.to_vec(),
        };
        rows.insert(key, row.clone());
        Ok(Some(row))
    }

    /// The byte bound given at creation.
    pub fn capacity_bytes(&self) -> u64 {
        self.capacity_bytes
    }

    /// Current counters and occupancy.
    pub fn stats(&self) -> ScanCacheStats {
        ScanCacheStats {
            hits: self.hits.sum(),
            misses: self.misses.sum(),
            entries: self.rows.as_ref().map_or(0, |r| r.len() as u64),
            weighted_bytes: self.rows.as_ref().map_or(0, |r| r.weight()),
            capacity_bytes: self.capacity_bytes,
        }
    }
}

/// The entries of `cursor` whose keys start with `row_key`, from a seek to it;
/// `None` once they take more than [`MAX_ROW_BYTES`].
fn read_row_entries(row_key: &[u8], cursor: &mut dyn KvIter) -> Result<Option<Entries>> {
    cursor.seek(row_key)?;
    let mut entries = Vec::new();
    let mut bytes = 0usize;
    while cursor.valid() && cursor.key().starts_with(row_key) {
        let (k, v) = (cursor.key(), cursor.value());
        bytes = bytes.saturating_add(k.len()).saturating_add(v.len());
        if bytes > MAX_ROW_BYTES {
            return Ok(None);
        }
        entries.push((k.to_vec(), v.to_vec()));
        cursor.next()?;
    }
    Ok(Some(entries))
}

/// The bytes a cached row is charged.
fn row_weight(row_key: &[u8], row: &[(Vec<u8>, Vec<u8>)]) -> usize {
    row.iter()
        .fold(ROW_OVERHEAD + row_key.len(), |sum, (k, v)| {
            sum.saturating_add(k.len() + v.len() + ENTRY_OVERHEAD)
        })
}

impl fmt::Debug for ScanCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ScanCache")
            .field("stats", &self.stats())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::VecIter;

    fn file_of(entries: &[(&[u8], usize)]) -> VecIter {
        let v = entries
            .iter()
            .map(|(k, n)| (k.to_vec(), vec![b'v'; *n]))
            .collect();
        VecIter::new(Arc::new(v))
    }

    #[test]
    fn loads_exactly_the_row_and_serves_it_again() {
        let cache = ScanCache::new(1 << 20);
        let mut file = file_of(&[(b"a\0x", 3), (b"b\0p", 4), (b"b\0q", 5), (b"bb\0p", 6)]);
        assert!(cache.get(7, b"b\0").is_none());
        let loaded = cache.load(7, b"b\0", &mut file).unwrap().unwrap();
        let CachedRow::Entries(entries) = &loaded else {
            panic!("a small row is cached: {loaded:?}");
        };
        let keys: Vec<&[u8]> = entries.iter().map(|(k, _)| k.as_slice()).collect();
        assert_eq!(keys, vec![&b"b\0p"[..], &b"b\0q"[..]]);
        let again = cache.get(7, b"b\0").expect("cached");
        assert_eq!(again, loaded);
        assert!(
            cache.get(8, b"b\0").is_none(),
            "the file id is part of the key"
        );
        let s = cache.stats();
        assert_eq!((s.hits, s.misses), (1, 2));
    }

    #[test]
    fn an_absent_row_is_cached_as_empty() {
        let cache = ScanCache::new(1 << 20);
        let mut file = file_of(&[(b"a\0x", 3), (b"c\0x", 3)]);
        let empty = CachedRow::Entries(Arc::new(Vec::new()));
        assert_eq!(
            cache.load(1, b"b\0", &mut file).unwrap(),
            Some(empty.clone())
        );
        assert_eq!(cache.get(1, b"b\0"), Some(empty));
    }

    #[test]
    fn a_large_row_is_remembered_as_too_large() {
        let cache = ScanCache::new(1 << 20);
        let mut file = file_of(&[(b"r\0a", MAX_ROW_BYTES / 2), (b"r\0b", MAX_ROW_BYTES / 2)]);
        let loaded = cache.load(1, b"r\0", &mut file).unwrap();
        assert_eq!(loaded, Some(CachedRow::TooLarge));
        assert_eq!(cache.get(1, b"r\0"), Some(CachedRow::TooLarge));
        assert!(
            cache.stats().weighted_bytes < 1024,
            "the marker weighs little"
        );
    }

    #[test]
    fn a_zero_capacity_cache_holds_nothing() {
        let cache = ScanCache::new(0);
        assert!(!cache.enabled());
        let mut file = file_of(&[(b"r\0a", 1)]);
        assert!(cache.load(1, b"r\0", &mut file).unwrap().is_none());
        assert!(cache.get(1, b"r\0").is_none());
        assert_eq!(cache.stats().misses, 0);
    }

    #[test]
    fn stays_within_its_byte_bound() {
        let capacity = 64 * 1024;
        let cache = ScanCache::new(capacity);
        for i in 0..200u32 {
            let row = format!("row{i:05}\0");
            let key = format!("row{i:05}\0q");
            let mut file = file_of(&[(key.as_bytes(), 1000)]);
            cache.load(3, row.as_bytes(), &mut file).unwrap();
            cache.get(3, row.as_bytes());
        }
        let s = cache.stats();
        assert!(s.weighted_bytes <= capacity, "{s:?}");
        assert!(s.entries > 0 && s.entries <= capacity / 1000, "{s:?}");
    }
}
