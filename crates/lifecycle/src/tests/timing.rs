//! When each entry first reached each point of its start, and the critical
//! chain (docs/control.md, "podinit status --timing").

use super::*;

fn at(sim: &Sim, t: Option<Instant>) -> Option<Duration> {
    t.map(|t| t - sim.t0)
}

fn secs(s: u64) -> Option<Duration> {
    Some(Duration::from_secs(s))
}

#[test]
fn times_are_the_first_of_each_point_and_the_chain_ends_at_the_last_main_ready() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut web = entry("web", Role::Main);
    web.readiness_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![entry("setup", Role::Init), side, web, entry("worker", Role::Main)]));
    assert_eq!(sim.pod.first_start(), Some(sim.t0));
    assert_eq!(sim.pod.critical_chain(), None);
    sim.advance(Duration::from_secs(1));
    sim.exit("setup", Exit::Code(0));
    sim.advance(Duration::from_secs(2));
    sim.probe("side", ProbeKind::Startup, true);
    assert_eq!(sim.pod.critical_chain(), None, "web is not ready yet");
    sim.advance(Duration::from_secs(1));
    sim.probe("web", ProbeKind::Readiness, true);

    let timing: Vec<_> = sim.pod.status().into_iter().map(|s| s.timing).collect();
    let [setup, side, web, worker] = timing[..] else { panic!("{timing:?}") };
    let row = |t: Timing| (at(&sim, t.asked), at(&sim, t.started), at(&sim, t.ready), at(&sim, t.passed));
    assert_eq!(row(setup), (secs(0), secs(0), None, secs(1)), "an init is never ready");
    assert_eq!(row(side), (secs(1), secs(3), secs(3), secs(3)));
    assert_eq!(row(web), (secs(3), secs(3), secs(4), secs(3)));
    assert_eq!(row(worker), (secs(3), secs(3), secs(3), secs(3)));
    assert_eq!(side.held(), secs(2));

    let chain = sim.pod.critical_chain().unwrap();
    assert_eq!(chain.ready - sim.t0, Duration::from_secs(4));
    let links: Vec<_> = chain
        .links
        .iter()
        .map(|l| (sim.pod.spec().entries[l.entry].name.as_str(), l.at - sim.t0, l.took))
        .collect();
    let d = Duration::from_secs;
    assert_eq!(links, [("setup", d(0), d(1)), ("side", d(1), d(2)), ("web", d(3), d(1))]);

    // A restart changes none of them: they are the first ones.
    sim.advance(Duration::from_secs(5));
    sim.exit("side", Exit::Code(1));
    sim.advance(Duration::from_secs(1));
    sim.probe("side", ProbeKind::Startup, true);
    assert_eq!(sim.restarts("side"), 1);
    assert_eq!(sim.pod.status()[1].timing, side);
    assert_eq!(sim.pod.critical_chain(), Some(chain));
}

#[test]
fn a_main_whose_post_start_holds_the_next_is_on_the_chain() {
    let mut first = entry("first", Role::Main);
    first.post_start = Some(HookSpec::Sleep(Duration::from_millis(10)));
    let mut sim = Sim::new(pod(vec![first, entry("second", Role::Main)]));
    sim.advance(Duration::from_secs(2));
    sim.hook("first", HookKind::PostStart, true);
    let chain = sim.pod.critical_chain().unwrap();
    let links: Vec<_> = chain.links.iter().map(|l| (l.entry, l.at - sim.t0, l.took)).collect();
    let d = Duration::from_secs;
    assert_eq!(links, [(0, d(0), d(2)), (1, d(2), d(0))]);
    assert_eq!(chain.ready - sim.t0, d(2));
}
