//! The Landlock ruleset and the seccomp programs, built in the referee before the bot is forked.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use landlock::{
    Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreated, RulesetCreatedAttr, Scope, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// The running kernel's Landlock ABI version (0 when there is none).
pub(super) fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: the documented ABI-version query: no ruleset, size 0, the version flag.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<u8>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if r < 0 {
        0
    } else {
        r as i32
    }
}

pub(super) fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP only reads the calling thread's mode.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP) >= 0 }
}

/// Access for a path bound read-only: read, list, execute.
fn ro(abi: ABI) -> landlock::BitFlags<AccessFs> {
    AccessFs::from_read(abi)
}

/// What one seat's Landlock domain allows, besides the mounts the child adds itself.
pub(super) struct LandlockSpec<'a> {
    pub abi: i32,
    /// Directories (or files) readable and executable.
    pub read_only: &'a [&'a Path],
    /// Directories fully writable (a host working directory when there is no mount namespace).
    pub read_write: &'a [&'a Path],
    /// Device files readable and writable (`/dev/null` and the like).
    pub devices: &'a [&'a Path],
    /// Restrict TCP (ABI 4+): connect only to these ports, bind none.
    pub tcp_connect: Option<&'a [u16]>,
}

/// Build the ruleset (not yet enforced) for `spec`.
pub(super) fn landlock_ruleset(spec: &LandlockSpec<'_>) -> io::Result<RulesetCreated> {
    let abi = ABI::from(spec.abi);
    let err = |e: landlock::RulesetError| io::Error::other(format!("landlock: {e}"));
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if spec.abi >= 4 && spec.tcp_connect.is_some() {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(err)?;
    }
    if spec.abi >= 6 {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    for p in spec.read_only {
        let fd = PathFd::new(p).map_err(|e| io::Error::other(format!("landlock: {e}")))?;
        let access = if p.is_dir() {
            ro(abi)
        } else {
            ro(abi) & AccessFs::from_file(abi)
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(err)?;
    }
    for p in spec.read_write {
        let fd = PathFd::new(p).map_err(|e| io::Error::other(format!("landlock: {e}")))?;
        created = created
            .add_rule(PathBeneath::new(fd, AccessFs::from_all(abi)))
            .map_err(err)?;
    }
    for p in spec.devices {
        let fd = PathFd::new(p).map_err(|e| io::Error::other(format!("landlock: {e}")))?;
        let access = (AccessFs::ReadFile | AccessFs::WriteFile) & AccessFs::from_file(abi);
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(err)?;
    }
    if let (Some(ports), true) = (spec.tcp_connect, spec.abi >= 4) {
        for &port in ports {
            created = created
                .add_rule(NetPort::new(port, AccessNet::ConnectTcp))
                .map_err(err)?;
        }
    }
    Ok(created)
}

/// Access the child grants on the private mounts it creates (`/tmp`, `/dev/shm`: everything).
pub(super) fn rw_access(abi: i32) -> landlock::BitFlags<AccessFs> {
    AccessFs::from_all(ABI::from(abi))
}

/// Access the child grants on the fresh `/proc` (read only).
pub(super) fn proc_access(abi: i32) -> landlock::BitFlags<AccessFs> {
    ro(ABI::from(abi))
}

#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;
#[cfg(target_arch = "riscv64")]
const ARCH: TargetArch = TargetArch::riscv64;

/// System calls a bot never needs and that reach beyond its seat: tracing and reading other
/// processes, loading programs into the kernel, mounting, namespaces, keyrings, modules,
/// rebooting, the clock, io_uring (whose operations bypass seccomp) and file handles.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_syslog,
    libc::SYS_quotactl,
    libc::SYS_vhangup,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_userfaultfd,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_fanotify_init,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// Namespace flags a bot may not pass to clone(2).
const NS_FLAGS: &[u64] = &[
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWCGROUP as u64,
    0x80, // CLONE_NEWTIME
];

/// `MSG_FASTOPEN`: data in the SYN (TCP Fast Open), which `sendto`/`sendmsg` would send on a
/// socket that never called `connect`.
const MSG_FASTOPEN: u64 = 0x2000_0000;
/// `TCP_FASTOPEN` (a listener's queue) and `TCP_FASTOPEN_CONNECT` (connect with data).
const TCP_FASTOPEN_OPTS: &[u64] = &[23, 30];

fn cond(
    arg: u8,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, seccompiler::BackendError> {
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value)
}

/// The socket rules every bot gets (each rule denies what it matches): `socket(2)` only for
/// Unix sockets, TCP over IPv4 and IPv6 (protocol 0 or `IPPROTO_TCP`, so not MPTCP, whose
/// `IPPROTO_MPTCP` Landlock's TCP rules do not see) and route netlink (which `getaddrinfo`
/// reads, and which carries nothing between unprivileged processes); no UDP, raw, packet,
/// vsock or other netlink sockets (`NETLINK_USERSOCK` passes data between any two processes of
/// a network namespace); and no TCP Fast Open (`MSG_FASTOPEN` on `sendto`/`sendmsg`/
/// `sendmmsg`, the `TCP_FASTOPEN*` options), which reaches a listener without `connect`.
#[allow(clippy::unnecessary_cast)]
fn socket_rules() -> Result<Vec<(i64, Vec<SeccompRule>)>, seccompiler::BackendError> {
    use SeccompCmpOp::{Eq, MaskedEq, Ne};
    let (unix, inet, inet6, netlink) = (
        libc::AF_UNIX as u64,
        libc::AF_INET as u64,
        libc::AF_INET6 as u64,
        libc::AF_NETLINK as u64,
    );
    let tcp = libc::IPPROTO_TCP as u64;
    let stream = libc::SOCK_STREAM as u64;
    let mut socket = vec![
        // Any other family.
        SeccompRule::new(vec![
            cond(0, Ne, unix)?,
            cond(0, Ne, inet)?,
            cond(0, Ne, inet6)?,
            cond(0, Ne, netlink)?,
        ])?,
        // Netlink other than NETLINK_ROUTE (0).
        SeccompRule::new(vec![cond(0, Eq, netlink)?, cond(2, Ne, 0)?])?,
    ];
    for family in [inet, inet6] {
        // A protocol other than the default or TCP (MPTCP, SCTP, UDP-Lite, ...).
        socket.push(SeccompRule::new(vec![
            cond(0, Eq, family)?,
            cond(2, Ne, 0)?,
            cond(2, Ne, tcp)?,
        ])?);
        // A type other than SOCK_STREAM (the low four bits; the rest are flags).
        for ty in (0..16u64).filter(|&t| t != stream) {
            socket.push(SeccompRule::new(vec![
                cond(0, Eq, family)?,
                cond(1, MaskedEq(0xf), ty)?,
            ])?);
        }
    }
    let fastopen = |arg: u8| -> Result<Vec<SeccompRule>, seccompiler::BackendError> {
        Ok(vec![SeccompRule::new(vec![cond(
            arg,
            MaskedEq(MSG_FASTOPEN),
            MSG_FASTOPEN,
        )?])?])
    };
    let mut setsockopt = Vec::new();
    for &opt in TCP_FASTOPEN_OPTS {
        setsockopt.push(SeccompRule::new(vec![
            cond(1, Eq, tcp)?,
            cond(2, Eq, opt)?,
        ])?);
    }
    Ok(vec![
        (libc::SYS_socket as i64, socket),
        (libc::SYS_sendto as i64, fastopen(3)?),
        (libc::SYS_sendmsg as i64, fastopen(2)?),
        (libc::SYS_sendmmsg as i64, fastopen(3)?),
        (libc::SYS_setsockopt as i64, setsockopt),
    ])
}

/// `fcntl(2)` commands that reach a lock or a watch shared with other processes: POSIX record
/// locks (`F_GETLK`, `F_SETLK`, `F_SETLKW`), open-file-description locks (`F_OFD_*`), leases
/// and directory notification (`F_NOTIFY`, dnotify). A read lock needs only read access, so two
/// bots that can both read `/etc/passwd` would signal each other through the lock's offset
/// (`F_GETLK` reports it); a watch on a shared directory sees the other bot's opens.
const FCNTL_SHARED: &[u64] = &[5, 6, 7, 36, 37, 38, 1024, 1025, 1026];

/// System calls that name something every process of the machine shares when the bot has no
/// namespaces of its own: SysV shared memory, message queues and semaphores (their keys and ids
/// are machine-wide without an IPC namespace, and a segment outlives the bot), POSIX message
/// queues, and `listen` (on an unbound socket the kernel picks a port that Landlock's "bind
/// nothing" never sees, and the host reaches it).
const DENIED_WITHOUT_NAMESPACES: &[libc::c_long] = &[
    libc::SYS_listen,
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_shmdt,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
    libc::SYS_mq_open,
    libc::SYS_mq_unlink,
    libc::SYS_mq_timedsend,
    libc::SYS_mq_timedreceive,
    libc::SYS_mq_notify,
    libc::SYS_mq_getsetattr,
];

/// The seccomp programs, installed in order: the deny-list (EPERM), the shared-object rules
/// (ENOLCK for file locks, EPERM for watches: see [`lock_and_watch_rules`]), then clone3
/// answered with ENOSYS (its flags live in memory seccomp cannot read, and every libc falls
/// back to clone(2), whose flags the first program checks). `namespaces` is false in the tier
/// without namespaces, where the bot also may not use SysV or POSIX IPC or `listen`.
/// Each variant is compiled once.
pub(super) fn seccomp_programs(namespaces: bool) -> io::Result<Vec<BpfProgram>> {
    type Compiled = std::sync::OnceLock<Result<Vec<BpfProgram>, String>>;
    static WITH: Compiled = std::sync::OnceLock::new();
    static WITHOUT: Compiled = std::sync::OnceLock::new();
    let cell = if namespaces { &WITH } else { &WITHOUT };
    cell.get_or_init(|| compile_seccomp(namespaces).map_err(|e| e.to_string()))
        .clone()
        .map_err(io::Error::other)
}

/// File locks and file-system watches: every bot can read the same system files (`/etc`,
/// `/usr`), and a lock or a watch on one is seen by every other process that looks. `flock`
/// and the locking `fcntl` commands fail with ENOLCK ("no locks available", what a file system
/// without locking answers, which programs that lock handle). `inotify_add_watch` fails with
/// EPERM in the deny-list (as `fanotify_init` does). Creating an inotify instance still works, so a
/// runtime that makes one at start-up (none of the tested ones does) starts.
#[allow(clippy::unnecessary_cast)]
fn lock_and_watch_rules() -> Result<SeccompFilter, seccompiler::BackendError> {
    let mut fcntl = Vec::new();
    for &cmd in FCNTL_SHARED {
        fcntl.push(SeccompRule::new(vec![cond(1, SeccompCmpOp::Eq, cmd)?])?);
    }
    let mut locks: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    locks.insert(libc::SYS_flock as i64, Vec::new());
    locks.insert(libc::SYS_fcntl as i64, fcntl);
    SeccompFilter::new(
        locks,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOLCK as u32),
        ARCH,
    )
}

// `as i64`: system call numbers are `c_long`, 32 bits wide on some targets.
#[allow(clippy::unnecessary_cast)]
fn compile_seccomp(namespaces: bool) -> io::Result<Vec<BpfProgram>> {
    let err = |e: seccompiler::BackendError| io::Error::other(format!("seccomp: {e}"));
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &nr in DENIED {
        rules.insert(nr as i64, Vec::new());
    }
    rules.insert(libc::SYS_inotify_add_watch as i64, Vec::new());
    if !namespaces {
        for &nr in DENIED_WITHOUT_NAMESPACES {
            rules.insert(nr as i64, Vec::new());
        }
    }
    let mut clone_rules = Vec::new();
    for &flag in NS_FLAGS {
        let cond = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )
        .map_err(err)?;
        clone_rules.push(SeccompRule::new(vec![cond]).map_err(err)?);
    }
    rules.insert(libc::SYS_clone as i64, clone_rules);
    for (nr, socket_rules) in socket_rules().map_err(err)? {
        rules.insert(nr as i64, socket_rules);
    }
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        ARCH,
    )
    .map_err(err)?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3 as i64, Vec::new());
    let clone3 = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        ARCH,
    )
    .map_err(err)?;
    Ok(vec![
        deny.try_into().map_err(err)?,
        lock_and_watch_rules()
            .and_then(BpfProgram::try_from)
            .map_err(err)?,
        clone3.try_into().map_err(err)?,
    ])
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;
#[cfg(target_arch = "riscv64")]
const AUDIT_ARCH: u32 = 0xC000_00F3;

const fn bpf(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The program a TCP client seat's bot gets last, with a listener for its notifications
/// (`SECCOMP_FILTER_FLAG_NEW_LISTENER`): every `connect(2)` waits for the referee, which reads
/// the address and lets the call go on (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`, where Landlock and
/// the bot's network namespace still decide) or, for a port the seat does not listen on,
/// answers "connection refused" and keeps the address for its diagnosis (`crate::connect_watch`).
/// It enforces nothing: the address is read from the bot's memory, which another of its threads
/// may change in between, so a hostile bot can only make its own diagnosis wrong.
pub(super) static CONNECT_WATCH: [libc::sock_filter; 6] = {
    // BPF_LD | BPF_W | BPF_ABS, BPF_JMP | BPF_JEQ | BPF_K, BPF_RET | BPF_K.
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    [
        // seccomp_data.arch: another ABI's calls pass (the deny-list already judged them).
        bpf(LD_W_ABS, 0, 0, 4),
        bpf(JEQ_K, 0, 3, AUDIT_ARCH),
        // seccomp_data.nr
        bpf(LD_W_ABS, 0, 0, 0),
        bpf(JEQ_K, 0, 1, libc::SYS_connect as u32),
        bpf(RET_K, 0, 0, libc::SECCOMP_RET_USER_NOTIF),
        bpf(RET_K, 0, 0, libc::SECCOMP_RET_ALLOW),
    ]
};
