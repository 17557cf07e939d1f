//! What a person playing a power is offered and checked against (the human seat, `docs/human.md`):
//! from a `phase` message alone, each orderable unit's (or build site's) legal orders, and a
//! check of a typed reply.
//!
//! The orders offered are legal by the map: holds, moves to adjacent places, supports of a unit
//! holding or moving where the supporter could move, retreats to the places the message lists,
//! disbands, builds of each kind a site can take. Convoys are not offered (typed, they are taken).

use serde_json::{json, Map as JMap, Value};

use crate::map::{bits, standard, Map, Prov};
use crate::order::parse_order;
use crate::types::{Loc, UnitKind};

/// A unit of the state, as a kind and a location.
fn unit_at(map: &Map, text: &str) -> Option<(UnitKind, Loc)> {
    let (k, place) = text.split_once(' ')?;
    let kind = match k {
        "A" => UnitKind::Army,
        "F" => UnitKind::Fleet,
        _ => return None,
    };
    Some((kind, map.location(place)?))
}

/// The provinces a unit could move to (and so support into).
fn reach(map: &Map, kind: UnitKind, l: Loc) -> u128 {
    match kind {
        UnitKind::Army => map.army_adj(map.prov_of(l)),
        UnitKind::Fleet => map.fleet_adj_prov(l),
    }
}

/// The legal orders of a movement phase's unit `me` among all the `units` on the board.
fn movement_orders(map: &Map, me: &str, units: &[String]) -> Vec<String> {
    let Some((kind, l)) = unit_at(map, me) else {
        return Vec::new();
    };
    let p = map.prov_of(l);
    let mut v = vec![format!("{me} H")];
    match kind {
        UnitKind::Army => {
            v.extend(bits(map.army_adj(p)).map(|q| format!("{me} - {}", map.prov_name(q as Prov))))
        }
        UnitKind::Fleet => {
            v.extend(bits(map.fleet_adj(l)).map(|m| format!("{me} - {}", map.loc_name(m as Loc))))
        }
    }
    let mine = reach(map, kind, l);
    for other in units {
        let Some((ok, ol)) = unit_at(map, other) else {
            continue;
        };
        let op = map.prov_of(ol);
        if op == p {
            continue;
        }
        if mine & (1u128 << op) != 0 {
            v.push(format!("{me} S {other}"));
        }
        for t in bits(mine & reach(map, ok, ol)) {
            if t as Prov != op {
                v.push(format!("{me} S {other} - {}", map.prov_name(t as Prov)));
            }
        }
    }
    v
}

/// The builds a site takes: an army where one may stand, a fleet on each coast.
fn builds_at(map: &Map, site: &str) -> Vec<String> {
    let Some(p) = map.province(site) else {
        return Vec::new();
    };
    let mut v = Vec::new();
    if map.can_stand(UnitKind::Army, p) {
        v.push(format!("A {site} B"));
    }
    if map.is_split(p) {
        for c in ["NC", "SC", "EC", "WC"] {
            if let Some(l) = map.coast_of(p, c) {
                v.push(format!("F {} B", map.loc_name(l)));
            }
        }
    } else if map.can_stand(UnitKind::Fleet, p) {
        v.push(format!("F {site} B"));
    }
    v
}

/// For a `phase` message, each entry of its `orderable` with the orders offered for it, in a
/// JSON object (`{"A PAR": ["A PAR H", "A PAR - BUR", ...], ...}`); `None` for any other message.
pub fn choices(message: &str) -> Option<Value> {
    let msg: Value = serde_json::from_str(message.trim()).ok()?;
    if msg["type"] != "phase" {
        return None;
    }
    let map = standard();
    let phase = msg["phase"].as_str()?;
    let orderable: Vec<String> = msg["orderable"]
        .as_array()?
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    let units: Vec<String> = msg["state"]["units"]
        .as_object()
        .map(|m| {
            m.values()
                .filter_map(Value::as_array)
                .flatten()
                .filter_map(|u| u.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let mut out = JMap::new();
    for o in &orderable {
        let offered = match phase.chars().last() {
            Some('M') => movement_orders(map, o, &units),
            Some('R') => {
                let options = msg["state"]["dislodged"]
                    .as_object()
                    .and_then(|by_power| by_power.values().find_map(|d| d.get(o.as_str())))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                let mut v: Vec<String> = options
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|to| format!("{o} R {to}"))
                    .collect();
                v.push(format!("{o} D"));
                v
            }
            _ if msg.get("builds").is_some() => builds_at(map, o),
            _ => vec![format!("{o} D")],
        };
        out.insert(o.clone(), json!(offered));
    }
    Some(
        json!({ "phase": phase, "orders": out, "builds": msg["builds"], "removals": msg["removals"] }),
    )
}

/// A person's reply to the last message checked before it is sent: `{"ready":true}` to
/// `start`; to a phase, `{"orders":[...]}` whose orders read as orders and each order one of
/// the phase's own units or sites (so a typo or a unit of another power is refused with the
/// reason); to a press round, `{"messages":[...]}`.
pub fn check_reply(last: &str, reply: &str) -> Result<(), String> {
    let msg: Value = serde_json::from_str(last.trim())
        .map_err(|e| format!("the last message is not JSON: {e}"))?;
    let r: Value = serde_json::from_str(reply.trim()).map_err(|e| {
        format!("a reply is one JSON object, as {{\"orders\":[\"A PAR - BUR\"]}}: {e}")
    })?;
    match msg["type"].as_str() {
        Some("start") if r["ready"] == true => Ok(()),
        Some("start") => Err("the referee waits for {\"ready\":true}".into()),
        Some("press") if r["messages"].is_array() => Ok(()),
        Some("press") => {
            Err("a press round takes {\"messages\":[...]} ({\"messages\":[]}: none)".into())
        }
        Some("phase") => {
            let orders = r["orders"]
                .as_array()
                .ok_or("a phase takes {\"orders\":[...]} ({\"orders\":[]}: every unit holds)")?;
            let orderable: Vec<&str> = msg["orderable"]
                .as_array()
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let map = standard();
            for o in orders {
                let text = o.as_str().ok_or(format!("{o} is not an order's text"))?;
                if text.trim().eq_ignore_ascii_case("WAIVE") {
                    continue;
                }
                parse_order(map, text).map_err(|e| format!("{text:?}: {e}"))?;
                let upper = text.trim().to_ascii_uppercase();
                let words: Vec<&str> = upper.split_whitespace().collect();
                // A unit (`A PAR`), or a build site (`STP` of `F STP/NC B`).
                let of = |u: &str| {
                    words.len() >= 2
                        && (format!("{} {}", words[0], words[1]) == u
                            || words[1].split('/').next() == Some(u))
                };
                if !orderable.iter().any(|u| of(u)) {
                    return Err(format!(
                        "{text:?} orders none of your units or places this phase: {}",
                        orderable.join(", ")
                    ));
                }
            }
            Ok(())
        }
        _ => Err("nothing to reply to".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S1901M: &str = r#"{"type":"phase","seq":2,"phase":"S1901M","deadline_ms":5000,"state":{"units":{"AUSTRIA":["A BUD","A VIE","F TRI"],"ITALY":["A ROM","A VEN","F NAP"],"RUSSIA":["A MOS","A WAR","F SEV","F STP/SC"]},"dislodged":{},"centers":{}},"orderable":["A BUD","A VIE","F TRI"],"inbox":[],"history":[]}"#;

    #[test]
    fn a_person_is_offered_the_legal_orders_of_each_unit() {
        let c = choices(S1901M).unwrap();
        let vie: Vec<&str> = c["orders"]["A VIE"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        for o in [
            "A VIE H",
            "A VIE - GAL",
            "A VIE - TYR",
            "A VIE S A BUD",
            "A VIE S A BUD - GAL",
            "A VIE S A VEN - TYR",
            "A VIE S F TRI",
        ] {
            assert!(vie.contains(&o), "{o} in {vie:?}");
        }
        assert!(!vie.contains(&"A VIE - TRI S"));
        assert!(
            !vie.iter().any(|o| o.contains("- ADR")),
            "an army goes by land: {vie:?}"
        );
        let tri: Vec<&str> = c["orders"]["F TRI"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(
            tri.contains(&"F TRI - ADR") && tri.contains(&"F TRI S A VEN"),
            "{tri:?}"
        );
        assert!(
            !tri.contains(&"F TRI - VIE"),
            "a fleet goes by sea: {tri:?}"
        );
        // Every offered order reads as an order.
        for list in c["orders"].as_object().unwrap().values() {
            for o in list.as_array().unwrap() {
                let reply = json!({"orders": [o]}).to_string();
                assert_eq!(check_reply(S1901M, &reply), Ok(()), "{o}");
            }
        }
        assert_eq!(choices(r#"{"type":"start","power":"AUSTRIA"}"#), None);
    }

    #[test]
    fn builds_retreats_and_bad_replies() {
        let build = r#"{"type":"phase","phase":"W1901A","state":{"units":{},"dislodged":{},"centers":{}},"orderable":["STP","MOS"],"builds":1}"#;
        let c = choices(build).unwrap();
        assert_eq!(
            c["orders"]["STP"],
            json!(["A STP B", "F STP/NC B", "F STP/SC B"])
        );
        assert_eq!(c["orders"]["MOS"], json!(["A MOS B"]));
        let retreat = r#"{"type":"phase","phase":"F1901R","state":{"units":{},"dislodged":{"ITALY":{"F TRI":["ALB","VEN"]}},"centers":{}},"orderable":["F TRI"]}"#;
        assert_eq!(
            choices(retreat).unwrap()["orders"]["F TRI"],
            json!(["F TRI R ALB", "F TRI R VEN", "F TRI D"])
        );
        assert!(check_reply(S1901M, "A VIE - GAL")
            .unwrap_err()
            .contains("one JSON object"));
        assert!(check_reply(S1901M, r#"{"orders":["A VIE - XYZ"]}"#)
            .unwrap_err()
            .contains("A VIE - XYZ"));
        let e = check_reply(S1901M, r#"{"orders":["A ROM - VEN"]}"#).unwrap_err();
        assert!(
            e.contains("none of your units") && e.contains("A BUD, A VIE, F TRI"),
            "{e}"
        );
        assert_eq!(check_reply(S1901M, r#"{"orders":[]}"#), Ok(()));
        assert_eq!(
            check_reply(r#"{"type":"start"}"#, r#"{"ready":true}"#),
            Ok(())
        );
        assert!(check_reply(r#"{"type":"start"}"#, r#"{"orders":[]}"#).is_err());
        assert_eq!(check_reply(build, r#"{"orders":["F STP/NC B"]}"#), Ok(()));
    }
}
