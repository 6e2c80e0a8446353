//! Signals as the kernel's numbers: the [`Signal`] type, its names, and which
//! signals podinit forwards. (The dispositions podinit sets up for itself and
//! its children are `runtime/signals.rs`'s.)
//!
//! A signal crosses every boundary as its number, validated once into
//! [`Signal`] (1 to SIGRTMAX) and sent with `kill(2)`. A wrapper enum that knows
//! only signals 1-31 would turn a real-time stop signal into "no signal" or fail
//! to decode a real-time death in a wait status, which wedges a reaper.
//!
//! Real-time names follow the numbering that glibc, Docker, Kubernetes and
//! `kill -l` use: `SIGRTMIN` is 34 and `SIGRTMAX` 64, whatever the C library
//! podinit was built with (musl's own `SIGRTMIN()` is 35). The C library keeps
//! 32 and 33 (and musl 34) for its threads: podinit can send them, but cannot
//! catch them, so they are not forwarded (docs/signals.md).
//!
//! Pure: nothing here touches a process or a disposition.

use std::fmt;

use libc::c_int;

/// The real-time signal that `SIGRTMIN` names (glibc's and Docker's numbering).
pub const RTMIN: c_int = 34;

/// Names of the standard signals, without `SIG` (Linux numbers; x86_64 and
/// aarch64 share them).
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

/// Aliases accepted when parsing (never printed).
const ALIASES: &[(&str, c_int)] = &[("POLL", libc::SIGIO), ("IOT", libc::SIGABRT), ("CLD", libc::SIGCHLD)];

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

/// A signal number this system knows: 1 to SIGRTMAX.
///
/// Parsed once from the config or the command line, printed as its name
/// (`SIGTERM`, `SIGRTMIN+3`), and sent as the integer it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signal(c_int);

impl Signal {
    pub const HUP: Signal = Signal(libc::SIGHUP);
    pub const INT: Signal = Signal(libc::SIGINT);
    pub const KILL: Signal = Signal(libc::SIGKILL);
    pub const TERM: Signal = Signal(libc::SIGTERM);
    pub const CHLD: Signal = Signal(libc::SIGCHLD);
    pub const CONT: Signal = Signal(libc::SIGCONT);
    pub const USR1: Signal = Signal(libc::SIGUSR1);

    /// `Some` when `n` is 1 to SIGRTMAX.
    pub fn new(n: c_int) -> Option<Signal> {
        (1..=libc::SIGRTMAX()).contains(&n).then_some(Signal(n))
    }

    /// Reads `SIGTERM`, `TERM`, `sigterm`, `SIGRTMIN`, `SIGRTMIN+N`,
    /// `SIGRTMAX-N`, `SIG32` or a number; `None` for anything else (no conversion may
    /// turn an unknown signal into "no signal").
    pub fn parse(text: &str) -> Option<Signal> {
        let upper = text.trim().to_ascii_uppercase();
        // Plain decimal digits, no sign, no leading zero: `36`, `SIG32`,
        // `RTMIN+3`; never `+15`, `RTMIN+-20`, `RTMAX-+1` or `RTMIN+01`.
        let number = |s: &str| {
            let plain = !s.is_empty() && s.len() <= 3 && s.bytes().all(|b| b.is_ascii_digit());
            (plain && (s == "0" || !s.starts_with('0'))).then(|| s.parse::<c_int>().ok()).flatten()
        };
        if let Some(n) = number(&upper) {
            return Signal::new(n);
        }
        let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
        if let Some(n) = number(bare) {
            // `SIG32`, as signals without a name are printed.
            return Signal::new(n);
        }
        let offset = number;
        let n = match bare {
            "RTMIN" => Some(RTMIN),
            "RTMAX" => Some(libc::SIGRTMAX()),
            _ => {
                if let Some(n) = bare.strip_prefix("RTMIN+") {
                    offset(n).map(|n| RTMIN + n)
                } else if let Some(n) = bare.strip_prefix("RTMAX-") {
                    offset(n).map(|n| libc::SIGRTMAX() - n).filter(|&s| s >= RTMIN)
                } else {
                    NAMES.iter().chain(ALIASES).find(|(n, _)| *n == bare).map(|&(_, s)| s)
                }
            }
        };
        n.and_then(Signal::new)
    }

    /// The number, as `kill(2)` takes it.
    pub fn number(self) -> c_int {
        self.0
    }

    /// Whether podinit passes this signal on to the mains when it receives it.
    pub fn is_forwarded(self) -> bool {
        !NOT_FORWARDED.iter().any(|&(s, _)| s == self.0) && !self.reserved_by_libc()
    }

    /// The C library keeps these for its threads (glibc 32-33, musl 32-34):
    /// its `sigaction` and `sigaddset` refuse them, so podinit can neither
    /// block nor catch them.
    fn reserved_by_libc(self) -> bool {
        (32..libc::SIGRTMIN()).contains(&self.0)
    }

    /// Every signal podinit forwards (see [`NOT_FORWARDED`]), lowest first.
    pub fn forwarded() -> impl Iterator<Item = Signal> {
        (1..=libc::SIGRTMAX()).map(Signal).filter(|s| s.is_forwarded())
    }
}

impl fmt::Display for Signal {
    /// `SIGTERM`; `SIGRTMIN`, `SIGRTMIN+N`, `SIGRTMAX`; `SIG32` and `SIG33`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        if let Some((name, _)) = NAMES.iter().find(|&&(_, s)| s == n) {
            return write!(f, "SIG{name}");
        }
        match n {
            _ if n == libc::SIGRTMAX() => f.write_str("SIGRTMAX"),
            RTMIN => f.write_str("SIGRTMIN"),
            _ if n > RTMIN => write!(f, "SIGRTMIN+{}", n - RTMIN),
            _ => write!(f, "SIG{n}"),
        }
    }
}

/// The name of signal number `n` (`SIGTERM`, `SIGRTMIN+2`), or `SIG<n>` for a
/// number outside 1 to SIGRTMAX (a wait status can hold one).
pub fn name(n: c_int) -> String {
    Signal::new(n).map_or_else(|| format!("SIG{n}"), |s| s.to_string())
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
        for n in 1..=libc::SIGRTMAX() {
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
        let fwd: Vec<c_int> = Signal::forwarded().map(Signal::number).collect();
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
}
