//! The hosted ladder's public pages: the leaderboard, a bot's page (rating over time, recent
//! matches) and a match with the game's viewer. Rendered from what the ladder keeps in the
//! store (`kakehiki_store::LadderPlay`); the server decides what a visitor may see (whose
//! stderr) before calling these.

use kakehiki_store::{LadderRating, LadderSeat};
use serde_json::{json, Value};

use serde::Serialize;

use crate::html::{render, viewer_ctx, SEAT_FIELDS};
use crate::view::{view_model_text, ViewOptions};

/// "3 min ago" for a time `then` seen at `now` (seconds since the epoch).
pub fn ago(then: Option<i64>, now: i64) -> String {
    let Some(then) = then else {
        return "never".into();
    };
    let d = (now - then).max(0);
    match d {
        0..=59 => format!("{d} s ago"),
        60..=3599 => format!("{} min ago", d / 60),
        3600..=86_399 => format!("{} h ago", d / 3600),
        _ => format!("{} days ago", d / 86_400),
    }
}

/// Who is looking at a ladder page, for its navigation bar (the same on every page of the
/// ladder, public or a contestant's): the signed-in contestant's name, whether they organise,
/// and their session's CSRF token for the log-out form.
#[derive(Debug, Clone, Default)]
pub struct LadderVisitor {
    pub user: Option<String>,
    pub organiser: bool,
    pub csrf: Option<String>,
    /// Where the ladder's pages are: `""` at the root of a server of one ladder,
    /// `/ladders/NAME` on a server of several (whose `/` lists them).
    pub base: String,
    /// Whether the server serves several ladders.
    pub several: bool,
    /// Whether the visitor may play the ladder's bots in their browser (signed in, and the
    /// server lets people play).
    pub play: bool,
}

impl LadderVisitor {
    fn json(&self) -> Value {
        json!({"user": self.user, "organiser": self.organiser, "csrf": self.csrf,
               "base": self.base, "several": self.several, "play": self.play})
    }
}

/// Leaderboard rows per page (`?per=` changes it, up to 1,000).
pub const LEADERBOARD_PER: usize = 100;

/// Page `page` (from 1) of the leaderboard, `per` rows a page: `ratings` are that page's rows,
/// best first (as `LadderPlay::ladder_ratings_page` gives them), of `total` entrants. A
/// `frozen` ladder says so above the table (no match is played until it reopens).
#[allow(clippy::too_many_arguments)]
pub fn leaderboard_page(
    ladder: &str,
    game: &str,
    rules: &str,
    frozen: bool,
    ratings: &[LadderRating],
    now: i64,
    page: usize,
    per: usize,
    total: usize,
    me: &LadderVisitor,
) -> String {
    let page = crate::html::Page {
        number: page.max(1),
        per: per.max(1),
    };
    let first = (page.number - 1).saturating_mul(page.per);
    let rows: Vec<Value> = ratings
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({
                "rank": first + i + 1, "bot": r.bot, "owner": r.owner, "version": r.version,
                "mu": r.mu, "sigma": r.sigma, "conservative": r.conservative(),
                "games": r.games,
                "win_rate": if r.games == 0 { 0.0 } else { r.wins as f64 / r.games as f64 },
                "errors": r.errors, "last_active": ago(r.last_played, now),
            })
        })
        .collect();
    render(
        "ladder_board.html",
        json!({"title": format!("{ladder} leaderboard"), "ladder": ladder, "game": game,
               "rules": rules, "frozen": frozen, "rows": rows, "total": total, "me": me.json(),
               "bpager": page.links("/leaderboard", "page", "per", LEADERBOARD_PER, total)}),
    )
}

/// A play-off of entrants a ladder's final ranks level (`final_tie_break = "playoff"`): its
/// contest, the rank its entrants share in the final, and how far it is played.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Playoff {
    pub contest: String,
    pub rank: usize,
    pub stored: usize,
    pub scheduled: usize,
    pub complete: bool,
}

/// One row of a ladder's final on the ladder site: the final's own standing, and the ladder
/// rating that breaks its ties.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FinalRow {
    pub rank: usize,
    /// The entrant as the final named it (`alice@v3`, `builtin:strong`).
    pub entrant: String,
    /// Its bot (`alice`), or the built-in itself.
    pub bot: String,
    pub games: u64,
    pub wins: u64,
    pub draws: u64,
    pub losses: u64,
    /// Points as the final's format counts them.
    pub points: String,
    pub seat_errors: u64,
    /// Its ladder rating (μ − 3σ) as the ladder froze, where it has one.
    pub rating: Option<f64>,
    /// The final ranked it level with others; the ladder rating decided its rank.
    pub by_rating: bool,
    /// The final ranked it level with others; their play-off decided its rank.
    pub by_playoff: bool,
}

/// The final's rows from its standings: each entrant's bot from its name, its ladder rating
/// from `rating_of(bot, version)`; entrants the final ranks level at rank R ordered by the
/// complete play-off `playoffs[R]` if there is one (each entrant's rank in it), then, with
/// `break_ties`, by that rating (the better one first; level ratings, or none, still share a
/// rank).
pub fn final_rows(
    standings: &kakehiki_contest::standings::Standings,
    rating_of: impl Fn(&str, Option<u64>) -> Option<f64>,
    playoffs: &std::collections::BTreeMap<usize, std::collections::BTreeMap<String, usize>>,
    break_ties: bool,
) -> Vec<FinalRow> {
    let mut rows: Vec<FinalRow> = standings
        .rows
        .iter()
        .map(|r| {
            let (bot, version) = kakehiki_store::entrant_bot(&r.entrant);
            FinalRow {
                rank: r.rank,
                rating: rating_of(bot, version),
                entrant: r.entrant.clone(),
                bot: bot.to_string(),
                games: r.games,
                wins: r.wins,
                draws: r.draws,
                losses: r.losses,
                points: r.points.clone(),
                seat_errors: r.seat_errors,
                by_rating: false,
                by_playoff: false,
            }
        })
        .collect();
    let rating = |r: &FinalRow| {
        if break_ties {
            r.rating.unwrap_or(f64::NEG_INFINITY)
        } else {
            0.0
        }
    };
    let mut start = 0;
    while start < rows.len() {
        let rank = rows[start].rank;
        let end = start + rows[start..].iter().take_while(|r| r.rank == rank).count();
        let group = &mut rows[start..end];
        if group.len() > 1 {
            // The play-off's rank (one not in it, after those that are), then the rating.
            let playoff = playoffs.get(&rank);
            let placed = |r: &FinalRow| {
                playoff.map_or(0, |p| p.get(&r.entrant).copied().unwrap_or(usize::MAX))
            };
            group.sort_by(|a, b| {
                placed(a)
                    .cmp(&placed(b))
                    .then(rating(b).total_cmp(&rating(a)))
            });
            let key = |r: &FinalRow| (placed(r), rating(r));
            for i in 0..group.len() {
                let level = i > 0 && key(&group[i]) == key(&group[i - 1]);
                group[i].rank = if level { group[i - 1].rank } else { rank + i };
            }
            for i in 0..group.len() {
                let same_place = group
                    .iter()
                    .filter(|r| placed(r) == placed(&group[i]))
                    .count();
                // The rating decided where the play-off (or the final) left them level.
                let rated = same_place > 1
                    && group
                        .iter()
                        .any(|r| placed(r) == placed(&group[i]) && rating(r) != rating(&group[i]));
                group[i].by_playoff = playoff.is_some();
                group[i].by_rating = rated;
            }
        }
        start = end;
    }
    rows
}

/// The final's standings on the ladder site: its contest, how far it is played, and its rows.
#[allow(clippy::too_many_arguments)]
pub fn final_page(
    ladder: &str,
    contest: &str,
    format: &str,
    rows: &[FinalRow],
    stored: usize,
    scheduled: usize,
    complete: bool,
    playoffs: &[Playoff],
    tie_break: &str,
    me: &LadderVisitor,
) -> String {
    render(
        "ladder_final.html",
        json!({"title": format!("{ladder} final"), "ladder": ladder, "contest": contest,
               "format": format, "rows": rows, "stored": stored, "scheduled": scheduled,
               "complete": complete, "tie_break": tie_break, "playoffs": playoffs,
               "settled": complete && playoffs.iter().all(|p| p.complete),
               "tied": rows.iter().any(|r| r.by_rating),
               "by_playoff": rows.iter().any(|r| r.by_playoff), "me": me.json()}),
    )
}

/// One of a bot's matches: its seat and the table's other seats.
pub struct BotMatch {
    pub mine: LadderSeat,
    pub table: Vec<LadderSeat>,
}

/// Left and bottom margins of a rating chart: room for the μ labels and the dates, so that no
/// label lies over the line.
const CHART_LEFT: f64 = 44.0;
const CHART_BOTTOM: f64 = 20.0;

/// When a match was played, as a chart's axis says it: `MM-DD HH:MM`, UTC.
fn axis_time(unix: i64) -> String {
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(unix.max(0).unsigned_abs());
    // `2026-12-07T17:03:00Z` → `12-07 17:03`.
    let full = humantime::format_rfc3339_seconds(at).to_string();
    full.get(5..16)
        .map_or(full.clone(), |t| t.replace('T', " "))
}

/// A rating chart `w` × `h` of `points` (when each match was played, and μ after it; oldest
/// first): the line's points, its range, and the dates of the first, middle and last matches
/// under the axis. Matches are spaced evenly (a burst of matches is not squeezed).
fn chart(points: &[(i64, f64)], w: f64, h: f64) -> Option<Value> {
    if points.len() < 2 {
        return None;
    }
    let min = points.iter().map(|p| p.1).fold(f64::INFINITY, f64::min);
    let max = points.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max);
    let span = (max - min).max(1e-9);
    let (left, right, top, bottom) = (CHART_LEFT, w - 4.0, 4.0, h - CHART_BOTTOM);
    let step = (right - left) / (points.len() - 1) as f64;
    let x = |i: usize| left + step * i as f64;
    let line: Vec<String> = points
        .iter()
        .enumerate()
        .map(|(i, (_, v))| {
            let y = top + (bottom - top) * (1.0 - (v - min) / span);
            format!("{:.1},{y:.1}", x(i))
        })
        .collect();
    let last = points.len() - 1;
    let mut dated = vec![(0, "start")];
    if last / 2 > 0 && last / 2 < last {
        dated.push((last / 2, "middle"));
    }
    dated.push((last, "end"));
    let ticks: Vec<Value> = dated
        .into_iter()
        .map(|(i, anchor)| {
            json!({"x": format!("{:.1}", x(i)), "anchor": anchor, "label": axis_time(points[i].0)})
        })
        .collect();
    Some(json!({
        "w": w, "h": h, "n": points.len(), "min": min, "max": max, "points": line.join(" "),
        "left": left, "top": top, "bottom": bottom, "ticks": ticks,
    }))
}

/// A bot's page. `row`: its rank and rating when it is on the leaderboard; `matches`: its
/// recent matches, newest first; `owner_versions`: its versions, listed only for its owner or an
/// organiser (empty otherwise); `older`: the index to page back from, when there are more.
#[allow(clippy::too_many_arguments)]
pub fn bot_page(
    ladder: &str,
    bot: &str,
    row: Option<(usize, &LadderRating)>,
    versions: &[LadderRating],
    matches: &[BotMatch],
    owner_versions: &[u64],
    older: Option<u64>,
    me: &LadderVisitor,
) -> String {
    let mu: Vec<(i64, f64)> = matches
        .iter()
        .rev()
        .map(|m| (m.mine.played_at, m.mine.mu_after))
        .collect();
    // The page's context, typed: a bot's page is asked for as often as the leaderboard and is
    // made per request (its rank moves with every rating), so it is read straight into the
    // template rather than through a JSON value.
    #[derive(Serialize)]
    struct Opponent<'a> {
        bot: &'a str,
        place: u64,
    }
    #[derive(Serialize)]
    struct Row<'a> {
        index: u64,
        version: u64,
        seat: usize,
        place: u64,
        score: f64,
        errors: u64,
        mu_after: f64,
        opponents: Vec<Opponent<'a>>,
    }
    #[derive(Serialize)]
    struct Page<'a> {
        title: &'a str,
        ladder: &'a str,
        bot: &'a str,
        row: Option<Value>,
        matches: Vec<Row<'a>>,
        chart: Option<Value>,
        owner_links: &'a [u64],
        older: Option<u64>,
        me: Value,
        versions: Vec<Value>,
    }
    let rows = matches
        .iter()
        .map(|m| Row {
            index: m.mine.index,
            version: m.mine.version,
            seat: m.mine.seat,
            place: m.mine.place,
            score: m.mine.score,
            errors: m.mine.errors,
            mu_after: m.mine.mu_after,
            opponents: m
                .table
                .iter()
                .filter(|t| t.seat != m.mine.seat)
                .map(|t| Opponent {
                    bot: &t.bot,
                    place: t.place,
                })
                .collect(),
        })
        .collect();
    let row = row.map(|(rank, r)| {
        json!({"rank": rank, "version": r.version, "mu": r.mu, "sigma": r.sigma, "games": r.games,
               "wins": r.wins, "errors": r.errors, "owner": r.owner})
    });
    // Each version that took part, compared: games, wins, win rate, rating, errors per game.
    let versions = versions
        .iter()
        .map(|r| {
            let per = |n: u64| (r.games > 0).then(|| n as f64 / r.games as f64);
            json!({"version": r.version, "active": r.active, "games": r.games, "wins": r.wins,
                   "win_rate": per(r.wins).map(|x| 100.0 * x), "mu": r.mu, "sigma": r.sigma,
                   "conservative": r.conservative(), "errors_per_game": per(r.errors),
                   "last_played": r.last_played.map(axis_time)})
        })
        .collect();
    render(
        "ladder_bot.html",
        Page {
            title: bot,
            ladder,
            bot,
            row,
            matches: rows,
            chart: chart(&mu, 640.0, 160.0),
            owner_links: owner_versions,
            older,
            me: me.json(),
            versions,
        },
    )
}

/// A match with the game's viewer. `replay` must already be what this visitor may see (the
/// stderr of seats not theirs removed); `bots` names each seat's bot (for links) and
/// `stderr_seats` lists the seats whose stderr the visitor sees.
#[allow(clippy::too_many_arguments)]
pub fn match_page(
    ladder: &str,
    index: u64,
    entrants: &[String],
    bots: &[String],
    report_json: &str,
    replay: &str,
    stderr_seats: &[usize],
    me: &LadderVisitor,
) -> String {
    let report: Value = serde_json::from_str(report_json).unwrap_or(Value::Null);
    let parsed: Option<kakehiki_core::MatchReport> = serde_json::from_value(report.clone()).ok();
    let result = parsed
        .as_ref()
        .map(|r| crate::contest::result_text(r, entrants))
        .unwrap_or_default();
    let seats_json = report["seats"].as_array().cloned().unwrap_or_default();
    let keys: Vec<&str> = SEAT_FIELDS
        .iter()
        .copied()
        .filter(|k| seats_json.iter().any(|s| !s[*k].is_null()))
        .collect();
    let seats: Vec<Value> = entrants
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let s = seats_json.get(i).cloned().unwrap_or(Value::Null);
            json!({
                "name": name, "bot": bots.get(i).cloned().unwrap_or_default(),
                "score": report["scores_exact"][i].as_str().map(kakehiki_core::score_text_decimal),
                "score_exact": report["scores_exact"][i], "errors": s["errors"],
                "extra": keys.iter().map(|k| match &s[*k] { Value::String(t) => t.clone(), Value::Null => String::new(), v => v.to_string() }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut ctx = json!({
        "title": format!("{ladder} match {index}"), "ladder": ladder, "index": index,
        "game": report["game"], "rules": report["rules"], "seed": report["seed"],
        "result": result, "seats": seats, "extra_keys": keys, "stderr_seats": stderr_seats,
        "me": me.json(),
    });
    // The replay holds only what this visitor may see: shown whole.
    let model = view_model_text(
        replay,
        &ViewOptions {
            names: Some(entrants.to_vec()),
            private: true,
        },
    );
    match model {
        Ok(model) => viewer_ctx(&mut ctx, &model, true),
        Err(e) => ctx["model_error"] = json!(e.to_string()),
    }
    render("ladder_match.html", ctx)
}

/// The page of a match being played: the game's viewer on what the public has been told so
/// far (`so_far`, with the stderr `me` may not read hidden), opened at its last step and marked
/// live, and the script that follows the match's `events` stream (`after`: the lines shown) and
/// turns the page into the stored replay's when the match is over. A game whose viewer needs
/// more than is public during the match shows its latest public lines instead.
pub fn live_match_page(
    ladder: &str,
    info: &kakehiki_core::live::LiveInfo,
    so_far: &str,
    after: usize,
    events: &str,
    me: &LadderVisitor,
) -> String {
    let mut ctx = json!({
        "title": format!("{ladder} match {} (live)", info.index), "ladder": ladder,
        "index": info.index, "game": info.game, "live": true,
        "seats": info.entrants.iter().map(|e| json!({"name": e, "bot": kakehiki_store::entrant_bot(e).0})).collect::<Vec<_>>(),
        "events": format!("{events}?after={after}"), "shown": after,
        "me": me.json(),
    });
    crate::live::viewer_so_far(&mut ctx, so_far, &info.entrants);
    render("ladder_match.html", ctx)
}

/// The page of a ladder's matches being played now (`running`: [`crate::live::running_json`]
/// of each), `now` in Unix milliseconds for how long ago each started.
pub fn live_list_page(ladder: &str, running: &[Value], now_ms: u64, me: &LadderVisitor) -> String {
    let running: Vec<Value> = running
        .iter()
        .map(|m| {
            let started = m["started_unix_ms"].as_u64().unwrap_or(now_ms);
            let mut m = m.clone();
            m["started"] = json!(format!("{} s ago", now_ms.saturating_sub(started) / 1000));
            m
        })
        .collect();
    render(
        "ladder_live.html",
        json!({"title": format!("{ladder} playing now"), "ladder": ladder, "running": running,
               "me": me.json()}),
    )
}

/// A page saying what is not there.
pub fn not_found_page(message: &str) -> String {
    crate::html::error_page(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Standings of a final whose rows have these (entrant, rank).
    fn standings(rows: &[(&str, usize)]) -> kakehiki_contest::standings::Standings {
        kakehiki_contest::standings::Standings {
            contest: "g-final".into(),
            game: "geister".into(),
            format: "round-robin".into(),
            scoring: "points".into(),
            ranked_by: "points".into(),
            matches_scheduled: 6,
            matches_stored: 6,
            complete: true,
            rows: rows
                .iter()
                .map(|&(entrant, rank)| kakehiki_contest::standings::Row {
                    rank,
                    entrant: entrant.into(),
                    games: 4,
                    wins: 2,
                    draws: 0,
                    losses: 2,
                    points: "2".into(),
                    points_value: 2.0,
                    mean_points: 0.5,
                    mean_points_exact: "1/2".into(),
                    seat_errors: 0,
                    weng_lin: 25.0,
                    weng_lin_sigma: 8.0,
                    bt_elo: 0.0,
                    bt_low: 0.0,
                    bt_high: 0.0,
                })
                .collect(),
            stages: Vec::new(),
            roles: Vec::new(),
            teams: Vec::new(),
        }
    }

    #[test]
    fn the_finals_ties_are_broken_by_the_ladder_rating_of_the_frozen_version() {
        // alice and bob share first place, carol and dave share third, erin is fifth.
        let s = standings(&[
            ("alice@v2", 1),
            ("bob@v1", 1),
            ("builtin:strong", 3),
            ("dave@v4", 3),
            ("erin@v1", 5),
        ]);
        let ratings = |bot: &str, version: Option<u64>| match (bot, version) {
            ("alice", Some(2)) => Some(10.0),
            ("bob", Some(1)) => Some(12.5),
            ("builtin:strong", None) => Some(3.0),
            ("dave", Some(4)) => Some(3.0),
            ("erin", Some(1)) => Some(30.0),
            _ => None,
        };
        let rows = final_rows(&s, ratings, &Default::default(), true);
        let order: Vec<(&str, usize, bool)> = rows
            .iter()
            .map(|r| (r.entrant.as_str(), r.rank, r.by_rating))
            .collect();
        assert_eq!(
            order,
            [
                ("bob@v1", 1, true),
                ("alice@v2", 2, true),
                // Level ratings still share the rank, unmarked; a rank the final gave alone is
                // kept.
                ("builtin:strong", 3, false),
                ("dave@v4", 3, false),
                ("erin@v1", 5, false),
            ]
        );
        assert_eq!(rows[0].bot, "bob");
        assert_eq!(rows[2].bot, "builtin:strong");
        assert_eq!(rows[1].rating, Some(10.0));
        // Shared: the final's ranks as they are, in its order.
        let shared = final_rows(&s, ratings, &Default::default(), false);
        let order: Vec<(&str, usize)> = shared
            .iter()
            .map(|r| (r.entrant.as_str(), r.rank))
            .collect();
        assert_eq!(
            order,
            [
                ("alice@v2", 1),
                ("bob@v1", 1),
                ("builtin:strong", 3),
                ("dave@v4", 3),
                ("erin@v1", 5)
            ]
        );
        // A version the ladder no longer rates ranks after the rated one it ties with.
        let s = standings(&[("alice@v1", 1), ("bob@v1", 1)]);
        let rows = final_rows(
            &s,
            |b, _| (b == "bob").then_some(-5.0),
            &Default::default(),
            true,
        );
        assert_eq!(rows[0].entrant, "bob@v1");
        assert_eq!((rows[1].rank, rows[1].rating), (2, None));
    }

    #[test]
    fn a_playoff_orders_the_entrants_the_final_ranks_level_and_the_rating_what_it_leaves_level() {
        let s = standings(&[
            ("alice@v1", 1),
            ("bob@v1", 1),
            ("carol@v1", 1),
            ("erin@v1", 4),
        ]);
        let ratings = |bot: &str, _: Option<u64>| match bot {
            "alice" => Some(10.0),
            "bob" => Some(12.5),
            "carol" => Some(1.0),
            _ => Some(50.0),
        };
        // The play-off of rank 1: carol first, alice and bob level second.
        let playoff: std::collections::BTreeMap<String, usize> = [
            ("carol@v1".to_string(), 1),
            ("alice@v1".to_string(), 2),
            ("bob@v1".to_string(), 2),
        ]
        .into();
        let playoffs = [(1, playoff)].into();
        let order = |rows: Vec<FinalRow>| -> Vec<(String, usize, bool, bool)> {
            rows.into_iter()
                .map(|r| (r.entrant, r.rank, r.by_playoff, r.by_rating))
                .collect()
        };
        let row = |e: &str, rank, playoff, rating| (e.to_string(), rank, playoff, rating);
        assert_eq!(
            order(final_rows(&s, ratings, &playoffs, true)),
            [
                row("carol@v1", 1, true, false),
                row("bob@v1", 2, true, true),
                row("alice@v1", 3, true, true),
                row("erin@v1", 4, false, false),
            ]
        );
        // Without the rating, the play-off's own level ranks are kept.
        assert_eq!(
            order(final_rows(&s, ratings, &playoffs, false)),
            [
                row("carol@v1", 1, true, false),
                row("alice@v1", 2, true, false),
                row("bob@v1", 2, true, false),
                row("erin@v1", 4, false, false),
            ]
        );
    }

    fn rating(bot: &str, mu: f64) -> LadderRating {
        LadderRating {
            entrant: format!("{bot}@v1"),
            bot: bot.into(),
            version: 1,
            owner: bot.into(),
            active: true,
            mu,
            sigma: 2.0,
            games: 10,
            wins: 4,
            errors: 1,
            last_played: Some(1000),
        }
    }

    #[test]
    fn the_leaderboard_escapes_names_and_shows_rating_and_win_rate() {
        let page = leaderboard_page(
            "g",
            "geister",
            "gpw",
            false,
            &[rating("<b>x</b>", 30.0)],
            1130,
            1,
            LEADERBOARD_PER,
            1,
            &LadderVisitor::default(),
        );
        assert!(page.contains("&lt;b&gt;x&lt;"), "{page}");
        // Logged out: the ladder's bar offers the log-in page.
        assert!(page.contains("<a href=\"/login\">log in</a>"), "{page}");
        assert!(!page.contains("<b>x</b>"));
        assert!(page.contains("30.00 ± 2.00"), "{page}");
        assert!(page.contains("40.0%"), "{page}");
        assert!(page.contains("2 min ago"), "{page}");
        assert!(!page.contains("Frozen"), "{page}");
    }

    #[test]
    fn a_bots_page_dates_its_rating_chart() {
        let t = 1_796_662_980;
        let m = |index: u64, mu: f64, at: i64| {
            let seat = |seat: usize, bot: &str| LadderSeat {
                index,
                seat,
                entrant: format!("{bot}@v1"),
                bot: bot.into(),
                version: 1,
                score: 1.0,
                place: 1,
                errors: 0,
                mu_after: mu,
                sigma_after: 8.0,
                played_at: at,
            };
            BotMatch {
                mine: seat(0, "ann"),
                table: vec![seat(0, "ann"), seat(1, "bob")],
            }
        };
        // Newest first, as the store gives them.
        let matches = [m(2, 27.0, t + 7200), m(1, 26.0, t + 3600), m(0, 25.0, t)];
        let page = bot_page(
            "g",
            "ann",
            None,
            &[],
            &matches,
            &[],
            None,
            &LadderVisitor::default(),
        );
        assert!(page.contains("id=\"rating-chart\""), "{page}");
        for label in ["12-07 17:03", "12-07 18:03", "12-07 19:03"] {
            assert!(
                page.contains(&format!(">{label}</text>")),
                "{label}: {page}"
            );
        }
        assert!(
            page.contains("played from 12-07 17:03 to 12-07 19:03 UTC"),
            "{page}"
        );
    }

    #[test]
    fn the_visitors_own_row_is_marked() {
        let me = LadderVisitor {
            user: Some("ann".into()),
            ..LadderVisitor::default()
        };
        let page = leaderboard_page(
            "g",
            "geister",
            "gpw",
            false,
            &[rating("bob", 30.0), rating("ann", 20.0)],
            1130,
            1,
            LEADERBOARD_PER,
            2,
            &me,
        );
        assert!(
            page.contains("<tr class=\"mine\"><td class=\"num\">2</td><td><a href=\"/bots/ann\">"),
            "{page}"
        );
        assert_eq!(page.matches("class=\"mine\"").count(), 1, "{page}");
        let anonymous = leaderboard_page(
            "g",
            "geister",
            "gpw",
            false,
            &[rating("ann", 20.0)],
            1130,
            1,
            LEADERBOARD_PER,
            1,
            &LadderVisitor::default(),
        );
        assert!(!anonymous.contains("class=\"mine\""), "{anonymous}");
    }

    #[test]
    fn on_a_server_of_several_ladders_every_link_is_under_the_ladders_place() {
        let me = LadderVisitor {
            user: Some("ann".into()),
            organiser: true,
            base: "/ladders/g".into(),
            several: true,
            ..LadderVisitor::default()
        };
        let page = leaderboard_page(
            "g",
            "geister",
            "gpw",
            true,
            &[rating("ann", 20.0)],
            1130,
            1,
            LEADERBOARD_PER,
            1,
            &me,
        );
        for link in [
            "href=\"/\">ladders</a>",
            "href=\"/ladders/g/\">g</a>",
            "href=\"/ladders/g/leaderboard\"",
            "href=\"/ladders/g/organiser\"",
            "href=\"/ladders/g/bots/ann\"",
            "href=\"/ladders/g/final\"",
            "href=\"/me\">my bots</a>",
            "action=\"/logout\"",
        ] {
            assert!(page.contains(link), "{link}: {page}");
        }
        assert!(!page.contains("href=\"/bots/"), "{page}");
    }

    #[test]
    fn the_leaderboard_is_paged() {
        let page = leaderboard_page(
            "g",
            "geister",
            "gpw",
            true,
            &[rating("second", 20.0)],
            1130,
            2,
            1,
            3,
            &LadderVisitor {
                user: Some("<i>al</i>".into()),
                organiser: true,
                csrf: Some("c".repeat(64)),
                ..LadderVisitor::default()
            },
        );
        // Signed in: the same bar as the contestant's pages, the name escaped.
        assert!(
            page.contains("signed in as <b id=\"who\">&lt;i&gt;al&lt;"),
            "{page}"
        );
        assert!(page.contains("action=\"/logout\""), "{page}");
        assert!(page.contains(&"c".repeat(64)), "{page}");
        assert!(
            page.contains("<a href=\"/organiser\">organiser</a>"),
            "{page}"
        );
        assert!(page.contains("<td class=\"num\">2</td>"), "{page}");
        assert!(page.contains("3 entrants"), "{page}");
        assert!(
            page.contains("<b>Frozen</b>: the organiser has stopped matchmaking"),
            "{page}"
        );
        assert!(page.contains("page 2 of 3"), "{page}");
        assert!(page.contains("leaderboard?page=3&amp;per=1\""), "{page}");
    }

    #[test]
    fn times_read_as_people_say_them() {
        assert_eq!(ago(None, 5), "never");
        assert_eq!(ago(Some(0), 59), "59 s ago");
        assert_eq!(ago(Some(0), 7200), "2 h ago");
        assert_eq!(ago(Some(0), 3 * 86_400), "3 days ago");
        assert_eq!(ago(Some(10), 0), "0 s ago");
    }

    /// A bot's page compares its versions: each one's games, win rate, rating and errors, the
    /// one playing now marked; a bot of one version has no comparison.
    #[test]
    fn a_bots_page_compares_its_versions() {
        let v2 = LadderRating {
            entrant: "ann@v2".into(),
            version: 2,
            games: 4,
            wins: 3,
            errors: 0,
            ..rating("ann", 27.5)
        };
        let v1 = LadderRating {
            active: false,
            ..rating("ann", 24.0)
        };
        let me = LadderVisitor::default();
        let page = bot_page("g", "ann", None, &[v2.clone(), v1], &[], &[], None, &me);
        let table = &page[page.find("id=\"bot-versions\"").expect("a comparison")..];
        let table = &table[..table.find("</table>").unwrap()];
        let rows: Vec<&str> = table.split("<tr>").skip(2).collect();
        assert_eq!(rows.len(), 2, "{table}");
        for (row, says) in rows.iter().zip([
            ["v2", "plays now", "75.0%", "27.50 ± 2.00", "21.50"],
            ["v1", "replaced", "40.0%", "24.00 ± 2.00", "0.10"],
        ]) {
            for s in says {
                assert!(row.contains(s), "{s} in {row}");
            }
        }
        let one = bot_page("g", "ann", None, &[v2], &[], &[], None, &me);
        assert!(!one.contains("bot-versions"));
    }

    #[test]
    fn the_chart_spans_its_values_beside_its_labels_and_dates_its_matches() {
        // 2026-12-07 17:03:00 UTC, then an hour and a day later.
        let t = 1_796_662_980;
        let c = chart(
            &[(t, 20.0), (t + 3600, 30.0), (t + 86_400, 25.0)],
            144.0,
            50.0,
        )
        .unwrap();
        // The line starts right of the μ labels and ends above the dates.
        assert_eq!(c["points"], "44.0,30.0 92.0,4.0 140.0,17.0");
        let labels: Vec<&str> = c["ticks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["12-07 17:03", "12-07 18:03", "12-08 17:03"]);
        // Two matches: the first and the last are dated, nothing twice.
        let c = chart(&[(t, 20.0), (t + 60, 21.0)], 144.0, 50.0).unwrap();
        assert_eq!(c["ticks"].as_array().unwrap().len(), 2);
        assert!(chart(&[(t, 20.0)], 100.0, 50.0).is_none());
    }
}
