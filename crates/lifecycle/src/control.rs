//! Requests from the command line (docs/control.md): `podinit restart`,
//! `stop`, `start`, `signal` and `shutdown`. Each is decided here against
//! the entry's state, so every rule about order, termination and backoff
//! holds for it: a request goes through the stop path, never around it,
//! and one that cannot be honoured now is refused with the reason.

use std::time::Instant;

use crate::entry::{EntryState, StopCause};
use crate::events::{Action, Control, EntryId, Level, Note, Timer};
use crate::pod::{Phase, Pod};
use crate::spec::{Role, Signal};

impl Pod {
    /// Takes a request from the command line (docs/control.md): `Ok` when it
    /// was taken (what it asked for goes on as actions), else why it was
    /// refused, and the actions either way.
    pub fn control(&mut self, request: Control, now: Instant) -> (Result<(), String>, Vec<Action>) {
        let result = self.on_control(request, now);
        self.finish_if_empty();
        (result, std::mem::take(&mut self.out))
    }

    fn on_control(&mut self, request: Control, now: Instant) -> Result<(), String> {
        if matches!(self.phase, Phase::Terminating { .. } | Phase::Done) {
            return Err("termination has begun: nothing is started or stopped by request any more".into());
        }
        if request == Control::Shutdown {
            // As SIGTERM to podinit, exit status included.
            let text = "shutdown asked for: terminating the pod".to_owned();
            self.notes.push(Note::new(Level::Info, "terminating", None, text));
            self.term_signal = Some(Signal::TERM);
            self.begin_termination(now);
            return Ok(());
        }
        if self.phase == Phase::Restarting {
            return Err("the whole pod is restarting (restart_all); ask again once it runs".into());
        }
        let entry = match request {
            Control::Restart(e) | Control::Stop(e) | Control::Start(e) | Control::Signal(e, _) => e,
            Control::Shutdown => return Ok(()),
        };
        let Some(e) = self.entries.get(entry) else { return Err(format!("no entry {entry}")) };
        let name = self.name(entry).to_owned();
        let is_init = self.role(entry) == Role::Init;
        if e.state == EntryState::Removed && matches!(request, Control::Restart(_) | Control::Start(_)) {
            return Err(format!("{name} was removed by `podinit reload`"));
        }
        let stopping = e.live().is_some_and(|l| l.stop().is_some());
        let not_now = |state: &EntryState| match state {
            EntryState::Waiting => {
                Some(format!("{name} has not started yet: its turn in the start sequence has not come"))
            }
            EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => {
                Some(format!("{name} is being started; ask again once it runs"))
            }
            EntryState::Running(_) if stopping => Some(format!("{name} is being stopped already")),
            _ => None,
        };
        match request {
            Control::Restart(_) | Control::Stop(_) if is_init => Err(format!(
                "{name} is an init task: it runs once, to completion, and is not stopped or run again by request"
            )),
            Control::Restart(_) => {
                if let Some(why) = not_now(&e.state) {
                    return Err(why);
                }
                match e.state {
                    EntryState::Running(_) => {
                        let text = format!("restart of {name} asked for: stopping it");
                        self.note(Level::Info, "restart_requested", entry, text);
                        self.stop_for(entry, StopCause::Restart, None, now);
                    }
                    _ => self.start_requested(entry, "restart", now),
                }
                Ok(())
            }
            Control::Stop(_) => {
                if let Some(why) = not_now(&e.state) {
                    return Err(why);
                }
                match e.state {
                    EntryState::Running(_) => {
                        let text = format!("stop of {name} asked for: stopping it until `podinit start {name}`");
                        self.note(Level::Info, "stop_requested", entry, text);
                        self.stop_for(entry, StopCause::Hold, None, now);
                        Ok(())
                    }
                    EntryState::Backoff { .. } => {
                        self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
                        let text = format!("{name} stopped while waiting out its backoff");
                        self.note(Level::Info, "stop_requested", entry, text);
                        self.entries[entry].state = EntryState::Held;
                        self.ended_for_now(entry, now);
                        Ok(())
                    }
                    EntryState::Held => Err(format!("{name} is stopped already")),
                    _ => Err(format!("{name} is not running: it has exited")),
                }
            }
            Control::Start(_) if e.state == EntryState::Held => {
                self.start_requested(entry, "start", now);
                Ok(())
            }
            Control::Start(_) => Err(format!(
                "{name} is not stopped: `podinit start` starts an entry that `podinit stop` stopped"
            )),
            Control::Signal(_, signal) => match e.live() {
                Some(live) => {
                    let pid = live.pid();
                    let text = format!("sending {signal} to {name} (pid {pid}), as asked");
                    let n = self.note(Level::Info, "signal_requested", entry, text);
                    n.pid = Some(pid);
                    n.signal = Some(signal);
                    self.out.push(Action::Signal { entry, pid, signal });
                    Ok(())
                }
                None => Err(format!("{name} is not running")),
            },
            Control::Shutdown => Ok(()),
        }
    }

    /// `podinit start`, or `podinit restart` of an entry without a process
    /// (exited, stopped, in backoff): a new instance now, without backoff.
    fn start_requested(&mut self, entry: EntryId, verb: &str, now: Instant) {
        if matches!(self.entries[entry].state, EntryState::Backoff { .. }) {
            self.out.push(Action::CancelTimer(Timer::Backoff(entry)));
        }
        let text = format!("{verb} of {} asked for: starting it", self.name(entry));
        let event = if verb == "start" { "start_requested" } else { "restart_requested" };
        self.note(Level::Info, event, entry, text);
        self.spawn(entry, now);
    }
}
