//! `next_phase` as every judge (MILA, godip, the DATC's phase rules) computes it: a retreat phase
//! with no dislodged unit is skipped, an adjustment phase in which no power may build or must
//! remove is skipped, and centre ownership changes at the end of Fall whichever phase follows.
//! Every kind of phase is covered, through the service and through the full-game engine.

use kakehiki_core::Game;
use kakehiki_diplomacy::engine::{BuiltinBot, DiplomacyGame, Rules};
use kakehiki_diplomacy::service::Service;
use kakehiki_diplomacy::{Board, Phase, PhaseKind};
use serde_json::{json, Value};

fn adjudicate(input: Value) -> Value {
    let out = Service::new().line(&input.to_string());
    let v: Value = serde_json::from_str(&out).expect("output is JSON");
    assert!(v.get("error").is_none(), "line error: {out}");
    v
}

fn next(input: Value) -> String {
    adjudicate(input)["next_phase"]
        .as_str()
        .expect("next_phase")
        .to_string()
}

/// The 1901 position, as the service takes it.
fn start_units() -> Value {
    json!({
        "AUSTRIA": ["A BUD", "A VIE", "F TRI"], "ENGLAND": ["A LVP", "F EDI", "F LON"],
        "FRANCE": ["A MAR", "A PAR", "F BRE"], "GERMANY": ["A BER", "A MUN", "F KIE"],
        "ITALY": ["A ROM", "A VEN", "F NAP"], "RUSSIA": ["A MOS", "A WAR", "F SEV", "F STP/SC"],
        "TURKEY": ["A CON", "A SMY", "F ANK"]
    })
}

#[test]
fn spring_movement_without_dislodgement_skips_the_retreat_phase() {
    let out = adjudicate(json!({"phase": "S1901M", "units": start_units(),
        "orders": {"FRANCE": ["A PAR - BUR"], "GERMANY": ["A MUN - BUR"]}}));
    assert_eq!(out["next_phase"], "F1901M");
    assert_eq!(out["dislodged"], json!({}));
}

#[test]
fn spring_movement_with_a_dislodged_unit_goes_to_its_retreat_phase() {
    let out = adjudicate(json!({"phase": "S1901M",
        "units": {"AUSTRIA": ["A TRI", "F ADR"], "ITALY": ["A VEN"]},
        "orders": {"AUSTRIA": ["A TRI - VEN", "F ADR S A TRI - VEN"]}}));
    assert_eq!(out["next_phase"], "S1901R");
    assert_eq!(
        out["dislodged"]["ITALY"]["A VEN"],
        json!(["APU", "PIE", "ROM", "TUS", "TYR"])
    );
}

#[test]
fn a_dislodged_unit_without_retreat_options_is_destroyed_and_the_retreat_phase_skipped() {
    // Venice is surrounded: every neighbour occupied or the attacker's origin.
    let out = adjudicate(json!({"phase": "S1901M",
        "units": {"AUSTRIA": ["A TRI", "F ADR", "A TYR"],
                  "ITALY": ["A VEN", "A PIE", "A TUS", "A ROM", "A APU"]},
        "orders": {"AUSTRIA": ["A TRI - VEN", "F ADR S A TRI - VEN"]}}));
    assert_eq!(out["destroyed"], json!(["A VEN"]));
    assert_eq!(out["dislodged"], json!({}));
    assert_eq!(out["next_phase"], "F1901M");
}

#[test]
fn spring_retreat_is_followed_by_fall_movement() {
    let out = adjudicate(
        json!({"phase": "S1901R", "units": {"AUSTRIA": ["A VEN", "F ADR"]},
        "dislodged": {"ITALY": {"A VEN": ["ROM"]}}, "orders": {"ITALY": ["A VEN R ROM"]}}),
    );
    assert_eq!(out["next_phase"], "F1901M");
    // An empty spring retreat phase given on input is still adjudicated, then Fall follows.
    assert_eq!(
        next(json!({"phase": "S1901R", "units": start_units()})),
        "F1901M"
    );
}

#[test]
fn fall_movement_with_a_dislodged_unit_keeps_centres_until_the_retreat() {
    let out = adjudicate(json!({"phase": "F1901M",
        "units": {"AUSTRIA": ["A TRI", "F ADR"], "ITALY": ["A VEN"]},
        "centers": {"AUSTRIA": ["TRI"], "ITALY": ["VEN"]},
        "orders": {"AUSTRIA": ["A TRI - VEN", "F ADR S A TRI - VEN"]}}));
    assert_eq!(out["next_phase"], "F1901R");
    assert_eq!(
        out["centers"],
        json!({"AUSTRIA": ["TRI"], "ITALY": ["VEN"]})
    );
}

#[test]
fn fall_movement_without_dislodgement_or_adjustments_goes_to_next_spring() {
    // Everyone holds at home: centres equal units for every power.
    assert_eq!(
        next(json!({"phase": "F1901M", "units": start_units()})),
        "S1902M"
    );
    // Year numbers roll over whatever the year.
    assert_eq!(
        next(json!({"phase": "F1999M", "units": start_units()})),
        "S2000M"
    );
}

#[test]
fn fall_movement_with_a_capture_and_a_free_home_centre_goes_to_adjustments() {
    let out = adjudicate(json!({"phase": "F1901M", "units": start_units(),
        "orders": {"AUSTRIA": ["A BUD - SER"]}}));
    assert_eq!(out["next_phase"], "W1901A");
    // Centres changed at the end of Fall.
    assert_eq!(
        out["centers"]["AUSTRIA"],
        json!(["BUD", "SER", "TRI", "VIE"])
    );
}

#[test]
fn a_build_without_an_empty_owned_home_centre_does_not_make_an_adjustment_phase() {
    // Austria takes Serbia (5 centres, 4 units) while its three home centres stay occupied:
    // one build allowed, nowhere to build it.
    let out = adjudicate(json!({"phase": "F1901M",
        "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI", "A RUM"]},
        "centers": {"AUSTRIA": ["BUD", "GRE", "TRI", "VIE"]},
        "orders": {"AUSTRIA": ["A RUM - SER"]}}));
    assert_eq!(
        out["centers"]["AUSTRIA"],
        json!(["BUD", "GRE", "SER", "TRI", "VIE"])
    );
    assert_eq!(out["next_phase"], "S1902M");
    // With Budapest vacated the build can be made: the adjustment phase is played.
    let out = adjudicate(json!({"phase": "F1901M",
        "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI", "A RUM"]},
        "centers": {"AUSTRIA": ["BUD", "GRE", "TRI", "VIE"], "RUSSIA": ["SER"]},
        "orders": {"AUSTRIA": ["A RUM - SER", "A BUD - GAL"]}}));
    assert_eq!(
        out["centers"],
        json!({"AUSTRIA": ["BUD", "GRE", "SER", "TRI", "VIE"]})
    );
    assert_eq!(out["next_phase"], "W1901A");
    // Homes given on input decide where a build is possible: Austria takes Rumania and may
    // build only if Smyrna, empty and its own, is one of its homes.
    let line = |homes: bool| {
        let mut v = json!({"phase": "F1901M",
            "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI", "A RUM"]},
            "centers": {"AUSTRIA": ["BUD", "SMY", "TRI", "VIE"]}});
        if homes {
            v["homes"] = json!({"AUSTRIA": ["BUD", "SMY", "TRI", "VIE"]});
        }
        v
    };
    assert_eq!(next(line(true)), "W1901A");
    assert_eq!(next(line(false)), "S1902M");
}

#[test]
fn a_lost_centre_makes_an_adjustment_phase() {
    // Russia takes Budapest (2 centres, 1 unit, Warsaw empty: a build); Austria takes Serbia
    // for it (3 and 3).
    let out = adjudicate(json!({"phase": "F1901M",
        "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI"], "RUSSIA": ["A GAL"]},
        "centers": {"AUSTRIA": ["BUD", "TRI", "VIE"], "RUSSIA": ["WAR"]},
        "orders": {"AUSTRIA": ["A BUD - SER"], "RUSSIA": ["A GAL - BUD"]}}));
    assert_eq!(out["centers"]["AUSTRIA"], json!(["SER", "TRI", "VIE"]));
    assert_eq!(out["centers"]["RUSSIA"], json!(["BUD", "WAR"]));
    assert_eq!(out["next_phase"], "W1901A");
    // Two centres and three units, but the fleet takes Trieste: 3 and 3, no adjustments.
    let out = adjudicate(json!({"phase": "F1901M",
        "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI"]},
        "centers": {"AUSTRIA": ["BUD", "VIE"], "ITALY": ["TRI"]}}));
    assert_eq!(out["centers"], json!({"AUSTRIA": ["BUD", "TRI", "VIE"]}));
    assert_eq!(out["next_phase"], "S1902M");
    // 3 centres, 4 units: a removal.
    assert_eq!(
        next(json!({"phase": "F1901M",
        "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI", "A GAL"]},
        "centers": {"AUSTRIA": ["BUD", "TRI", "VIE"]}})),
        "W1901A"
    );
}

#[test]
fn fall_retreat_updates_centres_then_adjusts_or_skips() {
    // Italy's Venice is lost: Austria has 4 centres and 3 units with Budapest free.
    let out = adjudicate(json!({"phase": "F1901R",
        "units": {"AUSTRIA": ["A VEN", "A VIE", "F ADR"], "ITALY": ["A TYR", "F ROM"]},
        "dislodged": {"ITALY": {"A VEN": ["APU", "PIE", "TUS"]}},
        "centers": {"AUSTRIA": ["BUD", "TRI", "VIE"], "ITALY": ["NAP", "ROM", "VEN"]},
        "orders": {"ITALY": ["A VEN R TUS"]}}));
    assert_eq!(out["next_phase"], "W1901A");
    assert_eq!(
        out["centers"]["AUSTRIA"],
        json!(["BUD", "TRI", "VEN", "VIE"])
    );
    // The dislodged unit retreats, nobody's count changes: straight to the next spring.
    let out = adjudicate(json!({"phase": "F1901R",
        "units": {"AUSTRIA": ["A BUD", "A VIE", "F TRI"]},
        "dislodged": {"AUSTRIA": {"A GAL": ["SIL"]}},
        "centers": {"AUSTRIA": ["BUD", "SER", "TRI", "VIE"]},
        "orders": {"AUSTRIA": ["A GAL R SIL"]}}));
    assert_eq!(out["next_phase"], "S1902M");
}

#[test]
fn winter_adjustments_are_followed_by_spring_movement() {
    let out = adjudicate(json!({"phase": "W1901A",
        "units": {"AUSTRIA": ["A VEN", "A VIE", "F ADR"]},
        "centers": {"AUSTRIA": ["BUD", "TRI", "VEN", "VIE"]},
        "orders": {"AUSTRIA": ["F TRI B"]}}));
    assert_eq!(out["next_phase"], "S1902M");
    // An adjustment phase with nothing to do given on input is adjudicated all the same.
    assert_eq!(
        next(json!({"phase": "W1905A", "units": start_units()})),
        "S1906M"
    );
}

#[test]
fn next_phase_after_walks_past_every_empty_phase() {
    let mut b = Board::standard_start();
    let s = |t: &str| Phase::parse(t).expect("phase");
    assert_eq!(b.next_phase_after(s("S1901M")), s("F1901M"));
    assert_eq!(b.next_phase_after(s("S1901R")), s("F1901M"));
    assert_eq!(b.next_phase_after(s("F1901M")), s("S1902M"));
    assert_eq!(b.next_phase_after(s("F1901R")), s("S1902M"));
    assert_eq!(b.next_phase_after(s("W1901A")), s("S1902M"));
    // One power short of a unit with an empty home centre: the winter is played.
    let vie = b
        .units
        .iter()
        .position(|u| u.is_some_and(|u| kakehiki_diplomacy::standard().loc_name(u.loc) == "VIE"));
    b.units[vie.expect("A VIE")] = None;
    assert_eq!(b.next_phase_after(s("F1901M")), s("W1901A"));
    assert_eq!(b.next_phase_after(s("F1901R")), s("W1901A"));
    assert_eq!(b.next_phase_after(s("S1901M")), s("F1901M"));
}

/// The full-game engine plays the same sequence: no retreat phase without a dislodged unit, no
/// adjustment phase in which nobody builds or removes, and each phase follows the previous one
/// as `next_phase_after` says.
#[test]
fn the_full_game_engine_skips_the_same_phases() {
    let map = kakehiki_diplomacy::standard();
    let mut kinds = [0usize; 3];
    for seed in 0..8u64 {
        let mut game = DiplomacyGame::new(Rules {
            max_year: 1912,
            ..Rules::default()
        });
        let mut bots: Vec<BuiltinBot> = (0..7)
            .map(|i| BuiltinBot::new("random", seed, i).expect("bot"))
            .collect();
        let mut seen = 0;
        while game.outcome().is_none() {
            let before = game.board().clone();
            match before.phase.kind {
                PhaseKind::Movement => kinds[0] += 1,
                PhaseKind::Retreat => {
                    kinds[1] += 1;
                    assert!(
                        before.has_dislodged(),
                        "{}: empty retreat phase",
                        before.phase
                    );
                }
                PhaseKind::Adjustment => {
                    kinds[2] += 1;
                    assert!(
                        before.adjustment_needed(),
                        "{}: adjustment phase with nothing to adjust",
                        before.phase
                    );
                }
            }
            let acting = game.to_act();
            let actions: Vec<Option<Vec<String>>> = acting
                .iter()
                .map(|&s| Some(bots[s].order_strings(&before, kakehiki_diplomacy::Power(s as u8))))
                .collect();
            game.apply(&actions);
            let records = &game.history()[seen..];
            assert_eq!(records[0].phase, before.phase);
            // Replay the phase through the adjudicator: the game's next phase is its next_phase.
            let mut b = before.clone();
            let typed: Vec<_> = records[0]
                .orders
                .iter()
                .map(|(p, o)| {
                    (
                        *p,
                        kakehiki_diplomacy::parse_order(map, o).expect("canonical"),
                    )
                })
                .collect();
            let mut r = kakehiki_diplomacy::Resolver::new();
            kakehiki_diplomacy::adjudicate(&mut r, map, &mut b, &typed);
            let next = records
                .get(1)
                .map(|r| r.phase)
                .unwrap_or(game.board().phase);
            assert_eq!(next, b.phase, "after {}", before.phase);
            seen = game.history().len();
        }
    }
    assert!(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0, "{kinds:?}");
}
