//! podinit's own messages: one line per event on stderr (SPEC §4), never stdout.
//!
//! `text` (default): `podinit | message`, with `warning: ` or `error: ` in front
//! where it applies. `json` (`--log-format json`, `PODINIT_LOG_FORMAT`): one
//! object per line with the fields of the children's JSON lines (`time`,
//! `process`, `stream` = `"podinit"`, `line`) plus `level`, `event`, and `pid`,
//! `status`, `signal`... where the event has them. `PODINIT_LOG` (error, warn,
//! info, debug; default info) sets how much. A level filter of our own rather
//! than tracing-subscriber's `env-filter`, which would add ~540 KB to the static
//! binary (STYLE.md).

use std::fmt::{self, Write as _};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::Layer;

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

/// The fields of one event.
#[derive(Default)]
struct Fields {
    message: String,
    process: Option<String>,
    /// Every other field, in order, as (name, JSON value).
    extra: Vec<(&'static str, String)>,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        match field.name() {
            "message" => {
                let _ = write!(self.message, "{value:?}");
            }
            name => {
                let mut quoted = Vec::new();
                crate::output::json_string(&format!("{value:?}"), &mut quoted);
                self.extra.push((name, String::from_utf8_lossy(&quoted).into_owned()));
            }
        }
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "message" => self.message.push_str(value),
            "process" => self.process = Some(value.to_owned()),
            name => {
                let mut quoted = Vec::new();
                crate::output::json_string(value, &mut quoted);
                self.extra.push((name, String::from_utf8_lossy(&quoted).into_owned()));
            }
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

impl<S: Subscriber> Layer<S> for Writer {
    fn enabled(&self, metadata: &tracing::Metadata<'_>, _: Context<'_, S>) -> bool {
        *metadata.level() <= self.level
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let mut f = Fields::default();
        event.record(&mut f);
        let level = *event.metadata().level();
        let line = match self.format {
            LogFormat::Text => {
                let tag = match level {
                    Level::ERROR => "error: ",
                    Level::WARN => "warning: ",
                    _ => "",
                };
                format!("podinit | {tag}{}\n", f.message)
            }
            LogFormat::Json => {
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
        };
        // Queued, never written here: a stderr nobody reads must not block
        // the caller (the event loop), and lines from podinit and its
        // children never mix.
        crate::output::write_log_line(line.as_bytes());
    }
}

/// Installs the logger at `PODINIT_LOG`'s level, else `default`. An unknown
/// `PODINIT_LOG` value is reported once and `default` used.
pub fn init(format: LogFormat, default: Level) {
    let value = std::env::var("PODINIT_LOG").unwrap_or_default();
    let level = if value.trim().is_empty() { Some(default) } else { parse_level(&value) };
    let subscriber = tracing_subscriber::registry().with(Writer { format, level: level.unwrap_or(default) });
    let _ = tracing::subscriber::set_global_default(subscriber);
    if level.is_none() {
        tracing::warn!("PODINIT_LOG={value:?} is not one of error, warn, info, debug; using {default}");
    }
}
