//! The one perform step both loops share: how each of the lifecycle's
//! actions is carried out. The event loop (`supervisor.rs`) and the plain
//! init's loop (`plain.rs`) differ only in what they have: the plain init
//! has no output lanes, no probes and no hooks (`plain::fits` lets none in),
//! so it answers those parts of [`Carrier`] with nothing. Sending a signal,
//! the timers and the notes are the same code for both.
//!
//! It decides nothing: every action is the lifecycle's decision, and a
//! result (a spawn's pid, a hook that cannot run) goes back as an event.

use crate::config::PodSpec;
use crate::lifecycle::{Action, EntryId, Event, HookKind, Instance, Note, Pod, ProbeKind};
use crate::runtime::reaper::Reaper;
use crate::runtime::Timers;

/// What a loop has to carry out the actions that differ between the two.
pub(crate) trait Carrier {
    /// The one reaper, through which process groups are signalled.
    fn reaper(&self) -> &Reaper;
    /// The timers the lifecycle armed.
    fn timers(&mut self) -> &mut Timers;
    /// Starts the entry's process; its pid (or why it failed) is the event.
    fn spawn_entry(&mut self, pod: &PodSpec, entry: EntryId, instance: Instance) -> Event;
    /// Starts a probe's attempts, the first not before `not_before`.
    fn start_probe(
        &mut self,
        pod: &PodSpec,
        entry: EntryId,
        instance: Instance,
        kind: ProbeKind,
        not_before: std::time::Instant,
    );
    /// Stops one kind of probe of the entry.
    fn stop_probe(&mut self, entry: EntryId, kind: ProbeKind);
    /// Runs a hook; `Some` when its result is known at once.
    fn run_hook(
        &mut self,
        pod: &PodSpec,
        entry: EntryId,
        instance: Instance,
        hook: HookKind,
    ) -> Option<Event>;
    /// Stops every probe and hook of the entry (its process is gone).
    fn stop_checks(&mut self, entry: EntryId);
}

/// Carries out one action; an event when its result is known at once (a
/// spawn's), which the driver queues like any other.
pub(crate) fn perform(fx: &mut impl Carrier, pod: &Pod, action: Action) -> Option<Event> {
    let spec = pod.spec();
    match action {
        Action::Spawn { entry, instance } => return Some(fx.spawn_entry(spec, entry, instance)),
        Action::Signal { pid, signal, .. } => {
            if let Err(e) = fx.reaper().signal_group(pid, signal) {
                tracing::debug!("{signal} to group {pid}: {e}");
            }
        }
        Action::StartProbe { entry, instance, kind, not_before, .. } => {
            fx.start_probe(spec, entry, instance, kind, not_before);
        }
        Action::StopProbe { entry, kind } => fx.stop_probe(entry, kind),
        Action::RunHook { entry, instance, hook, .. } => return fx.run_hook(spec, entry, instance, hook),
        Action::StopChecks { entry } => fx.stop_checks(entry),
        Action::ArmTimer { timer, at } => fx.timers().arm(timer, at),
        Action::CancelTimer(timer) => fx.timers().cancel(timer),
        Action::ArmRun { entry, at_once } => {
            let e = spec.entries.get(entry)?;
            return fx.timers().arm_run(e, entry, at_once);
        }
        // The loop ends by itself once the driver has the exit status.
        Action::Exit { .. } => {}
    }
    None
}

/// Writes the lifecycle's notes to podinit's log.
pub(crate) fn say(pod: &Pod, notes: &[Note]) {
    for n in notes {
        crate::runtime::supervisor::log_note(pod.spec(), n);
    }
}
