//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod languages;
mod launch;
mod process;
mod sandbox_zoo;
