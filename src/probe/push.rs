//! Probes the process answers itself: `notify`, `fd` and `log_line`.
//!
//! Instead of podinit trying something every period, the process says so:
//! - `notify`: datagrams on a socket podinit names in `NOTIFY_SOCKET`, in
//!   systemd's sd_notify format (newline-separated `KEY=VALUE`): `READY=1`,
//!   `STATUS=...`, `WATCHDOG=1`; other keys are ignored, as systemd ignores
//!   unknown ones. A datagram counts only when its sender (from its
//!   `SCM_CREDENTIALS`, which the kernel fills in) is the entry's process or
//!   in its process group; descriptors passed with it (sd_notify's
//!   `BARRIER=1`) are closed once it is handled, which is what the sender
//!   waits for.
//! - `fd`: s6's notification-fd: the process writes a newline to descriptor
//!   N; podinit then closes its end, as s6-supervise does.
//! - `log_line`: a line of the entry's stdout or stderr matches
//!   (process-compose's `ready_log_line`); the output lanes check lines until
//!   one matches (`output::watch`).
//!
//! Each source updates one [`Announcement`] per instance; the probe task turns
//! it into the usual one-result-per-period events, and reports "ready" the
//! moment it is announced, so that a gated entry starts without a polling delay.
//! A push probe fails when `failure_threshold` periods pass without the message
//! (docs/configuration.md, "Probes the process answers").

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use tokio::io::AsyncReadExt;
use tokio::sync::watch;

use crate::config::{ProbeAction, ProbeKind, ProbeSpec};
use crate::sys::socket::recv_with_pid;

/// Most bytes of a `STATUS=` text kept (the rest is cut).
pub const MAX_STATUS: usize = 256;
/// Largest datagram read; a longer one is dropped (systemd reads at most a
/// page too).
const MAX_DATAGRAM: usize = 4096;

/// What one instance has said about itself so far, by source: each push
/// probe counts only its own (a line on the fd does not pass a `notify` one).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Announcement {
    /// `READY=1` came (notify).
    pub notified: bool,
    /// A line came on the notification fd (fd).
    pub fd_line: bool,
    /// A matching line came on stdout or stderr (log_line).
    pub log_line: bool,
    /// How many `WATCHDOG=1` have arrived.
    pub watchdogs: u64,
    /// The last `STATUS=` text, at most [`MAX_STATUS`] bytes.
    pub status: Option<String>,
}

impl Announcement {
    /// Whether the source of `action` has said "ready".
    pub fn ready_for(&self, action: &ProbeAction) -> bool {
        match action {
            ProbeAction::Notify => self.notified,
            ProbeAction::Fd { .. } => self.fd_line,
            ProbeAction::LogLine(_) => self.log_line,
            _ => false,
        }
    }
}

/// The sending side every source of one instance shares.
pub type Announcer = watch::Sender<Announcement>;

/// Which push source said "ready".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Fd,
    LogLine,
}

/// Marks the instance ready by `source` (once; later calls change nothing).
pub fn announce_ready(tx: &Announcer, source: Source) {
    tx.send_if_modified(|a| {
        let flag = match source {
            Source::Fd => &mut a.fd_line,
            Source::LogLine => &mut a.log_line,
        };
        !std::mem::replace(flag, true)
    });
}

/// Applies one sd_notify datagram to `tx`. Unknown keys are ignored.
pub fn apply_notify(tx: &Announcer, datagram: &[u8]) {
    let text = String::from_utf8_lossy(datagram);
    tx.send_if_modified(|a| {
        let before = a.clone();
        for line in text.split('\n') {
            match line.split_once('=') {
                Some(("READY", "1")) => a.notified = true,
                Some(("WATCHDOG", "1")) => a.watchdogs = a.watchdogs.wrapping_add(1),
                Some(("STATUS", s)) => {
                    let mut end = s.len().min(MAX_STATUS);
                    while !s.is_char_boundary(end) {
                        end -= 1;
                    }
                    a.status = Some(s[..end].chars().filter(|c| !c.is_control()).collect());
                }
                _ => {}
            }
        }
        *a != before
    });
}

/// A bound `NOTIFY_SOCKET` of one entry (a datagram socket with
/// `SO_PASSCRED`), removed from the file system when dropped.
#[derive(Debug)]
pub struct NotifySocket {
    socket: tokio::net::UnixDatagram,
    path: PathBuf,
}

impl Drop for NotifySocket {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl NotifySocket {
    /// Binds a datagram socket at `path`, writable by every user (an entry may
    /// run as another `user`; the sender check is by process group).
    ///
    /// # Errors
    /// The socket cannot be made or bound (for example a path longer than
    /// 107 bytes).
    pub fn bind(path: &Path) -> io::Result<NotifySocket> {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::remove_file(path);
        let socket = std::os::unix::net::UnixDatagram::bind(path)?;
        socket.set_nonblocking(true)?;
        crate::sys::socket::pass_credentials(&socket)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o666))?;
        Ok(NotifySocket { socket: tokio::net::UnixDatagram::from_std(socket)?, path: path.to_owned() })
    }

    /// The path to give in `NOTIFY_SOCKET`.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads datagrams for ever; each one whose sender passes `accept(pid)`
    /// is given to `deliver`. Others are dropped with a debug message.
    pub async fn serve(&self, name: &str, accept: impl Fn(i32) -> bool, deliver: impl Fn(&[u8])) {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        loop {
            if self.socket.readable().await.is_err() {
                return;
            }
            let fd = self.socket.as_raw_fd();
            match self.socket.try_io(tokio::io::Interest::READABLE, || recv_with_pid(fd, &mut buf)) {
                Ok(Some((n, pid))) if accept(pid) => deliver(&buf[..n]),
                Ok(Some((_, pid))) => {
                    tracing::debug!(
                        "{name}: notify datagram from pid {pid} dropped: not in its process group"
                    )
                }
                Ok(None) => {
                    tracing::debug!("{name}: notify datagram without credentials or too long, dropped")
                }
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                Err(e) => {
                    tracing::warn!("{name}: notify socket: {e}");
                    return;
                }
            }
        }
    }
}

/// Runs one push probe of `kind`: a result every `period` (ready, or for a
/// liveness probe: a `WATCHDOG=1` since the last one), and "ready" at once
/// when it is announced. `send` delivers a result; when it returns false (the
/// supervisor is gone) this returns.
pub async fn watch(
    kind: ProbeKind,
    probe: &ProbeSpec,
    mut said: watch::Receiver<Announcement>,
    mut send: impl FnMut(bool) -> bool,
) {
    let liveness = kind == ProbeKind::Liveness;
    let mut next = tokio::time::Instant::now() + probe.period;
    let mut watchdogs = said.borrow_and_update().watchdogs;
    // Whether "ready" still has to be reported the moment it comes.
    let mut waiting = !liveness;
    if waiting && said.borrow().ready_for(&probe.action) {
        waiting = false;
        if !send(true) {
            return;
        }
    }
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(next) => {
                next += probe.period;
                let now = said.borrow_and_update();
                let ok = if liveness { now.watchdogs != watchdogs } else { now.ready_for(&probe.action) };
                watchdogs = now.watchdogs;
                drop(now);
                if !send(ok) {
                    return;
                }
            }
            changed = said.changed(), if waiting => {
                if changed.is_err() {
                    // The instance is gone; the lifecycle stops this probe.
                    waiting = false;
                } else if said.borrow_and_update().ready_for(&probe.action) {
                    waiting = false;
                    next = tokio::time::Instant::now() + probe.period;
                    if !send(true) {
                        return;
                    }
                }
            }
        }
    }
}

/// Why a push probe's period failed: the message that did not come.
pub fn missing(kind: ProbeKind, action: &ProbeAction) -> String {
    match action {
        ProbeAction::Notify if kind == ProbeKind::Liveness => "no WATCHDOG=1 within the period".into(),
        ProbeAction::Notify => "no READY=1 yet".into(),
        ProbeAction::Fd { fd } => format!("no line on fd {fd} yet"),
        _ => "no matching log line yet".into(),
    }
}

/// Whether `pid` is `leader` or in its process group (podinit starts every
/// entry as the leader of its own group). A sender that has already gone
/// cannot be checked, and does not count.
pub fn in_group(pid: i32, leader: i32) -> bool {
    pid == leader || (pid > 0 && crate::sys::process::process_group(pid).is_ok_and(|g| g == leader))
}

/// A pipe for `fd` probes: podinit reads `read`; `write` goes to the child's
/// descriptor N and is closed in podinit once the child runs.
#[derive(Debug)]
pub struct NotificationPipe {
    pub read: OwnedFd,
    pub write: OwnedFd,
}

impl NotificationPipe {
    /// A new pipe, both ends close-on-exec.
    ///
    /// # Errors
    /// `pipe2` failed (out of descriptors).
    pub fn new() -> io::Result<NotificationPipe> {
        let (read, write) = crate::sys::fd::pipe()?;
        Ok(NotificationPipe { read, write })
    }
}

/// Reads `read` until a newline arrives (then the instance is ready) or end
/// of file; what comes before the newline is ignored, as s6 does.
pub async fn read_notification(read: OwnedFd, tx: std::sync::Arc<Announcer>) {
    let Ok(mut pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(read) else { return };
    let mut buf = [0u8; 512];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) => return,
            Ok(n) if buf[..n].contains(&b'\n') => return announce_ready(&tx, Source::Fd),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sd_notify_keys_update_the_announcement() {
        let (tx, rx) = watch::channel(Announcement::default());
        apply_notify(&tx, b"STATUS=warming up\nMAINPID=1\n");
        assert_eq!(rx.borrow().status.as_deref(), Some("warming up"));
        assert!(!rx.borrow().notified);
        apply_notify(&tx, b"READY=1\nWATCHDOG=1");
        apply_notify(&tx, b"WATCHDOG=1\nREADY=0\nbogus");
        let a = rx.borrow().clone();
        assert!(a.notified, "READY=0 is not a systemd message and changes nothing");
        assert_eq!(a.watchdogs, 2);
        let long = format!("STATUS={}", "é".repeat(MAX_STATUS));
        apply_notify(&tx, long.as_bytes());
        assert!(rx.borrow().status.as_ref().is_some_and(|s| s.len() <= MAX_STATUS));
        apply_notify(&tx, b"STATUS=a\x1b[31mb");
        assert_eq!(rx.borrow().status.as_deref(), Some("a[31mb"), "control characters are dropped");
    }

    /// Runs `watch` on paused time and collects each result with the (virtual)
    /// milliseconds since the start, while `script` announces things.
    async fn results(
        kind: ProbeKind,
        script: impl FnOnce(Announcer) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>,
        until_ms: u64,
    ) -> Vec<(u128, bool)> {
        let probe = ProbeSpec {
            period: std::time::Duration::from_secs(1),
            ..ProbeSpec::new(crate::config::ProbeAction::Notify)
        };
        let (tx, rx) = watch::channel(Announcement::default());
        let t0 = tokio::time::Instant::now();
        let got = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let sink = std::rc::Rc::clone(&got);
        let local = tokio::task::LocalSet::new();
        local
            .run_until(async move {
                let probe_task = tokio::task::spawn_local(async move {
                    watch(kind, &probe, rx, |ok| {
                        sink.borrow_mut().push((t0.elapsed().as_millis(), ok));
                        true
                    })
                    .await;
                });
                tokio::task::spawn_local(script(tx));
                tokio::time::sleep(std::time::Duration::from_millis(until_ms)).await;
                probe_task.abort();
            })
            .await;
        let out = got.borrow().clone();
        out
    }

    fn at(ms: u64) -> tokio::time::Sleep {
        tokio::time::sleep(std::time::Duration::from_millis(ms))
    }

    #[tokio::test(start_paused = true)]
    async fn ready_is_reported_the_moment_it_is_announced_then_every_period() {
        let got = results(
            ProbeKind::Startup,
            |tx| {
                Box::pin(async move {
                    at(2500).await;
                    apply_notify(&tx, b"READY=1");
                    std::future::pending::<()>().await;
                })
            },
            4600,
        )
        .await;
        assert_eq!(got, vec![(1000, false), (2000, false), (2500, true), (3500, true), (4500, true)]);
    }

    #[tokio::test(start_paused = true)]
    async fn an_announcement_made_before_the_probe_counts_at_once() {
        let (tx, rx) = watch::channel(Announcement { notified: true, ..Announcement::default() });
        let probe = ProbeSpec::new(crate::config::ProbeAction::Notify);
        let mut first = None;
        watch(ProbeKind::Readiness, &probe, rx, |ok| {
            first = Some(ok);
            false
        })
        .await;
        drop(tx);
        assert_eq!(first, Some(true));
    }

    #[tokio::test(start_paused = true)]
    async fn liveness_passes_a_period_only_with_a_watchdog_in_it() {
        let got = results(
            ProbeKind::Liveness,
            |tx| {
                Box::pin(async move {
                    apply_notify(&tx, b"READY=1");
                    at(500).await;
                    apply_notify(&tx, b"WATCHDOG=1");
                    at(1000).await; // 1500
                    apply_notify(&tx, b"WATCHDOG=1\nWATCHDOG=1");
                    std::future::pending::<()>().await;
                })
            },
            4100,
        )
        .await;
        assert_eq!(got, vec![(1000, true), (2000, true), (3000, false), (4000, false)]);
    }

    #[test]
    fn each_push_probe_counts_only_its_own_source() {
        let (tx, rx) = watch::channel(Announcement::default());
        announce_ready(&tx, Source::Fd);
        let a = rx.borrow().clone();
        assert!(a.ready_for(&ProbeAction::Fd { fd: 3 }));
        assert!(!a.ready_for(&ProbeAction::Notify), "a line on the fd is not READY=1");
        assert!(!a.ready_for(&ProbeAction::LogLine(crate::config::LineMatch::Contains("x".into()))));
        apply_notify(&tx, b"READY=1");
        assert!(rx.borrow().ready_for(&ProbeAction::Notify));
    }

    #[test]
    fn credentials_are_checked_by_process_group() {
        let me = std::process::id() as i32;
        let group = nix::unistd::getpgrp().as_raw();
        assert!(in_group(me, me));
        assert!(in_group(me, group));
        assert!(!in_group(me, group + 1) || me == group + 1);
        assert!(!in_group(i32::MAX, 1), "a pid that does not exist");
    }
}
