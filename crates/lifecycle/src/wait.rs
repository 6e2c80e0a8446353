//! Why the start sequence waits (docs/lifecycle.md, "Why the pod waits"):
//! while the sequence waits at one entry (an init still running, a sidecar's
//! post_start hook, its startup probe, its readiness with `hold_until =
//! "ready"`, its backoff after an exit before it passed, a main's
//! post_start that holds the next main), a [`Timer::Wait`]
//! is armed for that entry; each time it fires the machine says at info
//! level what it waits for, for how long, and why the probe it waits for
//! last failed ([`Said::Waiting`]). The notes come after 4, 8, 16 and 32 s
//! of waiting, then every minute ([`next_note`]). The timer is cancelled as
//! soon as the sequence moves past the entry, and armed afresh for the next
//! one; a pod that never waits (a plain init) never arms it.
//!
//! What the machine keeps for this is the entry the sequence waits at and
//! since when ([`WaitClock`]), and the reason of the last failed startup or
//! readiness attempt of that entry (`Entry::probe_failure`), kept only while
//! the sequence waits at it.

use std::time::{Duration, Instant};

use crate::entry::{EntryState, Live, Stage, Starting};
use crate::events::{Action, EntryId, Timer};
use crate::notes::Said;
use crate::pod::{Phase, Pod};
use crate::spec::{ProbeKind, Role};

/// The first note about a wait comes after this much waiting.
pub const FIRST_WAIT_NOTE: Duration = Duration::from_secs(4);

/// Up to this much waiting, the next note comes after twice the wait.
const DOUBLING_UNTIL: Duration = Duration::from_secs(32);

/// Past [`DOUBLING_UNTIL`], a note comes at each whole multiple of this.
const WAIT_NOTE_EVERY: Duration = Duration::from_secs(60);

/// How long the sequence has waited when the note after the one at `waited`
/// comes: twice as long up to 32 s (4, 8, 16, 32 s), then at the next whole
/// minute (60 s, 120 s, 180 s...).
pub fn next_note(waited: Duration) -> Duration {
    if waited < FIRST_WAIT_NOTE {
        FIRST_WAIT_NOTE
    } else if waited < DOUBLING_UNTIL {
        waited * 2
    } else {
        let minutes = waited.as_secs() / WAIT_NOTE_EVERY.as_secs();
        WAIT_NOTE_EVERY * u32::try_from(minutes + 1).unwrap_or(u32::MAX)
    }
}

/// What the start sequence waits for at an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitFor {
    /// An init to exit.
    Exit,
    /// Its post_start hook to return (its startup probe, if it has one,
    /// is named once the hook has returned).
    PostStart,
    /// Its startup probe to pass.
    StartupProbe,
    /// Its readiness probe to pass (a sidecar with `hold_until = "ready"`).
    ReadinessProbe,
    /// Its backoff to end, after an exit, before it starts again.
    Backoff,
    /// Its process to be started (its spawn is under way). Not noted: a
    /// spawn is answered at once.
    Spawn,
    /// Its stop (a failed probe, `podinit restart`) to end. Not noted: the
    /// stop says what it does itself.
    Stop,
    /// Nothing: it is not running and nothing starts it by itself
    /// (`podinit stop`, or a main that exited). Only a pod that is running
    /// waits for one (its readiness, [`Pod::awaited`]).
    Down,
}

impl WaitFor {
    /// Its name for machines: the `for` field of the `waiting` line and of
    /// `podinit status --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitFor::Exit => "exit",
            WaitFor::PostStart => "post_start",
            WaitFor::StartupProbe => "startup_probe",
            WaitFor::ReadinessProbe => "readiness_probe",
            WaitFor::Backoff => "backoff",
            WaitFor::Spawn => "spawn",
            WaitFor::Stop => "stop",
            WaitFor::Down => "not_running",
        }
    }

    /// Whether the waiting notes, `podinit status` and `/readyz` name it:
    /// not a spawn or a stop under way, which end by themselves.
    pub fn noted(self) -> bool {
        !matches!(self, WaitFor::Spawn | WaitFor::Stop | WaitFor::Down)
    }

    /// Its name for people.
    pub fn human(self) -> &'static str {
        match self {
            WaitFor::Exit => "exit",
            WaitFor::PostStart => "post_start hook",
            WaitFor::StartupProbe => "startup probe",
            WaitFor::ReadinessProbe => "readiness probe",
            WaitFor::Backoff => "backoff before its restart",
            WaitFor::Spawn => "spawning",
            WaitFor::Stop => "stopping",
            WaitFor::Down => "not running",
        }
    }

    /// The probe it waits for, if it is one.
    pub fn probe(self) -> Option<ProbeKind> {
        match self {
            WaitFor::StartupProbe => Some(ProbeKind::Startup),
            WaitFor::ReadinessProbe => Some(ProbeKind::Readiness),
            WaitFor::Exit
            | WaitFor::PostStart
            | WaitFor::Backoff
            | WaitFor::Spawn
            | WaitFor::Stop
            | WaitFor::Down => None,
        }
    }
}

/// Where the start sequence waits, for `podinit status` and `/readyz`
/// ([`Pod::waiting`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wait {
    /// The entry it waits at.
    pub entry: EntryId,
    /// What it waits for.
    pub what: WaitFor,
    /// Since when it waits at that entry.
    pub since: Instant,
    /// Why the probe it waits for last failed, when one failed and said.
    pub last_failure: Option<String>,
}

/// The entry the start sequence waits at, since when, and how long it will
/// have waited at its next note.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaitClock {
    pub(crate) entry: EntryId,
    pub(crate) since: Instant,
    pub(crate) next: Duration,
}

impl Pod {
    /// The entry whose progress the start sequence waits for: the one at
    /// the sequence's cursor, or a main whose post_start holds a later main.
    fn wait_entry(&self) -> Option<EntryId> {
        match self.phase {
            Phase::Booting { cursor } => {
                self.sequence.get(cursor).copied().filter(|&e| !self.entries[e].is_removed())
            }
            Phase::Running { next_main } if next_main + 1 < self.mains.len() => {
                let entry = self.mains[next_main];
                let holds = matches!(
                    self.entries[entry].state,
                    EntryState::Running(Live {
                        stage: Stage::Starting(Starting::HookAndProbe { .. } | Starting::Hook),
                        ..
                    })
                );
                holds.then_some(entry)
            }
            Phase::Running { .. } | Phase::Restarting | Phase::Terminating { .. } | Phase::Done => None,
        }
    }

    /// What `entry` has still to do before it stops holding the start
    /// sequence or the pod's readiness; `None`: nothing (it has started and
    /// is ready).
    pub(crate) fn holds(&self, entry: EntryId) -> Option<WaitFor> {
        let e = &self.entries[entry];
        let live = match &e.state {
            EntryState::Backoff { .. } => return Some(WaitFor::Backoff),
            EntryState::Waiting | EntryState::Spawning { .. } | EntryState::SpawningCopy { .. } => {
                return Some(WaitFor::Spawn)
            }
            EntryState::Exited | EntryState::Held | EntryState::Removed => return Some(WaitFor::Down),
            EntryState::Running(live) => live,
        };
        if self.role(entry) == Role::Init {
            return Some(WaitFor::Exit);
        }
        match &live.stage {
            Stage::Starting(Starting::HookAndProbe { .. } | Starting::Hook) => Some(WaitFor::PostStart),
            Stage::Starting(Starting::Probe { .. }) => Some(WaitFor::StartupProbe),
            Stage::Started { ready: false, .. } => Some(WaitFor::ReadinessProbe),
            Stage::Started { ready: true, .. } => None,
            Stage::Stopping(_) => Some(WaitFor::Stop),
        }
    }

    /// What the sequence waits for at `entry` that the waiting notes name:
    /// nothing while its spawn or stop is under way.
    fn wait_for(&self, entry: EntryId) -> Option<WaitFor> {
        self.holds(entry).filter(|w| w.noted())
    }

    /// Where the start sequence waits now, and for what; `None` when it
    /// does not wait, or its entry's spawn is under way.
    pub fn waiting(&self) -> Option<Wait> {
        let clock = self.wait?;
        let what = self.wait_for(clock.entry)?;
        Some(Wait {
            entry: clock.entry,
            what,
            since: clock.since,
            last_failure: self.last_failure(clock.entry, what).map(str::to_owned),
        })
    }

    /// Why the probe `what` names last failed at `entry`, when it said.
    fn last_failure(&self, entry: EntryId, what: WaitFor) -> Option<&str> {
        let kind = what.probe()?;
        match &self.entries[entry].probe_failure {
            Some((k, why)) if *k == kind => Some(why),
            _ => None,
        }
    }

    /// Keeps why a startup or readiness attempt of `entry` failed, while
    /// the sequence waits at it (the waiting notes name it).
    pub(crate) fn keep_probe_failure(&mut self, entry: EntryId, kind: ProbeKind, why: Option<&String>) {
        if kind == ProbeKind::Liveness || self.wait.is_none_or(|w| w.entry != entry) {
            return;
        }
        if let Some(e) = self.entries.get_mut(entry) {
            e.probe_failure = why.map(|why| (kind, why.clone()));
        }
    }

    /// After each step: arms [`Timer::Wait`] when the sequence begins to
    /// wait at an entry, cancels it when it moves past it.
    pub(crate) fn track_wait(&mut self, now: Instant) {
        let at = self.wait_entry();
        if self.wait.map(|w| w.entry) == at {
            return;
        }
        if let Some(old) = self.wait.take() {
            self.entries[old.entry].probe_failure = None;
            self.out.push(Action::CancelTimer(Timer::Wait(old.entry)));
        }
        if let Some(entry) = at {
            self.wait = Some(WaitClock { entry, since: now, next: FIRST_WAIT_NOTE });
            self.out.push(Action::ArmTimer { timer: Timer::Wait(entry), at: now + FIRST_WAIT_NOTE });
        }
    }

    /// [`Timer::Wait`] fired: says what the sequence waits for at `entry`
    /// (nothing while its spawn is under way) and arms the next note. A
    /// timer of an earlier wait is ignored.
    pub(crate) fn on_wait_timer(&mut self, entry: EntryId, now: Instant) {
        let Some(clock) = self.wait.filter(|w| w.entry == entry && now >= w.since + w.next) else {
            return;
        };
        if let Some(what) = self.wait_for(entry) {
            let waited = now.saturating_duration_since(clock.since);
            let why = self.last_failure(entry, what).map(str::to_owned);
            self.note(entry, Said::Waiting { what, waited, why });
        }
        let next = next_note(clock.next);
        self.wait = Some(WaitClock { next, ..clock });
        self.out.push(Action::ArmTimer { timer: Timer::Wait(entry), at: clock.since + next });
    }
}
