//! The lifecycle (docs/lifecycle.md): init failure and retry, sidecar restarts with
//! backoff, liveness-probe restarts.

mod common;
use common::*;

/// Under restart_policy = "Never" a failing init fails the pod: no main
/// starts, the sidecar already running is stopped, and podinit exits with the
/// init's status.
#[test]
fn failing_init_under_never_skips_mains_stops_sidecars_and_gives_its_status() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\nrestart_policy = \"Never\"\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper_up("side"), &up_probe("side"));
    cfg += &entry("setup", "init", "echo \"start setup\" >> \"@REC@\"\nexit 3", "");
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(3);
    assert_eq!(out.records, vec!["start side", "start setup", "stop side"], "{}", out.report());
}

/// Under OnFailure a failing init is run again after backoff until it exits 0,
/// and only then does the main start.
#[test]
fn init_is_retried_under_on_failure_until_it_succeeds() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\nrestart_policy = \"OnFailure\"\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"100ms\", max = \"200ms\" }\n\n",
    );
    cfg += &entry(
        "setup",
        "init",
        r#"n=$(( $(cat "@DIR@/attempts" 2>/dev/null || echo 0) + 1 ))
echo $n > "@DIR@/attempts"
echo "attempt $n" >> "@REC@"
[ $n -ge 3 ]"#,
        "",
    );
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["attempt 1", "attempt 2", "attempt 3", "start app"], "{}", out.report());
}

/// A sidecar that keeps crashing while the main runs is restarted again and
/// again: first at once, then after 100ms, 200ms, 400ms, 400ms (max); the main
/// is never touched.
#[test]
fn crashing_sidecar_is_restarted_with_growing_backoff_while_main_runs() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"2s\"\nbackoff = { initial = \"300ms\", max = \"1200ms\" }\n\n",
    );
    // The first run lives until the main has started, so that the sidecar is
    // unambiguously "started"; every run then exits 1 at once.
    cfg += &entry(
        "flaky",
        "sidecar",
        r#"echo "start flaky $(date +%s%3N)" >> "@REC@"
while [ ! -f "@DIR@/app.started" ]; do sleep 0.01; done
echo "exit flaky $(date +%s%3N)" >> "@REC@"
exit 1"#,
        "",
    );
    cfg += &entry(
        "app",
        "main",
        r#"trap 'echo "app got TERM" >> "@REC@"' TERM
touch "@DIR@/app.started"
echo "start app" >> "@REC@"
i=0
while [ $i -lt 400 ]; do
  n=$(grep -c '^start flaky' "@REC@" 2>/dev/null); [ "${n:-0}" -ge 6 ] && break
  sleep 0.02; i=$((i+1))
done
echo "exit app" >> "@REC@""#,
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    let r = &out.records;
    assert_eq!(count(r, "start app"), 1, "{}", out.report());
    assert_eq!(count(r, "exit app"), 1, "{}", out.report());
    assert_eq!(count(r, "app got TERM"), 0, "{}", out.report());

    let stamps = |prefix: &str| -> Vec<i64> {
        r.iter().filter_map(|l| l.strip_prefix(prefix)).map(|t| t.trim().parse::<i64>().unwrap()).collect()
    };
    let starts = stamps("start flaky ");
    let exits = stamps("exit flaky ");
    assert!(starts.len() >= 6, "expected >= 6 sidecar starts\n{}", out.report());
    // Backoff i: from exit i to start i+1, in ms.
    let gaps: Vec<i64> = (0..5).map(|i| starts[i + 1] - exits[i]).collect();
    let msg = format!("backoff gaps (ms) {gaps:?}\n{}", out.report());
    // A backoff timer never fires early, so the lower bounds are the backoff
    // itself (less 5 ms for the millisecond stamps); the upper bounds leave
    // 700 ms for a loaded machine to start a shell. Together they show the
    // doubling (600 > 300) and the cap (1200, not 2400).
    assert!(gaps[0] < 300, "first restart must be immediate: {msg}");
    assert!((295..=1000).contains(&gaps[1]), "second restart after 300ms: {msg}");
    assert!((595..=1300).contains(&gaps[2]), "third restart after 600ms: {msg}");
    assert!((1195..=1900).contains(&gaps[3]), "fourth restart after 1200ms: {msg}");
    assert!((1195..=1900).contains(&gaps[4]), "backoff capped at max 1200ms: {msg}");
}

/// A sidecar failing its liveness probe gets its stop signal and is started
/// again. Each instance makes its file before it records its start (the main
/// removes the file once it sees that line), and the liveness probe waits for
/// a startup probe on the file (docs/lifecycle.md rule 9), so that a shell
/// slower than two probe periods is not stopped before it has made it.
#[test]
fn liveness_failure_stops_and_restarts_a_sidecar() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"trap 'echo "stop side" >> "@REC@"; exit 0' TERM
touch "@DIR@/alive"
echo "start side" >> "@REC@"
while :; do sleep 0.1; done"#,
        r#"startup_probe = { exec = { command = ["test", "-f", "@DIR@/alive"] }, period = "50ms", failure_threshold = 400 }
liveness_probe = { exec = { command = ["test", "-f", "@DIR@/alive"] }, period = "100ms", failure_threshold = 2 }"#,
    );
    cfg += &entry(
        "app",
        "main",
        &format!(
            "{}\nrm -f \"@DIR@/alive\"\n{}\necho \"app saw restart\" >> \"@REC@\"",
            sh_wait_records("start side", 1, 5),
            sh_wait_records("start side", 2, 5)
        ),
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(
        out.records,
        vec!["start side", "stop side", "start side", "app saw restart", "stop side"],
        "{}",
        out.report()
    );
}

/// Under OnFailure a main killed by its liveness probe is restarted even if
/// it exits 0 on its stop signal (a probe kill counts as failure). The probe
/// fails from the first run's start line (its TERM trap is in place then)
/// until that run's stop line, whatever the shells' speed.
#[test]
fn liveness_failure_restarts_a_main_under_on_failure() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\nrestart_policy = \"OnFailure\"\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"100ms\", max = \"200ms\" }\n\n",
    );
    cfg += &entry(
        "app",
        "main",
        r#"n=$(( $(cat "@DIR@/runs" 2>/dev/null || echo 0) + 1 ))
echo $n > "@DIR@/runs"
trap 'echo "stop app $n" >> "@REC@"; exit 0' TERM
echo "start app $n" >> "@REC@"
[ $n -ge 2 ] && sleep 0.3 && exit 0
while :; do sleep 0.1; done"#,
        r#"liveness_probe = { exec = { command = ["sh", "-c", "! grep -qx 'start app 1' @REC@ || grep -qx 'stop app 1' @REC@"] }, period = "100ms", failure_threshold = 2 }"#,
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app 1", "stop app 1", "start app 2"], "{}", out.report());
}
