//! The Werewolf viewer's model of a natural-language game (`werewolf-nlp`): built from a game
//! the referee plays, checked against that game's own upstream-format game log.

use kakehiki_core::SeatSpec;
use kakehiki_referee::driver::MatchSpec;
use kakehiki_referee::find_game;
use kakehiki_web::{view_model, ViewOptions};
use serde_json::Value;

fn play(n: usize, seed: u64) -> String {
    let seats: Vec<SeatSpec> = (0..n)
        .map(|i| {
            ["builtin:sample", "builtin:sample-en", "builtin:random"][i % 3]
                .parse()
                .unwrap()
        })
        .collect();
    let spec = MatchSpec::new("werewolf-nlp", seed, seats);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rec = rt
        .block_on(find_game("werewolf-nlp").unwrap().play(&spec))
        .unwrap();
    rec.replay.to_text()
}

fn end_of(replay: &str) -> Value {
    serde_json::from_str(replay.lines().last().unwrap()).unwrap()
}

fn game_log(end: &Value) -> Vec<String> {
    end["game_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_thirteen_player_game_shows_talk_whispers_votes_nights_roles_and_winner() {
    let replay = play(13, 31);
    let end = end_of(&replay);
    let log = game_log(&end);
    let m = view_model(&replay, &ViewOptions::default()).unwrap();
    assert_eq!(m["game"], "werewolf-nlp");
    assert_eq!(m["unit"], "phase");
    let steps = m["steps"].as_array().unwrap();
    let mut days: Vec<u64> = log
        .iter()
        .map(|l| l.split(',').next().unwrap().parse().unwrap())
        .collect();
    days.dedup();
    // One step per phase of each day, in the order played.
    let order = |p: &str| {
        ["whisper", "talk", "vote", "night", "end"]
            .iter()
            .position(|x| *x == p)
            .unwrap()
    };
    let keys: Vec<(u64, usize)> = steps
        .iter()
        .map(|s| {
            (
                s["day"].as_u64().unwrap(),
                order(s["phase"].as_str().unwrap()),
            )
        })
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    let mut seen: Vec<u64> = keys.iter().map(|k| k.0).collect();
    seen.dedup();
    assert_eq!(seen, days);
    for d in &days {
        // A day's phases together hold everything of that day.
        let of_day: Vec<&Value> = steps.iter().filter(|s| s["day"] == *d).collect();
        let all = |key: &str| -> Vec<Value> {
            of_day
                .iter()
                .flat_map(|s| s[key].as_array().unwrap().iter().cloned())
                .collect()
        };
        let one = |key: &str| -> Value {
            of_day
                .iter()
                .map(|s| s[key].clone())
                .find(|v| !v.is_null())
                .unwrap_or(Value::Null)
        };
        let s = serde_json::json!({
            "talk": all("talk"), "whisper": all("whisper"), "votes": all("votes"),
            "divined": all("divined"), "guarded": all("guarded"),
            "executed": one("executed"), "attacked": one("attacked"),
        });
        // Talk as said, in order, with its speaker; no protocol reading of free text.
        let talk: Vec<(u64, String)> = log
            .iter()
            .filter(|l| l.starts_with(&format!("{d},talk,")))
            .map(|l| {
                let f: Vec<&str> = l.splitn(6, ',').collect();
                (f[4].parse().unwrap(), f[5].to_string())
            })
            .collect();
        let shown: Vec<(u64, String)> = s["talk"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                assert!(t["english"].is_null());
                (
                    t["agent"].as_u64().unwrap(),
                    t["text"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(shown, talk, "day {d}");
        let whispers = log
            .iter()
            .filter(|l| l.starts_with(&format!("{d},whisper,")))
            .count();
        assert_eq!(s["whisper"].as_array().unwrap().len(), whispers);
        let votes: Vec<(u64, i64)> = log
            .iter()
            .filter(|l| l.starts_with(&format!("{d},vote,")))
            .map(|l| {
                let f: Vec<&str> = l.split(',').collect();
                (f[2].parse().unwrap(), f[3].parse().unwrap())
            })
            .collect();
        let shown: Vec<(u64, i64)> = s["votes"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|r| r.as_array().unwrap().iter())
            .map(|v| (v["agent"].as_u64().unwrap(), v["target"].as_i64().unwrap()))
            .collect();
        assert_eq!(shown, votes, "day {d}");
        if let Some(x) = log.iter().find(|l| l.starts_with(&format!("{d},execute,"))) {
            let who: u64 = x.split(',').nth(2).unwrap().parse().unwrap();
            assert_eq!(s["executed"]["agent"], who);
        }
        if let Some(x) = log.iter().find(|l| l.starts_with(&format!("{d},attack,"))) {
            let f: Vec<&str> = x.split(',').collect();
            assert_eq!(s["attacked"]["target"], f[2].parse::<i64>().unwrap());
            assert_eq!(s["attacked"]["success"], f[3] == "true");
        }
        let divined = log
            .iter()
            .filter(|l| l.starts_with(&format!("{d},divine,")))
            .count();
        assert_eq!(s["divined"].as_array().unwrap().len(), divined);
        let guarded = log
            .iter()
            .filter(|l| l.starts_with(&format!("{d},guard,")))
            .count();
        assert_eq!(s["guarded"].as_array().unwrap().len(), guarded);
    }
    // A 13-player village has three werewolves who whisper on day 0, before the talk begins.
    assert_eq!(steps[0]["phase"], "whisper");
    assert!(!steps[0]["whisper"].as_array().unwrap().is_empty());
    assert_eq!(m["result"]["winner"], end["winner"]);
    assert_eq!(m["result"]["roles"], end["roles"]);
    assert_eq!(m["extra"]["names"], end["names"]);
    assert_eq!(m["extra"]["names"][0], "Agent[01]");
    // Every agent answered something.
    for s in m["seats"].as_array().unwrap() {
        assert!(s["moves"].as_u64().unwrap() > 0, "{s}");
        assert!(s["errors"].as_array().unwrap().is_empty());
    }
}

#[test]
fn failed_requests_are_listed_on_their_day_and_phase() {
    let replay = play(5, 32);
    let mut lines: Vec<String> = replay.lines().map(String::from).collect();
    let at = lines.len() - 1;
    lines.insert(
        at,
        r#"{"event":"seat","seat":2,"at":"day 1","kind":"VOTE","limit_ms":60000,"time_us":60000000,"outcome":"timeout"}"#.into(),
    );
    lines.insert(
        at,
        r#"{"event":"seat","seat":4,"at":"day 0","kind":"DAILY_FINISH","outcome":"disconnect","detail":"send failed"}"#.into(),
    );
    let m = view_model(&(lines.join("\n") + "\n"), &ViewOptions::default()).unwrap();
    let steps = m["steps"].as_array().unwrap();
    let vote1 = steps
        .iter()
        .position(|s| s["day"] == 1 && s["phase"] == "vote")
        .unwrap();
    let e2 = &m["seats"][2]["errors"][0];
    assert_eq!(e2["kind"], "timeout");
    assert_eq!(e2["step"], vote1);
    assert!(e2["detail"].as_str().unwrap().contains("VOTE"), "{e2}");
    let e4 = &m["seats"][4]["errors"][0];
    assert_eq!(e4["kind"], "disconnect");
    assert_eq!(e4["step"], 0);
}

#[test]
fn broken_replays_get_specific_errors() {
    let replay = play(5, 33);
    let lines: Vec<&str> = replay.lines().collect();
    // No end event.
    let cut = lines[..lines.len() - 1].join("\n") + "\n";
    let e = view_model(&cut, &ViewOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no end event"), "{e}");
    // A game-log line naming an agent that is not seated.
    let mut end = end_of(&replay);
    end["game_log"]
        .as_array_mut()
        .unwrap()
        .push(Value::String("1,vote,9,1".into()));
    let bad = lines[..lines.len() - 1].join("\n") + "\n" + &end.to_string() + "\n";
    let e = view_model(&bad, &ViewOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("agent 9 is not one of the 5 seats"),
        "{e}"
    );
    // A seat out of range in an answer.
    let mut with_bad_answer: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    with_bad_answer.insert(
        2,
        r#"{"event":"seat","seat":7,"at":"day 0 talk 0","kind":"TALK","outcome":"reply","raw":"hi"}"#.into(),
    );
    let e = view_model(
        &(with_bad_answer.join("\n") + "\n"),
        &ViewOptions::default(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("seat 7 does not exist"), "{e}");
}

/// A night with no attack, as the natural-language server logs it (`1,attack,-1,true`: a
/// lone werewolf with no target, found with the real sample agent on a ladder): the viewer
/// shows nobody attacked, and nobody dies of it.
#[test]
fn a_night_without_an_attack_is_shown() {
    let replay = play(5, 33);
    let lines: Vec<&str> = replay.lines().collect();
    let mut end = end_of(&replay);
    let log = end["game_log"].as_array_mut().unwrap();
    let at = log
        .iter()
        .position(|l| l.as_str().unwrap().contains(",attack,"))
        .expect("a night with an attack");
    log[at] = Value::String("1,attack,-1,true".into());
    let text = lines[..lines.len() - 1].join("\n") + "\n" + &end.to_string() + "\n";
    let m = view_model(&text, &ViewOptions::default()).unwrap();
    let night = m["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["attacked"]["target"] == -1)
        .expect("the night without an attack");
    assert_eq!(night["attacked"]["success"], false, "{night}");
}
