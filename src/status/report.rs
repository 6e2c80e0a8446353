//! The report of `podinit status`: what the status socket answers `text` or
//! `json` (docs/control.md, "podinit status"), rendered from the pod's
//! entries at one instant. Pure: it reads the lifecycle's status and clock
//! values it is given, and touches no socket.
//!
//! The report is built once as [`PodReport`], whose types are the JSON's
//! shape, one struct per JSON object with its fields in the JSON's order,
//! serialised by serde_json; the text table is read from the same values, so
//! the two cannot tell different stories.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Serialize, Serializer};

use crate::config::Role;
use crate::lifecycle::{Chain, EntryStatus, Phase, State, StopGrace, StopStatus, Timing, WaitFor};

/// What podinit answers.
#[derive(Debug, Clone)]
pub struct Report {
    pub ready: bool,
    pub text: String,
    pub json: String,
    /// `podinit status --timing`: the timing table and the critical chain.
    pub timing: String,
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

/// `podinit status --json`: one JSON object on one line.
#[derive(Debug, Clone, Serialize)]
pub struct PodReport<'a> {
    /// Which podinit answers.
    pub podinit: Podinit,
    /// The pod's phase: `starting` (the init and sidecar sequence),
    /// `running`, `restarting` (`restart_all`), `terminating` or `exited`.
    pub phase: &'static str,
    /// Every sidecar and main is ready.
    pub ready: bool,
    /// The entries in the config's order; one that `podinit reload` removed
    /// only while it still runs.
    pub entries: Vec<EntryReport<'a>>,
    /// Restarts of the whole pod (`restart_all`).
    pub pod_restarts: u32,
    /// What is left of `[pod] active_deadline`, in whole milliseconds;
    /// absent when the pod has none.
    #[serde(
        rename = "active_deadline_in_ms",
        serialize_with = "some_millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_deadline_in: Option<Duration>,
    /// What is left of the termination budget, in whole milliseconds;
    /// absent unless the pod terminates.
    #[serde(
        rename = "termination_budget_left_ms",
        serialize_with = "some_millis",
        skip_serializing_if = "Option::is_none"
    )]
    pub termination_budget_left: Option<Duration>,
    /// Where the start sequence waits, and why; absent when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub waiting: Option<WaitReport>,
    /// The critical chain of the start (`podinit status --timing`); `null`
    /// until every main has been ready.
    pub chain: Option<ChainReport<'a>>,
}

/// An entry's `timing` object: when it first reached each point of its
/// start, since podinit's start, and how long it held the start sequence
/// (docs/control.md, "podinit status --timing"). Each is `null` until it
/// happens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TimingReport {
    /// The start sequence asked for it (its first spawn).
    #[serde(rename = "asked_ms", serialize_with = "some_millis")]
    pub asked: Option<Duration>,
    /// It first started: its post_start returned and its startup probe passed.
    #[serde(rename = "started_ms", serialize_with = "some_millis")]
    pub started: Option<Duration>,
    /// It was first ready (never for an init).
    #[serde(rename = "ready_ms", serialize_with = "some_millis")]
    pub ready: Option<Duration>,
    /// How long it held the start sequence, once the sequence went past it.
    #[serde(rename = "held_ms", serialize_with = "some_millis")]
    pub held: Option<Duration>,
}

impl TimingReport {
    /// `timing`'s instants as times since `origin`.
    pub fn new(t: &Timing, origin: Instant) -> TimingReport {
        let since = |at: Option<Instant>| at.map(|at| at.saturating_duration_since(origin));
        TimingReport {
            asked: since(t.asked),
            started: since(t.started),
            ready: since(t.ready),
            held: t.held(),
        }
    }
}

/// The report's `chain` object: the critical chain of the start, from
/// podinit's start to the last main ready, the way `systemd-analyze
/// critical-chain` shows a boot's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChainReport<'a> {
    /// When the last main was first ready, since podinit's start.
    #[serde(rename = "total_ms", serialize_with = "millis")]
    pub total: Duration,
    /// Its links, in the order the start sequence took them.
    pub links: Vec<LinkReport<'a>>,
}

/// One link of the chain: an entry, when the start sequence asked for it
/// (since podinit's start) and how long it took, to be passed by the
/// sequence, or for the last link (the last main ready) to be ready.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LinkReport<'a> {
    pub entry: &'a str,
    #[serde(rename = "at_ms", serialize_with = "millis")]
    pub at: Duration,
    #[serde(rename = "took_ms", serialize_with = "millis")]
    pub took: Duration,
}

impl<'a> ChainReport<'a> {
    /// `chain` with the names of `entries` (the pod's, in its order), its
    /// times since `origin`.
    pub fn new(chain: &Chain, entries: &'a [EntryStatus], origin: Instant) -> ChainReport<'a> {
        let links = chain
            .links
            .iter()
            .map(|l| LinkReport {
                entry: entries.get(l.entry).map_or("?", |e| e.name.as_str()),
                at: l.at.saturating_duration_since(origin),
                took: l.took,
            })
            .collect();
        ChainReport { total: chain.ready.saturating_duration_since(origin), links }
    }

    /// The chain as `systemd-analyze critical-chain` prints one: the last
    /// main first, each link's cause under it, `@` when the sequence asked
    /// for it and `+` how long it took.
    pub fn text(&self) -> String {
        let last = self.links.last().map_or("?", |l| l.entry);
        let mut text = format!("critical chain: {last} ready {}\n", time('@', Some(self.total)));
        for (depth, link) in self.links.iter().rev().enumerate() {
            if depth > 0 {
                text.push_str(&"  ".repeat(depth - 1));
                text.push_str("└─");
            }
            text.push_str(link.entry);
            for (mark, d) in [('@', link.at), ('+', link.took)] {
                text.push(' ');
                text.push_str(&time(mark, Some(d)));
            }
            text.push('\n');
        }
        text
    }
}

/// The report's `waiting` object: the entry the start sequence waits at,
/// what for, for how long, and why the probe it waits for last failed
/// (docs/control.md, "podinit status").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WaitReport {
    /// The entry's name.
    pub entry: String,
    /// What it waits for: `exit` (an init's), `post_start`,
    /// `startup_probe`, `readiness_probe` or `backoff`.
    #[serde(rename = "for", serialize_with = "wait_for")]
    pub what: WaitFor,
    /// How long it has waited at the entry; whole milliseconds in the JSON.
    #[serde(rename = "waited_ms", serialize_with = "millis")]
    pub waited: Duration,
    /// Why the probe it waits for last failed; `null` when none failed, or
    /// it waits for no probe.
    pub last_failure: Option<String>,
}

impl WaitReport {
    /// The wait of `pod` at `now`, if its start sequence waits.
    pub fn of(pod: &crate::lifecycle::Pod, now: Instant) -> Option<WaitReport> {
        let wait = pod.waiting()?;
        Some(WaitReport {
            entry: pod.spec().entries[wait.entry].name.clone(),
            what: wait.what,
            waited: now.saturating_duration_since(wait.since),
            last_failure: wait.last_failure,
        })
    }

    /// The `waiting for:` line of `podinit status` and of `/readyz`'s 503
    /// body: `waiting for: side, readiness probe, 12s (last failure: ...)`,
    /// or `waiting for: migrate to exit, 12s`.
    pub fn text(&self) -> String {
        let waited = humantime::format_duration(Duration::from_secs(self.waited.as_secs()));
        let mut text = match self.what {
            WaitFor::Exit => format!("waiting for: {} to exit, {waited}", self.entry),
            what => format!("waiting for: {}, {}, {waited}", self.entry, what.human()),
        };
        if let Some(why) = &self.last_failure {
            text.push_str(" (last failure: ");
            text.push_str(why);
            text.push(')');
        }
        text
    }
}

/// The report's `podinit` object: which podinit answers, so that a user with
/// two podinits on one host sees which one they reached.
#[derive(Debug, Clone, Serialize)]
pub struct Podinit {
    /// podinit's pid, in its own PID namespace (1 as a container's init).
    pub pid: u32,
    /// Its config file; `null` for a plain init.
    pub config: Option<String>,
    /// The socket it answers on; the empty string when it has none.
    pub socket: String,
}

/// One entry of the report's `entries`.
#[derive(Debug, Clone, Serialize)]
pub struct EntryReport<'a> {
    /// The entry's name.
    pub name: &'a str,
    /// `init`, `sidecar` or `main`.
    #[serde(serialize_with = "role")]
    pub role: Role,
    /// What [`state_name`] says of it.
    pub state: &'static str,
    /// Its process's pid, in podinit's PID namespace; `null` when it has
    /// none.
    pub pid: Option<i32>,
    /// How many times it was restarted.
    pub restarts: u32,
    /// Of those, the restarts during termination (docs/lifecycle.md rule 17a).
    pub restarts_in_termination: u32,
    /// The last instance's shell status (exit code, or 128 + signal); `null`
    /// before one has ended.
    pub last_exit: Option<i32>,
    /// It is ready (what the READY column says of a sidecar or main).
    pub ready: bool,
    /// Its last `STATUS=` text (notify probes); `null` when it sent none.
    pub status: Option<&'a str>,
    /// Where its stop stands while it is being stopped; `null` otherwise.
    pub stop: Option<StopReport>,
    /// A scheduled entry's runs; absent for the other roles.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runs: Option<RunsReport>,
    /// When it first reached each point of its start.
    pub timing: TimingReport,
}

/// A scheduled entry's `runs` object (docs/control.md, "podinit status").
#[derive(Debug, Clone, Serialize)]
pub struct RunsReport {
    /// Runs started.
    pub started: u32,
    /// Runs that ended with a status other than 0.
    pub failed: u32,
    /// Runs that came due and did not start.
    pub skipped: u32,
    /// How long ago the last run started; `null` before one.
    #[serde(rename = "last_started_ms_ago", serialize_with = "some_millis")]
    pub last_started_ago: Option<Duration>,
    /// How long the last run that ended ran; `null` before one ended.
    #[serde(rename = "last_ran_ms", serialize_with = "some_millis")]
    pub last_ran_for: Option<Duration>,
    /// How long ago the last successful run ended; `null` before one.
    #[serde(rename = "last_success_ms_ago", serialize_with = "some_millis")]
    pub last_success_ago: Option<Duration>,
    /// When the next run is due, from now; `null` when none is armed
    /// (suspended, or termination has begun).
    #[serde(rename = "next_in_ms", serialize_with = "some_millis")]
    pub next_in: Option<Duration>,
}

impl RunsReport {
    /// One line: `3 runs (1 failed, 2 skipped), the last started 5 s ago and
    /// ran 2.0 s, next in 55.0 s`.
    fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut t = format!(
            "{} ({} failed, {} skipped)",
            crate::lifecycle::counted(self.started, "run"),
            self.failed,
            self.skipped
        );
        if let Some(ago) = self.last_started_ago {
            let _ = write!(t, ", the last started {} ago", seconds(ago));
            if let Some(ran) = self.last_ran_for {
                let _ = write!(t, " and ran {}", seconds(ran));
            }
        }
        if let Some(ago) = self.last_success_ago {
            let _ = write!(t, ", last success {} ago", seconds(ago));
        }
        match self.next_in {
            Some(next) => {
                let _ = write!(t, ", next in {}", seconds(next));
            }
            None => t.push_str(", no next run"),
        }
        t
    }
}

/// An entry's `stop` object (docs/control.md, "podinit status").
#[derive(Debug, Clone, Serialize)]
pub struct StopReport {
    /// What the stop's time comes out of: `termination` (the pod's
    /// termination budget) or `own` (a stop outside termination).
    #[serde(serialize_with = "grace")]
    pub grace: StopGrace,
    /// Its pre_stop hook runs; the stop signal waits for it.
    pub pre_stop: bool,
    /// How long ago the stop signal went out; `None` while it has not. The
    /// JSON says only whether it has (`signalled`: `true` or `false`).
    #[serde(rename = "signalled", serialize_with = "is_some")]
    pub signalled_ago: Option<Duration>,
    /// When SIGKILL comes, at the latest, from now; whole milliseconds in
    /// the JSON.
    #[serde(rename = "kill_in_ms", serialize_with = "millis")]
    pub kill_in: Duration,
    /// SIGKILL has been sent.
    pub killed: bool,
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
#[derive(Debug, Clone)]
pub struct PodFacts {
    pub phase: Phase,
    pub ready: bool,
    /// What is left of `[pod] active_deadline`, when it has one.
    pub deadline_in: Option<Duration>,
    /// Restarts of the whole pod (`restart_all`).
    pub pod_restarts: u32,
    /// What is left of the termination budget while the pod terminates.
    pub termination: Option<Duration>,
    /// Where the start sequence waits, when it does.
    pub waiting: Option<WaitReport>,
    /// podinit's start: what the times of `--timing` count from.
    pub origin: Instant,
    /// The critical chain of the start, once every main has been ready.
    pub chain: Option<Chain>,
}

/// Renders the report of a pod at `now`; `said` is each entry's last
/// `STATUS=` text (notify probes), `next_runs` when each scheduled entry's
/// next run is due.
pub fn render(
    about: &About,
    entries: &[EntryStatus],
    said: &[Option<String>],
    next_runs: &[Option<Instant>],
    pod: &PodFacts,
    now: Instant,
) -> Report {
    let mut report = PodReport::new(about, entries, said, pod, now);
    for (e, shown) in entries
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.removed || e.state == State::Running)
        .zip(report.entries.iter_mut())
    {
        let (i, e) = e;
        shown.runs = e.runs.map(|r| RunsReport {
            started: r.started,
            failed: r.failed,
            skipped: r.skipped,
            last_started_ago: r.last_start.map(|t| now.saturating_duration_since(t)),
            last_ran_for: r.last_ran_for,
            last_success_ago: r.last_success.map(|t| now.saturating_duration_since(t)),
            next_in: next_runs.get(i).copied().flatten().map(|t| t.saturating_duration_since(now)),
        });
    }
    // The NAME column fits every entry, shown or not.
    let width = entries.iter().map(|e| e.name.len()).max().unwrap_or(4).max(4);
    // Serialising these types cannot fail: no map, no key that is not a
    // string, no Serialize of ours that returns an error.
    let mut json = serde_json::to_string(&report).unwrap_or_default();
    json.push('\n');
    Report { ready: pod.ready, text: report.text(width), json, timing: report.timing(width) }
}

impl<'a> PodReport<'a> {
    /// The report of `entries` at `now`.
    pub fn new(
        about: &About,
        entries: &'a [EntryStatus],
        said: &'a [Option<String>],
        pod: &PodFacts,
        now: Instant,
    ) -> PodReport<'a> {
        let podinit = Podinit {
            pid: about.pid,
            config: about.config.as_ref().map(|c| c.display().to_string()),
            socket: about.socket.as_ref().map_or_else(String::new, |s| s.display().to_string()),
        };
        // Entries removed by `podinit reload` show only while they still run.
        let shown = entries.iter().enumerate().filter(|(_, e)| !e.removed || e.state == State::Running);
        let chain = pod.chain.as_ref().map(|c| ChainReport::new(c, entries, pod.origin));
        let entries = shown
            .map(|(i, e)| EntryReport {
                name: &e.name,
                role: e.role,
                state: state_name(e),
                pid: e.pid,
                restarts: e.restarts,
                restarts_in_termination: e.restarts_in_termination,
                last_exit: e.last_exit.map(|x| x.status()),
                ready: e.ready,
                status: said.get(i).and_then(Option::as_deref),
                stop: e.stop.as_ref().map(|s| StopReport::new(s, now)),
                runs: None,
                timing: TimingReport::new(&e.timing, pod.origin),
            })
            .collect();
        PodReport {
            podinit,
            phase: phase_name(pod.phase),
            ready: pod.ready,
            entries,
            pod_restarts: pod.pod_restarts,
            active_deadline_in: pod.deadline_in,
            termination_budget_left: pod.termination,
            waiting: pod.waiting.clone(),
            chain,
        }
    }

    /// The text of `podinit status --timing`: who answers, a table of when
    /// each entry was asked for, started and ready (`@` since podinit's
    /// start) and how long it held the start sequence (`+`), then the
    /// critical chain.
    pub fn timing(&self, width: usize) -> String {
        use std::fmt::Write as _;
        let mut text = self.head();
        let rw = self.role_width();
        let _ = writeln!(
            text,
            "{:width$}  {:rw$}       ASKED     STARTED       READY        HELD",
            "NAME", "ROLE"
        );
        for e in &self.entries {
            let t = &e.timing;
            let _ = write!(text, "{:width$}  {:rw$}", e.name, e.role.as_str());
            for (mark, d) in [('@', t.asked), ('@', t.started), ('@', t.ready), ('+', t.held)] {
                let _ = write!(text, "  {:>10}", time(mark, d));
            }
            text.push('\n');
        }
        match &self.chain {
            Some(chain) => text.push_str(&chain.text()),
            None => text.push_str("critical chain: not every main has been ready yet\n"),
        }
        text
    }

    /// The ROLE column's width: `sidecar`'s, or `scheduled`'s when one is.
    fn role_width(&self) -> usize {
        self.entries.iter().map(|e| e.role.as_str().len()).max().unwrap_or(0).max(7)
    }

    /// The first line of a report: which podinit answers.
    fn head(&self) -> String {
        format!(
            "podinit pid {}, config {}, socket {}\n",
            self.podinit.pid,
            self.podinit.config.as_deref().unwrap_or("none (a plain init)"),
            self.podinit.socket
        )
    }

    /// The text of `podinit status`: who answers, a table of the entries
    /// with a NAME column `width` wide, a line for each `STATUS=` text and
    /// each stop, and the pod's line.
    pub fn text(&self, width: usize) -> String {
        // fmt::Write on a String cannot fail.
        use std::fmt::Write as _;
        let mut text = self.head();
        let rw = self.role_width();
        let _ = writeln!(
            text,
            "{:width$}  {:rw$}  {:8}  {:>7}  {:>8}  {:>9}  READY",
            "NAME", "ROLE", "STATE", "PID", "RESTARTS", "LAST EXIT"
        );
        let mut status_lines = String::new();
        for e in &self.entries {
            let pid = e.pid.map_or_else(|| "-".to_owned(), |p| p.to_string());
            let last_text = e.last_exit.map_or_else(|| "-".to_owned(), |x| x.to_string());
            let is_ready = if matches!(e.role, Role::Init | Role::Scheduled) {
                "-"
            } else if e.ready {
                "yes"
            } else {
                "no"
            };
            let _ = writeln!(
                text,
                "{:width$}  {:rw$}  {:8}  {pid:>7}  {:>8}  {last_text:>9}  {is_ready}",
                e.name,
                e.role.as_str(),
                e.state,
                e.restarts
            );
            if let Some(s) = e.status {
                let _ = writeln!(status_lines, "{}: {s}", e.name);
            }
            if let Some(stop) = &e.stop {
                let _ = writeln!(status_lines, "{}: {}", e.name, stop.text());
            }
            if let Some(runs) = &e.runs {
                let _ = writeln!(status_lines, "{}: {}", e.name, runs.text());
            }
        }
        text.push_str(&status_lines);
        if let Some(wait) = &self.waiting {
            text.push_str(&wait.text());
            text.push('\n');
        }
        let _ = write!(text, "pod: {}", self.phase);
        if let Some(left) = self.termination_budget_left {
            let _ = write!(text, " ({} of its budget left)", seconds(left));
        }
        text.push_str(if self.ready { ", ready" } else { ", not ready" });
        if self.pod_restarts > 0 {
            let _ = write!(
                text,
                ", whole pod restarted {}",
                crate::lifecycle::counted(self.pod_restarts, "time")
            );
        }
        if let Some(left) = self.active_deadline_in {
            let left = Duration::from_secs(left.as_secs());
            let _ = write!(text, ", active deadline in {}", humantime::format_duration(left));
        }
        text.push('\n');
        text
    }
}

impl StopReport {
    /// Where `stop` stands at `now`.
    pub fn new(stop: &StopStatus, now: Instant) -> StopReport {
        StopReport {
            grace: stop.grace,
            pre_stop: stop.in_pre_stop,
            signalled_ago: stop.signalled_at.map(|at| now.saturating_duration_since(at)),
            kill_in: stop.kill_by.saturating_duration_since(now),
            killed: stop.killed,
        }
    }

    /// One line on where the stop stands: what it waits for, when SIGKILL
    /// comes at the latest and which time that draws on (docs/control.md,
    /// "podinit status").
    pub fn text(&self) -> String {
        let grace = match self.grace {
            StopGrace::Termination => "the pod's termination budget",
            StopGrace::Own => "its own grace",
        };
        let kill_in = seconds(self.kill_in);
        match (self.killed, self.signalled_ago, self.pre_stop) {
            (true, _, _) => "stopping: SIGKILL sent".to_owned(),
            (false, Some(ago), _) => {
                format!("stopping: stop signal sent {} ago; SIGKILL in {kill_in} ({grace})", seconds(ago))
            }
            (false, None, true) => {
                format!("stopping: pre_stop runs; SIGKILL in {kill_in} at the latest ({grace})")
            }
            (false, None, false) => {
                format!("stopping: waits for its turn; SIGKILL in {kill_in} at the latest ({grace})")
            }
        }
    }
}

/// A time of `podinit status --timing` as seconds with milliseconds after
/// `mark` (`@1.234s`, `+0.500s`), as `systemd-analyze critical-chain`
/// writes them; `-` when there is none.
#[inline(never)]
fn time(mark: char, d: Option<Duration>) -> String {
    match d {
        Some(d) => format!("{mark}{}.{:03}s", d.as_secs(), d.subsec_millis()),
        None => "-".to_owned(),
    }
}

/// A duration as `12.3 s`.
fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
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

/// A duration as whole milliseconds (`u64::MAX` past 584 million years).
/// Not inlined: the report has a dozen such fields.
#[inline(never)]
fn millis<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A duration as whole milliseconds, or `null`. Not inlined, as [`millis`].
#[inline(never)]
fn some_millis<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => millis(d, s),
        None => s.serialize_none(),
    }
}

/// Whether there is a value: `true` or `false`.
fn is_some<T, S: Serializer>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(v.is_some())
}

/// What the start sequence waits for, by its name.
fn wait_for<S: Serializer>(w: &WaitFor, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(w.as_str())
}

/// A role by its config name.
fn role<S: Serializer>(r: &Role, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(r.as_str())
}

/// A stop's grace: `termination` or `own`.
fn grace<S: Serializer>(g: &StopGrace, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match g {
        StopGrace::Termination => "termination",
        StopGrace::Own => "own",
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lifecycle::exit_status::Exit;

    fn entry(name: &str, role: Role, pid: Option<i32>, stop: Option<StopStatus>) -> EntryStatus {
        EntryStatus {
            name: name.into(),
            role,
            state: if pid.is_some() { State::Running } else { State::Exited },
            pid,
            restarts: 1,
            last_exit: Some(Exit::Signal(15)),
            started: true,
            ready: pid.is_some(),
            stopping: stop.is_some(),
            held: false,
            removed: false,
            restarts_in_termination: 0,
            runs: None,
            stop,
            timing: Timing::default(),
        }
    }

    /// The JSON's field names, order, nulls and numbers, and the text read
    /// from the same report (docs/control.md, "podinit status").
    #[test]
    fn a_terminating_pod_renders_as_documented() {
        let now = Instant::now() + Duration::from_secs(60);
        let waits = StopStatus {
            grace: StopGrace::Termination,
            in_pre_stop: false,
            signalled_at: None,
            kill_by: now + Duration::from_millis(11_000),
            killed: false,
        };
        let signalled = StopStatus { signalled_at: Some(now - Duration::from_secs(1)), ..waits };
        let entries = [
            entry("setup", Role::Init, None, None),
            entry("side", Role::Sidecar, Some(10104), Some(waits)),
            entry("app", Role::Main, Some(10108), Some(signalled)),
        ];
        let said = [None, Some("warming \"up\"".to_owned()), None];
        let about = About { pid: 1, config: Some("/etc/podinit.toml".into()), socket: None };
        let pod = PodFacts {
            phase: Phase::Terminating { deadline: now, spent: false },
            ready: false,
            deadline_in: None,
            pod_restarts: 0,
            termination: Some(Duration::from_millis(9_000)),
            waiting: None,
            origin: now,
            chain: None,
        };
        let report = render(&about, &entries, &said, &[], &pod, now);
        assert!(!report.ready);
        assert_eq!(
            report.json,
            concat!(
                r#"{"podinit":{"pid":1,"config":"/etc/podinit.toml","socket":""},"phase":"terminating","ready":false,"entries":["#,
                r#"{"name":"setup","role":"init","state":"exited","pid":null,"restarts":1,"restarts_in_termination":0,"last_exit":143,"ready":false,"status":null,"stop":null,"timing":{"asked_ms":null,"started_ms":null,"ready_ms":null,"held_ms":null}},"#,
                r#"{"name":"side","role":"sidecar","state":"stopping","pid":10104,"restarts":1,"restarts_in_termination":0,"last_exit":143,"ready":true,"status":"warming \"up\"","stop":{"grace":"termination","pre_stop":false,"signalled":false,"kill_in_ms":11000,"killed":false},"timing":{"asked_ms":null,"started_ms":null,"ready_ms":null,"held_ms":null}},"#,
                r#"{"name":"app","role":"main","state":"stopping","pid":10108,"restarts":1,"restarts_in_termination":0,"last_exit":143,"ready":true,"status":null,"stop":{"grace":"termination","pre_stop":false,"signalled":true,"kill_in_ms":11000,"killed":false},"timing":{"asked_ms":null,"started_ms":null,"ready_ms":null,"held_ms":null}}"#,
                r#"],"pod_restarts":0,"termination_budget_left_ms":9000,"chain":null}"#,
                "\n"
            )
        );
        assert_eq!(
            report.text,
            concat!(
                "podinit pid 1, config /etc/podinit.toml, socket \n",
                "NAME   ROLE     STATE         PID  RESTARTS  LAST EXIT  READY\n",
                "setup  init     exited          -         1        143  -\n",
                "side   sidecar  stopping    10104         1        143  yes\n",
                "app    main     stopping    10108         1        143  yes\n",
                "side: warming \"up\"\n",
                "side: stopping: waits for its turn; SIGKILL in 11.0 s at the latest (the pod's termination budget)\n",
                "app: stopping: stop signal sent 1.0 s ago; SIGKILL in 11.0 s (the pod's termination budget)\n",
                "pod: terminating (9.0 s of its budget left), not ready\n",
            )
        );
        let pod = PodFacts {
            phase: Phase::Running { next_main: 1 },
            ready: true,
            deadline_in: Some(Duration::from_millis(90_500)),
            pod_restarts: 2,
            termination: None,
            waiting: None,
            origin: now,
            chain: None,
        };
        let report = render(&About::default(), &[], &[], &[], &pod, now);
        assert_eq!(
            report.json,
            concat!(
                r#"{"podinit":{"pid":0,"config":null,"socket":""},"phase":"running","ready":true,"entries":[],"#,
                r#""pod_restarts":2,"active_deadline_in_ms":90500,"chain":null}"#,
                "\n"
            )
        );
        assert!(
            report
                .text
                .ends_with("pod: running, ready, whole pod restarted 2 times, active deadline in 1m 30s\n"),
            "{}",
            report.text
        );
    }

    /// The `waiting for:` line and the `waiting` object while the start
    /// sequence waits (docs/control.md, "podinit status").
    #[test]
    fn a_waiting_pod_says_where_and_why() {
        let now = Instant::now();
        let side = EntryStatus { ready: false, ..entry("side", Role::Sidecar, Some(7), None) };
        let waiting = WaitReport {
            entry: "side".into(),
            what: WaitFor::ReadinessProbe,
            waited: Duration::from_millis(12_345),
            last_failure: Some("tcp 127.0.0.1:18099: Connection refused".into()),
        };
        let pod = PodFacts {
            phase: Phase::Booting { cursor: 0 },
            ready: false,
            deadline_in: None,
            pod_restarts: 0,
            termination: None,
            waiting: Some(waiting.clone()),
            origin: now,
            chain: None,
        };
        let report = render(&About::default(), &[side], &[], &[], &pod, now);
        assert!(
            report.text.ends_with(concat!(
                "waiting for: side, readiness probe, 12s (last failure: tcp 127.0.0.1:18099: Connection refused)\n",
                "pod: starting, not ready\n"
            )),
            "{}",
            report.text
        );
        assert!(
            report.json.ends_with(concat!(
                r#""pod_restarts":0,"waiting":{"entry":"side","for":"readiness_probe","waited_ms":12345,"#,
                r#""last_failure":"tcp 127.0.0.1:18099: Connection refused"},"chain":null}"#,
                "\n"
            )),
            "{}",
            report.json
        );
        let init = WaitReport {
            entry: "migrate".into(),
            what: WaitFor::Exit,
            waited: Duration::from_secs(65),
            last_failure: None,
        };
        assert_eq!(init.text(), "waiting for: migrate to exit, 1m 5s");
    }

    /// The timing table, the chain as `systemd-analyze critical-chain`
    /// draws one, and their JSON (docs/control.md, "podinit status --timing").
    #[test]
    fn timing_renders_the_table_and_the_chain() {
        use crate::lifecycle::Link;
        let origin = Instant::now();
        let ms = |n: u64| origin + Duration::from_millis(n);
        let timed = |name, role, t| EntryStatus { timing: t, ..entry(name, role, Some(7), None) };
        let entries = [
            timed(
                "setup",
                Role::Init,
                Timing { asked: Some(ms(3)), started: Some(ms(4)), ready: None, passed: Some(ms(1005)) },
            ),
            timed(
                "side",
                Role::Sidecar,
                Timing {
                    asked: Some(ms(1005)),
                    started: Some(ms(3010)),
                    ready: Some(ms(3010)),
                    passed: Some(ms(3010)),
                },
            ),
            timed(
                "web",
                Role::Main,
                Timing {
                    asked: Some(ms(3011)),
                    started: Some(ms(3012)),
                    ready: Some(ms(4012)),
                    passed: Some(ms(3012)),
                },
            ),
        ];
        let link = |entry, at, took| Link { entry, at: ms(at), took: Duration::from_millis(took) };
        let chain = Chain {
            links: vec![link(0, 3, 1002), link(1, 1005, 2005), link(2, 3011, 1001)],
            ready: ms(4012),
        };
        let pod = PodFacts {
            phase: Phase::Running { next_main: 1 },
            ready: true,
            deadline_in: None,
            pod_restarts: 0,
            termination: None,
            waiting: None,
            origin,
            chain: Some(chain),
        };
        let report = render(&About::default(), &entries, &[], &[], &pod, ms(5000));
        assert_eq!(
            report.timing,
            concat!(
                "podinit pid 0, config none (a plain init), socket \n",
                "NAME   ROLE          ASKED     STARTED       READY        HELD\n",
                "setup  init        @0.003s     @0.004s           -     +1.002s\n",
                "side   sidecar     @1.005s     @3.010s     @3.010s     +2.005s\n",
                "web    main        @3.011s     @3.012s     @4.012s     +0.001s\n",
                "critical chain: web ready @4.012s\n",
                "web @3.011s +1.001s\n",
                "└─side @1.005s +2.005s\n",
                "  └─setup @0.003s +1.002s\n",
            )
        );
        assert!(
            report
                .json
                .contains(r#""timing":{"asked_ms":1005,"started_ms":3010,"ready_ms":3010,"held_ms":2005}"#),
            "{}",
            report.json
        );
        assert!(
            report.json.ends_with(concat!(
                r#""chain":{"total_ms":4012,"links":[{"entry":"setup","at_ms":3,"took_ms":1002},"#,
                r#"{"entry":"side","at_ms":1005,"took_ms":2005},{"entry":"web","at_ms":3011,"took_ms":1001}]}}"#,
                "\n"
            )),
            "{}",
            report.json
        );
        let pod = PodFacts { chain: None, ..pod };
        let report = render(&About::default(), &entries, &[], &[], &pod, ms(5000));
        assert!(
            report.timing.ends_with("critical chain: not every main has been ready yet\n"),
            "{}",
            report.timing
        );
    }
}
