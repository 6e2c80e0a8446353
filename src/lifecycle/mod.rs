//! The pod lifecycle of SPEC §2 as a pure state machine: events in, actions out.
//!
//! Every rule of SPEC §2 (start sequence, restarts and backoff, probes' effects,
//! completion, termination order and budget, exit status) is decided here and
//! nowhere else. The module never touches a process, a socket or a clock: the
//! current time is an argument, and what must happen is returned as [`Action`]s
//! that `supervisor.rs` carries out, feeding back what happened as [`Event`]s.
//! That keeps every rule unit-testable without processes or sleeps.
//!
//! Invariants (checked on random event sequences by `lifecycle/proptests.rs`;
//! each rule of SPEC §2 has its own test in `lifecycle/tests.rs`):
//! - nothing is spawned once termination has begun (a spawn asked for in the
//!   same step is withdrawn; one already carried out, whose result is still to
//!   come, is waited for and then stopped);
//! - a sidecar gets its stop signal only after every main, every running init and
//!   every later-declared running sidecar has exited, unless the budget is spent
//!   or the stop began before termination (a probe or post_start failure, which
//!   KEP-753 R40 does not order);
//! - no main is spawned before every init has succeeded and every sidecar has
//!   passed the sequence;
//! - no process gets its stop signal twice;
//! - `Done` is absorbing, and `Exit` is emitted exactly once, when termination
//!   has begun and no process of the pod is left.
//!
//! Events that do not fit the current state (a probe result for an instance that
//! is gone, a timer that was overtaken) are logged at debug level and ignored.

use std::time::{Duration, Instant};

pub mod backoff;
pub mod exit_status;

use self::backoff::Backoff;
use self::exit_status::Exit;
use crate::config::Signal;
use crate::config::{Completion, HoldUntil, RestartPolicy, Role};
pub use crate::config::{HookKind, ProbeKind};
use crate::config::{PodSpec, MIN_STOP_GRACE};

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
    /// One probe attempt's result.
    Probe { entry: EntryId, instance: Instance, kind: ProbeKind, ok: bool },
    /// A hook returned (`ok` false: failed or timed out).
    Hook { entry: EntryId, instance: Instance, hook: HookKind, ok: bool },
    /// A timer fired.
    Timer(Timer),
    /// podinit received SIGTERM or SIGINT.
    Terminate { signal: Signal },
    /// podinit received a signal to pass on to the mains.
    Forward { signal: Signal },
}

/// Something the supervisor must do.
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
}

#[derive(Debug, Clone)]
struct Stopping {
    cause: StopCause,
    /// pre_stop is still running; the stop signal waits for it.
    in_hook: bool,
    /// When the stop signal was sent.
    signalled: Option<Instant>,
}

/// Per-instance facts, reset at every spawn.
#[derive(Debug, Clone, Default)]
struct Run {
    pid: Option<i32>,
    spawned_at: Option<Instant>,
    post_start_done: bool,
    startup_passed: bool,
    started: bool,
    ready: bool,
    startup_failures: u32,
    liveness_failures: u32,
    readiness_successes: u32,
    readiness_failures: u32,
    stopping: Option<Stopping>,
}

#[derive(Debug, Clone)]
struct Entry {
    state: State,
    instance: Instance,
    restarts: u32,
    last_exit: Option<Exit>,
    backoff: Backoff,
    /// The start sequence has moved past it (init succeeded, sidecar latched).
    passed: bool,
    /// Spawns that failed in a row (reset by a successful one).
    spawn_failures: u32,
    run: Run,
}

/// The pod's phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Going through the ordered init/sidecar list; `cursor` indexes it.
    Booting { cursor: usize },
    /// Mains started (or being started, `next_main` indexes the mains).
    Running { next_main: usize },
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
    /// The init whose failure (under `Never`) ended the pod, with its status.
    failed_init: Option<i32>,
    /// The signal that began termination, if one did.
    term_signal: Option<Signal>,
    out: Vec<Action>,
}

impl Pod {
    /// A pod that has not started; call [`Pod::start`] next.
    pub fn new(spec: PodSpec) -> Self {
        let entries = spec
            .entries
            .iter()
            .map(|_| Entry {
                state: State::Waiting,
                instance: 0,
                restarts: 0,
                last_exit: None,
                backoff: Backoff::new(spec.backoff),
                passed: false,
                spawn_failures: 0,
                run: Run::default(),
            })
            .collect();
        let sequence = (0..spec.entries.len()).filter(|&i| spec.entries[i].role != Role::Main).collect();
        let mains = (0..spec.entries.len()).filter(|&i| spec.entries[i].role == Role::Main).collect();
        Pod {
            spec,
            entries,
            sequence,
            mains,
            phase: Phase::Booting { cursor: 0 },
            failed_init: None,
            term_signal: None,
            out: Vec::new(),
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

    /// Begins the start sequence (SPEC §2 rule 1).
    pub fn start(&mut self, now: Instant) -> Vec<Action> {
        self.advance(now);
        std::mem::take(&mut self.out)
    }

    /// Takes one event and returns what to do about it.
    pub fn handle(&mut self, event: Event, now: Instant) -> Vec<Action> {
        if self.phase == Phase::Done {
            tracing::debug!(?event, "event after exit ignored");
            return Vec::new();
        }
        match event {
            Event::Spawned { entry, instance, pid } => self.on_spawned(entry, instance, pid, now),
            Event::SpawnFailed { entry, instance, status } => {
                if self.is_current(entry, instance) && self.entries[entry].state == State::Spawning {
                    let e = &mut self.entries[entry];
                    e.spawn_failures = e.spawn_failures.saturating_add(1);
                    self.on_exit(entry, Exit::Code(status), now);
                }
            }
            Event::Exited { entry, instance, exit } => {
                if self.is_current(entry, instance) && self.entries[entry].state == State::Running {
                    self.log_exit(entry, exit);
                    self.on_exit(entry, exit, now);
                } else {
                    tracing::debug!(entry, instance, "exit of an old instance ignored");
                }
            }
            Event::Probe { entry, instance, kind, ok } => {
                if self.is_live(entry, instance) {
                    self.on_probe(entry, kind, ok, now);
                }
            }
            Event::Hook { entry, instance, hook, ok } => {
                if self.is_live(entry, instance) {
                    self.on_hook(entry, hook, ok, now);
                }
            }
            Event::Timer(t) => self.on_timer(t, now),
            Event::Terminate { signal } => self.on_terminate(signal, now),
            Event::Forward { signal } => {
                for &m in &self.mains {
                    if let Some(pid) = self.live_pid(m) {
                        self.out.push(Action::Signal { entry: m, pid, signal });
                    }
                }
            }
        }
        self.finish_if_empty();
        std::mem::take(&mut self.out)
    }

    /// Whether the pod is ready (SPEC §2 rule 8): every sidecar and main ready, and
    /// not terminating. Init entries do not count (KEP-753 R25).
    pub fn is_ready(&self) -> bool {
        matches!(self.phase, Phase::Running { .. })
            && self.mains_started()
            && self
                .entries
                .iter()
                .zip(&self.spec.entries)
                .filter(|(_, s)| s.role != Role::Init)
                .all(|(e, _)| e.state == State::Running && e.run.ready)
    }

    /// Each entry's status, in file order.
    pub fn status(&self) -> Vec<EntryStatus> {
        self.entries
            .iter()
            .zip(&self.spec.entries)
            .map(|(e, s)| EntryStatus {
                name: s.name.clone(),
                role: s.role,
                state: e.state,
                pid: e.run.pid.filter(|_| e.state == State::Running),
                restarts: e.restarts,
                last_exit: e.last_exit,
                started: e.run.started,
                ready: e.state == State::Running && e.run.ready,
                stopping: e.run.stopping.is_some(),
            })
            .collect()
    }

    // ----- helpers -----

    fn name(&self, entry: EntryId) -> &str {
        &self.spec.entries[entry].name
    }

    fn role(&self, entry: EntryId) -> Role {
        self.spec.entries[entry].role
    }

    fn is_current(&self, entry: EntryId, instance: Instance) -> bool {
        self.entries.get(entry).is_some_and(|e| e.instance == instance)
    }

    fn is_live(&self, entry: EntryId, instance: Instance) -> bool {
        self.is_current(entry, instance) && self.entries[entry].state == State::Running
    }

    fn live_pid(&self, entry: EntryId) -> Option<i32> {
        let e = &self.entries[entry];
        (e.state == State::Running).then_some(e.run.pid).flatten()
    }

    /// Has a process (or is about to have one).
    fn is_alive(&self, entry: EntryId) -> bool {
        matches!(self.entries[entry].state, State::Running | State::Spawning)
    }

    /// Whether any main has been spawned (the start sequence got that far).
    fn mains_started(&self) -> bool {
        self.mains.iter().any(|&m| self.entries[m].instance > 0)
    }

    fn terminating(&self) -> bool {
        matches!(self.phase, Phase::Terminating { .. })
    }

    fn log_exit(&self, entry: EntryId, exit: Exit) {
        let pid = self.entries[entry].run.pid.unwrap_or(0);
        tracing::info!(
            event = "exited",
            process = self.name(entry),
            pid,
            status = exit.status(),
            "{} (pid {pid}) exited with {exit}",
            self.name(entry)
        );
    }

    // ----- start sequence (rules 1-4) -----

    /// Moves the start sequence as far as it can go, then starts mains.
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
                    if self.entries[entry].state == State::Waiting {
                        self.spawn(entry, now);
                    }
                    return;
                }
                Phase::Running { next_main } => {
                    let Some(&entry) = self.mains.get(next_main) else { return };
                    if self.entries[entry].state == State::Waiting {
                        self.spawn(entry, now);
                    }
                    // A main's post_start holds the next main (rule 4, KEP-753 R6).
                    let e = &self.entries[entry];
                    let holding = self.spec.entries[entry].post_start.is_some()
                        && matches!(e.state, State::Spawning | State::Running)
                        && !e.run.post_start_done;
                    if holding {
                        return;
                    }
                    self.phase = Phase::Running { next_main: next_main + 1 };
                }
                Phase::Terminating { .. } | Phase::Done => return,
            }
        }
    }

    /// Latches a sidecar into the sequence once it is started (and ready when
    /// `hold_until = "ready"`), rule 3.
    fn check_sidecar_passed(&mut self, entry: EntryId, now: Instant) {
        let spec = &self.spec.entries[entry];
        let e = &self.entries[entry];
        if spec.role != Role::Sidecar || e.passed || !e.run.started {
            return;
        }
        if spec.hold_until == HoldUntil::Ready && !e.run.ready {
            return;
        }
        tracing::debug!("{} passed the start sequence", spec.name);
        self.entries[entry].passed = true;
        self.advance(now);
    }

    /// Starts the entry again (its backoff, if any, is over). After spawn
    /// failures in a row the message is given only at the 1st, 2nd, 4th, 8th...
    /// failure, so that a crash loop with a zero backoff logs in log time.
    fn restart(&mut self, entry: EntryId, now: Instant) {
        let failures = self.entries[entry].spawn_failures;
        if failures == 0 || failures.is_power_of_two() {
            tracing::info!(
                event = "restarting",
                process = self.name(entry),
                "restarting {}",
                self.name(entry)
            );
        }
        self.spawn(entry, now);
    }

    fn spawn(&mut self, entry: EntryId, now: Instant) {
        debug_assert!(!self.terminating());
        let e = &mut self.entries[entry];
        if e.instance > 0 {
            e.restarts += 1;
        }
        e.instance += 1;
        e.state = State::Spawning;
        e.run = Run { spawned_at: Some(now), ..Run::default() };
        let instance = e.instance;
        self.out.push(Action::Spawn { entry, instance });
    }

    fn on_spawned(&mut self, entry: EntryId, instance: Instance, pid: i32, now: Instant) {
        if !self.is_current(entry, instance) || self.entries[entry].state != State::Spawning {
            return;
        }
        let spec = &self.spec.entries[entry];
        tracing::info!(event = "started", process = spec.name, pid, "{} started (pid {pid})", spec.name);
        let has_post_start = spec.post_start.is_some();
        let has_startup = spec.startup_probe.is_some();
        let e = &mut self.entries[entry];
        e.state = State::Running;
        e.spawn_failures = 0;
        e.run.pid = Some(pid);
        e.run.post_start_done = !has_post_start;
        e.run.startup_passed = !has_startup;
        let not_before = e.run.spawned_at.unwrap_or(now)
            + spec.startup_probe.as_ref().map_or(Duration::ZERO, |p| p.initial_delay);
        if self.terminating() {
            // Termination began while it was being spawned: it only gets stopped.
            self.drive_termination(now);
            return;
        }
        if has_post_start {
            self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PostStart });
        }
        if has_startup {
            self.out.push(Action::StartProbe { entry, instance, pid, kind: ProbeKind::Startup, not_before });
        }
        self.check_started(entry, now);
    }

    /// Marks the instance started once post_start returned and the startup probe
    /// passed (rule 3); starts liveness and readiness probes then (rule 7).
    fn check_started(&mut self, entry: EntryId, now: Instant) {
        let e = &self.entries[entry];
        if e.run.started || !e.run.post_start_done || !e.run.startup_passed || e.state != State::Running {
            return;
        }
        let spec = &self.spec.entries[entry];
        let (instance, pid) = (e.instance, e.run.pid.unwrap_or(0));
        let spawned_at = e.run.spawned_at.unwrap_or(now);
        let has_readiness = spec.readiness_probe.is_some();
        if let Some(p) = &spec.liveness_probe {
            self.out.push(Action::StartProbe {
                entry,
                instance,
                pid,
                kind: ProbeKind::Liveness,
                not_before: spawned_at + p.initial_delay,
            });
        }
        if let Some(p) = &spec.readiness_probe {
            // The readiness probe runs at once when the entry becomes started
            // (KEP-753 R24), its initial_delay still counted from the spawn.
            self.out.push(Action::StartProbe {
                entry,
                instance,
                pid,
                kind: ProbeKind::Readiness,
                not_before: (spawned_at + p.initial_delay).max(now),
            });
        }
        let e = &mut self.entries[entry];
        e.run.started = true;
        e.run.ready = !has_readiness;
        self.check_sidecar_passed(entry, now);
        self.advance(now);
    }

    // ----- exits and restarts (rules 2, 5, 6) -----

    fn on_exit(&mut self, entry: EntryId, exit: Exit, now: Instant) {
        let role = self.role(entry);
        let e = &mut self.entries[entry];
        let failed_stop = e.run.stopping.as_ref().is_some_and(|s| s.cause == StopCause::Failed);
        let ran_for = e.run.spawned_at.map_or(Duration::ZERO, |t| now.saturating_duration_since(t));
        let instance = e.instance;
        e.last_exit = Some(exit);
        e.run.pid = None;
        e.run.started = false;
        e.run.ready = false;
        e.run.stopping = None;
        self.out.push(Action::StopChecks { entry });
        self.out.push(Action::CancelTimer(Timer::Stop(entry, instance)));

        if self.terminating() {
            self.entries[entry].state = State::Exited;
            self.drive_termination(now);
            return;
        }
        let policy = self.spec.restart_policy;
        let restart = match role {
            Role::Sidecar => true,
            Role::Init => !exit.success() && policy != RestartPolicy::Never,
            Role::Main => match policy {
                RestartPolicy::Always => true,
                RestartPolicy::OnFailure => !exit.success() || failed_stop,
                RestartPolicy::Never => false,
            },
        };
        if restart {
            let delay = self.entries[entry].backoff.next_delay(ran_for);
            if delay.is_zero() {
                self.restart(entry, now);
            } else {
                tracing::info!(
                    event = "backoff",
                    process = self.name(entry),
                    delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    "restarting {} in {}",
                    self.name(entry),
                    humantime::format_duration(delay)
                );
                self.entries[entry].state = State::Backoff;
                self.out.push(Action::ArmTimer { timer: Timer::Backoff(entry), at: now + delay });
            }
            return;
        }
        self.entries[entry].state = State::Exited;
        match role {
            Role::Init if exit.success() => {
                self.entries[entry].passed = true;
                self.advance(now);
            }
            Role::Init => {
                tracing::warn!(
                    event = "init_failed",
                    process = self.name(entry),
                    status = exit.status(),
                    "init {} failed with {exit}; restart_policy is Never, so the pod fails",
                    self.name(entry)
                );
                self.failed_init = Some(exit.status());
                self.begin_termination(now);
            }
            Role::Main => {
                let ended = |id: &EntryId| self.entries[*id].state == State::Exited;
                let complete = match self.spec.completion {
                    Completion::All => self.mains.iter().all(ended),
                    Completion::Any => true,
                };
                if complete {
                    tracing::info!(event = "completed", "pod completed");
                    self.begin_termination(now);
                } else {
                    // A main with post_start that died before the hook returned
                    // must not hold the next main.
                    self.advance(now);
                }
            }
            Role::Sidecar => {}
        }
    }

    // ----- probes and hooks (rules 3, 7, 8) -----

    fn on_probe(&mut self, entry: EntryId, kind: ProbeKind, ok: bool, now: Instant) {
        let spec = &self.spec.entries[entry];
        let Some(probe) = (match kind {
            ProbeKind::Startup => spec.startup_probe.as_ref(),
            ProbeKind::Readiness => spec.readiness_probe.as_ref(),
            ProbeKind::Liveness => spec.liveness_probe.as_ref(),
        }) else {
            return;
        };
        let (success_threshold, failure_threshold) = (probe.success_threshold, probe.failure_threshold);
        let probe_grace = probe.termination_grace_period;
        let terminating = self.terminating();
        let run = &mut self.entries[entry].run;
        if run.stopping.is_some() && kind != ProbeKind::Readiness {
            return;
        }
        match kind {
            ProbeKind::Startup | ProbeKind::Liveness
                if !terminating
                    && if kind == ProbeKind::Startup { !run.startup_passed } else { run.started } =>
            {
                // Startup probes run until they pass, liveness probes once started
                // (rule 7); a failure threshold reached stops the process either way.
                let (failures, name) = match kind {
                    ProbeKind::Startup => (&mut run.startup_failures, "startup"),
                    _ => (&mut run.liveness_failures, "liveness"),
                };
                if !ok {
                    *failures += 1;
                    tracing::debug!("{} {name} probe failed ({failures}/{failure_threshold})", spec.name);
                    if *failures >= failure_threshold {
                        tracing::warn!(
                            event = "probe_failed",
                            process = spec.name,
                            probe = name,
                            "{} {name} probe failed {failure_threshold} times; restarting it",
                            spec.name
                        );
                        self.stop_failed(entry, probe_grace, now);
                    }
                } else if kind == ProbeKind::Liveness {
                    *failures = 0;
                } else {
                    run.startup_passed = true;
                    tracing::info!(
                        event = "startup_probe_succeeded",
                        process = spec.name,
                        "{} startup probe succeeded",
                        spec.name
                    );
                    self.out.push(Action::StopProbe { entry, kind });
                    self.check_started(entry, now);
                }
            }
            ProbeKind::Readiness if run.started => {
                if ok {
                    run.readiness_failures = 0;
                    run.readiness_successes += 1;
                    if !run.ready && run.readiness_successes >= success_threshold {
                        run.ready = true;
                        tracing::info!(event = "ready", process = spec.name, "{} is ready", spec.name);
                        if !terminating {
                            self.check_sidecar_passed(entry, now);
                        }
                    }
                } else {
                    run.readiness_successes = 0;
                    run.readiness_failures += 1;
                    if run.ready && run.readiness_failures >= failure_threshold {
                        run.ready = false;
                        tracing::warn!(
                            event = "unready",
                            process = spec.name,
                            "{} is not ready: readiness probe failed {failure_threshold} times",
                            spec.name
                        );
                    }
                }
            }
            _ => tracing::debug!(entry, ?kind, "probe result ignored"),
        }
    }

    fn on_hook(&mut self, entry: EntryId, hook: HookKind, ok: bool, now: Instant) {
        let name = self.name(entry).to_owned();
        match hook {
            HookKind::PostStart => {
                let run = &mut self.entries[entry].run;
                if run.post_start_done || run.stopping.is_some() {
                    return;
                }
                if ok {
                    run.post_start_done = true;
                    self.check_started(entry, now);
                } else {
                    tracing::warn!(
                        event = "hook_failed",
                        process = name,
                        hook = "post_start",
                        "{name} post_start hook failed; restarting it"
                    );
                    run.post_start_done = true;
                    self.stop_failed(entry, None, now);
                    // It never became started; a main must not hold the next one.
                    self.advance(now);
                }
            }
            HookKind::PreStop => {
                let Some(stopping) = self.entries[entry].run.stopping.as_mut() else { return };
                if !stopping.in_hook {
                    return;
                }
                stopping.in_hook = false;
                if !ok {
                    tracing::warn!(
                        event = "hook_failed",
                        process = name,
                        hook = "pre_stop",
                        "{name} pre_stop hook failed (the stop goes on)"
                    );
                }
                if stopping.cause == StopCause::Failed && !self.terminating() {
                    self.send_stop(entry, now, now);
                } else {
                    self.drive_termination(now);
                }
            }
        }
    }

    /// Stops an instance whose startup/liveness probe or post_start failed; it is
    /// restarted by the rules once it exits (rule 7, KEP-753 R20/R21). The grace
    /// is the probe's own when it has one (R40), else the pod's.
    fn stop_failed(&mut self, entry: EntryId, grace: Option<Duration>, now: Instant) {
        let grace = grace.unwrap_or(self.spec.termination_grace_period);
        let has_pre_stop = self.spec.entries[entry].pre_stop.is_some();
        let e = &mut self.entries[entry];
        let instance = e.instance;
        let Some(pid) = e.run.pid else { return };
        e.run.stopping = Some(Stopping { cause: StopCause::Failed, in_hook: has_pre_stop, signalled: None });
        for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
            self.out.push(Action::StopProbe { entry, kind });
        }
        if has_pre_stop {
            self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PreStop });
            self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at: now + grace });
        } else {
            self.send_stop(entry, now, now + grace);
        }
    }

    /// Sends the stop signal now and arms SIGKILL for `max(now + 2 s, deadline)`.
    fn send_stop(&mut self, entry: EntryId, now: Instant, deadline: Instant) {
        let signal = self.spec.entries[entry].stop_signal;
        let e = &mut self.entries[entry];
        let (Some(pid), Some(stopping)) = (e.run.pid, e.run.stopping.as_mut()) else { return };
        if stopping.signalled.is_some() {
            return;
        }
        stopping.signalled = Some(now);
        stopping.in_hook = false;
        let instance = e.instance;
        tracing::info!(
            event = "stopping",
            process = self.spec.entries[entry].name,
            pid,
            signal = signal.to_string(),
            "stopping {} (pid {pid}) with {signal}",
            self.spec.entries[entry].name,
        );
        self.out.push(Action::Signal { entry, pid, signal });
        if signal != Signal::CONT && signal != Signal::KILL {
            // A stopped process (Ctrl-Z, SIGSTOP) cannot act on its stop signal
            // until it runs again; systemd sends SIGCONT after it for the same reason.
            self.out.push(Action::Signal { entry, pid, signal: Signal::CONT });
        }
        let at = (now + MIN_STOP_GRACE).max(deadline);
        self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at });
    }

    // ----- timers -----

    fn on_timer(&mut self, timer: Timer, now: Instant) {
        match timer {
            Timer::Backoff(entry) => {
                if self.entries[entry].state == State::Backoff && !self.terminating() {
                    self.restart(entry, now);
                }
            }
            Timer::Stop(entry, instance) => {
                if !self.is_live(entry, instance) {
                    return;
                }
                let Some(stopping) = &self.entries[entry].run.stopping else { return };
                match stopping.signalled {
                    None => self.send_stop(entry, now, now),
                    Some(_) => {
                        if let Some(pid) = self.entries[entry].run.pid {
                            tracing::warn!(
                                event = "killed",
                                process = self.name(entry),
                                pid,
                                "{} (pid {pid}) did not stop in time; sending SIGKILL",
                                self.name(entry)
                            );
                            self.out.push(Action::Signal { entry, pid, signal: Signal::KILL });
                        }
                    }
                }
            }
            Timer::Budget => {
                tracing::warn!(
                    event = "budget_spent",
                    "termination_grace_period is spent: stopping every process left"
                );
                self.spend_budget(now);
            }
        }
    }

    // ----- termination (rules 9-13) -----

    fn on_terminate(&mut self, signal: Signal, now: Instant) {
        match self.phase {
            Phase::Terminating { spent, .. } => {
                // Rule 12: a second SIGINT spends the budget; SIGTERM changes nothing.
                if signal == Signal::INT && !spent {
                    tracing::warn!(event = "budget_spent", "second SIGINT: stopping everything now");
                    self.spend_budget(now);
                } else {
                    tracing::info!("{signal} received during termination; nothing changes");
                }
            }
            Phase::Done => {}
            _ => {
                tracing::info!(
                    event = "terminating",
                    signal = signal.to_string(),
                    "{signal} received: terminating the pod"
                );
                self.term_signal = Some(signal);
                self.begin_termination(now);
            }
        }
    }

    /// Rule 9-10: from now on nothing restarts; every running entry's pre_stop
    /// starts, inits and mains get their stop signal after it, sidecars in reverse
    /// order once everything after them is gone.
    fn begin_termination(&mut self, now: Instant) {
        let deadline = now + self.spec.termination_grace_period;
        self.phase = Phase::Terminating { deadline, spent: false };
        self.out.push(Action::ArmTimer { timer: Timer::Budget, at: deadline });
        for entry in 0..self.entries.len() {
            let has_pre_stop = self.spec.entries[entry].pre_stop.is_some();
            let e = &mut self.entries[entry];
            match e.state {
                State::Spawning => {
                    // A spawn asked for in this same step is withdrawn; one
                    // already carried out is waited for: its `Spawned` stops
                    // it, its `SpawnFailed` ends it.
                    let instance = e.instance;
                    let asked = Action::Spawn { entry, instance };
                    if let Some(i) = self.out.iter().position(|a| *a == asked) {
                        self.out.remove(i);
                        e.state = State::Exited;
                    }
                }
                State::Waiting | State::Backoff => {
                    // Not running: not waited for (rule 10).
                    if e.state == State::Backoff {
                        self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
                    }
                    e.state = State::Exited;
                }
                State::Exited => {}
                State::Running => {
                    for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
                        self.out.push(Action::StopProbe { entry, kind });
                    }
                    match e.run.stopping.as_mut() {
                        Some(s) => s.cause = StopCause::Termination,
                        None => {
                            let in_hook = has_pre_stop;
                            e.run.stopping =
                                Some(Stopping { cause: StopCause::Termination, in_hook, signalled: None });
                            if let (true, Some(pid)) = (in_hook, e.run.pid) {
                                let instance = e.instance;
                                self.out.push(Action::RunHook {
                                    entry,
                                    instance,
                                    pid,
                                    hook: HookKind::PreStop,
                                });
                            }
                        }
                    }
                }
            }
        }
        self.drive_termination(now);
    }

    /// Sends every stop signal that is due now (rule 10). Idempotent.
    fn drive_termination(&mut self, now: Instant) {
        let Phase::Terminating { deadline, spent } = self.phase else { return };
        let waiting = |e: &Entry| {
            e.state == State::Running
                && e.run.stopping.as_ref().is_some_and(|s| s.signalled.is_none() && (!s.in_hook || spent))
        };
        for entry in 0..self.entries.len() {
            let e = &mut self.entries[entry];
            if e.state == State::Running && e.run.stopping.is_none() {
                e.run.stopping =
                    Some(Stopping { cause: StopCause::Termination, in_hook: false, signalled: None });
            }
            if waiting(&self.entries[entry]) && (spent || self.role(entry) != Role::Sidecar) {
                self.send_stop(entry, now, deadline);
            }
        }
        if spent {
            return;
        }
        let others_alive = (0..self.entries.len()).any(|i| self.role(i) != Role::Sidecar && self.is_alive(i));
        if others_alive {
            return;
        }
        let sidecars: Vec<EntryId> =
            (0..self.entries.len()).filter(|&i| self.role(i) == Role::Sidecar).collect();
        for &s in sidecars.iter().rev() {
            if !self.is_alive(s) {
                continue;
            }
            if waiting(&self.entries[s]) {
                self.send_stop(s, now, deadline);
            }
            // Earlier sidecars wait for this one to exit.
            return;
        }
    }

    /// Rule 11-12: the budget is spent; every entry not yet signalled gets its
    /// stop signal now and SIGKILL 2 s later.
    fn spend_budget(&mut self, now: Instant) {
        let Phase::Terminating { spent: false, deadline } = self.phase else { return };
        self.phase = Phase::Terminating { deadline: now, spent: true };
        // Spent early (a second SIGINT): SIGKILLs armed for the old deadline come forward.
        let early = now < deadline;
        for entry in (0..self.entries.len()).filter(|_| early) {
            let e = &self.entries[entry];
            if e.state != State::Running {
                continue;
            }
            // Already signalled: SIGKILL once its 2 s floor is over.
            if let Some(at) = e.run.stopping.as_ref().and_then(|s| s.signalled) {
                let instance = e.instance;
                let at = (at + MIN_STOP_GRACE).max(now);
                self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at });
            }
        }
        self.drive_termination(now);
    }

    fn finish_if_empty(&mut self) {
        if !self.terminating() || (0..self.entries.len()).any(|i| self.is_alive(i)) {
            return;
        }
        let status = self.exit_status();
        self.out.push(Action::CancelTimer(Timer::Budget));
        self.out.push(Action::Exit { status });
        self.phase = Phase::Done;
    }

    /// SPEC "Exit status of podinit".
    fn exit_status(&self) -> i32 {
        if let Some(status) = self.failed_init {
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

#[cfg(test)]
mod proptests;
#[cfg(test)]
mod tests;
