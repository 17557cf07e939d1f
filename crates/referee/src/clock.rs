//! Each seat's thinking time in one match, shared by the match's table and whoever reads it
//! (the thinking budget's watcher, the overtime rule), and `check`'s rule that stops a seat
//! after identical errors. Below both the seat layer and the driver contract.

use tokio::time::Instant;

/// Each seat's thinking time so far in one match (the sum of its replies' times, in µs), kept
/// by the match's [`Table`](crate::seat::Table) and read by whoever gave it: when a match outlasts its time limit,
/// its caller charges the seats that used the most. Only a live seat's answers to requests with
/// a limit count: built-in, silent and replayed seats use no time, and a message in a listening
/// window (a chat that lasts its time whatever the seats do) is not thinking time.
#[derive(Debug, Clone, Default)]
pub struct SeatClock(std::sync::Arc<std::sync::Mutex<ClockState>>);

#[derive(Debug, Default)]
struct ClockState {
    /// Each seat's answered time, µs.
    used: Vec<u64>,
    /// When each seat's request still unanswered was written, if it has one.
    pending: Vec<Option<Instant>>,
    /// Stop a seat once it has made this many identical errors (`check` only: a contest plays
    /// every match to its end by the game's rules).
    stop_after: Option<usize>,
    /// The seats stopped so ([`SeatClock::stopped`]).
    stopped: Vec<usize>,
    /// Stop waiting for a reply once the bot has waited this long for input, asleep and using
    /// no CPU (`check` only: a contest gives every reply its whole limit).
    waiting_stop: Option<std::time::Duration>,
}

/// Why a seat stopped after identical errors is down ([`SeatClock::stop_after_identical`]).
pub const STOPPED_AFTER_IDENTICAL: &str =
    "stopped after identical errors: the rest of the match would repeat them";

impl SeatClock {
    fn state(&self) -> std::sync::MutexGuard<'_, ClockState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `seat` was written a request at `since` and thinks until it answers ([`SeatClock::add`]):
    /// a match stopped meanwhile counts that time too.
    pub fn start(&self, seat: usize, since: Instant) {
        let mut st = self.state();
        if st.pending.len() <= seat {
            st.pending.resize(seat + 1, None);
        }
        st.pending[seat] = Some(since);
    }

    /// Add `us` to `seat`'s time: it answered (its request is no longer pending).
    pub fn add(&self, seat: usize, us: u64) {
        let mut st = self.state();
        if st.used.len() <= seat {
            st.used.resize(seat + 1, 0);
        }
        st.used[seat] = st.used[seat].saturating_add(us);
        if let Some(p) = st.pending.get_mut(seat) {
            *p = None;
        }
    }

    /// Stop a seat (as if it had exited) once it has made `n` identical errors (the same kind
    /// and detail): `check` goes on to its next match instead of waiting out the same mistake
    /// to the end of this one. A match of a contest never sets it.
    pub fn stop_after_identical(&self, n: usize) {
        self.state().stop_after = Some(n.max(1));
    }

    /// Stop waiting for a reply once the bot has spent `after` asleep reading its input, using
    /// no CPU ([`kakehiki_agent::activity`]): it waits for the referee while the referee waits
    /// for it, and would time out however long it were given. `check` only.
    pub fn stop_when_waiting(&self, after: std::time::Duration) {
        self.state().waiting_stop = Some(after);
    }

    /// How long a bot may wait for input while it owes a reply before it is given up, if ever.
    pub(crate) fn waiting_stop(&self) -> Option<std::time::Duration> {
        self.state().waiting_stop
    }

    /// Whether `seat` was stopped after identical errors.
    pub fn stopped(&self, seat: usize) -> bool {
        self.state().stopped.contains(&seat)
    }

    /// The identical errors after which a seat is stopped, if any.
    pub(crate) fn stop_limit(&self) -> Option<usize> {
        self.state().stop_after
    }

    /// `seat` was stopped after identical errors.
    pub(crate) fn mark_stopped(&self, seat: usize) {
        self.state().stopped.push(seat);
    }

    /// Each seat's time so far in µs, the request it is thinking about now included; at least
    /// `seats` long.
    pub fn totals(&self, seats: usize) -> Vec<u64> {
        let st = self.state();
        let now = Instant::now();
        let n = seats.max(st.used.len()).max(st.pending.len());
        (0..n)
            .map(|s| {
                let used = st.used.get(s).copied().unwrap_or(0);
                let thinking = st.pending.get(s).copied().flatten().map_or(0, |since| {
                    now.saturating_duration_since(since).as_micros() as u64
                });
                used.saturating_add(thinking)
            })
            .collect()
    }
}
