//! Store overhead per stored match (result plus replay) on SQLite.
fn main() {}
