//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod adding_a_game_doc;
mod adjudication_doc;
mod bot_mounts;
mod browser;
mod check_cli;
mod contest;
mod contest_file_doc;
mod contest_postgres;
mod demo;
mod diplomacy_adjudicate;
mod diplomacy_map;
mod diplomacy_strength;
mod docs_links;
mod example_game;
mod fd_budget;
mod first_contest;
mod host_faults;
mod human_seat;
mod kit_cli;
mod ladder_cli;
mod ladder_pages;
mod launch_lines;
mod play_cli;
mod serve_diplomacy_daide;
mod serve_geister_seed;
mod starters;
mod support;
mod view_cli;
mod werewolf_cli;
