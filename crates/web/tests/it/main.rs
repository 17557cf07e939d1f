//! The crate's integration tests, one test program (one link, one process to list) with a
//! module per former `tests/*.rs` file.

mod browser;
mod scale;
mod view_nlp;
mod viewers;
mod web;
