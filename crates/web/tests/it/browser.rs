//! The viewers in a real browser. For each game a match is played by the referee and stored by
//! a real contest run; headless chromium opens its page in the web UI and its `kakehiki view`
//! page (a file), at a chosen step (`#t=N`), and the DOM it renders is checked against facts this
//! test reads from the replay itself: a Geister ghost on its square, a Diplomacy unit in its
//! province in its owner's colour, a Werewolf vote (on its day's vote step) and winner (and a natural-language game's talk
//! as said), a NAC lord's revealed affection and the score. No script error may occur (the pages record them on `<html data-js-errors>`,
//! and chromium's log must show no uncaught error).
//!
//! Skipped, with the reason printed, when no chromium is installed (CI installs Debian's).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use kakehiki_contest::{run_local, ContestDef, RefereeArena, RunOptions};
use kakehiki_store::{SqliteStore, Store};
use serde_json::Value;

fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("KAKEHIKI_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    for dir in std::env::split_paths(&path) {
        for name in ["chromium", "chromium-browser", "google-chrome"] {
            let p = dir.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

/// The DOM chromium renders for `url`, and its log.
fn dump_dom(chrome: &Path, url: &str) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(url)
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        dom.contains("data-ready=\"true\""),
        "the viewer did not finish drawing {url}:\n{log}\n{}",
        &dom[..dom.len().min(3000)]
    );
    assert!(
        !dom.contains("data-js-errors=\""),
        "script errors on {url}: {}",
        dom.split("data-js-errors=\"")
            .nth(1)
            .unwrap_or("")
            .split('"')
            .next()
            .unwrap_or("")
    );
    for line in log.lines() {
        assert!(
            !(line.contains("CONSOLE") && line.contains("Uncaught")),
            "uncaught script error on {url}: {line}"
        );
    }
    (dom, log)
}

fn events(replay: &str) -> Vec<Value> {
    replay
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The text after `needle`'s first occurrence, up to `len` bytes.
fn after<'a>(dom: &'a str, needle: &str, len: usize) -> &'a str {
    let at = dom
        .find(needle)
        .unwrap_or_else(|| panic!("page lacks {needle:?}"));
    let rest = &dom[at..];
    let mut end = len.min(rest.len());
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    &rest[..end]
}

/// The text from `needle`'s first occurrence through the first `end` after it: one whole
/// element, however long its attributes run.
fn element<'a>(dom: &'a str, needle: &str, end: &str) -> &'a str {
    let at = dom
        .find(needle)
        .unwrap_or_else(|| panic!("page lacks {needle:?}"));
    let rest = &dom[at..];
    let stop = rest
        .find(end)
        .unwrap_or_else(|| panic!("{needle:?} is never closed by {end:?}"));
    &rest[..stop + end.len()]
}

// ------------------------------------------------------------------------------ facts per game

/// Geister: the chosen ply's move, and every ghost of the final board (the referee's end board
/// string, seat 0's frame) on its square with its colour.
fn check_geister(chrome: &Path, url: &dyn Fn(usize) -> String, replay: &str) {
    let ev = events(replay);
    let turns: Vec<&Value> = ev.iter().filter(|e| e["event"] == "turn").collect();
    let k = turns.len().min(6);
    let t = turns[k - 1];
    let (dom, _) = dump_dom(chrome, &url(k));
    let line = after(&dom, "<p id=\"geister-move\">", 200);
    assert!(
        line.contains(&format!("ply {}: seat {}", t["ply"], t["seat"])),
        "{line}"
    );
    if let Some(mv) = t["move"].as_str() {
        // The move as the bot sent it (its own frame); the board-frame move is checked in viewers.rs.
        assert!(
            line.contains(&format!("(sent \"{mv}\" in its own frame)")),
            "{line}"
        );
    }
    let end = ev
        .iter()
        .find(|e| e["event"] == "end")
        .expect("an end event");
    let board = end["board"].as_str().unwrap().as_bytes();
    let last = ev.iter().filter(|e| e["event"] == "turn").count() + 1;
    let (dom, _) = dump_dom(chrome, &url(last));
    assert!(
        dom.contains("id=\"kv-result\""),
        "no result on the last step"
    );
    assert!(
        dom.contains(end["reason"].as_str().unwrap()),
        "end reason missing"
    );
    let mut checked = 0;
    for (i, c) in board.chunks(3).enumerate() {
        let (x, y, colour) = (c[0] - b'0', c[1] - b'0', c[2] as char);
        if x > 5 || y > 5 {
            continue;
        }
        let seat = i / 8;
        let label = (b'A' + (i % 8) as u8) as char;
        let mut want = format!(
            "class=\"ghost\" data-seat=\"{seat}\" data-label=\"{label}\" data-x=\"{x}\" data-y=\"{y}\""
        );
        if seat == 0 {
            let col = if colour == 'R' { "red" } else { "blue" };
            want.push_str(&format!(" data-colour=\"{col}\""));
        }
        assert!(dom.contains(&want), "ghost not drawn: {want}");
        checked += 1;
    }
    assert!(checked >= 2, "too few ghosts on the final board");
}

/// NAC / Religion War: after the chosen turn, each lord's revealed and real affection per seat
/// as the spec's rules give them from the recorded picks; at the end the recorded scores.
fn check_nac(chrome: &Path, url: &dyn Fn(usize) -> String, replay: &str) {
    let ev = events(replay);
    let variant = &ev[0]["params"]["variant"];
    let targets = variant["targets"].as_u64().unwrap() as usize;
    let reveal = variant["reveal_after"].as_u64();
    let k = 6;
    let mut real = vec![[0u64; 4]; targets];
    let mut public = vec![[0u64; 4]; targets];
    for t in ev.iter().filter(|e| e["event"] == "turn") {
        let turn = t["turn"].as_u64().unwrap();
        if turn > k {
            break;
        }
        let day = turn % 2 == 1;
        let num = |k: &str| variant[k].as_u64().unwrap();
        for m in t["moves"].as_array().unwrap() {
            let seat = m["seat"].as_u64().unwrap() as usize;
            let n = num(if day { "day_picks" } else { "night_picks" }) as usize;
            let picks = m["picks"].as_array().unwrap();
            for j in 0..n {
                let mut i = picks.get(j).and_then(Value::as_u64).unwrap_or(0) as usize;
                if i >= targets {
                    i = 0;
                }
                real[i][seat] += num(if day {
                    "day_real_gain"
                } else {
                    "night_real_gain"
                });
                if day {
                    public[i][seat] += num("day_public_gain");
                }
            }
        }
        if reveal == Some(turn) {
            public = real.clone();
        }
    }
    let (dom, _) = dump_dom(chrome, &url(k as usize));
    for i in 0..targets {
        for s in 0..4 {
            for (kind, v) in [("revealed", public[i][s]), ("real", real[i][s])] {
                let want =
                    format!("data-lord=\"{i}\" data-seat=\"{s}\" data-kind=\"{kind}\">{v}</td>");
                assert!(dom.contains(&want), "turn {k}: expected {want}");
            }
        }
    }
    let result = ev.iter().find(|e| e["event"] == "result").unwrap();
    let turns = ev.iter().filter(|e| e["event"] == "turn").count();
    let (dom, _) = dump_dom(chrome, &url(turns));
    for (s, score) in result["scores"].as_array().unwrap().iter().enumerate() {
        let want = format!(
            "class=\"num total\" data-seat=\"{s}\">{}</td>",
            score.as_str().unwrap()
        );
        assert!(dom.contains(&want), "final score: expected {want}");
    }
    assert!(dom.contains("id=\"kv-result\""));
}

/// Werewolf: day 1's votes from the game log in the vote table, and the winning team.
fn check_werewolf(chrome: &Path, url: &dyn Fn(usize) -> String, replay: &str) {
    let ev = events(replay);
    let log: Vec<&str> = ev
        .iter()
        .filter(|e| e["event"] == "log")
        .map(|e| e["line"].as_str().unwrap())
        .collect();
    let m = kakehiki_web::view_model(replay, &Default::default()).unwrap();
    let steps = m["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .position(|s| s["day"] == 1 && s["phase"] == "vote")
        .expect("a day 1 vote");
    let votes: Vec<(&str, &str)> = log
        .iter()
        .filter(|l| l.starts_with("1,vote,"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2], f[3])
        })
        .collect();
    assert!(!votes.is_empty(), "day 1 has no vote");
    let (dom, _) = dump_dom(chrome, &url(step));
    for (a, t) in &votes {
        let want = format!("class=\"vote\" data-agent=\"{a}\" data-target=\"{t}\"");
        assert!(dom.contains(&want), "day 1 vote missing: {want}");
    }
    let end = ev.iter().find(|e| e["event"] == "end").unwrap();
    let (dom, _) = dump_dom(chrome, &url(steps.len() - 1));
    let want = format!("the {} team wins", end["winner"].as_str().unwrap());
    assert!(dom.contains(&want), "missing {want:?}");
    let roles: Vec<&str> = log
        .iter()
        .filter(|l| l.starts_with("0,status,"))
        .map(|l| l.split(',').nth(3).unwrap())
        .collect();
    for (i, r) in roles.iter().enumerate() {
        let row = after(&dom, &format!("<tr data-agent=\"{}\">", i + 1), 300);
        assert!(row.contains(&format!("class=\"role\">{r}<")), "{row}");
    }
}

/// Werewolf, natural-language division: day 0's free-text talk as said, day 1's votes, the
/// winning team and every role, from the upstream game log in the replay's end event.
fn check_werewolf_nlp(chrome: &Path, url: &dyn Fn(usize) -> String, replay: &str) {
    let ev = events(replay);
    let end = ev.iter().find(|e| e["event"] == "end").unwrap();
    let log: Vec<&str> = end["game_log"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l.as_str().unwrap())
        .collect();
    let (dom, _) = dump_dom(chrome, &url(0));
    let said: Vec<&str> = log
        .iter()
        .filter(|l| l.starts_with("0,talk,"))
        .map(|l| l.splitn(6, ',').nth(5).unwrap())
        .filter(|t| !t.contains(['&', '<', '>', '"']))
        .collect();
    assert!(!said.is_empty(), "day 0 has no talk");
    for t in &said {
        assert!(
            dom.contains(&format!("class=\"said\">{t}<")),
            "day 0 talk missing: {t}"
        );
    }
    let m = kakehiki_web::view_model(replay, &Default::default()).unwrap();
    let steps = m["steps"].as_array().unwrap();
    let step = steps
        .iter()
        .position(|s| s["day"] == 1 && s["phase"] == "vote")
        .expect("a day 1 vote");
    let (dom, _) = dump_dom(chrome, &url(step));
    for l in log.iter().filter(|l| l.starts_with("1,vote,")) {
        let f: Vec<&str> = l.split(',').collect();
        let want = format!(
            "class=\"vote\" data-agent=\"{}\" data-target=\"{}\"",
            f[2], f[3]
        );
        assert!(dom.contains(&want), "day 1 vote missing: {want}");
    }
    let (dom, _) = dump_dom(chrome, &url(steps.len() - 1));
    let want = format!("the {} team wins", end["winner"].as_str().unwrap());
    assert!(dom.contains(&want), "missing {want:?}");
    for (i, r) in end["roles"].as_array().unwrap().iter().enumerate() {
        let row = after(&dom, &format!("<tr data-agent=\"{}\">", i + 1), 300);
        assert!(
            row.contains(&format!("class=\"role\">{}<", r.as_str().unwrap())),
            "{row}"
        );
    }
}

const POWER_COLOURS: [(&str, &str); 7] = [
    ("AUSTRIA", "#c0392b"),
    ("ENGLAND", "#1f3f8f"),
    ("FRANCE", "#3fa7e0"),
    ("GERMANY", "#4d4d4d"),
    ("ITALY", "#2e8b57"),
    ("RUSSIA", "#8e44ad"),
    ("TURKEY", "#d4a017"),
];

/// Diplomacy: at the chosen phase, every unit of the position the powers were sent, in its
/// province and its owner's colour, and every supply centre's owner.
fn check_diplomacy(chrome: &Path, url: &dyn Fn(usize) -> String, replay: &str) {
    let ev = events(replay);
    let phases: Vec<&Value> = ev.iter().filter(|e| e["event"] == "phase").collect();
    let k = phases.len().min(3) - 1;
    // The message each power was sent, by power (every power sees the same position).
    let first_sent = phases[k]["sent"]
        .as_object()
        .and_then(|by_power| by_power.values().next())
        .and_then(Value::as_str)
        .expect("a phase event with the messages sent");
    let sent: Value = serde_json::from_str(first_sent).unwrap();
    let state = &sent["state"];
    let (dom, _) = dump_dom(chrome, &url(k));
    assert!(dom.contains(&format!("phase {}", phases[k]["phase"].as_str().unwrap())));
    let mut units = 0;
    for (power, colour) in POWER_COLOURS {
        for u in state["units"][power].as_array().into_iter().flatten() {
            let u = u.as_str().unwrap();
            let prov = &u[2..5];
            let g = element(&dom, &format!("class=\"unit\" data-unit=\"{u}\""), "</g>");
            assert!(
                g.contains(&format!("data-prov=\"{prov}\" data-power=\"{power}\"")),
                "{g}"
            );
            assert!(
                g.contains(&format!("fill=\"{colour}\"")),
                "{u} not in {power}'s colour: {g}"
            );
            units += 1;
        }
        for c in state["centers"][power].as_array().into_iter().flatten() {
            let want = format!(
                "class=\"sc\" data-prov=\"{}\" data-owner=\"{power}\"",
                c.as_str().unwrap()
            );
            assert!(dom.contains(&want), "missing {want}");
        }
    }
    assert!(units >= 10, "too few units checked");
    let (dom, _) = dump_dom(chrome, &url(phases.len()));
    assert!(dom.contains("id=\"kv-result\""), "no result at the end");
    assert!(dom.contains("id=\"dip-chart\""));
}

// ------------------------------------------------------------------------------ the matches

struct Game {
    name: &'static str,
    toml: &'static str,
    check: fn(&Path, &dyn Fn(usize) -> String, &str),
}

const GAMES: &[Game] = &[
    Game {
        name: "geister",
        toml: "name = \"g\"\ngame = \"geister\"\nrules = \"gpw\"\nformat = \"round-robin\"\nseed = 3\ngames = 2\n\
               [[entrants]]\nname = \"strong\"\nseat = \"builtin:strong\"\n[[entrants]]\nname = \"random\"\nseat = \"builtin:random\"\n",
        check: check_geister,
    },
    Game {
        name: "nac",
        toml: "name = \"n\"\ngame = \"nac\"\nformat = \"round-robin\"\nseed = 2014\ngames = 4\n\
               [[entrants]]\nname = \"s1\"\nseat = \"builtin:strong\"\n[[entrants]]\nname = \"s2\"\nseat = \"builtin:strong\"\n\
               [[entrants]]\nname = \"r1\"\nseat = \"builtin:random\"\n[[entrants]]\nname = \"r2\"\nseat = \"builtin:random\"\n",
        check: check_nac,
    },
    Game {
        name: "religion-war",
        toml: "name = \"rw\"\ngame = \"religion-war\"\nformat = \"round-robin\"\nseed = 2015\ngames = 4\n\
               [[entrants]]\nname = \"s1\"\nseat = \"builtin:strong\"\n[[entrants]]\nname = \"s2\"\nseat = \"builtin:strong\"\n\
               [[entrants]]\nname = \"r1\"\nseat = \"builtin:random\"\n[[entrants]]\nname = \"r2\"\nseat = \"builtin:random\"\n",
        check: check_nac,
    },
    Game {
        name: "werewolf",
        toml: "name = \"w\"\ngame = \"werewolf\"\nformat = \"aiwolf-game-set\"\nseed = 2015\nseats = 5\ngames = 1\nsets = 1\n\
               [[entrants]]\nname = \"a\"\nseat = \"builtin:sample\"\n[[entrants]]\nname = \"b\"\nseat = \"builtin:sample\"\n\
               [[entrants]]\nname = \"c\"\nseat = \"builtin:sample\"\n[[entrants]]\nname = \"d\"\nseat = \"builtin:random\"\n\
               [[entrants]]\nname = \"e\"\nseat = \"builtin:random\"\n",
        check: check_werewolf,
    },
    Game {
        name: "werewolf-nlp",
        toml: "name = \"wn\"\ngame = \"werewolf-nlp\"\nformat = \"aiwolf-game-set\"\nseed = 2024\nseats = 5\ngames = 1\nsets = 1\n\
               [[entrants]]\nname = \"a\"\nseat = \"builtin:sample\"\n[[entrants]]\nname = \"b\"\nseat = \"builtin:sample-en\"\n\
               [[entrants]]\nname = \"c\"\nseat = \"builtin:sample\"\n[[entrants]]\nname = \"d\"\nseat = \"builtin:random\"\n\
               [[entrants]]\nname = \"e\"\nseat = \"builtin:random-en\"\n",
        check: check_werewolf_nlp,
    },
    Game {
        name: "diplomacy",
        toml: "name = \"d\"\ngame = \"diplomacy\"\nformat = \"random-tables\"\nseed = 1901\nseats = 7\nmin_games = 1\n\
               [options]\nmax_year = \"1903\"\npress_rounds = \"1\"\n\
               [[entrants]]\nname = \"s1\"\nseat = \"builtin:strong\"\n[[entrants]]\nname = \"s2\"\nseat = \"builtin:strong\"\n\
               [[entrants]]\nname = \"s3\"\nseat = \"builtin:strong\"\n[[entrants]]\nname = \"r1\"\nseat = \"builtin:random\"\n\
               [[entrants]]\nname = \"r2\"\nseat = \"builtin:random\"\n[[entrants]]\nname = \"r3\"\nseat = \"builtin:random\"\n\
               [[entrants]]\nname = \"h1\"\nseat = \"builtin:hold\"\n",
        check: check_diplomacy,
    },
];

fn run_contest(db: &Path, toml: &str) -> (String, u64, String) {
    let lookup = |g: &str| {
        kakehiki_referee::find_game(g)
            .map(|d| d.game_type())
            .map_err(|e| e.to_string())
    };
    let def = ContestDef::parse(toml, "browser.toml", &lookup).expect("contest parses");
    let store: Box<dyn Store> = Box::new(SqliteStore::open(db).unwrap());
    run_local(&def, store, Arc::new(RefereeArena), &RunOptions::default()).expect("contest runs");
    let mut store = SqliteStore::open(db).unwrap();
    let index = *store
        .stored_indices(&def.name)
        .unwrap()
        .iter()
        .next()
        .expect("a stored match");
    let replay = store.replay(&def.name, index).unwrap().unwrap();
    (def.name.clone(), index, replay)
}

#[test]
fn every_viewer_shows_the_replay_in_a_real_browser() {
    let Some(chrome) = chromium() else {
        eprintln!(
            "skipped: no chromium on PATH (install Debian's chromium, or set KAKEHIKI_CHROMIUM)"
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("browser.sqlite");
    let mut stored = Vec::new();
    for g in GAMES {
        stored.push((g, run_contest(&db, g.toml)));
    }
    // The web UI over that store, on a loopback port.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let db2 = db.clone();
    let opener: kakehiki_web::StoreOpener =
        Arc::new(move || SqliteStore::open(&db2).map(|s| Box::new(s) as Box<dyn Store>));
    let app = kakehiki_web::app_with_opener(opener, 4).unwrap();
    runtime.spawn(async move { axum::serve(listener, app).await });

    for (g, (contest, index, replay)) in &stored {
        // The contest's public page...
        let web = |t: usize| format!("http://{addr}/contests/{contest}/matches/{index}#t={t}");
        (g.check)(&chrome, &web, replay);
        // ...and the `kakehiki view` page of the same replay, as a file.
        let file = dir.path().join(format!("{}.html", g.name));
        let page = kakehiki_web::standalone_page(replay, g.name).unwrap();
        std::fs::write(&file, page).unwrap();
        let local = |t: usize| format!("file://{}#t={t}", file.display());
        (g.check)(&chrome, &local, replay);
        eprintln!("{}: web page and view file checked", g.name);
    }
}

/// The generic viewer (a game without a board viewer of its own, like the test-only `rps`) and the
/// per-seat panels from the seat record, in a real browser: the step's requests, each seat's
/// request at that step with the stderr its bot wrote for it (as text, at that step only), an
/// error linked by the game's label, the exit and the stderr.
#[test]
fn the_generic_viewer_and_seat_panels_draw_in_a_real_browser() {
    let Some(chrome) = chromium() else {
        eprintln!(
            "skipped: no chromium on PATH (install Debian's chromium, or set KAKEHIKI_CHROMIUM)"
        );
        return;
    };
    let replay = r#"{"event":"header","format":"toy@1","engine":"0","game":"toy","rules":"r","seed":1,"seats":["cmd:bot","builtin:x"],"params":null}
{"event":"seat","seat":0,"at":"move 1","kind":"go","limit_ms":100,"time_us":2500,"outcome":"reply","raw":"alpha","stderr":"<b>weighing</b> alpha & beta\n"}
{"event":"seat","seat":1,"at":"move 1","kind":"go","limit_ms":100,"outcome":"reply","raw":"beta"}
{"event":"moved","n":1}
{"event":"seat","seat":0,"at":"move 2","kind":"go","limit_ms":100,"time_us":100000,"outcome":"timeout","stderr":"still thinking at move 2\n","stderr_dropped":7}
{"event":"seat","seat":1,"at":"move 2","kind":"go","limit_ms":100,"outcome":"reply","raw":"gamma"}
{"event":"result","winner":1}
{"event":"seat_end","seat":0,"exit":"exit code 3","exit_code":3,"stderr":"Traceback: boom"}
"#;
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("toy.html");
    std::fs::write(&page, kakehiki_web::standalone_page(replay, "toy").unwrap()).unwrap();
    let (dom, _) = dump_dom(&chrome, &format!("file://{}#t=2", page.display()));
    let stage = after(&dom, "id=\"kv-stage\"", 4000);
    assert!(
        stage.contains("move 2") && stage.contains("gamma"),
        "{stage}"
    );
    assert!(stage.contains("timeout"), "{stage}");
    let panels = after(&dom, "id=\"kv-panels\"", 6000);
    // The error link says the game's label, and points at its step.
    assert!(panels.contains("href=\"#t=2\""), "{panels}");
    assert!(panels.contains(">move 2</a>"), "{panels}");
    assert!(panels.contains("exit: exit code 3"), "{panels}");
    assert!(panels.contains("Traceback: boom"), "{panels}");
    // Seat 1's request at this step, in its panel.
    assert!(panels.contains("class=\"seat-now\""), "{panels}");
    assert!(panels.matches("gamma").count() >= 1, "{panels}");
    // Seat 0's stderr for this step, under its request in the stage and in its panel; not the
    // previous step's. (The page's model holds every step's: only what is drawn counts.)
    let drawn = |dom: &str| element(dom, "id=\"kv-stage\"", "</aside>").to_string();
    let box_of = |html: &str| -> String {
        element(html, "<pre class=\"stderr-step\"", "</pre>").to_string()
    };
    let step2 = "still thinking at move 2\n[7 more bytes dropped: the match's stderr cap]</pre>";
    assert!(box_of(stage).ends_with(step2), "{stage}");
    let now = after(&dom, "class=\"seat-now\" data-seat=\"0\"", 3000);
    assert!(box_of(now).ends_with(step2), "{now}");
    let shown = drawn(&dom);
    assert!(!shown.contains("weighing"), "{shown}");
    assert_eq!(shown.matches("class=\"stderr-step\"").count(), 2, "{shown}");
    // At move 1 its own, as text: the bot's markup is not markup.
    let (dom, _) = dump_dom(&chrome, &format!("file://{}#t=1", page.display()));
    let now = after(&dom, "class=\"seat-now\" data-seat=\"0\"", 3000);
    assert!(
        box_of(now).ends_with(">&lt;b&gt;weighing&lt;/b&gt; alpha &amp; beta\n</pre>"),
        "{now}"
    );
    let shown = drawn(&dom);
    assert!(!shown.contains("<b>"), "{shown}");
    assert!(!shown.contains("still thinking"), "{shown}");
    assert_eq!(
        shown.matches("class=\"stderr-step\"").count(),
        2,
        "stage and panel"
    );
}
