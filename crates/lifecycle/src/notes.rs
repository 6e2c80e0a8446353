//! What the lifecycle says, as data. A [`Note`] is one [`Said`] about an
//! entry or about the pod: what happened, with exactly the values its
//! sentence and its fields need. The machine never formats a sentence: the
//! runtime renders one with [`Note::text`] when it writes the line, after its
//! level filter, so a debug note that nobody reads is never rendered. Every
//! sentence is written here, one next to the other; [`Note::event`] and the
//! field methods ([`Note::pid`], [`Note::status`], ...) give the fields of
//! the `--log-format json` line and of `podinit events` (docs/reference.md,
//! "Command line"; docs/control.md, "`podinit events`").

use std::fmt;
use std::time::Duration;

use crate::entry::{EntryEvent, StateKind};
use crate::events::{EntryId, Event, Instance};
use crate::exit_status::Exit;
use crate::spec::{HookKind, PodSpec, ProbeKind, Signal};
use crate::wait::WaitFor;

/// How much a [`Note`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// For the most detail only (`PODINIT_LOG=debug` in podinit): why an
    /// event changed nothing, and steps below a threshold.
    Debug,
    /// What the pod does.
    Info,
    /// A failure, or a limit reached.
    Warn,
}

/// Something the lifecycle finds worth saying, about one entry or the pod;
/// the runtime logs it, rendering its sentence with [`Note::text`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    /// The entry it is about (its name is the line's `process`); `None`:
    /// the pod. Every [`Said`] documented as "about an entry" has one.
    pub entry: Option<EntryId>,
    /// What happened.
    pub said: Said,
}

/// What a [`Note`] says: one variant per thing the lifecycle says, with the
/// values its sentence and its fields need. Each variant's documentation
/// gives its level, its `event` name (none for those that have no name) and
/// whether it is about an entry or the pod. Pids are the kernel's numbers;
/// durations are as the config writes them in the sentence and in
/// milliseconds in the `delay_ms` field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Said {
    /// Info, `started`, about an entry: its process runs as `pid`.
    Started {
        /// The new instance's process.
        pid: i32,
    },
    /// Info, `exited`, about an entry: its process `pid` ended with `exit`.
    Exited {
        /// The process that ended.
        pid: i32,
        /// How it ended (the `status` field is its shell status).
        exit: Exit,
    },
    /// Info, `startup_probe_succeeded`, about an entry.
    StartupProbeSucceeded,
    /// Info, `ready`, about an entry: its readiness probe passed
    /// `success_threshold` times in a row.
    Ready,
    /// Warn, `unready`, about an entry: its readiness probe failed
    /// `threshold` times in a row.
    Unready {
        /// The probe's `failure_threshold`.
        threshold: u32,
        /// Why the last attempt failed, when the probe said.
        why: Option<String>,
    },
    /// Warn, `probe_failed`, about an entry: a startup or liveness probe
    /// failed `threshold` times in a row, so the instance is being stopped.
    ProbeFailed {
        /// Which probe.
        kind: ProbeKind,
        /// The probe's `failure_threshold`.
        threshold: u32,
        /// Why the last attempt failed, when the probe said.
        why: Option<String>,
    },
    /// Warn, `hook_failed`, about an entry: its post_start hook failed or
    /// ran out of time, so the instance is being stopped.
    PostStartFailed {
        /// The instance is a sidecar's copy started during termination
        /// (docs/lifecycle.md rule 17a): its stop signal goes out now
        /// rather than at its turn.
        copy: bool,
    },
    /// Warn, `hook_failed`, about an entry: its pre_stop hook failed or ran
    /// out of time; the stop goes on.
    PreStopFailed,
    /// Info, `backoff`, about an entry: it starts again after `delay`.
    Backoff {
        /// Its backoff.
        delay: Duration,
    },
    /// Info, `restarting`, about an entry: a new instance now, by the rules
    /// after an exit (its backoff, if any, is over).
    Restarting,
    /// Info, `restarting`, about an entry: a new instance at once, as
    /// `podinit restart` or `podinit reload` asked, without backoff.
    RestartingAsAsked,
    /// Info, `restarting`, about an entry: a sidecar started again during
    /// termination (`restart_during_termination`, docs/lifecycle.md rule 17a).
    RestartingInTermination,
    /// Warn, `max_restarts`, about an entry: it exited with `exit` once more
    /// after `max` restarts, which fails the pod.
    MaxRestarts {
        /// How its last instance ended (the `status` field).
        exit: Exit,
        /// Its `max_restarts`.
        max: u32,
    },
    /// Warn, `init_failed`, about an entry: an init failed under
    /// `restart_policy = "Never"`, which fails the pod.
    InitFailed {
        /// How it ended (the `status` field).
        exit: Exit,
    },
    /// Warn, `restart_all`, about an entry: its exit matched a `restart_all`
    /// rule, so the whole pod restarts.
    RestartAll {
        /// How it ended (the `status` field).
        exit: Exit,
    },
    /// Info, `completed`, about the pod: its mains have ended as
    /// `completion` asks; termination begins.
    Completed,
    /// Info, `backoff`, about the pod: it starts again after `delay`
    /// (after a `restart_all`).
    PodBackoff {
        /// The pod's backoff.
        delay: Duration,
    },
    /// Info, `pod_restarting`, about the pod: the start sequence runs again.
    PodRestarting {
        /// Restarts of the whole pod so far, this one included.
        restarts: u32,
    },
    /// Info, `stopping`, about an entry: its stop signal goes to `pid`.
    Stopping {
        /// The process (the leader of its group) that gets it.
        pid: i32,
        /// The stop signal.
        signal: Signal,
    },
    /// Warn, `killed`, about an entry: `pid` outlived its grace and gets
    /// SIGKILL.
    Killed {
        /// The process (the leader of its group) that gets it.
        pid: i32,
    },
    /// Info, `terminating`, about the pod: podinit received `signal`, which
    /// begins termination.
    Terminating {
        /// SIGTERM or SIGINT.
        signal: Signal,
    },
    /// Info, `terminating`, about the pod: `podinit shutdown` began
    /// termination.
    ShutdownRequested,
    /// Info, no event name, about the pod: podinit received `signal` once
    /// termination had begun, which changes nothing.
    SignalDuringTermination {
        /// SIGTERM or SIGINT (no `signal` field).
        signal: Signal,
    },
    /// Warn, `budget_spent`, about the pod: a second SIGINT spends the
    /// termination budget at once.
    SecondSigint,
    /// Warn, `budget_spent`, about the pod: `termination_grace_period` has
    /// passed since termination began.
    BudgetSpent {
        /// The pod's `termination_grace_period` (the `delay_ms` field).
        grace: Duration,
    },
    /// Warn, `deadline_exceeded`, about the pod: `[pod] active_deadline` has
    /// passed, which begins termination.
    DeadlineExceeded {
        /// The `active_deadline` (the `delay_ms` field).
        deadline: Duration,
    },
    /// Info, `restart_requested`, about an entry: `podinit restart`.
    RestartRequested {
        /// Its process runs and is stopped first; else a new instance
        /// starts at once.
        running: bool,
    },
    /// Info, `start_requested`, about an entry: `podinit start` of an entry
    /// that `podinit stop` keeps down.
    StartRequested,
    /// Info, `stop_requested`, about an entry: `podinit stop`.
    StopRequested {
        /// Its process runs and is stopped; else it was waiting out its
        /// backoff, which is cancelled.
        running: bool,
    },
    /// Info, `stop_requested`, about an extra run of a scheduled entry
    /// (`NAME#2`): `podinit stop` of it, or of its entry, stops its run; it
    /// is not held (its entry's schedule is what `podinit stop NAME` holds).
    RunStopRequested,
    /// Info, `stop_requested`, about a scheduled entry between runs: `podinit
    /// stop`, no run starts until `podinit start`.
    ScheduleStopRequested,
    /// Info, `signal_requested`, about an entry: `podinit signal` sends
    /// `signal` to `pid`.
    SignalRequested {
        /// The process (the leader of its group) that gets it.
        pid: i32,
        /// The signal asked for.
        signal: Signal,
    },
    /// Info, `reloaded`, about the pod: one line of what `podinit reload`
    /// did, as the client gets it too.
    Reloaded(String),
    /// Info, `waiting`, about an entry: the start sequence has waited
    /// `waited` at it, for `what` (after 4, 8, 16, 32 s, then every
    /// minute: `wait.rs`).
    Waiting {
        /// What it waits for (the `for` field; the `probe` field when it is
        /// a probe).
        what: WaitFor,
        /// How long it has waited at the entry (the `waited_ms` field).
        waited: Duration,
        /// Why the probe it waits for last failed, when one failed and said.
        why: Option<String>,
    },
    /// Debug, about an entry: its liveness probe passes again after
    /// `failures` failures in a row, fewer than its threshold.
    LivenessRecovered {
        /// The failures before this success.
        failures: u32,
    },
    /// Debug, about an entry: one failure of a startup or liveness probe,
    /// `failures` in a row of its `threshold`.
    ProbeAttemptFailed {
        /// Which probe.
        kind: ProbeKind,
        /// Failures in a row, this one included.
        failures: u32,
        /// The probe's `failure_threshold`.
        threshold: u32,
    },
    /// Debug, about an entry: a sidecar passed the start sequence (the next
    /// entry may start).
    PassedStartSequence,
    /// Debug, about an entry: its machine ignored `event` in `state`, for
    /// the reason `why` (the table of ignored pairs, `entry.rs`).
    Ignored {
        /// The event ignored.
        event: EntryEvent,
        /// The state it met.
        state: StateKind,
        /// Why that state ignores that event.
        why: &'static str,
    },
    /// Debug, about an entry: `event` is about an earlier instance than the
    /// current one, and is ignored.
    OldInstance {
        /// The event ignored.
        event: EntryEvent,
        /// The instance it was about.
        instance: Instance,
    },
    /// Debug, about an entry: a spawn's result named a pid that no process
    /// can have (0 or below), and is ignored.
    ImpossiblePid(i32),
    /// Debug, about the pod: an event after `Exit` was emitted, ignored.
    EventAfterExit(Event),
    /// Info, `scheduled_run_started`, about a scheduled entry: a run starts,
    /// `late` after its scheduled time (the `delay_ms` field).
    RunStarted {
        /// How long after its time, by the wall clock.
        late: Duration,
    },
    /// Info, `scheduled_run_finished`, about a scheduled entry: a run ended
    /// with `exit` (the `status` field) after `ran_for` (`delay_ms`); it
    /// never fails the pod.
    RunFinished {
        /// How it ended.
        exit: Exit,
        /// How long it ran.
        ran_for: Duration,
    },
    /// Info, `scheduled_run_skipped`, about a scheduled entry: a run came
    /// due and did not start, for `why` (the `reason` field).
    RunSkipped {
        /// Why.
        why: SkipReason,
    },
    /// Info, `trigger_requested`, about a scheduled entry: `podinit trigger`.
    TriggerRequested,
    /// Info, `suspend_requested` or `resume_requested`, about a scheduled
    /// entry: `podinit suspend` (`suspend`) or `podinit resume`.
    SuspendRequested {
        /// Suspended (else resumed).
        suspend: bool,
    },
    /// Info, `scheduled_run_replaced`, about a scheduled entry: a run came
    /// due while the last one runs (`concurrency_policy = "Replace"`): that
    /// one is stopped, the new one starts once it has exited.
    RunReplaced,
    /// Warn, `scheduled_run_max_restarts`, about a scheduled entry: its run
    /// failed again (`status`) after `max` restarts within it: the run ends
    /// failed (a Job's `backoffLimit`), the pod goes on.
    RunMaxRestarts {
        /// How its last instance ended.
        exit: Exit,
        /// The entry's `max_restarts`.
        max: u32,
    },
    /// Warn, `scheduled_run_deadline_exceeded`, about a scheduled entry: its
    /// run has run its `active_deadline` (`delay_ms`) and is stopped.
    RunDeadlineExceeded {
        /// The entry's `active_deadline`.
        deadline: Duration,
    },
}

/// Why a scheduled entry's run did not start ([`Said::RunSkipped`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipReason {
    /// The last run still runs (or is being spawned):
    /// `concurrency_policy = "Forbid"`.
    StillRunning,
    /// The last run is being stopped.
    BeingStopped,
    /// It came due `late`, more than its `starting_deadline` after its time.
    Missed {
        /// How late.
        late: Duration,
        /// Its `starting_deadline`.
        deadline: Duration,
    },
    /// `podinit stop` keeps it down.
    Held,
    /// `max` runs run already (`concurrency_policy = "Allow"` with
    /// `max_concurrent`).
    MaxConcurrent {
        /// Its `max_concurrent`.
        max: u32,
    },
}

impl SkipReason {
    /// The `reason` field: `still_running`, `being_stopped`,
    /// `missed_starting_deadline`, `held`, `max_concurrent`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::StillRunning => "still_running",
            SkipReason::BeingStopped => "being_stopped",
            SkipReason::Missed { .. } => "missed_starting_deadline",
            SkipReason::Held => "held",
            SkipReason::MaxConcurrent { .. } => "max_concurrent",
        }
    }
}

/// `n` and `word`, plural unless `n` is 1: `1 restart`, `2 restarts`.
pub fn counted(n: impl Into<u64>, word: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

impl Note {
    /// A note about `entry`.
    pub(crate) fn entry(entry: EntryId, said: Said) -> Note {
        Note { entry: Some(entry), said }
    }

    /// A note about the pod.
    pub(crate) fn pod(said: Said) -> Note {
        Note { entry: None, said }
    }

    /// How much it matters.
    pub fn level(&self) -> Level {
        use Said as S;
        match self.said {
            S::LivenessRecovered { .. }
            | S::ProbeAttemptFailed { .. }
            | S::PassedStartSequence
            | S::Ignored { .. }
            | S::OldInstance { .. }
            | S::ImpossiblePid(_)
            | S::EventAfterExit(_) => Level::Debug,
            S::RunDeadlineExceeded { .. } | S::RunMaxRestarts { .. } => Level::Warn,
            S::RunStarted { .. }
            | S::RunFinished { .. }
            | S::RunSkipped { .. }
            | S::RunReplaced
            | S::TriggerRequested
            | S::SuspendRequested { .. } => Level::Info,
            S::Unready { .. }
            | S::ProbeFailed { .. }
            | S::PostStartFailed { .. }
            | S::PreStopFailed
            | S::MaxRestarts { .. }
            | S::InitFailed { .. }
            | S::RestartAll { .. }
            | S::Killed { .. }
            | S::SecondSigint
            | S::BudgetSpent { .. }
            | S::DeadlineExceeded { .. } => Level::Warn,
            S::Started { .. }
            | S::Exited { .. }
            | S::StartupProbeSucceeded
            | S::Ready
            | S::Backoff { .. }
            | S::Restarting
            | S::RestartingAsAsked
            | S::RestartingInTermination
            | S::Completed
            | S::PodBackoff { .. }
            | S::PodRestarting { .. }
            | S::Stopping { .. }
            | S::Terminating { .. }
            | S::ShutdownRequested
            | S::SignalDuringTermination { .. }
            | S::RestartRequested { .. }
            | S::StartRequested
            | S::StopRequested { .. }
            | S::RunStopRequested
            | S::ScheduleStopRequested
            | S::SignalRequested { .. }
            | S::Reloaded(_)
            | S::Waiting { .. } => Level::Info,
        }
    }

    /// A stable name for machines (`started`, `exited`, `backoff`...), the
    /// `event` field of `--log-format json` and what `podinit events` sends;
    /// empty for the notes that have none (every debug note).
    pub fn event(&self) -> &'static str {
        use Said as S;
        match self.said {
            S::Started { .. } => "started",
            S::Exited { .. } => "exited",
            S::StartupProbeSucceeded => "startup_probe_succeeded",
            S::Ready => "ready",
            S::Unready { .. } => "unready",
            S::ProbeFailed { .. } => "probe_failed",
            S::PostStartFailed { .. } | S::PreStopFailed => "hook_failed",
            S::Backoff { .. } | S::PodBackoff { .. } => "backoff",
            S::Restarting | S::RestartingAsAsked | S::RestartingInTermination => "restarting",
            S::MaxRestarts { .. } => "max_restarts",
            S::InitFailed { .. } => "init_failed",
            S::RestartAll { .. } => "restart_all",
            S::Completed => "completed",
            S::PodRestarting { .. } => "pod_restarting",
            S::Stopping { .. } => "stopping",
            S::Killed { .. } => "killed",
            S::Terminating { .. } | S::ShutdownRequested => "terminating",
            S::SecondSigint | S::BudgetSpent { .. } => "budget_spent",
            S::DeadlineExceeded { .. } => "deadline_exceeded",
            S::RestartRequested { .. } => "restart_requested",
            S::StartRequested => "start_requested",
            S::StopRequested { .. } | S::RunStopRequested | S::ScheduleStopRequested => "stop_requested",
            S::SignalRequested { .. } => "signal_requested",
            S::Reloaded(_) => "reloaded",
            S::Waiting { .. } => "waiting",
            S::RunStarted { .. } => "scheduled_run_started",
            S::RunFinished { .. } => "scheduled_run_finished",
            S::RunSkipped { .. } => "scheduled_run_skipped",
            S::RunReplaced => "scheduled_run_replaced",
            S::TriggerRequested => "trigger_requested",
            S::SuspendRequested { suspend: true } => "suspend_requested",
            S::SuspendRequested { suspend: false } => "resume_requested",
            S::RunDeadlineExceeded { .. } => "scheduled_run_deadline_exceeded",
            S::RunMaxRestarts { .. } => "scheduled_run_max_restarts",
            S::SignalDuringTermination { .. }
            | S::LivenessRecovered { .. }
            | S::ProbeAttemptFailed { .. }
            | S::PassedStartSequence
            | S::Ignored { .. }
            | S::OldInstance { .. }
            | S::ImpossiblePid(_)
            | S::EventAfterExit(_) => "",
        }
    }

    /// The process it names, for the `pid` field.
    pub fn pid(&self) -> Option<i32> {
        match self.said {
            Said::Started { pid }
            | Said::Exited { pid, .. }
            | Said::Stopping { pid, .. }
            | Said::Killed { pid }
            | Said::SignalRequested { pid, .. } => Some(pid),
            _ => None,
        }
    }

    /// The shell status of an exit it reports (exit code, or 128 + signal),
    /// for the `status` field.
    pub fn status(&self) -> Option<i32> {
        match self.said {
            Said::Exited { exit, .. }
            | Said::MaxRestarts { exit, .. }
            | Said::InitFailed { exit }
            | Said::RestartAll { exit }
            | Said::RunFinished { exit, .. }
            | Said::RunMaxRestarts { exit, .. } => Some(exit.status()),
            _ => None,
        }
    }

    /// The signal it sends or that began termination, for the `signal` field.
    pub fn signal(&self) -> Option<Signal> {
        match self.said {
            Said::Stopping { signal, .. }
            | Said::Terminating { signal }
            | Said::SignalRequested { signal, .. } => Some(signal),
            _ => None,
        }
    }

    /// The duration it names (a backoff, the budget, the active deadline),
    /// for the `delay_ms` field.
    pub fn delay(&self) -> Option<Duration> {
        match self.said {
            Said::Backoff { delay } | Said::PodBackoff { delay } => Some(delay),
            Said::BudgetSpent { grace } => Some(grace),
            Said::DeadlineExceeded { deadline } | Said::RunDeadlineExceeded { deadline } => Some(deadline),
            Said::RunStarted { late } => Some(late),
            Said::RunFinished { ran_for, .. } => Some(ran_for),
            _ => None,
        }
    }

    /// Why a scheduled run was skipped, for the `reason` field.
    pub fn reason(&self) -> Option<&'static str> {
        match self.said {
            Said::RunSkipped { why } => Some(why.as_str()),
            _ => None,
        }
    }

    /// The probe whose threshold it reports, or that the start sequence
    /// waits for, for the `probe` field.
    pub fn probe(&self) -> Option<ProbeKind> {
        match self.said {
            Said::Unready { .. } => Some(ProbeKind::Readiness),
            Said::ProbeFailed { kind, .. } => Some(kind),
            Said::Waiting { what, .. } => what.probe(),
            _ => None,
        }
    }

    /// What the start sequence waits for, for the `for` field.
    pub fn waiting_for(&self) -> Option<WaitFor> {
        match self.said {
            Said::Waiting { what, .. } => Some(what),
            _ => None,
        }
    }

    /// How long the start sequence has waited, for the `waited_ms` field.
    pub fn waited(&self) -> Option<Duration> {
        match self.said {
            Said::Waiting { waited, .. } => Some(waited),
            _ => None,
        }
    }

    /// The hook that failed, for the `hook` field.
    pub fn hook(&self) -> Option<HookKind> {
        match self.said {
            Said::PostStartFailed { .. } => Some(HookKind::PostStart),
            Said::PreStopFailed => Some(HookKind::PreStop),
            _ => None,
        }
    }

    /// The sentence, for people, with the entry names of `spec`: the spec of
    /// the pod the note came from (an entry keeps its name and its index for
    /// the pod's whole life, so the spec after the step names it as the step
    /// did). It is rendered when it is displayed, not before.
    pub fn text<'a>(&'a self, spec: &'a PodSpec) -> Text<'a> {
        Text { note: self, spec }
    }
}

/// The sentence of a [`Note`], rendered when it is displayed
/// ([`Note::text`]).
#[derive(Debug, Clone, Copy)]
pub struct Text<'a> {
    note: &'a Note,
    spec: &'a PodSpec,
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use Said as S;
        let name = self.note.entry.and_then(|e| self.spec.entries.get(e)).map_or("", |e| e.name.as_str());
        // ` (last: WHY)` after a threshold, when the last attempt said why.
        let last = |f: &mut fmt::Formatter<'_>, why: &Option<String>| match why {
            Some(why) => write!(f, " (last: {why})"),
            None => Ok(()),
        };
        match &self.note.said {
            S::Started { pid } => write!(f, "{name} started (pid {pid})"),
            S::Exited { pid, exit } => write!(f, "{name} (pid {pid}) exited with {exit}"),
            S::StartupProbeSucceeded => write!(f, "{name} startup probe succeeded"),
            S::Ready => write!(f, "{name} is ready"),
            S::Unready { threshold, why } => {
                write!(f, "{name} is not ready: readiness probe failed {threshold} times")?;
                last(f, why)
            }
            S::ProbeFailed { kind, threshold, why } => {
                write!(f, "{name} {kind} probe failed {threshold} times")?;
                last(f, why)?;
                f.write_str("; stopping it")
            }
            S::PostStartFailed { copy: false } => write!(f, "{name} post_start hook failed; stopping it"),
            S::PostStartFailed { copy: true } => write!(f, "{name} post_start hook failed: stopping it"),
            S::PreStopFailed => write!(f, "{name} pre_stop hook failed (the stop goes on)"),
            S::Backoff { delay } => write!(f, "restarting {name} in {}", humantime::format_duration(*delay)),
            S::Restarting => write!(f, "restarting {name}"),
            S::RestartingAsAsked => write!(f, "restarting {name} at once, as asked"),
            S::RestartingInTermination => {
                write!(f, "restarting {name} during termination (restart_during_termination)")
            }
            S::MaxRestarts { exit, max } => {
                write!(f, "{name} exited with {exit} after {} (max_restarts): the pod fails", counted(*max, "restart"))
            }
            S::InitFailed { exit } => {
                write!(f, "init {name} failed with {exit}; restart_policy is Never, so the pod fails")
            }
            S::RestartAll { exit } => {
                write!(f, "{name} exited with {exit}: restart_all, restarting the whole pod")
            }
            S::Completed => f.write_str("pod completed"),
            S::PodBackoff { delay } => {
                write!(f, "restarting the pod in {}", humantime::format_duration(*delay))
            }
            S::PodRestarting { restarts } => {
                write!(f, "restarting the pod (restart {restarts} of the whole pod)")
            }
            S::Stopping { pid, signal } => write!(f, "stopping {name} (pid {pid}) with {signal}"),
            S::Killed { pid } => write!(f, "{name} (pid {pid}) did not stop in time; sending SIGKILL"),
            S::Terminating { signal } => write!(f, "{signal} received: terminating the pod"),
            S::ShutdownRequested => f.write_str("shutdown asked for: terminating the pod"),
            S::SignalDuringTermination { signal } => {
                write!(f, "{signal} received during termination; nothing changes")
            }
            S::SecondSigint => f.write_str("second SIGINT: stopping everything now"),
            S::BudgetSpent { .. } => {
                f.write_str("termination_grace_period is spent: stopping every process left")
            }
            S::DeadlineExceeded { deadline } => write!(
                f,
                "active_deadline ({}) has passed: terminating the pod",
                humantime::format_duration(*deadline)
            ),
            S::RestartRequested { running: true } => write!(f, "restart of {name} asked for: stopping it"),
            S::RestartRequested { running: false } => write!(f, "restart of {name} asked for: starting it"),
            S::StartRequested => write!(f, "start of {name} asked for: starting it"),
            S::StopRequested { running: true } => {
                write!(f, "stop of {name} asked for: stopping it until `podinit start {name}`")
            }
            S::StopRequested { running: false } => write!(f, "{name} stopped while waiting out its backoff"),
            S::RunStopRequested => write!(f, "stop of {name} asked for: stopping this run"),
            S::ScheduleStopRequested => {
                write!(f, "stop of {name} asked for: no run starts until `podinit start {name}`")
            }
            S::SignalRequested { pid, signal } => {
                write!(f, "sending {signal} to {name} (pid {pid}), as asked")
            }
            S::Reloaded(line) => write!(f, "reload: {line}"),
            S::Waiting { what, waited, why } => {
                // Whole seconds: the notes come at whole seconds of waiting.
                let waited = humantime::format_duration(Duration::from_secs(waited.as_secs()));
                match what {
                    WaitFor::Exit => write!(f, "waiting {waited} for {name} to exit"),
                    _ => write!(f, "waiting {waited} for {name}: {}", what.human()),
                }?;
                match why {
                    Some(why) => write!(f, " (last failure: {why})"),
                    None => Ok(()),
                }
            }
            S::LivenessRecovered { failures } => {
                let s = if *failures == 1 { "" } else { "s" };
                write!(f, "{name} liveness probe passes again after {failures} failure{s}")
            }
            S::ProbeAttemptFailed { kind, failures, threshold } => {
                write!(f, "{name} {kind} probe failed ({failures}/{threshold})")
            }
            S::PassedStartSequence => write!(f, "{name} passed the start sequence"),
            S::Ignored { event, state, why } => {
                write!(f, "{event:?} ignored while {}: {why}", state.as_str())
            }
            S::OldInstance { event, instance } => {
                write!(f, "{event:?} of an old instance ({instance}) ignored")
            }
            S::ImpossiblePid(pid) => write!(f, "spawned with an impossible pid {pid}: ignored"),
            S::EventAfterExit(event) => write!(f, "event after exit ignored: {event:?}"),
            S::RunStarted { late } if late.as_secs() == 0 => write!(f, "scheduled run of {name} starting"),
            S::RunStarted { late } => write!(
                f,
                "scheduled run of {name} starting, {} late",
                humantime::format_duration(Duration::from_secs(late.as_secs()))
            ),
            S::RunFinished { exit, ran_for } => write!(
                f,
                "scheduled run of {name} finished with {exit} after {}",
                humantime::format_duration(Duration::from_millis(
                    u64::try_from(ran_for.as_millis()).unwrap_or(u64::MAX)
                ))
            ),
            S::RunSkipped { why } => {
                write!(f, "scheduled run of {name} skipped: ")?;
                match why {
                    SkipReason::StillRunning => {
                        f.write_str("the last run still runs (concurrency_policy Forbid)")
                    }
                    SkipReason::BeingStopped => f.write_str("the last run is being stopped"),
                    SkipReason::Missed { late, deadline } => write!(
                        f,
                        "{} late, past its starting_deadline of {}",
                        humantime::format_duration(Duration::from_secs(late.as_secs())),
                        humantime::format_duration(*deadline)
                    ),
                    SkipReason::Held => write!(f, "held by `podinit stop` (`podinit start {name}` ends it)"),
                    SkipReason::MaxConcurrent { max } => {
                        write!(f, "{} already (max_concurrent)", counted(*max, "run"))
                    }
                }
            }
            S::TriggerRequested => write!(f, "run of {name} asked for: starting it"),
            S::SuspendRequested { suspend: true } => {
                write!(f, "suspend of {name} asked for: no run starts until `podinit resume {name}`")
            }
            S::SuspendRequested { suspend: false } => {
                write!(f, "resume of {name} asked for: its schedule goes on")
            }
            S::RunReplaced => {
                write!(f, "scheduled run of {name} due while the last one runs: replacing it (concurrency_policy Replace)")
            }
            S::RunMaxRestarts { exit, max } => write!(
                f,
                "scheduled run of {name} exited with {exit} after {} within it (max_restarts): the run has failed",
                counted(*max, "restart")
            ),
            S::RunDeadlineExceeded { deadline } => write!(
                f,
                "scheduled run of {name} has run its active_deadline ({}): stopping it",
                humantime::format_duration(*deadline)
            ),
        }
    }
}
