//! The entry machine as a table: every (state, event) pair is a rule or
//! ignored with its reason, as written below; news about an earlier
//! instance is ignored before the states are looked at.

use super::*;

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
