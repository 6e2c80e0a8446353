//! Why the start sequence waits (docs/lifecycle.md, "Why the pod waits"):
//! notes at 4, 8, 16, 32 s of waiting at one entry, then every minute,
//! naming what it waits for and the last probe failure; the timer ends
//! when the sequence moves past the entry, and a pod with nothing to wait
//! for never arms it.

use super::*;
use crate::{next_note, Said, WaitFor};

/// The waiting notes said so far: (entry, what, whole seconds waited, why).
fn waits(sim: &mut Sim) -> Vec<(String, &'static str, u64, Option<String>)> {
    let notes = std::mem::take(&mut sim.fx.notes);
    notes
        .into_iter()
        .filter_map(|n| match n.said {
            Said::Waiting { what, waited, why } => {
                let name = sim.pod.spec().entries[n.entry.unwrap()].name.clone();
                Some((name, what.as_str(), waited.as_secs(), why))
            }
            _ => None,
        })
        .collect()
}

fn has_wait_timer(sim: &Sim) -> bool {
    sim.fx.timers.keys().any(|t| matches!(t, Timer::Wait(_)))
}

#[test]
fn notes_come_after_4_8_16_32_s_then_every_minute() {
    let secs: Vec<u64> = std::iter::successors(Some(Duration::ZERO), |&d| Some(next_note(d)))
        .skip(1)
        .take(8)
        .map(|d| d.as_secs())
        .collect();
    assert_eq!(secs, [4, 8, 16, 32, 60, 120, 180, 240]);
}

#[test]
fn a_sidecar_not_ready_is_named_with_its_last_probe_failure_until_it_passes() {
    let mut side = entry("side", Role::Sidecar);
    side.readiness_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    assert!(has_wait_timer(&sim));
    sim.advance(Duration::from_secs(1));
    sim.probe("side", ProbeKind::Readiness, false);
    sim.advance(Duration::from_millis(2_999));
    assert_eq!(waits(&mut sim), [], "nothing is said before 4 s");
    sim.advance(Duration::from_millis(1));
    let refused = Some("refused".to_owned());
    assert_eq!(waits(&mut sim), [("side".into(), "readiness_probe", 4, refused.clone())]);
    sim.advance(Duration::from_secs(176));
    let said: Vec<u64> = waits(&mut sim).into_iter().map(|(_, _, s, _)| s).collect();
    assert_eq!(said, [8, 16, 32, 60, 120, 180]);
    // What `podinit status` shows: the same entry, reason and clock.
    let wait = sim.pod.waiting().unwrap();
    assert_eq!((wait.entry, wait.what, wait.last_failure), (0, WaitFor::ReadinessProbe, refused));
    assert_eq!(sim.now - wait.since, Duration::from_secs(180));

    sim.probe("side", ProbeKind::Readiness, true);
    assert!(sim.running("m"));
    assert!(!has_wait_timer(&sim), "the timer ends once the sequence has passed the entry");
    assert_eq!(sim.pod.waiting(), None);
    sim.advance(Duration::from_secs(600));
    assert_eq!(waits(&mut sim), []);
}

#[test]
fn an_init_still_running_is_waited_for_to_exit_and_the_next_entry_gets_its_own_clock() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![entry("migrate", Role::Init), side, entry("m", Role::Main)]));
    sim.advance(Duration::from_secs(25));
    let said: Vec<_> = waits(&mut sim).into_iter().map(|(n, w, s, _)| (n, w, s)).collect();
    assert_eq!(
        said,
        [("migrate".into(), "exit", 4), ("migrate".into(), "exit", 8), ("migrate".into(), "exit", 16)]
    );
    sim.exit("migrate", Exit::Code(0));
    assert!(!sim.fx.timers.contains_key(&Timer::Wait(0)));
    assert_eq!(sim.fx.timers.get(&Timer::Wait(1)), Some(&(sim.now + Duration::from_secs(4))));
    sim.advance(Duration::from_secs(4));
    assert_eq!(waits(&mut sim), [("side".into(), "startup_probe", 4, None)]);
}

#[test]
fn the_clock_runs_from_the_arrival_at_the_entry_through_post_start_then_its_startup_probe() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    side.post_start = Some(HookSpec::Sleep(Duration::from_secs(60)));
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.probe("side", ProbeKind::Startup, false);
    sim.advance(Duration::from_secs(4));
    assert_eq!(waits(&mut sim), [("side".into(), "post_start", 4, None)]);
    sim.hook("side", HookKind::PostStart, true);
    sim.advance(Duration::from_secs(4));
    let refused = Some("refused".to_owned());
    assert_eq!(waits(&mut sim), [("side".into(), "startup_probe", 8, refused)]);
    sim.probe("side", ProbeKind::Startup, true);
    assert!(sim.running("m"));
    assert!(!has_wait_timer(&sim));
}

#[test]
fn a_main_whose_post_start_holds_the_next_main_is_waited_for() {
    let mut m1 = entry("m1", Role::Main);
    m1.post_start = Some(HookSpec::Sleep(Duration::from_secs(60)));
    let mut sim = Sim::new(pod(vec![m1, entry("m2", Role::Main)]));
    sim.advance(Duration::from_secs(4));
    assert_eq!(waits(&mut sim), [("m1".into(), "post_start", 4, None)]);
    sim.hook("m1", HookKind::PostStart, true);
    assert!(sim.running("m2"));
    assert!(!has_wait_timer(&sim));
}

#[test]
fn a_pod_with_nothing_to_wait_for_never_arms_the_timer() {
    // A plain init's pod: one main. And a last main's post_start holds nothing.
    let mut last = entry("last", Role::Main);
    last.post_start = Some(HookSpec::Sleep(Duration::from_secs(60)));
    for spec in [pod(vec![entry("cmd", Role::Main)]), pod(vec![entry("m", Role::Main), last])] {
        let mut sim = Sim::new(spec);
        assert!(!has_wait_timer(&sim));
        sim.advance(Duration::from_secs(100));
        assert_eq!(waits(&mut sim), []);
        assert_eq!(sim.pod.waiting(), None);
    }
}

#[test]
fn termination_ends_the_wait() {
    let mut side = entry("side", Role::Sidecar);
    side.readiness_probe = Some(probe());
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.advance(Duration::from_secs(5));
    assert_eq!(waits(&mut sim).len(), 1);
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert!(!has_wait_timer(&sim));
    assert_eq!(sim.pod.waiting(), None);
    // A fire already on its way changes nothing.
    sim.event(Event::Timer(Timer::Wait(0)));
    assert_eq!(waits(&mut sim), []);
}

#[test]
fn a_sidecar_in_backoff_holds_the_sequence_and_says_so() {
    let mut side = entry("side", Role::Sidecar);
    side.startup_probe = Some(probe());
    let mut spec = pod(vec![side, entry("m", Role::Main)]);
    spec.backoff.initial = Duration::from_secs(30);
    spec.backoff.max = Duration::from_secs(30);
    let mut sim = Sim::new(spec);
    sim.exit("side", Exit::Code(1));
    sim.exit("side", Exit::Code(1)); // the first restart was immediate
    sim.advance(Duration::from_secs(4));
    assert_eq!(waits(&mut sim), [("side".into(), "backoff", 4, None)]);
}
