//! In-process play: the non-allocating fast path (`play_to_end`, `pick_into`) gives exactly the
//! games the public per-seat API gives, and `random` draws what it always drew.

use kakehiki_core::seeded_rng;
use kakehiki_nac::bots::{make_bot, play_to_end, NacBot, RandomBot};
use kakehiki_nac::{Params, State, NUM_SEATS};
use rand::Rng;

/// A game through `make_bot` and `pick` (a `Vec` per pick), recording every applied pick.
fn game_via_pick(
    names: [&str; NUM_SEATS],
    params: Params,
    seed: u64,
) -> (State, Vec<Vec<Vec<u8>>>) {
    let mut bots: Vec<Box<dyn NacBot>> = (0..NUM_SEATS)
        .map(|s| make_bot(names[s], s, seed).unwrap())
        .collect();
    let mut state = State::new(params, seed as u32);
    let mut log = Vec::new();
    while !state.is_over() {
        let picks: Vec<Vec<u8>> = (0..NUM_SEATS)
            .map(|s| bots[s].pick(&state.view(s)))
            .collect();
        for p in &picks {
            assert_eq!(p.len(), state.picks_needed());
            assert!(p.iter().all(|&i| (i as usize) < params.targets));
        }
        state.apply([&picks[0], &picks[1], &picks[2], &picks[3]]);
        log.push(picks);
    }
    (state, log)
}

#[test]
fn random_bot_draws_from_its_named_stream() {
    // The `random` bot of seat s draws gen_range(0..L) from seeded_rng(seed, "nac-bot-<s>"), one
    // per pick, in order.
    for seed in 0..200u64 {
        let (_, log) = game_via_pick(["random"; NUM_SEATS], Params::NAC, seed);
        for s in 0..NUM_SEATS {
            let mut rng = seeded_rng(seed, &format!("nac-bot-{s}"));
            for (t, turn) in log.iter().enumerate() {
                let n = if t % 2 == 0 { 5 } else { 2 };
                let want: Vec<u8> = (0..n).map(|_| rng.gen_range(0..6u8)).collect();
                assert_eq!(turn[s], want, "seed {seed} seat {s} turn {}", t + 1);
            }
        }
    }
}

#[test]
fn fast_path_plays_the_same_games() {
    for params in [Params::NAC, Params::RELIGION_WAR] {
        for seed in 0..300u64 {
            let (slow, _) = game_via_pick(["random"; NUM_SEATS], params, seed);
            let mut fast = State::new(params, seed as u32);
            let mut bots: [RandomBot; NUM_SEATS] = std::array::from_fn(|s| RandomBot::new(s, seed));
            play_to_end(&mut fast, &mut bots);
            assert_eq!(fast.scorings(), slow.scorings(), "seed {seed}");
            for i in 0..params.targets {
                for s in 0..NUM_SEATS {
                    assert_eq!(fast.real(i, s), slow.real(i, s));
                }
            }
        }
    }
}

#[test]
fn fast_path_with_boxed_mixed_bots() {
    for seed in 0..20u64 {
        let names = ["strong", "random", "random", "strong"];
        let (slow, _) = game_via_pick(names, Params::NAC, seed);
        let mut fast = State::new(Params::NAC, seed as u32);
        let mut bots: [Box<dyn NacBot>; NUM_SEATS] =
            std::array::from_fn(|s| make_bot(names[s], s, seed).unwrap());
        play_to_end(&mut fast, &mut bots);
        assert!(fast.is_over());
        assert_eq!(fast.total24(), slow.total24(), "seed {seed}");
    }
}
