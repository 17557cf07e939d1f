//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod cpu_fairness;
mod diplomacy;
mod diplomacy_daide;
mod exhaust;
mod geister_seats;
mod geister_setup;
mod geister_tcp;
mod live;
mod nac_referee;
mod sandbox_match;
mod seat_layer;
mod support;
mod werewolf_nlp;
mod werewolf_tcp;
