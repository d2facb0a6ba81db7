//! Thrift2 scanner calls: openScanner, getScannerRows, closeScanner,
//! getScannerResults.
//!
//! Owns: turning a TScan into a registered scan (TScan.limit enforced here, in rows,
//! also when batchSize splits rows into several results), shaping batches into
//! TResults, and HBase's answers for unknown ids (TIllegalArgument from
//! getScannerRows, nothing from closeScanner).
//! Must not: keep scanner state itself (the shared registry does).

use tabula_storage::tablet::RowResult;
use tabula_thrift::hbase2::{TResult, TScan};

use super::convert::{scan_request, tresult};
use super::errors::{Thrift2Error, Thrift2Result};
use super::Thrift2Handler;
use crate::backend::{BackendError, BackendResult, TableScanner};
use crate::thrift1::scanners::OpenScan;

/// A table scan that stops after `limit` rows.
struct RowLimited {
    inner: Box<dyn TableScanner>,
    remaining: usize,
    /// The row of the last result handed out, while more of it may follow.
    open_row: Option<bytes::Bytes>,
}

impl TableScanner for RowLimited {
    fn next_rows(&mut self, n: usize) -> BackendResult<Vec<RowResult>> {
        if self.remaining == 0 && self.open_row.is_none() {
            return Ok(Vec::new());
        }
        let batch = self.inner.next_rows(n)?;
        let mut out = Vec::with_capacity(batch.len());
        for r in batch {
            let continues = self.open_row.as_ref() == Some(r.row());
            if !continues {
                if self.remaining == 0 {
                    self.open_row = None;
                    break;
                }
                self.remaining -= 1;
            }
            self.open_row = r.partial.then(|| r.row().clone());
            out.push(r);
        }
        Ok(out)
    }
}

fn tresults(rows: Vec<RowResult>) -> Vec<TResult> {
    rows.into_iter()
        .map(|r| {
            let row = r.row().clone();
            tresult(&row, r.cells, r.partial)
        })
        .collect()
}

fn rows_wanted(num_rows: i32) -> usize {
    usize::try_from(num_rows).unwrap_or(0)
}

impl Thrift2Handler {
    fn open_scan(&self, table: &[u8], scan: TScan) -> Thrift2Result<OpenScan> {
        let request = scan_request(scan)?;
        self.check_families(table, &request.spec.read.columns)?;
        let scanner = self.backend.scan(table, request.spec)?;
        let scanner: Box<dyn TableScanner> = match request.limit {
            Some(limit) => Box::new(RowLimited {
                inner: scanner,
                remaining: limit,
                open_row: None,
            }),
            None => scanner,
        };
        Ok(OpenScan::new(scanner, false))
    }

    /// Fails like HBase's scanner open when a selected family is not in the table.
    fn check_families(
        &self,
        table: &[u8],
        columns: &[tabula_storage::ColumnSelector],
    ) -> Thrift2Result<()> {
        let info = self.backend.table(table)?;
        if let Some(missing) = columns
            .iter()
            .map(tabula_storage::ColumnSelector::family)
            .find(|f| !info.families.iter().any(|known| known.name == **f))
        {
            return Err(BackendError::NoSuchFamily {
                table: String::from_utf8_lossy(table).into_owned(),
                family: String::from_utf8_lossy(missing).into_owned(),
            }
            .into());
        }
        Ok(())
    }

    /// openScanner: registers the scan; returns its id.
    pub fn open_scanner(&self, table: &[u8], scan: TScan) -> Thrift2Result<i32> {
        let open = self.open_scan(table, scan)?;
        let connection = if self.options.close_scanners_with_connection {
            crate::server::current_connection()
        } else {
            None
        };
        self.scanners
            .register(open, connection)
            .map_err(|e| Thrift2Error::Invalid(e.to_string()))
    }

    /// getScannerRows: up to `num_rows` results; `[]` once the scan is over.
    pub fn get_scanner_rows(&self, id: i32, num_rows: i32) -> Thrift2Result<Vec<TResult>> {
        let scan = self
            .scanners
            .checkout(id)
            .ok_or(Thrift2Error::InvalidScanner)?;
        let n = rows_wanted(num_rows).min(self.options.max_rows_per_call);
        let rows = scan.lock().next(n);
        self.scanners.touch(id);
        Ok(tresults(rows?))
    }

    /// closeScanner: an unknown or expired id is ignored, as HBase 2.x does.
    pub fn close_scanner(&self, id: i32) -> Thrift2Result<()> {
        if !self.scanners.close(id) {
            tracing::debug!(scanner = id, "closeScanner: no such scanner (ignored)");
        }
        Ok(())
    }

    /// getScannerResults: opens the scan, returns its first `num_rows` results and
    /// closes it.
    pub fn get_scanner_results(
        &self,
        table: &[u8],
        scan: TScan,
        num_rows: i32,
    ) -> Thrift2Result<Vec<TResult>> {
        let mut open = self.open_scan(table, scan)?;
        let wanted = rows_wanted(num_rows);
        let mut out = Vec::new();
        while out.len() < wanted {
            let rows = open.next(wanted - out.len())?;
            if rows.is_empty() {
                break;
            }
            out.extend(rows);
        }
        Ok(tresults(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    struct Fixed(Vec<RowResult>);

    impl TableScanner for Fixed {
        fn next_rows(&mut self, n: usize) -> BackendResult<Vec<RowResult>> {
            let k = n.min(self.0.len());
            Ok(self.0.drain(..k).collect())
        }
    }

    fn result(row: &'static str, partial: bool) -> RowResult {
        RowResult {
            cells: vec![tabula_storage::Cell {
                row: Bytes::from_static(row.as_bytes()),
                family: Bytes::from_static(b"f"),
                qualifier: Bytes::new(),
                timestamp: 1,
                value: Bytes::new(),
            }],
            partial,
        }
    }

    #[test]
    fn the_limit_counts_rows_not_partial_results() {
        let inner = Fixed(vec![
            result("a", true),
            result("a", false),
            result("b", true),
            result("b", false),
            result("c", false),
        ]);
        let mut s = RowLimited {
            inner: Box::new(inner),
            remaining: 2,
            open_row: None,
        };
        let got: Vec<_> = s
            .next_rows(10)
            .unwrap()
            .into_iter()
            .map(|r| r.row().clone())
            .collect();
        assert_eq!(got, vec!["a", "a", "b", "b"]);
        assert!(s.next_rows(10).unwrap().is_empty());
    }
}
