//! Requests per game and time per game of 15 `sample` agents (aiwolf-0.6), without criterion.
//!
//! `cargo run --release -p kakehiki-werewolf --example count_requests`

use kakehiki_werewolf::bots::{builtin, Agent};
use kakehiki_werewolf::{GameInfo, Pending, Settings, Werewolf};
use std::collections::BTreeMap;
fn main() {
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut days = 0;
    let t = std::time::Instant::now();
    let games = 300;
    for seed in 0..games {
        let mut g = Werewolf::new(
            Settings::aiwolf(15).expect("15 players"),
            seed,
            (1..=15).map(|i| format!("s{i}")).collect(),
        )
        .unwrap();
        let mut agents: Vec<Box<dyn Agent>> = (1..=15)
            .map(|a| builtin("sample", seed, a).unwrap())
            .collect();
        loop {
            match g.pending() {
                Pending::Done => break,
                Pending::Notify(_) => g.ack().unwrap(),
                Pending::Ask { agent, request } => {
                    *counts.entry(request.name()).or_default() += 1;
                    let info = GameInfo::for_agent(&g, agent, false);
                    let r = agents[agent - 1].act(request, &info, g.settings());
                    g.reply(r).unwrap();
                }
            }
        }
        days += g.day();
    }
    let per_game = t.elapsed() / games as u32;
    let mean_days = f64::from(days) / games as f64;
    let per_request: Vec<_> = counts.iter().map(|(k, v)| (k, v / games)).collect();
    println!(
        "{per_game:?} per game, mean last day {mean_days:.2}, requests per game {per_request:?}"
    );
}
