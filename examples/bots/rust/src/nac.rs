//! An example bot for Negotiate and Conquer (`nac`) and Religion War (`religion-war`) in Rust,
//! standard library only. It speaks the original stdin/stdout protocol:
//!
//! * write `READY` and flush;
//! * read the settings block (`T P L`, then the L weights) once;
//! * each turn read the block (`t X`, L affinity lines with our column first, our real line, and on
//!   day turns the count line) and reply with 5 (day) or 2 (night) target indices.
//!
//! Strategy: put each pick where it most improves our standing, weighted by the target's weight.

use std::io::{self, BufRead, Write};

fn ints(line: &str) -> Vec<i64> {
    line.split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect()
}

fn choose(
    weights: &[i64],
    public: &[Vec<i64>],
    real: &[i64],
    picks: usize,
    gain: i64,
) -> Vec<usize> {
    let mut mine = real.to_vec();
    let mut chosen = Vec::with_capacity(picks);
    for _ in 0..picks {
        let mut best = (f64::MIN, 0);
        for i in 0..weights.len() {
            let rivals = &public[i][1..];
            let top = rivals.iter().copied().max().unwrap_or(0);
            let bottom = rivals.iter().copied().min().unwrap_or(0);
            let w = weights[i] as f64;
            let mut value = if mine[i] <= top && mine[i] + gain > top {
                w * 2.0
            } else if mine[i] > top {
                w * 0.1
            } else {
                w / (2.0 + (top - mine[i]) as f64)
            };
            if mine[i] <= bottom {
                value += w;
            }
            if value > best.0 {
                best = (value, i);
            }
        }
        mine[best.1] += gain;
        chosen.push(best.1);
    }
    chosen
}

fn main() -> io::Result<()> {
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    let mut out = io::stdout().lock();
    writeln!(out, "READY")?;
    out.flush()?;
    let mut next = || -> Option<String> { lines.next().and_then(Result::ok) };
    let Some(settings) = next() else {
        return Ok(());
    };
    let settings = ints(&settings);
    let (turns, targets) = (
        settings.first().copied().unwrap_or(9),
        settings.get(2).copied().unwrap_or(6) as usize,
    );
    let Some(weights) = next() else { return Ok(()) };
    let weights = ints(&weights);
    for _ in 0..turns {
        let Some(header) = next() else { return Ok(()) };
        let day = header.ends_with('D') || header.ends_with('W');
        let mut public = Vec::with_capacity(targets);
        for _ in 0..targets {
            public.push(ints(&next().unwrap_or_default()));
        }
        let real = ints(&next().unwrap_or_default());
        if day {
            next(); // picks per target in the previous night
        }
        let picks = choose(
            &weights,
            &public,
            &real,
            if day { 5 } else { 2 },
            if day { 1 } else { 2 },
        );
        let text: Vec<String> = picks.iter().map(|p| p.to_string()).collect();
        writeln!(out, "{}", text.join(" "))?;
        out.flush()?;
    }
    Ok(())
}
