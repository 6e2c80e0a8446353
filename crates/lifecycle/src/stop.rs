//! The stop path of one instance: pre_stop, the stop signal (followed by
//! SIGCONT, since a stopped process cannot act on it), then SIGKILL once its
//! grace is over, never sooner than 2 s after the stop signal
//! (kubernetes.io "Container Lifecycle Hooks"; docs/lifecycle.md rules 10,
//! 15 and 17). A stop outside termination (a failed probe or post_start, a
//! request) runs on its own grace; inside termination, `termination.rs`
//! decides when each stop signal is due. No process gets its stop signal
//! twice: [`Pod::send_stop`] is the one place that sends it.

use std::time::{Duration, Instant};

use crate::entry::{Live, Stage, Stop, StopCause, StopStep};
use crate::events::{Action, EntryId, Timer};
use crate::notes::Said;
use crate::pod::Pod;
use crate::spec::{HookKind, ProbeKind, Signal, MIN_STOP_GRACE};

impl Pod {
    /// Stops an instance whose startup/liveness probe or post_start failed; it is
    /// restarted by the rules once it exits. The grace is the probe's own when
    /// it has one (docs/lifecycle.md rule 10), else the pod's, counted from now.
    pub(crate) fn stop_failed(&mut self, entry: EntryId, grace: Option<Duration>, now: Instant) {
        self.stop_for(entry, StopCause::Failed, grace, now);
    }

    /// The stop path of one instance outside termination: pre_stop, stop
    /// signal, grace (`grace`, else the pod's), SIGKILL.
    pub(crate) fn stop_for(
        &mut self,
        entry: EntryId,
        cause: StopCause,
        grace: Option<Duration>,
        now: Instant,
    ) {
        let deadline = now + grace.unwrap_or(self.spec.termination_grace_period);
        let has_pre_stop = self.spec.entries[entry].pre_stop.is_some();
        let instance = self.entries[entry].instance;
        let Some(live) = self.entries[entry].live() else { return };
        let pid = live.pid();
        let stop = Stop::begin(live, cause, deadline, StopStep::first(has_pre_stop));
        self.set_stage(entry, Stage::Stopping(stop));
        for kind in [ProbeKind::Startup, ProbeKind::Liveness] {
            self.out.push(Action::StopProbe { entry, kind });
        }
        if has_pre_stop {
            self.out.push(Action::RunHook { entry, instance, pid, hook: HookKind::PreStop });
            self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at: deadline });
        } else {
            self.send_stop(entry, now, deadline);
        }
    }

    pub(crate) fn on_pre_stop(&mut self, entry: EntryId, mut stop: Stop, ok: bool, now: Instant) {
        stop.step = StopStep::Queued;
        let deadline = stop.deadline;
        let cause = stop.cause;
        self.set_stage(entry, Stage::Stopping(stop));
        if !ok {
            self.note(entry, Said::PreStopFailed);
        }
        if cause != StopCause::Termination && !self.terminating() {
            // The hook's time comes out of the stop's own grace, with the 2 s
            // floor (kubernetes.io "Container Lifecycle Hooks").
            self.send_stop(entry, now, deadline);
        } else {
            self.drive_termination(now);
        }
    }

    /// Sends the stop signal now and arms SIGKILL for `max(now + 2 s, deadline)`.
    ///
    /// The stop signal is the entry's `stop_signal`, except for the command
    /// given after `--` during a termination that a signal began: that one
    /// gets the signal podinit received (SIGTERM or SIGINT), as tini and
    /// dumb-init pass on the signal they get (docs/signals.md).
    pub(crate) fn send_stop(&mut self, entry: EntryId, now: Instant, deadline: Instant) {
        let spec = &self.spec.entries[entry];
        let signal = match (self.term_signal, self.terminating()) {
            (Some(received), true) if spec.stop_with_received_signal => received,
            _ => spec.stop_signal,
        };
        let instance = self.entries[entry].instance;
        let Some(live) = self.entries[entry].live() else { return };
        let Some(stop) = live.stop() else { return };
        if stop.step.signalled_at().is_some() {
            return;
        }
        let pid = live.pid();
        let at = (now + MIN_STOP_GRACE).max(deadline);
        let mut stop = stop.clone();
        stop.step = StopStep::Signalled { at: now, kill_at: at };
        self.set_stage(entry, Stage::Stopping(stop));
        self.note(entry, Said::Stopping { pid, signal });
        self.out.push(Action::Signal { entry, pid, signal });
        if signal != Signal::CONT && signal != Signal::KILL {
            // A stopped process (Ctrl-Z, SIGSTOP) cannot act on its stop signal
            // until it runs again; systemd sends SIGCONT after it for the same reason.
            self.out.push(Action::Signal { entry, pid, signal: Signal::CONT });
        }
        self.out.push(Action::ArmTimer { timer: Timer::Stop(entry, instance), at });
    }

    /// The grace of a stop whose stop signal has gone out is over: SIGKILL
    /// (kubernetes.io "Pod Lifecycle", termination of Pods).
    pub(crate) fn kill_at_deadline(&mut self, entry: EntryId, stop: Stop) {
        let StopStep::Signalled { at, kill_at } = stop.step else { return };
        let Some(pid) = self.entries[entry].live().map(Live::pid) else { return };
        let step = StopStep::Killed { signalled_at: at, kill_at };
        self.set_stage(entry, Stage::Stopping(Stop { step, ..stop }));
        self.note(entry, Said::Killed { pid });
        self.out.push(Action::Signal { entry, pid, signal: Signal::KILL });
    }
}
