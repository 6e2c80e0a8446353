//! What probe results do once an instance has started: liveness failures in
//! a row stop it (docs/lifecycle.md rule 10, with the probe's own grace),
//! readiness only reports, also while it stops (rules 11-13); the thresholds
//! count results in a row. A failure says why at its threshold only, so a
//! probe that fails every second does not flood the log. Startup probe
//! results are `start.rs`'s: they decide when an instance has started.

use std::time::{Duration, Instant};

use crate::entry::{Outcome, Stage, Stop, Streak, NO_SUCH_PROBE};
use crate::events::EntryId;
use crate::notes::Said;
use crate::pod::Pod;
use crate::spec::ProbeKind;

impl Pod {
    /// A liveness probe's result once started (rule 10).
    pub(crate) fn on_liveness_result(
        &mut self,
        entry: EntryId,
        (ready, readiness, mut liveness): (bool, Streak, Streak),
        ok: bool,
        now: Instant,
    ) -> Outcome {
        let kind = ProbeKind::Liveness;
        let Some(probe) = self.spec.entries[entry].probe(kind) else {
            return Outcome::Ignored(NO_SUCH_PROBE);
        };
        let (failure_threshold, probe_grace) = (probe.failure_threshold, probe.termination_grace_period);
        if ok && liveness.failures > 0 {
            // Below the threshold nothing was said at info level, so
            // neither is the recovery.
            self.note(entry, Said::LivenessRecovered { failures: liveness.failures });
        }
        liveness.add(ok);
        self.set_stage(entry, Stage::Started { ready, readiness, liveness });
        if !ok {
            self.probe_failure(entry, kind, liveness.failures, failure_threshold, probe_grace, now);
        }
        Outcome::Applied
    }

    /// A readiness probe's result once started (rules 11-12); a sidecar
    /// that becomes ready may pass the start sequence (rule 3).
    pub(crate) fn on_readiness_result(
        &mut self,
        entry: EntryId,
        (ready, mut readiness, liveness): (bool, Streak, Streak),
        ok: bool,
        now: Instant,
    ) -> Outcome {
        let Some(probe) = self.spec.entries[entry].probe(ProbeKind::Readiness) else {
            return Outcome::Ignored(NO_SUCH_PROBE);
        };
        let (success, failure) = (probe.success_threshold, probe.failure_threshold);
        readiness.add(ok);
        let ready = self.readiness(entry, ready, readiness, success, failure);
        self.set_stage(entry, Stage::Started { ready, readiness, liveness });
        if ready {
            self.check_sidecar_passed(entry, now);
        }
        Outcome::Applied
    }

    /// A readiness probe's result while the instance stops: readiness goes
    /// on, it only reports (rule 13).
    pub(crate) fn on_readiness_while_stopping(
        &mut self,
        entry: EntryId,
        mut stop: Stop,
        ok: bool,
    ) -> Outcome {
        let Some(probe) = self.spec.entries[entry].probe(ProbeKind::Readiness) else {
            return Outcome::Ignored(NO_SUCH_PROBE);
        };
        let (success, failure) = (probe.success_threshold, probe.failure_threshold);
        stop.readiness.add(ok);
        stop.ready = self.readiness(entry, stop.ready, stop.readiness, success, failure);
        self.set_stage(entry, Stage::Stopping(stop));
        Outcome::Applied
    }

    /// The new readiness after a readiness result; notes a change.
    fn readiness(&mut self, entry: EntryId, ready: bool, streak: Streak, success: u32, failure: u32) -> bool {
        if !ready && streak.successes >= success {
            self.note(entry, Said::Ready);
            true
        } else if ready && streak.failures >= failure {
            let why = self.probe_why.take();
            self.note(entry, Said::Unready { threshold: failure, why });
            false
        } else {
            ready
        }
    }

    /// A startup or liveness failure; the threshold reached stops the process
    /// (docs/lifecycle.md rule 10), with the probe's grace when it has one.
    pub(crate) fn probe_failure(
        &mut self,
        entry: EntryId,
        kind: ProbeKind,
        failures: u32,
        threshold: u32,
        grace: Option<Duration>,
        now: Instant,
    ) {
        self.note(entry, Said::ProbeAttemptFailed { kind, failures, threshold });
        if failures >= threshold {
            // What happens after the stop (a restart, or none) is said when
            // the process has exited.
            let why = self.probe_why.take();
            self.note(entry, Said::ProbeFailed { kind, threshold, why });
            self.stop_failed(entry, grace, now);
        }
    }
}
