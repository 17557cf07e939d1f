//! What several test modules share: the events of a match record, and where a match's
//! listener is when the referee binds port 0.

use std::time::Duration;

use kakehiki_referee::driver::ListenNotice;
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

/// Where a match's shared listener is: the referee binds port 0 and says which port it got
/// ([`kakehiki_referee::MatchSpec::on_listen`]); the test's clients wait for it. One per test,
/// leaked (a few bytes), so that it is `Copy` into every client thread or task.
#[derive(Clone, Copy)]
pub struct Listening(&'static (std::sync::Mutex<Option<u16>>, std::sync::Condvar));

impl Listening {
    pub fn new() -> Listening {
        Listening(Box::leak(Box::default()))
    }

    /// The notice the match's spec is given.
    pub fn notice(self) -> ListenNotice {
        ListenNotice::new(move |_, addr| {
            *self.0 .0.lock().unwrap() = Some(addr.port());
            self.0 .1.notify_all();
        })
    }

    /// The port, once the referee has bound it (this blocks: from async code, call it on a
    /// blocking thread).
    pub fn port(self) -> u16 {
        let (port, bound) = self.0;
        let guard = port.lock().unwrap();
        let (guard, _) = bound
            .wait_timeout_while(guard, Duration::from_secs(30), |p| p.is_none())
            .unwrap();
        guard.expect("the referee bound its listener within 30 s")
    }
}
