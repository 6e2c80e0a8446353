//! Probes and hooks (docs/lifecycle.md rules 9-12): the startup probe gates
//! the others, liveness failures stop, readiness only reports; and the notes
//! they give.

use super::*;

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

/// The machine says what is worth saying as data: the runtime only logs it.
#[test]
fn notes_say_what_happened_with_their_fields() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    for _ in 0..3 {
        sim.probe("side", ProbeKind::Startup, false);
    }
    let failed = sim.fx.notes.iter().find(|n| n.event() == "probe_failed").expect("a probe_failed note");
    let text = |n: &Note| n.text(sim.pod.spec()).to_string();
    assert_eq!(text(failed), "side startup probe failed 3 times (last: refused); stopping it");
    assert_eq!(
        (failed.level(), failed.entry, failed.probe()),
        (Level::Warn, Some(0), Some(ProbeKind::Startup))
    );
    sim.exit("side", Exit::Signal(TERM));
    sim.exit("side", Exit::Code(1));
    let backoff = sim.fx.notes.iter().find(|n| n.event() == "backoff").expect("a backoff note");
    let text = |n: &Note| n.text(sim.pod.spec()).to_string();
    assert_eq!(text(backoff), "restarting side in 1s");
    assert_eq!(backoff.delay(), Some(Duration::from_secs(1)));
    let exited = sim.fx.notes.iter().find(|n| n.event() == "exited").expect("an exited note");
    assert_eq!((exited.pid(), exited.status()), (Some(1), Some(128 + TERM)));
}
