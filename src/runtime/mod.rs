//! The runtime layer: the only code that touches processes. The event loop
//! (`supervisor`) carries out what the lifecycle decides, and `plain` does
//! the same on one thread for a plain init (`podinit -- cmd`), both through
//! one perform step (`perform`); `reaper` is
//! the one waiter for children; `spawn` starts them; `signals` sets
//! podinit's own signal dispositions, takes every signal podinit catches (on
//! the signal thread, or for the plain init's own thread), and resets a
//! child's; `task` keeps panics in tasks from vanishing; `announce` holds
//! what push probes need (notify sockets, notification pipes, log-line
//! watches); `service` tells the service manager that started podinit
//! (systemd, Podman) how the pod is doing; `teardown` kills and reaps what
//! is left at the end.

pub mod announce;
mod carry;
mod perform;
pub mod plain;
pub mod reaper;
pub mod service;
pub mod signals;
pub mod spawn;
pub mod supervisor;
pub mod task;
pub mod teardown;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::config::{EntrySpec, When};
use crate::lifecycle::{EntryId, Event, Timer};

/// The timers the lifecycle armed (`Action::ArmTimer`), each with the instant
/// it fires at; arming a timer again replaces the earlier arming. Kept by
/// both loops, the event loop and the plain init's. Scheduled entries'
/// runs (`Action::ArmRun`) are timers too, whose instant comes from the
/// wall clock (`runs`).
#[derive(Debug, Default)]
pub(crate) struct Timers {
    armed: BTreeMap<Timer, Instant>,
    /// When each scheduled entry's next run is due.
    runs: BTreeMap<EntryId, Due>,
    /// What each scheduled entry's next run counts from: the run last due
    /// (its timer fired), or, for an `every`, when its schedule began. A
    /// run armed and then cancelled (`podinit suspend`, a reload that
    /// changes the entry) never moves it, so arming again finds that run.
    last_due: BTreeMap<EntryId, Due>,
    /// Each scheduled entry's cron schedule, as read.
    crons: BTreeMap<EntryId, CronReading>,
}

/// A cron schedule and its time zone as read, with the texts they were read
/// from (read again when the entry's spec changes them).
#[derive(Debug)]
struct CronReading {
    text: String,
    cron: crate::config::schedule::Cron,
    zone_name: String,
    zone: crate::config::schedule::Zone,
}

/// When a scheduled entry's next run is due.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Due {
    /// A cron schedule's: a wall-clock time.
    Wall(SystemTime),
    /// An `every`'s: on the monotonic clock.
    Mono(Instant),
}

impl Timers {
    pub(crate) fn arm(&mut self, timer: Timer, at: Instant) {
        self.armed.insert(timer, at);
    }

    pub(crate) fn cancel(&mut self, timer: Timer) {
        self.armed.remove(&timer);
    }

    /// When a scheduled entry's next run is armed for, if it is.
    pub(crate) fn run_at(&self, entry: EntryId) -> Option<Instant> {
        self.armed.get(&Timer::Run(entry)).copied()
    }

    /// When the first of them fires; `None` with none armed.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.armed.values().min().copied()
    }

    /// Takes out every timer due at `now`, in the lifecycle's order of
    /// timers, as events. A scheduled run's is [`Event::RunDue`] with how
    /// late it is by the wall clock; if the wall clock says its time has not
    /// come (the clock was set back), it is armed again for that time.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<Event> {
        let due: Vec<Timer> = self.armed.iter().filter(|(_, &at)| at <= now).map(|(&t, _)| t).collect();
        let mut events = Vec::new();
        for t in due {
            self.armed.remove(&t);
            let Timer::Run(entry) = t else {
                events.push(Event::Timer(t));
                continue;
            };
            let late = match self.runs.get(&entry) {
                Some(Due::Wall(at)) => match SystemTime::now().duration_since(*at) {
                    Ok(late) => late,
                    Err(early) => {
                        self.armed.insert(t, now + early.duration());
                        continue;
                    }
                },
                Some(Due::Mono(at)) => now.saturating_duration_since(*at),
                None => Duration::ZERO,
            };
            if let Some(&due) = self.runs.get(&entry) {
                self.last_due.insert(entry, due);
            }
            events.push(Event::RunDue { entry, late });
        }
        events
    }

    /// Moves each armed run of a cron schedule to its wall-clock time as the
    /// wall clock says now: called whenever the loop wakes, so that a wall
    /// clock set forward or back moves the runs with it; an idle pod has
    /// no wake-up between two runs.
    pub(crate) fn follow_wall_clock(&mut self) {
        if self.runs.is_empty() {
            return;
        }
        let (now, wall) = (Instant::now(), SystemTime::now());
        for (&entry, due) in &self.runs {
            let (Due::Wall(at), Some(armed)) = (due, self.armed.get_mut(&Timer::Run(entry))) else {
                continue;
            };
            *armed = now + at.duration_since(wall).unwrap_or_default();
        }
    }

    /// Arms a scheduled entry's next run (`Action::ArmRun`): the first time
    /// its schedule gives after now (and after the run that was last due),
    /// in its time zone; with `at_once`, one run is due now too.
    pub(crate) fn arm_run(&mut self, spec: &EntrySpec, entry: EntryId, at_once: bool) -> Option<Event> {
        let now_event = at_once.then_some(Event::RunDue { entry, late: Duration::ZERO });
        if !cfg!(feature = "schedule") {
            // The config reader admits no scheduled entry then.
            return now_event;
        }
        let Some(schedule) = &spec.schedule else { return now_event };
        if !at_once && self.armed.contains_key(&Timer::Run(entry)) {
            // The next run is armed already (the one due was `at_once`'s).
            return None;
        }
        let now = Instant::now();
        // Armed again before its armed run came due (`podinit resume`, a
        // reload that changed the entry): the runs whose time passed while
        // it was not armed are not run.
        let rearmed = self.runs.get(&entry).is_some_and(|due| self.last_due.get(&entry) != Some(due));
        let due = match &schedule.when {
            When::Every(every) => {
                let mut at = match self.last_due.get(&entry) {
                    Some(Due::Mono(last)) => *last + *every,
                    _ => {
                        // The schedule begins: its runs count from now.
                        self.last_due.insert(entry, Due::Mono(now));
                        now + *every
                    }
                };
                // Runs missed while podinit could not run are not made up
                // (the last of them is due now, late).
                while at + *every <= now || (rearmed && at <= now) {
                    at += *every;
                }
                self.armed.insert(Timer::Run(entry), at);
                Due::Mono(at)
            }
            When::Cron { text } => {
                use crate::config::schedule::{parse_cron, Zone};
                let fresh = self
                    .crons
                    .get(&entry)
                    .is_some_and(|r| r.text == *text && r.zone_name == schedule.time_zone);
                if !fresh {
                    // The config reader has read both: the zone fails only
                    // when its file changed since.
                    let cron = match parse_cron(text) {
                        Ok(cron) => cron,
                        Err(why) => {
                            tracing::warn!("{}: {why}; no run is armed", spec.name);
                            return now_event;
                        }
                    };
                    let zone = match self.crons.remove(&entry) {
                        Some(r) if r.zone_name == schedule.time_zone => r.zone,
                        _ => Zone::load(&schedule.time_zone).unwrap_or_else(|why| {
                            tracing::warn!("{}: {why}; its schedule is read in UTC", spec.name);
                            Zone::utc()
                        }),
                    };
                    let reading =
                        CronReading { text: text.clone(), cron, zone_name: schedule.time_zone.clone(), zone };
                    self.crons.insert(entry, reading);
                }
                let Some(reading) = self.crons.get(&entry) else { return now_event };
                let wall = SystemTime::now();
                let secs = |t: SystemTime| {
                    t.duration_since(SystemTime::UNIX_EPOCH)
                        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
                };
                let last = match self.last_due.get(&entry) {
                    Some(Due::Wall(last)) => secs(*last),
                    _ => i64::MIN,
                };
                let Some(next) = reading.cron.next_after(&reading.zone, secs(wall).max(last)) else {
                    tracing::warn!(
                        "{}: its schedule has no run in its time zone in the next 100 years",
                        spec.name
                    );
                    return now_event;
                };
                let at = SystemTime::UNIX_EPOCH + Duration::from_secs(u64::try_from(next).unwrap_or(0));
                self.armed.insert(Timer::Run(entry), now + at.duration_since(wall).unwrap_or_default());
                Due::Wall(at)
            }
        };
        self.runs.insert(entry, due);
        now_event
    }
}

/// A new directory of podinit's, `podinit-UID-WHAT-HEX` (HEX from the clock) with `mode`, under
/// `$XDG_RUNTIME_DIR`, `/run`, `/tmp` or `/dev/shm`, the first that works.
/// Its name is new each time (many podinits are PID 1 of their own namespace
/// and share a /tmp), and creating it fails rather than reuse one.
pub(crate) fn private_dir(what: &str, mode: u32) -> Option<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let uid = crate::sys::process::euid();
    let bases = [
        std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from),
        Some("/run".into()),
        Some("/tmp".into()),
        Some("/dev/shm".into()),
    ];
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    for base in bases.into_iter().flatten().filter(|b| !b.as_os_str().is_empty()) {
        for attempt in 0..8u128 {
            let dir = base.join(format!("podinit-{uid}-{what}-{:x}", nanos.wrapping_add(attempt * 7919)));
            match std::fs::DirBuilder::new().mode(mode).create(&dir) {
                // The umask may have taken bits off: set the mode asked for.
                Ok(()) => {
                    let _ = std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(mode));
                    return Some(dir);
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(_) => break,
            }
        }
    }
    None
}

#[cfg(all(test, feature = "schedule"))]
mod tests {
    use std::time::{Duration, Instant};

    use crate::config::{Argv, ConcurrencyPolicy, EntrySpec, LogMode, Role, ScheduleSpec, When};
    use crate::lifecycle::Timer;

    fn scheduled(when: When) -> EntrySpec {
        let mut e = EntrySpec::new("job", Role::Scheduled, Argv::program_only("x".into()), LogMode::Raw);
        e.schedule = Some(ScheduleSpec {
            when,
            time_zone: "UTC".into(),
            concurrency_policy: ConcurrencyPolicy::Allow,
            starting_deadline: None,
            suspend: false,
            run_on_start: false,
            active_deadline: None,
            max_concurrent: None,
        });
        e
    }

    /// A run armed, cancelled before it came due (`podinit suspend`, a
    /// reload that changed the entry) and armed again is still that run:
    /// arming again never skips it.
    #[test]
    fn arming_again_before_the_run_came_due_keeps_that_run() {
        let mut timers = super::Timers::default();
        let every = Duration::from_secs(600);
        let spec = scheduled(When::Every(every));
        let before = Instant::now();
        assert!(timers.arm_run(&spec, 0, false).is_none());
        let first = timers.run_at(0).unwrap();
        assert!(first >= before + every && first <= Instant::now() + every, "{first:?}");
        timers.cancel(Timer::Run(0));
        timers.arm_run(&spec, 0, false);
        assert_eq!(timers.run_at(0), Some(first), "the same run, not the one after it");
        // The same for a cron schedule, read from the wall clock: the next
        // minute, not the one after.
        let spec = scheduled(When::Cron { text: "* * * * *".into() });
        timers.arm_run(&spec, 1, false);
        timers.cancel(Timer::Run(1));
        timers.arm_run(&spec, 1, false);
        let next = timers.run_at(1).unwrap();
        assert!(
            next <= Instant::now() + Duration::from_secs(60),
            "armed {:?} from now",
            next - Instant::now()
        );
    }

    /// Once a run has come due, the next one counts from it.
    #[test]
    fn the_next_run_counts_from_the_run_that_came_due() {
        let mut timers = super::Timers::default();
        let every = Duration::from_secs(1);
        let spec = scheduled(When::Every(every));
        timers.arm_run(&spec, 0, false);
        let first = timers.run_at(0).unwrap();
        let mut now = Instant::now();
        while now < first {
            std::thread::sleep(first - now);
            now = Instant::now();
        }
        let due = timers.take_due(now);
        assert!(matches!(due[..], [crate::lifecycle::Event::RunDue { entry: 0, .. }]), "{due:?}");
        timers.arm_run(&spec, 0, false);
        assert_eq!(timers.run_at(0), Some(first + every));
    }

    /// The schedule read is kept per entry and read again when the entry's
    /// text changes (a reload): the next run follows the new text.
    #[test]
    fn a_changed_schedule_is_read_again() {
        let mut timers = super::Timers::default();
        timers.arm_run(&scheduled(When::Cron { text: "0 0 1 1 *".into() }), 0, false);
        let yearly = timers.run_at(0).expect("armed");
        assert!(yearly > Instant::now() + Duration::from_secs(60), "January 1st is more than a minute away");
        timers.cancel(Timer::Run(0));
        timers.arm_run(&scheduled(When::Cron { text: "* * * * * *".into() }), 0, false);
        let every_second = timers.run_at(0).expect("armed");
        assert!(every_second <= Instant::now() + Duration::from_secs(2), "every second: {every_second:?}");
        assert_eq!(timers.crons.get(&0).map(|r| r.text.as_str()), Some("* * * * * *"));
    }
}
