//! The one module that talks to the kernel: every `unsafe` block of podinit
//! and every system call it makes itself (through `nix` or `libc`) is here,
//! behind safe functions. The crate root denies `unsafe_code` everywhere
//! else (`lib.rs`), and `tests/layers.rs` checks that no other module calls
//! a `libc` or `nix` function.
//!
//! It decides nothing: which signal goes to whom, when to reap, what a
//! child's setup holds are the callers' (`runtime`, `output`, `probe`,
//! `status`...); a function here makes its calls and reports the kernel's
//! answer, as an `io::Error` carrying the errno. Each `unsafe` block says
//! why it is sound in a `// SAFETY:` comment.
//!
//! `nix` where it has the call in a form that can say what podinit needs,
//! `libc` where it has not: nix's `Signal` enum knows signals 1-31 only, so
//! `kill`, `sigaction`, signal sets and the waits (whose statuses nix
//! decodes into that enum: a child killed by a real-time signal would be an
//! error, and a reaper that cannot decode a status wedges) are libc's; nix
//! has no pidfds and no raw `rt_sig*` calls; its socket calls need a feature
//! that brings another crate into the build for two calls. A few more are
//! libc's because nix's form made the release binary larger (`fd.rs` says
//! which) or needs a `BorrowedFd` podinit cannot vouch for.
//!
//! - [`process`]: signals to processes, pidfds, waiting for children, ids,
//!   prctl and limits.
//! - [`signal`]: signal masks, dispositions, taking signals off the queue.
//! - [`fd`]: descriptors: write, poll, pipes, fcntl, fstat, open.
//! - [`socket`]: credentials on a datagram socket.
//! - [`child`]: what runs in a child between fork and exec, async-signal-safe.
//! - [`mem`]: the output hot path's unaligned copies and SSE2 scan, the
//!   only `unsafe` that is not a system call.

// Every unsafe block says why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod child;
pub mod fd;
pub mod mem;
pub mod process;
pub mod signal;
pub mod socket;
