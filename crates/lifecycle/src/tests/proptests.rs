//! Property tests of the lifecycle: random pods, random events at any moment
//! (exits with any status, probe and hook results, timers, signals, during
//! startup and termination), against the invariants written at the top of
//! the crate's machine, driven by the same [`Driver`] as the runtime. The harness plays the processes: they die when SIGKILLed,
//! and on their stop signal either die or ignore it, as the case draws.

// One real instant is the origin of the simulated clock; nothing else reads it.
#![allow(clippy::disallowed_methods)]

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use crate::exit_status::{self, Exit};
use crate::spec::{BackoffSpec, EntrySpec, HookSpec, PodSpec, ProbeAction, ProbeSpec};
use crate::spec::{Completion, HoldUntil, LogMode, RestartPolicy, Role};
use crate::spec::{RuleAction, Signal, MIN_STOP_GRACE};
use crate::{
    Action, Control, Driver, Effects, EntryId, Event, HookKind, Instance, Note, Phase, Pod, ProbeKind,
};
use crate::{State, Timer};

#[derive(Debug, Clone)]
struct EntryShape {
    role: Role,
    startup: bool,
    readiness: bool,
    liveness: bool,
    post_start: bool,
    pre_stop: bool,
    hold_ready: bool,
    /// The newer rules: 0 none, 1 max_restarts = 2, 2 a `restart` rule on
    /// status 1 with its own restart_policy Never, 3 a `restart_all` rule on
    /// status 2, 4 restart_during_termination (sidecars).
    extra: u8,
}

#[derive(Debug, Clone)]
enum Op {
    /// The n-th live process exits with this status (or signal when >= 256).
    Exit(usize, u16),
    Probe(usize, u8, bool),
    Hook(usize, bool, bool),
    Wait(u16),
    Signal(u8),
    SpawnFails(bool),
    /// A request from the command line about the n-th entry.
    Control(usize, u8),
}

fn shape() -> impl Strategy<Value = EntryShape> {
    (0..4u8, any::<[bool; 6]>(), 0..5u8).prop_map(|(r, b, extra)| EntryShape {
        role: [Role::Init, Role::Sidecar, Role::Main, Role::Scheduled][r as usize],
        startup: b[0],
        readiness: b[1],
        liveness: b[2],
        post_start: b[3],
        pre_stop: b[4],
        hold_ready: b[5],
        extra,
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..8usize, prop_oneof![Just(0u16), 1..4u16, Just(256 + 9), Just(256 + 15)]).prop_map(|(i, s)| Op::Exit(i, s)),
        4 => (0..8usize, 0..3u8, any::<bool>()).prop_map(|(i, k, ok)| Op::Probe(i, k, ok)),
        2 => (0..8usize, any::<bool>(), any::<bool>()).prop_map(|(i, post, ok)| Op::Hook(i, post, ok)),
        3 => (1..5000u16).prop_map(Op::Wait),
        1 => (0..4u8).prop_map(Op::Signal),
        1 => any::<bool>().prop_map(Op::SpawnFails),
        2 => (0..8usize, 0..8u8).prop_map(|(i, v)| Op::Control(i, v)),
    ]
}

fn probe() -> ProbeSpec {
    let action = ProbeAction::Exec { argv: crate::spec::Argv::program_only("true".into()) };
    ProbeSpec { period: Duration::from_secs(1), failure_threshold: 2, ..ProbeSpec::new(action) }
}

fn build(shapes: &[EntryShape], policy: u8, any: bool, grace_ms: u64, deadline_ms: Option<u64>) -> PodSpec {
    let mut entries: Vec<EntrySpec> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let probes = matches!(s.role, Role::Sidecar | Role::Main);
            let scheduled = s.role == Role::Scheduled;
            let rule = |action, values: &[u8]| crate::spec::RestartRule {
                action,
                operator: crate::spec::Operator::In,
                values: values.to_vec(),
            };
            let sidecar = s.role == Role::Sidecar;
            if scheduled {
                // What the config reader allows a scheduled entry: hooks,
                // an `every`, each policy, a run's deadline, tries within a
                // run.
                let mut e = EntrySpec::new(
                    &format!("e{i}"),
                    s.role,
                    crate::spec::Argv::program_only("x".into()),
                    LogMode::Prefixed,
                );
                e.post_start = s.post_start.then_some(HookSpec::Sleep(Duration::from_secs(1)));
                e.pre_stop = s.pre_stop.then_some(HookSpec::Sleep(Duration::from_secs(1)));
                e.schedule = Some(crate::spec::ScheduleSpec {
                    when: crate::spec::When::Every(Duration::from_millis(700 + 300 * u64::from(s.extra))),
                    time_zone: "UTC".into(),
                    concurrency_policy: if s.startup {
                        crate::spec::ConcurrencyPolicy::Replace
                    } else if s.extra % 2 == 1 {
                        crate::spec::ConcurrencyPolicy::Allow
                    } else {
                        crate::spec::ConcurrencyPolicy::Forbid
                    },
                    starting_deadline: s.readiness.then_some(Duration::from_secs(1)),
                    suspend: s.extra == 4,
                    run_on_start: s.liveness,
                    active_deadline: s.hold_ready.then_some(Duration::from_millis(1500)),
                    max_concurrent: (s.extra == 3).then_some(2),
                });
                // Tries within a run (a Job's restartPolicy and backoffLimit).
                if s.extra >= 2 {
                    e.restart_policy = Some(RestartPolicy::OnFailure);
                    e.max_restarts = Some(2);
                }
                return e;
            }
            EntrySpec {
                max_restarts: (s.extra == 1).then_some(2),
                restart_policy: (s.extra == 2 && !sidecar).then_some(RestartPolicy::Never),
                restart_rules: match s.extra {
                    2 if !sidecar => vec![rule(RuleAction::Restart, &[1])],
                    3 => vec![rule(RuleAction::RestartAll, &[2])],
                    _ => Vec::new(),
                },
                restart_during_termination: s.extra == 4 && sidecar,
                hold_until: if s.hold_ready { HoldUntil::Ready } else { HoldUntil::Started },
                startup_probe: (probes && s.startup).then(probe),
                readiness_probe: (probes && s.readiness).then(probe),
                liveness_probe: (probes && s.liveness).then(probe),
                post_start: (probes && s.post_start).then_some(HookSpec::Sleep(Duration::from_secs(1))),
                pre_stop: (probes && s.pre_stop).then_some(HookSpec::Sleep(Duration::from_secs(1))),
                ..EntrySpec::new(
                    &format!("e{i}"),
                    s.role,
                    crate::spec::Argv::program_only("x".into()),
                    LogMode::Prefixed,
                )
            }
        })
        .collect();
    if !entries.iter().any(|e| e.role == Role::Main) {
        let mut m = entries[0].clone();
        m.name = "main".into();
        m.role = Role::Main;
        if m.schedule.take().is_some() {
            // What only a scheduled entry has (the config reader's rule).
            (m.restart_policy, m.max_restarts) = (None, None);
        }
        entries.push(m);
    }
    PodSpec {
        restart_policy: [RestartPolicy::Never, RestartPolicy::OnFailure, RestartPolicy::Always]
            [policy as usize],
        termination_grace_period: Duration::from_millis(grace_ms),
        completion: if any { Completion::Any } else { Completion::All },
        backoff: BackoffSpec {
            initial: Duration::from_millis(100),
            max: Duration::from_millis(800),
            reset_after: Duration::from_secs(5),
        },
        log: LogMode::Prefixed,
        status_socket: None,
        http: None,
        active_deadline: deadline_ms.map(Duration::from_millis),
        entries,
    }
}

/// The fake runtime: plays the processes and checks every action against the
/// invariants as it is carried out (it sees the pod as the step left it).
struct Fx {
    timers: BTreeMap<Timer, Instant>,
    live: BTreeMap<EntryId, (Instance, bool /* killed */, bool /* term */)>,
    fail_spawns: bool,
    exited: Option<i32>,
    /// When each instance got its stop signal.
    term_signals: BTreeMap<(EntryId, Instance), Instant>,
    /// Entries whose stop began before termination (a probe kill): not
    /// ordered; with when the stop began.
    stopped_before_termination: BTreeMap<(EntryId, Instance), Instant>,
    ever_started: BTreeSet<EntryId>,
    inits_ok: BTreeSet<EntryId>,
    mains_spawned: BTreeSet<EntryId>,
    first_term_signal: Option<i32>,
    /// When the termination budget runs out, once termination has begun.
    budget_deadline: Option<Instant>,
    /// Spawns asked for in the current step.
    spawns_this_step: usize,
    /// Mains spawned since the start sequence last began (a restart_all
    /// begins it again).
    round_mains: BTreeSet<EntryId>,
    /// Instances spawned during termination (restart_during_termination).
    spawned_in_termination: BTreeSet<(EntryId, Instance)>,
    /// The events of the notes the machine gave, with their status.
    notes: Vec<(&'static str, Option<i32>)>,
    /// The first invariant broken, if any.
    broken: Option<String>,
}

impl Fx {
    fn fail(&mut self, why: String) {
        self.broken.get_or_insert(why);
    }

    fn observe(&mut self, pod: &Pod, now: Instant) {
        let terminating = matches!(pod.phase(), Phase::Terminating { .. } | Phase::Done);
        if pod.phase() == Phase::Restarting {
            // The start sequence will run again: its gates start over.
            self.inits_ok.clear();
            self.ever_started.clear();
            self.round_mains.clear();
        }
        if let Phase::Terminating { deadline, spent: false } = pod.phase() {
            self.budget_deadline.get_or_insert(deadline);
        }
        for (i, s) in pod.status().iter().enumerate() {
            // Once termination or a restart of the whole pod has begun, every
            // running instance is being stopped.
            if (terminating || pod.phase() == Phase::Restarting) && s.state == State::Running && !s.stopping {
                self.fail(format!("{i} runs without being stopped in {:?}", pod.phase()));
            }
            // A stop begun before termination (probe or post_start failure) is
            // not ordered against anything (docs/lifecycle.md rule 10), even if its signal
            // comes after termination began (its pre_stop ran until then).
            if s.stopping && !terminating {
                if let Some(&(instance, _, _)) = self.live.get(&i) {
                    self.stopped_before_termination.entry((i, instance)).or_insert(now);
                }
            }
            // A sidecar stopped by `podinit stop` has passed the sequence too
            // (it holds nothing), and a later `podinit start` does not
            // make the sequence wait for it again (docs/control.md).
            if s.started || s.held {
                self.ever_started.insert(i);
            }
            if s.role == Role::Init && s.state == State::Exited && s.last_exit == Some(Exit::Code(0)) {
                self.inits_ok.insert(i);
            }
        }
    }
}

impl Effects for Fx {
    fn say(&mut self, _pod: &Pod, notes: Vec<Note>) {
        self.notes.extend(notes.into_iter().map(|n| (n.event(), n.status())));
    }

    fn perform(&mut self, pod: &Pod, a: Action, now: Instant) -> Option<Event> {
        self.observe(pod, now);
        let terminating = matches!(pod.phase(), Phase::Terminating { .. } | Phase::Done);
        let role = |e: EntryId| pod.spec().entries[e].role;
        if self.exited.is_some() {
            self.fail(format!("action after Exit: {a:?}"));
        }
        match a {
            Action::Spawn { entry, instance } => {
                self.spawns_this_step += 1;
                if self.spawns_this_step > 1 {
                    self.fail(format!("a second spawn in one step: {entry}"));
                }
                if terminating {
                    if pod.spec().entries[entry].restart_during_termination {
                        self.spawned_in_termination.insert((entry, instance));
                    } else {
                        self.fail(format!("spawn of {entry} after termination began"));
                    }
                }
                if role(entry) == Role::Main {
                    self.mains_spawned.insert(entry);
                }
                // A scheduled entry runs only once the mains are reached,
                // and never once termination has begun.
                if role(entry) == Role::Scheduled && !matches!(pod.phase(), Phase::Running { .. }) {
                    self.fail(format!("a run of {entry} in phase {:?}", pod.phase()));
                }
                if role(entry) == Role::Main && self.round_mains.insert(entry) {
                    for (i, e) in pod.spec().entries.iter().enumerate() {
                        match e.role {
                            Role::Init if !self.inits_ok.contains(&i) => {
                                self.fail(format!("main before init {i} succeeded"));
                            }
                            Role::Sidecar if !self.ever_started.contains(&i) => {
                                self.fail(format!("main before sidecar {i} started"));
                            }
                            _ => {}
                        }
                    }
                }
                return Some(if self.fail_spawns {
                    Event::SpawnFailed { entry, instance, status: 127 }
                } else {
                    self.live.insert(entry, (instance, false, false));
                    Event::Spawned { entry, instance, pid: 1000 + i32::try_from(entry).unwrap_or(0) }
                });
            }
            Action::Signal { entry, signal, .. } => {
                let &(instance, _, _) = self.live.get(&entry)?;
                let spent = matches!(pod.phase(), Phase::Terminating { spent: true, .. })
                    || self.budget_deadline.is_some_and(|d| now >= d);
                if signal == Signal::KILL {
                    // No SIGKILL before max(stop signal + 2 s, the stop's
                    // deadline), unless the pod's budget is spent.
                    let signalled = self.term_signals.get(&(entry, instance)).copied();
                    let deadline = match self.stopped_before_termination.get(&(entry, instance)) {
                        Some(&began) => Some(began + pod.spec().termination_grace_period),
                        None => self.budget_deadline,
                    };
                    let earliest = signalled.map(|t| t + MIN_STOP_GRACE).max(deadline);
                    // A restart_all kills at once (KEP-5532). A copy restarted
                    // during termination is held to the same rule as any
                    // instance (KEP-4438: its stop signal at its turn).
                    let exempt = pod.phase() == Phase::Restarting;
                    if !spent && !exempt && earliest.is_some_and(|e| now < e) {
                        self.fail(format!("{entry}/{instance} SIGKILLed before {earliest:?} (now {now:?})"));
                    }
                    if let Some(l) = self.live.get_mut(&entry) {
                        l.1 = true;
                    }
                } else if signal == Signal::TERM {
                    if self.term_signals.insert((entry, instance), now).is_some() {
                        self.fail(format!("{entry}/{instance} got its stop signal twice"));
                    }
                    if let Some(l) = self.live.get_mut(&entry) {
                        l.2 = true;
                    }
                    if !terminating {
                        self.stopped_before_termination.entry((entry, instance)).or_insert(now);
                    }
                    if terminating
                        && !spent
                        && role(entry) == Role::Sidecar
                        && !self.stopped_before_termination.contains_key(&(entry, instance))
                    {
                        let alive: Vec<EntryId> = self.live.keys().copied().collect();
                        for other in alive {
                            let r = role(other);
                            if r != Role::Sidecar || other > entry {
                                self.fail(format!("sidecar {entry} stopped while {other} ({r:?}) is alive"));
                            }
                        }
                    }
                }
            }
            Action::ArmTimer { timer, at } => {
                self.timers.insert(timer, at);
            }
            Action::CancelTimer(t) => {
                self.timers.remove(&t);
            }
            Action::ArmRun { entry, at_once } => {
                if terminating {
                    self.fail(format!("a run of {entry} armed after termination began"));
                }
                if at_once || !self.timers.contains_key(&Timer::Run(entry)) {
                    let every = match pod.spec().entries[entry].schedule.as_ref().map(|s| &s.when) {
                        Some(crate::spec::When::Every(d)) => *d,
                        _ => Duration::from_secs(1),
                    };
                    self.timers.insert(Timer::Run(entry), now + every);
                }
                return at_once.then_some(Event::RunDue { entry, late: Duration::ZERO });
            }
            Action::Exit { status } => {
                if !self.live.is_empty() {
                    self.fail(format!("exit with processes alive: {:?}", self.live));
                }
                self.exited = Some(status);
            }
            Action::StartProbe { .. }
            | Action::StopProbe { .. }
            | Action::RunHook { .. }
            | Action::StopChecks { .. } => {}
        }
        None
    }
}

/// The pod, the one driver the runtime uses too, the fake runtime and its clock.
struct World {
    pod: Pod,
    driver: Driver,
    fx: Fx,
    now: Instant,
}

impl World {
    fn terminating(&self) -> bool {
        matches!(self.pod.phase(), Phase::Terminating { .. } | Phase::Done)
    }

    /// Handles every queued event, one step at a time, checking after each.
    fn run(&mut self) -> Result<(), TestCaseError> {
        loop {
            self.fx.spawns_this_step = 0;
            if !self.driver.step(&mut self.pod, &mut self.fx, self.now) {
                break;
            }
            self.fx.observe(&self.pod, self.now);
            if let Some(why) = self.fx.broken.take() {
                return Err(TestCaseError::fail(why));
            }
        }
        Ok(())
    }

    fn event(&mut self, ev: Event) -> Result<(), TestCaseError> {
        if self.fx.exited.is_some() {
            return Ok(());
        }
        self.driver.push(ev);
        self.run()
    }

    /// A signal may be handled before spawn results still queued (it arrived
    /// before them): it goes to the front.
    fn signal_first(&mut self, ev: Event) -> Result<(), TestCaseError> {
        if self.fx.exited.is_some() {
            return Ok(());
        }
        self.driver.push_front(ev);
        self.run()
    }

    fn exit(&mut self, entry: EntryId, exit: Exit) -> Result<(), TestCaseError> {
        if let Some((instance, _, _)) = self.fx.live.remove(&entry) {
            self.event(Event::Exited { entry, instance, exit })?;
        }
        Ok(())
    }

    fn wait(&mut self, d: Duration) -> Result<(), TestCaseError> {
        let end = self.now + d;
        while let Some((&t, &at)) =
            self.fx.timers.iter().filter(|(_, &at)| at <= end).min_by_key(|(_, &at)| at)
        {
            self.fx.timers.remove(&t);
            self.now = self.now.max(at);
            self.event(Event::Timer(t))?;
            // SIGKILLed processes die at once.
            let killed: Vec<EntryId> = self.fx.live.iter().filter(|(_, l)| l.1).map(|(&e, _)| e).collect();
            for e in killed {
                self.exit(e, Exit::Signal(Signal::KILL.number()))?;
            }
        }
        self.now = end;
        Ok(())
    }

    fn nth_live(&self, n: usize) -> Option<(EntryId, Instance)> {
        let v: Vec<_> = self.fx.live.iter().map(|(&e, l)| (e, l.0)).collect();
        (!v.is_empty()).then(|| v[n % v.len()])
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_for_any_event_sequence(
        shapes in proptest::collection::vec(shape(), 1..6),
        policy in 0..3u8,
        any_completion in any::<bool>(),
        grace_ms in 0..5000u64,
        ops in proptest::collection::vec(op(), 0..80),
        term_dies in any::<bool>(),
        deadline_ms in proptest::option::of(500..20_000u64),
    ) {
        let spec = build(&shapes, policy, any_completion, grace_ms, deadline_ms);
        let now = Instant::now();
        let fx = Fx {
            timers: BTreeMap::new(),
            live: BTreeMap::new(),
            fail_spawns: false,
            exited: None,
            term_signals: BTreeMap::new(),
            stopped_before_termination: BTreeMap::new(),
            ever_started: BTreeSet::new(),
            inits_ok: BTreeSet::new(),
            mains_spawned: BTreeSet::new(),
            first_term_signal: None,
            budget_deadline: None,
            spawns_this_step: 0,
            round_mains: BTreeSet::new(),
            spawned_in_termination: BTreeSet::new(),
            notes: Vec::new(),
            broken: None,
        };
        let mut w = World { pod: Pod::new(spec), driver: Driver::new(), fx, now };
        w.driver.start(&mut w.pod, &mut w.fx, now);
        if let Some(why) = w.fx.broken.take() {
            return Err(TestCaseError::fail(why));
        }
        w.run()?;
        for op in ops {
            if w.fx.exited.is_some() {
                break;
            }
            match op {
                Op::Exit(n, s) => {
                    if let Some((e, _)) = w.nth_live(n) {
                        let exit = if s >= 256 { Exit::Signal(i32::from(s - 256)) } else { Exit::Code(i32::from(s)) };
                        w.exit(e, exit)?;
                    }
                }
                Op::Probe(n, k, ok) => {
                    if let Some((entry, instance)) = w.nth_live(n) {
                        let kind = [ProbeKind::Startup, ProbeKind::Readiness, ProbeKind::Liveness][k as usize];
                        w.event(Event::Probe { entry, instance, kind, ok, why: None })?;
                    }
                }
                Op::Hook(n, post, ok) => {
                    if let Some((entry, instance)) = w.nth_live(n) {
                        let hook = if post { HookKind::PostStart } else { HookKind::PreStop };
                        w.event(Event::Hook { entry, instance, hook, ok })?;
                    }
                }
                Op::Wait(ms) => w.wait(Duration::from_millis(u64::from(ms)))?,
                Op::Signal(s) => {
                    let signal = [Signal::TERM, Signal::INT, Signal::HUP, Signal::USR1][s as usize];
                    if matches!(signal, Signal::TERM | Signal::INT) && !w.terminating() {
                        w.fx.first_term_signal.get_or_insert(signal.number());
                    }
                    let ev = if matches!(signal, Signal::TERM | Signal::INT) {
                        Event::Terminate { signal }
                    } else {
                        Event::Forward { signal }
                    };
                    w.signal_first(ev)?;
                }
                Op::SpawnFails(f) => w.fx.fail_spawns = f,
                Op::Control(n, verb) => {
                    let entry = n % w.pod.spec().entries.len();
                    let request = match verb {
                        0 => Control::Restart(entry),
                        1 => Control::Stop(entry),
                        2 => Control::Start(entry),
                        3 => Control::Signal(entry, Signal::USR1),
                        5 => Control::Trigger(entry),
                        6 => Control::Suspend(entry),
                        7 => Control::Resume(entry),
                        _ => Control::Shutdown,
                    };
                    if request == Control::Shutdown && !w.terminating() {
                        w.fx.first_term_signal.get_or_insert(Signal::TERM.number());
                    }
                    w.fx.spawns_this_step = 0;
                    let _ = w.driver.control(&mut w.pod, &mut w.fx, request, w.now);
                    w.fx.observe(&w.pod, w.now);
                    if let Some(why) = w.fx.broken.take() {
                        return Err(TestCaseError::fail(why));
                    }
                    w.run()?;
                }
            }
        }
        // End it: SIGTERM, then let time pass; processes die on their stop
        // signal (or only on SIGKILL), hooks return.
        if !w.terminating() {
            w.fx.first_term_signal.get_or_insert(Signal::TERM.number());
        }
        w.event(Event::Terminate { signal: Signal::TERM })?;
        for _ in 0..200 {
            if w.fx.exited.is_some() {
                break;
            }
            let live: Vec<(EntryId, Instance, bool)> = w.fx.live.iter().map(|(&e, l)| (e, l.0, l.2)).collect();
            for (entry, instance, termed) in live {
                w.event(Event::Hook { entry, instance, hook: HookKind::PreStop, ok: true })?;
                if termed && term_dies {
                    w.exit(entry, Exit::Signal(Signal::TERM.number()))?;
                }
            }
            w.wait(Duration::from_millis(500))?;
        }
        let status = w.fx.exited;
        prop_assert!(status.is_some(), "no exit; live: {:?}, phase {:?}", w.fx.live, w.pod.phase());
        let status = status.unwrap_or_default();
        prop_assert!((0..=255).contains(&status), "status {status}");
        // What ended the pod decides the status: the deadline (124), an entry
        // past its max_restarts (its status), else the ordinary rules.
        let ended_by = |event: &str| w.fx.notes.iter().find(|(e, _)| *e == event).map(|&(_, s)| s);
        if ended_by("deadline_exceeded").is_some() {
            prop_assert_eq!(status, exit_status::DEADLINE_EXCEEDED);
        } else if let Some(failed) = ended_by("max_restarts") {
            prop_assert_eq!(Some(status), failed);
        } else if let Some(failed) = ended_by("init_failed") {
            // An init that fails under Never ends the pod with its status,
            // even after mains ran in an earlier round (restart_all).
            prop_assert_eq!(Some(status), failed);
        } else if w.fx.mains_spawned.is_empty() {
            let failed_init = w.pod.status().iter().any(|s| s.role == Role::Init && s.last_exit.is_some_and(|x| !x.success()));
            if !failed_init {
                prop_assert_eq!(Some(status), w.fx.first_term_signal.map(|s| 128 + s));
            }
        } else {
            let want = w
                .pod
                .status()
                .iter()
                .filter(|s| s.role == Role::Main)
                .filter_map(|s| s.last_exit)
                .find(|x| !x.success())
                .map_or(0, Exit::status);
            prop_assert_eq!(status, want);
        }
        // Done is absorbing.
        let after = w.pod.handle(Event::Terminate { signal: Signal::INT }, w.now);
        prop_assert!(after.is_empty());
    }
}
