//! Starter bot for Religion War (`religion-war`, CODE FESTIVAL 2014), Rust, standard library only.
//!
//! Build:  rustc -O -o bot main.rs
//! Run:    kakehiki play religion-war --seat 'cmd:./bot' --fill builtin:random
//!         (a relative path is resolved against the directory kakehiki runs in)
//! Check:  kakehiki check religion-war --seat 'cmd:/path/to/bot'
//!
//! Protocol (docs/protocols/religion-war.md; nac's with other labels): stdin/stdout, one line per
//! message, flush after every write. Scoring comes once, after turn 9 (nac: after 5 and 9).
//!   1. write READY
//!   2. read the settings once: "T P L" (turns, seats, targets), then the L weights
//!   3. every turn read the block: "t X" (X = W weekday / H holiday), L lines of affinity (your
//!      own first), your real affinity line, and on days the previous turn's pick counts; answer
//!      with 5 target indices on a day, 2 on a night.
//!
//! After the last turn the referee closes stdin: exit then.
//!
//! Strategy (replace it with yours): each pick goes to the target with the best weight per point
//! of affinity we lack to lead it, with a little seeded noise to break ties.

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
}

/// How much we want one more point on a target: most when just behind or tied.
fn value(weight: i64, mine: i64, top: i64) -> f64 {
    let gap = mine - top;
    if gap < 0 {
        weight as f64 * 100.0 / (1 - gap) as f64
    } else {
        weight as f64 * 100.0 / (2 + gap) as f64
    }
}

fn ints(line: &str) -> Vec<i64> {
    line.split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

fn main() -> io::Result<()> {
    // The match seed set by the referee.
    let seed = std::env::var("KAKEHIKI_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0));
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    // The next line, or None at EOF (the game is over).
    let mut next = move || lines.next().and_then(Result::ok);
    let mut out = io::stdout().lock();

    writeln!(out, "READY")?;
    out.flush()?;
    let (Some(settings), Some(weights)) = (next(), next()) else {
        return Ok(());
    };
    let (settings, weights) = (ints(&settings), ints(&weights));
    if settings.len() < 3 {
        return Ok(());
    }
    let (turns, targets) = (settings[0], settings[2] as usize);

    for _ in 0..turns {
        let Some(header) = next() else { return Ok(()) }; // "t X"
        let day = header.ends_with('D') || header.ends_with('W'); // D/N: nac's labels
        let mut public = Vec::with_capacity(targets);
        for _ in 0..targets {
            let Some(row) = next() else { return Ok(()) };
            public.push(ints(&row));
        }
        let Some(real) = next() else { return Ok(()) };
        let mut mine = ints(&real);
        if day && next().is_none() {
            return Ok(()); // last turn's pick counts (unused here)
        }

        let (picks, gain) = if day { (5, 1) } else { (2, 2) };
        let mut reply = Vec::with_capacity(picks);
        for _ in 0..picks {
            let mut best = (0, -1.0);
            for i in 0..targets {
                let top = public[i].iter().skip(1).copied().max().unwrap_or(0); // best rival
                let v = value(weights[i], mine[i], top) + (rng.next() % 1000) as f64 / 100.0;
                if v > best.1 {
                    best = (i, v);
                }
            }
            mine[best.0] += gain;
            reply.push(best.0.to_string());
        }
        writeln!(out, "{}", reply.join(" "))?;
        out.flush()?;
    }
    Ok(())
}
