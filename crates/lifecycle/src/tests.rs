//! Every lifecycle rule on the state machine alone: no processes, no sleeps.
//! `Sim` plays the supervisor: it answers `Spawn` with `Spawned` (pid = 100 *
//! entry + instance), records signals and timers, and moves a fake clock.

// One real instant is the origin of the simulated clock; nothing else reads it.
#![allow(clippy::disallowed_methods)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::*;
use crate::spec::{Argv, BackoffSpec, EntrySpec, HookSpec, PodSpec, ProbeAction, ProbeSpec};
use crate::spec::{Completion, HoldUntil, LogMode, RestartPolicy, Role};

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

    fn perform(&mut self, pod: &Pod, action: Action, _now: Instant) -> Option<Event> {
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

// ----- Startup (rules 1-4) -----

#[test]
fn rule1_sequence_one_at_a_time_in_file_order_then_mains() {
    let mut sim = Sim::new(pod(vec![
        entry("a", Role::Init),
        entry("m1", Role::Main),
        entry("b", Role::Sidecar),
        entry("c", Role::Init),
        entry("m2", Role::Main),
    ]));
    assert_eq!(sim.take_log(), s(&["spawn a"]));
    sim.exit("a", Exit::Code(0));
    // b has no probes: started at once, so c follows, and the mains wait for c.
    assert_eq!(sim.take_log(), s(&["spawn b", "spawn c"]));
    sim.exit("c", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["spawn m1", "spawn m2"]));
    assert!(sim.running("b"));
}

#[test]
fn rule2_failed_init_under_never_fails_the_pod_with_its_status() {
    let mut sim =
        Sim::new(pod(vec![entry("side", Role::Sidecar), entry("init", Role::Init), entry("m", Role::Main)]));
    sim.take_log();
    sim.exit("init", Exit::Code(3));
    assert_eq!(sim.take_log(), s(&["stop side"]));
    sim.exit("side", Exit::Signal(TERM));
    assert_eq!(sim.fx.exit, Some(3));
    assert!(!sim.fx.log.iter().any(|l| l == "spawn m"));
}

#[test]
fn rule2_failed_init_is_retried_with_backoff_under_on_failure_and_never_rerun_after_success() {
    let mut spec = pod(vec![entry("init", Role::Init), entry("m", Role::Main)]);
    spec.restart_policy = RestartPolicy::OnFailure;
    let mut sim = Sim::new(spec);
    sim.exit("init", Exit::Code(1));
    sim.exit("init", Exit::Code(1)); // the first restart was immediate
    assert!(!sim.running("init"));
    sim.advance(Duration::from_millis(999));
    assert!(!sim.running("init"));
    sim.advance(Duration::from_millis(1));
    assert!(sim.running("init"));
    sim.exit("init", Exit::Code(0));
    assert!(sim.running("m"));
    sim.take_log();
    sim.exit("m", Exit::Code(1)); // the main restarts; the init does not run again
    assert_eq!(sim.take_log(), s(&["spawn m"]));
}

#[test]
fn rule2_policy_always_runs_inits_as_on_failure() {
    let mut spec = pod(vec![entry("init", Role::Init), entry("m", Role::Main)]);
    spec.restart_policy = RestartPolicy::Always;
    let mut sim = Sim::new(spec);
    sim.exit("init", Exit::Code(0));
    assert!(!sim.running("init"));
    assert!(sim.running("m"));
}

#[test]
fn rule3_sequence_holds_at_sidecar_until_startup_probe_and_post_start() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    side.post_start = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    assert_eq!(sim.take_log(), s(&["spawn side", "hook side PostStart", "probe+ side Startup"]));
    sim.probe("side", ProbeKind::Startup, true);
    assert!(!sim.running("m"), "post_start has not returned");
    sim.hook("side", HookKind::PostStart, true);
    assert!(sim.running("m"));
}

#[test]
fn rule3_hold_until_ready_waits_for_readiness_threshold() {
    let mut side = entry("side", Role::Sidecar);
    side.readiness_probe = Some(ProbeSpec { success_threshold: 2, ..probe() });
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.probe("side", ProbeKind::Readiness, true);
    assert!(!sim.running("m"));
    sim.probe("side", ProbeKind::Readiness, true);
    assert!(sim.running("m"));
}

#[test]
fn rule3_hold_until_started_ignores_readiness_as_kubernetes() {
    let mut side = entry("side", Role::Sidecar);
    side.readiness_probe = Some(probe());
    side.hold_until = HoldUntil::Started;
    let sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    assert!(sim.running("m"));
}

#[test]
fn rule3_liveness_never_holds_and_later_crashes_never_rerun_anything() {
    let mut side = entry("side", Role::Sidecar);
    side.liveness_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![entry("i", Role::Init), side, entry("m", Role::Main)]));
    sim.exit("i", Exit::Code(0));
    assert!(sim.running("m"));
    sim.take_log();
    sim.exit("side", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["spawn side", "probe+ side Liveness"]));
    assert!(sim.running("m"));
}

#[test]
fn rule3_sidecar_that_dies_before_started_holds_the_sequence_until_it_restarts() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.exit("side", Exit::Code(1));
    assert!(sim.running("side"));
    sim.exit("side", Exit::Code(1));
    assert!(!sim.running("side"));
    sim.advance(Duration::from_secs(1));
    sim.probe("side", ProbeKind::Startup, true);
    assert!(sim.running("m"));
}

#[test]
fn rule4_main_post_start_holds_the_next_main() {
    let mut m1 = entry("m1", Role::Main);
    m1.post_start = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![m1, entry("m2", Role::Main), entry("m3", Role::Main)]));
    assert_eq!(sim.take_log(), s(&["spawn m1", "hook m1 PostStart"]));
    sim.hook("m1", HookKind::PostStart, true);
    assert_eq!(sim.take_log(), s(&["spawn m2", "spawn m3"]));
}

// ----- Running (rules 5-8) -----

#[test]
fn rule5_sidecars_restart_after_any_exit_whatever_the_policy() {
    let mut sim = Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]));
    for exit in [Exit::Code(0), Exit::Code(2), Exit::Signal(KILL)] {
        sim.exit("side", exit);
        sim.advance(Duration::from_secs(10));
        assert!(sim.running("side"), "after {exit}");
    }
    assert_eq!(sim.pod.status()[0].restarts, 3);
}

#[test]
fn rule5_main_restart_policies() {
    for (policy, exit, restarts) in [
        (RestartPolicy::Never, Exit::Code(1), false),
        (RestartPolicy::OnFailure, Exit::Code(0), false),
        (RestartPolicy::OnFailure, Exit::Code(1), true),
        (RestartPolicy::OnFailure, Exit::Signal(KILL), true),
        (RestartPolicy::Always, Exit::Code(0), true),
    ] {
        let mut spec = pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]);
        spec.restart_policy = policy;
        let mut sim = Sim::new(spec);
        sim.exit("m", exit);
        assert_eq!(sim.running("m"), restarts, "{policy:?} {exit}");
        assert!(sim.running("side"), "a main's restart touches nothing else");
    }
}

#[test]
fn rule5_on_failure_restarts_after_a_probe_kill_even_with_status_0() {
    let mut m = entry("m", Role::Main);
    m.liveness_probe = Some(ProbeSpec { failure_threshold: 1, ..probe() });
    let mut spec = pod(vec![m]);
    spec.restart_policy = RestartPolicy::OnFailure;
    let mut sim = Sim::new(spec);
    sim.probe("m", ProbeKind::Liveness, false);
    sim.exit("m", Exit::Code(0));
    assert!(sim.running("m"));
}

#[test]
fn rule6_backoff_immediate_then_doubling_from_the_exit_and_reset() {
    let mut sim = Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]));
    sim.exit("side", Exit::Code(1));
    assert!(sim.running("side"), "first restart immediate");
    let mut waits = vec![];
    for _ in 0..5 {
        sim.exit("side", Exit::Code(1));
        let start = sim.now;
        while !sim.running("side") {
            sim.advance(Duration::from_millis(100));
        }
        waits.push((sim.now - start).as_millis());
    }
    assert_eq!(waits, [1000, 2000, 4000, 8000, 8000]);
    sim.advance(Duration::from_secs(60));
    sim.exit("side", Exit::Code(1));
    assert!(sim.running("side"), "after reset_after the restart is immediate again");
}

#[test]
fn rule7_startup_probe_gates_liveness_and_readiness_and_its_failure_restarts() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(ProbeSpec { failure_threshold: 2, ..probe() });
    side.liveness_probe = Some(probe());
    side.readiness_probe = Some(probe());
    let spec = pod(vec![side, entry("m", Role::Main)]);
    let mut sim = Sim::new(spec);
    let log = sim.take_log();
    assert!(!log.iter().any(|l| l.contains("Liveness") || l.contains("Readiness")), "{log:?}");
    sim.probe("side", ProbeKind::Startup, false);
    sim.probe("side", ProbeKind::Startup, false);
    assert_eq!(sim.take_log(), s(&["stop side"]), "startup failure stops it even under Never");
    sim.exit("side", Exit::Signal(TERM));
    assert!(sim.running("side"));
    sim.probe("side", ProbeKind::Startup, true);
    assert_eq!(sim.take_log()[2..], s(&["probe+ side Liveness", "probe+ side Readiness"]));
}

#[test]
fn rule7_liveness_failures_in_a_row_stop_then_sigkill_after_grace() {
    let mut m = entry("m", Role::Main);
    m.liveness_probe = Some(ProbeSpec { termination_grace_period: Some(Duration::from_secs(3)), ..probe() });
    let mut spec = pod(vec![m]);
    spec.restart_policy = RestartPolicy::Always;
    let mut sim = Sim::new(spec);
    sim.take_log();
    sim.probe("m", ProbeKind::Liveness, false);
    sim.probe("m", ProbeKind::Liveness, false);
    sim.probe("m", ProbeKind::Liveness, true); // not in a row
    sim.probe("m", ProbeKind::Liveness, false);
    sim.probe("m", ProbeKind::Liveness, false);
    assert!(sim.take_log().is_empty());
    sim.probe("m", ProbeKind::Liveness, false);
    assert_eq!(sim.take_log(), s(&["stop m"]));
    sim.advance(Duration::from_millis(2999));
    assert!(sim.take_log().is_empty());
    sim.advance(Duration::from_millis(1));
    assert_eq!(sim.take_log(), s(&["kill m"]));
    sim.exit("m", Exit::Signal(KILL));
    assert!(sim.running("m"));
}

#[test]
fn rule7_pre_stop_runs_before_a_probe_kill() {
    let mut m = entry("m", Role::Main);
    m.liveness_probe = Some(ProbeSpec { failure_threshold: 1, ..probe() });
    m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![m]));
    sim.take_log();
    sim.probe("m", ProbeKind::Liveness, false);
    assert_eq!(sim.take_log(), s(&["hook m PreStop"]));
    sim.hook("m", HookKind::PreStop, false);
    assert_eq!(sim.take_log(), s(&["stop m"]), "a failing pre_stop changes nothing else");
}

/// The time pre_stop takes comes out of the stop's own grace, with the 2 s
/// floor for the stop signal (kubernetes.io "Container Lifecycle Hooks").
#[test]
fn rule7_after_pre_stop_a_probe_kill_gets_the_rest_of_its_grace_not_2_s() {
    for (hook_takes, kill_after) in [(1.0, 30.0), (29.5, 31.5)] {
        let mut m = entry("m", Role::Main);
        m.liveness_probe = Some(ProbeSpec { failure_threshold: 1, ..probe() });
        m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
        let mut spec = pod(vec![m]);
        spec.termination_grace_period = Duration::from_secs(30);
        let mut sim = Sim::new(spec);
        sim.take_log();
        let t0 = sim.now;
        sim.probe("m", ProbeKind::Liveness, false);
        assert_eq!(sim.take_log(), s(&["hook m PreStop"]));
        sim.advance(Duration::from_secs_f64(hook_takes));
        sim.hook("m", HookKind::PreStop, true);
        assert_eq!(sim.take_log(), s(&["stop m"]));
        let kill_at = sim.fx.timers[&Timer::Stop(0, 1)];
        assert_eq!(kill_at - t0, Duration::from_secs_f64(kill_after), "pre_stop took {hook_takes} s");
        sim.advance(kill_at - sim.now - Duration::from_millis(1));
        assert!(sim.take_log().is_empty());
        sim.advance(Duration::from_millis(1));
        assert_eq!(sim.take_log(), s(&["kill m"]));
    }
}

/// `[pod] active_deadline` (a Pod's activeDeadlineSeconds): termination by the
/// ordinary path, and podinit's own status 124 whatever the processes exit with.
#[test]
fn active_deadline_begins_termination_and_gives_124() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut spec = pod(vec![side, entry("m", Role::Main)]);
    spec.active_deadline = Some(Duration::from_secs(2));
    let mut sim = Sim::new(spec);
    sim.take_log();
    // The sidecar never starts, so the main never runs.
    sim.advance(Duration::from_millis(1999));
    assert!(sim.take_log().is_empty());
    sim.advance(Duration::from_millis(1));
    assert_eq!(sim.take_log(), s(&["stop side"]));
    sim.exit("side", Exit::Code(0));
    assert_eq!(sim.fx.exit, Some(exit_status::DEADLINE_EXCEEDED));
    assert!(sim.fx.notes.iter().any(|n| n.event == "deadline_exceeded"));
}

#[test]
fn active_deadline_after_termination_began_changes_nothing() {
    let mut spec = pod(vec![entry("m", Role::Main)]);
    spec.active_deadline = Some(Duration::from_secs(5));
    let mut sim = Sim::new(spec);
    sim.exit("m", Exit::Code(3));
    assert_eq!(sim.fx.exit, Some(3));
    assert!(!sim.fx.timers.contains_key(&Timer::Deadline));
}

/// `max_restarts`: after that many restarts one more failure fails the pod
/// with the entry's status (supervisord's startretries).
#[test]
fn max_restarts_then_one_more_failure_fails_the_pod_with_its_status() {
    let mut side = entry("side", Role::Sidecar);
    side.max_restarts = Some(2);
    let mut spec = pod(vec![side, entry("m", Role::Main)]);
    spec.backoff.initial = Duration::ZERO;
    let mut sim = Sim::new(spec);
    sim.exit("side", Exit::Code(1));
    sim.exit("side", Exit::Code(1));
    assert!(sim.running("side"), "two restarts are allowed");
    sim.take_log();
    sim.exit("side", Exit::Code(7));
    assert_eq!(sim.take_log(), s(&["stop m"]), "the pod terminates");
    sim.exit("m", Exit::Signal(TERM));
    assert_eq!(sim.fx.exit, Some(7));
    assert!(sim.fx.notes.iter().any(|n| n.event == "max_restarts" && n.status == Some(7)));
}

/// KEP-5307: the first matching restart rule decides, else the entry's own
/// restart_policy, else the pod's.
#[test]
fn restart_rules_and_an_entrys_own_restart_policy_come_before_the_pods() {
    let rule = |operator, values: &[u8]| crate::spec::RestartRule {
        action: RuleAction::Restart,
        operator,
        values: values.to_vec(),
    };
    // Pod policy Never; a rule restarts on 42 only.
    let mut m = entry("m", Role::Main);
    m.restart_rules = vec![rule(crate::spec::Operator::In, &[42])];
    let mut sim = Sim::new(pod(vec![m]));
    sim.exit("m", Exit::Code(42));
    assert!(sim.running("m"), "42 matches the rule: restarted");
    sim.exit("m", Exit::Code(1));
    assert_eq!(sim.fx.exit, Some(1), "1 matches no rule: Never");

    // not_in: restart on anything but 0 and 3.
    let mut m = entry("m", Role::Main);
    m.restart_rules = vec![rule(crate::spec::Operator::NotIn, &[0, 3])];
    let mut spec = pod(vec![m]);
    spec.backoff.initial = Duration::ZERO;
    let mut sim = Sim::new(spec);
    sim.exit("m", Exit::Signal(KILL));
    assert!(sim.running("m"), "137 is not in [0, 3]");
    sim.exit("m", Exit::Code(3));
    assert_eq!(sim.fx.exit, Some(3));

    // The entry's own policy over the pod's Never; an init's exit 0 completes it.
    let mut init = entry("i", Role::Init);
    init.restart_rules = vec![rule(crate::spec::Operator::In, &[0])];
    let mut m = entry("m", Role::Main);
    m.restart_policy = Some(RestartPolicy::OnFailure);
    let mut spec = pod(vec![init, m]);
    spec.backoff.initial = Duration::ZERO;
    let mut sim = Sim::new(spec);
    sim.exit("i", Exit::Code(0));
    assert!(!sim.running("i") && sim.running("m"), "the init completed; the main runs");
    sim.exit("m", Exit::Code(2));
    assert!(sim.running("m"), "OnFailure of its own");
    sim.exit("m", Exit::Code(0));
    assert_eq!(sim.fx.exit, Some(0));
}

/// KEP-3960: a process that exits during its pre_stop ends its stop; the hook's
/// result is not waited for.
#[test]
fn an_exit_during_pre_stop_ends_the_stop_without_the_hook() {
    let mut m = entry("m", Role::Main);
    m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(30)));
    let mut sim = Sim::new(pod(vec![m]));
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["hook m PreStop"]));
    sim.advance(Duration::from_secs(1));
    sim.exit("m", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["exit 0"]), "no stop signal, no wait for the hook");
}

/// KEP-4438 (alpha; "Alpha limitations" and "Design Details" of
/// keps/sig-node/4438-container-restart-termination): with
/// `restart_during_termination`, a sidecar that dies before its turn comes
/// back: its post_start runs, no probes, and no second pre_stop; at its turn
/// it gets its stop signal and what is left of the budget, like any sidecar.
/// Such restarts are counted. Without the flag it stays down.
#[test]
fn restart_during_termination_brings_back_a_sidecar_that_dies_before_its_turn() {
    for flag in [true, false] {
        let mut side = entry("side", Role::Sidecar);
        side.restart_during_termination = flag;
        side.post_start = Some(HookSpec::Sleep(Duration::from_millis(10)));
        side.pre_stop = Some(HookSpec::Sleep(Duration::from_millis(10)));
        side.liveness_probe = Some(probe());
        side.stop_signal = Signal::USR1;
        let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
        sim.hook("side", HookKind::PostStart, true);
        sim.take_log();
        sim.event(Event::Terminate { signal: Signal::TERM });
        assert_eq!(sim.take_log(), s(&["hook side PreStop", "stop m"]));
        sim.advance(Duration::from_secs(1));
        sim.exit("side", Exit::Code(1));
        if !flag {
            assert!(sim.take_log().is_empty(), "without the flag nothing restarts");
            assert_eq!(sim.pod.status()[0].restarts_in_termination, 0);
            continue;
        }
        assert_eq!(sim.take_log(), s(&["spawn side", "hook side PostStart"]), "post_start, no probes");
        assert_eq!(sim.pod.status()[0].restarts_in_termination, 1);
        assert_eq!(sim.pod.status()[0].restarts, 1, "counted among its restarts too");
        sim.hook("side", HookKind::PostStart, true);
        sim.advance(Duration::from_secs(1));
        sim.exit("m", Exit::Signal(TERM));
        assert_eq!(sim.take_log(), s(&["stop side"]), "no second pre_stop: its stop signal at its turn");
        assert_eq!(sim.fx.sent.last().map(|(_, sig)| sig.number()), Some(Signal::USR1.number()));
        // The budget (7 s from T0) has 5 s left: SIGKILL when it is spent.
        assert_eq!(sim.fx.timers.get(&Timer::Stop(0, 2)).copied(), Some(sim.t0 + Duration::from_secs(7)));
        sim.exit("side", Exit::Code(0));
        assert_eq!(sim.fx.exit, Some(128 + TERM));
    }
}

/// A copy started during termination whose post_start fails is stopped at
/// once, as a failed post_start stops any instance (kubernetes.io "Container
/// Lifecycle Hooks"), not at its turn.
#[test]
fn restart_during_termination_a_failed_post_start_stops_the_copy_at_once() {
    let mut side = entry("side", Role::Sidecar);
    side.restart_during_termination = true;
    side.post_start = Some(HookSpec::Sleep(Duration::from_millis(10)));
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.hook("side", HookKind::PostStart, true);
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.exit("side", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["stop m", "spawn side", "hook side PostStart"]));
    sim.hook("side", HookKind::PostStart, false);
    assert_eq!(sim.take_log(), s(&["stop side"]), "stopped while the main still runs");
}

/// A `restart_all` rule never restarts the pod once it terminates (KEP-4438,
/// "Pod termination and In-Place Pod Restart interaction").
#[test]
fn restart_all_never_starts_during_termination() {
    for flag in [true, false] {
        let mut side = entry("side", Role::Sidecar);
        side.restart_during_termination = flag;
        side.restart_rules = vec![crate::spec::RestartRule {
            action: RuleAction::RestartAll,
            operator: crate::spec::Operator::In,
            values: vec![88],
        }];
        let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
        sim.take_log();
        sim.event(Event::Terminate { signal: Signal::TERM });
        sim.take_log();
        sim.exit("side", Exit::Code(88));
        let log = sim.take_log();
        assert!(!log.iter().any(|l| l == "kill m"), "no pod restart: {log:?}");
        assert_eq!(sim.pod.pod_restarts(), 0);
        assert_eq!(log.contains(&"spawn side".to_owned()), flag, "{log:?}");
    }
}

/// KEP-5532: a `restart_all` rule kills everything at once (no pre_stop, no
/// grace), then, after the pod's backoff, runs the start sequence again from
/// the first init; the pod's restart count goes up.
#[test]
fn restart_all_reruns_the_pod_from_its_first_init_with_backoff_between() {
    let mut side = entry("side", Role::Sidecar);
    side.restart_rules = vec![crate::spec::RestartRule {
        action: RuleAction::RestartAll,
        operator: crate::spec::Operator::In,
        values: vec![88],
    }];
    let mut m = entry("m", Role::Main);
    m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(5)));
    let mut sim = Sim::new(pod(vec![entry("i", Role::Init), side, m]));
    sim.exit("i", Exit::Code(0));
    assert!(sim.running("side") && sim.running("m"));
    sim.take_log();
    sim.exit("side", Exit::Code(88));
    assert_eq!(sim.take_log(), s(&["kill m"]), "killed at once, no pre_stop");
    sim.exit("m", Exit::Signal(KILL));
    assert_eq!(sim.take_log(), s(&["spawn i"]), "the first pod restart is immediate");
    assert_eq!(sim.pod.pod_restarts(), 1);
    sim.exit("i", Exit::Code(0));
    assert!(sim.running("side") && sim.running("m"), "then the whole sequence again");
    sim.take_log();
    sim.exit("side", Exit::Code(88));
    sim.exit("m", Exit::Signal(KILL));
    assert!(sim.take_log().ends_with(&s(&["kill m"])), "the second one waits out the pod's backoff");
    sim.advance(Duration::from_millis(999));
    assert!(!sim.running("i"));
    sim.advance(Duration::from_millis(1));
    assert!(sim.running("i"));
    assert_eq!(sim.pod.pod_restarts(), 2);
    // Another exit code of the sidecar only restarts the sidecar.
    sim.exit("i", Exit::Code(0));
    sim.take_log();
    sim.exit("side", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["spawn side"]));
}

/// The machine says what is worth saying as data: the runtime only logs it.
#[test]
fn notes_say_what_happened_with_their_fields() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    for _ in 0..3 {
        sim.probe("side", ProbeKind::Startup, false);
    }
    let failed = sim.fx.notes.iter().find(|n| n.event == "probe_failed").expect("a probe_failed note");
    assert_eq!(failed.text, "side startup probe failed 3 times (last: refused); stopping it");
    assert_eq!((failed.level, failed.entry, failed.probe), (Level::Warn, Some(0), Some(ProbeKind::Startup)));
    sim.exit("side", Exit::Signal(TERM));
    sim.exit("side", Exit::Code(1));
    let backoff = sim.fx.notes.iter().find(|n| n.event == "backoff").expect("a backoff note");
    assert_eq!(backoff.text, "restarting side in 1s");
    assert_eq!(backoff.delay, Some(Duration::from_secs(1)));
    let exited = sim.fx.notes.iter().find(|n| n.event == "exited").expect("an exited note");
    assert_eq!((exited.pid, exited.status), (Some(1), Some(128 + TERM)));
}

#[test]
fn rule7_readiness_failures_never_kill() {
    let mut m = entry("m", Role::Main);
    m.readiness_probe = Some(ProbeSpec { failure_threshold: 1, ..probe() });
    let mut sim = Sim::new(pod(vec![m]));
    sim.take_log();
    for _ in 0..10 {
        sim.probe("m", ProbeKind::Readiness, false);
    }
    assert!(sim.take_log().is_empty());
}

#[test]
fn rule8_readiness_thresholds_and_pod_readiness() {
    let mut side = entry("side", Role::Sidecar);
    side.readiness_probe = Some(ProbeSpec { success_threshold: 2, failure_threshold: 2, ..probe() });
    side.hold_until = HoldUntil::Started;
    let mut sim = Sim::new(pod(vec![entry("i", Role::Init), side, entry("m", Role::Main)]));
    sim.exit("i", Exit::Code(0));
    assert!(!sim.pod.is_ready());
    sim.probe("side", ProbeKind::Readiness, true);
    assert!(!sim.pod.is_ready());
    sim.probe("side", ProbeKind::Readiness, true);
    assert!(sim.pod.is_ready(), "init entries do not count");
    sim.probe("side", ProbeKind::Readiness, false);
    assert!(sim.pod.is_ready());
    sim.probe("side", ProbeKind::Readiness, false);
    assert!(!sim.pod.is_ready());
    sim.probe("side", ProbeKind::Readiness, true);
    sim.probe("side", ProbeKind::Readiness, true);
    assert!(sim.pod.is_ready());
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert!(!sim.pod.is_ready(), "not ready from the moment termination begins");
}

// ----- Termination (rules 9-13) -----

#[test]
fn rule9_completion_all_waits_for_every_main_any_for_the_first() {
    let entries = || vec![entry("side", Role::Sidecar), entry("m1", Role::Main), entry("m2", Role::Main)];
    let mut sim = Sim::new(pod(entries()));
    sim.take_log();
    sim.exit("m1", Exit::Code(0));
    assert!(sim.take_log().is_empty());
    sim.exit("m2", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop side"]));

    let mut spec = pod(entries());
    spec.completion = Completion::Any;
    let mut sim = Sim::new(spec);
    sim.take_log();
    sim.exit("m1", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop m2"]));
}

#[test]
fn rule9_nothing_restarts_once_termination_begins() {
    let mut spec = pod(vec![entry("s1", Role::Sidecar), entry("s2", Role::Sidecar), entry("m", Role::Main)]);
    spec.restart_policy = RestartPolicy::Always;
    let mut sim = Sim::new(spec);
    sim.exit("s1", Exit::Code(1)); // immediate restart
    sim.exit("s1", Exit::Code(1)); // now in backoff
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.exit("m", Exit::Code(0));
    sim.exit("s2", Exit::Code(0));
    sim.advance(Duration::from_secs(100));
    assert!(!sim.fx.log.iter().any(|l| l.starts_with("spawn")), "{:?}", sim.fx.log);
    assert_eq!(sim.fx.exit, Some(0));
}

#[test]
fn rule9_startup_and_liveness_probes_stop_at_termination() {
    let mut m = entry("m", Role::Main);
    m.liveness_probe = Some(ProbeSpec { failure_threshold: 1, ..probe() });
    m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(5)));
    let mut sim = Sim::new(pod(vec![m]));
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.take_log();
    sim.probe("m", ProbeKind::Liveness, false);
    assert!(sim.take_log().is_empty(), "a liveness failure during termination kills nothing");
}

#[test]
fn rule10_mains_first_then_sidecars_one_at_a_time_in_reverse() {
    let mut sim = Sim::new(pod(vec![
        entry("s1", Role::Sidecar),
        entry("s2", Role::Sidecar),
        entry("s3", Role::Sidecar),
        entry("m1", Role::Main),
        entry("m2", Role::Main),
    ]));
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop m1", "stop m2"]));
    sim.exit("m1", Exit::Code(0));
    assert!(sim.take_log().is_empty());
    sim.exit("m2", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop s3"]));
    sim.exit("s3", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop s2"]));
    sim.exit("s2", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop s1"]));
    sim.exit("s1", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["exit 0"]));
}

#[test]
fn rule10_all_pre_stop_hooks_start_together_and_signals_wait_for_them() {
    let mut s1 = entry("s1", Role::Sidecar);
    s1.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut m = entry("m", Role::Main);
    m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![s1, m]));
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["hook s1 PreStop", "hook m PreStop"]));
    sim.hook("s1", HookKind::PreStop, true);
    assert!(sim.take_log().is_empty(), "the sidecar's signal still waits for the main");
    sim.hook("m", HookKind::PreStop, true);
    assert_eq!(sim.take_log(), s(&["stop m"]));
    sim.exit("m", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop s1"]));
}

#[test]
fn rule10_sidecars_wait_for_a_running_init() {
    let mut sim =
        Sim::new(pod(vec![entry("side", Role::Sidecar), entry("init", Role::Init), entry("m", Role::Main)]));
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop init"]));
    sim.exit("init", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["stop side"]));
    sim.exit("side", Exit::Signal(TERM));
    assert_eq!(sim.fx.exit, Some(128 + TERM), "terminated by a signal before any main ran");
}

#[test]
fn rule10_entries_not_running_are_not_waited_for() {
    let mut s1 = entry("s1", Role::Sidecar);
    s1.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![entry("s0", Role::Sidecar), s1, entry("m", Role::Main)]));
    sim.exit("s0", Exit::Code(1));
    sim.exit("s0", Exit::Code(1)); // s0 in backoff
    sim.take_log();
    // s1 never passed its startup probe: stopped at once, nothing waits for it.
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop s1"]));
    sim.exit("s1", Exit::Signal(TERM));
    assert_eq!(sim.fx.exit, Some(143));
    assert!(sim.elapsed() < Duration::from_secs(1));
}

#[test]
fn rule11_one_budget_with_two_second_floor_and_sigkill() {
    let mut spec = pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]);
    spec.termination_grace_period = Duration::from_secs(5);
    let mut sim = Sim::new(spec);
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop m"]));
    sim.advance(Duration::from_secs(4));
    sim.exit("m", Exit::Code(0));
    assert_eq!(sim.take_log(), s(&["stop side"]));
    // 1 s of budget is left, but the stop signal gets at least 2 s.
    sim.advance(Duration::from_millis(1999));
    assert!(sim.take_log().is_empty());
    sim.advance(Duration::from_millis(1));
    assert_eq!(sim.take_log(), s(&["kill side"]));
    sim.exit("side", Exit::Signal(KILL));
    assert_eq!(sim.fx.exit, Some(0), "a sidecar's status during termination does not count");
}

#[test]
fn rule11_spent_budget_signals_everyone_waiting_then_kills_two_seconds_later() {
    let mut s1 = entry("s1", Role::Sidecar);
    s1.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(100)));
    let mut spec = pod(vec![s1, entry("s2", Role::Sidecar), entry("m", Role::Main)]);
    spec.termination_grace_period = Duration::from_secs(3);
    let mut sim = Sim::new(spec);
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["hook s1 PreStop", "stop m"]));
    sim.advance(Duration::from_secs(3));
    // m: signalled at 0, SIGKILL at the deadline; s1 (in its hook) and s2 (waiting): signalled now.
    assert_eq!(sim.take_log(), s(&["kill m", "stop s1", "stop s2"]));
    sim.advance(Duration::from_secs(2));
    assert_eq!(sim.take_log(), s(&["kill s1", "kill s2"]));
}

#[test]
fn rule12_second_sigint_spends_the_budget_repeated_sigterm_changes_nothing() {
    let mut spec = pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]);
    spec.termination_grace_period = Duration::from_secs(30);
    let mut sim = Sim::new(spec.clone());
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.advance(Duration::from_millis(200));
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop m"]), "no second stop signal");
    sim.advance(Duration::from_secs(29));
    assert!(sim.take_log().is_empty(), "grace not cut");

    let mut sim = Sim::new(spec);
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::INT });
    sim.advance(Duration::from_millis(500));
    sim.event(Event::Terminate { signal: Signal::INT });
    assert_eq!(sim.take_log(), s(&["stop m", "stop side"]));
    sim.advance(Duration::from_millis(1500));
    assert_eq!(sim.take_log(), s(&["kill m"]), "m's 2 s floor counts from its own signal");
    sim.advance(Duration::from_millis(500));
    assert_eq!(sim.take_log(), s(&["kill side"]));
}

/// A *second* SIGINT spends the budget: a SIGTERM then one SIGINT changes
/// nothing; a SIGINT after that is the second one (docs/signals.md).
#[test]
fn rule12_a_first_sigint_after_sigterm_is_not_a_second_sigint() {
    let mut spec = pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]);
    spec.termination_grace_period = Duration::from_secs(30);
    let mut sim = Sim::new(spec);
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.advance(Duration::from_millis(300));
    sim.event(Event::Terminate { signal: Signal::INT });
    assert_eq!(sim.take_log(), s(&["stop m"]), "one SIGINT: the budget is not spent");
    sim.advance(Duration::from_secs(5));
    assert!(sim.take_log().is_empty(), "grace not cut: no SIGKILL at the 2 s floor");
    sim.event(Event::Terminate { signal: Signal::INT });
    assert_eq!(sim.take_log(), s(&["stop side"]), "the second SIGINT spends it");
    sim.advance(Duration::from_millis(1));
    assert_eq!(sim.take_log(), s(&["kill m"]), "m is past its 2 s floor: SIGKILL now");
}

/// The command given after `--` is stopped with the signal podinit received,
/// as tini and dumb-init forward it; any other entry with its stop_signal.
#[test]
fn the_command_line_main_gets_the_signal_podinit_received() {
    for received in [Signal::INT, Signal::TERM] {
        let mut cli = entry("main", Role::Main);
        cli.stop_with_received_signal = true;
        let mut other = entry("other", Role::Main);
        other.stop_signal = Signal::QUIT;
        let mut sim = Sim::new(pod(vec![other, cli]));
        sim.take_log();
        sim.event(Event::Terminate { signal: received });
        let sent: Vec<(String, i32)> = sim.fx.sent.iter().map(|(n, sig)| (n.clone(), sig.number())).collect();
        assert_eq!(
            sent,
            [("other".to_owned(), Signal::QUIT.number()), ("main".to_owned(), received.number())],
            "received {received}"
        );
    }
    // Outside termination (a failed liveness probe), its own stop signal.
    let mut cli = entry("main", Role::Main);
    cli.stop_with_received_signal = true;
    cli.liveness_probe = Some(probe());
    let mut spec = pod(vec![cli]);
    spec.restart_policy = RestartPolicy::Always;
    let mut sim = Sim::new(spec);
    for _ in 0..3 {
        sim.probe("main", ProbeKind::Liveness, false);
    }
    assert_eq!(sim.fx.sent.iter().map(|(_, sig)| sig.number()).collect::<Vec<_>>(), [TERM]);
}

/// `podinit status` learns where a stop stands: which time it draws on, and
/// when SIGKILL comes at the latest.
#[test]
fn a_stop_says_its_grace_and_when_sigkill_comes() {
    let mut side = entry("side", Role::Sidecar);
    side.liveness_probe =
        Some(ProbeSpec { termination_grace_period: Some(Duration::from_secs(4)), ..probe() });
    let mut m = entry("m", Role::Main);
    m.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(3)));
    let mut sim = Sim::new(pod(vec![side, m]));
    sim.hook("m", HookKind::PostStart, true);
    assert!(sim.pod.status().iter().all(|e| e.stop.is_none()));
    assert_eq!(sim.pod.termination_deadline(), None);
    for _ in 0..3 {
        sim.probe("side", ProbeKind::Liveness, false);
    }
    let stop = sim.pod.status()[0].stop.expect("side is stopping");
    assert_eq!(stop.grace, StopGrace::Own);
    assert_eq!(stop.signalled_at, Some(sim.now));
    assert_eq!(stop.kill_by, sim.now + Duration::from_secs(4), "the probe's own grace");
    sim.exit("side", Exit::Signal(TERM));
    sim.take_log();
    sim.advance(Duration::from_secs(1));
    sim.event(Event::Terminate { signal: Signal::TERM });
    let t0 = sim.now;
    assert_eq!(sim.pod.termination_deadline(), Some(t0 + Duration::from_secs(7)));
    let status = sim.pod.status();
    let m = status[1].stop.expect("m is stopping");
    assert_eq!((m.grace, m.in_pre_stop, m.signalled_at), (StopGrace::Termination, true, None));
    assert_eq!(m.kill_by, t0 + Duration::from_secs(9), "the budget, then the 2 s floor at the latest");
}

#[test]
fn stop_signal_is_followed_by_sigcont_once() {
    let mut p = Pod::new(pod(vec![entry("m", Role::Main)]));
    let now = Instant::now();
    p.start(now);
    p.handle(Event::Spawned { entry: 0, instance: 1, pid: 7 }, now);
    let a = p.handle(Event::Terminate { signal: Signal::TERM }, now);
    let signals: Vec<i32> = a
        .iter()
        .filter_map(|a| if let Action::Signal { signal, .. } = a { Some(signal.number()) } else { None })
        .collect();
    assert_eq!(signals, [TERM, Signal::CONT.number()]);
}

/// The supervisor hands a spawn's result back as a queued event, so a SIGTERM
/// queued before it is handled while the spawn is still unanswered.
#[test]
fn termination_while_a_spawn_is_unanswered_waits_for_it_then_stops_it() {
    let mut p = Pod::new(pod(vec![entry("m", Role::Main)]));
    let now = Instant::now();
    assert_eq!(p.start(now), vec![Action::Spawn { entry: 0, instance: 1 }]);
    let a = p.handle(Event::Terminate { signal: Signal::TERM }, now);
    assert!(!a.iter().any(|a| matches!(a, Action::Exit { .. })), "exit while a process may run: {a:?}");
    let a = p.handle(Event::Spawned { entry: 0, instance: 1, pid: 7 }, now);
    assert!(a.contains(&Action::Signal { entry: 0, pid: 7, signal: Signal::TERM }), "{a:?}");
    let a = p.handle(Event::Exited { entry: 0, instance: 1, exit: Exit::Signal(TERM) }, now);
    assert!(a.contains(&Action::Exit { status: 128 + TERM }), "{a:?}");
}

#[test]
fn termination_while_a_spawn_is_unanswered_ends_when_it_fails() {
    let mut p = Pod::new(pod(vec![entry("m", Role::Main)]));
    let now = Instant::now();
    p.start(now);
    p.handle(Event::Terminate { signal: Signal::TERM }, now);
    let a = p.handle(Event::SpawnFailed { entry: 0, instance: 1, status: 127 }, now);
    assert_eq!(a.last(), Some(&Action::Exit { status: 127 }), "{a:?}");
}

#[test]
fn rule12_signals_are_forwarded_to_mains_only() {
    let mut sim =
        Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m1", Role::Main), entry("m2", Role::Main)]));
    sim.take_log();
    sim.event(Event::Forward { signal: Signal::HUP });
    assert_eq!(sim.take_log(), s(&["stop m1", "stop m2"]));
}

// ----- Exit status -----

#[test]
fn exit_status_first_failing_main_in_file_order() {
    let mut sim =
        Sim::new(pod(vec![entry("m1", Role::Main), entry("m2", Role::Main), entry("m3", Role::Main)]));
    sim.exit("m3", Exit::Code(5));
    sim.exit("m2", Exit::Signal(KILL));
    sim.exit("m1", Exit::Code(0));
    assert_eq!(sim.fx.exit, Some(137));
}

#[test]
fn exit_status_spawn_failure_is_127_or_126() {
    let mut spec = pod(vec![entry("m", Role::Main)]);
    spec.entries[0].argv = Argv::program_only("/nonexistent".into());
    let now = Instant::now();
    let mut p = Pod::new(spec);
    let a = p.start(now);
    assert_eq!(a, vec![Action::Spawn { entry: 0, instance: 1 }]);
    let a = p.handle(Event::SpawnFailed { entry: 0, instance: 1, status: 127 }, now);
    assert!(a.contains(&Action::Exit { status: 127 }), "{a:?}");
}

#[test]
fn stale_events_are_ignored() {
    let mut sim = Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]));
    let side = sim.id("side");
    sim.exit("side", Exit::Code(1));
    sim.take_log();
    // An old instance's probe result and exit change nothing.
    sim.event(Event::Probe { entry: side, instance: 1, kind: ProbeKind::Liveness, ok: false, why: None });
    sim.event(Event::Exited { entry: side, instance: 1, exit: Exit::Code(1) });
    sim.event(Event::Timer(Timer::Stop(side, 1)));
    assert!(sim.take_log().is_empty());
}

// ----- Requests from the command line (docs/control.md) -----

impl Sim {
    fn control(&mut self, request: Control) -> Result<(), String> {
        let result = self.driver.control(&mut self.pod, &mut self.fx, request, self.now);
        self.driver.run_queue(&mut self.pod, &mut self.fx, self.now);
        result
    }

    fn restarts(&self, name: &str) -> u32 {
        self.pod.status()[self.id(name)].restarts
    }
}

#[test]
fn restart_request_takes_the_stop_path_then_starts_at_once_without_backoff() {
    let mut side = entry("side", Role::Sidecar);
    side.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.take_log();
    let side = sim.id("side");
    assert_eq!(sim.control(Control::Restart(side)), Ok(()));
    assert_eq!(sim.take_log(), s(&["hook side PreStop"]), "pre_stop first, the main untouched");
    sim.hook("side", HookKind::PreStop, true);
    assert_eq!(sim.take_log(), s(&["stop side"]));
    sim.exit("side", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["spawn side"]), "at once: no backoff");
    assert_eq!(sim.restarts("side"), 1);
    assert!(sim.running("m"));
    assert_eq!(sim.control(Control::Restart(side)), Ok(()));
    sim.hook("side", HookKind::PreStop, true);
    sim.exit("side", Exit::Code(0));
    assert!(sim.running("side"), "a second restart asked for is at once too");
    assert_eq!(sim.restarts("side"), 2);
}

#[test]
fn stopped_sidecar_stays_down_until_start_and_holds_nothing() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![side, entry("later", Role::Sidecar), entry("m", Role::Main)]));
    let side = sim.id("side");
    sim.take_log();
    // Still starting (its startup probe has not passed): stopping it lets the
    // sequence go on.
    assert_eq!(sim.control(Control::Stop(side)), Ok(()));
    assert_eq!(sim.take_log(), s(&["stop side"]));
    sim.exit("side", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["spawn later", "spawn m"]));
    assert!(sim.pod.status()[side].held);
    assert!(!sim.pod.is_ready(), "a stopped sidecar is not ready");
    sim.advance(Duration::from_secs(60));
    assert!(!sim.running("side"), "no restart, no backoff");
    assert!(sim.control(Control::Stop(side)).unwrap_err().contains("stopped already"));
    assert_eq!(sim.control(Control::Start(side)), Ok(()));
    assert!(sim.running("side"));
    assert!(sim.control(Control::Start(side)).unwrap_err().contains("is not stopped"));
}

#[test]
fn stopped_main_counts_as_ended_and_the_pod_completes_with_its_status() {
    let mut sim = Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]));
    let m = sim.id("m");
    sim.take_log();
    assert_eq!(sim.control(Control::Stop(m)), Ok(()));
    sim.exit("m", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["stop m", "stop side"]));
    sim.exit("side", Exit::Code(0));
    assert_eq!(sim.fx.exit, Some(128 + TERM));
}

#[test]
fn stopped_main_under_completion_all_can_be_started_again() {
    let mut spec = pod(vec![entry("m1", Role::Main), entry("m2", Role::Main)]);
    spec.restart_policy = RestartPolicy::Always;
    let mut sim = Sim::new(spec);
    let m1 = sim.id("m1");
    assert_eq!(sim.control(Control::Stop(m1)), Ok(()));
    sim.exit("m1", Exit::Code(0));
    sim.advance(Duration::from_secs(30));
    assert!(!sim.running("m1"), "Always does not restart a main stopped by request");
    assert_eq!(sim.control(Control::Start(m1)), Ok(()));
    assert!(sim.running("m1"));
    assert_eq!(sim.fx.exit, None);
}

#[test]
fn requests_are_refused_for_inits_before_their_turn_and_during_termination() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![entry("init", Role::Init), side, entry("m", Role::Main)]));
    let (init, side, m) = (sim.id("init"), sim.id("side"), sim.id("m"));
    assert!(sim.control(Control::Restart(init)).unwrap_err().contains("init task"));
    assert!(sim.control(Control::Stop(init)).unwrap_err().contains("init task"));
    assert!(sim.control(Control::Restart(side)).unwrap_err().contains("has not started yet"));
    assert!(sim.control(Control::Signal(m, Signal::HUP)).unwrap_err().contains("not running"));
    sim.exit("init", Exit::Code(0));
    sim.probe("side", ProbeKind::Startup, true);
    sim.take_log();
    assert_eq!(sim.control(Control::Signal(m, Signal::HUP)), Ok(()));
    assert_eq!(sim.take_log(), s(&["stop m"]), "the signal goes to the main's group");
    assert_eq!(sim.control(Control::Shutdown), Ok(()));
    for request in [
        Control::Restart(side),
        Control::Stop(m),
        Control::Start(m),
        Control::Signal(m, Signal::HUP),
        Control::Shutdown,
    ] {
        assert!(sim.control(request).unwrap_err().contains("termination has begun"), "{request:?}");
    }
}

#[test]
fn a_restart_asked_for_during_its_stop_becomes_the_terminations() {
    let mut side = entry("side", Role::Sidecar);
    side.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    let side = sim.id("side");
    assert_eq!(sim.control(Control::Restart(side)), Ok(()));
    assert!(sim.control(Control::Restart(side)).unwrap_err().contains("being stopped already"));
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.exit("m", Exit::Code(0));
    sim.hook("side", HookKind::PreStop, true);
    sim.exit("side", Exit::Code(0));
    assert!(!sim.running("side"), "no new instance once termination began");
    assert_eq!(sim.fx.exit, Some(0));
}

#[test]
fn restart_of_an_entry_in_backoff_starts_it_now() {
    let mut sim = Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]));
    let side = sim.id("side");
    sim.exit("side", Exit::Code(1)); // first restart at once
    sim.exit("side", Exit::Code(1)); // then backoff 1 s
    assert!(!sim.running("side"));
    assert_eq!(sim.control(Control::Restart(side)), Ok(()));
    assert!(sim.running("side"));
    assert!(!sim.fx.timers.contains_key(&Timer::Backoff(side)), "its backoff timer is cancelled");
}

// ----- podinit reload (docs/control.md, "Reload") -----

impl Sim {
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

#[test]
fn reload_restarts_changed_entries_with_their_new_settings_and_leaves_the_rest() {
    let mut side = entry("side", Role::Sidecar);
    side.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let spec = pod(vec![entry("init", Role::Init), side.clone(), entry("m", Role::Main)]);
    let mut sim = Sim::new(spec.clone());
    sim.exit("init", Exit::Code(0));
    sim.take_log();
    let mut new = spec.clone();
    new.entries[0] = with_argv(entry("init", Role::Init), "init-v2");
    new.entries[1] = with_argv(side, "side-v2");
    let said = sim.reload(new).unwrap();
    assert!(
        said.iter().any(|l| l.contains("init changed: it has finished and is not run again")),
        "{said:?}"
    );
    assert!(said.iter().any(|l| l.contains("side changed: restarting it")), "{said:?}");
    // The running instance stops through its own stop path (its pre_stop);
    // the new one gets the new settings. The main is not touched.
    assert_eq!(sim.take_log(), s(&["hook side PreStop"]));
    let side = sim.id("side");
    assert_eq!(
        sim.pod.spec().entries[side].argv,
        Argv::program_only(std::ffi::OsString::from("x")),
        "old settings until it exits"
    );
    sim.hook("side", HookKind::PreStop, true);
    sim.exit("side", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["stop side", "spawn side"]));
    assert_eq!(sim.pod.spec().entries[side].argv, Argv::program_only(std::ffi::OsString::from("side-v2")));
    assert!(sim.running("m"));
    assert_eq!(sim.reload(sim.pod.spec().clone()).unwrap(), s(&["nothing changed"]));
    assert!(sim.take_log().is_empty());
}

#[test]
fn reload_during_boot_gives_an_init_not_started_yet_its_new_settings() {
    let spec = pod(vec![entry("a", Role::Init), entry("b", Role::Init), entry("m", Role::Main)]);
    let mut sim = Sim::new(spec.clone());
    let mut new = spec;
    new.entries[1] = with_argv(entry("b", Role::Init), "b-v2");
    let said = sim.reload(new).unwrap();
    assert!(said.iter().any(|l| l.contains("b changed: it starts with its new settings")), "{said:?}");
    sim.exit("a", Exit::Code(0));
    assert_eq!(
        sim.pod.spec().entries[sim.id("b")].argv,
        Argv::program_only(std::ffi::OsString::from("b-v2"))
    );
    assert!(sim.running("b"));
}

#[test]
fn reload_starts_added_entries_and_stops_removed_ones_for_good() {
    let spec = pod(vec![entry("old", Role::Sidecar), entry("m", Role::Main)]);
    let mut sim = Sim::new(spec);
    sim.take_log();
    let new = pod(vec![
        entry("m", Role::Main),
        entry("new", Role::Sidecar),
        entry("m2", Role::Main),
        entry("late", Role::Init),
    ]);
    let said = sim.reload(new).unwrap();
    assert!(said.iter().any(|l| l == "late added: not run (the start sequence is over)"), "{said:?}");
    let log = sim.take_log();
    assert!(log.contains(&"stop old".to_string()) && log.contains(&"spawn new".to_string()), "{log:?}");
    assert!(log.contains(&"spawn m2".to_string()), "{log:?}");
    assert!(!log.contains(&"spawn late".to_string()), "{log:?}");
    sim.exit("old", Exit::Signal(TERM));
    sim.advance(Duration::from_secs(60));
    assert!(!sim.running("old"), "a removed entry is not restarted");
    assert!(sim.pod.entry_named("old").is_none(), "nor reachable by name");
    assert!(sim.pod.is_ready(), "and does not count for readiness");
    // The pod completes once the mains it has now have ended.
    sim.exit("m", Exit::Code(0));
    assert_eq!(sim.fx.exit, None);
    sim.exit("m2", Exit::Code(0));
    sim.exit("new", Exit::Signal(TERM));
    assert_eq!(sim.fx.exit, Some(0));
}

#[test]
fn a_removed_main_completes_nothing_under_completion_any() {
    let mut spec = pod(vec![entry("a", Role::Main), entry("b", Role::Main)]);
    spec.completion = Completion::Any;
    let mut sim = Sim::new(spec.clone());
    let mut new = spec;
    new.entries.remove(0);
    sim.reload(new).unwrap();
    sim.exit("a", Exit::Signal(TERM));
    assert!(sim.running("b"), "the pod goes on");
    assert_eq!(sim.fx.exit, None);
}

#[test]
fn reload_is_refused_whole_and_during_termination() {
    let spec = pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]);
    let mut sim = Sim::new(spec.clone());
    sim.take_log();
    let mut new = spec.clone();
    new.entries[0] = entry("side", Role::Main);
    new.entries.push(entry("extra", Role::Sidecar));
    let why = sim.reload(new).unwrap_err();
    assert!(why.contains("side changes from sidecar to main"), "{why}");
    assert!(sim.take_log().is_empty(), "nothing changed");
    assert!(sim.pod.entry_named("extra").is_none());
    sim.event(Event::Terminate { signal: Signal::TERM });
    let mut new = spec;
    new.entries.push(entry("extra", Role::Sidecar));
    assert!(sim.reload(new).unwrap_err().contains("termination has begun"));
}
