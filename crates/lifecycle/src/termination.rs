//! Termination of the pod (docs/lifecycle.md rules 13-18): every pre_stop
//! at once, then stop signals in order (inits and mains first, sidecars one
//! at a time in reverse order once everything after them is gone), one
//! budget for it all, spent early by a second SIGINT; and the exit status
//! once no process is left (rule 20, docs/signals.md "Exit statuses").
//! A spawn whose result is still to come when termination begins is waited
//! for and then stopped, so that `Exit` is never emitted while a process
//! of the pod may run.

use std::time::Instant;

use crate::entry::{Entry, EntryState, Live, Stage, Stop, StopCause, StopStep};
use crate::events::{Action, EntryId, Timer};
use crate::exit_status::{self, Exit};
use crate::notes::{Note, Said};
use crate::pod::{Phase, Pod};
use crate::spec::{HookKind, ProbeKind, Role, Signal, MIN_STOP_GRACE};

impl Pod {
    pub(crate) fn on_terminate(&mut self, signal: Signal, now: Instant) {
        if signal == Signal::INT {
            self.sigints = self.sigints.saturating_add(1);
        }
        match self.phase {
            Phase::Terminating { spent, .. } => {
                // A second SIGINT (counted from the first SIGINT podinit
                // received, whatever began termination) spends the budget;
                // SIGTERM, or a first SIGINT, changes nothing.
                if signal == Signal::INT && self.sigints >= 2 && !spent {
                    self.notes.push(Note::pod(Said::SecondSigint));
                    self.spend_budget(now);
                } else {
                    self.notes.push(Note::pod(Said::SignalDuringTermination { signal }));
                }
            }
            Phase::Done => {}
            _ => {
                self.notes.push(Note::pod(Said::Terminating { signal }));
                self.term_signal = Some(signal);
                self.signal_grace_end = Some(now + self.spec.termination_grace_period);
                self.begin_termination(now);
            }
        }
    }

    /// From now on nothing restarts; every running entry's pre_stop starts,
    /// inits and mains get their stop signal after it, sidecars in reverse
    /// order once everything after them is gone.
    pub(crate) fn begin_termination(&mut self, now: Instant) {
        let was_restarting = self.phase == Phase::Restarting;
        let deadline = now + self.spec.termination_grace_period;
        self.phase = Phase::Terminating { deadline, spent: false };
        self.out.push(Action::ArmTimer { timer: Timer::Budget, at: deadline });
        if self.spec.active_deadline.is_some() {
            self.out.push(Action::CancelTimer(Timer::Deadline));
        }
        if was_restarting {
            self.out.push(Action::CancelTimer(Timer::PodRestart));
        }
        for entry in 0..self.entries.len() {
            if self.role(entry) == Role::Scheduled {
                // No new run starts (docs/configuration.md, "Scheduled entries").
                self.out.push(Action::CancelTimer(Timer::Run(entry)));
            }
            let has_pre_stop = self.spec.entries[entry].pre_stop.is_some();
            let instance = self.entries[entry].instance;
            match &self.entries[entry].state {
                EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => {
                    // A spawn asked for in this same step is withdrawn; one
                    // already carried out is waited for: its `Spawned` stops
                    // it, its `SpawnFailed` ends it.
                    let asked = Action::Spawn { entry, instance };
                    if let Some(i) = self.out.iter().position(|a| *a == asked) {
                        self.out.remove(i);
                        self.entries[entry].state = EntryState::Exited;
                    }
                }
                EntryState::Backoff { .. } if self.role(entry) == Role::Scheduled => {
                    // A run between two tries: it ends here.
                    self.end_run_in_backoff(entry, now);
                }
                EntryState::Waiting | EntryState::Backoff { .. } => {
                    // Not running: not waited for.
                    if matches!(self.entries[entry].state, EntryState::Backoff { .. }) {
                        self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
                    }
                    self.entries[entry].state = EntryState::Exited;
                }
                EntryState::Exited | EntryState::Held | EntryState::Removed => {}
                EntryState::Running(live) => {
                    for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
                        self.out.push(Action::StopProbe { entry, kind });
                    }
                    let pid = live.pid();
                    let stop = match &live.stage {
                        // A stop under way (a failure's) becomes the
                        // termination's; its deadline and hook stay.
                        Stage::Stopping(s) => Stop { cause: s.cause.taken_over(), ..s.clone() },
                        _ => {
                            if has_pre_stop {
                                self.out.push(Action::RunHook {
                                    entry,
                                    instance,
                                    pid,
                                    hook: HookKind::PreStop,
                                });
                            }
                            Stop::begin(live, StopCause::Termination, deadline, StopStep::first(has_pre_stop))
                        }
                    };
                    self.set_stage(entry, Stage::Stopping(stop));
                }
            }
        }
        self.drive_termination(now);
    }

    /// Sends every stop signal that is due now. Idempotent.
    pub(crate) fn drive_termination(&mut self, now: Instant) {
        let Phase::Terminating { deadline, spent } = self.phase else { return };
        let waiting = |e: &Entry| {
            e.live().and_then(Live::stop).is_some_and(|s| match s.step {
                StopStep::Queued | StopStep::PostStart => true,
                StopStep::PreStop => spent,
                StopStep::Signalled { .. } | StopStep::Killed { .. } => false,
            })
        };
        for entry in 0..self.entries.len() {
            if waiting(&self.entries[entry]) && (spent || self.role(entry) != Role::Sidecar) {
                self.send_stop(entry, now, deadline);
            }
        }
        if spent {
            return;
        }
        let others_alive =
            (0..self.entries.len()).any(|i| self.role(i) != Role::Sidecar && self.entries[i].is_alive());
        if others_alive {
            return;
        }
        let sidecars: Vec<EntryId> =
            (0..self.entries.len()).filter(|&i| self.role(i) == Role::Sidecar).collect();
        for &s in sidecars.iter().rev() {
            if !self.entries[s].is_alive() {
                continue;
            }
            if waiting(&self.entries[s]) {
                self.send_stop(s, now, deadline);
            }
            // Earlier sidecars wait for this one to exit.
            return;
        }
    }

    /// The budget is spent; every entry not yet signalled gets its stop signal
    /// now and SIGKILL 2 s later.
    pub(crate) fn spend_budget(&mut self, now: Instant) {
        let Phase::Terminating { spent: false, .. } = self.phase else { return };
        self.phase = Phase::Terminating { deadline: now, spent: true };
        // Everyone already signalled gets SIGKILL once its 2 s floor is over:
        // SIGKILLs armed for a later deadline (the budget spent early by a
        // second SIGINT, or a failure's own grace that outlasts the budget)
        // come forward.
        for entry in 0..self.entries.len() {
            let instance = self.entries[entry].instance;
            let Some(stop) = self.entries[entry].live().and_then(Live::stop).cloned() else { continue };
            let StopStep::Signalled { at: signalled, kill_at } = stop.step else { continue };
            let at = (signalled + MIN_STOP_GRACE).max(now);
            if at < kill_at {
                let step = StopStep::Signalled { at: signalled, kill_at: at };
                self.set_stage(entry, Stage::Stopping(Stop { step, ..stop }));
                self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at });
            }
        }
        self.drive_termination(now);
    }

    pub(crate) fn finish_if_empty(&mut self) {
        if !self.terminating() || self.entries.iter().any(Entry::is_alive) {
            return;
        }
        let status = self.exit_status();
        self.out.push(Action::CancelTimer(Timer::Budget));
        self.out.push(Action::Exit { status });
        self.phase = Phase::Done;
    }

    /// docs/signals.md, "Exit statuses".
    fn exit_status(&self) -> i32 {
        if self.deadline_exceeded {
            return exit_status::DEADLINE_EXCEEDED;
        }
        if let Some(status) = self.failed {
            return status;
        }
        if !self.mains_started() {
            return self.term_signal.map_or(1, |s| 128 + s.number());
        }
        self.mains
            .iter()
            .filter_map(|&m| self.entries[m].last_exit)
            .find(|x| !x.success())
            .map_or(0, Exit::status)
    }
}
