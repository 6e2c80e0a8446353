//! Panics inside podinit's own tasks (probe attempts, hooks, status
//! connections) are caught and turned into a value, never lost.
//!
//! A task spawned on the runtime that panics ends silently: its panic is kept
//! in a join handle nobody reads. [`CatchPanic`] polls a future inside
//! `catch_unwind`, so the caller gets `Err(message)` and decides: a probe
//! attempt counts as failed, a hook as failed, a status server is restarted.
//! The panic hook (`main.rs`) has already logged where it happened.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A task of the event loop, boxed. tokio builds its task machinery (poll,
/// shutdown, join handle, for both schedulers of a current-thread runtime)
/// once per future type, about 3.5 KB of the static binary each: tasks
/// spawned as this one type share one copy.
pub type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Spawns `fut` on the event loop's `LocalSet`, as a [`Task`].
pub fn spawn(fut: impl Future<Output = ()> + 'static) -> tokio::task::JoinHandle<()> {
    let task: Task = Box::pin(fut);
    tokio::task::spawn_local(task)
}

/// A panic caught in a task, with its message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Panicked(pub String);

/// A future that resolves to `Err(Panicked)` if polling the inner one panics.
/// The inner future is never polled again after a panic.
pub struct CatchPanic<F> {
    inner: Option<Pin<Box<F>>>,
}

impl<F: Future> CatchPanic<F> {
    /// Wraps `fut`.
    pub fn new(fut: F) -> Self {
        CatchPanic { inner: Some(Box::pin(fut)) }
    }
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, Panicked>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(Err(Panicked("polled after it panicked".into())));
        };
        // The inner future is dropped right after a panic and never used again,
        // so whatever state the panic left it in is never observed.
        match catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(v)) => {
                self.inner = None;
                Poll::Ready(Ok(v))
            }
            Err(payload) => {
                self.inner = None;
                Poll::Ready(Err(Panicked(panic_message(payload.as_ref()))))
            }
        }
    }
}

/// The text of a panic's payload (`panic!("...")` gives a `&str` or a `String`).
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic without a message".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_with_its_message() {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let got = rt.block_on(CatchPanic::new(async {
            tokio::task::yield_now().await;
            if true {
                panic!("boom {}", 7);
            }
            1
        }));
        assert_eq!(got, Err(Panicked("boom 7".to_owned())));
        assert_eq!(rt.block_on(CatchPanic::new(async { 2 })), Ok(2));
    }
}
