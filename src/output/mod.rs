//! Copies each entry's stdout and stderr to podinit's own (README, "Output").
//!
//! podinit's descriptors 1 and 2 each have a lane: a thread running a small
//! current-thread runtime of its own, with one pump task per child pipe. A pump
//! reads what the child wrote, frames it (`NAME | ` before each line, or one
//! JSON object per line) and writes it to the lane's descriptor, all in that one
//! thread, so a chunk of output costs no hand-off between threads. The lines
//! go out with `writev`, the prefix or JSON head and each line as they are in
//! the read buffer, so the kernel copies them once; only lines that need
//! escaping, and a line carried from one read to the next, are framed into a
//! buffer first. Writes block:
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

pub mod framing;
pub mod log;
pub mod watch;

pub use framing::{frame, frame_lines, json_line, json_string, Framing, MAX_LINE};
use framing::{frame_json, json_body, plain_json_text};
pub use log::{flush_log, write_log_line};

use std::io;
use std::os::fd::OwnedFd;
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::mpsc;

use watch::{LineScan, LineWatch};

/// Most bytes read from a child pipe at once.
pub const READ_SIZE: usize = 64 * 1024;
/// What a pump reads at first; a read that fills it makes it 4× larger, up
/// to [`READ_SIZE`].
const FIRST_READ_SIZE: usize = 4 * 1024;

/// Which of podinit's descriptors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// What a lane is asked to do.
#[derive(Debug)]
enum Command {
    /// Copy this child pipe to the lane's descriptor until end of file,
    /// showing its lines to a `log_line` probe's watch until one matches.
    Pump(OwnedFd, Framing, Option<Arc<LineWatch>>),
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

/// Writes a lane's chunk to its descriptor, holding the stderr lock for fd 2.
fn write_lane(fd: i32, buf: &[u8]) {
    let _held = (fd == 2).then(log::lock_stderr);
    write_all(fd, buf);
}

/// Writes all of `buf` to `fd`, waiting while it would block (a descriptor
/// someone else made non-blocking). Any other error drops the rest: a closed
/// stdout must not stop podinit.
pub(crate) fn write_all(fd: i32, mut buf: &[u8]) {
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

/// Most iovecs given to one `writev` (Linux's IOV_MAX is 1024).
const IOV_BATCH: usize = 1024;

/// Writes all of `iov` to `fd` with `writev`, as [`write_all`] does for one
/// buffer: waits while it would block, gives up on any other error.
fn writev_all(fd: i32, mut iov: &mut [libc::iovec]) {
    while !iov.is_empty() {
        let count = iov.len().min(IOV_BATCH);
        // SAFETY: the iovecs point into buffers the caller keeps alive and
        // unchanged for this call; `count` is at most their number.
        let n = unsafe { libc::writev(fd, iov.as_ptr(), count as libc::c_int) };
        if n < 0 {
            let err = io::Error::last_os_error();
            match err.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => {
                    let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
                    // SAFETY: one valid pollfd.
                    unsafe { libc::poll(&mut pfd, 1, 100) };
                    continue;
                }
                _ => return,
            }
        }
        // Skip what was written: whole iovecs, then part of the next one.
        let mut left = n.unsigned_abs();
        while let Some(first) = iov.first_mut() {
            if left < first.iov_len {
                // SAFETY: stays inside the same buffer (left < its length).
                first.iov_base = unsafe { first.iov_base.cast::<u8>().add(left) }.cast();
                first.iov_len -= left;
                break;
            }
            left -= first.iov_len;
            iov = &mut iov[1..];
        }
    }
}

/// Writes `iov` once it holds a whole batch, so that the list built for one
/// read stays short (the prefixed and json fast paths add to it per line).
fn write_if_full(fd: i32, iov: &mut Vec<libc::iovec>) {
    if iov.len() >= IOV_BATCH {
        writev_all(fd, iov);
        iov.clear();
    }
}

/// Adds `tail` (the framed end of a read, if any) and writes what is left.
fn write_rest(fd: i32, iov: &mut Vec<libc::iovec>, tail: &[u8]) {
    if !tail.is_empty() {
        iov.push(iovec(tail));
    }
    writev_all(fd, iov);
    iov.clear();
}

fn iovec(buf: &[u8]) -> libc::iovec {
    libc::iovec { iov_base: buf.as_ptr().cast_mut().cast(), iov_len: buf.len() }
}

/// Splits one read for the writev paths: the line carried from the last read
/// is finished and framed into `first`, the unfinished rest is carried (or,
/// grown past MAX_LINE, framed in pieces into `tail`), both by `frame` (the
/// mode's framing, which owns the carry rules). Returns where the complete
/// lines in between start and end in `data`.
fn split_read(
    carry: &mut Vec<u8>,
    data: &[u8],
    first: &mut Vec<u8>,
    tail: &mut Vec<u8>,
    mut frame: impl FnMut(&mut Vec<u8>, &[u8], &mut Vec<u8>),
) -> (usize, usize) {
    first.clear();
    tail.clear();
    let mut start = 0;
    if !carry.is_empty() {
        start = memchr::memchr(b'\n', data).map_or(data.len(), |i| i + 1);
        frame(carry, &data[..start], first);
    }
    let lines_end = memchr::memrchr(b'\n', &data[start..]).map_or(start, |i| start + i + 1);
    frame(carry, &data[lines_end..], tail);
    (start, lines_end)
}

/// The prefixed mode's fast path: the complete lines of `data` go out with
/// `writev`, each as two iovecs (the prefix, then the line as it is in
/// `data`), so the bytes are copied once, by the kernel, instead of once more
/// into a framed buffer. A line carried from the last read (finished in
/// `head`) and the unfinished rest (`tail`, usually empty: it is carried) are
/// framed by [`frame_lines`] as before, so the output is the same byte for
/// byte.
fn write_prefixed(fd: i32, prefix: &[u8], carry: &mut Vec<u8>, data: &[u8], bufs: &mut PrefixedBuffers) {
    let PrefixedBuffers { head, tail, iov } = bufs;
    let (start, lines_end) = split_read(carry, data, head, tail, |c, d, out| frame_lines(prefix, c, d, out));
    let _held = (fd == 2).then(log::lock_stderr);
    // Cleared before it is filled again: it never holds pointers past a call.
    iov.clear();
    if !head.is_empty() {
        iov.push(iovec(head));
    }
    let mut from = start;
    for nl in memchr::memchr_iter(b'\n', &data[start..lines_end]) {
        let to = start + nl + 1;
        iov.push(iovec(prefix));
        iov.push(iovec(&data[from..to]));
        from = to;
        write_if_full(fd, iov);
    }
    write_rest(fd, iov, tail);
}

/// The json mode's fast path, as [`write_prefixed`]: a line that needs no
/// escape goes out as three iovecs (`head` and the opening quote, the line as
/// it is in `data`, the closing `"}` and newline); a line that does is framed
/// into a buffer. The bytes are those [`frame_json`] writes, with `head` for
/// every line of the read.
fn write_json(fd: i32, head: &[u8], carry: &mut Vec<u8>, data: &[u8], bufs: &mut JsonBuffers) {
    let JsonBuffers { quoted_head, first, tail, framed, segments, iov } = bufs;
    quoted_head.clear();
    quoted_head.extend_from_slice(head);
    quoted_head.push(b'"');
    framed.clear();
    segments.clear();
    let (start, lines_end) = split_read(carry, data, first, tail, |c, d, out| frame_json(head, c, d, out));
    // Where each line's bytes are, before any iovec points anywhere:
    // `framed` grows while this runs.
    let mut from = start;
    for nl in memchr::memchr_iter(b'\n', &data[start..lines_end]) {
        let to = start + nl;
        let line = &data[from..to];
        if plain_json_text(line) {
            segments.push(Segment::Plain(from, to));
        } else {
            let at = framed.len();
            json_body(head, line, framed);
            segments.push(Segment::Framed(at, framed.len()));
        }
        from = to + 1;
    }
    let _held = (fd == 2).then(log::lock_stderr);
    iov.clear();
    if !first.is_empty() {
        iov.push(iovec(first));
    }
    for segment in segments.iter() {
        match *segment {
            Segment::Plain(a, b) => {
                iov.push(iovec(quoted_head));
                iov.push(iovec(&data[a..b]));
                iov.push(iovec(b"\"}\n"));
            }
            Segment::Framed(a, b) => iov.push(iovec(&framed[a..b])),
        }
        write_if_full(fd, iov);
    }
    write_rest(fd, iov, tail);
    // Do not keep a buffer that a read of long, escaped lines made large.
    if framed.capacity() > 4 * READ_SIZE {
        *framed = Vec::new();
    }
}

/// Where one json line's bytes are: a line of the read to quote as it is,
/// or a range of the framed buffer.
#[derive(Debug, Clone, Copy)]
enum Segment {
    Plain(usize, usize),
    Framed(usize, usize),
}

/// What [`write_json`] reuses from one read to the next.
#[derive(Default)]
struct JsonBuffers {
    quoted_head: Vec<u8>,
    first: Vec<u8>,
    tail: Vec<u8>,
    framed: Vec<u8>,
    segments: Vec<Segment>,
    iov: Vec<libc::iovec>,
}

/// What [`write_prefixed`] reuses from one read to the next.
#[derive(Default)]
struct PrefixedBuffers {
    head: Vec<u8>,
    tail: Vec<u8>,
    iov: Vec<libc::iovec>,
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
            Some(Command::Pump(pipe_fd, framing, watch)) => match pipe::Receiver::from_owned_fd(pipe_fd) {
                Ok(r) => {
                    pumps.retain(|p| !p.is_finished());
                    let scan = watch.map(|w| LineScan::new(w, MAX_LINE));
                    pumps.push(tokio::task::spawn_local(pump(r, framing, fd, scan)));
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
    /// framed by `framing`, and shows its lines to `watch` (a `log_line`
    /// probe) until one matches. Starts the stream's lane on first use.
    pub fn pump(&mut self, fd: OwnedFd, stream: Stream, framing: Framing, watch: Option<Arc<LineWatch>>) {
        let (slot, raw_fd) = match stream {
            Stream::Stdout => (&mut self.stdout, 1),
            Stream::Stderr => (&mut self.stderr, 2),
        };
        let lane = slot.get_or_insert_with(|| Lane::start(raw_fd));
        if lane.tx.send(Command::Pump(fd, framing, watch)).is_err() {
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

async fn pump(mut rx: pipe::Receiver, framing: Framing, fd: i32, mut scan: Option<LineScan>) {
    // Small until the child writes much: most entries write little, and a
    // pump per pipe of every entry must not cost 64 KiB each. A read that
    // fills the buffer grows it, up to READ_SIZE.
    let mut buf = vec![0u8; FIRST_READ_SIZE];
    let mut carry = Vec::new();
    let mut out = Vec::new();
    let mut prefixed = PrefixedBuffers::default();
    let mut json = JsonBuffers::default();
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
        if let Some(s) = &mut scan {
            s.feed(&buf[..n]);
            if !s.active() {
                scan = None;
            }
        }
        match &framing {
            Framing::Prefixed(prefix) => write_prefixed(fd, prefix, &mut carry, &buf[..n], &mut prefixed),
            // One time stamp for every line of one read: they arrived together.
            Framing::Json { process, stream } => {
                write_json(fd, &framing::json_head(process, stream), &mut carry, &buf[..n], &mut json);
            }
        }
        if n == buf.len() && buf.len() < READ_SIZE {
            buf.resize((buf.len() * 4).min(READ_SIZE), 0);
        }
        if eof {
            break;
        }
    }
    if let Some(s) = &mut scan {
        s.finish();
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
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd};

    /// What `write` wrote to a pipe's write end, read back.
    fn read_back(write: impl FnOnce(i32)) -> Vec<u8> {
        let mut fds = [0; 2];
        // SAFETY: fds has room for two descriptors.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both are new descriptors owned here.
        let (mut r, w) = unsafe { (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1])) };
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            r.read_to_end(&mut got).unwrap();
            got
        });
        write(w.as_raw_fd());
        drop(w);
        reader.join().unwrap()
    }

    /// What `write_prefixed` writes for `chunks`, and what it carries.
    fn through_writev(prefix: &[u8], chunks: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let mut carry = Vec::new();
        let mut bufs = PrefixedBuffers::default();
        let out =
            read_back(|fd| chunks.iter().for_each(|c| write_prefixed(fd, prefix, &mut carry, c, &mut bufs)));
        (out, carry)
    }

    fn through_frame(prefix: &[u8], chunks: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let (mut carry, mut out) = (Vec::new(), Vec::new());
        for c in chunks {
            frame_lines(prefix, &mut carry, c, &mut out);
        }
        (out, carry)
    }

    /// What `write_json` writes for `chunks` with `head`, and what it carries.
    fn json_through_writev(head: &[u8], chunks: &[&[u8]]) -> (Vec<u8>, Vec<u8>) {
        let mut carry = Vec::new();
        let mut bufs = JsonBuffers::default();
        let out = read_back(|fd| chunks.iter().for_each(|c| write_json(fd, head, &mut carry, c, &mut bufs)));
        (out, carry)
    }

    #[test]
    fn the_json_writev_path_writes_what_framing_writes_byte_for_byte() {
        let head = framing::json_head("app", "stdout");
        let mut data = Vec::new();
        let pieces: [&[u8]; 6] =
            [b"plain text", b"say \"hi\"", b"tab\there", b"\xff\xfe not utf-8", "caf\u{e9}".as_bytes(), b""];
        for i in 0..3000 {
            data.extend_from_slice(pieces[i % pieces.len()]);
            data.extend(std::iter::repeat(b'x').take(i % 97));
            data.push(b'\n');
        }
        data.extend_from_slice(b"unfinished");
        for cut in [1usize, 5, 99, 4096, 65536] {
            let chunks: Vec<&[u8]> = data.chunks(cut).collect();
            let (mut carry, mut out) = (Vec::new(), Vec::new());
            for c in &chunks {
                framing::frame_json(&head, &mut carry, c, &mut out);
            }
            assert_eq!(json_through_writev(&head, &chunks), (out, carry), "reads of {cut}");
        }
    }

    #[test]
    fn the_writev_path_writes_what_framing_writes_byte_for_byte() {
        // Lines of every length up to past MAX_LINE, cut into reads at odd
        // places (mid-line, at a newline, a read with no newline at all).
        let mut data = Vec::new();
        let mut n: usize = 7;
        while data.len() < 3 * MAX_LINE {
            n = (n * 7919 + 13) % (MAX_LINE + 5000);
            let len = if n % 5 == 0 { n } else { n % 300 };
            data.extend(std::iter::repeat(b'a' + (n % 26) as u8).take(len));
            data.push(b'\n');
        }
        data.extend_from_slice(b"unfinished");
        for cut in [1usize, 7, 100, 4096, 65536, 100_000] {
            let chunks: Vec<&[u8]> = data.chunks(cut).collect();
            assert_eq!(
                through_writev(b"app | ", &chunks),
                through_frame(b"app | ", &chunks),
                "reads of {cut}"
            );
        }
        // Far more lines in one read than one writev takes.
        let many = b"x\n".repeat(10_000);
        assert_eq!(through_writev(b"p | ", &[&many]), through_frame(b"p | ", &[&many]));
        let tiny: Vec<&[u8]> = vec![b"a", b"b\n", b"", b"\n\n", b"c"];
        assert_eq!(through_writev(b"x | ", &tiny), through_frame(b"x | ", &tiny));
    }
}
