//! The ladder faces the internet: every connection is bounded (docs/ladder.md, "Limits of the
//! server"). The attacks this answers: connections whose headers never finish (a slow loris),
//! a body sent a byte a minute, one address opening every descriptor the server has, and an
//! IPv6 client rotating through the addresses of its /64.
//!
//! - At most [`ServeLimits::connections`] connections at once, and at most
//!   [`ServeLimits::connections_per_client`] from one client ([`client_key`]: an IPv4 address or
//!   an IPv6 /64); a connection over either is answered `503` at once and closed, never queued.
//! - A request's headers must arrive within [`ServeLimits::header_timeout`] (also the time an
//!   idle kept-alive connection stays open), and at most 32 KiB of them.
//! - A body that sends nothing for [`ServeLimits::body_timeout`] ends its request (`408`), and a
//!   request is answered within [`ServeLimits::request_timeout`] or ends with `408`.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::http::StatusCode;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tower::ServiceExt;
use tower_http::timeout::{RequestBodyTimeoutLayer, TimeoutLayer};

/// The bounds of [`serve`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeLimits {
    /// Connections open at once.
    pub connections: usize,
    /// Connections open at once from one client ([`client_key`]).
    pub connections_per_client: usize,
    /// Time to send a request's headers, and to send the next request on a kept-alive one.
    pub header_timeout: Duration,
    /// Time a request body may send nothing.
    pub body_timeout: Duration,
    /// Time to read a request and answer it.
    pub request_timeout: Duration,
}

impl Default for ServeLimits {
    fn default() -> ServeLimits {
        ServeLimits {
            connections: 512,
            connections_per_client: 32,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(300),
        }
    }
}

/// The most bytes of a request's start line and headers.
pub const MAX_HEADER_BYTES: usize = 32 << 10;

/// The answer to a connection over a limit.
const REFUSED: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 5\r\n\
Content-Type: text/plain; charset=utf-8\r\nContent-Length: 46\r\nConnection: close\r\n\r\n\
too many connections: try again in 5 seconds\r\n";

/// The client an address belongs to, for the per-client limits: an IPv4 address is one
/// client, an IPv6 address counts as its /64 (one site's network: a host there may use any of
/// its 2^64 addresses), an IPv4 address mapped into IPv6 as the IPv4 address.
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// Connections open per client; a client's entry goes when its last connection closes, so
/// there are never more entries than connections.
struct Clients {
    limit: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of a client, counted until dropped.
struct ClientSlot {
    clients: Arc<Clients>,
    key: IpAddr,
}

impl Clients {
    fn enter(self: &Arc<Self>, key: IpAddr) -> Option<ClientSlot> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(key).or_insert(0);
        if *n >= self.limit {
            return None;
        }
        *n += 1;
        Some(ClientSlot {
            clients: self.clone(),
            key,
        })
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut open = self.clients.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// Answer a connection over a limit without waiting for it: one non-blocking write, then close.
fn refuse(stream: TcpStream) {
    let _ = stream.try_write(REFUSED);
}

/// The router with the request and body time limits of `limits`.
fn with_timeouts(router: Router, limits: &ServeLimits) -> Router {
    router
        .layer(RequestBodyTimeoutLayer::new(limits.body_timeout))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            limits.request_timeout,
        ))
}

/// Serve `router` on `listener` within `limits` until the listener fails for good. Handlers see
/// the client's address as `ConnectInfo<SocketAddr>`.
pub async fn serve(listener: TcpListener, router: Router, limits: ServeLimits) {
    let router = with_timeouts(router, &limits);
    let all = Arc::new(Semaphore::new(limits.connections));
    let clients = Arc::new(Clients {
        limit: limits.connections_per_client,
        open: Mutex::new(HashMap::new()),
    });
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of descriptors, or a connection reset before it was taken: wait a
                // little (never spin) and go on.
                tracing::warn!("ladder server: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = all.clone().try_acquire_owned() else {
            refuse(stream);
            continue;
        };
        let Some(slot) = clients.enter(client_key(peer.ip())) else {
            refuse(stream);
            continue;
        };
        let router = router.clone();
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let _held = (permit, slot);
            let _ = stream.set_nodelay(true);
            serve_connection(stream, peer, router, header_timeout).await;
        });
    }
}

async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    router: Router,
    header_timeout: Duration,
) {
    let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(ConnectInfo(peer));
        router.clone().oneshot(request)
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .max_header_size(MAX_HEADER_BYTES)
        .serve_connection(TokioIo::new(stream), service);
    if let Err(e) = connection.await {
        tracing::debug!("ladder server: connection from {peer}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ipv6_client_is_its_64_and_a_mapped_ipv4_is_the_ipv4_address() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:ffff:1:2:3".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(client_key(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
        let v4: IpAddr = "192.0.2.8".parse().unwrap();
        assert_eq!(client_key(v4), v4);
    }

    #[test]
    fn a_client_gets_its_share_and_its_slots_back() {
        let clients = Arc::new(Clients {
            limit: 2,
            open: Mutex::new(HashMap::new()),
        });
        let key: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let one = clients.enter(key).unwrap();
        let two = clients.enter(key).unwrap();
        assert!(clients.enter(key).is_none());
        assert!(clients.enter(other).is_some());
        drop(one);
        let _three = clients.enter(key).unwrap();
        drop(two);
        drop(_three);
        assert!(clients.open.lock().unwrap().is_empty());
    }

    #[test]
    fn the_refusal_is_well_formed() {
        let text = std::str::from_utf8(REFUSED).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        let length: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("Content-Length: "))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(body.len(), length);
    }
}
