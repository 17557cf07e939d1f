//! Province values from one power's point of view, in the manner of D. Norman's DumbBot (the
//! baseline of the DAIDE community): a centre is worth attacking in proportion to the size of its
//! owner and worth defending in proportion to the largest enemy next to it; those values spread
//! over the map in ten blurring steps ("proximity"), and a location's value for a unit is a
//! season-weighted sum of its proximities plus the units of ours next to it (strength) minus the
//! most units of one other power next to it (competition).
//!
//! The weights are DumbBot's published ones; the size of a power is `c² + 4c + 16` for `c`
//! centres, and a neutral centre is valued as a power of three centres.

use crate::board::Board;
use crate::map::{bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::types::{Power, Season, Unit, UnitKind};

/// Blurring steps.
const DEPTH: usize = 10;

/// What the values are for: a movement phase of a season, or an adjustment phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    /// Spring movement (and its retreats).
    Spring,
    /// Fall movement (and its retreats).
    Fall,
    /// Builds and removals.
    Winter,
}

impl Purpose {
    /// The purpose of a phase in `season`.
    pub fn of(season: Season) -> Purpose {
        match season {
            Season::Spring => Purpose::Spring,
            Season::Fall => Purpose::Fall,
            Season::Winter => Purpose::Winter,
        }
    }
}

struct Weights {
    attack: f64,
    defense: f64,
    proximity: [f64; DEPTH],
    strength: f64,
    competition: f64,
}

const SPRING: Weights = Weights {
    attack: 700.0,
    defense: 300.0,
    proximity: [100.0, 1000.0, 30.0, 10.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
    strength: 1000.0,
    competition: 1000.0,
};

const FALL: Weights = Weights {
    attack: 600.0,
    defense: 400.0,
    proximity: [1000.0, 100.0, 30.0, 10.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
    strength: 1000.0,
    competition: 1000.0,
};

const HUFF_SPRING: Weights = Weights {
    attack: 70.0,
    defense: 30.0,
    proximity: [1000.0, 100.0, 30.0, 10.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
    strength: 0.0,
    competition: 0.0,
};

const HUFF_FALL: Weights = Weights {
    attack: 60.0,
    defense: 40.0,
    proximity: [1000.0, 100.0, 30.0, 10.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0],
    strength: 0.0,
    competition: 0.0,
};

/// Winter: the fall proximities, plus the defence value of the province itself.
const WINTER_DEFENSE: f64 = 1000.0;

/// Size of a power with `c` centres.
pub fn power_size(c: usize) -> f64 {
    let c = c as f64;
    c * c + 4.0 * c + 16.0
}

/// How a family of bots values the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// D. Norman's DumbBot: season weights 700/300 (spring) and 600/400 (fall) for attack and
    /// defence, strength and competition terms, neutral centres valued as a power of three.
    Norman,
    /// A. Huff's bot as ported in Parang's Project20M: attack and defence 70/30 and 60/40, a
    /// home centre worth 1.1 times more, a neutral centre valued as a power as large as the
    /// number of neutral centres left, the fall proximity weights in every season, and no
    /// strength or competition terms.
    Huff,
}

/// The values of every location for one power.
#[derive(Clone, Debug)]
pub struct Values {
    /// Value of an army in each province (indexed by province; sea provinces are unused).
    pub army: Vec<f64>,
    /// Value of a fleet at each location (indexed by location).
    pub fleet: Vec<f64>,
    /// Units of ours in or next to each province.
    pub strength: [u8; NUM_PROVINCES],
    /// The most units of one other power in or next to each province.
    pub competition: [u8; NUM_PROVINCES],
    /// Attack value of each province (non-zero only for centres we do not own).
    pub attack: [f64; NUM_PROVINCES],
    /// Defence value of each province (non-zero only for our centres with an enemy next to it).
    pub defense: [f64; NUM_PROVINCES],
    /// The largest value of any location, for normalising (at least 1).
    pub max: f64,
}

/// Provinces a unit can move to (without convoy), and its own province.
pub fn reach(map: &Map, u: &Unit) -> u128 {
    let p = map.prov_of(u.loc);
    bit(p)
        | match u.kind {
            UnitKind::Army => map.army_adj(p),
            UnitKind::Fleet => map.fleet_adj_prov(u.loc),
        }
}

impl Values {
    /// The values of `board` for `power`.
    pub fn new(map: &Map, board: &Board, power: Power, purpose: Purpose) -> Values {
        Values::with_style(map, board, power, purpose, Style::Norman)
    }

    /// The values of `board` for `power`, as a bot of `style` would compute them.
    pub fn with_style(
        map: &Map,
        board: &Board,
        power: Power,
        purpose: Purpose,
        style: Style,
    ) -> Values {
        let w = match (style, purpose) {
            (Style::Norman, Purpose::Spring) => &SPRING,
            (Style::Norman, _) => &FALL,
            (Style::Huff, Purpose::Spring) => &HUFF_SPRING,
            (Style::Huff, _) => &HUFF_FALL,
        };
        let mut centres = [0usize; 8];
        for p in 0..NUM_PROVINCES {
            if map.is_sc(p as Prov) {
                centres[board.owner[p].map_or(7, |o| o.index())] += 1;
            }
        }
        // Units of each power in or next to each province.
        let mut near = [[0u8; 7]; NUM_PROVINCES];
        for u in board.units.iter().flatten() {
            for q in bits(reach(map, u)) {
                near[q as usize][u.power.index()] += 1;
            }
        }
        let mut attack = [0.0; NUM_PROVINCES];
        let mut defense = [0.0; NUM_PROVINCES];
        let mut strength = [0u8; NUM_PROVINCES];
        let mut competition = [0u8; NUM_PROVINCES];
        for p in 0..NUM_PROVINCES {
            strength[p] = near[p][power.index()];
            competition[p] = (0..7)
                .filter(|&o| o != power.index())
                .map(|o| near[p][o])
                .max()
                .unwrap_or(0);
            if !map.is_sc(p as Prov) {
                continue;
            }
            match board.owner[p] {
                Some(o) if o == power => {
                    defense[p] = (0..7)
                        .filter(|&o| o != power.index() && near[p][o] > 0)
                        .map(|o| power_size(centres[o]))
                        .fold(0.0, f64::max);
                }
                Some(o) => attack[p] = power_size(centres[o.index()]),
                None => {
                    attack[p] = match style {
                        Style::Norman => power_size(3),
                        Style::Huff => power_size(centres[7]),
                    }
                }
            }
            if style == Style::Huff && board.homes[power.index()] & bit(p as Prov) != 0 {
                defense[p] *= 1.1;
                attack[p] *= 1.1;
            }
        }
        let base = |p: Prov| attack[p as usize] * w.attack + defense[p as usize] * w.defense;
        // Army graph over provinces, fleet graph over locations.
        let nloc = map.num_locations();
        let mut army_prox = vec![[0.0f64; NUM_PROVINCES]; DEPTH];
        let mut fleet_prox = vec![vec![0.0f64; nloc]; DEPTH];
        for p in 0..NUM_PROVINCES as Prov {
            if map.kind(p) != ProvinceKind::Sea {
                army_prox[0][p as usize] = base(p);
            }
        }
        let fleet_locs: Vec<Loc> = (0..nloc as Loc)
            .filter(|&l| map.can_stand(UnitKind::Fleet, l))
            .collect();
        for &l in &fleet_locs {
            fleet_prox[0][l as usize] = base(map.prov_of(l));
        }
        for d in 1..DEPTH {
            for p in 0..NUM_PROVINCES as Prov {
                if map.kind(p) == ProvinceKind::Sea {
                    continue;
                }
                let prev = &army_prox[d - 1];
                let s: f64 = bits(map.army_adj(p)).map(|q| prev[q as usize]).sum();
                army_prox[d][p as usize] = (s + prev[p as usize]) / 5.0;
            }
            for &l in &fleet_locs {
                let prev = &fleet_prox[d - 1];
                // Two coasts of one province count once, with the larger value.
                let mut by_prov: Vec<(Prov, f64)> = Vec::with_capacity(8);
                for m in bits(map.fleet_adj(l)) {
                    let q = map.prov_of(m);
                    let v = prev[m as usize];
                    match by_prov.iter_mut().find(|(x, _)| *x == q) {
                        Some(e) => e.1 = e.1.max(v),
                        None => by_prov.push((q, v)),
                    }
                }
                let s: f64 = by_prov.iter().map(|(_, v)| v).sum();
                fleet_prox[d][l as usize] = (s + prev[l as usize]) / 5.0;
            }
        }
        let extra = |p: Prov| -> f64 {
            match purpose {
                Purpose::Winter => WINTER_DEFENSE * defense[p as usize],
                _ => {
                    w.strength * strength[p as usize] as f64
                        - w.competition * competition[p as usize] as f64
                }
            }
        };
        let mut army = vec![0.0; NUM_PROVINCES];
        let mut fleet = vec![0.0; nloc];
        let mut max = 1.0f64;
        for p in 0..NUM_PROVINCES as Prov {
            if map.kind(p) == ProvinceKind::Sea {
                continue;
            }
            let v: f64 = (0..DEPTH)
                .map(|d| army_prox[d][p as usize] * w.proximity[d])
                .sum::<f64>()
                + extra(p);
            army[p as usize] = v;
            max = max.max(v);
        }
        for &l in &fleet_locs {
            let v: f64 = (0..DEPTH)
                .map(|d| fleet_prox[d][l as usize] * w.proximity[d])
                .sum::<f64>()
                + extra(map.prov_of(l));
            fleet[l as usize] = v;
            max = max.max(v);
        }
        Values {
            army,
            fleet,
            strength,
            competition,
            attack,
            defense,
            max,
        }
    }

    /// The value of a unit of `kind` at `l`.
    pub fn at(&self, map: &Map, kind: UnitKind, l: Loc) -> f64 {
        match kind {
            UnitKind::Army => self.army[map.prov_of(l) as usize],
            UnitKind::Fleet => self.fleet[l as usize],
        }
    }
}
