//! Seeded randomness for built-in bots and engines whose rules do not fix a generator.
//!
//! Games whose original contest fixed a generator (NAC: MT19937) implement it themselves; all other
//! chance, including every built-in bot's, comes from [`seeded_rng`] keyed by the match seed and a
//! stream name, so a match is reproducible from its seed.

use rand::SeedableRng;

/// The generator used for seeded chance.
pub type SeedRng = rand_chacha::ChaCha8Rng;

/// Derive an independent 64-bit seed for a named stream (`"seat-3"`, `"roles"`) of a match.
///
/// FNV-1a over the name, mixed with the match seed by SplitMix64: stable across platforms and
/// releases, which replays depend on.
pub fn derive_seed(match_seed: u64, stream: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in stream.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = match_seed ^ h;
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A generator for the named stream of a match.
pub fn seeded_rng(match_seed: u64, stream: &str) -> SeedRng {
    SeedRng::seed_from_u64(derive_seed(match_seed, stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_distinct() {
        assert_eq!(derive_seed(1, "seat-0"), derive_seed(1, "seat-0"));
        assert_ne!(derive_seed(1, "seat-0"), derive_seed(1, "seat-1"));
        assert_ne!(derive_seed(1, "seat-0"), derive_seed(2, "seat-0"));
    }
}
