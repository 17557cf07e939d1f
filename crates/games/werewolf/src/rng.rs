//! The game's random streams (§2.9): ChaCha8 keyed by the game seed, one stream per purpose.

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub const STREAM_DEAL: u64 = 1;
pub const STREAM_TALK: u64 = 2;
pub const STREAM_WHISPER: u64 = 3;
pub const STREAM_SUBSTITUTE: u64 = 4;
pub const STREAM_TIE: u64 = 5;
pub const STREAM_WIRE_SEED: u64 = 6;

/// `ChaCha8Rng::from_seed(seed as 8 LE bytes + 24 zero bytes)` with `set_stream(k)`.
pub fn stream(seed: u64, k: u64) -> ChaCha8Rng {
    let mut key = [0u8; 32];
    key[..8].copy_from_slice(&seed.to_le_bytes());
    let mut r = ChaCha8Rng::from_seed(key);
    r.set_stream(k);
    r
}

/// Uniform integer in `[0, n)`: Lemire's multiply-and-reject on `next_u64`. `n` must be > 0.
pub fn uniform(rng: &mut impl RngCore, n: u64) -> u64 {
    debug_assert!(n > 0);
    let n = n.max(1);
    let mut m = u128::from(rng.next_u64()) * u128::from(n);
    let mut low = m as u64;
    if low < n {
        let threshold = n.wrapping_neg() % n;
        while low < threshold {
            m = u128::from(rng.next_u64()) * u128::from(n);
            low = m as u64;
        }
    }
    (m >> 64) as u64
}

/// Fisher–Yates from the last index down.
pub fn shuffle<T>(rng: &mut impl RngCore, v: &mut [T]) {
    for i in (1..v.len()).rev() {
        let j = uniform(rng, i as u64 + 1) as usize;
        v.swap(i, j);
    }
}

/// One element of a (non-empty, ascending) list.
pub fn pick<T: Copy>(rng: &mut impl RngCore, v: &[T]) -> Option<T> {
    if v.is_empty() {
        None
    } else {
        Some(v[uniform(rng, v.len() as u64) as usize])
    }
}

/// The `randomSeed` sent in `gameSetting`: the first `next_u64` of stream 6, as i64.
pub fn wire_random_seed(seed: u64) -> i64 {
    stream(seed, STREAM_WIRE_SEED).next_u64() as i64
}

/// Successive game seeds of a run (stream 0 of ChaCha8(runSeed)).
pub struct RunSeeds(ChaCha8Rng);

impl RunSeeds {
    pub fn new(run_seed: u64) -> Self {
        RunSeeds(stream(run_seed, 0))
    }
}

impl Iterator for RunSeeds {
    type Item = u64;
    fn next(&mut self) -> Option<u64> {
        Some(self.0.next_u64())
    }
}

/// The run-level stream for seat numbering and table draws (stream 1 of the run seed).
pub fn run_table_stream(run_seed: u64) -> ChaCha8Rng {
    stream(run_seed, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_stays_in_range_and_covers_it() {
        let mut r = stream(7, 2);
        let mut seen = [0u32; 7];
        for _ in 0..7000 {
            let x = uniform(&mut r, 7) as usize;
            seen[x] += 1;
        }
        assert!(seen.iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn streams_differ_and_repeat() {
        assert_eq!(stream(1, 2).next_u64(), stream(1, 2).next_u64());
        assert_ne!(stream(1, 2).next_u64(), stream(1, 3).next_u64());
        assert_ne!(stream(1, 2).next_u64(), stream(2, 2).next_u64());
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<u32> = (0..15).collect();
        shuffle(&mut stream(3, 1), &mut v);
        let mut s = v.clone();
        s.sort();
        assert_eq!(s, (0..15).collect::<Vec<_>>());
        assert_ne!(v, (0..15).collect::<Vec<_>>());
    }
}
