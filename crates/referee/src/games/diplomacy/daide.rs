//! The DAIDE seats of a Diplomacy match (`daide`, `daide-cmd:`): what each is told when, and
//! the driver's own copy of each one's conversation.
//!
//! Every phase, every DAIDE seat still connected is sent the `ORD` results of every unit of
//! every power for each phase adjudicated since its last message, `SCO` when a Fall turn has
//! updated the centres, `CCD` for each power newly in civil disorder, and `NOW` (the first phase
//! starts with `HLO` and `SCO` instead of results). A seat whose power orders now is asked (its
//! request waits for orders); the others are only told. With press (level 10 and up), each
//! press round asks every DAIDE seat of a power that talks for its `SND`s until the round's
//! deadline, the phase's messages coming with the first round; the press delivered to a seat
//! comes as `FRM`s with its next request. At the end: the last results, `SCO`,
//! `NOW`, `SLO` or `DRW`, `SMR` and `OFF`. Each message and each frame the client sent is
//! recorded in a `daide` replay event (readable); the seat record keeps the client's frames
//! with their arrival times, from which a re-run derives the same conversation.

use std::net::SocketAddr;
use std::time::Duration;

use kakehiki_agent::ClientProcess;
use tokio::net::TcpStream;

use kakehiki_core::exchange::ExchangeOutcome;
use kakehiki_core::SeatErrorKind;
use kakehiki_core::SeatSpec;
use kakehiki_diplomacy::daide::message::{Hello, SmrEntry, Variant};
use kakehiki_diplomacy::daide::server::{decode_inbound, Expect, PressRound, Request, Session};
use kakehiki_diplomacy::daide::{names, orders, Message, Press, Token};
use kakehiki_diplomacy::replay_v1::START;
use kakehiki_diplomacy::wire::{Dropped, Params, PressMsg};
use kakehiki_diplomacy::{
    order::parse_order, standard, Board, DiplomacyGame, EndReason, PhaseRecord, Power, Season,
};
use serde_json::{json, Value};

use super::{Run, END_GRACE, PRESS};
use crate::seat::daide::DaideSeat;
use crate::seat::{Answer, Ask, Seat};

/// The driver's side of the match's DAIDE seats.
pub(crate) struct DaideSeats {
    sessions: Vec<Option<Session>>,
    /// Each seat has had its `HLO`.
    hello: [bool; 7],
    /// `ccd[seat][power]`: the seat was told the power is in civil disorder.
    ccd: [[bool; 7]; 7],
    /// The results (and `SCO`) of the last step.
    step: Vec<Message>,
    /// The position before the step being played.
    before: Board,
    seed: u64,
    params: Params,
    /// The year each power was eliminated.
    out: [Option<i16>; 7],
    /// Adjudications so far (the step each seat's phase messages are of).
    serial: u64,
    /// The step whose messages each seat has been sent.
    shown: [Option<u64>; 7],
    /// The `FRM`s waiting for each seat's next request.
    inbox: [Vec<Message>; 7],
    /// The press accepted from DAIDE seats in this press round: sender, addressees, message.
    sent: Vec<(Power, Vec<Power>, Press)>,
}

/// The driver's side of a DAIDE seat: what it is asked and told, and what its answers amount to.
impl Run {
    /// The request of DAIDE seat `p`: the handshake, or its phase's messages (with the
    /// driver's copy of its conversation hearing them, unless nothing is sent: a seat down).
    pub(super) fn daide_ask(&mut self, p: Power, at: &str, kind: &str, limit_ms: u64) -> Ask {
        let req = match kind {
            START => self.daide.handshake(),
            _ => Request {
                expect: match kind {
                    PRESS => Expect::Press(self.daide.press_round(p, &self.game)),
                    _ => Expect::Orders,
                },
                limit_ms,
                send: self.daide.phase_update(p, &self.game),
            },
        };
        if self.table.down(p.index()).is_none() {
            if let Some(s) = self.daide.session(p) {
                s.begin(&req);
            }
        }
        let limit = Duration::from_millis(limit_ms);
        let mut ask = Ask::new(p.index(), at, kind, req.encode(), limit);
        ask.handshake = kind == START;
        ask
    }

    /// The answer of a DAIDE seat: its frames taken by the driver's copy of its conversation
    /// (recorded as a `daide` event), and its reply as the JSON-lines reply it amounts to (the
    /// handshake done, or the orders accepted by the deadline with its draw vote).
    pub(super) fn judge_daide(
        &mut self,
        p: Power,
        at: &str,
        kind: &str,
        a: Answer,
    ) -> Option<(String, bool)> {
        let session = self.daide.session(p)?;
        for (ms, raw) in decode_inbound(&a.bytes).unwrap_or_default() {
            session.receive(&raw, ms);
        }
        let reply = match kind {
            START => session.ready().then(|| json!({"ready": true})),
            PRESS => {
                // The press accepted, one message per addressee, as a JSON-lines bot sends it
                // (the same limits apply); each SND is kept whole for its FRMs.
                let mut messages = Vec::new();
                for (to, press) in session.take_press() {
                    for q in &to {
                        messages.push(json!({"to": q.name(), "text": press.to_text()}));
                    }
                    self.daide.sent.push((p, to, press));
                }
                Some(json!({ "messages": messages }))
            }
            _ => {
                let (orders, draw) = session.orders();
                Some(json!({"orders": orders, "draw": draw}))
            }
        };
        if let Some(e) = self.daide.event(p, at) {
            self.table.record(&e);
        }
        match a.outcome {
            ExchangeOutcome::Reply | ExchangeOutcome::Timeout => {
                reply.map(|r| (r.to_string(), false))
            }
            _ => self.judge(p, a),
        }
    }

    /// Press delivered in a round, as DAIDE seats get it: each message to a DAIDE power waits
    /// as an `FRM` for its next request (a DAIDE sender's with every addressee of its `SND`);
    /// a JSON-lines bot's message whose text is no DAIDE press of the game's level is dropped
    /// instead, a fault of its sender. At level 0 nothing is forwarded to a DAIDE seat.
    pub(super) fn daide_deliver(
        &mut self,
        delivered: &mut Vec<PressMsg>,
        dropped: &mut Vec<Dropped>,
        at: &str,
    ) {
        let level = self.params.daide_level;
        // Each SND with the addressees it has not been delivered to yet.
        let mut sent: Vec<_> = std::mem::take(&mut self.daide.sent)
            .into_iter()
            .map(|(from, to, press)| (from, to.clone(), to, press))
            .collect();
        if level == 0 {
            return;
        }
        let mut kept = Vec::new();
        for m in std::mem::take(delivered) {
            let (Some(from), Some(to)) = (Power::from_name(&m.from), Power::from_name(&m.to))
            else {
                continue;
            };
            if !self.daide.is_daide(to) {
                kept.push(m);
                continue;
            }
            let snd = sent.iter_mut().find(|(f, left, _, press)| {
                *f == from && left.contains(&to) && press.to_text() == m.text
            });
            let frm = match snd {
                Some((_, left, list, press)) => {
                    left.retain(|&q| q != to);
                    Ok(Message::Frm(from, list.clone(), press.clone()))
                }
                None => {
                    Press::from_text_at(&m.text, level).map(|p| Message::Frm(from, vec![to], p))
                }
            };
            match frm {
                Ok(frm) => {
                    self.daide.inbox[to.index()].push(frm);
                    kept.push(m);
                }
                Err(why) => {
                    let reason = format!("{to} speaks DAIDE: {why}");
                    let fault = format!("press message to {to} dropped: {reason}");
                    self.fault(from, at, SeatErrorKind::InvalidReply, fault);
                    dropped.push(Dropped {
                        from: m.from,
                        to: m.to,
                        reason,
                    });
                }
            }
        }
        *delivered = kept;
    }

    /// Send a DAIDE seat `messages` without waiting for anything (a phase in which its power
    /// has nothing to order, the end of the game).
    pub(super) async fn tell_daide(&mut self, p: Power, at: &str, messages: Vec<Message>) {
        if self.table.down(p.index()).is_some() || messages.is_empty() {
            return;
        }
        let req = Request {
            expect: Expect::Nothing,
            limit_ms: END_GRACE.as_millis() as u64,
            send: messages,
        };
        if let Some(s) = self.daide.session(p) {
            s.begin(&req);
        }
        if let Some(e) = self.daide.event(p, at) {
            self.table.record(&e);
        }
        self.table
            .tell(p.index(), at, "daide", req.encode(), END_GRACE)
            .await;
    }
}

/// The seat of DAIDE power `power`: its connection, or why it has none (`None`: a `daide` seat
/// whose client never connected stays as it was started).
pub(super) fn seat(
    conn: Result<(TcpStream, SocketAddr), Option<String>>,
    client: Option<ClientProcess>,
    power: Power,
    votes: bool,
    cannot: impl Fn(&dyn std::fmt::Display) -> String,
) -> Option<Seat> {
    Some(match (conn, client) {
        (Ok((stream, _)), client) => {
            Seat::Live(Box::new(DaideSeat::connected(stream, client, power, votes)))
        }
        (Err(why), Some(client)) => Seat::Live(Box::new(DaideSeat::unconnected(
            Some(client),
            power,
            cannot(&why.unwrap_or_default()),
        ))),
        (Err(_), None) => return None,
    })
}

fn secs(ms: u64) -> Option<i16> {
    Some(ms.div_ceil(1000).min(8191) as i16)
}

impl DaideSeats {
    /// The DAIDE seats among `seats` (spec strings, as the replay header keeps them).
    pub fn new(seats: &[String], params: Params, seed: u64) -> DaideSeats {
        let sessions = seats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                matches!(s.parse::<SeatSpec>(), Ok(SeatSpec::Daide(_)))
                    .then(|| Session::new(Power(i as u8), params.rules.draw_votes))
            })
            .collect();
        DaideSeats {
            sessions,
            hello: [false; 7],
            ccd: [[false; 7]; 7],
            step: Vec::new(),
            before: Board::standard_start(),
            seed,
            params,
            out: [None; 7],
            serial: 0,
            shown: [None; 7],
            inbox: Default::default(),
            sent: Vec::new(),
        }
    }

    /// Whether `p`'s seat speaks DAIDE.
    pub fn is_daide(&self, p: Power) -> bool {
        matches!(self.sessions.get(p.index()), Some(Some(_)))
    }

    /// The DAIDE powers.
    pub fn powers(&self) -> Vec<Power> {
        Power::ALL
            .into_iter()
            .filter(|&p| self.is_daide(p))
            .collect()
    }

    /// The driver's copy of `p`'s conversation.
    pub fn session(&mut self, p: Power) -> Option<&mut Session> {
        self.sessions.get_mut(p.index()).and_then(Option::as_mut)
    }

    /// The handshake request.
    pub fn handshake(&self) -> Request {
        Request {
            expect: kakehiki_diplomacy::daide::server::Expect::Handshake,
            limit_ms: self.params.limits.start_ms,
            send: Vec::new(),
        }
    }

    fn passcode(&self, p: Power) -> i16 {
        let mix = self
            .seed
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            .wrapping_add(u64::from(p.0) * 0x2545_F491);
        (100 + (mix >> 40) % 8000) as i16
    }

    /// Before the engine adjudicates: the position the orders are given in.
    pub fn before_step(&mut self, game: &DiplomacyGame) {
        if !self.sessions.iter().any(Option::is_some) {
            return;
        }
        self.before = game.board().clone();
    }

    /// After the engine adjudicated `records`: their `ORD` results, and `SCO` if a Fall turn
    /// ended; eliminations are dated.
    pub fn after_step(&mut self, game: &DiplomacyGame, records: &[PhaseRecord]) {
        if !self.sessions.iter().any(Option::is_some) {
            return;
        }
        let map = standard();
        self.serial += 1;
        self.step.clear();
        let mut board = self.before.clone();
        for r in records {
            let typed: Vec<_> = r
                .orders
                .iter()
                .filter_map(|(p, o)| parse_order(map, o).ok().map(|o| (*p, o)))
                .collect();
            let (lines, after) = orders::ord_lines(map, &board, &typed);
            let turn = names::turn(r.phase);
            self.step
                .extend(lines.into_iter().map(|(o, res)| Message::Ord(turn, o, res)));
            board = after;
        }
        let fall_over = records.iter().any(|r| r.phase.season == Season::Fall)
            && game.board().phase.season != Season::Fall;
        if fall_over {
            self.step.push(self.sco(game));
        }
        let year = records.last().map_or(0, |r| r.phase.year);
        for p in Power::ALL {
            if game.is_eliminated(p) && self.out[p.index()].is_none() {
                self.out[p.index()] = Some(year.min(8191) as i16);
            }
        }
    }

    fn sco(&self, game: &DiplomacyGame) -> Message {
        Message::Sco(Some(names::sco(standard(), game.board())))
    }

    fn now(&self, game: &DiplomacyGame) -> Message {
        let b = game.board();
        Message::Now(Some((
            names::turn(b.phase),
            names::now_units(standard(), b),
        )))
    }

    /// What `p`'s press round allows: the level, the surviving others, the limits.
    pub fn press_round(&self, p: Power, game: &DiplomacyGame) -> PressRound {
        let to = Power::ALL
            .into_iter()
            .filter(|&q| q != p && !game.is_eliminated(q))
            .fold(0u8, |m, q| m | 1 << q.0);
        let l = &self.params.limits;
        PressRound {
            level: self.params.daide_level,
            to,
            messages: l.press_messages.min(u16::MAX as usize) as u16,
            chars: l.press_chars.min(u32::MAX as usize) as u32,
        }
    }

    /// What `p`'s seat is sent with its next request in a phase: the phase's messages
    /// ([`DaideSeats::update`]) unless it has had them (in a press round), then the press
    /// delivered to it since its last request.
    pub fn phase_update(&mut self, p: Power, game: &DiplomacyGame) -> Vec<Message> {
        let mut v = match self.shown[p.index()] == Some(self.serial) {
            true => Vec::new(),
            false => self.update(p, game),
        };
        self.shown[p.index()] = Some(self.serial);
        v.append(&mut self.inbox[p.index()]);
        v
    }

    /// What `p`'s seat is sent as a phase begins.
    pub fn update(&mut self, p: Power, game: &DiplomacyGame) -> Vec<Message> {
        let mut v = Vec::new();
        if !self.hello[p.index()] {
            self.hello[p.index()] = true;
            let l = &self.params.limits;
            let tok = |n: &str| Token::named(n).unwrap_or(Token(0x4903));
            let variant = |n: &str, value| Variant {
                param: tok(n),
                value,
            };
            v.push(Message::Hlo(Some(Hello {
                power: p,
                passcode: self.passcode(p),
                variants: vec![
                    variant("LVL", Some(i16::from(self.params.daide_level))),
                    variant("MTL", secs(l.movement_ms)),
                    variant("RTL", secs(l.retreat_ms)),
                    variant("BTL", secs(l.adjustment_ms)),
                ],
            })));
            v.push(self.sco(game));
        } else {
            v.extend(self.step.iter().cloned());
        }
        for q in game.civil_disorder_powers() {
            if q != p && !std::mem::replace(&mut self.ccd[p.index()][q.index()], true) {
                v.push(Message::Ccd(q));
            }
        }
        v.push(self.now(game));
        v
    }

    /// What `p`'s seat is sent when the game is over (`names`: every seat's player name).
    pub fn ending(
        &mut self,
        p: Power,
        game: &DiplomacyGame,
        seat_names: &[String],
    ) -> Vec<Message> {
        let told = self.hello[p.index()];
        let mut v = self.update(p, game);
        if told && self.step.is_empty() {
            // Nothing was adjudicated since the last NOW (a draw voted before the phase): the
            // position the client has is the final one.
            v.retain(|m| !matches!(m, Message::Now(_)));
        }
        v.push(match game.end_reason() {
            Some(EndReason::Solo(w)) => Message::Slo(w),
            _ => Message::Drw(Vec::new()),
        });
        let last = game
            .history()
            .last()
            .map_or(game.board().phase, |r| r.phase);
        let entries = Power::ALL
            .into_iter()
            .map(|q| {
                let (name, version) = match self.session(q).and_then(|s| s.name().cloned()) {
                    Some(nv) => nv,
                    None => (
                        seat_names.get(q.index()).cloned().unwrap_or_default(),
                        String::new(),
                    ),
                };
                SmrEntry {
                    power: q,
                    name: ascii(&name),
                    version: ascii(&version),
                    centres: game.centers(q) as i16,
                    eliminated: self.out[q.index()],
                }
            })
            .collect();
        v.push(Message::Smr(Some((names::turn(last), entries))));
        v.push(Message::Off);
        v
    }

    /// The replay event of `p`'s conversation since the last one (`None` when nothing was said).
    pub fn event(&mut self, p: Power, at: &str) -> Option<Value> {
        let lines: Vec<String> = self
            .session(p)?
            .take_lines()
            .iter()
            .map(ToString::to_string)
            .collect();
        (!lines.is_empty()).then(|| {
            json!({"event": "daide", "seat": p.index(), "power": p.name(), "at": at, "lines": lines})
        })
    }
}

/// Text as DAIDE carries it: printable ASCII, without the quote.
fn ascii(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            ' '..='~' if c != '\'' => c,
            _ => '?',
        })
        .take(200)
        .collect()
}
