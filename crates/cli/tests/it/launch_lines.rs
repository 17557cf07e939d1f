//! Launch lines as a contestant writes them: `check` takes `play`'s sandbox flags, `--seat-dir`
//! numbers seats from 0, a launch line that cannot work in the sandbox is refused with what is
//! missing and the flag that adds it, and `--keep-seat-files` keeps what a bot wrote.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{self, described};

fn kakehiki(dir: &Path) -> Command {
    let mut c = support::kakehiki();
    c.current_dir(dir);
    c
}

fn nac_example() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../examples/bots/python/nac_bot.py"
    ))
    .unwrap()
}

/// `d/bot/`: `main.py` imports `helper.py` beside it (the example NAC bot), so it runs only
/// where its folder is given. World-readable, as a bot's folder is.
fn bot_folder(d: &Path) -> PathBuf {
    let bot = d.join("bot");
    std::fs::create_dir(&bot).unwrap();
    std::fs::write(bot.join("helper.py"), nac_example()).unwrap();
    std::fs::write(bot.join("main.py"), "import helper\nhelper.main()\n").unwrap();
    for (p, mode) in [
        (bot.clone(), 0o755),
        (bot.join("helper.py"), 0o644),
        (bot.join("main.py"), 0o644),
    ] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    bot
}

#[test]
fn check_takes_plays_sandbox_flags_and_seat_dir_counts_from_0() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    bot_folder(d);
    std::fs::create_dir(d.join("tools")).unwrap();
    let out = kakehiki(d)
        .args([
            "check",
            "nac",
            "--seat",
            "cmd:python3 main.py",
            "--seeds",
            "1",
        ])
        .args([
            "--seat-dir",
            "0=bot",
            "--ro-path",
            "tools",
            "--pass-env",
            "LANG",
        ])
        .args(["--sandbox", "best", "--disk-mib", "64"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("passed"),
        "{}",
        described(&out)
    );
    // check plays one bot: its folder is seat 0's.
    let out = kakehiki(d)
        .args([
            "check",
            "nac",
            "--seat",
            "cmd:python3 main.py",
            "--seeds",
            "1",
        ])
        .args(["--seat-dir", "1=bot"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", described(&out));
    assert!(described(&out).contains("from 0"), "{}", described(&out));

    // play: seat 0 is the first seat.
    let out = kakehiki(d)
        .args([
            "play",
            "nac",
            "--seat",
            "cmd:python3 main.py",
            "--seat",
            "builtin:random",
        ])
        .args([
            "--fill",
            "builtin:random",
            "--seat-dir",
            "0=bot",
            "--seed",
            "3",
            "--strict",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
    let out = kakehiki(d)
        .args([
            "play",
            "nac",
            "--seat",
            "builtin:random",
            "--seat",
            "cmd:python3 main.py",
        ])
        .args([
            "--fill",
            "builtin:random",
            "--seat-dir",
            "4=bot",
            "--seed",
            "3",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", described(&out));
    assert!(
        described(&out).contains("N must be a seat number, from 0 to 3"),
        "{}",
        described(&out)
    );
}

#[test]
fn keep_seat_files_copies_each_process_seats_working_folder_out() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Seat 0 logs into its working folder and plays; seat 2 logs, then crashes at once.
    let bot = d.join("logging_bot.py");
    std::fs::write(
        &bot,
        format!(
            "import os\nos.makedirs('logs', exist_ok=True)\nopen('logs/bot.log', 'w').write('seat 0 was here\\n')\n{}",
            nac_example()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bot, std::fs::Permissions::from_mode(0o644)).unwrap();
    for level in ["best", "off"] {
        let kept = d.join(format!("kept-{level}"));
        let out = kakehiki(d)
            .args(["play", "nac", "--seat", "cmd:python3 logging_bot.py"])
            .args(["--seat", "builtin:random"])
            .args([
                "--seat",
                "cmd:sh -c 'echo about to crash > crash.log; exit 3'",
            ])
            .args([
                "--seat",
                "builtin:random",
                "--seed",
                "5",
                "--sandbox",
                level,
            ])
            .arg("--keep-seat-files")
            .arg(format!("kept-{level}"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{level}: {}", described(&out));
        let log = std::fs::read_to_string(kept.join("seat-0/logs/bot.log"));
        assert_eq!(
            log.ok().as_deref(),
            Some("seat 0 was here\n"),
            "{level}: {}",
            described(&out)
        );
        let crash = std::fs::read_to_string(kept.join("seat-2/crash.log"));
        assert_eq!(
            crash.ok().as_deref(),
            Some("about to crash\n"),
            "{level}: {}",
            described(&out)
        );
        assert!(
            !kept.join("seat-1").exists(),
            "a built-in seat has no folder"
        );
        // Only what the bot wrote: not the mount points of what it was shown.
        let names: Vec<String> = std::fs::read_dir(kept.join("seat-0"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["logs"], "{level}");
    }
}

#[test]
fn a_launch_line_that_enters_a_hidden_folder_is_refused_with_the_flag_that_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bot = bot_folder(d);
    std::fs::write(bot.join("a.out"), "#!/bin/sh\nexec python3 main.py\n").unwrap();
    std::fs::set_permissions(bot.join("a.out"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let line = format!("cmd:sh -c 'cd {} && ./a.out'", bot.display());
    let out = kakehiki(d)
        .args(["play", "nac", "--seat", &line, "--fill", "builtin:random"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", described(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("names the folder {}", bot.display())),
        "{err}"
    );
    assert!(
        err.contains("--seat-dir N=DIR") && err.contains("--ro-path"),
        "{err}"
    );
    // The same in check, before any match.
    let out = kakehiki(d)
        .args(["check", "nac", "--seat", &line])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", described(&out));
    assert!(
        described(&out).contains(&format!("names the folder {}", bot.display())),
        "{}",
        described(&out)
    );
    // As the seat's folder, it runs.
    let out = kakehiki(d)
        .args([
            "play",
            "nac",
            "--seat",
            "cmd:./a.out",
            "--fill",
            "builtin:random",
        ])
        .args(["--seat-dir", &format!("0={}", bot.display()), "--strict"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", described(&out));
}
