//! Playing a ladder around the clock: the matchmaker's loop body, over the store.
//!
//! [`Matchmaker::step`] does, each time it is called:
//!
//! 1. **Sync** the entrants: the ladder's built-in bots and the newest active version of each
//!    contestant's bot take part (a new version retires the previous one); a built-in the
//!    ladder file no longer names is retired.
//! 2. **Rate** the results stored since the last step, one at a time in storing order, each in
//!    its own transaction with the ladder's rated count ([`kakehiki_store::LadderPlay::ladder_rate`]): a
//!    matchmaker killed at any moment neither loses nor double-counts a result.
//! 3. **Queue** matches ([`crate::matchmaking::choose`]) until the ladder has `open` matches
//!    queued or running, at most `budget` new ones. Each match is queued with its index in one
//!    transaction ([`kakehiki_store::LadderPlay::ladder_queue`]), and workers play it from the store's queue like
//!    any contest match.

use std::collections::{BTreeMap, HashMap};

use kakehiki_contest::ratings::{places, weng_lin_game, weng_lin_team_game, WengLinRating};
use kakehiki_contest::MatchJob;
use kakehiki_core::{MatchReport, SeatSpec, SeatSpecError};
use kakehiki_store::{
    ladder_contest, version_entrant, ContestRow, LadderEntrant, LadderRating, LadderSeat, Store,
    StoreError, LADDER_FINGERPRINT,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::matchmaking::{choose_with, Candidate};
use crate::LadderConfig;

/// Why a step of the matchmaker failed.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the run line {run:?} of language {language:?} cannot be split: {reason}")]
    BadRunLine {
        language: String,
        run: String,
        reason: String,
    },
}

/// What one step did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Step {
    /// Results applied to ratings.
    pub rated: u64,
    /// Results that could not be rated (unknown entrants, unreadable report), skipped.
    pub skipped: u64,
    /// Matches queued.
    pub queued: u64,
    /// Matches queued or running after the step.
    pub open: u64,
}

/// The ladder's match rate (`matches_per_hour`) as a token bucket: a token every
/// 3600 / rate seconds, at most `burst` kept, full at the start.
#[derive(Debug, Clone)]
pub struct MatchRate {
    per_token_s: f64,
    burst: f64,
    tokens: f64,
    last: std::time::Instant,
}

impl MatchRate {
    pub fn new(matches_per_hour: u64, burst: u64, now: std::time::Instant) -> MatchRate {
        MatchRate {
            per_token_s: 3600.0 / matches_per_hour.max(1) as f64,
            burst: burst.max(1) as f64,
            tokens: burst.max(1) as f64,
            last: now,
        }
    }

    /// How many matches may be queued now.
    pub fn available(&mut self, now: std::time::Instant) -> u64 {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed / self.per_token_s).min(self.burst);
        self.last = now;
        self.tokens.floor() as u64
    }

    /// `n` matches were queued.
    pub fn spend(&mut self, n: u64) {
        self.tokens = (self.tokens - n as f64).max(0.0);
    }
}

/// How a built-in's entrant is named.
pub fn builtin_entrant(name: &str) -> String {
    format!("builtin:{name}")
}

/// The matchmaker of one ladder.
pub struct Matchmaker {
    config: LadderConfig,
    seats: usize,
    rng: StdRng,
    /// Matches queued by this matchmaker and not yet rated, per entrant.
    pending: HashMap<String, u32>,
    /// The language of each active bot version's entrant.
    languages: HashMap<String, String>,
    registered: bool,
    /// Every entrant's rating as the store has it (active or not), kept up to date by
    /// [`Matchmaker::rate`] and read again by each sync.
    ratings: BTreeMap<String, LadderRating>,
    /// When the entrants were last synced.
    synced: Option<std::time::Instant>,
}

/// How often the entrants are read again from the store (a new version takes part within it).
pub const SYNC_EVERY: std::time::Duration = std::time::Duration::from_secs(1);

impl Matchmaker {
    /// A matchmaker for `config`'s ladder with tables of `seats` seats and its random choices
    /// drawn from `seed`. A bot's seat names its program in the store
    /// ([`crate::program::program_ref`]); the worker that plays the match unpacks it.
    pub fn new(config: LadderConfig, seats: usize, seed: u64) -> Matchmaker {
        Matchmaker {
            config,
            seats,
            rng: StdRng::seed_from_u64(seed),
            pending: HashMap::new(),
            languages: HashMap::new(),
            registered: false,
            ratings: BTreeMap::new(),
            synced: None,
        }
    }

    fn contest(&self) -> String {
        ladder_contest(&self.config.name)
    }

    /// Every entrant's rating as this matchmaker has it, by entrant: the store's as of the last
    /// read, with the results it rated since applied.
    pub fn ratings(&self) -> &BTreeMap<String, LadderRating> {
        &self.ratings
    }

    /// Sync, rate and queue (see the module's documentation).
    pub fn step(
        &mut self,
        store: &mut dyn Store,
        open: u64,
        budget: u64,
    ) -> Result<Step, PlayError> {
        let mut step = Step::default();
        if self.synced.is_none_or(|t| t.elapsed() >= SYNC_EVERY) {
            self.sync(store)?;
        }
        let (rated, skipped) = self.rate(store)?;
        step.rated = rated;
        step.skipped = skipped;
        let state = store.ladder_state(&self.config.name)?;
        let mut now_open = store.ladder_open_matches(&self.config.name)?;
        if now_open == 0 {
            // Everything queued was played or failed: nothing is pending any more.
            self.pending.clear();
        }
        if !state.frozen {
            let active: Vec<LadderRating> = self
                .ratings
                .values()
                .filter(|r| r.active)
                .cloned()
                .collect();
            let contestants = active.iter().filter(|r| r.version != 0).count();
            let share = worker_share(open, self.seats, contestants);
            while now_open < open && step.queued < budget {
                if !self.queue_one(store, &active, share)? {
                    break;
                }
                step.queued += 1;
                now_open += 1;
            }
        }
        step.open = now_open;
        Ok(step)
    }

    /// Make the built-ins of the ladder file and the newest active version of each bot take
    /// part, and retire the built-ins it no longer names.
    pub fn sync(&mut self, store: &mut dyn Store) -> Result<(), PlayError> {
        let ladder = self.config.name.clone();
        if !self.registered {
            store.register_contest(&ContestRow {
                name: self.contest(),
                fingerprint: LADDER_FINGERPRINT.into(),
                definition: serde_json_definition(&self.config),
            })?;
            store.ladder_state(&ladder)?;
            self.registered = true;
        }
        let ratings = store.ladder_ratings(&ladder, true)?;
        let active: std::collections::HashSet<&str> =
            ratings.iter().map(|r| r.entrant.as_str()).collect();
        let mut enter = Vec::new();
        for b in &self.config.builtins {
            let entrant = builtin_entrant(b);
            if !active.contains(entrant.as_str()) {
                enter.push(LadderEntrant {
                    entrant: entrant.clone(),
                    bot: entrant,
                    version: 0,
                    owner: "builtin".into(),
                });
            }
        }
        let mut retire = Vec::new();
        for r in &ratings {
            if r.version == 0
                && r.entrant.starts_with("builtin:")
                && !self
                    .config
                    .builtins
                    .iter()
                    .any(|b| builtin_entrant(b) == r.entrant)
            {
                retire.push(r.entrant.clone());
            }
        }
        self.languages.clear();
        // Bots with a version played.
        let mut played_bots = std::collections::HashSet::new();
        for v in store.active_bot_versions(&ladder)? {
            played_bots.insert(v.bot.clone());
            let entrant = version_entrant(&v.bot, v.version);
            if !active.contains(entrant.as_str()) {
                enter.push(LadderEntrant {
                    entrant: entrant.clone(),
                    bot: v.bot.clone(),
                    version: v.version,
                    owner: v.owner.clone(),
                });
            }
            self.languages.insert(entrant, v.language);
        }
        // A version no longer among those played is matched no more; its rating and matches
        // stay. When its bot has no version played at all (retired, or its owner's account
        // disabled, by an organiser), its open matches stop too.
        let mut stop = std::collections::HashSet::new();
        for r in &ratings {
            if r.version != 0 && !self.languages.contains_key(&r.entrant) {
                retire.push(r.entrant.clone());
                if !played_bots.contains(&r.bot) {
                    stop.insert(r.entrant.clone());
                }
            }
        }
        for e in &enter {
            store.ladder_enter(&ladder, e)?;
        }
        for e in &retire {
            store.ladder_retire(&ladder, e)?;
        }
        if !stop.is_empty() {
            self.stop_matches_of(store, &stop)?;
        }
        self.reload(store)?;
        self.synced = Some(std::time::Instant::now());
        Ok(())
    }

    /// Stop every queued or running match with one of `entrants` in it
    /// ([`kakehiki_store::LadderPlay::ladder_cancel`]): it is recorded failed with the reason, never rated; a
    /// worker playing it stops at its next heartbeat. Returns how many were stopped.
    pub fn stop_matches_of(
        &mut self,
        store: &mut dyn Store,
        entrants: &std::collections::HashSet<String>,
    ) -> Result<u64, PlayError> {
        let ladder = self.config.name.clone();
        let mut stopped = 0;
        for (index, spec) in store.ladder_open_specs(&ladder)? {
            let Ok(job) = serde_json::from_str::<MatchJob>(&spec) else {
                continue;
            };
            let Some(who) = job.entrants.iter().find(|e| entrants.contains(*e)) else {
                continue;
            };
            let reason = format!(
                "stopped unplayed: {who} is no longer played (its bot retired, or its account \
                 disabled, by an organiser)"
            );
            if store.ladder_cancel(&ladder, index, &reason)? {
                stopped += 1;
                tracing::info!("ladder {ladder}: match {index} {reason}");
                let mut seen = std::collections::HashSet::new();
                for e in &job.entrants {
                    if seen.insert(e) {
                        if let Some(p) = self.pending.get_mut(e) {
                            *p = p.saturating_sub(1);
                        }
                    }
                }
            }
        }
        Ok(stopped)
    }

    /// Read every entrant's rating again.
    fn reload(&mut self, store: &mut dyn Store) -> Result<(), PlayError> {
        self.ratings = store
            .ladder_ratings(&self.config.name, false)?
            .into_iter()
            .map(|r| (r.entrant.clone(), r))
            .collect();
        Ok(())
    }

    /// Apply every stored result not yet rated, in storing order. Returns (rated, skipped).
    pub fn rate(&mut self, store: &mut dyn Store) -> Result<(u64, u64), PlayError> {
        let ladder = self.config.name.clone();
        let state = store.ladder_state(&ladder)?;
        let new = store.results_since(&self.contest(), state.rated_seq)?;
        if new.is_empty() {
            return Ok((0, 0));
        }
        if new
            .iter()
            .any(|(_, r)| r.entrants.iter().any(|e| !self.ratings.contains_key(e)))
        {
            // An entrant entered since the last read (by another matchmaker, or just now).
            self.reload(store)?;
        }
        let ratings = &mut self.ratings;
        let (mut rated, mut skipped, mut stale) = (0, 0, false);
        for (seq, result) in new {
            let seats =
                match rated_seats(ratings, &result.entrants, &result.report_json, result.index) {
                    Ok(s) => s,
                    Err(why) => {
                        tracing::warn!(
                            "ladder {ladder}: match {} cannot be rated: {why}",
                            result.index
                        );
                        if store.ladder_skip_rating(&ladder, seq)? {
                            skipped += 1;
                        }
                        continue;
                    }
                };
            if store.ladder_rate(&ladder, seq, &seats)? {
                rated += 1;
                // Every seat of an entrant carries its one rating after ([`rated_seats`]), which
                // the store applied once: so does the cache, from its first seat.
                let mut seen = std::collections::HashSet::new();
                for s in &seats {
                    if seen.insert(s.entrant.clone()) {
                        if let Some(r) = ratings.get_mut(&s.entrant) {
                            r.mu = s.mu_after;
                            r.sigma = s.sigma_after;
                            r.games += 1;
                            r.last_played = Some(s.played_at);
                        }
                        if let Some(p) = self.pending.get_mut(&s.entrant) {
                            *p = p.saturating_sub(1);
                        }
                    }
                }
            } else {
                // Rated by someone else: the cached ratings are behind the store's.
                stale = true;
            }
        }
        if stale {
            self.reload(store)?;
        }
        Ok((rated, skipped))
    }

    /// Queue one match among the active entrants; `false` when no table can be filled.
    fn queue_one(
        &mut self,
        store: &mut dyn Store,
        ratings: &[LadderRating],
        share: u32,
    ) -> Result<bool, PlayError> {
        // Versions whose program is not known (retired between two reads) are left out, and so
        // are bots already in their share of the open matches.
        let pending = |r: &LadderRating| self.pending.get(&r.entrant).copied().unwrap_or(0);
        let entrants: Vec<&LadderRating> = ratings
            .iter()
            .filter(|r| r.version == 0 || self.languages.contains_key(&r.entrant))
            .filter(|r| r.version == 0 || pending(r) < share)
            .collect();
        if entrants.iter().all(|r| r.version == 0) && ratings.iter().any(|r| r.version != 0) {
            // Every contestant is in its share: built-ins alone would only wait with them.
            return Ok(false);
        }
        let cands: Vec<Candidate> = entrants
            .iter()
            .map(|r| Candidate {
                entrant: r.entrant.clone(),
                mu: r.mu,
                sigma: r.sigma,
                games: r.games,
                builtin: r.version == 0,
                pending: self.pending.get(&r.entrant).copied().unwrap_or(0),
            })
            .collect();
        let Some(chosen) = choose_with(&cands, self.seats, self.config.copies, &mut self.rng)
        else {
            return Ok(false);
        };
        let index = store.ladder_state(&self.config.name)?.next_match;
        let seed: u64 = self.rng.gen();
        let mut seats = Vec::new();
        let mut names = Vec::new();
        let mut dirs = Vec::new();
        for &i in &chosen {
            let r = entrants[i];
            names.push(r.entrant.clone());
            let language = self.languages.get(&r.entrant).map(String::as_str);
            let (seat, dir) = entrant_seat(&self.config, r, language)?;
            seats.push(seat);
            dirs.push(dir);
        }
        let job = ladder_job(
            &self.config,
            self.contest(),
            index,
            seed,
            seats,
            names.clone(),
            dirs,
        );
        if store.ladder_queue(&self.config.name, index, &job.to_json())? {
            let mut seen = std::collections::HashSet::new();
            for n in names {
                if seen.insert(n.clone()) {
                    *self.pending.entry(n).or_insert(0) += 1;
                }
            }
        }
        Ok(true)
    }
}

/// The seat of entrant `r` as the ladder's matches have it: a built-in, or its version's program
/// (in `language`) under the ladder's transport (`cmd:`, `tcp-cmd:`, ...), with its folder as a
/// reference to the program in the store ([`crate::program::program_ref`]).
fn entrant_seat(
    config: &LadderConfig,
    r: &LadderRating,
    language: Option<&str>,
) -> Result<(SeatSpec, Option<String>), PlayError> {
    if r.version == 0 {
        let name = r.entrant.strip_prefix("builtin:").unwrap_or(&r.entrant);
        return Ok((SeatSpec::Builtin(name.to_string()), None));
    }
    let language = language.unwrap_or_default();
    let run = config
        .recipe(language)
        .map(|rc| rc.run.clone())
        .unwrap_or_default();
    let seat = config.transport.seat(&run);
    let spec: SeatSpec = seat
        .parse()
        .map_err(|e: SeatSpecError| PlayError::BadRunLine {
            language: language.to_string(),
            run: run.clone(),
            reason: e.to_string(),
        })?;
    let dir = crate::program::program_ref(&config.name, &r.bot, r.version);
    Ok((spec, Some(dir)))
}

/// A match of the ladder's settings (rule set, options, limits, sandbox) with these seats.
fn ladder_job(
    config: &LadderConfig,
    contest: String,
    index: u64,
    seed: u64,
    seats: Vec<SeatSpec>,
    entrants: Vec<String>,
    dirs: Vec<Option<String>>,
) -> MatchJob {
    MatchJob {
        contest,
        index,
        game: config.game.clone(),
        rules: Some(config.rules.clone()),
        seed,
        seats,
        entrants,
        options: config.options.clone(),
        timeout_s: config.match_timeout_s,
        seat_dirs: if dirs.iter().any(Option::is_some) {
            dirs
        } else {
            Vec::new()
        },
        seat_env: Vec::new(),
        sandbox: config.sandbox.clone(),
        cpu_millis: config.cpu_millis,
        // The ladder's seeds are always secret: drawn fresh when the match is played.
        public_seed: false,
        thinking_s: config.thinking_seconds,
    }
}

/// Why a person cannot play a bot of the ladder.
#[derive(Debug, thiserror::Error)]
pub enum PersonError {
    #[error("the ladder has no bot {0:?} that plays now")]
    NoSuchBot(String),
    #[error(transparent)]
    Play(#[from] PlayError),
}

/// An unrated match in which a person (seat 0, `human`) plays `bot`'s active version (or the
/// built-in of that name) in every other of the table's `seats` seats, under the ladder's
/// settings: match `index` of `contest` (never the ladder's own, whose matches are rated).
pub fn person_job(
    config: &LadderConfig,
    store: &mut dyn Store,
    bot: &str,
    seats: usize,
    contest: String,
    index: u64,
    seed: u64,
) -> Result<MatchJob, PersonError> {
    let missing = || PersonError::NoSuchBot(bot.to_string());
    let (_, r) = store
        .ladder_bot_rating(&config.name, bot)
        .map_err(PlayError::from)?
        .ok_or_else(missing)?;
    if !r.active {
        return Err(missing());
    }
    let language = match r.version {
        0 => None,
        v => Some(
            store
                .bot_versions(&config.name, &r.bot)
                .map_err(PlayError::from)?
                .into_iter()
                .find(|a| a.version == v)
                .ok_or_else(missing)?
                .language,
        ),
    };
    let (seat, dir) = entrant_seat(config, &r, language.as_deref())?;
    let n = seats.max(2);
    let mut specs = vec![SeatSpec::Human];
    let mut names = vec!["you".to_string()];
    let mut dirs = vec![None];
    for _ in 1..n {
        specs.push(seat.clone());
        names.push(r.entrant.clone());
        dirs.push(dir.clone());
    }
    Ok(ladder_job(config, contest, index, seed, specs, names, dirs))
}

/// How many of the `open` matches (tables of `seats` seats) one of `contestants` bots may be in
/// at once: its share of the seats, half of them each (a table of two contestants seats two),
/// at least one. A bot that makes its matches last (legal but slow moves) thus holds at most its
/// share of the workers, and the others' matches go on.
pub fn worker_share(open: u64, seats: usize, contestants: usize) -> u32 {
    let seats_open = open.saturating_mul(seats as u64);
    let per = seats_open.div_ceil(2 * contestants.max(1) as u64);
    u32::try_from(per.max(1)).unwrap_or(u32::MAX)
}

/// The contest row's definition of a ladder: its name and game (for people reading the store).
fn serde_json_definition(config: &LadderConfig) -> String {
    serde_json::json!({"ladder": config.name, "game": config.game, "rules": config.rules})
        .to_string()
}

/// The rated seats of a stored result: each seat's place by score, its errors and its
/// entrant's Weng-Lin rating after the match.
///
/// When every seat of the report names its side (a string `team`, as Werewolf's seats do), the
/// match is rated as a team game ([`weng_lin_team_game`]): each side one player of its seats'
/// mean rating, ranked by its seats' score (its best, should they differ), its change shared
/// out to its seats and the table's mean change given back. Otherwise, or with one
/// side only, each seat is rated on its own by its score ([`weng_lin_game`]). An entrant in
/// several seats is then rated once: its rating before plus the mean of its seats' changes in
/// μ, with the mean of their σ after, recorded in every seat of it. Places stay each seat's
/// own.
pub fn rated_seats(
    ratings: &BTreeMap<String, LadderRating>,
    entrants: &[String],
    report_json: &str,
    index: u64,
) -> Result<Vec<LadderSeat>, String> {
    let report: MatchReport =
        serde_json::from_str(report_json).map_err(|e| format!("report is not valid JSON: {e}"))?;
    if report.scores.len() != entrants.len() {
        return Err(format!(
            "{} entrants but {} scores",
            entrants.len(),
            report.scores.len()
        ));
    }
    let before: Vec<WengLinRating> = entrants
        .iter()
        .map(|e| {
            ratings
                .get(e)
                .map(|r| WengLinRating {
                    rating: r.mu,
                    uncertainty: r.sigma,
                })
                .ok_or_else(|| format!("unknown entrant {e:?}"))
        })
        .collect::<Result<_, _>>()?;
    let teams: Option<Vec<&str>> = if report.seats.len() == entrants.len() {
        report
            .seats
            .iter()
            .map(|s| s.extra.get("team").and_then(serde_json::Value::as_str))
            .collect()
    } else {
        None
    };
    let mut after = match &teams {
        Some(teams) => weng_lin_team_game(&before, &report.scores, teams),
        None => weng_lin_game(&before, &report.scores),
    };
    one_rating_per_entrant(entrants, &before, &mut after);
    let place = places(&report.scores);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    Ok(entrants
        .iter()
        .enumerate()
        .map(|(seat, e)| {
            let r = &ratings[e];
            let a = after.get(seat).copied().unwrap_or(before[seat]);
            LadderSeat {
                index,
                seat,
                entrant: e.clone(),
                bot: r.bot.clone(),
                version: r.version,
                score: report.scores[seat],
                place: place[seat] as u64,
                errors: report.seats.get(seat).map_or(0, |s| s.faults() as u64),
                mu_after: a.rating,
                sigma_after: a.uncertainty,
                played_at: now,
            }
        })
        .collect())
}

/// Make the seats of an entrant sitting in several seats of one match (a built-in filling a
/// table, or copies of one bot) carry one rating after: its rating before plus the mean of its
/// seats' changes in μ, and the mean of its seats' σ after. Each seat is a separate result of
/// the same player; the mean counts the match as one game, which is what its `games` counts,
/// where the sum would count it once per seat (a built-in with a seat on each side would move
/// by two correlated results). An entrant in one seat keeps that seat's rating exactly.
fn one_rating_per_entrant(
    entrants: &[String],
    before: &[WengLinRating],
    after: &mut [WengLinRating],
) {
    if before.len() != entrants.len() || after.len() != entrants.len() {
        return;
    }
    for (first, e) in entrants.iter().enumerate() {
        if entrants[..first].contains(e) {
            continue;
        }
        let seats: Vec<usize> = (first..entrants.len())
            .filter(|&i| entrants[i] == *e)
            .collect();
        if seats.len() < 2 {
            continue;
        }
        let n = seats.len() as f64;
        let was = before[first].rating;
        let dmu = seats.iter().map(|&i| after[i].rating - was).sum::<f64>() / n;
        let sigma = seats.iter().map(|&i| after[i].uncertainty).sum::<f64>() / n;
        for &i in &seats {
            after[i] = WengLinRating {
                rating: was + dmu,
                uncertainty: sigma,
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Ratings of entrants named by `mus`' keys, each with that μ and the initial σ.
    fn ratings_of(mus: &[(&str, f64)]) -> BTreeMap<String, LadderRating> {
        mus.iter()
            .map(|&(e, mu)| {
                let r = LadderRating {
                    entrant: e.into(),
                    bot: e.into(),
                    version: 0,
                    owner: "builtin".into(),
                    active: true,
                    mu,
                    sigma: kakehiki_store::INITIAL_SIGMA,
                    games: 0,
                    wins: 0,
                    errors: 0,
                    last_played: None,
                };
                (e.to_string(), r)
            })
            .collect()
    }

    /// A report's JSON: seat `i` scores `scores[i]` and has `team` `teams[i]` when given (any JSON
    /// value, to try odd ones).
    fn report(scores: &[f64], teams: Option<&[serde_json::Value]>) -> String {
        let seats: Vec<serde_json::Value> = (0..scores.len())
            .map(|i| {
                let mut seat = serde_json::json!({"spec": "builtin:x", "errors": []});
                if let Some(t) = teams.and_then(|t| t.get(i)) {
                    seat["team"] = t.clone();
                }
                seat
            })
            .collect();
        serde_json::json!({
            "game": "werewolf", "rules": "aiwolf-0.6", "seed": 1, "scores": scores,
            "scores_exact": scores.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            "winner": null, "seats": seats,
        })
        .to_string()
    }

    fn sides(teams: &[&str]) -> Vec<serde_json::Value> {
        teams.iter().map(|t| serde_json::json!(t)).collect()
    }

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|e| e.to_string()).collect()
    }

    /// μ after of each seat of `report_json` rated with `ratings`.
    fn mus_after(
        ratings: &BTreeMap<String, LadderRating>,
        entrants: &[String],
        report_json: &str,
    ) -> Vec<f64> {
        rated_seats(ratings, entrants, report_json, 0)
            .unwrap()
            .iter()
            .map(|s| s.mu_after)
            .collect()
    }

    /// Five seats in two sides, three villagers winning: every villager gains the same, every
    /// werewolf loses the same, and each seat keeps its own place.
    #[test]
    fn a_werewolf_match_is_rated_by_sides() {
        let mu = kakehiki_store::INITIAL_MU;
        let ratings = ratings_of(&[("a", mu), ("b", mu), ("c", mu), ("d", mu), ("e", mu)]);
        let entrants = names(&["a", "b", "c", "d", "e"]);
        let teams = sides(&["VILLAGER", "VILLAGER", "WEREWOLF", "VILLAGER", "WEREWOLF"]);
        let json = report(&[1.0, 1.0, 0.0, 1.0, 0.0], Some(&teams));
        let seats = rated_seats(&ratings, &entrants, &json, 7).unwrap();
        for s in &seats {
            if s.score == 1.0 {
                assert!(s.mu_after > mu, "{seats:?}");
                assert_eq!(s.place, 1);
            } else {
                assert!(s.mu_after < mu, "{seats:?}");
                assert_eq!(s.place, 4);
            }
            assert!(s.sigma_after < kakehiki_store::INITIAL_SIGMA);
        }
        assert_eq!(seats[0].mu_after, seats[3].mu_after);
        assert_eq!(seats[2].mu_after, seats[4].mu_after);
        // Not the seat-by-seat numbers: the sides' game is one even game of two players (whose
        // change each villager shares, giving back the table's mean), not three single winners
        // over two, so each villager gains less.
        let alone = mus_after(
            &ratings,
            &entrants,
            &report(&[1.0, 1.0, 0.0, 1.0, 0.0], None),
        );
        assert!(
            seats[0].mu_after - mu < alone[0] - mu,
            "{seats:?} {alone:?}"
        );
    }

    /// A strong side beating a weak one moves every rating less than the weak side's upset.
    #[test]
    fn an_upset_of_the_sides_moves_ratings_more_than_the_expected_result() {
        let ratings = ratings_of(&[
            ("v1", 32.0),
            ("v2", 31.0),
            ("v3", 30.0),
            ("w1", 20.0),
            ("w2", 18.0),
        ]);
        let before = [32.0, 31.0, 30.0, 20.0, 18.0];
        let entrants = names(&["v1", "v2", "v3", "w1", "w2"]);
        let teams = sides(&["VILLAGER", "VILLAGER", "VILLAGER", "WEREWOLF", "WEREWOLF"]);
        let expected = mus_after(
            &ratings,
            &entrants,
            &report(&[1.0, 1.0, 1.0, 0.0, 0.0], Some(&teams)),
        );
        let upset = mus_after(
            &ratings,
            &entrants,
            &report(&[0.0, 0.0, 0.0, 1.0, 1.0], Some(&teams)),
        );
        for i in 0..5 {
            let (small, large) = (
                (expected[i] - before[i]).abs(),
                (upset[i] - before[i]).abs(),
            );
            assert!(small < large, "seat {i}: {expected:?} against {upset:?}");
        }
    }

    /// Without a `team` string on every seat (Geister, NAC, Diplomacy; or odd values), each seat
    /// is rated on its own by its score, exactly as [`weng_lin_game`] rates it.
    #[test]
    fn a_report_without_teams_is_rated_seat_by_seat() {
        let ratings = ratings_of(&[("a", 27.0), ("b", 25.0), ("c", 24.0), ("d", 20.0)]);
        let entrants = names(&["a", "b", "c", "d"]);
        let scores = [3.0, 1.0, 2.0, 0.0];
        let before: Vec<WengLinRating> = entrants
            .iter()
            .map(|e| WengLinRating {
                rating: ratings[e].mu,
                uncertainty: ratings[e].sigma,
            })
            .collect();
        let seat_by_seat: Vec<f64> = weng_lin_game(&before, &scores)
            .iter()
            .map(|r| r.rating)
            .collect();
        let odd: [Option<Vec<serde_json::Value>>; 5] = [
            None,
            // Not every seat has one.
            Some(sides(&["VILLAGER", "WEREWOLF"])),
            // Not strings.
            Some(vec![
                serde_json::json!(1),
                serde_json::json!(2),
                serde_json::json!(1),
                serde_json::json!(2),
            ]),
            Some(vec![serde_json::Value::Null; 4]),
            // One team only says nothing about sides.
            Some(sides(&["VILLAGER"; 4])),
        ];
        for teams in &odd {
            let json = report(&scores, teams.as_deref());
            assert_eq!(
                mus_after(&ratings, &entrants, &json),
                seat_by_seat,
                "{teams:?}"
            );
        }
        // A team of every seat is the same game.
        let json = report(&scores, Some(&sides(&["1", "2", "3", "4"])));
        assert_eq!(mus_after(&ratings, &entrants, &json), seat_by_seat);
    }

    /// A side whose seats do not share a score is ranked by its best seat: a villager that
    /// scored 0 with its side winning (a forfeit) moves as its side does.
    #[test]
    fn a_side_is_ranked_by_its_best_seat() {
        let mu = kakehiki_store::INITIAL_MU;
        let ratings = ratings_of(&[("a", mu), ("b", mu), ("c", mu), ("d", mu), ("e", mu)]);
        let entrants = names(&["a", "b", "c", "d", "e"]);
        let teams = sides(&["VILLAGER", "VILLAGER", "WEREWOLF", "VILLAGER", "WEREWOLF"]);
        let shared = mus_after(
            &ratings,
            &entrants,
            &report(&[1.0, 1.0, 0.0, 1.0, 0.0], Some(&teams)),
        );
        let seats = rated_seats(
            &ratings,
            &entrants,
            &report(&[1.0, 0.0, 0.0, 1.0, 0.0], Some(&teams)),
            0,
        )
        .unwrap();
        assert_eq!(seats.iter().map(|s| s.mu_after).collect::<Vec<_>>(), shared);
        // Its place is still its own.
        assert_eq!(seats[1].place, 3);
    }

    /// An entrant in three seats gets one rating after, in every seat: its rating before plus the
    /// mean of its seats' changes, and the mean of their σ after. The other entrants keep their
    /// seat's numbers.
    #[test]
    fn an_entrant_in_several_seats_is_rated_once() {
        let ratings = ratings_of(&[("a", 28.0), ("b", 22.0), ("builtin:sample", 25.0)]);
        let s = "builtin:sample";
        let entrants = names(&["a", s, "b", s, s]);
        let scores = [1.0, 1.0, 0.0, 0.0, 1.0];
        let teams = sides(&["VILLAGER", "VILLAGER", "WEREWOLF", "WEREWOLF", "VILLAGER"]);
        for teams in [None, Some(&teams[..])] {
            let before: Vec<WengLinRating> = entrants
                .iter()
                .map(|e| WengLinRating {
                    rating: ratings[e].mu,
                    uncertainty: ratings[e].sigma,
                })
                .collect();
            let each = match teams {
                Some(t) => {
                    let t: Vec<&str> = t.iter().map(|v| v.as_str().unwrap()).collect();
                    weng_lin_team_game(&before, &scores, &t)
                }
                None => weng_lin_game(&before, &scores),
            };
            let seats = rated_seats(&ratings, &entrants, &report(&scores, teams), 0).unwrap();
            let mine = [1, 3, 4];
            let dmu = mine.iter().map(|&i| each[i].rating - 25.0).sum::<f64>() / 3.0;
            let sigma = mine.iter().map(|&i| each[i].uncertainty).sum::<f64>() / 3.0;
            for i in mine {
                assert_eq!(seats[i].mu_after, 25.0 + dmu, "{teams:?}");
                assert_eq!(seats[i].sigma_after, sigma);
            }
            // Two winning seats and one losing: up, by less than a winning seat alone.
            assert!(25.0 < seats[1].mu_after && seats[1].mu_after < each[1].rating);
            for i in [0, 2] {
                assert_eq!(seats[i].mu_after, each[i].rating);
                assert_eq!(seats[i].sigma_after, each[i].uncertainty);
            }
            // Places stay each seat's own.
            assert_eq!(
                seats.iter().map(|s| s.place).collect::<Vec<_>>(),
                [1, 1, 4, 4, 1]
            );
        }
    }

    #[test]
    fn a_bot_gets_its_share_of_the_open_matches() {
        // Geister, 4 open matches: two contestants get 2 each, eight get 1 each.
        assert_eq!(worker_share(4, 2, 2), 2);
        assert_eq!(worker_share(4, 2, 8), 1);
        // Alone it may be in every match.
        assert_eq!(worker_share(4, 2, 1), 4);
        // NAC's tables of four seat every contestant of a small ladder.
        assert_eq!(worker_share(3, 4, 2), 3);
        assert_eq!(worker_share(1, 2, 0), 1);
    }

    #[test]
    fn the_match_rate_allows_a_burst_then_one_match_per_interval() {
        let t0 = Instant::now();
        // 60 per hour: one a minute, four at once.
        let mut r = MatchRate::new(60, 4, t0);
        assert_eq!(r.available(t0), 4);
        r.spend(4);
        assert_eq!(r.available(t0 + Duration::from_secs(59)), 0);
        assert_eq!(r.available(t0 + Duration::from_secs(61)), 1);
        r.spend(1);
        // Never more than the burst, however long it waited.
        assert_eq!(r.available(t0 + Duration::from_secs(100_000)), 4);
        // A clock that goes back adds nothing.
        assert_eq!(r.available(t0), 4);
    }
}
