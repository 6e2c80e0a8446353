//! Restart backoff of one entry (docs/reference.md, "Lifecycle in short"; after the kubelet's crash-loop
//! backoff, kubernetes.io "Pod Lifecycle", "Container restarts"): the first restart is immediate, each further one waits
//! `initial`, doubling up to `max`, counted from the exit; the count starts over
//! once an instance has run `reset_after` without exiting. Pure: no clock.

use std::time::Duration;

use crate::spec::BackoffSpec;

/// The backoff state of one entry.
#[derive(Debug, Clone)]
pub struct Backoff {
    spec: BackoffSpec,
    /// Restarts since the last reset.
    count: u32,
}

impl Backoff {
    /// A fresh backoff: the next restart is immediate.
    pub fn new(spec: BackoffSpec) -> Self {
        Backoff { spec, count: 0 }
    }

    /// The wait before the next restart of an instance that ran for `ran_for`
    /// before it exited, and counts that restart.
    pub fn next_delay(&mut self, ran_for: Duration) -> Duration {
        if ran_for >= self.spec.reset_after {
            self.count = 0;
        }
        let delay = match self.count {
            0 => Duration::ZERO,
            n => {
                let factor = 1u32.checked_shl(n - 1).unwrap_or(u32::MAX);
                self.spec.initial.checked_mul(factor).unwrap_or(self.spec.max).min(self.spec.max)
            }
        };
        self.count = self.count.saturating_add(1);
        delay
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> BackoffSpec {
        BackoffSpec {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(10),
            reset_after: Duration::from_secs(60),
        }
    }

    #[test]
    fn immediate_then_doubling_to_max() {
        let mut b = Backoff::new(spec());
        let got: Vec<u64> = (0..7).map(|_| b.next_delay(Duration::ZERO).as_secs()).collect();
        assert_eq!(got, [0, 1, 2, 4, 8, 10, 10]);
    }

    #[test]
    fn long_run_resets_the_count() {
        let mut b = Backoff::new(spec());
        for _ in 0..5 {
            b.next_delay(Duration::from_secs(1));
        }
        assert_eq!(b.next_delay(Duration::from_secs(60)), Duration::ZERO);
        assert_eq!(b.next_delay(Duration::from_secs(1)), Duration::from_secs(1));
    }

    #[test]
    fn never_overflows() {
        let mut b = Backoff::new(spec());
        for _ in 0..100 {
            assert!(b.next_delay(Duration::ZERO) <= Duration::from_secs(10));
        }
    }
}
