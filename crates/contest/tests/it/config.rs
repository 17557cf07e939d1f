//! Malformed contest files are rejected with the line and the key.

use crate::common::{contest_text, lookup};
use kakehiki_contest::{ConfigError, ContestDef};

fn err(text: &str) -> String {
    match ContestDef::parse(text, "bad.toml", &lookup) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

fn assert_names(msg: &str, line: usize, key: &str) {
    assert!(
        msg.contains(&format!("line {line}")),
        "no line {line} in: {msg}"
    );
    assert!(msg.contains(key), "no key {key} in: {msg}");
}

#[test]
fn a_good_file_parses_with_defaults() {
    let def = ContestDef::parse(
        &contest_text("ok", "table", "round-robin", 5, "jobs = 2"),
        "t",
        &lookup,
    )
    .unwrap();
    assert_eq!((def.seats, def.games, def.jobs), (4, 4, Some(2)));
    // Parallelism is not part of the fingerprint.
    let other = ContestDef::parse(
        &contest_text("ok", "table", "round-robin", 5, "jobs = 1"),
        "t",
        &lookup,
    )
    .unwrap();
    assert_eq!(def.fingerprint(), other.fingerprint());
    let changed = ContestDef::parse(
        &contest_text("ok", "table", "round-robin", 5, "games = 8"),
        "t",
        &lookup,
    )
    .unwrap();
    assert_ne!(def.fingerprint(), changed.fingerprint());
    // The stored form reads back.
    let back = ContestDef::from_stored(&def.to_stored()).unwrap();
    assert_eq!(back.fingerprint(), def.fingerprint());
}

#[test]
fn toml_syntax_errors_name_the_line() {
    let msg = err("name = \"x\"\ngame = \"duel\"\nformat = round-robin\n");
    assert!(msg.starts_with("bad.toml: "), "{msg}");
    assert!(msg.contains("line 3"), "{msg}");
}

#[test]
fn unknown_and_missing_keys_are_named() {
    let text = contest_text("x", "duel", "round-robin", 2, "gmaes = 4");
    let msg = err(&text);
    assert_names(&msg, 5, "gmaes");
    let msg = err("name = \"x\"\ngame = \"duel\"\nformat = \"round-robin\"\n[[entrants]]\nname = \"a\"\nseat = \"builtin:s1\"\n");
    assert!(msg.contains("seed"), "{msg}");
    let text = contest_text("x", "duel", "round-robin", 2, "")
        .replace("seat = \"builtin:s2\"", "sea = \"builtin:s2\"");
    let msg = err(&text);
    assert!(msg.contains("sea"), "{msg}");
}

#[test]
fn unknown_game_bot_format_and_rules_name_line_and_key() {
    let msg = err(&contest_text("x", "chess", "round-robin", 2, ""));
    assert_names(&msg, 2, "key `game`");
    assert!(msg.contains("unknown game \"chess\""), "{msg}");
    let text = contest_text("x", "duel", "round-robin", 3, "")
        .replace("builtin:s2", "builtin:grandmaster");
    let msg = err(&text);
    assert_names(&msg, 13, "key `entrants[1].seat`");
    assert!(
        msg.contains("unknown built-in bot \"grandmaster\""),
        "{msg}"
    );
    let msg = err(&contest_text("x", "duel", "swiss", 2, ""));
    assert_names(&msg, 3, "key `format`");
    let msg = err(&contest_text(
        "x",
        "duel",
        "round-robin",
        2,
        "rules = \"blitz\"",
    ));
    assert_names(&msg, 5, "key `rules`");
}

#[test]
fn bad_values_name_line_and_key() {
    let msg = err(&contest_text("x", "table", "round-robin", 5, "games = 3"));
    assert_names(&msg, 5, "key `games`");
    assert!(msg.contains("multiple of 4"), "{msg}");
    let msg = err(&contest_text("x", "table", "round-robin", 5, "seats = 9"));
    assert_names(&msg, 5, "key `seats`");
    let msg =
        err(&contest_text("x", "duel", "round-robin", 2, "seed = -1").replace("seed = 7\n", ""));
    assert_names(&msg, 4, "key `seed`");
    let msg = err(&contest_text("x", "table", "round-robin", 3, ""));
    assert!(
        msg.contains("key `entrants`") && msg.contains("at least 4 entrants"),
        "{msg}"
    );
    let text =
        contest_text("x", "duel", "round-robin", 2, "").replace("name = \"e1\"", "name = \"e0\"");
    let msg = err(&text);
    assert_names(&msg, 12, "duplicate entrant name");
    let text = contest_text("x", "duel", "round-robin", 2, "").replace("builtin:s2", "tcp");
    assert!(err(&text).contains("duel has no tcp entrants"));
    let text =
        contest_text("x", "duel", "round-robin", 2, "").replace("builtin:s2", "cmd:echo 'unclosed");
    assert!(err(&text).contains("cannot split"));
    let msg = err(&contest_text(
        "x",
        "duel",
        "round-robin",
        2,
        "[options]\nturn_ms = [1, 2]",
    ));
    assert_names(&msg, 6, "options.turn_ms");
    let msg = err(&contest_text("x", "wolf", "aiwolf-game-set", 6, ""));
    assert!(msg.contains("exactly 5 entrants"), "{msg}");
}

#[test]
fn an_unreadable_file_is_a_clear_error() {
    let e = ContestDef::load(std::path::Path::new("/no/such/contest.toml"), &lookup).unwrap_err();
    assert!(matches!(e, ConfigError::Read { .. }));
    assert!(e.to_string().contains("/no/such/contest.toml"), "{e}");
}

#[test]
fn sandbox_level_and_entrant_dir_and_env_are_read_and_checked() {
    let text = r#"name = "sb"
game = "table"
format = "round-robin"
seed = 1
sandbox = "strict"

[[entrants]]
name = "a"
seat = "cmd:java SampleAI"
dir = "bots/a"
env = ["CLASSPATH", "JAVA_OPTS"]

[[entrants]]
name = "b"
seat = "builtin:s1"

[[entrants]]
name = "c"
seat = "builtin:s1"

[[entrants]]
name = "d"
seat = "builtin:s1"
"#;
    let def = ContestDef::parse(text, "t", &lookup).unwrap();
    assert_eq!(def.sandbox.as_deref(), Some("strict"));
    assert_eq!(def.entrants[0].dir.as_deref(), Some("bots/a"));
    assert_eq!(def.entrants[0].env, vec!["CLASSPATH", "JAVA_OPTS"]);
    // A definition without these keys is stored as before (its fingerprint is unchanged).
    let plain = ContestDef::parse(
        &contest_text("ok", "table", "round-robin", 5, "jobs = 2"),
        "t",
        &lookup,
    )
    .unwrap()
    .to_stored();
    for key in ["\"sandbox\"", "\"dir\"", "\"env\""] {
        assert!(!plain.contains(key), "{key} in {plain}");
    }
    let bad_level = text.replace("\"strict\"", "\"paranoid\"");
    assert_names(&err(&bad_level), 5, "sandbox");
    let bad_env = text.replace("\"JAVA_OPTS\"", "\"JAVA OPTS\"");
    assert_names(&err(&bad_env), 11, "entrants[0].env");
    let dir_on_builtin = text.replace(
        "seat = \"builtin:s1\"\n\n[[entrants]]\nname = \"c\"",
        "seat = \"builtin:s1\"\ndir = \"x\"\n\n[[entrants]]\nname = \"c\"",
    );
    assert!(err(&dir_on_builtin).contains("entrants[1].dir"));
}

#[test]
fn cpus_per_bot_is_read_and_checked() {
    let text = |v: &str| {
        contest_text(
            "ok",
            "table",
            "round-robin",
            5,
            &format!("cpus_per_bot = {v}"),
        )
    };
    let def = ContestDef::parse(&text("0.5"), "t", &lookup).unwrap();
    assert_eq!(def.cpu_millis, Some(500));
    assert_eq!(
        ContestDef::parse(&text("2"), "t", &lookup)
            .unwrap()
            .cpu_millis,
        Some(2000)
    );
    assert!(def.to_stored().contains("cpu_millis"));
    for bad in ["0", "-1", "0.0", "nan", "inf", "\"fast\"", "0.001", "2000"] {
        let msg = err(&text(bad));
        assert!(msg.contains("cpus_per_bot"), "{bad}: {msg}");
        assert!(msg.contains("0.01 to 1024"), "{bad}: {msg}");
    }
}
