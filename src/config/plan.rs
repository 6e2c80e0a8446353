//! `podinit check`: the start plan of a validated pod, as text.

use std::fmt::Write;
use std::time::Duration;

use crate::config::{EntrySpec, HookKind, HookSpec, LineMatch, PodSpec, ProbeAction, ProbeKind, ProbeSpec};
use crate::config::{HoldUntil, Role, ScheduleSpec, When};

/// A command as a shell would read it back (arguments with blanks quoted).
/// An argument that is not UTF-8 shows escaped.
fn shell_words<S: AsRef<std::ffi::OsStr>>(argv: &crate::config::Argv<S>) -> String {
    argv.iter()
        .map(|a| {
            let Some(a) = a.as_ref().to_str() else {
                // Not UTF-8: escaped, `"caf\xE9"`.
                return format!("{:?}", a.as_ref());
            };
            if !a.is_empty() && a.bytes().all(|b| b.is_ascii_alphanumeric() || b"/-_.=:,+@%".contains(&b)) {
                a.to_owned()
            } else {
                format!("{a:?}")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn dur(d: Duration) -> String {
    humantime::format_duration(d).to_string()
}

/// One probe's line; user strings (paths, hosts) exactly as written.
fn probe(kind: ProbeKind, p: &ProbeSpec) -> String {
    let what = match &p.action {
        ProbeAction::Exec { argv } => format!("exec {}", shell_words(argv)),
        ProbeAction::TcpSocket { host, port } => format!("tcp {host}:{port}"),
        ProbeAction::HttpGet(g) => format!("http_get {}://{}:{}{}", g.scheme, g.host, g.port, g.path),
        ProbeAction::Grpc { host, port, service } => format!("grpc {host}:{port} {service:?}"),
        ProbeAction::Notify if kind == ProbeKind::Liveness => "notify WATCHDOG=1".to_owned(),
        ProbeAction::Notify => "notify READY=1".to_owned(),
        ProbeAction::Fd { fd } => format!("a line on fd {fd}"),
        ProbeAction::LogLine(LineMatch::Contains(text)) => format!("log_line containing {text:?}"),
        ProbeAction::LogLine(LineMatch::Regex(p)) => format!("log_line matching {:?}", p.source),
    };
    if p.action.is_push() {
        let mut s = format!(
            "{kind} probe: {what}, fails after {} periods of {} without it",
            p.failure_threshold,
            dur(p.period)
        );
        if !p.initial_delay.is_zero() {
            let _ = write!(s, ", after {}", dur(p.initial_delay));
        }
        return s;
    }
    let mut s = format!("{kind} probe: {what}, every {}, timeout {}", dur(p.period), dur(p.timeout));
    if !p.initial_delay.is_zero() {
        let _ = write!(s, ", after {}", dur(p.initial_delay));
    }
    let _ = write!(s, ", fails after {}", p.failure_threshold);
    if p.success_threshold > 1 {
        let _ = write!(s, ", passes after {}", p.success_threshold);
    }
    s
}

fn hook(kind: HookKind, h: &HookSpec) -> String {
    match h {
        HookSpec::Exec { argv } => format!("{kind}: exec {}", shell_words(argv)),
        HookSpec::HttpGet(g) => format!("{kind}: http_get {}:{}{}", g.host, g.port, g.path),
        HookSpec::Sleep(d) => format!("{kind}: sleep {}", dur(*d)),
    }
}

fn details(e: &EntrySpec, now: i64) -> Vec<String> {
    let mut d = Vec::new();
    if e.role == Role::Sidecar {
        d.push(match e.hold_until {
            HoldUntil::Ready => "holds the sequence until ready".to_owned(),
            HoldUntil::Started => "holds the sequence until started".to_owned(),
        });
    }
    for &kind in ProbeKind::ALL {
        if let Some(p) = e.probe(kind) {
            d.push(probe(kind, p));
        }
    }
    for &kind in HookKind::ALL {
        if let Some(h) = e.hook(kind) {
            d.push(hook(kind, h));
        }
    }
    if e.stop_signal != crate::config::Signal::TERM {
        d.push(format!("stop signal {}", e.stop_signal));
    }
    if let Some(u) = &e.user {
        d.push(format!("user {}:{}", u.uid, u.gid));
    }
    if !e.env.is_empty() {
        // Names only: a value may be a secret, and podinit never prints one.
        let mut keys: Vec<&str> = e.env.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        d.push(format!("env {}", keys.join(", ")));
    }
    if let Some(adj) = e.oom_score_adj {
        d.push(format!("oom_score_adj {adj}"));
    }
    if e.log != crate::config::LogMode::Prefixed {
        d.push(format!("log {}", e.log));
    }
    if e.no_new_privileges {
        d.push("no_new_privileges".to_owned());
    }
    if e.restart_during_termination {
        d.push("restart_during_termination".to_owned());
    }
    if let Some(policy) = e.restart_policy {
        d.push(format!("restart_policy {policy}"));
    }
    for r in &e.restart_rules {
        let codes: Vec<String> = r.values.iter().map(u8::to_string).collect();
        d.push(format!(
            "restart rule: {} when the exit code is {} [{}]",
            r.action,
            r.operator,
            codes.join(", ")
        ));
    }
    if let Some(max) = e.max_restarts.filter(|_| e.schedule.is_some()) {
        d.push(format!("max_restarts {max}: tries within a run; one more failure and the run has failed"));
    } else if let Some(max) = e.max_restarts {
        d.push(format!("max_restarts {max}: one more exit that would restart it fails the pod"));
    }
    if let Some(w) = &e.working_dir {
        d.push(format!("working_dir {}", w.display()));
    }
    if let Some(s) = e.schedule.as_ref().filter(|_| cfg!(feature = "schedule")) {
        d.extend(schedule(s, now));
    }
    d
}

/// A scheduled entry's lines: its schedule, its rules, its next three runs.
fn schedule(s: &ScheduleSpec, now: i64) -> Vec<String> {
    let mut d = Vec::new();
    match &s.when {
        When::Cron { text, .. } => d.push(format!("schedule {text:?} in {}", s.time_zone)),
        When::Every(every) => d.push(format!("every {}, from when the mains are reached", dur(*every))),
    }
    let mut rules = vec![format!("concurrency_policy {}", s.concurrency_policy)];
    if let Some(max) = s.max_concurrent {
        rules.push(format!("max_concurrent {max}"));
    }
    if let Some(deadline) = s.starting_deadline {
        rules.push(format!("starting_deadline {}", dur(deadline)));
    }
    if let Some(deadline) = s.active_deadline {
        rules.push(format!("active_deadline {}", dur(deadline)));
    }
    if s.run_on_start {
        rules.push("run_on_start".to_owned());
    }
    if s.suspend {
        rules.push("suspended: no run starts".to_owned());
    }
    d.push(rules.join(", "));
    match crate::config::schedule::next_three(s, now) {
        Ok(runs) if !runs.is_empty() => d.push(format!("next runs {}", runs.join(", "))),
        Ok(_) => {}
        Err(why) => d.push(format!("next runs unknown: {why}")),
    }
    d
}

/// The plan: pod settings, then the ordered sequence, then the mains, then
/// the scheduled entries with their next runs from now.
pub fn render(spec: &PodSpec) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    render_at(spec, now)
}

/// [`render`], with the scheduled entries' next runs after `now` (Unix seconds).
pub fn render_at(spec: &PodSpec, now: i64) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "pod: restart_policy {}, completion {}, termination_grace_period {}, backoff {} doubling to {} (reset after {})",
        spec.restart_policy,
        spec.completion,
        dur(spec.termination_grace_period),
        dur(spec.backoff.initial),
        dur(spec.backoff.max),
        dur(spec.backoff.reset_after),
    )
    .map(|()| ());
    if let Some(d) = spec.active_deadline {
        let _ = writeln!(s, "     active_deadline {}: then termination begins and podinit exits 124", dur(d));
    }
    let width = spec.entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    // The roles' column: as wide as "sidecar", or "scheduled" when there is one.
    let roles = spec.entries.iter().map(|e| e.role.as_str().len()).max().unwrap_or(0).max(7);
    let mut step = 0;
    let line = |s: &mut String, step: usize, e: &EntrySpec| {
        let role = e.role.as_str();
        let _ = writeln!(s, "{step:>3}. {:width$}  {role:<roles$}  {}", e.name, shell_words(&e.argv));
        for d in details(e, now) {
            let _ = writeln!(s, "     {:width$}  {:roles$}  {d}", "", "");
        }
    };
    let _ = writeln!(s, "start sequence, one at a time:");
    for e in spec.entries.iter().filter(|e| matches!(e.role, Role::Init | Role::Sidecar)) {
        step += 1;
        line(&mut s, step, e);
    }
    if step == 0 {
        let _ = writeln!(s, "     (none)");
    }
    let _ = writeln!(s, "then the mains, together:");
    for e in spec.entries.iter().filter(|e| e.role == Role::Main) {
        step += 1;
        line(&mut s, step, e);
    }
    if spec.entries.iter().any(|e| e.role == Role::Scheduled) {
        let _ = writeln!(s, "scheduled, once the mains are reached (they hold nothing and fail nothing):");
        for e in spec.entries.iter().filter(|e| e.role == Role::Scheduled) {
            step += 1;
            line(&mut s, step, e);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use crate::config::{from_source, LoadOptions, Source};

    #[test]
    fn user_strings_print_exactly_as_written() {
        let text = "[[process]]\nname = \"app\"\ncommand = [\"Serve\", \"--Port=80\"]\n\
                    readiness_probe = { http_get = { port = 8080, path = \"/HealthZ\", host = \"LocalHost\" } }\n";
        let source = Source { path: Some("pod.toml".into()), text: text.into(), origin: None };
        let spec = from_source(
            &source,
            &LoadOptions { command: vec![], is_root: false, start_dir: None, ..Default::default() },
        )
        .unwrap();
        let plan = super::render(&spec);
        assert!(plan.contains("http_get http://LocalHost:8080/HealthZ"), "{plan}");
        assert!(plan.contains("Serve --Port=80"), "{plan}");
        assert!(plan.contains("restart_policy Never, completion all"), "{plan}");
    }
}
