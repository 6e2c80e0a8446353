//! The one place that waits for children (one waiter for every child: any
//! second waiter races the PID-1 reaper and steals exit statuses).
//!
//! As PID 1 (or child subreaper) podinit inherits every orphan, and SIGCHLDs
//! merge, so reaping is a drain of `waitid(P_ALL, WNOHANG)` until nothing is left.
//! Any second waiter would race it and steal statuses: tokio's child handling,
//! `Command::status/output/wait`, even std's own `waitpid` inside
//! `Command::spawn` after a failed exec (it asserts on the result). So every
//! child podinit starts, entry or exec probe, is spawned *and* registered here
//! while the table is borrowed, and the drain borrows it too: a pid is always in
//! the table before the drain can see it exit. clippy.toml forbids the other
//! waiters.
//!
//! A dead process is peeked at with `WNOWAIT` first, so that what is left of a
//! managed process group can be killed while the dead leader still holds the
//! group's id (after the reap that id could be reused), then reaped with
//! `waitpid`, whose raw status is decoded here (`exit_status.rs`), for any
//! signal number. Whatever happens, the peeked pid is consumed before the drain
//! looks again: a zombie the drain cannot get rid of would come back first on
//! every later peek and stop all reaping.
//!
//! Signals to managed processes go through [`Reaper::signal_group`], which
//! refuses a pid the reaper has already reaped: only podinit reaps its
//! children, and the kernel keeps an unreaped pid (and its group id) from
//! reuse, so a signal can never reach a recycled pid.

// The one module allowed to wait (clippy.toml forbids it everywhere else).
#![allow(clippy::disallowed_methods)]

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::io;
use std::process::{Child, Command};

use tokio::sync::oneshot;

use crate::config::Signal;
use crate::lifecycle::exit_status::{Exit, WaitStatus};
use crate::lifecycle::{EntryId, Instance};
use crate::sys::process::{Pidfd, PIDFD_SIGNAL_PROCESS_GROUP};

/// Who wants to know that a pid exited.
#[derive(Debug)]
pub enum Waiter {
    /// A process entry's instance: the exit becomes a lifecycle event.
    Entry { entry: EntryId, instance: Instance },
    /// An exec probe or hook, waiting on this channel.
    Task(oneshot::Sender<Exit>),
}

#[derive(Debug)]
struct Managed {
    waiter: Waiter,
    /// A pidfd of the process (Linux 5.3+), `None` where the kernel has none.
    pidfd: Option<Pidfd>,
}

/// The child table.
#[derive(Debug, Default)]
pub struct Reaper {
    /// By pid. A BTreeMap: a HashMap's random seed costs a plain init a
    /// `getrandom` call at start-up, and a lookup's log n is small at the
    /// sizes of a pod's table (its entries and running exec probes).
    table: RefCell<BTreeMap<i32, Managed>>,
    /// Whether `pidfd_send_signal` takes [`PIDFD_SIGNAL_PROCESS_GROUP`]:
    /// unknown until first tried.
    pidfd_groups: Cell<Option<bool>>,
}

/// What one drain found.
#[derive(Debug, Default)]
pub struct Reaped {
    /// Exits of entry instances, in the order they were reaped.
    pub entries: Vec<(EntryId, Instance, Exit)>,
    /// How many unmanaged processes (orphans) were reaped.
    pub orphans: usize,
}

impl Reaper {
    /// Spawns `cmd` and registers the child for `waiter` before anything can reap it.
    ///
    /// # Errors
    /// The error of `Command::spawn` (the program not found, not executable...),
    /// with the waiter back, for another try.
    pub fn spawn(&self, cmd: &mut Command, waiter: Waiter) -> Result<Child, (io::Error, Waiter)> {
        let mut table = self.table.borrow_mut();
        let child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) => return Err((e, waiter)),
        };
        let Ok(pid) = i32::try_from(child.id()) else {
            return Err((io::Error::other("pid out of range"), waiter));
        };
        // No window in which a signal to the group finds no group: the child
        // makes its group before exec (`Command::process_group`), and
        // `spawn` returns only once the exec has happened (std waits for the
        // close-on-exec error channel to close), so the group exists by now.
        // On a pid that cannot have been reaped yet (the table is borrowed).
        let pidfd = Pidfd::open(pid).ok();
        table.insert(pid, Managed { waiter, pidfd });
        Ok(child)
    }

    /// Whether `pid` is a managed child that has not been reaped.
    pub fn holds(&self, pid: i32) -> bool {
        self.table.borrow().contains_key(&pid)
    }

    /// Sends `signal` to the process group led by managed child `pid`.
    ///
    /// Through the child's pidfd where the kernel can signal a group that way
    /// (Linux 6.9), else with `kill(-pid)`: both are safe because the leader
    /// is still unreaped, so its pid and group id cannot have been reused.
    ///
    /// # Errors
    /// `ESRCH` when `pid` is not a managed child or has been reaped already
    /// (nothing is sent), or the error of the system call.
    pub fn signal_group(&self, pid: i32, signal: Signal) -> io::Result<()> {
        let table = self.table.borrow();
        let Some(managed) = table.get(&pid) else {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        };
        if let (Some(fd), true) = (&managed.pidfd, self.pidfd_groups.get() != Some(false)) {
            let e = match fd.send(signal.number(), PIDFD_SIGNAL_PROCESS_GROUP) {
                Ok(()) => {
                    self.pidfd_groups.set(Some(true));
                    return Ok(());
                }
                Err(e) => e.raw_os_error().unwrap_or(0),
            };
            if e != libc::EINVAL && e != libc::ENOSYS {
                return Err(io::Error::from_raw_os_error(e));
            }
            // An older kernel: no group flag. Plain kill from now on.
            self.pidfd_groups.set(Some(false));
        }
        crate::sys::process::kill(-pid, signal.number())
    }

    /// Reaps every child that has exited, managed or not, without blocking.
    /// Task waiters are answered directly; entry exits are returned.
    pub fn drain(&self) -> Reaped {
        let mut reaped = Reaped::default();
        let mut table = self.table.borrow_mut();
        while let Some(pid) = peek_exited() {
            let managed = table.remove(&pid);
            if managed.is_some() {
                // When an entry's own process ends, what is left of its group is
                // killed, as a container's processes die with its PID 1. The
                // unreaped leader still holds the group id, so it is not reused.
                let _ = crate::sys::process::kill(-pid, libc::SIGKILL);
            }
            let exit = match reap(pid) {
                Some(exit) => exit,
                // Not reapable although just seen dead: nothing sensible is
                // left to do; stop rather than spin (the next SIGCHLD retries).
                None => break,
            };
            match managed.map(|m| m.waiter) {
                Some(Waiter::Entry { entry, instance }) => reaped.entries.push((entry, instance, exit)),
                Some(Waiter::Task(tx)) => {
                    let _ = tx.send(exit);
                }
                None => {
                    tracing::debug!("reaped orphan {pid} ({exit})");
                    reaped.orphans = reaped.orphans.saturating_add(1);
                }
            }
        }
        reaped
    }

    /// Reaps whatever has exited, without the table: only for the last resort
    /// after a panic, when nothing will read an exit status any more.
    pub fn reap_any_now() {
        while let Ok(Some(_)) = crate::sys::process::reap_nohang(-1) {}
    }

    /// Whether podinit has any child at all, managed or not, exited or not
    /// (`waitid(2)` with `WNOWAIT`: nothing is reaped). With none, nothing is
    /// below podinit either: an orphan is reparented to podinit (PID 1, or the
    /// child subreaper) before its parent can be reaped.
    pub fn has_children() -> bool {
        // An unknown error counts as children: the caller then looks for
        // them the long way.
        !matches!(peek(), Peek::NoChildren)
    }

    /// Whether any managed child is still registered.
    pub fn is_empty(&self) -> bool {
        self.table.borrow().is_empty()
    }
}

/// What `waitid(2)` with `WNOWAIT` sees among podinit's children, without
/// reaping any.
enum Peek {
    /// This child has exited and is left unreaped.
    Exited(i32),
    /// There are children, none of them exited.
    Running,
    /// There are no children at all (ECHILD).
    NoChildren,
    /// waitid failed otherwise (logged).
    Failed,
}

fn peek() -> Peek {
    loop {
        match crate::sys::process::peek_exited() {
            Ok(Some(pid)) => return Peek::Exited(pid),
            Ok(None) => return Peek::Running,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) if e.raw_os_error() == Some(libc::ECHILD) => return Peek::NoChildren,
            Err(e) => {
                tracing::warn!("waitid: {e}");
                return Peek::Failed;
            }
        }
    }
}

/// The pid of a child that has exited, left unreaped; `None` when none has
/// (or there are no children).
fn peek_exited() -> Option<i32> {
    match peek() {
        Peek::Exited(pid) => Some(pid),
        Peek::Running | Peek::NoChildren | Peek::Failed => None,
    }
}

/// Reaps `pid`, known to have exited, and decodes its raw status.
fn reap(pid: i32) -> Option<Exit> {
    let raw = loop {
        match crate::sys::process::reap_nohang(pid) {
            Ok(Some((r, raw))) if r == pid => break raw,
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            // Cannot happen after waitid saw it exit; consume it through
            // waitid itself, so that it never blocks the drain.
            _ => return reap_with_waitid(pid),
        }
    };
    Some(WaitStatus::from_raw(raw).exit().unwrap_or_else(|| {
        tracing::warn!("pid {pid}: wait status {raw:#x} is not an exit; counted as status 255");
        Exit::Code(255)
    }))
}

fn reap_with_waitid(pid: i32) -> Option<Exit> {
    let (code, status) = match crate::sys::process::reap_with_waitid(pid) {
        Ok(info) => info,
        Err(e) => {
            tracing::warn!("pid {pid} could not be reaped: {e}");
            return None;
        }
    };
    Some(match code {
        libc::CLD_EXITED => Exit::Code(status & 0xff),
        _ => Exit::Signal(status & 0x7f),
    })
}
