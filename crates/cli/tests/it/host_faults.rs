//! A bot that cannot be started because of the machine is a host fault, never the bot's loss:
//! a missing TMPDIR (no room for working directories), a low file-descriptor limit. Also: the
//! read-only commands create nothing, and error messages say each cause once.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{bin, repo_file, text};

fn nac_bot() -> String {
    format!(
        "cmd:python3 {}",
        repo_file("examples/bots/python/nac_bot.py")
    )
}

/// A NAC contest with one process entrant and three built-ins: one match.
fn contest(dir: &Path, name: &str) -> PathBuf {
    let text = format!(
        "name = \"{name}\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 5\n\
         [[entrants]]\nname = \"mine\"\nseat = \"{}\"\n\
         [[entrants]]\nname = \"b1\"\nseat = \"builtin:random\"\n\
         [[entrants]]\nname = \"b2\"\nseat = \"builtin:random\"\n\
         [[entrants]]\nname = \"b3\"\nseat = \"builtin:strong\"\n",
        nac_bot()
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

fn results(db: &Path) -> i64 {
    let Ok(conn) =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
    else {
        return 0;
    };
    conn.query_row("SELECT COUNT(*) FROM kk_results", [], |r| r.get(0))
        .unwrap_or(0)
}

#[test]
fn a_missing_tmpdir_stops_the_contest_before_it_starts_and_stores_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = contest(dir.path(), "notmp");
    // Bots get a working directory in TMPDIR only without the sandbox (which gives each its own
    // private /tmp): this machine fault is the unconfined tier's.
    let toml = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        toml.replace("seed = 5\n", "seed = 5\nsandbox = \"off\"\n"),
    )
    .unwrap();
    let db = dir.path().join("k.sqlite");
    let out = Command::new(bin())
        .args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .args(["--quiet", "--no-standings"])
        .env("TMPDIR", dir.path().join("no/such/tmp"))
        .output()
        .unwrap();
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("because of this machine, not the bot"),
        "{msg}"
    );
    assert!(msg.contains("working directory"), "{msg}");
    assert!(!msg.contains("contest complete"), "{msg}");
    assert_eq!(results(&db), 0);
    // On a working machine the same file runs (it was not registered by the failed run).
    let out = Command::new(bin())
        .args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db)
        .args(["--quiet", "--no-standings"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        results(&db),
        4,
        "the four seat rotations of one round-robin table"
    );
}

#[test]
fn play_reports_a_host_fault_as_an_error_not_a_seat_loss() {
    let dir = tempfile::tempdir().unwrap();
    let bad_tmp = dir.path().join("gone");
    let python = |f: &str| {
        format!(
            "cmd:python3 {}",
            repo_file(&format!("examples/bots/python/{f}"))
        )
    };
    let cases: Vec<Vec<String>> = vec![
        vec![
            "nac".into(),
            "--seat".into(),
            nac_bot(),
            "--seat".into(),
            "builtin:random".into(),
            "--seat".into(),
            "builtin:random".into(),
            "--seat".into(),
            "builtin:random".into(),
        ],
        vec![
            "geister".into(),
            "--seat".into(),
            "builtin:random".into(),
            "--seat".into(),
            format!(
                "tcp-cmd:python3 {} {{host}} {{port}}",
                repo_file("examples/bots/python/geister_client.py")
            ),
        ],
        {
            let mut v = vec![
                "diplomacy".to_string(),
                "--seat".into(),
                python("diplomacy_bot.py"),
            ];
            for _ in 0..6 {
                v.push("--seat".into());
                v.push("builtin:hold".into());
            }
            v
        },
        {
            let mut v = vec![
                "werewolf".to_string(),
                "--seat".into(),
                format!(
                    "tcp-cmd:python3 {} {{host}} {{port}}",
                    repo_file("examples/bots/python/aiwolf_client.py")
                ),
            ];
            for _ in 0..4 {
                v.push("--seat".into());
                v.push("builtin:random".into());
            }
            v
        },
    ];
    for args in cases {
        // Without the sandbox a bot's working directory is made in TMPDIR (with it, each bot
        // has its own private /tmp and TMPDIR does not matter).
        let out = Command::new(bin())
            .arg("play")
            .args(&args)
            .args(["--json", "--sandbox", "off"])
            .env("TMPDIR", &bad_tmp)
            .output()
            .unwrap();
        let msg = text(&out);
        assert_eq!(out.status.code(), Some(1), "{}: {msg}", args[0]);
        assert!(msg.contains("host fault"), "{}: {msg}", args[0]);
        assert!(
            out.stdout.is_empty(),
            "{}: no result printed: {msg}",
            args[0]
        );
    }
}

#[test]
fn a_low_file_descriptor_limit_is_a_host_fault_not_a_loss() {
    let dir = tempfile::tempdir().unwrap();
    let file = contest(dir.path(), "fd");
    let db = dir.path().join("fd.sqlite");
    let run = |limit: u32| {
        Command::new("sh")
            .arg("-c")
            .arg(format!("ulimit -n {limit} && exec \"$@\""))
            .arg("sh")
            .arg(bin())
            .args(["contest", "run"])
            .arg(&file)
            .arg("--db")
            .arg(&db)
            .args(["--quiet", "--no-standings"])
            .output()
            .unwrap()
    };
    // 1023: the sandbox asks for 1024 descriptors per bot. Raising a hard limit needs
    // CAP_SYS_RESOURCE: without it the bot cannot be started as configured (a host fault); with
    // it the contest plays normally. Either way no match is stored as the bot's loss.
    let out = run(1023);
    let msg = text(&out);
    if out.status.success() {
        assert_eq!(results(&db), 4, "{msg}");
        assert!(msg.contains("contest complete"), "{msg}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(msg.contains("because of this machine"), "{msg}");
        assert!(msg.contains("Operation not permitted"), "{msg}");
        assert!(!msg.contains("contest complete"), "{msg}");
        assert_eq!(results(&db), 0, "nothing stored as a loss");
    }
    // So few descriptors that the bot's pipes cannot be made: a host fault for everyone.
    let db2 = dir.path().join("fd2.sqlite");
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -n 16 && exec \"$@\"")
        .arg("sh")
        .arg(bin())
        .args(["contest", "run"])
        .arg(&file)
        .arg("--db")
        .arg(&db2)
        .args(["--quiet", "--no-standings"])
        .output()
        .unwrap();
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(
        msg.contains("because of this machine")
            || msg.contains("Too many open files")
            || msg.contains("ulimit -n"),
        "{msg}"
    );
    assert!(!msg.contains("contest complete"), "{msg}");
    assert_eq!(results(&db2), 0, "nothing stored as a loss");
}

#[test]
fn reading_commands_create_no_database_and_say_each_cause_once() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["standings", "replays"] {
        let out = Command::new(bin())
            .args(["contest", cmd, "league", "--db", "kakehki.sqlite"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let msg = text(&out);
        assert_eq!(out.status.code(), Some(1), "{msg}");
        assert!(
            msg.contains("no sqlite database at kakehki.sqlite"),
            "{msg}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "{cmd} created a file"
        );
    }
    let out = Command::new(bin())
        .args(["contest", "run", "missing.toml"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert_eq!(msg.matches("(os error 2)").count(), 1, "{msg}");
}
