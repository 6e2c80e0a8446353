//! What runs in a child between fork and exec: the setup of every process
//! podinit starts ([`ChildSetup`]) and the handing over of a descriptor
//! ([`pass_fd`]). Which setup a process gets is `runtime/spawn.rs`'s.
//!
//! Between fork and exec only async-signal-safe calls are allowed
//! (signal-safety(7)): another thread of podinit's may have held the
//! allocator's or any other lock at the fork, and the child has only the
//! forking thread. So the closures here make system calls on data prepared
//! before the fork, read atomics, and build errors from an errno; they
//! never allocate, lock or log. Each call here is the libc function of the
//! same name (nix's forms are thin and allocate nothing).

use std::io;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::Arc;

use nix::unistd::{Gid, Uid};

/// The user a child runs as: supplementary groups, then gid, then uid
/// (dropping the uid first would forbid the rest).
#[derive(Debug, Clone)]
pub struct Credentials {
    uid: Uid,
    gid: Gid,
    groups: Vec<Gid>,
}

impl Credentials {
    /// `uid`, primary `gid` and supplementary `groups`.
    pub fn new(uid: u32, gid: u32, groups: &[u32]) -> Credentials {
        Credentials {
            uid: Uid::from_raw(uid),
            gid: Gid::from_raw(gid),
            groups: groups.iter().map(|&g| Gid::from_raw(g)).collect(),
        }
    }
}

/// What a child does before exec, in this order (each step only when
/// asked for; the first failure stops the start, and its error is what
/// `Command::spawn` returns).
#[derive(Debug, Clone, Default)]
pub struct ChildSetup {
    /// Make the child's process group the foreground group of the terminal
    /// on its stdin (`tcsetpgrp(3)`). In the child, not the parent: the
    /// program must not run (and read the terminal) before its group is in
    /// the foreground, the race tini's `isolate_child()` describes. SIGTTOU
    /// must still be blocked then (podinit's mask, emptied next), so that a
    /// background group may do it. No terminal after all (`ENOTTY`,
    /// `ENXIO`: it went away) is no reason to refuse the start, as in tini.
    pub foreground: bool,
    /// Signals to put back to their default disposition (bit N-1 for
    /// signal N), ascending, with the raw `rt_sigaction(2)`; then the
    /// signal mask is emptied (`rt_sigprocmask(2)`), always.
    pub reset_signals: u64,
    /// Written to `/proc/self/oom_score_adj` (decimal text), before the uid
    /// changes: lowering it needs `CAP_SYS_RESOURCE`. A failure is left for
    /// the parent to notice and report.
    pub oom_score_adj: Option<Vec<u8>>,
    /// `PR_SET_NO_NEW_PRIVS` (prctl(2)), before exec, so that the program
    /// and whatever it forks at once never run without it.
    pub no_new_privileges: bool,
    /// The user to become.
    pub user: Option<Credentials>,
    /// podinit's pid when the child must get SIGKILL on podinit's death
    /// (`PR_SET_PDEATHSIG`), 0 for none. Set after the user change, which
    /// would clear it, and checked against a death of podinit's between
    /// fork and prctl (then `ESRCH`).
    pub parent_death: u32,
}

/// Makes `cmd`'s child carry out `setup` between fork and exec, after what
/// `Command` itself does there (stdio, process group, SIGPIPE).
pub fn prepare(cmd: &mut Command, setup: ChildSetup) {
    // SAFETY: the closure runs between fork and exec and makes only
    // async-signal-safe system calls on `setup`, prepared before the fork;
    // the only descriptors it touches are stdin and one it opens and closes
    // itself.
    unsafe {
        cmd.pre_exec(move || {
            if setup.foreground && libc::tcsetpgrp(libc::STDIN_FILENO, nix::unistd::getpid().as_raw()) != 0 {
                let e = io::Error::last_os_error();
                if !matches!(e.raw_os_error(), Some(libc::ENOTTY | libc::ENXIO)) {
                    return Err(e);
                }
            }
            let mut reset = setup.reset_signals;
            while reset != 0 {
                // trailing_zeros < 64: the signal number fits.
                crate::sys::signal::child_set_default(reset.trailing_zeros() as libc::c_int + 1);
                reset &= reset - 1;
            }
            crate::sys::signal::child_unblock_all()?;
            if let Some(value) = &setup.oom_score_adj {
                use nix::fcntl::OFlag;
                let path = c"/proc/self/oom_score_adj";
                let mode = nix::sys::stat::Mode::empty();
                if let Ok(fd) = nix::fcntl::open(path, OFlag::O_WRONLY | OFlag::O_CLOEXEC, mode) {
                    let _ = nix::unistd::write(BorrowedFd::borrow_raw(fd), value);
                    let _ = nix::unistd::close(fd);
                }
            }
            if setup.no_new_privileges {
                nix::sys::prctl::set_no_new_privs()?;
            }
            if let Some(u) = &setup.user {
                nix::unistd::setgroups(&u.groups)?;
                nix::unistd::setgid(u.gid)?;
                nix::unistd::setuid(u.uid)?;
            }
            if setup.parent_death != 0 {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL)?;
                // podinit died before the prctl: no signal will come.
                if u32::try_from(nix::unistd::getppid().as_raw()).ok() != Some(setup.parent_death) {
                    return Err(io::Error::from_raw_os_error(libc::ESRCH));
                }
            }
            Ok(())
        });
    }
}

/// What the child returns when the descriptor number it must fill is no
/// longer the one the parent saw ([`FdHandoff`]); the parent then tries again.
pub const HANDOFF_RACED: i32 = libc::EBUSY;

/// A descriptor handed to a child as its descriptor `target`, open across
/// exec: the `fd` probe's notification descriptor (s6's notification-fd).
///
/// The child cannot simply `dup2` onto `target` between fork and exec: the
/// standard library reports a failed exec through a close-on-exec pipe of its
/// own, opened just before the fork at the lowest free numbers, and when that
/// pipe is `target` the `dup2` closes it: the error is lost, and a program
/// that was not found looks started. So the number is settled in the parent,
/// right before each fork ([`FdHandoff::hold`]): if `target` is free, the
/// parent puts the descriptor there itself (close-on-exec, so nothing else
/// keeps it) and no pipe can take it; the child only clears close-on-exec.
/// If `target` is taken by a descriptor of podinit's, the parent notes which
/// open file it is (device and inode), and the child `dup2`s onto it only
/// after checking it is still that one: a descriptor closed by another
/// thread in between, its number taken by the pipe, makes the child give up
/// with [`HANDOFF_RACED`] (reported through that intact pipe), and the parent
/// tries again.
#[derive(Debug)]
pub struct FdHandoff {
    source: RawFd,
    target: i32,
    /// What the parent saw at `target` before the fork, for the child.
    seen: Arc<Seen>,
}

/// [`FdHandoff`]'s note from the parent to the child: atomics, which the
/// child may read between fork and exec (no lock).
#[derive(Debug, Default)]
struct Seen {
    /// The parent put the descriptor at `target` itself.
    placed: AtomicBool,
    /// Otherwise the device and inode of the open file at `target`.
    dev: AtomicU64,
    ino: AtomicU64,
}

/// The parent's copy at `target` while a fork is under way; closed when
/// dropped, after it.
#[derive(Debug)]
pub struct Held {
    _copy: Option<OwnedFd>,
}

impl FdHandoff {
    /// Settles `target` for the next fork (see [`FdHandoff`]); what it
    /// returns is dropped once the fork is done.
    pub fn hold(&self) -> Held {
        // Duplicates the descriptor we keep open (the pipe's write end)
        // onto the lowest free number >= target.
        let copy = crate::sys::fd::duplicate_at_least(self.source, self.target).ok();
        let placed = copy.as_ref().is_some_and(|c| std::os::fd::AsRawFd::as_raw_fd(c) == self.target);
        self.seen.placed.store(placed, SeqCst);
        if placed {
            return Held { _copy: copy };
        }
        drop(copy);
        let (dev, ino) = crate::sys::fd::identity(self.target).unwrap_or((0, 0));
        self.seen.dev.store(dev, SeqCst);
        self.seen.ino.store(ino, SeqCst);
        Held { _copy: None }
    }
}

/// Makes `source` (a descriptor of podinit's, close-on-exec) the child's
/// descriptor `target`, open across exec; spawn with
/// `runtime::spawn::spawn_passing` and the handoff returned, which settles
/// `target` before the fork ([`FdHandoff`]). `source` must stay open until
/// the child is spawned.
pub fn pass_fd(cmd: &mut Command, source: RawFd, target: i32) -> FdHandoff {
    let seen = Arc::new(Seen::default());
    let in_child = Arc::clone(&seen);
    // SAFETY: the closure runs between fork and exec and makes only raw,
    // async-signal-safe system calls (fstat, dup2, fcntl) and atomic loads;
    // it replaces descriptor `target` only once it has checked that it is
    // not the standard library's error pipe (see `FdHandoff`).
    unsafe {
        cmd.pre_exec(move || {
            if in_child.placed.load(SeqCst) || source == target {
                // Already at `target`: open it across exec.
                crate::sys::fd::keep_across_exec(target)?;
            } else {
                let seen = (in_child.dev.load(SeqCst), in_child.ino.load(SeqCst));
                // Free now, or still the parent's descriptor: not the
                // standard library's error pipe, so it may be replaced.
                if crate::sys::fd::identity(target).is_some_and(|now| now != seen) {
                    return Err(io::Error::from_raw_os_error(HANDOFF_RACED));
                }
                nix::unistd::dup2(source, target)?;
            }
            Ok(())
        });
    }
    FdHandoff { source, target, seen }
}
