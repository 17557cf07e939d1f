//! The contest wire protocol as pure functions (spec §3): server messages byte for byte, client
//! commands, and the line framing of the client's byte stream.

use crate::engine::{Action, Dir, Move, RedSet, LABELS};

/// Longest accepted line, in bytes, without its line end.
pub const MAX_LINE: usize = 256;

/// A message from the server to a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerMsg {
    /// `SET?`: choose your placement.
    Set,
    /// `OK `: accepted, nothing captured.
    Ok,
    /// `OKR`: accepted, captured a red ghost.
    OkRed,
    /// `OKB`: accepted, captured a blue ghost.
    OkBlue,
    /// `NG `: refused.
    Ng,
    /// `MOV?<board>`: your turn.
    Mov(String),
    /// `WON:<board>`.
    Won(String),
    /// `LST:<board>`.
    Lst(String),
    /// `DRW:<board>`.
    Drw(String),
}

/// Why a server message could not be read (client side).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerMsgError {
    #[error("server message does not end with CR LF: {0:?}")]
    NoCrLf(String),
    #[error("unknown server message {0:?}")]
    Unknown(String),
    #[error("board of {0:?} is not 48 characters")]
    BadBoard(String),
}

impl ServerMsg {
    /// The exact bytes, CR LF included.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(54);
        match self {
            ServerMsg::Set => v.extend_from_slice(b"SET?"),
            ServerMsg::Ok => v.extend_from_slice(b"OK "),
            ServerMsg::OkRed => v.extend_from_slice(b"OKR"),
            ServerMsg::OkBlue => v.extend_from_slice(b"OKB"),
            ServerMsg::Ng => v.extend_from_slice(b"NG "),
            ServerMsg::Mov(b) => {
                v.extend_from_slice(b"MOV?");
                v.extend_from_slice(b.as_bytes());
            }
            ServerMsg::Won(b) => {
                v.extend_from_slice(b"WON:");
                v.extend_from_slice(b.as_bytes());
            }
            ServerMsg::Lst(b) => {
                v.extend_from_slice(b"LST:");
                v.extend_from_slice(b.as_bytes());
            }
            ServerMsg::Drw(b) => {
                v.extend_from_slice(b"DRW:");
                v.extend_from_slice(b.as_bytes());
            }
        }
        v.extend_from_slice(b"\r\n");
        v
    }

    /// The message as text without its line end.
    pub fn text(&self) -> String {
        let b = self.to_bytes();
        String::from_utf8_lossy(&b[..b.len() - 2]).into_owned()
    }

    /// The kind of request the message is, as the seat record names it.
    pub fn kind(&self) -> &'static str {
        match self {
            ServerMsg::Set => "SET?",
            ServerMsg::Mov(_) => "MOV?",
            ServerMsg::Ok | ServerMsg::OkRed | ServerMsg::OkBlue => "OK",
            ServerMsg::Ng => "NG",
            _ => "end",
        }
    }

    /// Whether this is an end message.
    pub fn is_end(&self) -> bool {
        matches!(
            self,
            ServerMsg::Won(_) | ServerMsg::Lst(_) | ServerMsg::Drw(_)
        )
    }

    /// Read one message (with its CR LF), as a client would.
    pub fn parse(bytes: &[u8]) -> Result<ServerMsg, ServerMsgError> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        let Some(body) = text.strip_suffix("\r\n") else {
            return Err(ServerMsgError::NoCrLf(text));
        };
        let board = |b: &str| {
            if b.len() == 48 && b.is_ascii() {
                Ok(b.to_string())
            } else {
                Err(ServerMsgError::BadBoard(body.to_string()))
            }
        };
        match body {
            "SET?" => Ok(ServerMsg::Set),
            "OK " => Ok(ServerMsg::Ok),
            "OKR" => Ok(ServerMsg::OkRed),
            "OKB" => Ok(ServerMsg::OkBlue),
            "NG " => Ok(ServerMsg::Ng),
            _ if body.starts_with("MOV?") => Ok(ServerMsg::Mov(board(&body[4..])?)),
            _ if body.starts_with("WON:") => Ok(ServerMsg::Won(board(&body[4..])?)),
            _ if body.starts_with("LST:") => Ok(ServerMsg::Lst(board(&body[4..])?)),
            _ if body.starts_with("DRW:") => Ok(ServerMsg::Drw(board(&body[4..])?)),
            _ => Err(ServerMsgError::Unknown(body.to_string())),
        }
    }
}

/// A client command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// `SET:xxxx`: these four become red.
    Set(RedSet),
    /// `MOV:p,dir`.
    Mov(Move),
}

impl Command {
    /// Normalised text (`SET:ABCD` in the order of the mask, `MOV:A,N`).
    pub fn text(&self) -> String {
        match self {
            Command::Set(r) => format!("SET:{}", r.labels()),
            Command::Mov(m) => format!("MOV:{}", m.wire()),
        }
    }
}

/// The command a client sends for an action (a built-in bot's reply).
impl From<Action> for Command {
    fn from(a: Action) -> Self {
        match a {
            Action::Place(r) => Command::Set(r),
            Action::Move(m) => Command::Mov(m),
        }
    }
}

/// Why a line is not a valid command.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    #[error("unknown command {0:?}: expected SET:<4 letters A-H> or MOV:<ghost>,<N|E|W|S>; a line that is not a command is most often debug output: write it to stderr (the connection carries only commands)")]
    Unknown(String),
    #[error("bad placement {0:?}: expected SET: and exactly 4 distinct letters A-H")]
    BadSet(String),
    #[error("bad move {0:?}: expected MOV:<ghost A-H>,<N|E|W|S|NORTH|EAST|WEST|SOUTH>")]
    BadMove(String),
}

fn ghost_index(c: u8) -> Option<u8> {
    match c.to_ascii_uppercase() {
        c @ b'A'..=b'H' => Some(c - b'A'),
        _ => None,
    }
}

/// Parse one line (already framed: no line end, no trailing blanks). Spec §3.4.
pub fn parse_command(line: &str) -> Result<Command, CommandError> {
    if let Some(rest) = line.strip_prefix("SET:") {
        let b = rest.as_bytes();
        if b.len() != 4 {
            return Err(CommandError::BadSet(line.to_string()));
        }
        let mut g = [0u8; 4];
        for (i, &c) in b.iter().enumerate() {
            g[i] = ghost_index(c).ok_or_else(|| CommandError::BadSet(line.to_string()))?;
        }
        return RedSet::from_ghosts(g)
            .map(Command::Set)
            .ok_or_else(|| CommandError::BadSet(line.to_string()));
    }
    if let Some(rest) = line.strip_prefix("MOV:") {
        let bad = || CommandError::BadMove(line.to_string());
        let (ghost, dir) = rest.split_once(',').ok_or_else(bad)?;
        let gb = ghost.as_bytes();
        if gb.is_empty() || !gb.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_') {
            return Err(bad());
        }
        let g = ghost_index(gb[0]).ok_or_else(bad)?;
        let dir = match dir.to_ascii_uppercase().as_str() {
            "N" | "NORTH" => Dir::N,
            "E" | "EAST" => Dir::E,
            "W" | "WEST" => Dir::W,
            "S" | "SOUTH" => Dir::S,
            _ => return Err(bad()),
        };
        return Ok(Command::Mov(Move::new(g, dir)));
    }
    Err(CommandError::Unknown(line.to_string()))
}

/// One framed line of a client's byte stream (spec §3.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// An ASCII line without its line end and trailing blanks; never empty.
    Text(String),
    /// An empty (or blank) line: ignored without reply.
    Empty,
    /// Longer than [`MAX_LINE`] bytes: malformed.
    TooLong,
    /// Contains non-ASCII bytes: malformed (lossy text for the record).
    NonAscii(String),
}

/// Splits a byte stream into lines however reads split or merge them.
#[derive(Debug, Default, Clone)]
pub struct LineBuffer {
    buf: Vec<u8>,
    /// Inside a line that already exceeded [`MAX_LINE`]: drop bytes up to its LF.
    overlong: bool,
}

impl LineBuffer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feed bytes; returns every line completed by them, in order.
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Line> {
        let mut out = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                if self.overlong {
                    self.overlong = false;
                    self.buf.clear();
                    out.push(Line::TooLong);
                } else {
                    out.push(frame(&self.buf));
                    self.buf.clear();
                }
            } else if !self.overlong {
                self.buf.push(b);
                // One CR may still be stripped: allow MAX_LINE + 1 bytes before deciding.
                if self.buf.len() > MAX_LINE + 1 {
                    self.overlong = true;
                    self.buf.clear();
                }
            }
        }
        out
    }

    /// Bytes of an unfinished line are pending.
    pub fn has_partial(&self) -> bool {
        !self.buf.is_empty() || self.overlong
    }
}

/// Frame one line (without its LF).
pub fn frame(raw: &[u8]) -> Line {
    let mut s = raw;
    if let [rest @ .., b'\r'] = s {
        s = rest;
    }
    if s.len() > MAX_LINE {
        return Line::TooLong;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    if !s.is_ascii() {
        return Line::NonAscii(String::from_utf8_lossy(s).into_owned());
    }
    if s.is_empty() {
        return Line::Empty;
    }
    Line::Text(String::from_utf8_lossy(s).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_that_is_no_command_is_named_as_debug_output() {
        let e = parse_command("thinking about ghost B")
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("a line that is not a command is most often debug output: write it to stderr (the connection carries only commands)"),
            "{e}"
        );
    }

    #[test]
    fn message_lengths_match_the_table() {
        let b = "14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u".to_string();
        assert_eq!(ServerMsg::Set.to_bytes(), b"SET?\r\n");
        assert_eq!(ServerMsg::Ok.to_bytes(), b"OK \r\n");
        assert_eq!(ServerMsg::OkRed.to_bytes(), b"OKR\r\n");
        assert_eq!(ServerMsg::OkBlue.to_bytes(), b"OKB\r\n");
        assert_eq!(ServerMsg::Ng.to_bytes(), b"NG \r\n");
        for m in [
            ServerMsg::Mov(b.clone()),
            ServerMsg::Won(b.clone()),
            ServerMsg::Lst(b.clone()),
            ServerMsg::Drw(b),
        ] {
            assert_eq!(m.to_bytes().len(), 54);
            assert_eq!(ServerMsg::parse(&m.to_bytes()), Ok(m));
        }
        assert!(ServerMsg::parse(b"OK \n").is_err());
        assert!(ServerMsg::parse(b"MOV?12\r\n").is_err());
    }

    #[test]
    fn v10_parsing() {
        let ok = |s: &str| parse_command(s).unwrap();
        assert_eq!(
            ok("SET:abcd"),
            Command::Set(RedSet::from_mask(0x0f).unwrap())
        );
        assert_eq!(ok("MOV:a,north"), Command::Mov(Move::new(0, Dir::N)));
        assert_eq!(ok("MOV:Apple,N"), Command::Mov(Move::new(0, Dir::N)));
        assert_eq!(ok("MOV:h,West"), Command::Mov(Move::new(7, Dir::W)));
        assert_eq!(
            ok("SET:hfad"),
            Command::Set(RedSet::from_ghosts([7, 5, 0, 3]).unwrap())
        );
        for bad in [
            "SET:ABC",
            "SET:AABC",
            "SET:ABCI",
            "SET:ABCDE",
            "MOV:A,UP",
            "MOV:A, N",
            "MOV:I,N",
            "MOV:,N",
            "MOV:A",
            "MOV:A-x,N",
            "HELLO",
            "set:abcd",
        ] {
            assert!(parse_command(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn framing_handles_crlf_lf_blanks_and_splits() {
        let mut lb = LineBuffer::new();
        assert_eq!(lb.push(b"SET:EF"), vec![]);
        assert_eq!(
            lb.push(b"GH\nMOV:A,N \r\nMOV:B,N\r\n\r\n  \n"),
            vec![
                Line::Text("SET:EFGH".into()),
                Line::Text("MOV:A,N".into()),
                Line::Text("MOV:B,N".into()),
                Line::Empty,
                Line::Empty,
            ]
        );
        let long = vec![b'x'; 300];
        assert_eq!(lb.push(&long), vec![]);
        assert!(lb.has_partial());
        assert_eq!(
            lb.push(b"yy\nOK\n"),
            vec![Line::TooLong, Line::Text("OK".into())]
        );
        let exact = vec![b'M'; MAX_LINE];
        let mut with_cr = exact.clone();
        with_cr.extend_from_slice(b"\r\n");
        assert_eq!(
            lb.push(&with_cr),
            vec![Line::Text(String::from_utf8(exact).unwrap())]
        );
        assert_eq!(
            lb.push("MOV:Ä,N\n".as_bytes()),
            vec![Line::NonAscii("MOV:Ä,N".into())]
        );
        assert_eq!(lb.push(b"\r\n"), vec![Line::Empty]);
    }
}

/// A person's reply checked against the last message they were sent (the human seat refuses an
/// illegal one with the reason, so that they may try again): `SET:` after `SET?`, a legal
/// `MOV:` for the board of `MOV?`.
pub fn check_reply(last: &str, reply: &str) -> Result<(), String> {
    let last = last.trim_end();
    let cmd = parse_command(reply.trim()).map_err(|e| e.to_string())?;
    match (last, cmd) {
        ("SET?", Command::Set(_)) => Ok(()),
        ("SET?", Command::Mov(_)) => Err(
            "the server asked for your placement: send SET: and the 4 red ghosts, as SET:ABCD"
                .into(),
        ),
        (m, Command::Set(_)) if m.starts_with("MOV?") => {
            Err("the placement is made: move a ghost, as MOV:A,N".into())
        }
        (m, Command::Mov(mv)) if m.starts_with("MOV?") => {
            let board = &m.as_bytes()[4..];
            if board.len() != 48 {
                return Err(format!("the board of {m:?} is not 48 characters"));
            }
            let at = |g: usize| (board[3 * g], board[3 * g + 1], board[3 * g + 2]);
            let label = LABELS[mv.ghost as usize & 7];
            let (x, y, c) = at(mv.ghost as usize);
            if !(x.is_ascii_digit() && y.is_ascii_digit()) || x > b'5' || y > b'5' {
                return Err(format!("your ghost {label} is not on the board"));
            }
            let (x, y) = ((x - b'0') as i8, (y - b'0') as i8);
            let (nx, ny) = match mv.dir {
                Dir::N => (x, y - 1),
                Dir::S => (x, y + 1),
                Dir::E => (x + 1, y),
                Dir::W => (x - 1, y),
            };
            if !(0..6).contains(&nx) || !(0..6).contains(&ny) {
                let exit = ny < 0 || (x == 0 && nx < 0) || (x == 5 && nx > 5);
                return match (c, exit && y == 0 && (x == 0 || x == 5)) {
                    (b'B', true) => Ok(()),
                    (_, true) => Err(format!(
                        "your ghost {label} is red: only a blue ghost escapes by an exit"
                    )),
                    _ => Err(format!(
                        "{label} would leave the board: a ghost leaves it only by escaping from the opponent's corners (0,0) and (5,0)"
                    )),
                };
            }
            let own = (0..8).any(|g| {
                let (ox, oy, _) = at(g);
                ox == b'0' + nx as u8 && oy == b'0' + ny as u8
            });
            match own {
                true => Err(format!(
                    "{label} cannot move onto your own ghost at ({nx},{ny})"
                )),
                false => Ok(()),
            }
        }
        _ => Err(format!("nothing to reply to {last:?}")),
    }
}

#[cfg(test)]
mod human_tests {
    use super::check_reply;

    // Seat 0's start (A-D on row 4, E-H on row 5; A-D red), the opponent as unknown, except A
    // moved to the exit (0,0) as blue in the second board.
    const START: &str = "MOV?14R24R34R44R15B25B35B45B41u31u21u11u40u30u20u10u\r\n";
    const AT_EXIT: &str = "MOV?00B24R34R44R15R25B35B45B41u31u21u11u40u30u99r10u\r\n";

    #[test]
    fn a_persons_moves_are_checked_against_their_board() {
        assert_eq!(check_reply("SET?\r\n", "SET:ABCD"), Ok(()));
        assert!(check_reply("SET?\r\n", "SET:ABC")
            .unwrap_err()
            .contains("exactly 4"));
        assert!(check_reply("SET?\r\n", "MOV:A,N")
            .unwrap_err()
            .contains("placement"));
        assert_eq!(check_reply(START, "MOV:A,N"), Ok(()));
        assert!(check_reply(START, "MOV:A,S")
            .unwrap_err()
            .contains("your own ghost at (1,5)"));
        assert!(check_reply(START, "MOV:E,S")
            .unwrap_err()
            .contains("leave the board"));
        assert!(check_reply(START, "SET:ABCD")
            .unwrap_err()
            .contains("placement is made"));
        assert_eq!(check_reply(AT_EXIT, "MOV:A,W"), Ok(()));
        assert_eq!(check_reply(AT_EXIT, "MOV:A,N"), Ok(()));
        let red = AT_EXIT.replacen("00B", "00R", 1);
        assert!(check_reply(&red, "MOV:A,N").unwrap_err().contains("red"));
        assert!(check_reply(AT_EXIT, "MOV:G,N")
            .unwrap_err()
            .contains("own ghost at (3,4)"));
        assert!(check_reply(START, "hello")
            .unwrap_err()
            .contains("unknown command"));
    }
}
