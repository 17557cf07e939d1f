//! Preparing one bot's confinement in the referee, before the fork.

use std::collections::BTreeSet;
use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

use super::child::{Bind, ChildPlan, FileCopy, Namespaces, Overlay, SeatListen, Stage, UserNs};
use super::filters::{self, LandlockSpec};
use super::{
    capabilities, Cgroup, Layer, PathMap, SandboxLevel, SandboxReport, UidLease, SYSTEM_DIRS,
};
use crate::sandbox::SandboxConfig;
use crate::SpawnError;

/// The largest of a bot's own files copied into its jail at each start (a bot's script, jar or
/// compiled program); a larger one is bound, and its mount names its host path.
const MAX_COPIED_FILE: u64 = 64 << 20;

/// Device files every bot may use.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The network a bot process gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SeatNet {
    /// None at all: a stdin/stdout seat (an empty network namespace).
    Pipe,
    /// The host's network, where Landlock limits TCP `connect` to `JailConfig::tcp_connect` and
    /// forbids `bind` (a TCP client where the bot cannot have a network namespace).
    Host,
    /// A network namespace of its own whose loopback holds only the seat's listener on `port`,
    /// opened inside it before the bot runs and handed to the referee.
    Own { port: u16 },
}

/// What the referee keeps while the bot lives, and what the fork needs.
pub(crate) struct Prepared {
    pub report: SandboxReport,
    pub child: ChildPlan,
    /// Read end of the status pipe.
    pub status_rx: OwnedFd,
    pub uid: Option<UidLease>,
    pub cgroup: Option<Cgroup>,
    /// A host working directory (tiers without a mount namespace).
    pub host_workdir: Option<tempfile::TempDir>,
    /// HOME/TMPDIR for the bot.
    pub home: PathBuf,
    /// The bot's `PATH` (`launch::bot_path`): no folder of the referee's own `PATH` but those
    /// shown to the bot.
    pub path: Option<String>,
    /// With [`SeatNet::Own`]: the referee's end of the socket pair the seat's listener arrives on.
    pub listener_rx: Option<OwnedFd>,
    /// The keeper's end of that pair: the referee closes its copy once spawning is over.
    pub listener_tx: Option<OwnedFd>,
    /// With `keep_files` and a private root: the referee's end of the pair the bot's `/tmp`
    /// arrives on, and the bot's end (closed by the referee once spawning is over).
    pub tmp_rx: Option<OwnedFd>,
    pub tmp_tx: Option<OwnedFd>,
    /// A TCP client's: the referee's end of the pair its `connect` watch arrives on, the bot's
    /// end (closed by the referee once spawning is over), and the ports it may connect to.
    pub watch_rx: Option<OwnedFd>,
    pub watch_tx: Option<OwnedFd>,
    pub watch_ports: Vec<u16>,
    /// A pipe bot's network namespace from the pool, which the keeper joins (`setns`); the
    /// referee's handle is dropped once spawning is over, and the namespace ends with the bot.
    pub netns: Option<OwnedFd>,
    /// Where the bot's own paths appear in its private root (empty without one): the command
    /// line and the environment are rewritten with it.
    pub map: PathMap,
}

fn cstr(p: &Path) -> Result<CString, SpawnError> {
    CString::new(p.as_os_str().as_bytes())
        .map_err(|_| SpawnError::Sandbox(format!("path {} contains a NUL byte", p.display())))
}

fn host_err(what: &str, e: impl std::fmt::Display) -> SpawnError {
    SpawnError::Sandbox(format!("{what}: {e}"))
}

/// What a bot's command line names, to be mounted: each file argument itself (not its
/// directory), each directory argument (`java -cp /bots/java Main`), the program itself (and the
/// file it resolves to); and apart, for a program given by path in a `bin` directory, its
/// prefix (an interpreter's installation or a venv: a toolchain, shown at its own path, whose
/// programs name their libraries by it).
fn program_paths(argv: &[String]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut out = Vec::new();
    let mut prefixes = Vec::new();
    // Absolute paths of files inside a shell command (`sh -c 'sleep 1; exec python3 /bots/a.py'`)
    // name files too.
    for a in argv.iter().skip(1) {
        if !a.contains(char::is_whitespace) {
            continue;
        }
        for token in super::shell_words(a) {
            let p = super::normalize(Path::new(token));
            if token.starts_with('/') && p.is_file() {
                if let Ok(real) = std::fs::canonicalize(&p) {
                    out.push(real);
                }
                out.push(p);
            }
        }
    }
    for (i, a) in argv.iter().enumerate() {
        let p = Path::new(a);
        if !p.is_absolute() || !p.exists() {
            continue;
        }
        let mut candidates = vec![p.to_path_buf()];
        // A symbolic link is recreated in the jail: what it points to is mounted as well.
        if let Ok(real) = std::fs::canonicalize(p) {
            if real != p {
                candidates.push(real);
            }
        }
        for c in candidates {
            if i == 0 && !c.is_dir() {
                let dir = c.parent();
                if let Some(prefix) = dir
                    .filter(|d| d.file_name().is_some_and(|n| n == "bin"))
                    .and_then(Path::parent)
                {
                    prefixes.push(prefix.to_path_buf());
                }
            }
            out.push(c);
        }
    }
    (out, prefixes)
}

/// Why a path the bot would see is refused: it contains, is or lies inside `denied`.
fn overlaps(mount: &Path, denied: &Path) -> bool {
    mount.starts_with(denied) || denied.starts_with(mount)
}

/// `p` and, where it differs, the path it resolves to (for a path that does not exist yet, its
/// directory resolved).
fn forms(p: &Path) -> Vec<PathBuf> {
    let lexical = super::normalize(p);
    let real = std::fs::canonicalize(&lexical).ok().or_else(|| {
        let name = lexical.file_name()?;
        Some(std::fs::canonicalize(lexical.parent()?).ok()?.join(name))
    });
    let mut out = vec![lexical];
    if let Some(r) = real {
        if r != out[0] {
            out.push(r);
        }
    }
    out
}

/// Refuse mounts that would show the bot what it must not see (`JailConfig::denied`).
fn check_denied(mounts: &[PathBuf], jail: &super::JailConfig) -> Result<(), SpawnError> {
    for d in &jail.denied {
        let denied_forms = forms(&d.path);
        for m in mounts {
            let hit = forms(m)
                .iter()
                .any(|mf| denied_forms.iter().any(|df| overlaps(mf, df)));
            if hit {
                return Err(SpawnError::Denied {
                    mount: m.clone(),
                    denied: d.path.clone(),
                    what: d.what.clone(),
                });
            }
        }
    }
    Ok(())
}

/// Everything mounted read-only for a bot running `argv` (resolved) under `cfg` besides the
/// system directories (host paths), checked against `cfg.jail.denied`.
pub(crate) fn bot_mounts(argv: &[String], cfg: &SandboxConfig) -> Result<Vec<PathBuf>, SpawnError> {
    Ok(mount_plan_on(argv, cfg)?.0)
}

/// [`bot_mounts`], and where the bot's own paths among them appear (moved only where `report`
/// has a private root).
pub(crate) fn mount_plan(
    argv: &[String],
    cfg: &SandboxConfig,
    report: &SandboxReport,
) -> Result<(Vec<PathBuf>, PathMap), SpawnError> {
    let (mounts, map) = mount_plan_on(argv, cfg)?;
    if report.layers.contains(&Layer::Namespaces) {
        Ok((mounts, map))
    } else {
        Ok((mounts, PathMap::default()))
    }
}

/// [`bot_mounts`], and where the bot's own paths among them appear in its private root: the
/// organiser's `ro_paths` keep their path; the seat folder, the bot's `own_paths` and what its
/// command line names move to `/bot`, `/bot2`, … ([`PathMap`]).
fn mount_plan_on(
    argv: &[String],
    cfg: &SandboxConfig,
) -> Result<(Vec<PathBuf>, PathMap), SpawnError> {
    let jail = &cfg.jail;
    let (mut own, prefixes) = program_paths(argv);
    let kept = outermost(jail.ro_paths.iter().cloned().chain(prefixes).collect());
    let seat = jail.seat_dir.as_deref().map(super::normalize);
    own.extend(jail.own_paths.iter().cloned());
    own.extend(seat.clone());
    // What lies inside a kept path is shown there, at its own path, and so is what a path
    // named through a kept one resolves to (a symbolic link there names it by its host path).
    let through_kept: Vec<PathBuf> = argv
        .iter()
        .map(|a| super::normalize(Path::new(a)))
        .filter(|p| p.is_absolute() && kept.iter().any(|k| p.starts_with(k)))
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    let kept = outermost(kept.into_iter().chain(through_kept).collect());
    let mut own = outermost(own);
    own.retain(|p| !kept.iter().any(|k| p.starts_with(k)));
    let seat_root = seat.filter(|s| own.contains(s));
    let others: Vec<PathBuf> = own
        .iter()
        .filter(|p| Some(*p) != seat_root.as_ref())
        .cloned()
        .collect();
    let map = PathMap::new(seat_root.as_deref(), &others);
    let mut all = kept;
    all.extend(own);
    // A kept path inside one of the bot's own folders is shown twice: at its path, and moved.
    let all = {
        let mut v = all;
        v.sort();
        v.dedup();
        v
    };
    check_denied(&all, jail)?;
    Ok((all, map))
}

/// Keep only paths that are not inside another path of the list or a system directory.
fn outermost(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = paths.iter().map(|p| super::normalize(p)).collect();
    paths.retain(|p| p.is_absolute() && p.exists() && p != Path::new("/"));
    paths.sort();
    paths.dedup();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        let covered =
            out.iter().any(|q| p.starts_with(q)) || SYSTEM_DIRS.iter().any(|s| p.starts_with(s));
        if !covered {
            out.push(p);
        }
    }
    out
}

/// The mount point of the private root (an empty directory only root can enter).
fn root_mount_point() -> Result<PathBuf, SpawnError> {
    // SAFETY: geteuid(2) cannot fail.
    let euid = unsafe { libc::geteuid() };
    let bases = if euid == 0 {
        vec![
            PathBuf::from("/run/kakehiki"),
            std::env::temp_dir().join("kakehiki-jail"),
        ]
    } else {
        // Each user its own, so that another user's directory is never in the way.
        vec![std::env::temp_dir().join(format!("kakehiki-jail-{euid}"))]
    };
    for base in bases {
        let dir = base.join("root");
        if std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .is_ok()
        {
            return Ok(dir);
        }
    }
    Err(SpawnError::Sandbox(
        "cannot create the jail's mount point in /run/kakehiki or the temporary directory".into(),
    ))
}

/// A fresh empty network namespace for one pipe bot (no interface; its loopback stays down, as
/// no bot has the capability to raise it), taken from a pool that a thread of the referee keeps
/// filled: creating a network namespace is the largest single step of a confined start, and the
/// pool moves it off the bot's start. Each bot gets one of its own, never shared: in one shared
/// namespace bots see each other's socket names and counts (`/proc/net/unix`, `netlink`, `tcp`)
/// and collide on `bind`. `None` when the kernel refuses (the caller then has the bot unshare
/// one itself).
fn fresh_netns() -> Option<OwnedFd> {
    use std::sync::{Condvar, Mutex, OnceLock};
    /// How many namespaces wait ready: a four-seat match starting at once takes four.
    const POOL: usize = 8;
    struct Pool {
        ready: Mutex<(Vec<OwnedFd>, bool)>,
        wanted: Condvar,
    }
    /// One new namespace, made by the calling thread (which moves into it and stays there).
    fn make() -> Option<OwnedFd> {
        // SAFETY: unshare(2) of this thread's network namespace, open(2) of its handle.
        unsafe {
            if libc::unshare(libc::CLONE_NEWNET) != 0 {
                return None;
            }
            let fd = libc::open(
                c"/proc/thread-self/ns/net".as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC,
            );
            (fd >= 0).then(|| OwnedFd::from_raw_fd(fd))
        }
    }
    static POOL_CELL: OnceLock<Option<&'static Pool>> = OnceLock::new();
    let pool = POOL_CELL.get_or_init(|| {
        // The first namespace tells whether the kernel allows them at all.
        let first = std::thread::spawn(make).join().ok().flatten()?;
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            ready: Mutex::new((vec![first], false)),
            wanted: Condvar::new(),
        }));
        let filler = std::thread::Builder::new()
            .name("kakehiki-netns".into())
            .spawn(move || loop {
                {
                    let mut g = pool.ready.lock().unwrap_or_else(|e| e.into_inner());
                    while g.0.len() >= POOL && !g.1 {
                        g = pool.wanted.wait(g).unwrap_or_else(|e| e.into_inner());
                    }
                    g.1 = false;
                }
                // This thread lives in the namespace it made last; it never uses the network.
                match make() {
                    Some(fd) => pool
                        .ready
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .0
                        .push(fd),
                    None => std::thread::sleep(std::time::Duration::from_millis(50)),
                }
            });
        filler.ok()?;
        Some(pool)
    });
    let pool = (*pool)?;
    let taken = {
        let mut g = pool.ready.lock().unwrap_or_else(|e| e.into_inner());
        let fd = g.0.pop();
        g.1 = true;
        fd
    };
    pool.wanted.notify_one();
    // An empty pool (many bots starting at once): make one here, on a thread of its own so that
    // the caller's namespace does not change.
    taken.or_else(|| std::thread::spawn(make).join().ok().flatten())
}

/// The mount flags of the file system holding `path` that a read-only bind remount must repeat
/// (locked in a user namespace).
fn locked_flags(path: &Path) -> libc::c_ulong {
    let Ok(c) = CString::new(path.as_os_str().as_encoded_bytes()) else {
        return 0;
    };
    // SAFETY: statvfs(2) with a C string and a zeroed out-struct.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return 0;
    }
    let f = st.f_flag;
    let mut out = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st_flag != 0 {
            out |= ms_flag;
        }
    }
    out
}

fn status_pipe() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(SpawnError::Host(std::io::Error::last_os_error()));
    }
    // The read end never blocks: a child that has not written by the time spawning is over
    // has nothing to report.
    // SAFETY: fcntl on a descriptor we own.
    unsafe { libc::fcntl(fds[0], libc::F_SETFL, libc::O_NONBLOCK) };
    // SAFETY: both are fresh descriptors.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// A Unix socket pair (close-on-exec): the referee's end, the keeper's end.
fn fd_channel() -> Result<(OwnedFd, OwnedFd), SpawnError> {
    let mut fds = [0; 2];
    // SAFETY: socketpair fills two descriptors we then own.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        )
    } < 0
    {
        return Err(SpawnError::Host(std::io::Error::last_os_error()));
    }
    // SAFETY: both are fresh descriptors.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Take the listener the keeper sent over `rx` (it was sent before the bot's `exec`, so by the
/// time spawning is over it is there or never will be). The keeper's side is raw `sendmsg`
/// (`child::send_fd`): between fork and exec nothing may allocate.
pub(crate) fn receive_fd(rx: &OwnedFd) -> std::io::Result<OwnedFd> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, UnixAddr};
    use std::os::fd::AsRawFd;
    let mut byte = [0u8; 1];
    let mut iov = [std::io::IoSliceMut::new(&mut byte)];
    let mut space = nix::cmsg_space!([std::os::fd::RawFd; 1]);
    let msg = recvmsg::<UnixAddr>(
        rx.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_DONTWAIT | MsgFlags::MSG_CMSG_CLOEXEC,
    )?;
    for cmsg in msg.cmsgs()? {
        if let ControlMessageOwned::ScmRights(fds) = cmsg {
            if let Some(&fd) = fds.first() {
                // SAFETY: the kernel just installed this descriptor in our table; we own it.
                return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    Err(std::io::Error::other(
        "no listener arrived from the bot's namespace",
    ))
}

/// Prepare the confinement of a process running `argv` (already resolved to absolute paths)
/// with the network `net`.
pub(crate) fn prepare(
    argv: &[String],
    cfg: &SandboxConfig,
    net: SeatNet,
) -> Result<(Prepared, OwnedFd), SpawnError> {
    let pipe_seat = net == SeatNet::Pipe;
    let jail = &cfg.jail;
    let report = SandboxReport::for_jail(jail);
    report.check()?;
    report.check_cpu_quota(jail)?;
    // Refused mounts end here, before a uid or a cgroup is taken.
    // Without a private root nothing can be moved: the bot sees host paths.
    let (ro_paths, map) = mount_plan(argv, cfg, &report)?;
    if jail.level != SandboxLevel::Off && !report.complete() {
        tracing::warn!("bot sandbox incomplete: {}", report.missing_text());
    }
    let caps = capabilities();
    let on = |l: Layer| report.layers.contains(&l);
    let (status_rx, status_tx) = status_pipe()?;

    let user_ns = report.user_namespace;
    let uid = if on(Layer::Identity) && !user_ns {
        Some(
            UidLease::acquire(jail.uid_base, jail.uid_count)
                .map_err(|e| host_err("cannot lease a bot uid", e))?,
        )
    } else {
        None
    };
    // A launch line that cannot work in the sandbox is refused with what is missing.
    let bot_uid = match &uid {
        Some(lease) => Some(lease.uid),
        None => super::launch::bot_uid(&report, jail.uid_base),
    };
    super::launch::check(argv, cfg, &ro_paths, &map, &report, bot_uid)?;
    // A bot that sees the whole host (no private root, no Landlock) keeps the referee's `PATH`.
    let path = if on(Layer::Namespaces) || on(Layer::LandlockFs) {
        Some(super::launch::bot_path(cfg, &ro_paths, &map))
    } else {
        std::env::var("PATH").ok()
    };
    let cgroup = if on(Layer::Cgroup) {
        let mem = cfg.limits.memory_bytes.unwrap_or(4 << 30);
        let pids = cfg.limits.processes.unwrap_or(4096);
        Some(
            Cgroup::create(mem, pids, jail.cpu_quota())
                .map_err(|e| host_err("cannot create the bot's cgroup", e))?,
        )
    } else {
        None
    };

    let system: Vec<PathBuf> = SYSTEM_DIRS
        .iter()
        .map(PathBuf::from)
        .filter(|p| p.exists())
        .collect();

    let mut host_workdir = None;
    let namespaces = on(Layer::Namespaces);
    // A pipe bot's own empty network namespace, held until the keeper has joined it.
    let mut netns: Option<OwnedFd> = None;
    let (ns, cwd, home) = if namespaces {
        let root = root_mount_point()?;
        let under = |p: &Path| root.join(p.strip_prefix("/").unwrap_or(p));
        let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
        let add_ancestors = |p: &Path, dirs: &mut BTreeSet<PathBuf>, include_self: bool| {
            let mut acc = PathBuf::from("/");
            let comps: Vec<_> = p.components().collect();
            let n = comps.len();
            for (i, c) in comps.into_iter().enumerate() {
                if let Component::Normal(s) = c {
                    acc.push(s);
                    if i + 1 < n || include_self {
                        dirs.insert(acc.clone());
                    }
                }
            }
        };
        let mut links = Vec::new();
        // (host path, path in the jail, is a folder)
        let mut binds = Vec::new();
        let same_path = ro_paths.iter().filter(|p| !map.moves(p));
        for p in system.iter().chain(same_path) {
            let meta = std::fs::symlink_metadata(p)
                .map_err(|e| host_err("cannot inspect a bound path", e))?;
            if meta.file_type().is_symlink() {
                let target =
                    std::fs::read_link(p).map_err(|e| host_err("cannot read a symlink", e))?;
                add_ancestors(p, &mut dirs, false);
                links.push((cstr(&target)?, cstr(&under(p))?));
                continue;
            }
            add_ancestors(p, &mut dirs, meta.is_dir());
            binds.push((p.clone(), p.clone(), meta.is_dir()));
        }
        // The bot's own paths at neutral ones (`jail::paths`): a folder through an overlay of
        // a staged bind, a file as a copy (a bind mount's root field would name the host path).
        // A symbolic link is shown as what it points to (its target, a host path, would mean
        // nothing there).
        let stage = Path::new("/.kakehiki");
        let empty = stage.join("empty");
        let mut overlays = Vec::new();
        let mut copies = Vec::new();
        let mut jail_own = Vec::new();
        if !map.roots().is_empty() {
            add_ancestors(&empty, &mut dirs, true);
        }
        for (i, (host, at)) in map.roots().iter().enumerate() {
            let meta =
                std::fs::metadata(host).map_err(|e| host_err("cannot inspect a bound path", e))?;
            if meta.is_dir() {
                let lower = stage.join(format!("{i}"));
                add_ancestors(&lower, &mut dirs, true);
                add_ancestors(at, &mut dirs, true);
                binds.push((host.clone(), lower.clone(), true));
                let opts = format!("lowerdir={}:{}", lower.display(), empty.display());
                overlays.push(Overlay {
                    target: cstr(at)?,
                    lower: cstr(&lower)?,
                    opts: CString::new(opts).map_err(|e| host_err("overlay options", e))?,
                    keep_flags: locked_flags(host),
                });
                jail_own.push(cstr(at)?);
            } else if meta.len() <= MAX_COPIED_FILE {
                let dir = at.parent().unwrap_or(Path::new("/"));
                add_ancestors(dir, &mut dirs, true);
                let size = (meta.len() + 2 * 4096).div_ceil(4096) * 4096;
                let exec = if meta.permissions().mode() & 0o111 != 0 {
                    0o111
                } else {
                    0
                };
                copies.push(FileCopy {
                    src: cstr(host)?,
                    dir: cstr(&under(dir))?,
                    opts: CString::new(format!("size={size},mode=0755")).expect("no NUL"),
                    dst: cstr(&under(at))?,
                    mode: 0o444 | exec,
                });
                jail_own.push(cstr(dir)?);
            } else {
                // Too large to copy at every start: bound, its mount naming its host path.
                add_ancestors(at, &mut dirs, false);
                binds.push((host.clone(), at.clone(), false));
            }
        }
        for d in ["/dev", "/dev/shm", "/proc", "/tmp"] {
            add_ancestors(Path::new(d), &mut dirs, true);
        }
        let mut files = Vec::new();
        let mut bind_list = Vec::new();
        for (p, at, is_dir) in binds {
            if !is_dir {
                files.push(cstr(&under(&at))?);
            }
            bind_list.push(Bind {
                src: cstr(&p)?,
                dst: cstr(&under(&at))?,
                keep_flags: locked_flags(&p),
            });
        }
        let mut dev_binds = Vec::new();
        for d in DEVICES.iter().map(Path::new).filter(|p| p.exists()) {
            files.push(cstr(&under(d))?);
            dev_binds.push(Bind {
                src: cstr(d)?,
                dst: cstr(&under(d))?,
                keep_flags: 0,
            });
        }
        for (target, link) in [
            ("/proc/self/fd", "/dev/fd"),
            ("/proc/self/fd/0", "/dev/stdin"),
            ("/proc/self/fd/1", "/dev/stdout"),
            ("/proc/self/fd/2", "/dev/stderr"),
        ] {
            links.push((cstr(Path::new(target))?, cstr(&under(Path::new(link)))?));
        }
        let cwd = match &jail.seat_dir {
            Some(d) => map.to_jail(&super::normalize(d)),
            None => PathBuf::from("/tmp"),
        };
        // A cgroup namespace too: the bot, entered in its cgroup first, sees that cgroup as `/`.
        let mut flags = libc::CLONE_NEWPID
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP;
        // A pipe bot gets no network: an empty network namespace of its own (no interface,
        // loopback down), from the referee's pool when the referee is root, else made by the
        // bot's keeper inside its user namespace.
        if matches!(net, SeatNet::Own { .. }) {
            flags |= libc::CLONE_NEWNET;
        }
        if pipe_seat {
            match if user_ns { None } else { fresh_netns() } {
                Some(fd) => netns = Some(fd),
                None => flags |= libc::CLONE_NEWNET,
            }
        }
        let user = if user_ns {
            // SAFETY: getuid(2)/getgid(2) cannot fail.
            let (outer_uid, outer_gid) = unsafe { (libc::getuid(), libc::getgid()) };
            let line = |outer: u32| CString::new(format!("{} {outer} 1\n", jail.uid_base));
            Some(UserNs {
                uid_map: line(outer_uid).expect("no NUL"),
                gid_map: line(outer_gid).expect("no NUL"),
            })
        } else {
            None
        };
        let ns = Namespaces {
            flags,
            join_net: netns.as_ref().map(|fd| fd.as_raw_fd()),
            user,
            root_opts: CString::new("size=4m,mode=0755").expect("no NUL"),
            dirs: dirs
                .iter()
                .map(|d| cstr(&under(d)))
                .collect::<Result<_, _>>()?,
            files,
            links,
            binds: bind_list,
            dev_binds,
            proc_dst: cstr(&under(Path::new("/proc")))?,
            tmp_dst: cstr(&under(Path::new("/tmp")))?,
            tmp_opts: CString::new(format!("size={},mode=1777", jail.disk_bytes.max(4096)))
                .expect("no NUL"),
            shm_dst: cstr(&under(Path::new("/dev/shm")))?,
            shm_opts: CString::new(format!("size={},mode=1777", jail.shm_bytes.max(4096)))
                .expect("no NUL"),
            hostname: CString::new("kakehiki-bot").expect("no NUL"),
            jail_tmp: CString::new("/tmp").expect("no NUL"),
            jail_shm: CString::new("/dev/shm").expect("no NUL"),
            jail_proc: CString::new("/proc").expect("no NUL"),
            root: cstr(&root)?,
            overlays,
            copies,
            strict: jail.level == SandboxLevel::Strict,
            jail_own,
        };
        (Some(ns), Some(cstr(&cwd)?), PathBuf::from("/tmp"))
    } else {
        // No mount namespace: a host temporary directory, owned by the bot's uid, 0700.
        let dir = match &cfg.workdir {
            Some(d) => d.clone(),
            None => {
                let t = tempfile::Builder::new()
                    .prefix("kakehiki-bot-")
                    .tempdir()
                    .map_err(SpawnError::Workdir)?;
                let p = t.path().to_path_buf();
                host_workdir = Some(t);
                p
            }
        };
        if let Some(lease) = &uid {
            std::os::unix::fs::chown(&dir, Some(lease.uid), Some(lease.uid))
                .map_err(SpawnError::Workdir)?;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .map_err(SpawnError::Workdir)?;
        }
        let cwd = jail.seat_dir.clone().unwrap_or_else(|| dir.clone());
        (None, Some(cstr(&cwd)?), dir)
    };

    let landlock = if on(Layer::LandlockFs) {
        let mut read_only: Vec<&Path> = system.iter().map(PathBuf::as_path).collect();
        read_only.extend(ro_paths.iter().map(PathBuf::as_path));
        let host_proc = Path::new("/proc");
        if !namespaces {
            read_only.push(host_proc);
        }
        let rw: Vec<&Path> = if namespaces {
            Vec::new()
        } else {
            vec![home.as_path()]
        };
        let devices: Vec<&Path> = DEVICES
            .iter()
            .map(Path::new)
            .filter(|p| p.exists())
            .collect();
        let own_port;
        let tcp: Option<&[u16]> = if on(Layer::LandlockNet) {
            Some(match net {
                SeatNet::Pipe => &[],
                SeatNet::Host => &jail.tcp_connect,
                SeatNet::Own { port } => {
                    own_port = [port];
                    &own_port
                }
            })
        } else {
            None
        };
        Some(
            filters::landlock_ruleset(&LandlockSpec {
                abi: caps.landlock_abi,
                read_only: &read_only,
                read_write: &rw,
                devices: &devices,
                tcp_connect: tcp,
            })
            .map_err(|e| host_err("cannot build the Landlock ruleset", e))?,
        )
    } else {
        None
    };
    let seccomp = if on(Layer::Seccomp) {
        filters::seccomp_programs(namespaces)
            .map_err(|e| host_err("cannot build the seccomp filter", e))?
    } else {
        Vec::new()
    };
    let (seat_listener, listener_rx) = match net {
        SeatNet::Own { port } if namespaces => {
            let (rx, tx) = fd_channel()?;
            (Some((port, tx)), Some(rx))
        }
        SeatNet::Own { .. } => {
            return Err(SpawnError::Sandbox(
                "a seat network of its own needs the namespaces layer".into(),
            ))
        }
        _ => (None, None),
    };
    // A TCP client's `connect` calls pass through the referee, which names a wrong address.
    let watch_ports = match net {
        SeatNet::Own { port } => vec![port],
        SeatNet::Host => jail.tcp_connect.clone(),
        SeatNet::Pipe => Vec::new(),
    };
    let (watch_rx, watch_tx) =
        if on(Layer::Seccomp) && net != SeatNet::Pipe && connect_watch_works() {
            let (rx, tx) = fd_channel()?;
            (Some(rx), Some(tx))
        } else {
            (None, None)
        };
    let (tmp_rx, tmp_tx) = if cfg.keep_files.is_some() && namespaces {
        let (rx, tx) = fd_channel()?;
        (Some(rx), Some(tx))
    } else {
        (None, None)
    };
    let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63);
    let child = ChildPlan {
        status_fd: status_tx.as_raw_fd(),
        limits: cfg.limits.clone(),
        cgroup_procs: cgroup.as_ref().map(Cgroup::procs_fds).unwrap_or_default(),
        namespaces: ns,
        // In a user namespace the bot's uid is the first of the range, mapped to the referee's.
        identity: match &uid {
            Some(lease) => Some(lease.uid),
            None if user_ns => Some(jail.uid_base),
            None => None,
        },
        last_cap,
        landlock,
        landlock_abi: caps.landlock_abi,
        seccomp,
        cwd,
        seat_listener: seat_listener.as_ref().map(|(port, tx)| SeatListen {
            port: *port,
            chan: tx.as_raw_fd(),
        }),
        tmp_chan: tmp_tx.as_ref().map(|tx| tx.as_raw_fd()),
        connect_watch: watch_tx.as_ref().map(|tx| tx.as_raw_fd()),
    };
    Ok((
        Prepared {
            report,
            child,
            status_rx,
            uid,
            cgroup,
            host_workdir,
            home,
            path,
            listener_rx,
            listener_tx: seat_listener.map(|(_, tx)| tx),
            tmp_rx,
            tmp_tx,
            watch_rx,
            watch_tx,
            watch_ports,
            netns,
            map,
        },
        status_tx,
    ))
}

/// Whether this kernel lets a notified system call go on (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`,
/// Linux 5.5), which the `connect` watch needs: on an older one it is not installed.
fn connect_watch_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| {
        let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
        let mut parts = release
            .trim()
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().ok());
        match (parts.next().flatten(), parts.next().flatten()) {
            (Some(major), Some(minor)) => (major, minor) >= (5, 5),
            _ => false,
        }
    })
}

/// Read what the child reported through the status pipe once spawning is over (the write end
/// closed in the referee): a failed confinement step, if any.
pub(crate) fn read_status(rx: &OwnedFd) -> Option<(Stage, i32)> {
    use std::os::fd::AsRawFd;
    let mut buf = [0u8; 5];
    // The write ends are all closed (ours dropped, the child's closed by exec or exit), so this
    // read does not block.
    // SAFETY: read(2) into a stack buffer.
    let n = unsafe { libc::read(rx.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n == 5 {
        let errno = i32::from_le_bytes([buf[1], buf[2], buf[3], buf[4]]);
        Stage::from_u8(buf[0]).map(|s| (s, errno))
    } else {
        None
    }
}
