//! What follows an exit (docs/lifecycle.md rules 6-8, 7a, 7b, 17a, 22):
//! restart policies and rules, backoff, `max_restarts`, a restart of the
//! whole pod, a sidecar's copy during termination.

use super::*;

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
    assert!(sim.fx.notes.iter().any(|n| n.event() == "max_restarts" && n.status() == Some(7)));
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
