//! The werewolf commands through the `kakehiki` binary: `serve werewolf` (both protocols) honours
//! or refuses every flag, logs every connection it does not seat and never waits without bound;
//! `play werewolf --json` names the winning seats; `check werewolf` meets every role's requests.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::kakehiki;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `kakehiki serve`, its stderr lines arriving on a channel.
struct Server {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        let mut child = kakehiki()
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let err = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for l in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(l).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// The first stderr line containing `needle`, waiting at most `limit`.
    fn wait_for(&mut self, needle: &str, limit: Duration) -> String {
        let end = Instant::now() + limit;
        loop {
            let left = end.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(needle) {
                        return l;
                    }
                }
                Err(_) => panic!("no stderr line with {needle:?}; seen: {:#?}", self.seen),
            }
        }
    }

    /// Wait for the exit (at most `limit`); the status, stdout and every stderr line.
    fn finish(mut self, limit: Duration) -> (std::process::ExitStatus, String, Vec<String>) {
        let end = Instant::now() + limit;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                let _ = self.child.wait();
                while let Ok(l) = self.lines.try_recv() {
                    self.seen.push(l);
                }
                panic!("serve did not exit within {limit:?}: {:#?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut out = String::new();
        std::io::Read::read_to_string(&mut self.child.stdout.take().unwrap(), &mut out).unwrap();
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(l);
        }
        (status, out, std::mem::take(&mut self.seen))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn serve_nlp_listens_where_the_flags_say_over_the_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let file_port = free_port();
    let cfg = dir.path().join("c.toml");
    std::fs::write(
        &cfg,
        format!("[server.web_socket]\nhost = \"0.0.0.0\"\nport = {file_port}\n[game]\nagent_count = 5\n"),
    )
    .unwrap();
    let port = free_port();
    let p = port.to_string();
    let mut s = Server::start(&[
        "serve",
        "werewolf",
        "--protocol",
        "nlp",
        "--config",
        cfg.to_str().unwrap(),
        "--host",
        "127.0.0.1",
        "--port",
        &p,
        "--players",
        "9",
        "--games",
        "1",
    ]);
    let line = s.wait_for("listening", Duration::from_secs(20));
    assert!(
        line.contains(&format!("ws://127.0.0.1:{port}/ws")) && line.contains("9 players"),
        "{line}"
    );
    TcpStream::connect(("127.0.0.1", port)).expect("serve listens on the --port given");
    assert!(
        TcpStream::connect(("127.0.0.1", file_port)).is_err(),
        "the file's port is overridden"
    );
}

#[test]
fn serve_nlp_without_a_file_takes_the_flags() {
    let port = free_port();
    let p = port.to_string();
    let mut s = Server::start(&[
        "serve",
        "werewolf",
        "--protocol",
        "nlp",
        "--port",
        &p,
        "--players",
        "13",
    ]);
    let line = s.wait_for("listening", Duration::from_secs(20));
    assert!(
        line.contains(&format!("127.0.0.1:{port}")) && line.contains("13 players"),
        "{line}"
    );
    TcpStream::connect(("127.0.0.1", port)).unwrap();
}

#[test]
fn flags_that_cannot_apply_are_errors_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("c.toml");
    std::fs::write(&cfg, "").unwrap();
    let cfg = cfg.to_str().unwrap();
    let port = free_port().to_string();
    for (args, flag) in [
        (
            vec!["werewolf", "--protocol", "nlp", "--rules", "seed-2015"],
            "--rules",
        ),
        (
            vec!["werewolf", "--protocol", "nlp", "--opt", "time_limit_ms=10"],
            "--opt",
        ),
        (
            vec!["werewolf", "--protocol", "nlp", "--number", "a=1"],
            "--number",
        ),
        (vec!["werewolf", "--config", cfg], "--config"),
        (vec!["geister", "--players", "4"], "--players"),
        // A set of no games would wait for ever.
        (vec!["werewolf", "--games", "0"], "--games"),
        (
            vec!["werewolf", "--protocol", "nlp", "--games", "0"],
            "--games",
        ),
    ] {
        let out = kakehiki()
            .arg("serve")
            .args(&args)
            .args(["--port", &port])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted: {err}");
        assert!(err.contains(flag), "{args:?}: {err}");
        assert!(!err.contains("listening"), "{args:?}: {err}");
    }
}

/// An AIWolf 0.6.x agent: answers NAME after `name_delay`, then every request with a legal
/// shape (`Over` for talk, agent 1 for targets) until the server closes.
fn agent(port: u16, name: &str, name_delay: Duration) -> std::thread::JoinHandle<()> {
    let name = name.to_string();
    std::thread::spawn(move || {
        let Ok(stream) = TcpStream::connect(("127.0.0.1", port)) else {
            return;
        };
        let mut w = stream.try_clone().unwrap();
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let v: Value = serde_json::from_str(&line).unwrap_or_default();
            let reply = match v["request"].as_str().unwrap_or("") {
                "NAME" => {
                    std::thread::sleep(name_delay);
                    name.clone()
                }
                "ROLE" => "none".into(),
                "TALK" | "WHISPER" => "Over".into(),
                "VOTE" | "DIVINE" | "GUARD" | "ATTACK" => r#"{"agentIdx":1}"#.into(),
                _ => continue,
            };
            if w.write_all(format!("{reply}\n").as_bytes()).is_err() {
                return;
            }
        }
    })
}

#[test]
fn serve_tcp_seats_a_slow_name_logs_a_silent_one_and_finishes() {
    let mut s = Server::start(&[
        "serve",
        "werewolf",
        "--port",
        "0",
        "--players",
        "3",
        "--games",
        "1",
        "--seed",
        "3",
        "--json",
    ]);
    let line = s.wait_for("listening", Duration::from_secs(20));
    let port: u16 = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    // A connection that never answers NAME, one that answers after 1.5 s (over the 1 s request
    // limit, within NAME's own), and one quick agent.
    let silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let slow = agent(port, "slowname", Duration::from_millis(1500));
    let quick = agent(port, "quick1", Duration::ZERO);
    let dropped = s.wait_for("dropped", Duration::from_secs(15));
    assert!(
        dropped.contains("no NAME reply within 5000 ms"),
        "{dropped}"
    );
    // The third seat, after the silent one was dropped.
    let last = agent(port, "quick2", Duration::ZERO);
    let (status, out, err) = s.finish(Duration::from_secs(60));
    assert!(status.success(), "{status}: {err:#?}");
    let v: Value = serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"));
    let names: Vec<&str> = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    for n in ["slowname", "quick1", "quick2"] {
        assert!(names.contains(&n), "{n} not seated: {v}");
    }
    drop(silent);
    for h in [slow, quick, last] {
        h.join().unwrap();
    }
}

#[test]
fn serve_tcp_gives_up_when_the_set_does_not_fill() {
    let mut s = Server::start(&[
        "serve",
        "werewolf",
        "--port",
        "0",
        "--players",
        "3",
        "--opt",
        "fill_timeout_ms=1500",
    ]);
    let line = s.wait_for("listening", Duration::from_secs(20));
    let port: u16 = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    let a = agent(port, "lonely", Duration::ZERO);
    let (status, _, err) = s.finish(Duration::from_secs(30));
    assert!(!status.success());
    let all = err.join("\n");
    assert!(
        all.contains("gave up after waiting 1.5 s") && all.contains("1 of 3 agents seated: lonely"),
        "{all}"
    );
    a.join().unwrap();
}

#[test]
fn play_werewolf_json_names_the_winning_seats() {
    let mut args = vec!["play", "werewolf", "--seed", "5", "--json"];
    for _ in 0..5 {
        args.extend(["--seat", "builtin:sample"]);
    }
    let out = kakehiki().args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let team = v["winner_team"].as_str().unwrap();
    assert!(
        v["winner"].is_null(),
        "a team game has no single winner: {v}"
    );
    let seats: Vec<usize> = v["winner_seats"]
        .as_array()
        .unwrap_or_else(|| panic!("no winner_seats: {v}"))
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    assert!(!seats.is_empty());
    for (i, seat) in v["seats"].as_array().unwrap().iter().enumerate() {
        assert_eq!(
            seats.contains(&i),
            seat["team"] == team,
            "seat {i} ({}) and winner_team {team}: {v}",
            seat["team"]
        );
        assert_eq!(seats.contains(&i), v["scores"][i] == 1.0, "{v}");
    }
}

#[test]
fn check_werewolf_meets_every_role_request_of_a_well_behaved_bot() {
    let script = format!(
        "{}/../../examples/bots/python/aiwolf_client.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let seat = format!("tcp-cmd:python3 {script} {{host}} {{port}} --name checked");
    let out = kakehiki()
        .args([
            "check", "werewolf", "--seat", &seat, "--seeds", "1", "--json",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    let coverage = v["coverage"].as_array().unwrap_or_else(|| panic!("{v}"));
    for kind in [
        "ROLE", "TALK", "VOTE", "DIVINE", "GUARD", "ATTACK", "WHISPER",
    ] {
        let c = coverage
            .iter()
            .find(|c| c["kind"] == kind)
            .unwrap_or_else(|| panic!("{kind} not in the coverage: {v}"));
        assert!(c["replies"].as_u64().unwrap() > 0, "{kind} never met: {v}");
    }
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|w| !w.as_str().unwrap().contains("never got")));
    // A request of a role the planned matches did not deal the bot got a match of its own,
    // with a seed found by playing the game with built-in agents.
    let matches = v["matches"].as_array().unwrap();
    assert!(
        matches
            .iter()
            .any(|m| m["case"].as_str().unwrap().contains("not met yet"))
            || matches.len() <= 6,
        "{v}"
    );
}

/// An agent that reads one request and exits with status 3 is reported with its own exit status
/// and stderr, over TCP (AIWolf) and over WebSocket (the NLP division), not as the referee's
/// SIGKILL of a forfeited seat.
#[test]
fn an_agent_that_exits_is_reported_with_its_own_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let tcp = dir.path().join("tcp.py");
    std::fs::write(
        &tcp,
        "import socket, sys\ns = socket.create_connection((sys.argv[1], int(sys.argv[2])))\n\
         s.makefile('rb').readline()\nsys.stderr.write('giving up\\n')\nsys.exit(3)\n",
    )
    .unwrap();
    let ws = dir.path().join("ws.py");
    std::fs::write(
        &ws,
        "import sys, socket, base64, os, urllib.parse\n\
         u = urllib.parse.urlparse(sys.argv[1])\n\
         s = socket.create_connection((u.hostname, u.port))\n\
         key = base64.b64encode(os.urandom(16)).decode()\n\
         s.sendall(('GET %s HTTP/1.1\\r\\nHost: %s:%d\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n'\n\
         \x20   'Sec-WebSocket-Key: %s\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n' % (u.path or '/', u.hostname, u.port, key)).encode())\n\
         buf = b''\n\
         while b'\\r\\n\\r\\n' not in buf:\n\
         \x20   buf += s.recv(1)\n\
         s.recv(4096)\nsys.stderr.write('giving up\\n')\nsys.exit(3)\n",
    )
    .unwrap();
    for (game, seat) in [
        (
            "werewolf",
            format!("tcp-cmd:python3 {} {{host}} {{port}}", tcp.display()),
        ),
        (
            "werewolf-nlp",
            format!("ws-cmd:python3 {} {{url}}", ws.display()),
        ),
    ] {
        let out = kakehiki()
            .args(["play", game, "--seat", &seat, "--fill", "builtin:random"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(text.contains("seat 0 ended: exit code 3"), "{game}: {text}");
        assert!(text.contains("| giving up"), "{game}: {text}");
    }
}

/// `--players N` with `--fill` makes a village of N (5 here) rather than the usual 15; a count
/// the game does not allow, or fewer than the seats given, is refused with the range.
#[test]
fn play_werewolf_players_sets_the_village_size() {
    let out = kakehiki()
        .args(["play", "werewolf", "--seed", "5", "--json"])
        .args(["--seat", "builtin:sample", "--fill", "builtin:sample"])
        .args(["--players", "5"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["seats"].as_array().unwrap().len(), 5, "{v}");
    for (players, says) in [
        ("99", "werewolf is played by"),
        ("0", "werewolf is played by"),
    ] {
        let out = kakehiki()
            .args(["play", "werewolf", "--seat", "builtin:sample"])
            .args(["--fill", "builtin:sample", "--players", players])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && err.contains(says),
            "{players}: {err}"
        );
    }
    let out = kakehiki()
        .args(["play", "werewolf", "--players", "5"])
        .args(["--seat", "builtin:sample"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("--fill"), "{err}");
}
