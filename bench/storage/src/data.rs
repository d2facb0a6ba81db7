//! Keys and values both engines receive, byte for byte.
//!
//! Owns: the key format (16-byte zero-padded decimal, so numeric order is byte
//! order), the value pool (half random, half repetitive bytes: about 2:1 under
//! zstd, like db_bench's default compression ratio of 0.5), and the seeded
//! orders in which keys are written and read.
//! Must not: talk to either engine.

use bytes::Bytes;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// Length of every row key.
pub const KEY_LEN: usize = 16;

/// Extra pool bytes beyond one value, so that values start at many offsets.
const POOL_SPREAD: usize = 1 << 20;

/// Random bytes followed by as many repeated bytes, alternating.
const RUN_LEN: usize = 16;

/// The row key of key number `i`: its decimal digits, zero padded to 16 bytes.
pub fn key(i: u64) -> [u8; KEY_LEN] {
    let mut out = [b'0'; KEY_LEN];
    let mut rest = i;
    for slot in out.iter_mut().rev() {
        // `rest % 10` is below 10, so the digit fits a byte.
        *slot = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out
}

/// A shared buffer that values are cut from without copying.
pub struct ValuePool {
    pool: Bytes,
    value_size: usize,
}

impl ValuePool {
    /// A pool of values of `value_size` bytes.
    pub fn new(value_size: usize, seed: u64) -> Self {
        let mut rng = StdRng::seed_from_u64(seed);
        let len = value_size.saturating_add(POOL_SPREAD);
        let mut buf = Vec::with_capacity(len);
        while buf.len() < len {
            for _ in 0..RUN_LEN {
                buf.push(rng.gen::<u8>());
            }
            let filler: u8 = rng.gen();
            buf.extend(std::iter::repeat_n(filler, RUN_LEN));
        }
        buf.truncate(len);
        ValuePool {
            pool: Bytes::from(buf),
            value_size,
        }
    }

    /// The value written for key number `i`.
    pub fn value(&self, i: u64) -> Bytes {
        let starts = (self.pool.len() - self.value_size) as u64 + 1;
        // Below `starts`, which is at most the pool length: the cast cannot truncate.
        let offset = (i.wrapping_mul(7_919) % starts) as usize;
        self.pool.slice(offset..offset + self.value_size)
    }
}

/// The numbers `0..n` in a seeded random order.
pub fn shuffled(n: u64, seed: u64) -> Vec<u64> {
    let mut order: Vec<u64> = (0..n).collect();
    order.shuffle(&mut StdRng::seed_from_u64(seed));
    order
}

/// `count` numbers drawn uniformly from `0..below` (with repetition).
pub fn uniform(count: u64, below: u64, seed: u64) -> Vec<u64> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count).map(|_| rng.gen_range(0..below.max(1))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_fixed_width_and_sort_numerically() {
        assert_eq!(&key(0), b"0000000000000000");
        assert_eq!(&key(42), b"0000000000000042");
        assert_eq!(&key(9_999_999_999_999_999), b"9999999999999999");
        for i in [0u64, 9, 10, 99, 100, 12_345, 999_999] {
            assert!(
                key(i) < key(i + 1),
                "key({i}) must sort before key({})",
                i + 1
            );
        }
    }

    #[test]
    fn values_have_the_requested_size_and_vary() {
        let pool = ValuePool::new(1024, 7);
        let a = pool.value(1);
        let b = pool.value(2);
        assert_eq!(a.len(), 1024);
        assert_eq!(b.len(), 1024);
        assert_ne!(a, b);
        assert_eq!(pool.value(1), a, "values are deterministic");
    }

    #[test]
    fn values_compress_about_two_to_one() {
        let pool = ValuePool::new(64 * 1024, 3);
        let block = pool.value(5);
        let packed = unrepeated_share(&block);
        assert!((0.4..0.75).contains(&packed), "ratio {packed}");
    }

    /// Share of bytes that do not repeat their predecessor: a proxy for what a
    /// compressor has to keep.
    fn unrepeated_share(data: &[u8]) -> f64 {
        let repeated = data.windows(2).filter(|w| w[0] == w[1]).count();
        1.0 - repeated as f64 / data.len() as f64
    }

    #[test]
    fn shuffled_is_a_permutation() {
        let mut order = shuffled(1000, 11);
        assert_ne!(order, (0..1000).collect::<Vec<_>>());
        order.sort_unstable();
        assert_eq!(order, (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn uniform_stays_in_range() {
        let draws = uniform(10_000, 37, 5);
        assert_eq!(draws.len(), 10_000);
        assert!(draws.iter().all(|&d| d < 37));
        assert!(draws.contains(&0) && draws.contains(&36));
    }
}
