//! Why a legal order failed: every unit whose result is `fails` has one reason (bounced, cut,
//! dislodged, no convoy, allowance used up, already used), and no other unit has one.

use kakehiki_diplomacy::service::Service;
use kakehiki_diplomacy::{adjudicate, standard, FailReason, OrderResult, Resolver};
use serde_json::{json, Value};

/// Adjudicate a service input line; the failure reasons by canonical unit, sorted.
fn failures(input: Value) -> Vec<(String, FailReason)> {
    let map = standard();
    let svc = Service::new();
    let line = input.to_string();
    let mut req = svc.request(&line).expect("valid line");
    let out = adjudicate(&mut Resolver::new(), map, &mut req.board, &req.orders);
    let mut failed: Vec<String> = out
        .results
        .iter()
        .filter(|(_, r)| *r == OrderResult::Fails)
        .map(|(u, _)| map.unit_name(u))
        .collect();
    failed.sort();
    let mut v: Vec<(String, FailReason)> = out
        .failures
        .iter()
        .map(|(u, f)| (map.unit_name(u), *f))
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    let named: Vec<String> = v.iter().map(|(u, _)| u.clone()).collect();
    assert_eq!(named, failed, "one reason per failed unit, none for others");
    v
}

fn f(u: &str, r: FailReason) -> (String, FailReason) {
    (u.to_string(), r)
}

#[test]
fn a_standoff_bounces_both_moves() {
    let got = failures(json!({"phase": "S1901M",
        "units": {"FRANCE": ["A PAR"], "GERMANY": ["A MUN"]},
        "orders": {"FRANCE": ["A PAR - BUR"], "GERMANY": ["A MUN - BUR"]}}));
    assert_eq!(
        got,
        vec![
            f("A MUN", FailReason::Bounced),
            f("A PAR", FailReason::Bounced)
        ]
    );
}

#[test]
fn cut_support_dislodged_hold_and_beaten_move() {
    let got = failures(json!({"phase": "S1901M",
        "units": {"AUSTRIA": ["A TRI", "A VIE", "F ADR"], "ITALY": ["A TYR", "A VEN"]},
        "orders": {"AUSTRIA": ["A TRI - VEN", "A VIE - TYR", "F ADR S A TRI - VEN"],
                   "ITALY": ["A VEN H", "A TYR S A VEN"]}}));
    assert_eq!(
        got,
        vec![
            f("A TYR", FailReason::Cut),
            f("A VEN", FailReason::Dislodged),
            f("A VIE", FailReason::Bounced),
        ]
    );
}

#[test]
fn a_dislodged_supporter_is_dislodged_not_cut() {
    let got = failures(json!({"phase": "S1901M",
        "units": {"AUSTRIA": ["A TRI", "F ADR", "A TYR"], "ITALY": ["A VEN", "A ROM"]},
        "orders": {"AUSTRIA": ["A TRI - VEN", "F ADR S A TRI - VEN", "A TYR S A TRI - VEN"],
                   "ITALY": ["A VEN S A ROM - APU", "A ROM - APU"]}}));
    assert_eq!(got, vec![f("A VEN", FailReason::Dislodged)]);
}

#[test]
fn a_disrupted_convoy_fails_the_army_for_want_of_a_convoy() {
    let got = failures(json!({"phase": "S1901M",
        "units": {"ENGLAND": ["A LON", "F NTH"], "GERMANY": ["F HEL", "F DEN"]},
        "orders": {"ENGLAND": ["A LON - HOL VIA", "F NTH C A LON - HOL"],
                   "GERMANY": ["F HEL - NTH", "F DEN S F HEL - NTH"]}}));
    assert_eq!(
        got,
        vec![
            f("A LON", FailReason::NoConvoy),
            f("F NTH", FailReason::Dislodged),
        ]
    );
}

#[test]
fn colliding_retreats_bounce() {
    let got = failures(
        json!({"phase": "S1901R", "units": {"AUSTRIA": ["A VEN", "A PIE"]},
        "dislodged": {"ITALY": {"A VEN": ["TUS"]}, "FRANCE": {"A PIE": ["TUS"]}},
        "orders": {"ITALY": ["A VEN R TUS"], "FRANCE": ["A PIE R TUS"]}}),
    );
    assert_eq!(
        got,
        vec![
            f("A PIE", FailReason::Bounced),
            f("A VEN", FailReason::Bounced)
        ]
    );
}

#[test]
fn builds_and_removals_beyond_the_allowance_or_on_a_used_site() {
    // One build: the second exceeds the allowance.
    let got = failures(
        json!({"phase": "W1901A", "units": {"AUSTRIA": ["A SER", "A GAL", "A BOH"]},
        "centers": {"AUSTRIA": ["BUD", "SER", "TRI", "VIE"]},
        "orders": {"AUSTRIA": ["A BUD B", "A VIE B"]}}),
    );
    assert_eq!(got, vec![f("A VIE", FailReason::AllowanceUsedUp)]);
    // Two builds, both in Trieste: the second finds the province used.
    let got = failures(
        json!({"phase": "W1901A", "units": {"AUSTRIA": ["A SER", "A GAL"]},
        "centers": {"AUSTRIA": ["BUD", "SER", "TRI", "VIE"]},
        "orders": {"AUSTRIA": ["A TRI B", "F TRI B"]}}),
    );
    assert_eq!(got, vec![f("F TRI", FailReason::AlreadyUsed)]);
    // One removal owed: the second is beyond it.
    let got = failures(
        json!({"phase": "W1901A", "units": {"AUSTRIA": ["A BUD", "A VIE", "A GAL"]},
        "centers": {"AUSTRIA": ["BUD", "VIE"]},
        "orders": {"AUSTRIA": ["A GAL D", "A VIE D"]}}),
    );
    assert_eq!(got, vec![f("A VIE", FailReason::AllowanceUsedUp)]);
}

#[test]
fn reasons_read_as_bots_receive_them() {
    assert_eq!(FailReason::Bounced.as_str(), "bounced");
    assert_eq!(FailReason::NoConvoy.as_str(), "no convoy");
    assert_eq!(FailReason::Dislodged.as_str(), "dislodged");
    assert_eq!(FailReason::Cut.as_str(), "cut");
    assert_eq!(FailReason::AllowanceUsedUp.as_str(), "allowance used up");
}
