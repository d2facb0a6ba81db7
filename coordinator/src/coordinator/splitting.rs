//! Splits of user tablets by size, and the split of one tablet on request: the
//! regionserver splits, then the two children are written to the catalog.
//!
//! Owns: `split_large_tablets`, `split_tablet` and the catalog writes of a split.
//! Must not: choose a split for load (`balancing` does) or repair a split stopped
//! half-way (`assignment` does, at start-up).

use std::collections::HashMap;

use bytes::Bytes;
use tabula_regionserver::{RsError, TabletService};
use tabula_storage::SplitRule;

use crate::catalog::{TabletLocation, FIRST_USER_TABLET_ID};

use super::{shown, CoordResult, Coordinator};

impl Coordinator {
    /// Splits user tablets that grew past their table's threshold: its
    /// `MAX_FILESIZE`, else the server's (0: never; tables whose split policy
    /// forbids splits, never). Returns how many split.
    pub fn split_large_tablets(&self) -> CoordResult<usize> {
        let thresholds: HashMap<Bytes, u64> = self
            .tables()
            .into_iter()
            .map(|t| {
                let threshold = if t.split_rule() == SplitRule::Never {
                    0
                } else {
                    t.max_file_size().unwrap_or(self.opts.split_threshold_bytes)
                };
                (t.name, threshold)
            })
            .collect();
        let Some(smallest) = thresholds.values().copied().filter(|t| *t > 0).min() else {
            return Ok(0);
        };
        let mut splits = 0;
        let servers = self.servers();
        for server in servers {
            for report in server.report() {
                if report.tablet < FIRST_USER_TABLET_ID || report.stats.file_bytes < smallest {
                    continue;
                }
                let Some(location) = self.find_user_tablet(report.tablet)? else {
                    continue;
                };
                let threshold = thresholds.get(&location.table).copied().unwrap_or(0);
                if threshold == 0 || report.stats.file_bytes < threshold {
                    continue;
                }
                match self.split_tablet(server.as_ref(), report.tablet, None) {
                    Ok(true) => splits += 1,
                    Ok(false) => {}
                    Err(e) => tracing::warn!(tablet = report.tablet, error = %e, "split failed"),
                }
            }
        }
        Ok(splits)
    }

    /// Splits one tablet (at `at`, or its midpoint) and records the children in the
    /// catalog. Returns false when the tablet could not be split (too little data).
    pub fn split_tablet(
        &self,
        server: &dyn TabletService,
        tablet: u64,
        at: Option<Bytes>,
    ) -> CoordResult<bool> {
        let _g = self.admin.lock();
        Ok(self.split_holding_admin(server, tablet, at)?.is_some())
    }

    /// [`Coordinator::split_tablet`] with the admin lock held by the caller.
    /// Returns the children's ids, or `None` when the tablet could not be split.
    pub(super) fn split_holding_admin(
        &self,
        server: &dyn TabletService,
        tablet: u64,
        at: Option<Bytes>,
    ) -> CoordResult<Option<[u64; 2]>> {
        let Some(parent) = self.find_user_tablet(tablet)? else {
            return Ok(None);
        };
        // The right child's id is the left one's plus one: a split stopped between
        // the catalog rows below is completed from that (`complete_interrupted_splits`).
        let ids = self.allocate_ids(2)?;
        let outcome = match server.split_tablet(tablet, at, ids, ids + 1) {
            Ok(o) => o,
            Err(RsError::Storage(tabula_storage::Error::InvalidArgument(_))) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        fail::fail_point!("split-catalog-unwritten");
        // Left child first (a new row), then the right child over the parent's row:
        // a reader between the two writes finds either the new left child or the
        // closed parent, which answers "not serving" and is looked up again.
        self.write_catalog(&TabletLocation {
            table: parent.table.clone(),
            start_row: outcome.left.start_row.clone(),
            end_row: outcome.left.end_row.clone(),
            tablet_id: outcome.left.id,
            server: server.name(),
        })?;
        fail::fail_point!("split-catalog-left-written");
        self.write_catalog(&TabletLocation {
            table: parent.table.clone(),
            start_row: outcome.right.start_row.clone(),
            end_row: outcome.right.end_row.clone(),
            tablet_id: outcome.right.id,
            server: server.name(),
        })?;
        tracing::info!(
            table = %shown(&parent.table),
            parent = tablet,
            left = outcome.left.id,
            right = outcome.right.id,
            at = ?outcome.at,
            "split tablet"
        );
        Ok(Some([outcome.left.id, outcome.right.id]))
    }

    pub(super) fn find_user_tablet(&self, tablet: u64) -> CoordResult<Option<TabletLocation>> {
        for t in self.tables() {
            if let Some(loc) = self
                .table_tablets(&t.name)?
                .into_iter()
                .find(|l| l.tablet_id == tablet)
            {
                return Ok(Some(loc));
            }
        }
        Ok(None)
    }
}
