//! A cgroup per bot: a memory limit covering all its processes and its shared memory and tmpfs
//! pages, a process-count limit, and a kill of everything in it at the end.
//!
//! cgroup v2 is used where the memory and pids controllers can be delegated below the referee's
//! own cgroup; otherwise the v1 `memory` and `pids` hierarchies. Where the cpu controller is
//! there too (v2 `cpu`, v1 `cpu` hierarchy), every bot gets the same CPU weight, shared by all
//! its processes, and optionally a quota.
//!
//! A bot can read its cgroup's name (`/proc/self/cgroup`; with namespaces it sees `/`, the root
//! of its own cgroup namespace): the name is a random token, `kakehiki-<32 hex digits>`, that
//! tells nothing about the referee. Which referee owns a cgroup is kept where no bot looks: a
//! file of that token in a root-only folder (`/run/kakehiki/cgroups`), locked (`flock`) by the
//! referee for the cgroup's life, so [`sweep_stale`] knows a cgroup whose owner died (even by
//! `SIGKILL`) by its lock being free.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

const ROOT: &str = "/sys/fs/cgroup";

/// The prefix of every bot cgroup's name (a random token follows).
const PREFIX: &str = "kakehiki-";

/// Where the owner lock of each bot cgroup is kept: root only, as the uid leases (`/run`, else
/// the temporary directory).
fn owner_dir() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| super::private_run_dir("cgroups"))
        .clone()
}

/// 32 random hex digits (the kernel's generator).
fn random_token() -> io::Result<String> {
    let mut buf = [0u8; 16];
    let mut filled = 0;
    while filled < buf.len() {
        // SAFETY: getrandom(2) into the rest of a stack buffer.
        let n =
            unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), buf.len() - filled, 0) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        filled += n as usize;
    }
    Ok(buf.iter().map(|b| format!("{b:02x}")).collect())
}

/// Whether `name` is a bot cgroup of this scheme (the prefix and 32 hex digits): its token.
fn token_of(name: &str) -> Option<&str> {
    let token = name.strip_prefix(PREFIX)?;
    (token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit())).then_some(token)
}

/// Take the owner lock of a new cgroup token: created and locked before the cgroup exists.
fn lock_owner(token: &str) -> io::Result<File> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::DirBuilderExt;
    let dir = owner_dir();
    // The fallback in the temporary directory is created here (0700, root's).
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)?;
    let f = OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC)
        .open(dir.join(token))?;
    // SAFETY: flock(2) on a descriptor we own.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(f)
}

/// Whether the referee that owns cgroup `token` is gone: its owner file is missing or nobody
/// holds its lock.
fn owner_gone(token: &str) -> bool {
    use std::os::fd::AsRawFd;
    let Ok(f) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(owner_dir().join(token))
    else {
        return true;
    };
    // SAFETY: flock(2) on a descriptor we own; the lock goes with it.
    unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) == 0 }
}

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

/// Where bots' cgroups are created: v2's parent, or v1's memory and pids parents; and where
/// their CPU share is set (found once: the referee's own cgroup does not move).
#[derive(Debug, Clone)]
struct Parents {
    flavour: Flavour,
    dirs: Vec<PathBuf>,
    /// v2: the cpu controller is enabled in `dirs[0]`'s subtree (`None` as the path); v1: the
    /// cpu hierarchy's parent. `Err`: why bots get no CPU share.
    cpu: Result<Option<PathBuf>, String>,
}

fn parents() -> Result<Parents, String> {
    static PARENTS: std::sync::OnceLock<Result<Parents, String>> = std::sync::OnceLock::new();
    PARENTS.get_or_init(find_parents).clone()
}

fn find_parents() -> Result<Parents, String> {
    // v2: the unified hierarchy at /sys/fs/cgroup with memory and pids available.
    let unified = Path::new(ROOT).join("cgroup.controllers");
    if let Ok(ctrls) = std::fs::read_to_string(&unified) {
        let has = |c: &str| ctrls.split_whitespace().any(|x| x == c);
        if has("memory") && has("pids") {
            if let Some(own) = own_path("") {
                let parent = join(ROOT, &own);
                let control = parent.join("cgroup.subtree_control");
                let enabled = |c: &str| {
                    std::fs::read_to_string(&control)
                        .unwrap_or_default()
                        .split_whitespace()
                        .any(|x| x == c)
                };
                if (enabled("memory") && enabled("pids"))
                    || std::fs::write(&control, "+memory +pids").is_ok()
                {
                    let cpu = if !has("cpu") {
                        Err("cgroup v2 has no cpu controller here".to_string())
                    } else if enabled("cpu") {
                        Ok(None)
                    } else {
                        std::fs::write(&control, "+cpu")
                            .map(|()| None)
                            .map_err(|e| {
                                format!(
                                    "cannot enable the cpu controller below {}: {e}",
                                    parent.display()
                                )
                            })
                    };
                    return Ok(Parents {
                        flavour: Flavour::V2,
                        dirs: vec![parent],
                        cpu,
                    });
                }
            }
        }
    }
    // v1: separate memory and pids hierarchies, and the cpu one (often `cpu,cpuacct`).
    let v1 = |controller: &str, mounts: &[&str]| -> Option<PathBuf> {
        let own = own_path(controller)?;
        mounts
            .iter()
            .map(|m| join(&format!("{ROOT}/{m}"), &own))
            .find(|d| d.is_dir())
    };
    let mem = v1("memory", &["memory"]);
    let pids = v1("pids", &["pids"]);
    match (mem, pids) {
        (Some(m), Some(p)) => {
            let cpu = v1("cpu", &["cpu", "cpu,cpuacct", "cpuacct,cpu"])
                .filter(|d| d.join("cpu.shares").exists())
                .map(Some)
                .ok_or_else(|| "no cgroup v1 cpu hierarchy is mounted".to_string());
            Ok(Parents {
                flavour: Flavour::V1,
                dirs: vec![m, p],
                cpu,
            })
        }
        _ => Err(
            "no cgroup v2 with memory and pids delegated, and no v1 memory and pids hierarchies"
                .to_string(),
        ),
    }
}

/// A bot's CPU share: an equal weight for every bot (its processes share it), and optionally a
/// quota of `quota_us` CPU time per `period_us`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CpuQuota {
    pub quota_us: u64,
    pub period_us: u64,
}

/// What a bot cgroup can be here: the flavour's name, and how CPU is shared (`shares` for v1,
/// `weight` for v2) or why it is not.
pub(super) struct Probe {
    pub flavour: &'static str,
    pub cpu: Result<&'static str, String>,
}

/// Check that a bot cgroup can be created here.
pub(super) fn probe() -> Result<Probe, String> {
    let cg =
        Cgroup::create(1 << 30, 64, None).map_err(|e| format!("cannot create a cgroup: {e}"))?;
    let flavour = match cg.flavour {
        Flavour::V2 => "v2",
        Flavour::V1 => "v1",
    };
    let cpu = match (&cg.cpu, cg.flavour) {
        (Ok(()), Flavour::V2) => Ok("weight"),
        (Ok(()), Flavour::V1) => Ok("shares"),
        (Err(why), _) => Err(why.clone()),
    };
    drop(cg);
    Ok(Probe { flavour, cpu })
}

/// One bot's cgroup (one directory for v2, two for v1).
#[derive(Debug)]
pub(crate) struct Cgroup {
    flavour: Flavour,
    dirs: Vec<PathBuf>,
    /// `cgroup.procs` of each directory, open for the bot's first process to enter with "0".
    procs: Vec<File>,
    /// Whether the bot got its CPU share, or why not.
    cpu: Result<(), String>,
    /// The owner lock (`/run/kakehiki/cgroups/<token>`), held while the cgroup exists.
    owner: Option<(PathBuf, File)>,
}

impl Cgroup {
    /// Create a cgroup limited to `memory_bytes` and `max_pids`, with an equal CPU share where
    /// the cpu controller is available, capped at `quota` (an error if it cannot be).
    pub fn create(memory_bytes: u64, max_pids: u64, quota: Option<CpuQuota>) -> io::Result<Cgroup> {
        let parents = parents().map_err(io::Error::other)?;
        let flavour = parents.flavour;
        // A name that tells the bot nothing (not the referee's pid): the owner is on record
        // where only the referee looks.
        let token = random_token()?;
        let owner = lock_owner(&token)?;
        let name = format!("{PREFIX}{token}");
        let mut cg = Cgroup {
            flavour,
            dirs: Vec::new(),
            procs: Vec::new(),
            cpu: parents.cpu.clone().map(|_| ()),
            owner: Some((owner_dir().join(&token), owner)),
        };
        if let (Some(_), Err(why)) = (quota, &cg.cpu) {
            return Err(io::Error::other(format!("no CPU quota possible: {why}")));
        }
        let mut all = parents.dirs.clone();
        if let Ok(Some(cpu)) = &parents.cpu {
            all.push(cpu.clone());
        }
        for parent in &all {
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
                if cg.cpu.is_ok() {
                    // Every bot the same weight, whatever the number of its processes.
                    write_file(&d.join("cpu.weight"), "100")?;
                    if let Some(q) = quota {
                        write_file(
                            &d.join("cpu.max"),
                            &format!("{} {}", q.quota_us, q.period_us),
                        )?;
                    }
                }
            }
            Flavour::V1 => {
                let (m, p) = (&cg.dirs[0], &cg.dirs[1]);
                write_file(&m.join("memory.limit_in_bytes"), &memory_bytes.to_string())?;
                let _ = write_file(
                    &m.join("memory.memsw.limit_in_bytes"),
                    &memory_bytes.to_string(),
                );
                write_file(&p.join("pids.max"), &max_pids.to_string())?;
                if let Some(c) = cg.dirs.get(2) {
                    write_file(&c.join("cpu.shares"), "1024")?;
                    if let Some(q) = quota {
                        write_file(&c.join("cpu.cfs_period_us"), &q.period_us.to_string())?;
                        write_file(&c.join("cpu.cfs_quota_us"), &q.quota_us.to_string())?;
                    }
                }
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
        // A cgroup left behind stays on record as this referee's, and a later sweep removes it.
        if let Some((path, _lock)) = self.owner.take() {
            if self.dirs.iter().all(|d| !d.exists()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

fn write_file(path: &Path, value: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(path)?;
    f.write_all(value.as_bytes())
}

/// Remove bot cgroups left by referees that were killed: those whose owner lock nobody holds
/// (and those named by the referee's pid, `kakehiki-bot-<pid>-<n>`, by earlier versions, whose
/// pid is gone), killing what is still in them.
pub(crate) fn sweep_stale() {
    let Ok(parents) = parents() else { return };
    let cpu = parents.cpu.ok().flatten();
    let mut swept = Vec::new();
    for parent in parents.dirs.into_iter().chain(cpu) {
        let Ok(entries) = std::fs::read_dir(&parent) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let stale = if let Some(token) = token_of(name) {
                let gone = owner_gone(token);
                if gone {
                    swept.push(token.to_string());
                }
                gone
            } else if let Some(rest) = name.strip_prefix("kakehiki-bot-") {
                rest.split('-')
                    .next()
                    .and_then(|p| p.parse::<i32>().ok())
                    .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
            } else {
                false
            };
            if !stale {
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
    for token in swept {
        let _ = std::fs::remove_file(owner_dir().join(token));
    }
}
