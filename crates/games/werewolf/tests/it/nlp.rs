//! The natural-language division's game: whole games of built-in agents, hidden information,
//! turn handling, length limits, re-votes and the error-ratio end.

use std::sync::Arc;

use kakehiki_werewolf::nlp::game::{AskError, ChatMessage, NlpGame, Table};
use kakehiki_werewolf::nlp::inproc::{block_on_ready, bot_chat, play_builtin, BotTable};
use kakehiki_werewolf::nlp::packet::{Packet, RequestKind};
use kakehiki_werewolf::nlp::settings::{NlpConfig, NlpSettings, OnErrorRatio};
use kakehiki_werewolf::{Role, Team};
use serde_json::Value;

/// Seats answered by a closure; every packet is kept.
struct Scripted<F: FnMut(usize, &Packet) -> Result<String, AskError> + Send> {
    answer: F,
    sent: Vec<(usize, Packet)>,
    fatal_notify: Vec<usize>,
}

impl<F: FnMut(usize, &Packet) -> Result<String, AskError> + Send> Table for Scripted<F> {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        self.sent.push((agent, packet));
        if self.fatal_notify.contains(&agent) {
            return Err(());
        }
        Ok(())
    }
    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        let r = (self.answer)(agent, &packet);
        self.sent.push((agent, packet));
        r
    }
    async fn chat(
        &mut self,
        _open: Vec<usize>,
        _d: u64,
        _accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
    }
}

/// A recording wrapper around built-in agents.
struct Recording {
    inner: BotTable,
    sent: Vec<(usize, Packet)>,
}

impl Table for Recording {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        self.inner.bots[agent].answer(&packet);
        self.sent.push((agent, packet));
        Ok(())
    }
    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        let r = self.inner.bots[agent]
            .answer(&packet)
            .ok_or(AskError::Failed);
        self.sent.push((agent, packet));
        r
    }
    async fn chat(
        &mut self,
        open: Vec<usize>,
        _d: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        let sent = &mut self.sent;
        let mut wrapped = |m: ChatMessage| {
            let out = accept(m);
            sent.extend(out.iter().cloned());
            out
        };
        bot_chat(&mut self.inner.bots, open, 64, &mut wrapped);
    }
}

fn settings(n: usize) -> Arc<NlpSettings> {
    Arc::new(NlpSettings::defaults(n).unwrap())
}

#[test]
fn whole_games_of_5_9_and_13_builtin_players_end_with_a_winner() {
    for n in [5, 9, 13] {
        let mut wins = [0; 2];
        for seed in 0..20u64 {
            let bots: Vec<&str> = (0..n)
                .map(|i| ["sample", "sample-en", "random", "random-en"][i % 4])
                .collect();
            let (r, game) = play_builtin(settings(n), seed, &bots).unwrap();
            let w = r
                .winner
                .expect("a game of well-behaved bots ends with a winner");
            wins[(w == Team::Werewolf) as usize] += 1;
            assert!(!r.aborted);
            // The winner follows the rule: no wolves left, or wolves ≥ humans.
            let alive_wolves = (0..n)
                .filter(|&a| r.alive[a] && r.roles[a] == Role::Werewolf)
                .count();
            let alive_humans = (0..n)
                .filter(|&a| r.alive[a] && r.roles[a] != Role::Werewolf)
                .count();
            match w {
                Team::Villager => assert_eq!(alive_wolves, 0),
                _ => assert!(alive_wolves >= alive_humans),
            }
            assert!(game.log().last().unwrap().contains(",result,"));
            assert!(game.all_talks().count() > 0);
        }
        assert!(
            wins[0] > 0 && wins[1] > 0,
            "{n} players: both teams win sometimes: {wins:?}"
        );
    }
}

#[test]
fn a_game_is_reproducible_from_its_seed() {
    let bots = ["sample"; 13];
    let (_, a) = play_builtin(settings(13), 42, &bots).unwrap();
    let (_, b) = play_builtin(settings(13), 42, &bots).unwrap();
    let (_, c) = play_builtin(settings(13), 43, &bots).unwrap();
    assert_eq!(a.log(), b.log());
    assert_ne!(a.log(), c.log());
}

#[test]
fn the_role_deal_follows_the_tables() {
    for (n, wolves, seers, guards, mediums) in [(5, 1, 1, 0, 0), (9, 2, 1, 1, 1), (13, 3, 1, 1, 1)]
    {
        let g = NlpGame::new(settings(n), 7, vec![String::new(); n]);
        let c = |r| g.roles().iter().filter(|x| **x == r).count();
        assert_eq!(
            (
                c(Role::Werewolf),
                c(Role::Seer),
                c(Role::Bodyguard),
                c(Role::Medium),
                c(Role::Possessed)
            ),
            (wolves, seers, guards, mediums, 1)
        );
    }
}

/// Everything each agent received, checked against what it may know.
fn check_hidden_information(n: usize, seed: u64) {
    let names: Vec<&str> = (0..n)
        .map(|i| if i % 2 == 0 { "sample" } else { "random" })
        .collect();
    let mut t = Recording {
        inner: BotTable::new(&names, seed).unwrap(),
        sent: Vec::new(),
    };
    let mut game = NlpGame::new(
        settings(n),
        seed,
        names.iter().map(|s| s.to_string()).collect(),
    );
    block_on_ready(game.run(&mut t));
    let roles = game.roles().to_vec();
    let agent_names = game.names().to_vec();
    let role_of = |name: &str| roles[agent_names.iter().position(|n| **n == *name).unwrap()];
    let mut whispers_seen = 0;
    for (a, p) in &t.sent {
        let my = roles[*a];
        if let Some(h) = &p.whisper_history {
            assert_eq!(my, Role::Werewolf, "whispers reached a {my:?}");
            whispers_seen += h.len();
        }
        if let Some(w) = &p.new_whisper {
            assert_eq!(
                my,
                Role::Werewolf,
                "a whisper broadcast reached {my:?}: {w:?}"
            );
        }
        assert!(p.request != RequestKind::Whisper || my == Role::Werewolf);
        assert!(p.request != RequestKind::Attack || my == Role::Werewolf);
        assert!(p.request != RequestKind::Divine || my == Role::Seer);
        assert!(p.request != RequestKind::Guard || my == Role::Bodyguard);
        let Some(info) = &p.info else { continue };
        assert_eq!(info.agent, agent_names[*a]);
        if p.request == RequestKind::Finish {
            assert_eq!(info.role_map.len(), n, "FINISH reveals every role");
            continue;
        }
        for (name, role) in &info.role_map {
            let ok = *name == agent_names[*a] || (my == Role::Werewolf && *role == "WEREWOLF");
            assert!(ok, "{my:?} saw the role of {name}: {role}");
            assert_eq!(role_of(name).name(), *role);
        }
        assert!(info.divine_result.is_none() || my == Role::Seer);
        assert!(info.medium_result.is_none() || my == Role::Medium);
        assert!(info.attack_vote_list.is_empty() || my == Role::Werewolf);
        if let Some(j) = &info.divine_result {
            assert_eq!(
                j.result,
                role_of(&j.target).species().name(),
                "divine results are true"
            );
        }
        assert!(
            p.setting.is_none()
                || matches!(
                    p.request,
                    RequestKind::Initialize | RequestKind::DailyInitialize
                )
        );
        assert!(info.profile.is_none() || p.request == RequestKind::Initialize);
    }
    if n >= 9 {
        assert!(whispers_seen > 0, "the wolves whispered");
    }
}

#[test]
fn hidden_information_reaches_only_those_allowed() {
    for n in [5, 9, 13] {
        for seed in 0..5 {
            check_hidden_information(n, seed);
        }
    }
}

#[test]
fn group_chat_broadcasts_reach_only_the_phase_members() {
    let mut c = NlpConfig::for_players(9);
    c.game.talk.duration = Some("1s".into());
    c.game.whisper.duration = Some("500ms".into());
    let s = Arc::new(c.settings().unwrap());
    let names = ["sample"; 9];
    let mut t = Recording {
        inner: BotTable::new(&names, 3).unwrap(),
        sent: Vec::new(),
    };
    let mut game = NlpGame::new(s, 3, names.iter().map(|s| s.to_string()).collect());
    let r = block_on_ready(game.run(&mut t));
    assert!(r.winner.is_some());
    let roles = game.roles().to_vec();
    let kinds: Vec<RequestKind> = t.sent.iter().map(|(_, p)| p.request).collect();
    for k in [
        RequestKind::TalkPhaseStart,
        RequestKind::TalkBroadcast,
        RequestKind::TalkPhaseEnd,
        RequestKind::WhisperPhaseStart,
        RequestKind::WhisperPhaseEnd,
    ] {
        assert!(kinds.contains(&k), "{k:?} was sent");
    }
    assert!(
        !kinds.contains(&RequestKind::Talk),
        "no turn-based TALK in group-chat mode"
    );
    // The setting tells the mode: each phase's `duration` in milliseconds.
    let setting = t.sent.iter().find_map(|(_, p)| p.setting.clone()).unwrap();
    let json = serde_json::to_value(&*setting).unwrap();
    assert_eq!(json["talk"]["duration"], 1_000);
    assert_eq!(json["whisper"]["duration"], 500);
    for (a, p) in &t.sent {
        if matches!(
            p.request,
            RequestKind::WhisperPhaseStart
                | RequestKind::WhisperBroadcast
                | RequestKind::WhisperPhaseEnd
        ) {
            assert_eq!(roles[*a], Role::Werewolf);
        }
    }
    // Per-agent counts hold: no agent has more than per_agent talks a day.
    for day in 0..=r.last_day {
        for name in game.names() {
            let k = game
                .all_talks()
                .filter(|t| t.day == day && &t.agent == name)
                .count();
            assert!(k <= 4, "{name} talked {k} times on day {day}");
        }
    }
}

fn five() -> Arc<NlpSettings> {
    let mut c = NlpConfig::for_players(5);
    c.game.talk.max_skip = 1;
    c.game.talk.max_count.per_agent = 3;
    c.game.talk.max_count.per_day = 3;
    c.game.max_day = 0;
    Arc::new(c.settings().unwrap())
}

#[test]
fn skip_limit_turns_a_second_skip_into_over_and_errors_skip_for_free() {
    // Agent 0 always skips; agent 1 fails every request; the others talk.
    let mut t = Scripted {
        answer: |a: usize, p: &Packet| match (a, p.request) {
            (0, RequestKind::Talk) => Ok("Skip".into()),
            (1, RequestKind::Talk) => Err(AskError::Failed),
            (_, RequestKind::Talk) => Ok("hello".into()),
            _ => Ok("Agent[01]".into()),
        },
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(five(), 1, vec!["x".into(); 5]);
    block_on_ready(game.run(&mut t));
    let day0: Vec<_> = game.all_talks().filter(|t| t.day == 0).collect();
    let of = |name: &str| {
        day0.iter()
            .filter(|t| *t.agent == *name)
            .map(|t| &*t.text)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        of("Agent[01]"),
        vec!["Skip", "Over"],
        "one skip allowed, the next is Over"
    );
    assert_eq!(
        of("Agent[02]"),
        vec!["Skip", "Skip", "Skip"],
        "failed requests are free skips"
    );
    assert_eq!(
        of("Agent[03]"),
        vec!["hello", "hello", "hello"],
        "per_agent 3"
    );
    // remain_count and remain_skip are announced in TALK requests.
    let first = t
        .sent
        .iter()
        .find(|(a, p)| *a == 2 && p.request == RequestKind::Talk)
        .unwrap();
    let info = first.1.info.as_ref().unwrap();
    assert_eq!((info.remain_count, info.remain_skip), (Some(2), Some(1)));
    // Skip and over flags on the wire.
    let over = day0.iter().find(|t| &*t.text == "Over").unwrap();
    assert!(over.over && !over.skip);
}

#[test]
fn talk_history_is_sent_as_differences() {
    let mut t = Scripted {
        answer: |a: usize, p: &Packet| match p.request {
            RequestKind::Talk => Ok(format!("talk of {a}")),
            _ => Ok("Agent[01]".into()),
        },
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(five(), 2, vec!["x".into(); 5]);
    block_on_ready(game.run(&mut t));
    for a in 0..5 {
        let mut seen = Vec::new();
        for (_, p) in t
            .sent
            .iter()
            .filter(|(b, p)| *b == a && p.info.as_ref().is_some_and(|i| i.day == 0))
        {
            if let Some(h) = &p.talk_history {
                for e in h {
                    assert!(!seen.contains(&e.idx), "talk {} sent twice to {a}", e.idx);
                    seen.push(e.idx);
                }
            }
        }
        let total = game.all_talks().filter(|t| t.day == 0).count();
        assert_eq!(
            seen.len(),
            total,
            "agent {a} received every talk once (DAILY_FINISH carries the rest)"
        );
    }
}

#[test]
fn a_tied_vote_is_repeated_then_settled_at_random_among_the_tied() {
    let mut c = NlpConfig::for_players(5);
    c.game.vote.max_count = 3;
    c.game.max_day = 1;
    let s = Arc::new(c.settings().unwrap());
    // Agents 0-1 vote Agent[03], 2-3 vote Agent[04], 4 votes a dead or unknown name.
    let mut t = Scripted {
        answer: |a: usize, p: &Packet| match p.request {
            RequestKind::Vote => Ok(match a {
                0 | 1 => "Agent[03]".into(),
                2 | 3 => "Agent[04]".into(),
                _ => "Agent[99]".into(),
            }),
            RequestKind::Talk => Ok("Over".into()),
            _ => Ok("nobody".into()),
        },
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(s, 5, vec!["x".into(); 5]);
    block_on_ready(game.run(&mut t));
    let votes = t
        .sent
        .iter()
        .filter(|(_, p)| p.request == RequestKind::Vote)
        .count();
    assert_eq!(votes, 15, "three rounds of five votes");
    let exec: Vec<_> = game
        .log()
        .iter()
        .filter(|l| l.contains(",execute,"))
        .collect();
    assert_eq!(exec.len(), 1);
    assert!(
        exec[0].starts_with("1,execute,3,") || exec[0].starts_with("1,execute,4,"),
        "{exec:?}"
    );
    // Invalid names are not votes.
    assert_eq!(
        game.log().iter().filter(|l| l.contains(",vote,5,")).count(),
        0
    );
}

/// Settings of `n` players whose agents in error do `mode` to the game.
fn settings_on_error(n: usize, mode: OnErrorRatio) -> Arc<NlpSettings> {
    let mut c = NlpConfig::for_players(n);
    c.server.on_error_ratio = mode;
    Arc::new(c.settings().unwrap())
}

/// The default: an agent in error forfeits its own seat (0 whatever its team does) and the game
/// plays on to a real end, scored for the others.
#[test]
fn an_agent_in_error_forfeits_its_seat_and_the_game_plays_on() {
    assert_eq!(
        NlpSettings::defaults(5).unwrap().on_error_ratio,
        OnErrorRatio::Forfeit
    );
    let mut t = Scripted {
        answer: |a: usize, p: &Packet| match (a, p.request) {
            (3, _) => Err(AskError::Fatal),
            (_, RequestKind::Talk) => Ok("hi".into()),
            // Seed 9 deals the werewolf to Agent[03]: the village votes it out.
            _ => Ok("Agent[03]".into()),
        },
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(settings(5), 9, vec!["x".into(); 5]);
    let r = block_on_ready(game.run(&mut t));
    assert_eq!(r.roles[2], Role::Werewolf, "{r:?}");
    assert!(!r.aborted);
    assert_eq!(
        r.winner,
        Some(Team::Villager),
        "the game reaches a real end: {r:?}"
    );
    assert_eq!(
        r.roles[3].team(),
        Team::Villager,
        "the agent in error was on the winning team"
    );
    assert_eq!(r.has_error, vec![false, false, false, true, false]);
    assert_eq!(r.forfeited, r.has_error);
    let names: Vec<String> = (0..5).map(|i| format!("s{i}")).collect();
    let rep = kakehiki_werewolf::nlp::record::report(&names, 9, &r);
    assert_eq!(rep.scores[3], 0.0, "the forfeited seat scores nothing");
    for i in [0, 1, 2, 4] {
        let won = Some(r.roles[i].team()) == r.winner;
        assert_eq!(rep.scores[i], f64::from(u8::from(won)), "seat {i}: {rep:?}");
    }
    assert!(rep.scores.contains(&1.0), "{rep:?}");
    assert_eq!(rep.extra["forfeited_seats"], serde_json::json!([3]));
    // Nothing more is sent to it after its failure; FINISH still reaches the others.
    let first_fail = t
        .sent
        .iter()
        .position(|(a, p)| *a == 3 && p.request.needs_response())
        .unwrap();
    assert!(t.sent[first_fail + 1..].iter().all(|(a, _)| *a != 3));
}

/// Each seat of the report names its side (`team`), as the AIWolf division's report does: the
/// ladder rates a match by sides. A seat that forfeited keeps its side and scores 0.
#[test]
fn the_report_names_each_seats_side() {
    let r = kakehiki_werewolf::nlp::game::GameResult {
        winner: Some(Team::Werewolf),
        aborted: false,
        forfeited: vec![false, false, false, true, false],
        roles: vec![
            Role::Villager,
            Role::Werewolf,
            Role::Seer,
            Role::Possessed,
            Role::Villager,
        ],
        alive: vec![false, true, false, true, true],
        has_error: vec![false, false, false, true, false],
        last_day: 2,
    };
    let names: Vec<String> = (0..5).map(|i| format!("s{i}")).collect();
    let rep = kakehiki_werewolf::nlp::record::report(&names, 9, &r);
    let teams: Vec<&str> = rep
        .seats
        .iter()
        .map(|s| s.extra["team"].as_str().unwrap())
        .collect();
    assert_eq!(
        teams,
        ["VILLAGER", "WEREWOLF", "VILLAGER", "WEREWOLF", "VILLAGER"]
    );
    assert_eq!(rep.scores, [0.0, 1.0, 0.0, 0.0, 0.0]);
}

/// Every agent in error: nobody is left to play, the game ends without a winner.
#[test]
fn a_game_with_every_agent_in_error_ends_without_a_winner_under_forfeit() {
    let mut t = Scripted {
        answer: |_a: usize, _p: &Packet| Err(AskError::Fatal),
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(settings(5), 9, vec!["x".into(); 5]);
    let r = block_on_ready(game.run(&mut t));
    assert!(r.aborted && r.winner.is_none(), "{r:?}");
    assert_eq!(r.forfeited, vec![true; 5]);
}

/// `server.on_error_ratio = abort`: upstream's rule.
#[test]
fn errors_beyond_the_ratio_end_the_game_without_a_winner() {
    // 5 players × 0.2 = 1: one agent gone ends the game.
    let mut t = Scripted {
        answer: |a: usize, p: &Packet| match (a, p.request) {
            (3, _) => Err(AskError::Fatal),
            (_, RequestKind::Talk) => Ok("hi".into()),
            _ => Ok("Agent[01]".into()),
        },
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(
        settings_on_error(5, OnErrorRatio::Abort),
        9,
        vec!["x".into(); 5],
    );
    let r = block_on_ready(game.run(&mut t));
    assert!(r.aborted);
    assert_eq!(r.winner, None);
    assert_eq!(r.forfeited, vec![false; 5], "upstream forfeits nobody");
    assert_eq!(r.has_error, vec![false, false, false, true, false]);
    assert!(game.log().last().unwrap().ends_with(",NONE"));
    // The agent in error gets no more packets after its failure.
    let first_fail = t
        .sent
        .iter()
        .position(|(a, p)| *a == 3 && p.request.needs_response())
        .unwrap();
    assert!(t.sent[first_fail + 1..].iter().all(|(a, _)| *a != 3));
    // FINISH still reaches the others.
    assert_eq!(
        t.sent
            .iter()
            .filter(|(_, p)| p.request == RequestKind::Finish)
            .count(),
        4
    );
}

#[test]
fn a_disconnect_on_a_notification_counts_as_an_error() {
    let mut c = NlpConfig::for_players(13);
    c.server.max_continue_error_ratio = 0.2; // cut-off 2
    c.game.max_day = 3;
    let s = Arc::new(c.settings().unwrap());
    let mut t = Scripted {
        answer: |_a: usize, p: &Packet| match p.request {
            RequestKind::Talk | RequestKind::Whisper => Ok("Over".into()),
            _ => Ok("Agent[01]".into()),
        },
        sent: Vec::new(),
        fatal_notify: vec![4],
    };
    let mut game = NlpGame::new(s, 9, vec!["x".into(); 13]);
    let r = block_on_ready(game.run(&mut t));
    // One error of a cut-off of two: the game goes on to a real end.
    assert!(!r.aborted);
    assert!(r.has_error[4]);
    assert_eq!(r.last_day, 4, "played to max_day");
    let after: Vec<_> = t
        .sent
        .iter()
        .skip_while(|(a, _)| *a != 4)
        .skip(1)
        .filter(|(a, _)| *a == 4)
        .collect();
    assert!(
        after.is_empty(),
        "nothing more is sent to an agent in error"
    );
}

#[test]
fn mentions_and_length_limits_shape_the_recorded_speech() {
    let mut c = NlpConfig::for_players(5);
    c.game.talk.max_length.base_length = 5;
    c.game.talk.max_length.mention_length = 3;
    c.game.talk.max_length.per_agent = 4;
    c.game.talk.max_count.per_agent = 2;
    c.game.max_day = 0;
    let s = Arc::new(c.settings().unwrap());
    let mut t = Scripted {
        answer: |a: usize, p: &Packet| match (a, p.request) {
            (0, RequestKind::Talk) => Ok("abcdefghijkl".into()),
            (1, RequestKind::Talk) => Ok("hey @Agent[03] abcdefghij".into()),
            (_, RequestKind::Talk) => Ok("Over".into()),
            _ => Ok("Agent[01]".into()),
        },
        sent: Vec::new(),
        fatal_notify: Vec::new(),
    };
    let mut game = NlpGame::new(s, 4, vec!["x".into(); 5]);
    block_on_ready(game.run(&mut t));
    let of = |n: &str| {
        game.all_talks()
            .filter(|t| *t.agent == *n)
            .map(|t| t.text.to_string())
            .collect::<Vec<_>>()
    };
    // 5 free + 4 budget = 9 characters, then the budget is spent: no second request.
    assert_eq!(of("Agent[01]"), vec!["abcdefghi"]);
    // "hey " costs nothing (3 ≤ 5), the mention part gets 3 free + 4 budget.
    assert_eq!(of("Agent[02]")[0], "hey  @Agent[03]  abcdefg");
    let setting = t.sent.iter().find_map(|(_, p)| p.setting.clone()).unwrap();
    let json = serde_json::to_value(&*setting).unwrap();
    assert_eq!(json["talk"]["max_length"]["base_length"], 5);
    assert_eq!(json["talk"]["max_length"]["mention_length"], 3);
    assert!(
        json["talk"]["max_length"].get("per_talk").is_none(),
        "unset limits are omitted"
    );
    assert!(
        json["talk"].get("duration").is_none() && json["whisper"].get("duration").is_none(),
        "no duration in turns"
    );
}

/// Built-in agents on a clock that runs a second per request and, in group chat, places the
/// messages 10 ms apart from the window's opening; the window lasts its `duration`. Keeps what
/// the clock read after each TALK answer and every packet sent.
struct Clocked {
    inner: BotTable,
    clock_ms: u64,
    after_talks: Vec<u64>,
    sent: Vec<(usize, Packet)>,
}

impl Table for Clocked {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        self.inner.bots[agent].answer(&packet);
        self.sent.push((agent, packet));
        Ok(())
    }
    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        self.clock_ms += 1_000;
        if packet.request == RequestKind::Talk {
            self.after_talks.push(self.clock_ms);
        }
        let r = self.inner.bots[agent]
            .answer(&packet)
            .ok_or(AskError::Failed);
        self.sent.push((agent, packet));
        r
    }
    async fn chat(
        &mut self,
        open: Vec<usize>,
        duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        // Each open agent in turn says two things, then Over, then more (dropped).
        let opened = self.clock_ms;
        let mut k = 0;
        for round in 0..4 {
            for &a in &open {
                k += 1;
                let text = if round == 2 {
                    "Over".into()
                } else {
                    format!("chat {round}")
                };
                let m = ChatMessage {
                    agent: a,
                    text,
                    elapsed_ms: opened + 10 * k,
                };
                let out = accept(m);
                self.sent.extend(out);
            }
        }
        self.clock_ms = opened + duration_ms;
    }
    fn elapsed_ms(&self) -> u64 {
        self.clock_ms
    }
}

fn clocked(names: &[&str], seed: u64) -> Clocked {
    Clocked {
        inner: BotTable::new(names, seed).unwrap(),
        clock_ms: 0,
        after_talks: Vec::new(),
        sent: Vec::new(),
    }
}

/// 2025-01-01T00:00:00.000Z, as a game id's time.
const START_MS: u64 = 1_735_689_600_000;

#[test]
fn a_talk_is_stamped_with_the_game_start_plus_the_tables_clock_after_its_answer() {
    let names = ["sample"; 5];
    let mut t = clocked(&names, 6);
    let mut game = NlpGame::new(
        settings(5),
        6,
        names.iter().map(|s| s.to_string()).collect(),
    );
    game.set_game_id(kakehiki_werewolf::nlp::game::game_id_at(START_MS, 6));
    block_on_ready(game.run(&mut t));
    let times: Vec<u64> = game.all_talks().map(|e| e.time).collect();
    let expected: Vec<u64> = t.after_talks.iter().map(|c| START_MS + c).collect();
    assert!(!times.is_empty());
    assert_eq!(times, expected);
    // The packets carry it: every talk an agent is sent has its time.
    let sent: Vec<Value> = t
        .sent
        .iter()
        .filter_map(|(_, p)| p.talk_history.clone())
        .flatten()
        .map(|e| serde_json::to_value(&e).unwrap())
        .collect();
    assert!(!sent.is_empty());
    for e in &sent {
        let time = e["time"].as_u64().expect("every talk has a time");
        assert!(expected.contains(&time), "{e}");
    }
    // Without a clock (built-in agents in process), the time is the game's start.
    let (_, plain) = play_builtin(settings(5), 6, &names).unwrap();
    assert!(plain.all_talks().all(|e| e.time == 0), "game_id time 0");
}

#[test]
fn group_chat_talks_are_numbered_per_agent_and_stamped_when_they_arrived() {
    let mut c = NlpConfig::for_players(5);
    c.game.talk.duration = Some("1s".into());
    c.game.max_day = 1;
    let s = Arc::new(c.settings().unwrap());
    let names = ["sample"; 5];
    let mut t = clocked(&names, 2);
    let mut game = NlpGame::new(s, 2, names.iter().map(|s| s.to_string()).collect());
    game.set_game_id(kakehiki_werewolf::nlp::game::game_id_at(START_MS, 2));
    block_on_ready(game.run(&mut t));
    let day0: Vec<_> = game.all_talks().filter(|e| e.day == 0).collect();
    // Five agents, each "chat 0", "chat 1", "Over": 15 accepted, the rest dropped.
    assert_eq!(day0.len(), 15);
    for (i, e) in day0.iter().enumerate() {
        assert_eq!(e.idx, i as u32);
        // Round r of agent a is its r-th accepted message: turn r.
        let round = (i / 5) as u32;
        assert_eq!(e.turn, round, "{e:?}");
        assert_eq!(e.over, round == 2);
        // The window opened after the five DAILY_INITIALIZE and phase-start notifications, on
        // day 0 before any request: the clock was at 0.
        assert_eq!(e.time, START_MS + 10 * (i as u64 + 1), "{e:?}");
    }
    // The broadcasts carry the same turn and time.
    let casts: Vec<&Packet> = t
        .sent
        .iter()
        .filter(|(a, p)| *a == 0 && p.request == RequestKind::TalkBroadcast)
        .map(|(_, p)| p)
        .collect();
    for (p, e) in casts.iter().zip(&day0) {
        assert_eq!(p.new_talk.as_ref(), Some(*e));
    }
    // Day 1's window opens after day 0's (1 s) and night 0's divination (a second).
    let day1 = game.all_talks().find(|e| e.day == 1).unwrap();
    assert_eq!(day1.time, START_MS + 2_010, "{day1:?}");
    // Every game-log line has its time (the real-time log's `timestamp`), in order; a talk's
    // line has the talk's.
    let (log, marks) = (game.log(), game.log_marks());
    assert_eq!(log.len(), marks.len());
    let times: Vec<u64> = marks.iter().map(|m| m.ms).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let first_talk = log.iter().position(|l| l.contains(",talk,")).unwrap();
    assert_eq!(times[first_talk], START_MS + 10);
    assert_eq!(*times.last().unwrap(), game.now_ms());
    // Talks by day, votes by night (upstream's default phases).
    for (l, m) in log.iter().zip(marks) {
        if l.contains(",talk,") || l.contains(",vote,") {
            assert_eq!(m.is_day, l.contains(",talk,"), "{l}");
        }
    }
}

/// `logic.day_phases` / `logic.night_phases` decide what a day and a night hold: here a talk-only
/// day, and a night of the exile and the attack from day 1 (no whispers, divination or guard);
/// then the exile by day.
#[test]
fn the_configured_phases_are_played_in_order_on_their_days() {
    use kakehiki_werewolf::nlp::settings::{Phase, PhaseAction};
    let phase = |actions: Vec<PhaseAction>, except_day| Phase {
        name: String::new(),
        actions,
        only_day: None,
        except_day,
    };
    let names = ["sample"; 9];
    let play = |day: Vec<Phase>, night: Vec<Phase>| {
        let mut s = NlpSettings::defaults(9).unwrap();
        (s.day_phases, s.night_phases) = (day, night);
        let mut t = Recording {
            inner: BotTable::new(&names, 5).unwrap(),
            sent: Vec::new(),
        };
        let originals = names.iter().map(|s| s.to_string()).collect();
        let mut game = NlpGame::new(Arc::new(s), 5, originals);
        let r = block_on_ready(game.run(&mut t));
        (r, game, t.sent)
    };
    let (r, game, sent) = play(
        vec![phase(vec![PhaseAction::Talk], None)],
        vec![phase(
            vec![PhaseAction::Execution, PhaseAction::Attack],
            Some(0),
        )],
    );
    assert!(r.winner.is_some());
    let asked = |k: RequestKind| sent.iter().filter(|(_, p)| p.request == k).count();
    for k in [
        RequestKind::Whisper,
        RequestKind::Divine,
        RequestKind::Guard,
    ] {
        assert_eq!(asked(k), 0, "{k:?}");
    }
    assert!(asked(RequestKind::Talk) > 0 && asked(RequestKind::Vote) > 0);
    assert!(asked(RequestKind::Attack) > 0);
    // Nobody votes or attacks on day 0.
    assert!(game.log().iter().all(|l| !l.starts_with("0,vote")));
    // The exile by day: votes are marked by day, and the real-time log says so.
    let (_, game, _) = play(
        vec![phase(
            vec![PhaseAction::Talk, PhaseAction::Execution],
            Some(0),
        )],
        vec![phase(vec![PhaseAction::Divine], None)],
    );
    let votes: Vec<bool> = game
        .log()
        .iter()
        .zip(game.log_marks())
        .filter(|(l, _)| l.contains(",vote,"))
        .map(|(_, m)| m.is_day)
        .collect();
    assert!(!votes.is_empty() && votes.iter().all(|d| *d), "{votes:?}");
}
