//! The code that runs in the forked child, between `fork` and `exec`.
//!
//! Everything it needs (paths as C strings, the Landlock ruleset, the seccomp programs, the
//! cgroup files) is prepared by the referee before the fork; here only system calls are made.
//!
//! With namespaces the fork that `Command::spawn` makes (the *keeper*) enters the cgroup,
//! unshares the namespaces and forks once more: its child is the first process of the new PID
//! namespace and becomes the bot; the keeper closes every descriptor, waits for it and exits with
//! its status, so the referee's `Child` reports the bot's exit. Killing the keeper's process
//! group kills both, and when the bot (the namespace's first process) dies the kernel kills every
//! process it left in the namespace.

use std::ffi::CString;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

use landlock::{PathBeneath, RulesetCreated, RulesetCreatedAttr};
use seccompiler::BpfProgram;

/// A step that can fail, named in the error the referee reports (a host fault).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Stage {
    Limits = 1,
    DeathSignal,
    EnterCgroup,
    Unshare,
    UserMap,
    Fork,
    PrivateMounts,
    MountRoot,
    MakeSkeleton,
    BindMount,
    MountProc,
    MountTmp,
    PivotRoot,
    Hostname,
    Chdir,
    DropCapabilities,
    SetGroups,
    SetGid,
    SetUid,
    NoNewPrivs,
    Landlock,
    Seccomp,
    SeatListener,
    KeepFiles,
    CloseOnExec,
    OwnFiles,
}

impl Stage {
    const ALL: [Stage; 26] = [
        Stage::Limits,
        Stage::DeathSignal,
        Stage::EnterCgroup,
        Stage::Unshare,
        Stage::UserMap,
        Stage::Fork,
        Stage::PrivateMounts,
        Stage::MountRoot,
        Stage::MakeSkeleton,
        Stage::BindMount,
        Stage::MountProc,
        Stage::MountTmp,
        Stage::PivotRoot,
        Stage::Hostname,
        Stage::Chdir,
        Stage::DropCapabilities,
        Stage::SetGroups,
        Stage::SetGid,
        Stage::SetUid,
        Stage::NoNewPrivs,
        Stage::Landlock,
        Stage::Seccomp,
        Stage::SeatListener,
        Stage::KeepFiles,
        Stage::CloseOnExec,
        Stage::OwnFiles,
    ];

    pub fn from_u8(b: u8) -> Option<Stage> {
        Stage::ALL.iter().copied().find(|s| *s as u8 == b)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Stage::Limits => "setting rlimits",
            Stage::DeathSignal => "setting the parent-death signal",
            Stage::EnterCgroup => "entering the bot's cgroup",
            Stage::Unshare => "creating namespaces",
            Stage::UserMap => "mapping the bot's uid in its user namespace",
            Stage::Fork => "starting the namespace's first process",
            Stage::PrivateMounts => "making mounts private",
            Stage::MountRoot => "mounting the private root",
            Stage::MakeSkeleton => "creating the private root's directories",
            Stage::BindMount => "bind-mounting a read-only directory",
            Stage::MountProc => "mounting /proc",
            Stage::MountTmp => "mounting the private /tmp or /dev/shm",
            Stage::PivotRoot => "switching to the private root",
            Stage::Hostname => "setting the host name",
            Stage::Chdir => "entering the working directory",
            Stage::DropCapabilities => "dropping capabilities",
            Stage::SetGroups => "clearing supplementary groups",
            Stage::SetGid => "switching to the bot's gid",
            Stage::SetUid => "switching to the bot's uid",
            Stage::NoNewPrivs => "setting no_new_privs",
            Stage::Landlock => "enforcing Landlock",
            Stage::Seccomp => "installing the seccomp filter",
            Stage::SeatListener => "opening the seat's listener in the bot's network namespace",
            Stage::CloseOnExec => "marking inherited descriptors close-on-exec",
            Stage::OwnFiles => "showing the bot's own files at a neutral path",
            Stage::KeepFiles => {
                "handing the bot's working folder to the referee (--keep-seat-files)"
            }
        }
    }
}

/// A bind mount of the private root.
pub(crate) struct Bind {
    pub src: CString,
    pub dst: CString,
    /// Flags of the source mount a read-only remount must keep (`nosuid`, `nodev`, `noexec`,
    /// atime flags): in a user namespace they are locked, and a remount dropping one fails.
    pub keep_flags: libc::c_ulong,
}

/// One of the bot's own folders shown at a neutral path through a read-only overlay, whose
/// mount names neither the host path nor its file system (a bind mount's root field in
/// `/proc/self/mountinfo` would name the host path): the host folder is bound at `lower` (a
/// path inside the jail, in `Namespaces::binds`), the overlay mounted at `target` after the
/// pivot, then `lower` detached.
pub(crate) struct Overlay {
    pub target: CString,
    pub lower: CString,
    /// `lowerdir=<lower>:<empty>` (an overlay without an upper layer needs two lower ones).
    pub opts: CString,
    /// [`Bind::keep_flags`] of the host folder, for the fallback bind.
    pub keep_flags: libc::c_ulong,
}

/// One of the bot's own files shown at a neutral path as a copy on a tmpfs of its own (a bind
/// mount of a file would name its host path): `src` (host) copied to `dst` (under the root,
/// before the pivot) on a tmpfs mounted at `dir` with `opts`, then made read-only.
pub(crate) struct FileCopy {
    pub src: CString,
    pub dir: CString,
    pub opts: CString,
    pub dst: CString,
    pub mode: libc::mode_t,
}

/// A user namespace for a referee that is not root: the bot's uid inside maps to the referee's.
pub(crate) struct UserNs {
    /// `/proc/self/uid_map` and `gid_map` contents: one line, inside → the referee's ids.
    pub uid_map: CString,
    pub gid_map: CString,
}

/// Everything the child does, prepared before the fork.
pub(crate) struct ChildPlan {
    /// Write end of the status pipe (stage byte + errno) through which a failed step is told.
    pub status_fd: i32,
    pub limits: crate::sandbox::ResourceLimits,
    pub cgroup_procs: Vec<i32>,
    /// Build the private root and namespaces (root only).
    pub namespaces: Option<Namespaces>,
    /// Switch to this uid/gid and drop every capability (root only).
    pub identity: Option<u32>,
    pub last_cap: i32,
    pub landlock: Option<RulesetCreated>,
    pub landlock_abi: i32,
    pub seccomp: Vec<BpfProgram>,
    /// Working directory inside the jail (with namespaces).
    pub cwd: Option<CString>,
    /// The seat's own network: a listener opened inside the bot's new network namespace and
    /// sent to the referee before the bot runs.
    pub seat_listener: Option<SeatListen>,
    /// The bot's end of a Unix socket pair through which its private `/tmp` is sent to the
    /// referee (a directory descriptor, so its files can be copied out after the match).
    pub tmp_chan: Option<i32>,
    /// A TCP client's end of a Unix socket pair through which the listener of its `connect`
    /// notifications is sent to the referee ([`super::filters::CONNECT_WATCH`]).
    pub connect_watch: Option<i32>,
}

/// The listener of a seat whose bot has a network namespace of its own: the only thing on its
/// loopback.
pub(crate) struct SeatListen {
    /// The port, on every loopback address of the namespace (`127.0.0.1` and `::1`).
    pub port: u16,
    /// The keeper's end of a Unix socket pair through which the listener is sent (`SCM_RIGHTS`).
    pub chan: i32,
}

pub(crate) struct Namespaces {
    pub flags: libc::c_int,
    /// A network namespace to join instead of creating one (the referee's shared empty one:
    /// creating a network namespace is the largest part of a bot's start).
    pub join_net: Option<i32>,
    /// Created together with the others when the referee is not root.
    pub user: Option<UserNs>,
    /// Where the private root tmpfs is mounted before the pivot.
    pub root: CString,
    pub root_opts: CString,
    /// Directories of the private root to create (full paths under `root`), parents first.
    pub dirs: Vec<CString>,
    /// Empty files to create as mount points for device binds.
    pub files: Vec<CString>,
    /// Symbolic links to create: (target, link path under `root`).
    pub links: Vec<(CString, CString)>,
    /// Read-only binds (directories and device files).
    pub binds: Vec<Bind>,
    /// Device binds (read-write, dev allowed).
    pub dev_binds: Vec<Bind>,
    pub proc_dst: CString,
    pub tmp_dst: CString,
    pub tmp_opts: CString,
    pub shm_dst: CString,
    pub shm_opts: CString,
    pub hostname: CString,
    /// Paths inside the jail that Landlock makes writable (`/tmp`, `/dev/shm`) and readable
    /// (`/proc`).
    pub jail_tmp: CString,
    pub jail_shm: CString,
    pub jail_proc: CString,
    /// The bot's own folders and files at neutral paths (`jail::paths`).
    pub overlays: Vec<Overlay>,
    pub copies: Vec<FileCopy>,
    /// Where an overlay cannot be mounted (no overlayfs): fail (`strict`) rather than bind the
    /// folder, whose mount then names its host path.
    pub strict: bool,
    /// Paths inside the jail Landlock lets the bot read: the overlays and the copies' folders
    /// (their files are not beneath the host paths the referee's rules name).
    pub jail_own: Vec<CString>,
}

fn fail(status_fd: i32, stage: Stage, err: io::Error) -> io::Error {
    let errno = err.raw_os_error().unwrap_or(libc::EINVAL);
    let mut msg = [0u8; 5];
    msg[0] = stage as u8;
    msg[1..].copy_from_slice(&errno.to_le_bytes());
    // SAFETY: write(2) of a stack buffer to a pipe we own.
    unsafe { libc::write(status_fd, msg.as_ptr().cast(), msg.len()) };
    io::Error::from_raw_os_error(errno)
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// SIGKILL this process when its parent ends.
fn die_with_parent() -> io::Result<()> {
    // SAFETY: prctl with integer arguments.
    check(unsafe {
        libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )
    })
}

/// Run the plan in the child. Returns `Ok` in the process that is to exec the bot.
pub(crate) fn run(plan: &mut ChildPlan) -> io::Result<()> {
    let st = plan.status_fd;
    let step = |stage: Stage, r: io::Result<()>| r.map_err(|e| fail(st, stage, e));
    // In a user namespace the rlimits are set inside it, once it exists: the namespace keeps
    // the RLIMIT_NPROC its creator had as the ceiling for all its processes together, and a
    // process count is kept per namespace (Linux 5.14+), so the bot's own limit then binds its
    // own processes only, not every process of the referee's uid.
    let user_ns = plan.namespaces.as_ref().is_some_and(|n| n.user.is_some());
    if !user_ns {
        step(Stage::Limits, crate::process::apply_limits(&plan.limits))?;
    }
    step(Stage::DeathSignal, die_with_parent())?;
    for &fd in &plan.cgroup_procs {
        // SAFETY: write(2) of a static buffer to a cgroup.procs file the referee opened.
        let r = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
        step(Stage::EnterCgroup, check(r as libc::c_int))?;
    }
    let keep_fd = plan
        .namespaces
        .as_ref()
        .and_then(|n| n.join_net)
        .unwrap_or(-1);
    close_inherited_files(st, keep_fd);
    if let Some(ns) = &plan.namespaces {
        if let Some(fd) = ns.join_net {
            // SAFETY: setns(2) on a namespace descriptor the referee holds; then closed.
            step(
                Stage::Unshare,
                check(unsafe { libc::setns(fd, libc::CLONE_NEWNET) }),
            )?;
            // SAFETY: closing our copy of that descriptor.
            unsafe { libc::close(fd) };
        }
        let flags = ns.flags
            | if ns.user.is_some() {
                libc::CLONE_NEWUSER
            } else {
                0
            };
        // SAFETY: unshare(2) with namespace flags.
        step(Stage::Unshare, check(unsafe { libc::unshare(flags) }))?;
        if let Some(user) = &ns.user {
            step(Stage::UserMap, map_user(user))?;
            step(Stage::Limits, crate::process::apply_limits(&plan.limits))?;
        }
        if let Some(seat) = &plan.seat_listener {
            step(Stage::SeatListener, open_seat_listener(seat))?;
        }
        // SAFETY: fork(2); both sides only make system calls until exec or _exit.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(fail(st, Stage::Fork, io::Error::last_os_error()));
        }
        if pid > 0 {
            keep(pid);
        }
        // The namespace's first process: dies with the keeper.
        step(Stage::DeathSignal, die_with_parent())?;
        build_root(ns, st)?;
        if let Some(chan) = plan.tmp_chan {
            step(Stage::KeepFiles, send_tmp(chan))?;
        }
    }
    if let Some(cwd) = &plan.cwd {
        // SAFETY: chdir(2) with a C string.
        step(Stage::Chdir, check(unsafe { libc::chdir(cwd.as_ptr()) }))?;
    }
    if let Some(uid) = plan.identity {
        let in_user_ns = plan.namespaces.as_ref().is_some_and(|n| n.user.is_some());
        drop_identity(uid, plan.last_cap, !in_user_ns, st)?;
    }
    // SAFETY: prctl with integer arguments.
    step(
        Stage::NoNewPrivs,
        check(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1 as libc::c_ulong, 0, 0, 0) }),
    )?;
    if let Some(mut ruleset) = plan.landlock.take() {
        if let Some(ns) = &plan.namespaces {
            let rw = super::filters::rw_access(plan.landlock_abi);
            let ro = super::filters::proc_access(plan.landlock_abi);
            let fixed = [(&ns.jail_tmp, rw), (&ns.jail_shm, rw), (&ns.jail_proc, ro)];
            let own = ns.jail_own.iter().map(|p| (p, ro));
            for (path, access) in fixed.into_iter().chain(own) {
                // SAFETY: open(2) of a C string path; the fd is owned below.
                let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
                step(Stage::Landlock, check(fd))?;
                // SAFETY: fd is a fresh descriptor we own.
                let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                ruleset = ruleset
                    .add_rule(PathBeneath::new(fd, access))
                    .map_err(|_| {
                        fail(
                            st,
                            Stage::Landlock,
                            io::Error::from_raw_os_error(libc::EINVAL),
                        )
                    })?;
            }
        }
        ruleset.restrict_self().map_err(|_| {
            fail(
                st,
                Stage::Landlock,
                io::Error::from_raw_os_error(libc::EPERM),
            )
        })?;
    }
    step(Stage::CloseOnExec, crate::process::cloexec_above_stderr())?;
    for prog in &plan.seccomp {
        seccompiler::apply_filter(prog).map_err(|_| {
            fail(
                st,
                Stage::Seccomp,
                io::Error::from_raw_os_error(libc::EPERM),
            )
        })?;
    }
    if let Some(chan) = plan.connect_watch {
        step(Stage::Seccomp, install_connect_watch(chan))?;
    }
    Ok(())
}

/// Install [`super::filters::CONNECT_WATCH`] with a listener, send the listener to the referee
/// over `chan` and close both. The referee answers every `connect` from then on; without the
/// listener the kernel would fail each with ENOSYS, so a listener that cannot be sent is an
/// error (a host fault).
fn install_connect_watch(chan: i32) -> io::Result<()> {
    let prog = libc::sock_fprog {
        len: super::filters::CONNECT_WATCH.len() as u16,
        filter: super::filters::CONNECT_WATCH.as_ptr().cast_mut(),
    };
    // SAFETY: seccomp(2) with a static program; sendmsg/close on descriptors we own; no
    // allocation (this runs between fork and exec).
    unsafe {
        let fd = libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_NEW_LISTENER,
            &prog as *const libc::sock_fprog,
        );
        if fd < 0 {
            let err = io::Error::last_os_error();
            libc::close(chan);
            return Err(err);
        }
        let r = send_fd(chan, fd as i32);
        let err = io::Error::last_os_error();
        libc::close(fd as i32);
        libc::close(chan);
        if r < 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// Close the referee's files, directories and network sockets that this fork inherited (a
/// results database, a run lock, another seat's listener), keeping pipes, devices, Unix sockets
/// and anonymous descriptors (the status pipe, the landlock ruleset, the standard library's
/// exec-error channel).
/// They are close-on-exec anyway; closing them here ends the window between fork and exec in
/// which this process would still hold them (a lock the referee released would stay held).
fn close_inherited_files(status_fd: i32, keep_fd: i32) {
    // SAFETY: open(2)/getdents64(2)/fstat(2)/close(2) on a stack buffer; no allocation.
    unsafe {
        let dir = libc::open(
            c"/proc/self/fd".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if dir < 0 {
            return;
        }
        let mut buf = [0u8; 2048];
        loop {
            let n = libc::syscall(libc::SYS_getdents64, dir, buf.as_mut_ptr(), buf.len());
            if n <= 0 {
                break;
            }
            let mut off = 0usize;
            while off + 19 < n as usize {
                // struct linux_dirent64: u64 ino, i64 off, u16 reclen, u8 type, name.
                let reclen = u16::from_ne_bytes([buf[off + 16], buf[off + 17]]) as usize;
                if reclen == 0 {
                    break;
                }
                let mut fd: i32 = 0;
                let mut digits = 0;
                for &b in &buf[off + 19..(off + reclen).min(n as usize)] {
                    if !b.is_ascii_digit() {
                        break;
                    }
                    fd = fd.saturating_mul(10).saturating_add((b - b'0') as i32);
                    digits += 1;
                }
                off += reclen;
                if digits == 0 || fd <= 2 || fd == dir || fd == status_fd || fd == keep_fd {
                    continue;
                }
                let mut st: libc::stat = std::mem::zeroed();
                if libc::fstat(fd, &mut st) != 0 {
                    continue;
                }
                let close = match st.st_mode & libc::S_IFMT {
                    libc::S_IFREG | libc::S_IFDIR | libc::S_IFLNK => true,
                    // Network sockets; a Unix socket may be the standard library's own channel.
                    libc::S_IFSOCK => {
                        let mut domain: libc::c_int = 0;
                        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
                        libc::getsockopt(
                            fd,
                            libc::SOL_SOCKET,
                            libc::SO_DOMAIN,
                            (&mut domain as *mut libc::c_int).cast(),
                            &mut len,
                        ) == 0
                            && domain != libc::AF_UNIX
                    }
                    _ => false,
                };
                if close {
                    libc::close(fd);
                }
            }
        }
        libc::close(dir);
    }
}

/// In the bot's new network namespace (created by the `unshare` just before, with its creator's
/// capabilities): raise the loopback interface, listen on the seat's port on every loopback
/// address, send the listener to the referee and close this process's copies. Nothing else
/// will ever listen in this namespace, and it has no other interface: the seat's listener is
/// all the bot can reach.
fn open_seat_listener(seat: &SeatListen) -> io::Result<()> {
    // SAFETY: socket/ioctl/setsockopt/bind/listen/sendmsg/close on stack structures; no
    // allocation (this runs between fork and exec).
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(s)?;
        let mut ifr: libc::ifreq = std::mem::zeroed();
        for (d, b) in ifr.ifr_name.iter_mut().zip(b"lo\0") {
            *d = *b as libc::c_char;
        }
        let r = libc::ioctl(s, libc::SIOCGIFFLAGS, &mut ifr);
        if r == 0 {
            ifr.ifr_ifru.ifru_flags |= (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        }
        let r = if r == 0 {
            libc::ioctl(s, libc::SIOCSIFFLAGS, &ifr)
        } else {
            r
        };
        let err = io::Error::last_os_error();
        libc::close(s);
        if r != 0 {
            return Err(err);
        }
        // One dual-stack socket on the namespace's wildcard address takes 127.0.0.1 and ::1
        // (its only addresses); a kernel without IPv6 gets an IPv4 one.
        // (A fresh namespace has no connection in TIME_WAIT: no SO_REUSEADDR needed.)
        let zero: libc::c_int = 0;
        let mut l = libc::socket(libc::AF_INET6, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        let bound = if l >= 0 {
            libc::setsockopt(
                l,
                libc::IPPROTO_IPV6,
                libc::IPV6_V6ONLY,
                (&zero as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
            let mut a: libc::sockaddr_in6 = std::mem::zeroed();
            a.sin6_family = libc::AF_INET6 as libc::sa_family_t;
            a.sin6_port = seat.port.to_be();
            libc::bind(
                l,
                (&a as *const libc::sockaddr_in6).cast(),
                std::mem::size_of::<libc::sockaddr_in6>() as libc::socklen_t,
            )
        } else {
            l = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
            check(l)?;
            let mut a: libc::sockaddr_in = std::mem::zeroed();
            a.sin_family = libc::AF_INET as libc::sa_family_t;
            a.sin_port = seat.port.to_be();
            libc::bind(
                l,
                (&a as *const libc::sockaddr_in).cast(),
                std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
            )
        };
        if bound != 0 || libc::listen(l, SEAT_BACKLOG) != 0 {
            let err = io::Error::last_os_error();
            libc::close(l);
            return Err(err);
        }
        let r = send_fd(seat.chan, l);
        let err = io::Error::last_os_error();
        libc::close(l);
        libc::close(seat.chan);
        if r < 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// Send a descriptor of the private `/tmp` (the working folder) over `chan` and close both: the
/// referee keeps the tmpfs alive through it after the namespace is gone.
fn send_tmp(chan: i32) -> io::Result<()> {
    // SAFETY: open/sendmsg/close on a static path and descriptors we own; no allocation.
    unsafe {
        let fd = libc::open(
            c"/tmp".as_ptr(),
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            let err = io::Error::last_os_error();
            libc::close(chan);
            return Err(err);
        }
        let r = send_fd(chan, fd);
        let err = io::Error::last_os_error();
        libc::close(fd);
        libc::close(chan);
        if r < 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// Connections a seat's own listener queues before the referee takes the first (the rest are
/// refused when the referee closes it).
const SEAT_BACKLOG: libc::c_int = 8;

/// Send descriptor `fd` over the Unix socket `chan` with one byte of data.
///
/// # Safety
/// `chan` and `fd` are open descriptors; only system calls on stack buffers.
unsafe fn send_fd(chan: i32, fd: i32) -> isize {
    #[repr(C)]
    union Control {
        buf: [u8; 64],
        _align: libc::cmsghdr,
    }
    let mut byte = [b'L'];
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    let mut control = Control { buf: [0; 64] };
    let space = libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) as usize;
    let mut msg: libc::msghdr = std::mem::zeroed();
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.buf.as_mut_ptr().cast();
    msg.msg_controllen = space as _;
    let cmsg = libc::CMSG_FIRSTHDR(&msg);
    (*cmsg).cmsg_level = libc::SOL_SOCKET;
    (*cmsg).cmsg_type = libc::SCM_RIGHTS;
    (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<libc::c_int>() as u32) as _;
    std::ptr::copy_nonoverlapping(
        (&fd as *const i32).cast::<u8>(),
        libc::CMSG_DATA(cmsg),
        std::mem::size_of::<libc::c_int>(),
    );
    libc::sendmsg(chan, &msg, libc::MSG_NOSIGNAL)
}

/// The keeper: close every descriptor, wait for the bot, exit as it exited.
fn keep(pid: libc::pid_t) -> ! {
    // SAFETY: only system calls; this process never returns to Rust code that could allocate.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..4096 {
                libc::close(fd);
            }
        }
        let mut status = 0;
        loop {
            let r = libc::waitpid(pid, &mut status, 0);
            if r == pid {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(127);
            }
        }
        if libc::WIFEXITED(status) {
            libc::_exit(libc::WEXITSTATUS(status));
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, sig);
            libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(127)
    }
}

fn mount(
    src: *const libc::c_char,
    dst: *const libc::c_char,
    fstype: *const libc::c_char,
    flags: libc::c_ulong,
    data: *const libc::c_char,
) -> io::Result<()> {
    // SAFETY: mount(2) with C strings (or null) prepared before the fork.
    check(unsafe { libc::mount(src, dst, fstype, flags, data.cast()) })
}

const NULL: *const libc::c_char = std::ptr::null();

/// Mount a fresh tmpfs (no setuid, no devices) at `dst` with `opts`.
fn tmpfs(dst: *const libc::c_char, opts: *const libc::c_char) -> io::Result<()> {
    mount(
        c"tmpfs".as_ptr(),
        dst,
        c"tmpfs".as_ptr(),
        libc::MS_NOSUID | libc::MS_NODEV,
        opts,
    )
}

fn build_root(ns: &Namespaces, st: i32) -> io::Result<()> {
    let step = |stage: Stage, r: io::Result<()>| r.map_err(|e| fail(st, stage, e));
    step(
        Stage::PrivateMounts,
        mount(
            NULL,
            c"/".as_ptr(),
            NULL,
            libc::MS_REC | libc::MS_PRIVATE,
            NULL,
        ),
    )?;
    step(
        Stage::MountRoot,
        tmpfs(ns.root.as_ptr(), ns.root_opts.as_ptr()),
    )?;
    for d in &ns.dirs {
        // SAFETY: mkdir(2) with a C string.
        let r = unsafe { libc::mkdir(d.as_ptr(), 0o755) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EEXIST) {
            return Err(fail(st, Stage::MakeSkeleton, io::Error::last_os_error()));
        }
        // The private /tmp is mounted as soon as it exists (directories are in order), so that
        // a seat directory under the host's /tmp is bound inside it rather than hidden by it.
        if d.as_bytes() == ns.tmp_dst.as_bytes() {
            step(
                Stage::MountTmp,
                tmpfs(ns.tmp_dst.as_ptr(), ns.tmp_opts.as_ptr()),
            )?;
        }
    }
    for f in &ns.files {
        // SAFETY: open(2)/close(2) with a C string.
        let fd = unsafe {
            libc::open(
                f.as_ptr(),
                libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                0o644,
            )
        };
        step(Stage::MakeSkeleton, check(fd))?;
        // SAFETY: closing the fd just opened.
        unsafe { libc::close(fd) };
    }
    for (target, link) in &ns.links {
        // SAFETY: symlink(2) with C strings.
        step(
            Stage::MakeSkeleton,
            check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) }),
        )?;
    }
    for b in &ns.binds {
        step(
            Stage::BindMount,
            mount(
                b.src.as_ptr(),
                b.dst.as_ptr(),
                NULL,
                libc::MS_BIND | libc::MS_REC,
                NULL,
            ),
        )?;
        step(
            Stage::BindMount,
            mount(
                NULL,
                b.dst.as_ptr(),
                NULL,
                libc::MS_BIND
                    | libc::MS_REMOUNT
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV
                    | b.keep_flags,
                NULL,
            ),
        )?;
    }
    for b in &ns.dev_binds {
        step(
            Stage::BindMount,
            mount(b.src.as_ptr(), b.dst.as_ptr(), NULL, libc::MS_BIND, NULL),
        )?;
    }
    for c in &ns.copies {
        step(Stage::OwnFiles, copy_own_file(c))?;
    }
    step(
        Stage::MountProc,
        mount(
            c"proc".as_ptr(),
            ns.proc_dst.as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            NULL,
        ),
    )?;
    step(
        Stage::MountTmp,
        tmpfs(ns.shm_dst.as_ptr(), ns.shm_opts.as_ptr()),
    )?;
    // SAFETY: chdir/pivot_root/umount2 with C strings: the classic pivot onto ".", then detach
    // the old root stacked underneath.
    unsafe {
        step(Stage::PivotRoot, check(libc::chdir(ns.root.as_ptr())))?;
        step(
            Stage::PivotRoot,
            check(libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr()) as libc::c_int),
        )?;
        step(
            Stage::PivotRoot,
            check(libc::umount2(c".".as_ptr(), libc::MNT_DETACH)),
        )?;
        step(Stage::PivotRoot, check(libc::chdir(c"/".as_ptr())))?;
    }
    for o in &ns.overlays {
        step(Stage::OwnFiles, mount_overlay(o, ns.strict))?;
    }
    // The skeleton itself read-only.
    step(
        Stage::PivotRoot,
        mount(
            NULL,
            c"/".as_ptr(),
            NULL,
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            NULL,
        ),
    )?;
    let host = ns.hostname.as_bytes();
    // SAFETY: sethostname(2) with a byte slice.
    step(
        Stage::Hostname,
        check(unsafe { libc::sethostname(host.as_ptr().cast(), host.len()) }),
    )?;
    Ok(())
}

/// Copy one of the bot's own files onto a tmpfs of its own (see [`FileCopy`]), then make that
/// tmpfs read-only.
fn copy_own_file(c: &FileCopy) -> io::Result<()> {
    tmpfs(c.dir.as_ptr(), c.opts.as_ptr())?;
    // SAFETY: open(2), sendfile(2), close(2) on C strings prepared before the fork and on the
    // descriptors opened here.
    unsafe {
        let from = libc::open(c.src.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        check(from)?;
        let to = libc::open(
            c.dst.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_EXCL | libc::O_CLOEXEC,
            c.mode,
        );
        if to < 0 {
            let e = io::Error::last_os_error();
            libc::close(from);
            return Err(e);
        }
        let mut result = Ok(());
        loop {
            let n = libc::sendfile(to, from, std::ptr::null_mut(), 1 << 30);
            if n < 0 {
                result = Err(io::Error::last_os_error());
                break;
            }
            if n == 0 {
                break;
            }
        }
        libc::close(from);
        libc::close(to);
        result?;
    }
    mount(
        NULL,
        c.dir.as_ptr(),
        NULL,
        libc::MS_REMOUNT | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        c.opts.as_ptr(),
    )
}

/// Mount one of the bot's own folders at its neutral path (see [`Overlay`]). Without overlayfs
/// the staged bind is moved there instead (`strict`: the bot is not started).
fn mount_overlay(o: &Overlay, strict: bool) -> io::Result<()> {
    let r = mount(
        c"overlay".as_ptr(),
        o.target.as_ptr(),
        c"overlay".as_ptr(),
        libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
        o.opts.as_ptr(),
    );
    match r {
        Ok(()) => {}
        Err(e) if strict => return Err(e),
        Err(_) => {
            mount(
                o.lower.as_ptr(),
                o.target.as_ptr(),
                NULL,
                libc::MS_BIND | libc::MS_REC,
                NULL,
            )?;
            mount(
                NULL,
                o.target.as_ptr(),
                NULL,
                libc::MS_BIND
                    | libc::MS_REMOUNT
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV
                    | o.keep_flags,
                NULL,
            )?;
        }
    }
    // SAFETY: umount2(2) of a C string.
    check(unsafe { libc::umount2(o.lower.as_ptr(), libc::MNT_DETACH) })
}

/// Write a file of `/proc/self` (the user namespace's maps) in one `write`.
fn write_proc(path: &std::ffi::CStr, text: &[u8]) -> io::Result<()> {
    // SAFETY: open(2)/write(2)/close(2) with a C string and a byte slice.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        check(fd)?;
        let n = libc::write(fd, text.as_ptr().cast(), text.len());
        let err = io::Error::last_os_error();
        libc::close(fd);
        if n != text.len() as isize {
            return Err(if n < 0 {
                err
            } else {
                io::Error::from_raw_os_error(libc::EIO)
            });
        }
    }
    Ok(())
}

/// Map the bot's uid and gid in the user namespace just created (`setgroups` denied first, as
/// an unprivileged process must).
fn map_user(user: &UserNs) -> io::Result<()> {
    write_proc(c"/proc/self/setgroups", b"deny")?;
    write_proc(c"/proc/self/uid_map", user.uid_map.as_bytes())?;
    write_proc(c"/proc/self/gid_map", user.gid_map.as_bytes())
}

fn drop_identity(uid: u32, last_cap: i32, clear_groups: bool, st: i32) -> io::Result<()> {
    let step = |stage: Stage, r: io::Result<()>| r.map_err(|e| fail(st, stage, e));
    for cap in 0..=last_cap {
        // SAFETY: prctl with integer arguments. EINVAL for caps this kernel lacks is fine.
        let r = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return Err(fail(
                st,
                Stage::DropCapabilities,
                io::Error::last_os_error(),
            ));
        }
    }
    // SAFETY: prctl with integer arguments.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        );
    }
    // SAFETY: setgroups/setresgid/setresuid with plain values.
    unsafe {
        // In a user namespace `setgroups` is denied; the referee's groups stay, unmapped.
        if clear_groups {
            step(
                Stage::SetGroups,
                check(libc::setgroups(0, std::ptr::null())),
            )?;
        }
        step(Stage::SetGid, check(libc::setresgid(uid, uid, uid)))?;
        step(Stage::SetUid, check(libc::setresuid(uid, uid, uid)))?;
    }
    // Leaving uid 0 clears the permitted and effective sets; clear the inheritable set too.
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    let mut header = Header {
        version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset(2) with a valid header and two data words.
    let r = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    step(Stage::DropCapabilities, check(r as libc::c_int))?;
    Ok(())
}

/// Whether this kernel lets the referee create the namespaces bots run in: start `/bin/true`
/// (or `/usr/bin/true`) inside them once.
pub(super) fn probe_namespaces(user: bool) -> bool {
    let Some(truth) = ["/bin/true", "/usr/bin/true"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
    else {
        return false;
    };
    let mut cmd = std::process::Command::new(truth);
    let flags = libc::CLONE_NEWPID
        | libc::CLONE_NEWNS
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWCGROUP
        | libc::CLONE_NEWNET
        | if user { libc::CLONE_NEWUSER } else { 0 };
    // SAFETY: the closure makes one system call.
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(move || check(libc::unshare(flags)));
    }
    matches!(cmd.status(), Ok(s) if s.success())
}
