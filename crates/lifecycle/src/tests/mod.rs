//! Every lifecycle rule on the state machine alone: no processes, no sleeps,
//! one file per concern as in `src/`. `Sim` plays the supervisor: it answers
//! `Spawn` with `Spawned` (pid = 100 * entry + instance), records signals and
//! timers, and moves a fake clock. `proptests.rs` checks the crate's
//! invariants on random event sequences, with a harness of its own.

// One real instant is the origin of the simulated clock; nothing else reads it.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::exit_status::{self, Exit};
use crate::spec::{Argv, BackoffSpec, EntrySpec, HookSpec, PodSpec, ProbeAction, ProbeSpec};
use crate::spec::{Completion, HoldUntil, LogMode, RestartPolicy, Role};
use crate::spec::{RuleAction, Signal};
use crate::{
    Action, Control, Driver, Effects, EntryId, Event, HookKind, Instance, Level, Note, Pod, ProbeKind,
};
use crate::{StopGrace, Timer, Timing};

mod control;
mod notes;
mod probes;
mod proptests;
mod reload;
mod restarts;
mod scheduled;
mod start;
mod table;
mod termination;
mod timing;
mod waits;

const TERM: i32 = Signal::TERM.number();
const KILL: i32 = Signal::KILL.number();

fn entry(name: &str, role: Role) -> EntrySpec {
    EntrySpec::new(name, role, Argv::program_only("x".into()), LogMode::Prefixed)
}

fn probe() -> ProbeSpec {
    let action = ProbeAction::Exec { argv: Argv::program_only("true".into()) };
    ProbeSpec { period: Duration::from_secs(1), ..ProbeSpec::new(action) }
}

fn pod(entries: Vec<EntrySpec>) -> PodSpec {
    PodSpec {
        restart_policy: RestartPolicy::Never,
        termination_grace_period: Duration::from_secs(7),
        completion: Completion::All,
        backoff: BackoffSpec {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(8),
            reset_after: Duration::from_secs(60),
        },
        log: LogMode::Prefixed,
        status_socket: None,
        http: None,
        active_deadline: None,
        entries,
    }
}

/// The fake runtime: records what it is asked to do as readable strings,
/// answers `Spawn` with `Spawned` (pid = 100 * entry + instance) or with
/// `SpawnFailed` for the entries in `fail_spawn`.
struct SimFx {
    names: Vec<String>,
    /// Everything done, in order.
    log: Vec<String>,
    timers: BTreeMap<Timer, Instant>,
    /// Live instance per entry.
    live: BTreeMap<EntryId, (Instance, i32)>,
    exit: Option<i32>,
    /// Entries whose spawn fails with this status.
    fail_spawn: BTreeMap<EntryId, i32>,
    /// What the machine said.
    notes: Vec<Note>,
    /// Every signal sent but SIGCONT, with the entry's name.
    sent: Vec<(String, Signal)>,
}

impl Effects for SimFx {
    fn say(&mut self, _pod: &Pod, notes: Vec<Note>) {
        self.notes.extend(notes);
    }

    fn perform(&mut self, pod: &Pod, action: Action, now: Instant) -> Option<Event> {
        // Entries added by a reload are in the pod's spec, not in `names`.
        self.names = pod.spec().entries.iter().map(|e| e.name.clone()).collect();
        match action {
            Action::Spawn { entry, instance } => {
                self.log.push(format!("spawn {}", self.names[entry]));
                return Some(match self.fail_spawn.get(&entry) {
                    Some(&status) => Event::SpawnFailed { entry, instance, status },
                    None => {
                        let pid = i32::try_from(100 * entry as u64 + instance).unwrap();
                        self.live.insert(entry, (instance, pid));
                        Event::Spawned { entry, instance, pid }
                    }
                });
            }
            Action::Signal { signal: Signal::CONT, .. } => {}
            Action::Signal { entry, signal, .. } => {
                let what = if signal == Signal::KILL { "kill" } else { "stop" };
                self.log.push(format!("{what} {}", self.names[entry]));
                self.sent.push((self.names[entry].clone(), signal));
            }
            Action::StartProbe { entry, kind, .. } => {
                self.log.push(format!("probe+ {} {kind:?}", self.names[entry]));
            }
            Action::StopProbe { .. } | Action::StopChecks { .. } => {}
            Action::RunHook { entry, hook, .. } => {
                self.log.push(format!("hook {} {hook:?}", self.names[entry]));
            }
            Action::ArmTimer { timer, at } => {
                self.timers.insert(timer, at);
            }
            Action::CancelTimer(t) => {
                self.timers.remove(&t);
            }
            // The runtime's clock for runs: an `every` from now (a cron
            // schedule every minute); an armed one stays.
            Action::ArmRun { entry, at_once } => {
                if at_once || !self.timers.contains_key(&Timer::Run(entry)) {
                    let every = match pod.spec().entries[entry].schedule.as_ref().map(|s| &s.when) {
                        Some(crate::spec::When::Every(d)) => *d,
                        _ => Duration::from_secs(60),
                    };
                    self.timers.insert(Timer::Run(entry), now + every);
                }
                return at_once.then_some(Event::RunDue { entry, late: Duration::ZERO });
            }
            Action::Exit { status } => {
                assert!(self.exit.is_none(), "Exit emitted twice");
                self.exit = Some(status);
                self.log.push(format!("exit {status}"));
            }
        }
        None
    }
}

/// A pod driven by the lifecycle's own [`Driver`], as the runtime drives it,
/// with [`SimFx`] for effects and a fake clock.
struct Sim {
    pod: Pod,
    driver: Driver,
    fx: SimFx,
    now: Instant,
    t0: Instant,
}

impl Sim {
    fn new(spec: PodSpec) -> Sim {
        let now = Instant::now();
        let names = spec.entries.iter().map(|e| e.name.clone()).collect();
        let fx = SimFx {
            names,
            log: vec![],
            timers: BTreeMap::new(),
            live: BTreeMap::new(),
            exit: None,
            fail_spawn: BTreeMap::new(),
            notes: Vec::new(),
            sent: Vec::new(),
        };
        let mut sim = Sim { pod: Pod::new(spec), driver: Driver::new(), fx, now, t0: now };
        sim.driver.start(&mut sim.pod, &mut sim.fx, now);
        sim.driver.run_queue(&mut sim.pod, &mut sim.fx, now);
        sim
    }

    fn id(&self, name: &str) -> EntryId {
        self.pod.spec().entries.iter().position(|e| e.name == name).unwrap()
    }

    fn event(&mut self, ev: Event) {
        self.driver.push(ev);
        self.driver.run_queue(&mut self.pod, &mut self.fx, self.now);
    }

    fn exit(&mut self, name: &str, exit: Exit) {
        let e = self.id(name);
        let (instance, _) = self.fx.live.remove(&e).expect("exit of a process that is not running");
        self.event(Event::Exited { entry: e, instance, exit });
    }

    fn probe(&mut self, name: &str, kind: ProbeKind, ok: bool) {
        let e = self.id(name);
        let (instance, _) = self.fx.live[&e];
        self.event(Event::Probe { entry: e, instance, kind, ok, why: (!ok).then(|| "refused".to_owned()) });
    }

    fn hook(&mut self, name: &str, hook: HookKind, ok: bool) {
        let e = self.id(name);
        let (instance, _) = self.fx.live[&e];
        self.event(Event::Hook { entry: e, instance, hook, ok });
    }

    /// Moves the clock, firing due timers in time order.
    fn advance(&mut self, d: Duration) {
        let end = self.now + d;
        loop {
            let next = self
                .fx
                .timers
                .iter()
                .filter(|(_, &at)| at <= end)
                .min_by_key(|(_, &at)| at)
                .map(|(&t, &at)| (t, at));
            let Some((t, at)) = next else { break };
            self.fx.timers.remove(&t);
            self.now = self.now.max(at);
            self.event(Event::Timer(t));
        }
        self.now = end;
    }

    fn elapsed(&self) -> Duration {
        self.now - self.t0
    }

    fn take_log(&mut self) -> Vec<String> {
        std::mem::take(&mut self.fx.log)
    }

    fn running(&self, name: &str) -> bool {
        self.fx.live.contains_key(&self.id(name))
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| (*x).to_owned()).collect()
}

/// Requests from the command line (docs/control.md) and `podinit reload`,
/// carried out as the runtime does: at once, then the queue.
impl Sim {
    fn control(&mut self, request: Control) -> Result<(), String> {
        let result = self.driver.control(&mut self.pod, &mut self.fx, request, self.now);
        self.driver.run_queue(&mut self.pod, &mut self.fx, self.now);
        result
    }

    fn restarts(&self, name: &str) -> u32 {
        self.pod.status()[self.id(name)].restarts
    }

    fn reload(&mut self, spec: PodSpec) -> Result<Vec<String>, String> {
        let result = self.driver.reload(&mut self.pod, &mut self.fx, spec, self.now);
        self.driver.run_queue(&mut self.pod, &mut self.fx, self.now);
        result
    }
}

fn with_argv(mut e: EntrySpec, argv: &str) -> EntrySpec {
    e.argv = Argv::program_only(argv.into());
    e
}
