//! The Werewolf (AIWolf) driver: the pure engine and wire codec of `kakehiki-werewolf` joined to
//! the seat layer — built-in agents in-process, and agents over TCP speaking the AIWolf 0.6.x
//! protocol unmodified (`tcp-cmd:` launches one; `tcp` waits for one to connect on its own).
//!
//! Every reply-expecting request is answered by exactly one of: the agent's line, a timeout, a
//! disconnect, or silence (an agent that failed earlier in the game); the engine settles each as
//! §2 and §6 of the spec say, so every game completes. The replay holds the seat record (every
//! request as a `seat` line, labelled `day N` or `day N talk K`, and each program's `seat_end`),
//! the AIWolf game log (`log` lines), invalid replies as settled (`invalid`) and the result
//! (`end`); [`GameDriver::rerun`] plays the same code on the recorded replies. The options, the
//! replay's events and header, the report and the v1 upgrade's conversion are pure, in
//! [`kakehiki_werewolf::driver`].

pub mod server;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::{GameType, SeatErrorKind};
use kakehiki_werewolf::bots::{Agent, BUILTIN_NAMES};
use kakehiki_werewolf::driver::config::ConfigError;
use kakehiki_werewolf::driver::record::{HeaderParams, Invalid, LogLine, Written};
use kakehiki_werewolf::driver::v1;
use kakehiki_werewolf::ledger::{At, Heard, Ledger};
use kakehiki_werewolf::wire::{
    decode_line, has_reply_form, label, render_reply, reply_from_line, Histories,
};
use kakehiki_werewolf::{GameInfo, Pending, Request, Team, Werewolf, WEREWOLF_TYPE};

use crate::driver::{as_task, BoxFuture, GameDriver, MatchRecord, MatchSpec, RefereeError};
use crate::lifecycle::Lifecycle;
use crate::seat::{Ask, Finished, ReplyFilter, Table};
pub use kakehiki_werewolf::driver::config::{
    dealt_role, without_role_requests, Config, DEFAULT_FILL_TIMEOUT_MS, DEFAULT_NAME_TIMEOUT_MS,
    OPTION_KEYS,
};
pub use kakehiki_werewolf::driver::record::{EndEvent, GameOutput, FORMAT, FORMAT_V1};
pub use kakehiki_werewolf::ledger::{Counts, ErrorRecord, TimingRecord};

/// How long a client gets to read its last packets and exit after the game (or a set).
const GRACE: Duration = Duration::from_secs(2);

/// The game for the shared match lifecycle: the agents get [`GRACE`] to exit.
pub(crate) const WEREWOLF_LIFE: Lifecycle<Config> = Lifecycle {
    game: &WEREWOLF_TYPE,
    format: FORMAT,
    params: checked_config,
    end_grace: |_| GRACE,
};

/// The driver.
pub struct WerewolfDriver;

/// `werewolf`.
pub static WEREWOLF: WerewolfDriver = WerewolfDriver;

impl From<ConfigError> for RefereeError {
    fn from(e: ConfigError) -> RefereeError {
        match e {
            ConfigError::UnknownRules(rules) => RefereeError::UnknownRules {
                game: "werewolf".into(),
                rules,
                expected: kakehiki_werewolf::RuleSet::NAMES.join(", "),
            },
            ConfigError::SeatCount {
                game,
                expected,
                got,
            } => RefereeError::SeatCount {
                game,
                expected: expected.into(),
                got,
            },
            ConfigError::Bad(b) => b.into(),
        }
    }
}

/// The seats of a game or a set as the game sees them (agent number = index + 1).
#[derive(Default)]
pub struct Roster {
    /// Each seat's spec, as the replay header names it.
    pub specs: Vec<String>,
    /// The built-in agents (none for other seats).
    pub bots: Vec<Option<Box<dyn Agent>>>,
    /// The agents' names (their NAME replies), counts and §6.3 records.
    pub ledger: Ledger,
    /// Seats that, in this game, sent a line that was no reply while a reply was awaited after
    /// packets that ask for none, and nothing more within [`PATIENCE`]: they are not waited for
    /// in that way again this game (they do not answer every packet; their replies are bad).
    waited_in_vain: Vec<bool>,
}

impl Roster {
    pub fn new(specs: Vec<String>, names: Vec<String>, cfg: &Config) -> Roster {
        Roster {
            bots: specs.iter().map(|_| None).collect(),
            specs,
            ledger: Ledger::new(names, cfg.contest_limit_ms),
            waited_in_vain: Vec::new(),
        }
    }
}

/// Where `errors.jsonl` and `timings.jsonl` are written: what is new in the ledger is appended
/// at every game end.
#[derive(Debug, Default)]
pub struct Records {
    pub dir: Option<PathBuf>,
    written: Written,
}

impl Records {
    pub fn new(dir: Option<PathBuf>) -> Records {
        Records {
            dir,
            ..Records::default()
        }
    }

    /// Append what is new in `ledger` to the files (if a directory is set).
    pub fn flush(&mut self, ledger: &Ledger) -> Result<(), RefereeError> {
        use std::io::Write;
        let Some(dir) = &self.dir else { return Ok(()) };
        kakehiki_core::private_files::create_dir_all(dir)?;
        for (name, text) in self.written.take_new(ledger) {
            let mut f = kakehiki_core::private_files::open(&dir.join(name), true)?;
            f.write_all(text.as_bytes())?;
            f.flush()?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// One game
// ---------------------------------------------------------------------------------------------

/// Play one game on `table` (agent `i + 1` = seat `i`; the replay header already pushed).
/// Never fails because of an agent. The game runs as a task of its own ([`as_task`]), with the
/// table and roster moved into it and back: a caller blocked on the runtime is not woken for
/// every reply. Dropping this future stops the game and its bots, and leaves `table` and
/// `roster` empty.
pub async fn run_game(
    game: u32,
    seed: u64,
    cfg: &Config,
    table: &mut Table,
    roster: &mut Roster,
) -> Result<GameOutput, RefereeError> {
    let mut t = std::mem::replace(table, Table::new(Vec::new(), Default::default()));
    let mut r = std::mem::take(roster);
    let cfg = cfg.clone();
    let (t, r, out) = as_task(async move {
        let out = play_game(game, seed, &cfg, &mut t, &mut r).await;
        (t, r, out)
    })
    .await?;
    (*table, *roster) = (t, r);
    out
}

async fn play_game(
    game: u32,
    seed: u64,
    cfg: &Config,
    table: &mut Table,
    roster: &mut Roster,
) -> Result<GameOutput, RefereeError> {
    let n = roster.specs.len();
    let mut g = cfg.game(seed, roster.ledger.names.clone())?;
    let engine = |e: kakehiki_werewolf::EngineError| RefereeError::BadReplay(e.to_string());
    let mut h = Histories::new(n);
    roster.ledger.start(game);
    roster.waited_in_vain = vec![false; n];
    let mut log = Vec::new();
    loop {
        for line in g.drain_log() {
            table.record(&LogLine {
                event: "log",
                line: &line,
            });
            log.push(line);
        }
        table.turn = g.day();
        let (day, turn) = (g.day(), g.turn());
        match g.pending() {
            Pending::Done => break,
            Pending::Notify(request) => {
                let order: Vec<usize> = match request {
                    Request::Initialize => g.deal_order().to_vec(),
                    _ => (1..=n).collect(),
                };
                let label = label(day, request.name(), 0);
                for agent in order {
                    if table.is_builtin(agent - 1) || table.down(agent - 1).is_some() {
                        continue;
                    }
                    let packet = h.packet(&g, agent, request).into_bytes();
                    let (s, limit) = (agent - 1, cfg.time_limit());
                    let at = At {
                        day,
                        turn,
                        agent,
                        request,
                    };
                    // What the seat sent since its last reply answered an earlier packet.
                    let told = table
                        .tell_taking(s, &label, request.name(), packet, limit)
                        .await;
                    for line in &told.discarded {
                        stray(table, &mut roster.ledger, at, line);
                    }
                    match told.failed {
                        Some(failed) => roster
                            .ledger
                            .gone(at, failed.detail.as_deref().unwrap_or("connection closed")),
                        None => roster.ledger.told(at),
                    }
                }
                g.ack().map_err(engine)?;
            }
            Pending::Ask { agent, request } => {
                let at = At {
                    day,
                    turn,
                    agent,
                    request,
                };
                let label = label(day, request.name(), turn);
                let (line, overlong, outcome, us) = match roster.ledger.silent[agent - 1] {
                    true => (None, false, "silent", None),
                    false => ask(&g, &mut h, cfg, table, roster, at, &label).await,
                };
                let reply = reply_from_line(request, line.as_deref(), overlong, n);
                let settled = g.reply(reply).map_err(engine)?;
                let line = line.as_deref();
                if roster.ledger.settled(at, outcome, us, line, &settled) == "invalid" {
                    let invalid = Invalid {
                        event: "invalid",
                        seat: agent - 1,
                        at: &label,
                        kind: request.name(),
                        value: &settled.value,
                    };
                    table.record(&invalid);
                    let (fault, mut detail) = invalid.fault(line, &settled);
                    if let Some(note) = line.and(roster.ledger.behind_note(agent)) {
                        detail = format!("{detail} {note}");
                    }
                    table.fault(agent - 1, &label, fault, detail);
                }
                if line.is_some() {
                    roster.ledger.answered(at);
                }
            }
        }
    }
    let out = GameOutput {
        winner: g.winner().unwrap_or(Team::Villager),
        day: g.day(),
        roles: g.roles().to_vec(),
        alive: (1..=n).map(|a| g.is_alive(a)).collect(),
        log,
    };
    table.record(&out.end_event());
    Ok(out)
}

/// A line the seat sent while no reply was outstanding, seen at `now` (a late reply if one is
/// owed, else matched to the packet it answered): discarded, and recorded at that packet.
fn stray(table: &mut Table, ledger: &mut Ledger, now: At, line: &str) {
    if line.starts_with('[') && line.ends_with(" more lines discarded]") {
        // The seat record keeps the first lines of a flood and counts the rest.
        let detail = format!("{}: also discarded", &line[1..line.len() - 1]);
        table.fault(
            now.agent - 1,
            &now.label(),
            SeatErrorKind::UnsolicitedOutput,
            detail,
        );
        return;
    }
    let stray = ledger.stray(now, line);
    let turn = std::mem::replace(&mut table.turn, stray.at.day);
    table.fault(
        now.agent - 1,
        &stray.at.label(),
        SeatErrorKind::UnsolicitedOutput,
        stray.detail,
    );
    table.turn = turn;
}

/// How long a seat that was sent packets asking for no reply is given to send another line,
/// after one that is not a reply to the request (likely its answer to such a packet): long enough
/// for a bot descheduled for a moment. A seat whose reply is simply bad waits it once a game.
const PATIENCE: Duration = Duration::from_millis(250);

/// Ask one seat; returns (line, cut at 64 KiB, outcome, elapsed µs).
async fn ask(
    g: &Werewolf,
    h: &mut Histories,
    cfg: &Config,
    table: &mut Table,
    roster: &mut Roster,
    at: At,
    label: &str,
) -> (Option<String>, bool, &'static str, Option<u64>) {
    let (s, kind, limit) = (at.agent - 1, at.request.name(), cfg.time_limit());
    let packet = match table.is_builtin(s) {
        true => Vec::new(),
        false => h.packet(g, at.agent, at.request).into_bytes(),
    };
    let bots = &mut roster.bots;
    let mut first = Ask::new(s, label, kind, packet, limit);
    let (request, n) = (at.request, roster.ledger.names.len());
    let filtered = roster.ledger.awaits_strays(at.agent) && !roster.waited_in_vain[s];
    if filtered {
        // A bot that answers every packet sends its answers to those first: they are not the
        // reply, which follows them.
        first.accept = Some(ReplyFilter::new(move |b| {
            has_reply_form(request, &decode_line(b), n)
        }));
        first.patience = Some(PATIENCE);
    }
    let mut answer = table
        .ask_one(first, |seat, _| {
            let Some(bot) = bots.get_mut(seat).and_then(Option::as_mut) else {
                return Vec::new();
            };
            let r = bot.act(
                at.request,
                &GameInfo::for_agent(g, seat + 1, false),
                g.settings(),
            );
            render_reply(&r).unwrap_or_default().into_bytes()
        })
        .await;
    for line in std::mem::take(&mut answer.discarded) {
        stray(table, &mut roster.ledger, at, &line);
    }
    // A reply that timed out earlier and arrives now is that late reply, not this one:
    // recorded, and the seat is awaited again within what is left of its limit.
    let mut waited = 0;
    while roster.ledger.owes(at.agent) && answer.outcome == ExchangeOutcome::Reply {
        stray(table, &mut roster.ledger, at, &decode_line(&answer.bytes));
        waited += answer.time_us.unwrap_or(0);
        let left = limit.saturating_sub(Duration::from_micros(waited));
        let again = Ask::new(s, label, kind, Vec::new(), left);
        answer = table.ask_one(again, |_, _| Vec::new()).await;
    }
    let us = answer.time_us.map(|t| t + waited);
    let ledger = &mut roster.ledger;
    match answer.outcome {
        ExchangeOutcome::Reply => {
            let text = decode_line(&answer.bytes);
            if filtered && !answer.truncated && !has_reply_form(request, &text, n) {
                roster.waited_in_vain[s] = true;
            }
            let outcome = ledger.heard(at, Heard::Line(&text, us));
            (Some(text), answer.truncated, outcome, us)
        }
        ExchangeOutcome::Timeout => (None, false, ledger.heard(at, Heard::Timeout(us)), us),
        ExchangeOutcome::NotRunning => (None, false, ledger.heard(at, Heard::NotRunning), None),
        _ => {
            let why = answer.detail.as_deref().unwrap_or("connection closed");
            (None, false, ledger.heard(at, Heard::Gone(why)), None)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Replays, logs
// ---------------------------------------------------------------------------------------------

fn write_game_log(dir: &std::path::Path, name: &str, out: &GameOutput) -> Result<(), RefereeError> {
    crate::files::write_files([(dir.join(name), out.log_text())])?;
    Ok(())
}

/// The header of one game: seed, seats, names, the game's options and the replies owed at its
/// start.
fn header_of(
    rules: &str,
    seed: u64,
    roster: &Roster,
    options: &BTreeMap<String, String>,
) -> ReplayHeader {
    let ledger = &roster.ledger;
    kakehiki_werewolf::driver::record::header(rules, seed, &roster.specs, ledger, options)
}

/// A replay holding the header of one game (`header_of`).
pub fn game_header(
    rules: &str,
    seed: u64,
    roster: &Roster,
    options: &BTreeMap<String, String>,
) -> ReplayLog {
    let mut replay = ReplayLog::new();
    replay.push(&header_of(rules, seed, roster, options));
    replay
}

/// The configuration and seats a replay's header describes.
fn replayed_setup(h: &ReplayHeader) -> Result<(Config, Roster), RefereeError> {
    let params = HeaderParams::read(h).map_err(RefereeError::BadReplay)?;
    let cfg = Config::from_options(Some(&h.rules), h.seats.len(), &params.options, false)?;
    let mut roster = Roster::new(h.seats.clone(), params.names, &cfg);
    roster.ledger.owed[..params.owed.len()].copy_from_slice(&params.owed);
    Ok((cfg, roster))
}

// ---------------------------------------------------------------------------------------------
// The driver
// ---------------------------------------------------------------------------------------------

/// The longest one game of `cfg` can last with every agent answering within `time_limit_ms`:
/// the agents are asked one at a time, so every request counts. Seating waits at most
/// `connect_timeout_ms`, then `name_timeout_ms` for the NAMEs; then the role requests (when
/// asked for); then at most as many days as there are agents (from day 1 every day executes
/// one: no option turns execution off), each with, for every agent alive (counted as all of
/// them): `max_talk_turn` talk requests and `1 + max_revote` votes; for every werewolf:
/// `max_whisper_turn` whisper requests per whisper session (the night's, one before each attack
/// revote, and under seed-2015 one after each talk round) and `1 + max_attack_revote` attack
/// votes; a divination and a guard; then `GRACE` for the agents to exit.
pub fn longest_game(cfg: &Config) -> Duration {
    let s = &cfg.settings;
    let n = s.player_num() as u64;
    let wolves = s.count(kakehiki_werewolf::Role::Werewolf) as u64;
    let whisper_sessions = 1
        + u64::from(s.max_attack_revote)
        + match s.rule_set {
            kakehiki_werewolf::RuleSet::Seed2015 => u64::from(s.max_talk_turn),
            kakehiki_werewolf::RuleSet::Aiwolf06 => 0,
        };
    let per_day = n * u64::from(s.max_talk_turn)
        + n * (1 + u64::from(s.max_revote))
        + wolves * u64::from(s.max_whisper_turn) * whisper_sessions
        + wolves * (1 + u64::from(s.max_attack_revote))
        + 2;
    let roles = if s.enable_role_request { n } else { 0 };
    let requests = roles + n * per_day;
    cfg.connect_timeout
        + cfg.name_timeout
        + Duration::from_millis(s.time_limit_ms).saturating_mul(requests as u32)
        + WEREWOLF_LIFE.end_grace(cfg)
}

/// The seat count and options of a match, checked, as its configuration.
fn checked_config(spec: &MatchSpec) -> Result<Config, RefereeError> {
    spec.check_common(&WEREWOLF_TYPE, OPTION_KEYS)?;
    let (rules, n) = (spec.rules.as_deref(), spec.seats.len());
    Ok(Config::from_options(rules, n, &spec.options, false)?)
}

/// The record of a game whose seats are finished (`rules` as its header names them).
fn record(
    rules: &str,
    seed: u64,
    (out, roster): (GameOutput, Roster),
    finished: Finished,
) -> MatchRecord {
    finished.record(out.report(rules, seed, &roster.specs, &roster.ledger))
}

impl GameDriver for WerewolfDriver {
    // What the whole village hears: talk, votes and executions (the agents' TALK and VOTE
    // replies, the log's talk, vote and execute lines). Roles (`status`, ROLE), whispers,
    // divinations, guards and attacks wait for the end.
    fn public_live(&self) -> fn(&str) -> bool {
        |line| match crate::driver::line_kind(line) {
            Some((e, k)) => match (e.as_str(), k.as_deref()) {
                ("header", _) => true,
                ("seat", Some(k)) => matches!(k, "TALK" | "VOTE"),
                ("log", Some(k)) => matches!(k, "talk" | "vote" | "execute"),
                _ => false,
            },
            None => false,
        }
    }
    fn game_type(&self) -> &'static GameType {
        &WEREWOLF_TYPE
    }

    fn replay_format(&self) -> Option<&'static str> {
        Some(FORMAT)
    }

    fn check_spec(&self, spec: &MatchSpec) -> Result<(), RefereeError> {
        WEREWOLF_LIFE.check(spec).map(drop)
    }

    fn longest_legal_match(&self, spec: &MatchSpec) -> Result<Option<Duration>, RefereeError> {
        Ok(Some(longest_game(&WEREWOLF_LIFE.check(spec)?)))
    }

    fn play<'a>(&'a self, spec: &'a MatchSpec) -> BoxFuture<'a, Result<MatchRecord, RefereeError>> {
        Box::pin(async move {
            let cfg = WEREWOLF_LIFE.check(spec)?;
            let rules = cfg.settings.rule_set.name();
            let (seats, mut roster, unseated) = server::seat_match(spec, &cfg).await?;
            let header = header_of(rules, spec.seed, &roster, &spec.options);
            let mut table = WEREWOLF_LIFE.open(spec, seats, Some(&header));
            for (s, why) in unseated {
                table.fault(s, "day 0", SeatErrorKind::NotReady, why.clone());
                table.kill(s, &why);
            }
            let (seed, c) = (spec.seed, cfg.clone());
            let flow = move |mut table| async move {
                let out = play_game(0, seed, &c, &mut table, &mut roster).await;
                (table, out.map(|out| (out, roster)))
            };
            let close = move |played: Result<_, _>, finished| played.map(|p| (p, finished));
            let ((out, roster), finished) = WEREWOLF_LIFE.play(&cfg, table, flow, close).await??;
            if let Some(dir) = &cfg.log_dir {
                write_game_log(dir, "000.log", &out)?;
            }
            Records::new(cfg.log_dir.clone()).flush(&roster.ledger)?;
            Ok(record(rules, spec.seed, (out, roster), finished))
        })
    }

    fn rerun(&self, replay: &ParsedReplay) -> Result<MatchRecord, RefereeError> {
        let h = &replay.header;
        crate::verify::check_format(&h.format, FORMAT)?;
        let (cfg, mut roster) = replayed_setup(h)?;
        let table = WEREWOLF_LIFE.replayed(replay, h.seats.len(), Some(h))?;
        let c = &cfg;
        let flow = |mut table| async move {
            let out = play_game(0, h.seed, c, &mut table, &mut roster).await;
            (table, out.map(|out| (out, roster)))
        };
        let close =
            |played: Result<_, _>, finished| Ok(record(&h.rules, h.seed, played?, finished));
        WEREWOLF_LIFE.rerun(&cfg, table, flow, close)?
    }

    /// A werewolf@1 replay (a `reply` event per request) as @2: its replies become the seat
    /// record, the game is played again on it, and the result must tell the same game (the
    /// same log lines and end) as the old replay.
    fn upgrade(&self, old: &ParsedReplay) -> Result<ReplayLog, RefereeError> {
        let h = &old.header;
        if h.format != FORMAT_V1 {
            return Err(RefereeError::BadReplay(format!(
                "format {:?}: expected {FORMAT_V1}",
                h.format
            )));
        }
        let (cfg, _) = replayed_setup(h)?;
        let mut log = ReplayLog::new();
        log.push(&h.with_format(FORMAT));
        let limit_ms = cfg.settings.time_limit_ms;
        for ex in v1::seat_record(old, h.seats.len(), limit_ms).map_err(RefereeError::BadReplay)? {
            log.push(&ex);
        }
        let record = self.rerun(&ReplayLog::parse(&log.to_text())?)?;
        let new = ReplayLog::parse(&record.replay.to_text())?;
        v1::same_game(old, &new).map_err(RefereeError::BadReplay)?;
        Ok(record.replay)
    }
}

/// Names of the built-in agents, for error messages.
pub fn builtin_names() -> String {
    BUILTIN_NAMES.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::verify_replay;
    use kakehiki_core::SeatSpec;

    /// The bound of 15 agents under aiwolf-0.6's defaults, worked out by hand, and its parts
    /// moving with the options.
    #[test]
    fn the_longest_legal_game_counts_every_request_at_its_limit() {
        let seats = vec![SeatSpec::Builtin("random".into()); 15];
        let mut spec = MatchSpec::new("werewolf", 1, seats);
        // 15 agents, 3 wolves: per day 15×20 talks + 15×2 votes + 3×20×2 whispers + 3×2
        // attack votes + 2 = 458 requests; 15 days; 15 role requests: 6,885 s at 1 s each,
        // plus 10 s to connect, 5 s for NAME and 2 s to exit.
        let d = WEREWOLF.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_secs(6_885 + 17));
        spec.options.insert("time_limit_ms".into(), "100".into());
        spec.options.insert("max_talk_turn".into(), "5".into());
        // per day 75 + 30 + 120 + 6 + 2 = 233; 15 × 233 + 15 = 3,510 requests at 0.1 s.
        let d = WEREWOLF.longest_legal_match(&spec).unwrap().unwrap();
        assert_eq!(d, Duration::from_millis(351_000 + 17_000));
        spec.options.insert("max_talk_turn".into(), "many".into());
        assert!(WEREWOLF.longest_legal_match(&spec).is_err());
    }

    #[tokio::test]
    async fn a_builtin_match_reports_roles_and_teams_and_its_replay_reruns() {
        let seats: Vec<SeatSpec> = (0..15)
            .map(|i| {
                if i % 2 == 0 {
                    "builtin:sample"
                } else {
                    "builtin:random"
                }
                .parse()
                .unwrap()
            })
            .collect();
        for rules in ["aiwolf-0.6", "seed-2015"] {
            let mut spec = MatchSpec::new("werewolf", 5, seats.clone());
            spec.rules = Some(rules.into());
            let rec = WEREWOLF.play(&spec).await.unwrap();
            let team = rec.report.extra["winner_team"]
                .as_str()
                .unwrap()
                .to_string();
            let wins = rec
                .report
                .seats
                .iter()
                .filter(|s| s.extra["team"] == team.as_str())
                .count();
            assert_eq!(
                rec.report.scores.iter().filter(|s| **s == 1.0).count(),
                wins
            );
            assert!(rec
                .report
                .seats
                .iter()
                .all(|s| s.extra.contains_key("role")));
            verify_replay(&rec.replay.to_text()).unwrap();
            // A changed reply is caught.
            let text = rec
                .replay
                .to_text()
                .replacen("\"raw\":\"Over\"", "\"raw\":\"Skip\"", 1);
            assert!(verify_replay(&text).is_err());
        }
    }

    #[tokio::test]
    async fn bad_seats_are_setup_errors() {
        let mut seats: Vec<SeatSpec> = vec!["builtin:random".parse().unwrap(); 15];
        seats[3] = "builtin:nobody".parse().unwrap();
        let err = WEREWOLF
            .play(&MatchSpec::new("werewolf", 1, seats.clone()))
            .await
            .unwrap_err();
        assert!(
            matches!(err, RefereeError::UnknownBot { seat: 3, .. }),
            "{err}"
        );
        seats[3] = "cmd:./bot".parse().unwrap();
        let err = WEREWOLF
            .play(&MatchSpec::new("werewolf", 1, seats))
            .await
            .unwrap_err();
        assert!(
            matches!(err, RefereeError::UnsupportedSeat { seat: 3, .. }),
            "{err}"
        );
        let mut spec = MatchSpec::new("werewolf", 1, vec!["builtin:random".parse().unwrap(); 15]);
        spec.options.insert("bogus".into(), "1".into());
        assert!(matches!(
            WEREWOLF.play(&spec).await,
            Err(RefereeError::UnknownOption { .. })
        ));
    }

    #[test]
    fn the_v1_fixture_upgrades_to_a_seat_record_that_verifies() {
        let v1 = include_str!("../../../tests/data/werewolf-v1.jsonl");
        let text = kakehiki_core::replay::strip_header_field(v1, crate::driver::SANDBOX_KEY);
        let old = ReplayLog::parse(&text).unwrap();
        let err = WEREWOLF.rerun(&old).err().unwrap().to_string();
        assert!(err.contains("--upgrade"), "{err}");
        let new = WEREWOLF.upgrade(&old).unwrap().to_text();
        assert!(
            new.starts_with(r#"{"event":"header","format":"kakehiki/werewolf-replay@2""#),
            "{new}"
        );
        verify_replay(&new).unwrap();
        // The timed-out VOTE of the slow client, the garbage client's invalid TALK and ROLE.
        assert!(new.contains(r#""seat":3,"at":"day 1","kind":"VOTE","limit_ms":1000,"time_us":1002826,"outcome":"timeout""#), "{new}");
        assert!(
            new.contains(
                r#"{"event":"invalid","seat":1,"at":"day 1 talk 0","kind":"TALK","value":"Skip"}"#
            ),
            "{new}"
        );
        assert!(new.contains(r#""seat":1,"at":"day 0","kind":"ROLE","limit_ms":1000,"time_us":146,"outcome":"reply","raw":"AND (VOTE Agent[01]), (x)""#), "{new}");
        assert!(!new.contains(r#""event":"reply""#));
        // A changed recorded reply no longer tells the same game.
        let changed = v1.replacen(
            r#""line":"none","us":126"#,
            r#""line":"WEREWOLF","us":126"#,
            1,
        );
        assert!(changed != v1, "the fixture's first ROLE reply changed");
        let text = kakehiki_core::replay::strip_header_field(&changed, crate::driver::SANDBOX_KEY);
        assert!(WEREWOLF.upgrade(&ReplayLog::parse(&text).unwrap()).is_err());
    }

    #[tokio::test]
    async fn a_silent_seat_times_out_once_and_sits_out_the_game() {
        let mut seats: Vec<SeatSpec> = vec!["builtin:sample".parse().unwrap(); 5];
        seats[2] = "builtin:silent".parse().unwrap();
        let rec = WEREWOLF
            .play(&MatchSpec::new("werewolf", 3, seats))
            .await
            .unwrap();
        let s = &rec.report.seats[2];
        assert_eq!(s.extra["counts"]["timeouts"], 1, "{s:?}");
        assert_eq!(s.errors.len(), 1, "{s:?}");
        assert_eq!(s.errors[0].at, "day 0", "{s:?}");
        let text = rec.replay.to_text();
        assert_eq!(text.matches(r#""seat":2,"#).count(), 1, "{text}");
        verify_replay(&text).unwrap();
    }

    /// A seat answering from a script: each read takes the next line, or times out.
    struct Script(std::collections::VecDeque<&'static str>);

    impl crate::seat::Transport for Script {
        fn write<'a>(
            &'a mut self,
            _: &'a [u8],
            _: tokio::time::Instant,
        ) -> BoxFuture<'a, Result<(), crate::seat::Received>> {
            Box::pin(async { Ok(()) })
        }

        fn read(&mut self, deadline: tokio::time::Instant) -> BoxFuture<'_, crate::seat::Received> {
            let line = self.0.pop_front();
            Box::pin(async move {
                let mut r = crate::seat::Received::failure(ExchangeOutcome::Timeout, "");
                r.at = deadline;
                if let Some(l) = line.filter(|l| !l.is_empty()) {
                    (r.outcome, r.bytes, r.at) = (
                        ExchangeOutcome::Reply,
                        l.into(),
                        tokio::time::Instant::now(),
                    );
                }
                r
            })
        }

        fn kill(&mut self) {}

        fn finish(self: Box<Self>, _: Duration) -> BoxFuture<'static, crate::seat::Ending> {
            Box::pin(async { crate::seat::Ending::default() })
        }
    }

    #[tokio::test]
    async fn a_late_reply_in_the_next_game_is_discarded_and_the_real_one_awaited() {
        // Seat 0 misses its first ROLE (game 0), and its late reply comes first in game 1.
        let script = Script(["", "late", "none"].into_iter().collect());
        let mut seats = vec![crate::seat::Seat::Live(Box::new(script))];
        let specs: Vec<String> = (0..5)
            .map(|i| {
                if i == 0 {
                    "tcp".into()
                } else {
                    "builtin:sample".into()
                }
            })
            .collect();
        let mut names = vec!["script".to_string()];
        let cfg = Config::from_options(None, 5, &BTreeMap::new(), false).unwrap();
        for _ in 1..5 {
            seats.push(crate::seat::Seat::Builtin);
            names.push("sample".into());
        }
        let mut roster = Roster::new(specs, names, &cfg);
        for i in 1..5 {
            roster.bots[i] = kakehiki_werewolf::bots::builtin("sample", 1, i + 1);
        }
        let mut table = Table::new(
            seats,
            game_header("aiwolf-0.6", 1, &roster, &BTreeMap::new()),
        );
        run_game(0, 1, &cfg, &mut table, &mut roster).await.unwrap();
        assert!(roster.ledger.owes(1));
        *table.log() = game_header("aiwolf-0.6", 2, &roster, &BTreeMap::new());
        run_game(1, 2, &cfg, &mut table, &mut roster).await.unwrap();
        let kinds: Vec<(u32, &str)> = roster
            .ledger
            .errors
            .iter()
            .map(|e| (e.game, e.kind.as_str()))
            .collect();
        assert_eq!(kinds[..2], [(0, "timeout"), (1, "late_line")], "{kinds:?}");
        let role = roster
            .ledger
            .timings
            .iter()
            .find(|t| t.game == 1 && t.agent == 1)
            .unwrap();
        assert_eq!(
            (role.request.as_str(), role.outcome.as_str()),
            ("ROLE", "ok"),
            "{role:?}"
        );
        // Game 1's replay says a reply was owed, and re-runs to the same bytes.
        let text = table.log().to_text();
        assert!(
            text.lines()
                .next()
                .unwrap()
                .contains(r#""owed":[1,0,0,0,0]"#),
            "{text}"
        );
        verify_replay(&text).unwrap();
    }
}
