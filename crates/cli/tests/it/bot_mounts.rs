//! What a contest's or a match's bots are shown, and the modes of what the referee writes: an
//! entrant never reads another's program or the results database; replays, viewer pages and
//! database files are 0600 in new directories 0700.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use kakehiki_agent::{Layer, SandboxLevel, SandboxReport};

use crate::support;

fn kakehiki(dir: &Path) -> Command {
    let mut c = support::kakehiki();
    c.current_dir(dir);
    c
}

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o7777
}

/// Whether bots are confined by mounts or Landlock here (else nothing is hidden from them).
fn confined(test: &str) -> bool {
    let report = SandboxReport::current(SandboxLevel::Best);
    let ok =
        report.layers.contains(&Layer::Namespaces) || report.layers.contains(&Layer::LandlockFs);
    if !ok {
        eprintln!("SKIPPED {test}: neither mount namespaces nor Landlock here");
    }
    ok
}

/// A NAC bot that first tries to read `victim` and says on stderr whether it could.
fn spying_bot(victim: &Path) -> String {
    let example = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bots/python/nac_bot.py"
    ))
    .unwrap();
    format!(
        "import sys as _s\ntry:\n    _d = open({victim:?}).read()\n    _s.stderr.write('SPY LEAKED %d\\n' % len(_d))\nexcept OSError as _e:\n    _s.stderr.write('SPY BLOCKED %s\\n' % _e.errno)\n_s.stderr.flush()\n{example}",
        victim = victim.display().to_string()
    )
}

/// A folder `d/bots` world-readable, as a contest's shared program folder would be.
fn bots_folder(d: &Path) -> std::path::PathBuf {
    let bots = d.join("bots");
    std::fs::create_dir(&bots).unwrap();
    for p in [d, bots.as_path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bots
}

fn write_world_readable(p: &Path, text: &str) {
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o644)).unwrap();
}

fn contest(name: &str, entrants: &[(&str, &str, Option<&str>)]) -> String {
    let mut text = format!(
        "name = \"{name}\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 7\ngames = 4\nbootstrap = 10\n"
    );
    for (n, seat, dir) in entrants {
        text.push_str(&format!(
            "\n[[entrants]]\nname = \"{n}\"\nseat = \"{seat}\"\n"
        ));
        if let Some(dir) = dir {
            text.push_str(&format!("dir = \"{dir}\"\n"));
        }
    }
    text
}

#[test]
fn entrants_whose_files_share_a_folder_do_not_read_each_other() {
    if !confined("shared folder") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bots = bots_folder(d);
    let (a, b) = (bots.join("a.py"), bots.join("b.py"));
    write_world_readable(&a, &spying_bot(&b));
    write_world_readable(&b, &spying_bot(&a));
    std::fs::write(
        d.join("c.toml"),
        contest(
            "shared",
            &[
                ("a", "cmd:python3 bots/a.py", None),
                ("b", "cmd:python3 bots/b.py", None),
                ("s", "builtin:strong", None),
                ("r", "builtin:random", None),
            ],
        ),
    )
    .unwrap();
    let out = kakehiki(d)
        .args(["contest", "run", "c.toml", "--quiet", "--no-standings"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = kakehiki(d)
        .args(["contest", "replays", "shared", "--out", "out"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut replays = String::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        replays.push_str(&std::fs::read_to_string(d.join(line)).unwrap());
    }
    assert!(
        !replays.contains("SPY LEAKED"),
        "an entrant read the other's program"
    );
    assert!(
        replays.contains("SPY BLOCKED"),
        "the spies did not run: {replays}"
    );
}

#[test]
fn a_bot_folder_holding_the_database_or_another_entrant_is_refused_before_the_contest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bots = bots_folder(d);
    write_world_readable(&bots.join("a.py"), "print('READY', flush=True)\n");
    write_world_readable(&bots.join("b.py"), "print('READY', flush=True)\n");
    let builtins = [("s", "builtin:strong", None), ("r", "builtin:random", None)];
    // The database in the entrant's folder.
    let mut entrants = vec![
        ("a", "cmd:python3 a.py", Some("bots")),
        ("b2", "builtin:random", None),
    ];
    entrants.extend(builtins);
    std::fs::write(d.join("db.toml"), contest("db", &entrants)).unwrap();
    let out = kakehiki(d)
        .args([
            "contest",
            "run",
            "db.toml",
            "--db",
            "bots/kakehiki.sqlite",
            "--quiet",
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    for needle in [
        "entrant \"a\"",
        &format!("{}", bots.display()),
        "the results database",
        "move the bot into a folder of its own, or name only its file",
    ] {
        assert!(err.contains(needle), "{needle:?} not in: {err}");
    }
    // Two entrants with their own folder, one folder holding the other's program.
    let mut entrants = vec![
        ("a", "cmd:python3 a.py", Some("bots")),
        ("b", "cmd:python3 bots/b.py", None),
    ];
    entrants.extend(builtins);
    std::fs::write(d.join("two.toml"), contest("two", &entrants)).unwrap();
    let out = kakehiki(d)
        .args(["contest", "run", "two.toml", "--quiet"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("entrant \"b\"'s program"), "{err}");
    assert!(err.contains("nothing was stored"), "{err}");
}

#[test]
fn replays_viewer_pages_and_databases_are_private() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = kakehiki(d)
        .args(["play", "nac", "--seed", "3", "--replay", "new/sub/game.jsonl", "--view"])
        .args(["--seat", "builtin:random"])
        .args(["--seat", "cmd:python3 -c 'import sys; sys.stderr.write(\"SECRET\"); print(\"READY\", flush=True)'"])
        .args(["--fill", "builtin:random"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&d.join("new")), 0o700);
    assert_eq!(mode(&d.join("new/sub")), 0o700);
    assert_eq!(mode(&d.join("new/sub/game.jsonl")), 0o600);
    assert_eq!(mode(&d.join("new/sub/game.jsonl.html")), 0o600);
    // The directory it ran in is the user's: unchanged.
    assert_eq!(mode(d), 0o755);

    std::fs::write(
        d.join("c.toml"),
        contest(
            "modes",
            &[
                ("s", "builtin:strong", None),
                ("r1", "builtin:random", None),
                ("r2", "builtin:random", None),
                ("r3", "builtin:random", None),
            ],
        ),
    )
    .unwrap();
    let out = kakehiki(d)
        .args([
            "contest",
            "run",
            "c.toml",
            "--db",
            "k.sqlite",
            "--quiet",
            "--no-standings",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let db = d.join("k.sqlite");
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&d.join("k.sqlite.lock")), 0o600);
    // SQLite gives its -wal and -shm files the database file's mode: open it as a runner does.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let _: String = conn
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    conn.execute_batch("CREATE TABLE probe(x); INSERT INTO probe VALUES (1);")
        .unwrap();
    assert_eq!(mode(&d.join("k.sqlite-wal")), 0o600);
    assert_eq!(mode(&d.join("k.sqlite-shm")), 0o600);
    drop(conn);
    let out = kakehiki(d)
        .args([
            "contest", "replays", "modes", "--db", "k.sqlite", "--out", "exported",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&d.join("exported")), 0o700);
    assert_eq!(mode(&d.join("exported/modes")), 0o700);
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap()
        .to_string();
    assert_eq!(mode(&d.join(first)), 0o600);
}
