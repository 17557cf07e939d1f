//! `kakehiki ladder build`: an upload taken in as the ladder would, unpacked, built in the
//! sandbox with the language's recipe and checked; exit 0 when the bot would be active, 4 when
//! it was refused or its build or check failed.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

const MINIMAL: &str =
    "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\nlanguages = [\"python\", \"cpp\"]\n";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `kakehiki ladder build --json` of `upload` in `language` on the minimal ladder: its exit
/// code and report.
fn ladder_build(dir: &Path, language: &str, upload: &Path) -> (Option<i32>, Value) {
    let config = dir.join("ladder.toml");
    std::fs::write(&config, MINIMAL).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_kakehiki"))
        .args([
            "ladder",
            "build",
            "--json",
            "--language",
            language,
            "--config",
        ])
        .arg(&config)
        .arg(upload)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("{e}: {stdout}{}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), v)
}

#[test]
fn the_python_starter_builds_passes_check_and_is_active() {
    let dir = tempfile::tempdir().unwrap();
    let (code, v) = ladder_build(
        dir.path(),
        "python",
        &repo().join("starters/geister/python/bot.py"),
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["status"], "active", "{v}");
    let log = v["log"].as_str().unwrap();
    assert!(log.contains("built"), "{log}");
    assert!(log.contains("passed"), "{log}");
}

#[test]
fn the_cpp_starter_builds_passes_check_and_is_active() {
    if !have("g++") {
        assert!(
            std::env::var_os("KAKEHIKI_CI").is_none(),
            "g++ missing in CI"
        );
        eprintln!("skipped: no g++");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, v) = ladder_build(
        dir.path(),
        "cpp",
        &repo().join("starters/geister/cpp/bot.cpp"),
    );
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["status"], "active", "{v}");
}

#[test]
fn a_compile_error_is_build_failed_with_the_compilers_message() {
    if !have("g++") {
        assert!(
            std::env::var_os("KAKEHIKI_CI").is_none(),
            "g++ missing in CI"
        );
        eprintln!("skipped: no g++");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bot.cpp");
    std::fs::write(&src, "int main() { return not_declared_anywhere; }\n").unwrap();
    let (code, v) = ladder_build(dir.path(), "cpp", &src);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "build_failed", "{v}");
    let log = v["log"].as_str().unwrap();
    assert!(log.contains("not_declared_anywhere"), "{log}");
    assert!(log.contains("exit code 1"), "{log}");
}

#[test]
fn a_bot_that_crashes_is_check_failed_with_the_diagnosis_and_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("bot.py");
    std::fs::write(
        &src,
        "import sys\nprint('my bot gave up', file=sys.stderr)\nsys.exit(3)\n",
    )
    .unwrap();
    let (code, v) = ladder_build(dir.path(), "python", &src);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "check_failed", "{v}");
    let log = v["log"].as_str().unwrap();
    assert!(log.contains("built"), "{log}");
    assert!(log.contains("FAIL"), "{log}");
    assert!(log.contains("exit code 3"), "{log}");
    assert!(log.contains("my bot gave up"), "its stderr: {log}");
}

#[test]
fn a_hostile_archive_is_refused_and_an_unknown_language_too() {
    let dir = tempfile::tempdir().unwrap();
    // A tar.gz with `../evil`, written by hand (tar tools refuse to make one).
    let mut header = tar::Header::new_gnu();
    header.as_old_mut().name[..7].copy_from_slice(b"../evil");
    header.set_size(1);
    header.set_mode(0o644);
    header.set_cksum();
    let mut b = tar::Builder::new(Vec::new());
    b.append(&header, &b"x"[..]).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &b.into_inner().unwrap()).unwrap();
    let archive = dir.path().join("bot.tar.gz");
    std::fs::write(&archive, gz.finish().unwrap()).unwrap();
    let (code, v) = ladder_build(dir.path(), "python", &archive);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "refused", "{v}");
    assert!(v["log"].as_str().unwrap().contains("../evil"), "{v}");
    assert!(!dir.path().parent().unwrap().join("evil").exists());
    let (code, v) = ladder_build(dir.path(), "java", &archive);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "refused", "{v}");
    assert!(v["log"].as_str().unwrap().contains("python, cpp"), "{v}");
}

fn invite(db: &Path, name: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_kakehiki"))
        .args(["ladder", "invite", name, "--json", "--db"])
        .arg(db)
        .args(extra)
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap()
}

#[test]
fn invite_prints_a_sign_up_link_and_a_token_and_stores_only_their_hashes() {
    use kakehiki_ladder::accounts::sha256_hex;
    use kakehiki_store::{LadderRole, SqliteStore, Store};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let out = invite(&db, "alice", &["--url", "http://127.0.0.1:9000/"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["name"], "alice");
    assert_eq!(v["role"], "contestant");
    let token = v["token"].as_str().unwrap();
    let url = v["signup_url"].as_str().unwrap();
    let code = url
        .strip_prefix("http://127.0.0.1:9000/signup?code=")
        .unwrap_or_else(|| panic!("{url}"));
    assert_eq!(code.len(), 64);
    assert!(token.starts_with("kkl_"), "{token}");

    let mut store = SqliteStore::open(&db).unwrap();
    let user = store
        .ladder_user_by_token(&sha256_hex(token))
        .unwrap()
        .expect("found by the token's hash");
    assert_eq!(user.name, "alice");
    assert_eq!(user.role, LadderRole::Contestant);
    assert!(user.signup_pending);
    // The code signs up once.
    assert_eq!(
        store
            .ladder_sign_up(&sha256_hex(code), "$argon2id$v")
            .unwrap(),
        Some("alice".to_string())
    );
    assert_eq!(
        store
            .ladder_sign_up(&sha256_hex(code), "$argon2id$w")
            .unwrap(),
        None
    );
    drop(store);
    // Neither secret is in the database in clear.
    let mut bytes = std::fs::read(&db).unwrap();
    if let Ok(wal) = std::fs::read(dir.path().join("ladder.sqlite-wal")) {
        bytes.extend(wal);
    }
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains(token));
    assert!(!text.contains(code));

    // The name is taken now; an organiser gets the organiser role.
    let again = invite(&db, "alice", &[]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("already exists"),
        "{again:?}"
    );
    let out = invite(&db, "olga", &["--organiser"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["role"], "organiser");
    let bad = invite(&db, "a b", &[]);
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("name"),
        "{bad:?}"
    );
}

/// Kills the server when the test ends, however it ends.
struct Server(std::process::Child);

/// `kakehiki ladder serve` on a free loopback port, once it accepts connections; its URL.
fn serve(dir: &Path, config: &Path, db: &Path) -> (Server, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = Server(
        Command::new(env!("CARGO_BIN_EXE_kakehiki"))
            .args(["ladder", "serve", "--config"])
            .arg(config)
            .arg("--db")
            .arg(db)
            .arg("--data")
            .arg(dir.join("data"))
            .args(["--bind", &format!("127.0.0.1:{port}")])
            .env_remove("KAKEHIKI_DATABASE_URL")
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let started = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(started.elapsed().as_secs() < 20, "the server did not start");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    (server, format!("http://127.0.0.1:{port}"))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn submit(server: &str, token: &str, language: &str, path: &Path) -> (Option<i32>, Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kakehiki"))
        .args([
            "submit", "--server", server, "--token", token, "--ladder", "g",
        ])
        .args(["--language", language, "--wait", "--json"])
        .arg(path)
        .env_remove("KAKEHIKI_TOKEN")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (out.status.code(), v, stderr)
}

fn get(url: &str, token: Option<&str>) -> (u16, Value) {
    let mut req = ureq::get(url);
    if let Some(t) = token {
        req = req.set("Authorization", &format!("Bearer {t}"));
    }
    let r = match req.call() {
        Ok(r) => r,
        Err(ureq::Error::Status(_, r)) => r,
        Err(e) => panic!("{url}: {e}"),
    };
    let code = r.status();
    (
        code,
        serde_json::from_str(&r.into_string().unwrap()).unwrap(),
    )
}

#[test]
fn submit_to_a_served_ladder_builds_checks_and_lists_the_bot() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let config = dir.path().join("ladder.toml");
    std::fs::write(&config, MINIMAL).unwrap();
    let token_of = |name: &str| {
        let out = invite(&db, name, &[]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["token"].as_str().unwrap().to_string()
    };
    let alice = token_of("alice");
    let bob = token_of("bob");
    let (_server, server) = serve(dir.path(), &config, &db);
    let leaderboard = format!("{server}/api/ladders/g/leaderboard");
    assert_eq!(get(&leaderboard, None).1["rows"], serde_json::json!([]));

    // A compile error: build_failed, exit 4, the compiler's message in the log.
    let bad = dir.path().join("bad.cpp");
    std::fs::write(&bad, "int main() { return nope_not_here; }\n").unwrap();
    if have("g++") {
        let (code, v, err) = submit(&server, &alice, "cpp", &bad);
        assert_eq!(code, Some(4), "{v} {err}");
        assert_eq!(v["status"], "build_failed", "{v}");
        assert_eq!(v["version"], 1, "{v}");
        assert!(v["log"].as_str().unwrap().contains("nope_not_here"), "{v}");
    }
    // The starter: active, exit 0, on the leaderboard.
    let starter = repo().join("starters/geister/python/bot.py");
    let (code, v, err) = submit(&server, &alice, "python", &starter);
    assert_eq!(code, Some(0), "{v} {err}");
    assert_eq!(v["status"], "active", "{v}");
    let version = v["version"].as_u64().unwrap();
    let (status, board) = get(&leaderboard, None);
    assert_eq!(status, 200);
    let rows = board["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{board}");
    assert_eq!(rows[0]["bot"], "alice");
    assert_eq!(rows[0]["owner"], "alice");
    assert_eq!(rows[0]["version"], version);
    assert_eq!(rows[0]["games"], 0);
    assert_eq!(rows[0]["rank"], 1);
    // A version's log is its owner's: not bob's, not anonymous.
    let url = format!("{server}/api/ladders/g/bots/alice/versions/{version}");
    let (status, v) = get(&url, Some(&alice));
    assert_eq!(status, 200, "{v}");
    assert!(v["log"].as_str().unwrap().contains("passed"), "{v}");
    assert_eq!(get(&url, Some(&bob)).0, 404);
    assert_eq!(get(&url, None).0, 404);
    // A refused upload; a bad token; an unknown ladder.
    let (code, v, _) = submit(&server, &bob, "cobol", &starter);
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "refused", "{v}");
    let (code, _, err) = submit(&server, "kkl_wrong", "python", &starter);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("401") && err.contains("unknown API token"),
        "{err}"
    );
    assert_eq!(
        get(&format!("{server}/api/ladders/nope/leaderboard"), None).0,
        404
    );
}

/// A server killed while a version builds loses nothing: restarted, it builds the saved upload
/// again and the version becomes active.
#[test]
fn a_server_killed_mid_build_builds_the_version_when_it_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let config = dir.path().join("ladder.toml");
    std::fs::write(&config, MINIMAL).unwrap();
    let out = invite(&db, "carol", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let token = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let starter = repo().join("starters/geister/python/bot.py");
    let (first, server) = serve(dir.path(), &config, &db);
    let out = Command::new(env!("CARGO_BIN_EXE_kakehiki"))
        .args(["submit", "--server", &server, "--token", &token])
        .args(["--ladder", "g", "--language", "python", "--json"])
        .arg(&starter)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["status"], "building", "{out:?}");
    let version = v["version"].as_u64().unwrap();
    // Killed while it builds (the build and check of a Python bot take seconds).
    drop(first);
    let url = |server: &str| format!("{server}/api/ladders/g/bots/carol/versions/{version}");
    let (_second, server) = serve(dir.path(), &config, &db);
    let started = std::time::Instant::now();
    let v = loop {
        let (code, v) = get(&url(&server), Some(&token));
        assert_eq!(code, 200, "{v}");
        if v["status"] != "building" {
            break v;
        }
        assert!(started.elapsed().as_secs() < 180, "still building: {v}");
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert_eq!(v["status"], "active", "{v}");
    assert!(v["log"].as_str().unwrap().contains("passed"), "{v}");
}
