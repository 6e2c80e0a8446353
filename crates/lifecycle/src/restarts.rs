//! What follows an exit: restart or not by the restart policy, the entry's
//! own rules and `max_restarts` (docs/lifecycle.md rules 6-8, 7a, 22), with
//! the entry's backoff; completion of the pod when its mains have ended
//! (rule 13); a restart of the whole pod (`restart_all`, rule 7b); a copy
//! of a sidecar during termination (rule 17a). Nothing restarts once
//! termination has begun, but for that copy, and a removed entry never
//! does: the first lines of [`Pod::on_exit`] decide by phase before any rule
//! is read.

use std::time::{Duration, Instant};

use crate::entry::{Entry, EntryState, Stage, Stop, StopCause, StopStep};
use crate::events::{Action, EntryId, Timer};
use crate::exit_status::Exit;
use crate::notes::{Note, Said};
use crate::pod::{Phase, Pod};
use crate::spec::{Completion, ProbeKind, RestartPolicy, Role, RuleAction, Signal};

impl Pod {
    pub(crate) fn on_exit(&mut self, entry: EntryId, exit: Exit, now: Instant) {
        let role = self.role(entry);
        let e = &mut self.entries[entry];
        let (cause, ran_for, signalled, next) = match &mut e.state {
            EntryState::Running(live) => (
                live.stop().map(|s| s.cause),
                now.saturating_duration_since(live.spawned_at),
                live.stop().is_some_and(|s| s.step.signalled_at().is_some()),
                live.next.take(),
            ),
            _ => (None, Duration::ZERO, false, None),
        };
        let failed_stop = cause == Some(StopCause::Failed);
        let removed = matches!(cause, Some(StopCause::Remove { .. }));
        let instance = e.instance;
        e.last_exit = Some(exit);
        e.state = if removed { EntryState::Removed } else { EntryState::Exited };
        if let Some(new) = next {
            // `podinit reload` changed it while it ran: the next instance
            // runs with the new settings.
            self.spec.entries[entry] = *new;
        }
        self.out.push(Action::StopChecks { entry });
        self.out.push(Action::CancelTimer(Timer::Stop(entry, instance)));
        if role == Role::Scheduled {
            // A failure with no stop asked for may try again within its run
            // (`restart_policy = "OnFailure"`); otherwise the run is over.
            if cause.is_none()
                && !self.terminating()
                && self.phase != Phase::Restarting
                && self.run_tries_again(entry, exit)
            {
                self.restart_after_backoff(entry, ran_for, now);
                return;
            }
            self.run_finished(entry, exit, now);
        }

        if self.phase == Phase::Restarting {
            // Removed by `podinit reload`: not part of the pod that restarts.
            if !removed {
                self.entries[entry].state = EntryState::Waiting;
            }
            self.restart_pod_when_empty(now);
            return;
        }

        if self.terminating() {
            if role == Role::Sidecar && !signalled && self.may_restart_during_termination(entry) {
                // KEP-4438 (alpha): a sidecar that dies before its turn comes
                // back, bare: no probes, no hooks, SIGKILL when its turn comes;
                // with its backoff, so that a crash loop cannot spin.
                let delay = self.entries[entry].backoff.next_delay(ran_for);
                if delay.is_zero() {
                    self.restart_in_termination(entry, now);
                } else {
                    self.entries[entry].state = EntryState::Backoff { until: now + delay };
                    self.out.push(Action::ArmTimer { timer: Timer::Backoff(entry), at: now + delay });
                }
                return;
            }
            self.drive_termination(now);
            return;
        }
        if removed {
            self.ended_for_now(entry, now);
            return;
        }
        match cause {
            Some(StopCause::Restart) if role == Role::Scheduled => {
                // `concurrency_policy = "Replace"`, or `podinit restart`: the
                // new run starts now that the old one has exited.
                self.start_run(entry, Duration::ZERO, now);
                return;
            }
            Some(StopCause::Restart) => {
                // `podinit restart`: a new instance at once; its backoff is
                // not used (and not grown) by a restart asked for.
                self.note(entry, Said::RestartingAsAsked);
                self.spawn(entry, now);
                return;
            }
            // An extra run stopped by request is idle again, not held: its
            // entry's schedule is what `podinit stop` holds.
            Some(StopCause::Hold) if self.entries[entry].run_of.is_some() => return,
            Some(StopCause::Hold) => {
                self.entries[entry].state = EntryState::Held;
                self.ended_for_now(entry, now);
                return;
            }
            // A failure's stop, or none: the rules below. (Removal and
            // termination were handled above.)
            Some(StopCause::Failed | StopCause::Remove { .. } | StopCause::Termination) | None => {}
        }
        let spec = &self.spec.entries[entry];
        // KEP-5307: the entry's first matching rule decides, else its own
        // restart_policy, else the pod's. An init's exit 0 always completes it.
        let policy = spec.restart_policy.unwrap_or(self.spec.restart_policy);
        let by_rule = spec
            .restart_rules
            .iter()
            .find(|r| r.matches(exit.status()))
            .filter(|r| !(role == Role::Init && exit.success() && r.action == RuleAction::Restart))
            .map(|r| r.action);
        if by_rule == Some(RuleAction::RestartAll) {
            self.restart_all(entry, exit, now);
            return;
        }
        let restart = match (role, by_rule) {
            (Role::Sidecar, _) => true,
            // Its tries within a run were decided above: the next run is
            // the schedule's.
            (Role::Scheduled, None) => false,
            // Handled above; kept so the match stays exhaustive.
            (_, Some(RuleAction::Restart | RuleAction::RestartAll)) => true,
            (Role::Init, None) => !exit.success() && policy != RestartPolicy::Never,
            (Role::Main, None) => match policy {
                RestartPolicy::Always => true,
                RestartPolicy::OnFailure => !exit.success() || failed_stop,
                RestartPolicy::Never => false,
            },
        };
        if restart
            && self.spec.entries[entry].max_restarts.is_some_and(|max| self.entries[entry].restarts >= max)
        {
            // One more failure after max_restarts restarts fails the pod.
            let max = self.spec.entries[entry].max_restarts.unwrap_or_default();
            self.note(entry, Said::MaxRestarts { exit, max });
            self.failed = Some(exit.status());
            self.begin_termination(now);
            return;
        }
        if restart {
            self.restart_after_backoff(entry, ran_for, now);
            return;
        }
        match role {
            Role::Init if exit.success() => {
                self.pass(entry);
                self.advance(now);
            }
            Role::Init => {
                self.note(entry, Said::InitFailed { exit });
                self.failed = Some(exit.status());
                self.begin_termination(now);
            }
            Role::Main => self.ended_for_now(entry, now),
            Role::Sidecar => {}
            // Idle until its next run.
            Role::Scheduled => {}
        }
    }

    /// A main has ended (exited and not restarted, or stopped by `podinit
    /// stop`): the pod completes when `completion` says so. A sidecar stopped
    /// by request holds nothing: the start sequence moves past it.
    pub(crate) fn ended_for_now(&mut self, entry: EntryId, now: Instant) {
        match self.role(entry) {
            Role::Main => {
                // Mains removed by `podinit reload` do not count, and their
                // end completes nothing.
                let ended = |id: &EntryId| {
                    let e = &self.entries[*id];
                    e.is_removed() || matches!(e.state, EntryState::Exited | EntryState::Held)
                };
                let complete = match self.spec.completion {
                    Completion::All => self.mains.iter().all(ended),
                    Completion::Any => !self.entries[entry].is_removed(),
                };
                if complete {
                    self.notes.push(Note::pod(Said::Completed));
                    self.begin_termination(now);
                } else {
                    // A main with post_start that died before the hook returned
                    // must not hold the next main.
                    self.advance(now);
                }
            }
            Role::Sidecar => {
                self.pass(entry);
                self.advance(now);
            }
            // A scheduled entry holds nothing and completes nothing.
            Role::Init | Role::Scheduled => {}
        }
    }

    /// Starts the entry again after its backoff (docs/lifecycle.md rule 8),
    /// at once when that is zero; its last instance ran `ran_for`.
    fn restart_after_backoff(&mut self, entry: EntryId, ran_for: Duration, now: Instant) {
        let delay = self.entries[entry].backoff.next_delay(ran_for);
        if delay.is_zero() {
            self.restart(entry, now);
        } else {
            self.note(entry, Said::Backoff { delay });
            self.entries[entry].state = EntryState::Backoff { until: now + delay };
            self.out.push(Action::ArmTimer { timer: Timer::Backoff(entry), at: now + delay });
        }
    }

    /// Starts the entry again (its backoff, if any, is over). After spawn
    /// failures in a row the note is given only at the 1st, 2nd, 4th, 8th...
    /// failure, so that a crash loop with a zero backoff logs in log time.
    fn restart(&mut self, entry: EntryId, now: Instant) {
        let failures = self.entries[entry].spawn_failures;
        if failures == 0 || failures.is_power_of_two() {
            self.note(entry, Said::Restarting);
        }
        self.spawn(entry, now);
    }

    /// Its backoff is over: started again, unless termination has begun
    /// (then only a sidecar that may come back during termination, KEP-4438).
    pub(crate) fn on_backoff_over(&mut self, entry: EntryId, now: Instant) {
        if !self.terminating() {
            self.restart(entry, now);
        } else if self.may_restart_during_termination(entry) {
            self.restart_in_termination(entry, now);
        } else {
            // Its turn came while it waited: it stays down.
            self.entries[entry].state = EntryState::Exited;
            self.drive_termination(now);
        }
    }

    /// Whether a sidecar that exited during termination, before its turn, is
    /// started again (KEP-4438, alpha in Kubernetes 1.37): only with
    /// `restart_during_termination`, only while the budget is not spent, only
    /// while something it must outlive still runs, and not with a grace of
    /// 1 s or less (as KEP-4438).
    fn may_restart_during_termination(&self, entry: EntryId) -> bool {
        let Phase::Terminating { spent: false, .. } = self.phase else { return false };
        if self.entries[entry].is_removed()
            || !self.spec.entries[entry].restart_during_termination
            || self.spec.termination_grace_period <= Duration::from_secs(1)
        {
            return false;
        }
        // Its turn has not come while a main, an init or a later sidecar runs.
        (0..self.entries.len())
            .filter(|&i| i != entry)
            .any(|i| self.entries[i].is_alive() && (self.role(i) != Role::Sidecar || i > entry))
    }

    /// KEP-4438: starts a sidecar again during termination; it runs its
    /// post_start, no probes, and is stopped at its turn like the others.
    fn restart_in_termination(&mut self, entry: EntryId, now: Instant) {
        self.note(entry, Said::RestartingInTermination);
        let e = &mut self.entries[entry];
        e.restarts_in_termination = e.restarts_in_termination.saturating_add(1);
        self.spawn_unchecked(entry, now, true);
    }

    /// A `restart_all` rule matched: every process is killed at once, with no
    /// pre_stop and no grace, in no order (KEP-5532, "Restart Phases"); once
    /// all are gone and the pod's backoff is over, the start sequence runs
    /// again from the first init.
    fn restart_all(&mut self, entry: EntryId, exit: Exit, now: Instant) {
        self.note(entry, Said::RestartAll { exit });
        self.phase = Phase::Restarting;
        for e in 0..self.entries.len() {
            let instance = self.entries[e].instance;
            if self.entries[e].is_removed() {
                // Not part of the pod that restarts: killed if it still
                // runs, never started again.
                if matches!(self.entries[e].state, EntryState::Running(_)) {
                    self.kill_for_pod_restart(e, now);
                }
                continue;
            }
            match &self.entries[e].state {
                EntryState::Running(_) => self.kill_for_pod_restart(e, now),
                EntryState::Backoff { .. } => {
                    self.out.push(Action::CancelTimer(Timer::Backoff(e)));
                    self.entries[e].state = EntryState::Waiting;
                }
                EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => {
                    // Asked for in this step: withdrawn; else killed once spawned.
                    let asked = Action::Spawn { entry: e, instance };
                    if let Some(i) = self.out.iter().position(|a| *a == asked) {
                        self.out.remove(i);
                        self.entries[e].state = EntryState::Waiting;
                    }
                }
                EntryState::Waiting | EntryState::Exited | EntryState::Held => {
                    self.entries[e].state = EntryState::Waiting;
                }
                // Left as they are above.
                EntryState::Removed => {}
            }
        }
        self.restart_pod_when_empty(now);
    }

    /// SIGKILL now, for a pod restart: no hook, no grace.
    fn kill_for_pod_restart(&mut self, entry: EntryId, now: Instant) {
        let Some(live) = self.entries[entry].live() else { return };
        if live.stop().is_some_and(|s| matches!(s.step, StopStep::Killed { .. })) {
            return;
        }
        let pid = live.pid();
        let step = StopStep::Killed { signalled_at: now, kill_at: now };
        let cause = live.stop().map_or(StopCause::Termination, |s| s.cause.taken_over());
        let stop = Stop::begin(live, cause, now, step);
        self.set_stage(entry, Stage::Stopping(stop));
        self.kill_actions(entry, pid);
    }

    /// Every probe stops, and SIGKILL now (a restart of the whole pod).
    pub(crate) fn kill_actions(&mut self, entry: EntryId, pid: i32) {
        for kind in ProbeKind::ALL {
            self.out.push(Action::StopProbe { entry, kind: *kind });
        }
        self.out.push(Action::Signal { entry, pid, signal: Signal::KILL });
    }

    /// Once no process of the pod is left, the pod's backoff (the same
    /// doubling as an entry's, KEP-5532 "Risks") before the restart.
    fn restart_pod_when_empty(&mut self, now: Instant) {
        if self.entries.iter().any(Entry::is_alive) {
            return;
        }
        let ran_for = self.booted_at.map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        let delay = self.pod_backoff.next_delay(ran_for);
        if delay.is_zero() {
            self.on_pod_restart_timer(now);
            return;
        }
        self.notes.push(Note::pod(Said::PodBackoff { delay }));
        self.out.push(Action::ArmTimer { timer: Timer::PodRestart, at: now + delay });
    }

    pub(crate) fn on_pod_restart_timer(&mut self, now: Instant) {
        if self.phase != Phase::Restarting {
            return;
        }
        self.pod_restarts = self.pod_restarts.saturating_add(1);
        self.notes.push(Note::pod(Said::PodRestarting { restarts: self.pod_restarts }));
        for e in self.entries.iter_mut().filter(|e| e.state != EntryState::Removed) {
            e.state = EntryState::Waiting;
        }
        self.phase = Phase::Booting { cursor: 0 };
        self.booted_at = Some(now);
        self.advance(now);
    }
}
