//! Signals as the kernel's numbers: the [`Signal`] type and its names. (Which
//! signals podinit forwards depends on the C library, so it is the binary's
//! `config/signal.rs`; the dispositions are its `runtime/signals.rs`'s.)
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
//! The numbers are Linux's generic numbering, which x86_64 and aarch64 (the
//! targets podinit is built for) share; the binary's tests check each one
//! against its C library's. Pure: nothing here touches a process or a
//! disposition.

use std::fmt;

/// A signal number as the kernel takes it (C `int`).
#[allow(non_camel_case_types)]
type c_int = i32;

/// The real-time signal that `SIGRTMIN` names (glibc's and Docker's numbering).
pub const RTMIN: c_int = 34;

/// The highest signal number (`SIGRTMAX`, `kill -l`'s 64).
pub const RTMAX: c_int = 64;

/// Names of the standard signals, without `SIG` (Linux numbers; x86_64 and
/// aarch64 share them).
const NAMES: &[(&str, c_int)] = &[
    ("HUP", 1),
    ("INT", 2),
    ("QUIT", 3),
    ("ILL", 4),
    ("TRAP", 5),
    ("ABRT", 6),
    ("BUS", 7),
    ("FPE", 8),
    ("KILL", 9),
    ("USR1", 10),
    ("SEGV", 11),
    ("USR2", 12),
    ("PIPE", 13),
    ("ALRM", 14),
    ("TERM", 15),
    ("STKFLT", 16),
    ("CHLD", 17),
    ("CONT", 18),
    ("STOP", 19),
    ("TSTP", 20),
    ("TTIN", 21),
    ("TTOU", 22),
    ("URG", 23),
    ("XCPU", 24),
    ("XFSZ", 25),
    ("VTALRM", 26),
    ("PROF", 27),
    ("WINCH", 28),
    ("IO", 29),
    ("PWR", 30),
    ("SYS", 31),
];

/// Aliases accepted when parsing (never printed).
const ALIASES: &[(&str, c_int)] = &[("POLL", 29), ("IOT", 6), ("CLD", 17)];

/// A signal number this system knows: 1 to SIGRTMAX.
///
/// Parsed once from the config or the command line, printed as its name
/// (`SIGTERM`, `SIGRTMIN+3`), and sent as the integer it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Signal(c_int);

impl Signal {
    pub const HUP: Signal = Signal(1);
    pub const INT: Signal = Signal(2);
    pub const QUIT: Signal = Signal(3);
    pub const KILL: Signal = Signal(9);
    pub const TERM: Signal = Signal(15);
    pub const CHLD: Signal = Signal(17);
    pub const CONT: Signal = Signal(18);
    pub const USR1: Signal = Signal(10);

    /// `Some` when `n` is 1 to SIGRTMAX.
    pub fn new(n: c_int) -> Option<Signal> {
        (1..=RTMAX).contains(&n).then_some(Signal(n))
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
            "RTMAX" => Some(RTMAX),
            _ => {
                if let Some(n) = bare.strip_prefix("RTMIN+") {
                    offset(n).map(|n| RTMIN + n)
                } else if let Some(n) = bare.strip_prefix("RTMAX-") {
                    offset(n).map(|n| RTMAX - n).filter(|&s| s >= RTMIN)
                } else {
                    NAMES.iter().chain(ALIASES).find(|(n, _)| *n == bare).map(|&(_, s)| s)
                }
            }
        };
        n.and_then(Signal::new)
    }

    /// The number, as `kill(2)` takes it.
    pub const fn number(self) -> c_int {
        self.0
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
            _ if n == RTMAX => f.write_str("SIGRTMAX"),
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
