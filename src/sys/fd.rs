//! Descriptors: writing to podinit's own 1 and 2, pipes and their size,
//! duplicates, the identity of an open file, opening a file for reading.
//!
//! [`write()`] and [`wait_writable`] take a raw descriptor number and go
//! through libc: nix's forms take a `BorrowedFd`, a promise that the
//! descriptor is open and stays so, which podinit cannot make for its
//! descriptors 1 and 2 (whoever started it may have closed them; a write
//! then fails with `EBADF`, which is all that should happen). `fcntl`,
//! `fstat` and `openat` go through libc too, for size (the release build
//! must not grow): nix's `fcntl` is one function matching over every
//! command, kept out of line (226 bytes for three one-line calls); its
//! `openat`'s path handling (a 1 KiB stack copy with an allocating
//! fallback) cost 220 bytes more than a `CString`, and its `fstat` 83 out of
//! line.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

/// Writes from `buf` to `fd` once (`write(2)`): how many bytes went out.
///
/// # Errors
/// `EAGAIN` on a full non-blocking descriptor, `EINTR`, `EPIPE` once the
/// reader is gone (SIGPIPE is ignored in podinit), `EBADF` for a closed one.
#[inline]
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: write(2) reads at most buf.len() bytes of a live slice.
    let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n.unsigned_abs())
    }
}

/// Waits until `fd` can take a write, at most `timeout_ms` milliseconds
/// (`poll(2)`, `POLLOUT`). Whether it came to that is not said: the caller
/// writes again either way.
pub fn wait_writable(fd: RawFd, timeout_ms: libc::c_int) {
    let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
    // SAFETY: poll(2) on one pollfd owned by this frame.
    unsafe { libc::poll(&mut pfd, 1, timeout_ms) };
}

/// Sets the capacity of the pipe `fd` to at least `bytes`
/// (`fcntl(F_SETPIPE_SZ)`, which rounds up to a power-of-two number of
/// pages): the capacity set.
///
/// # Errors
/// `EPERM` above `/proc/sys/fs/pipe-max-size` or past the user's pipe
/// memory limit without privilege, `EBUSY` when the pipe holds more than
/// that, `EBADF` when `fd` is no pipe.
pub fn set_pipe_size(fd: RawFd, bytes: libc::c_int) -> io::Result<libc::c_int> {
    // SAFETY: fcntl(2) with an integer argument; no memory of ours.
    let set = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, bytes) };
    if set < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(set)
}

/// A new pipe, both ends close-on-exec (`pipe2(2)`): (read end, write end).
///
/// # Errors
/// `EMFILE`/`ENFILE` when out of descriptors.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
}

/// A close-on-exec duplicate of `fd` at the lowest free number at or
/// above `min` (`fcntl(F_DUPFD_CLOEXEC)`).
///
/// # Errors
/// `EBADF` when `fd` is not open, `EMFILE`, `EINVAL` for `min` beyond the
/// descriptor limit.
pub fn duplicate_at_least(fd: RawFd, min: RawFd) -> io::Result<OwnedFd> {
    // SAFETY: fcntl(2) with an integer argument; no memory of ours.
    let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, min) };
    if copy < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(copy) })
}

/// Clears close-on-exec on `fd` (`fcntl(F_SETFD, 0)`): it stays open across
/// exec. Async-signal-safe: [`crate::sys::child`] calls it between fork and
/// exec.
///
/// # Errors
/// `EBADF` when `fd` is not open.
#[inline]
pub fn keep_across_exec(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl(2) with an integer argument; no memory of ours.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The device and inode of the open file at `fd` (`fstat(2)`); `None` when
/// `fd` is not open. Async-signal-safe: [`crate::sys::child`] calls it
/// between fork and exec.
#[inline]
pub fn identity(fd: RawFd) -> Option<(u64, u64)> {
    // SAFETY: stat is plain data; all zeros is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat(2) writes into a locally owned struct.
    if unsafe { libc::fstat(fd, &mut st) } != 0 {
        return None;
    }
    // `dev_t` and `ino_t` are 64-bit on Linux's 64-bit targets.
    #[allow(clippy::useless_conversion)]
    Some((u64::from(st.st_dev), u64::from(st.st_ino)))
}

/// Whether `fd` is a terminal (`isatty(3)`); `false` when it is not open.
pub fn is_terminal(fd: RawFd) -> bool {
    nix::unistd::isatty(fd).unwrap_or(false)
}

/// Opens `path` for reading, close-on-exec, with `openat(2)`: musl's `open`
/// follows an `O_CLOEXEC` open with an `fcntl` for kernels older than
/// 2.6.23, one more system call for every file.
///
/// # Errors
/// Opening failed (`ENOENT`, `EACCES`...), or `EINVAL` for a path with a
/// NUL byte in it.
pub fn open_read(path: &std::path::Path) -> io::Result<std::fs::File> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: openat(2) with a NUL-terminated path that outlives the call.
    let fd = unsafe { libc::openat(libc::AT_FDCWD, c_path.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor that nothing else owns.
    Ok(unsafe { std::fs::File::from_raw_fd(fd) })
}
