//! The server side of one player's DAIDE conversation, as a pure state machine.
//!
//! The referee drives a [`Session`] with [`Request`]s (what to send; whether to wait for the
//! handshake, for orders, for a press round's `SND`s, or for nothing) and the frames the client
//! sent, each with its arrival time in milliseconds from the request. The session answers every
//! frame at once (`RM` to the `IM`; `YES`, `MAP`, `MDF`, `THX` per order, `MIS` when orders are
//! missing, `TME`, `YES` or `REJ` to an `SND`, `REJ`, `HUH`, `PRN`; `EM` and closing on a framing
//! error) and says when the request is answered: a handshake when the client accepted the map,
//! orders when every unit has one and the go flag is set, a press round never (its deadline
//! ends it; [`Session::take_press`] gives the press accepted). The same requests and frames give the same answers, so the recorded frames of a game
//! re-derive its whole conversation.

use std::collections::BTreeMap;

use base64::Engine as _;

use super::frame::{ErrorCode, Frame, MAGIC, VERSION};
use super::message::{DOrder, Message, MessageError, Missing, Placed, Turn};
use super::names;
use super::orders::to_order;
use super::press::{above_level, Press};
use super::token::{self, Token};
use crate::adjudicate::adjudicate;
use crate::board::Board;
use crate::bots::{build_sites, format_order};
use crate::map::{standard, Map, Prov};
use crate::movement::Resolver;
use crate::order::Order;
use crate::outcome::VoidReason;
use crate::types::{PhaseKind, Power};

/// The map name of `MAP`.
pub const MAP_NAME: &str = "STANDARD";

/// Messages a client may send in one request before it is cut off (a flood).
pub const MAX_FRAMES: usize = 1000;

/// What a request waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// `IM`, `NME` and the acceptance of the map (`YES (MAP ...)`).
    Handshake,
    /// The power's orders.
    Orders,
    /// Nothing: the messages are only delivered.
    Nothing,
    /// A press round: the client's `SND`s until the deadline (the request is never answered
    /// before it).
    Press(PressRound),
}

/// What a press round allows a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PressRound {
    /// The game's press level (10, 20 or 30).
    pub level: u8,
    /// The powers it may address, one bit each (`1 << power`): the surviving others.
    pub to: u8,
    /// At most this many messages in the round (an `SND` to n powers is n messages).
    pub messages: u16,
    /// At most this many characters of press in one `SND` (its text form, as a JSON-lines
    /// addressee receives it).
    pub chars: u32,
}

/// One request of the referee to the conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// What it waits for.
    pub expect: Expect,
    /// The time the client has, in milliseconds (for `TME`).
    pub limit_ms: u64,
    /// Messages to send first.
    pub send: Vec<Message>,
}

/// A request that cannot be decoded (the referee's own bytes: a bug, not a client fault).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("malformed DAIDE seat request: {0}")]
pub struct BadRequest(pub String);

impl Request {
    /// The request as bytes (the message the seat layer hands to a DAIDE seat): a kind byte,
    /// the limit, then each message as a framed `DM`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![match self.expect {
            Expect::Handshake => b'H',
            Expect::Orders => b'O',
            Expect::Nothing => b'N',
            Expect::Press(_) => b'P',
        }];
        out.extend_from_slice(&self.limit_ms.to_be_bytes());
        if let Expect::Press(r) = self.expect {
            out.extend([r.level, r.to]);
            out.extend(r.messages.to_be_bytes());
            out.extend(r.chars.to_be_bytes());
        }
        for m in &self.send {
            out.extend(Frame::Dm(m.to_bytes()).encode().unwrap_or_default());
        }
        out
    }

    /// Decode [`Request::encode`].
    pub fn decode(bytes: &[u8]) -> Result<Request, BadRequest> {
        let bad = |w: &str| BadRequest(w.to_string());
        let mut expect = match bytes.first() {
            Some(b'H') => Expect::Handshake,
            Some(b'O') => Expect::Orders,
            Some(b'N') => Expect::Nothing,
            Some(b'P') => Expect::Press(PressRound {
                level: 0,
                to: 0,
                messages: 0,
                chars: 0,
            }),
            _ => return Err(bad("kind")),
        };
        let limit: [u8; 8] = bytes
            .get(1..9)
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad("limit"))?;
        let mut rest = &bytes[9..];
        if let Expect::Press(r) = &mut expect {
            let p: [u8; 8] = rest
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| bad("press round"))?;
            *r = PressRound {
                level: p[0],
                to: p[1],
                messages: u16::from_be_bytes([p[2], p[3]]),
                chars: u32::from_be_bytes([p[4], p[5], p[6], p[7]]),
            };
            rest = &rest[8..];
        }
        let mut send = Vec::new();
        while !rest.is_empty() {
            let header: [u8; 4] = rest
                .get(..4)
                .and_then(|b| b.try_into().ok())
                .ok_or_else(|| bad("header"))?;
            let n = Frame::length(header).map_err(|e| bad(&e.to_string()))?;
            let f = Frame::decode(rest.get(..n).ok_or_else(|| bad("length"))?)
                .map_err(|e| bad(&e.to_string()))?;
            let Frame::Dm(body) = f else {
                return Err(bad("not a DM"));
            };
            let tokens = token::from_bytes(&body).map_err(|e| bad(&e.to_string()))?;
            send.push(Message::parse(&tokens).map_err(|e| bad(&e.to_string()))?);
            rest = &rest[n..];
        }
        Ok(Request {
            expect,
            limit_ms: u64::from_be_bytes(limit),
            send,
        })
    }
}

/// One line of a conversation's readable record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    /// `>` server to client, `<` client to server.
    pub dir: char,
    /// Milliseconds from the request (inbound), or of the inbound message answered.
    pub ms: u64,
    /// The message in DAIDE's text form (framing messages as `IM 1 0xDA10`, `EM 0x04`...).
    pub text: String,
}

impl std::fmt::Display for Line {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {}", self.dir, self.ms, self.text)
    }
}

/// What receiving one frame did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Step {
    /// Frames to write to the client, in order.
    pub out: Vec<Vec<u8>>,
    /// Why the connection is to be closed now (after writing `out`), if it is.
    pub close: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Im,
    Name,
    Map,
    Ready,
    Closed,
}

/// One client's conversation.
#[derive(Clone, Debug)]
pub struct Session {
    power: Power,
    draw_votes: bool,
    stage: Stage,
    /// `NME`'s name and version.
    name: Option<(String, String)>,
    expect: Expect,
    limit_ms: u64,
    hello: Option<Message>,
    now: Option<Message>,
    sco: Option<Message>,
    board: Option<Board>,
    turn: Option<Turn>,
    /// `ORD` lines by turn, for `HST`.
    history: Vec<(Turn, Vec<Message>)>,
    /// Accepted orders by the province they are for (builds: the site).
    orders: BTreeMap<Prov, DOrder>,
    waives: usize,
    go: bool,
    draw: bool,
    frames: usize,
    lines: Vec<Line>,
    /// Messages sent in this press round (an `SND` to n powers counts n).
    pressed: usize,
    /// The press accepted in this press round: addressees and message.
    outbox: Vec<(Vec<Power>, Press)>,
}

fn dm(m: &Message) -> Vec<u8> {
    Frame::Dm(m.to_bytes()).encode().unwrap_or_default()
}

fn frame_text(f: &Frame) -> String {
    match f {
        Frame::Im { version, magic } => format!("IM {version} 0x{magic:04X}"),
        Frame::Rm(b) => format!("RM {} bytes", b.len()),
        Frame::Dm(b) => match token::from_bytes(b) {
            Ok(t) => token::to_text(&t),
            Err(e) => format!("DM ({e})"),
        },
        Frame::Fm => "FM".into(),
        Frame::Em(c) => format!("EM 0x{c:02X}"),
    }
}

/// Base64 of the frames a client sent in one request, with their arrival times: the reply of a
/// DAIDE seat as the seat layer records it (one `<ms> <base64>` line per frame).
pub fn encode_inbound(ms: u64, frame: &[u8]) -> String {
    format!(
        "{ms} {}\n",
        base64::engine::general_purpose::STANDARD.encode(frame)
    )
}

/// Decode [`encode_inbound`] lines; `None` for a line that is not one.
pub fn decode_inbound(blob: &[u8]) -> Option<Vec<(u64, Vec<u8>)>> {
    let text = std::str::from_utf8(blob).ok()?;
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (ms, b) = l.split_once(' ')?;
            let bytes = base64::engine::general_purpose::STANDARD.decode(b).ok()?;
            Some((ms.parse().ok()?, bytes))
        })
        .collect()
}

impl Session {
    /// The conversation of the client playing `power`; `draw_votes`: whether `DRW` is taken.
    pub fn new(power: Power, draw_votes: bool) -> Session {
        Session {
            power,
            draw_votes,
            stage: Stage::Im,
            name: None,
            expect: Expect::Nothing,
            limit_ms: 0,
            hello: None,
            now: None,
            sco: None,
            board: None,
            turn: None,
            history: Vec::new(),
            orders: BTreeMap::new(),
            waives: 0,
            go: true,
            draw: false,
            frames: 0,
            lines: Vec::new(),
            pressed: 0,
            outbox: Vec::new(),
        }
    }

    /// What the current request waits for.
    pub fn expects(&self) -> Expect {
        self.expect
    }

    /// The press accepted (`YES (SND ...)`) since the last call: each message with its
    /// addressees, in the order sent.
    pub fn take_press(&mut self) -> Vec<(Vec<Power>, Press)> {
        std::mem::take(&mut self.outbox)
    }

    /// The name and version the client gave with `NME`.
    pub fn name(&self) -> Option<&(String, String)> {
        self.name.as_ref()
    }

    /// Whether the client accepted the map (the handshake is over).
    pub fn ready(&self) -> bool {
        self.stage == Stage::Ready
    }

    /// Whether the connection was closed for a framing error or the client's leaving.
    pub fn closed(&self) -> bool {
        self.stage == Stage::Closed
    }

    /// The readable record since the last [`Session::take_lines`].
    pub fn take_lines(&mut self) -> Vec<Line> {
        std::mem::take(&mut self.lines)
    }

    fn say(&mut self, ms: u64, m: Message, out: &mut Vec<Vec<u8>>) {
        self.lines.push(Line {
            dir: '>',
            ms,
            text: m.to_text(),
        });
        out.push(dm(&m));
    }

    /// Start a request: the frames to write (its messages), after which the request may
    /// already be answered ([`Session::done`]).
    pub fn begin(&mut self, req: &Request) -> Vec<Vec<u8>> {
        self.expect = req.expect;
        self.limit_ms = req.limit_ms;
        self.frames = 0;
        self.pressed = 0;
        self.outbox.clear();
        let mut out = Vec::new();
        for m in &req.send {
            match m {
                Message::Hlo(Some(_)) => self.hello = Some(m.clone()),
                Message::Sco(Some(_)) => self.sco = Some(m.clone()),
                Message::Now(Some((turn, _))) => {
                    if self.turn != Some(*turn) {
                        self.orders.clear();
                        self.waives = 0;
                        self.go = true;
                        self.draw = false;
                    }
                    self.turn = Some(*turn);
                    self.now = Some(m.clone());
                }
                Message::Ord(turn, _, _) => match self.history.last_mut() {
                    Some((t, v)) if t == turn => v.push(m.clone()),
                    _ => self.history.push((*turn, vec![m.clone()])),
                },
                _ => {}
            }
            self.say(0, m.clone(), &mut out);
        }
        self.board = self.position();
        out
    }

    fn position(&self) -> Option<Board> {
        let Some(Message::Now(Some((turn, units)))) = &self.now else {
            return None;
        };
        let owners = match &self.sco {
            Some(Message::Sco(Some(o))) => o.clone(),
            _ => Vec::new(),
        };
        names::board_of(standard(), *turn, units, &owners).ok()
    }

    /// Whether the current request is answered.
    pub fn done(&self) -> bool {
        match self.expect {
            Expect::Handshake => self.stage == Stage::Ready,
            Expect::Orders => self.go && self.missing().is_none(),
            Expect::Nothing => true,
            Expect::Press(_) => false,
        }
    }

    /// The accepted orders, in the crate's text (for the engine), and the draw vote.
    pub fn orders(&self) -> (Vec<String>, bool) {
        let map = standard();
        let mut v: Vec<String> = self
            .orders
            .values()
            .filter_map(|o| to_order(map, o).ok())
            .map(|o| format_order(map, &o))
            .collect();
        v.extend((0..self.waives).map(|_| "WAIVE".to_string()));
        (v, self.draw && self.draw_votes)
    }

    /// What is missing of this power's orders, if anything (as `MIS` says it).
    pub fn missing(&self) -> Option<Missing> {
        let map = standard();
        let board = self.board.as_ref()?;
        let p = self.power;
        let placed = |m: &Message| match m {
            Message::Now(Some((_, units))) => units.clone(),
            _ => Vec::new(),
        };
        let all: Vec<Placed> = self.now.as_ref().map(placed).unwrap_or_default();
        match board.phase.kind {
            PhaseKind::Movement | PhaseKind::Retreat => {
                let retreat = board.phase.kind == PhaseKind::Retreat;
                let units: Vec<Placed> = all
                    .into_iter()
                    .filter(|u| u.unit.power == p && u.retreat.is_some() == retreat)
                    .filter(|u| {
                        let l = names::loc(map, &u.unit.loc).unwrap_or(0);
                        !self.orders.contains_key(&map.prov_of(l))
                    })
                    .collect();
                (!units.is_empty()).then_some(Missing::Units(units))
            }
            PhaseKind::Adjustment => {
                let n = board.adjustment(p);
                let given = self.orders.len() + self.waives;
                let left = if n > 0 {
                    let can = (n as usize).min(build_sites(board, p).len());
                    -(can.saturating_sub(given) as i64)
                } else {
                    ((-n) as usize).saturating_sub(given) as i64
                };
                (left != 0).then_some(Missing::Count(left as i16))
            }
        }
    }

    /// Take one frame the client sent (`ms` after the request).
    pub fn receive(&mut self, raw: &[u8], ms: u64) -> Step {
        let mut out = Vec::new();
        let frame = Frame::decode(raw);
        self.lines.push(Line {
            dir: '<',
            ms,
            text: match &frame {
                Ok(f) => frame_text(f),
                Err(e) => format!("malformed frame ({e})"),
            },
        });
        if self.stage == Stage::Closed {
            return Step::default();
        }
        self.frames += 1;
        let fail = |s: &mut Session, code: ErrorCode, why: String, mut out: Vec<Vec<u8>>| {
            s.stage = Stage::Closed;
            s.lines.push(Line {
                dir: '>',
                ms,
                text: format!("EM 0x{:02X}", code as u16),
            });
            out.push(Frame::Em(code as u16).encode().unwrap_or_default());
            Step {
                out,
                close: Some(why),
            }
        };
        if self.frames > MAX_FRAMES {
            return fail(
                self,
                ErrorCode::UnknownMessage,
                format!("more than {MAX_FRAMES} messages in one request"),
                out,
            );
        }
        let frame = match frame {
            Ok(f) => f,
            Err(e) => return fail(self, e.code(), format!("malformed frame: {e}"), out),
        };
        if self.stage == Stage::Im {
            return match frame {
                Frame::Im { version, magic } if magic == MAGIC && version == VERSION => {
                    self.stage = Stage::Name;
                    self.lines.push(Line {
                        dir: '>',
                        ms,
                        text: "RM 0 bytes".into(),
                    });
                    out.push(Frame::Rm(Vec::new()).encode().unwrap_or_default());
                    Step { out, close: None }
                }
                Frame::Im { magic: 0x10DA, .. } => fail(
                    self,
                    ErrorCode::ImWrongEndian,
                    "IM with the magic number byte-swapped".into(),
                    out,
                ),
                Frame::Im { magic, .. } if magic != MAGIC => fail(
                    self,
                    ErrorCode::ImWrongMagic,
                    format!("IM with the wrong magic number 0x{magic:04X}"),
                    out,
                ),
                Frame::Im { version, .. } => fail(
                    self,
                    ErrorCode::VersionIncompatible,
                    format!("IM of version {version}"),
                    out,
                ),
                _ => fail(
                    self,
                    ErrorCode::ImNotFirst,
                    "the first message was not an IM".into(),
                    out,
                ),
            };
        }
        let body = match frame {
            Frame::Dm(b) => b,
            Frame::Im { .. } => {
                return fail(self, ErrorCode::MoreThanOneIm, "a second IM".into(), out)
            }
            Frame::Rm(_) => {
                return fail(
                    self,
                    ErrorCode::RmFromClient,
                    "an RM from the client".into(),
                    out,
                )
            }
            Frame::Fm => {
                self.stage = Stage::Closed;
                return Step {
                    out,
                    close: Some("the client closed the conversation (FM)".into()),
                };
            }
            Frame::Em(c) => {
                self.stage = Stage::Closed;
                return Step {
                    out,
                    close: Some(format!("the client sent error 0x{c:02X} (EM)")),
                };
            }
        };
        let tokens = match token::from_bytes(&body) {
            Ok(t) => t,
            Err(e) => return fail(self, ErrorCode::InvalidToken, e.to_string(), out),
        };
        let parsed = Message::parse(&tokens);
        let is_snd = tokens.first().and_then(|t| t.name()) == Some("SND");
        let round = match self.expect {
            Expect::Press(r) if self.ready() => Some(r),
            _ => None,
        };
        if is_snd && parsed != Err(MessageError::Brackets) {
            // Press outside a press round (or at level 0, where there are none) is refused
            // whole, as it came; in a round, a token above the game's level is not understood.
            match round {
                None => self.say(ms, Message::Rej(Box::new(Message::Other(tokens))), &mut out),
                Some(r) => match above_level(&tokens[1..], r.level) {
                    Some(i) => {
                        let mut t = tokens;
                        t.insert(i + 1, Token::named("ERR").unwrap_or(Token(0x4902)));
                        self.say(ms, Message::Huh(t), &mut out)
                    }
                    None => self.answer(parsed, tokens, ms, &mut out),
                },
            }
            return Step { out, close: None };
        }
        self.answer(parsed, tokens, ms, &mut out);
        Step { out, close: None }
    }

    fn answer(
        &mut self,
        parsed: Result<Message, MessageError>,
        tokens: Vec<Token>,
        ms: u64,
        out: &mut Vec<Vec<u8>>,
    ) {
        match parsed {
            Ok(m) => self.message(m, ms, out),
            Err(MessageError::Brackets) => self.say(ms, Message::Prn(tokens), out),
            Err(MessageError::Syntax { index, .. }) => {
                let mut t = tokens;
                let err = Token::named("ERR").unwrap_or(Token(0x4902));
                t.insert(index.min(t.len()), err);
                self.say(ms, Message::Huh(t), out)
            }
        }
    }

    /// `SND` in a press round: `YES` and kept for delivery, or `REJ` (an addressee that is
    /// the client itself, eliminated or named twice; another turn; over the round's limits).
    fn snd(&mut self, r: PressRound, m: Message, ms: u64, out: &mut Vec<Vec<u8>>) {
        let Message::Snd(turn, to, press) = &m else {
            return;
        };
        let mut seen = 0u8;
        let addressable = to.iter().all(|p| {
            let bit = 1u8 << (p.0 & 7);
            let fresh = seen & bit == 0;
            seen |= bit;
            fresh && r.to & bit != 0
        });
        let ok = addressable
            && turn.is_none_or(|t| Some(t) == self.turn)
            && self.pressed + to.len() <= usize::from(r.messages)
            && press.to_text().chars().count() <= r.chars as usize;
        if ok {
            self.pressed += to.len();
            self.outbox.push((to.clone(), press.clone()));
            self.say(ms, Message::Yes(Box::new(m)), out)
        } else {
            self.say(ms, Message::Rej(Box::new(m)), out)
        }
    }

    fn message(&mut self, m: Message, ms: u64, out: &mut Vec<Vec<u8>>) {
        let rej = |m: Message| Message::Rej(Box::new(m));
        let yes = |m: Message| Message::Yes(Box::new(m));
        let named = self.stage != Stage::Name;
        match m {
            Message::Nme(n, v) if self.stage == Stage::Name => {
                self.name = Some((n.clone(), v.clone()));
                self.stage = Stage::Map;
                self.say(ms, yes(Message::Nme(n, v)), out);
                self.say(ms, Message::Map(Some(MAP_NAME.into())), out);
            }
            Message::Map(None) if named => self.say(ms, Message::Map(Some(MAP_NAME.into())), out),
            Message::Mdf(None) if named => self.say(
                ms,
                Message::Mdf(Some(Box::new(names::mdf(standard())))),
                out,
            ),
            Message::Yes(inner) if matches!(*inner, Message::Map(Some(_))) => {
                if self.stage == Stage::Map {
                    self.stage = Stage::Ready;
                }
            }
            Message::Rej(inner) if matches!(*inner, Message::Map(Some(_))) => {
                // A client that refuses the map cannot play: it hears nothing more until the
                // game ends.
                self.lines.push(Line {
                    dir: '>',
                    ms,
                    text: "(the client refused the map)".into(),
                });
            }
            Message::Hlo(None) | Message::Now(None) | Message::Sco(None) => {
                let have = match &m {
                    Message::Hlo(_) => self.hello.clone(),
                    Message::Now(_) => self.now.clone(),
                    _ => self.sco.clone(),
                };
                match have {
                    Some(h) if self.ready() => self.say(ms, h, out),
                    _ => self.say(ms, rej(m), out),
                }
            }
            Message::Hst(Some(t)) if self.ready() => {
                let found = self
                    .history
                    .iter()
                    .find(|(x, _)| *x == t)
                    .map(|(_, v)| v.clone());
                match found {
                    Some(v) => {
                        for o in v {
                            self.say(ms, o, out);
                        }
                    }
                    None => self.say(ms, rej(Message::Hst(Some(t))), out),
                }
            }
            Message::Sub(turn, list) if self.ready() && self.board.is_some() => {
                if turn.is_some_and(|t| Some(t) != self.turn) {
                    return self.say(ms, rej(Message::Sub(turn, list)), out);
                }
                for o in list {
                    let note = self.note(&o);
                    if note == "MBV" {
                        self.accept(o.clone());
                    }
                    let n = Token::named(note).unwrap_or(Token(0x4400));
                    self.say(ms, Message::Thx(o, n), out);
                }
                if let Some(mis) = self.missing() {
                    self.say(ms, Message::Mis(Some(mis)), out);
                }
            }
            Message::Not(inner) if self.ready() => match *inner {
                Message::Sub(None, list) if self.board.is_some() => {
                    let map = standard();
                    if list.is_empty() {
                        self.orders.clear();
                        self.waives = 0;
                    }
                    for o in &list {
                        match o {
                            DOrder::Wve(_) => self.waives = self.waives.saturating_sub(1),
                            _ => {
                                let key = self.key(map, o);
                                if key.is_some_and(|k| self.orders.get(&k) == Some(o)) {
                                    self.orders.remove(&key.unwrap_or_default());
                                }
                            }
                        }
                    }
                    self.say(
                        ms,
                        yes(Message::Not(Box::new(Message::Sub(None, list)))),
                        out,
                    )
                }
                Message::Gof => {
                    self.go = false;
                    self.say(ms, yes(Message::Not(Box::new(Message::Gof))), out)
                }
                Message::Drw(ps) if ps.is_empty() && self.draw_votes => {
                    self.draw = false;
                    self.say(ms, yes(Message::Not(Box::new(Message::Drw(ps)))), out)
                }
                other => self.say(ms, rej(Message::Not(Box::new(other))), out),
            },
            m @ Message::Snd(..) => match self.expect {
                Expect::Press(r) if self.ready() => self.snd(r, m, ms, out),
                _ => self.say(ms, rej(m), out),
            },
            Message::Mis(None) if self.ready() => {
                let m = Message::Mis(self.missing());
                self.say(ms, m, out)
            }
            Message::Gof if self.ready() => {
                self.go = true;
                self.say(ms, yes(Message::Gof), out);
                if let Some(mis) = self.missing() {
                    self.say(ms, Message::Mis(Some(mis)), out);
                }
            }
            Message::Tme(None) if self.ready() && self.expect == Expect::Orders => {
                let left = self.limit_ms.saturating_sub(ms).div_ceil(1000);
                self.say(ms, Message::Tme(Some(left.min(8191) as i16)), out)
            }
            Message::Drw(ps) if ps.is_empty() && self.ready() && self.draw_votes => {
                self.draw = true;
                self.say(ms, yes(Message::Drw(ps)), out)
            }
            // Messages only a server sends: not the client's to send.
            m @ (Message::Thx(..)
            | Message::Ord(..)
            | Message::Hlo(Some(_))
            | Message::Now(Some(_))
            | Message::Sco(Some(_))
            | Message::Mis(Some(_))
            | Message::Mdf(Some(_))
            | Message::Map(Some(_))
            | Message::Ccd(_)
            | Message::Out(_)
            | Message::Slo(_)
            | Message::Smr(Some(_))
            | Message::Off
            | Message::Huh(_)
            | Message::Frm(..)
            | Message::Prn(_)) => {
                let mut t = m.to_tokens();
                t.insert(0, Token::named("ERR").unwrap_or(Token(0x4902)));
                self.say(ms, Message::Huh(t), out)
            }
            // Everything else is refused: a second NME, OBS and IAM (a seat plays its power),
            // anything before the handshake, press at level 0, TME alarms, partial draws.
            m => self.say(ms, rej(m), out),
        }
    }

    fn key(&self, map: &Map, o: &DOrder) -> Option<Prov> {
        let u = o.unit()?;
        let l = names::loc(map, &u.loc).ok()?;
        Some(map.prov_of(l))
    }

    fn accept(&mut self, o: DOrder) {
        match o {
            DOrder::Wve(_) => self.waives += 1,
            o => {
                if let Some(k) = self.key(standard(), &o) {
                    self.orders.insert(k, o);
                }
            }
        }
    }

    /// The `THX` note of an order in the current position.
    fn note(&self, o: &DOrder) -> &'static str {
        let map = standard();
        let Some(board) = &self.board else {
            return "NRS";
        };
        let kind = board.phase.kind;
        let right_season = match o {
            DOrder::Hld(_)
            | DOrder::Mto(..)
            | DOrder::SupHld(..)
            | DOrder::SupMto(..)
            | DOrder::Cvy(..)
            | DOrder::CtoVia(..) => kind == PhaseKind::Movement,
            DOrder::Rto(..) | DOrder::Dsb(_) => kind == PhaseKind::Retreat,
            DOrder::Bld(_) | DOrder::Rem(_) | DOrder::Wve(_) => kind == PhaseKind::Adjustment,
        };
        if !right_season {
            return "NRS";
        }
        let owner = match o {
            DOrder::Wve(p) => *p,
            _ => o.unit().map_or(self.power, |u| u.power),
        };
        if owner != self.power {
            return "NYU";
        }
        let order = match to_order(map, o) {
            Ok(x) => x,
            Err(_) => return "NSP",
        };
        // The unit named must be there as named (builds name the unit to be).
        if let Some(u) = o.unit().filter(|_| !matches!(o, DOrder::Bld(_))) {
            let Ok(unit) = names::unit(map, u) else {
                return "NSU";
            };
            let p = map.prov_of(unit.loc) as usize;
            let there = match kind {
                PhaseKind::Retreat => board.dislodged[p].map(|d| d.unit),
                _ => board.units[p],
            };
            match there {
                Some(x) if x == unit => {}
                Some(x) if x.power != self.power => return "NYU",
                None if kind == PhaseKind::Retreat && board.units[p].is_some() => return "NRN",
                _ => return "NSU",
            }
        }
        if kind == PhaseKind::Adjustment {
            let n = board.adjustment(self.power);
            let replaces = self
                .key(map, o)
                .is_some_and(|k| self.orders.contains_key(&k));
            let given = self.orders.len() + self.waives - usize::from(replaces);
            let can = (n.max(0) as usize).min(build_sites(board, self.power).len());
            match o {
                DOrder::Bld(_) | DOrder::Wve(_) if n <= 0 || given >= can => return "NMB",
                DOrder::Rem(_) if n >= 0 || given >= (-n) as usize => return "NMR",
                DOrder::Wve(_) => return "MBV",
                _ => {}
            }
        }
        let mut b = board.clone();
        let out = adjudicate(&mut Resolver::new(), map, &mut b, &[(self.power, order)]);
        match out.errors.first().map(|e| &e.reason) {
            None => "MBV",
            Some(r) => void_note(map, board, self.power, &order, r),
        }
    }
}

/// The `THX` note of a void order.
fn void_note(map: &Map, board: &Board, power: Power, o: &Order, r: &VoidReason) -> &'static str {
    use VoidReason::*;
    match r {
        Parse(_) => "NSP",
        NoUnit(_) => "NSU",
        ForeignUnit(_) => "NYU",
        Duplicate | Unmatched(_) => "MBV",
        WrongPhase => "NRS",
        CoastMissing | BuildKindMissing => "CST",
        ConvoyNotAtSea => "NAS",
        ConvoyNotArmy | FleetViaConvoy => "NSA",
        NotDislodged => "NRN",
        NotARetreatOption => "NVR",
        NoBuildsAllowed => "NMB",
        NoRemovalsOwed => "NMR",
        NotABuildSite => {
            let p = o.unit().map_or(0, |u| u.prov);
            if !map.is_sc(p) {
                "NSC"
            } else if board.homes[power.index()] & crate::map::bit(p) == 0 {
                "HSC"
            } else if board.owner[p as usize] != Some(power) {
                "YSC"
            } else {
                "ESC"
            }
        }
        BadBuildKind if map.is_split(o.unit().map_or(0, |u| u.prov)) => "CST",
        _ => "FAR",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daide::token::{from_text, to_text};
    use crate::types::{Phase, PhaseKind, Season, Unit, UnitKind};
    use proptest::prelude::*;

    fn dm_of(text: &str) -> Vec<u8> {
        Frame::Dm(token::to_bytes(&from_text(text).unwrap()))
            .encode()
            .unwrap()
    }

    fn texts(frames: &[Vec<u8>]) -> Vec<String> {
        frames
            .iter()
            .map(|f| match Frame::decode(f).unwrap() {
                Frame::Dm(b) => to_text(&token::from_bytes(&b).unwrap()),
                other => format!("{other:?}"),
            })
            .collect()
    }

    /// A session past its handshake, shown `board`.
    fn shown(power: Power, board: &Board) -> Session {
        let map = standard();
        let mut s = Session::new(power, false);
        s.receive(&Frame::initial().encode().unwrap(), 0);
        s.receive(&dm_of("NME ('t') ('1')"), 0);
        s.receive(&dm_of("YES (MAP ('STANDARD'))"), 0);
        assert!(s.ready());
        s.begin(&Request {
            expect: Expect::Orders,
            limit_ms: 5000,
            send: vec![
                Message::Sco(Some(names::sco(map, board))),
                Message::Now(Some((
                    names::turn(board.phase),
                    names::now_units(map, board),
                ))),
            ],
        });
        s
    }

    fn say(s: &mut Session, text: &str) -> Vec<String> {
        texts(&s.receive(&dm_of(text), 10).out)
    }

    #[test]
    fn requests_round_trip() {
        let r = Request {
            expect: Expect::Orders,
            limit_ms: 1234,
            send: vec![Message::Off, Message::Tme(Some(3))],
        };
        assert_eq!(Request::decode(&r.encode()), Ok(r));
        assert!(Request::decode(b"X").is_err());
    }

    #[test]
    fn the_handshake_answers_im_nme_and_map() {
        let mut s = Session::new(Power(0), false);
        assert_eq!(
            s.receive(&Frame::initial().encode().unwrap(), 0).out,
            vec![Frame::Rm(Vec::new()).encode().unwrap()]
        );
        assert_eq!(say(&mut s, "MAP"), ["REJ ( MAP )"], "nothing before NME");
        assert_eq!(
            say(&mut s, "NME ('a') ('b')"),
            ["YES ( NME ( 'a' ) ( 'b' ) )", "MAP ( 'STANDARD' )"]
        );
        s.begin(&Request {
            expect: Expect::Handshake,
            limit_ms: 1000,
            send: vec![],
        });
        assert!(!s.done());
        assert_eq!(say(&mut s, "YES (MAP ('STANDARD'))"), Vec::<String>::new());
        assert!(s.done());
        assert_eq!(s.name(), Some(&("a".to_string(), "b".to_string())));
    }

    #[test]
    fn retreat_notes_and_missing_retreats() {
        let map = standard();
        let mut b = Board::empty(
            map,
            Phase {
                season: Season::Spring,
                year: 1901,
                kind: PhaseKind::Retreat,
            },
        );
        let ser = map.province("SER").unwrap();
        let bud = map.province("BUD").unwrap();
        let alb = map.province("ALB").unwrap();
        let army = |p| Unit {
            power: Power(0),
            kind: UnitKind::Army,
            loc: p,
        };
        b.dislodged[ser as usize] = Some(crate::board::Dislodged {
            unit: army(ser),
            options: crate::map::bit(alb),
        });
        b.units[bud as usize] = Some(army(bud));
        let mut s = shown(Power(0), &b);
        assert_eq!(
            s.missing(),
            Some(Missing::Units(vec![Placed {
                unit: names::dunit(map, &army(ser)),
                retreat: Some(vec![names::dloc(map, alb)]),
            }]))
        );
        let got = say(
            &mut s,
            "SUB ((AUS AMY BUD) RTO GAL) ((AUS AMY SER) RTO GRE) ((AUS AMY SER) HLD)",
        );
        assert_eq!(got[0], "THX ( ( AUS AMY BUD ) RTO GAL ) ( NRN )");
        assert_eq!(got[1], "THX ( ( AUS AMY SER ) RTO GRE ) ( NVR )");
        assert_eq!(got[2], "THX ( ( AUS AMY SER ) HLD ) ( NRS )");
        assert_eq!(got[3], "MIS ( AUS AMY SER MRT ( ALB ) )");
        let got = say(&mut s, "SUB ((AUS AMY SER) RTO ALB)");
        assert_eq!(got, ["THX ( ( AUS AMY SER ) RTO ALB ) ( MBV )"]);
        assert!(s.done());
        assert_eq!(s.orders().0, ["A SER R ALB"]);
    }

    #[test]
    fn adjustment_notes_and_counts() {
        let map = standard();
        let mut b = Board::standard_start();
        b.phase = Phase {
            season: Season::Winter,
            year: 1901,
            kind: PhaseKind::Adjustment,
        };
        // Austria owns Serbia and Greece too, and Vienna is empty: two builds, one site.
        for p in ["SER", "GRE"] {
            b.owner[map.province(p).unwrap() as usize] = Some(Power(0));
        }
        b.units[map.province("VIE").unwrap() as usize] = None;
        let mut s = shown(Power(0), &b);
        assert_eq!(
            s.missing(),
            Some(Missing::Count(-1)),
            "one site: one build possible"
        );
        let got = say(&mut s, "SUB ((AUS AMY SER) BLD) ((AUS AMY BUD) BLD) ((AUS AMY MOS) BLD) ((AUS FLT VIE) BLD) ((AUS AMY BUD) REM)");
        assert_eq!(
            got,
            [
                "THX ( ( AUS AMY SER ) BLD ) ( HSC )",
                "THX ( ( AUS AMY BUD ) BLD ) ( ESC )",
                "THX ( ( AUS AMY MOS ) BLD ) ( HSC )",
                "THX ( ( AUS FLT VIE ) BLD ) ( FAR )",
                "THX ( ( AUS AMY BUD ) REM ) ( NMR )",
                "MIS ( -1 )",
            ]
        );
        assert_eq!(
            say(&mut s, "SUB ((AUS AMY VIE) BLD)"),
            ["THX ( ( AUS AMY VIE ) BLD ) ( MBV )"]
        );
        assert_eq!(say(&mut s, "SUB (AUS WVE)"), ["THX ( AUS WVE ) ( NMB )"]);
        assert_eq!(say(&mut s, "MIS"), ["MIS"], "nothing missing: MIS alone");
        assert!(s.done());
        assert_eq!(s.orders().0, ["A VIE B"]);
    }

    fn press_round(s: &mut Session, level: u8, to: u8) {
        s.begin(&Request {
            expect: Expect::Press(PressRound {
                level,
                to,
                messages: 4,
                chars: 40,
            }),
            limit_ms: 1000,
            send: vec![],
        });
    }

    #[test]
    fn press_requests_round_trip() {
        let r = Request {
            expect: Expect::Press(PressRound {
                level: 20,
                to: 0b101_0110,
                messages: 6,
                chars: 1000,
            }),
            limit_ms: 2000,
            send: vec![Message::Off],
        };
        assert_eq!(Request::decode(&r.encode()), Ok(r));
        assert!(Request::decode(b"P\0\0\0\0\0\0\0\x01\x0a").is_err());
    }

    #[test]
    fn snd_in_a_press_round_is_answered_yes_or_rej_and_kept() {
        // Austria may address everyone but itself and Turkey (eliminated, say).
        let mut s = shown(Power(0), &Board::standard_start());
        press_round(&mut s, 10, 0b011_1110);
        assert!(!s.done(), "a press round lasts until its deadline");
        assert_eq!(
            say(&mut s, "SND (ENG FRA) (PRP (PCE (AUS ENG FRA)))"),
            ["YES ( SND ( ENG FRA ) ( PRP ( PCE ( AUS ENG FRA ) ) ) )"]
        );
        assert_eq!(
            say(&mut s, "SND (SPR 1901) (GER) (PRP (DRW))"),
            ["YES ( SND ( SPR 1901 ) ( GER ) ( PRP ( DRW ) ) )"]
        );
        for refused in [
            "SND (TUR) (PRP (DRW))",
            "SND (AUS) (PRP (DRW))",
            "SND (ITA ITA) (PRP (DRW))",
            "SND (FAL 1901) (ITA) (PRP (DRW))",
            "SND (ITA) (PRP (ALY (AUS ITA) VSS (RUS TUR GER ENG FRA)))",
        ] {
            assert_eq!(
                say(&mut s, refused),
                [format!("REJ ( {} )", to_text(&from_text(refused).unwrap()))],
                "{refused}"
            );
        }
        // Four messages a round (the first SND was two): this one is the last.
        assert!(say(&mut s, "SND (ITA) (FCT (DRW))")[0].starts_with("YES"));
        assert!(say(&mut s, "SND (RUS) (FCT (DRW))")[0].starts_with("REJ"));
        // Above the level: HUH with ERR before the token; bad syntax: HUH; FRM is the server's.
        assert_eq!(
            say(&mut s, "SND (ENG) (PRP (XDO ((AUS AMY VIE) HLD)))"),
            ["HUH ( SND ( ENG ) ( PRP ( ERR XDO ( ( AUS AMY VIE ) HLD ) ) ) )"]
        );
        assert_eq!(
            say(&mut s, "SND (ENG) (PRP (PCE (ENG)))"),
            ["HUH ( SND ( ENG ) ( PRP ( PCE ( ENG ERR ) ) ) )"]
        );
        assert_eq!(
            say(&mut s, "FRM (ENG) (AUS) (PRP (DRW))"),
            ["HUH ( ERR FRM ( ENG ) ( AUS ) ( PRP ( DRW ) ) )"]
        );
        let kept = s.take_press();
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[0].0, vec![Power(1), Power(2)]);
        assert_eq!(kept[2].1.to_text(), "FCT ( DRW )");
        // At level 20 the order proposal is taken.
        press_round(&mut s, 20, 0b011_1110);
        assert!(say(&mut s, "SND (ENG) (PRP (XDO ((AUS AMY VIE) HLD)))")[0].starts_with("YES"));
        // Outside a press round SND is refused whole, whatever it holds.
        s.begin(&Request {
            expect: Expect::Orders,
            limit_ms: 1000,
            send: vec![],
        });
        assert!(s.take_press().is_empty());
        assert_eq!(
            say(&mut s, "SND (ENG) (PRP (DRW))"),
            ["REJ ( SND ( ENG ) ( PRP ( DRW ) ) )"]
        );
        assert_eq!(
            say(&mut s, "SND (ENG) (ENG)"),
            ["REJ ( SND ( ENG ) ( ENG ) )"],
            "malformed too"
        );
        assert!(s.take_press().is_empty());
    }

    #[test]
    fn tme_counts_down_from_the_request() {
        let mut s = shown(Power(0), &Board::standard_start());
        assert_eq!(texts(&s.receive(&dm_of("TME"), 1200).out), ["TME ( 4 )"]);
        assert_eq!(texts(&s.receive(&dm_of("TME"), 4999).out), ["TME ( 1 )"]);
        assert_eq!(texts(&s.receive(&dm_of("TME"), 9000).out), ["TME ( 0 )"]);
    }

    proptest! {
        #[test]
        fn arbitrary_frames_never_panic_and_replay_the_same(frames in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..40), 0..12)) {
            let mut a = shown(Power(2), &Board::standard_start());
            let mut b = a.clone();
            for (i, f) in frames.iter().enumerate() {
                let x = a.receive(f, i as u64);
                let y = b.receive(f, i as u64);
                prop_assert_eq!(x, y);
            }
            prop_assert_eq!(a.take_lines(), b.take_lines());
        }
    }
}
