//! Copies each entry's stdout and stderr to podinit's own (SPEC §4).
//!
//! podinit's descriptors 1 and 2 each have a lane: a thread running a small
//! current-thread runtime of its own, with one pump task per child pipe. A pump
//! reads what the child wrote, frames it (`NAME | ` before each line, or one
//! JSON object per line) and writes it to the lane's descriptor, all in that one
//! thread, so a chunk of output costs no hand-off between threads. Writes block:
//! when podinit's stdout is slow, its lane waits, its pumps stop reading and the
//! children block on their full pipes (back-pressure) instead of podinit
//! buffering without limit, while the supervisor's event loop, which never
//! touches output, keeps supervising, and the other lane goes on. A write error
//! (EPIPE when stdout is closed) drops the data; it never stops podinit.
//!
//! podinit's own messages go through [`write_log_line`]: a bounded queue to a
//! thread of their own (started with the first message), so that the event
//! loop never blocks on a stderr nobody reads and never buffers without limit.
//! When the queue is full a line is dropped and counted, and the next line
//! written says how many were lost. That thread and the stderr lane take one
//! lock around each write to descriptor 2, so a log line never lands inside a
//! child's line when a large write to a full pipe goes out in pieces.
//!
//! Memory is bounded: a read is at most [`READ_SIZE`] bytes, and a line longer
//! than [`MAX_LINE`] is written in pieces, each framed. Nothing is lost: a pump
//! runs to end of file, a last line without newline gets one, and podinit waits
//! for the lanes (up to a deadline) before it exits.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

/// Bytes read from a child pipe at once.
pub const READ_SIZE: usize = 64 * 1024;
/// Longest line written whole (bytes, without prefix); longer ones are split.
pub const MAX_LINE: usize = 64 * 1024;

/// Which of podinit's descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What a lane is asked to do.
#[derive(Debug)]
enum Command {
    /// Copy this child pipe to the lane's descriptor until end of file.
    Pump(OwnedFd, Framing),
    /// Let every pump reach end of file (until the deadline), then stop.
    Close(Instant),
}

/// The two lanes, each started when its first pump is (a pod whose entries
/// all write `raw` starts no thread at all).
#[derive(Debug, Default)]
pub struct Output {
    stdout: Option<Lane>,
    stderr: Option<Lane>,
}

#[derive(Debug)]
struct Lane {
    tx: mpsc::UnboundedSender<Command>,
    done: std_mpsc::Receiver<()>,
}

/// How many of podinit's own lines may wait for a slow stderr.
pub const LOG_QUEUE: usize = 1024;
/// Longest of podinit's own lines (bytes, newline included); a longer one is
/// cut. At most PIPE_BUF, so that one line is one atomic write to a pipe.
pub const MAX_LOG_LINE: usize = 4096;

/// Held around every write to descriptor 2 (the stderr lane's and the log
/// thread's), so that their bytes never mix within a line.
static STDERR: Mutex<()> = Mutex::new(());

enum LogItem {
    Line(Vec<u8>),
    /// Answer once everything before it is written.
    Flush(std_mpsc::Sender<()>),
}

/// The queue to the log thread; `None` until the first line.
static LOG_SINK: Mutex<Option<std_mpsc::SyncSender<LogItem>>> = Mutex::new(None);
/// Lines dropped because the queue was full, not yet reported.
static LOG_DROPPED: AtomicU64 = AtomicU64::new(0);

/// Queues one of podinit's own lines (ending in a newline) for stderr.
/// Never blocks: when [`LOG_QUEUE`] lines already wait, the line is dropped
/// and counted, and a later line says how many were lost.
pub fn write_log_line(line: &[u8]) {
    let mut line = line.to_vec();
    if line.len() > MAX_LOG_LINE {
        let mut cut = MAX_LOG_LINE - 4;
        // Cut at a character boundary (the text is UTF-8 in practice).
        while cut > 0 && (line[cut] & 0xc0) == 0x80 {
            cut -= 1;
        }
        line.truncate(cut);
        line.extend_from_slice(
            "…
"
            .as_bytes(),
        );
    }
    let Ok(mut sink) = LOG_SINK.lock() else { return };
    if sink.is_none() {
        *sink = start_log_thread();
    }
    let sent = sink.as_ref().map(|tx| tx.try_send(LogItem::Line(line)));
    if let Some(Err(std_mpsc::TrySendError::Full(_))) = sent {
        LOG_DROPPED.fetch_add(1, Ordering::Relaxed);
    }
}

/// Waits until every queued line is written, or `deadline` passes (a stderr
/// that nobody reads must not keep podinit from exiting).
pub fn flush_log(deadline: Instant) {
    let (tx, rx) = std_mpsc::channel();
    let queued =
        LOG_SINK.lock().ok().and_then(|s| s.as_ref().map(|s| s.try_send(LogItem::Flush(tx.clone()))));
    if let Some(Ok(())) = queued {
        let _ = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()));
    }
}

fn start_log_thread() -> Option<std_mpsc::SyncSender<LogItem>> {
    let (tx, rx) = std_mpsc::sync_channel::<LogItem>(LOG_QUEUE);
    let spawned = std::thread::Builder::new().name("podinit-log".into()).spawn(move || {
        for item in rx {
            match item {
                LogItem::Line(line) => {
                    let dropped = LOG_DROPPED.swap(0, Ordering::Relaxed);
                    let _held = STDERR.lock();
                    if dropped > 0 {
                        let note = format!(
                            "podinit | warning: {dropped} of podinit's own log lines were dropped (stderr was not being read)\n"
                        );
                        write_all(2, note.as_bytes());
                    }
                    write_all(2, &line);
                }
                LogItem::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    });
    spawned.ok().map(|_| tx)
}

/// Writes a lane's chunk to its descriptor, holding the stderr lock for fd 2.
fn write_lane(fd: i32, buf: &[u8]) {
    let _held = (fd == 2).then(|| STDERR.lock());
    write_all(fd, buf);
}

/// Writes all of `buf` to `fd`, waiting while it would block (a descriptor
/// someone else made non-blocking). Any other error drops the rest: a closed
/// stdout must not stop podinit.
fn write_all(fd: i32, mut buf: &[u8]) {
    while !buf.is_empty() {
        // SAFETY: writes from a valid slice to a descriptor podinit keeps open.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n > 0 {
            buf = &buf[n.unsigned_abs()..];
            continue;
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => {
                let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut pfd, 1, 100) };
            }
            _ => return,
        }
    }
}

impl Lane {
    fn start(fd: i32) -> Lane {
        let (tx, rx) = mpsc::unbounded_channel::<Command>();
        let (done_tx, done) = std_mpsc::channel();
        let spawned = std::thread::Builder::new().name(format!("podinit-out-{fd}")).spawn(move || {
            match tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build() {
                Ok(rt) => tokio::task::LocalSet::new().block_on(&rt, lane(fd, rx)),
                Err(e) => write_log_line(
                    format!("podinit | error: cannot start output lane {fd}: {e}\n").as_bytes(),
                ),
            }
            let _ = done_tx.send(());
        });
        if let Err(e) = spawned {
            write_log_line(format!("podinit | error: cannot start output thread: {e}\n").as_bytes());
        }
        Lane { tx, done }
    }
}

/// The body of a lane: takes commands until `Close`, then waits for its pumps.
async fn lane(fd: i32, mut rx: mpsc::UnboundedReceiver<Command>) {
    let mut pumps: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    let deadline = loop {
        match rx.recv().await {
            Some(Command::Pump(pipe_fd, framing)) => match pipe::Receiver::from_owned_fd(pipe_fd) {
                Ok(r) => {
                    pumps.retain(|p| !p.is_finished());
                    pumps.push(tokio::task::spawn_local(pump(r, framing, fd)));
                }
                Err(e) => {
                    write_log_line(format!("podinit | error: cannot read child output: {e}\n").as_bytes())
                }
            },
            Some(Command::Close(deadline)) => break deadline,
            None => break Instant::now(),
        }
    };
    for p in pumps {
        let left = deadline.saturating_duration_since(Instant::now());
        if tokio::time::timeout(left, p).await.is_err() {
            break;
        }
    }
}

impl Output {
    /// No lane yet; see [`Output::pump`].
    pub fn start() -> Output {
        Output::default()
    }

    /// Copies `fd` (a child's pipe) to `stream` until end of file, each line
    /// framed by `framing`. Starts the stream's lane on first use.
    pub fn pump(&mut self, fd: OwnedFd, stream: Stream, framing: Framing) {
        let (slot, raw_fd) = match stream {
            Stream::Stdout => (&mut self.stdout, 1),
            Stream::Stderr => (&mut self.stderr, 2),
        };
        let lane = slot.get_or_insert_with(|| Lane::start(raw_fd));
        if lane.tx.send(Command::Pump(fd, framing)).is_err() {
            tracing::error!("output lane {} is gone; output lost", lane_name(stream));
        }
    }

    /// Lets every pump reach end of file and the lanes write what they have,
    /// waiting at most until `deadline` (a pipe a stray process still holds, or
    /// a descriptor nobody reads, must not keep podinit from exiting).
    pub fn close(self, deadline: Instant) {
        let lanes: Vec<Lane> = [self.stdout, self.stderr].into_iter().flatten().collect();
        for lane in &lanes {
            let _ = lane.tx.send(Command::Close(deadline));
        }
        for lane in &lanes {
            let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(100));
            let _ = lane.done.recv_timeout(left);
        }
    }
}

fn lane_name(stream: Stream) -> &'static str {
    match stream {
        Stream::Stdout => "stdout",
        Stream::Stderr => "stderr",
    }
}

/// How a pump frames each line.
#[derive(Debug, Clone)]
pub enum Framing {
    /// `NAME | line`.
    Prefixed(Vec<u8>),
    /// One JSON object per line: `time` (RFC 3339), `process`, `stream`, `line`.
    Json { process: String, stream: &'static str },
}

/// Appends one JSON object for `line` (without its newline) to `out`; bytes
/// that are not UTF-8 are replaced (U+FFFD).
pub fn json_line(process: &str, stream: &str, line: &[u8], out: &mut Vec<u8>) {
    let head = json_head(process, stream);
    json_body(&head, line, out);
}

/// `{"time":"…","process":"…","stream":"…","line":` for lines read now.
fn json_head(process: &str, stream: &str) -> Vec<u8> {
    let time = humantime::format_rfc3339_micros(std::time::SystemTime::now()).to_string();
    let mut head = Vec::with_capacity(64 + process.len());
    head.extend_from_slice(b"{\"time\":\"");
    head.extend_from_slice(time.as_bytes());
    head.extend_from_slice(b"\",\"process\":");
    json_string(process, &mut head);
    head.extend_from_slice(b",\"stream\":");
    json_string(stream, &mut head);
    head.extend_from_slice(b",\"line\":");
    head
}

fn json_body(head: &[u8], line: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(head);
    match std::str::from_utf8(line) {
        Ok(text) => json_string(text, out),
        Err(_) => json_string(&String::from_utf8_lossy(line), out),
    }
    out.extend_from_slice(b"}\n");
}

/// Appends `s` as a JSON string literal (quoted, escaped) to `out`. Runs of
/// bytes that need no escape are copied whole.
pub fn json_string(s: &str, out: &mut Vec<u8>) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escaped: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[run..i]);
        if escaped.is_empty() {
            out.extend_from_slice(format!("\\u{b:04x}").as_bytes());
        } else {
            out.extend_from_slice(escaped);
        }
        run = i + 1;
    }
    out.extend_from_slice(&bytes[run..]);
    out.push(b'"');
}

/// Splits `data` into lines framed by `framing`, appended to `out`, carrying an
/// unfinished line in `carry` (never longer than [`MAX_LINE`]).
pub fn frame(framing: &Framing, carry: &mut Vec<u8>, data: &[u8], out: &mut Vec<u8>) {
    match framing {
        Framing::Prefixed(prefix) => frame_lines(prefix, carry, data, out),
        Framing::Json { process, stream } => {
            // One time stamp for every line of one read: they arrived together.
            let head = json_head(process, stream);
            out.reserve(data.len() + (data.len() / 32 + 1) * (head.len() + 4));
            each_line(carry, data, |line| json_body(&head, line, out));
        }
    }
}

/// Calls `emit` with every complete line (without its newline) of what was
/// carried plus `data`, and with pieces of [`MAX_LINE`] bytes of a line that
/// grows longer; keeps the rest in `carry`.
fn each_line(carry: &mut Vec<u8>, mut data: &[u8], mut emit: impl FnMut(&[u8])) {
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        let line = &data[start..end];
        if carry.is_empty() {
            emit(line);
        } else {
            carry.extend_from_slice(line);
            emit(carry);
            carry.clear();
        }
        start = end + 1;
    }
    data = &data[start..];
    while carry.len() + data.len() >= MAX_LINE {
        let take = MAX_LINE - carry.len();
        carry.extend_from_slice(&data[..take]);
        emit(carry);
        carry.clear();
        data = &data[take..];
    }
    carry.extend_from_slice(data);
}

/// Splits `data` into prefixed lines appended to `out`, carrying an unfinished
/// line in `carry` (never longer than [`MAX_LINE`]).
pub fn frame_lines(prefix: &[u8], carry: &mut Vec<u8>, data: &[u8], out: &mut Vec<u8>) {
    let lines = memchr::memchr_iter(b'\n', data).count() + data.len() / MAX_LINE + 1;
    out.reserve(carry.len() + data.len() + lines * (prefix.len() + 1));
    each_line(carry, data, |line| {
        out.extend_from_slice(prefix);
        out.extend_from_slice(line);
        out.push(b'\n');
    });
}

async fn pump(mut rx: pipe::Receiver, framing: Framing, fd: i32) {
    let mut buf = vec![0u8; READ_SIZE];
    let mut carry = Vec::new();
    let mut out = Vec::with_capacity(READ_SIZE + READ_SIZE / 4);
    loop {
        let mut n = match rx.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        // Take whatever else is already in the pipe, without waiting, so that
        // a child writing in small pieces costs one write per full buffer.
        let mut eof = false;
        while n < buf.len() {
            match rx.try_read(&mut buf[n..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(more) => n += more,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        out.clear();
        frame(&framing, &mut carry, &buf[..n], &mut out);
        write_lane(fd, &out);
        // Do not keep a buffer a very long line made large.
        if out.capacity() > 4 * READ_SIZE {
            out = Vec::with_capacity(READ_SIZE + READ_SIZE / 4);
        }
        if eof {
            break;
        }
    }
    if !carry.is_empty() {
        // A last line without newline is written, with one added.
        carry.push(b'\n');
        out.clear();
        let mut rest = Vec::new();
        frame(&framing, &mut rest, &carry, &mut out);
        write_lane(fd, &out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prefixed_and_partial_lines_carried() {
        let mut carry = Vec::new();
        let mut out = Vec::new();
        frame_lines(b"a | ", &mut carry, b"one\ntw", &mut out);
        assert_eq!(out, b"a | one\n");
        assert_eq!(carry, b"tw");
        out.clear();
        frame_lines(b"a | ", &mut carry, b"o\n\nthree", &mut out);
        assert_eq!(out, b"a | two\na | \n");
        assert_eq!(carry, b"three");
    }

    #[test]
    fn long_lines_are_split_and_memory_bounded() {
        let mut carry = Vec::new();
        let mut out = Vec::new();
        let big = vec![b'x'; MAX_LINE * 2 + 10];
        frame_lines(b"p | ", &mut carry, &big, &mut out);
        assert_eq!(out.len(), 2 * (4 + MAX_LINE + 1));
        assert_eq!(carry.len(), 10);
        assert!(carry.len() < MAX_LINE);
    }

    #[test]
    fn json_lines_escape_and_replace_invalid_utf8() {
        let framing = Framing::Json { process: "app".into(), stream: "stderr" };
        let mut carry = Vec::new();
        let mut out = Vec::new();
        frame(&framing, &mut carry, b"say \"hi\"\t\\\x01\xff\nrest", &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("{\"time\":\"20"), "{text}");
        assert!(text.ends_with(",\"process\":\"app\",\"stream\":\"stderr\",\"line\":\"say \\\"hi\\\"\\t\\\\\\u0001\u{fffd}\"}\n"), "{text}");
        assert_eq!(carry, b"rest");
    }

    #[test]
    fn bytes_that_are_not_utf8_pass_through() {
        let mut carry = Vec::new();
        let mut out = Vec::new();
        frame_lines(b"p | ", &mut carry, b"\xff\xfe\x00ok\n", &mut out);
        assert_eq!(out, b"p | \xff\xfe\x00ok\n");
    }
}
