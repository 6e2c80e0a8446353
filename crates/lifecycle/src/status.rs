//! What the pod says about itself: each entry's [`EntryStatus`] for `podinit
//! status`, `/metrics` and the logs, the pod's readiness, and the times the
//! runtime needs to know (the active deadline, the end of the termination
//! budget, the end of a signal's grace). Read-only: nothing here changes the
//! machine, so the runtime may ask at any moment between two steps.

use std::time::{Duration, Instant};

use crate::entry::{EntryState, Live, StopStep};
use crate::events::EntryId;
use crate::exit_status::Exit;
use crate::pod::{Phase, Pod};
use crate::spec::{RestartPolicy, Role, MIN_STOP_GRACE};
use crate::wait::WaitFor;

/// What an entry is doing now, as `podinit status` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not reached yet in the start sequence.
    Waiting,
    /// Asked to spawn; no pid yet.
    Spawning,
    /// Its process runs.
    Running,
    /// Waiting out its backoff before a restart.
    Backoff,
    /// Finished for good (a succeeded init, a main not restarted, anything after termination).
    Exited,
}

/// One entry's status, for `podinit status` and logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryStatus {
    pub name: String,
    pub role: Role,
    pub state: State,
    pub pid: Option<i32>,
    pub restarts: u32,
    pub last_exit: Option<Exit>,
    pub started: bool,
    pub ready: bool,
    pub stopping: bool,
    /// Kept down by `podinit stop` (its state is `Exited`).
    pub held: bool,
    /// Removed by `podinit reload` (left out of the status once exited).
    pub removed: bool,
    /// Instances started during termination (`restart_during_termination`,
    /// KEP-4438): also counted in `restarts`.
    pub restarts_in_termination: u32,
    /// Where its stop stands, while it is being stopped.
    pub stop: Option<StopStatus>,
    /// A scheduled entry's runs; `None` for the other roles.
    pub runs: Option<RunStats>,
    /// When it first reached each point of its start (`podinit status
    /// --timing`).
    pub timing: crate::timing::Timing,
}

/// What a scheduled entry's runs have done, for `podinit status` and
/// `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Runs started.
    pub started: u32,
    /// Runs that ended with a status other than 0 (or could not start).
    pub failed: u32,
    /// Runs that came due and did not start.
    pub skipped: u32,
    /// When the last run started.
    pub last_start: Option<Instant>,
    /// How long the last run that ended ran.
    pub last_ran_for: Option<Duration>,
    /// When the last run that succeeded ended.
    pub last_success: Option<Instant>,
}

/// Where one instance's stop stands, for `podinit status` (docs/control.md):
/// which time it draws on and when SIGKILL comes at the latest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopStatus {
    /// What the stop's time comes out of.
    pub grace: StopGrace,
    /// Its pre_stop hook still runs; the stop signal waits for it.
    pub in_pre_stop: bool,
    /// When the stop signal went out; `None`: not yet (pre_stop runs, or a
    /// sidecar waits for its turn in termination).
    pub signalled_at: Option<Instant>,
    /// When SIGKILL comes at the latest: armed once the stop signal is out;
    /// before that, the end of its grace plus the 2 s floor after the stop
    /// signal (kubernetes.io "Container Lifecycle Hooks").
    pub kill_by: Instant,
    /// SIGKILL has been sent.
    pub killed: bool,
}

/// What a stop's time comes out of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopGrace {
    /// The pod's termination budget (`termination_grace_period`, counted once
    /// for the whole termination, docs/lifecycle.md).
    Termination,
    /// A stop of its own, outside termination (a failed probe or post_start,
    /// `podinit restart`/`stop`): the probe's grace or the pod's
    /// `termination_grace_period`, counted from the stop's start.
    Own,
}

/// What the pod waits for before it is ready: one entry and what that entry
/// has still to do ([`Pod::awaited`]), for a one-line status such as the
/// `STATUS=` podinit gives a service manager (docs/systemd.md). The same
/// [`WaitFor`] the start sequence's waiting notes name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Awaited {
    /// The entry.
    pub entry: EntryId,
    /// What it has still to do.
    pub what: WaitFor,
}

impl Pod {
    /// Whether the pod is ready: every sidecar and main ready, and not
    /// terminating. Init entries do not count (docs/lifecycle.md rule 12).
    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Running { .. })
            && self.mains_started()
            && self
                .entries
                .iter()
                .zip(&self.spec.entries)
                // Scheduled entries hold no readiness: a run comes and goes.
                .filter(|(e, s)| matches!(s.role, Role::Sidecar | Role::Main) && !e.is_removed())
                .all(|(e, _)| e.live().is_some_and(Live::ready))
    }

    /// What the pod waits for before it is ready: while the start sequence
    /// runs, the entry it waits at; once the mains are being started, the
    /// first sidecar or main (in file order) that is not ready. `None` when
    /// the pod is ready, or restarts, or terminates.
    pub fn awaited(&self) -> Option<Awaited> {
        let entry = match self.phase {
            Phase::Booting { cursor } => *self.sequence.get(cursor)?,
            Phase::Running { .. } => (0..self.entries.len()).find(|&i| {
                let e = &self.entries[i];
                self.spec.entries[i].role != Role::Init
                    && !e.is_removed()
                    && !e.live().is_some_and(Live::ready)
            })?,
            Phase::Restarting | Phase::Terminating { .. } | Phase::Done => return None,
        };
        // An entry that has started and is ready holds nothing; at the
        // sequence's cursor it is about to pass, on its readiness.
        let what = self.holds(entry).unwrap_or(WaitFor::ReadinessProbe);
        Some(Awaited { entry, what })
    }

    /// Each entry's status, in file order (entries added by `podinit
    /// reload` after them; removed ones included, marked `removed`).
    pub fn status(&self) -> Vec<EntryStatus> {
        self.entries
            .iter()
            .zip(&self.spec.entries)
            .map(|(e, s)| EntryStatus {
                name: s.name.clone(),
                role: s.role,
                state: match e.state {
                    EntryState::Waiting => State::Waiting,
                    EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => State::Spawning,
                    EntryState::Running(_) => State::Running,
                    EntryState::Backoff { .. } => State::Backoff,
                    EntryState::Exited | EntryState::Held | EntryState::Removed => State::Exited,
                },
                pid: e.live().map(Live::pid),
                restarts: e.restarts,
                last_exit: e.last_exit,
                started: e.live().is_some_and(Live::started),
                // A scheduled entry's run is never counted ready: it holds
                // no readiness (docs/configuration.md, "Scheduled entries").
                ready: s.role != Role::Scheduled && e.live().is_some_and(Live::ready),
                stopping: e.live().is_some_and(|l| l.stop().is_some()),
                held: e.state == EntryState::Held,
                removed: e.is_removed(),
                restarts_in_termination: e.restarts_in_termination,
                stop: e.live().and_then(Live::stop).map(|s| StopStatus {
                    grace: s.cause.grace(),
                    in_pre_stop: s.step == StopStep::PreStop,
                    signalled_at: s.step.signalled_at(),
                    kill_by: match s.step {
                        StopStep::Signalled { kill_at, .. } | StopStep::Killed { kill_at, .. } => kill_at,
                        StopStep::PreStop | StopStep::Queued | StopStep::PostStart => {
                            s.deadline + MIN_STOP_GRACE
                        }
                    },
                    killed: matches!(s.step, StopStep::Killed { .. }),
                }),
                runs: (s.role == Role::Scheduled && e.run_of.is_none()).then_some(e.runs),
                timing: e.timing,
            })
            .collect()
    }

    /// When `[pod] active_deadline` passes, while it may still (not once
    /// termination has begun).
    pub fn deadline_at(&self) -> Option<Instant> {
        self.deadline_at.filter(|_| !self.terminating() && self.phase != Phase::Done)
    }

    /// When the termination budget is spent, while the pod terminates and
    /// it is not spent yet (docs/lifecycle.md, "Termination").
    pub fn termination_deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Terminating { deadline, spent: false } => Some(deadline),
            _ => None,
        }
    }

    /// When the grace period of a termination that SIGTERM or SIGINT began
    /// ends, also once the pod is done: whoever sent the signal (`docker
    /// stop`, the kubelet) SIGKILLs podinit then, so its last output must be
    /// out by then. `None` when no signal began termination.
    pub fn signal_grace_end(&self) -> Option<Instant> {
        self.signal_grace_end
    }

    /// How many times the whole pod was restarted (`restart_all`).
    pub fn pod_restarts(&self) -> u32 {
        self.pod_restarts
    }

    /// Whether any process may be started after the ones the start sequence
    /// starts: a sidecar (always restarted), an init or a main whose restart
    /// policy is not `Never`, any restart rule. `false` only for a pod of
    /// mains that each run once, such as a plain init (`podinit -- cmd`).
    pub fn may_start_again(&self) -> bool {
        self.spec.entries.iter().any(|e| {
            e.role == Role::Sidecar
                || e.restart_policy.unwrap_or(self.spec.restart_policy) != RestartPolicy::Never
                || !e.restart_rules.is_empty()
        })
    }
}
