//! How a process ended, and the shell's number for it (SPEC "Exit status"):
//! the exit code, or 128 + N for a death by signal N; 126 found but not
//! executable, 127 not found (tini's and POSIX shells' convention).

use std::fmt;

/// Status of a program that could not be executed (permission, format).
pub const CANNOT_EXECUTE: i32 = 126;
/// Status of a program that was not found.
pub const NOT_FOUND: i32 = 127;
/// Status of invalid configuration or usage.
pub const USAGE: i32 = 2;

/// How one process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with this code (0-255).
    Code(i32),
    /// It was killed by this signal.
    Signal(i32),
}

impl Exit {
    /// The shell's number: the code, or 128 + signal.
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
            Exit::Signal(s) => write!(f, "signal {} (status {})", crate::signals::name(s), 128 + s),
        }
    }
}
