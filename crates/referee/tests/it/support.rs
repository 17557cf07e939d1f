//! What several test modules read from a match record.

use kakehiki_referee::MatchRecord;
use serde_json::Value;

/// The replay's events of kind `kind`, in order.
pub fn events(r: &MatchRecord, kind: &str) -> Vec<Value> {
    r.replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v["event"] == kind)
        .collect()
}
