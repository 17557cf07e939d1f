//! What a bot process may use.

use std::path::PathBuf;

use crate::jail::JailConfig;

/// rlimits applied to every bot process (and inherited by its children). `None` leaves the
/// referee's own limit in place.
///
/// Notes: the memory limit is `RLIMIT_DATA` (private writable memory), not `RLIMIT_AS`, because
/// virtual machines (JVM, V8, Go) reserve far more address space than they use. `RLIMIT_NPROC`
/// counts all processes of the user and does not bind root; the process group kill is what
/// reliably ends a bot's children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLimits {
    /// CPU seconds (SIGXCPU at the soft limit, SIGKILL one second later).
    pub cpu_seconds: Option<u64>,
    /// Bytes of private writable memory (heap).
    pub memory_bytes: Option<u64>,
    /// Processes of the user.
    pub processes: Option<u64>,
    /// Largest file the bot may write, in bytes.
    pub file_size_bytes: Option<u64>,
    /// Open file descriptors.
    pub open_files: Option<u64>,
}

impl Default for ResourceLimits {
    fn default() -> Self {
        ResourceLimits {
            cpu_seconds: Some(600),
            memory_bytes: Some(4 << 30),
            processes: Some(4096),
            file_size_bytes: Some(64 << 20),
            open_files: Some(1024),
        }
    }
}

/// How bot processes are run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxConfig {
    pub limits: ResourceLimits,
    /// Bytes of stderr kept per process (the rest is counted and dropped): its tail (the first
    /// and last halves), and apart from it the bytes taken piece by piece over its life
    /// ([`crate::StderrConsole`]).
    pub stderr_cap: usize,
    /// Longest stdout line kept, in bytes; a longer line is cut and flagged.
    pub line_cap: usize,
    /// Total stdout bytes a process may write over its life; beyond it the process group is
    /// killed and reads report [`crate::ReadOutcome::OutputLimit`].
    pub output_cap: u64,
    /// Complete lines buffered while nobody reads; newer ones are dropped beyond it (the
    /// first line after a request is its reply).
    pub pending_lines_cap: usize,
    /// Environment variables passed through from the referee (all others are removed). By
    /// default none that names a host path: a confined bot's `PATH` is
    /// [`crate::JAIL_PATH`] (see `jail::launch::bot_path`), `HOME` and `TMPDIR` its `/tmp`;
    /// `PATH`, `PYTHONPATH`, `JAVA_HOME` pass only when named (`--pass-env`).
    pub env_passthrough: Vec<String>,
    /// Variables set for the bot (after the pass-through).
    pub env: Vec<(String, String)>,
    /// Variables set for one seat's bot only (after `env`), by seat (0-based): its own seed
    /// (`KAKEHIKI_SEED`), which no other seat may learn. [`SandboxConfig::for_seat`] moves
    /// them into `env`.
    pub seat_vars: std::collections::BTreeMap<usize, Vec<(String, String)>>,
    /// Working directory; `None` creates a fresh temporary directory per process, removed when
    /// the process is dropped.
    pub workdir: Option<PathBuf>,
    /// The confinement layers (uid, namespaces, Landlock, cgroup, seccomp) and their settings.
    pub jail: JailConfig,
    /// Where every process seat's working folder is copied when its process ends
    /// (`play --keep-seat-files DIR`): seat N's to `DIR/seat-N/`, set by
    /// [`SandboxConfig::for_seat`].
    pub keep_seat_files: Option<PathBuf>,
    /// Where this process's working folder (its private `/tmp`) is copied when it ends, however
    /// it ends (exit, crash, timeout, kill), at most `jail.disk_bytes` of it, each file and
    /// folder counted as at least [`crate::KEPT_BLOCK`] bytes, and at most
    /// [`crate::MAX_KEPT_ENTRIES`] of them (copying stops there, with a warning). Symbolic links
    /// and special files are not copied; a file with an execute bit stays executable.
    pub keep_files: Option<PathBuf>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            limits: ResourceLimits::default(),
            stderr_cap: 64 << 10,
            line_cap: 4096,
            output_cap: 64 << 20,
            pending_lines_cap: 1024,
            env_passthrough: ["LANG", "LC_ALL", "TZ"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            env: Vec::new(),
            seat_vars: Default::default(),
            workdir: None,
            jail: JailConfig::default(),
            keep_seat_files: None,
            keep_files: None,
        }
    }
}

impl SandboxConfig {
    /// The configuration of seat `seat` (0-based): its own directory, if one was named.
    pub fn for_seat(&self, seat: usize) -> SandboxConfig {
        let mut cfg = self.clone();
        if let Some(dir) = self.jail.seat_dirs.get(&seat) {
            cfg.jail.seat_dir = Some(dir.clone());
        }
        if let Some(root) = &self.keep_seat_files {
            cfg.keep_files = Some(root.join(format!("seat-{seat}")));
        }
        if let Some(vars) = self.jail.seat_env.get(&seat) {
            cfg.env_passthrough.extend(vars.iter().cloned());
        }
        // Only this seat's own variables go with it.
        let mine = cfg.seat_vars.remove(&seat).unwrap_or_default();
        cfg.seat_vars.clear();
        for (k, v) in mine {
            cfg.env.retain(|(name, _)| *name != k);
            cfg.env.push((k, v));
        }
        cfg
    }
}
