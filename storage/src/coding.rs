//! Little byte-coding helpers shared by the engine's metadata formats.
//!
//! Owns: varints and length-prefixed byte strings over a `Vec<u8>` writer and a
//! bounds-checked reader that reports truncation instead of panicking.
//! Must not: know any particular format.

/// Appends `v` as a LEB128 varint.
pub fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Appends a varint length followed by the bytes.
pub fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_varint(out, b.len() as u64);
    out.extend_from_slice(b);
}

/// A cursor over encoded bytes; every read fails cleanly at the end of input.
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads from `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }

    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }

    /// Reads a varint.
    pub fn varint(&mut self) -> Option<u64> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let (&b, rest) = self.buf.split_first()?;
            self.buf = rest;
            v |= u64::from(b & 0x7F).checked_shl(7 * i)?;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// Reads `n` raw bytes.
    pub fn raw(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.buf.len() {
            return None;
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Some(head)
    }

    /// Reads a length-prefixed byte string.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        self.raw(n)
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        self.raw(1).and_then(|b| b.first().copied())
    }

    /// Reads a big-endian u32.
    pub fn u32_be(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.raw(4)?.try_into().ok()?))
    }

    /// Reads a big-endian i64.
    pub fn i64_be(&mut self) -> Option<i64> {
        Some(i64::from_be_bytes(self.raw(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn roundtrip(vals in proptest::collection::vec(any::<u64>(), 0..20), blobs in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..20), 0..5)) {
            let mut out = Vec::new();
            for v in &vals { put_varint(&mut out, *v); }
            for b in &blobs { put_bytes(&mut out, b); }
            let mut r = Reader::new(&out);
            for v in &vals { prop_assert_eq!(r.varint(), Some(*v)); }
            for b in &blobs { prop_assert_eq!(r.bytes(), Some(b.as_slice())); }
            prop_assert_eq!(r.remaining(), 0);
            prop_assert_eq!(r.varint(), None);
        }

        #[test]
        fn truncation_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut r = Reader::new(&bytes);
            while r.bytes().is_some() {}
        }
    }
}
