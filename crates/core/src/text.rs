//! Text a bot wrote, made safe for the organiser's terminal.
//!
//! A bot's stderr, its error details and the names it gives reach the terminal of whoever runs
//! `play`, `check`, `contest run` or `serve`. Printed raw, their control bytes are commands to
//! that terminal: `ESC ] 52` writes the clipboard, `ESC ] 0` sets the window title, `ESC [ 2 J`
//! clears the screen, a carriage return moves back over the line to overwrite the referee's own
//! words. Every piece of bot-written text goes through [`terminal_text`] (several lines, each
//! to be prefixed as the bot's by the caller) or [`terminal_line`] (one line) before it is
//! printed, as pages already escape it for HTML.

/// `text` with every control character shown as an escape (`\x1b`, `\x07`, `\r`; C1 controls and
/// the Unicode bidirectional controls as `\u{9b}`, `\u{202e}`), keeping newlines and tabs.
pub fn terminal_text(text: &str) -> String {
    escape(text, true)
}

/// [`terminal_text`] for text that must stay on one line: newlines and tabs escaped too (`\n`,
/// `\t`), so that a bot cannot start a line of its own that looks like the referee's.
pub fn terminal_line(text: &str) -> String {
    escape(text, false)
}

fn escape(text: &str, keep_lines: bool) -> String {
    if !text.chars().any(|c| needs_escape(c, keep_lines)) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !needs_escape(c, keep_lines) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    out
}

fn needs_escape(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        // C0, DEL and C1 controls (ESC, BEL, CR, backspace, CSI U+009B ...).
        c if c.is_control() => true,
        // Bidirectional overrides and isolates reorder what the terminal shows.
        '\u{061c}'
        | '\u{200e}'
        | '\u{200f}'
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// The last `lines` lines of `text` (a stderr tail), without its trailing line end.
pub fn last_lines(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// `error` and its causes joined with ": ", leaving out a cause whose text the message before
/// it already contains (library errors often include their source in their own message, and
/// the chain would repeat it: "cannot open x: No such file (os error 2): No such file (os error
/// 2)").
pub fn error_chain(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut cause = Some(error);
    while let Some(e) = cause {
        let text = e.to_string();
        let text = text.trim();
        if !text.is_empty() && !parts.iter().any(|p| p.contains(text)) {
            parts.push(text.to_string());
        }
        cause = e.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_bytes_are_escaped_and_lines_kept() {
        let hostile = "a\x1b]52;c;cHduZWQ=\x07b\x1b]0;title\x07\x1b[2J\r\nwinner: seat 0\tx\u{9b}1m\u{202e}z\x7f";
        let text = terminal_text(hostile);
        assert_eq!(
            text,
            "a\\x1b]52;c;cHduZWQ=\\x07b\\x1b]0;title\\x07\\x1b[2J\\r\nwinner: seat 0\tx\\u{9b}1m\\u{202e}z\\x7f"
        );
        assert!(!text
            .chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'));
        let line = terminal_line(hostile);
        assert!(!line.contains('\n') && !line.contains('\t'), "{line}");
        assert!(line.contains("\\r\\nwinner: seat 0\\tx"), "{line}");
        // Ordinary text, including other scripts, is unchanged.
        assert_eq!(terminal_line("勝ち — ok"), "勝ち — ok");
    }
}
