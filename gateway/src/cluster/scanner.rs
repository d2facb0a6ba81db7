//! Scans that span the tablets of a table.
//!
//! Owns: [`ClusterScanner`], which walks a table's tablets in row order (or reverse),
//! holding one regionserver scanner at a time, and resumes after the row it last
//! returned if a tablet moves or splits, its server dies, or its scanner lease
//! lapses mid-scan.
//! Must not: filter or merge data itself; every row comes from a regionserver.

use std::sync::Arc;

use bytes::Bytes;
use tabula_coordinator::catalog::TabletLocation;
use tabula_regionserver::{RsError, ScanSpec, TabletService};
use tabula_storage::tablet::RowResult;

use super::retry::{self, Backoff, Resend};
use super::router::Router;
use super::rs_error;
use crate::backend::{BackendResult, TableScanner};

/// Times in a row a scan reopens its tablet after the regionserver forgot its
/// scanner (lease lapsed) before giving up.
const MAX_REOPENS: usize = 10;

struct Open {
    loc: Arc<TabletLocation>,
    service: Arc<dyn TabletService>,
    scanner: u64,
}

/// A scan across a table's tablets.
pub struct ClusterScanner {
    router: Arc<Router>,
    table: Bytes,
    spec: ScanSpec,
    open: Option<Open>,
    /// Where the next tablet scan starts: forward, the row to locate; reverse, the
    /// end row of the next (lower) tablet. `None` = the first tablet.
    position: Option<Bytes>,
    /// The row of the last whole result returned (resume point).
    last_row: Option<Bytes>,
    /// The open scanner restarted at `last_row`, which must be skipped once.
    resumed: bool,
    done: bool,
}

impl ClusterScanner {
    /// A scan of `table` (canonical name).
    pub fn new(router: Arc<Router>, table: Bytes, spec: ScanSpec) -> Self {
        ClusterScanner {
            router,
            table,
            spec,
            open: None,
            position: None,
            last_row: None,
            resumed: false,
            done: false,
        }
    }

    fn locate_next(&self) -> BackendResult<Arc<TabletLocation>> {
        match (&self.position, self.spec.reverse) {
            (None, false) => self.router.locate(&self.table, &self.spec.start_row),
            (Some(row), false) => self.router.locate(&self.table, row),
            (None, true) => {
                if self.spec.start_row.is_empty() {
                    self.router.locate_ending_at(&self.table, &[])
                } else {
                    self.router.locate(&self.table, &self.spec.start_row)
                }
            }
            (Some(end), true) => self.router.locate_ending_at(&self.table, end),
        }
    }

    /// Opens a regionserver scanner on the next tablet, locating it again while it
    /// moves (see [`retry`]).
    fn open_next(&mut self) -> BackendResult<()> {
        let mut backoff = Backoff::new();
        loop {
            let loc = match self.locate_next() {
                Ok(loc) => loc,
                Err(e) if retry::lookup_may_pass(&e) && backoff.wait() => continue,
                Err(e) => return Err(e),
            };
            let service = self.router.server(&loc.server)?;
            let mut spec = self.spec.clone();
            // Resume after the last row returned, if any (it is skipped on arrival).
            if let Some(last) = &self.last_row {
                spec.start_row = last.clone();
            } else if let (Some(row), false) = (&self.position, self.spec.reverse) {
                if row.as_ref() > spec.start_row.as_ref() {
                    spec.start_row = row.clone();
                }
            }
            match service.open_scanner(loc.tablet_id, &spec) {
                Ok(scanner) => {
                    self.open = Some(Open {
                        loc,
                        service,
                        scanner,
                    });
                    return Ok(());
                }
                Err(e) if retry::resend(&e, Resend::Safe) => {
                    self.router.invalidate(&self.table, &loc);
                    if !backoff.wait() {
                        return Err(rs_error(&self.table, e));
                    }
                }
                Err(e) => return Err(rs_error(&self.table, e)),
            }
        }
    }

    /// Moves past the tablet just finished; false when the scan is over.
    fn advance(&mut self, loc: &TabletLocation) -> bool {
        if self.spec.reverse {
            if loc.start_row.is_empty()
                || (!self.spec.stop_row.is_empty() && loc.start_row <= self.spec.stop_row)
            {
                return false;
            }
            self.position = Some(loc.start_row.clone());
        } else {
            if loc.end_row.is_empty()
                || (!self.spec.stop_row.is_empty() && loc.end_row >= self.spec.stop_row)
            {
                return false;
            }
            self.position = Some(loc.end_row.clone());
        }
        // A new tablet starts from its own beginning, not from the resume row.
        self.last_row = None;
        true
    }

    fn close_open(&mut self) {
        if let Some(o) = self.open.take() {
            o.service.close_scanner(o.scanner);
        }
    }
}

impl TableScanner for ClusterScanner {
    fn next_rows(&mut self, n: usize) -> BackendResult<Vec<RowResult>> {
        let mut out: Vec<RowResult> = Vec::new();
        let n = n.max(1);
        let mut reopens = 0;
        while out.len() < n && !self.done {
            if self.open.is_none() {
                self.open_next()?;
            }
            let Some(open) = self.open.as_ref() else {
                break;
            };
            let (service, scanner, loc) =
                (Arc::clone(&open.service), open.scanner, open.loc.clone());
            match service.scanner_next(scanner, n - out.len()) {
                Ok(batch) => {
                    for r in batch.rows {
                        if std::mem::take(&mut self.resumed)
                            && self.last_row.as_ref() == Some(r.row())
                        {
                            // A resumed scan starts at the row already returned.
                            continue;
                        }
                        if !r.partial {
                            self.last_row = Some(r.row().clone());
                        }
                        out.push(r);
                    }
                    if batch.exhausted {
                        self.close_open();
                        if batch.ended_by_filter || !self.advance(&loc) {
                            self.done = true;
                        }
                    }
                }
                // A scan is a read: it resumes after its last row wherever the
                // tablet is now (reopening waits while the tablet moves).
                Err(e)
                    if (matches!(e, RsError::UnknownScanner { .. })
                        || retry::resend(&e, Resend::Safe))
                        && reopens < MAX_REOPENS =>
                {
                    reopens += 1;
                    self.open = None;
                    self.resumed = self.last_row.is_some();
                    self.router.invalidate(&self.table, &loc);
                }
                Err(e) => {
                    self.close_open();
                    return Err(rs_error(&self.table, e));
                }
            }
        }
        Ok(out)
    }
}

impl Drop for ClusterScanner {
    fn drop(&mut self) {
        self.close_open();
    }
}
