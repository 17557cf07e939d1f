//! Property tests: random playouts end and only ever make legal moves; move generation agrees
//! with an independent brute-force reading of spec §1.4; information hiding (spec §5).

use kakehiki_core::seeded_rng;
use kakehiki_geister::engine::{Dir, Geister, Move, PlayRules, RedSet, CAPTURED, ESCAPED};
use kakehiki_geister::session::Session;
use kakehiki_geister::wire::{Line, ServerMsg};
use kakehiki_geister::Rules;
use proptest::prelude::*;
use rand::Rng;

fn placements() -> Vec<RedSet> {
    RedSet::all().collect()
}

/// Spec §1.4 read literally, from coordinates, for the seat to move.
fn brute_force_legal(g: &Geister) -> Vec<Move> {
    let me = g.to_move();
    let pos = g.positions(me);
    let red = g.red_mask(me);
    let mut out = Vec::new();
    for ghost in 0..8u8 {
        let p = pos[ghost as usize];
        if p == CAPTURED || p == ESCAPED {
            continue;
        }
        let (x, y) = ((p % 6) as i32, (p / 6) as i32);
        for dir in Dir::ALL {
            let (dx, dy) = match dir {
                Dir::N => (0, -1),
                Dir::E => (1, 0),
                Dir::W => (-1, 0),
                Dir::S => (0, 1),
            };
            let (nx, ny) = (x + dx, y + dy);
            let on_board = (0..6).contains(&nx) && (0..6).contains(&ny);
            let ok = if on_board {
                let t = (ny * 6 + nx) as u8;
                !pos.contains(&t)
            } else {
                let exit_move = (x, y) == (0, 0) && matches!(dir, Dir::N | Dir::W)
                    || (x, y) == (5, 0) && matches!(dir, Dir::N | Dir::E);
                exit_move && red & (1 << ghost) == 0
            };
            if ok {
                out.push(Move::new(ghost, dir));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn random_playouts_end_with_legal_moves(seed in any::<u64>(), p0 in 0usize..70, p1 in 0usize..70, seed_rules in any::<bool>()) {
        let all = placements();
        let rules = if seed_rules { Rules::seed() } else { Rules::gpw() };
        let max = rules.max_plies;
        let mut g = Geister::with_placements(PlayRules::from(&rules), all[p0], all[p1]);
        let mut rng = seeded_rng(seed, "prop");
        while !g.is_over() {
            prop_assert!(g.ply() < max);
            let moves = g.legal_moves();
            let mut a: Vec<Move> = moves.to_vec();
            let mut b = brute_force_legal(&g);
            a.sort_by_key(|m| (m.ghost, m.dir as u8));
            b.sort_by_key(|m| (m.ghost, m.dir as u8));
            prop_assert_eq!(&a, &b);
            prop_assert!(!a.is_empty(), "a player always has a legal move");
            // The mover's own view yields the same moves.
            let mut v: Vec<Move> = g.view(g.to_move()).legal_moves().to_vec();
            v.sort_by_key(|m| (m.ghost, m.dir as u8));
            prop_assert_eq!(&v, &a);
            let mv = a[rng.gen_range(0..a.len())];
            prop_assert!(g.check(g.to_move(), mv).is_ok());
            g.play(mv).unwrap();
            // No two ghosts share a square, in either frame.
            let mut squares: Vec<u8> = g.positions(0).iter().copied().filter(|&p| p < 36).collect();
            squares.extend(g.positions(1).iter().copied().filter(|&p| p < 36).map(|p| 35 - p));
            let n = squares.len();
            squares.sort_unstable();
            squares.dedup();
            prop_assert_eq!(squares.len(), n);
        }
        prop_assert!(g.ply() <= max);
        let end = g.end().unwrap();
        if end.winner.is_none() {
            prop_assert_eq!(g.ply(), max);
        }
    }

    #[test]
    fn illegal_moves_are_refused_with_a_reason(seed in any::<u64>(), ghost in 0u8..8, d in 0usize..4) {
        let all = placements();
        let mut g = Geister::with_placements(PlayRules::from(&Rules::gpw()), all[(seed % 70) as usize], all[((seed >> 8) % 70) as usize]);
        let mut rng = seeded_rng(seed, "prop2");
        for _ in 0..(seed % 40) {
            if g.is_over() { break; }
            let moves = g.legal_moves();
            g.play(moves[rng.gen_range(0..moves.len())]).unwrap();
        }
        if !g.is_over() {
            let mv = Move::new(ghost, Dir::ALL[d]);
            let legal = g.legal_moves().contains(&mv);
            let before = g.clone().view(0);
            match g.play(mv) {
                Ok(_) => prop_assert!(legal),
                Err(_) => {
                    prop_assert!(!legal);
                    prop_assert_eq!(g.view(0), before);
                }
            }
        }
    }
}

/// Run one session from a command script; return every seat's byte stream as messages.
fn run_script(
    p0: RedSet,
    p1: RedSet,
    script: &[(usize, String)],
    rules: Rules,
) -> [Vec<ServerMsg>; 2] {
    let mut s = Session::new(rules);
    let mut streams: [Vec<ServerMsg>; 2] = [vec![], vec![]];
    let push = |outs: Vec<kakehiki_geister::Out>, streams: &mut [Vec<ServerMsg>; 2]| {
        for o in outs {
            streams[o.seat].push(o.msg);
        }
    };
    let o = s.assign(0, 0);
    push(o, &mut streams);
    let o = s.assign(1, 0);
    push(o, &mut streams);
    let o = s.line(0, &Line::Text(format!("SET:{}", p0.labels())), 1);
    push(o, &mut streams);
    let o = s.line(1, &Line::Text(format!("SET:{}", p1.labels())), 2);
    push(o, &mut streams);
    for (i, (seat, cmd)) in script.iter().enumerate() {
        if s.awaiting().is_some() {
            s.clock_started(s.awaiting().unwrap(), 3 + i as u64);
        }
        let o = s.line(*seat, &Line::Text(cmd.clone()), 3 + i as u64);
        push(o, &mut streams);
    }
    streams
}

/// A random command script from a game under (p0, p1): mostly legal moves of the seat to move,
/// with out-of-turn and illegal commands mixed in.
fn random_script(
    p0: RedSet,
    p1: RedSet,
    seed: u64,
    rules: &Rules,
) -> (Vec<(usize, String)>, Geister) {
    let mut g = Geister::with_placements(PlayRules::from(rules), p0, p1);
    let mut rng = seeded_rng(seed, "script");
    let mut script = Vec::new();
    while !g.is_over() {
        let me = g.to_move();
        let r = rng.gen_range(0..100);
        if r < 5 {
            script.push((1 - me, "MOV:A,N".to_string()));
            continue;
        }
        if r < 8 && rules.on_illegal == kakehiki_geister::Fault::Pass {
            script.push((me, "MOV:Z,Q".to_string()));
            g.pass();
            continue;
        }
        let moves = g.legal_moves();
        let mv = moves[rng.gen_range(0..moves.len())];
        script.push((me, format!("MOV:{}", mv.wire())));
        g.play(mv).unwrap();
    }
    (script, g)
}

fn check_view_rules(stream: &[ServerMsg]) -> Result<(), TestCaseError> {
    for m in stream {
        if let ServerMsg::Mov(b) = m {
            let opp = &b.as_bytes()[24..];
            prop_assert!(!b.contains("88"), "88 in a MOV?: {}", b);
            for grp in opp.chunks(3) {
                let at99 = &grp[..2] == b"99";
                match grp[2] {
                    b'u' => prop_assert!(!at99),
                    b'r' | b'b' => prop_assert!(at99, "colour of a ghost on the board: {}", b),
                    other => prop_assert!(false, "letter {} in {}", other as char, b),
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Spec §5.4: the same placement for P, the same commands and opponent placements that agree on
    /// every ghost P captured give P identical bytes up to the end message.
    #[test]
    fn differential_information_hiding(seed in any::<u64>(), pp in 0usize..70, pa in 0usize..70, pb in 0usize..70, viewer in 0usize..2, seed_rules in any::<bool>()) {
        let all = placements();
        let rules = if seed_rules { Rules::seed() } else { Rules::gpw() };
        let (p_own, p_opp_a) = (all[pp], all[pa]);
        let (placement0, placement1) = if viewer == 0 { (p_own, p_opp_a) } else { (p_opp_a, p_own) };
        let (script, game_a) = random_script(placement0, placement1, seed, &rules);
        // Which opponent ghosts did the viewer capture in game A?
        let opp = 1 - viewer;
        let captured: u8 = (0..8).filter(|&g| game_a.positions(opp)[g] == CAPTURED).fold(0u8, |m, g| m | (1 << g));
        // Pick the B placement: the first from pb on that agrees on captured ghosts.
        let agree = |r: &RedSet| (r.mask() ^ p_opp_a.mask()) & captured == 0;
        let p_opp_b = (0..70).map(|i| all[(pb + i) % 70]).find(agree).unwrap();
        let (b0, b1) = if viewer == 0 { (p_own, p_opp_b) } else { (p_opp_b, p_own) };
        let sa = run_script(placement0, placement1, &script, rules.clone());
        let sb = run_script(b0, b1, &script, rules.clone());
        let a = &sa[viewer];
        let b = &sb[viewer];
        let end_a = a.iter().position(|m| m.is_end()).unwrap_or(a.len());
        let end_b = b.iter().position(|m| m.is_end()).unwrap_or(b.len());
        let k = end_a.min(end_b);
        prop_assert_eq!(&a[..k], &b[..k]);
        check_view_rules(&sa[viewer])?;
        check_view_rules(&sb[viewer])?;
        // The opponent's stream obeys the same rules.
        check_view_rules(&sa[opp])?;
    }
}

/// Spec §5.2/§5.3: OKR/OKB only to the mover of a capture, naming the true colour; before its end
/// message, a seat sees an opponent colour only for ghosts it captured.
#[test]
fn acknowledgements_and_colours_only_for_own_captures() {
    let all = placements();
    let rules = Rules::gpw();
    for seed in 0..300u64 {
        let (p0, p1) = (
            all[(seed * 7 % 70) as usize],
            all[(seed * 13 % 70) as usize],
        );
        let mut s = Session::new(rules.clone());
        let mut g = Geister::with_placements(PlayRules::from(&rules), p0, p1);
        let mut rng = seeded_rng(seed, "ack");
        s.assign(0, 0);
        s.assign(1, 0);
        s.line(0, &Line::Text(format!("SET:{}", p0.labels())), 0);
        s.line(1, &Line::Text(format!("SET:{}", p1.labels())), 0);
        let mut captured_by = [0u8; 2];
        while !g.is_over() {
            let me = g.to_move();
            let moves = g.legal_moves();
            let mv = moves[rng.gen_range(0..moves.len())];
            let eff = g.play(mv).unwrap();
            let outs = s.line(me, &Line::Text(format!("MOV:{}", mv.wire())), 0);
            let ack = &outs[0];
            assert_eq!(ack.seat, me);
            match eff.captured {
                Some((victim, c)) => {
                    captured_by[me] |= 1 << victim;
                    let want = if c == kakehiki_geister::Colour::Red {
                        ServerMsg::OkRed
                    } else {
                        ServerMsg::OkBlue
                    };
                    assert_eq!(ack.msg, want);
                }
                None => assert_eq!(ack.msg, ServerMsg::Ok),
            }
            for o in &outs[1..] {
                assert!(!matches!(
                    o.msg,
                    ServerMsg::Ok | ServerMsg::OkRed | ServerMsg::OkBlue
                ));
                if let ServerMsg::Mov(b) = &o.msg {
                    let opp = &b.as_bytes()[24..];
                    for (ghost, grp) in opp.chunks(3).enumerate() {
                        if grp[2] != b'u' {
                            assert!(
                                captured_by[o.seat] & (1 << ghost) != 0,
                                "seat {} sees colour of uncaptured {}: {b}",
                                o.seat,
                                ghost
                            );
                        }
                    }
                }
            }
        }
        assert!(s.is_over());
        assert_eq!(s.game().end(), g.end());
    }
}
