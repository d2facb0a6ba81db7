//! Thrift1 point reads: get, getVer, getVerTs, getRow*, getRows*, getRowOrBefore.
//!
//! Owns: turning each read call into [`ReadSpec`]s on the backend, HBase's read
//! semantics (the *Ts calls read `[0, ts)`, one version unless numVersions says
//! otherwise, missing rows omitted, request order and duplicates kept) and the
//! shape of the answers.
//! Must not: write, or hold scanners beyond the call.

use bytes::Bytes;
use tabula_regionserver::{ReadSpec, ScanSpec};
use tabula_storage::{ColumnSelector, LATEST_TIMESTAMP};
use tabula_thrift::hbase::{TCell, TRowResult};

use super::columns::{selectors, ColumnSpec};
use super::convert::{row_result, sort_like_hbase, tcell};
use super::errors::{Thrift1Error, Thrift1Result};
use super::{as_of, check_row_len, Thrift1Handler};

impl Thrift1Handler {
    /// Cells of one column string in one row, HBase-ordered.
    fn read_cells(&self, table: &[u8], row: Vec<u8>, spec: &ReadSpec) -> Thrift1Result<Vec<TCell>> {
        check_row_len(&row)?;
        let mut cells = self.backend.get(table, &Bytes::from(row), spec)?;
        sort_like_hbase(&mut cells);
        Ok(cells.into_iter().map(tcell).collect())
    }

    /// get / getVer / getVerTs: up to `versions` versions (newest first) of the
    /// column or family named by `column`, in `[0, ts)`.
    pub fn read_versions(
        &self,
        table: &[u8],
        row: Vec<u8>,
        column: &[u8],
        ts: i64,
        versions: i32,
    ) -> Thrift1Result<Vec<TCell>> {
        let max_versions = u32::try_from(versions)
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| {
                Thrift1Error::Internal(format!("numVersions must be positive, got {versions}"))
            })?;
        let spec = ReadSpec {
            columns: vec![ColumnSpec::parse(column).selector()],
            time_range: as_of(ts)?,
            max_versions,
            ..ReadSpec::default()
        };
        self.read_cells(table, row, &spec)
    }

    /// getRow* / getRows*: the latest version of each selected column (all families
    /// when `columns` is empty) in `[0, ts)`, one TRowResult per row that has any,
    /// in request order.
    pub fn read_rows(
        &self,
        table: &[u8],
        rows: Vec<Vec<u8>>,
        columns: &[Vec<u8>],
        ts: i64,
    ) -> Thrift1Result<Vec<TRowResult>> {
        for row in &rows {
            check_row_len(row)?;
        }
        let spec = ReadSpec {
            columns: selectors(columns),
            time_range: as_of(ts)?,
            max_versions: 1,
            ..ReadSpec::default()
        };
        let mut results = Vec::with_capacity(rows.len());
        for row in rows {
            let row = Bytes::from(row);
            let mut cells = self.backend.get(table, &row, &spec)?;
            if cells.is_empty() {
                continue;
            }
            sort_like_hbase(&mut cells);
            results.push(row_result(&row, cells, false));
        }
        Ok(results)
    }

    /// getRow / getRowWithColumns(Ts): as [`Self::read_rows`] for one row.
    pub fn read_row(
        &self,
        table: &[u8],
        row: Vec<u8>,
        columns: &[Vec<u8>],
        ts: i64,
    ) -> Thrift1Result<Vec<TRowResult>> {
        self.read_rows(table, vec![row], columns, ts)
    }

    /// getRowOrBefore: the cells of `family` in the last row at or before `row`
    /// (a one-row reverse scan); `[]` when there is none. `family` may be given as
    /// `fam` or `fam:`.
    pub fn row_or_before(
        &self,
        table: &[u8],
        row: Vec<u8>,
        family: &[u8],
    ) -> Thrift1Result<Vec<TCell>> {
        check_row_len(&row)?;
        let family = ColumnSpec::parse(family).family;
        let spec = ScanSpec {
            start_row: Bytes::from(row),
            stop_row: Bytes::new(),
            reverse: true,
            read: ReadSpec {
                columns: vec![ColumnSelector::Family(family)],
                time_range: as_of(LATEST_TIMESTAMP)?,
                max_versions: 1,
                ..ReadSpec::default()
            },
            batch: 0,
        };
        let mut scanner = self.backend.scan(table, spec)?;
        let first = scanner.next_rows(1)?;
        let mut cells = first
            .into_iter()
            .next()
            .map(|r| r.cells)
            .unwrap_or_default();
        sort_like_hbase(&mut cells);
        Ok(cells.into_iter().map(tcell).collect())
    }
}
