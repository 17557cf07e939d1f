//! The referee state machine's fault handling, clocks and dispositions (spec §2.1, §2.2, §3.6).

use kakehiki_geister::engine::EndReason;
use kakehiki_geister::session::{Disposition, Event, FaultKind, Session};
use kakehiki_geister::wire::{Line, ServerMsg};
use kakehiki_geister::{Out, Rules};

fn text(s: &str) -> Line {
    Line::Text(s.into())
}

fn msgs(outs: &[Out], seat: usize) -> Vec<String> {
    outs.iter()
        .filter(|o| o.seat == seat)
        .map(|o| o.msg.text())
        .collect()
}

fn started(rules: Rules) -> Session {
    let mut s = Session::new(rules);
    s.assign(0, 0);
    s.assign(1, 0);
    s.line(0, &text("SET:ABCD"), 1);
    s.line(1, &text("SET:ABCD"), 2);
    s.clock_started(0, 2);
    s
}

#[test]
fn placement_timeouts_lose_and_both_is_a_double_forfeit() {
    let mut s = Session::new(Rules::gpw());
    s.assign(0, 0);
    s.assign(1, 100);
    s.line(1, &text("SET:EFGH"), 200);
    assert_eq!(s.deadline(0), Some(30_000));
    assert!(s.tick(29_999).is_empty());
    let outs = s.tick(30_000);
    assert_eq!(
        msgs(&outs, 1)[0],
        "WON:14B24B34B44B15R25R35R45R41b31b21b11b40b30b20b10b"
    );
    assert!(msgs(&outs, 0)[0].starts_with("LST:"));
    assert_eq!(s.game().end().unwrap().reason, EndReason::SetTimeout);
    assert_eq!(s.log_lines().last().unwrap(), "winner=1");

    let mut s = Session::new(Rules::seed());
    s.assign(0, 0);
    s.assign(1, 0);
    let outs = s.tick(30_000);
    assert_eq!(msgs(&outs, 0).len(), 1);
    assert_eq!(msgs(&outs, 1).len(), 1);
    assert!(outs.iter().all(|o| matches!(o.msg, ServerMsg::Lst(_))));
    let end = s.game().end().unwrap();
    assert_eq!((end.winner, end.reason), (None, EndReason::DoubleForfeit));
    assert!(!end.is_draw());
    assert!(s.log_lines().iter().all(|l| !l.starts_with("winner=")));
}

#[test]
fn disconnect_mid_game_gives_the_opponent_won_only() {
    let mut s = started(Rules::gpw());
    s.line(0, &text("MOV:A,N"), 10);
    let outs = s.fault(1, FaultKind::Disconnect, "closed", 20);
    assert_eq!(outs.len(), 1);
    assert_eq!(outs[0].seat, 0);
    assert!(matches!(outs[0].msg, ServerMsg::Won(_)));
    assert_eq!(s.game().end().unwrap().reason, EndReason::Disconnect);
    assert_eq!(s.log_lines().last().unwrap(), "winner=0");
    // Later lines are ignored without reply.
    assert!(s.line(0, &text("MOV:A,N"), 30).is_empty());
    assert!(matches!(
        s.events().last(),
        Some(Event::Line {
            disposition: Disposition::AfterEnd,
            ..
        })
    ));
    // A second fault after the end changes nothing.
    assert!(s.fault(0, FaultKind::Disconnect, "closed", 40).is_empty());
}

#[test]
fn gpw_clock_is_bank_plus_per_move_and_lateness_loses() {
    let mut rules = Rules::gpw();
    rules.bank_ms = 1_000;
    rules.per_move_ms = 500;
    let mut s = started(rules);
    assert_eq!(s.deadline(0), Some(2 + 1_500));
    // Seat 0 uses 800 ms: bank 200 left.
    s.line(0, &text("MOV:A,N"), 802);
    assert_eq!(s.bank(0), 200);
    s.clock_started(1, 802);
    s.line(1, &text("MOV:A,N"), 900);
    s.clock_started(0, 900);
    assert_eq!(s.deadline(0), Some(900 + 700));
    // Over the bank: it goes negative and counts as 0.
    s.line(0, &text("MOV:A,S"), 1_550);
    assert_eq!(s.bank(0), -450);
    s.clock_started(1, 1_550);
    s.line(1, &text("MOV:A,S"), 1_560);
    s.clock_started(0, 1_560);
    assert_eq!(s.deadline(0), Some(1_560 + 500));
    let outs = s.tick(2_060);
    assert!(msgs(&outs, 0)[0].starts_with("LST:"));
    assert!(msgs(&outs, 1)[0].starts_with("WON:"));
    assert_eq!(s.game().end().unwrap().reason, EndReason::Timeout);
}

#[test]
fn a_line_after_its_deadline_is_a_timeout_then_owed() {
    let mut s = started(Rules::seed());
    // Arrives at 1 003 ms, deadline was 1 002: timeout (pass), and the line is the owed one.
    let outs = s.line(0, &text("MOV:A,N"), 1_003);
    assert_eq!(msgs(&outs, 0), vec!["NG "]);
    assert!(msgs(&outs, 1)[0].starts_with("MOV?"));
    assert_eq!(s.game().ply(), 1);
    assert!(matches!(
        s.events().last(),
        Some(Event::Line {
            disposition: Disposition::OwedDiscarded,
            ..
        })
    ));
}

#[test]
fn empty_and_overlong_lines() {
    let mut s = started(Rules::gpw());
    assert!(s.line(0, &Line::Empty, 5).is_empty());
    assert!(s.line(1, &Line::Empty, 5).is_empty());
    // Out of turn, an overlong line is refused without penalty.
    assert_eq!(msgs(&s.line(1, &Line::TooLong, 6), 1), vec!["NG "]);
    assert!(!s.is_over());
    // On turn it is malformed: gpw loses.
    let outs = s.line(0, &Line::TooLong, 7);
    assert_eq!(msgs(&outs, 0)[0], "NG ");
    assert_eq!(s.game().end().unwrap().reason, EndReason::IllegalMove);
}

#[test]
fn writes_failing_or_processes_exiting_are_player_faults() {
    for kind in [FaultKind::WriteFailed, FaultKind::Exit] {
        let mut s = started(Rules::seed());
        let outs = s.fault(0, kind, "gone", 3);
        assert_eq!(outs.len(), 1);
        assert_eq!(s.game().end().unwrap().winner, Some(1));
        assert!(s.faults(&[], 4).is_empty());
    }
}

#[test]
fn report_end_names_use_the_tracker_vocabulary() {
    let allowed = [
        "escape",
        "captured_all_good",
        "lost_all_bad",
        "ply_limit",
        "score",
        "illegal_move",
        "timeout",
        "disconnect",
    ];
    let all = [
        EndReason::Escape,
        EndReason::CapturedAllBlue,
        EndReason::LostAllRed,
        EndReason::Score,
        EndReason::PlyLimitDraw,
        EndReason::IllegalMove,
        EndReason::Timeout,
        EndReason::Disconnect,
        EndReason::SetTimeout,
        EndReason::ConnectTimeout,
        EndReason::DoubleForfeit,
    ];
    for r in all {
        assert!(allowed.contains(&r.report_name()), "{r:?}");
        // The replay's name is the serde name.
        assert_eq!(serde_json::to_value(r).unwrap(), r.as_str());
    }
    assert_eq!(
        EndReason::CapturedAllBlue.report_name(),
        "captured_all_good"
    );
    assert_eq!(EndReason::LostAllRed.report_name(), "lost_all_bad");
    assert_eq!(EndReason::SetTimeout.report_name(), "timeout");
}

/// Spec §3.6 and its worked example (§3.10): a seat assigned before its opponent places at once
/// (`OK `), a line meanwhile is out of turn (`NG `), and the game starts when the opponent,
/// assigned later, has placed too.
#[test]
fn a_seat_assigned_first_places_at_once_and_play_starts_once_both_have_placed() {
    let mut s = Session::new(Rules::gpw());
    assert_eq!(msgs(&s.assign(0, 40), 0), ["SET?"]);
    let outs = s.line(0, &text("SET:hfad"), 55);
    assert_eq!(msgs(&outs, 0), ["OK "]);
    assert!(msgs(&outs, 1).is_empty());
    assert_eq!(msgs(&s.line(0, &text("MOV:H,E"), 60), 0), ["NG "]);
    assert_eq!(s.first_set_at(), Some(55));
    assert_eq!(msgs(&s.assign(1, 900), 1), ["SET?"]);
    let outs = s.line(1, &text("SET:DBCE"), 950);
    assert_eq!(msgs(&outs, 1), ["OK "]);
    assert_eq!(
        msgs(&outs, 0),
        ["MOV?14R24B34B44R15B25R35B45R41u31u21u11u40u30u20u10u"]
    );
    assert_eq!(s.log_lines(), ["player=0,SET:HFAD", "player=1,SET:DBCE"]);
}

/// A seat whose opponent never connects: its placement is answered and kept, and it wins by the
/// opponent's connection timeout with its placement on record (replay event, compatible log,
/// the end message's board).
#[test]
fn a_placement_is_kept_when_the_opponent_never_connects() {
    let mut s = Session::new(Rules::gpw());
    s.assign(0, 3);
    assert_eq!(msgs(&s.line(0, &text("SET:ABCD"), 10), 0), ["OK "]);
    let outs = s.fault(1, FaultKind::ConnectTimeout, "no connection", 30_000);
    assert_eq!(
        msgs(&outs, 0),
        ["WON:14R24R34R44R15B25B35B45B41b31b21b11b40b30b20b10b"]
    );
    assert!(msgs(&outs, 1).is_empty());
    let set: Vec<&Event> = s
        .events()
        .iter()
        .filter(|e| matches!(e, Event::Set { .. }))
        .collect();
    assert!(
        matches!(
            set[..],
            [Event::Set {
                seat: 0,
                t: 10,
                accepted: true,
                red: Some(ref red),
                ..
            }] if red == "ABCD"
        ),
        "{set:?}"
    );
    let end = s.game().end().unwrap();
    assert_eq!(
        (end.winner, end.reason),
        (Some(0), EndReason::ConnectTimeout)
    );
    assert_eq!(s.log_lines(), ["player=0,SET:ABCD", "winner=0"]);
}
