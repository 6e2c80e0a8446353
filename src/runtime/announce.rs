//! The runtime side of push probes (`probe/push.rs`): per entry, the
//! `NOTIFY_SOCKET` (bound at its first start, kept across restarts), the
//! notification pipe of an `fd` probe (new for every instance), and the
//! `log_line` watch given to its output pumps; all of them feed the current
//! instance's [`Announcement`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::rc::Rc;
use std::sync::Arc;

use tokio::sync::watch;
use tokio::task::AbortHandle;

use crate::config::{EntrySpec, ProbeAction, ProbeKind};
use crate::lifecycle::{EntryId, Instance};
use crate::output::watch::LineWatch;
use crate::probe::push::{
    announce_ready, apply_notify, in_group, read_notification, Announcement, Announcer, NotificationPipe,
    NotifySocket, Source,
};

/// The variable that names an entry's notify socket (systemd's).
pub const NOTIFY_SOCKET_VAR: &str = "NOTIFY_SOCKET";

/// The instance an entry's announcements belong to now.
#[derive(Debug)]
struct Current {
    instance: Instance,
    pid: i32,
    tx: Arc<Announcer>,
}

/// What a spawn needs before the fork: variables to add and a descriptor to
/// pass, from [`Announcements::prepare`].
#[derive(Debug, Default)]
pub struct Prepared {
    pub env: Vec<(String, String)>,
    pipe: Option<(NotificationPipe, i32)>,
}

impl Prepared {
    /// Adds the notification descriptor to `cmd` (an `fd` probe); spawn
    /// with the handoff returned (`spawn::spawn_passing`).
    pub fn apply(&self, cmd: &mut Command) -> Option<crate::runtime::spawn::FdHandoff> {
        let (pipe, target) = self.pipe.as_ref()?;
        Some(crate::runtime::spawn::pass_fd(cmd, pipe.write.as_raw_fd(), *target))
    }
}

/// Push-probe state of every entry.
#[derive(Debug, Default)]
pub struct Announcements {
    current: Rc<RefCell<HashMap<EntryId, Current>>>,
    sockets: HashMap<EntryId, (Rc<NotifySocket>, AbortHandle)>,
    readers: HashMap<EntryId, AbortHandle>,
    /// Where the notify sockets are (mode 0711: others may reach a socket
    /// whose path they were given, not list them); made on first use.
    dir: Option<PathBuf>,
}

/// The push actions of an entry's probes.
fn push_actions(spec: &EntrySpec) -> impl Iterator<Item = (ProbeKind, &ProbeAction)> {
    ProbeKind::ALL
        .iter()
        .filter_map(move |&k| spec.probe(k).map(|p| (k, &p.action)))
        .filter(|(_, a)| a.is_push())
}

impl Announcements {
    /// Before `entry` starts: its notify socket (bound once) and a new
    /// notification pipe, as its probes ask.
    pub fn prepare(&mut self, entry: EntryId, spec: &EntrySpec) -> Prepared {
        let mut prepared = Prepared::default();
        for (kind, action) in push_actions(spec) {
            match action {
                ProbeAction::Notify => {
                    if let Some(path) = self.socket(entry, spec) {
                        if !prepared.env.iter().any(|(k, _)| k == NOTIFY_SOCKET_VAR) {
                            prepared.env.push((NOTIFY_SOCKET_VAR.to_owned(), path));
                        }
                    }
                    if kind == ProbeKind::Liveness {
                        let period = spec.probe(kind).map_or(0, |p| p.period.as_micros());
                        prepared.env.push(("WATCHDOG_USEC".to_owned(), period.to_string()));
                    }
                }
                ProbeAction::Fd { fd } if prepared.pipe.is_none() => match NotificationPipe::new() {
                    Ok(pipe) => prepared.pipe = Some((pipe, *fd)),
                    Err(e) => tracing::error!("{}: no notification pipe for fd {fd}: {e}", spec.name),
                },
                _ => {}
            }
        }
        prepared
    }

    /// `entry`'s socket path, bound on first use; `None` (with an error
    /// logged) when it cannot be.
    fn socket(&mut self, entry: EntryId, spec: &EntrySpec) -> Option<String> {
        if let Some((s, _)) = self.sockets.get(&entry) {
            return Some(s.path().display().to_string());
        }
        if self.dir.is_none() {
            self.dir = crate::runtime::private_dir("notify", 0o711);
        }
        let path = self.dir.as_ref()?.join(format!("{entry}.sock"));
        let socket = match NotifySocket::bind(&path) {
            Ok(s) => Rc::new(s),
            Err(e) => {
                tracing::error!("{}: cannot make its notify socket {}: {e}", spec.name, path.display());
                return None;
            }
        };
        let (serving, current, name) = (Rc::clone(&socket), Rc::clone(&self.current), spec.name.clone());
        let task = tokio::task::spawn_local(async move {
            let leader = |c: &Current| c.pid;
            serving
                .serve(
                    &name,
                    |pid| current.borrow().get(&entry).map(leader).is_some_and(|l| in_group(pid, l)),
                    |datagram| {
                        if let Some(c) = current.borrow().get(&entry) {
                            apply_notify(&c.tx, datagram);
                        }
                    },
                )
                .await;
        });
        self.sockets.insert(entry, (socket, task.abort_handle()));
        Some(path.display().to_string())
    }

    /// `entry`'s new instance runs as `pid`: announcements now go to it. Returns
    /// the watch for its output pumps when it has a `log_line` probe.
    pub fn started(
        &mut self,
        entry: EntryId,
        instance: Instance,
        pid: i32,
        spec: &EntrySpec,
        prepared: Prepared,
    ) -> Option<Arc<LineWatch>> {
        if let Some(old) = self.readers.remove(&entry) {
            old.abort();
        }
        let mut actions = push_actions(spec).peekable();
        // No push probe: nothing to announce to.
        actions.peek()?;
        let tx = Arc::new(watch::channel(Announcement::default()).0);
        let mut line_watch = None;
        for (_, action) in actions {
            if let ProbeAction::LogLine(matcher) = action {
                let tx = Arc::clone(&tx);
                line_watch.get_or_insert_with(|| {
                    Arc::new(LineWatch::new(matcher.clone(), move || announce_ready(&tx, Source::LogLine)))
                });
            }
        }
        if let Some((pipe, _)) = prepared.pipe {
            // Only the child holds the write end now: its exit ends the read.
            drop(pipe.write);
            let tx = Arc::clone(&tx);
            let task = tokio::task::spawn_local(read_notification(pipe.read, tx));
            self.readers.insert(entry, task.abort_handle());
        }
        self.current.borrow_mut().insert(entry, Current { instance, pid, tx });
        line_watch
    }

    /// What `instance` of `entry` has announced, for a push probe's task;
    /// `None` when that instance is not the current one.
    pub fn subscribe(&self, entry: EntryId, instance: Instance) -> Option<watch::Receiver<Announcement>> {
        self.current.borrow().get(&entry).filter(|c| c.instance == instance).map(|c| c.tx.subscribe())
    }

    /// Each entry's last `STATUS=` text (notify probes), for `podinit status`.
    pub fn status_texts(&self, entries: usize) -> Vec<Option<String>> {
        let current = self.current.borrow();
        (0..entries).map(|e| current.get(&e).and_then(|c| c.tx.borrow().status.clone())).collect()
    }

    /// Stops every reader and removes the sockets.
    pub fn finish(&mut self) {
        for (_, (_, task)) in self.sockets.drain() {
            task.abort();
        }
        for (_, task) in self.readers.drain() {
            task.abort();
        }
        if let Some(dir) = self.dir.take() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
