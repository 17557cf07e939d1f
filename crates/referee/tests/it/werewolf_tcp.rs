//! Werewolf over TCP with real client processes: a Python client written from the spec
//! (`examples/bots/python/aiwolf_client.py`, standard library only) plays a single match through
//! `tcp-cmd:` seats and a 10-game set through the server mode, with misbehaving agents among them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kakehiki_agent::{ClientProcess, SandboxConfig};
use kakehiki_core::SeatSpec;
use kakehiki_referee::games::werewolf::server::{serve_set, SetConfig};
use kakehiki_referee::games::werewolf::{ErrorRecord, TimingRecord, WEREWOLF};
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{GameDriver, MatchSpec};
use tokio::net::TcpListener;

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/bots/python/aiwolf_client.py")
}

fn python() -> Option<String> {
    std::process::Command::new("python3")
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    Some("python3".into())
}

fn read_jsonl<T: serde::de::DeserializeOwned>(path: &std::path::Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}: {l}", path.display())))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifteen_python_clients_play_a_match_through_tcp_cmd_seats() {
    let Some(py) = python() else {
        eprintln!("python3 not found: skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = client_script();
    let seats: Vec<SeatSpec> = (1..=15)
        .map(|i| {
            let mode = match i {
                3 => "garbage",
                5 => "spaced",
                _ => "normal",
            };
            format!(
                "tcp-cmd:{py} {} {{host}} {{port}} --name py{i:02} --mode {mode}",
                script.display()
            )
            .parse()
            .unwrap()
        })
        .collect();
    let mut spec = MatchSpec::new("werewolf", 77, seats);
    spec.options
        .insert("log_dir".into(), dir.path().display().to_string());
    let record = WEREWOLF.play(&spec).await.unwrap();
    let r = &record.report;
    let team = r.extra["winner_team"].as_str().unwrap();
    assert!(team == "VILLAGER" || team == "WEREWOLF");
    for (i, s) in r.seats.iter().enumerate() {
        assert_eq!(s.extra["name"], format!("py{:02}", i + 1));
        let role = s.extra["role"].as_str().unwrap();
        let won = r.scores[i] == 1.0;
        assert_eq!(won, s.extra["team"] == team, "seat {i} ({role})");
        if i != 2 {
            assert!(
                s.errors.iter().all(|e| !matches!(
                    e.kind.as_str(),
                    "disconnect" | "crash" | "invalid_reply" | "not_ready"
                )),
                "seat {i}: {:?}",
                s.errors
            );
        }
    }
    assert!(
        r.seats[2]
            .errors
            .iter()
            .any(|e| e.kind.as_str() == "invalid_reply"),
        "garbage replies are recorded: {:?}",
        r.seats[2].errors
    );
    let log = std::fs::read_to_string(dir.path().join("000.log")).unwrap();
    let last = log.lines().last().unwrap();
    assert!(last.contains(",result,") && last.ends_with(team), "{last}");
    assert!(log.lines().any(|l| l
        == "0,status,1,".to_string() + r.seats[0].extra["role"].as_str().unwrap() + ",ALIVE,py01"));
    let timings: Vec<TimingRecord> = read_jsonl(&dir.path().join("timings.jsonl"));
    assert!(timings.len() > 100);
    // The replay re-runs to the same bytes.
    verify_replay(&record.replay.to_text()).unwrap();
}

fn spawn_clients(py: &str, port: u16, modes: &[&str]) -> Vec<ClientProcess> {
    let script = client_script();
    modes
        .iter()
        .enumerate()
        .map(|(i, mode)| {
            let argv: Vec<String> = vec![
                py.into(),
                script.display().to_string(),
                "127.0.0.1".into(),
                port.to_string(),
                "--name".into(),
                format!("{mode}{i:02}"),
                "--mode".into(),
                mode.to_string(),
            ];
            // The sandbox lets a client connect to the server's port only.
            let mut cfg = SandboxConfig::default();
            cfg.jail.tcp_connect = vec![port];
            ClientProcess::spawn(&argv, &cfg).unwrap()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_game_set_completes_with_misbehaving_agents() {
    let Some(py) = python() else {
        eprintln!("python3 not found: skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mut modes = vec!["normal"; 9];
    modes.extend([
        "silent",
        "slow",
        "disconnect",
        "garbage",
        "spaced",
        "chatty",
    ]);
    let clients = spawn_clients(&py, port, &modes);
    let set = SetConfig {
        players: 15,
        games: 10,
        run_seed: 2024,
        rules: None,
        options: BTreeMap::new(),
        out_dir: Some(dir.path().to_path_buf()),
        numbers: BTreeMap::new(),
    };
    let result = serve_set(listener, &set).await.unwrap();
    drop(clients);
    assert_eq!(result.games.len(), 10);
    assert_eq!(result.standings.games, 10);
    assert_eq!(
        result.standings.villager_wins + result.standings.werewolf_wins,
        10
    );
    for g in 0..10 {
        let log = std::fs::read_to_string(dir.path().join(format!("{g:03}.log"))).unwrap();
        assert!(
            log.lines().last().unwrap().contains(",result,"),
            "game {g} finished"
        );
    }
    let errors: Vec<ErrorRecord> = read_jsonl(&dir.path().join("errors.jsonl"));
    let kinds_of = |prefix: &str| -> Vec<String> {
        let mut k: Vec<String> = errors
            .iter()
            .filter(|e| e.name.starts_with(prefix))
            .map(|e| e.kind.clone())
            .collect();
        k.sort();
        k.dedup();
        k
    };
    assert!(
        kinds_of("silent").contains(&"timeout".to_string()),
        "{:?}",
        kinds_of("silent")
    );
    let slow = kinds_of("slow");
    assert!(
        slow.contains(&"timeout".to_string()) && slow.contains(&"late_line".to_string()),
        "{slow:?}"
    );
    assert!(kinds_of("disconnect").contains(&"disconnect".to_string()));
    assert!(kinds_of("garbage").contains(&"invalid".to_string()));
    assert!(kinds_of("chatty").contains(&"unsolicited".to_string()));
    assert!(
        !kinds_of("spaced").contains(&"invalid".to_string()),
        "{{\"agentIdx\": 3}} is accepted"
    );
    for name in (0..9).map(|i| format!("normal{i:02}")) {
        let a = result.standings.agent(&name).unwrap();
        assert_eq!(a.games, 10);
        assert!(
            errors.iter().all(|e| e.name != name || e.kind == "slow"),
            "{name}: {:?}",
            errors.iter().filter(|e| e.name == name).collect::<Vec<_>>()
        );
    }
    // Timeouts silence an agent for one game only: the slow agent is asked again every game.
    let timings: Vec<TimingRecord> = read_jsonl(&dir.path().join("timings.jsonl"));
    let slow_timeouts = timings
        .iter()
        .filter(|t| t.name.starts_with("slow") && t.outcome == "timeout")
        .count();
    assert_eq!(slow_timeouts, 10);
    assert!(
        dir.path().join("results.json").exists() && dir.path().join("results_agents.csv").exists()
    );
    // Every game of the set has a replay that re-runs byte for byte.
    for g in [0, 9] {
        let text =
            std::fs::read_to_string(dir.path().join(format!("{g:03}.replay.jsonl"))).unwrap();
        verify_replay(&text).unwrap_or_else(|e| panic!("game {g}: {e}"));
    }
}

/// Five seats: `first` at seat 0, built-in sample agents on the rest.
fn with_samples(first: &str) -> MatchSpec {
    let mut seats: Vec<SeatSpec> = vec!["builtin:sample".parse().unwrap(); 5];
    seats[0] = first.parse().unwrap();
    MatchSpec::new("werewolf", 11, seats)
}

/// The `seat_end` line of `seat` in a replay.
fn seat_end(replay: &str, seat: u64) -> serde_json::Value {
    replay
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["event"] == "seat_end" && v["seat"] == seat)
        .unwrap_or_else(|| panic!("no seat_end of seat {seat}: {replay}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_cmd_agent_that_exits_at_once_is_seen_within_a_second_with_its_exit_code_and_stderr()
{
    let spec = with_samples("tcp-cmd:sh -c 'echo \"agent: no model file\" >&2; exit 3'");
    let start = std::time::Instant::now();
    let record = WEREWOLF.play(&spec).await.unwrap();
    let took = start.elapsed();
    // The connect limit is 10 s; the exit is seen within 50 ms of it (the game itself and the
    // process start take the rest).
    assert!(took < std::time::Duration::from_secs(4), "{took:?}");
    let s = &record.report.seats[0];
    assert_eq!(s.errors[0].kind.as_str(), "not_ready", "{:?}", s.errors);
    assert!(
        s.errors[0].detail.contains("exited before connecting")
            && s.errors[0].detail.contains("exit code 3")
            // Where it should have connected, and that its command line never told it.
            && s.errors[0].detail.contains(", where this seat listened (its command line has no {host} {port}, so your bot was never told where to connect: add it, as in tcp-cmd:./bot {host} {port})"),
        "{:?}",
        s.errors
    );
    assert!(
        s.extra["exit"].as_str().unwrap().contains("exit code 3"),
        "{s:?}"
    );
    assert!(
        s.extra["stderr"]
            .as_str()
            .unwrap()
            .contains("agent: no model file"),
        "{s:?}"
    );
    let replay = record.replay.to_text();
    let end = seat_end(&replay, 0);
    assert_eq!(end["exit_code"], 3, "{end}");
    assert!(
        end["stderr"]
            .as_str()
            .unwrap()
            .contains("agent: no model file"),
        "{end}"
    );
    verify_replay(&replay).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_that_dies_mid_game_leaves_its_exit_and_stderr_in_the_report_and_replay() {
    // Connects, gives its name, says why on stderr and exits with 5 at its first request.
    let spec = with_samples(
        "tcp-cmd:bash -c 'exec 3<>/dev/tcp/{host}/{port}; read -r l <&3; echo dier >&3; \
         read -r l <&3; echo \"dier: out of ideas\" >&2; exit 5'",
    );
    let record = WEREWOLF.play(&spec).await.unwrap();
    let s = &record.report.seats[0];
    assert_eq!(s.extra["name"], "dier");
    assert!(
        s.errors.iter().any(|e| e.kind.as_str() == "crash"
            && e.detail.contains("exit code 5")
            && e.at.starts_with("day 0")),
        "{:?}",
        s.errors
    );
    assert!(
        s.extra["exit"].as_str().unwrap().contains("exit code 5"),
        "{s:?}"
    );
    assert!(
        s.extra["stderr"]
            .as_str()
            .unwrap()
            .contains("dier: out of ideas"),
        "{s:?}"
    );
    let replay = record.replay.to_text();
    let end = seat_end(&replay, 0);
    assert_eq!(end["exit_code"], 5, "{end}");
    assert!(
        end["stderr"]
            .as_str()
            .unwrap()
            .contains("dier: out of ideas"),
        "{end}"
    );
    assert_eq!(s.extra["counts"]["disconnects"], 1, "{s:?}");
    verify_replay(&replay).unwrap();
}

/// The beginner's mistake of issue 38: a client that answers every packet, "ok" to those that
/// ask for no reply. Its first error names the packet it answered (INITIALIZE), where (day 0),
/// and the fix; every later stray line names its own packet; its replies are still its own (the
/// strays are not taken for them); a re-run of the replay says the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_answers_every_packet_is_told_which_packet_and_the_fix() {
    let Some(py) = python() else {
        eprintln!("python3 not found: skipping");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("reply_all.py");
    std::fs::write(
        &script,
        r#"import json, socket, sys
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
f = s.makefile("rwb")
me, n = None, 5
for line in f:
    p = json.loads(line)
    req = p["request"]
    if p.get("gameInfo"):
        me = p["gameInfo"]["agent"]
        n = len(p["gameInfo"]["statusMap"])
    if req == "NAME":
        out = "zoo"
    elif req == "ROLE":
        out = "none"
    elif req in ("TALK", "WHISPER"):
        out = "Over"
    elif req in ("VOTE", "DIVINE", "GUARD", "ATTACK"):
        out = '{"agentIdx":%d}' % (me % n + 1)
    elif req == "FINISH":
        break
    else:
        out = "ok"
    f.write((out + "\n").encode())
    f.flush()
"#,
    )
    .unwrap();
    let spec = with_samples(&format!(
        "tcp-cmd:{py} {} {{host}} {{port}}",
        script.display()
    ));
    let record = WEREWOLF.play(&spec).await.unwrap();
    let errors = &record.report.seats[0].errors;
    let lines: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}: {}", e.at, e.kind.as_str(), e.detail))
        .collect();
    assert_eq!(
        lines.first().map(String::as_str),
        Some(
            "day 0: unsolicited_output: your bot replied \"ok\" to INITIALIZE, which asks for no \
             reply (only NAME, ROLE, TALK, WHISPER, VOTE, ATTACK, DIVINE and GUARD do); every \
             later reply is one behind: reply only to those requests"
        ),
        "{lines:#?}"
    );
    assert_eq!(
        lines.get(1).map(String::as_str),
        Some(
            "day 0: unsolicited_output: your bot replied \"ok\" to DAILY_INITIALIZE, which asks \
             for no reply: discarded"
        ),
        "{lines:#?}"
    );
    // Every stray line is its answer to a packet that asks for no reply, named as such.
    let stray: Vec<&String> = lines
        .iter()
        .filter(|l| l.contains("unsolicited_output"))
        .collect();
    assert!(stray.len() >= 3, "{lines:#?}");
    assert!(
        stray.iter().skip(1).all(|l| {
            ["DAILY_INITIALIZE", "DAILY_FINISH", "FINISH"]
                .iter()
                .any(|k| {
                    l.ends_with(&format!(
                        "replied \"ok\" to {k}, which asks for no reply: discarded"
                    ))
                })
        }),
        "{lines:#?}"
    );
    // Its talk is its own: no "ok" was taken for a TALK reply.
    assert!(
        !lines.iter().any(|l| l.contains("TALK reply")),
        "{lines:#?}"
    );
    // The replay re-runs to the same bytes, and to the same errors.
    let rerun = verify_replay(&record.replay.to_text()).unwrap();
    assert_eq!(&rerun.report.seats[0].errors, errors);
}
