//! The memtable: a tablet's recent writes, sorted in memory.
//!
//! Owns: a B-tree of `(internal key, value)` under a reader-writer lock, with size
//! accounting, a Bloom filter of the rows written (so a get of a row the memtable
//! does not hold skips the search), and the [`KvIter`] cursor over it. A memtable
//! is either active (accepting inserts) or frozen (waiting for its flush); the
//! tablet decides which.
//! Must not: interpret keys, assign sequence numbers or touch the disk.
//!
//! Why a B-tree under a lock rather than a lock-free skiplist: a search of a
//! skiplist of 55,000 entries visits about 32 nodes, each a likely cache miss (a
//! quarter of the server's CPU in gets that found their row in a memtable, about
//! 4.6 us each), where the B-tree visits about six nodes whose keys lie side by
//! side. A writer holds the lock for the inserts of one row's write (about a
//! microsecond per cell); a reader holds it while it copies a few entries out
//! (see [`MemtableIter`]); a flush iterates a frozen memtable, which no writer
//! touches any more.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use parking_lot::RwLock;

use crate::error::Result;
use crate::iter::KvIter;
use crate::memory::MemtableMemory;

/// Bytes of bookkeeping charged per entry on top of key and value.
const ENTRY_OVERHEAD: usize = 64;

/// Most entries copied out of the memtable per refill of an iterator.
const ITER_BATCH: usize = 32;
/// Entries copied right after a seek: a point read needs one or two, so a seek copies
/// few and each later refill copies four times more, up to [`ITER_BATCH`].
const SEEK_BATCH: usize = 2;

/// Memtable size the row filter of [`Memtable::new`] is sized for.
const DEFAULT_CAPACITY: usize = 64 << 20;
/// Filter bits per byte of memtable capacity: one bit per 64 bytes, so 16 bits per
/// row of 1 KiB values and a false-positive rate under 1%; rows of a few dozen bytes
/// still get a filter that rules most absent rows out.
const CAPACITY_BYTES_PER_FILTER_BIT: usize = 64;
/// Bits of the row filter's line: one 64-byte CPU cache line.
const FILTER_LINE_BITS: u64 = 512;
/// Filter size bounds, in bits (512 B .. 2 MiB).
const MIN_FILTER_BITS: usize = 1 << 12;
const MAX_FILTER_BITS: usize = 1 << 24;

/// A Bloom filter of the rows written to a memtable: two probes derived from the
/// row's 64-bit hash, set with atomic ORs so concurrent writers need no lock. Its
/// words are allocated on the first write, so idle tablets' memtables cost nothing.
#[derive(Debug)]
struct RowFilter {
    words: OnceLock<Box<[AtomicU64]>>,
    /// Bits the filter has once allocated (a power of two).
    bits: usize,
}

impl RowFilter {
    fn for_capacity(capacity_bytes: usize) -> Self {
        let bits = (capacity_bytes / CAPACITY_BYTES_PER_FILTER_BIT)
            .clamp(MIN_FILTER_BITS, MAX_FILTER_BITS)
            .next_power_of_two();
        RowFilter {
            words: OnceLock::new(),
            bits,
        }
    }

    /// The two bit positions of a row hash (below `bits`, a power of two, at
    /// least [`FILTER_LINE_BITS`]): both in the same 64-byte line, so a write or a
    /// get waits for one memory line of the filter, not two.
    fn probes(&self, hash: u64) -> [usize; 2] {
        let mask = (self.bits - 1) as u64;
        let first = hash & mask;
        let line_start = first & !(FILTER_LINE_BITS - 1);
        let second = hash.rotate_right(32).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16;
        [
            first as usize,
            (line_start | (second & (FILTER_LINE_BITS - 1))) as usize,
        ]
    }

    fn add(&self, hash: u64) {
        let words = self
            .words
            .get_or_init(|| (0..self.bits / 64).map(|_| AtomicU64::new(0)).collect());
        for bit in self.probes(hash) {
            if let Some(w) = words.get(bit / 64) {
                w.fetch_or(1 << (bit % 64), Ordering::Relaxed);
            }
        }
    }

    fn may_contain(&self, hash: u64) -> bool {
        let Some(words) = self.words.get() else {
            return false;
        };
        self.probes(hash).iter().all(|&bit| {
            words
                .get(bit / 64)
                .is_some_and(|w| w.load(Ordering::Relaxed) & (1 << (bit % 64)) != 0)
        })
    }
}

/// A memtable key: the internal key with its first 16 bytes also held inline, as
/// two big-endian integers, so that most comparisons of a search are
/// decided inside the node without following the pointer to the key's bytes (each
/// such pointer is a likely cache miss).
///
/// The inline head pads short keys with zeros. Two keys whose heads differ compare
/// as their heads do (the first differing padded byte is a real byte of at least
/// one key, and a key that ends there is a prefix of the other); equal heads fall
/// back to comparing the whole keys.
#[derive(Debug, Clone, PartialEq, Eq)]
struct MemKey {
    head: (u64, u64),
    bytes: Vec<u8>,
}

impl MemKey {
    fn new(bytes: Vec<u8>) -> Self {
        let mut head = [0u8; 16];
        let n = bytes.len().min(16);
        if let (Some(dst), Some(src)) = (head.get_mut(..n), bytes.get(..n)) {
            dst.copy_from_slice(src);
        }
        let (hi, lo) = head.split_at(8);
        let word = |b: &[u8]| u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
        MemKey {
            head: (word(hi), word(lo)),
            bytes,
        }
    }
}

impl Ord for MemKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.head
            .cmp(&other.head)
            .then_with(|| self.bytes.as_slice().cmp(other.bytes.as_slice()))
    }
}

impl PartialOrd for MemKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// A sorted in-memory table of internal keys.
#[derive(Debug)]
pub struct Memtable {
    map: RwLock<BTreeMap<MemKey, Bytes>>,
    /// Entries in `map`, readable without its lock (every get asks whether a
    /// memtable is empty).
    entries: AtomicUsize,
    size: AtomicUsize,
    max_seq: AtomicU64,
    /// Set before the first delete marker is inserted (the caller says which
    /// entries are markers): reads that need no markers may then skip looking.
    holds_markers: AtomicBool,
    rows: RowFilter,
    /// The engine-wide gauge this memtable's bytes are charged to, if any.
    gauge: Option<Arc<MemtableMemory>>,
}

impl Drop for Memtable {
    fn drop(&mut self) {
        if let Some(g) = &self.gauge {
            g.release(self.size.load(Ordering::Relaxed));
        }
    }
}

impl Default for Memtable {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl Memtable {
    /// An empty memtable whose row filter is sized for 64 MiB of entries.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty memtable whose row filter is sized for `capacity_bytes` of entries
    /// (the size at which the tablet freezes it).
    pub fn with_capacity(capacity_bytes: usize) -> Self {
        Self::build(capacity_bytes, None)
    }

    /// Like [`Memtable::with_capacity`], charging every insert to `gauge` until the
    /// memtable is dropped.
    pub fn accounted(capacity_bytes: usize, gauge: Arc<MemtableMemory>) -> Self {
        Self::build(capacity_bytes, Some(gauge))
    }

    fn build(capacity_bytes: usize, gauge: Option<Arc<MemtableMemory>>) -> Self {
        Memtable {
            map: RwLock::new(BTreeMap::new()),
            entries: AtomicUsize::new(0),
            size: AtomicUsize::new(0),
            max_seq: AtomicU64::new(0),
            holds_markers: AtomicBool::new(false),
            rows: RowFilter::for_capacity(capacity_bytes),
            gauge,
        }
    }

    /// Records that entries of the row with hash `row_hash`
    /// ([`crate::key::bloom_row_hash`]) are being inserted. Call before inserting
    /// them: a reader that can see the entries then also sees the row in the filter.
    pub fn note_row(&self, row_hash: u64) {
        self.rows.add(row_hash);
    }

    /// False when no entry of the row with hash `row_hash` was inserted (true may be
    /// a false positive).
    pub fn may_contain_row_hash(&self, row_hash: u64) -> bool {
        self.rows.may_contain(row_hash)
    }

    /// Inserts one entry (not a delete marker) written with sequence number `seq`;
    /// see [`Memtable::insert_row`].
    pub fn insert(&self, key: Vec<u8>, value: Bytes, seq: u64) {
        self.insert_row(vec![(key, value)], seq, false);
    }

    /// Inserts the entries of one write, all with sequence number `seq`, under one
    /// hold of the tree's lock and one update of each counter (a row of several
    /// cells would otherwise take the lock and the engine-wide gauge once per cell).
    /// An identical key replaces the previous value (same coordinates, timestamp
    /// and sequence). `markers` must be true when any entry is a delete marker;
    /// from then on [`Memtable::holds_markers`] is true.
    pub fn insert_row(&self, entries: Vec<(Vec<u8>, Bytes)>, seq: u64, markers: bool) {
        if markers {
            // Set first: a reader whose snapshot covers this write sees the flag.
            self.holds_markers.store(true, Ordering::Release);
        }
        let mut charge = 0usize;
        let mut added = 0usize;
        {
            let mut map = self.map.write();
            for (key, value) in entries {
                charge += key.len() + value.len() + ENTRY_OVERHEAD;
                if map.insert(MemKey::new(key), value).is_none() {
                    added += 1;
                }
            }
        }
        self.entries.fetch_add(added, Ordering::Release);
        self.size.fetch_add(charge, Ordering::Relaxed);
        if let Some(g) = &self.gauge {
            g.charge(charge);
        }
        self.max_seq.fetch_max(seq, Ordering::AcqRel);
    }

    /// Records that a write with sequence number `seq` will be inserted, before its
    /// entries are: from then on [`Memtable::max_seq`] covers it.
    pub fn note_seq(&self, seq: u64) {
        self.max_seq.fetch_max(seq, Ordering::AcqRel);
    }

    /// True once a delete marker was inserted.
    pub fn holds_markers(&self) -> bool {
        self.holds_markers.load(Ordering::Acquire)
    }

    /// Approximate memory held, in bytes.
    pub fn approximate_size(&self) -> usize {
        self.size.load(Ordering::Relaxed)
    }

    /// The highest sequence number inserted (0 when empty).
    pub fn max_seq(&self) -> u64 {
        self.max_seq.load(Ordering::Acquire)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.load(Ordering::Acquire)
    }

    /// True when nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The largest key, if any.
    pub fn last_key(&self) -> Option<Vec<u8>> {
        self.map
            .read()
            .last_key_value()
            .map(|(k, _)| k.bytes.clone())
    }

    /// Calls `f` for every entry in key order (used by flushes).
    pub fn for_each(&self, mut f: impl FnMut(&[u8], &Bytes) -> Result<()>) -> Result<()> {
        for (k, v) in self.map.read().iter() {
            f(&k.bytes, v)?;
        }
        Ok(())
    }

    /// A cursor over the memtable; it sees inserts made after its creation.
    pub fn iter(self: &Arc<Self>) -> MemtableIter {
        MemtableIter {
            table: Arc::clone(self),
            batch: Vec::new(),
            pos: 0,
            exhausted: true,
            batch_size: SEEK_BATCH,
        }
    }
}

/// A cursor over a memtable.
///
/// Entries are copied out of the memtable a few at a time after a seek and up to
/// a few dozen at a time when stepping on, each batch under one read lock, so
/// stepping costs a copy rather than a search while a point read copies little,
/// and no lock is held between calls.
pub struct MemtableIter {
    table: Arc<Memtable>,
    batch: Vec<(Vec<u8>, Bytes)>,
    pos: usize,
    /// True when `batch` ends at the end of the table (no refill possible).
    exhausted: bool,
    /// Entries the next refill copies.
    batch_size: usize,
}

impl MemtableIter {
    fn fill(&mut self, from: Bound<MemKey>) {
        self.batch.clear();
        self.pos = 0;
        let map = self.table.map.read();
        for (k, v) in map.range((from, Bound::Unbounded)) {
            if self.batch.len() == self.batch_size {
                self.exhausted = false;
                return;
            }
            self.batch.push((k.bytes.clone(), v.clone()));
        }
        self.exhausted = true;
    }
}

impl KvIter for MemtableIter {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.batch_size = SEEK_BATCH;
        self.fill(Bound::Included(MemKey::new(target.to_vec())));
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.batch_size = SEEK_BATCH;
        self.batch.clear();
        self.pos = 0;
        self.exhausted = true;
        let target = MemKey::new(target.to_vec());
        let map = self.table.map.read();
        if let Some((k, v)) = map
            .range((Bound::Unbounded, Bound::Excluded(&target)))
            .next_back()
        {
            self.batch.push((k.bytes.clone(), v.clone()));
            // Later `next` calls continue forward from here.
            self.exhausted = false;
        }
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        self.pos += 1;
        if self.pos >= self.batch.len() && !self.exhausted {
            let last = self.batch.last().map(|(k, _)| k.clone());
            self.batch_size = (self.batch_size * 4).min(ITER_BATCH);
            match last {
                Some(k) => self.fill(Bound::Excluded(MemKey::new(k))),
                None => self.exhausted = true,
            }
        }
        Ok(())
    }

    fn valid(&self) -> bool {
        self.pos < self.batch.len()
    }

    fn key(&self) -> &[u8] {
        self.batch
            .get(self.pos)
            .map(|(k, _)| k.as_slice())
            .unwrap_or(&[])
    }

    fn value(&self) -> &[u8] {
        self.batch
            .get(self.pos)
            .map(|(_, v)| v.as_ref())
            .unwrap_or(&[])
    }

    fn value_bytes(&self) -> Bytes {
        self.batch
            .get(self.pos)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    proptest! {
        #[test]
        fn iterator_matches_btreemap(
            keys in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 0..200),
            seeks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..6), 1..10),
        ) {
            let mt = Arc::new(Memtable::new());
            let mut model = BTreeMap::new();
            for (i, k) in keys.iter().enumerate() {
                mt.insert(k.clone(), Bytes::from(i.to_string()), i as u64);
                model.insert(k.clone(), i.to_string());
            }
            let mut it = mt.iter();
            for s in &seeks {
                it.seek(s).unwrap();
                let expect: Vec<_> = model.range(s.clone()..).collect();
                let mut got = Vec::new();
                while it.valid() {
                    got.push((it.key().to_vec(), String::from_utf8(it.value().to_vec()).unwrap()));
                    it.next().unwrap();
                }
                let expect: Vec<_> = expect.into_iter().map(|(k, v)| (k.clone(), v.clone())).collect();
                prop_assert_eq!(got, expect);

                it.seek_for_prev(s).unwrap();
                let prev = model.range(..s.clone()).next_back().map(|(k, _)| k.clone());
                prop_assert_eq!(it.valid().then(|| it.key().to_vec()), prev);
            }
        }
    }

    proptest! {
        /// The inline head never changes the order: keys compare as their bytes do,
        /// including keys that differ only past the head or in trailing zeros.
        #[test]
        fn memkey_orders_like_bytes(
            a in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8)], 0..40),
            b in proptest::collection::vec(prop_oneof![Just(0u8), Just(1u8), Just(0xffu8)], 0..40),
            shared in proptest::collection::vec(any::<u8>(), 0..20),
        ) {
            let a = [shared.clone(), a].concat();
            let b = [shared, b].concat();
            prop_assert_eq!(MemKey::new(a.clone()).cmp(&MemKey::new(b.clone())), a.cmp(&b));
            prop_assert_eq!(MemKey::new(a.clone()) == MemKey::new(b.clone()), a == b);
        }
    }

    proptest! {
        #[test]
        fn row_filter_has_no_false_negatives(
            rows in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 1..20), 1..300),
            capacity in 0usize..(1 << 22),
        ) {
            let mt = Memtable::with_capacity(capacity);
            for r in &rows {
                mt.note_row(crate::key::bloom_row_hash(r));
            }
            for r in &rows {
                prop_assert!(mt.may_contain_row_hash(crate::key::bloom_row_hash(r)));
            }
        }
    }

    #[test]
    fn a_row_inserted_at_once_counts_like_cells_inserted_one_by_one() {
        let cells = |n: u8| -> Vec<(Vec<u8>, Bytes)> {
            (0..n)
                .map(|i| (vec![b'k', i], Bytes::from(vec![i; usize::from(i) + 1])))
                .collect()
        };
        let one_by_one = Memtable::new();
        for (k, v) in cells(5) {
            one_by_one.insert(k, v, 7);
        }
        let at_once = Arc::new(Memtable::new());
        at_once.insert_row(cells(5), 7, false);
        assert_eq!(at_once.len(), one_by_one.len());
        assert_eq!(at_once.approximate_size(), one_by_one.approximate_size());
        assert_eq!(at_once.max_seq(), 7);
        assert!(!at_once.holds_markers());
        let mut it = at_once.iter();
        it.seek(b"").unwrap();
        let mut seen = Vec::new();
        while it.valid() {
            seen.push((it.key().to_vec(), it.value_bytes()));
            it.next().unwrap();
        }
        assert_eq!(seen, cells(5));
        // A key written again replaces its value without counting a new entry.
        at_once.insert_row(cells(2), 9, true);
        assert_eq!(at_once.len(), 5);
        assert_eq!(at_once.max_seq(), 9);
        assert!(at_once.holds_markers());
    }

    #[test]
    fn row_filter_rules_out_most_absent_rows() {
        let mt = Memtable::new();
        let hash = |i: u32| crate::key::bloom_row_hash(format!("row{i:08}").as_bytes());
        assert!(
            !mt.may_contain_row_hash(hash(0)),
            "an unwritten memtable holds no row"
        );
        for i in 0..60_000 {
            mt.note_row(hash(i));
        }
        let false_positives = (60_000..160_000)
            .filter(|&i| mt.may_contain_row_hash(hash(i)))
            .count();
        // 60,000 rows in 1 Mi bits with two probes: about 1.3% expected.
        assert!(
            false_positives < 3_000,
            "{false_positives} false positives in 100,000"
        );
    }

    /// Writers on several threads insert while a reader walks the memtable: every
    /// walk sees strictly increasing keys, and afterwards every insert is there.
    #[test]
    fn concurrent_inserts_and_walks_stay_sorted_and_complete() {
        let mt = Arc::new(Memtable::new());
        let writers: Vec<_> = (0..4u32)
            .map(|w| {
                let mt = Arc::clone(&mt);
                std::thread::spawn(move || {
                    for i in 0..2_000u32 {
                        let key = format!("row{:06}-{w}", (i * 7919) % 2_000).into_bytes();
                        mt.insert(key, Bytes::from(vec![w as u8; 8]), u64::from(i));
                    }
                })
            })
            .collect();
        let reader = {
            let mt = Arc::clone(&mt);
            std::thread::spawn(move || {
                for _ in 0..50 {
                    let mut it = mt.iter();
                    it.seek(b"").unwrap();
                    let mut last: Option<Vec<u8>> = None;
                    while it.valid() {
                        let k = it.key().to_vec();
                        assert!(last.as_ref().is_none_or(|l| *l < k), "walk out of order");
                        last = Some(k);
                        it.next().unwrap();
                    }
                }
            })
        };
        for w in writers {
            w.join().unwrap();
        }
        reader.join().unwrap();
        assert_eq!(mt.len(), 8_000);
        let mut n = 0;
        mt.for_each(|_, v| {
            assert_eq!(v.len(), 8);
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 8_000);
    }

    #[test]
    fn accounts_size_and_seq() {
        let mt = Memtable::new();
        assert!(mt.is_empty());
        mt.insert(b"k".to_vec(), Bytes::from_static(b"v"), 7);
        mt.insert(b"j".to_vec(), Bytes::from_static(b"vv"), 3);
        assert_eq!(mt.len(), 2);
        assert_eq!(mt.max_seq(), 7);
        assert!(mt.approximate_size() >= 5 + 2 * ENTRY_OVERHEAD);
        assert_eq!(mt.last_key(), Some(b"k".to_vec()));
    }
}
