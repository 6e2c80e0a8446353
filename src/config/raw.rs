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

use super::model::{
    Completion, ConcurrencyPolicy, HoldUntil, LogMode, Operator, RestartPolicy, Role, RuleAction, Scheme,
};
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
    pub allow_warnings: Option<Spanned<Vec<Spanned<String>>>>,
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
    pub allow_warnings: Option<Spanned<Vec<Spanned<String>>>>,
    // Scheduled entries (`role = "scheduled"`).
    pub schedule: Option<Spanned<String>>,
    pub every: Option<Spanned<RawDuration>>,
    pub time_zone: Option<Spanned<String>>,
    pub concurrency_policy: Option<Spanned<ConcurrencyPolicy>>,
    pub starting_deadline: Option<Spanned<RawDuration>>,
    pub suspend: Option<Spanned<bool>>,
    pub run_on_start: Option<Spanned<bool>>,
    pub active_deadline: Option<Spanned<RawDuration>>,
    pub max_concurrent: Option<Spanned<u32>>,
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

/// A duration: a string of numbers with units, Go's and Kubernetes' way
/// (`"250ms"`, `"10s"`, `"1.5s"`, `"2m"`, `"1h30m"`: units `ms`, `s`, `m`,
/// `h`, decimals allowed, no spaces; [`parse_duration`]) or an integer number
/// of seconds, as Kubernetes' `*Seconds` fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawDuration(pub Duration);

impl<'de> Deserialize<'de> for RawDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = RawDuration;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a duration such as \"250ms\", \"10s\", \"1h30m\", or whole seconds")
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<RawDuration, E> {
                let secs = u64::try_from(n)
                    .map_err(|_| E::custom(format!("invalid duration {n}: a duration cannot be negative")))?;
                capped(Duration::from_secs(secs), &n)
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<RawDuration, E> {
                capped(Duration::from_secs(n), &n)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<RawDuration, E> {
                parse_duration(s)
                    .map(RawDuration)
                    .map_err(|why| E::custom(format!("invalid duration {s:?}: {why}")))
            }
        }
        d.deserialize_any(V)
    }
}

/// The units of a duration string, with their length in nanoseconds.
const UNITS: [(&str, u128); 4] =
    [("ms", 1_000_000), ("s", 1_000_000_000), ("m", 60_000_000_000), ("h", 3_600_000_000_000)];

/// Reads a duration string: one or more numbers, each followed by its unit
/// (`ms`, `s`, `m`, `h`), with nothing between them (`"1h30m"`, `"1.5s"`,
/// `"250ms"`), as Go's `time.ParseDuration` reads them (Kubernetes'
/// durations) without its `ns` and `us`, its sign and its unitless `"0"`.
/// Digits after a decimal point count down to the nanosecond.
///
/// # Errors
/// Says what is wrong: a sign, a number without a unit, an unknown unit (the
/// accepted ones listed), more than [`MAX_DURATION`], anything else.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let units = "ms, s, m or h";
    if text.starts_with('-') {
        return Err("a duration cannot be negative".into());
    }
    if text.is_empty() {
        return Err(format!("empty: write a number and a unit ({units}), e.g. \"10s\""));
    }
    let mut nanos: u128 = 0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return Err(format!(
                "not a duration: write numbers with units ({units}), e.g. \"1h30m\", \"1.5s\", \"250ms\""
            ));
        }
        let (whole, after) = rest.split_at(digits);
        let (fraction, after) = match after.strip_prefix('.') {
            Some(f) => {
                let n = f.find(|c: char| !c.is_ascii_digit()).unwrap_or(f.len());
                if n == 0 {
                    return Err(format!("{whole}. needs digits after the point, e.g. \"1.5s\""));
                }
                f.split_at(n)
            }
            None => ("", after),
        };
        let unit_len = after.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(after.len());
        let (unit, after) = after.split_at(unit_len);
        let Some(&(_, per)) = UNITS.iter().find(|(u, _)| *u == unit) else {
            return Err(if unit.is_empty() {
                format!("{whole}{}{fraction} has no unit: write one of {units} (or the number without quotes for whole seconds)", if fraction.is_empty() { "" } else { "." })
            } else {
                format!("unknown unit {unit:?}: the units are {units}")
            });
        };
        // More digits than any ten-year duration needs: too long anyway.
        let whole: u128 =
            if whole.len() > 20 { u128::MAX / 4 } else { whole.parse().unwrap_or(u128::MAX / 4) };
        let mut part = whole.saturating_mul(per);
        let mut scale = per;
        for d in fraction.bytes().take(18) {
            scale /= 10;
            part = part.saturating_add(u128::from(d - b'0') * scale);
        }
        nanos = nanos.saturating_add(part);
        rest = after;
    }
    if nanos > MAX_DURATION.as_nanos() {
        return Err("too long (at most 10 years)".into());
    }
    let secs = u64::try_from(nanos / 1_000_000_000).unwrap_or(u64::MAX);
    let sub = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
    Ok(Duration::new(secs, sub))
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

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_read_as_go_and_kubernetes_write_them() {
        let ms = Duration::from_millis;
        for (text, want) in [
            ("250ms", ms(250)),
            ("10s", ms(10_000)),
            ("1.5s", ms(1500)),
            ("0.5m", ms(30_000)),
            ("2m", ms(120_000)),
            ("1h30m", ms(5_400_000)),
            ("1m30s", ms(90_000)),
            ("1h0m0.25s", ms(3_600_250)),
            ("0s", Duration::ZERO),
            ("1.0000000015s", Duration::new(1, 1)),
        ] {
            assert_eq!(parse_duration(text), Ok(want), "{text}");
        }
    }

    #[test]
    fn other_durations_are_refused_with_the_reason() {
        for (text, why) in [
            ("-5s", "a duration cannot be negative"),
            ("5 sec", "unknown unit \" sec\": the units are ms, s, m or h"),
            ("1d", "unknown unit \"d\": the units are ms, s, m or h"),
            ("5x", "unknown unit \"x\""),
            ("10", "10 has no unit: write one of ms, s, m or h"),
            ("1.5", "1.5 has no unit"),
            ("", "empty"),
            ("s", "not a duration"),
            (" 5s", "not a duration"),
            ("+5s", "not a duration"),
            ("5.s", "needs digits after the point"),
            ("87600h1s", "too long"),
            ("99999999999999999999999h", "too long"),
        ] {
            let err = parse_duration(text).expect_err(text);
            assert!(err.contains(why), "{text:?}: {err:?} does not say {why:?}");
        }
        assert_eq!(parse_duration("87600h"), Ok(super::MAX_DURATION));
    }
}
