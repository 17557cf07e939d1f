//! Builds in the sandbox: real compilers (python3, g++) run confined by the bot sandbox.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use kakehiki_agent::SandboxConfig;
use kakehiki_ladder::build::{build, BuildOutcome};
use kakehiki_ladder::{default_recipe, Limits, Recipe};

fn sources(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    dir
}

fn limits() -> Limits {
    Limits {
        build_seconds: 60,
        ..Limits::default()
    }
}

fn run_build(recipe: &Recipe, src: &Path, limits: &Limits) -> (BuildOutcome, tempfile::TempDir) {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("program");
    let rt = tokio::runtime::Runtime::new().unwrap();
    let outcome = rt
        .block_on(build(recipe, src, &out, limits, &SandboxConfig::default()))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.is_dir(), "the program folder is made");
    (outcome, work)
}

fn have(program: &str) -> bool {
    std::process::Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn recipe(build: &str) -> Recipe {
    Recipe {
        main: "bot.py".into(),
        build: build.into(),
        run: "python3 bot.py".into(),
        ro_paths: Vec::new(),
    }
}

#[test]
fn a_python_bot_builds() {
    let src = sources(&[("bot.py", "print('hello')\n"), ("lib.py", "X = 1\n")]);
    let (outcome, work) = run_build(&default_recipe("python").unwrap(), src.path(), &limits());
    assert!(outcome.is_built(), "{outcome:?}");
    let prog = work.path().join("program");
    assert_eq!(
        std::fs::read_to_string(prog.join("bot.py")).unwrap(),
        "print('hello')\n"
    );
    assert!(prog.join("lib.py").is_file());
    assert!(prog.join("__pycache__").is_dir(), "py_compile ran");
    let out = std::process::Command::new("python3")
        .arg("bot.py")
        .current_dir(&prog)
        .output()
        .unwrap();
    assert_eq!(out.stdout, b"hello\n");
}

#[test]
fn a_python_syntax_error_fails_the_build() {
    let src = sources(&[("bot.py", "def f(:\n")]);
    let (outcome, _work) = run_build(&default_recipe("python").unwrap(), src.path(), &limits());
    match &outcome {
        BuildOutcome::Failed { log, exit_code, .. } => {
            assert_eq!(*exit_code, Some(1), "{log}");
            assert!(log.contains("SyntaxError"), "{log}");
        }
        o => panic!("{o:?}"),
    }
}

const HELLO_CPP: &str =
    "#include <iostream>\nint main() { std::cout << \"built \" << 6 * 7 << std::endl; }\n";

#[test]
fn a_cpp_bot_builds_and_runs() {
    if !have("g++") {
        assert!(
            std::env::var_os("KAKEHIKI_CI").is_none(),
            "g++ missing in CI"
        );
        eprintln!("skipped: no g++");
        return;
    }
    let src = sources(&[("bot.cpp", HELLO_CPP)]);
    let (outcome, work) = run_build(&default_recipe("cpp").unwrap(), src.path(), &limits());
    assert!(outcome.is_built(), "{outcome:?}");
    let bot = work.path().join("program/bot");
    let mode = std::fs::metadata(&bot).unwrap().permissions().mode();
    assert_ne!(mode & 0o111, 0, "the built program stays executable");
    let out = std::process::Command::new(&bot).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "built 42\n");
}

#[test]
fn a_cpp_compile_error_is_reported_with_the_compilers_message() {
    if !have("g++") {
        assert!(
            std::env::var_os("KAKEHIKI_CI").is_none(),
            "g++ missing in CI"
        );
        eprintln!("skipped: no g++");
        return;
    }
    let src = sources(&[("bot.cpp", "int main() { return undeclared_thing_42; }\n")]);
    let (outcome, work) = run_build(&default_recipe("cpp").unwrap(), src.path(), &limits());
    match &outcome {
        BuildOutcome::Failed { log, exit_code, .. } => {
            assert_eq!(*exit_code, Some(1), "{log}");
            assert!(log.contains("undeclared_thing_42"), "{log}");
            assert!(log.contains("was not declared"), "{log}");
        }
        o => panic!("{o:?}"),
    }
    assert!(!work.path().join("program/bot").exists());
    assert!(outcome.summary().contains("exit code 1"));
}

#[test]
fn a_build_cannot_write_outside_its_folder() {
    // A folder anyone may write to on the host: only the sandbox keeps the build out of it.
    let outside = tempfile::tempdir().unwrap();
    std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let target = outside.path().join("planted");
    let src = sources(&[("bot.py", "print(1)\n")]);
    for line in [
        format!("sh -c 'echo x > {}'", target.display()),
        "sh -c 'echo x > \"$SRC/planted\"'".to_string(),
        "sh -c 'echo x > /etc/planted'".to_string(),
    ] {
        let (outcome, _work) = run_build(&recipe(&line), src.path(), &limits());
        assert!(
            matches!(outcome, BuildOutcome::Failed { .. }),
            "{line}: {outcome:?}"
        );
    }
    assert!(!target.exists());
    assert!(!src.path().join("planted").exists());
    assert!(!Path::new("/etc/planted").exists());
    // Its own folder it may write, and that is what is kept.
    let (outcome, work) = run_build(
        &recipe("sh -c 'echo mine > own.txt'"),
        src.path(),
        &limits(),
    );
    assert!(outcome.is_built(), "{outcome:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("program/own.txt")).unwrap(),
        "mine\n"
    );
}

#[test]
fn a_build_has_no_network() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let src = sources(&[("bot.py", "print(1)\n")]);
    let line = format!(
        "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('connected')\""
    );
    let (outcome, _work) = run_build(&recipe(&line), src.path(), &limits());
    match &outcome {
        BuildOutcome::Failed { log, .. } => assert!(!log.contains("connected"), "{log}"),
        o => panic!("{o:?}"),
    }
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the build reached the host: {other:?}"),
    }
}

#[test]
fn a_build_over_its_time_is_stopped() {
    let src = sources(&[("bot.py", "print(1)\n")]);
    let limits = Limits {
        build_seconds: 1,
        ..Limits::default()
    };
    let started = std::time::Instant::now();
    let (outcome, _work) = run_build(
        &recipe("sh -c 'echo started; sleep 30'"),
        src.path(),
        &limits,
    );
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    match &outcome {
        BuildOutcome::TimeLimit { log, seconds } => {
            assert_eq!(*seconds, 1);
            assert!(log.contains("started"), "{log}");
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn a_build_over_its_memory_fails() {
    let src = sources(&[("bot.py", "print(1)\n")]);
    let limits = Limits {
        build_memory_mib: 64,
        ..limits()
    };
    let (outcome, _work) = run_build(
        &recipe("python3 -c \"x = bytearray(512 << 20); print('allocated')\""),
        src.path(),
        &limits,
    );
    // The per-process limit (RLIMIT_DATA) makes the allocation fail, or the cgroup kills it.
    match &outcome {
        BuildOutcome::Failed { log, .. } => {
            assert!(log.contains("MemoryError"), "{log}")
        }
        BuildOutcome::MemoryLimit { mib, .. } => assert_eq!(*mib, 64),
        o => panic!("{o:?}"),
    }
    let _ = std::io::stdout().flush();
}
