//! The natural-language division (aiwolf-nlp-server protocol): settings and configuration, the
//! packets, speech length rules, the game itself over any [`game::Table`], and built-in
//! natural-language agents. Pure: no sockets or clocks (group-chat timing is the table's).

pub mod bots;
pub mod bound;
pub mod config_file;
pub mod game;
pub mod inproc;
pub mod logs;
pub mod options;
pub mod packet;
pub mod record;
pub mod seats;
pub mod settings;
pub mod text;

use kakehiki_core::{Chance, Dynamics, GameType, Information, Transport};

/// The game's declaration: `werewolf-nlp`.
pub static WEREWOLF_NLP_TYPE: GameType = GameType {
    name: "werewolf-nlp",
    title: "Werewolf, natural-language division (aiwolf-nlp-server protocol over WebSocket)",
    min_seats: 3,
    max_seats: 30,
    default_seats: 5,
    dynamics: Dynamics::Mixed,
    information: Information::Imperfect,
    chance: Chance::Seeded,
    transports: &[Transport::Tcp],
    rule_sets: &["aiwolf-nlp"],
    builtin_bots: bots::NLP_BUILTIN_NAMES,
};

pub use bots::{nl_builtin, NlAgent, NLP_BUILTIN_NAMES};
pub use game::{AskError, ChatMessage, GameResult, NlpGame, Table};
pub use packet::{Packet, RequestKind};
pub use settings::{NlpConfig, NlpSettings};
