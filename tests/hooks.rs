//! The configuration (docs/configuration.md) hooks and §2 rules 3, 4, 7, 10 and 11: `post_start` holds the start
//! sequence (and the next main), a failing `post_start` restarts the process,
//! `pre_stop` runs before the stop signal (on termination and on a probe kill,
//! never when a process exits by itself), every `pre_stop` starts together,
//! the budget cuts a long `pre_stop`; and the probe effects on that stop path:
//! a probe's own `termination_grace_period`, readiness never restarting, an
//! exec probe killed at its timeout.

mod common;
use common::*;
use std::fs;
use std::thread;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Wall-clock seconds, comparable with `date +%s.%N` written by children.
fn wall_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64()
}

/// Index and timestamp of the first record `PREFIX <seconds>`.
fn stamped(records: &[String], prefix: &str, report: &str) -> (usize, f64) {
    records
        .iter()
        .enumerate()
        .find_map(|(i, l)| {
            let rest = l.strip_prefix(prefix)?.strip_prefix(' ')?;
            Some((i, rest.trim().parse::<f64>().ok()?))
        })
        .unwrap_or_else(|| panic!("no record {prefix:?} <time>\n{report}"))
}

/// The sidecar's post_start hook (0.5 s, then `hook-done`) returns before the
/// next entry starts.
#[test]
fn post_start_holds_the_next_entry_until_it_returns() {
    let td = TestDir::new();
    // The hook runs beside the process, not after its first line (Container
    // Lifecycle Hooks): it waits for that line, so that the records have one
    // order.
    td.write(
        "post_start.sh",
        &format!("{}\nsleep 0.5\necho hook-done >> \"@REC@\"", sh_wait_records("start side", 1, 5)),
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"post_start = { exec = { command = ["sh", "@DIR@/post_start.sh"] } }"#,
    );
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start side", "hook-done", "start app", "stop side"], "{}", out.report());
}

/// When podinit started `name`: the `time` of its `started` event in
/// podinit's JSON log, in seconds since the epoch.
fn started_at(stderr: &str, name: &str, report: &str) -> f64 {
    stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "started" && v["process"] == name)
        .and_then(|v| humantime::parse_rfc3339_weak(v["time"].as_str()?).ok())
        .unwrap_or_else(|| panic!("no `started` event for {name} in podinit's log\n{report}"))
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A `sleep` post_start hook holds the next entry for its duration. Measured
/// between podinit's own `started` events: a shell's first line can come
/// any time after its spawn, so the two shells' stamps could be closer than
/// their spawns.
#[test]
fn post_start_sleep_holds_the_next_entry_for_its_duration() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "trap 'exit 0' TERM\nwhile :; do sleep 0.1; done",
        r#"post_start = { sleep = "700ms" }"#,
    );
    cfg += &entry("app", "main", "true", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).args(["--log-format", "json"]).deadline(secs(15.0)).run();
    out.assert_code(0);
    let rep = out.report();
    let side = started_at(&out.stderr, "side", &rep);
    let app = started_at(&out.stderr, "app", &rep);
    assert!(
        app - side >= 0.6,
        "the main started {:.3} s after the sidecar, before its 700ms post_start\n{rep}",
        app - side
    );
    assert!(app - side < 3.0, "the main started {:.3} s after the sidecar\n{rep}", app - side);
}

/// A post_start hook that exits 1 stops the sidecar and starts it again, even
/// under `restart_policy = "Never"`; the main starts only once a post_start has
/// succeeded.
#[test]
fn failing_post_start_stops_the_sidecar_and_restarts_it_even_under_never() {
    let td = TestDir::new();
    // First run: wait until the sidecar has recorded its start (its TERM trap is
    // in place), then fail. Later runs succeed.
    td.write(
        "post_start.sh",
        &format!(
            r#"if [ -f "@DIR@/hook-failed-once" ]; then {}; echo "hook ok" >> "@REC@"; exit 0; fi
{}
touch "@DIR@/hook-failed-once"
echo "hook fail" >> "@REC@"
exit 1"#,
            sh_wait_records("start side", 2, 5),
            sh_wait_records("start side", 1, 5)
        ),
    );
    let mut cfg = String::from(
        "[pod]\nrestart_policy = \"Never\"\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"100ms\", max = \"200ms\" }\n\n",
    );
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"post_start = { exec = { command = ["sh", "@DIR@/post_start.sh"] } }"#,
    );
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(
        out.records,
        vec!["start side", "hook fail", "stop side", "start side", "hook ok", "start app", "stop side"],
        "{}",
        out.report()
    );
}

/// A main's post_start holds the start of the next main (rule 4).
#[test]
fn a_mains_post_start_holds_the_next_main() {
    let td = TestDir::new();
    // As above: the hook waits for m1's first line.
    td.write(
        "post_start.sh",
        &format!("{}\nsleep 0.5\necho hook-done >> \"@REC@\"", sh_wait_records("start m1", 1, 5)),
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "m1",
        "main",
        &format!("echo \"start m1\" >> \"@REC@\"\n{}", sh_wait_records("start m2", 1, 5)),
        r#"post_start = { exec = { command = ["sh", "@DIR@/post_start.sh"] } }"#,
    );
    cfg += &entry("m2", "main", "echo \"start m2\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start m1", "hook-done", "start m2"], "{}", out.report());
}

/// A main that records `term` on SIGTERM and exits 0.
fn term_recorder(name: &str) -> String {
    format!(
        r#"trap 'echo "term {name}" >> "@REC@"; exit 0' TERM
echo "start {name}" >> "@REC@"
while :; do sleep 0.1; done"#
    )
}

/// On SIGTERM the main's pre_stop runs, and returns, before its stop signal.
#[test]
fn pre_stop_runs_before_the_stop_signal_on_sigterm() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        &term_recorder("app"),
        r#"pre_stop = { exec = { command = ["sh", "-c", 'echo prestop >> "@REC@"; sleep 0.5; echo prestop-done >> "@REC@"'] } }"#,
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app", "prestop", "prestop-done", "term app"], "{}", out.report());
}

/// A liveness-probe kill runs pre_stop before the stop signal too. The
/// liveness probe fails from its first run, which waits for a startup probe
/// on the main's first line (docs/lifecycle.md rule 9): without it, a shell
/// slower than the probe's two periods had no TERM trap yet.
#[test]
fn pre_stop_runs_before_the_stop_signal_on_a_liveness_kill() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\nrestart_policy = \"Never\"\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        &term_recorder("app"),
        r#"pre_stop = { exec = { command = ["sh", "-c", 'echo prestop >> "@REC@"; sleep 0.5; echo prestop-done >> "@REC@"'] } }
startup_probe = { exec = { command = ["grep", "-qx", "start app", "@REC@"] }, period = "50ms", failure_threshold = 400 }
liveness_probe = { exec = { command = ["false"] }, period = "100ms", failure_threshold = 2 }"#,
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    assert_eq!(out.records, vec!["start app", "prestop", "prestop-done", "term app"], "{}", out.report());
}

/// pre_stop belongs to a stop by podinit: a main that ends by itself, and a
/// sidecar that crashes and is restarted, never run theirs; the sidecar's
/// runs once, at termination.
#[test]
fn pre_stop_is_not_run_when_a_process_exits_by_itself() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"if [ ! -f "@DIR@/side-crashed" ]; then touch "@DIR@/side-crashed"; echo "crash side" >> "@REC@"; exit 3; fi
trap 'echo "stop side" >> "@REC@"; exit 0' TERM
echo "start side" >> "@REC@"
while :; do sleep 0.1; done"#,
        r#"pre_stop = { exec = { command = ["sh", "-c", 'echo prestop side >> "@REC@"'] } }"#,
    );
    cfg += &entry(
        "app",
        "main",
        &format!("{}\necho \"exit app\" >> \"@REC@\"", sh_wait_records("start side", 1, 5)),
        r#"pre_stop = { exec = { command = ["sh", "-c", 'echo prestop app >> "@REC@"'] } }"#,
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    let r = &out.records;
    assert_eq!(count(r, "prestop app"), 0, "the main exited by itself: no pre_stop\n{}", out.report());
    assert_eq!(count(r, "prestop side"), 1, "{}", out.report());
    assert!(pos(r, "crash side") < pos(r, "start side"), "{}", out.report());
    assert!(pos(r, "exit app") < pos(r, "prestop side"), "{}", out.report());
    assert!(pos(r, "prestop side") < pos(r, "stop side"), "{}", out.report());
}

/// At termination every running entry's pre_stop starts at once (within
/// 0.5 s of each other, before any sidecar is signalled); the stop signals
/// then go to the main, and to the sidecars in reverse order after it exited.
#[test]
fn all_pre_stop_hooks_start_together_then_sidecars_stop_in_reverse_order() {
    let td = TestDir::new();
    td.write("prestop.sh", "echo \"prestop-$1 $(date +%s.%N)\" >> \"@REC@\"\nsleep 1\n");
    let hook =
        |n: &str| format!(r#"pre_stop = {{ exec = {{ command = ["sh", "@DIR@/prestop.sh", "{n}"] }} }}"#);
    let term = |n: &str| {
        format!(
            r#"trap 'echo "term {n}" >> "@REC@"; sleep 0.1; echo "exit {n}" >> "@REC@"; exit 0' TERM
echo "start {n}" >> "@REC@"
while :; do sleep 0.1; done"#
        )
    };
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"10s\"\n\n");
    cfg += &entry("s1", "sidecar", &term("s1"), &hook("s1"));
    cfg += &entry("s2", "sidecar", &term("s2"), &hook("s2"));
    cfg += &entry("app", "main", &term("app"), &hook("app"));
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    for n in ["s1", "s2", "app"] {
        run.wait_for_record(&format!("start {n}"), secs(5.0));
    }
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    let r = &out.records;
    let rep = out.report();
    let hooks: Vec<(usize, f64)> =
        ["app", "s1", "s2"].iter().map(|n| stamped(r, &format!("prestop-{n}"), &rep)).collect();
    let first_sidecar_term = pos(r, "term s2").min(pos(r, "term s1"));
    for (i, _) in &hooks {
        assert!(*i < first_sidecar_term, "a pre_stop began after a sidecar's stop signal\n{rep}");
        assert!(*i < pos(r, "term app"), "a pre_stop began after the main's stop signal\n{rep}");
    }
    let earliest = hooks.iter().map(|h| h.1).fold(f64::INFINITY, f64::min);
    let latest = hooks.iter().map(|h| h.1).fold(f64::NEG_INFINITY, f64::max);
    assert!(
        latest - earliest < 0.5,
        "pre_stop hooks began {:.3} s apart: not together\n{rep}",
        latest - earliest
    );
    assert!(pos(r, "exit app") < pos(r, "term s2"), "{rep}");
    assert!(pos(r, "exit s2") < pos(r, "term s1"), "{rep}");
    assert_eq!(count(r, "term app") + count(r, "term s1") + count(r, "term s2"), 3, "{rep}");
}

/// pre_stop longer than the whole budget (2 s): the stop signal comes when
/// the budget is spent, SIGKILL 2 s later for a process ignoring TERM.
#[test]
fn pre_stop_longer_than_the_budget_is_cut_by_it_and_sigkill_follows() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        r#"trap 'echo "term $(date +%s.%N)" >> "@REC@"' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        r#"pre_stop = { sleep = "30s" }"#,
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    let t0 = Instant::now();
    let w0 = wall_now();
    run.signal(SIGTERM);
    let out = run.wait();
    let took = out.ended - t0;
    let rep = out.report();
    out.assert_code(137);
    let (_, term) = stamped(&out.records, "term", &rep);
    assert!(
        (1.8..2.8).contains(&(term - w0)),
        "the stop signal came {:.3} s after SIGTERM; expected when the 2 s budget is spent\n{rep}",
        term - w0
    );
    assert!(
        took >= secs(3.8),
        "SIGKILL must come 2 s after the stop signal; podinit ended after {took:?}\n{rep}"
    );
    assert!(took < secs(7.0), "termination took {took:?}\n{rep}");
}

/// A failing pre_stop (exit 1) changes nothing: the stop goes on, and the exit
/// status is the main's.
#[test]
fn failing_pre_stop_changes_nothing() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &term_recorder("side"),
        r#"pre_stop = { exec = { command = ["sh", "-c", 'echo prestop side >> "@REC@"; exit 1'] } }"#,
    );
    cfg += &entry(
        "app",
        "main",
        r#"trap 'echo "term app" >> "@REC@"; exit 5' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        r#"pre_stop = { exec = { command = ["sh", "-c", 'echo prestop app >> "@REC@"; exit 1'] } }"#,
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    run.wait_for_record("start app", secs(5.0));
    let t0 = Instant::now();
    run.signal(SIGTERM);
    let out = run.wait();
    let took = out.ended - t0;
    out.assert_code(5);
    let r = &out.records;
    assert!(pos(r, "prestop app") < pos(r, "term app"), "{}", out.report());
    assert!(pos(r, "prestop side") < pos(r, "term side"), "{}", out.report());
    assert!(pos(r, "term app") < pos(r, "term side"), "{}", out.report());
    assert!(took < secs(2.0), "a failed pre_stop must not delay the stop: took {took:?}\n{}", out.report());
}

/// A liveness probe's own termination_grace_period (1 s, pod 30 s) bounds the
/// stop it causes, with the 2 s floor: a TERM-ignoring main is SIGKILLed about
/// 2 s after its stop signal, then restarted under OnFailure. The probe fails
/// from the first run's start line (its TERM trap is in place then) until its
/// stop signal is recorded, so that neither run's shell races the probe.
#[test]
fn liveness_probe_grace_period_bounds_its_kill_with_the_2s_floor() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\nrestart_policy = \"OnFailure\"\ntermination_grace_period = \"30s\"\nbackoff = { initial = \"100ms\", max = \"200ms\" }\n\n",
    );
    td.write("live.sh", "! grep -qx 'start app' \"@REC@\" || grep -q '^term ' \"@REC@\"");
    cfg += &entry(
        "app",
        "main",
        r#"if [ -f "@DIR@/app-ran" ]; then echo "restart $(date +%s.%N)" >> "@REC@"; exit 0; fi
touch "@DIR@/app-ran"
trap 'echo "term $(date +%s.%N)" >> "@REC@"' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        r#"liveness_probe = { exec = { command = ["sh", "@DIR@/live.sh"] }, initial_delay = "300ms", period = "100ms", failure_threshold = 1, termination_grace_period = "1s" }"#,
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    let rep = out.report();
    out.assert_code(0);
    let (ti, term) = stamped(&out.records, "term", &rep);
    let (ri, restart) = stamped(&out.records, "restart", &rep);
    assert!(ti < ri, "{rep}");
    assert_eq!(count(&out.records, "start app"), 1, "{rep}");
    assert!(
        (1.8..3.0).contains(&(restart - term)),
        "SIGKILL (seen as the restart) came {:.3} s after the stop signal; expected ~2 s (probe grace 1 s, floor 2 s)\n{rep}",
        restart - term
    );
}

/// Readiness failures never restart anything, on a main or on a sidecar with
/// `hold_until = "started"`, even under `restart_policy = "Always"`.
#[test]
fn failing_readiness_probe_never_restarts() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\nrestart_policy = \"Always\"\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"hold_until = "started"
readiness_probe = { exec = { command = ["sh", "-c", 'echo probe side >> "@REC@"; exit 1'] }, period = "100ms", failure_threshold = 1 }"#,
    );
    cfg += &entry(
        "app",
        "main",
        &sleeper("app"),
        r#"readiness_probe = { exec = { command = ["sh", "-c", 'echo probe app >> "@REC@"; exit 1'] }, period = "100ms", failure_threshold = 1 }"#,
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    // Let the probes fail many times over; check that nothing happens.
    thread::sleep(secs(1.5));
    let r = td.records();
    assert!(count(&r, "probe app") >= 5, "the readiness probe did not keep running\n{}", run.report());
    assert!(count(&r, "probe side") >= 5, "the readiness probe did not keep running\n{}", run.report());
    assert_eq!(count(&r, "start app"), 1, "readiness restarted the main\n{}", run.report());
    assert_eq!(count(&r, "start side"), 1, "readiness restarted the sidecar\n{}", run.report());
    assert_eq!(
        count(&r, "stop app") + count(&r, "stop side"),
        0,
        "readiness stopped a process\n{}",
        run.report()
    );
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
}

/// Command lines (`a b c`) of the live (not zombie) descendants of `pid`.
fn live_cmdlines(pid: i32) -> Vec<String> {
    descendants(pid)
        .into_iter()
        .filter(|&p| proc_state(p).is_some_and(|(s, _)| s != 'Z'))
        .filter_map(|p| fs::read(format!("/proc/{p}/cmdline")).ok())
        .map(|c| {
            String::from_utf8_lossy(&c).split('\0').filter(|s| !s.is_empty()).collect::<Vec<_>>().join(" ")
        })
        .collect()
}

/// An exec probe that hangs (`sleep 30`, timeout 300ms) is killed at its
/// timeout, so no such process piles up, and counts as a failure: the startup
/// probe fails its threshold, the sidecar is restarted, the main never starts.
#[test]
fn hanging_exec_probe_is_killed_at_its_timeout_and_counts_as_a_failure() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"100ms\", max = \"200ms\" }\n\n",
    );
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"startup_probe = { exec = { command = ["sh", "-c", 'echo attempt >> "@REC@"; exec sleep 30'] }, period = "100ms", timeout = "300ms", failure_threshold = 3 }"#,
    );
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    let pid = run.podinit_pid();
    let until = Instant::now() + secs(2.5);
    let mut most = 0;
    let mut seen = Vec::new();
    while Instant::now() < until {
        let sleeps: Vec<String> = live_cmdlines(pid).into_iter().filter(|c| c == "sleep 30").collect();
        if sleeps.len() > most {
            most = sleeps.len();
            seen = live_cmdlines(pid);
        }
        thread::sleep(secs(0.05));
    }
    let r = td.records();
    assert!(
        most <= 1,
        "{most} `sleep 30` probe processes alive at once: timed-out probes are not killed\n{seen:#?}\n{}",
        run.report()
    );
    assert!(count(&r, "attempt") >= 4, "the probe did not time out and run again\n{}", run.report());
    assert!(
        count(&r, "start side") >= 2,
        "3 timed-out attempts did not count as failures (no restart)\n{}",
        run.report()
    );
    assert_eq!(
        count(&r, "start app"),
        0,
        "the main started although the startup probe never passed\n{}",
        run.report()
    );
    run.signal(SIGTERM);
    let out = run.wait();
    assert_eq!(count(&out.records, "start app"), 0, "{}", out.report());
}

/// KEP-3960: a `sleep` pre_stop ends as soon as the process exits; the pod
/// does not wait out the sleep.
#[test]
fn a_sleep_pre_stop_ends_when_the_process_exits() {
    let td = TestDir::new();
    let cfg = td.config(&format!(
        "[pod]\ntermination_grace_period = \"20s\"\n\n{}",
        entry(
            "app",
            "main",
            "echo \"start app\" >> \"@REC@\"\nsleep 1\necho \"done app\" >> \"@REC@\"",
            "pre_stop = { sleep = \"30s\" }"
        )
    ));
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record("start app", secs(5.0));
    let sent = Instant::now();
    run.signal(SIGTERM);
    let out = run.wait();
    let took = sent.elapsed();
    assert!(out.records.contains(&"done app".to_string()), "{}", out.report());
    assert!(took < secs(5.0), "waited {took:?} for a sleep hook whose process had exited\n{}", out.report());
    out.assert_code(0);
}

/// KEP-4818: `sleep = "0s"` is a valid hook that does nothing.
#[test]
fn a_zero_sleep_pre_stop_is_accepted_and_stops_at_once() {
    let td = TestDir::new();
    let cfg = td.config(&format!(
        "[pod]\ntermination_grace_period = \"20s\"\n\n{}",
        entry("app", "main", &sleeper("app"), "pre_stop = { sleep = \"0s\" }")
    ));
    let check = td.podinit_not_pid1().args(["check", "--config"]).arg(&cfg).run();
    check.assert_code(0);
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record("start app", secs(5.0));
    let sent = Instant::now();
    run.signal(SIGTERM);
    let out = run.wait();
    assert!(out.records.contains(&"stop app".to_string()), "{}", out.report());
    assert!(sent.elapsed() < secs(3.0), "{}", out.report());
    out.assert_code(0);
}
