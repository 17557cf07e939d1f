//! The pure side of the referee's Werewolf driver: a game's options ([`config`]), its replay
//! events, header and match report ([`record`]), and the seat record a `werewolf@1` replay
//! implies ([`v1`]). The driver keeps the seats, the clocks and the files.

pub mod config;
pub mod record;
pub mod v1;
