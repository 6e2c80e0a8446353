//! The read-only HTTP endpoint (docs/control.md, "HTTP"): `[pod] http` or
//! `PODINIT_HTTP`, off by default.
//!
//! `GET /livez` (200 while the event loop answers), `GET /readyz` (200 when
//! the pod is ready, else 503 with the entries that are not and, while the
//! start sequence waits, the `waiting for:` line of `podinit status`), `GET /status`
//! (the JSON of `podinit status --json`) and `GET /metrics` (Prometheus text
//! format 0.0.4). Nothing here changes the pod: control stays on the Unix
//! socket, where the peer's user is checked.
//!
//! HTTP/1.1 by hand, one request per connection, as the probe client does:
//! an endpoint for the kubelet's `httpGet` and a Prometheus scrape needs a
//! request line and a status line, not a server library. Each connection has
//! [`crate::status::DEADLINE`] to send its request head (at most 8 KiB) and
//! read the answer, so a client that connects and says nothing, or sends its
//! head a byte at a time, is cut there.
//!
//! Each connection holds one of the endpoint's slots
//! ([`crate::connections`]); one that gets none is answered `503 Service
//! Unavailable` at once, without its request being read or its descriptor
//! kept. `/livez` and `/readyz` render no report: a liveness probe needs
//! only proof that the event loop answers.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::connections::{Connection, Slot, Slots};
use crate::status::{call, NoAnswer, Request, Requests, DEADLINE};

/// Longest request head read.
const MAX_HEAD: usize = 8 * 1024;

/// The variable that sets the endpoint's address (it wins over `[pod] http`).
pub const HTTP_VAR: &str = "PODINIT_HTTP";

/// The address to listen on: `PODINIT_HTTP`, else the config's.
///
/// # Errors
/// `PODINIT_HTTP` is set but is not an address and port.
pub fn address(configured: Option<SocketAddr>) -> Result<Option<SocketAddr>, String> {
    match std::env::var(HTTP_VAR) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("{HTTP_VAR}={v:?} is not an address and port such as 0.0.0.0:9090")),
        _ => Ok(configured),
    }
}

/// Binds `addr` (an error is logged; podinit then runs without the endpoint).
pub fn bind(addr: SocketAddr) -> Option<TcpListener> {
    let bound = std::net::TcpListener::bind(addr)
        .and_then(|l| l.set_nonblocking(true).map(|()| l))
        .and_then(TcpListener::from_std);
    match bound {
        Ok(l) => Some(l),
        Err(e) => {
            tracing::error!("cannot listen on {addr} for HTTP: {e}; running without the HTTP endpoint");
            None
        }
    }
}

/// Serves until the task is dropped; every answer comes from the event loop
/// through `requests`.
pub async fn serve(listener: TcpListener, requests: Requests) {
    let slots = Slots::new(crate::connections::cap());
    let busy: std::rc::Rc<str> = {
        let body = format!("podinit serves at most {} HTTP connections at once; try again\n", slots.cap());
        format!(
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into()
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let conn = HttpConnection { stream, requests: requests.clone(), busy: std::rc::Rc::clone(&busy) };
        if crate::connections::take(&slots, Box::new(conn)) {
            // The closed connection's task gives its slot back before the
            // next accept, rather than after a whole burst of them.
            tokio::task::yield_now().await;
        }
    }
}

/// A connection to the HTTP endpoint.
struct HttpConnection {
    stream: TcpStream,
    requests: Requests,
    /// The 503 a connection that gets no slot is answered.
    busy: std::rc::Rc<str>,
}

impl Connection for HttpConnection {
    fn refuse(&self) {
        refuse(&self.stream, &self.busy);
    }

    fn answer(self: Box<Self>, slot: Slot) -> crate::runtime::task::Task {
        Box::pin(async move {
            let _ =
                tokio::time::timeout(DEADLINE, answer(self.stream, &self.requests, slot, &self.busy)).await;
        })
    }

    fn what(&self) -> &'static str {
        "an HTTP request"
    }
}

/// Answers a connection that gets no slot with `busy` (a 503) and closes
/// it, without waiting: a fresh connection's send buffer takes it. What the
/// client sent already is read first, as closing a TCP socket with unread
/// data resets the connection (RFC 9293, section 3.6.1).
fn refuse(stream: &TcpStream, busy: &str) {
    let mut sink = [0u8; MAX_HEAD];
    let _ = stream.try_read(&mut sink);
    let _ = stream.try_write(busy.as_bytes());
}

/// Reads the request head, then answers. Until the head is in, the
/// connection is idle: a new one may take its `slot`, and it is then
/// answered `busy`.
async fn answer(
    mut stream: TcpStream,
    requests: &Requests,
    mut slot: Slot,
    busy: &str,
) -> std::io::Result<()> {
    const TEXT: &str = "text/plain; charset=utf-8";
    let read = slot.while_idle(read_head(&mut stream)).await.transpose()?;
    let Some((head, too_large)) = read else {
        refuse(&stream, busy);
        return Ok(());
    };
    slot.at_work();
    let text = String::from_utf8_lossy(&head);
    let words: Vec<&str> = text.lines().next().unwrap_or_default().split_whitespace().collect();
    let (status, kind, body) = match words.as_slice() {
        _ if too_large => (431, TEXT, format!("the request head is over {} KiB\n", MAX_HEAD / 1024)),
        [method, target, version] if version.starts_with("HTTP/1.") => {
            if *method == "GET" || *method == "HEAD" {
                route(target.split('?').next().unwrap_or_default(), requests).await
            } else {
                (405, TEXT, "only GET and HEAD are served: the endpoint is read-only\n".to_owned())
            }
        }
        _ => (400, TEXT, "not an HTTP/1 request\n".to_owned()),
    };
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        431 => "Request Header Fields Too Large",
        _ => "Service Unavailable",
    };
    let allow = if status == 405 { "Allow: GET, HEAD\r\n" } else { "" };
    let mut out = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\n{allow}Connection: close\r\n\r\n",
        body.len()
    );
    if words.first() != Some(&"HEAD") {
        out.push_str(&body);
    }
    stream.write_all(out.as_bytes()).await?;
    stream.shutdown().await
}

/// The request head (up to its empty line, or the end of the stream), and
/// whether it was over [`MAX_HEAD`].
async fn read_head(stream: &mut TcpStream) -> std::io::Result<(Vec<u8>, bool)> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        if head.len() + n > MAX_HEAD {
            return Ok((head, true));
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok((head, false))
}

/// Status code, content type and body for `path`.
async fn route(path: &str, requests: &Requests) -> (u16, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    let unanswered = |no: NoAnswer| match no {
        NoAnswer::Busy => (503, TEXT, format!("{}\n", crate::status::QUEUE_FULL)),
        NoAnswer::Exiting => (503, TEXT, "podinit is exiting\n".to_owned()),
    };
    match path {
        "/livez" => match call(requests, Request::Alive).await {
            Ok(()) => (200, TEXT, "ok\n".into()),
            Err(no) => unanswered(no),
        },
        "/readyz" => match call(requests, Request::Ready).await {
            Ok(r) if r.ready => (200, TEXT, "ready\n".into()),
            Ok(r) => {
                let mut body = format!("not ready: {}\n", r.unready.join(", "));
                if let Some(waiting) = r.waiting {
                    body.push_str(&waiting);
                    body.push('\n');
                }
                (503, TEXT, body)
            }
            Err(no) => unanswered(no),
        },
        "/status" => match call(requests, Request::Status).await {
            Ok(r) => (200, "application/json", r.json),
            Err(no) => unanswered(no),
        },
        "/metrics" => match call(requests, Request::Metrics).await {
            Ok(text) => (200, "text/plain; version=0.0.4; charset=utf-8", text),
            Err(no) => unanswered(no),
        },
        _ => (404, TEXT, "not found: the paths are /livez, /readyz, /status, /metrics\n".into()),
    }
}
