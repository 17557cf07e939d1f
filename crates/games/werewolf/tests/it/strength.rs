//! Strength of the built-in agents (§8 of the issue): `sample` villagers against `random` wolves,
//! and `sample` wolves against `random` villagers, must each win at least 80%.
//!
//! The 1,000-game measurement is `cargo test -p kakehiki-werewolf --test it -- strength:: --ignored`;
//! the default run plays 200 games per side (still well inside the 80% bound's margin).

use kakehiki_werewolf::bots::{builtin, play_in_process, Agent};
use kakehiki_werewolf::{Pending, Reply, Request, Settings, Team, Werewolf};

/// Win rate of `side` when it is played by `strong` and the other team by `weak`.
fn win_rate(rules: &str, side: Team, strong: &str, weak: &str, games: u64) -> f64 {
    let mut wins = 0;
    for seed in 0..games {
        let settings = Settings::for_rules(rules, 15).unwrap();
        let names: Vec<String> = (1..=15).map(|i| format!("a{i}")).collect();
        let mut g = Werewolf::new(settings, seed, names).unwrap();
        // Both agents answer ROLE with "none"; answer for them, then seat them by the deal.
        while let Pending::Ask {
            request: Request::Role,
            ..
        } = g.pending()
        {
            g.reply(Reply::Text("none".into())).unwrap();
        }
        let roles = g.roles().to_vec();
        let mut agents: Vec<Box<dyn Agent>> = (1..=15)
            .map(|a| {
                let name = if roles[a - 1].team() == side {
                    strong
                } else {
                    weak
                };
                builtin(name, seed, a).unwrap()
            })
            .collect();
        if play_in_process(&mut g, &mut agents) == Some(side) {
            wins += 1;
        }
    }
    wins as f64 / games as f64
}

#[test]
fn sample_village_beats_random_wolves() {
    for rules in ["aiwolf-0.6", "seed-2015"] {
        let r = win_rate(rules, Team::Villager, "sample", "random", 200);
        eprintln!("{rules}: sample village vs random wolves: {r:.3}");
        assert!(r >= 0.8, "{rules}: {r}");
    }
}

#[test]
fn sample_wolves_beat_random_village() {
    for rules in ["aiwolf-0.6", "seed-2015"] {
        let r = win_rate(rules, Team::Werewolf, "sample", "random", 200);
        eprintln!("{rules}: sample wolves vs random village: {r:.3}");
        assert!(r >= 0.8, "{rules}: {r}");
    }
}

#[test]
#[ignore = "1,000 games per side; run with --ignored for the full measurement"]
fn thousand_games_each_side() {
    for rules in ["aiwolf-0.6", "seed-2015"] {
        let v = win_rate(rules, Team::Villager, "sample", "random", 1000);
        let w = win_rate(rules, Team::Werewolf, "sample", "random", 1000);
        eprintln!("{rules}: 1000 games: sample village {v:.3}, sample wolves {w:.3}");
        assert!(v >= 0.8 && w >= 0.8, "{rules}: village {v}, wolves {w}");
    }
}

/// Built-in agents see every request, ROLE included (before the deal), and never give an
/// invalid answer: no self votes, no attacks on wolves, only valid talk.
#[test]
fn builtin_agents_never_answer_invalidly() {
    use kakehiki_werewolf::GameInfo;
    for seed in 0..60 {
        for rules in ["aiwolf-0.6", "seed-2015"] {
            let bot = if seed % 2 == 0 { "sample" } else { "random" };
            let names: Vec<String> = (1..=15).map(|i| format!("a{i}")).collect();
            let mut g =
                Werewolf::new(Settings::for_rules(rules, 15).unwrap(), seed, names).unwrap();
            let mut agents: Vec<Box<dyn Agent>> =
                (1..=15).map(|a| builtin(bot, seed, a).unwrap()).collect();
            loop {
                match g.pending() {
                    Pending::Done => break,
                    Pending::Notify(_) => g.ack().unwrap(),
                    Pending::Ask { agent, request } => {
                        let r = {
                            let info = GameInfo::for_agent(&g, agent, false);
                            agents[agent - 1].act(request, &info, g.settings())
                        };
                        let s = g.reply(r).unwrap();
                        assert!(
                            !s.invalid,
                            "{rules} seed {seed}: {bot} agent {agent} {}: {s:?}",
                            request.name()
                        );
                    }
                }
            }
        }
    }
}
