//! `kakehiki demo`: the Diplomacy and natural-language Werewolf demo contests run, are stored,
//! give a result (not seven equal draws), and the demo ends with the command that shows them in
//! the browser.

use std::path::Path;

use serde_json::Value;

use crate::support::{kakehiki, repo};

fn standings(db: &Path, contest: &str) -> Value {
    let out = kakehiki()
        .args(["contest", "standings", contest, "--format", "json", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "standings of {contest}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn demo_diplomacy_has_a_result_and_the_nlp_division_is_played_and_stored() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("demo-out");
    let out = kakehiki()
        .current_dir(repo())
        .args([
            "demo",
            "--game",
            "diplomacy",
            "--game",
            "werewolf-nlp",
            "--out",
        ])
        .arg(&out_dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let db = out_dir.join("demo.sqlite");

    // Diplomacy: centres decide, so the entrants do not all score the same.
    let dip = standings(&db, "demo-diplomacy");
    assert_eq!(dip["complete"], true, "{dip}");
    let points: Vec<f64> = dip["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["mean_points"].as_f64().unwrap())
        .collect();
    assert_eq!(points.len(), 7, "{dip}");
    assert!(
        points.iter().any(|p| (p - points[0]).abs() > 1e-9),
        "every Diplomacy entrant scored the same: {points:?}"
    );
    let top = dip["rows"][0]["entrant"].as_str().unwrap();
    assert!(top.starts_with("strong"), "a strong bot leads: {dip}");

    // The natural-language division: played with the Python starter over WebSocket, stored.
    let nlp = standings(&db, "demo-werewolf-nlp");
    assert_eq!(nlp["complete"], true, "{nlp}");
    assert_eq!(nlp["matches_stored"], 10, "{nlp}");
    let starter = nlp["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["entrant"] == "python-starter")
        .unwrap_or_else(|| panic!("no python-starter: {nlp}"));
    assert_eq!(starter["games"], 10, "{starter}");
    assert_eq!(starter["seat_errors"], 0, "{starter}");
    let replays = out_dir.join("replays/demo-werewolf-nlp");
    assert_eq!(std::fs::read_dir(&replays).unwrap().count(), 10);

    // It ends with the command that opens the results in the browser.
    let lines: Vec<&str> = stdout.lines().collect();
    let last = lines.last().copied().unwrap_or("");
    assert!(
        last.trim_start()
            .ends_with(&format!("web --db {}", db.display())),
        "{stdout}"
    );
    assert!(
        lines[lines.len() - 2].contains("http://127.0.0.1:8080/"),
        "{stdout}"
    );
    assert!(stdout.contains("http://127.0.0.1:8080/contests/demo-diplomacy"));
    assert!(stdout.contains("demo played in "), "{stdout}");
}

#[test]
fn demo_refuses_an_unknown_game() {
    let out = kakehiki()
        .current_dir(repo())
        .args(["demo", "--game", "chess", "--out"])
        .arg(tempfile::tempdir().unwrap().path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--game \"chess\": no such game") && err.contains("werewolf-nlp"),
        "{err}"
    );
}
