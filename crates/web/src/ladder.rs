//! The hosted ladder's public pages: the leaderboard, a bot's page (rating over time, recent
//! matches) and a match with the game's viewer. Rendered from what the ladder keeps in the
//! store (`kakehiki_store::LadderPlay`); the server decides what a visitor may see (whose
//! stderr) before calling these.

use kakehiki_store::{LadderRating, LadderSeat};
use serde_json::{json, Value};

use crate::html::{render, viewer_ctx, SEAT_FIELDS};
use crate::view::{view_model, ViewOptions};

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
}

impl LadderVisitor {
    fn json(&self) -> Value {
        json!({"user": self.user, "organiser": self.organiser, "csrf": self.csrf})
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

/// One of a bot's matches: its seat and the table's other seats.
pub struct BotMatch {
    pub mine: LadderSeat,
    pub table: Vec<LadderSeat>,
}

/// The points of a rating chart `w` × `h` of `values` (oldest first), and their range.
fn chart(values: &[f64], w: f64, h: f64) -> Option<Value> {
    if values.len() < 2 {
        return None;
    }
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let span = (max - min).max(1e-9);
    let step = (w - 8.0) / (values.len() - 1) as f64;
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let x = 4.0 + step * i as f64;
            let y = 4.0 + (h - 8.0) * (1.0 - (v - min) / span);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    Some(
        json!({"w": w, "h": h, "n": values.len(), "min": min, "max": max, "points": points.join(" ")}),
    )
}

/// A bot's page. `row`: its rank and rating when it is on the leaderboard; `matches`: its
/// recent matches, newest first; `owner_versions`: its versions, listed only for its owner or an
/// organiser (empty otherwise); `older`: the index to page back from, when there are more.
pub fn bot_page(
    ladder: &str,
    bot: &str,
    row: Option<(usize, &LadderRating)>,
    matches: &[BotMatch],
    owner_versions: &[u64],
    older: Option<u64>,
    me: &LadderVisitor,
) -> String {
    let mu: Vec<f64> = matches.iter().rev().map(|m| m.mine.mu_after).collect();
    let rows: Vec<Value> = matches
        .iter()
        .map(|m| {
            json!({
                "index": m.mine.index, "version": m.mine.version, "seat": m.mine.seat,
                "place": m.mine.place, "score": m.mine.score, "errors": m.mine.errors,
                "mu_after": m.mine.mu_after,
                "opponents": m.table.iter().filter(|t| t.seat != m.mine.seat)
                    .map(|t| json!({"bot": t.bot, "place": t.place})).collect::<Vec<_>>(),
            })
        })
        .collect();
    let row = row.map(|(rank, r)| {
        json!({"rank": rank, "version": r.version, "mu": r.mu, "sigma": r.sigma, "games": r.games,
               "wins": r.wins, "errors": r.errors, "owner": r.owner})
    });
    render(
        "ladder_bot.html",
        json!({"title": bot, "ladder": ladder, "bot": bot, "row": row, "matches": rows,
               "chart": chart(&mu, 640.0, 160.0), "owner_links": owner_versions, "older": older,
               "me": me.json()}),
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
    let model = view_model(
        replay,
        &ViewOptions {
            names: Some(entrants.to_vec()),
            private: true,
        },
    );
    match model {
        Ok(model) => viewer_ctx(&mut ctx, &model),
        Err(e) => ctx["model_error"] = json!(e.to_string()),
    }
    render("ladder_match.html", ctx)
}

/// A page saying what is not there.
pub fn not_found_page(message: &str) -> String {
    crate::html::error_page(message)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn the_chart_spans_its_values() {
        let c = chart(&[20.0, 30.0, 25.0], 100.0, 50.0).unwrap();
        assert_eq!(c["points"], "4.0,46.0 50.0,4.0 96.0,25.0");
        assert!(chart(&[20.0], 100.0, 50.0).is_none());
    }
}
