//! The tablet manifest: the crash-safe record of which SSTables make up a tablet.
//!
//! Owns: [`ManifestState`] (key range, live files per family, flushed sequence
//! number) and its file `MANIFEST` in the tablet's directory, replaced atomically:
//! written to `MANIFEST.tmp`, fsynced, renamed over `MANIFEST`, directory fsynced.
//! A reader therefore sees either the old or the new state, never a mix.
//! Must not: open SSTables or decide which files to compact.
//!
//! Format (see docs/format-manifest.md): magic `TBMF`, u32 version, the fields as
//! varints and length-prefixed strings, then a CRC32C of everything before it.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::coding::{put_bytes, put_varint, Reader};
use crate::error::{Error, Result};

const MAGIC: &[u8; 4] = b"TBMF";
const VERSION: u32 = 1;
/// The manifest's file name inside a tablet directory.
pub const MANIFEST_FILE: &str = "MANIFEST";
const MANIFEST_TMP: &str = "MANIFEST.tmp";

/// One live SSTable of a tablet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry {
    /// The column family the file holds.
    pub family: Bytes,
    /// Path relative to the engine's tablets root, e.g. `17/000004.sst`.
    pub path: String,
    /// Rows of the file this tablet may read: `[start, end)`; empty = unbounded.
    /// A file inherited from a split parent is bounded to the child's range.
    pub bound_start: Bytes,
    pub bound_end: Bytes,
    /// True when this tablet alone references the file (it may delete it).
    pub owned: bool,
    /// File size in bytes.
    pub size: u64,
    /// Highest sequence number in the file.
    pub max_seq: u64,
}

impl FileEntry {
    /// A file the tablet wrote itself (a flush or compaction output): owned, read
    /// whole, sized and sequenced from its metadata.
    pub(crate) fn written(family: Bytes, path: String, meta: &crate::sstable::SstMeta) -> Self {
        FileEntry {
            family,
            path,
            bound_start: Bytes::new(),
            bound_end: Bytes::new(),
            owned: true,
            size: meta.file_size,
            max_seq: meta.max_seq,
        }
    }
}

/// Everything the manifest records about a tablet.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManifestState {
    pub tablet_id: u64,
    /// First row served (inclusive); empty = table start.
    pub start_row: Bytes,
    /// Row after the last served (exclusive); empty = table end.
    pub end_row: Bytes,
    /// Every write with a sequence number <= this is in the files.
    pub flushed_seq: u64,
    /// Next file number to allocate in this tablet's directory.
    pub next_file_no: u64,
    /// Live files, newest first within each family.
    pub files: Vec<FileEntry>,
}

impl ManifestState {
    /// Encodes the state.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_be_bytes());
        put_varint(&mut out, self.tablet_id);
        put_bytes(&mut out, &self.start_row);
        put_bytes(&mut out, &self.end_row);
        put_varint(&mut out, self.flushed_seq);
        put_varint(&mut out, self.next_file_no);
        put_varint(&mut out, self.files.len() as u64);
        for f in &self.files {
            put_bytes(&mut out, &f.family);
            put_bytes(&mut out, f.path.as_bytes());
            put_bytes(&mut out, &f.bound_start);
            put_bytes(&mut out, &f.bound_end);
            out.push(u8::from(f.owned));
            put_varint(&mut out, f.size);
            put_varint(&mut out, f.max_seq);
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_be_bytes());
        out
    }

    /// Decodes a state; `path` names the file in errors.
    pub fn decode(buf: &[u8], path: &Path) -> Result<ManifestState> {
        let bad = |d: &str| Error::corruption(path, format!("manifest: {d}"));
        let body_len = buf.len().checked_sub(4).ok_or_else(|| bad("truncated"))?;
        let (body, crc) = buf.split_at(body_len);
        let crc = u32::from_be_bytes(crc.try_into().map_err(|_| bad("truncated"))?);
        if crc32c::crc32c(body) != crc {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Reader::new(body);
        if r.raw(4) != Some(MAGIC.as_slice()) {
            return Err(bad("bad magic"));
        }
        let version = r.u32_be().ok_or_else(|| bad("truncated"))?;
        if version != VERSION {
            return Err(bad(&format!("unsupported version {version}")));
        }
        let t = |o: Option<u64>| o.ok_or_else(|| bad("truncated"));
        let b = |o: Option<&[u8]>| {
            o.map(Bytes::copy_from_slice)
                .ok_or_else(|| bad("truncated"))
        };
        let tablet_id = t(r.varint())?;
        let start_row = b(r.bytes())?;
        let end_row = b(r.bytes())?;
        let flushed_seq = t(r.varint())?;
        let next_file_no = t(r.varint())?;
        let count = t(r.varint())?;
        let mut files = Vec::new();
        for _ in 0..count {
            let family = b(r.bytes())?;
            let path_bytes = b(r.bytes())?;
            let file_path = String::from_utf8(path_bytes.to_vec())
                .map_err(|_| bad("file path is not UTF-8"))?;
            let bound_start = b(r.bytes())?;
            let bound_end = b(r.bytes())?;
            let owned = match r.u8() {
                Some(0) => false,
                Some(1) => true,
                _ => return Err(bad("bad owned flag")),
            };
            let size = t(r.varint())?;
            let max_seq = t(r.varint())?;
            files.push(FileEntry {
                family,
                path: file_path,
                bound_start,
                bound_end,
                owned,
                size,
                max_seq,
            });
        }
        if r.remaining() != 0 {
            return Err(bad("trailing bytes"));
        }
        Ok(ManifestState {
            tablet_id,
            start_row,
            end_row,
            flushed_seq,
            next_file_no,
            files,
        })
    }

    /// Highest sequence number recorded anywhere in the state.
    pub fn max_seq(&self) -> u64 {
        self.files
            .iter()
            .map(|f| f.max_seq)
            .fold(self.flushed_seq, u64::max)
    }
}

/// Path of the manifest in `dir`.
pub fn manifest_path(dir: &Path) -> PathBuf {
    dir.join(MANIFEST_FILE)
}

/// Reads the manifest in `dir`; `Ok(None)` when there is none.
pub fn load(dir: &Path) -> Result<Option<ManifestState>> {
    let path = manifest_path(dir);
    match fs::read(&path) {
        Ok(buf) => ManifestState::decode(&buf, &path).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// Replaces the manifest in `dir` atomically and durably.
pub fn store(dir: &Path, state: &ManifestState) -> Result<()> {
    let tmp = dir.join(MANIFEST_TMP);
    let io = |what: &str, e| Error::io(format!("{what} {}", tmp.display()), e);
    {
        let mut f = fs::File::create(&tmp).map_err(|e| io("creating", e))?;
        f.write_all(&state.encode()).map_err(|e| io("writing", e))?;
        f.sync_all().map_err(|e| io("syncing", e))?;
    }
    fail::fail_point!("manifest-tmp-written");
    fs::rename(&tmp, manifest_path(dir)).map_err(|e| io("renaming", e))?;
    fail::fail_point!("manifest-renamed");
    sync_dir(dir)
}

/// Fsyncs a directory so that renames and creations in it are durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    let d = fs::File::open(dir).map_err(|e| Error::io(format!("opening {}", dir.display()), e))?;
    d.sync_all()
        .map_err(|e| Error::io(format!("syncing {}", dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> ManifestState {
        ManifestState {
            tablet_id: 42,
            start_row: Bytes::from_static(b"a"),
            end_row: Bytes::new(),
            flushed_seq: 99,
            next_file_no: 7,
            files: vec![FileEntry {
                family: Bytes::from_static(b"cf"),
                path: "42/000006.sst".into(),
                bound_start: Bytes::new(),
                bound_end: Bytes::from_static(b"m"),
                owned: true,
                size: 1234,
                max_seq: 98,
            }],
        }
    }

    #[test]
    fn store_and_load_roundtrip() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap(), None);
        store(dir.path(), &sample()).unwrap();
        assert_eq!(load(dir.path()).unwrap(), Some(sample()));
        let mut next = sample();
        next.flushed_seq = 150;
        store(dir.path(), &next).unwrap();
        assert_eq!(load(dir.path()).unwrap(), Some(next));
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let enc = sample().encode();
        for i in 0..enc.len() {
            let mut bad = enc.clone();
            bad[i] ^= 0x10;
            assert!(
                ManifestState::decode(&bad, Path::new("m")).is_err(),
                "flip at {i}"
            );
        }
        for n in 0..enc.len() {
            assert!(
                ManifestState::decode(&enc[..n], Path::new("m")).is_err(),
                "truncated to {n}"
            );
        }
    }
}
