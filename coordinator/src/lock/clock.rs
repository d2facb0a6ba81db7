//! Time as the embedded lock service sees it, so session expiry can be tested without
//! sleeping.
//!
//! Owns: [`Clock`], the real [`SystemClock`] and the hand-driven [`ManualClock`].
//! Must not: be used for wait timeouts (those are real time).

use std::fmt;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// A monotonic time source.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to.
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    elapsed: Mutex<Duration>,
}

impl ManualClock {
    /// A clock standing at the current real instant.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
            elapsed: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward by `by` (ignored if the instant would be unrepresentable).
    pub fn advance(&self, by: Duration) {
        let mut elapsed = self.elapsed.lock();
        let next = elapsed.saturating_add(by);
        if self.start.checked_add(next).is_some() {
            *elapsed = next;
        }
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        let elapsed = *self.elapsed.lock();
        // `advance` only keeps representable offsets, so this addition succeeds.
        self.start.checked_add(elapsed).unwrap_or(self.start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manual_clock_moves_only_when_advanced() {
        let clock = ManualClock::new();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(Duration::from_secs(5));
        assert_eq!(clock.now().duration_since(t0), Duration::from_secs(5));
        clock.advance(Duration::MAX);
        assert_eq!(clock.now().duration_since(t0), Duration::from_secs(5));
    }
}
