//! One module per subcommand.

pub mod check;
pub mod contest;
pub mod demo;
pub mod diplomacy;
pub mod games;
pub mod ladder;
pub mod ladder_final;
pub mod ladder_serve;
pub mod ladder_work;
pub mod play;
pub mod replay;
pub mod sandbox;
pub mod serve;
pub mod strength;
pub mod submit;
pub mod view;
pub mod web;
pub mod worker;

use kakehiki_core::MatchReport;

/// A readable summary of a match report.
pub fn summary(report: &MatchReport) -> String {
    let mut out = format!(
        "{} (rules {}), seed {}\n",
        report.game, report.rules, report.seed
    );
    let width = report
        .seats
        .iter()
        .map(|s| kakehiki_core::text::terminal_line(&s.spec).len())
        .max()
        .unwrap_or(4)
        .max(4);
    out.push_str(&format!("  seat  {:<width$}  score\n", "spec"));
    for (i, seat) in report.seats.iter().enumerate() {
        // Two decimals for people; `--json` keeps the exact score.
        let score = report
            .scores_exact
            .get(i)
            .map(|t| kakehiki_core::score_text_decimal(t))
            .unwrap_or_else(|| "?".into());
        let spec = kakehiki_core::text::terminal_line(&seat.spec);
        out.push_str(&format!("  {i:>4}  {spec:<width$}  {score}\n"));
    }
    let team = report.extra.get("winner_team").and_then(|v| v.as_str());
    match (report.winner, team) {
        (Some(w), _) => out.push_str(&format!(
            "winner: seat {w} ({})\n",
            kakehiki_core::text::terminal_line(&report.seats[w].spec)
        )),
        (None, Some(team)) => out.push_str(&format!(
            "result: the {} team won\n",
            kakehiki_core::text::terminal_line(team)
        )),
        (None, None) if report.everyone_lost => out.push_str("result: every seat lost\n"),
        (None, None) => out.push_str("result: draw\n"),
    }
    for (k, v) in &report.extra {
        if !v.is_array() && !v.is_object() {
            out.push_str(&kakehiki_core::text::terminal_line(&format!("{k}: {v}")));
            out.push('\n');
        }
    }
    let total: usize = report.seats.iter().map(|s| s.errors.len()).sum();
    if total > 0 {
        out.push_str("errors:\n");
        // At the game's own labels, identical ones condensed (as `check` shows them).
        for (i, seat) in report.seats.iter().enumerate() {
            // Error details quote what the bot sent.
            for line in check::error_lines(&seat.errors) {
                let line = kakehiki_core::text::terminal_line(&line);
                out.push_str(&format!("  seat {i}: {line}\n"));
            }
        }
    }
    out
}
