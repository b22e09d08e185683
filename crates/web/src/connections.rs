//! The connections the server holds open, and how long one may take to send its request.
//!
//! Each connection costs a file descriptor, and a process has a limited number of them
//! (1,024 by default under a login shell or systemd). A client that connects and then sends
//! nothing, or a request line and half its headers (a "slowloris"), would otherwise hold its
//! descriptor for ever: a thousand of them and the server could accept nobody. So:
//!
//! - a connection must deliver a whole request (head and body) within [`REQUEST_READ_TIMEOUT`]
//!   of being accepted, or of the end of its last response, or it is closed. This is hyper's
//!   `header_read_timeout` made to cover what it does not: the bytes before HTTP/1 is
//!   recognised, the TLS handshake, a request body, and a kept-alive connection's wait for
//!   its next request;
//! - one source network ([`Source::network`]: an IPv4 address, an IPv6 /64, this machine)
//!   holds at most [`PER_SOURCE`] connections, and the server at most [`TOTAL`]. A new
//!   connection over either cap closes the oldest one still waiting for its request, from
//!   that source (or, over the total, from any); a connection whose request is being
//!   answered (an open page's event stream among them) is never closed for another. So idle
//!   connections, however many, cannot keep out a real request: it closes one of them, and
//!   is answered before a newer one could close it.

use std::collections::BTreeMap;
use std::future::Future as _;
use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::header::CONTENT_LENGTH;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::task::AtomicWaker;
use futures_util::StreamExt;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use crate::guard::Source;

/// How long a connection may take to send a whole request.
pub const REQUEST_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// The most connections one source network holds at once: far more than the pages and
/// pushes of one person's devices (a browser opens at most six to a server), and few
/// enough that the server's descriptors last.
pub const PER_SOURCE: usize = 64;

/// The most connections the server holds at once, well under the usual limit of 1,024
/// descriptors (the database, the spool and the runtime need some too).
pub const TOTAL: usize = 512;

/// The open connections, oldest first.
pub struct Connections {
    per_source: usize,
    total: usize,
    timeout: Duration,
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    next: u64,
    /// By the order they were accepted: the smallest key is the oldest.
    open: BTreeMap<u64, Open>,
}

struct Open {
    peer: SocketAddr,
    source: Source,
    slot: Arc<Slot>,
}

/// What a connection's reader and the request handling share.
struct Slot {
    /// Closed to make room for a newer connection.
    evicted: AtomicBool,
    /// The connection's task, woken to notice an eviction or a new deadline.
    waker: AtomicWaker,
    /// Requests read whole and not yet answered to the end of their body.
    busy: AtomicUsize,
    /// When a connection with nothing busy must have sent its next request by.
    deadline: Mutex<Instant>,
}

impl Slot {
    fn deadline(&self) -> MutexGuard<'_, Instant> {
        self.deadline.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Connections {
    pub fn new(per_source: usize, total: usize, timeout: Duration) -> Arc<Connections> {
        Arc::new(Connections {
            per_source,
            total,
            timeout,
            table: Mutex::new(Table::default()),
        })
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes in a connection from `peer`, closing the oldest waiting one of its source (or
    /// of all) when a cap is reached; `None` when every connection at the cap is busy
    /// answering, and this one is refused.
    fn admit(self: &Arc<Self>, peer: SocketAddr) -> Option<Registered> {
        let source = Source::network(peer.ip());
        let mut table = self.table();
        let from_source = table.open.values().filter(|o| o.source == source).count();
        if from_source >= self.per_source && !table.evict_oldest_waiting(|o| o.source == source) {
            return None;
        }
        if table.open.len() >= self.total && !table.evict_oldest_waiting(|_| true) {
            return None;
        }
        let slot = Arc::new(Slot {
            evicted: AtomicBool::new(false),
            waker: AtomicWaker::new(),
            busy: AtomicUsize::new(0),
            deadline: Mutex::new(Instant::now() + self.timeout),
        });
        let id = table.next;
        table.next += 1;
        table.open.insert(
            id,
            Open {
                peer,
                source,
                slot: Arc::clone(&slot),
            },
        );
        Some(Registered {
            connections: Arc::clone(self),
            id,
            slot,
        })
    }

    /// Marks the connection from `peer` busy (its request was read whole) until the
    /// returned guard is dropped with the end of the response.
    fn busy(self: &Arc<Self>, peer: SocketAddr) -> Option<Busy> {
        let table = self.table();
        let open = table.open.values().find(|o| o.peer == peer)?;
        open.slot.busy.fetch_add(1, Ordering::SeqCst);
        Some(Busy {
            slot: Arc::clone(&open.slot),
            timeout: self.timeout,
        })
    }
}

impl Table {
    /// Closes the oldest connection that `which` picks and that waits for its request.
    fn evict_oldest_waiting(&mut self, which: impl Fn(&Open) -> bool) -> bool {
        let oldest = self
            .open
            .iter()
            .find(|(_, o)| which(o) && o.slot.busy.load(Ordering::SeqCst) == 0)
            .map(|(id, _)| *id);
        let Some(open) = oldest.and_then(|id| self.open.remove(&id)) else {
            return false;
        };
        tracing::debug!(
            "closed a waiting connection from {} to make room",
            open.peer
        );
        open.slot.evicted.store(true, Ordering::SeqCst);
        open.slot.waker.wake();
        true
    }
}

/// A connection's place in the table, given up when the connection ends.
struct Registered {
    connections: Arc<Connections>,
    id: u64,
    slot: Arc<Slot>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.connections.table().open.remove(&self.id);
    }
}

/// A request being answered; when its response ends, the connection waits for its next
/// request, with a new deadline.
struct Busy {
    slot: Arc<Slot>,
    timeout: Duration,
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self.slot.deadline() = Instant::now() + self.timeout;
        self.slot.busy.fetch_sub(1, Ordering::SeqCst);
        self.slot.waker.wake();
    }
}

/// The acceptor (axum-server's hook between accepting a TCP connection and serving it, and
/// under TLS): admits the connection or closes it at once.
#[derive(Clone)]
pub struct Admit {
    pub connections: Arc<Connections>,
}

impl<S> axum_server::accept::Accept<TcpStream, S> for Admit {
    type Stream = Guarded<TcpStream>;
    type Service = S;
    type Future = std::future::Ready<io::Result<(Self::Stream, S)>>;

    fn accept(&self, stream: TcpStream, service: S) -> Self::Future {
        let admitted = stream
            .peer_addr()
            .ok()
            .and_then(|peer| self.connections.admit(peer));
        std::future::ready(match admitted {
            Some(registered) => Ok((Guarded::new(stream, registered), service)),
            None => {
                tracing::debug!("refused a connection: every one of its source is busy");
                Err(io::Error::other("too many connections"))
            }
        })
    }
}

/// A connection's stream, which fails once the connection is evicted or has not sent its
/// request in time, so that hyper closes it.
pub struct Guarded<T> {
    io: T,
    registered: Registered,
    sleep: Pin<Box<Sleep>>,
}

impl<T> Guarded<T> {
    fn new(io: T, registered: Registered) -> Guarded<T> {
        let deadline = *registered.slot.deadline();
        Guarded {
            io,
            registered,
            sleep: Box::pin(tokio::time::sleep_until(deadline)),
        }
    }

    /// Why the connection must end now, if it must.
    fn closed(&mut self, cx: &mut Context<'_>) -> Option<io::Error> {
        let slot = &self.registered.slot;
        slot.waker.register(cx.waker());
        if slot.evicted.load(Ordering::SeqCst) {
            return Some(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room for a newer connection",
            ));
        }
        if slot.busy.load(Ordering::SeqCst) > 0 {
            return None;
        }
        let deadline = *slot.deadline();
        if self.sleep.deadline() != deadline {
            self.sleep.as_mut().reset(deadline);
        }
        match self.sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Some(io::Error::new(
                io::ErrorKind::TimedOut,
                "no whole request in time",
            )),
            Poll::Pending => None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Guarded<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if let Some(error) = self.closed(cx) {
            return Poll::Ready(Err(error));
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Guarded<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if self.registered.slot.evicted.load(Ordering::SeqCst) {
            return Poll::Ready(Err(io::ErrorKind::ConnectionAborted.into()));
        }
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// In front of the routes: reads the request whole (its body at most `body_limit`, so
/// the deadline covers a body sent slowly too), then marks its connection busy until the
/// response's body has been sent.
pub async fn hold(
    State((connections, body_limit)): State<(Arc<Connections>, usize)>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let (parts, body) = request.into_parts();
    let Ok(body) = axum::body::to_bytes(body, body_limit).await else {
        // Over the limit (or the connection failed, and nobody reads this).
        return StatusCode::PAYLOAD_TOO_LARGE.into_response();
    };
    let busy = connections.busy(peer);
    let response = next.run(Request::from_parts(parts, Body::from(body))).await;
    let (mut parts, body) = response.into_parts();
    // The body is streamed through a wrapper that holds the guard, which loses its known
    // length: say it, so a response is no more chunked than before.
    if let Some(length) = body.size_hint().exact() {
        parts
            .headers
            .entry(CONTENT_LENGTH)
            .or_insert_with(|| HeaderValue::from(length));
    }
    let stream = body.into_data_stream().map(move |chunk| {
        let _held = &busy;
        chunk
    });
    Response::from_parts(parts, Body::from_stream(stream))
}
