//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod build;
mod play;
