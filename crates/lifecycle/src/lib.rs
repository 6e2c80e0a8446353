//! The pod lifecycle as a pure state machine: events in, actions and notes out.
//!
//! Every lifecycle rule (docs/reference.md, "Lifecycle in short": start sequence, restarts and
//! backoff, what probes do, completion, termination order and budget, exit
//! status) is decided here and nowhere else. The crate does no I/O at all: it
//! touches no process, socket or clock (the current time is an argument) and
//! logs nothing. What must happen comes back as [`Action`]s, which the runtime
//! carries out and answers with [`Event`]s; what is worth saying comes back as
//! [`Note`]s, which are data, not prose: one [`Said`] per thing said, with
//! the values its sentence and its log fields need. The runtime renders the
//! sentence ([`Note::text`]) only when it writes the line, so the machine
//! formats no text, and a note that the log level drops is never rendered.
//! So every rule, and every message, is unit-testable without processes or
//! sleeps.
//!
//! This crate is that core, apart from the `podinit` binary that drives it:
//! [`spec`] (the validated pod it runs, with [`signal`]'s signal numbers),
//! the machine, [`backoff`] and [`exit_status`]. Its `Cargo.toml` names no
//! async runtime, no libc, no nix and no logging crate (only pure helpers:
//! serde, humantime, memchr, regex-lite), so none can creep in; its
//! `clippy.toml` bans the usual ways into `std`'s clock, files, processes,
//! sockets and environment, and `unsafe` is forbidden.
//!
//! Shape: each entry is in one state (`entry.rs`: `EntryState`, whose
//! variants carry exactly their data: a running instance has a pid, a stop
//! its deadline and how far it has come), and `Pod::on_entry` is the one
//! `match` on (state, event) for an entry, with no catch-all arm: every pair
//! is a rule citing its source or ignored with its reason, noted at debug
//! level ([`Said::Ignored`]). The pod itself is in one [`Phase`]. One step ([`Pod::handle`])
//! asks for at most one spawn, and the machine goes on when the spawn's
//! result comes back as an event. [`Driver`] is the one routine that feeds
//! actions' results back, used alike by the runtime's event loop, the unit
//! tests and the property tests.
//!
//! Files, by concern:
//! - `events.rs`: what goes in and out ([`Event`], [`Action`], [`Timer`],
//!   [`Control`]); `notes.rs`: what the machine says ([`Note`], [`Said`],
//!   their level, `event` name and fields) and every sentence it can say,
//!   rendered by [`Note::text`]; `status.rs`: what the pod says about itself
//!   ([`EntryStatus`], readiness, what the pod waits for, deadlines);
//! - `pod.rs`: [`Pod`], its [`Phase`], and the dispatch of one event;
//! - `entry.rs`: one entry's states and its one match;
//! - `start.rs`: the start sequence and how an instance becomes started;
//!   `probes.rs`: liveness and readiness; `restarts.rs`: what follows an
//!   exit, backoff, `restart_all`; `scheduled.rs`: scheduled entries' runs;
//!   `stop.rs`: one instance's stop path; `termination.rs`: the pod's
//!   termination and exit status; `wait.rs`: why the start sequence waits
//!   (the timer and notes that say it); `timing.rs`: when each entry first
//!   reached each point of its start, and the critical chain of the start;
//! - `control.rs`: requests from the command line; `reload.rs`: `podinit
//!   reload`; `driver.rs`: [`Driver`] and [`Effects`].
//!
//! Invariants (checked on random event sequences by `tests/proptests.rs`;
//! each rule has its own test in `tests/`, and `tests/table.rs` walks every
//! (state, event) pair of the entry machine):
//! - nothing is spawned once termination has begun (a spawn asked for in the
//!   same step is withdrawn; one already carried out, whose result is still to
//!   come, is waited for and then stopped), but for a sidecar's copy with
//!   `restart_during_termination` (docs/lifecycle.md rule 17a);
//! - at most one spawn per step;
//! - a sidecar gets its stop signal only after every main, every running init and
//!   every later-declared running sidecar has exited, unless the budget is spent
//!   or the stop began before termination (a probe or post_start failure, which
//!   KEP-753 does not order against anything, "Container probes" on kubernetes.io);
//! - no main is spawned before every init has succeeded and every sidecar has
//!   passed the sequence (started, or stopped by `podinit stop`);
//! - no process gets its stop signal twice;
//! - no SIGKILL before max(stop signal + 2 s, the stop's deadline), unless the
//!   pod's budget is spent;
//! - once termination or a restart of the whole pod has begun, every running
//!   instance is being stopped (no instance is starting or started then);
//! - an entry removed by `podinit reload` is never started again (checked
//!   by `tests/reload.rs`: the random sequences reload nothing);
//! - `Done` is absorbing, and `Exit` is emitted exactly once, when termination
//!   has begun and no process of the pod is left.

// The crate has no I/O to do, so nothing in it needs `unsafe`.
#![forbid(unsafe_code)]
// No unwrap/expect on a path an event can reach: as PID 1 a panic kills the
// container. Tests may.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod backoff;
pub mod exit_status;
pub mod signal;
pub mod spec;

mod control;
mod driver;
mod entry;
mod events;
mod notes;
mod pod;
mod probes;
mod reload;
mod restarts;
mod scheduled;
mod start;
mod status;
mod stop;
mod termination;
mod timing;
mod wait;

pub use crate::driver::{Driver, Effects};
pub use crate::entry::{EntryEvent, StateKind};
pub use crate::events::{Action, Control, EntryId, Event, Instance, Timer};
pub use crate::notes::{counted, Level, Note, Said, SkipReason, Text};
pub use crate::pod::{Phase, Pod};
pub use crate::spec::{HookKind, ProbeKind};
pub use crate::status::{Awaited, EntryStatus, RunStats, State, StopGrace, StopStatus};
pub use crate::timing::{Chain, Link, Timing};
pub use crate::wait::{next_note, Wait, WaitFor, FIRST_WAIT_NOTE};

#[cfg(test)]
mod tests;
