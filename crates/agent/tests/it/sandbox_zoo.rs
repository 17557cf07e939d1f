//! The zoo of hostile bots: one attack each (tests/zoo/attack.py), each asserted contained from
//! the outside. An attack whose layer this kernel or these privileges lack is skipped with a
//! printed reason naming the layer; CI runs as root with every layer the machine offers.

use std::collections::HashSet;
use std::io::Read;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kakehiki_agent::{
    BotProcess, ClientProcess, Layer, ReadOutcome, SandboxConfig, SandboxLevel, SandboxReport,
};
use tokio::time::Instant;

fn attacker() -> String {
    // A copy the unprivileged re-run of this zoo can read (see the user-namespace test).
    if let Ok(p) = std::env::var("KAKEHIKI_ZOO_ATTACKER") {
        return p;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/zoo/attack.py")
        .to_string_lossy()
        .into_owned()
}

/// The channel attacks (tests/zoo/channels.py), beside the attacker wherever it was copied.
fn channels() -> String {
    Path::new(&attacker())
        .with_file_name("channels.py")
        .to_string_lossy()
        .into_owned()
}

/// The configuration of a bot with the sandbox off: the control that shows an attack is real.
fn unconfined() -> SandboxConfig {
    SandboxConfig {
        jail: kakehiki_agent::JailConfig {
            level: SandboxLevel::Off,
            ..Default::default()
        },
        ..SandboxConfig::default()
    }
}

/// A channel attacker in `mode`, under `cfg`.
fn spawn_channel(mode: &str, args: &[&str], cfg: &SandboxConfig) -> BotProcess {
    let mut v = vec!["python3".to_string(), channels(), mode.to_string()];
    v.extend(args.iter().map(|a| a.to_string()));
    BotProcess::spawn(&v, cfg).expect("the channel attacker starts")
}

fn argv(mode: &str, args: &[String]) -> Vec<String> {
    let mut v = vec!["python3".to_string(), attacker(), mode.to_string()];
    v.extend(args.iter().cloned());
    v
}

/// Whether the layers an attack needs are in force; prints why not.
fn layers(test: &str, needed: &[Layer]) -> bool {
    let report = SandboxReport::current(SandboxLevel::Best);
    for l in needed {
        if !report.layers.contains(l) {
            let why = report
                .missing
                .iter()
                .find(|m| m.layer == *l)
                .map(|m| m.reason.clone())
                .unwrap_or_default();
            eprintln!("SKIPPED {test}: layer {} unavailable: {why}", l.name());
            return false;
        }
    }
    true
}

/// Read `RESULT ...` lines until `DONE`.
async fn results(bot: &mut BotProcess) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match bot.read_line(deadline).await {
            ReadOutcome::Line(l) => {
                let text = String::from_utf8_lossy(&l.bytes).into_owned();
                if text == "DONE" {
                    return out;
                }
                if let Some(rest) = text.strip_prefix("RESULT ") {
                    out.push(rest.split(' ').map(str::to_string).collect());
                }
            }
            other => panic!(
                "the attacker stopped before DONE: {other:?}; stderr: {}",
                bot.stderr_text()
            ),
        }
    }
}

async fn attack(
    mode: &str,
    args: &[String],
    cfg: &SandboxConfig,
) -> (BotProcess, Vec<Vec<String>>) {
    let mut bot = BotProcess::spawn(&argv(mode, args), cfg).expect("the attacker starts");
    let r = results(&mut bot).await;
    (bot, r)
}

/// [`attack`] with the targets sent on stdin (never named on the command line, which would
/// mount them for the bot).
async fn attack_paths(
    mode: &str,
    targets: &[String],
    cfg: &SandboxConfig,
) -> (BotProcess, Vec<Vec<String>>) {
    let mut bot =
        BotProcess::spawn(&argv(mode, &["-".to_string()]), cfg).expect("the attacker starts");
    bot.send(format!("{}\n", targets.join(" ")).as_bytes())
        .await
        .unwrap();
    let r = results(&mut bot).await;
    (bot, r)
}

fn all_blocked(results: &[Vec<String>]) {
    assert!(!results.is_empty());
    for r in results {
        assert_eq!(r[0], "BLOCKED", "attack succeeded: {r:?}");
    }
}

/// The state letter of a host process (`T` when stopped), if it exists.
fn proc_state(pid: i32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let close = stat.rfind(')')?;
    stat[close + 1..]
        .split_whitespace()
        .next()
        .map(str::to_string)
}

/// Host processes whose command line contains `needle`.
fn processes_with(needle: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        if let Ok(mut f) = std::fs::File::open(e.path().join("cmdline")) {
            let mut buf = Vec::new();
            let _ = f.read_to_end(&mut buf);
            let text = String::from_utf8_lossy(&buf).replace('\0', " ");
            if text.contains(needle) && proc_state(pid).is_some_and(|s| s != "Z") {
                out.push(pid);
            }
        }
    }
    out
}

/// Poll `cond` for up to 5 s.
fn wait_for(cond: impl Fn() -> bool) -> bool {
    for _ in 0..250 {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test]
async fn runs_as_its_own_unprivileged_user_in_its_own_namespaces() {
    if !layers(
        "identity",
        &[Layer::Identity, Layer::Namespaces, Layer::Seccomp],
    ) {
        return;
    }
    let (bot, r) = attack("whoami", &[], &SandboxConfig::default()).await;
    let id = &r[0];
    let uid: u32 = id[1].parse().unwrap();
    assert!(uid >= 61000, "bot uid {uid}");
    assert_eq!(id[2], id[1], "gid equals uid");
    let status = &id[3];
    for cap in [
        "CapInh:0000000000000000",
        "CapPrm:0000000000000000",
        "CapEff:0000000000000000",
        "CapBnd:0000000000000000",
        "CapAmb:0000000000000000",
    ] {
        assert!(status.contains(cap), "{cap} missing in {status}");
    }
    assert!(status.contains("NoNewPrivs:1"), "{status}");
    assert!(status.contains("Seccomp:2"), "{status}");
    assert!(
        status.contains("Groups:|") || status.ends_with("Groups:"),
        "{status}"
    );
    // Its own PID namespace: it is process 1 and sees only itself (and the reading shell).
    assert_eq!(r[1][2], "1", "{:?}", r[1]);
    let seen: usize = r[1][1].parse().unwrap();
    assert!(seen <= 2, "the bot sees {seen} processes");
    assert_eq!(r[2][1], "/tmp");
    assert!(bot
        .sandbox()
        .is_some_and(|s| s.layers.contains(&Layer::Namespaces)));
    bot.finish(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn two_bots_get_different_uids() {
    if !layers("uids", &[Layer::Identity]) {
        return;
    }
    if SandboxReport::current(SandboxLevel::Best).user_namespace {
        // Each bot is uid 61000 of its own user namespace, all mapped to the referee's uid;
        // their namespaces and Landlock keep them apart instead.
        eprintln!("SKIPPED uids: bots of a referee that is not root share its uid outside");
        return;
    }
    let (a, ra) = attack("whoami", &[], &SandboxConfig::default()).await;
    let (b, rb) = attack("whoami", &[], &SandboxConfig::default()).await;
    assert_ne!(ra[0][1], rb[0][1]);
    a.finish(Duration::from_millis(50)).await;
    b.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn cannot_read_secrets_other_bots_or_the_referee() {
    if !layers(
        "reads",
        &[Layer::Identity, Layer::Namespaces, Layer::LandlockFs],
    ) {
        return;
    }
    // A results database, a replay and another bot's program, outside the attacker's own dirs.
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("kakehiki.sqlite");
    let replay = dir.path().join("game.jsonl");
    let other = dir.path().join("other-bot");
    std::fs::create_dir(&other).unwrap();
    let other_prog = other.join("bot.py");
    for f in [&db, &replay, &other_prog] {
        std::fs::write(f, "secret").unwrap();
    }
    let victim = BotProcess::spawn(
        &["sleep".to_string(), "30".to_string()],
        &SandboxConfig::default(),
    )
    .unwrap();
    let me = std::process::id();
    let targets: Vec<String> = [
        "/etc/shadow".to_string(),
        db.display().to_string(),
        replay.display().to_string(),
        other_prog.display().to_string(),
        format!("/proc/{me}/environ"),
        format!("/proc/{me}/mem"),
        format!("/proc/{}/fd/0", victim.pgid()),
        format!("/proc/{}/environ", victim.pgid()),
        "/root/.bash_history".to_string(),
    ]
    .to_vec();
    let (bot, r) = attack_paths("read", &targets, &SandboxConfig::default()).await;
    assert_eq!(r.len(), targets.len());
    all_blocked(&r);
    bot.finish(Duration::from_millis(50)).await;
    victim.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn writes_stay_inside_its_own_private_tmpfs() {
    if !layers(
        "writes",
        &[Layer::Identity, Layer::Namespaces, Layer::LandlockFs],
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pid = std::process::id();
    let host_files: Vec<PathBuf> = vec![
        PathBuf::from(format!("/tmp/kakehiki-zoo-{pid}")),
        PathBuf::from(format!("/dev/shm/kakehiki-zoo-{pid}")),
        PathBuf::from(format!("/root/kakehiki-zoo-{pid}")),
        dir.path().join("planted"),
        std::env::current_dir()
            .unwrap()
            .join(format!("kakehiki-zoo-{pid}")),
    ];
    let args: Vec<String> = host_files.iter().map(|p| p.display().to_string()).collect();
    let (bot, _r) = attack_paths("write", &args, &SandboxConfig::default()).await;
    bot.finish(Duration::from_millis(50)).await;
    for f in &host_files {
        assert!(!f.exists(), "the bot wrote {}", f.display());
    }
}

#[tokio::test]
async fn a_pipe_bot_has_no_network() {
    if !layers("network", &[Layer::Namespaces]) {
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (bot, r) = attack("connect", &[port.to_string()], &SandboxConfig::default()).await;
    all_blocked(&r);
    bot.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn a_tcp_client_may_connect_to_its_own_port_only_and_bind_nothing() {
    if !layers("tcp", &[Layer::LandlockNet]) {
        return;
    }
    let own = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let (own_port, other_port) = (
        own.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let mut cfg = SandboxConfig::default();
    cfg.jail.tcp_connect = vec![own_port];
    // The script is named inside a shell command, so its directory is given to the sandbox.
    cfg.jail.ro_paths = vec![Path::new(&attacker()).parent().unwrap().to_path_buf()];
    // A client prints nothing the referee reads: run the attacker through a shell that keeps
    // its output in the client's captured stdout.
    let args = [
        "sh".to_string(),
        "-c".to_string(),
        format!(
            "python3 {a} connect {own_port} {other_port} && python3 {a} bind 0",
            a = attacker()
        ),
    ];
    let client = ClientProcess::spawn(&args, &cfg).unwrap();
    let (_, stderr, out) = client.finish_with_output(Duration::from_secs(20)).await;
    let out = format!("{out}\nstderr: {stderr}");
    assert!(
        out.contains(&format!("RESULT CONNECTED {own_port}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("RESULT BLOCKED {other_port}")),
        "{out}"
    );
    assert!(out.contains("RESULT BLOCKED 0"), "{out}");
}

#[tokio::test]
async fn cannot_signal_or_trace_the_referee_or_another_bot() {
    if !layers(
        "signals",
        &[Layer::Identity, Layer::Namespaces, Layer::Seccomp],
    ) {
        return;
    }
    let victim = BotProcess::spawn(
        &["sleep".to_string(), "30".to_string()],
        &SandboxConfig::default(),
    )
    .unwrap();
    let me = std::process::id() as i32;
    let targets = vec![me.to_string(), victim.pgid().to_string()];
    let (bot, r) = attack("signal", &targets, &SandboxConfig::default()).await;
    all_blocked(&r);
    let (bot2, r2) = attack("ptrace", &targets, &SandboxConfig::default()).await;
    all_blocked(&r2);
    assert_ne!(
        proc_state(victim.pgid()).as_deref(),
        Some("T"),
        "the victim was stopped"
    );
    assert!(victim.group_alive());
    bot.finish(Duration::from_millis(50)).await;
    bot2.finish(Duration::from_millis(50)).await;
    victim.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn nothing_it_starts_outlives_it() {
    if !layers("outlive", &[Layer::Namespaces]) {
        return;
    }
    let marker = format!("{}.{}", 900 + std::process::id() % 97, std::process::id());
    let (bot, r) = attack(
        "outlive",
        std::slice::from_ref(&marker),
        &SandboxConfig::default(),
    )
    .await;
    assert_eq!(r[0][0], "SPAWNED");
    assert!(
        wait_for(|| !processes_with(&format!("sleep {marker}")).is_empty()),
        "the daemon did not start: {r:?} {}",
        bot.stderr_text()
    );
    bot.finish(Duration::from_millis(50)).await;
    let mut left = Vec::new();
    for _ in 0..100 {
        left = processes_with(&format!("sleep {marker}"));
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(left.is_empty(), "processes outlived the bot: {left:?}");
}

/// When the referee itself is SIGKILLed, every bot it started dies with it and no working
/// directory is left behind. The referee here is this test binary started again in a mode that
/// spawns the attacker and waits to be killed.
#[test]
fn nothing_outlives_a_killed_referee() {
    if let Ok(marker) = std::env::var("KAKEHIKI_ZOO_REFEREE") {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (bot, _r) = attack("outlive", &[marker], &SandboxConfig::default()).await;
            println!("REFEREE READY");
            tokio::time::sleep(Duration::from_secs(60)).await;
            drop(bot);
        });
        return;
    }
    if !layers("referee killed", &[Layer::Namespaces]) {
        return;
    }
    let marker = format!("{}.{}", 800 + std::process::id() % 97, std::process::id());
    let exe = std::env::current_exe().unwrap();
    let mut referee = std::process::Command::new(exe)
        .args([
            "--exact",
            "sandbox_zoo::nothing_outlives_a_killed_referee",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env("KAKEHIKI_ZOO_REFEREE", &marker)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = referee.stdout.take().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 256];
    while !seen.contains("REFEREE READY") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the referee ended early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(wait_for(
        || !processes_with(&format!("sleep {marker}")).is_empty()
    ));
    referee.kill().unwrap();
    referee.wait().unwrap();
    let mut left = Vec::new();
    for _ in 0..200 {
        left = processes_with(&format!("sleep {marker}"));
        if left.is_empty() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        left.is_empty(),
        "bot processes outlived the killed referee: {left:?}"
    );
}

#[tokio::test]
async fn process_count_is_bounded() {
    if !layers("fork", &[Layer::Cgroup, Layer::Identity]) {
        return;
    }
    let mut cfg = SandboxConfig::default();
    cfg.limits.processes = Some(64);
    let (bot, r) = attack("fork", &["2000".to_string()], &cfg).await;
    let made: u32 = r[0][1].parse().unwrap();
    assert!(
        made < 64,
        "the bot forked {made} processes under a limit of 64"
    );
    bot.finish(Duration::from_millis(50)).await;
}

/// One bot holding every process it may have leaves the others theirs: each bot's count is its
/// own (its uid as root; without root its user namespace, where a count is kept per namespace
/// and the referee's own limit is only the ceiling of all bots together).
#[tokio::test]
async fn a_bot_holding_all_its_processes_leaves_the_others_theirs() {
    if !layers("process count", &[Layer::Identity]) {
        return;
    }
    let mut cfg = SandboxConfig::default();
    cfg.limits.processes = Some(64);
    let (hog, r) = attack("fork", &["2000".to_string()], &cfg).await;
    let held: u32 = r[0][1].parse().unwrap();
    assert!(
        (8..64).contains(&held),
        "the first bot held {held} processes under a limit of 64"
    );
    let (other, r) = attack("threads", &["8".to_string()], &cfg).await;
    assert_eq!(
        r,
        vec![vec!["FORKED", "8"], vec!["THREADS", "8"]],
        "the second bot could not fork or start threads while the first held {held} processes"
    );
    hog.finish(Duration::from_millis(50)).await;
    other.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn memory_is_bounded_across_processes_and_shared_memory() {
    if !layers("memory", &[Layer::Cgroup, Layer::Namespaces]) {
        return;
    }
    let mut cfg = SandboxConfig::default();
    cfg.limits.memory_bytes = Some(256 << 20);
    cfg.jail.shm_bytes = 512 << 20;
    let (bot, r) = attack("memory", &["200".to_string(), "512".to_string()], &cfg).await;
    let held: HashSet<&String> = r.iter().filter(|l| l[0] == "HELD").map(|l| &l[1]).collect();
    let shm: u64 = r
        .iter()
        .find(|l| l[0] == "SHM")
        .map(|l| l[1].parse().unwrap())
        .unwrap_or(0);
    let total = held.len() as u64 * 200 + shm;
    assert!(
        total <= 256,
        "the bot held {total} MiB under a limit of 256 ({r:?})"
    );
    bot.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn disk_is_bounded() {
    if !layers("disk", &[Layer::Namespaces]) {
        return;
    }
    let mut cfg = SandboxConfig::default();
    cfg.limits.file_size_bytes = Some(64 << 20);
    cfg.jail.disk_bytes = 64 << 20;
    let (bot, r) = attack("disk", &["4".to_string(), "50".to_string()], &cfg).await;
    let written: u64 = r[0][1].parse().unwrap();
    assert!(
        written <= 64,
        "the bot wrote {written} MiB under a disk budget of 64"
    );
    assert!(
        written >= 30,
        "the bot could not write at all ({written} MiB)"
    );
    bot.finish(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn a_strict_sandbox_names_what_is_missing() {
    let report = SandboxReport::current(SandboxLevel::Strict);
    let mut cfg = SandboxConfig::default();
    cfg.jail.level = SandboxLevel::Strict;
    let r = BotProcess::spawn(&["true".to_string()], &cfg);
    if report.complete() {
        let bot = r.expect("every layer is available, so strict starts the bot");
        bot.finish(Duration::from_millis(50)).await;
    } else {
        let err = r.err().expect("strict refuses an incomplete sandbox");
        assert!(err.is_host_fault());
        assert!(
            err.to_string().contains(report.missing[0].layer.name()),
            "{err}"
        );
    }
}

/// The descriptors a sandboxed bot lists in `/proc/self/fd`.
async fn fds_seen(cfg: &SandboxConfig) -> Vec<i32> {
    let argv: Vec<String> = ["sh", "-c", "echo $(ls /proc/self/fd); echo DONE"]
        .map(String::from)
        .to_vec();
    let mut bot = BotProcess::spawn(&argv, cfg).expect("the lister starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    let ReadOutcome::Line(line) = bot.read_line(deadline).await else {
        panic!("no listing; stderr: {}", bot.stderr_text());
    };
    bot.finish(Duration::from_millis(50)).await;
    String::from_utf8_lossy(&line.bytes)
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect()
}

#[tokio::test]
async fn inherits_no_file_socket_or_pipe_of_the_referee() {
    use std::os::fd::AsRawFd;
    // What the referee inherited from its own parent without close-on-exec, at known numbers: a
    // results file, a listener, and a supervisor's pipe with a secret waiting in it.
    let dir = tempfile::tempdir().unwrap();
    let file = std::fs::File::create(dir.path().join("results.sqlite")).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let mut pipe = [0; 2];
    // SAFETY: pipe(2) without O_CLOEXEC, as a parent that knows nothing of it would leave it.
    assert_eq!(unsafe { libc::pipe(pipe.as_mut_ptr()) }, 0);
    // SAFETY: write(2) of a static buffer into the pipe made above.
    assert_eq!(
        unsafe { libc::write(pipe[1], b"secret\n".as_ptr().cast(), 7) },
        7
    );
    let (file_fd, sock_fd, pipe_fd) = (901, 902, 903);
    for (from, to) in [
        (file.as_raw_fd(), file_fd),
        (listener.as_raw_fd(), sock_fd),
        (pipe[0], pipe_fd),
    ] {
        // SAFETY: dup2(2) onto numbers this test owns; closed below.
        assert_eq!(unsafe { libc::dup2(from, to) }, to);
    }
    // A program started without Kakehiki inherits them all: the attack is real.
    let plain = std::process::Command::new("sh")
        .args(["-c", "ls /proc/self/fd"])
        .output()
        .unwrap();
    let plain: Vec<i32> = String::from_utf8_lossy(&plain.stdout)
        .split_whitespace()
        .filter_map(|t| t.parse().ok())
        .collect();
    let off = unconfined();
    // Neither a confined bot nor one with the sandbox off gets them.
    let seen_off = fds_seen(&off).await;
    let seen = fds_seen(&SandboxConfig::default()).await;
    let mut reader = spawn_channel("fds", &["903"], &SandboxConfig::default());
    let read = results(&mut reader).await;
    reader.finish(Duration::from_millis(50)).await;
    // SAFETY: closing the duplicates and the pipe made above.
    unsafe {
        for fd in [file_fd, sock_fd, pipe_fd, pipe[0], pipe[1]] {
            libc::close(fd);
        }
    }
    assert!(
        [file_fd, sock_fd, pipe_fd]
            .iter()
            .all(|f| plain.contains(f)),
        "{plain:?}"
    );
    for (level, seen) in [("off", &seen_off), ("best", &seen)] {
        assert!(
            seen.iter().all(|&fd| fd <= 3),
            "a bot at level {level} holds a descriptor of the referee: {seen:?}"
        );
    }
    all_blocked(&read);
}

/// Two bots at once, the sender leaving names in its network namespace (an abstract Unix
/// socket, a TCP port from listen() without bind(), a route-netlink port id), the receiver
/// looking for them in /proc/net and by colliding on the name. Each pipe bot has a network
/// namespace of its own, so nothing is seen; with the sandbox off everything is.
#[tokio::test]
async fn pipe_bots_see_no_socket_name_of_another() {
    if !layers("socket names", &[Layer::Namespaces]) {
        return;
    }
    let off = unconfined();
    for (level, cfg) in [("off", off), ("best", SandboxConfig::default())] {
        let token = format!("kakehiki-zoo-{}-{level}", std::process::id());
        let mut sender = spawn_channel("hold", &[&token], &cfg);
        let names = results(&mut sender).await;
        let name = |kind: &str| {
            names
                .iter()
                .find(|r| r[0] == "NAME" && r[1] == kind)
                .map(|r| r[2].clone())
                .unwrap_or_else(|| "-".into())
        };
        let mut receiver = spawn_channel("seek", &[], &cfg);
        receiver
            .send(format!("{token} {} {}\n", name("tcp"), name("netlink")).as_bytes())
            .await
            .unwrap();
        let seen = results(&mut receiver).await;
        sender.finish(Duration::from_millis(50)).await;
        receiver.finish(Duration::from_millis(50)).await;
        if level == "off" {
            // The channel is real: unconfined, the receiver finds the sender's names.
            for look in [
                "proc-net-unix",
                "bind-collision",
                "abstract-connect",
                "netlink-collision",
            ] {
                assert!(
                    seen.iter().any(|r| r[0] == "SEEN" && r[1] == look),
                    "{look}: {seen:?}"
                );
            }
        } else {
            all_blocked(&seen);
        }
    }
}

/// File locks and watches on a file every bot can read: a read lock at an offset (POSIX, OFD),
/// `flock`, dnotify and inotify on its directory. Refused for every confined bot; with the
/// sandbox off they work (the channel is real).
#[tokio::test]
async fn no_lock_or_watch_on_a_shared_file() {
    if !layers("locks", &[Layer::Seccomp]) {
        return;
    }
    let off = unconfined();
    let mut open = spawn_channel("locks", &["/etc/passwd", "4242"], &off);
    let unconfined = results(&mut open).await;
    open.finish(Duration::from_millis(50)).await;
    assert!(
        unconfined
            .iter()
            .filter(|r| r[1] != "inotify-init")
            .all(|r| r[0] == "OPEN"),
        "{unconfined:?}"
    );
    let mut bot = spawn_channel("locks", &["/etc/passwd", "4242"], &SandboxConfig::default());
    let confined = results(&mut bot).await;
    bot.finish(Duration::from_millis(50)).await;
    assert_eq!(confined.len(), 7, "{confined:?}");
    all_blocked(&confined);
}

/// The tier without namespaces (a container whose seccomp profile refuses them): SysV shared
/// memory, message queues and semaphores are machine-wide there and outlive the bot, and
/// listen() on an unbound socket (IPv4, IPv6) gets a port the host reaches. All refused. Runs
/// in the re-run of this zoo where namespaces are refused (below); skipped where the bot has
/// namespaces (its own IPC and network namespaces contain these).
#[tokio::test]
async fn without_namespaces_no_sysv_ipc_and_no_listen() {
    if SandboxReport::current(SandboxLevel::Best)
        .layers
        .contains(&Layer::Namespaces)
    {
        eprintln!("SKIPPED sysv: the bot has namespaces here (see the re-run without them)");
        return;
    }
    if !layers("sysv", &[Layer::Seccomp]) {
        return;
    }
    // `kakehiki sandbox` says what this tier leaves open.
    let gaps = SandboxReport::current(SandboxLevel::Best)
        .uncovered()
        .join(" ");
    assert!(
        gaps.contains("/proc/net") && gaps.contains("every process"),
        "{gaps}"
    );
    let mut bot = spawn_channel("sysv", &[], &SandboxConfig::default());
    let r = results(&mut bot).await;
    bot.finish(Duration::from_millis(50)).await;
    assert_eq!(r.len(), 5, "{r:?}");
    all_blocked(&r);
}

/// The tier without namespaces, as root: this whole zoo run again in a process whose system
/// calls that create or join namespaces fail (a seccomp filter installed before it starts, as a
/// container runtime's profile would), so the referee detects no namespaces and confines bots
/// with identity, Landlock, cgroups and seccomp alone.
#[test]
fn the_zoo_is_contained_where_namespaces_are_refused() {
    if std::env::var_os("KAKEHIKI_ZOO_NO_NAMESPACES").is_some()
        || std::env::var_os("KAKEHIKI_ZOO_UNPRIVILEGED").is_some()
    {
        return; // The re-run itself.
    }
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: the tier without namespaces is run as root");
        return;
    }
    use seccompiler::{
        BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
        SeccompRule,
    };
    use std::collections::BTreeMap;
    use std::os::unix::process::CommandExt;
    const NEW_NS: u64 = 0x7e02_0080; // every CLONE_NEW* flag, CLONE_NEWTIME included
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_unshare, Vec::new());
    rules.insert(libc::SYS_setns, Vec::new());
    // clone(2) with any namespace flag: one rule per flag.
    let mut clone = Vec::new();
    for bit in 0..64u64 {
        let flag = 1u64 << bit;
        if NEW_NS & flag != 0 {
            clone.push(
                SeccompRule::new(vec![SeccompCondition::new(
                    0,
                    SeccompCmpArgLen::Qword,
                    SeccompCmpOp::MaskedEq(flag),
                    flag,
                )
                .unwrap()])
                .unwrap(),
            );
        }
    }
    rules.insert(libc::SYS_clone, clone);
    let arch = std::env::consts::ARCH.try_into().unwrap();
    let deny: BpfProgram = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .unwrap()
    .try_into()
    .unwrap();
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let clone3: BpfProgram = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        arch,
    )
    .unwrap()
    .try_into()
    .unwrap();
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        // This module's tests only: the test program holds the crate's other tests too.
        "sandbox_zoo::",
        "--skip",
        "the_zoo_is_contained_under_a_referee_that_is_not_root",
        "--test-threads",
        "2",
        "--nocapture",
    ])
    .env("KAKEHIKI_ZOO_NO_NAMESPACES", "1");
    // SAFETY: the closure only installs two prepared filters (prctl and seccomp system calls).
    unsafe {
        cmd.pre_exec(move || {
            for p in [&deny, &clone3] {
                seccompiler::apply_filter(p).map_err(std::io::Error::other)?;
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the zoo without namespaces failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("test result: ok"), "{stdout}");
    // It really ran without namespaces, and the attacks of that tier ran.
    assert!(
        stderr.contains("SKIPPED socket names: layer namespaces"),
        "{stderr}"
    );
    assert!(!stderr.contains("SKIPPED sysv"), "{stderr}");
    assert!(!stderr.contains("SKIPPED locks"), "{stderr}");
}

/// The tier of a referee that is not root: this whole zoo run again as user `nobody`, where a
/// user namespace gives each bot its uid and namespaces (no cgroup: those attacks are skipped).
/// As root, the test binary and the attacker are copied where `nobody` can read them and run
/// with `setpriv`.
#[test]
fn the_zoo_is_contained_under_a_referee_that_is_not_root() {
    if std::env::var_os("KAKEHIKI_ZOO_UNPRIVILEGED").is_some() {
        return; // The re-run itself.
    }
    // SAFETY: geteuid(2) cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("not root: the other tests of this zoo are the unprivileged run");
        return;
    }
    let have_setpriv = std::process::Command::new("setpriv")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_setpriv {
        assert!(
            std::env::var_os("KAKEHIKI_CI").is_none(),
            "setpriv (util-linux) is needed"
        );
        eprintln!("SKIPPED unprivileged zoo: no setpriv");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let open = |p: &Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    open(dir.path(), 0o755);
    // The attacker's own directory is mounted into its jail: keep it apart from the work one.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    open(&bin, 0o755);
    let exe = bin.join("zoo");
    std::fs::copy(std::env::current_exe().unwrap(), &exe).unwrap();
    open(&exe, 0o755);
    let script = bin.join("attack.py");
    std::fs::copy(attacker(), &script).unwrap();
    open(&script, 0o644);
    std::fs::copy(channels(), bin.join("channels.py")).unwrap();
    open(&bin.join("channels.py"), 0o644);
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    open(&work, 0o1777);
    let out = std::process::Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ])
        .arg(&exe)
        .args([
            // This module's tests only: the test program holds the crate's other tests too.
            "sandbox_zoo::",
            "--skip",
            "the_zoo_is_contained_under_a_referee_that_is_not_root",
            "--test-threads",
            "2",
            "--nocapture",
        ])
        .env("KAKEHIKI_ZOO_UNPRIVILEGED", "1")
        .env("KAKEHIKI_ZOO_ATTACKER", &script)
        .env("TMPDIR", &work)
        .env("HOME", &work)
        .current_dir(&work)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the unprivileged zoo failed:\n{stdout}\n{stderr}"
    );
    // The attacks the user namespace must contain ran rather than being skipped.
    for test in [
        "identity",
        "reads",
        "writes",
        "network",
        "signals",
        "referee killed",
        "process count",
        "connect watch",
    ] {
        assert!(
            !stderr.contains(&format!("SKIPPED {test}:")),
            "{test} was skipped without root:\n{stderr}"
        );
    }
    assert!(stdout.contains("test result: ok"), "{stdout}");
    // ...and it really ran without root: no cgroup for the bounded-resource attacks.
    assert!(stderr.contains("SKIPPED fork: layer cgroup"), "{stderr}");
}

#[tokio::test]
async fn pipe_bots_cannot_reach_each_other_through_abstract_sockets() {
    if !layers(
        "abstract sockets",
        &[Layer::Namespaces, Layer::LandlockScope],
    ) {
        return;
    }
    let name = format!("kakehiki-zoo-{}", std::process::id());
    let (listener, r) = attack(
        "abstract-listen",
        std::slice::from_ref(&name),
        &SandboxConfig::default(),
    )
    .await;
    assert_eq!(r[0][0], "LISTENING", "{r:?}");
    let (other, r) = attack("abstract-connect", &[name], &SandboxConfig::default()).await;
    all_blocked(&r);
    // Neither has an interface it could use: only a loopback, and that one down.
    let (third, r) = attack("ifaces", &[], &SandboxConfig::default()).await;
    assert!(r[0][1] == "-" || r[0][1] == "lo", "{r:?}");
    for bot in [listener, other, third] {
        bot.finish(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn no_bot_gets_a_socket_family_that_reaches_another_process() {
    if !layers("socket families", &[Layer::Seccomp]) {
        return;
    }
    let (bot, r) = attack("sockets", &[], &SandboxConfig::default()).await;
    let created: HashSet<&str> = r
        .iter()
        .filter(|w| w[0] == "CREATED")
        .map(|w| w[1].as_str())
        .collect();
    // TCP, Unix and route netlink (getaddrinfo reads it) stay; every side door is gone.
    let allowed: HashSet<&str> = ["tcp", "tcp6", "unix", "netlink-route"].into();
    assert_eq!(created, allowed, "{r:?}");
    assert_eq!(r.len(), 19, "{r:?}");
    bot.finish(Duration::from_millis(50)).await;
}

/// Run the attacker as a launched client seat with a network of its own: `script` is the shell
/// command after `a=<attacker>`.
async fn seat_client(port: u16, script: &str) -> (String, kakehiki_agent::SeatPort) {
    let mut cfg = SandboxConfig::default();
    cfg.jail.ro_paths = vec![Path::new(&attacker()).parent().unwrap().to_path_buf()];
    let script = format!("a={}; {script}", attacker());
    let (client, seat) = ClientProcess::spawn_seat(
        |addr| {
            vec![
                "sh".to_string(),
                "-c".to_string(),
                script
                    .replace("{host}", &addr.ip().to_string())
                    .replace("{port}", &addr.port().to_string()),
            ]
        },
        &cfg,
        port,
    )
    .expect("the client starts");
    assert!(seat.own_network);
    let (_, stderr, out) = client.finish_with_output(Duration::from_secs(30)).await;
    (format!("{out}\nstderr: {stderr}"), seat)
}

#[tokio::test]
async fn a_tcp_seat_reaches_its_own_listener_and_nothing_else() {
    if !layers("seat network", &[Layer::Namespaces, Layer::Seccomp]) {
        return;
    }
    // Host listeners the client must not reach: one on another port, one on the very port its
    // seat listens on inside its namespace.
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let other_port = other.local_addr().unwrap().port();
    let same = TcpListener::bind("127.0.0.1:0").unwrap();
    let seat_port = same.local_addr().unwrap().port();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let udp_port = udp.local_addr().unwrap().port();
    for l in [&other, &same] {
        l.set_nonblocking(true).unwrap();
    }
    udp.set_nonblocking(true).unwrap();
    let (out, seat) = seat_client(
        seat_port,
        &format!(
            "python3 $a --exit connect {{port}} {other_port}; \
             python3 $a --exit side-doors {other_port} {udp_port}; \
             python3 $a --exit listen-any 4000; python3 $a --exit net-view"
        ),
    )
    .await;
    assert_eq!(seat.addr.port(), seat_port);
    // Its one connection arrived at its own listener, not at the host's on the same port.
    let (mut conn, _) = {
        seat.listener.set_nonblocking(false).unwrap();
        seat.listener.accept().unwrap()
    };
    let mut buf = [0u8; 1];
    // The attacker closed it without sending: EOF, not an error.
    assert_eq!(conn.read(&mut buf).unwrap(), 0);
    assert!(
        out.contains(&format!("RESULT CONNECTED {seat_port}")),
        "{out}"
    );
    assert!(
        out.contains(&format!("RESULT BLOCKED {other_port}")),
        "{out}"
    );
    for door in ["mptcp", "fastopen-sendto", "fastopen-connect", "udp"] {
        for port in [other_port, udp_port] {
            assert!(
                out.contains(&format!("RESULT BLOCKED {door}:{port}")),
                "{door}:{port} {out}"
            );
        }
    }
    assert!(out.contains("RESULT BLOCKED tcp"), "{out}");
    assert!(out.contains("RESULT BLOCKED mptcp"), "{out}");
    // It sees its own listener and loopback, nothing of the host's network.
    assert!(
        out.contains(&format!("RESULT LISTENERS {seat_port}\n")),
        "{out}"
    );
    assert!(out.contains("RESULT IFACES lo\n"), "{out}");
    for l in [&other, &same] {
        assert!(l.accept().is_err(), "a host listener was reached: {out}");
    }
    assert!(
        udp.recv(&mut buf).is_err(),
        "a datagram reached the host: {out}"
    );
}

/// Where a client connected instead of its seat is known to the referee: each `connect` to
/// another port is refused as "connection refused" (loopback) and kept, the seat's own one goes
/// on, and a client calling `connect` in a loop is slowed down, its own time, not the referee's.
/// The watch's descriptor never reaches the bot.
#[tokio::test]
async fn a_tcp_seat_says_where_its_client_connected_instead() {
    if !layers("connect watch", &[Layer::Namespaces, Layer::Seccomp]) {
        return;
    }
    let mut cfg = SandboxConfig::default();
    cfg.jail.ro_paths = vec![Path::new(&attacker()).parent().unwrap().to_path_buf()];
    let a = attacker();
    let started = std::time::Instant::now();
    let (client, seat) = ClientProcess::spawn_seat(
        |addr| {
            let p = addr.port();
            vec![
                "python3".to_string(),
                a.clone(),
                "--exit".to_string(),
                "connect-to".to_string(),
                format!("127.0.0.1:{}", p + 1),
                format!("[::1]:{}", p + 2),
                format!("127.0.0.2:{}", p + 1),
                format!("[::1]:{p}"),
                format!("127.0.0.1:{}x300", p + 3),
            ]
        },
        &cfg,
        10000,
    )
    .expect("the client starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while client.refused_connects().unwrap().count < 303 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = started.elapsed();
    let refused = client
        .refused_connects()
        .expect("the connections are watched");
    let (_, stderr, out) = client.finish_with_output(Duration::from_secs(30)).await;
    let out = format!("{out}\nstderr: {stderr}");
    assert_eq!(seat.addr.port(), 10000);
    assert!(
        out.contains("RESULT CONNECT 127.0.0.1:10001 ECONNREFUSED 1"),
        "{out}"
    );
    assert!(
        out.contains("RESULT CONNECT [::1]:10002 ECONNREFUSED 1"),
        "{out}"
    );
    assert!(
        out.contains("RESULT CONNECT 127.0.0.2:10001 ECONNREFUSED 1"),
        "{out}"
    );
    assert!(
        out.contains("RESULT CONNECT [::1]:10000 CONNECTED 1"),
        "{out}"
    );
    assert!(
        out.contains("RESULT CONNECT 127.0.0.1:10003 ECONNREFUSED 300"),
        "{out}"
    );
    assert!(!out.contains("seccomp"), "the watch reached the bot: {out}");
    assert_eq!(refused.count, 303, "{out}");
    assert_eq!(
        refused.describe().as_deref(),
        Some("127.0.0.1:10001, [::1]:10002, 127.0.0.2:10001 and 127.0.0.1:10003"),
    );
    // After 64 calls answered at once, one every 10 ms.
    assert!(took >= Duration::from_millis(2390), "{took:?}");
}

#[tokio::test]
async fn a_tcp_seat_gets_the_contest_port_even_while_the_host_holds_it() {
    if !layers("seat network", &[Layer::Namespaces]) {
        return;
    }
    // The contest's fixed port, held by a host process (or by another match's seat): each
    // client's namespace has its own.
    let squatter = TcpListener::bind("127.0.0.1:10000");
    let (out, seat) = seat_client(10000, "python3 $a --exit connect {port}").await;
    assert_eq!(seat.addr.port(), 10000, "{out}");
    assert!(out.contains("RESULT CONNECTED 10000"), "{out}");
    seat.listener.set_nonblocking(false).unwrap();
    assert!(seat.listener.accept().is_ok());
    if let Ok(l) = squatter {
        l.set_nonblocking(true).unwrap();
        assert!(
            l.accept().is_err(),
            "the host's listener was reached: {out}"
        );
    }
}

/// A folder with the attacker as `bot.py` and a sibling `secret.txt`, both readable by any uid
/// (so that only what is mounted keeps the bot from the sibling).
fn bot_folder() -> (tempfile::TempDir, PathBuf, PathBuf) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let bot = dir.path().join("bot.py");
    std::fs::copy(attacker(), &bot).unwrap();
    let secret = dir.path().join("secret.txt");
    std::fs::write(&secret, "the other entrant's source").unwrap();
    for f in [&bot, &secret] {
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    (dir, bot, secret)
}

/// Start `argv` (which reads its targets on stdin) and send it `targets`.
async fn attack_with(argv: &[String], targets: &[String], cfg: &SandboxConfig) -> Vec<Vec<String>> {
    let mut bot = BotProcess::spawn(argv, cfg).expect("the attacker starts");
    bot.send(format!("{}\n", targets.join(" ")).as_bytes())
        .await
        .unwrap();
    let r = results(&mut bot).await;
    bot.finish(Duration::from_millis(50)).await;
    r
}

#[tokio::test]
async fn a_bot_given_as_one_file_sees_no_other_file_of_its_folder() {
    if !layers("one file", &[Layer::Namespaces, Layer::LandlockFs]) {
        return;
    }
    let (dir, bot, secret) = bot_folder();
    let targets = [
        dir.path().display().to_string(),
        secret.display().to_string(),
    ];
    let py = |mode: &str| {
        vec![
            "python3".to_string(),
            bot.display().to_string(),
            mode.to_string(),
            "-".to_string(),
        ]
    };
    // As an argument, and as an absolute path inside a shell command.
    let shell = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("exec python3 {} list -", bot.display()),
    ];
    // The bot's file is shown at a neutral path, `/bot/bot.py`, alone in its folder; its host
    // folder and the secret beside it do not exist for it.
    let shown = ["/bot".to_string()];
    for argv in [py("list"), shell] {
        let r = attack_with(&argv, &shown, &SandboxConfig::default()).await;
        assert_eq!(r[0][0], "LISTED", "{r:?}");
        assert_eq!(r[0][2], "bot.py", "the bot sees more than its file: {r:?}");
        let r = attack_with(&argv, &targets[..1], &SandboxConfig::default()).await;
        all_blocked(&r);
    }
    let r = attack_with(&py("read"), &targets[1..], &SandboxConfig::default()).await;
    all_blocked(&r);
    // A folder named explicitly (the seat's own) is still given whole, at `/bot`.
    let mut cfg = SandboxConfig::default();
    cfg.jail.seat_dir = Some(dir.path().to_path_buf());
    let r = attack_with(&py("list"), &shown, &cfg).await;
    assert_eq!(r[0][2], "bot.py,secret.txt", "{r:?}");
    let r = attack_with(&py("read"), &targets[1..], &cfg).await;
    all_blocked(&r);
}

#[tokio::test]
async fn opt_home_root_and_srv_are_not_mounted() {
    if !layers("opt", &[Layer::Namespaces, Layer::LandlockFs]) {
        return;
    }
    // A file under /opt (made when this referee may; the unprivileged re-run lists only).
    let planted = PathBuf::from(format!("/opt/kakehiki-zoo-{}", std::process::id()));
    let made = std::fs::create_dir_all(&planted).is_ok()
        && std::fs::write(planted.join("secret"), "opt").is_ok();
    if made {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&planted, std::fs::Permissions::from_mode(0o755));
        let _ = std::fs::set_permissions(
            planted.join("secret"),
            std::fs::Permissions::from_mode(0o644),
        );
    }
    let mut targets: Vec<String> = ["/opt", "/home", "/root", "/srv"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (bot, listed) = attack_paths("list", &targets, &SandboxConfig::default()).await;
    bot.finish(Duration::from_millis(50)).await;
    targets = vec![planted.join("secret").display().to_string()];
    let (bot, read) = attack_paths("read", &targets, &SandboxConfig::default()).await;
    bot.finish(Duration::from_millis(50)).await;
    if made {
        let _ = std::fs::remove_dir_all(&planted);
    }
    all_blocked(&listed);
    all_blocked(&read);
}

#[tokio::test]
async fn a_folder_holding_the_database_is_refused_before_the_bot_starts() {
    let (dir, bot, _secret) = bot_folder();
    let mut cfg = SandboxConfig::default();
    cfg.jail.seat_dir = Some(dir.path().to_path_buf());
    cfg.jail.denied = kakehiki_agent::DeniedPath::sqlite(&dir.path().join("kakehiki.sqlite"));
    let argv = vec![
        "python3".to_string(),
        bot.display().to_string(),
        "whoami".to_string(),
    ];
    let err = kakehiki_agent::check_mounts(&argv, &cfg).expect_err("the folder is refused");
    let text = err.to_string();
    assert!(!err.is_host_fault());
    assert!(text.contains(&dir.path().display().to_string()), "{text}");
    assert!(text.contains("the results database"), "{text}");
    assert!(text.contains("folder of its own"), "{text}");
    if SandboxReport::current(SandboxLevel::Best).layers.is_empty() {
        return;
    }
    let err = BotProcess::spawn(&argv, &cfg)
        .err()
        .expect("spawning refuses it too");
    assert!(
        matches!(err, kakehiki_agent::SpawnError::Denied { .. }),
        "{err}"
    );
    // Named alone, the bot's file does not show the database: it starts.
    cfg.jail.seat_dir = None;
    assert!(kakehiki_agent::check_mounts(&argv, &cfg).is_ok());
}

/// A bot that ends by itself just as the referee stops it (a rule forfeits a seat whose output
/// closed) is reported with its own exit code. Its keeper (the process that waits for it and
/// exits as it exited) is held stopped here between the bot's exit and its own, the window in
/// which a group kill would kill the keeper and report `killed by signal 9` for `exit code 3`.
#[tokio::test]
async fn a_bot_stopped_as_it_exits_keeps_its_own_exit_code() {
    use nix::sys::signal::{kill, Signal};
    use nix::unistd::Pid;
    if !layers("exit race", &[Layer::Namespaces]) {
        return;
    }
    let mut bot = BotProcess::spawn(
        &[
            "sh".into(),
            "-c".into(),
            "echo READY; read x; exit 3".into(),
        ],
        &SandboxConfig::default(),
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    assert!(matches!(
        bot.read_line(deadline).await,
        ReadOutcome::Line(_)
    ));
    let keeper = bot.pgid();
    let children = std::fs::read_to_string(format!("/proc/{keeper}/task/{keeper}/children"))
        .expect("the keeper's children");
    let init: i32 = children.split_whitespace().next().unwrap().parse().unwrap();
    kill(Pid::from_raw(keeper), Signal::SIGSTOP).unwrap();
    bot.send(b"go\n").await.unwrap();
    assert!(matches!(
        bot.read_line(deadline).await,
        ReadOutcome::Closed { .. }
    ));
    // The bot exits; its keeper, held, cannot reap it yet.
    assert!(
        wait_for(|| matches!(proc_state(init).as_deref(), Some("Z") | None)),
        "the bot did not exit: {:?}",
        proc_state(init)
    );
    if proc_state(init).is_none() {
        // The keeper was not held (it reaped the bot): the window cannot be made here. Seen
        // under a referee that is not root, where the bot is in a user namespace.
        eprintln!(
            "SKIPPED exit race: the keeper could not be held (state {:?})",
            proc_state(keeper)
        );
        let _ = kill(Pid::from_raw(keeper), Signal::SIGCONT);
        let exit = bot.finish(Duration::from_secs(5)).await;
        assert_eq!(exit.and_then(|e| e.code), Some(3), "{exit:?}");
        return;
    }
    bot.kill();
    kill(Pid::from_raw(keeper), Signal::SIGCONT).unwrap();
    let exit = bot.finish(Duration::from_secs(5)).await;
    assert_eq!(exit.and_then(|e| e.code), Some(3), "{exit:?}");
}

/// A running bot that is stopped is reported as killed, and nothing it started outlives it.
#[tokio::test]
async fn a_running_bot_stopped_is_killed_with_everything_it_started() {
    if !layers("stop", &[Layer::Namespaces]) {
        return;
    }
    let marker = format!("{}.{}", 800 + std::process::id() % 97, std::process::id());
    let script = format!("sleep {marker} & echo READY; sleep 30");
    let mut bot = BotProcess::spawn(
        &["sh".into(), "-c".into(), script],
        &SandboxConfig::default(),
    )
    .unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    assert!(matches!(
        bot.read_line(deadline).await,
        ReadOutcome::Line(_)
    ));
    assert!(wait_for(
        || !processes_with(&format!("sleep {marker}")).is_empty()
    ));
    bot.kill();
    let started = std::time::Instant::now();
    let exit = bot.finish(Duration::from_secs(5)).await;
    assert_eq!(exit.and_then(|e| e.signal), Some(9), "{exit:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the stopped bot was waited for: {:?}",
        started.elapsed()
    );
    assert!(wait_for(
        || processes_with(&format!("sleep {marker}")).is_empty()
    ));
}

/// The words after `RESULT <tag>` of every result line tagged `tag`, joined again.
fn tagged(r: &[Vec<String>], tag: &str) -> Vec<String> {
    r.iter()
        .filter(|w| w[0] == tag)
        .map(|w| w[1..].join(" "))
        .collect()
}

#[tokio::test]
async fn the_environment_names_no_host_path() {
    if !layers("environment", &[Layer::Namespaces]) {
        return;
    }
    let (bot, r) = attack("environ", &[], &SandboxConfig::default()).await;
    bot.finish(Duration::from_millis(50)).await;
    let env: std::collections::BTreeMap<String, String> = tagged(&r, "ENV")
        .iter()
        .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.into(), v.into())))
        .collect();
    // The jail's own program folders, not the referee's PATH (here with ~/.cargo/bin, pyenv).
    assert_eq!(
        env.get("PATH").map(String::as_str),
        Some(kakehiki_agent::JAIL_PATH),
        "{env:?}"
    );
    assert_eq!(env.get("HOME").map(String::as_str), Some("/tmp"), "{env:?}");
    assert_eq!(
        env.get("TMPDIR").map(String::as_str),
        Some("/tmp"),
        "{env:?}"
    );
    // Nothing else but the locale (Python may add LC_CTYPE itself).
    for k in env.keys() {
        assert!(
            ["PATH", "HOME", "TMPDIR", "LANG", "LC_ALL", "LC_CTYPE", "TZ"].contains(&k.as_str()),
            "the bot was given {k}={}",
            env[k]
        );
    }
    let host_path = std::env::var("PATH").unwrap_or_default();
    let jail: Vec<&str> = kakehiki_agent::JAIL_PATH.split(':').collect();
    for dir in host_path
        .split(':')
        .filter(|d| !d.is_empty() && !jail.contains(d))
    {
        for (k, v) in &env {
            assert!(!v.contains(dir), "{k}={v} names the host's {dir}");
        }
    }
}

#[tokio::test]
async fn the_cgroup_name_reveals_no_referee_pid() {
    if !layers("cgroup name", &[Layer::Cgroup, Layer::Namespaces]) {
        return;
    }
    let me = std::process::id().to_string();
    let (bot, r) = attack("cgroup", &[], &SandboxConfig::default()).await;
    let inside = tagged(&r, "CGROUP");
    assert!(!inside.is_empty(), "{r:?}");
    // Its own cgroup namespace: the bot sees its cgroup as the root, no name at all.
    for line in &inside {
        let path = line.splitn(3, ':').nth(2).unwrap_or_default();
        assert!(
            !path.split('/').any(|c| c.contains(&me)),
            "the bot's cgroup names the referee's pid {me}: {line}"
        );
        if line.contains("pids") || line.starts_with("0::") {
            assert_eq!(path, "/", "{inside:?}");
        }
    }
    // From the host, the name is a random token (a bot without namespaces would see it).
    let host = std::fs::read_to_string(format!("/proc/{}/cgroup", bot.pgid())).unwrap();
    let line = host
        .lines()
        .find(|l| {
            l.split(':')
                .nth(1)
                .is_some_and(|c| c.split(',').any(|c| c == "pids"))
        })
        .or_else(|| host.lines().find(|l| l.starts_with("0::")))
        .expect("the bot's pids cgroup");
    let path = line.splitn(3, ':').nth(2).unwrap();
    let name = path.rsplit('/').next().unwrap();
    let token = name.strip_prefix("kakehiki-").unwrap_or_default();
    assert!(
        token.len() == 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "the bot's cgroup is {path}"
    );
    assert!(!path.contains(&me), "{path} names the referee's pid");
    // The sweep still finds a dead referee's cgroup (no owner holds its lock) and leaves the
    // living one's.
    let root = if line.starts_with("0::") {
        PathBuf::from("/sys/fs/cgroup")
    } else {
        PathBuf::from("/sys/fs/cgroup/pids")
    };
    let own = root.join(path.trim_start_matches('/'));
    let stale = own.with_file_name(format!(
        "kakehiki-{:032x}",
        (u128::from(std::process::id()) << 64) | 0xdead
    ));
    std::fs::create_dir(&stale).unwrap();
    kakehiki_agent::jail::sweep_stale_cgroups();
    let swept = !stale.exists();
    let _ = std::fs::remove_dir(&stale);
    assert!(swept, "the sweep left {}", stale.display());
    assert!(own.exists(), "the sweep removed a living bot's cgroup");
    bot.finish(Duration::from_millis(50)).await;
    assert!(
        wait_for(|| !own.exists()),
        "{} was not removed",
        own.display()
    );
}

#[tokio::test]
async fn kept_files_count_every_file_and_folder_as_a_block() {
    if !layers("kept entries", &[Layer::Namespaces]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("kept");
    let mut cfg = SandboxConfig::default();
    cfg.jail.disk_bytes = 4 << 20;
    cfg.keep_files = Some(kept.clone());
    let (bot, r) = attack("many-entries", &["3000".to_string()], &cfg).await;
    let made: u64 = r[0][1].parse().unwrap();
    bot.finish(Duration::from_millis(50)).await;
    let budget = cfg.jail.disk_bytes / kakehiki_agent::KEPT_BLOCK;
    assert!(
        made > budget,
        "the bot made only {made} entries (budget {budget})"
    );
    // Every file and folder kept, and the host disk it takes (at least a block each).
    fn walk(p: &Path, n: &mut u64, bytes: &mut u64) {
        use std::os::unix::fs::MetadataExt;
        for e in std::fs::read_dir(p).unwrap().flatten() {
            let m = e.metadata().unwrap();
            *n += 1;
            *bytes += (m.blocks() * 512).max(4096);
            if m.is_dir() {
                walk(&e.path(), n, bytes);
            }
        }
    }
    let (mut n, mut bytes) = (0, 0);
    walk(&kept, &mut n, &mut bytes);
    assert!(
        n <= budget,
        "{n} files and folders kept under a budget of {budget} blocks"
    );
    assert!(
        bytes <= cfg.jail.disk_bytes,
        "{bytes} bytes of host disk under a budget of {}",
        cfg.jail.disk_bytes
    );
    assert!(n >= budget - 2, "copying stopped early: {n} of {budget}");
}

/// `/proc/self/mountinfo` names, for each mount, its root within its file system (field 4) and
/// where it is mounted (field 5), and its options. The bot's own files (what its command line
/// names, its seat folder) are shown at neutral paths (`/bot`, `/bot2`, …) as copies or
/// overlays, so no field names the host folder they come from; only what the organiser shows on
/// purpose with `--ro-path` keeps its path.
#[tokio::test]
async fn mountinfo_names_no_host_path_of_the_bots_own_files() {
    if !layers("mountinfo", &[Layer::Namespaces]) {
        return;
    }
    let (dir, bot, _secret) = bot_folder();
    let host = dir.path().display().to_string();
    let real = std::fs::canonicalize(dir.path())
        .unwrap()
        .display()
        .to_string();
    let names_host = |line: &String| line.contains(&host) || line.contains(&real);
    let mountinfo = |argv: Vec<String>, cfg: SandboxConfig| async move {
        let mut b = BotProcess::spawn(&argv, &cfg).unwrap();
        let r = results(&mut b).await;
        b.finish(Duration::from_millis(50)).await;
        tagged(&r, "MOUNT")
    };
    // The bot given as one file: a copy at /bot/bot.py.
    let argv = |path: &str| vec!["python3".to_string(), path.to_string(), "mountinfo".into()];
    let mounts = mountinfo(argv(&bot.display().to_string()), SandboxConfig::default()).await;
    assert!(
        mounts.iter().any(|l| l.split(' ').nth(4) == Some("/bot")),
        "no mount at /bot: {mounts:?}"
    );
    let leaks: Vec<&String> = mounts.iter().filter(|l| names_host(l)).collect();
    assert!(leaks.is_empty(), "mountinfo names {host}: {leaks:?}");
    // The bot's seat folder: an overlay at /bot, its working folder.
    let mut cfg = SandboxConfig::default();
    cfg.jail.seat_dir = Some(dir.path().to_path_buf());
    let mounts = mountinfo(argv("bot.py"), cfg).await;
    let at_bot: Vec<&String> = mounts
        .iter()
        .filter(|l| l.split(' ').nth(4) == Some("/bot"))
        .collect();
    assert!(
        at_bot.iter().any(|l| l.contains(" - overlay ")),
        "the seat folder is not an overlay at /bot: {mounts:?}"
    );
    let leaks: Vec<&String> = mounts.iter().filter(|l| names_host(l)).collect();
    assert!(leaks.is_empty(), "mountinfo names {host}: {leaks:?}");
    // A folder the organiser shows with --ro-path keeps its path, and so does the bot named
    // through a symbolic link in it: nothing else of the host is named.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::os::unix::fs::symlink(dir.path(), sub.join("link")).unwrap();
    let mut cfg = SandboxConfig::default();
    cfg.jail.ro_paths = vec![sub.clone()];
    let through = sub.join("link/bot.py");
    let mounts = mountinfo(argv(&through.display().to_string()), cfg).await;
    let allowed = [sub.clone(), dir.path().join("bot.py")];
    for line in &mounts {
        let f: Vec<&str> = line.split(' ').collect();
        let (root, point) = (f[3], f[4]);
        if !names_host(line) {
            continue;
        }
        assert!(
            allowed.iter().any(|a| Path::new(point) == a) && (root == "/" || point.ends_with(root)),
            "mount {point} (root {root}) names a host path not shown on purpose: {line}"
        );
    }
}
