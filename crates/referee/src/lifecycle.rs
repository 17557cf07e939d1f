//! One match lifecycle for every game: the driver declares its game once (a [`Lifecycle`]: game
//! type, replay format, how a spec becomes the match's parameters, the grace its programs get to
//! exit), and supplies only its game's flow; this module does the rest the same way for every
//! driver and serve loop:
//!
//! 1. the spec is checked ([`MatchSpec::check_common`] and the game's own parameters);
//! 2. the replay header is built by [`ReplayHeader::new`], the one place a header is made;
//! 3. the table is opened on the seats (clocked for a live match, replayed for a re-run);
//! 4. the game's flow runs on it ([`run_flow`]): only the game's turns, handing the table back;
//! 5. every seat is finished with the game's one end grace ([`Lifecycle::end_grace`]);
//! 6. the game closes the record from what the table finished with.
//!
//! A live match runs as a task of its own ([`as_task`]); a re-run is polled to its end by
//! [`rerun_now`], the one way a re-run is polled.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use kakehiki_core::replay::{ParsedReplay, ReplayHeader, ReplayLog};
use kakehiki_core::GameType;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::driver::{as_task, MatchSpec, RefereeError};
use crate::seat::{Finished, Seat, Table};
use crate::verify::check_format;

/// A game's declaration: everything its matches share. Declared once per driver, as a constant.
pub struct Lifecycle<P> {
    /// The game's nature (name, rule sets, seat counts, built-in bots).
    pub game: &'static GameType,
    /// The replay format the driver writes.
    pub format: &'static str,
    /// The match's parameters from its spec, which is refused when it is not one of this game's
    /// (rule set, seats, options: [`MatchSpec::check_common`] and the game's own checks).
    pub params: fn(&MatchSpec) -> Result<P, RefereeError>,
    /// How long the programs are given to exit once the match is over (then they are stopped):
    /// the game's one end grace, a constant or one of its parameters.
    pub end_grace: fn(&P) -> Duration,
}

impl<P> Lifecycle<P> {
    /// The parameters of `spec`, checked: what `play` does first, and `check_spec` does alone.
    pub fn check(&self, spec: &MatchSpec) -> Result<P, RefereeError> {
        (self.params)(spec)
    }

    /// The end grace of a match with parameters `p`.
    pub fn end_grace(&self, p: &P) -> Duration {
        (self.end_grace)(p)
    }

    /// The replay header of a match of this game.
    pub fn header(
        &self,
        rules: &str,
        seed: u64,
        seats: Vec<String>,
        params: &impl Serialize,
    ) -> ReplayHeader {
        ReplayHeader::new(self.format, self.game.name, rules, seed, seats, params)
    }

    /// The live table of `spec`'s match: `seats`, the replay starting with `header` (`None`: the
    /// flow writes its header itself), each seat's thinking time added to the spec's clock.
    pub fn open(&self, spec: &MatchSpec, seats: Vec<Seat>, header: Option<&ReplayHeader>) -> Table {
        Table::new(seats, log_of(header))
            .clocked(spec.clock.clone())
            .live(spec.live.clone())
    }

    /// Play a live match on `table` ([`Lifecycle::open`]): [`run_flow`] with the game's end
    /// grace, as a task of its own ([`as_task`]).
    pub async fn play<S, T, Fut>(
        &self,
        p: &P,
        table: Table,
        flow: impl FnOnce(Table) -> Fut + Send + 'static,
        close: impl FnOnce(S, Finished) -> T + Send + 'static,
    ) -> Result<T, RefereeError>
    where
        Fut: Future<Output = (Table, S)> + Send + 'static,
        S: Send + 'static,
        T: Send + 'static,
    {
        as_task(run_flow(table, self.end_grace(p), flow, close)).await
    }

    /// A table answering from `replay`'s seat record (`seats` seats), the re-run's replay
    /// starting with `header` (`None`: the flow writes its header itself). A replay of another
    /// format ([`check_format`]: an older one is to be upgraded first) or another number of
    /// seats is refused.
    pub fn replayed(
        &self,
        replay: &ParsedReplay,
        seats: usize,
        header: Option<&ReplayHeader>,
    ) -> Result<Table, RefereeError> {
        check_format(&replay.header.format, self.format)?;
        let found = replay.header.seats.len();
        if found != seats {
            let why = format!("expected {seats} seats, found {found}");
            return Err(RefereeError::BadReplay(why));
        }
        Table::replayed(replay, seats, log_of(header))
    }

    /// The game's parameters as a replay's header records them.
    pub fn recorded<Q: DeserializeOwned>(&self, replay: &ParsedReplay) -> Result<Q, RefereeError> {
        serde_json::from_value(replay.header.params.clone())
            .map_err(|e| RefereeError::BadReplay(format!("header params: {e}")))
    }

    /// Re-run a match on a replayed `table` ([`Lifecycle::replayed`]): the same [`run_flow`] as
    /// [`Lifecycle::play`], polled to its end by [`rerun_now`].
    pub fn rerun<S, T, Fut>(
        &self,
        p: &P,
        table: Table,
        flow: impl FnOnce(Table) -> Fut + Send,
        close: impl FnOnce(S, Finished) -> T + Send,
    ) -> Result<T, RefereeError>
    where
        Fut: Future<Output = (Table, S)> + Send,
        S: Send,
        T: Send,
    {
        rerun_now(run_flow(table, self.end_grace(p), flow, close))
    }
}

fn log_of(header: Option<&ReplayHeader>) -> ReplayLog {
    let mut log = ReplayLog::new();
    if let Some(h) = header {
        log.push(h);
    }
    log
}

/// The match on `table`, live or replayed: the game's `flow` (its turns only) hands the table
/// back with its state, every seat is finished with `grace`, and `close` makes the result from
/// the state and what the table finished with (its replay, errors and seat ends).
pub async fn run_flow<S, T, Fut>(
    table: Table,
    grace: Duration,
    flow: impl FnOnce(Table) -> Fut,
    close: impl FnOnce(S, Finished) -> T,
) -> T
where
    Fut: Future<Output = (Table, S)>,
{
    let (table, state) = flow(table).await;
    let finished = table.finish(grace).await;
    close(state, finished)
}

/// Run a re-run to its end, on a thread of its own (so that it works from inside an async
/// caller too, outside that caller's runtime): it is polled again whenever it wakes itself, and
/// fails if it waits for anything else (a replayed seat answers at once: a re-run that waits is
/// waiting for a seat that is not replayed). A panic in it is an error, not the caller's panic.
pub fn rerun_now<F>(f: F) -> Result<F::Output, RefereeError>
where
    F: Future + Send,
    F::Output: Send,
{
    std::thread::scope(|scope| scope.spawn(move || poll_to_end(f)).join())
        .map_err(|_| RefereeError::BadReplay("the re-run panicked".into()))?
}

/// Whether a future woke itself since it was last polled.
struct Woken(AtomicBool);

impl Wake for Woken {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::SeqCst);
    }
}

fn poll_to_end<F: Future>(f: F) -> Result<F::Output, RefereeError> {
    let woken = Arc::new(Woken(AtomicBool::new(false)));
    let waker = Waker::from(woken.clone());
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return Ok(v);
        }
        if !woken.0.swap(false, Ordering::SeqCst) {
            return Err(RefereeError::BadReplay(
                "the re-run waited for a seat that is not replayed".into(),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rerun_that_yields_is_polled_again_to_its_end() {
        let got = rerun_now(async {
            tokio::task::yield_now().await;
            tokio::task::yield_now().await;
            7
        });
        assert_eq!(got.unwrap(), 7);
    }

    #[test]
    fn a_rerun_that_waits_for_the_outside_world_fails_at_once() {
        let got = rerun_now(std::future::pending::<()>());
        let err = got.unwrap_err().to_string();
        assert!(err.contains("not replayed"), "{err}");
    }

    #[test]
    fn a_panicking_rerun_is_an_error() {
        let got = rerun_now(async { panic!("a driver's bug") });
        assert!(matches!(got, Err(RefereeError::BadReplay(m)) if m.contains("panicked")));
    }

    #[tokio::test]
    async fn a_rerun_works_from_inside_an_async_caller() {
        assert_eq!(rerun_now(async { 3 }).unwrap(), 3);
    }

    #[test]
    fn the_flow_runs_then_every_seat_is_finished_then_the_game_closes() {
        let mut log = ReplayLog::new();
        log.push(&ReplayHeader::new("toy@1", "toy", "r", 1, Vec::new(), &()));
        let table = Table::new(vec![Seat::NotStarted("gone".into())], log);
        let replay = rerun_now(run_flow(
            table,
            Duration::ZERO,
            |mut t| async move {
                t.record(&serde_json::json!({"event": "turn"}));
                (t, "state")
            },
            |state, finished: Finished| {
                assert_eq!(state, "state");
                finished.log.to_text()
            },
        ))
        .unwrap();
        let events: Vec<String> = replay
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["event"].to_string())
            .collect();
        assert_eq!(events, ["\"header\"", "\"turn\"", "\"seat_end\""]);
    }
}
