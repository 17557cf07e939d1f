//! The referee's own file-descriptor budget: `RLIMIT_NOFILE` is raised to its hard limit when
//! `kakehiki` starts, and commands that run several matches or listen for clients check before
//! starting that the limit covers what they may hold at once (docs/sandbox.md, "The referee's
//! own resources").

use anyhow::bail;
use kakehiki_referee::accept::SEAT_CONN_CAP;
use nix::sys::resource::{getrlimit, setrlimit, Resource};

/// Descriptors of the process itself whatever it runs: standard streams, the async runtime
/// (epoll, wake-ups, blocking-pool threads' files), the results store (SQLite: database,
/// journal or WAL and shared memory) and log files being written.
pub const BASE: u64 = 64;

/// Descriptors of one seat at most: a bot process's stdin, stdout and stderr pipes, its pidfd
/// and cgroup directory and a spare (6), its port's listener (1), the connections its port may
/// hold waiting ([`SEAT_CONN_CAP`]) and the one it plays on (1).
pub const PER_SEAT: u64 = 6 + 1 + SEAT_CONN_CAP as u64 + 1;

/// Raise the soft `RLIMIT_NOFILE` to the hard limit (at start, before anything is opened).
/// Returns the limit now in force; a failure leaves the old one (and the budget check says so).
pub fn raise_to_hard() -> u64 {
    match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => hard,
            Err(e) => {
                tracing::warn!("cannot raise the open-files limit from {soft} to {hard}: {e}");
                soft
            }
        },
        Ok((soft, _)) => soft,
        Err(_) => u64::MAX,
    }
}

/// The limits in force: (soft, hard).
fn limits() -> (u64, u64) {
    getrlimit(Resource::RLIMIT_NOFILE).unwrap_or((u64::MAX, u64::MAX))
}

/// What `jobs` matches of `seats` seats at once need.
pub fn for_matches(jobs: usize, seats: usize) -> u64 {
    BASE + jobs as u64 * seats as u64 * PER_SEAT
}

/// What a `serve` listener holding `cap` unseated connections and `seated` seated ones needs.
pub fn for_server(cap: usize, seated: usize) -> u64 {
    BASE + 1 + cap as u64 + seated as u64
}

/// Fail before starting if the open-files limit is below `need`; `what` says what needs it and
/// how the figure is made, `fewer` how to need less.
pub fn check(need: u64, what: &str, fewer: &str) -> anyhow::Result<()> {
    check_against(limits(), need, what, fewer)
}

fn check_against(
    (soft, hard): (u64, u64),
    need: u64,
    what: &str,
    fewer: &str,
) -> anyhow::Result<()> {
    if soft >= need {
        return Ok(());
    }
    let raise = if hard >= need {
        format!("`ulimit -n {need}` in the shell that starts kakehiki")
    } else {
        format!(
            "the hard limit is {hard}: raise it as root (`ulimit -Hn {need}`, LimitNOFILE= for a \
             systemd service, nofile in /etc/security/limits.conf), then `ulimit -n {need}`"
        )
    };
    bail!(
        "{what} need up to {need} open file descriptors, but this process may open only {soft} \
         (RLIMIT_NOFILE, already raised to its hard limit {hard} at start); {raise}, or {fewer}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_budget_over_the_limit_names_the_numbers_and_the_fix() {
        let need = for_matches(4, 7);
        assert_eq!(need, 64 + 4 * 7 * 24);
        assert!(check_against((need, need), need, "x", "y").is_ok());
        let e = check_against((256, 100_000), need, "4 matches of 7 seats", "fewer --jobs")
            .unwrap_err()
            .to_string();
        assert!(e.contains(&need.to_string()) && e.contains("256"), "{e}");
        assert!(e.contains(&format!("ulimit -n {need}")), "{e}");
        assert!(e.contains("fewer --jobs"), "{e}");
        let e = check_against((256, 512), need, "x", "y")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("hard limit is 512") && e.contains("ulimit -Hn"),
            "{e}"
        );
    }
}
