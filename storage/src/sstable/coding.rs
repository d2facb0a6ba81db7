//! Little-endian integers and varints, as the SSTable format spells them.
//!
//! Owns: the primitive encodings shared by blocks, index entries, the bloom block,
//! the meta block and the footer, plus a bounds-checked reading cursor.
//! Must not: know what the encoded fields mean.

/// Longest varint encoding of a `u64`.
const MAX_VARINT_LEN: usize = 10;

/// Appends `v` as a LEB128 varint (7 bits per byte, low bits first).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint at `*pos`, advancing it; `None` when truncated or overlong.
#[inline]
pub(crate) fn get_varint(buf: &[u8], pos: &mut usize) -> Option<u64> {
    // Lengths in blocks are nearly always below 128: one byte.
    let first = *buf.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    get_varint_slow(buf, pos)
}

fn get_varint_slow(buf: &[u8], pos: &mut usize) -> Option<u64> {
    let mut result: u64 = 0;
    for i in 0..MAX_VARINT_LEN {
        let byte = *buf.get(pos.checked_add(i)?)?;
        let bits = u64::from(byte & 0x7F);
        let shift = 7 * i as u32;
        // The tenth byte may only carry the single top bit of a u64.
        if i == MAX_VARINT_LEN - 1 && bits > 1 {
            return None;
        }
        result |= bits << shift;
        if byte & 0x80 == 0 {
            *pos += i + 1;
            return Some(result);
        }
    }
    None
}

/// A cursor that reads fixed-width and varint fields without ever panicking.
pub(crate) struct ByteReader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> ByteReader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        ByteReader { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let out = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(out)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.bytes(N)?.try_into().ok()
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    pub(crate) fn u32_le(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    pub(crate) fn u64_le(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }

    pub(crate) fn i64_le(&mut self) -> Option<i64> {
        self.array().map(i64::from_le_bytes)
    }

    /// A `u32 LE` length followed by that many bytes.
    pub(crate) fn length_prefixed(&mut self) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32_le()?).ok()?;
        self.bytes(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn varint_roundtrips(v in any::<u64>()) {
            let mut buf = vec![0xAB];
            put_varint(&mut buf, v);
            let mut pos = 1;
            prop_assert_eq!(get_varint(&buf, &mut pos), Some(v));
            prop_assert_eq!(pos, buf.len());
        }

        #[test]
        fn truncated_varint_is_rejected(v in 128u64..) {
            let mut buf = Vec::new();
            put_varint(&mut buf, v);
            buf.pop();
            let mut pos = 0;
            prop_assert_eq!(get_varint(&buf, &mut pos), None);
            prop_assert_eq!(pos, 0);
        }
    }

    #[test]
    fn overlong_varint_is_rejected() {
        let mut pos = 0;
        assert_eq!(get_varint(&[0xFF; 11], &mut pos), None);
        // Ten bytes whose last carries more than the top bit of a u64.
        let mut buf = vec![0xFF; 9];
        buf.push(0x02);
        assert_eq!(get_varint(&buf, &mut pos), None);
        let mut max = Vec::new();
        put_varint(&mut max, u64::MAX);
        assert_eq!(max.len(), 10);
        assert_eq!(get_varint(&max, &mut pos), Some(u64::MAX));
    }

    #[test]
    fn reader_stops_at_the_end() {
        let mut r = ByteReader::new(&[1, 0, 0, 0, 7]);
        assert_eq!(r.u32_le(), Some(1));
        assert_eq!(r.remaining(), 1);
        assert_eq!(r.u32_le(), None);
        assert_eq!(r.u8(), Some(7));
        assert_eq!(r.u8(), None);
        let mut r = ByteReader::new(&[5, 0, 0, 0, 1, 2]);
        assert_eq!(r.length_prefixed(), None);
    }
}
