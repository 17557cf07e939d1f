//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod common;
mod hiding;
mod in_process;
mod invariants;
mod scoring;
mod strength;
mod worked_example;
