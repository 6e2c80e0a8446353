//! Copies each entry's stdout and stderr to podinit's own (docs/reference.md, "Output").
//!
//! podinit's descriptors 1 and 2 each have a lane: a thread running a small
//! current-thread runtime of its own, with one pump task per child pipe. A pump
//! reads what the child wrote, frames it (`NAME | ` before each line, or one
//! JSON object per line) and writes it to the lane's descriptor, all in that one
//! thread, so a chunk of output costs no hand-off between threads. Each read
//! is framed into one buffer and written with one `write`: measured, that
//! costs podinit a fifth less CPU than handing the kernel the prefix and each
//! line as they lie in the read buffer (`writev` with two or three iovecs a
//! line), whose per-iovec cost outweighs the copy it saves. Writes block:
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
pub use log::{flush_log, write_log_line};

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
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

/// The size a child's pipe is given once a read finds it busy (bytes; the
/// kernel's default is 64 KiB): at least [`BUSY_READ`] bytes waiting. A
/// writer that fills its pipe then blocks less often: a pipeline of 1 GB of
/// prefixed 100-byte lines went from 0.80× to 0.87× a bare pipe (json 0.52×
/// to 0.62×; hyperfine, 10 runs). Only busy pipes grow: the pipe memory of
/// one user is limited (`/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by
/// default), and an unprivileged pipe created beyond that gets two pages
/// instead of the default 16. A refusal
/// (`EPERM` past the limit) leaves the pipe as it was.
const BUSY_PIPE_SIZE: libc::c_int = 256 * 1024;

/// A read of this much (bytes) finds a pipe busy. Not a whole 64 KiB: the
/// kernel puts each write in the last page of the pipe only if it fits there,
/// so a full pipe of 16 pages holds less than that unless the writes are whole
/// pages; with writes of 2,100 bytes, one a page, it holds 33,600. Each
/// page of a full pipe holds more than 2 KiB, or is the short end of a write
/// that filled the page before it, so a full pipe holds more than this.
const BUSY_READ: usize = 32 * 1024;

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
        match crate::sys::fd::write(fd, buf) {
            Ok(n) if n > 0 => buf = &buf[n..],
            // Nothing taken and no error: nothing will be.
            Ok(_) => return,
            Err(e) => match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => crate::sys::fd::wait_writable(fd, 100),
                _ => return,
            },
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
    let mut pipe_grown = false;
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
        out.clear();
        frame(&framing, &mut carry, &buf[..n], &mut out);
        write_lane(fd, &out);
        // Do not keep a buffer that a read of very short lines, or of lines
        // that need escapes, made large. 1 MiB is above what framing reserves
        // for an ordinary full read (json with a long name: about 360 KB), so
        // that one is reused from read to read.
        if out.capacity() > 16 * READ_SIZE {
            out = Vec::new();
        }
        if n == buf.len() && buf.len() < READ_SIZE {
            buf.resize((buf.len() * 4).min(READ_SIZE), 0);
        } else if buf.len() == READ_SIZE && n >= BUSY_READ && !pipe_grown {
            pipe_grown = true;
            // On the pipe this pump owns; a failure changes nothing.
            let _ = crate::sys::fd::set_pipe_size(rx.as_raw_fd(), BUSY_PIPE_SIZE);
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
    use std::os::fd::AsRawFd;

    /// What `write` wrote to a pipe's write end, read back.
    fn read_back(write: impl FnOnce(i32)) -> Vec<u8> {
        let (r, w) = nix::unistd::pipe().unwrap();
        let (mut r, w) = (std::fs::File::from(r), std::fs::File::from(w));
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            r.read_to_end(&mut got).unwrap();
            got
        });
        write(w.as_raw_fd());
        drop(w);
        reader.join().unwrap()
    }

    /// What a pump writes for `data`, written by another thread in pieces of
    /// `cut` bytes with pauses between some of them.
    fn pumped(framing: &Framing, data: &[u8], cut: usize) -> Vec<u8> {
        read_back(|out_fd| {
            let (child_end, ours) = nix::unistd::pipe().unwrap();
            let data = data.to_vec();
            let writer = std::thread::spawn(move || {
                let mut w = std::fs::File::from(ours);
                for (i, piece) in data.chunks(cut).enumerate() {
                    std::io::Write::write_all(&mut w, piece).unwrap();
                    if i % 97 == 0 {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                }
            });
            let rt = tokio::runtime::Builder::new_current_thread().enable_io().build().unwrap();
            rt.block_on(async {
                let rx = pipe::Receiver::from_owned_fd(child_end).unwrap();
                pump(rx, framing.clone(), out_fd, None).await;
            });
            writer.join().unwrap();
        })
    }

    #[test]
    fn a_pump_writes_what_framing_writes_whatever_the_child_s_writes_are() {
        // Lines of every length up to past MAX_LINE, some needing escapes in
        // JSON, and a last line without newline.
        let mut data = Vec::new();
        let mut n: usize = 7;
        while data.len() < 3 * MAX_LINE {
            n = (n * 7919 + 13) % (MAX_LINE + 5000);
            let len = if n.is_multiple_of(5) { n } else { n % 300 };
            data.extend(std::iter::repeat_n(b'a' + (n % 26) as u8, len));
            data.extend_from_slice([&b""[..], b"\"", b"\t", b"\xff", "\u{e9}".as_bytes()][n % 5]);
            data.push(b'\n');
        }
        data.extend(b"x\n".repeat(40_000));
        data.extend_from_slice(b"unfinished");
        let prefixed = Framing::Prefixed(b"app | ".to_vec());
        let (mut carry, mut want) = (Vec::new(), Vec::new());
        frame(&prefixed, &mut carry, &data, &mut want);
        frame(&prefixed, &mut Vec::new(), b"unfinished\n", &mut want);
        for cut in [1usize, 100, 4096, 65536, 100_000] {
            assert!(pumped(&prefixed, &data, cut) == want, "prefixed, writes of {cut}");
        }
        // JSON: the time stamp differs from read to read; the lines do not.
        let json = Framing::Json { process: "app".into(), stream: "stdout" };
        let strip = |out: Vec<u8>| -> Vec<String> {
            String::from_utf8(out)
                .unwrap()
                .lines()
                .map(|l| l[l.find("\"process\"").unwrap()..].to_owned())
                .collect()
        };
        let (mut carry, mut want) = (Vec::new(), Vec::new());
        frame(&json, &mut carry, &data, &mut want);
        frame(&json, &mut Vec::new(), b"unfinished\n", &mut want);
        let want = strip(want);
        for cut in [7usize, 65536] {
            assert!(strip(pumped(&json, &data, cut)) == want, "json, writes of {cut}");
        }
    }
}
