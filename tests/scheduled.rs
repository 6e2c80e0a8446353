//! Scheduled entries as PID 1 (docs/configuration.md, "Scheduled entries"):
//! runs of an `every` and of a cron schedule with seconds come on time, a
//! run that would overlap is skipped under `Forbid`, SIGTERM during a run
//! stops it with the mains, before the sidecars, and the pod's exit status
//! is its main's, whatever the runs did; under `Allow` runs overlap as
//! extra runs, and `OnFailure` tries a failed run again.

mod common;
use common::*;
use std::time::Instant;

#[test]
fn runs_come_on_time_overlaps_are_skipped_and_the_status_is_the_mains() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    // The main ends once `tick` has run three times, with status 3.
    cfg += &entry("app", "main", &format!("{}\nexit 3", sh_wait_records("tick", 3, 30)), "");
    let at = |name: &str| format!("echo \"{name}-at $(date +%s.%N)\" >> \"@REC@\"\necho {name} >> \"@REC@\"");
    cfg += &entry("tick", "scheduled", &format!("{}\nexit 1", at("tick")), "every = \"2s\"");
    cfg += &entry("sec", "scheduled", &at("sec"), "schedule = \"*/2 * * * * *\"");
    // Due every second, runs 2.5 s: every other run or so is skipped.
    cfg += &entry(
        "slow",
        "scheduled",
        "echo slow-start >> \"@REC@\"\nsleep 2.5\necho slow-end >> \"@REC@\"",
        "every = \"1s\"\nconcurrency_policy = \"Forbid\"",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).env("PODINIT_LOG_FORMAT", "json").deadline(secs(40.0)).spawn();
    let t0 = Instant::now();
    run.wait_for_record("tick", secs(10.0));
    let first_tick = t0.elapsed();
    run.wait_for_record_n("sec", 2, secs(10.0));
    let out = run.wait();
    // The main's status: a run's exit 1 fails nothing.
    out.assert_code(3);
    let r = &out.records;
    // `every = "2s"`: the first run 2 s after the mains, then every 2 s.
    assert!(
        first_tick >= secs(1.5) && first_tick <= secs(5.0),
        "first tick at {first_tick:?}\n{}",
        out.report()
    );
    // When each run began, by the wall clock.
    let times = |name: &str| -> Vec<f64> {
        let prefix = format!("{name}-at ");
        r.iter().filter_map(|l| l.strip_prefix(&prefix)).map(|t| t.parse().unwrap()).collect()
    };
    let ticks = times("tick");
    assert!(ticks.len() >= 3, "{}", out.report());
    for gap in ticks.windows(2).map(|w| w[1] - w[0]) {
        assert!((1.5..=3.5).contains(&gap), "tick runs {gap} s apart\n{}", out.report());
    }
    // `*/2` seconds: at even seconds of the wall clock, 2 s apart.
    let secs_at = times("sec");
    assert!(secs_at.len() >= 2, "{}", out.report());
    for t in &secs_at {
        assert!(t.rem_euclid(2.0) < 0.9, "a sec run at {t}, not just after an even second\n{}", out.report());
    }
    for gap in secs_at.windows(2).map(|w| w[1] - w[0]) {
        assert!((1.5..=2.9).contains(&gap), "sec runs {gap} s apart\n{}", out.report());
    }
    // Forbid: the slow runs never overlap, and some were skipped.
    let slow: Vec<&String> = r.iter().filter(|l| l.starts_with("slow-")).collect();
    for pair in slow.windows(2) {
        assert_ne!(pair[0], pair[1], "two slow runs overlapped\n{}", out.report());
    }
    let starts = count(r, "slow-start");
    assert!(starts >= 1, "{}", out.report());
    let skipped = out.stdout.matches("\"event\":\"scheduled_run_skipped\"").count()
        + out.stderr.matches("\"event\":\"scheduled_run_skipped\"").count();
    assert!(skipped >= 1, "no skipped run\n{}", out.report());
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("\"reason\":\"still_running\""), "{}", out.report());
    assert!(all.contains("\"event\":\"scheduled_run_finished\""), "{}", out.report());
    // The sidecar was stopped after everything else, once.
    assert_eq!(count(r, "stop side"), 1, "{}", out.report());
}

#[test]
fn sigterm_during_a_run_stops_it_before_the_sidecars() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    let app = "trap 'echo \"stop app\" >> \"@REC@\"; exit 5' TERM\necho \"start app\" >> \"@REC@\"\nwhile :; do sleep 0.1; done";
    cfg += &entry("app", "main", app, "");
    cfg += &entry("job", "scheduled", &sleeper("job"), "every = \"1h\"\nrun_on_start = true");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start job", secs(10.0));
    run.wait_for_record("start app", secs(10.0));
    // `podinit status` shows the run and when the next one is due (a test
    // client, not podinit, waits for its own child here).
    #[allow(clippy::disallowed_methods)]
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(["status", "--json", "--socket"])
        .arg(td.file("status.sock"))
        .env_remove("PODINIT_STATUS_SOCKET")
        .env_remove("PODINIT_CONFIG")
        .output()
        .unwrap();
    let json = String::from_utf8_lossy(&status.stdout);
    assert!(json.contains("\"runs\":{\"started\":1,\"failed\":0,\"skipped\":0,"), "{json}");
    assert!(json.contains("\"next_in_ms\":3"), "the next run in about an hour: {json}");
    run.signal(libc::SIGTERM);
    let out = run.wait();
    // The main's status (its TERM trap exits 5).
    out.assert_code(5);
    let r = &out.records;
    assert!(
        pos(r, "stop job") < pos(r, "stop side"),
        "the run is stopped before the sidecar\n{}",
        out.report()
    );
    assert!(pos(r, "stop app") < pos(r, "stop side"), "{}", out.report());
    assert_eq!(count(r, "start job"), 1, "no new run once termination has begun\n{}", out.report());
}

#[test]
fn allow_overlaps_runs_as_extra_runs_and_on_failure_tries_a_run_again() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"200ms\", max = \"1s\" }\n\n",
    );
    // The main ends once `over` has started four runs and `flaky`'s run
    // has had its three tries (one, and max_restarts = 2 more).
    let wait =
        format!("{}\n{}\nexit 4", sh_wait_records("over-start", 4, 30), sh_wait_records("flaky-try", 3, 30));
    cfg += &entry("app", "main", &wait, "");
    // Due every second, runs 2.5 s: under Allow (the default) runs overlap,
    // at most two at once.
    cfg += &entry(
        "over",
        "scheduled",
        "echo over-start >> \"@REC@\"\necho \"running as pid $$\"\nsleep 2.5\necho over-end >> \"@REC@\"",
        "every = \"1s\"\nmax_concurrent = 2",
    );
    cfg += &entry(
        "flaky",
        "scheduled",
        "echo flaky-try >> \"@REC@\"\nexit 7",
        "every = \"1h\"\nrun_on_start = true\nrestart_policy = \"OnFailure\"\nmax_restarts = 2",
    );
    let path = td.config(&cfg);
    let out =
        td.podinit().config(&path).env("PODINIT_LOG_FORMAT", "json").deadline(secs(40.0)).spawn().wait();
    // The main's status: neither the overlaps nor the failed run fail the pod.
    out.assert_code(4);
    let r = &out.records;
    // Two runs at once: a second start before the first end.
    let first_end = pos(r, "over-end");
    assert!(
        r.iter().take(first_end).filter(|l| *l == "over-start").count() >= 2,
        "no overlapping run\n{}",
        out.report()
    );
    // Never three at once (max_concurrent = 2).
    let mut running = 0i32;
    for l in r {
        running += i32::from(l == "over-start") - i32::from(l == "over-end");
        assert!(running <= 2, "three runs at once\n{}", out.report());
    }
    let all = format!("{}{}", out.stdout, out.stderr);
    // The extra run is labelled with its own name.
    assert!(all.contains("over#2"), "no output of the extra run over#2\n{}", out.report());
    assert!(all.contains("\"reason\":\"max_concurrent\""), "{}", out.report());
    // Exactly three tries of the one run, then the run has failed.
    assert_eq!(count(r, "flaky-try"), 3, "{}", out.report());
    assert!(all.contains("\"event\":\"scheduled_run_max_restarts\""), "{}", out.report());
}

/// `podinit VERB job --socket SOCK`: its exit code and stderr.
#[allow(clippy::disallowed_methods)]
fn ask(td: &TestDir, verb: &str) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args([verb, "job", "--socket"])
        .arg(td.file("status.sock"))
        .env_remove("PODINIT_STATUS_SOCKET")
        .env_remove("PODINIT_CONFIG")
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn trigger_suspend_and_resume_from_the_command_line() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("app", "main", &sleeper("app"), "");
    cfg += &entry("job", "scheduled", "echo job >> \"@REC@\"", "every = \"1h\"");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start app", secs(10.0));
    assert_eq!(ask(&td, "trigger").0, Some(0));
    run.wait_for_record("job", secs(10.0));
    assert_eq!(ask(&td, "suspend").0, Some(0));
    let (code, why) = ask(&td, "suspend");
    assert_eq!(code, Some(1), "{why}");
    assert!(why.contains("suspended already"), "{why}");
    assert_eq!(ask(&td, "resume").0, Some(0));
    assert_eq!(ask(&td, "trigger").0, Some(0));
    run.wait_for_record_n("job", 2, secs(10.0));
    run.signal(libc::SIGTERM);
    let out = run.wait();
    out.assert_code(0);
}
