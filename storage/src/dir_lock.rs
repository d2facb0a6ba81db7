//! One process at a time in a directory: an exclusive advisory lock (`flock`) on
//! the directory's `LOCK` file, as LevelDB's LOCK file. The kernel releases it when
//! its holder exits, however it exits (kill -9 included), so a crash never leaves
//! a directory locked.
//!
//! Owns: [`DirLock`] (exclusive or shared) and the `LOCK` file's name.
//! Must not: decide which directories need one (the commit log locks its own;
//! recovering another server's log takes that log's lock while it reads; the
//! engine locks its tablets directory, shared when servers share it).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The lock file's name inside a locked directory.
pub const LOCK_FILE: &str = "LOCK";
/// Linux's ENOLCK: the file system (an NFS mount without a lock manager) keeps no
/// locks.
const NO_LOCKS_AVAILABLE: i32 = 37;

/// An exclusive lock on a directory, held until dropped.
#[derive(Debug)]
pub struct DirLock {
    /// Holds the lock; dropping the `DirLock` unlocks it.
    file: File,
    path: PathBuf,
}

impl Drop for DirLock {
    /// Unlocks explicitly rather than only closing: a flock belongs to the open
    /// file description, and a process forked meanwhile (another thread spawning
    /// a child) holds a duplicate of it until its `exec`, which would keep the
    /// directory locked after this holder let go. Unlocking releases it for every
    /// duplicate at once.
    fn drop(&mut self) {
        if let Err(e) = self.file.unlock() {
            tracing::warn!(path = %self.path.display(), error = %e, "could not unlock");
        }
    }
}

impl DirLock {
    /// Takes the lock of `dir` (which must exist), or fails at once with
    /// [`Error::DirectoryInUse`] when another process (or another open of the same
    /// directory in this one) holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        Self::take(dir, |file| file.try_lock())
    }

    fn take(
        dir: &Path,
        lock: impl FnOnce(&File) -> std::result::Result<(), TryLockError>,
    ) -> Result<DirLock> {
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| Error::io(format!("opening {}", path.display()), e))?;
        match lock(&file) {
            Ok(()) => Ok(DirLock { file, path }),
            Err(TryLockError::WouldBlock) => Err(Error::DirectoryInUse {
                path: dir.to_path_buf(),
            }),
            // A file system without locks (some network ones): go on unguarded,
            // as before there were locks, and say so.
            Err(TryLockError::Error(e))
                if e.kind() == std::io::ErrorKind::Unsupported
                    || e.raw_os_error() == Some(NO_LOCKS_AVAILABLE) =>
            {
                tracing::warn!(
                    dir = %dir.display(),
                    error = %e,
                    "this file system does not lock files: nothing stops a second process from using the directory"
                );
                Ok(DirLock { file, path })
            }
            Err(TryLockError::Error(e)) => Err(Error::io(format!("locking {}", path.display()), e)),
        }
    }

    /// Takes a shared lock of `dir`: any number of shared holders, refused while
    /// an exclusive one holds it (and an exclusive one is refused meanwhile).
    pub fn acquire_shared(dir: &Path) -> Result<DirLock> {
        Self::take(dir, |file| file.try_lock_shared())
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_directory_is_refused_until_its_lock_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let first = DirLock::acquire(dir.path()).expect("first lock");
        assert!(first.path().ends_with(LOCK_FILE));
        match DirLock::acquire(dir.path()) {
            Err(Error::DirectoryInUse { path }) => assert_eq!(path, dir.path()),
            other => panic!("a second lock must be refused: {other:?}"),
        }
        drop(first);
        DirLock::acquire(dir.path()).expect("free again once dropped");
    }

    #[test]
    fn shared_holders_coexist_and_exclude_an_exclusive_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let a = DirLock::acquire_shared(dir.path()).expect("first shared");
        let b = DirLock::acquire_shared(dir.path()).expect("second shared");
        assert!(matches!(
            DirLock::acquire(dir.path()),
            Err(Error::DirectoryInUse { .. })
        ));
        drop(a);
        drop(b);
        let exclusive = DirLock::acquire(dir.path()).expect("exclusive once free");
        assert!(matches!(
            DirLock::acquire_shared(dir.path()),
            Err(Error::DirectoryInUse { .. })
        ));
        drop(exclusive);
    }

    #[test]
    fn dropping_the_lock_frees_the_directory_while_a_duplicate_descriptor_lives() {
        // What a child forked by another thread holds until its exec.
        let dir = tempfile::tempdir().expect("tempdir");
        let first = DirLock::acquire(dir.path()).expect("first lock");
        let duplicate = first.file.try_clone().expect("dup");
        drop(first);
        let again = DirLock::acquire(dir.path()).expect("free once the holder drops it");
        drop(again);
        drop(duplicate);
    }

    #[test]
    fn a_missing_directory_is_an_io_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            DirLock::acquire(&dir.path().join("absent")),
            Err(Error::Io { .. })
        ));
    }
}
