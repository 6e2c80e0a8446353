//! `GET /metrics` of the HTTP endpoint: the pod in the Prometheus text format
//! (version 0.0.4), checked by `promtool check metrics` in the tests.
//!
//! Every series of an entry has the labels `entry` and `role`. Counters end
//! in `_total`; `podinit_entry_start_time_seconds` is Unix time, as
//! Prometheus' own `process_start_time_seconds`. An entry has a
//! `podinit_entry_probe_failures_total` series only for the probes its
//! current spec has.

use std::fmt::Write as _;
use std::time::SystemTime;

use crate::lifecycle::spec::EntrySpec;
use crate::lifecycle::{EntryStatus, Phase, ProbeKind, State};

/// What the event loop counts for the metrics, per entry.
#[derive(Debug, Clone, Default)]
pub struct Counters {
    /// Failed probe attempts (or periods of a push probe), by kind, in the
    /// order of [`ProbeKind::ALL`].
    pub probe_failures: Vec<[u64; 3]>,
    /// When the current instance started (Unix time, seconds).
    pub started_at: Vec<Option<f64>>,
}

impl Counters {
    /// Counters for `entries` entries, all zero.
    pub fn new(entries: usize) -> Counters {
        Counters { probe_failures: vec![[0; 3]; entries], started_at: vec![None; entries] }
    }

    /// Room for `entries` entries (a `podinit reload` added some).
    pub fn grow(&mut self, entries: usize) {
        if self.started_at.len() < entries {
            self.probe_failures.resize(entries, [0; 3]);
            self.started_at.resize(entries, None);
        }
    }

    /// One failed attempt of the `kind` probe of `entry`.
    pub fn probe_failed(&mut self, entry: usize, kind: ProbeKind) {
        let i = ProbeKind::ALL.iter().position(|k| *k == kind).unwrap_or(0);
        if let Some(row) = self.probe_failures.get_mut(entry) {
            row[i] = row[i].saturating_add(1);
        }
    }

    /// `entry` has a new instance, started now.
    pub fn started(&mut self, entry: usize) {
        let now = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        if let Some(slot) = self.started_at.get_mut(entry) {
            *slot = Some(now);
        }
    }
}

/// A label value, escaped as the text format wants (`\`, `"`, newline).
fn label(value: &str) -> String {
    value.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Writes a family's `# HELP` and `# TYPE` lines; its samples follow.
fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// The metrics text of a pod. `specs` are the entries' current specs, in
/// the order of `entries`.
pub fn render(
    entries: &[EntryStatus],
    specs: &[EntrySpec],
    counters: &Counters,
    phase: Phase,
    ready: bool,
    pod_restarts: u32,
) -> String {
    let mut out = String::with_capacity(4096);
    let o = &mut out;
    // Entries removed by `podinit reload` are not the pod's any more.
    let entries: Vec<(usize, &EntryStatus)> =
        entries.iter().enumerate().filter(|(_, e)| !e.removed).collect();
    let flag = |b: bool| u8::from(b);
    head(o, "podinit_info", "gauge", "podinit's version; always 1.");
    let _ = writeln!(o, "podinit_info{{version=\"{}\"}} 1", env!("CARGO_PKG_VERSION"));
    head(o, "podinit_pod_ready", "gauge", "1 when every sidecar and main is ready.");
    let _ = writeln!(o, "podinit_pod_ready {}", flag(ready));
    head(o, "podinit_pod_terminating", "gauge", "1 once termination has begun.");
    let _ = writeln!(
        o,
        "podinit_pod_terminating {}",
        flag(matches!(phase, Phase::Terminating { .. } | Phase::Done))
    );
    head(o, "podinit_pod_restarts_total", "counter", "Restarts of the whole pod (restart_all).");
    let _ = writeln!(o, "podinit_pod_restarts_total {pod_restarts}");
    let labels = |e: &EntryStatus| format!("entry=\"{}\",role=\"{}\"", label(&e.name), e.role.as_str());
    head(o, "podinit_entry_up", "gauge", "1 while the entry's process runs.");
    for &(_, e) in &entries {
        let _ = writeln!(o, "podinit_entry_up{{{}}} {}", labels(e), flag(e.state == State::Running));
    }
    head(o, "podinit_entry_ready", "gauge", "1 while the entry is ready.");
    for &(_, e) in &entries {
        let _ = writeln!(o, "podinit_entry_ready{{{}}} {}", labels(e), flag(e.ready));
    }
    head(o, "podinit_entry_restarts_total", "counter", "Restarts of the entry.");
    for &(_, e) in &entries {
        let _ = writeln!(o, "podinit_entry_restarts_total{{{}}} {}", labels(e), e.restarts);
    }
    head(
        o,
        "podinit_entry_restarts_during_termination_total",
        "counter",
        "Sidecar instances started again during termination (restart_during_termination, KEP-4438); also counted in podinit_entry_restarts_total.",
    );
    for &(_, e) in entries.iter().filter(|(_, e)| e.role == crate::config::Role::Sidecar) {
        let _ = writeln!(
            o,
            "podinit_entry_restarts_during_termination_total{{{}}} {}",
            labels(e),
            e.restarts_in_termination
        );
    }
    head(
        o,
        "podinit_entry_last_exit_status",
        "gauge",
        "The shell status of the entry's last exit (128+N for signal N); absent before one.",
    );
    for &(_, e) in &entries {
        if let Some(exit) = e.last_exit {
            let _ = writeln!(o, "podinit_entry_last_exit_status{{{}}} {}", labels(e), exit.status());
        }
    }
    head(
        o,
        "podinit_entry_probe_failures_total",
        "counter",
        "Failed probe attempts (periods without the message, for push probes), by probe.",
    );
    for &(i, e) in &entries {
        for (k, kind) in ProbeKind::ALL.iter().enumerate() {
            // Only the probes the entry has: no series for one it lacks.
            if specs.get(i).and_then(|s| s.probe(*kind)).is_none() {
                continue;
            }
            let n = counters.probe_failures.get(i).map_or(0, |row| row[k]);
            let _ = writeln!(
                o,
                "podinit_entry_probe_failures_total{{{},probe=\"{}\"}} {n}",
                labels(e),
                kind.as_str()
            );
        }
    }
    head(
        o,
        "podinit_entry_start_time_seconds",
        "gauge",
        "When the entry's current process started, in seconds since the Unix epoch.",
    );
    for &(i, e) in &entries {
        if let (Some(t), State::Running) = (counters.started_at.get(i).copied().flatten(), e.state) {
            let _ = writeln!(o, "podinit_entry_start_time_seconds{{{}}} {t:.3}", labels(e));
        }
    }
    scheduled(o, &entries, &labels);
    out
}

/// The runs of scheduled entries (docs/configuration.md, "Scheduled
/// entries"); no family when the pod has none.
fn scheduled(o: &mut String, entries: &[(usize, &EntryStatus)], labels: &dyn Fn(&EntryStatus) -> String) {
    let runs: Vec<(&EntryStatus, crate::lifecycle::RunStats)> =
        entries.iter().filter_map(|&(_, e)| e.runs.map(|r| (e, r))).collect();
    if runs.is_empty() {
        return;
    }
    type Count = fn(&crate::lifecycle::RunStats) -> u32;
    let families: [(&str, &str, Count); 3] = [
        ("podinit_scheduled_runs_total", "Runs of the scheduled entry started.", |r| r.started),
        (
            "podinit_scheduled_runs_failed_total",
            "Runs of the scheduled entry that ended with a status other than 0.",
            |r| r.failed,
        ),
        (
            "podinit_scheduled_runs_skipped_total",
            "Runs of the scheduled entry that came due and did not start (concurrency_policy, starting_deadline, podinit stop).",
            |r| r.skipped,
        ),
    ];
    for (name, help, value) in families {
        head(o, name, "counter", help);
        for (e, r) in &runs {
            let _ = writeln!(o, "{name}{{{}}} {}", labels(e), value(r));
        }
    }
    head(
        o,
        "podinit_scheduled_last_success_time_seconds",
        "gauge",
        "When the scheduled entry's last successful run ended, in seconds since the Unix epoch; absent before one.",
    );
    let (now, wall) = (std::time::Instant::now(), std::time::SystemTime::now());
    for (e, r) in &runs {
        let Some(at) = r.last_success else { continue };
        let when = wall - now.saturating_duration_since(at);
        let t = when.duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let _ = writeln!(o, "podinit_scheduled_last_success_time_seconds{{{}}} {t:.3}", labels(e));
    }
}
