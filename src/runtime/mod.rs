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
use std::time::Instant;

use crate::lifecycle::Timer;

/// The timers the lifecycle armed (`Action::ArmTimer`), each with the instant
/// it fires at; arming a timer again replaces the earlier arming. Kept by
/// both loops, the event loop and the plain init's.
#[derive(Debug, Default)]
pub(crate) struct Timers(BTreeMap<Timer, Instant>);

impl Timers {
    pub(crate) fn arm(&mut self, timer: Timer, at: Instant) {
        self.0.insert(timer, at);
    }

    pub(crate) fn cancel(&mut self, timer: Timer) {
        self.0.remove(&timer);
    }

    /// When the first of them fires; `None` with none armed.
    pub(crate) fn next(&self) -> Option<Instant> {
        self.0.values().min().copied()
    }

    /// Takes out every timer due at `now`, in the lifecycle's order of timers.
    pub(crate) fn take_due(&mut self, now: Instant) -> Vec<Timer> {
        let due: Vec<Timer> = self.0.iter().filter(|(_, &at)| at <= now).map(|(&t, _)| t).collect();
        for t in &due {
            self.0.remove(t);
        }
        due
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
