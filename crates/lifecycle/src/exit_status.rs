//! How a process ended, decoded from the kernel's raw wait status, and the
//! shell's number for it (docs/signals.md, "Exit statuses"): the exit code, or
//! 128 + N for a death by signal N, any N (real-time signals included, as
//! tini's `128 + WTERMSIG(status)`); 126 found but not executable, 127 not found.
//!
//! The decoding is done here, from the integer `waitpid(2)` fills in, rather
//! than by a wrapper that knows only signals 1-31: such a wrapper fails on a
//! death by a real-time signal, and a reaper that cannot decode a status leaves
//! the zombie in place and wedges.

use std::fmt;

/// Status of a program that could not be executed (permission, format).
pub const CANNOT_EXECUTE: i32 = 126;
/// Status of a program that was not found.
pub const NOT_FOUND: i32 = 127;
/// Status of invalid configuration or usage.
pub const USAGE: i32 = 2;
/// Status of a pod ended by `[pod] active_deadline`, whatever its processes
/// exited with: 124, as `timeout(1)` exits when its command timed out. It is
/// below the 128 + N of deaths by a signal and apart from 126 and 127; only a
/// main that itself exits 124 gives the same number (the log tells which).
pub const DEADLINE_EXCEEDED: i32 = 124;

/// How one process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code (0-255).
    Code(i32),
    /// It was killed by this signal (1-127; Linux has 1-64).
    Signal(i32),
}

/// What a raw wait status says, decoded as `<sys/wait.h>`'s macros do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitStatus {
    /// `WIFEXITED`: exited with `WEXITSTATUS`.
    Exited(i32),
    /// `WIFSIGNALED`: killed by `WTERMSIG`, with `WCOREDUMP`.
    Signaled { signal: i32, core_dumped: bool },
    /// `WIFSTOPPED`: stopped by `WSTOPSIG` (only with `WUNTRACED`).
    Stopped(i32),
    /// `WIFCONTINUED` (only with `WCONTINUED`).
    Continued,
    /// None of the four (the kernel never reports one; `0x00ff` is one).
    Unknown(i32),
}

impl WaitStatus {
    /// Decodes the integer that `waitpid(2)` stores: the low 7 bits are 0 for
    /// an exit, 0x7f (with bit 7 clear) for a stop, 0xffff is "continued", and
    /// otherwise the low 7 bits are the number of the signal that killed it.
    pub fn from_raw(status: i32) -> WaitStatus {
        let low = status & 0x7f;
        if status == 0xffff {
            WaitStatus::Continued
        } else if low == 0 {
            WaitStatus::Exited((status >> 8) & 0xff)
        } else if status & 0xff == 0x7f {
            WaitStatus::Stopped((status >> 8) & 0xff)
        } else if low == 0x7f {
            WaitStatus::Unknown(status)
        } else {
            WaitStatus::Signaled { signal: low, core_dumped: status & 0x80 != 0 }
        }
    }

    /// The end of the process: `None` for a stop or a continue (not an end)
    /// and for a status that is none of the four.
    pub fn exit(self) -> Option<Exit> {
        match self {
            WaitStatus::Exited(code) => Some(Exit::Code(code)),
            WaitStatus::Signaled { signal, .. } => Some(Exit::Signal(signal)),
            WaitStatus::Stopped(_) | WaitStatus::Continued | WaitStatus::Unknown(_) => None,
        }
    }
}

impl Exit {
    /// The shell's number: the code, or 128 + signal (at most 255).
    pub fn status(self) -> i32 {
        match self {
            Exit::Code(c) => c,
            Exit::Signal(s) => 128 + s,
        }
    }

    /// Whether it exited 0.
    pub fn success(self) -> bool {
        self == Exit::Code(0)
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Exit::Code(c) => write!(f, "status {c}"),
            Exit::Signal(s) => write!(f, "signal {} (status {})", crate::signal::name(s), 128 + s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_time_signals_are_128_plus_n() {
        for n in 1..=64 {
            let exit = WaitStatus::from_raw(n).exit().unwrap();
            assert_eq!(exit, Exit::Signal(n));
            assert_eq!(exit.status(), 128 + n);
        }
        assert_eq!(WaitStatus::from_raw(36 | 0x80), WaitStatus::Signaled { signal: 36, core_dumped: true });
        assert_eq!(WaitStatus::from_raw(42 << 8).exit(), Some(Exit::Code(42)));
    }
}
