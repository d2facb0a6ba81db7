//! Where tablets being opened go: each to the live regionserver holding the
//! fewest tablets.
//!
//! Owns: `Placement`, one reading of every server's tablet count per operation,
//! kept current as the operation places tablets.
//! Must not: open tablets or write the catalog (its callers do), or move tablets
//! between live servers (`balancing` does).

use std::sync::Arc;

use tabula_regionserver::TabletService;

use super::{CoordError, CoordResult, Coordinator};

/// Chooses servers for the tablets one operation opens (a table created with
/// many regions, a dead server's tablets, a table enabled). Servers are asked for
/// their tablets once, at the first choice, and each choice adds one to the
/// chosen server's count: asking every server again for every tablet made
/// placing N tablets cost N reports of every server.
pub(super) struct Placement {
    counts: Option<Vec<(Arc<dyn TabletService>, usize)>>,
}

impl Placement {
    /// A placement that has not asked any server yet.
    pub(super) fn new() -> Self {
        Placement { counts: None }
    }

    /// The server with the fewest tablets (the first such, in the coordinator's
    /// order of servers), counted as holding one more from now on.
    pub(super) fn pick(
        &mut self,
        coordinator: &Coordinator,
    ) -> CoordResult<Arc<dyn TabletService>> {
        let counts = self.counts.get_or_insert_with(|| {
            coordinator
                .servers()
                .into_iter()
                .map(|server| {
                    let held = server.report().len();
                    (server, held)
                })
                .collect()
        });
        let (server, held) = counts
            .iter_mut()
            .min_by_key(|(_, held)| *held)
            .ok_or(CoordError::NoServers)?;
        *held += 1;
        Ok(Arc::clone(server))
    }

    /// Counts a tablet opened on `server` without a choice (reopened where it
    /// was), so that later choices see it.
    pub(super) fn opened_on(&mut self, server: &str) {
        if let Some(counts) = &mut self.counts {
            if let Some((_, held)) = counts.iter_mut().find(|(s, _)| s.name() == server) {
                *held += 1;
            }
        }
    }
}
