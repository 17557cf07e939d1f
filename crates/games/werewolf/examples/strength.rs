//! Win rates of the built-in agents, and one game's log.
//!
//! `cargo run --release -p kakehiki-werewolf --example strength -- [games] [rules] [show-seed]`

use kakehiki_werewolf::bots::{builtin, play_in_process, Agent};
use kakehiki_werewolf::{Pending, Reply, Request, Settings, Team, Werewolf};

fn play(
    rules: &str,
    seed: u64,
    side: Team,
    strong: &str,
    weak: &str,
) -> (Option<Team>, Vec<String>) {
    let names: Vec<String> = (1..=15).map(|i| format!("a{i}")).collect();
    let mut g =
        Werewolf::new(Settings::for_rules(rules, 15).expect("rules"), seed, names).expect("game");
    while let Pending::Ask {
        request: Request::Role,
        ..
    } = g.pending()
    {
        g.reply(Reply::Text("none".into())).expect("role");
    }
    let roles = g.roles().to_vec();
    let mut agents: Vec<Box<dyn Agent>> = (1..=15)
        .map(|a| {
            builtin(
                if roles[a - 1].team() == side {
                    strong
                } else {
                    weak
                },
                seed,
                a,
            )
            .expect("bot")
        })
        .collect();
    let w = play_in_process(&mut g, &mut agents);
    (w, g.log().to_vec())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let games: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let rules = args.get(2).cloned().unwrap_or_else(|| "aiwolf-0.6".into());
    if let Some(seed) = args.get(3).and_then(|s| s.parse().ok()) {
        let (w, log) = play(&rules, seed, Team::Villager, "sample", "random");
        for l in log
            .iter()
            .filter(|l| !l.contains(",status,") || l.starts_with("0,"))
        {
            println!("{l}");
        }
        println!("winner: {w:?}");
        return;
    }
    for (side, label) in [
        (Team::Villager, "sample village vs random wolves"),
        (Team::Werewolf, "sample wolves vs random village"),
    ] {
        let mut wins = 0;
        let mut days = 0u64;
        for seed in 0..games {
            let (w, log) = play(&rules, seed, side, "sample", "random");
            wins += u64::from(w == Some(side));
            days += log
                .last()
                .and_then(|l| l.split(',').next())
                .and_then(|d| d.parse::<u64>().ok())
                .unwrap_or(0);
        }
        println!(
            "{rules}: {label}: {wins}/{games} = {:.3} (mean last day {:.2})",
            wins as f64 / games as f64,
            days as f64 / games as f64
        );
    }
}
