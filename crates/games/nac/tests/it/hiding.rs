//! §4 information hiding at engine level: H1, H3, H4, H5, H6, H7 over the streams of blocks the
//! engine builds, for random seeds and pick sequences of both variants.

// Matrices are compared entry by entry, indexed by target and seat as the spec writes them.
#![allow(clippy::needless_range_loop)]

#[allow(dead_code)] // not every helper is used by every test file
use crate::common::*;
use kakehiki_nac::NUM_SEATS;
use proptest::prelude::*;

/// What a line of a stream is, by its position (settings, then blocks 1..9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Settings,
    Header { block: usize },
    Affinity { block: usize },
    Real { block: usize },
    Counts { block: usize },
}

fn line_kinds() -> Vec<LineKind> {
    let mut kinds = vec![LineKind::Settings, LineKind::Settings];
    for block in 1..=TURNS {
        kinds.push(LineKind::Header { block });
        kinds.extend([LineKind::Affinity { block }; TARGETS]);
        kinds.push(LineKind::Real { block });
        if is_day(block) {
            kinds.push(LineKind::Counts { block });
        }
    }
    kinds
}

/// The lines where two streams differ: (kind, line in a, line in b). Both streams have the fixed
/// 79-line shape.
fn differing_lines<'a>(a: &'a str, b: &'a str) -> Vec<(LineKind, &'a str, &'a str)> {
    let kinds = line_kinds();
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    assert_eq!(la.len(), kinds.len());
    assert_eq!(lb.len(), kinds.len());
    kinds
        .into_iter()
        .zip(la.into_iter().zip(lb))
        .filter(|(_, (x, y))| x != y)
        .map(|(k, (x, y))| (k, x, y))
        .collect()
}

/// The fields of a line that differ.
fn differing_fields(a: &str, b: &str) -> Vec<usize> {
    let (fa, fb): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    assert_eq!(fa.len(), fb.len());
    (0..fa.len()).filter(|&k| fa[k] != fb[k]).collect()
}

/// A night swap (H3, H4): in game A seat q picks x at position kq and seat r picks y at kr; in
/// game B they exchange the two targets. The night's per-target totals are equal in A and B.
fn night_swap(
    base: &Script,
    n: usize,
    (q, kq): (usize, usize),
    (r, kr): (usize, usize),
    (x, y): (u8, u8),
) -> (Script, Script) {
    let (mut a, mut b) = (*base, *base);
    a[n - 1][q][kq] = x;
    a[n - 1][r][kr] = y;
    b[n - 1][q][kq] = y;
    b[n - 1][r][kr] = x;
    (a, b)
}

fn seat_pair() -> impl Strategy<Value = (usize, usize)> {
    (0..NUM_SEATS, 1..NUM_SEATS).prop_map(|(q, d)| (q, (q + d) % NUM_SEATS))
}

fn target_pair() -> impl Strategy<Value = (u8, u8)> {
    (0..TARGETS as u8, 1..TARGETS as u8).prop_map(|(x, d)| (x, (x + d) % TARGETS as u8))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// H1: block(s, t) depends only on the seed and the picks of turns < t.
    #[test]
    fn h1_simultaneity(
        params in params(), seed in any::<u32>(), base in script(), other in script(), t in 1..=TURNS,
    ) {
        let mut changed = base;
        changed[t - 1..].copy_from_slice(&other[t - 1..]);
        let a = play(params, seed, &base);
        let b = play(params, seed, &changed);
        for s in 0..NUM_SEATS {
            prop_assert_eq!(&a.blocks[s][..t], &b.blocks[s][..t], "seat {} blocks 1..={}", s, t);
        }
    }

    /// H3: an early night (2, 4) whose totals are unchanged leaves blocks 1..5 of every uninvolved
    /// seat byte-identical.
    #[test]
    fn h3_early_nights(
        params in params(), seed in any::<u32>(), base in script(), n in prop_oneof![Just(2usize), Just(4)],
        (q, r) in seat_pair(), kq in 0..2usize, kr in 0..2usize, (x, y) in target_pair(),
    ) {
        let (sa, sb) = night_swap(&base, n, (q, kq), (r, kr), (x, y));
        let a = play(params, seed, &sa);
        let b = play(params, seed, &sb);
        prop_assert_eq!(a.counts[n], b.counts[n]);
        for p in (0..NUM_SEATS).filter(|&p| p != q && p != r) {
            prop_assert_eq!(&a.blocks[p][..5], &b.blocks[p][..5], "seat {}", p);
        }
        // The change is real: q's own R line in block n+1 differs.
        prop_assert_ne!(&a.blocks[q][n], &b.blocks[q][n]);
    }

    /// H4: a late night (6, 8) whose totals are unchanged leaves the whole stream of every
    /// uninvolved seat byte-identical.
    #[test]
    fn h4_late_nights(
        params in params(), seed in any::<u32>(), base in script(), n in prop_oneof![Just(6usize), Just(8)],
        (q, r) in seat_pair(), kq in 0..2usize, kr in 0..2usize, (x, y) in target_pair(),
    ) {
        let (sa, sb) = night_swap(&base, n, (q, kq), (r, kr), (x, y));
        let a = play(params, seed, &sa);
        let b = play(params, seed, &sb);
        for p in (0..NUM_SEATS).filter(|&p| p != q && p != r) {
            prop_assert_eq!(&a.streams[p], &b.streams[p], "seat {}", p);
        }
        prop_assert_ne!(&a.blocks[q][n], &b.blocks[q][n]);
    }

    /// H5: changing seat q's night-n picks changes another seat's stream only in the count line of
    /// block n+1 and, if n <= 4, in the affinity lines of blocks >= 6.
    #[test]
    fn h5_totals_only(
        params in params(), seed in any::<u32>(), base in script(), n in prop_oneof![Just(2usize), Just(4), Just(6), Just(8)],
        q in 0..NUM_SEATS, night in proptest::array::uniform2(0..TARGETS as u8),
    ) {
        let mut changed = base;
        changed[n - 1][q][..2].copy_from_slice(&night);
        let a = play(params, seed, &base);
        let b = play(params, seed, &changed);
        for p in (0..NUM_SEATS).filter(|&p| p != q) {
            for (kind, la, lb) in differing_lines(&a.streams[p], &b.streams[p]) {
                let allowed = kind == LineKind::Counts { block: n + 1 }
                    || (n <= 4 && matches!(kind, LineKind::Affinity { block } if block >= 6));
                prop_assert!(allowed, "seat {}: {:?} differs: {:?} vs {:?}", p, kind, la, lb);
            }
        }
        let mut before = base[n - 1][q][..2].to_vec();
        let mut after = night.to_vec();
        before.sort_unstable();
        after.sort_unstable();
        if before != after {
            // q's own R line shows the change at once; the others see it in the count line.
            prop_assert_ne!(&a.blocks[q][n], &b.blocks[q][n]);
            let p = (q + 1) % NUM_SEATS;
            let diff = differing_lines(&a.streams[p], &b.streams[p]);
            let counts_line = LineKind::Counts { block: n + 1 };
            prop_assert!(diff.iter().any(|&(k, _, _)| k == counts_line), "count line of block {}", n + 1);
        }
    }

    /// H6: changing seat q's day-d picks changes, for every other seat, only q's column of the
    /// affinity lines of blocks >= d+1.
    #[test]
    fn h6_day_picks_are_public(
        params in params(), seed in any::<u32>(), base in script(), d in prop_oneof![Just(1usize), Just(3), Just(5), Just(7), Just(9)],
        q in 0..NUM_SEATS, day in proptest::array::uniform5(0..TARGETS as u8),
    ) {
        let mut changed = base;
        changed[d - 1][q] = day;
        let a = play(params, seed, &base);
        let b = play(params, seed, &changed);
        for p in (0..NUM_SEATS).filter(|&p| p != q) {
            let q_col = column_order(p).iter().position(|&c| c == q).unwrap();
            for (kind, la, lb) in differing_lines(&a.streams[p], &b.streams[p]) {
                let in_range = matches!(kind, LineKind::Affinity { block } if block > d);
                prop_assert!(in_range, "seat {}: {:?} differs: {:?} vs {:?}", p, kind, la, lb);
                prop_assert_eq!(differing_fields(la, lb), vec![q_col], "seat {}: {:?}", p, kind);
            }
        }
        let mut before = base[d - 1][q].to_vec();
        let mut after = day.to_vec();
        before.sort_unstable();
        after.sort_unstable();
        if before != after && d < TURNS {
            // Everyone sees the change in the very next block.
            for p in 0..NUM_SEATS {
                prop_assert_ne!(&a.blocks[p][d], &b.blocks[p][d]);
            }
        }
    }

    /// H7: blocks 6 and 7 show every seat the real matrix at the end of turn 5 in its column
    /// order; block 6's R line equals its first column.
    #[test]
    fn h7_reveal(params in params(), seed in any::<u32>(), base in script()) {
        let rec = play(params, seed, &base);
        let real5 = rec.real[5];
        for p in 0..NUM_SEATS {
            let cols = column_order(p);
            for t in [6, 7] {
                let b = read_block(&rec.blocks[p][t - 1]);
                for i in 0..TARGETS {
                    let want: Vec<u16> = cols.iter().map(|&q| real5[i][q]).collect();
                    prop_assert_eq!(&b.affinity[i][..], &want[..], "seat {} block {} target {}", p, t, i);
                }
            }
            let b6 = read_block(&rec.blocks[p][5]);
            let first: Vec<u16> = b6.affinity.iter().map(|line| line[0]).collect();
            prop_assert_eq!(&b6.real[..], &first[..]);
            let own: Vec<u16> = (0..TARGETS).map(|i| real5[i][p]).collect();
            prop_assert_eq!(&b6.real[..], &own[..]);
        }
    }
}
