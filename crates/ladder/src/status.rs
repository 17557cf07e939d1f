//! A ladder's state from its store (`kakehiki ladder status`): play (frozen or not, matches
//! queued, rated, open, running and stopped or failed), bots and versions by status, accounts,
//! and the store's size by kind (uploads, built programs, replays).

use std::fmt::Write as _;

use kakehiki_store::{Store, StoreError, VersionStatus};
use serde::{Serialize, Serializer};

/// Why a ladder's state could not be read.
#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    #[error(
        "the store has no ladder {0:?} (a ladder is registered when `ladder serve` first runs it)"
    )]
    NoLadder(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// A ladder's state; serialized, the object of `ladder status --json`.
#[derive(Debug, Clone, Serialize)]
pub struct LadderStatus {
    pub ladder: String,
    pub frozen: bool,
    pub matches_queued_so_far: u64,
    pub results_rated: u64,
    pub queued: u64,
    pub running: Vec<RunningMatch>,
    pub failed_or_stopped: u64,
    /// Entrants with a rating (that have played).
    pub entrants_played: usize,
    pub retired_bots: Vec<String>,
    pub accounts: usize,
    pub accounts_disabled: usize,
    /// Versions by status, in the order of [`VERSION_STATUSES`]; an object by status in JSON.
    #[serde(serialize_with = "as_map")]
    pub versions: Vec<(&'static str, usize)>,
    pub storage: Vec<Storage>,
    pub storage_bytes: u64,
}

/// A match being played, and by whom.
#[derive(Debug, Clone, Serialize)]
pub struct RunningMatch {
    pub index: u64,
    pub worker: String,
}

/// One kind of the ladder's data in the store.
#[derive(Debug, Clone, Serialize)]
pub struct Storage {
    /// `uploads`, `programs` or `replays`.
    pub kind: &'static str,
    pub rows: u64,
    pub bytes: u64,
}

/// The version statuses counted, in the order shown.
pub const VERSION_STATUSES: [VersionStatus; 5] = [
    VersionStatus::Building,
    VersionStatus::Active,
    VersionStatus::BuildFailed,
    VersionStatus::CheckFailed,
    VersionStatus::Refused,
];

fn as_map<S: Serializer>(pairs: &[(&'static str, usize)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, n)| (k, n)))
}

/// Read the state of ladder `name` from `store`.
pub fn status(store: &mut dyn Store, name: &str) -> Result<LadderStatus, StatusError> {
    let contest = kakehiki_store::ladder_contest(name);
    if store.contest(&contest)?.is_none() {
        return Err(StatusError::NoLadder(name.to_string()));
    }
    let state = store.ladder_state(name)?;
    let queue = store.queue_counts(&contest)?;
    let running = store.ladder_running(name)?;
    let entrants = store.ladder_ratings(name, true)?;
    let retired = store.ladder_retired_bots(name)?;
    let accounts = store.ladder_users()?;
    let mut versions = Vec::new();
    for st in VERSION_STATUSES {
        versions.push((st.as_str(), store.bot_versions_in(name, st)?.len()));
    }
    let storage: Vec<Storage> = store
        .ladder_storage(name)?
        .into_iter()
        .map(|u| Storage {
            kind: u.kind,
            rows: u.rows,
            bytes: u.bytes,
        })
        .collect();
    Ok(LadderStatus {
        ladder: name.to_string(),
        frozen: state.frozen,
        matches_queued_so_far: state.next_match,
        results_rated: state.rated_seq,
        queued: queue.queued,
        running: running
            .into_iter()
            .map(|(index, worker)| RunningMatch { index, worker })
            .collect(),
        failed_or_stopped: queue.failed,
        entrants_played: entrants.len(),
        retired_bots: retired,
        accounts: accounts.len(),
        accounts_disabled: accounts.iter().filter(|u| u.disabled).count(),
        versions,
        storage_bytes: storage.iter().map(|u| u.bytes).sum(),
        storage,
    })
}

impl LadderStatus {
    /// The state as text, for people.
    pub fn text(&self) -> String {
        let mib = |b: u64| format!("{:.1} MiB", b as f64 / 1_048_576.0);
        let mut out = String::new();
        let _ = writeln!(out, "ladder {}", self.ladder);
        let _ = writeln!(
            out,
            "  play      {} · {} matches queued so far, {} results rated",
            if self.frozen { "FROZEN" } else { "matchmaking" },
            self.matches_queued_so_far,
            self.results_rated
        );
        let _ = writeln!(
            out,
            "  queue     {} queued, {} running, {} failed or stopped",
            self.queued,
            self.running.len(),
            self.failed_or_stopped
        );
        for m in &self.running {
            let _ = writeln!(out, "            match {} on {}", m.index, m.worker);
        }
        let _ = writeln!(
            out,
            "  entrants  {} played{}",
            self.entrants_played,
            if self.retired_bots.is_empty() {
                String::new()
            } else {
                format!("; retired: {}", self.retired_bots.join(", "))
            }
        );
        let _ = writeln!(
            out,
            "  accounts  {} ({} disabled)",
            self.accounts, self.accounts_disabled
        );
        let _ = writeln!(
            out,
            "  versions  {}",
            self.versions
                .iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(out, "  storage   {} in all", mib(self.storage_bytes));
        for u in &self.storage {
            let _ = writeln!(
                out,
                "            {:<9} {:>7} rows {:>12}",
                u.kind,
                u.rows,
                mib(u.bytes)
            );
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_as_text_and_json() {
        let s = LadderStatus {
            ladder: "g".into(),
            frozen: true,
            matches_queued_so_far: 12,
            results_rated: 9,
            queued: 2,
            running: vec![RunningMatch {
                index: 11,
                worker: "w1".into(),
            }],
            failed_or_stopped: 1,
            entrants_played: 3,
            retired_bots: vec!["alice".into()],
            accounts: 4,
            accounts_disabled: 1,
            versions: vec![("building", 1), ("active", 3)],
            storage: vec![Storage {
                kind: "uploads",
                rows: 4,
                bytes: 3 << 20,
            }],
            storage_bytes: 3 << 20,
        };
        let text = s.text();
        for line in [
            "ladder g\n",
            "  play      FROZEN · 12 matches queued so far, 9 results rated\n",
            "  queue     2 queued, 1 running, 1 failed or stopped\n",
            "            match 11 on w1\n",
            "  entrants  3 played; retired: alice\n",
            "  accounts  4 (1 disabled)\n",
            "  versions  1 building, 3 active\n",
            "  storage   3.0 MiB in all\n",
            "            uploads         4 rows      3.0 MiB\n",
        ] {
            assert!(text.contains(line), "{line:?} in {text}");
        }
        let v = serde_json::to_value(&s).unwrap();
        assert_eq!(
            v["versions"],
            serde_json::json!({"building": 1, "active": 3})
        );
        assert_eq!(
            v["running"],
            serde_json::json!([{"index": 11, "worker": "w1"}])
        );
        assert_eq!(v["storage"][0]["kind"], "uploads");
        assert_eq!(v["storage_bytes"], 3 << 20);
    }
}
