//! The pod-level rules of the config: the `[pod]` table (backoff, grace
//! period, status socket, HTTP address, deadline), names unique across
//! entries, the command after `--` as the main named `main`, at least one
//! main, and no sidecar more OOM-killable than a main. It checks and builds
//! the model only: it starts nothing, and reads no file but
//! /proc/self/oom_score_adj (and that only when there is a sidecar).

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::Validator;
use crate::config::raw::RawConfig;
use crate::config::{
    Argv, BackoffSpec, Completion, EntrySpec, LogMode, PodSpec, RestartPolicy, Role, DEFAULT_GRACE,
};

impl Validator<'_> {
    pub(super) fn pod(&mut self, raw: RawConfig) -> PodSpec {
        let pod = raw.pod.unwrap_or_default();
        let backoff = pod.backoff.unwrap_or_default();
        let defaults = BackoffSpec::default();
        let backoff = BackoffSpec {
            initial: backoff.initial.map_or(defaults.initial, |d| d.into_inner().0),
            max: backoff.max.map_or(defaults.max, |d| d.into_inner().0),
            reset_after: backoff.reset_after.map_or(defaults.reset_after, |d| d.into_inner().0),
        };
        if backoff.initial > backoff.max {
            self.nowhere(format!(
                "pod.backoff: initial ({}) is longer than max ({})",
                humantime::format_duration(backoff.initial),
                humantime::format_duration(backoff.max)
            ));
        }
        if let Some(names) = &pod.allow_warnings {
            self.allow_warnings(names);
        }
        let raw_pod_log = pod.log;
        let log = pod.log.unwrap_or(LogMode::Prefixed);
        let mut entries = Vec::new();
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for p in raw.process {
            let start = p.span().start;
            if let Some(e) = self.entry(p.into_inner(), start, log) {
                if let Some(&first) = seen.get(&e.name) {
                    let line = self.place(first).line;
                    let at = self.name_offset(start);
                    self.at(at, format!("duplicate name {:?} (first used on line {line})", e.name));
                } else {
                    seen.insert(e.name.clone(), self.name_offset(start));
                }
                entries.push(e);
            }
        }
        if !self.opts.command.is_empty() {
            // With no config file at all podinit is a plain init, like `tini --`:
            // the command's output passes untouched (no copy, no prefix).
            let log = if self.src.trim().is_empty() && raw_pod_log.is_none() { LogMode::Raw } else { log };
            if seen.contains_key("main") {
                let at = seen["main"];
                self.at(
                    at,
                    "the name \"main\" is taken by the command given after `--`; rename this entry".into(),
                );
            }
            if let Some(argv) = Argv::new(self.opts.command.clone()) {
                let mut main = EntrySpec::new("main", Role::Main, argv, log);
                main.stop_with_received_signal = true;
                entries.push(main);
            }
        }
        // Read only when there is a sidecar to protect: a plain init has none.
        if entries.iter().any(|e| e.role == Role::Sidecar) {
            protect_sidecars_from_oom(&mut entries, inherited_oom_score_adj());
        }
        if self.issues.is_empty() && !entries.iter().any(|e| e.role == Role::Main) {
            self.nowhere(
                "no main to run: give a [[process]] with role = \"main\" (the default role) or a command after `--`".into(),
            );
        }
        PodSpec {
            restart_policy: pod.restart_policy.unwrap_or(RestartPolicy::Never),
            termination_grace_period: pod
                .termination_grace_period
                .map_or(DEFAULT_GRACE, |d| d.into_inner().0),
            completion: pod.completion.unwrap_or(Completion::All),
            backoff,
            log,
            status_socket: pod.status_socket.and_then(|s| {
                // sun_path holds 108 bytes, the terminating NUL included.
                if s.get_ref().len() > 107 || s.get_ref().is_empty() {
                    self.at(
                        s.span().start,
                        "status_socket must be 1 to 107 bytes long (a Unix socket path)".into(),
                    );
                    None
                } else {
                    Some(PathBuf::from(s.into_inner()))
                }
            }),
            http: pod.http.and_then(|h| {
                let at = h.span().start;
                match h.get_ref().parse::<std::net::SocketAddr>() {
                    Ok(addr) => Some(addr),
                    Err(_) => {
                        self.at(
                            at,
                            format!(
                                "{:?} is not an address and port such as \"0.0.0.0:9090\" or \"[::]:9090\"",
                                h.get_ref()
                            ),
                        );
                        None
                    }
                }
            }),
            active_deadline: pod.active_deadline.and_then(|d| {
                let at = d.span().start;
                let d = d.into_inner().0;
                if d.is_zero() {
                    self.at(at, "active_deadline must be more than 0".into());
                    None
                } else {
                    Some(d)
                }
            }),
            entries,
        }
    }

    /// `allow_warnings`: names of warnings of `podinit check`
    /// ([`crate::config::lint::Lint`]); an unknown one is an error, as an
    /// unknown key is.
    pub(super) fn allow_warnings(&mut self, names: &toml::Spanned<Vec<toml::Spanned<String>>>) {
        for name in names.get_ref() {
            if crate::config::lint::Lint::from_name(name.get_ref()).is_none() {
                self.at(
                    name.span().start,
                    format!(
                        "unknown warning {:?} (the warnings are {})",
                        name.get_ref(),
                        crate::config::lint::Lint::names()
                    ),
                );
            }
        }
    }

    /// Offset of the `name` value of the process table at `start`, for messages.
    fn name_offset(&self, start: usize) -> usize {
        self.src[start..].find("name").map_or(start, |i| start + i)
    }
}

/// podinit's own `oom_score_adj`, which children inherit (0 when unreadable).
fn inherited_oom_score_adj() -> i32 {
    crate::procfs::read("/proc/self/oom_score_adj").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

/// Lowers each sidecar's `oom_score_adj` to the lowest of the mains' when it
/// would otherwise be higher, so that a sidecar is never more likely to be
/// OOM-killed than a main (KEP-753 "sidecar containers" OOM adjustment, issue
/// kubernetes#111356). `inherited` is what an entry without a setting gets.
pub fn protect_sidecars_from_oom(entries: &mut [EntrySpec], inherited: i32) {
    let lowest_main =
        entries.iter().filter(|e| e.role == Role::Main).map(|e| e.oom_score_adj.unwrap_or(inherited)).min();
    let Some(lowest_main) = lowest_main else { return };
    for e in entries.iter_mut().filter(|e| e.role == Role::Sidecar) {
        if e.oom_score_adj.unwrap_or(inherited) > lowest_main {
            e.oom_score_adj = Some(lowest_main);
        }
    }
}
