//! Control of a running pod (docs/control.md): `podinit restart`, `stop`,
//! `start`, `signal`, `shutdown` and `events` against the real binary as
//! PID 1, and `podinit status` naming what it reached. The clients run on the
//! host; the socket is in the test's directory (the harness sets
//! PODINIT_STATUS_SOCKET).
// The tests wait for the clients they start.
#![allow(clippy::disallowed_methods)]

mod common;
use common::*;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What one client run gave.
struct Client {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn client(td: &TestDir, args: &[&str]) -> Client {
    let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(args)
        .arg("--socket")
        .arg(td.file("status.sock"))
        .env_remove("PODINIT_STATUS_SOCKET")
        .env_remove("PODINIT_CONFIG")
        .stdin(Stdio::null())
        .output()
        .expect("run the podinit client");
    Client {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The records after the first `start side` and `start app`, whichever came first.
fn after_starts(records: &[String]) -> Vec<String> {
    let mut rest = records.to_vec();
    for first in ["start side", "start app"] {
        let i = rest.iter().position(|l| l == first).unwrap_or_else(|| panic!("no {first:?} in {records:?}"));
        rest.remove(i);
    }
    rest
}

const HEAD: &str = "[pod]\ntermination_grace_period = \"3s\"\n\n";

/// A sidecar with a pre_stop that records, and a main; both record their
/// starts and stops.
fn pod(td: &TestDir) -> std::path::PathBuf {
    let mut cfg = String::from(HEAD);
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"pre_stop = { exec = { command = ["sh", "-c", "echo 'pre_stop side' >> '@REC@'"] } }"#,
    );
    cfg += &entry(
        "app",
        "main",
        r#"trap 'echo "stop app" >> "@REC@"; exit 0' TERM
trap 'echo "app got HUP" >> "@REC@"' HUP
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        "",
    );
    td.config(&cfg)
}

/// Waits until the shells of `side` and `app` have both written their start
/// line (their TERM trap is in place then). The sidecar has no probe: it holds
/// the start sequence only until its process runs (docs/lifecycle.md rule 3),
/// so the main's shell may write its line first, and a stop sent to the
/// sidecar before its own line may find it without its trap.
fn started(run: &mut Running) {
    run.wait_for_record("start side", secs(10.0));
    run.wait_for_record("start app", secs(10.0));
}

fn restarts_of(td: &TestDir, name: &str) -> u64 {
    let out = client(td, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("status --json is JSON");
    v["entries"].as_array().unwrap().iter().find(|e| e["name"] == name).unwrap()["restarts"].as_u64().unwrap()
}

#[test]
fn restart_runs_the_stop_path_of_one_sidecar_and_leaves_the_main_alone() {
    let td = TestDir::new();
    let path = pod(&td);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    started(&mut run);
    let out = client(&td, &["restart", "side"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    assert!(out.stdout.starts_with("side: "), "{}", out.stdout);
    run.wait_for_record_n("start side", 2, secs(10.0));
    assert_eq!(restarts_of(&td, "side"), 1);
    assert_eq!(restarts_of(&td, "app"), 0);
    run.signal(libc::SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    // The first two starts may come in either order (the main does not wait
    // for a sidecar without probes to write its line).
    assert_eq!(
        after_starts(&out.records)[..3],
        ["pre_stop side", "stop side", "start side"],
        "{}",
        out.report()
    );
    assert_eq!(count(&out.records, "start app"), 1, "{}", out.report());
}

#[test]
fn stop_keeps_a_sidecar_down_until_start() {
    let td = TestDir::new();
    let path = pod(&td);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    started(&mut run);
    let out = client(&td, &["stop", "side"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    run.wait_for_record("stop side", secs(10.0));
    run.wait_until("side shows as stopped", secs(10.0), |_| {
        client(&td, &["status"]).stdout.lines().any(|l| l.starts_with("side") && l.contains("stopped"))
    });
    let again = client(&td, &["stop", "side"]);
    assert_eq!(again.code, Some(1));
    assert!(again.stderr.contains("stopped already"), "{}", again.stderr);
    // No restart while stopped: through three round trips of the event loop
    // (a HUP passed on to app, which records it), side stays stopped.
    for n in 1..=3 {
        assert_eq!(client(&td, &["signal", "app", "HUP"]).code, Some(0));
        run.wait_for_record_n("app got HUP", n, secs(10.0));
        let status = client(&td, &["status"]).stdout;
        assert!(
            status.lines().any(|l| l.starts_with("side") && l.contains("stopped")),
            "side left its stopped state:\n{status}"
        );
    }
    assert_eq!(count(&td.records(), "start side"), 1, "no restart while stopped");
    let out = client(&td, &["start", "side"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    run.wait_for_record_n("start side", 2, secs(10.0));
    run.signal(libc::SIGTERM);
    run.wait().assert_code(0);
}

#[test]
fn a_stopped_main_counts_as_ended_and_the_pod_completes() {
    let td = TestDir::new();
    let path = pod(&td);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    started(&mut run);
    let out = client(&td, &["stop", "app"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let out = run.wait();
    // The main's trap exits 0 on SIGTERM: the pod's status is the main's.
    out.assert_code(0);
    // The two starts may come in either order (as above); what follows may not.
    assert_eq!(after_starts(&out.records), ["stop app", "pre_stop side", "stop side"], "{}", out.report());
}

#[test]
fn a_stopped_main_is_started_again_while_another_main_runs() {
    let td = TestDir::new();
    let mut cfg = String::from(HEAD);
    cfg += &entry("one", "main", &sleeper("one"), "");
    cfg += &entry("two", "main", &sleeper("two"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    // The mains start without waiting for each other (docs/lifecycle.md
    // rule 5): one's shell may write its line after two's, and a stop sent
    // before it may find one without its TERM trap.
    run.wait_for_record("start one", secs(10.0));
    run.wait_for_record("start two", secs(10.0));
    assert_eq!(client(&td, &["stop", "one"]).code, Some(0));
    run.wait_for_record("stop one", secs(10.0));
    // one's trap writes its line before it exits: `start` is taken only once
    // podinit has seen the exit and shows one as stopped.
    run.wait_until("one shows as stopped", secs(10.0), |_| {
        client(&td, &["status"]).stdout.lines().any(|l| l.starts_with("one") && l.contains("stopped"))
    });
    assert!(run.is_running(), "the other main still runs: the pod has not completed");
    assert_eq!(client(&td, &["start", "one"]).code, Some(0));
    run.wait_for_record_n("start one", 2, secs(10.0));
    run.signal(libc::SIGTERM);
    run.wait().assert_code(0);
}

#[test]
fn signal_reaches_the_entry_and_shutdown_terminates_like_sigterm() {
    let td = TestDir::new();
    let path = pod(&td);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    started(&mut run);
    let out = client(&td, &["signal", "app", "SIGHUP"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    run.wait_for_record("app got HUP", secs(10.0));
    let bad = client(&td, &["signal", "app", "SIGNOPE"]);
    assert_eq!(bad.code, Some(2), "an unknown signal is a usage error: {}", bad.stderr);
    let out = client(&td, &["shutdown"]);
    assert_eq!(out.code, Some(0), "{}{}", out.stdout, out.stderr);
    let out = run.wait();
    out.assert_code(0);
    // Termination runs the sidecar's pre_stop at once; its stop signal waits
    // for the main (docs/lifecycle.md).
    let r = &out.records;
    assert!(
        pos(r, "stop app") < pos(r, "stop side") && pos(r, "pre_stop side") < pos(r, "stop side"),
        "{}",
        out.report()
    );
}

#[test]
fn every_verb_is_refused_during_termination_and_for_unknown_names() {
    let td = TestDir::new();
    let mut cfg = String::from(HEAD);
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    // A pre_stop that holds termination open for a while.
    cfg += &entry("app", "main", &sleeper("app"), r#"pre_stop = { sleep = "2s" }"#);
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    started(&mut run);
    let newline = client(&td, &["restart", "app\nstatus"]);
    assert_eq!(newline.code, Some(2), "a name with a newline never reaches podinit: {}", newline.stderr);
    assert!(newline.stderr.contains("is not an entry name"), "{}", newline.stderr);
    let unknown = client(&td, &["restart", "nope"]);
    assert_eq!(unknown.code, Some(1));
    assert!(unknown.stderr.contains("no entry named \"nope\""), "{}", unknown.stderr);
    // An extra run's name (`NAME#2`) reaches podinit; a `#` without a number does not.
    let extra = client(&td, &["restart", "app#2"]);
    assert_eq!(extra.code, Some(1), "{}", extra.stderr);
    assert!(extra.stderr.contains("no entry named \"app#2\""), "{}", extra.stderr);
    let bad = client(&td, &["restart", "app#x"]);
    assert_eq!(bad.code, Some(2), "{}", bad.stderr);
    assert!(bad.stderr.contains("is not an entry name"), "{}", bad.stderr);
    run.signal(libc::SIGTERM);
    run.wait_until("termination to begin", secs(10.0), |_| {
        client(&td, &["status"]).stdout.lines().any(|l| l.starts_with("pod: terminating"))
    });
    for args in [
        &["restart", "side"][..],
        &["stop", "side"],
        &["start", "side"],
        &["signal", "app", "HUP"],
        &["shutdown"],
    ] {
        let out = client(&td, args);
        assert_eq!(out.code, Some(1), "{args:?}: {}{}", out.stdout, out.stderr);
        assert!(out.stderr.contains("termination has begun"), "{args:?}: {}", out.stderr);
    }
    let out = run.wait();
    out.assert_code(0);
    assert_eq!(count(&out.records, "start side"), 1, "{}", out.report());
}

#[test]
fn events_stream_sees_a_restart() {
    let td = TestDir::new();
    let path = pod(&td);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    run.wait_for_record("start app", secs(10.0));
    let mut events = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(["events", "--socket"])
        .arg(td.file("status.sock"))
        .stdout(Stdio::piped())
        .spawn()
        .expect("start podinit events");
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = events.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // The reader is registered once an event reaches it: pass app a HUP (an
    // event, `signal_requested`) until one does.
    let t0 = Instant::now();
    loop {
        assert_eq!(client(&td, &["signal", "app", "HUP"]).code, Some(0));
        if rx.recv_timeout(Duration::from_millis(200)).is_ok() {
            break;
        }
        assert!(t0.elapsed() < secs(10.0), "podinit events saw no event within 10 s");
    }
    assert_eq!(client(&td, &["restart", "side"]).code, Some(0));
    let t0 = Instant::now();
    let mut seen = Vec::new();
    while t0.elapsed() < secs(10.0) {
        let Ok(line) = rx.recv_timeout(secs(10.0)) else { break };
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        seen.push(format!("{} {}", v["event"].as_str().unwrap_or(""), v["process"].as_str().unwrap_or("")));
        if seen.iter().any(|s| s == "started side") {
            break;
        }
    }
    assert!(seen.iter().any(|s| s == "restart_requested side"), "{seen:?}");
    assert!(seen.iter().any(|s| s == "stopping side"), "{seen:?}");
    assert!(seen.iter().any(|s| s == "started side"), "{seen:?}");
    run.signal(libc::SIGTERM);
    run.wait().assert_code(0);
    // Every event up to podinit's exit reaches the reader: the last ones too.
    // (The reading thread ends, and the channel with it, at end of stream.)
    let mut rest: Vec<String> = Vec::new();
    while let Ok(line) = rx.recv_timeout(secs(10.0)) {
        rest.push(line);
    }
    let exited: Vec<&String> = rest.iter().filter(|l| l.contains("\"event\":\"exited\"")).collect();
    assert_eq!(exited.len(), 2, "the exits of app and side: {rest:#?}");
    let status = events.wait().unwrap();
    assert_eq!(status.code(), Some(0), "the stream ends with podinit");
}

#[test]
fn status_names_what_it_reached_and_a_bad_config_is_an_error() {
    let td = TestDir::new();
    let path = pod(&td);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    run.wait_for_record("start app", secs(10.0));
    let out = client(&td, &["status"]);
    let first = out.stdout.lines().next().unwrap_or_default().to_owned();
    assert!(first.starts_with("podinit pid 1, config "), "{first}");
    assert!(first.contains("pod.toml"), "{first}");
    assert!(first.contains(&format!("socket {}", td.file("status.sock").display())), "{first}");
    let json = client(&td, &["status", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["podinit"]["pid"], 1);
    run.signal(libc::SIGTERM);
    run.wait().assert_code(0);

    // Without --socket: the config decides, and one that cannot be read or is
    // not a podinit config is an error, not a quiet fall-back to another pod.
    let ask = |config: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_podinit"))
            .args(["status", "--config"])
            .arg(config)
            .env_remove("PODINIT_STATUS_SOCKET")
            .output()
            .unwrap()
    };
    let missing = ask(&td.file("nonexistent.toml"));
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nonexistent.toml: cannot read config file"));
    let yaml = td.write("job.yaml", "apiVersion: batch/v1\nkind: Job\n");
    let not_toml = ask(&yaml);
    assert_eq!(not_toml.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&not_toml.stderr).contains("job.yaml:1:"),
        "{}",
        String::from_utf8_lossy(&not_toml.stderr)
    );
}
