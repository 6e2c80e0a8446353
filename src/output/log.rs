//! podinit's own messages: one line per event on stderr, never stdout, through
//! a bounded queue that never blocks the caller.
//!
//! `text` (default): `podinit | message`, with `warning: ` or `error: ` in front
//! where it applies. `json` (`--log-format json`, `PODINIT_LOG_FORMAT`): one
//! object per line with the fields of the children's JSON lines (`time`,
//! `process`, `stream` = `"podinit"`, `line`) plus `level`, `event`, and `pid`,
//! `status`, `signal`... where the event has them. `PODINIT_LOG` (error, warn,
//! info, debug; default info) sets how much.
//!
//! The writer is the `tracing` subscriber itself (`Writer`): podinit's
//! messages and those of the libraries it uses (h2, rustls) carry no span
//! context, so it keeps no span registry. tracing-subscriber's registry and
//! its `env-filter` would add about 14 KB and 540 KB to the static binary
//! (docs/development.md, "Measured choices").

use std::fmt::{self, Write as _};

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// The format of podinit's own messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum LogFormat {
    /// `podinit | message`.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Reads a `PODINIT_LOG` value; `None` when it is not a level name.
pub fn parse_level(value: &str) -> Option<Level> {
    match value.trim().to_ascii_lowercase().as_str() {
        "error" => Some(Level::ERROR),
        "warn" | "warning" => Some(Level::WARN),
        "info" => Some(Level::INFO),
        "debug" | "trace" => Some(Level::DEBUG),
        _ => None,
    }
}

/// The fields of one message: from a `tracing` event ([`Visit`]), or from
/// one of the lifecycle's notes ([`write_note`]), which do not pass through
/// `tracing`.
#[derive(Default)]
struct Fields {
    message: String,
    process: Option<String>,
    /// Every other field, in order, as (name, JSON value).
    extra: Vec<(&'static str, String)>,
}

impl Fields {
    fn string(&mut self, name: &'static str, value: &str) {
        let mut quoted = Vec::new();
        crate::output::json_string(value, &mut quoted);
        self.extra.push((name, String::from_utf8_lossy(&quoted).into_owned()));
    }
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            name => self.string(name, &format!("{value:?}")),
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            "process" => self.process = Some(value.to_owned()),
            name => self.string(name, value),
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.extra.push((field.name(), value.to_string()));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.extra.push((field.name(), value.to_string()));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.extra.push((field.name(), value.to_string()));
    }
}

struct Writer {
    format: LogFormat,
    level: Level,
}

/// The JSON line of one message: the fields of a child's JSON line plus
/// `level` and the event's own fields.
fn json_of(f: &Fields, level: Level) -> String {
    let mut out = Vec::with_capacity(200);
    let process = f.process.as_deref().unwrap_or("podinit");
    crate::output::json_line(process, "podinit", f.message.as_bytes(), &mut out);
    out.pop(); // the newline
    out.pop(); // the closing brace
    let mut tail = format!(",\"level\":\"{}\"", level.as_str().to_ascii_lowercase());
    for (name, value) in &f.extra {
        let _ = write!(tail, ",\"{name}\":{value}");
    }
    tail.push_str("}\n");
    out.extend_from_slice(tail.as_bytes());
    String::from_utf8_lossy(&out).into_owned()
}

/// Lines a `podinit events` reader may have waiting before it counts as too
/// slow and is dropped.
pub const EVENTS_QUEUE: usize = 1024;

/// The readers of `podinit events`.
static TAPS: Mutex<Vec<tokio::sync::mpsc::Sender<String>>> = Mutex::new(Vec::new());
/// Whether [`TAPS`] is not empty (read without the lock on every message).
static TAPPED: AtomicBool = AtomicBool::new(false);

/// A new reader of the lifecycle events: every message of podinit's with an
/// `event` field, as its JSON line, whatever `PODINIT_LOG` and the log format
/// say. A reader that lets [`EVENTS_QUEUE`] lines pile up is dropped (its
/// channel closes): it never slows podinit.
pub fn tap_events() -> tokio::sync::mpsc::Receiver<String> {
    let (tx, rx) = tokio::sync::mpsc::channel(EVENTS_QUEUE);
    if CLOSED.load(Ordering::SeqCst) {
        return rx;
    }
    if let Ok(mut taps) = TAPS.lock() {
        taps.push(tx);
        TAPPED.store(true, Ordering::Relaxed);
    }
    rx
}

/// podinit is exiting: every events reader gets what is queued for it, then
/// the end of its stream (not the "dropped" line of a slow reader).
static CLOSED: AtomicBool = AtomicBool::new(false);
/// Events streams still writing.
static STREAMS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Ends every events stream once it has written what is queued for it.
pub fn close_events() {
    CLOSED.store(true, Ordering::SeqCst);
    if let Ok(mut taps) = TAPS.lock() {
        taps.clear();
    }
    TAPPED.store(false, Ordering::Relaxed);
}

/// Whether [`close_events`] ended the streams (else a reader was dropped).
pub fn events_closed() -> bool {
    CLOSED.load(Ordering::SeqCst)
}

/// Counts one events stream while it lives; see [`streams_open`].
#[derive(Debug)]
pub struct StreamGuard(());

impl StreamGuard {
    pub fn new() -> StreamGuard {
        STREAMS.fetch_add(1, Ordering::SeqCst);
        StreamGuard(())
    }
}

impl Default for StreamGuard {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        STREAMS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How many events streams are still writing.
pub fn streams_open() -> usize {
    STREAMS.load(Ordering::SeqCst)
}

/// Gives `line` to every events reader; drops the slow and the gone.
fn publish(line: &str) {
    let Ok(mut taps) = TAPS.lock() else { return };
    let before = taps.len();
    taps.retain(|tx| tx.try_send(line.to_owned()).is_ok());
    if taps.len() < before {
        // Not through tracing: this runs inside its subscriber.
        write_log_line(b"podinit | warning: an events reader was too slow or went away; it is dropped\n");
    }
    TAPPED.store(!taps.is_empty(), Ordering::Relaxed);
}

/// Spans are not kept: every span gets the same id and entering, leaving
/// or recording one does nothing, which `tracing` allows for a subscriber
/// that does not look at them.
impl Subscriber for Writer {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Not cached as "never" for info messages: an events reader may come.
        if *metadata.level() <= self.level {
            Interest::always()
        } else if *metadata.level() <= Level::INFO {
            Interest::sometimes()
        } else {
            Interest::never()
        }
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        // Info messages are wanted whatever the level while an events
        // reader listens (see `enabled`).
        Some(LevelFilter::from_level(self.level.max(Level::INFO)))
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // Lifecycle events (info and above) are needed by events readers even
        // when PODINIT_LOG is quieter.
        *metadata.level() <= self.level
            || (*metadata.level() <= Level::INFO && TAPPED.load(Ordering::Relaxed))
    }

    fn new_span(&self, _: &span::Attributes<'_>) -> span::Id {
        span::Id::from_u64(1)
    }

    fn record(&self, _: &span::Id, _: &span::Record<'_>) {}

    fn record_follows_from(&self, _: &span::Id, _: &span::Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut f = Fields::default();
        event.record(&mut f);
        emit(&f, *event.metadata().level(), self.level, self.format);
    }

    fn enter(&self, _: &span::Id) {}

    fn exit(&self, _: &span::Id) {}
}

/// Writes one message: to every events reader when it has an `event` field,
/// and to podinit's log when `level` passes `max` (PODINIT_LOG).
fn emit(f: &Fields, level: Level, max: Level, format: LogFormat) {
    if TAPPED.load(Ordering::Relaxed) && f.extra.iter().any(|(name, _)| *name == "event") {
        publish(&json_of(f, level));
    }
    if level > max {
        return;
    }
    let line = match format {
        LogFormat::Text => {
            let tag = match level {
                Level::ERROR => "error: ",
                Level::WARN => "warning: ",
                _ => "",
            };
            format!("podinit | {tag}{}\n", f.message)
        }
        LogFormat::Json => json_of(f, level),
    };
    // Queued, never written here: a stderr nobody reads must not block
    // the caller (the event loop), and lines from podinit and its
    // children never mix.
    write_log_line(line.as_bytes());
}

/// The level and format [`init`] set, for the notes that do not pass through
/// `tracing`; `None` before it (nothing is logged then, as without a
/// subscriber).
static SETTINGS: Mutex<Option<(Level, LogFormat)>> = Mutex::new(None);

/// Writes one of the lifecycle's notes to podinit's log and its events
/// readers, straight from its data: `process` is the entry's name, `fields`
/// the note's (name, value) pairs in the order the JSON line gives them,
/// `text` its sentence, rendered here only once the level passes (a debug
/// note under `PODINIT_LOG=info` is never rendered). The same line, text or
/// JSON, as any other message of podinit's; a note takes no round trip
/// through `tracing`.
pub fn write_note(
    level: Level,
    process: Option<&str>,
    fields: &[(&'static str, NoteValue<'_>)],
    text: &dyn fmt::Display,
) {
    let Some((max, format)) = SETTINGS.lock().ok().and_then(|s| *s) else { return };
    // Quieter than both the log and an events reader needs: nothing to do.
    if level > max && !(level <= Level::INFO && TAPPED.load(Ordering::Relaxed)) {
        return;
    }
    let mut f = Fields { message: text.to_string(), process: process.map(str::to_owned), extra: Vec::new() };
    for &(name, value) in fields {
        match value {
            NoteValue::Text(v) => f.string(name, v),
            NoteValue::Number(n) => f.extra.push((name, n.to_string())),
        }
    }
    emit(&f, level, max, format);
}

/// One field of a note as [`write_note`] takes it.
#[derive(Debug, Clone, Copy)]
pub enum NoteValue<'a> {
    /// Written as a JSON string.
    Text(&'a str),
    /// Written as a JSON number.
    Number(i64),
}

/// Installs the logger at `PODINIT_LOG`'s level, else `default`. An unknown
/// `PODINIT_LOG` value is reported once and `default` used.
pub fn init(format: LogFormat, default: Level) {
    let value = std::env::var("PODINIT_LOG").unwrap_or_default();
    let level = if value.trim().is_empty() { Some(default) } else { parse_level(&value) };
    if let Ok(mut settings) = SETTINGS.lock() {
        *settings = Some((level.unwrap_or(default), format));
    }
    let _ = tracing::subscriber::set_global_default(Writer { format, level: level.unwrap_or(default) });
    if level.is_none() {
        tracing::warn!("PODINIT_LOG={value:?} is not one of error, warn, info, debug; using {default}");
    }
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

/// Blocks every signal in the calling thread (a fault such as SIGSEGV is
/// still delivered to the thread that caused it: the kernel forces those).
fn block_all_signals() {
    crate::sys::signal::block_in_thread(&crate::sys::signal::SigSet::full());
}

fn start_log_thread() -> Option<std_mpsc::SyncSender<LogItem>> {
    let (tx, rx) = std_mpsc::sync_channel::<LogItem>(LOG_QUEUE);
    let spawned = std::thread::Builder::new().name("podinit-log".into()).spawn(move || {
        // Started at the first log line, which may come before the signal
        // thread blocks what podinit catches, so it blocks every signal
        // itself: none may wait on this thread, which may sit in a write to a
        // stderr nobody reads.
        block_all_signals();
        for item in rx {
            match item {
                LogItem::Line(line) => {
                    let dropped = LOG_DROPPED.swap(0, Ordering::Relaxed);
                    let _held = STDERR.lock();
                    if dropped > 0 {
                        let note = format!(
                            "podinit | warning: {dropped} of podinit's own log lines were dropped (stderr was not being read)\n"
                        );
                        super::write_all(2, note.as_bytes());
                    }
                    super::write_all(2, &line);
                }
                LogItem::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    });
    spawned.ok().map(|_| tx)
}

/// Takes the lock every writer of descriptor 2 holds around one write.
pub(crate) fn lock_stderr() -> Option<MutexGuard<'static, ()>> {
    STDERR.lock().ok()
}
