//! [`LadderPlay`] on SQLite.

use rusqlite::{params, OptionalExtension, TransactionBehavior};

use super::{err, SqliteStore};
use crate::ladder_play::{
    rating_updates, LadderEntrant, LadderPlay, LadderRating, LadderSeat, LadderState,
};
use crate::{from_db, now_secs, to_db, StoreError};

const SEAT_COLUMNS: &str = "idx, seat, entrant, bot, version, score, place, errors, mu_after, \
                            sigma_after, played_at";

fn seat_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LadderSeat> {
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

fn rating_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LadderRating> {
    Ok(LadderRating {
        entrant: r.get(0)?,
        bot: r.get(1)?,
        version: from_db(r.get(2)?),
        owner: r.get(3)?,
        active: r.get::<_, i64>(4)? != 0,
        mu: r.get(5)?,
        sigma: r.get(6)?,
        games: from_db(r.get(7)?),
        wins: from_db(r.get(8)?),
        errors: from_db(r.get(9)?),
        last_played: r.get(10)?,
    })
}

impl SqliteStore {
    /// Move the rated count from `seq - 1` to `seq` inside `tx`; `false` if it was elsewhere.
    fn bump_rated(
        tx: &rusqlite::Transaction<'_>,
        ladder: &str,
        seq: u64,
    ) -> Result<bool, StoreError> {
        let n = tx
            .execute(
                "UPDATE kk_ladder_state SET rated_seq = ?2 WHERE ladder = ?1 AND rated_seq = ?3",
                params![ladder, to_db(seq), to_db(seq.saturating_sub(1))],
            )
            .map_err(err("rating a ladder match"))?;
        Ok(n == 1 && seq > 0)
    }
}

impl LadderPlay for SqliteStore {
    fn ladder_state(&mut self, ladder: &str) -> Result<LadderState, StoreError> {
        const CONTEXT: &str = "reading the ladder's state";
        let read = |conn: &rusqlite::Connection| {
            conn.query_row(
                "SELECT next_match, rated_seq, frozen FROM kk_ladder_state WHERE ladder = ?1",
                params![ladder],
                |r| {
                    Ok(LadderState {
                        next_match: from_db(r.get(0)?),
                        rated_seq: from_db(r.get(1)?),
                        frozen: r.get::<_, i64>(2)? != 0,
                    })
                },
            )
            .optional()
            .map_err(err(CONTEXT))
        };
        if let Some(state) = read(&self.conn)? {
            return Ok(state);
        }
        self.conn
            .execute(
                "INSERT INTO kk_ladder_state (ladder, next_match, rated_seq, frozen)
                 VALUES (?1, 0, 0, 0) ON CONFLICT (ladder) DO NOTHING",
                params![ladder],
            )
            .map_err(err(CONTEXT))?;
        Ok(read(&self.conn)?.unwrap_or_default())
    }

    fn ladder_set_frozen(&mut self, ladder: &str, frozen: bool) -> Result<(), StoreError> {
        self.ladder_state(ladder)?;
        self.conn
            .execute(
                "UPDATE kk_ladder_state SET frozen = ?2 WHERE ladder = ?1",
                params![ladder, frozen as i64],
            )
            .map_err(err("freezing the ladder"))?;
        Ok(())
    }

    fn ladder_enter(&mut self, ladder: &str, e: &LadderEntrant) -> Result<(), StoreError> {
        const CONTEXT: &str = "entering a bot in the ladder";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        tx.execute(
            "UPDATE kk_ladder_ratings SET active = 0 WHERE ladder = ?1 AND bot = ?2 AND entrant <> ?3",
            params![ladder, e.bot, e.entrant],
        )
        .map_err(err(CONTEXT))?;
        tx.execute(
            "INSERT INTO kk_ladder_ratings
                 (ladder, entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played)
             VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, 0, 0, 0, NULL)
             ON CONFLICT (ladder, entrant) DO UPDATE SET active = 1",
            params![
                ladder,
                e.entrant,
                e.bot,
                to_db(e.version),
                e.owner,
                crate::ladder_play::INITIAL_MU,
                crate::ladder_play::INITIAL_SIGMA
            ],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))
    }

    fn ladder_retire(&mut self, ladder: &str, entrant: &str) -> Result<(), StoreError> {
        self.conn
            .execute(
                "UPDATE kk_ladder_ratings SET active = 0 WHERE ladder = ?1 AND entrant = ?2",
                params![ladder, entrant],
            )
            .map_err(err("retiring a ladder entrant"))?;
        Ok(())
    }

    fn ladder_ratings(
        &mut self,
        ladder: &str,
        active_only: bool,
    ) -> Result<Vec<LadderRating>, StoreError> {
        const CONTEXT: &str = "reading the ladder's ratings";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played
                 FROM kk_ladder_ratings WHERE ladder = ?1 AND (active = 1 OR ?2 = 0)
                 ORDER BY mu - 3.0 * sigma DESC, entrant",
            )
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![ladder, active_only as i64], rating_row)
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_ratings_page(
        &mut self,
        ladder: &str,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<LadderRating>, u64), StoreError> {
        const CONTEXT: &str = "reading a page of the ladder's ratings";
        let page = {
            let mut stmt = self
                .conn
                .prepare_cached(
                    "SELECT entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played
                     FROM kk_ladder_ratings WHERE ladder = ?1 AND active = 1
                     ORDER BY mu - 3.0 * sigma DESC, entrant LIMIT ?2 OFFSET ?3",
                )
                .map_err(err(CONTEXT))?;
            let rows = stmt
                .query_map(
                    params![
                        ladder,
                        to_db(limit.min(i64::MAX as u64)),
                        to_db(offset.min(i64::MAX as u64))
                    ],
                    rating_row,
                )
                .map_err(err(CONTEXT))?;
            rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))?
        };
        let total: i64 = self
            .conn
            .query_row(
                "SELECT COUNT(*) FROM kk_ladder_ratings WHERE ladder = ?1 AND active = 1",
                params![ladder],
                |r| r.get(0),
            )
            .map_err(err(CONTEXT))?;
        Ok((page, from_db(total)))
    }

    fn ladder_bot_rating(
        &mut self,
        ladder: &str,
        bot: &str,
    ) -> Result<Option<(u64, LadderRating)>, StoreError> {
        const CONTEXT: &str = "reading a bot's rating";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT r.entrant, r.bot, r.version, r.owner, r.active, r.mu, r.sigma, r.games,
                        r.wins, r.errors, r.last_played,
                        1 + (SELECT COUNT(*) FROM kk_ladder_ratings o
                             WHERE o.ladder = r.ladder AND o.active = 1
                               AND (o.mu - 3.0 * o.sigma > r.mu - 3.0 * r.sigma
                                    OR (o.mu - 3.0 * o.sigma = r.mu - 3.0 * r.sigma
                                        AND o.entrant < r.entrant)))
                 FROM kk_ladder_ratings r WHERE r.ladder = ?1 AND r.bot = ?2 AND r.active = 1",
            )
            .map_err(err(CONTEXT))?;
        stmt.query_row(params![ladder, bot], |r| {
            Ok((from_db(r.get(11)?), rating_row(r)?))
        })
        .optional()
        .map_err(err(CONTEXT))
    }

    fn ladder_queue(
        &mut self,
        ladder: &str,
        index: u64,
        spec_json: &str,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "queueing a ladder match";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        let moved = tx
            .execute(
                "UPDATE kk_ladder_state SET next_match = ?2 + 1 WHERE ladder = ?1 AND next_match = ?2",
                params![ladder, to_db(index)],
            )
            .map_err(err(CONTEXT))?;
        if moved != 1 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO kk_matches (contest, idx, spec, state) VALUES (?1, ?2, ?3, 'queued')",
            params![
                crate::ladder_play::ladder_contest(ladder),
                to_db(index),
                spec_json
            ],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(true)
    }

    fn ladder_running(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError> {
        const CONTEXT: &str = "listing a ladder's running matches";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT idx, COALESCE(worker, '') FROM kk_matches
                 WHERE state = 'running' AND contest = ?1 ORDER BY idx",
            )
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![crate::ladder_play::ladder_contest(ladder)], |r| {
                Ok((from_db(r.get(0)?), r.get(1)?))
            })
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_open_matches(&mut self, ladder: &str) -> Result<u64, StoreError> {
        self.conn
            .query_row(
                "SELECT COUNT(*) FROM kk_matches
                 WHERE state IN ('queued', 'running') AND contest = ?1",
                params![crate::ladder_play::ladder_contest(ladder)],
                |r| r.get::<_, i64>(0),
            )
            .map(from_db)
            .map_err(err("counting a ladder's open matches"))
    }

    fn ladder_open_specs(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError> {
        const CONTEXT: &str = "listing a ladder's open matches";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT idx, spec FROM kk_matches
                 WHERE state IN ('queued', 'running') AND contest = ?1 ORDER BY idx",
            )
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![crate::ladder_play::ladder_contest(ladder)], |r| {
                Ok((from_db(r.get(0)?), r.get(1)?))
            })
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_cancel(
        &mut self,
        ladder: &str,
        index: u64,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE kk_matches SET state = 'failed', lease_until = NULL, last_error = ?3
                 WHERE contest = ?1 AND idx = ?2 AND state IN ('queued', 'running')",
                params![
                    crate::ladder_play::ladder_contest(ladder),
                    to_db(index),
                    reason
                ],
            )
            .map_err(err("stopping a ladder match"))?;
        Ok(n == 1)
    }

    fn ladder_retired_bots(&mut self, ladder: &str) -> Result<Vec<String>, StoreError> {
        const CONTEXT: &str = "listing a ladder's retired bots";
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name FROM kk_ladder_bots WHERE ladder = ?1 AND retired = 1 ORDER BY name",
            )
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![ladder], |r| r.get(0))
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_rate(
        &mut self,
        ladder: &str,
        seq: u64,
        seats: &[LadderSeat],
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "rating a ladder match";
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err(CONTEXT))?;
        if !Self::bump_rated(&tx, ladder, seq)? {
            return Ok(false);
        }
        let now = seats.first().map(|s| s.played_at).unwrap_or_else(now_secs);
        for (entrant, mu, sigma, won, errors) in rating_updates(seats) {
            tx.execute(
                "UPDATE kk_ladder_ratings SET mu = ?3, sigma = ?4, games = games + 1,
                     wins = wins + ?5, errors = errors + ?6, last_played = ?7
                 WHERE ladder = ?1 AND entrant = ?2",
                params![ladder, entrant, mu, sigma, won as i64, to_db(errors), now],
            )
            .map_err(err(CONTEXT))?;
        }
        for s in seats {
            tx.execute(
                &format!(
                    "INSERT INTO kk_ladder_match_seats (ladder, {SEAT_COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                     ON CONFLICT (ladder, idx, seat) DO NOTHING"
                ),
                params![
                    ladder,
                    to_db(s.index),
                    s.seat as i64,
                    s.entrant,
                    s.bot,
                    to_db(s.version),
                    s.score,
                    to_db(s.place),
                    to_db(s.errors),
                    s.mu_after,
                    s.sigma_after,
                    s.played_at
                ],
            )
            .map_err(err(CONTEXT))?;
        }
        tx.commit().map_err(err(CONTEXT))?;
        Ok(true)
    }

    fn ladder_skip_rating(&mut self, ladder: &str, seq: u64) -> Result<bool, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err("skipping a ladder result"))?;
        let moved = Self::bump_rated(&tx, ladder, seq)?;
        tx.commit().map_err(err("skipping a ladder result"))?;
        Ok(moved)
    }

    fn ladder_bot_seats(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading a bot's ladder matches";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = ?1 AND bot = ?2 AND idx < ?3
                 ORDER BY idx DESC, seat LIMIT ?4"
            ))
            .map_err(err(CONTEXT))?;
        let before = before.map(to_db).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(
                params![ladder, bot, before, limit.min(i64::MAX as usize) as i64],
                seat_row,
            )
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_bot_tables(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading a bot's ladder matches";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = ?1 AND idx IN (
                     SELECT idx FROM kk_ladder_match_seats
                     WHERE ladder = ?1 AND bot = ?2 AND idx < ?3
                     ORDER BY idx DESC LIMIT ?4)
                 ORDER BY idx DESC, seat"
            ))
            .map_err(err(CONTEXT))?;
        let before = before.map(to_db).unwrap_or(i64::MAX);
        let rows = stmt
            .query_map(
                params![ladder, bot, before, limit.min(i64::MAX as usize) as i64],
                seat_row,
            )
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_match_seats(
        &mut self,
        ladder: &str,
        index: u64,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading a ladder match's seats";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = ?1 AND idx = ?2 ORDER BY seat"
            ))
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(params![ladder, to_db(index)], seat_row)
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }

    fn ladder_seats_rated(
        &mut self,
        ladder: &str,
        after: u64,
        upto: u64,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading the seats of newly rated ladder matches";
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = ?1 AND idx IN (
                     SELECT idx FROM kk_results WHERE contest = ?2 AND seq > ?3 AND seq <= ?4)
                 ORDER BY idx, seat"
            ))
            .map_err(err(CONTEXT))?;
        let rows = stmt
            .query_map(
                params![
                    ladder,
                    crate::ladder_play::ladder_contest(ladder),
                    to_db(after),
                    to_db(upto)
                ],
                seat_row,
            )
            .map_err(err(CONTEXT))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(err(CONTEXT))
    }
}
