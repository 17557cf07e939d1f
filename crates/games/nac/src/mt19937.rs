//! The 32-bit Mersenne Twister (MT19937, 2002 reference version), seeded with `init_genrand`.
//!
//! The original referee used it to draw the weights, and nothing else; reproducing original games
//! seed for seed needs this exact generator, so it is implemented here rather than taken from a
//! general-purpose crate whose seeding may differ.

const N: usize = 624;
const M: usize = 397;
const MATRIX_A: u32 = 0x9908_b0df;
const UPPER_MASK: u32 = 0x8000_0000;
const LOWER_MASK: u32 = 0x7fff_ffff;

/// MT19937 state.
#[derive(Clone)]
pub struct Mt19937 {
    mt: [u32; N],
    mti: usize,
}

impl Mt19937 {
    /// `init_genrand(seed)`.
    pub fn new(seed: u32) -> Self {
        let mut mt = [0u32; N];
        mt[0] = seed;
        for i in 1..N {
            mt[i] = 1_812_433_253u32
                .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
                .wrapping_add(i as u32);
        }
        Mt19937 { mt, mti: N }
    }

    fn twist(&mut self) {
        for i in 0..N {
            let y = (self.mt[i] & UPPER_MASK) | (self.mt[(i + 1) % N] & LOWER_MASK);
            let mut v = self.mt[(i + M) % N] ^ (y >> 1);
            if y & 1 != 0 {
                v ^= MATRIX_A;
            }
            self.mt[i] = v;
        }
        self.mti = 0;
    }

    /// `genrand_int32()`.
    pub fn next_u32(&mut self) -> u32 {
        if self.mti >= N {
            self.twist();
        }
        let y = self.mt[self.mti];
        self.mti += 1;
        temper(y)
    }
}

/// How many leading outputs [`first_outputs`] can compute without a full twist.
pub const FIRST_OUTPUTS_MAX: usize = N - M;

/// `out.len()` leading outputs of `Mt19937::new(seed)`, identical to calling `next_u32` that
/// many times, computing only the state words they depend on: output k needs the twisted word
/// k, which reads the initial words k, k+1 and k+M. Drawing a game's 6 weights this way
/// initialises 403 words and twists 6 instead of 624 and 624.
///
/// # Panics
/// If `out.len() > FIRST_OUTPUTS_MAX`.
pub fn first_outputs(seed: u32, out: &mut [u32]) {
    let k = out.len();
    assert!(
        k <= FIRST_OUTPUTS_MAX,
        "first_outputs computes at most {FIRST_OUTPUTS_MAX} outputs"
    );
    if k == 0 {
        return;
    }
    let mut mt = [0u32; N];
    mt[0] = seed;
    for i in 1..M + k {
        mt[i] = 1_812_433_253u32
            .wrapping_mul(mt[i - 1] ^ (mt[i - 1] >> 30))
            .wrapping_add(i as u32);
    }
    for (i, o) in out.iter_mut().enumerate() {
        let y = (mt[i] & UPPER_MASK) | (mt[i + 1] & LOWER_MASK);
        let mut v = mt[i + M] ^ (y >> 1);
        if y & 1 != 0 {
            v ^= MATRIX_A;
        }
        *o = temper(v);
    }
}

/// MT19937's output tempering.
fn temper(mut y: u32) -> u32 {
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c_5680;
    y ^= (y << 15) & 0xefc6_0000;
    y ^= y >> 18;
    y
}

/// The weights of a game: `count` outputs, each mapped to `3 + (u >> 30)` (§1.2).
pub fn weights(seed: u32, count: usize) -> Vec<u8> {
    let mut mt = Mt19937::new(seed);
    (0..count)
        .map(|_| 3 + (mt.next_u32() >> 30) as u8)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_test_vectors() {
        let cases: [(u32, u32, [u8; 6]); 8] = [
            (5489, 3_499_211_612, [6, 3, 6, 6, 3, 6]),
            (0, 2_357_136_044, [5, 5, 5, 6, 5, 6]),
            (1, 1_791_095_845, [4, 6, 5, 6, 3, 3]),
            (42, 1_608_637_542, [4, 6, 6, 3, 5, 6]),
            (2014, 797_065_168, [3, 5, 4, 5, 4, 3]),
            (1108, 3_593_082_266, [6, 3, 5, 3, 5, 6]),
            (12345, 3_992_670_690, [6, 6, 4, 3, 3, 3]),
            (4_294_967_295, 419_326_371, [3, 3, 6, 5, 6, 5]),
        ];
        for (seed, first, w) in cases {
            assert_eq!(Mt19937::new(seed).next_u32(), first, "seed {seed}");
            assert_eq!(weights(seed, 6), w, "seed {seed}");
        }
    }

    #[test]
    fn reference_sequence_continues_past_one_twist() {
        // C++11 requires the 10000th output of a default-seeded std::mt19937 (seed 5489) to be
        // 4123659995.
        let mut mt = Mt19937::new(5489);
        let mut v = 0;
        for _ in 0..10000 {
            v = mt.next_u32();
        }
        assert_eq!(v, 4_123_659_995);
    }

    #[test]
    fn first_outputs_equal_the_generator() {
        let mut seeds = vec![0, 1, 42, 2014, 1108, 5489, u32::MAX];
        let mut x = 0x1234_5678u32;
        for _ in 0..200 {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            seeds.push(x);
        }
        for seed in seeds {
            let mut mt = Mt19937::new(seed);
            let want: Vec<u32> = (0..FIRST_OUTPUTS_MAX).map(|_| mt.next_u32()).collect();
            for k in [0, 1, 6, 8, 100, FIRST_OUTPUTS_MAX] {
                let mut got = vec![0; k];
                first_outputs(seed, &mut got);
                assert_eq!(got, want[..k], "seed {seed}, {k} outputs");
            }
        }
    }

    #[test]
    fn imported_seeds_are_reduced_like_the_original() {
        assert_eq!(crate::reduce_seed(-1), 4_294_967_295);
        assert_eq!(crate::reduce_seed(1_415_000_000_000), 1_955_759_616);
        assert_eq!(weights(1_955_759_616, 6), [3, 6, 6, 5, 6, 6]);
    }
}
