//! `serve geister` without `--seed` draws a random run seed, prints it and records it beside
//! the replays, and the games are seeded from it; with `--seed` that seed is used.

use std::io::{BufRead, BufReader, Read};
use std::net::TcpStream;
use std::process::Stdio;

use crate::support::kakehiki;

/// Serves one game between two clients that leave at once; returns the printed run seed, the
/// recorded one and the game's summary line.
fn serve_one(extra: &[&str]) -> (u64, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let mut child = kakehiki()
        .args(["serve", "geister", "--port", "0", "--games", "1"])
        .args(["--opt", "pace_ms=0", "--opt", "linger_ms=0"])
        .arg("--out")
        .arg(dir.path())
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let rest = line
        .strip_prefix("geister: listening on ")
        .unwrap_or_else(|| panic!("{line}"));
    let (a0, rest) = rest.split_once(" (seat 0) and ").unwrap();
    let (a1, _) = rest.split_once(" (seat 1)").unwrap();
    let seed: u64 = line
        .split_once("run seed ")
        .unwrap_or_else(|| panic!("no run seed printed: {line}"))
        .1
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // Both seats connected (a game starts only then), each client leaves after its SET?.
    let clients: Vec<TcpStream> = [a0, a1]
        .into_iter()
        .map(|a| TcpStream::connect(a).unwrap())
        .collect();
    for mut s in clients {
        s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        let mut b = [0u8; 1];
        let _ = s.read(&mut b);
    }
    let mut rest_err = String::new();
    let _ = err.read_to_string(&mut rest_err);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{rest_err}");
    let recorded = std::fs::read_to_string(dir.path().join("run-seed.txt")).expect("run-seed.txt");
    (
        seed,
        recorded,
        String::from_utf8_lossy(&out.stdout).to_string(),
    )
}

#[test]
fn serve_geister_without_seed_draws_records_and_uses_a_random_seed() {
    let (seed, recorded, games) = serve_one(&[]);
    assert_eq!(recorded, format!("{seed}\n"));
    assert!(
        games.starts_with(&format!("game 1 seed {}: ", seed.wrapping_add(1))),
        "{games}"
    );
    let (seed2, _, _) = serve_one(&[]);
    assert_ne!(seed, seed2, "two runs without --seed drew the same seed");
    assert!(seed != 0 && seed2 != 0);
}

#[test]
fn serve_geister_with_seed_uses_and_records_it() {
    let (seed, recorded, games) = serve_one(&["--seed", "70"]);
    assert_eq!((seed, recorded.as_str()), (70, "70\n"));
    assert!(games.starts_with("game 1 seed 71: "), "{games}");
}
