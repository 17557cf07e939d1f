//! Speech length: counting and trimming as the upstream server does (characters without spaces
//! by default, with spaces, or words), and the per-talk / per-agent / base / mention budget.

use super::settings::TalkLimits;

/// Length of `text` in the configured unit.
pub fn count(text: &str, in_word: bool, spaces: bool) -> i64 {
    if in_word {
        text.split_whitespace().count() as i64
    } else if spaces {
        text.chars().count() as i64
    } else {
        text.chars().filter(|c| !c.is_whitespace()).count() as i64
    }
}

/// `text` cut to at most `limit` units (a limit of 0 or less leaves nothing).
pub fn trim(text: &str, limit: i64, in_word: bool, spaces: bool) -> String {
    if count(text, in_word, spaces) <= limit {
        return text.to_string();
    }
    if limit <= 0 {
        return String::new();
    }
    let limit = limit as usize;
    if in_word {
        return text
            .split_whitespace()
            .take(limit)
            .collect::<Vec<_>>()
            .join(" ");
    }
    let mut n = 0;
    for (i, c) in text.char_indices() {
        if spaces || !c.is_whitespace() {
            n += 1;
            if n == limit {
                return text[..i + c.len_utf8()].to_string();
            }
        }
    }
    text.to_string()
}

/// The first mention `@Name` of another agent in `text`: (byte index, name).
pub fn first_mention<'a, N: AsRef<str>>(
    text: &str,
    names: &'a [N],
    me: usize,
) -> Option<(usize, &'a str)> {
    let mut best: Option<(usize, &str)> = None;
    for (i, n) in names.iter().enumerate() {
        if i == me {
            continue;
        }
        let tag = format!("@{}", n.as_ref());
        if let Some(at) = text.find(&tag) {
            if best.is_none_or(|(b, _)| at < b) {
                best = Some((at, n.as_ref()));
            }
        }
    }
    best
}

/// Apply the length limits to one speech (not Skip or Over). `remain` is the agent's remaining
/// per-day budget (`None`: no per-agent limit) and is charged. Returns the speech as recorded;
/// an empty result means the speech becomes `Over`.
pub fn limit_speech(
    text: &str,
    l: &TalkLimits,
    remain: &mut Option<i64>,
    names: &[impl AsRef<str>],
    me: usize,
) -> String {
    let (w, s) = (l.count_in_word, l.count_spaces);
    let mut mention = String::new();
    let mut common = text.to_string();
    let mut after = String::new();
    if l.per_agent_length.is_some() || l.base_length.is_some() {
        let base = l.base_length.unwrap_or(0);
        match first_mention(text, names, me) {
            Some((at, name)) => {
                let before = &text[..at];
                let rest = &text[at + 1 + name.len()..];
                mention = format!(" @{name} ");
                common = trim(before, base + remain.unwrap_or(0), w, s);
                let cost = count(before, w, s) - base;
                if cost > 0 {
                    if let Some(r) = remain.as_mut() {
                        *r -= cost;
                    }
                }
                after = trim(rest, l.mention_length + remain.unwrap_or(0), w, s);
                let cost = count(&after, w, s) - l.mention_length;
                if cost > 0 {
                    if let Some(r) = remain.as_mut() {
                        *r -= cost;
                    }
                }
            }
            None => {
                common = trim(text, base + remain.unwrap_or(0), w, s);
                let cost = count(text, w, s) - base;
                if cost > 0 {
                    if let Some(r) = remain.as_mut() {
                        *r -= cost;
                    }
                }
            }
        }
    }
    if let Some(per_talk) = l.per_talk {
        let cl = count(&common, w, s);
        let ml = count(&after, w, s);
        if cl + ml > per_talk {
            if cl > per_talk {
                common = trim(&common, per_talk, w, s);
                mention.clear();
                after.clear();
            } else {
                after = trim(&after, per_talk - cl, w, s);
            }
        }
    }
    format!("{common}{mention}{after}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> TalkLimits {
        TalkLimits {
            per_agent: 4,
            per_day: 20,
            count_in_word: false,
            count_spaces: false,
            per_talk: None,
            mention_length: 5,
            per_agent_length: Some(10),
            base_length: Some(3),
            max_skip: 0,
            duration_ms: None,
        }
    }

    #[test]
    fn counting_modes() {
        assert_eq!(count("a b  c", false, false), 3);
        assert_eq!(count("a b  c", false, true), 6);
        assert_eq!(count("hello big world", true, false), 3);
        assert_eq!(count("人狼 です", false, false), 4);
        assert_eq!(trim("a b c d", 2, false, false), "a b");
        assert_eq!(trim("one two three", 2, true, false), "one two");
        assert_eq!(trim("あいうえお", 3, false, true), "あいう");
        assert_eq!(trim("abc", 0, false, false), "");
    }

    #[test]
    fn base_length_is_free_and_the_budget_is_charged() {
        let names: Vec<String> = (1..=3).map(|i| format!("Agent[0{i}]")).collect();
        let mut remain = Some(10);
        // 8 characters: 3 free, 5 charged.
        assert_eq!(
            limit_speech("abcdefgh", &limits(), &mut remain, &names, 0),
            "abcdefgh"
        );
        assert_eq!(remain, Some(5));
        // 20 characters: cut to 3 + 5, budget charged by the full 17 (as upstream).
        let s = limit_speech("abcdefghijklmnopqrst", &limits(), &mut remain, &names, 0);
        assert_eq!(s, "abcdefgh");
        assert_eq!(remain, Some(-12));
    }

    #[test]
    fn mention_gets_its_own_allowance() {
        let names: Vec<String> = (1..=3).map(|i| format!("Agent[0{i}]")).collect();
        let mut remain = Some(0);
        let s = limit_speech(
            "hi @Agent[02] you are a wolf",
            &limits(),
            &mut remain,
            &names,
            0,
        );
        // before "hi " (2 chars ≤ base 3), mention, after trimmed to 5 non-space characters.
        assert_eq!(s, "hi  @Agent[02]  you ar");
        assert_eq!(remain, Some(0));
        // A mention of oneself is not a mention.
        let mut remain = Some(0);
        let s = limit_speech("@Agent[01] abcdef", &limits(), &mut remain, &names, 0);
        assert_eq!(s, "@Ag");
    }

    #[test]
    fn per_talk_cuts_and_drops_the_mention() {
        let mut l = limits();
        l.per_agent_length = None;
        l.base_length = None;
        l.per_talk = Some(4);
        let mut remain = None;
        assert_eq!(
            limit_speech("abcdefg", &l, &mut remain, &[] as &[&str], 0),
            "abcd"
        );
    }
}
