//! The web UI: contests, standings, matches with a viewer for each game, entrants, and a JSON API,
//! read from the results store; and the self-contained replay page of `kakehiki view`.
//!
//! Pages: `/` (contests, `?page=N&per=M`), `/contests/{name}` (standings paginated with
//! `?spage=N&sper=M`, head-to-head, rating over time, the match list paginated with
//! `?page=N&per=M`, live updates while the contest runs),
//! `/contests/{name}/matches/{index}` (the game's own result and its viewer),
//! `/contests/{name}/entrants/{entrant}` (one entrant's matches and head-to-head row).
//! Scores show with two decimals and their exact value on hover; the JSON API keeps them exact.
//! JSON API: `/api/contests`, `/api/contests/{name}/standings`, `/api/contests/{name}/matches`,
//! `/api/contests/{name}/matches/{index}` (one match), `.../{index}/replay` (JSON lines),
//! `/api/contests/{name}/events` (server-sent events: `match` when stored matches change).
//!
//! Public pages and the API name entrants only: seat specs (command lines, server paths) are
//! replaced by entrant names, Geister clients' addresses are removed, and every seat's private
//! stderr is dropped from replays (it belongs to that seat's contestant alone).
//!
//! Reads never wait on one another nor on the contest being stored: requests take a store
//! connection from a pool (a new one is opened per concurrent reader when the app has an
//! opener), ask the store for the contest's result count (one key lookup), read only the
//! results stored since, and serve a snapshot kept in memory (see [`contest`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use kakehiki_contest::stored_definition;
use kakehiki_store::{Store, StoreError, StoredResult};
use serde_json::{json, Value};

pub mod contest;
mod html;
pub mod human;
pub mod ladder;
pub mod live;
pub mod view;

pub use axum;
pub use contest::ContestData;
use contest::{Contest, ContestState};
pub use html::{assets, script_hashes, seg, Asset, STYLE};
pub use view::{view_model, ViewError, ViewOptions};

/// Why a request failed; each maps to an HTTP status with a JSON or HTML message.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("no contest named {0:?}")]
    NoContest(String),
    #[error("contest {contest:?} has no stored match {index}")]
    NoMatch { contest: String, index: u64 },
    #[error("contest {contest:?} has no entrant named {entrant:?}")]
    NoEntrant { contest: String, entrant: String },
    #[error("match index {0:?} is not a whole number")]
    BadIndex(String),
    #[error("page {0:?} is not a whole number from 1")]
    BadPage(String),
    #[error("per {0:?} is not a whole number from 1 to {max}", max = html::MAX_PER)]
    BadPer(String),
    #[error("no such page: {0}")]
    NoRoute(String),
    #[error("store error: {0}")]
    Store(String),
    #[error(
        "contest {contest:?} is being read: its {stored} stored results are read once after \
         `kakehiki web` starts; ask again in a second"
    )]
    Loading { contest: String, stored: u64 },
}

impl WebError {
    fn status(&self) -> StatusCode {
        match self {
            WebError::NoContest(_)
            | WebError::NoMatch { .. }
            | WebError::NoEntrant { .. }
            | WebError::NoRoute(_) => StatusCode::NOT_FOUND,
            WebError::BadIndex(_) | WebError::BadPage(_) | WebError::BadPer(_) => {
                StatusCode::BAD_REQUEST
            }
            WebError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
            WebError::Loading { .. } => StatusCode::SERVICE_UNAVAILABLE,
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        let retry = matches!(self, WebError::Loading { .. });
        let mut r = (self.status(), Json(json!({ "error": self.to_string() }))).into_response();
        if retry {
            r.headers_mut()
                .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        }
        r
    }
}

/// An HTML page for an error.
struct HtmlError(WebError);

impl IntoResponse for HtmlError {
    fn into_response(self) -> Response {
        if let WebError::Loading { contest, .. } = &self.0 {
            // A page that reloads itself until the contest is read.
            let page = html::loading_page(contest, &self.0.to_string());
            return (self.0.status(), [(header::RETRY_AFTER, "1")], Html(page)).into_response();
        }
        (self.0.status(), Html(html::error_page(&self.0.to_string()))).into_response()
    }
}

/// How long a request waits for the first read of a contest (the read made once after `web`
/// starts: every stored result is read and parsed, about 10-30 µs each) before it is answered
/// "being read" (503, `Retry-After: 1`; the HTML page reloads itself) rather than with partial
/// standings: the first request after a start is answered within 100 ms however large the
/// contest.
const FIRST_READ_WAIT: Duration = Duration::from_millis(60);

/// The refresher's pause after each update.
const REFRESH_PAUSE: Duration = Duration::from_millis(250);

/// Opens another connection to the same store (for concurrent readers).
pub type StoreOpener = Arc<dyn Fn() -> Result<Box<dyn Store>, StoreError> + Send + Sync>;

/// Store connections: idle ones, and how to open more.
struct Pool {
    idle: Mutex<Vec<Box<dyn Store>>>,
    opener: Option<StoreOpener>,
    /// Bounds the connections in use at once.
    permits: tokio::sync::Semaphore,
}

struct AppState {
    pool: Pool,
    cache: RwLock<HashMap<String, Arc<Contest>>>,
    /// Names of contests to bring up to date, for the refresher thread (an app with an opener
    /// has one: requests never wait for an update once a contest was read).
    refresh: Option<Mutex<std::sync::mpsc::Sender<String>>>,
}

type Shared = Arc<AppState>;

/// The application over one store connection (requests take turns on it).
pub fn app(store: Box<dyn Store>) -> Router {
    build(vec![store], None, 1).0
}

/// The application over a store it may open more connections to: up to `readers` requests read
/// at once, each on its own connection.
///
/// A background thread reads every stored contest at once, so that the first pages after a
/// start are served from memory.
pub fn app_with_opener(opener: StoreOpener, readers: usize) -> Result<Router, StoreError> {
    let first = opener()?;
    let warm = opener.clone();
    let (router, state) = build(vec![first], Some(opener), readers.max(1));
    let _ = std::thread::Builder::new()
        .name("web-warm-up".into())
        .spawn(move || {
            let Ok(mut store) = warm() else { return };
            let names = store.contest_names().unwrap_or_default();
            for name in names {
                match contest_data(store.as_mut(), &state, &name) {
                    // A request got there first and is reading it: the normal state, not a fault.
                    Ok(_) | Err(WebError::Loading { .. }) => {}
                    Err(e) => tracing::warn!("reading contest {name:?} at start: {e}"),
                }
            }
        });
    Ok(router)
}

fn build(
    idle: Vec<Box<dyn Store>>,
    opener: Option<StoreOpener>,
    readers: usize,
) -> (Router, Shared) {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let refresher = opener.clone();
    let state: Shared = Arc::new(AppState {
        pool: Pool {
            idle: Mutex::new(idle),
            opener,
            permits: tokio::sync::Semaphore::new(readers),
        },
        cache: RwLock::new(HashMap::new()),
        refresh: refresher.is_some().then(|| Mutex::new(tx)),
    });
    if let Some(open) = refresher {
        // The refresher: brings contests up to date on its own connection, off the requests.
        let weak = Arc::downgrade(&state);
        let _ = std::thread::Builder::new()
            .name("web-refresher".into())
            .spawn(move || {
                let mut store: Option<Box<dyn Store>> = None;
                while let Ok(name) = rx.recv() {
                    let Some(st) = weak.upgrade() else { return };
                    if store.is_none() {
                        store = open().ok();
                    }
                    let Some(s) = store.as_mut() else { continue };
                    if let Err(e) = update_contest(s.as_mut(), &st, &name) {
                        tracing::warn!("bringing contest {name:?} up to date: {e}");
                        store = None;
                    }
                    drop(st);
                    // At most a few updates a second: while results stream in, the pages lag
                    // them by a fraction of a second and the CPU stays with the requests (and
                    // the contest). Requests meanwhile are coalesced into the next update.
                    std::thread::sleep(REFRESH_PAUSE);
                }
            });
    }
    let router = Router::new()
        .route("/", get(index_page))
        .route("/contests/:name", get(contest_page))
        .route("/contests/:name/matches/:index", get(match_page))
        .route("/contests/:name/entrants/:entrant", get(entrant_page))
        .route("/api/contests", get(api_contests))
        .route("/api/contests/:name/standings", get(api_standings))
        .route("/api/contests/:name/matches", get(api_matches))
        .route("/api/contests/:name/matches/:index", get(api_match))
        .route("/api/contests/:name/matches/:index/replay", get(api_replay))
        .route("/api/contests/:name/events", get(api_events))
        .route("/api/contests/:name/running", get(api_running))
        .route(
            "/contests/:name/matches/:index/seat/:seat",
            get(contest_seat_page),
        )
        .route(
            "/contests/:name/matches/:index/seat/:seat/events",
            get(contest_seat_events),
        )
        .route(
            "/contests/:name/matches/:index/seat/:seat/reply",
            axum::routing::post(contest_seat_reply),
        )
        .route(
            "/api/contests/:name/matches/:index/events",
            get(api_match_events),
        )
        .route("/assets/:name", get(asset))
        .fallback(not_found)
        .with_state(state.clone());
    (router, state)
}

/// The viewer's stylesheet and scripts ([`html::assets`]).
pub async fn asset(Path(name): Path<String>) -> Response {
    html::asset_response(&name)
}

/// Unknown routes: an HTML page for browsers, JSON for the API and for clients asking for JSON.
async fn not_found(uri: Uri, headers: HeaderMap) -> Response {
    let err = WebError::NoRoute(uri.path().chars().take(200).collect());
    let wants_html = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/html"));
    if wants_html && !uri.path().starts_with("/api/") {
        HtmlError(err).into_response()
    } else {
        err.into_response()
    }
}

/// Serve the UI on `addr` until the process ends.
pub async fn serve(store: Box<dyn Store>, addr: std::net::SocketAddr) -> std::io::Result<()> {
    serve_router(app(store), addr).await
}

/// Serve a router on `addr` until the process ends.
pub async fn serve_router(router: Router, addr: std::net::SocketAddr) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!("web UI on http://{}", listener.local_addr()?);
    serve_listener(router, listener).await
}

/// Serve a router on a bound listener (port 0 given, the caller reads the port) until the
/// process ends.
pub async fn serve_listener(
    router: Router,
    listener: tokio::net::TcpListener,
) -> std::io::Result<()> {
    axum::serve(listener, router).await
}

/// Run `f` on a store connection off the async threads.
async fn with_store<T: Send + 'static>(
    state: &Shared,
    f: impl FnOnce(&mut dyn Store, &AppState) -> Result<T, WebError> + Send + 'static,
) -> Result<T, WebError> {
    let _permit = state
        .pool
        .permits
        .acquire()
        .await
        .map_err(|e| WebError::Store(format!("store pool closed: {e}")))?;
    let st = state.clone();
    tokio::task::spawn_blocking(move || {
        let taken = st.pool.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let mut store = match taken {
            Some(s) => s,
            None => match &st.pool.opener {
                Some(open) => open().map_err(store_err)?,
                None => return Err(WebError::Store("no store connection is free".into())),
            },
        };
        let out = f(store.as_mut(), &st);
        st.pool
            .idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(store);
        out
    })
    .await
    .map_err(|e| WebError::Store(format!("store task failed: {e}")))?
}

fn store_err(e: impl std::fmt::Display) -> WebError {
    WebError::Store(e.to_string())
}

fn parse_index(text: &str) -> Result<u64, WebError> {
    text.parse()
        .map_err(|_| WebError::BadIndex(text.chars().take(40).collect()))
}

/// The contest in memory (its definition read once), or `NoContest`.
fn contest_entry(
    store: &mut dyn Store,
    st: &AppState,
    name: &str,
) -> Result<Arc<Contest>, WebError> {
    if let Some(c) = st.cache.read().unwrap_or_else(|p| p.into_inner()).get(name) {
        return Ok(c.clone());
    }
    if store.contest(name).map_err(store_err)?.is_none() {
        return Err(WebError::NoContest(name.to_string()));
    }
    let def = stored_definition(store, name).map_err(store_err)?;
    let entry = Arc::new(Contest::new(def));
    Ok(st
        .cache
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .entry(name.to_string())
        .or_insert(entry)
        .clone())
}

/// A contest's data as of its stored result count now: the snapshot in memory, brought up to
/// date with the results stored since (read from the store, only those). While another request
/// is bringing it up to date, the previous snapshot is served rather than waited for.
fn contest_data(
    store: &mut dyn Store,
    st: &AppState,
    name: &str,
) -> Result<Arc<ContestData>, WebError> {
    let entry = contest_entry(store, st, name)?;
    let count = store.result_count(name).map_err(store_err)?;
    let snap = entry.current();
    if snap.count == count && snap.loaded {
        return Ok(snap);
    }
    if !snap.loaded {
        if let Some(tx) = &st.refresh {
            // The first read is made by the start-up thread or the refresher, never by a
            // request: wait for it a little, then say it is under way.
            queue_refresh(&entry, tx, name);
            let until = std::time::Instant::now() + FIRST_READ_WAIT;
            loop {
                let snap = entry.current();
                if snap.loaded {
                    return Ok(snap);
                }
                if std::time::Instant::now() >= until {
                    return Err(WebError::Loading {
                        contest: name.to_string(),
                        stored: count,
                    });
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    if snap.loaded {
        if let Some(tx) = &st.refresh {
            // Served from memory; the refresher reads what is new.
            queue_refresh(&entry, tx, name);
            return Ok(snap);
        }
    }
    update_contest(store, st, name)
}

/// Ask the refresher to bring a contest up to date (once until it does).
fn queue_refresh(entry: &Contest, tx: &Mutex<std::sync::mpsc::Sender<String>>, name: &str) {
    if !entry
        .refresh_queued
        .swap(true, std::sync::atomic::Ordering::AcqRel)
    {
        let _ = tx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(name.to_string());
    }
}

/// Bring a contest up to date with the results stored since it was last read.
fn update_contest(
    store: &mut dyn Store,
    st: &AppState,
    name: &str,
) -> Result<Arc<ContestData>, WebError> {
    let entry = contest_entry(store, st, name)?;
    entry
        .refresh_queued
        .store(false, std::sync::atomic::Ordering::Release);
    let count = store.result_count(name).map_err(store_err)?;
    let snap = entry.current();
    let mut state = match entry.state.try_lock() {
        Ok(s) => s,
        Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
        // Another request is bringing it up to date: serve what is in memory, unless nothing
        // was read yet (then wait for that first read).
        Err(std::sync::TryLockError::WouldBlock) if snap.loaded => return Ok(snap),
        Err(std::sync::TryLockError::WouldBlock) => {
            entry.state.lock().unwrap_or_else(|p| p.into_inner())
        }
    };
    if state.seq > count {
        // The store holds fewer results than were read: another database under the same
        // name. Start again.
        let def = state.def.clone();
        *state = ContestState::new(def);
    }
    if state.loaded && state.seq == count {
        // Brought up to date meanwhile.
        drop(state);
        return Ok(entry.current());
    }
    let new = store.results_since(name, state.seq).map_err(store_err)?;
    state.add(new).map_err(store_err)?;
    state.loaded = true;
    Ok(entry.refresh(&mut state))
}

/// The index's line of a contest: from memory and the result count when its schedule does
/// not depend on results, so listing contests reads no results.
fn contest_summary(store: &mut dyn Store, st: &AppState, name: &str) -> Result<Value, WebError> {
    let entry = contest_entry(store, st, name)?;
    let Some(scheduled) = entry.scheduled else {
        // The schedule depends on results: known once they are read (the index does not wait
        // for a first read).
        if let (false, Some(tx)) = (entry.current().loaded, &st.refresh) {
            queue_refresh(&entry, tx, name);
            let def = &entry.def;
            return Ok(json!({
                "name": def.name, "game": def.game, "format": def.format.name(),
                "matches_stored": store.result_count(name).map_err(store_err)?,
                "matches_scheduled": "?", "complete": false,
            }));
        }
        return Ok(contest_data(store, st, name)?.summary());
    };
    let count = store.result_count(name).map_err(store_err)?;
    let def = &entry.def;
    Ok(json!({
        "name": def.name, "game": def.game, "format": def.format.name(),
        "matches_stored": count, "matches_scheduled": scheduled,
        "complete": count as usize >= scheduled,
    }))
}

fn all_contests(store: &mut dyn Store, st: &AppState) -> Result<Vec<Value>, WebError> {
    let mut out = Vec::new();
    for name in store.contest_names().map_err(store_err)? {
        out.push(contest_summary(store, st, &name)?);
    }
    Ok(out)
}

/// One stored match with entrant names in place of seat specs (public).
fn public_match(r: StoredResult) -> Value {
    let mut report: Value = serde_json::from_str(&r.report_json).unwrap_or(Value::Null);
    if let Some(seats) = report["seats"].as_array_mut() {
        for (i, s) in seats.iter_mut().enumerate() {
            s["spec"] = json!(r.entrants.get(i).cloned().unwrap_or_default());
            if let Some(o) = s.as_object_mut() {
                o.remove("peer");
                // A seat's stderr is its contestant's own (the seat record's `stderr`; the
                // referee's `seat::STDERR_KEY`, not a dependency of this crate).
                o.remove("stderr");
            }
        }
    }
    json!({"index": r.index, "entrants": r.entrants, "duration_ms": r.duration_ms, "report": report})
}

/// The replay of a stored match as the public may see it: no stderr, entrants named instead
/// of seat specs, no client addresses.
pub fn public_replay(replay: &str, entrants: &[String]) -> String {
    let replay = strip_private(replay);
    // Only the first line is the header: it is rewritten, the rest kept as it is.
    let (first, rest) = replay.split_once('\n').unwrap_or((&replay, ""));
    let header = serde_json::from_str::<Value>(first)
        .ok()
        .filter(|v| v["event"] == "header");
    let Some(mut h) = header else {
        return replay;
    };
    h["seats"] = json!(entrants);
    if let Some(seats) = h["params"]["seats"].as_array_mut() {
        for s in seats {
            if let Some(o) = s.as_object_mut() {
                if o.contains_key("peer") {
                    o.insert("peer".into(), Value::Null);
                }
            }
        }
    }
    let mut out = h.to_string();
    out.push('\n');
    out.push_str(rest);
    out
}

/// Remove what only its own seat may see after the game: `stderr` lines of older replays, the
/// `stderr` of every `seat_end` line (emptied, so the replay still verifies: a re-run repeats
/// the recorded ending) and the `stderr` and `stderr_dropped` of every `seat` line.
pub fn strip_private(replay: &str) -> String {
    kakehiki_core::exchange::hide_stderr(replay, &[])
}

fn one_match(
    store: &mut dyn Store,
    name: &str,
    index: u64,
) -> Result<(StoredResult, String), WebError> {
    if store.contest(name).map_err(store_err)?.is_none() {
        return Err(WebError::NoContest(name.to_string()));
    }
    let missing = || WebError::NoMatch {
        contest: name.to_string(),
        index,
    };
    let result = store
        .result(name, index)
        .map_err(store_err)?
        .ok_or_else(missing)?;
    let replay = store
        .replay(name, index)
        .map_err(store_err)?
        .ok_or_else(missing)?;
    let replay = public_replay(&replay, &result.entrants);
    Ok((result, replay))
}

async fn api_contests(State(st): State<Shared>) -> Result<Json<Vec<Value>>, WebError> {
    Ok(Json(with_store(&st, all_contests).await?))
}

async fn api_standings(
    State(st): State<Shared>,
    Path(name): Path<String>,
) -> Result<Response, WebError> {
    let c = with_store(&st, move |s, st| contest_data(s, st, &name)).await?;
    Ok(Json(&c.standings).into_response())
}

/// One page of a contest's match list (`?page=N&per=M`, 100 a page by default, the match
/// list's own parameters): the matches stored when the contest was last read, by index, read
/// from the store as one range of indices. `X-Total-Count` gives the number of matches and
/// `Link` the first, previous, next and last pages.
async fn api_matches(
    State(st): State<Shared>,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Response, WebError> {
    let page = pager(&q.page, &q.per, html::PAGE_SIZE)?;
    let base = format!("/api/contests/{}/matches", html::seg(&name));
    let (list, total) = with_store(&st, move |s, st| {
        let c = contest_data(s, st, &name)?;
        let on_page = page.slice(&c.rows);
        let (Some(first), Some(last)) = (on_page.first(), on_page.last()) else {
            return Ok((Vec::new(), c.rows.len()));
        };
        let wanted: std::collections::BTreeSet<u64> = on_page.iter().map(|r| r.index).collect();
        let mut list = s
            .results_range(&name, first.index, last.index)
            .map_err(store_err)?;
        // Results stored in the range since the contest was last read wait for the next read,
        // so that pages do not overlap.
        list.retain(|r| wanted.contains(&r.index));
        Ok((list, c.rows.len()))
    })
    .await?;
    let links = page.links(&base, "page", "per", html::PAGE_SIZE, total);
    let link: Vec<String> = ["first", "prev", "next", "last"]
        .iter()
        .filter_map(|rel| links[rel].as_str().map(|u| format!("<{u}>; rel=\"{rel}\"")))
        .collect();
    let mut response = Json(list.into_iter().map(public_match).collect::<Vec<_>>()).into_response();
    let headers = response.headers_mut();
    headers.insert("x-total-count", total.into());
    if let Ok(v) = header::HeaderValue::from_str(&link.join(", ")) {
        if !link.is_empty() {
            headers.insert(header::LINK, v);
        }
    }
    Ok(response)
}

async fn api_match(
    State(st): State<Shared>,
    Path((name, index)): Path<(String, String)>,
) -> Result<Json<Value>, WebError> {
    let index = parse_index(&index)?;
    let (r, _) = with_store(&st, move |s, _| one_match(s, &name, index)).await?;
    Ok(Json(public_match(r)))
}

async fn api_replay(
    State(st): State<Shared>,
    Path((name, index)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let index = parse_index(&index)?;
    let (_, text) = with_store(&st, move |s, _| one_match(s, &name, index)).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/jsonl; charset=utf-8")],
        text,
    )
        .into_response())
}

/// Server-sent events: `match` with the stored match count whenever it changes (checked each
/// second), then `complete` once the contest has every match.
async fn api_events(
    State(st): State<Shared>,
    Path(name): Path<String>,
) -> Result<Response, WebError> {
    let n = name.clone();
    let first = with_store(&st, move |s, st| contest_data(s, st, &n)).await?;
    let stream = futures_util::stream::unfold(
        (st, name, first.count, false, true),
        |(st, name, last, done, first)| async move {
            if done {
                return None;
            }
            if !first {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            let n = name.clone();
            let now = with_store(&st, move |s, st| contest_data(s, st, &n)).await;
            let (event, count, done) = match now {
                Ok(c) if c.complete() => (
                    SseEvent::default()
                        .event("complete")
                        .data(c.count.to_string()),
                    c.count,
                    true,
                ),
                Ok(c) if c.count != last || first => (
                    SseEvent::default().event("match").data(c.count.to_string()),
                    c.count,
                    false,
                ),
                Ok(c) => (SseEvent::default().comment("unchanged"), c.count, false),
                Err(e) => (
                    SseEvent::default().event("error").data(e.to_string()),
                    last,
                    true,
                ),
            };
            Some((
                Ok::<_, std::convert::Infallible>(event),
                (st, name, count, done, false),
            ))
        },
    );
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

async fn index_page(
    State(st): State<Shared>,
    Query(q): Query<PageQuery>,
) -> Result<Html<String>, HtmlError> {
    let page = pager(&q.page, &q.per, html::INDEX_PER).map_err(HtmlError)?;
    let list = with_store(&st, all_contests).await.map_err(HtmlError)?;
    Ok(Html(html::index(&list, page)))
}

/// `?page=N&per=M` of the match lists and the index, `?spage=N&sper=M` of the standings.
#[derive(serde::Deserialize)]
struct PageQuery {
    page: Option<String>,
    per: Option<String>,
    spage: Option<String>,
    sper: Option<String>,
}

/// A page number (from 1) and a page size (from 1 to [`html::MAX_PER`]).
fn pager(
    page: &Option<String>,
    per: &Option<String>,
    default_per: usize,
) -> Result<html::Page, WebError> {
    let number = match page {
        None => 1,
        Some(p) => match p.parse::<usize>() {
            Ok(n) if n >= 1 => n,
            _ => return Err(WebError::BadPage(p.chars().take(40).collect())),
        },
    };
    let per = match per {
        None => default_per,
        Some(p) => match p.parse::<usize>() {
            Ok(n) if (1..=html::MAX_PER).contains(&n) => n,
            _ => return Err(WebError::BadPer(p.chars().take(40).collect())),
        },
    };
    Ok(html::Page { number, per })
}

async fn contest_page(
    State(st): State<Shared>,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Html<String>, HtmlError> {
    let page = pager(&q.page, &q.per, html::PAGE_SIZE).map_err(HtmlError)?;
    let spage = pager(&q.spage, &q.sper, html::STANDINGS_PER).map_err(HtmlError)?;
    let running = running_list(&name);
    let c = with_store(&st, move |s, st| contest_data(s, st, &name))
        .await
        .map_err(HtmlError)?;
    Ok(Html(html::contest(&c, page, spage, &running)))
}

async fn entrant_page(
    State(st): State<Shared>,
    Path((name, entrant)): Path<(String, String)>,
    Query(q): Query<PageQuery>,
) -> Result<Html<String>, HtmlError> {
    let page = pager(&q.page, &q.per, html::PAGE_SIZE).map_err(HtmlError)?;
    let c = with_store(&st, move |s, st| contest_data(s, st, &name))
        .await
        .map_err(HtmlError)?;
    let Some(e) = c.entrant_index(&entrant) else {
        return Err(HtmlError(WebError::NoEntrant {
            contest: c.name.clone(),
            entrant,
        }));
    };
    Ok(Html(html::entrant(&c, e, page)))
}

/// The desk of a person's seat in a match of a contest this process plays, when `key` opens it
/// (`kakehiki contest run --serve` with a `human` entrant); otherwise the same 404 for any miss.
#[allow(clippy::result_large_err)] // a response is the error: it is answered at once
fn contest_desk(
    name: &str,
    index: &str,
    seat: usize,
    key: &human::Key,
) -> Result<std::sync::Arc<kakehiki_core::human::Desk>, Response> {
    let desk = parse_index(index)
        .ok()
        .and_then(|i| kakehiki_core::human::desks().get(name, i, seat));
    match desk {
        Some(d) if key.opens(&d) => Ok(d),
        _ => Err((
            StatusCode::NOT_FOUND,
            "no such seat: use the whole address the contest printed (human seat N of match M: http://…?key=…); a seat is served while its match is played",
        )
            .into_response()),
    }
}

/// `GET /contests/NAME/matches/N/seat/S?key=K`: a person's seat in a match being played, beside
/// the match's live page.
async fn contest_seat_page(
    Path((name, index, seat)): Path<(String, String, usize)>,
    Query(key): Query<human::Key>,
) -> Response {
    match contest_desk(&name, &index, seat, &key) {
        Ok(desk) => {
            let at = format!("/contests/{}/matches/{index}", html::seg(&name));
            Html(human::page(&desk, &at, &at, true)).into_response()
        }
        Err(r) => r,
    }
}

/// `GET /contests/NAME/matches/N/seat/S/events?key=K`: the seat's events.
async fn contest_seat_events(
    Path((name, index, seat)): Path<(String, String, usize)>,
    Query(key): Query<human::Key>,
) -> Response {
    match contest_desk(&name, &index, seat, &key) {
        Ok(desk) => human::events(desk),
        Err(r) => r,
    }
}

/// `POST /contests/NAME/matches/N/seat/S/reply?key=K`: one reply (the key checked first).
async fn contest_seat_reply(
    Path((name, index, seat)): Path<(String, String, usize)>,
    Query(key): Query<human::Key>,
    req: axum::extract::Request,
) -> Response {
    match contest_desk(&name, &index, seat, &key) {
        Ok(desk) => human::reply(&desk, req.into_body()).await,
        Err(r) => r,
    }
}

/// A match of `contest` being played in this process (a contest this process runs, `kakehiki
/// contest run --serve`), if it is (`kakehiki_core::live`).
fn playing(contest: &str, index: u64) -> Option<std::sync::Arc<kakehiki_core::live::LiveMatch>> {
    kakehiki_core::live::registry().get(contest, index)
}

/// `GET /api/contests/NAME/running`: the contest's matches being played in this process, each
/// with its page and its event stream (none in a `kakehiki web` reading the store of a contest
/// another process runs).
async fn api_running(Path(name): Path<String>) -> Json<Value> {
    Json(json!({ "contest": name, "running": running_list(&name) }))
}

/// The matches of contest `name` being played in this process, as the API and the contest page
/// list them.
fn running_list(name: &str) -> Vec<Value> {
    kakehiki_core::live::registry()
        .running(name)
        .iter()
        .map(|m| {
            let page = format!("/contests/{}/matches/{}", html::seg(name), m.info.index);
            let events = format!(
                "/api/contests/{}/matches/{}/events",
                html::seg(name),
                m.info.index
            );
            live::running_json(&m.info, &page, &events)
        })
        .collect()
}

#[derive(serde::Deserialize)]
struct AfterQuery {
    after: Option<usize>,
}

/// `GET /api/contests/NAME/matches/N/events`: the match's events as it is played (docs/live.md),
/// or its stored replay; no seat's stderr.
async fn api_match_events(
    State(st): State<Shared>,
    Path((name, index)): Path<(String, String)>,
    Query(q): Query<AfterQuery>,
    headers: axum::http::HeaderMap,
) -> Result<Response, WebError> {
    let index = parse_index(&index)?;
    let from = live::resume_of(&headers, q.after);
    if let Some(m) = playing(&name, index) {
        let seats = m.info.entrants.len();
        return Ok(live::live_events(&m, vec![false; seats], from));
    }
    let (_, replay) = with_store(&st, move |s, _| one_match(s, &name, index)).await?;
    let replay = kakehiki_core::exchange::hide_stderr(&replay, &[]);
    Ok(live::stored_events(&replay, from))
}

async fn match_page(
    State(st): State<Shared>,
    Path((name, index)): Path<(String, String)>,
) -> Result<Html<String>, HtmlError> {
    let index = parse_index(&index).map_err(HtmlError)?;
    // Being played in this process: its live page, which becomes the stored one at the end.
    if let Some(m) = playing(&name, index) {
        let (so_far, shown) = live::public_so_far(&m);
        let events = format!("/api/contests/{}/matches/{index}/events", html::seg(&name));
        return Ok(Html(live::live_page(&m.info, &so_far, shown, &events)));
    }
    let contest = name.clone();
    let (result, replay) = with_store(&st, move |s, _| one_match(s, &name, index))
        .await
        .map_err(HtmlError)?;
    let entrants = result.entrants.clone();
    let m = public_match(result);
    let model = view::view_model_text(
        &replay,
        &ViewOptions {
            names: Some(entrants),
            private: false,
        },
    );
    Ok(Html(html::match_page(&contest, index, &m, model)))
}

/// The self-contained page of `kakehiki view`: the viewer of one replay file, with every seat's
/// stderr (the file is the contestant's own), no network access and no external asset.
pub fn standalone_page(replay: &str, title: &str) -> Result<String, ViewError> {
    replay_page(replay, title, None)
}

/// [`standalone_page`], or with `served_by` (the command or server that serves it, `kakehiki
/// play --serve`), the same replay as that server serves it: the page says so instead of naming
/// `kakehiki view`, and links the server's [`assets`] instead of holding them.
pub fn replay_page(
    replay: &str,
    title: &str,
    served_by: Option<&str>,
) -> Result<String, ViewError> {
    let model = view_model(
        replay,
        &ViewOptions {
            names: None,
            private: true,
        },
    )?;
    Ok(html::standalone(title, &model, served_by))
}

#[cfg(test)]
mod private_tests {
    use super::*;

    const REPLAY: &str = concat!(
        r#"{"event":"header","format":"x@2","engine":"0","game":"nac","rules":"nac","seed":1,"seats":["cmd:python3 bot.py"],"params":null}"#,
        "\n",
        r#"{"event":"seat","seat":0,"at":"turn 1","kind":"move","limit_ms":1000,"time_us":5,"outcome":"reply","raw":"1","stderr":"SECRET-TURN-STDERR"}"#,
        "\n",
        r#"{"event":"seat_end","seat":0,"exit":"exit code 3","exit_code":3,"stderr":"SECRET-STDERR"}"#,
        "\n"
    );

    #[test]
    fn public_replays_and_matches_carry_no_seat_stderr() {
        for text in [
            public_replay(REPLAY, &["alice".into()]),
            strip_private(REPLAY),
        ] {
            assert!(!text.contains("SECRET-STDERR"), "{text}");
            assert!(!text.contains("SECRET-TURN-STDERR"), "{text}");
            let request: Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
            assert_eq!(request["raw"], "1", "the request stays: {text}");
            // The ending itself stays, so the replay still says how the program ended.
            let end: Value = serde_json::from_str(text.lines().nth(2).unwrap()).unwrap();
            assert_eq!(
                (
                    &end["event"],
                    &end["exit"],
                    &end["exit_code"],
                    &end["stderr"]
                ),
                (
                    &json!("seat_end"),
                    &json!("exit code 3"),
                    &json!(3),
                    &json!("")
                ),
                "{text}"
            );
            assert_eq!(end["stderr_hidden"], true, "{text}");
            assert_eq!(text.lines().count(), 3);
        }
        let report = serde_json::json!({"seats":[{"spec":"cmd:python3 bot.py","errors":[],
            "exit":"exit code 3","stderr":"SECRET-STDERR"}]});
        let m = public_match(StoredResult {
            index: 0,
            entrants: vec!["alice".into()],
            duration_ms: 1,
            report_json: report.to_string(),
            worker: String::new(),
        });
        let text = m.to_string();
        assert!(
            !text.contains("SECRET-STDERR") && !text.contains("python3"),
            "{text}"
        );
        assert_eq!(m["report"]["seats"][0]["exit"], "exit code 3");
    }
}
