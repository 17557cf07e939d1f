//! Server-rendered pages from minijinja templates (auto-escaped: every value from the store,
//! the contest file or a bot is escaped). A view model reaches the viewer as JSON inside a
//! `<script type="application/json">` element with `<` escaped.

use std::sync::OnceLock;

use minijinja::Environment;
use serde_json::{json, Value};

use crate::contest::ContestData;
use crate::view::ViewError;

/// The one stylesheet of every contest and ladder page (the ladder's own pages use it too): a
/// readable column, tables that scroll rather than overflow on a phone, a version's status in
/// colour as well as words, the visitor's own rows marked.
pub const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1rem 2rem;max-width:90rem;color:#222}\
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}\
th{background:#f3f3f3}a{color:#0645ad}.num{text-align:right}pre{background:#f7f7f7;padding:.6rem;overflow:auto;white-space:pre-wrap}\
.muted{color:#777}.err{color:#a40000}nav form{display:inline}.result{font-weight:bold;font-size:1.1rem}.scroll{max-width:100%;overflow:auto}\
label{display:block;margin:.5rem 0}.status{font-weight:bold}\
.s-active{color:#1a7f37}.s-frozen{color:#0969da}.s-building{color:#9a6700}.s-build_failed,.s-check_failed,.s-refused{color:#a40000}\
tr.mine td{background:#fff8c5}.frozen{background:#ddf4ff;border:1px solid #54aeff;padding:.4rem .6rem}\
svg{max-width:100%;height:auto}@media (max-width:700px){body{margin:.5rem}td,th{padding:.15rem .3rem}}.live-badge{background:#c62828;color:#fff;border-radius:.3rem;padding:.05rem .45rem;font-size:.6em;vertical-align:middle;font-weight:bold}";

/// Records script errors on the page (`data-js-errors` on `<html>`), for people and for tests.
const ERROR_HOOK: &str = "window.__kvErrors=[];(function(){function rec(m){window.__kvErrors.push(String(m));\
document.documentElement.setAttribute('data-js-errors',window.__kvErrors.join(' | '));}\
window.addEventListener('error',function(e){rec(e.message)});\
window.addEventListener('unhandledrejection',function(e){rec(e.reason)});\
var ce=console.error;console.error=function(){rec(Array.prototype.join.call(arguments,' '));ce.apply(console,arguments)};})();";

const VIEWER_JS: &str = include_str!("../assets/viewer.js");
const VIEWER_CSS: &str = include_str!("../assets/viewer.css");
const DIPMAP_JS: &str = include_str!("../assets/dipmap.js");
const LIVE_JS: &str = include_str!("../assets/live.js");
const HUMAN_JS: &str = include_str!("../assets/human.js");

/// The viewer's stylesheet and scripts as a server serves them: each under a name holding its
/// digest (`/assets/viewer.1a2b3c4d5e.js`), so that a browser keeps it for good and a new build
/// is a new name. A page of a server links them; the page of `kakehiki view` carries them.
pub struct Asset {
    /// The path it is served at.
    pub path: String,
    pub body: &'static str,
    pub content_type: &'static str,
}

/// The served assets: the viewer's stylesheet, the Diplomacy map and the viewer.
pub fn assets() -> &'static [Asset; 5] {
    static ASSETS: OnceLock<[Asset; 5]> = OnceLock::new();
    ASSETS.get_or_init(|| {
        use sha2::{Digest, Sha256};
        let asset = |stem: &str, ext: &str, body: &'static str, content_type| {
            let digest = Sha256::digest(body.as_bytes());
            let hex: String = digest[..5].iter().map(|b| format!("{b:02x}")).collect();
            Asset {
                path: format!("/assets/{stem}.{hex}.{ext}"),
                body,
                content_type,
            }
        };
        [
            asset("viewer", "css", VIEWER_CSS, "text/css; charset=utf-8"),
            asset("dipmap", "js", DIPMAP_JS, "text/javascript; charset=utf-8"),
            asset("viewer", "js", VIEWER_JS, "text/javascript; charset=utf-8"),
            asset("live", "js", LIVE_JS, "text/javascript; charset=utf-8"),
            asset("human", "js", HUMAN_JS, "text/javascript; charset=utf-8"),
        ]
    })
}

/// Matches per page of a match list (`?per=` changes it).
pub const PAGE_SIZE: usize = 100;
/// Contests per page of the index.
pub const INDEX_PER: usize = 50;
/// Standings rows per page.
pub const STANDINGS_PER: usize = 50;
/// The largest `?per=`.
pub const MAX_PER: usize = 1000;
/// Up to this many entrants the contest page shows the whole head-to-head matrix; beyond,
/// each entrant's page has its own row (a 200-entrant matrix has 40,000 cells).
pub const H2H_MATRIX_MAX: usize = 20;

/// One page of a list: its number (from 1) and size.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub number: usize,
    pub per: usize,
}

impl Page {
    /// The part of `items` on this page (empty past the end).
    pub fn slice<'a, T>(&self, items: &'a [T]) -> &'a [T] {
        let from = (self.number - 1).saturating_mul(self.per).min(items.len());
        &items[from..from.saturating_add(self.per).min(items.len())]
    }

    /// The pager of a list of `total` items at `base` (whose query may hold other parameters)
    /// with parameters `page` and `per` (`per` kept in links only when not `default_per`).
    pub fn links(
        &self,
        base: &str,
        page: &str,
        per: &str,
        default_per: usize,
        total: usize,
    ) -> Value {
        let pages = total.div_ceil(self.per).max(1);
        let sep = if base.contains('?') { '&' } else { '?' };
        let url = |n: usize| {
            if self.per == default_per {
                format!("{base}{sep}{page}={n}")
            } else {
                format!("{base}{sep}{page}={n}&{per}={}", self.per)
            }
        };
        json!({
            "number": self.number, "pages": pages, "total": total,
            "first": (self.number > 1).then(|| url(1)),
            "prev": (self.number > 1).then(|| url((self.number - 1).min(pages))),
            "next": (self.number < pages).then(|| url(self.number + 1)),
            "last": (self.number < pages).then(|| url(pages)),
        })
    }
}

/// Percent-encode a path segment.
pub fn seg(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut e = Environment::new();
        for (name, text) in [
            ("base.html", include_str!("../templates/base.html")),
            ("error.html", include_str!("../templates/error.html")),
            ("index.html", include_str!("../templates/index.html")),
            ("matches.html", include_str!("../templates/matches.html")),
            ("loading.html", include_str!("../templates/loading.html")),
            ("contest.html", include_str!("../templates/contest.html")),
            ("entrant.html", include_str!("../templates/entrant.html")),
            ("match.html", include_str!("../templates/match.html")),
            ("viewer.html", include_str!("../templates/viewer.html")),
            (
                "ladder_nav.html",
                include_str!("../templates/ladder_nav.html"),
            ),
            (
                "ladder_board.html",
                include_str!("../templates/ladder_board.html"),
            ),
            (
                "ladder_bot.html",
                include_str!("../templates/ladder_bot.html"),
            ),
            (
                "ladder_final.html",
                include_str!("../templates/ladder_final.html"),
            ),
            (
                "ladder_match.html",
                include_str!("../templates/ladder_match.html"),
            ),
            (
                "ladder_live.html",
                include_str!("../templates/ladder_live.html"),
            ),
            ("live.html", include_str!("../templates/live.html")),
            ("human.html", include_str!("../templates/human.html")),
            (
                "live_part.html",
                include_str!("../templates/live_part.html"),
            ),
            (
                "standalone.html",
                include_str!("../templates/standalone.html"),
            ),
        ] {
            e.add_template(name, text)
                .unwrap_or_else(|err| panic!("template {name} does not parse: {err}"));
        }
        e.add_filter("seg", |s: String| seg(&s));
        e.add_filter("fixed", |x: f64, digits: usize| format!("{x:.digits$}"));
        // An exact score (`15022/3`) as people read it (`5007.33`).
        e.add_filter("score", |s: String| kakehiki_core::score_text_decimal(&s));
        // Every page's stylesheet and error hook, shared rather than copied into each context.
        e.add_global("style", STYLE);
        e.add_global("error_hook", ERROR_HOOK);
        e
    })
}

/// A page from its template and context (a JSON value, or a typed context that serializes to
/// one: it is read once, straight into the template's values).
pub(crate) fn render(name: &str, ctx: impl serde::Serialize) -> String {
    match env().get_template(name).and_then(|t| t.render(ctx)) {
        Ok(s) => s,
        // A template error is a bug in this crate; say so on the page rather than panic.
        Err(e) => format!(
            "<!doctype html><meta charset=utf-8><meta name=viewport content=\"width=device-width, initial-scale=1\"><title>Error</title><p>page {} failed to render: {}</p>",
            crate::html::escape(name),
            crate::html::escape(&e.to_string())
        ),
    }
}

/// Escape text for HTML (only for the fallback page above; templates escape by themselves).
pub fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The `script-src` sources of a Content-Security-Policy for the inline script these pages
/// carry (the error hook), by its SHA-256; the viewers are [`assets`] of the server's own
/// (`'self'`). The contest pages' live-reload script is not among them.
pub fn script_hashes() -> &'static str {
    static HASHES: OnceLock<String> = OnceLock::new();
    HASHES.get_or_init(|| {
        use base64::Engine;
        use sha2::{Digest, Sha256};
        [ERROR_HOOK]
            .iter()
            .map(|script| {
                let digest = Sha256::digest(script.as_bytes());
                format!(
                    "'sha256-{}'",
                    base64::engine::general_purpose::STANDARD.encode(digest)
                )
            })
            .collect::<Vec<_>>()
            .join(" ")
    })
}

/// The viewer's part of a page's context: its model (JSON text, as
/// [`view_model_text`](crate::view::view_model_text) writes it) and its stylesheet and
/// scripts: linked as the server's [`assets`] (`served`), or in the page.
pub(crate) fn viewer_ctx(ctx: &mut Value, model_json: &str, served: bool) {
    ctx["model_json"] = json!(model_json.replace('<', "\\u003c"));
    if served {
        let [css, dipmap, viewer, live, _] = assets();
        ctx["viewer_assets"] = json!({"css": css.path, "dipmap": dipmap.path,
                                      "viewer": viewer.path, "live": live.path});
    } else {
        ctx["viewer_js"] = json!(VIEWER_JS);
        ctx["viewer_css"] = json!(VIEWER_CSS);
        ctx["dipmap_js"] = json!(DIPMAP_JS);
    }
}

/// An asset of [`assets`] by its path, for a server's `/assets/{name}` route: kept by the
/// browser for a year (its name changes with its content); any other name is 404.
pub fn asset_response(name: &str) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    match assets()
        .iter()
        .find(|a| a.path.strip_prefix("/assets/") == Some(name))
    {
        Some(a) => (
            [
                (header::CONTENT_TYPE, a.content_type),
                (header::CACHE_CONTROL, "public, max-age=31536000, immutable"),
            ],
            a.body,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such asset").into_response(),
    }
}

pub fn error_page(message: &str) -> String {
    render(
        "error.html",
        json!({"title": "Not available", "message": message}),
    )
}

/// The page of a contest whose stored results are being read (it reloads itself).
pub fn loading_page(contest: &str, message: &str) -> String {
    render(
        "loading.html",
        json!({"title": contest, "contest": contest, "message": message}),
    )
}

pub fn index(contests: &[Value], page: Page) -> String {
    render(
        "index.html",
        json!({"title": "Contests", "contests": page.slice(contests),
               "ipager": page.links("/", "page", "per", INDEX_PER, contests.len())}),
    )
}

const COLOURS: [&str; 10] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf",
];

/// Lines of the rating chart.
const CHART_LINES: usize = 10;

fn rating_chart(c: &ContestData) -> Value {
    if c.rating.len() < 2 {
        return Value::Null;
    }
    let (w, h) = (640.0, 240.0);
    let lo = c
        .rating
        .iter()
        .flat_map(|p| p.mu.iter().copied())
        .fold(f64::INFINITY, f64::min)
        .floor();
    let hi = c
        .rating
        .iter()
        .flat_map(|p| p.mu.iter().copied())
        .fold(f64::NEG_INFINITY, f64::max)
        .ceil()
        .max(lo + 1.0);
    let last = c.rating.last().map_or(1, |p| p.matches).max(1) as f64;
    let x = |m: usize| 40.0 + (w - 50.0) * m as f64 / last;
    let y = |v: f64| 10.0 + (h - 30.0) * (hi - v) / (hi - lo);
    // At most the first ten of the standings: more lines are no longer readable.
    let shown: Vec<(usize, &String)> = c
        .standings
        .rows
        .iter()
        .take(CHART_LINES)
        .filter_map(|r| c.entrant_index(&r.entrant).map(|e| (e, &c.entrants[e])))
        .collect();
    let lines: Vec<Value> = shown
        .into_iter()
        .enumerate()
        .map(|(k, (e, name))| {
            let points: Vec<String> = c
                .rating
                .iter()
                .map(|p| format!("{:.1},{:.1}", x(p.matches), y(p.mu[e])))
                .collect();
            json!({"name": name, "colour": COLOURS[k % COLOURS.len()], "points": points.join(" ")})
        })
        .collect();
    let ticks: Vec<Value> = (0..=4)
        .map(|k| {
            let v = lo + (hi - lo) * k as f64 / 4.0;
            json!({"y": y(v), "label": format!("{v:.1}")})
        })
        .collect();
    json!({"w": w, "h": h, "lines": lines, "ticks": ticks, "matches": last as u64})
}

/// A contest's page; `running`: its matches being played in this process
/// (`live::running_json`).
pub fn contest(c: &ContestData, page: Page, spage: Page, running: &[Value]) -> String {
    let base = format!("/contests/{}", seg(&c.name));
    let rows = page.slice(&c.rows);
    let h2h: Value = if c.entrants.len() <= H2H_MATRIX_MAX {
        json!(c
            .h2h
            .iter()
            .map(|row| row
                .iter()
                .map(|x| if x.iter().sum::<u32>() == 0 {
                    Value::Null
                } else {
                    json!(x)
                })
                .collect::<Vec<_>>())
            .collect::<Vec<_>>())
    } else {
        Value::Null
    };
    let standing_rows = spage.slice(&c.standings.rows);
    render(
        "contest.html",
        json!({
            "title": c.name, "s": c.standings, "entrants": c.entrants, "rows": rows,
            "standing_rows": standing_rows,
            "spager": spage.links(&base, "spage", "sper", STANDINGS_PER, c.standings.rows.len()),
            "mpager": page.links(&base, "page", "per", PAGE_SIZE, c.rows.len()),
            "h2h": h2h, "h2h_per_entrant": c.entrants.len() > H2H_MATRIX_MAX,
            "chart": rating_chart(c),
            "bt_note": bt_note(c),
            "events_url": format!("/api/contests/{}/events", seg(&c.name)),
            "running": running,
        }),
    )
}

/// What the Bradley-Terry interval covers, when not every stored match.
fn bt_note(c: &ContestData) -> Option<String> {
    let stored = c.standings.matches_stored;
    match c.bt_matches {
        Some(m) if m == stored => None,
        Some(m) => Some(format!(
            "Bradley-Terry Elo and interval fitted on the first {m} of {stored} stored matches; \
             the fit is refreshed in the background."
        )),
        None if stored == 0 => None,
        None => Some(
            "Bradley-Terry: point estimate; the bootstrap interval is being fitted in the background."
                .to_string(),
        ),
    }
}

pub fn entrant(c: &ContestData, e: usize, page: Page) -> String {
    let mine: Vec<_> = c.rows.iter().filter(|r| r.entrants.contains(&e)).collect();
    let rows = page.slice(&mine);
    let row = c.standings.rows.iter().find(|r| r.entrant == c.entrants[e]);
    // This entrant's head-to-head row: every opponent met, with wins–draws–losses.
    let h2h: Vec<Value> = c
        .h2h
        .get(e)
        .map(|row| {
            row.iter()
                .enumerate()
                .filter(|(_, x)| x.iter().sum::<u32>() > 0)
                .map(|(o, x)| json!({"opponent": c.entrants[o], "w": x[0], "d": x[1], "l": x[2]}))
                .collect()
        })
        .unwrap_or_default();
    let base = format!(
        "/contests/{}/entrants/{}",
        seg(&c.name),
        seg(&c.entrants[e])
    );
    render(
        "entrant.html",
        json!({
            "title": format!("{} · {}", c.entrants[e], c.name), "contest": c.name,
            "entrant": c.entrants[e], "row": row, "entrants": c.entrants, "rows": rows,
            "mpager": page.links(&base, "page", "per", PAGE_SIZE, mine.len()),
            "h2h": h2h,
        }),
    )
}

/// Per-seat report fields a match page shows, by game.
pub(crate) const SEAT_FIELDS: [&str; 4] = ["power", "role", "team", "alive"];

pub fn match_page(
    contest: &str,
    index: u64,
    m: &Value,
    model: Result<String, ViewError>,
) -> String {
    let report = &m["report"];
    let entrants: Vec<String> = m["entrants"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| e.as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default();
    let parsed: Option<kakehiki_core::MatchReport> = serde_json::from_value(report.clone()).ok();
    let result = parsed
        .as_ref()
        .map(|r| crate::contest::result_text(r, &entrants))
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
            let s = &seats_json.get(i).cloned().unwrap_or(Value::Null);
            json!({
                "name": name,
                "score": report["scores_exact"][i].as_str().map(kakehiki_core::score_text_decimal),
                "score_exact": report["scores_exact"][i],
                "errors": s["errors"],
                "extra": keys.iter().map(|k| match &s[*k] { Value::String(t) => t.clone(), Value::Null => String::new(), v => v.to_string() }).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut ctx = json!({
        "title": format!("{contest} match {index}"), "contest": contest, "index": index,
        "game": report["game"], "rules": report["rules"], "seed": report["seed"],
        "result": result, "seats": seats, "extra_keys": keys,
    });
    match model {
        Ok(model) => viewer_ctx(&mut ctx, &model, true),
        Err(e) => ctx["model_error"] = json!(e.to_string()),
    }
    render("match.html", ctx)
}

pub fn standalone(title: &str, model: &Value, served_by: Option<&str>) -> String {
    let mut ctx = json!({
        "title": title, "game": model["game"], "rules": model["rules"], "seed": model["seed"],
        "seats": model["seats"].as_array().map(|a| a.iter().map(|s| s["name"].clone()).collect::<Vec<_>>()),
        "served_by": served_by,
    });
    // A page a server serves links its assets (a policy that runs no inline script lets them
    // run); a file holds them.
    viewer_ctx(&mut ctx, &model.to_string(), served_by.is_some());
    render("standalone.html", ctx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_escape_markup_and_have_a_viewport() {
        let page = error_page("<b>\"x\" & 'y'</b>");
        assert!(page.contains("&lt;b&gt;"), "{page}");
        assert!(!page.contains("<b>"), "{page}");
        assert!(page.contains("name=\"viewport\""), "{page}");
        assert_eq!(seg("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn a_match_every_seat_lost_is_not_shown_as_a_draw() {
        let report = json!({"game": "geister", "rules": "gpw", "seed": 1, "scores": [0.0, 0.0],
            "scores_exact": ["0", "0"], "winner": null, "everyone_lost": true,
            "seats": [{"spec": "a", "errors": []}, {"spec": "b", "errors": []}]});
        let page = match_page(
            "c",
            0,
            &json!({"report": report, "entrants": ["a", "b"]}),
            Err(ViewError::UnknownGame("x".into())),
        );
        assert!(page.contains("every seat lost"), "{page}");
    }

    #[test]
    fn a_werewolf_match_names_its_winning_team_not_a_draw() {
        let report = json!({"game": "werewolf", "rules": "aiwolf-0.6", "seed": 1,
            "scores": [1.0, 0.0, 1.0], "scores_exact": ["1", "0", "1"], "winner": null,
            "winner_team": "VILLAGER",
            "seats": [{"spec": "a", "errors": [], "role": "SEER"}, {"spec": "b", "errors": [], "role": "WEREWOLF"},
                      {"spec": "c", "errors": [], "role": "VILLAGER"}]});
        let page = match_page(
            "c",
            0,
            &json!({"report": report, "entrants": ["a", "b", "c"]}),
            Err(ViewError::UnknownGame("x".into())),
        );
        assert!(page.contains("VILLAGER team won"), "{page}");
        assert!(!page.contains(">draw<"), "{page}");
        assert!(
            page.contains("<th>role</th>") && page.contains("<td>WEREWOLF</td>"),
            "{page}"
        );
    }
}
