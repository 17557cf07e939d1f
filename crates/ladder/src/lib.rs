//! The hosted ladder's logic, without web code: the ladder file ([`LadderConfig`]), upload
//! intake ([`intake`]) and bot builds in the sandbox ([`build`]). See `docs/ladder.md`.

pub mod build;
pub mod config;
pub mod intake;

pub use config::{
    default_recipe, LadderConfig, LadderConfigError, Limits, Recipe, DEFAULT_LANGUAGES,
};
