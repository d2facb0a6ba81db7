//! Client batches of RowMutations over one or more tablets of an engine.
//!
//! Owns: applying a batch row by row (each row atomic on its own, the batch not)
//! and waiting for the engine's shared commit log once for every row of every
//! tablet in it, then publishing them all: a client's batch of puts spread over
//! several tablets costs one group commit, not one per row or per tablet.
//! Must not: resolve or log rows itself (the tablet's write path does) or route
//! rows to tablets (the caller does).

use super::write::PendingWrite;
use super::Tablet;
use crate::error::{Error, Result};
use crate::types::{Durability, RowMutation};

/// A row committed but not yet published: its tablet, its place in the results
/// (group, row) and the write.
struct Unpublished<'a> {
    tablet: &'a Tablet,
    group: usize,
    row: usize,
    write: PendingWrite,
}

/// Applies each group's rows to its tablet, in order. The tablets must belong to
/// one engine (they share its commit log). Returns one result per row, grouped as
/// given.
pub(crate) fn apply_batches(
    groups: &[(&Tablet, &[&RowMutation])],
    durability: Durability,
) -> Vec<Vec<Result<()>>> {
    let mut results: Vec<Vec<Result<()>>> = groups
        .iter()
        .map(|(_, rows)| Vec::with_capacity(rows.len()))
        .collect();
    let mut pending: Vec<Unpublished<'_>> = Vec::new();
    for (group, &(tablet, rows)) in groups.iter().enumerate() {
        for (row, rm) in rows.iter().enumerate() {
            // Never wait for flush room with writes unpublished: a flush waits
            // until the writes of its memtable are published, and these are ours.
            if !pending.is_empty() && !tablet.has_flush_room() {
                publish_all(std::mem::take(&mut pending), &mut results);
            }
            let outcome = match tablet.commit_for_batch(rm, durability, pending.is_empty()) {
                Ok(Some(write)) => {
                    pending.push(Unpublished {
                        tablet,
                        group,
                        row,
                        write,
                    });
                    Ok(())
                }
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            };
            if let Some(r) = results.get_mut(group) {
                r.push(outcome);
            }
        }
    }
    publish_all(pending, &mut results);
    results
}

/// Waits once for the log position of the last unpublished write (which covers
/// every earlier one: the log is written in order), publishes them all, and
/// records a failed wait in each of their results.
fn publish_all(pending: Vec<Unpublished<'_>>, results: &mut [Vec<Result<()>>]) {
    let last_logged = pending
        .iter()
        .filter_map(|p| p.write.log().map(|log| (p.tablet, log)))
        .max_by_key(|(_, (pos, _))| pos.end());
    let synced = match last_logged {
        Some((tablet, (pos, durability))) => tablet.shared.log.sync(pos, durability),
        None => Ok(()),
    };
    for p in &pending {
        p.tablet.publish(&p.write);
        let slot = results.get_mut(p.group).and_then(|r| r.get_mut(p.row));
        if let (Err(e), Some(slot)) = (&synced, slot) {
            *slot = Err(Error::io(
                format!("writing to tablet {}", p.tablet.id),
                std::io::Error::other(e.to_string()),
            ));
        }
    }
}
