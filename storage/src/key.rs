//! The internal key: how a cell's coordinates become bytes that sort correctly.
//!
//! Owns: the byte encoding of `(row, family, qualifier, kind, timestamp, sequence)`
//! and the seek targets built from it. Every sorted structure in the engine
//! (memtable, SSTable blocks, block index) compares these keys with plain `memcmp`.
//! Must not: know about files, memtables or HBase read semantics.
//!
//! Layout (see docs/format-key.md):
//!
//! ```text
//! esc(row) esc(family) scope [esc(qualifier) class] ts_desc:8 kind:1 seq_desc:8
//! ```
//!
//! * `esc(x)`: every `0x00` byte becomes `0x00 0xFF`, then the terminator `0x00 0x01`.
//!   Escaped strings compare exactly as the raw strings do, and a string sorts before
//!   every longer string it prefixes.
//! * `scope`: `0x00` for family-wide delete markers (no qualifier follows),
//!   `0x01` for column entries. Family markers therefore sort before every column of
//!   their family, so a reader meets them before any cell they may cover.
//! * `class` (column scope only): `0x00` for column delete markers, `0x01` for puts.
//!   A column's markers sort before all of its puts: a read "as of T" collects the
//!   markers, then seeks straight to the put at `T` without walking newer versions.
//! * `ts_desc`: the timestamp with its sign bit flipped, then every bit inverted, big
//!   endian: newer timestamps sort first.
//! * `kind`: the [`KeyKind`] byte.
//! * `seq_desc`: the sequence number inverted, big endian: newer writes sort first.

use bytes::{Bytes, BytesMut};

use crate::error::{Error, Result};

/// Bytes after the escaped strings: ts (8) + kind (1) + seq (8).
const TAIL_LEN: usize = 17;

/// Scope byte for family-wide markers.
const SCOPE_FAMILY: u8 = 0x00;
/// Scope byte for column entries.
pub(crate) const SCOPE_COLUMN: u8 = 0x01;
/// Class byte for column delete markers.
const CLASS_MARKER: u8 = 0x00;
/// Class byte for puts.
const CLASS_PUT: u8 = 0x01;

/// What an entry is. The numeric values are part of the on-disk format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum KeyKind {
    /// Covers every column of the family with timestamp <= ts.
    DeleteFamily = 1,
    /// Covers every column of the family at exactly ts.
    DeleteFamilyVersion = 2,
    /// Covers every version of the column with timestamp <= ts.
    DeleteColumn = 3,
    /// Covers the version of the column at exactly ts.
    DeleteVersion = 4,
    /// A value.
    Put = 5,
}

impl KeyKind {
    /// Parses the kind byte.
    pub fn from_byte(b: u8) -> Option<KeyKind> {
        Some(match b {
            1 => KeyKind::DeleteFamily,
            2 => KeyKind::DeleteFamilyVersion,
            3 => KeyKind::DeleteColumn,
            4 => KeyKind::DeleteVersion,
            5 => KeyKind::Put,
            _ => return None,
        })
    }

    /// True for the two family-wide markers (which carry no qualifier).
    pub fn is_family_scope(self) -> bool {
        matches!(self, KeyKind::DeleteFamily | KeyKind::DeleteFamilyVersion)
    }

    /// True for every delete marker.
    pub fn is_delete(self) -> bool {
        self != KeyKind::Put
    }
}

/// Appends `s` escaped and terminated.
pub fn escape_into(out: &mut Vec<u8>, s: &[u8]) {
    out.reserve(s.len() + 2);
    let mut rest = s;
    // Copy runs between zero bytes at once: most strings have none.
    while let Some(i) = memchr::memchr(0, rest) {
        let (run, after) = rest.split_at(i);
        out.extend_from_slice(run);
        out.extend_from_slice(&[0x00, 0xFF]);
        rest = after.get(1..).unwrap_or_default();
    }
    out.extend_from_slice(rest);
    out.extend_from_slice(&[0x00, 0x01]);
}

/// What follows `esc(row) esc(family)` in every key of the column `qualifier`:
/// the column scope byte and the escaped qualifier.
pub fn column_suffix(qualifier: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(qualifier.len() + 3);
    column_suffix_into(&mut out, qualifier);
    out
}

/// Appends [`column_suffix`] of `qualifier` to `out`.
pub fn column_suffix_into(out: &mut Vec<u8>, qualifier: &[u8]) {
    out.push(SCOPE_COLUMN);
    escape_into(out, qualifier);
}

/// Reads one escaped string from the front of `input`; returns it and the rest.
fn unescape(input: &[u8]) -> Option<(Vec<u8>, &[u8])> {
    let mut out = Vec::with_capacity(input.len().min(64));
    let mut rest = input;
    loop {
        let i = memchr::memchr(0, rest)?;
        out.extend_from_slice(rest.get(..i)?);
        match *rest.get(i + 1)? {
            0xFF => {
                out.push(0);
                rest = rest.get(i + 2..)?;
            }
            0x01 => return Some((out, rest.get(i + 2..)?)),
            _ => return None,
        }
    }
}

/// Reads one escaped string from the front of `input` as owned bytes, with one
/// allocation of exactly its size when it holds no zero byte (the usual case).
fn unescape_bytes(input: &[u8]) -> Option<Bytes> {
    let first_zero = memchr::memchr(0, input)?;
    if *input.get(first_zero + 1)? == 0x01 {
        return input.get(..first_zero).map(Bytes::copy_from_slice);
    }
    unescape(input).map(|(s, _)| Bytes::from(s))
}

/// Appends the escaped string at the front of `input`, unescaped, to `out`.
fn unescape_into(out: &mut Vec<u8>, input: &[u8]) -> Option<()> {
    let mut rest = input;
    loop {
        let i = memchr::memchr(0, rest)?;
        out.extend_from_slice(rest.get(..i)?);
        match *rest.get(i + 1)? {
            0xFF => {
                out.push(0);
                rest = rest.get(i + 2..)?;
            }
            0x01 => return Some(()),
            _ => return None,
        }
    }
}

/// Returns the length of the escaped string at the front of `input`, terminator included.
fn escaped_len(input: &[u8]) -> Option<usize> {
    let mut i = 0;
    loop {
        let z = i + memchr::memchr(0, input.get(i..)?)?;
        match *input.get(z + 1)? {
            0xFF => i = z + 2,
            0x01 => return Some(z + 2),
            _ => return None,
        }
    }
}

/// Timestamp encoded so that newer sorts first.
pub fn ts_desc(ts: i64) -> [u8; 8] {
    (!((ts as u64) ^ (1u64 << 63))).to_be_bytes()
}

fn ts_from_desc(b: [u8; 8]) -> i64 {
    ((!u64::from_be_bytes(b)) ^ (1u64 << 63)) as i64
}

/// A decoded internal key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParsedKey {
    pub row: Vec<u8>,
    pub family: Vec<u8>,
    /// Empty for family-scope markers.
    pub qualifier: Vec<u8>,
    pub kind: KeyKind,
    pub timestamp: i64,
    pub seq: u64,
}

/// Encodes a full internal key.
pub fn encode(
    row: &[u8],
    family: &[u8],
    qualifier: &[u8],
    kind: KeyKind,
    timestamp: i64,
    seq: u64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(row.len() + family.len() + qualifier.len() + 26);
    escape_into(&mut out, row);
    escape_into(&mut out, family);
    if kind.is_family_scope() {
        out.push(SCOPE_FAMILY);
    } else {
        out.push(SCOPE_COLUMN);
        escape_into(&mut out, qualifier);
        out.push(if kind == KeyKind::Put {
            CLASS_PUT
        } else {
            CLASS_MARKER
        });
    }
    out.extend_from_slice(&ts_desc(timestamp));
    out.push(kind as u8);
    out.extend_from_slice(&(!seq).to_be_bytes());
    out
}

/// Decodes an internal key; `None` if the bytes are not a well-formed key.
pub fn decode(key: &[u8]) -> Option<ParsedKey> {
    let (row, rest) = unescape(key)?;
    let (family, rest) = unescape(rest)?;
    let (&scope, rest) = rest.split_first()?;
    let (qualifier, rest) = match scope {
        SCOPE_FAMILY => (Vec::new(), rest),
        SCOPE_COLUMN => {
            let (q, rest) = unescape(rest)?;
            let (&class, rest) = rest.split_first()?;
            if class != CLASS_MARKER && class != CLASS_PUT {
                return None;
            }
            (q, rest)
        }
        _ => return None,
    };
    if rest.len() != TAIL_LEN {
        return None;
    }
    let ts: [u8; 8] = rest.get(0..8)?.try_into().ok()?;
    let kind = KeyKind::from_byte(*rest.get(8)?)?;
    let seq: [u8; 8] = rest.get(9..17)?.try_into().ok()?;
    if kind.is_family_scope() != (scope == SCOPE_FAMILY) {
        return None;
    }
    Some(ParsedKey {
        row,
        family,
        qualifier,
        kind,
        timestamp: ts_from_desc(ts),
        seq: !u64::from_be_bytes(seq),
    })
}

/// Decodes a key or reports corruption of the named source.
pub fn decode_or_corrupt(key: &[u8], source: &std::path::Path) -> Result<ParsedKey> {
    decode(key).ok_or_else(|| Error::corruption(source, "malformed internal key"))
}

/// The fixed-size tail of a key, cheap to read without decoding the strings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyTail {
    pub kind: KeyKind,
    pub timestamp: i64,
    pub seq: u64,
}

/// Reads the tail of a well-formed key.
pub fn tail(key: &[u8]) -> Option<KeyTail> {
    let start = key.len().checked_sub(TAIL_LEN)?;
    let t = key.get(start..)?;
    let ts: [u8; 8] = t.get(0..8)?.try_into().ok()?;
    let seq: [u8; 8] = t.get(9..17)?.try_into().ok()?;
    Some(KeyTail {
        kind: KeyKind::from_byte(*t.get(8)?)?,
        timestamp: ts_from_desc(ts),
        seq: !u64::from_be_bytes(seq),
    })
}

/// The part of a key that names the entry's coordinates without timestamp, kind
/// and sequence: equal for every version of one column (or one family marker scope).
pub fn coordinates(key: &[u8]) -> &[u8] {
    let end = key.len().saturating_sub(TAIL_LEN);
    key.get(..end).unwrap_or(key)
}

/// Length of the escaped row at the front of a key.
pub fn row_prefix_len(key: &[u8]) -> Option<usize> {
    escaped_len(key)
}

/// The escaped row at the front of a key (a prefix shared by every entry of the row).
pub fn row_prefix(key: &[u8]) -> Option<&[u8]> {
    key.get(..escaped_len(key)?)
}

/// Length of escaped row + escaped family at the front of a key.
pub fn family_prefix_len(key: &[u8]) -> Option<usize> {
    let r = escaped_len(key)?;
    let f = escaped_len(key.get(r..)?)?;
    Some(r + f)
}

/// The escaped family of a key (row skipped), as it appears in the key.
pub fn escaped_family(key: &[u8]) -> Option<&[u8]> {
    let r = escaped_len(key)?;
    let f = escaped_len(key.get(r..)?)?;
    key.get(r..r + f)
}

/// The raw row of a key.
pub fn row_of(key: &[u8]) -> Option<Vec<u8>> {
    unescape(key).map(|(r, _)| r)
}

/// Bytes of each buffer [`split_row`] copies rows into.
pub const ROW_ARENA_CHUNK: usize = 4096;

/// The raw row of a key as owned bytes and the length of the escaped row at the
/// key's front (see [`row_prefix`]), found with one search in the usual case of a
/// row without zero bytes.
///
/// A row without zero bytes is copied into `arena`'s spare room and split off, so
/// the rows a scan reads share one allocation per [`ROW_ARENA_CHUNK`] bytes (and
/// cloning one is a reference-count increment) instead of an allocation each; an
/// arena without room is replaced by a fresh chunk. Rows holding zero bytes are
/// unescaped into buffers of their own.
pub fn split_row(key: &[u8], arena: &mut BytesMut) -> Option<(Bytes, usize)> {
    let first_zero = memchr::memchr(0, key)?;
    if *key.get(first_zero + 1)? == 0x01 {
        let row = key.get(..first_zero)?;
        if arena.capacity() - arena.len() < row.len() {
            *arena = BytesMut::with_capacity(ROW_ARENA_CHUNK.max(row.len()));
        }
        arena.extend_from_slice(row);
        return Some((arena.split().freeze(), first_zero + 2));
    }
    Some((unescape_bytes(key)?, escaped_len(key)?))
}

/// The raw row of a key as owned bytes (see [`row_of`]).
pub fn row_bytes_of(key: &[u8]) -> Option<Bytes> {
    unescape_bytes(key)
}

/// Seek target: the first entry of `row`.
pub fn row_start(row: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(row.len() + 2);
    escape_into(&mut out, row);
    out
}

/// Seek target: the first position after every entry of `row`.
pub fn row_end(row: &[u8]) -> Vec<u8> {
    let mut out = row_start(row);
    escaped_row_to_end(&mut out);
    out
}

/// Turns an escaped row (as [`row_start`] builds it) into its [`row_end`] in place.
pub fn escaped_row_to_end(escaped_row: &mut [u8]) {
    // The terminator is 0x00 0x01; raising its last byte to 0x02 passes every entry
    // of this row and stays below every longer row (whose next byte is 0x00 0xFF or
    // a non-zero byte greater than the 0x00 here).
    if let Some(last) = escaped_row.last_mut() {
        *last = 0x02;
    }
}

/// Seek target: the first entry of `family` in `row` (its family markers, if any).
pub fn family_start(row: &[u8], family: &[u8]) -> Vec<u8> {
    // Room for the escapes of a few zero bytes and one more byte (scope).
    let mut out = Vec::with_capacity(row.len() + family.len() + 8);
    escape_into(&mut out, row);
    escape_into(&mut out, family);
    out
}

/// Seek target: the first position after every entry of `family` in `row`.
pub fn family_end(row: &[u8], family: &[u8]) -> Vec<u8> {
    let mut out = family_start(row, family);
    if let Some(last) = out.last_mut() {
        *last = 0x02;
    }
    out
}

/// Seek target: the first column entry of `family` (after its family markers).
pub fn family_columns_start(row: &[u8], family: &[u8]) -> Vec<u8> {
    let mut out = family_start(row, family);
    out.push(SCOPE_COLUMN);
    out
}

/// Seek target: the first entry of a column (its markers, then its puts).
pub fn column_start(row: &[u8], family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    // Room for the escapes, the scope byte, and a class byte and tail appended by
    // callers that extend the key.
    let mut out = Vec::with_capacity(row.len() + family.len() + qualifier.len() + 32);
    escape_into(&mut out, row);
    escape_into(&mut out, family);
    out.push(SCOPE_COLUMN);
    escape_into(&mut out, qualifier);
    out
}

/// [`family_start`] built on an already escaped row (`row_start(row)`), with room
/// for the column part callers append.
pub fn family_start_after(row_key: &[u8], family: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(row_key.len() + family.len() + 48);
    out.extend_from_slice(row_key);
    escape_into(&mut out, family);
    out
}

/// [`column_start`] built on an already built [`family_start`].
pub fn column_start_after(family_key: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(family_key.len() + qualifier.len() + 32);
    out.extend_from_slice(family_key);
    out.push(SCOPE_COLUMN);
    escape_into(&mut out, qualifier);
    out
}

/// The raw qualifier of a column-scope key (`None` for family-scope or malformed
/// keys), without decoding the row and family.
pub fn qualifier_of(key: &[u8]) -> Option<Vec<u8>> {
    let f = family_prefix_len(key)?;
    let rest = key.get(f..)?;
    let (&scope, rest) = rest.split_first()?;
    if scope != SCOPE_COLUMN {
        return None;
    }
    unescape(rest).map(|(q, _)| q)
}

/// Like [`qualifier_of`], but writes the qualifier into `out` (cleared first).
pub fn qualifier_into(key: &[u8], out: &mut Vec<u8>) -> Option<()> {
    let f = family_prefix_len(key)?;
    let rest = key.get(f..)?;
    let (&scope, rest) = rest.split_first()?;
    if scope != SCOPE_COLUMN {
        return None;
    }
    out.clear();
    unescape_into(out, rest)
}

/// Seek target: the first put of a column, newest first.
pub fn column_puts_start(row: &[u8], family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut out = column_start(row, family, qualifier);
    out.push(CLASS_PUT);
    out
}

/// Seek target: the newest put of a column with timestamp <= `ts`.
pub fn column_put_at(row: &[u8], family: &[u8], qualifier: &[u8], ts: i64) -> Vec<u8> {
    let mut out = column_puts_start(row, family, qualifier);
    out.extend_from_slice(&ts_desc(ts));
    out
}

/// Seek target: the first position after every entry of a column.
pub fn column_end(row: &[u8], family: &[u8], qualifier: &[u8]) -> Vec<u8> {
    let mut out = column_start(row, family, qualifier);
    out.push(CLASS_PUT + 1);
    out
}

/// Given a key's coordinates prefix (see [`coordinates`]) for a column put, the
/// target that skips the rest of that column.
pub fn after_coordinates(coords: &[u8]) -> Vec<u8> {
    let mut out = coords.to_vec();
    // Coordinates end with the class byte (column scope) or the scope byte (family
    // scope); raising it by one moves past every entry that shares them.
    if let Some(last) = out.last_mut() {
        *last = last.saturating_add(1);
    }
    out
}

/// Hash of a row for bloom filters.
pub fn bloom_row_hash(row: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(row, 0x5441_4255_4c41_0001)
}

/// Hash of a row and qualifier for bloom filters (files hold one family each).
pub fn bloom_column_hash(row: &[u8], qualifier: &[u8]) -> u64 {
    const SEED: u64 = 0x5441_4255_4c41_0002;
    let len = 4 + row.len() + qualifier.len();
    let fill = |buf: &mut [u8]| {
        let (head, rest) = buf.split_at_mut(4);
        head.copy_from_slice(&(row.len() as u32).to_be_bytes());
        let (r, q) = rest.split_at_mut(row.len());
        r.copy_from_slice(row);
        q.copy_from_slice(qualifier);
    };
    // Gets hash one column each and flushes one per entry: the usual short key
    // is assembled on the stack, not in an allocation.
    let mut stack = [0u8; 256];
    if let Some(buf) = stack.get_mut(..len) {
        fill(buf);
        return xxhash_rust::xxh3::xxh3_64_with_seed(buf, SEED);
    }
    let mut buf = vec![0u8; len];
    fill(&mut buf);
    xxhash_rust::xxh3::xxh3_64_with_seed(&buf, SEED)
}

/// The bloom hashes of an encoded key: the row hash, and for column entries the
/// row+qualifier hash.
pub fn bloom_hashes(key: &[u8]) -> Option<(u64, Option<u64>)> {
    let parsed = decode(key)?;
    let row = bloom_row_hash(&parsed.row);
    let col = if parsed.kind.is_family_scope() {
        None
    } else {
        Some(bloom_column_hash(&parsed.row, &parsed.qualifier))
    };
    Some((row, col))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn kind_strategy() -> impl Strategy<Value = KeyKind> {
        prop_oneof![
            Just(KeyKind::DeleteFamily),
            Just(KeyKind::DeleteFamilyVersion),
            Just(KeyKind::DeleteColumn),
            Just(KeyKind::DeleteVersion),
            Just(KeyKind::Put),
        ]
    }

    type Coords = (Vec<u8>, Vec<u8>, Vec<u8>, KeyKind, i64, u64);

    fn coords() -> impl Strategy<Value = Coords> {
        (
            proptest::collection::vec(
                prop_oneof![Just(0u8), Just(1u8), Just(255u8), any::<u8>()],
                0..6,
            ),
            proptest::collection::vec(prop_oneof![Just(0u8), Just(b'a'), any::<u8>()], 0..3),
            proptest::collection::vec(prop_oneof![Just(0u8), Just(b'q'), any::<u8>()], 0..4),
            kind_strategy(),
            prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(0i64), any::<i64>()],
            any::<u64>(),
        )
    }

    /// The order the key must implement, written the slow way.
    fn logical_cmp(a: &Coords, b: &Coords) -> std::cmp::Ordering {
        let scope = |k: KeyKind| if k.is_family_scope() { 0 } else { 1 };
        let class = |k: KeyKind| if k == KeyKind::Put { 1 } else { 0 };
        let qual = |c: &Coords| {
            if c.3.is_family_scope() {
                Vec::new()
            } else {
                c.2.clone()
            }
        };
        a.0.cmp(&b.0)
            .then(a.1.cmp(&b.1))
            .then(scope(a.3).cmp(&scope(b.3)))
            .then(qual(a).cmp(&qual(b)))
            .then(class(a.3).cmp(&class(b.3)))
            .then(b.4.cmp(&a.4))
            .then((a.3 as u8).cmp(&(b.3 as u8)))
            .then(b.5.cmp(&a.5))
    }

    proptest! {
        #[test]
        fn roundtrip(c in coords()) {
            let k = encode(&c.0, &c.1, &c.2, c.3, c.4, c.5);
            let p = decode(&k).expect("decodes");
            prop_assert_eq!(&p.row, &c.0);
            prop_assert_eq!(&p.family, &c.1);
            if !c.3.is_family_scope() {
                prop_assert_eq!(&p.qualifier, &c.2);
            }
            prop_assert_eq!(p.kind, c.3);
            prop_assert_eq!(p.timestamp, c.4);
            prop_assert_eq!(p.seq, c.5);
            let t = tail(&k).expect("tail");
            prop_assert_eq!(t.timestamp, c.4);
            prop_assert_eq!(t.seq, c.5);
            prop_assert_eq!(row_of(&k).expect("row"), c.0.clone());
            let row_bytes = row_bytes_of(&k).expect("row bytes");
            prop_assert_eq!(row_bytes.as_ref(), c.0.as_slice());
            let (split, prefix_len) = split_row(&k, &mut BytesMut::new()).expect("split");
            prop_assert_eq!(split.as_ref(), c.0.as_slice());
            prop_assert_eq!(Some(&k[..prefix_len]), row_prefix(&k));
            let mut scratch = b"left over".to_vec();
            if c.3.is_family_scope() {
                prop_assert_eq!(qualifier_of(&k), None);
                prop_assert_eq!(qualifier_into(&k, &mut scratch), None);
            } else {
                prop_assert_eq!(qualifier_of(&k), Some(c.2.clone()));
                prop_assert_eq!(qualifier_into(&k, &mut scratch), Some(()));
                prop_assert_eq!(&scratch, &c.2);
            }
        }

        #[test]
        fn memcmp_order_matches_logical_order(a in coords(), b in coords()) {
            let ka = encode(&a.0, &a.1, &a.2, a.3, a.4, a.5);
            let kb = encode(&b.0, &b.1, &b.2, b.3, b.4, b.5);
            prop_assert_eq!(ka.cmp(&kb), logical_cmp(&a, &b));
        }

        #[test]
        fn seek_targets_bracket_their_entries(a in coords(), other in coords()) {
            let k = encode(&a.0, &a.1, &a.2, a.3, a.4, a.5);
            prop_assert!(row_start(&a.0) <= k);
            prop_assert!(k < row_end(&a.0));
            prop_assert!(family_start(&a.0, &a.1) <= k);
            prop_assert!(k < family_end(&a.0, &a.1));
            if !a.3.is_family_scope() {
                prop_assert!(column_start(&a.0, &a.1, &a.2) <= k);
                prop_assert!(k < column_end(&a.0, &a.1, &a.2));
                prop_assert!(after_coordinates(coordinates(&k)) > k);
            }
            // An entry of another row is outside this row's bounds.
            let ko = encode(&other.0, &other.1, &other.2, other.3, other.4, other.5);
            if other.0 != a.0 {
                prop_assert!(ko < row_start(&a.0) || ko >= row_end(&a.0));
            }
            if other.0 == a.0 && other.1 != a.1 {
                prop_assert!(ko < family_start(&a.0, &a.1) || ko >= family_end(&a.0, &a.1));
            }
        }
    }

    #[test]
    fn put_at_seeks_to_newest_not_after() {
        let row = b"r";
        let keys: Vec<Vec<u8>> = [30i64, 20, 10]
            .iter()
            .map(|&ts| encode(row, b"f", b"q", KeyKind::Put, ts, 1))
            .collect();
        let target = column_put_at(row, b"f", b"q", 25);
        let first = keys
            .iter()
            .find(|k| **k >= target)
            .expect("one at or after");
        assert_eq!(tail(first).map(|t| t.timestamp), Some(20));
        let marker = encode(row, b"f", b"q", KeyKind::DeleteColumn, 5, 9);
        assert!(
            marker < keys[0],
            "markers sort before every put of the column"
        );
        let fam_marker = encode(row, b"f", b"", KeyKind::DeleteFamily, 1, 9);
        assert!(
            fam_marker < marker,
            "family markers sort before every column"
        );
    }

    #[test]
    fn split_rows_share_arena_chunks_and_stay_intact() {
        let mut arena = BytesMut::new();
        let rows: Vec<Vec<u8>> = (0..2_000usize)
            .map(|i| match i % 100 {
                // Longer than a chunk, and rows with zero bytes (unescaped apart).
                0 => vec![b'L'; ROW_ARENA_CHUNK + i],
                1 => format!("zero\x00{i}").into_bytes(),
                _ => format!("row{i:08}").into_bytes(),
            })
            .collect();
        let split: Vec<(Bytes, usize)> = rows
            .iter()
            .map(|r| {
                let k = encode(r, b"f", b"q", KeyKind::Put, 7, 1);
                let (row, prefix_len) = split_row(&k, &mut arena).expect("split");
                assert_eq!(Some(&k[..prefix_len]), row_prefix(&k));
                (row, prefix_len)
            })
            .collect();
        // Every row still reads as written after later rows filled the arena.
        for (r, (got, _)) in rows.iter().zip(&split) {
            assert_eq!(got.as_ref(), r.as_slice());
        }
        // Neighbouring short rows lie side by side in one chunk.
        let (a, b) = (&split[2].0, &split[3].0);
        assert_eq!(a.as_ptr().wrapping_add(a.len()), b.as_ptr());
    }

    #[test]
    fn column_hash_is_the_hash_of_the_length_prefixed_concatenation() {
        // Short keys are assembled on the stack, long ones in an allocation; both
        // must hash the bytes the format defines.
        for (row_len, q_len) in [
            (0, 0),
            (10, 5),
            (200, 52),
            (200, 53),
            (300, 10),
            (5, 70_000),
        ] {
            let row = vec![b'r'; row_len];
            let qualifier = vec![b'q'; q_len];
            let mut expected = (row_len as u32).to_be_bytes().to_vec();
            expected.extend_from_slice(&row);
            expected.extend_from_slice(&qualifier);
            assert_eq!(
                bloom_column_hash(&row, &qualifier),
                xxhash_rust::xxh3::xxh3_64_with_seed(&expected, 0x5441_4255_4c41_0002),
                "row {row_len} bytes, qualifier {q_len} bytes"
            );
        }
    }

    #[test]
    fn malformed_keys_do_not_decode() {
        assert!(decode(b"").is_none());
        assert!(decode(b"\x00\x07").is_none());
        let mut k = encode(b"r", b"f", b"q", KeyKind::Put, 1, 1);
        k.pop();
        assert!(decode(&k).is_none());
    }
}
