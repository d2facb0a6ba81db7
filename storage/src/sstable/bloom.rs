//! Bloom filters over rows and row+qualifier pairs.
//!
//! Owns: the filter itself (a bit array probed by double hashing of a 64-bit hash),
//! [`BloomCollector`] (gathers the distinct hashes while a file is written) and the
//! encoding of the bloom block. Hashes come from `crate::key`, so writer and reader
//! agree on them.
//! Must not: hash keys itself or decide which lookups consult the filter.
//!
//! Bloom block payload (see docs/format-sstable.md):
//!
//! ```text
//! flags:u8 (bit 0 = row filter present, bit 1 = column filter present)
//! then for each present filter, row first: probes:u8, byte_len:u32le, bits[byte_len]
//! ```

use super::coding::ByteReader;
use crate::schema::BloomType;

/// Flag bit: a row filter follows.
const FLAG_ROW: u8 = 0b01;
/// Flag bit: a row+qualifier filter follows.
const FLAG_COLUMN: u8 = 0b10;
/// Smallest filter, so tiny files still get a useful false-positive rate.
const MIN_BITS: u64 = 64;
/// Most probes a filter may declare.
const MAX_PROBES: u8 = 30;

/// A bloom filter: `probes` bit positions per hash in a `bits.len() * 8`-bit array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BloomFilter {
    bits: Vec<u8>,
    probes: u8,
}

/// Number of probes minimising the false-positive rate: `bits_per_key * ln 2`.
fn probes_for(bits_per_key: u32) -> u8 {
    let k = (f64::from(bits_per_key) * std::f64::consts::LN_2).round();
    (k as u8).clamp(1, MAX_PROBES)
}

/// The bit positions of `hash` in an `m`-bit filter: `h1 + i * h2 (mod m)`, where
/// h1 is the hash and h2 the hash with its halves swapped, forced odd.
fn probe_positions(hash: u64, probes: u8, m: u64) -> impl Iterator<Item = u64> {
    let delta = hash.rotate_left(32) | 1;
    (0..u64::from(probes)).map(move |i| hash.wrapping_add(i.wrapping_mul(delta)) % m)
}

impl BloomFilter {
    /// A filter holding every hash in `hashes` (duplicates are removed first).
    pub(crate) fn build(hashes: &mut Vec<u64>, bits_per_key: u32) -> BloomFilter {
        hashes.sort_unstable();
        hashes.dedup();
        let bits_per_key = bits_per_key.max(1);
        let wanted = (hashes.len() as u64)
            .saturating_mul(u64::from(bits_per_key))
            .clamp(MIN_BITS, u64::from(u32::MAX) * 8);
        // The byte length is stored as a u32, hence the upper clamp.
        let bytes = usize::try_from(wanted.div_ceil(8)).unwrap_or(u32::MAX as usize);
        let mut filter = BloomFilter {
            bits: vec![0; bytes],
            probes: probes_for(bits_per_key),
        };
        let m = filter.num_bits();
        for &h in hashes.iter() {
            for bit in probe_positions(h, filter.probes, m) {
                if let Some(byte) = filter.bits.get_mut((bit / 8) as usize) {
                    *byte |= 1 << (bit % 8);
                }
            }
        }
        filter
    }

    fn num_bits(&self) -> u64 {
        (self.bits.len() as u64) * 8
    }

    /// False only when `hash` was certainly not added.
    pub(crate) fn may_contain(&self, hash: u64) -> bool {
        let m = self.num_bits();
        if m == 0 {
            return false;
        }
        probe_positions(hash, self.probes, m).all(|bit| {
            self.bits
                .get((bit / 8) as usize)
                .is_some_and(|byte| byte & (1 << (bit % 8)) != 0)
        })
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(self.probes);
        out.extend_from_slice(&(self.bits.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.bits);
    }

    fn decode(r: &mut ByteReader<'_>) -> Option<BloomFilter> {
        let probes = r.u8()?;
        if probes == 0 || probes > MAX_PROBES {
            return None;
        }
        let bits = r.length_prefixed()?;
        if bits.is_empty() {
            return None;
        }
        Some(BloomFilter {
            bits: bits.to_vec(),
            probes,
        })
    }
}

/// The filters of one file, as stored in its bloom block.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct FileBlooms {
    pub(crate) row: Option<BloomFilter>,
    pub(crate) column: Option<BloomFilter>,
}

/// Why the bloom block was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BloomDefect {
    #[error("bloom block is empty")]
    Empty,
    #[error("unknown bloom flags {0:#04x}")]
    UnknownFlags(u8),
    #[error("bloom filter is truncated or malformed")]
    BadFilter,
    #[error("bloom block has {0} trailing bytes")]
    TrailingBytes(usize),
}

impl FileBlooms {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut flags = 0;
        if self.row.is_some() {
            flags |= FLAG_ROW;
        }
        if self.column.is_some() {
            flags |= FLAG_COLUMN;
        }
        let mut out = vec![flags];
        for f in [&self.row, &self.column].into_iter().flatten() {
            f.encode_into(&mut out);
        }
        out
    }

    pub(crate) fn decode(payload: &[u8]) -> Result<FileBlooms, BloomDefect> {
        let mut r = ByteReader::new(payload);
        let flags = r.u8().ok_or(BloomDefect::Empty)?;
        if flags & !(FLAG_ROW | FLAG_COLUMN) != 0 {
            return Err(BloomDefect::UnknownFlags(flags));
        }
        let mut read = |bit: u8| -> Result<Option<BloomFilter>, BloomDefect> {
            if flags & bit == 0 {
                return Ok(None);
            }
            BloomFilter::decode(&mut r)
                .map(Some)
                .ok_or(BloomDefect::BadFilter)
        };
        let row = read(FLAG_ROW)?;
        let column = read(FLAG_COLUMN)?;
        if r.remaining() != 0 {
            return Err(BloomDefect::TrailingBytes(r.remaining()));
        }
        Ok(FileBlooms { row, column })
    }

    /// Bytes held in memory.
    pub(crate) fn memory(&self) -> usize {
        [&self.row, &self.column]
            .into_iter()
            .flatten()
            .map(|f| f.bits.capacity())
            .sum()
    }
}

/// Gathers the hashes of a file being written.
#[derive(Debug)]
pub(crate) struct BloomCollector {
    kind: BloomType,
    bits_per_key: u32,
    rows: Vec<u64>,
    columns: Vec<u64>,
}

impl BloomCollector {
    pub(crate) fn new(kind: BloomType, bits_per_key: u32) -> Self {
        BloomCollector {
            kind,
            bits_per_key,
            rows: Vec::new(),
            columns: Vec::new(),
        }
    }

    /// Records an entry's hashes. Entries of one row (and versions of one column)
    /// arrive together, so repeats of the previous hash are skipped here and the
    /// rest are removed when the filter is built.
    pub(crate) fn add(&mut self, row_hash: u64, column_hash: Option<u64>) {
        if self.kind == BloomType::None {
            return;
        }
        if self.rows.last() != Some(&row_hash) {
            self.rows.push(row_hash);
        }
        if self.kind == BloomType::RowCol {
            if let Some(c) = column_hash {
                if self.columns.last() != Some(&c) {
                    self.columns.push(c);
                }
            }
        }
    }

    /// The filters to store.
    pub(crate) fn finish(mut self) -> FileBlooms {
        let row = (self.kind != BloomType::None)
            .then(|| BloomFilter::build(&mut self.rows, self.bits_per_key));
        let column = (self.kind == BloomType::RowCol)
            .then(|| BloomFilter::build(&mut self.columns, self.bits_per_key));
        FileBlooms { row, column }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::bloom_row_hash;

    #[test]
    fn no_false_negatives_and_low_false_positive_rate() {
        let n = 50_000u32;
        let mut hashes: Vec<u64> = (0..n)
            .map(|i| bloom_row_hash(format!("row-{i}").as_bytes()))
            .collect();
        let filter = BloomFilter::build(&mut hashes, 10);
        assert_eq!(filter.probes, 7);
        for i in 0..n {
            assert!(filter.may_contain(bloom_row_hash(format!("row-{i}").as_bytes())));
        }
        let trials = 100_000u32;
        let false_positives = (0..trials)
            .filter(|i| filter.may_contain(bloom_row_hash(format!("absent-{i}").as_bytes())))
            .count();
        let rate = false_positives as f64 / f64::from(trials);
        assert!(rate < 0.02, "false-positive rate {rate}");
    }

    #[test]
    fn duplicates_do_not_inflate_the_filter() {
        let mut once = vec![1u64, 2, 3];
        let mut repeated = vec![3u64, 1, 2, 3, 3, 1];
        assert_eq!(
            BloomFilter::build(&mut once, 10),
            BloomFilter::build(&mut repeated, 10)
        );
    }

    #[test]
    fn block_roundtrips_and_rejects_garbage() {
        let mut c = BloomCollector::new(BloomType::RowCol, 10);
        c.add(1, Some(10));
        c.add(1, Some(11));
        c.add(2, None);
        let blooms = c.finish();
        assert!(blooms.row.as_ref().is_some_and(|f| f.may_contain(2)));
        assert!(blooms.column.as_ref().is_some_and(|f| f.may_contain(11)));
        let bytes = blooms.encode();
        assert_eq!(FileBlooms::decode(&bytes), Ok(blooms.clone()));
        assert!(blooms.memory() >= 16);

        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(
            FileBlooms::decode(&trailing),
            Err(BloomDefect::TrailingBytes(1))
        );
        assert_eq!(
            FileBlooms::decode(&bytes[..bytes.len() - 1]),
            Err(BloomDefect::BadFilter)
        );
        assert_eq!(
            FileBlooms::decode(&[0x04]),
            Err(BloomDefect::UnknownFlags(4))
        );
        assert_eq!(FileBlooms::decode(&[]), Err(BloomDefect::Empty));
        assert_eq!(
            FileBlooms::decode(&[FLAG_ROW, 0, 1, 0, 0, 0, 0xFF]),
            Err(BloomDefect::BadFilter)
        );

        let none = BloomCollector::new(BloomType::None, 10).finish();
        assert_eq!(none, FileBlooms::default());
        assert_eq!(FileBlooms::decode(&none.encode()), Ok(none));
    }

    #[test]
    fn empty_filter_contains_nothing() {
        let filter = BloomFilter::build(&mut Vec::new(), 10);
        assert!((0..1000u64).all(|h| !filter.may_contain(h.wrapping_mul(0x9E37_79B9_7F4A_7C15))));
    }
}
