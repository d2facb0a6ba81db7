//! The fixed-size footer that ends every SSTable, and the block handles it holds.
//!
//! Owns: [`BlockHandle`] (where a block is stored) and the 64-byte footer encoding:
//! handles of the index, bloom and meta blocks, format version, magic, CRC32C.
//! Must not: read files or interpret the blocks it points to.

use super::coding::{get_varint, put_varint, ByteReader};
use super::envelope::BLOCK_TRAILER_LEN;

/// Length of the footer in bytes.
pub const FOOTER_LEN: usize = 64;

/// The magic number: the bytes `TABULASS` (stored little-endian, so they read as
/// that text in a hex dump).
pub const MAGIC: u64 = u64::from_le_bytes(*b"TABULASS");

/// The only format version this code reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Where a block is stored: `size` counts the payload only; the stored block
/// occupies `size + 5` bytes (payload, compression type, CRC32C).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct BlockHandle {
    pub offset: u64,
    pub size: u64,
}

impl BlockHandle {
    /// Bytes the stored block occupies, trailer included.
    pub fn stored_len(&self) -> Option<u64> {
        self.size.checked_add(BLOCK_TRAILER_LEN as u64)
    }

    /// Offset just past the stored block.
    pub fn end(&self) -> Option<u64> {
        self.offset.checked_add(self.stored_len()?)
    }

    /// Appends the handle as two varints (used in index entries).
    pub(crate) fn encode_varint(&self, out: &mut Vec<u8>) {
        put_varint(out, self.offset);
        put_varint(out, self.size);
    }

    /// Decodes a handle written by [`encode_varint`]; the bytes must be consumed exactly.
    ///
    /// [`encode_varint`]: BlockHandle::encode_varint
    pub(crate) fn decode_varint(bytes: &[u8]) -> Option<BlockHandle> {
        let mut pos = 0;
        let offset = get_varint(bytes, &mut pos)?;
        let size = get_varint(bytes, &mut pos)?;
        (pos == bytes.len()).then_some(BlockHandle { offset, size })
    }
}

/// Why the footer was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FooterDefect {
    #[error("footer has {0} bytes, expected 64")]
    WrongLength(usize),
    #[error("bad magic number {0:#018x} (not an SSTable, or truncated)")]
    BadMagic(u64),
    #[error("footer checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch { stored: u32, computed: u32 },
    #[error("unsupported format version {0}")]
    UnsupportedVersion(u32),
}

/// The decoded footer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Footer {
    pub(crate) index: BlockHandle,
    pub(crate) bloom: BlockHandle,
    pub(crate) meta: BlockHandle,
    pub(crate) format_version: u32,
}

impl Footer {
    pub(crate) fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut out = Vec::with_capacity(FOOTER_LEN);
        for h in [self.index, self.bloom, self.meta] {
            out.extend_from_slice(&h.offset.to_le_bytes());
            out.extend_from_slice(&h.size.to_le_bytes());
        }
        out.extend_from_slice(&self.format_version.to_le_bytes());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        let mut fixed = [0u8; FOOTER_LEN];
        fixed.copy_from_slice(&out);
        fixed
    }

    pub(crate) fn decode(bytes: &[u8]) -> Result<Footer, FooterDefect> {
        if bytes.len() != FOOTER_LEN {
            return Err(FooterDefect::WrongLength(bytes.len()));
        }
        let mut r = ByteReader::new(bytes);
        let mut handle = || -> Option<BlockHandle> {
            Some(BlockHandle {
                offset: r.u64_le()?,
                size: r.u64_le()?,
            })
        };
        let wrong = FooterDefect::WrongLength(bytes.len());
        let index = handle().ok_or(wrong.clone())?;
        let bloom = handle().ok_or(wrong.clone())?;
        let meta = handle().ok_or(wrong.clone())?;
        let format_version = r.u32_le().ok_or(wrong.clone())?;
        let magic = r.u64_le().ok_or(wrong.clone())?;
        let stored = r.u32_le().ok_or(wrong)?;
        if magic != MAGIC {
            return Err(FooterDefect::BadMagic(magic));
        }
        let computed = crc32c::crc32c(bytes.get(..FOOTER_LEN - 4).unwrap_or_default());
        if computed != stored {
            return Err(FooterDefect::ChecksumMismatch { stored, computed });
        }
        if format_version != FORMAT_VERSION {
            return Err(FooterDefect::UnsupportedVersion(format_version));
        }
        Ok(Footer {
            index,
            bloom,
            meta,
            format_version,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Footer {
        Footer {
            index: BlockHandle {
                offset: 1000,
                size: 77,
            },
            bloom: BlockHandle {
                offset: 900,
                size: 90,
            },
            meta: BlockHandle {
                offset: 995,
                size: 0,
            },
            format_version: FORMAT_VERSION,
        }
    }

    #[test]
    fn roundtrips_and_ends_with_magic_then_crc() {
        let bytes = sample().encode();
        assert_eq!(&bytes[52..60], b"TABULASS");
        assert_eq!(Footer::decode(&bytes), Ok(sample()));
    }

    #[test]
    fn every_flip_is_rejected() {
        let bytes = sample().encode();
        for i in 0..FOOTER_LEN {
            let mut bad = bytes;
            bad[i] ^= 0x01;
            assert!(Footer::decode(&bad).is_err(), "flip at {i} accepted");
        }
        assert_eq!(
            Footer::decode(&bytes[1..]),
            Err(FooterDefect::WrongLength(63))
        );
    }

    #[test]
    fn other_versions_are_refused() {
        let mut f = sample();
        f.format_version = 2;
        assert_eq!(
            Footer::decode(&f.encode()),
            Err(FooterDefect::UnsupportedVersion(2))
        );
    }

    #[test]
    fn varint_handles_roundtrip_exactly() {
        let h = BlockHandle {
            offset: 1 << 40,
            size: 65_541,
        };
        let mut buf = Vec::new();
        h.encode_varint(&mut buf);
        assert_eq!(BlockHandle::decode_varint(&buf), Some(h));
        buf.push(0);
        assert_eq!(BlockHandle::decode_varint(&buf), None);
        assert_eq!(h.end(), Some((1 << 40) + 65_546));
    }
}
