//! Launch lines as a contestant writes them: `check` takes `play`'s sandbox flags, `--seat-dir`
//! numbers seats from 0, a launch line that cannot work in the sandbox is refused with what is
//! missing and the flag that adds it, and `--keep-seat-files` keeps what a bot wrote.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kakehiki(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_kakehiki"));
    c.current_dir(dir);
    c
}

fn text(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
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
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("passed"),
        "{}",
        text(&out)
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
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(text(&out).contains("from 0"), "{}", text(&out));

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
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
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
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("N must be a seat number, from 0 to 3"),
        "{}",
        text(&out)
    );
}
