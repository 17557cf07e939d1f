//! What a viewer shows, as a user would look at it: games played by the referee, their view
//! models checked against the replay, and their `kakehiki view` pages opened in headless
//! chromium (`--dump-dom`), with `viewer_probe.js` measuring the layout (overlapping labels,
//! contrast, an agent list wider than the page). The browser tests are skipped, with the
//! reason printed, when no chromium is installed (CI installs Debian's).

use std::path::{Path, PathBuf};
use std::process::Command;

use kakehiki_core::SeatSpec;
use kakehiki_referee::driver::MatchSpec;
use kakehiki_referee::find_game;
use kakehiki_web::{standalone_page, view_model, ViewOptions};
use serde_json::Value;

fn play(game: &str, seed: u64, seats: &[&str], options: &[(&str, &str)]) -> String {
    let seats: Vec<SeatSpec> = seats.iter().map(|s| s.parse().unwrap()).collect();
    let mut spec = MatchSpec::new(game, seed, seats);
    for (k, v) in options {
        spec.options.insert(k.to_string(), v.to_string());
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rec = rt.block_on(find_game(game).unwrap().play(&spec)).unwrap();
    rec.replay.to_text()
}

fn model(replay: &str) -> Value {
    view_model(replay, &ViewOptions::default()).unwrap()
}

fn events(replay: &str) -> Vec<Value> {
    replay
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn diplomacy_replay() -> String {
    play(
        "diplomacy",
        5,
        &[
            "builtin:strong",
            "builtin:strong",
            "builtin:random",
            "builtin:strong",
            "builtin:random",
            "builtin:strong",
            "builtin:random",
        ],
        &[("max_year", "1904"), ("press_rounds", "0")],
    )
}

fn fifteen_agent_werewolf() -> String {
    play("werewolf", 3, &["builtin:sample"; 15], &[])
}

// ------------------------------------------------------------------------------ view models

#[test]
fn diplomacy_orders_carry_why_they_failed_or_were_void() {
    let replay = diplomacy_replay();
    let m = model(&replay);
    let steps = m["steps"].as_array().unwrap();
    let (mut failed, mut void) = (0, 0);
    for ev in events(&replay).iter().filter(|e| e["event"] == "phase") {
        let step = steps.iter().find(|s| s["phase"] == ev["phase"]).unwrap();
        for (rec, r) in step["records"]
            .as_array()
            .unwrap()
            .iter()
            .zip(ev["adjudicated"].as_array().unwrap())
        {
            for o in rec["orders"].as_array().unwrap() {
                // The unit as the order names it: kind and location, with a coast if any
                // (`F BUL/EC`).
                let unit = o["unit"].as_str().map(|_| {
                    let text = o["text"].as_str().unwrap();
                    let mut words = text.split(' ');
                    format!("{} {}", words.next().unwrap(), words.next().unwrap())
                });
                match o["result"].as_str() {
                    Some("fails") => {
                        failed += 1;
                        let want = &r["failures"][unit.as_deref().unwrap()];
                        assert!(want.is_string(), "no failure recorded for {o}");
                        assert_eq!(&o["reason"], want, "{o}");
                    }
                    Some("void") => {
                        void += 1;
                        let why = o["reason"]
                            .as_str()
                            .unwrap_or_else(|| panic!("void without a reason: {o}"));
                        let recorded = format!(
                            "{}: {}: {why}",
                            o["power"].as_str().unwrap(),
                            o["text"].as_str().unwrap()
                        );
                        assert!(
                            r["errors"]
                                .as_array()
                                .unwrap()
                                .iter()
                                .any(|e| e.as_str().unwrap().eq_ignore_ascii_case(&recorded)),
                            "{recorded} not among {}",
                            r["errors"]
                        );
                    }
                    _ => assert!(o["reason"].is_null(), "{o}"),
                }
            }
        }
    }
    assert!(
        failed >= 5 && void >= 1,
        "too few failed ({failed}) or void ({void}) orders to check"
    );
}

/// A Diplomacy seat that never answers: its panel lists each timeout at the step of the phase
/// it happened in, with the limit, from the seat record of the replay; the map still has the
/// state each phase was played from.
#[test]
fn diplomacy_seat_errors_are_linked_to_their_phase() {
    let mut seats = ["builtin:hold"; 7];
    seats[2] = r#"cmd:sh -c 'read -r l; echo "{\"ready\":true}"; while read -r l; do :; done'"#;
    let opts = [("max_year", "1901"), ("movement_ms", "300")];
    let replay = play("diplomacy", 5, &seats, &opts);
    let m = model(&replay);
    let steps = m["steps"].as_array().unwrap();
    let errors = m["seats"][2]["errors"].as_array().unwrap();
    assert!(!errors.is_empty(), "{m}");
    let first = &errors[0];
    assert_eq!(first["kind"], "timeout", "{first}");
    assert_eq!(
        first["detail"], "no reply to orders within 300 ms",
        "{first}"
    );
    let step = first["step"].as_u64().unwrap() as usize;
    assert_eq!(steps[step]["phase"], "S1901M", "{first}");
    assert!(
        steps[step]["state"]["units"]["FRANCE"].is_array(),
        "{}",
        steps[step]
    );
}

#[test]
fn seats_of_one_bot_are_told_apart() {
    let replay = play(
        "nac",
        3,
        &[
            "builtin:strong",
            "builtin:strong",
            "builtin:random",
            "builtin:random",
        ],
        &[],
    );
    let m = model(&replay);
    let labels: Vec<&str> = m["seats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "builtin:strong (seat 0)",
            "builtin:strong (seat 1)",
            "builtin:random (seat 2)",
            "builtin:random (seat 3)"
        ]
    );
}

#[test]
fn geister_moves_are_told_in_the_board_frame() {
    let replay = play("geister", 3, &["builtin:strong", "builtin:random"], &[]);
    let m = model(&replay);
    let square = |xy: &Value| {
        let (x, y) = (xy[0].as_u64().unwrap(), xy[1].as_u64().unwrap());
        format!("({x},{y})")
    };
    let mut checked = [0, 0];
    for s in m["steps"].as_array().unwrap() {
        let (Some(mv), Some(seat)) = (s["move"].as_str(), s["seat"].as_u64()) else {
            continue;
        };
        let told = s["board_move"].as_str().unwrap();
        let (label, dir) = mv.split_once(',').unwrap();
        // Seat 1 sits at the top: its north is the board's down, its east the board's left.
        let want = match (seat, dir) {
            (0, "N") | (1, "S") => "up",
            (0, "S") | (1, "N") => "down",
            (0, "E") | (1, "W") => "right",
            _ => "left",
        };
        assert!(
            told.starts_with(&format!("{label} {want} {}", square(&s["from"]))),
            "{mv} of seat {seat}: {told}"
        );
        if !s["to"].is_null() {
            assert!(told.ends_with(&square(&s["to"])), "{told}");
            // The square entered is where the board shows the ghost afterwards.
            let (x, y) = (&s["to"][0], &s["to"][1]);
            // The board's ghosts: `SLCXY` tokens (seat, label, colour, x, y).
            let token = |t: &str| {
                let c: Vec<char> = t.chars().collect();
                (
                    u64::from(c[0].to_digit(10).unwrap()),
                    c[1].to_string(),
                    u64::from(c[3].to_digit(10).unwrap()),
                    u64::from(c[4].to_digit(10).unwrap()),
                )
            };
            assert!(s["board"]["pieces"]
                .as_str()
                .unwrap()
                .split(' ')
                .map(token)
                .any(|(gs, gl, gx, gy)| gs == seat
                    && gl == label
                    && x.as_u64() == Some(gx)
                    && y.as_u64() == Some(gy)));
        }
        checked[seat as usize] += 1;
    }
    assert!(checked[0] > 3 && checked[1] > 3, "{checked:?}");
}

/// Every step's notes, in order.
fn step_notes(m: &Value) -> Vec<&str> {
    m["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["notes"].as_array().unwrap())
        .filter_map(Value::as_str)
        .collect()
}

/// A Geister bot that places and then crashes at its first move: its panel counts its one
/// reply (the placement), and the step and the panel both call the crash a crash at the ply it
/// was asked for, as `check` does.
#[test]
fn a_crashed_geister_seat_is_told_as_check_tells_it() {
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("crash.py");
    std::fs::write(
        &bot,
        "import sys\nfor line in sys.stdin:\n    if line.startswith('SET?'):\n        print('SET:ABCD', flush=True)\n    elif line.startswith('MOV?'):\n        sys.exit(1)\n",
    )
    .unwrap();
    let seat = format!("cmd:python3 {}", bot.display());
    let replay = play("geister", 3, &[&seat, "builtin:random"], &[]);
    let m = model(&replay);
    let p0 = &m["seats"][0];
    assert_eq!(p0["moves"], 1, "the placement is a reply: {p0}");
    let errors = p0["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{p0}");
    assert_eq!(errors[0]["at"], "ply 1", "{p0}");
    assert_eq!(errors[0]["kind"], "crash", "{p0}");
    let notes: Vec<&str> = step_notes(&m)
        .into_iter()
        .filter(|n| n.starts_with("seat 0: "))
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("seat 0: ply 1: crash (")),
        "{notes:?}"
    );
    assert!(!notes.iter().any(|n| n.contains(": exit (")), "{notes:?}");
}

/// A Geister client that crashes mid-game (the example client's `crash7`, at its seventh
/// move, the 13th ply when it moves first): the viewer's step, its panel and the referee's
/// report name the same ply.
#[test]
fn a_geister_crash_mid_game_is_at_the_ply_the_report_names() {
    let client = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bots/python/geister_client.py");
    let seat = format!(
        "cmd:python3 {} --stdio --mode crash7 --seed 1",
        client.canonicalize().unwrap().display()
    );
    let replay = play("geister", 5, &[&seat, "builtin:random"], &[]);
    let m = model(&replay);
    let errors = m["seats"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["at"], "ply 13", "{errors:?}");
    assert_eq!(errors[0]["kind"], "crash", "{errors:?}");
    let notes = step_notes(&m);
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("seat 0: ply 13: crash (")),
        "{notes:?}"
    );
    // The referee's own seat record (what `check` and `play` print) says the same ply.
    let record = events(&replay)
        .into_iter()
        .find(|v| v["event"] == "seat" && v["outcome"] == "crash")
        .expect("the seat record of the crash");
    assert_eq!(record["at"], "ply 13", "{record}");
}

/// A Geister match as the public sees it while it is played (no placements: the game keeps
/// them secret until the end): every ghost's colour is unknown (`u`) until a capture or an
/// escape tells it, and its last step is where the match is, not its end.
#[test]
fn a_live_geister_match_shows_no_colour_it_has_not_told() {
    let replay = play("geister", 11, &["builtin:random", "builtin:random"], &[]);
    let rule = kakehiki_referee::find_game("geister")
        .unwrap()
        .public_live();
    let public: Vec<&str> = replay.lines().filter(|l| rule(l)).collect();
    let ply = |l: &&str| l.contains("\"event\":\"turn\"");
    let half: Vec<&str> = public
        .iter()
        .take(public.iter().position(ply).unwrap() + 40)
        .copied()
        .collect();
    let text: String = half.iter().map(|l| format!("{l}\n")).collect();
    let m = model(&text);
    let steps = m["steps"].as_array().unwrap();
    let last = steps.last().unwrap();
    assert_eq!(last["title"], "so far", "{last}");
    let pieces = last["board"]["pieces"].as_str().unwrap();
    assert!(
        pieces.split(' ').all(|t| &t[2..3] == "u"),
        "only unknown colours on the board: {pieces}"
    );
    // Captured ghosts are told (a capture says the colour).
    let captured = text.matches("\"captured\":{").count();
    let off = last["board"]["off"][0].as_array().unwrap().len()
        + last["board"]["off"][1].as_array().unwrap().len();
    assert_eq!(off, captured, "{last}");
    // The whole replay: every colour known, and an end.
    let m = model(&replay);
    let last = m["steps"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["title"], "end");
    assert!(!last["board"]["pieces"].as_str().unwrap().contains('u'));
}

/// A NAC bot (the example bot, made to exit at turn 5): its panel has one error, a crash at
/// the step of turn 5, where `check` and `play` say `turn 5: crash`; the death the referee
/// records for it does not tell it twice.
#[test]
fn a_nac_crash_is_told_once_at_its_turn() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/bots/python/nac_bot.py");
    let text = std::fs::read_to_string(example).unwrap();
    let at = "        picks = choose(";
    assert!(text.contains(at), "the example bot changed");
    let dir = tempfile::tempdir().unwrap();
    let bot = dir.path().join("nac_crash.py");
    std::fs::write(
        &bot,
        text.replace(
            at,
            &format!("        if int(header[0]) == 5:\n            sys.exit(4)\n{at}"),
        ),
    )
    .unwrap();
    let seat = format!("cmd:python3 {}", bot.display());
    let replay = play(
        "nac",
        3,
        &[&seat, "builtin:random", "builtin:random", "builtin:random"],
        &[],
    );
    let record = events(&replay)
        .into_iter()
        .find(|v| v["event"] == "seat" && v["outcome"] == "crash")
        .expect("the seat record of the crash");
    assert_eq!(record["at"], "turn 5", "{record}");
    let m = model(&replay);
    let errors = m["seats"][0]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(errors[0]["kind"], "crash", "{errors:?}");
    let step = errors[0]["step"].as_u64().unwrap() as usize;
    let title = m["steps"][step]["title"].as_str().unwrap();
    assert!(title.starts_with("turn 5 "), "{title}");
}

/// The phases of an AIWolf game log (`day,kind,...` lines) as `(day, phase)` in order.
fn phases_of(log: &[String]) -> Vec<(u64, &'static str)> {
    let mut out: Vec<(u64, &'static str)> = Vec::new();
    for l in log {
        let mut f = l.split(',');
        let day: u64 = f.next().unwrap().parse().unwrap();
        let kind = f.next().unwrap();
        let opening = out.last().is_none_or(|l| l.0 != day || l.1 == "whisper");
        let phase = match kind {
            "whisper" if opening => "whisper",
            "talk" => "talk",
            "vote" | "execute" => "vote",
            "whisper" | "divine" | "identify" | "guard" | "attackVote" | "attack" => "night",
            "result" => "end",
            _ => continue,
        };
        if out.last() != Some(&(day, phase)) {
            out.push((day, phase));
        }
    }
    out
}

#[test]
fn werewolf_steps_by_phase_talk_vote_night() {
    let replay = fifteen_agent_werewolf();
    let log: Vec<String> = events(&replay)
        .iter()
        .filter(|e| e["event"] == "log")
        .map(|e| e["line"].as_str().unwrap().to_string())
        .collect();
    let m = model(&replay);
    assert_eq!(m["unit"], "phase");
    let steps = m["steps"].as_array().unwrap();
    let got: Vec<(u64, &str)> = steps
        .iter()
        .map(|s| (s["day"].as_u64().unwrap(), s["phase"].as_str().unwrap()))
        .collect();
    assert_eq!(got, phases_of(&log));
    for s in steps {
        let d = s["day"].as_u64().unwrap();
        let count = |kind: &str| {
            log.iter()
                .filter(|l| l.starts_with(&format!("{d},{kind},")))
                .count()
        };
        let votes: usize = s["votes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_array().unwrap().len())
            .sum();
        match s["phase"].as_str().unwrap() {
            "talk" => {
                assert_eq!(s["talk"].as_array().unwrap().len(), count("talk"));
                assert_eq!(votes, 0);
                assert!(s["attacked"].is_null() && s["executed"].is_null());
            }
            "vote" => {
                assert_eq!(votes, count("vote"));
                assert!(s["talk"].as_array().unwrap().is_empty());
                assert_eq!(s["executed"].is_object(), count("execute") == 1);
            }
            "whisper" => {
                assert!(s["talk"].as_array().unwrap().is_empty() && votes == 0);
                assert!(!s["whisper"].as_array().unwrap().is_empty());
            }
            "night" => {
                // The day's whispers: those opening it (a step of their own) and the night's.
                let opening: usize = steps
                    .iter()
                    .filter(|x| x["day"] == d && x["phase"] == "whisper")
                    .map(|x| x["whisper"].as_array().unwrap().len())
                    .sum();
                assert_eq!(
                    s["whisper"].as_array().unwrap().len() + opening,
                    count("whisper")
                );
                assert_eq!(s["attacked"].is_object(), count("attack") == 1);
                assert_eq!(votes, 0);
                // The executed agent is no longer alive when the night begins.
                if let Some(e) = steps
                    .iter()
                    .find(|x| x["day"] == d && x["phase"] == "vote" && x["executed"].is_object())
                {
                    let a = e["executed"]["agent"].as_u64().unwrap() as usize;
                    assert_eq!(s["alive"][a - 1], false, "day {d}");
                }
            }
            _ => {}
        }
        assert_eq!(
            s["title"].as_str().unwrap().split(' ').nth(1),
            Some(d.to_string().as_str())
        );
    }
    assert!(got.iter().filter(|(_, p)| *p == "night").count() >= 2);
}

// ------------------------------------------------------------------------------ in chromium

fn chromium() -> Option<PathBuf> {
    if let Ok(p) = std::env::var("KAKEHIKI_CHROMIUM") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// A replay's `kakehiki view` page with the probe appended, written to `dir`.
fn page(dir: &Path, name: &str, replay: &str) -> PathBuf {
    let html = standalone_page(replay, name).unwrap().replace(
        "</body>",
        &format!(
            "<script>{}</script></body>",
            include_str!("../viewer_probe.js")
        ),
    );
    let path = dir.join(format!("{name}.html"));
    std::fs::write(&path, html).unwrap();
    path
}

/// What chromium renders for `page#hash` in a window `width` wide: the DOM and the probe.
fn render(chrome: &Path, page: &Path, hash: &str, width: u32) -> (String, Value) {
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chrome)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-sync",
        ])
        .arg(format!("--window-size={width},1800"))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}#{hash}", page.display()))
        .output()
        .expect("chromium runs");
    let dom = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        dom.contains("data-ready=\"true\"") && !dom.contains("data-js-errors=\""),
        "the viewer failed on {}#{hash}:\n{}\n{}",
        page.display(),
        String::from_utf8_lossy(&out.stderr),
        &dom[..dom.len().min(2000)]
    );
    let probe = dom
        .split("<pre id=\"probe\">")
        .nth(1)
        .and_then(|r| r.split("</pre>").next())
        .expect("the probe ran")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    (dom, serde_json::from_str(&probe).unwrap())
}

/// The part of the page the viewer draws (not the embedded model).
fn stage(dom: &str) -> &str {
    let at = dom.find("id=\"kv-stage\"").expect("a stage");
    let end = dom[at..]
        .find("id=\"kv-panels\"")
        .map_or(dom.len(), |e| at + e);
    &dom[at..end]
}

fn panels(dom: &str) -> &str {
    let at = dom.find("id=\"kv-panels\"").expect("side panels");
    &dom[at..]
}

macro_rules! need_chromium {
    () => {
        match chromium() {
            Some(c) => c,
            None => {
                eprintln!("skipped: no chromium on PATH (install Debian's chromium, or set KAKEHIKI_CHROMIUM)");
                return;
            }
        }
    };
}

#[test]
fn diplomacy_map_colours_owners_draws_coasts_and_keeps_labels_readable() {
    let chrome = need_chromium!();
    let dir = tempfile::tempdir().unwrap();
    let mut replay = diplomacy_replay();
    // An illegal order in the second phase (F1901M), as a bot might send it.
    let mut lines: Vec<Value> = events(&replay);
    let k = lines
        .iter()
        .position(|e| e["event"] == "phase" && e["phase"] == "F1901M")
        .unwrap();
    lines[k]["adjudicated"][0]["errors"]
        .as_array_mut()
        .unwrap()
        .push("FRANCE: A PAR - MOS: not adjacent".into());
    replay = lines.iter().map(|l| l.to_string() + "\n").collect();
    let m = model(&replay);
    let steps = m["steps"].as_array().unwrap();
    let f1901 = steps.iter().position(|s| s["phase"] == "F1901M").unwrap();
    let page = page(dir.path(), "diplomacy", &replay);
    let map = kakehiki_diplomacy::standard();

    let mut bounced = false;
    for (t, step) in steps
        .iter()
        .enumerate()
        .filter(|(t, _)| [0, f1901, 5].contains(t))
    {
        let (dom, probe) = render(&chrome, &page, &format!("t={t}"), 1400);
        let st = stage(&dom);
        // Territories in their controller's colour: every owned supply centre, one fill per power,
        // and a legend naming each power with its colour.
        let mut fills: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        for (power, list) in step["state"]["centers"].as_object().unwrap() {
            for c in list.as_array().unwrap() {
                let tag = format!(
                    "class=\"province\" data-prov=\"{}\" data-kind=",
                    c.as_str().unwrap()
                );
                let poly = &st[st.find(&tag).unwrap_or_else(|| panic!("no {tag}"))..];
                let poly = &poly[..poly.find('>').unwrap()];
                assert!(poly.contains(&format!("data-owner=\"{power}\"")), "{poly}");
                let fill = st[..st.find(&tag).unwrap()]
                    .rsplit("fill=\"")
                    .next()
                    .unwrap()
                    .split('"')
                    .next()
                    .unwrap();
                fills
                    .entry(power.clone())
                    .or_default()
                    .insert(fill.to_string());
            }
        }
        let all: std::collections::BTreeSet<&String> = fills.values().flatten().collect();
        assert!(
            fills.values().all(|f| f.len() == 1) && all.len() == fills.len(),
            "{fills:?}"
        );
        for p in kakehiki_diplomacy::POWER_NAMES {
            assert!(
                st.contains(&format!("class=\"legend-item\" data-power=\"{p}\"")),
                "legend lacks {p}"
            );
        }
        // Coastlines: a border drawn between every coastal province and each sea it touches;
        // every other pair of neighbours shares a thin border; no coastline where the map has
        // no adjacency.
        let sea = |i: u8| map.provinces[i as usize].kind == kakehiki_diplomacy::ProvinceKind::Sea;
        let mut missing = Vec::new();
        for i in 0..map.provinces.len() as u8 {
            for j in kakehiki_diplomacy::map::bits(map.prov_graph(i)).filter(|j| *j > i) {
                let (a, b) = (map.prov_name(i), map.prov_name(j));
                let found = if sea(i) != sea(j) {
                    let (land, water) = if sea(i) { (b, a) } else { (a, b) };
                    st.contains(&format!(
                        "class=\"coast\" data-land=\"{land}\" data-sea=\"{water}\""
                    ))
                } else {
                    st.contains(&format!("class=\"border\" data-a=\"{a}\" data-b=\"{b}\""))
                        || st.contains(&format!("class=\"border\" data-a=\"{b}\" data-b=\"{a}\""))
                };
                if !found {
                    missing.push(format!("{a}-{b}"));
                }
            }
        }
        assert!(missing.is_empty(), "no border between {missing:?}");
        for c in st.split("class=\"coast\" data-land=\"").skip(1) {
            // The Libyan desert and Switzerland are no provinces: their shores are only drawn.
            let Some(land) = map.province(&c[..3]) else {
                continue;
            };
            let water = c.split("data-sea=\"").nth(1).unwrap();
            let water = map
                .province(&water[..3])
                .unwrap_or_else(|| panic!("{}", &c[..60]));
            assert!(
                map.prov_graph(land) & (1u128 << water) != 0,
                "a coastline between {} and {}, which do not border",
                &c[..3],
                map.prov_name(water)
            );
        }
        // Every province named once, over nothing else, readable on the territory under it.
        assert_eq!(probe["labels"], map.provinces.len(), "{probe}");
        assert_eq!(
            probe["overlaps"],
            serde_json::json!([]),
            "step {t}: overlapping labels"
        );
        for c in probe["contrast"].as_array().unwrap() {
            assert!(
                c["ratio"].as_f64().unwrap() >= 4.5,
                "step {t}: low contrast {c}"
            );
        }
        // Each order's result with its reason, as adjudicated.
        for rec in step["records"].as_array().unwrap() {
            for o in rec["orders"].as_array().unwrap() {
                if let Some(why) = o["reason"].as_str() {
                    let why = why
                        .replace('&', "&amp;")
                        .replace('<', "&lt;")
                        .replace('>', "&gt;");
                    let row = format!(
                        "<td>{}</td><td class=\"order-result\">{}</td><td class=\"reason\">{why}</td>",
                        o["text"].as_str().unwrap(),
                        o["result"].as_str().unwrap()
                    );
                    assert!(st.contains(&row), "step {t}: missing {row}");
                }
            }
        }
        if t == f1901 {
            assert!(st.contains("<td>A PAR - MOS</td><td class=\"order-result\">void (not applied)</td><td class=\"reason\">not adjacent</td>"));
        }
        bounced |= st.contains("<td class=\"reason\">bounced</td>");
        // An error names its phase: a link to F1901M, not to "phase 1".
        let link = format!("<a href=\"#t={f1901}\" class=\"step-link\">F1901M</a>: illegal_action — A PAR - MOS: not adjacent");
        assert!(panels(&dom).contains(&link), "no link {link}");
    }
    assert!(bounced, "no bounced order shown");
}

#[test]
fn geister_has_a_legend_and_tells_moves_in_the_board_frame() {
    let chrome = need_chromium!();
    let dir = tempfile::tempdir().unwrap();
    let replay = play("geister", 3, &["builtin:strong", "builtin:strong"], &[]);
    let m = model(&replay);
    let page = page(dir.path(), "geister", &replay);
    let steps = m["steps"].as_array().unwrap();
    let t = steps
        .iter()
        .position(|s| s["seat"] == 1 && s["board_move"].as_str().is_some_and(|b| b.contains('→')))
        .unwrap();
    let (dom, _) = render(&chrome, &page, &format!("t={t}"), 1200);
    let st = stage(&dom);
    let legend = &st[st.find("id=\"geister-legend\"").expect("a legend")..];
    for seat in 0..2 {
        let item = &legend[legend
            .find(&format!("data-seat=\"{seat}\""))
            .expect("each side in the legend")..];
        assert!(
            item[..600].contains(&format!("seat {seat} (builtin:strong)")),
            "{}",
            &item[..600]
        );
    }
    let line = &st[st.find("<p id=\"geister-move\">").unwrap()..];
    let told = steps[t]["board_move"].as_str().unwrap();
    assert!(
        line.starts_with(&format!(
            "<p id=\"geister-move\">ply {}: seat 1 (builtin:strong) moved {told}",
            steps[t]["ply"]
        )),
        "{}",
        &line[..200]
    );
    assert!(st.contains("class=\"move-arrow\""));
    // Seat 0's eyes: seat 1's ghosts have no colour; the referee's: every ghost has one.
    let (dom, _) = render(&chrome, &page, &format!("t={t}&view=seat0"), 1200);
    let st = stage(&dom);
    for g in st.split("class=\"ghost\" ").skip(1) {
        let known = !g[..120].contains("data-colour=\"unknown\"");
        assert_eq!(known, g.starts_with("data-seat=\"0\""), "{}", &g[..120]);
    }
}

/// NAC and Religion War as one seat saw them: its own real affection and picks, nobody else's.
fn players_eye(game: &str) {
    let chrome = need_chromium!();
    let dir = tempfile::tempdir().unwrap();
    let replay = play(
        game,
        2014,
        &[
            "builtin:strong",
            "builtin:strong",
            "builtin:random",
            "builtin:random",
        ],
        &[],
    );
    let m = model(&replay);
    let page = page(dir.path(), game, &replay);
    let targets = m["extra"]["targets"].as_u64().unwrap() as usize;
    let t = 4; // a night, before the affections are revealed
    let (dom, _) = render(&chrome, &page, &format!("t={t}"), 1300);
    let st = stage(&dom);
    assert_eq!(
        st.matches("data-kind=\"real\"").count(),
        4 * targets,
        "the referee sees every real affection"
    );
    for name in [
        "builtin:strong (seat 0)",
        "builtin:strong (seat 1)",
        "builtin:random (seat 2)",
        "builtin:random (seat 3)",
    ] {
        assert!(st.contains(name), "{name} not told apart");
    }
    for me in 0..4u64 {
        let (dom, _) = render(&chrome, &page, &format!("t={t}&view=seat{me}"), 1300);
        assert!(
            dom.contains(&format!("data-view=\"seat{me}\"")),
            "the link's view was not taken"
        );
        let st = stage(&dom);
        let step = &m["steps"][t];
        // Real affection: only its own column.
        assert_eq!(st.matches("data-kind=\"real\"").count(), targets);
        for lord in 0..targets {
            assert!(st.contains(&format!(
                "data-lord=\"{lord}\" data-seat=\"{me}\" data-kind=\"real\">{}</td>",
                step["real"][lord][me as usize]
            )));
        }
        assert_eq!(
            st.matches("class=\"num hidden\"").count(),
            3 * targets + 8,
            "seat {me}: others' real affection and the scores hidden"
        );
        // Picks and replies: only its own row.
        let moves = &st[st.find("id=\"nac-moves\"").unwrap()..];
        for mv in step["moves"].as_array().unwrap() {
            let seat = mv["seat"].as_u64().unwrap();
            let row = &moves[moves.find(&format!("<tr data-seat=\"{seat}\"")).unwrap()..];
            let row = &row[..row.find("</tr>").unwrap()];
            if seat == me {
                let picks: Vec<String> = mv["picks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| (p.as_u64().unwrap() + 1).to_string())
                    .collect();
                assert!(
                    row.contains(&format!("class=\"picks\">{}</td>", picks.join(" "))),
                    "{row}"
                );
            } else {
                assert!(
                    row.contains("class=\"hidden-row\"") && !row.contains("class=\"picks\""),
                    "seat {me} sees seat {seat}'s move: {row}"
                );
            }
        }
    }
}

#[test]
fn nac_has_a_players_eye_view() {
    players_eye("nac");
}

#[test]
fn religion_war_has_a_players_eye_view() {
    players_eye("religion-war");
}

/// Every agent of the list inside the page at a desktop and a narrow width, and the steps by
/// phase.
fn werewolf_layout(chrome: &Path, page: &Path, m: &Value, n: usize) {
    let steps = m["steps"].as_array().unwrap();
    // The list of agents (on the step after the first, whatever a step is).
    for width in [1000, 640] {
        let (_, probe) = render(chrome, page, "t=1", width);
        let a = &probe["alive"];
        assert_eq!(a["agents"], n);
        assert_eq!(a["list_inside_stage"], true, "width {width}: {probe}");
        assert_eq!(
            a["outside"],
            serde_json::json!([]),
            "width {width}: {probe}"
        );
        assert_eq!(
            a["clipped"],
            serde_json::json!([]),
            "width {width}: {probe}"
        );
    }
    // One step per phase: a vote shows the votes, a talk the talk.
    let vote = steps
        .iter()
        .position(|s| s["day"] == 1 && s["phase"] == "vote")
        .expect("a vote step on day 1");
    let talk = steps
        .iter()
        .position(|s| s["day"] == 1 && s["phase"] == "talk")
        .expect("a talk step on day 1");
    let (dom, _) = render(chrome, page, &format!("t={vote}"), 1000);
    let st = stage(&dom);
    assert!(st.contains("data-day=\"1\" data-phase=\"vote\""));
    assert!(
        st.contains("class=\"ww-votes\"") && !st.contains("id=\"ww-talk\""),
        "the vote step shows votes only"
    );
    let (dom, _) = render(chrome, page, &format!("t={talk}"), 1000);
    let st = stage(&dom);
    assert!(st.contains("data-day=\"1\" data-phase=\"talk\""));
    assert!(
        st.contains("id=\"ww-talk\"") && !st.contains("class=\"ww-votes\""),
        "the talk step shows talk only"
    );
}

#[test]
fn werewolf_agent_list_fits_fifteen_agents_and_steps_by_phase() {
    let chrome = need_chromium!();
    let dir = tempfile::tempdir().unwrap();
    let replay = fifteen_agent_werewolf();
    let page = page(dir.path(), "werewolf", &replay);
    werewolf_layout(&chrome, &page, &model(&replay), 15);
}

#[test]
fn werewolf_nlp_agent_list_fits_thirteen_agents_and_steps_by_phase() {
    let chrome = need_chromium!();
    let dir = tempfile::tempdir().unwrap();
    let seats: Vec<&str> = (0..13)
        .map(|i| ["builtin:sample", "builtin:sample-en", "builtin:random"][i % 3])
        .collect();
    let replay = play("werewolf-nlp", 31, &seats, &[]);
    let page = page(dir.path(), "werewolf-nlp", &replay);
    werewolf_layout(&chrome, &page, &model(&replay), 13);
}
