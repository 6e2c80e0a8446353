//! A picture of the start (docs/control.md, "podinit status --timing"): for
//! each entry, when the start sequence asked for it, when it started (its
//! post_start returned and its startup probe passed), when it was first
//! ready, and when the start sequence went past it; and the critical chain,
//! the entries the start sequence went through one after the other up to
//! the main that was ready last.
//!
//! Each instant is the `now` of the step in which it happened, recorded once
//! at the end of the step ([`Pod::record_times`]), and never overwritten: the
//! times are the first ones since the pod's first start. A restart of an
//! entry or of the whole pod (`restart_all`) changes none that is set; one
//! that had not happened yet is taken from whichever instance (or boot)
//! reaches it first. So the chain is the first boot's whenever the first
//! boot got every main ready.

use std::time::{Duration, Instant};

use crate::events::EntryId;
use crate::pod::{Phase, Pod};
use crate::spec::Role;

/// When one entry first reached each point of its start; `None`: not yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Timing {
    /// Its first spawn was asked for: the start sequence reached it (or
    /// `podinit reload` added it after the sequence).
    pub asked: Option<Instant>,
    /// An instance of it first started (post_start returned, startup probe
    /// passed).
    pub started: Option<Instant>,
    /// An instance of it was first ready (never for an init).
    pub ready: Option<Instant>,
    /// The start sequence went past it: an init succeeded, a sidecar started
    /// (and was ready, with `hold_until = "ready"`), a main was spawned and
    /// its post_start returned. `passed - asked` is how long it held the
    /// sequence.
    pub passed: Option<Instant>,
}

impl Timing {
    /// How long it held the start sequence, once it went past it.
    pub fn held(&self) -> Option<Duration> {
        Some(self.passed?.saturating_duration_since(self.asked?))
    }
}

/// One link of the [`Chain`]: an entry, when the sequence asked for it and
/// how long it took (to be passed; for the chain's last main, to be ready).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    pub entry: EntryId,
    pub at: Instant,
    pub took: Duration,
}

/// The critical chain of the start: from the first entry the sequence asked
/// for to the main that was ready last, each entry in the order the start
/// sequence took them (inits and sidecars in file order, then the mains up
/// to that one). `ready` is when that main was first ready: the end of the
/// chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chain {
    pub links: Vec<Link>,
    pub ready: Instant,
}

impl Pod {
    /// When the pod's start sequence first began ([`Pod::start`]'s `now`).
    pub fn first_start(&self) -> Option<Instant> {
        self.first_start
    }

    /// Records, at the end of a step, what happened first in it (see the
    /// module's doc).
    pub(crate) fn record_times(&mut self, now: Instant) {
        for (e, s) in self.entries.iter_mut().zip(&self.spec.entries) {
            let (started, ready) = e.live().map_or((false, false), |l| (l.started(), l.ready()));
            let t = &mut e.timing;
            if t.asked.is_none() && e.instance > 0 {
                t.asked = Some(now);
            }
            if t.started.is_none() && started {
                t.started = Some(now);
            }
            if t.ready.is_none() && s.role != Role::Init && ready {
                t.ready = Some(now);
            }
        }
        let (sequence_passed, mains_passed) = match self.phase {
            Phase::Booting { cursor } => (cursor, 0),
            Phase::Running { next_main } => (self.sequence.len(), next_main),
            Phase::Restarting | Phase::Terminating { .. } | Phase::Done => (0, 0),
        };
        let passed = self.sequence[..sequence_passed.min(self.sequence.len())]
            .iter()
            .chain(&self.mains[..mains_passed.min(self.mains.len())]);
        for &i in passed {
            let t = &mut self.entries[i].timing;
            if t.asked.is_some() && t.passed.is_none() {
                t.passed = Some(now);
            }
        }
    }

    /// The critical chain, once every main (not removed) has been ready;
    /// `None` before.
    pub fn critical_chain(&self) -> Option<Chain> {
        let mains: Vec<EntryId> =
            self.mains.iter().copied().filter(|&m| !self.entries[m].is_removed()).collect();
        let mut last: Option<(EntryId, Instant)> = None;
        for &m in &mains {
            let ready = self.entries[m].timing.ready?;
            if last.is_none_or(|(_, at)| ready >= at) {
                last = Some((m, ready));
            }
        }
        let (target, ready) = last?;
        let mut links = Vec::new();
        for &i in self.sequence.iter().chain(mains.iter().take_while(|&&m| m != target)) {
            let t = &self.entries[i].timing;
            if let (Some(at), Some(took)) = (t.asked, t.held()) {
                links.push(Link { entry: i, at, took });
            }
        }
        let at = self.entries[target].timing.asked?;
        links.push(Link { entry: target, at, took: ready.saturating_duration_since(at) });
        Some(Chain { links, ready })
    }
}
