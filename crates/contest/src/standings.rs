//! Standings: points or wins as the format defines, Weng-Lin ratings (match-index order), the
//! Bradley-Terry batch fit with bootstrap intervals, Geister league tables, Werewolf results
//! per role and per team. Output as a text table, JSON or CSV.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kakehiki_core::{score_from_str, score_text_decimal, MatchReport, Score};
use serde::Serialize;

use crate::config::{ContestDef, Format, Scoring};
use crate::geister;
use crate::ratings::{bradley_terry, weng_lin, BtRating, RatedGame};
use crate::schedule::{self, GameResult};

/// How one seat did in one game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeatResult {
    Win,
    Draw,
    Loss,
}

/// Win, draw or loss of every seat of a report. A named winner wins alone; a report in which
/// everyone lost (a Geister double forfeit) is a loss for all. Without either: in team
/// games (a `winner_team` in the report) the seats with the top score win; if all scores are
/// equal it is a draw for all; otherwise the seats sharing the top score draw and the rest lose.
pub fn seat_results(report: &MatchReport) -> Vec<SeatResult> {
    let n = report.scores.len();
    if report.everyone_lost {
        return vec![SeatResult::Loss; n];
    }
    if let Some(w) = report.winner {
        return (0..n)
            .map(|s| {
                if s == w {
                    SeatResult::Win
                } else {
                    SeatResult::Loss
                }
            })
            .collect();
    }
    let max = report
        .scores
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let min = report.scores.iter().copied().fold(f64::INFINITY, f64::min);
    if max == min {
        return vec![SeatResult::Draw; n];
    }
    let team_game = report
        .extra
        .get("winner_team")
        .is_some_and(|v| !v.is_null());
    let top = if team_game {
        SeatResult::Win
    } else {
        SeatResult::Draw
    };
    report
        .scores
        .iter()
        .map(|&s| if s == max { top } else { SeatResult::Loss })
        .collect()
}

fn exact_scores(report: &MatchReport) -> Vec<Score> {
    if report.scores_exact.len() == report.scores.len() {
        if let Ok(v) = report
            .scores_exact
            .iter()
            .map(|t| score_from_str(t))
            .collect::<Result<Vec<_>, _>>()
        {
            return v;
        }
    }
    // Scores without an exact form: millionths.
    report
        .scores
        .iter()
        .map(|s| Score::new((s * 1e6).round() as i64, 1_000_000))
        .collect()
}

fn to_f64(s: &Score) -> f64 {
    *s.numer() as f64 / *s.denom() as f64
}

/// One entrant's line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub rank: usize,
    pub entrant: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Points as the format counts them (exact, as text).
    pub points: String,
    pub points_value: f64,
    pub mean_points: f64,
    /// Mean points per game, exact (as text, like `points`).
    pub mean_points_exact: String,
    /// Seat errors recorded against the entrant (timeouts, crashes, invalid replies, ...).
    pub seat_errors: u64,
    /// Weng-Lin rating (mu) and uncertainty (sigma), updated match by match.
    pub weng_lin: f64,
    pub weng_lin_sigma: f64,
    /// Bradley-Terry maximum-likelihood rating on the Elo scale, with its bootstrap interval.
    pub bt_elo: f64,
    pub bt_low: f64,
    pub bt_high: f64,
}

/// One line of a league table (Geister seed contests).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageRow {
    pub rank: usize,
    pub entrant: String,
    pub wins: u32,
    pub qualified: bool,
}

/// A league (or the final) of a Geister seed contest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StageTable {
    pub name: String,
    pub games: usize,
    pub rematches: usize,
    /// Empty until every game of the stage is in.
    pub rows: Vec<StageRow>,
}

/// Results of one entrant in one role (Werewolf).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RoleRow {
    pub entrant: String,
    pub role: String,
    pub games: u64,
    pub wins: u64,
    pub win_rate: f64,
}

/// Games won by a team (Werewolf).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TeamRow {
    pub team: String,
    pub games_won: u64,
}

/// The standings of a contest.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Standings {
    pub contest: String,
    pub game: String,
    pub format: String,
    pub scoring: String,
    pub ranked_by: String,
    pub matches_scheduled: usize,
    pub matches_stored: usize,
    pub complete: bool,
    pub rows: Vec<Row>,
    pub stages: Vec<StageTable>,
    pub roles: Vec<RoleRow>,
    pub teams: Vec<TeamRow>,
}

/// The team of a Werewolf role (spec werewolf.md §1).
fn team_of_role(role: &str) -> &'static str {
    match role.to_ascii_uppercase().as_str() {
        "WEREWOLF" | "POSSESSED" => "WEREWOLF",
        "FOX" => "OTHERS",
        _ => "VILLAGER",
    }
}

/// Shared 1-based ranks of groups given best first.
fn group_ranks(groups: &[Vec<usize>]) -> BTreeMap<usize, usize> {
    let mut out = BTreeMap::new();
    let mut rank = 1;
    for g in groups {
        for &e in g {
            out.insert(e, rank);
        }
        rank += g.len();
    }
    out
}

/// Compute the standings of `def` from its stored results (by match index).
pub fn compute(def: &ContestDef, results: &BTreeMap<u64, GameResult>) -> Standings {
    compute_with(def, results, BradleyTerry::Fit)
}

/// Where the Bradley-Terry column of the standings comes from.
#[derive(Debug, Clone, Copy)]
pub enum BradleyTerry<'a> {
    /// Fit it now, with the contest's bootstrap (the official standings).
    Fit,
    /// Use a fit made earlier (the web UI fits in the background while a contest is being
    /// stored, so that no page waits on the bootstrap; its pages say which matches it covers).
    /// A fit of another number of entrants is ignored and the point estimate used instead.
    Given(&'a [BtRating]),
    /// Only the point estimate, without the bootstrap interval (low = high = elo).
    PointOnly,
}

/// The games of `results` as the ratings see them, by match index: each seat's score as the
/// contest's scoring counts it (exact scores, or 1 / ½ / 0 for a win, draw or loss).
pub fn rated_games(def: &ContestDef, results: &BTreeMap<u64, GameResult>) -> Vec<RatedGame> {
    results.values().map(|r| rated_game(def, r)).collect()
}

fn rated_game(def: &ContestDef, r: &GameResult) -> RatedGame {
    RatedGame {
        entrants: r.entrants.clone(),
        scores: match def.scoring {
            Scoring::Score => exact_scores(&r.report).iter().map(to_f64).collect(),
            _ => seat_results(&r.report)
                .iter()
                .map(|o| match o {
                    SeatResult::Win => 1.0,
                    SeatResult::Draw => 0.5,
                    SeatResult::Loss => 0.0,
                })
                .collect(),
        },
    }
}

/// The standings of `def` with the Bradley-Terry column from `bt`.
pub fn compute_with(
    def: &ContestDef,
    results: &BTreeMap<u64, GameResult>,
    bt: BradleyTerry<'_>,
) -> Standings {
    compute_scheduled(def, results, bt, &schedule::schedule(def, results))
}

/// [`compute_with`] given the contest's schedule for `results` (a caller that computes the
/// standings often keeps the schedule of a format whose schedule does not depend on results,
/// milliseconds for tens of thousands of matches, instead of making it each time).
pub fn compute_scheduled(
    def: &ContestDef,
    results: &BTreeMap<u64, GameResult>,
    bt: BradleyTerry<'_>,
    sched: &schedule::Schedule,
) -> Standings {
    let n = def.entrants.len();

    let mut games = vec![0u64; n];
    let mut wins = vec![0u64; n];
    let mut draws = vec![0u64; n];
    let mut losses = vec![0u64; n];
    let mut points = vec![Score::from_integer(0); n];
    let mut errors = vec![0u64; n];
    let mut rated = Vec::with_capacity(results.len());
    let mut role_stats: BTreeMap<(usize, String), (u64, u64)> = BTreeMap::new();
    let mut team_wins: BTreeMap<String, u64> = BTreeMap::new();

    for r in results.values() {
        let outcome = seat_results(&r.report);
        let exact = exact_scores(&r.report);
        for (seat, &e) in r.entrants.iter().enumerate() {
            if e >= n || seat >= outcome.len() {
                continue;
            }
            games[e] += 1;
            match outcome[seat] {
                SeatResult::Win => wins[e] += 1,
                SeatResult::Draw => draws[e] += 1,
                SeatResult::Loss => losses[e] += 1,
            }
            points[e] += match def.scoring {
                Scoring::Score => exact.get(seat).copied().unwrap_or_default(),
                Scoring::ThreeOneZero => Score::from_integer(match outcome[seat] {
                    SeatResult::Win => 3,
                    SeatResult::Draw => 1,
                    SeatResult::Loss => 0,
                }),
                Scoring::Wins => Score::from_integer(i64::from(outcome[seat] == SeatResult::Win)),
            };
            if let Some(sr) = r.report.seats.get(seat) {
                errors[e] += sr.faults() as u64;
                if let Some(role) = sr.extra.get("role").and_then(|v| v.as_str()) {
                    let stat = role_stats.entry((e, role.to_string())).or_default();
                    stat.0 += 1;
                    stat.1 += u64::from(outcome[seat] == SeatResult::Win);
                }
            }
        }
        let has_roles = r.report.seats.iter().any(|s| s.extra.contains_key("role"));
        if has_roles {
            let team = match r.report.extra.get("winner_team").and_then(|v| v.as_str()) {
                Some(t) => Some(t.to_string()),
                None => r
                    .report
                    .seats
                    .iter()
                    .zip(&outcome)
                    .find(|(_, o)| **o == SeatResult::Win)
                    .map(|(s, _)| {
                        s.extra
                            .get("team")
                            .and_then(|v| v.as_str())
                            .map(str::to_string)
                            .unwrap_or_else(|| {
                                team_of_role(
                                    s.extra.get("role").and_then(|v| v.as_str()).unwrap_or(""),
                                )
                                .to_string()
                            })
                    }),
            };
            if let Some(t) = team {
                *team_wins.entry(t).or_default() += 1;
            }
        }
        rated.push(rated_game(def, r));
    }

    let wl = weng_lin(n, &rated);
    let bt = match bt {
        BradleyTerry::Fit => bradley_terry(n, &rated, def.bootstrap, def.seed),
        BradleyTerry::Given(fit) if fit.len() == n => fit.to_vec(),
        BradleyTerry::Given(_) | BradleyTerry::PointOnly => bradley_terry(n, &rated, 0, def.seed),
    };
    let mean: Vec<Score> = (0..n)
        .map(|e| {
            if games[e] == 0 {
                Score::from_integer(0)
            } else {
                points[e] / Score::from_integer(games[e] as i64)
            }
        })
        .collect();

    // The ranking.
    let all: Vec<usize> = (0..n).collect();
    let mut stages = Vec::new();
    let groups: Vec<Vec<usize>> = match def.format {
        Format::GeisterGpw => {
            let lg: Vec<_> = results.values().map(schedule::league_game).collect();
            geister::rank_gpw(&all, &lg)
        }
        Format::GeisterSeed => {
            let (seed_stages, _) = schedule::seed_contest(def, results);
            let mut groups: Vec<Vec<usize>> = Vec::new();
            let mut placed = vec![false; n];
            // Finalists by final rank, then the others by their league rank.
            let mut rest: Vec<(usize, u32, usize)> = Vec::new();
            for st in &seed_stages {
                let rows = match &st.ranking {
                    Some(r) => r
                        .ranks()
                        .into_iter()
                        .map(|(e, rank)| StageRow {
                            rank,
                            entrant: def.entrants[e].name.clone(),
                            wins: r.wins.get(&e).copied().unwrap_or(0),
                            qualified: st.qualified.contains(&e),
                        })
                        .collect(),
                    None => Vec::new(),
                };
                if st.name == "final" {
                    if let Some(r) = &st.ranking {
                        for g in &r.groups {
                            groups.push(g.clone());
                            for &e in g {
                                placed[e] = true;
                            }
                        }
                    }
                } else if let Some(r) = &st.ranking {
                    for (e, rank) in r.ranks() {
                        rest.push((rank, r.wins.get(&e).copied().unwrap_or(0), e));
                    }
                }
                stages.push(StageTable {
                    name: st.name.clone(),
                    games: st.games.len(),
                    rematches: st.rematches.len(),
                    rows,
                });
            }
            rest.retain(|(_, _, e)| !placed[*e]);
            for (e, &is_placed) in placed.iter().enumerate() {
                if !is_placed && !rest.iter().any(|(_, _, x)| *x == e) {
                    rest.push((usize::MAX, 0, e));
                }
            }
            rest.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
            let mut i = 0;
            while i < rest.len() {
                let mut j = i + 1;
                while j < rest.len() && rest[j].0 == rest[i].0 && rest[j].1 == rest[i].1 {
                    j += 1;
                }
                groups.push(rest[i..j].iter().map(|x| x.2).collect());
                i = j;
            }
            groups
        }
        _ => {
            let key = |e: usize| {
                if def.format.ranks_by_mean() {
                    mean[e]
                } else {
                    points[e]
                }
            };
            let mut order = all.clone();
            order.sort_by(|&a, &b| key(b).cmp(&key(a)).then(a.cmp(&b)));
            let mut groups: Vec<Vec<usize>> = Vec::new();
            for e in order {
                match groups.last_mut() {
                    Some(g) if key(g[0]) == key(e) => g.push(e),
                    _ => groups.push(vec![e]),
                }
            }
            groups
        }
    };
    let ranks = group_ranks(&groups);
    let order: Vec<usize> = groups.iter().flatten().copied().collect();
    let rows = order
        .iter()
        .map(|&e| Row {
            rank: ranks.get(&e).copied().unwrap_or(n),
            entrant: def.entrants[e].name.clone(),
            games: games[e],
            wins: wins[e],
            draws: draws[e],
            losses: losses[e],
            points: kakehiki_core::format_score(&points[e]),
            points_value: to_f64(&points[e]),
            mean_points: to_f64(&mean[e]),
            mean_points_exact: kakehiki_core::format_score(&mean[e]),
            seat_errors: errors[e],
            weng_lin: wl[e].rating,
            weng_lin_sigma: wl[e].uncertainty,
            bt_elo: bt[e].elo,
            bt_low: bt[e].low,
            bt_high: bt[e].high,
        })
        .collect();
    let roles = role_stats
        .into_iter()
        .map(|((e, role), (g, w))| RoleRow {
            entrant: def.entrants[e].name.clone(),
            role,
            games: g,
            wins: w,
            win_rate: if g == 0 { 0.0 } else { w as f64 / g as f64 },
        })
        .collect();
    let teams = team_wins
        .into_iter()
        .map(|(team, games_won)| TeamRow { team, games_won })
        .collect();
    Standings {
        contest: def.name.clone(),
        game: def.game.clone(),
        format: def.format.name().to_string(),
        scoring: Scoring::ALL
            .iter()
            .find(|(_, s)| *s == def.scoring)
            .map(|(n, _)| *n)
            .unwrap_or("?")
            .to_string(),
        ranked_by: match def.format {
            Format::GeisterSeed => "final league, then preliminary league rank".to_string(),
            Format::GeisterGpw => "points, then points among the tied, then wins".to_string(),
            f if f.ranks_by_mean() => "mean points per game".to_string(),
            _ => "points".to_string(),
        },
        matches_scheduled: sched.matches.len(),
        matches_stored: results.len(),
        complete: sched.complete && sched.matches.iter().all(|m| results.contains_key(&m.index)),
        rows,
        stages,
        roles,
        teams,
    }
}

/// Output formats of `contest standings`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Table,
    Json,
    Csv,
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Standings {
    pub fn render(&self, format: OutputFormat) -> String {
        match format {
            OutputFormat::Json => serde_json::to_string_pretty(self).unwrap_or_default() + "\n",
            OutputFormat::Csv => self.to_csv(),
            OutputFormat::Table => self.to_table(),
        }
    }

    fn to_csv(&self) -> String {
        let mut out = String::from(
            "rank,entrant,games,wins,draws,losses,points,mean_points,seat_errors,weng_lin,weng_lin_sigma,bt_elo,bt_low,bt_high\n",
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{:.6},{},{:.4},{:.4},{:.1},{:.1},{:.1}",
                r.rank,
                csv_field(&r.entrant),
                r.games,
                r.wins,
                r.draws,
                r.losses,
                csv_field(&r.points),
                r.mean_points,
                r.seat_errors,
                r.weng_lin,
                r.weng_lin_sigma,
                r.bt_elo,
                r.bt_low,
                r.bt_high
            );
        }
        if !self.roles.is_empty() {
            out.push_str("\nentrant,role,games,wins,win_rate\n");
            for r in &self.roles {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{:.4}",
                    csv_field(&r.entrant),
                    r.role,
                    r.games,
                    r.wins,
                    r.win_rate
                );
            }
            out.push_str("\nteam,games_won\n");
            for t in &self.teams {
                let _ = writeln!(out, "{},{}", csv_field(&t.team), t.games_won);
            }
        }
        out
    }

    fn to_table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} ({} {}, scoring {}, ranked by {}): {} of {} matches{}",
            self.contest,
            self.game,
            self.format,
            self.scoring,
            self.ranked_by,
            self.matches_stored,
            self.matches_scheduled,
            if self.complete {
                ", complete"
            } else {
                ", in progress"
            }
        );
        let w = self
            .rows
            .iter()
            .map(|r| r.entrant.chars().count())
            .max()
            .unwrap_or(7)
            .max(7);
        let _ = writeln!(
            out,
            "{:>4}  {:<w$}  {:>6} {:>5} {:>5} {:>5} {:>9} {:>8} {:>6}  {:>14}  {:>22}",
            "rank",
            "entrant",
            "games",
            "wins",
            "draws",
            "loss",
            "points",
            "mean",
            "errors",
            "weng-lin",
            "bradley-terry (95% ci)"
        );
        for r in &self.rows {
            let _ = writeln!(
                out,
                "{:>4}  {:<w$}  {:>6} {:>5} {:>5} {:>5} {:>9} {:>8} {:>6}  {:>6.2} ± {:<5.2}  {:>6.0} [{:>5.0}, {:>5.0}]",
                r.rank,
                r.entrant,
                r.games,
                r.wins,
                r.draws,
                r.losses,
                score_text_decimal(&r.points),
                score_text_decimal(&r.mean_points_exact),
                r.seat_errors,
                r.weng_lin,
                r.weng_lin_sigma,
                r.bt_elo,
                r.bt_low,
                r.bt_high
            );
        }
        for st in &self.stages {
            let _ = writeln!(
                out,
                "\n{} ({} games, {} rematches)",
                st.name, st.games, st.rematches
            );
            if st.rows.is_empty() {
                let _ = writeln!(out, "  not complete yet");
            }
            for r in &st.rows {
                let _ = writeln!(
                    out,
                    "  {:>3}  {:<w$}  {:>3} wins{}",
                    r.rank,
                    r.entrant,
                    r.wins,
                    if r.qualified { "  qualified" } else { "" }
                );
            }
        }
        if !self.roles.is_empty() {
            let _ = writeln!(out, "\nper role:");
            for r in &self.roles {
                let _ = writeln!(
                    out,
                    "  {:<w$}  {:<10} {:>6} games {:>6} wins  {:>5.1}%",
                    r.entrant,
                    r.role,
                    r.games,
                    r.wins,
                    100.0 * r.win_rate
                );
            }
            let _ = writeln!(out, "per team:");
            for t in &self.teams {
                let _ = writeln!(out, "  {:<10} {:>6} games won", t.team, t.games_won);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kakehiki_core::{Outcome, Score};

    fn report(scores: [i64; 2], everyone_lost: bool) -> MatchReport {
        let outcome = Outcome::by_max(scores.iter().map(|&s| Score::from_integer(s)).collect());
        let mut r = MatchReport::new(
            "geister",
            "gpw",
            0,
            &outcome,
            vec![("a".into(), vec![]), ("b".into(), vec![])],
        );
        r.everyone_lost = everyone_lost;
        r
    }

    static DUEL: kakehiki_core::GameType = kakehiki_core::GameType {
        name: "duel",
        title: "Duel",
        min_seats: 2,
        max_seats: 2,
        default_seats: 2,
        dynamics: kakehiki_core::Dynamics::Sequential,
        information: kakehiki_core::Information::Imperfect,
        chance: kakehiki_core::Chance::Seeded,
        transports: &[kakehiki_core::Transport::Stdio],
        rule_sets: &["standard"],
        builtin_bots: &["a", "b"],
    };

    #[test]
    fn the_table_shows_two_decimals_and_json_keeps_the_exact_points() {
        let def = ContestDef::parse(
            "name = \"frac\"\ngame = \"duel\"\nformat = \"round-robin\"\nscoring = \"score\"\n\
             games = 2\nseed = 1\nbootstrap = 0\n[[entrants]]\nname = \"a\"\nseat = \"builtin:a\"\n\
             [[entrants]]\nname = \"b\"\nseat = \"builtin:b\"\n",
            "frac.toml",
            &|_| Ok(&DUEL),
        )
        .unwrap();
        let outcome = Outcome::by_max(vec![Score::new(15022, 3), Score::new(-155, 2)]);
        let report = MatchReport::new(
            "duel",
            "standard",
            0,
            &outcome,
            vec![("a".into(), vec![]), ("b".into(), vec![])],
        );
        let results = BTreeMap::from([(
            0,
            GameResult {
                index: 0,
                entrants: vec![0, 1],
                report,
            },
        )]);
        let st = compute(&def, &results);
        let table = st.render(OutputFormat::Table);
        assert!(
            table.contains("5007.33") && table.contains("-77.50"),
            "{table}"
        );
        assert!(!table.contains("15022/3"), "{table}");
        let json: serde_json::Value = serde_json::from_str(&st.render(OutputFormat::Json)).unwrap();
        assert_eq!(json["rows"][0]["points"], "15022/3");
        assert_eq!(json["rows"][1]["points"], "-155/2");
        assert_eq!(json["rows"][1]["mean_points_exact"], "-155/2");
    }

    #[test]
    fn everyone_lost_is_a_loss_for_every_seat_and_equal_scores_otherwise_a_draw() {
        assert_eq!(
            seat_results(&report([0, 0], true)),
            [SeatResult::Loss, SeatResult::Loss]
        );
        assert_eq!(
            seat_results(&report([0, 0], false)),
            [SeatResult::Draw, SeatResult::Draw]
        );
        assert_eq!(
            seat_results(&report([1, 0], false)),
            [SeatResult::Win, SeatResult::Loss]
        );
    }
}
