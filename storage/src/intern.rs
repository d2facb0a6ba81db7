//! Process-wide interning of column family names.
//!
//! Owns: a bounded table of family names kept for the life of the process. A
//! schema's family names are taken from it, so the family handle in every cell a
//! read returns is a static slice: cloning and dropping it touch no reference
//! count (a scan hands out one per cell).
//! Must not: intern anything a client can produce without bound (rows,
//! qualifiers, values); names past [`MAX_INTERNED_BYTES`] stay ordinary handles.

use std::collections::HashSet;
use std::sync::OnceLock;

use bytes::Bytes;
use parking_lot::Mutex;

/// Bytes of names the table keeps at most: far more than the families of any
/// real deployment, and a bound on what repeated create/drop of tables with
/// ever-new family names can hold on to.
pub const MAX_INTERNED_BYTES: usize = 1 << 20;

#[derive(Default)]
struct Table {
    names: HashSet<&'static [u8]>,
    bytes: usize,
}

fn table() -> &'static Mutex<Table> {
    static TABLE: OnceLock<Mutex<Table>> = OnceLock::new();
    TABLE.get_or_init(|| Mutex::new(Table::default()))
}

/// `name` as a handle on the interned copy of it, or as an ordinary copy once
/// the table is full.
pub fn family_name(name: &[u8]) -> Bytes {
    table().lock().intern(name, MAX_INTERNED_BYTES)
}

impl Table {
    /// `name` from the table, added to it while it holds at most `limit` bytes.
    fn intern(&mut self, name: &[u8], limit: usize) -> Bytes {
        if let Some(&kept) = self.names.get(name) {
            return Bytes::from_static(kept);
        }
        if self.bytes.saturating_add(name.len()) > limit {
            return Bytes::copy_from_slice(name);
        }
        let kept: &'static [u8] = Box::leak(name.to_vec().into_boxed_slice());
        self.names.insert(kept);
        self.bytes += name.len();
        Bytes::from_static(kept)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_names_share_one_copy() {
        let a = family_name(b"intern-test-family");
        // The same name from another buffer.
        let other_buffer = String::from("intern-test-family");
        let b = family_name(other_buffer.as_bytes());
        assert_eq!(a, b);
        assert_eq!(a.as_ptr(), b.as_ptr());
    }

    #[test]
    fn a_full_table_hands_out_copies() {
        let mut t = Table::default();
        let first = t.intern(b"0123456789", 16);
        assert_eq!(t.intern(b"0123456789", 16).as_ptr(), first.as_ptr());
        // Ten bytes kept; seven more would pass the bound of sixteen.
        let over = t.intern(b"abcdefg", 16);
        assert_eq!(&over[..], b"abcdefg");
        assert_ne!(t.intern(b"abcdefg", 16).as_ptr(), over.as_ptr());
        assert_eq!(t.bytes, 10);
    }
}
