//! Per-pod and per-entry rules of how long and how often, real binary as PID 1:
//! `[pod] active_deadline` (a Pod's activeDeadlineSeconds), `max_restarts`, and
//! an entry's own `restart_policy` and `restart_rules` (KEP-5307).

mod common;

use std::time::Instant;

use common::*;

#[test]
fn active_deadline_ends_a_pod_whose_sidecar_never_starts_in_order_with_124() {
    let td = TestDir::new();
    let never =
        r#"startup_probe = { exec = { command = ["false"] }, period = "100ms", failure_threshold = 1000 }"#;
    let cfg = td.config(&format!(
        "[pod]\nactive_deadline = \"2s\"\ntermination_grace_period = \"3s\"\n\n{}{}",
        entry("side", "sidecar", &sleeper("side"), never),
        entry("app", "main", &sleeper("app"), "")
    ));
    let t0 = Instant::now();
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record("start side", secs(5.0));
    let mut status = std::process::Command::new(env!("CARGO_BIN_EXE_podinit"));
    status.args(["status", "--socket"]).arg(td.file("status.sock"));
    let answer = run_with_deadline(&mut status, secs(5.0));
    assert!(
        answer.stdout.contains(", active deadline in 1s")
            || answer.stdout.contains(", active deadline in 2s"),
        "podinit status shows the deadline: {answer:?}"
    );
    let out = run.wait();
    let took = t0.elapsed();
    out.assert_code(124);
    assert!(took >= secs(2.0) && took < secs(6.0), "took {took:?}\n{}", out.report());
    assert!(out.stderr.contains("active_deadline (2s) has passed: terminating the pod"), "{}", out.report());
    assert_eq!(count(&out.records, "start app"), 0, "the main must never have started\n{}", out.report());
    assert_eq!(
        count(&out.records, "stop side"),
        1,
        "the sidecar is stopped by its stop signal\n{}",
        out.report()
    );
}

#[test]
fn max_restarts_then_one_more_failure_fails_the_pod_with_the_entrys_status() {
    let td = TestDir::new();
    let cfg = td.config(&format!(
        "[pod]\nrestart_policy = \"Always\"\nbackoff = {{ initial = \"10ms\", max = \"20ms\" }}\n\n{}",
        entry("app", "main", r#"echo "start app" >> "@REC@"; exit 5"#, "max_restarts = 2")
    ));
    let out = td.podinit().config(&cfg).run();
    out.assert_code(5);
    assert_eq!(count(&out.records, "start app"), 3, "the first run and two restarts\n{}", out.report());
    assert!(
        out.stderr.contains("app exited with status 5 after 2 restarts (max_restarts): the pod fails"),
        "{}",
        out.report()
    );
}

/// KEP-5307 restart rules: under `Never`, a rule `in [42]` restarts the main
/// after 42; its exit 1 matches no rule and ends the pod.
#[test]
fn a_restart_rule_restarts_a_main_on_its_exit_code_only() {
    let td = TestDir::new();
    let script = r#"echo "start app" >> "@REC@"
if [ -f "@DIR@/ran" ]; then exit 1; fi
touch "@DIR@/ran"; exit 42"#;
    let rules =
        r#"restart_rules = [{ action = "restart", exit_codes = { operator = "in", values = [42] } }]"#;
    let cfg = td.config(&format!(
        "[pod]\nrestart_policy = \"Never\"\nbackoff = {{ initial = \"10ms\" }}\n\n{}",
        entry("app", "main", script, rules)
    ));
    let out = td.podinit().config(&cfg).run();
    out.assert_code(1);
    assert_eq!(count(&out.records, "start app"), 2, "restarted once, after 42\n{}", out.report());
}

/// An entry's own restart_policy overrides the pod's (KEP-5307).
#[test]
fn an_entrys_own_restart_policy_overrides_the_pods() {
    let td = TestDir::new();
    let script = r#"echo "start app" >> "@REC@"
if [ -f "@DIR@/ran" ]; then exit 0; fi
touch "@DIR@/ran"; exit 9"#;
    let cfg = td.config(&format!(
        "[pod]\nrestart_policy = \"Never\"\nbackoff = {{ initial = \"10ms\" }}\n\n{}",
        entry("app", "main", script, "restart_policy = \"OnFailure\"")
    ));
    let out = td.podinit().config(&cfg).run();
    out.assert_code(0);
    assert_eq!(count(&out.records, "start app"), 2, "{}", out.report());
}

/// KEP-4438 (alpha), opt-in: a sidecar that dies while the main is still
/// stopping comes back until its turn; without the flag it stays down. The
/// copy runs its post_start, not its pre_stop (that ran once, at the start of
/// termination), and gets its stop signal (SIGTERM, which it traps) at its
/// turn, not SIGKILL.
#[test]
fn restart_during_termination_brings_back_a_sidecar_that_dies_before_its_turn() {
    for flag in [true, false] {
        let td = TestDir::new();
        let side = r#"trap 'echo "TERM side" >> "@REC@"; exit 0' TERM
echo "start side" >> "@REC@"
while :; do
  if [ -f "@DIR@/terminating" ] && [ ! -f "@DIR@/crashed" ]; then touch "@DIR@/crashed"; exit 1; fi
  sleep 0.05
done"#;
        let main = r#"trap 'touch "@DIR@/terminating"; sleep 1.5; echo "stop app" >> "@REC@"; exit 0' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.05; done"#;
        let cfg = td.config(&format!(
            "[pod]\ntermination_grace_period = \"8s\"\n\n{}{}",
            entry(
                "side",
                "sidecar",
                side,
                &format!(
                    "restart_during_termination = {flag}\n\
                     post_start = {{ exec = {{ command = [\"sh\", \"-c\", \"echo post_start side >> @REC@\"] }} }}\n\
                     pre_stop = {{ exec = {{ command = [\"sh\", \"-c\", \"echo pre_stop side >> @REC@\"] }} }}"
                )
            ),
            entry("app", "main", main, "")
        ));
        let mut run = td.podinit().config(&cfg).spawn();
        run.wait_for_record("start app", secs(5.0));
        run.signal(SIGTERM);
        let out = run.wait();
        out.assert_code(0);
        let starts = count(&out.records, "start side");
        assert_eq!(starts, if flag { 2 } else { 1 }, "restart_during_termination = {flag}\n{}", out.report());
        if flag {
            assert!(out.stderr.contains("restarting side during termination"), "{}", out.report());
        }
        let r = &out.records;
        assert_eq!(count(r, "post_start side"), starts, "a post_start per start\n{}", out.report());
        assert_eq!(count(r, "pre_stop side"), 1, "pre_stop once\n{}", out.report());
        let term = usize::from(flag);
        assert_eq!(count(r, "TERM side"), term, "the copy's stop signal at its turn\n{}", out.report());
        if flag {
            assert!(pos(r, "stop app") < pos(r, "TERM side"), "after the main\n{}", out.report());
        }
    }
}

/// KEP-5532: a sidecar's exit code that matches a `restart_all` rule restarts
/// the whole pod: the init runs again, once per pod restart.
#[test]
fn restart_all_on_a_sidecar_exit_reruns_the_init_once_per_pod_restart() {
    let td = TestDir::new();
    let side = r#"echo "start side" >> "@REC@"
if [ ! -f "@DIR@/crashed" ]; then touch "@DIR@/crashed"; sleep 0.2; exit 88; fi
trap 'exit 0' TERM
while :; do sleep 0.05; done"#;
    let rule =
        r#"restart_rules = [{ action = "restart_all", exit_codes = { operator = "in", values = [88] } }]"#;
    let main = r#"echo "start app" >> "@REC@"
trap 'exit 0' TERM
sleep 1.5"#;
    let cfg = td.config(&format!(
        "[pod]\ntermination_grace_period = \"3s\"\n\n{}{}{}",
        entry("setup", "init", r#"echo "init ran" >> "@REC@""#, ""),
        entry("side", "sidecar", side, rule),
        entry("app", "main", main, "")
    ));
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record_n("init ran", 2, secs(10.0));
    run.wait_for_record_n("start app", 1, secs(10.0));
    let mut status = std::process::Command::new(env!("CARGO_BIN_EXE_podinit"));
    status.args(["status", "--json", "--socket"]).arg(td.file("status.sock"));
    let answer = run_with_deadline(&mut status, secs(5.0));
    let out = run.wait();
    out.assert_code(0);
    assert_eq!(count(&out.records, "init ran"), 2, "once, then once per pod restart\n{}", out.report());
    assert_eq!(count(&out.records, "start side"), 2, "{}", out.report());
    assert!(out.stderr.contains("restart_all, restarting the whole pod"), "{}", out.report());
    assert!(answer.stdout.contains("\"pod_restarts\":1"), "podinit status counts it: {answer:?}");
}
