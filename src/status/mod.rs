//! `podinit status`: the status socket of a running podinit, and its client.
//! This file is the server; `report.rs` renders what it answers (text and
//! JSON) and `client.rs` holds the `podinit status`, `events` and control
//! verb clients.
//!
//! The socket is a Unix stream socket, mode 0600 (only podinit's user, and root,
//! may ask). Its path: `PODINIT_STATUS_SOCKET`, else `[pod] status_socket`, else
//! the first of [`default_paths`] whose directory podinit can write, which
//! includes `/dev/shm` so that a non-root podinit on a read-only root file system
//! (`docker run --read-only --user 1000`) still has one. A stale socket file
//! left by an earlier run (a restarted container) is replaced; a live one (some
//! other podinit answers on it) is left alone and this podinit runs without one.
//!
//! The protocol is one line each way: the client sends `text`, `json` or
//! `timing` (`podinit status --timing`), podinit
//! answers with a first line `ready` or `not ready`, then the report, and closes.
//! Every connection is served by its own task under a deadline, so a client that
//! connects and says nothing, or never reads, cannot block podinit.
//!
//! Each connection holds one of the socket's slots ([`crate::connections`]);
//! one over the cap is told the one line `busy: ...` and closed, and the
//! clients print that line. Requests reach the event loop through a bounded
//! queue ([`QUEUE`]): when it is full the connection is answered `busy` at
//! once, and reports leave part of it ([`KEPT_FOR_CHEAP`]) to the requests
//! that render nothing, so that a flood of reports cannot fail `GET /livez`.

mod client;
mod report;

use std::cell::Cell;
use std::future::Future as _;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt};
use tokio::net::UnixListener;
use tokio::sync::{mpsc, oneshot};

use crate::config::Role;
use crate::connections::{Connection, Slot, Slots};
use crate::lifecycle::EntryStatus;

pub use client::{client, control_client, events_client, watch_client, Format};
pub use report::{render, state_name, About, PodFacts, Report, WaitReport};

/// podinit's start, the origin of the times of `podinit status --timing`:
/// the first call, which `main` makes before anything else.
pub fn started_at() -> std::time::Instant {
    static STARTED: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *STARTED.get_or_init(std::time::Instant::now)
}

/// How long one status connection may take, on either side.
pub const DEADLINE: Duration = Duration::from_secs(2);

/// Requests waiting for the event loop, at most, from both servers together;
/// a connection whose request does not fit is answered `busy` at once.
pub const QUEUE: usize = 16;

/// Slots of [`QUEUE`] that reports (`Status`, `Metrics`: a render of every
/// entry) leave free for the requests that render nothing (`Alive`, `Ready`,
/// control verbs).
pub const KEPT_FOR_CHEAP: usize = 8;

/// The request queue of the event loop, as [`QUEUE`] bounds it.
pub fn request_queue() -> (Requests, RequestQueue) {
    let (tx, rx) = mpsc::unbounded_channel();
    let queued = Rc::new(Cell::new(0));
    (Requests { tx, queued: Rc::clone(&queued) }, RequestQueue { rx, queued })
}

/// Where connections put their requests for the event loop: an unbounded
/// channel and the count of requests in it, which [`call`] keeps under
/// [`QUEUE`]. Everything runs on the event loop's thread, so a [`Cell`]
/// counts.
#[derive(Debug, Clone)]
pub struct Requests {
    tx: mpsc::UnboundedSender<Request>,
    queued: Rc<Cell<usize>>,
}

/// The event loop's end of the request queue.
#[derive(Debug)]
pub struct RequestQueue {
    rx: mpsc::UnboundedReceiver<Request>,
    queued: Rc<Cell<usize>>,
}

impl RequestQueue {
    /// The next request, which leaves its place in the queue to another;
    /// `None` once every [`Requests`] is gone. Cancel-safe, as
    /// [`mpsc::UnboundedReceiver::recv`].
    pub async fn recv(&mut self) -> Option<Request> {
        let request = self.rx.recv().await;
        if request.is_some() {
            self.queued.set(self.queued.get().saturating_sub(1));
        }
        request
    }
}

/// A request from a connection to the event loop.
#[derive(Debug)]
pub enum Request {
    /// Answer with the report.
    Status(oneshot::Sender<Report>),
    /// Carry out a control verb; answer with the entry's new state, or why not.
    Control(Verb, oneshot::Sender<Result<String, String>>),
    /// Answer with the metrics text (`GET /metrics`).
    Metrics(oneshot::Sender<String>),
    /// Answer at once (`GET /livez`): proof that the event loop runs, with
    /// nothing rendered.
    Alive(oneshot::Sender<()>),
    /// Answer with readiness alone (`GET /readyz`), without the report.
    Ready(oneshot::Sender<Readiness>),
}

impl Request {
    /// A request that renders every entry.
    fn is_report(&self) -> bool {
        matches!(self, Request::Status(_) | Request::Metrics(_))
    }
}

/// Why a request got no answer from the event loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoAnswer {
    /// The queue (or its share for reports) is full: ask again.
    Busy,
    /// The event loop has ended: podinit is exiting.
    Exiting,
}

/// What a connection whose request did not fit in the queue is told.
pub const QUEUE_FULL: &str = "busy: podinit's request queue is full; try again";

/// Queues the request that `make` builds around its reply channel, without
/// waiting for room, and waits for the event loop's answer.
///
/// # Errors
/// [`NoAnswer::Busy`] when the queue has no room for it, [`NoAnswer::Exiting`]
/// when the event loop has ended.
pub async fn call<T>(
    requests: &Requests,
    make: impl FnOnce(oneshot::Sender<T>) -> Request,
) -> Result<T, NoAnswer> {
    let (tx, rx) = oneshot::channel();
    queue(requests, make(tx))?;
    rx.await.map_err(|_| NoAnswer::Exiting)
}

/// Puts `request` in the queue if it has room for it: [`QUEUE`] places, of
/// which a report leaves [`KEPT_FOR_CHEAP`] free.
fn queue(requests: &Requests, request: Request) -> Result<(), NoAnswer> {
    if requests.tx.is_closed() {
        return Err(NoAnswer::Exiting);
    }
    let room = QUEUE.saturating_sub(requests.queued.get());
    let kept = if request.is_report() { KEPT_FOR_CHEAP } else { 0 };
    if room <= kept {
        return Err(NoAnswer::Busy);
    }
    requests.tx.send(request).map_err(|_| NoAnswer::Exiting)?;
    requests.queued.set(requests.queued.get() + 1);
    Ok(())
}

/// A control verb as the client sends it (docs/control.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verb {
    Restart(String),
    Stop(String),
    Start(String),
    Signal(String, crate::config::Signal),
    Shutdown,
    Reload,
    /// Scheduled entries: one run now; no run until resumed; resumed.
    Trigger(String),
    Suspend(String),
    Resume(String),
}

impl Verb {
    /// The request line for it.
    pub fn line(&self) -> String {
        match self {
            Verb::Restart(n) => format!("restart {n}"),
            Verb::Stop(n) => format!("stop {n}"),
            Verb::Start(n) => format!("start {n}"),
            Verb::Signal(n, s) => format!("signal {n} {}", s.number()),
            Verb::Shutdown => "shutdown".into(),
            Verb::Reload => "reload".into(),
            Verb::Trigger(n) => format!("trigger {n}"),
            Verb::Suspend(n) => format!("suspend {n}"),
            Verb::Resume(n) => format!("resume {n}"),
        }
    }

    /// Reads a request line; `None` when it is no verb.
    fn parse(line: &str) -> Option<Verb> {
        let words: Vec<&str> = line.split_whitespace().collect();
        Some(match words.as_slice() {
            ["restart", n] => Verb::Restart((*n).to_owned()),
            ["stop", n] => Verb::Stop((*n).to_owned()),
            ["start", n] => Verb::Start((*n).to_owned()),
            ["signal", n, s] => Verb::Signal((*n).to_owned(), crate::config::Signal::parse(s)?),
            ["shutdown"] => Verb::Shutdown,
            ["reload"] => Verb::Reload,
            ["trigger", n] => Verb::Trigger((*n).to_owned()),
            ["suspend", n] => Verb::Suspend((*n).to_owned()),
            ["resume", n] => Verb::Resume((*n).to_owned()),
            _ => return None,
        })
    }
}

/// Whether the pod is ready, and what is not (`GET /readyz`).
#[derive(Debug, Clone)]
pub struct Readiness {
    pub ready: bool,
    /// The sidecars and mains that are not ready.
    pub unready: Vec<String>,
    /// Where the start sequence waits and why ([`WaitReport::text`]), when
    /// it does.
    pub waiting: Option<String>,
}

/// The sidecars and mains among `entries` that are not ready.
pub fn unready(entries: &[EntryStatus]) -> Vec<String> {
    entries
        .iter()
        .filter(|e| matches!(e.role, Role::Sidecar | Role::Main) && !e.ready)
        .map(|e| e.name.clone())
        .collect()
}

/// Default socket paths, in the order podinit and the client try them.
pub fn default_paths() -> Vec<PathBuf> {
    let uid = crate::sys::process::euid();
    let mut paths = vec![PathBuf::from("/run/podinit.sock")];
    if let Some(dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        paths.push(Path::new(&dir).join("podinit.sock"));
    }
    paths.push(PathBuf::from(format!("/tmp/podinit-{uid}.sock")));
    paths.push(PathBuf::from(format!("/dev/shm/podinit-{uid}.sock")));
    paths
}

/// The configured path: `PODINIT_STATUS_SOCKET`, else the config's.
pub fn configured_path(config: Option<&Path>) -> Option<PathBuf> {
    std::env::var_os("PODINIT_STATUS_SOCKET")
        .filter(|s| !s.is_empty())
        .map(PathBuf::from)
        .or_else(|| config.map(Path::to_owned))
}

/// Binds the status socket: the configured path, else the first default path
/// that works. `None` (with a warning logged) when none does; podinit then runs
/// without a status socket.
pub fn bind(configured: Option<&Path>) -> Option<(UnixListener, PathBuf)> {
    let candidates = match configured {
        Some(p) => vec![p.to_owned()],
        None => default_paths(),
    };
    let mut why = Vec::new();
    for path in candidates {
        match bind_one(&path) {
            Ok(l) => return Some((l, path)),
            Err(e) => why.push(format!("{}: {e}", path.display())),
        }
    }
    tracing::warn!("no status socket, `podinit status` will not answer ({})", why.join("; "));
    None
}

fn bind_one(path: &Path) -> std::io::Result<UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if !meta.file_type().is_socket() {
            return Err(std::io::Error::other("exists and is not a socket"));
        }
        if StdUnixStream::connect(path).is_ok() {
            return Err(std::io::Error::other("another podinit answers there"));
        }
        // Stale, from an earlier run.
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    Ok(listener)
}

/// Serves the status socket until podinit exits. A panic in the server (a
/// bug) is logged and the server started again on the same socket; a panic
/// while answering one connection is logged and ends only that connection.
pub async fn serve_forever(listener: UnixListener, requests: Requests) {
    let listener = std::rc::Rc::new(listener);
    let slots = Slots::new(crate::connections::cap());
    loop {
        let server = serve(std::rc::Rc::clone(&listener), requests.clone(), std::rc::Rc::clone(&slots));
        match crate::runtime::task::CatchPanic::new(server).await {
            Ok(()) => return,
            Err(panic) => {
                tracing::error!("the status server panicked (a bug in podinit): {panic}; starting it again");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

/// Accepts connections until the task is dropped; each one that gets one of
/// the `slots` asks the event loop through `requests`.
async fn serve(listener: std::rc::Rc<UnixListener>, requests: Requests, slots: std::rc::Rc<Slots>) {
    let busy: std::rc::Rc<str> =
        format!("busy: podinit serves at most {} status connections at once; try again\n", slots.cap())
            .into();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        // The 0600 mode already keeps others out; the peer's uid is checked
        // too, in case the socket's directory or mode was changed under us.
        let me = crate::sys::process::euid();
        match stream.peer_cred() {
            Ok(cred) if cred.uid() == me || cred.uid() == 0 => {}
            _ => {
                tracing::debug!("status connection from another user refused");
                continue;
            }
        }
        let conn = StatusConnection { stream, requests: requests.clone(), busy: std::rc::Rc::clone(&busy) };
        if crate::connections::take(&slots, Box::new(conn)) {
            // The closed connection's task gives its slot back before the
            // next accept, rather than after a whole burst of them.
            tokio::task::yield_now().await;
        }
    }
}

/// A connection to the status socket.
struct StatusConnection {
    stream: tokio::net::UnixStream,
    requests: Requests,
    /// The line a connection that gets no slot is told.
    busy: std::rc::Rc<str>,
}

impl Connection for StatusConnection {
    fn refuse(&self) {
        refuse(&self.stream, &self.busy);
    }

    fn answer(self: Box<Self>, slot: Slot) -> crate::runtime::task::Task {
        Box::pin(answer(self.stream, self.requests, slot, self.busy))
    }

    fn what(&self) -> &'static str {
        "a status request"
    }
}

/// Tells a connection that gets no slot `line` and closes it, without
/// waiting: a fresh connection's send buffer takes one short line. What the
/// client sent already is read first: Linux ends a Unix stream whose closing
/// side left data unread with ECONNRESET rather than an end of file.
fn refuse(stream: &tokio::net::UnixStream, line: &str) {
    let mut sink = [0u8; MAX_REQUEST];
    let _ = stream.try_read(&mut sink);
    let _ = stream.try_write(line.as_bytes());
}

/// Longest request line read (a verb, an entry name of at most 63 bytes, a signal).
const MAX_REQUEST: usize = 256;

/// Reads one request line and answers it: every request but `events` within
/// [`DEADLINE`]; `events` streams until podinit exits or the reader goes.
/// [`DEADLINE`] bounds the whole request line, so a client that sends it a
/// byte at a time is cut there too. Until the line is in, the connection is
/// idle: a new one may take its `slot`, and it is then told `busy`.
async fn answer(
    mut stream: tokio::net::UnixStream,
    requests: Requests,
    mut slot: Slot,
    busy: std::rc::Rc<str>,
) {
    let (mut read, mut write) = stream.split();
    let line = match slot.while_idle(tokio::time::timeout(DEADLINE, read_request(&mut read))).await {
        Some(Ok(Some(line))) => line,
        Some(_) => return,
        None => {
            refuse(&stream, &busy);
            return;
        }
    };
    slot.at_work();
    if line.trim() == "events" {
        // The reader says nothing more: its end of file is the only sign
        // that it is gone while no event comes, and it frees the connection.
        let gone = async {
            let mut sink = [0u8; 64];
            while matches!(read.read(&mut sink).await, Ok(n) if n > 0) {}
        };
        let mut gone = std::pin::pin!(gone);
        let mut events = std::pin::pin!(stream_events(&mut write));
        std::future::poll_fn(|cx| {
            if events.as_mut().poll(cx).is_ready() {
                return std::task::Poll::Ready(());
            }
            gone.as_mut().poll(cx)
        })
        .await;
        return;
    }
    let _ = tokio::time::timeout(DEADLINE, reply(line.trim(), &mut write, &requests)).await;
}

/// The request line: up to its newline, the end of the stream or
/// [`MAX_REQUEST`] bytes, whichever comes first (what follows it is not
/// read). `None` when the read fails or the line is not UTF-8.
async fn read_request(read: &mut tokio::net::unix::ReadHalf<'_>) -> Option<String> {
    let mut line = [0u8; MAX_REQUEST];
    let mut len = 0;
    while len < MAX_REQUEST {
        let n = read.read(&mut line[len..]).await.ok()?;
        if n == 0 {
            break;
        }
        if let Some(end) = memchr::memchr(b'\n', &line[len..len + n]) {
            len += end + 1;
            break;
        }
        len += n;
    }
    String::from_utf8(line[..len].to_vec()).ok()
}

/// The answer to one status or control request line.
async fn reply(
    line: &str,
    write: &mut tokio::net::unix::WriteHalf<'_>,
    requests: &Requests,
) -> std::io::Result<()> {
    let answer = match line {
        "text" | "json" | "timing" | "" => match call(requests, Request::Status).await {
            Ok(report) => {
                let head = if report.ready { "ready\n" } else { "not ready\n" };
                let body = match line {
                    "json" => &report.json,
                    "timing" => &report.timing,
                    _ => &report.text,
                };
                format!("{head}{body}")
            }
            Err(no) => unanswered(no)?,
        },
        _ => match Verb::parse(line) {
            Some(verb) => match call(requests, |tx| Request::Control(verb, tx)).await {
                Ok(Ok(state)) => format!("ok\n{state}\n"),
                Ok(Err(why)) => format!("refused\n{why}\n"),
                Err(no) => unanswered(no)?,
            },
            None => format!("refused\nnot a request podinit knows: {line:?}\n"),
        },
    };
    write.write_all(answer.as_bytes()).await?;
    write.shutdown().await
}

/// The line for a request the event loop did not answer; an error (the
/// connection closes without a word) when podinit is exiting.
fn unanswered(no: NoAnswer) -> std::io::Result<String> {
    match no {
        NoAnswer::Busy => Ok(format!("{QUEUE_FULL}\n")),
        NoAnswer::Exiting => Err(std::io::Error::other("podinit is exiting")),
    }
}

/// `podinit events`: each lifecycle event as a JSON line, until podinit
/// exits, the reader closes, or the reader is too slow and is dropped.
async fn stream_events(write: &mut tokio::net::unix::WriteHalf<'_>) -> std::io::Result<()> {
    // Counted, so that podinit waits (a little) for it to write what is
    // queued before it exits.
    let _open = crate::output::log::StreamGuard::new();
    let mut events = crate::output::log::tap_events();
    write.write_all(b"events\n").await?;
    while let Some(line) = events.recv().await {
        write.write_all(line.as_bytes()).await?;
    }
    if !crate::output::log::events_closed() {
        // Not podinit's exit: this reader was dropped for being slow.
        let dropped =
            b"{\"event\":\"events_dropped\",\"line\":\"this reader was too slow and is dropped\"}\n";
        write.write_all(dropped).await?;
    }
    write.shutdown().await
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_leave_room_in_the_queue_for_the_cheap_requests() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let (requests, mut queue) = request_queue();
            let report = || Request::Status(oneshot::channel().0);
            let alive = || Request::Alive(oneshot::channel().0);
            for _ in 0..QUEUE - KEPT_FOR_CHEAP {
                assert_eq!(super::queue(&requests, report()), Ok(()));
            }
            assert_eq!(super::queue(&requests, report()), Err(NoAnswer::Busy));
            for _ in 0..KEPT_FOR_CHEAP {
                assert_eq!(super::queue(&requests, alive()), Ok(()));
            }
            assert_eq!(super::queue(&requests, alive()), Err(NoAnswer::Busy));
            // The event loop takes one: a place comes free, for a cheap
            // request only while reports fill their share.
            assert!(queue.recv().await.is_some_and(|r| r.is_report()));
            assert_eq!(super::queue(&requests, report()), Err(NoAnswer::Busy));
            assert_eq!(super::queue(&requests, alive()), Ok(()));
            for _ in 0..QUEUE {
                assert!(queue.recv().await.is_some());
            }
            assert_eq!(super::queue(&requests, report()), Ok(()));
            drop(queue);
            assert_eq!(super::queue(&requests, alive()), Err(NoAnswer::Exiting));
        });
    }
}
