//! A seat played by a person (`human`): the desk between the referee's seat and the person's
//! page (`docs/human.md`).
//!
//! The referee's seat writes to the desk what it would write to a bot ([`Desk::tell`]) and waits
//! on it for the reply ([`Desk::answer`]), under the game's own limits; the page that serves the
//! seat (the web crate's `human` module) shows the messages, and what the person sends arrives
//! through [`Desk::send`], which refuses a reply when none is asked for or when the game's check
//! ([`ReplyCheck`]) finds it illegal, with the reason, so the person may try again before the
//! deadline. A person who closes the page and opens none again within [`LEAVE_GRACE`] has left:
//! the seat is disconnected, as a bot whose connection closed.
//!
//! Whoever holds a desk's key plays its seat: the key is 128 random bits, in the page's address.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;

use crate::{same_secret, secret_hex, unix_ms};

/// How long a seat may have no page open, once one was opened, before the person has left.
pub const LEAVE_GRACE: Duration = Duration::from_secs(15);

/// The longest reply a person may send, in bytes (the referee's line caps are larger).
pub const MAX_REPLY: usize = 16 * 1024;

/// A game's check of a reply before it is sent: `Err(reason)` refuses it. Given the last
/// message the seat was sent and the reply.
pub type ReplyCheck = fn(last: &str, reply: &str) -> Result<(), String>;

/// A game's offer of legal replies to a message, for the page's controls (Diplomacy's orders of
/// each unit), as JSON; `None` when it has none for that message.
pub type ReplyChoices = fn(message: &str) -> Option<serde_json::Value>;

/// What a game gives a person's desk.
#[derive(Debug, Clone, Copy, Default)]
pub struct Help {
    pub check: Option<ReplyCheck>,
    pub choices: Option<ReplyChoices>,
}

/// One message the seat was sent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Told {
    /// Its number, from 0.
    pub n: usize,
    /// The message as the referee wrote it (line ends included).
    pub text: String,
    pub at_unix_ms: u64,
}

/// One reply the person sent.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sent {
    pub text: String,
    pub at_unix_ms: u64,
}

/// What the page shows: the messages and replies from given numbers on, and what is awaited.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DeskView {
    pub seat: usize,
    pub game: String,
    pub messages: Vec<Told>,
    /// The number of the first of `sent`.
    pub sent_first: usize,
    pub sent: Vec<Sent>,
    /// A reply is awaited until this time (Unix ms).
    pub waiting_until_unix_ms: Option<u64>,
    /// The game's offer of replies to the last message ([`ReplyChoices`]), when this view has
    /// new messages.
    pub choices: Option<serde_json::Value>,
    /// The seat is over, and why (the match ended, the person left).
    pub over: Option<String>,
}

/// Why a reply was not taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("nothing is asked of you now: wait for the next request")]
    NotAsked,
    #[error("this seat is over: {0}")]
    Over(String),
    #[error("a reply is one line: send it without line breaks")]
    MultiLine,
    #[error("the reply is empty")]
    Empty,
    #[error("the reply is {0} bytes, more than {MAX_REPLY}")]
    TooLong(usize),
    #[error("{0}")]
    Illegal(String),
}

/// What [`Desk::answer`] got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answered {
    /// The person's reply (without a line end), and when it arrived.
    Reply(Vec<u8>, Instant),
    /// The deadline passed.
    Timeout,
    /// The person left, or the seat is over (why).
    Gone(String),
}

#[derive(Debug, Default)]
struct State {
    messages: Vec<Told>,
    /// The offer of replies to the last message.
    choices: Option<serde_json::Value>,
    sent: Vec<Sent>,
    /// Replies taken and not yet read by the seat.
    pending: std::collections::VecDeque<(Vec<u8>, Instant)>,
    waiting_until: Option<u64>,
    /// The deadline `waiting_until` was computed for.
    deadline: Option<Instant>,
    pages: usize,
    opened: bool,
    left_at: Option<Instant>,
    over: Option<String>,
}

impl State {
    /// No reply is awaited any more.
    fn not_waiting(&mut self) {
        self.waiting_until = None;
        self.deadline = None;
    }
}

/// The desk of one human seat.
pub struct Desk {
    pub seat: usize,
    pub game: String,
    /// The capability in the page's address.
    pub key: String,
    help: Help,
    state: Mutex<State>,
    version: watch::Sender<u64>,
}

impl std::fmt::Debug for Desk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Desk")
            .field("seat", &self.seat)
            .field("game", &self.game)
            .finish()
    }
}

impl Desk {
    /// The desk of `seat` of a `game` match, with the game's `help`: a check that refuses
    /// illegal replies before they are sent, an offer of legal ones.
    pub fn new(game: &str, seat: usize, help: Help) -> Arc<Desk> {
        Arc::new(Desk {
            seat,
            game: game.to_string(),
            // 128 bits.
            key: secret_hex(16),
            help,
            state: Mutex::new(State::default()),
            version: watch::channel(0).0,
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn bump(&self) {
        self.version.send_modify(|v| *v += 1);
    }

    /// Whether `key` is this desk's, compared in constant time.
    pub fn opens(&self, key: &str) -> bool {
        same_secret(&self.key, key)
    }

    /// A change of the desk to wait on.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }

    /// The seat writes `bytes` to the person. `Err`: the person has left (why).
    pub fn tell(&self, bytes: &[u8]) -> Result<(), String> {
        let mut st = self.state();
        if let Some(why) = left(&mut st) {
            return Err(why);
        }
        drop(st);
        let text = String::from_utf8_lossy(bytes).into_owned();
        let choices = self.help.choices.and_then(|offer| offer(&text));
        let mut st = self.state();
        let n = st.messages.len();
        st.messages.push(Told {
            n,
            text,
            at_unix_ms: unix_ms(),
        });
        st.choices = choices;
        drop(st);
        self.bump();
        Ok(())
    }

    /// The seat waits for the person's next reply until `deadline`.
    pub async fn answer(&self, deadline: Instant) -> Answered {
        let mut changes = self.subscribe();
        loop {
            {
                let mut st = self.state();
                let now = Instant::now();
                let done = match st.pending.pop_front() {
                    Some((bytes, at)) => Some(Answered::Reply(bytes, at)),
                    None => match left(&mut st) {
                        Some(why) => Some(Answered::Gone(why)),
                        None => (now >= deadline).then_some(Answered::Timeout),
                    },
                };
                if let Some(done) = done {
                    st.not_waiting();
                    drop(st);
                    self.bump();
                    return done;
                }
                // A deadline far ahead is none: the seat is only listened to.
                if st.deadline != Some(deadline) {
                    let ahead = deadline - now;
                    st.deadline = Some(deadline);
                    st.waiting_until = (ahead < Duration::from_secs(24 * 3600))
                        .then(|| unix_ms() + ahead.as_millis() as u64);
                    drop(st);
                    self.bump();
                }
            }
            // Woken by a reply or a page closing; a page closed is looked at again after
            // the grace.
            let tick = (Instant::now() + Duration::from_secs(1)).min(deadline);
            let _ = tokio::time::timeout_at(tick, changes.changed()).await;
        }
    }

    /// The seat is over (the match ended, the seat was stopped).
    pub fn end(&self, why: &str) {
        let mut st = self.state();
        if st.over.is_none() {
            st.over = Some(why.to_string());
        }
        st.not_waiting();
        drop(st);
        self.bump();
    }

    /// Why the seat is gone, if it is (checked before a write).
    pub fn gone(&self) -> Option<String> {
        left(&mut self.state())
    }

    /// The person sends `text` (one reply, its line end optional).
    pub fn send(&self, text: &str) -> Result<(), Refusal> {
        let text = text.strip_suffix('\n').unwrap_or(text);
        let text = text.strip_suffix('\r').unwrap_or(text);
        if text.len() > MAX_REPLY {
            return Err(Refusal::TooLong(text.len()));
        }
        if text.contains(['\n', '\r']) {
            return Err(Refusal::MultiLine);
        }
        if text.trim().is_empty() {
            return Err(Refusal::Empty);
        }
        let last = {
            let st = self.state();
            if let Some(why) = &st.over {
                return Err(Refusal::Over(why.clone()));
            }
            if st.waiting_until.is_none() || !st.pending.is_empty() {
                return Err(Refusal::NotAsked);
            }
            st.messages
                .last()
                .map(|m| m.text.clone())
                .unwrap_or_default()
        };
        if let Some(check) = self.help.check {
            check(&last, text).map_err(Refusal::Illegal)?;
        }
        let mut st = self.state();
        if st.waiting_until.is_none() || !st.pending.is_empty() {
            return Err(Refusal::NotAsked);
        }
        st.pending
            .push_back((text.as_bytes().to_vec(), Instant::now()));
        st.sent.push(Sent {
            text: text.to_string(),
            at_unix_ms: unix_ms(),
        });
        drop(st);
        self.bump();
        Ok(())
    }

    /// A page of the seat is open until the guard is dropped.
    pub fn open_page(self: &Arc<Self>) -> PageGuard {
        let mut st = self.state();
        st.pages += 1;
        st.opened = true;
        st.left_at = None;
        drop(st);
        self.bump();
        PageGuard(self.clone())
    }

    /// What the page shows, from message `from` and reply `sent_from` on.
    pub fn view(&self, from: usize, sent_from: usize) -> DeskView {
        let st = self.state();
        DeskView {
            seat: self.seat,
            game: self.game.clone(),
            messages: st.messages.iter().skip(from).cloned().collect(),
            choices: (from < st.messages.len())
                .then(|| st.choices.clone())
                .flatten(),
            sent_first: sent_from.min(st.sent.len()),
            sent: st.sent.iter().skip(sent_from).cloned().collect(),
            waiting_until_unix_ms: st.waiting_until,
            over: st.over.clone(),
        }
    }
}

/// Why the person is gone: the seat is over, or no page has been open for [`LEAVE_GRACE`].
fn left(st: &mut State) -> Option<String> {
    if let Some(why) = &st.over {
        return Some(why.clone());
    }
    let at = st.left_at?;
    if st.pages == 0 && at.elapsed() >= LEAVE_GRACE {
        let why = format!(
            "the person left: the seat's page was closed and not opened again within {} s",
            LEAVE_GRACE.as_secs()
        );
        st.over = Some(why.clone());
        return Some(why);
    }
    None
}

/// An open page of a seat ([`Desk::open_page`]).
pub struct PageGuard(Arc<Desk>);

impl Drop for PageGuard {
    fn drop(&mut self) {
        let mut st = self.0.state();
        st.pages = st.pages.saturating_sub(1);
        if st.pages == 0 && st.opened {
            st.left_at = Some(Instant::now());
        }
        drop(st);
        self.0.bump();
    }
}

/// Told of each desk a contest's match opens ([`Desks::open`]): the contest, the match's index
/// and the desk (the caller that serves the desks prints where the person goes).
pub type DeskNotice = Box<dyn Fn(&str, u64, &Desk) + Send + Sync>;

/// The desks of the human seats of the contests' matches being played in this process, by
/// contest, match index and seat: opened as a match starts, closed when it ends, served by the
/// process's web pages (`kakehiki contest run --serve`).
#[derive(Default)]
pub struct Desks {
    open: Mutex<std::collections::BTreeMap<(String, u64, usize), Arc<Desk>>>,
    notice: Mutex<Option<DeskNotice>>,
}

impl Desks {
    fn map(
        &self,
    ) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<(String, u64, usize), Arc<Desk>>>
    {
        self.open.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tell `notice` of every desk opened from now on.
    pub fn on_open(&self, notice: DeskNotice) {
        *self.notice.lock().unwrap_or_else(|e| e.into_inner()) = Some(notice);
    }

    /// Whether a caller serves the desks (someone was told to be told).
    pub fn served(&self) -> bool {
        self.notice
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Open the desk of `seat` of match `index` of `contest` (a `game` match) with `help`.
    pub fn open(
        &self,
        contest: &str,
        index: u64,
        game: &str,
        seat: usize,
        help: Help,
    ) -> Arc<Desk> {
        let desk = Desk::new(game, seat, help);
        if let Some(old) = self
            .map()
            .insert((contest.to_string(), index, seat), desk.clone())
        {
            old.end("the match was played again");
        }
        if let Some(notice) = self
            .notice
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            notice(contest, index, &desk);
        }
        desk
    }

    /// The open desk of `seat` of match `index` of `contest`.
    pub fn get(&self, contest: &str, index: u64, seat: usize) -> Option<Arc<Desk>> {
        self.map().get(&(contest.to_string(), index, seat)).cloned()
    }

    /// Close the desks of match `index` of `contest` (its seats are over).
    pub fn close(&self, contest: &str, index: u64) {
        self.map().retain(|(c, i, _), d| {
            let keep = !(c == contest && *i == index);
            if !keep {
                d.end("the match is over");
            }
            keep
        });
    }
}

/// The process's [`Desks`].
pub fn desks() -> &'static Desks {
    static DESKS: std::sync::OnceLock<Desks> = std::sync::OnceLock::new();
    DESKS.get_or_init(Desks::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_digits(_: &str, reply: &str) -> Result<(), String> {
        match reply.contains(|c: char| c.is_ascii_digit()) {
            true => Err(format!("{reply:?} has a digit")),
            false => Ok(()),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_reply_is_taken_only_when_asked_and_legal() {
        let desk = Desk::new(
            "geister",
            1,
            Help {
                check: Some(no_digits),
                choices: None,
            },
        );
        assert_eq!(desk.key.len(), 32);
        assert!(desk.opens(&desk.key.clone()) && !desk.opens("00"));
        desk.tell(b"SET?\r\n").unwrap();
        assert_eq!(desk.send("SET:ABCD"), Err(Refusal::NotAsked));
        let d2 = desk.clone();
        let asked =
            tokio::spawn(async move { d2.answer(Instant::now() + Duration::from_secs(30)).await });
        tokio::task::yield_now().await;
        let view = desk.view(0, 0);
        assert_eq!(view.messages[0].text, "SET?\r\n");
        assert!(view.waiting_until_unix_ms.is_some());
        assert_eq!(desk.send("a\nb"), Err(Refusal::MultiLine));
        assert_eq!(desk.send("  \n"), Err(Refusal::Empty));
        assert_eq!(
            desk.send("SET:1"),
            Err(Refusal::Illegal("\"SET:1\" has a digit".into()))
        );
        desk.send("SET:ABCD\r\n").unwrap();
        match asked.await.unwrap() {
            Answered::Reply(b, _) => assert_eq!(b, b"SET:ABCD"),
            other => panic!("{other:?}"),
        }
        assert_eq!(desk.view(1, 0).sent[0].text, "SET:ABCD");
        assert!(desk.view(1, 1).messages.is_empty() && desk.view(1, 1).sent.is_empty());
        let r = desk.answer(Instant::now() + Duration::from_secs(2)).await;
        assert_eq!(r, Answered::Timeout);
    }

    #[tokio::test(start_paused = true)]
    async fn a_person_who_closes_the_page_has_left_after_the_grace() {
        let desk = Desk::new("nac", 0, Help::default());
        let page = desk.open_page();
        drop(page);
        // Reopened within the grace: still there.
        tokio::time::advance(Duration::from_secs(5)).await;
        let again = desk.open_page();
        assert_eq!(desk.gone(), None);
        drop(again);
        let r = desk.answer(Instant::now() + Duration::from_secs(60)).await;
        match r {
            Answered::Gone(why) => assert!(why.contains("the person left"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(desk.tell(b"1 D\n").is_err());
        assert!(matches!(desk.send("1 2 3 4 5"), Err(Refusal::Over(_))));
    }
}
