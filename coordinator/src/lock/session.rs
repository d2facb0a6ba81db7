//! The embedded service's session table: leases, their deadlines, and the ephemeral
//! files each session owns.
//!
//! Owns: session ids, deadlines and ownership sets. Must not: touch files or revisions
//! (the embedded service turns an expiry into deletes).
//!
//! Ids are `boot_epoch << 32 | sequence`: the epoch is persisted and bumped on every
//! open, so a session id from before a restart never names a session after it.

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use super::error::{LockError, LockResult};
use super::types::{validate_ttl, SessionId};

#[derive(Debug)]
struct SessionEntry {
    ttl: Duration,
    deadline: Instant,
    owned: BTreeSet<String>,
}

/// Live sessions, indexed by id and by deadline.
#[derive(Debug)]
pub(crate) struct SessionTable {
    id_base: u64,
    last_sequence: u32,
    sessions: HashMap<SessionId, SessionEntry>,
    deadlines: BTreeSet<(Instant, SessionId)>,
}

impl SessionTable {
    /// An empty table handing out ids of `boot_epoch` (1 ..= u32::MAX).
    pub(crate) fn new(boot_epoch: u64) -> LockResult<Self> {
        if boot_epoch == 0 || boot_epoch > u64::from(u32::MAX) {
            return Err(LockError::Exhausted("boot epochs"));
        }
        Ok(Self {
            id_base: boot_epoch << 32,
            last_sequence: 0,
            sessions: HashMap::new(),
            deadlines: BTreeSet::new(),
        })
    }

    /// Starts a session living `ttl` from `now`.
    pub(crate) fn create(&mut self, ttl: Duration, now: Instant) -> LockResult<SessionId> {
        validate_ttl(ttl)?;
        let deadline = now.checked_add(ttl).ok_or(LockError::InvalidTtl {
            ttl,
            reason: "the deadline is not representable",
        })?;
        let sequence = self
            .last_sequence
            .checked_add(1)
            .ok_or(LockError::Exhausted("session ids"))?;
        self.last_sequence = sequence;
        let id = SessionId(self.id_base | u64::from(sequence));
        self.sessions.insert(
            id,
            SessionEntry {
                ttl,
                deadline,
                owned: BTreeSet::new(),
            },
        );
        self.deadlines.insert((deadline, id));
        Ok(id)
    }

    /// Pushes a live session's deadline to `now + ttl`; false if it is not live.
    /// Expire due sessions first, or a lapsed lease would be revived.
    pub(crate) fn renew(&mut self, id: SessionId, now: Instant) -> bool {
        let Some(entry) = self.sessions.get_mut(&id) else {
            return false;
        };
        let Some(deadline) = now.checked_add(entry.ttl) else {
            return true;
        };
        if deadline > entry.deadline {
            self.deadlines.remove(&(entry.deadline, id));
            entry.deadline = deadline;
            self.deadlines.insert((deadline, id));
        }
        true
    }

    /// True when the session is live.
    pub(crate) fn is_alive(&self, id: SessionId) -> bool {
        self.sessions.contains_key(&id)
    }

    /// Ends a session, returning the paths it owned (`None` if it was not live).
    pub(crate) fn remove(&mut self, id: SessionId) -> Option<BTreeSet<String>> {
        let entry = self.sessions.remove(&id)?;
        self.deadlines.remove(&(entry.deadline, id));
        Some(entry.owned)
    }

    /// Ends the session with the earliest deadline if that deadline is at or before
    /// `now`, returning it and the paths it owned.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<(SessionId, BTreeSet<String>)> {
        let &(deadline, id) = self.deadlines.first()?;
        if deadline > now {
            return None;
        }
        self.deadlines.remove(&(deadline, id));
        let owned = self
            .sessions
            .remove(&id)
            .map(|entry| entry.owned)
            .unwrap_or_default();
        Some((id, owned))
    }

    /// The earliest deadline of any live session.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|&(deadline, _)| deadline)
    }

    /// Records that `id` owns `path` (ignored when `id` is not live).
    pub(crate) fn own(&mut self, id: SessionId, path: &str) {
        if let Some(entry) = self.sessions.get_mut(&id) {
            entry.owned.insert(path.to_owned());
        }
    }

    /// Records that `id` no longer owns `path`.
    pub(crate) fn disown(&mut self, id: SessionId, path: &str) {
        if let Some(entry) = self.sessions.get_mut(&id) {
            entry.owned.remove(path);
        }
    }

    /// Ends every session (the service is shutting down or out of service).
    pub(crate) fn clear(&mut self) {
        self.sessions.clear();
        self.deadlines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_carry_the_boot_epoch_and_never_repeat() {
        let now = Instant::now();
        let mut table = SessionTable::new(3).unwrap();
        let a = table.create(Duration::from_secs(1), now).unwrap();
        let b = table.create(Duration::from_secs(1), now).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.0 >> 32, 3);
        assert_ne!(a.0, 0);
        assert!(SessionTable::new(0).is_err());
    }

    #[test]
    fn due_sessions_pop_in_deadline_order_with_their_files() {
        let now = Instant::now();
        let mut table = SessionTable::new(1).unwrap();
        let late = table.create(Duration::from_secs(10), now).unwrap();
        let early = table.create(Duration::from_secs(1), now).unwrap();
        table.own(early, "/servers/a");
        assert_eq!(table.next_deadline(), Some(now + Duration::from_secs(1)));
        assert!(table.pop_due(now).is_none());
        let (id, owned) = table.pop_due(now + Duration::from_secs(1)).unwrap();
        assert_eq!(id, early);
        assert!(owned.contains("/servers/a"));
        assert!(!table.is_alive(early));
        assert!(table.is_alive(late));
    }

    #[test]
    fn renew_moves_the_deadline_and_fails_for_dead_sessions() {
        let now = Instant::now();
        let mut table = SessionTable::new(1).unwrap();
        let id = table.create(Duration::from_secs(2), now).unwrap();
        assert!(table.renew(id, now + Duration::from_secs(1)));
        assert_eq!(table.next_deadline(), Some(now + Duration::from_secs(3)));
        assert!(table.pop_due(now + Duration::from_secs(2)).is_none());
        assert!(table.remove(id).is_some());
        assert!(!table.renew(id, now));
    }
}
