//! The bot checker's integration tests: one program (`cargo test -p kakehiki-check --test it`).

mod zoo;
