//! Read-modify-write operations, atomic per row: check-and-mutate, increment, append.
//!
//! Owns: HBase's semantics for these calls. Each holds the row's lock from its read
//! to its memtable insert, and reads with an unlimited snapshot: every mutation of
//! the row that was inserted is complete (inserts happen under the same row lock),
//! so the read sees the latest state even before its log sync finishes. Their
//! synced writes may be deferred like a plain mutation's (see `crate::deferred`).
//! Must not: the commit protocol itself (see `write`).

use bytes::Bytes;

use super::Tablet;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::key::KeyKind;
use crate::read::{ReadOptions, ReadPlan};
use crate::types::{Cell, ColumnSelector, Durability, RowMutation, TimeRange};

/// Comparison of a check-and-mutate, read as `provided <op> stored`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompareOp {
    Less,
    LessOrEqual,
    Equal,
    NotEqual,
    GreaterOrEqual,
    Greater,
    /// Always passes when the column has a value.
    NoOp,
}

impl CompareOp {
    fn holds(self, provided: &[u8], stored: &[u8]) -> bool {
        use std::cmp::Ordering::*;
        let ord = provided.cmp(stored);
        match self {
            CompareOp::Less => ord == Less,
            CompareOp::LessOrEqual => ord != Greater,
            CompareOp::Equal => ord == Equal,
            CompareOp::NotEqual => ord != Equal,
            CompareOp::GreaterOrEqual => ord != Less,
            CompareOp::Greater => ord == Greater,
            CompareOp::NoOp => true,
        }
    }
}

/// The check of a check-and-mutate: the newest version of one column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    pub family: Bytes,
    pub qualifier: Bytes,
    pub op: CompareOp,
    /// `None` (or empty) checks that the column has no value.
    pub value: Option<Bytes>,
    /// Time range of the checked version (HBase's checkAndMutate timeRange).
    pub time_range: TimeRange,
}

impl Condition {
    /// `provided == stored`, or absence when `value` is `None`.
    pub fn equals(
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        value: Option<Bytes>,
    ) -> Self {
        Condition {
            family: family.into(),
            qualifier: qualifier.into(),
            op: CompareOp::Equal,
            value,
            time_range: TimeRange::ALL,
        }
    }

    /// Whether the condition holds given the stored newest value.
    pub fn holds(&self, stored: Option<&[u8]>) -> bool {
        let provided = self.value.as_deref().filter(|v| !v.is_empty());
        match (provided, stored) {
            // Checking for absence: passes when nothing (or an empty value) is stored.
            (None, None) => true,
            (None, Some(s)) => s.is_empty() && self.op != CompareOp::NotEqual,
            (Some(_), None) => false,
            (Some(p), Some(s)) => self.op.holds(p, s),
        }
    }
}

impl Tablet {
    /// The newest visible version of one column, read under the row lock.
    fn newest_cell(
        &self,
        row: &Bytes,
        family: &Bytes,
        qualifier: &Bytes,
        range: TimeRange,
    ) -> Result<Option<Cell>> {
        let opts = ReadOptions {
            columns: vec![ColumnSelector::Column(family.clone(), qualifier.clone())],
            time_range: range,
            max_versions: 1,
            ..Default::default()
        };
        let plan = ReadPlan::compile(&self.schema(), &opts, self.shared.now_ms())?;
        let cells = self.read_row_with(row, &plan, u64::MAX, None)?;
        Ok(cells.into_iter().next())
    }

    /// The timestamp of the newest version of a column (row lock held).
    pub(crate) fn latest_timestamp(
        &self,
        row: &Bytes,
        family: &Bytes,
        qualifier: &Bytes,
    ) -> Result<Option<i64>> {
        Ok(self
            .newest_cell(row, family, qualifier, TimeRange::ALL)?
            .map(|c| c.timestamp))
    }

    /// Applies `mutation` if `condition` holds on the row's current state; returns
    /// whether it was applied. Both happen atomically under the row lock.
    pub fn check_and_mutate(
        &self,
        condition: &Condition,
        mutation: &RowMutation,
        durability: Durability,
    ) -> Result<bool> {
        self.validate(mutation)?;
        self.schema().require_family(&condition.family)?;
        self.requests.read(&mutation.row);
        let pending = {
            let _row = self.row_locks.lock(&mutation.row);
            let stored = self.newest_cell(
                &mutation.row,
                &condition.family,
                &condition.qualifier,
                condition.time_range,
            )?;
            if !condition.holds(stored.as_ref().map(|c| c.value.as_ref())) {
                return Ok(false);
            }
            if mutation.mutations.is_empty() {
                return Ok(true);
            }
            let entries = self.resolve(mutation, self.shared.now_ms())?;
            self.commit(&mutation.row, &entries, durability)?
        };
        self.requests.wrote(&mutation.row);
        self.finish_or_defer(pending)?;
        Ok(true)
    }

    /// Adds `amount` to 8-byte big-endian counters (missing = 0); returns the new
    /// cells, in request order. An amount of 0 returns the current value and writes
    /// nothing.
    pub fn increment(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, i64)],
        durability: Durability,
    ) -> Result<Vec<Cell>> {
        let names: Vec<(Bytes, Bytes)> = columns
            .iter()
            .map(|(f, q, _)| (f.clone(), q.clone()))
            .collect();
        self.read_modify_write(row, &names, durability, |i, old| {
            let (family, qualifier, amount) = columns
                .get(i)
                .ok_or_else(|| Error::InvalidArgument("column index".into()))?;
            let column = || {
                format!(
                    "{}:{}",
                    String::from_utf8_lossy(family),
                    String::from_utf8_lossy(qualifier)
                )
            };
            let current = match old {
                None => 0i64,
                Some(v) => {
                    let bytes: [u8; 8] = v.try_into().map_err(|_| Error::NotACounter {
                        column: column(),
                        len: v.len(),
                    })?;
                    i64::from_be_bytes(bytes)
                }
            };
            let next = current
                .checked_add(*amount)
                .ok_or_else(|| Error::CounterOverflow { column: column() })?;
            Ok((Bytes::copy_from_slice(&next.to_be_bytes()), *amount != 0))
        })
    }

    /// Appends bytes to columns (missing = empty); returns the new cells.
    pub fn append(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes, Bytes)],
        durability: Durability,
    ) -> Result<Vec<Cell>> {
        let max_value = self.shared.opts.max_value_size;
        let names: Vec<(Bytes, Bytes)> = columns
            .iter()
            .map(|(f, q, _)| (f.clone(), q.clone()))
            .collect();
        self.read_modify_write(row, &names, durability, |i, old| {
            let (_, _, suffix) = columns
                .get(i)
                .ok_or_else(|| Error::InvalidArgument("column index".into()))?;
            let mut v = old.map(|b| b.to_vec()).unwrap_or_default();
            v.extend_from_slice(suffix);
            if v.len() > max_value {
                return Err(Error::ValueTooLarge {
                    len: v.len(),
                    max: max_value,
                });
            }
            Ok((Bytes::from(v), true))
        })
    }

    /// Shared body of increment and append: for each column, read the newest value,
    /// compute the new one (`compute(index, old) -> (new, changed)`), then write every
    /// changed column as one mutation. A column named twice sees the value computed
    /// for its earlier mention. New versions get `max(now, old timestamp)`: within one
    /// millisecond a new value replaces the old at the same timestamp (the later
    /// sequence number wins), so a plain put made "now" still supersedes it.
    fn read_modify_write(
        &self,
        row: &Bytes,
        columns: &[(Bytes, Bytes)],
        durability: Durability,
        mut compute: impl FnMut(usize, Option<&[u8]>) -> Result<(Bytes, bool)>,
    ) -> Result<Vec<Cell>> {
        self.check_open()?;
        crate::types::check_row(row)?;
        if !self.contains_row(row) {
            return Err(Error::RowOutOfRange { tablet: self.id });
        }
        let schema = self.schema();
        for (f, _) in columns {
            schema.require_family(f)?;
        }
        self.requests.read(row);
        let mut result = Vec::with_capacity(columns.len());
        let pending = {
            let _row = self.row_locks.lock(row);
            let now = self.shared.now_ms();
            let mut entries: Vec<Entry> = Vec::with_capacity(columns.len());
            for (i, (family, qualifier)) in columns.iter().enumerate() {
                let earlier = result
                    .iter()
                    .rev()
                    .find(|c: &&Cell| c.family == *family && c.qualifier == *qualifier)
                    .map(|c| (c.value.clone(), c.timestamp));
                let (old_value, old_ts) = match earlier {
                    Some((v, ts)) => (Some(v), Some(ts)),
                    None => match self.newest_cell(row, family, qualifier, TimeRange::ALL)? {
                        Some(c) => (Some(c.value), Some(c.timestamp)),
                        None => (None, None),
                    },
                };
                let (value, changed) = compute(i, old_value.as_deref())?;
                let timestamp = match (changed, old_ts) {
                    (true, Some(t)) => now.max(t),
                    (true, None) => now,
                    (false, Some(t)) => t,
                    (false, None) => now,
                };
                if changed {
                    // A column named twice keeps only its last computed value.
                    entries.retain(|e| !(e.family == *family && e.qualifier == *qualifier));
                    entries.push(Entry {
                        kind: KeyKind::Put,
                        family: family.clone(),
                        qualifier: qualifier.clone(),
                        timestamp,
                        value: value.clone(),
                    });
                }
                result.push(Cell {
                    row: row.clone(),
                    family: family.clone(),
                    qualifier: qualifier.clone(),
                    timestamp,
                    value,
                });
            }
            if entries.is_empty() {
                None
            } else {
                let p = self.commit(row, &entries, durability)?;
                self.requests.wrote(row);
                Some(p)
            }
        };
        if let Some(p) = pending {
            self.finish_or_defer(p)?;
        }
        Ok(result)
    }
}
