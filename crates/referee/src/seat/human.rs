//! A seat played by a person (`human`): the transport is a [`Desk`] that the caller serves as a
//! page (`kakehiki play` does, see `docs/human.md`). The seat keeps the game's own limits.

use std::sync::Arc;
use std::time::Duration;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::human::{Answered, Desk};
use tokio::time::Instant;

use super::{Ending, Received, Seat, Transport};
use crate::driver::{BoxFuture, MatchSpec, RefereeError};

pub use kakehiki_core::human::{Help, ReplyCheck};

/// A person's seat.
pub struct HumanSeat {
    desk: Arc<Desk>,
}

impl HumanSeat {
    /// The seat of `desk`; `first` is a message the person is sent before the game's first
    /// request (the NAME a WebSocket agent is asked on connecting).
    pub fn new(desk: Arc<Desk>, first: Option<&[u8]>) -> HumanSeat {
        if let Some(first) = first {
            let _ = desk.tell(first);
        }
        HumanSeat { desk }
    }
}

/// The seat of a `human` seat spec: the match's desk for seat `i`, which its caller serves; a
/// match with no desk for it cannot be played (nobody would see the seat's page).
pub fn seat(spec: &MatchSpec, i: usize, first: Option<&[u8]>) -> Result<Seat, RefereeError> {
    transport(spec, i, first).map(|t| Seat::Live(Box::new(t)))
}

/// [`seat`]'s transport, for a game that speaks to it before it seats it (Werewolf's NAME).
pub fn transport(
    spec: &MatchSpec,
    i: usize,
    first: Option<&[u8]>,
) -> Result<HumanSeat, RefereeError> {
    match spec.desks.get(&i) {
        Some(desk) => Ok(HumanSeat::new(desk.clone(), first)),
        None => Err(RefereeError::UnsupportedSeat {
            game: spec.game.clone(),
            seat: i,
            form: "human".into(),
            reason: "a person plays a human seat from its page, which kakehiki play serves (it prints human seat N: http://...)".into(),
        }),
    }
}

impl Transport for HumanSeat {
    fn write<'a>(
        &'a mut self,
        bytes: &'a [u8],
        _deadline: Instant,
    ) -> BoxFuture<'a, Result<(), Received>> {
        let told = self.desk.tell(bytes);
        Box::pin(
            async move { told.map_err(|why| Received::failure(ExchangeOutcome::Disconnect, why)) },
        )
    }

    fn read(&mut self, deadline: Instant) -> BoxFuture<'_, Received> {
        Box::pin(async move {
            match self.desk.answer(deadline).await {
                Answered::Reply(bytes, at) => Received {
                    outcome: ExchangeOutcome::Reply,
                    bytes,
                    truncated: false,
                    at,
                    detail: None,
                },
                Answered::Timeout => Received {
                    outcome: ExchangeOutcome::Timeout,
                    bytes: Vec::new(),
                    truncated: false,
                    at: deadline,
                    detail: Some("the person sent no reply in time".into()),
                },
                Answered::Gone(why) => Received::failure(ExchangeOutcome::Disconnect, why),
            }
        })
    }

    fn failed(&self) -> Option<Received> {
        self.desk
            .gone()
            .map(|why| Received::failure(ExchangeOutcome::Disconnect, why))
    }

    fn messages(&self) -> bool {
        true
    }

    fn kill(&mut self) {
        self.desk.end("the referee stopped the seat");
    }

    fn finish(self: Box<Self>, _grace: Duration) -> BoxFuture<'static, Ending> {
        self.desk.end("the match is over");
        Box::pin(async { Ending::default() })
    }
}

/// What a game gives a person's desk: the check of a reply before it goes (Geister moves,
/// Negotiate and Conquer and Religion War targets, Diplomacy orders and their units; elsewhere
/// the reply goes as typed and the referee judges it as a bot's), and Diplomacy's legal orders
/// of each unit.
pub fn help_for(game: &str) -> Help {
    match game {
        "geister" => Help {
            check: Some(kakehiki_geister::wire::check_reply),
            choices: None,
        },
        "nac" | "religion-war" => Help {
            check: Some(kakehiki_nac::reply::check_reply),
            choices: None,
        },
        "diplomacy" => Help {
            check: Some(kakehiki_diplomacy::person::check_reply),
            choices: Some(kakehiki_diplomacy::person::choices),
        },
        _ => Help::default(),
    }
}
