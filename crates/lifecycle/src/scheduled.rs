//! Scheduled entries: a CronJob inside the pod (kubernetes.io "CronJob";
//! docs/configuration.md, "Scheduled entries"). Their schedules begin when
//! the start sequence reaches the mains; the runtime computes each next run
//! from the wall clock ([`Action::ArmRun`]) and says when one is due
//! ([`Event::RunDue`](crate::Event::RunDue)); this file decides whether it
//! starts: `suspend`, `starting_deadline` and `concurrency_policy`. A run
//! holds nothing and fails nothing: its exit is only reported
//! (`restarts.rs` hands it here), and termination stops a running one with
//! the mains (`termination.rs`: it is not a sidecar).

use std::time::{Duration, Instant};

use crate::entry::{EntryState, Outcome};
use crate::events::{Action, EntryId, Instance, Timer};
use crate::exit_status::Exit;
use crate::notes::{Said, SkipReason};
use crate::pod::{Phase, Pod};
use crate::spec::{ConcurrencyPolicy, Role};

impl Pod {
    /// The start sequence has reached the mains: each scheduled entry's
    /// schedule begins (a suspended one's does not), with one run at once
    /// for `run_on_start`.
    pub(crate) fn begin_schedules(&mut self) {
        for entry in 0..self.entries.len() {
            let Some(schedule) = &self.spec.entries[entry].schedule else { continue };
            if self.entries[entry].state != EntryState::Waiting {
                continue;
            }
            let (suspend, at_once) = (schedule.suspend, schedule.run_on_start);
            self.entries[entry].state = EntryState::Exited;
            if !suspend {
                self.out.push(Action::ArmRun { entry, at_once });
            }
        }
    }

    /// A run of `entry` is due, `late` after its time: the timer is armed
    /// for the next one, and this one starts unless a rule skips it.
    pub(crate) fn on_run_due(&mut self, entry: EntryId, late: Duration, now: Instant) -> Outcome {
        let Some(schedule) = &self.spec.entries[entry].schedule else {
            return Outcome::Ignored("it is not a scheduled entry");
        };
        if !matches!(self.phase, Phase::Running { .. }) {
            return Outcome::Ignored("no run starts before the mains or once termination has begun");
        }
        if schedule.suspend {
            return Outcome::Ignored("it is suspended");
        }
        let (policy, starting_deadline) = (schedule.concurrency_policy, schedule.starting_deadline);
        self.out.push(Action::ArmRun { entry, at_once: false });
        if let Some(deadline) = starting_deadline.filter(|&d| late > d) {
            // A CronJob's startingDeadlineSeconds: too late, skipped.
            self.skip_run(entry, SkipReason::Missed { late, deadline });
            return Outcome::Applied;
        }
        match &self.entries[entry].state {
            EntryState::Exited => self.start_run(entry, late, now),
            EntryState::Held => self.skip_run(entry, SkipReason::Held),
            EntryState::Spawning { .. } => self.skip_run(entry, SkipReason::StillRunning),
            EntryState::Running(live) => {
                if live.stop().is_some() {
                    self.skip_run(entry, SkipReason::BeingStopped);
                } else {
                    match policy {
                        // Refused by the config reader; one process at a time.
                        ConcurrencyPolicy::Allow | ConcurrencyPolicy::Forbid => {
                            self.skip_run(entry, SkipReason::StillRunning);
                        }
                        ConcurrencyPolicy::Replace => {
                            // Stopped through its stop path; the new run starts
                            // once it has exited (`restarts.rs`).
                            self.note(entry, Said::RunReplaced);
                            self.stop_for(entry, crate::entry::StopCause::Restart, None, now);
                        }
                    }
                }
            }
            // The match arms of `Pod::on_entry` send no other state here.
            EntryState::Waiting
            | EntryState::SpawningCopy { .. }
            | EntryState::Backoff { .. }
            | EntryState::Removed => return Outcome::Ignored("it cannot run now"),
        }
        Outcome::Applied
    }

    /// A run starts now, `late` after its time; its `active_deadline`, if
    /// any, counts from now.
    pub(crate) fn start_run(&mut self, entry: EntryId, late: Duration, now: Instant) {
        self.note(entry, Said::RunStarted { late });
        let runs = &mut self.entries[entry].runs;
        runs.started = runs.started.saturating_add(1);
        runs.last_start = Some(now);
        self.spawn(entry, now);
        let instance = self.entries[entry].instance;
        if let Some(d) = self.spec.entries[entry].schedule.as_ref().and_then(|s| s.active_deadline) {
            self.out.push(Action::ArmTimer { timer: Timer::RunDeadline(entry, instance), at: now + d });
        }
    }

    fn skip_run(&mut self, entry: EntryId, why: SkipReason) {
        let runs = &mut self.entries[entry].runs;
        runs.skipped = runs.skipped.saturating_add(1);
        self.note(entry, Said::RunSkipped { why });
    }

    /// A run has ended, however it ended: reported, never a failure of the pod.
    pub(crate) fn run_finished(
        &mut self,
        entry: EntryId,
        instance: Instance,
        exit: Exit,
        ran_for: Duration,
        now: Instant,
    ) {
        debug_assert_eq!(self.role(entry), Role::Scheduled);
        let runs = &mut self.entries[entry].runs;
        runs.last_ran_for = Some(ran_for);
        if exit.success() {
            runs.last_success = Some(now);
        } else {
            runs.failed = runs.failed.saturating_add(1);
        }
        if self.spec.entries[entry].schedule.as_ref().is_some_and(|s| s.active_deadline.is_some()) {
            self.out.push(Action::CancelTimer(Timer::RunDeadline(entry, instance)));
        }
        self.note(entry, Said::RunFinished { exit, ran_for });
    }

    /// A run has run its `active_deadline`: stopped through its stop path,
    /// with the pod's grace.
    pub(crate) fn on_run_deadline(&mut self, entry: EntryId, now: Instant) {
        let deadline = self.spec.entries[entry].schedule.as_ref().and_then(|s| s.active_deadline);
        self.note(entry, Said::RunDeadlineExceeded { deadline: deadline.unwrap_or_default() });
        self.stop_for(entry, crate::entry::StopCause::Failed, None, now);
    }
}
