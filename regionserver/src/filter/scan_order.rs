//! Which way a scan walks, as a filter can tell it from the row keys it is shown: the
//! engine does not tell filters whether a scan is reversed, and a filter that ends the
//! scan once no later row can pass must know what "later" means.
//!
//! Must not: decide on rows (the filters using it do).

use std::cmp::Ordering;

/// The order rows arrive in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanOrder {
    /// Ascending row keys (a forward scan).
    Forward,
    /// Descending row keys (a reverse scan).
    Reverse,
}

/// Learns the scan order from the first two distinct row keys a filter sees. Until
/// then the order is unknown (a Get, or a scan's first row), and a filter must not end
/// the scan on the strength of it.
#[derive(Debug, Default)]
pub(crate) struct ScanOrderTracker {
    first_row: Option<Vec<u8>>,
    order: Option<ScanOrder>,
}

impl ScanOrderTracker {
    /// Notes `row` (the next row key the scan shows) and returns the order, once known.
    pub(crate) fn observe(&mut self, row: &[u8]) -> Option<ScanOrder> {
        if self.order.is_some() {
            return self.order;
        }
        match &self.first_row {
            None => self.first_row = Some(row.to_vec()),
            Some(first) => {
                self.order = match row.cmp(first.as_slice()) {
                    Ordering::Greater => Some(ScanOrder::Forward),
                    Ordering::Less => Some(ScanOrder::Reverse),
                    Ordering::Equal => None,
                };
                if self.order.is_some() {
                    self.first_row = None;
                }
            }
        }
        self.order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_is_known_from_the_second_distinct_row() {
        let mut forward = ScanOrderTracker::default();
        assert_eq!(forward.observe(b"b"), None);
        assert_eq!(forward.observe(b"b"), None);
        assert_eq!(forward.observe(b"c"), Some(ScanOrder::Forward));
        // Once known it stays.
        assert_eq!(forward.observe(b"a"), Some(ScanOrder::Forward));

        let mut reverse = ScanOrderTracker::default();
        assert_eq!(reverse.observe(b"b"), None);
        assert_eq!(reverse.observe(b"a"), Some(ScanOrder::Reverse));
    }
}
