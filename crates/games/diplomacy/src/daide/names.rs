//! Between DAIDE and the crate's own names: provinces (`ECH`, `GOB`, `GOL` are the crate's `ENG`,
//! `BOT`, `LYO`), coasts (`NCS` is `/NC`), turns and phases; the position as `NOW` and `SCO`
//! and back; the standard map as `MDF`.

use std::sync::OnceLock;

use super::message::{AdjFrom, DLoc, DProv, DSeason, DUnit, Mdf, Placed, Turn};
use super::token::{Token, PROVINCES};
use crate::board::{Board, Dislodged};
use crate::map::{bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::types::{Phase, PhaseKind, Power, Season, Unit};

/// DAIDE province names that differ from the crate's: (DAIDE, crate).
pub const RENAMED: [(&str, &str); 3] = [("ECH", "ENG"), ("GOB", "BOT"), ("GOL", "LYO")];

/// Coast tokens of the standard map and the crate's coast suffixes.
pub const COASTS: [(&str, &str); 3] = [("NCS", "NC"), ("SCS", "SC"), ("ECS", "EC")];

/// A name that does not map.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// A coast the province does not have (`(PAR NCS)`, `(STP ECS)`).
    #[error("{0} has no coast {1}")]
    NoSuchCoast(&'static str, String),
    /// A year outside the engine's range.
    #[error("year {0} is out of range")]
    Year(i16),
}

struct Tables {
    to_crate: [Prov; NUM_PROVINCES],
    to_daide: [DProv; NUM_PROVINCES],
}

fn tables(map: &Map) -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let mut to_crate = [0; NUM_PROVINCES];
        let mut to_daide = [0; NUM_PROVINCES];
        for (n, (name, _)) in PROVINCES.iter().enumerate() {
            let own = RENAMED
                .iter()
                .find(|(d, _)| d == name)
                .map_or(*name, |(_, c)| c);
            // The test `every_daide_province_is_a_province_of_the_map` proves this total.
            let p = map.province(own).unwrap_or(0);
            to_crate[n] = p;
            to_daide[p as usize] = n as DProv;
        }
        Tables { to_crate, to_daide }
    })
}

/// The crate's province of a DAIDE province.
pub fn prov(map: &Map, d: DProv) -> Prov {
    tables(map).to_crate[d as usize % NUM_PROVINCES]
}

/// The DAIDE province of the crate's province.
pub fn dprov(map: &Map, p: Prov) -> DProv {
    tables(map).to_daide[p as usize % NUM_PROVINCES]
}

/// The crate's location of a DAIDE location (a coast named must exist).
pub fn loc(map: &Map, l: &DLoc) -> Result<Loc, NameError> {
    let p = prov(map, l.prov);
    match l.coast {
        None => Ok(p),
        Some(c) => {
            let suffix = COASTS
                .iter()
                .find(|(t, _)| Some(*t) == c.name())
                .map(|(_, s)| *s);
            suffix.and_then(|s| map.coast_of(p, s)).ok_or_else(|| {
                NameError::NoSuchCoast(PROVINCES[l.prov as usize % NUM_PROVINCES].0, c.to_string())
            })
        }
    }
}

/// The DAIDE location of the crate's location.
pub fn dloc(map: &Map, l: Loc) -> DLoc {
    let p = map.prov_of(l);
    let coast = (l != p).then(|| {
        let name = map.loc_name(l);
        let suffix = name.rsplit('/').next().unwrap_or("");
        COASTS
            .iter()
            .find(|(_, s)| *s == suffix)
            .and_then(|(t, _)| Token::named(t))
            .unwrap_or(Token(0x4600))
    });
    DLoc {
        prov: dprov(map, p),
        coast,
    }
}

/// The DAIDE unit of a unit.
pub fn dunit(map: &Map, u: &Unit) -> DUnit {
    DUnit {
        power: u.power,
        kind: u.kind,
        loc: dloc(map, u.loc),
    }
}

/// The DAIDE turn of a phase.
pub fn turn(phase: Phase) -> Turn {
    let season = match (phase.season, phase.kind) {
        (Season::Spring, PhaseKind::Movement) => DSeason::Spr,
        (Season::Spring, _) => DSeason::Sum,
        (Season::Fall, PhaseKind::Movement) => DSeason::Fal,
        (Season::Fall, _) => DSeason::Aut,
        (Season::Winter, _) => DSeason::Win,
    };
    Turn {
        season,
        year: phase.year.min(i16::MAX as u16) as i16,
    }
}

/// The phase of a DAIDE turn.
pub fn phase(t: Turn) -> Result<Phase, NameError> {
    let year = u16::try_from(t.year).map_err(|_| NameError::Year(t.year))?;
    let (season, kind) = match t.season {
        DSeason::Spr => (Season::Spring, PhaseKind::Movement),
        DSeason::Sum => (Season::Spring, PhaseKind::Retreat),
        DSeason::Fal => (Season::Fall, PhaseKind::Movement),
        DSeason::Aut => (Season::Fall, PhaseKind::Retreat),
        DSeason::Win => (Season::Winter, PhaseKind::Adjustment),
    };
    Ok(Phase { season, year, kind })
}

/// Sort key of a unit as DAIDE lists them: power, then province number.
fn key(map: &Map, u: &Unit) -> (Power, DProv) {
    (u.power, dprov(map, map.prov_of(u.loc)))
}

/// The position as `NOW` lists it: every unit (by power, then province number), dislodged
/// units with their retreat options.
pub fn now_units(map: &Map, board: &Board) -> Vec<Placed> {
    let mut all: Vec<(Unit, Option<u128>)> = board
        .units
        .iter()
        .flatten()
        .map(|u| (*u, None))
        .chain(
            board
                .dislodged
                .iter()
                .flatten()
                .map(|d| (d.unit, Some(d.options))),
        )
        .collect();
    all.sort_by_key(|(u, r)| (key(map, u), r.is_some()));
    all.into_iter()
        .map(|(u, r)| Placed {
            unit: dunit(map, &u),
            retreat: r.map(|opts| {
                let mut v: Vec<DLoc> = bits(opts).map(|l| dloc(map, l)).collect();
                v.sort_by_key(|l| (l.prov, l.coast));
                v
            }),
        })
        .collect()
}

/// Centre ownership as `SCO` lists it: each power owning centres, then `UNO`.
pub fn sco(map: &Map, board: &Board) -> Vec<(Option<Power>, Vec<DProv>)> {
    let mut out = Vec::new();
    let centres = |owner: Option<Power>| -> Vec<DProv> {
        let mut v: Vec<DProv> = (0..NUM_PROVINCES as Prov)
            .filter(|&p| map.is_sc(p) && board.owner[p as usize] == owner)
            .map(|p| dprov(map, p))
            .collect();
        v.sort_unstable();
        v
    };
    for p in Power::ALL {
        let v = centres(Some(p));
        if !v.is_empty() {
            out.push((Some(p), v));
        }
    }
    let v = centres(None);
    if !v.is_empty() {
        out.push((None, v));
    }
    out
}

/// A unit as a crate unit: the location must exist.
pub fn unit(map: &Map, u: &DUnit) -> Result<Unit, NameError> {
    Ok(Unit {
        power: u.power,
        kind: u.kind,
        loc: loc(map, &u.loc)?,
    })
}

/// The board a client is shown by `NOW` and `SCO`.
pub fn board_of(
    map: &Map,
    turn: Turn,
    units: &[Placed],
    owners: &[(Option<Power>, Vec<DProv>)],
) -> Result<Board, NameError> {
    let mut b = Board::empty(map, phase(turn)?);
    for pl in units {
        let u = unit(map, &pl.unit)?;
        let p = map.prov_of(u.loc) as usize;
        match &pl.retreat {
            None => b.units[p] = Some(u),
            Some(opts) => {
                let mut options = 0u128;
                for l in opts {
                    options |= bit(loc(map, l)?);
                }
                b.dislodged[p] = Some(Dislodged { unit: u, options });
            }
        }
    }
    for (owner, ps) in owners {
        for &d in ps {
            b.owner[prov(map, d) as usize] = *owner;
        }
    }
    Ok(b)
}

/// The standard map as `MDF`, from the crate's map data.
pub fn mdf(map: &Map) -> Mdf {
    let mut centres: Vec<(Option<Power>, Vec<DProv>)> = Vec::new();
    for owner in Power::ALL.map(Some).into_iter().chain([None]) {
        let mut v: Vec<DProv> = (0..NUM_PROVINCES as Prov)
            .filter(|&p| map.is_sc(p) && map.provinces[p as usize].home_of == owner)
            .map(|p| dprov(map, p))
            .collect();
        v.sort_unstable();
        centres.push((owner, v));
    }
    let mut others: Vec<DProv> = (0..NUM_PROVINCES as Prov)
        .filter(|&p| !map.is_sc(p))
        .map(|p| dprov(map, p))
        .collect();
    others.sort_unstable();
    let sorted = |set: u128, f: &dyn Fn(u8) -> DLoc| {
        let mut v: Vec<DLoc> = bits(set).map(f).collect();
        v.sort_by_key(|l| (l.prov, l.coast));
        v
    };
    let adjacencies = (0..NUM_PROVINCES as DProv)
        .map(|d| {
            let p = prov(map, d);
            let mut lists = Vec::new();
            if map.kind(p) != ProvinceKind::Sea {
                lists.push((
                    AdjFrom::Army,
                    sorted(map.army_adj(p), &|q| DLoc {
                        prov: dprov(map, q),
                        coast: None,
                    }),
                ));
            }
            if map.kind(p) != ProvinceKind::Land {
                let fleet = |l: Loc| sorted(map.fleet_adj(l), &|q| dloc(map, q));
                if map.is_split(p) {
                    let mut coasts: Vec<Loc> = map.provinces[p as usize].coasts.clone();
                    coasts.sort_by_key(|&c| dloc(map, c).coast);
                    for c in coasts {
                        lists.push((AdjFrom::Fleet(dloc(map, c).coast), fleet(c)));
                    }
                } else {
                    lists.push((AdjFrom::Fleet(None), fleet(p)));
                }
            }
            (d, lists)
        })
        .collect();
    Mdf {
        powers: Power::ALL.to_vec(),
        centres,
        others,
        adjacencies,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::map::standard;

    #[test]
    fn every_daide_province_is_a_province_of_the_map() {
        let map = standard();
        for (n, (name, cat)) in PROVINCES.iter().enumerate() {
            let own = RENAMED
                .iter()
                .find(|(d, _)| d == name)
                .map_or(*name, |(_, c)| c);
            let p = map.province(own).unwrap_or_else(|| panic!("{name}"));
            assert_eq!(prov(map, n as DProv), p);
            assert_eq!(dprov(map, p), n as DProv);
            // The category says what the province is.
            let sc = cat & 1 != 0;
            let sea = cat & 2 != 0 && cat & 4 == 0;
            let coastal = cat & 4 != 0;
            let split = *cat >= 0x56;
            assert_eq!(map.is_sc(p), sc, "{name}");
            assert_eq!(map.kind(p) == ProvinceKind::Sea, sea, "{name}");
            assert_eq!(map.kind(p) == ProvinceKind::Coast, coastal, "{name}");
            assert_eq!(map.is_split(p), split, "{name}");
        }
        // The facts file's own list of DAIDE names agrees.
        let facts: serde_json::Value = serde_json::from_str(crate::map::STANDARD_MAP_JSON).unwrap();
        let daide = &facts["aliases"]["by_tool"]["daide"]["province"];
        for (d, c) in RENAMED {
            assert_eq!(daide[d], c);
        }
        assert_eq!(daide.as_object().unwrap().len(), RENAMED.len());
    }

    #[test]
    fn coasts_map_both_ways() {
        let map = standard();
        let stp = Token::named("STP").unwrap().province_number().unwrap();
        let nc = DLoc {
            prov: stp,
            coast: Token::named("NCS"),
        };
        let l = loc(map, &nc).unwrap();
        assert_eq!(map.loc_name(l), "STP/NC");
        assert_eq!(dloc(map, l), nc);
        let bad = DLoc {
            prov: stp,
            coast: Token::named("ECS"),
        };
        assert!(matches!(
            loc(map, &bad),
            Err(NameError::NoSuchCoast("STP", _))
        ));
        let gol = Token::named("GOL").unwrap().province_number().unwrap();
        assert_eq!(map.prov_name(prov(map, gol)), "LYO");
    }

    #[test]
    fn mdf_holds_the_map() {
        let map = standard();
        let m = mdf(map);
        assert_eq!(m.centres.iter().map(|(_, v)| v.len()).sum::<usize>(), 34);
        assert_eq!(m.centres[5].1.len(), 4, "Russia has four home centres");
        assert_eq!(m.others.len(), 75 - 34);
        // Every adjacency of the crate's map is there, and nothing else.
        let mut fleets = 0;
        for (d, lists) in &m.adjacencies {
            let p = prov(map, *d);
            for (from, locs) in lists {
                let set: u128 = locs
                    .iter()
                    .map(|l| bit(loc(map, l).unwrap()))
                    .fold(0, |a, b| a | b);
                match from {
                    AdjFrom::Army => assert_eq!(set, map.army_adj(p)),
                    AdjFrom::Fleet(c) => {
                        fleets += 1;
                        let at = loc(
                            map,
                            &DLoc {
                                prov: *d,
                                coast: *c,
                            },
                        )
                        .unwrap();
                        assert_eq!(set, map.fleet_adj(at));
                    }
                }
            }
        }
        assert_eq!(fleets, 64);
        let tokens = super::super::message::Message::Mdf(Some(Box::new(m))).to_tokens();
        assert!(tokens.len() < 32_000);
        // As docs/protocols/diplomacy-daide.md shows it.
        let text = super::super::token::to_text(&tokens);
        for part in [
            "MDF ( AUS ENG FRA GER ITA RUS TUR ) ( ( ( AUS BUD VIE TRI )",
            "( UNO SER BEL ",
            ") ( BOH BUR ",
            ") ( ( BOH ( AMY GAL SIL TYR MUN VIE ) )",
            "( STP ( AMY MOS FIN LVN NWY ) ( ( FLT NCS ) BAR NWY ) ( ( FLT SCS ) GOB FIN LVN ) )",
        ] {
            assert!(text.contains(part), "{part}");
        }
    }

    #[test]
    fn now_and_sco_give_back_the_board() {
        let map = standard();
        let b = Board::standard_start();
        let units = now_units(map, &b);
        assert_eq!(units.len(), 22);
        let back = board_of(map, turn(b.phase), &units, &sco(map, &b)).unwrap();
        assert_eq!(back, b);
    }
}
