//! Untrusted bot processes.
//!
//! A [`BotProcess`] is a contestant's program speaking a line protocol on stdin/stdout. It runs
//! without a shell, in its own process group, with a scrubbed environment, in its own temporary
//! working directory and under rlimits ([`SandboxConfig`]). Its stdout is read by a background task
//! into lines (each capped), its stderr is drained concurrently into a capped buffer (and, for
//! taking piece by piece, a [`StderrConsole`] within the same cap), and its total output is
//! capped. Every read has a deadline and yields exactly one typed [`ReadOutcome`]. On
//! timeout, crash or drop the whole process group is killed with SIGKILL.
//!
//! A [`ClientProcess`] is a program the referee launches but does not talk to over pipes (a TCP
//! client started by `tcp-cmd:`): same sandbox, output drained and capped, killed with its group.
//!
//! See `docs/referee.md` for the design.

pub mod activity;
mod connect_watch;
pub mod jail;
mod process;
mod sandbox;

pub use connect_watch::{Refused, RefusedConnects};
pub use jail::{
    parse_cpus, CpuReport, DeniedPath, JailConfig, Layer, SandboxLevel, SandboxReport, JAIL_PATH,
};
pub use process::{
    check_mounts, BotProcess, ClientProcess, ExitInfo, Line, NewStderr, ReadOutcome, SeatPort,
    SpawnError, StderrConsole, KEPT_BLOCK, MAX_KEPT_ENTRIES,
};
pub use sandbox::{ResourceLimits, SandboxConfig};
