//! `kakehiki contest` end to end with the real registry: crash safety under SIGKILL, bad input.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::bin;

/// A NAC round robin of CPU-bound built-in bots: 5 entrants, 5 tables, `games` games each.
fn nac_contest(dir: &Path, name: &str, games: u32) -> PathBuf {
    // Public seeds: the restart test compares standings with an uninterrupted run's, which
    // needs every match played from the seed the file gives (not a fresh secret one).
    let mut text = format!("name = \"{name}\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 99\ngames = {games}\nbootstrap = 50\npublic_seeds = true\n");
    for (n, bot) in [
        ("s1", "strong"),
        ("s2", "strong"),
        ("r1", "random"),
        ("r2", "random"),
        ("r3", "random"),
    ] {
        text.push_str(&format!(
            "\n[[entrants]]\nname = \"{n}\"\nseat = \"builtin:{bot}\"\n"
        ));
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn run_contest(file: &Path, db: &Path, jobs: u32) -> Child {
    Command::new(bin())
        .args(["contest", "run"])
        .arg(file)
        .arg("--db")
        .arg(db)
        .args(["--jobs", &jobs.to_string(), "--quiet", "--no-standings"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn stored(db: &Path) -> Vec<i64> {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return vec![];
    };
    let Ok(mut stmt) = conn.prepare("SELECT idx FROM kk_results ORDER BY idx") else {
        return vec![];
    };
    stmt.query_map([], |r| r.get(0))
        .map(|rows| rows.filter_map(Result::ok).collect())
        .unwrap_or_default()
}

fn standings(db: &Path, name: &str) -> String {
    let out = Command::new(bin())
        .args(["contest", "standings", name, "--format", "json", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn sigkill_mid_contest_then_restart_stores_every_match_once_with_the_same_standings() {
    let dir = tempfile::tempdir().unwrap();
    let total = 5 * 16;
    let file = nac_contest(dir.path(), "crash", 16);

    // Reference: uninterrupted.
    let reference_db = dir.path().join("reference.sqlite");
    let out = run_contest(&file, &reference_db, 2)
        .wait_with_output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stored(&reference_db).len(), total);

    // Killed twice with SIGKILL while matches are being stored, then run to the end.
    let db = dir.path().join("crash.sqlite");
    for round in 0..2 {
        let mut child = run_contest(&file, &db, 2);
        let before = stored(&db).len();
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let n = stored(&db).len();
            if n >= before + 3 {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "round {round}: the run ended before it could be killed"
            );
            assert!(Instant::now() < deadline, "round {round}: no progress");
            std::thread::sleep(Duration::from_millis(5));
        }
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        let n = stored(&db).len();
        assert!(
            n < total,
            "round {round}: killed after the end ({n} of {total})"
        );
    }
    let out = run_contest(&file, &db, 2).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("contest complete"), "{stderr}");

    let indices = stored(&db);
    assert_eq!(
        indices,
        (0..total as i64).collect::<Vec<_>>(),
        "every match stored exactly once"
    );
    assert_eq!(standings(&db, "crash"), standings(&reference_db, "crash"));

    // Running a complete contest again plays nothing.
    let out = run_contest(&file, &db, 2).wait_with_output().unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("0 played now"));

    // Replays are exported and verify with `kakehiki replay`.
    let out = Command::new(bin())
        .args(["contest", "replays", "crash", "--db"])
        .arg(&db)
        .arg("--out")
        .arg(dir.path().join("replays"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let paths: Vec<String> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(paths.len(), total);
    let out = Command::new(bin())
        .arg("replay")
        .arg(&paths[7])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "stored replay does not verify: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn fails(args: &[&str], dir: &Path) -> String {
    let out = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "expected failure: {args:?}");
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn bad_input_gives_clear_errors_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = std::fs::read_to_string(nac_contest(d, "ok", 4)).unwrap();
    let cases = [
        (
            "syntax.toml",
            good.replace("format = \"round-robin\"", "format = round-robin"),
            vec!["line 3"],
        ),
        (
            "key.toml",
            good.replace("games = 4", "gamez = 4"),
            vec!["line 5", "gamez"],
        ),
        (
            "game.toml",
            good.replace("game = \"nac\"", "game = \"chess\""),
            vec!["line 2", "key `game`", "geister"],
        ),
        (
            "bot.toml",
            good.replace(
                "builtin:random\"\n\n[[entrants]]\nname = \"r2\"",
                "builtin:genius\"\n\n[[entrants]]\nname = \"r2\"",
            ),
            vec![
                "key `entrants[2].seat`",
                "unknown built-in bot \"genius\"",
                "random, strong",
            ],
        ),
        (
            "human.toml",
            good.replacen("builtin:random", "human", 1),
            vec![
                "entrant r1 is played by a person",
                "run the contest with --serve ADDR",
            ],
        ),
    ];
    for (file, text, needles) in cases {
        std::fs::write(d.join(file), text).unwrap();
        let err = fails(&["contest", "run", file, "--db", "store.sqlite"], d);
        for n in needles {
            assert!(err.contains(n), "{file}: {n:?} not in: {err}");
        }
        assert!(
            !d.join("store.sqlite").exists(),
            "{file}: a bad file must not create the store"
        );
    }
    // --jobs with --database-url: the workers play, each with its own --jobs (refused before any
    // connection is made).
    let err = fails(
        &[
            "contest",
            "run",
            "ok.toml",
            "--database-url",
            "postgres://kk@127.0.0.1:1/none",
            "--jobs",
            "3",
        ],
        d,
    );
    assert!(
        err.contains("--jobs 3 with --database-url") && err.contains("kakehiki worker --jobs"),
        "{err}"
    );
    let err = fails(&["contest", "run", "missing.toml"], d);
    assert!(
        err.contains("cannot read contest file missing.toml"),
        "{err}"
    );

    // An unreachable database: a clear error without the password, nothing played.
    std::fs::write(d.join("ok.toml"), &good).unwrap();
    let start = Instant::now();
    let err = fails(
        &[
            "contest",
            "run",
            "ok.toml",
            "--database-url",
            "postgres://u:secret@127.0.0.1:1/db?connect_timeout=3",
        ],
        d,
    );
    assert!(
        err.contains("cannot connect to postgresql at postgres://u:***@127.0.0.1:1/db"),
        "{err}"
    );
    assert!(!err.contains("secret"), "{err}");
    assert!(start.elapsed() < Duration::from_secs(30));
    let err = fails(
        &[
            "worker",
            "--database-url",
            "postgres://u:secret@127.0.0.1:1/db?connect_timeout=3",
        ],
        d,
    );
    assert!(
        err.contains("cannot connect to postgresql") && !err.contains("secret"),
        "{err}"
    );

    // Standings of a contest that is not there name the stored ones.
    let out = Command::new(bin())
        .args(["contest", "run", "ok.toml", "--db", "s.sqlite", "--quiet"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = fails(&["contest", "standings", "nope", "--db", "s.sqlite"], d);
    assert!(
        err.contains("contest \"nope\" is not in the store") && err.contains("stored contests: ok"),
        "{err}"
    );

    // The same name with a changed definition is refused, and nothing is added.
    std::fs::write(d.join("ok.toml"), good.replace("games = 4", "games = 8")).unwrap();
    let err = fails(&["contest", "run", "ok.toml", "--db", "s.sqlite"], d);
    assert!(err.contains("different definition"), "{err}");
    // It names what changed.
    assert!(err.contains("changed: games"), "{err}");
    assert_eq!(stored(&d.join("s.sqlite")).len(), 20);

    // Options the game does not know: refused with the driver's message before any match is
    // played (the pre-flight asks the driver for its longest legal match under the options),
    // and nothing is stored.
    std::fs::write(
        d.join("opt.toml"),
        good.replace("name = \"ok\"", "name = \"opt\"") + "\n[options]\nbogus = 1\n",
    )
    .unwrap();
    let err = fails(
        &[
            "contest",
            "run",
            "opt.toml",
            "--db",
            "opt.sqlite",
            "--jobs",
            "1",
        ],
        d,
    );
    assert!(
        err.contains("unknown option") && err.contains("bogus"),
        "{err}"
    );
    assert!(err.contains("contest \"opt\""), "{err}");
    assert!(
        !err.contains("matches failed"),
        "no match was played: {err}"
    );
    assert!(stored(&d.join("opt.sqlite")).is_empty());

    // A file that is not a database.
    std::fs::write(d.join("junk.sqlite"), vec![7u8; 8192]).unwrap();
    let err = fails(&["contest", "standings", "ok", "--db", "junk.sqlite"], d);
    assert!(err.contains("junk.sqlite"), "{err}");
}

#[test]
fn a_run_refused_by_the_preflight_creates_no_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut text = std::fs::read_to_string(nac_contest(d, "typo", 4)).unwrap();
    text = text.replace("seat = \"builtin:strong\"", "seat = \"cmd:./no-such-bot\"");
    std::fs::write(d.join("typo.toml"), text).unwrap();
    let err = fails(
        &[
            "contest",
            "run",
            "typo.toml",
            "--db",
            "mistyped.sqlite",
            "--quiet",
        ],
        d,
    );
    assert!(err.contains("no-such-bot"), "{err}");
    for f in [
        "mistyped.sqlite",
        "mistyped.sqlite-wal",
        "mistyped.sqlite.lock",
    ] {
        assert!(!d.join(f).exists(), "a refused run created {f}: {err}");
    }
}

/// `contest run --serve`: the contest's pages are served while it runs; a match being played
/// is listed (`/api/contests/NAME/running` and the contest page), has a live page and a stream
/// of its events without any stderr, and its page is the stored match's once it is over.
#[test]
fn a_contest_run_serves_its_pages_and_its_matches_live() {
    use crate::support::{start_and_read, Says};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.toml");
    // A client that thinks 50 ms a move: a match to watch as it is played.
    let client = crate::support::repo_file("examples/bots/python/geister_client.py");
    std::fs::write(
        &file,
        format!(
            "name = \"live\"\ngame = \"geister\"\nformat = \"round-robin\"\nseed = 5\ngames = 2\n\
             [[entrants]]\nname = \"a\"\nseat = \"cmd:python3 {client} --stdio --delay 50\"\n\
             [[entrants]]\nname = \"b\"\nseat = \"builtin:random\"\n"
        ),
    )
    .unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(dir.path().join("s.sqlite"))
        .args(["--serve", "127.0.0.1:0", "--quiet", "--no-standings"])
        .stdout(Stdio::null());
    let (_server, page) = start_and_read(cmd, Says::Stderr, |line| {
        line.strip_prefix("watch the contest at ")
            .map(str::to_string)
    });
    let base = page.split("/contests/").next().unwrap().to_string();
    let get = |path: &str| {
        ureq::get(&format!("{base}{path}"))
            .call()
            .unwrap()
            .into_string()
            .unwrap()
    };
    // A match being played: listed, with its live page.
    let started = std::time::Instant::now();
    let running = loop {
        let list: serde_json::Value =
            serde_json::from_str(&get("/api/contests/live/running")).unwrap();
        if let Some(m) = list["running"].as_array().and_then(|r| r.first()) {
            break m.clone();
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "no match ran: {list}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let match_page = running["page"].as_str().unwrap().to_string();
    assert!(get("/contests/live").contains("id=\"running\""));
    let live = get(&match_page);
    assert!(live.contains("id=\"live-badge\""), "{live}");
    // Its stream: lines as they are played, no stderr.
    let events = ureq::get(&format!("{base}{}", running["events"].as_str().unwrap()))
        .call()
        .unwrap();
    assert_eq!(events.header("content-type"), Some("text/event-stream"));
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(events.into_reader()));
    let data = (&mut lines)
        .map_while(Result::ok)
        .filter(|l| l.starts_with("data: "))
        .take(3)
        .collect::<Vec<_>>();
    assert!(data[0].contains("\"event\":\"header\""), "{data:?}");
    // Over: the stored match's page.
    let started = std::time::Instant::now();
    loop {
        let now = get(&match_page);
        if !now.contains("id=\"live-badge\"") {
            assert!(now.contains("geister"), "{now}");
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(60),
            "the match did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A person's entrant in a contest run with `--serve`: each of its matches prints the address
/// of its seat, where the person's replies go (an illegal one refused with the reason); the
/// contest completes with the person ranked like any entrant.
#[test]
fn a_person_plays_a_contest_run_with_serve_from_each_matchs_seat() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("people.toml");
    std::fs::write(
        &file,
        "name = \"people\"\ngame = \"geister\"\nformat = \"round-robin\"\nseed = 5\ngames = 2\n\
         [[entrants]]\nname = \"me\"\nseat = \"human\"\n\
         [[entrants]]\nname = \"bot\"\nseat = \"builtin:random\"\n",
    )
    .unwrap();
    let mut child = Command::new(bin())
        .args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(dir.path().join("s.sqlite"))
        .args(["--serve", "127.0.0.1:0", "--quiet", "-j", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Every line the run prints on stderr, as it comes.
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(err).lines().map_while(Result::ok) {
            eprintln!("run: {line}");
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut stdout = child.stdout.take().unwrap();
    let _server = crate::support::Server(child);
    let post = |url: &str, body: &str| match ureq::post(url).send_string(body) {
        Ok(r) => (r.status(), r.into_string().unwrap()),
        Err(ureq::Error::Status(code, r)) => (code, r.into_string().unwrap()),
        Err(e) => panic!("{url}: {e}"),
    };
    let mut refused = 0;
    for _ in 0..2 {
        // The next match's seat, as the run prints it.
        let url = loop {
            let line = rx
                .recv_timeout(std::time::Duration::from_secs(30))
                .expect("the run says where the person's seat is");
            if let Some((_, url)) = line
                .split_once(" of match ")
                .and_then(|(_, r)| r.split_once(": "))
            {
                if line.starts_with("human seat ") {
                    break url.to_string();
                }
            }
        };
        let reply = url.replace("?key=", "/reply?key=");
        let page = ureq::get(&url).call().unwrap().into_string().unwrap();
        assert!(page.contains("you play this geister match"), "{page}");
        let wrong = url.replace("?key=", "?key=0");
        assert_eq!(
            ureq::get(&wrong).call().unwrap_err().kind(),
            ureq::ErrorKind::HTTP
        );
        let started = std::time::Instant::now();
        'game: loop {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(60),
                "the match did not end"
            );
            for text in std::iter::once("SET:ABCD".to_string()).chain(
                "ABCDEFGH"
                    .chars()
                    .flat_map(|g| ["N", "W", "E", "S"].map(move |d| format!("MOV:{g},{d}"))),
            ) {
                let (status, body) = post(&reply, &text);
                match status {
                    200 => continue 'game,
                    422 => refused += 1,
                    409 if body.contains("over") => break 'game,
                    // Its match is over and stored: the seat is served no more.
                    404 if body.contains("while its match is played") => break 'game,
                    409 => {
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        continue 'game;
                    }
                    other => panic!("{other}: {body}"),
                }
            }
        }
    }
    assert!(refused > 0);
    // Complete, the person ranked with the bot.
    let started = std::time::Instant::now();
    loop {
        let line = rx.recv_timeout(std::time::Duration::from_secs(30)).unwrap();
        if line.contains("contest complete") {
            break;
        }
        assert!(started.elapsed() < std::time::Duration::from_secs(30));
    }
    let mut standings = String::new();
    let mut buf = [0u8; 4096];
    while !standings.contains("bot") || !standings.contains("me") {
        let n = std::io::Read::read(&mut stdout, &mut buf).unwrap();
        assert!(n > 0, "standings: {standings}");
        standings.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
}
