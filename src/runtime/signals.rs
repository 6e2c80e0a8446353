//! The signal dispositions of podinit itself and of its children.
//!
//! podinit never runs code of its own in a signal handler: signal-hook turns
//! each delivery into a message on the event loop, and every handler runs on
//! one thread that does nothing else ([`confine_handlers`]). The one function here that
//! must be async-signal-safe is [`reset_for_child`], which runs between fork and
//! exec and therefore makes raw system calls only.

/// Called once at start-up: every signal that podinit's own parent left
/// ignored (nohup, a shell's background job) goes back to default, and the mask
/// is emptied. SIGPIPE stays ignored for podinit itself: a closed stdout must
/// give EPIPE, not death. Children reset everything anyway
/// ([`reset_for_child`]); this is for podinit's own sake (an ignored SIGTERM
/// would be one podinit never hears of).
pub fn reset_inherited() {
    // The kernel lists the ignored ones: one read instead of a query per signal.
    let ignored = crate::procfs::read("/proc/self/status").ok().and_then(|s| {
        let hex = s.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
        u64::from_str_radix(hex.trim(), 16).ok()
    });
    // SAFETY: plain sigaction/sigprocmask calls on locally owned structures,
    // before any thread or handler exists.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..=libc::SIGRTMAX() {
            let bit = 1u64 << (sig - 1);
            let was_ignored = match ignored {
                Some(mask) => mask & bit != 0,
                None => {
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
                }
            };
            if was_ignored && sig != libc::SIGPIPE {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
}

/// Runs every signal handler podinit installs on one thread of its own,
/// `podinit-signals`, which does nothing else: `caught` (the signals podinit
/// will catch) is blocked in the calling thread, and so in every thread it
/// starts afterwards, and unblocked in that one thread only. Call it before
/// any other thread is started and before the handlers are installed; a
/// signal that arrives in between waits, pending, for the thread.
///
/// Why: a thread that can take a signal runs the handler of the next one as
/// soon as the last returns. A flood (real-time signals queue, up to
/// `RLIMIT_SIGPENDING` of them, and the kernel takes each one off that queue
/// with a walk along it) then keeps the thread in handlers for minutes after
/// the flood has stopped. On the signal thread that delays nothing: the event
/// loop goes on reaping, forwarding and ending the pod on its own thread. The
/// main thread's mask also keeps a pending signal from failing its `fork`
/// over and over (the kernel restarts a fork that a signal interrupts).
/// Children are unaffected: [`reset_for_child`] empties the mask they inherit.
///
/// # Errors
/// The thread could not be started (the mask is then put back: the handlers
/// run on whichever thread the kernel picks, as in any program).
pub fn confine_handlers(caught: impl IntoIterator<Item = libc::c_int>) -> std::io::Result<()> {
    // SAFETY: sigemptyset/sigaddset on a local set, pthread_sigmask on the
    // calling thread only.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in caught {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    let spawned = std::thread::Builder::new().name("podinit-signals".into()).spawn(move || {
        // SAFETY: unblocks in this thread only; pause() just waits for the
        // next handler to have run.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            loop {
                libc::pause();
            }
        }
    });
    match spawned {
        Ok(_) => Ok(()),
        Err(e) => {
            // SAFETY: as above, the calling thread's mask only.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
            Err(e)
        }
    }
}

/// Signals about podinit itself that must neither stop nor kill it, ignored
/// for podinit only (children reset them before exec like every other
/// signal): SIGTSTP, SIGTTIN, SIGTTOU (an init that stops, with its children
/// running, helps no one; with a terminal the first main owns the foreground
/// and podinit must not be stopped when it writes to the terminal or hands it
/// back), and SIGXCPU and SIGXFSZ, which the kernel sends when podinit itself
/// passes its CPU time or file size limit (forwarding them would kill an
/// innocent main; ignored, a write past the limit fails instead).
pub fn ignore_own_stops_and_limits() {
    // SAFETY: setting a signal to SIG_IGN installs no handler code.
    unsafe {
        for sig in OWN_STOPS_AND_LIMITS {
            libc::signal(sig, libc::SIG_IGN);
        }
    }
}

/// The signals [`ignore_own_stops_and_limits`] ignores.
const OWN_STOPS_AND_LIMITS: [i32; 5] =
    [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU, libc::SIGXCPU, libc::SIGXFSZ];

/// Every signal podinit itself may have ignored once [`reset_inherited`] and
/// [`ignore_own_stops_and_limits`] have run: SIGPIPE (Rust's runtime ignores
/// it), those five, and the C library's own 32, 33 and 34, which libc's
/// `sigaction` refuses to touch, so that one inherited ignored (a parent that
/// started podinit with `posix_spawn` leaves them so) stays ignored in
/// podinit. Every other signal is at its default or has a handler, and exec
/// resets a handler: so these nine are all a child must put back.
const IGNORED_BY_PODINIT: [i32; 9] =
    [libc::SIGPIPE, libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU, libc::SIGXCPU, libc::SIGXFSZ, 32, 33, 34];

/// The kernel's `struct sigaction` for `rt_sigaction(2)` (handler, flags,
/// restorer, mask on x86_64 and aarch64), all zero: SIG_DFL, no flags, empty
/// mask.
const KERNEL_SIGACTION_DFL: [u64; 4] = [0; 4];
/// `sizeof(sigset_t)` as the kernel counts it: 64 signals.
const KERNEL_SIGSET_SIZE: usize = 8;

/// Puts every signal disposition back to default and empties the signal mask.
///
/// Runs in the child between fork and exec, so it makes raw system calls only
/// (no allocation, no locks). Handlers are reset by exec anyway; what survives
/// exec is an *ignored* disposition and the mask, so both are cleared here:
/// the mask, and the nine signals podinit may have ignored
/// ([`IGNORED_BY_PODINIT`]; it put every other signal it inherited ignored
/// back to default at start-up, [`reset_inherited`]): nine system calls where
/// one per signal would be 62.
/// It calls the kernel directly rather than libc's `sigaction`. Children are
/// never started with `posix_spawn`, which would leave the C library's own
/// signals (32, 33, and 34 on musl) *ignored* in the child (`spawn.rs`).
///
/// # Errors
/// The errno of a failing `rt_sigprocmask`; `rt_sigaction` cannot fail for
/// these nine signals.
pub fn reset_for_child() -> std::io::Result<()> {
    // SAFETY: raw rt_sigaction/rt_sigprocmask system calls on constant,
    // correctly sized kernel structures; valid between fork and exec.
    unsafe {
        for sig in IGNORED_BY_PODINIT {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                KERNEL_SIGACTION_DFL.as_ptr(),
                std::ptr::null_mut::<u64>(),
                KERNEL_SIGSET_SIZE,
            );
        }
        let empty: u64 = 0;
        let r = libc::syscall(
            libc::SYS_rt_sigprocmask,
            libc::SIG_SETMASK,
            &empty as *const u64,
            std::ptr::null_mut::<u64>(),
            KERNEL_SIGSET_SIZE,
        );
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
