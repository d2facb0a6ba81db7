//! The embedded lock service's durable state: one file, `STATE`, in the service's
//! directory, replaced atomically on every committed change.
//!
//! Owns: the byte format of `STATE`, its validation, and the write protocol. Must not:
//! hold sessions or ephemeral files (they do not survive a restart by design).
//!
//! # Write protocol
//! The whole state is encoded, written to `STATE.tmp`, fsynced, renamed over `STATE`,
//! and the directory is fsynced; only then does the call that caused it return. A
//! crash leaves either the old or the new `STATE`; a leftover `STATE.tmp` is never
//! read and is removed at open.
//!
//! # Format (version 1; integers big-endian)
//! ```text
//! offset  size  field
//! 0       4     magic "TBLS"
//! 4       4     u32 format version = 1
//! 8       8     u64 boot epoch: opens so far (session ids embed it)
//! 16      8     u64 revision: the last revision issued
//! 24      4     u32 file count N
//! 28      ...   N files, strictly ascending by path:
//!                 u32 path length P (1 ..= MAX_PATH_LEN), P bytes UTF-8 path
//!                 u32 value length V (<= MAX_WRITE_BYTES), V bytes value
//!                 u64 create revision, u64 mod revision (1 <= create <= mod <= revision)
//! end-4   4     u32 CRC32C of every byte before it
//! ```
//! Only persistent files are stored. Anything that breaks these rules (wrong magic,
//! unknown version, CRC mismatch, truncation, trailing bytes, unordered paths,
//! impossible revisions) makes open fail with [`LockError::Corrupt`]; a damaged state
//! is never read as an empty one.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tabula_storage::dir_lock::DirLock;

use super::error::{LockError, LockResult};
use super::types::{validate_path, Versioned, MAX_PATH_LEN, MAX_WRITE_BYTES};

const MAGIC: &[u8; 4] = b"TBLS";
const FORMAT_VERSION: u32 = 1;
/// Name of the state file inside the service's directory.
pub const STATE_FILE: &str = "STATE";
const STATE_TMP: &str = "STATE.tmp";
const HEADER_LEN: usize = 4 + 4 + 8 + 8 + 4;
const CRC_LEN: usize = 4;

/// What `STATE` holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct PersistedState {
    pub(crate) boot_epoch: u64,
    pub(crate) revision: u64,
    pub(crate) files: BTreeMap<String, Versioned>,
}

/// Encodes a state. `files` must be persistent files in ascending path order.
pub(crate) fn encode<'a>(
    boot_epoch: u64,
    revision: u64,
    files: impl Iterator<Item = (&'a str, &'a Versioned)>,
) -> LockResult<Vec<u8>> {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_be_bytes());
    out.extend_from_slice(&boot_epoch.to_be_bytes());
    out.extend_from_slice(&revision.to_be_bytes());
    let count_at = out.len();
    out.extend_from_slice(&0u32.to_be_bytes());
    let mut count = 0u32;
    for (path, file) in files {
        put_len_prefixed(&mut out, path.as_bytes())?;
        put_len_prefixed(&mut out, &file.value)?;
        out.extend_from_slice(&file.create_revision.to_be_bytes());
        out.extend_from_slice(&file.revision.to_be_bytes());
        count = count
            .checked_add(1)
            .ok_or_else(|| LockError::InvalidTxn("too many files to persist".into()))?;
    }
    if let Some(slot) = out.get_mut(count_at..count_at + 4) {
        slot.copy_from_slice(&count.to_be_bytes());
    }
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    Ok(out)
}

fn put_len_prefixed(out: &mut Vec<u8>, bytes: &[u8]) -> LockResult<()> {
    let len = u32::try_from(bytes.len()).map_err(|_| LockError::TooLarge {
        size: bytes.len(),
        limit: MAX_WRITE_BYTES,
    })?;
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(bytes);
    Ok(())
}

/// Decodes and validates a state read from `origin` (named in errors).
pub(crate) fn decode(bytes: &[u8], origin: &Path) -> LockResult<PersistedState> {
    let corrupt = |detail: String| LockError::Corrupt {
        path: origin.to_path_buf(),
        detail,
    };
    if bytes.len() < HEADER_LEN + CRC_LEN {
        return Err(corrupt(format!(
            "{} bytes is shorter than the smallest state",
            bytes.len()
        )));
    }
    let body_len = bytes.len() - CRC_LEN;
    let (body, crc_bytes) = bytes.split_at(body_len);
    if body.get(..4) != Some(MAGIC.as_slice()) {
        return Err(corrupt("bad magic: not a lock service state file".into()));
    }
    let stored_crc = u32::from_be_bytes(array(crc_bytes).ok_or_else(|| corrupt("no crc".into()))?);
    let actual_crc = crc32c::crc32c(body);
    if stored_crc != actual_crc {
        return Err(corrupt(format!(
            "checksum mismatch (stored {stored_crc:#010x}, computed {actual_crc:#010x})"
        )));
    }

    let mut reader = Reader { buf: body, pos: 4 };
    let truncated = |what: &str| corrupt(format!("truncated while reading {what}"));
    let version = reader.u32().ok_or_else(|| truncated("the version"))?;
    if version != FORMAT_VERSION {
        return Err(corrupt(format!("unsupported format version {version}")));
    }
    let boot_epoch = reader.u64().ok_or_else(|| truncated("the boot epoch"))?;
    let revision = reader.u64().ok_or_else(|| truncated("the revision"))?;
    let count = reader.u32().ok_or_else(|| truncated("the file count"))?;

    let mut files = BTreeMap::new();
    let mut previous: Option<String> = None;
    for index in 0..count {
        let path_bytes = reader
            .len_prefixed(MAX_PATH_LEN)
            .ok_or_else(|| corrupt(format!("file {index}: bad or truncated path")))?;
        let path = String::from_utf8(path_bytes.to_vec())
            .map_err(|_| corrupt(format!("file {index}: path is not UTF-8")))?;
        validate_path(&path).map_err(|e| corrupt(format!("file {index}: {e}")))?;
        let value = reader
            .len_prefixed(MAX_WRITE_BYTES)
            .ok_or_else(|| corrupt(format!("file {path}: bad or truncated value")))?
            .to_vec();
        let create_revision = reader.u64().ok_or_else(|| truncated("a create revision"))?;
        let mod_revision = reader.u64().ok_or_else(|| truncated("a mod revision"))?;
        if create_revision == 0 || create_revision > mod_revision || mod_revision > revision {
            return Err(corrupt(format!(
                "file {path}: impossible revisions (create {create_revision}, mod \
                 {mod_revision}, store {revision})"
            )));
        }
        if previous
            .as_deref()
            .is_some_and(|prev| prev >= path.as_str())
        {
            return Err(corrupt(format!("file {path}: paths out of order")));
        }
        previous = Some(path.clone());
        files.insert(
            path,
            Versioned {
                value,
                revision: mod_revision,
                create_revision,
                owner: None,
            },
        );
    }
    if reader.pos != body.len() {
        return Err(corrupt(format!(
            "{} unexpected bytes after the last file",
            body.len().saturating_sub(reader.pos)
        )));
    }
    Ok(PersistedState {
        boot_epoch,
        revision,
        files,
    })
}

fn array<const N: usize>(bytes: &[u8]) -> Option<[u8; N]> {
    bytes.try_into().ok()
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let slice = self.buf.get(self.pos..end)?;
        self.pos = end;
        Some(slice)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).and_then(array).map(u32::from_be_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.take(8).and_then(array).map(u64::from_be_bytes)
    }

    fn len_prefixed(&mut self, max: usize) -> Option<&'a [u8]> {
        let len = usize::try_from(self.u32()?).ok()?;
        if len > max {
            return None;
        }
        self.take(len)
    }
}

/// The directory holding `STATE`.
#[derive(Debug)]
pub(crate) struct StateDir {
    dir: PathBuf,
    /// One service per directory: a second process must not write `STATE`.
    _lock: DirLock,
}

impl StateDir {
    /// Opens (creating if needed) `dir`, removes a leftover temporary file, and reads
    /// `STATE` if there is one.
    pub(crate) fn open(dir: &Path) -> LockResult<(Self, Option<PersistedState>)> {
        fs::create_dir_all(dir)
            .map_err(|e| LockError::io(format!("creating {}", dir.display()), e))?;
        let lock = DirLock::acquire(dir).map_err(|e| match e {
            tabula_storage::Error::DirectoryInUse { path } => LockError::InUse { path },
            other => LockError::io(
                format!("locking {}", dir.display()),
                io::Error::other(other.to_string()),
            ),
        })?;
        let state_dir = Self {
            dir: dir.to_path_buf(),
            _lock: lock,
        };
        let tmp = state_dir.dir.join(STATE_TMP);
        match fs::remove_file(&tmp) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(LockError::io(format!("removing {}", tmp.display()), e)),
        }
        let path = state_dir.state_path();
        let state = match fs::read(&path) {
            Ok(bytes) => Some(decode(&bytes, &path)?),
            Err(e) if e.kind() == io::ErrorKind::NotFound => None,
            Err(e) => return Err(LockError::io(format!("reading {}", path.display()), e)),
        };
        Ok((state_dir, state))
    }

    /// The path of `STATE`.
    pub(crate) fn state_path(&self) -> PathBuf {
        self.dir.join(STATE_FILE)
    }

    /// Durably replaces `STATE` with `bytes` (see the write protocol above).
    pub(crate) fn write(&self, bytes: &[u8]) -> LockResult<()> {
        let tmp = self.dir.join(STATE_TMP);
        let path = self.state_path();
        let written = File::create(&tmp)
            .and_then(|mut file| {
                file.write_all(bytes)?;
                file.sync_all()
            })
            .map_err(|e| LockError::io(format!("writing {}", tmp.display()), e));
        written?;
        fs::rename(&tmp, &path).map_err(|e| {
            LockError::io(
                format!("renaming {} to {}", tmp.display(), path.display()),
                e,
            )
        })?;
        File::open(&self.dir)
            .and_then(|dir| dir.sync_all())
            .map_err(|e| LockError::io(format!("syncing directory {}", self.dir.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PersistedState {
        let mut files = BTreeMap::new();
        for (path, value, create, modified) in
            [("/root", &b"rs1:9000"[..], 2, 5), ("/tables/t1", b"", 3, 3)]
        {
            files.insert(
                path.to_string(),
                Versioned {
                    value: value.to_vec(),
                    revision: modified,
                    create_revision: create,
                    owner: None,
                },
            );
        }
        PersistedState {
            boot_epoch: 4,
            revision: 9,
            files,
        }
    }

    fn encoded(state: &PersistedState) -> Vec<u8> {
        encode(
            state.boot_epoch,
            state.revision,
            state.files.iter().map(|(p, f)| (p.as_str(), f)),
        )
        .unwrap()
    }

    fn reseal(bytes: &mut Vec<u8>) {
        let body_len = bytes.len() - CRC_LEN;
        let crc = crc32c::crc32c(&bytes[..body_len]);
        bytes.truncate(body_len);
        bytes.extend_from_slice(&crc.to_be_bytes());
    }

    #[test]
    fn round_trips() {
        let state = sample();
        let bytes = encoded(&state);
        assert_eq!(decode(&bytes, Path::new("STATE")).unwrap(), state);
        let empty = PersistedState::default();
        assert_eq!(decode(&encoded(&empty), Path::new("STATE")).unwrap(), empty);
    }

    #[test]
    fn every_flipped_byte_is_detected() {
        let bytes = encoded(&sample());
        for index in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[index] ^= 0x40;
            assert!(
                matches!(
                    decode(&damaged, Path::new("STATE")),
                    Err(LockError::Corrupt { .. })
                ),
                "flip at byte {index} went unnoticed"
            );
        }
    }

    #[test]
    fn every_truncation_is_detected() {
        let bytes = encoded(&sample());
        for len in 0..bytes.len() {
            assert!(
                matches!(
                    decode(&bytes[..len], Path::new("STATE")),
                    Err(LockError::Corrupt { .. })
                ),
                "truncation to {len} bytes went unnoticed"
            );
        }
    }

    #[test]
    fn well_sealed_but_inconsistent_states_are_rejected() {
        // A mod revision above the store's revision.
        let mut state = sample();
        state.revision = 4;
        let mut bytes = encoded(&state);
        reseal(&mut bytes);
        assert!(matches!(
            decode(&bytes, Path::new("STATE")),
            Err(LockError::Corrupt { .. })
        ));

        // An unknown version.
        let mut bytes = encoded(&sample());
        bytes[7] = 2;
        reseal(&mut bytes);
        let err = decode(&bytes, Path::new("STATE")).unwrap_err();
        assert!(err.to_string().contains("version"), "{err}");

        // Trailing bytes inside the sealed body.
        let mut bytes = encoded(&sample());
        let body_len = bytes.len() - CRC_LEN;
        bytes.insert(body_len, 0);
        reseal(&mut bytes);
        assert!(matches!(
            decode(&bytes, Path::new("STATE")),
            Err(LockError::Corrupt { .. })
        ));
    }

    #[test]
    fn state_dir_writes_atomically_and_ignores_leftover_tmp() {
        let dir = tempfile::tempdir().unwrap();
        let (state_dir, existing) = StateDir::open(dir.path()).unwrap();
        assert!(existing.is_none());
        state_dir.write(&encoded(&sample())).unwrap();
        fs::write(dir.path().join(STATE_TMP), b"half written").unwrap();
        // A second service on the directory is refused while the first holds it.
        assert!(matches!(
            StateDir::open(dir.path()),
            Err(LockError::InUse { .. })
        ));
        drop(state_dir);
        let (_, reread) = StateDir::open(dir.path()).unwrap();
        assert_eq!(reread, Some(sample()));
        assert!(!dir.path().join(STATE_TMP).exists());
    }
}
