//! `kakehiki ladder serve`: the ladder's JSON API, minimal (docs/ladder.md): uploads with a
//! Bearer token, each built and checked in the background, their status, and the leaderboard of
//! active bots. No matches are played yet.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};

use anyhow::Context;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use clap::Args;
use kakehiki_ladder::accounts::sha256_hex;
use kakehiki_ladder::LadderConfig;
use kakehiki_store::{LadderRole, LadderUser, Store, StoreError, VersionStatus};
use serde::Deserialize;
use serde_json::json;

use super::ladder::{load_config, process_upload, Status};
use super::ladder_pages;

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
    /// Where uploads and built program folders are kept.
    #[arg(long, value_name = "DIR", default_value = "ladder-data")]
    pub data: PathBuf,
    /// Mark the web pages' cookies `Secure` (browsers send them over HTTPS only): for a server
    /// behind an HTTPS proxy.
    #[arg(long)]
    pub cookie_secure: bool,
}

/// One upload to build and check.
pub(super) struct Job {
    pub(super) bot: String,
    pub(super) version: u64,
    pub(super) language: String,
    pub(super) upload: Bytes,
}

#[derive(Clone)]
pub(super) struct App {
    pub(super) config: Arc<LadderConfig>,
    pub(super) store: Arc<Mutex<Box<dyn Store>>>,
    pub(super) builds: mpsc::Sender<Job>,
    /// Uploads and program folders: `DATA/LADDER/BOT/vN.upload` and `DATA/LADDER/BOT/vN`.
    pub(super) data: PathBuf,
    /// The web pages' templates, cookie settings and rate limits.
    pub(super) web: Arc<ladder_pages::Web>,
}

/// Where a version's upload is kept until it is built (and after).
pub(super) fn upload_path(
    data: &std::path::Path,
    ladder: &str,
    bot: &str,
    version: u64,
) -> PathBuf {
    data.join(ladder)
        .join(bot)
        .join(format!("v{version}.upload"))
}

/// Queue again every version still `building` (the server stopped before its outcome was
/// stored). A version whose upload was never saved is failed with a log that says so.
fn requeue(
    config: &LadderConfig,
    store: &mut dyn Store,
    data: &std::path::Path,
    builds: &mpsc::Sender<Job>,
) -> anyhow::Result<()> {
    let pending = store
        .bot_versions_in(&config.name, VersionStatus::Building)
        .context("cannot read the versions left building")?;
    for v in pending {
        let path = upload_path(data, &config.name, &v.bot, v.version);
        match std::fs::read(&path) {
            Ok(upload) => {
                eprintln!(
                    "ladder: building {} v{} again (the server had stopped)",
                    v.bot, v.version
                );
                let job = Job {
                    bot: v.bot,
                    version: v.version,
                    language: v.language,
                    upload: Bytes::from(upload),
                };
                builds.send(job).context("the builder has stopped")?;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let log = "the server stopped before this upload was saved: submit it again\n";
                store
                    .set_bot_version_status(
                        &config.name,
                        &v.bot,
                        v.version,
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

pub fn run(args: ServeArgs) -> anyhow::Result<u8> {
    let config = Arc::new(load_config(&args.config)?);
    let open = || kakehiki_store::open_store(&args.db, args.database_url.as_deref());
    let store = open().context("cannot open the store")?;
    // The builder has a connection of its own: a build never holds the server's.
    let mut builder_store = open().context("cannot open the store")?;
    let data = std::path::absolute(&args.data)
        .with_context(|| format!("bad data folder {}", args.data.display()))?;
    kakehiki_core::private_files::create_dir_all(&data)
        .with_context(|| format!("cannot create {}", data.display()))?;
    let (tx, rx) = mpsc::channel::<Job>();
    // Versions a stopped server left building: built again from their saved uploads.
    let mut store = store;
    requeue(&config, &mut *store, &data, &tx)?;
    let builder_config = config.clone();
    let builder_data = data.clone();
    std::thread::spawn(move || {
        let data = builder_data;
        for job in rx {
            let log = match build_job(&builder_config, &data, &job) {
                Ok((status, log)) => (status, log),
                Err(e) => (
                    VersionStatus::BuildFailed,
                    format!("the server could not build this version: {e:#}\n"),
                ),
            };
            if let Err(e) = builder_store.set_bot_version_status(
                &builder_config.name,
                &job.bot,
                job.version,
                log.0,
                &log.1,
            ) {
                tracing::error!(
                    "cannot store the outcome of {} v{}: {e}",
                    job.bot,
                    job.version
                );
            }
        }
    });
    let app = App {
        config: config.clone(),
        store: Arc::new(Mutex::new(store)),
        builds: tx,
        data,
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

/// Build and check one version into `DATA/LADDER/BOT/vN`.
fn build_job(
    config: &LadderConfig,
    data: &std::path::Path,
    job: &Job,
) -> anyhow::Result<(VersionStatus, String)> {
    let dir = data.join(&config.name).join(&job.bot);
    std::fs::create_dir_all(&dir)?;
    let program = dir.join(format!("v{}", job.version));
    if program.exists() {
        // A version left half-built by a server that was killed.
        std::fs::remove_dir_all(&program)?;
    }
    let verdict = process_upload(config, &job.language, &job.upload, &program, &dir)?;
    let status = match verdict.status {
        Status::Active => VersionStatus::Active,
        Status::BuildFailed => VersionStatus::BuildFailed,
        Status::CheckFailed => VersionStatus::CheckFailed,
        Status::Refused => VersionStatus::Refused,
    };
    Ok((status, verdict.log))
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
    let mut store = app.store.lock().unwrap_or_else(|p| p.into_inner());
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
}

async fn version(
    State(app): State<App>,
    Path((ladder, bot, version)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> Response {
    if let Err(r) = check_ladder(&app, &ladder) {
        return r.into_response();
    }
    let user = match caller(&app, &headers) {
        Ok(u) => u,
        Err(r) => return r.into_response(),
    };
    let versions = {
        let mut store = app.store.lock().unwrap_or_else(|p| p.into_inner());
        match store.bot_versions(&ladder, &bot) {
            Ok(v) => v,
            Err(e) => return store_error(e),
        }
    };
    let Some(v) = versions.into_iter().find(|v| v.version == version) else {
        return error(StatusCode::NOT_FOUND, "no such version");
    };
    // A version's log is its owner's and the organiser's: anyone else is told it is not there.
    let allowed = user
        .as_ref()
        .is_some_and(|u| u.name == v.owner || u.role == LadderRole::Organiser);
    if !allowed {
        return error(StatusCode::NOT_FOUND, "no such version");
    }
    Json(json!({
        "bot": v.bot,
        "owner": v.owner,
        "version": v.version,
        "language": v.language,
        "status": v.status.as_str(),
        "log": v.log,
    }))
    .into_response()
}

async fn leaderboard(State(app): State<App>, Path(ladder): Path<String>) -> Response {
    if let Err(r) = check_ladder(&app, &ladder) {
        return r.into_response();
    }
    let active = {
        let mut store = app.store.lock().unwrap_or_else(|p| p.into_inner());
        match store.active_bot_versions(&ladder) {
            Ok(v) => v,
            Err(e) => return store_error(e),
        }
    };
    // No matches are played yet: every bot has the initial Weng-Lin rating and no games, so
    // all share rank 1.
    let initial = kakehiki_contest::ratings::weng_lin(1, &[])[0];
    let rows: Vec<serde_json::Value> = active
        .iter()
        .map(|v| {
            json!({
                "rank": 1,
                "bot": v.bot,
                "owner": v.owner,
                "version": v.version,
                "mu": initial.rating,
                "sigma": initial.uncertainty,
                "games": 0,
            })
        })
        .collect();
    Json(json!({ "ladder": ladder, "rows": rows })).into_response()
}
