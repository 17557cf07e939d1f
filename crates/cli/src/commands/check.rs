//! `kakehiki check GAME --seat SPEC`: play a contestant's bot through a set of matches against
//! built-in bots (in the first and the last seat with several seeds, against an opponent that
//! times out, and with more seeds until it has met every kind of request the game sends), and
//! print what went wrong: every error the referee recorded for the bot (turn, kind, what was
//! expected and what it sent), its stderr tail, its median and slowest reply per kind of
//! request against the limit, and warnings (a READY without a newline costs the whole READY
//! time every game). Exit status 0 only for a bot with no errors.

use std::collections::BTreeMap;

use anyhow::{bail, Context};
use clap::Args;
use kakehiki_core::{SeatError, SeatSpec};
use kakehiki_referee::{find_game, MatchSpec};
use serde::Serialize;

use super::play::{parse_options, stderr_tails, SandboxArgs};
use crate::exit;

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The game: nac, religion-war, geister, werewolf, diplomacy.
    pub game: String,
    /// Your bot: cmd:<command line>, or tcp-cmd:<command line> with {host} and {port} for games
    /// with a TCP protocol.
    #[arg(long = "seat", value_name = "SPEC")]
    pub seat: SeatSpec,
    /// The built-in bot the other seats play (default: the game's first, usually `random`).
    #[arg(long, value_name = "NAME")]
    pub against: Option<String>,
    /// Rule set (default: the game's first).
    #[arg(long)]
    pub rules: Option<String>,
    /// Game-specific option KEY=VALUE; may be repeated.
    #[arg(long = "opt", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
    /// Seeds per seat played (the bot plays the first and the last seat).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=50))]
    pub seeds: u64,
    /// Print one JSON object (for CI): `passed`, per match `seed`, `seat`, `case`, `errors`,
    /// `warnings`, `stderr_tail`; `timings` per kind of request; `warnings`.
    #[arg(long)]
    pub json: bool,
    /// The same sandbox flags as `play`. Your bot is the one process seat: its folder is
    /// `--seat-dir 0=DIR`, given to it in whichever seat it plays.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

#[derive(Debug, Serialize)]
struct CheckedMatch {
    seed: u64,
    seat: usize,
    seats: usize,
    /// What the match tests: `first seat`, `last seat`, `an opponent that times out`.
    case: String,
    errors: Vec<SeatError>,
    /// Legal but costly behaviour (a READY without a newline, replies close to the limit).
    warnings: Vec<String>,
    stderr_tail: String,
}

/// Reply times of one kind of request over every match.
#[derive(Debug, Serialize, Clone, PartialEq)]
struct KindTimes {
    /// The request (`READY`, `turn`, `SET?`, `MOV?`, `movement`, `TALK`, ...).
    kind: String,
    replies: usize,
    median_ms: f64,
    slowest_ms: f64,
    /// The time allowed for one reply, when the game has a fixed one.
    limit_ms: Option<f64>,
}

#[derive(Debug, Serialize)]
struct CheckReport {
    game: String,
    bot: String,
    passed: bool,
    matches: Vec<CheckedMatch>,
    /// Median and slowest reply per kind of request, against its limit.
    timings: Vec<KindTimes>,
    /// Every kind of request the game sends and how many your bot answered (0: not met).
    coverage: Vec<Coverage>,
    warnings: Vec<String>,
}

/// One kind of request the game sends and the replies the checked bot gave to it.
#[derive(Debug, Serialize)]
struct Coverage {
    kind: String,
    replies: usize,
}

/// Lines of stderr shown per failed match.
const TAIL_LINES: usize = 20;

pub fn run(args: CheckArgs) -> anyhow::Result<u8> {
    let driver = find_game(&args.game)?;
    let gt = driver.game_type();
    if matches!(args.seat, SeatSpec::Builtin(_) | SeatSpec::Tcp) {
        bail!(
            "check plays your bot: give --seat cmd:<command line> or tcp-cmd:<command line>, not {}",
            args.seat
        );
    }
    let against = match &args.against {
        Some(name) => name.clone(),
        None => gt
            .builtin_bots
            .first()
            .map(|s| s.to_string())
            .context("this game has no built-in bots to play against")?,
    };
    let options = parse_options(&args.options)?;
    let n = gt.default_seats;
    // Your bot's sandbox (its folder as seat 0), moved to the seat it plays in each match.
    let sandbox = args.sandbox.config(1)?;
    if let SeatSpec::Cmd(argv) | SeatSpec::TcpCmd(argv) = &args.seat {
        // A launch line that cannot work in the sandbox is one error, not one per match.
        kakehiki_agent::check_mounts(argv, &sandbox.for_seat(0))
            .context("your bot cannot be started")?;
    }
    // The cases: the bot in the first and in the last seat with several seeds, then (where the
    // game allows a silent process opponent) against an opponent that never answers in time.
    struct Case {
        seat: usize,
        seed: u64,
        name: String,
        opponent: Option<(usize, SeatSpec)>,
        options: BTreeMap<String, String>,
    }
    let mut cases = Vec::new();
    let positions: Vec<usize> = if n > 1 { vec![0, n - 1] } else { vec![0] };
    for &seat in &positions {
        for k in 0..args.seeds {
            cases.push(Case {
                seat,
                seed: 1000 + k * 7 + seat as u64,
                name: if seat == 0 { "first seat" } else { "last seat" }.to_string(),
                opponent: None,
                options: options.clone(),
            });
        }
    }
    if let Some((spec, opts)) = sleeper(&args.game) {
        let mut o = options.clone();
        for (k, v) in opts {
            o.entry(k.to_string()).or_insert_with(|| v.to_string());
        }
        cases.push(Case {
            seat: 0,
            seed: 1999,
            name: "an opponent that times out".into(),
            opponent: Some((1, spec)),
            options: o,
        });
    }
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let mut matches = Vec::new();
    let mut samples: Vec<Sample> = Vec::new();
    let expected = request_kinds(&args.game);
    let mut extra = 0u64;
    let mut next_seed = 3000u64;
    let mut i = 0;
    while i < cases.len() || {
        // Until the bot has answered every kind of request the game sends (a role it was not
        // dealt, a phase that did not occur), a few more matches with other seeds.
        let missing: Vec<&str> = expected
            .iter()
            .copied()
            .filter(|k| !samples.iter().any(|s| s.kind == *k))
            .collect();
        // A bot that already failed has its diagnosis; more matches would only repeat it.
        let clean = matches.iter().all(|m: &CheckedMatch| m.errors.is_empty());
        let more = clean && !missing.is_empty() && extra < EXTRA_MATCHES;
        if more {
            extra += 1;
            // Werewolf: a request of a role the bot was not dealt (DIVINE for the seer, ...)
            // comes only with that role: a seed that deals it, roles not requested.
            let dealt = match args.game.as_str() {
                "werewolf" => werewolf_seed_for(&args, n, &options, &missing, &mut next_seed)?,
                _ => None,
            };
            let (seed, opts, why) = match dealt {
                Some((seed, opts, role)) => (seed, opts, format!(", dealt {role}")),
                None => (2000 + extra, options.clone(), String::new()),
            };
            cases.push(Case {
                seat: 0,
                seed,
                name: format!("more requests: {} not seen yet{why}", missing.join(", ")),
                opponent: None,
                options: opts,
            });
        }
        more
    } {
        let case = &cases[i];
        i += 1;
        let seat = case.seat;
        let seed = case.seed;
        let seats: Vec<SeatSpec> = (0..n)
            .map(|i| match &case.opponent {
                _ if i == seat => args.seat.clone(),
                Some((o, spec)) if *o == i => spec.clone(),
                _ => SeatSpec::Builtin(against.clone()),
            })
            .collect();
        let mut spec = MatchSpec::new(&args.game, seed, seats);
        let bot_env = std::mem::take(&mut spec.sandbox.env);
        spec.sandbox = sandbox.clone();
        spec.sandbox.env.extend(bot_env);
        if let Some(dir) = spec.sandbox.jail.seat_dirs.remove(&0) {
            spec.sandbox.jail.seat_dirs.insert(seat, dir);
        }
        if let Some(dir) = &sandbox.keep_seat_files {
            spec.sandbox.keep_seat_files = Some(dir.join(format!("seed-{seed}")));
        }
        spec.rules = args.rules.clone();
        spec.options = case.options.clone();
        if !args.json {
            eprintln!(
                "check: {} seed {seed}, your bot in seat {seat} of {n} ({})",
                args.game, case.name
            );
        }
        let record = runtime
            .block_on(driver.play(&spec))
            .with_context(|| format!("cannot run a {} match", args.game))?;
        let errors = record
            .report
            .seats
            .get(seat)
            .map(|s| s.errors.clone())
            .unwrap_or_default();
        let text = record.replay.to_text();
        let (mut times, warnings) = reply_times(&args.game, &text, seat);
        samples.append(&mut times);
        let tails: BTreeMap<usize, String> = stderr_tails(&text, TAIL_LINES);
        matches.push(CheckedMatch {
            seed,
            seat,
            seats: n,
            case: case.name.clone(),
            stderr_tail: if errors.is_empty() {
                String::new()
            } else {
                tails.get(&seat).cloned().unwrap_or_default()
            },
            errors,
            warnings,
        });
    }
    let timings = kind_times(&samples);
    let mut warnings: Vec<String> = Vec::new();
    let unseen: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|k| !samples.iter().any(|s| s.kind == *k))
        .collect();
    if !unseen.is_empty() && matches.iter().all(|m| m.errors.is_empty()) {
        warnings.push(format!(
            "your bot never got a {} request in {} matches: that code is untested here",
            unseen.join(", "),
            matches.len()
        ));
    }
    for m in &matches {
        for w in &m.warnings {
            if !warnings.contains(w) {
                warnings.push(w.clone());
            }
        }
    }
    for t in &timings {
        if let Some(limit) = t.limit_ms {
            if limit > 0.0 && t.slowest_ms > 0.5 * limit {
                warnings.push(format!(
                    "your slowest {} reply took {:.0} ms, {:.0}% of the {:.0} ms limit: a slower machine or a busier contest server may time it out",
                    t.kind,
                    t.slowest_ms,
                    100.0 * t.slowest_ms / limit,
                    limit
                ));
            }
        }
    }
    let coverage = expected
        .iter()
        .map(|k| Coverage {
            kind: k.to_string(),
            replies: samples.iter().filter(|s| s.kind == *k).count(),
        })
        .collect();
    let report = CheckReport {
        game: args.game.clone(),
        bot: args.seat.to_string(),
        passed: matches.iter().all(|m| m.errors.is_empty()),
        matches,
        timings,
        coverage,
        warnings,
    };
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", diagnosis(&report));
    }
    Ok(if report.passed {
        exit::OK
    } else {
        exit::SEAT_ERRORS
    })
}

/// Matches played at most to see every kind of request.
const EXTRA_MATCHES: u64 = 12;

/// The werewolf requests only a role receives: DIVINE the seer, GUARD the bodyguard, ATTACK and
/// WHISPER the werewolves (the medium and the possessed get none of their own).
const WEREWOLF_ROLE_REQUESTS: &[(&str, &str)] = &[
    ("DIVINE", "SEER"),
    ("GUARD", "BODYGUARD"),
    ("ATTACK", "WEREWOLF"),
    ("WHISPER", "WEREWOLF"),
];

/// Seeds tried per role before giving up (a role with one seat in 15 comes within a few dozen).
const WEREWOLF_SEED_TRIES: u64 = 2000;

/// A seed, the options to play it with, and the role it deals the checked seat.
type DealtSeed = (u64, BTreeMap<String, String>, &'static str);

/// A werewolf seed (from `*next`) that deals seat 0 the role of the first `missing` request only
/// a role receives, with `role_request=false` so the seed alone decides; `None` if no missing
/// request needs a role (or the rules have none of it).
fn werewolf_seed_for(
    args: &CheckArgs,
    n: usize,
    options: &BTreeMap<String, String>,
    missing: &[&str],
    next: &mut u64,
) -> anyhow::Result<Option<DealtSeed>> {
    use kakehiki_referee::games::werewolf::{dealt_role, without_role_requests};
    let Some(role) = missing.iter().find_map(|k| {
        WEREWOLF_ROLE_REQUESTS
            .iter()
            .find(|(req, _)| req == k)
            .map(|(_, role)| *role)
    }) else {
        return Ok(None);
    };
    for _ in 0..WEREWOLF_SEED_TRIES {
        let seed = *next;
        *next += 1;
        if dealt_role(args.rules.as_deref(), n, options, seed, 0)? == role {
            let opts = without_role_requests(args.rules.as_deref(), options);
            return Ok(Some((seed, opts, role)));
        }
    }
    Ok(None)
}

/// The kinds of request (as [`reply_times`] names them) a bot of `game` should have answered
/// before it is called checked.
fn request_kinds(game: &str) -> &'static [&'static str] {
    match game {
        "nac" | "religion-war" => &["READY", "turn"],
        "geister" => &["SET?", "MOV?"],
        "diplomacy" => &["start", "movement", "retreat", "adjustment"],
        "werewolf" => &[
            "ROLE", "TALK", "VOTE", "DIVINE", "GUARD", "ATTACK", "WHISPER",
        ],
        _ => &[],
    }
}

/// An opponent that never answers in time, for the games where a process seat can be one
/// (stdin/stdout bots), and the options that keep such a match short without changing the
/// limits the checked bot plays under.
fn sleeper(game: &str) -> Option<(SeatSpec, Vec<(&'static str, &'static str)>)> {
    let argv = |script: &str| SeatSpec::Cmd(vec!["sh".into(), "-c".into(), script.into()]);
    match game {
        // READY, then silence: every turn of that seat times out.
        "nac" | "religion-war" => Some((argv("echo READY; while read -r l; do :; done"), vec![])),
        // Never places: the placement clock runs out and your bot gets its end message
        // during the placement phase.
        "geister" => Some((
            argv("while read -r l; do :; done"),
            vec![("set_timeout_ms", "3000")],
        )),
        // Ready, then never orders: its first movement phase times out (the power then stands
        // in civil disorder), in a one-year game.
        // An AIWolf agent over TCP (bash's /dev/tcp) that gives its name, then never answers:
        // its first request after NAME times out.
        "werewolf" => Some((
            SeatSpec::TcpCmd(vec![
                "bash".into(),
                "-c".into(),
                "exec 3<>/dev/tcp/{host}/{port}; read -r l <&3; echo sleeper >&3; \
                 cat <&3 >/dev/null"
                    .into(),
            ]),
            vec![],
        )),
        "diplomacy" => Some((
            argv(r#"read -r l; echo '{"ready":true}'; while read -r l; do :; done"#),
            vec![("max_year", "1901")],
        )),
        _ => None,
    }
}

/// One reply of the checked bot: the kind of request, its time and the limit.
#[derive(Debug, Clone)]
struct Sample {
    kind: String,
    ms: f64,
    limit_ms: Option<f64>,
}

/// The checked seat's reply times from a replay, and the warnings its replay shows (a READY
/// without a newline). Each game records its own events; a game that records no times gives
/// none.
fn reply_times(game: &str, replay: &str, seat: usize) -> (Vec<Sample>, Vec<String>) {
    use serde_json::Value;
    let mut out = Vec::new();
    let mut warnings = Vec::new();
    let mut lines = replay
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok());
    let Some(header) = lines.next() else {
        return (out, warnings);
    };
    let params = &header["params"];
    let ms_of = |v: &Value| v.as_f64();
    match game {
        "nac" | "religion-war" => {
            // The seat record: one `seat` line per request (kinds `READY` and `turn`).
            for v in lines {
                if v["event"] != "seat" || v["seat"].as_u64() != Some(seat as u64) {
                    continue;
                }
                let (Some(kind), Some(us)) = (v["kind"].as_str(), v["time_us"].as_f64()) else {
                    continue;
                };
                let limit_ms = v["limit_ms"].as_f64();
                let unterminated = v["detail"]
                    .as_str()
                    .is_some_and(|d| d.starts_with("no line terminator"));
                if kind == "READY" && v["outcome"] == "reply" && unterminated {
                    warnings.push(format!(
                        "READY without a newline: the referee accepts it only at the deadline, so every game costs you {} s; end the line with \\n and flush",
                        params["limits"]["ready_ms"].as_f64().or(limit_ms).unwrap_or(5000.0) / 1000.0
                    ));
                }
                out.push(Sample {
                    kind: kind.to_string(),
                    ms: us / 1000.0,
                    limit_ms,
                });
            }
        }
        "geister" => {
            let r = &params["rules"];
            let set_ms = ms_of(&r["set_timeout_ms"]);
            // One move may use the whole bank on top of its own time.
            let move_ms = match (ms_of(&r["per_move_ms"]), ms_of(&r["bank_ms"])) {
                (Some(p), Some(b)) => Some(p + b),
                (p, _) => p,
            };
            let mut assigned = None;
            let mut placed = false;
            for v in lines {
                if v["seat"].as_u64() != Some(seat as u64) {
                    continue;
                }
                match v["event"].as_str() {
                    Some("assign") => assigned = v["t"].as_f64(),
                    Some("set") if !placed => {
                        if let (Some(a), Some(t)) = (assigned, v["t"].as_f64()) {
                            out.push(Sample {
                                kind: "SET?".into(),
                                ms: t - a,
                                limit_ms: set_ms,
                            });
                        }
                        placed = v["accepted"] == true;
                    }
                    Some("turn") => {
                        if let Some(ms) = v["elapsed_ms"].as_f64() {
                            out.push(Sample {
                                kind: "MOV?".into(),
                                ms,
                                limit_ms: move_ms,
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        // The seat record (`seat` lines): orders named by the kind of their phase
        // (`S1901M`: movement), whose limits differ.
        "diplomacy" => {
            for v in lines.filter(|v| v["event"] == "seat" && v["seat"] == seat) {
                let (Some(kind), Some(us)) = (v["kind"].as_str(), v["time_us"].as_f64()) else {
                    continue;
                };
                let kind = match (kind, v["at"].as_str().and_then(|a| a.chars().last())) {
                    ("orders", Some('M')) => "movement",
                    ("orders", Some('R')) => "retreat",
                    ("orders", Some('A')) => "adjustment",
                    (k, _) => k,
                };
                out.push(Sample {
                    kind: kind.to_string(),
                    ms: us / 1000.0,
                    limit_ms: v["limit_ms"].as_f64(),
                });
            }
        }
        "werewolf" => {
            let limit = params["options"]["time_limit_ms"]
                .as_str()
                .and_then(|t| t.parse::<f64>().ok())
                .or(Some(1000.0));
            // The seat record: every request answered or timed out (not the broadcasts).
            for v in lines {
                if v["event"] == "seat"
                    && v["seat"].as_u64() == Some(seat as u64)
                    && matches!(v["outcome"].as_str(), Some("reply" | "timeout"))
                {
                    if let (Some(req), Some(us), Some(_)) = (
                        v["kind"].as_str(),
                        v["time_us"].as_f64(),
                        v["limit_ms"].as_f64(),
                    ) {
                        out.push(Sample {
                            kind: req.to_string(),
                            ms: us / 1000.0,
                            limit_ms: v["limit_ms"].as_f64().or(limit),
                        });
                    }
                }
            }
        }
        _ => {}
    }
    (out, warnings)
}

/// Median and slowest per kind, kinds in the order first seen.
fn kind_times(samples: &[Sample]) -> Vec<KindTimes> {
    let mut kinds: Vec<&str> = Vec::new();
    for s in samples {
        if !kinds.contains(&s.kind.as_str()) {
            kinds.push(&s.kind);
        }
    }
    kinds
        .into_iter()
        .map(|k| {
            let mut ms: Vec<f64> = samples
                .iter()
                .filter(|s| s.kind == k)
                .map(|s| s.ms)
                .collect();
            ms.sort_by(f64::total_cmp);
            let median = if ms.len() % 2 == 1 {
                ms[ms.len() / 2]
            } else {
                (ms[ms.len() / 2 - 1] + ms[ms.len() / 2]) / 2.0
            };
            let limit_ms = samples
                .iter()
                .filter(|s| s.kind == k)
                .filter_map(|s| s.limit_ms)
                .next();
            KindTimes {
                kind: k.to_string(),
                replies: ms.len(),
                median_ms: median,
                slowest_ms: ms.last().copied().unwrap_or(0.0),
                limit_ms,
            }
        })
        .collect()
}

/// What a contestant reads: per failed match, every error with its turn and detail, then the
/// stderr tail; a verdict at the end.
fn diagnosis(r: &CheckReport) -> String {
    let mut out = String::new();
    for m in &r.matches {
        if m.errors.is_empty() {
            out.push_str(&format!(
                "ok    seed {}, seat {} of {} ({}): no errors\n",
                m.seed, m.seat, m.seats, m.case
            ));
            continue;
        }
        out.push_str(&format!(
            "FAIL  seed {}, seat {} of {} ({}): {} error{}\n",
            m.seed,
            m.seat,
            m.seats,
            m.case,
            m.errors.len(),
            if m.errors.len() == 1 { "" } else { "s" }
        ));
        for e in &m.errors {
            out.push_str(&format!(
                "      turn {}: {}: {}\n",
                e.turn,
                e.kind.as_str(),
                e.detail
            ));
        }
        if !m.stderr_tail.trim().is_empty() {
            out.push_str("      your bot's stderr (last lines):\n");
            for line in m.stderr_tail.lines() {
                out.push_str(&format!("      | {line}\n"));
            }
        }
    }
    if !r.timings.is_empty() {
        out.push_str("reply times (median / slowest / limit):\n");
        for t in &r.timings {
            out.push_str(&format!(
                "      {:<12} {:>9} / {:>9} / {:>9}  ({} repl{})\n",
                t.kind,
                fmt_ms(t.median_ms),
                fmt_ms(t.slowest_ms),
                t.limit_ms.map(fmt_ms).unwrap_or_else(|| "-".into()),
                t.replies,
                if t.replies == 1 { "y" } else { "ies" }
            ));
        }
    }
    if !r.coverage.is_empty() {
        let met: Vec<String> = r
            .coverage
            .iter()
            .map(|c| {
                if c.replies > 0 {
                    format!("{} {}", c.kind, c.replies)
                } else {
                    format!("{} never", c.kind)
                }
            })
            .collect();
        out.push_str(&format!("requests met (replies): {}\n", met.join(", ")));
    }
    for w in &r.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out.push_str(if r.passed {
        "passed: your bot played every match without an error\n"
    } else {
        "failed: fix the errors above (docs/protocols/ describes each game's protocol)\n"
    });
    out
}

fn fmt_ms(ms: f64) -> String {
    if ms < 10.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{ms:.0} ms")
    }
}
