//! podinit's own messages: one line per event on stderr, behind `podinit | `
//! (SPEC §4), at the level `PODINIT_LOG` names (error, warn, info, debug;
//! default info). A bare level filter instead of tracing-subscriber's
//! `env-filter`, which would add ~540 KB to the static binary (STYLE.md).

use std::fmt;

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Reads a `PODINIT_LOG` value; `None` when it is not a level name.
pub fn parse_level(value: &str) -> Option<Level> {
    match value.trim().to_ascii_lowercase().as_str() {
        "error" => Some(Level::ERROR),
        "warn" | "warning" => Some(Level::WARN),
        "info" | "" => Some(Level::INFO),
        "debug" | "trace" => Some(Level::DEBUG),
        _ => None,
    }
}

struct Format;

impl<S, N> FormatEvent<S, N> for Format
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, mut w: Writer<'_>, event: &Event<'_>) -> fmt::Result {
        w.write_str("podinit | ")?;
        match *event.metadata().level() {
            Level::ERROR => w.write_str("error: ")?,
            Level::WARN => w.write_str("warning: ")?,
            _ => {}
        }
        ctx.field_format().format_fields(w.by_ref(), event)?;
        writeln!(w)
    }
}

/// Installs the logger. An unknown `PODINIT_LOG` value is reported once and the
/// default (info) used.
pub fn init() {
    let value = std::env::var("PODINIT_LOG").unwrap_or_default();
    let level = parse_level(&value);
    let subscriber = tracing_subscriber::fmt()
        .event_format(Format)
        .with_writer(std::io::stderr)
        .with_max_level(level.unwrap_or(Level::INFO))
        .finish();
    let _ = tracing::subscriber::set_global_default(subscriber);
    if level.is_none() {
        tracing::warn!("PODINIT_LOG={value:?} is not one of error, warn, info, debug; using info");
    }
}
