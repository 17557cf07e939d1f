//! `serve diplomacy --protocol daide`: a game with the seven DAIDE clients that connect, its
//! summary line, and a replay that `kakehiki replay` verifies.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::support::kakehiki;

#[test]
fn serve_diplomacy_daide_plays_a_game_with_the_clients_that_connect() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut server = kakehiki()
        .args(["serve", "diplomacy", "--protocol", "daide", "--games", "1"])
        .args(["--port", &port.to_string(), "--seed", "5"])
        .args(["--opt", "max_year=1901", "--opt", "connect_ms=30000"])
        .arg("--out")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(server.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    assert!(
        line.starts_with(&format!(
            "diplomacy (daide): game 1 (seed 6): listening on 127.0.0.1:{port}"
        )),
        "{line}"
    );
    let bot = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../referee/tests/diplomacy_bots/daide_bot.py");
    let clients: Vec<_> = (0..7)
        .map(|i| {
            // One at a time, so that the seats are taken in this order.
            std::thread::sleep(std::time::Duration::from_millis(100));
            Command::new("python3")
                .arg(&bot)
                .args(["127.0.0.1", &port.to_string(), &format!("client{i}")])
                .spawn()
                .unwrap()
        })
        .collect();
    for mut c in clients {
        assert!(c.wait().unwrap().success(), "a client left on OFF");
    }
    let out = server.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let summary = String::from_utf8_lossy(&out.stdout);
    assert!(
        summary.starts_with("game 1 seed 6: year_limit; centres AUS "),
        "{summary}"
    );
    let replay = dir.path().join("game-000001.jsonl");
    let text = std::fs::read_to_string(&replay).unwrap();
    assert!(text.contains("'client0'") && text.contains("'client6'"));
    let check = kakehiki().arg("replay").arg(&replay).output().unwrap();
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("byte for byte"),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn serve_diplomacy_needs_the_daide_protocol() {
    let out = kakehiki()
        .args(["serve", "diplomacy", "--games", "1"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--protocol daide"));
}
