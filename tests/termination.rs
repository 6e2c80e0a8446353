//! The lifecycle (docs/lifecycle.md) rules 9-12: stop order, the grace budget with its 2 s floor, the
//! second SIGINT, and the repeated SIGTERM.

mod common;
use common::*;
use std::fs;
use std::thread;
use std::time::{Duration, Instant};

/// A long-running entry that records `start NAME`, and on SIGTERM records
/// `stop NAME`, takes 100 ms, records `stopped NAME` and exits 0.
fn slow_stopper(name: &str) -> String {
    format!(
        r#"trap 'echo "stop {name}" >> "@REC@"; sleep 0.1; echo "stopped {name}" >> "@REC@"; exit 0' TERM
echo "start {name}" >> "@REC@"
while :; do sleep 0.1; done"#
    )
}

fn without_starts(r: &[String]) -> Vec<String> {
    r.iter().filter(|l| !l.starts_with("start ")).cloned().collect()
}

#[test]
fn sidecars_stop_in_reverse_order_after_the_main_completes() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    for s in ["s1", "s2", "s3"] {
        cfg += &entry(s, "sidecar", &slow_stopper(s), "");
    }
    cfg += &entry(
        "app",
        "main",
        &format!(
            "{}\n{}\n{}\necho \"exit app\" >> \"@REC@\"",
            sh_wait_records("start s1", 1, 5),
            sh_wait_records("start s2", 1, 5),
            sh_wait_records("start s3", 1, 5)
        ),
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(
        without_starts(&out.records),
        vec!["exit app", "stop s3", "stopped s3", "stop s2", "stopped s2", "stop s1", "stopped s1"],
        "{}",
        out.report()
    );
}

/// SIGTERM to podinit: mains get their stop signal first, then sidecars one
/// at a time in reverse order; a main that exits 0 on TERM gives status 0.
#[test]
fn sigterm_stops_mains_first_then_sidecars_in_reverse_order() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("s1", "sidecar", &slow_stopper("s1"), "");
    cfg += &entry("s2", "sidecar", &slow_stopper("s2"), "");
    cfg += &entry("app", "main", &slow_stopper("app"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    for n in ["s1", "s2", "app"] {
        run.wait_for_record(&format!("start {n}"), secs(5.0));
    }
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    assert_eq!(
        without_starts(&out.records),
        vec!["stop app", "stopped app", "stop s2", "stopped s2", "stop s1", "stopped s1"],
        "{}",
        out.report()
    );
}

/// A main killed by the SIGTERM podinit forwards as its stop signal gives 143.
#[test]
fn sigterm_with_a_default_main_gives_143() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"\nwhile :; do sleep 0.1; done", "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(10.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(143);
}

/// A main that ignores SIGTERM is SIGKILLed once its stop signal has had its
/// 2 s (grace 1 s, so the floor applies): status 137, well inside 6 s.
#[test]
fn sigterm_ignoring_main_is_killed_after_the_grace_floor() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"1s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        "trap '' TERM\necho \"start app\" >> \"@REC@\"\nwhile :; do sleep 0.1; done",
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    let t0 = Instant::now();
    run.signal(SIGTERM);
    let out = run.wait();
    let took = out.ended - t0;
    out.assert_code(137);
    assert!(took < secs(6.0), "shutdown took {took:?}\n{}", out.report());
    assert!(
        took >= secs(1.9),
        "the stop signal must get at least 2 s before SIGKILL, took {took:?}\n{}",
        out.report()
    );
}

/// A second SIGINT during termination spends the budget at once: with a 30 s
/// grace, a main ignoring INT and TERM is killed within a few seconds.
#[test]
fn second_sigint_spends_the_grace_budget_at_once() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"30s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        r#"trap '' INT
trap 'echo "TERM app" >> "@REC@"' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    run.signal(SIGINT);
    run.wait_for_record("TERM app", secs(5.0));
    assert!(run.is_running(), "podinit ended after one SIGINT\n{}", run.report());
    let t1 = Instant::now();
    run.signal(SIGINT);
    let out = run.wait();
    let took = out.ended - t1;
    out.assert_code(137);
    assert!(took < secs(4.0), "second SIGINT should kill within ~2 s, took {took:?}\n{}", out.report());
}

/// A repeated SIGTERM changes nothing: the main's grace is not cut, no one
/// gets its stop signal twice, and sidecars still wait for the main.
#[test]
fn repeated_sigterm_neither_cuts_grace_nor_signals_twice() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"6s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"trap 'echo "TERM side" >> "@REC@"; exit 0' TERM
echo "start side" >> "@REC@"
while :; do sleep 0.1; done"#,
        "",
    );
    cfg += &entry(
        "app",
        "main",
        r#"trap 'echo "TERM app" >> "@REC@"' TERM
echo "start app" >> "@REC@"
while [ ! -f "@DIR@/release" ]; do sleep 0.05; done
echo "exit app" >> "@REC@""#,
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    run.wait_for_record("start app", secs(5.0));
    let t0 = Instant::now();
    run.signal(SIGTERM);
    run.wait_for_record("TERM app", secs(5.0));
    run.signal(SIGTERM);
    // Let time pass beyond the 2 s a cut budget would have left the main.
    let until = t0 + Duration::from_millis(2800);
    thread::sleep(until.saturating_duration_since(Instant::now()));
    assert!(run.is_running(), "a repeated SIGTERM must not cut the grace period\n{}", run.report());
    let r = td.records();
    assert_eq!(count(&r, "TERM app"), 1, "main signalled twice\n{}", run.report());
    assert_eq!(count(&r, "TERM side"), 0, "sidecar stopped before the main\n{}", run.report());
    fs::write(td.file("release"), "").unwrap();
    let out = run.wait();
    out.assert_code(0);
    let r = &out.records;
    assert_eq!(count(r, "TERM app"), 1, "{}", out.report());
    assert_eq!(count(r, "TERM side"), 1, "{}", out.report());
    assert!(pos(r, "exit app") < pos(r, "TERM side"), "{}", out.report());
}

/// Termination by a signal before any main ran: 128 + that signal.
#[test]
fn sigterm_before_any_main_ran_gives_143() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"startup_probe = { exec = { command = ["false"] }, period = "100ms", failure_threshold = 1000 }"#,
    );
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(10.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(143);
    assert_eq!(out.records, vec!["start side", "stop side"], "{}", out.report());
}
