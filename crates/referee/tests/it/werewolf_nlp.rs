//! `werewolf-nlp` over WebSocket on loopback: built-in agents, Rust clients, agents written on
//! the agents' own library `aiwolf-nlp-common` (PyPI), faults, replays, authentication.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use serde_json::Value;
use tokio_tungstenite::tungstenite::Message;

use kakehiki_core::SeatSpec;
use kakehiki_referee::driver::{MatchRecord, MatchSpec};
use kakehiki_referee::find_game;
use kakehiki_referee::seat::ws::sign_player_token;
use kakehiki_referee::verify::verify_replay;

use crate::support::Listening;

fn spec(seats: &[&str], seed: u64, opts: &[(&str, String)]) -> MatchSpec {
    let mut s = MatchSpec::new(
        "werewolf-nlp",
        seed,
        seats
            .iter()
            .map(|x| x.parse::<SeatSpec>().unwrap())
            .collect(),
    );
    s.options = opts
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect::<BTreeMap<_, _>>();
    s
}

async fn play(spec: &MatchSpec) -> MatchRecord {
    find_game("werewolf-nlp").unwrap().play(spec).await.unwrap()
}

fn end(rec: &MatchRecord) -> Value {
    let last = rec.replay.lines().last().unwrap();
    serde_json::from_str(last).unwrap()
}

#[tokio::test]
async fn builtin_games_of_5_9_13_complete_and_replay() {
    for n in [5usize, 9, 13] {
        let seats: Vec<&str> = (0..n)
            .map(|i| {
                [
                    "builtin:sample",
                    "builtin:random-en",
                    "builtin:sample-en",
                    "builtin:random",
                ][i % 4]
            })
            .collect();
        let rec = play(&spec(&seats, 11 + n as u64, &[])).await;
        let e = end(&rec);
        assert!(e["winner"].is_string(), "{n}: {e}");
        assert_eq!(rec.report.seats.len(), n);
        verify_replay(&rec.replay.to_text()).unwrap();
    }
}

#[tokio::test]
async fn unknown_builtin_and_cmd_seats_are_rejected_clearly() {
    let e = find_game("werewolf-nlp")
        .unwrap()
        .play(&spec(
            &[
                "builtin:strong",
                "builtin:sample",
                "builtin:sample",
                "builtin:sample",
                "builtin:sample",
            ],
            1,
            &[],
        ))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("unknown built-in bot"), "{e}");
    let e = find_game("werewolf-nlp")
        .unwrap()
        .play(&spec(
            &[
                "cmd:true",
                "builtin:sample",
                "builtin:sample",
                "builtin:sample",
                "builtin:sample",
            ],
            1,
            &[],
        ))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("WebSocket"), "{e}");
    let e = find_game("werewolf-nlp")
        .unwrap()
        .play(&spec(&["builtin:sample"; 7], 1, &[]))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("role table"), "{e}");
}

/// How a scripted Rust client behaves.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Play,
    /// Never answers after INITIALIZE, but passes the NAME check.
    Silent,
    /// Closes the connection at the first TALK.
    Quit,
    /// Names agents that do not exist.
    Nonsense,
    /// Answers every notification too (a reply no request asked for).
    Chatty,
    /// Talks far past the length limits.
    Verbose,
}

/// A Rust agent: returns every packet it received.
/// The WebSocket URL of a match's listener, once the referee has bound it (port 0).
async fn ws_url(port: Listening) -> String {
    let port = tokio::task::spawn_blocking(move || port.port())
        .await
        .unwrap();
    format!("ws://127.0.0.1:{port}/ws")
}

async fn client(port: Listening, name: String, mode: Mode, token: Option<String>) -> Vec<Value> {
    client_telling(port, name, mode, token, None).await
}

/// [`client`], saying on `connected` when its connection is made.
async fn client_telling(
    port: Listening,
    name: String,
    mode: Mode,
    token: Option<String>,
    connected: Option<tokio::sync::oneshot::Sender<()>>,
) -> Vec<Value> {
    let url = ws_url(port).await;
    let mut req = url.clone();
    if let Some(t) = token {
        req = format!("{url}?token={t}");
    }
    let (mut ws, _) = loop {
        match tokio_tungstenite::connect_async(req.as_str()).await {
            Ok(c) => break c,
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    if let Some(tx) = connected {
        let _ = tx.send(());
    }
    let mut got = Vec::new();
    while let Some(Ok(m)) = ws.next().await {
        let Message::Text(t) = m else { continue };
        let p: Value = serde_json::from_str(&t).unwrap();
        let kind = p["request"].as_str().unwrap().to_string();
        got.push(p.clone());
        let alive: Vec<String> = p["info"]["status_map"]
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, v)| {
                        *v == "ALIVE" && Some(k.as_str()) != p["info"]["agent"].as_str()
                    })
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        let answer = match kind.as_str() {
            "NAME" => Some(name.clone()),
            _ if mode == Mode::Silent && got.len() > 2 => None,
            "TALK" if mode == Mode::Quit => break,
            "TALK" if mode == Mode::Verbose => Some("blah ".repeat(200)),
            "TALK" | "WHISPER" => Some("Over".into()),
            "VOTE" | "DIVINE" | "GUARD" | "ATTACK" if mode == Mode::Nonsense => {
                Some("Agent[77]".into())
            }
            "VOTE" | "DIVINE" | "GUARD" | "ATTACK" => alive.first().cloned(),
            _ if mode == Mode::Chatty => Some("unasked".into()),
            _ => None,
        };
        if let Some(a) = answer {
            if ws.send(Message::Text(a)).await.is_err() {
                break;
            }
        }
    }
    got
}

async fn ws_game(
    modes: &[Mode],
    builtins: usize,
    seed: u64,
    extra: &[(&str, String)],
) -> (MatchRecord, Vec<Vec<Value>>) {
    let port = Listening::new();
    let mut seats: Vec<&str> = vec!["ws"; modes.len()];
    seats.extend(std::iter::repeat_n("builtin:sample", builtins));
    let mut opts = vec![
        ("port", "0".to_string()),
        ("action_ms", "300".to_string()),
        ("response_ms", "300".to_string()),
        ("acceptable_ms", "0".to_string()),
    ];
    opts.extend(extra.iter().cloned());
    let mut s = spec(&seats, seed, &opts);
    s.on_listen = port.notice();
    // Connect one at a time so seat order is client order.
    let modes = modes.to_vec();
    let clients = tokio::spawn(async move {
        let mut handles = Vec::new();
        for (i, m) in modes.into_iter().enumerate() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            let name = format!("rusty{}", i + 1);
            handles.push(tokio::spawn(client_telling(port, name, m, None, Some(tx))));
            let _ = rx.await;
        }
        handles
    });
    let rec = play(&s).await;
    let mut got = Vec::new();
    for h in clients.await.unwrap() {
        got.push(h.await.unwrap());
    }
    (rec, got)
}

#[tokio::test]
async fn websocket_agents_play_whole_games_mixed_with_builtins() {
    let (rec, got) = ws_game(&[Mode::Play, Mode::Play], 3, 5, &[]).await;
    assert!(end(&rec)["winner"].is_string());
    // The seat of an agent that connects on its own is named `ws`.
    assert_eq!(rec.report.seats[0].spec, "ws");
    assert_eq!(rec.report.seats[2].spec, "builtin:sample");
    assert!(
        rec.report.seats.iter().all(|s| s.errors.is_empty()),
        "{:?}",
        rec.report.seats
    );
    for g in &got {
        assert_eq!(g[0]["request"], "NAME");
        assert_eq!(g[1]["request"], "INITIALIZE");
        assert!(g[1]["setting"]["role_num_map"]["WEREWOLF"] == 1);
        // game_id is a ULID (26 Crockford base-32 characters, the first at most 7): the
        // upstream sample agent parses it and stops at anything else.
        let id = g[1]["info"]["game_id"].as_str().unwrap();
        assert_eq!(id.len(), 26, "{id}");
        assert!(
            id.chars()
                .all(|c| "0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(c))
                && id <= "8",
            "{id}"
        );
        assert_eq!(g.last().unwrap()["request"], "FINISH");
        assert_eq!(
            g.last().unwrap()["info"]["role_map"]
                .as_object()
                .unwrap()
                .len(),
            5
        );
    }
    verify_replay(&rec.replay.to_text()).unwrap();
}

#[tokio::test]
async fn tcp_is_an_alias_of_the_ws_seat() {
    let port = Listening::new();
    let mut s = spec(
        &[
            "tcp",
            "builtin:sample",
            "builtin:sample",
            "builtin:random",
            "builtin:sample-en",
        ],
        6,
        &[("port", "0".into())],
    );
    s.on_listen = port.notice();
    assert_eq!(s.seats[0], "ws".parse::<SeatSpec>().unwrap());
    let agent = tokio::spawn(client(port, "alias1".into(), Mode::Play, None));
    let rec = play(&s).await;
    assert!(end(&rec)["winner"].is_string(), "{}", end(&rec));
    assert_eq!(rec.report.seats[0].spec, "ws");
    assert!(
        rec.report.seats[0].errors.is_empty(),
        "{:?}",
        rec.report.seats[0]
    );
    assert_eq!(agent.await.unwrap().last().unwrap()["request"], "FINISH");
}

#[tokio::test]
async fn a_silent_agent_times_out_but_stays_and_the_game_ends() {
    let (rec, _) = ws_game(&[Mode::Silent], 12, 8, &[]).await;
    let e = end(&rec);
    let errs = &rec.report.seats[0].errors;
    assert!(
        !errs.is_empty() && errs.iter().all(|x| x.kind.as_str() == "timeout"),
        "{errs:?}"
    );
    assert_eq!(
        e["errors"][0], false,
        "a timeout answered by the NAME check is not an error state"
    );
    assert!(e["winner"].is_string());
}

/// By default an agent in error forfeits its own seat: it scores 0 and the game plays on.
#[tokio::test]
async fn a_disconnected_agent_forfeits_its_seat_and_the_five_player_game_is_scored() {
    let (rec, _) = ws_game(&[Mode::Quit], 4, 9, &[]).await;
    let e = end(&rec);
    assert_eq!(e["aborted"], false);
    assert_eq!(e["errors"][0], true);
    assert!(rec.report.seats[0]
        .errors
        .iter()
        .any(|x| x.kind.as_str() == "disconnect"));
    assert_eq!(rec.report.scores[0], 0.0);
    assert_eq!(rec.report.extra["forfeited_seats"], serde_json::json!([0]));
    // Played on to a real end (or to max_day): the others are scored as the game went.
    let winner = e["winner"].as_str();
    let winners = rec.report.extra["winner_seats"].as_array().unwrap().clone();
    for seat in 1..5 {
        let won = winners.contains(&serde_json::json!(seat));
        assert_eq!(
            rec.report.scores[seat],
            f64::from(u8::from(won)),
            "seat {seat}"
        );
    }
    assert!(winner.is_some(), "{e}");
    verify_replay(&rec.replay.to_text()).unwrap();
}

/// `server.on_error_ratio = "abort"` in the organiser's configuration: upstream's rule, one
/// agent in error of five ends the game and everyone scores 0.
#[tokio::test]
async fn under_abort_a_disconnect_ends_a_five_player_game_by_the_error_ratio() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("abort.toml");
    std::fs::write(&config, "[server]\non_error_ratio = \"abort\"\n").unwrap();
    let config = config.display().to_string();
    let (rec, _) = ws_game(&[Mode::Quit], 4, 9, &[("config", config)]).await;
    let e = end(&rec);
    assert_eq!(e["aborted"], true);
    assert!(e["winner"].is_null());
    assert!(rec.report.seats[0]
        .errors
        .iter()
        .any(|x| x.kind.as_str() == "disconnect"));
    assert!(rec.report.scores.iter().all(|s| *s == 0.0));
    assert_eq!(rec.report.extra["forfeited_seats"], serde_json::json!([]));
    verify_replay(&rec.replay.to_text()).unwrap();
}

#[tokio::test]
async fn unknown_names_are_invalid_votes_and_chatty_replies_are_read_as_the_next_answer() {
    let (rec, _) = ws_game(&[Mode::Nonsense, Mode::Chatty], 3, 12, &[]).await;
    let lines: Vec<Value> = rec
        .replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let log: Vec<String> = end(&rec)["game_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    // Seats follow the order clients connected in, which a loaded machine may swap: find each.
    let agent_of = |name: &str| {
        lines
            .iter()
            .find(|l| l["event"] == "seat" && l["kind"] == "NAME" && l["raw"] == name)
            .and_then(|l| l["seat"].as_u64())
            .unwrap_or_else(|| panic!("no seat named {name}"))
    };
    let (nonsense, chatty) = (agent_of("rusty1"), agent_of("rusty2"));
    assert!(
        !log.iter()
            .any(|l| l.contains(&format!(",vote,{},", nonsense + 1))),
        "Agent[77] is no vote: {log:?}"
    );
    // The chatty agent's unasked text is taken as its answer to the next request, as upstream.
    assert!(lines
        .iter()
        .any(|l| l["seat"] == chatty && l["kind"] != "NAME" && l["raw"] == "unasked"));
    assert!(end(&rec)["winner"].is_string());
}

#[tokio::test]
async fn over_long_speech_is_cut_to_the_limits() {
    let (rec, got) = ws_game(&[Mode::Verbose], 4, 14, &[]).await;
    let _ = got;
    let e = end(&rec);
    let talk = e["game_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .find(|l| l.contains(",talk,") && l.contains("blah"))
        .unwrap()
        .to_string();
    let text = talk.splitn(6, ',').nth(5).unwrap();
    // Default: base 50 characters (spaces not counted), no per-agent budget.
    assert_eq!(
        text.chars().filter(|c| !c.is_whitespace()).count(),
        50,
        "{text}"
    );
}

#[tokio::test]
async fn token_authentication_admits_only_signed_teams() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("nlp.toml");
    std::fs::write(
        &cfg,
        "[server.authentication]\nenable = true\nsecret_key = \"k3y\"\n",
    )
    .unwrap();
    let mut s = spec(
        &[
            "ws",
            "builtin:sample",
            "builtin:sample",
            "builtin:sample",
            "builtin:sample",
        ],
        3,
        &[
            ("port", "0".into()),
            ("config", cfg.display().to_string()),
            ("connect_timeout_ms", "1500".into()),
        ],
    );
    // A wrong token is refused: the seat is not ready.
    let port = Listening::new();
    s.on_listen = port.notice();
    let bad = tokio::spawn(client(
        port,
        "kanolab1".into(),
        Mode::Play,
        Some(sign_player_token("wrong", "kanolab")),
    ));
    let rec = play(&s).await;
    assert_eq!(
        rec.report.seats[0].errors[0].kind.as_str(),
        "not_ready",
        "{:?}",
        rec.report.seats[0]
    );
    let _ = bad.await;
    let port = Listening::new();
    s.on_listen = port.notice();
    let good = tokio::spawn(client(
        port,
        "kanolab1".into(),
        Mode::Play,
        Some(sign_player_token("k3y", "kanolab")),
    ));
    let rec = play(&s).await;
    assert!(
        rec.report.seats[0].errors.is_empty(),
        "{:?}",
        rec.report.seats[0]
    );
    assert!(good.await.unwrap().len() > 3);
}

#[tokio::test]
async fn group_chat_over_websocket_broadcasts_and_ignores_a_flood() {
    let port = Listening::new();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("nlp.toml");
    std::fs::write(
        &cfg,
        "[game]\nmax_day = 1\n[game.talk]\nduration = \"300ms\"\n",
    )
    .unwrap();
    let mut s = spec(
        &[
            "ws",
            "builtin:sample",
            "builtin:sample",
            "builtin:sample",
            "builtin:sample",
        ],
        4,
        &[("port", "0".into()), ("config", cfg.display().to_string())],
    );
    s.on_listen = port.notice();
    // The flooder sends 50 messages at each phase start.
    let flood = tokio::spawn(async move {
        let url = ws_url(port).await;
        let (mut ws, _) = loop {
            match tokio_tungstenite::connect_async(url.as_str()).await {
                Ok(c) => break c,
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            }
        };
        let mut got = Vec::new();
        while let Some(Ok(Message::Text(t))) = ws.next().await {
            let p: Value = serde_json::from_str(&t).unwrap();
            let kind = p["request"].as_str().unwrap().to_string();
            got.push(p.clone());
            let alive = p["info"]["status_map"]
                .as_object()
                .and_then(|m| m.keys().next().cloned());
            let reply = match kind.as_str() {
                "NAME" => vec!["flood1".to_string()],
                "TALK_PHASE_START" => (0..50).map(|i| format!("message {i}")).collect(),
                "VOTE" | "DIVINE" | "ATTACK" | "GUARD" => alive.into_iter().collect(),
                _ => vec![],
            };
            for r in reply {
                if ws.send(Message::Text(r)).await.is_err() {
                    break;
                }
            }
        }
        got
    });
    let rec = play(&s).await;
    let got = flood.await.unwrap();
    let casts: Vec<&Value> = got
        .iter()
        .filter(|p| p["request"] == "TALK_BROADCAST")
        .collect();
    assert!(!casts.is_empty());
    let mine = casts
        .iter()
        .filter(|p| p["new_talk"]["agent"] == got[1]["info"]["agent"])
        .count();
    // per_agent 4 per day; two days at most.
    assert!(mine <= 8, "{mine} of the flood were broadcast");
    assert!(got.iter().any(|p| p["request"] == "TALK_PHASE_END"));
    verify_replay(&rec.replay.to_text()).unwrap();
}

fn python_with_common() -> Option<String> {
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, aiwolf_nlp_common, websocket; print(sys.executable)",
        ])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// A game of `pythons` agents on aiwolf-nlp-common and `builtins` built-in agents; with `chat`
/// the talk is a group chat of `chat` (a duration such as `"1s"`).
async fn python_game(
    pythons: usize,
    builtins: usize,
    seed: u64,
    chat: Option<&str>,
) -> Option<MatchRecord> {
    let Some(py) = python_with_common() else {
        eprintln!("SKIPPED: python3 with aiwolf-nlp-common is not installed (pip install aiwolf-nlp-common==0.7.0)");
        return None;
    };
    let script = format!("{}/tests/nlp/nlp_agent.py", env!("CARGO_MANIFEST_DIR"));
    let mode = if chat.is_some() { "chat" } else { "play" };
    let seats: Vec<String> = (0..pythons)
        .map(|i| format!("ws-cmd:{py} {script} {{url}} pyagent{} {mode}", i + 1))
        .chain((0..builtins).map(|i| {
            if i % 2 == 0 {
                "builtin:sample".into()
            } else {
                "builtin:random".into()
            }
        }))
        .collect();
    let seats: Vec<&str> = seats.iter().map(String::as_str).collect();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = vec![("action_ms", "5000".to_string())];
    if let Some(d) = chat {
        let cfg = dir.path().join("chat.toml");
        std::fs::write(&cfg, format!("[game.talk]\nduration = {d:?}\n")).unwrap();
        opts.push(("config", cfg.display().to_string()));
    }
    Some(play(&spec(&seats, seed, &opts)).await)
}

#[tokio::test]
async fn aiwolf_nlp_common_agents_play_a_whole_five_player_game() {
    let Some(rec) = python_game(5, 0, 21, None).await else {
        return;
    };
    assert!(end(&rec)["winner"].is_string(), "{}", end(&rec));
    for s in &rec.report.seats {
        assert!(s.errors.is_empty(), "{}: {:?}", s.spec, s.errors);
    }
    verify_replay(&rec.replay.to_text()).unwrap();
}

/// Group chat: aiwolf-nlp-common reads every phase packet and broadcast; the packets' JSON has
/// `setting.talk.duration` and a `time` and a per-agent `turn` on every talk (the agent checks).
#[tokio::test]
async fn aiwolf_nlp_common_agents_play_a_group_chat_game_with_builtins() {
    let Some(rec) = python_game(3, 2, 23, Some("1s")).await else {
        return;
    };
    assert!(end(&rec)["winner"].is_string(), "{}", end(&rec));
    for s in &rec.report.seats {
        assert!(s.errors.is_empty(), "{}: {:?}", s.spec, s.errors);
    }
    // The agents' own messages were read in the windows.
    let said = rec
        .replay
        .lines()
        .iter()
        .filter(|l| l.contains("\"kind\":\"TALK\"") && l.contains("Hello from"))
        .count();
    assert!(said > 0, "no group-chat message of an agent was recorded");
    verify_replay(&rec.replay.to_text()).unwrap();
}

#[tokio::test]
async fn aiwolf_nlp_common_agents_play_a_whole_thirteen_player_game_with_builtins() {
    let Some(rec) = python_game(7, 6, 22, None).await else {
        return;
    };
    assert!(end(&rec)["winner"].is_string(), "{}", end(&rec));
    for s in &rec.report.seats {
        assert!(s.errors.is_empty(), "{}: {:?}", s.spec, s.errors);
    }
}

#[tokio::test]
async fn upstream_logs_are_written_beside_the_replay_and_where_the_config_says() {
    let dir = tempfile::tempdir().unwrap();
    let beside = dir.path().join("beside");
    let cfg = dir.path().join("nlp.toml");
    let game_dir = dir.path().join("game");
    let rt_dir = dir.path().join("realtime");
    std::fs::write(
        &cfg,
        format!(
            "[game_logger]\noutput_dir = {:?}\nfilename = \"{{game_id}}_{{teams}}\"\n\
             [realtime_broadcaster]\ndelay = \"5s\"\noutput_dir = {:?}\nfilename = \"rt-{{game_id}}\"\n",
            game_dir.display().to_string(),
            rt_dir.display().to_string()
        ),
    )
    .unwrap();
    let seats = [
        "builtin:sample",
        "builtin:sample-en",
        "builtin:random",
        "builtin:sample",
        "builtin:random-en",
    ];
    let rec = play(&spec(
        &seats,
        77,
        &[
            ("log_dir", beside.display().to_string()),
            ("config", cfg.display().to_string()),
        ],
    ))
    .await;
    let e = end(&rec);
    // The id the game ran under (recorded in the replay; it carries the time).
    let id = rec
        .replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|v| v["event"] == "game_id")
        .and_then(|v| v["game_id"].as_str().map(str::to_string))
        .unwrap();
    // Its random part is a keyed hash of the seed (which deals the roles), never the seed.
    assert!(!id.ends_with("2D"), "seed 77 in its last characters: {id}");
    assert_eq!(
        id,
        kakehiki_werewolf::nlp::game::game_id_at(ulid_ms(&id), 77)
    );
    let lines: Vec<&str> = e["game_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    // The game log: upstream's lines joined by newlines, no final newline.
    let game_log = std::fs::read_to_string(beside.join(format!("{id}.log"))).unwrap();
    assert_eq!(game_log, lines.join("\n"));
    assert!(game_log.starts_with("0,status,1,"), "{game_log}");
    // Teams are the NAME answers without their digits, sorted.
    let named = std::fs::read_to_string(
        game_dir.join(format!("{id}_random_random-en_sample_sample_sample-en.log")),
    )
    .unwrap();
    assert_eq!(named, game_log);
    // The real-time log: JSON lines from 開始 to 終了 with the winner.
    let rt = std::fs::read_to_string(beside.join(format!("{id}.realtime.jsonl"))).unwrap();
    assert_eq!(
        rt,
        std::fs::read_to_string(rt_dir.join(format!("rt-{id}.jsonl"))).unwrap()
    );
    let rt: Vec<Value> = rt
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rt[0]["event"], "開始");
    assert_eq!(rt[0]["id"], id.as_str());
    assert_eq!(rt.last().unwrap()["event"], "終了");
    assert_eq!(rt.last().unwrap()["message"], e["winner"]);
    let talks = lines.iter().filter(|l| l.contains(",talk,")).count();
    assert_eq!(rt.iter().filter(|p| p["event"] == "トーク").count(), talks);
    for (i, p) in rt.iter().enumerate() {
        assert_eq!(p["idx"], i + 1);
        assert_eq!(p["agents"][2]["team"], "random");
    }
    // The JSON log: every request with its answer and times.
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(beside.join(format!("{id}.json"))).unwrap())
            .unwrap();
    assert_eq!(j["game_id"], id.as_str());
    assert_eq!(j["win_side"], e["winner"]);
    assert_eq!(j["agents"][2]["name"], "random3");
    assert_eq!(j["agents"][2]["team"], "random");
    assert_eq!(j["agents"][0]["idx"], 1);
    assert_eq!(j["agents"][0]["role"], e["roles"][0]);
    let entries = j["entries"].as_array().unwrap();
    let answers = rec
        .replay
        .lines()
        .iter()
        .filter(|l| l.contains("\"event\":\"seat\"") && l.contains("\"outcome\":\"reply\""))
        .count();
    assert_eq!(
        entries
            .iter()
            .filter(|x| x.get("response").is_some())
            .count(),
        answers
    );
    let first: Value = serde_json::from_str(entries[0]["request"].as_str().unwrap()).unwrap();
    assert_eq!(first["request"], "INITIALIZE");
    assert_eq!(entries[0]["agent"], "Agent[01]");
    for x in entries {
        assert!(
            x["request_timestamp"].as_u64().unwrap() <= x["response_timestamp"].as_u64().unwrap()
        );
    }
}

#[tokio::test]
async fn counts_a_config_leaves_out_follow_the_village_size() {
    use kakehiki_referee::games::werewolf_nlp::load_config_for;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("c.toml");
    // Upstream's default_13.yml: talk 4 per agent, 52 a day; whispers 4 and 12.
    std::fs::write(
        &p,
        "[game]\nagent_count = 13\n[game.talk]\nduration = \"1s\"\n",
    )
    .unwrap();
    let c = load_config_for(&p, None).unwrap().config;
    assert_eq!(
        (
            c.game.talk.max_count.per_agent,
            c.game.talk.max_count.per_day
        ),
        (4, 52)
    );
    assert_eq!(
        (
            c.game.whisper.max_count.per_agent,
            c.game.whisper.max_count.per_day
        ),
        (4, 12)
    );
    assert_eq!(c.game.talk.duration.as_deref(), Some("1s"));
    // What the file says stays.
    std::fs::write(
        &p,
        "[game]\nagent_count = 13\n[game.whisper.max_count]\nper_agent = 2\n",
    )
    .unwrap();
    let c = load_config_for(&p, None).unwrap().config;
    assert_eq!(
        (
            c.game.whisper.max_count.per_agent,
            c.game.whisper.max_count.per_day
        ),
        (2, 12)
    );
    // A file without agent_count used for 13 seats: 13-player counts; wolves whisper.
    let j = dir.path().join("c.json");
    std::fs::write(&j, r#"{"game": {"max_day": 1}}"#).unwrap();
    let seats = ["builtin:sample"; 13];
    let rec = play(&spec(&seats, 5, &[("config", j.display().to_string())])).await;
    let e = end(&rec);
    assert!(
        e["game_log"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l.as_str().unwrap().contains(",whisper,")),
        "{e}"
    );
    assert!(
        rec.replay.lines()[0].contains("\"per_day\":52"),
        "the header records the counts used"
    );
}

/// One launched agent opens more WebSocket connections to take more seats (seats went to
/// connections in order of arrival on one shared port): each `ws-cmd:` seat is bound to a
/// listener of its own, inside its agent's network namespace, so every honest agent plays its
/// seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_nlp_agent_gets_exactly_one_seat() {
    let Some(py) = python_with_common() else {
        eprintln!("SKIPPED: python3 with aiwolf-nlp-common is not installed");
        return;
    };
    let report = kakehiki_agent::SandboxReport::current(kakehiki_agent::SandboxLevel::Best);
    if !report.layers.contains(&kakehiki_agent::Layer::Namespaces) {
        eprintln!("SKIPPED: no namespaces: {}", report.missing_text());
        return;
    }
    let script = format!("{}/tests/nlp/nlp_agent.py", env!("CARGO_MANIFEST_DIR"));
    let greedy = format!(
        "ws-cmd:sh -c '{py} {script} {{url}} greedy1 & {py} {script} {{url}} greedy2 & \
         {py} {script} {{url}} greedy0; wait'"
    );
    let honest: Vec<String> = (1..5)
        .map(|i| format!("ws-cmd:sh -c 'sleep 0.5; exec {py} {script} {{url}} honest{i}'"))
        .collect();
    let mut seats = vec![greedy.as_str()];
    seats.extend(honest.iter().map(String::as_str));
    let mut s = spec(&seats, 31, &[("action_ms", "5000".into())]);
    // The interpreter is named inside a shell command: its installation is given explicitly.
    let prefix = std::path::Path::new(&py).parent().and_then(|b| b.parent());
    s.sandbox.jail.ro_paths = prefix.into_iter().map(|p| p.to_path_buf()).collect();
    let rec = play(&s).await;
    assert!(end(&rec)["winner"].is_string(), "{}", end(&rec));
    for s in &rec.report.seats[1..] {
        assert!(s.errors.is_empty(), "{}: {:?}", s.spec, s.errors);
    }
    let names: Vec<String> = rec
        .replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|l| l["event"] == "seat" && l["at"] == "connect")
        .map(|l| l["raw"].as_str().unwrap_or_default().trim_end().to_string())
        .collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert!(names[0].starts_with("greedy"), "{names:?}");
    for (i, name) in names.iter().enumerate().skip(1) {
        assert_eq!(name, &format!("honest{i}"), "{names:?}");
    }
}

/// A YAML file with upstream's layout and every key upstream's defaults have that Kakehiki does
/// not implement: it loads, each such key is named in a warning, and the keys it does implement
/// (the phases among them) take effect.
const UPSTREAM_LAYOUT_YAML: &str = r#"
server:
  web_socket:
    host: 127.0.0.1
    port: 18099
  timeout:
    action: 30s
    response: 90s
    acceptable: 2s
game:
  agent_count: 5
  max_day: 3
  talk:
    max_count:
      per_agent: 3
      per_day: 12
logic:
  day_phases:
    - name: "talk"
      actions: ["talk"]
  night_phases:
    - name: "attack"
      actions: ["attack"]
      except_day: 0
  roles:
    5:
      WEREWOLF: 1
      POSSESSED: 1
      SEER: 1
      VILLAGER: 2
matching:
  self_match: false
  is_optimize: false
  team_count: 5
  game_count: 5
  output_path: ./out.json
  infinite_loop: false
custom_profile:
  enable: true
  profile_encoding:
    age: Age
  profiles:
    - {name: A, avatar_url: "http://x/a.png", voice_id: 1, age: 10}
    - {name: B, avatar_url: "http://x/b.png", voice_id: 2, age: 11}
    - {name: C, avatar_url: "http://x/c.png", voice_id: 3, age: 12}
    - {name: D, avatar_url: "http://x/d.png", voice_id: 4, age: 13}
    - {name: E, avatar_url: "http://x/e.png", voice_id: 5, age: 14}
  dynamic_profile:
    enable: false
    attempts: 3
tts_broadcaster:
  enable: false
  temp_dir:
  convert_args: ["-c:a", "aac"]
realtime_broadcaster:
  enable: false
  delay: 5s
"#;

#[test]
fn upstream_yaml_loads_with_a_warning_per_key_not_implemented() {
    use kakehiki_referee::games::werewolf_nlp::{load_config_for, NOT_IMPLEMENTED_KEYS};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("default_5.yml");
    std::fs::write(&p, UPSTREAM_LAYOUT_YAML).unwrap();
    let loaded = load_config_for(&p, None).unwrap();
    assert_eq!(loaded.warnings.len(), 7, "{:#?}", loaded.warnings);
    for (w, key) in loaded.warnings.iter().zip(NOT_IMPLEMENTED_KEYS) {
        assert!(w.starts_with(&format!("{key}: ")), "{w}");
    }
    let c = &loaded.config;
    assert_eq!(c.server.web_socket.port, 18099);
    assert_eq!(c.server.timeout.action, "30s");
    assert_eq!(c.game.max_day, 3);
    assert_eq!(c.game.talk.max_count.per_day, 12);
    assert!(!c.matching.self_match);
    assert_eq!(c.logic.roles["5"]["SEER"], 1);
    assert_eq!(c.custom_profile.profiles.len(), 5);
    let s = c.settings().unwrap();
    assert_eq!(s.timeout_action_ms, 30_000);
    // The phases are read and played: a talk-only day, an attack-only night from day 1.
    use kakehiki_werewolf::nlp::settings::PhaseAction;
    assert_eq!(s.day_phases.len(), 1);
    assert_eq!(s.day_phases[0].actions, [PhaseAction::Talk]);
    assert_eq!(s.night_phases[0].actions, [PhaseAction::Attack]);
    assert_eq!(s.night_phases[0].except_day, Some(0));
    assert_eq!(s.profiles.unwrap()[0].description, "Age: 10");
    // The same file under .yaml; a truly unknown key is still an error naming it.
    let q = dir.path().join("c.yaml");
    std::fs::write(
        &q,
        UPSTREAM_LAYOUT_YAML.replace("  max_day: 3\n", "  max_day: 3\n  max_days: 4\n"),
    )
    .unwrap();
    let e = load_config_for(&q, None).unwrap_err();
    assert!(e.contains("game") && e.contains("max_days"), "{e}");
    std::fs::write(&q, "tts_broadcaster:\n  enable: true\nbogus: 1\n").unwrap();
    let e = load_config_for(&q, None).unwrap_err();
    assert!(e.contains("bogus"), "{e}");
    // The newest upstream's deployment keys load with a warning each, never refused.
    std::fs::write(
        &q,
        "team_health:\n  enable: true\n  window: 20\n  abort_weight_factor: 0.5\n\
         slack_notifier:\n  enable: false\n  events: [game_end]\n\
         matching:\n  self_match: true\n  abort_weight_factor: 0.5\n",
    )
    .unwrap();
    let c = load_config_for(&q, None).unwrap();
    let named: Vec<&str> = c
        .warnings
        .iter()
        .map(|w| w.split(": ").next().unwrap())
        .collect();
    assert_eq!(
        named,
        [
            "team_health",
            "slack_notifier",
            "matching.abort_weight_factor"
        ],
        "{:#?}",
        c.warnings
    );
    assert!(c.config.matching.self_match);
    // Empty YAML: the defaults.
    std::fs::write(&q, "").unwrap();
    let c = load_config_for(&q, None).unwrap();
    assert!(c.warnings.is_empty());
    assert_eq!(c.config.server.web_socket.port, 8080);
}

/// The ULID time (ms since 1970) of a game id.
fn ulid_ms(id: &str) -> u64 {
    const CROCKFORD: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    id[..10]
        .chars()
        .fold(0u64, |v, c| v * 32 + CROCKFORD.find(c).unwrap() as u64)
}

#[tokio::test]
async fn game_ids_carry_the_time_replays_keep_them_and_the_realtime_log_has_avatars() {
    let dir = tempfile::tempdir().unwrap();
    let rt_dir = dir.path().join("realtime");
    let beside = dir.path().join("beside");
    let cfg = dir.path().join("c.yml");
    std::fs::write(
        &cfg,
        UPSTREAM_LAYOUT_YAML.replace(
            "realtime_broadcaster:\n  enable: false\n",
            &format!(
                "realtime_broadcaster:\n  enable: true\n  output_dir: {}\n  filename: \"{{game_id}}_{{teams}}\"\n",
                rt_dir.display()
            ),
        ),
    )
    .unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let seats = ["builtin:sample"; 5];
    let mut ids = Vec::new();
    for seed in [1u64, 2] {
        let rec = play(&spec(
            &seats,
            seed,
            &[
                ("config", cfg.display().to_string()),
                ("log_dir", beside.display().to_string()),
            ],
        ))
        .await;
        let text = rec.replay.to_text();
        let id_line: Value = text
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|v| v["event"] == "game_id")
            .expect("the replay records the game id");
        let id = id_line["game_id"].as_str().unwrap().to_string();
        let ms = ulid_ms(&id);
        assert!(
            ms >= before && ms < before + 600_000,
            "{id}: {ms} vs {before}"
        );
        // The seed, which deals the roles, is not in it: its last 16 characters are a keyed
        // hash of it.
        assert!(!id.ends_with(&format!("{seed}")), "{id}");
        assert_eq!(id, kakehiki_werewolf::nlp::game::game_id_at(ms, seed));
        // The re-run uses the recorded id, byte for byte, however much later it runs.
        std::thread::sleep(Duration::from_millis(5));
        verify_replay(&text).unwrap();
        // The real-time log: upstream's `avatar` beside each profile.
        let rt = std::fs::read_to_string(beside.join(format!("{id}.realtime.jsonl"))).unwrap();
        let first: Value = serde_json::from_str(rt.lines().next().unwrap()).unwrap();
        assert_eq!(first["id"], id.as_str());
        for a in first["agents"].as_array().unwrap() {
            let avatar = a["avatar"].as_str().unwrap_or_else(|| panic!("{a}"));
            assert!(avatar.starts_with("http://x/"), "{a}");
        }
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
    // games.json in the broadcaster's folder and beside the replay lists both games.
    for (d, suffix) in [(&rt_dir, "_"), (&beside, ".realtime")] {
        let list: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("games.json")).unwrap()).unwrap();
        let list = list.as_array().unwrap();
        assert_eq!(list.len(), 2, "{list:?}");
        for (item, id) in list.iter().zip(&ids) {
            assert_eq!(item["id"], id.as_str());
            let f = item["filename"].as_str().unwrap();
            assert!(f.starts_with(&format!("{id}{suffix}")), "{f}");
            assert!(d.join(format!("{f}.jsonl")).exists(), "{f}");
            assert!(item["updated_at"].as_str().unwrap().ends_with('Z'));
        }
    }
}

/// Every answered request of a WebSocket agent is one `seat` line with its reply time and its
/// limit, labelled with the day (and the talk's number), its kind the request's name: what a
/// game-generic `check` reads for its timing table.
#[tokio::test]
async fn replays_record_reply_times_and_limits_of_every_answered_request() {
    let (rec, _) = ws_game(&[Mode::Play, Mode::Play], 3, 5, &[]).await;
    let parsed = kakehiki_core::replay::ReplayLog::parse(&rec.replay.to_text()).unwrap();
    let record = kakehiki_core::exchange::SeatRecord::of(&parsed).unwrap();
    let mut kinds = std::collections::BTreeSet::new();
    for e in record.exchanges.iter().filter(|e| e.seat < 2) {
        assert_eq!(e.outcome.as_str(), "reply", "{e:?}");
        let limit = e.limit_ms.unwrap_or_else(|| panic!("no limit: {e:?}"));
        let us = e.time_us.unwrap_or_else(|| panic!("no time: {e:?}"));
        assert!(us <= limit * 1000, "{e:?}");
        kinds.insert(e.kind.clone());
        match e.kind.as_str() {
            "NAME" => assert_eq!(e.at, "connect"),
            "TALK" => assert!(e.at.starts_with("day ") && e.at.contains(" talk "), "{e:?}"),
            _ => assert!(e.at.starts_with("day ") && !e.at.contains(" talk"), "{e:?}"),
        }
    }
    assert!(
        kinds.contains("TALK") && kinds.contains("VOTE"),
        "{kinds:?}"
    );
    // Built-in agents' answers are recorded too, without a time.
    assert!(record
        .of_seat(2)
        .all(|e| e.time_us.is_none() && e.outcome.as_str() == "reply"));
    verify_replay(&rec.replay.to_text()).unwrap();
}

/// `builtin:silent` is a seat of this game: it never answers, so its requests time out at their
/// limit (at once), the NAME check after its first timeout fails, and the game goes on by its
/// rules without it.
#[tokio::test]
async fn builtin_silent_is_a_timing_out_seat() {
    let seats: Vec<&str> = std::iter::once("builtin:silent")
        .chain(std::iter::repeat_n("builtin:sample", 12))
        .collect();
    let started = std::time::Instant::now();
    let rec = play(&spec(&seats, 3, &[])).await;
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(end(&rec)["winner"].is_string(), "{}", end(&rec));
    let parsed = kakehiki_core::replay::ReplayLog::parse(&rec.replay.to_text()).unwrap();
    let record = kakehiki_core::exchange::SeatRecord::of(&parsed).unwrap();
    let silent: Vec<_> = record.of_seat(0).collect();
    assert!(!silent.is_empty());
    for e in &silent {
        assert_eq!(e.outcome.as_str(), "timeout", "{e:?}");
        assert_eq!(e.time_us, e.limit_ms.map(|l| l * 1000), "{e:?}");
    }
    assert!(rec.report.seats[0]
        .errors
        .iter()
        .any(|e| e.kind.as_str() == "timeout" && e.at.starts_with("day ")));
    assert_eq!(end(&rec)["errors"][0], true);
    verify_replay(&rec.replay.to_text()).unwrap();
}

/// A `ws-cmd:` agent that fails before it connects: seen within a second, not after the
/// connection timeout, with its exit code and stderr in the replay's `seat_end` and the report.
#[tokio::test]
async fn ws_cmd_exit_code_and_stderr_are_collected() {
    let seats = [
        "ws-cmd:sh -c 'echo cannot import aiwolf_nlp_common >&2; exit 3' {url}",
        "builtin:sample",
        "builtin:sample",
        "builtin:random",
        "builtin:sample-en",
    ];
    let started = std::time::Instant::now();
    let rec = play(&spec(&seats, 4, &[])).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let seat = &rec.report.seats[0];
    assert_eq!(seat.errors[0].kind.as_str(), "not_ready", "{seat:?}");
    assert!(seat.errors[0].detail.contains("exit"), "{seat:?}");
    assert!(
        seat.extra["exit"].as_str().unwrap().contains("exit code 3"),
        "{seat:?}"
    );
    assert!(
        seat.extra["stderr"]
            .as_str()
            .unwrap()
            .contains("cannot import"),
        "{seat:?}"
    );
    let parsed = kakehiki_core::replay::ReplayLog::parse(&rec.replay.to_text()).unwrap();
    let record = kakehiki_core::exchange::SeatRecord::of(&parsed).unwrap();
    let end0 = record.end_of(0).unwrap();
    assert_eq!(end0.exit_code, Some(3));
    assert!(end0.stderr.contains("cannot import"));
    // The request it never answered, its first, carries what it wrote.
    let first = record.of_seat(0).next().unwrap();
    assert_eq!(
        first.stderr.as_deref(),
        Some("cannot import aiwolf_nlp_common\n"),
        "{first:?}"
    );
    assert_eq!(record.of_seat(0).filter(|e| e.stderr.is_some()).count(), 1);
    verify_replay(&rec.replay.to_text()).unwrap();
}

/// A replay of format @1 (recorded before the seat layer, with a `ws-cmd:` agent) upgrades to
/// the current format, and the result verifies.
#[test]
fn a_v1_replay_upgrades_and_verifies() {
    let text = include_str!("../data/werewolf-nlp-v1.jsonl");
    let old = kakehiki_core::replay::ReplayLog::parse(text).unwrap();
    let driver = find_game("werewolf-nlp").unwrap();
    assert!(driver.rerun(&old).is_err(), "@1 is not re-run as @2");
    let new = driver.upgrade(&old).unwrap().to_text();
    assert!(new.starts_with("{\"event\":\"header\",\"format\":\"kakehiki/werewolf-nlp-replay@2\""));
    let rec = verify_replay(&new).unwrap();
    let old_end: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let new_end: Value = serde_json::from_str(new.lines().last().unwrap()).unwrap();
    assert_eq!(old_end["game_log"], new_end["game_log"]);
    assert_eq!(rec.report.seats[0].errors.len(), 0);
    // The agent's NAME and its answers are its seat record.
    assert!(new.contains(r#"{"event":"seat","seat":0,"at":"connect","kind":"NAME","limit_ms":"#));
}

/// An agent that answers every request legally and as late as it may: `delay` after each
/// request (its NAME too), talking and whispering at every turn (never `Skip` or `Over`) and
/// voting for a living agent. Returns when it got INITIALIZE and FINISH.
async fn slow_client(
    port: Listening,
    name: String,
    delay: Duration,
) -> (Option<std::time::Instant>, Option<std::time::Instant>) {
    let url = ws_url(port).await;
    let (mut ws, _) = loop {
        match tokio_tungstenite::connect_async(url.as_str()).await {
            Ok(c) => break c,
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    let (mut initialized, mut finished) = (None, None);
    while let Some(Ok(m)) = ws.next().await {
        let Message::Text(t) = m else { continue };
        let p: Value = serde_json::from_str(&t).unwrap();
        let me = p["info"]["agent"].as_str().unwrap_or_default();
        let other = p["info"]["status_map"]
            .as_object()
            .and_then(|m| m.iter().find(|(k, v)| *v == "ALIVE" && k.as_str() != me))
            .map(|(k, _)| k.clone());
        let answer = match p["request"].as_str().unwrap() {
            "NAME" => Some(name.clone()),
            "TALK" | "WHISPER" => Some("I have nothing to hide.".into()),
            "VOTE" | "DIVINE" | "GUARD" | "ATTACK" => other,
            "INITIALIZE" => {
                initialized = Some(std::time::Instant::now());
                None
            }
            "FINISH" => {
                finished = Some(std::time::Instant::now());
                None
            }
            _ => None,
        };
        if let Some(a) = answer {
            tokio::time::sleep(delay).await;
            if ws.send(Message::Text(a)).await.is_err() {
                break;
            }
        }
    }
    (initialized, finished)
}

/// Five WebSocket agents answering every request legally, slowly but within its limit (60 ms of
/// the 60 + 60 ms a request has, their NAME 60 ms of 120; a margin a loaded machine keeps): the
/// match lasts less than the longest
/// legal match the driver computes, and its game (INITIALIZE to FINISH, 88 requests at most:
/// day 0, 5 × 8 talks and a divine; day 1, 40 talks, 5 votes, a divine and an attack vote) less
/// than the game's part of it, which leaves out the seating and the 2 s to exit: a bound that
/// forgot the talk would be below the game played.
#[tokio::test]
async fn agents_answering_at_their_limits_finish_within_the_longest_legal_match() {
    let port = Listening::new();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("nlp.toml");
    std::fs::write(
        &cfg,
        "[game]\nmax_day = 1\n[game.talk.max_count]\nper_agent = 8\nper_day = 8\n",
    )
    .unwrap();
    let mut s = spec(
        &["ws"; 5],
        3,
        &[
            ("port", "0".into()),
            ("config", cfg.display().to_string()),
            ("action_ms", "60".into()),
            ("acceptable_ms", "60".into()),
            ("response_ms", "120".into()),
            ("connect_timeout_ms", "500".into()),
        ],
    );
    let driver = find_game("werewolf-nlp").unwrap();
    let longest = driver.longest_legal_match(&s).unwrap().unwrap();
    let settings = kakehiki_referee::games::werewolf_nlp::config_from_spec(&s)
        .unwrap()
        .settings()
        .unwrap();
    let game = kakehiki_werewolf::nlp::bound::LongestGame::of(&settings);
    assert_eq!((game.requests, game.request_ms), (88, 120));
    // 5 × (500 ms + 2 × 120 ms) to seat, 88 × 120 ms, 2 s to exit.
    assert_eq!(longest, Duration::from_millis(5 * 740 + 88 * 120 + 2_000));
    s.on_listen = port.notice();
    let agents: Vec<_> = (0..5)
        .map(|i| {
            let name = format!("slow{}", i + 1);
            tokio::spawn(slow_client(port, name, Duration::from_millis(60)))
        })
        .collect();
    let started = std::time::Instant::now();
    let rec = play(&s).await;
    let took = started.elapsed();
    let mut times = Vec::new();
    for a in agents {
        let (init, fin) = a.await.unwrap();
        times.push(init.zip(fin));
    }
    // The game's span: the first INITIALIZE to the last FINISH any agent got.
    let first = times.iter().flatten().map(|t| t.0).min().unwrap();
    let last = times.iter().flatten().map(|t| t.1).max().unwrap();
    let span = last - first;
    eprintln!(
        "match {took:?} of {longest:?}; game {span:?} of {:?}",
        game.time()
    );
    assert!(
        took < longest,
        "the match took {took:?}, the bound is {longest:?}"
    );
    assert!(
        span < game.time(),
        "the game took {span:?}, its bound is {:?}",
        game.time()
    );
    // The agents did answer slowly: nearly every talk within its limit, after 60 ms.
    let parsed = kakehiki_core::replay::ReplayLog::parse(&rec.replay.to_text()).unwrap();
    let record = kakehiki_core::exchange::SeatRecord::of(&parsed).unwrap();
    let slow_talks = record
        .exchanges
        .iter()
        .filter(|e| e.kind == "TALK" && e.outcome.as_str() == "reply")
        .filter(|e| e.time_us.is_some_and(|us| us >= 60_000))
        .count();
    assert!(slow_talks >= 70, "{slow_talks} slow talks of 80");
}

#[tokio::test]
async fn an_agent_too_slow_to_connect_is_told_the_limit_it_missed_and_how_to_raise_it() {
    let s = spec(
        &[
            "ws-cmd:sh -c 'sleep 5'",
            "builtin:sample",
            "builtin:sample",
            "builtin:sample",
            "builtin:sample",
        ],
        3,
        &[("connect_timeout_ms", "300".into())],
    );
    let rec = play(&s).await;
    let e = &rec.report.seats[0].errors[0];
    assert_eq!(e.kind.as_str(), "not_ready", "{e:?}");
    assert!(
        e.detail
            .contains("no agent connected within 300 ms (the limit connect_timeout_ms")
            && e.detail.contains("--opt connect_timeout_ms=60000"),
        "{e:?}"
    );
}

/// Every talk an agent was sent (in `talk_history` or as `new_talk`), by day and index: its
/// `time` and `turn`.
fn talks_sent(got: &[Value]) -> BTreeMap<(u64, u64), (u64, u64)> {
    let mut out = BTreeMap::new();
    for p in got {
        let history = p["talk_history"].as_array().into_iter().flatten();
        for t in history.chain(p.get("new_talk")) {
            let key = (t["day"].as_u64().unwrap(), t["idx"].as_u64().unwrap());
            let time = t["time"].as_u64().expect("every talk has a time");
            out.insert(key, (time, t["turn"].as_u64().unwrap()));
        }
    }
    out
}

/// A talk's `time` is the game's start (its id's time) plus the reply times the replay records:
/// never a clock read, so that a re-run of the replay derives the times the agents were sent —
/// in turns and in group chat. The real-time log stamps each talk with it, and the JSON log has
/// an entry for each group-chat talk.
#[tokio::test]
async fn talk_times_come_from_the_record_and_a_rerun_derives_the_same() {
    use kakehiki_core::replay::ReplayLog;
    use kakehiki_referee::games::werewolf_nlp::{replayed_game, run_game};
    use kakehiki_referee::seat::Table;

    let dir = tempfile::tempdir().unwrap();
    let chat = dir.path().join("chat.toml");
    std::fs::write(
        &chat,
        "[game]\nmax_day = 1\n[game.talk]\nduration = \"300ms\"\n",
    )
    .unwrap();
    let chat = ("config", chat.display().to_string());
    for (modes, chat) in [
        (vec![Mode::Play, Mode::Play], None),
        (vec![Mode::Chatty, Mode::Play], Some(chat)),
    ] {
        let logs = tempfile::tempdir().unwrap();
        let mut extra = vec![("log_dir", logs.path().display().to_string())];
        extra.extend(chat.clone());
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let (rec, got) = ws_game(&modes, 3, 17, &extra).await;
        let sent = talks_sent(&got[1]);
        assert!(!sent.is_empty());
        let id = got[1].iter().find_map(|p| p["info"]["game_id"].as_str());
        let start = ulid_ms(id.unwrap());
        assert!(start >= before, "the game started after the test did");
        for (k, (time, _)) in &sent {
            assert!(*time >= start, "{k:?}: {time} before the start {start}");
        }
        // The re-run of the replay derives the same talks, at the same times.
        let text = rec.replay.to_text();
        let parsed = ReplayLog::parse(&text).unwrap();
        let (g, _) = replayed_game(&parsed, &parsed.header).unwrap();
        let table = Table::replayed(&parsed, g.who.len(), ReplayLog::new()).unwrap();
        let played = run_game(table, g).await;
        let rerun: BTreeMap<(u64, u64), (u64, u64)> = played
            .game
            .all_talks()
            .map(|t| ((t.day.into(), t.idx.into()), (t.time, t.turn.into())))
            .collect();
        for (k, v) in &sent {
            assert_eq!(rerun.get(k), Some(v), "{k:?}");
        }
        // Talks in order of day and index were received in that order.
        let times: Vec<u64> = sent.values().map(|(t, _)| *t).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        // The real-time log's talks at their times, in seconds.
        let rt =
            std::fs::read_to_string(logs.path().join(format!("{}.realtime.jsonl", id.unwrap())));
        let rt_talks: Vec<u64> = rt
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|p| p["event"] == "トーク")
            .map(|p| p["timestamp"].as_u64().unwrap())
            .collect();
        let game_talks: Vec<u64> = played.game.all_talks().map(|t| t.time / 1000).collect();
        assert_eq!(rt_talks, game_talks);
        let json = std::fs::read_to_string(logs.path().join(format!("{}.json", id.unwrap())));
        let json: Value = serde_json::from_str(&json.unwrap()).unwrap();
        let casts: Vec<&Value> = json["entries"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| {
                x["request"]
                    .as_str()
                    .unwrap()
                    .contains("\"TALK_BROADCAST\"")
            })
            .collect();
        if chat.is_none() {
            assert!(casts.is_empty());
        } else {
            // One entry per talk the phase accepted: its speaker, text and time.
            let talks: Vec<_> = played.game.all_talks().collect();
            assert_eq!(casts.len(), talks.len());
            for (x, t) in casts.iter().zip(&talks) {
                assert_eq!(x["agent"], &*t.agent);
                assert_eq!(x["response"], &*t.text);
                assert_eq!(x["request_timestamp"], t.time);
                assert_eq!(x["response_timestamp"], t.time);
            }
            // In group chat the chatty agent's talks are numbered 0, 1, … each day.
            let me = got[0][1]["info"]["agent"].as_str().unwrap().to_string();
            let mut turns: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
            for t in played.game.all_talks().filter(|t| *t.agent == *me) {
                turns.entry(t.day.into()).or_default().push(t.turn.into());
            }
            assert!(!turns.is_empty(), "the chatty agent talked");
            for list in turns.values() {
                assert_eq!(*list, (0..list.len() as u64).collect::<Vec<_>>());
            }
        }
        verify_replay(&text).unwrap();
    }
}
