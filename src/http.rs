//! The read-only HTTP endpoint (docs/control.md, "HTTP"): `[pod] http` or
//! `PODINIT_HTTP`, off by default.
//!
//! `GET /livez` (200 while the event loop answers), `GET /readyz` (200 when
//! the pod is ready, else 503 with the entries that are not), `GET /status`
//! (the JSON of `podinit status --json`) and `GET /metrics` (Prometheus text
//! format 0.0.4). Nothing here changes the pod: control stays on the Unix
//! socket, where the peer's user is checked.
//!
//! HTTP/1.1 by hand, one request per connection, as the probe client does:
//! an endpoint for the kubelet's `httpGet` and a Prometheus scrape needs a
//! request line and a status line, not a server library. Each connection has
//! [`crate::status::DEADLINE`] to send its request head (at most 8 KiB) and
//! read the answer, so a client that connects and says nothing costs nothing.

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, oneshot};

use crate::status::{Request, DEADLINE};

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
pub async fn serve(listener: TcpListener, requests: mpsc::UnboundedSender<Request>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        let requests = requests.clone();
        tokio::task::spawn_local(async move {
            let answered = tokio::time::timeout(DEADLINE, answer(stream, &requests));
            if let Err(panic) = crate::runtime::task::CatchPanic::new(answered).await {
                tracing::error!("an HTTP request panicked (a bug in podinit): {panic}");
            }
        });
    }
}

async fn answer(mut stream: TcpStream, requests: &mpsc::UnboundedSender<Request>) -> std::io::Result<()> {
    const TEXT: &str = "text/plain; charset=utf-8";
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    let mut too_large = false;
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        if head.len() + n > MAX_HEAD {
            too_large = true;
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
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

/// Status code, content type and body for `path`.
async fn route(path: &str, requests: &mpsc::UnboundedSender<Request>) -> (u16, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    let report = || async {
        let (tx, rx) = oneshot::channel();
        requests.send(Request::Status(tx)).ok()?;
        rx.await.ok()
    };
    match path {
        "/livez" => match report().await {
            Some(_) => (200, TEXT, "ok\n".into()),
            None => (503, TEXT, "podinit is exiting\n".into()),
        },
        "/readyz" => match report().await {
            Some(r) if r.ready => (200, TEXT, "ready\n".into()),
            Some(r) => (503, TEXT, format!("not ready: {}\n", r.unready.join(", "))),
            None => (503, TEXT, "podinit is exiting\n".into()),
        },
        "/status" => match report().await {
            Some(r) => (200, "application/json", r.json),
            None => (503, TEXT, "podinit is exiting\n".into()),
        },
        "/metrics" => {
            let (tx, rx) = oneshot::channel();
            match requests.send(Request::Metrics(tx)).ok().map(|()| rx) {
                Some(rx) => match rx.await {
                    Ok(text) => (200, "text/plain; version=0.0.4; charset=utf-8", text),
                    Err(_) => (503, TEXT, "podinit is exiting\n".into()),
                },
                None => (503, TEXT, "podinit is exiting\n".into()),
            }
        }
        _ => (404, TEXT, "not found: the paths are /livez, /readyz, /status, /metrics\n".into()),
    }
}
