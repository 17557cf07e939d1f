//! Starter bot for Diplomacy (standard map), Rust, standard library only.
//!
//! Build:  rustc -O -o bot main.rs
//! Run:    kakehiki play diplomacy --seat 'cmd:/path/to/bot' --fill builtin:random --max-year 1905
//! Check:  kakehiki check diplomacy --seat 'cmd:/path/to/bot'
//!
//! Protocol (docs/protocols/diplomacy.md): one JSON object per line on stdin, one reply per line
//! on stdout (flush!). Every request has a "seq"; echo it in the reply.
//!   {"type":"start","power":"FRANCE","powers":[...],...}    -> {"ready":true}
//!   {"type":"press","phase":"S1901M","round":1,"inbox":[...]} -> {"messages":[{"to":"ITALY","text":"..."}]}
//!   {"type":"phase","phase":"S1901M","orderable":["A PAR",...],"state":{...},"history":[...]}
//!                                                          -> {"orders":["A PAR H",...]}
//!     (retreat phases "...R": orderable = your dislodged units; adjustment phases "...A":
//!      "builds":n with the locations you may build on, or "removals":n with your units)
//!   {"type":"end",...}                                       the game is over: exit.
//!
//! Strategy (replace it with yours): it needs no map. Every unit holds, dislodged units disband,
//! builds are armies on randomly chosen offered centres, removals take random units; in the first
//! press round it greets one random power.

use std::io::{self, BufRead, Write};

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

    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, (self.next() % (i as u64 + 1)) as usize);
        }
    }
}

// ---- A minimal JSON reader and string quoting (enough for the referee's messages) ----------

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
    fn items(&self) -> &[Json] {
        if let Json::Array(items) = self {
            items
        } else {
            &[]
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

/// A JSON string literal for `text`.
fn quote(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The orders for one phase message.
fn orders_for(msg: &Json, rng: &mut Rng) -> Vec<String> {
    let phase = msg.get("phase").str(); // e.g. S1901M, F1901R, W1901A
    let mut orderable: Vec<String> = msg
        .get("orderable")
        .items()
        .iter()
        .map(|j| j.str().to_string())
        .collect();
    match phase.chars().last() {
        // Retreats: disband every dislodged unit ("F TRI D").
        Some('R') => orderable.iter().map(|u| format!("{u} D")).collect(),
        Some('A') => {
            rng.shuffle(&mut orderable);
            let builds = msg.get("builds").int().max(0) as usize;
            let removals = msg.get("removals").int().max(0) as usize;
            let mut orders: Vec<String> = orderable
                .iter()
                .take(builds)
                // An army: every home centre takes one. "STP/NC" -> "STP".
                .map(|loc| format!("A {} B", loc.split('/').next().unwrap_or(loc)))
                .collect();
            orders.extend(orderable.iter().take(removals).map(|u| format!("{u} D")));
            orders
        }
        // Movement: every unit holds ("A PAR H").
        _ => orderable.iter().map(|u| format!("{u} H")).collect(),
    }
}

fn main() -> io::Result<()> {
    // The match seed set by the referee.
    let seed = std::env::var("KAKEHIKI_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0));
    let mut out = io::stdout().lock();
    let mut power = String::new();
    let mut others: Vec<String> = Vec::new();
    let mut greeted = false;

    for line in io::stdin().lock().lines() {
        let line = line?;
        let msg = match parse_json(&line) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("unreadable message: {e}");
                continue;
            }
        };
        let body = match msg.get("type").str() {
            "start" => {
                power = msg.get("power").str().to_string();
                others = msg
                    .get("powers")
                    .items()
                    .iter()
                    .map(|p| p.str().to_string())
                    .filter(|p| *p != power)
                    .collect();
                "\"ready\":true".to_string()
            }
            "press" => {
                let mut messages = Vec::new();
                if !greeted && !others.is_empty() {
                    // Press: up to 6 messages, each to one other power.
                    greeted = true;
                    let to = &others[(rng.next() % others.len() as u64) as usize];
                    let text = quote("Peace between us?");
                    messages.push(format!("{{\"to\":{},\"text\":{text}}}", quote(to)));
                }
                format!("\"messages\":[{}]", messages.join(","))
            }
            "phase" => {
                let orders: Vec<String> = orders_for(&msg, &mut rng)
                    .iter()
                    .map(|o| quote(o))
                    .collect();
                format!("\"orders\":[{}]", orders.join(","))
            }
            "end" => {
                eprintln!("{power}: game over ({})", msg.get("reason").str());
                return Ok(());
            }
            _ => continue,
        };
        // One reply line, echoing the request's seq.
        writeln!(out, "{{{body},\"seq\":{}}}", msg.get("seq").int())?;
        out.flush()?;
    }
    Ok(())
}
