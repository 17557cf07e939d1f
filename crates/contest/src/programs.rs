//! The program files of process entrants: checked before a contest is registered (a typo fails
//! the run at once instead of forfeiting every match) and fingerprinted (a bot changed under the
//! same command line is noticed instead of mixed into one contest).
//!
//! A command line's program files are its program, when named by a path (`./bot`,
//! `bots/a.out`; an interpreter found on `PATH` such as `python3` is the machine's, not the
//! entrant's), and every later argument that names an existing regular file (`bots/a.py`,
//! `bot.jar`). Paths are resolved against the runner's directory, as the sandbox does.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use kakehiki_core::SeatSpec;
use kakehiki_store::ProgramFile;
use sha2::{Digest, Sha256};

use crate::config::ContestDef;

/// File name endings that name a program or script: an argument ending in one of them that
/// names no file is reported as a missing file, not passed on silently.
const SCRIPT_ENDINGS: &[&str] = &[
    ".py", ".js", ".mjs", ".cjs", ".rb", ".pl", ".php", ".jar", ".sh", ".lua", ".class", ".exe",
];

fn absolute(arg: &str) -> PathBuf {
    let p = Path::new(arg);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(p))
            .unwrap_or_else(|_| p.to_path_buf())
    }
}

fn is_executable(path: &Path) -> bool {
    path.metadata()
        .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        .unwrap_or(false)
}

/// The file `PATH` lookup would run for `program`, if any.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| is_executable(p))
}

/// The command line of a process seat, if it has one.
pub fn command_line(seat: &SeatSpec) -> Option<&[String]> {
    match seat {
        SeatSpec::Cmd(argv) | SeatSpec::TcpCmd(argv) | SeatSpec::Daide(Some(argv)) => Some(argv),
        SeatSpec::Builtin(_) | SeatSpec::Tcp | SeatSpec::Daide(None) | SeatSpec::Human => None,
    }
}

/// What is wrong with a command line before it is started: a program that is not there or not
/// executable, a script argument naming no file. `None` when nothing is visibly wrong.
pub fn check_command(argv: &[String]) -> Option<String> {
    let program = argv.first()?;
    if program.contains('/') {
        let path = absolute(program);
        if !path.exists() {
            return Some(format!(
                "program {program:?} does not exist ({})",
                path.display()
            ));
        }
        if !is_executable(&path) {
            return Some(format!(
                "program {program:?} is not an executable file (chmod +x {program}?)"
            ));
        }
    } else if on_path(program).is_none() {
        return Some(format!(
            "program {program:?} is not found on PATH (a typo, or not installed on this machine?)"
        ));
    }
    for arg in &argv[1..] {
        // Options, placeholders and inline scripts (`sh -c 'sleep 1; exec ./bot.py'`) are not
        // file names.
        if arg.starts_with('-') || arg.contains('{') || arg.contains(char::is_whitespace) {
            continue;
        }
        if SCRIPT_ENDINGS.iter().any(|e| arg.ends_with(e)) && !absolute(arg).is_file() {
            return Some(format!(
                "file {arg:?} does not exist ({})",
                absolute(arg).display()
            ));
        }
    }
    None
}

/// The program files of a command line, as absolute paths.
pub fn program_paths(argv: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (i, arg) in argv.iter().enumerate() {
        if arg.is_empty() || (i == 0 && !arg.contains('/')) {
            continue;
        }
        let path = absolute(arg);
        if path.is_file() && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// SHA-256 of a file's content, in hex.
pub fn file_sha256(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    Ok(Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// The program files of every process entrant of `def` with their hashes, ordered. Files that
/// cannot be read are left out (the pre-flight check reports them).
pub fn program_files(def: &ContestDef) -> Vec<ProgramFile> {
    let mut out = Vec::new();
    for e in &def.entrants {
        let Some(argv) = command_line(&e.seat) else {
            continue;
        };
        for path in program_paths(argv) {
            if let Ok(sha256) = file_sha256(&path) {
                out.push(ProgramFile {
                    entrant: e.name.clone(),
                    path: path.display().to_string(),
                    sha256,
                });
            }
        }
    }
    out.sort();
    out
}

/// Program files whose content differs from the recorded one, as messages.
pub fn changed_programs(recorded: &[ProgramFile], now: &[ProgramFile]) -> Vec<String> {
    let mut changes = Vec::new();
    for r in recorded {
        match now
            .iter()
            .find(|n| n.entrant == r.entrant && n.path == r.path)
        {
            Some(n) if n.sha256 != r.sha256 => changes.push(format!(
                "entrant {:?}: {} changed (sha256 {} when the contest started, {} now)",
                r.entrant,
                r.path,
                &r.sha256[..r.sha256.len().min(12)],
                &n.sha256[..n.sha256.len().min(12)]
            )),
            Some(_) => {}
            None => {
                // Gone or unreadable: only a change if the command line still names it.
                if Path::new(&r.path).exists() {
                    continue;
                }
                changes.push(format!(
                    "entrant {:?}: {} is gone (it was there when the contest started)",
                    r.entrant, r.path
                ));
            }
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn missing_programs_and_scripts_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("bot.py");
        std::fs::write(&script, "print('READY')\n").unwrap();
        let script = script.display().to_string();
        assert_eq!(check_command(&argv(&["sh", &script])), None);
        let msg = check_command(&argv(&["pyhton3-no-such", &script])).unwrap();
        assert!(
            msg.contains("\"pyhton3-no-such\" is not found on PATH"),
            "{msg}"
        );
        let typo = format!("{script}x.py");
        let msg = check_command(&argv(&["sh", &typo])).unwrap();
        assert!(msg.contains("does not exist"), "{msg}");
        let msg = check_command(&argv(&["/no/such/bot"])).unwrap();
        assert!(msg.contains("does not exist"), "{msg}");
        // Not executable.
        let msg = check_command(&argv(&[&script])).unwrap();
        assert!(msg.contains("not an executable"), "{msg}");
        // Placeholders, options and inline scripts are not files.
        assert_eq!(check_command(&argv(&["sh", "-c", "{host}.py"])), None);
        assert_eq!(
            check_command(&argv(&["sh", "-c", "sleep 0.4; exec python3 missing.py"])),
            None
        );
    }

    #[test]
    fn program_files_are_the_paths_not_the_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.py");
        std::fs::write(&a, "one").unwrap();
        let paths = program_paths(&argv(&["python3", &a.display().to_string(), "--fast"]));
        assert_eq!(paths, vec![a.clone()]);
        let h1 = file_sha256(&a).unwrap();
        std::fs::write(&a, "two").unwrap();
        let h2 = file_sha256(&a).unwrap();
        assert_ne!(h1, h2);
        assert_eq!(h1.len(), 64);
        let rec = |sha: &str| ProgramFile {
            entrant: "e".into(),
            path: a.display().to_string(),
            sha256: sha.into(),
        };
        assert!(changed_programs(&[rec(&h2)], &[rec(&h2)]).is_empty());
        let changes = changed_programs(&[rec(&h1)], &[rec(&h2)]);
        assert_eq!(changes.len(), 1);
        assert!(changes[0].contains("a.py changed"), "{changes:?}");
        std::fs::remove_file(&a).unwrap();
        let changes = changed_programs(&[rec(&h1)], &[]);
        assert!(changes[0].contains("is gone"), "{changes:?}");
    }
}
