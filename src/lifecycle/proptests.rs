//! Property tests of the lifecycle: random pods, random events at any moment
//! (exits with any status, probe and hook results, timers, signals, during
//! startup and termination), against the invariants written at the top of
//! `lifecycle.rs`. The harness plays the processes: they die when SIGKILLed,
//! and on their stop signal either die or ignore it, as the case draws.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use proptest::prelude::*;

use super::*;
use crate::config::{BackoffSpec, EntrySpec, HookSpec, PodSpec, ProbeAction, ProbeSpec};
use crate::config::{Completion, HoldUntil, LogMode, RestartPolicy, Role};

#[derive(Debug, Clone)]
struct EntryShape {
    role: Role,
    startup: bool,
    readiness: bool,
    liveness: bool,
    post_start: bool,
    pre_stop: bool,
    hold_ready: bool,
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
}

fn shape() -> impl Strategy<Value = EntryShape> {
    (0..3u8, any::<[bool; 6]>()).prop_map(|(r, b)| EntryShape {
        role: [Role::Init, Role::Sidecar, Role::Main][r as usize],
        startup: b[0],
        readiness: b[1],
        liveness: b[2],
        post_start: b[3],
        pre_stop: b[4],
        hold_ready: b[5],
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
    ]
}

fn probe() -> ProbeSpec {
    let action = ProbeAction::Exec { argv: vec!["true".into()] };
    ProbeSpec { period: Duration::from_secs(1), failure_threshold: 2, ..ProbeSpec::new(action) }
}

fn build(shapes: &[EntryShape], policy: u8, any: bool, grace_ms: u64) -> PodSpec {
    let mut entries: Vec<EntrySpec> = shapes
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let probes = s.role != Role::Init;
            EntrySpec {
                hold_until: if s.hold_ready { HoldUntil::Ready } else { HoldUntil::Started },
                startup_probe: (probes && s.startup).then(probe),
                readiness_probe: (probes && s.readiness).then(probe),
                liveness_probe: (probes && s.liveness).then(probe),
                post_start: (probes && s.post_start).then_some(HookSpec::Sleep(Duration::from_secs(1))),
                pre_stop: (probes && s.pre_stop).then_some(HookSpec::Sleep(Duration::from_secs(1))),
                ..EntrySpec::new(&format!("e{i}"), s.role, vec!["x".into()], LogMode::Prefixed)
            }
        })
        .collect();
    if !entries.iter().any(|e| e.role == Role::Main) {
        let mut m = entries[0].clone();
        m.name = "main".into();
        m.role = Role::Main;
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
        entries,
    }
}

/// The processes, as the harness plays them, and what the invariants need.
struct World {
    pod: Pod,
    now: Instant,
    timers: BTreeMap<Timer, Instant>,
    live: BTreeMap<EntryId, (Instance, bool /* killed */, bool /* term */)>,
    fail_spawns: bool,
    exited: Option<i32>,
    term_signals: BTreeMap<(EntryId, Instance), u32>,
    /// Entries whose stop began before termination (a probe kill): not ordered.
    stopped_before_termination: BTreeSet<(EntryId, Instance)>,
    ever_started: BTreeSet<EntryId>,
    inits_ok: BTreeSet<EntryId>,
    mains_spawned: BTreeSet<EntryId>,
    first_term_signal: Option<i32>,
    /// Spawn results not handed to the lifecycle yet.
    results: VecDeque<Event>,
}

impl World {
    fn role(&self, e: EntryId) -> Role {
        self.pod.spec().entries[e].role
    }

    fn terminating(&self) -> bool {
        matches!(self.pod.phase(), Phase::Terminating { .. } | Phase::Done)
    }

    /// Carries out `actions` as the supervisor does. A spawn's result is
    /// queued in `results`, delivered by [`World::deliver`]: a signal may be
    /// handled before it, as in the supervisor's queue.
    fn apply(&mut self, actions: Vec<Action>) -> Result<(), TestCaseError> {
        for a in actions {
            prop_assert!(self.exited.is_none(), "action after Exit: {a:?}");
            match a {
                Action::Spawn { entry, instance } => {
                    prop_assert!(!self.terminating(), "spawn of {entry} after termination began");
                    if self.role(entry) == Role::Main && self.mains_spawned.insert(entry) {
                        for (i, e) in self.pod.spec().entries.iter().enumerate() {
                            match e.role {
                                Role::Init => {
                                    prop_assert!(self.inits_ok.contains(&i), "main before init {i} succeeded")
                                }
                                Role::Sidecar => prop_assert!(
                                    self.ever_started.contains(&i),
                                    "main before sidecar {i} started"
                                ),
                                Role::Main => {}
                            }
                        }
                    }
                    let ev = if self.fail_spawns {
                        Event::SpawnFailed { entry, instance, status: 127 }
                    } else {
                        self.live.insert(entry, (instance, false, false));
                        Event::Spawned { entry, instance, pid: 1000 + i32::try_from(entry).unwrap_or(0) }
                    };
                    self.results.push_back(ev);
                }
                Action::Signal { entry, signal, .. } => {
                    let Some(&(instance, _, _)) = self.live.get(&entry) else { continue };
                    if signal == Signal::KILL {
                        if let Some(l) = self.live.get_mut(&entry) {
                            l.1 = true;
                        }
                    } else if signal == Signal::TERM {
                        let n = self.term_signals.entry((entry, instance)).or_default();
                        *n += 1;
                        prop_assert!(*n == 1, "{entry}/{instance} got its stop signal twice");
                        if let Some(l) = self.live.get_mut(&entry) {
                            l.2 = true;
                        }
                        if !self.terminating() {
                            self.stopped_before_termination.insert((entry, instance));
                        }
                        let spent = matches!(self.pod.phase(), Phase::Terminating { spent: true, .. });
                        if self.terminating()
                            && !spent
                            && self.role(entry) == Role::Sidecar
                            && !self.stopped_before_termination.contains(&(entry, instance))
                        {
                            for &other in self.live.keys() {
                                let r = self.role(other);
                                prop_assert!(
                                    !(r != Role::Sidecar || other > entry),
                                    "sidecar {entry} stopped while {other} ({r:?}) is alive"
                                );
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
                Action::Exit { status } => {
                    prop_assert!(self.live.is_empty(), "exit with processes alive: {:?}", self.live);
                    self.exited = Some(status);
                }
                Action::StartProbe { .. }
                | Action::StopProbe { .. }
                | Action::RunHook { .. }
                | Action::StopChecks { .. } => {}
            }
        }
        Ok(())
    }

    fn observe(&mut self) {
        let terminating = self.terminating();
        for (i, s) in self.pod.status().iter().enumerate() {
            // A stop begun before termination (probe or post_start failure) is
            // not ordered against anything (KEP-753 R40), even if its signal
            // comes after termination began (its pre_stop ran until then).
            if s.stopping && !terminating {
                if let Some(&(instance, _, _)) = self.live.get(&i) {
                    self.stopped_before_termination.insert((i, instance));
                }
            }
            if s.started {
                self.ever_started.insert(i);
            }
            if s.role == Role::Init && s.state == State::Exited && s.last_exit == Some(Exit::Code(0)) {
                self.inits_ok.insert(i);
            }
        }
    }

    fn event(&mut self, ev: Event) -> Result<(), TestCaseError> {
        if self.exited.is_some() {
            return Ok(());
        }
        let actions = self.pod.handle(ev, self.now);
        self.observe();
        self.apply(actions)
    }

    /// Hands the lifecycle every queued spawn result (and those they lead to).
    fn deliver(&mut self) -> Result<(), TestCaseError> {
        while let Some(ev) = self.results.pop_front() {
            self.event(ev)?;
        }
        Ok(())
    }

    fn exit(&mut self, entry: EntryId, exit: Exit) -> Result<(), TestCaseError> {
        if let Some((instance, _, _)) = self.live.remove(&entry) {
            self.event(Event::Exited { entry, instance, exit })?;
        }
        Ok(())
    }

    fn wait(&mut self, d: Duration) -> Result<(), TestCaseError> {
        let end = self.now + d;
        while let Some((&t, &at)) = self.timers.iter().filter(|(_, &at)| at <= end).min_by_key(|(_, &at)| at)
        {
            self.timers.remove(&t);
            self.now = self.now.max(at);
            self.event(Event::Timer(t))?;
            self.deliver()?;
            // SIGKILLed processes die at once.
            let killed: Vec<EntryId> = self.live.iter().filter(|(_, l)| l.1).map(|(&e, _)| e).collect();
            for e in killed {
                self.exit(e, Exit::Signal(libc::SIGKILL))?;
            }
        }
        self.now = end;
        Ok(())
    }

    fn nth_live(&self, n: usize) -> Option<(EntryId, Instance)> {
        let v: Vec<_> = self.live.iter().map(|(&e, l)| (e, l.0)).collect();
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
    ) {
        let spec = build(&shapes, policy, any_completion, grace_ms);
        let now = Instant::now();
        let mut w = World {
            pod: Pod::new(spec),
            now,
            timers: BTreeMap::new(),
            live: BTreeMap::new(),
            fail_spawns: false,
            exited: None,
            term_signals: BTreeMap::new(),
            stopped_before_termination: BTreeSet::new(),
            ever_started: BTreeSet::new(),
            inits_ok: BTreeSet::new(),
            mains_spawned: BTreeSet::new(),
            first_term_signal: None,
            results: VecDeque::new(),
        };
        let actions = w.pod.start(now);
        w.observe();
        w.apply(actions)?;
        for op in ops {
            if w.exited.is_some() {
                break;
            }
            // A signal may be handled while spawn results are still queued.
            if !matches!(op, Op::Signal(_)) {
                w.deliver()?;
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
                        w.event(Event::Probe { entry, instance, kind, ok })?;
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
                        w.first_term_signal.get_or_insert(signal.number());
                    }
                    let ev = if matches!(signal, Signal::TERM | Signal::INT) {
                        Event::Terminate { signal }
                    } else {
                        Event::Forward { signal }
                    };
                    w.event(ev)?;
                    w.deliver()?;
                }
                Op::SpawnFails(f) => w.fail_spawns = f,
            }
        }
        w.deliver()?;
        // End it: SIGTERM, then let time pass; processes die on their stop
        // signal (or only on SIGKILL), hooks return.
        if !w.terminating() {
            w.first_term_signal.get_or_insert(libc::SIGTERM);
        }
        w.event(Event::Terminate { signal: Signal::TERM })?;
        for _ in 0..200 {
            w.deliver()?;
            if w.exited.is_some() {
                break;
            }
            let live: Vec<(EntryId, Instance, bool)> = w.live.iter().map(|(&e, l)| (e, l.0, l.2)).collect();
            for (entry, instance, termed) in live {
                w.event(Event::Hook { entry, instance, hook: HookKind::PreStop, ok: true })?;
                if termed && term_dies {
                    w.exit(entry, Exit::Signal(libc::SIGTERM))?;
                }
            }
            w.wait(Duration::from_millis(500))?;
        }
        let status = w.exited;
        prop_assert!(status.is_some(), "no exit; live: {:?}, phase {:?}", w.live, w.pod.phase());
        let status = status.unwrap_or_default();
        prop_assert!((0..=255).contains(&status), "status {status}");
        if w.mains_spawned.is_empty() && !w.inits_ok.is_empty() {
            // Either an init failed (its status) or a signal ended it (128 + N).
        }
        if w.mains_spawned.is_empty() {
            let failed_init = w.pod.status().iter().any(|s| s.role == Role::Init && s.last_exit.is_some_and(|x| !x.success()));
            if !failed_init {
                prop_assert_eq!(Some(status), w.first_term_signal.map(|s| 128 + s));
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
