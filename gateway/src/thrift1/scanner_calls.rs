//! Thrift1 scanner calls: scannerOpen, scannerOpenWithStop, scannerOpenWithPrefix,
//! scannerOpenTs, scannerOpenWithStopTs, scannerOpenWithScan, scannerGet,
//! scannerGetList, scannerClose.
//!
//! Owns: turning each open call into a [`ScanSpec`] (filter strings validated up
//! front, so a bad one fails the open with INTERNAL_ERROR naming the problem),
//! registering the scan under an id, and shaping batches into TRowResults.
//! Must not: keep scanner state itself (the registry in `scanners` does).

use bytes::Bytes;
use tabula_regionserver::filter::{parse_filter, Arg, FilterCall, FilterExpr};
use tabula_regionserver::{ReadSpec, ScanSpec};
use tabula_storage::{ColumnSelector, TimeRange};
use tabula_thrift::hbase::{TRowResult, TScan};

use super::columns::selectors;
use super::convert::{row_result, sort_like_hbase};
use super::errors::{Thrift1Error, Thrift1Result};
use super::scanners::{OpenScan, ScannerId};
use super::{as_of, Thrift1Handler};
use crate::backend::BackendError;

/// `WHILE PrefixFilter('<prefix>')` as a filter string (quotes doubled), what
/// scannerOpenWithPrefix runs.
pub fn prefix_filter_string(prefix: &[u8]) -> Bytes {
    let call = FilterCall::new(
        Bytes::from_static(b"PrefixFilter"),
        vec![Arg::Quoted(Bytes::copy_from_slice(prefix))],
    );
    Bytes::from(FilterExpr::While(Box::new(FilterExpr::Call(call))).to_filter_string())
}

/// What an open call asks for, before it becomes a [`ScanSpec`].
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    pub start_row: Vec<u8>,
    pub stop_row: Vec<u8>,
    pub columns: Vec<Vec<u8>>,
    /// `[0, ts)` when set.
    pub timestamp: Option<i64>,
    pub filter: Option<Vec<u8>>,
    /// Cells per result (0 = whole rows).
    pub batch: u32,
    pub reversed: bool,
    pub sort_columns: bool,
}

impl ScanRequest {
    /// The request a TScan describes (unset fields take HBase's defaults; caching
    /// and cacheBlocks do not change results and are not used).
    pub fn from_tscan(scan: TScan) -> ScanRequest {
        ScanRequest {
            start_row: scan.start_row.unwrap_or_default(),
            stop_row: scan.stop_row.unwrap_or_default(),
            columns: scan.columns.unwrap_or_default(),
            timestamp: scan.timestamp,
            filter: scan.filter_string,
            batch: scan
                .batch_size
                .and_then(|b| u32::try_from(b).ok())
                .unwrap_or(0),
            reversed: scan.reversed.unwrap_or(false),
            sort_columns: scan.sort_columns.unwrap_or(false),
        }
    }

    fn into_spec(self) -> Thrift1Result<ScanSpec> {
        if let Some(f) = &self.filter {
            parse_filter(f).map_err(|e| Thrift1Error::Internal(e.to_string()))?;
        }
        let time_range = match self.timestamp {
            Some(ts) => as_of(ts)?,
            None => TimeRange::ALL,
        };
        Ok(ScanSpec {
            start_row: Bytes::from(self.start_row),
            stop_row: Bytes::from(self.stop_row),
            reverse: self.reversed,
            read: ReadSpec {
                columns: selectors(&self.columns),
                time_range,
                max_versions: 1,
                filter: self.filter.map(Bytes::from),
                ..ReadSpec::default()
            },
            batch: self.batch,
        })
    }
}

impl Thrift1Handler {
    /// Opens a scan and registers it; returns its id.
    pub fn open_scanner(&self, table: &[u8], request: ScanRequest) -> Thrift1Result<ScannerId> {
        let sort_columns = request.sort_columns;
        let spec = request.into_spec()?;
        self.check_families(table, &spec.read.columns)?;
        let scanner = self.backend.scan(table, spec)?;
        let connection = if self.options.close_scanners_with_connection {
            crate::server::current_connection()
        } else {
            None
        };
        self.scanners
            .register(OpenScan::new(scanner, sort_columns), connection)
            .map_err(|e| Thrift1Error::Io(e.to_string()))
    }

    /// Fails like HBase's scanner open when a selected family is not in the table
    /// (HBase opens region scanners eagerly; the backend opens them on first use).
    fn check_families(&self, table: &[u8], columns: &[ColumnSelector]) -> Thrift1Result<()> {
        if columns.is_empty() {
            return Ok(());
        }
        let info = self.backend.table(table)?;
        if let Some(missing) = columns
            .iter()
            .map(ColumnSelector::family)
            .find(|f| !info.families.iter().any(|known| known.name == **f))
        {
            return Err(BackendError::NoSuchFamily {
                table: String::from_utf8_lossy(&info.name).into_owned(),
                family: String::from_utf8_lossy(missing).into_owned(),
            }
            .into());
        }
        Ok(())
    }

    /// scannerOpenWithPrefix: rows from `prefix` while they start with it.
    pub fn open_prefix_scanner(
        &self,
        table: &[u8],
        prefix: Vec<u8>,
        columns: Vec<Vec<u8>>,
    ) -> Thrift1Result<ScannerId> {
        let filter = prefix_filter_string(&prefix).to_vec();
        self.open_scanner(
            table,
            ScanRequest {
                start_row: prefix,
                columns,
                filter: Some(filter),
                ..ScanRequest::default()
            },
        )
    }

    /// scannerGetList / scannerGet: up to `n` results (at most
    /// `max_rows_per_call`); `[]` at the end or when `n <= 0`.
    pub fn scanner_get_list(&self, id: ScannerId, n: i32) -> Thrift1Result<Vec<TRowResult>> {
        let scan = self
            .scanners
            .checkout(id)
            .ok_or(Thrift1Error::InvalidScanner)?;
        let wanted = usize::try_from(n)
            .unwrap_or(0)
            .min(self.options.max_rows_per_call);
        let outcome = {
            let mut scan = scan.lock();
            let sorted = scan.sort_columns;
            scan.next(wanted).map(|rows| (rows, sorted))
        };
        self.scanners.touch(id);
        let (rows, sorted) = outcome?;
        Ok(rows
            .into_iter()
            .filter(|r| !r.cells.is_empty())
            .map(|mut r| {
                sort_like_hbase(&mut r.cells);
                let row = r.row().clone();
                row_result(&row, r.cells, sorted)
            })
            .collect())
    }

    /// scannerClose.
    pub fn scanner_close(&self, id: ScannerId) -> Thrift1Result<()> {
        if self.scanners.close(id) {
            Ok(())
        } else {
            Err(Thrift1Error::InvalidScanner)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_filters_double_quotes_and_parse() {
        let f = prefix_filter_string(b"it's");
        assert_eq!(f.as_ref(), b"WHILE PrefixFilter('it''s')");
        assert!(parse_filter(&f).is_ok());
        assert!(parse_filter(&prefix_filter_string(b"")).is_ok());
        assert!(parse_filter(&prefix_filter_string(&[0, 0xff, b'\'', b')'])).is_ok());
    }

    #[test]
    fn tscan_defaults() {
        let r = ScanRequest::from_tscan(TScan::default());
        assert!(r.start_row.is_empty() && r.stop_row.is_empty());
        assert!(!r.reversed && !r.sort_columns);
        assert_eq!(r.batch, 0);
        let r = ScanRequest::from_tscan(TScan {
            batch_size: Some(-5),
            filter_string: None,
            ..TScan::default()
        });
        assert_eq!(r.batch, 0);
        assert!(r.filter.is_none());
        // A filter string that is set but empty is kept, and refused when the
        // scan opens (as HBase's parser refuses it).
        let r = ScanRequest::from_tscan(TScan {
            filter_string: Some(Vec::new()),
            ..TScan::default()
        });
        assert!(matches!(r.into_spec(), Err(Thrift1Error::Internal(_))));
    }

    #[test]
    fn bad_filters_fail_before_the_scan_opens() {
        let r = ScanRequest {
            filter: Some(b"NoSuchFilter()".to_vec()),
            ..ScanRequest::default()
        };
        match r.into_spec() {
            Err(Thrift1Error::Internal(m)) => assert!(m.contains("NoSuchFilter"), "{m}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn timestamps_become_exclusive_ranges() {
        let spec = ScanRequest {
            timestamp: Some(10),
            ..ScanRequest::default()
        }
        .into_spec()
        .unwrap();
        assert_eq!(spec.read.time_range, TimeRange::new(0, 10));
        let spec = ScanRequest::default().into_spec().unwrap();
        assert_eq!(spec.read.time_range, TimeRange::ALL);
    }
}
