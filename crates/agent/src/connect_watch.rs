//! Where a TCP client tried to connect: the referee's side of the `connect` watch.
//!
//! A TCP client seat's bot runs with a last seccomp program that hands each of its `connect(2)`
//! calls to the referee (seccomp user notification). [`watch`] answers them on a thread of its
//! own: a call to one of the seat's ports, or of another family (a Unix socket), goes on
//! unchanged, and Landlock and the bot's network namespace decide it as before; a call to any
//! other port is answered `ECONNREFUSED` on loopback and `ENETUNREACH` elsewhere (what a machine
//! where nothing listens there says, instead of Landlock's "permission denied"), and its address
//! is kept, so that the referee's message can say "your bot connected to 127.0.0.1:10002".
//!
//! The watch enforces nothing. It reads the address from the bot's memory, which another of its
//! threads may change in between: a hostile bot can make its own diagnosis wrong, and reach
//! nothing it could not reach without the watch. A bot that calls `connect` in a loop is slowed
//! down (after [`FREE_CALLS`] calls, at most one every [`PACE`]): the referee's work for it stays
//! bounded, and the time is the bot's own.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

/// Calls answered at once; after them, one every [`PACE`].
const FREE_CALLS: u64 = 64;
const PACE: Duration = Duration::from_millis(10);
/// Distinct refused addresses kept (the count goes on).
const KEPT: usize = 4;

/// The `connect` calls of one client that the watch refused.
#[derive(Debug, Default)]
pub struct RefusedConnects(Mutex<Refused>);

#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Refused {
    /// The first distinct addresses, in order.
    pub addrs: Vec<SocketAddr>,
    /// Every refused call.
    pub count: u64,
}

impl RefusedConnects {
    /// What was refused so far.
    pub fn get(&self) -> Refused {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn add(&self, addr: SocketAddr) {
        let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
        r.count += 1;
        if r.addrs.len() < KEPT && !r.addrs.contains(&addr) {
            r.addrs.push(addr);
        }
    }
}

impl Refused {
    /// `127.0.0.1:10002`, `127.0.0.1:10002 and [::1]:80`, ... (the first four addresses);
    /// `None` when nothing was refused.
    pub fn describe(&self) -> Option<String> {
        let (last, rest) = self.addrs.split_last()?;
        let mut s = rest
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if !s.is_empty() {
            s.push_str(" and ");
        }
        s.push_str(&last.to_string());
        Some(s)
    }
}

/// Answer the notifications of `listener` on a thread until the bot's last process ends or the
/// returned record is dropped; calls to `ports` go on.
pub(crate) fn watch(listener: OwnedFd, ports: Vec<u16>) -> Arc<RefusedConnects> {
    let record = Arc::new(RefusedConnects::default());
    let weak = Arc::downgrade(&record);
    let spawned = std::thread::Builder::new()
        .name("connect-watch".into())
        .spawn(move || serve(&listener, &ports, &weak));
    if let Err(e) = spawned {
        // Without the thread every `connect` of the bot would wait for ever.
        tracing::error!("cannot start the connect watch: {e}");
    }
    record
}

fn serve(listener: &OwnedFd, ports: &[u16], record: &Weak<RefusedConnects>) {
    let fd = listener.as_raw_fd();
    let mut calls = 0u64;
    loop {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: poll(2) on one descriptor we own.
        let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        let Some(record) = record.upgrade() else {
            return;
        };
        if pfd.revents & libc::POLLIN == 0 {
            // POLLHUP: every process of the bot has ended (Linux 5.8+).
            if pfd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                return;
            }
            continue;
        }
        // SAFETY: an all-zero seccomp_notif is what the kernel expects to fill.
        let mut req: libc::seccomp_notif = unsafe { std::mem::zeroed() };
        // SAFETY: the documented ioctl on the listener with a buffer of its type.
        if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_RECV, &mut req) } != 0 {
            match std::io::Error::last_os_error().raw_os_error() {
                // The calling thread died or was interrupted before we took its call.
                Some(libc::ENOENT) | Some(libc::EINTR) => continue,
                _ => return,
            }
        }
        calls += 1;
        if calls > FREE_CALLS {
            std::thread::sleep(PACE);
        }
        let refused = target(fd, &req).filter(|a| !ports.contains(&a.port()));
        // SAFETY: an all-zero response is then filled in.
        let mut resp: libc::seccomp_notif_resp = unsafe { std::mem::zeroed() };
        resp.id = req.id;
        match refused {
            Some(addr) => {
                record.add(addr);
                let errno = if addr.ip().is_loopback() {
                    libc::ECONNREFUSED
                } else {
                    libc::ENETUNREACH
                };
                resp.error = -errno;
            }
            None => resp.flags = libc::SECCOMP_USER_NOTIF_FLAG_CONTINUE as u32,
        }
        // SAFETY: the documented ioctl with a response of its type. ENOENT: the caller is gone.
        unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_SEND, &resp) };
    }
}

/// The internet address a notified `connect` names, if it is one and can be read.
fn target(fd: i32, req: &libc::seccomp_notif) -> Option<SocketAddr> {
    let (ptr, len) = (req.data.args[1], req.data.args[2] as usize);
    let mut buf = [0u8; 28];
    let want = len.min(buf.len());
    if want < 8 || ptr > i64::MAX as u64 {
        return None;
    }
    let mem = std::fs::File::open(format!("/proc/{}/mem", req.pid)).ok()?;
    mem.read_exact_at(&mut buf[..want], ptr).ok()?;
    // The call is still the one we were told of (the pid was not reused in between).
    let mut id = req.id;
    // SAFETY: the documented ioctl with the notification's id.
    if unsafe { libc::ioctl(fd, libc::SECCOMP_IOCTL_NOTIF_ID_VALID, &mut id) } != 0 {
        return None;
    }
    parse_sockaddr(&buf[..want])
}

/// A `sockaddr_in` or `sockaddr_in6` as the kernel lays it out (family in native order, port
/// in network order).
fn parse_sockaddr(b: &[u8]) -> Option<SocketAddr> {
    let family = u16::from_ne_bytes([b[0], b[1]]) as i32;
    let port = u16::from_be_bytes([b[2], b[3]]);
    match family {
        libc::AF_INET if b.len() >= 8 => {
            let ip = Ipv4Addr::new(b[4], b[5], b[6], b[7]);
            Some(SocketAddr::from((ip, port)))
        }
        libc::AF_INET6 if b.len() >= 24 => {
            let mut octets = [0u8; 16];
            octets.copy_from_slice(&b[8..24]);
            let ip = Ipv6Addr::from(octets);
            // An IPv4 address on a dual-stack socket is said as IPv4.
            let ip = ip
                .to_ipv4_mapped()
                .map(std::net::IpAddr::V4)
                .unwrap_or(std::net::IpAddr::V6(ip));
            Some(SocketAddr::from((ip, port)))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sockaddrs_are_read_as_the_kernel_lays_them_out() {
        let mut v4 = [0u8; 16];
        v4[..2].copy_from_slice(&(libc::AF_INET as u16).to_ne_bytes());
        v4[2..4].copy_from_slice(&10002u16.to_be_bytes());
        v4[4..8].copy_from_slice(&[127, 0, 0, 1]);
        assert_eq!(
            parse_sockaddr(&v4),
            Some("127.0.0.1:10002".parse().unwrap())
        );
        let mut v6 = [0u8; 28];
        v6[..2].copy_from_slice(&(libc::AF_INET6 as u16).to_ne_bytes());
        v6[2..4].copy_from_slice(&80u16.to_be_bytes());
        v6[8..24].copy_from_slice(&Ipv6Addr::LOCALHOST.octets());
        assert_eq!(parse_sockaddr(&v6), Some("[::1]:80".parse().unwrap()));
        v6[8..24].copy_from_slice(&Ipv4Addr::new(10, 0, 0, 1).to_ipv6_mapped().octets());
        assert_eq!(parse_sockaddr(&v6), Some("10.0.0.1:80".parse().unwrap()));
        let mut unix = [0u8; 16];
        unix[..2].copy_from_slice(&(libc::AF_UNIX as u16).to_ne_bytes());
        assert_eq!(parse_sockaddr(&unix), None);
        // A sockaddr_in6 cut short.
        assert_eq!(parse_sockaddr(&v6[..16]), None);
    }

    #[test]
    fn refused_addresses_are_described_first_ones_kept() {
        let r = RefusedConnects::default();
        assert_eq!(r.get().describe(), None);
        r.add("127.0.0.1:10002".parse().unwrap());
        assert_eq!(r.get().describe().as_deref(), Some("127.0.0.1:10002"));
        r.add("127.0.0.1:10002".parse().unwrap());
        r.add("[::1]:80".parse().unwrap());
        assert_eq!(
            r.get().describe().as_deref(),
            Some("127.0.0.1:10002 and [::1]:80")
        );
        for p in 1..10 {
            r.add(SocketAddr::from(([127, 0, 0, 1], p)));
        }
        assert_eq!(r.get().addrs.len(), KEPT);
        assert_eq!(r.get().count, 12);
        assert_eq!(
            r.get().describe().as_deref(),
            Some("127.0.0.1:10002, [::1]:80, 127.0.0.1:1 and 127.0.0.1:2")
        );
    }
}
