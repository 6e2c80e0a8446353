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
