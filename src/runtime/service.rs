//! podinit's own messages to the service manager that started it: systemd
//! with `Type=notify`, or Podman with `--sdnotify=container` (sd_notify(3);
//! docs/systemd.md). When podinit's environment names a `NOTIFY_SOCKET` (a
//! path, or an abstract socket written `@name`), the event loop sends it
//! datagrams:
//! - `STATUS=starting: waiting for NAME (WHAT)` while the pod starts: the
//!   entry the start sequence waits at, then the first sidecar or main that
//!   is not ready ([`Pod::awaited`]);
//! - `EXTEND_TIMEOUT_USEC=` ([`EXTEND`]) with the status line, the first
//!   time the start waits for each entry: as long as every entry is done
//!   within [`EXTEND`] of the one before, `TimeoutStartSec` does not cut a
//!   start that makes progress; an entry that crash-loops, or a whole pod
//!   restarted by `restart_all`, extends nothing again;
//! - `READY=1` and `STATUS=running, ready` once the pod is ready (the
//!   readiness of `/readyz` and `podinit status`, [`Pod::is_ready`]);
//!   `READY=1` is sent once, later changes of readiness only change the
//!   status line;
//! - `STOPPING=1` and `STATUS=terminating` when termination begins
//!   (a signal, `podinit shutdown`, a completed or failed pod);
//! - `WATCHDOG=1` every half `WATCHDOG_USEC`, from the event loop itself (a
//!   loop that stops turning stops it), when `WATCHDOG_USEC` is set and,
//!   as sd_watchdog_enabled(3) says, `WATCHDOG_PID` is unset or podinit's
//!   own pid; a `WATCHDOG_PID` of another process means the watchdog is that
//!   process's, and podinit sends none (said once, at info level).
//!
//! Whatever the socket, the event loop never waits for it: the socket is
//! non-blocking, and a message the manager cannot take at once (a full
//! queue, a socket gone) is dropped; the first failure is logged at debug
//! level. No process podinit starts inherits these variables
//! ([`crate::runtime::spawn::withhold_inherited`]); an entry with a `notify`
//! probe gets its own socket from podinit (`announce.rs`). The plain init
//! (`podinit -- cmd`) reads none of this and passes its environment on whole.

use std::os::unix::net::{SocketAddr, UnixDatagram};
use std::time::Duration;

use crate::lifecycle::{Awaited, Phase, Pod};

/// The service manager's variables, which no process podinit starts inherits.
pub const VARS: [&str; 3] = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"];

/// How far each `EXTEND_TIMEOUT_USEC=` reaches: systemd's default
/// `TimeoutStartSec`.
pub const EXTEND: Duration = Duration::from_secs(90);

/// Where the pod is, as far as the service manager is told: a new value is
/// a new message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Told {
    /// Not ready; waiting for this (`None`: nothing in particular yet).
    Waiting(Option<Awaited>),
    Ready,
    Restarting,
    Stopping,
}

/// podinit's notify socket and what it has told it so far.
#[derive(Debug)]
pub struct Service {
    socket: UnixDatagram,
    to: SocketAddr,
    /// How often `WATCHDOG=1` goes out; `None`: no watchdog.
    watchdog: Option<Duration>,
    told: Option<Told>,
    ready_sent: bool,
    stopping_sent: bool,
    /// Entries whose wait has extended the start timeout already.
    extended: Vec<bool>,
    /// A send has failed already (said once).
    failed: bool,
}

impl Service {
    /// The service manager of podinit's environment, read once; `None` when
    /// there is none or its socket cannot be used (said at debug level, or
    /// at warn level for a socket podinit cannot even open). Once any of
    /// [`VARS`] is set, no process podinit starts inherits them.
    pub fn from_env() -> Option<Service> {
        if VARS.iter().all(|v| std::env::var_os(v).is_none()) {
            return None;
        }
        crate::runtime::spawn::withhold_inherited(&VARS);
        let named = std::env::var_os(VARS[0]).filter(|s| !s.is_empty())?;
        let to = match address(named.as_encoded_bytes()) {
            Ok(to) => to,
            Err(why) => {
                tracing::debug!("NOTIFY_SOCKET {}: {why}; podinit sends it nothing", named.display());
                return None;
            }
        };
        let socket = match UnixDatagram::unbound().and_then(|s| s.set_nonblocking(true).map(|()| s)) {
            Ok(s) => s,
            Err(e) => {
                tracing::warn!("no socket for NOTIFY_SOCKET {}: {e}", named.display());
                return None;
            }
        };
        let watchdog = watchdog_period(
            std::env::var(VARS[1]).ok().as_deref(),
            std::env::var(VARS[2]).ok().as_deref(),
            crate::runtime::spawn::own_pid(),
        );
        Some(Service {
            socket,
            to,
            watchdog,
            told: None,
            ready_sent: false,
            stopping_sent: false,
            extended: Vec::new(),
            failed: false,
        })
    }

    /// How often the event loop sends `WATCHDOG=1`; `None`: never.
    pub fn watchdog_period(&self) -> Option<Duration> {
        self.watchdog
    }

    /// Sends `WATCHDOG=1`.
    pub fn watchdog(&mut self) {
        self.send("WATCHDOG=1");
    }

    /// Tells the service manager where the pod is now, if that changed since
    /// the last call. Cheap when nothing changed: no text is made.
    pub fn update(&mut self, pod: &Pod) {
        let now = match pod.phase() {
            Phase::Terminating { .. } | Phase::Done => Told::Stopping,
            Phase::Restarting => Told::Restarting,
            Phase::Booting { .. } | Phase::Running { .. } if pod.is_ready() => Told::Ready,
            Phase::Booting { .. } | Phase::Running { .. } => Told::Waiting(pod.awaited()),
        };
        if self.told == Some(now) {
            return;
        }
        self.told = Some(now);
        let message = match now {
            Told::Ready => {
                let first = !std::mem::replace(&mut self.ready_sent, true);
                format!("{}STATUS=running, ready", if first { "READY=1\n" } else { "" })
            }
            Told::Waiting(awaited) => {
                let what = awaited.map_or_else(
                    || "starting".to_owned(),
                    |a| {
                        let name = pod.spec().entries.get(a.entry).map_or("?", |e| e.name.as_str());
                        format!("waiting for {name} ({})", a.what.human())
                    },
                );
                if self.ready_sent {
                    format!("STATUS=running, not ready: {what}")
                } else {
                    let mut m = format!("STATUS=starting: {what}");
                    if awaited.is_some_and(|a| self.first_wait_for(a.entry)) {
                        m += &format!("\nEXTEND_TIMEOUT_USEC={}", EXTEND.as_micros());
                    }
                    m
                }
            }
            Told::Restarting => "STATUS=restarting the pod (restart_all)".to_owned(),
            Told::Stopping => {
                let first = !std::mem::replace(&mut self.stopping_sent, true);
                format!("{}STATUS=terminating", if first { "STOPPING=1\n" } else { "" })
            }
        };
        self.send(&message);
    }

    /// Whether the start waits for `entry` for the first time (and notes
    /// that it has).
    fn first_wait_for(&mut self, entry: usize) -> bool {
        if self.extended.len() <= entry {
            self.extended.resize(entry + 1, false);
        }
        !std::mem::replace(&mut self.extended[entry], true)
    }

    /// One datagram, never waited for: dropped when the manager cannot take
    /// it at once.
    fn send(&mut self, message: &str) {
        if let Err(e) = self.socket.send_to_addr(message.as_bytes(), &self.to) {
            if !std::mem::replace(&mut self.failed, true) {
                tracing::debug!(
                    "NOTIFY_SOCKET: {e}; message dropped (later failures are not logged): {}",
                    message.replace('\n', " ")
                );
            }
        }
    }
}

/// The address `NOTIFY_SOCKET` names: an absolute path, or `@name` for an
/// abstract socket (sd_notify(3)); anything else (a relative path, systemd's
/// `vsock:` addresses) is not used.
fn address(named: &[u8]) -> Result<SocketAddr, String> {
    match named.first() {
        Some(b'/') => {
            use std::os::unix::ffi::OsStrExt;
            SocketAddr::from_pathname(std::ffi::OsStr::from_bytes(named)).map_err(|e| e.to_string())
        }
        Some(b'@') => {
            use std::os::linux::net::SocketAddrExt;
            SocketAddr::from_abstract_name(&named[1..]).map_err(|e| e.to_string())
        }
        _ => Err("neither an absolute path nor an abstract socket (@name)".to_owned()),
    }
}

/// How often to send `WATCHDOG=1` from `WATCHDOG_USEC` and `WATCHDOG_PID`,
/// as sd_watchdog_enabled(3) reads them: a period of microseconds above 0,
/// for podinit only when `WATCHDOG_PID` is unset or `pid`; every half period
/// (sd_watchdog_enabled(3)'s advice). `None`: no watchdog.
fn watchdog_period(usec: Option<&str>, watchdog_pid: Option<&str>, pid: u32) -> Option<Duration> {
    let usec = usec?;
    let Some(period) = usec.parse::<u64>().ok().filter(|&u| u > 0) else {
        tracing::debug!("WATCHDOG_USEC={usec} is not a number of microseconds above 0: no watchdog");
        return None;
    };
    if let Some(for_pid) = watchdog_pid {
        if for_pid.parse::<u32>().ok() != Some(pid) {
            tracing::info!(
                "WATCHDOG_PID={for_pid} is not podinit's pid {pid}: the watchdog is another process's, podinit sends no WATCHDOG=1"
            );
            return None;
        }
    }
    Some(Duration::from_micros(period) / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdog_is_podinits_only_for_its_own_pid() {
        assert_eq!(watchdog_period(Some("400000"), None, 1), Some(Duration::from_millis(200)));
        assert_eq!(watchdog_period(Some("400000"), Some("1"), 1), Some(Duration::from_millis(200)));
        assert_eq!(watchdog_period(Some("400000"), Some("4242"), 1), None);
        assert_eq!(watchdog_period(Some("400000"), Some("x"), 1), None);
        assert_eq!(watchdog_period(Some("0"), None, 1), None);
        assert_eq!(watchdog_period(Some("soon"), None, 1), None);
        assert_eq!(watchdog_period(None, Some("1"), 1), None);
    }

    #[test]
    fn addresses_are_paths_or_abstract_names() {
        use std::os::linux::net::SocketAddrExt;
        let path = address(b"/run/systemd/notify").unwrap();
        assert_eq!(path.as_pathname(), Some(std::path::Path::new("/run/systemd/notify")));
        let abs = address(b"@podman/notify").unwrap();
        assert_eq!(abs.as_abstract_name(), Some(&b"podman/notify"[..]));
        assert!(address(b"run/notify").is_err());
        assert!(address(b"vsock:2:1234").is_err());
        assert!(address(b"").is_err());
    }
}
