//! Requests from the command line (docs/control.md): `podinit restart`,
//! `stop`, `start`, `signal` and `shutdown`. Each is decided here against
//! the entry's state, so every rule about order, termination and backoff
//! holds for it: a request goes through the stop path, never around it,
//! and one that cannot be honoured now is refused with the reason.

use std::time::Instant;

use crate::entry::{EntryState, StopCause};
use crate::events::{Action, Control, EntryId, Timer};
use crate::notes::{Note, Said, SkipReason};
use crate::pod::{Phase, Pod};
use crate::spec::{Role, Signal};

impl Pod {
    /// Takes a request from the command line (docs/control.md): `Ok` when it
    /// was taken (what it asked for goes on as actions), else why it was
    /// refused, and the actions either way.
    pub fn control(&mut self, request: Control, now: Instant) -> (Result<(), String>, Vec<Action>) {
        let result = self.on_control(request, now);
        (result, self.end_step(now))
    }

    fn on_control(&mut self, request: Control, now: Instant) -> Result<(), String> {
        if matches!(self.phase, Phase::Terminating { .. } | Phase::Done) {
            return Err("termination has begun: nothing is started or stopped by request any more".into());
        }
        if request == Control::Shutdown {
            // As SIGTERM to podinit, exit status included.
            self.notes.push(Note::pod(Said::ShutdownRequested));
            self.term_signal = Some(Signal::TERM);
            self.begin_termination(now);
            return Ok(());
        }
        if self.phase == Phase::Restarting {
            return Err("the whole pod is restarting (restart_all); ask again once it runs".into());
        }
        let entry = match request {
            Control::Restart(e) | Control::Stop(e) | Control::Start(e) | Control::Signal(e, _) => e,
            Control::Trigger(e) | Control::Suspend(e) | Control::Resume(e) => {
                return self.schedule_request(request, e, now);
            }
            Control::Shutdown => return Ok(()),
        };
        let Some(e) = self.entries.get(entry) else { return Err(format!("no entry {entry}")) };
        let name = self.name(entry).to_owned();
        let is_init = self.role(entry) == Role::Init;
        if e.state == EntryState::Removed && matches!(request, Control::Restart(_) | Control::Start(_)) {
            return Err(format!("{name} was removed by `podinit reload`"));
        }
        let stopping = e.live().is_some_and(|l| l.stop().is_some());
        let not_now = |state: &EntryState| match state {
            EntryState::Waiting => {
                Some(format!("{name} has not started yet: its turn in the start sequence has not come"))
            }
            EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => {
                Some(format!("{name} is being started; ask again once it runs"))
            }
            EntryState::Running(_) if stopping => Some(format!("{name} is being stopped already")),
            _ => None,
        };
        if let Some(of) = e.run_of {
            // An extra run (`NAME#2`) idle between runs: its entry starts runs.
            let idle = matches!(e.state, EntryState::Exited | EntryState::Held);
            if idle && matches!(request, Control::Restart(_) | Control::Start(_)) {
                let of = self.name(of);
                return Err(format!(
                    "{name} is an extra run of {of} and runs nothing now: ask {of} (`podinit trigger {of}`)"
                ));
            }
        }
        match request {
            Control::Restart(_) | Control::Stop(_) if is_init => Err(format!(
                "{name} is an init task: it runs once, to completion, and is not stopped or run again by request"
            )),
            Control::Restart(_) => {
                if let Some(why) = not_now(&e.state) {
                    return Err(why);
                }
                match e.state {
                    EntryState::Running(_) => {
                        self.note(entry, Said::RestartRequested { running: true });
                        self.stop_for(entry, StopCause::Restart, None, now);
                    }
                    _ => self.start_requested(entry, Said::RestartRequested { running: false }, now),
                }
                Ok(())
            }
            Control::Stop(_) => {
                if let Some(why) = not_now(&e.state) {
                    return Err(why);
                }
                // The extra runs of a scheduled entry stop with it; they are
                // stopped only once the request is taken.
                let state = e.state.clone();
                let extras_busy = self.busy_extra_runs(entry);
                match state {
                    EntryState::Running(_) => {
                        self.stop_extra_runs(entry, now);
                        let is_extra = self.entries[entry].run_of.is_some();
                        let said = if is_extra { Said::RunStopRequested } else { Said::StopRequested { running: true } };
                        self.note(entry, said);
                        self.stop_for(entry, StopCause::Hold, None, now);
                        Ok(())
                    }
                    EntryState::Backoff { .. } => {
                        self.stop_extra_runs(entry, now);
                        self.note(entry, Said::StopRequested { running: false });
                        if self.role(entry) == Role::Scheduled {
                            // A run between two tries: it ends here.
                            self.end_run_in_backoff(entry, now);
                        } else {
                            self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
                        }
                        if self.entries[entry].run_of.is_none() {
                            self.entries[entry].state = EntryState::Held;
                        }
                        self.ended_for_now(entry, now);
                        Ok(())
                    }
                    EntryState::Exited if extras_busy => {
                        // Only its extra runs run: they stop, and its
                        // schedule is held as if its own run had.
                        self.note(entry, Said::StopRequested { running: true });
                        self.stop_extra_runs(entry, now);
                        self.entries[entry].state = EntryState::Held;
                        Ok(())
                    }
                    EntryState::Held => Err(format!("{name} is stopped already")),
                    EntryState::Exited if self.role(entry) == Role::Scheduled && self.entries[entry].run_of.is_none() => {
                        // Between runs: its schedule is held.
                        self.note(entry, Said::ScheduleStopRequested);
                        self.entries[entry].state = EntryState::Held;
                        Ok(())
                    }
                    _ => Err(format!("{name} is not running: it has exited")),
                }
            }
            Control::Start(_) if e.state == EntryState::Held => {
                self.start_requested(entry, Said::StartRequested, now);
                Ok(())
            }
            Control::Start(_) => Err(format!(
                "{name} is not stopped: `podinit start` starts an entry that `podinit stop` stopped"
            )),
            Control::Signal(_, signal) => match e.live() {
                Some(live) => {
                    let pid = live.pid();
                    self.note(entry, Said::SignalRequested { pid, signal });
                    self.out.push(Action::Signal { entry, pid, signal });
                    Ok(())
                }
                None => Err(format!("{name} is not running")),
            },
            Control::Shutdown => Ok(()),
            // Answered above.
            Control::Trigger(_) | Control::Suspend(_) | Control::Resume(_) => Ok(()),
        }
    }

    /// `podinit trigger`, `suspend` and `resume` of a scheduled entry
    /// (docs/control.md). A suspension lasts until `podinit resume`, or a
    /// `podinit reload` that changes the entry.
    fn schedule_request(&mut self, request: Control, entry: EntryId, now: Instant) -> Result<(), String> {
        let name = self.name(entry).to_owned();
        let Some(schedule) = self.spec.entries.get(entry).and_then(|e| e.schedule.as_ref()) else {
            return Err(format!("{name} is not a scheduled entry"));
        };
        let suspended = schedule.suspend;
        if self.entries[entry].is_removed() {
            return Err(format!("{name} was removed by `podinit reload`"));
        }
        if let Some(of) = self.entries[entry].run_of {
            let of = self.name(of);
            return Err(format!("{name} is an extra run of {of}: ask {of}"));
        }
        let reached = matches!(self.phase, Phase::Running { .. });
        match request {
            Control::Trigger(_) => {
                if !reached {
                    return Err(format!("{name} does not run yet: the mains have not been reached"));
                }
                if self.entries[entry].state == EntryState::Held {
                    // `podinit stop` holds its schedule, not a run asked for:
                    // that run is an extra run, and the hold stays.
                    let at = self.notes.len();
                    return match self.start_extra_run(entry, std::time::Duration::ZERO, now) {
                        Ok(()) => {
                            self.notes.insert(at, Note::entry(entry, Said::TriggerRequested));
                            Ok(())
                        }
                        Err(_) => Err(format!("{name} runs as many times as max_concurrent allows already")),
                    };
                }
                let policy = schedule.concurrency_policy;
                let state = self.entries[entry].state.clone();
                // Said before what the run does, once it is taken.
                let at = self.notes.len();
                let taken = self.run_now(entry, std::time::Duration::ZERO, now);
                if taken.is_ok() {
                    self.notes.insert(at, Note::entry(entry, Said::TriggerRequested));
                }
                taken.map_err(|why| match why {
                    SkipReason::MaxConcurrent { max } => {
                        format!("{name} runs {max} times already (max_concurrent)")
                    }
                    SkipReason::BeingStopped => format!("{name} is being stopped; ask again once it is done"),
                    _ if matches!(state, EntryState::Spawning { .. }) => {
                        format!("{name} is being started; ask again once it runs")
                    }
                    _ => format!("{name} runs already (concurrency_policy {policy})"),
                })
            }
            Control::Suspend(_) if suspended => Err(format!("{name} is suspended already")),
            Control::Resume(_) if !suspended => Err(format!("{name} is not suspended")),
            Control::Suspend(_) | Control::Resume(_) => {
                let suspend = matches!(request, Control::Suspend(_));
                if let Some(s) = self.spec.entries[entry].schedule.as_mut() {
                    s.suspend = suspend;
                }
                self.note(entry, Said::SuspendRequested { suspend });
                if suspend {
                    self.out.push(Action::CancelTimer(Timer::Run(entry)));
                } else if reached {
                    self.out.push(Action::ArmRun { entry, at_once: false });
                }
                Ok(())
            }
            Control::Restart(_)
            | Control::Stop(_)
            | Control::Start(_)
            | Control::Signal(..)
            | Control::Shutdown => Ok(()),
        }
    }

    /// Whether an extra run of `entry` runs (and is not being stopped) or
    /// waits between two tries: what `podinit stop` of `entry` would stop.
    fn busy_extra_runs(&self, entry: EntryId) -> bool {
        self.entries.iter().any(|e| {
            e.run_of == Some(entry)
                && match &e.state {
                    EntryState::Running(live) => live.stop().is_none(),
                    EntryState::Backoff { .. } => true,
                    _ => false,
                }
        })
    }

    /// `podinit stop` of a scheduled entry: its extra runs (`concurrency_policy
    /// = "Allow"`) are stopped through their stop path too.
    fn stop_extra_runs(&mut self, entry: EntryId, now: Instant) {
        for i in 0..self.entries.len() {
            if self.entries[i].run_of != Some(entry) {
                continue;
            }
            match &self.entries[i].state {
                EntryState::Running(live) if live.stop().is_none() => {
                    self.note(i, Said::RunStopRequested);
                    self.stop_for(i, StopCause::Hold, None, now);
                }
                EntryState::Backoff { .. } => {
                    self.note(i, Said::StopRequested { running: false });
                    self.end_run_in_backoff(i, now);
                }
                _ => {}
            }
        }
    }

    /// `podinit start`, or `podinit restart` of an entry without a process
    /// (exited, stopped, in backoff): a new instance now, without backoff;
    /// `said` is the request's note.
    fn start_requested(&mut self, entry: EntryId, said: Said, now: Instant) {
        let in_backoff = matches!(self.entries[entry].state, EntryState::Backoff { .. });
        self.note(entry, said);
        if in_backoff && self.role(entry) == Role::Scheduled {
            // A run between two tries: it ends here, counted, before the new one.
            self.end_run_in_backoff(entry, now);
        } else if in_backoff {
            self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
        }
        if self.role(entry) == Role::Scheduled {
            // A scheduled entry's instance is a run, with its rules.
            self.start_run(entry, std::time::Duration::ZERO, now);
        } else {
            self.spawn(entry, now);
        }
    }
}
