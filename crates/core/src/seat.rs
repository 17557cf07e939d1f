//! Seat specifications: who plays a seat.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Who plays a seat, as written on the command line or in a contest file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SeatSpec {
    /// `builtin:<name>`: an in-process bot of the game.
    Builtin(String),
    /// `cmd:<command line>`: a process speaking the game's protocol on stdin/stdout. The command
    /// line is split like a POSIX shell would split it, but no shell runs it.
    Cmd(Vec<String>),
    /// `tcp`: the referee listens and waits for a client to connect on its own. `ws` is the same
    /// seat under the name the WebSocket games (`werewolf-nlp`) use.
    Tcp,
    /// `tcp-cmd:<command line>`: the referee launches the client with `{host}` and `{port}`
    /// replaced in its arguments; confined, the client has a network namespace of its own whose
    /// loopback holds only its seat's listener, on the contest's port. `ws-cmd:` is the same seat
    /// under the WebSocket games' name.
    TcpCmd(Vec<String>),
    /// `daide` (`None`): a DAIDE client connects on its own; `daide-cmd:<command line>`
    /// (`Some`): the referee, a DAIDE server for the seat, launches the client with `{host}` and
    /// `{port}` replaced, confined like a `tcp-cmd:` client (Diplomacy only).
    Daide(Option<Vec<String>>),
    /// `human`: a person plays the seat from a page the referee's caller serves
    /// ([`crate::human`]): they read what a bot would read and send what a bot would send.
    Human,
}

/// Why a seat specification could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SeatSpecError {
    #[error("empty seat spec: expected builtin:<name>, cmd:<command line>, tcp (ws), tcp-cmd:<command line> (ws-cmd:), daide, daide-cmd:<command line> or human")]
    Empty,
    #[error("unknown seat spec {0:?}: expected builtin:<name>, cmd:<command line>, tcp (ws), tcp-cmd:<command line> (ws-cmd:), daide, daide-cmd:<command line> or human")]
    UnknownForm(String),
    #[error("seat spec {0:?} names no built-in bot: expected builtin:<name>")]
    MissingBuiltinName(String),
    #[error("seat spec {0:?} has an empty command line")]
    EmptyCommand(String),
    #[error("cannot split the command line of seat spec {spec:?}: {reason}")]
    BadQuoting { spec: String, reason: String },
}

fn split_command(spec: &str, line: &str) -> Result<Vec<String>, SeatSpecError> {
    let argv = shell_words::split(line).map_err(|e| SeatSpecError::BadQuoting {
        spec: spec.to_string(),
        reason: e.to_string(),
    })?;
    if argv.is_empty() {
        return Err(SeatSpecError::EmptyCommand(spec.to_string()));
    }
    Ok(argv)
}

impl FromStr for SeatSpec {
    type Err = SeatSpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let s = s.trim();
        if s.is_empty() {
            return Err(SeatSpecError::Empty);
        }
        if s == "tcp" || s == "ws" {
            return Ok(SeatSpec::Tcp);
        }
        if s == "human" {
            return Ok(SeatSpec::Human);
        }
        if s == "daide" {
            return Ok(SeatSpec::Daide(None));
        }
        if let Some(line) = s.strip_prefix("daide-cmd:") {
            return Ok(SeatSpec::Daide(Some(split_command(s, line)?)));
        }
        if let Some(name) = s.strip_prefix("builtin:") {
            let name = name.trim();
            if name.is_empty() {
                return Err(SeatSpecError::MissingBuiltinName(s.to_string()));
            }
            return Ok(SeatSpec::Builtin(name.to_string()));
        }
        if let Some(line) = s.strip_prefix("cmd:") {
            return Ok(SeatSpec::Cmd(split_command(s, line)?));
        }
        if let Some(line) = s
            .strip_prefix("tcp-cmd:")
            .or_else(|| s.strip_prefix("ws-cmd:"))
        {
            return Ok(SeatSpec::TcpCmd(split_command(s, line)?));
        }
        Err(SeatSpecError::UnknownForm(s.to_string()))
    }
}

impl fmt::Display for SeatSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SeatSpec::Builtin(n) => write!(f, "builtin:{n}"),
            SeatSpec::Cmd(argv) => write!(f, "cmd:{}", shell_words::join(argv)),
            SeatSpec::Tcp => write!(f, "tcp"),
            SeatSpec::TcpCmd(argv) => write!(f, "tcp-cmd:{}", shell_words::join(argv)),
            SeatSpec::Daide(None) => write!(f, "daide"),
            SeatSpec::Daide(Some(argv)) => write!(f, "daide-cmd:{}", shell_words::join(argv)),
            SeatSpec::Human => write!(f, "human"),
        }
    }
}

impl Serialize for SeatSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SeatSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_daide_forms() {
        assert_eq!("daide".parse(), Ok(SeatSpec::Daide(None)));
        let s: SeatSpec = "daide-cmd:./dumbbot -s {host} -p {port}".parse().unwrap();
        assert_eq!(
            s,
            SeatSpec::Daide(Some(
                ["./dumbbot", "-s", "{host}", "-p", "{port}"]
                    .map(String::from)
                    .to_vec()
            ))
        );
        assert_eq!(s.to_string(), "daide-cmd:./dumbbot -s {host} -p {port}");
        assert_eq!(s.to_string().parse::<SeatSpec>(), Ok(s));
    }

    #[test]
    fn parses_every_form() {
        assert_eq!(
            "builtin:random".parse(),
            Ok(SeatSpec::Builtin("random".into()))
        );
        assert_eq!(
            "cmd:python3 'my bot.py' --level 2".parse(),
            Ok(SeatSpec::Cmd(vec![
                "python3".into(),
                "my bot.py".into(),
                "--level".into(),
                "2".into()
            ]))
        );
        assert_eq!("tcp".parse(), Ok(SeatSpec::Tcp));
        assert_eq!("ws".parse(), Ok(SeatSpec::Tcp));
        assert_eq!(
            "ws-cmd:python3 agent.py {url}".parse(),
            Ok(SeatSpec::TcpCmd(vec![
                "python3".into(),
                "agent.py".into(),
                "{url}".into()
            ]))
        );
        assert!(matches!(
            "ws-cmd: ".parse::<SeatSpec>(),
            Err(SeatSpecError::EmptyCommand(_))
        ));
        assert_eq!(
            "tcp-cmd:java -jar c.jar {host} {port}"
                .parse::<SeatSpec>()
                .unwrap(),
            SeatSpec::TcpCmd(vec![
                "java".into(),
                "-jar".into(),
                "c.jar".into(),
                "{host}".into(),
                "{port}".into()
            ])
        );
    }

    #[test]
    fn rejects_bad_specs_with_reasons() {
        assert_eq!("".parse::<SeatSpec>(), Err(SeatSpecError::Empty));
        assert!(matches!(
            "builtin:".parse::<SeatSpec>(),
            Err(SeatSpecError::MissingBuiltinName(_))
        ));
        assert!(matches!(
            "cmd:  ".parse::<SeatSpec>(),
            Err(SeatSpecError::EmptyCommand(_))
        ));
        assert!(matches!(
            "cmd:echo 'x".parse::<SeatSpec>(),
            Err(SeatSpecError::BadQuoting { .. })
        ));
        assert!(matches!(
            "bot.py".parse::<SeatSpec>(),
            Err(SeatSpecError::UnknownForm(_))
        ));
    }

    #[test]
    fn display_round_trips() {
        for s in [
            "builtin:strong",
            "cmd:python3 'a b.py'",
            "tcp",
            "tcp-cmd:./c {host} {port}",
        ] {
            let spec: SeatSpec = s.parse().unwrap();
            assert_eq!(spec.to_string().parse::<SeatSpec>().unwrap(), spec);
        }
    }
}
