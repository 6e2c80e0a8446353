//! The one routine that runs a [`Pod`]: events wait in a queue, one is
//! handled per step, its actions are carried out by [`Effects`], and a
//! spawn's result joins the back of the queue. The runtime's event loop, the
//! unit tests and the property tests all drive the pod through it, so what
//! the tests see is what runs. Requests and reloads are carried out at once,
//! ahead of the queue, as the runtime answers them between two steps.

use std::collections::VecDeque;
use std::time::Instant;

use crate::events::{Action, Control, Event};
use crate::notes::Note;
use crate::pod::Pod;
use crate::spec::PodSpec;

/// What carries out actions: the runtime for real, the tests with fakes.
pub trait Effects {
    /// Carries out one action (`Exit` too: the driver also keeps its status).
    /// The pod is as the step left it. A `Spawn` returns its result (`Spawned`
    /// or `SpawnFailed`), which the [`Driver`] queues like any event.
    fn perform(&mut self, pod: &Pod, action: Action, now: Instant) -> Option<Event>;

    /// Hears what the step found worth saying, before its actions are
    /// carried out (the runtime renders and logs it: [`Note::text`]).
    fn say(&mut self, _pod: &Pod, _notes: Vec<Note>) {}
}

/// The one routine that runs a [`Pod`]: events wait in a queue, one is handled
/// per [`Driver::step`], its actions are carried out by [`Effects`], and a
/// spawn's result joins the back of the queue. The runtime's event loop, the
/// unit tests' simulator and the property tests all drive the pod through it.
#[derive(Debug, Default)]
pub struct Driver {
    queue: VecDeque<Event>,
    /// Set once an `Exit` action was seen.
    exit: Option<i32>,
}

impl Driver {
    /// An empty queue.
    pub fn new() -> Driver {
        Driver::default()
    }

    /// Queues an event that happened (at the back).
    pub fn push(&mut self, event: Event) {
        self.queue.push_back(event);
    }

    /// Queues an event ahead of the others: for tests that play an event as
    /// having arrived before the queued ones.
    pub fn push_front(&mut self, event: Event) {
        self.queue.push_front(event);
    }

    /// Whether events wait.
    pub fn is_busy(&self) -> bool {
        !self.queue.is_empty()
    }

    /// The exit status, once the pod has emitted `Exit`.
    pub fn exit(&self) -> Option<i32> {
        self.exit
    }

    /// Starts the pod and carries out its first actions.
    pub fn start(&mut self, pod: &mut Pod, fx: &mut impl Effects, now: Instant) {
        let actions = pod.start(now);
        self.carry_out(pod, actions, fx, now);
    }

    /// Handles the next queued event, if any; `false` when none waited.
    pub fn step(&mut self, pod: &mut Pod, fx: &mut impl Effects, now: Instant) -> bool {
        let Some(event) = self.queue.pop_front() else { return false };
        let actions = pod.handle(event, now);
        self.carry_out(pod, actions, fx, now);
        true
    }

    /// Carries out a request from the command line ([`Pod::control`]) at
    /// once, ahead of the queued events; `Err` says why it was refused.
    pub fn control(
        &mut self,
        pod: &mut Pod,
        fx: &mut impl Effects,
        request: Control,
        now: Instant,
    ) -> Result<(), String> {
        let (result, actions) = pod.control(request, now);
        self.carry_out(pod, actions, fx, now);
        result
    }

    /// Carries out a `podinit reload` ([`Pod::reload`]) at once.
    ///
    /// # Errors
    /// Why nothing changed (termination has begun, an entry changes role...).
    pub fn reload(
        &mut self,
        pod: &mut Pod,
        fx: &mut impl Effects,
        spec: PodSpec,
        now: Instant,
    ) -> Result<Vec<String>, String> {
        let (result, actions) = pod.reload(spec, now);
        self.carry_out(pod, actions, fx, now);
        result
    }

    /// Handles queued events until none is left (tests; the runtime steps one
    /// at a time so that signals come in between).
    pub fn run_queue(&mut self, pod: &mut Pod, fx: &mut impl Effects, now: Instant) {
        while self.step(pod, fx, now) {}
    }

    /// Says what the step found worth saying, then carries out its actions.
    fn carry_out(&mut self, pod: &mut Pod, actions: Vec<Action>, fx: &mut impl Effects, now: Instant) {
        let notes = pod.take_notes();
        fx.say(pod, notes);
        self.apply(pod, actions, fx, now);
    }

    fn apply(&mut self, pod: &Pod, actions: Vec<Action>, fx: &mut impl Effects, now: Instant) {
        for action in actions {
            if let Action::Exit { status } = action {
                self.exit = Some(status);
            }
            if let Some(result) = fx.perform(pod, action, now) {
                self.queue.push_back(result);
            }
        }
    }
}
