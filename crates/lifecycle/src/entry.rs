//! One entry's machine: its states ([`EntryState`], whose variants carry
//! exactly their data) and [`Pod::on_entry`], the one `match` on (state,
//! event) whose arms are the rules, each citing its source, or an "ignored"
//! with its reason. There is no catch-all arm: a new state or event does not
//! compile until each of its pairs is decided, and `tests/table.rs` walks
//! every pair against a written table.
//!
//! What an arm does beyond one line lives in the module of its concern
//! (`start.rs`, `probes.rs`, `stop.rs`, `restarts.rs`, `termination.rs`).
//!
//! Facts that stay outside the state enum, and why:
//! - `instance`: which spawn is the current one. Every event carries its
//!   instance and news about an earlier one is dropped before the states
//!   are looked at: a stale exit, probe or timer is the race every
//!   supervisor has between a process's death and its restart.
//! - `restarts`, `restarts_in_termination`, `spawn_failures` and `backoff`:
//!   counters over the entry's whole life, across every state; a restart
//!   does not reset them (docs/lifecycle.md rule 8, KEP-4438's count).
//! - `last_exit`: the status of the last instance, shown in any state and
//!   read for the pod's exit status (rule 20).
//! - `probe_failure`: why the last startup or readiness attempt failed,
//!   kept while the start sequence waits at the entry, for the notes that
//!   say why it waits (`wait.rs`). It is only said, never decides anything,
//!   so it stays beside the state rather than in it.
//! - Whether the start sequence has moved past an entry is the pod's
//!   [`Phase::Booting`] cursor, not a fact of the entry: every entry before
//!   the cursor has passed, none after it (removed entries are skipped).
//! - An instance's settings from a `podinit reload` ([`Live::next`]) are
//!   data of its running state: they wait for its exit, whatever its stage.

use std::num::NonZeroI32;
use std::time::Instant;

use crate::backoff::Backoff;
use crate::events::{EntryId, Instance};
#[cfg(doc)]
use crate::events::{Event, Timer};
use crate::exit_status::Exit;
use crate::notes::Said;
#[cfg(doc)]
use crate::pod::Phase;
use crate::pod::Pod;
use crate::spec::{HookKind, ProbeKind};
use crate::status::StopGrace;

/// One entry: its state, and the facts that outlive a state (see above).
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// What it is doing now.
    pub(crate) state: EntryState,
    /// Its current (or last) instance; 0 before its first spawn.
    pub(crate) instance: Instance,
    /// Instances started after its first.
    pub(crate) restarts: u32,
    /// A scheduled entry's runs: started, failed, skipped, the last one
    /// (an extra run's are counted on the entry it runs for).
    pub(crate) runs: crate::status::RunStats,
    /// The run this entry's process belongs to, while it is a scheduled
    /// entry's: restarts within it, its first instance (its
    /// `active_deadline` counts from that one's start, as a Job's).
    pub(crate) run: Run,
    /// An extra run of this scheduled entry, under `concurrency_policy =
    /// "Allow"`: it runs beside that entry's own run with the same settings
    /// (`scheduled.rs`), shown as `NAME#2`, `NAME#3`...
    pub(crate) run_of: Option<EntryId>,
    /// How its last instance ended.
    pub(crate) last_exit: Option<Exit>,
    /// The delay before its next restart (docs/lifecycle.md rule 8).
    pub(crate) backoff: Backoff,
    /// Spawns that failed in a row (reset by a successful one).
    pub(crate) spawn_failures: u32,
    /// How many instances were started during termination (KEP-4438's
    /// counter of such restarts).
    pub(crate) restarts_in_termination: u32,
    /// Why its last startup or readiness attempt failed, kept only while
    /// the start sequence waits at it (`wait.rs`).
    pub(crate) probe_failure: Option<(ProbeKind, String)>,
    /// When it first reached each point of its start (`timing.rs`): only
    /// said, like `probe_failure`, never decides anything.
    pub(crate) timing: crate::timing::Timing,
}

impl Entry {
    /// An entry not reached yet, with a backoff of `backoff`.
    pub(crate) fn new(backoff: crate::spec::BackoffSpec) -> Entry {
        Entry {
            state: EntryState::Waiting,
            instance: 0,
            restarts: 0,
            runs: crate::status::RunStats::default(),
            run: Run::default(),
            run_of: None,
            last_exit: None,
            backoff: Backoff::new(backoff),
            spawn_failures: 0,
            restarts_in_termination: 0,
            probe_failure: None,
            timing: crate::timing::Timing::default(),
        }
    }

    pub(crate) fn live(&self) -> Option<&Live> {
        match &self.state {
            EntryState::Running(l) => Some(l),
            _ => None,
        }
    }

    /// Has a process, or is about to have one.
    pub(crate) fn is_alive(&self) -> bool {
        matches!(
            self.state,
            EntryState::Running(_) | EntryState::Spawning { .. } | EntryState::SpawningCopy { .. }
        )
    }

    /// Removed by `podinit reload`: gone, or its process being stopped.
    pub(crate) fn is_removed(&self) -> bool {
        match &self.state {
            EntryState::Removed => true,
            EntryState::Running(live) => {
                live.stop().is_some_and(|s| matches!(s.cause, StopCause::Remove { .. }))
            }
            _ => false,
        }
    }
}

/// A scheduled entry's current (or last) run: one or more instances, when
/// its `restart_policy` is `"OnFailure"` (a Job's, kubernetes.io "Jobs").
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Run {
    /// Its first instance: the key of its `active_deadline` timer.
    pub(crate) first: Instance,
    /// When it started.
    pub(crate) started_at: Option<Instant>,
    /// Instances started after its first (bounded by `max_restarts`).
    pub(crate) restarts: u32,
}

/// What one entry is doing: the states of its machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EntryState {
    /// Not reached yet in the start sequence.
    Waiting,
    /// A spawn was asked for; its result has not come back.
    Spawning { asked_at: Instant },
    /// A copy of a sidecar started again during termination (KEP-4438) is
    /// being spawned: it will run its post_start and no probes, and be
    /// stopped at its turn.
    SpawningCopy { asked_at: Instant },
    /// Its process runs.
    Running(Live),
    /// Waiting out its backoff before a restart.
    Backoff { until: Instant },
    /// Its process ended and nothing follows by itself: a succeeded init,
    /// a main its policy does not restart, any entry once termination has
    /// begun (`podinit restart` may start it again before that).
    Exited,
    /// Stopped by `podinit stop`: kept down until `podinit start`.
    Held,
    /// Removed from the config by `podinit reload` and its process gone:
    /// never started again, left out of the status.
    Removed,
}

impl EntryState {
    /// Which state this is, without its data.
    pub(crate) fn kind(&self) -> StateKind {
        match self {
            EntryState::Waiting => StateKind::Waiting,
            EntryState::Spawning { .. } => StateKind::Spawning,
            EntryState::SpawningCopy { .. } => StateKind::SpawningCopy,
            EntryState::Running(live) => match &live.stage {
                Stage::Starting(Starting::HookAndProbe { .. }) => StateKind::StartingHookAndProbe,
                Stage::Starting(Starting::Hook) => StateKind::StartingHook,
                Stage::Starting(Starting::Probe { .. }) => StateKind::StartingProbe,
                Stage::Started { .. } => StateKind::Started,
                Stage::Stopping(stop) => match stop.step {
                    StopStep::PreStop => StateKind::StoppingPreStop,
                    StopStep::Queued => StateKind::StoppingQueued,
                    StopStep::PostStart => StateKind::StoppingPostStart,
                    StopStep::Signalled { .. } => StateKind::StoppingSignalled,
                    StopStep::Killed { .. } => StateKind::StoppingKilled,
                },
            },
            EntryState::Backoff { .. } => StateKind::Backoff,
            EntryState::Exited => StateKind::Exited,
            EntryState::Held => StateKind::Held,
            EntryState::Removed => StateKind::Removed,
        }
    }
}

/// The states of an entry's machine without their data, one per arm group of
/// `Pod::on_entry`: what a debug note about an ignored event names
/// ([`Said::Ignored`]), and what the test that walks every (state, event)
/// pair plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateKind {
    /// Not reached yet in the start sequence.
    Waiting,
    /// A spawn was asked for; its result has not come back.
    Spawning,
    /// A copy of a sidecar started again during termination is being spawned.
    SpawningCopy,
    /// Runs; waits for its post_start and its startup probe.
    StartingHookAndProbe,
    /// Runs; waits for its post_start.
    StartingHook,
    /// Runs; waits for its startup probe.
    StartingProbe,
    /// Runs and has started: liveness and readiness probes run.
    Started,
    /// Being stopped: its pre_stop runs.
    StoppingPreStop,
    /// Being stopped: its stop signal waits for its turn in termination.
    StoppingQueued,
    /// Being stopped: a copy started during termination runs its post_start.
    StoppingPostStart,
    /// Being stopped: its stop signal went out.
    StoppingSignalled,
    /// Being stopped: SIGKILL went out.
    StoppingKilled,
    /// Waits out its backoff before a restart.
    Backoff,
    /// Its process ended and nothing follows by itself.
    Exited,
    /// Stopped by `podinit stop`.
    Held,
    /// Removed by `podinit reload`.
    Removed,
}

impl StateKind {
    /// The name notes give it.
    pub fn as_str(self) -> &'static str {
        match self {
            StateKind::Waiting => "waiting",
            StateKind::Spawning => "spawning",
            StateKind::SpawningCopy => "spawning a copy",
            StateKind::StartingHookAndProbe => "starting (post_start, startup probe)",
            StateKind::StartingHook => "starting (post_start)",
            StateKind::StartingProbe => "starting (startup probe)",
            StateKind::Started => "started",
            StateKind::StoppingPreStop => "stopping (pre_stop)",
            StateKind::StoppingQueued => "stopping (queued)",
            StateKind::StoppingPostStart => "stopping (a copy's post_start)",
            StateKind::StoppingSignalled => "stopping (signalled)",
            StateKind::StoppingKilled => "stopping (killed)",
            StateKind::Backoff => "backoff",
            StateKind::Exited => "exited",
            StateKind::Held => "held",
            StateKind::Removed => "removed",
        }
    }
}

/// A running instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Live {
    /// Its process, the leader of its own process group.
    pub(crate) pid: NonZeroI32,
    /// When its spawn was asked for: probes' initial delays and the backoff
    /// count from it.
    pub(crate) spawned_at: Instant,
    pub(crate) stage: Stage,
    /// Settings a `podinit reload` gave it while this instance runs: the
    /// next instance runs with them (docs/control.md, "Reload").
    pub(crate) next: Option<Box<crate::spec::EntrySpec>>,
}

impl Live {
    pub(crate) fn pid(&self) -> i32 {
        self.pid.get()
    }

    pub(crate) fn started(&self) -> bool {
        match &self.stage {
            Stage::Starting(_) => false,
            Stage::Started { .. } => true,
            Stage::Stopping(s) => s.started,
        }
    }

    pub(crate) fn ready(&self) -> bool {
        match &self.stage {
            Stage::Starting(_) => false,
            Stage::Started { ready, .. } => *ready,
            Stage::Stopping(s) => s.ready,
        }
    }

    pub(crate) fn stop(&self) -> Option<&Stop> {
        match &self.stage {
            Stage::Stopping(s) => Some(s),
            _ => None,
        }
    }
}

/// Where a running instance is in its own life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Not started yet.
    Starting(Starting),
    /// Started (post_start returned, startup probe passed): liveness and
    /// readiness probes run.
    Started { ready: bool, readiness: Streak, liveness: Streak },
    /// Being stopped.
    Stopping(Stop),
}

impl Stage {
    /// Just started: ready at once unless a readiness probe decides it.
    pub(crate) fn started(has_readiness_probe: bool) -> Stage {
        Stage::Started {
            ready: !has_readiness_probe,
            readiness: Streak::default(),
            liveness: Streak::default(),
        }
    }
}

/// What an instance still waits for before it is started: its post_start
/// hook to return and its startup probe to pass (kubernetes.io "Sidecar
/// Containers"; docs/lifecycle.md rule 3). One that waits for neither is
/// started at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Starting {
    /// Its post_start hook runs and its startup probe has not passed yet.
    HookAndProbe { startup: Streak },
    /// Its post_start hook runs (its startup probe passed, or it has none).
    Hook,
    /// Its startup probe has not passed yet (post_start returned, or it has none).
    Probe { startup: Streak },
}

impl Starting {
    /// What a new instance waits for; `None`: nothing, it is started.
    pub(crate) fn new(has_post_start: bool, has_startup_probe: bool) -> Option<Starting> {
        let startup = Streak::default();
        match (has_post_start, has_startup_probe) {
            (true, true) => Some(Starting::HookAndProbe { startup }),
            (true, false) => Some(Starting::Hook),
            (false, true) => Some(Starting::Probe { startup }),
            (false, false) => None,
        }
    }
}

/// One stop of a running instance: pre_stop, stop signal, grace, SIGKILL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stop {
    pub(crate) cause: StopCause,
    /// The end of the stop's grace: its own (a failure's stop: the probe's or
    /// the pod's `termination_grace_period` from when it began) or the pod's
    /// termination budget. SIGKILL comes at max(this, stop signal + 2 s).
    pub(crate) deadline: Instant,
    /// How far the stop has come.
    pub(crate) step: StopStep,
    /// Whether the instance had started (for `podinit status`).
    pub(crate) started: bool,
    /// Readiness goes on while stopping (it only reports).
    pub(crate) ready: bool,
    pub(crate) readiness: Streak,
}

impl Stop {
    /// A stop of `live` that begins now; it keeps the instance's readiness,
    /// which goes on while it stops.
    pub(crate) fn begin(live: &Live, cause: StopCause, deadline: Instant, step: StopStep) -> Stop {
        let (ready, readiness) = match &live.stage {
            Stage::Started { ready, readiness, .. } => (*ready, *readiness),
            _ => (false, Streak::default()),
        };
        Stop { cause, deadline, step, started: live.started(), ready, readiness }
    }

    /// A stop of an instance that has just been spawned, so never started
    /// (termination, or a restart of the whole pod, came first).
    pub(crate) fn unstarted(cause: StopCause, deadline: Instant, step: StopStep) -> Stop {
        Stop { cause, deadline, step, started: false, ready: false, readiness: Streak::default() }
    }
}

/// How far one stop has come: pre_stop, then the stop signal (at once, or at
/// its turn in termination), then SIGKILL once the grace is over
/// (kubernetes.io "Container Lifecycle Hooks", "Pod Lifecycle" on
/// termination; docs/lifecycle.md rules 15-17).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopStep {
    /// Its pre_stop hook runs: the stop signal waits for it (or the deadline).
    PreStop,
    /// Its stop signal waits for its turn in termination (a sidecar waits for
    /// every main and later sidecar), or for the budget to be spent.
    Queued,
    /// A copy started during termination (KEP-4438) runs its post_start
    /// hook: queued as above, but stopped at once if the hook fails.
    PostStart,
    /// The stop signal went out `at`; SIGKILL is armed for `kill_at`.
    Signalled { at: Instant, kill_at: Instant },
    /// SIGKILL has been sent too.
    Killed { signalled_at: Instant, kill_at: Instant },
}

impl StopStep {
    /// Where a stop begins: its pre_stop when it has one.
    pub(crate) fn first(has_pre_stop: bool) -> StopStep {
        if has_pre_stop {
            StopStep::PreStop
        } else {
            StopStep::Queued
        }
    }

    /// When the stop signal went out, if it has.
    pub(crate) fn signalled_at(self) -> Option<Instant> {
        match self {
            StopStep::PreStop | StopStep::Queued | StopStep::PostStart => None,
            StopStep::Signalled { at, .. } | StopStep::Killed { signalled_at: at, .. } => Some(at),
        }
    }
}

/// Why an instance is being stopped, which decides what follows its exit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StopCause {
    /// A startup/liveness probe or post_start hook failed: restart by the rules after.
    Failed,
    /// `podinit restart`, or new settings from `podinit reload`: a new
    /// instance at once, without backoff.
    Restart,
    /// `podinit stop`: kept down ([`EntryState::Held`]) until `podinit start`.
    Hold,
    /// Removed by `podinit reload`: [`EntryState::Removed`] once it has
    /// exited, never started again. `grace` is what its time comes out of:
    /// its own, or the budget once termination (or a restart of the whole
    /// pod) took the stop over.
    Remove { grace: StopGrace },
    /// Pod termination, or a restart of the whole pod: never restarted by
    /// itself.
    Termination,
}

impl StopCause {
    /// What the stop's time comes out of (`podinit status`).
    pub(crate) fn grace(self) -> StopGrace {
        match self {
            StopCause::Termination => StopGrace::Termination,
            StopCause::Remove { grace } => grace,
            StopCause::Failed | StopCause::Restart | StopCause::Hold => StopGrace::Own,
        }
    }

    /// The cause once termination or a restart of the whole pod takes a stop
    /// under way over: nothing is restarted after it; a removed entry stays
    /// removed.
    pub(crate) fn taken_over(self) -> StopCause {
        match self {
            StopCause::Remove { .. } => StopCause::Remove { grace: StopGrace::Termination },
            StopCause::Failed | StopCause::Restart | StopCause::Hold | StopCause::Termination => {
                StopCause::Termination
            }
        }
    }
}

/// Consecutive results of one probe (its thresholds count these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Streak {
    pub(crate) successes: u32,
    pub(crate) failures: u32,
}

impl Streak {
    pub(crate) fn add(&mut self, ok: bool) {
        if ok {
            self.successes = self.successes.saturating_add(1);
            self.failures = 0;
        } else {
            self.failures = self.failures.saturating_add(1);
            self.successes = 0;
        }
    }
}

/// An event about one entry's current instance, or its backoff: what the
/// entry's machine (`Pod::on_entry`) takes, and what a debug note about an
/// ignored one names ([`Said::Ignored`], [`Said::OldInstance`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryEvent {
    /// Its process runs as this pid ([`Event::Spawned`]).
    Spawned(NonZeroI32),
    /// It could not be started, with this status ([`Event::SpawnFailed`]).
    SpawnFailed(i32),
    /// Its process ended ([`Event::Exited`]).
    Exited(Exit),
    /// One probe attempt's result, `true` when it passed ([`Event::Probe`]).
    Probe(ProbeKind, bool),
    /// A hook returned, `false` when it failed or timed out ([`Event::Hook`]).
    Hook(HookKind, bool),
    /// The instance's stop deadline ([`Timer::Stop`]).
    StopTimer,
    /// The entry's backoff is over ([`Timer::Backoff`]).
    BackoffOver,
    /// A scheduled entry's run is due, this long after its time
    /// ([`Event::RunDue`]).
    RunDue(std::time::Duration),
    /// A scheduled entry's run has run its `active_deadline`
    /// ([`Timer::RunDeadline`]).
    RunDeadline,
}

/// What the entry machine made of an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    /// A rule applied: the state, the actions or the notes show what.
    Applied,
    /// The state does not expect the event, for this reason; noted at debug
    /// level and otherwise without effect.
    Ignored(&'static str),
}

/// Why a probe result is ignored when the entry has no such probe (its
/// runtime starts only the probes its spec has, so this is a safeguard).
pub(crate) const NO_SUCH_PROBE: &str = "it has no such probe";

impl Pod {
    /// The machine of one entry: each (state, event) pair is written below,
    /// as a rule that cites its source, or as ignored with its reason (noted
    /// at debug level). There is no catch-all arm: a new state or event does
    /// not compile until each of its pairs is decided. News about an earlier
    /// instance is dropped before the states are looked at.
    pub(crate) fn on_entry(
        &mut self,
        entry: EntryId,
        instance: Option<Instance>,
        ev: EntryEvent,
        now: Instant,
    ) -> Outcome {
        use EntryEvent as Ev;
        use EntryState as S;
        use HookKind as H;
        use Outcome::{Applied, Ignored};
        use ProbeKind as P;
        // A running instance in stage `$stage`.
        macro_rules! running {
            ($stage:pat) => {
                S::Running(Live { stage: $stage, .. })
            };
        }
        // A running instance whose stop is at step `$step` (bound to `$stop`).
        macro_rules! stopping {
            ($stop:ident @ $step:pat) => {
                S::Running(Live { stage: Stage::Stopping($stop @ Stop { step: $step, .. }), .. })
            };
            ($step:pat) => {
                S::Running(Live { stage: Stage::Stopping(Stop { step: $step, .. }), .. })
            };
        }
        let Some(e) = self.entries.get(entry) else { return Ignored("no such entry") };
        if let Some(instance) = instance.filter(|&i| i != e.instance) {
            self.note(entry, Said::OldInstance { event: ev, instance });
            return Ignored("news about an earlier instance");
        }
        let outcome = match (&e.state, ev) {
            // ----- not reached yet in the start sequence (rules 1-5) -----
            (S::Waiting, Ev::Spawned(_) | Ev::SpawnFailed(_)) => Ignored("no spawn is under way"),
            (S::Waiting, Ev::Exited(_) | Ev::Probe(..) | Ev::Hook(..) | Ev::StopTimer) => {
                Ignored("it has no process")
            }
            (S::Waiting, Ev::BackoffOver) => Ignored("it is not in backoff"),
            // Runs start once the start sequence has reached the mains
            // (docs/configuration.md, "Scheduled entries").
            (S::Waiting, Ev::RunDue(_)) => Ignored("the mains have not been reached"),
            (S::Waiting, Ev::RunDeadline) => Ignored("it has no process"),

            // ----- a spawn asked for: its result (rules 1 and 5; a copy: rule 17a) -----
            (S::Spawning { asked_at }, Ev::Spawned(pid)) => {
                let asked_at = *asked_at;
                self.on_spawned(entry, pid, asked_at, false, now);
                Applied
            }
            (S::SpawningCopy { asked_at }, Ev::Spawned(pid)) => {
                let asked_at = *asked_at;
                self.on_spawned(entry, pid, asked_at, true, now);
                Applied
            }
            // Not started (126, 127): an exit with that status, for the rules
            // after an exit (docs/signals.md, "Exit statuses").
            (S::Spawning { .. } | S::SpawningCopy { .. }, Ev::SpawnFailed(status)) => {
                let e = &mut self.entries[entry];
                e.spawn_failures = e.spawn_failures.saturating_add(1);
                self.on_exit(entry, Exit::Code(status), now);
                Applied
            }
            (
                S::Spawning { .. } | S::SpawningCopy { .. },
                Ev::Exited(_) | Ev::Probe(..) | Ev::Hook(..) | Ev::StopTimer,
            ) => Ignored("its process does not run yet"),
            (S::Spawning { .. } | S::SpawningCopy { .. }, Ev::BackoffOver) => Ignored("it is not in backoff"),
            // A run due while the last one is still being spawned: skipped,
            // whatever the policy (there is nothing to replace yet).
            (S::Spawning { .. }, Ev::RunDue(late)) => self.on_run_due(entry, late, now),
            (S::SpawningCopy { .. }, Ev::RunDue(_)) => Ignored("only a sidecar has a copy"),
            (S::Spawning { .. } | S::SpawningCopy { .. }, Ev::RunDeadline) => {
                Ignored("its process does not run yet")
            }

            // ----- running, whatever its stage -----
            (S::Running(_), Ev::Spawned(_) | Ev::SpawnFailed(_)) => Ignored("its process runs already"),
            // Its process ended: restarted or not by rules 6-8 and 7a-7b,
            // held, removed, or one less to wait for in termination (14).
            (S::Running(live), Ev::Exited(exit)) => {
                let pid = live.pid();
                self.note(entry, Said::Exited { pid, exit });
                self.on_exit(entry, exit, now);
                Applied
            }
            (S::Running(_), Ev::BackoffOver) => Ignored("it is not in backoff"),
            // A run due while the last one runs: concurrency_policy decides
            // (a CronJob's concurrencyPolicy, kubernetes.io "CronJob").
            (S::Running(_), Ev::RunDue(late)) => self.on_run_due(entry, late, now),
            // A run past its active_deadline is stopped through its stop
            // path (a Job's activeDeadlineSeconds, kubernetes.io "Jobs").
            (running!(Stage::Starting(_) | Stage::Started { .. }), Ev::RunDeadline) => {
                self.on_run_deadline(entry, now);
                Applied
            }
            (running!(Stage::Stopping(_)), Ev::RunDeadline) => Ignored("its stop has begun"),

            // ----- starting: its post_start and its startup probe (rules 3, 5, 9) -----
            (running!(Stage::Starting(Starting::HookAndProbe { startup })), Ev::Hook(H::PostStart, ok)) => {
                let startup = *startup;
                self.on_post_start(entry, ok, Some(startup), now);
                Applied
            }
            (running!(Stage::Starting(Starting::Hook)), Ev::Hook(H::PostStart, ok)) => {
                self.on_post_start(entry, ok, None, now);
                Applied
            }
            (running!(Stage::Starting(Starting::Probe { .. })), Ev::Hook(H::PostStart, _)) => {
                Ignored("its post_start has returned")
            }
            (running!(Stage::Starting(Starting::HookAndProbe { startup })), Ev::Probe(P::Startup, ok)) => {
                let startup = *startup;
                self.on_startup_result(entry, true, startup, ok, now)
            }
            (running!(Stage::Starting(Starting::Probe { startup })), Ev::Probe(P::Startup, ok)) => {
                let startup = *startup;
                self.on_startup_result(entry, false, startup, ok, now)
            }
            (running!(Stage::Starting(Starting::Hook)), Ev::Probe(P::Startup, _)) => {
                Ignored("its startup probe has passed")
            }
            (running!(Stage::Starting(_)), Ev::Probe(P::Liveness | P::Readiness, _)) => {
                Ignored("it has not started yet")
            }
            (running!(Stage::Starting(_)), Ev::Hook(H::PreStop, _) | Ev::StopTimer) => {
                Ignored("it is not being stopped")
            }

            // ----- started: liveness and readiness (rules 10-12) -----
            (running!(Stage::Started { ready, readiness, liveness }), Ev::Probe(P::Liveness, ok)) => {
                let (ready, readiness, liveness) = (*ready, *readiness, *liveness);
                self.on_liveness_result(entry, (ready, readiness, liveness), ok, now)
            }
            (running!(Stage::Started { ready, readiness, liveness }), Ev::Probe(P::Readiness, ok)) => {
                let (ready, readiness, liveness) = (*ready, *readiness, *liveness);
                self.on_readiness_result(entry, (ready, readiness, liveness), ok, now)
            }
            (running!(Stage::Started { .. }), Ev::Probe(P::Startup, _)) => {
                Ignored("its startup probe has passed")
            }
            (running!(Stage::Started { .. }), Ev::Hook(H::PostStart, _)) => {
                Ignored("its post_start has returned")
            }
            (running!(Stage::Started { .. }), Ev::Hook(H::PreStop, _) | Ev::StopTimer) => {
                Ignored("it is not being stopped")
            }

            // ----- stopping: pre_stop, stop signal, SIGKILL (rules 10, 13-17a;
            // kubernetes.io "Container Lifecycle Hooks") -----
            // Readiness goes on while it stops: it only reports (rule 13).
            (running!(Stage::Stopping(stop)), Ev::Probe(P::Readiness, ok)) => {
                let stop = stop.clone();
                self.on_readiness_while_stopping(entry, stop, ok)
            }
            // Startup and liveness probes end when a stop begins (rules 10, 13).
            (running!(Stage::Stopping(_)), Ev::Probe(P::Startup | P::Liveness, _)) => {
                Ignored("its stop has begun")
            }
            (stopping!(stop @ StopStep::PreStop), Ev::Hook(H::PreStop, ok)) => {
                let stop = stop.clone();
                self.on_pre_stop(entry, stop, ok, now);
                Applied
            }
            // Its pre_stop returned, ran out of time, or never ran (a copy's,
            // rule 17a): a late result changes nothing.
            (
                stopping!(
                    StopStep::Queued
                        | StopStep::PostStart
                        | StopStep::Signalled { .. }
                        | StopStep::Killed { .. }
                ),
                Ev::Hook(H::PreStop, _),
            ) => Ignored("its pre_stop is over or never ran"),
            // A copy started during termination whose post_start failed: its
            // stop signal now, not at its turn (rule 17a).
            (stopping!(stop @ StopStep::PostStart), Ev::Hook(H::PostStart, false)) => {
                let deadline = stop.deadline;
                self.note(entry, Said::PostStartFailed { copy: true });
                self.send_stop(entry, now, deadline);
                Applied
            }
            // It returned: the copy waits for its turn like any sidecar (rule 17a).
            (stopping!(stop @ StopStep::PostStart), Ev::Hook(H::PostStart, true)) => {
                let stop = Stop { step: StopStep::Queued, ..stop.clone() };
                self.set_stage(entry, Stage::Stopping(stop));
                Applied
            }
            // A post_start that returns once the stop has begun changes nothing.
            (
                stopping!(
                    StopStep::PreStop
                        | StopStep::Queued
                        | StopStep::Signalled { .. }
                        | StopStep::Killed { .. }
                ),
                Ev::Hook(H::PostStart, _),
            ) => Ignored("its stop has begun"),
            // The grace ran out before the stop signal (during pre_stop, or
            // waiting for its turn): the stop signal now, SIGKILL 2 s later
            // (rules 10 and 15).
            (stopping!(StopStep::PreStop | StopStep::Queued | StopStep::PostStart), Ev::StopTimer) => {
                self.send_stop(entry, now, now);
                Applied
            }
            // The grace after the stop signal is over: SIGKILL (rule 15).
            (stopping!(stop @ StopStep::Signalled { .. }), Ev::StopTimer) => {
                let stop = stop.clone();
                self.kill_at_deadline(entry, stop);
                Applied
            }
            (stopping!(StopStep::Killed { .. }), Ev::StopTimer) => Ignored("SIGKILL has been sent already"),

            // ----- waiting out its backoff (rule 8; during termination, 17a) -----
            (S::Backoff { .. }, Ev::BackoffOver) => {
                self.on_backoff_over(entry, now);
                Applied
            }
            (S::Backoff { .. }, Ev::Spawned(_) | Ev::SpawnFailed(_)) => Ignored("no spawn is under way"),
            (S::Backoff { .. }, Ev::Exited(_) | Ev::Probe(..) | Ev::Hook(..) | Ev::StopTimer) => {
                Ignored("it has no process")
            }
            // A scheduled entry's run between two tries (`restart_policy =
            // "OnFailure"`): a run due meets its concurrency_policy, and its
            // active_deadline ends it (a Job's, kubernetes.io "Jobs").
            (S::Backoff { .. }, Ev::RunDue(late)) => self.on_run_due(entry, late, now),
            (S::Backoff { .. }, Ev::RunDeadline) => {
                self.on_run_deadline(entry, now);
                Applied
            }

            // ----- ended: exited, held by `podinit stop`, removed by `podinit reload` -----
            (S::Exited | S::Held | S::Removed, Ev::Spawned(_) | Ev::SpawnFailed(_)) => {
                Ignored("no spawn is under way")
            }
            (
                S::Exited | S::Held | S::Removed,
                Ev::Exited(_) | Ev::Probe(..) | Ev::Hook(..) | Ev::StopTimer | Ev::RunDeadline,
            ) => Ignored("it has no process"),
            (S::Exited | S::Held | S::Removed, Ev::BackoffOver) => Ignored("it is not in backoff"),
            // Idle between runs: a run starts, unless the rules skip it;
            // held by `podinit stop`: skipped.
            (S::Exited | S::Held, Ev::RunDue(late)) => self.on_run_due(entry, late, now),
            (S::Removed, Ev::RunDue(_)) => Ignored("it was removed by podinit reload"),
        };
        if let Ignored(why) = outcome {
            let state = self.entries[entry].state.kind();
            self.note(entry, Said::Ignored { event: ev, state, why });
        }
        outcome
    }

    pub(crate) fn set_stage(&mut self, entry: EntryId, stage: Stage) {
        if let EntryState::Running(live) = &mut self.entries[entry].state {
            live.stage = stage;
        }
    }
}
