//! Serde types that mirror the TOML file, field for field, and nothing else.
//!
//! This module owns the *shape* of the file: unknown keys are refused here
//! (`deny_unknown_fields` on every table, nested ones included), and values that
//! cannot even be read (a duration without a unit, an unknown signal name, a role
//! that does not exist) fail here with the span toml gives them. Every rule that
//! relates one value to another lives in `validate.rs`; this file has no logic
//! beyond reading scalars. Values that `validate.rs` must point at keep their `Spanned` wrapper
//! so that its errors can name a line and column too.

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;
use toml::Spanned;

use super::model::{Completion, HoldUntil, LogMode, Operator, RestartPolicy, Role, RuleAction, Scheme};
use super::signal::Signal;

/// The whole file: an optional `[pod]` table and the `[[process]]` array.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a podinit config")]
pub struct RawConfig {
    pub pod: Option<RawPod>,
    #[serde(default)]
    pub process: Vec<Spanned<RawProcess>>,
}

/// `[pod]`: settings shared by every entry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "the [pod] table")]
pub struct RawPod {
    pub restart_policy: Option<RestartPolicy>,
    pub termination_grace_period: Option<Spanned<RawDuration>>,
    pub completion: Option<Completion>,
    pub backoff: Option<RawBackoff>,
    pub log: Option<LogMode>,
    pub status_socket: Option<Spanned<String>>,
    pub http: Option<Spanned<String>>,
    pub active_deadline: Option<Spanned<RawDuration>>,
}

/// `[pod] backoff = { initial, max, reset_after }`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a backoff table")]
pub struct RawBackoff {
    pub initial: Option<Spanned<RawDuration>>,
    pub max: Option<Spanned<RawDuration>>,
    pub reset_after: Option<Spanned<RawDuration>>,
}

/// One `[[process]]` table.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a process table")]
pub struct RawProcess {
    pub name: Option<Spanned<String>>,
    pub role: Option<Spanned<Role>>,
    pub command: Option<Spanned<RawCommand>>,
    pub env: Option<BTreeMap<String, String>>,
    pub env_file: Option<Spanned<String>>,
    pub working_dir: Option<Spanned<String>>,
    pub user: Option<Spanned<String>>,
    pub hold_until: Option<Spanned<HoldUntil>>,
    pub stop_signal: Option<RawSignal>,
    pub log: Option<LogMode>,
    pub startup_probe: Option<Spanned<RawProbe>>,
    pub readiness_probe: Option<Spanned<RawProbe>>,
    pub liveness_probe: Option<Spanned<RawProbe>>,
    pub post_start: Option<Spanned<RawHook>>,
    pub pre_stop: Option<Spanned<RawHook>>,
    pub oom_score_adj: Option<Spanned<i32>>,
    pub no_new_privileges: Option<bool>,
    pub max_restarts: Option<Spanned<u32>>,
    pub restart_policy: Option<Spanned<RestartPolicy>>,
    pub restart_rules: Option<Spanned<Vec<Spanned<RawRestartRule>>>>,
    pub restart_during_termination: Option<Spanned<bool>>,
}

/// One of `restart_rules`: `{ action, exit_codes = { operator, values } }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a restart rule table")]
pub struct RawRestartRule {
    pub action: RuleAction,
    pub exit_codes: RawExitCodes,
}

/// `exit_codes = { operator = "in" | "not_in", values = [...] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an exit_codes table")]
pub struct RawExitCodes {
    pub operator: Operator,
    pub values: Spanned<Vec<Spanned<i64>>>,
}

/// A probe table: exactly one handler plus the Kubernetes timing fields.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a probe table")]
pub struct RawProbe {
    pub exec: Option<RawExec>,
    pub tcp_socket: Option<RawTcpSocket>,
    pub http_get: Option<RawHttpGet>,
    pub grpc: Option<RawGrpc>,
    pub notify: Option<Spanned<bool>>,
    pub fd: Option<Spanned<i64>>,
    pub log_line: Option<Spanned<RawLogLine>>,
    pub initial_delay: Option<RawDuration>,
    pub period: Option<Spanned<RawDuration>>,
    pub timeout: Option<Spanned<RawDuration>>,
    pub success_threshold: Option<Spanned<u32>>,
    pub failure_threshold: Option<Spanned<u32>>,
    pub termination_grace_period: Option<Spanned<RawDuration>>,
}

/// A lifecycle hook table (`post_start`, `pre_stop`): exactly one handler.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a hook table")]
pub struct RawHook {
    pub exec: Option<RawExec>,
    pub http_get: Option<RawHttpGet>,
    pub sleep: Option<RawDuration>,
}

/// `exec = { command = [...] }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an exec table")]
pub struct RawExec {
    pub command: Spanned<RawCommand>,
}

/// `tcp_socket = { port, host? }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a tcp_socket table")]
pub struct RawTcpSocket {
    pub port: Spanned<RawPort>,
    pub host: Option<String>,
}

/// `http_get = { port, path?, host?, scheme?, headers? }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "an http_get table")]
pub struct RawHttpGet {
    pub port: Spanned<RawPort>,
    pub path: Option<String>,
    pub host: Option<String>,
    pub scheme: Option<Spanned<Scheme>>,
    pub headers: Option<Spanned<BTreeMap<String, String>>>,
}

/// `log_line = { contains }` or `{ regex }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a log_line table")]
pub struct RawLogLine {
    pub contains: Option<Spanned<String>>,
    pub regex: Option<Spanned<String>>,
}

/// `grpc = { port, service? }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a grpc table")]
pub struct RawGrpc {
    pub port: Spanned<RawPort>,
    pub service: Option<String>,
}

/// A probe's port: a number, or a string that names an environment variable
/// of podinit (`"${PORT}"`, `"${PORT:-8080}"`), resolved when the file is read
/// (docs/configuration.md, "Ports from the environment").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawPort {
    Number(i64),
    Env(String),
}

impl<'de> Deserialize<'de> for RawPort {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawPort;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a port number or \"${VARIABLE}\" / \"${VARIABLE:-default}\"")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<RawPort, E> {
                Ok(RawPort::Number(n))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<RawPort, E> {
                Ok(RawPort::Number(i64::try_from(n).unwrap_or(i64::MAX)))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawPort, E> {
                Ok(RawPort::Env(s.to_owned()))
            }
        }
        d.deserialize_any(V)
    }
}

/// A command: an array is exec'd as it is, a string is run by `/bin/sh -c`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawCommand {
    Argv(Vec<String>),
    Shell(String),
}

impl<'de> Deserialize<'de> for RawCommand {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawCommand;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an array of strings or a shell command string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawCommand, E> {
                Ok(RawCommand::Shell(s.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawCommand, A::Error> {
                let mut argv = Vec::new();
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                Ok(RawCommand::Argv(argv))
            }
        }
        d.deserialize_any(V)
    }
}

/// Longest duration accepted anywhere: ten years (a longer one cannot be
/// added to the clock safely, and no timer needs it).
pub const MAX_DURATION: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

fn capped<E: de::Error>(d: Duration, shown: &dyn fmt::Display) -> Result<RawDuration, E> {
    if d > MAX_DURATION {
        Err(E::custom(format!("duration {shown} is too long (at most 10 years)")))
    } else {
        Ok(RawDuration(d))
    }
}

/// A duration: a string with a unit (`"250ms"`, `"10s"`, `"2m"`, read by humantime)
/// or an integer number of seconds, as Kubernetes' `*Seconds` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDuration(pub Duration);

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"250ms\", \"10s\", \"2m\", or whole seconds")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<RawDuration, E> {
                let secs = u64::try_from(n)
                    .map_err(|_| E::custom(format!("invalid duration {n}: must not be negative")))?;
                capped(Duration::from_secs(secs), &n)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<RawDuration, E> {
                capped(Duration::from_secs(n), &n)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawDuration, E> {
                let d = humantime::parse_duration(s.trim()).map_err(|e| {
                    E::custom(format!("invalid duration {s:?}: {e} (write e.g. \"250ms\", \"10s\", \"2m\")"))
                })?;
                capped(d, &format_args!("{s:?}"))
            }
        }
        d.deserialize_any(V)
    }
}

/// A signal given by name (`"SIGTERM"`, `"TERM"`, `"SIGRTMIN+3"`, any case) or
/// by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawSignal(pub Signal);

impl<'de> Deserialize<'de> for RawSignal {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawSignal;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a signal name such as \"SIGTERM\" or a signal number")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<RawSignal, E> {
                i32::try_from(n)
                    .ok()
                    .and_then(Signal::new)
                    .map(RawSignal)
                    .ok_or_else(|| E::custom(format!("unknown signal number {n}")))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawSignal, E> {
                Signal::parse(s).map(RawSignal).ok_or_else(|| {
                    E::custom(format!(
                        "unknown signal name {s:?} (write e.g. \"SIGTERM\", \"SIGQUIT\", \"SIGRTMIN+3\")"
                    ))
                })
            }
        }
        d.deserialize_any(V)
    }
}
