//! A standing DAIDE server (`kakehiki serve diplomacy --protocol daide`): game after game, each
//! with the seven DAIDE clients that connect (in order: AUS, ENG, FRA, GER, ITA, RUS, TUR). The
//! caller plays each game's [`ServeConfig::game`] and keeps its record.

use std::collections::BTreeMap;
use std::path::Path;

use kakehiki_core::{MatchReport, SeatSpec};

use crate::driver::MatchSpec;

/// DAIDE's customary port (David Norman's AiServer, Parlance).
pub const DAIDE_PORT: u16 = 16713;

/// A standing server waits this long for a game's seven players unless `connect_ms` is given.
const CONNECT_MS: &str = "600000";

/// The powers' abbreviations, in seat order.
pub const SEAT_POWERS: [&str; 7] = ["AUS", "ENG", "FRA", "GER", "ITA", "RUS", "TUR"];

/// How the server serves.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// Where the clients connect.
    pub host: String,
    pub port: u16,
    /// The run seed: game `k` (from 1) gets `seed + k`.
    pub seed: u64,
    /// Game options (`host` and `port` are the fields above).
    pub options: BTreeMap<String, String>,
}

impl ServeConfig {
    /// The seed of game `k` (from 1).
    pub fn game_seed(&self, k: u64) -> u64 {
        self.seed.wrapping_add(k)
    }

    /// Game `k`'s match: seven DAIDE seats listening on the server's address.
    pub fn game(&self, k: u64) -> MatchSpec {
        let mut spec = MatchSpec::new(
            "diplomacy",
            self.game_seed(k),
            vec![SeatSpec::Daide(None); 7],
        );
        spec.options = self.options.clone();
        spec.options.insert("host".into(), self.host.clone());
        spec.options.insert("port".into(), self.port.to_string());
        spec.options
            .entry("connect_ms".into())
            .or_insert_with(|| CONNECT_MS.into());
        spec
    }
}

/// One line per served game: number, seed, how it ended, each power's centres, the replay.
pub fn game_line(k: u64, report: &MatchReport, replay: &Path) -> String {
    let centres: Vec<String> = report
        .seats
        .iter()
        .zip(SEAT_POWERS)
        .map(|(s, p)| {
            format!(
                "{p} {}",
                s.extra.get("centers").cloned().unwrap_or_default()
            )
        })
        .collect();
    let end = report
        .extra
        .get("end")
        .and_then(|v| v.as_str())
        .unwrap_or("?");
    format!(
        "game {k} seed {}: {end}; centres {}; replay {}",
        report.seed,
        centres.join(", "),
        replay.display()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_games_spec_listens_where_the_server_does() {
        let cfg = ServeConfig {
            host: "127.0.0.1".into(),
            port: 16713,
            seed: 10,
            options: [("max_year".to_string(), "1905".to_string())].into(),
        };
        let spec = cfg.game(3);
        assert_eq!(spec.seed, 13);
        assert_eq!(spec.seats, vec![SeatSpec::Daide(None); 7]);
        assert_eq!(spec.options["host"], "127.0.0.1");
        assert_eq!(spec.options["port"], "16713");
        assert_eq!(spec.options["connect_ms"], "600000");
        assert_eq!(spec.options["max_year"], "1905");
        let mut cfg = cfg;
        cfg.options.insert("connect_ms".into(), "5000".into());
        assert_eq!(cfg.game(1).options["connect_ms"], "5000");
    }
}
