//! Scheduled entries (docs/configuration.md, "Scheduled entries"; a CronJob's
//! rules, kubernetes.io "CronJob"): runs only once the mains are reached,
//! `concurrency_policy`, `starting_deadline`, `suspend`, `run_on_start`, a
//! run's `active_deadline`, termination during a run; a run never holds the
//! pod or fails it. Simulated time: the simulator arms an `every` from now.

use super::*;
use crate::spec::{ConcurrencyPolicy, ScheduleSpec, When};
use crate::{Said, SkipReason};

fn scheduled(name: &str, every: u64, policy: ConcurrencyPolicy) -> EntrySpec {
    let mut e = entry(name, Role::Scheduled);
    e.schedule = Some(ScheduleSpec {
        when: When::Every(Duration::from_secs(every)),
        time_zone: "UTC".into(),
        concurrency_policy: policy,
        starting_deadline: None,
        suspend: false,
        run_on_start: false,
        active_deadline: None,
        max_concurrent: None,
    });
    e
}

fn with(mut e: EntrySpec, f: impl FnOnce(&mut ScheduleSpec)) -> EntrySpec {
    f(e.schedule.as_mut().unwrap());
    e
}

fn skips(sim: &Sim) -> Vec<SkipReason> {
    sim.fx
        .notes
        .iter()
        .filter_map(|n| match n.said {
            Said::RunSkipped { why } => Some(why),
            _ => None,
        })
        .collect()
}

#[test]
fn runs_start_only_once_the_mains_are_reached() {
    let job = with(scheduled("job", 10, ConcurrencyPolicy::Forbid), |s| s.run_on_start = true);
    let mut sim = Sim::new(pod(vec![entry("setup", Role::Init), job, entry("app", Role::Main)]));
    assert_eq!(sim.take_log(), s(&["spawn setup"]));
    // However long the init runs, no run starts.
    sim.advance(Duration::from_secs(35));
    assert!(sim.take_log().is_empty());
    sim.exit("setup", Exit::Code(0));
    // The mains, then the run that run_on_start asks for.
    assert_eq!(sim.take_log(), s(&["spawn app", "spawn job"]));
    assert!(sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_started"));
    sim.exit("job", Exit::Code(0));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn forbid_skips_a_run_due_while_the_last_one_runs() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Forbid), entry("app", Role::Main)]));
    sim.take_log();
    assert!(sim.pod.is_ready(), "an idle scheduled entry holds no readiness");
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    sim.advance(Duration::from_secs(10));
    assert!(sim.take_log().is_empty(), "the overlapping run is skipped");
    assert_eq!(skips(&sim), [SkipReason::StillRunning]);
    assert_eq!(sim.pod.status()[sim.id("job")].runs.unwrap().skipped, 1);
    sim.exit("job", Exit::Code(0));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]), "the schedule goes on");
}

#[test]
fn replace_stops_the_running_one_then_starts_the_new_one() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Replace), entry("app", Role::Main)]));
    sim.take_log();
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["stop job"]), "stopped through its stop path first");
    sim.exit("job", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    assert!(sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_replaced"));
    // A run replaced, or failed, fails nothing.
    sim.exit("job", Exit::Code(3));
    sim.exit("app", Exit::Code(0));
    assert_eq!(sim.fx.exit, Some(0));
}

#[test]
fn a_run_past_its_starting_deadline_is_skipped_and_counted() {
    let job = with(scheduled("job", 60, ConcurrencyPolicy::Forbid), |s| {
        s.starting_deadline = Some(Duration::from_secs(30))
    });
    let mut sim = Sim::new(pod(vec![job, entry("app", Role::Main)]));
    sim.take_log();
    let id = sim.id("job");
    sim.event(Event::RunDue { entry: id, late: Duration::from_secs(31) });
    assert!(sim.take_log().is_empty());
    let late = Duration::from_secs(31);
    assert_eq!(skips(&sim), [SkipReason::Missed { late, deadline: Duration::from_secs(30) }]);
    assert_eq!(sim.pod.status()[id].runs.unwrap().skipped, 1);
    // Within the deadline it runs.
    sim.event(Event::RunDue { entry: id, late: Duration::from_secs(29) });
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn a_suspended_entry_never_runs() {
    let job = with(scheduled("job", 10, ConcurrencyPolicy::Forbid), |s| {
        s.suspend = true;
        s.run_on_start = true;
    });
    let mut sim = Sim::new(pod(vec![job, entry("app", Role::Main)]));
    assert_eq!(sim.take_log(), s(&["spawn app"]));
    sim.advance(Duration::from_secs(3600));
    assert!(sim.take_log().is_empty());
    assert!(!sim.fx.timers.contains_key(&Timer::Run(sim.id("job"))), "no wake-up for it");
}

#[test]
fn a_run_past_its_active_deadline_is_stopped() {
    let job = with(scheduled("job", 60, ConcurrencyPolicy::Forbid), |s| {
        s.active_deadline = Some(Duration::from_secs(5));
    });
    let mut sim = Sim::new(pod(vec![job, entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(60));
    sim.take_log();
    sim.advance(Duration::from_secs(5));
    assert_eq!(sim.take_log(), s(&["stop job"]));
    assert!(sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_deadline_exceeded"));
    sim.exit("job", Exit::Signal(TERM));
    // Not restarted; the next run is the schedule's.
    assert!(sim.take_log().is_empty());
    sim.advance(Duration::from_secs(55));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn termination_stops_a_run_with_the_mains_before_the_sidecars_and_starts_none() {
    let mut sim = Sim::new(pod(vec![
        entry("side", Role::Sidecar),
        scheduled("job", 10, ConcurrencyPolicy::Forbid),
        entry("app", Role::Main),
    ]));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn side", "spawn app", "spawn job"]));
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop job", "stop app"]));
    sim.exit("app", Exit::Signal(TERM));
    assert!(sim.take_log().is_empty(), "the sidecar waits for the run");
    sim.advance(Duration::from_secs(1));
    sim.exit("job", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["stop side"]));
    sim.advance(Duration::from_secs(30));
    assert!(!sim.take_log().iter().any(|l| l == "spawn job"), "no run once termination has begun");
    sim.exit("side", Exit::Signal(TERM));
    // The pod's status is the main's: a run's end fails nothing.
    assert_eq!(sim.fx.exit, Some(128 + TERM));
}

#[test]
fn a_scheduled_entry_holds_nothing_and_completes_nothing() {
    let mut sim = Sim::new(pod(vec![
        scheduled("job", 10, ConcurrencyPolicy::Forbid),
        entry("app", Role::Main),
        entry("other", Role::Main),
    ]));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn app", "spawn other", "spawn job"]));
    sim.exit("job", Exit::Code(1));
    let runs = sim.pod.status()[sim.id("job")].runs.unwrap();
    assert_eq!((runs.started, runs.failed, runs.skipped, runs.last_success), (1, 1, 0, None));
    assert!(sim.pod.status()[sim.id("app")].runs.is_none());
    sim.exit("app", Exit::Code(0));
    assert!(sim.fx.exit.is_none(), "a main still runs");
    sim.exit("other", Exit::Code(0));
    // Completed with its mains: the idle scheduled entry does not count.
    assert_eq!(sim.fx.exit, Some(0));
}

#[test]
fn a_scheduled_entry_added_by_reload_waits_for_its_schedule() {
    let mut sim = Sim::new(pod(vec![entry("app", Role::Main)]));
    sim.take_log();
    let said =
        sim.reload(pod(vec![entry("app", Role::Main), scheduled("job", 10, ConcurrencyPolicy::Forbid)]));
    assert_eq!(said.unwrap(), s(&["job added: its schedule begins"]));
    assert!(sim.take_log().is_empty(), "no run at once");
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    sim.exit("job", Exit::Code(0));
    // A new schedule applies from the next run on.
    let said =
        sim.reload(pod(vec![entry("app", Role::Main), scheduled("job", 30, ConcurrencyPolicy::Forbid)]));
    assert_eq!(said.unwrap(), s(&["job changed: its next run follows its new schedule"]));
    sim.advance(Duration::from_secs(29));
    assert!(sim.take_log().is_empty());
    sim.advance(Duration::from_secs(1));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn trigger_suspend_and_resume_by_request() {
    let mut sim = Sim::new(pod(vec![
        scheduled("job", 10, ConcurrencyPolicy::Forbid),
        entry("app", Role::Main),
        entry("side", Role::Sidecar),
    ]));
    sim.take_log();
    let job = sim.id("job");
    // Not for other roles.
    assert!(sim.control(Control::Trigger(sim.id("app"))).unwrap_err().contains("not a scheduled entry"));
    // One run now; a second while it runs is refused under Forbid.
    sim.control(Control::Trigger(job)).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    assert!(sim.control(Control::Trigger(job)).unwrap_err().contains("runs already"));
    sim.exit("job", Exit::Code(0));
    // Suspended: no run, and no wake-up for one; a running one would go on.
    sim.control(Control::Suspend(job)).unwrap();
    assert!(sim.control(Control::Suspend(job)).unwrap_err().contains("suspended already"));
    assert!(!sim.fx.timers.contains_key(&Timer::Run(job)));
    sim.advance(Duration::from_secs(60));
    assert!(sim.take_log().is_empty());
    // Resumed: the schedule goes on.
    sim.control(Control::Resume(job)).unwrap();
    assert!(sim.control(Control::Resume(job)).unwrap_err().contains("not suspended"));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    let events: Vec<&str> =
        sim.fx.notes.iter().map(Note::event).filter(|e| e.ends_with("_requested")).collect();
    assert_eq!(events, ["trigger_requested", "suspend_requested", "resume_requested"]);
}

#[test]
fn trigger_before_the_mains_is_refused() {
    let mut sim = Sim::new(pod(vec![
        entry("setup", Role::Init),
        scheduled("job", 10, ConcurrencyPolicy::Replace),
        entry("app", Role::Main),
    ]));
    let job = sim.id("job");
    assert!(sim.control(Control::Trigger(job)).unwrap_err().contains("the mains have not been reached"));
    sim.exit("setup", Exit::Code(0));
    sim.take_log();
    sim.control(Control::Trigger(job)).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    // Replace: a trigger while it runs replaces it.
    sim.control(Control::Trigger(job)).unwrap();
    assert_eq!(sim.take_log(), s(&["stop job"]));
    sim.exit("job", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn allow_starts_an_overlapping_run_beside_the_running_one() {
    // A CronJob's default (kubernetes.io "CronJob"): runs may overlap.
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.take_log();
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job#2"]), "an extra run, under its own name");
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job#3"]));
    assert!(skips(&sim).is_empty());
    // Runs are counted on the entry; an extra run's row has none of its own.
    let status = sim.pod.status();
    assert_eq!(status[sim.id("job")].runs.unwrap().started, 3);
    assert_eq!(status[sim.id("job#2")].runs, None);
    // An idle extra run is used again before a new one is made.
    sim.exit("job#2", Exit::Code(1));
    assert_eq!(sim.pod.status()[sim.id("job")].runs.unwrap().failed, 1);
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job#2"]));
    // Termination stops every run with the mains; the pod's status is the main's.
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop job", "stop app", "stop job#2", "stop job#3"]));
    for name in ["job", "app", "job#2", "job#3"] {
        sim.exit(name, Exit::Signal(TERM));
    }
    assert_eq!(sim.fx.exit, Some(128 + TERM));
}

#[test]
fn allow_skips_a_run_once_max_concurrent_runs_run() {
    let job = with(scheduled("job", 10, ConcurrencyPolicy::Allow), |s| s.max_concurrent = Some(2));
    let mut sim = Sim::new(pod(vec![job, entry("app", Role::Main)]));
    sim.take_log();
    sim.advance(Duration::from_secs(20));
    assert_eq!(sim.take_log(), s(&["spawn job", "spawn job#2"]));
    sim.advance(Duration::from_secs(10));
    assert!(sim.take_log().is_empty());
    assert_eq!(skips(&sim), [SkipReason::MaxConcurrent { max: 2 }]);
    assert_eq!(sim.pod.status()[sim.id("job")].runs.unwrap().skipped, 1);
    // `podinit trigger` meets the same limit.
    let id = sim.id("job");
    let refused = sim.control(Control::Trigger(id)).unwrap_err();
    assert!(refused.contains("max_concurrent"), "{refused}");
    sim.exit("job", Exit::Code(0));
    sim.control(Control::Trigger(id)).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn podinit_stop_stops_the_extra_runs_too_and_they_stay_usable() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(20));
    sim.take_log();
    let id = sim.id("job");
    sim.control(Control::Stop(id)).unwrap();
    assert_eq!(sim.take_log(), s(&["stop job#2", "stop job"]));
    sim.exit("job", Exit::Signal(TERM));
    sim.exit("job#2", Exit::Signal(TERM));
    sim.advance(Duration::from_secs(10));
    assert!(sim.take_log().is_empty(), "held: no run");
    let refused = sim.control(Control::Trigger(sim.id("job#2"))).unwrap_err();
    assert!(refused.contains("is an extra run of job"), "{refused}");
    sim.control(Control::Start(id)).unwrap();
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job", "spawn job#2"]));
}

/// A pod whose backoff after the first immediate restart is 30 s.
fn slow_backoff(mut p: PodSpec) -> PodSpec {
    p.backoff.initial = Duration::from_secs(30);
    p.backoff.max = Duration::from_secs(60);
    p
}

fn on_failure(e: EntrySpec, max_restarts: u32) -> EntrySpec {
    EntrySpec { restart_policy: Some(RestartPolicy::OnFailure), max_restarts: Some(max_restarts), ..e }
}

#[test]
fn on_failure_tries_a_run_again_within_max_restarts_then_the_run_fails() {
    // A Job's restartPolicy OnFailure and backoffLimit (kubernetes.io "Jobs").
    let job = on_failure(scheduled("job", 60, ConcurrencyPolicy::Forbid), 2);
    let mut sim = Sim::new(pod(vec![job, entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(60));
    sim.take_log();
    sim.exit("job", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["spawn job"]), "tried again at once (its backoff starts at zero)");
    sim.exit("job", Exit::Code(1));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]), "after its backoff");
    assert!(!sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_finished"), "one run so far");
    // A run due between its tries is skipped under Forbid: the run goes on.
    sim.exit("job", Exit::Code(1));
    assert!(sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_max_restarts"));
    let runs = sim.pod.status()[sim.id("job")].runs.unwrap();
    assert_eq!((runs.started, runs.failed), (1, 1), "one run, failed");
    // The pod goes on; the next run is the schedule's and tries afresh.
    sim.advance(Duration::from_secs(50));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    sim.exit("job", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["spawn job"]), "a new run has its own restarts");
    sim.exit("job", Exit::Code(0));
    let runs = sim.pod.status()[sim.id("job")].runs.unwrap();
    assert_eq!((runs.started, runs.failed), (2, 1));
    assert!(runs.last_success.is_some());
    sim.exit("app", Exit::Code(0));
    assert_eq!(sim.fx.exit, Some(0));
}

#[test]
fn a_runs_active_deadline_counts_over_its_tries_and_ends_it_in_backoff() {
    let job = with(on_failure(scheduled("job", 600, ConcurrencyPolicy::Forbid), 10), |s| {
        s.active_deadline = Some(Duration::from_secs(30));
    });
    let mut sim = Sim::new(slow_backoff(pod(vec![job, entry("app", Role::Main)])));
    sim.advance(Duration::from_secs(600));
    sim.take_log();
    sim.advance(Duration::from_secs(20));
    sim.exit("job", Exit::Code(1));
    sim.exit("job", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["spawn job"]), "tried once more at once, then backoff");
    assert!(matches!(sim.pod.status()[sim.id("job")].state, crate::status::State::Backoff));
    // 30 s after the run began (not after its last try): it ends.
    sim.advance(Duration::from_secs(10));
    assert!(sim.take_log().is_empty(), "no further try");
    assert!(sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_deadline_exceeded"));
    let runs = sim.pod.status()[sim.id("job")].runs.unwrap();
    assert_eq!((runs.started, runs.failed), (1, 1));
    assert_eq!(runs.last_ran_for, Some(Duration::from_secs(30)));
}

#[test]
fn replace_and_termination_end_a_run_waiting_between_tries() {
    let job = on_failure(scheduled("job", 10, ConcurrencyPolicy::Replace), 5);
    let mut sim = Sim::new(slow_backoff(pod(vec![job, entry("app", Role::Main)])));
    sim.advance(Duration::from_secs(10));
    sim.exit("job", Exit::Code(1));
    sim.exit("job", Exit::Code(1));
    sim.take_log();
    assert!(matches!(sim.pod.status()[sim.id("job")].state, crate::status::State::Backoff));
    // The next run is due while this one waits out its backoff: it replaces it.
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    assert!(sim.fx.notes.iter().any(|n| n.event() == "scheduled_run_replaced"));
    assert_eq!(sim.pod.status()[sim.id("job")].runs.unwrap().started, 2);
    sim.exit("job", Exit::Code(1));
    sim.exit("job", Exit::Code(1));
    sim.take_log();
    // Termination while it waits: the run ends, nothing more starts.
    sim.event(Event::Terminate { signal: Signal::TERM });
    assert_eq!(sim.take_log(), s(&["stop app"]));
    sim.exit("app", Exit::Signal(TERM));
    assert_eq!(sim.fx.exit, Some(128 + TERM));
    let runs = sim.pod.status()[sim.id("job")].runs.unwrap();
    assert_eq!((runs.started, runs.failed), (2, 2));
}

#[test]
fn a_removed_entry_being_stopped_starts_no_more_runs() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.take_log();
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    let said = sim.reload(pod(vec![entry("app", Role::Main)])).unwrap();
    assert_eq!(said, s(&["job removed: stopping it"]));
    assert_eq!(sim.take_log(), s(&["stop job"]));
    // Its run takes its time to stop: its schedule is over all the same.
    assert!(!sim.fx.timers.contains_key(&Timer::Run(sim.id("job"))), "its schedule is disarmed");
    sim.advance(Duration::from_secs(30));
    let log = sim.take_log();
    assert!(!log.iter().any(|l| l.starts_with("spawn")), "no extra run of a removed entry: {log:?}");
    assert!(skips(&sim).is_empty());
    sim.exit("job", Exit::Signal(TERM));
    let names: Vec<String> = sim.pod.status().into_iter().map(|e| e.name).collect();
    assert_eq!(names, s(&["job", "app"]), "no extra run was made");
}

#[test]
fn podinit_restart_between_two_tries_ends_that_run_before_the_new_one() {
    let job = on_failure(scheduled("job", 600, ConcurrencyPolicy::Forbid), 5);
    let mut sim = Sim::new(slow_backoff(pod(vec![job, entry("app", Role::Main)])));
    sim.advance(Duration::from_secs(600));
    sim.exit("job", Exit::Code(1));
    sim.exit("job", Exit::Code(1));
    sim.take_log();
    assert!(matches!(sim.pod.status()[sim.id("job")].state, crate::status::State::Backoff));
    sim.control(Control::Restart(sim.id("job"))).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    // The run that waited is over, failed, and said so, before the new one.
    let events: Vec<&str> =
        sim.fx.notes.iter().map(Note::event).filter(|e| e.starts_with("scheduled_run_")).collect();
    assert_eq!(events, ["scheduled_run_started", "scheduled_run_finished", "scheduled_run_started"]);
    let runs = sim.pod.status()[sim.id("job")].runs.unwrap();
    assert_eq!((runs.started, runs.failed), (2, 1));
    // The new run tries afresh, with a backoff of its own.
    sim.exit("job", Exit::Code(1));
    assert_eq!(sim.take_log(), s(&["spawn job"]), "its first try again is at once");
}

#[test]
fn podinit_stop_while_only_extra_runs_run_stops_them_and_holds_the_schedule() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(20));
    sim.exit("job", Exit::Code(0));
    sim.take_log();
    assert!(sim.running("job#2"));
    let id = sim.id("job");
    sim.control(Control::Stop(id)).unwrap();
    assert_eq!(sim.take_log(), s(&["stop job#2"]));
    sim.exit("job#2", Exit::Signal(TERM));
    assert!(sim.pod.status()[id].held, "stopped until podinit start");
    sim.advance(Duration::from_secs(30));
    assert!(sim.take_log().is_empty(), "held: no run");
    assert!(sim.control(Control::Stop(id)).unwrap_err().contains("stopped already"));
    sim.control(Control::Start(id)).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn podinit_stop_between_runs_holds_the_schedule() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(10));
    sim.exit("job", Exit::Code(0));
    sim.take_log();
    let id = sim.id("job");
    sim.control(Control::Stop(id)).unwrap();
    assert!(sim.take_log().is_empty(), "nothing runs to be stopped");
    assert!(sim.pod.status()[id].held);
    sim.advance(Duration::from_secs(10));
    assert!(sim.take_log().is_empty(), "held: no run");
    assert_eq!(skips(&sim), [SkipReason::Held]);
    // A run asked for runs beside the hold, which stays.
    sim.control(Control::Trigger(id)).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job#2"]));
    sim.exit("job#2", Exit::Code(0));
    sim.advance(Duration::from_secs(10));
    assert!(sim.take_log().is_empty(), "still held after the run asked for");
    assert!(sim.pod.status()[id].held);
    sim.control(Control::Start(id)).unwrap();
    assert_eq!(sim.take_log(), s(&["spawn job"]));
}

#[test]
fn max_concurrent_counts_extra_runs_while_the_entrys_own_run_is_idle() {
    let job = with(scheduled("job", 10, ConcurrencyPolicy::Allow), |s| s.max_concurrent = Some(2));
    let mut sim = Sim::new(pod(vec![job, entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(20));
    assert_eq!(sim.take_log(), s(&["spawn app", "spawn job", "spawn job#2"]));
    // Its own run ends; job#2 still runs: one more may start, not two.
    sim.exit("job", Exit::Code(0));
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job"]));
    sim.exit("job", Exit::Code(0));
    let id = sim.id("job");
    sim.control(Control::Trigger(id)).unwrap();
    sim.take_log();
    assert!(sim.control(Control::Trigger(id)).unwrap_err().contains("max_concurrent"));
    assert_eq!(skips(&sim), []);
}

#[test]
fn a_new_run_is_no_restart_and_a_running_run_is_never_ready() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Forbid), entry("app", Role::Main)]));
    for _ in 0..3 {
        sim.advance(Duration::from_secs(10));
        sim.exit("job", Exit::Code(0));
    }
    sim.advance(Duration::from_secs(10));
    let status = &sim.pod.status()[sim.id("job")];
    assert_eq!(status.restarts, 0, "four runs, no restart");
    assert!(!status.ready, "a scheduled entry holds no readiness");
    assert_eq!(status.runs.unwrap().started, 4);
}

#[test]
fn a_reload_lets_a_running_run_finish_and_the_next_runs_take_the_new_settings() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(10));
    sim.take_log();
    let mut spec = sim.pod.spec().clone();
    spec.entries.truncate(2);
    spec.entries[0].argv = crate::spec::Argv::program_only("new".into());
    let said = sim.reload(spec).unwrap();
    assert!(said[0].contains("its run goes on as it is"), "{said:?}");
    assert!(sim.take_log().is_empty(), "the run is not stopped");
    // An overlapping run already has the new settings.
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job#2"]));
    assert_eq!(sim.pod.spec().entries[sim.id("job#2")].argv.program(), "new");
    sim.exit("job", Exit::Code(0));
    assert_eq!(sim.pod.spec().entries[sim.id("job")].argv.program(), "new");
}

#[test]
fn an_extra_run_is_stopped_signalled_and_restarted_by_its_own_name() {
    let mut sim =
        Sim::new(pod(vec![scheduled("job", 10, ConcurrencyPolicy::Allow), entry("app", Role::Main)]));
    sim.advance(Duration::from_secs(20));
    sim.take_log();
    let extra = sim.pod.entry_named("job#2").expect("an extra run is found by its name");
    assert_eq!(extra, sim.id("job#2"));
    sim.control(Control::Signal(extra, Signal::HUP)).unwrap();
    // Stopping it stops that run only: the entry's run and schedule go on.
    sim.control(Control::Stop(extra)).unwrap();
    assert_eq!(sim.take_log(), s(&["stop job#2", "stop job#2"]));
    assert_eq!(sim.fx.sent[..2], [("job#2".to_owned(), Signal::HUP), ("job#2".to_owned(), Signal::TERM)]);
    let said = sim.fx.notes.iter().rev().find(|n| n.event() == "stop_requested").unwrap();
    let said = said.text(sim.pod.spec()).to_string();
    assert!(!said.contains("podinit start"), "an extra run is not held: {said}");
    sim.exit("job#2", Exit::Signal(TERM));
    assert!(!sim.pod.status()[extra].held);
    // Idle, it runs nothing to start or restart: its entry is asked.
    for request in [Control::Start(extra), Control::Restart(extra)] {
        let refused = sim.control(request).unwrap_err();
        assert!(refused.contains("is an extra run of job"), "{refused}");
    }
    sim.advance(Duration::from_secs(10));
    assert_eq!(sim.take_log(), s(&["spawn job#2"]), "used again by the schedule");
    // Running, `podinit restart` replaces its run.
    sim.control(Control::Restart(extra)).unwrap();
    assert_eq!(sim.take_log(), s(&["stop job#2"]));
    sim.exit("job#2", Exit::Signal(TERM));
    assert_eq!(sim.take_log(), s(&["spawn job#2"]));
}
