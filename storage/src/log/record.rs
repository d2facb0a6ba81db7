//! The commit log's byte formats: the segment header and the record framing.
//!
//! Owns: encoding and checking of the 36-byte segment header and of one record
//! (`body_len:4 crc:4 tablet_id:8 seq:8 payload`), the CRC32C rule and the size
//! bounds (see docs/format-log.md).
//! Must not: open files, buffer, or decide what a bad record means (torn tail or
//! corruption is the reader's call).

use crate::error::{Error, Result};

/// The first eight bytes of every segment file.
pub const SEGMENT_MAGIC: [u8; 8] = *b"TABULOG\0";
/// The segment format version this code writes and reads.
pub const FORMAT_VERSION: u32 = 1;
/// Bytes in a segment header.
pub const SEGMENT_HEADER_LEN: usize = 36;
/// Bytes before a record's body: the length and the CRC.
pub const RECORD_HEADER_LEN: usize = 8;
/// Bytes of a record's body before the payload: tablet id and sequence number.
pub const RECORD_IDS_LEN: usize = 16;
/// The largest body (`tablet_id + seq + payload`) a record may have.
pub const MAX_RECORD_BODY_LEN: u32 = 256 << 20;
/// The largest payload a record may carry.
pub const MAX_PAYLOAD_LEN: usize = MAX_RECORD_BODY_LEN as usize - RECORD_IDS_LEN;

/// Byte offset of the CRC inside the segment header; the CRC covers everything before it.
const HEADER_CRC_OFFSET: usize = 32;

/// One logged mutation as replay returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRecord {
    /// The tablet the record belongs to.
    pub tablet_id: u64,
    /// The tablet's sequence number of the logged mutation.
    pub seq: u64,
    /// The caller's opaque bytes.
    pub payload: Vec<u8>,
}

/// The identity stored at the start of every segment file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentHeader {
    /// The segment's number (also its file name).
    pub number: u64,
    /// The number of the first segment written by the same process run. A segment
    /// whose successor has a larger `run_first` than its own number was the last one
    /// of its run and may end in a torn tail.
    pub run_first: u64,
}

/// Why a segment header was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    #[error("segment header is {0} bytes, shorter than {SEGMENT_HEADER_LEN}")]
    Short(usize),
    #[error("segment header has the wrong magic bytes")]
    BadMagic,
    #[error("segment header checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    BadChecksum { stored: u32, computed: u32 },
    #[error(
        "segment format version {0} is not supported (this build reads version {FORMAT_VERSION})"
    )]
    UnsupportedVersion(u32),
    #[error("segment header has unknown flags {0:#x}")]
    UnknownFlags(u32),
    #[error("segment header's run start {run_first} is after its own number {number}")]
    RunAfterSegment { number: u64, run_first: u64 },
}

/// Why a record was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("only {available} bytes remain, fewer than a record header")]
    ShortHeader { available: u64 },
    #[error("record length {len} is outside {RECORD_IDS_LEN}..={MAX_RECORD_BODY_LEN}")]
    BadLength { len: u32 },
    #[error("record length {len} runs past the end of the file ({available} bytes remain)")]
    PastEnd { len: u32, available: u64 },
    #[error("record checksum mismatch (stored {stored:#010x}, computed {computed:#010x})")]
    BadChecksum { stored: u32, computed: u32 },
}

impl SegmentHeader {
    /// The header's bytes.
    pub fn encode(&self) -> [u8; SEGMENT_HEADER_LEN] {
        let mut out = [0u8; SEGMENT_HEADER_LEN];
        out[0..8].copy_from_slice(&SEGMENT_MAGIC);
        out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        out[12..16].copy_from_slice(&0u32.to_le_bytes());
        out[16..24].copy_from_slice(&self.number.to_le_bytes());
        out[24..32].copy_from_slice(&self.run_first.to_le_bytes());
        let crc = crc32c::crc32c(&out[..HEADER_CRC_OFFSET]);
        out[HEADER_CRC_OFFSET..].copy_from_slice(&crc.to_le_bytes());
        out
    }

    /// Parses and checks a header from the first bytes of a segment file.
    pub fn decode(bytes: &[u8]) -> Result<SegmentHeader, HeaderError> {
        let header = bytes
            .get(..SEGMENT_HEADER_LEN)
            .ok_or(HeaderError::Short(bytes.len()))?;
        if header.get(0..8) != Some(&SEGMENT_MAGIC[..]) {
            return Err(HeaderError::BadMagic);
        }
        let stored = le_u32(header, HEADER_CRC_OFFSET);
        let computed = crc32c::crc32c(header.get(..HEADER_CRC_OFFSET).unwrap_or_default());
        if stored != computed {
            return Err(HeaderError::BadChecksum { stored, computed });
        }
        let version = le_u32(header, 8);
        if version != FORMAT_VERSION {
            return Err(HeaderError::UnsupportedVersion(version));
        }
        let flags = le_u32(header, 12);
        if flags != 0 {
            return Err(HeaderError::UnknownFlags(flags));
        }
        let number = le_u64(header, 16);
        let run_first = le_u64(header, 24);
        if run_first > number {
            return Err(HeaderError::RunAfterSegment { number, run_first });
        }
        Ok(SegmentHeader { number, run_first })
    }
}

/// A record that has been checked and is ready to be copied into a buffer: the
/// CRC is computed before the caller takes the log's lock.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PreparedRecord<'a> {
    body_len: u32,
    crc: u32,
    tablet_id: u64,
    seq: u64,
    payload: &'a [u8],
}

impl<'a> PreparedRecord<'a> {
    /// Checks the payload size and computes the CRC.
    pub(crate) fn new(tablet_id: u64, seq: u64, payload: &'a [u8]) -> Result<Self> {
        if payload.len() > MAX_PAYLOAD_LEN {
            return Err(Error::InvalidArgument(format!(
                "commit log payload is {} bytes, more than the maximum of {MAX_PAYLOAD_LEN}",
                payload.len()
            )));
        }
        let body_len = u32::try_from(payload.len() + RECORD_IDS_LEN).map_err(|_| {
            Error::InvalidArgument("commit log payload length does not fit a record".into())
        })?;
        let crc = record_crc(body_len, tablet_id, seq, payload);
        Ok(PreparedRecord {
            body_len,
            crc,
            tablet_id,
            seq,
            payload,
        })
    }

    /// The tablet the record belongs to.
    pub(crate) fn tablet_id(&self) -> u64 {
        self.tablet_id
    }

    /// The record's sequence number.
    pub(crate) fn seq(&self) -> u64 {
        self.seq
    }

    /// Bytes the record occupies on disk.
    pub(crate) fn encoded_len(&self) -> usize {
        RECORD_HEADER_LEN + RECORD_IDS_LEN + self.payload.len()
    }

    /// Appends the record's bytes to `buf`.
    pub(crate) fn write_to(&self, buf: &mut Vec<u8>) {
        buf.reserve(self.encoded_len());
        buf.extend_from_slice(&self.body_len.to_le_bytes());
        buf.extend_from_slice(&self.crc.to_le_bytes());
        buf.extend_from_slice(&self.tablet_id.to_le_bytes());
        buf.extend_from_slice(&self.seq.to_le_bytes());
        buf.extend_from_slice(self.payload);
    }
}

/// Encodes one record into a fresh buffer.
pub fn encode_record(tablet_id: u64, seq: u64, payload: &[u8]) -> Result<Vec<u8>> {
    let prepared = PreparedRecord::new(tablet_id, seq, payload)?;
    let mut out = Vec::with_capacity(prepared.encoded_len());
    prepared.write_to(&mut out);
    Ok(out)
}

/// The CRC32C of a record: its length field, then its body.
fn record_crc(body_len: u32, tablet_id: u64, seq: u64, payload: &[u8]) -> u32 {
    let crc = crc32c::crc32c(&body_len.to_le_bytes());
    let crc = crc32c::crc32c_append(crc, &tablet_id.to_le_bytes());
    let crc = crc32c::crc32c_append(crc, &seq.to_le_bytes());
    crc32c::crc32c_append(crc, payload)
}

/// The fixed part of a record: everything but the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordPrefix {
    pub(crate) body_len: u32,
    pub(crate) crc: u32,
    pub(crate) tablet_id: u64,
    pub(crate) seq: u64,
}

impl RecordPrefix {
    /// Bytes in the prefix.
    pub(crate) const LEN: usize = RECORD_HEADER_LEN + RECORD_IDS_LEN;

    /// Reads the length and CRC fields and checks the length against the bounds and
    /// against `available`, the bytes left in the file from the record's start. The
    /// ids are read from `bytes` but not yet trusted (the CRC is checked later).
    pub(crate) fn parse(
        bytes: &[u8; RecordPrefix::LEN],
        available: u64,
    ) -> Result<RecordPrefix, RecordError> {
        let body_len = le_u32(bytes, 0);
        if !(RECORD_IDS_LEN as u32..=MAX_RECORD_BODY_LEN).contains(&body_len) {
            return Err(RecordError::BadLength { len: body_len });
        }
        let room = available.saturating_sub(RECORD_HEADER_LEN as u64);
        if u64::from(body_len) > room {
            return Err(RecordError::PastEnd {
                len: body_len,
                available,
            });
        }
        Ok(RecordPrefix {
            body_len,
            crc: le_u32(bytes, 4),
            tablet_id: le_u64(bytes, 8),
            seq: le_u64(bytes, 16),
        })
    }

    /// Bytes of payload that follow the prefix.
    pub(crate) fn payload_len(&self) -> usize {
        self.body_len as usize - RECORD_IDS_LEN
    }

    /// Bytes of the whole record on disk.
    pub(crate) fn encoded_len(&self) -> u64 {
        RECORD_HEADER_LEN as u64 + u64::from(self.body_len)
    }

    /// Checks the stored CRC against the payload read after the prefix.
    pub(crate) fn verify(&self, payload: &[u8]) -> Result<(), RecordError> {
        let computed = record_crc(self.body_len, self.tablet_id, self.seq, payload);
        if computed == self.crc {
            Ok(())
        } else {
            Err(RecordError::BadChecksum {
                stored: self.crc,
                computed,
            })
        }
    }
}

/// Decodes the record at the start of `bytes`, returning it and the bytes it used.
pub fn decode_record(bytes: &[u8]) -> Result<(LogRecord, usize), RecordError> {
    let available = bytes.len() as u64;
    let prefix_bytes: &[u8; RecordPrefix::LEN] = bytes
        .get(..RecordPrefix::LEN)
        .and_then(|s| s.try_into().ok())
        .ok_or_else(|| short_prefix_error(bytes))?;
    let prefix = RecordPrefix::parse(prefix_bytes, available)?;
    let end = RecordPrefix::LEN + prefix.payload_len();
    let payload = bytes
        .get(RecordPrefix::LEN..end)
        .ok_or(RecordError::PastEnd {
            len: prefix.body_len,
            available,
        })?;
    prefix.verify(payload)?;
    Ok((
        LogRecord {
            tablet_id: prefix.tablet_id,
            seq: prefix.seq,
            payload: payload.to_vec(),
        },
        end,
    ))
}

/// The error for input too short to hold a record prefix.
pub(crate) fn short_prefix_error(bytes: &[u8]) -> RecordError {
    let available = bytes.len() as u64;
    match bytes.get(..4) {
        None => RecordError::ShortHeader { available },
        Some(len_bytes) => {
            let len = le_u32(len_bytes, 0);
            if !(RECORD_IDS_LEN as u32..=MAX_RECORD_BODY_LEN).contains(&len) {
                RecordError::BadLength { len }
            } else {
                RecordError::PastEnd { len, available }
            }
        }
    }
}

/// A little-endian u32 at `at`; zero when out of range (callers check lengths first).
fn le_u32(bytes: &[u8], at: usize) -> u32 {
    bytes
        .get(at..at + 4)
        .and_then(|s| <[u8; 4]>::try_from(s).ok())
        .map_or(0, u32::from_le_bytes)
}

/// A little-endian u64 at `at`; zero when out of range (callers check lengths first).
fn le_u64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..at + 8)
        .and_then(|s| <[u8; 8]>::try_from(s).ok())
        .map_or(0, u64::from_le_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn record_layout_is_as_documented() {
        let bytes = encode_record(0x0102, 7, b"abc").unwrap();
        assert_eq!(bytes.len(), 8 + 16 + 3);
        assert_eq!(&bytes[0..4], &19u32.to_le_bytes());
        assert_eq!(&bytes[8..16], &0x0102u64.to_le_bytes());
        assert_eq!(&bytes[16..24], &7u64.to_le_bytes());
        assert_eq!(&bytes[24..], b"abc");
        let mut covered = bytes[0..4].to_vec();
        covered.extend_from_slice(&bytes[8..]);
        assert_eq!(&bytes[4..8], &crc32c::crc32c(&covered).to_le_bytes());
    }

    #[test]
    fn empty_payload_roundtrips() {
        let bytes = encode_record(1, 2, b"").unwrap();
        let (rec, used) = decode_record(&bytes).unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(
            rec,
            LogRecord {
                tablet_id: 1,
                seq: 2,
                payload: vec![]
            }
        );
    }

    #[test]
    fn zero_length_field_is_rejected() {
        let bytes = [0u8; 40];
        assert_eq!(
            decode_record(&bytes).unwrap_err(),
            RecordError::BadLength { len: 0 }
        );
    }

    #[test]
    fn huge_length_field_is_rejected_without_reading() {
        let mut bytes = encode_record(1, 2, b"xyz").unwrap();
        bytes[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(
            decode_record(&bytes).unwrap_err(),
            RecordError::BadLength { len: u32::MAX }
        );
        bytes[0..4].copy_from_slice(&(MAX_RECORD_BODY_LEN).to_le_bytes());
        assert!(matches!(
            decode_record(&bytes).unwrap_err(),
            RecordError::PastEnd { .. }
        ));
    }

    #[test]
    fn oversized_payload_is_refused_at_encode() {
        let big = vec![0u8; MAX_PAYLOAD_LEN + 1];
        assert!(matches!(
            encode_record(1, 1, &big),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn header_roundtrips_and_checks() {
        let h = SegmentHeader {
            number: 42,
            run_first: 40,
        };
        let bytes = h.encode();
        assert_eq!(&bytes[0..8], b"TABULOG\0");
        assert_eq!(SegmentHeader::decode(&bytes).unwrap(), h);
        assert_eq!(
            SegmentHeader::decode(&bytes[..35]).unwrap_err(),
            HeaderError::Short(35)
        );
        for i in 0..SEGMENT_HEADER_LEN {
            let mut bad = bytes;
            bad[i] ^= 0x20;
            assert!(SegmentHeader::decode(&bad).is_err(), "flip at byte {i}");
        }
    }

    #[test]
    fn header_with_run_after_number_is_rejected() {
        let bytes = SegmentHeader {
            number: 3,
            run_first: 4,
        }
        .encode();
        assert_eq!(
            SegmentHeader::decode(&bytes).unwrap_err(),
            HeaderError::RunAfterSegment {
                number: 3,
                run_first: 4
            }
        );
    }

    proptest! {
        #[test]
        fn records_roundtrip(tablet in any::<u64>(), seq in any::<u64>(),
                             payload in proptest::collection::vec(any::<u8>(), 0..2048)) {
            let bytes = encode_record(tablet, seq, &payload).unwrap();
            let (rec, used) = decode_record(&bytes).unwrap();
            prop_assert_eq!(used, bytes.len());
            prop_assert_eq!(rec, LogRecord { tablet_id: tablet, seq, payload });
        }

        #[test]
        fn any_single_flip_is_detected(payload in proptest::collection::vec(any::<u8>(), 0..256),
                                       at in any::<prop::sample::Index>(), bit in 0u8..8) {
            let mut bytes = encode_record(9, 10, &payload).unwrap();
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
            prop_assert!(decode_record(&bytes).is_err());
        }

        #[test]
        fn every_prefix_is_rejected(payload in proptest::collection::vec(any::<u8>(), 0..128),
                                    cut in any::<prop::sample::Index>()) {
            let bytes = encode_record(3, 4, &payload).unwrap();
            let n = cut.index(bytes.len());
            prop_assert!(decode_record(&bytes[..n]).is_err());
        }
    }
}
