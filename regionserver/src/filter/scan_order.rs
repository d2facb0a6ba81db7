//! Which way a scan walks, for the filters that end a scan once no later row can
//! pass and must know what "later" means. The regionserver tells every filter of a
//! reversed scan before its first row ([`tabula_storage::Filter::set_reversed`]).
//!
//! Must not: decide on rows (the filters using it do).

/// The order rows arrive in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum ScanOrder {
    /// Ascending row keys (a forward scan, or a get).
    #[default]
    Forward,
    /// Descending row keys (a reverse scan).
    Reverse,
}

impl ScanOrder {
    /// The order of a scan that is `reversed` or not.
    pub(crate) fn of(reversed: bool) -> ScanOrder {
        if reversed {
            ScanOrder::Reverse
        } else {
            ScanOrder::Forward
        }
    }
}
