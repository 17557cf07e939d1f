//! What the binary's test modules share: the binary, the repository, an output as text, and a
//! server started on port 0 whose address is read back from what it prints.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// The path of the `kakehiki` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_kakehiki")
}

/// A command running the binary under test.
pub fn kakehiki() -> Command {
    Command::new(bin())
}

/// The repository's root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("the repository root")
}

/// A path inside the repository, as text (for a command line).
pub fn repo_file(rel: &str) -> String {
    repo().join(rel).display().to_string()
}

/// Stdout then stderr, for assertions on what a user reads.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The exit status, stdout and stderr, labelled, for a failure message.
pub fn described(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A server process, killed when dropped.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Where a started server says its address.
#[derive(Clone, Copy)]
pub enum Says {
    Stdout,
    Stderr,
}

/// Start `cmd` and read what it prints on `says` until `find` gives a value for a line (the
/// address of a server told to listen on port 0): the process and that value. The rest of that
/// output is drained on a thread so that the process never blocks writing it, onto the test's
/// stderr.
pub fn start_and_read<T>(
    mut cmd: Command,
    says: Says,
    mut find: impl FnMut(&str) -> Option<T>,
) -> (Server, T) {
    match says {
        Says::Stdout => cmd.stdout(Stdio::piped()),
        Says::Stderr => cmd.stderr(Stdio::piped()),
    };
    let mut child = cmd.spawn().expect("the server starts");
    let out: Box<dyn std::io::Read + Send> = match says {
        Says::Stdout => Box::new(child.stdout.take().expect("piped stdout")),
        Says::Stderr => Box::new(child.stderr.take().expect("piped stderr")),
    };
    let server = Server(child);
    let mut lines = BufReader::new(out).lines();
    let mut seen = Vec::new();
    let found = loop {
        let Some(Ok(line)) = lines.next() else {
            panic!(
                "the server ended before saying its address; it printed:\n{}",
                seen.join("\n")
            );
        };
        if let Some(v) = find(&line) {
            break v;
        }
        seen.push(line);
    };
    // Shown with a failing test's output (a server's panic says why it ended).
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            eprintln!("server: {line}");
        }
    });
    (server, found)
}

/// The first `http://127.0.0.1:PORT` in `line`, as a base URL.
pub fn loopback_url(line: &str) -> Option<String> {
    const AT: &str = "http://127.0.0.1:";
    let rest = &line[line.find(AT)?..];
    let digits = rest[AT.len()..]
        .bytes()
        .take_while(u8::is_ascii_digit)
        .count();
    (digits > 0).then(|| rest[..AT.len() + digits].to_string())
}
