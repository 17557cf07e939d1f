//! Launch lines that cannot work in the sandbox are refused before the bot starts, by the
//! pre-flight (`check_mounts`) and by spawning alike, with what is missing and the flag that
//! adds it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use kakehiki_agent::{
    check_mounts, BotProcess, Layer, SandboxConfig, SandboxLevel, SandboxReport, SpawnError,
};

/// Whether files are hidden from bots here (a private root or Landlock).
fn confined(test: &str) -> bool {
    let report = SandboxReport::current(SandboxLevel::Best);
    let ok =
        report.layers.contains(&Layer::Namespaces) || report.layers.contains(&Layer::LandlockFs);
    if !ok {
        eprintln!("SKIPPED {test}: neither mount namespaces nor Landlock here");
    }
    ok
}

fn argv(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| s.to_string()).collect()
}

fn write_exec(p: &Path, text: &str, mode: u32) {
    std::fs::write(p, text).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The pre-flight and spawning give the same launch error; it is the contestant's, not the
/// machine's.
async fn refused(argv: &[String], cfg: &SandboxConfig) -> String {
    let pre = check_mounts(argv, cfg).expect_err("the pre-flight refuses it");
    assert!(matches!(pre, SpawnError::Launch(_)), "{pre}");
    assert!(!pre.is_host_fault());
    let spawned = BotProcess::spawn(argv, cfg)
        .err()
        .expect("spawning refuses it");
    // The same words; a spawned bot's uid is the one it leased, the pre-flight names the first.
    assert_eq!(
        without_uid(&spawned.to_string()),
        without_uid(&pre.to_string())
    );
    pre.to_string()
}

fn without_uid(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("uid ") {
        out.push_str(&rest[..i + 4]);
        rest = rest[i + 4..].trim_start_matches(|c: char| c.is_ascii_digit());
        out.push('N');
    }
    out.push_str(rest);
    out
}

#[tokio::test]
async fn a_program_found_in_path_only_outside_the_sandbox_is_named_with_its_folder_and_flag() {
    if !confined("shim") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shims = dir.path().join("shims");
    std::fs::create_dir(&shims).unwrap();
    std::fs::set_permissions(&shims, std::fs::Permissions::from_mode(0o755)).unwrap();
    // A pyenv-like shim: a script that starts the real interpreter from its own installation.
    write_exec(
        &shims.join("python"),
        "#!/usr/bin/env bash\nexec \"/root/.pyenv/libexec/pyenv\" exec python \"$@\"\n",
        0o755,
    );
    let mut cfg = SandboxConfig::default();
    cfg.env.push(("PATH".into(), shims.display().to_string()));
    let text = refused(&argv(&["python", "bot.py"]), &cfg).await;
    let shim = shims.join("python");
    for needle in [
        format!("\"python\" is {}", shim.display()),
        format!(
            "its folder {} is not visible inside the sandbox",
            shims.display()
        ),
        format!("--ro-path {}", shims.display()),
        "a script run by /usr/bin/env bash".to_string(),
        "or use the system's /usr/bin/python".to_string(),
    ] {
        assert!(text.contains(&needle), "{needle:?} not in: {text}");
    }
    // With its folder shown, the shim is found: no launch error.
    cfg.jail.ro_paths.push(shims.clone());
    check_mounts(&argv(&["python", "bot.py"]), &cfg).expect("shown with --ro-path");
}

#[tokio::test]
async fn classpath_entries_the_sandbox_does_not_show_are_named() {
    if !confined("classpath") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    std::fs::create_dir(&classes).unwrap();
    std::fs::set_permissions(&classes, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cfg = SandboxConfig::default();
    cfg.env.push((
        "CLASSPATH".into(),
        format!("{}:/usr/share/java", classes.display()),
    ));
    let line = argv(&["sh", "-c", "exec java SampleAI"]);
    let text = refused(&line, &cfg).await;
    assert!(
        text.contains(&format!("CLASSPATH={}", classes.display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("--ro-path {}", classes.display())),
        "{text}"
    );
    assert!(!text.contains("--ro-path /usr/share/java"), "{text}");
    // The same list in -cp (a single folder argument is shown: `java -cp /bots/java Main`).
    let list = format!("{}:/usr/share/java", classes.display());
    let cp = argv(&["java", "-cp", &list, "SampleAI"]);
    let text = check_mounts(&cp, &SandboxConfig::default())
        .expect_err("-cp entry")
        .to_string();
    assert!(text.contains(&format!("-cp {list} names")), "{text}");
    assert!(
        text.contains(&format!("--ro-path {}", classes.display())),
        "{text}"
    );
    let single = argv(&["java", "-cp", &classes.display().to_string(), "SampleAI"]);
    check_mounts(&single, &SandboxConfig::default()).expect("a folder argument is shown");
    cfg.jail.ro_paths.push(classes);
    check_mounts(&line, &cfg).expect("shown with --ro-path");
}

#[tokio::test]
async fn a_folder_a_shell_command_enters_is_named_with_seat_dir() {
    if !confined("cd") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    std::fs::create_dir(&bot).unwrap();
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o755)).unwrap();
    write_exec(&bot.join("a.out"), "#!/bin/sh\necho READY\n", 0o755);
    let line = argv(&["sh", "-c", &format!("cd {} && ./a.out", bot.display())]);
    let cfg = SandboxConfig::default();
    let text = refused(&line, &cfg).await;
    assert!(
        text.contains(&format!("names the folder {}", bot.display())),
        "{text}"
    );
    assert!(text.contains("--seat-dir N=DIR"), "{text}");
    assert!(
        text.contains(&format!("--ro-path {}", bot.display())),
        "{text}"
    );
    // Given as the seat's folder it is shown, and the line starts.
    let mut cfg = SandboxConfig::default();
    cfg.jail.seat_dir = Some(bot.clone());
    check_mounts(&line, &cfg).expect("the seat's folder is shown");
}

#[tokio::test]
async fn a_folder_the_bots_uid_cannot_read_is_named_with_the_uid() {
    let report = SandboxReport::current(SandboxLevel::Best);
    if !report.layers.contains(&Layer::Identity) || report.user_namespace {
        eprintln!("SKIPPED unreadable: bots do not run as a uid of their own here");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("bot");
    std::fs::create_dir(&bot).unwrap();
    write_exec(&bot.join("main.py"), "print('READY')\n", 0o644);
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o700)).unwrap();
    let mut cfg = SandboxConfig::default();
    cfg.jail.seat_dir = Some(bot.clone());
    let line = argv(&["python3", "main.py"]);
    let text = refused(&line, &cfg).await;
    assert!(text.contains("the bot runs as uid 6"), "{text}");
    assert!(
        text.contains(&format!(
            "cannot enter and read the folder {}",
            bot.display()
        )),
        "{text}"
    );
    assert!(text.contains("mode 0700"), "{text}");
    // A script file only its owner reads.
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(bot.join("main.py"), std::fs::Permissions::from_mode(0o600)).unwrap();
    let text = refused(&line, &cfg).await;
    assert!(
        text.contains(&format!("cannot read {}", bot.join("main.py").display())),
        "{text}"
    );
    std::fs::set_permissions(bot.join("main.py"), std::fs::Permissions::from_mode(0o644)).unwrap();
    check_mounts(&line, &cfg).expect("readable now");
}

/// `keep_files`: the working folder of a bot killed mid-match (a timeout) is copied out; a link
/// it planted to a host file is not followed.
#[tokio::test]
async fn a_killed_bots_working_folder_is_kept_without_following_its_links() {
    for level in [SandboxLevel::Best, SandboxLevel::Off] {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "host only").unwrap();
        let mut cfg = SandboxConfig::default();
        cfg.jail.level = level;
        cfg.keep_files = Some(dir.path().join("kept"));
        let script = format!(
            "mkdir -p sub && echo partial > sub/log.txt && ln -s {} link && echo up && sleep 30",
            secret.display()
        );
        let mut bot = BotProcess::spawn(&argv(&["sh", "-c", &script]), &cfg).unwrap();
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
        assert!(matches!(
            bot.read_line(deadline).await,
            kakehiki_agent::ReadOutcome::Line(_)
        ));
        bot.kill();
        bot.finish(std::time::Duration::ZERO).await;
        let kept = dir.path().join("kept");
        assert_eq!(
            std::fs::read_to_string(kept.join("sub/log.txt")).unwrap(),
            "partial\n",
            "{level}"
        );
        assert!(
            std::fs::symlink_metadata(kept.join("link")).is_err(),
            "{level}: a link is not copied"
        );
    }
}
