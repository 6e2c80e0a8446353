//! The signal dispositions of podinit itself and of its children.
//!
//! podinit installs no signal handler of its own: every signal it catches is
//! blocked in every thread ([`block_caught`]) and taken off the kernel's
//! queue, in a pod by one thread that does nothing else, which hands it to
//! the event loop ([`take_on_signal_thread`]), in a plain init by its one
//! thread itself ([`wait_for`]). What a child puts back between fork and
//! exec is decided here ([`child_resets`]) and done by `sys::child`. The
//! system calls themselves are `sys::signal`'s.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::sys::signal::{self as sys_signal, SigSet};

/// Called once at start-up: every signal that podinit's own parent left
/// ignored (nohup, a shell's background job) goes back to default. The mask
/// is left as inherited, so that a signal the parent left blocked and pending
/// waits for [`take_on_signal_thread`], which sets the whole mask. SIGPIPE
/// stays ignored for podinit itself: a closed stdout must give EPIPE, not
/// death. Children reset everything anyway
/// ([`child_resets`]); this is for podinit's own sake (an ignored SIGTERM
/// would be one podinit never hears of).
pub fn reset_inherited() {
    // The kernel lists the ignored ones: one read instead of a query per signal.
    let ignored = crate::procfs::read("/proc/self/status").ok().and_then(|s| {
        let hex = s.lines().find_map(|l| l.strip_prefix("SigIgn:"))?;
        u64::from_str_radix(hex.trim(), 16).ok()
    });
    // Unknown: as if all three were ignored, so that every child resets them.
    INHERITED_IGNORED.store(ignored.map_or(C_LIBRARY_SIGNALS, |m| m & C_LIBRARY_SIGNALS), Ordering::Relaxed);
    // Before any other thread but the log thread (which blocks every
    // signal) exists.
    for sig in 1..=sys_signal::max() {
        let bit = 1u64 << (sig - 1);
        let was_ignored = match ignored {
            Some(mask) => mask & bit != 0,
            None => sys_signal::is_ignored(sig),
        };
        if was_ignored && sig != libc::SIGPIPE {
            sys_signal::set_default(sig);
        }
    }
}

/// Takes every signal podinit catches on a thread of its own,
/// `podinit-signals`, and hands them to the event loop as [`Caught`].
///
/// The calling thread's mask becomes `caught` (the signals podinit acts on
/// or forwards) and podinit's own stops and limits ([`block_caught`]),
/// whatever podinit inherited: what the parent blocked besides is unblocked,
/// and a caught signal it left blocked and pending stays pending for the
/// signal thread rather than taking its default action. Every thread
/// started afterwards inherits that mask: no thread ever runs a handler for
/// one, and none is installed. The signal thread takes them off the
/// kernel's queue with `sigwaitinfo(2)`, as tini does
/// with `sigtimedwait`. Call it first, before any other thread is started: a
/// signal that arrives before the thread waits for it, pending.
///
/// Why a blocked set rather than handlers: a blocked signal is queued even
/// when podinit is PID 1 and the signal's disposition is the default one
/// (the kernel drops such a signal for an init only when it is not blocked,
/// pid_namespaces(7)), so no handler is needed for any of them; and
/// installing the ~50 handlers that forwarding needs cost two `rt_sigaction`
/// calls each at start-up. Why a thread of its own: a flood of real-time
/// signals (they queue, up to `RLIMIT_SIGPENDING` of them, and the kernel
/// walks the queue to take each one off) keeps whoever takes them busy for
/// as long as the queue takes to drain; here that is this thread, while the
/// event loop goes on reaping, forwarding and ending the pod. The main
/// thread's mask also keeps a pending signal from failing its `fork` over and
/// over (the kernel restarts a fork that a signal interrupts). Children are
/// unaffected: each empties the mask it inherits (`sys::child`).
///
/// # Errors
/// The thread could not be started. The caught signals are then unblocked
/// again and the caller must give up (podinit cannot hear them).
pub fn take_on_signal_thread(caught: impl IntoIterator<Item = libc::c_int>) -> std::io::Result<Caught> {
    let set = block_caught(caught);
    let shared = Arc::new(Pending { bits: AtomicU64::new(0), wake: tokio::sync::Notify::new() });
    let to_loop = Arc::clone(&shared);
    let spawned = std::thread::Builder::new().name("podinit-signals".into()).spawn(move || loop {
        // One signal of a set every thread blocks.
        if let Some(sig) = sys_signal::wait(&set).filter(|s| (1..=64).contains(s)) {
            to_loop.bits.fetch_or(1 << (sig - 1), Ordering::AcqRel);
            to_loop.wake.notify_one();
        }
    });
    match spawned {
        Ok(_) => Ok(Caught { shared, ready: 0 }),
        Err(e) => {
            sys_signal::unblock_in_thread(&set);
            Err(e)
        }
    }
}

/// Makes the calling thread's signal mask exactly `caught` plus podinit's
/// own stops and limits (`OWN_STOPS_AND_LIMITS`), and returns the set of
/// `caught` alone, the one to wait for: what the parent blocked besides is
/// unblocked, and a caught signal it left blocked and pending stays pending
/// for whoever waits for the set ([`take_on_signal_thread`], or [`wait_for`]
/// on the plain init's one thread). Threads started afterwards inherit the
/// mask.
pub fn block_caught(caught: impl IntoIterator<Item = libc::c_int>) -> SigSet {
    let mut set = SigSet::empty();
    for sig in caught {
        set.add(sig);
    }
    let mut mask = set;
    for sig in OWN_STOPS_AND_LIMITS {
        mask.add(sig);
    }
    sys_signal::set_thread_mask(&mask);
    set
}

/// Takes one signal of `set` (blocked in the calling thread, [`block_caught`])
/// off the kernel's queue, waiting at most `timeout` (`None`: as long as it
/// takes); `None` when the time ran out or the wait was interrupted. The
/// kernel hands out the lowest-numbered pending signal first, so SIGCHLD and
/// SIGTERM always come before any real-time signal: a flood of those never
/// delays reaping or termination (`sigtimedwait(2)`, as tini waits; an
/// interrupted wait is not restarted, `sys::signal::timed_wait`).
pub fn wait_for(set: &SigSet, timeout: Option<std::time::Duration>) -> Option<libc::c_int> {
    sys_signal::timed_wait(set, timeout)
}

/// The signals the signal thread has taken, for the event loop
/// ([`take_on_signal_thread`]). Each kind is reported once however often it
/// arrived since the last look: the kernel itself merges a standard signal
/// that is already pending, and a burst of one real-time signal between two
/// looks is reported once.
pub struct Caught {
    shared: Arc<Pending>,
    /// Taken from `shared.bits` and not yet handed out (bit N-1 for signal N).
    ready: u64,
}

/// What the signal thread and the event loop share.
struct Pending {
    /// The signals taken and not yet seen by the loop (bit N-1 for signal N).
    bits: AtomicU64,
    /// Wakes the loop when a bit is set.
    wake: tokio::sync::Notify,
}

impl Caught {
    /// The next signal, lowest number first among those that have arrived;
    /// waits for one. Never `None` (the signal thread never ends); the
    /// `Option` lets it stand in a `select!` pattern. Cancel-safe: a signal
    /// is handed out only when the future completes.
    pub async fn next(&mut self) -> Option<libc::c_int> {
        loop {
            if self.ready != 0 {
                let bit = self.ready.trailing_zeros();
                self.ready &= self.ready - 1;
                return libc::c_int::try_from(bit + 1).ok();
            }
            self.ready = self.shared.bits.swap(0, Ordering::AcqRel);
            if self.ready == 0 {
                // A bit set after the swap comes with a notify_one, which
                // leaves a permit if nobody waits yet: nothing is missed.
                self.shared.wake.notified().await;
            }
        }
    }
}

/// Signals about podinit itself that must neither stop nor kill it,
/// blocked in podinit ([`block_caught`]) and never taken, so they stay
/// pending and never act: SIGTSTP, SIGTTIN, SIGTTOU (an init that stops,
/// with its children running, helps no one; with a terminal the first main
/// owns the foreground and podinit must not be stopped when it writes to the
/// terminal or hands it back: the kernel lets a process that blocks SIGTTOU
/// do both, as one that ignores it), and SIGXCPU and SIGXFSZ, which the
/// kernel sends when podinit itself passes its CPU time or file size limit
/// (forwarding them would kill an innocent main; blocked, a write past the
/// limit fails with EFBIG instead). Blocked rather than ignored: an ignored
/// disposition survives exec, so every child would have to put five of them
/// back; the mask a child empties anyway (`sys::child`).
const OWN_STOPS_AND_LIMITS: [i32; 5] =
    [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU, libc::SIGXCPU, libc::SIGXFSZ];

/// Every signal podinit itself may have ignored once [`reset_inherited`] has
/// run, but SIGPIPE: the C library's own 32, 33 and 34, which libc's
/// `sigaction` refuses to touch, so that one inherited ignored (a parent that
/// started podinit with `posix_spawn` leaves them so) stays ignored in
/// podinit. SIGPIPE, which Rust's runtime ignores in podinit, the standard
/// library's `Command` itself puts back to default in every child, before
/// podinit's own reset runs (std's unix spawn, unless a program opts out with
/// `-Zon-broken-pipe`, which podinit does not); a second reset here would be
/// one more system call per process started. Every other signal is at its
/// default or has one of the Rust runtime's fault handlers (SIGSEGV, SIGBUS),
/// which exec resets: so these three are all a child must put back.
/// `every_child_starts_with_default_dispositions_and_an_empty_mask` (tests)
/// checks the outcome, SIGPIPE included, on both builds.
const IGNORED_BY_PODINIT: [i32; 3] = [32, 33, 34];

/// Signals 32, 33 and 34 (bit N-1 for signal N): the C library's own.
const C_LIBRARY_SIGNALS: u64 = 0b111 << 31;

/// Which of [`C_LIBRARY_SIGNALS`] podinit inherited ignored (bit N-1 for
/// signal N), as [`reset_inherited`] read them: only those need a reset in a
/// child. All three until it has run.
static INHERITED_IGNORED: AtomicU64 = AtomicU64::new(C_LIBRARY_SIGNALS);

/// Which signal dispositions a child must put back to default between fork
/// and exec (bit N-1 for signal N; `sys::child` resets them, ascending,
/// then empties the mask).
///
/// Handlers are reset by exec anyway; what survives exec is an *ignored*
/// disposition and the mask. Here: the C library's signals 32, 33 and 34
/// when podinit inherited them ignored (`IGNORED_BY_PODINIT`; it put every
/// other signal it inherited ignored back to default at start-up,
/// [`reset_inherited`], and std resets SIGPIPE): one to four system calls in
/// the child where one per signal would be 62. The child calls the kernel
/// directly rather than libc's `sigaction`. Children are never started with
/// `posix_spawn`, which would leave the C library's own signals (32, 33, and
/// 34 on musl) *ignored* in the child (`spawn.rs`).
pub fn child_resets() -> u64 {
    // The C library's signals only if inherited ignored; any other always.
    IGNORED_BY_PODINIT_BITS & (!C_LIBRARY_SIGNALS | INHERITED_IGNORED.load(Ordering::Relaxed))
}

/// [`IGNORED_BY_PODINIT`] as a mask (bit N-1 for signal N).
const IGNORED_BY_PODINIT_BITS: u64 = {
    let mut bits = 0;
    let mut i = 0;
    while i < IGNORED_BY_PODINIT.len() {
        bits |= 1 << (IGNORED_BY_PODINIT[i] - 1);
        i += 1;
    }
    bits
};
