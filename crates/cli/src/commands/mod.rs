//! One module per subcommand.

pub mod check;
pub mod contest;
pub mod demo;
pub mod diplomacy;
pub mod games;
pub mod ladder;
pub mod ladder_final;
pub mod ladder_serve;
pub mod live_serve;
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
/// A seat in the game's own terms ([`kakehiki_core::SeatReport::in_game_terms`]), escaped for
/// the terminal.
fn seat_as(seat: &kakehiki_core::SeatReport) -> String {
    kakehiki_core::text::terminal_line(&seat.in_game_terms())
}

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
    // Who each seat was in the game's own terms, where the game says (a Werewolf agent's number
    // and role, a Diplomacy power and its centres).
    let roles: Vec<String> = report.seats.iter().map(seat_as).collect();
    let with_roles = roles.iter().any(|r| !r.is_empty());
    let role_width = roles.iter().map(String::len).max().unwrap_or(0).max(2);
    if with_roles {
        out.push_str(&format!(
            "  seat  {:<width$}  {:<role_width$}  score\n",
            "spec", "as"
        ));
    } else {
        out.push_str(&format!("  seat  {:<width$}  score\n", "spec"));
    }
    for (i, seat) in report.seats.iter().enumerate() {
        // Two decimals for people; `--json` keeps the exact score.
        let score = report
            .scores_exact
            .get(i)
            .map(|t| kakehiki_core::score_text_decimal(t))
            .unwrap_or_else(|| "?".into());
        let spec = kakehiki_core::text::terminal_line(&seat.spec);
        if with_roles {
            let role = &roles[i];
            out.push_str(&format!(
                "  {i:>4}  {spec:<width$}  {role:<role_width$}  {score}\n"
            ));
        } else {
            out.push_str(&format!("  {i:>4}  {spec:<width$}  {score}\n"));
        }
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
            for line in kakehiki_check::error_lines(&seat.errors) {
                let line = kakehiki_core::text::terminal_line(&line);
                out.push_str(&format!("  seat {i}: {line}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(extra: serde_json::Value) -> kakehiki_core::SeatReport {
        kakehiki_core::SeatReport {
            spec: "builtin:x".into(),
            errors: Vec::new(),
            extra: extra.as_object().cloned().unwrap_or_default(),
        }
    }

    #[test]
    fn a_seat_is_named_in_the_games_own_terms() {
        use serde_json::json;
        assert_eq!(
            seat_as(&seat(json!({"agent": 3, "role": "SEER", "alive": false}))),
            "Agent[03] SEER, dead"
        );
        assert_eq!(
            seat_as(&seat(
                json!({"agent": 12, "role": "VILLAGER", "alive": true})
            )),
            "Agent[12] VILLAGER"
        );
        assert_eq!(
            seat_as(&seat(json!({"power": "FRANCE", "centers": 17}))),
            "FRANCE, 17 centres"
        );
        assert_eq!(
            seat_as(&seat(json!({"power": "ITALY", "centers": 1}))),
            "ITALY, 1 centre"
        );
        assert_eq!(seat_as(&seat(json!({}))), "");
    }
}
