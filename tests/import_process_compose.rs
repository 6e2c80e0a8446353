//! process-compose files run by podinit as PID 1 (docs/import.md,
//! "process-compose"). process-compose itself is a Go binary that is not
//! packaged here, so these tests check order, gating and exit status against
//! what its documentation says (f1bonacc1.github.io/process-compose,
//! "Processes Lifetime", "Health Checks", "Configuration"), and the places
//! where podinit differs on purpose, which docs/import.md lists.

// This harness waits for the podinit it starts: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "import")]

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::*;

const WAIT: Duration = Duration::from_secs(15);

fn example(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/import/process-compose")
        .join(name)
        .join("process-compose.yaml")
}

/// `podinit import FILE` in the test dir: (exit status, stdout, stderr).
fn import(td: &TestDir, file: &str) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(["import", file])
        .current_dir(td.path())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// examples/import/process-compose/web-stack: web waits for migrate to
/// complete successfully, db to log its ready line and cache to be healthy
/// ("Processes Lifetime", "Define process dependencies"); `{{.STATE}}` is
/// rendered, `$${PORT}` reaches the shell as `${PORT}`; SIGTERM stops web,
/// then the sidecars, and podinit exits 0.
#[test]
fn the_web_stack_example_starts_in_dependency_order() {
    let td = TestDir::new();
    let mut run = td.podinit().config(&example("web-stack")).spawn();
    run.wait_until("web serving", WAIT, |r| {
        entry_lines(&r.stdout(), "web").iter().any(|l| l == "web: serving on port 8080 (development)")
    });
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    let at = |needle: &str| {
        out.stdout.find(needle).unwrap_or_else(|| panic!("{needle:?} missing:\n{}", out.report()))
    };
    assert!(at("db: ready to accept connections") < at("cache: up"), "{}", out.report());
    assert!(at("cache: up") < at("migrate: schema up to date"), "{}", out.report());
    assert!(at("migrate: schema up to date") < at("web: serving"), "{}", out.report());
    at("web: bye");
    let log = |needle: &str| {
        out.stderr.find(needle).unwrap_or_else(|| panic!("{needle:?} missing:\n{}", out.report()))
    };
    assert!(
        log("stopping web") < log("stopping cache") && log("stopping cache") < log("stopping db"),
        "{}",
        out.report()
    );
}

/// examples/import/process-compose/integration-tests: replicas are expanded
/// (`worker-0`, `worker-1`, each with its PC_REPLICA_NUM), and `exit_on_end`
/// ends everything with the tests' own status ("Terminate Process Compose
/// once given process ends").
#[test]
fn exit_on_end_ends_the_pod_with_that_process_status() {
    for status in [0, 3] {
        let td = TestDir::new();
        let out =
            td.podinit().config(&example("integration-tests")).env("TESTS_STATUS", status.to_string()).run();
        out.assert_code(status);
        assert_eq!(entry_lines(&out.stdout, "worker-0"), ["worker 0: consuming"], "{}", out.report());
        assert_eq!(entry_lines(&out.stdout, "worker-1"), ["worker 1: consuming"], "{}", out.report());
        let tests = out.stderr.find("tests started").expect("tests ran");
        let broker = out.stderr.find("broker is ready").expect("broker got ready");
        let worker = out.stderr.find("worker-1 started").unwrap();
        assert!(broker < worker && worker < tests, "{}", out.report());
    }
}

/// Each `depends_on` condition gates as process-compose documents it:
/// `process_completed` lets the dependent start whatever the status,
/// `process_completed_successfully` only after exit 0, `process_started` once
/// the process runs. A failing `process_completed_successfully` dependency
/// stops everything with its status (process-compose skips the dependent and
/// goes on: docs/import.md).
#[test]
fn every_completion_condition_gates() {
    let file = r#"
processes:
  app:
    command: 'i=0; while ! grep -q helper "@REC@" && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; echo "app" >> "@REC@"'
    depends_on:
      check: { condition: process_completed }
      setup: { condition: process_completed_successfully }
      helper: { condition: process_started }
  check:
    command: 'echo "check" >> "@REC@"; exit 3'
  setup:
    command: 'echo "setup" >> "@REC@"; exit ${SETUP_STATUS:-0}'
  helper:
    command: 'trap "exit 0" TERM; echo "helper" >> "@REC@"; while :; do sleep 0.1; done'
"#;
    for setup in [0, 5] {
        let td = TestDir::new();
        td.write("process-compose.yaml", file);
        let out = td
            .podinit()
            .config(&td.file("process-compose.yaml"))
            .env("SETUP_STATUS", setup.to_string())
            .run();
        if setup == 0 {
            out.assert_code(0);
            assert_eq!(out.records.last().map(String::as_str), Some("app"), "{}", out.report());
            assert_eq!(sorted(out.records.clone()), ["app", "check", "helper", "setup"], "{}", out.report());
        } else {
            out.assert_code(setup);
            assert!(!out.records.contains(&"app".to_owned()), "{}", out.report());
        }
    }
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// `availability.restart: exit_on_failure`: the first failure ends the pod
/// with its status ("Terminate Process Compose on Failure"); `always`
/// restarts.
#[test]
fn exit_on_failure_ends_the_pod_and_always_restarts() {
    let td = TestDir::new();
    td.write(
        "process-compose.yaml",
        r#"
processes:
  flaky:
    command: 'echo "flaky" >> "@REC@"'
    availability: { restart: always, backoff_seconds: 0 }
  check:
    command: 'i=0; while [ "$(grep -c flaky "@REC@")" -lt 3 ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; exit 4'
    availability: { restart: exit_on_failure }
"#,
    );
    let (code, toml, _) = import(&td, "process-compose.yaml");
    assert_eq!(code, Some(0));
    assert!(toml.contains("max_restarts = 0"), "{toml}");
    let out = td.podinit().config(&td.file("process-compose.yaml")).run();
    // check fails once flaky has been restarted twice: the pod ends with 4.
    out.assert_code(4);
    assert!(count(&out.records, "flaky") >= 3, "{}", out.report());
}

/// Bad input: a typo, a wrong type, a dependency cycle, `is_daemon`, an
/// unknown process: one clear error each at file:line:col, exit 2, and
/// nothing starts.
#[test]
fn bad_files_are_refused_with_their_place_and_nothing_starts() {
    let cases = [
        ("processes:\n  a:\n    comand: 'echo a >> \"@REC@\"'\n", "process-compose.yaml:3:5: processes.a.comand: unknown key \"comand\""),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n    replicas: many\n", "process-compose.yaml:4:5: processes.a.replicas: expected a number of replicas"),
        (
            "processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n    depends_on:\n      b: {}\n  b:\n    command: x\n    depends_on:\n      a: {}\n",
            "depends_on makes a cycle: a -> b -> a",
        ),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n    is_daemon: true\n", "process-compose.yaml:4:5: processes.a.is_daemon: is_daemon: podinit supervises"),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n    depends_on:\n      db:\n        condition: process_healthy\n", "process-compose.yaml:5:7: processes.a.depends_on.db: depends on \"db\", which is not a process"),
        ("processes:\n  a:\n    command: 'echo {{.NOPE}}'\n", "{{.NOPE}}: no such var"),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n  b:\n    command: x\n    schedule:\n      run_on_start: true\n", "process-compose.yaml:6:5: processes.b.schedule: a schedule needs `cron` or `interval`"),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n  b:\n    command: x\n    schedule:\n      interval: 5 minutes\n", "process-compose.yaml:7:7: processes.b.schedule.interval: interval \"5 minutes\""),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n  b:\n    command: x\n    schedule:\n      interval: 90\n", "processes.b.schedule.interval: interval 90: a duration needs its unit (process-compose reads a Go duration): write \"90s\""),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n  b:\n    command: x\n    schedule:\n      interval: 0s\n", "processes.b.schedule.interval: interval must be more than 0"),
        ("processes:\n  a:\n    command: 'echo a >> \"@REC@\"'\n  b:\n    command: x\n    schedule:\n      cron: '* * * * *'\n      max_concurrent: 0\n", "processes.b.schedule.max_concurrent: expected a whole number of at least 1, found 0"),
    ];
    for (text, want) in cases {
        let td = TestDir::new();
        td.write("process-compose.yaml", text);
        let (code, stdout, stderr) = import(&td, "process-compose.yaml");
        assert_eq!(code, Some(2), "{text}\n{stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.contains(want), "{text}\nwant {want:?} in:\n{stderr}");
        assert_eq!(stderr.lines().filter(|l| l.contains("error")).count(), 1, "one error: {stderr}");
        let out = td.podinit().config(&td.file("process-compose.yaml")).run();
        out.assert_code(2);
        assert!(out.records.is_empty(), "{}", out.report());
    }
}

/// A `schedule`d process is a scheduled entry ("Scheduled Processes"): its
/// `interval`, `run_on_start` and `max_concurrent` are kept, a dependency on
/// it is dropped with a note, and its runs come once the main runs;
/// `disabled` is left out with a note.
#[test]
fn a_scheduled_process_is_a_scheduled_entry_and_disabled_is_left_out() {
    let td = TestDir::new();
    let wait = sh_wait_records("tick", 2, 20);
    td.write(
        "process-compose.yaml",
        &format!(
            "processes:\n  a:\n    command: |\n      echo a >> \"@REC@\"\n      {wait}\n    depends_on:\n      tick:\n        condition: process_started\n  tick:\n    command: 'echo tick >> \"@REC@\"'\n    schedule:\n      interval: 1s\n      run_on_start: true\n      max_concurrent: 2\n  nightly:\n    command: 'echo nightly >> \"@REC@\"'\n    schedule:\n      cron: '0 3 * * *'\n  off:\n    command: 'echo off >> \"@REC@\"'\n    disabled: true\n"
        ),
    );
    let (code, toml, stderr) = import(&td, "process-compose.yaml");
    assert_eq!(code, Some(0), "{stderr}");
    for want in [
        "name = \"tick\"\nrole = \"scheduled\"",
        "every = \"1s\"\nrun_on_start = true\nmax_concurrent = 2",
        "schedule = \"0 3 * * *\"",
        "concurrency_policy = \"Forbid\"",
    ] {
        assert!(toml.contains(want), "want {want:?} in:\n{toml}");
    }
    assert!(!toml.contains("\"off\""), "{toml}");
    assert!(
        stderr.contains("tick is scheduled: it runs on its schedule, so a does not wait for it"),
        "{stderr}"
    );
    assert!(stderr.contains("processes.nightly.schedule: approximated"), "the local zone: {stderr}");
    assert!(stderr.contains("off is not started: disabled"), "{stderr}");
    let out = td.podinit().config(&td.file("process-compose.yaml")).run();
    out.assert_code(0);
    assert_eq!(out.records[0], "a", "the main first: {}", out.report());
    assert!(count(&out.records, "tick") >= 2, "{}", out.report());
    assert_eq!(count(&out.records, "nightly") + count(&out.records, "off"), 0, "{}", out.report());
}

/// A scheduled process's `availability.restart: on_failure` tries a failed
/// run again; its `max_restarts` of 0 (or none) is process-compose's "no
/// limit", never podinit's 0 (no try again): the bound is podinit's
/// default, said in a note; a positive one is kept.
#[test]
fn a_scheduled_on_failure_without_a_limit_is_not_written_as_max_restarts_0() {
    let td = TestDir::new();
    td.write(
        "process-compose.yaml",
        "processes:\n  a:\n    command: x\n  zero:\n    command: x\n    schedule:\n      interval: 1m\n    availability:\n      restart: on_failure\n      max_restarts: 0\n  none:\n    command: x\n    schedule:\n      interval: 1m\n    availability:\n      restart: on_failure\n  three:\n    command: x\n    schedule:\n      interval: 1m\n    availability:\n      restart: on_failure\n      max_restarts: 3\n",
    );
    let (code, toml, stderr) = import(&td, "process-compose.yaml");
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(toml.matches("restart_policy = \"OnFailure\"").count(), 3, "{toml}");
    assert!(!toml.contains("max_restarts = 0"), "0 is no limit in process-compose:\n{toml}");
    assert!(toml.contains("max_restarts = 3"), "{toml}");
    for at in [
        "process-compose.yaml:10:7: processes.zero.availability",
        "process-compose.yaml:16:7: processes.none.availability",
    ] {
        assert!(stderr.contains(at), "a note at {at}: {stderr}");
    }
    assert_eq!(stderr.matches("without limit").count(), 2, "{stderr}");
}
