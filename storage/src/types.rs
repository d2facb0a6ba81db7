//! The engine's public data types: cells, mutations, read requests, durability.
//!
//! Owns: the vocabulary shared by the engine and its callers (regionserver, gateway).
//! Must not: contain behaviour beyond validation and small conversions.

use bytes::Bytes;

use crate::error::{Error, Result};

/// "Latest": on the API, a timestamp the server replaces with the current time.
pub const LATEST_TIMESTAMP: i64 = i64::MAX;

/// The longest row key accepted, in bytes.
pub const MAX_ROW_KEY_LEN: usize = 65_536;

/// One visible value: a version of a column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cell {
    pub row: Bytes,
    pub family: Bytes,
    pub qualifier: Bytes,
    pub timestamp: i64,
    pub value: Bytes,
}

/// One change to a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Writes a value; `timestamp` LATEST means "now".
    Put {
        family: Bytes,
        qualifier: Bytes,
        timestamp: i64,
        value: Bytes,
    },
    /// Deletes the version at exactly `timestamp`; LATEST means the newest version.
    DeleteVersion {
        family: Bytes,
        qualifier: Bytes,
        timestamp: i64,
    },
    /// Deletes every version of the column with timestamp <= `timestamp` (LATEST = now).
    DeleteColumn {
        family: Bytes,
        qualifier: Bytes,
        timestamp: i64,
    },
    /// Deletes every column of the family with timestamp <= `timestamp` (LATEST = now).
    DeleteFamily { family: Bytes, timestamp: i64 },
    /// Deletes every column of the family at exactly `timestamp`.
    DeleteFamilyVersion { family: Bytes, timestamp: i64 },
    /// Deletes every family of the row with timestamp <= `timestamp` (LATEST = now).
    DeleteRow { timestamp: i64 },
}

impl Mutation {
    /// The family this mutation touches, if it names one.
    pub fn family(&self) -> Option<&Bytes> {
        match self {
            Mutation::Put { family, .. }
            | Mutation::DeleteVersion { family, .. }
            | Mutation::DeleteColumn { family, .. }
            | Mutation::DeleteFamily { family, .. }
            | Mutation::DeleteFamilyVersion { family, .. } => Some(family),
            Mutation::DeleteRow { .. } => None,
        }
    }

    /// The mutation's timestamp argument.
    pub fn timestamp(&self) -> i64 {
        match self {
            Mutation::Put { timestamp, .. }
            | Mutation::DeleteVersion { timestamp, .. }
            | Mutation::DeleteColumn { timestamp, .. }
            | Mutation::DeleteFamily { timestamp, .. }
            | Mutation::DeleteFamilyVersion { timestamp, .. }
            | Mutation::DeleteRow { timestamp } => *timestamp,
        }
    }
}

/// Puts and deletes on one row, applied atomically with one sequence number.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RowMutation {
    pub row: Bytes,
    pub mutations: Vec<Mutation>,
}

impl RowMutation {
    /// A mutation of `row` with no changes yet.
    pub fn new(row: impl Into<Bytes>) -> Self {
        RowMutation {
            row: row.into(),
            mutations: Vec::new(),
        }
    }

    /// Adds a put.
    pub fn put(
        mut self,
        family: impl Into<Bytes>,
        qualifier: impl Into<Bytes>,
        timestamp: i64,
        value: impl Into<Bytes>,
    ) -> Self {
        self.mutations.push(Mutation::Put {
            family: family.into(),
            qualifier: qualifier.into(),
            timestamp,
            value: value.into(),
        });
        self
    }

    /// Adds a mutation.
    pub fn with(mut self, m: Mutation) -> Self {
        self.mutations.push(m);
        self
    }
}

/// How hard a write is made durable before it is acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Logged and fsynced before returning (HBase FSYNC_WAL), whatever the log's
    /// `fsync` option says; the fsync is shared with concurrent writers.
    Fsync,
    /// Logged before returning (HBase SYNC_WAL): fsynced, shared with concurrent
    /// writers, or, when the log's `fsync` option is off, written to the OS and
    /// fsynced in the background (HBase's hflush), which survives the server's
    /// crash but not the machine's.
    #[default]
    Sync,
    /// Logged; flushed to the OS in the background, fsynced periodically.
    Async,
    /// Not logged at all (HBase `writeToWAL=false` / SKIP_WAL): lost on a crash
    /// until the memtable is flushed.
    Skip,
}

impl Durability {
    /// Whether the caller waits for the log before the write is acknowledged.
    pub fn waits_for_log(self) -> bool {
        matches!(self, Durability::Fsync | Durability::Sync)
    }

    /// The stronger of two modes: a row whose mutations ask for several gets the
    /// strongest.
    pub fn strongest(self, other: Durability) -> Durability {
        fn rank(d: Durability) -> u8 {
            match d {
                Durability::Skip => 0,
                Durability::Async => 1,
                Durability::Sync => 2,
                Durability::Fsync => 3,
            }
        }
        if rank(self) >= rank(other) {
            self
        } else {
            other
        }
    }
}

/// Validates a row key.
pub fn check_row(row: &[u8]) -> Result<()> {
    if row.is_empty() {
        return Err(Error::EmptyRowKey);
    }
    if row.len() > MAX_ROW_KEY_LEN {
        return Err(Error::RowKeyTooLong {
            len: row.len(),
            max: MAX_ROW_KEY_LEN,
        });
    }
    Ok(())
}

/// Validates a timestamp given by a client (LATEST allowed).
pub fn check_timestamp(ts: i64) -> Result<()> {
    if ts < 0 {
        return Err(Error::InvalidTimestamp {
            ts,
            reason: "timestamps must not be negative",
        });
    }
    Ok(())
}

/// A half-open time range `[min, max)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeRange {
    pub min: i64,
    pub max: i64,
}

impl TimeRange {
    /// Every timestamp.
    pub const ALL: TimeRange = TimeRange {
        min: i64::MIN,
        max: i64::MAX,
    };

    /// `[min, max)`.
    pub fn new(min: i64, max: i64) -> Self {
        TimeRange { min, max }
    }

    /// `[0, ts)`: the HBase Thrift1 "as of ts" range (exclusive bound).
    pub fn before(ts: i64) -> Self {
        TimeRange { min: 0, max: ts }
    }

    /// `[0, ts]`: "as of ts" with the bound included (HBase's Get.setTimeRange to
    /// ts + 1). `at_or_before(i64::MAX)` admits every non-negative timestamp.
    pub fn at_or_before(ts: i64) -> Self {
        TimeRange {
            min: 0,
            max: ts.saturating_add(1),
        }
    }

    /// `[ts, ts]` as a half-open range: one exact timestamp.
    pub fn exactly(ts: i64) -> Self {
        TimeRange {
            min: ts,
            max: ts.saturating_add(1),
        }
    }

    /// True when `ts` lies inside the range. A range whose max is i64::MAX also
    /// includes i64::MAX (there is no larger exclusive bound to express it).
    pub fn contains(&self, ts: i64) -> bool {
        ts >= self.min && (ts < self.max || self.max == i64::MAX)
    }

    /// The newest timestamp inside the range, if any.
    pub fn newest(&self) -> Option<i64> {
        if self.max == i64::MAX {
            return Some(i64::MAX);
        }
        let n = self.max.checked_sub(1)?;
        (n >= self.min).then_some(n)
    }

    /// True when nothing can be inside.
    pub fn is_empty(&self) -> bool {
        self.newest().is_none()
    }
}

impl Default for TimeRange {
    fn default() -> Self {
        TimeRange::ALL
    }
}

/// Which columns a read wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnSelector {
    /// Every column of the family.
    Family(Bytes),
    /// One column.
    Column(Bytes, Bytes),
}

impl ColumnSelector {
    /// The family named.
    pub fn family(&self) -> &Bytes {
        match self {
            ColumnSelector::Family(f) | ColumnSelector::Column(f, _) => f,
        }
    }
}
