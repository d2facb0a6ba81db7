//! The properties (meta) block: what a file holds, summarised.
//!
//! Owns: [`SstMeta`], its accumulation while a file is written ([`MetaCollector`])
//! and its byte encoding.
//! Must not: read files or decide what callers do with the numbers.
//!
//! Meta block payload (see docs/format-sstable.md), all little-endian:
//!
//! ```text
//! format_version:u32 entry_count:u64 block_count:u64 delete_count:u64
//! min_seq:u64 max_seq:u64 min_ts:i64 max_ts:i64 raw_key_bytes:u64 raw_value_bytes:u64
//! smallest_key_len:u32 smallest_key  largest_key_len:u32 largest_key
//! ```

use super::coding::ByteReader;
use crate::key::{KeyKind, KeyTail};

/// The summary of one SSTable.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SstMeta {
    /// Format version the file was written with.
    pub format_version: u32,
    /// Number of entries (puts and delete markers).
    pub entry_count: u64,
    /// Number of data blocks.
    pub block_count: u64,
    /// Number of delete markers among the entries.
    pub delete_count: u64,
    /// Smallest and largest sequence numbers (0 and 0 when the file is empty).
    pub min_seq: u64,
    pub max_seq: u64,
    /// Smallest and largest cell timestamps (0 and 0 when the file is empty).
    pub min_timestamp: i64,
    pub max_timestamp: i64,
    /// Sum of key lengths and of value lengths, before prefix compression.
    pub raw_key_bytes: u64,
    pub raw_value_bytes: u64,
    /// First and last key (empty when the file is empty).
    pub smallest_key: Vec<u8>,
    pub largest_key: Vec<u8>,
    /// Length of the whole file. Not stored in the meta block: the writer knows it
    /// when it finishes, the reader takes it from the file.
    pub file_size: u64,
}

/// Why the meta block was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum MetaDefect {
    #[error("meta block is truncated")]
    Truncated,
    #[error("meta block has {0} trailing bytes")]
    TrailingBytes(usize),
    #[error("meta block is inconsistent: {0}")]
    Inconsistent(&'static str),
}

impl SstMeta {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(84 + self.smallest_key.len() + self.largest_key.len());
        out.extend_from_slice(&self.format_version.to_le_bytes());
        for v in [
            self.entry_count,
            self.block_count,
            self.delete_count,
            self.min_seq,
            self.max_seq,
        ] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.min_timestamp.to_le_bytes());
        out.extend_from_slice(&self.max_timestamp.to_le_bytes());
        out.extend_from_slice(&self.raw_key_bytes.to_le_bytes());
        out.extend_from_slice(&self.raw_value_bytes.to_le_bytes());
        for k in [&self.smallest_key, &self.largest_key] {
            out.extend_from_slice(&(k.len() as u32).to_le_bytes());
            out.extend_from_slice(k);
        }
        out
    }

    /// Decodes a meta block; `file_size` is filled in by the caller.
    pub(crate) fn decode(payload: &[u8]) -> Result<SstMeta, MetaDefect> {
        let mut r = ByteReader::new(payload);
        let t = MetaDefect::Truncated;
        let meta = SstMeta {
            format_version: r.u32_le().ok_or(t)?,
            entry_count: r.u64_le().ok_or(t)?,
            block_count: r.u64_le().ok_or(t)?,
            delete_count: r.u64_le().ok_or(t)?,
            min_seq: r.u64_le().ok_or(t)?,
            max_seq: r.u64_le().ok_or(t)?,
            min_timestamp: r.i64_le().ok_or(t)?,
            max_timestamp: r.i64_le().ok_or(t)?,
            raw_key_bytes: r.u64_le().ok_or(t)?,
            raw_value_bytes: r.u64_le().ok_or(t)?,
            smallest_key: r.length_prefixed().ok_or(t)?.to_vec(),
            largest_key: r.length_prefixed().ok_or(t)?.to_vec(),
            file_size: 0,
        };
        if r.remaining() != 0 {
            return Err(MetaDefect::TrailingBytes(r.remaining()));
        }
        if meta.delete_count > meta.entry_count {
            return Err(MetaDefect::Inconsistent("more delete markers than entries"));
        }
        if (meta.entry_count == 0) != (meta.block_count == 0) {
            return Err(MetaDefect::Inconsistent(
                "entries without blocks or blocks without entries",
            ));
        }
        if meta.block_count > meta.entry_count {
            return Err(MetaDefect::Inconsistent("more blocks than entries"));
        }
        if meta.min_seq > meta.max_seq || meta.min_timestamp > meta.max_timestamp {
            return Err(MetaDefect::Inconsistent("minimum above maximum"));
        }
        if meta.smallest_key > meta.largest_key {
            return Err(MetaDefect::Inconsistent("smallest key above largest key"));
        }
        Ok(meta)
    }
}

/// Accumulates an [`SstMeta`] entry by entry.
#[derive(Debug, Default)]
pub(crate) struct MetaCollector {
    meta: SstMeta,
}

impl MetaCollector {
    /// Records an entry; keys arrive in ascending order.
    pub(crate) fn add(&mut self, key: &[u8], value_len: usize, tail: KeyTail) {
        let m = &mut self.meta;
        if m.entry_count == 0 {
            m.smallest_key = key.to_vec();
            m.min_seq = tail.seq;
            m.max_seq = tail.seq;
            m.min_timestamp = tail.timestamp;
            m.max_timestamp = tail.timestamp;
        } else {
            m.min_seq = m.min_seq.min(tail.seq);
            m.max_seq = m.max_seq.max(tail.seq);
            m.min_timestamp = m.min_timestamp.min(tail.timestamp);
            m.max_timestamp = m.max_timestamp.max(tail.timestamp);
        }
        m.entry_count += 1;
        if tail.kind != KeyKind::Put {
            m.delete_count += 1;
        }
        m.raw_key_bytes += key.len() as u64;
        m.raw_value_bytes += value_len as u64;
    }

    pub(crate) fn entry_count(&self) -> u64 {
        self.meta.entry_count
    }

    pub(crate) fn raw_bytes(&self) -> u64 {
        self.meta.raw_key_bytes + self.meta.raw_value_bytes
    }

    /// The finished summary.
    pub(crate) fn finish(
        mut self,
        format_version: u32,
        block_count: u64,
        largest_key: &[u8],
    ) -> SstMeta {
        self.meta.format_version = format_version;
        self.meta.block_count = block_count;
        self.meta.largest_key = largest_key.to_vec();
        self.meta
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{encode, tail};

    fn sample() -> SstMeta {
        let mut c = MetaCollector::default();
        let keys = [
            encode(b"a", b"f", b"q", KeyKind::Put, 50, 7),
            encode(b"b", b"f", b"", KeyKind::DeleteFamily, -3, 2),
            encode(b"c", b"f", b"q", KeyKind::Put, 900, 11),
        ];
        for k in &keys {
            c.add(k, 4, tail(k).unwrap());
        }
        c.finish(1, 2, &keys[2])
    }

    #[test]
    fn collects_bounds_and_counts() {
        let m = sample();
        assert_eq!(m.entry_count, 3);
        assert_eq!(m.delete_count, 1);
        assert_eq!((m.min_seq, m.max_seq), (2, 11));
        assert_eq!((m.min_timestamp, m.max_timestamp), (-3, 900));
        assert_eq!(m.raw_value_bytes, 12);
        assert!(m.smallest_key < m.largest_key);
    }

    #[test]
    fn roundtrips_and_rejects_damage() {
        let m = sample();
        let bytes = m.encode();
        assert_eq!(SstMeta::decode(&bytes), Ok(m.clone()));
        assert_eq!(
            SstMeta::decode(&bytes[..bytes.len() - 1]),
            Err(MetaDefect::Truncated)
        );
        let mut longer = bytes.clone();
        longer.push(9);
        assert_eq!(SstMeta::decode(&longer), Err(MetaDefect::TrailingBytes(1)));
        let mut inconsistent = m;
        inconsistent.delete_count = 10;
        assert!(matches!(
            SstMeta::decode(&inconsistent.encode()),
            Err(MetaDefect::Inconsistent(_))
        ));
    }
}
