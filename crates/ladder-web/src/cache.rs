//! What the public pages show, kept in memory and current by the rating updates
//! (docs/design-ladder-cache.md): the leaderboard (every active entrant, ranked) and, for the
//! bots whose pages were asked for, their newest matches. A request reads them under a lock and
//! queries nothing; a refresher thread reads what the ratings moved by, when the server's
//! matchmaker says it rated ([`Cache::notify`]) and at least once a second (another server's
//! matchmaker, an entrant that joined or left).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::time::Duration;

use axum::body::Bytes;
use kakehiki_store::{LadderRating, LadderSeat, Store, StoreError};

use crate::pool::StorePool;

/// The matches of a bot kept: a bot's page shows this many.
pub const BOT_MATCHES: usize = 50;

/// Bots whose matches are kept at most; past it, the least recently asked for go.
const MAX_BOTS: usize = 10_000;

/// Newly rated seats read at once at most; more (a long pause), and the kept matches of every
/// bot are dropped and read again when asked for.
const MAX_NEW_SEATS: usize = 100_000;

/// The longest the cache goes without looking at the store.
pub const REFRESH_EVERY: Duration = Duration::from_secs(1);

/// The leaderboard as of one rated count.
#[derive(Debug, Default)]
pub struct Board {
    /// The ladder's rated count when it was read.
    pub seq: u64,
    /// Whether the ladder was frozen then (no match is queued until it reopens).
    pub frozen: bool,
    /// Every active entrant, best first (the order of `LadderPlay::ladder_ratings`).
    pub rows: Vec<LadderRating>,
    /// Each bot's position in `rows`.
    by_bot: HashMap<String, usize>,
    /// Pages of this board already rendered for anyone (no visitor's name in them), by what
    /// and which page: made once per board, at most [`MAX_RENDERED`].
    rendered: Mutex<HashMap<(Rendered, u64, u64), Bytes>>,
}

/// What a kept rendering of a board is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rendered {
    /// The leaderboard page, for a visitor not signed in.
    Html,
    /// The leaderboard API's JSON.
    Json,
}

/// Renderings of one board kept at most (pages asked for with odd sizes are made each time).
const MAX_RENDERED: usize = 32;

impl Board {
    fn new(seq: u64, frozen: bool, rows: Vec<LadderRating>) -> Board {
        let mut by_bot = HashMap::with_capacity(rows.len());
        for (i, r) in rows.iter().enumerate() {
            by_bot.entry(r.bot.clone()).or_insert(i);
        }
        Board {
            seq,
            frozen,
            rows,
            by_bot,
            rendered: Mutex::new(HashMap::new()),
        }
    }

    /// Page `page` of `per` rows of this board as `kind`, made by `make` the first time.
    pub fn rendered(
        &self,
        kind: Rendered,
        page: u64,
        per: u64,
        make: impl FnOnce() -> String,
    ) -> Bytes {
        let key = (kind, page, per);
        if let Some(r) = self
            .rendered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return r.clone();
        }
        let r = Bytes::from(make());
        let mut kept = self.rendered.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < MAX_RENDERED {
            kept.insert(key, r.clone());
        }
        r
    }

    /// A bot's rank (1 is best) and rating, if it is active.
    pub fn bot(&self, bot: &str) -> Option<(usize, &LadderRating)> {
        self.by_bot.get(bot).map(|&i| (i + 1, &self.rows[i]))
    }

    /// Rows `first..first + len` and how many there are.
    pub fn page(&self, first: u64, len: u64) -> (&[LadderRating], u64) {
        let n = self.rows.len();
        let a = usize::try_from(first).unwrap_or(usize::MAX).min(n);
        let b = a
            .saturating_add(usize::try_from(len).unwrap_or(usize::MAX))
            .min(n);
        (&self.rows[a..b], n as u64)
    }
}

/// A bot's newest matches: every seat of each, newest match first, seats in order.
#[derive(Debug, Clone, Default)]
struct BotTables {
    seats: Vec<LadderSeat>,
    /// When it was last asked for (a counter), for eviction.
    used: u64,
}

impl BotTables {
    /// The match indices held, newest first.
    fn indices(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.seats.iter().map(|s| s.index).collect();
        v.dedup();
        v
    }

    /// Add `table` (one match's seats), keeping the newest [`BOT_MATCHES`] by index; a match
    /// already held is left as it is.
    fn add(&mut self, table: &[LadderSeat]) {
        let Some(index) = table.first().map(|s| s.index) else {
            return;
        };
        if self.seats.iter().any(|s| s.index == index) {
            return;
        }
        let indices = self.indices();
        if indices.len() >= BOT_MATCHES && indices.last().is_some_and(|&last| index < last) {
            return;
        }
        let at = self
            .seats
            .iter()
            .position(|s| s.index < index)
            .unwrap_or(self.seats.len());
        self.seats.splice(at..at, table.iter().cloned());
        let keep: HashSet<u64> = self.indices().into_iter().take(BOT_MATCHES).collect();
        self.seats.retain(|s| keep.contains(&s.index));
    }
}

#[derive(Default)]
struct Bots {
    /// Seats of results rated up to this count are in every kept bot's matches.
    seq: u64,
    map: HashMap<String, BotTables>,
    clock: u64,
}

/// The pages' memory of one ladder.
pub struct Cache {
    ladder: String,
    board: RwLock<Option<Arc<Board>>>,
    bots: Mutex<Bots>,
    /// Set by [`Cache::notify`], waited on by the refresher.
    wake: (Mutex<bool>, Condvar),
}

impl Cache {
    pub fn new(ladder: &str) -> Cache {
        Cache {
            ladder: ladder.to_string(),
            board: RwLock::new(None),
            bots: Mutex::new(Bots::default()),
            wake: (Mutex::new(false), Condvar::new()),
        }
    }

    /// The ratings moved (the server's matchmaker rated results, or entrants joined or left):
    /// the refresher reads them now rather than within a second.
    pub fn notify(&self) {
        let (flag, cv) = &self.wake;
        *flag.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_one();
    }

    /// Start the thread that keeps `cache` current from `pool`'s store; it ends when the cache
    /// is dropped.
    pub fn start_refresher(cache: &Arc<Cache>, pool: &Arc<StorePool>) {
        let (cache, pool): (Weak<Cache>, Weak<StorePool>) =
            (Arc::downgrade(cache), Arc::downgrade(pool));
        let spawned = std::thread::Builder::new()
            .name("ladder-page-cache".into())
            .spawn(move || loop {
                let Some(c) = cache.upgrade() else { return };
                {
                    let (flag, cv) = &c.wake;
                    let guard = flag.lock().unwrap_or_else(|e| e.into_inner());
                    let (mut guard, _) = cv
                        .wait_timeout_while(guard, REFRESH_EVERY, |woken| !*woken)
                        .unwrap_or_else(|e| e.into_inner());
                    *guard = false;
                }
                let Some(p) = pool.upgrade() else { return };
                let mut store = p.get();
                if let Err(e) = c.refresh(store.as_mut()) {
                    tracing::warn!(
                        "ladder {}: the pages' cache was not refreshed: {e}",
                        c.ladder
                    );
                }
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the pages' cache refresher: {e}");
        }
    }

    /// Read what changed: the leaderboard again when the rated count moved or a second passed,
    /// and the seats rated since into every kept bot's matches.
    pub fn refresh(&self, store: &mut dyn Store) -> Result<(), StoreError> {
        let board = self.read_board(store)?;
        let seq = board.seq;
        let (from, none_kept) = {
            let bots = self.bots.lock().unwrap_or_else(|e| e.into_inner());
            (bots.seq, bots.map.is_empty())
        };
        let new = if seq > from && !none_kept {
            Some(store.ladder_seats_rated(&self.ladder, from, seq)?)
        } else {
            None
        };
        {
            let mut bots = self.bots.lock().unwrap_or_else(|e| e.into_inner());
            if bots.seq == from {
                match new {
                    Some(seats) if seats.len() <= MAX_NEW_SEATS => {
                        for table in seats.chunk_by(|a, b| a.index == b.index) {
                            let mut seen = HashSet::new();
                            for s in table {
                                if seen.insert(s.bot.as_str()) {
                                    if let Some(t) = bots.map.get_mut(&s.bot) {
                                        t.add(table);
                                    }
                                }
                            }
                        }
                    }
                    Some(_) => bots.map.clear(),
                    None => {}
                }
                bots.seq = bots.seq.max(seq);
            } else {
                // Another refresh ran meanwhile (it cannot: one refresher), or the kept
                // matches were dropped: start again from nothing kept.
                bots.map.clear();
                bots.seq = seq;
            }
        }
        *self.board.write().unwrap_or_else(|e| e.into_inner()) = Some(board);
        Ok(())
    }

    /// The leaderboard, read from `store` the first time.
    pub fn board(&self, store: &mut dyn Store) -> Result<Arc<Board>, StoreError> {
        if let Some(b) = self
            .board
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return Ok(b.clone());
        }
        let board = self.read_board(store)?;
        let mut slot = self.board.write().unwrap_or_else(|e| e.into_inner());
        Ok(slot.get_or_insert(board).clone())
    }

    /// The board as the store has it now.
    fn read_board(&self, store: &mut dyn Store) -> Result<Arc<Board>, StoreError> {
        let state = store.ladder_state(&self.ladder)?;
        let rows = store.ladder_ratings(&self.ladder, true)?;
        Ok(Arc::new(Board::new(state.rated_seq, state.frozen, rows)))
    }

    /// The seats of `bot`'s newest `limit` matches (at most [`BOT_MATCHES`]), newest first,
    /// as `LadderPlay::ladder_bot_tables` gives them: kept from the first time they are asked
    /// for, read from `store` then.
    pub fn bot_tables(
        &self,
        store: &mut dyn Store,
        bot: &str,
        limit: usize,
    ) -> Result<Vec<LadderSeat>, StoreError> {
        let limit = limit.min(BOT_MATCHES);
        let take = |t: &BotTables| -> Vec<LadderSeat> {
            let keep: HashSet<u64> = t.indices().into_iter().take(limit).collect();
            t.seats
                .iter()
                .filter(|s| keep.contains(&s.index))
                .cloned()
                .collect()
        };
        let seq = {
            let mut bots = self.bots.lock().unwrap_or_else(|e| e.into_inner());
            bots.clock += 1;
            let now = bots.clock;
            if let Some(t) = bots.map.get_mut(bot) {
                t.used = now;
                return Ok(take(t));
            }
            bots.seq
        };
        // Read with the lock released; kept only if no refresh moved the kept seats meanwhile
        // (the seats it added would be missing from this read's).
        let seats = store.ladder_bot_tables(&self.ladder, bot, None, BOT_MATCHES)?;
        let t = BotTables { seats, used: 0 };
        let out = take(&t);
        let mut bots = self.bots.lock().unwrap_or_else(|e| e.into_inner());
        // A name without matches is not kept: strangers asking for made-up names fill nothing.
        if bots.seq == seq && !t.seats.is_empty() {
            if bots.map.len() >= MAX_BOTS {
                evict(&mut bots.map);
            }
            bots.clock += 1;
            let now = bots.clock;
            bots.map
                .insert(bot.to_string(), BotTables { used: now, ..t });
        }
        Ok(out)
    }
}

/// Drop the least recently asked-for half of `map`.
fn evict(map: &mut HashMap<String, BotTables>) {
    let mut used: Vec<u64> = map.values().map(|t| t.used).collect();
    used.sort_unstable();
    let cut = used[used.len() / 2];
    map.retain(|_, t| t.used > cut);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seat(index: u64, seat: usize, bot: &str) -> LadderSeat {
        LadderSeat {
            index,
            seat,
            entrant: format!("{bot}@v1"),
            bot: bot.into(),
            version: 1,
            score: 1.0,
            place: 1,
            errors: 0,
            mu_after: 25.0,
            sigma_after: 8.0,
            played_at: 0,
        }
    }

    fn table(index: u64) -> Vec<LadderSeat> {
        vec![seat(index, 0, "a"), seat(index, 1, "b")]
    }

    #[test]
    fn matches_are_kept_newest_first_at_most_the_page_and_once() {
        let mut t = BotTables::default();
        for i in [3, 1, 2, 3] {
            t.add(&table(i));
        }
        assert_eq!(t.indices(), [3, 2, 1]);
        assert_eq!(t.seats.len(), 6);
        for i in 10..(10 + BOT_MATCHES as u64) {
            t.add(&table(i));
        }
        let kept = t.indices();
        assert_eq!(kept.len(), BOT_MATCHES);
        assert_eq!(kept[0], 9 + BOT_MATCHES as u64);
        assert_eq!(*kept.last().unwrap(), 10);
        // Older than every kept match: not kept.
        t.add(&table(5));
        assert_eq!(t.indices(), kept);
    }

    #[test]
    fn a_board_pages_and_ranks() {
        let r = |bot: &str| LadderRating {
            entrant: format!("{bot}@v1"),
            bot: bot.into(),
            version: 1,
            owner: bot.into(),
            active: true,
            mu: 25.0,
            sigma: 1.0,
            games: 0,
            wins: 0,
            errors: 0,
            last_played: None,
        };
        let b = Board::new(7, false, vec![r("x"), r("y"), r("z")]);
        assert_eq!(
            b.bot("y").map(|(rank, r)| (rank, r.bot.as_str())),
            Some((2, "y"))
        );
        assert!(b.bot("w").is_none());
        let (rows, total) = b.page(1, 5);
        assert_eq!((rows.len(), total), (2, 3));
        assert_eq!(b.page(9, 5).0.len(), 0);
        // A rendering is made once per board and page.
        let made = std::cell::Cell::new(0);
        for _ in 0..3 {
            let r = b.rendered(Rendered::Html, 1, 100, || {
                made.set(made.get() + 1);
                "page".into()
            });
            assert_eq!(&r[..], b"page");
        }
        b.rendered(Rendered::Json, 1, 100, || {
            made.set(made.get() + 1);
            "{}".into()
        });
        assert_eq!(made.get(), 2);
    }

    #[test]
    fn eviction_keeps_the_most_recently_asked_for_half() {
        let mut map: HashMap<String, BotTables> = (0..10)
            .map(|i| {
                (
                    i.to_string(),
                    BotTables {
                        seats: Vec::new(),
                        used: i,
                    },
                )
            })
            .collect();
        evict(&mut map);
        let mut left: Vec<u64> = map.values().map(|t| t.used).collect();
        left.sort();
        assert_eq!(left, [6, 7, 8, 9]);
    }
}
