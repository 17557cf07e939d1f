//! PostgreSQL workers end to end against a real server: a coordinator queues a contest, three
//! worker processes play it, one is killed with SIGKILL in the middle of a match, and every match
//! still completes exactly once. Needs KAKEHIKI_TEST_DATABASE_URL (CI: `.ci/postgres.sh`).

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{bin, repo};

fn database_url() -> Option<String> {
    kakehiki_store::test_database_url()
}

fn worker(url: &str) -> Child {
    Command::new(bin())
        .args([
            "worker",
            "--database-url",
            url,
            "--lease-secs",
            "2",
            "--exit-when-idle",
            "--poll-ms",
            "100",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn three_workers_one_killed_mid_match_every_match_completes_exactly_once() {
    let Some(url) = database_url() else { return };
    let url = kakehiki_store::fresh_test_schema(&url, "workers");
    let dir = tempfile::tempdir().unwrap();
    // Each match has a process bot that starts slowly, so a match takes about half a second.
    let bot = repo().join("examples/bots/python/nac_bot.py");
    let mut text = String::from("name = \"pg-workers\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 5\ngames = 4\nbootstrap = 20\n");
    text.push_str(&format!(
        "\n[[entrants]]\nname = \"slow-python\"\nseat = \"cmd:sh -c 'sleep 0.4; exec python3 {}'\"\n",
        bot.display()
    ));
    for (n, b) in [
        ("strong", "strong"),
        ("random-a", "random"),
        ("random-b", "random"),
        ("random-c", "random"),
    ] {
        text.push_str(&format!(
            "\n[[entrants]]\nname = \"{n}\"\nseat = \"builtin:{b}\"\n"
        ));
    }
    let file = dir.path().join("pg.toml");
    std::fs::write(&file, text).unwrap();
    let total = 5 * 4;

    let coordinator = Command::new(bin())
        .args(["contest", "run"])
        .arg(&file)
        .args(["--database-url", &url, "--quiet", "--no-standings"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut db = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let queued: i64 = db
            .query_one("SELECT COUNT(*) FROM kk_matches", &[])
            .map(|r| r.get(0))
            .unwrap_or(0);
        if queued == total as i64 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the coordinator did not queue the matches"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut workers: Vec<Child> = (0..3).map(|_| worker(&url)).collect();
    // Kill the first worker while it holds a match (a running claim of a match that includes the
    // slow process bot, i.e. in the middle of it).
    let victim = workers[0].id();
    let pattern = format!("%:{victim}:%");
    let deadline = Instant::now() + Duration::from_secs(60);
    let killed_index: i64 = loop {
        let row = db
            .query_opt(
                "SELECT idx FROM kk_matches WHERE state = 'running' AND worker LIKE $1 AND spec LIKE '%slow-python%' LIMIT 1",
                &[&pattern],
            )
            .unwrap();
        if let Some(r) = row {
            break r.get(0);
        }
        assert!(
            Instant::now() < deadline,
            "the first worker never claimed a match"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    workers[0].kill().unwrap(); // SIGKILL
    workers[0].wait().unwrap();
    let still_running: i64 = db
        .query_one(
            "SELECT COUNT(*) FROM kk_matches WHERE idx = $1 AND state = 'running'",
            &[&killed_index],
        )
        .unwrap()
        .get(0);
    let stored_then: i64 = db
        .query_one(
            "SELECT COUNT(*) FROM kk_results WHERE idx = $1",
            &[&killed_index],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        (still_running, stored_then),
        (1, 0),
        "the worker was killed in the middle of match {killed_index}"
    );

    let out = coordinator.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "coordinator: {stderr}");
    assert!(stderr.contains("contest complete"), "{stderr}");
    for w in workers.iter_mut().skip(1) {
        let status = w.wait().unwrap();
        assert!(status.success(), "a surviving worker failed");
    }

    let indices: Vec<i64> = db
        .query("SELECT idx FROM kk_results ORDER BY idx", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        indices,
        (0..total as i64).collect::<Vec<_>>(),
        "every match stored exactly once"
    );
    let not_done: i64 = db
        .query_one("SELECT COUNT(*) FROM kk_matches WHERE state <> 'done'", &[])
        .unwrap()
        .get(0);
    assert_eq!(not_done, 0);
    let row = db
        .query_one(
            "SELECT m.attempts, r.worker FROM kk_matches m JOIN kk_results r USING (contest, idx) WHERE m.idx = $1",
            &[&killed_index],
        )
        .unwrap();
    let (attempts, by): (i32, String) = (row.get(0), row.get(1));
    assert!(
        attempts >= 2,
        "the killed match was played again after its lease expired"
    );
    assert!(
        !by.contains(&format!(":{victim}:")),
        "the killed worker cannot have stored it"
    );

    // Standings from PostgreSQL.
    let out = Command::new(bin())
        .args([
            "contest",
            "standings",
            "pg-workers",
            "--format",
            "csv",
            "--database-url",
            &url,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = String::from_utf8(out.stdout).unwrap();
    assert_eq!(csv.lines().count(), 1 + 5, "{csv}");
}
