//! CPU fairness between seats: in NAC four bots think at once, and a bot that starts many
//! spinning processes must not starve the others. With the sandbox's cpu layer every bot's
//! cgroup has the same CPU weight, shared by all its processes.

use std::path::PathBuf;
use std::time::Duration;

use kakehiki_agent::{Layer, SandboxLevel, SandboxReport};
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};
use serde_json::Value;

/// The turn limit: far above an honest bot's reply alone.
const TURN_MS: u64 = 2000;
/// CPU time an honest bot spends per turn.
const THINK_MS: &str = "120";
/// The neighbour's spinning children.
const SPINNERS: &str = "16";

fn bot(mode: &str, n: &str) -> SeatSpec {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bots/cpu.py");
    SeatSpec::Cmd(vec![
        "python3".into(),
        script.to_string_lossy().into_owned(),
        mode.into(),
        n.into(),
    ])
}

/// Honest seats' reply times (ms) over the match, and how many of their moves were not `ok`.
async fn reply_times(seats: Vec<SeatSpec>, honest: &[usize]) -> (Vec<f64>, Vec<String>) {
    let mut spec = MatchSpec::new("nac", 11, seats);
    spec.options.insert("turn_ms".into(), TURN_MS.to_string());
    let record = tokio::time::timeout(
        Duration::from_secs(120),
        find_game("nac").unwrap().play(&spec),
    )
    .await
    .expect("the match completes")
    .expect("the match can be set up");
    let mut times = Vec::new();
    let mut bad = Vec::new();
    for line in record.replay.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        // Reply times are in the seat record; the moves' status in the turn events.
        if v["event"] == "seat" && v["kind"] == "turn" {
            let seat = v["seat"].as_u64().unwrap() as usize;
            if let (true, Some(us)) = (honest.contains(&seat), v["time_us"].as_u64()) {
                times.push(us as f64 / 1000.0);
            }
        }
        if v["event"] != "turn" {
            continue;
        }
        for m in v["moves"].as_array().unwrap() {
            let seat = m["seat"].as_u64().unwrap() as usize;
            if !honest.contains(&seat) {
                continue;
            }
            if m["status"] != "ok" {
                bad.push(format!("turn {} seat {seat}: {m}", v["turn"]));
            }
        }
    }
    assert!(!times.is_empty(), "no moves recorded");
    (times, bad)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(0.0, f64::max)
}

/// Three honest bots (120 ms of CPU per turn) beside a neighbour with 16 spinning children
/// reply as they do beside a quiet neighbour: no timeouts, and a median within a small factor of
/// the one measured alone (both runs share whatever else loads the machine).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bot_with_many_spinning_processes_does_not_starve_the_others() {
    let report = SandboxReport::current(SandboxLevel::Best);
    if !report.layers.contains(&Layer::Cpu) {
        eprintln!("SKIPPED: layer cpu unavailable: {}", report.missing_text());
        return;
    }
    let honest = [1, 2, 3];
    let (alone, bad) = reply_times(
        vec![
            bot("burn", "0"),
            bot("burn", THINK_MS),
            bot("burn", THINK_MS),
            bot("burn", THINK_MS),
        ],
        &honest,
    )
    .await;
    assert!(bad.is_empty(), "honest bots failed alone: {bad:?}");
    let (crowded, bad) = reply_times(
        vec![
            bot("spin", SPINNERS),
            bot("burn", THINK_MS),
            bot("burn", THINK_MS),
            bot("burn", THINK_MS),
        ],
        &honest,
    )
    .await;
    eprintln!(
        "honest replies (ms): alone median {:.0} max {:.0}; beside {SPINNERS} spinners median {:.0} max {:.0}",
        median(&alone),
        max(&alone),
        median(&crowded),
        max(&crowded)
    );
    assert!(
        bad.is_empty(),
        "honest bots timed out or failed {} times beside the spinning neighbour, first: {:?}",
        bad.len(),
        &bad[..bad.len().min(3)]
    );
    let bound = 2.5 * median(&alone) + 100.0;
    assert!(
        median(&crowded) <= bound,
        "honest bots were starved: median reply {:.0} ms beside the spinners, {:.0} ms alone \
         (bound {bound:.0} ms)",
        median(&crowded),
        median(&alone)
    );
}
