//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod hiding;
mod nlp;
mod rules;
mod strength;
mod wire_golden;
