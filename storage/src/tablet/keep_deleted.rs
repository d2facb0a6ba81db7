//! Major compaction of a family that keeps deleted cells (HBase's
//! KEEP_DELETED_CELLS): which puts and delete markers survive.
//!
//! Owns: [`retain_entries`], one pass over a family's merged entries that keeps a
//! column's versions by count and TTL (min versions included) without letting
//! delete markers remove what they cover, and keeps each marker while a version
//! it may cover is kept. With [`KeepDeleted::UntilTtl`], a marker the TTL expired
//! deletes in earnest: it is dropped and so is everything it covers.
//! Must not: read or write files (compact.rs does), or decide what a read returns
//! (read.rs does: there, markers outside a read's time range are passed over).

use crate::error::{Error, Result};
use crate::iter::KvIter;
use crate::key::{self, KeyKind, KeyTail};
use crate::read::{column_part, DeleteMarkers};
use crate::schema::{FamilySchema, KeepDeleted};

/// Where kept entries go, in key order.
pub(crate) type Sink<'a> = dyn FnMut(&[u8], &[u8]) -> Result<()> + 'a;

/// What a family keeps.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Retention {
    max_versions: u32,
    min_versions: u32,
    /// Oldest timestamp the TTL leaves alive (i64::MIN: no TTL).
    ttl_cutoff: i64,
    mode: KeepDeleted,
}

impl Retention {
    /// What `family` keeps at `now_ms`.
    pub(crate) fn of(family: &FamilySchema, now_ms: i64) -> Self {
        Retention {
            max_versions: family.max_versions,
            min_versions: family.min_versions,
            ttl_cutoff: family.ttl_cutoff(now_ms),
            mode: family.keep_deleted,
        }
    }

    fn expired(&self, ts: i64) -> bool {
        ts < self.ttl_cutoff
    }

    /// A marker the TTL expired that deletes what it covers and goes.
    fn enforced(&self, ts: i64) -> bool {
        self.mode == KeepDeleted::UntilTtl && self.expired(ts)
    }
}

/// A delete marker of the column at hand, copied out of the cursor.
struct Marker {
    key: Vec<u8>,
    value: Vec<u8>,
    timestamp: i64,
    keep: bool,
}

fn bad_key() -> Error {
    Error::corruption("<compaction input>", "malformed internal key")
}

/// Passes every entry of the family under `iter` (positioned at its first entry;
/// only this family's entries) that `rules` keep to `out`, in key order.
pub(crate) fn retain_entries(
    iter: &mut dyn KvIter,
    rules: &Retention,
    out: &mut Sink<'_>,
) -> Result<()> {
    let mut row: Vec<u8> = Vec::new();
    let mut family_deletes = DeleteMarkers::default();
    let mut last_key: Vec<u8> = Vec::new();
    while iter.valid() {
        let k = iter.key();
        let row_len = key::row_prefix_len(k).ok_or_else(bad_key)?;
        let family_len = key::family_prefix_len(k).ok_or_else(bad_key)?;
        if k.get(..row_len) != Some(row.as_slice()) {
            row.clear();
            row.extend_from_slice(k.get(..row_len).ok_or_else(bad_key)?);
            family_deletes = DeleteMarkers::default();
        }
        if k.get(family_len) != Some(&key::SCOPE_COLUMN) {
            // A family-wide marker. The same key from two inputs is one entry.
            if k != last_key.as_slice() {
                let tail = key::tail(k).ok_or_else(bad_key)?;
                if rules.enforced(tail.timestamp) {
                    family_deletes.add(tail.kind, tail.timestamp);
                } else if !(rules.expired(tail.timestamp) && rules.min_versions == 0) {
                    // Kept: unless every version it covers has expired and none
                    // is kept past the TTL, one may still be kept below.
                    out(k, iter.value())?;
                }
                last_key.clear();
                last_key.extend_from_slice(k);
            }
            iter.next()?;
            continue;
        }
        let col = column_part(k).ok_or_else(bad_key)?.to_vec();
        let mut walk = ColumnWalk::new(rules, family_deletes.clone());
        while iter.valid() && column_part(iter.key()) == Some(col.as_slice()) {
            let k = iter.key();
            if k != last_key.as_slice() {
                let tail = key::tail(k).ok_or_else(bad_key)?;
                if tail.kind == KeyKind::Put {
                    walk.put(k, iter.value(), tail.timestamp, out)?;
                } else {
                    // A column's markers come before its puts.
                    walk.marker(k, iter.value(), &tail);
                }
                last_key.clear();
                last_key.extend_from_slice(k);
            }
            iter.next()?;
        }
        walk.finish(out)?;
    }
    Ok(())
}

/// One column's entries, newest first, markers (which precede the puts in key
/// order) weighed as if among the puts by timestamp, a marker before the puts of
/// its own timestamp. From the first entry past the versions or the TTL on,
/// nothing of the column is kept. A marker is kept when the walk reaches it and a
/// put at or before its time exists; it is written out once that is decided, so
/// the puts newer than an undecided marker are held back until then.
struct ColumnWalk<'r> {
    rules: &'r Retention,
    deletes: DeleteMarkers,
    markers: Vec<Marker>,
    decided: usize,
    markers_written: bool,
    held: Vec<(Vec<u8>, Vec<u8>)>,
    versions: u32,
    last_put_ts: Option<i64>,
    ended: bool,
}

impl<'r> ColumnWalk<'r> {
    fn new(rules: &'r Retention, deletes: DeleteMarkers) -> Self {
        ColumnWalk {
            rules,
            deletes,
            markers: Vec::new(),
            decided: 0,
            markers_written: false,
            held: Vec::new(),
            versions: 0,
            last_put_ts: None,
            ended: false,
        }
    }

    fn marker(&mut self, key: &[u8], value: &[u8], tail: &KeyTail) {
        if self.rules.enforced(tail.timestamp) {
            self.deletes.add(tail.kind, tail.timestamp);
            return;
        }
        self.markers.push(Marker {
            key: key.to_vec(),
            value: value.to_vec(),
            timestamp: tail.timestamp,
            keep: false,
        });
    }

    /// Decides the markers at or after `put_ts` (all that remain at `None`, the
    /// column's end), in timestamp order.
    fn decide_markers(&mut self, put_ts: Option<i64>) {
        while let Some(m) = self.markers.get_mut(self.decided) {
            if put_ts.is_some_and(|ts| m.timestamp < ts) {
                break;
            }
            if !self.ended
                && self.rules.expired(m.timestamp)
                && self.versions >= self.rules.min_versions
            {
                self.ended = true;
            }
            m.keep = !self.ended && put_ts.is_some();
            self.decided += 1;
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8], ts: i64, out: &mut Sink<'_>) -> Result<()> {
        self.decide_markers(Some(ts));
        let duplicate = self.last_put_ts == Some(ts);
        self.last_put_ts = Some(ts);
        if self.ended || duplicate || self.deletes.covers(ts) {
            return Ok(());
        }
        self.versions += 1;
        if self.versions > self.rules.max_versions
            || (self.rules.expired(ts) && self.versions > self.rules.min_versions)
        {
            self.ended = true;
            return Ok(());
        }
        if self.decided < self.markers.len() {
            self.held.push((key.to_vec(), value.to_vec()));
            return Ok(());
        }
        self.write_decided(out)?;
        out(key, value)
    }

    /// Writes the markers (all decided) and the puts held back for them.
    fn write_decided(&mut self, out: &mut Sink<'_>) -> Result<()> {
        if !self.markers_written {
            for m in self.markers.iter().filter(|m| m.keep) {
                out(&m.key, &m.value)?;
            }
            self.markers_written = true;
        }
        for (k, v) in self.held.drain(..) {
            out(&k, &v)?;
        }
        Ok(())
    }

    fn finish(mut self, out: &mut Sink<'_>) -> Result<()> {
        self.decide_markers(None);
        self.write_decided(out)
    }
}
