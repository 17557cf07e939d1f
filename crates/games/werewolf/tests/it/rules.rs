//! The flow of §2 (aiwolf-0.6) and §3 (seed-2015), step by step, with scripted agents.

use kakehiki_werewolf::wire::{Body as Packet, Histories};
use kakehiki_werewolf::{
    GameInfo, Pending, Reply, Request, Role, RuleSet, Settings, Species, Status, Team, Werewolf,
    WinCount,
};

fn names(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("p{i:02}")).collect()
}

/// A game whose roles are placed by role requests (aiwolf-0.6).
fn game_with_roles(settings: Settings, seed: u64, wanted: &[(usize, Role)]) -> Werewolf {
    let n = settings.player_num();
    let mut g = Werewolf::new(settings, seed, names(n)).unwrap();
    while let Pending::Ask {
        agent,
        request: Request::Role,
    } = g.pending()
    {
        let r = wanted
            .iter()
            .find(|(a, _)| *a == agent)
            .map_or("none", |(_, r)| r.name());
        g.reply(Reply::Text(r.into())).unwrap();
    }
    for (a, r) in wanted {
        assert_eq!(g.role(*a), *r, "agent {a}");
    }
    g
}

const ROLES15: &[(usize, Role)] = &[
    (1, Role::Werewolf),
    (2, Role::Werewolf),
    (3, Role::Werewolf),
    (4, Role::Seer),
    (5, Role::Medium),
    (6, Role::Bodyguard),
    (7, Role::Possessed),
];

const ROLES5: &[(usize, Role)] = &[(1, Role::Werewolf), (2, Role::Seer), (3, Role::Possessed)];

/// Drive the game, recording each stop as `REQUEST` or `REQUEST agent`, until `stop` holds.
fn run(
    g: &mut Werewolf,
    trace: &mut Vec<String>,
    mut f: impl FnMut(&Werewolf, usize, Request) -> Reply,
    stop: impl Fn(&Werewolf) -> bool,
) {
    while !stop(g) {
        match g.pending() {
            Pending::Done => return,
            Pending::Notify(r) => {
                trace.push(r.name().to_string());
                g.ack().unwrap();
            }
            Pending::Ask { agent, request } => {
                trace.push(format!("{} {agent}", request.name()));
                let reply = f(g, agent, request);
                g.reply(reply).unwrap();
            }
        }
    }
}

fn over(_: &Werewolf, _: usize, r: Request) -> Reply {
    match r {
        Request::Talk | Request::Whisper => Reply::Text("Over".into()),
        _ => Reply::Silent,
    }
}

fn at_day(d: u32) -> impl Fn(&Werewolf) -> bool {
    move |g: &Werewolf| g.day() >= d && g.pending() == Pending::Notify(Request::DailyInitialize)
}

fn log_has(g: &Werewolf, line: &str) -> bool {
    g.log().iter().any(|l| l == line)
}

#[test]
fn role_requests_fill_in_order_and_full_roles_mean_no_preference() {
    let mut g = Werewolf::new(Settings::aiwolf(15).unwrap(), 3, names(15)).unwrap();
    let order = g.deal_order().to_vec();
    let mut asked = Vec::new();
    while let Pending::Ask {
        agent,
        request: Request::Role,
    } = g.pending()
    {
        asked.push(agent);
        // Everyone wants to be the seer; only the first asked gets it.
        let s = g.reply(Reply::Text("seer".into())).unwrap();
        assert_eq!(s.value, if asked.len() == 1 { "SEER" } else { "none" });
    }
    assert_eq!(asked, order, "ROLE goes out in deal order");
    assert_eq!(g.role(order[0]), Role::Seer);
    assert_eq!(g.pending(), Pending::Notify(Request::Initialize));
    let count = |r: Role| g.roles().iter().filter(|x| **x == r).count();
    assert_eq!(
        (
            count(Role::Villager),
            count(Role::Werewolf),
            count(Role::Seer),
            count(Role::Possessed)
        ),
        (8, 3, 1, 1)
    );
    // Without requests, the fill order gives BODYGUARD to the first seat of the deal order.
    let mut g = Werewolf::new(Settings::aiwolf(15).unwrap(), 3, names(15)).unwrap();
    while let Pending::Ask { .. } = g.pending() {
        g.reply(Reply::Silent).unwrap();
    }
    assert_eq!(g.role(order[0]), Role::Bodyguard);
    assert_eq!(g.role(order[1]), Role::Medium);
    assert_eq!(g.role(order[2]), Role::Possessed);
    assert_eq!(g.role(order[3]), Role::Seer);
}

#[test]
fn day_zero_has_no_talk_wolves_whisper_at_night_and_the_seer_divines() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 1, ROLES15);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| match r {
            Request::Divine => Reply::Target(Some(1)),
            _ => over(g, a, r),
        },
        at_day(1),
    );
    let mut whisperers: Vec<&str> = trace[3..6].iter().map(|s| s.as_str()).collect();
    whisperers.sort();
    assert_eq!(
        &trace[..3],
        ["INITIALIZE", "DAILY_INITIALIZE", "DAILY_FINISH"]
    );
    assert_eq!(whisperers, ["WHISPER 1", "WHISPER 2", "WHISPER 3"]);
    assert_eq!(&trace[6..], ["DIVINE 4"]);
    assert!(log_has(&g, "0,status,1,WEREWOLF,ALIVE,p01"));
    assert!(log_has(&g, "0,divine,4,1,WEREWOLF"));
    assert_eq!(
        g.log()
            .iter()
            .filter(|l| l.starts_with("0,whisper,"))
            .count(),
        3
    );
    assert!(!g.log().iter().any(|l| l.starts_with("0,talk,")));
    // Day 1: the seer (and only the seer) holds the result, dated the delivery day.
    let seer = GameInfo::for_agent(&g, 4, false);
    let j = seer.divine_result.unwrap();
    assert_eq!(
        (j.agent, j.day, j.target, j.result),
        (4, 1, 1, Species::Werewolf)
    );
    for a in (1..=15).filter(|&a| a != 4) {
        assert!(GameInfo::for_agent(&g, a, false).divine_result.is_none());
    }
}

#[test]
fn talk_on_first_day_puts_whisper_then_talk_on_day_zero() {
    let mut s = Settings::aiwolf(15).unwrap();
    s.talk_on_first_day = true;
    let mut g = game_with_roles(s, 1, ROLES15);
    let mut trace = Vec::new();
    run(&mut g, &mut trace, over, at_day(1));
    assert_eq!(&trace[..2], ["INITIALIZE", "DAILY_INITIALIZE"]);
    assert!(trace[2..5].iter().all(|t| t.starts_with("WHISPER")));
    assert!(trace[5..20].iter().all(|t| t.starts_with("TALK")));
    assert_eq!(&trace[20..], ["DAILY_FINISH", "DIVINE 4"]);
}

/// Play to the first TALK of day 1.
fn to_day1_talk(g: &mut Werewolf) {
    let mut trace = Vec::new();
    run(g, &mut trace, over, |g| {
        matches!(
            g.pending(),
            Pending::Ask {
                request: Request::Talk,
                ..
            }
        )
    });
}

#[test]
fn a_talk_session_ends_on_an_all_over_turn_and_a_skip_streak_becomes_over() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 2, ROLES15);
    to_day1_talk(&mut g);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| {
            if a == 9 && r == Request::Talk {
                Reply::Text("Skip".into())
            } else {
                over(g, a, r)
            }
        },
        |g| g.pending() == Pending::Notify(Request::DailyFinish),
    );
    assert_eq!(trace.len(), 45, "three turns of 15: {trace:?}");
    let nine: Vec<(u32, &str)> = g
        .talks()
        .iter()
        .filter(|t| t.agent == 9)
        .map(|t| (t.turn, t.text.as_str()))
        .collect();
    assert_eq!(nine, [(0, "Skip"), (1, "Skip"), (2, "Over")]);
    assert!(g
        .talks()
        .iter()
        .enumerate()
        .all(|(i, t)| t.idx as usize == i && t.day == 1));
    // Every participant has exactly one entry per turn.
    for turn in 0..3 {
        assert_eq!(g.talks().iter().filter(|t| t.turn == turn).count(), 15);
    }
}

#[test]
fn only_real_utterances_use_up_max_talk_and_exhausted_agents_are_not_asked() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 2, ROLES15);
    to_day1_talk(&mut g);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |_, _, _| Reply::Text("VOTE Agent[01]".into()),
        |g| g.pending() == Pending::Notify(Request::DailyFinish),
    );
    assert_eq!(
        trace.len(),
        150,
        "each agent asked exactly maxTalk = 10 times"
    );
    assert_eq!(
        g.talks().len(),
        165,
        "turn 10 is all Over, recorded without asking"
    );
    assert!(g
        .talks()
        .iter()
        .filter(|t| t.turn == 10)
        .all(|t| t.text == "Over"));
    let gi = GameInfo::for_agent(&g, 5, false);
    assert!(gi.remain_talk_map.iter().all(|(_, r)| *r == 0));
}

#[test]
fn max_talk_turn_caps_a_session_that_never_goes_all_over() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 2, ROLES15);
    to_day1_talk(&mut g);
    let mut trace = Vec::new();
    let mut k = 0;
    run(
        &mut g,
        &mut trace,
        |_, a, _| {
            if a == 9 {
                k += 1;
                // Skip, Skip, real; the streak never exceeds maxSkip.
                Reply::Text(if k % 3 == 0 {
                    "VOTE Agent[02]".into()
                } else {
                    "Skip".into()
                })
            } else {
                Reply::Text("Over".into())
            }
        },
        |g| g.pending() == Pending::Notify(Request::DailyFinish),
    );
    assert_eq!(g.talks().iter().map(|t| t.turn).max(), Some(19));
    assert_eq!(g.talks().len(), 300);
    assert_eq!(
        g.talks()
            .iter()
            .filter(|t| t.agent == 9 && t.text.starts_with("VOTE"))
            .count(),
        6
    );
}

#[test]
fn invalid_and_empty_talk_becomes_skip_and_replies_are_trimmed() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 2, ROLES15);
    to_day1_talk(&mut g);
    let replies = [
        "vote Agent[01]",
        "",
        "  Over  ",
        "AND (VOTE Agent[01]), (VOTE Agent[02])",
        " VOTE Agent[03]\t",
    ];
    let mut seen = Vec::new();
    for r in replies {
        let Pending::Ask { agent, .. } = g.pending() else {
            panic!()
        };
        let s = g.reply(Reply::Text(r.into())).unwrap();
        seen.push((agent, s.value.clone(), s.invalid));
    }
    let got: Vec<(&str, bool)> = seen.iter().map(|(_, v, i)| (v.as_str(), *i)).collect();
    assert_eq!(
        got,
        [
            ("Skip", true),
            ("Skip", false),
            ("Over", false),
            ("Skip", true),
            ("VOTE Agent[03]", false)
        ]
    );
    let texts: Vec<&str> = g.talks().iter().map(|t| t.text.as_str()).collect();
    assert_eq!(texts, ["Skip", "Skip", "Over", "Skip", "VOTE Agent[03]"]);
}

/// Day 1 up to the first VOTE, everyone saying Over.
fn to_vote(g: &mut Werewolf, day: u32) {
    let mut trace = Vec::new();
    run(g, &mut trace, over, |g| {
        g.day() == day
            && matches!(
                g.pending(),
                Pending::Ask {
                    request: Request::Vote,
                    ..
                }
            )
    });
}

/// 9 and 10 get seven votes each, 11 one.
fn tie_vote(a: usize) -> usize {
    match a {
        1..=6 | 10 => 9,
        7 => 11,
        _ => 10,
    }
}

#[test]
fn a_tied_vote_is_revoted_with_game_info_then_decided_at_random() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 4, ROLES15);
    to_vote(&mut g, 1);
    let mut h = Histories::new(15);
    let mut rounds = 0;
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| {
            if r == Request::Vote {
                if a == 1 {
                    rounds += 1;
                    let packet = h.body(g, a, r);
                    // Round 0 is a diff; the revote carries gameInfo with round 0's votes.
                    match (rounds, packet) {
                        (1, Packet::Diff { .. }) => {}
                        (2, Packet::Info { info, .. }) => {
                            assert_eq!(info.latest_vote_list.len(), 15)
                        }
                        (n, p) => panic!("round {n}: {p:?}"),
                    }
                }
                Reply::Target(Some(tie_vote(a)))
            } else {
                over(g, a, r)
            }
        },
        |g| g.executed_today().is_some(),
    );
    assert_eq!(rounds, 2);
    let votes = g.log().iter().filter(|l| l.starts_with("1,vote,")).count();
    assert_eq!(votes, 30, "two blocks of vote lines");
    let e = g.executed_today().unwrap();
    assert!(e == 9 || e == 10);
    assert!(log_has(&g, &format!("1,execute,{e},VILLAGER")));
    assert_eq!(g.status(e), Status::Dead);
    assert_eq!(
        GameInfo::for_agent(&g, 12, false).latest_executed_agent,
        Some(e)
    );
    // The tie pick depends only on the seed.
    let mut picks = std::collections::BTreeSet::new();
    for seed in 0..20 {
        let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), seed, ROLES15);
        to_vote(&mut g, 1);
        let mut t = Vec::new();
        run(
            &mut g,
            &mut t,
            |g, a, r| {
                if r == Request::Vote {
                    Reply::Target(Some(tie_vote(a)))
                } else {
                    over(g, a, r)
                }
            },
            |g| g.executed_today().is_some(),
        );
        picks.insert(g.executed_today().unwrap());
    }
    assert_eq!(picks.into_iter().collect::<Vec<_>>(), [9, 10]);
}

#[test]
fn invalid_votes_are_replaced_by_random_alive_others() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 5, ROLES15);
    to_vote(&mut g, 1);
    for a in 1..=15 {
        assert_eq!(
            g.pending(),
            Pending::Ask {
                agent: a,
                request: Request::Vote
            },
            "ascending order"
        );
        let reply = match a {
            1 => Reply::Target(Some(1)),
            2 => Reply::Target(Some(99)),
            3 => Reply::Silent,
            4 => Reply::Target(None),
            _ => Reply::Target(Some(if a == 15 { 14 } else { 15 })),
        };
        let s = g.reply(reply).unwrap();
        let v: usize = s.value.parse().unwrap();
        assert!(v != a && (1..=15).contains(&v), "agent {a} -> {v}");
        assert_eq!(s.invalid, matches!(a, 1 | 2 | 4), "agent {a}");
        if a == 15 {
            break;
        }
    }
}

#[test]
fn a_guarded_attack_fails_and_wolves_still_see_the_target() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 6, ROLES15);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| match r {
            Request::Vote => Reply::Target(Some(if a == 15 { 14 } else { 15 })),
            Request::Guard => Reply::Target(Some(10)),
            Request::Attack => Reply::Target(Some(10)),
            Request::Divine => Reply::Target(Some(2)),
            _ => over(g, a, r),
        },
        at_day(2),
    );
    assert!(log_has(&g, "1,execute,15,VILLAGER"));
    assert!(log_has(&g, "1,guard,6,10,VILLAGER"));
    for w in 1..=3 {
        assert!(log_has(&g, &format!("1,attackVote,{w},10")));
    }
    assert!(log_has(&g, "1,attack,10,false"));
    assert_eq!(g.status(10), Status::Alive);
    // Log order within the night: votes, execute, divine, whispers, guard, attackVotes, attack.
    let pos = |p: &str| g.log().iter().position(|l| l.starts_with(p)).unwrap();
    assert!(pos("1,vote,") < pos("1,execute,"));
    assert!(pos("1,execute,") < pos("1,divine,"));
    assert!(pos("1,divine,") < pos("1,whisper,"));
    assert!(pos("1,whisper,") < pos("1,guard,"));
    assert!(pos("1,guard,") < pos("1,attackVote,"));
    assert!(pos("1,attackVote,") < pos("1,attack,"));
    let wolf = GameInfo::for_agent(&g, 2, false);
    assert_eq!(wolf.attacked_agent, Some(10));
    assert_eq!(wolf.attack_vote_list.len(), 3);
    assert!(wolf.last_dead_agent_list.is_empty());
    assert_eq!(GameInfo::for_agent(&g, 6, false).guarded_agent, Some(10));
    let villager = GameInfo::for_agent(&g, 9, false);
    assert_eq!(villager.attacked_agent, None);
    assert_eq!(villager.guarded_agent, None);
    assert_eq!(villager.executed_agent, Some(15));
    assert_eq!(villager.vote_list.len(), 15);
    // The medium learns yesterday's execution, dated today.
    let m = GameInfo::for_agent(&g, 5, false).medium_result.unwrap();
    assert_eq!(
        (m.agent, m.day, m.target, m.result),
        (5, 2, 15, Species::Human)
    );
    assert!(villager.medium_result.is_none());
}

#[test]
fn no_valid_attack_vote_means_a_random_human_dies_after_the_revote() {
    let mut g = game_with_roles(Settings::aiwolf(15).unwrap(), 7, ROLES15);
    let mut attack_asks = 0;
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| match r {
            Request::Vote => Reply::Target(Some(if a == 15 { 14 } else { 15 })),
            Request::Guard => Reply::Target(Some(6)), // self: invalid, no guard
            Request::Attack => {
                attack_asks += 1;
                Reply::Target(Some(2)) // a wolf: invalid, dropped
            }
            _ => over(g, a, r),
        },
        at_day(2),
    );
    assert_eq!(attack_asks, 6, "two rounds of three wolves");
    assert!(!g
        .log()
        .iter()
        .any(|l| l.contains(",attackVote,") || l.contains(",guard,")));
    let line = g
        .log()
        .iter()
        .find(|l| l.starts_with("1,attack,"))
        .unwrap()
        .clone();
    let victim: usize = line.split(',').nth(2).unwrap().parse().unwrap();
    assert!(line.ends_with(",true"));
    assert!(g.role(victim).species() == Species::Human && victim != 15);
    assert_eq!(
        GameInfo::for_agent(&g, 9, false).last_dead_agent_list,
        [victim]
    );
}

#[test]
fn the_night_after_the_last_wolf_is_executed_is_still_played() {
    let mut g = game_with_roles(Settings::aiwolf(5).unwrap(), 8, ROLES5);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| match r {
            Request::Vote => Reply::Target(Some(if a == 1 { 2 } else { 1 })),
            Request::Divine => Reply::Target(Some(3)),
            _ => over(g, a, r),
        },
        |_| false,
    );
    assert!(log_has(&g, "1,execute,1,WEREWOLF"));
    assert!(
        log_has(&g, "1,divine,2,3,HUMAN"),
        "the seer divines after the last wolf's execution"
    );
    assert!(!g.log().iter().any(|l| l.starts_with("1,attack")));
    assert_eq!(g.log().last().unwrap(), "2,result,4,0,VILLAGER");
    assert_eq!(
        g.log()
            .iter()
            .filter(|l| l.starts_with("2,status,"))
            .count(),
        5
    );
    assert_eq!(trace.last().unwrap(), "FINISH");
    assert_eq!(g.winner(), Some(Team::Villager));
    assert!(g.is_over());
    // FINISH reveals every role.
    assert_eq!(GameInfo::for_agent(&g, 4, true).role_map.len(), 5);
}

#[test]
fn wolves_attack_even_when_humans_no_longer_outnumber_them() {
    let mut g = game_with_roles(Settings::aiwolf(5).unwrap(), 9, ROLES5);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| match (g.day(), r) {
            (1, Request::Vote) => Reply::Target(Some(if a == 4 { 5 } else { 4 })),
            (2, Request::Vote) => Reply::Target(Some(if a == 2 { 3 } else { 2 })),
            (1, Request::Attack) => Reply::Target(Some(5)),
            (2, Request::Attack) => Reply::Target(Some(3)),
            _ => over(g, a, r),
        },
        |_| false,
    );
    assert!(log_has(&g, "2,execute,2,SEER"));
    // After day 2's execution H = 1 (the possessed), W = 1; the night still runs.
    assert!(trace.iter().any(|t| t == "ATTACK 1") && log_has(&g, "2,attack,3,true"));
    assert_eq!(
        trace.iter().filter(|t| *t == "DIVINE 2").count(),
        2,
        "nights 0 and 1 only: a dead seer is not asked"
    );
    assert_eq!(g.log().last().unwrap(), "3,result,0,1,WEREWOLF");
    assert_eq!(g.winner(), Some(Team::Werewolf));
}

#[test]
fn team_win_count_counts_the_possessed_with_the_wolves() {
    let script = |g: &Werewolf, a: usize, r: Request| match r {
        Request::Vote => Reply::Target(Some(if a == 4 { 5 } else { 4 })),
        Request::Attack => Reply::Target(Some(5)),
        _ => over(g, a, r),
    };
    let mut s = Settings::aiwolf(5).unwrap();
    s.win_count = WinCount::Team;
    let mut g = game_with_roles(s, 10, ROLES5);
    let mut trace = Vec::new();
    run(&mut g, &mut trace, script, |_| false);
    // Alive after night 1: wolf, seer, possessed: 1 villager-team ≤ 2 werewolf-team.
    assert_eq!(g.log().last().unwrap(), "2,result,2,1,WEREWOLF");
    let mut g = game_with_roles(Settings::aiwolf(5).unwrap(), 10, ROLES5);
    run(&mut g, &mut trace, script, at_day(2));
    assert!(!g.is_over(), "species count: 2 humans > 1 wolf, play on");
}

#[test]
fn whisper_before_revote_holds_a_session_between_attack_rounds() {
    let mut s = Settings::aiwolf(15).unwrap();
    s.whisper_before_revote = true;
    let mut g = game_with_roles(s, 11, ROLES15);
    let mut trace = Vec::new();
    run(
        &mut g,
        &mut trace,
        |g, a, r| match r {
            Request::Vote => Reply::Target(Some(if a == 15 { 14 } else { 15 })),
            Request::Attack => Reply::Target(Some(a + 7)), // 8, 9, 10: a three-way tie
            _ => over(g, a, r),
        },
        at_day(2),
    );
    let first = trace.iter().position(|t| t.starts_with("ATTACK")).unwrap();
    assert!(
        trace[first + 3..first + 6]
            .iter()
            .all(|t| t.starts_with("WHISPER")),
        "{:?}",
        &trace[first..]
    );
    assert!(trace[first + 6..first + 9]
        .iter()
        .all(|t| t.starts_with("ATTACK")));
}

// ----- seed-2015 --------------------------------------------------------------------------------

fn seed_game(seed: u64) -> Werewolf {
    Werewolf::new(Settings::seed2015(), seed, names(15)).unwrap()
}

fn wolves(g: &Werewolf) -> Vec<usize> {
    (1..=15).filter(|&a| g.role(a) == Role::Werewolf).collect()
}

fn role_of(g: &Werewolf, r: Role) -> usize {
    (1..=15).find(|&a| g.role(a) == r).unwrap()
}

#[test]
fn seed_2015_talks_on_day_zero_with_a_whisper_phase_after_every_round() {
    let mut g = seed_game(12);
    assert_eq!(
        g.pending(),
        Pending::Notify(Request::Initialize),
        "no ROLE requests"
    );
    let mut trace = Vec::new();
    let mut talk_round = 0;
    run(
        &mut g,
        &mut trace,
        |g, _, r| match r {
            // Round 0 has one real utterance, round 1 is all Over.
            Request::Talk => {
                talk_round += 1;
                Reply::Text(if talk_round == 1 {
                    "VOTE Agent[01]".into()
                } else {
                    "Over".into()
                })
            }
            Request::Whisper => Reply::Text("Over".into()),
            Request::Divine => Reply::Target(Some(role_of(g, Role::Seer))),
            _ => Reply::Silent,
        },
        at_day(1),
    );
    let kinds: Vec<&str> = trace.iter().map(|t| t.split(' ').next().unwrap()).collect();
    let mut expect = vec!["INITIALIZE", "DAILY_INITIALIZE"];
    for _ in 0..2 {
        expect.extend(["TALK"; 15]);
        expect.extend(["WHISPER"; 3]);
    }
    expect.extend(["DAILY_FINISH", "DIVINE"]);
    assert_eq!(kinds, expect);
    // The seer may divine itself.
    let seer = role_of(&g, Role::Seer);
    assert!(log_has(&g, &format!("0,divine,{seer},{seer},HUMAN")));
}

#[test]
fn seed_2015_silence_is_over_and_off_template_talk_is_a_rule_violation() {
    let mut g = seed_game(13);
    let mut trace = Vec::new();
    run(&mut g, &mut trace, over, |g| {
        matches!(
            g.pending(),
            Pending::Ask {
                request: Request::Talk,
                ..
            }
        )
    });
    let s = g.reply(Reply::Silent).unwrap();
    assert_eq!((s.value.as_str(), s.invalid), ("Over", false));
    let s = g
        .reply(Reply::Text("REQUEST ANY (VOTE Agent[01])".into()))
        .unwrap();
    assert_eq!(
        (s.value.as_str(), s.invalid, s.rule_violation),
        ("Skip", true, true)
    );
    let s = g.reply(Reply::Text("VOTE Agent[01]".into())).unwrap();
    assert_eq!(
        (s.value.as_str(), s.rule_violation),
        ("VOTE Agent[01]", false)
    );
    let s = g.reply(Reply::Text("ATTACK Agent[01]".into())).unwrap();
    assert!(s.rule_violation, "ATTACK is a whisper-only template");
}

#[test]
fn seed_2015_night_substitutes_random_targets_and_never_revotes() {
    let mut g = seed_game(14);
    let w = wolves(&g);
    let seer = role_of(&g, Role::Seer);
    let bg = role_of(&g, Role::Bodyguard);
    let villagers: Vec<usize> = (1..=15).filter(|&a| g.role(a) == Role::Villager).collect();
    let (x, y) = (villagers[0], villagers[1]);
    let mut trace = Vec::new();
    let mut settled = Vec::new();
    // Day 1: a 7–7 tie (plus one stray vote) must not be revoted.
    run(&mut g, &mut trace, over, |g| {
        g.day() == 1
            && matches!(
                g.pending(),
                Pending::Ask {
                    request: Request::Vote,
                    ..
                }
            )
    });
    while let Pending::Ask { agent, request } = g.pending() {
        if g.day() != 1 {
            break;
        }
        let reply = match request {
            Request::Vote => {
                let t = if agent == y || (agent != x && agent % 2 == 0) {
                    x
                } else {
                    y
                };
                Reply::Target(Some(t))
            }
            Request::Divine => Reply::Target(g.executed_today()),
            Request::Guard => Reply::Target(Some(bg)),
            Request::Attack => Reply::Target(Some(w[0])),
            Request::Talk | Request::Whisper => Reply::Text("Over".into()),
            _ => Reply::Silent,
        };
        let s = g.reply(reply).unwrap();
        settled.push((agent, request, s));
        while let Pending::Notify(_) = g.pending() {
            if g.day() != 1 {
                break;
            }
            g.ack().unwrap();
        }
    }
    let votes = settled
        .iter()
        .filter(|(_, r, _)| *r == Request::Vote)
        .count();
    assert_eq!(votes, 15, "one round only");
    let e = g
        .log()
        .iter()
        .find(|l| l.starts_with("1,execute,"))
        .expect("an execution");
    let executed: usize = e.split(',').nth(2).unwrap().parse().unwrap();
    assert!(executed == x || executed == y);
    assert_eq!(
        g.log().iter().filter(|l| l.starts_with("1,vote,")).count(),
        15
    );
    if seer != executed {
        // Divining the agent executed today is valid under seed-2015.
        assert!(log_has(&g, &format!("1,divine,{seer},{executed},HUMAN")));
    }
    if bg != executed {
        // Guarding oneself is replaced by a random alive other agent.
        let (_, _, s) = settled
            .iter()
            .find(|(_, r, _)| *r == Request::Guard)
            .unwrap();
        assert!(s.invalid);
        let t: usize = s.value.parse().unwrap();
        assert!(t != bg && g.is_alive(t));
        assert!(log_has(
            &g,
            &format!("1,guard,{bg},{t},{}", g.role(t).name())
        ));
    }
    // Attack votes on a wolf are replaced by random alive non-wolves, and logged.
    let attack: Vec<&(usize, Request, _)> = settled
        .iter()
        .filter(|(_, r, _)| *r == Request::Attack)
        .collect();
    assert_eq!(attack.len(), w.len());
    for (wolf, _, s) in attack {
        let t: usize = s.value.parse().unwrap();
        assert!(s.invalid && g.role(t) != Role::Werewolf && t != executed);
        assert!(log_has(&g, &format!("1,attackVote,{wolf},{t}")));
    }
    assert_eq!(g.settings().rule_set, RuleSet::Seed2015);
}

#[test]
fn every_game_finishes_under_both_rule_sets_with_silent_agents() {
    for seed in 0..30 {
        for s in [
            Settings::aiwolf(15).unwrap(),
            Settings::seed2015(),
            Settings::aiwolf(5).unwrap(),
        ] {
            let n = s.player_num();
            let mut g = Werewolf::new(s, seed, names(n)).unwrap();
            let mut trace = Vec::new();
            run(&mut g, &mut trace, |_, _, _| Reply::Silent, |_| false);
            assert!(g.is_over() && g.winner().is_some(), "seed {seed}");
            assert!(g.log().last().unwrap().contains(",result,"));
        }
    }
}
