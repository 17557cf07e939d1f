//! `kakehiki view` and `play --view`: one self-contained page per replay, with the bots' stderr;
//! and the Werewolf summary naming the winning team.

use crate::support::kakehiki;

#[test]
fn play_view_writes_a_self_contained_page_with_the_bots_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let replay = dir.path().join("game.jsonl");
    let out = kakehiki()
        .args(["play", "nac", "--seed", "7", "--view", "--replay"])
        .arg(&replay)
        .args([
            "--seat",
            "cmd:python3 -c 'import sys; sys.stderr.write(\"MY-\" + \"STDERR\"); sys.stderr.flush(); print(\"READY\", flush=True); import time; time.sleep(30)'",
            "--seat",
            "builtin:strong",
            "--seat",
            "builtin:random",
            "--seat",
            "builtin:random",
            "--opt",
            "turn_ms=50",
            "--opt",
            "end_grace_ms=50",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page_path = dir.path().join("game.jsonl.html");
    assert!(
        stdout.contains(&format!("viewer: {}", page_path.display())),
        "{stdout}"
    );
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(
        page.contains("MY-STDERR"),
        "the contestant's own page shows its stderr"
    );
    assert!(page.contains("name=\"viewport\""));
    assert!(page.contains("id=\"kv-model\""));
    // Self-contained: nothing is fetched from anywhere (the SVG namespace is a name, not a fetch).
    let page_text = page.replace("http://www.w3.org/2000/svg", "");
    for needle in [
        "src=\"", "src='", "http://", "https://", "@import", "url(http", "url(//",
    ] {
        assert!(
            !page_text.contains(needle),
            "page refers to an outside asset: {needle}"
        );
    }

    // `kakehiki view` writes the same page wherever asked.
    let other = dir.path().join("other.html");
    let out = kakehiki()
        .arg("view")
        .arg(&replay)
        .arg("--out")
        .arg(&other)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&other).unwrap(), page);
}

#[test]
fn view_reports_bad_replays_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let out = kakehiki().arg("view").arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot read replay"), "{err}");

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"event\":\"header\",\"format\":\"x\",\"engine\":\"0\",\"game\":\"chess\",\"rules\":\"x\",\"seed\":1,\"seats\":[],\"params\":null}\n").unwrap();
    let out = kakehiki().arg("view").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no viewer for game \"chess\""), "{err}");

    std::fs::write(&bad, "not json\n").unwrap();
    let out = kakehiki().arg("view").arg(&bad).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 1"), "{err}");
}

#[test]
fn a_werewolf_summary_names_the_winning_team_not_a_draw() {
    let mut cmd = kakehiki();
    cmd.args(["play", "werewolf", "--seed", "9"]);
    for _ in 0..5 {
        cmd.args(["--seat", "builtin:sample"]);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert!(!stdout.contains("result: draw"), "{stdout}");
    assert!(
        stdout.contains("result: the VILLAGER team won")
            || stdout.contains("result: the WEREWOLF team won"),
        "{stdout}"
    );
}
