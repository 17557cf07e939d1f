//! The web UI: contest standings, match lists and a replay viewer, read from the results store.
//!
//! Pages: `/` (contests), `/contests/{name}` (standings and matches),
//! `/contests/{name}/matches/{index}` (one match with a step-through replay viewer).
//! JSON API: `/api/contests`, `/api/contests/{name}/standings`, `/api/contests/{name}/matches`,
//! `/api/contests/{name}/matches/{index}/replay` (JSON lines).
//!
//! Only finished matches are in the store, and a seat's private stderr is removed from every
//! replay served (it belongs to that seat's contestant alone).

use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use kakehiki_contest::{
    compute_standings, game_results, load_results, stored_definition, Standings,
};
use kakehiki_store::{Store, StoredResult};
use serde_json::{json, Value};

mod html;

/// Why a request failed; each maps to an HTTP status with a JSON or HTML message.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    #[error("no contest named {0:?}")]
    NoContest(String),
    #[error("contest {contest:?} has no stored match {index}")]
    NoMatch { contest: String, index: u64 },
    #[error("match index {0:?} is not a whole number")]
    BadIndex(String),
    #[error("store error: {0}")]
    Store(String),
}

impl WebError {
    fn status(&self) -> StatusCode {
        match self {
            WebError::NoContest(_) | WebError::NoMatch { .. } => StatusCode::NOT_FOUND,
            WebError::BadIndex(_) => StatusCode::BAD_REQUEST,
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

type SharedStore = Arc<Mutex<Box<dyn Store>>>;

/// The application: routes over a store.
pub fn app(store: Box<dyn Store>) -> Router {
    let state: SharedStore = Arc::new(Mutex::new(store));
    Router::new()
        .route("/", get(index_page))
        .route("/contests/:name", get(contest_page))
        .route("/contests/:name/matches/:index", get(match_page))
        .route("/api/contests", get(api_contests))
        .route("/api/contests/:name/standings", get(api_standings))
        .route("/api/contests/:name/matches", get(api_matches))
        .route("/api/contests/:name/matches/:index/replay", get(api_replay))
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                Json(json!({"error": "no such page"})),
            )
        })
        .with_state(state)
}

/// Serve the UI on `addr` until the process ends.
pub async fn serve(store: Box<dyn Store>, addr: std::net::SocketAddr) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!("web UI on http://{}", listener.local_addr()?);
    axum::serve(listener, app(store)).await
}

/// Run `f` on the store off the async threads.
async fn with_store<T: Send + 'static>(
    store: &SharedStore,
    f: impl FnOnce(&mut dyn Store) -> Result<T, WebError> + Send + 'static,
) -> Result<T, WebError> {
    let store = store.clone();
    tokio::task::spawn_blocking(move || {
        let mut guard = store.lock().unwrap_or_else(|p| p.into_inner());
        f(guard.as_mut())
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

/// A contest summary for the index.
#[derive(Debug, Clone, serde::Serialize)]
struct ContestSummary {
    name: String,
    game: String,
    format: String,
    matches_stored: usize,
    matches_scheduled: usize,
    complete: bool,
}

fn standings_of(store: &mut dyn Store, name: &str) -> Result<Standings, WebError> {
    require_contest(store, name)?;
    let def = stored_definition(store, name).map_err(store_err)?;
    let results = load_results(store, &def).map_err(store_err)?;
    Ok(compute_standings(&def, &results))
}

fn contests(store: &mut dyn Store) -> Result<Vec<ContestSummary>, WebError> {
    let mut out = Vec::new();
    for name in store.contest_names().map_err(store_err)? {
        let s = standings_of(store, &name)?;
        out.push(ContestSummary {
            name,
            game: s.game,
            format: s.format,
            matches_stored: s.matches_stored,
            matches_scheduled: s.matches_scheduled,
            complete: s.complete,
        });
    }
    Ok(out)
}

/// One stored match for lists and its page: index, entrants, and its report.
fn match_json(r: StoredResult) -> Value {
    let report: Value = serde_json::from_str(&r.report_json).unwrap_or(Value::Null);
    json!({"index": r.index, "entrants": r.entrants, "duration_ms": r.duration_ms, "report": report})
}

fn require_contest(store: &mut dyn Store, name: &str) -> Result<(), WebError> {
    match store.contest(name).map_err(store_err)? {
        Some(_) => Ok(()),
        None => Err(WebError::NoContest(name.to_string())),
    }
}

/// Every stored match of a contest, for lists.
fn matches(store: &mut dyn Store, name: &str) -> Result<Vec<Value>, WebError> {
    require_contest(store, name)?;
    let results = store.results(name).map_err(store_err)?;
    Ok(results.into_iter().map(match_json).collect())
}

/// A contest's standings and its stored matches, from one read of its results.
fn contest_view(store: &mut dyn Store, name: &str) -> Result<(Standings, Vec<Value>), WebError> {
    require_contest(store, name)?;
    let def = stored_definition(store, name).map_err(store_err)?;
    let stored = store.results(name).map_err(store_err)?;
    let standings = compute_standings(&def, &game_results(&def, &stored).map_err(store_err)?);
    Ok((standings, stored.into_iter().map(match_json).collect()))
}

/// The replay of a stored match with every seat's private stderr removed.
fn public_replay(store: &mut dyn Store, name: &str, index: u64) -> Result<String, WebError> {
    let text = store
        .replay(name, index)
        .map_err(store_err)?
        .ok_or_else(|| WebError::NoMatch {
            contest: name.to_string(),
            index,
        })?;
    Ok(strip_private(&text))
}

/// Remove events only their own seat may see after the game (stderr).
pub fn strip_private(replay: &str) -> String {
    let mut out = String::with_capacity(replay.len());
    for line in replay.lines() {
        let private = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| {
                v.get("event")
                    .and_then(Value::as_str)
                    .map(|e| e == "stderr")
            })
            .unwrap_or(false);
        if !private {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

async fn api_contests(
    State(store): State<SharedStore>,
) -> Result<Json<Vec<ContestSummary>>, WebError> {
    Ok(Json(with_store(&store, contests).await?))
}

async fn api_standings(
    State(store): State<SharedStore>,
    Path(name): Path<String>,
) -> Result<Json<Standings>, WebError> {
    Ok(Json(
        with_store(&store, move |s| standings_of(s, &name)).await?,
    ))
}

async fn api_matches(
    State(store): State<SharedStore>,
    Path(name): Path<String>,
) -> Result<Json<Vec<Value>>, WebError> {
    Ok(Json(with_store(&store, move |s| matches(s, &name)).await?))
}

async fn api_replay(
    State(store): State<SharedStore>,
    Path((name, index)): Path<(String, String)>,
) -> Result<Response, WebError> {
    let index = parse_index(&index)?;
    let text = with_store(&store, move |s| public_replay(s, &name, index)).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/jsonl; charset=utf-8")],
        text,
    )
        .into_response())
}

async fn index_page(State(store): State<SharedStore>) -> Result<Html<String>, HtmlError> {
    let list = with_store(&store, contests).await.map_err(HtmlError)?;
    Ok(Html(html::index(
        &list
            .iter()
            .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
            .collect::<Vec<_>>(),
    )))
}

async fn contest_page(
    State(store): State<SharedStore>,
    Path(name): Path<String>,
) -> Result<Html<String>, HtmlError> {
    let (standings, list) = with_store(&store, move |s| contest_view(s, &name))
        .await
        .map_err(HtmlError)?;
    Ok(Html(html::contest(&standings, &list)))
}

async fn match_page(
    State(store): State<SharedStore>,
    Path((name, index)): Path<(String, String)>,
) -> Result<Html<String>, HtmlError> {
    let index = parse_index(&index).map_err(HtmlError)?;
    let contest = name.clone();
    let (report, replay) = with_store(&store, move |s| {
        require_contest(s, &name)?;
        let result =
            s.result(&name, index)
                .map_err(store_err)?
                .ok_or_else(|| WebError::NoMatch {
                    contest: name.clone(),
                    index,
                })?;
        Ok((match_json(result), public_replay(s, &name, index)?))
    })
    .await
    .map_err(HtmlError)?;
    Ok(Html(html::match_page(&contest, index, &report, &replay)))
}
