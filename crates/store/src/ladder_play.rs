//! The ladder's play in the store: which match to queue next, each entrant's Weng-Lin rating,
//! kept incrementally (one rated result at a time, in storing order), and one row per seat of
//! each rated match, so a leaderboard or a bot's page reads a few rows and recomputes nothing.
//!
//! A ladder's matches and results live in the contest tables under the contest row
//! [`ladder_contest`]`(NAME)` (fingerprint [`LADDER_FINGERPRINT`]), so the existing queue, workers
//! and leases play them.

use crate::db::{args, Conn, Db, Row, Tx};
use crate::{from_db, now_secs, to_db, StoreError};

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

/// The bot and version of an entrant name ([`version_entrant`]'s inverse: `alice@v3` is
/// `alice`, version 3; a bot's name has no `@`); a built-in (`builtin:NAME`) is itself, with no
/// version.
pub fn entrant_bot(entrant: &str) -> (&str, Option<u64>) {
    match entrant.rsplit_once("@v") {
        Some((bot, v)) if !entrant.starts_with("builtin:") => (bot, v.parse().ok()),
        _ => (entrant, None),
    }
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

    /// Every entrant of `bot`, active or not: each of its versions that took part (or the
    /// built-in), newest version first, for the comparison of its versions on its page.
    fn ladder_bot_ratings(
        &mut self,
        ladder: &str,
        bot: &str,
    ) -> Result<Vec<LadderRating>, StoreError>;

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

const SEAT_COLUMNS: &str = "idx, seat, entrant, bot, version, score, place, errors, mu_after, \
                            sigma_after, played_at";

fn seat_from(r: &Row<'_>) -> Result<LadderSeat, StoreError> {
    Ok(LadderSeat {
        index: from_db(r.get(0)?),
        seat: from_db(r.get(1)?) as usize,
        entrant: r.get(2)?,
        bot: r.get(3)?,
        version: from_db(r.get(4)?),
        score: r.get(5)?,
        place: from_db(r.get(6)?),
        errors: from_db(r.get(7)?),
        mu_after: r.get(8)?,
        sigma_after: r.get(9)?,
        played_at: r.get(10)?,
    })
}

const RATING_COLUMNS: &str =
    "entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played";

fn rating_from(r: &Row<'_>) -> Result<LadderRating, StoreError> {
    Ok(LadderRating {
        entrant: r.get(0)?,
        bot: r.get(1)?,
        version: from_db(r.get(2)?),
        owner: r.get(3)?,
        active: r.get::<i64>(4)? != 0,
        mu: r.get(5)?,
        sigma: r.get(6)?,
        games: from_db(r.get(7)?),
        wins: from_db(r.get(8)?),
        errors: from_db(r.get(9)?),
        last_played: r.get(10)?,
    })
}

/// Move the rated count from `seq - 1` to `seq` inside `tx`; `false` if it was elsewhere.
fn bump_rated(tx: &mut impl Conn, ladder: &str, seq: u64) -> Result<bool, StoreError> {
    let n = tx.execute(
        "rating a ladder match",
        "UPDATE kk_ladder_state SET rated_seq = $2 WHERE ladder = $1 AND rated_seq = $3",
        args![ladder, to_db(seq), to_db(seq.saturating_sub(1))],
    )?;
    Ok(n == 1 && seq > 0)
}

/// A row limit or offset as the database takes it.
fn count_db(n: u64) -> i64 {
    to_db(n.min(i64::MAX as u64))
}

impl<D: Db> LadderPlay for D {
    fn ladder_state(&mut self, ladder: &str) -> Result<LadderState, StoreError> {
        const CONTEXT: &str = "reading the ladder's state";
        let read = |db: &mut D| {
            db.query_opt(
                CONTEXT,
                "SELECT next_match, rated_seq, frozen FROM kk_ladder_state WHERE ladder = $1",
                args![ladder],
                |r| {
                    Ok(LadderState {
                        next_match: from_db(r.get(0)?),
                        rated_seq: from_db(r.get(1)?),
                        frozen: r.get::<i64>(2)? != 0,
                    })
                },
            )
        };
        if let Some(state) = read(self)? {
            return Ok(state);
        }
        self.execute(
            CONTEXT,
            "INSERT INTO kk_ladder_state (ladder, next_match, rated_seq, frozen)
             VALUES ($1, 0, 0, 0) ON CONFLICT (ladder) DO NOTHING",
            args![ladder],
        )?;
        Ok(read(self)?.unwrap_or_default())
    }

    fn ladder_set_frozen(&mut self, ladder: &str, frozen: bool) -> Result<(), StoreError> {
        self.ladder_state(ladder)?;
        self.execute(
            "freezing the ladder",
            "UPDATE kk_ladder_state SET frozen = $2 WHERE ladder = $1",
            args![ladder, frozen],
        )?;
        Ok(())
    }

    fn ladder_enter(&mut self, ladder: &str, e: &LadderEntrant) -> Result<(), StoreError> {
        const CONTEXT: &str = "entering a bot in the ladder";
        let mut tx = self.begin(CONTEXT)?;
        tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_ratings SET active = 0
             WHERE ladder = $1 AND bot = $2 AND entrant <> $3",
            args![ladder, &e.bot, &e.entrant],
        )?;
        tx.execute(
            CONTEXT,
            "INSERT INTO kk_ladder_ratings
                 (ladder, entrant, bot, version, owner, active, mu, sigma, games, wins, errors,
                  last_played)
             VALUES ($1, $2, $3, $4, $5, 1, $6, $7, 0, 0, 0, NULL)
             ON CONFLICT (ladder, entrant) DO UPDATE SET active = 1",
            args![
                ladder,
                &e.entrant,
                &e.bot,
                to_db(e.version),
                &e.owner,
                INITIAL_MU,
                INITIAL_SIGMA
            ],
        )?;
        tx.commit(CONTEXT)
    }

    fn ladder_retire(&mut self, ladder: &str, entrant: &str) -> Result<(), StoreError> {
        self.execute(
            "retiring a ladder entrant",
            "UPDATE kk_ladder_ratings SET active = 0 WHERE ladder = $1 AND entrant = $2",
            args![ladder, entrant],
        )?;
        Ok(())
    }

    fn ladder_ratings(
        &mut self,
        ladder: &str,
        active_only: bool,
    ) -> Result<Vec<LadderRating>, StoreError> {
        self.query(
            "reading the ladder's ratings",
            &format!(
                "SELECT {RATING_COLUMNS}
                 FROM kk_ladder_ratings WHERE ladder = $1 AND (active = 1 OR $2 = 0)
                 ORDER BY mu - 3.0 * sigma DESC, entrant"
            ),
            args![ladder, active_only],
            rating_from,
        )
    }

    fn ladder_bot_ratings(
        &mut self,
        ladder: &str,
        bot: &str,
    ) -> Result<Vec<LadderRating>, StoreError> {
        self.query(
            "reading a bot's versions' ratings",
            &format!(
                "SELECT {RATING_COLUMNS}
                 FROM kk_ladder_ratings WHERE ladder = $1 AND bot = $2
                 ORDER BY version DESC, entrant"
            ),
            args![ladder, bot],
            rating_from,
        )
    }

    fn ladder_ratings_page(
        &mut self,
        ladder: &str,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<LadderRating>, u64), StoreError> {
        const CONTEXT: &str = "reading a page of the ladder's ratings";
        let page = self.query(
            CONTEXT,
            &format!(
                "SELECT {RATING_COLUMNS}
                 FROM kk_ladder_ratings WHERE ladder = $1 AND active = 1
                 ORDER BY mu - 3.0 * sigma DESC, entrant LIMIT $2 OFFSET $3"
            ),
            args![ladder, count_db(limit), count_db(offset)],
            rating_from,
        )?;
        let total = self.query_one(
            CONTEXT,
            "SELECT COUNT(*) FROM kk_ladder_ratings WHERE ladder = $1 AND active = 1",
            args![ladder],
            |r| r.get(0),
        )?;
        Ok((page, from_db(total)))
    }

    fn ladder_bot_rating(
        &mut self,
        ladder: &str,
        bot: &str,
    ) -> Result<Option<(u64, LadderRating)>, StoreError> {
        self.query_opt(
            "reading a bot's rating",
            "SELECT r.entrant, r.bot, r.version, r.owner, r.active, r.mu, r.sigma, r.games,
                    r.wins, r.errors, r.last_played,
                    1 + (SELECT COUNT(*) FROM kk_ladder_ratings o
                         WHERE o.ladder = r.ladder AND o.active = 1
                           AND (o.mu - 3.0 * o.sigma > r.mu - 3.0 * r.sigma
                                OR (o.mu - 3.0 * o.sigma = r.mu - 3.0 * r.sigma
                                    AND o.entrant < r.entrant)))
             FROM kk_ladder_ratings r WHERE r.ladder = $1 AND r.bot = $2 AND r.active = 1",
            args![ladder, bot],
            |r| Ok((from_db(r.get(11)?), rating_from(r)?)),
        )
    }

    fn ladder_queue(
        &mut self,
        ladder: &str,
        index: u64,
        spec_json: &str,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "queueing a ladder match";
        let mut tx = self.begin(CONTEXT)?;
        let moved = tx.execute(
            CONTEXT,
            "UPDATE kk_ladder_state SET next_match = $2 + 1 WHERE ladder = $1 AND next_match = $2",
            args![ladder, to_db(index)],
        )?;
        if moved != 1 {
            return Ok(false);
        }
        tx.execute(
            CONTEXT,
            "INSERT INTO kk_matches (contest, idx, spec, state) VALUES ($1, $2, $3, 'queued')",
            args![&ladder_contest(ladder), to_db(index), spec_json],
        )?;
        tx.commit(CONTEXT)?;
        Ok(true)
    }

    fn ladder_running(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError> {
        self.query(
            "listing a ladder's running matches",
            "SELECT idx, COALESCE(worker, '') FROM kk_matches
             WHERE state = 'running' AND contest = $1 ORDER BY idx",
            args![&ladder_contest(ladder)],
            |r| Ok((from_db(r.get(0)?), r.get(1)?)),
        )
    }

    fn ladder_open_matches(&mut self, ladder: &str) -> Result<u64, StoreError> {
        self.query_one(
            "counting a ladder's open matches",
            "SELECT COUNT(*) FROM kk_matches
             WHERE state IN ('queued', 'running') AND contest = $1",
            args![&ladder_contest(ladder)],
            |r| r.get(0).map(from_db),
        )
    }

    fn ladder_open_specs(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError> {
        self.query(
            "listing a ladder's open matches",
            "SELECT idx, spec FROM kk_matches
             WHERE state IN ('queued', 'running') AND contest = $1 ORDER BY idx",
            args![&ladder_contest(ladder)],
            |r| Ok((from_db(r.get(0)?), r.get(1)?)),
        )
    }

    fn ladder_cancel(
        &mut self,
        ladder: &str,
        index: u64,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let n = self.execute(
            "stopping a ladder match",
            "UPDATE kk_matches SET state = 'failed', lease_until = NULL, last_error = $3
             WHERE contest = $1 AND idx = $2 AND state IN ('queued', 'running')",
            args![&ladder_contest(ladder), to_db(index), reason],
        )?;
        Ok(n == 1)
    }

    fn ladder_retired_bots(&mut self, ladder: &str) -> Result<Vec<String>, StoreError> {
        self.query(
            "listing a ladder's retired bots",
            "SELECT name FROM kk_ladder_bots WHERE ladder = $1 AND retired = 1 ORDER BY name",
            args![ladder],
            |r| r.get(0),
        )
    }

    fn ladder_rate(
        &mut self,
        ladder: &str,
        seq: u64,
        seats: &[LadderSeat],
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "rating a ladder match";
        let mut tx = self.begin(CONTEXT)?;
        if !bump_rated(&mut tx, ladder, seq)? {
            return Ok(false);
        }
        let now = seats.first().map(|s| s.played_at).unwrap_or_else(now_secs);
        for (entrant, mu, sigma, won, errors) in rating_updates(seats) {
            tx.execute(
                CONTEXT,
                "UPDATE kk_ladder_ratings SET mu = $3, sigma = $4, games = games + 1,
                     wins = wins + $5, errors = errors + $6, last_played = $7
                 WHERE ladder = $1 AND entrant = $2",
                args![ladder, entrant, mu, sigma, won, to_db(errors), now],
            )?;
        }
        for s in seats {
            tx.execute(
                CONTEXT,
                &format!(
                    "INSERT INTO kk_ladder_match_seats (ladder, {SEAT_COLUMNS})
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                     ON CONFLICT (ladder, idx, seat) DO NOTHING"
                ),
                args![
                    ladder,
                    to_db(s.index),
                    s.seat as i64,
                    &s.entrant,
                    &s.bot,
                    to_db(s.version),
                    s.score,
                    to_db(s.place),
                    to_db(s.errors),
                    s.mu_after,
                    s.sigma_after,
                    s.played_at
                ],
            )?;
        }
        tx.commit(CONTEXT)?;
        Ok(true)
    }

    fn ladder_skip_rating(&mut self, ladder: &str, seq: u64) -> Result<bool, StoreError> {
        const CONTEXT: &str = "skipping a ladder result";
        let mut tx = self.begin(CONTEXT)?;
        let moved = bump_rated(&mut tx, ladder, seq)?;
        tx.commit(CONTEXT)?;
        Ok(moved)
    }

    fn ladder_bot_seats(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        self.query(
            "reading a bot's ladder matches",
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND bot = $2 AND idx < $3
                 ORDER BY idx DESC, seat LIMIT $4"
            ),
            args![
                ladder,
                bot,
                before.map(to_db).unwrap_or(i64::MAX),
                count_db(limit as u64)
            ],
            seat_from,
        )
    }

    fn ladder_bot_tables(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        self.query(
            "reading a bot's ladder matches",
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND idx IN (
                     SELECT idx FROM kk_ladder_match_seats
                     WHERE ladder = $1 AND bot = $2 AND idx < $3
                     ORDER BY idx DESC LIMIT $4)
                 ORDER BY idx DESC, seat"
            ),
            args![
                ladder,
                bot,
                before.map(to_db).unwrap_or(i64::MAX),
                count_db(limit as u64)
            ],
            seat_from,
        )
    }

    fn ladder_seats_rated(
        &mut self,
        ladder: &str,
        after: u64,
        upto: u64,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        self.query(
            "reading the seats of newly rated ladder matches",
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND idx IN (
                     SELECT idx FROM kk_results WHERE contest = $2 AND seq > $3 AND seq <= $4)
                 ORDER BY idx, seat"
            ),
            args![ladder, &ladder_contest(ladder), to_db(after), to_db(upto)],
            seat_from,
        )
    }

    fn ladder_match_seats(
        &mut self,
        ladder: &str,
        index: u64,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        self.query(
            "reading a ladder match's seats",
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND idx = $2 ORDER BY seat"
            ),
            args![ladder, to_db(index)],
            seat_from,
        )
    }
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
        assert_eq!(entrant_bot("alice@v3"), ("alice", Some(3)));
        assert_eq!(entrant_bot(&version_entrant("b-2", 12)), ("b-2", Some(12)));
        assert_eq!(entrant_bot("builtin:strong"), ("builtin:strong", None));
    }
}
