//! Hostile bots in real matches: the attack is contained, the match completes, and only the
//! attacker can be charged. The attacks are those of `crates/agent/tests/zoo/attack.py` (each
//! is proven contained on its own there); here they run inside a seat that then plays legally.

use std::path::PathBuf;
use std::time::Duration;

use kakehiki_agent::{Layer, SandboxLevel, SandboxReport};
use kakehiki_core::SeatSpec;
use kakehiki_referee::{find_game, MatchSpec};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn path(rel: &str) -> String {
    root()
        .join(rel)
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

fn layers(needed: &[Layer]) -> bool {
    let r = SandboxReport::current(SandboxLevel::Best);
    for l in needed {
        if !r.layers.contains(l) {
            eprintln!(
                "SKIPPED: layer {} unavailable: {}",
                l.name(),
                r.missing_text()
            );
            return false;
        }
    }
    true
}

/// The folders of the zoo's scripts and the example bots: named inside shell commands, they are
/// given to the sandbox.
fn zoo_dirs() -> Vec<PathBuf> {
    ["crates/agent/tests/zoo", "examples/bots/python"]
        .iter()
        .map(|d| root().join(d).canonicalize().unwrap())
        .collect()
}

/// The replay's stderr events of `seat`, joined.
fn seat_stderr(record: &kakehiki_referee::MatchRecord, seat: usize) -> String {
    let tag = format!("\"seat\":{seat}");
    record
        .replay
        .lines()
        .iter()
        .filter(|l| {
            (l.contains("\"event\":\"stderr\"") || l.contains("\"event\":\"seat_end\""))
                && l.contains(&tag)
        })
        .cloned()
        .collect()
}

/// Host processes whose command line contains `needle`.
fn processes_with(needle: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_str()
                .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|b| {
                    String::from_utf8_lossy(&b)
                        .replace('\0', " ")
                        .contains(needle)
                })
                .unwrap_or(false)
        })
        .count()
}

#[tokio::test]
async fn a_hostile_nac_seat_harms_no_one_and_nothing_outlives_the_match() {
    if !layers(&[Layer::Identity, Layer::Namespaces, Layer::Seccomp]) {
        return;
    }
    let attack = path("crates/agent/tests/zoo/attack.py");
    let bot = path("examples/bots/python/nac_bot.py");
    let referee = std::process::id();
    let marker = format!("{}.{}", 700 + referee % 97, referee);
    // Stop every process it can reach, the referee by pid; trace the referee; leave a daemon;
    // then play legally.
    let hostile = format!(
        "python3 {attack} --exit signal -1 {referee} 1 >&2; \
         python3 {attack} --exit ptrace {referee} >&2; \
         python3 {attack} --exit outlive {marker} >&2; \
         exec python3 {bot}"
    );
    let honest = || SeatSpec::Cmd(vec!["python3".into(), bot.clone()]);
    let seats = vec![
        SeatSpec::Cmd(vec!["sh".into(), "-c".into(), hostile]),
        honest(),
        honest(),
        honest(),
    ];
    let mut spec = MatchSpec::new("nac", 7, seats);
    // The scripts are named inside a shell command: their directories are given to the sandbox.
    spec.sandbox.jail.ro_paths = ["crates/agent/tests/zoo", "examples/bots/python"]
        .iter()
        .map(|d| root().join(d).canonicalize().unwrap())
        .collect();
    let driver = find_game("nac").unwrap();
    let record = tokio::time::timeout(Duration::from_secs(120), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up");
    for (i, seat) in record.report.seats.iter().enumerate().skip(1) {
        assert!(
            seat.errors.is_empty(),
            "honest seat {i} was charged: {:?}",
            seat.errors
        );
    }
    let stderr: Vec<&String> = record
        .replay
        .lines()
        .iter()
        .filter(|l| l.contains("\"event\":\"stderr\""))
        .collect();
    assert!(
        record.report.seats[0].errors.is_empty(),
        "the attacker still plays legally: {:?} {stderr:?}",
        record.report.seats[0].errors
    );
    let mut left = usize::MAX;
    for _ in 0..100 {
        left = processes_with(&format!("sleep {marker}"));
        if left == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(left, 0, "the attacker's daemon outlived the match");
}

/// Two NAC seats try to talk before they play legally. The first takes file locks and watches
/// on `/etc/passwd` and holds them, and leaves names in its network namespace (an abstract
/// socket, a port from listen() without bind(), a netlink port id of a number both know); the
/// second looks for the locks (`F_GETLK`, `F_OFD_GETLK` at the offset, an exclusive `flock`),
/// and for the names in `/proc/net` (any listener, the port id) and by colliding on them.
/// Nothing crosses, the match completes, and no seat is charged.
#[tokio::test]
async fn two_nac_seats_find_no_channel_and_the_match_completes() {
    if !layers(&[Layer::Namespaces, Layer::Seccomp]) {
        return;
    }
    let channels = path("crates/agent/tests/zoo/channels.py");
    let bot = path("examples/bots/python/nac_bot.py");
    let token = format!("kakehiki-match-{}", std::process::id());
    let portid = 4_000_000 + std::process::id();
    // The sender's attacks stay alive (their stdin open) while the receiver looks.
    let sender = format!(
        "sleep 20 | python3 {channels} locks /etc/passwd 4242 >&2 & \
         sleep 20 | python3 {channels} hold {token} {portid} >&2 & \
         exec python3 {bot}"
    );
    let receiver = format!(
        "sleep 1; python3 {channels} locks-seek /etc/passwd 4242 </dev/null >&2; \
         echo '{token} any {portid}' | python3 {channels} seek >&2; exec python3 {bot}"
    );
    let seats = vec![
        SeatSpec::Cmd(vec!["sh".into(), "-c".into(), sender]),
        SeatSpec::Cmd(vec!["sh".into(), "-c".into(), receiver]),
        SeatSpec::Cmd(vec!["python3".into(), bot.clone()]),
        SeatSpec::Cmd(vec!["python3".into(), bot.clone()]),
    ];
    let mut spec = MatchSpec::new("nac", 11, seats);
    spec.sandbox.jail.ro_paths = zoo_dirs();
    let driver = find_game("nac").unwrap();
    let record = tokio::time::timeout(Duration::from_secs(120), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up");
    for (i, seat) in record.report.seats.iter().enumerate() {
        assert!(
            seat.errors.is_empty(),
            "seat {i} was charged: {:?}",
            seat.errors
        );
    }
    let (sent, seen) = (seat_stderr(&record, 0), seat_stderr(&record, 1));
    // The sender held every name (so that finding none means something).
    for name in [
        format!("RESULT NAME unix {token}"),
        "RESULT NAME tcp ".to_string(),
        format!("RESULT NAME netlink {portid}"),
    ] {
        assert!(
            sent.contains(&name),
            "the sender did not hold {name}: {sent}"
        );
    }
    for lock in ["posix-lock", "ofd-lock", "flock", "dnotify", "inotify"] {
        assert!(
            sent.contains(&format!("RESULT BLOCKED {lock}")),
            "{lock} was not refused: {sent}"
        );
    }
    assert!(!sent.contains("RESULT OPEN"), "{sent}");
    for look in [
        "posix-getlk",
        "ofd-getlk",
        "flock-ex",
        "proc-net-unix",
        "proc-net-tcp",
        "proc-net-netlink",
        "netlink-collision",
        "bind-collision",
        "abstract-connect",
    ] {
        assert!(
            seen.contains(&format!("RESULT BLOCKED {look}")),
            "{look}: {seen}"
        );
    }
    assert!(!seen.contains("RESULT SEEN"), "{seen}");
    assert!(!seen.contains("RESULT UNSEEN"), "{seen}");
}

/// A NAC match with the zoo's `attack` (a shell command, its output on stderr) run by seat 0
/// before it plays legally, and three honest seats.
async fn play_after(attack: &str, seed: u64) -> kakehiki_referee::MatchRecord {
    let bot = path("examples/bots/python/nac_bot.py");
    let mut seats = vec![SeatSpec::Cmd(vec![
        "sh".into(),
        "-c".into(),
        format!("{attack}; exec python3 {bot}"),
    ])];
    seats.extend((1..4).map(|_| SeatSpec::Cmd(vec!["python3".into(), bot.clone()])));
    let mut spec = MatchSpec::new("nac", seed, seats);
    spec.sandbox.jail.ro_paths = zoo_dirs();
    let driver = find_game("nac").unwrap();
    tokio::time::timeout(Duration::from_secs(60), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up")
}

/// What a re-run of this test binary (a referee started by a parent that gave it something)
/// tells its parent of a match: the report and the attacker's stderr, one line.
fn tell_parent(record: &kakehiki_referee::MatchRecord) {
    let v = serde_json::json!({"report": record.report, "attacker": seat_stderr(record, 0)});
    println!("MATCH {v}");
}

/// Run this test binary again for test `name` alone with `env` set (the re-run plays the
/// matches and tells them with [`tell_parent`]); `setup` runs in the child before `exec`. The
/// matches it told, in order, after asserting it passed.
fn rerun(
    name: &str,
    env: (&str, &str),
    setup: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
) -> Vec<serde_json::Value> {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        &format!("sandbox_match::{name}"),
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(env.0, env.1);
    // SAFETY: the callers' closures make only system calls (dup2, seccomp), no allocation.
    unsafe {
        cmd.pre_exec(setup);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the re-run failed:\n{stdout}\n{stderr}"
    );
    let told: Vec<serde_json::Value> = stdout
        .lines()
        // After libtest's `test <name> ... ` on the same line.
        .filter_map(|l| l.split_once("MATCH ").map(|(_, m)| m))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        !told.is_empty(),
        "the re-run played no match:\n{stdout}\n{stderr}"
    );
    told
}

/// A told match completed with a score for every seat, and no seat was charged.
fn no_seat_charged(told: &serde_json::Value) {
    let seats = told["report"]["seats"].as_array().unwrap();
    assert_eq!(
        told["report"]["scores"].as_array().map(Vec::len),
        Some(seats.len()),
        "{told}"
    );
    for (i, seat) in seats.iter().enumerate() {
        assert_eq!(
            seat["errors"],
            serde_json::json!([]),
            "seat {i} was charged: {told}"
        );
    }
}

const INHERITED_ENV: &str = "KAKEHIKI_MATCH_INHERITED";
/// The numbers the parent gives the referee: a results file, one end of a socket pair and of
/// two pipes, a TCP listener.
const INHERITED: [i32; 5] = [901, 902, 903, 904, 905];

/// A referee that inherited descriptors from its own parent without close-on-exec (a results
/// file holding a secret, a supervisor's socket and pipe with the secret waiting in them, a pipe
/// back to the supervisor, a listener with a connection waiting): a seat that reads and writes
/// every descriptor above 2 finds none, the secret stays where it was, nothing reaches the
/// parent, and the match completes with no seat charged. The referee is this test binary run
/// again by the test with those descriptors.
#[test]
fn descriptors_the_referee_inherited_reach_no_seat() {
    use nix::libc;
    if std::env::var_os(INHERITED_ENV).is_some() {
        for fd in INHERITED {
            // SAFETY: fcntl(2) F_GETFD reads a descriptor's flags.
            let flags = unsafe { libc::fcntl(fd, libc::F_GETFD) };
            assert_eq!(flags, 0, "the referee does not hold fd {fd} inheritable");
        }
        let channels = path("crates/agent/tests/zoo/channels.py");
        let list = INHERITED.map(|f| f.to_string()).join(" ");
        let attack = format!("python3 {channels} fds-all {list} </dev/null >&2");
        tell_parent(&runtime().block_on(play_after(&attack, 19)));
        return;
    }
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    let secret = format!("kakehiki-secret-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results.sqlite");
    std::fs::write(&results, &secret).unwrap();
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .open(&results)
        .unwrap();
    let (mut ours, mut theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    ours.write_all(secret.as_bytes()).unwrap();
    let (mut secret_r, mut secret_w) = pipe();
    secret_w.write_all(secret.as_bytes()).unwrap();
    let (mut back_r, back_w) = pipe();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut waiting = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let from = [
        file.as_raw_fd(),
        theirs.as_raw_fd(),
        secret_r.as_raw_fd(),
        back_w.as_raw_fd(),
        listener.as_raw_fd(),
    ];
    let told = rerun(
        "descriptors_the_referee_inherited_reach_no_seat",
        (INHERITED_ENV, "1"),
        move || {
            for (f, to) in from.into_iter().zip(INHERITED) {
                // SAFETY: dup2(2) onto a number the child does not use; it clears
                // close-on-exec, as a parent that knows nothing of it would leave it.
                if unsafe { libc::dup2(f, to) } != to {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        },
    );
    let attacker = told[0]["attacker"].as_str().unwrap();
    assert!(
        attacker.contains("RESULT BLOCKED fds none-above-2"),
        "{attacker}"
    );
    assert!(!attacker.contains("RESULT OPEN"), "{attacker}");
    no_seat_charged(&told[0]);
    assert!(
        !told[0].to_string().contains(&secret),
        "the secret reached the match: {}",
        told[0]
    );
    // Everything is where the parent left it: the secret unread, nothing written back.
    let pending = |r: &mut dyn Read| {
        let mut buf = [0u8; 256];
        match r.read(&mut buf) {
            Ok(n) => String::from_utf8_lossy(&buf[..n]).into_owned(),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => String::new(),
            Err(e) => panic!("{e}"),
        }
    };
    assert_eq!(std::fs::read_to_string(&results).unwrap(), secret);
    for s in [&ours, &theirs] {
        s.set_nonblocking(true).unwrap();
    }
    waiting.set_nonblocking(true).unwrap();
    listener.set_nonblocking(true).unwrap();
    set_nonblocking(&secret_r);
    set_nonblocking(&back_r);
    assert_eq!(pending(&mut theirs), secret, "the socket's secret was read");
    assert_eq!(
        pending(&mut ours),
        "",
        "a seat wrote to the parent's socket"
    );
    assert_eq!(pending(&mut secret_r), secret, "the pipe's secret was read");
    assert_eq!(
        pending(&mut back_r),
        "",
        "a seat wrote to the parent's pipe"
    );
    assert!(
        listener.accept().is_ok(),
        "a seat took the connection waiting on the listener"
    );
    assert_eq!(pending(&mut waiting), "", "a seat answered the connection");
    drop((file, back_w));
}

/// A pipe, both ends close-on-exec (the re-run is given one end by `dup2`).
fn pipe() -> (std::fs::File, std::fs::File) {
    let (r, w) = nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC).unwrap();
    (r.into(), w.into())
}

fn set_nonblocking(f: &std::fs::File) {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    use std::os::fd::AsRawFd;
    let flags = OFlag::from_bits_truncate(fcntl(f.as_raw_fd(), FcntlArg::F_GETFL).unwrap());
    fcntl(f.as_raw_fd(), FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK)).unwrap();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

const NO_NAMESPACES_ENV: &str = "KAKEHIKI_MATCH_NO_NAMESPACES";

/// The seccomp programs of a container runtime's profile that refuses namespaces: unshare and
/// setns fail, and clone with any namespace flag; clone3 answers ENOSYS (libc falls back to
/// clone). The same as the agent zoo's `the_zoo_is_contained_where_namespaces_are_refused`.
fn refuse_namespaces() -> Vec<seccompiler::BpfProgram> {
    use nix::libc;
    use seccompiler::{
        SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    };
    use std::collections::BTreeMap;
    const NEW_NS: u64 = 0x7e02_0080; // every CLONE_NEW* flag, CLONE_NEWTIME included
    let arch = std::env::consts::ARCH.try_into().unwrap();
    let clone: Vec<SeccompRule> = (0..64)
        .map(|bit| 1u64 << bit)
        .filter(|flag| NEW_NS & flag != 0)
        .map(|flag| {
            let on = SeccompCmpOp::MaskedEq(flag);
            SeccompRule::new(vec![SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                on,
                flag,
            )
            .unwrap()])
            .unwrap()
        })
        .collect();
    let deny = BTreeMap::from([
        (libc::SYS_unshare, Vec::new()),
        (libc::SYS_setns, Vec::new()),
        (libc::SYS_clone, clone),
    ]);
    let clone3 = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    [(deny, libc::EPERM), (clone3, libc::ENOSYS)]
        .into_iter()
        .map(|(rules, errno)| {
            SeccompFilter::new(
                rules,
                SeccompAction::Allow,
                SeccompAction::Errno(errno as u32),
                arch,
            )
            .unwrap()
            .try_into()
            .unwrap()
        })
        .collect()
}

/// A referee whose namespace creation is refused (a container's seccomp profile) confines its
/// bots without namespaces, where SysV IPC is machine-wide and outlives a bot and listen() on
/// an unbound socket gets a port the host reaches. In a match, a seat's shmget, msgget, semget
/// under a known key and listen() (IPv4, IPv6) are refused; a seat of a second match finds no
/// object under that key; none is left on the machine; no seat is charged. The referee is this
/// test binary run again under the filter.
#[test]
fn without_namespaces_a_seat_gets_no_sysv_object_or_listener_and_leaves_none() {
    if let Ok(key) = std::env::var(NO_NAMESPACES_ENV) {
        let report = SandboxReport::current(SandboxLevel::Best);
        assert!(
            !report.layers.contains(&Layer::Namespaces),
            "the bots still have namespaces: {:?}",
            report.layers
        );
        assert!(
            report.layers.contains(&Layer::Seccomp),
            "{:?}",
            report.layers
        );
        let channels = path("crates/agent/tests/zoo/channels.py");
        let rt = runtime();
        for (mode, seed) in [("sysv", 23), ("sysv-find", 29)] {
            let attack = format!("python3 {channels} {mode} {key} </dev/null >&2");
            tell_parent(&rt.block_on(play_after(&attack, seed)));
        }
        return;
    }
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { nix::libc::geteuid() } != 0 {
        eprintln!("SKIPPED: the tier without namespaces is run as root");
        return;
    }
    if !layers(&[Layer::Seccomp]) {
        return;
    }
    let key = 0x4b4b_0000 + (std::process::id() & 0xffff);
    let filters = refuse_namespaces();
    let told = rerun(
        "without_namespaces_a_seat_gets_no_sysv_object_or_listener_and_leaves_none",
        (NO_NAMESPACES_ENV, &key.to_string()),
        move || {
            for p in &filters {
                seccompiler::apply_filter(p).map_err(std::io::Error::other)?;
            }
            Ok(())
        },
    );
    // Left on the machine under the key (the host's view; a failed run removes them).
    let left: Vec<String> = ["shm", "msg", "sem"]
        .iter()
        .filter(|t| {
            std::fs::read_to_string(format!("/proc/sysvipc/{t}"))
                .unwrap()
                .lines()
                .any(|l| l.split_whitespace().next() == Some(&key.to_string()))
        })
        .map(|t| t.to_string())
        .collect();
    if !left.is_empty() {
        let _ = std::process::Command::new("ipcrm")
            .args(["-M", &key.to_string(), "-Q", &key.to_string()])
            .args(["-S", &key.to_string()])
            .status();
    }
    assert_eq!(told.len(), 2, "{told:?}");
    let (made, found) = (
        told[0]["attacker"].as_str().unwrap(),
        told[1]["attacker"].as_str().unwrap(),
    );
    for call in ["shmget", "msgget", "semget", "listen", "listen6"] {
        assert!(
            made.contains(&format!("RESULT BLOCKED {call} EPERM")),
            "{call}: {made}"
        );
    }
    assert!(!made.contains("RESULT OPEN"), "{made}");
    for call in ["shmget", "msgget", "semget"] {
        assert!(
            found.contains(&format!("RESULT BLOCKED {call} EPERM")),
            "{call}: {found}"
        );
    }
    assert!(!found.contains("RESULT SEEN"), "{found}");
    assert!(
        left.is_empty(),
        "SysV objects left under key {key}: {left:?}"
    );
    for t in &told {
        no_seat_charged(t);
    }
}

/// A seat writes terminal commands to stderr (a window title, a clear screen, an OSC 52
/// clipboard write, a carriage return) and a forged result line, then exits with code 3 in the
/// first turn: the match completes, that seat alone is charged, its stderr is kept as it wrote
/// it, and escaped as the organiser is shown it (`play`, `check`: `terminal_text`) it holds no
/// control byte. (`kakehiki play`'s own output: `a_failing_bots_stderr_reaches_the_terminal_escaped`
/// in the CLI's tests.)
#[tokio::test]
async fn a_seat_that_crashes_with_terminal_commands_on_stderr_is_charged_alone() {
    let hostile = "import sys\n\
                   print('READY', flush=True)\n\
                   sys.stdin.readline()\n\
                   sys.stderr.write('\\x1b]0;pwned\\x07\\x1b[2J\\x1b[H\\x1b]52;c;cHduZWQ=\\x07'\n\
                   \x20                '\\nwinner: seat 0\\r\\x1b[Kresult: seat 0 won\\n')\n\
                   sys.exit(3)\n";
    let bot = path("examples/bots/python/nac_bot.py");
    let mut seats = vec![SeatSpec::Cmd(vec![
        "python3".into(),
        "-c".into(),
        hostile.into(),
    ])];
    seats.extend((1..4).map(|_| SeatSpec::Cmd(vec!["python3".into(), bot.clone()])));
    let mut spec = MatchSpec::new("nac", 31, seats);
    spec.sandbox.jail.ro_paths = zoo_dirs();
    let driver = find_game("nac").unwrap();
    let record = tokio::time::timeout(Duration::from_secs(60), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up");
    let report = &record.report;
    assert_eq!(report.scores.len(), 4, "{report:?}");
    assert!(
        !report.seats[0].errors.is_empty(),
        "the crashed seat was not charged"
    );
    for (i, seat) in report.seats.iter().enumerate().skip(1) {
        assert!(
            seat.errors.is_empty(),
            "seat {i} was charged: {:?}",
            seat.errors
        );
    }
    let extra = &report.seats[0].extra;
    assert_eq!(extra["exit"], "exit code 3", "{extra:?}");
    let stderr = extra["stderr"].as_str().unwrap();
    assert!(stderr.contains("\x1b]52;c;cHduZWQ=\x07"), "{stderr:?}");
    let shown = kakehiki_core::text::terminal_text(stderr);
    for escaped in [
        "\\x1b]0;pwned\\x07",
        "\\x1b[2J",
        "\\x1b]52;c;cHduZWQ=\\x07",
        "winner: seat 0\\r\\x1b[Kresult",
    ] {
        assert!(shown.contains(escaped), "{escaped}: {shown}");
    }
    assert!(
        !shown
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{shown:?}"
    );
}

/// A Geister `tcp-cmd` client tries to connect to the other seat's port first (to take that
/// seat and play both sides); the sandbox lets it connect to its own seat's port only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_geister_client_cannot_take_the_other_seat() {
    if !layers(&[Layer::LandlockNet]) {
        return;
    }
    let attack = path("crates/agent/tests/zoo/attack.py");
    let client = path("examples/bots/python/geister_client.py");
    let other_port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let hostile = format!(
        "python3 {attack} --exit connect {other_port} >&2; exec python3 {client} {{host}} {{port}}"
    );
    let seats = vec![
        SeatSpec::TcpCmd(vec!["sh".into(), "-c".into(), hostile]),
        SeatSpec::Tcp,
    ];
    let mut spec = MatchSpec::new("geister", 3, seats);
    spec.rules = Some("gpw".into());
    spec.options.insert("port1".into(), other_port.to_string());
    spec.options.insert("linger_ms".into(), "2000".into());
    spec.sandbox.jail.ro_paths = ["crates/agent/tests/zoo", "examples/bots/python"]
        .iter()
        .map(|d| root().join(d).canonicalize().unwrap())
        .collect();
    // The honest client of seat 1 connects a moment later, as a contestant's would.
    let honest = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        tokio::process::Command::new("python3")
            .arg(path("examples/bots/python/geister_client.py"))
            .arg("127.0.0.1")
            .arg(other_port.to_string())
            .kill_on_drop(true)
            .output()
            .await
    });
    let driver = find_game("geister").unwrap();
    let record = tokio::time::timeout(Duration::from_secs(120), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up");
    let _ = honest.await;
    let stderr = seat_stderr(&record, 0);
    assert!(
        stderr.contains(&format!("RESULT BLOCKED {other_port}")),
        "the attacker reached the other seat's port: {stderr}"
    );
    assert!(
        record.report.seats[1].errors.is_empty(),
        "the honest seat was charged: {:?}",
        record.report.seats[1].errors
    );
}

/// The same attack with every side door (MPTCP, TCP Fast Open, UDP) against the other seat's
/// contest port, where both seats are launched clients: each has a network of its own holding
/// only its seat's listener, so the other seat's port does not exist for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_geister_client_reaches_no_other_seat_by_any_socket() {
    if !layers(&[Layer::Namespaces, Layer::Seccomp]) {
        return;
    }
    let attack = path("crates/agent/tests/zoo/attack.py");
    let client = path("examples/bots/python/geister_client.py");
    // Seat 0 (port 10000) goes for seat 1's port 10001 before playing its own.
    let hostile = format!(
        "python3 {attack} --exit connect 10001 >&2; python3 {attack} --exit side-doors 10001 >&2; \
         exec python3 {client} {{host}} {{port}}"
    );
    let seats = vec![
        SeatSpec::TcpCmd(vec!["sh".into(), "-c".into(), hostile]),
        SeatSpec::TcpCmd(vec![
            "python3".into(),
            client.clone(),
            "{host}".into(),
            "{port}".into(),
        ]),
    ];
    let mut spec = MatchSpec::new("geister", 5, seats);
    spec.rules = Some("gpw".into());
    spec.sandbox.jail.ro_paths = ["crates/agent/tests/zoo", "examples/bots/python"]
        .iter()
        .map(|d| root().join(d).canonicalize().unwrap())
        .collect();
    let driver = find_game("geister").unwrap();
    let record = tokio::time::timeout(Duration::from_secs(120), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up");
    let stderr = seat_stderr(&record, 0);
    for door in [
        "BLOCKED 10001",
        "BLOCKED mptcp:10001",
        "BLOCKED fastopen-sendto:10001",
        "BLOCKED fastopen-connect:10001",
        "BLOCKED udp:10001",
    ] {
        assert!(stderr.contains(door), "{door}: {stderr}");
    }
    for seat in &record.report.seats {
        assert!(
            seat.errors.is_empty(),
            "{} was charged: {:?}",
            seat.spec,
            seat.errors
        );
    }
}

/// One launched AIWolf agent opens four more connections to take more seats (seats went to
/// connections in order of arrival on one shared port): each `tcp-cmd:` seat is bound to its
/// own listener, so the extra connections are refused and every honest agent plays its seat.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_werewolf_agent_gets_exactly_one_seat() {
    if !layers(&[Layer::Namespaces]) {
        return;
    }
    let client = path("examples/bots/python/aiwolf_client.py");
    let greedy = format!(
        "for i in 1 2 3 4; do python3 {client} {{host}} {{port}} --name greedy$i & done; \
         python3 {client} {{host}} {{port}} --name greedy0; wait"
    );
    let mut seats = vec![SeatSpec::TcpCmd(vec!["sh".into(), "-c".into(), greedy])];
    for i in 1..5 {
        seats.push(SeatSpec::TcpCmd(vec![
            "sh".into(),
            "-c".into(),
            // A moment later, as another contestant's agent would start.
            format!("sleep 0.5; exec python3 {client} {{host}} {{port}} --name honest{i}"),
        ]));
    }
    let mut spec = MatchSpec::new("werewolf", 11, seats);
    spec.sandbox.jail.ro_paths = vec![root().join("examples/bots/python").canonicalize().unwrap()];
    let driver = find_game("werewolf").unwrap();
    let record = tokio::time::timeout(Duration::from_secs(180), driver.play(&spec))
        .await
        .expect("the match completes")
        .expect("the match can be set up");
    let names: Vec<String> = record
        .report
        .seats
        .iter()
        .map(|s| s.extra["name"].as_str().unwrap_or_default().to_string())
        .collect();
    assert!(names[0].starts_with("greedy"), "{names:?}");
    for (i, name) in names.iter().enumerate().skip(1) {
        assert_eq!(name, &format!("honest{i}"), "{names:?}");
    }
    for seat in &record.report.seats[1..] {
        assert!(
            seat.errors.is_empty(),
            "{} was charged: {:?}",
            seat.spec,
            seat.errors
        );
    }
}

/// What a process bot in `seat` is given in place of the match seed: its `KAKEHIKI_SEED`.
fn given_seed(spec: &MatchSpec, seat: usize) -> u64 {
    let cfg = spec.sandbox.for_seat(seat);
    let vars: Vec<_> = cfg
        .env
        .iter()
        .filter(|(k, _)| k == kakehiki_referee::SEED_ENV)
        .collect();
    assert_eq!(vars.len(), 1, "seat {seat}: {vars:?}");
    assert!(
        !cfg.env.iter().any(|(_, v)| v == &spec.seed.to_string()),
        "the match seed is in seat {seat}'s environment"
    );
    vars[0].1.parse().unwrap()
}

/// Each seat's role in a played Werewolf (TCP or NLP) match.
fn roles_of(report: &kakehiki_core::MatchReport) -> Vec<String> {
    if let Some(roles) = report.extra.get("roles").and_then(|r| r.as_array()) {
        return roles.iter().map(|r| r.to_string()).collect();
    }
    report
        .seats
        .iter()
        .map(|s| {
            s.extra
                .get("role")
                .map(|r| r.to_string())
                .unwrap_or_default()
        })
        .collect()
}

/// The roles of a Werewolf game are dealt by the match seed. A spy that knows what a process
/// bot is given (its own seed) and runs the referee on it with built-in seats, as the attack of
/// issue 34 did, names no more roles than chance; run on the match seed itself, it names all of
/// them (the attack is real).
#[tokio::test]
async fn the_seed_a_werewolf_agent_is_given_deals_no_role_it_can_read() {
    for game in ["werewolf", "werewolf-nlp"] {
        let seats = if game == "werewolf" { 15 } else { 5 };
        let driver = find_game(game).unwrap();
        let roles = |seed: u64| {
            let spec = MatchSpec::new(game, seed, vec![SeatSpec::Builtin("random".into()); seats]);
            async move { roles_of(&driver.play(&spec).await.unwrap().report) }
        };
        let (mut hits, mut total, mut base) = (0usize, 0usize, 0usize);
        for k in 0..12u64 {
            let seed = 0x5eed_0000 + k;
            let spec = MatchSpec::new(game, seed, vec![SeatSpec::Builtin("random".into()); seats]);
            let truth = roles(seed).await;
            assert_eq!(roles(seed).await, truth, "{game}: the attack itself works");
            for spy in [0, seats - 1] {
                let guess = roles(given_seed(&spec, spy)).await;
                for other in (0..seats).filter(|&o| o != spy) {
                    total += 1;
                    hits += usize::from(guess[other] == truth[other]);
                    // Chance: the same role as another game's deal at the same seat.
                    base += usize::from(truth[other] == roles(seed + 1000).await[other]);
                }
            }
        }
        let (rate, chance) = (hits as f64 / total as f64, base as f64 / total as f64);
        eprintln!("{game}: spy named {rate:.3} of the roles; chance {chance:.3}");
        assert!(
            rate < chance + 0.15,
            "{game}: the spy named {hits} of {total} roles (chance {chance:.3})"
        );
    }
}

/// A built-in Geister bot's red ghosts come from the match seed. A spy given its own seed and
/// playing the referee on it names no more of them than chance (two of four); on the match seed
/// itself it names them all.
#[tokio::test]
async fn the_seed_a_geister_bot_is_given_names_no_red_ghost_of_a_builtin() {
    let driver = find_game("geister").unwrap();
    let red = |seed: u64| {
        let mut spec = MatchSpec::new(
            "geister",
            seed,
            vec![
                SeatSpec::Builtin("random".into()),
                SeatSpec::Builtin("strong".into()),
            ],
        );
        // The set-up is all that is looked at: two plies, no pacing.
        spec.options.insert("max_plies".into(), "2".into());
        spec.options.insert("pace_ms".into(), "0".into());
        async move {
            let record = driver.play(&spec).await.unwrap();
            record
                .replay
                .lines()
                .iter()
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
                .find(|e| e["event"] == "set" && e["seat"] == 1)
                .and_then(|e| e["red"].as_str().map(str::to_string))
                .unwrap()
        }
    };
    let (mut named, mut total) = (0usize, 0usize);
    for k in 0..16u64 {
        let seed = 0x6e15_0000 + k;
        let spec = MatchSpec::new("geister", seed, Vec::new());
        let truth = red(seed).await;
        assert_eq!(red(seed).await, truth, "the attack itself works");
        let guess = red(given_seed(&spec, 0)).await;
        named += guess.chars().filter(|c| truth.contains(*c)).count();
        total += 4;
    }
    let rate = named as f64 / total as f64;
    eprintln!("geister: spy named {rate:.3} of the red ghosts; chance 0.5");
    assert!(rate < 0.7, "the spy named {named} of {total} red ghosts");
}
