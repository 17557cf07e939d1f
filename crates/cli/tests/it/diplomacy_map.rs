//! `kakehiki diplomacy map`: the map a bot gets is the engine's own (every province and every
//! adjacency set compared with the engine's tables), with the standard map's counts and a few
//! well-known facts.

use std::collections::BTreeSet;

use kakehiki_diplomacy::map::{bits, standard};
use kakehiki_diplomacy::{Board, ProvinceKind, UnitKind};
use serde_json::Value;

use crate::support::kakehiki;

fn run(args: &[&str]) -> String {
    let out = kakehiki().args(args).output().expect("run kakehiki");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

fn map_json() -> Value {
    serde_json::from_str(&run(&["diplomacy", "map", "--json"])).expect("the map is JSON")
}

fn names(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("a list: {v}"))
        .iter()
        .map(|s| s.as_str().expect("a string").to_string())
        .collect()
}

#[test]
fn map_json_has_the_standard_counts_and_known_facts() {
    let m = map_json();
    assert_eq!(m["map"], "standard");
    let provs = m["provinces"].as_object().expect("provinces object");
    assert_eq!(provs.len(), 75);
    let count = |f: &dyn Fn(&Value) -> bool| provs.values().filter(|p| f(p)).count();
    assert_eq!(count(&|p| p["supply_center"] == true), 34);
    assert_eq!(count(&|p| !p["home"].is_null()), 22);
    assert_eq!(count(&|p| p["type"] == "sea"), 19);
    assert_eq!(count(&|p| p["type"] == "coast"), 42);
    assert_eq!(count(&|p| p["type"] == "land"), 14);
    assert_eq!(count(&|p| p["home"] == "RUSSIA"), 4);

    assert_eq!(provs["SPA"]["name"], "Spain");
    assert_eq!(
        names(&provs["SPA"]["coasts"]),
        names(&serde_json::json!(["SPA/NC", "SPA/SC"]))
    );
    assert_eq!(names(&provs["BUL"]["coasts"]).len(), 2);
    assert_eq!(provs["MOS"]["home"], "RUSSIA");
    assert_eq!(provs["MUN"]["type"], "land");

    let army = &m["adjacency"]["army"];
    let fleet = &m["adjacency"]["fleet"];
    assert!(names(&fleet["SPA/SC"]).contains("LYO"), "F SPA/SC - LYO");
    assert!(
        !names(&fleet["SPA/NC"]).contains("LYO"),
        "not from the north coast"
    );
    assert!(names(&fleet["LYO"]).contains("SPA/SC"));
    assert!(names(&army["MOS"]).contains("WAR"), "A MOS - WAR");
    assert!(army.get("NTH").is_none(), "no army adjacency for a sea");
    assert!(fleet.get("MUN").is_none(), "no fleet adjacency inland");
    assert!(
        fleet.get("SPA").is_none(),
        "a split-coast province is given per coast"
    );
    assert!(names(&fleet["STP/NC"]).contains("BAR"));

    let start = &m["start"];
    assert_eq!(start["phase"], "S1901M");
    assert_eq!(
        names(&start["units"]["RUSSIA"]),
        names(&serde_json::json!(["A MOS", "A WAR", "F SEV", "F STP/SC"]))
    );
    assert_eq!(names(&start["centers"]["ENGLAND"]).len(), 3);
}

/// Every fact of the printed map equals the engine's tables, and every engine location is
/// printed (so the output is not a second copy that could drift).
#[test]
fn map_json_equals_the_engines_tables() {
    let m = map_json();
    let map = standard();
    let provs = m["provinces"].as_object().unwrap();
    for p in &map.provinces {
        let v = &provs[&p.abbr];
        assert_eq!(v["name"], p.name.as_str());
        let kind = match p.kind {
            ProvinceKind::Sea => "sea",
            ProvinceKind::Coast => "coast",
            ProvinceKind::Land => "land",
        };
        assert_eq!(v["type"], kind, "{}", p.abbr);
        assert_eq!(v["supply_center"], p.supply_center, "{}", p.abbr);
        assert_eq!(
            v["home"].as_str(),
            p.home_of.map(|h| h.name()),
            "{}",
            p.abbr
        );
        let coasts: BTreeSet<String> = p.coasts.iter().map(|&c| map.loc_name(c).into()).collect();
        assert_eq!(names(&v["coasts"]), coasts, "{}", p.abbr);
    }
    let set = |s: u128| -> BTreeSet<String> { bits(s).map(|l| map.loc_name(l).into()).collect() };
    let (mut armies, mut fleets) = (0, 0);
    for l in 0..map.num_locations() as u8 {
        let name = map.loc_name(l);
        if map.can_stand(UnitKind::Army, l) {
            armies += 1;
            assert_eq!(
                names(&m["adjacency"]["army"][name]),
                set(map.army_adj(l)),
                "A {name}"
            );
        }
        if map.can_stand(UnitKind::Fleet, l) {
            fleets += 1;
            assert_eq!(
                names(&m["adjacency"]["fleet"][name]),
                set(map.fleet_adj(l)),
                "F {name}"
            );
        }
    }
    assert_eq!(m["adjacency"]["army"].as_object().unwrap().len(), armies);
    assert_eq!(m["adjacency"]["fleet"].as_object().unwrap().len(), fleets);
    assert_eq!((armies, fleets), (56, 64));
    let start = Board::standard_start();
    let mut units = 0;
    for power in kakehiki_diplomacy::Power::ALL {
        let ours: BTreeSet<String> = start.units_of(power).map(|u| map.unit_name(&u)).collect();
        units += ours.len();
        assert_eq!(names(&m["start"]["units"][power.name()]), ours);
    }
    assert_eq!(units, 22);
}

#[test]
fn map_text_lists_provinces_adjacency_and_start() {
    let text = run(&["diplomacy", "map"]);
    assert!(
        text.starts_with(
            "standard map: 75 provinces (19 sea, 42 coast, 14 land), 34 supply centres\n"
        ),
        "{text}"
    );
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{text}"))
            .to_string()
    };
    assert!(line("SPA ").contains("Spain"));
    assert!(line("SPA ").contains("SPA/NC SPA/SC"));
    assert!(line("F SPA/SC: ").contains("LYO"));
    assert!(line("A MOS: ").contains("WAR"));
    assert!(line("RUSSIA: ").contains("F STP/SC"));
}

/// The excerpt in docs/protocols/diplomacy.md ("The map") is the real output: every value it
/// shows is the value printed, and every field the output has is documented in the table.
#[test]
fn the_documented_map_excerpt_is_the_real_output() {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/protocols/diplomacy.md"),
    )
    .unwrap();
    let section = doc
        .split("## The map\n")
        .nth(1)
        .expect("a section \"The map\"");
    let section = section.split("\n## ").next().unwrap();
    let block = section
        .split("```json\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("a json example");
    let doc_map: Value = serde_json::from_str(block).expect("the example is JSON");
    let real = map_json();
    fn is_part(doc: &Value, real: &Value, at: &str) {
        match doc {
            Value::Object(o) => {
                for (k, v) in o {
                    is_part(v, &real[k.as_str()], &format!("{at}.{k}"));
                }
            }
            v => assert_eq!(v, real, "{at}"),
        }
    }
    is_part(&doc_map, &real, "");
    for field in ["map", "powers", "provinces"] {
        assert!(
            section.contains(&format!("| `{field}` |")),
            "{field} undocumented"
        );
    }
    for field in real["provinces"]["SPA"].as_object().unwrap().keys() {
        assert!(
            section.contains(&format!("| `provinces.P.{field}` |")),
            "provinces.P.{field} undocumented"
        );
    }
    for group in real["adjacency"].as_object().unwrap().keys() {
        assert!(section.contains(&format!("| `adjacency.{group}` |")));
    }
    for field in real["start"].as_object().unwrap().keys() {
        assert!(
            section.contains(&format!("| `start.{field}` |")),
            "start.{field}"
        );
    }
}
