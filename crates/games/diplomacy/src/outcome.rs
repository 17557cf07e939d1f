//! What adjudicating a phase produces: per-unit results, void reasons, destroyed units.

use crate::map::{Map, Prov};
use crate::order::ParseError;
use crate::types::{Power, Unit};

/// The result of the order that took effect for a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderResult {
    /// The order was carried out.
    Succeeds,
    /// The order was legal but failed (bounced, cut, dislodged, allowance used up...).
    Fails,
    /// Illegal, unmatched, or of the wrong phase type: no effect.
    Void,
}

impl OrderResult {
    /// `succeeds`, `fails` or `void`.
    pub fn as_str(self) -> &'static str {
        match self {
            OrderResult::Succeeds => "succeeds",
            OrderResult::Fails => "fails",
            OrderResult::Void => "void",
        }
    }
}

/// Why a legal order failed (its result is [`OrderResult::Fails`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailReason {
    /// A move that did not happen: beaten or stood off at its destination, lost a head-to-head
    /// battle, or would have dislodged a unit of its own power. A retreat that collided.
    Bounced,
    /// A convoyed move whose convoy was disrupted (no intact chain of fleets).
    NoConvoy,
    /// The unit was dislodged (a hold, support or convoy).
    Dislodged,
    /// A support cut by an attack.
    Cut,
    /// A convoy stopped by the Szykman rule (a paradox its convoy caused).
    ConvoyParadox,
    /// A build or removal beyond the power's allowance.
    AllowanceUsedUp,
    /// A build in a province an earlier build already used, or a second removal of one unit.
    AlreadyUsed,
}

impl FailReason {
    /// Short lowercase description (`bounced`, `no convoy`, `dislodged`, `cut`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            FailReason::Bounced => "bounced",
            FailReason::NoConvoy => "no convoy",
            FailReason::Dislodged => "dislodged",
            FailReason::Cut => "cut",
            FailReason::ConvoyParadox => "convoy paradox (Szykman rule)",
            FailReason::AllowanceUsedUp => "allowance used up",
            FailReason::AlreadyUsed => "already used by an earlier order",
        }
    }
}

/// How the message of [`VoidReason::Unmatched`] begins: a legal support or convoy that does
/// not match the order of the unit it names (void, but not against the rules).
pub const UNMATCHED_PREFIX: &str = "does not match the order of the unit in";

/// Whether a void-order message (from [`VoidReason::message`]) is an unmatched support or convoy.
pub fn is_unmatched_message(msg: &str) -> bool {
    msg.starts_with(UNMATCHED_PREFIX)
}

/// Why an order is void or ignored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VoidReason {
    /// The order text did not parse.
    Parse(ParseError),
    /// No unit in the province named.
    NoUnit(Prov),
    /// The unit belongs to another power (no proxy orders).
    ForeignUnit(Power),
    /// A later order for a unit that already has a legal order (first legal order wins).
    Duplicate,
    /// The order's kind does not belong to this phase type.
    WrongPhase,
    /// A move to the unit's own province.
    MoveToOwnProvince,
    /// An army ordered to sea.
    ArmyToSea,
    /// A fleet ordered inland.
    FleetInland,
    /// A fleet ordered with VIA.
    FleetViaConvoy,
    /// The destination is not adjacent and no convoy route exists.
    NotAdjacent,
    /// VIA given but no convoy route exists.
    NoConvoyRoute,
    /// A split-coast destination with two reachable coasts and none named.
    CoastMissing,
    /// The named coast cannot be reached.
    CoastUnreachable,
    /// A support of the supporter itself.
    SupportsItself,
    /// A support into the supporter's own province.
    SupportIntoOwnProvince,
    /// The supporter could not move into the province it supports into.
    CannotReach(Prov),
    /// The supported move could never happen.
    SupportedMoveImpossible,
    /// A convoy by a unit that is not a fleet at sea.
    ConvoyNotAtSea,
    /// The convoyed unit is not an army.
    ConvoyNotArmy,
    /// The convoy destination is not a coastal province other than the army's.
    ConvoyBadDestination,
    /// The fleet lies on no shortcut-free route (6.G.19).
    ConvoyNotNeeded,
    /// A support or convoy that does not match the order of the unit in `Prov`.
    Unmatched(Prov),
    /// A retreat for a unit that is not dislodged.
    NotDislodged,
    /// A retreat to a location that is not among the unit's options.
    NotARetreatOption,
    /// A build when the power has no builds.
    NoBuildsAllowed,
    /// A removal when the power owes none.
    NoRemovalsOwed,
    /// A build outside the power's owned, empty home centres.
    NotABuildSite,
    /// A build without unit letter on a coastal province with no coast named (4.C.3).
    BuildKindMissing,
    /// An army at sea or a fleet inland, or a fleet in a split province without coast.
    BadBuildKind,
}

impl VoidReason {
    /// Readable, lowercase description.
    pub fn message(&self, map: &Map) -> String {
        let mut s = String::new();
        self.write_message(map, &mut s);
        s
    }

    /// [`VoidReason::message`], appended to `out`.
    pub fn write_message(&self, map: &Map, out: &mut String) {
        use std::fmt::Write as _;
        use VoidReason::*;
        let text: &str = match self {
            Parse(e) => {
                let _ = write!(out, "{e}");
                return;
            }
            NoUnit(p) => {
                out.push_str("no unit in ");
                map.prov_name(*p)
            }
            ForeignUnit(pw) => {
                out.push_str("the unit belongs to ");
                pw.name()
            }
            Duplicate => "unit already has an order; the first legal order is kept",
            WrongPhase => "order of the wrong kind for this phase",
            MoveToOwnProvince => "a unit cannot move to its own province",
            ArmyToSea => "an army cannot move to sea",
            FleetInland => "a fleet cannot move inland",
            FleetViaConvoy => "only armies can be convoyed",
            NotAdjacent => "destination not adjacent and no convoy route",
            NoConvoyRoute => "no convoy route",
            CoastMissing => "coast must be specified",
            CoastUnreachable => "the fleet cannot reach that coast",
            SupportsItself => "a unit cannot support itself",
            SupportIntoOwnProvince => "a unit cannot support a move into its own province",
            CannotReach(p) => {
                out.push_str("the supporter cannot move to ");
                map.prov_name(*p)
            }
            SupportedMoveImpossible => "the supported move is impossible",
            ConvoyNotAtSea => "only a fleet at sea can convoy",
            ConvoyNotArmy => "only armies can be convoyed",
            ConvoyBadDestination => "convoy destination must be another coastal province",
            ConvoyNotNeeded => "the fleet is on no convoy route without shortcuts",
            Unmatched(p) => {
                out.push_str(UNMATCHED_PREFIX);
                out.push(' ');
                map.prov_name(*p)
            }
            NotDislodged => "the unit is not dislodged",
            NotARetreatOption => "not a retreat option of the unit",
            NoBuildsAllowed => "no builds allowed",
            NoRemovalsOwed => "no removals owed",
            NotABuildSite => "not an owned, empty home centre",
            BuildKindMissing => "unit type missing",
            BadBuildKind => "that unit cannot be built there",
        };
        out.push_str(text);
    }
}

/// One void or ignored order: `index` is its position in the order list given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderError {
    /// Position in the input list.
    pub index: usize,
    /// The power that gave it.
    pub power: Power,
    /// Why it was void or ignored.
    pub reason: VoidReason,
}

/// The result of adjudicating one phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PhaseOutcome {
    /// One entry per unit that was given an order (builds: the unit to build).
    pub results: Vec<(Unit, OrderResult)>,
    /// Void, ignored and unmatched orders, in input order.
    pub errors: Vec<OrderError>,
    /// Why each unit whose result is [`OrderResult::Fails`] failed (same key as `results`).
    pub failures: Vec<(Unit, FailReason)>,
    /// Units taken off the board in this phase.
    pub destroyed: Vec<Unit>,
    /// The effective orders, typed, with unit letters and coasts filled in (format them with
    /// [`crate::bots::format_order`] for history and replays).
    pub orders: Vec<(Power, crate::order::Order)>,
}

impl PhaseOutcome {
    /// An empty outcome with room for `n` results and orders.
    pub fn with_capacity(n: usize) -> Self {
        PhaseOutcome {
            results: Vec::with_capacity(n),
            errors: Vec::new(),
            failures: Vec::new(),
            destroyed: Vec::new(),
            orders: Vec::with_capacity(n),
        }
    }
}
