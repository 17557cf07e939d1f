//! Where a match's wall time goes, for the referee-overhead benchmarks (`nac_overhead`): its
//! start-up, each turn split into the referee's own time and the time spent waiting for the
//! bots, its shutdown, and the referee's CPU time in the turns. Not part of any replay.

use std::time::Duration;

use tokio::time::Instant;

/// One match's profile.
#[derive(Debug, Clone, Default)]
pub struct Profile {
    /// The whole match; spawning the bots and every READY; closing, waiting and killing.
    pub wall: Duration,
    pub startup: Duration,
    pub shutdown: Duration,
    /// Per turn: its wall time, and the longest a seat took from its block to its reply.
    pub turns: Vec<TurnProfile>,
    /// CPU time of the match's thread during the turns (on a current-thread runtime: all of the
    /// referee's work in the turns, and none of the bots').
    pub turn_cpu: Duration,
    /// The turn under way: when it began, and its last reply.
    turn: Option<(Instant, Option<Instant>)>,
    cpu_start: Duration,
}

/// One turn's wall time, and the part of it spent waiting for the bots: from its first message
/// written to its last reply received.
#[derive(Debug, Clone, Copy, Default)]
pub struct TurnProfile {
    pub wall: Duration,
    pub waited: Duration,
    /// From the turn's start to its first message written.
    pub before: Duration,
    /// From its last reply received to the turn's end.
    pub after: Duration,
}

impl Profile {
    /// The turns begin (the match's start-up is over).
    pub fn turns_begin(&mut self, started: Instant) {
        self.startup = started.elapsed();
        self.cpu_start = thread_cpu();
    }

    /// A turn begins.
    pub fn turn_begins(&mut self) {
        self.turn = Some((Instant::now(), None));
    }

    /// The turn's asks are answered: `span` is the first message written and the last reply
    /// received ([`crate::seat::Table::span`]).
    pub fn turn_answered(&mut self, span: Option<(Instant, Instant)>) {
        let Some((start, _)) = self.turn else { return };
        self.turn = Some((start, span.map(|s| s.1)));
        self.turns.push(TurnProfile {
            waited: span.map_or(Duration::ZERO, |(first, last)| {
                last.saturating_duration_since(first)
            }),
            before: span.map_or(Duration::ZERO, |(first, _)| {
                first.saturating_duration_since(start)
            }),
            ..TurnProfile::default()
        });
    }

    /// The turn is over.
    pub fn turn_ends(&mut self) {
        let (Some((start, received)), Some(last)) = (self.turn.take(), self.turns.last_mut())
        else {
            return;
        };
        let end = Instant::now();
        last.wall = end.saturating_duration_since(start);
        last.after = received.map_or(Duration::ZERO, |r| end.saturating_duration_since(r));
    }

    /// The turns are over; the shutdown begins.
    pub fn turns_end(&mut self) {
        self.turn_cpu = thread_cpu().saturating_sub(self.cpu_start);
    }
}

/// The CPU time (user and system) of the calling thread.
fn thread_cpu() -> Duration {
    use nix::sys::resource::{getrusage, UsageWho};
    let t = |tv: nix::sys::time::TimeVal| {
        Duration::from_secs(tv.tv_sec().max(0) as u64)
            + Duration::from_micros(tv.tv_usec().max(0) as u64)
    };
    getrusage(UsageWho::RUSAGE_THREAD)
        .map(|u| t(u.user_time()) + t(u.system_time()))
        .unwrap_or_default()
}
