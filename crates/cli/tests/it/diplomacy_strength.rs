//! `kakehiki diplomacy strength`: both setups with every power in turn, the seeds it promises,
//! a summary that agrees with its games, the text table, a process opponent in the sandbox, and
//! clear errors for bad flags.

use std::process::Output;

use serde_json::Value;

use crate::support;

fn kakehiki(args: &[&str]) -> Output {
    support::kakehiki()
        .args(args)
        .output()
        .expect("run kakehiki")
}

fn ok_stdout(out: &Output) -> String {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

const POWERS: [&str; 7] = [
    "AUSTRIA", "ENGLAND", "FRANCE", "GERMANY", "ITALY", "RUSSIA", "TURKEY",
];

#[test]
fn both_setups_rotate_the_powers_and_summarise_their_games() {
    let out = kakehiki(&[
        "diplomacy",
        "strength",
        "--opponent",
        "builtin:hold",
        "--games-per-power",
        "1",
        "--max-year",
        "1903",
        "--seed",
        "40",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&ok_stdout(&out)).expect("one JSON object");
    assert_eq!(v["bot"], "builtin:strong");
    assert_eq!(v["opponent"], "builtin:hold");
    assert_eq!(v["failures"].as_array().map(Vec::len), Some(0));
    let games = v["games"].as_array().expect("games");
    assert_eq!(games.len(), 14, "7 games in each of the two setups");
    for (setup, lone, others) in [
        ("one", "builtin:strong", "builtin:hold"),
        ("six", "builtin:hold", "builtin:strong"),
    ] {
        let mine: Vec<&Value> = games.iter().filter(|g| g["setup"] == setup).collect();
        // Every power once, game k with seed 40 + k.
        let mut powers: Vec<&str> = mine.iter().map(|g| g["power"].as_str().unwrap()).collect();
        powers.sort_unstable();
        assert_eq!(powers, POWERS, "{setup}");
        for g in &mine {
            let k = POWERS
                .iter()
                .position(|p| *p == g["power"].as_str().unwrap())
                .unwrap() as u64;
            assert_eq!(g["seed"].as_u64(), Some(40 + k), "{setup}: {g}");
            assert_eq!(g["end"], "year_limit", "{g}");
        }
        let summary = v["setups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["setup"] == setup)
            .expect("a summary per setup");
        assert_eq!(summary["lone"], lone);
        assert_eq!(summary["others"], others);
        let mean = mine
            .iter()
            .map(|g| g["score"].as_f64().unwrap())
            .sum::<f64>()
            / 7.0;
        let all = &summary["all"];
        assert_eq!(all["games"].as_u64(), Some(7));
        assert!((all["mean_score"].as_f64().unwrap() - mean).abs() < 1e-12);
        for p in POWERS {
            assert_eq!(summary["powers"][p]["games"].as_u64(), Some(1), "{p}");
        }
    }
    // Nobody is eliminated by 1903 against hold bots, so every score is a seventh; `strong`
    // gains centres as the lone seat and the lone `hold` seat never does.
    for g in games {
        assert!(
            (g["score"].as_f64().unwrap() - 1.0 / 7.0).abs() < 1e-12,
            "{g}"
        );
        assert_eq!(g["lone_errors"].as_u64(), Some(0));
    }
    let centres = |setup: &str| -> Vec<u64> {
        games
            .iter()
            .filter(|g| g["setup"] == setup)
            .map(|g| g["centers"].as_u64().unwrap())
            .collect()
    };
    assert!(
        centres("one").iter().all(|&c| c >= 4),
        "{:?}",
        centres("one")
    );
    assert!(
        centres("six").iter().all(|&c| c <= 4),
        "{:?}",
        centres("six")
    );
}

#[test]
fn the_table_has_a_row_per_power_and_a_total() {
    let out = kakehiki(&[
        "diplomacy",
        "strength",
        "--opponent",
        "builtin:random",
        "--setup",
        "one",
        "--games-per-power",
        "1",
        "--max-year",
        "1902",
    ]);
    let text = ok_stdout(&out);
    assert!(
        text.starts_with(
            "one-vs-six: one builtin:strong against six builtin:random, 7 games, to 1902\n"
        ),
        "{text}"
    );
    assert!(!text.contains("six-vs-one"), "{text}");
    for p in POWERS {
        assert!(
            text.lines()
                .any(|l| l.trim_start().starts_with(p) && l.contains(" 1 ")),
            "a row for {p}: {text}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("all") && l.contains(" 7 ")),
        "{text}"
    );
    // One progress line per game on stderr, in the game's own terms.
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.lines().filter(|l| l.contains("one-vs-six")).count(),
        7,
        "{err}"
    );
}

#[test]
fn a_process_opponent_plays_in_the_sandbox() {
    let bot = format!(
        "cmd:python3 {}/../../examples/bots/python/diplomacy_bot.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let out = kakehiki(&[
        "diplomacy",
        "strength",
        "--opponent",
        &bot,
        "--setup",
        "six",
        "--games-per-power",
        "1",
        "--max-year",
        "1901",
        "--json",
    ]);
    let v: Value = serde_json::from_str(&ok_stdout(&out)).expect("one JSON object");
    let games = v["games"].as_array().expect("games");
    assert_eq!(games.len(), 7);
    for g in games {
        assert_eq!(g["setup"], "six");
        assert_eq!(
            g["lone_errors"].as_u64(),
            Some(0),
            "the example bot plays: {g}"
        );
        assert_eq!(g["others_errors"].as_u64(), Some(0), "{g}");
    }
    assert_eq!(v["setups"][0]["lone"], bot.as_str());
}

#[test]
fn bad_flags_get_clear_errors() {
    let out = kakehiki(&[
        "diplomacy",
        "strength",
        "--opponent",
        "builtin:hold",
        "--games-per-power",
        "0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--games-per-power"), "{err}");
    let out = kakehiki(&["diplomacy", "strength", "--opponent", "nonsense:x"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--opponent") && err.contains("nonsense"),
        "{err}"
    );
    let out = kakehiki(&[
        "diplomacy",
        "strength",
        "--opponent",
        "builtin:hold",
        "--max-year",
        "1900",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-year"));
    // An unknown built-in bot is refused before any game is played.
    let out = kakehiki(&[
        "diplomacy",
        "strength",
        "--opponent",
        "builtin:nosuchbot",
        "--games-per-power",
        "1",
    ]);
    assert_ne!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nosuchbot"), "{err}");
}
