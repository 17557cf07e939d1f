//! Starter client for Geister (GPW/GAT contest server protocol), Rust, standard library only.
//!
//! Build:  rustc -O -o bot main.rs
//! Run:    kakehiki play geister --seat 'tcp-cmd:/path/to/bot {host} {port}' --seat builtin:random
//!         or over stdin/stdout, without arguments: --seat 'cmd:/path/to/bot'
//! Check:  kakehiki check geister --seat 'tcp-cmd:/path/to/bot {host} {port}'
//!
//! Protocol (docs/protocols/geister.md): ASCII lines; the server ends its lines with CR LF.
//!   server: SET?                  -> you: SET:ABCD   (the 4 of your ghosts A..H that are red)
//!   server: MOV?<48-char board>   -> you: MOV:A,N    (ghost A..H, direction N E W S)
//!   server: OK / OKR / OKB / NG   (accepted / captured red / captured blue / refused)
//!   server: WON:/LST:/DRW:<board> the game is over; the server closes the connection.
//!
//! The board: 16 groups "x y letter", your ghosts A..H first (R/B), then the opponent's (u for
//! unknown); 99 = captured, 88 = escaped; y = 0 is the opponent's side, north.
//!
//! Strategy (replace it with yours): escape with a blue ghost when one stands on an exit corner,
//! otherwise a random legal move, preferring to move forward; red ghosts chosen at random.

use std::io::{self, BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

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

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// A legal move "MOV:X,D" for the 48-character board of a MOV? message.
fn choose_move(board: &[u8], rng: &mut Rng) -> String {
    let ghost = |i: usize| {
        let (x, y, c) = (board[3 * i], board[3 * i + 1], board[3 * i + 2]);
        (x as i32 - '0' as i32, y as i32 - '0' as i32, c)
    };
    // Captured ghosts show 99 and r/b: only R and B ghosts are on the board.
    let alive = |i: usize| matches!(ghost(i).2, b'R' | b'B');
    let (mut forward, mut other) = (Vec::new(), Vec::new());
    for i in (0..8).filter(|&i| alive(i)) {
        let (x, y, colour) = ghost(i);
        let letter = (b'A' + i as u8) as char;
        for (dir, dx, dy) in [('N', 0, -1), ('E', 1, 0), ('W', -1, 0), ('S', 0, 1)] {
            let exit = (x, y) == (0, 0) && matches!(dir, 'N' | 'W')
                || (x, y) == (5, 0) && matches!(dir, 'N' | 'E');
            if colour == b'B' && exit {
                return format!("MOV:{letter},{dir}"); // a blue ghost escapes: we win
            }
            let (nx, ny) = (x + dx, y + dy);
            let inside = (0..6).contains(&nx) && (0..6).contains(&ny);
            let blocked = (0..8).any(|j| alive(j) && (ghost(j).0, ghost(j).1) == (nx, ny));
            if inside && !blocked {
                let list = if dir == 'N' { &mut forward } else { &mut other };
                list.push(format!("MOV:{letter},{dir}"));
            }
        }
    }
    if !forward.is_empty() && (other.is_empty() || rng.below(10) < 6) {
        let i = rng.below(forward.len());
        return forward.swap_remove(i);
    }
    let i = rng.below(other.len());
    other.swap_remove(i)
}

/// Connect, retrying for a few seconds while the server starts.
fn connect(host: &str, port: &str) -> io::Result<TcpStream> {
    let mut attempt = 0;
    loop {
        match TcpStream::connect(format!("{host}:{port}")) {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(e) if attempt >= 100 => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(50)),
        }
        attempt += 1;
    }
}

fn main() -> io::Result<()> {
    // The match seed set by the referee.
    let seed = std::env::var("KAKEHIKI_SEED")
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = Rng(seed.unwrap_or(0));
    let args: Vec<String> = std::env::args().collect();
    // HOST PORT: the contest's TCP protocol; otherwise stdin/stdout.
    let (input, mut output): (Box<dyn BufRead>, Box<dyn Write>) = if args.len() == 3 {
        let stream = connect(&args[1], &args[2])?;
        (
            Box::new(BufReader::new(stream.try_clone()?)),
            Box::new(stream),
        )
    } else {
        (Box::new(io::stdin().lock()), Box::new(io::stdout().lock()))
    };
    for line in input.lines() {
        // Read lines, never raw chunks: TCP may merge messages.
        let line = line?;
        let msg = line.trim_end_matches(['\r', '\n']);
        let reply = if msg == "SET?" {
            let mut letters: Vec<char> = "ABCDEFGH".chars().collect();
            for i in (1..8).rev() {
                letters.swap(i, rng.below(i + 1));
            }
            format!("SET:{}", letters[..4].iter().collect::<String>())
        } else if msg.starts_with("MOV?") && msg.len() >= 52 {
            choose_move(&msg.as_bytes()[4..], &mut rng)
        } else if ["WON:", "LST:", "DRW:"].iter().any(|p| msg.starts_with(p)) {
            eprintln!("result {msg}");
            return Ok(());
        } else {
            continue; // OK, OKR, OKB, NG
        };
        output.write_all(format!("{reply}\r\n").as_bytes())?;
        output.flush()?;
    }
    Ok(())
}
