//! The adjudication service of spec §5: one JSON object per line in, one per line out.
//!
//! [`Service::line`] turns one input line into one output line; [`serve`] runs it over a reader
//! and a writer. No state is kept between lines (the resolver's scratch space is only reused).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::sync::{Condvar, Mutex, OnceLock};

use serde::de::{self, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::adjudicate::adjudicate;
use crate::board::{Board, Dislodged};
use crate::map::{bit, bits, Loc, Map, Prov, ProvinceKind, NUM_PROVINCES};
use crate::movement::Resolver;
use crate::order::{parse_location, parse_order, parse_unit, Order};
use crate::outcome::{OrderResult, VoidReason};
use crate::types::{Phase, PhaseKind, Power, Unit, UnitKind};

mod fast;

/// A JSON object's entries in input order.
struct Entries<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Entries<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Entries<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::new();
                while let Some((k, val)) = m.next_entry::<String, &'a RawValue>()? {
                    v.push((k, val));
                }
                Ok(Entries(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Input<'a> {
    #[serde(borrow)]
    phase: Option<&'a RawValue>,
    #[serde(borrow)]
    units: Option<&'a RawValue>,
    #[serde(borrow)]
    dislodged: Option<&'a RawValue>,
    #[serde(borrow)]
    centers: Option<&'a RawValue>,
    #[serde(borrow)]
    homes: Option<&'a RawValue>,
    #[serde(borrow)]
    orders: Option<&'a RawValue>,
}

/// A line the service cannot adjudicate (its `{"error": ...}` reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LineError(pub String);

fn err<T>(msg: impl Into<String>) -> Result<T, LineError> {
    Err(LineError(msg.into()))
}

fn entries<'a>(raw: &'a RawValue, what: &str) -> Result<Vec<(String, &'a RawValue)>, LineError> {
    match serde_json::from_str::<Entries<'a>>(raw.get()) {
        Ok(e) => Ok(e.0),
        Err(_) => err(format!("{what} must be an object")),
    }
}

fn strings(raw: &RawValue, what: &str) -> Result<Vec<String>, LineError> {
    serde_json::from_str::<Vec<String>>(raw.get())
        .or_else(|_| err(format!("{what} must be a list of strings")))
}

fn power(name: &str) -> Result<Power, LineError> {
    Power::from_name(name).ok_or_else(|| LineError(format!("unknown power {name:?}")))
}

/// A position's unit text into a unit, checking it may stand there.
fn board_unit(map: &Map, power: Power, text: &str) -> Result<Unit, LineError> {
    let u =
        parse_unit(map, text).map_err(|e| LineError(format!("malformed unit {text:?}: {e}")))?;
    let kind = u.kind.expect("parse_unit requires a letter");
    let p = u.prov;
    let loc = match kind {
        UnitKind::Army => {
            if map.kind(p) == ProvinceKind::Sea {
                return err(format!("army at sea: {text:?}"));
            }
            if u.coast.is_some() {
                return err(format!("army with a coast: {text:?}"));
            }
            p
        }
        UnitKind::Fleet => {
            if map.kind(p) == ProvinceKind::Land {
                return err(format!("fleet inland: {text:?}"));
            }
            if map.is_split(p) {
                match u.coast {
                    Some(c) => c,
                    None => {
                        return err(format!(
                            "fleet in a split-coast province without coast: {text:?}"
                        ))
                    }
                }
            } else {
                p
            }
        }
    };
    Ok(Unit { power, kind, loc })
}

fn push_str(out: &mut String, s: &str) {
    out.push('"');
    push_escaped(out, s);
    out.push('"');
}

/// `s` as the inside of a JSON string: `"`, `\\` and control characters escaped.
fn push_escaped(out: &mut String, s: &str) {
    let b = s.as_bytes();
    let mut start = 0;
    while let Some(off) = b[start..]
        .iter()
        .position(|&c| c < 0x20 || c == b'"' || c == b'\\')
    {
        let i = start + off;
        out.push_str(&s[start..i]);
        match b[i] {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            c => {
                let _ = write!(out, "\\u{:04x}", c);
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
}

/// The adjudication service; reuses its scratch space between lines.
pub struct Service {
    map: &'static Map,
    resolver: Resolver,
    /// `"A PAR"`, `"F STP/SC"` (quotes included) by unit kind and location.
    unit_json: &'static [Vec<String>; 2],
    /// Locations by the rank of their name.
    by_rank: &'static [Loc],
    /// Scratch: one error message before it is escaped into the output.
    msg: String,
}

impl Default for Service {
    fn default() -> Self {
        Self::new()
    }
}

/// Parsed input of one line.
pub struct Request<'a> {
    /// The position (phase included).
    pub board: Board,
    /// Orders that parsed, in input order.
    pub orders: Vec<(Power, Order)>,
    /// Every order as given: (power, text, index into `orders` or the parse error).
    pub given: Vec<(Power, JsonText<'a>, Result<usize, VoidReason>)>,
}

/// The text of a JSON string of the input line.
#[derive(Debug, Clone)]
pub struct JsonText<'a>(Cow<'a, str>);

impl JsonText<'_> {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Append the text as the inside of a JSON string.
    fn push_json(&self, out: &mut String) {
        match &self.0 {
            // Borrowed from the line: the literal had no escape, so it holds no quote, backslash
            // or control character (JSON allows none unescaped) and is valid inside one as is.
            Cow::Borrowed(t) => out.push_str(t),
            Cow::Owned(t) => push_escaped(out, t),
        }
    }
}

/// A JSON string, borrowed from the line when it has no escapes.
struct S<'a>(Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for S<'a> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = S<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(S(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(S(Cow::Owned(v.to_string())))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

/// A JSON object as (key, value) pairs in input order.
struct Ordered<K, T>(Vec<(K, T)>);

impl<'de, K: Deserialize<'de>, T: Deserialize<'de>> Deserialize<'de> for Ordered<K, T> {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<K, T>(std::marker::PhantomData<(K, T)>);
        impl<'de, K: Deserialize<'de>, T: Deserialize<'de>> Visitor<'de> for V<K, T> {
            type Value = Ordered<K, T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = Vec::with_capacity(8);
                while let Some(e) = m.next_entry::<K, T>()? {
                    v.push(e);
                }
                Ok(Ordered(v))
            }
        }
        d.deserialize_map(V(std::marker::PhantomData))
    }
}

type Lists<'a> = Ordered<S<'a>, Vec<S<'a>>>;

/// `dislodged`: power → unit → retreat options.
type DislodgedInput<'a> = Ordered<S<'a>, Ordered<S<'a>, Vec<S<'a>>>>;

/// The whole line, typed, in one pass (the fast path; shape errors are diagnosed separately).
#[derive(Deserialize)]
struct Parsed<'a> {
    #[serde(borrow)]
    phase: Option<S<'a>>,
    #[serde(borrow)]
    units: Option<Lists<'a>>,
    #[serde(borrow)]
    dislodged: Option<DislodgedInput<'a>>,
    #[serde(borrow)]
    centers: Option<Lists<'a>>,
    #[serde(borrow)]
    homes: Option<Lists<'a>>,
    #[serde(borrow)]
    orders: Option<Lists<'a>>,
}

/// The specific reason a line does not have the input's shape.
fn diagnose(line: &str) -> LineError {
    let input: Input = match serde_json::from_str(line) {
        Ok(i) => i,
        Err(e) if e.is_data() => return LineError("input line is not a JSON object".into()),
        Err(e) => return LineError(format!("invalid JSON: {e}")),
    };
    let check = || -> Result<(), LineError> {
        if let Some(p) = input.phase {
            serde_json::from_str::<String>(p.get())
                .map_err(|_| LineError("phase must be a string".into()))?;
        }
        for (field, raw) in [
            ("units", input.units),
            ("centers", input.centers),
            ("homes", input.homes),
            ("orders", input.orders),
        ] {
            if let Some(raw) = raw {
                for (_, list) in entries(raw, field)? {
                    strings(list, &format!("{field} of a power"))?;
                }
            }
        }
        if let Some(raw) = input.dislodged {
            for (_, list) in entries(raw, "dislodged")? {
                for (_, opts) in entries(list, "dislodged units of a power")? {
                    strings(opts, "retreat options")?;
                }
            }
        }
        Ok(())
    };
    match check() {
        Err(e) => e,
        Ok(()) => LineError("input line does not have the expected shape".into()),
    }
}

impl Service {
    /// A service on the standard map.
    pub fn new() -> Self {
        static UNIT_JSON: OnceLock<[Vec<String>; 2]> = OnceLock::new();
        static BY_RANK: OnceLock<Vec<Loc>> = OnceLock::new();
        let map = crate::map::standard();
        let unit_json = UNIT_JSON.get_or_init(|| {
            let names = |letter: char| -> Vec<String> {
                (0..map.num_locations())
                    .map(|l| format!("\"{letter} {}\"", map.loc_name(l as Loc)))
                    .collect()
            };
            [names('A'), names('F')]
        });
        let by_rank = BY_RANK.get_or_init(|| {
            // Location sets are u128 bitsets throughout the crate.
            assert!(
                map.num_locations() <= 128,
                "the standard map has 81 locations"
            );
            let mut v = vec![0; map.num_locations()];
            for l in 0..map.num_locations() {
                v[usize::from(map.loc_rank(l as Loc))] = l as Loc;
            }
            v
        });
        Service {
            map,
            resolver: Resolver::new(),
            unit_json,
            by_rank,
            msg: String::with_capacity(128),
        }
    }

    /// Parse and validate one input line.
    pub fn request<'a>(&self, line: &'a str) -> Result<Request<'a>, LineError> {
        match fast::request(self, line) {
            Some(r) => Ok(r),
            None => self.request_checked(line),
        }
    }

    /// [`Service::request`] by the reference path: the line as serde's derive reads it, then
    /// checked field by field in a fixed order, so that a line with several faults is always
    /// told the same one.
    fn request_checked<'a>(&self, line: &'a str) -> Result<Request<'a>, LineError> {
        let parsed: Parsed<'a> = match serde_json::from_str(line) {
            Ok(p) => p,
            Err(_) => return Err(diagnose(line)),
        };
        self.build(parsed)
    }

    fn build<'a>(&self, input: Parsed<'a>) -> Result<Request<'a>, LineError> {
        let map = self.map;
        let phase_text = input
            .phase
            .ok_or_else(|| LineError("missing phase".into()))?;
        let phase = Phase::parse(&phase_text.0).map_err(|e| LineError(e.to_string()))?;
        let mut board = Board::empty(map, phase);
        let units = input
            .units
            .ok_or_else(|| LineError("missing units".into()))?;
        for (pw, list) in units.0 {
            let pw = power(&pw.0)?;
            for text in list {
                let u = board_unit(map, pw, &text.0)?;
                let p = map.prov_of(u.loc) as usize;
                if board.units[p].is_some() {
                    return err(format!("two units in {}", map.prov_name(p as Prov)));
                }
                board.units[p] = Some(u);
            }
        }
        if let Some(dis) = input.dislodged {
            self.place_dislodged(&mut board, dis)?;
        }
        match input.centers {
            None => board.set_start_centers(map),
            Some(cs) => {
                for (pw, list) in cs.0 {
                    let pw = power(&pw.0)?;
                    for text in list {
                        let p = self.center(&text.0)?;
                        if board.owner[p as usize].is_some() {
                            return err(format!("centre {} owned twice", map.prov_name(p)));
                        }
                        board.owner[p as usize] = Some(pw);
                    }
                }
            }
        }
        if let Some(hs) = input.homes {
            board.homes = [0; 7];
            for (pw, list) in hs.0 {
                let pw = power(&pw.0)?;
                for text in list {
                    let p = self.center(&text.0)?;
                    board.homes[pw.index()] |= bit(p);
                }
            }
        }
        let mut orders = Vec::with_capacity(40);
        let mut given = Vec::with_capacity(40);
        if let Some(os) = input.orders {
            for (pw, list) in os.0 {
                let pw = power(&pw.0)?;
                for text in list {
                    match parse_order(map, &text.0) {
                        Ok(o) => {
                            given.push((pw, JsonText(text.0), Ok(orders.len())));
                            orders.push((pw, o));
                        }
                        Err(e) => given.push((pw, JsonText(text.0), Err(VoidReason::Parse(e)))),
                    }
                }
            }
        }
        Ok(Request {
            board,
            orders,
            given,
        })
    }

    /// Place the dislodged units of a retreat phase, with their options, on `board` (whose
    /// units are all placed).
    fn place_dislodged(&self, board: &mut Board, dis: DislodgedInput<'_>) -> Result<(), LineError> {
        let map = self.map;
        let phase = board.phase;
        for (pw, list) in dis.0 {
            let pw = power(&pw.0)?;
            for (text, opts) in list.0 {
                if phase.kind != PhaseKind::Retreat {
                    return err("dislodged units outside a retreat phase");
                }
                let u = board_unit(map, pw, &text.0)?;
                let p = map.prov_of(u.loc) as usize;
                if board.dislodged[p].is_some() {
                    return err(format!(
                        "two dislodged units in {}",
                        map.prov_name(p as Prov)
                    ));
                }
                let mut options = 0u128;
                for o in opts {
                    let l = self.option(board, &u, &o.0)?;
                    options |= bit(l);
                }
                board.dislodged[p] = Some(Dislodged { unit: u, options });
            }
        }

        Ok(())
    }

    fn center(&self, text: &str) -> Result<Prov, LineError> {
        if let Some(p) = self.map.province(text) {
            if self.map.is_sc(p) {
                return Ok(p);
            }
        }
        let d = parse_location(self.map, text)
            .map_err(|e| LineError(format!("malformed centre {text:?}: {e}")))?;
        if !self.map.is_sc(d.prov) {
            return err(format!(
                "{} is not a supply centre",
                self.map.prov_name(d.prov)
            ));
        }
        Ok(d.prov)
    }

    fn option(&self, board: &Board, u: &Unit, text: &str) -> Result<Loc, LineError> {
        let map = self.map;
        let d = parse_location(map, text)
            .map_err(|e| LineError(format!("malformed retreat option {text:?}: {e}")))?;
        let bad = || {
            LineError(format!(
                "retreat option {text:?} unreachable for {}",
                map.unit_name(u)
            ))
        };
        let l = match u.kind {
            UnitKind::Army => {
                if map.army_adj(map.prov_of(u.loc)) & bit(d.prov) == 0 {
                    return Err(bad());
                }
                d.prov
            }
            UnitKind::Fleet => crate::movement::fleet_dest(map, u.loc, &d).map_err(|_| bad())?,
        };
        if board.units[d.prov as usize].is_some() {
            return err(format!(
                "retreat option {} is occupied",
                map.prov_name(d.prov)
            ));
        }
        Ok(l)
    }

    /// Adjudicate one input line and return the output line (without newline).
    pub fn line(&mut self, line: &str) -> String {
        let mut s = String::with_capacity(1536);
        self.line_into(line, &mut s);
        s
    }

    /// Adjudicate one input line and append the output line (without newline) to `out`.
    pub fn line_into(&mut self, line: &str, out: &mut String) {
        match self.request(line) {
            Ok(req) => self.answer_into(req, out),
            Err(e) => {
                out.push_str("{\"error\":");
                push_str(out, &e.0);
                out.push('}');
            }
        }
    }

    /// One input line as bytes, as [`serve`] sees it: blank lines (only whitespace) give no
    /// output and return `false`; otherwise the output line and its LF are appended to `out`.
    pub fn bytes_into(&mut self, line: &[u8], out: &mut String) -> bool {
        match std::str::from_utf8(line) {
            Ok(l) if l.trim().is_empty() => return false,
            Ok(l) => self.line_into(l, out),
            Err(_) => out.push_str("{\"error\":\"input line is not valid UTF-8\"}"),
        }
        out.push('\n');
        true
    }

    /// Adjudicate a parsed request and format the output line.
    pub fn answer(&mut self, req: Request<'_>) -> String {
        let mut s = String::with_capacity(1536);
        self.answer_into(req, &mut s);
        s
    }

    /// Adjudicate a parsed request and append the output line to `s`.
    pub fn answer_into(&mut self, req: Request<'_>, s: &mut String) {
        let map = self.map;
        let Request {
            mut board,
            orders,
            given,
        } = req;
        let phase = board.phase;
        let mut out = adjudicate(&mut self.resolver, map, &mut board, &orders);
        // Lists of units are sorted armies first, then by location name. The power comes last
        // (never needed, since a location holds one unit) to make every key distinct.
        let key = |u: &Unit| -> u64 {
            u64::from(u.kind == UnitKind::Fleet) << 16
                | u64::from(map.loc_rank(u.loc)) << 8
                | u.power.index() as u64
        };
        let unit_json = &self.unit_json;
        let unit = |s: &mut String, u: &Unit| {
            s.push_str(&unit_json[(u.kind == UnitKind::Fleet) as usize][u.loc as usize]);
        };
        s.push_str("{\"phase\":\"");
        push_phase(s, phase);
        s.push_str("\",\"next_phase\":\"");
        push_phase(s, board.phase);
        s.push_str("\",\"results\":{");
        // Results as sets of location ranks, armies then fleets: a set's bits come out in order.
        // (Two results for one location cannot happen; if they did, sort instead.)
        let by_rank = self.by_rank;
        let mut sets = [0u128; 2];
        let mut index = [[0u16; 128]; 2];
        let mut clash = false;
        for (i, (u, _)) in out.results.iter().enumerate() {
            let k = (u.kind == UnitKind::Fleet) as usize;
            let r = map.loc_rank(u.loc);
            clash |= sets[k] & bit(r) != 0;
            sets[k] |= bit(r);
            index[k][r as usize] = i as u16;
        }
        let mut n = 0;
        let mut result = |s: &mut String, (u, r): &(Unit, OrderResult)| {
            if n > 0 {
                s.push(',');
            }
            n += 1;
            unit(s, u);
            s.push_str(":\"");
            s.push_str(r.as_str());
            s.push('"');
        };
        if clash || out.results.len() > usize::from(u16::MAX) {
            out.results.sort_by_key(|(u, _)| key(u));
            for e in &out.results {
                result(s, e);
            }
        } else {
            for (k, set) in sets.into_iter().enumerate() {
                for r in bits(set) {
                    result(s, &out.results[usize::from(index[k][r as usize])]);
                }
            }
        }
        s.push_str("},\"units\":{");
        // Units by power in seat order, then armies before fleets, by location name: as sets
        // of location ranks (a location holds one unit).
        let mut ranks = [[0u128; 2]; 7];
        for u in board.units.iter().flatten() {
            ranks[u.power.index()][(u.kind == UnitKind::Fleet) as usize] |=
                bit(map.loc_rank(u.loc));
        }
        let mut first = true;
        for pw in Power::ALL {
            let sets = ranks[pw.index()];
            if sets == [0, 0] {
                continue;
            }
            push_power_key(s, &mut first, pw, '[');
            let mut n = 0;
            for (k, set) in sets.into_iter().enumerate() {
                for r in bits(set) {
                    if n > 0 {
                        s.push(',');
                    }
                    n += 1;
                    s.push_str(&unit_json[k][usize::from(by_rank[r as usize])]);
                }
            }
            s.push(']');
        }
        s.push_str("},\"dislodged\":{");
        if board.has_dislodged() {
            let mut first = true;
            for pw in Power::ALL {
                let mut ds: Vec<&Dislodged> = board.dislodged_of(pw).collect();
                if ds.is_empty() {
                    continue;
                }
                ds.sort_by_key(|d| key(&d.unit));
                push_power_key(s, &mut first, pw, '{');
                for (i, d) in ds.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    unit(s, &d.unit);
                    s.push_str(":[");
                    let mut opts: Vec<Loc> = crate::map::bits(d.options).collect();
                    opts.sort_by_key(|&l| map.loc_rank(l));
                    for (j, &o) in opts.iter().enumerate() {
                        if j > 0 {
                            s.push(',');
                        }
                        s.push('"');
                        s.push_str(map.loc_name(o));
                        s.push('"');
                    }
                    s.push(']');
                }
                s.push('}');
            }
        }
        s.push_str("},\"destroyed\":[");
        out.destroyed.sort_unstable_by_key(key);
        for (i, u) in out.destroyed.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            unit(s, u);
        }
        s.push_str("],\"centers\":{");
        // Each power's centres in province order.
        let mut owned = [0u128; 7];
        for (p, o) in board.owner.iter().enumerate() {
            if let Some(pw) = o {
                owned[pw.index()] |= bit(p as Prov);
            }
        }
        let mut first = true;
        for pw in Power::ALL {
            let cs = owned[pw.index()];
            if cs == 0 {
                continue;
            }
            push_power_key(s, &mut first, pw, '[');
            for (i, p) in crate::map::bits(cs).enumerate() {
                if i > 0 {
                    s.push(',');
                }
                s.push('"');
                s.push_str(map.prov_name(p));
                s.push('"');
            }
            s.push(']');
        }
        s.push_str("},\"errors\":[");
        // Errors in input order: parse failures where they stood, adjudication errors by index.
        let msg = &mut self.msg;
        let mut adj_errors = out.errors.iter().peekable();
        let mut n = 0;
        for (pw, text, r) in &given {
            let mut emit = |s: &mut String, reason: &VoidReason| {
                if n > 0 {
                    s.push(',');
                }
                n += 1;
                s.push('"');
                s.push_str(pw.name());
                s.push_str(": ");
                text.push_json(s);
                s.push_str(": ");
                match reason {
                    // The parser's messages quote what they found.
                    VoidReason::Parse(_) => {
                        msg.clear();
                        reason.write_message(map, msg);
                        push_escaped(s, msg);
                    }
                    // The others are plain text and the map's names.
                    _ => reason.write_message(map, s),
                }
                s.push('"');
            };
            match r {
                Err(reason) => emit(s, reason),
                Ok(idx) => {
                    while let Some(e) = adj_errors.peek() {
                        if e.index == *idx {
                            emit(s, &e.reason);
                            adj_errors.next();
                        } else if e.index < *idx {
                            adj_errors.next();
                        } else {
                            break;
                        }
                    }
                }
            }
        }
        s.push_str("]}");
    }
}

/// `"FRANCE":` and `open`, after a comma unless it is the object's first entry.
fn push_power_key(s: &mut String, first: &mut bool, pw: Power, open: char) {
    if !*first {
        s.push(',');
    }
    *first = false;
    s.push('"');
    s.push_str(pw.name());
    s.push_str("\":");
    s.push(open);
}

/// A phase's name (`S1901M`).
fn push_phase(s: &mut String, p: Phase) {
    if (0..=9999).contains(&p.year) {
        let season = match p.season {
            crate::types::Season::Spring => 'S',
            crate::types::Season::Fall => 'F',
            crate::types::Season::Winter => 'W',
        };
        let kind = match p.kind {
            PhaseKind::Movement => 'M',
            PhaseKind::Retreat => 'R',
            PhaseKind::Adjustment => 'A',
        };
        let y = p.year as u32;
        s.push(season);
        for d in [y / 1000, y / 100 % 10, y / 10 % 10, y % 10] {
            s.push(char::from(b'0' + d as u8));
        }
        s.push(kind);
    } else {
        let _ = write!(s, "{p}");
    }
}

/// Run the service on one thread: one output line per non-blank input line, in input order.
/// Output is flushed after the lines of each read of the input, before the service waits for
/// more (an interactive caller gets each answer before it sends the next line), and at end of
/// input.
pub fn serve<R: Read, W: Write>(input: R, mut output: W) -> io::Result<()> {
    let mut svc = Service::new();
    let mut blocks = Blocks::new(input);
    let mut block = Vec::new();
    let mut out = String::with_capacity(READ_SIZE * 2);
    while blocks.next_block(&mut block)?.is_some() {
        out.clear();
        block_output(&mut svc, &block, &mut out);
        output.write_all(out.as_bytes())?;
        // The caller may wait for these answers before it sends more: flush now.
        output.flush()?;
    }
    output.flush()
}

/// Bytes read from the input at a time; complete lines of one read form one block of work.
const READ_SIZE: usize = 32 << 10;

/// The lines of `block` (complete lines, the last one possibly without LF) as output lines.
fn block_output(svc: &mut Service, block: &[u8], out: &mut String) {
    let mut rest = block;
    loop {
        match memchr::memchr(b'\n', rest) {
            Some(i) => {
                svc.bytes_into(&rest[..i], out);
                rest = &rest[i + 1..];
            }
            None => {
                svc.bytes_into(rest, out);
                return;
            }
        }
    }
}

/// Run the service with `threads` adjudicating threads (1: all on the calling thread). Each
/// thread in turn takes the next block of input lines (those of one read) and adjudicates it.
/// Answers are written and flushed block by block in input order: by the thread that finishes a
/// block whose turn has come, together with the blocks finished early and parked after it. The
/// output is the same byte for byte as with one thread.
pub fn serve_with<R: Read + Send, W: Write + Send>(
    input: R,
    output: W,
    threads: usize,
) -> io::Result<()> {
    if threads <= 1 {
        return serve(input, output);
    }
    let shared = Shared {
        input: Mutex::new(Blocks::new(input)),
        output: Mutex::new(Turn {
            writer: output,
            next: 0,
            parked: BTreeMap::new(),
            spare: Vec::new(),
            error: None,
            abandoned: false,
        }),
        turn: Condvar::new(),
        threads,
    };
    let results: Vec<io::Result<()>> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .map(|_| scope.spawn(|| shared.work()))
            .collect();
        let mut results = vec![shared.work()];
        for h in helpers {
            results.push(
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("an adjudicating thread panicked"))),
            );
        }
        results
    });
    let turn = shared
        .output
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    match turn.error {
        Some(e) => Err(e),
        None => results.into_iter().collect(),
    }
}

/// The service's input, read one block of complete lines (those of one read) at a time; with
/// several threads, under a lock.
struct Blocks<R> {
    reader: R,
    /// The start of a line whose end has not been read yet.
    pending: Vec<u8>,
    buf: Vec<u8>,
    /// Number of the next block.
    next: u64,
    /// End of input reached (or a read failed).
    done: bool,
}

impl<R: Read> Blocks<R> {
    fn new(reader: R) -> Self {
        Blocks {
            reader,
            pending: Vec::new(),
            buf: vec![0u8; READ_SIZE],
            next: 0,
            done: false,
        }
    }

    /// The next block of complete lines (the last one possibly without LF) into `block`, and its
    /// number; `None` at the end of input.
    fn next_block(&mut self, block: &mut Vec<u8>) -> io::Result<Option<u64>> {
        block.clear();
        while !self.done {
            let n = match self.reader.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            if n == 0 {
                self.done = true;
                if self.pending.is_empty() {
                    return Ok(None);
                }
                std::mem::swap(block, &mut self.pending);
                return Ok(Some(self.number()));
            }
            let chunk = &self.buf[..n];
            if let Some(last) = memchr::memrchr(b'\n', chunk) {
                block.extend_from_slice(&self.pending);
                block.extend_from_slice(&chunk[..last]);
                self.pending.clear();
                self.pending.extend_from_slice(&chunk[last + 1..]);
                return Ok(Some(self.number()));
            }
            self.pending.extend_from_slice(chunk);
        }
        Ok(None)
    }

    fn number(&mut self) -> u64 {
        self.next += 1;
        self.next - 1
    }
}

/// The output of [`serve_with`]: blocks are written in number order.
struct Turn<W> {
    writer: W,
    /// Number of the block to write next.
    next: u64,
    /// Answers of blocks finished before their turn, by number.
    parked: BTreeMap<u64, String>,
    /// Emptied strings to reuse for the next blocks' answers.
    spare: Vec<String>,
    /// The first write error; later blocks are not written.
    error: Option<io::Error>,
    /// A thread stopped while holding a block (it panicked): the others stop waiting.
    abandoned: bool,
}

impl<W: Write> Turn<W> {
    /// Write `out` (the answers of block `self.next`) and every parked block that follows it,
    /// flushing after each: the caller may wait for these answers before it sends more.
    fn write_in_turn(&mut self, mut out: String) {
        loop {
            if self.error.is_none() {
                let written = self.writer.write_all(out.as_bytes());
                if let Err(e) = written.and_then(|()| self.writer.flush()) {
                    self.error = Some(e);
                }
            }
            self.next += 1;
            out.clear();
            self.spare.push(out);
            match self.parked.remove(&self.next) {
                Some(o) => out = o,
                None => return,
            }
        }
    }
}

/// Blocks that may wait, finished, for an earlier one, per thread: beyond that a thread waits
/// for its turn (memory stays bounded behind one slow block).
const PARKED_PER_THREAD: usize = 4;

struct Shared<R, W> {
    input: Mutex<Blocks<R>>,
    output: Mutex<Turn<W>>,
    turn: Condvar,
    threads: usize,
}

/// Marks the output abandoned if a thread unwinds while it holds a block number.
struct Holding<'a, W> {
    output: &'a Mutex<Turn<W>>,
    turn: &'a Condvar,
    done: bool,
}

impl<W> Drop for Holding<'_, W> {
    fn drop(&mut self) {
        if !self.done {
            let mut t = self.output.lock().unwrap_or_else(|p| p.into_inner());
            t.abandoned = true;
            self.turn.notify_all();
        }
    }
}

impl<R: Read, W: Write> Shared<R, W> {
    /// One adjudicating thread: take a block, adjudicate it, and write it if its turn has come
    /// (with the parked blocks after it), else park it and take the next.
    fn work(&self) -> io::Result<()> {
        let mut svc: Option<Service> = None;
        let mut block = Vec::new();
        let mut out = String::new();
        loop {
            let number = {
                let mut input = self.input.lock().unwrap_or_else(|p| p.into_inner());
                match input.next_block(&mut block)? {
                    Some(n) => n,
                    None => return Ok(()),
                }
            };
            let mut holding = Holding {
                output: &self.output,
                turn: &self.turn,
                done: false,
            };
            out.clear();
            block_output(svc.get_or_insert_with(Service::new), &block, &mut out);
            let mut t = self.output.lock().unwrap_or_else(|p| p.into_inner());
            while t.next != number
                && t.parked.len() >= PARKED_PER_THREAD * self.threads
                && !t.abandoned
            {
                t = self.turn.wait(t).unwrap_or_else(|p| p.into_inner());
            }
            if t.abandoned {
                holding.done = true;
                return Ok(());
            }
            let spare = t.spare.pop().unwrap_or_default();
            let done = std::mem::replace(&mut out, spare);
            if t.next == number {
                t.write_in_turn(done);
                self.turn.notify_all();
            } else {
                t.parked.insert(number, done);
            }
            holding.done = true;
        }
    }
}

/// The provinces holding units in a board (test helper for invariants).
pub fn occupied(board: &Board) -> u128 {
    let mut m = 0;
    for (i, u) in board.units.iter().enumerate() {
        if u.is_some() {
            m |= bit(i as Prov);
        }
    }
    m
}

/// The public position in the service's shapes: `{"units", "dislodged", "centers"}` (powers in
/// seat order, lists sorted, powers with nothing omitted).
pub fn state_json(map: &Map, board: &Board) -> serde_json::Value {
    use serde_json::{Map as JMap, Value};
    let mut units = JMap::new();
    let mut dislodged = JMap::new();
    let mut centers = JMap::new();
    for pw in Power::ALL {
        let mut us: Vec<String> = board.units_of(pw).map(|u| map.unit_name(&u)).collect();
        us.sort();
        if !us.is_empty() {
            units.insert(pw.name().into(), Value::from(us));
        }
        let mut ds: Vec<(String, Vec<String>)> = board
            .dislodged_of(pw)
            .map(|d| (map.unit_name(&d.unit), Board::option_names(map, d.options)))
            .collect();
        ds.sort();
        if !ds.is_empty() {
            let mut m = JMap::new();
            for (u, o) in ds {
                m.insert(u, Value::from(o));
            }
            dislodged.insert(pw.name().into(), Value::Object(m));
        }
        let cs: Vec<String> = (0..NUM_PROVINCES)
            .filter(|&p| board.owner[p] == Some(pw))
            .map(|p| map.prov_name(p as Prov).to_string())
            .collect();
        if !cs.is_empty() {
            centers.insert(pw.name().into(), Value::from(cs));
        }
    }
    let mut m = JMap::new();
    m.insert("units".into(), Value::Object(units));
    m.insert("dislodged".into(), Value::Object(dislodged));
    m.insert("centers".into(), Value::Object(centers));
    Value::Object(m)
}

/// A service input line for `board` (homes omitted: the map's) and the given order strings.
pub fn request_line(map: &Map, board: &Board, orders: &[(Power, Vec<String>)]) -> String {
    let mut v = state_json(map, board);
    v["phase"] = serde_json::Value::from(board.phase.to_string());
    if board.phase.kind != PhaseKind::Retreat {
        if let Some(o) = v.as_object_mut() {
            o.remove("dislodged");
        }
    }
    let mut os = serde_json::Map::new();
    for (p, list) in orders {
        os.insert(p.name().into(), serde_json::Value::from(list.clone()));
    }
    v["orders"] = serde_json::Value::Object(os);
    v.to_string()
}

/// Service input lines of `n` movement phases from random self-play (7 powers giving random
/// legal orders; game `g` seeded with `seed + g`, played from 1901 to 1912), in play order: the
/// phases of the benchmarks and of the differential check with other adjudicators.
pub fn random_movement_lines(n: usize, seed: u64) -> Vec<String> {
    let map = crate::map::standard();
    let mut resolver = Resolver::new();
    let mut out = Vec::with_capacity(n);
    let mut game = 0u64;
    while out.len() < n {
        let mut rng = kakehiki_core::seeded_rng(seed.wrapping_add(game), "random-phases");
        game += 1;
        let mut board = Board::standard_start();
        while board.phase.year <= 1912 && out.len() < n {
            let mut orders: Vec<(Power, Order)> = Vec::new();
            let mut texts: Vec<(Power, Vec<String>)> = Vec::new();
            for p in Power::ALL {
                let os = crate::bots::random_orders(map, &board, p, &mut rng);
                if !os.is_empty() {
                    texts.push((
                        p,
                        os.iter()
                            .map(|o| crate::bots::format_order(map, o))
                            .collect(),
                    ));
                }
                orders.extend(os.into_iter().map(|o| (p, o)));
            }
            if board.phase.kind == PhaseKind::Movement {
                out.push(request_line(map, &board, &texts));
            }
            adjudicate(&mut resolver, map, &mut board, &orders);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};
    use std::sync::OnceLock;

    /// Service lines of every phase type from random self-play (movement, retreat, adjustment).
    fn pool() -> &'static [String] {
        static POOL: OnceLock<Vec<String>> = OnceLock::new();
        POOL.get_or_init(|| {
            let map = crate::map::standard();
            let mut resolver = Resolver::new();
            let mut lines = Vec::new();
            for g in 0..6u64 {
                let mut rng = kakehiki_core::seeded_rng(g, "fast-path");
                let mut board = Board::standard_start();
                while board.phase.year <= 1906 {
                    let mut orders = Vec::new();
                    let mut texts = Vec::new();
                    for p in Power::ALL {
                        let os = crate::bots::random_orders(map, &board, p, &mut rng);
                        if !os.is_empty() {
                            let t = os.iter().map(|o| crate::bots::format_order(map, o));
                            texts.push((p, t.collect::<Vec<_>>()));
                        }
                        orders.extend(os.into_iter().map(|o| (p, o)));
                    }
                    lines.push(request_line(map, &board, &texts));
                    adjudicate(&mut resolver, map, &mut board, &orders);
                }
            }
            lines
        })
    }

    /// One change to a line: in its JSON (a field dropped, doubled in the text, null, of another
    /// shape; a power, unit, centre or order changed) or in its text.
    fn mutate(line: &str, kind: u8, pick: usize, word: &str) -> String {
        let mut v: Value = serde_json::from_str(line).expect("pool lines are JSON");
        let fields = ["phase", "units", "dislodged", "centers", "homes", "orders"];
        let field = fields[pick % fields.len()];
        let obj = v.as_object_mut().expect("object");
        // An entry of a per-power list field, if any.
        fn entry<'v>(
            obj: &'v mut serde_json::Map<String, Value>,
            f: &str,
            pick: usize,
        ) -> Option<&'v mut Value> {
            let lists = obj.get_mut(f)?.as_object_mut()?;
            let n = lists.len();
            let (_, list) = lists.iter_mut().nth(pick % n.max(1))?;
            let list = list.as_array_mut()?;
            let m = list.len();
            list.get_mut(pick % m.max(1))
        }
        match kind % 16 {
            0 => {
                obj.remove(field);
            }
            1 => {
                obj.insert(field.into(), Value::Null);
            }
            2 => {
                obj.insert(field.into(), json!([word]));
            }
            3 => {
                obj.insert(field.into(), json!({ "FRANCE": word }));
            }
            4 => {
                if let Some(e) = entry(obj, "units", pick) {
                    *e = Value::from(word);
                }
            }
            5 => {
                if let Some(e) = entry(obj, "centers", pick) {
                    *e = Value::from(word);
                }
            }
            6 => {
                if let Some(e) = entry(obj, "orders", pick) {
                    *e = Value::from(word);
                }
            }
            7 => {
                if let Some(e) = entry(obj, "orders", pick) {
                    let t = e.as_str().unwrap_or("").to_lowercase();
                    *e = Value::from(format!(" {t}  "));
                }
            }
            8 => {
                obj.insert(
                    "homes".into(),
                    json!({ "FRANCE": ["PAR", word], "ITALY": [] }),
                );
            }
            9 => {
                let units = obj.get("units").cloned().unwrap_or(Value::Null);
                obj.insert("units".into(), json!({ word: units["FRANCE"].clone() }));
            }
            10 => {
                obj.insert(
                    "dislodged".into(),
                    json!({ "FRANCE": { "A PAR": [word] }, "ITALY": {} }),
                );
            }
            11 => {
                obj.insert("phase".into(), Value::from(word));
            }
            12 => {
                obj.insert("extra".into(), json!({ "units": [1, 2] }));
            }
            _ => {}
        }
        let text = v.to_string();
        match kind % 16 {
            // The field given twice.
            13 => text.replacen('{', &format!("{{\"{field}\":{{}},"), 1),
            // Escapes where there were none.
            14 => text.replacen(" H\"", " \\u0048\"", 1),
            // Not the end of the line.
            15 => format!("{text} x"),
            _ => text,
        }
    }

    fn same(a: &Request<'_>, b: &Request<'_>) -> bool {
        a.board == b.board
            && a.orders == b.orders
            && a.given.len() == b.given.len()
            && a.given
                .iter()
                .zip(&b.given)
                .all(|(x, y)| x.0 == y.0 && x.1.as_str() == y.1.as_str() && x.2 == y.2)
    }

    /// The fast path takes every line of the usual shape, and reads it as the reference does.
    #[test]
    fn the_fast_path_takes_every_plain_line() {
        let svc = Service::new();
        for line in pool() {
            let f = fast::request(&svc, line).expect("fast path takes the line");
            let r = svc.request_checked(line).expect("valid line");
            assert!(same(&f, &r), "{line}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]
        /// Wherever the fast path takes a line, the reference path reads the same request.
        #[test]
        fn the_fast_path_reads_as_the_reference_path_does(
            i in any::<prop::sample::Index>(),
            changes in prop::collection::vec(
                (any::<u8>(), any::<usize>(), prop::sample::select(vec![
                    "A PAR", "F STP/SC", "F PAR", "A NTH", "PAR", "par", "BUR", "XYZ", "S1901M",
                    "F1902R", "W1903A", "FRANCE", "france", "A PAR - BUR", "F BRE H", "", " ",
                    "F SPA", "A MUN S A BUR - PAR",
                ])),
                1..4,
            ),
        ) {
            let svc = Service::new();
            let mut line = i.get(pool()).clone();
            for (kind, pick, word) in changes {
                if serde_json::from_str::<Value>(&line).is_ok() {
                    line = mutate(&line, kind, pick, word);
                }
            }
            if let Some(f) = fast::request(&svc, &line) {
                match svc.request_checked(&line) {
                    Ok(r) => prop_assert!(same(&f, &r), "{}", line),
                    Err(e) => prop_assert!(false, "fast path took {line}, reference says {e}"),
                }
            }
        }
    }
}
