//! What a bot's processes are doing, read from `/proc`: whether every thread of the group is
//! asleep, whether one of them sleeps in a read of a pipe or socket (its input: in the sandbox
//! a bot has no other), and the CPU time the group has used. `check` reads it while a reply is
//! owed: a bot asleep reading its input, using no CPU, is waiting for the referee while the
//! referee waits for it, and will not answer however long it is given (its reply sits unflushed
//! in its output buffer, or was never written).
//!
//! A client that talks to the referee over TCP or WebSocket may hold other sockets (a language
//! model's endpoint): for it only a read of its seat's own connection counts as reading its
//! input, found by the connection's local port in the bot's `/proc/PID/net/tcp{,6}` (its
//! network namespace's table), so an agent waiting for its model is not taken for one waiting
//! for the referee.
//!
//! Only the kernel's own files are read (`/proc/PID/task/TID/{stat,syscall}`, the fd link a
//! read names, `/proc/PID/net/tcp{,6}`); where they cannot be read (another kernel, no
//! permission), [`group_activity`] says it cannot tell and nothing is concluded.

use std::path::Path;

/// A bot's process group, seen at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Activity {
    /// Some thread sleeps in a read of a pipe or a socket.
    pub reading_input: bool,
    /// No thread is running or runnable.
    pub all_asleep: bool,
    /// User and system CPU time of every thread, in clock ticks.
    pub cpu_ticks: u64,
}

/// The system calls that read a descriptor, by their number on this architecture, with the
/// descriptor as their first argument.
#[cfg(target_arch = "x86_64")]
const READS: &[u64] = &[0, 17, 19, 45, 47, 295]; // read pread64 readv recvfrom recvmsg preadv
#[cfg(target_arch = "aarch64")]
const READS: &[u64] = &[63, 65, 67, 69, 207, 212]; // read readv pread64 preadv recvfrom recvmsg
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const READS: &[u64] = &[];

/// The activity of every process in process group `pgid`; `None` when it cannot be read (no
/// such group, or `/proc` withholds a thread's system call). `input`: the local port of the
/// bot's TCP connection to its seat, for a client; `None` for a pipe bot, whose reads of any
/// pipe or socket are reads of its input.
pub fn group_activity(pgid: i32, input: Option<u16>) -> Option<Activity> {
    if pgid <= 0 || READS.is_empty() {
        return None;
    }
    let mut seen = false;
    let mut act = Activity {
        reading_input: false,
        all_asleep: true,
        cpu_ticks: 0,
    };
    // The socket inodes of the seat's connection, read from the first process's network view.
    let mut input_inodes: Option<Vec<String>> = None;
    for entry in std::fs::read_dir("/proc").ok()?.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Some(stat) = Stat::read(&entry.path().join("stat")) else {
            continue;
        };
        if stat.pgrp != pgid || matches!(stat.state, 'Z' | 'X') {
            continue;
        }
        seen = true;
        let proc_dir = Path::new("/proc").join(pid);
        if let (Some(port), None) = (input, &input_inodes) {
            input_inodes = Some(socket_inodes(&proc_dir, port));
        }
        for task in std::fs::read_dir(proc_dir.join("task")).ok()?.flatten() {
            let Some(t) = Stat::read(&task.path().join("stat")) else {
                continue;
            };
            act.cpu_ticks = act.cpu_ticks.saturating_add(t.cpu_ticks);
            match t.state {
                'S' | 'D' => {}
                'Z' | 'X' => continue,
                _ => act.all_asleep = false,
            }
            let syscall = std::fs::read_to_string(task.path().join("syscall")).ok()?;
            let mut fields = syscall.split_whitespace();
            let number = fields.next().and_then(|n| n.parse::<u64>().ok());
            let fd = fields
                .next()
                .and_then(|a| u64::from_str_radix(a.trim_start_matches("0x"), 16).ok());
            if let (Some(n), Some(fd)) = (number, fd) {
                if READS.contains(&n) {
                    let link = std::fs::read_link(proc_dir.join("fd").join(fd.to_string()));
                    if link.is_ok_and(|l| {
                        let l = l.to_string_lossy();
                        match &input_inodes {
                            Some(inodes) => l
                                .strip_prefix("socket:[")
                                .and_then(|i| i.strip_suffix(']'))
                                .is_some_and(|i| inodes.iter().any(|n| n == i)),
                            None => l.starts_with("pipe:") || l.starts_with("socket:"),
                        }
                    }) {
                        act.reading_input = true;
                    }
                }
            }
        }
    }
    seen.then_some(act)
}

/// The inodes of the TCP sockets whose local port is `port`, in the network namespace of the
/// process at `proc_dir` (`net/tcp` and `net/tcp6`: `sl local_address rem_address st tx:rx
/// tr:when retrnsmt uid timeout inode`, addresses as `HEX:PORT`).
fn socket_inodes(proc_dir: &Path, port: u16) -> Vec<String> {
    let want = format!(":{port:04X}");
    let mut out = Vec::new();
    for table in ["net/tcp", "net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(proc_dir.join(table)) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() > 9 && f[1].ends_with(&want) {
                out.push(f[9].to_string());
            }
        }
    }
    out
}

/// The fields of a `stat` file used here.
struct Stat {
    state: char,
    pgrp: i32,
    cpu_ticks: u64,
}

impl Stat {
    fn read(path: &Path) -> Option<Stat> {
        let text = std::fs::read_to_string(path).ok()?;
        // After the parenthesised command: state ppid pgrp session tty_nr tpgid flags minflt
        // cminflt majflt cmajflt utime stime ...
        let rest = &text[text.rfind(')')? + 1..];
        let f: Vec<&str> = rest.split_whitespace().collect();
        Some(Stat {
            state: f.first()?.chars().next()?,
            pgrp: f.get(2)?.parse().ok()?,
            cpu_ticks: f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    fn spawn(script: &str) -> std::process::Child {
        Command::new("sh")
            .args(["-c", script])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap()
    }

    fn settle(pgid: i32, want: impl Fn(&Activity) -> bool) -> Activity {
        for _ in 0..100 {
            if let Some(a) = group_activity(pgid, None).filter(|a| want(a)) {
                return a;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        panic!("never seen: {:?}", group_activity(pgid, None));
    }

    #[test]
    fn a_process_blocked_reading_its_input_is_seen_reading_and_asleep() {
        let mut c = spawn("read line; echo got");
        let a = settle(c.id() as i32, |a| a.reading_input);
        assert!(a.all_asleep, "{a:?}");
        c.stdin.take().unwrap().write_all(b"x\n").unwrap();
        c.wait().unwrap();
        assert_eq!(
            group_activity(c.id() as i32, None),
            None,
            "the group is gone"
        );
    }

    /// A client reading a socket other than its seat's connection (a model's endpoint) is not
    /// reading its input; reading the seat's connection is.
    #[test]
    fn a_client_reads_its_input_only_on_its_seat_connection() {
        let seat = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let model = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let script = format!(
            "import socket, sys\n\
             s = socket.create_connection(('127.0.0.1', {}))\n\
             m = socket.create_connection(('127.0.0.1', {}))\n\
             print(s.getsockname()[1], flush=True)\n\
             m.recv(1)\n\
             s.recv(1)\n",
            seat.local_addr().unwrap().port(),
            model.local_addr().unwrap().port()
        );
        let mut c = Command::new("python3")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let (_s, _) = seat.accept().unwrap();
        let (mut m, _) = model.accept().unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(c.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        let port: u16 = line.trim().parse().unwrap();
        let pgid = c.id() as i32;
        // Waiting for the model: asleep reading a socket (what a pipe bot's watch would take for
        // its input), but not its seat's connection.
        settle(pgid, |a| a.reading_input && a.all_asleep);
        let a = group_activity(pgid, Some(port)).unwrap();
        assert!(a.all_asleep && !a.reading_input, "{a:?}");
        // The model answers; now it waits on its seat's connection: its input.
        m.write_all(b"x").unwrap();
        settle(pgid, |_| {
            group_activity(pgid, Some(port)).is_some_and(|a| a.reading_input && a.all_asleep)
        });
        c.kill().unwrap();
        c.wait().unwrap();
    }

    #[test]
    fn a_sleeping_or_busy_process_is_not_reading_its_input() {
        let mut sleeping = spawn("exec sleep 5");
        let a = settle(sleeping.id() as i32, |a| a.all_asleep);
        assert!(!a.reading_input, "{a:?}");
        sleeping.kill().unwrap();
        sleeping.wait().unwrap();
        let mut busy = spawn("while :; do :; done");
        let a = settle(busy.id() as i32, |a| !a.all_asleep);
        assert!(!a.reading_input, "{a:?}");
        busy.kill().unwrap();
        busy.wait().unwrap();
    }
}
