//! The pod lifecycle: the `podinit-lifecycle` crate (crates/lifecycle), the
//! pure state machine every other layer drives or reads. It lives in its own
//! crate so that Cargo, not a comment, keeps I/O out of it: its `Cargo.toml`
//! names no async runtime, no libc, no nix and no logging crate. Every
//! lifecycle rule lives there; docs/architecture.md shows the way an event
//! takes from the kernel to it and back.
//!
//! The tests here check what the crate writes down without a C library (how a
//! raw wait status decodes) against this C library's own macros.

pub use podinit_lifecycle::*;

#[cfg(test)]
mod tests {
    use super::exit_status::WaitStatus;

    /// Every 16-bit status decodes the way the C library's macros read it, and
    /// every end maps to a shell status of 0-255.
    #[test]
    fn every_16_bit_status_decodes_like_the_c_macros() {
        for raw in 0..=0xffff_i32 {
            let got = WaitStatus::from_raw(raw);
            let want = if libc::WIFEXITED(raw) {
                WaitStatus::Exited(libc::WEXITSTATUS(raw))
            } else if libc::WIFSIGNALED(raw) {
                WaitStatus::Signaled { signal: libc::WTERMSIG(raw), core_dumped: libc::WCOREDUMP(raw) }
            } else if libc::WIFCONTINUED(raw) {
                WaitStatus::Continued
            } else if libc::WIFSTOPPED(raw) {
                WaitStatus::Stopped(libc::WSTOPSIG(raw))
            } else {
                WaitStatus::Unknown(raw)
            };
            assert_eq!(got, want, "raw status {raw:#06x}");
            if let Some(exit) = got.exit() {
                assert!((0..=255).contains(&exit.status()), "{raw:#x} gives {}", exit.status());
            }
        }
    }
}
