//! DAIDE tokens: two bytes each, the first naming the category.
//!
//! Categories (high byte): `0x00..=0x3F` integers (14 bits, two's complement, -8192..=8191),
//! `0x40` brackets, `0x41` powers, `0x42` unit types, `0x43` orders, `0x44` order notes (`THX`),
//! `0x45` order results (`ORD`), `0x46` coasts, `0x47` phases, `0x48` commands, `0x49`
//! parameters, `0x4A` press, `0x4B` one ASCII character of a text, `0x50..=0x57` provinces (the
//! low three bits: supply centre, sea, coastal; bicoastal is `0x56`/`0x57`) with the province
//! number in the low byte.

use std::fmt;

use crate::map::NUM_PROVINCES;

/// One token: its two bytes as a big-endian number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Token(pub u16);

/// `(`.
pub const BRA: Token = Token(0x4000);
/// `)`.
pub const KET: Token = Token(0x4001);

/// Category byte of a text character.
pub const TEXT: u8 = 0x4B;

/// The named tokens other than provinces: category byte, low byte, name.
const NAMED: &[(u16, &str)] = &[
    // Powers.
    (0x4100, "AUS"),
    (0x4101, "ENG"),
    (0x4102, "FRA"),
    (0x4103, "GER"),
    (0x4104, "ITA"),
    (0x4105, "RUS"),
    (0x4106, "TUR"),
    // Unit types.
    (0x4200, "AMY"),
    (0x4201, "FLT"),
    // Orders.
    (0x4320, "CTO"),
    (0x4321, "CVY"),
    (0x4322, "HLD"),
    (0x4323, "MTO"),
    (0x4324, "SUP"),
    (0x4325, "VIA"),
    (0x4340, "DSB"),
    (0x4341, "RTO"),
    (0x4380, "BLD"),
    (0x4381, "REM"),
    (0x4382, "WVE"),
    // Order notes (THX).
    (0x4400, "MBV"),
    (0x4401, "BPR"),
    (0x4402, "CST"),
    (0x4403, "ESC"),
    (0x4404, "FAR"),
    (0x4405, "HSC"),
    (0x4406, "NAS"),
    (0x4407, "NMB"),
    (0x4408, "NMR"),
    (0x4409, "NRN"),
    (0x440A, "NRS"),
    (0x440B, "NSA"),
    (0x440C, "NSC"),
    (0x440D, "NSF"),
    (0x440E, "NSP"),
    (0x4410, "NSU"),
    (0x4411, "NVR"),
    (0x4412, "NYU"),
    (0x4413, "YSC"),
    // Order results (ORD).
    (0x4500, "SUC"),
    (0x4501, "BNC"),
    (0x4502, "CUT"),
    (0x4503, "DSR"),
    (0x4504, "FLD"),
    (0x4505, "NSO"),
    (0x4506, "RET"),
    // Coasts.
    (0x4600, "NCS"),
    (0x4602, "NEC"),
    (0x4604, "ECS"),
    (0x4606, "SEC"),
    (0x4608, "SCS"),
    (0x460A, "SWC"),
    (0x460C, "WCS"),
    (0x460E, "NWC"),
    // Phases.
    (0x4700, "SPR"),
    (0x4701, "SUM"),
    (0x4702, "FAL"),
    (0x4703, "AUT"),
    (0x4704, "WIN"),
    // Commands.
    (0x4800, "CCD"),
    (0x4801, "DRW"),
    (0x4802, "FRM"),
    (0x4803, "GOF"),
    (0x4804, "HLO"),
    (0x4805, "HST"),
    (0x4806, "HUH"),
    (0x4807, "IAM"),
    (0x4808, "LOD"),
    (0x4809, "MAP"),
    (0x480A, "MDF"),
    (0x480B, "MIS"),
    (0x480C, "NME"),
    (0x480D, "NOT"),
    (0x480E, "NOW"),
    (0x480F, "OBS"),
    (0x4810, "OFF"),
    (0x4811, "ORD"),
    (0x4812, "OUT"),
    (0x4813, "PRN"),
    (0x4814, "REJ"),
    (0x4815, "SCO"),
    (0x4816, "SLO"),
    (0x4817, "SND"),
    (0x4818, "SUB"),
    (0x4819, "SVE"),
    (0x481A, "THX"),
    (0x481B, "TME"),
    (0x481C, "YES"),
    (0x481D, "ADM"),
    (0x481E, "SMR"),
    // Parameters.
    (0x4900, "AOA"),
    (0x4901, "BTL"),
    (0x4902, "ERR"),
    (0x4903, "LVL"),
    (0x4904, "MRT"),
    (0x4905, "MTL"),
    (0x4906, "NPB"),
    (0x4907, "NPR"),
    (0x4908, "PDA"),
    (0x4909, "PTL"),
    (0x490A, "RTL"),
    (0x490B, "UNO"),
    (0x490D, "DSD"),
    // Press.
    (0x4A00, "ALY"),
    (0x4A01, "AND"),
    (0x4A02, "BWX"),
    (0x4A03, "DMZ"),
    (0x4A04, "ELS"),
    (0x4A05, "EXP"),
    (0x4A06, "FCT"),
    (0x4A07, "FOR"),
    (0x4A08, "FWD"),
    (0x4A09, "HOW"),
    (0x4A0A, "IDK"),
    (0x4A0B, "IFF"),
    (0x4A0C, "INS"),
    (0x4A0E, "OCC"),
    (0x4A0F, "ORR"),
    (0x4A10, "PCE"),
    (0x4A11, "POB"),
    (0x4A13, "PRP"),
    (0x4A14, "QRY"),
    (0x4A15, "SCD"),
    (0x4A16, "SRY"),
    (0x4A17, "SUG"),
    (0x4A18, "THK"),
    (0x4A19, "THN"),
    (0x4A1A, "TRY"),
    (0x4A1C, "VSS"),
    (0x4A1D, "WHT"),
    (0x4A1E, "WHY"),
    (0x4A1F, "XDO"),
    (0x4A20, "XOY"),
    (0x4A21, "YDO"),
    (0x4A22, "CHO"),
    (0x4A23, "BCC"),
    (0x4A24, "UNT"),
    (0x4A25, "NAR"),
    (0x4A26, "CCL"),
];

/// The 75 provinces of the standard map in DAIDE number order (the low byte of the token): the
/// DAIDE names, grouped by category and sorted by name within one.
pub const PROVINCES: [(&str, u8); NUM_PROVINCES] = [
    ("BOH", 0x50),
    ("BUR", 0x50),
    ("GAL", 0x50),
    ("RUH", 0x50),
    ("SIL", 0x50),
    ("TYR", 0x50),
    ("UKR", 0x50),
    ("BUD", 0x51),
    ("MOS", 0x51),
    ("MUN", 0x51),
    ("PAR", 0x51),
    ("SER", 0x51),
    ("VIE", 0x51),
    ("WAR", 0x51),
    ("ADR", 0x52),
    ("AEG", 0x52),
    ("BAL", 0x52),
    ("BAR", 0x52),
    ("BLA", 0x52),
    ("EAS", 0x52),
    ("ECH", 0x52),
    ("GOB", 0x52),
    ("GOL", 0x52),
    ("HEL", 0x52),
    ("ION", 0x52),
    ("IRI", 0x52),
    ("MAO", 0x52),
    ("NAO", 0x52),
    ("NTH", 0x52),
    ("NWG", 0x52),
    ("SKA", 0x52),
    ("TYS", 0x52),
    ("WES", 0x52),
    ("ALB", 0x54),
    ("APU", 0x54),
    ("ARM", 0x54),
    ("CLY", 0x54),
    ("FIN", 0x54),
    ("GAS", 0x54),
    ("LVN", 0x54),
    ("NAF", 0x54),
    ("PIC", 0x54),
    ("PIE", 0x54),
    ("PRU", 0x54),
    ("SYR", 0x54),
    ("TUS", 0x54),
    ("WAL", 0x54),
    ("YOR", 0x54),
    ("ANK", 0x55),
    ("BEL", 0x55),
    ("BER", 0x55),
    ("BRE", 0x55),
    ("CON", 0x55),
    ("DEN", 0x55),
    ("EDI", 0x55),
    ("GRE", 0x55),
    ("HOL", 0x55),
    ("KIE", 0x55),
    ("LON", 0x55),
    ("LVP", 0x55),
    ("MAR", 0x55),
    ("NAP", 0x55),
    ("NWY", 0x55),
    ("POR", 0x55),
    ("ROM", 0x55),
    ("RUM", 0x55),
    ("SEV", 0x55),
    ("SMY", 0x55),
    ("SWE", 0x55),
    ("TRI", 0x55),
    ("TUN", 0x55),
    ("VEN", 0x55),
    ("BUL", 0x57),
    ("SPA", 0x57),
    ("STP", 0x57),
];

/// The smallest integer a token holds.
pub const INT_MIN: i16 = -8192;
/// The largest integer a token holds.
pub const INT_MAX: i16 = 8191;

/// Why two bytes are no token of the standard game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("0x{0:04X} is not a DAIDE token of the standard map")]
pub struct UnknownToken(pub u16);

impl Token {
    /// An integer token; `None` outside -8192..=8191.
    pub fn int(v: i32) -> Option<Token> {
        if !(INT_MIN as i32..=INT_MAX as i32).contains(&v) {
            return None;
        }
        Some(Token((v as u16) & 0x3FFF))
    }

    /// A text character token (any byte).
    pub fn text(b: u8) -> Token {
        Token(u16::from(TEXT) << 8 | u16::from(b))
    }

    /// The province token of DAIDE province number `n` (`0..75`).
    pub fn province(n: u8) -> Option<Token> {
        PROVINCES
            .get(n as usize)
            .map(|&(_, cat)| Token(u16::from(cat) << 8 | u16::from(n)))
    }

    /// A named token (`HLO`, `AUS`, `STP`...), by its name.
    pub fn named(name: &str) -> Option<Token> {
        NAMED
            .iter()
            .find(|(_, n)| *n == name)
            .map(|&(v, _)| Token(v))
            .or_else(|| {
                PROVINCES
                    .iter()
                    .position(|(n, _)| *n == name)
                    .and_then(|i| Token::province(i as u8))
            })
    }

    /// Check two bytes: a token of the standard game, or why not.
    pub fn check(v: u16) -> Result<Token, UnknownToken> {
        let t = Token(v);
        let ok = t.is_int()
            || t.is_text()
            || v == BRA.0
            || v == KET.0
            || t.province_number().is_some()
            || NAMED.iter().any(|&(n, _)| n == v);
        if ok {
            Ok(t)
        } else {
            Err(UnknownToken(v))
        }
    }

    /// The category byte.
    pub fn category(self) -> u8 {
        (self.0 >> 8) as u8
    }

    /// Whether this is an integer token.
    pub fn is_int(self) -> bool {
        self.category() < 0x40
    }

    /// The integer of an integer token.
    pub fn as_int(self) -> Option<i16> {
        if !self.is_int() {
            return None;
        }
        let v = self.0 & 0x3FFF;
        Some(if v & 0x2000 != 0 {
            v as i16 - 0x4000
        } else {
            v as i16
        })
    }

    /// Whether this is a text character.
    pub fn is_text(self) -> bool {
        self.category() == TEXT
    }

    /// The DAIDE province number of a province token of the standard map.
    pub fn province_number(self) -> Option<u8> {
        let (cat, n) = (self.category(), self.0 as u8);
        match PROVINCES.get(n as usize) {
            Some(&(_, c)) if c == cat => Some(n),
            _ => None,
        }
    }

    /// The name of a named or province token.
    pub fn name(self) -> Option<&'static str> {
        if let Some(n) = self.province_number() {
            return Some(PROVINCES[n as usize].0);
        }
        NAMED.iter().find(|&&(v, _)| v == self.0).map(|&(_, n)| n)
    }
}

impl fmt::Display for Token {
    /// The token as the DAIDE documents write it: its name, an integer, `(`, `)`, or a text
    /// character as `'c'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == BRA {
            return f.write_str("(");
        }
        if *self == KET {
            return f.write_str(")");
        }
        if let Some(i) = self.as_int() {
            return write!(f, "{i}");
        }
        if self.is_text() {
            return write!(f, "'{}'", char::from(self.0 as u8).escape_default());
        }
        match self.name() {
            Some(n) => f.write_str(n),
            None => write!(f, "0x{:04X}", self.0),
        }
    }
}

/// Tokens to bytes (big-endian pairs).
pub fn to_bytes(tokens: &[Token]) -> Vec<u8> {
    tokens.iter().flat_map(|t| t.0.to_be_bytes()).collect()
}

/// Bytes to tokens: an even number of bytes, every pair a token of the standard game.
pub fn from_bytes(bytes: &[u8]) -> Result<Vec<Token>, TokenError> {
    if !bytes.len().is_multiple_of(2) {
        return Err(TokenError::OddLength(bytes.len()));
    }
    bytes
        .chunks_exact(2)
        .enumerate()
        .map(|(i, c)| {
            Token::check(u16::from_be_bytes([c[0], c[1]])).map_err(|e| TokenError::Unknown {
                index: i,
                token: e.0,
            })
        })
        .collect()
}

/// Why bytes or text are not a token sequence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Tokens are two bytes each.
    #[error("{0} bytes: tokens are two bytes each")]
    OddLength(usize),
    /// A pair of bytes that is no token.
    #[error("token {index}: 0x{token:04X} is not a DAIDE token of the standard map")]
    Unknown {
        /// 0-based token position.
        index: usize,
        /// The two bytes.
        token: u16,
    },
    /// A word of the text form that is no token.
    #[error("{0:?} is not a DAIDE token")]
    UnknownWord(String),
    /// An integer beyond -8192..=8191.
    #[error("{0} does not fit an integer token (-8192..=8191)")]
    IntRange(String),
    /// A text without its closing quote.
    #[error("unterminated text")]
    Unterminated,
}

/// The readable form: tokens separated by spaces, text runs as one `'quoted'` word (a quote
/// inside doubled), as the DAIDE documents write messages.
pub fn to_text(tokens: &[Token]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < tokens.len() {
        if !out.is_empty() {
            out.push(' ');
        }
        if tokens[i].is_text() {
            out.push('\'');
            while i < tokens.len() && tokens[i].is_text() {
                let b = tokens[i].0 as u8;
                match b {
                    b'\'' => out.push_str("''"),
                    // A backslash would start an escape: it is one itself.
                    b'\\' => out.push_str("\\x5C"),
                    0x20..=0x7E => out.push(char::from(b)),
                    _ => out.push_str(&format!("\\x{b:02X}")),
                }
                i += 1;
            }
            out.push('\'');
            continue;
        }
        out.push_str(&tokens[i].to_string());
        i += 1;
    }
    out
}

/// Parse the readable form of [`to_text`] (also `\xNN` escapes inside text).
pub fn from_text(text: &str) -> Result<Vec<Token>, TokenError> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            c if c.is_ascii_whitespace() => i += 1,
            b'(' => {
                out.push(BRA);
                i += 1
            }
            b')' => {
                out.push(KET);
                i += 1
            }
            b'\'' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None => return Err(TokenError::Unterminated),
                        Some(b'\'') if b.get(i + 1) == Some(&b'\'') => {
                            out.push(Token::text(b'\''));
                            i += 2;
                        }
                        Some(b'\'') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') if b.get(i + 1) == Some(&b'x') => {
                            let hex = text.get(i + 2..i + 4).ok_or(TokenError::Unterminated)?;
                            let v = u8::from_str_radix(hex, 16)
                                .map_err(|_| TokenError::UnknownWord(hex.to_string()))?;
                            out.push(Token::text(v));
                            i += 4;
                        }
                        Some(&c) => {
                            out.push(Token::text(c));
                            i += 1;
                        }
                    }
                }
            }
            _ => {
                let start = i;
                while i < b.len() && !b[i].is_ascii_whitespace() && !b"()'".contains(&b[i]) {
                    i += 1;
                }
                let w = &text[start..i];
                let t = if w.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
                    let v: i32 = w
                        .parse()
                        .map_err(|_| TokenError::UnknownWord(w.to_string()))?;
                    Token::int(v).ok_or_else(|| TokenError::IntRange(w.to_string()))?
                } else if let Some(hex) = w.strip_prefix("0x") {
                    let v = u16::from_str_radix(hex, 16)
                        .map_err(|_| TokenError::UnknownWord(w.to_string()))?;
                    Token(v)
                } else {
                    Token::named(w).ok_or_else(|| TokenError::UnknownWord(w.to_string()))?
                };
                out.push(t);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn numbers_as_the_daide_syntax_gives_them() {
        let n = |s: &str| Token::named(s).unwrap().0;
        assert_eq!(n("AUS"), 0x4100);
        assert_eq!(n("TUR"), 0x4106);
        assert_eq!(n("FLT"), 0x4201);
        assert_eq!(n("MTO"), 0x4323);
        assert_eq!(n("WVE"), 0x4382);
        assert_eq!(n("MBV"), 0x4400);
        assert_eq!(n("NSU"), 0x4410);
        assert_eq!(n("RET"), 0x4506);
        assert_eq!(n("SCS"), 0x4608);
        assert_eq!(n("WIN"), 0x4704);
        assert_eq!(n("SMR"), 0x481E);
        assert_eq!(n("UNO"), 0x490B);
        assert_eq!(n("BOH"), 0x5000);
        assert_eq!(n("BUD"), 0x5107);
        assert_eq!(n("ADR"), 0x520E);
        assert_eq!(n("GOB"), 0x5215);
        assert_eq!(n("ALB"), 0x5421);
        assert_eq!(n("YOR"), 0x542F);
        assert_eq!(n("ANK"), 0x5530);
        assert_eq!(n("VEN"), 0x5547);
        assert_eq!(n("BUL"), 0x5748);
        assert_eq!(n("STP"), 0x574A);
    }

    #[test]
    fn provinces_are_sorted_by_category_then_name() {
        for w in PROVINCES.windows(2) {
            assert!(
                w[0].1 < w[1].1 || (w[0].1 == w[1].1 && w[0].0 < w[1].0),
                "{w:?}"
            );
        }
    }

    #[test]
    fn integers_are_fourteen_bit_twos_complement() {
        assert_eq!(Token::int(0).unwrap().0, 0);
        assert_eq!(Token::int(1901).unwrap().0, 1901);
        assert_eq!(Token::int(-1).unwrap().0, 0x3FFF);
        assert_eq!(Token::int(-8192).unwrap().0, 0x2000);
        assert_eq!(Token::int(8192), None);
        assert_eq!(Token(0x3FFF).as_int(), Some(-1));
        assert_eq!(Token::check(0x4B41), Ok(Token::text(b'A')));
        assert_eq!(Token::check(0x5100), Err(UnknownToken(0x5100)));
        assert_eq!(Token::check(0x4107), Err(UnknownToken(0x4107)));
    }

    #[test]
    fn text_form() {
        let t = from_text("NME ('Dumb''Bot') ('1.0') -5").unwrap();
        assert_eq!(to_text(&t), "NME ( 'Dumb''Bot' ) ( '1.0' ) -5");
        assert_eq!(from_text(&to_text(&t)).unwrap(), t);
        assert!(matches!(from_text("XYZ"), Err(TokenError::UnknownWord(_))));
        assert!(matches!(from_text("'abc"), Err(TokenError::Unterminated)));
    }

    proptest! {
        #[test]
        fn int_tokens_round_trip(v in -8192i32..=8191) {
            prop_assert_eq!(Token::int(v).unwrap().as_int(), Some(v as i16));
        }

        #[test]
        fn bytes_never_panic_and_known_tokens_round_trip(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(t) = from_bytes(&bytes) {
                prop_assert_eq!(to_bytes(&t), bytes);
                prop_assert_eq!(from_text(&to_text(&t)).unwrap(), t);
            }
        }
    }
}
