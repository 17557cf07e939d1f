//! §5 invariants over random pick sequences (both variants, random seeds).

// Matrices are compared entry by entry, indexed by target and seat as the spec writes them.
#![allow(clippy::needless_range_loop)]

#[allow(dead_code)] // not every helper is used by every test file
use crate::common::*;
use kakehiki_core::{Game, Score};
use kakehiki_nac::{score24, Params, NUM_SEATS};
use proptest::prelude::*;

const SUM_R: [u16; 10] = [0, 5, 9, 14, 18, 23, 27, 32, 36, 41];
const SUM_PUBLIC: [u16; 9] = [0, 5, 5, 10, 10, 23, 23, 28, 28];

fn swap_seats(script: &Script, q: usize, r: usize) -> Script {
    let mut out = *script;
    for turn in out.iter_mut() {
        turn.swap(q, r);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn settings_lines_and_weights(params in params(), seed in any::<u32>(), script in script()) {
        let rec = play(params, seed, &script);
        for stream in &rec.streams {
            prop_assert_eq!(stream.lines().count(), 79);
            prop_assert!(stream.starts_with("9 4 6\n"));
            prop_assert!(stream.is_ascii() && !stream.contains('\r') && !stream.contains("  "));
            let weights: Vec<u8> =
                stream.lines().nth(1).unwrap().split(' ').map(|w| w.parse().unwrap()).collect();
            prop_assert_eq!(&weights[..], rec.state.weights());
            prop_assert!(weights.len() == 6 && weights.iter().all(|w| (3..=6).contains(w)));
        }
    }

    #[test]
    fn sums_per_block(params in params(), seed in any::<u32>(), script in script()) {
        let rec = play(params, seed, &script);
        for s in 0..NUM_SEATS {
            for t in 1..=TURNS {
                let b = read_block(&rec.blocks[s][t - 1]);
                prop_assert_eq!(b.turn as usize, t);
                let label = if is_day(t) { params.day_label } else { params.night_label };
                prop_assert_eq!(b.label, label);
                prop_assert_eq!(b.real.iter().sum::<u16>(), SUM_R[t - 1], "seat {} block {}", s, t);
                let own_public: u16 = b.affinity.iter().map(|line| line[0]).sum();
                prop_assert_eq!(own_public, SUM_PUBLIC[t - 1], "seat {} block {}", s, t);
                match b.counts {
                    Some(c) => prop_assert_eq!(c.iter().sum::<u16>(), if t == 1 { 0 } else { 8 }),
                    None => prop_assert!(!is_day(t)),
                }
            }
            let end: u16 = (0..TARGETS).map(|i| rec.state.real(i, s)).sum();
            prop_assert_eq!(end, SUM_R[9]);
        }
    }

    #[test]
    fn real_at_least_public_with_even_difference(params in params(), seed in any::<u32>(), script in script()) {
        let rec = play(params, seed, &script);
        for s in 0..NUM_SEATS {
            for t in 1..=TURNS {
                let b = read_block(&rec.blocks[s][t - 1]);
                for i in 0..TARGETS {
                    let (r, p) = (b.real[i], b.affinity[i][0]);
                    prop_assert!(r >= p, "seat {} block {} target {}", s, t, i);
                    prop_assert_eq!((r - p) % 2, 0);
                    if t == 6 {
                        prop_assert_eq!(r, p);
                    }
                }
            }
        }
    }

    #[test]
    fn all_seats_affinity_lines_describe_one_matrix(params in params(), seed in any::<u32>(), script in script()) {
        let rec = play(params, seed, &script);
        for t in 1..=TURNS {
            // Seat 0 sees the columns in seat order; every other seat must see the same matrix.
            let matrix = read_block(&rec.blocks[0][t - 1]).affinity;
            for p in 0..NUM_SEATS {
                let b = read_block(&rec.blocks[p][t - 1]);
                let cols = column_order(p);
                for i in 0..TARGETS {
                    let want: Vec<u16> = cols.iter().map(|&q| matrix[i][q]).collect();
                    prop_assert_eq!(&b.affinity[i][..], &want[..], "seat {} block {} target {}", p, t, i);
                }
                // And the typed view agrees with the text.
                let v = &rec.views[p][t - 1];
                prop_assert_eq!(v.turn as usize, t);
                prop_assert_eq!(v.seat, p);
                for i in 0..TARGETS {
                    for q in 0..NUM_SEATS {
                        prop_assert_eq!(v.public[i][q], matrix[i][q]);
                    }
                    prop_assert_eq!(v.own_real[i], b.real[i]);
                    if let Some(c) = b.counts {
                        prop_assert_eq!(v.last_counts[i], c[i]);
                    }
                }
            }
        }
    }

    #[test]
    fn real_grows_by_the_counts(params in params(), seed in any::<u32>(), script in script()) {
        let rec = play(params, seed, &script);
        for t in 1..=TURNS {
            let gain = if is_day(t) { 1 } else { 2 };
            for i in 0..TARGETS {
                let before: u16 = rec.real[t - 1][i].iter().sum();
                let after: u16 = rec.real[t][i].iter().sum();
                prop_assert_eq!(after - before, gain * rec.counts[t][i], "turn {} target {}", t, i);
            }
            // The count line of the next day block shows this turn's counts (only after a night).
            if !is_day(t) {
                let b = read_block(&rec.blocks[0][t]);
                prop_assert_eq!(b.counts, Some(rec.counts[t]));
            }
        }
    }

    #[test]
    fn scorings_sum_to_zero_and_are_bounded(params in params(), seed in any::<u32>(), script in script()) {
        let rec = play(params, seed, &script);
        let bound = 24 * rec.state.weights().iter().map(|&m| i64::from(m)).sum::<i64>();
        let want_turns: Vec<u32> = if params == Params::NAC { vec![5, 9] } else { vec![9] };
        let got_turns: Vec<u32> = rec.state.scorings().iter().map(|&(t, _)| t).collect();
        prop_assert_eq!(got_turns, want_turns);
        let mut total = [0i64; NUM_SEATS];
        for &(t, s) in rec.state.scorings() {
            prop_assert_eq!(s.iter().sum::<i64>(), 0);
            prop_assert_eq!(s, score24(&rec.real[t as usize], rec.state.weights()));
            for (k, &x) in s.iter().enumerate() {
                prop_assert!((-bound..=bound).contains(&x));
                prop_assert_eq!(x % 2, 0, "x12 must be an integer");
                total[k] += x;
            }
        }
        prop_assert_eq!(rec.state.total24(), total);
        prop_assert_eq!(total.iter().sum::<i64>(), 0);
        let outcome = Game::outcome(&rec.state).unwrap();
        let exact: Vec<Score> = total.iter().map(|&x| Score::new(x, 24)).collect();
        prop_assert_eq!(&outcome.scores, &exact);
        let max = *total.iter().max().unwrap();
        let at_max: Vec<usize> = (0..NUM_SEATS).filter(|&s| total[s] == max).collect();
        prop_assert_eq!(outcome.winner, (at_max.len() == 1).then(|| at_max[0]));
    }

    #[test]
    fn variant_totals(seed in any::<u32>(), script in script()) {
        let nac = play(Params::NAC, seed, &script);
        let rw = play(Params::RELIGION_WAR, seed, &script);
        let w = nac.state.weights();
        let s5 = score24(&nac.real[5], w);
        let s9 = score24(&nac.real[9], w);
        let sum: [i64; NUM_SEATS] = std::array::from_fn(|k| s5[k] + s9[k]);
        prop_assert_eq!(nac.state.total24(), sum);
        prop_assert_eq!(rw.state.total24(), s9);
        prop_assert_eq!(&nac.real, &rw.real);
    }

    #[test]
    fn swapping_two_seats_picks_swaps_their_scores(
        params in params(), seed in any::<u32>(), script in script(), q in 0..NUM_SEATS, d in 1..NUM_SEATS,
    ) {
        let r = (q + d) % NUM_SEATS;
        let a = play(params, seed, &script);
        let b = play(params, seed, &swap_seats(&script, q, r));
        for (sa, sb) in a.state.scorings().iter().zip(b.state.scorings()) {
            let mut swapped = sa.1;
            swapped.swap(q, r);
            prop_assert_eq!(sb.1, swapped);
        }
        let mut swapped = a.state.total24();
        swapped.swap(q, r);
        prop_assert_eq!(b.state.total24(), swapped);
    }

    #[test]
    fn identical_real_columns_get_identical_scores(
        params in params(), seed in any::<u32>(), mut script in script(), q in 0..NUM_SEATS, d in 1..NUM_SEATS,
    ) {
        let r = (q + d) % NUM_SEATS;
        for (k, turn) in script.iter_mut().enumerate() {
            // Seat r picks the same targets as q, in reverse order: the same real column.
            let n = picks_in(k + 1);
            let mut p = turn[q];
            p[..n].reverse();
            turn[r] = p;
        }
        let rec = play(params, seed, &script);
        for &(_, s) in rec.state.scorings() {
            prop_assert_eq!(s[q], s[r]);
        }
        prop_assert_eq!(rec.state.total24()[q], rec.state.total24()[r]);
    }

    #[test]
    fn identical_picks_give_all_zero_and_a_draw(params in params(), seed in any::<u32>(), mut script in script()) {
        for turn in script.iter_mut() {
            turn[1] = turn[0];
            turn[2] = turn[0];
            turn[3] = turn[0];
        }
        let rec = play(params, seed, &script);
        for &(_, s) in rec.state.scorings() {
            prop_assert_eq!(s, [0; NUM_SEATS]);
        }
        prop_assert_eq!(rec.state.total24(), [0; NUM_SEATS]);
        prop_assert_eq!(Game::outcome(&rec.state).unwrap().winner, None);
    }
}
