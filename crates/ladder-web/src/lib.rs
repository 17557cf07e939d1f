//! The hosted ladder's web server (docs/ladder.md): the JSON API (uploads with a Bearer token,
//! versions, matches, the leaderboard), the public pages (leaderboard, a bot, a match) and the
//! contestants' and organisers' pages ([`pages`]). `kakehiki ladder serve` opens the store,
//! starts the builders, matchmaker and workers and serves [`router`].

pub mod cache;
pub mod kit;
pub mod pages;
pub mod people;
pub mod pool;
pub mod serve;

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use kakehiki_ladder::accounts::sha256_hex;
use kakehiki_ladder::LadderConfig;
use kakehiki_store::{LadderRole, LadderUser, Store, StoreError, VersionStatus};
use serde::{Deserialize, Serialize};
use serde_json::json;
use tower_http::set_header::SetResponseHeaderLayer;

use pool::StorePool;

/// The state of one ladder's handlers: the ladder (its file, its pages' cache, where its pages
/// are) and what every ladder of the server shares (the store, the accounts' pages, the list of
/// ladders).
#[derive(Clone)]
pub struct App {
    pub config: Arc<LadderConfig>,
    /// Connections for the request handlers.
    pub store: Arc<StorePool>,
    /// The web pages' templates, cookie settings and rate limits.
    pub web: Arc<pages::Web>,
    /// The leaderboard and bots' matches the public pages show, kept current by the ratings.
    pub cache: Arc<cache::Cache>,
    /// Where this ladder's pages are: `""` on a server of one ladder (its pages are at the
    /// root, and also under `/ladders/NAME/`), `/ladders/NAME` on a server of several.
    pub base: Arc<str>,
    /// The uploads of each account to this ladder in the last hour (`limits.uploads_per_hour`).
    pub(crate) uploads: Arc<pages::RateLimiter>,
    /// Every ladder of the server, in the order given.
    pub site: Arc<[Ladder]>,
    /// Whether the page is one of this ladder's (false for the account's pages at the root of
    /// a server of several ladders, which belong to none).
    pub in_ladder: bool,
    /// What the organiser's page needs to run a final (`None`: only `kakehiki ladder final`).
    pub finals: Option<Arc<Finals>>,
    /// The matches people play against the bots (`None`: people may not).
    pub people: Option<Arc<people::People>>,
}

/// What the server needs to run a ladder's final from the organiser's page, as `kakehiki
/// ladder final` does: where it unpacks programs, how it connects to the store, the store's
/// files no bot may see, and the finals being queued now.
pub struct Finals {
    pub data: std::path::PathBuf,
    pub connect: kakehiki_ladder::final_contest::Connector,
    pub store_files: Vec<std::path::PathBuf>,
    /// The ladders whose final is being queued (one at a time per ladder).
    pub(crate) running: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl Finals {
    pub fn new(
        data: std::path::PathBuf,
        connect: kakehiki_ladder::final_contest::Connector,
        store_files: Vec<std::path::PathBuf>,
    ) -> Finals {
        Finals {
            data,
            connect,
            store_files,
            running: std::sync::Mutex::new(std::collections::BTreeSet::new()),
        }
    }

    /// Mark the final of `ladder` as being queued; `false` when it already is.
    pub(crate) fn claim(&self, ladder: &str) -> bool {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(ladder.to_string())
    }

    /// The final of `ladder` is no longer being queued.
    pub(crate) fn release(&self, ladder: &str) {
        self.running
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(ladder);
    }
}

/// One ladder of the server, as [`App::site`] lists them.
#[derive(Clone)]
pub struct Ladder {
    pub config: Arc<LadderConfig>,
    pub cache: Arc<cache::Cache>,
    pub base: Arc<str>,
    uploads: Arc<pages::RateLimiter>,
}

/// Why a server's ladders cannot be served together.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("no ladder file was given")]
    Empty,
    #[error("two ladder files name the ladder {0:?}: each ladder needs its own name")]
    Duplicate(String),
}

/// Why the uploads a stopped server left could not be adopted.
#[derive(Debug, thiserror::Error)]
pub enum AdoptError {
    #[error("the store failed: {0}")]
    Store(#[from] StoreError),
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

/// Versions a stopped server left `building` without their upload in the store (it stopped
/// between taking the upload and keeping it): an upload a server of the previous kind kept at
/// `DATA/LADDER/BOT/vN.upload` is moved into the store; any other is failed with a log that says
/// to submit again.
pub fn adopt_lost_uploads(
    config: &LadderConfig,
    store: &mut dyn Store,
    data: &std::path::Path,
) -> Result<(), AdoptError> {
    let lost = store.ladder_builds_without_upload(&config.name)?;
    for (bot, version) in lost {
        let path = data
            .join(&config.name)
            .join(&bot)
            .join(format!("v{version}.upload"));
        match std::fs::read(&path) {
            Ok(upload) => {
                store.ladder_put_upload(&config.name, &bot, version, &upload)?;
                let _ = std::fs::remove_file(&path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let log = "the server stopped before this upload was saved: submit it again\n";
                store.set_bot_version_status(
                    &config.name,
                    &bot,
                    version,
                    VersionStatus::BuildFailed,
                    log,
                )?;
            }
            Err(e) => {
                return Err(AdoptError::Read { path, source: e });
            }
        }
    }
    Ok(())
}

impl App {
    /// The state of a server of one ladder, `config`; see [`App::site`].
    pub fn new(config: Arc<LadderConfig>, stores: Vec<Box<dyn Store>>, cookie_secure: bool) -> App {
        match App::site(vec![config], stores, cookie_secure) {
            Ok(mut apps) => apps.remove(0),
            Err(e) => unreachable!("one ladder is always a site: {e}"),
        }
    }

    /// The state of a server of the ladders `configs` (one [`App`] each, in their order), the
    /// request handlers' store connections `stores` (at least one) and whether cookies are
    /// marked `Secure`. One account and one API token serve every ladder.
    ///
    /// A thread per ladder keeps its pages' cache current ([`cache::Cache::start_refresher`]);
    /// tell it when the ratings moved with [`App::ratings_moved`].
    pub fn site(
        configs: Vec<Arc<LadderConfig>>,
        stores: Vec<Box<dyn Store>>,
        cookie_secure: bool,
    ) -> Result<Vec<App>, SiteError> {
        if configs.is_empty() {
            return Err(SiteError::Empty);
        }
        let mut names = std::collections::BTreeSet::new();
        for c in &configs {
            if !names.insert(c.name.as_str()) {
                return Err(SiteError::Duplicate(c.name.clone()));
            }
        }
        let store = Arc::new(StorePool::new(stores));
        let web = Arc::new(pages::Web::new(cookie_secure));
        let single = configs.len() == 1;
        let site: Arc<[Ladder]> = configs
            .iter()
            .map(|config| {
                let cache = Arc::new(cache::Cache::new(&config.name));
                cache::Cache::start_refresher(&cache, &store);
                Ladder {
                    config: config.clone(),
                    cache,
                    base: if single {
                        "".into()
                    } else {
                        format!("/ladders/{}", config.name).into()
                    },
                    uploads: Arc::new(pages::RateLimiter::new(
                        usize::try_from(config.limits.uploads_per_hour).unwrap_or(usize::MAX),
                        std::time::Duration::from_secs(3600),
                    )),
                }
            })
            .collect();
        let first = &site[0];
        let any = App {
            config: first.config.clone(),
            store,
            web,
            cache: first.cache.clone(),
            base: first.base.clone(),
            uploads: first.uploads.clone(),
            site: site.clone(),
            in_ladder: true,
            finals: None,
            people: None,
        };
        Ok(site.iter().map(|l| any.of(l)).collect())
    }

    /// The state of ladder `name` of this server, if it serves one of that name.
    pub fn ladder(&self, name: &str) -> Option<App> {
        let l = self.site.iter().find(|l| l.config.name == name)?;
        Some(self.of(l))
    }

    /// This server's state for its ladder `l`.
    fn of(&self, l: &Ladder) -> App {
        App {
            config: l.config.clone(),
            cache: l.cache.clone(),
            base: l.base.clone(),
            uploads: l.uploads.clone(),
            in_ladder: true,
            ..self.clone()
        }
    }

    /// This state with `finals`: the organiser's page runs finals.
    pub fn with_finals(self, finals: Arc<Finals>) -> App {
        App {
            finals: Some(finals),
            ..self
        }
    }

    /// This state with `people`: signed-in contestants may play the bots in their browser.
    pub fn with_people(self, people: Arc<people::People>) -> App {
        App {
            people: Some(people),
            ..self
        }
    }

    /// Whether the server serves several ladders (each under `/ladders/NAME/`).
    pub fn several(&self) -> bool {
        self.site.len() > 1
    }

    /// The ratings moved (results rated, entrants joined or left): the pages show it at once.
    pub fn ratings_moved(&self) {
        self.cache.notify();
    }
}

/// Every route of the server of `app`'s ladders (any [`App`] of [`App::site`]): the JSON API,
/// the public pages and the web pages, each answer with the headers of `with_security_headers`.
/// A server of one ladder serves its pages at the root (and the same pages under
/// `/ladders/NAME/`); a server of several lists them at `/` and serves each under
/// `/ladders/NAME/`. Accounts' pages (`/login`, `/me`, ...) and the API are at the root. Serve
/// it with [`serve::serve`], which gives the handlers the client's address (the login rate
/// limit counts per address).
pub fn router(app: App) -> Router {
    let api = Router::new()
        .route("/api/ladders/:ladder/leaderboard", get(leaderboard))
        .route("/api/ladders/:ladder/submissions", post(submit))
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
        .route(
            "/api/ladders/:ladder/matches/:index/events",
            get(match_events),
        )
        .route("/api/ladders/:ladder/running", get(running))
        .route("/api/ladders/:ladder/final", get(final_api))
        .route("/assets/:name", get(kakehiki_web::asset))
        .with_state(app.clone());
    let mut router = api;
    if app.several() {
        let root = App {
            in_ladder: false,
            ..app.clone()
        };
        router = router.merge(pages::account_routes().with_state(root.clone()));
        router = router.route("/", get(pages::site_home).with_state(root));
        for l in app.site.iter() {
            if let Some(ladder) = app.ladder(&l.config.name) {
                router = nest_ladder(router, &l.base, ladder);
            }
        }
    } else {
        let place = format!("/ladders/{}", app.config.name);
        router = router
            .merge(pages::account_routes().with_state(app.clone()))
            .merge(ladder_routes(app.clone()));
        router = nest_ladder(router, &place, app);
    }
    let router = router.layer(axum::middleware::map_response(plain_errors));
    with_security_headers(router)
}

/// `router` with ladder `app`'s pages under `place` (`/ladders/NAME`), its home page at
/// `place` and at `place/`.
fn nest_ladder(router: Router, place: &str, app: App) -> Router {
    router
        .route(
            &format!("{place}/"),
            get(pages::home).with_state(app.clone()),
        )
        .nest(place, ladder_routes(app))
}

/// The routes of one ladder's pages, relative to where they are ([`App::base`]).
fn ladder_routes(app: App) -> Router {
    let upload_limit = upload_limit(&app.config);
    Router::new()
        .route("/leaderboard", get(leaderboard_html))
        .route("/bots/:bot", get(bot_html))
        .route("/matches/:index", get(match_html))
        .route("/live", get(live_html))
        .route("/final", get(final_html))
        .route("/protocol", get(kit::protocol))
        .route("/starters/:language", get(kit::starter_file))
        .merge(pages::ladder_routes(upload_limit))
        .merge(people::routes())
        .with_state(app)
}

/// The headers every answer carries unless its handler set its own: nothing is cached (pages
/// and answers depend on who asks), nothing is framed, no content type is guessed, no address
/// leaks to other sites, and no script runs but the viewers' (the server's own assets, and the
/// one inline script by its hash).
fn with_security_headers(router: Router) -> Router {
    let csp = format!(
        "default-src 'none'; script-src 'self' {}; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; \
         form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
        kakehiki_web::script_hashes()
    );
    let csp = HeaderValue::from_str(&csp).unwrap_or(HeaderValue::from_static("default-src 'none'"));
    router
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            csp,
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::overriding(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
}

/// A refusal the framework wrote in plain text (a query, form or path that does not parse)
/// says what was wrong in general, never the input it quotes.
async fn plain_errors(response: Response) -> Response {
    let status = response.status();
    let plain = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/plain"));
    if !status.is_client_error() || !plain {
        return response;
    }
    let text = match status {
        StatusCode::BAD_REQUEST => "the request's query, path or form could not be read",
        StatusCode::PAYLOAD_TOO_LARGE => "the request's body is larger than this address takes",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            "the request's body is not of a type this address takes"
        }
        StatusCode::UNPROCESSABLE_ENTITY => "the request's fields are missing or of the wrong kind",
        StatusCode::REQUEST_TIMEOUT => "the request took too long to arrive or to answer",
        _ => status
            .canonical_reason()
            .unwrap_or("the request was refused"),
    };
    (status, format!("{} {text}\n", status.as_u16())).into_response()
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
        Ok(Some(user)) if user.disabled => Err(ApiError(
            StatusCode::FORBIDDEN,
            "this account is disabled by the ladder's organisers",
        )),
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
    let session = pages::session(app, headers).ok().flatten();
    let place = kakehiki_web::ladder::LadderVisitor {
        base: app.base.to_string(),
        several: app.several(),
        ..kakehiki_web::ladder::LadderVisitor::default()
    };
    let nav = match &session {
        Some((_, s)) => kakehiki_web::ladder::LadderVisitor {
            organiser: s.user.role == LadderRole::Organiser,
            user: Some(s.user.name.clone()),
            csrf: Some(s.csrf_token.clone()),
            play: app.people.is_some(),
            ..place
        },
        None => place,
    };
    let user = caller(app, headers)
        .ok()
        .flatten()
        .or(session.map(|(_, s)| s.user));
    (nav, user)
}

/// The state of ladder `ladder` of the server, or the API's 404.
fn check_ladder(app: &App, ladder: &str) -> Result<App, ApiError> {
    app.ladder(ladder)
        .ok_or(ApiError(StatusCode::NOT_FOUND, "no such ladder"))
}

#[derive(Deserialize)]
struct SubmitQuery {
    language: String,
}

/// `POST /api/ladders/L/submissions?language=X`: the caller's token is checked before a byte of
/// the body is read (a stranger's upload costs the server nothing), then at most the ladder's
/// upload limit is read.
async fn submit(
    State(app): State<App>,
    Path(ladder): Path<String>,
    Query(q): Query<SubmitQuery>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> Response {
    let app = match check_ladder(&app, &ladder) {
        Ok(app) => app,
        Err(r) => return r.into_response(),
    };
    let app2 = app.clone();
    let user = tokio::task::spawn_blocking(move || {
        caller(&app2, &headers)?.ok_or(ApiError(StatusCode::UNAUTHORIZED, "an API token is needed"))
    })
    .await;
    let user = match user {
        Ok(Ok(user)) => user,
        Ok(Err(r)) => return r.into_response(),
        Err(_) => return error(StatusCode::INTERNAL_SERVER_ERROR, "the request failed"),
    };
    let body = match axum::body::to_bytes(body, upload_limit(&app.config)).await {
        Ok(body) => body,
        Err(e) => return body_refused(&e),
    };
    blocking(move || {
        let version = match pages::accept_upload(&app, &user, &q.language, body) {
            Ok(v) => v,
            Err(e) => return e.json_response(),
        };
        let frozen = match frozen(&app) {
            Ok(f) => f,
            Err(e) => return store_error(e),
        };
        (
            StatusCode::ACCEPTED,
            Json(
                json!({ "bot": user.name, "version": version, "status": "building", "log": "",
                         "frozen": frozen }),
            ),
        )
            .into_response()
    })
    .await
}

/// The most bytes of a request that carries an upload: the ladder's `limits.upload_bytes`, and
/// 1 MiB for a form's fields and framing.
fn upload_limit(config: &LadderConfig) -> usize {
    usize::try_from(config.limits.upload_bytes)
        .unwrap_or(usize::MAX)
        .saturating_add(1 << 20)
}

/// Why a body could not be read: over the limit (413), or the client stopped sending (408 when
/// it sent nothing for the body timeout, 400 otherwise).
fn body_refused(e: &axum::Error) -> Response {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the upload is larger than the ladder's limit (limits.upload_bytes)",
            );
        }
        if err.is::<tower_http::timeout::TimeoutError>() {
            return error(
                StatusCode::REQUEST_TIMEOUT,
                "the upload stopped arriving: send it again",
            );
        }
        source = err.source();
    }
    error(
        StatusCode::BAD_REQUEST,
        "the upload could not be read: the connection ended before its body did",
    )
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

/// Whether the ladder is frozen (as the pages' memory has it: read again every second).
pub(crate) fn frozen(app: &App) -> Result<bool, StoreError> {
    Ok(app.cache.board(app.store.get().as_mut())?.frozen)
}

async fn version(
    State(app): State<App>,
    Path((ladder, bot, version)): Path<(String, String, u64)>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
        let v = match owned_version(&app, &headers, &ladder, &bot, version) {
            Ok(v) => v,
            Err(r) => return r.into_response(),
        };
        let frozen = match frozen(&app) {
            Ok(f) => f,
            Err(e) => return store_error(e),
        };
        Json(json!({
            "bot": v.bot,
            "owner": v.owner,
            "version": v.version,
            "language": v.language,
            "status": v.status.as_str(),
            "log": v.log,
            "frozen": frozen,
        }))
        .into_response()
    })
    .await
}

/// A version's upload, as received, as a download named after the bot, the version and what the
/// upload is (`alice-v3.zip`, `alice-v3.tar.gz`, or the language's entry file for one source
/// file). The caller has checked that the visitor may see it.
pub(crate) fn upload_download(app: &App, v: &kakehiki_store::BotVersion) -> Response {
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
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
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
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
        let (page, per) = q.page();
        let first = (page - 1).saturating_mul(per);
        let board = match app.cache.board(app.store.get().as_mut()) {
            Ok(b) => b,
            Err(e) => return store_error(e),
        };
        let json = board.rendered(cache::Rendered::Json, page, per, || {
            let (ratings, total) = board.page(first, per);
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
            json!({ "ladder": ladder, "frozen": board.frozen, "page": page, "per": per,
                    "total": total, "rows": rows })
            .to_string()
        });
        ([(header::CONTENT_TYPE, "application/json")], json).into_response()
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
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
        let limit = q.limit.unwrap_or(50).clamp(1, 500);
        let mut store = app.store.get();
        // The newest matches are kept in memory; older pages and longer ones are read.
        let tables = if q.before.is_none() && limit <= cache::BOT_MATCHES {
            app.cache.bot_tables(store.as_mut(), &bot, limit)
        } else {
            store.ladder_bot_tables(&ladder, &bot, q.before, limit)
        };
        let tables = match tables {
            Ok(v) => v,
            Err(e) => return store_error(e),
        };
        drop(store);
        let matches = group_tables(&bot, tables);
        Json(BotMatches {
            bot: &bot,
            ladder: &ladder,
            matches: matches.iter().map(BotMatchRow::of).collect(),
        })
        .into_response()
    })
    .await
}

/// The answer of `GET .../bots/BOT/matches`, written straight from the kept rows (it is asked
/// for as often as the bot's page). Fields in the order its keys have always had.
#[derive(Serialize)]
struct BotMatches<'a> {
    bot: &'a str,
    ladder: &'a str,
    matches: Vec<BotMatchRow<'a>>,
}

/// One match of a bot: its own seat's result and rating after, and every seat of the table.
#[derive(Serialize)]
struct BotMatchRow<'a> {
    errors: u64,
    index: u64,
    mu_after: f64,
    place: u64,
    played_at: i64,
    score: f64,
    seat: usize,
    seats: Vec<TableSeat<'a>>,
    sigma_after: f64,
    version: u64,
}

#[derive(Serialize)]
struct TableSeat<'a> {
    bot: &'a str,
    errors: u64,
    place: u64,
    score: f64,
    seat: usize,
    version: u64,
}

impl<'a> BotMatchRow<'a> {
    fn of(m: &'a kakehiki_web::ladder::BotMatch) -> Self {
        let s = &m.mine;
        BotMatchRow {
            errors: s.errors,
            index: s.index,
            mu_after: s.mu_after,
            place: s.place,
            played_at: s.played_at,
            score: s.score,
            seat: s.seat,
            seats: m
                .table
                .iter()
                .map(|t| TableSeat {
                    bot: &t.bot,
                    errors: t.errors,
                    place: t.place,
                    score: t.score,
                    seat: t.seat,
                    version: t.version,
                })
                .collect(),
            sigma_after: s.sigma_after,
            version: s.version,
        }
    }
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

/// Each seat's bot (from its entrant's name, `BOT@vN`, or the built-in itself), and which
/// seats' stderr `user` may read: their own bot's, or all for an organiser.
fn seats_seen(
    store: &mut dyn kakehiki_store::Store,
    ladder: &str,
    entrants: &[String],
    user: Option<&LadderUser>,
) -> (Vec<String>, Vec<bool>) {
    let bots: Vec<String> = entrants
        .iter()
        .map(|name| kakehiki_store::entrant_bot(name).0.to_string())
        .collect();
    let mut visible = vec![false; entrants.len()];
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
    (bots, visible)
}

/// The match `index` of `ladder` being played, if it is (its result not stored yet).
fn live_match(ladder: &str, index: u64) -> Option<std::sync::Arc<kakehiki_core::live::LiveMatch>> {
    kakehiki_core::live::registry().get(&kakehiki_store::ladder_contest(ladder), index)
}

/// `GET /api/ladders/NAME/matches/N/events`: the match's events as they are played
/// (`kakehiki_web::live`; `?after=K` leaves out the first K, which a live page shows), or a
/// stored match's replay; each seat's stderr only for its owner (a session or an API token) and
/// the organisers.
async fn match_events(
    State(app): State<App>,
    Path((ladder, index)): Path<(String, u64)>,
    Query(q): Query<AfterQuery>,
    headers: HeaderMap,
) -> Response {
    blocking(move || {
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
        let (_, user) = page_visitor(&app, &headers);
        let from = kakehiki_web::live::resume_of(&headers, q.after);
        // Stored: its replay. Else being played: its stream.
        match seen_match(&app, &ladder, index, user.as_ref()) {
            Ok(m) => kakehiki_web::live::stored_events(&m.replay, from),
            Err(ApiError(StatusCode::NOT_FOUND, _)) => match live_match(&ladder, index) {
                Some(live) => {
                    let visible = live_visible(&app, &ladder, &live, user.as_ref());
                    kakehiki_web::live::live_events(&live, visible, from)
                }
                None => ApiError(
                    StatusCode::NOT_FOUND,
                    "no such match (not played yet, or never)",
                )
                .into_response(),
            },
            Err(r) => r.into_response(),
        }
    })
    .await
}

/// Which seats' stderr `user` may read in the running match `live` ([`seats_seen`]).
fn live_visible(
    app: &App,
    ladder: &str,
    live: &kakehiki_core::live::LiveMatch,
    user: Option<&LadderUser>,
) -> Vec<bool> {
    let mut store = app.store.get();
    seats_seen(&mut **store, ladder, &live.info.entrants, user).1
}

#[derive(Deserialize)]
struct AfterQuery {
    after: Option<usize>,
}

/// `GET /api/ladders/NAME/running`: the matches being played now, each with its page and its
/// event stream.
async fn running(State(app): State<App>, Path(ladder): Path<String>) -> Response {
    let app = match check_ladder(&app, &ladder) {
        Ok(app) => app,
        Err(r) => return r.into_response(),
    };
    Json(json!({ "ladder": ladder, "running": running_list(&app, &ladder) })).into_response()
}

/// The running matches of `ladder` as the API and the pages list them.
fn running_list(app: &App, ladder: &str) -> Vec<serde_json::Value> {
    let contest = kakehiki_store::ladder_contest(ladder);
    kakehiki_core::live::registry()
        .running(&contest)
        .iter()
        .map(|m| {
            let page = format!("{}/matches/{}", app.base, m.info.index);
            let events = format!("/api/ladders/{ladder}/matches/{}/events", m.info.index);
            kakehiki_web::live::running_json(&m.info, &page, &events)
        })
        .collect()
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
    let (bots, visible) = seats_seen(&mut **store, ladder, &result.entrants, user);
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
    let replay = kakehiki_core::exchange::hide_stderr(&replay, &visible);
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
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
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

/// A ladder's final as its site shows it: the contest's name, format, matches stored and
/// scheduled, whether it is complete, and its rows with the ladder's tie-break applied.
struct FinalStanding {
    contest: String,
    format: String,
    stored: usize,
    scheduled: usize,
    complete: bool,
    rows: Vec<kakehiki_web::ladder::FinalRow>,
    /// The play-offs of its ties stored so far (a `playoff` ladder).
    playoffs: Vec<kakehiki_web::ladder::Playoff>,
}

/// The final of `app`'s ladder, or `None` before `kakehiki ladder final` stored it.
fn final_standing(app: &App) -> Result<Option<FinalStanding>, ApiError> {
    let contest = kakehiki_ladder::final_contest::final_contest_name(&app.config.name);
    let mut store = app.store.get();
    if store.contest(&contest).map_err(store_failed)?.is_none() {
        return Ok(None);
    }
    let unreadable = |e: kakehiki_contest::RunError| {
        tracing::error!("the final {contest}: {e}");
        ApiError(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the final could not be read",
        )
    };
    use kakehiki_ladder::final_contest::{playoff_name, stored_standings, tied_groups};
    let standings = stored_standings(store.as_mut(), &contest).map_err(unreadable)?;
    // The play-offs of its ties: a complete one orders its group.
    let mut playoffs = Vec::new();
    let mut order = std::collections::BTreeMap::new();
    for (rank, _) in tied_groups(&standings) {
        let name = playoff_name(&contest, rank);
        if store.contest(&name).map_err(store_failed)?.is_none() {
            continue;
        }
        let p = stored_standings(store.as_mut(), &name).map_err(unreadable)?;
        if p.complete {
            order.insert(
                rank,
                p.rows.iter().map(|r| (r.entrant.clone(), r.rank)).collect(),
            );
        }
        playoffs.push(kakehiki_web::ladder::Playoff {
            contest: name,
            rank,
            stored: p.matches_stored,
            scheduled: p.matches_scheduled,
            complete: p.complete,
        });
    }
    // The ladder ratings as the ladder froze (the final froze it: no match was rated since).
    let board = app.cache.board(store.as_mut()).map_err(store_failed)?;
    drop(store);
    let rating_of = |bot: &str, version: Option<u64>| {
        board
            .bot(bot)
            .filter(|(_, r)| version.is_none_or(|v| v == r.version))
            .map(|(_, r)| r.conservative())
    };
    let break_ties = app.config.final_tie_break.by_rating();
    Ok(Some(FinalStanding {
        rows: kakehiki_web::ladder::final_rows(&standings, rating_of, &order, break_ties),
        playoffs,
        contest,
        format: standings.format,
        stored: standings.matches_stored,
        scheduled: standings.matches_scheduled,
        complete: standings.complete,
    }))
}

/// `GET /final`: the final's standings, for everyone.
async fn final_html(State(app): State<App>, headers: HeaderMap) -> Response {
    blocking(move || {
        let (me, _) = page_visitor(&app, &headers);
        match final_standing(&app) {
            Ok(Some(f)) => page(
                StatusCode::OK,
                kakehiki_web::ladder::final_page(
                    &app.config.name,
                    &f.contest,
                    &f.format,
                    &f.rows,
                    f.stored,
                    f.scheduled,
                    f.complete,
                    &f.playoffs,
                    app.config.final_tie_break.name(),
                    &me,
                ),
            ),
            Ok(None) => {
                not_found("no final yet: the organiser runs it with `kakehiki ladder final`")
            }
            Err(e) => e.into_response(),
        }
    })
    .await
}

/// `GET /api/ladders/LADDER/final`: the final's standings as JSON.
async fn final_api(State(app): State<App>, Path(ladder): Path<String>) -> Response {
    blocking(move || {
        let app = match check_ladder(&app, &ladder) {
            Ok(app) => app,
            Err(r) => return r.into_response(),
        };
        match final_standing(&app) {
            Ok(Some(f)) => Json(json!({
                "ladder": ladder, "contest": f.contest, "format": f.format,
                "matches_stored": f.stored, "matches_scheduled": f.scheduled,
                "complete": f.complete, "rows": f.rows, "playoffs": f.playoffs,
                "tie_break": app.config.final_tie_break.name(),
            }))
            .into_response(),
            Ok(None) => error(StatusCode::NOT_FOUND, "no final yet"),
            Err(e) => e.into_response(),
        }
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

/// Seconds since the Unix epoch (0 before it).
pub(crate) fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// `GET /live`: the ladder's matches being played now, each linked to its live page.
async fn live_html(State(app): State<App>, headers: HeaderMap) -> Response {
    blocking(move || {
        let (me, _) = page_visitor(&app, &headers);
        let running = running_list(&app, &app.config.name);
        let now_ms = now_secs().max(0) as u64 * 1000;
        page(
            StatusCode::OK,
            kakehiki_web::ladder::live_list_page(&app.config.name, &running, now_ms, &me),
        )
    })
    .await
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
        let board = match app.cache.board(app.store.get().as_mut()) {
            Ok(b) => b,
            Err(e) => return store_error(e),
        };
        let (ratings, total) = board.page((number - 1).saturating_mul(per), per);
        let render = || {
            kakehiki_web::ladder::leaderboard_page(
                &app.config.name,
                &app.config.game,
                &app.config.rules,
                board.frozen,
                ratings,
                now_secs(),
                number as usize,
                per as usize,
                total as usize,
                &me,
            )
        };
        // The same page for everyone not signed in: made once per board.
        let html = match me.user {
            None => board.rendered(cache::Rendered::Html, number, per, render),
            Some(_) => render().into(),
        };
        (StatusCode::OK, axum::response::Html(html)).into_response()
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
const BOT_PAGE_MATCHES: usize = cache::BOT_MATCHES;

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
        // The rating, rank and newest matches from memory; the versions only for whom they
        // are shown (their owner, an organiser) or to tell a bot with nothing from none.
        let board = match app.cache.board(store.as_mut()) {
            Ok(b) => b,
            Err(e) => return store_error(e),
        };
        let row = board.bot(&bot);
        let tables = match q.before {
            None => app.cache.bot_tables(store.as_mut(), &bot, BOT_PAGE_MATCHES),
            Some(_) => store.ladder_bot_tables(&ladder, &bot, q.before, BOT_PAGE_MATCHES),
        };
        let tables = match tables {
            Ok(v) => v,
            Err(e) => return store_error(e),
        };
        let matches = group_tables(&bot, tables);
        // Every version that took part, compared on the page.
        let compared = match bot.starts_with("builtin:") {
            true => Vec::new(),
            false => match store.ladder_bot_ratings(&ladder, &bot) {
                Ok(v) => v,
                Err(e) => return store_error(e),
            },
        };
        let versions = if bot.starts_with("builtin:") || (user.is_none() && row.is_some()) {
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
                row,
                &compared,
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
                // Being played: its live page.
                if let Some(live) = live_match(&ladder, index) {
                    let visible = live_visible(&app, &ladder, &live, user.as_ref());
                    let (so_far, shown) = kakehiki_web::live::public_so_far(&live);
                    let so_far = kakehiki_core::exchange::hide_stderr(&so_far, &visible);
                    let events = format!("/api/ladders/{ladder}/matches/{index}/events");
                    return page(
                        StatusCode::OK,
                        kakehiki_web::ladder::live_match_page(
                            &ladder, &live.info, &so_far, shown, &events, &me,
                        ),
                    );
                }
                return not_found("no such match (not played yet, or never)");
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
