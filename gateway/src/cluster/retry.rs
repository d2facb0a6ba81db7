//! When the cluster backend sends a call again, and how long it keeps at it.
//!
//! Owns: which failures mean "look the tablet up again and resend" ([`resend`]),
//! which calls may be resent after a connection broke under them ([`Resend`]), and
//! the pauses between attempts ([`Backoff`]): a tablet that moved, split, or whose
//! server died is found again within [`RELOCATE_TIMEOUT`], as HBase's client keeps
//! retrying while regions move.
//! Must not: route rows or call regionservers itself.

use std::time::{Duration, Instant};

use tabula_regionserver::RsError;

use crate::backend::BackendError;

/// How long a call keeps relocating its tablet while regionservers answer "not
/// serving" (a split or move in progress) or cannot be reached (a dead server
/// whose tablets the coordinator has not moved yet) before that answer is
/// returned. A split keeps its parent closed for its final flush and the catalog
/// update, which under a heavy load takes seconds; a dead server's tablets move
/// once its lease lapses; HBase clients likewise retry for a long while.
pub const RELOCATE_TIMEOUT: Duration = Duration::from_secs(30);
/// First pause between relocations; it doubles up to [`MAX_RELOCATE_PAUSE`].
const FIRST_RELOCATE_PAUSE: Duration = Duration::from_millis(5);
const MAX_RELOCATE_PAUSE: Duration = Duration::from_millis(250);

/// Whether a call may be sent again when the connection broke under it (the
/// server may or may not have carried it out). HBase's client resends reads,
/// puts and deletes; increments, appends and check-and-mutates it does not resend
/// without a nonce, since carrying one out twice changes the outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resend {
    /// A read, or a write whose second application leaves the row as the first.
    Safe,
    /// A read-modify-write: a lost connection is reported to the caller.
    Unsafe,
}

/// True when the call that failed with `e` should go again to wherever its tablet
/// is now: the server said it does not serve the tablet, could not be reached at
/// all, or (for a call that may be resent) lost the connection under the call.
pub fn resend(e: &RsError, kind: Resend) -> bool {
    e.is_not_serving() || (kind == Resend::Safe && e.is_interrupted())
}

/// True when a failure to locate a row's tablet may pass (the catalog's server is
/// moving or the tablet is between servers): lookups report those as retryable.
pub fn lookup_may_pass(e: &BackendError) -> bool {
    e.can_retry()
}

/// The pauses between the attempts of one call: doubling from 5 ms to 250 ms,
/// for at most [`RELOCATE_TIMEOUT`] from the first failure. The clock is read
/// only once a call has failed.
#[derive(Debug)]
pub struct Backoff {
    deadline: Option<Instant>,
    pause: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff::new()
    }
}

impl Backoff {
    pub fn new() -> Self {
        Backoff {
            deadline: None,
            pause: FIRST_RELOCATE_PAUSE,
        }
    }

    /// Sleeps before the next attempt; false, without sleeping, when that attempt
    /// would start past the deadline (the caller returns its last failure).
    pub fn wait(&mut self) -> bool {
        let now = Instant::now();
        let deadline = *self.deadline.get_or_insert(now + RELOCATE_TIMEOUT);
        if now + self.pause > deadline {
            return false;
        }
        std::thread::sleep(self.pause);
        self.pause = (self.pause * 2).min(MAX_RELOCATE_PAUSE);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tabula_regionserver::RemoteFailure;

    fn interrupted() -> RsError {
        RsError::Interrupted {
            server: "rs:1".into(),
            message: "transport error".into(),
        }
    }

    #[test]
    fn only_calls_that_may_go_twice_are_resent_after_a_broken_connection() {
        assert!(resend(&interrupted(), Resend::Safe));
        assert!(!resend(&interrupted(), Resend::Unsafe));
        let moved = RsError::NotServing { tablet: 7 };
        assert!(resend(&moved, Resend::Safe) && resend(&moved, Resend::Unsafe));
        let refused = RsError::Remote {
            kind: RemoteFailure::InvalidArgument,
            message: "bad row".into(),
        };
        assert!(!resend(&refused, Resend::Safe));
        let unknown = RsError::Remote {
            kind: RemoteFailure::Other { permanent: false },
            message: "no answer within 60s".into(),
        };
        assert!(!resend(&unknown, Resend::Safe));
    }

    #[test]
    fn backoff_doubles_its_pauses_and_stops_at_the_deadline() {
        let mut b = Backoff::new();
        let started = Instant::now();
        for _ in 0..4 {
            assert!(b.wait());
        }
        // 5 + 10 + 20 + 40 ms.
        assert!(started.elapsed() >= Duration::from_millis(75));
        assert_eq!(b.pause, Duration::from_millis(80));
        b.deadline = Some(Instant::now());
        let before = Instant::now();
        assert!(!b.wait());
        assert!(before.elapsed() < FIRST_RELOCATE_PAUSE);
    }
}
