//! The stand-in for a regionserver the coordinator no longer knows (it went away
//! and its tablets are moving): every call answers "not serving", so callers do
//! what they do when a tablet moved: forget the location, wait, look it up again.
//!
//! Owns: [`Unavailable`]. Must not: touch data.

use std::collections::HashSet;

use bytes::Bytes;
use tabula_regionserver::slow_log::SlowCall;
use tabula_regionserver::{
    ReadSpec, RsError, RsResult, ScanBatch, ScanSpec, SplitOutcome, TabletReport, TabletService,
};
use tabula_storage::tablet::{Condition, TabletDescriptor};
use tabula_storage::{Cell, Durability, RowMutation, TableSchema};

/// A regionserver that serves nothing.
pub struct Unavailable;

/// The one instance routing hands out.
pub static UNAVAILABLE: Unavailable = Unavailable;

fn gone<T>(tablet: u64) -> RsResult<T> {
    Err(RsError::NotServing { tablet })
}

impl TabletService for Unavailable {
    fn name(&self) -> String {
        "unavailable".into()
    }

    fn start_code(&self) -> i64 {
        0
    }

    fn get(&self, tablet: u64, _: &Bytes, _: &ReadSpec) -> RsResult<Vec<Cell>> {
        gone(tablet)
    }

    fn mutate(&self, tablet: u64, _: &RowMutation, _: Durability) -> RsResult<()> {
        gone(tablet)
    }

    fn mutate_batch(
        &self,
        batches: &[(u64, Vec<&RowMutation>)],
        _: Durability,
    ) -> Vec<RsResult<Vec<RsResult<()>>>> {
        batches.iter().map(|(tablet, _)| gone(*tablet)).collect()
    }

    fn check_and_mutate(
        &self,
        tablet: u64,
        _: &Condition,
        _: &RowMutation,
        _: Durability,
    ) -> RsResult<bool> {
        gone(tablet)
    }

    fn increment(
        &self,
        tablet: u64,
        _: &Bytes,
        _: &[(Bytes, Bytes, i64)],
        _: Durability,
    ) -> RsResult<Vec<Cell>> {
        gone(tablet)
    }

    fn append(
        &self,
        tablet: u64,
        _: &Bytes,
        _: &[(Bytes, Bytes, Bytes)],
        _: Durability,
    ) -> RsResult<Vec<Cell>> {
        gone(tablet)
    }

    fn open_scanner(&self, tablet: u64, _: &ScanSpec) -> RsResult<u64> {
        gone(tablet)
    }

    fn scanner_next(&self, scanner: u64, _: usize) -> RsResult<ScanBatch> {
        Err(RsError::UnknownScanner { scanner })
    }

    fn close_scanner(&self, _: u64) {}

    fn open_tablet(&self, desc: &TabletDescriptor) -> RsResult<()> {
        gone(desc.id)
    }

    fn close_tablet(&self, tablet: u64) -> RsResult<()> {
        gone(tablet)
    }

    fn destroy_tablet(&self, tablet: u64) -> RsResult<()> {
        gone(tablet)
    }

    fn split_tablet(
        &self,
        tablet: u64,
        _: Option<Bytes>,
        _: u64,
        _: u64,
    ) -> RsResult<SplitOutcome> {
        gone(tablet)
    }

    fn flush_tablet(&self, tablet: u64) -> RsResult<()> {
        gone(tablet)
    }

    fn compact_tablet(&self, tablet: u64, _: bool) -> RsResult<()> {
        gone(tablet)
    }

    fn update_schema(&self, tablet: u64, _: &TableSchema) -> RsResult<()> {
        gone(tablet)
    }

    fn report(&self) -> Vec<TabletReport> {
        Vec::new()
    }

    fn collect_garbage(&self, _: &HashSet<u64>) -> RsResult<usize> {
        Ok(0)
    }

    fn recover_log_of(&self, _: &str) -> RsResult<()> {
        gone(0)
    }

    fn slow_calls(&self) -> RsResult<Vec<SlowCall>> {
        gone(0)
    }

    fn clear_slow_calls(&self) -> RsResult<bool> {
        gone(0)
    }
}
