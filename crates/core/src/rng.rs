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

/// A keyed hash of the match seed: 64 bits of HMAC-SHA256 keyed by the seed over `label`.
/// Unlike [`derive_seed`], whose mixing can be undone, nothing about the seed (nor about any
/// other label's value) can be learnt from it: use it for whatever derived from the seed is
/// shown to a bot.
pub fn keyed_seed(match_seed: u64, label: &str) -> u64 {
    use hmac::{Hmac, Mac};
    let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(&match_seed.to_le_bytes())
        .expect("HMAC takes a key of any length");
    mac.update(b"kakehiki/");
    mac.update(label.as_bytes());
    let out = mac.finalize().into_bytes();
    let mut first = [0u8; 8];
    first.copy_from_slice(&out[..8]);
    u64::from_le_bytes(first)
}

/// The seed process bot `seat` (0-based) is given (`KAKEHIKI_SEED`) instead of the match seed:
/// a keyed hash of the match seed and the seat, below 2^63 so that every language reads it as a
/// signed 64-bit integer. It tells a bot nothing about the match seed, which deals the hidden
/// information (roles, the built-in bots' choices), nor about any other seat's seed.
pub fn seat_seed(match_seed: u64, seat: usize) -> u64 {
    keyed_seed(match_seed, &format!("seat-seed/{seat}")) >> 1
}

/// A seed for a match or a run nobody gave one: 63 bits from the operating system's generator
/// (below 2^63, so that every language reads it as a signed 64-bit integer). Never the clock: a
/// bot knows the time to the second, and a seed it can guess deals it the hidden information.
pub fn fresh_seed() -> u64 {
    use rand::RngCore;
    rand::rngs::OsRng.next_u64() >> 1
}

/// `bytes` random bytes from the operating system's generator, as lowercase hex: a secret (a
/// session, a token, the key of a person's seat).
pub fn secret_hex(bytes: usize) -> String {
    use rand::RngCore;
    let mut b = vec![0u8; bytes];
    rand::rngs::OsRng.fill_bytes(&mut b);
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Whether `given` is the non-empty secret `secret`, compared without telling through its time
/// how much of it was guessed right.
pub fn same_secret(secret: &str, given: &str) -> bool {
    use subtle::ConstantTimeEq;
    !secret.is_empty() && bool::from(secret.as_bytes().ct_eq(given.as_bytes()))
}

/// A generator for the named stream of a match.
pub fn seeded_rng(match_seed: u64, stream: &str) -> SeedRng {
    SeedRng::seed_from_u64(derive_seed(match_seed, stream))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_seeds_are_below_2_63_and_not_the_clock() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap();
        let seeds: Vec<u64> = (0..8).map(|_| fresh_seed()).collect();
        for &s in &seeds {
            assert!(s < 1 << 63);
            // Not the time in milliseconds or nanoseconds, give or take a day.
            for (t, day) in [
                (now.as_millis() as u64, 86_400_000),
                (now.as_nanos() as u64, 86_400_000_000_000),
            ] {
                assert!(s.abs_diff(t) > day, "{s} is the clock");
            }
        }
        let distinct: std::collections::BTreeSet<u64> = seeds.iter().copied().collect();
        assert_eq!(distinct.len(), seeds.len());
    }

    #[test]
    fn streams_are_stable_and_distinct() {
        assert_eq!(derive_seed(1, "seat-0"), derive_seed(1, "seat-0"));
        assert_ne!(derive_seed(1, "seat-0"), derive_seed(1, "seat-1"));
        assert_ne!(derive_seed(1, "seat-0"), derive_seed(2, "seat-0"));
    }

    #[test]
    fn seat_seeds_are_stable_distinct_and_signed_64_bit() {
        // Fixed values: bots that seed from KAKEHIKI_SEED replay the same match from a replay.
        assert_eq!(seat_seed(2014, 0), seat_seed(2014, 0));
        let seeds: std::collections::BTreeSet<u64> = (0..16)
            .flat_map(|s| (0..15).map(move |seat| seat_seed(s, seat)))
            .collect();
        assert_eq!(seeds.len(), 16 * 15);
        assert!(seeds.iter().all(|&s| s <= i64::MAX as u64));
        // Not the seed, and not the mixing derive_seed uses (which can be undone).
        for seed in 0..64u64 {
            for seat in 0..4 {
                let s = seat_seed(seed, seat);
                assert_ne!(s, seed);
                assert_ne!(s, derive_seed(seed, &format!("seat-{seat}")));
                assert_ne!(s, derive_seed(seed, &format!("seat-{seat}")) >> 1);
            }
        }
    }

    #[test]
    fn keyed_seed_is_hmac_sha256_of_the_label() {
        // HMAC-SHA256(key = 2014u64 LE, "kakehiki/x"), first 8 bytes LE, computed independently
        // (Python: hmac.new((2014).to_bytes(8, "little"), b"kakehiki/x", "sha256")).
        assert_eq!(keyed_seed(2014, "x"), 4_450_286_216_548_032_840);
    }
}
