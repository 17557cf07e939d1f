//! Starter agent for Werewolf (AIWolf 0.6.x TCP protocol), Rust, standard library only.
//!
//! Build:  rustc -O -o bot main.rs
//! Usage:  bot HOST PORT [NAME [ROLE]]   (ROLE: the role to ask for, e.g. SEER; default none)
//! Run:    kakehiki play werewolf --seat 'tcp-cmd:/path/to/bot {host} {port}' --fill builtin:sample
//! Check:  kakehiki check werewolf --seat 'tcp-cmd:/path/to/bot {host} {port}'
//!
//! Protocol (docs/protocols/werewolf.md): the server sends one JSON packet per line, with the
//! keys request, gameInfo, gameSetting, talkHistory, whisperHistory. Answer these requests with
//! one line:
//!   NAME -> your name         ROLE -> none, or the role you would like
//!   TALK, WHISPER -> an utterance ("VOTE Agent[03]", "Over", "Skip", ...)
//!   VOTE, DIVINE, GUARD, ATTACK -> {"agentIdx":N}
//! and nothing to INITIALIZE, DAILY_INITIALIZE, DAILY_FINISH, FINISH. Games follow one another
//! on the same connection: read until the server closes it.
//!
//! Strategy (replace it with yours): each day pick a suspect at random (a werewolf the seer has
//! found, if any), say "VOTE Agent[NN]" and vote for it; the seer also announces its last
//! divination; divine, guard and attack random valid agents.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

/// splitmix64: a tiny generator seeded from the match seed, so a match replays exactly.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn pick(&mut self, candidates: &[i64]) -> i64 {
        if candidates.is_empty() {
            return -1;
        }
        candidates[(self.next() % candidates.len() as u64) as usize]
    }
}

// ---- A minimal JSON reader (enough for the server's packets) --------------------------------

#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Number(f64),
    Str(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

static NULL: Json = Json::Null;

impl Json {
    /// The member `key` of an object (`Null` if absent), like `obj["key"]` in Python.
    fn get(&self, key: &str) -> &Json {
        match self {
            Json::Object(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map_or(&NULL, |(_, v)| v),
            _ => &NULL,
        }
    }
    fn str(&self) -> &str {
        if let Json::Str(s) = self {
            s
        } else {
            ""
        }
    }
    fn int(&self) -> i64 {
        if let Json::Number(n) = self {
            *n as i64
        } else {
            0
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn peek(&mut self) -> Result<u8, String> {
        self.ws();
        self.s
            .get(self.i)
            .copied()
            .ok_or_else(|| "unexpected end".to_string())
    }
    fn expect(&mut self, c: u8) -> Result<(), String> {
        if self.peek()? != c {
            return Err(format!("expected '{}' at {}", c as char, self.i));
        }
        self.i += 1;
        Ok(())
    }
    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.s.get(self.i..self.i + 4).ok_or("bad \\u escape")?;
        self.i += 4;
        u32::from_str_radix(std::str::from_utf8(digits).map_err(|e| e.to_string())?, 16)
            .map_err(|e| e.to_string())
    }
    fn string(&mut self) -> Result<String, String> {
        self.expect(b'"')?;
        let mut out = Vec::new();
        loop {
            let c = *self.s.get(self.i).ok_or("unterminated string")?;
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = *self.s.get(self.i).ok_or("unterminated string")?;
                    self.i += 1;
                    let ch = match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let mut cp = self.hex4()?;
                            if (0xD800..0xDC00).contains(&cp)
                                && self.s[self.i..].starts_with(b"\\u")
                            {
                                self.i += 2;
                                cp = 0x10000
                                    + ((cp - 0xD800) << 10)
                                    + self.hex4()?.wrapping_sub(0xDC00);
                            }
                            char::from_u32(cp).unwrap_or('\u{FFFD}')
                        }
                        other => other as char, // \" \\ \/
                    };
                    let mut buf = [0; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
                _ => out.push(c),
            }
        }
        String::from_utf8(out).map_err(|e| e.to_string())
    }
    fn value(&mut self) -> Result<Json, String> {
        match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Ok(Json::Object(members));
                }
                loop {
                    let key = self.string()?;
                    self.expect(b':')?;
                    members.push((key, self.value()?));
                    if self.peek()? == b',' {
                        self.i += 1;
                    } else {
                        self.expect(b'}')?;
                        return Ok(Json::Object(members));
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Ok(Json::Array(items));
                }
                loop {
                    items.push(self.value()?);
                    if self.peek()? == b',' {
                        self.i += 1;
                    } else {
                        self.expect(b']')?;
                        return Ok(Json::Array(items));
                    }
                }
            }
            b'"' => Ok(Json::Str(self.string()?)),
            _ => {
                for (word, value) in [
                    ("true", Json::Bool(true)),
                    ("false", Json::Bool(false)),
                    ("null", Json::Null),
                ] {
                    if self.s[self.i..].starts_with(word.as_bytes()) {
                        self.i += word.len();
                        return Ok(value);
                    }
                }
                let start = self.i;
                while self.i < self.s.len() && b"+-.eE0123456789".contains(&self.s[self.i]) {
                    self.i += 1;
                }
                std::str::from_utf8(&self.s[start..self.i])
                    .ok()
                    .and_then(|t| t.parse().ok())
                    .map(Json::Number)
                    .ok_or_else(|| format!("unexpected character at {start}"))
            }
        }
    }
}

fn parse_json(line: &str) -> Result<Json, String> {
    Parser {
        s: line.as_bytes(),
        i: 0,
    }
    .value()
}

fn agent_name(agent: i64) -> String {
    format!("Agent[{agent:02}]") // at least two digits
}

#[derive(Default)]
struct Agent {
    name: String,
    /// The role asked for at ROLE.
    wish: String,
    /// Our agent number.
    me: i64,
    /// Our own role; a werewolf also sees the others.
    roles: BTreeMap<i64, String>,
    /// From the latest gameInfo's statusMap.
    alive: Vec<i64>,
    /// Our talks today.
    talks: u32,
    /// Whom we vote for today.
    suspect: i64,
    /// The seer's divination to tell the village.
    announce: Option<String>,
    divined: BTreeSet<i64>,
}

impl Agent {
    fn others(&self, exclude_wolves: bool) -> Vec<i64> {
        self.alive
            .iter()
            .copied()
            .filter(|&a| a != self.me)
            .filter(|a| !(exclude_wolves && self.roles.get(a).is_some_and(|r| r == "WEREWOLF")))
            .collect()
    }

    fn update(&mut self, info: &Json, request: &str, rng: &mut Rng) {
        self.me = info.get("agent").int();
        let members = |key: &str| match info.get(key) {
            Json::Object(m) => m.clone(),
            _ => Vec::new(),
        };
        self.roles = members("roleMap")
            .into_iter()
            .filter_map(|(a, r)| Some((a.parse().ok()?, r.str().to_string())))
            .collect();
        self.alive = members("statusMap")
            .into_iter()
            .filter(|(_, s)| s.str() == "ALIVE")
            .filter_map(|(a, _)| a.parse().ok())
            .collect();
        if request == "DAILY_INITIALIZE" {
            // A new day.
            self.talks = 0;
            let wolf = self.roles.get(&self.me).is_some_and(|r| r == "WEREWOLF");
            self.suspect = rng.pick(&self.others(wolf));
            // Seer only: last night's divination.
            let judge = info.get("divineResult");
            let target = judge.get("target").int();
            if *judge != Json::Null && self.alive.contains(&target) {
                let result = judge.get("result").str();
                self.announce = Some(format!("DIVINED {} {result}", agent_name(target)));
                if result == "WEREWOLF" {
                    self.suspect = target;
                }
            }
        }
    }

    /// The reply line to a packet, or None when the request expects none.
    fn answer(&mut self, packet: &Json, rng: &mut Rng) -> Option<String> {
        let request = packet.get("request").str();
        if let Json::Object(_) = packet.get("gameInfo") {
            self.update(packet.get("gameInfo"), request, rng);
        }
        let target = match request {
            "NAME" => return Some(self.name.clone()),
            "ROLE" => return Some(self.wish.clone()),
            "TALK" => {
                self.talks += 1;
                if self.talks == 1 && self.suspect > 0 {
                    return Some(format!("VOTE {}", agent_name(self.suspect)));
                }
                return Some(self.announce.take().unwrap_or_else(|| "Over".into()));
            }
            "WHISPER" => return Some("Over".into()),
            "VOTE" => {
                let others = self.others(false);
                if others.contains(&self.suspect) {
                    self.suspect
                } else {
                    rng.pick(&others)
                }
            }
            "DIVINE" => {
                let fresh: Vec<i64> = self
                    .others(false)
                    .into_iter()
                    .filter(|a| !self.divined.contains(a))
                    .collect();
                let target = if fresh.is_empty() {
                    rng.pick(&self.others(false))
                } else {
                    rng.pick(&fresh)
                };
                self.divined.insert(target);
                target
            }
            "GUARD" => rng.pick(&self.others(false)),
            "ATTACK" => rng.pick(&self.others(true)),
            "INITIALIZE" => {
                // A new game.
                self.divined.clear();
                self.announce = None;
                return None;
            }
            "FINISH" => {
                eprintln!("game over");
                return None;
            }
            _ => return None, // DAILY_INITIALIZE, DAILY_FINISH: no reply
        };
        Some(format!("{{\"agentIdx\":{target}}}")) // no spaces
    }
}

/// Connect, retrying for a few seconds while the server starts.
fn connect(host: &str, port: &str) -> io::Result<TcpStream> {
    let mut attempt = 0;
    loop {
        match TcpStream::connect(format!("{host}:{port}")) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) if attempt >= 100 => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
        attempt += 1;
    }
}

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: {} HOST PORT [NAME [ROLE]]", args[0]);
        std::process::exit(2);
    }
    // The match seed set by the referee.
    let seed = std::env::var("KAKEHIKI_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0));
    let mut agent = Agent {
        name: args.get(3).cloned().unwrap_or_else(|| "starter".into()),
        wish: args.get(4).cloned().unwrap_or_else(|| "none".into()),
        ..Agent::default()
    };

    let stream = connect(&args[1], &args[2])?;
    let mut out = stream.try_clone()?;
    for line in BufReader::new(stream).lines() {
        // One packet per line, until the server closes the connection.
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let packet = match parse_json(&line) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("unreadable packet: {e}");
                continue;
            }
        };
        if let Some(reply) = agent.answer(&packet, &mut rng) {
            out.write_all(format!("{reply}\n").as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}
