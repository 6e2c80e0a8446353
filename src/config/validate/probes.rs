//! The rules of probes and lifecycle hooks: exactly one handler each, the
//! thresholds and durations Kubernetes allows (a `success_threshold` of 1
//! on liveness and startup probes, as the API validation), ports (numbers
//! or `${NAME}` read from podinit's environment), hosts, HTTP headers and
//! paths, `fd` and `log_line`. It checks and builds the model only: it
//! opens no socket and runs no probe.

use std::time::Duration;

use toml::Spanned;

use super::Validator;
use crate::config::raw::{RawHook, RawHttpGet, RawLogLine, RawPort, RawProbe};
use crate::config::{
    Argv, HookSpec, HttpGet, LineMatch, LogMode, Pattern, ProbeAction, ProbeKind, ProbeSpec, Scheme,
};

/// Highest descriptor an `fd` probe may name.
pub const MAX_NOTIFICATION_FD: i32 = 1023;

impl Validator<'_> {
    /// A probe of `kind` on an entry whose output is `log`.
    pub(super) fn probe(&mut self, s: Spanned<RawProbe>, kind: ProbeKind, log: LogMode) -> ProbeSpec {
        let single_success = kind != ProbeKind::Readiness;
        let at = s.span().start;
        let p = s.into_inner();
        let handlers = [
            p.exec.is_some(),
            p.tcp_socket.is_some(),
            p.http_get.is_some(),
            p.grpc.is_some(),
            p.notify.is_some(),
            p.fd.is_some(),
            p.log_line.is_some(),
        ];
        let count = handlers.iter().filter(|&&h| h).count();
        if count != 1 {
            self.at(
                at,
                format!("a probe needs exactly one of exec, tcp_socket, http_get, grpc, notify, fd, log_line (found {count})"),
            );
        }
        let action = if let Some(e) = p.exec {
            ProbeAction::Exec { argv: self.exec(e) }
        } else if let Some(t) = p.tcp_socket {
            let port = self.port(t.port);
            let host = self.host(t.host, at);
            ProbeAction::TcpSocket { host, port }
        } else if let Some(h) = p.http_get {
            ProbeAction::HttpGet(self.http_get(h))
        } else if let Some(g) = p.grpc {
            if !cfg!(feature = "grpc") {
                self.at(
                    at,
                    "grpc probes need the `grpc` feature, which this podinit was built without".into(),
                );
            }
            let port = self.port(g.port);
            ProbeAction::Grpc { host: "127.0.0.1".into(), port, service: g.service.unwrap_or_default() }
        } else if let Some(n) = p.notify {
            if !n.get_ref() {
                self.at(n.span().start, "notify must be true (leave the probe out to have none)".into());
            }
            ProbeAction::Notify
        } else if let Some(fd) = p.fd {
            self.push_kind(fd.span().start, "fd", kind);
            let n = *fd.get_ref();
            let fd = i32::try_from(n).ok().filter(|n| (3..=MAX_NOTIFICATION_FD).contains(n)).unwrap_or_else(|| {
                self.at(fd.span().start, format!("must be a descriptor from 3 to {MAX_NOTIFICATION_FD} (found {n}; 0-2 are stdin, stdout and stderr)"));
                3
            });
            ProbeAction::Fd { fd }
        } else if let Some(l) = p.log_line {
            self.push_kind(l.span().start, "log_line", kind);
            if log == LogMode::Raw {
                self.at(l.span().start, "log_line needs the entry's output to pass through podinit (log = \"prefixed\" or \"json\"; raw output does not)".into());
            }
            ProbeAction::LogLine(self.log_line(l))
        } else {
            ProbeAction::Exec { argv: Argv::program_only(String::new()) }
        };
        // Kubernetes' defaults live in ProbeSpec::new alone.
        let defaults = ProbeSpec::new(action);
        let mut positive = |v: Option<Spanned<u32>>, default: u32, key: &str| match v {
            Some(n) if *n.get_ref() == 0 => {
                self.at(n.span().start, format!("{key} must be at least 1"));
                default
            }
            Some(n) => n.into_inner(),
            None => default,
        };
        let success_span = p.success_threshold.as_ref().map(|s| (s.span().start, *s.get_ref()));
        let success_threshold =
            positive(p.success_threshold, defaults.success_threshold, "success_threshold");
        let failure_threshold =
            positive(p.failure_threshold, defaults.failure_threshold, "failure_threshold");
        if single_success {
            if let Some((at, n)) = success_span.filter(|&(_, n)| n != 1) {
                self.at(at, format!("success_threshold must be 1 on liveness and startup probes (found {n}), as in Kubernetes"));
            }
        }
        let mut nonzero =
            |d: Option<Spanned<crate::config::raw::RawDuration>>, default: Duration, key: &str| match d {
                Some(d) if d.get_ref().0.is_zero() => {
                    self.at(d.span().start, format!("{key} must be more than 0"));
                    default
                }
                Some(d) => d.into_inner().0,
                None => default,
            };
        let period = nonzero(p.period, defaults.period, "period");
        let timeout = nonzero(p.timeout, defaults.timeout, "timeout");
        let termination_grace_period = match p.termination_grace_period {
            Some(d) if !single_success => {
                self.at(
                    d.span().start,
                    "termination_grace_period is allowed on liveness and startup probes only".into(),
                );
                None
            }
            Some(d) => Some(d.into_inner().0),
            None => None,
        };
        ProbeSpec {
            initial_delay: p.initial_delay.map_or(defaults.initial_delay, |d| d.0),
            period,
            timeout,
            success_threshold,
            failure_threshold,
            termination_grace_period,
            ..defaults
        }
    }

    /// `fd` and `log_line` say "ready" once: they serve startup and readiness
    /// probes, never liveness.
    fn push_kind(&mut self, at: usize, handler: &str, kind: ProbeKind) {
        if kind == ProbeKind::Liveness {
            self.at(at, format!("{handler} serves startup and readiness probes only: it says \"ready\" once and cannot say \"still alive\" (use notify, whose WATCHDOG=1 can)"));
        }
    }

    /// `log_line = { contains }` or `{ regex }`: exactly one, not empty.
    fn log_line(&mut self, l: Spanned<RawLogLine>) -> LineMatch {
        let at = l.span().start;
        match l.into_inner() {
            RawLogLine { contains: Some(text), regex: None } => {
                if text.get_ref().is_empty() {
                    self.at(text.span().start, "must not be empty (every line would match)".into());
                }
                LineMatch::Contains(text.into_inner())
            }
            RawLogLine { contains: None, regex: Some(source) } => {
                match regex_lite::Regex::new(source.get_ref()) {
                    Ok(regex) => LineMatch::Regex(Pattern { source: source.into_inner(), regex }),
                    Err(e) => {
                        let first = e
                            .to_string()
                            .lines()
                            .find(|l| !l.trim().is_empty())
                            .unwrap_or_default()
                            .to_owned();
                        self.at(source.span().start, format!("not a regular expression: {}", first.trim()));
                        LineMatch::Contains(source.into_inner())
                    }
                }
            }
            _ => {
                self.at(at, "log_line needs exactly one of contains, regex".into());
                LineMatch::Contains(String::new())
            }
        }
    }

    pub(super) fn hook(&mut self, h: Spanned<RawHook>) -> HookSpec {
        let at = h.span().start;
        let h = h.into_inner();
        let count =
            [h.exec.is_some(), h.http_get.is_some(), h.sleep.is_some()].iter().filter(|&&x| x).count();
        if count != 1 {
            self.at(at, format!("a hook needs exactly one of exec, http_get, sleep (found {count})"));
        }
        if let Some(e) = h.exec {
            HookSpec::Exec { argv: self.exec(e) }
        } else if let Some(g) = h.http_get {
            HookSpec::HttpGet(self.http_get(g))
        } else {
            HookSpec::Sleep(h.sleep.map_or(Duration::ZERO, |d| d.0))
        }
    }

    /// A probe's port: a number 1-65535, or `"${NAME}"` / `"${NAME:-default}"`
    /// read from podinit's own environment (the one every command inherits).
    fn port(&mut self, p: Spanned<RawPort>) -> u16 {
        let at = p.span().start;
        let in_range = |n: i64| u16::try_from(n).ok().filter(|&n| n != 0);
        let port = match p.into_inner() {
            RawPort::Number(n) => in_range(n).ok_or_else(|| format!("must be 1-65535 (found {n})")),
            RawPort::Env(text) => port_from_env(&text, |name| std::env::var(name).ok()).and_then(|value| {
                value
                    .trim()
                    .parse()
                    .ok()
                    .and_then(in_range)
                    .ok_or_else(|| format!("must be 1-65535 (found {value:?}, from {text:?})"))
            }),
        };
        port.unwrap_or_else(|message| {
            self.at(at, message);
            0
        })
    }

    /// `host` of a probe: 127.0.0.1 by default; an empty one is an error.
    fn host(&mut self, host: Option<String>, at: usize) -> String {
        match host {
            Some(h) if h.trim().is_empty() || h.chars().any(|c| c.is_whitespace() || c.is_control()) => {
                self.at(at, format!("host {h:?} is not a host name or address"));
                h
            }
            Some(h) => h,
            None => "127.0.0.1".into(),
        }
    }

    fn http_get(&mut self, h: RawHttpGet) -> HttpGet {
        let at = h.port.span().start;
        let headers_at = h.headers.as_ref().map_or(at, |hs| hs.span().start);
        for (name, value) in h.headers.iter().flat_map(|hs| hs.get_ref()) {
            // RFC 9110 field names are tokens; a value must not end the line.
            let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if name.is_empty() || !name.chars().all(token) {
                self.at(headers_at, format!("header name {name:?} is not a valid HTTP field name"));
            }
            if value.contains(['\r', '\n', '\0']) {
                self.at(headers_at, format!("header {name:?}: the value must not contain CR, LF or NUL"));
            }
        }
        if let Some(path) = &h.path {
            if path.contains(|c: char| c.is_whitespace() || c.is_control()) {
                self.at(at, format!("path {path:?} must not contain spaces or control characters"));
            }
        }
        let host = self.host(h.host, at);
        let port = self.port(h.port);
        let path = h.path.unwrap_or_else(|| "/".into());
        let path = if path.starts_with('/') { path } else { format!("/{path}") };
        HttpGet {
            host,
            port,
            path,
            scheme: h.scheme.map_or(Scheme::Http, |s| {
                if *s.get_ref() == Scheme::Https && !cfg!(feature = "https") {
                    self.at(
                        s.span().start,
                        "https needs the `https` feature, which this podinit was built without".into(),
                    );
                }
                s.into_inner()
            }),
            headers: h.headers.map(Spanned::into_inner).unwrap_or_default().into_iter().collect(),
        }
    }
}

/// Resolves a port written as `"${NAME}"` or `"${NAME:-default}"` (the whole
/// string; the default is used when NAME is unset or empty, as in a POSIX
/// shell) through `lookup`.
///
/// # Errors
/// A message for any other text, a name that is not `[A-Za-z_][A-Za-z0-9_]*`,
/// or an unset variable without a default.
pub(super) fn port_from_env(text: &str, lookup: impl Fn(&str) -> Option<String>) -> Result<String, String> {
    let usage =
        || format!("port {text:?} is neither a number nor \"${{VARIABLE}}\" or \"${{VARIABLE:-default}}\"");
    let inner = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')).ok_or_else(usage)?;
    let (name, default) = match inner.split_once(":-") {
        Some((name, default)) => (name, Some(default)),
        None => (inner, None),
    };
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric());
    if !valid {
        return Err(usage());
    }
    match (lookup(name).filter(|v| !v.is_empty()), default) {
        (Some(value), _) => Ok(value),
        (None, Some(default)) => Ok(default.to_owned()),
        (None, None) => {
            Err(format!("port {text:?}: {name} is not set (write \"${{{name}:-8080}}\" for a default)"))
        }
    }
}
