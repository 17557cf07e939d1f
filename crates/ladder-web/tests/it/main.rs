//! The ladder's server in-process: its routes through tower's `oneshot`, and its connection
//! limits through [`serve`] on a loopback port the kernel picks. Each test is an attack a
//! stranger on the internet would try.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{header, Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use kakehiki_contest::arena::Arena;
use kakehiki_ladder::LadderConfig;
use kakehiki_ladder_web::serve::{serve, ServeLimits};
use kakehiki_ladder_web::{router, App};
use tower::ServiceExt;

/// A ladder of Geister on a fresh SQLite store (kept in the returned folder).
fn ladder() -> (tempfile::TempDir, Router) {
    let (dir, router, _) = ladder_with_store();
    (dir, router)
}

/// [`ladder`], with one more connection to its store.
fn ladder_with_store() -> (tempfile::TempDir, Router, Box<dyn kakehiki_store::Store>) {
    ladder_of("")
}

/// [`ladder_with_store`] with `more` added to its ladder file.
fn ladder_of(more: &str) -> (tempfile::TempDir, Router, Box<dyn kakehiki_store::Store>) {
    ladder_made(more, |app, _| app)
}

/// [`ladder_of`], its server's state made by `make` (given the state and the ladder's folder).
fn ladder_made(
    more: &str,
    make: impl FnOnce(App, &std::path::Path) -> App,
) -> (tempfile::TempDir, Router, Box<dyn kakehiki_store::Store>) {
    let dir = tempfile::tempdir().unwrap();
    let config = LadderConfig::parse(
        &format!("name = \"g\"\ngame = \"geister\"\n{more}"),
        "ladder.toml",
        &|g| kakehiki_contest::RefereeArena.game_type(g),
    )
    .unwrap();
    let db = dir.path().join("ladder.sqlite");
    let stores = (0..2)
        .map(|_| kakehiki_store::open_store(&db, None).unwrap())
        .collect();
    let app = make(App::new(Arc::new(config), stores, false), dir.path());
    let store = kakehiki_store::open_store(&db, None).unwrap();
    (dir, router(app), store)
}

/// A request from a client at 192.0.2.1.
fn request(method: &str, uri: &str, body: Body) -> Request<Body> {
    let mut r = Request::builder()
        .method(method)
        .uri(uri)
        .body(body)
        .unwrap();
    r.extensions_mut()
        .insert(ConnectInfo(SocketAddr::from(([192, 0, 2, 1], 40000))));
    r
}

/// A `GET` of `path` carrying the `cookie` header (a signed-in visitor's).
fn get_with_cookie(path: &str, cookie: &str) -> Request<Body> {
    let mut r = request("GET", path, Body::empty());
    r.headers_mut()
        .insert(header::COOKIE, cookie.parse().unwrap());
    r
}

/// A form posted to `path` with `body` (url-encoded), and the `cookie` header if any.
fn form_post(path: &str, body: String, cookie: Option<&str>) -> Request<Body> {
    let mut r = request("POST", path, Body::from(body));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        "application/x-www-form-urlencoded".parse().unwrap(),
    );
    if let Some(c) = cookie {
        r.headers_mut().insert(header::COOKIE, c.parse().unwrap());
    }
    r
}

/// An organiser's form post of `fields` to `path` is refused with a wrong CSRF token (403,
/// with the organiser's `cookie`) and without a session (404: the page is not said to exist).
async fn organiser_form_is_guarded(app: &Router, path: &str, fields: &str, cookie: &str) {
    for (csrf, cookie, status) in [
        ("wrong", Some(cookie), StatusCode::FORBIDDEN),
        ("the-csrf-token", None, StatusCode::NOT_FOUND),
    ] {
        let r = app
            .clone()
            .oneshot(form_post(path, format!("{fields}&csrf={csrf}"), cookie))
            .await
            .unwrap();
        assert_eq!(r.status(), status, "{path} {fields} csrf={csrf}");
    }
}

/// The pre-session cookie the form at `path` sets (`NAME=VALUE`) and its value, the token the
/// form must carry (double-submit CSRF).
async fn pre_session(app: &Router, path: &str) -> (String, String) {
    let form = get(app, path).await;
    let cookie = form.headers()[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_string();
    let token = cookie.split_once('=').unwrap().1.to_string();
    (cookie, token)
}

/// A `GET` of `uri` from a client at 192.0.2.1.
async fn get(app: &Router, uri: &str) -> axum::response::Response {
    app.clone()
        .oneshot(request("GET", uri, Body::empty()))
        .await
        .unwrap()
}

async fn text(response: axum::response::Response) -> String {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[tokio::test]
async fn every_route_answers_with_the_security_headers() {
    let (_dir, app) = ladder();
    for uri in [
        "/",
        "/leaderboard",
        "/bots/nobody",
        "/matches/1",
        "/login",
        "/signup?code=x",
        "/me",
        "/organiser",
        "/no/such/page",
        "/api/ladders/g/leaderboard",
        "/api/ladders/g/matches/1",
        "/api/ladders/other/leaderboard",
        "/protocol",
        "/starters/python",
        "/starters/cobol",
        "/final",
        "/api/ladders/g/final",
    ] {
        let r = get(&app, uri).await;
        let h = r.headers();
        let get = |name: header::HeaderName| {
            h.get(&name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or_else(|| panic!("{uri}: no {name}"))
                .to_string()
        };
        assert_eq!(get(header::CACHE_CONTROL), "no-store", "{uri}");
        assert_eq!(get(header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{uri}");
        assert_eq!(get(header::X_FRAME_OPTIONS), "DENY", "{uri}");
        assert_eq!(get(header::REFERRER_POLICY), "no-referrer", "{uri}");
        let csp = get(header::CONTENT_SECURITY_POLICY);
        assert!(csp.contains("frame-ancestors 'none'"), "{uri}: {csp}");
        assert!(csp.starts_with("default-src 'none'"), "{uri}: {csp}");
        assert!(
            !csp.contains("unsafe-inline'; script") && !csp.contains("script-src 'unsafe"),
            "{uri}: {csp}"
        );
    }
}

#[tokio::test]
async fn the_home_page_says_how_to_enter_and_serves_the_protocol_and_the_starters() {
    let (_dir, app) = ladder();
    let get = |uri: &'static str| {
        let app = app.clone();
        async move {
            app.oneshot(request("GET", uri, Body::empty()))
                .await
                .unwrap()
        }
    };
    let home = text(get("/").await).await;
    assert!(home.contains("rule set <code>gpw</code>"), "{home}");
    assert!(
        home.contains("<a href=\"/protocol\" id=\"protocol\">the protocol</a>"),
        "{home}"
    );
    assert!(
        home.contains("<tr><td>python</td><td><code>bot.py</code></td>")
            && home.contains("<td><code>python3 bot.py</code></td><td><a href=\"/starters/python\">bot.py</a></td></tr>"),
        "{home}"
    );
    assert!(
        home.contains("<tr><td>java</td><td><code>Main.java</code></td>")
            && home.contains("<a href=\"/starters/java\">Main.java</a>"),
        "{home}"
    );
    // The protocol and a starter, as text, from the binary: they work offline.
    let protocol = get("/protocol").await;
    assert_eq!(protocol.status(), StatusCode::OK);
    assert_eq!(
        protocol.headers()[header::CONTENT_TYPE],
        "text/plain; charset=utf-8"
    );
    let protocol = text(protocol).await;
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let expected = std::fs::read_to_string(repo.join("docs/protocols/geister.md")).unwrap();
    assert_eq!(protocol, expected);
    let starter = get("/starters/python").await;
    assert_eq!(starter.status(), StatusCode::OK);
    assert_eq!(
        starter.headers()[header::CONTENT_DISPOSITION],
        "inline; filename=\"bot.py\""
    );
    let expected = std::fs::read_to_string(repo.join("starters/geister/python/bot.py")).unwrap();
    assert_eq!(text(starter).await, expected);
    // A language the ladder does not offer has no starter.
    assert_eq!(get("/starters/cobol").await.status(), StatusCode::NOT_FOUND);
    // No final before the organiser runs one: the page says how.
    let none = get("/final").await;
    assert_eq!(none.status(), StatusCode::NOT_FOUND);
    assert!(text(none).await.contains("kakehiki ladder final"));
    assert_eq!(
        get("/api/ladders/g/final").await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn the_public_match_page_may_run_only_the_viewers_scripts() {
    let (_dir, app) = ladder();
    let r = app
        .oneshot(request("GET", "/leaderboard", Body::empty()))
        .await
        .unwrap();
    let csp = r.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_string();
    let scripts = csp
        .split(';')
        .find_map(|d| d.trim().strip_prefix("script-src "))
        .expect(&csp);
    // The server's own scripts (the viewer's assets) and the one inline script, by its hash.
    let sources: Vec<&str> = scripts.split(' ').collect();
    assert_eq!(sources.len(), 2, "{csp}");
    assert_eq!(sources[0], "'self'", "{csp}");
    assert!(sources[1].starts_with("'sha256-"), "{csp}");
}

#[tokio::test]
async fn the_viewers_assets_are_served_for_good_under_their_digest() {
    let (_dir, app) = ladder();
    for a in kakehiki_web::assets() {
        let r = get(&app, &a.path).await;
        assert_eq!(r.status(), StatusCode::OK, "{}", a.path);
        assert_eq!(
            r.headers()[header::CONTENT_TYPE],
            a.content_type,
            "{}",
            a.path
        );
        assert_eq!(
            r.headers()[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable",
            "{}",
            a.path
        );
        assert_eq!(r.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        assert_eq!(text(r).await, a.body, "{}", a.path);
    }
    // Only those names: an old digest or another file is not there.
    for uri in [
        "/assets/viewer.0000000000.js",
        "/assets/..%2fCargo.toml",
        "/assets/",
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{uri}");
    }
}

#[tokio::test]
async fn a_request_that_does_not_parse_is_refused_without_echoing_it() {
    let (_dir, app) = ladder();
    for uri in [
        "/api/ladders/g/leaderboard?page=%3Cscript%3Ealert(1)%3C/script%3E",
        "/api/ladders/g/matches/%3Cscript%3E",
        "/matches/%3Cscript%3E",
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status(), StatusCode::BAD_REQUEST, "{uri}");
        let body = text(r).await;
        assert!(!body.contains("script"), "{uri}: {body}");
        assert!(body.starts_with("400 "), "{uri}: {body}");
    }
}

#[tokio::test]
async fn a_burst_of_logins_is_answered_busy_beyond_the_password_slots() {
    let (_dir, app) = ladder();
    let (cookie, token) = pre_session(&app, "/login").await;
    let burst = 4 * kakehiki_ladder_web::pages::password_slots() + 4;
    let started = Instant::now();
    let mut answers = Vec::new();
    for i in 0..burst {
        let app = app.clone();
        let (cookie, token) = (cookie.clone(), token.clone());
        answers.push(tokio::spawn(async move {
            let r = form_post(
                "/login",
                format!("name=user{i}&password=wrong-password&csrf={token}"),
                Some(&cookie),
            );
            let r = app.oneshot(r).await.unwrap();
            (r.status(), r.headers().get(header::RETRY_AFTER).is_some())
        }));
    }
    let mut busy = 0;
    for a in answers {
        let (status, retry) = a.await.unwrap();
        match status {
            StatusCode::SERVICE_UNAVAILABLE => {
                assert!(retry, "a busy answer says when to retry");
                busy += 1;
            }
            StatusCode::UNAUTHORIZED => {}
            other => panic!("unexpected {other}"),
        }
    }
    assert!(
        busy >= burst - 2 * kakehiki_ladder_web::pages::password_slots(),
        "{busy} of {burst} logins were answered busy in {:?}",
        started.elapsed()
    );
}

/// A server on a loopback port with `limits`; its address.
async fn start(limits: ServeLimits) -> (tempfile::TempDir, SocketAddr) {
    let (dir, app) = ladder();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, app, limits));
    (dir, addr)
}

/// What the server sends on `stream` until it closes it or `wait` passes.
fn read_for(stream: &mut TcpStream, wait: Duration) -> (String, bool) {
    stream.set_read_timeout(Some(wait)).unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&out).into_owned(), true),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                return (String::from_utf8_lossy(&out).into_owned(), true)
            }
            Err(_) => return (String::from_utf8_lossy(&out).into_owned(), false),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_loris_connections_are_refused_past_the_cap_and_closed_at_the_header_timeout() {
    let limits = ServeLimits {
        connections: 16,
        connections_per_client: 4,
        header_timeout: Duration::from_secs(1),
        ..ServeLimits::default()
    };
    let (_dir, addr) = start(limits).await;
    tokio::task::spawn_blocking(move || {
        // Four connections whose headers never finish hold this client's share.
        let mut lorises: Vec<TcpStream> = (0..4)
            .map(|_| {
                let mut s = TcpStream::connect(addr).unwrap();
                s.write_all(b"GET /leaderboard HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                    .unwrap();
                s
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        // A fifth is refused at once, not queued.
        let mut fifth = TcpStream::connect(addr).unwrap();
        let t = Instant::now();
        let (answer, closed) = read_for(&mut fifth, Duration::from_secs(5));
        assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
        assert!(answer.contains("Retry-After: 5"), "{answer}");
        assert!(
            closed && t.elapsed() < Duration::from_secs(1),
            "{:?}",
            t.elapsed()
        );
        // At the header timeout each loris is closed, whatever it still sends.
        for s in &mut lorises {
            let _ = s.write_all(b"a");
            let (_, closed) = read_for(s, Duration::from_secs(5));
            assert!(closed, "a connection with unfinished headers stayed open");
        }
        // Its share is back: a whole request is answered.
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(
            b"GET /api/ladders/g/leaderboard HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        )
        .unwrap();
        let (answer, _) = read_for(&mut s, Duration::from_secs(5));
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokenless_upload_is_refused_before_its_body_is_read() {
    let (_dir, addr) = start(ServeLimits::default()).await;
    tokio::task::spawn_blocking(move || {
        for auth in ["", "Authorization: Bearer kkl_not-a-token\r\n"] {
            let mut s = TcpStream::connect(addr).unwrap();
            // A body of 1 GiB announced, none of it sent.
            s.write_all(
                format!(
                    "POST /api/ladders/g/submissions?language=python HTTP/1.1\r\nHost: x\r\n\
                     {auth}Content-Length: 1073741824\r\n\r\n"
                )
                .as_bytes(),
            )
            .unwrap();
            let t = Instant::now();
            let (answer, _) = read_for(&mut s, Duration::from_secs(10));
            assert!(answer.starts_with("HTTP/1.1 401"), "{auth}: {answer}");
            assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_disabled_account_is_refused_its_token_and_its_login() {
    let (_dir, app, mut store) = ladder_with_store();
    let invitation =
        kakehiki_ladder::accounts::invite("dan", kakehiki_store::LadderRole::Contestant).unwrap();
    store.create_ladder_user(&invitation.user).unwrap();
    let password = "a long enough password";
    let hash = kakehiki_ladder::accounts::hash_password(password).unwrap();
    store
        .ladder_sign_up(&invitation.user.signup_code_sha256, &hash)
        .unwrap()
        .unwrap();
    let upload = |token: &str| {
        let mut r = request(
            "POST",
            "/api/ladders/g/submissions?language=python",
            Body::from("print(1)\n"),
        );
        r.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {token}").parse().unwrap(),
        );
        r
    };
    let r = app
        .clone()
        .oneshot(upload(&invitation.token))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    // The upload comes back as a download, with the headers of every answer.
    let mut get = request(
        "GET",
        "/api/ladders/g/bots/dan/versions/1/upload",
        Body::empty(),
    );
    get.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {}", invitation.token).parse().unwrap(),
    );
    let r = app.clone().oneshot(get).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()[header::CACHE_CONTROL], "no-store");
    assert_eq!(r.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(text(r).await, "print(1)\n");
    assert!(store.ladder_set_disabled("dan", true).unwrap());
    let r = app
        .clone()
        .oneshot(upload(&invitation.token))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(text(r).await.contains("disabled"));

    // The right password logs in no more.
    let (cookie, token) = pre_session(&app, "/login").await;
    let r = form_post(
        "/login",
        format!(
            "name=dan&password={}&csrf={token}",
            password.replace(' ', "+")
        ),
        Some(&cookie),
    );
    let r = app.clone().oneshot(r).await.unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    assert!(text(r).await.contains("this account is disabled"));
}

/// Accounts of the organiser olga and the contestant dan, and olga's session made as the login
/// would (CSRF token `the-csrf-token`): its cookie header value.
fn organiser_and_dan(store: &mut dyn kakehiki_store::Store) -> String {
    for (name, role) in [
        ("olga", kakehiki_store::LadderRole::Organiser),
        ("dan", kakehiki_store::LadderRole::Contestant),
    ] {
        let invitation = kakehiki_ladder::accounts::invite(name, role).unwrap();
        store.create_ladder_user(&invitation.user).unwrap();
    }
    let cookie_value = "c".repeat(64);
    store
        .create_ladder_session(
            &kakehiki_ladder::accounts::sha256_hex(&cookie_value),
            "olga",
            "the-csrf-token",
            i64::MAX / 2,
        )
        .unwrap();
    format!("kk_session={cookie_value}")
}

#[tokio::test]
async fn an_organiser_disables_an_account_from_the_organisers_page() {
    let (_dir, app, mut store) = ladder_with_store();
    let cookie = organiser_and_dan(store.as_mut());
    let post = |path: &str, body: &str, cookie: Option<&str>| form_post(path, body.into(), cookie);
    let page = app
        .clone()
        .oneshot(get_with_cookie("/organiser", &cookie))
        .await
        .unwrap();
    let html = text(page).await;
    assert!(
        html.contains("action=\"/organiser/accounts/dan\""),
        "{html}"
    );
    // The store's use by kind.
    assert!(html.contains("<table id=\"storage\">"), "{html}");
    assert!(
        html.contains("<td>uploads</td>") && html.contains("<td>replays</td>"),
        "{html}"
    );
    // Without the session's CSRF token, or as a stranger: refused.
    organiser_form_is_guarded(&app, "/organiser/accounts/dan", "action=disable", &cookie).await;
    assert!(!store.ladder_user("dan").unwrap().unwrap().disabled);
    // The organiser disables, then enables.
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/accounts/dan",
            "action=disable&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(store.ladder_user("dan").unwrap().unwrap().disabled);
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/accounts/dan",
            "action=enable&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(!store.ladder_user("dan").unwrap().unwrap().disabled);
    // Not oneself, and not an account that does not exist.
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/accounts/olga",
            "action=disable&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/accounts/nobody",
            "action=disable&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn an_organiser_invites_and_freezes_from_the_organisers_page_as_the_command_line_does() {
    let (_dir, app, mut store) = ladder_with_store();
    let cookie = organiser_and_dan(store.as_mut());
    let post = |path: &str, body: &str, cookie: Option<&str>| form_post(path, body.into(), cookie);
    let html = text(
        app.clone()
            .oneshot(get_with_cookie("/organiser", &cookie))
            .await
            .unwrap(),
    )
    .await;
    assert!(
        html.contains("<form method=\"post\" action=\"/organiser/invite\" id=\"invite\">"),
        "{html}"
    );
    assert!(html.contains("Freeze: queue no more matches"), "{html}");

    // Refused without the CSRF token, and as a stranger (404: the page is not said to exist).
    organiser_form_is_guarded(&app, "/organiser/invite", "name=erin", &cookie).await;
    assert!(store.ladder_user("erin").unwrap().is_none());

    // Invited: the link and the token, shown once; they work as the command line's do.
    let mut r = post(
        "/organiser/invite",
        "name=erin&role=contestant&csrf=the-csrf-token",
        Some(&cookie),
    );
    r.headers_mut()
        .insert(header::HOST, "ladder.example:8080".parse().unwrap());
    let r = app.clone().oneshot(r).await.unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let html = text(r).await;
    let between = |a: &str, b: &str| {
        html.split(a)
            .nth(1)
            .and_then(|t| t.split(b).next())
            .unwrap_or_else(|| panic!("{a}: {html}"))
            .to_string()
    };
    let link = between("<code id=\"link\">", "</code>").replace("&#x2f;", "/");
    let token = between("<code id=\"token\">", "</code>");
    assert!(
        link.starts_with("http://ladder.example:8080/signup?code="),
        "{link}"
    );
    let code = link.split_once("code=").unwrap().1;
    use kakehiki_ladder::accounts::sha256_hex;
    assert_eq!(
        store
            .ladder_signup_name(&sha256_hex(code))
            .unwrap()
            .as_deref(),
        Some("erin")
    );
    let erin = store
        .ladder_user_by_token(&sha256_hex(&token))
        .unwrap()
        .unwrap();
    assert_eq!(erin.name, "erin");
    assert_eq!(erin.role, kakehiki_store::LadderRole::Contestant);
    // A taken name is refused with the way out; `again` gives a new link and token.
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/invite",
            "name=erin&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(text(r)
        .await
        .contains("there is already an account &quot;erin&quot;: tick"));
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/invite",
            "name=erin&again=yes&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(store
        .ladder_user_by_token(&sha256_hex(&token))
        .unwrap()
        .is_none());
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/invite",
            "name=nobody&again=yes&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(text(r)
        .await
        .contains("there is no account &quot;nobody&quot; to invite again"));
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/invite",
            "name=.bad&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);

    // Freeze and thaw, as `kakehiki ladder freeze [--thaw]`.
    store.ladder_state("g").unwrap();
    for (action, frozen) in [("freeze", true), ("thaw", false)] {
        let r = app
            .clone()
            .oneshot(post(
                "/organiser/ladder",
                &format!("action={action}&csrf=the-csrf-token"),
                Some(&cookie),
            ))
            .await
            .unwrap();
        assert_eq!(r.status(), StatusCode::SEE_OTHER, "{action}");
        assert_eq!(store.ladder_state("g").unwrap().frozen, frozen, "{action}");
    }
    let r = app
        .clone()
        .oneshot(post(
            "/organiser/ladder",
            "action=melt&csrf=the-csrf-token",
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn an_account_over_its_storage_quota_is_refused_before_a_version_is_made() {
    let (_dir, app, mut store) = ladder_of("[limits]\naccount_mib = 1\n");
    let invitation =
        kakehiki_ladder::accounts::invite("dan", kakehiki_store::LadderRole::Contestant).unwrap();
    store.create_ladder_user(&invitation.user).unwrap();
    let upload = || {
        let mut r = request(
            "POST",
            "/api/ladders/g/submissions?language=python",
            Body::from(vec![b'#'; 600 << 10]),
        );
        r.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {}", invitation.token).parse().unwrap(),
        );
        r
    };
    let r = app.clone().oneshot(upload()).await.unwrap();
    assert_eq!(r.status(), StatusCode::ACCEPTED);
    let r = app.clone().oneshot(upload()).await.unwrap();
    assert_eq!(r.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body = text(r).await;
    assert!(
        body.contains("your bot's uploads and programs take 614400 bytes of your 1048576"),
        "{body}"
    );
    assert_eq!(store.bot_versions("g", "dan").unwrap().len(), 1);
}

#[tokio::test]
async fn a_common_password_is_refused_at_sign_up_with_the_reason() {
    let (_dir, app, mut store) = ladder_with_store();
    let invitation =
        kakehiki_ladder::accounts::invite("dan", kakehiki_store::LadderRole::Contestant).unwrap();
    store.create_ladder_user(&invitation.user).unwrap();
    let (cookie, csrf) =
        pre_session(&app, &format!("/signup?code={}", invitation.signup_code)).await;
    let sign_up = |password: &str| {
        form_post(
            "/signup",
            format!(
                "code={}&password={password}&password2={password}&csrf={csrf}",
                invitation.signup_code
            ),
            Some(&cookie),
        )
    };
    let r = app.clone().oneshot(sign_up("password123")).await.unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    let page = text(r).await;
    assert!(
        page.contains("this password is too easy to guess ("),
        "{page}"
    );
    // The code is still unused; a strong password signs up.
    let r = app
        .clone()
        .oneshot(sign_up("violet+kettle+harbour+drum"))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn an_organiser_retires_and_brings_back_a_bot_from_the_organisers_page() {
    let (_dir, app, mut store) = ladder_with_store();
    let cookie = organiser_and_dan(store.as_mut());
    store
        .add_bot_version(&kakehiki_store::NewBotVersion {
            ladder: "g".into(),
            bot: "dan".into(),
            owner: "dan".into(),
            language: "python".into(),
            source_sha256: "0".repeat(64),
        })
        .unwrap();
    let organiser_page = || get_with_cookie("/organiser", &cookie);
    let html = text(app.clone().oneshot(organiser_page()).await.unwrap()).await;
    assert!(html.contains("<table id=\"bots\">"), "{html}");
    assert!(html.contains("action=\"/organiser/bots/dan\""), "{html}");
    let post =
        |body: &str, cookie: Option<&str>| form_post("/organiser/bots/dan", body.into(), cookie);
    // A stranger, a wrong token, a bad action: refused, nothing retired.
    organiser_form_is_guarded(&app, "/organiser/bots/dan", "action=retire", &cookie).await;
    let r = app
        .clone()
        .oneshot(post("action=drop&csrf=the-csrf-token", Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::BAD_REQUEST);
    assert!(store.ladder_retired_bots("g").unwrap().is_empty());
    // Retired, shown so, then brought back.
    let r = app
        .clone()
        .oneshot(post("action=retire&csrf=the-csrf-token", Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(store.ladder_retired_bots("g").unwrap(), ["dan"]);
    let html = text(app.clone().oneshot(organiser_page()).await.unwrap()).await;
    assert!(
        html.contains("<b>retired</b>") && html.contains("bring back"),
        "{html}"
    );
    let r = app
        .clone()
        .oneshot(post("action=restore&csrf=the-csrf-token", Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert!(store.ladder_retired_bots("g").unwrap().is_empty());
    // A bot that does not exist: 404.
    let r = app
        .clone()
        .oneshot(form_post(
            "/organiser/bots/nobody",
            "action=retire&csrf=the-csrf-token".into(),
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NOT_FOUND);
}

/// The leaderboard and a bot's newest matches are served from memory and follow the ratings:
/// a result rated after a bot's matches were first read shows on its list (added from the
/// seats rated since, not read again) once the server is told the ratings moved.
#[tokio::test]
async fn the_pages_follow_the_ratings_they_keep_in_memory() {
    use kakehiki_store::{LadderSeat, NewResult};
    let dir = tempfile::tempdir().unwrap();
    let config = LadderConfig::parse("name = \"g\"\ngame = \"geister\"\n", "ladder.toml", &|g| {
        kakehiki_contest::RefereeArena.game_type(g)
    })
    .unwrap();
    let db = dir.path().join("ladder.sqlite");
    let mut store = kakehiki_store::open_store(&db, None).unwrap();
    let contest = ladder_g_with(store.as_mut(), &[("ann", "ann"), ("bob", "bob")], false);
    let names = vec!["ann@v1".to_string(), "bob@v1".to_string()];
    let play = |store: &mut Box<dyn kakehiki_store::Store>, index: u64, seq: u64, winner: usize| {
        store
            .put_result(&NewResult {
                contest: &contest,
                index,
                entrants: &names,
                report_json: "{}",
                replay: "{}\n",
                duration_ms: 1,
                worker: "t",
            })
            .unwrap();
        let seats: Vec<LadderSeat> = (0..2)
            .map(|seat| LadderSeat {
                index,
                seat,
                entrant: names[seat].clone(),
                bot: names[seat].trim_end_matches("@v1").into(),
                version: 1,
                score: if seat == winner { 1.0 } else { 0.0 },
                place: if seat == winner { 1 } else { 2 },
                errors: 0,
                mu_after: if seat == winner { 27.0 } else { 23.0 },
                sigma_after: 8.0,
                played_at: 1,
            })
            .collect();
        assert!(store.ladder_rate("g", seq, &seats).unwrap());
    };
    play(&mut store, 0, 1, 0);
    let stores = (0..2)
        .map(|_| kakehiki_store::open_store(&db, None).unwrap())
        .collect();
    let app = App::new(Arc::new(config), stores, false);
    let r = router(app.clone());
    let json_of = |path: &'static str| {
        let r = r.clone();
        async move {
            let resp = r
                .oneshot(request("GET", path, Body::empty()))
                .await
                .unwrap();
            assert_eq!(resp.status(), StatusCode::OK);
            serde_json::from_str::<serde_json::Value>(&text(resp).await).unwrap()
        }
    };
    let board = json_of("/api/ladders/g/leaderboard").await;
    assert_eq!(board["rows"][0]["bot"], "ann");
    assert_eq!(board["rows"][0]["games"], 1);
    let ann = json_of("/api/ladders/g/bots/ann/matches").await;
    assert_eq!(ann["matches"].as_array().unwrap().len(), 1);

    play(&mut store, 1, 2, 1);
    app.ratings_moved();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let board = json_of("/api/ladders/g/leaderboard").await;
        if board["rows"][0]["games"] == 2 {
            break;
        }
        assert!(Instant::now() < deadline, "{board}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let ann = json_of("/api/ladders/g/bots/ann/matches").await;
    let indices: Vec<u64> = ann["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["index"].as_u64().unwrap())
        .collect();
    assert_eq!(indices, [1, 0], "{ann}");
    let page = text(
        r.clone()
            .oneshot(request("GET", "/bots/ann", Body::empty()))
            .await
            .unwrap(),
    )
    .await;
    assert!(page.contains("href=\"/matches/1\""), "{page}");

    // Frozen by the organiser (another process: `ladder freeze`): the leaderboard's API and page
    // say so once the pages' memory is read again, and so does a version's page.
    assert_eq!(board["frozen"], false);
    store.ladder_set_frozen("g", true).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let board = json_of("/api/ladders/g/leaderboard").await;
        if board["frozen"] == true {
            break;
        }
        assert!(Instant::now() < deadline, "{board}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let page = text(
        r.clone()
            .oneshot(request("GET", "/leaderboard", Body::empty()))
            .await
            .unwrap(),
    )
    .await;
    assert!(
        page.contains("<b>Frozen</b>: the organiser has stopped matchmaking"),
        "{page}"
    );
}

/// A server of two ladders (Geister `g` and Negotiate and Conquer `n`) on a fresh SQLite store,
/// and one more connection to that store.
fn two_ladders() -> (tempfile::TempDir, Router, Box<dyn kakehiki_store::Store>) {
    let dir = tempfile::tempdir().unwrap();
    let configs = [("g", "geister"), ("n", "nac")]
        .iter()
        .map(|(name, game)| {
            Arc::new(
                LadderConfig::parse(
                    &format!("name = \"{name}\"\ngame = \"{game}\"\n"),
                    "ladder.toml",
                    &|g| kakehiki_contest::RefereeArena.game_type(g),
                )
                .unwrap(),
            )
        })
        .collect();
    let db = dir.path().join("ladder.sqlite");
    let stores = (0..2)
        .map(|_| kakehiki_store::open_store(&db, None).unwrap())
        .collect();
    let apps = App::site(configs, stores, false).unwrap();
    let store = kakehiki_store::open_store(&db, None).unwrap();
    (dir, router(apps[0].clone()), store)
}

/// One account and one token enter every ladder of a server; each ladder's pages are under
/// `/ladders/NAME/` and link there; `/` lists the ladders with their state; the organiser's
/// freeze is one ladder's.
#[tokio::test]
async fn one_server_serves_several_ladders_with_one_account() {
    let (_dir, app, mut store) = two_ladders();
    let cookie = organiser_and_dan(store.as_mut());
    // dan's token: invited again through the store, as `ladder invite --again` does.
    let (invitation, _) = kakehiki_ladder::accounts::invite_account(
        store.as_mut(),
        "dan",
        kakehiki_store::LadderRole::Contestant,
        true,
    )
    .unwrap();
    for ladder in ["g", "n"] {
        let mut r = request(
            "POST",
            &format!("/api/ladders/{ladder}/submissions?language=python"),
            Body::from("print(1)\n"),
        );
        r.headers_mut().insert(
            header::AUTHORIZATION,
            format!("Bearer {}", invitation.token).parse().unwrap(),
        );
        let r = app.clone().oneshot(r).await.unwrap();
        assert_eq!(r.status(), StatusCode::ACCEPTED, "{ladder}");
        assert_eq!(store.bot_versions(ladder, "dan").unwrap().len(), 1);
    }
    let mut r = request(
        "POST",
        "/api/ladders/x/submissions?language=python",
        Body::from("print(1)\n"),
    );
    r.headers_mut().insert(
        header::AUTHORIZATION,
        format!("Bearer {}", invitation.token).parse().unwrap(),
    );
    assert_eq!(
        app.clone().oneshot(r).await.unwrap().status(),
        StatusCode::NOT_FOUND
    );

    // `/` lists both; each ladder's home, leaderboard and protocol are under its place.
    let home = text(get(&app, "/").await).await;
    assert!(
        home.contains("<a href=\"/ladders/g/\">g</a></td><td>geister (")
            && home.contains("<a href=\"/ladders/n/\">n</a></td><td>nac ("),
        "{home}"
    );
    for uri in [
        "/ladders/g",
        "/ladders/g/",
        "/ladders/n/",
        "/ladders/n/leaderboard",
        "/ladders/n/protocol",
        "/ladders/g/starters/python",
    ] {
        let r = get(&app, uri).await;
        assert_eq!(r.status(), StatusCode::OK, "{uri}");
        assert_eq!(r.headers()[header::X_FRAME_OPTIONS], "DENY", "{uri}");
    }
    let n_home = text(get(&app, "/ladders/n/").await).await;
    assert!(
        n_home.contains("href=\"/ladders/n/leaderboard\""),
        "{n_home}"
    );
    assert!(n_home.contains("href=\"/ladders/n/protocol\""), "{n_home}");
    // A single ladder's addresses are a server of one ladder's only.
    for uri in ["/leaderboard", "/organiser", "/protocol", "/ladders/x/"] {
        let r = get(&app, uri).await;
        assert_eq!(r.status(), StatusCode::NOT_FOUND, "{uri}");
    }

    // The organiser's page is each ladder's; its forms post there; freezing `n` leaves `g`.
    let page = text(
        app.clone()
            .oneshot(get_with_cookie("/ladders/n/organiser", &cookie))
            .await
            .unwrap(),
    )
    .await;
    assert!(
        page.contains("action=\"/ladders/n/organiser/ladder\" id=\"freeze\""),
        "{page}"
    );
    assert!(
        page.contains("href=\"/ladders/n/organiser\">organiser</a>"),
        "{page}"
    );
    organiser_form_is_guarded(
        &app,
        "/ladders/n/organiser/ladder",
        "action=freeze",
        &cookie,
    )
    .await;
    let r = app
        .clone()
        .oneshot(form_post(
            "/ladders/n/organiser/ladder",
            "action=freeze&csrf=the-csrf-token".into(),
            Some(&cookie),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[header::LOCATION], "/ladders/n/organiser");
    assert!(store.ladder_state("n").unwrap().frozen);
    assert!(!store.ladder_state("g").unwrap().frozen);
    let started = Instant::now();
    loop {
        let home = text(get(&app, "/").await).await;
        let row = |name: &str| {
            home.split(&format!("<a href=\"/ladders/{name}/\">"))
                .nth(1)
                .and_then(|t| t.split("</tr>").next())
                .unwrap_or_default()
                .to_string()
        };
        if row("n").contains("frozen") {
            assert!(row("g").contains("playing"), "{home}");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "{home}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // dan's page (one session, at the root) has both ladders' forms and versions.
    let cookie_value = "d".repeat(64);
    store
        .create_ladder_session(
            &kakehiki_ladder::accounts::sha256_hex(&cookie_value),
            "dan",
            "dans-csrf",
            i64::MAX / 2,
        )
        .unwrap();
    let me = text(
        app.clone()
            .oneshot(get_with_cookie(
                "/me",
                &format!("kk_session={cookie_value}"),
            ))
            .await
            .unwrap(),
    )
    .await
    .replace("&#x2f;", "/");
    for ladder in ["g", "n"] {
        assert!(
            me.contains(&format!("action=\"/ladders/{ladder}/upload\"")),
            "{me}"
        );
        assert!(
            me.contains(&format!("href=\"/ladders/{ladder}/bots/dan/versions/1\"")),
            "{me}"
        );
    }
    assert!(me.contains("<b id=\"account\">dan</b>"), "{me}");
    // Its version page is the ladder's.
    let r = app
        .clone()
        .oneshot(get_with_cookie(
            "/ladders/n/bots/dan/versions/1",
            &format!("kk_session={cookie_value}"),
        ))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let version = text(r).await;
    assert!(version.contains("<b>The ladder is frozen</b>"), "{version}");
}

/// Ladder `g`'s contest in `store` with `bots` (name, owner) entered at version 1, each with a
/// bot version of its owner's when `owned` (whose stderr the owner then sees): the contest's
/// name.
fn ladder_g_with(
    store: &mut dyn kakehiki_store::Store,
    bots: &[(&str, &str)],
    owned: bool,
) -> String {
    let contest = kakehiki_store::ladder_contest("g");
    store
        .register_contest(&kakehiki_store::ContestRow {
            name: contest.clone(),
            fingerprint: kakehiki_store::LADDER_FINGERPRINT.into(),
            definition: "{}".into(),
        })
        .unwrap();
    store.ladder_state("g").unwrap();
    for (bot, owner) in bots {
        if owned {
            store
                .add_bot_version(&kakehiki_store::NewBotVersion {
                    ladder: "g".into(),
                    bot: bot.to_string(),
                    owner: owner.to_string(),
                    language: "python".into(),
                    source_sha256: "0".repeat(64),
                })
                .unwrap();
        }
        store
            .ladder_enter(
                "g",
                &kakehiki_store::LadderEntrant {
                    entrant: format!("{bot}@v1"),
                    bot: bot.to_string(),
                    version: 1,
                    owner: owner.to_string(),
                },
            )
            .unwrap();
    }
    contest
}

/// Read SSE frames from `body` until `until` holds of what was read (within 10 s).
async fn read_sse(body: &mut Body, got: &mut String, until: impl Fn(&str) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !until(got) {
        let left = deadline.saturating_duration_since(Instant::now());
        let frame = tokio::time::timeout(left, body.frame())
            .await
            .expect("the stream sent what was expected in time")
            .expect("the stream is open")
            .unwrap();
        if let Ok(data) = frame.into_data() {
            got.push_str(std::str::from_utf8(&data).unwrap());
        }
    }
}

/// The replay lines of an SSE text, put back in place by their `id`.
fn sse_lines(text: &str) -> Vec<String> {
    let mut by_id = std::collections::BTreeMap::new();
    for event in text.split("\n\n") {
        let mut id = None;
        let mut data = None;
        for l in event.lines() {
            if let Some(v) = l.strip_prefix("id: ") {
                id = v.parse::<usize>().ok();
            }
            if let Some(v) = l.strip_prefix("data: ") {
                data = Some(v.to_string());
            }
        }
        if let (Some(i), Some(d)) = (id, data) {
            by_id.insert(i, d);
        }
    }
    by_id.into_values().collect()
}

/// A match being played is listed, has a live page and a stream: its owner's stream has their
/// own bot's stderr and never the other contestant's, the public's has no stderr and none of
/// the game's secrets (the placements) until the match is over; put back by line number, each
/// stream is the stored replay as its reader may see it; once stored, the page is the replay's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_is_watched_as_it_is_played() {
    use kakehiki_core::live::registry;
    use kakehiki_store::NewResult;
    let (dir, app, mut store) = ladder_with_store();
    organiser_and_dan(store.as_mut());
    let contest = ladder_g_with(store.as_mut(), &[("dans", "dan"), ("olgas", "olga")], true);
    let dan_cookie = "d".repeat(64);
    store
        .create_ladder_session(
            &kakehiki_ladder::accounts::sha256_hex(&dan_cookie),
            "dan",
            "dans-csrf",
            i64::MAX / 2,
        )
        .unwrap();
    let dan_cookie = format!("kk_session={dan_cookie}");
    // A real match of two bots that write on stderr at every move, each its owner's secret.
    let bot = dir.path().join("talk.py");
    std::fs::write(
        &bot,
        "import sys\nme = sys.argv[1]\nfor line in sys.stdin:\n    if line.startswith('SET?'):\n        print('SET:ABCD', flush=True)\n    elif line.startswith('MOV?'):\n        print('secret of', me, file=sys.stderr, flush=True)\n        b = line[4:]\n        own = [(int(b[3*i]), int(b[3*i+1])) for i in range(8)]\n        for i, (x, y) in enumerate(own):\n            if 0 < y < 6 and (x, y - 1) not in own:\n                print(f'MOV:{chr(65+i)},N', flush=True)\n                break\n        else:\n            print('MOV:A,N', flush=True)\n",
    )
    .unwrap();
    let seat = |who: &str| {
        kakehiki_core::SeatSpec::Cmd(vec![
            "python3".into(),
            bot.display().to_string(),
            who.into(),
        ])
    };
    let spec = kakehiki_referee::MatchSpec::new("geister", 9, vec![seat("DAN"), seat("OLGA")]);
    let geister = kakehiki_referee::find_game("geister").unwrap();
    let record = geister.play(&spec).await.unwrap();
    let replay: Vec<String> = record.replay.lines().to_vec();
    assert!(replay.iter().any(|l| l.contains("secret of DAN")));
    let entrants = vec!["dans@v1".to_string(), "olgas@v1".to_string()];
    let live = registry().start(&contest, 7, "geister", &entrants, geister.public_live());
    let half = replay.len() / 2;
    live.extend(&replay[..half]);
    // Listed, with its page and stream.
    let running = text(get(&app, "/api/ladders/g/running").await).await;
    let running: serde_json::Value = serde_json::from_str(&running).unwrap();
    assert_eq!(running["running"][0]["index"], 7, "{running}");
    assert_eq!(running["running"][0]["page"], "/matches/7", "{running}");
    assert_eq!(running["running"][0]["entrants"][0], "dans@v1", "{running}");
    let page = text(get(&app, "/matches/7").await)
        .await
        .replace("&#x2f;", "/");
    assert!(page.contains("id=\"live-badge\""), "{page}");
    assert!(
        page.contains("data-events=\"/api/ladders/g/matches/7/events?after="),
        "{page}"
    );
    assert!(!page.contains("secret of"), "no stderr on the public page");
    let list = text(get(&app, "/live").await).await.replace("&#x2f;", "/");
    assert!(list.contains("<a href=\"/matches/7\">7</a>"), "{list}");
    assert!(list.contains("dans@v1, olgas@v1"), "{list}");
    // The public's stream and dan's, each read up to where the match is.
    let public = get(&app, "/api/ladders/g/matches/7/events").await;
    assert_eq!(public.status(), StatusCode::OK);
    assert_eq!(
        public.headers()[header::CONTENT_TYPE].to_str().unwrap(),
        "text/event-stream"
    );
    let mut public_body = public.into_body();
    let mut public_text = String::new();
    let dan = app
        .clone()
        .oneshot(get_with_cookie(
            "/api/ladders/g/matches/7/events",
            &dan_cookie,
        ))
        .await
        .unwrap();
    let mut dan_body = dan.into_body();
    let mut dan_text = String::new();
    let shown = |text: &str| text.matches("\nid: ").count() + usize::from(text.starts_with("id: "));
    let public_so_far = replay[..half]
        .iter()
        .filter(|l| (geister.public_live())(l))
        .count();
    read_sse(&mut public_body, &mut public_text, |t| {
        shown(t) >= public_so_far
    })
    .await;
    read_sse(&mut dan_body, &mut dan_text, |t| shown(t) >= public_so_far).await;
    for t in [&public_text, &dan_text] {
        assert!(
            !t.contains("\"event\":\"set\""),
            "a placement went out: {t}"
        );
        assert!(!t.contains("SET:ABCD"), "a placement went out: {t}");
        assert!(!t.contains("secret of OLGA"), "olga's stderr went out: {t}");
    }
    assert!(!public_text.contains("secret of DAN"));
    assert!(
        dan_text.contains("secret of DAN"),
        "dan sees his own stderr: {dan_text}"
    );
    // A reader that lost its stream and reconnects with the last line it was sent
    // (`Last-Event-ID`) gets only what came after it.
    let last: usize = public_text
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("id: "))
        .unwrap()
        .parse()
        .unwrap();
    let mut again = request("GET", "/api/ladders/g/matches/7/events", Body::empty());
    again
        .headers_mut()
        .insert("last-event-id", last.to_string().parse().unwrap());
    let mut again_body = app.clone().oneshot(again).await.unwrap().into_body();
    let mut again_text = String::new();
    live.extend(&replay[..half + 4]);
    let more = replay[half..half + 4]
        .iter()
        .filter(|l| (geister.public_live())(l))
        .count();
    assert!(more > 0);
    read_sse(&mut again_body, &mut again_text, |t| shown(t) >= more).await;
    let got = sse_lines(&again_text);
    assert_eq!(got.len(), more, "only the lines after {last}: {again_text}");
    assert!(again_text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .all(|id| id.parse::<usize>().unwrap() > last));
    // The match ends and is stored: both streams end with the whole replay.
    live.extend(&replay);
    live.finish(&replay);
    let report = serde_json::to_string(&record.report).unwrap();
    store
        .put_result(&NewResult {
            contest: &contest,
            index: 7,
            entrants: &entrants,
            report_json: &report,
            replay: &record.replay.to_text(),
            duration_ms: 1,
            worker: "test",
        })
        .unwrap();
    registry().end(&contest, 7);
    read_sse(&mut public_body, &mut public_text, |t| {
        t.contains("event: end")
    })
    .await;
    read_sse(&mut dan_body, &mut dan_text, |t| t.contains("event: end")).await;
    let text_of = |visible: &[bool]| -> Vec<String> {
        kakehiki_core::exchange::hide_stderr(&record.replay.to_text(), visible)
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(sse_lines(&public_text), text_of(&[]));
    assert_eq!(sse_lines(&dan_text), text_of(&[true, false]));
    // Stored: no longer running, the page is the replay's, and the stream is the stored one.
    let running = text(get(&app, "/api/ladders/g/running").await).await;
    assert!(running.contains("\"running\":[]"), "{running}");
    assert!(text(get(&app, "/live").await)
        .await
        .contains("id=\"none-running\""));
    let page = text(get(&app, "/matches/7").await).await;
    assert!(!page.contains("id=\"live-badge\""), "{page}");
    assert!(page.contains("kv-model"), "{page}");
    let stored = text(get(&app, "/api/ladders/g/matches/7/events").await).await;
    assert_eq!(sse_lines(&stored), text_of(&[]));
    assert!(
        stored.ends_with("event: end\ndata: {\"finished\":true}\n\n"),
        "{stored}"
    );
    // Never played: 404.
    assert_eq!(
        get(&app, "/api/ladders/g/matches/99/events").await.status(),
        StatusCode::NOT_FOUND
    );
}

/// A signed-in contestant plays a bot of the ladder from its page ("play against this bot"):
/// the form needs the session's CSRF token, one match at a time; the seat's page and its
/// interface open only with the key of the address the form redirected to; the person's illegal
/// moves are refused with the reason; the match is played to its end by the server, shown as a
/// replay once over, and neither stored nor rated.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_plays_a_bot_of_the_ladder_unrated_from_its_page() {
    let (_dir, app, mut store) = ladder_made("builtins = [\"random\"]\n", |app, dir| {
        let people = kakehiki_ladder_web::people::People::new(dir.join("programs"), 1);
        app.with_people(Arc::new(people))
    });
    ladder_g_with(store.as_mut(), &[], false);
    let random = "builtin:random";
    store
        .ladder_enter(
            "g",
            &kakehiki_store::LadderEntrant {
                entrant: random.into(),
                bot: random.into(),
                version: 0,
                owner: "builtin".into(),
            },
        )
        .unwrap();
    let cookie = organiser_and_dan(store.as_mut());
    // The bot's page offers the match to a signed-in visitor only.
    let page = text(
        app.clone()
            .oneshot(get_with_cookie("/bots/builtin:random", &cookie))
            .await
            .unwrap(),
    )
    .await;
    assert!(page.contains("id=\"play-bot\""), "{page}");
    assert!(!text(get(&app, "/bots/builtin:random").await)
        .await
        .contains("play-bot"));
    let play = "/bots/builtin:random/play";
    let r = app
        .clone()
        .oneshot(form_post(play, "csrf=wrong".into(), Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::FORBIDDEN);
    let r = app
        .clone()
        .oneshot(form_post(play, "csrf=the-csrf-token".into(), None))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    assert_eq!(r.headers()[header::LOCATION], "/login");
    let r = app
        .clone()
        .oneshot(form_post(play, "csrf=the-csrf-token".into(), Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let seat = r.headers()[header::LOCATION].to_str().unwrap().to_string();
    assert!(seat.starts_with("/play/1/seat/0?key="), "{seat}");
    let key = seat.split_once("key=").unwrap().1.to_string();
    assert_eq!(key.len(), 32);
    // One match at a time.
    let again = app
        .clone()
        .oneshot(form_post(play, "csrf=the-csrf-token".into(), Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::CONFLICT);
    assert!(text(again).await.contains("playing a match already"));
    // The key opens the seat; any other address is the same 404.
    let page = text(get(&app, &seat).await).await;
    assert!(
        page.contains("Seat 0: you play this geister match"),
        "{page}"
    );
    // Its routes and the match's page are the match's (`/` is written `&#x2f;`).
    let page = page.replace("&#x2f;", "/");
    assert!(
        page.contains(&format!("href=\"/play/1?key={key}\"")),
        "{page}"
    );
    assert!(page.contains(&format!("data-events=\"/play/1/seat/0/events?key={key}\"")));
    assert!(page.contains(&format!("data-reply=\"/play/1/seat/0/reply?key={key}\"")));
    for wrong in [
        "/play/1/seat/0?key=00",
        "/play/1/seat/1?key=K",
        "/play/2/seat/0",
    ] {
        let wrong = wrong.replace('K', &key);
        assert_eq!(
            get(&app, &wrong).await.status(),
            StatusCode::NOT_FOUND,
            "{wrong}"
        );
    }
    let events = get(&app, &format!("/play/1/seat/0/events?key={key}")).await;
    assert_eq!(events.status(), StatusCode::OK);
    let mut body = events.into_body();
    let mut seen = String::new();
    // Asked (a reply is awaited until a time) once SET? is told.
    read_sse(&mut body, &mut seen, |t| {
        t.contains("SET?") && t.contains("\"waiting_until_unix_ms\":1")
    })
    .await;
    // Play: the placement, then the first of the moves the seat takes (the illegal ones are
    // refused with the reason), until the seat is over.
    let reply = format!("/play/1/seat/0/reply?key={key}");
    let send = |text: String| {
        let app = app.clone();
        let reply = reply.clone();
        async move {
            let r = app
                .oneshot(request("POST", &reply, Body::from(text)))
                .await
                .unwrap();
            let status = r.status();
            let answer: serde_json::Value = serde_json::from_str(&self::text(r).await).unwrap();
            let why = answer["error"].as_str().unwrap_or_default().to_string();
            (status, why)
        }
    };
    assert_eq!(
        send("SET:ABCD".into()).await,
        (StatusCode::OK, String::new())
    );
    let (status, why) = send("SET:ABCD".into()).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        why.contains("nothing is asked of you now") || why.contains("placement is made"),
        "{why}"
    );
    let (mut moves, mut refused) = (0, 0);
    let started = Instant::now();
    'game: loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the match did not end: {moves} moves, {refused} refused, last {:?}",
            send("MOV:A,N".into()).await
        );
        for g in "ABCDEFGH".chars() {
            for d in ["N", "W", "E", "S"] {
                let (status, why) = send(format!("MOV:{g},{d}")).await;
                match status {
                    StatusCode::OK => {
                        moves += 1;
                        continue 'game;
                    }
                    StatusCode::UNPROCESSABLE_ENTITY => {
                        assert!(
                            why.contains(&format!("{g}")) || why.contains("ghost"),
                            "{why}"
                        );
                        refused += 1
                    }
                    StatusCode::CONFLICT if why.contains("over") => break 'game,
                    StatusCode::CONFLICT => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue 'game;
                    }
                    other => panic!("{other}: {why}"),
                }
            }
        }
        panic!("no move was taken");
    }
    assert!(moves > 0 && refused > 0, "{moves} moves, {refused} refused");
    // Over: the replay, and its stream; nothing stored, nothing rated.
    let started = Instant::now();
    let replay = loop {
        let page = text(get(&app, &format!("/play/1?key={key}")).await).await;
        if !page.contains("id=\"live-badge\"") {
            break page;
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        replay.contains("geister match against builtin:random"),
        "{replay}"
    );
    // Under the ladder's policy: its viewer is the server's assets; the one inline script is
    // the error hook.
    assert!(replay
        .replace("&#x2f;", "/")
        .contains("<script src=\"/assets/viewer."));
    assert_eq!(replay.matches("<script>").count(), 1, "{replay}");
    let stream = text(get(&app, &format!("/play/1/events?key={key}")).await).await;
    assert!(stream.contains("event: end"), "{stream}");
    // No bot's stderr: every `stderr` is empty.
    let said = stream.matches("\"stderr\":\"").count();
    assert_eq!(said, stream.matches("\"stderr\":\"\"").count(), "{stream}");
    assert_eq!(store.ladder_state("g").unwrap().rated_seq, 0);
    assert!(store.ladder_running("g").unwrap().is_empty());
    // Another match may start now.
    let r = app
        .clone()
        .oneshot(form_post(play, "csrf=the-csrf-token".into(), Some(&cookie)))
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
}
