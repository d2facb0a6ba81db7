//! The one iterator interface every sorted source implements.
//!
//! Owns: [`KvIter`], implemented by memtable iterators, SSTable iterators, key-range
//! bounded iterators and the merging iterator, so that merges compose.
//! Must not: interpret keys beyond byte order.

use bytes::Bytes;

use crate::error::Result;

/// A cursor over `(internal key, value)` pairs in ascending key order.
///
/// After any positioning call, either `valid()` is false or `key()`/`value()` name the
/// current entry. Errors (I/O, corruption) are returned by the positioning calls.
pub trait KvIter: Send {
    /// Positions at the first entry with key >= `target`.
    fn seek(&mut self, target: &[u8]) -> Result<()>;

    /// Positions at the last entry with key < `target` (strictly).
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()>;

    /// Positions at the first entry.
    fn seek_to_first(&mut self) -> Result<()> {
        self.seek(&[])
    }

    /// Moves to the next entry. Only valid when `valid()`.
    fn next(&mut self) -> Result<()>;

    /// Whether the cursor names an entry.
    fn valid(&self) -> bool;

    /// The current key. Only meaningful when `valid()`.
    fn key(&self) -> &[u8];

    /// The current value. Only meaningful when `valid()`.
    fn value(&self) -> &[u8];

    /// The current value as owned bytes. Sources holding values in shared buffers
    /// may return a slice of them instead of a copy.
    fn value_bytes(&self) -> Bytes {
        Bytes::copy_from_slice(self.value())
    }
}
