//! DAIDE seats of Diplomacy, against DAIDE clients written here (over loopback): the framing and
//! every level-0 message, clients that break the protocol, games mixing DAIDE, JSON-lines and
//! built-in seats, hidden information, and replays that re-run byte for byte.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use kakehiki_core::{SeatErrorKind, SeatSpec};
use kakehiki_diplomacy::daide::message::DSeason;
use kakehiki_diplomacy::daide::token::{from_text, to_text};
use kakehiki_diplomacy::daide::{DOrder, Frame, Message};
use kakehiki_diplomacy::Power;
use kakehiki_referee::verify::verify_replay;
use kakehiki_referee::{find_game, MatchRecord, MatchSpec};
use serde_json::Value;

use crate::support::Listening;

/// One DAIDE client connection (blocking, loopback only).
struct Client {
    s: TcpStream,
    /// Every diplomacy message received, as text.
    got: Vec<String>,
}

impl Client {
    fn connect(port: Listening) -> Client {
        let port = port.port();
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            match TcpStream::connect(("127.0.0.1", port)) {
                Ok(s) => {
                    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
                    return Client { s, got: Vec::new() };
                }
                Err(_) if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
                Err(e) => panic!("cannot connect: {e}"),
            }
        }
    }

    fn raw(&mut self, b: &[u8]) {
        let _ = self.s.write_all(b);
    }

    fn send(&mut self, text: &str) {
        let t = from_text(text).unwrap();
        let f = Frame::Dm(kakehiki_diplomacy::daide::token::to_bytes(&t));
        self.raw(&f.encode().unwrap());
    }

    /// The next frame; `None` at EOF.
    fn frame(&mut self) -> Option<Frame> {
        let mut h = [0u8; 4];
        self.s.read_exact(&mut h).ok()?;
        let n = u16::from_be_bytes([h[2], h[3]]) as usize;
        let mut body = vec![0u8; n];
        self.s.read_exact(&mut body).ok()?;
        Frame::decode(&[h.to_vec(), body].concat()).ok()
    }

    /// The next diplomacy message, as text and typed.
    fn next(&mut self) -> Option<(String, Message)> {
        loop {
            match self.frame()? {
                Frame::Dm(b) => {
                    let t = kakehiki_diplomacy::daide::token::from_bytes(&b).unwrap();
                    let text = to_text(&t);
                    self.got.push(text.clone());
                    return Some((text, Message::parse(&t).unwrap()));
                }
                Frame::Em(c) => {
                    self.got.push(format!("EM {c}"));
                    return None;
                }
                _ => {}
            }
        }
    }

    /// Read until a message whose text starts with `prefix`.
    fn until(&mut self, prefix: &str) -> String {
        loop {
            let (t, _) = self
                .next()
                .unwrap_or_else(|| panic!("EOF waiting for {prefix}: {:?}", self.got));
            if t.starts_with(prefix) {
                return t;
            }
        }
    }

    fn handshake(&mut self, name: &str) {
        self.raw(&Frame::initial().encode().unwrap());
        assert_eq!(self.frame(), Some(Frame::Rm(Vec::new())));
        self.send(&format!("NME ('{name}') ('1.0')"));
        assert_eq!(
            self.next().unwrap().0,
            format!("YES ( NME ( '{name}' ) ( '1.0' ) )")
        );
        assert_eq!(self.next().unwrap().0, "MAP ( 'STANDARD' )");
        self.send("MDF");
        let (_, mdf) = self.next().unwrap();
        assert!(
            matches!(mdf, Message::Mdf(Some(ref m)) if m.adjacencies.len() == 75),
            "{mdf:?}"
        );
        self.send("YES (MAP ('STANDARD'))");
    }
}

/// The orders a plain client gives for a `NOW`: hold, disband, waive or remove.
fn plain_orders(me: Power, now: &Message, sco: &Option<Message>) -> Vec<String> {
    let Message::Now(Some((turn, units))) = now else {
        return Vec::new();
    };
    let mine = units.iter().filter(|u| u.unit.power == me);
    let unit = |u: &kakehiki_diplomacy::daide::DUnit| {
        to_text(&Message::Sub(None, vec![DOrder::Hld(*u)]).to_tokens())
            .trim_start_matches("SUB ( ")
            .trim_end_matches(" HLD )")
            .to_string()
    };
    match turn.season {
        DSeason::Spr | DSeason::Fal => mine
            .filter(|u| u.retreat.is_none())
            .map(|u| format!("({} HLD)", unit(&u.unit)))
            .collect(),
        DSeason::Sum | DSeason::Aut => mine
            .filter(|u| u.retreat.is_some())
            .map(|u| format!("({} DSB)", unit(&u.unit)))
            .collect(),
        DSeason::Win => {
            let centres = match sco {
                Some(Message::Sco(Some(list))) => list
                    .iter()
                    .find(|(p, _)| *p == Some(me))
                    .map_or(0, |(_, v)| v.len()),
                _ => 0,
            };
            let units: Vec<_> = mine.collect();
            if units.len() > centres {
                units[..units.len() - centres]
                    .iter()
                    .map(|u| format!("({} REM)", unit(&u.unit)))
                    .collect()
            } else {
                (0..centres - units.len())
                    .map(|_| format!("({} WVE)", power_name(me)))
                    .collect()
            }
        }
    }
}

fn power_name(p: Power) -> &'static str {
    ["AUS", "ENG", "FRA", "GER", "ITA", "RUS", "TUR"][p.index()]
}

/// A client that plays plain orders until `OFF` (`silent`: never orders), checking the level-0
/// conversation on its first movement phase when `probe`. Returns everything it received.
/// `connected` is told once the connection is made (before the handshake, which waits for
/// every seat to connect).
fn player(
    port: Listening,
    name: &'static str,
    probe: bool,
    silent: bool,
    connected: Option<std::sync::mpsc::Sender<()>>,
) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut c = Client::connect(port);
        if let Some(tx) = connected {
            let _ = tx.send(());
        }
        c.handshake(name);
        let hlo = c.until("HLO");
        let me = match Message::parse(&from_text(&hlo).unwrap()).unwrap() {
            Message::Hlo(Some(h)) => h.power,
            m => panic!("{m:?}"),
        };
        assert!(hlo.contains("( LVL 0 )") && hlo.contains("MTL"), "{hlo}");
        let mut sco = None;
        let mut probed = !probe;
        loop {
            let Some((text, m)) = c.next() else {
                panic!(
                    "EOF before OFF: {:?}",
                    c.got.iter().rev().take(5).collect::<Vec<_>>()
                );
            };
            match &m {
                Message::Off => return c.got,
                Message::Sco(Some(_)) => sco = Some(m.clone()),
                Message::Now(Some(_)) if !silent => {
                    let orders = plain_orders(me, &m, &sco);
                    if !probed && text.starts_with("NOW ( SPR 1901 )") {
                        probed = true;
                        probe_level0(&mut c, me, &orders);
                    }
                    if !orders.is_empty() {
                        c.send(&format!("SUB {}", orders.join(" ")));
                    }
                }
                _ => {}
            }
        }
    })
}

/// Every level-0 request and refusal on the first movement phase (orders not yet given).
fn probe_level0(c: &mut Client, me: Power, orders: &[String]) {
    let other = power_name(Power((me.0 + 1) % 7));
    // MIS lists every unit without an order.
    c.send("MIS");
    let (mis, _) = c.next().unwrap();
    assert!(
        mis.starts_with("MIS ( ") && mis.matches(power_name(me)).count() == orders.len(),
        "{mis}"
    );
    // TME: the seconds left of this phase.
    c.send("TME");
    let (tme, m) = c.next().unwrap();
    assert!(
        matches!(m, Message::Tme(Some(s)) if (1..=10).contains(&s)),
        "{tme}"
    );
    // HLO, NOW and SCO again on request; HST of a turn not played.
    c.send("HLO");
    assert!(c.next().unwrap().0.starts_with("HLO"));
    c.send("NOW");
    assert!(c.next().unwrap().0.starts_with("NOW ( SPR 1901 )"));
    c.send("SCO");
    assert!(c.next().unwrap().0.starts_with("SCO"));
    c.send("HST (SPR 1901)");
    assert_eq!(c.next().unwrap().0, "REJ ( HST ( SPR 1901 ) )");
    // Orders for another power's unit, a unit that is not there, a move that is not adjacent,
    // the wrong season: each refused with its note.
    let foreign = match other {
        "ENG" => "((ENG FLT LON) HLD)",
        _ => "((FRA AMY PAR) HLD)",
    };
    c.send(&format!("SUB {foreign}"));
    assert!(c.until("THX").ends_with("( NYU )"));
    c.send(&format!("SUB (({} AMY BOH) HLD)", power_name(me)));
    assert!(c.until("THX").ends_with("( NSU )"));
    let (first, rest) = orders.split_first().unwrap();
    let far = first.replace("HLD", "MTO NAF");
    c.send(&format!("SUB {far}"));
    let thx = c.until("THX");
    assert!(thx.ends_with("( FAR )"), "{thx}");
    c.send(&format!("SUB {}", first.replace("HLD", "DSB")));
    assert!(c.until("THX").ends_with("( NRS )"));
    // One good order: THX MBV, then MIS for the rest (MIS only when some are missing).
    // (Each refused order was followed by MIS: every unit still lacks an order.)
    c.send(&format!("SUB {first}"));
    let thx = c.until("THX");
    assert!(thx.ends_with("( MBV )"), "{first}: {thx}");
    if !rest.is_empty() {
        assert!(c.next().unwrap().0.starts_with("MIS ( "));
    }
    // A token out of place: HUH with ERR before it. Unbalanced brackets: PRN.
    c.send("SUB ((AUS AMY VIE) HLD HLD)");
    assert!(c
        .next()
        .unwrap()
        .0
        .starts_with("HUH ( SUB ( ( AUS AMY VIE ) HLD ERR HLD"));
    c.send("SUB ((AUS AMY VIE) HLD");
    assert!(c.next().unwrap().0.starts_with("PRN ( SUB"));
    // What a client may not send: a server's message is HUH, a second NME, OBS, IAM, press,
    // a TME alarm and a partial draw are refused.
    c.send("OFF");
    assert_eq!(c.next().unwrap().0, "HUH ( ERR OFF )");
    for m in [
        "NME ('again') ('2')",
        "OBS",
        "IAM (AUS) (1234)",
        "SND (ENG) (PRP (PCE (AUS ENG)))",
        "TME (30)",
        "DRW (AUS ENG)",
        "DRW",
    ] {
        c.send(m);
        let (r, _) = c.next().unwrap();
        assert!(r.starts_with("REJ ( "), "{m}: {r}");
    }
    // The go flag: NOT (GOF) holds the turn open, GOF releases it.
    c.send("NOT (GOF)");
    assert_eq!(c.next().unwrap().0, "YES ( NOT ( GOF ) )");
    c.send("GOF");
    assert_eq!(c.next().unwrap().0, "YES ( GOF )");
    if !rest.is_empty() {
        assert!(c.next().unwrap().0.starts_with("MIS"));
    }
    // NOT (SUB) withdraws every order; the full set is sent by the caller.
    c.send("NOT (SUB)");
    assert_eq!(c.next().unwrap().0, "YES ( NOT ( SUB ) )");
}

fn json_bot(mode: &str) -> SeatSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/diplomacy_bots/bot.py");
    SeatSpec::Cmd(vec![
        "python3".into(),
        path.display().to_string(),
        mode.into(),
    ])
}

fn builtin(name: &str) -> SeatSpec {
    SeatSpec::Builtin(name.into())
}

fn play(seats: Vec<SeatSpec>, opts: &[(&str, String)], port: Listening) -> MatchRecord {
    let mut spec = MatchSpec::new("diplomacy", 7, seats);
    spec.on_listen = port.notice();
    for (k, v) in opts {
        spec.options.insert(k.to_string(), v.clone());
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(find_game("diplomacy").unwrap().play(&spec))
        .expect("match runs")
}

/// A match of `seats` from `seed` with [`opts`] (to `max_year`), played in-process: no port.
fn match_spec(seed: u64, seats: Vec<SeatSpec>, max_year: u16) -> MatchSpec {
    let mut spec = MatchSpec::new("diplomacy", seed, seats);
    for (k, v) in opts(max_year) {
        if k != "port" {
            spec.options.insert(k.to_string(), v);
        }
    }
    spec
}

fn opts(max_year: u16) -> Vec<(&'static str, String)> {
    vec![
        ("port", "0".into()),
        ("max_year", max_year.to_string()),
        ("start_ms", "8000".into()),
        ("movement_ms", "3000".into()),
        ("retreat_ms", "2000".into()),
        ("adjustment_ms", "2000".into()),
        ("press_ms", "1000".into()),
        ("connect_ms", "20000".into()),
    ]
}

fn events(rec: &MatchRecord) -> Vec<Value> {
    rec.replay
        .lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn daide_json_and_builtin_seats_play_one_game_and_it_replays() {
    let port = Listening::new();
    let seats = vec![
        SeatSpec::Daide(None),
        json_bot("press"),
        builtin("random"),
        SeatSpec::Daide(None),
        builtin("strong"),
        json_bot("hold"),
        builtin("hold"),
    ];
    // The second client connects once the first has (seats are taken in connection order).
    let (tx, rx) = std::sync::mpsc::channel();
    let a = player(port, "ProbeBot", true, false, Some(tx));
    let b = std::thread::spawn(move || {
        rx.recv().unwrap();
        player(port, "PlainBot", false, false, None).join().unwrap()
    });
    // Press rounds for the JSON seats, but DAIDE press level 0: the DAIDE seats take no part.
    let mut o = opts(1902);
    o.push(("press_rounds", "1".into()));
    o.push(("daide_level", "0".into()));
    let rec = play(seats, &o, port);
    let got_a = a.join().unwrap();
    let got_b = b.join().unwrap();
    let r = &rec.report;
    for i in [0, 3] {
        assert!(
            r.seats[i].errors.is_empty(),
            "seat {i}: {:?}",
            r.seats[i].errors
        );
    }
    for got in [&got_a, &got_b] {
        // Results for every unit of every power after each phase (22 in Spring 1901), SCO
        // after the Fall, a summary and OFF at the end.
        let ord = got
            .iter()
            .filter(|m| m.starts_with("ORD ( SPR 1901 )"))
            .count();
        assert_eq!(ord, 22, "{got:?}");
        assert!(got.iter().any(|m| m.starts_with("ORD ( FAL 1902 )")));
        assert!(got.iter().filter(|m| m.starts_with("SCO")).count() >= 3);
        let n = got.len();
        assert_eq!(got[n - 1], "OFF");
        assert!(
            got[n - 2].starts_with("SMR ( FAL 1902 )")
                || got[n - 2].starts_with("SMR ( AUT 1902 )"),
            "{}",
            got[n - 2]
        );
        assert!(
            got[n - 2].contains("( AUS ( 'ProbeBot' ) ( '1.0' )"),
            "{}",
            got[n - 2]
        );
        assert!(
            got[n - 3] == "DRW" || got[n - 3].starts_with("SLO"),
            "{}",
            got[n - 3]
        );
        // Hidden information: press is never forwarded at level 0 (the JSON bot sent press to
        // every power), and another power's orders arrive only with the results, after the
        // turn: between a NOW and the results of its turn only answers to the client's own
        // messages arrive, and every THX is for the client's own order or a refusal.
        assert!(
            !got.iter()
                .any(|m| m.starts_with("FRM") || m.contains("PRESS")),
            "{got:?}"
        );
        let mut turn: Option<String> = None;
        for m in got {
            if let Some(rest) = m.strip_prefix("NOW ( ") {
                turn = Some(rest[..8].to_string());
            } else if let Some(rest) = m.strip_prefix("ORD ( ") {
                assert_eq!(
                    Some(rest[..8].to_string()),
                    turn,
                    "results of the turn last shown: {m}"
                );
            } else if turn.is_some() {
                let ok = [
                    "THX", "MIS", "TME", "YES", "REJ", "HUH", "PRN", "HLO", "SCO", "CCD", "DRW",
                    "SLO", "SMR", "OFF", "NOW",
                ];
                assert!(ok.iter().any(|k| m.starts_with(k)), "{m}");
            }
        }
    }
    // The DAIDE traffic is in the replay, readable both ways.
    let ev = events(&rec);
    let daide: Vec<&Value> = ev.iter().filter(|e| e["event"] == "daide").collect();
    assert!(daide
        .iter()
        .any(|e| e["lines"].as_array().unwrap().iter().any(|l| l
            .as_str()
            .unwrap()
            .starts_with("< ")
            && l.as_str().unwrap().contains("NME ( 'ProbeBot' )"))));
    assert!(daide.iter().any(|e| e["lines"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l.as_str().unwrap().contains("> 0 HLO ( AUS )"))));
    // What the client received is exactly what the replay says was sent to it.
    let sent_a: Vec<String> = daide
        .iter()
        .filter(|e| e["seat"] == 0)
        .flat_map(|e| e["lines"].as_array().unwrap().iter())
        .filter_map(|l| l.as_str().unwrap().strip_prefix("> "))
        .filter_map(|l| l.split_once(' ').map(|(_, t)| t.to_string()))
        .filter(|t| !t.starts_with("RM "))
        .collect();
    assert_eq!(sent_a, got_a);
    verify_replay(&rec.replay.to_text()).expect("replay with DAIDE seats verifies");
}

#[test]
fn a_daide_client_that_misses_deadlines_holds_and_stays_in_the_game() {
    let port = Listening::new();
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("random")).collect();
    seats[2] = SeatSpec::Daide(None);
    seats[4] = json_bot("crash");
    let c = player(port, "Sleepy", false, true, None);
    let mut o = opts(1901);
    o.retain(|(k, _)| *k != "movement_ms");
    o.push(("movement_ms", "700".into()));
    let rec = play(seats, &o, port);
    let got = c.join().unwrap();
    assert_eq!(
        got.last().map(String::as_str),
        Some("OFF"),
        "the client was kept to the end"
    );
    // Italy's bot crashed: its power is in civil disorder, and the DAIDE seat is told once.
    assert_eq!(
        got.iter().filter(|m| *m == "CCD ( ITA )").count(),
        1,
        "{got:?}"
    );
    let e = &rec.report.seats[2].errors;
    assert!(
        !e.is_empty() && e.iter().all(|e| e.kind == SeatErrorKind::Timeout),
        "{e:?}"
    );
    // Its units held.
    assert!(
        got.contains(&"ORD ( SPR 1901 ) ( ( FRA AMY PAR ) HLD ) ( SUC )".to_string())
            || got
                .iter()
                .any(|m| m.starts_with("ORD ( SPR 1901 ) ( ( FRA AMY PAR ) HLD )")),
        "{got:?}"
    );
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

/// A game whose seat 0 is a DAIDE client doing `f`; the others hold.
fn broken(f: impl FnOnce(&mut Client) + Send + 'static) -> (MatchRecord, Vec<String>) {
    let port = Listening::new();
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[0] = SeatSpec::Daide(None);
    let t = std::thread::spawn(move || {
        let mut c = Client::connect(port);
        f(&mut c);
        // Then read until the referee closes.
        while c.next().is_some() {}
        c.got
    });
    let mut o = opts(1901);
    o.retain(|(k, _)| *k != "start_ms");
    o.push(("start_ms", "1500".into()));
    let started = Instant::now();
    let rec = play(seats, &o, port);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the game did not hang"
    );
    let got = t.join().unwrap();
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
    (rec, got)
}

fn em_of(got: &[String]) -> Option<&str> {
    got.iter()
        .find(|m| m.starts_with("EM "))
        .map(String::as_str)
}

#[test]
fn wrong_magic_is_refused_with_em_4() {
    let (rec, got) = broken(|c| c.raw(&[0, 0, 0, 4, 0, 1, 0x12, 0x34]));
    assert_eq!(em_of(&got), Some("EM 4"));
    let e = &rec.report.seats[0].errors;
    assert_eq!(e[0].kind, SeatErrorKind::NotReady, "{e:?}");
    assert!(e[0].detail.contains("magic"), "{e:?}");
}

#[test]
fn a_pad_byte_is_ignored_and_a_byte_swapped_magic_is_em_3() {
    let (_, got) = broken(|c| {
        c.raw(&[0, 0x77, 0, 4, 0, 1, 0xDA, 0x10]);
        assert_eq!(c.frame(), Some(Frame::Rm(Vec::new())));
        c.raw(&[0, 0, 0, 4, 0, 1, 0x10, 0xDA]);
    });
    assert_eq!(em_of(&got), Some("EM 6"), "a second IM");
    let (_, got) = broken(|c| c.raw(&[0, 0, 0, 4, 0, 1, 0x10, 0xDA]));
    assert_eq!(em_of(&got), Some("EM 3"));
}

#[test]
fn malformed_frames_are_refused_with_their_error_codes() {
    // A DM before the IM.
    let (_, got) = broken(|c| c.send("NME ('x') ('y')"));
    assert_eq!(em_of(&got), Some("EM 2"));
    // An unknown message type.
    let (_, got) = broken(|c| {
        c.raw(&Frame::initial().encode().unwrap());
        c.raw(&[7, 0, 0, 0]);
    });
    assert_eq!(em_of(&got), Some("EM 8"));
    // A DM holding no token of the game.
    let (rec, got) = broken(|c| {
        c.raw(&Frame::initial().encode().unwrap());
        c.raw(&[2, 0, 0, 2, 0x4F, 0x4F]);
    });
    assert_eq!(em_of(&got), Some("EM 14"));
    assert_eq!(rec.report.seats[0].errors[0].kind, SeatErrorKind::NotReady);
    // An RM from the client; an odd-length DM.
    let (_, got) = broken(|c| {
        c.raw(&Frame::initial().encode().unwrap());
        c.raw(&[1, 0, 0, 0]);
    });
    assert_eq!(em_of(&got), Some("EM 13"));
    let (_, got) = broken(|c| {
        c.raw(&Frame::initial().encode().unwrap());
        c.raw(&[2, 0, 0, 3, 0x48, 0x0C, 0]);
    });
    assert_eq!(em_of(&got), Some("EM 9"));
}

#[test]
fn a_client_that_never_sends_nme_does_not_hold_the_game() {
    let (rec, got) = broken(|c| {
        c.raw(&Frame::initial().encode().unwrap());
        std::thread::sleep(Duration::from_secs(3));
    });
    assert!(em_of(&got).is_none());
    let e = &rec.report.seats[0].errors;
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].kind, SeatErrorKind::NotReady);
    assert!(e[0].detail.contains("1500 ms"), "{e:?}");
    assert!(rec.report.extra["end"].is_string());
}

#[test]
fn a_mebibyte_message_is_refused_without_holding_it() {
    let (rec, got) = broken(|c| {
        c.handshake("Big");
        // A DM announcing the largest length the header can say, then a mebibyte.
        let mut m = vec![2u8, 0, 0xFF, 0xFF];
        m.extend(std::iter::repeat_n(0xFFu8, 1 << 20));
        c.raw(&m);
    });
    assert_eq!(em_of(&got), Some("EM 9"), "a DM of odd length");
    let e = &rec.report.seats[0].errors;
    assert!(
        e.iter().any(|e| e.kind == SeatErrorKind::InvalidReply),
        "{e:?}"
    );
    // The seat record holds the one frame read (64 KiB), not the mebibyte.
    assert!(rec.replay.to_text().len() < 400_000);
}

#[test]
fn daide_seats_are_for_diplomacy_only() {
    let spec = MatchSpec::new("geister", 1, vec![SeatSpec::Daide(None), builtin("random")]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let err = rt
        .block_on(find_game("geister").unwrap().play(&spec))
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("DAIDE seats exist for diplomacy only"),
        "{err}"
    );
}

fn daide_cmd(name: &str) -> SeatSpec {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/diplomacy_bots/daide_bot.py");
    SeatSpec::Daide(Some(vec![
        "python3".into(),
        path.display().to_string(),
        "{host}".into(),
        "{port}".into(),
        name.into(),
    ]))
}

/// A `daide-cmd:` client that writes to stderr and exits before connecting: its first request
/// carries what it wrote, and the replay verifies.
#[test]
fn a_daide_cmd_clients_stderr_goes_with_its_request() {
    let seats = vec![
        SeatSpec::Daide(Some(vec![
            "sh".into(),
            "-c".into(),
            "echo no DAIDE server at $0:$1 >&2; exit 2".into(),
            "{host}".into(),
            "{port}".into(),
        ])),
        builtin("random"),
        builtin("random"),
        builtin("random"),
        builtin("random"),
        builtin("random"),
        builtin("random"),
    ];
    let spec = match_spec(3, seats, 1901);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rec = rt
        .block_on(find_game("diplomacy").unwrap().play(&spec))
        .expect("match runs");
    assert_eq!(rec.report.seats[0].extra["exit"], "exit code 2");
    let text = rec.replay.to_text();
    let parsed = kakehiki_core::replay::ReplayLog::parse(&text).unwrap();
    let record = kakehiki_core::exchange::SeatRecord::of(&parsed).unwrap();
    let with: Vec<_> = record
        .of_seat(0)
        .filter_map(|e| e.stderr.as_deref())
        .collect();
    assert_eq!(with.len(), 1, "{text}");
    assert!(
        with[0].starts_with("no DAIDE server at 127.0.0.1:"),
        "{text}"
    );
    let began = record.stderr_began(0).unwrap();
    assert_eq!(began.at, record.of_seat(0).next().unwrap().at, "{began:?}");
    verify_replay(&text).expect("replay verifies");
}

#[test]
fn confined_daide_cmd_clients_play_a_full_game_and_exit_on_off() {
    let seats = vec![
        json_bot("hold"),
        daide_cmd("PyBotE"),
        builtin("strong"),
        builtin("random"),
        builtin("random"),
        daide_cmd("PyBotR"),
        builtin("random"),
    ];
    let spec = match_spec(11, seats, 1903);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rec = rt
        .block_on(find_game("diplomacy").unwrap().play(&spec))
        .expect("match runs");
    let r = &rec.report;
    for i in [1, 5] {
        assert!(
            r.seats[i].errors.is_empty(),
            "seat {i}: {:?}",
            r.seats[i].errors
        );
        assert_eq!(
            r.seats[i].extra["exit"], "exit code 0",
            "seat {i}: {:?}",
            r.seats[i].extra
        );
    }
    let ev = events(&rec);
    let lines: Vec<String> = ev
        .iter()
        .filter(|e| e["event"] == "daide" && e["seat"] == 1)
        .flat_map(|e| {
            e["lines"]
                .as_array()
                .unwrap()
                .iter()
                .map(|l| l.as_str().unwrap().to_string())
        })
        .collect();
    // The client asked MIS in winter and waived or removed as it said; it heard the summary.
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("< ") && l.ends_with(" MIS")),
        "{lines:?}"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("> ") && l.contains("SMR ( ") && l.contains("'PyBotR'")));
    assert!(lines.last().unwrap().ends_with(" OFF"));
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

#[test]
fn a_draw_voted_by_daide_and_json_seats_ends_the_game_with_drw() {
    let port = Listening::new();
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| json_bot("draw")).collect();
    seats[6] = SeatSpec::Daide(None);
    let t = std::thread::spawn(move || {
        let mut c = Client::connect(port);
        c.handshake("Peace");
        let mut sco = None;
        while let Some((_, m)) = c.next() {
            match &m {
                Message::Sco(Some(_)) => sco = Some(m.clone()),
                Message::Now(Some(_)) => {
                    c.send("DRW");
                    assert_eq!(c.next().unwrap().0, "YES ( DRW )");
                    c.send("NOT (DRW)");
                    assert_eq!(c.next().unwrap().0, "YES ( NOT ( DRW ) )");
                    c.send("DRW");
                    assert_eq!(c.next().unwrap().0, "YES ( DRW )");
                    let orders = plain_orders(Power(6), &m, &sco);
                    c.send(&format!("SUB {}", orders.join(" ")));
                }
                Message::Off => break,
                _ => {}
            }
        }
        c.got
    });
    let mut o = opts(1905);
    o.push(("draw_votes", "true".into()));
    let rec = play(seats, &o, port);
    let got = t.join().unwrap();
    assert_eq!(rec.report.extra["end"], "draw", "{:?}", rec.report.extra);
    let n = got.len();
    assert_eq!(got[n - 1], "OFF");
    assert_eq!(got[n - 3], "DRW");
    assert!(got[n - 2].starts_with("SMR ( "), "{}", got[n - 2]);
    assert!(
        !got.iter().any(|m| m.starts_with("ORD")),
        "drawn before any adjudication"
    );
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}

/// A client of a press game (level 10) that holds. The proposer (Austria) sends its press as
/// the first movement phase begins (its first press round) and checks each answer, then waits
/// for England's acceptance (which comes with the orders request, after the press rounds) and
/// checks that press outside a round is refused. The acceptor (England) answers every
/// proposal it receives with `YES`.
fn press_player(
    port: Listening,
    proposer: bool,
    connected: Option<std::sync::mpsc::Sender<()>>,
) -> JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut c = Client::connect(port);
        if let Some(tx) = connected {
            let _ = tx.send(());
        }
        c.handshake(if proposer { "Proposer" } else { "Acceptor" });
        let hlo = c.until("HLO");
        assert!(hlo.contains("( LVL 10 )"), "{hlo}");
        let me = if proposer { Power(0) } else { Power(1) };
        let (mut sco, mut held) = (None, None);
        loop {
            let Some((text, m)) = c.next() else {
                panic!("EOF before OFF: {:?}", c.got);
            };
            match &m {
                Message::Off => return c.got,
                Message::Sco(Some(_)) => sco = Some(m.clone()),
                Message::Now(Some(_)) => {
                    let orders = plain_orders(me, &m, &sco);
                    let sub = format!("SUB {}", orders.join(" "));
                    if proposer && text.starts_with("NOW ( SPR 1901 )") {
                        propose(&mut c);
                        held = Some(sub);
                    } else if !orders.is_empty() {
                        c.send(&sub);
                    }
                }
                Message::Frm(from, _, press) if !proposer => {
                    if matches!(press, kakehiki_diplomacy::daide::Press::Prp(_)) {
                        let to = power_name(*from);
                        c.send(&format!("SND ({to}) (YES ({}))", press.to_text()));
                    }
                }
                Message::Frm(Power(1), _, _) if held.is_some() => {
                    // The acceptance came with the orders request: the press rounds are over.
                    c.send("SND (ENG) (PRP (DRW))");
                    assert_eq!(c.until("REJ"), "REJ ( SND ( ENG ) ( PRP ( DRW ) ) )");
                    c.send(&held.take().unwrap());
                }
                _ => {}
            }
        }
    })
}

/// Austria's press in its first press round, and the answer to each.
fn propose(c: &mut Client) {
    for (snd, answer) in [
        (
            "SND (ENG) (PRP (PCE (AUS ENG)))",
            "YES ( SND ( ENG ) ( PRP ( PCE ( AUS ENG ) ) ) )",
        ),
        (
            "SND (FRA) (PRP (ALY (AUS FRA) VSS (TUR)))",
            "YES ( SND ( FRA ) ( PRP ( ALY ( AUS FRA ) VSS ( TUR ) ) ) )",
        ),
        (
            "SND (SPR 1901) (GER ENG) (PRP (PCE (AUS ENG GER)))",
            "YES ( SND ( SPR 1901 ) ( GER ENG ) ( PRP ( PCE ( AUS ENG GER ) ) ) )",
        ),
        // To oneself: refused. A level-20 token in a level-10 game: not understood.
        (
            "SND (AUS) (PRP (DRW))",
            "REJ ( SND ( AUS ) ( PRP ( DRW ) ) )",
        ),
        (
            "SND (ENG) (PRP (XDO ((AUS AMY VIE) HLD)))",
            "HUH ( SND ( ENG ) ( PRP ( ERR XDO ( ( AUS AMY VIE ) HLD ) ) ) )",
        ),
    ] {
        c.send(snd);
        assert_eq!(c.next().unwrap().0, answer, "{snd}");
    }
}

/// The JSON-lines message sent to `power` in press round `round` of `phase`.
fn press_sent(ev: &[Value], phase: &str, round: u64, power: &str) -> Value {
    let e = ev
        .iter()
        .find(|e| e["event"] == "press" && e["phase"] == phase && e["round"] == round)
        .unwrap_or_else(|| panic!("no press round {round} of {phase}"));
    serde_json::from_str(e["sent"][power].as_str().unwrap()).unwrap()
}

#[test]
fn daide_and_json_seats_exchange_press_privately_and_it_replays() {
    let port = Listening::new();
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[0] = SeatSpec::Daide(None);
    seats[1] = SeatSpec::Daide(None);
    seats[2] = json_bot("daide-press");
    let (tx, rx) = std::sync::mpsc::channel();
    let a = press_player(port, true, Some(tx));
    let b = std::thread::spawn(move || {
        rx.recv().unwrap();
        press_player(port, false, None).join().unwrap()
    });
    let mut o = opts(1901);
    o.retain(|(k, _)| *k != "press_ms");
    o.push(("press_ms", "2000".into()));
    o.push(("press_rounds", "2".into()));
    let rec = play(seats, &o, port);
    let got_a = a.join().unwrap();
    let got_b = b.join().unwrap();
    let r = &rec.report;
    for i in [0, 1] {
        assert!(
            r.seats[i].errors.is_empty(),
            "seat {i}: {:?}",
            r.seats[i].errors
        );
    }
    // England accepted in its second round; France's DAIDE press arrived in Austria's.
    for frm in [
        "FRM ( ENG ) ( AUS ) ( YES ( PRP ( PCE ( AUS ENG ) ) ) )",
        "FRM ( ENG ) ( AUS ) ( YES ( PRP ( PCE ( AUS ENG GER ) ) ) )",
        "FRM ( FRA ) ( AUS ) ( PRP ( PCE ( AUS FRA ) ) )",
    ] {
        assert!(got_a.iter().any(|m| m == frm), "{frm}: {got_a:?}");
    }
    // England hears Austria's press to it, with every addressee, and its answers are taken;
    // France's plain text is not DAIDE press: dropped, a fault of France.
    for frm in [
        "FRM ( AUS ) ( ENG ) ( PRP ( PCE ( AUS ENG ) ) )",
        "FRM ( AUS ) ( GER ENG ) ( PRP ( PCE ( AUS ENG GER ) ) )",
        "YES ( SND ( AUS ) ( YES ( PRP ( PCE ( AUS ENG ) ) ) ) )",
        "YES ( SND ( AUS ) ( YES ( PRP ( PCE ( AUS ENG GER ) ) ) ) )",
    ] {
        assert!(got_b.iter().any(|m| m == frm), "{frm}: {got_b:?}");
    }
    // Hidden information: each DAIDE client hears only press addressed to it (England never
    // hears of Austria's alliance offer to France).
    for (got, me) in [(&got_a, "AUS"), (&got_b, "ENG")] {
        for m in got.iter().filter(|m| m.starts_with("FRM")) {
            let to = m.split(" ) ( ").nth(1).unwrap();
            assert!(to.split(' ').any(|p| p == me), "{me} got {m}");
        }
    }
    assert!(!got_b.iter().any(|m| m.contains("ALY")), "{got_b:?}");
    let e = &r.seats[2].errors;
    assert!(
        e.iter().any(|e| e.kind == SeatErrorKind::InvalidReply
            && e.detail.contains("press message to ENGLAND dropped")),
        "{e:?}"
    );
    // The JSON-lines bot receives DAIDE press as its text, in its next round.
    let ev = events(&rec);
    let inbox = &press_sent(&ev, "S1901M", 2, "FRANCE")["inbox"];
    assert_eq!(
        inbox,
        &serde_json::json!([{"from": "AUSTRIA", "text": "PRP ( ALY ( AUS FRA ) VSS ( TUR ) )"}])
    );
    // Every SND and FRM is in the replay: the press events list each message delivered and
    // dropped, the daide events the conversation.
    let round1 = ev
        .iter()
        .find(|e| e["event"] == "press" && e["phase"] == "S1901M" && e["round"] == 1)
        .unwrap();
    let delivered = round1["delivered"].as_array().unwrap();
    for (to, text) in [
        ("ENGLAND", "PRP ( PCE ( AUS ENG ) )"),
        ("FRANCE", "PRP ( ALY ( AUS FRA ) VSS ( TUR ) )"),
        ("GERMANY", "PRP ( PCE ( AUS ENG GER ) )"),
        ("ENGLAND", "PRP ( PCE ( AUS ENG GER ) )"),
    ] {
        let m = serde_json::json!({"from": "AUSTRIA", "to": to, "text": text});
        assert!(delivered.contains(&m), "{m}: {delivered:?}");
    }
    assert!(round1["dropped"]
        .as_array()
        .unwrap()
        .iter()
        .any(|d| d["from"] == "FRANCE" && d["to"] == "ENGLAND"));
    let lines = |seat: usize| -> Vec<String> {
        ev.iter()
            .filter(|e| e["event"] == "daide" && e["seat"] == seat)
            .flat_map(|e| e["lines"].as_array().unwrap().iter())
            .map(|l| l.as_str().unwrap().to_string())
            .collect()
    };
    assert!(lines(0)
        .iter()
        .any(|l| l.starts_with("< ") && l.ends_with("SND ( ENG ) ( PRP ( PCE ( AUS ENG ) ) )")));
    for (seat, got) in [(0, &got_a), (1, &got_b)] {
        let sent: Vec<String> = lines(seat)
            .iter()
            .filter_map(|l| l.strip_prefix("> "))
            .filter_map(|l| l.split_once(' ').map(|(_, t)| t.to_string()))
            .filter(|t| !t.starts_with("RM "))
            .collect();
        assert_eq!(
            &sent, got,
            "seat {seat}: the replay has what the client got"
        );
    }
    verify_replay(&rec.replay.to_text()).expect("replay with DAIDE press verifies");
}

#[test]
fn a_daide_level_is_checked_and_never_ignored() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    for (rounds, level) in [("0", "10"), ("1", "40"), ("1", "ten")] {
        let mut spec = MatchSpec::new("diplomacy", 7, (0..7).map(|_| builtin("hold")).collect());
        spec.options.insert("press_rounds".into(), rounds.into());
        spec.options.insert("daide_level".into(), level.into());
        let got = rt.block_on(find_game("diplomacy").unwrap().play(&spec));
        let e = got.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("daide_level"),
            "press_rounds={rounds} daide_level={level}: {e}"
        );
    }
}

/// A DAIDE client that connects before the others is answered `RM` at once (a tenth of a second
/// after its `IM`), not when the game starts: DipGame's clients give up after a second without
/// it (`FM`, then a second connection).
#[test]
fn an_early_client_gets_its_rm_before_the_game_starts() {
    let port = Listening::new();
    let mut seats: Vec<SeatSpec> = (0..7).map(|_| builtin("hold")).collect();
    seats[0] = SeatSpec::Daide(None);
    seats[1] = SeatSpec::Daide(None);
    let early = std::thread::spawn(move || {
        let mut c = Client::connect(port);
        let sent = Instant::now();
        c.raw(&Frame::initial().encode().unwrap());
        assert_eq!(c.frame(), Some(Frame::Rm(Vec::new())));
        let waited = sent.elapsed();
        c.send("NME ('early') ('1.0')");
        c.until("MAP");
        c.send("YES (MAP ('STANDARD'))");
        while c.next().is_some() {}
        waited
    });
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2500));
        let mut c = Client::connect(port);
        c.handshake("late");
        while c.next().is_some() {}
    });
    let mut o = opts(1901);
    o.retain(|(k, _)| !["movement_ms", "retreat_ms"].contains(k));
    o.extend([("movement_ms", "500".into()), ("retreat_ms", "500".into())]);
    let rec = play(seats, &o, port);
    let waited = early.join().unwrap();
    late.join().unwrap();
    assert!(
        waited >= Duration::from_millis(100) && waited < Duration::from_millis(1500),
        "RM after {waited:?}, while the second client had not connected"
    );
    let errors = &rec.report.seats[0].errors;
    assert!(
        errors.iter().all(|e| e.kind != SeatErrorKind::NotReady),
        "{errors:?}"
    );
    verify_replay(&rec.replay.to_text()).expect("replay verifies");
}
