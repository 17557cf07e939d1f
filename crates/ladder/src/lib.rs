//! The hosted ladder's logic, without web code: the ladder file ([`LadderConfig`]), upload
//! intake ([`intake`]), bot builds in the sandbox ([`build`]) and accounts ([`accounts`]:
//! invitations, token and password hashing) and a ladder's state from its store ([`status`]).
//! See `docs/ladder.md`.

pub mod accounts;
pub mod build;
pub mod config;
pub mod final_contest;
pub mod intake;
pub mod matchmaking;
pub mod pipeline;
pub mod play;
pub mod program;
pub mod status;

pub use config::{
    default_recipe, LadderConfig, LadderConfigError, Limits, Recipe, DEFAULT_LANGUAGES,
};
