//! Rock-paper-scissors over pipes: the tiny example game of `docs/adding-a-game.md`.
//!
//! Two seats, `rounds` rounds. Each round both seats get one line, `ROUND <n> <rounds> <mine>
//! <theirs>` (the two throws of the previous round, `-` for none), and answer `R`, `P` or `S`
//! on one line. A bad or missing answer loses the round (both bad: nobody wins it). After the
//! last round each seat is told `END <its wins> <the other's wins>`. The seat with more rounds
//! won wins the match.
//!
//! This crate is the game's rules and codec: pure functions, no processes, clocks or I/O. The
//! referee's driver (`crates/referee/src/games/rps.rs`) binds it to seats. The game is built only
//! for tests (the referee's `example-game` feature) and never listed to users.

use kakehiki_core::{Chance, Dynamics, GameType, Information, Outcome, Score, SeedRng, Transport};
use rand::Rng;

/// Built-in bots: `random` throws uniformly from the match seed, `rock` always throws rock.
pub const BOT_NAMES: &[&str] = &["random", "rock"];

// ANCHOR: game-type
/// The `rps` game type.
pub static RPS_TYPE: GameType = GameType {
    name: "rps",
    title: "Rock-paper-scissors (a test-only example game)",
    min_seats: 2,
    max_seats: 2,
    default_seats: 2,
    dynamics: Dynamics::Simultaneous,
    information: Information::Imperfect,
    chance: Chance::None,
    transports: &[Transport::Stdio],
    rule_sets: &["standard"],
    builtin_bots: BOT_NAMES,
};
// ANCHOR_END: game-type

/// Rounds of a match unless the option `rounds` says otherwise.
pub const DEFAULT_ROUNDS: u32 = 5;
/// The most rounds a match may have.
pub const MAX_ROUNDS: u32 = 10_000;

/// One throw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Throw {
    Rock,
    Paper,
    Scissors,
}

impl Throw {
    /// Its letter on the wire.
    pub fn letter(self) -> char {
        match self {
            Throw::Rock => 'R',
            Throw::Paper => 'P',
            Throw::Scissors => 'S',
        }
    }

    /// Whether it beats `other`.
    pub fn beats(self, other: Throw) -> bool {
        matches!(
            (self, other),
            (Throw::Rock, Throw::Scissors)
                | (Throw::Paper, Throw::Rock)
                | (Throw::Scissors, Throw::Paper)
        )
    }
}

// ANCHOR: codec
/// The line a seat gets in round `round` (from 1): its own and the other's previous throw.
pub fn request(round: u32, rounds: u32, mine: Option<Throw>, theirs: Option<Throw>) -> Vec<u8> {
    let l = |t: Option<Throw>| t.map_or('-', Throw::letter);
    format!("ROUND {round} {rounds} {} {}\n", l(mine), l(theirs)).into_bytes()
}

/// A reply read as a throw: `R`, `P` or `S` (surrounding blanks and a CR are ignored), or why
/// it is not one.
pub fn parse_reply(reply: &[u8]) -> Result<Throw, String> {
    match std::str::from_utf8(reply).map(str::trim) {
        Ok("R") => Ok(Throw::Rock),
        Ok("P") => Ok(Throw::Paper),
        Ok("S") => Ok(Throw::Scissors),
        Ok(other) => Err(format!("expected R, P or S, got {other:?}")),
        Err(_) => Err("expected R, P or S, got bytes that are not UTF-8".into()),
    }
}

/// The message after the last round.
pub fn end_message(wins: [u32; 2], seat: usize) -> Vec<u8> {
    format!("END {} {}\n", wins[seat], wins[1 - seat]).into_bytes()
}
// ANCHOR_END: codec

/// The seat that won a round, if one did: a missing throw loses to any throw.
pub fn round_winner(throws: [Option<Throw>; 2]) -> Option<usize> {
    match throws {
        [Some(a), Some(b)] if a.beats(b) => Some(0),
        [Some(a), Some(b)] if b.beats(a) => Some(1),
        [Some(_), None] => Some(0),
        [None, Some(_)] => Some(1),
        _ => None,
    }
}

/// The match's outcome from the rounds each seat won: one point per round won.
pub fn outcome(wins: [u32; 2]) -> Outcome {
    Outcome::by_max(
        wins.iter()
            .map(|&w| Score::from_integer(w.into()))
            .collect(),
    )
}

/// A built-in bot's reply, in the wire format a process would use.
pub fn builtin_reply(name: &str, rng: &mut SeedRng) -> Vec<u8> {
    let t = match name {
        "rock" => Throw::Rock,
        _ => [Throw::Rock, Throw::Paper, Throw::Scissors][rng.gen_range(0..3)],
    };
    t.letter().to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_parse_and_rounds_score() {
        assert_eq!(parse_reply(b"R"), Ok(Throw::Rock));
        assert_eq!(parse_reply(b" S\r"), Ok(Throw::Scissors));
        assert!(parse_reply(b"rock").unwrap_err().contains("\"rock\""));
        assert!(parse_reply(&[0xff]).unwrap_err().contains("UTF-8"));
        assert_eq!(
            round_winner([Some(Throw::Paper), Some(Throw::Rock)]),
            Some(0)
        );
        assert_eq!(
            round_winner([Some(Throw::Paper), Some(Throw::Scissors)]),
            Some(1)
        );
        assert_eq!(round_winner([Some(Throw::Paper), Some(Throw::Paper)]), None);
        assert_eq!(round_winner([None, Some(Throw::Rock)]), Some(1));
        assert_eq!(round_winner([None, None]), None);
        assert_eq!(
            request(2, 5, Some(Throw::Rock), None),
            b"ROUND 2 5 R -\n".to_vec()
        );
        assert_eq!(end_message([3, 1], 1), b"END 1 3\n".to_vec());
        assert_eq!(outcome([3, 1]).winner, Some(0));
        assert_eq!(outcome([2, 2]).winner, None);
    }

    #[test]
    fn builtin_bots_answer_on_the_wire() {
        let mut rng = kakehiki_core::seeded_rng(1, "seat-0");
        assert_eq!(builtin_reply("rock", &mut rng), b"R".to_vec());
        for _ in 0..20 {
            assert!(parse_reply(&builtin_reply("random", &mut rng)).is_ok());
        }
    }
}
