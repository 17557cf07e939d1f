//! `kakehiki ladder serve`'s web pages (docs/ladder.md, "Web pages"): sign-up with the one-time
//! link, login and logout with a session cookie, a CSRF token on every form, rate limits on
//! login and uploads, the contestant's page with the upload form, a version's page (its owner's
//! and the organisers' only) and the organiser's page. Every value shown is escaped by the
//! templates (minijinja's auto-escaping).

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{ConnectInfo, DefaultBodyLimit, Multipart, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use kakehiki_ladder::accounts::{self, random_hex, sha256_hex, AccountError};
use kakehiki_ladder::config::LadderTransport;
use kakehiki_store::{
    BotVersion, LadderRole, LadderSession, LadderUser, NewBotVersion, StoreError, VersionStatus,
};
use minijinja::{context, Environment};
use serde::Deserialize;
use serde_json::json;

use kakehiki_core::same_secret;

use crate::{now_secs, App};

/// The session cookie: 64 random hex digits; the store keeps only their SHA-256.
pub const SESSION_COOKIE: &str = "kk_session";
/// The pre-session CSRF cookie of the sign-up and login forms (double submit: the form's hidden
/// field must equal it).
pub const PRE_SESSION_COOKIE: &str = "kk_csrf";
/// The session cookie's name under `--cookie-secure`.
pub const SECURE_SESSION_COOKIE: &str = "__Host-kk_session";
/// The pre-session cookie's name under `--cookie-secure`.
pub const SECURE_PRE_SESSION_COOKIE: &str = "__Host-kk_csrf";
/// How long a session lasts.
pub const SESSION_SECONDS: i64 = 7 * 24 * 3600;
/// Login attempts allowed per account name in [`LOGIN_WINDOW`].
pub const LOGIN_PER_NAME: usize = 10;
/// Login attempts and sign-ups allowed per client address in [`LOGIN_WINDOW`] (more than per
/// name: a classroom behind one address logs in at once).
pub const LOGIN_PER_ADDRESS: usize = 60;
pub const LOGIN_WINDOW: Duration = Duration::from_secs(60);

/// The most keys a [`RateLimiter`] holds (about 1 MB): past it, once the keys out of their
/// window are dropped, a new key is refused until one leaves (a flood of names fails closed,
/// never open, and never grows the server).
pub const RATE_KEYS: usize = 10_000;

/// Keys longer than this are counted by their SHA-256 (every name and address is shorter).
const RATE_KEY_BYTES: usize = 64;

/// A limit of `limit` events per key in any `window`: a sliding window of the times of the
/// events allowed (refused ones are not counted, so waiting always helps). At most
/// [`RATE_KEYS`] keys of at most 64 bytes each; keys out of their window are dropped once per
/// window.
pub struct RateLimiter {
    limit: usize,
    window: Duration,
    keys: usize,
    hits: Mutex<Hits>,
}

struct Hits {
    times: HashMap<String, VecDeque<Instant>>,
    purged: Option<Instant>,
}

impl RateLimiter {
    pub fn new(limit: usize, window: Duration) -> RateLimiter {
        RateLimiter::with_keys(limit, window, RATE_KEYS)
    }

    /// A limiter holding at most `keys` keys.
    pub fn with_keys(limit: usize, window: Duration, keys: usize) -> RateLimiter {
        RateLimiter {
            limit,
            window,
            keys,
            hits: Mutex::new(Hits {
                times: HashMap::new(),
                purged: None,
            }),
        }
    }

    /// Count an event of `key` at `now`, or refuse it with how long to wait before the next one
    /// is allowed.
    pub fn hit(&self, key: &str, now: Instant) -> Result<(), Duration> {
        let key = if key.len() > RATE_KEY_BYTES {
            sha256_hex(key)
        } else {
            key.to_string()
        };
        let mut hits = self.hits.lock().unwrap_or_else(|p| p.into_inner());
        let window = self.window;
        let expired = |t: &Instant| now.saturating_duration_since(*t) >= window;
        let due = hits
            .purged
            .is_none_or(|t| now.saturating_duration_since(t) >= window);
        if due || (hits.times.len() >= self.keys && !hits.times.contains_key(&key)) {
            hits.times
                .retain(|_, times| times.back().is_some_and(|t| !expired(t)));
            hits.purged = Some(now);
        }
        if hits.times.len() >= self.keys && !hits.times.contains_key(&key) {
            // Full of keys still in their window: wait until the oldest could have left.
            let oldest = hits
                .times
                .values()
                .filter_map(|t| t.back().copied())
                .min()
                .unwrap_or(now);
            return Err(window.saturating_sub(now.saturating_duration_since(oldest)));
        }
        let times = hits.times.entry(key).or_default();
        while times.front().is_some_and(expired) {
            times.pop_front();
        }
        if times.len() >= self.limit {
            let oldest = times.front().copied().unwrap_or(now);
            return Err(window.saturating_sub(now.saturating_duration_since(oldest)));
        }
        times.push_back(now);
        Ok(())
    }

    /// Keys held now.
    pub fn len(&self) -> usize {
        self.hits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .times
            .len()
    }

    /// Whether no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Passwords hashed or checked at once (argon2 takes 19 MiB and tens of milliseconds each):
/// one more is answered `503` at once, never queued.
pub fn password_slots() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4))
}

/// What the pages add to the server: templates, cookie settings and the rate limits.
pub struct Web {
    cookie_secure: bool,
    /// The cookies' names: `__Host-` ones when `cookie_secure` (the browser then keeps them to
    /// this host, `Secure` and `Path=/`).
    session_cookie: &'static str,
    pre_session_cookie: &'static str,
    /// Argon2 runs at once ([`password_slots`]).
    passwords: tokio::sync::Semaphore,
    login_by_ip: RateLimiter,
    login_by_name: RateLimiter,
    env: Environment<'static>,
}

impl Web {
    /// `cookie_secure` marks the cookies `Secure` (sent over HTTPS only).
    pub fn new(cookie_secure: bool) -> Web {
        let mut env = Environment::new();
        for (name, source) in TEMPLATES {
            if let Err(e) = env.add_template(name, source) {
                // The templates are constants of this file; a test renders each one.
                unreachable!("template {name}: {e}");
            }
        }
        Web {
            cookie_secure,
            session_cookie: if cookie_secure {
                SECURE_SESSION_COOKIE
            } else {
                SESSION_COOKIE
            },
            pre_session_cookie: if cookie_secure {
                SECURE_PRE_SESSION_COOKIE
            } else {
                PRE_SESSION_COOKIE
            },
            passwords: tokio::sync::Semaphore::new(password_slots()),
            login_by_ip: RateLimiter::new(LOGIN_PER_ADDRESS, LOGIN_WINDOW),
            login_by_name: RateLimiter::new(LOGIN_PER_NAME, LOGIN_WINDOW),
            env,
        }
    }
}

/// The accounts' pages, at the root of the server: one account serves every ladder.
pub(super) fn account_routes() -> Router<App> {
    Router::new()
        .route("/signup", get(signup_form).post(signup))
        .route("/login", get(login_form).post(login))
        .route("/logout", post(logout))
        .route("/me", get(me))
        .route("/password", post(change_password))
        .route("/me/token", post(new_token))
}

/// One ladder's pages, relative to where the ladder is ([`App::base`]); `upload_limit` bounds
/// the upload form's body.
pub(super) fn ladder_routes(upload_limit: usize) -> Router<App> {
    Router::new()
        .route("/", get(home))
        .route(
            "/upload",
            // The form's fields and multipart framing come on top of the file.
            post(upload).layer(DefaultBodyLimit::max(upload_limit.saturating_add(64 << 10))),
        )
        .route("/bots/:bot/versions/:version", get(version_page))
        .route(
            "/bots/:bot/versions/:version/upload",
            get(version_upload_page),
        )
        .route("/organiser", get(organiser))
        .route("/organiser/accounts/:name", post(organiser_account))
        .route("/organiser/bots/:name", post(organiser_bot))
        .route("/organiser/ladder", post(organiser_ladder))
        .route("/organiser/invite", post(organiser_invite))
        .route("/organiser/final", post(organiser_final))
}

// ------------------------------------------------------------------------------------ uploads

/// Why an upload (through the API or the form) was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    #[error("too many uploads: at most {limit} an hour; try again in {} s", retry_seconds(*.retry_after))]
    TooMany { limit: u64, retry_after: Duration },
    #[error("{0}")]
    OwnedByOther(StoreError),
    #[error("the store failed")]
    Store(StoreError),
    #[error("the upload could not be saved")]
    NotSaved,
    #[error("your bot's uploads and programs take {used} bytes of your {quota} (limits.account_mib): the oldest are pruned after {days} days")]
    Quota { used: u64, quota: u64, days: u64 },
}

impl UploadError {
    pub fn status(&self) -> StatusCode {
        match self {
            UploadError::TooMany { .. } => StatusCode::TOO_MANY_REQUESTS,
            UploadError::OwnedByOther(_) => StatusCode::FORBIDDEN,
            UploadError::Quota { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            UploadError::Store(_) | UploadError::NotSaved => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The API's answer: `{"error": ...}` (with `Retry-After` when rate-limited).
    pub fn json_response(&self) -> Response {
        let mut r = (self.status(), Json(json!({ "error": self.to_string() }))).into_response();
        if let UploadError::TooMany { retry_after, .. } = self {
            r.headers_mut()
                .insert(header::RETRY_AFTER, retry_seconds(*retry_after).into());
        }
        r
    }
}

/// Whole seconds to wait, at least 1.
fn retry_seconds(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}

/// Take an upload of `user`'s bot (the API's and the form's): counted against
/// `limits.uploads_per_hour`, stored as a new version `building`, saved, and queued for its
/// build and check. Returns the version number.
pub(super) fn accept_upload(
    app: &App,
    user: &LadderUser,
    language: &str,
    body: Bytes,
) -> Result<u64, UploadError> {
    app.uploads
        .hit(&user.name, Instant::now())
        .map_err(|retry_after| UploadError::TooMany {
            limit: app.config.limits.uploads_per_hour,
            retry_after,
        })?;
    let ladder = &app.config.name;
    let quota = app.config.limits.account_mib.saturating_mul(1 << 20);
    let used = {
        let mut store = app.store.get();
        store.ladder_bot_storage(ladder, &user.name).map_err(|e| {
            tracing::error!("store: {e}");
            UploadError::Store(e)
        })?
    };
    if used.saturating_add(body.len() as u64) > quota {
        return Err(UploadError::Quota {
            used,
            quota,
            days: app.config.limits.retention_days,
        });
    }
    let new = NewBotVersion {
        ladder: ladder.clone(),
        // One bot per contestant and ladder, named after them.
        bot: user.name.clone(),
        owner: user.name.clone(),
        language: language.to_string(),
        source_sha256: accounts::sha256_bytes_hex(&body),
    };
    let version = {
        let mut store = app.store.get();
        store.add_bot_version(&new).map_err(|e| match e {
            e @ StoreError::BotOwnedByOther { .. } => UploadError::OwnedByOther(e),
            e => {
                tracing::error!("store: {e}");
                UploadError::Store(e)
            }
        })?
    };
    // Kept in the store, where a builder on any machine claims it.
    let mut store = app.store.get();
    if let Err(e) = store.ladder_put_upload(ladder, &user.name, version, &body) {
        tracing::error!(
            "store: cannot keep the upload of {} v{version}: {e}",
            user.name
        );
        let _ = store.set_bot_version_status(
            ladder,
            &user.name,
            version,
            VersionStatus::BuildFailed,
            "the server could not keep this upload: submit it again\n",
        );
        return Err(UploadError::NotSaved);
    }
    Ok(version)
}

// ------------------------------------------------------------------------ cookies and sessions

/// The value of cookie `name` in the request's `Cookie` headers (parsed by the `cookie` crate;
/// a pair it cannot parse is skipped).
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(cookie::Cookie::split_parse)
        .filter_map(Result::ok)
        .find(|c| c.name() == name)
        .and_then(|c| c.value_raw())
}

/// A cookie of 64 hex digits (anything else is ignored: never stored, never echoed).
fn secret_cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    cookie(headers, name).filter(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A `Set-Cookie` value: always `HttpOnly` and `Path=/`; `Secure` when `secure`.
fn set_cookie(
    name: &str,
    value: &str,
    same_site: cookie::SameSite,
    max_age: Option<i64>,
    secure: bool,
) -> HeaderValue {
    let mut c = cookie::Cookie::build((name, value))
        .http_only(true)
        .same_site(same_site)
        .path("/")
        .secure(secure);
    if let Some(age) = max_age {
        c = c.max_age(cookie::time::Duration::seconds(age));
    }
    HeaderValue::from_str(&c.build().to_string()).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The request's session, if its cookie names a live one; with the cookie's hash.
pub(super) fn session(
    app: &App,
    headers: &HeaderMap,
) -> Result<Option<(String, LadderSession)>, StoreError> {
    let Some(id) = secret_cookie(headers, app.web.session_cookie) else {
        return Ok(None);
    };
    let hash = sha256_hex(id);
    let mut store = app.store.get();
    Ok(store
        .ladder_session(&hash, now_secs())?
        .filter(|s| !s.user.disabled)
        .map(|s| (hash, s)))
}

/// Start a session of `name`: its `Set-Cookie`.
fn start_session(app: &App, name: &str) -> Result<HeaderValue, StoreError> {
    let id = random_hex();
    let csrf = random_hex();
    let mut store = app.store.get();
    store.create_ladder_session(&sha256_hex(&id), name, &csrf, now_secs() + SESSION_SECONDS)?;
    Ok(set_cookie(
        app.web.session_cookie,
        &id,
        cookie::SameSite::Lax,
        Some(SESSION_SECONDS),
        app.web.cookie_secure,
    ))
}

/// The pre-session CSRF token of the sign-up and login forms: the browser's `kk_csrf` cookie,
/// or a new one with the `Set-Cookie` that gives it.
fn pre_session_token(app: &App, headers: &HeaderMap) -> (String, Option<HeaderValue>) {
    match secret_cookie(headers, app.web.pre_session_cookie) {
        Some(t) => (t.to_string(), None),
        None => {
            let t = random_hex();
            let c = set_cookie(
                app.web.pre_session_cookie,
                &t,
                cookie::SameSite::Strict,
                None,
                app.web.cookie_secure,
            );
            (t, Some(c))
        }
    }
}

/// Whether the form's token is the pre-session cookie's (sign-up and login).
fn pre_session_ok(app: &App, headers: &HeaderMap, given: &str) -> bool {
    secret_cookie(headers, app.web.pre_session_cookie).is_some_and(|t| same_secret(t, given))
}

fn csrf_refused(app: &App) -> Response {
    message(
        app,
        None,
        StatusCode::FORBIDDEN,
        "Refused",
        "this form's CSRF token is missing or wrong: reload the page and submit the form again",
    )
}

// ----------------------------------------------------------------------------------- rendering

/// A rendered page. The router adds what every answer has (no caching, no framing, nosniff:
/// `crate::router`); a contestant's page runs no script at all, so its policy is stricter than
/// the public pages'.
fn html(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    r
}

/// Render template `name` with the base context (ladder, the signed-in account) and `ctx`.
fn render(
    app: &App,
    viewer: Option<&LadderSession>,
    status: StatusCode,
    name: &str,
    ctx: minijinja::Value,
) -> Response {
    let base = context! {
        ladder => if app.in_ladder { app.config.name.as_str() } else { "Kakehiki ladders" },
        game => &app.config.game,
        // Only `""` or `/ladders/` and a ladder's name (letters, digits, `-`, `_`).
        base => minijinja::Value::from_safe_string(app.base.to_string()),
        several => app.several(),
        in_ladder => app.in_ladder,
        style => STYLE,
        user => viewer.map(|s| &s.user.name),
        organiser => viewer.is_some_and(|s| s.user.role == LadderRole::Organiser),
        csrf => viewer.map(|s| &s.csrf_token),
    };
    let rendered = app
        .web
        .env
        .get_template(name)
        .and_then(|t| t.render(context! { ..ctx, ..base }));
    match rendered {
        Ok(body) => html(status, body),
        Err(e) => {
            tracing::error!("template {name}: {e:#}");
            html(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the page could not be rendered".into(),
            )
        }
    }
}

/// A page with a title and one message.
pub(crate) fn message(
    app: &App,
    viewer: Option<&LadderSession>,
    status: StatusCode,
    title: &str,
    text: &str,
) -> Response {
    render(
        app,
        viewer,
        status,
        "message.html",
        context! { title, text },
    )
}

fn store_failed(app: &App, e: StoreError) -> Response {
    tracing::error!("store: {e}");
    message(
        app,
        None,
        StatusCode::INTERNAL_SERVER_ERROR,
        "Error",
        "the store failed",
    )
}

/// The answer for a version (or bot) that does not exist or that the viewer may not see: the
/// same page either way.
fn not_found(app: &App, viewer: Option<&LadderSession>) -> Response {
    message(
        app,
        viewer,
        StatusCode::NOT_FOUND,
        "Not found",
        "there is no such page",
    )
}

pub(crate) fn see_other(to: &str, cookies: impl IntoIterator<Item = HeaderValue>) -> Response {
    let mut r = StatusCode::SEE_OTHER.into_response();
    let h = r.headers_mut();
    h.insert(
        header::LOCATION,
        HeaderValue::from_str(to).unwrap_or_else(|_| HeaderValue::from_static("/")),
    );
    for c in cookies {
        h.append(header::SET_COOKIE, c);
    }
    r
}

fn with_cookie(mut r: Response, cookie: Option<HeaderValue>) -> Response {
    if let Some(c) = cookie {
        r.headers_mut().append(header::SET_COOKIE, c);
    }
    r
}

fn too_many(app: &App, viewer: Option<&LadderSession>, what: &str, wait: Duration) -> Response {
    let secs = retry_seconds(wait);
    let mut r = message(
        app,
        viewer,
        StatusCode::TOO_MANY_REQUESTS,
        "Too many attempts",
        &format!("{what}: try again in {secs} s"),
    );
    r.headers_mut().insert(header::RETRY_AFTER, secs.into());
    r
}

/// A turn to hash or check a password ([`password_slots`] at once), or `None` when the server
/// is busy with others ([`busy`]): a burst of logins costs a bounded share of memory and CPU,
/// never a queue.
fn password_turn(app: &App) -> Option<tokio::sync::SemaphorePermit<'_>> {
    app.web.passwords.try_acquire().ok()
}

/// The `503` of a password that could not be checked just now.
fn busy(app: &App, viewer: Option<&LadderSession>) -> Response {
    let mut r = message(
        app,
        viewer,
        StatusCode::SERVICE_UNAVAILABLE,
        "Busy",
        "the server is checking other passwords just now: try again in a few seconds",
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("2"));
    r
}

/// Run a handler's work on a thread that may block (the store is synchronous, and PostgreSQL's
/// client may not run inside the server's runtime; argon2 takes tens of milliseconds of CPU).
pub(crate) async fn on_thread(f: impl FnOnce() -> Response + Send + 'static) -> Response {
    tokio::task::spawn_blocking(f)
        .await
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// Run `f` (argon2: tens of milliseconds of CPU) off the async workers.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    tokio::task::spawn_blocking(f).await.ok()
}

// --------------------------------------------------------------------------------------- pages

/// The signed-in viewer or the response to give (a store failure).
macro_rules! viewer {
    ($app:expr, $headers:expr) => {
        match session(&$app, &$headers) {
            Ok(s) => s,
            Err(e) => return store_failed(&$app, e),
        }
    };
}

pub(super) async fn home(State(app): State<App>, headers: HeaderMap) -> Response {
    on_thread(move || {
        let viewer = viewer!(app, headers);
        render(
            &app,
            viewer.as_ref().map(|v| &v.1),
            StatusCode::OK,
            "home.html",
            context! {
                title => format!("Ladder {}", app.config.name),
                languages => app.config.language_names(),
                leaderboard => format!("{}/leaderboard", app.base),
                rules => &app.config.rules,
                recipes => app.config.languages.iter().map(|(l, r)| context! {
                    name => l,
                    main => &r.main,
                    build => &r.build,
                    run => app.config.transport.run_line(&r.run),
                    starter => crate::kit::starter(&app.config.game, l).is_some(),
                }).collect::<Vec<_>>(),
                transport => match app.config.transport {
                    LadderTransport::Pipe => "It reads the referee's lines on its standard input and answers on its standard output.",
                    LadderTransport::Tcp => "It is started with the address to connect to (<code>{host} {port}</code> in its command line below) and connects over TCP, in the contest's own protocol.",
                    LadderTransport::Ws => "It is started with the WebSocket URL to connect to (<code>{url}</code> in its command line below) and connects, in the contest's own protocol.",
                    LadderTransport::Daide => "It is started with the address of its DAIDE server (<code>{host} {port}</code> in its command line below) and connects as a DAIDE client.",
                },
                protocol => crate::kit::doc(&app.config.game).is_some(),
                options => app.config.options.iter().map(|(k, v)| format!("{k} = {v}")).collect::<Vec<_>>(),
                thinking_seconds => app.config.thinking_seconds,
                upload_bytes => app.config.limits.upload_bytes,
            },
        )
    })
    .await
}

/// `/` on a server of several ladders: each with its game, its entrants and whether it plays.
pub(super) async fn site_home(State(app): State<App>, headers: HeaderMap) -> Response {
    on_thread(move || {
        let viewer = viewer!(app, headers);
        let mut ladders = Vec::with_capacity(app.site.len());
        for l in app.site.iter() {
            let board = {
                let mut store = app.store.get();
                l.cache.board(store.as_mut())
            };
            let board = match board {
                Ok(b) => b,
                Err(e) => return store_failed(&app, e),
            };
            ladders.push(context! {
                name => &l.config.name,
                base => minijinja::Value::from_safe_string(l.base.to_string()),
                game => &l.config.game,
                rules => &l.config.rules,
                entrants => board.rows.len(),
                frozen => board.frozen,
                languages => l.config.language_names(),
            });
        }
        render(
            &app,
            viewer.as_ref().map(|v| &v.1),
            StatusCode::OK,
            "site.html",
            context! { title => "Ladders", ladders },
        )
    })
    .await
}

#[derive(Deserialize)]
struct SignupQuery {
    #[serde(default)]
    code: String,
}

async fn signup_form(
    State(app): State<App>,
    Query(q): Query<SignupQuery>,
    headers: HeaderMap,
) -> Response {
    on_thread(move || {
        // The account the link signs up, named on the form (the name to log in with later).
        let name = {
            let mut store = app.store.get();
            store.ladder_signup_name(&sha256_hex(q.code.trim()))
        };
        let name = match name {
            Ok(Some(name)) => name,
            Ok(None) => return unknown_signup_code(&app),
            Err(e) => return store_failed(&app, e),
        };
        let (csrf, set) = pre_session_token(&app, &headers);
        let r = render(
            &app,
            None,
            StatusCode::OK,
            "signup.html",
            context! { title => "Sign up", name, code => q.code, form_csrf => csrf, error => () },
        );
        with_cookie(r, set)
    })
    .await
}

#[derive(Deserialize)]
struct SignupForm {
    #[serde(default)]
    code: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    password2: String,
    #[serde(default)]
    csrf: String,
}

async fn signup(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(f): Form<SignupForm>,
) -> Response {
    on_thread(move || {
        if !pre_session_ok(&app, &headers, &f.csrf) {
            return csrf_refused(&app);
        }
        let code_sha256 = sha256_hex(f.code.trim());
        // The code before the hash: an unknown code costs no argon2.
        let name = {
            let mut store = app.store.get();
            store.ladder_signup_name(&code_sha256)
        };
        let name = match name {
            Ok(Some(name)) => name,
            Ok(None) => return unknown_signup_code(&app),
            Err(e) => return store_failed(&app, e),
        };
        let again = |status: StatusCode, error: &str| {
            render(
                &app,
                None,
                status,
                "signup.html",
                context! { title => "Sign up", name => &name, code => &f.code, form_csrf => &f.csrf, error },
            )
        };
        if f.password != f.password2 {
            return again(StatusCode::BAD_REQUEST, "the two passwords differ");
        }
        if !(accounts::MIN_PASSWORD..=accounts::MAX_PASSWORD).contains(&f.password.len()) {
            return again(
                StatusCode::BAD_REQUEST,
                &AccountError::BadPassword.to_string(),
            );
        }
        // Each sign-up hashes a password: counted with the address's login attempts.
        if let Err(wait) = app.web.login_by_ip.hit(&client(peer), Instant::now()) {
            return too_many(&app, None, "too many attempts from your address", wait);
        }
        let Some(turn) = password_turn(&app) else {
            return busy(&app, None);
        };
        let related = [name.as_str(), &app.config.name, "kakehiki"];
        let hash = new_password_hash(&f.password, &related, "sign-up");
        drop(turn);
        let hash = match hash {
            Ok(h) => h,
            Err((status, text)) => return again(status, &text),
        };
        let signed_up = {
            let mut store = app.store.get();
            store.ladder_sign_up(&code_sha256, &hash)
        };
        let name = match signed_up {
            Ok(Some(name)) => name,
            Ok(None) => return unknown_signup_code(&app),
            Err(e) => return store_failed(&app, e),
        };
        match start_session(&app, &name) {
            Ok(c) => see_other("/me", [c]),
            Err(e) => store_failed(&app, e),
        }
    })
    .await
}

fn unknown_signup_code(app: &App) -> Response {
    message(
        app,
        None,
        StatusCode::NOT_FOUND,
        "Sign-up refused",
        "this sign-up link is unknown or was already used: ask the organiser for a new invitation, or log in",
    )
}

/// The key of a client's address in the rate limits: an IPv4 address, or an IPv6 /64.
fn client(peer: SocketAddr) -> String {
    crate::serve::client_key(peer.ip()).to_string()
}

async fn login_form(State(app): State<App>, headers: HeaderMap) -> Response {
    on_thread(move || {
        let (csrf, set) = pre_session_token(&app, &headers);
        let r = render(
            &app,
            None,
            StatusCode::OK,
            "login.html",
            context! { title => "Log in", form_csrf => csrf, name => "", error => () },
        );
        with_cookie(r, set)
    })
    .await
}

#[derive(Deserialize)]
struct LoginForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    csrf: String,
}

/// The hash of a new password, or what the visitor is told: 400 with the rule it breaks, or 500
/// when hashing failed (logged with `what`, the form it came from).
fn new_password_hash(
    password: &str,
    related: &[&str],
    what: &str,
) -> Result<String, (StatusCode, String)> {
    accounts::check_password(password, related)
        .and_then(|()| accounts::hash_password(password))
        .map_err(|e| match e {
            AccountError::BadPassword | AccountError::WeakPassword(_) => {
                (StatusCode::BAD_REQUEST, e.to_string())
            }
            e => {
                tracing::error!("{what}: {e}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the password could not be hashed".to_string(),
                )
            }
        })
}

/// A hash no password matches quickly: an unknown name costs as long as a wrong password.
fn decoy_hash() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| accounts::hash_password(&random_hex()).unwrap_or_default())
}

async fn login(
    State(app): State<App>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Form(f): Form<LoginForm>,
) -> Response {
    on_thread(move || {
        if !pre_session_ok(&app, &headers, &f.csrf) {
            return csrf_refused(&app);
        }
        let now = Instant::now();
        if let Err(wait) = app.web.login_by_ip.hit(&client(peer), now) {
            return too_many(
                &app,
                None,
                "too many login attempts from your address",
                wait,
            );
        }
        let name = f.name.trim().to_string();
        if let Err(wait) = app.web.login_by_name.hit(&name, now) {
            return too_many(&app, None, "too many login attempts for this account", wait);
        }
        let user = {
            let mut store = app.store.get();
            store.ladder_user(&name)
        };
        let user = match user {
            Ok(u) => u,
            Err(e) => return store_failed(&app, e),
        };
        let hash = user
            .as_ref()
            .and_then(|u| u.password_hash.clone())
            .unwrap_or_else(|| decoy_hash().to_string());
        let Some(turn) = password_turn(&app) else {
            return busy(&app, None);
        };
        let ok = accounts::verify_password(&f.password, &hash);
        drop(turn);
        let Some(user) = user.filter(|u| ok && u.password_hash.is_some()) else {
            return render(
                &app,
                None,
                StatusCode::UNAUTHORIZED,
                "login.html",
                context! { title => "Log in", form_csrf => &f.csrf, name, error => "wrong name or password" },
            );
        };
        if user.disabled {
            return message(
                &app,
                None,
                StatusCode::FORBIDDEN,
                "Account disabled",
                "this account is disabled by the ladder's organisers: ask them",
            );
        }
        // A session this browser had is over: the new one replaces it.
        if let Some(old) = secret_cookie(&headers, app.web.session_cookie) {
            let mut store = app.store.get();
            if let Err(e) = store.delete_ladder_session(&sha256_hex(old)) {
                drop(store);
                return store_failed(&app, e);
            }
        }
        match start_session(&app, &user.name) {
            Ok(c) => see_other("/me", [c]),
            Err(e) => store_failed(&app, e),
        }
    })
    .await
}

#[derive(Deserialize)]
struct PasswordForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    current: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    password2: String,
}

/// `POST /password`: a signed-in contestant changes their password. The current one is checked
/// (and counted with the account's login attempts); every other session of the account ends.
async fn change_password(
    State(app): State<App>,
    headers: HeaderMap,
    Form(f): Form<PasswordForm>,
) -> Response {
    on_thread(move || {
        let (session_hash, s) = match form_session(&app, &headers, &f.csrf, "/login") {
            Ok(v) => v,
            Err(r) => return *r,
        };
        let refused = |status: StatusCode, text: &str| {
            message(&app, Some(&s), status, "Password not changed", text)
        };
        if let Err(wait) = app.web.login_by_name.hit(&s.user.name, Instant::now()) {
            return too_many(
                &app,
                Some(&s),
                "too many password attempts for this account",
                wait,
            );
        }
        let Some(turn) = password_turn(&app) else {
            return busy(&app, Some(&s));
        };
        let current_ok = s
            .user
            .password_hash
            .as_deref()
            .is_some_and(|h| accounts::verify_password(&f.current, h));
        if !current_ok {
            return refused(StatusCode::UNAUTHORIZED, "the current password is wrong");
        }
        if f.password != f.password2 {
            return refused(StatusCode::BAD_REQUEST, "the two new passwords differ");
        }
        let hash = new_password_hash(
            &f.password,
            &[&s.user.name, &app.config.name, "kakehiki"],
            "password change",
        );
        drop(turn);
        let hash = match hash {
            Ok(h) => h,
            Err((status, text)) => return refused(status, &text),
        };
        let changed = {
            let mut store = app.store.get();
            store.ladder_set_password(&s.user.name, &hash, &session_hash)
        };
        match changed {
            Ok(()) => message(
                &app,
                Some(&s),
                StatusCode::OK,
                "Password changed",
                "Your password is changed. Every other session of your account is logged out.",
            ),
            Err(e) => store_failed(&app, e),
        }
    })
    .await
}

#[derive(Deserialize)]
struct CsrfForm {
    #[serde(default)]
    csrf: String,
}

async fn logout(State(app): State<App>, headers: HeaderMap, Form(f): Form<CsrfForm>) -> Response {
    on_thread(move || {
        let (hash, _) = match form_session(&app, &headers, &f.csrf, "/") {
            Ok(v) => v,
            Err(r) => return *r,
        };
        let deleted = {
            let mut store = app.store.get();
            store.delete_ladder_session(&hash)
        };
        if let Err(e) = deleted {
            return store_failed(&app, e);
        }
        let clear = set_cookie(
            app.web.session_cookie,
            "",
            cookie::SameSite::Lax,
            Some(0),
            app.web.cookie_secure,
        );
        see_other("/", [clear])
    })
    .await
}

/// A new API token for the signed-in contestant, shown once; the old token stops working.
async fn new_token(
    State(app): State<App>,
    headers: HeaderMap,
    Form(f): Form<CsrfForm>,
) -> Response {
    on_thread(move || {
        let (_, s) = match form_session(&app, &headers, &f.csrf, "/login") {
            Ok(v) => v,
            Err(r) => return *r,
        };
        let (token, token_sha256) = accounts::new_token();
        let set = {
            let mut store = app.store.get();
            store.ladder_set_token(&s.user.name, &token_sha256)
        };
        match set {
            Ok(true) => {}
            Ok(false) => return see_other("/login", []),
            Err(e) => return store_failed(&app, e),
        }
        tracing::info!("ladder: {} made a new API token", s.user.name);
        // Never cached, like every page (`Cache-Control: no-store`, lib.rs).
        render(
            &app,
            Some(&s),
            StatusCode::OK,
            "token.html",
            context! { title => "Your new API token", token },
        )
    })
    .await
}

/// A version as the pages show it, of the ladder whose pages are at `base`.
fn version_row(base: &str, v: &BotVersion) -> minijinja::Value {
    context! {
        bot => &v.bot,
        owner => &v.owner,
        version => v.version,
        language => &v.language,
        status => v.status.as_str(),
        created_at => v.created_at,
        url => format!("{base}/bots/{}/versions/{}", v.bot, v.version),
    }
}

/// The account's page: on each ladder of the server, its bot's versions and the upload form;
/// then its API token and password (one account serves every ladder).
async fn me(State(app): State<App>, headers: HeaderMap) -> Response {
    on_thread(move || {
        let Some((_, s)) = viewer!(app, headers) else {
            return see_other("/login", []);
        };
        let mut ladders = Vec::with_capacity(app.site.len());
        for (i, l) in app.site.iter().enumerate() {
            let versions = {
                let mut store = app.store.get();
                store.bot_versions(&l.config.name, &s.user.name)
            };
            let versions = match versions {
                Ok(v) => v,
                Err(e) => return store_failed(&app, e),
            };
            let rows: Vec<_> = versions.iter().rev().map(|v| version_row(&l.base, v)).collect();
            ladders.push(context! {
                name => &l.config.name,
                game => &l.config.game,
                base => minijinja::Value::from_safe_string(l.base.to_string()),
                // The first ladder's form keeps the plain ids (`upload`, `language`, ...).
                id => if i == 0 { String::new() } else { format!("-{}", l.config.name) },
                versions => rows,
                languages => l.config.language_names(),
                upload_bytes => l.config.limits.upload_bytes,
                uploads_per_hour => l.config.limits.uploads_per_hour,
            });
        }
        render(
            &app,
            Some(&s),
            StatusCode::OK,
            "me.html",
            context! {
                title => if app.several() { format!("Account {}", s.user.name) } else { format!("Bot {}", s.user.name) },
                bot => &s.user.name,
                ladders,
            },
        )
    })
    .await
}

async fn upload(State(app): State<App>, headers: HeaderMap, mut form: Multipart) -> Response {
    let app2 = app.clone();
    let viewer = match blocking(move || session(&app2, &headers)).await {
        Some(Ok(v)) => v,
        Some(Err(e)) => return on_thread(move || store_failed(&app, e)).await,
        None => return StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    };
    let Some((_, s)) = viewer else {
        return message(
            &app,
            None,
            StatusCode::UNAUTHORIZED,
            "Log in first",
            "log in to upload a bot",
        );
    };
    let (mut csrf, mut language, mut file) = (String::new(), String::new(), None::<Bytes>);
    loop {
        let field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => {
                let status = e.status();
                return message(&app, Some(&s), status, "Upload refused", &e.body_text());
            }
        };
        let name = field.name().unwrap_or("").to_string();
        let read = match name.as_str() {
            "csrf" => field.text().await.map(|t| csrf = t),
            "language" => field.text().await.map(|t| language = t),
            "file" => field.bytes().await.map(|b| file = Some(b)),
            _ => Ok(()),
        };
        if let Err(e) = read {
            let status = e.status();
            return message(&app, Some(&s), status, "Upload refused", &e.body_text());
        }
    }
    on_thread(move || upload_read(&app, &s, &csrf, &language, file)).await
}

/// The rest of an upload once its form is read: the CSRF token, the file, the version.
fn upload_read(
    app: &App,
    s: &LadderSession,
    csrf: &str,
    language: &str,
    file: Option<Bytes>,
) -> Response {
    let app = app.clone();
    if !same_secret(&s.csrf_token, csrf) {
        return csrf_refused(&app);
    }
    let Some(file) = file.filter(|f| !f.is_empty()) else {
        return message(
            &app,
            Some(s),
            StatusCode::BAD_REQUEST,
            "Upload refused",
            "choose a file to upload",
        );
    };
    match accept_upload(&app, &s.user, language, file) {
        Ok(version) => see_other(
            &format!("{}/bots/{}/versions/{version}", app.base, s.user.name),
            [],
        ),
        Err(e) => {
            let mut r = message(&app, Some(s), e.status(), "Upload refused", &e.to_string());
            if let UploadError::TooMany { retry_after, .. } = e {
                r.headers_mut()
                    .insert(header::RETRY_AFTER, retry_seconds(retry_after).into());
            }
            r
        }
    }
}

/// Version `version` (as the URL gives it) of `bot`, if the signed-in `viewer` is its owner or
/// an organiser. A version's sources, build log and stderr are theirs only: for anyone else, and
/// any visitor logged out (who learns nothing, not even whether the bot exists), it is `None`,
/// as for a version that does not exist.
fn viewed_version(
    app: &App,
    viewer: Option<&LadderSession>,
    bot: &str,
    version: &str,
) -> Result<Option<BotVersion>, StoreError> {
    let (Ok(version), Some(s)) = (version.parse::<u64>(), viewer) else {
        return Ok(None);
    };
    let versions = {
        let mut store = app.store.get();
        store.bot_versions(&app.config.name, bot)?
    };
    Ok(versions.into_iter().find(|v| {
        v.version == version && (v.owner == s.user.name || s.user.role == LadderRole::Organiser)
    }))
}

async fn version_page(
    State(app): State<App>,
    Path((bot, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    on_thread(move || {
        let viewer = viewer!(app, headers);
        let viewer = viewer.as_ref().map(|v| &v.1);
        let v = match viewed_version(&app, viewer, &bot, &version) {
            Ok(Some(v)) => v,
            Ok(None) => return not_found(&app, viewer),
            Err(e) => return store_failed(&app, e),
        };
        let building = v.status == VersionStatus::Building;
        // A frozen ladder plays no match: an upload then is built and checked, and waits.
        let frozen = match crate::frozen(&app) {
            Ok(f) => f,
            Err(e) => return store_failed(&app, e),
        };
        render(
            &app,
            viewer,
            StatusCode::OK,
            "version.html",
            context! {
                title => format!("{} v{}", v.bot, v.version),
                v => version_row(&app.base, &v),
                log => &v.log,
                building,
                frozen,
                // The page reloads itself until the build and check are done.
                refresh => building.then_some(3),
            },
        )
    })
    .await
}

/// The upload of a version, as a download: for its owner and organisers only (anyone else gets
/// the 404 page, as for the version's page).
async fn version_upload_page(
    State(app): State<App>,
    Path((bot, version)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    on_thread(move || {
        let viewer = viewer!(app, headers);
        let viewer = viewer.as_ref().map(|v| &v.1);
        match viewed_version(&app, viewer, &bot, &version) {
            Ok(Some(v)) => crate::upload_download(&app, &v),
            Ok(None) => not_found(&app, viewer),
            Err(e) => store_failed(&app, e),
        }
    })
    .await
}

#[derive(Deserialize)]
struct AccountForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    action: String,
}

/// `POST /organiser/accounts/NAME` (`action` = `disable` or `enable`): an organiser disables or
/// enables an account, as `kakehiki ladder disable` does. Anyone else gets the 404 page.
async fn organiser_account(
    State(app): State<App>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Form(f): Form<AccountForm>,
) -> Response {
    on_thread(move || {
        organiser_switch(
            &app,
            &headers,
            &f,
            &format!("account {name}"),
            ("disable", "enable"),
            |s, store, disabled| {
                if disabled && name == s.user.name {
                    return Err("you cannot disable your own account");
                }
                Ok(store.ladder_set_disabled(&name, disabled))
            },
        )
    })
    .await
}

/// An organiser's two-way form (`action` = `words.0` to switch on, `words.1` off): the
/// organiser's session (the 404 page for anyone else), its CSRF token and the action checked,
/// then `apply(session, store, on)`: 303 back to the organiser's page when it is done, the 404
/// page when there is no such thing, 400 with the reason `apply` refuses with.
fn organiser_switch(
    app: &App,
    headers: &HeaderMap,
    f: &AccountForm,
    target: &str,
    words: (&str, &str),
    apply: impl FnOnce(
        &LadderSession,
        &mut dyn kakehiki_store::Store,
        bool,
    ) -> Result<Result<bool, StoreError>, &'static str>,
) -> Response {
    let s = match organiser_form(app, headers, &f.csrf) {
        Ok(s) => s,
        Err(r) => return *r,
    };
    let on = match f.action.as_str() {
        a if a == words.0 => true,
        a if a == words.1 => false,
        _ => {
            return message(
                app,
                Some(&s),
                StatusCode::BAD_REQUEST,
                "Not done",
                &format!("the form's action must be {} or {}", words.0, words.1),
            )
        }
    };
    let done = {
        let mut store = app.store.get();
        apply(&s, store.as_mut(), on)
    };
    match done {
        Err(refused) => message(app, Some(&s), StatusCode::BAD_REQUEST, "Not done", refused),
        Ok(Ok(true)) => {
            tracing::info!(
                "ladder {}: organiser {} chose {:?} for {target}",
                app.config.name,
                s.user.name,
                f.action
            );
            // The public pages follow at once (a freeze, a retired bot).
            app.ratings_moved();
            see_other(&format!("{}/organiser", app.base), [])
        }
        Ok(Ok(false)) => not_found(app, Some(&s)),
        Ok(Err(e)) => store_failed(app, e),
    }
}

/// The session of a signed-in visitor's form post that carries the session's CSRF token: the
/// session's hash and the session. Otherwise the answer to give: a redirect to `elsewhere`
/// without a session, the CSRF refusal, or the store's failure.
pub(crate) fn form_session(
    app: &App,
    headers: &HeaderMap,
    csrf: &str,
    elsewhere: &str,
) -> Result<(String, LadderSession), Box<Response>> {
    let viewer = session(app, headers).map_err(|e| Box::new(store_failed(app, e)))?;
    let Some((hash, s)) = viewer else {
        return Err(Box::new(see_other(elsewhere, [])));
    };
    if !same_secret(&s.csrf_token, csrf) {
        return Err(Box::new(csrf_refused(app)));
    }
    Ok((hash, s))
}

/// An organiser's form post that carries the session's CSRF token: the session. Anyone else
/// gets the 404 page ([`organiser_only`]), a wrong token the CSRF refusal.
fn organiser_form(
    app: &App,
    headers: &HeaderMap,
    csrf: &str,
) -> Result<LadderSession, Box<Response>> {
    let s = organiser_only(app, headers)?;
    if !same_secret(&s.csrf_token, csrf) {
        return Err(Box::new(csrf_refused(app)));
    }
    Ok(s)
}

/// An organiser's session; anyone else gets the 404 page (an organiser's page is not said to
/// exist), a store failure its page.
fn organiser_only(app: &App, headers: &HeaderMap) -> Result<LadderSession, Box<Response>> {
    let viewer = session(app, headers).map_err(|e| Box::new(store_failed(app, e)))?;
    match viewer {
        Some((_, s)) if s.user.role == LadderRole::Organiser => Ok(s),
        v => Err(Box::new(not_found(app, v.as_ref().map(|v| &v.1)))),
    }
}

/// `POST /organiser/bots/NAME` (`action` = `retire` or `restore`): an organiser retires a bot
/// (it is matched no more and its queued and running matches stop; its history stays) or
/// brings it back, as `kakehiki ladder retire` does. Anyone else gets the 404 page.
async fn organiser_bot(
    State(app): State<App>,
    Path(name): Path<String>,
    headers: HeaderMap,
    Form(f): Form<AccountForm>,
) -> Response {
    on_thread(move || {
        let ladder = app.config.name.clone();
        organiser_switch(
            &app,
            &headers,
            &f,
            &format!("bot {name}"),
            ("retire", "restore"),
            |_, store, retired| Ok(store.ladder_set_retired(&ladder, &name, retired)),
        )
    })
    .await
}

/// `POST /organiser/ladder` (`action` = `freeze` or `thaw`): an organiser freezes the ladder
/// (no match is queued; those queued are still played and rated) or lets matchmaking go on, as
/// `kakehiki ladder freeze [--thaw]` does. Anyone else gets the 404 page.
async fn organiser_ladder(
    State(app): State<App>,
    headers: HeaderMap,
    Form(f): Form<AccountForm>,
) -> Response {
    on_thread(move || {
        let ladder = app.config.name.clone();
        organiser_switch(
            &app,
            &headers,
            &f,
            &format!("ladder {ladder}"),
            ("freeze", "thaw"),
            |_, store, frozen| Ok(store.ladder_set_frozen(&ladder, frozen).map(|()| true)),
        )
    })
    .await
}

#[derive(Deserialize)]
struct FinalForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    format: String,
    #[serde(default)]
    games: String,
    #[serde(default)]
    seed: String,
    /// Present (any value): the ladder's built-ins play too.
    builtins: Option<String>,
}

/// An error and its causes, one after another.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// `POST /organiser/final`: an organiser freezes the ladder and runs its final (`format`,
/// `games`, `seed`, `builtins`), as `kakehiki ladder final` does; the server's workers play it
/// and `/final` shows it. 303 to the final's page; a refusal says why (400). Anyone else gets
/// the 404 page.
async fn organiser_final(
    State(app): State<App>,
    headers: HeaderMap,
    Form(f): Form<FinalForm>,
) -> Response {
    on_thread(move || {
        let s = match organiser_form(&app, &headers, &f.csrf) {
            Ok(s) => s,
            Err(r) => return *r,
        };
        let refused = |text: &str| {
            message(
                &app,
                Some(&s),
                StatusCode::BAD_REQUEST,
                "The final was not started",
                text,
            )
        };
        let Some(finals) = app.finals.clone() else {
            return refused("this server does not run finals: run `kakehiki ladder final` on its store");
        };
        let games = match f.games.trim().parse::<u64>() {
            Ok(n) if (1..=100_000).contains(&n) => n,
            _ => return refused("games must be a whole number from 1 to 100000"),
        };
        let seed = match f.seed.trim() {
            "" => 1,
            text => match text.parse::<u64>() {
                Ok(n) => n,
                Err(_) => return refused("the seed must be a whole number from 0 to 18446744073709551615"),
            },
        };
        let format = f.format.trim();
        if !kakehiki_contest::Format::ALL.iter().any(|(n, _)| *n == format) {
            let known: Vec<&str> = kakehiki_contest::Format::ALL.iter().map(|(n, _)| *n).collect();
            return refused(&format!("unknown format {format:?}: one of {}", known.join(", ")));
        }
        let ladder = app.config.name.clone();
        if !finals.claim(&ladder) {
            return refused("the final's matches are being queued already: its page shows how far it is played");
        }
        let opts = kakehiki_ladder::final_contest::FinalOptions {
            name: kakehiki_ladder::final_contest::final_contest_name(&ladder),
            format: format.to_string(),
            games,
            seed,
            builtins: f.builtins.is_some(),
        };
        let done = {
            let (finals, ladder) = (finals.clone(), ladder.clone());
            move |outcome: Result<(), String>| {
                match outcome {
                    Ok(()) => tracing::info!("ladder {ladder}: the final is played"),
                    Err(e) => tracing::error!("ladder {ladder}: the final stopped: {e}"),
                }
                finals.release(&ladder);
            }
        };
        let started = kakehiki_ladder::final_contest::start_final(
            &app.config,
            finals.connect.clone(),
            &finals.data,
            &finals.store_files,
            &opts,
            done,
        );
        match started {
            Ok(def) => {
                tracing::info!(
                    "ladder {ladder}: organiser {} froze the ladder and started the final {} ({}, {} entrants, games {games}, seed {seed})",
                    s.user.name,
                    def.name,
                    format,
                    def.entrants.len()
                );
                app.ratings_moved();
                see_other(&format!("{}/final", app.base), [])
            }
            Err(e) => {
                finals.release(&ladder);
                refused(&with_causes(&e))
            }
        }
    })
    .await
}

#[derive(Deserialize)]
struct InviteForm {
    #[serde(default)]
    csrf: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    role: String,
    /// Present (any value) to invite an existing account again.
    again: Option<String>,
}

/// `POST /organiser/invite`: an organiser invites a new account (`role`: `contestant` or
/// `organiser`), or an existing one `again`, as `kakehiki ladder invite [--again]` does; the
/// answer shows the sign-up link and the API token this once. Anyone else gets the 404 page.
async fn organiser_invite(
    State(app): State<App>,
    headers: HeaderMap,
    Form(f): Form<InviteForm>,
) -> Response {
    on_thread(move || {
        let s = match organiser_form(&app, &headers, &f.csrf) {
            Ok(s) => s,
            Err(r) => return *r,
        };
        let refused = |text: &str| message(&app, Some(&s), StatusCode::BAD_REQUEST, "Not invited", text);
        let role = match f.role.as_str() {
            "contestant" | "" => LadderRole::Contestant,
            "organiser" => LadderRole::Organiser,
            _ => return refused("the role must be contestant or organiser"),
        };
        let name = f.name.trim();
        let invited = {
            let mut store = app.store.get();
            accounts::invite_account(store.as_mut(), name, role, f.again.is_some())
        };
        let (invitation, role) = match invited {
            Ok(done) => done,
            Err(accounts::InviteError::Store(StoreError::UserExists(n))) => {
                return refused(&format!(
                    "there is already an account {n:?}: tick \"again\" to give it a new sign-up link and token"
                ))
            }
            Err(accounts::InviteError::Store(e)) => return store_failed(&app, e),
            Err(e) => return refused(&e.to_string()),
        };
        tracing::info!(
            "ladder {}: organiser {} invited {name} ({}){}",
            app.config.name,
            s.user.name,
            role.as_str(),
            if f.again.is_some() { " again" } else { "" }
        );
        let path = format!("/signup?code={}", invitation.signup_code);
        // The link as this browser reached the server (the organiser sees it and sends it on).
        let scheme = if app.web.cookie_secure { "https" } else { "http" };
        let link = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .filter(|h| h.parse::<axum::http::uri::Authority>().is_ok())
            .map_or(path.clone(), |host| format!("{scheme}://{host}{path}"));
        render(
            &app,
            Some(&s),
            StatusCode::OK,
            "invited.html",
            context! {
                title => format!("Invited {name}"),
                name,
                role => role.as_str(),
                link,
                token => &invitation.token,
            },
        )
    })
    .await
}

async fn organiser(State(app): State<App>, headers: HeaderMap) -> Response {
    on_thread(move || {
        let s = match organiser_only(&app, &headers) {
            Ok(s) => s,
            Err(r) => return *r,
        };
        let s = &s;
        let data = {
            let mut store = app.store.get();
            let users = store.ladder_users();
            let mut versions = Vec::new();
            let mut failed = None;
            for status in [
                VersionStatus::Building,
                VersionStatus::Active,
                VersionStatus::BuildFailed,
                VersionStatus::CheckFailed,
                VersionStatus::Refused,
            ] {
                match store.bot_versions_in(&app.config.name, status) {
                    Ok(v) => versions.extend(v),
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
            }
            match (users, failed) {
                (Ok(u), None) => Ok((u, versions)),
                (Err(e), _) | (_, Some(e)) => Err(e),
            }
        };
        let play = {
            let mut store = app.store.get();
            let name = &app.config.name;
            match (
                store.ladder_state(name),
                store.ladder_open_matches(name),
                store.ladder_running(name),
                store.ladder_storage(name),
                store.ladder_retired_bots(name),
            ) {
                (Ok(st), Ok(open), Ok(running), Ok(storage), Ok(retired)) => {
                    Ok((st, open, running, storage, retired))
                }
                (Err(e), ..)
                | (_, Err(e), ..)
                | (_, _, Err(e), ..)
                | (_, _, _, Err(e), _)
                | (.., Err(e)) => Err(e),
            }
        };
        let (state, open, running, storage, retired) = match play {
            Ok(p) => p,
            Err(e) => return store_failed(&app, e),
        };
        let mut workers: Vec<&str> = running.iter().map(|(_, w)| w.as_str()).collect();
        workers.sort();
        workers.dedup();
        let (users, mut versions) = match data {
            Ok(d) => d,
            Err(e) => return store_failed(&app, e),
        };
        versions.sort_by(|a, b| (&a.bot, a.version).cmp(&(&b.bot, b.version)));
        let users: Vec<_> = users
            .iter()
            .map(|u| {
                context! {
                    name => &u.name,
                    role => u.role.as_str(),
                    signed_up => !u.signup_pending,
                    disabled => u.disabled,
                    own => u.name == s.user.name,
                }
            })
            .collect();
        let building: Vec<_> = versions
            .iter()
            .filter(|v| v.status == VersionStatus::Building)
            .map(|v| version_row(&app.base, v))
            .collect();
        let rows: Vec<_> = versions.iter().map(|v| version_row(&app.base, v)).collect();
        let mut bots: Vec<(&str, &str)> = versions
            .iter()
            .map(|v| (v.bot.as_str(), v.owner.as_str()))
            .collect();
        bots.dedup();
        let bots: Vec<_> = bots
            .into_iter()
            .map(|(bot, owner)| {
                context! { name => bot, owner, retired => retired.iter().any(|r| r == bot) }
            })
            .collect();
        render(
            &app,
            Some(s),
            StatusCode::OK,
            "organiser.html",
            context! {
                title => "Organiser",
                csrf => &s.csrf_token,
                users,
                versions => rows,
                bots,
                building,
                frozen => state.frozen,
                queued_total => state.next_match,
                rated => state.rated_seq,
                open,
                running => running.iter().map(|(i, w)| context! { index => i, worker => w }).collect::<Vec<_>>(),
                storage => storage.iter().map(|u| context! { kind => u.kind, rows => u.rows, mib => format!("{:.1}", u.bytes as f64 / 1048576.0) }).collect::<Vec<_>>(),
                retention_days => app.config.limits.retention_days,
                keep_versions => app.config.limits.keep_versions,
                workers,
                finals => app.finals.is_some(),
                formats => kakehiki_contest::Format::ALL.iter().map(|(n, _)| *n).collect::<Vec<_>>(),
                builtins => &app.config.builtins,
            },
        )
    })
    .await
}

// ----------------------------------------------------------------------------------- templates

/// The pages' stylesheet: the one every contest and ladder page uses.
const STYLE: &str = kakehiki_web::STYLE;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "base.html",
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
{% if refresh %}<meta http-equiv="refresh" content="{{ refresh }}">{% endif %}
<title>{{ title }} · {{ ladder }}</title><style>{{ style|safe }}</style></head>
<body>
<nav>{% if several %}<a href="/">ladders</a>{% if in_ladder %} · <a href="{{ base }}/">{{ ladder }}</a>{% endif %}{% else %}<a href="/">{{ ladder }}</a>{% endif %}{% if in_ladder %} · <a href="{{ base }}/leaderboard">leaderboard</a>{% endif %}
{% if user %} · <a href="/me">{{ "my bots" if several else "my bot" }}</a>{% if organiser and in_ladder %} · <a href="{{ base }}/organiser">organiser</a>{% endif %}
 · signed in as <b id="who">{{ user }}</b>
<form method="post" action="/logout"><input type="hidden" name="csrf" value="{{ csrf }}"><button id="logout">log out</button></form>
{% else %} · <a href="/login">log in</a>{% endif %}</nav>
<h1>{{ title }}</h1>
{% block body %}{% endblock %}
</body></html>"#,
    ),
    (
        "message.html",
        r#"{% extends "base.html" %}{% block body %}<p id="message">{{ text }}</p>{% endblock %}"#,
    ),
    (
        "home.html",
        r#"{% extends "base.html" %}{% block body %}
<p>A ladder of {{ game }}: upload a bot in {{ languages|join(", ") }}; it is built and checked, then it plays.</p>
<ul>
{% if user %}<li><a href="/me">your bot and its versions; upload a new one</a></li>
{% if organiser %}<li><a href="{{ base }}/organiser">the organiser's page</a></li>{% endif %}
{% else %}<li><a href="/login">log in</a> (new contestants: open the sign-up link of your invitation)</li>{% endif %}
<li><a href="{{ leaderboard }}">the leaderboard</a></li>
</ul>
<h2>How to enter</h2>
<p id="rules">The game: {{ game }}, rule set <code>{{ rules }}</code>, played under the original contest's rules and time limits{% if options %} with these options: {% for o in options %}<code>{{ o }}</code>{% if not loop.last %}, {% endif %}{% endfor %}{% endif %}.{% if thinking_seconds %} Each seat has {{ thinking_seconds }} s of thinking time over a whole match.{% endif %}{% if protocol %} What your bot reads and writes: <a href="{{ base }}/protocol" id="protocol">the protocol</a>.{% endif %}</p>
<p>Upload one source file (it is stored as the entry file) or a zip or tar.gz archive with the entry file at its top, at most {{ upload_bytes }} bytes. It is built in the sandbox, checked as <code>kakehiki check</code> checks a bot, then it plays. <span id="transport">{{ transport|safe }}</span></p>
<div class="scroll"><table id="languages"><tr><th>language</th><th>entry file</th><th>build</th><th>run</th><th>starter</th></tr>
{% for r in recipes %}<tr><td>{{ r.name }}</td><td><code>{{ r.main }}</code></td><td><code>{{ r.build }}</code></td><td><code>{{ r.run }}</code></td><td>{% if r.starter %}<a href="{{ base }}/starters/{{ r.name }}">{{ r.main }}</a>{% endif %}</td></tr>{% endfor %}
</table></div>{% endblock %}"#,
    ),
    (
        "site.html",
        r#"{% extends "base.html" %}{% block body %}
<p>Every ladder of this server: one account and one API token enter them all.{% if not user %} <a href="/login">Log in</a> (new contestants: open the sign-up link of your invitation).{% endif %}</p>
<div class="scroll"><table id="ladders"><tr><th>ladder</th><th>game</th><th>entrants</th><th>state</th><th>languages</th></tr>
{% for l in ladders %}<tr><td><a href="{{ l.base }}/">{{ l.name }}</a></td><td>{{ l.game }} (<code>{{ l.rules }}</code>)</td><td class="num">{{ l.entrants }}</td><td>{% if l.frozen %}<span class="status s-frozen">frozen</span>{% else %}<span class="status s-active">playing</span>{% endif %}</td><td>{{ l.languages|join(", ") }}</td></tr>{% endfor %}
</table></div>{% endblock %}"#,
    ),
    (
        "signup.html",
        r#"{% extends "base.html" %}{% block body %}
{% if error %}<p class="err" id="error">{{ error }}</p>{% endif %}
<p>You are signing up as <b id="account">{{ name }}</b>: the name you log in with.</p>
<form method="post" action="/signup" id="signup">
<input type="hidden" name="csrf" value="{{ form_csrf }}">
<input type="hidden" name="code" value="{{ code }}">
<label>Password (at least 10 characters) <input type="password" name="password" id="password" minlength="10" required autocomplete="new-password"></label>
<label>Password again <input type="password" name="password2" id="password2" minlength="10" required autocomplete="new-password"></label>
<button id="submit">Sign up</button>
</form>{% endblock %}"#,
    ),
    (
        "login.html",
        r#"{% extends "base.html" %}{% block body %}
{% if error %}<p class="err" id="error">{{ error }}</p>{% endif %}
<form method="post" action="/login" id="login">
<input type="hidden" name="csrf" value="{{ form_csrf }}">
<label>Name <input name="name" id="name" value="{{ name }}" required autocomplete="username"></label>
<label>Password <input type="password" name="password" id="password" required autocomplete="current-password"></label>
<button id="submit">Log in</button>
</form>{% endblock %}"#,
    ),
    (
        "me.html",
        r#"{% extends "base.html" %}{% block body %}
<p>Your account: <b id="account">{{ user }}</b>. Your bot on each ladder is named after it.</p>
{% for l in ladders %}{% if several %}<h2 id="ladder{{ l.id }}">Ladder <a href="{{ l.base }}/">{{ l.name }}</a> ({{ l.game }})</h2>{% endif %}
<h3>Upload a new version</h3>
<form method="post" action="{{ l.base }}/upload" enctype="multipart/form-data" id="upload{{ l.id }}">
<input type="hidden" name="csrf" value="{{ csrf }}">
<label>Language <select name="language" id="language{{ l.id }}">{% for g in l.languages %}<option value="{{ g }}">{{ g }}</option>{% endfor %}</select></label>
<label>One source file, or a zip or tar.gz archive (at most {{ l.upload_bytes }} bytes) <input type="file" name="file" id="file{{ l.id }}" required></label>
<button id="submit{{ l.id }}">Upload</button>
<p class="muted">At most {{ l.uploads_per_hour }} uploads an hour.</p>
</form>
<h3>Versions</h3>
{% if l.versions %}<div class="scroll"><table id="versions{{ l.id }}"><tr><th>version</th><th>language</th><th>status</th></tr>
{% for v in l.versions %}<tr><td><a href="{{ v.url }}">v{{ v.version }}</a></td><td>{{ v.language }}</td><td class="status s-{{ v.status }}">{{ v.status }}</td></tr>{% endfor %}
</table></div>{% else %}<p class="muted">No upload yet.</p>{% endif %}
{% endfor %}
<h2>API token</h2>
<p>Uploads from a script use your API token (<code>Authorization: Bearer TOKEN</code>; the organiser gave it with your invitation). Lost or leaked: make a new one; it is shown once, and the old one stops working at once.</p>
<form method="post" action="/me/token" id="token-form">
<input type="hidden" name="csrf" value="{{ csrf }}">
<button id="new-token">Make a new API token</button>
</form>
<h2>Password</h2>
<form method="post" action="/password" id="password-form">
<input type="hidden" name="csrf" value="{{ csrf }}">
<label>Current password <input type="password" name="current" id="current" required autocomplete="current-password"></label>
<label>New password (at least 10 characters) <input type="password" name="password" id="new-password" minlength="10" required autocomplete="new-password"></label>
<label>New password again <input type="password" name="password2" id="new-password2" minlength="10" required autocomplete="new-password"></label>
<button id="change-password">Change the password</button>
<p class="muted">Every other session of your account is logged out. A forgotten password: ask the organiser for a new sign-up link.</p>
</form>
{% endblock %}"#,
    ),
    (
        "invited.html",
        r#"{% extends "base.html" %}{% block body %}
<p>Invited <b id="invited">{{ name }}</b> ({{ role }}). Send these to them; they are shown this once.</p>
<table>
<tr><th>sign-up link (works once)</th><td><code id="link">{{ link }}</code></td></tr>
<tr><th>API token</th><td><code id="token">{{ token }}</code></td></tr>
</table>
<p><a href="{{ base }}/organiser">back to the organiser's page</a></p>
{% endblock %}"#,
    ),
    (
        "token.html",
        r#"{% extends "base.html" %}{% block body %}
<p>Your new API token, shown this once (copy it now): the old token no longer works.</p>
<pre id="token">{{ token }}</pre>
<p><a href="/me">back to your bot</a></p>
{% endblock %}"#,
    ),
    (
        "version.html",
        r#"{% extends "base.html" %}{% block body %}
<table>
<tr><th>bot</th><td>{{ v.bot }}</td></tr>
<tr><th>owner</th><td>{{ v.owner }}</td></tr>
<tr><th>language</th><td>{{ v.language }}</td></tr>
<tr><th>status</th><td class="status s-{{ v.status }}" id="status">{{ v.status }}</td></tr>
<tr><th>upload</th><td><a id="upload" href="{{ v.url }}/upload">download</a></td></tr>
</table>
{% if building %}<p class="muted">Building and checking: this page reloads itself.</p>{% endif %}
{% if frozen %}<p class="frozen" id="frozen"><b>The ladder is frozen</b>: no new match is queued until the organiser reopens it; this version plays then if it is still your newest active one.</p>{% endif %}
<h2>Build log and check</h2>
<pre id="log">{{ log }}</pre>
{% endblock %}"#,
    ),
    (
        "organiser.html",
        r#"{% extends "base.html" %}{% block body %}
<h2>Contestants</h2>
<form method="post" action="{{ base }}/organiser/invite" id="invite">
<input type="hidden" name="csrf" value="{{ csrf }}">
<label>Name <input name="name" id="invite-name" required maxlength="64"></label>
<label>Role <select name="role" id="invite-role"><option value="contestant">contestant</option><option value="organiser">organiser</option></select></label>
<label><input type="checkbox" name="again" value="yes" id="invite-again"> again (an existing account: a new sign-up link and token; its password, token and sessions end)</label>
<button id="invite-submit">Invite</button>
</form>
<div class="scroll"><table id="users"><tr><th>name</th><th>role</th><th>signed up</th><th>account</th></tr>
{% for u in users %}<tr><td>{{ u.name }}</td><td>{{ u.role }}</td><td>{{ "yes" if u.signed_up else "no" }}</td><td>{% if u.disabled %}<b>disabled</b>{% else %}active{% endif %}{% if not u.own %} <form method="post" action="{{ base }}/organiser/accounts/{{ u.name }}"><input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="action" value="{{ "enable" if u.disabled else "disable" }}"><button>{{ "enable" if u.disabled else "disable" }}</button></form>{% endif %}</td></tr>{% endfor %}
</table></div>
<p class="muted">A disabled account can neither log in nor use its token, and its bot is matched no more: its queued and running matches stop (each recorded failed with the reason, never rated); its history stays.</p>
<h2>Bots</h2>
<div class="scroll"><table id="bots"><tr><th>bot</th><th>owner</th><th>played</th></tr>
{% for b in bots %}<tr><td>{{ b.name }}</td><td>{{ b.owner }}</td><td>{% if b.retired %}<b>retired</b>{% else %}yes{% endif %} <form method="post" action="{{ base }}/organiser/bots/{{ b.name }}"><input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="action" value="{{ "restore" if b.retired else "retire" }}"><button>{{ "bring back" if b.retired else "retire" }}</button></form></td></tr>{% endfor %}
</table></div>
<p class="muted">A retired bot is matched no more and its queued and running matches stop; its versions, ratings and matches stay, and it can be brought back.</p>
<h2>Play</h2>
<p id="play">{% if frozen %}<b>Frozen</b>: no match is queued (<code>kakehiki ladder freeze --thaw</code> goes on){% else %}Matchmaking runs{% endif %} · {{ queued_total }} matches queued so far, {{ rated }} results rated · queue depth {{ open }} (queued or running)</p>
<form method="post" action="{{ base }}/organiser/ladder" id="freeze"><input type="hidden" name="csrf" value="{{ csrf }}"><input type="hidden" name="action" value="{{ "thaw" if frozen else "freeze" }}"><button id="freeze-submit">{{ "Thaw: let matchmaking go on" if frozen else "Freeze: queue no more matches" }}</button></form>
<h2>Final</h2>
{% if finals %}<form method="post" action="{{ base }}/organiser/final" id="final">
<input type="hidden" name="csrf" value="{{ csrf }}">
<label>Format <select name="format" id="final-format">{% for f in formats %}<option value="{{ f }}"{% if f == "round-robin" %} selected{% endif %}>{{ f }}</option>{% endfor %}</select></label>
<label>Games per table, pairing or set <input name="games" id="final-games" type="number" min="1" max="100000" value="2" required></label>
<label>Seed <input name="seed" id="final-seed" type="number" min="0" value="1"></label>
{% if builtins %}<label><input type="checkbox" name="builtins" value="yes" id="final-builtins"> the ladder's built-ins play too ({{ builtins|join(", ") }})</label>{% endif %}
<button id="final-submit">Freeze the ladder and run the final</button>
</form>
<p class="muted">As <code>kakehiki ladder final --format F --games N --seed S [--builtins]</code> does: the ladder is frozen, each bot's newest active version enters, and the server's workers (and any <code>kakehiki worker</code> on its store) play the final; <a href="{{ base }}/final" id="final-page">its standings</a>. The same settings again resume a final a restart interrupted.</p>
{% else %}<p>This server does not run finals: <code>kakehiki ladder final</code> on its store does.</p>{% endif %}
<h2>Workers</h2>
<p id="workers">{{ running|length }} running on {{ workers|length }} worker{{ "" if workers|length == 1 else "s" }}{% if workers %}: {{ workers|join(", ") }}{% endif %}.</p>
{% if running %}<ul>{% for m in running %}<li>match {{ m.index }} on {{ m.worker }}</li>{% endfor %}</ul>{% endif %}
<p><a href="{{ base }}/leaderboard">the leaderboard</a></p>
<h2>Storage</h2>
<div class="scroll"><table id="storage"><tr><th>kind</th><th>rows</th><th>MiB</th></tr>
{% for u in storage %}<tr><td>{{ u.kind }}</td><td class="num">{{ u.rows }}</td><td class="num">{{ u.mib }}</td></tr>{% endfor %}
</table></div>
<p class="muted">Uploads and programs of versions older than {{ retention_days }} days are pruned (never a bot's newest active version nor its {{ keep_versions }} newest).</p>
<h2>Builds</h2>
<p id="queue">{{ building|length }} waiting or building (one at a time).</p>
{% if building %}<ul>{% for v in building %}<li><a href="{{ v.url }}">{{ v.bot }} v{{ v.version }}</a> ({{ v.language }})</li>{% endfor %}</ul>{% endif %}
<h2>Every version</h2>
<div class="scroll"><table id="versions"><tr><th>bot</th><th>version</th><th>owner</th><th>language</th><th>status</th></tr>
{% for v in versions %}<tr><td>{{ v.bot }}</td><td><a href="{{ v.url }}">v{{ v.version }}</a></td><td>{{ v.owner }}</td><td>{{ v.language }}</td><td class="status s-{{ v.status }}">{{ v.status }}</td></tr>{% endfor %}
</table></div>
{% endblock %}"#,
    ),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_allows_its_limit_per_window_and_says_how_long_to_wait() {
        let l = RateLimiter::new(3, Duration::from_secs(60));
        let t0 = Instant::now();
        for i in 0..3 {
            assert!(l.hit("a", t0 + Duration::from_secs(i)).is_ok());
        }
        // The 4th within the window is refused until the first leaves it.
        assert_eq!(
            l.hit("a", t0 + Duration::from_secs(10)),
            Err(Duration::from_secs(50))
        );
        // Other keys are counted apart.
        assert!(l.hit("b", t0 + Duration::from_secs(10)).is_ok());
        // Refusals are not counted: at 60 s the first has left, one more is allowed.
        assert!(l.hit("a", t0 + Duration::from_secs(60)).is_ok());
        assert_eq!(
            l.hit("a", t0 + Duration::from_secs(60)),
            Err(Duration::from_secs(1))
        );
        assert!(l.hit("a", t0 + Duration::from_secs(200)).is_ok());
    }

    #[test]
    fn the_limiter_holds_a_bounded_number_of_short_keys_and_drops_old_ones() {
        let l = RateLimiter::with_keys(5, Duration::from_secs(60), 2);
        let t0 = Instant::now();
        // A name of 2 MB is held as its SHA-256.
        let huge = "n".repeat(2 << 20);
        assert!(l.hit(&huge, t0).is_ok());
        assert!(l.hit(&huge, t0).is_ok());
        {
            let hits = l.hits.lock().unwrap();
            assert!(hits.times.keys().all(|k| k.len() <= 64));
        }
        assert!(l.hit("b", t0 + Duration::from_secs(10)).is_ok());
        // Full: a new key waits until the oldest key's last hit leaves its window.
        assert_eq!(
            l.hit("c", t0 + Duration::from_secs(20)),
            Err(Duration::from_secs(40))
        );
        // Keys already held go on being counted.
        assert!(l.hit("b", t0 + Duration::from_secs(20)).is_ok());
        // Once the window has passed, old keys are dropped and new ones come in.
        assert!(l.hit("c", t0 + Duration::from_secs(61)).is_ok());
        assert_eq!(
            l.len(),
            2,
            "the huge name's key left its window and was dropped"
        );
        assert!(l.hit("d", t0 + Duration::from_secs(200)).is_ok());
        assert_eq!(l.len(), 1);
    }

    #[test]
    fn retry_after_rounds_up_to_whole_seconds() {
        assert_eq!(retry_seconds(Duration::from_millis(1)), 1);
        assert_eq!(retry_seconds(Duration::ZERO), 1);
        assert_eq!(retry_seconds(Duration::from_millis(2500)), 3);
        assert_eq!(retry_seconds(Duration::from_secs(7)), 7);
    }

    #[test]
    fn cookies_are_read_by_name_and_secrets_must_be_64_hex_digits() {
        let mut h = HeaderMap::new();
        h.append(
            header::COOKIE,
            HeaderValue::from_static("a=1; kk_session=xyz"),
        );
        h.append(
            header::COOKIE,
            HeaderValue::from_str(&format!("{PRE_SESSION_COOKIE}={}", "ab".repeat(32))).unwrap(),
        );
        assert_eq!(cookie(&h, "a"), Some("1"));
        assert_eq!(cookie(&h, SESSION_COOKIE), Some("xyz"));
        assert_eq!(secret_cookie(&h, SESSION_COOKIE), None);
        assert_eq!(
            secret_cookie(&h, PRE_SESSION_COOKIE),
            Some("ab".repeat(32).as_str())
        );
        assert_eq!(cookie(&h, "missing"), None);
    }

    #[test]
    fn secrets_compare_whole_and_never_empty() {
        assert!(same_secret("abc", "abc"));
        assert!(!same_secret("abc", "abd"));
        assert!(!same_secret("abc", "ab"));
        assert!(!same_secret("", ""));
    }

    #[test]
    fn session_cookies_are_http_only_same_site_and_secure_only_when_asked() {
        let c = set_cookie(SESSION_COOKIE, "v", cookie::SameSite::Lax, Some(5), false);
        assert_eq!(
            c.to_str().unwrap(),
            "kk_session=v; HttpOnly; SameSite=Lax; Path=/; Max-Age=5"
        );
        let c = set_cookie(
            PRE_SESSION_COOKIE,
            "v",
            cookie::SameSite::Strict,
            None,
            true,
        );
        assert_eq!(
            c.to_str().unwrap(),
            "kk_csrf=v; HttpOnly; SameSite=Strict; Secure; Path=/"
        );
    }

    #[test]
    fn every_template_renders_and_escapes() {
        let web = Web::new(false);
        let evil = "<script>x</script>";
        let v = context! { bot => evil, owner => evil, version => 1, language => "python",
        status => "active", url => "/bots/x/versions/1" };
        for (name, _) in TEMPLATES {
            let out = web
                .env
                .get_template(name)
                .unwrap()
                .render(context! {
                    ladder => "g", game => "geister", style => STYLE, title => evil,
                    user => evil, organiser => true, csrf => "c", text => evil,
                    languages => vec!["python"], leaderboard => "/x", code => evil,
                    form_csrf => "c", error => evil, name => evil, versions => vec![v.clone()],
                    upload_bytes => 1, uploads_per_hour => 1, log => evil, building => vec![v.clone()],
                    users => vec![context!{ name => evil, role => "contestant", signed_up => false }],
                    refresh => 3, v => v.clone(), frozen => false, queued_total => 3, rated => 2,
                    open => 1, running => vec![context! { index => 2, worker => evil }],
                    workers => vec![evil], token => evil, rules => evil, options => vec![evil],
                    recipes => vec![context! { name => evil, main => evil, build => evil, run => evil, starter => true }],
                    protocol => true, thinking_seconds => 1, link => evil, role => evil,
                    base => "/ladders/g", several => true, in_ladder => true,
                    finals => true, formats => vec![evil], builtins => vec![evil],
                    ladders => vec![context! { name => evil, base => "/ladders/g", game => evil, rules => evil,
                        id => "", versions => vec![v.clone()], languages => vec![evil], upload_bytes => 1,
                        uploads_per_hour => 1, entrants => 3, frozen => true }],
                })
                .unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert!(!out.contains(evil), "{name} does not escape: {out}");
            if *name != "base.html" {
                assert!(out.contains("&lt;script&gt;"), "{name}: {out}");
            }
        }
    }
}
