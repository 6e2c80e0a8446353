//! The start sequence and how an instance becomes started: inits and
//! sidecars one at a time in file order, then the mains, one spawn per step
//! (docs/lifecycle.md rules 1-5); an instance is started once its post_start
//! returned and its startup probe passed (rules 3 and 9), and a sidecar
//! passes the sequence then (when ready, with `hold_until = "ready"`). The
//! sequence's progress is the [`Phase::Booting`] cursor alone. Nothing here
//! spawns once termination has begun: a copy during termination (rule 17a)
//! is asked for by `restarts.rs`, and its spawn's result is handled here.

use std::num::NonZeroI32;
use std::time::Instant;

use crate::entry::{
    EntryState, Live, Outcome, Stage, Starting, Stop, StopCause, StopStep, Streak, NO_SUCH_PROBE,
};
use crate::events::{Action, EntryId};
use crate::notes::Said;
use crate::pod::{Phase, Pod};
use crate::spec::{HoldUntil, HookKind, ProbeKind, Role};

impl Pod {
    /// Moves the start sequence as far as it can go, then starts mains, one
    /// spawn at a time: a spawn's result moves it on.
    pub(crate) fn advance(&mut self, now: Instant) {
        loop {
            match self.phase {
                Phase::Booting { cursor } => {
                    let Some(&entry) = self.sequence.get(cursor) else {
                        self.phase = Phase::Running { next_main: 0 };
                        self.begin_schedules();
                        continue;
                    };
                    // An entry removed by `podinit reload` holds nothing.
                    if self.entries[entry].is_removed() {
                        self.phase = Phase::Booting { cursor: cursor + 1 };
                        continue;
                    }
                    if self.entries[entry].state == EntryState::Waiting {
                        self.spawn(entry, now);
                    }
                    return;
                }
                Phase::Running { next_main } => {
                    let Some(&entry) = self.mains.get(next_main) else { return };
                    let e = &self.entries[entry];
                    match &e.state {
                        EntryState::Waiting => {
                            self.spawn(entry, now);
                            return;
                        }
                        // Its spawn's result moves the sequence on.
                        EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => return,
                        // A main's post_start holds the next main (KEP-753).
                        EntryState::Running(Live {
                            stage: Stage::Starting(Starting::HookAndProbe { .. } | Starting::Hook),
                            ..
                        }) => return,
                        _ => self.phase = Phase::Running { next_main: next_main + 1 },
                    }
                }
                Phase::Restarting | Phase::Terminating { .. } | Phase::Done => return,
            }
        }
    }

    /// Whether the start sequence waits at `entry` (its cursor is there).
    fn waits_at(&self, entry: EntryId) -> bool {
        match self.phase {
            Phase::Booting { cursor } => self.sequence.get(cursor) == Some(&entry),
            Phase::Running { .. } | Phase::Restarting | Phase::Terminating { .. } | Phase::Done => false,
        }
    }

    /// Moves the start sequence past `entry` if it waits at it: an init
    /// succeeded, a sidecar started, or was stopped by `podinit stop`.
    pub(crate) fn pass(&mut self, entry: EntryId) {
        if let (true, Phase::Booting { cursor }) = (self.waits_at(entry), self.phase) {
            self.phase = Phase::Booting { cursor: cursor + 1 };
        }
    }

    /// Latches a sidecar into the sequence once it is started (and ready when
    /// `hold_until = "ready"`), if the sequence waits at it.
    pub(crate) fn check_sidecar_passed(&mut self, entry: EntryId, now: Instant) {
        let spec = &self.spec.entries[entry];
        let e = &self.entries[entry];
        let Some(live) = e.live() else { return };
        if spec.role != Role::Sidecar || !self.waits_at(entry) || !live.started() {
            return;
        }
        if spec.hold_until == HoldUntil::Ready && !live.ready() {
            return;
        }
        self.note(entry, Said::PassedStartSequence);
        self.pass(entry);
        self.advance(now);
    }

    pub(crate) fn spawn(&mut self, entry: EntryId, now: Instant) {
        debug_assert!(!self.terminating());
        self.spawn_unchecked(entry, now, false);
    }

    /// Asks for a new instance: `copy` during termination (KEP-4438).
    pub(crate) fn spawn_unchecked(&mut self, entry: EntryId, now: Instant, copy: bool) {
        let e = &mut self.entries[entry];
        if e.instance > 0 {
            e.restarts = e.restarts.saturating_add(1);
        }
        e.instance = e.instance.wrapping_add(1);
        // A new instance has not failed a probe yet.
        e.probe_failure = None;
        e.state = if copy {
            EntryState::SpawningCopy { asked_at: now }
        } else {
            EntryState::Spawning { asked_at: now }
        };
        let instance = e.instance;
        self.out.push(Action::Spawn { entry, instance });
    }

    pub(crate) fn on_spawned(
        &mut self,
        entry: EntryId,
        pid: NonZeroI32,
        spawned_at: Instant,
        copy: bool,
        now: Instant,
    ) {
        let spec = &self.spec.entries[entry];
        let instance = self.entries[entry].instance;
        let has_post_start = spec.post_start.is_some();
        let startup = spec.startup_probe.as_ref().map(|p| p.initial_delay);
        let has_readiness = spec.readiness_probe.is_some();
        self.note(entry, Said::Started { pid: pid.get() });
        let waits = Starting::new(has_post_start, startup.is_some());
        let e = &mut self.entries[entry];
        e.spawn_failures = 0;
        let live = |stage| EntryState::Running(Live { pid, spawned_at, stage, next: None });
        if self.phase == Phase::Restarting {
            // The pod restarts while it was being spawned: killed like the rest.
            let step = StopStep::Killed { signalled_at: now, kill_at: now };
            e.state = live(Stage::Stopping(Stop::unstarted(StopCause::Termination, now, step)));
            self.kill_actions(entry, pid.get());
            return;
        }
        if let Phase::Terminating { deadline, .. } = self.phase {
            // Termination began while it was being spawned, or it was started
            // again during termination (KEP-4438): it only gets stopped, at
            // its turn, with its stop signal and what is left of the budget;
            // no pre_stop (that ran once, at the start of termination) and no
            // probes. A copy started again runs its post_start as any start
            // does (KEP-4438, "Alpha limitations"); if that fails, it is
            // stopped at once, as a failed post_start stops any instance.
            let runs_post_start = copy && has_post_start;
            let step = if runs_post_start { StopStep::PostStart } else { StopStep::Queued };
            e.state = live(Stage::Stopping(Stop::unstarted(StopCause::Termination, deadline, step)));
            if runs_post_start {
                let pid = pid.get();
                self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PostStart });
            }
            self.drive_termination(now);
            return;
        }
        e.state = live(waits.map_or_else(|| Stage::started(has_readiness), Stage::Starting));
        let pid = pid.get();
        if has_post_start {
            self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PostStart });
        }
        if let Some(delay) = startup {
            let not_before = spawned_at + delay;
            self.out.push(Action::StartProbe { entry, instance, pid, kind: ProbeKind::Startup, not_before });
        }
        if waits.is_none() {
            self.on_started(entry, now);
        }
        // A main's spawn result moves the mains on (one spawn per step).
        self.advance(now);
    }

    /// The post_start hook of an instance that waits for it returned; its
    /// startup probe has not passed yet when `startup` is its streak.
    pub(crate) fn on_post_start(&mut self, entry: EntryId, ok: bool, startup: Option<Streak>, now: Instant) {
        if ok {
            match startup {
                Some(startup) => self.set_stage(entry, Stage::Starting(Starting::Probe { startup })),
                None => {
                    let has_readiness = self.spec.entries[entry].readiness_probe.is_some();
                    self.set_stage(entry, Stage::started(has_readiness));
                    self.on_started(entry, now);
                }
            }
            return;
        }
        self.note(entry, Said::PostStartFailed { copy: false });
        self.stop_failed(entry, None, now);
        // It never became started; a main must not hold the next one.
        self.advance(now);
    }

    /// A startup probe's result while the instance waits for it (rule 9);
    /// `hook_runs`: its post_start has not returned yet.
    pub(crate) fn on_startup_result(
        &mut self,
        entry: EntryId,
        hook_runs: bool,
        mut startup: Streak,
        ok: bool,
        now: Instant,
    ) -> Outcome {
        let kind = ProbeKind::Startup;
        let Some(probe) = self.spec.entries[entry].probe(kind) else {
            return Outcome::Ignored(NO_SUCH_PROBE);
        };
        let (failure_threshold, probe_grace) = (probe.failure_threshold, probe.termination_grace_period);
        startup.add(ok);
        if ok {
            self.note(entry, Said::StartupProbeSucceeded);
            self.out.push(Action::StopProbe { entry, kind });
            if hook_runs {
                self.set_stage(entry, Stage::Starting(Starting::Hook));
            } else {
                let has_readiness = self.spec.entries[entry].readiness_probe.is_some();
                self.set_stage(entry, Stage::started(has_readiness));
                self.on_started(entry, now);
            }
        } else {
            let waits =
                if hook_runs { Starting::HookAndProbe { startup } } else { Starting::Probe { startup } };
            self.set_stage(entry, Stage::Starting(waits));
            self.probe_failure(entry, kind, startup.failures, failure_threshold, probe_grace, now);
        }
        Outcome::Applied
    }

    /// The instance has just become started (its stage is `Started`):
    /// liveness and readiness probes begin, and the start sequence may move
    /// on.
    fn on_started(&mut self, entry: EntryId, now: Instant) {
        let Some(live) = self.entries[entry].live() else { return };
        let (pid, spawned_at) = (live.pid(), live.spawned_at);
        let instance = self.entries[entry].instance;
        let spec = &self.spec.entries[entry];
        if let Some(p) = &spec.liveness_probe {
            let not_before = spawned_at + p.initial_delay;
            self.out.push(Action::StartProbe { entry, instance, pid, kind: ProbeKind::Liveness, not_before });
        }
        if let Some(p) = &spec.readiness_probe {
            // The readiness probe runs at once when the entry becomes started
            // (docs/lifecycle.md rule 9), its initial_delay still counted from the spawn.
            let not_before = (spawned_at + p.initial_delay).max(now);
            self.out.push(Action::StartProbe {
                entry,
                instance,
                pid,
                kind: ProbeKind::Readiness,
                not_before,
            });
        }
        self.check_sidecar_passed(entry, now);
        self.advance(now);
    }
}
