//! DAIDE framing: a four-byte header (message type, a pad byte, the big-endian length of what
//! follows) and the body.
//!
//! Types: `IM` (0, client → server: version 1 and the magic number 0xDA10), `RM` (1, server →
//! client: the representation, empty for the standard map), `DM` (2: a diplomacy message of
//! tokens), `FM` (3: closing), `EM` (4: an error code, then closing). The pad byte is not
//! checked. A body is at most 65,535 bytes by construction, so a decoder never holds more.

/// The header length.
pub const HEADER: usize = 4;
/// The protocol version an `IM` must carry.
pub const VERSION: u16 = 1;
/// The magic number of an `IM`.
pub const MAGIC: u16 = 0xDA10;

/// The standard error codes of an `EM`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u16)]
pub enum ErrorCode {
    /// The client sent no `IM` in time.
    ImTimerPopped = 0x01,
    /// The first message was not an `IM`.
    ImNotFirst = 0x02,
    /// The magic number arrived byte-swapped.
    ImWrongEndian = 0x03,
    /// The magic number is wrong.
    ImWrongMagic = 0x04,
    /// A protocol version other than 1.
    VersionIncompatible = 0x05,
    /// A second `IM`.
    MoreThanOneIm = 0x06,
    /// An `IM` from the server.
    ImFromServer = 0x07,
    /// An unknown message type.
    UnknownMessage = 0x08,
    /// A message shorter than its type needs.
    MessageTooShort = 0x09,
    /// A `DM` before the `RM`.
    DmBeforeRm = 0x0A,
    /// The server's first message was not an `RM`.
    RmNotFirst = 0x0B,
    /// A second `RM`.
    MoreThanOneRm = 0x0C,
    /// An `RM` from a client.
    RmFromClient = 0x0D,
    /// A `DM` holding a pair of bytes that is no token.
    InvalidToken = 0x0E,
}

impl ErrorCode {
    /// The code of a number, if it is a standard one.
    pub fn from_u16(v: u16) -> Option<ErrorCode> {
        use ErrorCode::*;
        Some(match v {
            0x01 => ImTimerPopped,
            0x02 => ImNotFirst,
            0x03 => ImWrongEndian,
            0x04 => ImWrongMagic,
            0x05 => VersionIncompatible,
            0x06 => MoreThanOneIm,
            0x07 => ImFromServer,
            0x08 => UnknownMessage,
            0x09 => MessageTooShort,
            0x0A => DmBeforeRm,
            0x0B => RmNotFirst,
            0x0C => MoreThanOneRm,
            0x0D => RmFromClient,
            0x0E => InvalidToken,
            _ => return None,
        })
    }
}

/// One framed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// Initial message: version and magic number as sent.
    Im {
        /// Version (1).
        version: u16,
        /// Magic number (0xDA10).
        magic: u16,
    },
    /// Representation message: the body as sent (empty: the standard map's tokens).
    Rm(Vec<u8>),
    /// Diplomacy message: the token bytes.
    Dm(Vec<u8>),
    /// Final message.
    Fm,
    /// Error message with its code.
    Em(u16),
}

/// Why bytes are not a frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The message type byte is none of 0..=4.
    #[error("unknown message type {0}")]
    UnknownType(u8),
    /// A body of the wrong length for its type.
    #[error("{kind} with a body of {len} bytes (expected {expected})")]
    BadLength {
        /// `IM`, `EM`, `DM`.
        kind: &'static str,
        /// The body length given.
        len: usize,
        /// What the type needs.
        expected: &'static str,
    },
    /// Fewer bytes than the header says.
    #[error("{got} bytes of a {need}-byte message")]
    Incomplete {
        /// Bytes present.
        got: usize,
        /// Bytes the header announces.
        need: usize,
    },
}

impl FrameError {
    /// The error code a server answers this with.
    pub fn code(&self) -> ErrorCode {
        match self {
            FrameError::UnknownType(_) => ErrorCode::UnknownMessage,
            FrameError::BadLength { .. } | FrameError::Incomplete { .. } => {
                ErrorCode::MessageTooShort
            }
        }
    }
}

impl Frame {
    /// The type byte.
    pub fn kind(&self) -> u8 {
        match self {
            Frame::Im { .. } => 0,
            Frame::Rm(_) => 1,
            Frame::Dm(_) => 2,
            Frame::Fm => 3,
            Frame::Em(_) => 4,
        }
    }

    /// The header and body; `None` for a body over 65,535 bytes.
    pub fn encode(&self) -> Option<Vec<u8>> {
        let body: Vec<u8> = match self {
            Frame::Im { version, magic } => [version.to_be_bytes(), magic.to_be_bytes()].concat(),
            Frame::Rm(b) | Frame::Dm(b) => b.clone(),
            Frame::Fm => Vec::new(),
            Frame::Em(code) => code.to_be_bytes().to_vec(),
        };
        let len = u16::try_from(body.len()).ok()?;
        let mut out = Vec::with_capacity(HEADER + body.len());
        out.push(self.kind());
        out.push(0);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(&body);
        Some(out)
    }

    /// The standard `IM` of a client.
    pub fn initial() -> Frame {
        Frame::Im {
            version: VERSION,
            magic: MAGIC,
        }
    }

    /// How long the whole frame starting with `header` is, or why it can be no frame.
    pub fn length(header: [u8; HEADER]) -> Result<usize, FrameError> {
        if header[0] > 4 {
            return Err(FrameError::UnknownType(header[0]));
        }
        Ok(HEADER + usize::from(u16::from_be_bytes([header[2], header[3]])))
    }

    /// Decode exactly one frame (header and body; the pad byte may be anything).
    pub fn decode(bytes: &[u8]) -> Result<Frame, FrameError> {
        let header: [u8; HEADER] = match bytes.get(..HEADER) {
            Some(h) => h.try_into().unwrap_or([0; HEADER]),
            None => {
                return Err(FrameError::Incomplete {
                    got: bytes.len(),
                    need: HEADER,
                })
            }
        };
        let need = Frame::length(header)?;
        if bytes.len() != need {
            return Err(FrameError::Incomplete {
                got: bytes.len(),
                need,
            });
        }
        let body = &bytes[HEADER..];
        let bad = |kind, expected| FrameError::BadLength {
            kind,
            len: body.len(),
            expected,
        };
        Ok(match header[0] {
            0 => {
                if body.len() != 4 {
                    return Err(bad("IM", "4"));
                }
                Frame::Im {
                    version: u16::from_be_bytes([body[0], body[1]]),
                    magic: u16::from_be_bytes([body[2], body[3]]),
                }
            }
            1 => Frame::Rm(body.to_vec()),
            2 => {
                if body.is_empty() || !body.len().is_multiple_of(2) {
                    return Err(bad("DM", "an even number, at least 2"));
                }
                Frame::Dm(body.to_vec())
            }
            3 => Frame::Fm,
            _ => {
                if body.len() != 2 {
                    return Err(bad("EM", "2"));
                }
                Frame::Em(u16::from_be_bytes([body[0], body[1]]))
            }
        })
    }
}

/// Splits a byte stream into frames: feed it what arrives, take whole frames out. It holds at
/// most one frame (65,539 bytes) and whatever was fed beyond.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    /// Append received bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// How many more bytes the frame being read needs (at least one when none is complete).
    pub fn wants(&self) -> usize {
        match self.buf.get(..HEADER) {
            None => HEADER - self.buf.len(),
            Some(h) => match Frame::length(h.try_into().unwrap_or([0; HEADER])) {
                Ok(n) => n.saturating_sub(self.buf.len()).max(1),
                Err(_) => 1,
            },
        }
    }

    /// The raw bytes of the next whole frame, if one is complete. A header of an unknown type is
    /// returned alone at once (four bytes), so the caller can refuse it without reading on.
    pub fn next_raw(&mut self) -> Option<Vec<u8>> {
        let header: [u8; HEADER] = self.buf.get(..HEADER)?.try_into().ok()?;
        let n = Frame::length(header).unwrap_or(HEADER);
        if self.buf.len() < n {
            return None;
        }
        let rest = self.buf.split_off(n);
        Some(std::mem::replace(&mut self.buf, rest))
    }

    /// Bytes held that are not yet a whole frame.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn im_is_the_standard_eight_bytes() {
        assert_eq!(
            Frame::initial().encode().unwrap(),
            [0, 0, 0, 4, 0, 1, 0xDA, 0x10]
        );
        assert_eq!(
            Frame::decode(&[0, 0x55, 0, 4, 0, 1, 0xDA, 0x10]),
            Ok(Frame::initial()),
            "any pad byte"
        );
        assert_eq!(Frame::Rm(Vec::new()).encode().unwrap(), [1, 0, 0, 0]);
        assert_eq!(Frame::Em(0x0E).encode().unwrap(), [4, 0, 0, 2, 0, 0x0E]);
        assert_eq!(
            Frame::decode(&[9, 0, 0, 0]),
            Err(FrameError::UnknownType(9))
        );
        assert!(matches!(
            Frame::decode(&[2, 0, 0, 1, 0x48]),
            Err(FrameError::BadLength { .. })
        ));
        assert!(Frame::Dm(vec![0; 70_000]).encode().is_none());
    }

    #[test]
    fn decoder_splits_a_stream() {
        let mut d = Decoder::default();
        let a = Frame::initial().encode().unwrap();
        let b = Frame::Dm(vec![0x48, 0x0C]).encode().unwrap();
        let all = [a.clone(), b.clone()].concat();
        d.feed(&all[..3]);
        assert_eq!(d.next_raw(), None);
        assert_eq!(d.wants(), 1);
        d.feed(&all[3..]);
        assert_eq!(d.next_raw(), Some(a));
        assert_eq!(d.next_raw(), Some(b));
        assert_eq!(d.next_raw(), None);
        d.feed(&[7, 0, 0xFF, 0xFF, 1, 2]);
        assert_eq!(
            d.next_raw(),
            Some(vec![7, 0, 0xFF, 0xFF]),
            "a bad header alone"
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300), cut in 0usize..300) {
            let _ = Frame::decode(&bytes);
            let mut d = Decoder::default();
            let cut = cut.min(bytes.len());
            d.feed(&bytes[..cut]);
            while let Some(f) = d.next_raw() { let _ = Frame::decode(&f); }
            d.feed(&bytes[cut..]);
            while let Some(f) = d.next_raw() { let _ = Frame::decode(&f); }
            prop_assert!(d.pending() < HEADER + 65_536);
            prop_assert!(d.wants() >= 1);
        }

        #[test]
        fn frames_round_trip(kind in 0u8..5, body in proptest::collection::vec(any::<u8>(), 0..40), a in any::<u16>(), b in any::<u16>()) {
            let f = match kind {
                0 => Frame::Im { version: a, magic: b },
                1 => Frame::Rm(body),
                2 => Frame::Dm(if body.len() % 2 == 0 && !body.is_empty() { body } else { vec![0x48, 0x0C] }),
                3 => Frame::Fm,
                _ => Frame::Em(a),
            };
            prop_assert_eq!(Frame::decode(&f.encode().unwrap()), Ok(f));
        }
    }
}
