//! The report of `podinit status`: what the status socket answers `text` or
//! `json` (docs/control.md, "podinit status"), rendered from the pod's
//! entries at one instant. Pure: it reads the lifecycle's status and clock
//! values it is given, and touches no socket.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::config::Role;
use crate::lifecycle::{EntryStatus, Phase, State, StopGrace, StopStatus};

/// What podinit answers.
#[derive(Debug, Clone)]
pub struct Report {
    pub ready: bool,
    pub text: String,
    pub json: String,
}

/// The state `podinit status` shows for an entry.
pub fn state_name(s: &EntryStatus) -> &'static str {
    match s.state {
        State::Exited if s.held => "stopped",
        State::Waiting => "waiting",
        State::Spawning => "starting",
        State::Running if s.stopping => "stopping",
        State::Running if !s.started => "starting",
        State::Running if s.ready => "ready",
        State::Running => "running",
        State::Backoff => "backoff",
        State::Exited => "exited",
    }
}

/// A duration as `12.3 s`.
fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// One line on where a stop stands: what it waits for, when SIGKILL comes at
/// the latest and which time that draws on (docs/control.md, "podinit status").
fn stop_text(stop: &StopStatus, now: Instant) -> String {
    let grace = match stop.grace {
        StopGrace::Termination => "the pod's termination budget",
        StopGrace::Own => "its own grace",
    };
    let kill_in = seconds(stop.kill_by.saturating_duration_since(now));
    match (stop.killed, stop.signalled_at, stop.in_pre_stop) {
        (true, _, _) => "stopping: SIGKILL sent".to_owned(),
        (false, Some(at), _) => format!(
            "stopping: stop signal sent {} ago; SIGKILL in {kill_in} ({grace})",
            seconds(now.saturating_duration_since(at))
        ),
        (false, None, true) => {
            format!("stopping: pre_stop runs; SIGKILL in {kill_in} at the latest ({grace})")
        }
        (false, None, false) => {
            format!("stopping: waits for its turn; SIGKILL in {kill_in} at the latest ({grace})")
        }
    }
}

/// The same as JSON: `{"grace":"termination"|"own","pre_stop":bool,
/// "signalled":bool,"kill_in_ms":N,"killed":bool}`.
fn stop_json(stop: &StopStatus, now: Instant) -> String {
    let grace = match stop.grace {
        StopGrace::Termination => "termination",
        StopGrace::Own => "own",
    };
    format!(
        "{{\"grace\":\"{grace}\",\"pre_stop\":{},\"signalled\":{},\"kill_in_ms\":{},\"killed\":{}}}",
        stop.in_pre_stop,
        stop.signalled_at.is_some(),
        stop.kill_by.saturating_duration_since(now).as_millis(),
        stop.killed
    )
}

fn phase_name(p: Phase) -> &'static str {
    match p {
        Phase::Booting { .. } => "starting",
        Phase::Running { .. } => "running",
        Phase::Restarting => "restarting",
        Phase::Terminating { .. } => "terminating",
        Phase::Done => "exited",
    }
}

/// Which podinit answers: the report names it, so that a user with two
/// podinits on one host sees which one they reached.
#[derive(Debug, Clone, Default)]
pub struct About {
    /// podinit's pid (in its own PID namespace: 1 as a container's init).
    pub pid: u32,
    /// Its config file, `None` for a plain init.
    pub config: Option<PathBuf>,
    /// The socket it answers on.
    pub socket: Option<PathBuf>,
}

/// The pod as a whole, for its report.
#[derive(Debug, Clone, Copy)]
pub struct PodFacts {
    pub phase: Phase,
    pub ready: bool,
    /// What is left of `[pod] active_deadline`, when it has one.
    pub deadline_in: Option<Duration>,
    /// Restarts of the whole pod (`restart_all`).
    pub pod_restarts: u32,
    /// What is left of the termination budget while the pod terminates.
    pub termination: Option<Duration>,
}

/// Renders the report of a pod at `now`; `said` is each entry's last
/// `STATUS=` text (notify probes).
pub fn render(
    about: &About,
    entries: &[EntryStatus],
    said: &[Option<String>],
    pod: &PodFacts,
    now: Instant,
) -> Report {
    // Written in place: a report is rendered on request, so its code is
    // kept short rather than fast (fmt::Write on a String and io::Write on a
    // Vec cannot fail).
    use std::fmt::Write as _;
    use std::io::Write as _;
    let PodFacts { phase, ready, deadline_in, pod_restarts, termination } = *pod;
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(4).max(4);
    let config = about.config.as_ref().map(|c| c.display().to_string());
    let socket = about.socket.as_ref().map_or_else(String::new, |s| s.display().to_string());
    let mut text = String::new();
    let _ = writeln!(
        text,
        "podinit pid {}, config {}, socket {socket}",
        about.pid,
        config.as_deref().unwrap_or("none (a plain init)")
    );
    let _ = writeln!(
        text,
        "{:width$}  {:7}  {:8}  {:>7}  {:>8}  {:>9}  READY",
        "NAME", "ROLE", "STATE", "PID", "RESTARTS", "LAST EXIT"
    );
    let mut json = Vec::new();
    let _ = write!(json, "{{\"podinit\":{{\"pid\":{},\"config\":", about.pid);
    json_or_null(&mut json, config.as_deref());
    json.extend_from_slice(b",\"socket\":");
    json_or_null(&mut json, Some(&socket));
    let _ = write!(json, "}},\"phase\":\"{}\",\"ready\":{ready},\"entries\":[", phase_name(phase));
    let mut status_lines = String::new();
    let mut first = true;
    // Entries removed by `podinit reload` show only while they still run.
    for (i, e) in entries.iter().enumerate().filter(|(_, e)| !e.removed || e.state == State::Running) {
        let state = state_name(e);
        let role = e.role.as_str();
        let last = e.last_exit.map(|x| x.status());
        let pid = e.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
        let last_text = last.map_or_else(|| "-".to_owned(), |x| x.to_string());
        let is_ready = if e.role == Role::Init {
            "-"
        } else if e.ready {
            "yes"
        } else {
            "no"
        };
        let _ = writeln!(
            text,
            "{:width$}  {role:7}  {state:8}  {pid:>7}  {:>8}  {last_text:>9}  {is_ready}",
            e.name, e.restarts
        );
        if !first {
            json.push(b',');
        }
        first = false;
        let says = said.get(i).and_then(Option::as_deref);
        if let Some(s) = says {
            let _ = writeln!(status_lines, "{}: {s}", e.name);
        }
        if let Some(stop) = &e.stop {
            let _ = writeln!(status_lines, "{}: {}", e.name, stop_text(stop, now));
        }
        json.extend_from_slice(b"{\"name\":");
        json_or_null(&mut json, Some(&e.name));
        let _ = write!(json, ",\"role\":\"{role}\",\"state\":\"{state}\",\"pid\":");
        number_or_null(&mut json, e.pid.map(i64::from));
        let _ = write!(
            json,
            ",\"restarts\":{},\"restarts_in_termination\":{},\"last_exit\":",
            e.restarts, e.restarts_in_termination
        );
        number_or_null(&mut json, last.map(i64::from));
        let _ = write!(json, ",\"ready\":{},\"status\":", e.ready);
        json_or_null(&mut json, says);
        json.extend_from_slice(b",\"stop\":");
        match &e.stop {
            Some(stop) => json.extend_from_slice(stop_json(stop, now).as_bytes()),
            None => json.extend_from_slice(b"null"),
        }
        json.push(b'}');
    }
    let _ = write!(json, "],\"pod_restarts\":{pod_restarts}");
    if let Some(left) = deadline_in {
        let _ = write!(json, ",\"active_deadline_in_ms\":{}", left.as_millis());
    }
    if let Some(left) = termination {
        let _ = write!(json, ",\"termination_budget_left_ms\":{}", left.as_millis());
    }
    json.extend_from_slice(b"}\n");
    // Every piece is UTF-8 (text as it is, or escaped by json_string).
    let json = String::from_utf8_lossy(&json).into_owned();
    text.push_str(&status_lines);
    let _ = write!(text, "pod: {}", phase_name(phase));
    if let Some(left) = termination {
        let _ = write!(text, " ({} of its budget left)", seconds(left));
    }
    text.push_str(if ready { ", ready" } else { ", not ready" });
    if pod_restarts > 0 {
        let _ = write!(text, ", whole pod restarted {pod_restarts} times");
    }
    if let Some(left) = deadline_in {
        let left = Duration::from_secs(left.as_secs());
        let _ = write!(text, ", active deadline in {}", humantime::format_duration(left));
    }
    text.push('\n');
    Report { ready, text, json }
}

/// Appends `s` as a JSON string, or `null`.
fn json_or_null(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => crate::output::json_string(s, out),
        None => out.extend_from_slice(b"null"),
    }
}

/// Appends `n`, or `null`.
fn number_or_null(out: &mut Vec<u8>, n: Option<i64>) {
    use std::io::Write as _;
    match n {
        Some(n) => {
            let _ = write!(out, "{n}");
        }
        None => out.extend_from_slice(b"null"),
    }
}
