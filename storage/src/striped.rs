//! A counter many threads bump without sharing a cache line.
//!
//! Owns: [`StripedCounter`], for hit/miss and call counters on hot paths: each
//! thread adds to its own stripe, and reading sums the stripes.
//! Must not: be used where a reader needs an exact value at one instant while
//! writers run (the sum is a moment-by-moment approximation).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stripes of a [`StripedCounter`]: enough that the threads of a 2-16 core server
/// rarely share one.
const COUNTER_STRIPES: usize = 16;

/// A counter bumped by many threads: each thread adds to its own stripe (its own
/// cache line), so concurrent hits do not pass one line back and forth between
/// cores; reading sums the stripes.
#[derive(Default)]
pub struct StripedCounter {
    stripes: [PaddedCounter; COUNTER_STRIPES],
}

/// One stripe, alone on its cache lines.
#[derive(Default)]
#[repr(align(128))]
struct PaddedCounter(AtomicU64);

/// Hands each thread its stripe number in turn.
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static STRIPE: usize = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % COUNTER_STRIPES;
}

impl StripedCounter {
    /// Adds one on the calling thread's stripe.
    pub fn add_one(&self) {
        let i = STRIPE.with(|s| *s);
        if let Some(stripe) = self.stripes.get(i) {
            stripe.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Adds one on the calling thread's stripe, and says whether that stripe's
    /// count is now a multiple of `every` (for sampling one call in `every`).
    pub fn add_one_sampled(&self, every: u64) -> bool {
        let i = STRIPE.with(|s| *s);
        self.stripes.get(i).is_some_and(|stripe| {
            let now = stripe.0.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
            every != 0 && now % every == 0
        })
    }

    /// The sum of the stripes.
    pub fn sum(&self) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .fold(0u64, u64::wrapping_add)
    }
}

impl std::fmt::Debug for StripedCounter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("StripedCounter").field(&self.sum()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_what_every_thread_added() {
        let counter = std::sync::Arc::new(StripedCounter::default());
        let threads: Vec<_> = (0..20)
            .map(|_| {
                let c = std::sync::Arc::clone(&counter);
                std::thread::spawn(move || (0..1000).for_each(|_| c.add_one()))
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.sum(), 20_000);
    }
}
