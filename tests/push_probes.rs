//! Probes the process answers itself (docs/configuration.md, "Probes the
//! process answers"): `notify` (systemd's sd_notify datagrams on
//! `NOTIFY_SOCKET`: `READY=1`, `STATUS=`, `WATCHDOG=1`, the sender checked by
//! process group), `fd` (s6's notification-fd) and `log_line`
//! (process-compose's `ready_log_line`), with the real binary as PID 1.
//!
//! The gating tests use a period of 30 s: a main that starts within the
//! test's deadline was started by the announcement itself, not by a poll.
// The status client is a separate process the test waits for.
#![allow(clippy::disallowed_methods)]

mod common;
use common::*;

use std::process::Command;

/// A python sidecar: runs `body` (python, with `send(bytes)` sending one
/// datagram to NOTIFY_SOCKET and `rec(text)` recording a line), then sleeps
/// until SIGTERM.
fn notifier(body: &str) -> String {
    let script = format!(
        r#"import os, signal, socket, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
def rec(t):
    with open("@REC@", "a") as f: f.write(t + "\n")
def send(data):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(data, os.environ["NOTIFY_SOCKET"])
    s.close()
rec("start side")
{body}
while True: time.sleep(0.1)
"#
    );
    script
}

fn python_entry(td: &TestDir, name: &str, role: &str, script: &str, extra: &str) -> String {
    let file = td.write(&format!("{name}.py"), script);
    format!(
        "[[process]]\nname = \"{name}\"\nrole = \"{role}\"\ncommand = [\"@PY@\", \"-u\", \"{}\"]\n{extra}\n\n",
        file.display()
    )
}

const APP: &str = r#"echo "start app" >> "@REC@""#;

/// Runs `cfg` plus a main until its sidecar `side` has started twice (its
/// startup probe failed once), then SIGTERM: the main never started, and the
/// pod ends with 143.
fn restarted_without_the_main(td: &TestDir, mut cfg: String) -> Outcome {
    cfg += &entry("app", "main", APP, "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record_n("start side", 2, secs(10.0));
    run.signal(libc::SIGTERM);
    let out = run.wait();
    out.assert_code(143);
    assert!(!out.records.contains(&"start app".to_string()), "{}", out.report());
    out
}

/// `READY=1` gates the main the moment it is sent: with a 30 s period the
/// main could not start within the deadline otherwise. `STATUS=` is what
/// `podinit status` shows for the entry.
#[test]
fn ready_1_gates_the_main_at_once_and_status_is_shown() {
    let td = TestDir::new();
    let mut cfg =
        String::from("[pod]\ntermination_grace_period = \"3s\"\nstatus_socket = \"@DIR@/status.sock\"\n\n");
    let side = notifier(
        r#"time.sleep(0.2)
send(b"STATUS=warming up")
rec("sent ready")
send(b"READY=1\nSTATUS=serving 3 clients")"#,
    );
    cfg +=
        &python_entry(&td, "side", "sidecar", &side, r#"startup_probe = { notify = true, period = "30s" }"#);
    cfg += &entry(
        "app",
        "main",
        &format!("{APP}\n{}", r#"while [ ! -f "@DIR@/done" ]; do sleep 0.05; done"#),
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start app", secs(10.0));
    let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .arg("status")
        .arg("--socket")
        .arg(td.file("status.sock"))
        .output()
        .expect("run podinit status");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    std::fs::write(td.file("done"), "").unwrap();
    let outcome = run.wait();
    outcome.assert_code(0);
    assert_eq!(outcome.records, vec!["start side", "sent ready", "start app"], "{}", outcome.report());
    assert!(text.contains("side: serving 3 clients"), "status shows STATUS=:\n{text}");
}

/// A process that never says `READY=1` fails its startup probe after
/// `failure_threshold` periods and is restarted; the main never starts.
#[test]
fn a_sidecar_that_never_says_ready_is_restarted_after_threshold_periods() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"2s\"\nbackoff = { initial = \"100ms\", max = \"100ms\" }\n\n",
    );
    let side = notifier("send(b\"STATUS=never ready\")");
    cfg += &python_entry(
        &td,
        "side",
        "sidecar",
        &side,
        r#"startup_probe = { notify = true, period = "300ms", failure_threshold = 2 }"#,
    );
    let out = restarted_without_the_main(&td, cfg);
    assert!(out.stderr.contains("side startup probe failed 2 times"), "{}", out.report());
}

/// A datagram from a process outside the entry's process group does not
/// count: the main starts only after the entry itself says `READY=1`.
#[test]
fn ready_1_from_another_process_group_is_ignored() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    let side = notifier(
        r#"pid = os.fork()
if pid == 0:
    os.setsid()
    send(b"READY=1")
    rec("stranger sent ready")
    time.sleep(30)
    os._exit(0)
while True:
    with open("@REC@") as f:
        if "stranger sent ready" in f.read(): break
    time.sleep(0.02)
time.sleep(0.5)
rec("own ready")
send(b"READY=1")"#,
    );
    cfg +=
        &python_entry(&td, "side", "sidecar", &side, r#"startup_probe = { notify = true, period = "30s" }"#);
    cfg += &entry("app", "main", APP, "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    assert_eq!(
        out.records,
        vec!["start side", "stranger sent ready", "own ready", "start app"],
        "{}",
        out.report()
    );
}

/// Each push probe counts only its own source: a line on the readiness
/// probe's fd does not pass a `notify` startup probe.
#[test]
fn a_notify_startup_probe_waits_for_ready_1_even_when_the_fd_says_ready() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    let side = notifier(
        r#"os.write(3, b"\n")
rec("fd line")
time.sleep(0.5)
rec("own ready")
send(b"READY=1")"#,
    );
    cfg += &python_entry(
        &td,
        "side",
        "sidecar",
        &side,
        "startup_probe = { notify = true, period = \"30s\" }\nreadiness_probe = { fd = 3 }",
    );
    cfg += &entry("app", "main", APP, "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start side", "fd line", "own ready", "start app"], "{}", out.report());
}

/// sd_notify's barrier (`BARRIER=1` with a descriptor, what `systemd-notify`
/// waits on): podinit closes the descriptor once it has read the datagram.
#[test]
fn a_barrier_descriptor_is_closed_once_read() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    let side = notifier(
        r#"import array, select
r, w = os.pipe()
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"READY=1", os.environ["NOTIFY_SOCKET"])
s.sendmsg([b"BARRIER=1"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]))], 0, os.environ["NOTIFY_SOCKET"])
os.close(w)
p = select.poll()
p.register(r, select.POLLHUP)
rec("barrier passed" if p.poll(5000) else "barrier timed out")"#,
    );
    cfg +=
        &python_entry(&td, "side", "sidecar", &side, r#"startup_probe = { notify = true, period = "30s" }"#);
    cfg += &entry("app", "main", &sh_wait_records("barrier passed", 1, 10), "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    assert!(out.records.contains(&"barrier passed".to_string()), "{}", out.report());
}

/// A `notify` liveness probe is systemd's watchdog: `WATCHDOG_USEC` is the
/// period, and when `WATCHDOG=1` stops coming for `failure_threshold` periods
/// the sidecar is restarted. The sidecar stops its watchdog once the main has
/// recorded its start (and after five at least): the main starts after
/// `READY=1`, but its shell's line may come any time after that.
#[test]
fn a_missing_watchdog_restarts_the_sidecar() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"2s\"\nbackoff = { initial = \"100ms\", max = \"100ms\" }\n\n",
    );
    let side = notifier(
        r#"rec("watchdog usec " + os.environ.get("WATCHDOG_USEC", "unset"))
send(b"READY=1")
n = 0
while n < 5 or (n < 100 and "start app" not in open("@REC@").read().splitlines()):
    send(b"WATCHDOG=1")
    time.sleep(0.1)
    n += 1
rec("watchdog stops")"#,
    );
    cfg += &python_entry(
        &td,
        "side",
        "sidecar",
        &side,
        "startup_probe = { notify = true, period = \"30s\" }\nliveness_probe = { notify = true, period = \"300ms\", failure_threshold = 2 }",
    );
    cfg += &entry("app", "main", &format!("{APP}\nsleep 60"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record_n("start side", 2, secs(10.0));
    run.signal(libc::SIGTERM);
    let out = run.wait();
    assert_eq!(
        out.records[..4],
        ["start side", "watchdog usec 300000", "start app", "watchdog stops"],
        "{}",
        out.report()
    );
    assert!(out.stderr.contains("side liveness probe failed 2 times"), "{}", out.report());
}

/// `fd = 5`: a line written to descriptor 5 says ready (s6's
/// notification-fd), at once.
#[test]
fn a_line_on_the_notification_fd_gates_the_main() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"trap 'exit 0' TERM
echo "start side" >> "@REC@"
sleep 0.2
echo "sent line" >> "@REC@"
echo ready >&5
while :; do sleep 0.1; done"#,
        r#"startup_probe = { fd = 5, period = "30s" }"#,
    );
    cfg += &entry("app", "main", APP, "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start side", "sent line", "start app"], "{}", out.report());
}

/// A process that closes its notification fd without a newline never gets
/// ready: its startup probe fails and it is restarted.
#[test]
fn a_notification_fd_closed_without_a_line_is_a_failure() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"2s\"\nbackoff = { initial = \"100ms\", max = \"100ms\" }\n\n",
    );
    cfg += &entry(
        "side",
        "sidecar",
        r#"trap 'exit 0' TERM
echo "start side" >> "@REC@"
printf 'no newline' >&5
exec 5>&-
while :; do sleep 0.1; done"#,
        r#"startup_probe = { fd = 5, period = "200ms", failure_threshold = 2 }"#,
    );
    restarted_without_the_main(&td, cfg);
}

/// `log_line`: the main starts once a line of the sidecar's output matches
/// (a regular expression here; lines before it and a partial match do not).
#[test]
fn a_matching_log_line_gates_the_main() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"trap 'exit 0' TERM
echo "start side" >> "@REC@"
echo "booting, not listening yet"
sleep 0.3
echo "said it" >> "@REC@"
echo "listening on :8080" >&2
while :; do sleep 0.1; done"#,
        r#"startup_probe = { log_line = { regex = "^listening on :[0-9]+$" }, period = "30s" }"#,
    );
    cfg += &entry("app", "main", APP, "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start side", "said it", "start app"], "{}", out.report());
    assert!(out.stderr.contains("side | listening on :8080"), "the line is still written:\n{}", out.report());
}

/// Push probes are refused where they cannot work, with file:line:col.
#[test]
fn push_probes_where_they_cannot_work_are_config_errors() {
    let td = TestDir::new();
    let cases = [
        (r#"liveness_probe = { fd = 5 }"#, "fd serves startup and readiness probes only"),
        (r#"readiness_probe = { fd = 2 }"#, "must be a descriptor from 3 to 1023"),
        (
            r#"readiness_probe = { log_line = { contains = "x" } }
log = "raw""#,
            "log_line needs the entry's output to pass through podinit",
        ),
        (r#"startup_probe = { log_line = { regex = "(" } }"#, "not a regular expression"),
        (r#"startup_probe = { notify = false }"#, "notify must be true"),
        (
            r#"startup_probe = { fd = 4 }
readiness_probe = { fd = 5 }"#,
            "different notification descriptors",
        ),
        (
            r#"startup_probe = { log_line = { contains = "a", regex = "b" } }"#,
            "exactly one of contains, regex",
        ),
    ];
    for (extra, want) in cases {
        let cfg = entry("side", "sidecar", "sleep 1", extra);
        let path = td.config(&cfg);
        let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
        out.assert_code(2);
        assert!(out.stderr.contains(want), "{extra}: want {want:?}\n{}", out.report());
        assert!(out.stderr.contains("pod.toml:"), "{extra}: names the file\n{}", out.report());
    }
}

#[test]
fn push_probes_show_in_the_plan() {
    let td = TestDir::new();
    let mut cfg = entry(
        "side",
        "sidecar",
        "sleep 1",
        "startup_probe = { notify = true, period = \"2s\" }\nliveness_probe = { notify = true }",
    );
    cfg += &entry("app", "main", "true", r#"readiness_probe = { log_line = { contains = "up" } }"#);
    let path = td.config(&cfg);
    let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    for want in [
        "startup probe: notify READY=1, fails after 3 periods of 2s without it",
        "liveness probe: notify WATCHDOG=1, fails after 3 periods of 10s without it",
        "readiness probe: log_line containing \"up\", fails after 3 periods of 10s without it",
    ] {
        assert!(out.stdout.contains(want), "want {want:?}\n{}", out.report());
    }
}

/// An `fd` probe's descriptor never hides a failed exec, whatever number it
/// has: the standard library reports an exec error through a pipe of its own
/// at the lowest free numbers, and a child that put the notification
/// descriptor there over that pipe lost the report (the pod then saw a
/// program that was never found as started, and exited 1, not 127).
#[test]
fn an_fd_probe_on_any_descriptor_keeps_a_failed_exec_reported() {
    let td = TestDir::new();
    for fd in 3..=40 {
        let cfg = format!(
            "[[process]]\nname = \"app\"\ncommand = [\"/nonexistent/prog\"]\nreadiness_probe = {{ fd = {fd} }}\n"
        );
        let path = td.config(&cfg);
        let out = td.podinit().config(&path).deadline(secs(20.0)).run();
        assert_eq!(out.code, Some(127), "fd = {fd}: {}", out.report());
        assert!(out.stderr.contains("not found"), "fd = {fd}: {}", out.report());
        assert!(!out.stderr.contains("app started"), "fd = {fd}: {}", out.report());
    }
}
