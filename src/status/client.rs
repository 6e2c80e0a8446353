//! The clients of the status socket: `podinit status` (and `--watch`),
//! `podinit events` and the control verbs (docs/control.md). Each connects,
//! sends one request line and prints what podinit answers; a podinit over its cap answers one `busy`
//! line and closes, sometimes before the request is read, so that line is read
//! even when sending the request failed.

use std::io::{BufRead, BufReader, IsTerminal as _, Read, Write};
use std::os::unix::net::UnixStream as StdUnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::{default_paths, Verb, DEADLINE};

/// The first line of podinit's answer when it is over its connection cap
/// or its request queue is full; the clients print it as it is.
fn busy(head: &str) -> Option<&str> {
    let head = head.trim_end();
    head.starts_with("busy:").then_some(head)
}

/// Which report `podinit status` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// The table (`podinit status`).
    Text,
    /// One JSON object (`--json`).
    Json,
    /// When each entry was asked for, started, ready, and the critical
    /// chain (`--timing`).
    Timing,
}

impl Format {
    /// The request line that asks for it.
    fn request(self) -> &'static str {
        match self {
            Format::Text => "text\n",
            Format::Json => "json\n",
            Format::Timing => "timing\n",
        }
    }
}

/// The client: asks the podinit at `socket` (or the first default path that
/// answers) and prints its report. Returns 0 when the pod is ready, 1 when not,
/// 2 when no podinit answers or it is busy (docs/reference.md, "Command line";
/// docs/control.md).
pub fn client(socket: Option<PathBuf>, format: Format) -> i32 {
    let candidates = match socket {
        Some(p) => vec![p],
        None => default_paths(),
    };
    let mut errors = Vec::new();
    for path in candidates {
        match ask(&path, format) {
            Ok(Asked::Report(ready, body)) => {
                print!("{body}");
                return if ready { 0 } else { 1 };
            }
            Ok(Asked::Busy(line)) => {
                eprintln!("podinit status: {}: {line}", path.display());
                return 2;
            }
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    eprintln!("podinit status: no podinit answers ({})", errors.join("; "));
    2
}

/// The first of `socket` (or the default paths) where a podinit accepts a
/// connection, with the reasons of the others.
fn connect(socket: Option<PathBuf>) -> Result<(StdUnixStream, PathBuf), String> {
    let candidates = match socket {
        Some(p) => vec![p],
        None => default_paths(),
    };
    let mut errors = Vec::new();
    for path in candidates {
        match StdUnixStream::connect(&path) {
            Ok(stream) => return Ok((stream, path)),
            Err(e) => errors.push(format!("{}: {e}", path.display())),
        }
    }
    Err(errors.join("; "))
}

/// Sends `line` and reads the first line of the answer. A podinit over its
/// cap writes its `busy` line and closes at once, so the send may fail
/// (EPIPE) while that line waits to be read: it is read either way.
/// `wait` bounds each read (none: wait as long as it takes).
fn exchange(
    stream: StdUnixStream,
    line: &str,
    wait: Option<Duration>,
) -> std::io::Result<(String, BufReader<StdUnixStream>)> {
    let mut stream = stream;
    stream.set_read_timeout(wait)?;
    stream.set_write_timeout(Some(DEADLINE))?;
    let sent = stream.write_all(line.as_bytes());
    let mut reader = BufReader::new(stream);
    let mut head = String::new();
    let read = reader.read_line(&mut head);
    if busy(&head).is_none() {
        sent?;
        read?;
    }
    Ok((head, reader))
}

/// The client of a control verb: prints the entry's new state and returns 0,
/// or prints why the request was refused and returns 1; 2 when no podinit
/// answers or it is busy (docs/control.md).
pub fn control_client(socket: Option<PathBuf>, verb: &Verb) -> i32 {
    let command = verb.line();
    let command = command.split_whitespace().next().unwrap_or_default();
    let (stream, path) = match connect(socket) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("podinit {command}: no podinit answers ({why})");
            return 2;
        }
    };
    let answer =
        exchange(stream, &format!("{}\n", verb.line()), Some(DEADLINE * 2)).and_then(|(head, reader)| {
            let mut body = String::new();
            if busy(&head).is_none() {
                reader.take(1 << 16).read_to_string(&mut body)?;
            }
            Ok((head.trim().to_owned(), body))
        });
    match answer {
        Ok((head, body)) if head == "ok" => {
            print!("{body}");
            0
        }
        Ok((head, body)) if head == "refused" => {
            eprint!("podinit {command}: refused: {body}");
            1
        }
        Ok((head, _)) if busy(&head).is_some() => {
            eprintln!("podinit {command}: {}: {head}", path.display());
            2
        }
        // Accepted, then closed without a word: podinit ended meanwhile
        // (a second `shutdown` while the first one's termination finishes).
        Ok((head, _)) if head.is_empty() => {
            eprintln!(
                "podinit {command}: {}: closed without an answer (podinit is exiting or has exited)",
                path.display()
            );
            2
        }
        Ok((head, _)) => {
            eprintln!("podinit {command}: {}: not a podinit answer ({head:?})", path.display());
            2
        }
        Err(e) => {
            eprintln!("podinit {command}: {}: {e}", path.display());
            2
        }
    }
}

/// The client of `podinit events`: copies each event line to stdout until
/// podinit exits (0) or drops this reader as too slow (1); 2 when no podinit
/// answers or it is busy.
pub fn events_client(socket: Option<PathBuf>) -> i32 {
    let (stream, path) = match connect(socket) {
        Ok(c) => c,
        Err(why) => {
            eprintln!("podinit events: no podinit answers ({why})");
            return 2;
        }
    };
    let mut reader = match exchange(stream, "events\n", None) {
        Ok((head, reader)) if head.trim() == "events" => reader,
        Ok((head, _)) if busy(&head).is_some() => {
            eprintln!("podinit events: {}: {}", path.display(), head.trim_end());
            return 2;
        }
        _ => {
            eprintln!("podinit events: {}: not a podinit answer", path.display());
            return 2;
        }
    };
    let mut out = std::io::stdout().lock();
    let mut line = String::new();
    let mut dropped = false;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                dropped = line.starts_with("{\"event\":\"events_dropped\"");
                if out.write_all(line.as_bytes()).and_then(|()| out.flush()).is_err() {
                    return 0;
                }
            }
        }
    }
    i32::from(dropped)
}

/// How often `podinit status --watch` asks again.
const WATCH_PERIOD: Duration = Duration::from_secs(1);

/// The client of `podinit status --watch` (docs/control.md): asks every
/// `WATCH_PERIOD` and shows each answer. On a terminal the report is
/// redrawn in place (cursor home, each line cleared to its end, what is
/// left below cleared); on anything else each answer is printed after a
/// blank line. SIGINT (Ctrl-C) ends it with 0; when podinit goes away it
/// leaves the last answer where it is and returns 2, as [`client`] does
/// when no podinit answers.
pub fn watch_client(socket: Option<PathBuf>, format: Format) -> i32 {
    // SIGINT is blocked and taken off the queue between two asks, so that
    // Ctrl-C ends the watch with 0 rather than kill it.
    let mut interrupt = crate::sys::signal::SigSet::empty();
    interrupt.add(crate::config::Signal::INT.number());
    crate::sys::signal::block_in_thread(&interrupt);
    let path = match connect(socket) {
        Ok((_, path)) => path,
        Err(why) => {
            eprintln!("podinit status: no podinit answers ({why})");
            return 2;
        }
    };
    let terminal = std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    // What goes before the next answer: the first clears the screen.
    let mut before = if terminal { "\x1b[H\x1b[2J" } else { "" };
    loop {
        match ask(&path, format) {
            Ok(Asked::Report(_, body)) => {
                let frame = if terminal {
                    format!("{before}{}\x1b[J", body.replace('\n', "\x1b[K\n"))
                } else {
                    format!("{before}{body}")
                };
                if out.write_all(frame.as_bytes()).and_then(|()| out.flush()).is_err() {
                    return 0;
                }
                before = if terminal { "\x1b[H" } else { "\n" };
            }
            Ok(Asked::Busy(line)) => eprintln!("podinit status: {}: {line}", path.display()),
            Err(e) => {
                eprintln!("podinit status: no podinit answers ({}: {e})", path.display());
                return 2;
            }
        }
        if crate::sys::signal::timed_wait(&interrupt, Some(WATCH_PERIOD)).is_some() {
            return 0;
        }
    }
}

/// What the status socket answered `text` or `json`.
enum Asked {
    /// Ready or not, and the report.
    Report(bool, String),
    /// podinit's `busy` line.
    Busy(String),
}

fn ask(path: &Path, format: Format) -> std::io::Result<Asked> {
    let stream = StdUnixStream::connect(path)?;
    let (head, reader) = exchange(stream, format.request(), Some(DEADLINE))?;
    if let Some(line) = busy(&head) {
        return Ok(Asked::Busy(line.to_owned()));
    }
    let ready = match head.trim() {
        "ready" => true,
        "not ready" => false,
        _ => return Err(std::io::Error::other("not a podinit status answer")),
    };
    let mut body = String::new();
    reader.take(1 << 20).read_to_string(&mut body)?;
    Ok(Asked::Report(ready, body))
}
