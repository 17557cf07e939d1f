//! The process layer against real processes (`sh` scripts stand in for bots).

use std::time::Duration;

use kakehiki_agent::{BotProcess, ClientProcess, ReadOutcome, SandboxConfig, SandboxLevel};
use tokio::time::Instant;

fn sh(script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), script.into()]
}

fn soon(ms: u64) -> Instant {
    Instant::now() + Duration::from_millis(ms)
}

#[tokio::test]
async fn reads_lines_and_answers_writes() {
    let mut bot = BotProcess::spawn(
        &sh("echo READY; read x; echo \"got $x\""),
        &SandboxConfig::default(),
    )
    .unwrap();
    match bot.read_line(soon(5000)).await {
        ReadOutcome::Line(l) => assert_eq!(l.bytes, b"READY"),
        other => panic!("expected a line, got {other:?}"),
    }
    bot.send(b"hello\n").await.unwrap();
    match bot.read_line(soon(5000)).await {
        ReadOutcome::Line(l) => assert_eq!(l.bytes, b"got hello"),
        other => panic!("expected a line, got {other:?}"),
    }
    match bot.read_line(soon(5000)).await {
        ReadOutcome::Closed { exit, .. } => assert_eq!(exit.and_then(|e| e.code), Some(0)),
        other => panic!("expected EOF, got {other:?}"),
    }
}

#[tokio::test]
async fn times_out_with_partial_text() {
    let mut bot = BotProcess::spawn(
        &sh("printf 'no newline'; sleep 30"),
        &SandboxConfig::default(),
    )
    .unwrap();
    let t = Instant::now();
    match bot.read_line(soon(300)).await {
        ReadOutcome::Timeout { partial } => assert_eq!(partial, b"no newline"),
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(t.elapsed() < Duration::from_secs(5));
    bot.kill();
}

#[tokio::test]
async fn reports_exit_code_of_a_crash() {
    let mut bot = BotProcess::spawn(&sh("exit 3"), &SandboxConfig::default()).unwrap();
    match bot.read_line(soon(5000)).await {
        ReadOutcome::Closed { exit, .. } => assert_eq!(exit.and_then(|e| e.code), Some(3)),
        other => panic!("expected EOF, got {other:?}"),
    }
}

#[tokio::test]
async fn cuts_long_lines_and_caps_output() {
    let cfg = SandboxConfig {
        line_cap: 10,
        output_cap: 1 << 20,
        ..SandboxConfig::default()
    };
    let mut bot = BotProcess::spawn(&sh("printf '0123456789abcdef\\n'; yes flood"), &cfg).unwrap();
    match bot.read_line(soon(5000)).await {
        ReadOutcome::Line(l) => {
            assert_eq!(l.bytes, b"0123456789");
            assert!(l.truncated);
        }
        other => panic!("expected a line, got {other:?}"),
    }
    let deadline = soon(10_000);
    loop {
        match bot.read_line(deadline).await {
            ReadOutcome::Line(_) => continue,
            ReadOutcome::OutputLimit { bytes } => {
                assert!(bytes > 1 << 20);
                break;
            }
            other => panic!("expected the output limit, got {other:?}"),
        }
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !bot.group_alive(),
        "a bot over its output cap must be killed"
    );
}

fn unconfined() -> SandboxConfig {
    let mut cfg = SandboxConfig::default();
    cfg.jail.level = SandboxLevel::Off;
    cfg
}

#[tokio::test]
async fn kills_children_that_keep_the_pipe_open() {
    // Without a PID namespace a child outlives the bot and keeps its stdout open until the group
    // kill (with one, the kernel ends it with the bot: see the sandbox zoo).
    let mut bot = BotProcess::spawn(&sh("sleep 60 & echo READY; exit 0"), &unconfined()).unwrap();
    assert!(matches!(
        bot.read_line(soon(5000)).await,
        ReadOutcome::Line(_)
    ));
    // The child holds stdout open: no EOF arrives, the read times out.
    assert!(matches!(
        bot.read_line(soon(300)).await,
        ReadOutcome::Timeout { .. }
    ));
    assert!(bot.group_alive());
    bot.kill();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !bot.group_alive(),
        "the bot's child survived the group kill"
    );
    bot.finish(Duration::from_millis(100)).await;
}

#[tokio::test]
async fn scrubs_the_environment_and_uses_a_temporary_directory() {
    std::env::set_var("KAKEHIKI_SECRET_FOR_TEST", "leak");
    let mut bot = BotProcess::spawn(
        &sh("echo \"${KAKEHIKI_SECRET_FOR_TEST:-none} $(pwd)\""),
        &unconfined(),
    )
    .unwrap();
    match bot.read_line(soon(5000)).await {
        ReadOutcome::Line(l) => {
            let text = String::from_utf8(l.bytes).unwrap();
            assert!(text.starts_with("none "), "{text}");
            assert!(text.contains("kakehiki-bot-"), "{text}");
        }
        other => panic!("expected a line, got {other:?}"),
    }
}

#[tokio::test]
async fn applies_rlimits() {
    let mut cfg = SandboxConfig::default();
    cfg.limits.file_size_bytes = Some(1000);
    let mut bot = BotProcess::spawn(&sh("ulimit -f; ulimit -t"), &cfg).unwrap();
    let mut out = Vec::new();
    while let ReadOutcome::Line(l) = bot.read_line(soon(5000)).await {
        out.push(String::from_utf8(l.bytes).unwrap());
    }
    // sh reports RLIMIT_FSIZE in 512-byte blocks.
    assert_eq!(out, vec!["1".to_string(), "600".to_string()]);
}

#[tokio::test]
async fn captures_stderr_capped() {
    let cfg = SandboxConfig {
        stderr_cap: 100,
        ..SandboxConfig::default()
    };
    let mut bot = BotProcess::spawn(&sh("yes err | head -c 100000 >&2; echo done"), &cfg).unwrap();
    assert!(matches!(
        bot.read_line(soon(5000)).await,
        ReadOutcome::Line(_)
    ));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let text = bot.stderr_text();
    assert!(text.starts_with("err\nerr\n"));
    assert!(text.contains("more bytes dropped"), "{text}");
    // The end is kept too: the last line the bot wrote.
    assert!(text.ends_with("err\n"), "{text}");
}

#[tokio::test]
async fn reports_a_missing_program() {
    let err = BotProcess::spawn(&["/nonexistent/bot".to_string()], &SandboxConfig::default())
        .err()
        .unwrap();
    assert!(err.to_string().contains("cannot start"), "{err}");
}

#[tokio::test]
async fn client_process_is_killed_with_its_group() {
    let client =
        ClientProcess::spawn(&sh("sleep 60 & sleep 60"), &SandboxConfig::default()).unwrap();
    assert!(client.group_alive());
    let mut client = client;
    client.kill();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!client.group_alive());
}

#[tokio::test]
async fn finishing_keeps_all_stderr_written_before_the_end() {
    for _ in 0..20 {
        let mut bot = BotProcess::spawn(
            &sh("echo last words >&2; exit 1"),
            &SandboxConfig::default(),
        )
        .unwrap();
        assert!(matches!(
            bot.read_line(soon(5000)).await,
            ReadOutcome::Closed { .. }
        ));
        let (exit, stderr) = bot.finish_with_stderr(Duration::from_millis(100)).await;
        assert_eq!(exit.and_then(|e| e.code), Some(1));
        assert_eq!(stderr, "last words\n");
    }
    let client =
        ClientProcess::spawn(&sh("echo out; echo err >&2"), &SandboxConfig::default()).unwrap();
    let (_, stderr, stdout) = client.finish_with_output(Duration::from_secs(2)).await;
    assert_eq!((stderr.as_str(), stdout.as_str()), ("err\n", "out\n"));
}

#[tokio::test]
async fn stderr_is_taken_piece_by_piece_apart_from_the_tail() {
    let mut bot = BotProcess::spawn(
        &sh("echo one >&2; echo READY; read x; echo two >&2; echo three >&2; exit 3"),
        &SandboxConfig::default(),
    )
    .unwrap();
    let console = bot.stderr_console();
    assert!(matches!(
        bot.read_line(soon(5000)).await,
        ReadOutcome::Line(_)
    ));
    // Written before READY, so in its pipe by now: a take reads it there, whatever the drain
    // task has done.
    assert_eq!(bot.take_stderr().text, "one\n");
    assert!(bot.take_stderr().is_empty());
    bot.send(b"go\n").await.unwrap();
    let (exit, tail) = bot.finish_with_stderr(Duration::from_secs(2)).await;
    assert_eq!(exit.and_then(|e| e.code), Some(3));
    assert_eq!(tail, "one\ntwo\nthree\n", "the tail keeps everything");
    let rest = console.take_rest();
    assert_eq!((rest.text.as_str(), rest.dropped), ("two\nthree\n", 0));
    assert!(console.take_rest().is_empty());
}

#[tokio::test]
async fn a_clients_stderr_pieces_keep_to_the_cap_over_its_life() {
    let cfg = SandboxConfig {
        stderr_cap: 10,
        ..SandboxConfig::default()
    };
    let client = ClientProcess::spawn(&sh("printf 0123456789abcdef >&2"), &cfg).unwrap();
    let console = client.stderr_console();
    let (_, tail, _) = client.finish_with_output(Duration::from_secs(2)).await;
    assert!(tail.starts_with("01234"), "{tail}");
    let rest = console.take_rest();
    assert_eq!((rest.text.as_str(), rest.dropped), ("0123456789", 6));
}

mod host_faults {
    use std::io;

    use kakehiki_agent::{BotProcess, SandboxConfig, SpawnError};

    fn start_error(errno: i32) -> SpawnError {
        SpawnError::Start {
            program: "bot".into(),
            source: io::Error::from_raw_os_error(errno),
        }
    }

    #[test]
    fn machine_errors_are_host_faults() {
        for errno in [
            nix::libc::EMFILE,
            nix::libc::ENFILE,
            nix::libc::ENOMEM,
            nix::libc::EAGAIN,
            nix::libc::ENOSPC,
            nix::libc::EDQUOT,
            nix::libc::EPERM,
        ] {
            assert!(start_error(errno).is_host_fault(), "errno {errno}");
        }
        let workdir = SpawnError::Workdir(io::Error::from_raw_os_error(nix::libc::ENOENT));
        assert!(workdir.is_host_fault());
    }

    #[test]
    fn program_errors_are_the_bots() {
        for errno in [nix::libc::ENOENT, nix::libc::EACCES, nix::libc::ENOEXEC] {
            assert!(!start_error(errno).is_host_fault(), "errno {errno}");
        }
        assert!(!SpawnError::EmptyCommand.is_host_fault());
        let no_errno = SpawnError::Start {
            program: "bot".into(),
            source: io::Error::other("no errno"),
        };
        assert!(!no_errno.is_host_fault());
    }

    #[tokio::test]
    async fn a_missing_program_is_the_bots_fault() {
        let err = BotProcess::spawn(
            &["/nonexistent/kakehiki-no-such-bot".to_string()],
            &SandboxConfig::default(),
        )
        .err()
        .expect("a missing program does not start");
        assert!(!err.is_host_fault(), "{err}");
    }
}
