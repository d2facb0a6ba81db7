//! Row keys and the distributions that pick them.
//!
//! Owns: the key formats of both workload families (Bigtable: `row` + 10-digit
//! zero-padded index, so index order is key order; YCSB: `user` + the FNV-1a hash of
//! the record number, so inserts land all over the key space) and [`KeyChooser`]
//! (uniform, scrambled zipfian, latest).
//! Must not: do I/O.

use std::hash::Hasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::Rng;
use rand_distr::{Distribution, Zipf};

/// YCSB's zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;

/// Digits of a Bigtable workload's row index: at least this many, zero-padded.
const BIGTABLE_ROW_DIGITS: usize = 10;

/// Row key of record `i` in the Bigtable workloads: `row` and the index, zero-padded
/// to ten digits (`format!("row{i:010}")`, written without the formatting machinery,
/// which was 3.5% of the load generator's CPU in one-get calls).
pub fn bigtable_row(i: u64) -> Vec<u8> {
    // u64::MAX has 20 digits.
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    let mut rest = i;
    loop {
        start -= 1;
        if let Some(d) = digits.get_mut(start) {
            *d = b'0' + (rest % 10) as u8;
        }
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let start = start.min(digits.len() - BIGTABLE_ROW_DIGITS);
    let mut key = Vec::with_capacity(3 + digits.len() - start);
    key.extend_from_slice(b"row");
    key.extend_from_slice(digits.get(start..).unwrap_or_default());
    key
}

/// FNV-1a of the record number's little-endian bytes.
fn fnv64(n: u64) -> u64 {
    let mut h = fnv::FnvHasher::default();
    h.write(&n.to_le_bytes());
    h.finish()
}

/// Row key of record `n` in the YCSB workloads.
pub fn ycsb_row(n: u64) -> Vec<u8> {
    format!("user{}", fnv64(n)).into_bytes()
}

/// How a workload picks which existing record to touch.
pub enum KeyChooser {
    /// Every record in `0..n` equally likely.
    Uniform { n: u64 },
    /// Zipfian popularity over `0..n`, with the popular records spread over the key
    /// space by hashing the rank (YCSB's scrambled zipfian).
    ScrambledZipfian { n: u64, zipf: Zipf<f64> },
    /// Zipfian over recency: the newest inserted record is the most popular.
    Latest { inserted: Arc<AtomicU64> },
}

impl KeyChooser {
    /// Uniform over `0..n` (`n` of at least 1).
    pub fn uniform(n: u64) -> KeyChooser {
        KeyChooser::Uniform { n: n.max(1) }
    }

    /// Scrambled zipfian over `0..n`.
    pub fn scrambled_zipfian(n: u64) -> KeyChooser {
        let n = n.max(1);
        match Zipf::new(n, ZIPFIAN_CONSTANT) {
            Ok(zipf) => KeyChooser::ScrambledZipfian { n, zipf },
            // Only a zero count or a negative exponent is refused; neither occurs.
            Err(_) => KeyChooser::uniform(n),
        }
    }

    /// Latest-first over the records inserted so far (`inserted` counts them).
    pub fn latest(inserted: Arc<AtomicU64>) -> KeyChooser {
        KeyChooser::Latest { inserted }
    }

    /// The next record number.
    pub fn next(&self, rng: &mut impl Rng) -> u64 {
        match self {
            KeyChooser::Uniform { n } => rng.gen_range(0..*n),
            KeyChooser::ScrambledZipfian { n, zipf } => {
                let rank = zipf.sample(rng) as u64;
                fnv64(rank) % n
            }
            KeyChooser::Latest { inserted } => {
                let count = inserted.load(Ordering::Acquire).max(1);
                let rank = match Zipf::new(count, ZIPFIAN_CONSTANT) {
                    Ok(z) => z.sample(rng) as u64,
                    Err(_) => 1,
                };
                count - rank.clamp(1, count)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    #[test]
    fn bigtable_keys_sort_in_index_order() {
        let keys: Vec<Vec<u8>> = [0u64, 9, 10, 99, 1_000_000].map(bigtable_row).to_vec();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(bigtable_row(42), b"row0000000042".to_vec());
    }

    #[test]
    fn bigtable_keys_are_the_zero_padded_index() {
        let edges = [
            0,
            1,
            9,
            10,
            9_999_999_999,
            10_000_000_000,
            u64::MAX / 7,
            u64::MAX,
        ];
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let random = (0..10_000).map(|_| rng.gen::<u64>() >> rng.gen_range(0..64));
        for i in edges.into_iter().chain(random) {
            assert_eq!(
                bigtable_row(i),
                format!("row{i:010}").into_bytes(),
                "index {i}"
            );
        }
    }

    #[test]
    fn ycsb_keys_are_distinct_and_stable() {
        let a: std::collections::HashSet<Vec<u8>> = (0..10_000).map(ycsb_row).collect();
        assert_eq!(a.len(), 10_000);
        assert_eq!(ycsb_row(7), ycsb_row(7));
        assert!(ycsb_row(7).starts_with(b"user"));
    }

    #[test]
    fn uniform_stays_in_range_and_covers_it() {
        let mut rng = StdRng::seed_from_u64(1);
        let c = KeyChooser::uniform(10);
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            let k = c.next(&mut rng);
            assert!(k < 10);
            seen[k as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 800), "{seen:?}");
    }

    #[test]
    fn zipfian_is_skewed_and_in_range() {
        let mut rng = StdRng::seed_from_u64(2);
        let n = 1000;
        let c = KeyChooser::scrambled_zipfian(n);
        let mut counts = vec![0u32; n as usize];
        for _ in 0..100_000 {
            let k = c.next(&mut rng);
            assert!(k < n);
            counts[k as usize] += 1;
        }
        counts.sort_unstable_by(|a, b| b.cmp(a));
        // The most popular record gets far more than a uniform share (100).
        assert!(counts[0] > 5_000, "top record drew {}", counts[0]);
        // The popular records are not the lowest record numbers only.
        assert!(counts[500] > 0);
    }

    #[test]
    fn latest_prefers_the_newest_records() {
        let mut rng = StdRng::seed_from_u64(3);
        let inserted = Arc::new(AtomicU64::new(1000));
        let c = KeyChooser::latest(Arc::clone(&inserted));
        let newest = (0..10_000).filter(|_| c.next(&mut rng) >= 990).count();
        assert!(newest > 3_000, "{newest} of 10000 in the newest 10");
        inserted.store(2000, Ordering::Release);
        assert!((0..1000).all(|_| c.next(&mut rng) < 2000));
        assert!((0..1000).any(|_| c.next(&mut rng) >= 1000));
    }

    #[test]
    fn same_seed_same_keys() {
        let c = KeyChooser::scrambled_zipfian(1_000_000);
        let mut a = StdRng::seed_from_u64(9);
        let mut b = StdRng::seed_from_u64(9);
        let xs: Vec<u64> = (0..100).map(|_| c.next(&mut a)).collect();
        let ys: Vec<u64> = (0..100).map(|_| c.next(&mut b)).collect();
        assert_eq!(xs, ys);
    }
}
