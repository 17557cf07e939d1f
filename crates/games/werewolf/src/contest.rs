//! Contest formats and results (§8): standings per agent, per agent × role and per team, as JSON
//! and CSV, and the seed's qualifier draw (15 random entrants per game until everyone has K games).

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{json, Value};

use crate::rng::{run_table_stream, shuffle};
use crate::types::{Role, Team};

/// Failure counts of one seat in one game.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct SeatCounts {
    pub timeouts: u32,
    pub invalid: u32,
    pub slow: u32,
    /// The seat was silenced during the game.
    pub silent: bool,
}

/// One finished game as the standings need it (agent `i + 1` = index `i`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameResult {
    pub names: Vec<String>,
    pub roles: Vec<Role>,
    pub winner: Team,
    pub counts: Vec<SeatCounts>,
}

/// Per-agent results.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AgentStats {
    pub name: String,
    pub games: u32,
    pub wins: u32,
    pub win_rate: f64,
    pub points: u32,
    pub mean_points: f64,
    pub timeouts: u32,
    pub invalid: u32,
    pub silent_games: u32,
    pub slow: u32,
}

/// Per agent × role results.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoleStats {
    pub name: String,
    pub role: String,
    pub games: u32,
    pub wins: u32,
    pub win_rate: f64,
}

/// Accumulated results of a set or a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Standings {
    pub games: u32,
    pub villager_wins: u32,
    pub werewolf_wins: u32,
    agents: BTreeMap<String, AgentStats>,
    roles: BTreeMap<(String, &'static str), RoleStats>,
}

fn rate(w: u32, g: u32) -> f64 {
    if g == 0 {
        0.0
    } else {
        f64::from(w) / f64::from(g)
    }
}

impl Standings {
    /// Add one game: every member of the winning team, dead or alive, wins and gets 1 point.
    pub fn add(&mut self, r: &GameResult) {
        self.games += 1;
        match r.winner {
            Team::Villager => self.villager_wins += 1,
            Team::Werewolf => self.werewolf_wins += 1,
            Team::Others => {}
        }
        for (i, name) in r.names.iter().enumerate() {
            let role = r.roles[i];
            let won = role.team() == r.winner;
            let c = r.counts.get(i).copied().unwrap_or_default();
            let a = self
                .agents
                .entry(name.clone())
                .or_insert_with(|| AgentStats {
                    name: name.clone(),
                    ..Default::default()
                });
            a.games += 1;
            a.wins += u32::from(won);
            a.points += u32::from(won);
            a.win_rate = rate(a.wins, a.games);
            a.mean_points = rate(a.points, a.games);
            a.timeouts += c.timeouts;
            a.invalid += c.invalid;
            a.slow += c.slow;
            a.silent_games += u32::from(c.silent);
            let rs = self
                .roles
                .entry((name.clone(), role.name()))
                .or_insert_with(|| RoleStats {
                    name: name.clone(),
                    role: role.name().into(),
                    ..Default::default()
                });
            rs.games += 1;
            rs.wins += u32::from(won);
            rs.win_rate = rate(rs.wins, rs.games);
        }
    }

    pub fn agent(&self, name: &str) -> Option<&AgentStats> {
        self.agents.get(name)
    }

    pub fn role(&self, name: &str, role: Role) -> Option<&RoleStats> {
        self.roles.get(&(name.to_string(), role.name()))
    }

    /// Agents ranked by mean points (ties share a rank), name order within a tie.
    pub fn ranking(&self) -> Vec<(usize, &AgentStats)> {
        let mut v: Vec<&AgentStats> = self.agents.values().collect();
        v.sort_by(|a, b| {
            b.mean_points
                .total_cmp(&a.mean_points)
                .then_with(|| a.name.cmp(&b.name))
        });
        let mut out = Vec::with_capacity(v.len());
        for (i, a) in v.iter().enumerate() {
            let rank = if i > 0 && a.mean_points == v[i - 1].mean_points {
                out.last().map_or(1, |(r, _)| *r)
            } else {
                i + 1
            };
            out.push((rank, *a));
        }
        out
    }

    pub fn to_json(&self) -> Value {
        json!({
            "games": self.games,
            "teams": {"VILLAGER": self.villager_wins, "WEREWOLF": self.werewolf_wins},
            "agents": self.ranking().iter().map(|(rank, a)| {
                let mut v = serde_json::to_value(a).unwrap_or(Value::Null);
                v["rank"] = json!(rank);
                v
            }).collect::<Vec<_>>(),
            "roles": self.roles.values().collect::<Vec<_>>(),
        })
    }

    pub fn agents_csv(&self) -> String {
        let mut s = String::from(
            "rank,name,games,wins,win_rate,points,mean_points,timeouts,invalid,silent_games,slow\n",
        );
        for (rank, a) in self.ranking() {
            s.push_str(&format!(
                "{rank},{},{},{},{:.4},{},{:.4},{},{},{},{}\n",
                csv_field(&a.name),
                a.games,
                a.wins,
                a.win_rate,
                a.points,
                a.mean_points,
                a.timeouts,
                a.invalid,
                a.silent_games,
                a.slow
            ));
        }
        s
    }

    pub fn roles_csv(&self) -> String {
        let mut s = String::from("name,role,games,wins,win_rate\n");
        for r in self.roles.values() {
            s.push_str(&format!(
                "{},{},{},{},{:.4}\n",
                csv_field(&r.name),
                r.role,
                r.games,
                r.wins,
                r.win_rate
            ));
        }
        s
    }
}

/// RFC 4180 quoting when needed.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The seed's qualifier (§8.2): draw `table` distinct entrants uniformly per game, in a random
/// order (their agent numbers), until every entrant has played at least `k` games.
pub struct Qualifier {
    played: Vec<u32>,
    table: usize,
    k: u32,
    rng: rand_chacha::ChaCha8Rng,
}

impl Qualifier {
    /// `None` if there are fewer entrants than seats.
    pub fn new(entrants: usize, table: usize, k: u32, run_seed: u64) -> Option<Qualifier> {
        (entrants >= table && table > 0).then(|| Qualifier {
            played: vec![0; entrants],
            table,
            k,
            rng: run_table_stream(run_seed),
        })
    }

    /// Games played per entrant so far.
    pub fn played(&self) -> &[u32] {
        &self.played
    }

    /// The next table: entrant indices in agent-number order; `None` once everyone has `k` games.
    pub fn next_table(&mut self) -> Option<Vec<usize>> {
        if self.played.iter().all(|&p| p >= self.k) {
            return None;
        }
        let mut all: Vec<usize> = (0..self.played.len()).collect();
        shuffle(&mut self.rng, &mut all);
        // The prefix of a uniform shuffle is a uniform draw in a uniform order.
        all.truncate(self.table);
        for &e in &all {
            self.played[e] += 1;
        }
        Some(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(winner: Team) -> GameResult {
        GameResult {
            names: vec!["a".into(), "b".into(), "c,d".into()],
            roles: vec![Role::Werewolf, Role::Seer, Role::Villager],
            winner,
            counts: vec![
                SeatCounts {
                    timeouts: 1,
                    invalid: 0,
                    slow: 2,
                    silent: true,
                },
                SeatCounts::default(),
                SeatCounts::default(),
            ],
        }
    }

    #[test]
    fn standings_count_wins_per_agent_role_and_team() {
        let mut s = Standings::default();
        s.add(&result(Team::Villager));
        s.add(&result(Team::Villager));
        s.add(&result(Team::Werewolf));
        assert_eq!((s.games, s.villager_wins, s.werewolf_wins), (3, 2, 1));
        let a = s.agent("a").unwrap();
        assert_eq!(
            (
                a.games,
                a.wins,
                a.points,
                a.timeouts,
                a.slow,
                a.silent_games
            ),
            (3, 1, 1, 3, 6, 3)
        );
        assert!((a.mean_points - 1.0 / 3.0).abs() < 1e-9);
        assert_eq!(s.role("b", Role::Seer).unwrap().wins, 2);
        let r = s.ranking();
        assert_eq!((r[0].0, r[1].0, r[2].0), (1, 1, 3), "b and c,d tie on 2/3");
        assert!(s.agents_csv().contains("\"c,d\""));
        assert!(s.roles_csv().starts_with("name,role,games,wins,win_rate\n"));
        assert_eq!(s.to_json()["teams"]["VILLAGER"], 2);
    }

    #[test]
    fn qualifier_draws_distinct_tables_until_everyone_has_k_games() {
        let mut q = Qualifier::new(20, 15, 30, 9).unwrap();
        let mut tables = 0;
        while let Some(t) = q.next_table() {
            let mut u = t.clone();
            u.sort();
            u.dedup();
            assert_eq!(u.len(), 15);
            tables += 1;
            assert!(tables < 1000);
        }
        assert!(q.played().iter().all(|&p| p >= 30));
        assert!(Qualifier::new(14, 15, 1, 0).is_none());
    }
}
