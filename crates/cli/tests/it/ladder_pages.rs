//! `kakehiki ladder serve`'s web pages over HTTP (ureq's cookie store) and in a real browser
//! (chromium through chromedriver and WebDriver): sign-up with the invitation's link, login and
//! logout, uploads through the form, a version's page for its owner and organisers only (404 for
//! anyone else), the organiser's page, CSRF refusals and the rate limits.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::browser::{click, shown, text_when, type_into, WebDriver};
use crate::support::{kakehiki, loopback_url, repo, start_and_read, Says, Server};

const MINIMAL: &str =
    "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\nlanguages = [\"python\", \"cpp\"]\n";

/// The store a test serves: an SQLite file, or a PostgreSQL schema of its own.
enum Db {
    Sqlite(PathBuf),
    Pg(String),
}

impl Db {
    fn args(&self) -> Vec<String> {
        match self {
            Db::Sqlite(p) => vec!["--db".into(), p.display().to_string()],
            Db::Pg(url) => vec!["--database-url".into(), url.clone()],
        }
    }
}

/// `kakehiki ladder invite NAME --json`: the sign-up code and the API token.
fn invite(db: &Db, name: &str, extra: &[&str]) -> (String, String) {
    let out = kakehiki()
        .args(["ladder", "invite", name, "--json"])
        .args(db.args())
        .args(extra)
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let url = v["signup_url"].as_str().unwrap();
    let code = url.split_once("/signup?code=").unwrap().1.to_string();
    (code, v["token"].as_str().unwrap().to_string())
}

/// Kills the server when the test ends, however it ends.
/// `kakehiki ladder serve` of `config` on a free loopback port with an SQLite store; its URL.
fn serve(dir: &Path, config: &str, extra: &[&str]) -> (Server, String, Db) {
    let db = Db::Sqlite(dir.join("ladder.sqlite"));
    let (server, url) = serve_on(dir, config, extra, &db);
    (server, url, db)
}

/// `kakehiki ladder serve` of `config` on `db`.
fn serve_on(dir: &Path, config: &str, extra: &[&str], db: &Db) -> (Server, String) {
    let path = dir.join("ladder.toml");
    std::fs::write(&path, config).unwrap();
    let mut cmd = kakehiki();
    cmd.args(["ladder", "serve", "--config"])
        .arg(&path)
        .args(db.args())
        .arg("--data")
        .arg(dir.join("data"))
        .args(["--bind", "127.0.0.1:0"])
        .args(extra)
        .env_remove("KAKEHIKI_DATABASE_URL");
    start_and_read(cmd, Says::Stderr, loopback_url)
}

/// An answer: status, headers we look at, body.
struct Answer {
    status: u16,
    location: Option<String>,
    set_cookies: Vec<String>,
    retry_after: Option<String>,
    disposition: Option<String>,
    body: String,
}

/// A browser without a browser: follows no redirect, keeps cookies as a browser does (ureq's
/// cookie store: a cookie cleared with `Max-Age=0` is dropped, one for another path is not sent).
struct Visitor {
    base: String,
    agent: ureq::Agent,
}

impl Visitor {
    fn new(base: &str) -> Visitor {
        Visitor {
            base: base.to_string(),
            agent: ureq::AgentBuilder::new().redirects(0).build(),
        }
    }

    /// A visitor holding one cookie it was never given (an old session's, kept by a thief).
    fn holding(base: &str, name: &str, value: &str) -> Visitor {
        let url = url::Url::parse(base).unwrap();
        let mut store = cookie_store::CookieStore::default();
        store
            .insert_raw(&cookie_store::RawCookie::new(name, value), &url)
            .expect("a cookie for the ladder's own address");
        Visitor {
            base: base.to_string(),
            agent: ureq::AgentBuilder::new()
                .redirects(0)
                .cookie_store(store)
                .build(),
        }
    }

    /// The value of the cookie `name` the visitor would send to the ladder, if it holds one.
    fn cookie(&self, name: &str) -> Option<String> {
        let url = url::Url::parse(&self.base).unwrap();
        self.agent
            .cookie_store()
            .get_request_values(&url)
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }

    fn answer(&mut self, r: Result<ureq::Response, ureq::Error>) -> Answer {
        let r = match r {
            Ok(r) => r,
            Err(ureq::Error::Status(_, r)) => r,
            Err(e) => panic!("{e}"),
        };
        let set_cookies: Vec<String> = r
            .all("set-cookie")
            .into_iter()
            .map(str::to_string)
            .collect();
        Answer {
            status: r.status(),
            location: r.header("location").map(str::to_string),
            retry_after: r.header("retry-after").map(str::to_string),
            disposition: r.header("content-disposition").map(str::to_string),
            set_cookies,
            body: r.into_string().unwrap(),
        }
    }

    fn get(&mut self, path: &str) -> Answer {
        let r = self.agent.get(&format!("{}{path}", self.base)).call();
        self.answer(r)
    }

    fn post(&mut self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let r = self
            .agent
            .post(&format!("{}{path}", self.base))
            .send_form(fields);
        self.answer(r)
    }

    /// A multipart form: text fields, then the file field `file`.
    fn post_multipart(&mut self, path: &str, fields: &[(&str, &str)], file: &[u8]) -> Answer {
        let boundary = "----kakehikiTestBoundary7d1f";
        let mut body = Vec::new();
        for (k, v) in fields {
            body.extend_from_slice(
                format!(
                    "--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n"
                )
                .as_bytes(),
            );
        }
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"bot.py\"\r\n\
                 Content-Type: application/octet-stream\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(file);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        let r = self
            .agent
            .post(&format!("{}{path}", self.base))
            .set(
                "Content-Type",
                &format!("multipart/form-data; boundary={boundary}"),
            )
            .send_bytes(&body);
        self.answer(r)
    }

    /// Sign up with the invitation's code: the session starts.
    fn sign_up(&mut self, code: &str, password: &str) -> Answer {
        let form = self.get(&format!("/signup?code={code}"));
        assert_eq!(form.status, 200, "{}", form.body);
        let csrf = csrf_of(&form.body);
        self.post(
            "/signup",
            &[
                ("csrf", &csrf),
                ("code", code),
                ("password", password),
                ("password2", password),
            ],
        )
    }

    fn log_in(&mut self, name: &str, password: &str) -> Answer {
        let form = self.get("/login");
        assert_eq!(form.status, 200, "{}", form.body);
        let csrf = csrf_of(&form.body);
        self.post(
            "/login",
            &[("csrf", &csrf), ("name", name), ("password", password)],
        )
    }
}

/// The value of the first hidden `csrf` field of a page.
fn csrf_of(page: &str) -> String {
    let at = page
        .find("name=\"csrf\" value=\"")
        .unwrap_or_else(|| panic!("no CSRF field in {page}"));
    let rest = &page[at + "name=\"csrf\" value=\"".len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// The text of `<td ... id="status">` of a version page.
fn status_of(page: &str) -> String {
    let at = page
        .find("id=\"status\">")
        .unwrap_or_else(|| panic!("no status in {page}"));
    let rest = &page[at + "id=\"status\">".len()..];
    rest[..rest.find('<').unwrap()].to_string()
}

const PASSWORD: &str = "correct horse battery";

#[test]
fn sign_up_log_in_upload_through_the_form_and_only_the_owner_sees_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url, db) = serve(dir.path(), MINIMAL, &[]);
    sign_up_log_in_upload(dir.path(), &url, &db);
}

/// The same pages on PostgreSQL (every handler reaches the store off the async runtime).
#[test]
fn the_pages_work_on_postgresql() {
    let Some(base) = kakehiki_store::test_database_url() else {
        eprintln!("skipped: KAKEHIKI_TEST_DATABASE_URL is not set");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = Db::Pg(kakehiki_store::fresh_test_schema(&base, "pages"));
    let (_server, url) = serve_on(dir.path(), MINIMAL, &[], &db);
    sign_up_log_in_upload(dir.path(), &url, &db);
}

fn sign_up_log_in_upload(dir: &Path, url: &str, db: &Db) {
    let url = url.to_string();
    let (alice_code, old_token) = invite(db, "alice", &[]);
    let (bob_code, _) = invite(db, "bob", &[]);
    let (olga_code, _) = invite(db, "olga", &["--organiser"]);

    // Sign-up: the two passwords must agree and be long enough; neither spends the code.
    let mut alice = Visitor::new(&url);
    let form = alice.get(&format!("/signup?code={alice_code}"));
    assert!(
        form.body.contains(
            "You are signing up as <b id=\"account\">alice</b>: the name you log in with."
        ),
        "{}",
        form.body
    );
    let pre = form
        .set_cookies
        .iter()
        .find(|c| c.starts_with("kk_csrf="))
        .expect("the sign-up form sets the pre-session CSRF cookie");
    assert!(
        pre.contains("HttpOnly") && pre.contains("SameSite=Strict") && !pre.contains("Secure"),
        "{pre}"
    );
    let csrf = csrf_of(&form.body);
    let differ = alice.post(
        "/signup",
        &[
            ("csrf", &csrf),
            ("code", &alice_code),
            ("password", PASSWORD),
            ("password2", "something else entirely"),
        ],
    );
    assert_eq!(differ.status, 400, "{}", differ.body);
    assert!(differ.body.contains("the two passwords differ"));
    let short = alice.post(
        "/signup",
        &[
            ("csrf", &csrf),
            ("code", &alice_code),
            ("password", "nine byte"),
            ("password2", "nine byte"),
        ],
    );
    assert_eq!(short.status, 400, "{}", short.body);
    assert!(short.body.contains("10 to 1024 bytes"), "{}", short.body);
    let done = alice.sign_up(&alice_code, PASSWORD);
    assert_eq!(done.status, 303, "{}", done.body);
    assert_eq!(done.location.as_deref(), Some("/me"));
    let session = done
        .set_cookies
        .iter()
        .find(|c| c.starts_with("kk_session="))
        .expect("signing up logs in");
    assert!(
        session.contains("; HttpOnly")
            && session.contains("; SameSite=Lax")
            && session.contains("; Path=/")
            && !session.contains("Secure"),
        "{session}"
    );
    // The store holds the session cookie's hash, never the cookie.
    let cookie = &alice
        .cookie("kk_session")
        .expect("signed up, alice holds a session");
    assert_eq!(cookie.len(), 64);
    match db {
        Db::Sqlite(path) => {
            let mut bytes = std::fs::read(path).unwrap();
            if let Ok(wal) = std::fs::read(path.with_extension("sqlite-wal")) {
                bytes.extend(wal);
            }
            assert!(!String::from_utf8_lossy(&bytes).contains(cookie.as_str()));
        }
        Db::Pg(url) => {
            let mut c = postgres::Client::connect(url, postgres::NoTls).unwrap();
            let rows = c
                .query("SELECT id_sha256, csrf_token FROM kk_ladder_sessions", &[])
                .unwrap();
            assert!(!rows.is_empty());
            for r in rows {
                let id: String = r.get(0);
                assert_ne!(&id, cookie);
                assert_eq!(id.len(), 64);
            }
        }
    }
    // The code is spent: its link is refused at once, and so is a sign-up posted with it.
    let mut thief = Visitor::new(&url);
    let again = thief.get(&format!("/signup?code={alice_code}"));
    assert_eq!(again.status, 404, "{}", again.body);
    assert!(again.body.contains("already used"), "{}", again.body);
    let login_form = thief.get("/login");
    let again = thief.post(
        "/signup",
        &[
            ("csrf", &csrf_of(&login_form.body)),
            ("code", &alice_code),
            ("password", "another password here"),
            ("password2", "another password here"),
        ],
    );
    assert_eq!(again.status, 404, "{}", again.body);
    assert!(again.body.contains("already used"), "{}", again.body);
    assert_eq!(thief.cookie("kk_session"), None);

    // Logged in: the contestant's page; logging out ends the session for good.
    let me = alice.get("/me");
    assert_eq!(me.status, 200, "{}", me.body);
    assert!(me.body.contains("signed in as <b id=\"who\">alice</b>"));
    let old_session = alice.cookie("kk_session").unwrap();
    let out = alice.post("/logout", &[("csrf", &csrf_of(&me.body))]);
    assert_eq!(out.status, 303, "{}", out.body);
    // Logging out clears the cookie in the browser…
    assert_eq!(alice.cookie("kk_session"), None);
    // …and on the server: whoever kept the old cookie is no longer signed in.
    let mut keeper = Visitor::holding(&url, "kk_session", &old_session);
    let gone = keeper.get("/me");
    assert_eq!(gone.status, 303);
    assert_eq!(gone.location.as_deref(), Some("/login"));

    // Login: a wrong password is refused, the right one starts a session.
    let wrong = alice.log_in("alice", "not the password");
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    assert!(wrong.body.contains("wrong name or password"));
    let ok = alice.log_in("alice", PASSWORD);
    assert_eq!(ok.status, 303, "{}", ok.body);
    assert_ne!(alice.cookie("kk_session"), Some(old_session));

    // Upload through the form; without the CSRF token it is refused.
    let me = alice.get("/me");
    assert!(
        me.body
            .contains("<option value=\"python\">python</option><option value=\"cpp\">cpp</option>"),
        "{}",
        me.body
    );
    let csrf = csrf_of(&me.body);
    let bot = std::fs::read(repo().join("starters/geister/python/bot.py")).unwrap();
    let forged = alice.post_multipart("/upload", &[("language", "python")], &bot);
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert!(forged.body.contains("CSRF token is missing or wrong"));
    let forged = alice.post_multipart(
        "/upload",
        &[("csrf", "0".repeat(64).as_str()), ("language", "python")],
        &bot,
    );
    assert_eq!(forged.status, 403, "{}", forged.body);
    let up = alice.post_multipart("/upload", &[("csrf", &csrf), ("language", "python")], &bot);
    assert_eq!(up.status, 303, "{}", up.body);
    assert_eq!(up.location.as_deref(), Some("/bots/alice/versions/1"));
    // The refused uploads made no version.
    let page = alice.get("/bots/alice/versions/2");
    assert_eq!(page.status, 404);

    // The version page: building, then active with the build log and check's diagnosis.
    let started = Instant::now();
    let page = loop {
        let page = alice.get("/bots/alice/versions/1");
        assert_eq!(page.status, 200, "{}", page.body);
        if status_of(&page.body) != "building" {
            break page;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "still building"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(status_of(&page.body), "active", "{}", page.body);
    assert!(page.body.contains("passed"), "{}", page.body);
    // Its owner downloads the upload as it was sent.
    assert!(page.body.contains("id=\"upload\""), "{}", page.body);
    let source = alice.get("/bots/alice/versions/1/upload");
    assert_eq!(source.status, 200);
    assert_eq!(source.body.as_bytes(), &bot[..]);
    assert_eq!(
        source.disposition.as_deref(),
        Some("attachment; filename=\"alice-v1-bot.py\"")
    );
    // A tar.gz of a folder holding the bot, through the same form: version 2.
    let mut tar = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_gnu();
    header.set_size(bot.len() as u64);
    header.set_mode(0o644);
    tar.append_data(&mut header, "mybot/bot.py", &bot[..])
        .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar.into_inner().unwrap()).unwrap();
    let archive = gz.finish().unwrap();
    let up = alice.post_multipart(
        "/upload",
        &[("csrf", &csrf), ("language", "python")],
        &archive,
    );
    assert_eq!(up.status, 303, "{}", up.body);
    assert_eq!(up.location.as_deref(), Some("/bots/alice/versions/2"));
    let page = loop {
        let page = alice.get("/bots/alice/versions/2");
        if status_of(&page.body) != "building" {
            break page;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "still building"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(status_of(&page.body), "active", "{}", page.body);
    // (minijinja escapes `/` in attributes as `&#x2f;`.)
    let me = alice.get("/me").body.replace("&#x2f;", "/");
    assert!(
        me.contains("<a href=\"/bots/alice/versions/1\">v1</a>"),
        "{me}"
    );

    // Another contestant, and anyone logged out, get the page of a version that does not exist.
    let mut bob = Visitor::new(&url);
    assert_eq!(bob.sign_up(&bob_code, PASSWORD).status, 303);
    let theirs = bob.get("/bots/alice/versions/1");
    let missing = bob.get("/bots/nobody/versions/1");
    assert_eq!(theirs.status, 404);
    assert_eq!(theirs.body, missing.body);
    assert!(!theirs.body.contains("passed"));
    // Nor the upload: another contestant's source is refused as if it did not exist.
    let theirs = bob.get("/bots/alice/versions/1/upload");
    assert_eq!(theirs.status, 404);
    assert_eq!(theirs.body, missing.body);
    let mut stranger = Visitor::new(&url);
    assert_eq!(stranger.get("/bots/alice/versions/1").status, 404);
    assert_eq!(stranger.get("/bots/alice/versions/1/upload").status, 404);
    assert_eq!(bob.get("/organiser").status, 404);
    assert_eq!(stranger.get("/organiser").status, 404);

    // The organiser sees every version and every contestant.
    let mut olga = Visitor::new(&url);
    assert_eq!(olga.sign_up(&olga_code, PASSWORD).status, 303);
    let v = olga.get("/bots/alice/versions/1");
    assert_eq!(v.status, 200);
    assert!(v.body.contains("passed"));
    assert_eq!(
        olga.get("/bots/alice/versions/1/upload").body.as_bytes(),
        &bot[..]
    );
    let o = olga.get("/organiser");
    assert_eq!(o.status, 200, "{}", o.body);
    assert!(
        o.body
            .contains("<tr><td>alice</td><td>contestant</td><td>yes</td><td>active <form method=\"post\" action=\"/organiser/accounts/alice\">"),
        "{}",
        o.body
    );
    assert!(o
        .body
        .contains("<tr><td>olga</td><td>organiser</td><td>yes</td><td>active</td></tr>"));
    assert!(o.body.contains("0 waiting or building"), "{}", o.body);
    // The play: matchmaking runs, with its queue depth and workers.
    assert!(
        o.body.contains("id=\"play\">Matchmaking runs"),
        "{}",
        o.body
    );
    assert!(o.body.contains("queue depth "), "{}", o.body);
    assert!(o.body.contains("id=\"workers\">"), "{}", o.body);
    let out = kakehiki()
        .args(["ladder", "freeze", "--config"])
        .arg(dir.join("ladder.toml"))
        .args(db.args())
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let o = olga.get("/organiser");
    assert!(o.body.contains("id=\"play\"><b>Frozen</b>"), "{}", o.body);
    // The organiser's buttons do what the command line does, on this store too: thaw and
    // freeze again, disable and enable an account, retire a bot and bring it back.
    let csrf = csrf_of(&o.body);
    for (action, shown) in [
        ("thaw", "id=\"play\">Matchmaking runs"),
        ("freeze", "id=\"play\"><b>Frozen</b>"),
    ] {
        let r = olga.post("/organiser/ladder", &[("csrf", &csrf), ("action", action)]);
        assert_eq!(r.status, 303, "{action}: {}", r.body);
        let o = olga.get("/organiser");
        assert!(o.body.contains(shown), "{action}: {}", o.body);
    }
    for (action, shown) in [("disable", "<b>disabled</b>"), ("enable", "active")] {
        let r = olga.post(
            "/organiser/accounts/bob",
            &[("csrf", &csrf), ("action", action)],
        );
        assert_eq!(r.status, 303, "{action}: {}", r.body);
        let o = olga.get("/organiser");
        let row = format!("<tr><td>bob</td><td>contestant</td><td>yes</td><td>{shown}");
        assert!(o.body.contains(&row), "{action}: {}", o.body);
    }
    for (action, retired) in [("retire", true), ("restore", false)] {
        let r = olga.post(
            "/organiser/bots/alice",
            &[("csrf", &csrf), ("action", action)],
        );
        assert_eq!(r.status, 303, "{action}: {}", r.body);
        let o = olga.get("/organiser");
        let row = "<tr><td>alice</td><td>alice</td><td><b>retired</b>";
        assert_eq!(o.body.contains(row), retired, "{action}: {}", o.body);
    }
    // The public leaderboard and the owner's version page say so too (once the pages' memory
    // is read again: within a second).
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let board = Visitor::new(&url).get("/leaderboard");
        if board
            .body
            .contains("<b>Frozen</b>: the organiser has stopped matchmaking")
        {
            break;
        }
        assert!(Instant::now() < deadline, "{}", board.body);
        std::thread::sleep(Duration::from_millis(100));
    }
    let page = alice.get("/bots/alice/versions/1");
    assert!(
        page.body.contains(
            "<b>The ladder is frozen</b>: no new match is queued until the organiser reopens it"
        ),
        "{}",
        page.body
    );
    // The API says it to `kakehiki submit`, which tells its user.
    let v = ureq::get(&format!("{url}/api/ladders/g/bots/alice/versions/1"))
        .set("Authorization", &format!("Bearer {old_token}"))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    let v: Value = serde_json::from_str(&v).unwrap();
    assert_eq!(v["frozen"], true, "{v}");
    let bot = dir.join("frozen-bot.py");
    std::fs::copy(repo().join("starters/geister/python/bot.py"), &bot).unwrap();
    let out = kakehiki()
        .args([
            "submit", "--server", &url, "--token", &old_token, "--ladder", "g",
        ])
        .args(["--language", "python"])
        .arg(&bot)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "the ladder is frozen: no new match is queued until its organiser reopens it"
        ),
        "{said}"
    );
    assert!(o
        .body
        .replace("&#x2f;", "/")
        .contains("<a href=\"/bots/alice/versions/1\">v1</a>"));

    // Alice changes her password on her page; her other session (another browser) ends.
    let mut elsewhere = Visitor::new(&url);
    assert_eq!(elsewhere.log_in("alice", PASSWORD).status, 303);
    let me = alice.get("/me");
    assert!(me.body.contains("id=\"password-form\""), "{}", me.body);
    let csrf = csrf_of(&me.body);
    let change = |v: &mut Visitor, csrf: &str, current: &str, new: &str, again: &str| {
        v.post(
            "/password",
            &[
                ("csrf", csrf),
                ("current", current),
                ("password", new),
                ("password2", again),
            ],
        )
    };
    const NEW: &str = "a new passphrase, long enough";
    let forged = change(&mut alice, "", PASSWORD, NEW, NEW);
    assert_eq!(forged.status, 403, "{}", forged.body);
    let wrong = change(&mut alice, &csrf, "not it at all", NEW, NEW);
    assert_eq!(wrong.status, 401, "{}", wrong.body);
    assert!(wrong.body.contains("the current password is wrong"));
    let differ = change(&mut alice, &csrf, PASSWORD, NEW, "something else entirely");
    assert_eq!(differ.status, 400, "{}", differ.body);
    let ok = change(&mut alice, &csrf, PASSWORD, NEW, NEW);
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert!(ok.body.contains("Your password is changed"), "{}", ok.body);
    assert_eq!(alice.get("/me").status, 200, "this session goes on");
    assert_eq!(elsewhere.get("/me").location.as_deref(), Some("/login"));
    let mut fresh = Visitor::new(&url);
    assert_eq!(fresh.log_in("alice", PASSWORD).status, 401);
    assert_eq!(fresh.log_in("alice", NEW).status, 303);

    // Invited again by the organiser (a forgotten password): the old password, the old token and
    // every session stop working; the new link signs her up again.
    let (again_code, again_token) = invite(db, "alice", &["--again"]);
    assert_ne!(again_token, old_token);
    let api = |token: &str| match ureq::get(&format!("{url}/api/ladders/g/bots/alice/versions/1"))
        .set("Authorization", &format!("Bearer {token}"))
        .call()
    {
        Ok(r) => r.status(),
        Err(ureq::Error::Status(code, _)) => code,
        Err(e) => panic!("{e}"),
    };
    assert_eq!(api(&old_token), 401);
    assert_eq!(api(&again_token), 200);
    assert_eq!(alice.get("/me").location.as_deref(), Some("/login"));
    assert_eq!(fresh.get("/me").location.as_deref(), Some("/login"));
    let mut after = Visitor::new(&url);
    assert_eq!(after.log_in("alice", NEW).status, 401);
    assert_eq!(after.sign_up(&again_code, PASSWORD).status, 303);
    assert_eq!(after.get("/me").status, 200);

    // A new API token from her page (a leaked one): shown once, the old one dead at once.
    let me = after.get("/me");
    let forged = after.post("/me/token", &[("csrf", "")]);
    assert_eq!(forged.status, 403, "{}", forged.body);
    assert_eq!(api(&again_token), 200, "a refused form changes nothing");
    let made = after.post("/me/token", &[("csrf", &csrf_of(&me.body))]);
    assert_eq!(made.status, 200, "{}", made.body);
    let new_token = made
        .body
        .split("<pre id=\"token\">")
        .nth(1)
        .and_then(|t| t.split("</pre>").next())
        .expect("the new token is shown")
        .to_string();
    assert!(
        new_token.starts_with("kkl_") && new_token != again_token,
        "{new_token}"
    );
    assert_eq!(api(&again_token), 401);
    assert_eq!(api(&new_token), 200);
    assert!(
        !after.get("/me").body.contains(&new_token),
        "shown once only"
    );
    let out = kakehiki()
        .args(["ladder", "invite", "nobody", "--again"])
        .args(db.args())
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("no account \"nobody\""));
}

#[test]
fn forms_without_their_csrf_token_are_refused_and_login_is_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, url, db) = serve(dir.path(), MINIMAL, &["--cookie-secure"]);
    let (code, _) = invite(&db, "alice", &[]);

    // With --cookie-secure every cookie is Secure, and named `__Host-` (kept to this host).
    let mut v = Visitor::new(&url);
    let form = v.get("/login");
    assert!(
        form.set_cookies
            .iter()
            .any(|c| c.starts_with("__Host-kk_csrf=")
                && c.contains("; Secure")
                && c.contains("; Path=/")),
        "{:?}",
        form.set_cookies
    );
    let done = v.sign_up(&code, PASSWORD);
    assert_eq!(done.status, 303, "{}", done.body);
    assert!(
        done.set_cookies
            .iter()
            .any(|c| c.starts_with("__Host-kk_session=") && c.contains("; Secure")),
        "{:?}",
        done.set_cookies
    );

    // The login form: no token, a wrong token, and a token without its cookie are refused.
    let csrf = csrf_of(&v.get("/login").body);
    for fields in [
        vec![("name", "alice"), ("password", PASSWORD)],
        vec![
            ("csrf", "f".repeat(64).as_str()),
            ("name", "alice"),
            ("password", PASSWORD),
        ],
    ] {
        let r = v.post("/login", &fields);
        assert_eq!(r.status, 403, "{}", r.body);
        assert!(
            r.body.contains("CSRF token is missing or wrong"),
            "{}",
            r.body
        );
    }
    let mut no_cookie = Visitor::new(&url);
    let r = no_cookie.post(
        "/login",
        &[("csrf", &csrf), ("name", "alice"), ("password", PASSWORD)],
    );
    assert_eq!(r.status, 403, "{}", r.body);
    // Logout too needs the session's token.
    let r = v.post("/logout", &[]);
    assert_eq!(r.status, 403, "{}", r.body);
    assert_eq!(v.get("/me").status, 200, "still logged in");

    // Login attempts: 10 a minute per account name, even with the right password at the end.
    let attempt = |v: &mut Visitor, name: &str, password: &str| {
        v.post(
            "/login",
            &[("csrf", &csrf), ("name", name), ("password", password)],
        )
    };
    for _ in 0..10 {
        let r = attempt(&mut v, "alice", "wrong password");
        assert_eq!(r.status, 401, "{}", r.body);
    }
    let r = attempt(&mut v, "alice", PASSWORD);
    assert_eq!(r.status, 429, "{}", r.body);
    let secs: u64 = r
        .retry_after
        .as_deref()
        .expect("Retry-After")
        .parse()
        .unwrap();
    assert!((1..=60).contains(&secs), "{secs}");
    assert!(
        r.body
            .contains("too many login attempts for this account: try again in"),
        "{}",
        r.body
    );
    // 60 a minute per client address (the sign-up above counted too): other names from this
    // address are refused from the 61st on.
    let mut statuses = Vec::new();
    for i in 0..50 {
        statuses.push(attempt(&mut v, &format!("guess{i}"), "wrong password").status);
    }
    assert_eq!(statuses[..48], [401; 48]);
    assert_eq!(statuses[48..], [429, 429]);
    let r = attempt(&mut v, "bob", "wrong password");
    assert_eq!(r.status, 429);
    assert!(
        r.body.contains("too many login attempts from your address"),
        "{}",
        r.body
    );
}

#[test]
fn uploads_are_rate_limited_per_account_through_the_api_and_the_form() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{MINIMAL}[limits]\nuploads_per_hour = 2\n");
    let (_server, url, db) = serve(dir.path(), &config, &[]);
    let (code, token) = invite(&db, "alice", &[]);
    // Through the API: 2 accepted (refused by the build: no such language), then 429.
    let submit = |n: usize| {
        let r = ureq::post(&format!("{url}/api/ladders/g/submissions?language=cobol"))
            .set("Authorization", &format!("Bearer {token}"))
            .send_bytes(format!("print({n})\n").as_bytes());
        match r {
            Ok(r) => (r.status(), None),
            Err(ureq::Error::Status(s, r)) => (s, r.header("retry-after").map(str::to_string)),
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(submit(1).0, 202);
    assert_eq!(submit(2).0, 202);
    let (status, retry) = submit(3);
    assert_eq!(status, 429);
    let secs: u64 = retry.expect("Retry-After").parse().unwrap();
    assert!((3000..=3600).contains(&secs), "{secs}");
    // The form shares the account's count.
    let mut v = Visitor::new(&url);
    assert_eq!(v.sign_up(&code, PASSWORD).status, 303);
    let csrf = csrf_of(&v.get("/me").body);
    let r = v.post_multipart(
        "/upload",
        &[("csrf", &csrf), ("language", "python")],
        b"print(1)\n",
    );
    assert_eq!(r.status, 429, "{}", r.body);
    assert!(r.body.contains("at most 2 an hour"), "{}", r.body);
    assert!(r.retry_after.is_some());
}

// ------------------------------------------------------------------------------- in a browser

/// The JSON answer of a `GET` of `url`.
fn get_json(url: &str) -> Value {
    serde_json::from_str(&ureq::get(url).call().unwrap().into_string().unwrap()).unwrap()
}

#[test]
fn a_contestant_signs_up_logs_in_and_uploads_in_a_real_browser() {
    let Some(webdriver) = WebDriver::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_server, url, db) = serve(dir.path(), MINIMAL, &[]);
    let (code, alice_token) = invite(&db, "alice", &[]);
    let (olga_code, _) = invite(&db, "olga", &["--organiser"]);
    let bot = repo()
        .join("starters/geister/python/bot.py")
        .canonicalize()
        .unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async move {
        use fantoccini::Locator;
        let c = webdriver.session().await;

        // Sign up with the invitation's link: logged in on the contestant's page.
        c.goto(&format!("{url}/signup?code={code}")).await.unwrap();
        type_into(&c, "password", PASSWORD).await;
        type_into(&c, "password2", PASSWORD).await;
        click(&c, "submit").await;
        c.wait().for_element(Locator::Id("upload")).await.unwrap();
        assert_eq!(c.current_url().await.unwrap().path().to_string(), "/me");
        let who = c
            .find(Locator::Id("who"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert_eq!(who, "alice");
        // The session and CSRF cookies are HttpOnly: the page's scripts cannot read them.
        let visible = c
            .execute("return document.cookie", Vec::new())
            .await
            .unwrap();
        assert_eq!(visible, Value::String(String::new()));

        // Log out and in again.
        click(&c, "logout").await;
        c.wait()
            .for_element(Locator::LinkText("log in"))
            .await
            .unwrap();
        c.goto(&format!("{url}/login")).await.unwrap();
        type_into(&c, "name", "alice").await;
        type_into(&c, "password", PASSWORD).await;
        click(&c, "submit").await;
        c.wait().for_element(Locator::Id("upload")).await.unwrap();

        // Upload the Python starter through the form.
        c.find(Locator::Id("language"))
            .await
            .unwrap()
            .select_by_value("python")
            .await
            .unwrap();
        type_into(&c, "file", &bot.display().to_string()).await;
        click(&c, "submit").await;
        c.wait().for_element(Locator::Id("status")).await.unwrap();
        assert_eq!(
            c.current_url().await.unwrap().path().to_string(),
            "/bots/alice/versions/1"
        );
        // The page reloads itself until the build and check are done.
        let status = text_when(&c, "status", |s| !s.is_empty() && s != "building", 300, 500)
            .await
            .expect("still building");
        assert_eq!(status, "active");
        let log = c
            .find(Locator::Id("log"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(log.contains("passed"), "{log}");
        let png = c.screenshot().await.unwrap();
        assert!(png.starts_with(b"\x89PNG"), "a PNG screenshot");
        let notes = Path::new("/work/notes");
        if notes.is_dir() {
            std::fs::write(notes.join("ladder-version-page.png"), &png).unwrap();
        }

        // The leaderboard, once alice has played (the server's worker plays her matches).
        let started = Instant::now();
        loop {
            let body = ureq::get(&format!("{url}/api/ladders/g/leaderboard"))
                .call()
                .unwrap()
                .into_string()
                .unwrap();
            let board: Value = serde_json::from_str(&body).unwrap();
            let games = board["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["bot"] == "alice")
                .map_or(0, |r| r["games"].as_u64().unwrap());
            if games > 0 {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "alice has not played: {board}"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        c.goto(&format!("{url}/leaderboard")).await.unwrap();
        let table = c.find(Locator::Id("leaderboard")).await.unwrap();
        let text = table.text().await.unwrap();
        assert!(
            text.contains("alice") && text.contains("builtin:strong"),
            "{text}"
        );
        let shot = |name: &'static str, png: Vec<u8>| {
            if notes.is_dir() {
                std::fs::write(notes.join(name), png).unwrap();
            }
        };
        shot("ladder-leaderboard.png", c.screenshot().await.unwrap());
        // Her bot's page, then her newest match with the game's viewer.
        c.find(Locator::LinkText("alice"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        let matches = c
            .wait()
            .for_element(Locator::Id("bot-matches"))
            .await
            .unwrap();
        assert!(matches.text().await.unwrap().contains("builtin:"));
        shot("ladder-bot-page.png", c.screenshot().await.unwrap());
        // "Play against this bot": alice plays her own bot from the seat page, by clicks.
        click(&c, "play-bot").await;
        let waiting = text_when(&c, "hs-waiting", |t| t.starts_with("Your turn"), 30, 100).await;
        assert!(waiting.is_ok(), "{waiting:?}");
        assert!(c
            .current_url()
            .await
            .unwrap()
            .path()
            .starts_with("/play/1/seat/0"));
        for g in ["hs-g-A", "hs-g-B", "hs-g-C", "hs-g-D"] {
            click(&c, g).await;
        }
        click(&c, "hs-set").await;
        c.wait().for_element(Locator::Id("hs-board")).await.unwrap();
        // Ghost A (1,4) one square north.
        click(&c, "hs-sq-1-4").await;
        click(&c, "hs-sq-1-3").await;
        let log = text_when(&c, "hs-log", |t| t.contains("you → MOV:A,N"), 30, 100).await;
        assert!(log.is_ok(), "{log:?}");
        shot("ladder-play.png", c.screenshot().await.unwrap());
        c.goto(&format!("{url}/bots/alice")).await.unwrap();
        c.wait()
            .for_element(Locator::Id("bot-matches"))
            .await
            .unwrap();
        c.find(Locator::Css("#bot-matches a[href^='/matches/']"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        c.wait()
            .for_element(Locator::Id("match-result"))
            .await
            .unwrap();
        // The viewer ran (the page's Content-Security-Policy lets the server's own scripts run).
        c.wait()
            .for_element(Locator::Css("#kv[data-ready='true']"))
            .await
            .unwrap();
        let html = c.source().await.unwrap();
        assert!(
            !html.contains("data-js-errors=\""),
            "script errors on the match page"
        );
        assert!(
            !html.contains("id=\"view-error\""),
            "the viewer could not show the match"
        );
        shot("ladder-match-page.png", c.screenshot().await.unwrap());

        // A build failure, as its contestant sees it: a Python file that does not compile.
        let broken = std::env::temp_dir().join(format!("kk-broken-{}.py", std::process::id()));
        std::fs::write(&broken, "def broken(:\n    pass\n").unwrap();
        c.goto(&format!("{url}/me")).await.unwrap();
        c.find(Locator::Id("language"))
            .await
            .unwrap()
            .select_by_value("python")
            .await
            .unwrap();
        type_into(&c, "file", &broken.display().to_string()).await;
        click(&c, "submit").await;
        let status = text_when(&c, "status", |s| !s.is_empty() && s != "building", 120, 500)
            .await
            .expect("still building");
        let _ = std::fs::remove_file(&broken);
        assert_eq!(status, "build_failed");
        let log = c
            .find(Locator::Id("log"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(log.contains("SyntaxError"), "{log}");
        shot("ladder-build-failed.png", c.screenshot().await.unwrap());

        // The organiser's work in the browser: sign up, invite an account, freeze and thaw,
        // disable and enable an account, retire a bot and bring it back.
        click(&c, "logout").await;
        c.wait()
            .for_element(Locator::LinkText("log in"))
            .await
            .unwrap();
        c.goto(&format!("{url}/signup?code={olga_code}"))
            .await
            .unwrap();
        let account = c.find(Locator::Id("account")).await.unwrap();
        assert_eq!(account.text().await.unwrap(), "olga");
        for id in ["password", "password2"] {
            type_into(&c, id, PASSWORD).await;
        }
        click(&c, "submit").await;
        c.wait().for_element(Locator::Id("upload")).await.unwrap();
        c.goto(&format!("{url}/organiser")).await.unwrap();
        type_into(&c, "invite-name", "erin").await;
        click(&c, "invite-submit").await;
        let token = shown(&c, "token").await;
        let link = c
            .find(Locator::Id("link"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(link.starts_with(&format!("{url}/signup?code=")), "{link}");
        // Erin's token works (404: she has no version yet; 401 for an unknown token).
        let status_of = |bot: &str, token: &str| match ureq::get(&format!(
            "{url}/api/ladders/g/bots/{bot}/versions/1"
        ))
        .set("Authorization", &format!("Bearer {token}"))
        .call()
        {
            Ok(r) => r.status(),
            Err(ureq::Error::Status(code, _)) => code,
            Err(e) => panic!("{e}"),
        };
        let status = |token: &str| status_of("erin", token);
        assert_eq!(status(&token), 404);
        assert_eq!(status("kkl_not-a-token"), 401);
        // Invited again (a lost password or a leaked token): a new link and token; the old
        // token stops working, the new one works.
        c.goto(&format!("{url}/organiser")).await.unwrap();
        type_into(&c, "invite-name", "erin").await;
        click(&c, "invite-again").await;
        click(&c, "invite-submit").await;
        let again = shown(&c, "token").await;
        assert_ne!(again, token);
        assert_eq!(status(&token), 401);
        assert_eq!(status(&again), 404);
        c.goto(&format!("{url}/organiser")).await.unwrap();
        let users = c.find(Locator::Id("users")).await.unwrap();
        assert!(users.text().await.unwrap().contains("erin"));
        click(&c, "freeze-submit").await;
        // The page after the button's post (the old one's element goes stale meanwhile).
        let play = text_when(&c, "play", |t| t.starts_with("Frozen"), 10, 100).await;
        assert!(play.is_ok(), "{play:?}");
        shot("ladder-organiser-page.png", c.screenshot().await.unwrap());
        click(&c, "freeze-submit").await;
        // The page after the button's post (the old one's element goes stale meanwhile).
        let play = text_when(&c, "play", |t| t.starts_with("Matchmaking runs"), 10, 100).await;
        assert!(play.is_ok(), "{play:?}");

        // Disable alice's account with her row's button: her token is refused until the organiser
        // enables it again.
        let button = |form: &'static str| {
            let c = c.clone();
            async move {
                c.find(Locator::Css(&format!("form[action='{form}'] button")))
                    .await
                    .unwrap()
                    .click()
                    .await
                    .unwrap();
            }
        };
        let alice = |token: &str| status_of("alice", token);
        assert_eq!(alice(&alice_token), 200);
        // The button says the other action each time: disable, then enable.
        for (state, code) in [("disabled", 403), ("active", 200)] {
            button("/organiser/accounts/alice").await;
            let row = format!("alice contestant yes {state}");
            let users = text_when(&c, "users", |t| t.contains(&row), 10, 100).await;
            assert!(users.is_ok(), "{users:?}");
            assert_eq!(alice(&alice_token), code, "{state}");
        }
        // Retire alice's bot: it leaves the leaderboard until it is brought back.
        let on_board = || {
            let board: Value = get_json(&format!("{url}/api/ladders/g/leaderboard"));
            board["rows"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["bot"] == "alice")
        };
        // The matchmaker reads the entrants every second: the board follows within a few.
        let board_becomes = |want: bool| {
            let started = Instant::now();
            while on_board() != want {
                assert!(
                    started.elapsed().as_secs() < 10,
                    "alice on the leaderboard: not {want} after 10 s"
                );
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        };
        board_becomes(true);
        button("/organiser/bots/alice").await;
        let bots = text_when(&c, "bots", |t| t.contains("retired"), 10, 100).await;
        assert!(bots.is_ok(), "{bots:?}");
        board_becomes(false);
        button("/organiser/bots/alice").await;
        let bots = text_when(&c, "bots", |t| !t.contains("retired"), 10, 100).await;
        assert!(bots.is_ok(), "{bots:?}");
        board_becomes(true);

        // The final from the browser, as `ladder final --format round-robin --games 2
        // --builtins` does: the ladder freezes, the server's worker plays the final, and its
        // page (which reloads itself while it is under way) shows the standings.
        c.goto(&format!("{url}/organiser")).await.unwrap();
        click(&c, "final-builtins").await;
        click(&c, "final-submit").await;
        let state = text_when(&c, "final-state", |t| t.contains("complete"), 120, 500).await;
        assert!(state.is_ok(), "{state:?}");
        assert!(c.current_url().await.unwrap().as_str().ends_with("/final"));
        let standings = c
            .find(Locator::Id("final"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        for entrant in ["builtin:random", "builtin:strong"] {
            assert!(standings.contains(entrant), "{standings}");
        }
        assert!(standings.contains("alice@v"), "{standings}");
        let board: Value = get_json(&format!("{url}/api/ladders/g/leaderboard"));
        assert_eq!(board["frozen"], true, "{board}");
        // The same settings again resume the same final; other settings are refused.
        c.goto(&format!("{url}/organiser")).await.unwrap();
        click(&c, "final-builtins").await;
        let games = c.find(Locator::Id("final-games")).await.unwrap();
        games.clear().await.unwrap();
        games.send_keys("4").await.unwrap();
        click(&c, "final-submit").await;
        let refusal = text_when(&c, "message", |t| !t.is_empty(), 10, 100).await;
        assert!(
            refusal.as_ref().is_ok_and(|t| t.contains("g-final")),
            "{refusal:?}"
        );
        shot("ladder-final.png", {
            c.goto(&format!("{url}/final")).await.unwrap();
            c.screenshot().await.unwrap()
        });

        // Every page reads at a laptop's 1,366×768 and on a phone's 390×844: nothing is wider
        // than the window (a wide table scrolls inside its own box).
        let played: Value = get_json(&format!("{url}/api/ladders/g/bots/alice/matches"));
        let mut pages = vec![
            ("home", "/".to_string()),
            ("leaderboard", "/leaderboard".into()),
            ("bot", "/bots/alice".into()),
            ("version", "/bots/alice/versions/1".into()),
            ("me", "/me".into()),
            ("organiser", "/organiser".into()),
            ("final", "/final".into()),
        ];
        if let Some(index) = played["matches"][0]["index"].as_u64() {
            pages.push(("match", format!("/matches/{index}")));
        }
        for (width, height, device) in [(1366, 768, "laptop"), (390, 844, "phone")] {
            c.set_window_size(width, height).await.unwrap();
            for (page, path) in &pages {
                c.goto(&format!("{url}{path}")).await.unwrap();
                let wide = c
                    .execute(
                        "return [document.documentElement.scrollWidth, window.innerWidth]",
                        vec![],
                    )
                    .await
                    .unwrap();
                let (content, window) = (wide[0].as_u64().unwrap(), wide[1].as_u64().unwrap());
                assert!(
                    content <= window,
                    "{path} at {width}×{height}: {content} px wide in a window of {window}"
                );
                let name: &'static str =
                    Box::leak(format!("ladder-{device}-{page}.png").into_boxed_str());
                shot(name, c.screenshot().await.unwrap());
            }
        }
        c.close().await.unwrap();
    });
}

/// The colour each ghost on the Geister board is drawn in (`red`, `blue`, `unknown`).
async fn ghost_colours(c: &fantoccini::Client) -> Value {
    c.execute(
        "return [...document.querySelectorAll('g.ghost')].map(g => g.dataset.colour)",
        Vec::new(),
    )
    .await
    .unwrap()
}

/// `kakehiki play --serve` in a real browser: the page of a Geister match being played is
/// marked live, shows the board so far with no colour it has not been told, follows the match
/// (reloaded with more plies as they are played), and turns into the replay's page, every
/// colour shown, when the match is over. The event stream, read beside it, ends with the whole
/// replay.
#[test]
fn a_match_is_followed_live_in_a_real_browser() {
    let Some(webdriver) = WebDriver::start() else {
        return;
    };
    let client = repo()
        .join("examples/bots/python/geister_client.py")
        .canonicalize()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("m.jsonl");
    let mut cmd = crate::support::kakehiki();
    cmd.args(["play", "geister", "--seed", "4", "--serve", "--replay"])
        .arg(&replay)
        .args([
            "--seat",
            &format!("cmd:python3 {} --stdio --delay 250", client.display()),
            "--seat",
            "builtin:random",
        ]);
    let (_play, url) = start_and_read(cmd, Says::Stderr, |line| {
        line.strip_prefix("watch the match at ").map(str::to_string)
    });
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async move {
        use fantoccini::Locator;
        let c = webdriver.session().await;
        c.goto(&url).await.unwrap();
        c.wait().for_element(Locator::Id("live-badge")).await.unwrap();
        let steps = |c: fantoccini::Client| async move {
            let live = c.find(Locator::Id("kv-live")).await.ok()?;
            live.attr("data-steps").await.ok()??.parse::<usize>().ok()
        };
        let first = steps(c.clone()).await.expect("a live page");
        // Only colours told: none of seat 0's ghosts is red or blue on the live board.
        let colours = ghost_colours(&c).await;
        assert!(
            colours
                .as_array()
                .unwrap()
                .iter()
                .all(|v| v == "unknown"),
            "{colours}"
        );
        let notes = Path::new("/work/notes");
        if notes.is_dir() {
            std::fs::write(notes.join("live-geister.png"), c.screenshot().await.unwrap()).unwrap();
        }
        // It follows: a later load of itself has more steps.
        let started = Instant::now();
        let mut later = first;
        while later <= first && started.elapsed() < Duration::from_secs(60) {
            tokio::time::sleep(Duration::from_millis(300)).await;
            later = steps(c.clone()).await.unwrap_or(later);
            if c.find(Locator::Id("live-badge")).await.is_err() {
                break;
            }
        }
        assert!(
            later > first || c.find(Locator::Id("live-badge")).await.is_err(),
            "the page did not follow the match"
        );
        // Once over: the replay's page, every colour known.
        let started = Instant::now();
        while c.find(Locator::Id("live-badge")).await.is_ok() {
            assert!(
                started.elapsed() < Duration::from_secs(240),
                "the page never became the replay's"
            );
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        c.wait().for_element(Locator::Id("kv")).await.unwrap();
        let colours = ghost_colours(&c).await;
        assert!(
            !colours.as_array().unwrap().iter().any(|v| v == "unknown"),
            "{colours}"
        );
        // A reader who followed the match is at its end.
        let at = c
            .execute(
                "const r = document.querySelector('#kv input[type=range]'); return [r.value, r.max]",
                Vec::new(),
            )
            .await
            .unwrap();
        assert_eq!(at[0], at[1], "the replay opens where the match ended: {at}");
        if notes.is_dir() {
            std::fs::write(notes.join("live-geister-over.png"), c.screenshot().await.unwrap())
                .unwrap();
        }
        let errors = c
            .execute("return window.__kvErrors || []", Vec::new())
            .await
            .unwrap();
        assert_eq!(errors, serde_json::json!([]), "the page's scripts failed");
        // The stream of the match, once over, is its replay.
        let events = ureq::get(&format!("{url}events"))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        let mut by_id = std::collections::BTreeMap::new();
        for event in events.split("\n\n") {
            let id = event.lines().find_map(|l| l.strip_prefix("id: ")?.parse::<usize>().ok());
            let data = event.lines().find_map(|l| l.strip_prefix("data: "));
            if let (Some(i), Some(d)) = (id, data) {
                by_id.insert(i, d.to_string());
            }
        }
        let stored = std::fs::read_to_string(&replay).unwrap();
        assert_eq!(
            by_id.into_values().collect::<Vec<_>>(),
            stored.lines().map(str::to_string).collect::<Vec<_>>()
        );
        c.close().await.unwrap();
    });
}
