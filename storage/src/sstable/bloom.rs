//! Bloom filters over rows and row+qualifier pairs.
//!
//! Owns: the filter itself (a bit array probed by a 64-bit hash, in one of two
//! layouts), [`BloomCollector`] (gathers the distinct hashes while a file is
//! written) and the encoding of the bloom block. Hashes come from `crate::key`, so
//! writer and reader agree on them.
//! Must not: hash keys itself or decide which lookups consult the filter.
//!
//! Layouts: files written now use the cache-local layout, where all of a hash's
//! probes fall in one 64-byte line of the filter, so a lookup of a present row
//! waits for one memory line instead of one per probe (seven at ten bits per
//! key, each a likely cache miss in a filter of megabytes). Files from before it
//! carry the classic layout (probes spread over the whole array), which is still
//! read.
//!
//! Bloom block payload (see docs/format-sstable.md):
//!
//! ```text
//! flags:u8 (bit 0 = row filter present, bit 1 = column filter present,
//!           bit 2 = the filters use the cache-local layout)
//! then for each present filter, row first: probes:u8, byte_len:u32le, bits[byte_len]
//! ```

use super::coding::ByteReader;
use crate::schema::BloomType;

/// Flag bit: a row filter follows.
const FLAG_ROW: u8 = 0b001;
/// Flag bit: a row+qualifier filter follows.
const FLAG_COLUMN: u8 = 0b010;
/// Flag bit: the filters use the cache-local layout.
const FLAG_LOCAL: u8 = 0b100;
/// Smallest filter, so tiny files still get a useful false-positive rate.
const MIN_BITS: u64 = 64;
/// Most probes a filter may declare.
const MAX_PROBES: u8 = 30;
/// Bytes of one line of the cache-local layout (a CPU cache line).
const LINE_BYTES: usize = 64;
/// Bits of one line.
const LINE_BITS: u64 = (LINE_BYTES * 8) as u64;

/// One line of a cache-local filter, aligned so that it is one CPU cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(align(64))]
struct Line([u8; LINE_BYTES]);

/// A filter's bits in one of the two layouts.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Bits {
    /// Probes anywhere in the array (files written before the cache-local layout).
    Classic(Vec<u8>),
    /// All probes of a hash in one line.
    Local(Vec<Line>),
}

/// A bloom filter: `probes` bit positions per hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BloomFilter {
    bits: Bits,
    probes: u8,
}

/// Number of probes minimising the false-positive rate: `bits_per_key * ln 2`.
fn probes_for(bits_per_key: u32) -> u8 {
    let k = (f64::from(bits_per_key) * std::f64::consts::LN_2).round();
    (k as u8).clamp(1, MAX_PROBES)
}

/// The bit positions of `hash` in an `m`-bit classic filter: `h1 + i * h2 (mod m)`,
/// where h1 is the hash and h2 the hash with its halves swapped, forced odd.
fn probe_positions(hash: u64, probes: u8, m: u64) -> impl Iterator<Item = u64> {
    let delta = hash.rotate_left(32) | 1;
    (0..u64::from(probes)).map(move |i| hash.wrapping_add(i.wrapping_mul(delta)) % m)
}

/// Multiplier of the cache-local layout's probe sequence (2^64 / golden ratio, odd).
const LOCAL_STEP: u64 = 0x9E37_79B9_7F4A_7C15;

/// The line of `hash` in a cache-local filter of `lines` lines (at least one):
/// `floor(h * lines / 2^64)`, which spreads hashes evenly without a division.
fn local_line(hash: u64, lines: usize) -> usize {
    ((u128::from(hash) * lines as u128) >> 64) as usize
}

/// The bit positions, inside its line, of `hash` in a cache-local filter: the top
/// nine bits of `g, g * C, g * C^2, ...` (mod 2^64), where `g` is the hash with its
/// halves swapped (the line is chosen by the high bits of the hash itself) and `C`
/// is [`LOCAL_STEP`].
fn local_positions(hash: u64, probes: u8) -> impl Iterator<Item = u64> {
    let mut g = hash.rotate_left(32);
    (0..probes).map(move |_| {
        let bit = g >> 55;
        g = g.wrapping_mul(LOCAL_STEP);
        bit
    })
}

/// Removes duplicate hashes and returns the filter's size in bits (at least
/// [`MIN_BITS`], at most what a u32 byte length can hold) and its probe count.
fn dedup_and_size(hashes: &mut Vec<u64>, bits_per_key: u32) -> (u64, u8) {
    hashes.sort_unstable();
    hashes.dedup();
    let bits_per_key = bits_per_key.max(1);
    let wanted = (hashes.len() as u64)
        .saturating_mul(u64::from(bits_per_key))
        .clamp(MIN_BITS, u64::from(u32::MAX) * 8);
    (wanted, probes_for(bits_per_key))
}

impl BloomFilter {
    /// A cache-local filter holding every hash in `hashes` (duplicates are
    /// removed first).
    pub(crate) fn build(hashes: &mut Vec<u64>, bits_per_key: u32) -> BloomFilter {
        let (wanted, probes) = dedup_and_size(hashes, bits_per_key);
        // A whole number of lines, as the layout requires, whose byte length
        // still fits the u32 it is stored as.
        let lines = usize::try_from(wanted.div_ceil(LINE_BITS))
            .unwrap_or(usize::MAX)
            .min(u32::MAX as usize / LINE_BYTES);
        let mut lines_bits = vec![Line([0; LINE_BYTES]); lines];
        for &h in hashes.iter() {
            if let Some(line) = lines_bits.get_mut(local_line(h, lines)) {
                for bit in local_positions(h, probes) {
                    if let Some(byte) = line.0.get_mut((bit / 8) as usize) {
                        *byte |= 1 << (bit % 8);
                    }
                }
            }
        }
        BloomFilter {
            bits: Bits::Local(lines_bits),
            probes,
        }
    }

    /// A classic-layout filter holding every hash in `hashes` (what files written
    /// before the cache-local layout hold; kept to test that they are still read).
    #[cfg(test)]
    fn build_classic(hashes: &mut Vec<u64>, bits_per_key: u32) -> BloomFilter {
        let (wanted, probes) = dedup_and_size(hashes, bits_per_key);
        let mut bits = vec![0u8; usize::try_from(wanted.div_ceil(8)).unwrap_or(u32::MAX as usize)];
        let m = (bits.len() as u64) * 8;
        for &h in hashes.iter() {
            for bit in probe_positions(h, probes, m) {
                if let Some(byte) = bits.get_mut((bit / 8) as usize) {
                    *byte |= 1 << (bit % 8);
                }
            }
        }
        BloomFilter {
            bits: Bits::Classic(bits),
            probes,
        }
    }

    /// False only when `hash` was certainly not added.
    pub(crate) fn may_contain(&self, hash: u64) -> bool {
        match &self.bits {
            Bits::Local(lines) => {
                if lines.is_empty() {
                    return false;
                }
                let Some(line) = lines.get(local_line(hash, lines.len())) else {
                    return false;
                };
                local_positions(hash, self.probes).all(|bit| {
                    line.0
                        .get((bit / 8) as usize)
                        .is_some_and(|byte| byte & (1 << (bit % 8)) != 0)
                })
            }
            Bits::Classic(bits) => {
                let m = (bits.len() as u64) * 8;
                if m == 0 {
                    return false;
                }
                probe_positions(hash, self.probes, m).all(|bit| {
                    bits.get((bit / 8) as usize)
                        .is_some_and(|byte| byte & (1 << (bit % 8)) != 0)
                })
            }
        }
    }

    /// True for the cache-local layout.
    fn is_local(&self) -> bool {
        matches!(self.bits, Bits::Local(_))
    }

    /// Bytes of the bit array.
    fn byte_len(&self) -> usize {
        match &self.bits {
            Bits::Classic(bits) => bits.len(),
            Bits::Local(lines) => lines.len() * LINE_BYTES,
        }
    }

    fn encode_into(&self, out: &mut Vec<u8>) {
        out.push(self.probes);
        out.extend_from_slice(&(self.byte_len() as u32).to_le_bytes());
        match &self.bits {
            Bits::Classic(bits) => out.extend_from_slice(bits),
            Bits::Local(lines) => {
                for line in lines {
                    out.extend_from_slice(&line.0);
                }
            }
        }
    }

    fn decode(r: &mut ByteReader<'_>, local: bool) -> Option<BloomFilter> {
        let probes = r.u8()?;
        if probes == 0 || probes > MAX_PROBES {
            return None;
        }
        let bits = r.length_prefixed()?;
        if bits.is_empty() {
            return None;
        }
        let bits = if local {
            if bits.len() % LINE_BYTES != 0 {
                return None;
            }
            let lines = bits
                .chunks_exact(LINE_BYTES)
                .map(|chunk| {
                    let mut line = Line([0; LINE_BYTES]);
                    line.0.copy_from_slice(chunk);
                    line
                })
                .collect();
            Bits::Local(lines)
        } else {
            Bits::Classic(bits.to_vec())
        };
        Some(BloomFilter { bits, probes })
    }

    /// Bytes held in memory.
    fn memory(&self) -> usize {
        match &self.bits {
            Bits::Classic(bits) => bits.capacity(),
            Bits::Local(lines) => lines.capacity() * LINE_BYTES,
        }
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
        // Both filters of a file share a layout (the builder makes both local).
        if [&self.row, &self.column]
            .into_iter()
            .flatten()
            .any(BloomFilter::is_local)
        {
            flags |= FLAG_LOCAL;
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
        if flags & !(FLAG_ROW | FLAG_COLUMN | FLAG_LOCAL) != 0 {
            return Err(BloomDefect::UnknownFlags(flags));
        }
        let local = flags & FLAG_LOCAL != 0;
        let mut read = |bit: u8| -> Result<Option<BloomFilter>, BloomDefect> {
            if flags & bit == 0 {
                return Ok(None);
            }
            BloomFilter::decode(&mut r, local)
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
            .map(BloomFilter::memory)
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

    /// Bits set in the filter's array.
    fn set_bits(filter: &BloomFilter) -> Vec<usize> {
        let mut bytes = Vec::new();
        filter.encode_into(&mut bytes);
        bytes[5..]
            .iter()
            .enumerate()
            .flat_map(|(i, b)| {
                (0..8)
                    .filter(move |bit| b & (1 << bit) != 0)
                    .map(move |bit| i * 8 + bit)
            })
            .collect()
    }

    #[test]
    fn a_hash_sets_bits_of_one_line_only() {
        for seed in 0..200u64 {
            let h = bloom_row_hash(&seed.to_be_bytes());
            let filter = BloomFilter::build(&mut vec![h], 10_000);
            let bits = set_bits(&filter);
            assert!(!bits.is_empty() && bits.len() <= usize::from(filter.probes));
            let line = bits[0] / (LINE_BYTES * 8);
            assert!(
                bits.iter().all(|b| b / (LINE_BYTES * 8) == line),
                "{bits:?}"
            );
            assert!(filter.may_contain(h));
        }
    }

    #[test]
    fn classic_layout_files_are_still_read() {
        let n = 20_000u32;
        let row = |i: u32| bloom_row_hash(format!("row-{i}").as_bytes());
        let mut hashes: Vec<u64> = (0..n).map(row).collect();
        let classic = FileBlooms {
            row: Some(BloomFilter::build_classic(&mut hashes, 10)),
            column: None,
        };
        let bytes = classic.encode();
        assert_eq!(
            bytes[0], FLAG_ROW,
            "no cache-local flag on a classic filter"
        );
        let decoded = FileBlooms::decode(&bytes).unwrap();
        assert_eq!(decoded, classic);
        let filter = decoded.row.unwrap();
        assert!(!filter.is_local());
        assert!((0..n).all(|i| filter.may_contain(row(i))));
        let false_positives = (0..50_000u32)
            .filter(|i| filter.may_contain(bloom_row_hash(format!("absent-{i}").as_bytes())))
            .count();
        assert!(false_positives < 1_000, "{false_positives} false positives");
    }

    #[test]
    fn cache_local_filters_must_be_whole_lines() {
        let mut payload = vec![FLAG_ROW | FLAG_LOCAL, 7];
        payload.extend_from_slice(&100u32.to_le_bytes());
        payload.extend_from_slice(&[0xFF; 100]);
        assert_eq!(FileBlooms::decode(&payload), Err(BloomDefect::BadFilter));
        let mut whole = vec![FLAG_ROW | FLAG_LOCAL, 7];
        whole.extend_from_slice(&128u32.to_le_bytes());
        whole.extend_from_slice(&[0xFF; 128]);
        let blooms = FileBlooms::decode(&whole).unwrap();
        assert!(blooms
            .row
            .is_some_and(|f| f.is_local() && f.may_contain(42)));
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
            FileBlooms::decode(&[0x08]),
            Err(BloomDefect::UnknownFlags(8))
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
