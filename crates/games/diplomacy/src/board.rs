//! The position between phases: units, dislodged units with their retreat options, centre
//! ownership and home centres.

use crate::map::{bit, bits, standard, Loc, Map, Prov, NUM_PROVINCES};
use crate::types::{Phase, PhaseKind, Power, Unit};

/// A dislodged unit waiting to retreat, with its retreat options (location bitset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dislodged {
    /// The unit, at the location it was dislodged from.
    pub unit: Unit,
    /// Locations it may retreat to.
    pub options: u128,
}

/// A full position: everything the adjudicator needs besides the orders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Board {
    /// The phase to adjudicate next.
    pub phase: Phase,
    /// Units that are not dislodged, by province.
    pub units: [Option<Unit>; NUM_PROVINCES],
    /// Dislodged units (retreat phases only), by province.
    pub dislodged: [Option<Dislodged>; NUM_PROVINCES],
    /// Owner of each supply centre.
    pub owner: [Option<Power>; NUM_PROVINCES],
    /// Home centres per power (province bitsets).
    pub homes: [u128; 7],
}

impl Board {
    /// An empty board at `phase` with no owners and the map's home centres.
    pub fn empty(map: &Map, phase: Phase) -> Board {
        let mut homes = [0u128; 7];
        for (i, p) in map.provinces.iter().enumerate() {
            if let Some(h) = p.home_of {
                homes[h.index()] |= bit(i as Prov);
            }
        }
        Board {
            phase,
            units: [None; NUM_PROVINCES],
            dislodged: [None; NUM_PROVINCES],
            owner: [None; NUM_PROVINCES],
            homes,
        }
    }

    /// The standard 1901 start position at `S1901M`.
    pub fn standard_start() -> Board {
        let map = standard();
        let mut b = Board::empty(map, Phase::START);
        for u in &map.start_units {
            b.units[map.prov_of(u.loc) as usize] = Some(*u);
        }
        b.set_start_centers(map);
        b
    }

    /// Set the map's 1901 ownership.
    pub fn set_start_centers(&mut self, map: &Map) {
        self.owner = [None; NUM_PROVINCES];
        for &(p, pw) in &map.start_centers {
            self.owner[p as usize] = Some(pw);
        }
    }

    /// Place a unit (replacing whatever is in the province).
    pub fn place(&mut self, map: &Map, u: Unit) {
        self.units[map.prov_of(u.loc) as usize] = Some(u);
    }

    /// Dislodged units of `power`, waiting to retreat.
    pub fn dislodged_of(&self, power: Power) -> impl Iterator<Item = &Dislodged> + '_ {
        self.dislodged
            .iter()
            .flatten()
            .filter(move |d| d.unit.power == power)
    }

    /// Units of `power`.
    pub fn units_of(&self, power: Power) -> impl Iterator<Item = Unit> + '_ {
        self.units
            .iter()
            .flatten()
            .copied()
            .filter(move |u| u.power == power)
    }

    /// Number of centres `power` owns.
    pub fn centers_of(&self, power: Power) -> usize {
        self.owner.iter().filter(|o| **o == Some(power)).count()
    }

    /// Owned centres of `power` as a province bitset.
    pub fn owned_mask(&self, power: Power) -> u128 {
        let mut m = 0;
        for (i, o) in self.owner.iter().enumerate() {
            if *o == Some(power) {
                m |= bit(i as Prov);
            }
        }
        m
    }

    /// Centres minus units for `power` (positive: builds, negative: removals).
    pub fn adjustment(&self, power: Power) -> i32 {
        self.centers_of(power) as i32 - self.units_of(power).count() as i32
    }

    /// Every supply centre with a unit on it becomes that unit's power's (end of a Fall turn).
    pub fn update_centers(&mut self, map: &Map) {
        for p in 0..NUM_PROVINCES {
            if map.is_sc(p as Prov) {
                if let Some(u) = self.units[p] {
                    self.owner[p] = Some(u.power);
                }
            }
        }
    }

    /// Whether `power` has an adjustment to make: a removal it owes, or a build it is allowed
    /// (more centres than units) and has an owned, empty home centre to make it on.
    pub fn must_or_may_adjust(&self, power: Power) -> bool {
        self.adjusting()[power.index()]
    }

    /// Whether an adjustment phase now would have anything to do for any power.
    pub fn adjustment_needed(&self) -> bool {
        self.adjusting().contains(&true)
    }

    /// [`Board::must_or_may_adjust`] of every power, in one pass over the board.
    fn adjusting(&self) -> [bool; 7] {
        let mut centres = [0i32; 7];
        let mut units = [0i32; 7];
        let mut owned = [0u128; 7];
        let mut empty = 0u128;
        for p in 0..NUM_PROVINCES {
            if let Some(o) = self.owner[p] {
                centres[o.index()] += 1;
                owned[o.index()] |= bit(p as Prov);
            }
            match self.units[p] {
                Some(u) => units[u.power.index()] += 1,
                None => empty |= bit(p as Prov),
            }
        }
        std::array::from_fn(|i| {
            let n = centres[i] - units[i];
            n < 0 || (n > 0 && self.homes[i] & owned[i] & empty != 0)
        })
    }

    /// The phase that follows `phase` in this position (the position after adjudicating
    /// `phase`, centres already updated after a Fall turn), as every judge computes it: a retreat
    /// phase with no dislodged unit is skipped, and so is an adjustment phase in which no power
    /// may build or must remove (`S1901M` → `F1901M`, `F1901M` → `W1901A` or `S1902M`).
    pub fn next_phase_after(&self, phase: Phase) -> Phase {
        let mut next = phase.next();
        loop {
            let skip = match next.kind {
                PhaseKind::Retreat => !self.has_dislodged(),
                PhaseKind::Adjustment => !self.adjustment_needed(),
                PhaseKind::Movement => false,
            };
            if !skip {
                return next;
            }
            next = next.next();
        }
    }

    /// Whether any dislodged unit waits for a retreat order.
    pub fn has_dislodged(&self) -> bool {
        self.dislodged.iter().any(Option::is_some)
    }

    /// Whether a power still has a unit (on the board or dislodged) or a centre.
    pub fn is_alive(&self, power: Power) -> bool {
        self.units.iter().flatten().any(|u| u.power == power)
            || self
                .dislodged
                .iter()
                .flatten()
                .any(|d| d.unit.power == power)
            || self.owner.contains(&Some(power))
    }

    /// Locations of the retreat options of a dislodged unit, sorted canonically by name.
    pub fn option_names(map: &Map, options: u128) -> Vec<String> {
        let mut v: Vec<String> = bits(options)
            .map(|l: Loc| map.loc_name(l).to_string())
            .collect();
        v.sort();
        v
    }
}
