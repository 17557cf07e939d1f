//! Our map equals the facts file: provinces, kinds, names, centres, homes, coasts, army and fleet
//! adjacency (as symmetric sets) and the start position. Read independently with serde_json.

use kakehiki_diplomacy::map::{bits, standard, STANDARD_MAP_JSON};
use kakehiki_diplomacy::{Board, ProvinceKind, UnitKind};
use serde_json::Value;
use std::collections::BTreeSet;

fn facts() -> Value {
    serde_json::from_str(STANDARD_MAP_JSON).unwrap()
}

#[test]
fn embedded_copy_equals_the_shared_facts_file_when_present() {
    let shared = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../../shared/diplomacy/standard-map.json");
    if let Ok(text) = std::fs::read_to_string(&shared) {
        assert_eq!(
            text,
            STANDARD_MAP_JSON,
            "data/standard-map.json must be a copy of {}",
            shared.display()
        );
    }
}

#[test]
fn provinces_kinds_names_centres_homes_coasts() {
    let map = standard();
    let f = facts();
    let provs = f["provinces"].as_object().unwrap();
    assert_eq!(map.provinces.len(), provs.len());
    assert_eq!(provs.len(), 75);
    let mut counts = (0, 0, 0, 0, 0);
    for (abbr, p) in provs {
        let id = map
            .province(abbr)
            .unwrap_or_else(|| panic!("{abbr} missing"));
        let ours = &map.provinces[id as usize];
        assert_eq!(&ours.abbr, abbr);
        assert_eq!(ours.name, p["name"].as_str().unwrap());
        let kind = match p["kind"].as_str().unwrap() {
            "sea" => ProvinceKind::Sea,
            "coast" => ProvinceKind::Coast,
            "land" => ProvinceKind::Land,
            k => panic!("kind {k}"),
        };
        assert_eq!(ours.kind, kind, "{abbr}");
        assert_eq!(
            ours.supply_center,
            p["supply_center"].as_bool().unwrap(),
            "{abbr}"
        );
        assert_eq!(
            ours.home_of.map(|h| h.name()),
            p["home_of"].as_str(),
            "{abbr}"
        );
        let coasts: Vec<&str> = ours.coasts.iter().map(|&c| map.loc_name(c)).collect();
        let theirs: Vec<&str> = p["coasts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(coasts, theirs, "{abbr}");
        match kind {
            ProvinceKind::Sea => counts.0 += 1,
            ProvinceKind::Coast => counts.1 += 1,
            ProvinceKind::Land => counts.2 += 1,
        }
        if ours.supply_center {
            counts.3 += 1;
        }
        if ours.home_of.is_some() {
            counts.4 += 1;
        }
    }
    assert_eq!(counts, (19, 42, 14, 34, 22));
    assert!(
        map.province("SWI").is_none(),
        "Switzerland is impassable, not a province"
    );
}

fn edges(v: &Value) -> BTreeSet<(String, String)> {
    let mut s = BTreeSet::new();
    for (from, tos) in v.as_object().unwrap() {
        for t in tos.as_array().unwrap() {
            s.insert((from.clone(), t.as_str().unwrap().to_string()));
        }
    }
    s
}

#[test]
fn army_and_fleet_adjacency_equal_the_file_and_are_symmetric() {
    let map = standard();
    let f = facts();
    let mut army = BTreeSet::new();
    let mut fleet = BTreeSet::new();
    for p in 0..75u8 {
        for q in bits(map.army_adj(p)) {
            army.insert((map.prov_name(p).to_string(), map.prov_name(q).to_string()));
        }
    }
    for l in 0..map.num_locations() as u8 {
        for m in bits(map.fleet_adj(l)) {
            fleet.insert((map.loc_name(l).to_string(), map.loc_name(m).to_string()));
        }
    }
    assert_eq!(army, edges(&f["adjacency"]["army"]));
    assert_eq!(fleet, edges(&f["adjacency"]["fleet"]));
    for (a, b) in army.iter().chain(fleet.iter()) {
        assert!(
            army.contains(&(b.clone(), a.clone())) || fleet.contains(&(b.clone(), a.clone())),
            "{a}-{b}"
        );
    }
    assert_eq!(army.len(), 2 * 111);
    assert_eq!(fleet.len(), 2 * 141);
    // The eleven borders the `diplomacy` crate lacks are present.
    for (a, b) in [("GAL", "UKR"), ("LVN", "WAR"), ("NWY", "STP")] {
        assert!(army.contains(&(a.into(), b.into())), "army {a}-{b}");
    }
    for (a, b) in [
        ("BOT", "FIN"),
        ("BOT", "LVN"),
        ("BOT", "STP/SC"),
        ("BOT", "SWE"),
        ("CON", "SMY"),
        ("MAO", "SPA/SC"),
        ("NWY", "STP/NC"),
        ("TUS", "TYS"),
    ] {
        assert!(fleet.contains(&(a.into(), b.into())), "fleet {a}-{b}");
    }
}

#[test]
fn start_position_equals_the_file() {
    let map = standard();
    let f = facts();
    let b = Board::standard_start();
    let mut ours: BTreeSet<(String, String)> = BTreeSet::new();
    for u in b.units.iter().flatten() {
        ours.insert((u.power.name().to_string(), map.unit_name(u)));
        if u.kind == UnitKind::Army {
            assert_eq!(u.loc, map.prov_of(u.loc));
        }
    }
    let mut theirs = BTreeSet::new();
    for (pw, us) in f["start"]["units"].as_object().unwrap() {
        for u in us.as_array().unwrap() {
            theirs.insert((pw.clone(), u.as_str().unwrap().to_string()));
        }
    }
    assert_eq!(ours, theirs);
    assert_eq!(ours.len(), 22);
    let mut centers = BTreeSet::new();
    for (p, o) in b.owner.iter().enumerate() {
        if let Some(o) = o {
            centers.insert((o.name().to_string(), map.prov_name(p as u8).to_string()));
        }
    }
    let mut theirs = BTreeSet::new();
    for (pw, cs) in f["start"]["centers"].as_object().unwrap() {
        for c in cs.as_array().unwrap() {
            theirs.insert((pw.clone(), c.as_str().unwrap().to_string()));
        }
    }
    assert_eq!(centers, theirs);
}

#[test]
fn aliases_resolve() {
    let map = standard();
    for (alias, canon) in [
        ("ECH", "ENG"),
        ("EME", "EAS"),
        ("GOB", "BOT"),
        ("GOL", "LYO"),
        ("MID", "MAO"),
        ("NAT", "NAO"),
        ("NOR", "NWY"),
        ("NRG", "NWG"),
        ("TYN", "TYS"),
    ] {
        assert_eq!(map.province(alias), map.province(canon), "{alias}");
    }
}
