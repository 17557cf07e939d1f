//! Contestants' bots in any language run unchanged in the strictest sandbox this machine offers:
//! Python, C++, Java (the JVM reads /proc and its own files), Node, PHP, Scala. A language whose toolchain
//! is not installed is skipped with a printed reason.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use kakehiki_agent::{BotProcess, ReadOutcome, SandboxConfig, SandboxLevel, SandboxReport};
use tokio::time::Instant;

fn langs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/langs")
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// A missing toolchain skips the language here, and fails under CI (`KAKEHIKI_CI` set), which
/// installs every one.
fn skip(lang: &str, why: &str) {
    assert!(
        std::env::var_os("KAKEHIKI_CI").is_none(),
        "{lang}: {why} (CI must install it: see .ci/run)"
    );
    eprintln!("SKIPPED {lang}: {why}");
}

/// The strictest level this machine can give (strict where every layer exists).
fn config() -> SandboxConfig {
    let mut cfg = SandboxConfig::default();
    if SandboxReport::current(SandboxLevel::Strict).complete() {
        cfg.jail.level = SandboxLevel::Strict;
    } else {
        eprintln!(
            "note: not every layer is available here ({}); testing at level best",
            SandboxReport::current(SandboxLevel::Best).missing_text()
        );
    }
    cfg
}

async fn echo(argv: Vec<String>, cfg: &SandboxConfig) {
    let mut bot = BotProcess::spawn(&argv, cfg).expect("the bot starts");
    let soon = || Instant::now() + Duration::from_secs(20);
    match bot.read_line(soon()).await {
        ReadOutcome::Line(l) => assert!(
            l.bytes.starts_with(b"READY"),
            "{:?}",
            String::from_utf8_lossy(&l.bytes)
        ),
        other => panic!(
            "{argv:?}: no READY: {other:?}; stderr: {}",
            bot.stderr_text()
        ),
    }
    bot.send(b"hello\n").await.unwrap();
    match bot.read_line(soon()).await {
        ReadOutcome::Line(l) => assert_eq!(l.bytes, b"ECHO hello"),
        other => panic!(
            "{argv:?}: no echo: {other:?}; stderr: {}",
            bot.stderr_text()
        ),
    }
    bot.finish(Duration::from_millis(200)).await;
}

#[tokio::test]
async fn python() {
    let script = langs().join("echo.py").display().to_string();
    echo(vec!["python3".into(), script], &config()).await;
}

#[tokio::test]
async fn a_script_named_through_dot_dot_is_found() {
    // As test files name the example bots: <crate>/../../examples/...
    let script = langs().join("../langs/echo.py").display().to_string();
    assert!(script.contains(".."));
    echo(vec!["python3".into(), script], &config()).await;
}

#[tokio::test]
async fn cpp() {
    if !have("g++") {
        skip("cpp", "g++ is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("echo");
    let st = Command::new("g++")
        .args(["-O1", "-o"])
        .arg(&exe)
        .arg(langs().join("echo.cpp"))
        .status()
        .unwrap();
    assert!(st.success());
    // The original contests' launch line: cd into the bot's folder and run ./a.out.
    let mut cfg = config();
    cfg.jail.seat_dir = Some(dir.path().to_path_buf());
    echo(vec!["./echo".into()], &cfg).await;
}

#[tokio::test]
async fn java() {
    if !have("javac") || !have("java") {
        skip("java", "no JDK (javac, java) installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let st = Command::new("javac")
        .arg("-d")
        .arg(dir.path())
        .arg(langs().join("Echo.java"))
        .status()
        .unwrap();
    assert!(st.success());
    let mut cfg = config();
    cfg.jail.seat_dir = Some(dir.path().to_path_buf());
    echo(
        vec!["java".into(), "-cp".into(), ".".into(), "Echo".into()],
        &cfg,
    )
    .await;
}

#[tokio::test]
async fn node() {
    if !have("node") {
        skip("node", "node is not installed");
        return;
    }
    let script = langs().join("echo.js").display().to_string();
    echo(vec!["node".into(), script], &config()).await;
}

#[tokio::test]
async fn php() {
    if !have("php") {
        skip("php", "php is not installed");
        return;
    }
    let script = langs().join("echo.php").display().to_string();
    echo(vec!["php".into(), script], &config()).await;
}

#[tokio::test]
async fn scala() {
    if !have("scalac") || !have("scala") {
        skip("scala", "no Scala (scalac, scala) installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let st = Command::new("scalac")
        .arg("-d")
        .arg(dir.path())
        .arg(langs().join("Echo.scala"))
        .status()
        .unwrap();
    assert!(st.success());
    // The launcher script of Debian's Scala starts the JVM with the Scala library.
    let mut cfg = config();
    cfg.jail.seat_dir = Some(dir.path().to_path_buf());
    echo(
        vec!["scala".into(), "-cp".into(), ".".into(), "Echo".into()],
        &cfg,
    )
    .await;
}
