//! Processes: signals sent to them (by pid, by group, through a pidfd),
//! waiting for children, podinit's own ids, prctl and resource limits.
//!
//! Signals are the kernel's integers (any number up to `SIGRTMAX`, `0` to
//! probe), and wait statuses are handed back raw for the caller to decode:
//! a wrapper's signal enum that stops at 31 would drop real-time signals and
//! fail to decode the status of a child they killed.
//!
//! The three waits here may be called by the reaper alone
//! (`runtime/reaper.rs`, one waiter for every child; clippy.toml forbids
//! them elsewhere): any second waiter steals exit statuses from it.

// The waits wrap the calls clippy.toml keeps for the reaper (see above).
#![allow(clippy::disallowed_methods)]

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `pidfd_send_signal(2)` flag: signal the process group of the pidfd's
/// process (Linux 6.9).
pub const PIDFD_SIGNAL_PROCESS_GROUP: libc::c_uint = 1 << 2;

/// Sends `signal` to `pid` as `kill(2)` does: a negative `pid` is a process
/// group, `-1` every process podinit may signal, `signal` 0 only checks.
///
/// # Errors
/// `ESRCH` for no such process or group, `EPERM`, `EINVAL` for a bad signal.
#[inline]
pub fn kill(pid: i32, signal: i32) -> io::Result<()> {
    // SAFETY: kill(2) takes two integers and touches no memory of ours.
    if unsafe { libc::kill(pid, signal) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// A pidfd (`pidfd_open(2)`, Linux 5.3): a handle on one process that a
/// recycled pid cannot redirect. A signal sent through it reaches that
/// process or, once it has been reaped, nothing (`ESRCH`).
#[derive(Debug)]
pub struct Pidfd(OwnedFd);

impl Pidfd {
    /// A pidfd of whatever process has `pid` now.
    ///
    /// # Errors
    /// `ESRCH` for no such process, `ENOSYS` on a kernel without pidfds,
    /// or `EMFILE` when podinit has no descriptor left.
    pub fn open(pid: i32) -> io::Result<Pidfd> {
        // SAFETY: pidfd_open(2) takes two integers; the returned descriptor
        // is owned from here on.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        match i32::try_from(fd) {
            // SAFETY: a fresh descriptor that nothing else owns.
            Ok(fd) if fd >= 0 => Ok(Pidfd(unsafe { OwnedFd::from_raw_fd(fd) })),
            _ => Err(io::Error::last_os_error()),
        }
    }

    /// Sends `signal` to the process (0: only checks that it is not reaped
    /// yet; a zombie still counts), with `flags` for `pidfd_send_signal(2)`
    /// (0, or [`PIDFD_SIGNAL_PROCESS_GROUP`]).
    ///
    /// # Errors
    /// `ESRCH` once the process has been reaped, `EINVAL` for a flag the
    /// kernel does not know, `ENOSYS` on a kernel without the call.
    pub fn send(&self, signal: i32, flags: libc::c_uint) -> io::Result<()> {
        // SAFETY: pidfd_send_signal(2) on a descriptor we own; no siginfo.
        let r = unsafe {
            libc::syscall(
                libc::SYS_pidfd_send_signal,
                self.0.as_raw_fd(),
                signal,
                std::ptr::null::<libc::siginfo_t>(),
                flags,
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Sends `signal` to the process; 0 checks that it is not reaped yet.
    ///
    /// # Errors
    /// As [`Pidfd::send`].
    pub fn signal(&self, signal: i32) -> io::Result<()> {
        self.send(signal, 0)
    }
}

/// The pid of a child of podinit's that has exited, left unreaped
/// (`waitid(P_ALL, WEXITED | WNOHANG | WNOWAIT)`); `Ok(None)` when there are
/// children and none has exited. The reaper's alone (see the module).
///
/// # Errors
/// `ECHILD` when podinit has no children at all, `EINTR`.
pub fn peek_exited() -> io::Result<Option<i32>> {
    // SAFETY: siginfo_t is plain data; all zeros is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
    // SAFETY: waitid(2) writes into a locally owned siginfo_t.
    if unsafe { libc::waitid(libc::P_ALL, 0, &mut info, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: waitid filled in a SIGCHLD siginfo (or left it zero).
    let pid = unsafe { info.si_pid() };
    Ok((pid > 0).then_some(pid))
}

/// Reaps `pid` (`-1`: any child) if it has exited (`waitpid(2)` with
/// `WNOHANG`): `Ok(Some((pid, raw wait status)))`, or `Ok(None)` when it
/// has not exited. The reaper's alone (see the module).
///
/// # Errors
/// `ECHILD` when `pid` is no unreaped child of podinit's, `EINTR`.
pub fn reap_nohang(pid: i32) -> io::Result<Option<(i32, i32)>> {
    let mut raw = 0;
    // SAFETY: waitpid(2) writes into a local integer.
    match unsafe { libc::waitpid(pid, &mut raw, libc::WNOHANG) } {
        r if r > 0 => Ok(Some((r, raw))),
        0 => Ok(None),
        _ => Err(io::Error::last_os_error()),
    }
}

/// Reaps `pid` through `waitid(P_PID, WEXITED | WNOHANG)`: its `si_code`
/// (`CLD_EXITED`, `CLD_KILLED`, `CLD_DUMPED`) and `si_status` (the exit
/// status or the signal number), both 0 when it has not exited. The
/// reaper's alone (see the module).
///
/// # Errors
/// `ECHILD` when `pid` is no unreaped child of podinit's, `EINTR`.
pub fn reap_with_waitid(pid: i32) -> io::Result<(i32, i32)> {
    // SAFETY: siginfo_t is plain data; all zeros is a valid value.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: waitid(2) writes into a locally owned siginfo_t; pid_t fits
    // id_t for a positive pid.
    let r =
        unsafe { libc::waitid(libc::P_PID, pid.unsigned_abs(), &mut info, libc::WEXITED | libc::WNOHANG) };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: waitid filled in a SIGCHLD siginfo (or left it zero).
    let status = unsafe { info.si_status() };
    Ok((info.si_code, status))
}

/// The process group of `pid` (`getpgid(2)`).
///
/// # Errors
/// `ESRCH` when there is no such process.
#[inline]
pub fn process_group(pid: i32) -> io::Result<i32> {
    Ok(nix::unistd::getpgid(Some(nix::unistd::Pid::from_raw(pid)))?.as_raw())
}

/// podinit's effective user id (`geteuid(2)`, which cannot fail).
#[inline]
pub fn euid() -> u32 {
    nix::unistd::geteuid().as_raw()
}

/// Makes podinit the child subreaper of what it starts (`prctl(2)`
/// `PR_SET_CHILD_SUBREAPER`): orphans below it are reparented to it rather
/// than to the PID 1 outside.
///
/// # Errors
/// `EINVAL` on a kernel older than 3.4. The error is nix's, whose text
/// names the errno (`EINVAL: Invalid argument`).
pub fn set_child_subreaper() -> Result<(), nix::errno::Errno> {
    nix::sys::prctl::set_child_subreaper(true)
}

/// podinit's soft limit on open descriptors (`RLIMIT_NOFILE`, a count;
/// `RLIM_INFINITY` is `u64::MAX`).
///
/// # Errors
/// The `getrlimit(2)` error (none is expected for this resource).
pub fn open_files_limit() -> io::Result<u64> {
    let (soft, _) = nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)?;
    Ok(soft)
}
