//! Signal names and numbers, and the dispositions podinit sets up for itself.
//!
//! The name table is Linux's (x86_64 and aarch64 share these numbers). podinit
//! never handles a signal by running code in a handler: signal-hook turns each
//! delivery into a message on the event loop, so nothing here must be
//! async-signal-safe except `reset_for_child`, which runs between fork and exec.

use libc::c_int;

const NAMES: &[(&str, c_int)] = &[
    ("HUP", libc::SIGHUP),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("ILL", libc::SIGILL),
    ("TRAP", libc::SIGTRAP),
    ("ABRT", libc::SIGABRT),
    ("BUS", libc::SIGBUS),
    ("FPE", libc::SIGFPE),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV),
    ("USR2", libc::SIGUSR2),
    ("PIPE", libc::SIGPIPE),
    ("ALRM", libc::SIGALRM),
    ("TERM", libc::SIGTERM),
    ("STKFLT", libc::SIGSTKFLT),
    ("CHLD", libc::SIGCHLD),
    ("CONT", libc::SIGCONT),
    ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP),
    ("TTIN", libc::SIGTTIN),
    ("TTOU", libc::SIGTTOU),
    ("URG", libc::SIGURG),
    ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ),
    ("VTALRM", libc::SIGVTALRM),
    ("PROF", libc::SIGPROF),
    ("WINCH", libc::SIGWINCH),
    ("IO", libc::SIGIO),
    ("PWR", libc::SIGPWR),
    ("SYS", libc::SIGSYS),
];

/// The number of a signal named `SIGTERM`, `TERM` or `sigterm`; `None` if unknown.
pub fn by_name(name: &str) -> Option<c_int> {
    let upper = name.trim().to_ascii_uppercase();
    let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
    if let Some(n) = bare.strip_prefix("RTMIN+") {
        // A small non-negative offset only: `RTMIN+-20` or a huge one is no signal.
        let n = n.parse::<u8>().ok()?;
        return libc::SIGRTMIN().checked_add(c_int::from(n)).and_then(by_number);
    }
    NAMES.iter().find(|(n, _)| *n == bare).map(|&(_, s)| s)
}

/// `Some(n)` when `n` is a signal number this system knows (1 to SIGRTMAX).
pub fn by_number(n: c_int) -> Option<c_int> {
    (1..=libc::SIGRTMAX()).contains(&n).then_some(n)
}

/// The conventional name of signal `n` (`SIGTERM`), or `SIG<n>` for the rest.
pub fn name(n: c_int) -> String {
    match NAMES.iter().find(|&&(_, s)| s == n) {
        Some((name, _)) => format!("SIG{name}"),
        None => format!("SIG{n}"),
    }
}

/// Whether podinit ignores signals that its children must not inherit ignored
/// (SIGTTIN/SIGTTOU, in terminal mode): then every child resets them before
/// exec. Otherwise a child inherits nothing to undo (see [`reset_inherited`]),
/// and std may start it with posix_spawn, much cheaper than fork.
static CHILDREN_NEED_RESET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether children must reset signal dispositions before exec (terminal mode).
pub fn children_need_reset() -> bool {
    CHILDREN_NEED_RESET.load(std::sync::atomic::Ordering::Relaxed)
}

/// Called once at start-up: every signal that podinit's own parent left
/// ignored (nohup, a shell's background job) goes back to default, and the mask
/// is emptied, so that children, which inherit both across exec, start with
/// default dispositions and an empty mask (SPEC §3). SIGPIPE stays ignored for
/// podinit itself (a closed stdout must give EPIPE, not death); std resets it
/// in every child.
pub fn reset_inherited() {
    // SAFETY: plain sigaction/sigprocmask calls on locally owned structures,
    // before any thread or handler exists.
    unsafe {
        for sig in 1..=libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP || sig == libc::SIGPIPE {
                continue;
            }
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
    }
}

/// Terminal mode: podinit ignores SIGTTIN and SIGTTOU for itself (the first
/// main owns the foreground; podinit must not be stopped when it writes to the
/// terminal or hands it back), and every child resets them before exec.
pub fn ignore_terminal_stops() {
    CHILDREN_NEED_RESET.store(true, std::sync::atomic::Ordering::Relaxed);
    // SAFETY: setting a signal to SIG_IGN installs no handler code.
    unsafe {
        libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::signal(libc::SIGTTIN, libc::SIG_IGN);
    }
}

/// Puts every signal disposition back to default and empties the signal mask.
///
/// Runs in the child between fork and exec, so it only makes raw system calls
/// (sigaction and sigprocmask are async-signal-safe) and allocates nothing.
/// Handlers are reset by exec anyway; what survives exec is an *ignored*
/// disposition and the mask, which is why both are cleared here (tini's
/// `restore_signals` does the same).
///
/// # Errors
/// The errno of a failing `sigprocmask`; a failing `sigaction` on a signal that
/// cannot be changed (SIGKILL, SIGSTOP, the ones libc reserves) is skipped.
pub fn reset_for_child() -> std::io::Result<()> {
    // SAFETY: plain system calls on a zeroed, locally owned sigaction/sigset_t;
    // no allocation, no locks, valid between fork and exec.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        for sig in 1..=libc::SIGRTMAX() {
            if sig != libc::SIGKILL && sig != libc::SIGSTOP {
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        if libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut()) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers() {
        assert_eq!(by_name("SIGTERM"), Some(libc::SIGTERM));
        assert_eq!(by_name("term"), Some(libc::SIGTERM));
        assert_eq!(by_name("SIGQUIT"), Some(libc::SIGQUIT));
        assert_eq!(by_name("SIGFOO"), None);
        assert_eq!(by_name("SIGRTMIN+1"), Some(libc::SIGRTMIN() + 1));
        assert_eq!(by_name("SIGRTMIN+2147483647"), None);
        assert_eq!(by_name("SIGRTMIN+-20"), None);
        assert_eq!(by_name("SIGRTMIN+200"), None);
        assert_eq!(by_number(15), Some(15));
        assert_eq!(by_number(0), None);
        assert_eq!(by_number(200), None);
        assert_eq!(name(libc::SIGKILL), "SIGKILL");
    }
}
