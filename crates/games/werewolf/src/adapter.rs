//! [`kakehiki_core::Game`] for Werewolf: broadcasts are acknowledged inside the step, every
//! reply-expecting request is one step of one seat (seat = agent number − 1).

use kakehiki_core::{Game, Outcome, Score};

use crate::engine::{Pending, Reply, Werewolf};
use crate::info::GameInfo;
use crate::types::Request;
use crate::wire::write_game_info;

/// What a seat sees when it must act: the request and its gameInfo, encoded as on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    pub request: Option<Request>,
    /// The seat's `gameInfo` JSON (filtered by [`GameInfo::for_agent`]).
    pub game_info: String,
}

/// A [`Werewolf`] driven through the generic step interface.
pub struct InProcess(pub Werewolf);

impl InProcess {
    /// Wrap a game and acknowledge any leading broadcasts.
    pub fn new(game: Werewolf) -> Self {
        let mut g = InProcess(game);
        g.skip_broadcasts();
        g
    }

    fn skip_broadcasts(&mut self) {
        while let Pending::Notify(_) = self.0.pending() {
            if self.0.ack().is_err() {
                break;
            }
        }
    }
}

impl Game for InProcess {
    type Action = Reply;
    type Observation = Observation;

    fn num_seats(&self) -> usize {
        self.0.player_num()
    }

    fn to_act(&self) -> Vec<usize> {
        match self.0.pending() {
            Pending::Ask { agent, .. } => vec![agent - 1],
            _ => Vec::new(),
        }
    }

    fn observe(&self, seat: usize) -> Observation {
        let request = match self.0.pending() {
            Pending::Ask { agent, request } if agent == seat + 1 => Some(request),
            _ => None,
        };
        let mut game_info = String::new();
        write_game_info(
            &mut game_info,
            &GameInfo::for_agent(&self.0, seat + 1, self.0.is_over()),
        );
        Observation { request, game_info }
    }

    fn apply(&mut self, actions: &[Option<Reply>]) {
        if let Pending::Ask { .. } = self.0.pending() {
            let reply = actions.first().cloned().flatten().unwrap_or(Reply::Silent);
            let _ = self.0.reply(reply);
        }
        self.skip_broadcasts();
    }

    fn outcome(&self) -> Option<Outcome> {
        let winner = self.0.winner().filter(|_| self.0.is_over())?;
        let scores = self
            .0
            .roles()
            .iter()
            .map(|r| Score::from_integer(i64::from(r.team() == winner)))
            .collect();
        Some(Outcome {
            scores,
            winner: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use kakehiki_core::game::play_out;
    use kakehiki_core::Bot;

    struct Silent;
    impl Bot<InProcess> for Silent {
        fn act(&mut self, _seat: usize, o: &Observation) -> Reply {
            assert!(o.request.is_some());
            let v: serde_json::Value = serde_json::from_str(&o.game_info).unwrap();
            assert_eq!(v.as_object().unwrap().len(), 21);
            Reply::Silent
        }
    }

    #[test]
    fn plays_out_through_the_generic_interface() {
        let names = (1..=5).map(|i| i.to_string()).collect();
        let mut g = InProcess::new(Werewolf::new(Settings::aiwolf(5).unwrap(), 4, names).unwrap());
        let mut bots: Vec<Box<dyn Bot<InProcess>>> = (0..5)
            .map(|_| Box::new(Silent) as Box<dyn Bot<InProcess>>)
            .collect();
        let o = play_out(&mut g, &mut bots);
        assert_eq!(o.scores.len(), 5);
        let winners = o
            .scores
            .iter()
            .filter(|s| **s == Score::from_integer(1))
            .count();
        assert!((1..5).contains(&winners));
        assert!(g.to_act().is_empty());
    }
}
