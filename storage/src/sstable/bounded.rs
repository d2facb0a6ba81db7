//! A row-range view over any sorted source, for tablets that own part of a file.
//!
//! Owns: [`BoundedIter`], which wraps a [`KvIter`] and exposes only entries whose
//! row lies in `[start_row, end_row)`, clamping every positioning call. After a
//! split, both daughter tablets read the parent's files through it.
//! Must not: filter by anything but the row, or copy entries.

use crate::error::Result;
use crate::iter::KvIter;
use crate::key;

/// Entries of `inner` whose row is in `[start_row, end_row)`.
///
/// An empty `start_row` means no lower bound, an empty `end_row` no upper bound.
/// Because keys begin with the escaped row, the bounds are the keys
/// `key::row_start(start_row)` (inclusive) and `key::row_start(end_row)` (exclusive).
#[derive(Debug)]
pub struct BoundedIter<I> {
    inner: I,
    lower: Option<Vec<u8>>,
    upper: Option<Vec<u8>>,
    in_range: bool,
}

impl<I: KvIter> BoundedIter<I> {
    /// Bounds `inner` to rows in `[start_row, end_row)`.
    pub fn new(inner: I, start_row: &[u8], end_row: &[u8]) -> Self {
        let bound = |row: &[u8]| (!row.is_empty()).then(|| key::row_start(row));
        BoundedIter {
            inner,
            lower: bound(start_row),
            upper: bound(end_row),
            in_range: false,
        }
    }

    /// The wrapped cursor.
    pub fn inner(&self) -> &I {
        &self.inner
    }

    /// Unwraps the cursor.
    pub fn into_inner(self) -> I {
        self.inner
    }

    fn below_upper(&self) -> bool {
        self.upper
            .as_deref()
            .is_none_or(|upper| self.inner.key() < upper)
    }

    fn at_or_above_lower(&self) -> bool {
        self.lower
            .as_deref()
            .is_none_or(|lower| self.inner.key() >= lower)
    }
}

impl<I: KvIter> KvIter for BoundedIter<I> {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        self.in_range = false;
        let target = match self.lower.as_deref() {
            Some(lower) if target < lower => lower,
            _ => target,
        };
        // Past the upper bound there is nothing to find.
        if self.upper.as_deref().is_some_and(|upper| target >= upper) {
            return Ok(());
        }
        self.inner.seek(target)?;
        self.in_range = self.inner.valid() && self.below_upper();
        Ok(())
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.in_range = false;
        let target = match self.upper.as_deref() {
            Some(upper) if target > upper => upper,
            _ => target,
        };
        if self.lower.as_deref().is_some_and(|lower| target <= lower) {
            return Ok(());
        }
        self.inner.seek_for_prev(target)?;
        self.in_range = self.inner.valid() && self.at_or_above_lower();
        Ok(())
    }

    fn next(&mut self) -> Result<()> {
        if !self.in_range {
            return Ok(());
        }
        self.in_range = false;
        self.inner.next()?;
        self.in_range = self.inner.valid() && self.below_upper();
        Ok(())
    }

    fn valid(&self) -> bool {
        self.in_range && self.inner.valid()
    }

    fn key(&self) -> &[u8] {
        self.inner.key()
    }

    fn value(&self) -> &[u8] {
        self.inner.value()
    }

    fn value_bytes(&self) -> bytes::Bytes {
        self.inner.value_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{encode, KeyKind};
    use proptest::prelude::*;

    /// A sorted in-memory source for testing the wrapper alone.
    struct VecIter {
        entries: Vec<(Vec<u8>, Vec<u8>)>,
        pos: usize,
    }

    impl KvIter for VecIter {
        fn seek(&mut self, target: &[u8]) -> Result<()> {
            self.pos = self.entries.partition_point(|(k, _)| k.as_slice() < target);
            Ok(())
        }
        fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
            let p = self.entries.partition_point(|(k, _)| k.as_slice() < target);
            self.pos = p.checked_sub(1).unwrap_or(self.entries.len());
            Ok(())
        }
        fn next(&mut self) -> Result<()> {
            self.pos += 1;
            Ok(())
        }
        fn valid(&self) -> bool {
            self.pos < self.entries.len()
        }
        fn key(&self) -> &[u8] {
            &self.entries[self.pos].0
        }
        fn value(&self) -> &[u8] {
            &self.entries[self.pos].1
        }
    }

    fn row() -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(
            prop_oneof![Just(0u8), Just(1u8), Just(b'a'), Just(0xFFu8)],
            0..4,
        )
    }

    fn collect(it: &mut impl KvIter) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while it.valid() {
            out.push(it.key().to_vec());
            it.next().unwrap();
        }
        out
    }

    proptest! {
        #[test]
        fn exposes_exactly_the_rows_in_range(
            rows in proptest::collection::btree_set(row().prop_filter("non-empty", |r| !r.is_empty()), 0..30),
            start in row(),
            end in row(),
            targets in proptest::collection::vec(row(), 1..8),
        ) {
            let mut entries: Vec<(Vec<u8>, Vec<u8>)> = rows
                .iter()
                .flat_map(|r| {
                    [
                        encode(r, b"f", b"", KeyKind::DeleteFamily, 9, 3),
                        encode(r, b"f", b"q", KeyKind::Put, 5, 1),
                        encode(r, b"f", b"q\x00", KeyKind::Put, 4, 2),
                    ]
                })
                .map(|k| (k, b"v".to_vec()))
                .collect();
            entries.sort();
            let in_range = |k: &[u8]| {
                let r = key::row_of(k).unwrap();
                (start.is_empty() || r >= start) && (end.is_empty() || r < end)
            };
            let model: Vec<Vec<u8>> = entries.iter().map(|(k, _)| k.clone()).filter(|k| in_range(k)).collect();
            let mut it = BoundedIter::new(VecIter { entries: entries.clone(), pos: 0 }, &start, &end);

            it.seek_to_first().unwrap();
            prop_assert_eq!(collect(&mut it), model.clone());

            let mut all_targets: Vec<Vec<u8>> = targets.iter().map(|t| key::row_start(t)).collect();
            all_targets.extend(targets.iter().map(|t| key::row_end(t)));
            all_targets.extend(entries.iter().map(|(k, _)| k.clone()));
            for t in &all_targets {
                it.seek(t).unwrap();
                let expect: Vec<Vec<u8>> = model.iter().filter(|k| k.as_slice() >= t.as_slice()).cloned().collect();
                prop_assert_eq!(collect(&mut it), expect);

                it.seek_for_prev(t).unwrap();
                let expect = model.iter().rfind(|k| k.as_slice() < t.as_slice()).cloned();
                prop_assert_eq!(it.valid().then(|| it.key().to_vec()), expect.clone());
                if let Some(prev) = expect {
                    it.next().unwrap();
                    let after = model.iter().find(|k| **k > prev).cloned();
                    prop_assert_eq!(it.valid().then(|| it.key().to_vec()), after);
                }
            }
        }
    }

    #[test]
    fn unbounded_on_both_sides_passes_everything() {
        let entries: Vec<(Vec<u8>, Vec<u8>)> = [b"a".as_slice(), b"b", b"c"]
            .iter()
            .map(|r| (encode(r, b"f", b"q", KeyKind::Put, 1, 1), r.to_vec()))
            .collect();
        let mut it = BoundedIter::new(VecIter { entries, pos: 0 }, b"", b"");
        it.seek_to_first().unwrap();
        assert_eq!(collect(&mut it).len(), 3);
        let mut it = it.into_inner();
        it.seek_to_first().unwrap();
        let mut bounded = BoundedIter::new(it, b"b", b"c");
        bounded.seek_to_first().unwrap();
        assert_eq!(bounded.value(), b"b");
        bounded.next().unwrap();
        assert!(!bounded.valid());
        bounded.seek(&key::row_start(b"c")).unwrap();
        assert!(!bounded.valid());
        bounded.seek_for_prev(&key::row_start(b"b")).unwrap();
        assert!(!bounded.valid());
    }
}
