//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod datc;
mod failures;
mod map;
mod next_phase;
mod parser;
mod properties;
mod service;
mod strength;
mod vectors;
