//! Confinement of bot processes: the layers the referee puts around every process a seat runs.
//!
//! Each layer is detected once per referee process ([`capabilities`]) and applied when the kernel
//! and the referee's privileges allow it:
//!
//! * **identity** — the bot runs as its own unprivileged uid/gid (leased from a range, so two bots
//!   never share one), supplementary groups cleared, every capability dropped including the
//!   bounding set, `PR_SET_NO_NEW_PRIVS`;
//! * **namespaces** — its own PID namespace (it sees only its processes, and when its first process
//!   ends every process it started ends), mount namespace with a root built from read-only bind
//!   mounts of the system directories and the files and directories the bot's command line names
//!   (a script given by path is mounted alone, not its directory), a fresh `/proc`, a
//!   private size-limited tmpfs for `/tmp` (its working directory) and `/dev/shm`, IPC and UTS
//!   namespaces, and for stdin/stdout seats a network namespace with no interfaces;
//! * **landlock** — a file-system allow-list (ABI 1+), TCP connect only to the seat's own port and
//!   no bind (ABI 4+), signal and abstract-socket scoping (ABI 6+);
//! * **cgroup** — memory (with children and shared memory), process count, killed as a whole at
//!   the end of the match (cgroup v2, or v1 memory and pids controllers);
//! * **cpu** — in the same cgroup, an equal CPU weight per bot however many processes it runs
//!   (v1 `cpu.shares`, v2 `cpu.weight`), and optionally a quota ([`JailConfig::cpu_millis`]);
//! * **seccomp** — no ptrace, `process_vm_*`, bpf, perf events, mounts, namespaces, keyrings,
//!   kernel modules, reboot, io_uring and the like.
//!
//! See `docs/sandbox.md` for the threat model.

mod cgroup;
mod child;
mod filters;
mod launch;
mod paths;
mod plan;
mod uid;

/// System directories every bot may read and execute. Nothing under `/opt`, `/home`, `/root`
/// or `/srv` is mounted unless the command line or `--ro-path` names it.
const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc",
];

use std::fmt;
use std::path::PathBuf;
use std::sync::OnceLock;

use serde::Serialize;

pub(crate) use cgroup::{Cgroup, CpuQuota};
pub use launch::JAIL_PATH;
pub(crate) use launch::{bot_uid, check as check_launch};
pub(crate) use paths::PathMap;
pub(crate) use plan::{bot_mounts, mount_plan, prepare, receive_fd, Prepared, SeatNet};
pub(crate) use uid::UidLease;

/// How much confinement a referee demands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxLevel {
    /// Only a process group, a scrubbed environment, a temporary directory and rlimits (for
    /// machines where nothing else is possible; never for a public contest).
    Off,
    /// Every layer this kernel and these privileges allow; a warning names what is missing.
    #[default]
    Best,
    /// Every layer, or the bot is not started (a host fault, never the bot's loss).
    Strict,
}

impl std::str::FromStr for SandboxLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(SandboxLevel::Off),
            "best" => Ok(SandboxLevel::Best),
            "strict" => Ok(SandboxLevel::Strict),
            other => Err(format!(
                "unknown sandbox level {other:?} (expected off, best or strict)"
            )),
        }
    }
}

impl fmt::Display for SandboxLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SandboxLevel::Off => "off",
            SandboxLevel::Best => "best",
            SandboxLevel::Strict => "strict",
        })
    }
}

/// The confinement settings of one seat's processes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JailConfig {
    pub level: SandboxLevel,
    /// First uid (and gid) of the range leased to bots.
    pub uid_base: u32,
    /// Number of uids in the range (at most this many bots run at once on one machine).
    pub uid_count: u32,
    /// The seat's own directory: mounted read-only, and the bot's working directory.
    pub seat_dir: Option<PathBuf>,
    /// Directories of seats by index (`--seat-dir N=DIR`), applied by [`crate::SandboxConfig::for_seat`].
    pub seat_dirs: std::collections::BTreeMap<usize, PathBuf>,
    /// More environment variables passed through to the bots of a seat, by index.
    pub seat_env: std::collections::BTreeMap<usize, Vec<String>>,
    /// More directories (or files) mounted read-only at the same path (a toolchain, a venv).
    pub ro_paths: Vec<PathBuf>,
    /// The bot's own folders besides its seat folder (a ladder build's sources): mounted
    /// read-only at a neutral path (`/bot2`, …) as the seat folder (`/bot`) and the files its
    /// command line names are, with every mention in the command line and the environment
    /// rewritten, so that no host path reaches the bot (see `jail::paths`).
    pub own_paths: Vec<PathBuf>,
    /// TCP ports on loopback a TCP client seat may connect to (its own seat's port). Pipe seats
    /// get no network at all.
    pub tcp_connect: Vec<u16>,
    /// Size of the private tmpfs that is the bot's `/tmp` and working directory (its disk).
    pub disk_bytes: u64,
    /// Size of its private `/dev/shm`.
    pub shm_bytes: u64,
    /// What the bot must never see (the run's results database, its replays, the other
    /// entrants' programs): a mount that is, contains or lies inside one of these is refused
    /// before the bot starts ([`crate::SpawnError::Denied`]).
    pub denied: Vec<DeniedPath>,
    /// A CPU quota per bot in thousandths of a CPU (`--cpus-per-bot 0.5` is 500): all its
    /// processes together get at most this much CPU time. `None`: no quota, only the equal
    /// share. Parse it with [`parse_cpus`]; a quota that cannot be applied is an error.
    pub cpu_millis: Option<u32>,
}

/// A path no bot of the run may see, and what it holds (for the error message).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeniedPath {
    pub path: PathBuf,
    /// What it holds: "the results database", "entrant \"b\"'s program".
    pub what: String,
}

impl DeniedPath {
    pub fn new(path: impl Into<PathBuf>, what: impl Into<String>) -> DeniedPath {
        DeniedPath {
            path: path.into(),
            what: what.into(),
        }
    }

    /// The files of a SQLite database at `db`: the file, its `-wal`, `-shm` and `-journal`
    /// and the run lock (`.lock`).
    pub fn sqlite(db: &std::path::Path) -> Vec<DeniedPath> {
        ["", "-wal", "-shm", "-journal", ".lock"]
            .iter()
            .map(|suffix| {
                let mut p = db.as_os_str().to_owned();
                p.push(suffix);
                DeniedPath::new(p, "the results database")
            })
            .collect()
    }
}

/// Period of the CPU quota, in microseconds.
pub const CPU_PERIOD_US: u64 = 100_000;

/// Parse a number of CPUs per bot (`1`, `0.5`, `2.25`) into thousandths of a CPU, from 0.01 (the
/// kernel's smallest quota, 1 ms per 100 ms period) to 1024.
pub fn parse_cpus(text: &str) -> Result<u32, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?} is not a number of CPUs (e.g. 1, 0.5)"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err(format!(
            "{text:?}: the CPUs per bot must be a positive number (e.g. 1, 0.5)"
        ));
    }
    if !(0.01..=1024.0).contains(&v) {
        return Err(format!(
            "{text:?}: the CPUs per bot must be between 0.01 and 1024"
        ));
    }
    Ok((v * 1000.0).round() as u32)
}

impl JailConfig {
    /// The CPU quota [`JailConfig::cpu_millis`] asks for.
    pub(crate) fn cpu_quota(&self) -> Option<CpuQuota> {
        self.cpu_millis.map(|m| CpuQuota {
            quota_us: u64::from(m) * CPU_PERIOD_US / 1000,
            period_us: CPU_PERIOD_US,
        })
    }
}

impl Default for JailConfig {
    fn default() -> Self {
        JailConfig {
            level: SandboxLevel::Best,
            uid_base: 61000,
            uid_count: 1000,
            seat_dir: None,
            seat_dirs: Default::default(),
            seat_env: Default::default(),
            ro_paths: Vec::new(),
            own_paths: Vec::new(),
            tcp_connect: Vec::new(),
            disk_bytes: 256 << 20,
            shm_bytes: 64 << 20,
            denied: Vec::new(),
            cpu_millis: None,
        }
    }
}

/// A layer of confinement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Own uid/gid, no groups, no capabilities (bounding set too), no new privileges.
    Identity,
    /// PID, mount (private root, `/proc`, `/tmp`, `/dev/shm`), IPC, UTS and network namespaces.
    Namespaces,
    /// Landlock file-system allow-list.
    LandlockFs,
    /// Landlock TCP rules (connect to the seat's port only, no bind).
    LandlockNet,
    /// Landlock signal and abstract unix socket scoping.
    LandlockScope,
    /// A cgroup per bot: memory, pids, kill at the end.
    Cgroup,
    /// An equal CPU weight per bot in its cgroup (and the optional quota).
    Cpu,
    /// The seccomp deny-list.
    Seccomp,
}

impl Layer {
    pub const ALL: [Layer; 8] = [
        Layer::Identity,
        Layer::Namespaces,
        Layer::LandlockFs,
        Layer::LandlockNet,
        Layer::LandlockScope,
        Layer::Cgroup,
        Layer::Cpu,
        Layer::Seccomp,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Layer::Identity => "identity",
            Layer::Namespaces => "namespaces",
            Layer::LandlockFs => "landlock_fs",
            Layer::LandlockNet => "landlock_net",
            Layer::LandlockScope => "landlock_scope",
            Layer::Cgroup => "cgroup",
            Layer::Cpu => "cpu",
            Layer::Seccomp => "seccomp",
        }
    }
}

/// What this machine and this referee can apply, detected once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// The referee runs as root (it can switch uid, create namespaces and cgroups).
    pub root: bool,
    /// Namespaces can be created (false in some containers).
    pub namespaces: bool,
    /// The referee is not root and creates a user namespace with the others, mapping the bot's
    /// uid inside to its own.
    pub user_namespace: bool,
    /// The running kernel's Landlock ABI (0: none).
    pub landlock_abi: i32,
    /// The cgroup flavour bots get: "v2", "v1" or none.
    pub cgroup: Option<&'static str>,
    /// How bots' CPU is shared: "shares" (v1) or "weight" (v2), or none.
    pub cpu: Option<&'static str>,
    pub seccomp: bool,
    /// The referee's own `RLIMIT_NPROC` (raised to its hard limit when it is not root): without
    /// root, all bots' processes together count against it (each bot's own count is kept in its
    /// user namespace). `None`: unlimited.
    pub nproc_limit: Option<u64>,
    /// Why each unavailable layer is unavailable.
    pub reasons: Vec<(Layer, String)>,
}

impl Capabilities {
    /// Whether `layer` can be applied here.
    pub fn has(&self, layer: Layer) -> bool {
        match layer {
            Layer::Identity => self.root || self.user_namespace,
            Layer::Namespaces => self.namespaces,
            Layer::LandlockFs => self.landlock_abi >= 1,
            Layer::LandlockNet => self.landlock_abi >= 4,
            Layer::LandlockScope => self.landlock_abi >= 6,
            Layer::Cgroup => self.cgroup.is_some(),
            Layer::Cpu => self.cpu.is_some(),
            Layer::Seccomp => self.seccomp,
        }
    }

    /// Why `layer` is missing, if it is.
    pub fn reason(&self, layer: Layer) -> Option<&str> {
        self.reasons
            .iter()
            .find(|(l, _)| *l == layer)
            .map(|(_, r)| r.as_str())
    }
}

/// Detect (once) what confinement this machine offers.
pub fn capabilities() -> &'static Capabilities {
    static CAPS: OnceLock<Capabilities> = OnceLock::new();
    CAPS.get_or_init(detect)
}

fn detect() -> Capabilities {
    let mut reasons = Vec::new();
    // SAFETY: geteuid(2) cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    // Without root every bot's processes count against this user's RLIMIT_NPROC. Each user
    // namespace the referee creates remembers the limit its creator had (Linux 5.14+, ucounts),
    // and a bot sets its own limit inside: raise ours to the hard limit first, so that the
    // bots' own limits are what binds them.
    let nproc_limit = raise_nproc_limit(!root);
    // Root creates the namespaces itself; anyone else inside a user namespace of its own.
    let namespaces = child::probe_namespaces(!root);
    let user_namespace = namespaces && !root;
    if !namespaces {
        let why = if root {
            "the kernel refused to create PID/mount/network namespaces"
        } else {
            "the referee is not root and the kernel refused it a user namespace \
             (see user.max_user_namespaces and kernel.apparmor_restrict_unprivileged_userns)"
        };
        reasons.push((Layer::Namespaces, why.to_string()));
        if !root {
            reasons.push((
                Layer::Identity,
                "the referee is not root and has no user namespace to map a bot uid in".to_string(),
            ));
        }
    }
    let landlock_abi = filters::landlock_abi();
    if landlock_abi < 1 {
        reasons.push((Layer::LandlockFs, "the kernel has no Landlock".to_string()));
    }
    if landlock_abi < 4 {
        reasons.push((
            Layer::LandlockNet,
            format!("Landlock ABI {landlock_abi} < 4 has no TCP rules"),
        ));
    }
    if landlock_abi < 6 {
        reasons.push((
            Layer::LandlockScope,
            format!("Landlock ABI {landlock_abi} < 6 has no signal or socket scoping"),
        ));
    }
    let (cgroup, cpu) = if root {
        match cgroup::probe() {
            Ok(probe) => {
                let cpu = match probe.cpu {
                    Ok(kind) => Some(kind),
                    Err(why) => {
                        reasons.push((Layer::Cpu, why));
                        None
                    }
                };
                (Some(probe.flavour), cpu)
            }
            Err(why) => {
                reasons.push((Layer::Cpu, format!("no bot cgroup: {why}")));
                reasons.push((Layer::Cgroup, why));
                (None, None)
            }
        }
    } else {
        reasons.push((
            Layer::Cgroup,
            "creating cgroups needs root or a delegated cgroup".to_string(),
        ));
        reasons.push((
            Layer::Cpu,
            "no bot cgroup (creating cgroups needs root or a delegated cgroup): \
             a bot with many processes gets more CPU"
                .to_string(),
        ));
        (None, None)
    };
    if cgroup.is_some() {
        // Bot cgroups of referees that were killed before they could remove them.
        cgroup::sweep_stale();
    }
    let seccomp = filters::seccomp_available();
    if !seccomp {
        reasons.push((
            Layer::Seccomp,
            "the kernel has no seccomp filters".to_string(),
        ));
    }
    Capabilities {
        root,
        namespaces,
        user_namespace,
        landlock_abi,
        cgroup,
        cpu,
        seccomp,
        nproc_limit,
        reasons,
    }
}

/// This process's `RLIMIT_NPROC` soft limit, raised to the hard limit when `raise`; `None` when
/// unlimited.
fn raise_nproc_limit(raise: bool) -> Option<u64> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit(2) with a stack struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NPROC, &mut lim) != 0 {
            return None;
        }
        if raise && lim.rlim_cur < lim.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: lim.rlim_max,
                rlim_max: lim.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NPROC, &raised) == 0 {
                lim = raised;
            }
        }
    }
    (lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// The layers in force for bots under `level` on this machine: what `kakehiki sandbox` prints,
/// `play --json` reports and every replay header records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SandboxReport {
    pub level: SandboxLevel,
    /// Layers applied to every process bot.
    pub layers: Vec<Layer>,
    /// Layers missing, each with why.
    pub missing: Vec<MissingLayer>,
    pub landlock_abi: i32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<&'static str>,
    /// The bot's uid and namespaces come from a user namespace (the referee is not root): the
    /// bot's uid inside maps to the referee's own outside.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_namespace: bool,
    /// The CPU layer's settings when it is in force.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuReport>,
}

/// How a bot's CPU is limited.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CpuReport {
    /// "shares" (cgroup v1 `cpu.shares`) or "weight" (v2 `cpu.weight`): every bot the same.
    pub control: &'static str,
    /// The quota, when one was asked for: `quota_us` of CPU time per `period_us`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota_us: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub period_us: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MissingLayer {
    pub layer: Layer,
    pub reason: String,
}

impl SandboxReport {
    /// The report for `level` on this machine.
    pub fn current(level: SandboxLevel) -> SandboxReport {
        let caps = capabilities();
        let mut layers = Vec::new();
        let mut missing = Vec::new();
        for layer in Layer::ALL {
            if level == SandboxLevel::Off {
                missing.push(MissingLayer {
                    layer,
                    reason: "sandbox level off".to_string(),
                });
            } else if caps.has(layer) {
                layers.push(layer);
            } else {
                missing.push(MissingLayer {
                    layer,
                    reason: caps.reason(layer).unwrap_or("unavailable").to_string(),
                });
            }
        }
        SandboxReport {
            level,
            layers,
            missing,
            landlock_abi: caps.landlock_abi,
            cgroup: caps.cgroup,
            user_namespace: caps.user_namespace && level != SandboxLevel::Off,
            cpu: caps
                .cpu
                .filter(|_| level != SandboxLevel::Off)
                .map(|control| CpuReport {
                    control,
                    quota_us: None,
                    period_us: None,
                }),
        }
    }

    /// The report for the settings of `jail` on this machine: [`SandboxReport::current`] with
    /// its CPU quota.
    pub fn for_jail(jail: &JailConfig) -> SandboxReport {
        let mut report = SandboxReport::current(jail.level);
        if let (Some(cpu), Some(q)) = (report.cpu.as_mut(), jail.cpu_quota()) {
            cpu.quota_us = Some(q.quota_us);
            cpu.period_us = Some(q.period_us);
        }
        report
    }

    /// Refuse a CPU quota this machine or this level cannot apply (it is never ignored).
    pub fn check_cpu_quota(&self, jail: &JailConfig) -> Result<(), crate::SpawnError> {
        if jail.cpu_millis.is_none() {
            return Ok(());
        }
        if self.level == SandboxLevel::Off {
            return Err(crate::SpawnError::CpuQuotaUnavailable(
                "sandbox level off applies no cgroup".to_string(),
            ));
        }
        if let Some(m) = self.missing.iter().find(|m| m.layer == Layer::Cpu) {
            return Err(crate::SpawnError::CpuQuotaUnavailable(format!(
                "the cpu layer is missing ({})",
                m.reason
            )));
        }
        Ok(())
    }

    /// What a bot can still do to another bot or the machine in this tier that the full
    /// sandbox prevents, one sentence each (what `kakehiki sandbox` prints): empty with every
    /// layer in force.
    pub fn uncovered(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.level == SandboxLevel::Off {
            out.push("nothing is confined: for trusted bots only");
            return out;
        }
        let has = |l: Layer| self.layers.contains(&l);
        if !has(Layer::Namespaces) {
            out.extend([
                "bots share the host's network namespace: each one sees every socket of the \
                 machine in /proc/net (names, ports, counts), and two bots can signal bits by \
                 binding the same abstract Unix name (bind and listen are refused, connect to \
                 another bot's abstract socket only with Landlock scoping)",
                "bots see every process of the machine in /proc (other uids: no signals, no \
                 reading their memory)",
                "bots share the host's mount, UTS and IPC namespaces (SysV IPC and POSIX message \
                 queues are refused by seccomp) and work in a host temporary folder",
                "bots see their own files at their host paths (their command line, working \
                 folder and /proc/self/mountinfo name them), not at /bot",
            ]);
        }
        if !has(Layer::Seccomp) {
            out.push(
                "no seccomp: file locks and inotify on shared files, SysV IPC, UDP and other \
                 socket families are open between bots",
            );
        }
        if !has(Layer::LandlockScope) && !has(Layer::Namespaces) {
            out.push("abstract Unix sockets and signals reach beyond the bot's own domain");
        }
        if !has(Layer::Identity) {
            out.push("bots run as the referee's own user");
        }
        out
    }

    /// Whether every layer is in force.
    pub fn complete(&self) -> bool {
        self.missing.is_empty()
    }

    /// Refuse a level this machine cannot give: `strict` with a layer missing.
    pub fn check(&self) -> Result<(), crate::SpawnError> {
        if self.level == SandboxLevel::Strict && !self.complete() {
            return Err(crate::SpawnError::SandboxUnavailable(self.missing_text()));
        }
        Ok(())
    }

    /// "layer (reason); layer (reason)".
    pub fn missing_text(&self) -> String {
        self.missing
            .iter()
            .map(|m| format!("{} ({})", m.layer.name(), m.reason))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// Run the prepared confinement in the forked child (see [`child::run`]).
pub(crate) fn run_child(plan: &mut child::ChildPlan) -> std::io::Result<()> {
    child::run(plan)
}

/// A failed confinement step the child reported, if any.
pub(crate) fn read_status(rx: &std::os::fd::OwnedFd) -> Option<(child::Stage, i32)> {
    plan::read_status(rx)
}

/// A root-only folder of the referees' own state (`/run/kakehiki/NAME`, mode 0700; `/run` is a
/// root-only tmpfs on most systems), else `kakehiki-NAME` in the temporary directory.
pub(crate) fn private_run_dir(name: &str) -> PathBuf {
    use std::os::unix::fs::DirBuilderExt;
    let run = PathBuf::from("/run/kakehiki").join(name);
    if std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&run)
        .is_ok()
    {
        return run;
    }
    std::env::temp_dir().join(format!("kakehiki-{name}"))
}

/// Remove bot cgroups that referees killed before they could clean up.
pub fn sweep_stale_cgroups() {
    cgroup::sweep_stale();
}

/// The words of an argument that is a shell command (`sh -c 'cd /bots/a && ./run'`), as the
/// sandbox reads them for paths: split at blanks and at the shell's operators and quotes.
pub(crate) fn shell_words(arg: &str) -> impl Iterator<Item = &str> {
    arg.split(|c: char| c.is_whitespace() || ";&|<>()'\"`".contains(c))
        .filter(|t| !t.is_empty())
}

/// `p` with `.` and `..` components removed lexically (symbolic links are kept, so an
/// interpreter's or a venv's own path is not changed).
pub fn normalize(p: &std::path::Path) -> PathBuf {
    use std::path::Component;
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(c);
                }
            }
            other => out.push(other),
        }
    }
    out
}
