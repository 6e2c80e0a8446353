//! What crosses the boundary between the machine and the runtime that drives
//! it: [`Event`]s in, [`Action`]s out, the [`Timer`]s it asks for and the
//! [`Control`] requests of the command line; the [`Note`]s it gives out are
//! `notes.rs`'s. Plain data: nothing here decides anything. Pids, signals and statuses cross as the kernel's
//! numbers (docs/signals.md), so a real-time signal or an odd status is
//! carried, not dropped by a narrower enum.

use std::time::{Duration, Instant};

use crate::exit_status::Exit;
#[cfg(doc)]
use crate::notes::Note;
use crate::spec::{HookKind, ProbeKind, Signal};

/// Index of an entry in [`PodSpec::entries`](crate::spec::PodSpec::entries).
pub type EntryId = usize;

/// Number of a process instance of one entry: 1 for the first spawn, +1 per
/// restart. Events carry it so that news about a dead instance is ignored.
pub type Instance = u64;

/// A timer the machine asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Timer {
    /// The entry's backoff is over: start it again.
    Backoff(EntryId),
    /// Stop deadline of one instance: stop signal if not sent yet, else SIGKILL.
    Stop(EntryId, Instance),
    /// The termination budget is spent.
    Budget,
    /// `[pod] active_deadline` has passed.
    Deadline,
    /// The pod's backoff before a restart of the whole pod is over.
    PodRestart,
    /// The start sequence has waited at this entry long enough for a note
    /// that says why (`wait.rs`).
    Wait(EntryId),
    /// A scheduled entry's next run: armed by the runtime at the time it
    /// computes for [`Action::ArmRun`], which it reports as
    /// [`Event::RunDue`] (the machine only cancels it by this name).
    Run(EntryId),
    /// A scheduled entry's run has run its `active_deadline`; the instance
    /// is the run's first (the deadline counts over its tries).
    RunDeadline(EntryId, Instance),
}

/// Something that happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The instance asked for with [`Action::Spawn`] runs as `pid` (its own group).
    Spawned { entry: EntryId, instance: Instance, pid: i32 },
    /// The instance could not be started; `status` is 126 or 127.
    SpawnFailed { entry: EntryId, instance: Instance, status: i32 },
    /// The instance's process ended and was reaped.
    Exited { entry: EntryId, instance: Instance, exit: Exit },
    /// One probe attempt's result; `why` says why it failed (for the
    /// messages at a threshold).
    Probe { entry: EntryId, instance: Instance, kind: ProbeKind, ok: bool, why: Option<String> },
    /// A hook returned (`ok` false: failed or timed out).
    Hook { entry: EntryId, instance: Instance, hook: HookKind, ok: bool },
    /// A timer fired.
    Timer(Timer),
    /// podinit received SIGTERM or SIGINT.
    Terminate { signal: Signal },
    /// podinit received a signal to pass on to the mains.
    Forward { signal: Signal },
    /// A scheduled entry's run is due (its [`Timer::Run`] fired); `late`:
    /// how long after its scheduled time, by the wall clock.
    RunDue { entry: EntryId, late: Duration },
}

/// Something the runtime must do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Start a new instance of the entry; answer with `Spawned` or `SpawnFailed`.
    Spawn { entry: EntryId, instance: Instance },
    /// Send `signal` to the process group of `pid`.
    Signal { entry: EntryId, pid: i32, signal: Signal },
    /// Start probing; the first attempt at `not_before` at the earliest.
    StartProbe { entry: EntryId, instance: Instance, pid: i32, kind: ProbeKind, not_before: Instant },
    /// Stop one kind of probe of the entry.
    StopProbe { entry: EntryId, kind: ProbeKind },
    /// Run a hook; answer with `Event::Hook`.
    RunHook { entry: EntryId, instance: Instance, pid: i32, hook: HookKind },
    /// Stop every probe and hook of the entry (its process is gone).
    StopChecks { entry: EntryId },
    /// Fire `timer` at `at` (replacing an earlier arming of the same timer).
    ArmTimer { timer: Timer, at: Instant },
    /// Forget `timer`.
    CancelTimer(Timer),
    /// Arm the scheduled entry's [`Timer::Run`] for its next run after now,
    /// computed from its schedule (replacing an earlier arming); with
    /// `at_once`, one run is due now too. Answer with [`Event::RunDue`].
    ArmRun { entry: EntryId, at_once: bool },
    /// Every process is gone: exit podinit with this status.
    Exit { status: i32 },
}

/// A request from the command line to the running pod (docs/control.md).
/// Like any event, it is decided here, so that every rule about ordering,
/// termination and backoff holds for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Stop the entry through its stop path, then start a new instance at once.
    Restart(EntryId),
    /// Stop the entry through its stop path and keep it down.
    Stop(EntryId),
    /// Start an entry that `Stop` keeps down.
    Start(EntryId),
    /// Send a signal to the entry's process group.
    Signal(EntryId, Signal),
    /// Terminate the pod, as SIGTERM to podinit does.
    Shutdown,
    /// A scheduled entry: one run now, as if it came due.
    Trigger(EntryId),
    /// A scheduled entry: no run starts until `Resume` (a running one goes on).
    Suspend(EntryId),
    /// A scheduled entry: its schedule goes on again.
    Resume(EntryId),
}
