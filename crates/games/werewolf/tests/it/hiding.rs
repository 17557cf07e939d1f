//! Information hiding: over random games (both rule sets, several village sizes, random agents),
//! every packet every seat receives is decoded and checked: roles, whispers, divine and medium
//! results, guard targets and attack votes reach only the seats allowed to see them.

use proptest::prelude::*;
use serde_json::Value;

use kakehiki_werewolf::bots::{builtin, Agent};
use kakehiki_werewolf::wire::Histories;
use kakehiki_werewolf::{GameInfo, Pending, Request, Role, Settings, Werewolf};

fn check_info(g: &Werewolf, agent: usize, request: Request, gi: &Value) {
    let role = g.role(agent);
    let wolf = role == Role::Werewolf;
    let ctx = format!("agent {agent} ({role}) {} day {}", request.name(), g.day());
    assert_eq!(gi["agent"], agent, "{ctx}");
    let role_map = gi["roleMap"].as_object().unwrap();
    for (k, v) in role_map {
        let a: usize = k.parse().unwrap();
        assert_eq!(
            v.as_str().unwrap(),
            g.role(a).name(),
            "{ctx}: roleMap tells the truth"
        );
        if request != Request::Finish {
            assert!(
                a == agent || (wolf && g.role(a) == Role::Werewolf),
                "{ctx}: sees the role of {a} ({})",
                g.role(a)
            );
        }
    }
    if request == Request::Finish {
        assert_eq!(
            role_map.len(),
            g.player_num(),
            "{ctx}: FINISH reveals every role"
        );
    } else {
        assert!(role_map.contains_key(&agent.to_string()), "{ctx}: own role");
    }
    if !wolf {
        assert_eq!(gi["whisperList"], Value::Array(vec![]), "{ctx}: whispers");
        assert_eq!(
            gi["attackVoteList"],
            Value::Array(vec![]),
            "{ctx}: attack votes"
        );
        assert_eq!(
            gi["latestAttackVoteList"],
            Value::Array(vec![]),
            "{ctx}: attack votes"
        );
        assert_eq!(gi["attackedAgent"], -1, "{ctx}: attack target");
        assert_eq!(
            gi["remainWhisperMap"],
            serde_json::json!({}),
            "{ctx}: whisper map"
        );
    }
    if role != Role::Seer {
        assert!(gi["divineResult"].is_null(), "{ctx}: divine result");
    } else if !gi["divineResult"].is_null() {
        assert_eq!(gi["divineResult"]["agent"], agent);
    }
    if role != Role::Medium {
        assert!(gi["mediumResult"].is_null(), "{ctx}: medium result");
    }
    if role != Role::Bodyguard {
        assert_eq!(gi["guardedAgent"], -1, "{ctx}: guard target");
    }
}

fn check_packet(g: &Werewolf, agent: usize, request: Request, packet: &str) {
    assert!(packet.is_ascii() && packet.ends_with('\n') && packet.matches('\n').count() == 1);
    let v: Value = serde_json::from_str(packet).unwrap();
    assert_eq!(v["request"], request.name());
    if !v["gameInfo"].is_null() {
        check_info(g, agent, request, &v["gameInfo"]);
    }
    if let Some(w) = v["whisperHistory"].as_array() {
        if g.role(agent) != Role::Werewolf {
            assert!(
                w.is_empty(),
                "agent {agent} ({}) got whispers: {w:?}",
                g.role(agent)
            );
        }
    }
    if let Some(s) = v["gameSetting"].as_object() {
        // The engine seed would reveal the deal; it is never sent.
        assert_ne!(s["randomSeed"].as_i64(), Some(g.seed() as i64));
    }
}

fn play_checked(settings: Settings, seed: u64, bot: &str) {
    let n = settings.player_num();
    let mut g = Werewolf::new(settings, seed, (1..=n).map(|i| format!("x{i}")).collect()).unwrap();
    let mut agents: Vec<Box<dyn Agent>> = (1..=n).map(|a| builtin(bot, seed, a).unwrap()).collect();
    let mut h = Histories::new(n);
    let mut packets = 0;
    loop {
        match g.pending() {
            Pending::Done => break,
            Pending::Notify(req) => {
                for a in 1..=n {
                    let p = h.packet(&g, a, req);
                    check_packet(&g, a, req, &p);
                    packets += 1;
                }
                g.ack().unwrap();
            }
            Pending::Ask { agent, request } => {
                let p = h.packet(&g, agent, request);
                check_packet(&g, agent, request, &p);
                packets += 1;
                let info = GameInfo::for_agent(&g, agent, false);
                // Built-in agents get exactly the (filtered) gameInfo a TCP agent would.
                let mut encoded = String::new();
                kakehiki_werewolf::wire::write_game_info(&mut encoded, &info);
                check_info(&g, agent, request, &serde_json::from_str(&encoded).unwrap());
                let r = agents[agent - 1].act(request, &info, g.settings());
                g.reply(r).unwrap();
            }
        }
    }
    assert!(packets > 50 && g.winner().is_some());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn no_packet_leaks_hidden_information(seed in any::<u64>(), rules in 0usize..4, bot in 0usize..2) {
        let settings = match rules {
            0 => Settings::aiwolf(15).unwrap(),
            1 => Settings::seed2015(),
            2 => Settings::aiwolf(5).unwrap(),
            _ => {
                let mut s = Settings::aiwolf(9).unwrap();
                s.talk_on_first_day = true;
                s.whisper_before_revote = true;
                s
            }
        };
        play_checked(settings, seed, ["random", "sample"][bot]);
    }
}
