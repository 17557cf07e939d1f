//! The web UI: contests, standings, matches with a viewer for each game, entrants, and a JSON API,
//! read from the results store; and the self-contained replay page of `kakehiki view`.
//!
//! Pages: `/` (contests), `/contests/{name}` (standings, head-to-head, rating over time, the
//! match list paginated with `?page=N`, live updates while the contest runs),
//! `/contests/{name}/matches/{index}` (the game's own result and its viewer),
//! `/contests/{name}/entrants/{entrant}` (one entrant's matches).
//! JSON API: `/api/contests`, `/api/contests/{name}/standings`, `/api/contests/{name}/matches`,
//! `/api/contests/{name}/matches/{index}` (one match), `.../{index}/replay` (JSON lines),
//! `/api/contests/{name}/events` (server-sent events: `match` when stored matches change).
//!
//! Public pages and the API name entrants only: seat specs (command lines, server paths) are
//! replaced by entrant names, Geister clients' addresses are removed, and every seat's private
//! stderr is dropped from replays (it belongs to that seat's contestant alone).
//!
//! Reads never wait on one another: requests take a store connection from a pool (a new one is
//! opened per concurrent reader when the app has an opener), and each contest's standings, match
//! rows, head-to-head table and rating history are computed once per change of its stored match
//! count and then served from memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use kakehiki_contest::{compute_standings, game_results, stored_definition, Standings};
use kakehiki_store::{Store, StoreError, StoredResult};
use serde_json::{json, Value};

mod contest;
mod html;
pub mod view;

pub use axum;
pub use contest::ContestData;
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
    #[error("no such page: {0}")]
    NoRoute(String),
    #[error("store error: {0}")]
    Store(String),
}

impl WebError {
    fn status(&self) -> StatusCode {
        match self {
            WebError::NoContest(_)
            | WebError::NoMatch { .. }
            | WebError::NoEntrant { .. }
            | WebError::NoRoute(_) => StatusCode::NOT_FOUND,
            WebError::BadIndex(_) | WebError::BadPage(_) => StatusCode::BAD_REQUEST,
            WebError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        (self.status(), Json(json!({ "error": self.to_string() }))).into_response()
    }
}

/// An HTML page for an error.
struct HtmlError(WebError);

impl IntoResponse for HtmlError {
    fn into_response(self) -> Response {
        (self.0.status(), Html(html::error_page(&self.0.to_string()))).into_response()
    }
}

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
    cache: RwLock<HashMap<String, Arc<ContestData>>>,
}

type Shared = Arc<AppState>;

/// The application over one store connection (requests take turns on it).
pub fn app(store: Box<dyn Store>) -> Router {
    build(vec![store], None, 1)
}

/// The application over a store it may open more connections to: up to `readers` requests read
/// at once, each on its own connection.
pub fn app_with_opener(opener: StoreOpener, readers: usize) -> Result<Router, StoreError> {
    let first = opener()?;
    Ok(build(vec![first], Some(opener), readers.max(1)))
}

fn build(idle: Vec<Box<dyn Store>>, opener: Option<StoreOpener>, readers: usize) -> Router {
    let state: Shared = Arc::new(AppState {
        pool: Pool {
            idle: Mutex::new(idle),
            opener,
            permits: tokio::sync::Semaphore::new(readers),
        },
        cache: RwLock::new(HashMap::new()),
    });
    Router::new()
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
        .fallback(not_found)
        .with_state(state)
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

/// A contest's cached data, recomputed when its stored match count changed.
fn contest_data(
    store: &mut dyn Store,
    st: &AppState,
    name: &str,
) -> Result<Arc<ContestData>, WebError> {
    let count = store.result_count(name).map_err(store_err)?;
    if let Some(c) = st.cache.read().unwrap_or_else(|p| p.into_inner()).get(name) {
        if c.count == count {
            return Ok(c.clone());
        }
    }
    if store.contest(name).map_err(store_err)?.is_none() {
        return Err(WebError::NoContest(name.to_string()));
    }
    let def = stored_definition(store, name).map_err(store_err)?;
    let stored = store.results(name).map_err(store_err)?;
    let games = game_results(&def, &stored).map_err(store_err)?;
    let standings: Standings = compute_standings(&def, &games);
    let data = Arc::new(ContestData::new(&def, standings, &stored, &games));
    st.cache
        .write()
        .unwrap_or_else(|p| p.into_inner())
        .insert(name.to_string(), data.clone());
    Ok(data)
}

fn all_contests(store: &mut dyn Store, st: &AppState) -> Result<Vec<Arc<ContestData>>, WebError> {
    let mut out = Vec::new();
    for name in store.contest_names().map_err(store_err)? {
        out.push(contest_data(store, st, &name)?);
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
            }
        }
    }
    json!({"index": r.index, "entrants": r.entrants, "duration_ms": r.duration_ms, "report": report})
}

/// The replay of a stored match as the public may see it: no stderr, entrants named instead
/// of seat specs, no client addresses.
pub fn public_replay(replay: &str, entrants: &[String]) -> String {
    let mut out = String::with_capacity(replay.len());
    for (i, line) in replay.lines().enumerate() {
        let v = serde_json::from_str::<Value>(line).ok();
        let kind = v
            .as_ref()
            .and_then(|v| v.get("event"))
            .and_then(Value::as_str);
        if kind == Some("stderr") {
            continue;
        }
        if i == 0 && kind == Some("header") {
            if let Some(mut h) = v {
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
                out.push_str(&h.to_string());
                out.push('\n');
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Remove events only their own seat may see after the game (stderr).
pub fn strip_private(replay: &str) -> String {
    replay
        .lines()
        .filter(|line| {
            serde_json::from_str::<Value>(line).ok().and_then(|v| {
                v.get("event")
                    .and_then(Value::as_str)
                    .map(|e| e == "stderr")
            }) != Some(true)
        })
        .fold(String::with_capacity(replay.len()), |mut out, l| {
            out.push_str(l);
            out.push('\n');
            out
        })
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
    let list = with_store(&st, all_contests).await?;
    Ok(Json(list.iter().map(|c| c.summary()).collect()))
}

async fn api_standings(
    State(st): State<Shared>,
    Path(name): Path<String>,
) -> Result<Response, WebError> {
    let c = with_store(&st, move |s, st| contest_data(s, st, &name)).await?;
    Ok(Json(&c.standings).into_response())
}

async fn api_matches(
    State(st): State<Shared>,
    Path(name): Path<String>,
) -> Result<Json<Vec<Value>>, WebError> {
    let list = with_store(&st, move |s, st| {
        contest_data(s, st, &name)?;
        s.results(&name).map_err(store_err)
    })
    .await?;
    Ok(Json(list.into_iter().map(public_match).collect()))
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

async fn index_page(State(st): State<Shared>) -> Result<Html<String>, HtmlError> {
    let list = with_store(&st, all_contests).await.map_err(HtmlError)?;
    Ok(Html(html::index(
        &list.iter().map(|c| c.summary()).collect::<Vec<_>>(),
    )))
}

#[derive(serde::Deserialize)]
struct PageQuery {
    page: Option<String>,
}

fn page_number(q: &PageQuery) -> Result<usize, WebError> {
    match &q.page {
        None => Ok(1),
        Some(p) => match p.parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n),
            _ => Err(WebError::BadPage(p.chars().take(40).collect())),
        },
    }
}

async fn contest_page(
    State(st): State<Shared>,
    Path(name): Path<String>,
    Query(q): Query<PageQuery>,
) -> Result<Html<String>, HtmlError> {
    let page = page_number(&q).map_err(HtmlError)?;
    let c = with_store(&st, move |s, st| contest_data(s, st, &name))
        .await
        .map_err(HtmlError)?;
    Ok(Html(html::contest(&c, page)))
}

async fn entrant_page(
    State(st): State<Shared>,
    Path((name, entrant)): Path<(String, String)>,
    Query(q): Query<PageQuery>,
) -> Result<Html<String>, HtmlError> {
    let page = page_number(&q).map_err(HtmlError)?;
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

async fn match_page(
    State(st): State<Shared>,
    Path((name, index)): Path<(String, String)>,
) -> Result<Html<String>, HtmlError> {
    let index = parse_index(&index).map_err(HtmlError)?;
    let contest = name.clone();
    let (result, replay) = with_store(&st, move |s, _| one_match(s, &name, index))
        .await
        .map_err(HtmlError)?;
    let entrants = result.entrants.clone();
    let m = public_match(result);
    let model = view_model(
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
    let model = view_model(
        replay,
        &ViewOptions {
            names: None,
            private: true,
        },
    )?;
    Ok(html::standalone(title, &model))
}
