//! The rules of one `[[process]]`: its name (a DNS label), role, command,
//! `env` and `env_file`, `working_dir`, `user`, restart settings and
//! `oom_score_adj`, and which keys its role allows (KEP-753: no probes or
//! hooks on an init). Its probes and hooks are `probes`'s. It reads the
//! files an entry names (`env_file`, /etc/passwd, /etc/group) unless the
//! check is portable, and never starts anything.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::{read_text, Validator};
use crate::config::raw::{RawCommand, RawExec, RawProcess, RawRestartRule};
use crate::config::schedule;
use crate::config::{
    Argv, ConcurrencyPolicy, EntrySpec, HoldUntil, LogMode, ProbeAction, ProbeKind, RestartPolicy,
    RestartRule, Role, RuleAction, ScheduleSpec, Signal, When,
};
use std::time::Duration;

/// Most `restart_rules` of one entry, and most exit codes in one rule
/// (the Kubernetes API's limits for container restart rules, KEP-5307).
const MAX_RESTART_RULES: usize = 20;
/// A scheduled entry's `max_restarts` under `restart_policy = "OnFailure"`
/// when it gives none: a Job's default `backoffLimit` (kubernetes.io "Jobs",
/// "Pod backoff failure policy").
const JOB_BACKOFF_LIMIT: u32 = 6;
const MAX_EXIT_CODES: usize = 255;

impl Validator<'_> {
    pub(super) fn entry(&mut self, mut p: RawProcess, start: usize, pod_log: LogMode) -> Option<EntrySpec> {
        let before = self.issues.len();
        let name = match p.name.take() {
            Some(n) => {
                let at = n.span().start;
                let n = n.into_inner();
                if let Err(why) = check_name(&n) {
                    self.at(at, format!("bad name {n:?}: {why}"));
                }
                n
            }
            None => {
                self.at(start, "missing key `name`".into());
                String::new()
            }
        };
        let role = p.role.as_ref().map_or(Role::Main, |r| *r.get_ref());
        let argv = match p.command.take() {
            Some(c) => self.command(c).map(|w| OsString::from(w)),
            None => {
                self.at(start, format!("process {name:?}: missing key `command`"));
                Argv::program_only(OsString::new())
            }
        };
        if role == Role::Init {
            for (key, probe) in [
                ("startup_probe", p.startup_probe.as_ref().map(Spanned::span)),
                ("readiness_probe", p.readiness_probe.as_ref().map(Spanned::span)),
                ("liveness_probe", p.liveness_probe.as_ref().map(Spanned::span)),
                ("post_start", p.post_start.as_ref().map(Spanned::span)),
                ("pre_stop", p.pre_stop.as_ref().map(Spanned::span)),
            ] {
                if let Some(span) = probe {
                    self.at(span.start, format!("{key} is not allowed on an init entry (as in Kubernetes, only sidecars and mains have probes and hooks)"));
                }
            }
            if let Some(h) = &p.hold_until {
                self.at(h.span().start, "hold_until applies to sidecars only".into());
            }
        }
        if role == Role::Main {
            if let Some(h) = &p.hold_until {
                self.at(h.span().start, "hold_until applies to sidecars only".into());
            }
        }
        let role_at = p.role.as_ref().map_or(start, |r| r.span().start);
        let schedule = self.schedule(&mut p, role, role_at, start, &name);
        if let Some(names) = &p.allow_warnings {
            self.allow_warnings(names);
        }
        let log = p.log.unwrap_or(pod_log);
        let startup_probe = p.startup_probe.map(|s| self.probe(s, ProbeKind::Startup, log));
        let liveness_probe = p.liveness_probe.map(|s| self.probe(s, ProbeKind::Liveness, log));
        let readiness_probe = p.readiness_probe.map(|s| self.probe(s, ProbeKind::Readiness, log));
        let fds: Vec<i32> = [&startup_probe, &readiness_probe]
            .into_iter()
            .flatten()
            .filter_map(|p| match p.action {
                ProbeAction::Fd { fd } => Some(fd),
                _ => None,
            })
            .collect();
        if fds.windows(2).any(|w| w[0] != w[1]) {
            self.at(start, format!("process {name:?}: its startup and readiness probes name different notification descriptors ({} and {}); one process has one", fds[0], fds[1]));
        }
        let post_start = p.post_start.map(|h| self.hook(h));
        let pre_stop = p.pre_stop.map(|h| self.hook(h));

        let mut env = Vec::new();
        if let Some(f) = p.env_file.filter(|_| !self.opts.portable) {
            let at = f.span().start;
            // Relative to the config file's directory, as Compose reads env_file.
            let path = match self.dir {
                Some(dir) if Path::new(f.get_ref()).is_relative() => dir.join(f.get_ref()),
                _ => PathBuf::from(f.get_ref()),
            };
            match read_text(&path) {
                Ok(text) => match crate::config::envfile::parse(&text) {
                    Ok(pairs) => env.extend(pairs),
                    Err(e) => self.at(at, format!("env_file {:?}: {e}", f.get_ref())),
                },
                Err(e) => self.at(at, format!("cannot read env_file {:?}: {e}", f.get_ref())),
            }
        }
        for (key, value) in p.env.iter().flatten() {
            // The environment is `KEY=VALUE` C strings: these would be cut or misread.
            if key.is_empty() || key.contains('=') || key.contains('\0') || value.contains('\0') {
                self.at(
                    start,
                    format!("env {key:?}: a name must be non-empty without `=` or NUL, a value without NUL"),
                );
            }
        }
        env.extend(p.env.unwrap_or_default());
        let working_dir = p.working_dir.and_then(|w| {
            let at = w.span().start;
            let dir = PathBuf::from(w.into_inner());
            let seen_from =
                self.opts.start_dir.as_ref().map_or_else(|| dir.clone(), |start| start.join(&dir));
            if seen_from.is_dir() || self.opts.portable {
                Some(dir)
            } else {
                self.at(at, format!("working_dir {:?} is not a directory", dir.display().to_string()));
                None
            }
        });
        let user = p.user.filter(|_| !self.opts.portable).and_then(|u| {
            let at = u.span().start;
            if !self.opts.is_root {
                self.at(at, "`user` needs podinit to run as root (it is not)".into());
                return None;
            }
            match crate::config::users::resolve(
                u.get_ref(),
                Path::new("/etc/passwd"),
                Path::new("/etc/group"),
            ) {
                Ok(user) => Some(user),
                Err(e) => {
                    self.at(at, format!("user {:?}: {e}", u.get_ref()));
                    None
                }
            }
        });
        let restart_policy = p.restart_policy.and_then(|r| {
            if role == Role::Sidecar {
                self.at(
                    r.span().start,
                    "restart_policy is not allowed on a sidecar: it restarts after every exit".into(),
                );
                return None;
            }
            Some(r.into_inner())
        });
        let restart_rules = p.restart_rules.map_or_else(Vec::new, |rules| self.restart_rules(role, rules));
        let restart_during_termination = p.restart_during_termination.is_some_and(|r| {
            if role != Role::Sidecar {
                self.at(r.span().start, "restart_during_termination applies to sidecars only".into());
            }
            role == Role::Sidecar && r.into_inner()
        });
        let oom_score_adj = p.oom_score_adj.and_then(|o| {
            let v = *o.get_ref();
            if (-1000..=1000).contains(&v) {
                Some(v)
            } else {
                self.at(o.span().start, format!("oom_score_adj {v} is outside -1000..=1000"));
                None
            }
        });
        if self.issues.len() > before {
            return None;
        }
        Some(EntrySpec {
            name,
            role,
            argv,
            env,
            working_dir,
            user,
            hold_until: p.hold_until.map_or(HoldUntil::Ready, |h| h.into_inner()),
            stop_signal: p.stop_signal.map_or(Signal::TERM, |s| s.0),
            stop_with_received_signal: false,
            log,
            startup_probe,
            readiness_probe,
            liveness_probe,
            post_start,
            pre_stop,
            oom_score_adj,
            no_new_privileges: p.no_new_privileges.unwrap_or(false),
            max_restarts: p.max_restarts.map(Spanned::into_inner),
            restart_policy,
            restart_rules,
            restart_during_termination,
            schedule,
        })
    }

    /// A scheduled entry's `schedule` or `every` and the rules of its runs
    /// (docs/configuration.md, "Scheduled entries"); the schedule keys on
    /// another role are errors, as are the keys a scheduled entry cannot
    /// have (probes, `hold_until`, `restart_policy = "Always"`).
    fn schedule(
        &mut self,
        p: &mut RawProcess,
        role: Role,
        role_at: usize,
        start: usize,
        name: &str,
    ) -> Option<ScheduleSpec> {
        let keys = [
            ("schedule", p.schedule.as_ref().map(Spanned::span)),
            ("every", p.every.as_ref().map(Spanned::span)),
            ("time_zone", p.time_zone.as_ref().map(Spanned::span)),
            ("concurrency_policy", p.concurrency_policy.as_ref().map(Spanned::span)),
            ("starting_deadline", p.starting_deadline.as_ref().map(Spanned::span)),
            ("suspend", p.suspend.as_ref().map(Spanned::span)),
            ("run_on_start", p.run_on_start.as_ref().map(Spanned::span)),
            ("active_deadline", p.active_deadline.as_ref().map(Spanned::span)),
            ("max_concurrent", p.max_concurrent.as_ref().map(Spanned::span)),
        ];
        if role != Role::Scheduled {
            for (key, span) in keys {
                if let Some(span) = span {
                    self.at(
                        span.start,
                        format!("{key} applies to scheduled entries only (role = \"scheduled\")"),
                    );
                }
            }
            return None;
        }
        if !cfg!(feature = "schedule") {
            self.at(
                role_at,
                "role \"scheduled\" needs the `schedule` feature, which this podinit was built without"
                    .into(),
            );
            return None;
        }
        for (key, span) in [
            ("startup_probe", p.startup_probe.as_ref().map(Spanned::span)),
            ("readiness_probe", p.readiness_probe.as_ref().map(Spanned::span)),
            ("liveness_probe", p.liveness_probe.as_ref().map(Spanned::span)),
            ("hold_until", p.hold_until.as_ref().map(Spanned::span)),
            ("restart_rules", p.restart_rules.as_ref().map(Spanned::span)),
            ("restart_during_termination", p.restart_during_termination.as_ref().map(Spanned::span)),
        ] {
            if let Some(span) = span {
                self.at(
                    span.start,
                    format!("{key} is not allowed on a scheduled entry: a run is not probed, holds nothing, and is tried again only by restart_policy = \"OnFailure\""),
                );
            }
        }
        // Tries within a run: a Job's restartPolicy, Never or OnFailure, and
        // its backoffLimit, 6 by default (kubernetes.io "Jobs").
        let on_failure = match p.restart_policy.as_ref() {
            Some(r) if *r.get_ref() == RestartPolicy::Always => {
                self.at(r.span().start, "restart_policy \"Always\" is not allowed on a scheduled entry: a run ends; write \"OnFailure\" to try a failed run again, or \"Never\" (the default)".into());
                false
            }
            Some(r) => *r.get_ref() == RestartPolicy::OnFailure,
            None => false,
        };
        match p.max_restarts.as_ref() {
            Some(m) if !on_failure => self.at(
                m.span().start,
                "max_restarts on a scheduled entry bounds the tries within a run: it needs restart_policy = \"OnFailure\"".into(),
            ),
            None if on_failure => p.max_restarts = Some(Spanned::new(0..0, JOB_BACKOFF_LIMIT)),
            _ => {}
        }
        let policy = p.concurrency_policy.take().map(|c| (c.span().start, c.into_inner()));
        let max_concurrent = p.max_concurrent.take().map(|m| {
            let (at, max) = (m.span().start, m.into_inner());
            if policy.is_some_and(|(_, c)| c != ConcurrencyPolicy::Allow) {
                self.at(at, "max_concurrent applies to concurrency_policy \"Allow\" (the default): the other policies run one run at a time".into());
            } else if max == 0 {
                self.at(at, "max_concurrent must be at least 1".into());
            }
            max
        });
        let when = match (p.schedule.take(), p.every.take()) {
            (Some(s), None) => {
                let at = s.span().start;
                let text = s.into_inner();
                match schedule::parse_cron(&text) {
                    Ok(cron) => {
                        // Whether it ever runs does not depend on the zone.
                        if cron.never_runs() {
                            self.at(at, format!("{text:?}: it never runs (no such date or time)"));
                        }
                        When::Cron { text }
                    }
                    Err(why) => {
                        self.at(at, format!("{text:?}: {why}"));
                        return None;
                    }
                }
            }
            (None, Some(e)) => {
                let every = e.get_ref().0;
                if every < Duration::from_secs(1) {
                    self.at(e.span().start, "every must be at least 1s".into());
                }
                When::Every(every)
            }
            (Some(s), Some(_)) => {
                self.at(s.span().start, "schedule and every exclude each other: write one".into());
                return None;
            }
            (None, None) => {
                self.at(
                    start,
                    format!(
                        "process {name:?}: a scheduled entry needs `schedule` (cron) or `every` (a duration)"
                    ),
                );
                return None;
            }
        };
        let time_zone = match p.time_zone.take() {
            Some(z) => {
                let at = z.span().start;
                let z = z.into_inner();
                if matches!(when, When::Every(_)) {
                    self.at(
                        at,
                        "time_zone applies to `schedule`: `every` does not read the wall clock".into(),
                    );
                } else if !self.opts.portable {
                    if let Err(why) = schedule::Zone::load(&z) {
                        self.at(at, why);
                    }
                }
                z
            }
            None => "UTC".to_owned(),
        };
        Some(ScheduleSpec {
            when,
            time_zone,
            concurrency_policy: policy.map_or(ConcurrencyPolicy::Allow, |(_, c)| c),
            starting_deadline: p.starting_deadline.take().map(|d| d.into_inner().0),
            suspend: p.suspend.take().is_some_and(Spanned::into_inner),
            run_on_start: p.run_on_start.take().is_some_and(Spanned::into_inner),
            active_deadline: p.active_deadline.take().map(|d| d.into_inner().0),
            max_concurrent,
        })
    }

    /// An entry's `restart_rules` (KEP-5307): inits and mains only, at most 20
    /// rules of at most 255 exit codes, each 0 to 255.
    fn restart_rules(
        &mut self,
        role: Role,
        rules: Spanned<Vec<Spanned<RawRestartRule>>>,
    ) -> Vec<RestartRule> {
        let at = rules.span().start;
        let rules = rules.into_inner();
        if rules.len() > MAX_RESTART_RULES {
            self.at(at, format!("at most {MAX_RESTART_RULES} restart_rules (found {})", rules.len()));
        }
        let mut out = Vec::new();
        for rule in rules {
            let rule = rule.into_inner();
            let values_at = rule.exit_codes.values.span().start;
            let values = rule.exit_codes.values.into_inner();
            if values.is_empty() || values.len() > MAX_EXIT_CODES {
                self.at(
                    values_at,
                    format!(
                        "exit_codes.values needs 1 to {MAX_EXIT_CODES} exit codes (found {})",
                        values.len()
                    ),
                );
            }
            let mut codes = Vec::new();
            for v in values {
                match u8::try_from(*v.get_ref()) {
                    Ok(code) => codes.push(code),
                    Err(_) => {
                        self.at(v.span().start, format!("exit code {} is outside 0..=255", v.get_ref()))
                    }
                }
            }
            if role == Role::Sidecar && rule.action != RuleAction::RestartAll {
                self.at(
                    at,
                    "a sidecar restarts after every exit: its restart_rules can only say restart_all".into(),
                );
            }
            out.push(RestartRule { action: rule.action, operator: rule.exit_codes.operator, values: codes });
        }
        out
    }

    /// The command of `c`; with an error recorded for an empty one (and a
    /// placeholder returned, as the pod is refused anyway).
    fn command(&mut self, c: Spanned<RawCommand>) -> Argv<String> {
        let at = c.span().start;
        let argv = match c.into_inner() {
            RawCommand::Argv(argv) if argv.first().is_some_and(|a| !a.is_empty()) => Argv::new(argv),
            RawCommand::Shell(s) if !s.trim().is_empty() => Argv::new(vec!["/bin/sh".into(), "-c".into(), s]),
            _ => None,
        };
        let Some(argv) = argv else {
            self.at(at, "empty command".into());
            return Argv::program_only(String::new());
        };
        // exec(2) takes C strings: a NUL would end an argument early.
        if argv.iter().any(|a| a.contains('\0')) {
            self.at(at, "a command must not contain a NUL character".into());
        }
        argv
    }

    pub(super) fn exec(&mut self, e: RawExec) -> Argv<String> {
        self.command(e.command)
    }
}

/// Checks a DNS label (RFC 1123, as Kubernetes container names):
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
///
/// # Errors
/// Says what is wrong with the name.
pub fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        return Err("empty");
    }
    if name.len() > 63 {
        return Err("longer than 63 characters");
    }
    if !name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-') {
        return Err("only lowercase letters, digits and '-' are allowed (a DNS label)");
    }
    if name.starts_with('-') || name.ends_with('-') {
        return Err("must start and end with a letter or digit");
    }
    Ok(())
}
