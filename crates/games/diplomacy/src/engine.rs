//! A full game: phases in sequence, centre updates, eliminations, solo victory and the year limit,
//! as a [`kakehiki_core::Game`] for in-process play, plus the built-in bots as [`kakehiki_core::Bot`]s.

use kakehiki_core::{seeded_rng, Bot, Game, Outcome, Score, SeedRng};

use crate::adjudicate::adjudicate;
use crate::board::Board;
use crate::bots::{
    build_sites, format_order, hold_orders, random_orders, stillness, strong_orders, StrongConfig,
};
use crate::map::{standard, Map, Prov, NUM_PROVINCES};
use crate::movement::Resolver;
use crate::order::{parse_order, Order};
use crate::outcome::{FailReason, OrderResult};
use crate::types::{Phase, PhaseKind, Power, Season};

/// Game options (spec §6 `rules`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Centres for a solo victory.
    pub solo_centers: usize,
    /// The game ends after the centre update of Fall of this year.
    pub max_year: u16,
    /// Press rounds before each movement phase.
    pub press_rounds: u32,
    /// Whether unanimous draw votes end the game.
    pub draw_votes: bool,
}

impl Default for Rules {
    fn default() -> Self {
        Rules {
            solo_centers: 18,
            max_year: 1920,
            press_rounds: 0,
            draw_votes: false,
        }
    }
}

/// Why the game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndReason {
    /// One power reached `solo_centers`.
    Solo(Power),
    /// The year limit was reached.
    YearLimit,
    /// The survivors voted a draw.
    Draw,
}

impl EndReason {
    /// `solo`, `year_limit` or `draw`.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Solo(_) => "solo",
            EndReason::YearLimit => "year_limit",
            EndReason::Draw => "draw",
        }
    }
}

/// One adjudicated phase, public after the fact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PhaseRecord {
    /// The phase adjudicated.
    pub phase: Phase,
    /// Effective orders per power, canonical.
    pub orders: Vec<(Power, String)>,
    /// Results by canonical unit, sorted.
    pub results: Vec<(String, OrderResult)>,
    /// Void or ignored orders: (power, order as given, reason).
    pub errors: Vec<(Power, String, String)>,
    /// Why each failed order failed, by canonical unit (the units whose result is `fails`), sorted.
    pub failures: Vec<(String, FailReason)>,
    /// Units taken off the board.
    pub destroyed: Vec<String>,
}

/// A game of Diplomacy from the 1901 position.
pub struct DiplomacyGame {
    map: &'static Map,
    board: Board,
    rules: Rules,
    resolver: Resolver,
    civil_disorder: [bool; 7],
    eliminated: [bool; 7],
    end: Option<EndReason>,
    history: Vec<PhaseRecord>,
}

impl DiplomacyGame {
    /// A new game at `S1901M`.
    pub fn new(rules: Rules) -> Self {
        let mut g = DiplomacyGame {
            map: standard(),
            board: Board::standard_start(),
            rules,
            resolver: Resolver::new(),
            civil_disorder: [false; 7],
            eliminated: [false; 7],
            end: None,
            history: Vec::new(),
        };
        g.skip_silent();
        g
    }

    /// The current position.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// The rules.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }

    /// Every phase adjudicated so far.
    pub fn history(&self) -> &[PhaseRecord] {
        &self.history
    }

    /// Why the game ended, once it has.
    pub fn end_reason(&self) -> Option<EndReason> {
        self.end
    }

    /// Whether the power is eliminated.
    pub fn is_eliminated(&self, p: Power) -> bool {
        self.eliminated[p.index()]
    }

    /// Whether the power is in civil disorder.
    pub fn in_civil_disorder(&self, p: Power) -> bool {
        self.civil_disorder[p.index()]
    }

    /// Powers in civil disorder.
    pub fn civil_disorder_powers(&self) -> Vec<Power> {
        Power::ALL
            .into_iter()
            .filter(|p| self.civil_disorder[p.index()])
            .collect()
    }

    /// Put a power in civil disorder for the rest of the game (its bot failed).
    pub fn set_civil_disorder(&mut self, p: Power) {
        self.civil_disorder[p.index()] = true;
    }

    /// Powers still in the game.
    pub fn survivors(&self) -> Vec<Power> {
        Power::ALL
            .into_iter()
            .filter(|p| !self.eliminated[p.index()])
            .collect()
    }

    /// Owned centres per power.
    pub fn centers(&self, p: Power) -> usize {
        self.board.centers_of(p)
    }

    /// Whether `p` has something to order in the current phase.
    pub fn has_orders(&self, p: Power) -> bool {
        if self.end.is_some() || self.eliminated[p.index()] {
            return false;
        }
        match self.board.phase.kind {
            PhaseKind::Movement => self.board.units_of(p).next().is_some(),
            PhaseKind::Retreat => self
                .board
                .dislodged
                .iter()
                .flatten()
                .any(|d| d.unit.power == p),
            PhaseKind::Adjustment => self.board.must_or_may_adjust(p),
        }
    }

    /// Powers that receive a phase message now (something to order, not in civil disorder).
    pub fn acting(&self) -> Vec<Power> {
        Power::ALL
            .into_iter()
            .filter(|&p| self.has_orders(p) && !self.civil_disorder[p.index()])
            .collect()
    }

    /// What `p` may order now: units, dislodged units, build sites or removable units.
    pub fn orderable(&self, p: Power) -> Vec<String> {
        let map = self.map;
        let mut v: Vec<String> = match self.board.phase.kind {
            PhaseKind::Movement => self.board.units_of(p).map(|u| map.unit_name(&u)).collect(),
            PhaseKind::Retreat => self
                .board
                .dislodged_of(p)
                .map(|d| map.unit_name(&d.unit))
                .collect(),
            PhaseKind::Adjustment => {
                let n = self.board.adjustment(p);
                if n > 0 {
                    build_sites(&self.board, p)
                        .into_iter()
                        .map(|q: Prov| map.prov_name(q).to_string())
                        .collect()
                } else if n < 0 {
                    self.board.units_of(p).map(|u| map.unit_name(&u)).collect()
                } else {
                    Vec::new()
                }
            }
        };
        v.sort();
        v
    }

    /// End the game now as a draw among the survivors (unanimous draw vote).
    pub fn declare_draw(&mut self) {
        if self.end.is_none() {
            self.end = Some(EndReason::Draw);
        }
    }

    /// Adjudicate the current phase with the orders given (strings in any §2 form, per power, in
    /// the order given). Orders of powers with nothing to order or in civil disorder are ignored.
    /// Silent phases that follow are adjudicated too. Returns the records of every phase
    /// adjudicated by this call.
    pub fn step(&mut self, orders: &[(Power, Vec<String>)]) -> Vec<PhaseRecord> {
        if self.end.is_some() {
            return Vec::new();
        }
        let first = self.history.len();
        self.adjudicate_once(orders);
        self.skip_silent();
        self.history[first..].to_vec()
    }

    fn adjudicate_once(&mut self, orders: &[(Power, Vec<String>)]) {
        let map = self.map;
        let phase = self.board.phase;
        let mut typed: Vec<(Power, Order)> = Vec::new();
        let mut given: Vec<(Power, String, Option<usize>, Option<String>)> = Vec::new();
        for (p, list) in orders {
            if self.civil_disorder[p.index()] || !self.has_orders(*p) {
                continue;
            }
            for text in list {
                match parse_order(map, text) {
                    Ok(o) => {
                        given.push((*p, text.clone(), Some(typed.len()), None));
                        typed.push((*p, o));
                    }
                    Err(e) => given.push((*p, text.clone(), None, Some(e.to_string()))),
                }
            }
        }
        let out = adjudicate(&mut self.resolver, map, &mut self.board, &typed);
        let mut errors = Vec::new();
        for (p, text, idx, perr) in given {
            if let Some(e) = perr {
                errors.push((p, text, e));
            } else if let Some(i) = idx {
                for e in out.errors.iter().filter(|e| e.index == i) {
                    errors.push((p, text.clone(), e.reason.message(map)));
                }
            }
        }
        let mut results: Vec<(String, OrderResult)> = out
            .results
            .iter()
            .map(|(u, r)| (map.unit_name(u), *r))
            .collect();
        results.sort_by(|a, b| a.0.cmp(&b.0));
        let mut failures: Vec<(String, FailReason)> = out
            .failures
            .iter()
            .map(|(u, f)| (map.unit_name(u), *f))
            .collect();
        failures.sort_by(|a, b| a.0.cmp(&b.0));
        let mut destroyed: Vec<String> = out.destroyed.iter().map(|u| map.unit_name(u)).collect();
        destroyed.sort();
        self.history.push(PhaseRecord {
            phase,
            orders: out
                .orders
                .iter()
                .map(|(p, o)| (*p, format_order(map, o)))
                .collect(),
            results,
            errors,
            failures,
            destroyed,
        });
        for p in Power::ALL {
            if !self.board.is_alive(p) {
                self.eliminated[p.index()] = true;
            }
        }
        let centre_update = phase.season == Season::Fall
            && (phase.kind == PhaseKind::Retreat
                || (phase.kind == PhaseKind::Movement && !self.board.has_dislodged()));
        if centre_update {
            for p in Power::ALL {
                if self.board.centers_of(p) >= self.rules.solo_centers {
                    self.end = Some(EndReason::Solo(p));
                    return;
                }
            }
            if phase.year >= self.rules.max_year {
                for p in Power::ALL {
                    if self.board.centers_of(p) == 0 {
                        self.eliminated[p.index()] = true;
                    }
                }
                self.end = Some(EndReason::YearLimit);
            }
        }
    }

    /// Adjudicate phases in which nobody has anything to order.
    fn skip_silent(&mut self) {
        while self.end.is_none()
            && !Power::ALL
                .iter()
                .any(|&p| self.has_orders(p) && !self.civil_disorder[p.index()])
        {
            // Civil-disorder powers may still owe removals: adjudicated with no orders.
            self.adjudicate_once(&[]);
        }
    }

    /// Scores: 1 to a solo winner; otherwise the survivors share 1 equally.
    pub fn scores(&self) -> Option<Outcome> {
        let end = self.end?;
        let mut scores = vec![Score::from_integer(0); 7];
        match end {
            EndReason::Solo(p) => {
                scores[p.index()] = Score::from_integer(1);
                Some(Outcome {
                    scores,
                    winner: Some(p.index()),
                })
            }
            _ => {
                let s = self.survivors();
                for p in &s {
                    scores[p.index()] = Score::new(1, s.len().max(1) as i64);
                }
                Some(Outcome {
                    scores,
                    winner: None,
                })
            }
        }
    }

    /// Final centre counts per power.
    pub fn center_counts(&self) -> [usize; 7] {
        let mut c = [0; 7];
        for p in 0..NUM_PROVINCES {
            if let Some(o) = self.board.owner[p] {
                c[o.index()] += 1;
            }
        }
        c
    }
}

/// What a built-in bot sees: its power and the public position.
#[derive(Clone, Debug)]
pub struct Observation {
    /// The bot's power.
    pub power: Power,
    /// The public position (units, dislodged units with options, centres).
    pub board: Board,
}

impl Game for DiplomacyGame {
    type Action = Vec<String>;
    type Observation = Observation;

    fn num_seats(&self) -> usize {
        7
    }

    fn to_act(&self) -> Vec<usize> {
        self.acting().into_iter().map(Power::index).collect()
    }

    fn observe(&self, seat: usize) -> Observation {
        Observation {
            power: Power(seat as u8),
            board: self.board.clone(),
        }
    }

    fn apply(&mut self, actions: &[Option<Vec<String>>]) {
        let seats = self.to_act();
        let orders: Vec<(Power, Vec<String>)> = seats
            .iter()
            .zip(actions)
            .filter_map(|(&s, a)| a.as_ref().map(|a| (Power(s as u8), a.clone())))
            .collect();
        self.step(&orders);
    }

    fn outcome(&self) -> Option<Outcome> {
        self.scores()
    }
}

/// A built-in bot by name.
pub enum BuiltinBot {
    /// Random legal orders.
    Random(SeedRng),
    /// Every unit holds.
    Hold,
    /// Search over candidate order sets.
    Strong(SeedRng, Box<StrongState>),
}

/// What the `strong` bot keeps between phases.
pub struct StrongState {
    resolver: Resolver,
    cfg: StrongConfig,
    /// The position of the last movement phase it ordered, to see who stood still since.
    last_movement: Option<Board>,
}

/// Names of the built-in bots.
pub const BUILTIN_BOTS: &[&str] = &["random", "hold", "strong"];

impl BuiltinBot {
    /// The bot `name` for `seat`, seeded from the match seed.
    pub fn new(name: &str, match_seed: u64, seat: usize) -> Option<Self> {
        let rng = seeded_rng(match_seed, &format!("diplomacy-seat-{seat}"));
        match name {
            "random" => Some(BuiltinBot::Random(rng)),
            "hold" => Some(BuiltinBot::Hold),
            "strong" => Some(BuiltinBot::Strong(
                rng,
                Box::new(StrongState {
                    resolver: Resolver::default(),
                    cfg: StrongConfig::default(),
                    last_movement: None,
                }),
            )),
            _ => None,
        }
    }

    /// Typed orders for the position.
    pub fn orders(&mut self, board: &Board, power: Power) -> Vec<Order> {
        let map = standard();
        match self {
            BuiltinBot::Random(rng) => random_orders(map, board, power, rng),
            BuiltinBot::Hold => hold_orders(map, board, power),
            BuiltinBot::Strong(rng, st) => {
                let mut still = [0.0; 7];
                if board.phase.kind == PhaseKind::Movement {
                    if let Some(prev) = &st.last_movement {
                        still = stillness(prev, board);
                    }
                    st.last_movement = Some(board.clone());
                }
                let StrongState { resolver, cfg, .. } = &mut **st;
                strong_orders(map, board, power, cfg, &still, resolver, rng)
            }
        }
    }

    /// Orders as canonical strings.
    pub fn order_strings(&mut self, board: &Board, power: Power) -> Vec<String> {
        let map = standard();
        self.orders(board, power)
            .iter()
            .map(|o| format_order(map, o))
            .collect()
    }
}

impl Bot<DiplomacyGame> for BuiltinBot {
    fn act(&mut self, _seat: usize, obs: &Observation) -> Vec<String> {
        self.order_strings(&obs.board, obs.power)
    }
}
