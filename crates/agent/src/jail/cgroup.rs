//! A cgroup per bot: a memory limit covering all its processes and its shared memory and tmpfs
//! pages, a process-count limit, and a kill of everything in it at the end.
//!
//! cgroup v2 is used where the memory and pids controllers can be delegated below the referee's
//! own cgroup; otherwise the v1 `memory` and `pids` hierarchies.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const ROOT: &str = "/sys/fs/cgroup";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavour {
    V2,
    V1,
}

/// The referee's own cgroup path in a hierarchy (`/proc/self/cgroup`): `""` for v2's `0::`
/// line, else the named controller.
fn own_path(controller: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (_id, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controller.is_empty() {
            if ctrls.is_empty() {
                return Some(path.to_string());
            }
        } else if ctrls.split(',').any(|c| c == controller) {
            return Some(path.to_string());
        }
    }
    None
}

fn join(base: &str, rel: &str) -> PathBuf {
    Path::new(base).join(rel.trim_start_matches('/'))
}

/// Where bots' cgroups are created, per flavour: v2's parent, or v1's memory and pids parents
/// (found once: the referee's own cgroup does not move).
fn parents() -> Result<(Flavour, Vec<PathBuf>), String> {
    static PARENTS: std::sync::OnceLock<Result<(Flavour, Vec<PathBuf>), String>> =
        std::sync::OnceLock::new();
    PARENTS.get_or_init(find_parents).clone()
}

fn find_parents() -> Result<(Flavour, Vec<PathBuf>), String> {
    // v2: the unified hierarchy at /sys/fs/cgroup with memory and pids available.
    let unified = Path::new(ROOT).join("cgroup.controllers");
    if let Ok(ctrls) = std::fs::read_to_string(&unified) {
        let has = |c: &str| ctrls.split_whitespace().any(|x| x == c);
        if has("memory") && has("pids") {
            if let Some(own) = own_path("") {
                let parent = join(ROOT, &own);
                let sub = std::fs::read_to_string(parent.join("cgroup.subtree_control"))
                    .unwrap_or_default();
                let enabled = sub.split_whitespace().any(|x| x == "memory")
                    && sub.split_whitespace().any(|x| x == "pids");
                if enabled
                    || std::fs::write(parent.join("cgroup.subtree_control"), "+memory +pids")
                        .is_ok()
                {
                    return Ok((Flavour::V2, vec![parent]));
                }
            }
        }
    }
    // v1: separate memory and pids hierarchies.
    let mem = own_path("memory").map(|p| join(&format!("{ROOT}/memory"), &p));
    let pids = own_path("pids").map(|p| join(&format!("{ROOT}/pids"), &p));
    match (mem, pids) {
        (Some(m), Some(p)) if m.is_dir() && p.is_dir() => Ok((Flavour::V1, vec![m, p])),
        _ => Err(
            "no cgroup v2 with memory and pids delegated, and no v1 memory and pids hierarchies"
                .to_string(),
        ),
    }
}

/// Check that a bot cgroup can be created here; the flavour's name.
pub(super) fn probe() -> Result<&'static str, String> {
    let cg = Cgroup::create(1 << 30, 64).map_err(|e| format!("cannot create a cgroup: {e}"))?;
    let name = match cg.flavour {
        Flavour::V2 => "v2",
        Flavour::V1 => "v1",
    };
    drop(cg);
    Ok(name)
}

/// One bot's cgroup (one directory for v2, two for v1).
#[derive(Debug)]
pub(crate) struct Cgroup {
    flavour: Flavour,
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each directory, open for the bot's first process to enter with "0".
    procs: Vec<File>,
}

impl Cgroup {
    /// Create a cgroup limited to `memory_bytes` and `max_pids`.
    pub fn create(memory_bytes: u64, max_pids: u64) -> io::Result<Cgroup> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let (flavour, parents) = parents().map_err(io::Error::other)?;
        let name = format!(
            "kakehiki-bot-{}-{}",
            std::process::id(),
            SERIAL.fetch_add(1, Ordering::Relaxed)
        );
        let mut cg = Cgroup {
            flavour,
            dirs: Vec::new(),
            procs: Vec::new(),
        };
        for parent in &parents {
            let dir = parent.join(&name);
            std::fs::create_dir(&dir)?;
            cg.dirs.push(dir);
        }
        match flavour {
            Flavour::V2 => {
                let d = &cg.dirs[0];
                write_file(&d.join("memory.max"), &memory_bytes.to_string())?;
                // No swap: memory.max is the whole budget.
                let _ = write_file(&d.join("memory.swap.max"), "0");
                write_file(&d.join("pids.max"), &max_pids.to_string())?;
            }
            Flavour::V1 => {
                let (m, p) = (&cg.dirs[0], &cg.dirs[1]);
                write_file(&m.join("memory.limit_in_bytes"), &memory_bytes.to_string())?;
                let _ = write_file(
                    &m.join("memory.memsw.limit_in_bytes"),
                    &memory_bytes.to_string(),
                );
                write_file(&p.join("pids.max"), &max_pids.to_string())?;
            }
        }
        for dir in &cg.dirs {
            let f = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(dir.join("cgroup.procs"))?;
            cg.procs.push(f);
        }
        Ok(cg)
    }

    /// The raw fds of the `cgroup.procs` files the child writes "0" to.
    pub fn procs_fds(&self) -> Vec<i32> {
        use std::os::fd::AsRawFd;
        self.procs.iter().map(|f| f.as_raw_fd()).collect()
    }

    /// How many times the kernel killed a process of this cgroup for memory.
    pub fn oom_kills(&self) -> u64 {
        let (file, key) = match self.flavour {
            Flavour::V2 => (self.dirs[0].join("memory.events"), "oom_kill"),
            Flavour::V1 => (self.dirs[0].join("memory.oom_control"), "oom_kill"),
        };
        std::fs::read_to_string(file)
            .ok()
            .and_then(|t| {
                t.lines().find_map(|l| {
                    let mut it = l.split_whitespace();
                    (it.next() == Some(key)).then(|| it.next()?.parse().ok())?
                })
            })
            .unwrap_or(0)
    }

    fn pids(&self) -> Vec<i32> {
        let mut out = Vec::new();
        for dir in &self.dirs {
            if let Ok(t) = std::fs::read_to_string(dir.join("cgroup.procs")) {
                out.extend(t.lines().filter_map(|l| l.trim().parse::<i32>().ok()));
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    /// SIGKILL every process in the cgroup (new ones included, until it is empty).
    pub fn kill_all(&self) {
        if self.flavour == Flavour::V2 && write_file(&self.dirs[0].join("cgroup.kill"), "1").is_ok()
        {
            return;
        }
        for _ in 0..100 {
            let pids = self.pids();
            if pids.is_empty() {
                return;
            }
            for pid in pids {
                // SAFETY: kill(2) with a pid read from the cgroup.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.kill_all();
        self.procs.clear();
        for dir in &self.dirs {
            // Killed processes leave the cgroup once the kernel has torn them down.
            for i in 0..200 {
                match std::fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                    Err(_) if i < 199 => {
                        if i % 20 == 19 {
                            self.kill_all();
                        }
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    Err(e) => {
                        tracing::warn!("cannot remove bot cgroup {}: {e}", dir.display());
                    }
                }
            }
        }
    }
}

fn write_file(path: &Path, value: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(value.as_bytes())
}

/// Remove bot cgroups left by referees that were killed (empty ones whose creator is gone).
pub(crate) fn sweep_stale() {
    let Ok((_, parents)) = parents() else { return };
    for parent in parents {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some(rest) = name.strip_prefix("kakehiki-bot-") else {
                continue;
            };
            let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<i32>().ok()) else {
                continue;
            };
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            if let Ok(t) = std::fs::read_to_string(e.path().join("cgroup.procs")) {
                for pid in t.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
                    // SAFETY: kill(2) of a leftover bot process.
                    unsafe { libc::kill(pid, libc::SIGKILL) };
                }
            }
            let _ = std::fs::remove_dir(e.path());
        }
    }
}
