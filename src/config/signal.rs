//! Which signals podinit forwards, which depends on the C library it was
//! built with; the [`Signal`] type itself and its names are the lifecycle
//! crate's (`podinit_lifecycle::signal`), re-exported here. (The dispositions
//! podinit sets up for itself and its children are `runtime/signals.rs`'s.)
//!
//! The lifecycle crate holds Linux's generic numbering as plain numbers, with
//! no C library to ask; the tests below check every one of them, and
//! `SIGRTMAX`, against this C library's.
//!
//! Pure: nothing here touches a process or a disposition.

use libc::c_int;

pub use podinit_lifecycle::signal::{name, Signal, RTMAX, RTMIN};

/// Signals podinit never forwards because they are about podinit itself or
/// cannot be caught, with the reason; docs/signals.md and `--help` list them.
/// Every other signal from 1 to SIGRTMAX that the C library lets podinit catch
/// is forwarded to the mains' process groups, as tini does.
pub const NOT_FORWARDED: &[(c_int, &str)] = &[
    (libc::SIGTERM, "begins termination"),
    (libc::SIGINT, "begins termination (a second one spends the budget)"),
    (libc::SIGCHLD, "podinit reaps"),
    (libc::SIGKILL, "cannot be caught"),
    (libc::SIGSTOP, "cannot be caught"),
    (libc::SIGTSTP, "job control"),
    (libc::SIGTTIN, "job control"),
    (libc::SIGTTOU, "job control"),
    (libc::SIGCONT, "job control"),
    (libc::SIGILL, "synchronous: a fault of podinit itself"),
    (libc::SIGTRAP, "synchronous: a fault of podinit itself"),
    (libc::SIGABRT, "synchronous: a fault of podinit itself"),
    (libc::SIGBUS, "synchronous: a fault of podinit itself"),
    (libc::SIGFPE, "synchronous: a fault of podinit itself"),
    (libc::SIGSEGV, "synchronous: a fault of podinit itself"),
    (libc::SIGSYS, "synchronous: a fault of podinit itself"),
    (libc::SIGPIPE, "synchronous: podinit's own write to a closed pipe (ignored)"),
    (libc::SIGXCPU, "about podinit itself: its own CPU time limit (ignored)"),
    (libc::SIGXFSZ, "about podinit itself: its own file size limit (ignored)"),
];

/// Whether podinit passes this signal on to the mains when it receives it.
pub fn is_forwarded(signal: Signal) -> bool {
    let n = signal.number();
    !NOT_FORWARDED.iter().any(|&(s, _)| s == n) && !reserved_by_libc(n)
}

/// The C library keeps these for its threads (glibc 32-33, musl 32-34):
/// its `sigaction` and `sigaddset` refuse them, so podinit can neither
/// block nor catch them.
fn reserved_by_libc(n: c_int) -> bool {
    (32..libc::SIGRTMIN()).contains(&n)
}

/// Every signal podinit forwards (see [`NOT_FORWARDED`]), lowest first.
pub fn forwarded() -> impl Iterator<Item = Signal> {
    (1..=RTMAX).filter_map(Signal::new).filter(|&s| is_forwarded(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Option<c_int> {
        Signal::parse(s).map(Signal::number)
    }

    #[test]
    fn names_and_numbers() {
        assert_eq!(parse("SIGTERM"), Some(libc::SIGTERM));
        assert_eq!(parse("term"), Some(libc::SIGTERM));
        assert_eq!(parse(" SIGQUIT "), Some(libc::SIGQUIT));
        assert_eq!(parse("SIGPOLL"), Some(libc::SIGIO));
        assert_eq!(parse("SIGFOO"), None);
        assert_eq!(parse("SIGRTMIN"), Some(34));
        assert_eq!(parse("SIGRTMIN+1"), Some(35));
        assert_eq!(parse("RTMIN+30"), Some(64));
        assert_eq!(parse("SIGRTMIN+31"), None);
        assert_eq!(parse("SIGRTMAX"), Some(64));
        assert_eq!(parse("SIGRTMAX-2"), Some(62));
        assert_eq!(parse("SIGRTMAX-31"), None);
        assert_eq!(parse("SIGRTMIN+2147483647"), None);
        assert_eq!(parse("SIGRTMIN+-20"), None);
        assert_eq!(parse("SIGRTMIN+200"), None);
        assert_eq!(parse("36"), Some(36));
        assert_eq!(parse("0"), None);
        assert_eq!(parse("65"), None);
        assert_eq!(parse("-9"), None);
        for loose in ["+15", "SIG+15", "SIGRTMAX-+1", "SIGRTMIN+01", "SIGRTMIN+", "015", " 1 5"] {
            assert_eq!(parse(loose), None, "{loose}");
        }
        assert_eq!(Signal::new(15), Some(Signal::TERM));
        assert_eq!(Signal::new(0), None);
        assert_eq!(Signal::new(200), None);
    }

    #[test]
    fn every_signal_prints_a_name_that_parses_back() {
        for n in 1..=RTMAX {
            let s = Signal::new(n).unwrap();
            let name = s.to_string();
            assert!(name.starts_with("SIG"), "{name}");
            assert_eq!(Signal::parse(&name), Some(s), "{name}");
        }
        assert_eq!(name(libc::SIGKILL), "SIGKILL");
        assert_eq!(name(36), "SIGRTMIN+2");
        assert_eq!(name(64), "SIGRTMAX");
        assert_eq!(name(32), "SIG32");
        assert_eq!(name(100), "SIG100");
    }

    #[test]
    fn forwarded_signals_are_the_catchable_asynchronous_ones() {
        let fwd: Vec<c_int> = forwarded().map(Signal::number).collect();
        for s in [
            libc::SIGHUP,
            libc::SIGQUIT,
            libc::SIGUSR1,
            libc::SIGUSR2,
            libc::SIGWINCH,
            libc::SIGPWR,
            libc::SIGURG,
        ] {
            assert!(fwd.contains(&s), "{s} not forwarded");
        }
        assert!(fwd.contains(&libc::SIGALRM) && fwd.contains(&(RTMIN + 3)) && fwd.contains(&64));
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGCHLD, libc::SIGKILL, libc::SIGSTOP, libc::SIGSEGV] {
            assert!(!fwd.contains(&s), "{s} forwarded");
        }
        assert!(!fwd.contains(&32) && !fwd.contains(&33));
    }

    /// The lifecycle crate's numbers are Linux's generic ones, written down
    /// without a C library: each must be this C library's.
    #[test]
    fn the_lifecycle_crates_numbers_are_the_c_librarys() {
        let ours = [
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
            ("POLL", libc::SIGIO),
            ("PWR", libc::SIGPWR),
            ("SYS", libc::SIGSYS),
            ("IOT", libc::SIGABRT),
            ("CLD", libc::SIGCHLD),
        ];
        for (name, number) in ours {
            assert_eq!(parse(name), Some(number), "SIG{name}");
        }
        let constants = [
            (Signal::HUP, libc::SIGHUP),
            (Signal::INT, libc::SIGINT),
            (Signal::QUIT, libc::SIGQUIT),
            (Signal::KILL, libc::SIGKILL),
            (Signal::TERM, libc::SIGTERM),
            (Signal::CHLD, libc::SIGCHLD),
            (Signal::CONT, libc::SIGCONT),
            (Signal::USR1, libc::SIGUSR1),
        ];
        for (signal, number) in constants {
            assert_eq!(signal.number(), number, "{signal}");
        }
        assert_eq!(RTMAX, libc::SIGRTMAX());
        assert!(RTMIN >= libc::SIGRTMIN() - 1 && RTMIN <= libc::SIGRTMIN() + 1);
    }
}
