//! A match as it is played: its replay's lines, each published once it is final, for any number
//! of readers (the web servers' `.../events` streams, see `docs/live.md`).
//!
//! The referee's table publishes its replay's settled prefix (`Table` in the referee crate): a
//! line is final once nothing will change it, which for a seat's exchange is when the seat is
//! next asked (its stderr goes on its last exchange until then). Lines are kept once, as shared strings: a
//! reader holds a position, not a copy, so a match costs one buffered copy of its replay
//! whatever the number of readers. When the match is over the caller publishes the final replay
//! ([`LiveMatch::finish`]): the header again if the referee added its own facts to it (the
//! sandbox in force), then every line not yet published; once the result is stored it closes the
//! match ([`LiveMatch::close`]) and the readers end.
//!
//! Matches are found in one registry per process ([`registry`]), by contest and match index,
//! while they are played: the contest runner and the ladder's workers register the matches they
//! play and remove them once their results are stored; the web servers list and stream them. A
//! worker on another machine (a PostgreSQL contest) is not in it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::watch;

/// What a running match is, for the list of running matches.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LiveInfo {
    pub contest: String,
    pub index: u64,
    pub game: String,
    /// Entrant names in seat order.
    pub entrants: Vec<String>,
    /// When it started, in Unix milliseconds.
    pub started_unix_ms: u64,
}

/// One published line: its replay line number, the line, and whether the public may read it
/// before the match is over (its game's rule).
#[derive(Debug, Clone)]
struct Sent {
    id: usize,
    line: Arc<str>,
    public: bool,
}

#[derive(Debug, Default)]
struct State {
    /// Every line published, by replay line number (a header sent again replaces line 0 and is
    /// also appended to `sent` so that readers see it again).
    sent: Vec<Sent>,
    /// Lines of the replay published so far (`sent` minus the header's resend).
    lines: usize,
    finished: bool,
    closed: bool,
}

/// One match being played.
pub struct LiveMatch {
    pub info: LiveInfo,
    /// The game's rule of what the public may read during the match.
    public: fn(&str) -> bool,
    state: Mutex<State>,
    /// Bumped on every change; readers wait on it.
    version: watch::Sender<u64>,
}

impl std::fmt::Debug for LiveMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveMatch")
            .field("info", &self.info)
            .finish()
    }
}

impl LiveMatch {
    /// A match whose lines the public may read during the match as `public` says (its game's
    /// rule, `GameDriver::public_live` in the referee).
    pub fn new(info: LiveInfo, public: fn(&str) -> bool) -> Arc<LiveMatch> {
        Arc::new(LiveMatch {
            info,
            public,
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

    /// Publish the lines of `settled` (the replay's first lines, all final) not published yet.
    /// The game's rule is applied before the lock is taken: readers never wait on it (the table
    /// is the only writer, so what is new cannot change in between).
    pub fn extend(&self, settled: &[String]) {
        let from = {
            let st = self.state();
            if st.finished || settled.len() <= st.lines {
                return;
            }
            st.lines
        };
        let new: Vec<Sent> = settled[from..]
            .iter()
            .enumerate()
            .map(|(i, line)| Sent {
                id: from + i,
                public: (self.public)(line),
                line: Arc::from(line.as_str()),
            })
            .collect();
        let mut st = self.state();
        if st.finished || st.lines != from {
            return;
        }
        st.sent.extend(new);
        st.lines = settled.len();
        drop(st);
        self.bump();
    }

    /// The match is over and `replay` is its final replay: the header again if it changed (the
    /// referee's facts added at the end), then every line not yet published.
    pub fn finish(&self, replay: &[String]) {
        let mut st = self.state();
        if st.finished {
            return;
        }
        // The header as last sent, which the final one replaces if it differs.
        let header = st
            .sent
            .iter()
            .rev()
            .find(|s| s.id == 0)
            .map(|s| s.line.clone());
        if let (Some(first), Some(header)) = (replay.first(), header) {
            if **first != *header {
                st.sent.push(Sent {
                    id: 0,
                    line: Arc::from(first.as_str()),
                    public: true,
                });
            }
        }
        let from = st.lines;
        st.sent
            .extend(replay.iter().enumerate().skip(from).map(|(i, line)| Sent {
                id: i,
                line: Arc::from(line.as_str()),
                public: true,
            }));
        st.lines = st.lines.max(replay.len());
        st.finished = true;
        drop(st);
        self.bump();
    }

    /// The result is stored (or the match was abandoned): readers end once they have read
    /// everything published.
    pub fn close(&self) {
        let mut st = self.state();
        st.closed = true;
        drop(st);
        self.bump();
    }

    /// Whether the match is over (its final replay published).
    pub fn finished(&self) -> bool {
        self.state().finished
    }

    /// Lines of the replay published so far.
    pub fn published(&self) -> usize {
        self.state().lines
    }

    /// What a public reader has been sent so far, in replay order (the last of each line
    /// number): the replay so far without the lines held until the end, as the live page
    /// shows it.
    pub fn public_so_far(&self) -> Vec<Arc<str>> {
        let st = self.state();
        let mut by_id = BTreeMap::new();
        for s in &st.sent {
            if s.public || st.finished {
                by_id.insert(s.id, s.line.clone());
            }
        }
        by_id.into_values().collect()
    }

    /// A reader from the first line that gets every line as it is published, secrets included
    /// (the servers give everyone [`LiveMatch::public_reader`]; the referee's tests read all).
    pub fn reader(self: &Arc<Self>) -> LiveReader {
        LiveReader {
            live: self.clone(),
            next: 0,
            version: self.version.subscribe(),
            public_only: false,
            held: Vec::new(),
            skip: 0,
        }
    }

    /// A reader from the first line for the public: a line the game keeps secret during the
    /// match (a Werewolf role, a Geister colour, an order before its phase is adjudicated) is
    /// held and sent once the match is over, before the lines that follow.
    pub fn public_reader(self: &Arc<Self>) -> LiveReader {
        LiveReader {
            public_only: true,
            ..self.reader()
        }
    }

    /// [`LiveMatch::public_reader`] without the first `after` lines it would send (a page that
    /// already shows them: `public_so_far().len()` when it was made).
    pub fn public_reader_after(self: &Arc<Self>, after: usize) -> LiveReader {
        LiveReader {
            skip: after,
            ..self.public_reader()
        }
    }
}

impl LiveMatch {
    /// A public reader that lost its stream after the line numbered `last_id` (an
    /// `EventSource`'s `Last-Event-ID`): while the match is played, it goes on exactly where it
    /// was (the lines it was sent are the public ones published up to that line); once the match
    /// is over, or for a line it could not have been sent yet, it reads the match from its start
    /// again (the same lines with the same numbers).
    pub fn public_reader_resume(self: &Arc<Self>, last_id: usize) -> LiveReader {
        let mut reader = self.public_reader();
        let st = self.state();
        if st.finished {
            return reader;
        }
        let Some(at) = st.sent.iter().position(|s| s.id == last_id && s.public) else {
            return reader;
        };
        reader.held = st.sent[..=at]
            .iter()
            .filter(|s| !s.public)
            .map(|s| (s.id, s.line.clone()))
            .collect();
        reader.next = at + 1;
        reader
    }
}

/// A reader's position in a [`LiveMatch`].
pub struct LiveReader {
    live: Arc<LiveMatch>,
    /// Index in the published sequence.
    next: usize,
    version: watch::Receiver<u64>,
    /// Whether secret lines are held until the match is over ([`LiveMatch::public_reader`]).
    public_only: bool,
    /// The lines held so far.
    held: Vec<(usize, Arc<str>)>,
    /// Lines still to leave out ([`LiveMatch::public_reader_after`]).
    skip: usize,
}

/// What a reader gets next.
#[derive(Debug)]
pub enum LiveNext {
    /// Lines published since its last read: `(replay line number, line)`.
    Lines(Vec<(usize, Arc<str>)>),
    /// The match is over and everything has been read; `finished`: its final replay was
    /// published (otherwise it was abandoned: a host fault, a match taken away).
    End { finished: bool },
}

impl LiveReader {
    /// The lines published since the last call, waiting for some; [`LiveNext::End`] once the
    /// match is closed and everything was read.
    pub async fn next(&mut self) -> LiveNext {
        loop {
            {
                // Marked seen before reading, so a change after the read wakes the wait.
                self.version.borrow_and_update();
                let st = self.live.state();
                let mut got = Vec::new();
                if st.finished {
                    got.append(&mut self.held);
                }
                for s in &st.sent[self.next.min(st.sent.len())..] {
                    if s.public || st.finished || !self.public_only {
                        got.push((s.id, s.line.clone()));
                    } else {
                        self.held.push((s.id, s.line.clone()));
                    }
                }
                self.next = st.sent.len();
                let cut = self.skip.min(got.len());
                self.skip -= cut;
                got.drain(..cut);
                if !got.is_empty() {
                    return LiveNext::Lines(got);
                }
                if st.closed {
                    return LiveNext::End {
                        finished: st.finished,
                    };
                }
            }
            if self.version.changed().await.is_err() {
                return LiveNext::End { finished: false };
            }
        }
    }
}

/// The matches being played in this process.
#[derive(Debug, Default)]
pub struct Registry {
    matches: Mutex<BTreeMap<(String, u64), Arc<LiveMatch>>>,
}

impl Registry {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, u64), Arc<LiveMatch>>> {
        self.matches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Register a match about to start (replacing one of the same key: a match played again),
    /// `public` its game's rule of what the public may read during the match.
    pub fn start(
        &self,
        contest: &str,
        index: u64,
        game: &str,
        entrants: &[String],
        public: fn(&str) -> bool,
    ) -> Arc<LiveMatch> {
        let started_unix_ms = crate::unix_ms();
        let live = LiveMatch::new(
            LiveInfo {
                contest: contest.to_string(),
                index,
                game: game.to_string(),
                entrants: entrants.to_vec(),
                started_unix_ms,
            },
            public,
        );
        let mut map = self.map();
        if let Some(old) = map.insert((contest.to_string(), index), live.clone()) {
            old.close();
        }
        live
    }

    /// Close the match (its result is stored, or it was abandoned) and forget it: its readers
    /// finish with what they hold, and a reader that comes later reads the stored replay. A
    /// ladder playing a hundred matches a second keeps only the running ones in memory.
    pub fn end(&self, contest: &str, index: u64) {
        let ended = self.map().remove(&(contest.to_string(), index));
        if let Some(m) = ended {
            m.close();
        }
    }

    /// The match of `contest` numbered `index`, while it is listed.
    pub fn get(&self, contest: &str, index: u64) -> Option<Arc<LiveMatch>> {
        self.map().get(&(contest.to_string(), index)).cloned()
    }

    /// The matches of `contest` still being played, by index.
    pub fn running(&self, contest: &str) -> Vec<Arc<LiveMatch>> {
        self.map()
            .iter()
            .filter(|((c, _), m)| {
                let st = m.state();
                c == contest && !st.closed && !st.finished
            })
            .map(|(_, m)| m.clone())
            .collect()
    }
}

/// This process's registry of running matches.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Registry::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{{\"event\":\"e{i}\"}}")).collect()
    }

    #[tokio::test]
    async fn readers_get_each_line_once_in_order_and_a_late_reader_gets_what_it_missed() {
        let live = registry().start("c", 1, "nac", &["a".into()], |_| true);
        let mut early = live.reader();
        let all = lines(6);
        live.extend(&all[..2]);
        live.extend(&all[..2]);
        let LiveNext::Lines(got) = early.next().await else {
            panic!()
        };
        assert_eq!(got.len(), 2);
        live.extend(&all[..4]);
        let mut header = all.clone();
        header[0] = "{\"event\":\"e0\",\"sandbox\":\"best\"}".into();
        live.finish(&header);
        let mut late = live.reader();
        let LiveNext::Lines(rest) = early.next().await else {
            panic!()
        };
        // Lines 2 and 3, the header again, then 4 and 5.
        let ids: Vec<usize> = rest.iter().map(|(i, _)| *i).collect();
        assert_eq!(ids, [2, 3, 0, 4, 5]);
        let LiveNext::Lines(everything) = late.next().await else {
            panic!()
        };
        assert_eq!(everything.len(), 7);
        // Replayed by line number, the last of each wins: the final replay.
        let mut by_id = BTreeMap::new();
        for (i, l) in everything {
            by_id.insert(i, l.to_string());
        }
        assert_eq!(by_id.into_values().collect::<Vec<_>>(), header);
        assert!(registry().running("c").is_empty(), "finished: not running");
        registry().end("c", 1);
        assert!(matches!(
            early.next().await,
            LiveNext::End { finished: true }
        ));
        assert!(matches!(
            late.next().await,
            LiveNext::End { finished: true }
        ));
    }

    /// A public reader that reconnects with the number of the last line it was sent gets what
    /// an unbroken reader would have got next: the public lines after it, the held ones at the
    /// end; once the match is over, everything again with the same numbers.
    #[tokio::test]
    async fn a_reconnecting_reader_resumes_after_the_last_line_it_was_sent() {
        let secret = |l: &str| !l.contains("secret");
        let live = LiveMatch::new(
            LiveInfo {
                contest: "r".into(),
                index: 1,
                game: "geister".into(),
                entrants: vec![],
                started_unix_ms: 0,
            },
            secret,
        );
        let all: Vec<String> = ["h", "a", "secret b", "c", "d", "secret e", "f"]
            .iter()
            .map(|x| format!("{{\"event\":\"{x}\"}}"))
            .collect();
        live.extend(&all[..5]);
        let mut unbroken = live.public_reader();
        let LiveNext::Lines(first) = unbroken.next().await else {
            panic!()
        };
        assert_eq!(first.iter().map(|l| l.0).collect::<Vec<_>>(), [0, 1, 3, 4]);
        // Lost after line 3: it gets line 4, then what the unbroken one gets.
        let mut resumed = live.public_reader_resume(3);
        let LiveNext::Lines(next) = resumed.next().await else {
            panic!()
        };
        assert_eq!(next.iter().map(|l| l.0).collect::<Vec<_>>(), [4]);
        live.extend(&all);
        live.finish(&all);
        live.close();
        let (LiveNext::Lines(a), LiveNext::Lines(b)) =
            (unbroken.next().await, resumed.next().await)
        else {
            panic!()
        };
        assert_eq!(a, b);
        assert_eq!(a.iter().map(|l| l.0).collect::<Vec<_>>(), [2, 5, 6]);
        // A line it could not have been sent, or a match over: from the start again.
        let mut again = live.public_reader_resume(2);
        let LiveNext::Lines(whole) = again.next().await else {
            panic!()
        };
        assert_eq!(whole.len(), 7);
    }

    #[tokio::test]
    async fn a_waiting_reader_wakes_on_new_lines_and_on_close() {
        let live = registry().start("w", 1, "nac", &[], |_| true);
        let mut r = live.reader();
        let l2 = live.clone();
        let t = tokio::spawn(async move { r.next().await });
        tokio::task::yield_now().await;
        l2.extend(&lines(1));
        assert!(matches!(t.await.unwrap(), LiveNext::Lines(v) if v.len() == 1));
        let mut r = live.reader();
        let _ = r.next().await;
        let t = tokio::spawn(async move { r.next().await });
        tokio::task::yield_now().await;
        registry().end("w", 1);
        assert!(matches!(
            t.await.unwrap(),
            LiveNext::End { finished: false }
        ));
    }
}
