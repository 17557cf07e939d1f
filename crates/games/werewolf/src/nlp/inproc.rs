//! Playing with built-in agents in process: a [`Table`] of [`NlAgent`]s and a minimal executor
//! for games whose seats never wait (every future here is ready at once).

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use super::bots::{nl_builtin, NlAgent};
use super::game::{AskError, ChatMessage, GameResult, NlpGame, Table};
use super::packet::{Packet, RequestKind, OVER};
use super::seats::{ChatTurns, CHAT_ROUNDS};
use super::settings::NlpSettings;

/// Drive a future whose awaits never block (in-process tables) to completion.
pub fn block_on_ready<F: Future>(f: F) -> F::Output {
    let waker = Waker::noop();
    let mut cx = Context::from_waker(waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// Seats that are all built-in agents.
pub struct BotTable {
    pub bots: Vec<Box<dyn NlAgent>>,
}

impl BotTable {
    /// `names[i]` is the built-in name of seat `i`. `None` if a name is unknown.
    pub fn new(names: &[&str], seed: u64) -> Option<BotTable> {
        let bots = names
            .iter()
            .enumerate()
            .map(|(i, n)| nl_builtin(n, seed, i))
            .collect::<Option<Vec<_>>>()?;
        Some(BotTable { bots })
    }
}

/// Group chat with built-in agents: each open agent in turn is asked as for a TALK (the last
/// broadcast packets give it the news) until all said Over or ran out; bounded by `rounds`.
pub fn bot_chat(
    bots: &mut [Box<dyn NlAgent>],
    open: Vec<usize>,
    rounds: usize,
    accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
) {
    let mut turns = ChatTurns::new(open, rounds);
    while let Some(a) = turns.turn() {
        let prompt = Packet::bare(RequestKind::Talk);
        let text = bots[a].answer(&prompt).unwrap_or_else(|| OVER.into());
        turns.said(a, &text);
        // Built-in agents in process take no time: the table's clock stays at 0.
        let m = ChatMessage {
            agent: a,
            text,
            elapsed_ms: 0,
        };
        for (b, p) in accept(m) {
            bots[b].answer(&p);
        }
    }
}

impl Table for BotTable {
    async fn notify(&mut self, agent: usize, packet: Packet) -> Result<(), ()> {
        self.bots[agent].answer(&packet);
        Ok(())
    }

    async fn ask(&mut self, agent: usize, packet: Packet) -> Result<String, AskError> {
        self.bots[agent].answer(&packet).ok_or(AskError::Failed)
    }

    async fn chat(
        &mut self,
        open: Vec<usize>,
        _duration_ms: u64,
        accept: &mut (dyn FnMut(ChatMessage) -> Vec<(usize, Packet)> + Send),
    ) {
        bot_chat(&mut self.bots, open, CHAT_ROUNDS, accept);
    }
}

/// Play one game of built-in agents in process.
pub fn play_builtin(
    settings: Arc<NlpSettings>,
    seed: u64,
    names: &[&str],
) -> Option<(GameResult, NlpGame)> {
    let mut table = BotTable::new(names, seed)?;
    let originals = names.iter().map(|n| n.to_string()).collect();
    let mut game = NlpGame::new(settings, seed, originals);
    let r = block_on_ready(game.run(&mut table));
    Some((r, game))
}
