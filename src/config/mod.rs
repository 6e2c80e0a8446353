//! The configuration layer: the TOML file into the validated model of the pod.
//! It reads files (the config, `env_file`, /etc/passwd) but starts nothing.
//!
//! - `raw`: serde shapes that mirror the file, field for field;
//! - `validate`: every rule between values, into the model, each error with
//!   file:line:col and key (`locate`), all at once (of the shape errors of
//!   `raw`, the first of each table: serde stops at a table's first);
//! - `model`: the validated types every other layer reads, with the one list of
//!   names of each enum (the lifecycle crate's `spec`); `signal`: which
//!   signals podinit forwards (the signal type is the lifecycle crate's);
//! - `envfile`, `users`: `env_file` and `user` lookups; `schedule`: cron
//!   expressions, time zones and scheduled entries' next run times (the
//!   runtime's timers read it too);
//! - `plan`: the start plan that `podinit check` prints; `lint`: its
//!   warnings, about what is valid but most likely a mistake.
//!
//! docs/reference.md, "Configuration", documents the keys.

pub mod envfile;
pub mod lint;
pub mod locate;
pub mod plan;
pub mod raw;
pub mod schedule;
pub mod signal;
pub mod users;
pub mod validate;

/// The JSON Schema of the configuration file (`podinit schema`): the file
/// docs/podinit.schema.json itself. `tests/docs.rs` checks it against the
/// config reader's keys and checks every example against it.
pub const SCHEMA: &str = include_str!("../../docs/podinit.schema.json");

// The validated model is the lifecycle crate's: `model` is its name here.
pub use model::*;
use podinit_lifecycle::spec as model;
pub use signal::Signal;
pub use validate::{
    check_name, from_source, load, protect_sidecars_from_oom, ConfigError, ConfigIssue, LoadOptions, Source,
};
