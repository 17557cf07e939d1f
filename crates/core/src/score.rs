//! Exact scores and outcomes.

use num_rational::Ratio;
use num_traits::{Signed, ToPrimitive, Zero};
use serde::{Deserialize, Serialize};

/// An exact score. Games whose rules divide (tie splitting) keep scores exact.
pub type Score = Ratio<i64>;

/// The end of a match: one exact score per seat (seat order) and the winner, if there is one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    #[serde(with = "scores_serde")]
    pub scores: Vec<Score>,
    /// The winning seat, or `None` for a draw.
    pub winner: Option<usize>,
}

impl Outcome {
    /// An outcome whose winner is the seat with the strictly greatest score (a draw otherwise).
    pub fn by_max(scores: Vec<Score>) -> Self {
        let winner = winner_by_max(&scores);
        Outcome { scores, winner }
    }

    /// Scores as floating point numbers (for display and JSON).
    pub fn scores_f64(&self) -> Vec<f64> {
        self.scores
            .iter()
            .map(|s| s.to_f64().unwrap_or(f64::NAN))
            .collect()
    }

    /// Scores in their exact text form (`-3/2`, `7`).
    pub fn scores_exact(&self) -> Vec<String> {
        self.scores.iter().map(format_score).collect()
    }
}

/// The seat with the strictly greatest score, or `None` when two or more share it (or no seats).
pub fn winner_by_max(scores: &[Score]) -> Option<usize> {
    let max = scores.iter().max()?;
    let mut at_max = scores.iter().enumerate().filter(|(_, s)| *s == max);
    let (first, _) = at_max.next()?;
    if at_max.next().is_some() {
        None
    } else {
        Some(first)
    }
}

/// Reduced fraction text: `-7/2`, `0`, `5`.
pub fn format_score(s: &Score) -> String {
    if s.denom() == &1 {
        s.numer().to_string()
    } else if s.is_negative() {
        format!("-{}/{}", s.numer().abs(), s.denom())
    } else if s.is_zero() {
        "0".to_string()
    } else {
        format!("{}/{}", s.numer(), s.denom())
    }
}

/// A score as people read it: a decimal with two places, rounded half away from zero
/// (`15022/3` → `5007.33`, `-155/2` → `-77.50`, `7` → `7.00`). Pages and tables show this;
/// JSON output keeps the exact [`format_score`] form (pages give it on hover).
pub fn score_decimal(s: &Score) -> String {
    // Exact: hundredths = round(numer * 100 / denom) in i128, so no float rounding shows.
    let (n, d) = (i128::from(*s.numer()) * 100, i128::from(*s.denom()));
    let (n, d) = if d < 0 { (-n, -d) } else { (n, d) };
    let half = d / 2;
    let hundredths = if n >= 0 {
        (n + half) / d
    } else {
        -((-n + half) / d)
    };
    let sign = if hundredths < 0 { "-" } else { "" };
    let abs = hundredths.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

/// [`score_decimal`] of a score in its exact text form (`15022/3`); text that is not a score
/// is returned unchanged (so a page never hides what a report held).
pub fn score_text_decimal(text: &str) -> String {
    match score_from_str(text) {
        Ok(s) => score_decimal(&s),
        Err(_) => text.to_string(),
    }
}

/// Parse the text form produced by [`format_score`].
pub fn score_from_str(text: &str) -> Result<Score, String> {
    let parse = |t: &str| {
        t.trim().parse::<i64>().map_err(|_| {
            format!("invalid score {text:?}: expected an integer or a fraction like -3/2")
        })
    };
    match text.split_once('/') {
        None => Ok(Score::from_integer(parse(text)?)),
        Some((n, d)) => {
            let (n, d) = (parse(n)?, parse(d)?);
            if d == 0 {
                return Err(format!("invalid score {text:?}: zero denominator"));
            }
            Ok(Score::new(n, d))
        }
    }
}

mod scores_serde {
    use super::{format_score, score_from_str, Score};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[Score], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter().map(format_score))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Score>, D::Error> {
        let texts = Vec::<String>::deserialize(d)?;
        texts
            .iter()
            .map(|t| score_from_str(t).map_err(serde::de::Error::custom))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_reduced_fractions() {
        assert_eq!(format_score(&Score::new(-84, 24)), "-7/2");
        assert_eq!(format_score(&Score::new(0, 24)), "0");
        assert_eq!(format_score(&Score::new(168, 24)), "7");
        assert_eq!(format_score(&Score::new(64, 24)), "8/3");
    }

    #[test]
    fn decimals_have_two_places_rounded_half_away_from_zero() {
        assert_eq!(score_decimal(&Score::new(15022, 3)), "5007.33");
        assert_eq!(score_decimal(&Score::new(-155, 2)), "-77.50");
        assert_eq!(score_decimal(&Score::from_integer(7)), "7.00");
        assert_eq!(score_decimal(&Score::from_integer(0)), "0.00");
        assert_eq!(score_decimal(&Score::new(2, 3)), "0.67");
        assert_eq!(score_decimal(&Score::new(-2, 3)), "-0.67");
        assert_eq!(score_decimal(&Score::new(-1, 300)), "0.00");
        assert_eq!(score_decimal(&Score::new(1, 200)), "0.01");
        assert_eq!(score_decimal(&Score::new(-1, 200)), "-0.01");
        assert_eq!(
            score_decimal(&Score::from_integer(i64::MIN)),
            "-9223372036854775808.00"
        );
        assert_eq!(score_text_decimal("15022/3"), "5007.33");
        assert_eq!(score_text_decimal("n/a"), "n/a");
    }

    #[test]
    fn parses_what_it_formats() {
        for (n, d) in [(-7, 2), (0, 1), (5, 1), (8, 3), (-47, 6)] {
            let s = Score::new(n, d);
            assert_eq!(score_from_str(&format_score(&s)).unwrap(), s);
        }
        assert!(score_from_str("1/0").is_err());
        assert!(score_from_str("x").is_err());
    }

    #[test]
    fn winner_needs_a_strict_maximum() {
        let s = |v: &[i64]| {
            v.iter()
                .map(|&x| Score::from_integer(x))
                .collect::<Vec<_>>()
        };
        assert_eq!(winner_by_max(&s(&[-6, -6, 5, 7])), Some(3));
        assert_eq!(winner_by_max(&s(&[4, 4, -9, 1])), None);
        assert_eq!(winner_by_max(&[]), None);
    }
}
