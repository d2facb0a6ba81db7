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
//! The engine has no seek hints, so non-matching rows are read and skipped by key
//! rather than jumped over. (The language requires at least one key; the filter
//! itself, given none, passes no row.)
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
