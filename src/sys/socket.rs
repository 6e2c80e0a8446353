//! Datagrams with their sender's credentials (`unix(7)`, `SO_PASSCRED`,
//! `SCM_CREDENTIALS`): who sent a `NOTIFY_SOCKET` message.
//!
//! Through libc: nix's socket calls need its `socket` feature, which brings
//! one more crate into the build for these two calls, and its `recvmsg`
//! decodes every kind of control message it knows into owned values.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Has the kernel attach the sender's credentials to every datagram
/// `socket` receives (`SO_PASSCRED`).
///
/// # Errors
/// The `setsockopt(2)` error (`ENOTSOCK`, `EBADF`).
pub fn pass_credentials(socket: &impl AsRawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: a descriptor the caller holds open, and an option value of
    // the size given that outlives the call.
    let set = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_PASSCRED,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Receives one datagram into `buf` without waiting (`recvmsg(2)`,
/// `MSG_DONTWAIT`): its length in bytes and its sender's pid, or `None`
/// when it was cut (longer than `buf`) or came without credentials.
/// Descriptors passed along (`SCM_RIGHTS`) are received close-on-exec and
/// closed before this returns.
///
/// # Errors
/// `EAGAIN` when no datagram is waiting, `EINTR`, or another `recvmsg`
/// error.
pub fn recv_with_pid(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<(usize, i32)>> {
    // Room for credentials plus a few descriptors (sd_notify's barrier).
    let mut control = [0u64; 64];
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    // SAFETY: msghdr is plain data; zeroed is a valid value.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &raw mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: msg points at live buffers of the sizes given.
    let n = unsafe { libc::recvmsg(fd, &raw mut msg, libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut pid = None;
    // SAFETY: the CMSG_* walk stays inside msg_control as the kernel filled
    // it; the descriptors of an SCM_RIGHTS message are new ones, ours alone.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&raw const msg);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            let len = (*c).cmsg_len as usize - (data as usize - c as usize);
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_CREDENTIALS) if len >= std::mem::size_of::<libc::ucred>() => {
                    pid = Some(std::ptr::read_unaligned(data.cast::<libc::ucred>()).pid);
                }
                (libc::SOL_SOCKET, libc::SCM_RIGHTS) => {
                    for i in 0..len / std::mem::size_of::<RawFd>() {
                        drop(OwnedFd::from_raw_fd(std::ptr::read_unaligned(data.cast::<RawFd>().add(i))));
                    }
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(&raw const msg, c);
        }
    }
    let cut = msg.msg_flags & libc::MSG_TRUNC != 0;
    Ok(pid.filter(|_| !cut).map(|pid| (n.unsigned_abs(), pid)))
}
