//! Requests from the command line (docs/control.md): restart, stop, start,
//! signal and shutdown go through the same rules as any event.

use super::*;

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
