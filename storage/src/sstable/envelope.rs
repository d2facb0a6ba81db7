//! The physical framing of every block in an SSTable.
//!
//! Owns: turning an uncompressed block into its stored form
//! (`payload, compression_type:u8, crc32c:u32le`) and back, including the zstd
//! round trip and the guard on the decompressed length.
//! Must not: look inside the block, or know where it lives in the file.

use std::cell::RefCell;

use crate::error::{Error, Result};
use crate::schema::Compression;

/// Bytes after each block's payload: compression type (1) + CRC32C (4).
pub(crate) const BLOCK_TRAILER_LEN: usize = 5;

/// Compression type byte: the payload is the block itself.
pub(crate) const COMPRESSION_NONE: u8 = 0;
/// Compression type byte: the payload is `uncompressed_len:u32le` + one zstd frame.
pub(crate) const COMPRESSION_ZSTD: u8 = 1;

/// Largest uncompressed block accepted on read (and the writer's hard limit).
pub(crate) const MAX_BLOCK_LEN: usize = 1 << 30;

/// Why a stored block could not be turned back into its bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EnvelopeDefect {
    #[error("stored block is shorter than its trailer")]
    TooShort,
    #[error("checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    ChecksumMismatch { stored: u32, computed: u32 },
    #[error("unknown compression type {0}")]
    UnknownCompression(u8),
    #[error("compressed payload lacks its length header")]
    MissingLength,
    #[error("declared uncompressed length {0} exceeds the limit")]
    LengthTooLarge(u64),
    #[error("zstd decompression failed: {0}")]
    Decompress(String),
    #[error("decompressed {actual} bytes, the header declared {declared}")]
    LengthMismatch { declared: usize, actual: usize },
}

/// Compresses and frames blocks for writing, reusing its buffers.
pub(crate) struct BlockSealer {
    compressor: Option<zstd::bulk::Compressor<'static>>,
    compressed: Vec<u8>,
    stored: Vec<u8>,
}

impl BlockSealer {
    /// A sealer applying `compression` to every block it seals.
    pub(crate) fn new(compression: Compression) -> Result<Self> {
        let compressor = match compression {
            Compression::None => None,
            Compression::Zstd(level) => Some(
                zstd::bulk::Compressor::new(level)
                    .map_err(|e| Error::io("creating the zstd compressor", e))?,
            ),
        };
        Ok(BlockSealer {
            compressor,
            compressed: Vec::new(),
            stored: Vec::new(),
        })
    }

    /// Frames `raw` (compressing it when that saves at least an eighth) and
    /// returns the stored bytes: payload + trailer.
    pub(crate) fn seal(&mut self, raw: &[u8]) -> Result<&[u8]> {
        self.stored.clear();
        let mut kind = COMPRESSION_NONE;
        if let Some(c) = self.compressor.as_mut() {
            let bound = zstd::zstd_safe::compress_bound(raw.len());
            self.compressed.clear();
            self.compressed.reserve(bound);
            let n = c
                .compress_to_buffer(raw, &mut self.compressed)
                .map_err(|e| Error::io("compressing a block with zstd", e))?;
            let worthwhile = n + 4 <= raw.len() - raw.len() / 8;
            if worthwhile {
                let len = u32::try_from(raw.len()).map_err(|_| {
                    Error::InvalidArgument(format!("block of {} bytes is too large", raw.len()))
                })?;
                self.stored.extend_from_slice(&len.to_le_bytes());
                self.stored
                    .extend_from_slice(self.compressed.get(..n).unwrap_or_default());
                kind = COMPRESSION_ZSTD;
            }
        }
        if kind == COMPRESSION_NONE {
            self.stored.extend_from_slice(raw);
        }
        self.stored.push(kind);
        let crc = crc32c::crc32c(&self.stored);
        self.stored.extend_from_slice(&crc.to_le_bytes());
        Ok(&self.stored)
    }
}

/// Frames `raw` without compression (for the index, bloom and meta blocks).
pub(crate) fn seal_uncompressed(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() + BLOCK_TRAILER_LEN);
    out.extend_from_slice(raw);
    out.push(COMPRESSION_NONE);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

thread_local! {
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { RefCell::new(None) };
}

/// Verifies the trailer of a stored block and returns its uncompressed bytes.
pub(crate) fn unseal(mut stored: Vec<u8>) -> Result<Vec<u8>, EnvelopeDefect> {
    let crc_at = stored
        .len()
        .checked_sub(4)
        .filter(|&n| n >= 1)
        .ok_or(EnvelopeDefect::TooShort)?;
    let crc_bytes: [u8; 4] = stored
        .get(crc_at..)
        .and_then(|b| b.try_into().ok())
        .ok_or(EnvelopeDefect::TooShort)?;
    let stored_crc = u32::from_le_bytes(crc_bytes);
    let covered = stored.get(..crc_at).unwrap_or_default();
    let computed = crc32c::crc32c(covered);
    if computed != stored_crc {
        return Err(EnvelopeDefect::ChecksumMismatch {
            stored: stored_crc,
            computed,
        });
    }
    let kind_at = crc_at - 1;
    let kind = stored
        .get(kind_at)
        .copied()
        .ok_or(EnvelopeDefect::TooShort)?;
    match kind {
        COMPRESSION_NONE => {
            stored.truncate(kind_at);
            Ok(stored)
        }
        COMPRESSION_ZSTD => {
            let payload = stored.get(..kind_at).unwrap_or_default();
            decompress(payload)
        }
        other => Err(EnvelopeDefect::UnknownCompression(other)),
    }
}

fn decompress(payload: &[u8]) -> Result<Vec<u8>, EnvelopeDefect> {
    let len_bytes: [u8; 4] = payload
        .get(..4)
        .and_then(|b| b.try_into().ok())
        .ok_or(EnvelopeDefect::MissingLength)?;
    let declared = u32::from_le_bytes(len_bytes);
    let declared_len = usize::try_from(declared)
        .ok()
        .filter(|&n| n <= MAX_BLOCK_LEN)
        .ok_or(EnvelopeDefect::LengthTooLarge(u64::from(declared)))?;
    let frame = payload.get(4..).unwrap_or_default();
    let mut out = Vec::with_capacity(declared_len);
    let result = DECOMPRESSOR.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = Some(zstd::bulk::Decompressor::new()?);
            }
            match slot.as_mut() {
                Some(d) => d.decompress_to_buffer(frame, &mut out),
                None => zstd::bulk::decompress_to_buffer(frame, &mut out),
            }
        }
        Err(_) => zstd::bulk::decompress_to_buffer(frame, &mut out),
    });
    let actual = result.map_err(|e| EnvelopeDefect::Decompress(e.to_string()))?;
    if actual != declared_len || out.len() != declared_len {
        return Err(EnvelopeDefect::LengthMismatch {
            declared: declared_len,
            actual,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressible() -> Vec<u8> {
        (0..4096u32).flat_map(|i| (i % 17).to_le_bytes()).collect()
    }

    #[test]
    fn roundtrips_with_and_without_compression() {
        let raw = compressible();
        for c in [
            Compression::None,
            Compression::Zstd(1),
            Compression::Zstd(19),
        ] {
            let mut sealer = BlockSealer::new(c).unwrap();
            let stored = sealer.seal(&raw).unwrap().to_vec();
            if c != Compression::None {
                assert!(stored.len() < raw.len() / 2, "zstd should shrink the block");
                assert_eq!(stored[stored.len() - 5], COMPRESSION_ZSTD);
            } else {
                assert_eq!(stored.len(), raw.len() + BLOCK_TRAILER_LEN);
            }
            assert_eq!(unseal(stored).unwrap(), raw);
        }
    }

    #[test]
    fn incompressible_blocks_are_stored_raw() {
        let raw: Vec<u8> = (0..512u32)
            .map(|i| xxhash_rust::xxh3::xxh3_64(&i.to_le_bytes()) as u8)
            .collect();
        let mut sealer = BlockSealer::new(Compression::Zstd(3)).unwrap();
        let stored = sealer.seal(&raw).unwrap().to_vec();
        assert_eq!(stored[stored.len() - 5], COMPRESSION_NONE);
        assert_eq!(unseal(stored).unwrap(), raw);
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let mut sealer = BlockSealer::new(Compression::Zstd(3)).unwrap();
        let stored = sealer.seal(&compressible()).unwrap().to_vec();
        for i in 0..stored.len() {
            let mut bad = stored.clone();
            bad[i] ^= 0x20;
            assert!(unseal(bad).is_err(), "flip at {i} went unnoticed");
        }
    }

    /// Re-frames a payload with a valid checksum, as a buggy or hostile writer might.
    fn frame(payload: &[u8], kind: u8) -> Vec<u8> {
        let mut out = payload.to_vec();
        out.push(kind);
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    #[test]
    fn decompressed_length_is_guarded() {
        let raw = compressible();
        let zst = zstd::bulk::compress(&raw, 3).unwrap();
        let mut lying_short = (raw.len() as u32 - 1).to_le_bytes().to_vec();
        lying_short.extend_from_slice(&zst);
        assert!(matches!(
            unseal(frame(&lying_short, COMPRESSION_ZSTD)),
            Err(EnvelopeDefect::Decompress(_) | EnvelopeDefect::LengthMismatch { .. })
        ));
        let mut lying_long = (raw.len() as u32 + 1).to_le_bytes().to_vec();
        lying_long.extend_from_slice(&zst);
        assert!(matches!(
            unseal(frame(&lying_long, COMPRESSION_ZSTD)),
            Err(EnvelopeDefect::LengthMismatch { .. })
        ));
        let mut huge = u32::MAX.to_le_bytes().to_vec();
        huge.extend_from_slice(&zst);
        assert!(matches!(
            unseal(frame(&huge, COMPRESSION_ZSTD)),
            Err(EnvelopeDefect::LengthTooLarge(_))
        ));
        assert!(matches!(
            unseal(frame(&[1, 2], COMPRESSION_ZSTD)),
            Err(EnvelopeDefect::MissingLength)
        ));
        assert!(matches!(
            unseal(frame(b"not zstd at all", COMPRESSION_ZSTD)),
            Err(EnvelopeDefect::Decompress(_))
        ));
        assert_eq!(
            unseal(frame(b"x", 7)),
            Err(EnvelopeDefect::UnknownCompression(7))
        );
        assert_eq!(unseal(vec![0, 0, 0]), Err(EnvelopeDefect::TooShort));
    }
}
