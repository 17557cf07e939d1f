//! The cheapest possible NAC bot: READY, then target 0 for every pick, read line by line. Used to
//! measure the referee's own overhead.

use std::io::{self, BufRead, Write};

fn main() -> io::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(b"READY\n")?;
    out.flush()?;
    let stdin = io::stdin();
    let mut lines = stdin.lock().lines();
    // Settings block: turns, then weights.
    let turns: usize = match lines.next() {
        Some(Ok(l)) => l
            .split(' ')
            .next()
            .and_then(|t| t.parse().ok())
            .unwrap_or(9),
        _ => return Ok(()),
    };
    lines.next();
    for _ in 0..turns {
        let Some(Ok(header)) = lines.next() else {
            return Ok(());
        };
        let day = header.ends_with('D') || header.ends_with('W');
        for _ in 0..(if day { 8 } else { 7 }) {
            lines.next();
        }
        out.write_all(if day { b"0 0 0 0 0\n" } else { b"0 0\n" })?;
        out.flush()?;
    }
    Ok(())
}
