//! A person plays a seat (`--seat human`) through its page in a real browser, against built-in
//! bots: the Geister board and the Negotiate and Conquer targets by clicking, the other games
//! through the text box that takes exactly what a bot would send. Each match is then read back
//! from its replay: the person's replies are the seat's, and the match ended scored.

use std::fs::File;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use fantoccini::{Client, Locator};
use serde_json::Value;

use crate::browser::{click, text_when, type_into, WebDriver};
use crate::support::{kakehiki, start_and_read, Says, Server};

/// `kakehiki play GAME ARGS --replay DIR/replay.jsonl --json` with a human seat: the process
/// and the address of the first human seat's page (its report goes to DIR/report.json).
fn play(dir: &Path, game: &str, args: &[&str]) -> (Server, String) {
    let mut cmd = kakehiki();
    cmd.args(["play", game])
        .args(args)
        .arg("--replay")
        .arg(dir.join("replay.jsonl"))
        .arg("--json")
        .stdout(Stdio::from(File::create(dir.join("report.json")).unwrap()));
    start_and_read(cmd, Says::Stderr, |line| {
        let (_, url) = line.split_once(": http://")?;
        line.starts_with("human seat ")
            .then(|| format!("http://{url}"))
    })
}

/// The match's report and replay once `kakehiki play` has ended.
fn finished(mut server: Server, dir: &Path) -> (Value, Vec<Value>) {
    let started = Instant::now();
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            assert!(status.success(), "kakehiki play ended with {status}");
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "play did not end"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let report = std::fs::read_to_string(dir.join("report.json")).unwrap();
    let replay = std::fs::read_to_string(dir.join("replay.jsonl")).unwrap();
    (
        serde_json::from_str(&report).unwrap(),
        replay
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
    )
}

/// `kakehiki replay` re-runs the match of `dir` from its recorded replies to the same result.
fn replays(dir: &Path) {
    let out = kakehiki()
        .arg("replay")
        .arg(dir.join("replay.jsonl"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", crate::support::described(&out));
}

/// The replies seat `seat` sent in the replay, in order.
fn replies_of(replay: &[Value], seat: u64) -> Vec<String> {
    replay
        .iter()
        .filter(|e| e["event"] == "seat" && e["seat"] == seat)
        .filter_map(|e| e["raw"].as_str().map(str::to_string))
        .collect()
}

/// What the page shows once it is the person's turn: the number and text of the last message,
/// or `None` when the seat is over.
async fn my_turn(c: &Client, answered: Option<u64>) -> Option<(u64, String)> {
    let started = Instant::now();
    loop {
        let waiting = text_when(c, "hs-waiting", |t| !t.is_empty(), 10, 50)
            .await
            .unwrap_or_default();
        if waiting.starts_with("This seat is over") {
            return None;
        }
        if waiting.starts_with("Your turn") {
            if let Ok(last) = c.find(Locator::Id("hs-last")).await {
                let n: Option<u64> = last
                    .attr("data-n")
                    .await
                    .ok()
                    .flatten()
                    .and_then(|n| n.parse().ok());
                if let (Some(n), Ok(text)) = (n, last.text().await) {
                    if Some(n) != answered {
                        return Some((n, text));
                    }
                }
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no turn came: {waiting}"
        );
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

/// Send `text` through the text box.
async fn type_reply(c: &Client, text: &str) {
    let field = c.find(Locator::Id("hs-reply")).await.unwrap();
    field.clear().await.unwrap();
    type_into(c, "hs-reply", text).await;
    click(c, "hs-send").await;
}

/// The refusal the page shows once a reply was refused.
async fn refusal(c: &Client) -> String {
    text_when(c, "hs-refused", |t| !t.is_empty(), 10, 50)
        .await
        .unwrap()
}

/// A screenshot of the page into `$KAKEHIKI_SCREENSHOTS/NAME.png` when that is set (for people
/// looking at the pages).
async fn snap(c: &Client, name: &str) {
    if let Some(dir) = std::env::var_os("KAKEHIKI_SCREENSHOTS") {
        let png = c.screenshot().await.unwrap();
        std::fs::write(Path::new(&dir).join(format!("{name}.png")), png).unwrap();
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A Geister move for the board of `MOV?`: a blue ghost on an exit escapes; otherwise the blue
/// ghost nearest the opponent's side goes north, or any ghost anywhere it may go. The squares
/// to click: the ghost's, then where it goes (`None`: the exit, with its direction).
fn geister_move(msg: &str) -> ((u8, u8), Result<(u8, u8), char>) {
    let b = msg.trim_end().strip_prefix("MOV?").unwrap().as_bytes();
    let own: Vec<(u8, u8, u8)> = (0..8)
        .map(|g| (b[3 * g], b[3 * g + 1], b[3 * g + 2]))
        .filter(|(x, y, _)| *x <= b'5' && *y <= b'5')
        .map(|(x, y, c)| (x - b'0', y - b'0', c))
        .collect();
    let mine = |x: i8, y: i8| own.iter().any(|o| o.0 as i8 == x && o.1 as i8 == y);
    for &(x, y, c) in &own {
        if c == b'B' && y == 0 && (x == 0 || x == 5) {
            return ((x, y), Err('N'));
        }
    }
    let mut order = own.clone();
    order.sort_by_key(|&(_, y, c)| (c != b'B', y));
    for &(x, y, _) in &order {
        for (dx, dy) in [(0i8, -1i8), (-1, 0), (1, 0), (0, 1)] {
            let (nx, ny) = (x as i8 + dx, y as i8 + dy);
            if (0..6).contains(&nx) && (0..6).contains(&ny) && !mine(nx, ny) {
                return ((x, y), Ok((nx as u8, ny as u8)));
            }
        }
    }
    panic!("no move on {msg}")
}

#[test]
fn a_person_plays_geister_by_clicking_the_board() {
    let Some(webdriver) = WebDriver::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = play(
        dir.path(),
        "geister",
        &["--seat", "human", "--seat", "builtin:random", "--seed", "7"],
    );
    let clicked = runtime().block_on(async {
        let c = webdriver.session().await;
        c.goto(&url).await.unwrap();
        let (_, first) = my_turn(&c, None).await.unwrap();
        assert_eq!(first, "SET?");
        // A move is refused before the placement, with the reason; then the placement by clicks.
        type_reply(&c, "MOV:A,N").await;
        assert!(refusal(&c).await.contains("asked for your placement"));
        for g in ["A", "B", "C", "D"] {
            click(&c, &format!("hs-g-{g}")).await;
        }
        click(&c, "hs-set").await;
        let mut clicked = vec!["SET:ABCD".to_string()];
        let mut answered = None;
        let mut refused_once = false;
        while let Some((n, msg)) = my_turn(&c, answered).await {
            if !msg.starts_with("MOV?") {
                answered = Some(n);
                continue;
            }
            if !refused_once {
                // Onto its own ghost: refused by the page's server with the reason.
                type_reply(&c, "MOV:E,N").await;
                assert!(refusal(&c)
                    .await
                    .contains("cannot move onto your own ghost"));
                refused_once = true;
            }
            let ((x, y), to) = geister_move(&msg);
            click(&c, &format!("hs-sq-{x}-{y}")).await;
            if clicked.len() == 4 {
                snap(&c, "human-geister").await;
            }
            let g = (b'A'
                + msg.as_bytes()[4..]
                    .chunks(3)
                    .position(|p| p[0] == b'0' + x && p[1] == b'0' + y)
                    .unwrap() as u8) as char;
            match to {
                Ok((nx, ny)) => {
                    click(&c, &format!("hs-sq-{nx}-{ny}")).await;
                    let d = match (nx as i8 - x as i8, ny as i8 - y as i8) {
                        (0, -1) => 'N',
                        (0, 1) => 'S',
                        (1, 0) => 'E',
                        _ => 'W',
                    };
                    clicked.push(format!("MOV:{g},{d}"));
                }
                Err(d) => {
                    click(&c, &format!("hs-exit-{d}")).await;
                    clicked.push(format!("MOV:{g},{d}"));
                }
            }
            answered = Some(n);
        }
        let over = text_when(&c, "hs-waiting", |t| t.contains("over"), 10, 50)
            .await
            .unwrap();
        assert!(over.contains("the match is over"), "{over}");
        c.close().await.unwrap();
        clicked
    });
    let (report, replay) = finished(server, dir.path());
    replays(dir.path());
    assert_eq!(replies_of(&replay, 0), clicked);
    assert!(clicked.len() > 2, "{clicked:?}");
    let seats = report["seats"].as_array().unwrap();
    assert_eq!(seats[0]["spec"], "human");
    assert_eq!(seats[0]["errors"], serde_json::json!([]), "{report}");
    assert_eq!(report["scores"].as_array().unwrap().len(), 2, "{report}");
}

#[test]
fn a_person_plays_negotiate_and_conquer_by_clicking_targets() {
    let Some(webdriver) = WebDriver::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--seat",
        "human",
        "--fill",
        "builtin:random",
        "--seed",
        "3",
        "--opt",
        "turn_ms=60000",
        "--opt",
        "ready_ms=60000",
    ];
    let (server, url) = play(dir.path(), "nac", &args);
    let sent = runtime().block_on(async {
        let c = webdriver.session().await;
        c.goto(&url).await.unwrap();
        text_when(&c, "hs-waiting", |t| t.starts_with("Your turn"), 20, 50)
            .await
            .unwrap();
        click(&c, "hs-ready").await;
        let mut sent = vec!["READY".to_string()];
        let mut answered = None;
        while let Some((n, msg)) = my_turn(&c, answered).await {
            let day = msg.lines().any(|l| l.ends_with(" D"));
            if sent.len() == 1 {
                // Out of range: refused with the reason.
                type_reply(&c, "0 1 2 3 6").await;
                assert!(refusal(&c).await.contains("out_of_range"));
            }
            let picks: Vec<usize> = match day {
                true => vec![0, 1, 1, 2, 5],
                false => vec![3, 3],
            };
            for p in &picks {
                click(&c, &format!("hs-t-{p}")).await;
            }
            if sent.len() == 3 {
                snap(&c, "human-nac").await;
            }
            click(&c, "hs-picks-send").await;
            sent.push(
                picks
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" "),
            );
            answered = Some(n);
        }
        c.close().await.unwrap();
        sent
    });
    let (report, replay) = finished(server, dir.path());
    replays(dir.path());
    assert_eq!(sent.len(), 10, "READY and 9 turns: {sent:?}");
    assert_eq!(replies_of(&replay, 0), sent);
    assert_eq!(
        report["seats"][0]["errors"],
        serde_json::json!([]),
        "{report}"
    );
    assert_eq!(report["seats"][0]["spec"], "human");
}

/// What the person does about a request.
enum Act {
    /// Type this into the text box and send it.
    Type(String),
    /// Click the page's first target (the first living agent but oneself).
    Target,
    /// Choose these values in these selects, then click `button`: the reply is `reply`.
    Choose {
        picks: Vec<(String, String)>,
        button: String,
        reply: String,
    },
    /// Type this, see it refused with a reason holding `why`, then do the other.
    Refused(String, String, Box<Act>),
}

/// A person who does `act` about each request: the replies sent, in order, and the requests.
async fn play_by(c: &Client, nlp: bool, act: impl Fn(&str) -> Act) -> (Vec<String>, Vec<String>) {
    let (mut sent, mut asked, mut answered) = (Vec::new(), Vec::new(), None);
    while let Some((n, msg)) = my_turn(c, answered).await {
        asked.push(request(&msg));
        let mut todo = act(&msg);
        if let Act::Refused(text, why, then) = todo {
            type_reply(c, &text).await;
            let said = refusal(c).await;
            assert!(said.contains(&why), "{text}: {said}");
            todo = *then;
        }
        match todo {
            Act::Refused(..) => panic!("one refusal at a time"),
            Act::Choose {
                picks,
                button,
                reply,
            } => {
                for (id, value) in picks {
                    let select = c.find(Locator::Id(&id)).await.unwrap();
                    select.select_by_value(&value).await.unwrap();
                }
                snap(c, &format!("human-{button}")).await;
                click(c, &button).await;
                sent.push(reply);
            }
            Act::Type(text) => {
                type_reply(c, &text).await;
                sent.push(text);
            }
            Act::Target => {
                let first = Locator::Css("#hs-controls button[id^='hs-target-']");
                let b = c.wait().for_element(first).await.unwrap();
                let id = b.attr("id").await.unwrap().unwrap();
                let label = b.text().await.unwrap();
                b.click().await.unwrap();
                sent.push(match nlp {
                    true => label,
                    false => format!("{{\"agentIdx\":{}}}", &id["hs-target-".len()..]),
                });
            }
        }
        answered = Some(n);
    }
    (sent, asked)
}

/// The request of a JSON packet (`request`, or Diplomacy's `type`).
fn request(msg: &str) -> String {
    let v: Value = serde_json::from_str(msg).unwrap_or_else(|e| panic!("{e}: {msg}"));
    v["request"]
        .as_str()
        .or(v["type"].as_str())
        .unwrap()
        .to_string()
}

/// Werewolf and its natural-language division: the name, `Over` for talk, the first target.
fn villager(msg: &str) -> Act {
    match request(msg).as_str() {
        "NAME" => Act::Type("person".into()),
        "TALK" | "WHISPER" => Act::Type("Over".into()),
        "ROLE" => Act::Type("none".into()),
        _ => Act::Target,
    }
}

/// What a match played by a person left: the replies sent, the requests, the report and the
/// replay.
struct Played {
    sent: Vec<String>,
    asked: Vec<String>,
    report: Value,
    replay: Vec<Value>,
}

/// A whole match of `game` (`kakehiki play` with `args`) played in the browser by a person who
/// does `act` about each request (`nlp`: a target is a name): what it left, once its replay was
/// re-run and the person's seat found without errors; `None` where there is no browser.
fn played_by(game: &str, args: &[&str], nlp: bool, act: impl Fn(&str) -> Act) -> Option<Played> {
    let webdriver = WebDriver::start()?;
    let dir = tempfile::tempdir().unwrap();
    let (server, url) = play(dir.path(), game, args);
    let (sent, asked) = runtime().block_on(async {
        let c = webdriver.session().await;
        c.goto(&url).await.unwrap();
        let r = play_by(&c, nlp, act).await;
        c.close().await.unwrap();
        r
    });
    let (report, replay) = finished(server, dir.path());
    replays(dir.path());
    eprintln!("{asked:?}\n{sent:?}\n{report}");
    assert_eq!(
        report["seats"][0]["errors"],
        serde_json::json!([]),
        "{report}"
    );
    Some(Played {
        sent,
        asked,
        report,
        replay,
    })
}

#[test]
fn a_person_plays_werewolf_through_the_text_box() {
    let args = [
        "--seat",
        "human",
        "--fill",
        "builtin:sample",
        "--players",
        "5",
        "--seed",
        "11",
        "--opt",
        "time_limit_ms=60000",
        "--opt",
        "name_timeout_ms=60000",
    ];
    let Some(p) = played_by("werewolf", &args, false, villager) else {
        return;
    };
    // NAME is asked on connecting, outside the seat record.
    assert_eq!(p.asked[0], "NAME");
    assert_eq!(replies_of(&p.replay, 0), p.sent[1..]);
}

#[test]
fn a_person_plays_werewolf_nlp_through_the_text_box() {
    let args = [
        "--seat",
        "human",
        "--fill",
        "builtin:sample",
        "--players",
        "5",
        "--seed",
        "11",
        "--opt",
        "action_ms=60000",
        "--opt",
        "response_ms=60000",
        "--opt",
        "port=0",
    ];
    let Some(p) = played_by("werewolf-nlp", &args, true, villager) else {
        return;
    };
    assert_eq!(p.asked[0], "NAME");
    assert_eq!(replies_of(&p.replay, 0), p.sent);
}

#[test]
fn a_person_plays_diplomacy_by_choosing_the_offered_orders() {
    let args = [
        "--seat",
        "human",
        "--fill",
        "builtin:random",
        "--seed",
        "2",
        "--opt",
        "max_year=1902",
        "--opt",
        "start_ms=60000",
        "--opt",
        "movement_ms=60000",
        "--opt",
        "retreat_ms=60000",
        "--opt",
        "adjustment_ms=60000",
    ];
    // Austria: an Italian unit's order refused, then from the offered orders its army in
    // Vienna to Galicia supported from Budapest (the fleet holds); later orders typed.
    let act = |msg: &str| match request(msg).as_str() {
        "start" => Act::Type(r#"{"ready":true}"#.into()),
        _ if serde_json::from_str::<Value>(msg).unwrap()["phase"] == "S1901M" => Act::Refused(
            r#"{"orders":["A ROM - VEN"]}"#.into(),
            "orders none of your units".into(),
            Box::new(Act::Choose {
                picks: vec![
                    ("hs-dip-0".into(), "A BUD S A VIE - GAL".into()),
                    ("hs-dip-1".into(), "A VIE - GAL".into()),
                ],
                button: "hs-dip-send".into(),
                reply: r#"{"orders":["A BUD S A VIE - GAL","A VIE - GAL","F TRI H"]}"#.into(),
            }),
        ),
        _ => Act::Type(r#"{"orders":[]}"#.into()),
    };
    let Some(p) = played_by("diplomacy", &args, false, act) else {
        return;
    };
    assert_eq!(p.asked[0], "start");
    assert_eq!(replies_of(&p.replay, 0), p.sent);
    let gal = p
        .replay
        .iter()
        .any(|e| e["event"] == "phase" && e.to_string().contains("A VIE - GAL"));
    assert!(gal, "the person's order is adjudicated: {}", p.report);
}
