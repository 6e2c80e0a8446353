//! Signals as they concern podinit itself: sets, the calling thread's mask,
//! dispositions, and taking a blocked signal off the kernel's queue. Which
//! signals podinit blocks, takes or resets is `runtime/signals.rs`'s.
//!
//! All through `libc`: nix's signal sets and `sigaction` take its `Signal`
//! enum, which has no real-time signals, and nix has no `sigwaitinfo` and no
//! raw `rt_sig*` calls.
//!
//! The two `child_*` functions run between fork and exec, so they are raw
//! system calls only (no allocation, no lock), and call the kernel rather
//! than libc's `sigaction`, which refuses the C library's own signals (32,
//! 33, 34 on musl) that a child may have to put back.

use std::io;

/// A set of signals (`sigset_t`), any number from 1 to `SIGRTMAX`.
#[derive(Clone, Copy)]
pub struct SigSet(libc::sigset_t);

impl SigSet {
    /// The empty set (`sigemptyset(3)`).
    pub fn empty() -> SigSet {
        // SAFETY: sigset_t is plain data; sigemptyset initialises it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            SigSet(set)
        }
    }

    /// Every signal (`sigfillset(3)`).
    pub fn full() -> SigSet {
        // SAFETY: sigset_t is plain data; sigfillset initialises it.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut set);
            SigSet(set)
        }
    }

    /// Adds signal `sig` (`sigaddset(3)`); a number out of range (or one
    /// of the C library's own, which glibc refuses) changes nothing.
    pub fn add(&mut self, sig: libc::c_int) {
        // SAFETY: sigaddset on a set we own.
        unsafe { libc::sigaddset(&mut self.0, sig) };
    }
}

/// Makes `set` the calling thread's signal mask (`pthread_sigmask(3)`
/// `SIG_SETMASK`). Threads started afterwards inherit it. Cannot fail with
/// a valid `how`, which this is.
pub fn set_thread_mask(set: &SigSet) {
    // SAFETY: changes the calling thread's mask only, from a set we own.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &set.0, std::ptr::null_mut()) };
}

/// Adds `set` to the calling thread's signal mask (`SIG_BLOCK`).
pub fn block_in_thread(set: &SigSet) {
    // SAFETY: as in `set_thread_mask`.
    unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set.0, std::ptr::null_mut()) };
}

/// Takes `set` out of the calling thread's signal mask (`SIG_UNBLOCK`).
pub fn unblock_in_thread(set: &SigSet) {
    // SAFETY: as in `set_thread_mask`.
    unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set.0, std::ptr::null_mut()) };
}

/// Waits for one signal of `set` (which must be blocked in every thread)
/// and takes it off the queue (`sigwaitinfo(2)`): its number, or `None`
/// when the wait was interrupted (`EINTR`).
pub fn wait(set: &SigSet) -> Option<libc::c_int> {
    // SAFETY: reads a set we own; no siginfo is asked for.
    let sig = unsafe { libc::sigwaitinfo(&set.0, std::ptr::null_mut()) };
    (sig > 0).then_some(sig)
}

/// Takes one signal of `set` (blocked in the calling thread) off the
/// kernel's queue, waiting at most `timeout` (`None`: as long as it takes;
/// capped at 2^31 - 1 s, 68 years); `None` when the time ran out or the
/// wait was interrupted.
///
/// The system call is made directly: musl's `sigtimedwait` retries an
/// interrupted wait (podinit stopped and continued, a debugger attached, its
/// cgroup frozen) with the same relative timeout, so every interruption
/// would start a grace period's wait over. Here the caller gets `None` and
/// computes the timeout again from its deadline.
pub fn timed_wait(set: &SigSet, timeout: Option<std::time::Duration>) -> Option<libc::c_int> {
    // Capped at 2^31 - 1 s (68 years), which fits every width of time_t.
    let limit = timeout.map(|t| libc::timespec {
        tv_sec: t.as_secs().min(0x7fff_ffff).try_into().unwrap_or(0),
        tv_nsec: t.subsec_nanos().into(),
    });
    let limit_ptr = limit.as_ref().map_or(std::ptr::null(), |l| l as *const libc::timespec);
    // SAFETY: rt_sigtimedwait(2) reads the first KERNEL_SIGSET_SIZE bytes of
    // a set and a timespec owned by the caller and this frame (the kernel's
    // timespec on 64-bit targets); no siginfo is asked for.
    let sig = unsafe {
        libc::syscall(
            libc::SYS_rt_sigtimedwait,
            &set.0 as *const libc::sigset_t,
            std::ptr::null_mut::<libc::siginfo_t>(),
            limit_ptr,
            KERNEL_SIGSET_SIZE,
        )
    };
    libc::c_int::try_from(sig).ok().filter(|&s| s > 0)
}

/// The highest signal number (`SIGRTMAX`: 64 on Linux's glibc and musl).
pub fn max() -> libc::c_int {
    libc::SIGRTMAX()
}

/// Whether `sig`'s disposition is "ignore" (`sigaction(2)`, asked only);
/// `false` when the C library will not say (its own signals on glibc).
pub fn is_ignored(sig: libc::c_int) -> bool {
    // SAFETY: sigaction is plain data, all zeros a valid value; sigaction(2)
    // only writes into it.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// Puts `sig` back to its default disposition (`sigaction(2)`: `SIG_DFL`,
/// no flags, empty mask). A signal the C library keeps for itself is left
/// as it is.
pub fn set_default(sig: libc::c_int) {
    // SAFETY: sigaction(2) reads a locally owned, fully initialised struct
    // (all zeros, then SIG_DFL: no flags, an empty mask).
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
    }
}

/// The kernel's `struct sigaction` for `rt_sigaction(2)` (handler, flags,
/// restorer, mask on x86_64 and aarch64), all zero: SIG_DFL, no flags, empty
/// mask.
const KERNEL_SIGACTION_DFL: [u64; 4] = [0; 4];
/// `sizeof(sigset_t)` as the kernel counts it: 64 signals.
const KERNEL_SIGSET_SIZE: usize = 8;

/// In a child between fork and exec: puts `sig` back to its default
/// disposition with the raw `rt_sigaction(2)`, which takes any signal, the
/// C library's own included. Async-signal-safe. Cannot fail for a valid
/// signal other than SIGKILL and SIGSTOP.
#[inline]
pub fn child_set_default(sig: libc::c_int) {
    // SAFETY: a raw rt_sigaction system call on a constant, correctly sized
    // kernel structure; the old action is not asked for.
    unsafe {
        libc::syscall(
            libc::SYS_rt_sigaction,
            sig,
            KERNEL_SIGACTION_DFL.as_ptr(),
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET_SIZE,
        );
    }
}

/// In a child between fork and exec: empties the signal mask with the raw
/// `rt_sigprocmask(2)`. Async-signal-safe.
///
/// # Errors
/// The errno of a failing `rt_sigprocmask`.
#[inline]
pub fn child_unblock_all() -> io::Result<()> {
    let empty: u64 = 0;
    // SAFETY: a raw rt_sigprocmask system call reading a local, correctly
    // sized kernel set; the old mask is not asked for.
    let r = unsafe {
        libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &empty as *const u64,
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET_SIZE,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
