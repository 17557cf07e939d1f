//! The ladder's play in the store: which match to queue next, each entrant's Weng-Lin rating,
//! kept incrementally (one rated result at a time, in storing order), and one row per seat of
//! each rated match, so a leaderboard or a bot's page reads a few rows and recomputes nothing.
//!
//! A ladder's matches and results live in the contest tables under the contest row
//! [`ladder_contest`]`(NAME)` (fingerprint [`LADDER_FINGERPRINT`]), so the existing queue, workers
//! and leases play them.

use crate::StoreError;

/// The fingerprint of a ladder's contest row: contest runners skip such rows (their definition is
/// not a contest file).
pub const LADDER_FINGERPRINT: &str = "kakehiki-ladder";

/// The contest row under which ladder `ladder`'s matches are queued and stored.
pub fn ladder_contest(ladder: &str) -> String {
    format!("ladder/{ladder}")
}

/// The entrant name of a bot version (`alice@v3`).
pub fn version_entrant(bot: &str, version: u64) -> String {
    format!("{bot}@v{version}")
}

/// Initial Weng-Lin rating (μ 25, σ 25/3), as `skillratings` starts every player.
pub const INITIAL_MU: f64 = 25.0;
pub const INITIAL_SIGMA: f64 = 25.0 / 3.0;

/// Who takes part in a ladder: a bot version or a built-in bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LadderEntrant {
    /// `BOT@vN`, or `builtin:NAME`.
    pub entrant: String,
    /// The bot's name (`builtin:NAME` for a built-in).
    pub bot: String,
    /// The version (0 for a built-in).
    pub version: u64,
    /// The owning account (`builtin` for a built-in).
    pub owner: String,
}

/// An entrant's rating and record.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderRating {
    pub entrant: String,
    pub bot: String,
    pub version: u64,
    pub owner: String,
    /// Matched (the newest active version of its bot, or a built-in of the ladder).
    pub active: bool,
    pub mu: f64,
    pub sigma: f64,
    pub games: u64,
    /// Games it finished first in (alone or tied).
    pub wins: u64,
    /// Seat errors over all its games (timeouts, crashes, malformed replies).
    pub errors: u64,
    /// When it last played (seconds since the Unix epoch).
    pub last_played: Option<i64>,
}

impl LadderRating {
    /// The conservative estimate leaderboards rank by: μ − 3σ.
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }
}

/// Where a ladder's play stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LadderState {
    /// The index of the next match to queue.
    pub next_match: u64,
    /// Results of the ladder's contest row (by storing sequence number) applied to ratings.
    pub rated_seq: u64,
    pub frozen: bool,
}

/// One seat of a rated match, with the rating its entrant had after it.
#[derive(Debug, Clone, PartialEq)]
pub struct LadderSeat {
    pub index: u64,
    pub seat: usize,
    pub entrant: String,
    pub bot: String,
    pub version: u64,
    pub score: f64,
    /// 1 for the best score (ties share a place).
    pub place: u64,
    /// Seat errors in this match.
    pub errors: u64,
    pub mu_after: f64,
    pub sigma_after: f64,
    /// Seconds since the Unix epoch.
    pub played_at: i64,
}

/// The ladder's play, on both backends with the same meaning.
pub trait LadderPlay {
    /// The ladder's state, created (nothing queued, nothing rated) on first use.
    fn ladder_state(&mut self, ladder: &str) -> Result<LadderState, StoreError>;

    /// Freeze the ladder (its matchmaker queues no more matches; queued ones are still played
    /// and rated) or thaw it.
    fn ladder_set_frozen(&mut self, ladder: &str, frozen: bool) -> Result<(), StoreError>;

    /// Make `entrant` take part: its rating row is created (initial rating) if it has none and
    /// marked active; every other entrant of the same bot stops being active (an upload replaces
    /// its previous version; its history stays).
    fn ladder_enter(&mut self, ladder: &str, entrant: &LadderEntrant) -> Result<(), StoreError>;

    /// Stop matching `entrant` (a built-in the ladder file no longer names).
    fn ladder_retire(&mut self, ladder: &str, entrant: &str) -> Result<(), StoreError>;

    /// The ratings of the ladder's entrants (only the active ones with `active_only`), best
    /// first by μ − 3σ, then by entrant name.
    fn ladder_ratings(
        &mut self,
        ladder: &str,
        active_only: bool,
    ) -> Result<Vec<LadderRating>, StoreError>;

    /// One page of the leaderboard: at most `limit` active entrants from position `offset` (0 is
    /// the best) in the order of [`LadderPlay::ladder_ratings`], and how many active entrants
    /// there are. A page reads only its rows, not the whole ladder.
    fn ladder_ratings_page(
        &mut self,
        ladder: &str,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<LadderRating>, u64), StoreError>;

    /// The active entrant of `bot` (its newest active version, or the built-in) with its rank on
    /// the leaderboard (1 is best; the order of [`LadderPlay::ladder_ratings`]).
    fn ladder_bot_rating(
        &mut self,
        ladder: &str,
        bot: &str,
    ) -> Result<Option<(u64, LadderRating)>, StoreError>;

    /// Queue match `index` of the ladder with `spec_json`, and move the ladder's next match past
    /// it, in one transaction. Returns `false` (queueing nothing) when `index` is not the ladder's
    /// next match (another matchmaker got there first).
    fn ladder_queue(
        &mut self,
        ladder: &str,
        index: u64,
        spec_json: &str,
    ) -> Result<bool, StoreError>;

    /// The ladder's running matches: index and the worker playing it, by index.
    fn ladder_running(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError>;

    /// How many of the ladder's matches are queued or running.
    fn ladder_open_matches(&mut self, ladder: &str) -> Result<u64, StoreError>;

    /// The ladder's queued and running matches: index and queued spec (a match job's JSON), by
    /// index.
    fn ladder_open_specs(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError>;

    /// Stop match `index` of the ladder if it is queued or running: it becomes failed with
    /// `reason` as its error, no worker claims it again, and a worker playing it loses its lease
    /// at its next heartbeat (and stops the match). `false` when it was not open.
    fn ladder_cancel(&mut self, ladder: &str, index: u64, reason: &str)
        -> Result<bool, StoreError>;

    /// The ladder's retired bots, by name.
    fn ladder_retired_bots(&mut self, ladder: &str) -> Result<Vec<String>, StoreError>;

    /// Apply the result stored with sequence number `seq` (the next one to rate) to the ratings:
    /// each seat's rating row gets its new μ and σ, one more game, its win and its errors, and
    /// the seats are recorded, in one transaction. An entrant sitting in several seats (a
    /// built-in filling a table) is updated once, from its first seat. Returns `false`, changing
    /// nothing, when `seq` is not the next result to rate.
    fn ladder_rate(
        &mut self,
        ladder: &str,
        seq: u64,
        seats: &[LadderSeat],
    ) -> Result<bool, StoreError>;

    /// Move the ladder's rated count past result `seq` without rating it (a result that cannot
    /// be rated: its entrants are unknown, its report unreadable). Same guard as `ladder_rate`.
    fn ladder_skip_rating(&mut self, ladder: &str, seq: u64) -> Result<bool, StoreError>;

    /// The seats `bot` (any of its versions) played in rated matches, newest first, with match
    /// index below `before` (all with `None`), at most `limit`.
    fn ladder_bot_seats(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError>;

    /// Every seat of the rated matches [`LadderPlay::ladder_bot_seats`] lists for the same
    /// arguments, newest match first, each match's seats in seat order: one query for a bot's
    /// page.
    fn ladder_bot_tables(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError>;

    /// Every seat of the matches whose results were rated with sequence numbers in
    /// (`after`, `upto`], by match index and seat: what the ratings moved by since `after` (a
    /// page cache kept current by it).
    fn ladder_seats_rated(
        &mut self,
        ladder: &str,
        after: u64,
        upto: u64,
    ) -> Result<Vec<LadderSeat>, StoreError>;

    /// Every seat of rated match `index`, in seat order (empty if it is not rated).
    fn ladder_match_seats(
        &mut self,
        ladder: &str,
        index: u64,
    ) -> Result<Vec<LadderSeat>, StoreError>;
}

/// The rating row of each distinct entrant of `seats`, from its first seat: (entrant, mu,
/// sigma, won, errors over all its seats).
pub(crate) fn rating_updates(seats: &[LadderSeat]) -> Vec<(&str, f64, f64, bool, u64)> {
    let mut out: Vec<(&str, f64, f64, bool, u64)> = Vec::new();
    for s in seats {
        if let Some(row) = out.iter_mut().find(|r| r.0 == s.entrant) {
            row.3 |= s.place == 1;
            row.4 += s.errors;
        } else {
            out.push((
                &s.entrant,
                s.mu_after,
                s.sigma_after,
                s.place == 1,
                s.errors,
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(entrant: &str, place: u64, errors: u64, mu: f64) -> LadderSeat {
        LadderSeat {
            index: 0,
            seat: 0,
            entrant: entrant.into(),
            bot: entrant.into(),
            version: 0,
            score: 0.0,
            place,
            errors,
            mu_after: mu,
            sigma_after: 1.0,
            played_at: 0,
        }
    }

    #[test]
    fn an_entrant_in_several_seats_is_updated_once_from_its_first_seat() {
        let seats = [
            seat("builtin:random", 3, 1, 20.0),
            seat("a@v1", 1, 0, 30.0),
            seat("builtin:random", 1, 2, 21.0),
        ];
        let u = rating_updates(&seats);
        assert_eq!(u.len(), 2);
        assert_eq!(u[0], ("builtin:random", 20.0, 1.0, true, 3));
        assert_eq!(u[1], ("a@v1", 30.0, 1.0, true, 0));
    }

    #[test]
    fn entrant_names() {
        assert_eq!(ladder_contest("g"), "ladder/g");
        assert_eq!(version_entrant("alice", 3), "alice@v3");
    }
}
