//! The spec's test vectors (§7) run through the referee's state machine, byte for byte.
#![allow(clippy::needless_range_loop, clippy::manual_is_multiple_of)]

use kakehiki_geister::engine::{Dir, EndReason, Geister, Move, PlayRules, RedSet};
use kakehiki_geister::session::{Event, Session};
use kakehiki_geister::wire::{Line, LineBuffer, ServerMsg};
use kakehiki_geister::Rules;

/// A scripted table: both seats assigned at t=0, every write recorded per seat.
struct Table {
    s: Session,
    streams: [Vec<String>; 2],
    now: u64,
}

impl Table {
    fn new(rules: Rules) -> Self {
        let mut t = Table {
            s: Session::new(rules),
            streams: [vec![], vec![]],
            now: 0,
        };
        let o = t.s.assign(0, 0);
        t.take(o);
        let o = t.s.assign(1, 0);
        t.take(o);
        t
    }

    fn take(&mut self, outs: Vec<kakehiki_geister::Out>) {
        for o in outs {
            let is_mov = matches!(o.msg, ServerMsg::Mov(_));
            self.streams[o.seat].push(String::from_utf8(o.msg.to_bytes()).unwrap());
            if is_mov {
                self.s.clock_started(o.seat, self.now);
            }
        }
    }

    fn send(&mut self, seat: usize, text: &str) {
        self.now += 1;
        let mut lb = LineBuffer::new();
        let lines = lb.push(format!("{text}\r\n").as_bytes());
        for l in lines {
            let o = self.s.line(seat, &l, self.now);
            self.take(o);
        }
    }

    fn last(&self, seat: usize) -> &str {
        self.streams[seat].last().unwrap().trim_end_matches("\r\n")
    }

    fn since(&self, seat: usize, n: usize) -> Vec<&str> {
        self.streams[seat][n..]
            .iter()
            .map(|s| s.trim_end_matches("\r\n"))
            .collect()
    }

    fn end_reason(&self) -> EndReason {
        self.s.game().end().unwrap().reason
    }
}

fn script(t: &mut Table, moves: &[(usize, &str)]) {
    for (seat, mv) in moves {
        t.send(*seat, &format!("MOV:{mv}"));
    }
}

const V2: &[(usize, &str)] = &[
    (0, "A,W"),
    (1, "A,N"),
    (0, "A,N"),
    (1, "A,S"),
    (0, "A,N"),
    (1, "A,N"),
    (0, "A,N"),
    (1, "A,S"),
    (0, "A,N"),
    (1, "A,N"),
];

#[test]
fn v1_start_board_and_legal_moves() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:EFGH");
    assert_eq!(
        t.since(0, 0),
        vec![
            "SET?",
            "OK ",
            "MOV?14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"
        ]
    );
    let g = Geister::with_placements(
        PlayRules::from(&Rules::gpw()),
        RedSet::from_mask(0x0f).unwrap(),
        RedSet::from_mask(0xf0).unwrap(),
    );
    let got: Vec<String> = g.legal_moves().iter().map(|m| m.wire()).collect();
    let mut want = vec!["A,N", "A,W", "B,N", "C,N", "D,N", "D,E", "E,W", "H,E"];
    let mut got_sorted = got.clone();
    got_sorted.sort();
    want.sort();
    assert_eq!(got_sorted, want);
    // Seat 1 in its own frame.
    let mut g2 = g.clone();
    g2.play(Move::new(1, Dir::N)).unwrap();
    let mut got1: Vec<String> = g2.legal_moves().iter().map(|m| m.wire()).collect();
    got1.sort();
    assert_eq!(got1, want);
}

#[test]
fn v2_escape() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:EFGH");
    t.send(1, "SET:ABCD");
    script(&mut t, V2);
    assert_eq!(
        t.last(0),
        "MOV?00B24B34B44B15R25R35R45R42u31u21u11u40u30u20u10u"
    );
    let mut a: Vec<String> =
        t.s.game()
            .legal_moves()
            .iter()
            .filter(|m| m.ghost == 0)
            .map(|m| m.wire())
            .collect();
    a.sort();
    assert_eq!(a, vec!["A,E", "A,N", "A,S", "A,W"]);
    let (n0, n1) = (t.streams[0].len(), t.streams[1].len());
    t.send(0, "MOV:A,N");
    assert_eq!(
        t.since(0, n0),
        vec![
            "OK ",
            "WON:88b24B34B44B15R25R35R45R42r31r21r11r40b30b20b10b"
        ]
    );
    assert_eq!(
        t.since(1, n1),
        vec!["LST:13R24R34R44R15B25B35B45B88b31b21b11b40r30r20r10r"]
    );
    assert_eq!(t.end_reason(), EndReason::Escape);
    assert_eq!(t.s.game().end().unwrap().winner, Some(0));
}

#[test]
fn v2_capture_on_the_way_is_okb() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:EFGH");
    t.send(1, "SET:ABCD");
    script(&mut t, V2);
    let n0 = t.streams[0].len();
    t.send(0, "MOV:A,E");
    assert_eq!(t.since(0, n0), vec!["OKB"]);
}

#[test]
fn v3_red_cannot_escape() {
    for dir in ["N", "W"] {
        let mut t = Table::new(Rules::gpw());
        t.send(0, "SET:ABCD");
        t.send(1, "SET:ABCD");
        script(&mut t, V2);
        let (n0, n1) = (t.streams[0].len(), t.streams[1].len());
        t.send(0, &format!("MOV:A,{dir}"));
        assert_eq!(
            t.since(0, n0),
            vec![
                "NG ",
                "LST:00R24R34R44R15B25B35B45B42r31r21r11r40b30b20b10b"
            ]
        );
        assert_eq!(
            t.since(1, n1),
            vec!["WON:13R24R34R44R15B25B35B45B55r31r21r11r40b30b20b10b"]
        );
        assert_eq!(t.end_reason(), EndReason::IllegalMove);
    }
    // seed: a pass, seat 1 gets MOV?.
    let mut t = Table::new(Rules::seed());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:ABCD");
    script(&mut t, V2);
    let (n0, n1) = (t.streams[0].len(), t.streams[1].len());
    t.send(0, "MOV:A,N");
    assert_eq!(t.since(0, n0), vec!["NG "]);
    assert_eq!(t.since(1, n1).len(), 1);
    assert!(t.last(1).starts_with("MOV?"));
    assert!(!t.s.is_over());
    assert_eq!(t.s.game().ply(), 11);
}

#[test]
fn v4_capture_on_exit_then_escape() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:EFGH");
    t.send(1, "SET:ABCD");
    script(
        &mut t,
        &[
            (0, "A,W"),
            (1, "H,E"),
            (0, "A,N"),
            (1, "A,N"),
            (0, "A,N"),
            (1, "A,S"),
            (0, "A,N"),
            (1, "A,N"),
        ],
    );
    let n0 = t.streams[0].len();
    t.send(0, "MOV:A,N");
    assert_eq!(t.since(0, n0), vec!["OKB"]);
    assert_eq!(
        t.last(1),
        "MOV?13R24R34R44R15B25B35B99b55u31u21u11u40u30u20u10u"
    );
    t.send(1, "MOV:A,S");
    let (n0, n1) = (t.streams[0].len(), t.streams[1].len());
    t.send(0, "MOV:A,N");
    assert_eq!(
        t.since(0, n0),
        vec![
            "OK ",
            "WON:88b24B34B44B15R25R35R45R41r31r21r11r40b30b20b99b"
        ]
    );
    assert_eq!(
        t.since(1, n1),
        vec!["LST:14R24R34R44R15B25B35B99b88b31b21b11b40r30r20r10r"]
    );
}

#[test]
fn v5_capturing_the_fourth_red_loses() {
    // Seat 1's view: own 23B12B30R40R10R15R03B50B, opponent 53u 99r 99b 99r 99r 99b 20u 00u.
    // Seat 1 red: C, D, E, F; seat 0: B, D, E, H red (B, D, E captured red; C, F captured blue).
    let rules = PlayRules::from(&Rules::gpw());
    let p0 = RedSet::from_ghosts([1, 3, 4, 7]).unwrap();
    let p1 = RedSet::from_ghosts([2, 3, 4, 5]).unwrap();
    // Build the position through determinize from seat 1's view.
    let mut view = Geister::with_placements(rules, p0, p1).view(1);
    let sq = |x: u8, y: u8| y * 6 + x;
    view.own = [
        sq(2, 3),
        sq(1, 2),
        sq(3, 0),
        sq(4, 0),
        sq(1, 0),
        sq(1, 5),
        sq(0, 3),
        sq(5, 0),
    ];
    view.opp = [sq(5, 3), 99, 99, 99, 99, 99, sq(2, 0), sq(0, 0)];
    view.ply = 101;
    let mut g = Geister::determinize(&view, p0.mask(), rules);
    assert_eq!(
        g.view(1).board(),
        "23B12B30R40R10R15R03B50B53u99r99b99r99r99b20u00u"
    );
    assert_eq!(g.to_move(), 1);
    let eff = g.play(Move::new(4, Dir::W)).unwrap();
    assert_eq!(
        eff.captured.map(|c| c.1),
        Some(kakehiki_geister::Colour::Red)
    );
    let end = g.end().unwrap();
    assert_eq!((end.winner, end.reason), (Some(0), EndReason::LostAllRed));
    assert_eq!(
        g.view(1).board(),
        "23B12B30R40R00R15R03B50B53b99r99b99r99r99b20b99r"
    );
    assert_eq!(
        g.view(0).board(),
        "02B99r99b99r99r99b35B99r32b43b25r15r55r40r52b05b"
    );
}

fn shuttle(t: &mut Table, plies: u32) {
    for p in 0..plies {
        let seat = (p % 2) as usize;
        let dir = if (p / 2) % 2 == 0 { "N" } else { "S" };
        t.send(seat, &format!("MOV:A,{dir}"));
    }
}

#[test]
fn v6_deciding_move_on_the_last_ply_beats_the_limit() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:EFGH");
    let mut seat1: Vec<String> = vec!["A,W".into()];
    seat1.extend(std::iter::repeat_n("A,N".to_string(), 4));
    for i in 0..144 {
        seat1.push(if i % 2 == 0 { "B,N" } else { "B,S" }.into());
    }
    assert_eq!(seat1.len(), 149);
    for turn in 0..150 {
        t.send(
            0,
            &format!("MOV:A,{}", if turn % 2 == 0 { "N" } else { "S" }),
        );
        if turn < 149 {
            t.send(1, &format!("MOV:{}", seat1[turn]));
            assert!(!t.s.is_over(), "ended early at turn {turn}");
        }
    }
    let (n0, n1) = (t.streams[0].len(), t.streams[1].len());
    t.send(1, "MOV:A,N");
    assert_eq!(t.s.game().ply(), 300);
    assert_eq!(
        t.since(1, n1),
        vec![
            "OK ",
            "WON:88b24B34B44B15R25R35R45R41r31r21r11r40b30b20b10b"
        ]
    );
    assert_eq!(
        t.since(0, n0),
        vec!["LST:14R24R34R44R15B25B35B45B88b31b21b11b40r30r20r10r"]
    );
    let log = t.s.log_lines();
    assert_eq!(log.len(), 303);
    assert_eq!(log.last().unwrap(), "winner=1");
    assert_eq!(log[0], "player=0,SET:ABCD");
    assert_eq!(log[2], "player=0,MOV:A,N");
}

#[test]
fn v7_draw_at_the_limit() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:ABCD");
    shuttle(&mut t, 300);
    let drw = "DRW:14R24R34R44R15B25B35B45B41r31r21r11r40b30b20b10b";
    assert_eq!(t.since(1, t.streams[1].len() - 2), vec!["OK ", drw]);
    assert_eq!(t.last(0), drw);
    assert_eq!(t.end_reason(), EndReason::PlyLimitDraw);
    assert_eq!(t.s.log_lines().last().unwrap(), "winner=2");
    let mut t = Table::new(Rules::seed());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:ABCD");
    shuttle(&mut t, 499);
    assert!(!t.s.is_over());
    shuttle_one(&mut t, 499);
    let end = t.s.game().end().unwrap();
    assert_eq!((end.winner, end.scores), (None, Some([0, 0])));
    assert_eq!(t.last(0), drw);
}

fn shuttle_one(t: &mut Table, p: u32) {
    let seat = (p % 2) as usize;
    let dir = if (p / 2) % 2 == 0 { "N" } else { "S" };
    t.send(seat, &format!("MOV:A,{dir}"));
}

#[test]
fn v8_score() {
    let mut t = Table::new(Rules::seed());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:ABCD");
    for p in 0..500u32 {
        let i = (p / 2) as usize;
        if p % 2 == 0 {
            let mv = if i < 3 {
                "A,N"
            } else if (i - 3) % 2 == 0 {
                "A,S"
            } else {
                "A,N"
            };
            let n0 = t.streams[0].len();
            t.send(0, &format!("MOV:{mv}"));
            if i == 2 {
                assert_eq!(t.since(0, n0)[0], "OKR");
            }
        } else {
            t.send(1, if i % 2 == 0 { "MOV:E,W" } else { "MOV:E,E" });
        }
    }
    let end = *t.s.game().end().unwrap();
    assert_eq!(
        (end.winner, end.reason, end.scores),
        (Some(0), EndReason::Score, Some([2, 1]))
    );
    assert!(t.last(0).starts_with("WON:"));
    assert!(t.last(1).starts_with("LST:"));
}

#[test]
fn v8_engine_only_score_and_identity() {
    use kakehiki_geister::engine::score_formula;
    assert_eq!(score_formula(2, 4, 4, 1), 2);
    assert_eq!(score_formula(4, 1, 2, 4), 1);
    // Score_0 - Score_1 = (G0 + R0) - (G1 + R1) for every count.
    for g0 in 0..=4 {
        for r0 in 0..=4 {
            for g1 in 0..=4 {
                for r1 in 0..=4 {
                    let d = score_formula(g0, r0, g1, r1) - score_formula(g1, r1, g0, r0);
                    assert_eq!(d, (g0 + r0) - (g1 + r1));
                }
            }
        }
    }
}

#[test]
fn v9_pass_and_lateness_under_seed() {
    let mut t = Table::new(Rules::seed());
    t.send(0, "SET:ABCD");
    t.send(1, "SET:ABCD");
    let (n0, n1) = (t.streams[0].len(), t.streams[1].len());
    t.send(0, "MOV:F,N");
    assert_eq!(t.since(0, n0), vec!["NG "]);
    assert_eq!(
        t.since(1, n1),
        vec!["MOV?14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u"]
    );
    t.send(1, "MOV:A,N");
    assert_eq!(t.s.game().ply(), 2);
    // Seat 0 is silent for 1000 ms.
    let n0 = t.streams[0].len();
    let start = t.now;
    assert_eq!(t.s.deadline(0), Some(start + 1000));
    let o = t.s.tick(start + 999);
    assert!(o.is_empty());
    t.now = start + 1000;
    let o = t.s.tick(start + 1000);
    t.take(o);
    assert_eq!(t.since(0, n0), vec!["NG "]);
    assert_eq!(t.s.game().ply(), 3);
    assert_eq!(t.s.awaiting(), Some(1));
    // Its late answer is discarded without reply, even once it is on turn again.
    t.send(1, "MOV:A,S");
    let n0 = t.streams[0].len();
    t.send(0, "MOV:B,N");
    assert_eq!(t.since(0, n0), Vec::<&str>::new());
    assert_eq!(t.s.awaiting(), Some(0));
    t.send(0, "MOV:B,N");
    assert_eq!(t.since(0, n0), vec!["OK "]);
    let passes =
        t.s.log_lines()
            .iter()
            .filter(|l| l.ends_with("PASS"))
            .count();
    assert_eq!(passes, 2);
}

#[test]
fn v10_placement_phase_and_out_of_turn() {
    let mut t = Table::new(Rules::gpw());
    for bad in ["SET:ABC", "SET:AABC", "SET:ABCI", "MOV:A,N"] {
        let n = t.streams[0].len();
        t.send(0, bad);
        assert_eq!(t.since(0, n), vec!["NG "], "{bad}");
    }
    t.send(0, "SET:abcd");
    let n = t.streams[0].len();
    t.send(0, "SET:EFGH");
    assert_eq!(t.since(0, n), vec!["NG "]);
    t.s.line(1, &Line::Text("SET:EFGH".into()), 50);
    // Both lines in one write: the first is applied, the second is out of turn.
    let n = t.streams[0].len();
    let mut lb = LineBuffer::new();
    for l in lb.push(b"MOV:A,N\r\nMOV:B,N\r\n") {
        let o = t.s.line(0, &l, 60);
        t.take(o);
    }
    assert_eq!(t.since(0, n)[0..2], ["OK ", "NG "]);
    assert_eq!(t.s.game().ply(), 1);
    for bad in ["MOV:A,UP", "MOV:A, N", "MOV:I,N", "MOV:,N"] {
        let mut t = Table::new(Rules::gpw());
        t.send(0, "SET:EFGH\n");
        t.send(1, "SET:ABCD");
        t.send(0, bad);
        assert_eq!(t.end_reason(), EndReason::IllegalMove, "{bad}");
        assert_eq!(t.since(0, 3), vec!["NG ", &t.last(0).to_string()[..]]);
        assert!(t.last(0).starts_with("LST:"));
    }
}

#[test]
fn replay_events_record_every_turn() {
    let mut t = Table::new(Rules::gpw());
    t.send(0, "SET:EFGH");
    t.send(1, "SET:ABCD");
    script(&mut t, V2);
    t.send(0, "MOV:A,N");
    let turns =
        t.s.events()
            .iter()
            .filter(|e| matches!(e, Event::Turn { .. }))
            .count();
    assert_eq!(turns, 11);
    assert!(matches!(
        t.s.events().last(),
        Some(Event::End {
            reason: EndReason::Escape,
            winner: Some(0),
            ..
        })
    ));
}
