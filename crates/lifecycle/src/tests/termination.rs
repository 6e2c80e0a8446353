//! Termination and the exit status (docs/lifecycle.md rules 13-21,
//! docs/signals.md): its order, one budget with the 2 s floor, SIGINT twice,
//! the signal the command line's main gets, a spawn still unanswered.

use super::*;

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
    assert!(sim.fx.notes.iter().any(|n| n.event() == "deadline_exceeded"));
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

#[test]
fn rule12_signals_are_forwarded_to_mains_only() {
    let mut sim =
        Sim::new(pod(vec![entry("side", Role::Sidecar), entry("m1", Role::Main), entry("m2", Role::Main)]));
    sim.take_log();
    sim.event(Event::Forward { signal: Signal::HUP });
    assert_eq!(sim.take_log(), s(&["stop m1", "stop m2"]));
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
