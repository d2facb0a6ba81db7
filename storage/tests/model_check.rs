//! Property tests: random RowMutations, flushes, compactions, reopenings and splits
//! applied to the engine and to a small in-memory model of HBase semantics; every
//! get and scan must agree.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use proptest::prelude::*;
use tabula_storage::engine::{Engine, EngineOptions};
use tabula_storage::read::ReadOptions;
use tabula_storage::tablet::{ScanRequest, Tablet, TabletDescriptor};
use tabula_storage::{
    ColumnSelector, Durability, FamilySchema, KeepDeleted, Mutation, RowMutation, TableSchema,
    TimeRange, LATEST_TIMESTAMP,
};

const NOW_START: i64 = 1_000_000;
const FAMILIES: [&[u8]; 6] = [b"a", b"b", b"c", b"d", b"e", b"f"];
const ALL_FAMILIES: Range<usize> = 0..FAMILIES.len();
/// The families that keep deleted cells (`e` and `f`).
const KEEPING_DELETED: Range<usize> = 4..6;
const ROWS: [&[u8]; 6] = [b"r0", b"r1", b"r1\x00", b"r2", b"r3", b"s"];
const QUALS: [&[u8]; 3] = [b"", b"q", b"q\x00x"];

fn schema() -> TableSchema {
    TableSchema::new(
        "t",
        vec![
            FamilySchema::new(&b"a"[..]).max_versions(3),
            FamilySchema::new(&b"b"[..]).max_versions(1),
            // Cells older than 5 s are expired.
            FamilySchema::new(&b"c"[..]).max_versions(5).ttl(Some(5)),
            // The same TTL, but the newest two versions of a column outlive it.
            FamilySchema::new(&b"d"[..])
                .max_versions(4)
                .ttl(Some(5))
                .min_versions(2),
            // Deleted cells kept: reads see past markers outside their time
            // range, and major compactions keep what markers cover.
            FamilySchema::new(&b"e"[..])
                .max_versions(3)
                .keep_deleted(KeepDeleted::Yes),
            // Kept until the marker's TTL expires, with one version past the TTL.
            FamilySchema::new(&b"f"[..])
                .max_versions(3)
                .ttl(Some(5))
                .min_versions(1)
                .keep_deleted(KeepDeleted::UntilTtl),
        ],
    )
    .expect("valid schema")
}

// ---------------------------------------------------------------- the model

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Put,
    DelVersion,
    DelColumn,
    DelFamily,
    DelFamilyVersion,
}

#[derive(Debug, Clone)]
struct MEntry {
    row: Vec<u8>,
    family: Vec<u8>,
    qualifier: Vec<u8>,
    kind: Kind,
    ts: i64,
    seq: u64,
    value: Vec<u8>,
}

#[derive(Default)]
struct Model {
    entries: Vec<MEntry>,
    seq: u64,
}

type ModelCell = (Vec<u8>, Vec<u8>, i64, Vec<u8>); // family, qualifier, ts, value

impl Model {
    fn family_max_versions(f: &[u8]) -> u32 {
        match f {
            b"a" => 3,
            b"b" => 1,
            b"c" => 5,
            b"d" => 4,
            _ => 3,
        }
    }

    fn family_min_versions(f: &[u8]) -> usize {
        match f {
            b"d" => 2,
            b"f" => 1,
            _ => 0,
        }
    }

    fn keeps_deleted(f: &[u8]) -> Option<KeepDeleted> {
        match f {
            b"e" => Some(KeepDeleted::Yes),
            b"f" => Some(KeepDeleted::UntilTtl),
            _ => None,
        }
    }

    fn ttl_cutoff(f: &[u8], now: i64) -> i64 {
        if f == b"c" || f == b"d" || f == b"f" {
            now - 5_000
        } else {
            i64::MIN
        }
    }

    /// Visible versions of one column, newest first, capped at `max`.
    fn column(
        &self,
        row: &[u8],
        fam: &[u8],
        q: &[u8],
        range: TimeRange,
        max: u32,
        now: i64,
    ) -> Vec<(i64, Vec<u8>)> {
        let mut newest_put: BTreeMap<i64, (u64, Vec<u8>)> = BTreeMap::new();
        let mut covered_up_to = i64::MIN;
        let mut exact: BTreeSet<i64> = BTreeSet::new();
        let mut any_cover = false;
        // A family keeping deleted cells lets only markers inside the range count.
        let counts = |ts: i64| Self::keeps_deleted(fam).is_none() || range.contains(ts);
        for e in &self.entries {
            if e.row != row || e.family != fam {
                continue;
            }
            if e.kind != Kind::Put && !counts(e.ts) {
                continue;
            }
            match e.kind {
                Kind::DelFamily => {
                    any_cover = true;
                    covered_up_to = covered_up_to.max(e.ts);
                }
                Kind::DelFamilyVersion => {
                    exact.insert(e.ts);
                }
                _ if e.qualifier != q => {}
                Kind::DelColumn => {
                    any_cover = true;
                    covered_up_to = covered_up_to.max(e.ts);
                }
                Kind::DelVersion => {
                    exact.insert(e.ts);
                }
                Kind::Put => {
                    let replace = newest_put.get(&e.ts).is_none_or(|(s, _)| e.seq >= *s);
                    if replace {
                        newest_put.insert(e.ts, (e.seq, e.value.clone()));
                    }
                }
            }
        }
        let cutoff = Self::ttl_cutoff(fam, now);
        let kept_past_ttl = Self::family_min_versions(fam);
        let cap = max.min(Self::family_max_versions(fam)) as usize;
        newest_put
            .into_iter()
            .rev()
            .filter(|(ts, _)| range.contains(*ts))
            .filter(|(ts, _)| !(any_cover && *ts <= covered_up_to))
            .filter(|(ts, _)| !exact.contains(ts))
            // The newest `kept_past_ttl` admitted versions live on past the TTL.
            .enumerate()
            .filter(|(i, (ts, _))| *i < kept_past_ttl || *ts >= cutoff)
            .map(|(_, version)| version)
            .take(cap)
            .map(|(ts, (_, v))| (ts, v))
            .collect()
    }

    fn qualifiers(&self, row: &[u8], fam: &[u8]) -> BTreeSet<Vec<u8>> {
        self.entries
            .iter()
            .filter(|e| e.row == row && e.family == fam && e.kind == Kind::Put)
            .map(|e| e.qualifier.clone())
            .collect()
    }

    fn read_row(&self, row: &[u8], sel: &Selection, now: i64) -> Vec<ModelCell> {
        let mut out = Vec::new();
        for fam in FAMILIES {
            let quals: Vec<Vec<u8>> = match sel.columns_of(fam) {
                None => continue,
                Some(None) => self.qualifiers(row, fam).into_iter().collect(),
                Some(Some(qs)) => qs,
            };
            for q in quals {
                for (ts, v) in self.column(row, fam, &q, sel.range, sel.versions, now) {
                    out.push((fam.to_vec(), q.clone(), ts, v));
                }
            }
        }
        out
    }

    fn rows(&self) -> BTreeSet<Vec<u8>> {
        self.entries.iter().map(|e| e.row.clone()).collect()
    }

    fn apply(&mut self, rm: &RowMutation, now: i64) {
        self.seq += 1;
        let seq = self.seq;
        let at = |ts: i64| if ts == LATEST_TIMESTAMP { now } else { ts };
        let row = rm.row.to_vec();
        let mut new = Vec::new();
        for m in &rm.mutations {
            let (family, qualifier, kind, ts, value) = match m {
                Mutation::Put {
                    family,
                    qualifier,
                    timestamp,
                    value,
                } => (
                    family.to_vec(),
                    qualifier.to_vec(),
                    Kind::Put,
                    at(*timestamp),
                    value.to_vec(),
                ),
                Mutation::DeleteVersion {
                    family,
                    qualifier,
                    timestamp,
                } => {
                    let ts = if *timestamp == LATEST_TIMESTAMP {
                        // The newest version visible before this mutation.
                        let newest = self
                            .column(&row, family, qualifier, TimeRange::ALL, u32::MAX, now)
                            .first()
                            .map(|(ts, _)| *ts);
                        match newest {
                            Some(ts) => ts,
                            None => continue,
                        }
                    } else {
                        *timestamp
                    };
                    (
                        family.to_vec(),
                        qualifier.to_vec(),
                        Kind::DelVersion,
                        ts,
                        Vec::new(),
                    )
                }
                Mutation::DeleteColumn {
                    family,
                    qualifier,
                    timestamp,
                } => (
                    family.to_vec(),
                    qualifier.to_vec(),
                    Kind::DelColumn,
                    at(*timestamp),
                    Vec::new(),
                ),
                Mutation::DeleteFamily { family, timestamp } => (
                    family.to_vec(),
                    Vec::new(),
                    Kind::DelFamily,
                    at(*timestamp),
                    Vec::new(),
                ),
                Mutation::DeleteFamilyVersion { family, timestamp } => (
                    family.to_vec(),
                    Vec::new(),
                    Kind::DelFamilyVersion,
                    at(*timestamp),
                    Vec::new(),
                ),
                Mutation::DeleteRow { timestamp } => {
                    for f in FAMILIES {
                        new.push(MEntry {
                            row: row.clone(),
                            family: f.to_vec(),
                            qualifier: Vec::new(),
                            kind: Kind::DelFamily,
                            ts: at(*timestamp),
                            seq,
                            value: Vec::new(),
                        });
                    }
                    continue;
                }
            };
            new.push(MEntry {
                row: row.clone(),
                family,
                qualifier,
                kind,
                ts,
                seq,
                value,
            });
        }
        // Within one mutation, a later put of the same cell wins.
        self.entries.extend(new);
    }

    /// What a major compaction keeps of a family that keeps deleted cells: per
    /// column, markers and puts newest first (a marker before the puts of its
    /// timestamp), puts counted as versions whether deleted or not, until one is
    /// past max versions or past the TTL beyond min versions; markers the walk
    /// reaches with a put at or before their time; in `UntilTtl`, markers the TTL
    /// expired go and delete what they cover.
    fn retained(&self, row: &[u8], fam: &[u8], mode: KeepDeleted, now: i64) -> Vec<MEntry> {
        let cutoff = Self::ttl_cutoff(fam, now);
        let min = Self::family_min_versions(fam);
        let max = Self::family_max_versions(fam) as usize;
        let expired = |ts: i64| ts < cutoff;
        let enforced = |ts: i64| mode == KeepDeleted::UntilTtl && expired(ts);
        let mine: Vec<&MEntry> = self
            .entries
            .iter()
            .filter(|e| e.row == row && e.family == fam)
            .collect();
        let mut kept = Vec::new();
        let mut family_up_to = i64::MIN;
        let mut family_exact = BTreeSet::new();
        for e in mine
            .iter()
            .filter(|e| matches!(e.kind, Kind::DelFamily | Kind::DelFamilyVersion))
        {
            if enforced(e.ts) {
                if e.kind == Kind::DelFamily {
                    family_up_to = family_up_to.max(e.ts);
                } else {
                    family_exact.insert(e.ts);
                }
            } else if !(expired(e.ts) && min == 0) {
                kept.push((*e).clone());
            }
        }
        for q in self.qualifiers(row, fam) {
            let column: Vec<&MEntry> = mine.iter().copied().filter(|e| e.qualifier == q).collect();
            let mut up_to = family_up_to;
            let mut exact = family_exact.clone();
            let mut markers: Vec<&MEntry> = Vec::new();
            for e in column
                .iter()
                .filter(|e| matches!(e.kind, Kind::DelColumn | Kind::DelVersion))
            {
                if !enforced(e.ts) {
                    markers.push(e);
                } else if e.kind == Kind::DelColumn {
                    up_to = up_to.max(e.ts);
                } else {
                    exact.insert(e.ts);
                }
            }
            // Puts, newest write of each timestamp only.
            let mut puts: BTreeMap<i64, &MEntry> = BTreeMap::new();
            for e in column.iter().filter(|e| e.kind == Kind::Put) {
                if puts.get(&e.ts).is_none_or(|p| e.seq >= p.seq) {
                    puts.insert(e.ts, e);
                }
            }
            markers.sort_by_key(|m| std::cmp::Reverse(m.ts));
            let mut versions = 0usize;
            let mut ended = false;
            let mut next_marker = 0;
            for (&ts, put) in puts.iter().rev() {
                while let Some(m) = markers.get(next_marker).filter(|m| m.ts >= ts) {
                    if !ended && expired(m.ts) && versions >= min {
                        ended = true;
                    }
                    if !ended {
                        kept.push((*m).clone());
                    }
                    next_marker += 1;
                }
                if ended || ts <= up_to || exact.contains(&ts) {
                    continue;
                }
                versions += 1;
                if versions > max || (expired(ts) && versions > min) {
                    ended = true;
                    continue;
                }
                kept.push((*put).clone());
            }
            // Markers older than every put (never reached above) cover nothing:
            // they go.
        }
        kept
    }

    /// Major compaction of the rows in `[start, end)`: keep what a full read returns.
    fn major_compact(&mut self, start: &[u8], end: &[u8], now: i64) {
        let in_range = |r: &[u8]| r >= start && (end.is_empty() || r < end);
        let mut kept = Vec::new();
        for row in self.rows() {
            if !in_range(&row) {
                continue;
            }
            for fam in FAMILIES {
                if let Some(mode) = Self::keeps_deleted(fam) {
                    kept.extend(self.retained(&row, fam, mode, now));
                    continue;
                }
                for q in self.qualifiers(&row, fam) {
                    for (ts, v) in self.column(&row, fam, &q, TimeRange::ALL, u32::MAX, now) {
                        kept.push(MEntry {
                            row: row.clone(),
                            family: fam.to_vec(),
                            qualifier: q.clone(),
                            kind: Kind::Put,
                            ts,
                            seq: 0,
                            value: v,
                        });
                    }
                }
            }
        }
        self.entries.retain(|e| !in_range(&e.row));
        self.entries.extend(kept);
    }
}

// ---------------------------------------------------------------- operations

#[derive(Debug, Clone)]
struct Selection {
    /// (family index, Some(qualifier index)) in request order; empty = all.
    columns: Vec<(usize, Option<usize>)>,
    range: TimeRange,
    versions: u32,
}

impl Selection {
    /// `None`: family not read; `Some(None)`: all columns; `Some(Some(qs))`: these.
    fn columns_of(&self, fam: &[u8]) -> Option<Option<Vec<Vec<u8>>>> {
        if self.columns.is_empty() {
            return Some(None);
        }
        let mut state: Option<Option<BTreeSet<Vec<u8>>>> = None;
        for (f, q) in &self.columns {
            if FAMILIES[*f] != fam {
                continue;
            }
            match q {
                None => state = Some(None),
                Some(q) => match &mut state {
                    Some(Some(set)) => {
                        set.insert(QUALS[*q].to_vec());
                    }
                    _ => state = Some(Some([QUALS[*q].to_vec()].into_iter().collect())),
                },
            }
        }
        state.map(|s| s.map(|set| set.into_iter().collect()))
    }

    fn options(&self) -> ReadOptions {
        let columns = self
            .columns
            .iter()
            .map(|(f, q)| match q {
                None => ColumnSelector::Family(Bytes::from_static(FAMILIES[*f])),
                Some(q) => ColumnSelector::Column(
                    Bytes::from_static(FAMILIES[*f]),
                    Bytes::from_static(QUALS[*q]),
                ),
            })
            .collect();
        ReadOptions {
            columns,
            time_range: self.range,
            max_versions: self.versions,
            ..Default::default()
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Mutate(RowMutation),
    Flush,
    MergeCompact,
    MajorCompact(usize),
    Reopen,
    Split(usize),
    AdvanceClock(i64),
    Get(usize, Selection),
    Scan {
        start: Option<usize>,
        stop: Option<usize>,
        reverse: bool,
        sel: Selection,
    },
}

fn ts_strategy() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => (NOW_START - 8_000..NOW_START + 2_000).prop_map(|t| t - t % 1000),
        1 => Just(LATEST_TIMESTAMP),
        1 => Just(0i64),
    ]
}

/// A put (puts alone leave no delete markers; timestamps often equal across files).
fn put_strategy(families: Range<usize>) -> impl Strategy<Value = Mutation> {
    let fam = families.prop_map(|i| Bytes::from_static(FAMILIES[i]));
    let qual = (0..QUALS.len()).prop_map(|i| Bytes::from_static(QUALS[i]));
    (
        fam,
        qual,
        ts_strategy(),
        proptest::collection::vec(any::<u8>(), 0..4),
    )
        .prop_map(|(family, qualifier, timestamp, v)| Mutation::Put {
            family,
            qualifier,
            timestamp,
            value: Bytes::from(v),
        })
}

fn mutation_strategy(families: Range<usize>) -> impl Strategy<Value = Mutation> {
    let fam = families
        .clone()
        .prop_map(|i| Bytes::from_static(FAMILIES[i]));
    let qual = (0..QUALS.len()).prop_map(|i| Bytes::from_static(QUALS[i]));
    prop_oneof![
        6 => put_strategy(families),
        1 => (fam.clone(), qual.clone(), ts_strategy())
            .prop_map(|(family, qualifier, timestamp)| Mutation::DeleteVersion { family, qualifier, timestamp }),
        1 => (fam.clone(), qual, ts_strategy())
            .prop_map(|(family, qualifier, timestamp)| Mutation::DeleteColumn { family, qualifier, timestamp }),
        1 => (fam.clone(), ts_strategy()).prop_map(|(family, timestamp)| Mutation::DeleteFamily { family, timestamp }),
        1 => (fam, ts_strategy().prop_filter("exact", |t| *t != LATEST_TIMESTAMP))
            .prop_map(|(family, timestamp)| Mutation::DeleteFamilyVersion { family, timestamp }),
        1 => ts_strategy().prop_map(|timestamp| Mutation::DeleteRow { timestamp }),
    ]
}

/// No time range, "before T", or a window.
fn time_range_strategy() -> impl Strategy<Value = TimeRange> {
    prop_oneof![
        Just(TimeRange::ALL),
        (NOW_START - 9_000..NOW_START + 3_000).prop_map(TimeRange::before),
        (NOW_START - 9_000..NOW_START + 3_000, 0i64..6_000)
            .prop_map(|(a, w)| TimeRange::new(a, a + w)),
    ]
}

fn selection_strategy(families: Range<usize>) -> impl Strategy<Value = Selection> {
    (
        proptest::collection::vec((families, proptest::option::of(0..QUALS.len())), 0..3),
        time_range_strategy(),
        1u32..5,
    )
        .prop_map(|(columns, range, versions)| Selection {
            columns,
            range,
            versions,
        })
}

/// Gets of one column's newest version (the reads that consult a get's sources
/// one at a time, newest first), with or without a time range.
fn newest_version_get_strategy() -> impl Strategy<Value = Op> {
    (
        0..ROWS.len(),
        0..FAMILIES.len(),
        0..QUALS.len(),
        time_range_strategy(),
    )
        .prop_map(|(r, f, q, range)| {
            Op::Get(
                r,
                Selection {
                    columns: vec![(f, Some(q))],
                    range,
                    versions: 1,
                },
            )
        })
}

/// Puts, flushes (each one a file a get may consult), compactions, clock moves
/// (expiring the TTL family) and newest-version gets.
fn put_and_get_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => ((0..ROWS.len()), proptest::collection::vec(put_strategy(ALL_FAMILIES), 1..4))
            .prop_map(|(r, ms)| Op::Mutate(RowMutation { row: Bytes::from_static(ROWS[r]), mutations: ms })),
        3 => Just(Op::Flush),
        1 => Just(Op::MergeCompact),
        1 => Just(Op::Reopen),
        1 => (0i64..4_000).prop_map(Op::AdvanceClock),
        6 => newest_version_get_strategy(),
    ]
}

/// Every kind of operation, on the families of `families`.
fn op_strategy(families: Range<usize>) -> impl Strategy<Value = Op> {
    prop_oneof![
        12 => ((0..ROWS.len()), proptest::collection::vec(mutation_strategy(families.clone()), 1..4))
            .prop_map(|(r, ms)| Op::Mutate(RowMutation { row: Bytes::from_static(ROWS[r]), mutations: ms })),
        2 => Just(Op::Flush),
        1 => Just(Op::MergeCompact),
        1 => (0..ROWS.len()).prop_map(Op::MajorCompact),
        1 => Just(Op::Reopen),
        1 => (1..ROWS.len()).prop_map(Op::Split),
        1 => (0i64..4_000).prop_map(Op::AdvanceClock),
        4 => ((0..ROWS.len()), selection_strategy(families.clone())).prop_map(|(r, s)| Op::Get(r, s)),
        3 => (proptest::option::of(0..ROWS.len()), proptest::option::of(0..ROWS.len()), any::<bool>(), selection_strategy(families))
            .prop_map(|(start, stop, reverse, sel)| Op::Scan { start, stop, reverse, sel }),
    ]
}

// ---------------------------------------------------------------- the system under test

struct Harness {
    dir: tempfile::TempDir,
    clock: Arc<AtomicI64>,
    engine: Option<Engine>,
    /// (id, start, end) of the live tablets, in row order.
    tablets: Vec<(u64, Vec<u8>, Vec<u8>)>,
    next_id: u64,
}

impl Harness {
    fn new() -> Harness {
        let dir = tempfile::tempdir().expect("tempdir");
        let clock = Arc::new(AtomicI64::new(NOW_START));
        let mut h = Harness {
            dir,
            clock,
            engine: None,
            tablets: vec![(1, Vec::new(), Vec::new())],
            next_id: 2,
        };
        h.open();
        h
    }

    fn options(&self) -> EngineOptions {
        let mut o = EngineOptions::new(self.dir.path());
        o.background_work = false;
        o.max_files_per_read = 2;
        o.block_size = 256;
        o.memory_budget = 8 << 20;
        let c = Arc::clone(&self.clock);
        o.clock = Arc::new(move || c.load(Ordering::SeqCst));
        o
    }

    fn open(&mut self) {
        let engine = Engine::open(self.options()).expect("engine opens");
        for (id, start, end) in &self.tablets {
            engine
                .open_tablet(TabletDescriptor {
                    id: *id,
                    schema: schema(),
                    start_row: Bytes::from(start.clone()),
                    end_row: Bytes::from(end.clone()),
                })
                .expect("tablet opens");
        }
        self.engine = Some(engine);
    }

    fn engine(&self) -> &Engine {
        self.engine.as_ref().expect("engine is open")
    }

    fn tablet_for(&self, row: &[u8]) -> Arc<Tablet> {
        let (id, _, _) = self
            .tablets
            .iter()
            .find(|(_, s, e)| row >= s.as_slice() && (e.is_empty() || row < e.as_slice()))
            .expect("some tablet holds the row");
        self.engine().tablet(*id).expect("tablet is open")
    }

    fn now(&self) -> i64 {
        self.clock.load(Ordering::SeqCst)
    }
}

fn cells_of(cells: &[tabula_storage::Cell]) -> Vec<ModelCell> {
    cells
        .iter()
        .map(|c| {
            (
                c.family.to_vec(),
                c.qualifier.to_vec(),
                c.timestamp,
                c.value.to_vec(),
            )
        })
        .collect()
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut h = Harness::new();
    let mut model = Model::default();
    for (step, op) in ops.into_iter().enumerate() {
        match op {
            Op::Mutate(rm) => {
                let now = h.now();
                h.tablet_for(&rm.row)
                    .mutate(&rm, Durability::Sync)
                    .map_err(|e| TestCaseError::fail(format!("step {step}: {e}")))?;
                model.apply(&rm, now);
            }
            Op::Flush => {
                for (id, _, _) in &h.tablets {
                    h.engine()
                        .tablet(*id)
                        .expect("open")
                        .flush()
                        .expect("flush");
                }
            }
            Op::MergeCompact => {
                for (id, _, _) in &h.tablets {
                    h.engine()
                        .tablet(*id)
                        .expect("open")
                        .compact_if_needed()
                        .expect("compaction");
                }
            }
            Op::MajorCompact(r) => {
                let t = h.tablet_for(ROWS[r]);
                t.major_compact().expect("major compaction");
                model.major_compact(t.start_row(), t.end_row(), h.now());
            }
            Op::Reopen => {
                // Drop without flushing: the commit log must bring everything back.
                h.engine = None;
                h.open();
            }
            Op::Split(r) => {
                let at = ROWS[r];
                let Some(pos) = h
                    .tablets
                    .iter()
                    .position(|(_, s, e)| at > s.as_slice() && (e.is_empty() || at < e.as_slice()))
                else {
                    continue;
                };
                let (id, start, end) = h.tablets[pos].clone();
                let (l, rr) = (h.next_id, h.next_id + 1);
                h.next_id += 2;
                h.engine().split_tablet(id, at, l, rr).expect("split");
                h.tablets
                    .splice(pos..=pos, [(l, start, at.to_vec()), (rr, at.to_vec(), end)]);
            }
            Op::AdvanceClock(ms) => {
                h.clock.fetch_add(ms, Ordering::SeqCst);
            }
            Op::Get(r, sel) => {
                let row = Bytes::from_static(ROWS[r]);
                let got = h.tablet_for(&row).get(&row, sel.options()).expect("get");
                let want = model.read_row(&row, &sel, h.now());
                prop_assert_eq!(
                    cells_of(&got),
                    want,
                    "step {}: get {:?} {:?}",
                    step,
                    row,
                    sel
                );
            }
            Op::Scan {
                start,
                stop,
                reverse,
                sel,
            } => {
                let start_row = start.map(|i| ROWS[i].to_vec()).unwrap_or_default();
                let stop_row = stop.map(|i| ROWS[i].to_vec()).unwrap_or_default();
                let mut got: Vec<(Vec<u8>, Vec<ModelCell>)> = Vec::new();
                let order: Vec<(u64, Vec<u8>, Vec<u8>)> = if reverse {
                    h.tablets.iter().rev().cloned().collect()
                } else {
                    h.tablets.clone()
                };
                for (id, _, _) in order {
                    let t = h.engine().tablet(id).expect("open");
                    let mut s = t
                        .scan(ScanRequest {
                            start_row: Bytes::from(start_row.clone()),
                            stop_row: Bytes::from(stop_row.clone()),
                            reverse,
                            read: sel.options(),
                            batch: 0,
                        })
                        .expect("scan opens");
                    while let Some(r) = s.next_row().expect("scan row") {
                        got.push((r.row().to_vec(), cells_of(&r.cells)));
                    }
                }
                let now = h.now();
                let mut want: Vec<(Vec<u8>, Vec<ModelCell>)> = model
                    .rows()
                    .into_iter()
                    .filter(|r| {
                        if reverse {
                            (start_row.is_empty() || r.as_slice() <= start_row.as_slice())
                                && (stop_row.is_empty() || r.as_slice() > stop_row.as_slice())
                        } else {
                            r.as_slice() >= start_row.as_slice()
                                && (stop_row.is_empty() || r.as_slice() < stop_row.as_slice())
                        }
                    })
                    .map(|r| {
                        let cells = model.read_row(&r, &sel, now);
                        (r, cells)
                    })
                    .filter(|(_, c)| !c.is_empty())
                    .collect();
                if reverse {
                    want.reverse();
                }
                prop_assert_eq!(
                    got,
                    want,
                    "step {}: scan start={:?} stop={:?} reverse={} {:?}",
                    step,
                    start,
                    stop,
                    reverse,
                    sel
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, max_shrink_iters: 2000, .. ProptestConfig::default() })]

    #[test]
    fn engine_matches_model(ops in proptest::collection::vec(op_strategy(ALL_FAMILIES), 1..60)) {
        run(ops)?;
    }

    #[test]
    fn families_keeping_deleted_cells_match_model(
        ops in proptest::collection::vec(op_strategy(KEEPING_DELETED), 1..60)
    ) {
        run(ops)?;
    }

    #[test]
    fn newest_version_gets_match_model(ops in proptest::collection::vec(put_and_get_strategy(), 1..60)) {
        run(ops)?;
    }
}
