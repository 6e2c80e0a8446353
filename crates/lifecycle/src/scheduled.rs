//! Scheduled entries: a CronJob inside the pod (kubernetes.io "CronJob";
//! docs/configuration.md, "Scheduled entries"). Their schedules begin when
//! the start sequence reaches the mains; the runtime computes each next run
//! from the wall clock ([`Action::ArmRun`]) and says when one is due
//! ([`Event::RunDue`](crate::Event::RunDue)); this file decides whether it
//! starts: `suspend`, `starting_deadline` and `concurrency_policy`. A run
//! holds nothing and fails nothing: its exit is only reported
//! (`restarts.rs` hands it here, or tries it again under `restart_policy =
//! "OnFailure"`, as a Job's pod), and termination stops a running one with
//! the mains (`termination.rs`: it is not a sidecar).
//!
//! Overlapping runs (`Allow`, a CronJob's default) are extra entries of the
//! pod, appended when first needed and used again once idle: each is an
//! entry machine like any other (spawn, hooks, stop path, tries, deadline),
//! so no rule is written twice. An extra run's `run_of` names its entry, whose
//! `runs` count it; it has no schedule of its own.

use std::time::{Duration, Instant};

use crate::entry::{Entry, EntryState, Outcome, Run};
use crate::events::{Action, EntryId, Timer};
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
            // An extra run (back from a restart of the whole pod) has no
            // schedule of its own.
            if !suspend && self.entries[entry].run_of.is_none() {
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
        if self.entries[entry].run_of.is_some() {
            return Outcome::Ignored("an extra run has no schedule of its own");
        }
        if self.entries[entry].is_removed() {
            // Removed by `podinit reload` while its run is being stopped:
            // its schedule is over (its timer is not armed again).
            return Outcome::Ignored("it was removed by podinit reload");
        }
        if !matches!(self.phase, Phase::Running { .. }) {
            return Outcome::Ignored("no run starts before the mains or once termination has begun");
        }
        if schedule.suspend {
            return Outcome::Ignored("it is suspended");
        }
        let starting_deadline = schedule.starting_deadline;
        self.out.push(Action::ArmRun { entry, at_once: false });
        if let Some(deadline) = starting_deadline.filter(|&d| late > d) {
            // A CronJob's startingDeadlineSeconds: too late, skipped.
            self.skip_run(entry, SkipReason::Missed { late, deadline });
            return Outcome::Applied;
        }
        match self.run_now(entry, late, now) {
            Ok(()) => {}
            Err(why) => self.skip_run(entry, why),
        }
        Outcome::Applied
    }

    /// One run of `entry` now (it came due, or `podinit trigger`), `late`
    /// after its time, under its `concurrency_policy` when one runs
    /// already; `Err` says why it does not start.
    pub(crate) fn run_now(&mut self, entry: EntryId, late: Duration, now: Instant) -> Result<(), SkipReason> {
        let policy = self.spec.entries[entry]
            .schedule
            .as_ref()
            .map_or(ConcurrencyPolicy::Forbid, |s| s.concurrency_policy);
        let stopping = self.entries[entry].live().is_some_and(|l| l.stop().is_some());
        match (&self.entries[entry].state, policy) {
            (EntryState::Exited, _) => {
                // Its extra runs may still run (max_concurrent counts them).
                self.check_max_concurrent(entry)?;
                self.start_run(entry, late, now);
            }
            (EntryState::Held, _) => return Err(SkipReason::Held),
            // Busy (spawning, running, or between two tries of its run):
            // a CronJob's concurrencyPolicy decides (kubernetes.io "CronJob").
            (_, ConcurrencyPolicy::Allow) => self.start_extra_run(entry, late, now)?,
            (_, ConcurrencyPolicy::Forbid) | (EntryState::Spawning { .. }, ConcurrencyPolicy::Replace) => {
                return Err(if stopping { SkipReason::BeingStopped } else { SkipReason::StillRunning })
            }
            (EntryState::Running(_), ConcurrencyPolicy::Replace) if stopping => {
                return Err(SkipReason::BeingStopped)
            }
            (EntryState::Running(_), ConcurrencyPolicy::Replace) => {
                // Stopped through its stop path; the new run starts once it
                // has exited (`restarts.rs`).
                self.note(entry, Said::RunReplaced);
                self.stop_for(entry, crate::entry::StopCause::Restart, None, now);
            }
            (EntryState::Backoff { .. }, ConcurrencyPolicy::Replace) => {
                // Between two tries: that run ends here, the new one starts.
                self.note(entry, Said::RunReplaced);
                self.end_run_in_backoff(entry, now);
                self.start_run(entry, late, now);
            }
            // Never a scheduled entry's state once the mains are reached.
            (EntryState::Waiting | EntryState::SpawningCopy { .. } | EntryState::Removed, _) => {
                return Err(SkipReason::StillRunning)
            }
        }
        Ok(())
    }

    /// `concurrency_policy = "Allow"`: a run beside the running one, in an
    /// extra entry of `entry` (`NAME#2`, `NAME#3`...: one that is idle, or
    /// a new one), with `entry`'s settings of now; skipped when
    /// `max_concurrent` runs run already.
    pub(crate) fn start_extra_run(
        &mut self,
        entry: EntryId,
        late: Duration,
        now: Instant,
    ) -> Result<(), SkipReason> {
        self.check_max_concurrent(entry)?;
        let idle = (0..self.entries.len())
            .find(|&i| self.entries[i].run_of == Some(entry) && self.entries[i].state == EntryState::Exited);
        let extra = match idle {
            Some(i) => i,
            None => {
                let n = (0..self.entries.len()).filter(|&i| self.entries[i].run_of == Some(entry)).count();
                let mut e = Entry::new(self.spec.backoff);
                e.state = EntryState::Exited;
                e.run_of = Some(entry);
                self.entries.push(e);
                self.spec.entries.push(self.spec.entries[entry].clone());
                let i = self.entries.len() - 1;
                self.spec.entries[i].name = format!("{}#{}", self.spec.entries[entry].name, n + 2);
                i
            }
        };
        // Its settings are the entry's of now: those a reload gave it, even
        // while the entry's own run goes on with its old ones.
        let name = std::mem::take(&mut self.spec.entries[extra].name);
        let settings = match self.entries[entry].live().and_then(|l| l.next.as_deref()) {
            Some(next) => next.clone(),
            None => self.spec.entries[entry].clone(),
        };
        self.spec.entries[extra] = crate::spec::EntrySpec { name, ..settings };
        self.start_run(extra, late, now);
        Ok(())
    }

    /// `Err` when `max_concurrent` runs of `entry` (its own and its extra
    /// runs) run or wait between two tries already.
    fn check_max_concurrent(&self, entry: EntryId) -> Result<(), SkipReason> {
        let Some(max) = self.spec.entries[entry].schedule.as_ref().and_then(|s| s.max_concurrent) else {
            return Ok(());
        };
        let busy = (0..self.entries.len())
            .filter(|&i| i == entry || self.entries[i].run_of == Some(entry))
            .filter(|&i| {
                !matches!(self.entries[i].state, EntryState::Exited | EntryState::Held | EntryState::Removed)
            })
            .count();
        if busy >= max as usize {
            return Err(SkipReason::MaxConcurrent { max });
        }
        Ok(())
    }

    /// A run starts now, `late` after its time; its `active_deadline`, if
    /// any, counts from now.
    pub(crate) fn start_run(&mut self, entry: EntryId, late: Duration, now: Instant) {
        self.note(entry, Said::RunStarted { late });
        let owner = self.run_owner(entry);
        let runs = &mut self.entries[owner].runs;
        runs.started = runs.started.saturating_add(1);
        runs.last_start = Some(now);
        // A new run is not a restart: only the tries within a run count.
        let restarts = self.entries[entry].restarts;
        self.spawn(entry, now);
        self.entries[entry].restarts = restarts;
        let e = &mut self.entries[entry];
        e.run = Run { first: e.instance, started_at: Some(now), restarts: 0 };
        // A new run tries afresh (a new Job's pods have a backoff of their own).
        e.backoff = crate::backoff::Backoff::new(self.spec.backoff);
        let first = e.instance;
        if let Some(d) = self.spec.entries[entry].schedule.as_ref().and_then(|s| s.active_deadline) {
            self.out.push(Action::ArmTimer { timer: Timer::RunDeadline(entry, first), at: now + d });
        }
    }

    /// The entry whose runs a run of `entry` counts for: itself, or the
    /// entry an extra run runs for.
    pub(crate) fn run_owner(&self, entry: EntryId) -> EntryId {
        self.entries[entry].run_of.unwrap_or(entry)
    }

    /// Whether a run that just had an instance end with `exit` (no stop
    /// asked for it) tries again: `restart_policy = "OnFailure"` and a
    /// failure, within `max_restarts` (a Job's `restartPolicy` and
    /// `backoffLimit`, kubernetes.io "Jobs"). At the limit the run has
    /// failed, and that is said.
    pub(crate) fn run_tries_again(&mut self, entry: EntryId, exit: Exit) -> bool {
        let spec = &self.spec.entries[entry];
        if exit.success() || spec.restart_policy != Some(crate::spec::RestartPolicy::OnFailure) {
            return false;
        }
        let max = spec.max_restarts.unwrap_or(u32::MAX);
        let run = &mut self.entries[entry].run;
        if run.restarts >= max {
            self.note(entry, Said::RunMaxRestarts { exit, max });
            return false;
        }
        run.restarts = run.restarts.saturating_add(1);
        true
    }

    /// A run waiting out its backoff between two tries ends there (it is
    /// replaced, stopped, past its deadline, or the pod terminates).
    pub(crate) fn end_run_in_backoff(&mut self, entry: EntryId, now: Instant) {
        self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
        let e = &mut self.entries[entry];
        e.state = EntryState::Exited;
        let exit = e.last_exit.unwrap_or(Exit::Code(1));
        self.run_finished(entry, exit, now);
    }

    fn skip_run(&mut self, entry: EntryId, why: SkipReason) {
        let owner = self.run_owner(entry);
        let runs = &mut self.entries[owner].runs;
        runs.skipped = runs.skipped.saturating_add(1);
        self.note(entry, Said::RunSkipped { why });
    }

    /// A run has ended, however it ended: reported, never a failure of the
    /// pod. It ran from its first instance's start (a Job's duration).
    pub(crate) fn run_finished(&mut self, entry: EntryId, exit: Exit, now: Instant) {
        debug_assert_eq!(self.role(entry), Role::Scheduled);
        let run = self.entries[entry].run;
        let ran_for = run.started_at.map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        let owner = self.run_owner(entry);
        let runs = &mut self.entries[owner].runs;
        runs.last_ran_for = Some(ran_for);
        if exit.success() {
            runs.last_success = Some(now);
        } else {
            runs.failed = runs.failed.saturating_add(1);
        }
        if self.spec.entries[entry].schedule.as_ref().is_some_and(|s| s.active_deadline.is_some()) {
            self.out.push(Action::CancelTimer(Timer::RunDeadline(entry, run.first)));
        }
        self.note(entry, Said::RunFinished { exit, ran_for });
    }

    /// A run has run its `active_deadline`: stopped through its stop path,
    /// with the pod's grace.
    pub(crate) fn on_run_deadline(&mut self, entry: EntryId, now: Instant) {
        let deadline = self.spec.entries[entry].schedule.as_ref().and_then(|s| s.active_deadline);
        self.note(entry, Said::RunDeadlineExceeded { deadline: deadline.unwrap_or_default() });
        if matches!(self.entries[entry].state, EntryState::Backoff { .. }) {
            // Between two tries: no further try (a Job past its deadline).
            self.end_run_in_backoff(entry, now);
        } else {
            self.stop_for(entry, crate::entry::StopCause::Failed, None, now);
        }
    }
}
