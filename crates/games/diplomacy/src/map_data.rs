//! The map the engine plays on, as data (`kakehiki diplomacy map`; docs/protocols/diplomacy.md,
//! "The map"): provinces (name, type, supply centre, home power, coasts), army and fleet
//! adjacency, and the start position, read from the engine's own tables, so it is exactly what
//! the adjudicator uses. As one JSON object ([`map_json`]) or as text ([`map_text`]).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use crate::map::bits;
use crate::{Board, Loc, Map, Power, Prov, ProvinceKind, UnitKind, NUM_PROVINCES, POWER_NAMES};

fn kind_name(kind: ProvinceKind) -> &'static str {
    match kind {
        ProvinceKind::Sea => "sea",
        ProvinceKind::Coast => "coast",
        ProvinceKind::Land => "land",
    }
}

/// Names of the locations in a set, sorted.
fn loc_names(map: &Map, set: u128) -> Vec<&str> {
    let mut v: Vec<&str> = bits(set).map(|l| map.loc_name(l)).collect();
    v.sort_unstable();
    v
}

/// Location name → the location names it is adjacent to.
type Adjacency<'a> = BTreeMap<&'a str, Vec<&'a str>>;

/// Army adjacency by province (land and coast provinces), fleet adjacency by fleet location
/// (seas, coasts without split coasts, and each coast of a split-coast province).
fn adjacency(map: &Map) -> (Adjacency<'_>, Adjacency<'_>) {
    let mut army = BTreeMap::new();
    let mut fleet = BTreeMap::new();
    for l in 0..map.num_locations() as Loc {
        if map.can_stand(UnitKind::Army, l) {
            army.insert(map.loc_name(l), loc_names(map, map.army_adj(l)));
        }
        if map.can_stand(UnitKind::Fleet, l) {
            fleet.insert(map.loc_name(l), loc_names(map, map.fleet_adj(l)));
        }
    }
    (army, fleet)
}

/// The start position: units and centres per power, sorted.
fn start_position(map: &Map, start: &Board) -> (Value, Value) {
    let mut units = serde_json::Map::new();
    let mut centers = serde_json::Map::new();
    for power in Power::ALL {
        let mut us: Vec<String> = start.units_of(power).map(|u| map.unit_name(&u)).collect();
        us.sort_unstable();
        let mut cs: Vec<&str> = (0..NUM_PROVINCES as Prov)
            .filter(|&p| start.owner[p as usize] == Some(power))
            .map(|p| map.prov_name(p))
            .collect();
        cs.sort_unstable();
        units.insert(power.name().into(), json!(us));
        centers.insert(power.name().into(), json!(cs));
    }
    (Value::Object(units), Value::Object(centers))
}

/// The map as one JSON object (docs/protocols/diplomacy.md, "The map").
pub fn map_json(map: &Map, start: &Board) -> Value {
    let provinces: serde_json::Map<String, Value> = map
        .provinces
        .iter()
        .map(|p| {
            let coasts: Vec<&str> = p.coasts.iter().map(|&c| map.loc_name(c)).collect();
            (
                p.abbr.clone(),
                json!({
                    "name": p.name,
                    "type": kind_name(p.kind),
                    "supply_center": p.supply_center,
                    "home": p.home_of.map(|h| h.name()),
                    "coasts": coasts,
                }),
            )
        })
        .collect();
    let (army, fleet) = adjacency(map);
    let (units, centers) = start_position(map, start);
    json!({
        "map": "standard",
        "powers": POWER_NAMES,
        "provinces": provinces,
        "adjacency": {"army": army, "fleet": fleet},
        "start": {"phase": start.phase.to_string(), "units": units, "centers": centers},
    })
}

/// The map as plain text: a table of provinces, then adjacency and the start position.
pub fn map_text(map: &Map, start: &Board) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let count = |k| map.provinces.iter().filter(|p| p.kind == k).count();
    let _ = writeln!(
        out,
        "standard map: {} provinces ({} sea, {} coast, {} land), {} supply centres",
        map.provinces.len(),
        count(ProvinceKind::Sea),
        count(ProvinceKind::Coast),
        count(ProvinceKind::Land),
        map.provinces.iter().filter(|p| p.supply_center).count()
    );
    let _ = writeln!(out, "\nPROV  TYPE   SC  HOME     COASTS         NAME");
    for p in &map.provinces {
        let coasts: Vec<&str> = p.coasts.iter().map(|&c| map.loc_name(c)).collect();
        let _ = writeln!(
            out,
            "{:<5} {:<6} {:<3} {:<8} {:<14} {}",
            p.abbr,
            kind_name(p.kind),
            if p.supply_center { "SC" } else { "-" },
            p.home_of.map_or("-", |h| h.name()),
            if coasts.is_empty() {
                "-".to_string()
            } else {
                coasts.join(" ")
            },
            p.name
        );
    }
    let (army, fleet) = adjacency(map);
    let _ = writeln!(out, "\nArmy adjacency (an army in PROV may move to):");
    for (from, tos) in &army {
        let _ = writeln!(out, "A {from}: {}", tos.join(" "));
    }
    let _ = writeln!(out, "\nFleet adjacency (a fleet at LOCATION may move to):");
    for (from, tos) in &fleet {
        let _ = writeln!(out, "F {from}: {}", tos.join(" "));
    }
    let (units, centers) = start_position(map, start);
    let _ = writeln!(out, "\nStart position ({}):", start.phase);
    for power in POWER_NAMES {
        let list = |v: &Value| {
            v[power]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default()
        };
        let _ = writeln!(
            out,
            "{power}: units {}; centres {}",
            list(&units),
            list(&centers)
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_standard_map_as_json_and_text() {
        let (map, start) = (crate::standard(), Board::standard_start());
        let v = map_json(map, &start);
        assert_eq!(v["provinces"].as_object().map(|p| p.len()), Some(75));
        assert_eq!(v["provinces"]["SPA"]["coasts"], json!(["SPA/NC", "SPA/SC"]));
        assert_eq!(
            v["start"]["units"]["ENGLAND"],
            json!(["A LVP", "F EDI", "F LON"])
        );
        let text = map_text(map, &start);
        assert!(
            text.starts_with(
                "standard map: 75 provinces (19 sea, 42 coast, 14 land), 34 supply centres\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("\nENGLAND: units A LVP, F EDI, F LON; centres EDI, LON, LVP\n"),
            "{text}"
        );
    }
}
