//! The entry machine as a table: every (state, event) pair of
//! `Pod::on_entry` is walked, with a representative of each state and each
//! event, and is either a rule (the state or the actions change) or ignored
//! with the reason written in [`IGNORED`] (nothing changes but a debug note).
//! A rule replaced by the ignore path, an ignored pair that starts doing
//! something, or a reason that changes, fails here. The lists of states and
//! events are checked complete through matches that stop compiling when a
//! variant is added. News about an earlier instance is ignored before the
//! states are looked at.

use std::num::NonZeroI32;

use super::*;
use crate::entry::{
    EntryEvent, EntryState, Live, Outcome, Stage, Starting, StateKind, Stop, StopCause, StopStep, Streak,
};
use crate::pod::Phase;
use crate::Said;
use EventKind as E;
use StateKind as K;

/// Every state of an entry, in the order `StateKind` declares them.
const ALL_STATES: [StateKind; 16] = [
    K::Waiting,
    K::Spawning,
    K::SpawningCopy,
    K::StartingHookAndProbe,
    K::StartingHook,
    K::StartingProbe,
    K::Started,
    K::StoppingPreStop,
    K::StoppingQueued,
    K::StoppingPostStart,
    K::StoppingSignalled,
    K::StoppingKilled,
    K::Backoff,
    K::Exited,
    K::Held,
    K::Removed,
];

/// The events an entry's machine takes, by kind (a probe's result and a
/// hook's result by probe and hook).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventKind {
    Spawned,
    SpawnFailed,
    Exited,
    Startup,
    Liveness,
    Readiness,
    PostStart,
    PreStop,
    StopTimer,
    BackoffOver,
    RunDue,
    RunDeadline,
}

/// Every kind of event, in the order `EventKind` declares them.
const ALL_EVENTS: [EventKind; 12] = [
    E::Spawned,
    E::SpawnFailed,
    E::Exited,
    E::Startup,
    E::Liveness,
    E::Readiness,
    E::PostStart,
    E::PreStop,
    E::StopTimer,
    E::BackoffOver,
    E::RunDue,
    E::RunDeadline,
];

const NO_SPAWN: &str = "no spawn is under way";
const NO_PROCESS: &str = "it has no process";
const NOT_IN_BACKOFF: &str = "it is not in backoff";
const NOT_STOPPING: &str = "it is not being stopped";
const POST_START_RETURNED: &str = "its post_start has returned";
const STARTUP_PASSED: &str = "its startup probe has passed";
const NO_PRE_STOP: &str = "its pre_stop is over or never ran";
const STOP_BEGUN: &str = "its stop has begun";
const NOT_STARTED: &str = "it has not started yet";
/// These states' representatives are in termination.
const NO_RUN_NOW: &str = "no run starts before the mains or once termination has begun";
const NO_PROCESS_EVENTS: &[EventKind] = &[
    E::Exited,
    E::Startup,
    E::Liveness,
    E::Readiness,
    E::PostStart,
    E::PreStop,
    E::StopTimer,
    E::RunDeadline,
];

/// The ignored pairs, and why: every pair not listed here is a rule.
const IGNORED: &[(StateKind, &[EventKind], &str)] = &[
    (K::Waiting, &[E::Spawned, E::SpawnFailed], NO_SPAWN),
    (K::Waiting, NO_PROCESS_EVENTS, NO_PROCESS),
    (K::Waiting, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::Waiting, &[E::RunDue], "the mains have not been reached"),
    (K::Spawning, NO_PROCESS_EVENTS, "its process does not run yet"),
    (K::Spawning, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::SpawningCopy, NO_PROCESS_EVENTS, "its process does not run yet"),
    (K::SpawningCopy, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::SpawningCopy, &[E::RunDue], "only a sidecar has a copy"),
    (K::StartingHookAndProbe, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StartingHookAndProbe, &[E::Liveness, E::Readiness], NOT_STARTED),
    (K::StartingHookAndProbe, &[E::PreStop, E::StopTimer], NOT_STOPPING),
    (K::StartingHookAndProbe, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StartingHook, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StartingHook, &[E::Startup], STARTUP_PASSED),
    (K::StartingHook, &[E::Liveness, E::Readiness], NOT_STARTED),
    (K::StartingHook, &[E::PreStop, E::StopTimer], NOT_STOPPING),
    (K::StartingHook, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StartingProbe, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StartingProbe, &[E::PostStart], POST_START_RETURNED),
    (K::StartingProbe, &[E::Liveness, E::Readiness], NOT_STARTED),
    (K::StartingProbe, &[E::PreStop, E::StopTimer], NOT_STOPPING),
    (K::StartingProbe, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::Started, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::Started, &[E::Startup], STARTUP_PASSED),
    (K::Started, &[E::PostStart], POST_START_RETURNED),
    (K::Started, &[E::PreStop, E::StopTimer], NOT_STOPPING),
    (K::Started, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StoppingPreStop, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StoppingPreStop, &[E::Startup, E::Liveness], STOP_BEGUN),
    (K::StoppingPreStop, &[E::PostStart], STOP_BEGUN),
    (K::StoppingPreStop, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StoppingPreStop, &[E::RunDeadline], STOP_BEGUN),
    (K::StoppingQueued, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StoppingQueued, &[E::Startup, E::Liveness], STOP_BEGUN),
    (K::StoppingQueued, &[E::PostStart], STOP_BEGUN),
    (K::StoppingQueued, &[E::PreStop], NO_PRE_STOP),
    (K::StoppingQueued, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StoppingQueued, &[E::RunDeadline], STOP_BEGUN),
    (K::StoppingQueued, &[E::RunDue], NO_RUN_NOW),
    (K::StoppingPostStart, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StoppingPostStart, &[E::Startup, E::Liveness], STOP_BEGUN),
    (K::StoppingPostStart, &[E::PreStop], NO_PRE_STOP),
    (K::StoppingPostStart, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StoppingPostStart, &[E::RunDeadline], STOP_BEGUN),
    (K::StoppingPostStart, &[E::RunDue], NO_RUN_NOW),
    (K::StoppingSignalled, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StoppingSignalled, &[E::Startup, E::Liveness], STOP_BEGUN),
    (K::StoppingSignalled, &[E::PostStart], STOP_BEGUN),
    (K::StoppingSignalled, &[E::PreStop], NO_PRE_STOP),
    (K::StoppingSignalled, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StoppingSignalled, &[E::RunDeadline], STOP_BEGUN),
    (K::StoppingKilled, &[E::Spawned, E::SpawnFailed], "its process runs already"),
    (K::StoppingKilled, &[E::Startup, E::Liveness], STOP_BEGUN),
    (K::StoppingKilled, &[E::PostStart], STOP_BEGUN),
    (K::StoppingKilled, &[E::PreStop], NO_PRE_STOP),
    (K::StoppingKilled, &[E::StopTimer], "SIGKILL has been sent already"),
    (K::StoppingKilled, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::StoppingKilled, &[E::RunDeadline], STOP_BEGUN),
    (K::Backoff, &[E::Spawned, E::SpawnFailed], NO_SPAWN),
    // A scheduled run between two tries: a run due and its deadline are rules.
    (
        K::Backoff,
        &[E::Exited, E::Startup, E::Liveness, E::Readiness, E::PostStart, E::PreStop, E::StopTimer],
        NO_PROCESS,
    ),
    (K::Exited, &[E::Spawned, E::SpawnFailed], NO_SPAWN),
    (K::Exited, NO_PROCESS_EVENTS, NO_PROCESS),
    (K::Exited, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::Held, &[E::Spawned, E::SpawnFailed], NO_SPAWN),
    (K::Held, NO_PROCESS_EVENTS, NO_PROCESS),
    (K::Held, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::Removed, &[E::Spawned, E::SpawnFailed], NO_SPAWN),
    (K::Removed, NO_PROCESS_EVENTS, NO_PROCESS),
    (K::Removed, &[E::BackoffOver], NOT_IN_BACKOFF),
    (K::Removed, &[E::RunDue], "it was removed by podinit reload"),
];

/// Why the table says `(state, event)` is ignored, if it does.
fn ignored(state: StateKind, event: EventKind) -> Option<&'static str> {
    let mut rows = IGNORED.iter().filter(|(s, events, _)| *s == state && events.contains(&event));
    let why = rows.next().map(|(_, _, why)| *why);
    assert!(rows.next().is_none(), "({state:?}, {event:?}) is in the table twice");
    why
}

/// The state after `state` in declaration order; a new state does not
/// compile here until it is given its place (and then must be in
/// `ALL_STATES`).
fn next_state(state: StateKind) -> Option<StateKind> {
    Some(match state {
        K::Waiting => K::Spawning,
        K::Spawning => K::SpawningCopy,
        K::SpawningCopy => K::StartingHookAndProbe,
        K::StartingHookAndProbe => K::StartingHook,
        K::StartingHook => K::StartingProbe,
        K::StartingProbe => K::Started,
        K::Started => K::StoppingPreStop,
        K::StoppingPreStop => K::StoppingQueued,
        K::StoppingQueued => K::StoppingPostStart,
        K::StoppingPostStart => K::StoppingSignalled,
        K::StoppingSignalled => K::StoppingKilled,
        K::StoppingKilled => K::Backoff,
        K::Backoff => K::Exited,
        K::Exited => K::Held,
        K::Held => K::Removed,
        K::Removed => return None,
    })
}

/// The event kind after `event` in declaration order (as `next_state`).
fn next_event(event: EventKind) -> Option<EventKind> {
    Some(match event {
        E::Spawned => E::SpawnFailed,
        E::SpawnFailed => E::Exited,
        E::Exited => E::Startup,
        E::Startup => E::Liveness,
        E::Liveness => E::Readiness,
        E::Readiness => E::PostStart,
        E::PostStart => E::PreStop,
        E::PreStop => E::StopTimer,
        E::StopTimer => E::BackoffOver,
        E::BackoffOver => E::RunDue,
        E::RunDue => E::RunDeadline,
        E::RunDeadline => return None,
    })
}

/// Which kind an event is; a new event does not compile here until it has
/// a kind.
fn kind_of(event: EntryEvent) -> EventKind {
    match event {
        EntryEvent::Spawned(_) => E::Spawned,
        EntryEvent::SpawnFailed(_) => E::SpawnFailed,
        EntryEvent::Exited(_) => E::Exited,
        EntryEvent::Probe(ProbeKind::Startup, _) => E::Startup,
        EntryEvent::Probe(ProbeKind::Liveness, _) => E::Liveness,
        EntryEvent::Probe(ProbeKind::Readiness, _) => E::Readiness,
        EntryEvent::Hook(HookKind::PostStart, _) => E::PostStart,
        EntryEvent::Hook(HookKind::PreStop, _) => E::PreStop,
        EntryEvent::StopTimer => E::StopTimer,
        EntryEvent::BackoffOver => E::BackoffOver,
        EntryEvent::RunDue(_) => E::RunDue,
        EntryEvent::RunDeadline => E::RunDeadline,
    }
}

/// The events of one kind that the walk plays: a result both ways.
fn events_of(kind: EventKind) -> Vec<EntryEvent> {
    let pid = NonZeroI32::new(4242).unwrap();
    match kind {
        E::Spawned => vec![EntryEvent::Spawned(pid)],
        E::SpawnFailed => vec![EntryEvent::SpawnFailed(127)],
        E::Exited => vec![EntryEvent::Exited(Exit::Code(0)), EntryEvent::Exited(Exit::Signal(TERM))],
        E::Startup => [true, false].map(|ok| EntryEvent::Probe(ProbeKind::Startup, ok)).to_vec(),
        E::Liveness => [true, false].map(|ok| EntryEvent::Probe(ProbeKind::Liveness, ok)).to_vec(),
        E::Readiness => [true, false].map(|ok| EntryEvent::Probe(ProbeKind::Readiness, ok)).to_vec(),
        E::PostStart => [true, false].map(|ok| EntryEvent::Hook(HookKind::PostStart, ok)).to_vec(),
        E::PreStop => [true, false].map(|ok| EntryEvent::Hook(HookKind::PreStop, ok)).to_vec(),
        E::StopTimer => vec![EntryEvent::StopTimer],
        E::BackoffOver => vec![EntryEvent::BackoffOver],
        E::RunDue => vec![EntryEvent::RunDue(Duration::ZERO), EntryEvent::RunDue(Duration::from_secs(3600))],
        E::RunDeadline => vec![EntryEvent::RunDeadline],
    }
}

/// A pod whose first entry (a sidecar with every probe and hook, that may
/// come back during termination; for the events only a scheduled entry
/// gets, a scheduled entry with hooks, `Replace` and a run deadline) is in a
/// state of kind `kind`, as the machine gets there, in the phase it gets
/// there in; the other is a main.
fn pod_in(kind: StateKind, event: EventKind, now: Instant) -> Pod {
    let mut side = entry("side", Role::Sidecar);
    if matches!(event, E::RunDue | E::RunDeadline) {
        side.role = Role::Scheduled;
        side.schedule = Some(crate::spec::ScheduleSpec {
            when: crate::spec::When::Every(Duration::from_secs(60)),
            time_zone: "UTC".into(),
            concurrency_policy: crate::spec::ConcurrencyPolicy::Replace,
            starting_deadline: None,
            suspend: false,
            run_on_start: false,
            active_deadline: Some(Duration::from_secs(30)),
            max_concurrent: None,
        });
    }
    side.startup_probe = Some(probe());
    side.liveness_probe = Some(probe());
    side.readiness_probe = Some(probe());
    side.post_start = Some(HookSpec::Sleep(Duration::from_secs(1)));
    side.pre_stop = Some(HookSpec::Sleep(Duration::from_secs(1)));
    side.restart_during_termination = side.role == Role::Sidecar;
    let scheduled = side.role == Role::Scheduled;
    let mut pod = Pod::new(pod(vec![side, entry("m", Role::Main)]));
    pod.start(now - Duration::from_secs(10));
    let spawned_at = now - Duration::from_secs(5);
    let pid = NonZeroI32::new(100).unwrap();
    let live = |stage| EntryState::Running(Live { pid, spawned_at, stage, next: None });
    let stopping = |cause, step| {
        let readiness = Streak::default();
        live(Stage::Stopping(Stop { cause, deadline: now, step, started: true, ready: true, readiness }))
    };
    let signalled = StopStep::Signalled { at: now - Duration::from_secs(1), kill_at: now };
    let killed = StopStep::Killed { signalled_at: now - Duration::from_secs(3), kill_at: now };
    let startup = Streak::default();
    let asked_at = now - Duration::from_secs(6);
    let terminating = Phase::Terminating { deadline: now + Duration::from_secs(3), spent: false };
    let booting = Phase::Booting { cursor: 0 };
    let running = Phase::Running { next_main: 0 };
    let (state, phase) = match kind {
        K::Waiting => (EntryState::Waiting, booting),
        K::Spawning => (EntryState::Spawning { asked_at }, booting),
        K::SpawningCopy => (EntryState::SpawningCopy { asked_at }, terminating),
        K::StartingHookAndProbe => (live(Stage::Starting(Starting::HookAndProbe { startup })), booting),
        K::StartingHook => (live(Stage::Starting(Starting::Hook)), booting),
        K::StartingProbe => (live(Stage::Starting(Starting::Probe { startup })), booting),
        K::Started => (live(Stage::started(true)), booting),
        K::StoppingPreStop => (stopping(StopCause::Failed, StopStep::PreStop), running),
        K::StoppingQueued => (stopping(StopCause::Termination, StopStep::Queued), terminating),
        K::StoppingPostStart => (stopping(StopCause::Termination, StopStep::PostStart), terminating),
        K::StoppingSignalled => (stopping(StopCause::Failed, signalled), running),
        K::StoppingKilled => (stopping(StopCause::Failed, killed), running),
        K::Backoff => (EntryState::Backoff { until: now }, running),
        K::Exited => (EntryState::Exited, running),
        K::Held => (EntryState::Held, running),
        K::Removed => (EntryState::Removed, running),
    };
    // A scheduled entry runs only once the mains are reached.
    let phase = if scheduled && phase == booting && kind != K::Waiting { running } else { phase };
    assert_eq!(state.kind(), kind, "the representative of {kind:?}");
    pod.entries[0].state = state;
    // A scheduled entry's first run, as the sidecar's first instance.
    pod.entries[0].instance = 1;
    pod.phase = phase;
    pod.out.clear();
    pod.take_notes();
    pod
}

#[test]
fn the_lists_of_states_and_events_are_complete() {
    let states: Vec<StateKind> = std::iter::successors(Some(K::Waiting), |&k| next_state(k)).collect();
    assert_eq!(states, ALL_STATES, "ALL_STATES lists every state once, in order");
    let events: Vec<EventKind> = std::iter::successors(Some(E::Spawned), |&k| next_event(k)).collect();
    assert_eq!(events, ALL_EVENTS, "ALL_EVENTS lists every kind of event once, in order");
    for kind in ALL_EVENTS {
        for event in events_of(kind) {
            assert_eq!(kind_of(event), kind, "{event:?}");
        }
    }
    // The table names only pairs the walk plays.
    for (state, events, why) in IGNORED {
        assert!(ALL_STATES.contains(state) && !events.is_empty(), "{state:?}: {why}");
    }
}

#[test]
fn every_state_event_pair_is_a_rule_or_ignored_for_its_written_reason() {
    let now = Instant::now() + Duration::from_secs(60);
    let mut failures = Vec::new();
    for state in ALL_STATES {
        for kind in ALL_EVENTS {
            for event in events_of(kind) {
                let mut pod = pod_in(state, kind, now);
                let (before, phase) = (pod.entries[0].state.clone(), pod.phase);
                let outcome = pod.on_entry(0, Some(1), event, now);
                let after = &pod.entries[0].state;
                let acted = *after != before || !pod.out.is_empty();
                let notes = pod.take_notes();
                let pair = format!("({state:?}, {event:?})");
                match (ignored(state, kind), outcome) {
                    (Some(want), Outcome::Ignored(why)) if why == want => {
                        if acted || pod.phase != phase {
                            failures.push(format!("{pair} is ignored but changed the pod: {:?}", pod.out));
                        }
                        let noted = notes.iter().any(|n| {
                            n.level() == Level::Debug
                                && matches!(n.said, Said::Ignored { why: w, .. } if w == why)
                        });
                        if !noted {
                            failures.push(format!("{pair} is ignored without a debug note: {notes:?}"));
                        }
                    }
                    (Some(want), Outcome::Ignored(why)) => {
                        failures
                            .push(format!("{pair} is ignored because \"{why}\", the table says \"{want}\""));
                    }
                    (Some(want), Outcome::Applied) => {
                        failures.push(format!("{pair} applies a rule, the table says ignored: \"{want}\""));
                    }
                    (None, Outcome::Ignored(why)) => {
                        failures.push(format!(
                            "{pair} is not in the table of ignored pairs, but ignored: \"{why}\""
                        ));
                    }
                    (None, Outcome::Applied) if !acted => {
                        failures
                            .push(format!("{pair} applies a rule that changes neither state nor actions"));
                    }
                    (None, Outcome::Applied) => {}
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} pairs differ from the table:\n{}", failures.len(), failures.join("\n"));
}

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
