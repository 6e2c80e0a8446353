//! The one place that waits for children (STYLE.md "One waiter for every child").
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
//! A managed process is peeked at with `WNOWAIT` before it is reaped, so that
//! what is left of its process group can be killed while the dead leader still
//! holds the group's id: after the reap that id could be reused.

// The one module allowed to wait (clippy.toml forbids it everywhere else).
#![allow(clippy::disallowed_methods)]

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::process::{Child, Command};

use nix::errno::Errno;
use nix::sys::signal::{killpg, Signal};
use nix::sys::wait::{waitid, waitpid, Id, WaitPidFlag, WaitStatus};
use nix::unistd::Pid;
use tokio::sync::oneshot;

use crate::exit_status::Exit;
use crate::lifecycle::{EntryId, Instance};

/// Who wants to know that a pid exited.
#[derive(Debug)]
pub enum Waiter {
    /// A process entry's instance: the exit becomes a lifecycle event.
    Entry { entry: EntryId, instance: Instance },
    /// An exec probe or hook, waiting on this channel.
    Task(oneshot::Sender<Exit>),
}

/// The child table.
#[derive(Debug, Default)]
pub struct Reaper {
    table: RefCell<HashMap<i32, Waiter>>,
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
    /// The error of `Command::spawn` (the program not found, not executable...).
    pub fn spawn(&self, cmd: &mut Command, waiter: Waiter) -> io::Result<Child> {
        let mut table = self.table.borrow_mut();
        let child = cmd.spawn()?;
        let pid = i32::try_from(child.id()).map_err(|_| io::Error::other("pid out of range"))?;
        // The child also does this itself; doing it here too closes the window
        // in which a signal to the group would find no group yet.
        let _ = nix::unistd::setpgid(Pid::from_raw(pid), Pid::from_raw(pid));
        table.insert(pid, waiter);
        Ok(child)
    }

    /// Reaps every child that has exited, managed or not, without blocking.
    /// Task waiters are answered directly; entry exits are returned.
    pub fn drain(&self) -> Reaped {
        let mut reaped = Reaped::default();
        let mut table = self.table.borrow_mut();
        loop {
            let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
            let pid = match waitid(Id::All, flags) {
                Ok(WaitStatus::StillAlive) | Err(Errno::ECHILD) => break,
                Ok(status) => match status.pid() {
                    Some(pid) => pid,
                    None => break,
                },
                Err(Errno::EINTR) => continue,
                Err(e) => {
                    tracing::debug!("waitid: {e}");
                    break;
                }
            };
            let managed = table.remove(&pid.as_raw());
            if managed.is_some() {
                // SPEC §3: when an entry's own process ends, what is left of its
                // group is killed, as a container's processes die with its PID 1.
                let _ = killpg(pid, Signal::SIGKILL);
            }
            let exit = loop {
                match waitpid(pid, Some(WaitPidFlag::WNOHANG)) {
                    Ok(WaitStatus::Exited(_, code)) => break Some(Exit::Code(code)),
                    Ok(WaitStatus::Signaled(_, sig, _)) => break Some(Exit::Signal(sig as i32)),
                    Err(Errno::EINTR) => continue,
                    _ => break None,
                }
            };
            // waitid said `pid` has exited, so this cannot fail; if it ever did,
            // looping would spin on the same pid: stop, the next SIGCHLD retries.
            let Some(exit) = exit else { break };
            match managed {
                Some(Waiter::Entry { entry, instance }) => reaped.entries.push((entry, instance, exit)),
                Some(Waiter::Task(tx)) => {
                    let _ = tx.send(exit);
                }
                None => {
                    tracing::debug!("reaped orphan {pid} ({exit})");
                    reaped.orphans += 1;
                }
            }
        }
        reaped
    }

    /// Reaps whatever has exited, without the table: only for the last resort
    /// after a panic, when nothing will read an exit status any more.
    pub fn reap_any_now() {
        while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            if status == WaitStatus::StillAlive {
                break;
            }
        }
    }

    /// Whether any managed child is still registered.
    pub fn is_empty(&self) -> bool {
        self.table.borrow().is_empty()
    }
}
