//! `kakehiki ladder build`: an upload taken in as the ladder would, unpacked, built in the
//! sandbox with the language's recipe and checked; exit 0 when the bot would be active, 4 when
//! it was refused or its build or check failed.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::support::{kakehiki, loopback_url, repo, start_and_read, Says, Server};

const MINIMAL: &str =
    "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\", \"strong\"]\nlanguages = [\"python\", \"cpp\"]\n";

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// `kakehiki ladder build --json` of `upload` in `language` on the minimal ladder: its exit
/// code and report.
fn ladder_build(dir: &Path, language: &str, upload: &Path) -> (Option<i32>, Value) {
    ladder_build_of(dir, MINIMAL, language, upload)
}

/// [`ladder_build`] on the ladder file `config_text` (written to `dir/ladder.toml`).
fn ladder_build_of(
    dir: &Path,
    config_text: &str,
    language: &str,
    upload: &Path,
) -> (Option<i32>, Value) {
    let config = dir.join("ladder.toml");
    std::fs::write(&config, config_text).unwrap();
    let out = kakehiki()
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

/// Java, JavaScript and Rust (Debian's `rustc`: the sandbox sees only the system's folders):
/// each default recipe builds its language's Geister starter, and `check` passes it.
#[test]
fn the_java_javascript_and_rust_starters_build_pass_check_and_are_active() {
    let all = "name = \"g\"\ngame = \"geister\"\nbuiltins = [\"random\"]\n";
    for (language, tool, starter) in [
        ("java", "/usr/bin/javac", "java/Main.java"),
        ("javascript", "/usr/bin/node", "javascript/bot.js"),
        ("rust", "/usr/bin/rustc", "rust/main.rs"),
    ] {
        if !Path::new(tool).exists() {
            assert!(
                std::env::var_os("KAKEHIKI_CI").is_none(),
                "{tool} missing in CI"
            );
            eprintln!("skipped {language}: no {tool}");
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("ladder.toml");
        std::fs::write(&config, all).unwrap();
        let out = kakehiki()
            .args(["ladder", "build", "--json", "--config"])
            .arg(&config)
            .args(["--language", language])
            .arg(repo().join("starters/geister").join(starter))
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        assert_eq!(out.status.code(), Some(0), "{language}: {v} {out:?}");
        assert_eq!(v["status"], "active", "{language}: {v}");
        assert!(
            v["log"].as_str().unwrap().contains("passed"),
            "{language}: {v}"
        );
    }
}

/// A Geister bot in Go over stdin and stdout (one `package main`, the standard library only).
const GO_BOT: &str = r#"// A Geister bot over stdin and stdout: a random legal move, a blue ghost escaping when it can.
package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"strings"
)

func move(board string, rng *rand.Rand) string {
	type ghost struct{ x, y int; c byte }
	var mine [8]ghost
	taken := map[[2]int]bool{}
	for i := 0; i < 8; i++ {
		g := ghost{int(board[3*i] - '0'), int(board[3*i+1] - '0'), board[3*i+2]}
		mine[i] = g
		if g.c == 'R' || g.c == 'B' {
			taken[[2]int{g.x, g.y}] = true
		}
	}
	dirs := []struct{ d string; dx, dy int }{{"N", 0, -1}, {"E", 1, 0}, {"W", -1, 0}, {"S", 0, 1}}
	var moves []string
	for i, g := range mine {
		if g.c != 'R' && g.c != 'B' {
			continue
		}
		letter := string(rune('A' + i))
		for _, d := range dirs {
			if g.c == 'B' && ((g.x == 0 && g.y == 0 && (d.d == "N" || d.d == "W")) || (g.x == 5 && g.y == 0 && (d.d == "N" || d.d == "E"))) {
				return "MOV:" + letter + "," + d.d
			}
			nx, ny := g.x+d.dx, g.y+d.dy
			if nx >= 0 && nx < 6 && ny >= 0 && ny < 6 && !taken[[2]int{nx, ny}] {
				moves = append(moves, "MOV:"+letter+","+d.d)
			}
		}
	}
	return moves[rng.Intn(len(moves))]
}

func main() {
	rng := rand.New(rand.NewSource(1))
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		msg := strings.TrimRight(in.Text(), "\r")
		switch {
		case msg == "SET?":
			fmt.Fprintln(out, "SET:ABCD")
		case strings.HasPrefix(msg, "MOV?"):
			fmt.Fprintln(out, move(msg[4:], rng))
		case strings.HasPrefix(msg, "WON:") || strings.HasPrefix(msg, "LST:") || strings.HasPrefix(msg, "DRW:"):
			return
		default:
			continue
		}
		out.Flush()
	}
}
"#;

/// The Go recipe of docs/ladder.md ("A language that is not built in: Go"), read from the doc
/// itself, builds a Go bot in the sandbox and `check` passes it.
#[test]
fn the_docs_go_recipe_builds_a_go_bot_that_passes_check() {
    if !Path::new("/usr/bin/go").exists() {
        assert!(
            std::env::var_os("KAKEHIKI_CI").is_none(),
            "/usr/bin/go missing in CI"
        );
        eprintln!("skipped: no /usr/bin/go");
        return;
    }
    let doc = std::fs::read_to_string(repo().join("docs/ladder.md")).unwrap();
    let section = doc
        .split("### A language that is not built in: Go")
        .nth(1)
        .expect("the Go section of docs/ladder.md");
    let config = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the Go section's ladder file");
    assert!(config.contains("[recipes.go]"), "{config}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ladder.toml");
    std::fs::write(&path, config).unwrap();
    let bot = dir.path().join("main.go");
    std::fs::write(&bot, GO_BOT).unwrap();
    let out = kakehiki()
        .args(["ladder", "build", "--json", "--config"])
        .arg(&path)
        .args(["--language", "go"])
        .arg(&bot)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(out.status.code(), Some(0), "{v} {out:?}");
    assert_eq!(v["status"], "active", "{v}");
    let log = v["log"].as_str().unwrap();
    assert!(log.contains("built") && log.contains("passed"), "{log}");
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
    kakehiki()
        .args(["ladder", "invite", name, "--json", "--db"])
        .arg(db)
        .args(extra)
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap()
}

/// `kakehiki ladder invite NAME` on the store of `store` (`--db PATH` or `--database-url
/// URL`): the new account's API token.
fn invite_token(store: &[String], name: &str) -> String {
    let out = kakehiki()
        .args(["ladder", "invite", name, "--json"])
        .args(store)
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["token"].as_str().unwrap().to_string()
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

/// `kakehiki ladder serve` on a free loopback port, once it accepts connections; its URL.
fn serve(dir: &Path, config: &Path, db: &Path) -> (Server, String) {
    let store = ["--db".to_string(), db.display().to_string()];
    serve_with(dir, config, &store, &["--workers", "0"])
}

/// `ladder serve` on the store of `store` (`--db PATH` or `--database-url URL`) with `extra`
/// arguments (`serve` plays no match: `--workers 0`).
fn serve_with(dir: &Path, config: &Path, store: &[String], extra: &[&str]) -> (Server, String) {
    serve_ladders(dir, &[config], store, extra)
}

/// `ladder serve` of every ladder file of `configs` on port 0: the server and the URL it says.
fn serve_ladders(
    dir: &Path,
    configs: &[&Path],
    store: &[String],
    extra: &[&str],
) -> (Server, String) {
    let mut cmd = kakehiki();
    cmd.args(["ladder", "serve"]);
    for c in configs {
        cmd.arg("--config").arg(c);
    }
    cmd.args(store)
        .arg("--data")
        .arg(dir.join("data"))
        .args(["--bind", "127.0.0.1:0"])
        .args(extra)
        .env_remove("KAKEHIKI_DATABASE_URL");
    start_and_read(cmd, Says::Stderr, loopback_url)
}

fn submit(server: &str, token: &str, language: &str, path: &Path) -> (Option<i32>, Value, String) {
    submit_to(server, "g", token, language, path)
}

/// [`submit`] to ladder `ladder` of the server.
fn submit_to(
    server: &str,
    ladder: &str,
    token: &str,
    language: &str,
    path: &Path,
) -> (Option<i32>, Value, String) {
    let out = kakehiki()
        .args([
            "submit", "--server", server, "--token", token, "--ladder", ladder,
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
    let token_of = |name: &str| invite_token(&["--db".into(), db.display().to_string()], name);
    let alice = token_of("alice");
    let bob = token_of("bob");
    let (_server, server) = serve(dir.path(), &config, &db);
    let leaderboard = format!("{server}/api/ladders/g/leaderboard");
    let bots = |board: &Value| -> Vec<String> {
        board["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["bot"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!bots(&get(&leaderboard, None).1).contains(&"alice".to_string()));

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
    // Alice and the ladder's two built-ins, none of whom has played (no workers).
    let started = std::time::Instant::now();
    let board = loop {
        let (status, board) = get(&leaderboard, None);
        assert_eq!(status, 200);
        if board["rows"].as_array().unwrap().len() == 3 {
            break board;
        }
        assert!(started.elapsed().as_secs() < 20, "{board}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut names = bots(&board);
    names.sort();
    assert_eq!(
        names,
        ["alice", "builtin:random", "builtin:strong"],
        "{board}"
    );
    let rows = board["rows"].as_array().unwrap();
    let row = rows.iter().find(|r| r["bot"] == "alice").unwrap();
    assert_eq!(row["owner"], "alice");
    assert_eq!(row["version"], version);
    assert_eq!(row["games"], 0);
    assert_eq!(row["mu"], 25.0);
    let ranks: Vec<u64> = rows.iter().map(|r| r["rank"].as_u64().unwrap()).collect();
    assert_eq!(ranks, [1, 2, 3]);
    // A version's log is its owner's: not bob's, not anonymous.
    let url = format!("{server}/api/ladders/g/bots/alice/versions/{version}");
    let (status, v) = get(&url, Some(&alice));
    assert_eq!(status, 200, "{v}");
    assert!(v["log"].as_str().unwrap().contains("passed"), "{v}");
    assert_eq!(get(&url, Some(&bob)).0, 404);
    assert_eq!(get(&url, None).0, 404);
    // So is its upload, as it was sent.
    let upload = |token: Option<&str>| {
        let mut req = ureq::get(&format!("{url}/upload"));
        if let Some(t) = token {
            req = req.set("Authorization", &format!("Bearer {t}"));
        }
        match req.call() {
            Ok(r) => (r.status(), r.into_string().unwrap()),
            Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
            Err(e) => panic!("{e}"),
        }
    };
    let (status, body) = upload(Some(&alice));
    assert_eq!(status, 200);
    assert_eq!(body.as_bytes(), std::fs::read(&starter).unwrap());
    assert_eq!(upload(Some(&bob)).0, 404);
    assert_eq!(upload(None).0, 404);
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

/// A server killed while a version builds loses nothing: restarted, it builds the upload the
/// store kept once the dead build's lease has lapsed, and the version becomes active.
#[test]
fn a_server_killed_mid_build_builds_the_version_when_it_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let config = dir.path().join("ladder.toml");
    // A build that takes 4 s, so that the server is killed in the middle of it.
    let slow = r#"
[recipes.python]
main = "bot.py"
build = "sh -c 'sleep 4 && cp -R \"$SRC\"/. . && python3 -m py_compile \"$MAIN\"'"
run = "python3 bot.py"
"#;
    std::fs::write(&config, format!("{MINIMAL}{slow}")).unwrap();
    let out = invite(&db, "carol", &[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let token = serde_json::from_slice::<Value>(&out.stdout).unwrap()["token"]
        .as_str()
        .unwrap()
        .to_string();
    let starter = repo().join("starters/geister/python/bot.py");
    // A lease of 3 s (the default is a minute): the restarted server takes the build over soon.
    let store = ["--db".to_string(), db.display().to_string()];
    let lease = ["--workers", "0", "--lease-secs", "3"];
    let (first, server) = serve_with(dir.path(), &config, &store, &lease);
    let out = kakehiki()
        .args(["submit", "--server", &server, "--token", &token])
        .args(["--ladder", "g", "--language", "python", "--json"])
        .arg(&starter)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["status"], "building", "{out:?}");
    let version = v["version"].as_u64().unwrap();
    // Killed while it builds. Its claim on the build lapses within the lease its heartbeats no
    // longer renew, and the restarted server builds the version.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    drop(first);
    let url = |server: &str| format!("{server}/api/ladders/g/bots/carol/versions/{version}");
    let (_second, server) = serve_with(dir.path(), &config, &store, &lease);
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

/// The ladder's leaderboard rows by bot name.
fn board_rows(server: &str) -> Vec<Value> {
    ladder_rows(server, "g")
}

/// The leaderboard's rows of ladder `ladder` of the server.
fn ladder_rows(server: &str, ladder: &str) -> Vec<Value> {
    let (status, board) = get(&format!("{server}/api/ladders/{ladder}/leaderboard"), None);
    assert_eq!(status, 200, "{board}");
    board["rows"].as_array().unwrap().clone()
}

fn games_of(rows: &[Value], bot: &str) -> u64 {
    rows.iter()
        .find(|r| r["bot"] == bot)
        .map_or(0, |r| r["games"].as_u64().unwrap())
}

/// Wait until every row has played at least `n` games.
fn wait_for_games(server: &str, bots: &[&str], n: u64) -> Vec<Value> {
    wait_for_ladder_games(server, "g", bots, n)
}

/// [`wait_for_games`] on ladder `ladder` of the server.
fn wait_for_ladder_games(server: &str, ladder: &str, bots: &[&str], n: u64) -> Vec<Value> {
    let started = std::time::Instant::now();
    loop {
        let rows = ladder_rows(server, ladder);
        if bots.iter().all(|b| games_of(&rows, b) >= n) {
            return rows;
        }
        assert!(
            started.elapsed().as_secs() < 240,
            "not {n} games each yet: {rows:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
}

/// Matches are queued by rating, played by the server's workers, rated once each and listed:
/// the leaderboard ranks by μ − 3σ, a bot's matches list every seat, a match's replay shows a
/// seat's stderr only to its owner, and a restarted server keeps every rating and goes on.
#[test]
fn a_served_ladder_plays_rates_and_lists_matches_and_a_restart_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let store = ["--db".to_string(), db.display().to_string()];
    plays_rates_and_lists(dir.path(), &store, None);
}

/// The same on PostgreSQL, played by `kakehiki worker` processes: the first is killed with
/// SIGKILL while it plays, and its match is played again by the second.
#[test]
fn a_ladder_on_postgresql_is_played_by_workers_and_a_killed_worker_loses_nothing() {
    let Some(url) = kakehiki_store::test_database_url() else {
        eprintln!("skipped: KAKEHIKI_TEST_DATABASE_URL is not set");
        return;
    };
    let url = kakehiki_store::fresh_test_schema(&url, "ladder");
    let dir = tempfile::tempdir().unwrap();
    let store = ["--database-url".to_string(), url.clone()];
    plays_rates_and_lists(dir.path(), &store, Some(&url));
}

/// A `kakehiki worker` on `url` with a short lease, unpacking programs in `programs`.
fn worker(url: &str, programs: &Path) -> Server {
    Server(
        kakehiki()
            .args(["worker", "--database-url", url, "--lease-secs", "3"])
            .args(["--poll-ms", "100", "--programs"])
            .arg(programs)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    )
}

fn plays_rates_and_lists(dir: &Path, store: &[String], external: Option<&str>) {
    let config = dir.join("ladder.toml");
    std::fs::write(&config, MINIMAL).unwrap();
    let token_of = |name: &str| invite_token(store, name);
    let alice = token_of("alice");
    let bob = token_of("bob");
    // On PostgreSQL the server neither builds nor plays: two `kakehiki worker`s, each with a
    // folder of its own (as on other machines), build the upload and play the matches.
    let workers: &[&str] = if external.is_some() {
        &["--workers", "0", "--builders", "0", "--seed", "7"]
    } else {
        // A short lease, as the workers': the matches the killed server had claimed are played
        // again within seconds of the restart, not a minute.
        &["--workers", "2", "--seed", "7", "--lease-secs", "3"]
    };
    let programs = |i: usize| dir.join(format!("worker{i}"));
    let mut outside =
        external.map(|url| vec![worker(url, &programs(0)), worker(url, &programs(1))]);
    let (first, server) = serve_with(dir, &config, store, workers);
    let starter = repo().join("starters/geister/python/bot.py");
    let (code, v, err) = submit(&server, &alice, "python", &starter);
    assert_eq!(code, Some(0), "{v} {err}");
    let everyone = ["alice", "builtin:random", "builtin:strong"];
    let rows = wait_for_games(&server, &everyone, 3);
    if external.is_some() {
        // Alice's program reached the workers through the store, not the server's folder.
        let unpacked = |root: &Path| -> Vec<String> {
            std::fs::read_dir(root.join("g/alice"))
                .map(|d| {
                    d.flatten()
                        .map(|e| e.file_name().to_string_lossy().into_owned())
                        .collect()
                })
                .unwrap_or_default()
        };
        assert!(unpacked(&dir.join("data")).is_empty());
        let seen: Vec<String> = (0..2).flat_map(|i| unpacked(&programs(i))).collect();
        assert!(
            !seen.is_empty() && seen.iter().all(|n| n.starts_with("v1-")),
            "{seen:?}"
        );
    }

    // Ranked by the conservative rating, ranks 1..n.
    let key = |r: &Value| r["mu"].as_f64().unwrap() - 3.0 * r["sigma"].as_f64().unwrap();
    for (i, pair) in rows.windows(2).enumerate() {
        assert!(key(&pair[0]) >= key(&pair[1]), "{rows:?}");
        assert_eq!(pair[0]["rank"], i as u64 + 1);
    }
    assert!(rows
        .iter()
        .all(|r| r["sigma"].as_f64().unwrap() < 25.0 / 3.0));

    // Alice's matches: each with both seats, one of them hers, newest first.
    let (status, m) = get(&format!("{server}/api/ladders/g/bots/alice/matches"), None);
    assert_eq!(status, 200, "{m}");
    let matches = m["matches"].as_array().unwrap();
    assert!(matches.len() >= 3, "{m}");
    for w in matches.windows(2) {
        assert!(w[0]["index"].as_u64() > w[1]["index"].as_u64(), "{m}");
    }
    for x in matches {
        let seats = x["seats"].as_array().unwrap();
        assert_eq!(seats.len(), 2, "{x}");
        assert_eq!(
            seats.iter().filter(|s| s["bot"] == "alice").count(),
            1,
            "{x}"
        );
        assert!(seats.iter().any(|s| s["place"] == 1), "{x}");
    }
    // Paging: before the newest.
    let newest = matches[0]["index"].as_u64().unwrap();
    let (_, older) = get(
        &format!("{server}/api/ladders/g/bots/alice/matches?before={newest}&limit=1"),
        None,
    );
    let older = older["matches"].as_array().unwrap();
    assert_eq!(older.len(), 1);
    assert!(older[0]["index"].as_u64().unwrap() < newest);

    // One match: its replay, with alice's stderr for alice (and only for her): the tail in
    // its `seat_end` and, request by request, in its `seat` lines (the starter writes the
    // result it was told, at the end).
    let index = matches[0]["index"].as_u64().unwrap();
    let alice_seat = matches[0]["seat"].as_u64().unwrap();
    let url = format!("{server}/api/ladders/g/matches/{index}");
    let hidden = |token: Option<&str>| -> bool {
        let (status, v) = get(&url, token);
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["index"], index);
        let replay = v["replay"].as_str().unwrap();
        let lines: Vec<Value> = replay
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect();
        let end = lines
            .iter()
            .find(|l| l["event"] == "seat_end" && l["seat"] == alice_seat)
            .unwrap_or_else(|| panic!("no seat_end of seat {alice_seat}: {replay}"));
        let per_request = lines
            .iter()
            .filter(|l| l["event"] == "seat" && l["seat"] == alice_seat)
            .filter_map(|l| l["stderr"].as_str())
            .collect::<Vec<_>>()
            .concat();
        let hidden = end["stderr_hidden"] == true;
        assert_eq!(
            per_request.contains("result "),
            !hidden,
            "{token:?}: {replay}"
        );
        hidden
    };
    assert!(hidden(None));
    assert!(hidden(Some(&bob)));
    assert!(!hidden(Some(&alice)));
    assert_eq!(
        get(&format!("{server}/api/ladders/g/matches/999999"), None).0,
        404
    );

    // The pages: the leaderboard, alice's page with her matches and rating chart, a match with
    // the viewer.
    let html = |path: &str| -> (u16, String) {
        match ureq::get(&format!("{server}{path}")).call() {
            Ok(r) => (r.status(), r.into_string().unwrap()),
            Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
            Err(e) => panic!("{path}: {e}"),
        }
    };
    let (status, board) = html("/leaderboard");
    assert_eq!(status, 200);
    assert!(board.contains("id=\"leaderboard\""), "{board}");
    for b in everyone {
        assert!(board.contains(&format!(">{b}</a>")), "{b}: {board}");
    }
    let (status, page) = html("/bots/alice");
    assert_eq!(status, 200);
    assert!(page.contains("id=\"bot-matches\""), "{page}");
    assert!(page.contains("id=\"rating-chart\""), "{page}");
    assert!(
        page.contains(&format!("href=\"/matches/{index}\"")),
        "{page}"
    );
    let (status, page) = html(&format!("/matches/{index}"));
    assert_eq!(status, 200);
    assert!(page.contains("id=\"match-result\""), "{page}");
    assert!(!page.contains("id=\"view-error\""), "{page}");
    assert_eq!(html("/bots/nobody").0, 404);
    assert_eq!(html("/matches/999999").0, 404);

    // Killed and restarted: every rated game is still counted, and play goes on. On
    // PostgreSQL a worker is killed too (SIGKILL, mid-match as it always has one), and another
    // takes its place.
    let at_kill = board_rows(&server);
    drop(first);
    if let (Some(w), Some(url)) = (outside.as_mut(), external) {
        w.remove(0);
        w.push(worker(url, &programs(2)));
    }
    let (_second, server) = serve_with(dir, &config, store, workers);
    let after = board_rows(&server);
    for b in everyone {
        assert!(
            games_of(&after, b) >= games_of(&at_kill, b),
            "{at_kill:?} {after:?}"
        );
    }
    // Play goes on: each entrant plays again (one more game than it had at the restart).
    let started = std::time::Instant::now();
    let rows = loop {
        let rows = ladder_rows(&server, "g");
        if everyone
            .iter()
            .all(|b| games_of(&rows, b) > games_of(&after, b))
        {
            break rows;
        }
        assert!(
            started.elapsed().as_secs() < 240,
            "not one more game each yet: {after:?} {rows:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(250));
    };

    // Each rated match counted once: the games over all entrants are two per rated match.
    let mut indices = std::collections::BTreeMap::new();
    for b in everyone {
        let (_, m) = get(
            &format!("{server}/api/ladders/g/bots/{b}/matches?limit=500"),
            None,
        );
        for x in m["matches"].as_array().unwrap() {
            *indices.entry(x["index"].as_u64().unwrap()).or_insert(0) += 1;
        }
    }
    // Read after the matches: a match rated in between only adds games.
    let games: u64 = everyone.iter().map(|b| games_of(&rows, b)).sum();
    assert!(indices.values().all(|&n| n == 2), "{indices:?}");
    assert!(games <= 2 * indices.len() as u64, "{games} {indices:?}");
}

/// `ladder final` freezes the ladder and plays its active versions with a contest format into
/// the same store; with fewer than two entrants it says so and plays nothing.
#[test]
fn the_final_freezes_the_ladder_and_plays_the_active_versions() {
    use kakehiki_store::{LadderPlay, SqliteStore};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let config = dir.path().join("ladder.toml");
    std::fs::write(&config, format!("{MINIMAL}[options]\nmax_plies = 300\n")).unwrap();
    let token_of = |name: &str| invite_token(&["--db".into(), db.display().to_string()], name);
    let tokens = [token_of("alice"), token_of("bob")];
    let final_ = |extra: &[&str]| {
        kakehiki()
            .args(["ladder", "final", "--config"])
            .arg(&config)
            .arg("--db")
            .arg(&db)
            .arg("--data")
            .arg(dir.path().join("data"))
            .args(["--games", "2", "--quiet"])
            .args(extra)
            .env_remove("KAKEHIKI_DATABASE_URL")
            .output()
            .unwrap()
    };
    let starter = repo().join("starters/geister/python/bot.py");
    {
        let (_server, server) = serve(dir.path(), &config, &db);
        let (code, v, err) = submit(&server, &tokens[0], "python", &starter);
        assert_eq!(code, Some(0), "{v} {err}");
        // One version only: no final.
        let out = final_(&[]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("needs at least two entrants"), "{err}");
        assert!(err.contains("--builtins"), "{err}");
        let (code, v, err) = submit(&server, &tokens[1], "python", &starter);
        assert_eq!(code, Some(0), "{v} {err}");
    }
    let out = final_(&[]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("kakehiki contest standings g-final"), "{err}");
    // Published: the final's standings hold both versions; the ladder is frozen.
    let out = kakehiki()
        .args([
            "contest",
            "standings",
            "g-final",
            "--format",
            "json",
            "--db",
        ])
        .arg(&db)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let standings = String::from_utf8_lossy(&out.stdout);
    assert!(
        standings.contains("alice@v1") && standings.contains("bob@v1"),
        "{standings}"
    );
    let mut store = SqliteStore::open(&db).unwrap();
    assert!(store.ladder_state("g").unwrap().frozen);
    // The final's file is the contest file it ran.
    let file = std::fs::read_to_string(dir.path().join("data/g-final.toml")).unwrap();
    assert!(file.contains("format = \"round-robin\""), "{file}");
    assert!(file.contains("seat = \"cmd:python3 bot.py\""), "{file}");
    // Played as the ladder's matches are: its table, its options and its match time limit.
    assert!(file.contains("seats = 2\n"), "{file}");
    assert!(file.contains("match_timeout_s = "), "{file}");
    assert!(file.contains("[options]\nmax_plies = \"300\""), "{file}");
    drop(store);
    // On the ladder site: the final's standings, its page linked from the frozen leaderboard.
    let (_server, server) = serve(dir.path(), &config, &db);
    let (status, f) = get(&format!("{server}/api/ladders/g/final"), None);
    assert_eq!(status, 200, "{f}");
    assert_eq!(f["contest"], "g-final");
    assert_eq!(f["format"], "round-robin");
    assert_eq!(f["complete"], true, "{f}");
    assert_eq!(f["tie_break"], "rating");
    let entrants: Vec<&str> = f["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["entrant"].as_str().unwrap())
        .collect();
    assert_eq!(entrants.len(), 2, "{f}");
    assert!(
        entrants.contains(&"alice@v1") && entrants.contains(&"bob@v1"),
        "{f}"
    );
    for r in f["rows"].as_array().unwrap() {
        assert_eq!(r["games"], 2, "{f}");
    }
    let html = |path: &str| {
        let r = ureq::get(&format!("{server}{path}")).call().unwrap();
        r.into_string().unwrap()
    };
    let board = html("/leaderboard");
    assert!(
        board.contains("<a href=\"/final\" id=\"final-link\">"),
        "{board}"
    );
    let page = html("/final");
    assert!(page.contains("<b>complete</b>, 2 matches played"), "{page}");
    assert!(
        page.contains("<a href=\"/bots/alice\">alice@v1</a>"),
        "{page}"
    );
    assert!(page.contains("id=\"tie-break\""), "{page}");
}

/// `final_tie_break = "playoff"`: entrants the final ranks level play a play-off once it is
/// complete (`ladder final` runs it), and the site orders them by it, then by their rating
/// where the play-off leaves them level. Games of two plies are all drawn: every rank is shared.
#[test]
fn a_tied_final_goes_to_a_playoff() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    let config = dir.path().join("ladder.toml");
    std::fs::write(
        &config,
        format!("{MINIMAL}final_tie_break = \"playoff\"\n[options]\nmax_plies = 2\n"),
    )
    .unwrap();
    let token_of = |name: &str| invite_token(&["--db".into(), db.display().to_string()], name);
    let starter = repo().join("starters/geister/python/bot.py");
    let (_server, server) = serve(dir.path(), &config, &db);
    for name in ["alice", "bob"] {
        let (code, v, err) = submit(&server, &token_of(name), "python", &starter);
        assert_eq!(code, Some(0), "{v} {err}");
    }
    let out = kakehiki()
        .args(["ladder", "final", "--config"])
        .arg(&config)
        .arg("--db")
        .arg(&db)
        .arg("--data")
        .arg(dir.path().join("data"))
        .args(["--games", "2", "--quiet", "--builtins"])
        .env_remove("KAKEHIKI_DATABASE_URL")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("their play-off \"g-final-playoff-1\""),
        "{err}"
    );
    // The play-off's file: the four tied entrants, a round robin of two games a pairing.
    let file = std::fs::read_to_string(dir.path().join("data/g-final-playoff-1.toml")).unwrap();
    assert!(file.contains("name = \"g-final-playoff-1\""), "{file}");
    assert!(file.contains("format = \"round-robin\""), "{file}");
    assert!(file.contains("games = 2\n"), "{file}");
    assert_eq!(file.matches("[[entrants]]").count(), 4, "{file}");
    let (status, f) = get(&format!("{server}/api/ladders/g/final"), None);
    assert_eq!(status, 200, "{f}");
    assert_eq!(f["tie_break"], "playoff");
    assert_eq!(f["playoffs"][0]["contest"], "g-final-playoff-1", "{f}");
    assert_eq!(f["playoffs"][0]["complete"], true, "{f}");
    assert_eq!(f["playoffs"][0]["stored"], 12, "{f}");
    let rows = f["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 4, "{f}");
    // Drawn again, and no rating yet (the server plays no match): they share the first rank,
    // decided by the play-off as far as it could (the web crate's tests order a decided one).
    assert!(
        rows.iter()
            .all(|r| r["by_playoff"] == true && r["by_rating"] == false && r["rank"] == 1),
        "{f}"
    );
    let page = ureq::get(&format!("{server}/final"))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    assert!(page.contains("id=\"playoff-1\""), "{page}");
    assert!(
        page.contains("† Ranked level by the final: their play-off decides."),
        "{page}"
    );
}

/// The ladder file's game options are checked by the game when the file is loaded: an unknown
/// option or a bad value stops `ladder serve` (and `ladder build`) with the key named, before
/// any match; good ones are used by the built bot's `check` too.
#[test]
fn options_the_game_refuses_are_named_before_any_match() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("ladder.toml");
    let serve = |text: &str| {
        std::fs::write(&config, format!("{MINIMAL}{text}")).unwrap();
        let out = kakehiki()
            .args(["ladder", "serve", "--config"])
            .arg(&config)
            .arg("--db")
            .arg(dir.path().join("l.sqlite"))
            .args(["--bind", "127.0.0.1:0", "--workers", "0"])
            .env_remove("KAKEHIKI_DATABASE_URL")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = serve("[options]\nbogus = 1\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("unknown option \"bogus\"") && err.contains("max_plies"),
        "{err}"
    );
    let (code, err) = serve("[options]\nmax_plies = \"many\"\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("max_plies") && err.contains("many"), "{err}");
    let (code, err) = serve("sandbox = \"loose\"\n");
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("sandbox"), "{err}");

    // A good option: the bot is built and checked with it.
    std::fs::write(&config, format!("{MINIMAL}[options]\nmax_plies = 40\n")).unwrap();
    let out = kakehiki()
        .args([
            "ladder",
            "build",
            "--json",
            "--language",
            "python",
            "--config",
        ])
        .arg(&config)
        .arg(repo().join("starters/geister/python/bot.py"))
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    assert_eq!(v["status"], "active", "{out:?}");
}

/// A bot that answers every move legally but takes 4 s (within Geister's 10 s a move) would
/// hold the builder's check for many minutes; the ladder's `limits.check_seconds` stops it and
/// fails the version, naming the match, and the check's seeds are not the command line's
/// (a fresh first seed per check, so the bot cannot recognise it).
#[test]
fn a_check_slower_than_check_seconds_fails_the_version() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot.py");
    std::fs::write(
        &bot,
        "import sys, time\n\
         for line in sys.stdin:\n\
         \x20   if line.startswith('SET?'):\n\
         \x20       print('SET:ABCD', flush=True)\n\
         \x20   elif line.startswith('MOV?'):\n\
         \x20       time.sleep(4)\n\
         \x20       print('MOV:A,N', flush=True)\n",
    )
    .unwrap();
    let t = std::time::Instant::now();
    let (code, v) = ladder_build_of(
        dir.path(),
        &format!("{MINIMAL}[limits]\ncheck_seconds = 2\n"),
        "python",
        &bot,
    );
    assert_eq!(code, Some(4), "{v}");
    assert_eq!(v["status"], "check_failed", "{v}");
    let log = v["log"].as_str().unwrap();
    assert!(
        log.contains("STOP  the check's time limit of 2 s ran out"),
        "{log}"
    );
    assert!(
        !log.contains("seed 1000,"),
        "the command line's seeds: {log}"
    );
    assert!(
        t.elapsed() < std::time::Duration::from_secs(60),
        "{:?}",
        t.elapsed()
    );
}

/// A 100-byte upload whose build writes 2 MiB into its folder would be kept in the store (and
/// unpacked by every worker): over `limits.program_mib` it fails the build, naming the file,
/// before `check` runs; too many files fail it the same way.
#[test]
fn a_program_folder_over_the_ladders_limits_fails_the_build() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot.py");
    std::fs::write(&bot, "print('never run')\n").unwrap();
    for (limits, build, said) in [
        (
            "program_mib = 1",
            "head -c 2097152 /dev/zero > big.bin",
            "the program folder is over 1048576 bytes (reached at \\\"big.bin\\\")",
        ),
        (
            "program_entries = 20",
            "mkdir many && cd many && for i in $(seq 30); do : > f$i; done",
            "the program folder has over 20 files and folders",
        ),
    ] {
        let config = format!(
            "name = \"g\"\ngame = \"geister\"\nlanguages = [\"py\"]\n\
             [recipes.py]\nmain = \"bot.py\"\nrun = \"python3 bot.py\"\n\
             build = \"sh -c 'cp -R \\\"$SRC\\\"/. . && {build}'\"\n\
             [limits]\n{limits}\n"
        );
        let (code, v) = ladder_build_of(dir.path(), &config, "py", &bot);
        assert_eq!(code, Some(4), "{v}");
        assert_eq!(v["status"], "build_failed", "{v}");
        let log = v["log"].as_str().unwrap();
        assert!(log.contains(said.replace("\\\"", "\"").as_str()), "{log}");
        assert!(!log.contains("check ("), "checked anyway: {log}");
    }
}

/// The organiser's commands: `ladder disable NAME` (and `--enable`), `ladder retire BOT
/// --ladder L` (and `--undo`); an unknown account or bot is an error that names it.
#[test]
fn an_organiser_disables_an_account_and_retires_a_bot_from_the_command_line() {
    use kakehiki_store::{NewBotVersion, SqliteStore, Store};
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    assert_eq!(invite(&db, "alice", &[]).status.code(), Some(0));
    SqliteStore::open(&db)
        .unwrap()
        .add_bot_version(&NewBotVersion {
            ladder: "g".into(),
            bot: "alice".into(),
            owner: "alice".into(),
            language: "python".into(),
            source_sha256: "0".repeat(64),
        })
        .unwrap();
    let run = |args: &[&str]| {
        let out = kakehiki()
            .arg("ladder")
            .args(args)
            .arg("--db")
            .arg(&db)
            .env_remove("KAKEHIKI_DATABASE_URL")
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let user = |db: &Path| {
        SqliteStore::open(db)
            .unwrap()
            .ladder_user("alice")
            .unwrap()
            .unwrap()
    };
    let (code, out) = run(&["disable", "alice"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("disabled alice"), "{out}");
    assert!(user(&db).disabled);
    let (code, out) = run(&["disable", "alice", "--enable"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!user(&db).disabled);
    let (code, out) = run(&["disable", "nobody"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("there is no account \"nobody\""), "{out}");
    let (code, out) = run(&["retire", "alice", "--ladder", "g"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("retired alice from ladder g"), "{out}");
    let (code, out) = run(&["retire", "alice", "--ladder", "g", "--undo"]);
    assert_eq!(code, Some(0), "{out}");
    let (code, out) = run(&["retire", "bob", "--ladder", "g"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("ladder \"g\" has no bot \"bob\""), "{out}");
    // The ladder's state, by `ladder status`: an unknown ladder is named; a known one shows its
    // bots, accounts and storage.
    let (code, out) = run(&["status", "--ladder", "g"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("the store has no ladder \"g\""), "{out}");
    let mut store = SqliteStore::open(&db).unwrap();
    store
        .register_contest(&kakehiki_store::ContestRow {
            name: kakehiki_store::ladder_contest("g"),
            fingerprint: kakehiki_store::LADDER_FINGERPRINT.into(),
            definition: "{}".into(),
        })
        .unwrap();
    assert!(store.ladder_set_retired("g", "alice", true).unwrap());
    let (code, out) = run(&["status", "--ladder", "g"]);
    assert_eq!(code, Some(0), "{out}");
    for line in [
        "ladder g",
        "0 queued, 0 running, 0 failed or stopped",
        "retired: alice",
        "accounts  1 (0 disabled)",
        "versions  1 building, 0 active",
        "uploads",
    ] {
        assert!(out.contains(line), "{line:?} in {out}");
    }
    let (code, out) = run(&["status", "--ladder", "g", "--json"]);
    assert_eq!(code, Some(0), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["retired_bots"], serde_json::json!(["alice"]));
    assert_eq!(v["versions"]["building"], 1);
    assert!(v["storage_bytes"].as_u64().is_some(), "{v}");
}

/// Bots that connect (the contest's own protocol) play rated ladder matches, on one server of
/// five ladders with one account and one token: a Geister ladder over TCP, an AIWolf ladder of
/// 5 seats (TCP, the ladder's default for `werewolf`) with the Python and the Java starter, a
/// natural-language ladder (WebSocket, its default), a Diplomacy ladder of the JSON starter
/// (pipes, its default) and one of DAIDE clients, each bot uploaded as it is. The built bot is checked and played as a `tcp-cmd:` / `ws-cmd:` /
/// `daide-cmd:` seat, told where to connect at the end of its command line. Each ladder's pages
/// are under `/ladders/NAME/`, `/` lists them.
#[test]
fn networked_bots_are_checked_and_play_rated_matches_over_tcp_and_websocket() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("ladder.sqlite");
    networked_ladders(dir.path(), &["--db".to_string(), db.display().to_string()]);
}

/// The same on PostgreSQL.
#[test]
fn networked_bots_play_rated_matches_on_postgresql() {
    let Some(url) = kakehiki_store::test_database_url() else {
        eprintln!("skipped: KAKEHIKI_TEST_DATABASE_URL is not set");
        return;
    };
    let url = kakehiki_store::fresh_test_schema(&url, "ladder_networked");
    let dir = tempfile::tempdir().unwrap();
    networked_ladders(dir.path(), &["--database-url".to_string(), url]);
}

/// Five ladders on one server of the store `store` (`--db PATH` or
/// `--database-url URL`), checked and played: see
/// [`networked_bots_are_checked_and_play_rated_matches_over_tcp_and_websocket`].
fn networked_ladders(dir: &Path, store: &[String]) {
    // (ladder, game, its file's extra keys)
    let ladders = [
        (
            "geister-tcp",
            "geister",
            "transport = \"tcp\"\nbuiltins = [\"random\"]\n",
        ),
        ("aiwolf", "werewolf", "seats = 5\nbuiltins = [\"sample\"]\n"),
        (
            "nlp",
            "werewolf-nlp",
            "seats = 5\nbuiltins = [\"sample-en\"]\n",
        ),
        (
            "diplomacy",
            "diplomacy",
            "builtins = [\"hold\"]\n[options]\nmax_year = \"1901\"\n",
        ),
        (
            "dip",
            "diplomacy",
            "transport = \"daide\"\nbuiltins = [\"hold\"]\n[options]\nmax_year = \"1901\"\n",
        ),
    ];
    // (account, ladder, language, starter, the seat it is checked as)
    let uploads = [
        (
            "alice",
            "geister-tcp",
            "python",
            "starters/geister/python/bot.py",
            "tcp-cmd:python3 bot.py {host} {port}",
        ),
        (
            "alice",
            "aiwolf",
            "python",
            "starters/werewolf/python/bot.py",
            "tcp-cmd:python3 bot.py {host} {port}",
        ),
        (
            "bob",
            "aiwolf",
            "java",
            "starters/werewolf/java/Main.java",
            "tcp-cmd:java -cp . Main {host} {port}",
        ),
        (
            "alice",
            "nlp",
            "python",
            "starters/werewolf-nlp/python/bot.py",
            "ws-cmd:python3 bot.py {url}",
        ),
        (
            "alice",
            "diplomacy",
            "python",
            "starters/diplomacy/python/bot.py",
            "cmd:python3 bot.py",
        ),
        (
            "alice",
            "dip",
            "python",
            "crates/referee/tests/diplomacy_bots/daide_bot.py",
            "daide-cmd:python3 bot.py {host} {port}",
        ),
    ];
    let configs: Vec<std::path::PathBuf> = ladders
        .iter()
        .map(|(name, game, extra)| {
            let config = dir.join(format!("{name}.toml"));
            std::fs::write(
                &config,
                format!("name = \"{name}\"\ngame = \"{game}\"\nlanguages = [\"python\", \"java\"]\n{extra}"),
            )
            .unwrap();
            config
        })
        .collect();
    let token_of = |name: &str| invite_token(store, name);
    let tokens = [("alice", token_of("alice")), ("bob", token_of("bob"))];
    let token = |account: &str| &tokens.iter().find(|(a, _)| *a == account).unwrap().1;
    let seats_of = |game: &str| match game {
        "geister" => 2,
        "diplomacy" => 7,
        _ => 5,
    };
    let paths: Vec<&Path> = configs.iter().map(|c| c.as_path()).collect();
    let (_server, url) = serve_ladders(dir, &paths, store, &["--workers", "2", "--builders", "2"]);
    // `/` lists the ladders; each has its own home page, with how its bots connect.
    let home = ureq::get(&format!("{url}/"))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    for (name, game, _) in &ladders {
        assert!(
            home.contains(&format!(
                "<a href=\"/ladders/{name}/\">{name}</a></td><td>{game} ("
            )),
            "{home}"
        );
        let page = ureq::get(&format!("{url}/ladders/{name}/"))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        assert!(page.contains("id=\"transport\""), "{name}: {page}");
        assert!(
            page.contains(&format!("href=\"/ladders/{name}/leaderboard\"")),
            "{page}"
        );
    }
    // A single ladder's address means nothing on a server of several.
    let single = ureq::get(&format!("{url}/leaderboard")).call();
    assert!(
        matches!(single, Err(ureq::Error::Status(404, _))),
        "{single:?}"
    );

    for (account, ladder, language, starter, seat) in &uploads {
        let (code, v, err) = submit_to(
            &url,
            ladder,
            token(account),
            language,
            &repo().join(starter),
        );
        assert_eq!(code, Some(0), "{ladder} {language}: {v} {err}");
        assert_eq!(v["status"], "active", "{ladder} {language}: {v}");
        let (_, version) = get(
            &format!("{url}/api/ladders/{ladder}/bots/{account}/versions/1"),
            Some(token(account)),
        );
        let log = version["log"].as_str().unwrap_or_default();
        let game = ladders.iter().find(|l| l.0 == *ladder).unwrap().1;
        assert!(log.contains(&format!("check ({game} ")), "{ladder}: {log}");
        assert!(log.contains(seat), "{ladder}: {log}");
        // Checked at the ladder's own table.
        let n = seats_of(game);
        assert!(
            log.contains(&format!("seat 0 of {n} (first seat)")),
            "{ladder}: {log}"
        );
    }
    for (account, ladder, _, _, seat) in &uploads {
        let rows = wait_for_ladder_games(&url, ladder, &[account], 1);
        let row = rows.iter().find(|r| r["bot"] == *account).unwrap();
        assert_eq!(row["errors"], 0, "{ladder}: {rows:?}");
        // The match was played with the account's program as that seat.
        let (_, m) = get(
            &format!("{url}/api/ladders/{ladder}/bots/{account}/matches"),
            None,
        );
        let first = &m["matches"][0];
        let want = seats_of(ladders.iter().find(|l| l.0 == *ladder).unwrap().1);
        assert_eq!(
            first["seats"].as_array().unwrap().len(),
            want,
            "{ladder}: {m}"
        );
        let index = first["index"].as_u64().unwrap();
        let (_, played) = get(&format!("{url}/api/ladders/{ladder}/matches/{index}"), None);
        let replay = played["replay"].as_str().unwrap_or_default();
        let form = seat.split(':').next().unwrap();
        assert!(
            replay
                .lines()
                .next()
                .is_some_and(|h| h.contains(&format!("\"{form}:"))),
            "{ladder}: {}",
            replay.lines().next().unwrap_or_default()
        );
        // Its page is under the ladder's place, and links there.
        let page = ureq::get(&format!("{url}/ladders/{ladder}/matches/{index}"))
            .call()
            .unwrap()
            .into_string()
            .unwrap();
        assert!(
            page.contains(&format!("href=\"/ladders/{ladder}/bots/{account}\"")),
            "{page}"
        );
    }
}
