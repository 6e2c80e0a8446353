//! Copies each entry's stdout and stderr to podinit's own (SPEC §4, `prefixed`).
//!
//! One pump task per child pipe splits what it reads into lines and puts
//! `NAME | ` in front of each; one writer thread per podinit descriptor (1 and
//! 2) writes what the pumps send. Between them a bounded channel: when podinit's
//! stdout is slow, the pumps stop reading and the children block on their pipes
//! (back-pressure) instead of podinit buffering without limit, while the event
//! loop, which never writes to stdout, keeps supervising. A write error (EPIPE
//! when stdout is closed) is ignored, so a closed stdout never stops podinit.
//!
//! Memory is bounded: a read is at most [`READ_SIZE`] bytes, and a line longer
//! than [`MAX_LINE`] is written in pieces, each prefixed. Nothing is lost: a pump
//! runs to end of file, a last line without newline gets one, and podinit waits
//! for the pumps and writers before it exits.

use std::fs::File;
use std::io::Write;
use std::mem::ManuallyDrop;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::mpsc as std_mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

/// Bytes read from a child pipe at once.
pub const READ_SIZE: usize = 64 * 1024;
/// Longest line written whole (bytes, without prefix); longer ones are split.
pub const MAX_LINE: usize = 64 * 1024;
/// Child output buffers in flight between the pumps and one writer thread
/// (each at most about [`READ_SIZE`] plus prefixes).
const WINDOW: usize = 16;

/// Which of podinit's descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The two writer threads.
#[derive(Debug)]
pub struct Output {
    stdout: Writer,
    stderr: Writer,
}

/// What a writer thread writes, and, for a child's output, the permit that
/// holds its place in the bounded window (released once written).
type Message = (Vec<u8>, Option<OwnedSemaphorePermit>);

#[derive(Debug)]
struct Writer {
    tx: mpsc::UnboundedSender<Message>,
    /// Child output buffers in flight to this descriptor: the back-pressure.
    window: Arc<Semaphore>,
    done: std_mpsc::Receiver<()>,
}

/// Where podinit's own messages go while the stderr writer runs: through the
/// same thread as the children's stderr, so that a message never lands inside
/// a child's line when a large write to a full pipe goes out in pieces. They
/// take no permit: logging never waits for a slow stderr (a message is a line,
/// and there are few).
static LOG_SINK: Mutex<Option<mpsc::UnboundedSender<Message>>> = Mutex::new(None);

/// Writes one of podinit's own lines through the stderr writer thread.
/// `false` when that thread is not running (the caller writes it itself).
pub fn write_log_line(line: &[u8]) -> bool {
    match LOG_SINK.lock() {
        Ok(sink) => sink.as_ref().is_some_and(|tx| tx.send((line.to_vec(), None)).is_ok()),
        Err(_) => false,
    }
}

impl Writer {
    fn start(fd: i32) -> Writer {
        let (tx, mut rx) = mpsc::unbounded_channel::<Message>();
        let (done_tx, done) = std_mpsc::channel();
        let spawned = std::thread::Builder::new().name(format!("podinit-out-{fd}")).spawn(move || {
            // SAFETY: fd 1 or 2 stays open for the life of podinit; ManuallyDrop
            // keeps this File from closing it.
            let file = ManuallyDrop::new(unsafe { File::from_raw_fd(fd) });
            while let Some((buf, permit)) = rx.blocking_recv() {
                // EPIPE and friends: drop the data and go on (SPEC: a closed
                // stdout must not stop podinit).
                let _ = (&*file).write_all(&buf);
                drop(permit);
            }
            let _ = done_tx.send(());
        });
        if let Err(e) = spawned {
            tracing::error!("cannot start output thread: {e}");
        }
        Writer { tx, window: Arc::new(Semaphore::new(WINDOW)), done }
    }
}

impl Output {
    /// Starts the writer threads for fd 1 and 2, and sends podinit's own
    /// messages through the second.
    pub fn start() -> Output {
        let output = Output { stdout: Writer::start(1), stderr: Writer::start(2) };
        if let Ok(mut sink) = LOG_SINK.lock() {
            *sink = Some(output.stderr.tx.clone());
        }
        output
    }

    /// Starts a pump from `fd` (a child's pipe) to `stream`, each line framed by `framing`.
    /// Returns the task's handle, done when the pipe reached end of file.
    pub fn pump(&self, fd: OwnedFd, stream: Stream, framing: Framing) -> Option<tokio::task::JoinHandle<()>> {
        let w = match stream {
            Stream::Stdout => &self.stdout,
            Stream::Stderr => &self.stderr,
        };
        let (tx, window) = (w.tx.clone(), Arc::clone(&w.window));
        match pipe::Receiver::from_owned_fd(fd) {
            Ok(rx) => Some(tokio::task::spawn_local(pump(rx, framing, tx, window))),
            Err(e) => {
                tracing::error!("cannot read child output: {e}");
                None
            }
        }
    }

    /// Lets the writers finish what they have, waiting at most until `deadline`.
    /// podinit's own messages go straight to stderr again from here on.
    pub fn close(self, deadline: Instant) {
        if let Ok(mut sink) = LOG_SINK.lock() {
            *sink = None;
        }
        let Output { stdout, stderr } = self;
        for w in [stdout, stderr] {
            drop(w.tx);
            let left = deadline.saturating_duration_since(Instant::now());
            let _ = w.done.recv_timeout(left.max(Duration::from_millis(1)));
        }
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
    let time = humantime::format_rfc3339_micros(std::time::SystemTime::now());
    out.extend_from_slice(b"{\"time\":\"");
    out.extend_from_slice(time.to_string().as_bytes());
    out.extend_from_slice(b"\",\"process\":");
    json_string(process, out);
    out.extend_from_slice(b",\"stream\":");
    json_string(stream, out);
    out.extend_from_slice(b",\"line\":");
    json_string(&String::from_utf8_lossy(line), out);
    out.extend_from_slice(b"}\n");
}

/// Appends `s` as a JSON string literal (quoted, escaped) to `out`.
pub fn json_string(s: &str, out: &mut Vec<u8>) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            '\r' => out.extend_from_slice(b"\\r"),
            '\t' => out.extend_from_slice(b"\\t"),
            c if (c as u32) < 0x20 => out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes()),
            c => {
                let mut buf = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Splits `data` into lines framed by `framing`, appended to `out`, carrying an
/// unfinished line in `carry` (never longer than [`MAX_LINE`]).
pub fn frame(framing: &Framing, carry: &mut Vec<u8>, data: &[u8], out: &mut Vec<u8>) {
    match framing {
        Framing::Prefixed(prefix) => frame_lines(prefix, carry, data, out),
        Framing::Json { process, stream } => {
            let mut lines = Vec::new();
            frame_lines(b"", carry, data, &mut lines);
            for line in lines.split_inclusive(|&b| b == b'\n') {
                json_line(process, stream, line.strip_suffix(b"\n").unwrap_or(line), out);
            }
        }
    }
}

/// Splits `data` into prefixed lines appended to `out`, carrying an unfinished
/// line in `carry` (never longer than [`MAX_LINE`]).
pub fn frame_lines(prefix: &[u8], carry: &mut Vec<u8>, mut data: &[u8], out: &mut Vec<u8>) {
    while let Some(i) = data.iter().position(|&b| b == b'\n') {
        out.extend_from_slice(prefix);
        out.append(carry);
        out.extend_from_slice(&data[..=i]);
        data = &data[i + 1..];
    }
    while carry.len() + data.len() >= MAX_LINE {
        let take = MAX_LINE - carry.len();
        out.extend_from_slice(prefix);
        out.append(carry);
        out.extend_from_slice(&data[..take]);
        out.push(b'\n');
        data = &data[take..];
    }
    carry.extend_from_slice(data);
}

async fn pump(
    mut rx: pipe::Receiver,
    framing: Framing,
    tx: mpsc::UnboundedSender<Message>,
    window: Arc<Semaphore>,
) {
    let mut buf = vec![0u8; READ_SIZE];
    let mut carry = Vec::new();
    loop {
        // Wait for room before reading: while podinit's descriptor is slow, the
        // child blocks on its full pipe instead of podinit buffering.
        let Ok(permit) = Arc::clone(&window).acquire_owned().await else { return };
        let n = match rx.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut out = Vec::with_capacity(n + 256);
        frame(&framing, &mut carry, &buf[..n], &mut out);
        if !out.is_empty() && tx.send((out, Some(permit))).is_err() {
            return;
        }
    }
    if !carry.is_empty() {
        // A last line without newline is written, with one added.
        carry.push(b'\n');
        let mut out = Vec::new();
        let mut rest = Vec::new();
        frame(&framing, &mut rest, &carry, &mut out);
        let _ = tx.send((out, None));
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
