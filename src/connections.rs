//! How many connections the status socket and the HTTP endpoint each hold at
//! once (docs/control.md, "Connections").
//!
//! Every connection costs podinit a descriptor of its RLIMIT_NOFILE
//! (getrlimit(2)), which it shares with every pipe, exec probe and spawn of
//! the pod: clients that hold connections open must never take the
//! descriptor a restart needs. So each server holds at most [`cap`]
//! connections, each with a [`Slot`].
//!
//! A connection that has not sent its request yet is idle. A new connection
//! that finds every slot held closes the oldest idle one (it is told `busy`,
//! as a refused one) and takes its slot, so that clients that connect and
//! say nothing, or trickle their request, cannot keep a kubelet probe or
//! `podinit status` out. Only when no connection is idle (each is being
//! answered, or streams `podinit events`), or [`HAND_OVERS`] such hand-overs
//! are under way, is the new one refused at once, without a task or a wait.
//! A server thus holds at most its cap plus [`HAND_OVERS`] new connections
//! waiting for the slots being handed over (the closed connections give
//! them back as soon as their tasks run), plus the one being refused.
//!
//! Everything here runs on the event loop's thread: no locks. A slot is a
//! count in a [`Cell`], given back when its [`Slot`] drops; one given back
//! while hand-overs wait goes to the oldest of them at once, so that no newer
//! connection takes it first.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Poll;

use tokio::sync::oneshot;

/// Most connections one server holds at once. 32 is far more than its
/// users need at a time (a kubelet's probes, a Prometheus scrape, a few
/// `podinit status` and `podinit events`), and the two servers together
/// then hold at most 64 of a 1,024-descriptor limit.
pub const MAX_CONNECTIONS: usize = 32;

/// Most new connections at once that wait for the slot of an idle one being
/// closed: a few clients that arrive together (a kubelet's probes, a scrape)
/// all get in.
pub const HAND_OVERS: usize = 4;

/// Under a low RLIMIT_NOFILE, one server holds at most this fraction of it
/// (1/16: both servers together at most an eighth).
const NOFILE_SHARE: u64 = 16;

/// How many connections one server holds at once: [`MAX_CONNECTIONS`], or a
/// sixteenth of podinit's soft RLIMIT_NOFILE when that is less (at least 1).
/// Read once, when the server starts: podinit does not change its own limit.
pub fn cap() -> usize {
    let soft = crate::sys::process::open_files_limit().unwrap_or(u64::MAX);
    let share = usize::try_from(soft / NOFILE_SHARE).unwrap_or(usize::MAX);
    share.clamp(1, MAX_CONNECTIONS)
}

/// A new connection of one of the servers, whatever its kind of socket.
pub trait Connection {
    /// Tells the client that podinit is busy, and closes the connection.
    fn refuse(&self);
    /// Answers the connection, which holds `slot` until it ends.
    fn answer(self: Box<Self>, slot: Slot) -> crate::runtime::task::Task;
    /// What a panic while answering is logged as (`a status request`).
    fn what(&self) -> &'static str;
}

/// Takes a new connection in: refused at once when it gets no slot, else
/// answered on a task of its own once its slot is free (and refused when the
/// slot handed over does not come free in time). A panic while answering is
/// logged and ends only that connection. Both servers come through here, so
/// that the binary holds one copy of this, not one per kind of socket.
///
/// Returns whether the connection waits for the slot of an idle one: the
/// caller then yields before its next accept, so that the closed
/// connection's task gives its slot back before a whole burst of new ones.
pub fn take(slots: &Rc<Slots>, conn: Box<dyn Connection>) -> bool {
    let admission = slots.admit();
    let handed_over = match admission {
        Admission::Refused => {
            conn.refuse();
            return false;
        }
        Admission::Now(_) => false,
        Admission::HandedOver(_) => true,
    };
    crate::runtime::task::spawn(async move {
        let Some(slot) = admission.slot().await else {
            conn.refuse();
            return;
        };
        let what = conn.what();
        if let Err(panic) = crate::runtime::task::CatchPanic::new(conn.answer(slot)).await {
            tracing::error!("{what} panicked (a bug in podinit): {panic}");
        }
    });
    handed_over
}

/// The slots of one server.
#[derive(Debug)]
pub struct Slots {
    cap: usize,
    /// Slots that no connection holds.
    free: Cell<usize>,
    /// The connections that hold a slot and have not sent their request,
    /// oldest first, each with the sender that closes it (at most `cap`: a
    /// short list).
    idle: RefCell<VecDeque<(u64, oneshot::Sender<()>)>>,
    next_id: Cell<u64>,
    /// New connections that wait for the slot of an idle one being closed.
    handing_over: Cell<usize>,
    /// Where a slot given back goes first: the waiting hand-overs, oldest
    /// first.
    waiting: RefCell<VecDeque<oneshot::Sender<Held>>>,
}

/// What a new connection gets.
#[derive(Debug)]
pub enum Admission {
    /// A free slot.
    Now(Slot),
    /// The slot of the oldest idle connection, once it has closed.
    HandedOver(HandOver),
    /// None: refuse it at once.
    Refused,
}

impl Admission {
    /// The slot, once it is free; `None` when the connection is refused (or
    /// the slot handed over did not come free within
    /// [`crate::status::DEADLINE`]).
    pub async fn slot(self) -> Option<Slot> {
        match self {
            Admission::Now(slot) => Some(slot),
            Admission::Refused => None,
            Admission::HandedOver(mut over) => {
                let held = tokio::time::timeout(crate::status::DEADLINE, &mut over.slot).await;
                match held {
                    Ok(Ok(held)) => Some(Slot::new(held)),
                    _ => None,
                }
            }
        }
    }
}

/// A hand-over under way; dropped (however the new connection's task ends),
/// it makes room for another one. A slot already handed to it and not taken
/// goes on to the next hand-over, or back to the free ones.
#[derive(Debug)]
pub struct HandOver {
    slots: Rc<Slots>,
    slot: oneshot::Receiver<Held>,
}

impl Drop for HandOver {
    fn drop(&mut self) {
        self.slots.handing_over.set(self.slots.handing_over.get().saturating_sub(1));
    }
}

/// One slot taken from the count; given back when dropped.
#[derive(Debug)]
struct Held(Rc<Slots>);

impl Drop for Held {
    fn drop(&mut self) {
        let slots = &self.0;
        let next = slots.waiting.borrow_mut().pop_front();
        match next {
            // A hand-over that has gone already refuses it (the slot comes
            // back in the error and is dropped): it then goes to the next.
            Some(next) => drop(next.send(Held(Rc::clone(slots)))),
            None => slots.free.set(slots.free.get() + 1),
        }
    }
}

impl Slots {
    /// `cap` slots.
    pub fn new(cap: usize) -> Rc<Slots> {
        Rc::new(Slots {
            cap,
            free: Cell::new(cap),
            idle: RefCell::new(VecDeque::new()),
            next_id: Cell::new(0),
            handing_over: Cell::new(0),
            waiting: RefCell::new(VecDeque::new()),
        })
    }

    /// How many slots there are.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// A slot for a new connection: a free one, else the oldest idle
    /// connection's (which is told to close), else none.
    pub fn admit(self: &Rc<Self>) -> Admission {
        if let Some(free) = self.free.get().checked_sub(1) {
            self.free.set(free);
            return Admission::Now(Slot::new(Held(Rc::clone(self))));
        }
        if self.handing_over.get() >= HAND_OVERS {
            return Admission::Refused;
        }
        loop {
            let Some((_, close)) = self.idle.borrow_mut().pop_front() else {
                return Admission::Refused;
            };
            if close.send(()).is_ok() {
                let (give, slot) = oneshot::channel();
                let mut waiting = self.waiting.borrow_mut();
                waiting.retain(|w| !w.is_closed());
                waiting.push_back(give);
                self.handing_over.set(self.handing_over.get() + 1);
                return Admission::HandedOver(HandOver { slots: Rc::clone(self), slot });
            }
        }
    }
}

/// One connection's slot, given back when dropped.
#[derive(Debug)]
pub struct Slot {
    held: Held,
    id: u64,
    /// Resolves when a newer connection takes the slot while this one is idle.
    closing: Option<oneshot::Receiver<()>>,
}

impl Slot {
    /// A new slot, idle from the start: its connection can be closed for a
    /// newer one before its task has even run.
    fn new(held: Held) -> Slot {
        let slots = &held.0;
        let id = slots.next_id.get();
        slots.next_id.set(id.wrapping_add(1));
        let (close, closing) = oneshot::channel();
        slots.idle.borrow_mut().push_back((id, close));
        Slot { held, id, closing: Some(closing) }
    }

    /// Runs `work` (reading the request) while the connection is idle:
    /// `None` when a new connection takes its slot first, and it must then
    /// close.
    pub async fn while_idle<F: Future>(&mut self, work: F) -> Option<F::Output> {
        let mut work = std::pin::pin!(work);
        std::future::poll_fn(|cx| {
            if let Some(closing) = self.closing.as_mut() {
                match Pin::new(closing).poll(cx) {
                    Poll::Ready(Ok(())) => return Poll::Ready(None),
                    // Its sender is gone: no newer connection can take it.
                    Poll::Ready(Err(_)) => self.closing = None,
                    Poll::Pending => {}
                }
            }
            work.as_mut().poll(cx).map(Some)
        })
        .await
    }

    /// The request is in: the connection keeps its slot until it ends.
    pub fn at_work(&mut self) {
        self.not_idle();
        self.closing = None;
    }

    /// Off the idle list, if it is still there.
    fn not_idle(&self) {
        let mut idle = self.held.0.idle.borrow_mut();
        let close = idle.iter().position(|(id, _)| *id == self.id).and_then(|at| idle.remove(at));
        drop(idle);
        drop(close);
    }
}

impl Drop for Slot {
    /// No longer idle; then `held` gives the slot back.
    fn drop(&mut self) {
        self.not_idle();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap()
    }

    #[test]
    fn a_new_connection_takes_the_slot_of_the_oldest_idle_one() {
        runtime().block_on(async {
            // Told to close: the work, which never ends, is cut at once.
            let told = |slot: &mut Slot| ready(slot.while_idle(std::future::pending::<()>())) == Some(None);
            let slots = Slots::new(2);
            let Admission::Now(mut first) = slots.admit() else { panic!("a free slot") };
            let Admission::Now(mut second) = slots.admit() else { panic!("a free slot") };
            // The third takes the slot of the first (idle from the start,
            // the oldest), which is told to close; the second is not.
            let third = slots.admit();
            assert!(matches!(third, Admission::HandedOver(_)));
            assert!(told(&mut first));
            assert!(!told(&mut second));
            drop(first);
            let mut third = third.slot().await.expect("the first's slot");
            // The second and the third at work: nobody idle, refused.
            second.at_work();
            third.at_work();
            assert!(!told(&mut third));
            assert!(matches!(slots.admit(), Admission::Refused));
            drop(second);
            assert!(matches!(slots.admit(), Admission::Now(_)));
        });
    }

    #[test]
    fn at_most_hand_overs_new_connections_wait_for_a_slot() {
        runtime().block_on(async {
            let slots = Slots::new(HAND_OVERS + 1);
            let held: Vec<Slot> = (0..=HAND_OVERS)
                .map(|_| match slots.admit() {
                    Admission::Now(slot) => slot,
                    other => panic!("a free slot, not {other:?}"),
                })
                .collect();
            let waiting: Vec<Admission> = (0..HAND_OVERS).map(|_| slots.admit()).collect();
            assert!(waiting.iter().all(|a| matches!(a, Admission::HandedOver(_))));
            // One connection is still idle, but enough wait already.
            assert!(matches!(slots.admit(), Admission::Refused));
            // A waiting connection that goes makes room for another.
            drop(waiting);
            assert!(matches!(slots.admit(), Admission::HandedOver(_)));
            drop(held);
        });
    }

    #[test]
    fn a_slot_given_back_goes_to_the_waiting_hand_over_first() {
        runtime().block_on(async {
            let slots = Slots::new(1);
            let Admission::Now(first) = slots.admit() else { panic!("a free slot") };
            let over = slots.admit();
            assert!(matches!(over, Admission::HandedOver(_)));
            drop(first);
            // The slot is the hand-over's: a newer connection finds it
            // neither free nor idle.
            assert!(matches!(slots.admit(), Admission::Refused));
            let slot = over.slot().await.expect("the first's slot");
            drop(slot);
            assert!(matches!(slots.admit(), Admission::Now(_)));
        });
    }

    #[test]
    fn a_hand_over_that_has_gone_passes_its_slot_on() {
        runtime().block_on(async {
            let slots = Slots::new(2);
            let Admission::Now(first) = slots.admit() else { panic!("a free slot") };
            let Admission::Now(mut second) = slots.admit() else { panic!("a free slot") };
            let gone = slots.admit();
            let waits = slots.admit();
            assert!(matches!(gone, Admission::HandedOver(_)));
            assert!(matches!(waits, Admission::HandedOver(_)));
            drop(gone);
            // The first's slot goes past the hand-over that went, to the next.
            drop(first);
            let third = waits.slot().await.expect("the first's slot");
            second.at_work();
            drop(second);
            // Nobody waits: the second's slot is free again.
            let fourth = slots.admit();
            assert!(matches!(fourth, Admission::Now(_)));
            assert!(matches!(slots.admit(), Admission::HandedOver(_)));
            drop((third, fourth));
        });
    }

    /// What `fut` gives at its first poll, if it is ready.
    fn ready<T>(fut: impl Future<Output = T>) -> Option<T> {
        let mut fut = std::pin::pin!(fut);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match fut.as_mut().poll(&mut cx) {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        }
    }
}
