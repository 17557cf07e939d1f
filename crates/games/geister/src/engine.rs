//! The rules engine (spec §1): board, placement, moves, captures, escapes and the end conditions
//! in the spec's order, parameterised by the rule set's limit and fault policies.
//!
//! Squares are `y * 6 + x` (0..36) in a seat's *own* frame; the same square in the other seat's
//! frame is `35 - sq` (a half turn). Off-board ghosts hold the markers [`CAPTURED`] and [`ESCAPED`].

use serde::{Deserialize, Serialize};

use crate::rules::{AtLimit, Fault, Rules};

/// Position marker of a captured ghost (the wire's `99`).
pub const CAPTURED: u8 = 99;
/// Position marker of an escaped ghost (the wire's `88`).
pub const ESCAPED: u8 = 88;
/// Ghost labels in order.
pub const LABELS: [char; 8] = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'];
/// Start squares of A..H in the owner's frame: A (1,4) .. D (4,4), E (1,5) .. H (4,5).
pub const START: [u8; 8] = [25, 26, 27, 28, 31, 32, 33, 34];

/// The square `(x, y)`.
pub const fn sq(x: u8, y: u8) -> u8 {
    y * 6 + x
}

/// The same square in the other seat's frame.
pub const fn flip(s: u8) -> u8 {
    35 - s
}

/// A move direction in the mover's own frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Dir {
    /// Towards the opponent (y - 1).
    N,
    /// x + 1.
    E,
    /// x - 1.
    W,
    /// Towards the own home row (y + 1).
    S,
}

impl Dir {
    pub const ALL: [Dir; 4] = [Dir::N, Dir::E, Dir::W, Dir::S];

    /// The wire letter.
    pub fn letter(self) -> char {
        match self {
            Dir::N => 'N',
            Dir::E => 'E',
            Dir::W => 'W',
            Dir::S => 'S',
        }
    }

    /// The same direction seen from the other side of the board.
    pub fn opposite(self) -> Dir {
        match self {
            Dir::N => Dir::S,
            Dir::S => Dir::N,
            Dir::E => Dir::W,
            Dir::W => Dir::E,
        }
    }
}

/// A ghost's colour. Red = bad, blue = good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Colour {
    Red,
    Blue,
}

/// One move: ghost index 0..8 (A..H) and direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Move {
    pub ghost: u8,
    pub dir: Dir,
}

impl Move {
    pub fn new(ghost: u8, dir: Dir) -> Self {
        Move { ghost, dir }
    }

    /// Normalised wire form `A,N`.
    pub fn wire(&self) -> String {
        format!("{},{}", LABELS[self.ghost as usize & 7], self.dir.letter())
    }
}

/// A placement: exactly four red ghosts, as a bit mask over A..H (bit 0 = A).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RedSet(u8);

impl RedSet {
    /// A placement from a mask with exactly four bits set.
    pub fn from_mask(mask: u8) -> Option<RedSet> {
        (mask.count_ones() == 4).then_some(RedSet(mask))
    }

    /// A placement from four distinct ghost indices.
    pub fn from_ghosts(ghosts: [u8; 4]) -> Option<RedSet> {
        let mut mask = 0u8;
        for g in ghosts {
            if g >= 8 || mask & (1 << g) != 0 {
                return None;
            }
            mask |= 1 << g;
        }
        Some(RedSet(mask))
    }

    pub fn mask(self) -> u8 {
        self.0
    }

    pub fn is_red(self, ghost: u8) -> bool {
        self.0 & (1 << ghost) != 0
    }

    /// The red labels in label order (`ABCD`).
    pub fn labels(self) -> String {
        (0..8)
            .filter(|&g| self.is_red(g))
            .map(|g| LABELS[g as usize])
            .collect()
    }

    /// All 70 placements, in increasing mask order.
    pub fn all() -> impl Iterator<Item = RedSet> {
        (0u16..256)
            .filter(|m| m.count_ones() == 4)
            .map(|m| RedSet(m as u8))
    }
}

/// Why a game ended. Serialised names are the replay's reasons (spec §4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    Escape,
    CapturedAllBlue,
    LostAllRed,
    Score,
    PlyLimitDraw,
    IllegalMove,
    Timeout,
    Disconnect,
    SetTimeout,
    ConnectTimeout,
    DoubleForfeit,
}

impl EndReason {
    /// The replay name (`captured_all_blue`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Escape => "escape",
            EndReason::CapturedAllBlue => "captured_all_blue",
            EndReason::LostAllRed => "lost_all_red",
            EndReason::Score => "score",
            EndReason::PlyLimitDraw => "ply_limit_draw",
            EndReason::IllegalMove => "illegal_move",
            EndReason::Timeout => "timeout",
            EndReason::Disconnect => "disconnect",
            EndReason::SetTimeout => "set_timeout",
            EndReason::ConnectTimeout => "connect_timeout",
            EndReason::DoubleForfeit => "double_forfeit",
        }
    }

    /// The `end` key of the match report (the tracker's vocabulary).
    pub fn report_name(self) -> &'static str {
        match self {
            EndReason::Escape => "escape",
            EndReason::CapturedAllBlue => "captured_all_good",
            EndReason::LostAllRed => "lost_all_bad",
            EndReason::Score => "score",
            EndReason::PlyLimitDraw => "ply_limit",
            EndReason::IllegalMove => "illegal_move",
            EndReason::Timeout => "timeout",
            // The tracker's list has no placement or connection timeouts: a missing placement is
            // a timeout, a client that never connected a disconnect (`reason` keeps the detail).
            EndReason::SetTimeout => "timeout",
            EndReason::Disconnect | EndReason::DoubleForfeit | EndReason::ConnectTimeout => {
                "disconnect"
            }
        }
    }

    /// Whether the rules (not a fault) decided the game.
    pub fn by_rules(self) -> bool {
        matches!(
            self,
            EndReason::Escape
                | EndReason::CapturedAllBlue
                | EndReason::LostAllRed
                | EndReason::Score
                | EndReason::PlyLimitDraw
        )
    }
}

/// The end of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    /// The winning seat; `None` for a draw or a double forfeit.
    pub winner: Option<usize>,
    pub reason: EndReason,
    /// `Score_P` per seat, for `score` and `ply_limit_draw` endings under `at_limit = score`.
    pub scores: Option<[i32; 2]>,
}

impl End {
    pub fn is_draw(&self) -> bool {
        self.winner.is_none() && self.reason != EndReason::DoubleForfeit
    }
}

/// Why a move is not legal now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    #[error("the game is over")]
    GameOver,
    #[error("the placement phase is not over")]
    NotStarted,
    #[error("it is not seat {0}'s turn")]
    NotYourTurn(usize),
    #[error("ghost {0} is not on the board")]
    GhostOffBoard(char),
    #[error("ghost {0} cannot move {1:?}: off the board")]
    OffBoard(char, Dir),
    #[error("ghost {0} cannot move {1:?}: an own ghost stands there")]
    OwnGhost(char, Dir),
    #[error("ghost {0} is red and cannot escape")]
    RedCannotEscape(char),
}

/// Why a placement was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PlaceError {
    #[error("seat {0} has already placed its ghosts")]
    AlreadyPlaced(usize),
    #[error("the game is over")]
    GameOver,
    #[error("no seat {0}")]
    NoSeat(usize),
}

/// What an applied move did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MoveEffect {
    /// The captured opponent ghost (index) and its colour.
    pub captured: Option<(u8, Colour)>,
    pub escaped: bool,
}

/// A fault on a player's own turn (spec §2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnFault {
    /// Illegal or malformed command.
    Illegal,
    /// No command in time.
    Late,
}

/// The parameters the engine itself needs (the clock lives in the referee).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlayRules {
    pub max_plies: u32,
    pub at_limit: AtLimit,
    pub on_illegal: Fault,
    pub on_late: Fault,
}

impl From<&Rules> for PlayRules {
    fn from(r: &Rules) -> Self {
        PlayRules {
            max_plies: r.max_plies,
            at_limit: r.at_limit,
            on_illegal: r.on_illegal,
            on_late: r.on_late,
        }
    }
}

/// Target of a step: a square, an escape, or off the board.
const OFF: u8 = 255;
const EXIT: u8 = 254;

/// `STEP[sq][dir]`: the square reached, [`EXIT`] for a move off an exit corner (blue only), or
/// [`OFF`].
const STEP: [[u8; 4]; 36] = {
    let mut t = [[OFF; 4]; 36];
    let mut s = 0;
    while s < 36 {
        let x = (s % 6) as i32;
        let y = (s / 6) as i32;
        let d = [(0, -1), (1, 0), (-1, 0), (0, 1)];
        let mut i = 0;
        while i < 4 {
            let (nx, ny) = (x + d[i].0, y + d[i].1);
            t[s][i] = if nx >= 0 && nx < 6 && ny >= 0 && ny < 6 {
                (ny * 6 + nx) as u8
            } else if (x == 0 && y == 0 && (i == 0 || i == 2))
                || (x == 5 && y == 0 && (i == 0 || i == 1))
            {
                EXIT
            } else {
                OFF
            };
            i += 1;
        }
        s += 1;
    }
    t
};

fn dir_index(d: Dir) -> usize {
    match d {
        Dir::N => 0,
        Dir::E => 1,
        Dir::W => 2,
        Dir::S => 3,
    }
}

/// Up to 32 moves without allocation.
#[derive(Debug, Clone, Copy)]
pub struct MoveList {
    moves: [Move; 32],
    len: usize,
}

impl MoveList {
    fn new() -> Self {
        MoveList {
            moves: [Move {
                ghost: 0,
                dir: Dir::N,
            }; 32],
            len: 0,
        }
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

/// The legal moves of a side given its own positions, occupancy and red mask (own frame).
pub fn moves_for(pos: &[u8; 8], occ: u64, red: u8) -> MoveList {
    let mut list = MoveList::new();
    // Branch-free inner loop: every candidate is written, the length advances only if legal.
    for g in 0..8u8 {
        let s = pos[g as usize];
        if s >= 36 {
            continue;
        }
        let row = &STEP[s as usize];
        let blue = (red >> g) & 1 == 0;
        for (i, &dir) in Dir::ALL.iter().enumerate() {
            let t = row[i];
            let on_board_free = (t < 36) & ((occ >> (t & 63)) & 1 == 0);
            let escape = (t == EXIT) & blue;
            list.moves[list.len] = Move { ghost: g, dir };
            list.len += (on_board_free | escape) as usize;
        }
    }
    list
}

/// A game of Geister.
#[derive(Debug, Clone)]
pub struct Geister {
    rules: PlayRules,
    /// Per seat, per ghost: own-frame square, [`CAPTURED`] or [`ESCAPED`].
    pos: [[u8; 8]; 2],
    /// Per seat, occupancy bit board in its own frame.
    occ: [u64; 2],
    /// Per seat, red mask (0 until placed: ghosts count as blue).
    red: [u8; 2],
    placed: [bool; 2],
    lost_red: [u8; 2],
    lost_blue: [u8; 2],
    escaped: [bool; 2],
    /// Plies played (moves and passes).
    ply: u32,
    end: Option<End>,
}

impl Geister {
    pub fn new(rules: PlayRules) -> Self {
        let occ = START.iter().fold(0u64, |o, &s| o | (1u64 << s));
        Geister {
            rules,
            pos: [START; 2],
            occ: [occ; 2],
            red: [0; 2],
            placed: [false; 2],
            lost_red: [0; 2],
            lost_blue: [0; 2],
            escaped: [false; 2],
            ply: 0,
            end: None,
        }
    }

    /// A game with both placements made.
    pub fn with_placements(rules: PlayRules, p0: RedSet, p1: RedSet) -> Self {
        let mut g = Geister::new(rules);
        g.red = [p0.mask(), p1.mask()];
        g.placed = [true; 2];
        g
    }

    pub fn rules(&self) -> &PlayRules {
        &self.rules
    }

    /// Plies played so far.
    pub fn ply(&self) -> u32 {
        self.ply
    }

    pub fn end(&self) -> Option<&End> {
        self.end.as_ref()
    }

    pub fn is_over(&self) -> bool {
        self.end.is_some()
    }

    pub fn placed(&self, seat: usize) -> bool {
        self.placed[seat]
    }

    /// Whether both placements are in and the game is not over.
    pub fn in_play(&self) -> bool {
        self.placed[0] && self.placed[1] && self.end.is_none()
    }

    /// The seat whose turn it is (meaningful while in play).
    pub fn to_move(&self) -> usize {
        (self.ply % 2) as usize
    }

    /// Positions of a seat's ghosts in its own frame.
    pub fn positions(&self, seat: usize) -> &[u8; 8] {
        &self.pos[seat]
    }

    /// A seat's red mask (0 before its placement).
    pub fn red_mask(&self, seat: usize) -> u8 {
        self.red[seat]
    }

    pub fn colour(&self, seat: usize, ghost: u8) -> Colour {
        if self.red[seat] & (1 << ghost) != 0 {
            Colour::Red
        } else {
            Colour::Blue
        }
    }

    /// Accept a seat's placement.
    pub fn place(&mut self, seat: usize, red: RedSet) -> Result<(), PlaceError> {
        if seat > 1 {
            return Err(PlaceError::NoSeat(seat));
        }
        if self.end.is_some() {
            return Err(PlaceError::GameOver);
        }
        if self.placed[seat] {
            return Err(PlaceError::AlreadyPlaced(seat));
        }
        self.red[seat] = red.mask();
        self.placed[seat] = true;
        Ok(())
    }

    /// The legal moves of the seat to move (empty unless in play).
    pub fn legal_moves(&self) -> MoveList {
        if !self.in_play() {
            return MoveList::new();
        }
        let s = self.to_move();
        moves_for(&self.pos[s], self.occ[s], self.red[s])
    }

    /// Check a move of `seat` without applying it.
    pub fn check(&self, seat: usize, mv: Move) -> Result<(), IllegalMove> {
        self.target(seat, mv).map(|_| ())
    }

    fn target(&self, seat: usize, mv: Move) -> Result<u8, IllegalMove> {
        if self.end.is_some() {
            return Err(IllegalMove::GameOver);
        }
        if !(self.placed[0] & self.placed[1]) {
            return Err(IllegalMove::NotStarted);
        }
        if seat != self.to_move() {
            return Err(IllegalMove::NotYourTurn(seat));
        }
        let label = || LABELS[(mv.ghost & 7) as usize];
        if mv.ghost >= 8 {
            return Err(IllegalMove::GhostOffBoard(label()));
        }
        let s = self.pos[seat][mv.ghost as usize];
        if s >= 36 {
            return Err(IllegalMove::GhostOffBoard(label()));
        }
        let t = STEP[s as usize][dir_index(mv.dir)];
        if t < 36 {
            if self.occ[seat] & (1u64 << t) != 0 {
                return Err(IllegalMove::OwnGhost(label(), mv.dir));
            }
            return Ok(t);
        }
        match t {
            EXIT if self.red[seat] & (1 << mv.ghost) != 0 => {
                Err(IllegalMove::RedCannotEscape(label()))
            }
            EXIT => Ok(EXIT),
            _ => Err(IllegalMove::OffBoard(label(), mv.dir)),
        }
    }

    /// Apply a legal move of the seat to move, then the end checks (spec §1.6).
    pub fn play(&mut self, mv: Move) -> Result<MoveEffect, IllegalMove> {
        let me = self.to_move();
        let t = self.target(me, mv)?;
        let g = mv.ghost as usize;
        let from = self.pos[me][g];
        self.occ[me] &= !(1u64 << from);
        let mut effect = MoveEffect {
            captured: None,
            escaped: false,
        };
        if t == EXIT {
            self.pos[me][g] = ESCAPED;
            self.escaped[me] = true;
            effect.escaped = true;
        } else {
            self.pos[me][g] = t;
            self.occ[me] |= 1u64 << t;
            let opp = 1 - me;
            let os = flip(t);
            if self.occ[opp] & (1u64 << os) != 0 {
                self.occ[opp] &= !(1u64 << os);
                let victim = self.pos[opp].iter().position(|&p| p == os).unwrap_or(0);
                self.pos[opp][victim] = CAPTURED;
                let colour = self.colour(opp, victim as u8);
                match colour {
                    Colour::Red => self.lost_red[opp] += 1,
                    Colour::Blue => self.lost_blue[opp] += 1,
                }
                effect.captured = Some((victim as u8, colour));
            }
        }
        self.ply += 1;
        // Only the mover's escape or the victim's losses can have changed, and none of the
        // conditions held before, so checking those alone is the spec's order (§1.6).
        let opp = 1 - me;
        let decided = if effect.escaped {
            Some((EndReason::Escape, me))
        } else if effect.captured.is_some() && self.lost_blue[opp] == 4 {
            Some((EndReason::CapturedAllBlue, me))
        } else if effect.captured.is_some() && self.lost_red[opp] == 4 {
            Some((EndReason::LostAllRed, opp))
        } else {
            None
        };
        match decided {
            Some((reason, winner)) => {
                self.end = Some(End {
                    winner: Some(winner),
                    reason,
                    scores: None,
                })
            }
            None => self.check_limit(),
        }
        Ok(effect)
    }

    /// A turn without a move (only reachable under `pass` policies); only the limit is checked.
    pub fn pass(&mut self) {
        if !self.in_play() {
            return;
        }
        self.ply += 1;
        self.check_limit();
    }

    /// Apply the rule set's policy for a fault on the mover's own turn. Returns `true` if the
    /// game ended (policy `lose`), `false` if the turn passed.
    pub fn turn_fault(&mut self, fault: TurnFault) -> bool {
        if !self.in_play() {
            return self.is_over();
        }
        let (policy, reason) = match fault {
            TurnFault::Illegal => (self.rules.on_illegal, EndReason::IllegalMove),
            TurnFault::Late => (self.rules.on_late, EndReason::Timeout),
        };
        match policy {
            Fault::Lose => {
                let me = self.to_move();
                self.forfeit(me, reason);
                true
            }
            Fault::Pass => {
                self.pass();
                self.is_over()
            }
        }
    }

    /// `seat` loses at once (a fault); no effect once over.
    pub fn forfeit(&mut self, seat: usize, reason: EndReason) {
        if self.end.is_none() {
            self.end = Some(End {
                winner: Some(1 - seat),
                reason,
                scores: None,
            });
        }
    }

    /// Both seats lose (both failed on the player side); no effect once over.
    pub fn double_forfeit(&mut self) {
        if self.end.is_none() {
            self.end = Some(End {
                winner: None,
                reason: EndReason::DoubleForfeit,
                scores: None,
            });
        }
    }

    fn check_end_after_move(&mut self) {
        for p in 0..2 {
            let reason_winner = if self.escaped[p] {
                Some((EndReason::Escape, p))
            } else if self.lost_blue[p] == 4 {
                Some((EndReason::CapturedAllBlue, 1 - p))
            } else if self.lost_red[p] == 4 {
                Some((EndReason::LostAllRed, p))
            } else {
                None
            };
            if let Some((reason, winner)) = reason_winner {
                self.end = Some(End {
                    winner: Some(winner),
                    reason,
                    scores: None,
                });
                return;
            }
        }
        self.check_limit();
    }

    fn check_limit(&mut self) {
        if self.ply < self.rules.max_plies {
            return;
        }
        self.end = Some(match self.rules.at_limit {
            AtLimit::Draw => End {
                winner: None,
                reason: EndReason::PlyLimitDraw,
                scores: None,
            },
            AtLimit::Score => {
                let s = self.limit_scores();
                let winner = match s[0].cmp(&s[1]) {
                    std::cmp::Ordering::Greater => Some(0),
                    std::cmp::Ordering::Less => Some(1),
                    std::cmp::Ordering::Equal => None,
                };
                let reason = if winner.is_some() {
                    EndReason::Score
                } else {
                    EndReason::PlyLimitDraw
                };
                End {
                    winner,
                    reason,
                    scores: Some(s),
                }
            }
        });
    }

    /// Blue and red ghosts of `seat` still on the board.
    pub fn on_board(&self, seat: usize) -> (i32, i32) {
        let mut g = 0;
        let mut r = 0;
        for (i, &p) in self.pos[seat].iter().enumerate() {
            if p < 36 {
                if self.red[seat] & (1 << i) != 0 {
                    r += 1;
                } else {
                    g += 1;
                }
            }
        }
        (g, r)
    }

    /// A full state consistent with what `view` shows, the opponent's red mask assumed to be
    /// `opp_red` (a determinization, for search bots). Labels, positions, captures and the ply
    /// counter come from the view.
    pub fn determinize(view: &View, opp_red: u8, rules: PlayRules) -> Geister {
        let me = view.seat;
        let opp = 1 - me;
        let mut g = Geister::new(rules);
        g.placed = [true; 2];
        g.red[me] = view.own_red;
        g.red[opp] = opp_red;
        g.pos[me] = view.own;
        for i in 0..8 {
            let p = view.opp[i];
            g.pos[opp][i] = if p < 36 { flip(p) } else { p };
        }
        for s in 0..2 {
            g.occ[s] = g.pos[s]
                .iter()
                .filter(|&&p| p < 36)
                .fold(0u64, |o, &p| o | (1u64 << p));
            for i in 0..8 {
                let red = g.red[s] & (1 << i) != 0;
                match g.pos[s][i] {
                    CAPTURED if red => g.lost_red[s] += 1,
                    CAPTURED => g.lost_blue[s] += 1,
                    ESCAPED => g.escaped[s] = true,
                    _ => {}
                }
            }
        }
        g.ply = view.ply;
        g.check_end_after_move_if_decided();
        g
    }

    fn check_end_after_move_if_decided(&mut self) {
        if self.escaped.iter().any(|&e| e)
            || self.lost_blue.contains(&4)
            || self.lost_red.contains(&4)
        {
            self.check_end_after_move();
        }
    }

    /// Number of `seat`'s red and blue ghosts captured so far.
    pub fn lost(&self, seat: usize) -> (u8, u8) {
        (self.lost_red[seat], self.lost_blue[seat])
    }

    /// `Score_P = 2·(G_P − R_Q) − (R_P − G_Q)` for both seats (spec §2.3).
    pub fn limit_scores(&self) -> [i32; 2] {
        let (g0, r0) = self.on_board(0);
        let (g1, r1) = self.on_board(1);
        [score_formula(g0, r0, g1, r1), score_formula(g1, r1, g0, r0)]
    }

    /// What `seat` may know now. Opponent colours are present only for captured ghosts, or for
    /// all once the game is over.
    pub fn view(&self, seat: usize) -> View {
        let opp = 1 - seat;
        let over = self.end.is_some();
        let mut opp_pos = [0u8; 8];
        let mut opp_colour = [None; 8];
        for g in 0..8 {
            let p = self.pos[opp][g];
            opp_pos[g] = if p < 36 { flip(p) } else { p };
            if over || p == CAPTURED {
                opp_colour[g] = Some(self.colour(opp, g as u8));
            }
        }
        View {
            seat,
            ply: self.ply,
            max_plies: self.rules.max_plies,
            placed: self.placed[seat],
            own: self.pos[seat],
            own_red: self.red[seat],
            opp: opp_pos,
            opp_colour,
            over,
        }
    }
}

/// `Score_P` from P's blue and red on the board and Q's blue and red on the board.
pub fn score_formula(g_p: i32, r_p: i32, g_q: i32, r_q: i32) -> i32 {
    2 * (g_p - r_q) - (r_p - g_q)
}

/// Everything one seat may know: the board as its `MOV?` (or, once over, its end message) shows
/// it, in its own frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    pub seat: usize,
    /// Plies played so far.
    pub ply: u32,
    pub max_plies: u32,
    /// Whether this seat's placement is in.
    pub placed: bool,
    /// Own ghosts: own-frame squares or markers.
    pub own: [u8; 8],
    /// Own red mask.
    pub own_red: u8,
    /// Opponent ghosts: squares converted into this seat's frame, or markers.
    pub opp: [u8; 8],
    /// Known opponent colours: captured ghosts, or every ghost once the game is over.
    pub opp_colour: [Option<Colour>; 8],
    pub over: bool,
}

impl View {
    /// The legal moves of this seat in this position.
    pub fn legal_moves(&self) -> MoveList {
        let occ = self
            .own
            .iter()
            .filter(|&&p| p < 36)
            .fold(0u64, |o, &p| o | (1u64 << p));
        moves_for(&self.own, occ, self.own_red)
    }

    /// The 48-character board string (spec §3.5).
    pub fn board(&self) -> String {
        let mut s = String::with_capacity(48);
        let mut push = |p: u8, c: char| {
            if p < 36 {
                s.push((b'0' + p % 6) as char);
                s.push((b'0' + p / 6) as char);
            } else {
                s.push((b'0' + p / 10) as char);
                s.push((b'0' + p % 10) as char);
            }
            s.push(c);
        };
        for g in 0..8 {
            let p = self.own[g];
            let red = self.own_red & (1 << g) != 0;
            let c = match (p < 36, red, p == ESCAPED) {
                (_, _, true) => 'b',
                (true, true, _) => 'R',
                (true, false, _) => 'B',
                (false, true, _) => 'r',
                (false, false, _) => 'b',
            };
            push(p, c);
        }
        for g in 0..8 {
            let p = self.opp[g];
            let c = if p == ESCAPED {
                'b'
            } else {
                match self.opp_colour[g] {
                    Some(Colour::Red) => 'r',
                    Some(Colour::Blue) => 'b',
                    None => 'u',
                }
            };
            push(p, c);
        }
        s
    }
}

/// An action of the in-process interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Place(RedSet),
    Move(Move),
}

impl kakehiki_core::Game for Geister {
    type Action = Action;
    type Observation = View;

    fn num_seats(&self) -> usize {
        2
    }

    fn to_act(&self) -> Vec<usize> {
        if self.end.is_some() {
            Vec::new()
        } else if !(self.placed[0] && self.placed[1]) {
            (0..2).filter(|&s| !self.placed[s]).collect()
        } else {
            vec![self.to_move()]
        }
    }

    fn observe(&self, seat: usize) -> View {
        self.view(seat)
    }

    /// Placement phase: a missing or non-placement action loses (both missing: double forfeit).
    /// Play: `None` or an illegal action is an illegal move under the rule set's policy.
    fn apply(&mut self, actions: &[Option<Action>]) {
        let seats = kakehiki_core::Game::to_act(self);
        if self.end.is_some() {
            return;
        }
        if !(self.placed[0] && self.placed[1]) {
            let mut failed = Vec::new();
            for (i, &seat) in seats.iter().enumerate() {
                match actions.get(i).copied().flatten() {
                    Some(Action::Place(r)) => {
                        let _ = self.place(seat, r);
                    }
                    _ => failed.push(seat),
                }
            }
            match failed.len() {
                0 => {}
                1 => self.forfeit(failed[0], EndReason::SetTimeout),
                _ => self.double_forfeit(),
            }
            return;
        }
        match actions.first().copied().flatten() {
            Some(Action::Move(mv)) if self.play(mv).is_ok() => {}
            _ => {
                self.turn_fault(TurnFault::Illegal);
            }
        }
    }

    /// Win 1, loss 0, draw 1/2 each; a double forfeit scores 0 for both.
    fn outcome(&self) -> Option<kakehiki_core::Outcome> {
        let end = self.end?;
        Some(outcome_of(&end))
    }
}

/// The core outcome of an end: win 1, loss 0, draw 1/2 each, double forfeit 0 each.
pub fn outcome_of(end: &End) -> kakehiki_core::Outcome {
    use kakehiki_core::Score;
    let scores = match end.winner {
        Some(w) => {
            let mut s = vec![Score::from_integer(0); 2];
            s[w] = Score::from_integer(1);
            s
        }
        None if end.reason == EndReason::DoubleForfeit => vec![Score::from_integer(0); 2],
        None => vec![Score::new(1, 2); 2],
    };
    kakehiki_core::Outcome {
        scores,
        winner: end.winner,
    }
}
