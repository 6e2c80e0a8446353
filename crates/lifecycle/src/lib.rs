//! The pod lifecycle as a pure state machine: events in, actions and notes out.
//!
//! Every lifecycle rule (docs/reference.md, "Lifecycle in short": start sequence, restarts and
//! backoff, what probes do, completion, termination order and budget, exit
//! status) is decided here and nowhere else. The module does no I/O at all: it
//! touches no process, socket or clock (the current time is an argument) and
//! logs nothing. What must happen comes back as [`Action`]s, which the runtime
//! carries out and answers with [`Event`]s; what is worth saying comes back as
//! [`Note`]s, which the runtime logs. So every rule, and every message, is
//! unit-testable without processes or sleeps.
//!
//! This crate is that core, apart from the `podinit` binary that drives it:
//! [`spec`] (the validated pod it runs, with [`signal`]'s signal numbers),
//! the machine, [`backoff`] and [`exit_status`]. Its `Cargo.toml` names no
//! async runtime, no libc, no nix and no logging crate (only pure helpers:
//! serde, humantime, memchr, regex-lite), so none can creep in; its
//! `clippy.toml` bans the clock, files, processes and sockets of `std`, and
//! `unsafe` is forbidden.
//!
//! Shape: each entry is in one [`EntryState`] whose variants carry exactly
//! their data (a running instance has a pid, a stop has its deadline), and
//! [`Pod::on_entry`] is the one `match` on (state, event) for an entry; an
//! event a state does not expect is ignored and noted at debug level. The pod
//! itself is in one [`Phase`]. One step ([`Pod::handle`]) asks for at most one
//! spawn, and the machine goes on when the spawn's result comes back as an
//! event. [`Driver`] is the one routine that feeds actions' results back, used
//! alike by the runtime's event loop, the unit tests and the property tests.
//!
//! Invariants (checked on random event sequences by `proptests.rs`;
//! each rule has its own test in `tests.rs`):
//! - nothing is spawned once termination has begun (a spawn asked for in the
//!   same step is withdrawn; one already carried out, whose result is still to
//!   come, is waited for and then stopped);
//! - at most one spawn per step;
//! - a sidecar gets its stop signal only after every main, every running init and
//!   every later-declared running sidecar has exited, unless the budget is spent
//!   or the stop began before termination (a probe or post_start failure, which
//!   KEP-753 does not order against anything, "Container probes" on kubernetes.io);
//! - no main is spawned before every init has succeeded and every sidecar has
//!   passed the sequence (started, or stopped by `podinit stop`);
//! - no process gets its stop signal twice;
//! - no SIGKILL before max(stop signal + 2 s, the stop's deadline), unless the
//!   pod's budget is spent;
//! - `Done` is absorbing, and `Exit` is emitted exactly once, when termination
//!   has begun and no process of the pod is left.

// The crate has no I/O to do, so nothing in it needs `unsafe`.
#![forbid(unsafe_code)]
// No unwrap/expect on a path an event can reach: as PID 1 a panic kills the
// container. Tests may.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use std::collections::VecDeque;
use std::num::NonZeroI32;
use std::time::{Duration, Instant};

pub mod backoff;
pub mod exit_status;
pub mod signal;
pub mod spec;

use self::backoff::Backoff;
use self::exit_status::Exit;
use crate::spec::{Completion, HoldUntil, PodSpec, RestartPolicy, Role, RuleAction, Signal, MIN_STOP_GRACE};
pub use crate::spec::{HookKind, ProbeKind};

/// Index of an entry in [`PodSpec::entries`].
pub type EntryId = usize;

/// Number of a process instance of one entry: 1 for the first spawn, +1 per
/// restart. Events carry it so that news about a dead instance is ignored.
pub type Instance = u64;

/// A timer the machine asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Timer {
    /// The entry's backoff is over: start it again.
    Backoff(EntryId),
    /// Stop deadline of one instance: stop signal if not sent yet, else SIGKILL.
    Stop(EntryId, Instance),
    /// The termination budget is spent.
    Budget,
    /// `[pod] active_deadline` has passed.
    Deadline,
    /// The pod's backoff before a restart of the whole pod is over.
    PodRestart,
}

/// Something that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The instance asked for with [`Action::Spawn`] runs as `pid` (its own group).
    Spawned { entry: EntryId, instance: Instance, pid: i32 },
    /// The instance could not be started; `status` is 126 or 127.
    SpawnFailed { entry: EntryId, instance: Instance, status: i32 },
    /// The instance's process ended and was reaped.
    Exited { entry: EntryId, instance: Instance, exit: Exit },
    /// One probe attempt's result; `why` says why it failed (for the
    /// messages at a threshold).
    Probe { entry: EntryId, instance: Instance, kind: ProbeKind, ok: bool, why: Option<String> },
    /// A hook returned (`ok` false: failed or timed out).
    Hook { entry: EntryId, instance: Instance, hook: HookKind, ok: bool },
    /// A timer fired.
    Timer(Timer),
    /// podinit received SIGTERM or SIGINT.
    Terminate { signal: Signal },
    /// podinit received a signal to pass on to the mains.
    Forward { signal: Signal },
}

/// Something the runtime must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Start a new instance of the entry; answer with `Spawned` or `SpawnFailed`.
    Spawn { entry: EntryId, instance: Instance },
    /// Send `signal` to the process group of `pid`.
    Signal { entry: EntryId, pid: i32, signal: Signal },
    /// Start probing; the first attempt at `not_before` at the earliest.
    StartProbe { entry: EntryId, instance: Instance, pid: i32, kind: ProbeKind, not_before: Instant },
    /// Stop one kind of probe of the entry.
    StopProbe { entry: EntryId, kind: ProbeKind },
    /// Run a hook; answer with `Event::Hook`.
    RunHook { entry: EntryId, instance: Instance, pid: i32, hook: HookKind },
    /// Stop every probe and hook of the entry (its process is gone).
    StopChecks { entry: EntryId },
    /// Fire `timer` at `at` (replacing an earlier arming of the same timer).
    ArmTimer { timer: Timer, at: Instant },
    /// Forget `timer`.
    CancelTimer(Timer),
    /// Every process is gone: exit podinit with this status.
    Exit { status: i32 },
}

/// How much a [`Note`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warn,
}

/// Something the lifecycle finds worth saying; the runtime logs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Note {
    pub level: Level,
    /// A stable name for machines (`started`, `exited`, `backoff`...), the
    /// `event` field of `--log-format json`; empty for debug notes.
    pub event: &'static str,
    /// The entry it is about.
    pub entry: Option<EntryId>,
    pub pid: Option<i32>,
    /// A shell status (exit code, or 128 + signal).
    pub status: Option<i32>,
    pub signal: Option<Signal>,
    pub delay: Option<Duration>,
    pub probe: Option<ProbeKind>,
    pub hook: Option<HookKind>,
    /// The sentence, for people.
    pub text: String,
}

impl Note {
    fn new(level: Level, event: &'static str, entry: Option<EntryId>, text: String) -> Note {
        Note {
            level,
            event,
            entry,
            pid: None,
            status: None,
            signal: None,
            delay: None,
            probe: None,
            hook: None,
            text,
        }
    }
}

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

/// Why an instance is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StopCause {
    /// A startup/liveness probe or post_start hook failed: restart by the rules after.
    Failed,
    /// Pod termination: never restarted.
    Termination,
    /// `podinit restart` (`restart`: a new instance at once, without
    /// backoff) or `podinit stop` (kept down until `podinit start`).
    Requested { restart: bool },
}

/// A request from the command line to the running pod (docs/control.md).
/// Like any event, it is decided here, so that every rule about ordering,
/// termination and backoff holds for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Stop the entry through its stop path, then start a new instance at once.
    Restart(EntryId),
    /// Stop the entry through its stop path and keep it down.
    Stop(EntryId),
    /// Start an entry that `Stop` keeps down.
    Start(EntryId),
    /// Send a signal to the entry's process group.
    Signal(EntryId, Signal),
    /// Terminate the pod, as SIGTERM to podinit does.
    Shutdown,
}

/// Consecutive results of one probe (its thresholds count these).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Streak {
    successes: u32,
    failures: u32,
}

impl Streak {
    fn add(&mut self, ok: bool) {
        if ok {
            self.successes = self.successes.saturating_add(1);
            self.failures = 0;
        } else {
            self.failures = self.failures.saturating_add(1);
            self.successes = 0;
        }
    }
}

/// Where a running instance is in its own life.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    /// Not started yet: waiting for its post_start hook and startup probe.
    Starting { post_start_done: bool, startup_passed: bool, startup: Streak },
    /// Started (post_start returned, startup probe passed): liveness and
    /// readiness probes run.
    Started { ready: bool, readiness: Streak, liveness: Streak },
    /// Being stopped.
    Stopping(Stop),
}

/// One stop of a running instance: pre_stop, stop signal, grace, SIGKILL.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stop {
    cause: StopCause,
    /// The end of the stop's grace: its own (a failure's stop: the probe's or
    /// the pod's `termination_grace_period` from when it began) or the pod's
    /// termination budget. SIGKILL comes at max(this, stop signal + 2 s).
    deadline: Instant,
    /// pre_stop still runs: the stop signal waits for it (or the deadline).
    in_hook: bool,
    /// When the stop signal went out.
    signalled_at: Option<Instant>,
    /// When SIGKILL is armed for, once the stop signal went out.
    kill_at: Option<Instant>,
    /// SIGKILL has been sent.
    killed: bool,
    /// Whether the instance had started (for `podinit status`).
    started: bool,
    /// Readiness goes on while stopping (it only reports).
    ready: bool,
    readiness: Streak,
}

impl Stop {
    /// A stop of `live` that begins now; it keeps the instance's readiness,
    /// which goes on while it stops.
    fn begin(live: &Live, cause: StopCause, deadline: Instant, in_hook: bool) -> Stop {
        let (ready, readiness) = match &live.stage {
            Stage::Started { ready, readiness, .. } => (*ready, *readiness),
            _ => (false, Streak::default()),
        };
        Stop {
            cause,
            deadline,
            in_hook,
            signalled_at: None,
            kill_at: None,
            killed: false,
            started: live.started(),
            ready,
            readiness,
        }
    }
}

/// A running instance.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Live {
    pid: NonZeroI32,
    spawned_at: Instant,
    stage: Stage,
}

impl Live {
    fn pid(&self) -> i32 {
        self.pid.get()
    }

    fn started(&self) -> bool {
        match &self.stage {
            Stage::Starting { .. } => false,
            Stage::Started { .. } => true,
            Stage::Stopping(s) => s.started,
        }
    }

    fn ready(&self) -> bool {
        match &self.stage {
            Stage::Starting { .. } => false,
            Stage::Started { ready, .. } => *ready,
            Stage::Stopping(s) => s.ready,
        }
    }

    fn stop(&self) -> Option<&Stop> {
        match &self.stage {
            Stage::Stopping(s) => Some(s),
            _ => None,
        }
    }
}

/// What one entry is doing: the states of its machine.
#[derive(Debug, Clone, PartialEq, Eq)]
enum EntryState {
    /// Not reached yet in the start sequence.
    Waiting,
    /// A spawn was asked for; its result has not come back.
    Spawning { asked_at: Instant },
    /// Its process runs.
    Running(Live),
    /// Waiting out its backoff before a restart.
    Backoff { until: Instant },
    /// Finished for good.
    Exited,
}

/// An event about one entry's current instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryEvent {
    Spawned(NonZeroI32),
    SpawnFailed(i32),
    Exited(Exit),
    Probe(ProbeKind, bool),
    Hook(HookKind, bool),
    StopTimer,
}

#[derive(Debug, Clone)]
struct Entry {
    state: EntryState,
    instance: Instance,
    restarts: u32,
    last_exit: Option<Exit>,
    backoff: Backoff,
    /// The start sequence has moved past it (init succeeded, sidecar latched).
    passed: bool,
    /// Spawns that failed in a row (reset by a successful one).
    spawn_failures: u32,
    /// The current instance was started during termination (KEP-4438): it
    /// runs no pre_stop at its turn.
    restarted_in_termination: bool,
    /// How many instances were started during termination (KEP-4438's
    /// counter of such restarts).
    restarts_in_termination: u32,
    /// Stopped by `podinit stop` (its state is `Exited`): `podinit start`
    /// brings it back.
    held: bool,
    /// Removed from the config by `podinit reload`: stopped, never started
    /// again, and left out of the status.
    removed: bool,
    /// Its settings from a `podinit reload`, taken when its process exits.
    pending: Option<Box<crate::spec::EntrySpec>>,
}

impl Entry {
    /// An entry not reached yet, with a backoff of `backoff`.
    fn new(backoff: crate::spec::BackoffSpec) -> Entry {
        Entry {
            state: EntryState::Waiting,
            instance: 0,
            restarts: 0,
            last_exit: None,
            backoff: Backoff::new(backoff),
            passed: false,
            spawn_failures: 0,
            restarted_in_termination: false,
            restarts_in_termination: 0,
            held: false,
            removed: false,
            pending: None,
        }
    }

    fn live(&self) -> Option<&Live> {
        match &self.state {
            EntryState::Running(l) => Some(l),
            _ => None,
        }
    }

    /// Has a process, or is about to have one.
    fn is_alive(&self) -> bool {
        matches!(self.state, EntryState::Running(_) | EntryState::Spawning { .. })
    }
}

/// The pod's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Going through the ordered init/sidecar list; `cursor` indexes it.
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

/// The lifecycle of one pod.
#[derive(Debug)]
pub struct Pod {
    spec: PodSpec,
    entries: Vec<Entry>,
    /// Init and sidecar entries in file order: the start sequence.
    sequence: Vec<EntryId>,
    /// Mains in file order.
    mains: Vec<EntryId>,
    phase: Phase,
    /// The status of the entry whose failure ended the pod: an init under
    /// `Never`, or an entry past its `max_restarts`.
    failed: Option<i32>,
    /// `[pod] active_deadline` passed and began termination.
    deadline_exceeded: bool,
    /// When `[pod] active_deadline` passes, once the pod has started.
    deadline_at: Option<Instant>,
    /// Restarts of the whole pod (`restart_all`), and their backoff.
    pod_restarts: u32,
    pod_backoff: Backoff,
    /// When the start sequence last began (for the pod's backoff).
    booted_at: Option<Instant>,
    /// The signal that began termination, if one did.
    term_signal: Option<Signal>,
    /// SIGINTs received: the second one spends the termination budget.
    sigints: u32,
    /// When the grace period of a termination that a signal began ends: what
    /// sent the signal (`docker stop`, the kubelet) kills podinit then.
    signal_grace_end: Option<Instant>,
    /// Why the probe result being handled failed, for its notes.
    probe_why: Option<String>,
    /// `[pod] active_deadline` as the last `podinit reload` read it (the
    /// running deadline stays the one read at start).
    file_active_deadline: Option<Option<Duration>>,
    out: Vec<Action>,
    notes: Vec<Note>,
}

impl Pod {
    /// A pod that has not started; call [`Pod::start`] next.
    pub fn new(spec: PodSpec) -> Self {
        let entries = spec.entries.iter().map(|_| Entry::new(spec.backoff)).collect();
        let sequence = (0..spec.entries.len()).filter(|&i| spec.entries[i].role != Role::Main).collect();
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
            term_signal: None,
            sigints: 0,
            signal_grace_end: None,
            probe_why: None,
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
        self.advance(now);
        std::mem::take(&mut self.out)
    }

    /// Takes one event and returns what to do about it (at most one spawn).
    pub fn handle(&mut self, event: Event, now: Instant) -> Vec<Action> {
        if self.phase == Phase::Done {
            self.debug(None, format!("event after exit ignored: {event:?}"));
            return Vec::new();
        }
        match event {
            Event::Spawned { entry, instance, pid } => match NonZeroI32::new(pid).filter(|p| p.get() > 0) {
                Some(pid) => self.on_entry(entry, instance, EntryEvent::Spawned(pid), now),
                None => self.debug(Some(entry), format!("spawned with an impossible pid {pid}: ignored")),
            },
            Event::SpawnFailed { entry, instance, status } => {
                self.on_entry(entry, instance, EntryEvent::SpawnFailed(status), now);
            }
            Event::Exited { entry, instance, exit } => {
                self.on_entry(entry, instance, EntryEvent::Exited(exit), now)
            }
            Event::Probe { entry, instance, kind, ok, why } => {
                self.probe_why = why;
                self.on_entry(entry, instance, EntryEvent::Probe(kind, ok), now);
                self.probe_why = None;
            }
            Event::Hook { entry, instance, hook, ok } => {
                self.on_entry(entry, instance, EntryEvent::Hook(hook, ok), now);
            }
            Event::Timer(Timer::Stop(entry, instance)) => {
                self.on_entry(entry, instance, EntryEvent::StopTimer, now)
            }
            Event::Timer(Timer::Backoff(entry)) => self.on_backoff_over(entry, now),
            Event::Timer(Timer::Budget) => {
                let mut n = Note::new(
                    Level::Warn,
                    "budget_spent",
                    None,
                    "termination_grace_period is spent: stopping every process left".into(),
                );
                n.delay = Some(self.spec.termination_grace_period);
                self.notes.push(n);
                self.spend_budget(now);
            }
            Event::Timer(Timer::PodRestart) => self.on_pod_restart_timer(now),
            Event::Timer(Timer::Deadline) => {
                if !self.terminating() {
                    let d = self.spec.active_deadline.unwrap_or_default();
                    let text = format!(
                        "active_deadline ({}) has passed: terminating the pod",
                        humantime::format_duration(d)
                    );
                    let mut n = Note::new(Level::Warn, "deadline_exceeded", None, text);
                    n.delay = Some(d);
                    self.notes.push(n);
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
        self.finish_if_empty();
        std::mem::take(&mut self.out)
    }

    /// The entry named `name`.
    pub fn entry_named(&self, name: &str) -> Option<EntryId> {
        self.current_named(name)
    }

    /// Takes a request from the command line (docs/control.md): `Ok` when it
    /// was taken (what it asked for goes on as actions), else why it was
    /// refused, and the actions either way.
    pub fn control(&mut self, request: Control, now: Instant) -> (Result<(), String>, Vec<Action>) {
        let result = self.on_control(request, now);
        self.finish_if_empty();
        (result, std::mem::take(&mut self.out))
    }

    fn on_control(&mut self, request: Control, now: Instant) -> Result<(), String> {
        if matches!(self.phase, Phase::Terminating { .. } | Phase::Done) {
            return Err("termination has begun: nothing is started or stopped by request any more".into());
        }
        if request == Control::Shutdown {
            // As SIGTERM to podinit, exit status included.
            let text = "shutdown asked for: terminating the pod".to_owned();
            self.notes.push(Note::new(Level::Info, "terminating", None, text));
            self.term_signal = Some(Signal::TERM);
            self.begin_termination(now);
            return Ok(());
        }
        if self.phase == Phase::Restarting {
            return Err("the whole pod is restarting (restart_all); ask again once it runs".into());
        }
        let entry = match request {
            Control::Restart(e) | Control::Stop(e) | Control::Start(e) | Control::Signal(e, _) => e,
            Control::Shutdown => return Ok(()),
        };
        let Some(e) = self.entries.get(entry) else { return Err(format!("no entry {entry}")) };
        let name = self.name(entry).to_owned();
        let is_init = self.role(entry) == Role::Init;
        let stopping = e.live().is_some_and(|l| l.stop().is_some());
        let not_now = |state: &EntryState| match state {
            EntryState::Waiting => {
                Some(format!("{name} has not started yet: its turn in the start sequence has not come"))
            }
            EntryState::Spawning { .. } => Some(format!("{name} is being started; ask again once it runs")),
            EntryState::Running(_) if stopping => Some(format!("{name} is being stopped already")),
            _ => None,
        };
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
                        let text = format!("restart of {name} asked for: stopping it");
                        self.note(Level::Info, "restart_requested", entry, text);
                        self.stop_for(entry, StopCause::Requested { restart: true }, None, now);
                    }
                    _ => self.start_requested(entry, "restart", now),
                }
                Ok(())
            }
            Control::Stop(_) => {
                if let Some(why) = not_now(&e.state) {
                    return Err(why);
                }
                match e.state {
                    EntryState::Running(_) => {
                        let text = format!("stop of {name} asked for: stopping it until `podinit start {name}`");
                        self.note(Level::Info, "stop_requested", entry, text);
                        self.stop_for(entry, StopCause::Requested { restart: false }, None, now);
                        Ok(())
                    }
                    EntryState::Backoff { .. } => {
                        self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
                        let text = format!("{name} stopped while waiting out its backoff");
                        self.note(Level::Info, "stop_requested", entry, text);
                        self.entries[entry].state = EntryState::Exited;
                        self.entries[entry].held = true;
                        self.ended_for_now(entry, now);
                        Ok(())
                    }
                    _ if e.held => Err(format!("{name} is stopped already")),
                    _ => Err(format!("{name} is not running: it has exited")),
                }
            }
            Control::Start(_) if e.held && e.state == EntryState::Exited => {
                self.start_requested(entry, "start", now);
                Ok(())
            }
            Control::Start(_) => Err(format!(
                "{name} is not stopped: `podinit start` starts an entry that `podinit stop` stopped"
            )),
            Control::Signal(_, signal) => match e.live() {
                Some(live) => {
                    let pid = live.pid();
                    let text = format!("sending {signal} to {name} (pid {pid}), as asked");
                    let n = self.note(Level::Info, "signal_requested", entry, text);
                    n.pid = Some(pid);
                    n.signal = Some(signal);
                    self.out.push(Action::Signal { entry, pid, signal });
                    Ok(())
                }
                None => Err(format!("{name} is not running")),
            },
            Control::Shutdown => Ok(()),
        }
    }

    /// `podinit reload` (docs/control.md, "Reload"): the pod takes `spec`,
    /// as the kubelet takes a changed container spec. A sidecar or main whose
    /// settings changed is restarted through its stop path and comes back
    /// with the new ones; an init that has finished is never run again; added
    /// sidecars and mains start at once (the start sequence is over), removed
    /// ones are stopped; unchanged entries are not touched; `[pod]` settings
    /// apply from now on. `Ok` lists what changed; `Err` says why nothing did.
    pub fn reload(&mut self, spec: PodSpec, now: Instant) -> (Result<Vec<String>, String>, Vec<Action>) {
        let result = self.on_reload(spec, now);
        self.finish_if_empty();
        (result, std::mem::take(&mut self.out))
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
                self.entries[i].removed && self.entries[i].is_alive() && self.spec.entries[i].name == new.name
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
                if *old != *new && matches!(self.entries[i].state, EntryState::Spawning { .. }) {
                    return Err(format!("{} is being started; reload again once it runs", new.name));
                }
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
                        _ => self.sequence.push(i),
                    }
                    added.push(i);
                }
            }
        }
        let gone: Vec<EntryId> = (0..self.entries.len())
            .filter(|&i| {
                !self.entries[i].removed && !spec.entries.iter().any(|e| e.name == self.spec.entries[i].name)
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
                    self.entries[i].passed = true;
                    self.entries[i].state = EntryState::Exited;
                    said.push(format!("{name} added: not run (the start sequence is over)"));
                }
                _ if booting => said.push(format!("{name} added: starts in its turn")),
                _ => {
                    if self.role(i) == Role::Sidecar {
                        self.entries[i].passed = true;
                    }
                    said.push(format!("{name} added: starting it"));
                    self.spawn(i, now);
                }
            }
        }
        if said.is_empty() {
            said.push("nothing changed".into());
        }
        let notes: Vec<Note> = said
            .iter()
            .map(|line| Note::new(Level::Info, "reloaded", None, format!("reload: {line}")))
            .collect();
        self.notes.splice(first_note..first_note, notes);
        Ok(said)
    }

    /// The entry named `name` that has not been removed.
    fn current_named(&self, name: &str) -> Option<EntryId> {
        (0..self.entries.len()).find(|&i| !self.entries[i].removed && self.spec.entries[i].name == name)
    }

    /// Entry `i` has new settings (`podinit reload`).
    fn change(&mut self, i: EntryId, new: crate::spec::EntrySpec, now: Instant) -> String {
        let name = new.name.clone();
        let role = self.role(i);
        let e = &mut self.entries[i];
        match &e.state {
            EntryState::Running(live) if role != Role::Init && live.stop().is_none() => {
                e.pending = Some(Box::new(new));
                self.stop_for(i, StopCause::Requested { restart: true }, None, now);
                format!("{name} changed: restarting it with its new settings")
            }
            EntryState::Running(_) => {
                e.pending = Some(Box::new(new));
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
            _ => {
                self.spec.entries[i] = new;
                format!("{name} changed: it starts with its new settings")
            }
        }
    }

    /// Entry `i` is no longer in the config (`podinit reload`).
    fn remove(&mut self, i: EntryId, now: Instant) -> String {
        let name = self.name(i).to_owned();
        self.entries[i].removed = true;
        self.entries[i].passed = true;
        match &self.entries[i].state {
            EntryState::Running(live) if live.stop().is_none() => {
                self.stop_for(i, StopCause::Requested { restart: false }, None, now);
                format!("{name} removed: stopping it")
            }
            EntryState::Running(_) => format!("{name} removed: it is being stopped"),
            EntryState::Backoff { .. } => {
                self.out.push(Action::CancelTimer(Timer::Backoff(i)));
                self.entries[i].state = EntryState::Exited;
                format!("{name} removed")
            }
            _ => {
                self.entries[i].state = EntryState::Exited;
                format!("{name} removed")
            }
        }
    }

    /// `podinit start`, or `podinit restart` of an entry without a process
    /// (exited, stopped, in backoff): a new instance now, without backoff.
    fn start_requested(&mut self, entry: EntryId, verb: &str, now: Instant) {
        if matches!(self.entries[entry].state, EntryState::Backoff { .. }) {
            self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
        }
        self.entries[entry].held = false;
        let text = format!("{verb} of {} asked for: starting it", self.name(entry));
        let event = if verb == "start" { "start_requested" } else { "restart_requested" };
        self.note(Level::Info, event, entry, text);
        self.spawn(entry, now);
    }

    /// When `[pod] active_deadline` passes, while it may still (not once
    /// termination has begun).
    pub fn deadline_at(&self) -> Option<Instant> {
        self.deadline_at.filter(|_| !self.terminating() && self.phase != Phase::Done)
    }

    /// How many times the whole pod was restarted (`restart_all`).
    pub fn pod_restarts(&self) -> u32 {
        self.pod_restarts
    }

    /// What the machine found worth saying since the last call, in order.
    pub fn take_notes(&mut self) -> Vec<Note> {
        std::mem::take(&mut self.notes)
    }

    /// Whether the pod is ready: every sidecar and main ready, and not
    /// terminating. Init entries do not count (docs/lifecycle.md rule 12).
    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Running { .. })
            && self.mains_started()
            && self
                .entries
                .iter()
                .zip(&self.spec.entries)
                .filter(|(e, s)| s.role != Role::Init && !e.removed)
                .all(|(e, _)| e.live().is_some_and(Live::ready))
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
                    EntryState::Spawning { .. } => State::Spawning,
                    EntryState::Running(_) => State::Running,
                    EntryState::Backoff { .. } => State::Backoff,
                    EntryState::Exited => State::Exited,
                },
                pid: e.live().map(Live::pid),
                restarts: e.restarts,
                last_exit: e.last_exit,
                started: e.live().is_some_and(Live::started),
                ready: e.live().is_some_and(Live::ready),
                stopping: e.live().is_some_and(|l| l.stop().is_some()),
                held: e.held,
                removed: e.removed,
                restarts_in_termination: e.restarts_in_termination,
                stop: e.live().and_then(Live::stop).map(|s| StopStatus {
                    grace: if s.cause == StopCause::Termination {
                        StopGrace::Termination
                    } else {
                        StopGrace::Own
                    },
                    in_pre_stop: s.in_hook,
                    signalled_at: s.signalled_at,
                    kill_by: s.kill_at.unwrap_or(s.deadline + MIN_STOP_GRACE),
                    killed: s.killed,
                }),
            })
            .collect()
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

    /// When the grace period of a termination that SIGTERM or SIGINT began
    /// ends, also once the pod is done: whoever sent the signal (`docker
    /// stop`, the kubelet) SIGKILLs podinit then, so its last output must be
    /// out by then. `None` when no signal began termination.
    pub fn signal_grace_end(&self) -> Option<Instant> {
        self.signal_grace_end
    }

    /// When the termination budget is spent, while the pod terminates and
    /// it is not spent yet (docs/lifecycle.md, "Termination").
    pub fn termination_deadline(&self) -> Option<Instant> {
        match self.phase {
            Phase::Terminating { deadline, spent: false } => Some(deadline),
            _ => None,
        }
    }

    // ----- helpers -----

    fn name(&self, entry: EntryId) -> &str {
        &self.spec.entries[entry].name
    }

    fn role(&self, entry: EntryId) -> Role {
        self.spec.entries[entry].role
    }

    fn debug(&mut self, entry: Option<EntryId>, text: String) {
        self.notes.push(Note::new(Level::Debug, "", entry, text));
    }

    fn note(&mut self, level: Level, event: &'static str, entry: EntryId, text: String) -> &mut Note {
        self.notes.push(Note::new(level, event, Some(entry), text));
        let last = self.notes.len() - 1;
        &mut self.notes[last]
    }

    /// Whether any main has been asked for (the start sequence got that far).
    fn mains_started(&self) -> bool {
        self.mains.iter().any(|&m| self.entries[m].instance > 0)
    }

    fn terminating(&self) -> bool {
        matches!(self.phase, Phase::Terminating { .. })
    }

    // ----- one entry's machine -----

    /// The transitions of one entry: one arm per (state, event) that means
    /// something; anything else is news about an instance that is gone or a
    /// timer that was overtaken, ignored and noted at debug level.
    fn on_entry(&mut self, entry: EntryId, instance: Instance, ev: EntryEvent, now: Instant) {
        let Some(e) = self.entries.get(entry) else { return };
        if e.instance != instance {
            self.debug(Some(entry), format!("{ev:?} of an old instance ({instance}) ignored"));
            return;
        }
        match (&e.state, ev) {
            (EntryState::Spawning { asked_at }, EntryEvent::Spawned(pid)) => {
                let asked_at = *asked_at;
                self.on_spawned(entry, pid, asked_at, now);
            }
            (EntryState::Spawning { .. }, EntryEvent::SpawnFailed(status)) => {
                let e = &mut self.entries[entry];
                e.spawn_failures = e.spawn_failures.saturating_add(1);
                self.on_exit(entry, Exit::Code(status), now);
            }
            (EntryState::Running(live), EntryEvent::Exited(exit)) => {
                let pid = live.pid();
                let mut n = Note::new(
                    Level::Info,
                    "exited",
                    Some(entry),
                    format!("{} (pid {pid}) exited with {exit}", self.name(entry)),
                );
                n.pid = Some(pid);
                n.status = Some(exit.status());
                self.notes.push(n);
                self.on_exit(entry, exit, now);
            }
            (EntryState::Running(live), EntryEvent::Probe(kind, ok)) => {
                let stage = live.stage.clone();
                self.on_probe(entry, stage, kind, ok, now);
            }
            (EntryState::Running(live), EntryEvent::Hook(HookKind::PostStart, ok)) => match &live.stage {
                Stage::Starting { post_start_done: false, startup_passed, startup } => {
                    let (startup_passed, startup) = (*startup_passed, *startup);
                    self.on_post_start(entry, ok, startup_passed, startup, now);
                }
                // A copy started during termination whose post_start failed:
                // its stop signal now rather than at its turn.
                Stage::Stopping(stop)
                    if !ok
                        && stop.signalled_at.is_none()
                        && self.entries[entry].restarted_in_termination
                        && self.spec.entries[entry].post_start.is_some() =>
                {
                    let deadline = stop.deadline;
                    let text = format!("{} post_start hook failed: stopping it", self.name(entry));
                    self.note(Level::Warn, "hook_failed", entry, text).hook = Some(HookKind::PostStart);
                    self.send_stop(entry, now, deadline);
                }
                _ => self.debug(Some(entry), format!("post_start result ({ok}) ignored while stopping")),
            },
            (EntryState::Running(live), EntryEvent::Hook(HookKind::PreStop, ok)) => {
                if let Some(stop) = live.stop().filter(|s| s.in_hook).cloned() {
                    self.on_pre_stop(entry, stop, ok, now);
                }
            }
            (EntryState::Running(live), EntryEvent::StopTimer) => {
                if let Some(stop) = live.stop().cloned() {
                    self.on_stop_timer(entry, stop, now);
                }
            }
            (state, ev) => {
                let text = format!("{ev:?} ignored in state {state:?}");
                self.debug(Some(entry), text);
            }
        }
    }

    fn set_stage(&mut self, entry: EntryId, stage: Stage) {
        if let EntryState::Running(live) = &mut self.entries[entry].state {
            live.stage = stage;
        }
    }

    // ----- start sequence -----

    /// Moves the start sequence as far as it can go, then starts mains, one
    /// spawn at a time: a spawn's result moves it on.
    fn advance(&mut self, now: Instant) {
        loop {
            match self.phase {
                Phase::Booting { cursor } => {
                    let Some(&entry) = self.sequence.get(cursor) else {
                        self.phase = Phase::Running { next_main: 0 };
                        continue;
                    };
                    if self.entries[entry].passed {
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
                        EntryState::Spawning { .. } => return,
                        // A main's post_start holds the next main (KEP-753).
                        EntryState::Running(Live {
                            stage: Stage::Starting { post_start_done: false, .. },
                            ..
                        }) if self.spec.entries[entry].post_start.is_some() => return,
                        _ => self.phase = Phase::Running { next_main: next_main + 1 },
                    }
                }
                Phase::Restarting | Phase::Terminating { .. } | Phase::Done => return,
            }
        }
    }

    /// Latches a sidecar into the sequence once it is started (and ready when
    /// `hold_until = "ready"`).
    fn check_sidecar_passed(&mut self, entry: EntryId, now: Instant) {
        let spec = &self.spec.entries[entry];
        let e = &self.entries[entry];
        let Some(live) = e.live() else { return };
        if spec.role != Role::Sidecar || e.passed || !live.started() {
            return;
        }
        if spec.hold_until == HoldUntil::Ready && !live.ready() {
            return;
        }
        self.debug(Some(entry), format!("{} passed the start sequence", spec.name));
        self.entries[entry].passed = true;
        self.advance(now);
    }

    fn spawn(&mut self, entry: EntryId, now: Instant) {
        debug_assert!(!self.terminating());
        self.spawn_unchecked(entry, now);
    }

    /// Whether a sidecar that exited during termination, before its turn, is
    /// started again (KEP-4438, alpha in Kubernetes 1.37): only with
    /// `restart_during_termination`, only while the budget is not spent, only
    /// while something it must outlive still runs, and not with a grace of
    /// 1 s or less (as KEP-4438).
    fn may_restart_during_termination(&self, entry: EntryId) -> bool {
        let Phase::Terminating { spent: false, .. } = self.phase else { return false };
        if !self.spec.entries[entry].restart_during_termination
            || self.spec.termination_grace_period <= Duration::from_secs(1)
        {
            return false;
        }
        // Its turn has not come while a main, an init or a later sidecar runs.
        (0..self.entries.len())
            .filter(|&i| i != entry)
            .any(|i| self.entries[i].is_alive() && (self.role(i) != Role::Sidecar || i > entry))
    }

    fn spawn_unchecked(&mut self, entry: EntryId, now: Instant) {
        let e = &mut self.entries[entry];
        if e.instance > 0 {
            e.restarts = e.restarts.saturating_add(1);
        }
        e.instance = e.instance.wrapping_add(1);
        e.state = EntryState::Spawning { asked_at: now };
        let instance = e.instance;
        self.out.push(Action::Spawn { entry, instance });
    }

    fn on_spawned(&mut self, entry: EntryId, pid: NonZeroI32, spawned_at: Instant, now: Instant) {
        let spec = &self.spec.entries[entry];
        let instance = self.entries[entry].instance;
        let has_post_start = spec.post_start.is_some();
        let startup = spec.startup_probe.as_ref().map(|p| p.initial_delay);
        let text = format!("{} started (pid {pid})", spec.name);
        self.note(Level::Info, "started", entry, text).pid = Some(pid.get());
        let e = &mut self.entries[entry];
        e.spawn_failures = 0;
        e.state = EntryState::Running(Live {
            pid,
            spawned_at,
            stage: Stage::Starting {
                post_start_done: !has_post_start,
                startup_passed: startup.is_none(),
                startup: Streak::default(),
            },
        });
        if self.phase == Phase::Restarting {
            // The pod restarts while it was being spawned: killed like the rest.
            self.kill_for_pod_restart(entry, now);
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
            if let Some(live) = self.entries[entry].live() {
                let stop = Stop::begin(live, StopCause::Termination, deadline, false);
                self.set_stage(entry, Stage::Stopping(stop));
            }
            if has_post_start && self.entries[entry].restarted_in_termination {
                let pid = pid.get();
                self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PostStart });
            }
            self.drive_termination(now);
            return;
        }
        let pid = pid.get();
        if has_post_start {
            self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PostStart });
        }
        if let Some(delay) = startup {
            let not_before = spawned_at + delay;
            self.out.push(Action::StartProbe { entry, instance, pid, kind: ProbeKind::Startup, not_before });
        }
        self.check_started(entry, now);
        // A main's spawn result moves the mains on (one spawn per step).
        self.advance(now);
    }

    /// Marks the instance started once post_start returned and the startup
    /// probe passed; starts liveness and readiness probes then.
    fn check_started(&mut self, entry: EntryId, now: Instant) {
        let Some(live) = self.entries[entry].live() else { return };
        let Stage::Starting { post_start_done: true, startup_passed: true, .. } = live.stage else { return };
        let (pid, spawned_at) = (live.pid(), live.spawned_at);
        let instance = self.entries[entry].instance;
        let spec = &self.spec.entries[entry];
        let has_readiness = spec.readiness_probe.is_some();
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
        let stage = Stage::Started {
            ready: !has_readiness,
            readiness: Streak::default(),
            liveness: Streak::default(),
        };
        self.set_stage(entry, stage);
        self.check_sidecar_passed(entry, now);
        self.advance(now);
    }

    // ----- exits and restarts -----

    fn on_exit(&mut self, entry: EntryId, exit: Exit, now: Instant) {
        let role = self.role(entry);
        let e = &mut self.entries[entry];
        let (failed_stop, ran_for, signalled, requested) = match &e.state {
            EntryState::Running(live) => (
                live.stop().is_some_and(|s| s.cause == StopCause::Failed),
                now.saturating_duration_since(live.spawned_at),
                live.stop().is_some_and(|s| s.signalled_at.is_some()),
                live.stop().and_then(|s| match s.cause {
                    StopCause::Requested { restart } => Some(restart),
                    _ => None,
                }),
            ),
            _ => (false, Duration::ZERO, false, None),
        };
        let instance = e.instance;
        e.last_exit = Some(exit);
        e.state = EntryState::Exited;
        if let Some(new) = e.pending.take() {
            // `podinit reload` changed it while it ran: the next instance
            // runs with the new settings.
            self.spec.entries[entry] = *new;
        }
        self.out.push(Action::StopChecks { entry });
        self.out.push(Action::CancelTimer(Timer::Stop(entry, instance)));

        if self.phase == Phase::Restarting {
            self.entries[entry].state = EntryState::Waiting;
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
        if self.entries[entry].removed {
            self.ended_for_now(entry, now);
            return;
        }
        match requested {
            Some(true) => {
                // `podinit restart`: a new instance at once; its backoff is
                // not used (and not grown) by a restart asked for.
                let text = format!("restarting {} at once, as asked", self.name(entry));
                self.note(Level::Info, "restarting", entry, text);
                self.spawn(entry, now);
                return;
            }
            Some(false) => {
                self.entries[entry].held = true;
                self.ended_for_now(entry, now);
                return;
            }
            None => {}
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
            let text = format!(
                "{} exited with {exit} after {max} restarts (max_restarts): the pod fails",
                self.name(entry)
            );
            self.note(Level::Warn, "max_restarts", entry, text).status = Some(exit.status());
            self.failed = Some(exit.status());
            self.begin_termination(now);
            return;
        }
        if restart {
            let delay = self.entries[entry].backoff.next_delay(ran_for);
            if delay.is_zero() {
                self.restart(entry, now);
            } else {
                let text =
                    format!("restarting {} in {}", self.name(entry), humantime::format_duration(delay));
                self.note(Level::Info, "backoff", entry, text).delay = Some(delay);
                self.entries[entry].state = EntryState::Backoff { until: now + delay };
                self.out.push(Action::ArmTimer { timer: Timer::Backoff(entry), at: now + delay });
            }
            return;
        }
        match role {
            Role::Init if exit.success() => {
                self.entries[entry].passed = true;
                self.advance(now);
            }
            Role::Init => {
                let text = format!(
                    "init {} failed with {exit}; restart_policy is Never, so the pod fails",
                    self.name(entry)
                );
                self.note(Level::Warn, "init_failed", entry, text).status = Some(exit.status());
                self.failed = Some(exit.status());
                self.begin_termination(now);
            }
            Role::Main => self.ended_for_now(entry, now),
            Role::Sidecar => {}
        }
    }

    /// A main has ended (exited and not restarted, or stopped by `podinit
    /// stop`): the pod completes when `completion` says so. A sidecar stopped
    /// by request holds nothing: the start sequence moves past it.
    fn ended_for_now(&mut self, entry: EntryId, now: Instant) {
        match self.role(entry) {
            Role::Main => {
                // Mains removed by `podinit reload` do not count, and their
                // end completes nothing.
                let ended =
                    |id: &EntryId| self.entries[*id].removed || self.entries[*id].state == EntryState::Exited;
                let complete = match self.spec.completion {
                    Completion::All => self.mains.iter().all(ended),
                    Completion::Any => !self.entries[entry].removed,
                };
                if complete {
                    self.notes.push(Note::new(Level::Info, "completed", None, "pod completed".into()));
                    self.begin_termination(now);
                } else {
                    // A main with post_start that died before the hook returned
                    // must not hold the next main.
                    self.advance(now);
                }
            }
            Role::Sidecar => {
                self.entries[entry].passed = true;
                self.advance(now);
            }
            Role::Init => {}
        }
    }

    fn on_backoff_over(&mut self, entry: EntryId, now: Instant) {
        if !matches!(self.entries.get(entry).map(|e| &e.state), Some(EntryState::Backoff { .. })) {
            return;
        }
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

    /// KEP-4438: starts a sidecar again during termination; it runs its
    /// post_start, no probes, and is stopped at its turn like the others.
    fn restart_in_termination(&mut self, entry: EntryId, now: Instant) {
        let text = format!("restarting {} during termination (restart_during_termination)", self.name(entry));
        self.note(Level::Info, "restarting", entry, text);
        let e = &mut self.entries[entry];
        e.restarted_in_termination = true;
        e.restarts_in_termination = e.restarts_in_termination.saturating_add(1);
        self.spawn_unchecked(entry, now);
    }

    /// Starts the entry again (its backoff, if any, is over). After spawn
    /// failures in a row the note is given only at the 1st, 2nd, 4th, 8th...
    /// failure, so that a crash loop with a zero backoff logs in log time.
    fn restart(&mut self, entry: EntryId, now: Instant) {
        let failures = self.entries[entry].spawn_failures;
        if failures == 0 || failures.is_power_of_two() {
            let text = format!("restarting {}", self.name(entry));
            self.note(Level::Info, "restarting", entry, text);
        }
        self.spawn(entry, now);
    }

    // ----- probes and hooks -----

    fn on_probe(&mut self, entry: EntryId, stage: Stage, kind: ProbeKind, ok: bool, now: Instant) {
        let spec = &self.spec.entries[entry];
        let Some(probe) = spec.probe(kind) else { return };
        let (success_threshold, failure_threshold) = (probe.success_threshold, probe.failure_threshold);
        let probe_grace = probe.termination_grace_period;
        let name = spec.name.clone();
        let terminating = self.terminating();
        match (stage, kind) {
            // Startup probes run until they pass (rule 7); liveness once started.
            (Stage::Starting { post_start_done, startup_passed: false, mut startup }, ProbeKind::Startup)
                if !terminating =>
            {
                startup.add(ok);
                if ok {
                    self.note(
                        Level::Info,
                        "startup_probe_succeeded",
                        entry,
                        format!("{name} startup probe succeeded"),
                    );
                    self.out.push(Action::StopProbe { entry, kind });
                    self.set_stage(entry, Stage::Starting { post_start_done, startup_passed: true, startup });
                    self.check_started(entry, now);
                } else {
                    self.set_stage(
                        entry,
                        Stage::Starting { post_start_done, startup_passed: false, startup },
                    );
                    self.probe_failure(entry, kind, startup.failures, failure_threshold, probe_grace, now);
                }
            }
            (Stage::Started { ready, readiness, mut liveness }, ProbeKind::Liveness) if !terminating => {
                if ok && liveness.failures > 0 {
                    // Below the threshold nothing was said at info level, so
                    // neither is the recovery.
                    let n = liveness.failures;
                    let s = if n == 1 { "" } else { "s" };
                    self.debug(
                        Some(entry),
                        format!("{name} liveness probe passes again after {n} failure{s}"),
                    );
                }
                liveness.add(ok);
                self.set_stage(entry, Stage::Started { ready, readiness, liveness });
                if !ok {
                    self.probe_failure(entry, kind, liveness.failures, failure_threshold, probe_grace, now);
                }
            }
            (Stage::Started { ready, mut readiness, liveness }, ProbeKind::Readiness) => {
                readiness.add(ok);
                let ready = self.readiness(entry, ready, readiness, success_threshold, failure_threshold);
                self.set_stage(entry, Stage::Started { ready, readiness, liveness });
                if ready && !terminating {
                    self.check_sidecar_passed(entry, now);
                }
            }
            // Readiness goes on while an instance stops (it only reports).
            (Stage::Stopping(mut stop), ProbeKind::Readiness) => {
                stop.readiness.add(ok);
                stop.ready =
                    self.readiness(entry, stop.ready, stop.readiness, success_threshold, failure_threshold);
                self.set_stage(entry, Stage::Stopping(stop));
            }
            (stage, kind) => self.debug(Some(entry), format!("{kind} probe result ignored in {stage:?}")),
        }
    }

    /// The new readiness after a readiness result; notes a change.
    fn readiness(&mut self, entry: EntryId, ready: bool, streak: Streak, success: u32, failure: u32) -> bool {
        let name = self.name(entry).to_owned();
        if !ready && streak.successes >= success {
            self.note(Level::Info, "ready", entry, format!("{name} is ready"));
            true
        } else if ready && streak.failures >= failure {
            let text =
                format!("{name} is not ready: readiness probe failed {failure} times{}", self.because());
            self.note(Level::Warn, "unready", entry, text).probe = Some(ProbeKind::Readiness);
            false
        } else {
            ready
        }
    }

    /// ` (last: WHY)` for the probe result being handled, when it failed.
    fn because(&self) -> String {
        self.probe_why.as_ref().map_or_else(String::new, |why| format!(" (last: {why})"))
    }

    /// A startup or liveness failure; the threshold reached stops the process
    /// (docs/lifecycle.md rule 10), with the probe's grace when it has one.
    fn probe_failure(
        &mut self,
        entry: EntryId,
        kind: ProbeKind,
        failures: u32,
        threshold: u32,
        grace: Option<Duration>,
        now: Instant,
    ) {
        let name = self.name(entry).to_owned();
        self.debug(Some(entry), format!("{name} {kind} probe failed ({failures}/{threshold})"));
        if failures >= threshold {
            // What happens after the stop (a restart, or none) is said when
            // the process has exited.
            let text = format!("{name} {kind} probe failed {threshold} times{}; stopping it", self.because());
            self.note(Level::Warn, "probe_failed", entry, text).probe = Some(kind);
            self.stop_failed(entry, grace, now);
        }
    }

    fn on_post_start(
        &mut self,
        entry: EntryId,
        ok: bool,
        startup_passed: bool,
        startup: Streak,
        now: Instant,
    ) {
        self.set_stage(entry, Stage::Starting { post_start_done: true, startup_passed, startup });
        if ok {
            self.check_started(entry, now);
            return;
        }
        let name = self.name(entry).to_owned();
        let text = format!("{name} post_start hook failed; stopping it");
        self.note(Level::Warn, "hook_failed", entry, text).hook = Some(HookKind::PostStart);
        self.stop_failed(entry, None, now);
        // It never became started; a main must not hold the next one.
        self.advance(now);
    }

    fn on_pre_stop(&mut self, entry: EntryId, mut stop: Stop, ok: bool, now: Instant) {
        stop.in_hook = false;
        let deadline = stop.deadline;
        let cause = stop.cause;
        self.set_stage(entry, Stage::Stopping(stop));
        if !ok {
            let text = format!("{} pre_stop hook failed (the stop goes on)", self.name(entry));
            self.note(Level::Warn, "hook_failed", entry, text).hook = Some(HookKind::PreStop);
        }
        if matches!(cause, StopCause::Failed | StopCause::Requested { .. }) && !self.terminating() {
            // The hook's time comes out of the stop's own grace, with the 2 s
            // floor (kubernetes.io "Container Lifecycle Hooks").
            self.send_stop(entry, now, deadline);
        } else {
            self.drive_termination(now);
        }
    }

    /// Stops an instance whose startup/liveness probe or post_start failed; it is
    /// restarted by the rules once it exits. The grace is the probe's own when
    /// it has one (docs/lifecycle.md rule 10), else the pod's, counted from now.
    fn stop_failed(&mut self, entry: EntryId, grace: Option<Duration>, now: Instant) {
        self.stop_for(entry, StopCause::Failed, grace, now);
    }

    /// The stop path of one instance outside termination: pre_stop, stop
    /// signal, grace (`grace`, else the pod's), SIGKILL.
    fn stop_for(&mut self, entry: EntryId, cause: StopCause, grace: Option<Duration>, now: Instant) {
        let deadline = now + grace.unwrap_or(self.spec.termination_grace_period);
        let has_pre_stop = self.spec.entries[entry].pre_stop.is_some();
        let instance = self.entries[entry].instance;
        let Some(live) = self.entries[entry].live() else { return };
        let pid = live.pid();
        let stop = Stop::begin(live, cause, deadline, has_pre_stop);
        self.set_stage(entry, Stage::Stopping(stop));
        for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
            self.out.push(Action::StopProbe { entry, kind });
        }
        if has_pre_stop {
            self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PreStop });
            self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at: deadline });
        } else {
            self.send_stop(entry, now, deadline);
        }
    }

    /// Sends the stop signal now and arms SIGKILL for `max(now + 2 s, deadline)`.
    ///
    /// The stop signal is the entry's `stop_signal`, except for the command
    /// given after `--` during a termination that a signal began: that one
    /// gets the signal podinit received (SIGTERM or SIGINT), as tini and
    /// dumb-init pass on the signal they get (docs/signals.md).
    fn send_stop(&mut self, entry: EntryId, now: Instant, deadline: Instant) {
        let spec = &self.spec.entries[entry];
        let signal = match (self.term_signal, self.terminating()) {
            (Some(received), true) if spec.stop_with_received_signal => received,
            _ => spec.stop_signal,
        };
        let instance = self.entries[entry].instance;
        let Some(live) = self.entries[entry].live() else { return };
        let Some(stop) = live.stop() else { return };
        if stop.signalled_at.is_some() {
            return;
        }
        let pid = live.pid();
        let at = (now + MIN_STOP_GRACE).max(deadline);
        let mut stop = stop.clone();
        stop.signalled_at = Some(now);
        stop.kill_at = Some(at);
        stop.in_hook = false;
        self.set_stage(entry, Stage::Stopping(stop));
        let text = format!("stopping {} (pid {pid}) with {signal}", self.name(entry));
        let n = self.note(Level::Info, "stopping", entry, text);
        n.pid = Some(pid);
        n.signal = Some(signal);
        self.out.push(Action::Signal { entry, pid, signal });
        if signal != Signal::CONT && signal != Signal::KILL {
            // A stopped process (Ctrl-Z, SIGSTOP) cannot act on its stop signal
            // until it runs again; systemd sends SIGCONT after it for the same reason.
            self.out.push(Action::Signal { entry, pid, signal: Signal::CONT });
        }
        self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at });
    }

    fn on_stop_timer(&mut self, entry: EntryId, stop: Stop, now: Instant) {
        match stop.signalled_at {
            // The grace ran out during pre_stop: the stop signal now, SIGKILL 2 s later.
            None => self.send_stop(entry, now, now),
            Some(_) if !stop.killed => {
                let Some(pid) = self.entries[entry].live().map(Live::pid) else { return };
                self.set_stage(entry, Stage::Stopping(Stop { killed: true, ..stop }));
                let text = format!("{} (pid {pid}) did not stop in time; sending SIGKILL", self.name(entry));
                self.note(Level::Warn, "killed", entry, text).pid = Some(pid);
                self.out.push(Action::Signal { entry, pid, signal: Signal::KILL });
            }
            Some(_) => self.debug(Some(entry), "stop timer after SIGKILL ignored".into()),
        }
    }

    // ----- restarting the whole pod (KEP-5532) -----

    /// A `restart_all` rule matched: every process is killed at once, with no
    /// pre_stop and no grace, in no order (KEP-5532, "Restart Phases"); once
    /// all are gone and the pod's backoff is over, the start sequence runs
    /// again from the first init.
    fn restart_all(&mut self, entry: EntryId, exit: Exit, now: Instant) {
        let text = format!("{} exited with {exit}: restart_all, restarting the whole pod", self.name(entry));
        self.note(Level::Warn, "restart_all", entry, text).status = Some(exit.status());
        self.phase = Phase::Restarting;
        for e in 0..self.entries.len() {
            let instance = self.entries[e].instance;
            match &self.entries[e].state {
                EntryState::Running(_) => self.kill_for_pod_restart(e, now),
                EntryState::Backoff { .. } => {
                    self.out.push(Action::CancelTimer(Timer::Backoff(e)));
                    self.entries[e].state = EntryState::Waiting;
                }
                EntryState::Spawning { .. } => {
                    // Asked for in this step: withdrawn; else killed once spawned.
                    let asked = Action::Spawn { entry: e, instance };
                    if let Some(i) = self.out.iter().position(|a| *a == asked) {
                        self.out.remove(i);
                        self.entries[e].state = EntryState::Waiting;
                    }
                }
                EntryState::Waiting | EntryState::Exited => self.entries[e].state = EntryState::Waiting,
            }
            self.entries[e].held = false;
        }
        self.restart_pod_when_empty(now);
    }

    /// SIGKILL now, for a pod restart: no hook, no grace.
    fn kill_for_pod_restart(&mut self, entry: EntryId, now: Instant) {
        let Some(live) = self.entries[entry].live() else { return };
        if live.stop().is_some_and(|s| s.killed) {
            return;
        }
        let pid = live.pid();
        let stop = Stop {
            signalled_at: Some(now),
            kill_at: Some(now),
            killed: true,
            ..Stop::begin(live, StopCause::Termination, now, false)
        };
        self.set_stage(entry, Stage::Stopping(stop));
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
        let text = format!("restarting the pod in {}", humantime::format_duration(delay));
        let mut n = Note::new(Level::Info, "backoff", None, text);
        n.delay = Some(delay);
        self.notes.push(n);
        self.out.push(Action::ArmTimer { timer: Timer::PodRestart, at: now + delay });
    }

    fn on_pod_restart_timer(&mut self, now: Instant) {
        if self.phase != Phase::Restarting {
            return;
        }
        self.pod_restarts = self.pod_restarts.saturating_add(1);
        let text = format!("restarting the pod (restart {} of the whole pod)", self.pod_restarts);
        self.notes.push(Note::new(Level::Info, "pod_restarting", None, text));
        for e in &mut self.entries {
            e.passed = false;
            e.state = EntryState::Waiting;
        }
        self.phase = Phase::Booting { cursor: 0 };
        self.booted_at = Some(now);
        self.advance(now);
    }

    // ----- termination -----

    fn on_terminate(&mut self, signal: Signal, now: Instant) {
        if signal == Signal::INT {
            self.sigints = self.sigints.saturating_add(1);
        }
        match self.phase {
            Phase::Terminating { spent, .. } => {
                // A second SIGINT (counted from the first SIGINT podinit
                // received, whatever began termination) spends the budget;
                // SIGTERM, or a first SIGINT, changes nothing.
                if signal == Signal::INT && self.sigints >= 2 && !spent {
                    let n = Note::new(
                        Level::Warn,
                        "budget_spent",
                        None,
                        "second SIGINT: stopping everything now".into(),
                    );
                    self.notes.push(n);
                    self.spend_budget(now);
                } else {
                    let n = Note::new(
                        Level::Info,
                        "",
                        None,
                        format!("{signal} received during termination; nothing changes"),
                    );
                    self.notes.push(n);
                }
            }
            Phase::Done => {}
            _ => {
                let mut n = Note::new(
                    Level::Info,
                    "terminating",
                    None,
                    format!("{signal} received: terminating the pod"),
                );
                n.signal = Some(signal);
                self.notes.push(n);
                self.term_signal = Some(signal);
                self.signal_grace_end = Some(now + self.spec.termination_grace_period);
                self.begin_termination(now);
            }
        }
    }

    /// From now on nothing restarts; every running entry's pre_stop starts,
    /// inits and mains get their stop signal after it, sidecars in reverse
    /// order once everything after them is gone.
    fn begin_termination(&mut self, now: Instant) {
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
            let has_pre_stop = self.spec.entries[entry].pre_stop.is_some();
            let instance = self.entries[entry].instance;
            match &self.entries[entry].state {
                EntryState::Spawning { .. } => {
                    // A spawn asked for in this same step is withdrawn; one
                    // already carried out is waited for: its `Spawned` stops
                    // it, its `SpawnFailed` ends it.
                    let asked = Action::Spawn { entry, instance };
                    if let Some(i) = self.out.iter().position(|a| *a == asked) {
                        self.out.remove(i);
                        self.entries[entry].state = EntryState::Exited;
                    }
                }
                EntryState::Waiting | EntryState::Backoff { .. } => {
                    // Not running: not waited for.
                    if matches!(self.entries[entry].state, EntryState::Backoff { .. }) {
                        self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
                    }
                    self.entries[entry].state = EntryState::Exited;
                }
                EntryState::Exited => {}
                EntryState::Running(live) => {
                    for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
                        self.out.push(Action::StopProbe { entry, kind });
                    }
                    let pid = live.pid();
                    let stop = match &live.stage {
                        // A stop under way (a failure's) becomes the
                        // termination's; its deadline and hook stay.
                        Stage::Stopping(s) => Stop { cause: StopCause::Termination, ..s.clone() },
                        _ => {
                            if has_pre_stop {
                                self.out.push(Action::RunHook {
                                    entry,
                                    instance,
                                    pid,
                                    hook: HookKind::PreStop,
                                });
                            }
                            Stop::begin(live, StopCause::Termination, deadline, has_pre_stop)
                        }
                    };
                    self.set_stage(entry, Stage::Stopping(stop));
                }
            }
        }
        self.drive_termination(now);
    }

    /// Sends every stop signal that is due now. Idempotent.
    fn drive_termination(&mut self, now: Instant) {
        let Phase::Terminating { deadline, spent } = self.phase else { return };
        let waiting = |e: &Entry| {
            e.live().and_then(Live::stop).is_some_and(|s| s.signalled_at.is_none() && (!s.in_hook || spent))
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
    fn spend_budget(&mut self, now: Instant) {
        let Phase::Terminating { spent: false, .. } = self.phase else { return };
        self.phase = Phase::Terminating { deadline: now, spent: true };
        // Everyone already signalled gets SIGKILL once its 2 s floor is over:
        // SIGKILLs armed for a later deadline (the budget spent early by a
        // second SIGINT, or a failure's own grace that outlasts the budget)
        // come forward.
        for entry in 0..self.entries.len() {
            let instance = self.entries[entry].instance;
            let Some(stop) = self.entries[entry].live().and_then(Live::stop).cloned() else { continue };
            let (Some(signalled), Some(kill_at), false) = (stop.signalled_at, stop.kill_at, stop.killed)
            else {
                continue;
            };
            let at = (signalled + MIN_STOP_GRACE).max(now);
            if at < kill_at {
                self.set_stage(entry, Stage::Stopping(Stop { kill_at: Some(at), ..stop }));
                self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at });
            }
        }
        self.drive_termination(now);
    }

    fn finish_if_empty(&mut self) {
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

/// What carries out actions: the runtime for real, the tests with fakes.
pub trait Effects {
    /// Carries out one action (`Exit` too: the driver also keeps its status).
    /// The pod is as the step left it. A `Spawn` returns its result (`Spawned`
    /// or `SpawnFailed`), which the [`Driver`] queues like any event.
    fn perform(&mut self, pod: &Pod, action: Action, now: Instant) -> Option<Event>;

    /// Hears what the step found worth saying, before its actions are
    /// carried out (the runtime logs it).
    fn say(&mut self, _pod: &Pod, _notes: Vec<Note>) {}
}

/// The one routine that runs a [`Pod`]: events wait in a queue, one is handled
/// per [`Driver::step`], its actions are carried out by [`Effects`], and a
/// spawn's result joins the back of the queue. The runtime's event loop, the
/// unit tests' simulator and the property tests all drive the pod through it.
#[derive(Debug, Default)]
pub struct Driver {
    queue: VecDeque<Event>,
    /// Set once an `Exit` action was seen.
    exit: Option<i32>,
}

impl Driver {
    /// An empty queue.
    pub fn new() -> Driver {
        Driver::default()
    }

    /// Queues an event that happened (at the back).
    pub fn push(&mut self, event: Event) {
        self.queue.push_back(event);
    }

    /// Queues an event ahead of the others: for tests that play an event as
    /// having arrived before the queued ones.
    pub fn push_front(&mut self, event: Event) {
        self.queue.push_front(event);
    }

    /// Whether events wait.
    pub fn is_busy(&self) -> bool {
        !self.queue.is_empty()
    }

    /// The exit status, once the pod has emitted `Exit`.
    pub fn exit(&self) -> Option<i32> {
        self.exit
    }

    /// Starts the pod and carries out its first actions.
    pub fn start(&mut self, pod: &mut Pod, fx: &mut impl Effects, now: Instant) {
        let actions = pod.start(now);
        self.carry_out(pod, actions, fx, now);
    }

    /// Handles the next queued event, if any; `false` when none waited.
    pub fn step(&mut self, pod: &mut Pod, fx: &mut impl Effects, now: Instant) -> bool {
        let Some(event) = self.queue.pop_front() else { return false };
        let actions = pod.handle(event, now);
        self.carry_out(pod, actions, fx, now);
        true
    }

    /// Carries out a request from the command line ([`Pod::control`]) at
    /// once, ahead of the queued events; `Err` says why it was refused.
    pub fn control(
        &mut self,
        pod: &mut Pod,
        fx: &mut impl Effects,
        request: Control,
        now: Instant,
    ) -> Result<(), String> {
        let (result, actions) = pod.control(request, now);
        self.carry_out(pod, actions, fx, now);
        result
    }

    /// Carries out a `podinit reload` ([`Pod::reload`]) at once.
    ///
    /// # Errors
    /// Why nothing changed (termination has begun, an entry changes role...).
    pub fn reload(
        &mut self,
        pod: &mut Pod,
        fx: &mut impl Effects,
        spec: PodSpec,
        now: Instant,
    ) -> Result<Vec<String>, String> {
        let (result, actions) = pod.reload(spec, now);
        self.carry_out(pod, actions, fx, now);
        result
    }

    /// Handles queued events until none is left (tests; the runtime steps one
    /// at a time so that signals come in between).
    pub fn run_queue(&mut self, pod: &mut Pod, fx: &mut impl Effects, now: Instant) {
        while self.step(pod, fx, now) {}
    }

    /// Says what the step found worth saying, then carries out its actions.
    fn carry_out(&mut self, pod: &mut Pod, actions: Vec<Action>, fx: &mut impl Effects, now: Instant) {
        let notes = pod.take_notes();
        fx.say(pod, notes);
        self.apply(pod, actions, fx, now);
    }

    fn apply(&mut self, pod: &Pod, actions: Vec<Action>, fx: &mut impl Effects, now: Instant) {
        for action in actions {
            if let Action::Exit { status } = action {
                self.exit = Some(status);
            }
            if let Some(result) = fx.perform(pod, action, now) {
                self.queue.push_back(result);
            }
        }
    }
}

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
