//! `kakehiki` takes its whole open-files hard limit at start, and `contest run --jobs N` stops
//! before starting when the limit cannot cover N matches, naming the numbers and the fix.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{bin, text};

/// A NAC round robin of four built-ins: four seats a match.
fn contest(dir: &Path) -> PathBuf {
    let mut text =
        String::from("name = \"fd\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 5\n");
    for (i, bot) in ["random", "random", "strong", "random"].iter().enumerate() {
        text.push_str(&format!(
            "\n[[entrants]]\nname = \"b{i}\"\nseat = \"builtin:{bot}\"\n"
        ));
    }
    let path = dir.join("fd.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `contest run --jobs 8` under `ulimit -Sn soft -Hn hard`.
fn run(dir: &Path, soft: u32, hard: u32, db: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -Sn {soft} && ulimit -Hn {hard} && exec \"$@\""
        ))
        .arg("sh")
        .arg(bin())
        .args(["contest", "run"])
        .arg(contest(dir))
        .arg("--db")
        .arg(dir.join(db))
        .args(["--jobs", "8", "--quiet", "--no-standings"])
        .output()
        .unwrap()
}

#[test]
fn jobs_beyond_the_descriptor_budget_stop_before_starting_with_the_numbers() {
    let dir = tempfile::tempdir().unwrap();
    // 8 matches of 4 seats: 64 + 8 × 4 × 24 = 832 descriptors.
    let out = run(dir.path(), 300, 300, "low.sqlite");
    let msg = text(&out);
    assert_eq!(out.status.code(), Some(1), "{msg}");
    assert!(msg.contains("8 matches at once of 4 seats"), "{msg}");
    assert!(msg.contains("up to 832 open file descriptors"), "{msg}");
    assert!(msg.contains("may open only 300"), "{msg}");
    assert!(msg.contains("ulimit -Hn 832"), "{msg}");
    assert!(msg.contains("fewer --jobs"), "{msg}");
    assert!(!dir.path().join("low.sqlite").exists(), "nothing started");
}

#[test]
fn the_soft_limit_is_raised_to_the_hard_one_at_start() {
    let dir = tempfile::tempdir().unwrap();
    // A soft limit of 300 under a hard one of 900: enough once raised.
    let out = run(dir.path(), 300, 900, "ok.sqlite");
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("contest complete"), "{}", text(&out));
}
