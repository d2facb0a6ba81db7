//! A get's cursor over one file that reads the row through the scan cache.
//!
//! Owns: [`CachedRowCursor`], which serves seeks inside its row from the row's
//! entries in the [`crate::scan_cache::ScanCache`] (loading them from the file at
//! the first such seek on a miss) and everything else from the file's own cursor.
//! It reads nothing before its first seek, so a get that stops at a newer source
//! never loads an older file's row.
//! Must not: be used for files read through row bounds or for scans (the tablet's
//! get path chooses where it applies).

use std::sync::Arc;

use super::TabletFile;
use crate::error::Result;
use crate::iter::KvIter;
use crate::merge::VecIter;
use crate::scan_cache::{CachedRow, ScanCache};

/// Which cursor answers.
enum Serving {
    /// Not positioned yet.
    Nothing,
    /// The row's cached entries.
    Cache,
    /// The file's cursor.
    File,
}

/// A cursor over one file for a get of one row; see the module doc.
pub(crate) struct CachedRowCursor {
    cache: Arc<ScanCache>,
    file: Arc<TabletFile>,
    /// The row's internal start key: every key of the row begins with it.
    row_key: Vec<u8>,
    /// The row's entries once found in the cache or loaded.
    entries: Option<VecIter>,
    /// The cache holds the row as too large: every seek goes to the file.
    too_large: bool,
    /// The file's cursor, made when first needed.
    cursor: Option<Box<dyn KvIter>>,
    serving: Serving,
}

impl CachedRowCursor {
    /// A cursor for `row_key` in `file`, starting from `cached` when the cache
    /// already had the row.
    pub(crate) fn new(
        cache: Arc<ScanCache>,
        file: Arc<TabletFile>,
        row_key: &[u8],
        cached: Option<CachedRow>,
    ) -> Self {
        let too_large = cached == Some(CachedRow::TooLarge);
        let entries = match cached {
            Some(CachedRow::Entries(e)) => Some(VecIter::new(e)),
            _ => None,
        };
        CachedRowCursor {
            cache,
            file,
            row_key: row_key.to_vec(),
            entries,
            too_large,
            cursor: None,
            serving: Serving::Nothing,
        }
    }

    fn file_cursor(&mut self) -> &mut Box<dyn KvIter> {
        self.cursor.get_or_insert_with(|| self.file.cursor(true))
    }

    /// The row's entries, loading them on the first call after a miss. `None`
    /// when the row is too large to cache.
    fn row_entries(&mut self) -> Result<Option<&mut VecIter>> {
        if self.entries.is_none() && !self.too_large {
            let file_id = self.file.reader.file_id();
            let cache = Arc::clone(&self.cache);
            let row_key = std::mem::take(&mut self.row_key);
            let loaded = cache.load(file_id, &row_key, self.file_cursor().as_mut());
            self.row_key = row_key;
            match loaded? {
                Some(CachedRow::Entries(e)) => self.entries = Some(VecIter::new(e)),
                // Too large, or the cache is off.
                _ => self.too_large = true,
            }
        }
        Ok(self.entries.as_mut())
    }

    fn current(&self) -> Option<&dyn KvIter> {
        match self.serving {
            Serving::Nothing => None,
            Serving::Cache => self.entries.as_ref().map(|e| e as &dyn KvIter),
            Serving::File => self.cursor.as_deref(),
        }
    }
}

impl KvIter for CachedRowCursor {
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        if target.starts_with(&self.row_key) {
            if let Some(entries) = self.row_entries()? {
                entries.seek(target)?;
                self.serving = Serving::Cache;
                return Ok(());
            }
        }
        self.serving = Serving::File;
        self.file_cursor().seek(target)
    }

    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.serving = Serving::File;
        self.file_cursor().seek_for_prev(target)
    }

    fn next(&mut self) -> Result<()> {
        match self.serving {
            Serving::Nothing => Ok(()),
            Serving::Cache => match self.entries.as_mut() {
                Some(e) => e.next(),
                None => Ok(()),
            },
            Serving::File => match self.cursor.as_mut() {
                Some(c) => c.next(),
                None => Ok(()),
            },
        }
    }

    fn valid(&self) -> bool {
        self.current().is_some_and(|c| c.valid())
    }

    fn key(&self) -> &[u8] {
        self.current().map_or(&[], |c| c.key())
    }

    fn value(&self) -> &[u8] {
        self.current().map_or(&[], |c| c.value())
    }

    fn value_bytes(&self) -> bytes::Bytes {
        self.current().map(|c| c.value_bytes()).unwrap_or_default()
    }
}
