//! Powers, units and phases.

use std::fmt;

/// Location id: a province id or a coast id (`NUM_PROVINCES..NUM_LOCATIONS` of the map).
pub type Loc = u8;

/// Wire names of the seven powers, in seat order.
pub const POWER_NAMES: [&str; 7] = [
    "AUSTRIA", "ENGLAND", "FRANCE", "GERMANY", "ITALY", "RUSSIA", "TURKEY",
];

/// One of the seven powers (index into [`POWER_NAMES`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Power(pub u8);

impl Power {
    /// All seven powers.
    pub const ALL: [Power; 7] = [
        Power(0),
        Power(1),
        Power(2),
        Power(3),
        Power(4),
        Power(5),
        Power(6),
    ];

    /// Power by wire name, case-insensitive.
    pub fn from_name(s: &str) -> Option<Power> {
        // The exact wire name first (the usual case), then any case.
        POWER_NAMES
            .iter()
            .position(|n| *n == s)
            .or_else(|| POWER_NAMES.iter().position(|n| n.eq_ignore_ascii_case(s)))
            .map(|i| Power(i as u8))
    }

    /// Wire name.
    pub fn name(self) -> &'static str {
        POWER_NAMES[self.0 as usize]
    }

    /// Index `0..7`.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for Power {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Army or fleet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnitKind {
    /// An army.
    Army,
    /// A fleet.
    Fleet,
}

impl UnitKind {
    /// `A` or `F`.
    pub fn letter(self) -> char {
        match self {
            UnitKind::Army => 'A',
            UnitKind::Fleet => 'F',
        }
    }
}

/// A unit on the board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Unit {
    /// Owner.
    pub power: Power,
    /// Army or fleet.
    pub kind: UnitKind,
    /// Location (a coast for a fleet in a split-coast province).
    pub loc: Loc,
}

/// Season of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Season {
    /// Spring.
    Spring,
    /// Fall.
    Fall,
    /// Winter (adjustments).
    Winter,
}

/// Type of a phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PhaseKind {
    /// Movement (`M`).
    Movement,
    /// Retreats (`R`).
    Retreat,
    /// Adjustments (`A`).
    Adjustment,
}

/// A phase such as `S1901M`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Phase {
    /// Season.
    pub season: Season,
    /// Year.
    pub year: u16,
    /// Type.
    pub kind: PhaseKind,
}

/// A phase code that is not one of `S<yyyy>M`, `S<yyyy>R`, `F<yyyy>M`, `F<yyyy>R`, `W<yyyy>A`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("malformed phase {0:?}: expected S<yyyy>M, S<yyyy>R, F<yyyy>M, F<yyyy>R or W<yyyy>A")]
pub struct PhaseError(pub String);

impl Phase {
    /// `S1901M`.
    pub const START: Phase = Phase {
        season: Season::Spring,
        year: 1901,
        kind: PhaseKind::Movement,
    };

    /// Parse a phase code (upper or lower case).
    pub fn parse(s: &str) -> Result<Phase, PhaseError> {
        let err = || PhaseError(s.to_string());
        let b = s.as_bytes();
        if b.len() != 6 || !b[1..5].iter().all(u8::is_ascii_digit) {
            return Err(err());
        }
        let year: u16 = s[1..5].parse().map_err(|_| err())?;
        let season = match b[0].to_ascii_uppercase() {
            b'S' => Season::Spring,
            b'F' => Season::Fall,
            b'W' => Season::Winter,
            _ => return Err(err()),
        };
        let kind = match b[5].to_ascii_uppercase() {
            b'M' => PhaseKind::Movement,
            b'R' => PhaseKind::Retreat,
            b'A' => PhaseKind::Adjustment,
            _ => return Err(err()),
        };
        let ok = matches!(
            (season, kind),
            (
                Season::Spring | Season::Fall,
                PhaseKind::Movement | PhaseKind::Retreat
            ) | (Season::Winter, PhaseKind::Adjustment)
        );
        if ok {
            Ok(Phase { season, year, kind })
        } else {
            Err(err())
        }
    }

    /// The phase type that follows in the full cycle S…M → S…R → F…M → F…R → W…A → S(year+1)M,
    /// before empty phases are skipped ([`crate::Board::next_phase_after`] skips them).
    pub fn next(self) -> Phase {
        use PhaseKind::*;
        use Season::*;
        let (season, year, kind) = match (self.season, self.kind) {
            (Spring, Movement) => (Spring, self.year, Retreat),
            (Spring, _) => (Fall, self.year, Movement),
            (Fall, Movement) => (Fall, self.year, Retreat),
            (Fall, _) => (Winter, self.year, Adjustment),
            (Winter, _) => (Spring, self.year.saturating_add(1), Movement),
        };
        Phase { season, year, kind }
    }
}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self.season {
            Season::Spring => 'S',
            Season::Fall => 'F',
            Season::Winter => 'W',
        };
        let k = match self.kind {
            PhaseKind::Movement => 'M',
            PhaseKind::Retreat => 'R',
            PhaseKind::Adjustment => 'A',
        };
        write!(f, "{s}{:04}{k}", self.year)
    }
}
