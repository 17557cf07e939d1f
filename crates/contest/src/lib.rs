//! Contests: definitions in TOML, formats and schedules, the runner (local, coordinator,
//! PostgreSQL workers), standings and ratings.
//!
//! * [`config`]: the contest file ([`ContestDef`]); malformed files are rejected with the line
//!   and the key.
//! * [`schedule()`]: a pure function from a definition (and, for staged formats, the results of
//!   finished stages) to the list of matches with their seeds.
//! * [`runner`]: plays the matches in parallel and stores each result with its replay; a run
//!   killed at any moment continues where it stopped.
//! * [`export`]: a stored contest's replays written out as files.
//! * [`standings`], [`ratings`], [`geister`]: points, Weng-Lin, Bradley-Terry with bootstrap
//!   intervals, the Geister league tie-breaks, Werewolf per role and team.
//!
//! Games are reached only through an [`Arena`], so every game registered with the referee
//! joins contests without changes here.

pub mod arena;
pub mod config;
pub mod export;
pub mod geister;
pub mod programs;
pub mod ratings;
#[cfg(feature = "referee")]
pub mod referee_arena;
pub mod runner;
pub mod schedule;
pub mod standings;

pub use arena::{Arena, MatchJob, PlayError, Played, PreflightProblem};
pub use config::{ConfigError, ContestDef, Entrant, Format, Scoring};
pub use export::{export_replays, ExportError};
#[cfg(feature = "referee")]
pub use referee_arena::RefereeArena;
pub use runner::{
    advance_stages, check_programs, coordinate, game_results, load_results, preflight, register,
    run_local, run_worker, store_files, stored_definition, Connect, Reconnecting, RunError,
    RunOptions, RunSummary, WorkerHooks, WorkerOptions, WorkerSummary,
};
pub use schedule::{schedule, GameResult, PlannedMatch, Schedule};
pub use standings::{compute as compute_standings, OutputFormat, Standings};
