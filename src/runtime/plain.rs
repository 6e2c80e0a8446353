//! The plain init (`podinit -- cmd`, no config file, nothing else asked
//! for): the same lifecycle as every pod, carried out by a loop on podinit's
//! one thread, as tini runs, instead of the event loop of `supervisor`.
//!
//! A plain init has one main, no probe, no hook, no output lane (its output is
//! `raw`), no status socket and no HTTP endpoint ([`fits`]), so it needs no
//! async runtime and no signal thread: the thread blocks every signal podinit
//! catches and takes them one at a time with `sigtimedwait(2)`
//! ([`signals::wait_for`]), whose timeout is the next timer the lifecycle
//! armed (a stop deadline, the termination budget). Every rule is still
//! decided by [`Pod`] through the same [`Driver`]; reaping is still the one
//! reaper's; every action is carried out by the same perform step as the
//! event loop's (`perform.rs`: this loop answers its probe and hook parts
//! with nothing), and the final clean-up is the same function. The loop is
//! its own for what a start-up costs (docs/signals.md, "How podinit takes
//! signals"): no async runtime, no signal thread.

use std::time::{Duration, Instant};

use crate::config::{LogMode, PodSpec, Role};
use crate::lifecycle::{Action, Driver, Effects, EntryId, Event, HookKind, Instance, Note, Pod, ProbeKind};
use crate::runtime::perform::Carrier;
use crate::runtime::reaper::{Reaper, Waiter};
use crate::runtime::signals;
use crate::runtime::spawn::{command, spawn, Stdio3};
use crate::runtime::supervisor::{signal_event, spawn_failed};
use crate::runtime::teardown::kill_and_reap_leftovers;
use crate::sys::signal::SigSet;

/// Whether this pod can run as a plain init: no config file, no status
/// socket (`PODINIT_STATUS_SOCKET`), no HTTP endpoint (`PODINIT_HTTP`), and
/// only mains with `raw` output and no probe or hook. Anything else needs
/// the event loop.
pub fn fits(spec: &PodSpec, config_file: bool) -> bool {
    !config_file
        && crate::status::configured_path(spec.status_socket.as_deref()).is_none()
        && spec.http.is_none()
        && spec.entries.iter().all(|e| {
            e.role == Role::Main
                && e.log == LogMode::Raw
                && e.oom_score_adj.is_none()
                && ProbeKind::ALL.iter().all(|&k| e.probe(k).is_none())
                && HookKind::ALL.iter().all(|&h| e.hook(h).is_none())
        })
}

/// Runs the pod to the end on the calling thread and returns podinit's exit
/// status. `caught` is the set [`signals::block_caught`] blocked on this
/// thread before anything was started, so that no signal is missed.
pub fn run(spec: PodSpec, caught: &SigSet) -> i32 {
    let mut fx = Plain::new(&spec);
    let mut pod = Pod::new(spec);
    let mut driver = Driver::new();
    driver.start(&mut pod, &mut fx, Instant::now());
    // The command has started in podinit's directory; podinit needs it no
    // more. Nothing is started again under the restart policy Never (a plain
    // init's: no config can say otherwise), so the directory is not noted
    // then.
    crate::runtime::spawn::leave_start_dir(pod.may_start_again());
    let status = loop {
        if let Some(status) = driver.exit() {
            break status;
        }
        // With events queued, only a look at the signals before the next
        // one; otherwise a wait until a signal comes or a timer is due.
        let timeout = if driver.is_busy() {
            Some(Duration::ZERO)
        } else {
            fx.timers.next().map(|at| at.saturating_duration_since(Instant::now()))
        };
        if let Some(sig) = signals::wait_for(caught, timeout) {
            if sig == libc::SIGCHLD {
                for (entry, instance, exit) in fx.reaper.drain().entries {
                    driver.push(Event::Exited { entry, instance, exit });
                }
            } else if let Some(event) = signal_event(sig) {
                driver.push(event);
            }
        }
        for event in fx.timers.take_due(Instant::now()) {
            driver.push(event);
        }
        // One event per turn, whatever came in: a flood of signals cannot
        // hold back the queue, nor the queue the signals.
        driver.step(&mut pod, &mut fx, Instant::now());
    };
    kill_and_reap_leftovers(&fx.reaper);
    crate::output::flush_log(Instant::now() + Duration::from_millis(500));
    status
}

/// What carries out the lifecycle's actions in a plain init.
struct Plain {
    reaper: Reaper,
    /// The entry that gets podinit's stdin (the first main).
    stdin_entry: Option<EntryId>,
    /// podinit's stdin is a terminal: the first main gets it as its
    /// controlling terminal's foreground group.
    terminal: bool,
    timers: crate::runtime::Timers,
    /// Spawn failures in a row, per entry.
    spawn_failures: Vec<u32>,
}

impl Plain {
    fn new(spec: &PodSpec) -> Plain {
        Plain {
            reaper: Reaper::default(),
            stdin_entry: spec.entries.iter().position(|e| e.role == Role::Main),
            terminal: crate::sys::fd::is_terminal(0),
            timers: crate::runtime::Timers::default(),
            spawn_failures: vec![0; spec.entries.len()],
        }
    }

    fn spawn_entry(&mut self, pod: &PodSpec, entry: EntryId, instance: Instance) -> Event {
        let spec = &pod.entries[entry];
        let stdio = Stdio3::for_entry(spec.log, self.stdin_entry == Some(entry), self.terminal);
        let cmd = command(spec, &spec.argv, stdio);
        match spawn(&self.reaper, cmd, spec.argv.program(), Waiter::Entry { entry, instance }) {
            Ok(child) => {
                self.spawn_failures[entry] = 0;
                let pid = i32::try_from(child.id()).unwrap_or(0);
                // `child` is dropped without waiting: the reaper owns its exit.
                Event::Spawned { entry, instance, pid }
            }
            Err(error) => spawn_failed(spec, entry, instance, &error, &mut self.spawn_failures[entry]),
        }
    }
}

impl Effects for Plain {
    fn say(&mut self, pod: &Pod, notes: Vec<Note>) {
        crate::runtime::perform::say(pod, &notes);
    }

    fn perform(&mut self, pod: &Pod, action: Action, _now: Instant) -> Option<Event> {
        crate::runtime::perform::perform(self, pod, action)
    }
}

/// A plain init has no output lanes, probes or hooks (`fits`): those parts
/// of the perform step do nothing here.
impl Carrier for Plain {
    fn reaper(&self) -> &Reaper {
        &self.reaper
    }

    fn timers(&mut self) -> &mut crate::runtime::Timers {
        &mut self.timers
    }

    fn spawn_entry(&mut self, pod: &PodSpec, entry: EntryId, instance: Instance) -> Event {
        Plain::spawn_entry(self, pod, entry, instance)
    }

    fn start_probe(&mut self, _: &PodSpec, _: EntryId, _: Instance, _: ProbeKind, _: Instant) {}

    fn stop_probe(&mut self, _: EntryId, _: ProbeKind) {}

    // `fits` lets no hook in; should one be asked for all the same, it fails
    // at once rather than leave the pod waiting for it.
    fn run_hook(&mut self, _: &PodSpec, entry: EntryId, instance: Instance, hook: HookKind) -> Option<Event> {
        tracing::debug!("no {} hook in a plain init", hook.as_str());
        Some(Event::Hook { entry, instance, hook, ok: false })
    }

    fn stop_checks(&mut self, _: EntryId) {}
}
