//! The pod: its [`Phase`], its entries, and [`Pod::handle`], which takes
//! one event, hands what concerns one entry to that entry's machine
//! (`entry.rs`) and the rest (timers of the pod, signals) to the concern
//! that owns it. It does no I/O: what must happen is returned as actions,
//! what is worth saying is kept as notes until [`Pod::take_notes`]. One step
//! asks for at most one spawn; the machine goes on when its result comes
//! back as an event, so a signal queued before that result is handled
//! while the spawn is still unanswered (`termination.rs` waits for it).

use std::num::NonZeroI32;
use std::time::{Duration, Instant};

use crate::backoff::Backoff;
use crate::entry::{Entry, EntryEvent};
use crate::events::{Action, EntryId, Event, Timer};
use crate::notes::{Note, Said};
use crate::spec::{PodSpec, Role, Signal};
use crate::wait::WaitClock;

/// The pod's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Going through the ordered init/sidecar list; `cursor` indexes it:
    /// every entry before it has passed the sequence (an init succeeded, a
    /// sidecar started, or was stopped by `podinit stop`), the one at it
    /// holds the sequence, and removed entries are skipped.
    Booting { cursor: usize },
    /// Mains started (or being started, `next_main` indexes the mains).
    Running { next_main: usize },
    /// A `restart_all` rule matched (KEP-5532): everything is being killed;
    /// then, after the pod's backoff, the start sequence runs again.
    Restarting,
    /// Termination has begun; `deadline` is when the budget is spent.
    Terminating { deadline: Instant, spent: bool },
    /// `Exit` has been emitted.
    Done,
}

/// The lifecycle of one pod.
#[derive(Debug)]
pub struct Pod {
    pub(crate) spec: PodSpec,
    pub(crate) entries: Vec<Entry>,
    /// Init and sidecar entries in file order: the start sequence.
    pub(crate) sequence: Vec<EntryId>,
    /// Mains in file order.
    pub(crate) mains: Vec<EntryId>,
    pub(crate) phase: Phase,
    /// The status of the entry whose failure ended the pod: an init under
    /// `Never`, or an entry past its `max_restarts`.
    pub(crate) failed: Option<i32>,
    /// `[pod] active_deadline` passed and began termination.
    pub(crate) deadline_exceeded: bool,
    /// When `[pod] active_deadline` passes, once the pod has started.
    pub(crate) deadline_at: Option<Instant>,
    /// Restarts of the whole pod (`restart_all`), and their backoff.
    pub(crate) pod_restarts: u32,
    pub(crate) pod_backoff: Backoff,
    /// When the start sequence last began (for the pod's backoff).
    pub(crate) booted_at: Option<Instant>,
    /// When the start sequence first began (`timing.rs`).
    pub(crate) first_start: Option<Instant>,
    /// The signal that began termination, if one did.
    pub(crate) term_signal: Option<Signal>,
    /// SIGINTs received: the second one spends the termination budget.
    pub(crate) sigints: u32,
    /// When the grace period of a termination that a signal began ends: what
    /// sent the signal (`docker stop`, the kubelet) kills podinit then.
    pub(crate) signal_grace_end: Option<Instant>,
    /// Why the probe result being handled failed, for the note at its
    /// threshold (which takes it: one result says it once at most).
    pub(crate) probe_why: Option<String>,
    /// The entry the start sequence waits at, since when, and when its next
    /// note on why is due (`wait.rs`).
    pub(crate) wait: Option<WaitClock>,
    /// `[pod] active_deadline` as the last `podinit reload` read it (the
    /// running deadline stays the one read at start).
    pub(crate) file_active_deadline: Option<Option<Duration>>,
    pub(crate) out: Vec<Action>,
    pub(crate) notes: Vec<Note>,
}

impl Pod {
    /// A pod that has not started; call [`Pod::start`] next.
    pub fn new(spec: PodSpec) -> Self {
        let entries = spec.entries.iter().map(|_| Entry::new(spec.backoff)).collect();
        let sequence = (0..spec.entries.len())
            .filter(|&i| matches!(spec.entries[i].role, Role::Init | Role::Sidecar))
            .collect();
        let mains = (0..spec.entries.len()).filter(|&i| spec.entries[i].role == Role::Main).collect();
        let pod_backoff = Backoff::new(spec.backoff);
        Pod {
            spec,
            entries,
            sequence,
            mains,
            phase: Phase::Booting { cursor: 0 },
            failed: None,
            deadline_exceeded: false,
            deadline_at: None,
            pod_restarts: 0,
            pod_backoff,
            booted_at: None,
            first_start: None,
            term_signal: None,
            sigints: 0,
            signal_grace_end: None,
            probe_why: None,
            wait: None,
            file_active_deadline: None,
            out: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// The spec the pod runs.
    pub fn spec(&self) -> &PodSpec {
        &self.spec
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Begins the start sequence (docs/reference.md, "Lifecycle in short").
    pub fn start(&mut self, now: Instant) -> Vec<Action> {
        if let Some(d) = self.spec.active_deadline {
            self.deadline_at = Some(now + d);
            self.out.push(Action::ArmTimer { timer: Timer::Deadline, at: now + d });
        }
        self.booted_at = Some(now);
        self.first_start.get_or_insert(now);
        self.advance(now);
        self.track_wait(now);
        self.record_times(now);
        std::mem::take(&mut self.out)
    }

    /// Takes one event and returns what to do about it (at most one spawn).
    pub fn handle(&mut self, event: Event, now: Instant) -> Vec<Action> {
        if self.phase == Phase::Done {
            self.notes.push(Note::pod(Said::EventAfterExit(event)));
            return Vec::new();
        }
        match event {
            Event::Spawned { entry, instance, pid } => match NonZeroI32::new(pid).filter(|p| p.get() > 0) {
                Some(pid) => {
                    self.on_entry(entry, Some(instance), EntryEvent::Spawned(pid), now);
                }
                None => self.note(entry, Said::ImpossiblePid(pid)),
            },
            Event::SpawnFailed { entry, instance, status } => {
                self.on_entry(entry, Some(instance), EntryEvent::SpawnFailed(status), now);
            }
            Event::Exited { entry, instance, exit } => {
                self.on_entry(entry, Some(instance), EntryEvent::Exited(exit), now);
            }
            Event::Probe { entry, instance, kind, ok, why } => {
                if !ok && self.entries.get(entry).is_some_and(|e| e.instance == instance) {
                    self.keep_probe_failure(entry, kind, why.as_ref());
                }
                self.probe_why = why;
                self.on_entry(entry, Some(instance), EntryEvent::Probe(kind, ok), now);
                self.probe_why = None;
            }
            Event::Hook { entry, instance, hook, ok } => {
                self.on_entry(entry, Some(instance), EntryEvent::Hook(hook, ok), now);
            }
            Event::Timer(Timer::Stop(entry, instance)) => {
                self.on_entry(entry, Some(instance), EntryEvent::StopTimer, now);
            }
            Event::Timer(Timer::Backoff(entry)) => {
                self.on_entry(entry, None, EntryEvent::BackoffOver, now);
            }
            Event::Timer(Timer::Budget) => {
                let grace = self.spec.termination_grace_period;
                self.notes.push(Note::pod(Said::BudgetSpent { grace }));
                self.spend_budget(now);
            }
            Event::Timer(Timer::PodRestart) => self.on_pod_restart_timer(now),
            Event::Timer(Timer::Wait(entry)) => self.on_wait_timer(entry, now),
            // The runtime reports a run's timer as `RunDue`, with how late it
            // is; a bare one is a run due on time.
            Event::Timer(Timer::Run(entry)) => {
                self.on_entry(entry, None, EntryEvent::RunDue(Duration::ZERO), now);
            }
            Event::RunDue { entry, late } => {
                self.on_entry(entry, None, EntryEvent::RunDue(late), now);
            }
            // Keyed by its run's first instance: it counts over the run's
            // tries (a Job's activeDeadlineSeconds); a timer of an earlier
            // run is news about an earlier instance.
            Event::Timer(Timer::RunDeadline(entry, first)) => {
                let current = self.entries.get(entry).is_some_and(|e| e.run.first == first);
                let instance = if current { None } else { Some(first) };
                self.on_entry(entry, instance, EntryEvent::RunDeadline, now);
            }
            Event::Timer(Timer::Deadline) => {
                if !self.terminating() {
                    let deadline = self.spec.active_deadline.unwrap_or_default();
                    self.notes.push(Note::pod(Said::DeadlineExceeded { deadline }));
                    self.deadline_exceeded = true;
                    self.begin_termination(now);
                }
            }
            Event::Terminate { signal } => self.on_terminate(signal, now),
            Event::Forward { signal } => {
                for &m in &self.mains {
                    if let Some(live) = self.entries[m].live() {
                        self.out.push(Action::Signal { entry: m, pid: live.pid(), signal });
                    }
                }
            }
        }
        self.end_step(now)
    }

    /// The step's actions: [`Timer::Wait`] armed or cancelled for where the
    /// start sequence now waits (`wait.rs`), then `Exit` if no process is
    /// left once termination has begun, last; what happened first in the
    /// step is recorded for `podinit status --timing` (`timing.rs`).
    pub(crate) fn end_step(&mut self, now: Instant) -> Vec<Action> {
        self.track_wait(now);
        self.record_times(now);
        self.finish_if_empty();
        std::mem::take(&mut self.out)
    }

    /// The entry named `name`, or the extra run of a scheduled entry of
    /// that name (`NAME#2`).
    pub fn entry_named(&self, name: &str) -> Option<EntryId> {
        self.current_named(name).or_else(|| {
            // An extra run of a scheduled entry (`NAME#2`), by its own name.
            (0..self.entries.len()).find(|&i| {
                let e = &self.entries[i];
                e.run_of.is_some() && !e.is_removed() && self.spec.entries[i].name == name
            })
        })
    }

    /// What the machine found worth saying since the last call, in order.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }

    pub(crate) fn name(&self, entry: EntryId) -> &str {
        &self.spec.entries[entry].name
    }

    pub(crate) fn role(&self, entry: EntryId) -> Role {
        self.spec.entries[entry].role
    }

    /// Keeps a note about `entry` for [`Pod::take_notes`].
    pub(crate) fn note(&mut self, entry: EntryId, said: Said) {
        self.notes.push(Note::entry(entry, said));
    }

    /// Whether any main has been asked for (the start sequence got that far).
    pub(crate) fn mains_started(&self) -> bool {
        self.mains.iter().any(|&m| self.entries[m].instance > 0)
    }

    pub(crate) fn terminating(&self) -> bool {
        matches!(self.phase, Phase::Terminating { .. })
    }
}
