//! `kakehiki ladder serve` (docs/ladder.md): uploads with a Bearer token, each kept in the store
//! and built and checked by whoever claims it (the server's `--builders`, or `kakehiki worker`
//! processes on other machines); the matchmaker and workers that play and rate the ladder's matches; the
//! JSON API and the public pages (leaderboard, a bot, a match).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Args;
use kakehiki_ladder::accounts::sha256_hex;
use kakehiki_ladder::play::{MatchRate, Matchmaker};
use kakehiki_ladder::LadderConfig;
use kakehiki_store::{LadderRole, LadderUser, Store, StoreError, VersionStatus};
use serde::Deserialize;
use serde_json::json;

use super::ladder::load_config;
use super::ladder_pages;
use super::store_pool::StorePool;

#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The ladder file.
    #[arg(long, value_name = "LADDER.toml")]
    pub config: PathBuf,
    /// SQLite store (created if missing).
    #[arg(
        long,
        default_value = "kakehiki.sqlite",
        conflicts_with = "database_url"
    )]
    pub db: PathBuf,
    /// PostgreSQL store.
    #[arg(long, env = "KAKEHIKI_DATABASE_URL")]
    pub database_url: Option<String>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub bind: SocketAddr,
    /// Where the server's own match players unpack the bots' programs (the store keeps the
    /// uploads and the built programs).
    #[arg(long, value_name = "DIR", default_value = "ladder-data")]
    pub data: PathBuf,
    /// Builds run at once inside the server (0: only `kakehiki worker` processes build).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=64))]
    pub builders: u16,
    /// Lease of a build or match the server's builders and workers claim, in seconds; they
    /// renew it while they work, so a server killed mid-build has its build taken over (by
    /// itself once restarted, or by a worker) within a lease.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub lease_secs: u64,
    /// Matches played at once inside the server (0: only `kakehiki worker` processes on a
    /// shared PostgreSQL store play them).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..=1024))]
    pub workers: u16,
    /// Matches kept queued or running (default: twice the workers, at least 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub open_matches: Option<u64>,
    /// Seed of the matchmaker's random choices (default: drawn from the operating system).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Mark the web pages' cookies `Secure` (browsers send them over HTTPS only): for a server
    /// behind an HTTPS proxy.
    #[arg(long)]
    pub cookie_secure: bool,
}

#[derive(Clone)]
pub(super) struct App {
    pub(super) config: Arc<LadderConfig>,
    /// Connections for the request handlers.
    pub(super) store: Arc<StorePool>,
    /// The web pages' templates, cookie settings and rate limits.
    pub(super) web: Arc<ladder_pages::Web>,
}

/// Versions a stopped server left `building` without their upload in the store (it stopped
/// between taking the upload and keeping it): an upload a server of the previous kind kept at
/// `DATA/LADDER/BOT/vN.upload` is moved into the store; any other is failed with a log that says
/// to submit again.
fn adopt_lost_uploads(
    config: &LadderConfig,
    store: &mut dyn Store,
    data: &std::path::Path,
) -> anyhow::Result<()> {
    let lost = store
        .ladder_builds_without_upload(&config.name)
        .context("cannot read the versions left building")?;
    for (bot, version) in lost {
        let path = data
            .join(&config.name)
            .join(&bot)
            .join(format!("v{version}.upload"));
        match std::fs::read(&path) {
            Ok(upload) => {
                store
                    .ladder_put_upload(&config.name, &bot, version, &upload)
                    .context("cannot keep an upload")?;
                let _ = std::fs::remove_file(&path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let log = "the server stopped before this upload was saved: submit it again\n";
                store
                    .set_bot_version_status(
                        &config.name,
                        &bot,
                        version,
                        VersionStatus::BuildFailed,
                        log,
                    )
                    .context("cannot store a lost upload's outcome")?;
            }
            Err(e) => {
                return Err(e).with_context(|| format!("cannot read {}", path.display()));
            }
        }
    }
    Ok(())
}

/// Store connections of the request handlers.
const HANDLER_CONNECTIONS: usize = 4;

pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let config = Arc::new(load_config(&args.config)?);
    let open = || kakehiki_store::open_store(&args.db, args.database_url.as_deref());
    let mut store = open().context("cannot open the store")?;
    let data = std::path::absolute(&args.data)
        .with_context(|| format!("bad data folder {}", args.data.display()))?;
    kakehiki_core::private_files::create_dir_all(&data)
        .with_context(|| format!("cannot create {}", data.display()))?;
    // The ladder file's text, for builders on any machine.
    let text = std::fs::read_to_string(&args.config)
        .with_context(|| format!("cannot read {}", args.config.display()))?;
    store
        .ladder_set_file(&config.name, &text)
        .context("cannot keep the ladder file in the store")?;
    adopt_lost_uploads(&config, &mut *store, &data)?;
    start_builders(&args)?;
    start_matchmaker(&args, &config)?;
    start_workers(&args, &data)?;
    let app = App {
        config: config.clone(),
        store: Arc::new(StorePool::new({
            let mut pool = vec![store];
            for _ in 1..HANDLER_CONNECTIONS {
                pool.push(open().context("cannot open the store")?);
            }
            pool
        })),
        web: Arc::new(ladder_pages::Web::new(&config, args.cookie_secure)),
    };
    let upload_limit = (config.limits.upload_bytes as usize).saturating_add(1 << 20);
    let router = Router::new()
        .route("/api/ladders/:ladder/leaderboard", get(leaderboard))
        .route(
            "/api/ladders/:ladder/submissions",
            post(submit).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route(
            "/api/ladders/:ladder/bots/:bot/versions/:version",
            get(version),
        )
        .route(
            "/api/ladders/:ladder/bots/:bot/versions/:version/upload",
            get(version_upload),
        )
        .route("/api/ladders/:ladder/bots/:bot/matches", get(bot_matches))
        .route("/api/ladders/:ladder/matches/:index", get(one_match))
        .route("/leaderboard", get(leaderboard_html))
        .route("/bots/:bot", get(bot_html))
        .route("/matches/:index", get(match_html))
        .merge(ladder_pages::routes(upload_limit))
        .with_state(app);
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    runtime
        .block_on(async {
            let listener = tokio::net::TcpListener::bind(args.bind).await?;
            eprintln!(
                "ladder {} ({}) on http://{}",
                config.name,
                config.game,
                listener.local_addr()?
            );
            // Client addresses for the login rate limit.
            let service = router.into_make_service_with_connect_info::<SocketAddr>();
            axum::serve(listener, service).await
        })
        .with_context(|| format!("cannot serve on {}", args.bind))?;
    Ok(crate::exit::OK)
}

/// Run a handler's work on a thread that may block: the store is synchronous (PostgreSQL's
/// client drives its own runtime, which may not run inside the server's).
async fn blocking(work: impl FnOnce() -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|_| error(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"))
}

fn error(status: StatusCode, message: &str) -> Response {
    (status, Json(json!({ "error": message }))).into_response()
}

/// A refused request: its status and message (small, unlike a built [`Response`]).
struct ApiError(StatusCode, &'static str);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        error(self.0, self.1)
    }
}

/// A failed store call as a small error (logged).
fn store_failed(e: StoreError) -> ApiError {
    tracing::error!("store: {e}");
    ApiError(StatusCode::INTERNAL_SERVER_ERROR, "the store failed")
}

fn store_error(e: StoreError) -> Response {
    tracing::error!("store: {e}");
    error(StatusCode::INTERNAL_SERVER_ERROR, "the store failed")
}

/// The account of the request's `Authorization: Bearer TOKEN`, if any.
fn caller(app: &App, headers: &HeaderMap) -> Result<Option<LadderUser>, ApiError> {
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        return Ok(None);
    };
    let token = value
        .to_str()
        .ok()
        .and_then(|v| v.strip_prefix("Bearer "))
        .ok_or(ApiError(
            StatusCode::UNAUTHORIZED,
            "expected Authorization: Bearer TOKEN",
        ))?;
    let mut store = app.store.get();
    match store.ladder_user_by_token(&sha256_hex(token.trim())) {
        Ok(Some(user)) => Ok(Some(user)),
        Ok(None) => Err(ApiError(StatusCode::UNAUTHORIZED, "unknown API token")),
        Err(e) => {
            tracing::error!("store: {e}");
            Err(ApiError(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the store failed",
            ))
        }
    }
}

/// Who views a page: the account of the request's API token, else of its session cookie.
/// The visitor of a page: the ladder's navigation bar for their session (the signed-in
/// contestant, if any), and who they are (a session, or an API token) for what they may see.
fn page_visitor(
    app: &App,
    headers: &HeaderMap,
) -> (kakehiki_web::ladder::LadderVisitor, Option<LadderUser>) {
    let session = ladder_pages::session(app, headers).ok().flatten();
    let nav = match &session {
        Some((_, s)) => kakehiki_web::ladder::LadderVisitor {
            organiser: s.user.role == LadderRole::Organiser,
            user: Some(s.user.name.clone()),
            csrf: Some(s.csrf_token.clone()),
        },
        None => kakehiki_web::ladder::LadderVisitor::default(),
    };
    let user = caller(app, headers)
        .ok()
        .flatten()
        .or(session.map(|(_, s)| s.user));
    (nav, user)
}

fn check_ladder(app: &App, ladder: &str) -> Result<(), ApiError> {
    if ladder == app.config.name {
        Ok(())
    } else {
        Err(ApiError(StatusCode::NOT_FOUND, "no such ladder"))
    }
}

#[derive(Deserialize)]
struct SubmitQuery {
    language: String,
}

async fn submit(
    State(app): State<App>,
    Path(ladder): Path<String>,
    Query(q): Query<SubmitQuery>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    blocking(move || {
        if let Err(r) = check_ladder(&app, &ladder) {
            return r.into_response();
        }
        let user = match caller(&app, &headers) {
            Ok(Some(u)) => u,
            Ok(None) => return error(StatusCode::UNAUTHORIZED, "an API token is needed"),
            Err(r) => return r.into_response(),
        };
        let version = match ladder_pages::accept_upload(&app, &user, &q.language, body) {
            Ok(v) => v,
            Err(e) => return e.json_response(),
        };
        (
            StatusCode::ACCEPTED,
            Json(json!({ "bot": user.name, "version": version, "status": "building", "log": "" })),
        )
            .into_response()
    })
    .await
}

/// Version `version` of `bot`, for the API token's owner of the bot or an organiser. A version's
/// log and upload are theirs only: anyone else is told it is not there (404), as for a version
/// that does not exist.
fn owned_version(
    app: &App,
    headers: &HeaderMap,
    ladder: &str,
    bot: &str,
    version: u64,
) -> Result<kakehiki_store::BotVersion, ApiError> {
    let user = caller(app, headers)?;
    let versions = {
        let mut store = app.store.get();
        store.bot_versions(ladder, bot).map_err(store_failed)?
    };
    versions
        .into_iter()
        .find(|v| {
            v.version == version
                && user
                    .as_ref()
                    .is_some_and(|u| u.name == v.owner || u.role == LadderRole::Organiser)
        })
        .ok_or(ApiError(StatusCode::NOT_FOUND, "no such version"))
}

async fn version(
    State(app): State<App>,
    Path((ladder, bot, version)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        if let Err(r) = check_ladder(&app, &ladder) {
            return r.into_response();
        }
        let v = match owned_version(&app, &headers, &ladder, &bot, version) {
            Ok(v) => v,
            Err(r) => return r.into_response(),
        };
        Json(json!({
            "bot": v.bot,
            "owner": v.owner,
            "version": v.version,
            "language": v.language,
            "status": v.status.as_str(),
            "log": v.log,
        }))
        .into_response()
    })
    .await
}

/// A version's upload, as received, as a download named after the bot, the version and what the
/// upload is (`alice-v3.zip`, `alice-v3.tar.gz`, or the language's entry file for one source
/// file). The caller has checked that the visitor may see it.
pub(super) fn upload_download(app: &App, v: &kakehiki_store::BotVersion) -> Response {
    let upload = {
        let mut store = app.store.get();
        store.ladder_upload(&app.config.name, &v.bot, v.version)
    };
    let bytes = match upload {
        Ok(Some(b)) => b,
        Ok(None) => return error(StatusCode::NOT_FOUND, "this version's upload is not kept"),
        Err(e) => return store_error(e),
    };
    use kakehiki_ladder::intake::UploadKind;
    let name = match UploadKind::detect(&bytes) {
        UploadKind::Zip => format!("{}-v{}.zip", v.bot, v.version),
        UploadKind::TarGz => format!("{}-v{}.tar.gz", v.bot, v.version),
        UploadKind::Source => {
            let main = app
                .config
                .recipe(&v.language)
                .map_or("source", |r| r.main.as_str());
            format!("{}-v{}-{main}", v.bot, v.version)
        }
    };
    (
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
            (header::CACHE_CONTROL, "no-store".to_string()),
        ],
        bytes,
    )
        .into_response()
}

/// `GET /api/ladders/NAME/bots/BOT/versions/N/upload`: the upload, for its owner and organisers
/// only (404 for anyone else, as for the version).
async fn version_upload(
    State(app): State<App>,
    Path((ladder, bot, version)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        if let Err(r) = check_ladder(&app, &ladder) {
            return r.into_response();
        }
        match owned_version(&app, &headers, &ladder, &bot, version) {
            Ok(v) => upload_download(&app, &v),
            Err(r) => r.into_response(),
        }
    })
    .await
}

/// `?page=N&per=M` of a leaderboard: 100 rows a page by default, at most 1,000.
#[derive(Deserialize)]
struct BoardQuery {
    page: Option<u64>,
    per: Option<u64>,
}

impl BoardQuery {
    /// The page (from 1) and its size.
    fn page(&self) -> (u64, u64) {
        let per = self
            .per
            .unwrap_or(kakehiki_web::ladder::LEADERBOARD_PER as u64);
        (self.page.unwrap_or(1).max(1), per.clamp(1, 1000))
    }
}

async fn leaderboard(
    State(app): State<App>,
    Path(ladder): Path<String>,
    Query(q): Query<BoardQuery>,
) -> Response {
    blocking(move || {
        if let Err(r) = check_ladder(&app, &ladder) {
            return r.into_response();
        }
        let (page, per) = q.page();
        let first = (page - 1).saturating_mul(per);
        let (ratings, total) = {
            let mut store = app.store.get();
            match store.ladder_ratings_page(&ladder, first, per) {
                Ok(v) => v,
                Err(e) => return store_error(e),
            }
        };
        let rows: Vec<serde_json::Value> = ratings
            .iter()
            .enumerate()
            .map(|(i, r)| {
                json!({
                    "rank": first + i as u64 + 1,
                    "bot": r.bot,
                    "owner": r.owner,
                    "version": r.version,
                    "mu": r.mu,
                    "sigma": r.sigma,
                    "games": r.games,
                    "wins": r.wins,
                    "win_rate": if r.games == 0 { 0.0 } else { r.wins as f64 / r.games as f64 },
                    "errors": r.errors,
                    "last_played": r.last_played,
                })
            })
            .collect();
        Json(json!({ "ladder": ladder, "page": page, "per": per, "total": total, "rows": rows }))
            .into_response()
    })
    .await
}

#[derive(Deserialize)]
struct MatchesQuery {
    before: Option<u64>,
    limit: Option<usize>,
}

/// The rated matches of a bot (any of its versions), newest first: public results.
async fn bot_matches(
    State(app): State<App>,
    Path((ladder, bot)): Path<(String, String)>,
    Query(q): Query<MatchesQuery>,
) -> Response {
    blocking(move || {
        if let Err(r) = check_ladder(&app, &ladder) {
            return r.into_response();
        }
        let limit = q.limit.unwrap_or(50).clamp(1, 500);
        let mut store = app.store.get();
        let tables = match store.ladder_bot_tables(&ladder, &bot, q.before, limit) {
            Ok(v) => v,
            Err(e) => return store_error(e),
        };
        drop(store);
        let rows: Vec<serde_json::Value> = group_tables(&bot, tables)
            .into_iter()
            .map(|m| {
                let s = &m.mine;
                json!({
                    "index": s.index,
                    "version": s.version,
                    "seat": s.seat,
                    "score": s.score,
                    "place": s.place,
                    "errors": s.errors,
                    "mu_after": s.mu_after,
                    "sigma_after": s.sigma_after,
                    "played_at": s.played_at,
                    "seats": m.table.iter().map(|t| json!({
                        "seat": t.seat, "bot": t.bot, "version": t.version,
                        "score": t.score, "place": t.place, "errors": t.errors,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        Json(json!({ "ladder": ladder, "bot": bot, "matches": rows })).into_response()
    })
    .await
}

/// One played match: its report and replay. Each seat's stderr is shown only to the seat's
/// owner and to organisers; everyone else gets the match without it.
/// A played match as `user` may see it: the stderr of seats that are not theirs removed from
/// the report and the replay (organisers see every seat's).
struct SeenMatch {
    result: kakehiki_store::StoredResult,
    /// The report without the stderr of the seats not visible.
    report: serde_json::Value,
    /// The replay without the stderr of the seats not visible.
    replay: String,
    /// Each seat's bot (`builtin:NAME` for a built-in).
    bots: Vec<String>,
    /// Seats whose stderr `user` sees.
    visible: Vec<usize>,
}

/// Read match `index` of `ladder` for `user`; `Err` is the response to send (404, 500).
fn seen_match(
    app: &App,
    ladder: &str,
    index: u64,
    user: Option<&LadderUser>,
) -> Result<SeenMatch, ApiError> {
    let contest = kakehiki_store::ladder_contest(ladder);
    let mut store = app.store.get();
    let (result, replay) = match (store.result(&contest, index), store.replay(&contest, index)) {
        (Ok(Some(r)), Ok(Some(p))) => (r, p),
        (Ok(_), Ok(_)) => return Err(ApiError(StatusCode::NOT_FOUND, "no such match")),
        (Err(e), _) | (_, Err(e)) => return Err(store_failed(e)),
    };
    let seats = store
        .ladder_match_seats(ladder, index)
        .map_err(store_failed)?;
    let bots: Vec<String> = result
        .entrants
        .iter()
        .enumerate()
        .map(|(seat, name)| {
            seats
                .iter()
                .find(|s| s.seat == seat)
                .map(|s| s.bot.clone())
                .or_else(|| name.rsplit_once("@v").map(|(b, _)| b.to_string()))
                .unwrap_or_else(|| name.clone())
        })
        .collect();
    // Which seats' stderr the user may read: their own bot's, or all for an organiser.
    let mut visible = vec![false; result.entrants.len()];
    if let Some(u) = user {
        for (seat, bot) in bots.iter().enumerate() {
            let owned = !bot.starts_with("builtin:")
                && store
                    .bot_owner(ladder, bot)
                    .ok()
                    .flatten()
                    .is_some_and(|o| o == u.name);
            visible[seat] = owned || u.role == LadderRole::Organiser;
        }
    }
    drop(store);
    let mut report: serde_json::Value =
        serde_json::from_str(&result.report_json).unwrap_or(serde_json::Value::Null);
    if let Some(seats) = report["seats"].as_array_mut() {
        for (i, s) in seats.iter_mut().enumerate() {
            if !visible.get(i).copied().unwrap_or(false) {
                if let Some(o) = s.as_object_mut() {
                    o.remove("stderr");
                }
            }
        }
    }
    let replay = hide_stderr(&replay, &visible);
    Ok(SeenMatch {
        result,
        report,
        replay,
        bots,
        visible: (0..visible.len()).filter(|&i| visible[i]).collect(),
    })
}

async fn one_match(
    State(app): State<App>,
    Path((ladder, index)): Path<(String, u64)>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        if let Err(r) = check_ladder(&app, &ladder) {
            return r.into_response();
        }
        let user = match caller(&app, &headers) {
            Ok(u) => u,
            Err(r) => return r.into_response(),
        };
        let m = match seen_match(&app, &ladder, index, user.as_ref()) {
            Ok(m) => m,
            Err(r) => return r.into_response(),
        };
        Json(json!({
            "ladder": ladder,
            "index": index,
            "entrants": m.result.entrants,
            "duration_ms": m.result.duration_ms,
            "report": m.report,
            "replay": m.replay,
        }))
        .into_response()
    })
    .await
}

/// An HTML page, or the error page with `status`.
fn page(status: StatusCode, html: String) -> Response {
    (status, axum::response::Html(html)).into_response()
}

fn not_found(message: &str) -> Response {
    page(
        StatusCode::NOT_FOUND,
        kakehiki_web::ladder::not_found_page(message),
    )
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `GET /leaderboard`: the leaderboard page (`?page=N&per=M`).
async fn leaderboard_html(
    State(app): State<App>,
    Query(q): Query<BoardQuery>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        let (me, _) = page_visitor(&app, &headers);
        let (number, per) = q.page();
        let (ratings, total) = {
            let mut store = app.store.get();
            match store.ladder_ratings_page(&app.config.name, (number - 1).saturating_mul(per), per)
            {
                Ok(v) => v,
                Err(e) => return store_error(e),
            }
        };
        page(
            StatusCode::OK,
            kakehiki_web::ladder::leaderboard_page(
                &app.config.name,
                &app.config.game,
                &app.config.rules,
                &ratings,
                now_secs(),
                number as usize,
                per as usize,
                total as usize,
                &me,
            ),
        )
    })
    .await
}

#[derive(Deserialize)]
struct BotPageQuery {
    before: Option<u64>,
}

/// The seats of a bot's matches (newest first, seat order) as one entry per match.
fn group_tables(
    bot: &str,
    tables: Vec<kakehiki_store::LadderSeat>,
) -> Vec<kakehiki_web::ladder::BotMatch> {
    let mut out: Vec<kakehiki_web::ladder::BotMatch> = Vec::new();
    let mut table: Vec<kakehiki_store::LadderSeat> = Vec::new();
    let flush = |table: &mut Vec<kakehiki_store::LadderSeat>,
                 out: &mut Vec<kakehiki_web::ladder::BotMatch>| {
        if let Some(mine) = table.iter().find(|s| s.bot == bot).cloned() {
            out.push(kakehiki_web::ladder::BotMatch {
                mine,
                table: std::mem::take(table),
            });
        }
        table.clear();
    };
    for s in tables {
        if table.first().is_some_and(|t| t.index != s.index) {
            flush(&mut table, &mut out);
        }
        table.push(s);
    }
    flush(&mut table, &mut out);
    out
}

/// Matches a bot's page lists at once.
const BOT_PAGE_MATCHES: usize = 50;

/// `GET /bots/BOT`: a bot's rating, rating over time and recent matches.
async fn bot_html(
    State(app): State<App>,
    Path(bot): Path<String>,
    Query(q): Query<BotPageQuery>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        let (me, user) = page_visitor(&app, &headers);
        let ladder = app.config.name.clone();
        let mut store = app.store.get();
        let row = match store.ladder_bot_rating(&ladder, &bot) {
            Ok(v) => v,
            Err(e) => return store_error(e),
        };
        let tables = match store.ladder_bot_tables(&ladder, &bot, q.before, BOT_PAGE_MATCHES) {
            Ok(v) => v,
            Err(e) => return store_error(e),
        };
        let matches = group_tables(&bot, tables);
        let versions = if bot.starts_with("builtin:") {
            Vec::new()
        } else {
            match store.bot_versions(&ladder, &bot) {
                Ok(v) => v,
                Err(e) => return store_error(e),
            }
        };
        drop(store);
        if row.is_none() && matches.is_empty() && versions.is_empty() {
            return not_found("no such bot on this ladder");
        }
        let owner_versions: Vec<u64> = match &user {
            Some(u)
                if u.role == LadderRole::Organiser
                    || versions.first().is_some_and(|v| v.owner == u.name) =>
            {
                versions.iter().map(|v| v.version).collect()
            }
            _ => Vec::new(),
        };
        let older = (matches.len() == BOT_PAGE_MATCHES)
            .then(|| matches.last().map(|m| m.mine.index))
            .flatten();
        page(
            StatusCode::OK,
            kakehiki_web::ladder::bot_page(
                &ladder,
                &bot,
                row.as_ref().map(|(rank, r)| (*rank as usize, r)),
                &matches,
                &owner_versions,
                older,
                &me,
            ),
        )
    })
    .await
}

/// `GET /matches/N`: a match with the game's viewer.
async fn match_html(
    State(app): State<App>,
    Path(index): Path<u64>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        let (me, user) = page_visitor(&app, &headers);
        let ladder = app.config.name.clone();
        let m = match seen_match(&app, &ladder, index, user.as_ref()) {
            Ok(m) => m,
            Err(ApiError(StatusCode::NOT_FOUND, _)) => {
                return not_found("no such match (not played yet, or never)")
            }
            Err(r) => return r.into_response(),
        };
        page(
            StatusCode::OK,
            kakehiki_web::ladder::match_page(
                &ladder,
                index,
                &m.result.entrants,
                &m.bots,
                &m.report.to_string(),
                &m.replay,
                &m.visible,
                &me,
            ),
        )
    })
    .await
}

/// The replay with the `stderr` of every `seat_end` line of a seat not in `visible` emptied
/// (and marked `stderr_hidden`), and the `stderr` lines of older replays of such seats left out.
fn hide_stderr(replay: &str, visible: &[bool]) -> String {
    let mut out = String::with_capacity(replay.len());
    for line in replay.lines() {
        let parsed = serde_json::from_str::<serde_json::Value>(line).ok();
        // Older replays carry stderr as lines of their own.
        if parsed.as_ref().is_some_and(|v| {
            v["event"] == "stderr"
                && !v["seat"]
                    .as_u64()
                    .is_some_and(|s| visible.get(s as usize).copied().unwrap_or(false))
        }) {
            continue;
        }
        let hidden = parsed
            .filter(|v| v["event"] == kakehiki_core::exchange::SEAT_END_EVENT)
            .and_then(|mut v| {
                let seat = v["seat"].as_u64()? as usize;
                if visible.get(seat).copied().unwrap_or(false) {
                    return None;
                }
                let o = v.as_object_mut()?;
                o.insert("stderr".into(), json!(""));
                o.insert("stderr_hidden".into(), json!(true));
                Some(v.to_string())
            });
        out.push_str(hidden.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

/// Start the matchmaker: a thread with its own store that rates new results and keeps the
/// ladder's queue filled (crates/ladder/src/play.rs).
fn start_matchmaker(args: &ServeArgs, config: &LadderConfig) -> anyhow::Result<()> {
    use kakehiki_contest::arena::Arena;
    let game = kakehiki_contest::RefereeArena
        .game_type(&config.game)
        .map_err(anyhow::Error::msg)?;
    let seats = game.default_seats;
    let open = args
        .open_matches
        .unwrap_or_else(|| (2 * u64::from(args.workers)).max(4));
    let seed = args.seed.unwrap_or_else(kakehiki_core::fresh_seed);
    let mut store = kakehiki_store::open_store(&args.db, args.database_url.as_deref())
        .context("cannot open the store")?;
    let mut mm = Matchmaker::new(config.clone(), seats, seed);
    let mut rate = MatchRate::new(config.matches_per_hour, open, std::time::Instant::now());
    std::thread::Builder::new()
        .name("ladder-matchmaker".into())
        .spawn(move || loop {
            let budget = rate.available(std::time::Instant::now());
            match mm.step(store.as_mut(), open, budget) {
                Ok(step) => rate.spend(step.queued),
                Err(e) => tracing::error!("ladder matchmaker: {e}"),
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        })
        .context("cannot start the matchmaker")?;
    Ok(())
}

/// Start `--builders` threads that claim builds from the store, as `kakehiki worker` does.
fn start_builders(args: &ServeArgs) -> anyhow::Result<()> {
    let lease = std::time::Duration::from_secs(args.lease_secs);
    for slot in 0..args.builders {
        let mut store = kakehiki_store::open_store(&args.db, args.database_url.as_deref())
            .context("cannot open the store")?;
        let name = format!(
            "{}:builder{slot}",
            kakehiki_contest::runner::default_worker_name()
        );
        std::thread::Builder::new()
            .name(format!("ladder-builder-{slot}"))
            .spawn(move || loop {
                match super::ladder_work::build_one(&mut *store, &name, lease) {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(e) => tracing::error!("ladder builder: {e}"),
                }
                std::thread::sleep(std::time::Duration::from_millis(200));
            })
            .context("cannot start a builder")?;
    }
    Ok(())
}

/// Start `--workers` match players inside the server, claiming from the store's queue as
/// `kakehiki worker` does and unpacking programs under `data` (builds are the builders').
fn start_workers(args: &ServeArgs, data: &std::path::Path) -> anyhow::Result<()> {
    if args.workers == 0 {
        return Ok(());
    }
    let db = args.db.clone();
    let url = args.database_url.clone();
    let opts = kakehiki_contest::WorkerOptions {
        jobs: usize::from(args.workers),
        poll: std::time::Duration::from_millis(100),
        hooks: Some(Arc::new(super::ladder_work::LadderWork {
            programs: data.to_path_buf(),
            builds: false,
            lease: std::time::Duration::from_secs(args.lease_secs),
        })),
        lease: std::time::Duration::from_secs(args.lease_secs),
        ..kakehiki_contest::WorkerOptions::default()
    };
    std::thread::Builder::new()
        .name("ladder-workers".into())
        .spawn(move || {
            let connect = move || kakehiki_store::open_store(&db, url.as_deref());
            let stop = std::sync::atomic::AtomicBool::new(false);
            let arena = Arc::new(kakehiki_contest::RefereeArena);
            if let Err(e) = kakehiki_contest::run_worker(&connect, arena, &opts, &stop) {
                tracing::error!("ladder workers stopped: {e}");
                eprintln!("ladder: the workers stopped: {e}");
            }
        })
        .context("cannot start the workers")?;
    Ok(())
}
