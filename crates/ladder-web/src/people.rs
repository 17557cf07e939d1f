//! "Play against this bot": a signed-in contestant plays a ladder bot in their browser, in an
//! unrated match the server plays itself (`docs/human.md`, `docs/ladder.md`).
//!
//! `POST /bots/BOT/play` (a signed-in form with its CSRF token) starts the match: the person in
//! seat 0 (`human`), the bot's active version (or the built-in) in every other seat, under the
//! ladder's rule set, options, limits and sandbox; it answers with a redirect to the person's
//! seat page, `/play/ID/seat/0?key=K`, which only the key opens. `/play/ID?key=K` is the match as
//! the public sees it (live, then its replay), `/play/ID/events?key=K` its stream. No bot's
//! stderr is shown: the bot is someone else's. Nothing is stored or rated; a match is kept in
//! memory for [`KEPT_AFTER`] once over.
//!
//! What a stranger could do and what stops it: start matches without end (one match at a time
//! per account, [`People::at_once`] on the server, and an hourly count per account); guess a
//! seat's address (128 random bits, compared in constant time, the same 404 for any miss); keep
//! a bot process running by never answering (the game's own limits and the ladder's
//! `match_timeout_s`, as in any match; a page closed for 15 s is a disconnect).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Form, Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use kakehiki_core::human::Desk;
use kakehiki_core::live::{LiveInfo, LiveMatch};
use kakehiki_web::human::Key;
use serde::Deserialize;

use crate::pages::{self, RateLimiter};
use crate::App;

/// How long a match played by a person stays readable once over.
pub const KEPT_AFTER: Duration = Duration::from_secs(600);

/// Matches a person may start in an hour.
pub const PER_HOUR: usize = 20;

/// One match a person plays.
struct PersonMatch {
    owner: String,
    desk: Arc<Desk>,
    live: Arc<LiveMatch>,
    /// Its replay, without the bots' stderr, once over (or why it could not be played).
    over: Mutex<Option<Result<String, String>>>,
    ended: Mutex<Option<Instant>>,
}

/// The matches people play on this server.
pub struct People {
    /// Where the bots' programs are unpacked.
    programs: PathBuf,
    /// Matches played at once, by everyone.
    pub at_once: usize,
    matches: Mutex<BTreeMap<u64, Arc<PersonMatch>>>,
    next: AtomicU64,
    starts: RateLimiter,
}

impl People {
    /// People may play `at_once` matches at once on the server, the bots' programs unpacked
    /// under `programs`.
    pub fn new(programs: PathBuf, at_once: usize) -> People {
        People {
            programs,
            at_once,
            matches: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(1),
            starts: RateLimiter::new(PER_HOUR, Duration::from_secs(3600)),
        }
    }

    fn matches(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Arc<PersonMatch>>> {
        self.matches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The match `id` if `key` opens its seat.
    fn opened(&self, id: u64, key: &Key) -> Option<Arc<PersonMatch>> {
        let m = self.matches().get(&id).cloned()?;
        key.opens(&m.desk).then_some(m)
    }

    /// Forget the matches over for longer than [`KEPT_AFTER`].
    fn prune(&self) {
        self.matches().retain(|_, m| {
            let ended = *m.ended.lock().unwrap_or_else(|e| e.into_inner());
            ended.is_none_or(|t| t.elapsed() < KEPT_AFTER)
        });
    }
}

/// The routes of the matches people play, relative to a ladder's pages.
pub(crate) fn routes() -> Router<App> {
    Router::new()
        .route("/bots/:bot/play", post(start))
        .route("/play/:id", get(match_page))
        .route("/play/:id/events", get(match_events))
        .route("/play/:id/seat/:n", get(seat_page))
        .route("/play/:id/seat/:n/events", get(seat_events))
        .route("/play/:id/seat/:n/reply", post(seat_reply))
}

#[derive(Deserialize)]
pub(crate) struct PlayForm {
    #[serde(default)]
    csrf: String,
}

fn refused(app: &App, status: StatusCode, why: &str) -> Response {
    pages::message(app, None, status, "Not started", why)
}

/// `POST /bots/BOT/play`: start a match against the bot and go to the seat's page.
async fn start(
    State(app): State<App>,
    Path(bot): Path<String>,
    headers: HeaderMap,
    Form(f): Form<PlayForm>,
) -> Response {
    pages::on_thread(move || {
        let Some(people) = app.people.clone() else {
            return refused(&app, StatusCode::NOT_FOUND, "this server does not let people play its bots");
        };
        let login = "/login";
        let (_, s) = match pages::form_session(&app, &headers, &f.csrf, login) {
            Ok(v) => v,
            Err(r) => return *r,
        };
        people.prune();
        {
            let running = people.matches();
            let live = running
                .values()
                .filter(|m| m.ended.lock().unwrap_or_else(|e| e.into_inner()).is_none());
            let (mine, all) = live.fold((None, 0), |(mine, n), m| {
                (mine.or((m.owner == s.user.name).then(|| m.clone())), n + 1)
            });
            if mine.is_some() {
                return refused(&app, StatusCode::CONFLICT, "you are playing a match already: finish it (or close its page: 15 s later you have left it) before you start another");
            }
            if all >= people.at_once {
                return refused(&app, StatusCode::SERVICE_UNAVAILABLE, &format!("the server plays {all} matches with people now, as many as it takes: try again in a few minutes"));
            }
        }
        if let Err(wait) = people.starts.hit(&s.user.name, Instant::now()) {
            let minutes = wait.as_secs().div_ceil(60);
            return refused(&app, StatusCode::TOO_MANY_REQUESTS, &format!("at most {PER_HOUR} matches an hour against the bots: try again in {minutes} minutes"));
        }
        let id = people.next.fetch_add(1, Ordering::SeqCst);
        let contest = format!("{}~people", kakehiki_store::ladder_contest(&app.config.name));
        let job = {
            let mut store = app.store.get();
            let job = kakehiki_ladder::play::person_job(
                &app.config,
                store.as_mut(),
                &bot,
                app.config.seats,
                contest.clone(),
                id,
                kakehiki_core::fresh_seed(),
            );
            let mut job = match job {
                Ok(job) => job,
                Err(kakehiki_ladder::play::PersonError::NoSuchBot(_)) => {
                    return refused(&app, StatusCode::NOT_FOUND, "this bot has no version that plays now");
                }
                Err(e) => {
                    tracing::error!("ladder {}: a person's match: {e}", app.config.name);
                    return refused(&app, StatusCode::INTERNAL_SERVER_ERROR, "the match could not be set up");
                }
            };
            let made = kakehiki_ladder::program::materialize_refs(
                store.as_mut(),
                &people.programs,
                &mut job.seat_dirs,
            );
            if let Err(e) = made {
                tracing::error!("ladder {}: a person's match: {e}", app.config.name);
                return refused(&app, StatusCode::INTERNAL_SERVER_ERROR, "the bot's program could not be unpacked");
            }
            job
        };
        let Ok(driver) = kakehiki_referee::find_game(&job.game) else {
            return refused(&app, StatusCode::INTERNAL_SERVER_ERROR, "the game is unknown");
        };
        let help = kakehiki_referee::seat::human::help_for(&job.game);
        let desk = Desk::new(&job.game, 0, help);
        let info = LiveInfo {
            contest,
            index: id,
            game: job.game.clone(),
            entrants: job.entrants.clone(),
            started_unix_ms: kakehiki_referee::files::unix_ms(),
        };
        let live = LiveMatch::new(info, driver.public_live());
        let m = Arc::new(PersonMatch {
            owner: s.user.name.clone(),
            desk: desk.clone(),
            live: live.clone(),
            over: Mutex::new(None),
            ended: Mutex::new(None),
        });
        people.matches().insert(id, m.clone());
        let key = m.desk.key.clone();
        tracing::info!("ladder {}: {} plays {bot} (match {id})", app.config.name, s.user.name);
        let spawned = std::thread::Builder::new()
            .name(format!("person-{id}"))
            .spawn(move || {
                let desks = BTreeMap::from([(0, desk.clone())]);
                let stop = AtomicBool::new(false);
                let played = kakehiki_contest::RefereeArena.play_with(&job, &stop, desks, live.clone());
                let seats = job.seats.len();
                let result = played
                    .map(|p| kakehiki_core::exchange::hide_stderr(&p.replay, &vec![false; seats]))
                    .map_err(|e| e.to_string());
                if let Err(why) = &result {
                    desk.end(&format!("the match could not be played: {why}"));
                }
                *m.over.lock().unwrap_or_else(|e| e.into_inner()) = Some(result);
                *m.ended.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
                live.close();
            });
        if spawned.is_err() {
            people.matches().remove(&id);
            return refused(&app, StatusCode::SERVICE_UNAVAILABLE, "the server cannot start a match now");
        }
        pages::see_other(
            &format!("{}/play/{id}/seat/0?key={key}", app.base),
            [],
        )
    })
    .await
}

fn no_match() -> Response {
    (
        StatusCode::NOT_FOUND,
        "no such match: use the whole address you were sent to (…/play/N/seat/0?key=…); a match is kept 10 minutes once over",
    )
        .into_response()
}

fn people_match(app: &App, id: u64, key: &Key) -> Option<Arc<PersonMatch>> {
    app.people.as_ref()?.opened(id, key)
}

/// `GET /play/ID?key=K`: the match as the public sees it, live, then its replay.
async fn match_page(State(app): State<App>, Path(id): Path<u64>, Query(k): Query<Key>) -> Response {
    let Some(m) = people_match(&app, id, &k) else {
        return no_match();
    };
    let over = m.over.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let html = match over {
        Some(Err(why)) => format!("the match could not be played: {why}"),
        replay => {
            let info = &m.live.info;
            let title = format!("{} match against {}", info.game, info.entrants[1]);
            let events = format!("{}/play/{id}/events?key={}", app.base, m.desk.key);
            let replay = replay.and_then(Result::ok);
            let served_by = "the ladder (an unrated match, kept 10 minutes)";
            kakehiki_web::live::match_page(&m.live, replay.as_deref(), &title, served_by, &events)
        }
    };
    Html(html).into_response()
}

#[derive(Deserialize)]
struct EventsQuery {
    key: Option<String>,
    after: Option<usize>,
}

/// `GET /play/ID/events?key=K`: the match's events (no seat's stderr).
async fn match_events(
    State(app): State<App>,
    Path(id): Path<u64>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let from = kakehiki_web::live::resume_of(&headers, q.after);
    let key = Key { key: q.key };
    let Some(m) = people_match(&app, id, &key) else {
        return no_match();
    };
    let over = m.over.lock().unwrap_or_else(|e| e.into_inner()).clone();
    match over {
        Some(Ok(replay)) => kakehiki_web::live::stored_events(&replay, from),
        _ => {
            let seats = m.live.info.entrants.len();
            kakehiki_web::live::live_events(&m.live, vec![false; seats], from)
        }
    }
}

/// `GET /play/ID/seat/0?key=K`: the person's seat.
async fn seat_page(
    State(app): State<App>,
    Path((id, n)): Path<(u64, usize)>,
    Query(k): Query<Key>,
) -> Response {
    match people_match(&app, id, &k).filter(|m| m.desk.seat == n) {
        Some(m) => {
            let watch = format!("{}/play/{id}?key={}", app.base, m.desk.key);
            let at = format!("{}/play/{id}", app.base);
            Html(kakehiki_web::human::page(&m.desk, &at, &watch, false)).into_response()
        }
        None => no_match(),
    }
}

/// `GET /play/ID/seat/0/events?key=K`: the seat's events.
async fn seat_events(
    State(app): State<App>,
    Path((id, n)): Path<(u64, usize)>,
    Query(k): Query<Key>,
) -> Response {
    match people_match(&app, id, &k).filter(|m| m.desk.seat == n) {
        Some(m) => kakehiki_web::human::events(m.desk.clone()),
        None => no_match(),
    }
}

/// `POST /play/ID/seat/0/reply?key=K`: one reply (the key checked before the body is read).
async fn seat_reply(
    State(app): State<App>,
    Path((id, n)): Path<(u64, usize)>,
    Query(k): Query<Key>,
    req: Request,
) -> Response {
    match people_match(&app, id, &k).filter(|m| m.desk.seat == n) {
        Some(m) => kakehiki_web::human::reply(&m.desk, req.into_body()).await,
        None => no_match(),
    }
}
