//! The [`Arena`] of the real games: the referee's registry. Every game registered there joins
//! contests without changes here.

use std::cell::RefCell;
use std::time::Duration;

use kakehiki_core::GameType;
use kakehiki_referee::{find_game, MatchSpec};

use crate::arena::{Arena, MatchJob, Played};

/// Plays matches with the referee's drivers, each worker thread on its own single-threaded
/// async runtime (so `jobs` threads use `jobs` cores).
#[derive(Debug, Clone, Copy, Default)]
pub struct RefereeArena;

thread_local! {
    static RUNTIME: RefCell<Option<tokio::runtime::Runtime>> = const { RefCell::new(None) };
}

impl Arena for RefereeArena {
    fn game_type(&self, game: &str) -> Result<&'static GameType, String> {
        find_game(game)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    }

    fn play(&self, job: &MatchJob) -> Result<Played, String> {
        let driver = find_game(&job.game).map_err(|e| e.to_string())?;
        let mut spec = MatchSpec::new(&job.game, job.seed, job.seats.clone());
        spec.rules = job.rules.clone();
        spec.options = job.options.clone();
        apply_sandbox(&mut spec, job)?;
        RUNTIME.with(|cell| {
            let mut slot = cell.borrow_mut();
            if slot.is_none() {
                let rt = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| format!("cannot start the async runtime: {e}"))?;
                *slot = Some(rt);
            }
            let Some(rt) = slot.as_ref() else {
                return Err("cannot start the async runtime".to_string());
            };
            let mut record = rt.block_on(async {
                if job.timeout_s == 0 {
                    driver.play(&spec).await.map_err(|e| e.to_string())
                } else {
                    match tokio::time::timeout(
                        Duration::from_secs(job.timeout_s),
                        driver.play(&spec),
                    )
                    .await
                    {
                        Ok(r) => r.map_err(|e| e.to_string()),
                        Err(_) => Err(format!(
                            "the match exceeded its time limit of {} s (match_timeout_s)",
                            job.timeout_s
                        )),
                    }
                }
            })?;
            record.stamp_sandbox(&spec);
            Ok(Played {
                report: record.report,
                replay: record.replay.to_text(),
            })
        })
    }
}

/// The sandbox a contest's match runs its bots in: the contest's level, each seat's folder
/// (relative to the directory the run was started in) and environment variables.
fn apply_sandbox(spec: &mut MatchSpec, job: &MatchJob) -> Result<(), String> {
    let sandbox = &mut spec.sandbox;
    if let Some(level) = &job.sandbox {
        sandbox.jail.level = level.parse()?;
    }
    let cwd =
        std::env::current_dir().map_err(|e| format!("cannot read the current directory: {e}"))?;
    for (seat, dir) in job.seat_dirs.iter().enumerate() {
        if let Some(dir) = dir {
            let path = cwd.join(dir);
            if !path.is_dir() {
                return Err(format!(
                    "seat {seat}'s folder {} is not a directory",
                    path.display()
                ));
            }
            sandbox.jail.seat_dirs.insert(seat, path);
        }
    }
    for (seat, vars) in job.seat_env.iter().enumerate() {
        if !vars.is_empty() {
            sandbox.jail.seat_env.insert(seat, vars.clone());
        }
    }
    Ok(())
}
