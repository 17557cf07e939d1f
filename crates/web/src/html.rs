//! Server-rendered pages. Every value from the store is escaped; the replay reaches the viewer as
//! JSON inside a `<script type="application/json">` element with `<` escaped.

use kakehiki_contest::Standings;
use serde_json::Value;

/// Escape text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encode a path segment.
/// What a match without a winner came to: a draw, or a loss for every seat (a Geister double
/// forfeit, `everyone_lost` in the report).
fn no_winner(report: &Value) -> &'static str {
    if report["everyone_lost"].as_bool() == Some(true) {
        "every seat lost"
    } else {
        "draw"
    }
}

fn seg(text: &str) -> String {
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

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2rem;max-width:72rem;color:#222}\
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.25rem .6rem;text-align:left}\
th{background:#f3f3f3}a{color:#0645ad}.num{text-align:right}pre{background:#f7f7f7;padding:.6rem;overflow:auto}\
.muted{color:#777}button{margin-right:.5rem}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} — Kakehiki</title>\
         <style>{STYLE}</style></head><body><p class=\"muted\"><a href=\"/\">Kakehiki</a></p>{body}</body></html>",
        esc(title)
    )
}

pub fn error_page(message: &str) -> String {
    page(
        "Error",
        &format!("<h1>Not available</h1><p>{}</p>", esc(message)),
    )
}

pub fn index(contests: &[Value]) -> String {
    let mut body = String::from("<h1>Contests</h1>");
    if contests.is_empty() {
        body.push_str(
            "<p>No contest in this store yet: run <code>kakehiki contest run FILE</code>.</p>",
        );
    } else {
        body.push_str(
            "<table><tr><th>contest</th><th>game</th><th>format</th><th>matches</th></tr>",
        );
        for c in contests {
            let name = c["name"].as_str().unwrap_or("");
            body.push_str(&format!(
                "<tr><td><a href=\"/contests/{}\">{}</a></td><td>{}</td><td>{}</td><td class=\"num\">{} / {}{}</td></tr>",
                seg(name),
                esc(name),
                esc(c["game"].as_str().unwrap_or("")),
                esc(c["format"].as_str().unwrap_or("")),
                c["matches_stored"],
                c["matches_scheduled"],
                if c["complete"] == true { "" } else { " (running)" }
            ));
        }
        body.push_str("</table>");
    }
    page("Contests", &body)
}

pub fn contest(s: &Standings, matches: &[Value]) -> String {
    let mut body = format!(
        "<h1>{}</h1><p>{} · {} · ranked by {} · {} of {} matches stored{}</p>",
        esc(&s.contest),
        esc(&s.game),
        esc(&s.format),
        esc(&s.ranked_by),
        s.matches_stored,
        s.matches_scheduled,
        if s.complete { "" } else { " (running)" }
    );
    body.push_str(
        "<h2>Standings</h2><table><tr><th>rank</th><th>entrant</th><th>games</th><th>wins</th><th>draws</th>\
         <th>losses</th><th>points</th><th>mean</th><th>errors</th><th>Weng-Lin μ (σ)</th>\
         <th>Bradley-Terry Elo [95% CI]</th></tr>",
    );
    for r in &s.rows {
        body.push_str(&format!(
            "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{:.2} ({:.2})</td><td class=\"num\">{:.0} [{:.0}, {:.0}]</td></tr>",
            r.rank,
            esc(&r.entrant),
            r.games,
            r.wins,
            r.draws,
            r.losses,
            esc(&r.points),
            r.mean_points,
            r.seat_errors,
            r.weng_lin,
            r.weng_lin_sigma,
            r.bt_elo,
            r.bt_low,
            r.bt_high
        ));
    }
    body.push_str("</table>");
    for stage in &s.stages {
        body.push_str(&format!(
            "<h3>{}</h3><table><tr><th>rank</th><th>entrant</th><th>wins</th><th></th></tr>",
            esc(&stage.name)
        ));
        for r in &stage.rows {
            body.push_str(&format!(
                "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                r.rank,
                esc(&r.entrant),
                r.wins,
                if r.qualified { "qualified" } else { "" }
            ));
        }
        body.push_str("</table>");
    }
    if !s.roles.is_empty() {
        body.push_str("<h2>Per role</h2><table><tr><th>entrant</th><th>role</th><th>games</th><th>wins</th><th>win rate</th></tr>");
        for r in &s.roles {
            body.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.3}</td></tr>",
                esc(&r.entrant),
                esc(&r.role),
                r.games,
                r.wins,
                r.win_rate
            ));
        }
        body.push_str("</table>");
    }
    if !s.teams.is_empty() {
        body.push_str("<h2>Per team</h2><table><tr><th>team</th><th>games won</th></tr>");
        for t in &s.teams {
            body.push_str(&format!(
                "<tr><td>{}</td><td class=\"num\">{}</td></tr>",
                esc(&t.team),
                t.games_won
            ));
        }
        body.push_str("</table>");
    }
    body.push_str("<h2>Matches</h2><table><tr><th>#</th><th>entrants (seat order)</th><th>scores</th><th>winner</th></tr>");
    for m in matches {
        let index = m["index"].as_u64().unwrap_or(0);
        let entrants: Vec<String> = m["entrants"]
            .as_array()
            .map(|a| a.iter().map(|e| esc(e.as_str().unwrap_or(""))).collect())
            .unwrap_or_default();
        let scores: Vec<String> = m["report"]["scores_exact"]
            .as_array()
            .map(|a| a.iter().map(|e| esc(e.as_str().unwrap_or(""))).collect())
            .unwrap_or_default();
        let winner = match m["report"]["winner"].as_u64() {
            Some(w) => entrants
                .get(w as usize)
                .cloned()
                .unwrap_or_else(|| format!("seat {w}")),
            None => no_winner(&m["report"]).into(),
        };
        body.push_str(&format!(
            "<tr><td><a href=\"/contests/{}/matches/{index}\">{index}</a></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            seg(&s.contest),
            entrants.join(", "),
            scores.join(", "),
            winner
        ));
    }
    body.push_str("</table>");
    page(&s.contest, &body)
}

const VIEWER: &str = r#"
<div><button id="first">⏮ first</button><button id="prev">◀ prev</button><button id="next">next ▶</button>
<button id="last">last ⏭</button><span id="pos" class="muted"></span></div>
<div id="event"></div>
<script>
const events = JSON.parse(document.getElementById('replay').textContent)
  .split('\n').filter(l => l.trim()).map(l => JSON.parse(l));
let at = 0;
const el = (tag, text) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; };
function render() {
  const ev = events[at], box = document.getElementById('event');
  box.replaceChildren();
  document.getElementById('pos').textContent = ` event ${at + 1} of ${events.length}: ${ev.event}`;
  if (Array.isArray(ev.moves)) {
    box.append(el('h3', `turn ${ev.turn ?? ''} ${ev.label ?? ''}`));
    const t = el('table'), head = el('tr');
    ['seat', 'status', 'reply', 'applied', 'time (µs)', 'notes'].forEach(h => head.append(el('th', h)));
    t.append(head);
    for (const m of ev.moves) {
      const r = el('tr');
      [m.seat, m.status, m.raw ?? (m.raw_b64 ? '(binary)' : ''), JSON.stringify(m.picks ?? m.action ?? ''),
       m.time_us ?? '', (m.errors || []).map(e => e.code).join(', ')].forEach(v => r.append(el('td', String(v))));
      t.append(r);
    }
    box.append(t);
  }
  box.append(el('pre', JSON.stringify(ev, null, 2)));
}
const go = i => { at = Math.max(0, Math.min(events.length - 1, i)); render(); };
document.getElementById('first').onclick = () => go(0);
document.getElementById('prev').onclick = () => go(at - 1);
document.getElementById('next').onclick = () => go(at + 1);
document.getElementById('last').onclick = () => go(events.length - 1);
document.addEventListener('keydown', e => { if (e.key === 'ArrowRight') go(at + 1); if (e.key === 'ArrowLeft') go(at - 1); });
if (events.length) render();
</script>"#;

pub fn match_page(contest: &str, index: u64, m: &Value, replay: &str) -> String {
    let report = &m["report"];
    let entrants: Vec<&str> = m["entrants"]
        .as_array()
        .map(|a| a.iter().map(|e| e.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    let mut body = format!(
        "<h1>{} · match {index}</h1><p>{} · seed {} · <a href=\"/api/contests/{}/matches/{index}/replay\">replay (JSON lines)</a></p>",
        esc(contest),
        esc(report["game"].as_str().unwrap_or("")),
        report["seed"],
        seg(contest)
    );
    body.push_str("<table><tr><th>seat</th><th>entrant</th><th>score</th><th>errors</th></tr>");
    for (i, name) in entrants.iter().enumerate() {
        let errors: Vec<String> = report["seats"][i]["errors"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|e| format!("{} (turn {})", e["kind"].as_str().unwrap_or(""), e["turn"]))
                    .collect()
            })
            .unwrap_or_default();
        body.push_str(&format!(
            "<tr><td class=\"num\">{i}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            esc(name),
            esc(report["scores_exact"][i].as_str().unwrap_or("")),
            esc(&errors.join("; "))
        ));
    }
    body.push_str("</table>");
    let winner = match report["winner"].as_u64() {
        Some(w) => format!(
            "winner: {}",
            esc(entrants.get(w as usize).copied().unwrap_or("?"))
        ),
        None => no_winner(report).to_string(),
    };
    body.push_str(&format!("<p><strong>{winner}</strong></p><h2>Replay</h2>"));
    let embedded = serde_json::to_string(replay)
        .unwrap_or_else(|_| "\"\"".into())
        .replace('<', "\\u003c");
    body.push_str(&format!(
        "<script id=\"replay\" type=\"application/json\">{embedded}</script>{VIEWER}"
    ));
    page(&format!("{contest} match {index}"), &body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<b>\"x\" & 'y'</b>"),
            "&lt;b&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/b&gt;"
        );
        assert_eq!(seg("a b/c"), "a%20b%2Fc");
    }

    #[test]
    fn a_match_every_seat_lost_is_not_shown_as_a_draw() {
        let lost = serde_json::json!({"winner": null, "everyone_lost": true});
        let drawn = serde_json::json!({"winner": null});
        assert_eq!(no_winner(&lost), "every seat lost");
        assert_eq!(no_winner(&drawn), "draw");
        let page = match_page(
            "c",
            0,
            &serde_json::json!({"report": lost, "entrants": []}),
            "",
        );
        assert!(page.contains("every seat lost"), "{page}");
    }
}
