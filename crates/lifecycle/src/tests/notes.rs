//! Every note the machine can give: its level, its `event` name, its fields
//! and its rendered sentence, written out in full. These lines are what
//! podinit's log and `podinit events` readers see (tests/output.rs and the
//! snapshots check some of them end to end), so a change here is a change
//! to podinit's output.

use std::num::NonZeroI32;

use super::*;
use crate::{EntryEvent, Said, StateKind, WaitFor};

/// (note, level, event, sentence).
fn every_note() -> Vec<(Note, Level, &'static str, &'static str)> {
    use Level::{Debug, Info, Warn};
    use Said as S;
    let web = |said| Note { entry: Some(0), said };
    let pod = |said| Note { entry: None, said };
    let why = Some("connection refused".to_owned());
    let second = Duration::from_secs(1);
    let probe_event = Event::Probe { entry: 0, instance: 2, kind: ProbeKind::Liveness, ok: false, why: None };
    vec![
        (web(S::Started { pid: 42 }), Info, "started", "web started (pid 42)"),
        (
            web(S::Exited { pid: 42, exit: Exit::Code(3) }),
            Info,
            "exited",
            "web (pid 42) exited with status 3",
        ),
        (
            web(S::Exited { pid: 42, exit: Exit::Signal(TERM) }),
            Info,
            "exited",
            "web (pid 42) exited with signal SIGTERM (status 143)",
        ),
        (web(S::StartupProbeSucceeded), Info, "startup_probe_succeeded", "web startup probe succeeded"),
        (web(S::Ready), Info, "ready", "web is ready"),
        (
            web(S::Unready { threshold: 3, why: why.clone() }),
            Warn,
            "unready",
            "web is not ready: readiness probe failed 3 times (last: connection refused)",
        ),
        (
            web(S::Unready { threshold: 1, why: None }),
            Warn,
            "unready",
            "web is not ready: readiness probe failed 1 times",
        ),
        (
            web(S::ProbeFailed { kind: ProbeKind::Liveness, threshold: 3, why: why.clone() }),
            Warn,
            "probe_failed",
            "web liveness probe failed 3 times (last: connection refused); stopping it",
        ),
        (
            web(S::ProbeFailed { kind: ProbeKind::Startup, threshold: 2, why: None }),
            Warn,
            "probe_failed",
            "web startup probe failed 2 times; stopping it",
        ),
        (
            web(S::PostStartFailed { copy: false }),
            Warn,
            "hook_failed",
            "web post_start hook failed; stopping it",
        ),
        (
            web(S::PostStartFailed { copy: true }),
            Warn,
            "hook_failed",
            "web post_start hook failed: stopping it",
        ),
        (web(S::PreStopFailed), Warn, "hook_failed", "web pre_stop hook failed (the stop goes on)"),
        (
            web(S::Backoff { delay: Duration::from_millis(2500) }),
            Info,
            "backoff",
            "restarting web in 2s 500ms",
        ),
        (web(S::Restarting), Info, "restarting", "restarting web"),
        (web(S::RestartingAsAsked), Info, "restarting", "restarting web at once, as asked"),
        (
            web(S::RestartingInTermination),
            Info,
            "restarting",
            "restarting web during termination (restart_during_termination)",
        ),
        (
            web(S::MaxRestarts { exit: Exit::Code(7), max: 2 }),
            Warn,
            "max_restarts",
            "web exited with status 7 after 2 restarts (max_restarts): the pod fails",
        ),
        (
            web(S::InitFailed { exit: Exit::Code(1) }),
            Warn,
            "init_failed",
            "init web failed with status 1; restart_policy is Never, so the pod fails",
        ),
        (
            web(S::RestartAll { exit: Exit::Code(9) }),
            Warn,
            "restart_all",
            "web exited with status 9: restart_all, restarting the whole pod",
        ),
        (pod(S::Completed), Info, "completed", "pod completed"),
        (pod(S::PodBackoff { delay: second }), Info, "backoff", "restarting the pod in 1s"),
        (
            pod(S::PodRestarting { restarts: 2 }),
            Info,
            "pod_restarting",
            "restarting the pod (restart 2 of the whole pod)",
        ),
        (
            web(S::Stopping { pid: 42, signal: Signal::TERM }),
            Info,
            "stopping",
            "stopping web (pid 42) with SIGTERM",
        ),
        (web(S::Killed { pid: 42 }), Warn, "killed", "web (pid 42) did not stop in time; sending SIGKILL"),
        (
            pod(S::Terminating { signal: Signal::INT }),
            Info,
            "terminating",
            "SIGINT received: terminating the pod",
        ),
        (pod(S::ShutdownRequested), Info, "terminating", "shutdown asked for: terminating the pod"),
        (
            pod(S::SignalDuringTermination { signal: Signal::TERM }),
            Info,
            "",
            "SIGTERM received during termination; nothing changes",
        ),
        (pod(S::SecondSigint), Warn, "budget_spent", "second SIGINT: stopping everything now"),
        (
            pod(S::BudgetSpent { grace: Duration::from_secs(7) }),
            Warn,
            "budget_spent",
            "termination_grace_period is spent: stopping every process left",
        ),
        (
            pod(S::DeadlineExceeded { deadline: Duration::from_secs(90) }),
            Warn,
            "deadline_exceeded",
            "active_deadline (1m 30s) has passed: terminating the pod",
        ),
        (
            web(S::RestartRequested { running: true }),
            Info,
            "restart_requested",
            "restart of web asked for: stopping it",
        ),
        (
            web(S::RestartRequested { running: false }),
            Info,
            "restart_requested",
            "restart of web asked for: starting it",
        ),
        (web(S::StartRequested), Info, "start_requested", "start of web asked for: starting it"),
        (
            web(S::StopRequested { running: true }),
            Info,
            "stop_requested",
            "stop of web asked for: stopping it until `podinit start web`",
        ),
        (
            web(S::StopRequested { running: false }),
            Info,
            "stop_requested",
            "web stopped while waiting out its backoff",
        ),
        (web(S::RunStopRequested), Info, "stop_requested", "stop of web asked for: stopping this run"),
        (
            web(S::SignalRequested { pid: 42, signal: Signal::HUP }),
            Info,
            "signal_requested",
            "sending SIGHUP to web (pid 42), as asked",
        ),
        (pod(S::Reloaded("web removed".into())), Info, "reloaded", "reload: web removed"),
        (
            web(S::Waiting {
                what: WaitFor::ReadinessProbe,
                waited: Duration::from_millis(5_004),
                why: why.clone(),
            }),
            Info,
            "waiting",
            "waiting 5s for web: readiness probe (last failure: connection refused)",
        ),
        (
            web(S::Waiting { what: WaitFor::StartupProbe, waited: Duration::from_secs(120), why: None }),
            Info,
            "waiting",
            "waiting 2m for web: startup probe",
        ),
        (
            web(S::Waiting { what: WaitFor::PostStart, waited: Duration::from_secs(10), why: None }),
            Info,
            "waiting",
            "waiting 10s for web: post_start hook",
        ),
        (
            web(S::Waiting { what: WaitFor::Exit, waited: Duration::from_secs(20), why: None }),
            Info,
            "waiting",
            "waiting 20s for web to exit",
        ),
        (
            web(S::Waiting { what: WaitFor::Backoff, waited: Duration::from_secs(40), why: None }),
            Info,
            "waiting",
            "waiting 40s for web: backoff before its restart",
        ),
        (
            web(S::LivenessRecovered { failures: 1 }),
            Debug,
            "",
            "web liveness probe passes again after 1 failure",
        ),
        (
            web(S::LivenessRecovered { failures: 2 }),
            Debug,
            "",
            "web liveness probe passes again after 2 failures",
        ),
        (
            web(S::ProbeAttemptFailed { kind: ProbeKind::Startup, failures: 1, threshold: 3 }),
            Debug,
            "",
            "web startup probe failed (1/3)",
        ),
        (web(S::PassedStartSequence), Debug, "", "web passed the start sequence"),
        (
            web(S::Ignored {
                event: EntryEvent::Probe(ProbeKind::Liveness, true),
                state: StateKind::StoppingSignalled,
                why: "its stop has begun",
            }),
            Debug,
            "",
            "Probe(Liveness, true) ignored while stopping (signalled): its stop has begun",
        ),
        (
            web(S::OldInstance { event: EntryEvent::Exited(Exit::Code(0)), instance: 1 }),
            Debug,
            "",
            "Exited(Code(0)) of an old instance (1) ignored",
        ),
        (
            web(S::OldInstance { event: EntryEvent::Spawned(NonZeroI32::new(7).unwrap()), instance: 3 }),
            Debug,
            "",
            "Spawned(7) of an old instance (3) ignored",
        ),
        (web(S::ImpossiblePid(-1)), Debug, "", "spawned with an impossible pid -1: ignored"),
        (
            web(S::RunStarted { late: Duration::ZERO }),
            Info,
            "scheduled_run_started",
            "scheduled run of web starting",
        ),
        (
            web(S::RunStarted { late: Duration::from_millis(90_500) }),
            Info,
            "scheduled_run_started",
            "scheduled run of web starting, 1m 30s late",
        ),
        (
            web(S::RunFinished { exit: Exit::Code(1), ran_for: Duration::from_millis(2_250) }),
            Info,
            "scheduled_run_finished",
            "scheduled run of web finished with status 1 after 2s 250ms",
        ),
        (
            web(S::RunSkipped { why: crate::SkipReason::StillRunning }),
            Info,
            "scheduled_run_skipped",
            "scheduled run of web skipped: the last run still runs (concurrency_policy Forbid)",
        ),
        (
            web(S::RunSkipped { why: crate::SkipReason::BeingStopped }),
            Info,
            "scheduled_run_skipped",
            "scheduled run of web skipped: the last run is being stopped",
        ),
        (
            web(S::RunSkipped {
                why: crate::SkipReason::Missed {
                    late: Duration::from_secs(120),
                    deadline: Duration::from_secs(60),
                },
            }),
            Info,
            "scheduled_run_skipped",
            "scheduled run of web skipped: 2m late, past its starting_deadline of 1m",
        ),
        (
            web(S::RunSkipped { why: crate::SkipReason::Held }),
            Info,
            "scheduled_run_skipped",
            "scheduled run of web skipped: held by `podinit stop` (`podinit start web` ends it)",
        ),
        (
            web(S::RunSkipped { why: crate::SkipReason::MaxConcurrent { max: 2 } }),
            Info,
            "scheduled_run_skipped",
            "scheduled run of web skipped: 2 runs already (max_concurrent)",
        ),
        (web(S::TriggerRequested), Info, "trigger_requested", "run of web asked for: starting it"),
        (
            web(S::SuspendRequested { suspend: true }),
            Info,
            "suspend_requested",
            "suspend of web asked for: no run starts until `podinit resume web`",
        ),
        (
            web(S::SuspendRequested { suspend: false }),
            Info,
            "resume_requested",
            "resume of web asked for: its schedule goes on",
        ),
        (
            web(S::RunReplaced),
            Info,
            "scheduled_run_replaced",
            "scheduled run of web due while the last one runs: replacing it (concurrency_policy Replace)",
        ),
        (
            web(S::RunDeadlineExceeded { deadline: Duration::from_secs(300) }),
            Warn,
            "scheduled_run_deadline_exceeded",
            "scheduled run of web has run its active_deadline (5m): stopping it",
        ),
        (
            web(S::RunMaxRestarts { exit: Exit::Code(3), max: 6 }),
            Warn,
            "scheduled_run_max_restarts",
            "scheduled run of web exited with status 3 after 6 restarts within it (max_restarts): the run has failed",
        ),
        (
            pod(S::EventAfterExit(probe_event)),
            Debug,
            "",
            "event after exit ignored: Probe { entry: 0, instance: 2, kind: Liveness, ok: false, why: None }",
        ),
    ]
}

#[test]
fn every_note_renders_its_sentence_with_its_level_and_event() {
    let spec = pod(vec![entry("web", Role::Main)]);
    for (note, level, event, text) in every_note() {
        assert_eq!(note.text(&spec).to_string(), text, "{note:?}");
        assert_eq!((note.level(), note.event()), (level, event), "{note:?}");
        // Only debug notes have no event name, and one info note: a signal
        // that changes nothing.
        let unnamed_info = matches!(note.said, Said::SignalDuringTermination { .. });
        assert_eq!(event.is_empty(), level == Level::Debug || unnamed_info, "{note:?}");
    }
}

/// The fields of the JSON line: each note carries exactly the ones it
/// carried when they were set one by one.
#[test]
fn every_note_carries_its_fields() {
    let notes = every_note();
    let fields = |event: &str| {
        notes
            .iter()
            .filter(|(_, _, e, _)| *e == event)
            .map(|(n, ..)| (n.pid(), n.status(), n.signal(), n.delay(), n.probe(), n.hook()))
            .collect::<Vec<_>>()
    };
    let none = (None, None, None, None, None, None);
    let sec = |s| Some(Duration::from_secs(s));
    assert_eq!(fields("started"), [(Some(42), None, None, None, None, None)]);
    assert_eq!(
        fields("exited"),
        [(Some(42), Some(3), None, None, None, None), (Some(42), Some(143), None, None, None, None)]
    );
    assert_eq!(fields("unready"), [(None, None, None, None, Some(ProbeKind::Readiness), None); 2]);
    assert_eq!(
        fields("probe_failed"),
        [
            (None, None, None, None, Some(ProbeKind::Liveness), None),
            (None, None, None, None, Some(ProbeKind::Startup), None)
        ]
    );
    assert_eq!(
        fields("hook_failed"),
        [
            (None, None, None, None, None, Some(HookKind::PostStart)),
            (None, None, None, None, None, Some(HookKind::PostStart)),
            (None, None, None, None, None, Some(HookKind::PreStop))
        ]
    );
    assert_eq!(
        fields("backoff"),
        [
            (None, None, None, Some(Duration::from_millis(2500)), None, None),
            (None, None, None, sec(1), None, None)
        ]
    );
    assert_eq!(fields("max_restarts"), [(None, Some(7), None, None, None, None)]);
    assert_eq!(fields("init_failed"), [(None, Some(1), None, None, None, None)]);
    assert_eq!(fields("restart_all"), [(None, Some(9), None, None, None, None)]);
    assert_eq!(fields("stopping"), [(Some(42), None, Some(Signal::TERM), None, None, None)]);
    assert_eq!(fields("killed"), [(Some(42), None, None, None, None, None)]);
    // A signal begins termination; `podinit shutdown` names none.
    assert_eq!(fields("terminating"), [(None, None, Some(Signal::INT), None, None, None), none]);
    // The budget's end names the grace; a second SIGINT names nothing.
    assert_eq!(fields("budget_spent"), [none, (None, None, None, sec(7), None, None)]);
    assert_eq!(fields("deadline_exceeded"), [(None, None, None, sec(90), None, None)]);
    assert_eq!(fields("signal_requested"), [(Some(42), None, Some(Signal::HUP), None, None, None)]);
    // The probe it waits for, if it waits for one; `for` and `waited_ms`.
    assert_eq!(
        fields("waiting"),
        [
            (None, None, None, None, Some(ProbeKind::Readiness), None),
            (None, None, None, None, Some(ProbeKind::Startup), None),
            none,
            none,
            none
        ]
    );
    let waiting: Vec<_> = notes
        .iter()
        .filter(|(_, _, e, _)| *e == "waiting")
        .map(|(n, ..)| (n.waiting_for().map(WaitFor::as_str), n.waited().map(|d| d.as_millis())))
        .collect();
    assert_eq!(
        waiting,
        [
            (Some("readiness_probe"), Some(5_004)),
            (Some("startup_probe"), Some(120_000)),
            (Some("post_start"), Some(10_000)),
            (Some("exit"), Some(20_000)),
            (Some("backoff"), Some(40_000))
        ]
    );
    assert!(notes
        .iter()
        .filter(|(_, _, e, _)| *e != "waiting")
        .all(|(n, ..)| n.waiting_for().is_none() && n.waited().is_none()));
    // A run's lateness, its status and how long it ran, its deadline.
    assert_eq!(
        fields("scheduled_run_started"),
        [
            (None, None, None, sec(0), None, None),
            (None, None, None, Some(Duration::from_millis(90_500)), None, None)
        ]
    );
    assert_eq!(
        fields("scheduled_run_finished"),
        [(None, Some(1), None, Some(Duration::from_millis(2_250)), None, None)]
    );
    assert_eq!(fields("scheduled_run_deadline_exceeded"), [(None, None, None, sec(300), None, None)]);
    let reasons: Vec<_> =
        notes.iter().filter(|(_, _, e, _)| *e == "scheduled_run_skipped").map(|(n, ..)| n.reason()).collect();
    assert_eq!(
        reasons,
        [
            Some("still_running"),
            Some("being_stopped"),
            Some("missed_starting_deadline"),
            Some("held"),
            Some("max_concurrent")
        ]
    );
    assert_eq!(fields("scheduled_run_max_restarts"), [(None, Some(3), None, None, None, None)]);
    assert!(notes
        .iter()
        .filter(|(_, _, e, _)| *e != "scheduled_run_skipped")
        .all(|(n, ..)| n.reason().is_none()));
    for event in [
        "startup_probe_succeeded",
        "ready",
        "restarting",
        "completed",
        "pod_restarting",
        "restart_requested",
        "start_requested",
        "stop_requested",
        "reloaded",
        "scheduled_run_skipped",
        "scheduled_run_replaced",
        "trigger_requested",
        "suspend_requested",
        "resume_requested",
        "",
    ] {
        assert!(fields(event).iter().all(|f| *f == none), "{event}");
    }
}

#[test]
fn counts_are_singular_for_one() {
    assert_eq!(crate::counted(1u32, "restart"), "1 restart");
    assert_eq!(crate::counted(0u32, "run"), "0 runs");
    assert_eq!(crate::counted(6u32, "restart"), "6 restarts");
    let spec = pod(vec![entry("web", Role::Main)]);
    let note = Note::entry(0, Said::MaxRestarts { exit: Exit::Code(1), max: 1 });
    assert_eq!(
        note.text(&spec).to_string(),
        "web exited with status 1 after 1 restart (max_restarts): the pod fails"
    );
}
