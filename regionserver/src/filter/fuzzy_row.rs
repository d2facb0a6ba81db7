//! `FuzzyRowFilter('key', 'mask', ...)`: rows matching any of a list of fuzzy keys (a
//! filter-language extension; HBase's Java clients send it serialized).
//!
//! A mask has one byte per key byte, in HBase's public convention: 0 means the row's
//! byte at that position must equal the key's, 1 means any byte will do. A row is
//! compared over the key's length only, so longer rows match on their first bytes;
//! and, as in HBase, a row shorter than the key is compared over its own length (it
//! matches when its bytes agree with the key's fixed positions it reaches). Once the
//! scan has moved past every row any key can match (reverse scans included) the
//! filter filters all remaining rows, ending the scan.
//! A row no key matches sends the scan to the nearest row in its direction that a
//! key may match (computed from the first position where the row breaks each key),
//! so runs of non-matching rows are jumped over rather than read. (The language
//! requires at least one key; the filter itself, given none, passes no row.)
//!
//! Must not: parse arguments (compile does) or combine filters (list, wrappers).

use std::cmp::Ordering;

use bytes::Bytes;

use super::row_set::{RowSet, RowSetFilter, ScanOrder};

/// One fuzzy key: the key's bytes and, per byte, whether the row must repeat it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FuzzyKey {
    key: Bytes,
    fixed: Vec<bool>,
}

impl FuzzyKey {
    /// A fuzzy key; `fixed[i]` says whether byte `i` of `key` must match. `None` when
    /// the lengths differ.
    pub(crate) fn new(key: Bytes, fixed: Vec<bool>) -> Option<FuzzyKey> {
        (key.len() == fixed.len()).then_some(FuzzyKey { key, fixed })
    }

    /// The key's (byte, must match) pairs.
    fn positions(&self) -> impl Iterator<Item = (u8, bool)> + '_ {
        self.key.iter().copied().zip(self.fixed.iter().copied())
    }

    /// `row` agrees with every fixed byte it reaches.
    pub(crate) fn matches(&self, row: &[u8]) -> bool {
        self.positions()
            .zip(row)
            .all(|((key, fixed), byte)| !fixed || key == *byte)
    }

    /// No row after `row` in scan `order` can match.
    fn passed(&self, row: &[u8], order: ScanOrder) -> bool {
        match order {
            // The greatest rows matching start with the key whose free bytes are all
            // 0xff; a row whose first bytes sort above that has left them behind.
            ScanOrder::Forward => {
                for ((key, fixed), byte) in self.positions().zip(row) {
                    let highest = if fixed { key } else { u8::MAX };
                    match byte.cmp(&highest) {
                        Ordering::Less => return false,
                        Ordering::Greater => return true,
                        Ordering::Equal => {}
                    }
                }
                false
            }
            // Every prefix of a matching row matches, so the one-byte rows are the
            // lowest that match: the scan has passed them when its row's first byte
            // sorts below a fixed first key byte.
            ScanOrder::Reverse => match (self.positions().next(), row.first()) {
                (Some((key, true)), Some(byte)) => *byte < key,
                _ => false,
            },
        }
    }

    /// The first position where `row` breaks the key (a fixed byte it differs at),
    /// with the row's and the key's byte there.
    fn first_break(&self, row: &[u8]) -> Option<(usize, u8, u8)> {
        self.positions()
            .zip(row)
            .enumerate()
            .find(|(_, ((key, fixed), byte))| *fixed && key != *byte)
            .map(|(at, ((key, _), byte))| (at, *byte, key))
    }

    /// For a `row` this key does not match, a bound no row between `row` and which
    /// (in scan `order`) this key matches, as [`RowSet::resume_at`] means it; `None`
    /// when the key matches no row further on.
    fn resume_at(&self, row: &[u8], order: ScanOrder) -> Option<Vec<u8>> {
        let (at, byte, wanted) = self.first_break(row)?;
        let kept = row.get(..at)?;
        let mut bound = Vec::with_capacity(at + 1);
        match (order, byte < wanted) {
            // Below the wanted byte: the rows from the row's prefix with that byte.
            (ScanOrder::Forward, true) => {
                bound.extend_from_slice(kept);
                bound.push(wanted);
            }
            // Above it: raise the last free byte before it that can rise (rows
            // keeping the prefix up to there all break the key at `at` or earlier).
            (ScanOrder::Forward, false) => {
                let free = (0..at).rev().find(|&i| {
                    self.fixed.get(i) == Some(&false) && row.get(i).is_some_and(|b| *b < u8::MAX)
                })?;
                bound.extend_from_slice(row.get(..free)?);
                bound.push(row.get(free)?.checked_add(1)?);
            }
            // Above the wanted byte: the rows with the wanted byte there, and below.
            (ScanOrder::Reverse, false) => {
                bound.extend_from_slice(kept);
                bound.push(wanted.checked_add(1)?);
            }
            // Below it: every row keeping the prefix breaks the key at `at`, so the
            // prefix itself (which the key matches) and what sorts below it.
            (ScanOrder::Reverse, true) => {
                bound.extend_from_slice(kept);
                bound.push(0);
            }
        }
        Some(bound)
    }
}

/// The fuzzy keys of a filter: a row is kept when it matches any.
pub(crate) struct FuzzyKeys(pub(crate) Vec<FuzzyKey>);

impl RowSet for FuzzyKeys {
    fn contains(&self, row: &[u8]) -> bool {
        self.0.iter().any(|key| key.matches(row))
    }

    fn passed(&self, row: &[u8], order: ScanOrder) -> bool {
        self.0.iter().all(|key| key.passed(row, order))
    }

    fn resume_at(&self, row: &[u8], order: ScanOrder) -> Option<Vec<u8>> {
        // The nearest of the keys' bounds; a key without one matches nothing further.
        let bounds = self.0.iter().filter_map(|key| key.resume_at(row, order));
        match order {
            ScanOrder::Forward => bounds.min(),
            ScanOrder::Reverse => bounds.max(),
        }
    }
}

/// The filter; see the module documentation.
pub(crate) type FuzzyRowFilter = RowSetFilter<FuzzyKeys>;

#[cfg(test)]
mod tests {
    use super::*;

    fn fuzzy(key: &[u8], mask: &[u8]) -> FuzzyKey {
        FuzzyKey::new(
            Bytes::copy_from_slice(key),
            mask.iter().map(|m| *m == 0).collect(),
        )
        .unwrap()
    }

    #[test]
    fn fixed_bytes_must_match_and_free_ones_need_not() {
        let key = fuzzy(b"??_99", &[1, 1, 0, 0, 0]);
        assert!(key.matches(b"ab_99"));
        assert!(key.matches(b"\xff\x00_99 and more"));
        assert!(!key.matches(b"ab_98"));
        assert!(!key.matches(b"ab-99"));
        // Shorter rows are compared over their own length.
        assert!(key.matches(b"ab_9"));
        assert!(!key.matches(b"ab-"));
        assert!(fuzzy(b"", &[]).matches(b"anything"));
    }

    #[test]
    fn forward_past_means_above_every_match() {
        let key = fuzzy(b"a?c", &[0, 1, 0]);
        assert!(!key.passed(b"a\xffc", ScanOrder::Forward));
        assert!(!key.passed(b"a\xffb", ScanOrder::Forward));
        assert!(key.passed(b"a\xffd", ScanOrder::Forward));
        assert!(key.passed(b"b", ScanOrder::Forward));
        assert!(!key.passed(b"a", ScanOrder::Forward));
        assert!(!key.passed(b"\x00", ScanOrder::Forward));
    }

    #[test]
    fn reverse_past_means_below_every_match() {
        let key = fuzzy(b"b?c", &[0, 1, 0]);
        assert!(key.passed(b"a\xff\xff", ScanOrder::Reverse));
        assert!(!key.passed(b"b", ScanOrder::Reverse));
        assert!(!key.passed(b"c", ScanOrder::Reverse));
        let free_first = fuzzy(b"?b", &[1, 0]);
        assert!(!free_first.passed(b"\x00", ScanOrder::Reverse));
    }
}
