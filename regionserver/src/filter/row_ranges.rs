//! `MultiRowRangeFilter('start', startInclusive, 'stop', stopInclusive, ...)`: rows in
//! any of a set of row ranges (a filter-language extension; HBase's Java clients send
//! it serialized).
//!
//! An empty start or stop row leaves that end of a range open. As in HBase, a range
//! whose start sorts after its stop (or equals it with an exclusive stop) is invalid,
//! and the ranges are sorted and merged where they overlap or touch, so a row passes
//! when it lies in any of them. Once the scan has moved past the last range in its
//! direction (reverse scans included) the filter filters all remaining rows, ending
//! the scan. A row between ranges sends the scan straight to the next range in its
//! direction, so the rows between are never read.
//!
//! Must not: parse arguments (compile does) or combine filters (list, wrappers).

use std::cmp::Ordering;

use bytes::Bytes;

use super::row_set::{RowSet, RowSetFilter, ScanOrder};

/// One end of a row range.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bound {
    /// No limit on this side.
    Open,
    Inclusive(Bytes),
    Exclusive(Bytes),
}

impl Bound {
    fn new(row: Bytes, inclusive: bool) -> Bound {
        if row.is_empty() {
            Bound::Open
        } else if inclusive {
            Bound::Inclusive(row)
        } else {
            Bound::Exclusive(row)
        }
    }

    fn row(&self) -> Option<&[u8]> {
        match self {
            Bound::Open => None,
            Bound::Inclusive(row) | Bound::Exclusive(row) => Some(row),
        }
    }
}

/// A valid, non-empty row range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RowRange {
    start: Bound,
    stop: Bound,
}

/// Why a range was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct InvalidRange;

impl RowRange {
    /// The range from `start` to `stop` (empty = open), or `Ok(None)` for a valid range
    /// that holds no row (`(r, r]`). A start after the stop, or equal to it with an
    /// exclusive stop, is invalid.
    pub(crate) fn new(
        start: Bytes,
        start_inclusive: bool,
        stop: Bytes,
        stop_inclusive: bool,
    ) -> Result<Option<RowRange>, InvalidRange> {
        if !start.is_empty() && !stop.is_empty() {
            match start.cmp(&stop) {
                Ordering::Greater => return Err(InvalidRange),
                Ordering::Equal if !stop_inclusive => return Err(InvalidRange),
                Ordering::Equal if !start_inclusive => return Ok(None),
                _ => {}
            }
        }
        Ok(Some(RowRange {
            start: Bound::new(start, start_inclusive),
            stop: Bound::new(stop, stop_inclusive),
        }))
    }

    /// `row` sorts before the range.
    fn starts_after(&self, row: &[u8]) -> bool {
        match &self.start {
            Bound::Open => false,
            Bound::Inclusive(start) => row < start.as_ref(),
            Bound::Exclusive(start) => row <= start.as_ref(),
        }
    }

    /// `row` sorts after the range.
    fn ends_before(&self, row: &[u8]) -> bool {
        match &self.stop {
            Bound::Open => false,
            Bound::Inclusive(stop) => row > stop.as_ref(),
            Bound::Exclusive(stop) => row >= stop.as_ref(),
        }
    }

    /// Orders ranges by where they start.
    fn cmp_start(&self, other: &RowRange) -> Ordering {
        match (&self.start, &other.start) {
            (Bound::Open, Bound::Open) => Ordering::Equal,
            (Bound::Open, _) => Ordering::Less,
            (_, Bound::Open) => Ordering::Greater,
            (a, b) => a.row().cmp(&b.row()).then_with(|| {
                // At the same row an inclusive start comes first.
                let exclusive = |bound: &Bound| matches!(bound, Bound::Exclusive(_));
                exclusive(a).cmp(&exclusive(b))
            }),
        }
    }

    /// True when `next` (which starts no earlier) starts inside this range or right
    /// where it ends, so that the two are one stretch of rows.
    fn joins(&self, next: &RowRange) -> bool {
        let (Some(stop), Some(start)) = (self.stop.row(), next.start.row()) else {
            return true;
        };
        match start.cmp(stop) {
            Ordering::Less => true,
            Ordering::Greater => false,
            // `.., r)` and `(r, ..` leave `r` out; any other pair covers it.
            Ordering::Equal => !matches!(
                (&self.stop, &next.start),
                (Bound::Exclusive(_), Bound::Exclusive(_))
            ),
        }
    }

    /// Extends this range's stop to `other`'s when that one reaches further.
    fn extend_to(&mut self, other: &RowRange) {
        let reach = |bound: &Bound| match bound {
            Bound::Open => None,
            Bound::Exclusive(row) => Some((row.clone(), false)),
            Bound::Inclusive(row) => Some((row.clone(), true)),
        };
        let further = match (reach(&self.stop), reach(&other.stop)) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(mine), Some(theirs)) => theirs > mine,
        };
        if further {
            self.stop = other.stop.clone();
        }
    }
}

/// Sorts the ranges and merges those that overlap or touch: the result is disjoint and
/// ascending, in starts and stops alike.
fn sort_and_merge(mut ranges: Vec<RowRange>) -> Vec<RowRange> {
    ranges.sort_by(RowRange::cmp_start);
    let mut merged: Vec<RowRange> = Vec::with_capacity(ranges.len());
    for range in ranges {
        match merged.last_mut() {
            Some(last) if last.joins(&range) => last.extend_to(&range),
            _ => merged.push(range),
        }
    }
    merged
}

/// The ranges of a filter, disjoint and ascending (sorted and merged when made).
pub(crate) struct RowRanges(Vec<RowRange>);

impl RowRanges {
    pub(crate) fn new(ranges: Vec<RowRange>) -> Self {
        RowRanges(sort_and_merge(ranges))
    }
}

impl RowSet for RowRanges {
    fn contains(&self, row: &[u8]) -> bool {
        // The ranges starting at or before `row` come first; only the last of them can
        // hold it.
        let starting = self.0.partition_point(|range| !range.starts_after(row));
        starting
            .checked_sub(1)
            .and_then(|index| self.0.get(index))
            .is_some_and(|range| !range.ends_before(row))
    }

    fn passed(&self, row: &[u8], order: ScanOrder) -> bool {
        match order {
            ScanOrder::Forward => self.0.last().is_none_or(|r| r.ends_before(row)),
            ScanOrder::Reverse => self.0.first().is_none_or(|r| r.starts_after(row)),
        }
    }

    fn resume_at(&self, row: &[u8], order: ScanOrder) -> Option<Vec<u8>> {
        match order {
            // The first range starting above `row`: its first row.
            ScanOrder::Forward => {
                let next = self.0.partition_point(|range| !range.starts_after(row));
                match &self.0.get(next)?.start {
                    Bound::Open => None,
                    Bound::Inclusive(start) => Some(start.to_vec()),
                    Bound::Exclusive(start) => Some(row_after(start)),
                }
            }
            // The last range ending below `row`: just above its last row.
            ScanOrder::Reverse => {
                let ended = self.0.partition_point(|range| range.ends_before(row));
                match &self.0.get(ended.checked_sub(1)?)?.stop {
                    Bound::Open => None,
                    Bound::Inclusive(stop) => Some(row_after(stop)),
                    Bound::Exclusive(stop) => Some(stop.to_vec()),
                }
            }
        }
    }
}

/// The first row sorting after `row`: `row` with a zero byte appended.
fn row_after(row: &[u8]) -> Vec<u8> {
    let mut next = Vec::with_capacity(row.len() + 1);
    next.extend_from_slice(row);
    next.push(0);
    next
}

/// The filter; see the module documentation.
pub(crate) type MultiRowRangeFilter = RowSetFilter<RowRanges>;

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: &str, start_inclusive: bool, stop: &str, stop_inclusive: bool) -> RowRange {
        RowRange::new(
            Bytes::copy_from_slice(start.as_bytes()),
            start_inclusive,
            Bytes::copy_from_slice(stop.as_bytes()),
            stop_inclusive,
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn ranges_are_checked_as_hbase_checks_them() {
        let new = |start: &str, si, stop: &str, ti| {
            RowRange::new(
                Bytes::copy_from_slice(start.as_bytes()),
                si,
                Bytes::copy_from_slice(stop.as_bytes()),
                ti,
            )
        };
        assert_eq!(new("b", true, "a", true), Err(InvalidRange));
        assert_eq!(new("a", true, "a", false), Err(InvalidRange));
        assert_eq!(new("a", false, "a", true), Ok(None));
        assert!(matches!(new("a", true, "a", true), Ok(Some(_))));
        assert!(matches!(new("z", false, "", false), Ok(Some(_))));
        assert!(matches!(new("", false, "a", false), Ok(Some(_))));
    }

    #[test]
    fn overlapping_and_touching_ranges_merge() {
        let merged = sort_and_merge(vec![
            range("m", true, "p", false),
            range("a", true, "c", false),
            range("c", true, "e", true),
            range("b", false, "d", false),
            range("e", false, "f", false),
            range("g", true, "h", false),
            range("h", false, "i", false),
            range("x", true, "", false),
            range("y", true, "z", false),
        ]);
        assert_eq!(
            merged,
            vec![
                range("a", true, "f", false),
                range("g", true, "h", false),
                range("h", false, "i", false),
                range("m", true, "p", false),
                range("x", true, "", false),
            ]
        );
    }

    #[test]
    fn an_open_start_absorbs_what_it_reaches() {
        let merged = sort_and_merge(vec![
            range("b", true, "d", false),
            range("", true, "c", true),
        ]);
        assert_eq!(merged, vec![range("", true, "d", false)]);
    }
}
