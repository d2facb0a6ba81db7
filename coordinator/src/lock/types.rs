//! The values the lock service speaks in: session ids, versioned files, lock tokens,
//! and the naming and size rules every implementation enforces.
//!
//! Owns: plain data types and path validation. Must not: hold service state.

use std::fmt;
use std::time::Duration;

use super::error::{LockError, LockResult};

/// Longest path, in bytes.
pub const MAX_PATH_LEN: usize = 1024;
/// Most bytes (paths plus values) one transaction may write. etcd's default request
/// limit is 1.5 MiB, so this leaves room for framing.
pub const MAX_WRITE_BYTES: usize = 1 << 20;
/// Most comparisons, and most operations, in one transaction (etcd's default
/// `--max-txn-ops`).
pub const MAX_TXN_OPS: usize = 128;
/// Longest session lifetime a caller may ask for. A session is a failure detector;
/// a longer lease would leave a dead server's locks in place for too long.
pub const MAX_SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// Identifies a session (an etcd lease). Never 0; never reused by one store, even
/// across restarts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(pub u64);

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)
    }
}

/// A file as stored, with its revisions.
///
/// Revisions come from one counter for the whole store: every committed write
/// (a transaction, a session's expiry) takes the next value, and all files it
/// changes share it. Revisions are at least 1 and never go back, across restarts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Versioned {
    pub value: Vec<u8>,
    /// Revision of the last write of this file (etcd `mod_revision`).
    pub revision: u64,
    /// Revision at which the file was created, since it last did not exist
    /// (etcd `create_revision`).
    pub create_revision: u64,
    /// The session owning the file when it is ephemeral (a lock or a
    /// [`put_ephemeral`](super::LockService::put_ephemeral)); `None` when persistent.
    pub owner: Option<SessionId>,
}

/// The files under a prefix, read at one revision.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Listing {
    /// The store's revision when the listing was taken: a watch opened before the
    /// list has already been reflected here for every event at or below it.
    pub revision: u64,
    /// Files sorted by path.
    pub files: Vec<(String, Versioned)>,
}

/// Proof of holding a lock: the lock file's path, its holder, and the lock file's
/// revision (that of the write that took the lock), which is the fencing token. Writes
/// that must only happen while the lock is held compare this revision in the same
/// transaction ([`Txn::fenced_by`](super::Txn::fenced_by)). Any later write or delete of
/// the lock file, or the session's end, invalidates the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockToken {
    pub path: String,
    pub session: SessionId,
    pub revision: u64,
}

/// Who holds a lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockHolder {
    pub session: SessionId,
    /// What the holder wrote when it took the lock (e.g. its address).
    pub info: Vec<u8>,
    /// The holder's fencing token.
    pub revision: u64,
}

/// What a single-file compare-and-write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CasOutcome {
    /// The write happened at this revision.
    Applied { revision: u64 },
    /// The file was not as expected; nothing was written. `current` is the file as it
    /// was when compared (`None` = absent).
    Conflict { current: Option<Versioned> },
}

/// Checks a file path: it starts with `/`, is at most [`MAX_PATH_LEN`] bytes and
/// contains no NUL.
pub fn validate_path(path: &str) -> LockResult<()> {
    if !path.starts_with('/') {
        return Err(invalid(path, "a path starts with '/'"));
    }
    validate_prefix(path)
}

/// Checks a list or watch prefix: at most [`MAX_PATH_LEN`] bytes, no NUL. The empty
/// prefix means every file.
pub fn validate_prefix(prefix: &str) -> LockResult<()> {
    if prefix.len() > MAX_PATH_LEN {
        return Err(invalid(prefix, "longer than MAX_PATH_LEN bytes"));
    }
    if prefix.contains('\0') {
        return Err(invalid(prefix, "contains a NUL byte"));
    }
    Ok(())
}

/// Checks a requested session lifetime.
pub fn validate_ttl(ttl: Duration) -> LockResult<()> {
    if ttl.is_zero() {
        return Err(LockError::InvalidTtl {
            ttl,
            reason: "a session needs a positive lifetime",
        });
    }
    if ttl > MAX_SESSION_TTL {
        return Err(LockError::InvalidTtl {
            ttl,
            reason: "longer than MAX_SESSION_TTL",
        });
    }
    Ok(())
}

fn invalid(path: &str, reason: &'static str) -> LockError {
    let shown: String = path.chars().take(80).collect();
    LockError::InvalidPath {
        path: shown,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_must_be_absolute_short_and_nul_free() {
        assert!(validate_path("/servers/rs1").is_ok());
        assert!(validate_path("/").is_ok());
        assert!(matches!(
            validate_path("servers"),
            Err(LockError::InvalidPath { .. })
        ));
        assert!(matches!(
            validate_path(""),
            Err(LockError::InvalidPath { .. })
        ));
        assert!(matches!(
            validate_path("/a\0b"),
            Err(LockError::InvalidPath { .. })
        ));
        let long = format!("/{}", "x".repeat(MAX_PATH_LEN));
        assert!(matches!(
            validate_path(&long),
            Err(LockError::InvalidPath { .. })
        ));
    }

    #[test]
    fn prefixes_may_be_empty_or_relative() {
        assert!(validate_prefix("").is_ok());
        assert!(validate_prefix("/servers/").is_ok());
        assert!(validate_prefix("x\0").is_err());
    }

    #[test]
    fn ttl_bounds() {
        assert!(validate_ttl(Duration::from_millis(1)).is_ok());
        assert!(validate_ttl(MAX_SESSION_TTL).is_ok());
        assert!(validate_ttl(Duration::ZERO).is_err());
        assert!(validate_ttl(MAX_SESSION_TTL + Duration::from_secs(1)).is_err());
    }
}
