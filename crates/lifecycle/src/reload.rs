//! `podinit reload` (docs/control.md, "Reload"): the pod takes a new spec as
//! the kubelet takes a changed container spec. A reload is checked whole
//! before anything changes, so a refused one changes nothing; an entry whose
//! process is being started cannot be changed or removed until it runs (its
//! process would otherwise run unwatched). Changed entries go through their
//! stop path; removed ones are never started again.

use std::time::Instant;

use crate::entry::{Entry, EntryState, Stage, Stop, StopCause};
use crate::events::{Action, EntryId, Timer};
use crate::notes::{Note, Said};
use crate::pod::{Phase, Pod};
use crate::spec::{PodSpec, Role};
use crate::status::StopGrace;

impl Pod {
    /// `podinit reload` (docs/control.md, "Reload"): the pod takes `spec`,
    /// as the kubelet takes a changed container spec. A sidecar or main whose
    /// settings changed is restarted through its stop path and comes back
    /// with the new ones; an init that has finished is never run again; added
    /// sidecars and mains start at once (the start sequence is over), removed
    /// ones are stopped; unchanged entries are not touched; `[pod]` settings
    /// apply from now on. `Ok` lists what changed; `Err` says why nothing did.
    pub fn reload(&mut self, spec: PodSpec, now: Instant) -> (Result<Vec<String>, String>, Vec<Action>) {
        let result = self.on_reload(spec, now);
        (result, self.end_step(now))
    }

    fn on_reload(&mut self, spec: PodSpec, now: Instant) -> Result<Vec<String>, String> {
        match self.phase {
            Phase::Terminating { .. } | Phase::Done => {
                return Err("termination has begun: a reload changes nothing".into())
            }
            Phase::Restarting => {
                return Err("the whole pod is restarting (restart_all); reload once it runs".into())
            }
            _ => {}
        }
        // Check everything first: a refused reload changes nothing.
        for new in &spec.entries {
            let stopping_removed = (0..self.entries.len()).any(|i| {
                self.entries[i].is_removed()
                    && self.entries[i].is_alive()
                    && self.spec.entries[i].name == new.name
            });
            if stopping_removed && self.current_named(&new.name).is_none() {
                return Err(format!(
                    "{} is still being stopped since it was removed; reload again once it has exited",
                    new.name
                ));
            }
            if let Some(i) = self.current_named(&new.name) {
                let old = &self.spec.entries[i];
                if old.role != new.role {
                    return Err(format!(
                        "{} changes from {} to {}: remove it and add it under a new name",
                        new.name, old.role, new.role
                    ));
                }
                let spawning = matches!(
                    self.entries[i].state,
                    EntryState::Spawning { .. } | EntryState::SpawningCopy { .. }
                );
                if *old != *new && spawning {
                    return Err(format!("{} is being started; reload again once it runs", new.name));
                }
            }
        }
        for i in 0..self.entries.len() {
            let old = &self.spec.entries[self.run_owner(i)];
            let gone = !self.entries[i].is_removed() && !spec.entries.iter().any(|e| e.name == old.name);
            let spawning = matches!(
                self.entries[i].state,
                EntryState::Spawning { .. } | EntryState::SpawningCopy { .. }
            );
            if gone && spawning {
                // Its process is being started: removed now, it would run
                // unwatched once its spawn's result comes back.
                return Err(format!("{} is being started; reload again once it runs", old.name));
            }
        }
        let mut said = Vec::new();
        // What the reload did is said before what follows from it.
        let first_note = self.notes.len();
        let booting = matches!(self.phase, Phase::Booting { .. });
        let mut added = Vec::new();
        for new in &spec.entries {
            match self.current_named(&new.name) {
                Some(i) if self.spec.entries[i] == *new => {}
                Some(i) => said.push(self.change(i, new.clone(), now)),
                None => {
                    let i = self.entries.len();
                    self.entries.push(Entry::new(spec.backoff));
                    self.spec.entries.push(new.clone());
                    match new.role {
                        Role::Main => self.mains.push(i),
                        Role::Init | Role::Sidecar => self.sequence.push(i),
                        // Not in the start sequence: its schedule begins with the mains.
                        Role::Scheduled => {}
                    }
                    added.push(i);
                }
            }
        }
        // An extra run (`NAME#2`) goes with its entry: it is not in the file.
        let gone: Vec<EntryId> = (0..self.entries.len())
            .filter(|&i| {
                let named = self.spec.entries[self.run_owner(i)].name.as_str();
                !self.entries[i].is_removed() && !spec.entries.iter().any(|e| e.name == named)
            })
            .collect();
        for i in gone {
            said.push(self.remove(i, now));
        }
        let pod_changes = [
            ("restart_policy", self.spec.restart_policy != spec.restart_policy, true),
            (
                "termination_grace_period",
                self.spec.termination_grace_period != spec.termination_grace_period,
                true,
            ),
            ("completion", self.spec.completion != spec.completion, true),
            ("backoff", self.spec.backoff != spec.backoff, true),
            ("status_socket", self.spec.status_socket != spec.status_socket, false),
            ("http", self.spec.http != spec.http, false),
            (
                "active_deadline",
                self.file_active_deadline.unwrap_or(self.spec.active_deadline) != spec.active_deadline,
                false,
            ),
        ];
        for (key, changed, applied) in pod_changes {
            if changed && applied {
                said.push(format!("[pod] {key} changed: it applies from now on"));
            } else if changed {
                said.push(format!("[pod] {key} changed: it is read at start only, so the old value stays until podinit restarts"));
            }
        }
        // Read at start only: kept so that the next reload compares with the
        // file, not with what runs (active_deadline's timer is already armed).
        self.spec.status_socket = spec.status_socket.clone();
        self.spec.http = spec.http;
        self.file_active_deadline = Some(spec.active_deadline);
        self.spec.restart_policy = spec.restart_policy;
        self.spec.termination_grace_period = spec.termination_grace_period;
        self.spec.completion = spec.completion;
        self.spec.backoff = spec.backoff;
        for i in added {
            let name = self.name(i).to_owned();
            match self.role(i) {
                Role::Init if !booting => {
                    self.entries[i].state = EntryState::Exited;
                    said.push(format!("{name} added: not run (the start sequence is over)"));
                }
                Role::Scheduled if booting => {
                    said.push(format!("{name} added: its schedule begins once the mains are reached"));
                }
                Role::Scheduled => {
                    said.push(format!("{name} added: its schedule begins"));
                    self.begin_schedules();
                }
                _ if booting => said.push(format!("{name} added: starts in its turn")),
                _ => {
                    said.push(format!("{name} added: starting it"));
                    self.spawn(i, now);
                }
            }
        }
        if said.is_empty() {
            said.push("nothing changed".into());
        }
        let notes: Vec<Note> = said.iter().map(|line| Note::pod(Said::Reloaded(line.clone()))).collect();
        self.notes.splice(first_note..first_note, notes);
        Ok(said)
    }

    /// The entry named `name` that has not been removed.
    pub(crate) fn current_named(&self, name: &str) -> Option<EntryId> {
        (0..self.entries.len()).find(|&i| {
            !self.entries[i].is_removed()
                && self.entries[i].run_of.is_none()
                && self.spec.entries[i].name == name
        })
    }

    /// Entry `i` has new settings (`podinit reload`).
    fn change(&mut self, i: EntryId, new: crate::spec::EntrySpec, now: Instant) -> String {
        let name = new.name.clone();
        let role = self.role(i);
        let e = &mut self.entries[i];
        match &mut e.state {
            EntryState::Running(live) if role == Role::Scheduled => {
                // As a CronJob's change: the run goes on as it is, the next
                // runs have the new settings; its schedule is read again now.
                let arm = new.schedule.as_ref().is_some_and(|s| !s.suspend)
                    && matches!(self.phase, Phase::Running { .. });
                self.spec.entries[i].schedule.clone_from(&new.schedule);
                live.next = Some(Box::new(new));
                self.out.push(Action::CancelTimer(Timer::Run(i)));
                if arm {
                    self.out.push(Action::ArmRun { entry: i, at_once: false });
                }
                format!("{name} changed: its run goes on as it is; the next runs have the new settings")
            }
            EntryState::Running(live) if role != Role::Init && live.stop().is_none() => {
                live.next = Some(Box::new(new));
                self.stop_for(i, StopCause::Restart, None, now);
                format!("{name} changed: restarting it with its new settings")
            }
            EntryState::Running(live) => {
                live.next = Some(Box::new(new));
                if role == Role::Init {
                    format!("{name} changed: it runs to its end as it is; a retry runs with the new settings")
                } else {
                    format!("{name} changed: it is being stopped; it comes back with the new settings")
                }
            }
            EntryState::Exited if role == Role::Init => {
                self.spec.entries[i] = new;
                format!("{name} changed: it has finished and is not run again")
            }
            EntryState::Exited | EntryState::Held if role == Role::Scheduled => {
                // Between runs: its schedule is read again.
                let arm = new.schedule.as_ref().is_some_and(|s| !s.suspend)
                    && matches!(self.phase, Phase::Running { .. });
                self.spec.entries[i] = new;
                self.out.push(Action::CancelTimer(Timer::Run(i)));
                if arm {
                    self.out.push(Action::ArmRun { entry: i, at_once: false });
                }
                format!("{name} changed: its next run follows its new schedule")
            }
            _ => {
                self.spec.entries[i] = new;
                format!("{name} changed: it starts with its new settings")
            }
        }
    }

    /// Entry `i` is no longer in the config (`podinit reload`).
    pub(crate) fn remove(&mut self, i: EntryId, now: Instant) -> String {
        let name = self.name(i).to_owned();
        if self.role(i) == Role::Scheduled && self.entries[i].run_of.is_none() {
            // Its schedule ends now, even while its run is being stopped.
            self.out.push(Action::CancelTimer(Timer::Run(i)));
        }
        match &self.entries[i].state {
            EntryState::Running(live) => match live.stop().cloned() {
                None => {
                    let grace = StopGrace::Own;
                    self.stop_for(i, StopCause::Remove { grace }, None, now);
                    format!("{name} removed: stopping it")
                }
                // The stop under way goes on; what follows it is the removal.
                Some(stop) => {
                    let cause = StopCause::Remove { grace: stop.cause.grace() };
                    self.set_stage(i, Stage::Stopping(Stop { cause, ..stop }));
                    format!("{name} removed: it is being stopped")
                }
            },
            EntryState::Backoff { .. } => {
                self.out.push(Action::CancelTimer(Timer::Backoff(i)));
                self.entries[i].state = EntryState::Removed;
                format!("{name} removed")
            }
            _ => {
                self.entries[i].state = EntryState::Removed;
                format!("{name} removed")
            }
        }
    }
}
