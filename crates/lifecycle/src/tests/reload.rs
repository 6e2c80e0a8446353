//! `podinit reload` (docs/control.md, "Reload"): changed entries restart
//! through their stop path, added ones start, removed ones stop for good.

use super::*;

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

/// An entry removed by `podinit reload` is stopped and never started again:
/// not by a `restart_all` that reruns the pod (KEP-5532), not as a copy
/// during termination (KEP-4438), not by a request.
#[test]
fn a_removed_entry_is_never_started_again() {
    let mut side = entry("side", Role::Sidecar);
    side.restart_rules = vec![crate::spec::RestartRule {
        action: RuleAction::RestartAll,
        operator: crate::spec::Operator::In,
        values: vec![88],
    }];
    let spec = pod(vec![side.clone(), entry("old", Role::Sidecar), entry("m", Role::Main)]);
    let mut sim = Sim::new(spec);
    let old = sim.id("old");
    sim.reload(pod(vec![side, entry("m", Role::Main)])).unwrap();
    sim.exit("old", Exit::Signal(TERM));
    sim.take_log();
    sim.exit("side", Exit::Code(88));
    sim.exit("m", Exit::Signal(KILL));
    assert_eq!(sim.take_log(), s(&["kill m", "spawn side", "spawn m"]), "the pod restarts without it");
    assert!(sim.pod.status()[old].removed);
    assert!(sim.control(Control::Restart(old)).unwrap_err().contains("removed"));
    assert!(sim.control(Control::Start(old)).unwrap_err().contains("removed"));
    assert!(!sim.running("old"));

    let mut side = entry("side", Role::Sidecar);
    side.restart_during_termination = true;
    side.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    let mut sim = Sim::new(pod(vec![side, entry("m", Role::Main)]));
    sim.reload(pod(vec![entry("m", Role::Main)])).unwrap();
    sim.take_log();
    sim.event(Event::Terminate { signal: Signal::TERM });
    sim.exit("side", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["stop m"]), "no copy of a removed sidecar");
}

/// A reload that removes an entry whose spawn has not been answered yet is
/// refused, as one that changes it is: removed then, its process would run
/// unwatched.
#[test]
fn reload_is_refused_while_a_removed_entry_is_being_started() {
    let spec = pod(vec![entry("side", Role::Sidecar), entry("m", Role::Main)]);
    let mut p = Pod::new(spec);
    let now = Instant::now();
    // Its first actions, but the timer of the notes on why the sequence
    // waits at side (tests/start.rs).
    let first: Vec<Action> = p
        .start(now)
        .into_iter()
        .filter(|a| !matches!(a, Action::ArmTimer { timer: Timer::Wait(_), .. }))
        .collect();
    assert_eq!(first, vec![Action::Spawn { entry: 0, instance: 1 }]);
    let (result, actions) = p.reload(pod(vec![entry("m", Role::Main)]), now);
    assert!(result.unwrap_err().contains("side is being started"));
    assert!(actions.is_empty());
    let a = p.handle(Event::Spawned { entry: 0, instance: 1, pid: 7 }, now);
    assert!(a.contains(&Action::Spawn { entry: 1, instance: 1 }), "{a:?}");
}
