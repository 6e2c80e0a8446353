//! The reaper on real processes (not as PID 1): raw wait statuses of any
//! signal, and no signal to a pid it has reaped. One test per file, so that
//! the reaper's `waitid(P_ALL)` sees only this test's children.

// The reaper, not `Child::wait`, reaps these children: that is what is tested.
#![allow(clippy::zombie_processes)]

use std::process::Command;
use std::time::{Duration, Instant};

use podinit::config::Signal;
use podinit::lifecycle::exit_status::Exit;
use podinit::runtime::reaper::{Reaper, Waiter};

/// Drains until `rx` has the exit of its process (at most 5 s).
fn exit_of(reaper: &Reaper, rx: &mut tokio::sync::oneshot::Receiver<Exit>) -> Exit {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        reaper.drain();
        if let Ok(exit) = rx.try_recv() {
            return exit;
        }
        assert!(Instant::now() < until, "no exit within 5 s");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn exits_by_any_signal_are_decoded_and_a_reaped_pid_is_never_signalled() {
    let reaper = Reaper::default();
    for (script, want) in [
        ("exit 42", Exit::Code(42)),
        ("kill -36 $$", Exit::Signal(36)),
        ("kill -64 $$", Exit::Signal(64)),
        ("kill -9 $$", Exit::Signal(9)),
    ] {
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        let child = reaper.spawn(&mut cmd, Waiter::Task(tx)).expect("spawn sh");
        let pid = i32::try_from(child.id()).unwrap();
        assert_eq!(exit_of(&reaper, &mut rx), want, "{script}");
        assert!(!reaper.holds(pid));
        let refused = reaper.signal_group(pid, Signal::KILL).expect_err("a reaped pid was signalled");
        assert_eq!(refused.raw_os_error(), Some(libc::ESRCH));
    }
    assert!(reaper.is_empty());

    // A live one is signalled, through its group.
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    let mut cmd = Command::new("sleep");
    cmd.arg("30");
    std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
    let child = reaper.spawn(&mut cmd, Waiter::Task(tx)).expect("spawn sleep");
    let pid = i32::try_from(child.id()).unwrap();
    reaper.signal_group(pid, Signal::parse("SIGRTMIN+3").unwrap()).expect("signal a live group");
    assert_eq!(exit_of(&reaper, &mut rx), Exit::Signal(37));
}
