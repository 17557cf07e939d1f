//! Spawning, reading, writing and killing bot processes.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::Notify;
use tokio::time::Instant;

use crate::jail::{self, Cgroup, SandboxLevel, SandboxReport, UidLease};
use crate::sandbox::{ResourceLimits, SandboxConfig};

/// Why a bot could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("empty command line")]
    EmptyCommand,
    #[error("cannot create the bot's working directory: {0}")]
    Workdir(io::Error),
    #[error("cannot start {program:?}: {source}")]
    Start { program: String, source: io::Error },
    /// The sandbox demanded (`strict`) is not available on this machine.
    #[error("the strict sandbox is not available here: {0}")]
    SandboxUnavailable(String),
    /// A CPU quota per bot was asked for and cannot be applied (never silently ignored).
    #[error("the CPU quota per bot cannot be applied here: {0}")]
    CpuQuotaUnavailable(String),
    /// Preparing the sandbox failed in the referee.
    #[error("cannot prepare the bot's sandbox: {0}")]
    Sandbox(String),
    /// A confinement step failed in the child, before the bot's program ran.
    #[error("cannot confine the bot ({step}): {source}")]
    Confine {
        step: &'static str,
        source: io::Error,
    },
    /// The launch line cannot work in the sandbox: what is missing there and the flag that
    /// adds it (a program found only in a folder the sandbox does not show, a folder a shell
    /// command enters, classpath entries, a file the bot's uid cannot read).
    #[error("the launch line cannot work in the sandbox: {0}")]
    Launch(String),
    /// The machine refused a resource (pipes, descriptors, memory).
    #[error("cannot start the bot: {0}")]
    Host(io::Error),
    /// A path the bot would be given holds what no bot may see (the organiser's setup, refused
    /// before the bot starts).
    #[error(
        "refusing to show the bot {}: it holds {what} ({}); move the bot into a folder of its \
         own, or name only its file",
        mount.display(),
        denied.display()
    )]
    Denied {
        /// The file or folder that would be mounted.
        mount: std::path::PathBuf,
        /// The path it would expose.
        denied: std::path::PathBuf,
        what: String,
    },
}

impl SpawnError {
    /// Whether the bot could not be started because of the machine rather than the bot: no
    /// working directory (full or missing `TMPDIR`), the sandbox unavailable (`strict`) or
    /// failing to set up, or a start that failed for lack of file descriptors, memory,
    /// processes, disk or quota (`EMFILE`, `ENFILE`, `ENOMEM`, `EAGAIN`, `ENOSPC`, `EDQUOT`), or
    /// because the runner could not set the bot's rlimits (`EPERM`: an rlimit above the runner's
    /// own hard limit). A missing, unreadable or non-executable program (`ENOENT`, `EACCES`,
    /// `ENOEXEC`) and an empty command line are the bot's fault. A bot that cannot start for a
    /// host fault must not be scored as a loss.
    pub fn is_host_fault(&self) -> bool {
        match self {
            SpawnError::EmptyCommand | SpawnError::Denied { .. } | SpawnError::Launch(_) => false,
            SpawnError::Workdir(_)
            | SpawnError::SandboxUnavailable(_)
            | SpawnError::CpuQuotaUnavailable(_)
            | SpawnError::Sandbox(_)
            | SpawnError::Confine { .. }
            | SpawnError::Host(_) => true,
            SpawnError::Start { source, .. } => matches!(
                source.raw_os_error(),
                Some(
                    libc::EMFILE
                        | libc::ENFILE
                        | libc::ENOSPC
                        | libc::ENOMEM
                        | libc::EAGAIN
                        | libc::EDQUOT
                        | libc::EPERM
                )
            ),
        }
    }
}

/// One complete stdout line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The bytes before the LF (the LF itself removed; a CR before it is kept).
    pub bytes: Vec<u8>,
    /// When the line's LF was read.
    pub at: Instant,
    /// The line was longer than the line cap and was cut to it.
    pub truncated: bool,
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code, if it exited normally.
    pub code: Option<i32>,
    /// Signal number, if it was killed by a signal.
    pub signal: Option<i32>,
}

impl ExitInfo {
    fn from_status(s: ExitStatus) -> Self {
        ExitInfo {
            code: s.code(),
            signal: s.signal(),
        }
    }
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(c), _) => write!(f, "exit code {c}"),
            (None, Some(s)) => write!(f, "killed by signal {s}"),
            (None, None) => write!(f, "unknown exit status"),
        }
    }
}

/// The one outcome of a read with a deadline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadOutcome {
    /// A complete line.
    Line(Line),
    /// The deadline passed. `partial` holds unterminated bytes read so far (capped).
    Timeout { partial: Vec<u8> },
    /// stdout reached EOF (the process exited or closed it). `partial` holds unterminated bytes
    /// written before. `exit` is known if the process has exited by then.
    Closed {
        partial: Vec<u8>,
        exit: Option<ExitInfo>,
    },
    /// The process wrote more than the output cap and was killed.
    OutputLimit { bytes: u64 },
}

#[derive(Default)]
struct Inbox {
    lines: VecDeque<Line>,
    partial: Vec<u8>,
    partial_truncated: bool,
    eof: bool,
    total: u64,
    over_cap: bool,
    dropped_lines: u64,
}

#[derive(Default)]
struct Shared {
    /// Drain tasks (stderr, and stdout for clients) that have reached EOF.
    drains_done: std::sync::atomic::AtomicUsize,
    drained: Notify,
    inbox: Mutex<Inbox>,
    notify: Notify,
    stderr: Mutex<Capped>,
    /// The same stderr, taken piece by piece ([`StderrConsole`]).
    console: Mutex<Console>,
    stdout_extra: Mutex<Capped>,
}

impl Shared {
    /// The shared state of a process whose stderr keeps `stderr_cap` bytes.
    fn new(stderr_cap: usize) -> Shared {
        Shared {
            console: Mutex::new(Console {
                left: stderr_cap,
                cap: stderr_cap,
                ..Console::default()
            }),
            ..Shared::default()
        }
    }
}

/// What a process wrote on stderr since it was last taken ([`StderrConsole::take`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NewStderr {
    /// The text (lossy UTF-8; a character cut by a take is left for the next one).
    pub text: String,
    /// Bytes not kept: the process had written its `stderr_cap` by then.
    pub dropped: u64,
}

impl NewStderr {
    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty() && self.dropped == 0
    }
}

/// Stderr as it arrives, for taking piece by piece: at most `stderr_cap` bytes over the
/// process's whole life, then only counted. Its lock is held while stderr is read from the pipe
/// and kept (here and in the tail), so that a take can read the pipe itself, in order.
#[derive(Default)]
struct Console {
    /// Bytes arrived and not yet taken.
    pending: Vec<u8>,
    /// Bytes the process may still have kept.
    left: usize,
    /// Bytes dropped since the last take.
    dropped: u64,
    /// The stderr pipe's descriptor while its drain task holds it open ([`StderrPipe`]).
    pipe: Option<std::os::fd::RawFd>,
    /// The tail's cap (`stderr_cap`).
    cap: usize,
}

impl Console {
    fn push(&mut self, data: &[u8]) {
        let keep = self.left.min(data.len());
        self.pending.extend_from_slice(&data[..keep]);
        self.left -= keep;
        self.dropped += (data.len() - keep) as u64;
        if self.left == 0 {
            // Nothing more is kept: a character the cap cut can never be completed.
            let half = incomplete_tail(&self.pending);
            self.pending.truncate(self.pending.len() - half);
            self.dropped += half as u64;
        }
    }

    /// What arrived since the last take; unless `all`, a character not complete yet stays.
    fn take(&mut self, all: bool) -> NewStderr {
        let hold = if all {
            0
        } else {
            incomplete_tail(&self.pending)
        };
        let rest = self.pending.split_off(self.pending.len() - hold);
        let bytes = std::mem::replace(&mut self.pending, rest);
        NewStderr {
            text: String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            dropped: std::mem::take(&mut self.dropped),
        }
    }
}

/// What `shared`'s process wrote on stderr since the last take, the pipe read first.
fn take_stderr(shared: &Shared) -> NewStderr {
    let mut console = lock(&shared.console);
    read_stderr_now(&mut console, shared);
    console.take(false)
}

/// Reads per [`read_stderr_now`] (64 × 8 KiB = 512 KiB): a process flooding its stderr cannot
/// hold the lock.
const STDERR_READS: usize = 64;

/// Read what the stderr pipe holds now, without waiting, into the console and the tail (the
/// console's lock held by the caller, so nothing read elsewhere comes between); at most
/// [`STDERR_READS`] reads, the rest left for the drain task.
fn read_stderr_now(console: &mut Console, shared: &Shared) {
    let Some(fd) = console.pipe else {
        return;
    };
    let mut buf = [0u8; 8192];
    for _ in 0..STDERR_READS {
        match nix::unistd::read(fd, &mut buf) {
            Ok(0) => return,
            Ok(n) => {
                console.push(&buf[..n]);
                lock(&shared.stderr).push(&buf[..n], console.cap);
            }
            Err(nix::errno::Errno::EINTR) => {}
            // Nothing more for now (EAGAIN), or a failure the drain task sees too.
            Err(_) => return,
        }
    }
}

/// A process's stderr pipe, held by its drain task: while it is, the console knows its
/// descriptor; when it is dropped, the console forgets it before it is closed.
struct StderrPipe {
    stderr: tokio::process::ChildStderr,
    shared: Arc<Shared>,
}

impl Drop for StderrPipe {
    fn drop(&mut self) {
        lock(&self.shared.console).pipe = None;
    }
}

/// Drain a process's stderr into its tail and its console until its end. Each read happens with
/// the console's lock held, as a take's own read does ([`StderrConsole::take`]), so the two
/// never reorder the bytes.
fn spawn_stderr_drain(stderr: tokio::process::ChildStderr, shared: Arc<Shared>) {
    use std::os::fd::AsRawFd;
    lock(&shared.console).pipe = Some(stderr.as_raw_fd());
    let mut pipe = StderrPipe { stderr, shared };
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            let read = std::future::poll_fn(|cx| {
                let mut console = lock(&pipe.shared.console);
                let mut out = tokio::io::ReadBuf::new(&mut buf);
                match std::pin::Pin::new(&mut pipe.stderr).poll_read(cx, &mut out) {
                    std::task::Poll::Ready(Ok(())) if !out.filled().is_empty() => {
                        let data = out.filled();
                        console.push(data);
                        lock(&pipe.shared.stderr).push(data, console.cap);
                        std::task::Poll::Ready(true)
                    }
                    std::task::Poll::Ready(_) => std::task::Poll::Ready(false),
                    std::task::Poll::Pending => std::task::Poll::Pending,
                }
            })
            .await;
            if !read {
                break;
            }
        }
        let shared = pipe.shared.clone();
        drop(pipe);
        shared
            .drains_done
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        shared.drained.notify_waiters();
    });
}

/// How many bytes at the end of `bytes` begin a UTF-8 character that is not complete yet.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue;
        }
        let needs = match b {
            0xF0.. => 4,
            0xE0.. => 3,
            0xC0.. => 2,
            _ => 1,
        };
        return if needs > back { back } else { 0 };
    }
    0
}

/// A handle on a process's stderr as it arrives, to take piece by piece (a seat's console,
/// request by request), also after the process was finished: [`BotProcess::stderr_console`],
/// [`ClientProcess::stderr_console`]. The capped tail ([`BotProcess::stderr_text`]) is kept
/// apart and is not affected.
#[derive(Clone)]
pub struct StderrConsole(Arc<Shared>);

impl StderrConsole {
    /// What has arrived since the last take: everything the pipe holds now included (read at
    /// once, not left for the drain task), so text the process wrote before it answered on its
    /// other output is never missed.
    pub fn take(&self) -> NewStderr {
        take_stderr(&self.0)
    }

    /// Everything not taken yet, a character cut at the end included (once the process is
    /// finished and its stderr read to its end).
    pub fn take_rest(&self) -> NewStderr {
        let mut console = lock(&self.0.console);
        read_stderr_now(&mut console, &self.0);
        console.take(true)
    }
}

#[derive(Default)]
struct Capped {
    /// The first half of the cap.
    head: Vec<u8>,
    /// The last bytes past the head, at most the other half: a long traceback keeps its end,
    /// the exception itself.
    tail: std::collections::VecDeque<u8>,
    /// Bytes between the two, dropped.
    dropped: u64,
}

impl Capped {
    fn push(&mut self, data: &[u8], cap: usize) {
        let head_cap = cap / 2;
        let tail_cap = cap - head_cap;
        let room = head_cap.saturating_sub(self.head.len());
        let take = room.min(data.len());
        self.head.extend_from_slice(&data[..take]);
        let rest = &data[take..];
        // Only the last `tail_cap` bytes of `rest` can stay; older tail bytes make room.
        let rest = &rest[rest.len().saturating_sub(tail_cap)..];
        self.dropped += (data.len() - take - rest.len()) as u64;
        let over = (self.tail.len() + rest.len()).saturating_sub(tail_cap);
        self.tail.drain(..over);
        self.dropped += over as u64;
        self.tail.extend(rest);
    }

    fn text(&self) -> String {
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        let (a, b) = self.tail.as_slices();
        if self.dropped > 0 {
            s.push_str(&format!(
                "\n[... {} more bytes dropped; the last {} follow]\n",
                self.dropped,
                self.tail.len()
            ));
        }
        let mut tail = Vec::with_capacity(self.tail.len());
        tail.extend_from_slice(a);
        tail.extend_from_slice(b);
        s.push_str(&String::from_utf8_lossy(&tail));
        s
    }
}

#[cfg(test)]
mod console_tests {
    use super::{incomplete_tail, Console, NewStderr};

    fn console(cap: usize) -> Console {
        Console {
            left: cap,
            ..Console::default()
        }
    }

    fn new(text: &str, dropped: u64) -> NewStderr {
        NewStderr {
            text: text.into(),
            dropped,
        }
    }

    #[test]
    fn each_take_has_what_arrived_since_the_last() {
        let mut c = console(100);
        assert!(c.take(false).is_empty());
        c.push(b"ply 1\n");
        c.push(b"more");
        assert_eq!(c.take(false), new("ply 1\nmore", 0));
        assert!(c.take(false).is_empty());
        c.push(b"ply 2\n");
        assert_eq!(c.take(false), new("ply 2\n", 0));
    }

    #[test]
    fn the_cap_holds_for_the_whole_life_and_counts_what_it_drops() {
        let mut c = console(10);
        c.push(b"12345678");
        assert_eq!(c.take(false), new("12345678", 0));
        c.push(b"abcdef");
        assert_eq!(c.take(false), new("ab", 4));
        c.push(b"xyz");
        assert_eq!(c.take(false), new("", 3));
        assert!(c.take(false).is_empty());
    }

    #[test]
    fn a_character_is_never_cut() {
        let e = "é".as_bytes();
        let mut c = console(100);
        c.push(b"a");
        c.push(&e[..1]);
        assert_eq!(c.take(false), new("a", 0), "the half character waits");
        c.push(&e[1..]);
        assert_eq!(c.take(false), new("é", 0));
        c.push(&e[..1]);
        assert_eq!(
            c.take_rest(),
            new("\u{fffd}", 0),
            "at the end it goes as it is"
        );
        // The cap cutting a character drops all of it.
        let mut c = console(2);
        c.push("aé".as_bytes());
        assert_eq!(c.take(false), new("a", 2));
        assert_eq!(incomplete_tail("€".as_bytes()), 0);
        assert_eq!(incomplete_tail(&"€".as_bytes()[..2]), 2);
        assert_eq!(incomplete_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_tail(b"\x80\x80\x80\x80"), 0);
    }

    impl Console {
        fn take_rest(&mut self) -> NewStderr {
            self.take(true)
        }
    }
}

#[cfg(test)]
mod capped_tests {
    use super::Capped;

    fn capped(chunks: &[&[u8]], cap: usize) -> Capped {
        let mut c = Capped::default();
        for ch in chunks {
            c.push(ch, cap);
        }
        c
    }

    #[test]
    fn under_the_cap_everything_is_kept_in_order() {
        let c = capped(&[b"abc", b"def", b"g"], 10);
        assert_eq!(c.text(), "abcdefg");
    }

    #[test]
    fn over_the_cap_the_first_and_last_halves_are_kept() {
        let c = capped(&[b"0123456789", b"abcdefghij", b"XYZ"], 10);
        assert_eq!(c.dropped, 13);
        assert_eq!(
            c.text(),
            "01234\n[... 13 more bytes dropped; the last 5 follow]\nijXYZ"
        );
        let one = capped(&[b"Traceback\n", &[b'.'; 1000], b"\nValueError: bad\n"], 40);
        assert!(one.text().starts_with("Traceback\n"), "{}", one.text());
        assert!(one.text().ends_with("ValueError: bad\n"), "{}", one.text());
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the data inconsistent in a way that
    // matters more than losing the match, so poisoning is ignored.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Resolve arguments that name files relative to `base` (the referee's directory, or the seat's
/// own directory), since the bot runs in its own working directory: `python3 bots/a.py` must
/// still find `bots/a.py`.
fn resolve_args(argv: &[String], base: Option<&Path>) -> Vec<String> {
    let cwd = std::env::current_dir().ok();
    let base = base.map(Path::to_path_buf).or(cwd);
    argv.iter()
        .enumerate()
        .map(|(i, a)| {
            let p = Path::new(a);
            let looks_like_path = i > 0 || a.contains('/');
            if !looks_like_path || a.is_empty() {
                return a.clone();
            }
            let full = match &base {
                Some(base) if p.is_relative() => base.join(p),
                _ if p.is_absolute() => p.to_path_buf(),
                _ => return a.clone(),
            };
            // `a/b/../c` only resolves where `a/b` exists: the sandbox mounts `a/c` alone.
            let full = jail::normalize(&full);
            if full.exists() {
                full.to_string_lossy().into_owned()
            } else {
                a.clone()
            }
        })
        .collect()
}

/// What a bot started with `argv` under `cfg` would be shown besides the system directories
/// (the files and folders mounted read-only into its jail, or allowed by Landlock), or why that
/// is refused ([`SpawnError::Denied`], or [`SpawnError::Launch`] for a launch line that cannot
/// work in the sandbox): the check spawning makes, for a pre-flight that starts nothing. Empty under `SandboxLevel::Off`, where nothing is mounted.
pub fn check_mounts(
    argv: &[String],
    cfg: &SandboxConfig,
) -> Result<Vec<std::path::PathBuf>, SpawnError> {
    if argv.is_empty() {
        return Err(SpawnError::EmptyCommand);
    }
    if cfg.jail.level == SandboxLevel::Off {
        return Ok(Vec::new());
    }
    let argv = resolve_args(argv, cfg.jail.seat_dir.as_deref());
    let report = SandboxReport::for_jail(&cfg.jail);
    let (mounts, map) = jail::mount_plan(&argv, cfg, &report)?;
    let uid = jail::bot_uid(&report, cfg.jail.uid_base);
    jail::check_launch(&argv, cfg, &mounts, &map, &report, uid)?;
    Ok(mounts)
}

/// Mark every descriptor above standard error close-on-exec, just before `exec`: whatever the
/// referee inherited from its own parent without close-on-exec (a supervisor's pipe, a `make`
/// jobserver, a socket) would otherwise reach every bot, which could write into it or read what
/// waits there. Close-on-exec rather than closed: the standard library's exec-error channel must
/// stay open until the `exec` succeeds. `close_range(2)` (Linux 5.11); on an older kernel each
/// descriptor up to the open-file limit.
pub(crate) fn cloexec_above_stderr() -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range(2) with integer arguments; it only changes descriptor flags.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let mut lim: libc::rlimit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) into a stack struct.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let top = lim.rlim_cur.min(1 << 20) as libc::c_int;
    for fd in 3..top {
        // SAFETY: fcntl(2) on a descriptor number; EBADF for one that is not open is ignored.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

pub(crate) fn apply_limits(limits: &ResourceLimits) -> io::Result<()> {
    let set = |res: Resource, v: Option<u64>, hard_extra: u64| -> io::Result<()> {
        if let Some(v) = v {
            setrlimit(res, v, v.saturating_add(hard_extra)).map_err(io::Error::from)?;
        }
        Ok(())
    };
    set(Resource::RLIMIT_CPU, limits.cpu_seconds, 1)?;
    set(Resource::RLIMIT_DATA, limits.memory_bytes, 0)?;
    set(Resource::RLIMIT_NPROC, limits.processes, 0)?;
    set(Resource::RLIMIT_FSIZE, limits.file_size_bytes, 0)?;
    set(Resource::RLIMIT_NOFILE, limits.open_files, 0)?;
    Ok(())
}

/// What keeps a bot confined while it lives: its working directory (without a mount
/// namespace), its uid lease and its cgroup (killed and removed when dropped).
#[derive(Default)]
struct Confinement {
    _workdir: Option<tempfile::TempDir>,
    _uid: Option<UidLease>,
    cgroup: Option<Cgroup>,
    report: Option<SandboxReport>,
    /// Where the working folder is copied when the bot ends (`--keep-seat-files`).
    keep: Option<KeepFiles>,
}

impl Drop for Confinement {
    fn drop(&mut self) {
        // Before the working directory (a field) is removed; the bot's group is dead by now.
        if let Some(keep) = self.keep.take() {
            keep.copy_out();
        }
    }
}

/// A bot's working folder to copy out when it ends: a host directory, or its private `/tmp`
/// held open by a descriptor (the tmpfs lives as long as the descriptor, after the bot's
/// namespace is gone).
struct KeepFiles {
    src: PathBuf,
    _fd: Option<std::os::fd::OwnedFd>,
    dest: PathBuf,
    cap: u64,
    /// Paths (relative to the working folder) that are mount points of the jail's skeleton, not
    /// the bot's files: what the bot is shown that lies in the host's `/tmp`.
    mount_points: Vec<PathBuf>,
}

impl KeepFiles {
    fn from_fd(fd: std::os::fd::OwnedFd, dest: PathBuf, cap: u64, shown: &[PathBuf]) -> KeepFiles {
        use std::os::fd::AsRawFd;
        KeepFiles {
            src: PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd())),
            _fd: Some(fd),
            dest,
            cap,
            mount_points: shown
                .iter()
                .filter_map(|p| p.strip_prefix("/tmp").ok())
                .map(Path::to_path_buf)
                .collect(),
        }
    }

    fn copy_out(self) {
        use std::os::unix::fs::MetadataExt;
        let mut budget = Budget {
            cap: self.cap,
            left: self.cap,
            entries: 0,
            stopped: None,
            skipped: Vec::new(),
        };
        // The working folder's own file system: what is mounted on it (the bot's program, bound
        // under the private /tmp when it lives in the host's /tmp) is not the bot's writing.
        let dev = std::fs::metadata(&self.src).map(|m| m.dev()).unwrap_or(0);
        let walk = Walk {
            dev,
            mount_points: &self.mount_points,
        };
        if let Err(e) = walk.copy(&self.src, &self.dest, Path::new(""), &mut budget) {
            tracing::warn!(
                "cannot copy the bot's working folder to {}: {e}",
                self.dest.display()
            );
        }
        if let Some(why) = &budget.stopped {
            tracing::warn!(
                "{}: copying the bot's working folder stopped after {} files and folders: {why}; \
                 the rest is not kept",
                self.dest.display(),
                budget.entries
            );
        }
        if !budget.skipped.is_empty() {
            let shown = budget.skipped.len().min(10);
            tracing::warn!(
                "{}: {} not copied (not a regular file or folder, or nested too deep): {}{}",
                self.dest.display(),
                budget.skipped.len(),
                budget.skipped[..shown].join(", "),
                if budget.skipped.len() > shown {
                    ", ..."
                } else {
                    ""
                }
            );
        }
    }
}

/// The block every kept file and folder is counted as at least (and a file's size rounded up
/// to): what it takes of the host's disk, whatever its size.
pub const KEPT_BLOCK: u64 = 4096;

/// The most files and folders kept of one bot's working folder, whatever its disk budget (the
/// budget itself allows `disk_bytes / KEPT_BLOCK`: 1,024 under `--disk-mib 4`).
pub const MAX_KEPT_ENTRIES: u64 = 65_536;

/// What is left of a kept working folder's budget.
struct Budget {
    /// The disk budget (`--disk-mib`) in bytes.
    cap: u64,
    /// Bytes of the disk budget left, each entry counted in whole [`KEPT_BLOCK`]s.
    left: u64,
    /// Files and folders copied so far (at most [`MAX_KEPT_ENTRIES`]).
    entries: u64,
    /// Why copying stopped, once it has.
    stopped: Option<String>,
    /// What was passed over (special files, folders nested too deep).
    skipped: Vec<String>,
}

impl Budget {
    /// Take one entry of `bytes` from the budget, or stop copying.
    fn take(&mut self, bytes: u64) -> bool {
        if self.stopped.is_some() {
            return false;
        }
        let cost = bytes.div_ceil(KEPT_BLOCK).max(1) * KEPT_BLOCK;
        if self.entries >= MAX_KEPT_ENTRIES {
            self.stopped = Some(format!("over {MAX_KEPT_ENTRIES} files and folders"));
            return false;
        }
        if cost > self.left {
            self.stopped = Some(format!(
                "over the seat's disk budget of {} bytes (each file and folder counted as at \
                 least {KEPT_BLOCK} bytes)",
                self.cap
            ));
            return false;
        }
        self.left -= cost;
        self.entries += 1;
        true
    }
}

/// Copy the regular files and folders of `src` into `dest` (created) within a [`Budget`];
/// symbolic links are never followed (a bot's link to a host file copies nothing), and special
/// files are skipped.
struct Walk<'a> {
    /// The working folder's file system: what is mounted on it is not the bot's writing.
    dev: u64,
    mount_points: &'a [PathBuf],
}

impl Walk<'_> {
    fn copy(&self, src: &Path, dest: &Path, rel: &Path, budget: &mut Budget) -> io::Result<()> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        std::fs::create_dir_all(dest)?;
        for entry in std::fs::read_dir(src)? {
            if budget.stopped.is_some() {
                break;
            }
            let entry = entry?;
            let name = entry.file_name();
            let (from, to, rel) = (src.join(&name), dest.join(&name), rel.join(&name));
            let meta = std::fs::symlink_metadata(&from)?;
            if meta.dev() != self.dev || self.mount_points.contains(&rel) {
                continue;
            }
            if meta.is_dir() && rel.components().count() < 64 {
                if !budget.take(0) {
                    break;
                }
                self.copy(&from, &to, &rel, budget)?;
                // A folder left empty held only mount points (the jail's skeleton).
                let _ = std::fs::remove_dir(&to);
            } else if meta.is_file() {
                if !budget.take(meta.len()) {
                    break;
                }
                let mut input = std::fs::OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
                    .open(&from)?;
                let _ = std::fs::remove_file(&to);
                let mut output = std::fs::File::create(&to)?;
                // The file may have grown since it was counted: no more than was counted.
                io::copy(&mut io::Read::take(&mut input, meta.len()), &mut output)?;
                // A program the bot built stays runnable (the ladder's builds are kept this way).
                if meta.mode() & 0o111 != 0 {
                    use std::os::unix::fs::PermissionsExt;
                    let mut perms = output.metadata()?.permissions();
                    perms.set_mode(perms.mode() | 0o111);
                    output.set_permissions(perms)?;
                }
            } else {
                budget.skipped.push(to.display().to_string());
            }
        }
        Ok(())
    }
}

impl Confinement {
    /// Whether the kernel killed a process of the bot for exceeding its memory limit.
    fn oom_killed(&self) -> bool {
        self.cgroup.as_ref().is_some_and(|c| c.oom_kills() > 0)
    }

    fn kill(&self) {
        if let Some(cg) = &self.cgroup {
            cg.kill_all();
        }
    }

    /// Whether the spawned process is a keeper (see `jail::child`): the bot is its only child,
    /// the first process of its own PID namespace.
    fn has_keeper(&self) -> bool {
        self.report
            .as_ref()
            .is_some_and(|r| r.layers.contains(&jail::Layer::Namespaces))
    }
}

/// The bot's host pid under a keeper `keeper`: the keeper's only child.
fn namespace_init(keeper: Pid) -> Option<Pid> {
    let k = keeper.as_raw();
    if k <= 0 {
        return None;
    }
    let children = std::fs::read_to_string(format!("/proc/{k}/task/{k}/children")).ok()?;
    let pid: i32 = children.split_whitespace().next()?.parse().ok()?;
    Some(Pid::from_raw(pid))
}

/// Stop the bot now. Under a keeper only the namespace's first process is killed (the kernel
/// then kills everything else in the namespace): the keeper lives on to reap it and exit as it
/// ended, so a bot that had just exited by itself is reported with its own exit code and not as
/// killed. Killing the keeper too, as a group kill does, loses that status when it is caught
/// between the bot's exit and its own. Otherwise (or when the keeper is already gone) the group
/// and the cgroup are killed.
fn stop_bot(pgid: Pid, confinement: &Confinement) {
    if confinement.has_keeper() {
        if let Some(init) = namespace_init(pgid) {
            if nix::sys::signal::kill(init, Signal::SIGKILL).is_ok() {
                return;
            }
        }
    }
    kill_group(pgid);
    confinement.kill();
}

struct Sandboxed {
    child: Child,
    pgid: Pid,
    confinement: Confinement,
    /// With [`jail::SeatNet::Own`]: the seat's listener, from inside the bot's namespace.
    listener: Option<std::os::fd::OwnedFd>,
    /// A TCP client's `connect` calls refused for a port it does not own (`connect_watch`).
    refused: Option<Arc<crate::RefusedConnects>>,
}

/// The bot's command: no shell, a scrubbed environment (the pass-through variables, `PATH`,
/// then `HOME` and `TMPDIR` at `home`, then the configured ones), piped stdout and stderr, its
/// own process group.
fn bot_command(
    argv: &[String],
    cfg: &SandboxConfig,
    home: &Path,
    path: Option<&str>,
    stdin: Stdio,
) -> std::process::Command {
    let mut std_cmd = std::process::Command::new(&argv[0]);
    std_cmd.args(&argv[1..]).env_clear();
    for key in &cfg.env_passthrough {
        if let Some(v) = std::env::var_os(key) {
            std_cmd.env(key, v);
        }
    }
    if let Some(path) = path {
        std_cmd.env("PATH", path);
    }
    std_cmd.env("HOME", home).env("TMPDIR", home);
    for (k, v) in &cfg.env {
        std_cmd.env(k, v);
    }
    std_cmd
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    std_cmd
}

fn spawn_sandboxed(
    argv: &[String],
    cfg: &SandboxConfig,
    stdin: Stdio,
    net: jail::SeatNet,
) -> Result<Sandboxed, SpawnError> {
    let argv = resolve_args(argv, cfg.jail.seat_dir.as_deref());
    let program = argv.first().ok_or(SpawnError::EmptyCommand)?;
    if cfg.jail.level == SandboxLevel::Off {
        jail::SandboxReport::for_jail(&cfg.jail).check_cpu_quota(&cfg.jail)?;
        return spawn_unconfined(&argv, cfg, stdin);
    }
    let (prepared, status_tx) = jail::prepare(&argv, cfg, net)?;
    let jail::Prepared {
        report,
        mut child,
        status_rx,
        uid,
        cgroup,
        host_workdir,
        home,
        path,
        listener_rx,
        listener_tx,
        tmp_rx,
        tmp_tx,
        watch_rx,
        watch_tx,
        watch_ports,
        netns,
        map,
    } = prepared;
    // The command line and the environment name the bot's own files where it sees them.
    let jail_argv: Vec<String> = argv.iter().map(|a| map.rewrite(a)).collect();
    let mut jail_cfg = cfg.clone();
    for (_, v) in &mut jail_cfg.env {
        *v = map.rewrite(v);
    }
    let mut std_cmd = bot_command(&jail_argv, &jail_cfg, &home, path.as_deref(), stdin);
    // SAFETY: the closure runs in the forked child before exec and only makes system calls on
    // values prepared before the fork (see jail::child).
    unsafe {
        std_cmd.pre_exec(move || jail::run_child(&mut child));
    }
    let mut cmd = Command::from(std_cmd);
    cmd.kill_on_drop(true);
    let spawned = cmd.spawn();
    drop(status_tx);
    drop(listener_tx);
    drop(tmp_tx);
    drop(watch_tx);
    drop(netns);
    let failed_step = jail::read_status(&status_rx);
    let child = match (spawned, failed_step) {
        (Ok(child), None) => child,
        (Ok(mut child), Some((stage, errno))) => {
            let _ = child.start_kill();
            return Err(SpawnError::Confine {
                step: stage.describe(),
                source: io::Error::from_raw_os_error(errno),
            });
        }
        (Err(_), Some((stage, errno))) => {
            return Err(SpawnError::Confine {
                step: stage.describe(),
                source: io::Error::from_raw_os_error(errno),
            })
        }
        (Err(source), None) => {
            return Err(SpawnError::Start {
                program: program.clone(),
                source,
            })
        }
    };
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    let keep = cfg.keep_files.clone().and_then(|dest| match &tmp_rx {
        Some(rx) => match jail::receive_fd(rx) {
            Ok(fd) => {
                // Mount points the bot's `/tmp` may hold: paths shown where they are.
                let shown: Vec<PathBuf> = jail::bot_mounts(&argv, cfg)
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|p| !map.moves(p))
                    .collect();
                Some(KeepFiles::from_fd(fd, dest, cfg.jail.disk_bytes, &shown))
            }
            Err(e) => {
                tracing::warn!("the bot's working folder will not be kept: {e}");
                None
            }
        },
        None => Some(KeepFiles {
            src: home.clone(),
            _fd: None,
            dest,
            cap: cfg.jail.disk_bytes,
            mount_points: Vec::new(),
        }),
    });
    let confinement = Confinement {
        _workdir: host_workdir,
        _uid: uid,
        cgroup,
        report: Some(report),
        keep,
    };
    // A descriptor the bot's jail sent before it ran, or the bot stopped and the spawn failed.
    let take = |rx: &Option<std::os::fd::OwnedFd>, what: &str| match rx {
        Some(rx) => match jail::receive_fd(rx) {
            Ok(fd) => Ok(Some(fd)),
            Err(e) => {
                kill_group(Pid::from_raw(pid));
                confinement.kill();
                Err(SpawnError::Sandbox(format!("{what} did not arrive: {e}")))
            }
        },
        None => Ok(None),
    };
    let listener = take(
        &listener_rx,
        "the seat's listener from the bot's network namespace",
    )?;
    // Every `connect` of the bot now waits for an answer: without the watch's listener it
    // could never connect.
    let refused = take(&watch_rx, "the watch of the client's connections")?
        .map(|fd| crate::connect_watch::watch(fd, watch_ports));
    Ok(Sandboxed {
        child,
        pgid: Pid::from_raw(pid),
        confinement,
        listener,
        refused,
    })
}

/// The bare tier (`SandboxLevel::Off`): process group, scrubbed environment, temporary working
/// directory and rlimits only.
fn spawn_unconfined(
    argv: &[String],
    cfg: &SandboxConfig,
    stdin: Stdio,
) -> Result<Sandboxed, SpawnError> {
    let program = argv.first().ok_or(SpawnError::EmptyCommand)?;
    let (workdir, tmp): (PathBuf, Option<tempfile::TempDir>) = match &cfg.workdir {
        Some(d) => (d.clone(), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("kakehiki-bot-")
                .tempdir()
                .map_err(SpawnError::Workdir)?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    // Unconfined (trusted bots only), the bot sees the host anyway: the referee's `PATH`.
    let host_path = std::env::var("PATH").ok();
    let mut std_cmd = bot_command(argv, cfg, &workdir, host_path.as_deref(), stdin);
    std_cmd.current_dir(cfg.jail.seat_dir.as_ref().unwrap_or(&workdir));
    let limits = cfg.limits.clone();
    // SAFETY: the closure runs in the forked child before exec and only calls setrlimit, which is
    // async-signal-safe; it allocates nothing.
    unsafe {
        std_cmd.pre_exec(move || {
            apply_limits(&limits)?;
            cloexec_above_stderr()
        });
    }
    let mut cmd = Command::from(std_cmd);
    cmd.kill_on_drop(true);
    let child = cmd.spawn().map_err(|source| SpawnError::Start {
        program: program.clone(),
        source,
    })?;
    let pid = child.id().map(|p| p as i32).unwrap_or(0);
    let keep = cfg.keep_files.clone().map(|dest| KeepFiles {
        src: workdir.clone(),
        _fd: None,
        dest,
        cap: cfg.jail.disk_bytes,
        mount_points: Vec::new(),
    });
    Ok(Sandboxed {
        child,
        pgid: Pid::from_raw(pid),
        confinement: Confinement {
            _workdir: tmp,
            _uid: None,
            cgroup: None,
            report: None,
            keep,
        },
        listener: None,
        refused: None,
    })
}

fn kill_group(pgid: Pid) {
    if pgid.as_raw() > 0 {
        // ESRCH (group already gone) is the expected case after a clean exit.
        let _ = killpg(pgid, Signal::SIGKILL);
    }
}

/// Whether a live (non-zombie) process is in group `pgid`. Reads `/proc` where it exists, since
/// zombies awaiting their reaper still count for `killpg(pgid, 0)`; falls back to that elsewhere.
fn group_alive(pgid: Pid) -> bool {
    if pgid.as_raw() <= 0 {
        return false;
    }
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return killpg(pgid, None).is_ok();
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(close) = stat.rfind(')') else {
            continue;
        };
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next();
        let _ppid = rest.next();
        let pgrp = rest.next().and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid.as_raw()) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

/// Drain a client's stdout into its capped buffer until its end (its stderr:
/// [`spawn_stderr_drain`]).
fn spawn_drain<R: AsyncRead + Unpin + Send + 'static>(mut r: R, shared: Arc<Shared>, cap: usize) {
    tokio::spawn(async move {
        let mut buf = vec![0u8; 8192];
        loop {
            match r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => lock(&shared.stdout_extra).push(&buf[..n], cap),
            }
        }
        shared
            .drains_done
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        shared.drained.notify_waiters();
    });
}

/// How `child` exited, if it does within `within`.
async fn wait_child(child: &mut Child, within: Duration) -> Option<ExitInfo> {
    match tokio::time::timeout(within, child.wait()).await {
        Ok(Ok(status)) => Some(ExitInfo::from_status(status)),
        _ => None,
    }
}

/// End a process: give it `grace` to exit (unless its exit is `known`), SIGKILL its whole group
/// (children that outlive it included), and reap it.
async fn end_group(
    child: &mut Child,
    pgid: Pid,
    confinement: &Confinement,
    grace: Duration,
    known: Option<ExitInfo>,
) -> Option<ExitInfo> {
    let mut exit = match known {
        Some(e) => Some(e),
        None => wait_child(child, grace).await,
    };
    if exit.is_none() {
        // Kill the bot first and let its keeper report how it ended (killed, or its own exit if
        // it was ending right then); the group kill below takes whatever is left.
        stop_bot(pgid, confinement);
        exit = wait_child(child, Duration::from_millis(500)).await;
    }
    kill_group(pgid);
    confinement.kill();
    match exit {
        Some(e) => Some(e),
        None => wait_child(child, Duration::from_secs(5)).await,
    }
}

/// Wait until `count` drain tasks have reached EOF, at most `within`. After the process group
/// is dead the pipes close, so this is quick; the bound covers a child that escaped the group.
async fn wait_drained(shared: &Shared, count: usize, within: Duration) {
    let _ = tokio::time::timeout(within, async {
        loop {
            let notified = shared.drained.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if shared.drains_done.load(std::sync::atomic::Ordering::SeqCst) >= count {
                return;
            }
            notified.await;
        }
    })
    .await;
}

fn spawn_line_reader<R: AsyncRead + Unpin + Send + 'static>(
    mut r: R,
    shared: Arc<Shared>,
    cfg: &SandboxConfig,
    pgid: Pid,
) {
    let line_cap = cfg.line_cap.max(1);
    let output_cap = cfg.output_cap;
    let pending_cap = cfg.pending_lines_cap.max(1);
    tokio::spawn(async move {
        let mut buf = vec![0u8; 16384];
        loop {
            let n = match r.read(&mut buf).await {
                Ok(0) | Err(_) => 0,
                Ok(n) => n,
            };
            let at = Instant::now();
            {
                let mut inbox = lock(&shared.inbox);
                if n == 0 {
                    inbox.eof = true;
                    drop(inbox);
                    shared.notify.notify_waiters();
                    return;
                }
                inbox.total += n as u64;
                if inbox.total > output_cap {
                    inbox.over_cap = true;
                    inbox.eof = true;
                    drop(inbox);
                    kill_group(pgid);
                    shared.notify.notify_waiters();
                    return;
                }
                let mut rest = &buf[..n];
                while !rest.is_empty() {
                    match rest.iter().position(|&b| b == b'\n') {
                        Some(i) => {
                            let piece = &rest[..i];
                            let room = line_cap.saturating_sub(inbox.partial.len());
                            if piece.len() > room {
                                inbox.partial_truncated = true;
                            }
                            let take = room.min(piece.len());
                            inbox.partial.extend_from_slice(&piece[..take]);
                            let bytes = std::mem::take(&mut inbox.partial);
                            let truncated = std::mem::take(&mut inbox.partial_truncated);
                            // Keep the oldest lines: the first line after a request is its reply.
                            if inbox.lines.len() >= pending_cap {
                                inbox.dropped_lines += 1;
                            } else {
                                inbox.lines.push_back(Line {
                                    bytes,
                                    at,
                                    truncated,
                                });
                            }
                            rest = &rest[i + 1..];
                        }
                        None => {
                            let room = line_cap.saturating_sub(inbox.partial.len());
                            if rest.len() > room {
                                inbox.partial_truncated = true;
                            }
                            let take = room.min(rest.len());
                            inbox.partial.extend_from_slice(&rest[..take]);
                            rest = &[];
                        }
                    }
                }
            }
            shared.notify.notify_waiters();
        }
    });
}

/// A bot process speaking a line protocol on stdin/stdout.
pub struct BotProcess {
    child: Child,
    pgid: Pid,
    stdin: Option<ChildStdin>,
    shared: Arc<Shared>,
    exit: Option<ExitInfo>,
    confinement: Confinement,
}

impl BotProcess {
    /// Start `argv` (no shell) in the sandbox.
    pub fn spawn(argv: &[String], cfg: &SandboxConfig) -> Result<BotProcess, SpawnError> {
        let Sandboxed {
            mut child,
            pgid,
            confinement,
            ..
        } = spawn_sandboxed(argv, cfg, Stdio::piped(), jail::SeatNet::Pipe)?;
        let shared = Arc::new(Shared::new(cfg.stderr_cap));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        spawn_line_reader(stdout, shared.clone(), cfg, pgid);
        spawn_stderr_drain(stderr, shared.clone());
        let stdin = child.stdin.take();
        Ok(BotProcess {
            child,
            pgid,
            stdin,
            shared,
            exit: None,
            confinement,
        })
    }

    /// The process group id (equal to the bot's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// Write `bytes` to the bot's stdin in one write call and flush. An error means the bot
    /// closed its stdin or exited.
    pub async fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::BrokenPipe, "stdin already closed"))?;
        stdin.write_all(bytes).await?;
        stdin.flush().await
    }

    /// Close the bot's stdin (it sees EOF).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Wait for the next complete line until `deadline`.
    pub async fn read_line(&mut self, deadline: Instant) -> ReadOutcome {
        let shared = self.shared.clone();
        loop {
            let notified = shared.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let closed_partial = {
                let mut inbox = lock(&shared.inbox);
                // A reply counts only if its newline was read by the deadline; a later one
                // stays queued (the driver sees it as late, unsolicited output).
                if let Some(line) = inbox.lines.front() {
                    if line.at > deadline {
                        return ReadOutcome::Timeout {
                            partial: Vec::new(),
                        };
                    }
                    let line = inbox.lines.pop_front().expect("front exists");
                    return ReadOutcome::Line(line);
                }
                if inbox.over_cap {
                    return ReadOutcome::OutputLimit { bytes: inbox.total };
                }
                inbox.eof.then(|| std::mem::take(&mut inbox.partial))
            };
            if let Some(partial) = closed_partial {
                let exit = self.wait_exit(Duration::from_millis(100)).await;
                return ReadOutcome::Closed { partial, exit };
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(deadline) => {
                    let mut inbox = lock(&shared.inbox);
                    if inbox.lines.front().is_some_and(|l| l.at <= deadline) {
                        let line = inbox.lines.pop_front().expect("front exists");
                        return ReadOutcome::Line(line);
                    }
                    if !inbox.lines.is_empty() {
                        return ReadOutcome::Timeout { partial: Vec::new() };
                    }
                    return ReadOutcome::Timeout { partial: inbox.partial.clone() };
                }
            }
        }
    }

    /// Take the unterminated bytes buffered so far (used when a deadline passes with text that
    /// lacks its newline).
    pub fn take_partial(&mut self) -> Vec<u8> {
        std::mem::take(&mut lock(&self.shared.inbox).partial)
    }

    /// Remove and return every complete line received but not yet read (output that arrived
    /// while no reply was expected), plus the number of lines dropped because too many queued.
    pub fn take_unsolicited(&mut self) -> (Vec<Line>, u64) {
        let mut inbox = lock(&self.shared.inbox);
        let lines = inbox.lines.drain(..).collect();
        let dropped = std::mem::take(&mut inbox.dropped_lines);
        (lines, dropped)
    }

    /// The stdout byte count, if the process exceeded its output cap (and was killed for it).
    pub fn output_exceeded(&self) -> Option<u64> {
        let inbox = lock(&self.shared.inbox);
        inbox.over_cap.then_some(inbox.total)
    }

    /// Total stdout bytes received.
    pub fn stdout_bytes(&self) -> u64 {
        lock(&self.shared.inbox).total
    }

    /// The captured stderr (capped; a note says how much was dropped).
    pub fn stderr_text(&self) -> String {
        lock(&self.shared.stderr).text()
    }

    /// Its stderr as it arrives, to take piece by piece (also after [`BotProcess::finish`]).
    pub fn stderr_console(&self) -> StderrConsole {
        StderrConsole(self.shared.clone())
    }

    /// What it wrote on stderr since the last take ([`StderrConsole::take`]).
    pub fn take_stderr(&self) -> NewStderr {
        take_stderr(&self.shared)
    }

    /// SIGKILL the bot and every process it started (see `stop_bot`); its exit is collected
    /// when it is finished.
    pub fn kill(&mut self) {
        stop_bot(self.pgid, &self.confinement);
    }

    /// The confinement layers this process runs under (`None` at sandbox level off).
    pub fn sandbox(&self) -> Option<&SandboxReport> {
        self.confinement.report.as_ref()
    }

    /// Whether the kernel killed one of its processes for exceeding the memory limit (known
    /// where the bot has a cgroup).
    pub fn oom_killed(&self) -> bool {
        self.confinement.oom_killed()
    }

    /// Whether any process of the bot's group is still alive.
    pub fn group_alive(&self) -> bool {
        group_alive(self.pgid)
    }

    async fn wait_exit(&mut self, within: Duration) -> Option<ExitInfo> {
        if self.exit.is_none() {
            self.exit = wait_child(&mut self.child, within).await;
        }
        self.exit
    }

    /// End the bot: close stdin, give it `grace` to exit, then SIGKILL the whole group (children
    /// that outlive it included) and reap it.
    pub async fn finish(mut self, grace: Duration) -> Option<ExitInfo> {
        self.close_stdin();
        self.exit = end_group(
            &mut self.child,
            self.pgid,
            &self.confinement,
            grace,
            self.exit,
        )
        .await;
        self.exit
    }

    /// [`BotProcess::finish`], then the complete captured stderr: it waits for the stderr pipe
    /// to be read to its end, so nothing the bot wrote before it ended is lost.
    pub async fn finish_with_stderr(self, grace: Duration) -> (Option<ExitInfo>, String) {
        let shared = self.shared.clone();
        let exit = self.finish(grace).await;
        wait_drained(&shared, 1, Duration::from_millis(500)).await;
        let text = lock(&shared.stderr).text();
        (exit, text)
    }
}

impl Drop for BotProcess {
    fn drop(&mut self) {
        kill_group(self.pgid);
    }
}

/// The port a seat's client is given when 0 is asked for in a network of its own.
const DEFAULT_SEAT_PORT: u16 = 10000;

/// Where a launched TCP client reaches its seat ([`ClientProcess::spawn_seat`]).
#[derive(Debug)]
pub struct SeatPort {
    /// The listener the client's connection arrives on (non-blocking). Accept the seat's one
    /// connection, then drop it: further connections are refused by the kernel.
    pub listener: std::net::TcpListener,
    /// The address the client was told to connect to.
    pub addr: SocketAddr,
    /// The listener is inside the client's own network namespace.
    pub own_network: bool,
}

/// A process the referee launches but does not talk to over pipes (a TCP client).
pub struct ClientProcess {
    child: Child,
    pgid: Pid,
    shared: Arc<Shared>,
    confinement: Confinement,
    refused: Option<Arc<crate::RefusedConnects>>,
    /// Its command line, as given (before the sandbox's path rewriting).
    argv: Vec<String>,
}

impl ClientProcess {
    /// Start `argv` (no shell) in the sandbox with stdin closed; stdout and stderr are drained
    /// into capped buffers. Where Landlock has TCP rules, the client may connect only to the
    /// ports in `cfg.jail.tcp_connect` (none when empty) and bind none.
    pub fn spawn(argv: &[String], cfg: &SandboxConfig) -> Result<ClientProcess, SpawnError> {
        let sandboxed = spawn_sandboxed(argv, cfg, Stdio::null(), jail::SeatNet::Host)?;
        Ok(ClientProcess::drained(sandboxed, cfg, argv))
    }

    /// Start `argv` as [`ClientProcess::spawn`] does, but with no network at all, as a pipe
    /// bot: an empty network namespace where the sandbox has namespaces (no interface, its
    /// loopback down), and otherwise Landlock's and seccomp's rules with no TCP port allowed.
    /// For work that must not reach anything, such as a ladder's build of a contestant's
    /// sources.
    pub fn spawn_offline(
        argv: &[String],
        cfg: &SandboxConfig,
    ) -> Result<ClientProcess, SpawnError> {
        let mut cfg = cfg.clone();
        cfg.jail.tcp_connect.clear();
        let sandboxed = spawn_sandboxed(argv, &cfg, Stdio::null(), jail::SeatNet::Pipe)?;
        Ok(ClientProcess::drained(sandboxed, &cfg, argv))
    }

    /// Start the client of a TCP seat with the seat's listener. Where the sandbox has
    /// namespaces, the client gets a network namespace of its own whose loopback holds only
    /// that listener, on `port` (a contest's fixed port is free there): no other port, address,
    /// protocol or process exists for it, and nothing outside can reach it. Otherwise (sandbox
    /// `off`, or no namespaces) the listener is a free loopback port of the host, and Landlock,
    /// where it has TCP rules, lets the client connect to that port only. `argv_for` gets the
    /// address the client is to connect to (for `{host}` and `{port}`).
    pub fn spawn_seat(
        argv_for: impl FnOnce(SocketAddr) -> Vec<String>,
        cfg: &SandboxConfig,
        port: u16,
    ) -> Result<(ClientProcess, SeatPort), SpawnError> {
        let own = cfg.jail.level != SandboxLevel::Off
            && jail::capabilities().has(crate::Layer::Namespaces);
        let (sandboxed, listener, addr, argv) = if own {
            let port = if port == 0 { DEFAULT_SEAT_PORT } else { port };
            let addr = SocketAddr::from(([127, 0, 0, 1], port));
            let argv = argv_for(addr);
            let mut sandboxed =
                spawn_sandboxed(&argv, cfg, Stdio::null(), jail::SeatNet::Own { port })?;
            let fd = sandboxed.listener.take().ok_or_else(|| {
                SpawnError::Sandbox("no listener came from the bot's network namespace".into())
            })?;
            (sandboxed, std::net::TcpListener::from(fd), addr, argv)
        } else {
            let listener =
                std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(SpawnError::Host)?;
            let addr = listener.local_addr().map_err(SpawnError::Host)?;
            let mut cfg = cfg.clone();
            cfg.jail.tcp_connect = vec![addr.port()];
            let argv = argv_for(addr);
            let sandboxed = spawn_sandboxed(&argv, &cfg, Stdio::null(), jail::SeatNet::Host)?;
            (sandboxed, listener, addr, argv)
        };
        listener.set_nonblocking(true).map_err(SpawnError::Host)?;
        Ok((
            ClientProcess::drained(sandboxed, cfg, &argv),
            SeatPort {
                listener,
                addr,
                own_network: own,
            },
        ))
    }

    fn drained(sandboxed: Sandboxed, cfg: &SandboxConfig, argv: &[String]) -> ClientProcess {
        let Sandboxed {
            mut child,
            pgid,
            confinement,
            refused,
            ..
        } = sandboxed;
        let shared = Arc::new(Shared::new(cfg.stderr_cap));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        spawn_drain(stdout, shared.clone(), cfg.stderr_cap);
        spawn_stderr_drain(stderr, shared.clone());
        ClientProcess {
            child,
            pgid,
            shared,
            confinement,
            refused,
            argv: argv.to_vec(),
        }
    }

    /// Whether its command line names `port` (the seat's, given through `{port}` or `{url}`).
    pub fn told_port(&self, port: u16) -> bool {
        let port = port.to_string();
        self.argv.iter().any(|a| a.contains(&port))
    }

    /// The connections the client tried to a port other than its seat's, refused by the
    /// referee ([`crate::RefusedConnects`]); `None` where they are not watched (no seccomp, or a
    /// kernel before 5.5).
    pub fn refused_connects(&self) -> Option<crate::Refused> {
        self.refused.as_ref().map(|r| r.get())
    }

    /// The process group id.
    pub fn pgid(&self) -> i32 {
        self.pgid.as_raw()
    }

    /// Captured stderr (capped).
    pub fn stderr_text(&self) -> String {
        lock(&self.shared.stderr).text()
    }

    /// Its stderr as it arrives, to take piece by piece (also after [`ClientProcess::finish`]).
    pub fn stderr_console(&self) -> StderrConsole {
        StderrConsole(self.shared.clone())
    }

    /// What it wrote on stderr since the last take ([`StderrConsole::take`]).
    pub fn take_stderr(&self) -> NewStderr {
        take_stderr(&self.shared)
    }

    /// Captured stdout (capped).
    pub fn stdout_text(&self) -> String {
        lock(&self.shared.stdout_extra).text()
    }

    /// The exit status, if the process has exited.
    pub fn try_exit(&mut self) -> Option<ExitInfo> {
        self.child
            .try_wait()
            .ok()
            .flatten()
            .map(ExitInfo::from_status)
    }

    /// SIGKILL the bot and every process it started (see `stop_bot`); its exit is collected
    /// when it is finished.
    pub fn kill(&mut self) {
        stop_bot(self.pgid, &self.confinement);
    }

    /// Give the client `within` to exit by itself; its exit status if it did (it is left
    /// running otherwise: [`ClientProcess::finish`] stops it).
    pub async fn exit_within(&mut self, within: Duration) -> Option<ExitInfo> {
        wait_child(&mut self.child, within).await
    }

    /// The confinement layers this process runs under (`None` at sandbox level off).
    pub fn sandbox(&self) -> Option<&SandboxReport> {
        self.confinement.report.as_ref()
    }

    /// Whether the kernel killed one of its processes for exceeding the memory limit (known
    /// where the bot has a cgroup).
    pub fn oom_killed(&self) -> bool {
        self.confinement.oom_killed()
    }

    /// Whether any process of the group is still alive.
    pub fn group_alive(&self) -> bool {
        group_alive(self.pgid)
    }

    /// Give the client `grace` to exit by itself, then kill its group and reap it.
    pub async fn finish(mut self, grace: Duration) -> Option<ExitInfo> {
        end_group(&mut self.child, self.pgid, &self.confinement, grace, None).await
    }

    /// [`ClientProcess::finish`], then the complete captured stderr and stdout (each read to its
    /// end, so nothing the client wrote before it ended is lost).
    pub async fn finish_with_output(self, grace: Duration) -> (Option<ExitInfo>, String, String) {
        let shared = self.shared.clone();
        let exit = self.finish(grace).await;
        wait_drained(&shared, 2, Duration::from_millis(500)).await;
        let stderr = lock(&shared.stderr).text();
        let stdout = lock(&shared.stdout_extra).text();
        (exit, stderr, stdout)
    }
}

impl Drop for ClientProcess {
    fn drop(&mut self) {
        kill_group(self.pgid);
    }
}
