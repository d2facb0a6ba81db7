//! Resolved writes: the cells a RowMutation turns into, and their log encoding.
//!
//! Owns: [`Entry`] (one cell or marker with a concrete timestamp) and the payload
//! format of a commit-log record (`row` + entries; the record carries tablet id and
//! sequence number).
//! Must not: decide timestamps or validate against a schema (the tablet does both
//! before building entries).

use bytes::Bytes;

use crate::coding::{put_bytes, put_varint, Reader};
use crate::key::{self, KeyKind};

/// One cell or marker of a resolved RowMutation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: KeyKind,
    pub family: Bytes,
    /// Empty for family-scope markers.
    pub qualifier: Bytes,
    pub timestamp: i64,
    /// Empty for markers.
    pub value: Bytes,
}

impl Entry {
    /// The internal key of this entry at sequence number `seq`.
    pub fn key(&self, row: &[u8], seq: u64) -> Vec<u8> {
        key::encode(
            row,
            &self.family,
            &self.qualifier,
            self.kind,
            self.timestamp,
            seq,
        )
    }
}

/// Encodes a resolved mutation as a commit-log payload.
pub fn encode_payload(row: &[u8], entries: &[Entry]) -> Vec<u8> {
    let size: usize = entries
        .iter()
        .map(|e| e.family.len() + e.qualifier.len() + e.value.len() + 24)
        .sum();
    let mut out = Vec::with_capacity(row.len() + size + 8);
    put_bytes(&mut out, row);
    put_varint(&mut out, entries.len() as u64);
    for e in entries {
        out.push(e.kind as u8);
        put_bytes(&mut out, &e.family);
        put_bytes(&mut out, &e.qualifier);
        out.extend_from_slice(&e.timestamp.to_be_bytes());
        put_bytes(&mut out, &e.value);
    }
    out
}

/// Decodes a commit-log payload; `None` if malformed.
pub fn decode_payload(buf: &[u8]) -> Option<(Bytes, Vec<Entry>)> {
    let mut r = Reader::new(buf);
    let row = Bytes::copy_from_slice(r.bytes()?);
    let count = r.varint()?;
    let mut entries = Vec::with_capacity(usize::try_from(count.min(1024)).ok()?);
    for _ in 0..count {
        let kind = KeyKind::from_byte(r.u8()?)?;
        let family = Bytes::copy_from_slice(r.bytes()?);
        let qualifier = Bytes::copy_from_slice(r.bytes()?);
        let timestamp = r.i64_be()?;
        let value = Bytes::copy_from_slice(r.bytes()?);
        entries.push(Entry {
            kind,
            family,
            qualifier,
            timestamp,
            value,
        });
    }
    (r.remaining() == 0).then_some((row, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_roundtrip_and_truncation() {
        let entries = vec![
            Entry {
                kind: KeyKind::Put,
                family: Bytes::from_static(b"cf"),
                qualifier: Bytes::from_static(b"q\x00"),
                timestamp: 1234,
                value: Bytes::from_static(b"value"),
            },
            Entry {
                kind: KeyKind::DeleteFamily,
                family: Bytes::from_static(b"cf2"),
                qualifier: Bytes::new(),
                timestamp: i64::MAX - 1,
                value: Bytes::new(),
            },
        ];
        let p = encode_payload(b"row", &entries);
        let (row, back) = decode_payload(&p).unwrap();
        assert_eq!(row.as_ref(), b"row");
        assert_eq!(back, entries);
        for n in 0..p.len() {
            assert!(decode_payload(&p[..n]).is_none(), "truncated at {n}");
        }
    }
}
