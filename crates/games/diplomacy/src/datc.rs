//! Reader for the DATC test-case text format (jDip/godip; see `data/datc/README` upstream) and a
//! runner that adjudicates one case with this crate. Pure: callers read the files.

use crate::adjudicate::adjudicate;
use crate::board::{Board, Dislodged};
use crate::map::{bit, bits, Map, Prov};
use crate::movement::Resolver;
use crate::order::{parse_order, Order};
use crate::types::{Phase, PhaseKind, Power, Season, Unit, UnitKind};

/// One `CASE ... END` block.
#[derive(Clone, Debug, Default)]
pub struct Case {
    /// The label after `CASE`.
    pub name: String,
    /// 1-based line of the `CASE` keyword.
    pub line: usize,
    /// `PRESTATE_SETPHASE` text (default `Spring 1901, Movement`).
    pub phase: Option<String>,
    /// `Nation: A|F prov` items.
    pub prestate: Vec<String>,
    /// Supply centre owners, if given.
    pub owners: Option<Vec<String>>,
    /// Dislodged units (retreat cases).
    pub dislodged: Vec<String>,
    /// `SUCCESS|FAILURE: Nation: order` items.
    pub results: Vec<String>,
    /// `Nation: order` items.
    pub orders: Vec<String>,
    /// Expected units, or `None` for `POSTSTATE_SAME`.
    pub poststate: Option<Vec<String>>,
    /// Expected dislodged units with options.
    pub post_dislodged: Vec<String>,
}

/// A malformed case file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatcError {
    /// A line that fits nowhere.
    #[error("line {line}: {msg}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        msg: String,
    },
}

/// Parse a DATC file into its cases.
pub fn parse_cases(text: &str) -> Result<Vec<Case>, DatcError> {
    let mut cases = Vec::new();
    let mut cur: Option<Case> = None;
    let mut section = String::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (kw, rest) = match line.split_once(char::is_whitespace) {
            Some((k, r)) => (k, r.trim()),
            None => (line, ""),
        };
        let syntax = |msg: &str| DatcError::Syntax {
            line: line_no,
            msg: msg.to_string(),
        };
        match kw {
            "VARIANT_ALL" => {
                if rest != "Standard" {
                    return Err(syntax("only the Standard variant is supported"));
                }
            }
            "CASE" => {
                if cur.is_some() {
                    return Err(syntax("CASE inside a case (missing END)"));
                }
                cur = Some(Case {
                    name: rest.to_string(),
                    line: line_no,
                    ..Case::default()
                });
                section.clear();
            }
            "END" => {
                let c = cur.take().ok_or_else(|| syntax("END outside a case"))?;
                cases.push(c);
            }
            "PRESTATE_SETPHASE" => {
                cur.as_mut().ok_or_else(|| syntax("outside a case"))?.phase =
                    Some(rest.to_string());
            }
            "POSTSTATE_SAME" => {
                let c = cur.as_mut().ok_or_else(|| syntax("outside a case"))?;
                c.poststate = None;
                section = kw.to_string();
            }
            "PRESTATE"
            | "PRESTATE_SUPPLYCENTER_OWNERS"
            | "PRESTATE_DISLODGED"
            | "PRESTATE_RESULTS"
            | "ORDERS"
            | "POSTSTATE"
            | "POSTSTATE_DISLODGED" => {
                let c = cur.as_mut().ok_or_else(|| syntax("outside a case"))?;
                section = kw.to_string();
                match kw {
                    "PRESTATE_SUPPLYCENTER_OWNERS" => c.owners = Some(Vec::new()),
                    "POSTSTATE" => c.poststate = Some(Vec::new()),
                    _ => {}
                }
            }
            _ => {
                let c = cur.as_mut().ok_or_else(|| syntax("item outside a case"))?;
                let item = line.to_string();
                match section.as_str() {
                    "PRESTATE" => c.prestate.push(item),
                    "PRESTATE_SUPPLYCENTER_OWNERS" => {
                        c.owners.get_or_insert_with(Vec::new).push(item)
                    }
                    "PRESTATE_DISLODGED" => c.dislodged.push(item),
                    "PRESTATE_RESULTS" => c.results.push(item),
                    "ORDERS" => c.orders.push(item),
                    "POSTSTATE" => c.poststate.get_or_insert_with(Vec::new).push(item),
                    "POSTSTATE_DISLODGED" => c.post_dislodged.push(item),
                    _ => return Err(syntax("item outside a section")),
                }
            }
        }
    }
    if cur.is_some() {
        return Err(DatcError::Syntax {
            line: text.lines().count(),
            msg: "missing END".into(),
        });
    }
    Ok(cases)
}

fn nation(s: &str) -> Result<Power, String> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("Germnay") {
        return Ok(Power(3));
    }
    Power::from_name(s).ok_or_else(|| format!("unknown nation {s:?}"))
}

/// `Nation: A|F prov` → unit.
pub fn parse_unit_item(map: &Map, item: &str) -> Result<Unit, String> {
    // A few items of the v2.4 file omit the colon (`Italy F gol`).
    let (n, u) = item
        .split_once(':')
        .or_else(|| item.split_once(char::is_whitespace))
        .ok_or_else(|| format!("expected \"Nation: unit\" in {item:?}"))?;
    let power = nation(n)?;
    let u = u.trim();
    let (k, l) = u
        .split_once(char::is_whitespace)
        .ok_or_else(|| format!("malformed unit {u:?}"))?;
    let kind = match k.to_ascii_uppercase().as_str() {
        "A" => UnitKind::Army,
        "F" => UnitKind::Fleet,
        _ => return Err(format!("malformed unit {u:?}")),
    };
    let loc = map
        .location(&l.trim().to_ascii_uppercase())
        .ok_or_else(|| format!("unknown location in {u:?}"))?;
    let loc = if kind == UnitKind::Army {
        map.prov_of(loc)
    } else {
        loc
    };
    Ok(Unit { power, kind, loc })
}

fn parse_phase(s: Option<&str>) -> Result<Phase, String> {
    let s = s.unwrap_or("Spring 1901, Movement");
    let (sy, t) = s
        .split_once(',')
        .ok_or_else(|| format!("malformed phase {s:?}"))?;
    let (season, year) = sy
        .trim()
        .split_once(' ')
        .ok_or_else(|| format!("malformed phase {s:?}"))?;
    let year: u16 = year
        .trim()
        .parse()
        .map_err(|_| format!("malformed year in {s:?}"))?;
    let kind = match t.trim() {
        "Movement" => PhaseKind::Movement,
        "Retreat" => PhaseKind::Retreat,
        "Adjustment" => PhaseKind::Adjustment,
        _ => return Err(format!("malformed phase type in {s:?}")),
    };
    let season = match (season, kind) {
        (_, PhaseKind::Adjustment) => Season::Winter,
        ("Spring", _) => Season::Spring,
        ("Fall", _) => Season::Fall,
        _ => return Err(format!("malformed season in {s:?}")),
    };
    Ok(Phase { season, year, kind })
}

/// The position a case starts from, with retreat options derived from `PRESTATE_RESULTS`.
pub fn build_board(map: &Map, case: &Case) -> Result<Board, String> {
    let phase = parse_phase(case.phase.as_deref())?;
    let mut board = Board::empty(map, phase);
    for it in &case.prestate {
        let u = parse_unit_item(map, it)?;
        board.place(map, u);
    }
    match &case.owners {
        None => board.set_start_centers(map),
        Some(items) => {
            for it in items {
                let u = parse_unit_item(map, it)?;
                board.owner[map.prov_of(u.loc) as usize] = Some(u.power);
            }
        }
    }
    if phase.kind == PhaseKind::Retreat {
        // Attacker origins and standoffs from the previous movement results.
        let mut moves: Vec<(bool, Prov, Prov)> = Vec::new(); // (success, from, to), no convoys
        for r in &case.results {
            let (status, rest) = r
                .split_once(':')
                .ok_or_else(|| format!("malformed result {r:?}"))?;
            let (_, order) = rest
                .split_once(':')
                .ok_or_else(|| format!("malformed result {r:?}"))?;
            let o = parse_order(map, order).map_err(|e| format!("{order:?}: {e}"))?;
            if let Order::Move {
                unit,
                dest,
                via: false,
            } = o
            {
                moves.push((status.trim() == "SUCCESS", unit.prov, dest.prov));
            }
        }
        let mut occupied = 0u128;
        for (i, u) in board.units.iter().enumerate() {
            if u.is_some() {
                occupied |= bit(i as Prov);
            }
        }
        for it in &case.dislodged {
            let u = parse_unit_item(map, it)?;
            let d = map.prov_of(u.loc);
            let mut excluded = occupied;
            for &(ok, a, b) in &moves {
                if ok && b == d {
                    excluded |= bit(a);
                }
                if !ok {
                    // Standoff, unless the failed mover was dislodged by the unit that left b.
                    let exception = moves.iter().any(|&(ok2, x, y)| ok2 && x == b && y == a);
                    if !exception {
                        excluded |= bit(b);
                    }
                }
            }
            let cand = match u.kind {
                UnitKind::Army => map.army_adj(d),
                UnitKind::Fleet => map.fleet_adj(u.loc),
            };
            let mut options = 0u128;
            for l in bits(cand) {
                if excluded & bit(map.prov_of(l)) == 0 {
                    options |= bit(l);
                }
            }
            board.dislodged[d as usize] = Some(Dislodged { unit: u, options });
        }
    }
    Ok(board)
}

/// Parsed orders of a case: (nation, order or parse error).
pub type CaseOrders = Vec<(Power, Result<Order, String>)>;

/// The orders of a case, parsed; unparsable orders are reported as `Err` items.
pub fn case_orders(map: &Map, case: &Case) -> Result<CaseOrders, String> {
    let mut out = Vec::new();
    for it in &case.orders {
        let (n, o) = it
            .split_once(':')
            .ok_or_else(|| format!("malformed order item {it:?}"))?;
        let power = nation(n)?;
        out.push((
            power,
            parse_order(map, o).map_err(|e| format!("{o:?}: {e}")),
        ));
    }
    Ok(out)
}

fn canon_units(map: &Map, units: impl Iterator<Item = Unit>) -> Vec<String> {
    let mut v: Vec<String> = units
        .map(|u| format!("{} {}", u.power, map.unit_name(&u)))
        .collect();
    v.sort();
    v
}

/// Run a case; `Ok(())` when the unit sets and dislodged sets match both ways.
pub fn run_case(map: &Map, resolver: &mut Resolver, case: &Case) -> Result<(), String> {
    let mut board = build_board(map, case)?;
    let before = board.clone();
    let orders: Vec<(Power, Order)> = case_orders(map, case)?
        .into_iter()
        .filter_map(|(p, o)| o.ok().map(|o| (p, o)))
        .collect();
    adjudicate(resolver, map, &mut board, &orders);
    let expected: Vec<String> = match &case.poststate {
        None => canon_units(map, before.units.iter().flatten().copied()),
        Some(items) => {
            let us = items
                .iter()
                .map(|i| parse_unit_item(map, i))
                .collect::<Result<Vec<_>, _>>()?;
            canon_units(map, us.into_iter())
        }
    };
    let got = canon_units(map, board.units.iter().flatten().copied());
    let exp_d = {
        let us = case
            .post_dislodged
            .iter()
            .map(|i| parse_unit_item(map, i))
            .collect::<Result<Vec<_>, _>>()?;
        canon_units(map, us.into_iter())
    };
    let got_d = canon_units(map, board.dislodged.iter().flatten().map(|d| d.unit));
    if got != expected || got_d != exp_d {
        return Err(format!(
            "units: expected {expected:?}, got {got:?}; dislodged: expected {exp_d:?}, got {got_d:?}"
        ));
    }
    Ok(())
}

/// The orders of a case as given: (nation, order text).
pub fn order_items(case: &Case) -> Result<Vec<(Power, String)>, String> {
    case.orders
        .iter()
        .map(|it| {
            let (n, o) = it
                .split_once(':')
                .ok_or_else(|| format!("malformed order item {it:?}"))?;
            Ok((nation(n)?, o.trim().to_string()))
        })
        .collect()
}
