//! The start sequence (docs/lifecycle.md rules 1-5): one at a time in file
//! order, sidecars held until started (and ready), mains after, a main's
//! post_start holding the next.

use super::*;

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

/// What the pod waits for (a service manager's status line): the entry the
/// sequence waits at, then the first sidecar or main not ready; nothing once
/// the pod is ready or terminates.
#[test]
fn awaited_follows_the_sequence_then_readiness() {
    use crate::{Awaited, WaitFor};
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    side.readiness_probe = Some(probe());
    side.hold_until = HoldUntil::Started;
    let mut sim = Sim::new(pod(vec![entry("i", Role::Init), side, entry("m", Role::Main)]));
    let at = |sim: &Sim, name: &str, what| Some(Awaited { entry: sim.id(name), what });
    assert_eq!(sim.pod.awaited(), at(&sim, "i", WaitFor::Exit));
    sim.exit("i", Exit::Code(0));
    assert_eq!(sim.pod.awaited(), at(&sim, "side", WaitFor::StartupProbe));
    sim.probe("side", ProbeKind::Startup, true);
    assert!(sim.running("m"));
    assert_eq!(sim.pod.awaited(), at(&sim, "side", WaitFor::ReadinessProbe));
    assert!(!sim.pod.is_ready());
    sim.probe("side", ProbeKind::Readiness, true);
    assert_eq!(sim.pod.awaited(), None);
    assert!(sim.pod.is_ready());
    sim.exit("m", Exit::Code(1));
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.pod.awaited(), None);
}
