//! Sequence numbers and the visibility point of a tablet.
//!
//! Owns: allocation of a tablet's sequence numbers and the "visible" sequence number
//! readers snapshot: the highest number such that every write at or below it has
//! completed (been made durable as asked). A RowMutation's cells are inserted under
//! one number, so a reader at any snapshot sees all of a mutation or none of it.
//!
//! A write is acknowledged as soon as it completes, possibly while a write numbered
//! before it is still in flight, so the visible number can trail the completed
//! ones. A reader therefore takes its snapshot through [`Mvcc::read_point`], which
//! first waits until every write completed so far is visible: a read that starts
//! after a write's acknowledgement sees it (read-your-writes), and writers never
//! wait for one another.
//! Must not: know what a write contains.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::{Condvar, Mutex};

#[derive(Debug, Default)]
struct State {
    last_assigned: u64,
    in_flight: BTreeSet<u64>,
}

/// Allocates sequence numbers and tracks the visibility point.
#[derive(Debug, Default)]
pub struct Mvcc {
    state: Mutex<State>,
    visible: AtomicU64,
    /// The highest number completed so far.
    completed: AtomicU64,
    advanced: Condvar,
}

impl Mvcc {
    /// A tracker whose first number will be `last + 1`, with everything up to `last`
    /// visible.
    pub fn new(last: u64) -> Self {
        Mvcc {
            state: Mutex::new(State {
                last_assigned: last,
                in_flight: BTreeSet::new(),
            }),
            visible: AtomicU64::new(last),
            completed: AtomicU64::new(last),
            advanced: Condvar::new(),
        }
    }

    /// Takes the next number; it stays invisible until [`Mvcc::complete`].
    pub fn begin(&self) -> u64 {
        let mut s = self.state.lock();
        s.last_assigned += 1;
        let seq = s.last_assigned;
        s.in_flight.insert(seq);
        seq
    }

    /// Marks `seq` finished; the visibility point advances over finished numbers.
    pub fn complete(&self, seq: u64) {
        let mut s = self.state.lock();
        s.in_flight.remove(&seq);
        let visible = match s.in_flight.first() {
            Some(&first) => first - 1,
            None => s.last_assigned,
        };
        self.visible.fetch_max(visible, Ordering::AcqRel);
        self.completed.fetch_max(seq, Ordering::AcqRel);
        self.advanced.notify_all();
    }

    /// The highest number below which every write is complete (no waiting).
    pub fn visible(&self) -> u64 {
        self.visible.load(Ordering::Acquire)
    }

    /// The snapshot a new reader uses: waits until every write completed (and so
    /// possibly acknowledged) before this call is visible, then returns the
    /// visible number.
    pub fn read_point(&self) -> u64 {
        let completed = self.completed.load(Ordering::Acquire);
        let visible = self.visible.load(Ordering::Acquire);
        if visible >= completed {
            return visible;
        }
        self.wait_visible(completed);
        self.visible.load(Ordering::Acquire)
    }

    /// The last number handed out.
    pub fn last_assigned(&self) -> u64 {
        self.state.lock().last_assigned
    }

    /// Blocks until every number up to `seq` is visible.
    pub fn wait_visible(&self, seq: u64) {
        if self.visible.load(Ordering::Acquire) >= seq {
            return;
        }
        let mut s = self.state.lock();
        while self.visible.load(Ordering::Acquire) < seq {
            self.advanced.wait(&mut s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visibility_waits_for_earlier_writes() {
        let m = Mvcc::new(10);
        assert_eq!(m.visible(), 10);
        let a = m.begin();
        let b = m.begin();
        assert_eq!((a, b), (11, 12));
        m.complete(b);
        assert_eq!(m.visible(), 10, "11 still in flight");
        m.complete(a);
        assert_eq!(m.visible(), 12);
        m.wait_visible(12);
        assert_eq!(m.last_assigned(), 12);
    }

    #[test]
    fn a_read_point_covers_every_completed_write() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let a = m.begin();
        let b = m.begin();
        m.complete(b);
        assert_eq!(m.visible(), 0);
        let reader = {
            let m = std::sync::Arc::clone(&m);
            std::thread::spawn(move || m.read_point())
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!reader.is_finished(), "{b} is complete but not yet visible");
        m.complete(a);
        assert_eq!(reader.join().ok(), Some(b));
        // Nothing completed beyond the visible point: no wait.
        let c = m.begin();
        assert_eq!(m.read_point(), b, "{c} is in flight, not completed");
    }

    #[test]
    fn a_wait_ends_when_the_earlier_write_completes() {
        let m = std::sync::Arc::new(Mvcc::new(0));
        let a = m.begin();
        let b = m.begin();
        m.complete(b);
        let waiter = {
            let m = std::sync::Arc::clone(&m);
            std::thread::spawn(move || {
                m.wait_visible(b);
                m.visible()
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !waiter.is_finished(),
            "{b} is not visible while {a} is in flight"
        );
        m.complete(a);
        assert_eq!(waiter.join().ok(), Some(b));
    }
}
