//! [`LadderPlay`] on PostgreSQL.

use super::{col, err, PgStore};
use crate::ladder_play::{
    ladder_contest, rating_updates, LadderEntrant, LadderPlay, LadderRating, LadderSeat,
    LadderState, INITIAL_MU, INITIAL_SIGMA,
};
use crate::{from_db, now_secs, to_db, StoreError};

const SEAT_COLUMNS: &str = "idx, seat, entrant, bot, version, score, place, errors, mu_after, \
                            sigma_after, played_at";

fn seat_row(r: &postgres::Row, context: &'static str) -> Result<LadderSeat, StoreError> {
    Ok(LadderSeat {
        index: from_db(col(r, 0, context)?),
        seat: from_db(col(r, 1, context)?) as usize,
        entrant: col(r, 2, context)?,
        bot: col(r, 3, context)?,
        version: from_db(col(r, 4, context)?),
        score: col(r, 5, context)?,
        place: from_db(col(r, 6, context)?),
        errors: from_db(col(r, 7, context)?),
        mu_after: col(r, 8, context)?,
        sigma_after: col(r, 9, context)?,
        played_at: col(r, 10, context)?,
    })
}

fn rating_row(r: &postgres::Row, context: &'static str) -> Result<LadderRating, StoreError> {
    Ok(LadderRating {
        entrant: col(r, 0, context)?,
        bot: col(r, 1, context)?,
        version: from_db(col(r, 2, context)?),
        owner: col(r, 3, context)?,
        active: col::<i64>(r, 4, context)? != 0,
        mu: col(r, 5, context)?,
        sigma: col(r, 6, context)?,
        games: from_db(col(r, 7, context)?),
        wins: from_db(col(r, 8, context)?),
        errors: from_db(col(r, 9, context)?),
        last_played: col(r, 10, context)?,
    })
}

/// Move the rated count from `seq - 1` to `seq` inside `tx`; `false` if it was elsewhere.
fn bump_rated(
    tx: &mut postgres::Transaction<'_>,
    ladder: &str,
    seq: u64,
) -> Result<bool, StoreError> {
    let n = tx
        .execute(
            "UPDATE kk_ladder_state SET rated_seq = $2 WHERE ladder = $1 AND rated_seq = $3",
            &[&ladder, &to_db(seq), &to_db(seq.saturating_sub(1))],
        )
        .map_err(err("rating a ladder match"))?;
    Ok(n == 1 && seq > 0)
}

impl LadderPlay for PgStore {
    fn ladder_state(&mut self, ladder: &str) -> Result<LadderState, StoreError> {
        const CONTEXT: &str = "reading the ladder's state";
        const READ: &str =
            "SELECT next_match, rated_seq, frozen FROM kk_ladder_state WHERE ladder = $1";
        let read = self.prepared(READ, CONTEXT)?;
        let mut row = self
            .client
            .query_opt(&read, &[&ladder])
            .map_err(err(CONTEXT))?;
        if row.is_none() {
            self.client
                .execute(
                    "INSERT INTO kk_ladder_state (ladder, next_match, rated_seq, frozen)
                     VALUES ($1, 0, 0, 0) ON CONFLICT (ladder) DO NOTHING",
                    &[&ladder],
                )
                .map_err(err(CONTEXT))?;
            row = self
                .client
                .query_opt(&read, &[&ladder])
                .map_err(err(CONTEXT))?;
        }
        let Some(row) = row else {
            return Ok(LadderState::default());
        };
        Ok(LadderState {
            next_match: from_db(col(&row, 0, CONTEXT)?),
            rated_seq: from_db(col(&row, 1, CONTEXT)?),
            frozen: col::<i64>(&row, 2, CONTEXT)? != 0,
        })
    }

    fn ladder_set_frozen(&mut self, ladder: &str, frozen: bool) -> Result<(), StoreError> {
        self.ladder_state(ladder)?;
        self.client
            .execute(
                "UPDATE kk_ladder_state SET frozen = $2 WHERE ladder = $1",
                &[&ladder, &i64::from(frozen)],
            )
            .map_err(err("freezing the ladder"))?;
        Ok(())
    }

    fn ladder_enter(&mut self, ladder: &str, e: &LadderEntrant) -> Result<(), StoreError> {
        const CONTEXT: &str = "entering a bot in the ladder";
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        tx.execute(
            "UPDATE kk_ladder_ratings SET active = 0
             WHERE ladder = $1 AND bot = $2 AND entrant <> $3",
            &[&ladder, &e.bot, &e.entrant],
        )
        .map_err(err(CONTEXT))?;
        tx.execute(
            "INSERT INTO kk_ladder_ratings
                 (ladder, entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played)
             VALUES ($1, $2, $3, $4, $5, 1, $6, $7, 0, 0, 0, NULL)
             ON CONFLICT (ladder, entrant) DO UPDATE SET active = 1",
            &[
                &ladder,
                &e.entrant,
                &e.bot,
                &to_db(e.version),
                &e.owner,
                &INITIAL_MU,
                &INITIAL_SIGMA,
            ],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))
    }

    fn ladder_retire(&mut self, ladder: &str, entrant: &str) -> Result<(), StoreError> {
        self.client
            .execute(
                "UPDATE kk_ladder_ratings SET active = 0 WHERE ladder = $1 AND entrant = $2",
                &[&ladder, &entrant],
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
        let st = self.prepared(
            "SELECT entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played
             FROM kk_ladder_ratings WHERE ladder = $1 AND (active = 1 OR NOT $2)
             ORDER BY mu - 3.0 * sigma DESC, entrant",
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(&st, &[&ladder, &active_only])
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| rating_row(r, CONTEXT)).collect()
    }

    fn ladder_ratings_page(
        &mut self,
        ladder: &str,
        offset: u64,
        limit: u64,
    ) -> Result<(Vec<LadderRating>, u64), StoreError> {
        const CONTEXT: &str = "reading a page of the ladder's ratings";
        let st = self.prepared(
            "SELECT entrant, bot, version, owner, active, mu, sigma, games, wins, errors, last_played
             FROM kk_ladder_ratings WHERE ladder = $1 AND active = 1
             ORDER BY mu - 3.0 * sigma DESC, entrant LIMIT $2 OFFSET $3",
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(
                &st,
                &[
                    &ladder,
                    &to_db(limit.min(i64::MAX as u64)),
                    &to_db(offset.min(i64::MAX as u64)),
                ],
            )
            .map_err(err(CONTEXT))?;
        let page = rows
            .iter()
            .map(|r| rating_row(r, CONTEXT))
            .collect::<Result<Vec<_>, _>>()?;
        let count = self.prepared(
            "SELECT COUNT(*) FROM kk_ladder_ratings WHERE ladder = $1 AND active = 1",
            CONTEXT,
        )?;
        let total = self
            .client
            .query_one(&count, &[&ladder])
            .map_err(err(CONTEXT))?;
        Ok((page, from_db(col(&total, 0, CONTEXT)?)))
    }

    fn ladder_bot_rating(
        &mut self,
        ladder: &str,
        bot: &str,
    ) -> Result<Option<(u64, LadderRating)>, StoreError> {
        const CONTEXT: &str = "reading a bot's rating";
        let st = self.prepared(
            "SELECT r.entrant, r.bot, r.version, r.owner, r.active, r.mu, r.sigma, r.games,
                        r.wins, r.errors, r.last_played,
                        1 + (SELECT COUNT(*) FROM kk_ladder_ratings o
                             WHERE o.ladder = r.ladder AND o.active = 1
                               AND (o.mu - 3.0 * o.sigma > r.mu - 3.0 * r.sigma
                                    OR (o.mu - 3.0 * o.sigma = r.mu - 3.0 * r.sigma
                                        AND o.entrant < r.entrant)))
                 FROM kk_ladder_ratings r WHERE r.ladder = $1 AND r.bot = $2 AND r.active = 1",
            CONTEXT,
        )?;
        let row = self
            .client
            .query_opt(&st, &[&ladder, &bot])
            .map_err(err(CONTEXT))?;
        row.map(|r| Ok((from_db(col(&r, 11, CONTEXT)?), rating_row(&r, CONTEXT)?)))
            .transpose()
    }

    fn ladder_queue(
        &mut self,
        ladder: &str,
        index: u64,
        spec_json: &str,
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "queueing a ladder match";
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        let moved = tx
            .execute(
                "UPDATE kk_ladder_state SET next_match = $2 + 1 WHERE ladder = $1 AND next_match = $2",
                &[&ladder, &to_db(index)],
            )
            .map_err(err(CONTEXT))?;
        if moved != 1 {
            return Ok(false);
        }
        tx.execute(
            "INSERT INTO kk_matches (contest, idx, spec, state) VALUES ($1, $2, $3, 'queued')",
            &[&ladder_contest(ladder), &to_db(index), &spec_json],
        )
        .map_err(err(CONTEXT))?;
        tx.commit().map_err(err(CONTEXT))?;
        Ok(true)
    }

    fn ladder_running(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError> {
        const CONTEXT: &str = "listing a ladder's running matches";
        let rows = self
            .client
            .query(
                "SELECT idx, COALESCE(worker, '') FROM kk_matches
                 WHERE state = 'running' AND contest = $1 ORDER BY idx",
                &[&ladder_contest(ladder)],
            )
            .map_err(err(CONTEXT))?;
        rows.iter()
            .map(|r| Ok((from_db(col(r, 0, CONTEXT)?), col(r, 1, CONTEXT)?)))
            .collect()
    }

    fn ladder_open_matches(&mut self, ladder: &str) -> Result<u64, StoreError> {
        const CONTEXT: &str = "counting a ladder's open matches";
        let row = self
            .client
            .query_one(
                "SELECT COUNT(*) FROM kk_matches
                 WHERE state IN ('queued', 'running') AND contest = $1",
                &[&ladder_contest(ladder)],
            )
            .map_err(err(CONTEXT))?;
        Ok(from_db(col(&row, 0, CONTEXT)?))
    }

    fn ladder_open_specs(&mut self, ladder: &str) -> Result<Vec<(u64, String)>, StoreError> {
        const CONTEXT: &str = "listing a ladder's open matches";
        let rows = self
            .client
            .query(
                "SELECT idx, spec FROM kk_matches
                 WHERE state IN ('queued', 'running') AND contest = $1 ORDER BY idx",
                &[&ladder_contest(ladder)],
            )
            .map_err(err(CONTEXT))?;
        rows.iter()
            .map(|r| Ok((from_db(col(r, 0, CONTEXT)?), col(r, 1, CONTEXT)?)))
            .collect()
    }

    fn ladder_cancel(
        &mut self,
        ladder: &str,
        index: u64,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let n = self
            .client
            .execute(
                "UPDATE kk_matches SET state = 'failed', lease_until = NULL, last_error = $3
                 WHERE contest = $1 AND idx = $2 AND state IN ('queued', 'running')",
                &[&ladder_contest(ladder), &to_db(index), &reason],
            )
            .map_err(err("stopping a ladder match"))?;
        Ok(n == 1)
    }

    fn ladder_retired_bots(&mut self, ladder: &str) -> Result<Vec<String>, StoreError> {
        const CONTEXT: &str = "listing a ladder's retired bots";
        let rows = self
            .client
            .query(
                "SELECT name FROM kk_ladder_bots WHERE ladder = $1 AND retired = 1 ORDER BY name",
                &[&ladder],
            )
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| col(r, 0, CONTEXT)).collect()
    }

    fn ladder_rate(
        &mut self,
        ladder: &str,
        seq: u64,
        seats: &[LadderSeat],
    ) -> Result<bool, StoreError> {
        const CONTEXT: &str = "rating a ladder match";
        let update = self.prepared(
            "UPDATE kk_ladder_ratings SET mu = $3, sigma = $4, games = games + 1,
                 wins = wins + $5, errors = errors + $6, last_played = $7
             WHERE ladder = $1 AND entrant = $2",
            CONTEXT,
        )?;
        let insert = self.prepared(
            &format!(
                "INSERT INTO kk_ladder_match_seats (ladder, {SEAT_COLUMNS})
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                 ON CONFLICT (ladder, idx, seat) DO NOTHING"
            ),
            CONTEXT,
        )?;
        let mut tx = self.client.transaction().map_err(err(CONTEXT))?;
        if !bump_rated(&mut tx, ladder, seq)? {
            return Ok(false);
        }
        let now = seats.first().map(|s| s.played_at).unwrap_or_else(now_secs);
        for (entrant, mu, sigma, won, errors) in rating_updates(seats) {
            tx.execute(
                &update,
                &[
                    &ladder,
                    &entrant,
                    &mu,
                    &sigma,
                    &(won as i64),
                    &to_db(errors),
                    &now,
                ],
            )
            .map_err(err(CONTEXT))?;
        }
        for s in seats {
            tx.execute(
                &insert,
                &[
                    &ladder,
                    &to_db(s.index),
                    &(s.seat as i64),
                    &s.entrant,
                    &s.bot,
                    &to_db(s.version),
                    &s.score,
                    &to_db(s.place),
                    &to_db(s.errors),
                    &s.mu_after,
                    &s.sigma_after,
                    &s.played_at,
                ],
            )
            .map_err(err(CONTEXT))?;
        }
        tx.commit().map_err(err(CONTEXT))?;
        Ok(true)
    }

    fn ladder_skip_rating(&mut self, ladder: &str, seq: u64) -> Result<bool, StoreError> {
        let mut tx = self
            .client
            .transaction()
            .map_err(err("skipping a ladder result"))?;
        let moved = bump_rated(&mut tx, ladder, seq)?;
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
        let before = before.map(to_db).unwrap_or(i64::MAX);
        let limit = limit.min(i64::MAX as usize) as i64;
        let st = self.prepared(
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND bot = $2 AND idx < $3
                 ORDER BY idx DESC, seat LIMIT $4"
            ),
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(&st, &[&ladder, &bot, &before, &limit])
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| seat_row(r, CONTEXT)).collect()
    }

    fn ladder_bot_tables(
        &mut self,
        ladder: &str,
        bot: &str,
        before: Option<u64>,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading a bot's ladder matches";
        let before = before.map(to_db).unwrap_or(i64::MAX);
        let limit = limit.min(i64::MAX as usize) as i64;
        let st = self.prepared(
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND idx IN (
                     SELECT idx FROM kk_ladder_match_seats
                     WHERE ladder = $1 AND bot = $2 AND idx < $3
                     ORDER BY idx DESC LIMIT $4)
                 ORDER BY idx DESC, seat"
            ),
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(&st, &[&ladder, &bot, &before, &limit])
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| seat_row(r, CONTEXT)).collect()
    }

    fn ladder_match_seats(
        &mut self,
        ladder: &str,
        index: u64,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading a ladder match's seats";
        let st = self.prepared(
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND idx = $2 ORDER BY seat"
            ),
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(&st, &[&ladder, &to_db(index)])
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| seat_row(r, CONTEXT)).collect()
    }

    fn ladder_seats_rated(
        &mut self,
        ladder: &str,
        after: u64,
        upto: u64,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        const CONTEXT: &str = "reading the seats of newly rated ladder matches";
        let st = self.prepared(
            &format!(
                "SELECT {SEAT_COLUMNS} FROM kk_ladder_match_seats
                 WHERE ladder = $1 AND idx IN (
                     SELECT idx FROM kk_results WHERE contest = $2 AND seq > $3 AND seq <= $4)
                 ORDER BY idx, seat"
            ),
            CONTEXT,
        )?;
        let rows = self
            .client
            .query(
                &st,
                &[
                    &ladder,
                    &ladder_contest(ladder),
                    &to_db(after),
                    &to_db(upto),
                ],
            )
            .map_err(err(CONTEXT))?;
        rows.iter().map(|r| seat_row(r, CONTEXT)).collect()
    }
}
