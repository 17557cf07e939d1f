//! The spec's example exchange (§4.11, copied to `tests/data/spec_example.txt`) reproduced byte
//! for byte, with our `timeLimit` (1000), our `randomSeed`, and `roleNumMap` in alphabetical order.

use kakehiki_werewolf::rng::wire_random_seed;
use kakehiki_werewolf::wire::{encode_packet, name_packet, parse_target, Body, Histories};
use kakehiki_werewolf::{Pending, Reply, Request, Role, Settings, Talk, Werewolf};

/// The `S>` lines of the example, in order.
fn spec_packets() -> Vec<String> {
    let text = include_str!("../data/spec_example.txt");
    text.lines()
        .filter_map(|l| l.strip_prefix("S> "))
        .filter(|l| l.starts_with('{'))
        .map(str::to_string)
        .collect()
}

const SPEC_ROLE_NUM_MAP: &str = r#""roleNumMap":{"FREEMASON":0,"FOX":0,"BODYGUARD":1,"ANY":0,"WEREWOLF":3,"MEDIUM":1,"POSSESSED":1,"SEER":1,"VILLAGER":8}"#;
const OUR_ROLE_NUM_MAP: &str = r#""roleNumMap":{"ANY":0,"BODYGUARD":1,"FOX":0,"FREEMASON":0,"MEDIUM":1,"POSSESSED":1,"SEER":1,"VILLAGER":8,"WEREWOLF":3}"#;

fn talk(agent: usize, idx: u32, turn: u32, text: &str) -> Talk {
    Talk {
        idx,
        day: 1,
        turn,
        agent,
        text: text.to_string(),
        parsed: None,
    }
}

/// A game whose agent 13 is a villager with every ROLE answered `none`: the first such seed.
fn game() -> (Werewolf, Histories, u64) {
    for seed in 0.. {
        let mut names: Vec<String> = (1..=15).map(|i| format!("a{i}")).collect();
        names[12] = "probe01".into();
        let mut g = Werewolf::new(Settings::aiwolf(15).unwrap(), seed, names).unwrap();
        while let Pending::Ask {
            request: Request::Role,
            ..
        } = g.pending()
        {
            g.reply(Reply::Text("none".into())).unwrap();
        }
        if g.role(13) == Role::Villager {
            return (g, Histories::new(15), seed);
        }
    }
    unreachable!()
}

#[test]
fn the_example_exchange_byte_for_byte() {
    let spec = spec_packets();
    assert_eq!(spec.len(), 9);
    let line = |s: String| s + "\n";

    assert_eq!(name_packet(), line(spec[0].clone()));
    assert_eq!(
        encode_packet(Request::Role, &Body::Bare),
        line(spec[1].clone())
    );

    let (mut g, mut h, seed) = game();
    // INITIALIZE: ours differs only in timeLimit, randomSeed and the order of roleNumMap.
    let init = spec[2]
        .replace(r#""timeLimit":-1"#, r#""timeLimit":1000"#)
        .replace(
            r#""randomSeed":-6303698791054756445"#,
            &format!(r#""randomSeed":{}"#, wire_random_seed(seed)),
        )
        .replace(SPEC_ROLE_NUM_MAP, OUR_ROLE_NUM_MAP);
    assert_eq!(g.pending(), Pending::Notify(Request::Initialize));
    assert_eq!(h.packet(&g, 13, Request::Initialize), line(init.clone()));
    g.ack().unwrap();

    // DAILY_INITIALIZE, day 0: INITIALIZE's gameInfo without gameSetting.
    let gi_end = init.find(",\"gameSetting\":").unwrap();
    let daily0 = format!(
        "{},\"gameSetting\":null,\"request\":\"DAILY_INITIALIZE\",\"talkHistory\":null,\"whisperHistory\":null}}",
        &init[..gi_end]
    );
    assert_eq!(g.pending(), Pending::Notify(Request::DailyInitialize));
    assert_eq!(h.packet(&g, 13, Request::DailyInitialize), line(daily0));
    g.ack().unwrap();
    assert_eq!(
        h.packet(&g, 13, Request::DailyFinish),
        line(spec[3].clone())
    );
    g.ack().unwrap();

    // Night 0: the wolves whisper and the seer divines; the villager gets nothing.
    while let Pending::Ask { agent, request } = g.pending() {
        assert_ne!(agent, 13);
        let r = if request == Request::Whisper {
            Reply::Text("Over".into())
        } else {
            Reply::Target(Some(13))
        };
        g.reply(r).unwrap();
    }
    assert_eq!(g.pending(), Pending::Notify(Request::DailyInitialize));
    assert_eq!(
        h.packet(&g, 13, Request::DailyInitialize),
        line(spec[4].clone())
    );
    g.ack().unwrap();

    // TALK diffs as in the example (the spec omits idx 2–8; we fill them in the same way).
    let filler: Vec<Talk> = (2..=8).map(|i| talk(i as usize, i, 0, "Over")).collect();
    let mut first = vec![
        talk(10, 0, 0, "VOTE Agent[05]"),
        talk(9, 1, 0, "VOTE Agent[10]"),
    ];
    first.extend(filler.iter().cloned());
    first.push(talk(12, 9, 0, "VOTE Agent[15]"));
    let filler_json: Vec<String> = filler
        .iter()
        .map(|t| {
            format!(
                r#"{{"agent":{},"day":1,"idx":{},"text":"Over","turn":0}}"#,
                t.agent, t.idx
            )
        })
        .collect();
    let expect_first = spec[5].replace(
        ", …idx 2–8 omitted…, ",
        &format!(",{},", filler_json.join(",")),
    );
    assert_eq!(
        encode_packet(
            Request::Talk,
            &Body::Diff {
                talk: &first,
                whisper: &[]
            }
        ),
        line(expect_first)
    );
    let second = vec![
        talk(13, 10, 0, "COMINGOUT Agent[13] VILLAGER"),
        talk(6, 11, 0, "VOTE Agent[11]"),
        talk(14, 12, 0, "VOTE Agent[12]"),
        talk(15, 13, 0, "VOTE Agent[04]"),
        talk(7, 14, 0, "VOTE Agent[10]"),
        talk(11, 15, 1, "REQUEST ANY (VOTE Agent[01])"),
    ];
    assert_eq!(
        encode_packet(
            Request::Talk,
            &Body::Diff {
                talk: &second,
                whisper: &[]
            }
        ),
        line(spec[6].clone())
    );
    let last = vec![
        talk(13, 115, 7, "Over"),
        talk(6, 116, 7, "Over"),
        talk(5, 117, 7, "Over"),
        talk(2, 118, 7, "Over"),
        talk(10, 119, 7, "Over"),
    ];
    assert_eq!(
        encode_packet(
            Request::DailyFinish,
            &Body::Diff {
                talk: &last,
                whisper: &[]
            }
        ),
        line(spec[7].clone())
    );

    // Now the engine's own day 1: agent 13's diffs start at its own utterance, and the VOTE diff
    // after DAILY_FINISH is empty, exactly as in the example.
    let mut asked13 = 0;
    let mut sent_upto = 0usize;
    loop {
        match g.pending() {
            Pending::Ask {
                agent: 13,
                request: Request::Talk,
            } => {
                let p = h.packet(&g, 13, Request::Talk);
                let v: serde_json::Value = serde_json::from_str(&p).unwrap();
                let hist = v["talkHistory"].as_array().unwrap();
                if let Some(first) = hist.first() {
                    assert_eq!(first["idx"].as_u64().unwrap() as usize, sent_upto);
                }
                if asked13 > 0 {
                    assert_eq!(
                        hist[0]["agent"], 13,
                        "the diff repeats nothing but starts at our own entry"
                    );
                }
                sent_upto = g.talks().len();
                asked13 += 1;
                let text = match asked13 {
                    1 => "COMINGOUT Agent[13] VILLAGER",
                    2 => "Skip",
                    _ => "Over",
                };
                g.reply(Reply::Text(text.into())).unwrap();
            }
            Pending::Ask {
                request: Request::Talk,
                ..
            } => {
                let text = if g.talks().len() < 30 {
                    "VOTE Agent[05]"
                } else {
                    "Over"
                };
                g.reply(Reply::Text(text.into())).unwrap();
            }
            Pending::Notify(Request::DailyFinish) => {
                let p = h.packet(&g, 13, Request::DailyFinish);
                assert!(p.starts_with(r#"{"gameInfo":null,"gameSetting":null,"request":"DAILY_FINISH","talkHistory":["#));
                g.ack().unwrap();
            }
            Pending::Ask {
                agent: 13,
                request: Request::Vote,
            } => {
                assert_eq!(h.packet(&g, 13, Request::Vote), line(spec[8].clone()));
                break;
            }
            Pending::Ask {
                request: Request::Vote,
                ..
            } => {
                g.reply(Reply::Target(Some(3))).unwrap();
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(parse_target(r#"{"agentIdx":3}"#, 15), Some(3));
    // Matching log lines.
    assert!(g
        .log()
        .iter()
        .any(|l| l == "0,status,13,VILLAGER,ALIVE,probe01"));
    let ours = g.talks().iter().find(|t| t.agent == 13).unwrap();
    let expect = format!("1,talk,{},0,13,COMINGOUT Agent[13] VILLAGER", ours.idx);
    assert!(g.log().contains(&expect));
    let skip = g
        .talks()
        .iter()
        .find(|t| t.agent == 13 && t.text == "Skip")
        .unwrap();
    assert!(g
        .log()
        .contains(&format!("1,talk,{},{},13,Skip", skip.idx, skip.turn)));
}

#[test]
fn game_info_always_has_21_keys_and_setting_19() {
    let (g, mut h, _) = game();
    let p = h.packet(&g, 13, Request::Initialize);
    let v: serde_json::Value = serde_json::from_str(&p).unwrap();
    assert_eq!(v.as_object().unwrap().len(), 5);
    assert_eq!(v["gameInfo"].as_object().unwrap().len(), 21);
    assert_eq!(v["gameSetting"].as_object().unwrap().len(), 19);
    assert_eq!(v["gameSetting"]["roleNumMap"].as_object().unwrap().len(), 9);
    // Compact, one line, ASCII.
    assert!(
        p.ends_with("}\n") && p.matches('\n').count() == 1 && p.is_ascii() && !p.contains(": ")
    );
}
