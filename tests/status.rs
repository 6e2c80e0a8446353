//! The command line (README) `podinit status` and §2 rule 8: exit 0 when the pod is ready, 1 when
//! not, 2 when no podinit answers; the text table and the `--json` report; the
//! status socket (mode 0600, a stale file replaced, silent clients harmless);
//! not ready once termination begins.
//!
//! The client runs as a separate process on the host; the socket path is in
//! the test's temp dir, on the file system shared with podinit's namespace.
// The tests wait for the status clients they start.
#![allow(clippy::disallowed_methods)]

mod common;
use common::*;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// What one `podinit status` run gave.
#[derive(Debug)]
struct Status {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs `podinit status --socket SOCK [--json]`, killed after 5 s.
fn status(sock: &Path, json: bool) -> Status {
    status_with(sock, if json { &["--json"] } else { &[] })
}

/// Runs `podinit status --socket SOCK ARGS...`, killed after 5 s.
fn status_with(sock: &Path, args: &[&str]) -> Status {
    let t0 = Instant::now();
    let mut child = spawn_status(sock, args);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed() > secs(5.0) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "`podinit status` did not answer within 5 s\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        thread::sleep(Duration::from_millis(5));
    }
    let took = t0.elapsed();
    let out = child.wait_with_output().unwrap();
    Status {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        took,
    }
}

/// Asks until `podinit status` exits with `code` (or `timeout` passes: the
/// test fails with the last answer).
fn status_until(run: &mut Running, sock: &Path, code: i32, timeout: Duration) -> Status {
    let until = Instant::now() + timeout;
    loop {
        let st = status(sock, false);
        if st.code == Some(code) {
            return st;
        }
        if Instant::now() > until || !run.is_running() {
            panic!("`podinit status` never exited {code}; last answer: {st:#?}\n{}", run.report());
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// One entry of the `--json` report, flattened by python3.
#[derive(Debug, PartialEq, Eq)]
struct JsonEntry {
    name: String,
    role: String,
    state: String,
    pid: String,
    restarts: String,
    last_exit: String,
    ready: String,
}

/// Parses the `--json` report with python3: (phase, ready, entries).
fn parse_json(text: &str) -> (String, String, Vec<JsonEntry>) {
    const FLATTEN: &str = r#"
import json, sys
d = json.load(sys.stdin)
def s(v):
    return json.dumps(v)
print(s(d["phase"]), s(d["ready"]))
for e in d["entries"]:
    print(" ".join(s(e[k]) for k in ["name", "role", "state", "pid", "restarts", "last_exit", "ready"]))
"#;
    let mut child = Command::new(python())
        .arg("-c")
        .arg(FLATTEN)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn python3");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "not valid JSON: {text:?}\n{}", String::from_utf8_lossy(&out.stderr));
    let flat = String::from_utf8(out.stdout).unwrap();
    let mut lines = flat.lines();
    let head: Vec<&str> = lines.next().unwrap().split(' ').collect();
    let entries = lines
        .map(|l| {
            let f: Vec<String> = l.split(' ').map(str::to_string).collect();
            JsonEntry {
                name: f[0].clone(),
                role: f[1].clone(),
                state: f[2].clone(),
                pid: f[3].clone(),
                restarts: f[4].clone(),
                last_exit: f[5].clone(),
                ready: f[6].clone(),
            }
        })
        .collect();
    (head[0].to_string(), head[1].to_string(), entries)
}

fn jentry(
    name: &str,
    role: &str,
    state: &str,
    pid: &str,
    restarts: u32,
    last_exit: &str,
    ready: bool,
) -> JsonEntry {
    JsonEntry {
        name: format!("\"{name}\""),
        role: format!("\"{role}\""),
        state: format!("\"{state}\""),
        pid: pid.to_string(),
        restarts: restarts.to_string(),
        last_exit: last_exit.to_string(),
        ready: ready.to_string(),
    }
}

/// The `pid NAME N` record an entry wrote about itself.
fn recorded_pid(records: &[String], name: &str) -> String {
    let prefix = format!("pid {name} ");
    records
        .iter()
        .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
        .unwrap_or_else(|| panic!("no {prefix:?} record in {records:#?}"))
}

/// Not ready (exit 1) while the main's readiness probe fails, ready (exit 0)
/// once it passes; the text table and the `--json` report name every entry
/// with its role, state, pid, restarts, last exit and readiness.
#[test]
fn status_follows_readiness_and_reports_every_entry() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"100ms\", max = \"200ms\" }\n\n",
    );
    cfg += &entry("setup", "init", "echo \"ran setup\" >> \"@REC@\"", "");
    // The sidecar crashes once (exit 1), then runs: 1 restart, last exit 1.
    cfg += &entry(
        "side",
        "sidecar",
        r#"if [ ! -f "@DIR@/side-crashed" ]; then touch "@DIR@/side-crashed"; exit 1; fi
trap 'exit 0' TERM
echo "pid side $$" >> "@REC@"
echo "start side" >> "@REC@"
while :; do sleep 0.1; done"#,
        "",
    );
    cfg += &entry(
        "app",
        "main",
        r#"trap 'exit 0' TERM
echo "pid app $$" >> "@REC@"
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        r#"readiness_probe = { exec = { command = ["test", "-f", "@DIR@/app-ready"] }, period = "100ms", failure_threshold = 1 }"#,
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    run.wait_for_record("start app", secs(5.0));
    let r = td.records();
    let (side_pid, app_pid) = (recorded_pid(&r, "side"), recorded_pid(&r, "app"));

    // Not ready: text.
    let st = status(&sock, false);
    assert_eq!(st.code, Some(1), "pod must be reported not ready: {st:#?}\n{}", run.report());
    let lines: Vec<&str> = st.stdout.lines().collect();
    assert!(lines.first().is_some_and(|l| l.starts_with("podinit pid 1, config ")), "{st:#?}");
    assert_eq!(
        lines.get(1).map(|l| l.split_whitespace().collect::<Vec<_>>()),
        Some(vec!["NAME", "ROLE", "STATE", "PID", "RESTARTS", "LAST", "EXIT", "READY"]),
        "{st:#?}"
    );
    let last = lines.last().copied().unwrap_or("");
    assert!(last.starts_with("pod: ") && last.ends_with(", not ready"), "last line {last:?}\n{st:#?}");
    let row = |name: &str| -> Vec<String> {
        lines
            .iter()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}: {st:#?}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let side_row = row("side");
    assert_eq!(side_row[1], "sidecar", "{st:#?}");
    assert_eq!(side_row[3], side_pid, "{st:#?}");
    assert_eq!(side_row[4], "1", "restarts of side: {st:#?}");
    assert_eq!(side_row[5], "1", "last exit of side: {st:#?}");
    assert_eq!(side_row.last().unwrap(), "yes", "{st:#?}");
    let app_row = row("app");
    assert_eq!(app_row[1], "main", "{st:#?}");
    assert_eq!(app_row[3], app_pid, "{st:#?}");
    assert_eq!(app_row[4], "0", "{st:#?}");
    assert_eq!(app_row.last().unwrap(), "no", "{st:#?}");
    assert_eq!(row("setup")[1], "init", "{st:#?}");

    // Not ready: JSON.
    let st = status(&sock, true);
    assert_eq!(st.code, Some(1), "{st:#?}");
    let (phase, ready, entries) = parse_json(&st.stdout);
    assert_eq!(ready, "false", "{st:#?}");
    assert_eq!(phase, "\"running\"", "{st:#?}");
    let names: Vec<&str> = entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, vec!["\"setup\"", "\"side\"", "\"app\""], "{st:#?}");
    assert_eq!(entries[2].ready, "false", "{st:#?}");
    assert_eq!(entries[2].pid, app_pid, "{st:#?}");

    // Ready once the probe passes.
    fs::write(td.file("app-ready"), "").unwrap();
    let st = status_until(&mut run, &sock, 0, secs(3.0));
    let last = st.stdout.lines().last().unwrap_or("");
    assert!(last.starts_with("pod: ") && last.ends_with(", ready"), "last line {last:?}\n{st:#?}");
    let st = status(&sock, true);
    assert_eq!(st.code, Some(0), "{st:#?}");
    let (phase, ready, entries) = parse_json(&st.stdout);
    assert_eq!((phase.as_str(), ready.as_str()), ("\"running\"", "true"), "{st:#?}");
    assert_eq!(
        entries,
        vec![
            jentry("setup", "init", "exited", "null", 0, "0", false),
            jentry("side", "sidecar", "ready", &side_pid, 1, "1", true),
            jentry("app", "main", "ready", &app_pid, 0, "null", true),
        ],
        "{st:#?}"
    );

    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
}

/// No podinit at the path (nothing there, or a socket file nobody listens
/// on): exit 2, with a message.
#[test]
fn status_exits_2_when_no_podinit_answers() {
    let td = TestDir::new();
    let st = status(&td.file("nothing-here.sock"), false);
    assert_eq!(st.code, Some(2), "{st:#?}");
    assert!(!st.stderr.trim().is_empty(), "exit 2 without a message: {st:#?}");
    let stale = td.file("stale.sock");
    drop(UnixListener::bind(&stale).unwrap());
    assert!(fs::symlink_metadata(&stale).unwrap().file_type().is_socket());
    let st = status(&stale, true);
    assert_eq!(st.code, Some(2), "{st:#?}");
}

/// A stale socket file at the configured path (left by an earlier run, nobody
/// listening) neither stops podinit from starting nor from answering there.
#[test]
fn stale_socket_file_does_not_stop_podinit_from_starting_and_answering() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let py =
        format!("import socket; s = socket.socket(socket.AF_UNIX); s.bind({:?})", sock.to_str().unwrap());
    let made = Command::new(python()).arg("-c").arg(&py).status().unwrap();
    assert!(made.success());
    assert!(fs::symlink_metadata(&sock).unwrap().file_type().is_socket(), "python3 left no socket file");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    let st = status_until(&mut run, &sock, 0, secs(3.0));
    assert!(st.stdout.contains("app"), "{st:#?}");
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
}

/// 50 clients that connect and say nothing do not block an answer to a 51st.
#[test]
fn fifty_silent_clients_do_not_block_an_answer() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    status_until(&mut run, &sock, 0, secs(3.0));
    let silent: Vec<UnixStream> = (0..50)
        .map(|i| UnixStream::connect(&sock).unwrap_or_else(|e| panic!("silent client {i}: {e}")))
        .collect();
    let st = status(&sock, false);
    assert_eq!(st.code, Some(0), "{st:#?}\n{}", run.report());
    assert!(st.took < secs(1.0), "the answer took {:?} with 50 silent clients connected", st.took);
    let st = status(&sock, true);
    assert_eq!(st.code, Some(0), "{st:#?}\n{}", run.report());
    assert!(st.took < secs(1.0), "the answer took {:?} with 50 silent clients connected", st.took);
    drop(silent);
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
}

/// The status socket is a socket with mode 0600.
#[test]
fn status_socket_has_mode_0600() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    status_until(&mut run, &sock, 0, secs(3.0));
    let meta = fs::symlink_metadata(&sock).unwrap();
    assert!(meta.file_type().is_socket(), "{meta:?}");
    assert_eq!(meta.permissions().mode() & 0o7777, 0o600, "mode {:o}", meta.permissions().mode() & 0o7777);
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
}

/// From the moment termination begins the pod is not ready: asked during the
/// main's pre_stop hook, status exits 1.
#[test]
fn pod_is_not_ready_once_termination_begins() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    td.write(
        "prestop.sh",
        r#"echo prestop >> "@REC@"
i=0; while [ ! -f "@DIR@/release" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done
echo prestop-done >> "@REC@""#,
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"10s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        &sleeper("app"),
        r#"pre_stop = { exec = { command = ["sh", "@DIR@/prestop.sh"] } }"#,
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    status_until(&mut run, &sock, 0, secs(3.0));
    run.signal(SIGTERM);
    run.wait_for_record("prestop", secs(5.0));
    let st = status(&sock, false);
    let st_json = status(&sock, true);
    let during = td.records();
    fs::write(td.file("release"), "").unwrap();
    let out = run.wait();
    assert_eq!(count(&during, "prestop-done"), 0, "the hook ended before status was asked: {during:?}");
    assert_eq!(st.code, Some(1), "ready while terminating: {st:#?}\n{}", out.report());
    let last = st.stdout.lines().last().unwrap_or("");
    assert!(last.ends_with(", not ready"), "{st:#?}");
    assert_eq!(st_json.code, Some(1), "{st_json:#?}");
    let (phase, ready, _) = parse_json(&st_json.stdout);
    assert_eq!(ready, "false", "{st_json:#?}");
    assert_eq!(phase, "\"terminating\"", "{st_json:#?}");
    // How long the stopping entry has and which budget it draws on.
    assert!(
        st.stdout.contains("\napp: stopping: pre_stop runs; SIGKILL in ")
            && st.stdout.contains(" at the latest (the pod's termination budget)\n"),
        "{st:#?}"
    );
    assert!(last.starts_with("pod: terminating (") && last.contains(" s of its budget left)"), "{st:#?}");
    assert!(
        st_json.stdout.contains(
            "\"stop\":{\"grace\":\"termination\",\"pre_stop\":true,\"signalled\":false,\"kill_in_ms\":"
        ) && st_json.stdout.contains("\"termination_budget_left_ms\":"),
        "{st_json:#?}"
    );
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app", "prestop", "prestop-done", "stop app"], "{}", out.report());
}

/// A sidecar whose readiness probe never passes (nothing listens on its
/// port) holds the start sequence. At the default log level podinit says,
/// after 4 s of waiting, which entry it waits for, for what and why the
/// probe last failed; `podinit status` (text and JSON) and `/readyz`'s 503
/// body say the same; the main never starts.
#[test]
fn a_sidecar_that_never_gets_ready_is_named_with_its_probe_and_last_failure() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let (dead, http) = (free_port(), free_port());
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        &format!("readiness_probe = {{ tcp_socket = {{ port = {dead} }}, period = \"200ms\" }}"),
    );
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let mut run = td
        .podinit()
        .config(&path)
        // The default level: an empty PODINIT_LOG is no level.
        .env("PODINIT_LOG", "")
        .env("PODINIT_HTTP", format!("127.0.0.1:{http}"))
        .deadline(secs(60.0))
        .spawn();
    run.wait_for_stderr_containing("waiting 4s for side: readiness probe", secs(30.0));
    let stderr = run.stderr();
    let line = stderr.lines().find(|l| l.contains("waiting 4s for side")).unwrap();
    let target = format!("127.0.0.1:{dead}");
    assert!(
        line.starts_with("podinit | waiting 4s for side: readiness probe (last failure: ")
            && line.contains(&target)
            && line.to_lowercase().contains("refused"),
        "{line:?}\n{}",
        run.report()
    );

    let st = status(&sock, false);
    assert_eq!(st.code, Some(1), "{st:#?}");
    let waiting = st.stdout.lines().find(|l| l.starts_with("waiting for: ")).unwrap_or_default();
    assert!(
        waiting.starts_with("waiting for: side, readiness probe, ")
            && waiting.contains("s (last failure: ")
            && waiting.contains(&target),
        "{st:#?}"
    );
    let st = status(&sock, true);
    let v: serde_json::Value = serde_json::from_str(&st.stdout).expect("the report is JSON");
    let w = &v["waiting"];
    assert_eq!((w["entry"].as_str(), w["for"].as_str()), (Some("side"), Some("readiness_probe")), "{st:#?}");
    assert!(w["waited_ms"].as_u64().is_some_and(|ms| ms >= 4_000), "{st:#?}");
    assert!(w["last_failure"].as_str().is_some_and(|why| why.contains(&target)), "{st:#?}");

    let (code, body) = http_get(http, "/readyz");
    assert_eq!(code, 503, "{body}");
    let mut lines = body.lines();
    assert_eq!(lines.next(), Some("not ready: side, app"), "{body}");
    assert!(
        lines
            .next()
            .is_some_and(|l| l.starts_with("waiting for: side, readiness probe, ") && l.contains(&target)),
        "{body}"
    );
    assert_eq!(count(&td.records(), "start app"), 0, "the main started: {}", run.report());

    run.signal(SIGTERM);
    run.wait();
}

/// `GET path` on the HTTP endpoint at `port`: status code and body.
fn http_get(port: u16, path: &str) -> (u16, String) {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect to the HTTP endpoint");
    s.set_read_timeout(Some(secs(5.0))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let code = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (code, text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default())
}

/// `@1.234s` or `+1.234s` as seconds; `None` for `-`.
fn seconds_of(field: &str) -> Option<f64> {
    let n = field.strip_prefix(['@', '+'])?.strip_suffix('s')?;
    Some(n.parse().unwrap_or_else(|_| panic!("not a time: {field:?}")))
}

/// `podinit status --timing` on a pod of an init, a sidecar with a startup
/// probe and a main, once it is ready: the rows in the config's order, each
/// entry asked for no earlier than the one before it passed the start
/// sequence, started no earlier than asked, ready no earlier than started;
/// the critical chain from the main down to the init, its total no less
/// than any link's end (docs/control.md, "podinit status --timing").
#[test]
fn timing_shows_each_start_and_the_critical_chain() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("setup", "init", "echo \"ran setup\" >> \"@REC@\"", "");
    cfg += &entry("side", "sidecar", &sleeper_up("side"), &up_probe("side"));
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    status_until(&mut run, &sock, 0, secs(10.0));

    let st = status_with(&sock, &["--timing"]);
    assert_eq!(st.code, Some(0), "{st:#?}");
    let lines: Vec<&str> = st.stdout.lines().collect();
    assert!(lines[0].starts_with("podinit pid 1, config "), "{st:#?}");
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        ["NAME", "ROLE", "ASKED", "STARTED", "READY", "HELD"],
        "{st:#?}"
    );
    let rows: Vec<Vec<&str>> = lines[2..5].iter().map(|l| l.split_whitespace().collect()).collect();
    let names: Vec<&str> = rows.iter().map(|r| r[0]).collect();
    assert_eq!(names, ["setup", "side", "app"], "{st:#?}");
    let time =
        |row: &[&str], col: usize| seconds_of(row[col]).unwrap_or_else(|| panic!("no time in {row:?}"));
    assert_eq!(rows[0][4], "-", "an init is never ready: {st:#?}");
    let mut passed = 0.0;
    for (i, row) in rows.iter().enumerate() {
        let (asked, started, held) = (time(row, 2), time(row, 3), time(row, 5));
        assert!(asked >= passed, "{} asked before the one before it passed: {st:#?}", row[0]);
        assert!(started >= asked, "{st:#?}");
        if i > 0 {
            assert!(time(row, 4) >= started, "{st:#?}");
        }
        assert!(asked < 10.0 && held < 10.0, "{st:#?}");
        passed = asked + held - 0.0015;
    }

    let chain = &lines[5..];
    let total = chain[0]
        .strip_prefix("critical chain: app ready ")
        .and_then(seconds_of)
        .unwrap_or_else(|| panic!("no chain's total: {st:#?}"));
    assert_eq!(chain.len(), 4, "{st:#?}");
    let links: Vec<Vec<&str>> =
        chain[1..].iter().map(|l| l.trim_start_matches([' ', '└', '─']).split(' ').collect()).collect();
    let names: Vec<&str> = links.iter().map(|l| l[0]).collect();
    assert_eq!(names, ["app", "side", "setup"], "{st:#?}");
    assert!(chain[2].starts_with("└─side @") && chain[3].starts_with("  └─setup @"), "{st:#?}");
    for link in &links {
        let (at, took) = (time(link, 1), time(link, 2));
        assert!(total + 0.0015 >= at + took, "{link:?} ends after the total: {st:#?}");
    }
    assert_eq!(time(&links[0], 1), time(&rows[2], 2), "the main's link starts when it was asked for");
    assert_eq!(total, time(&rows[2], 4), "the total is when the main was ready");

    // The same in the JSON.
    let st = status(&sock, true);
    assert!(st.stdout.contains(r#""chain":{"total_ms":"#), "{st:#?}");
    assert!(st.stdout.contains(r#""timing":{"asked_ms":"#), "{st:#?}");
    run.signal(15);
    run.wait().assert_code(0);
}

/// `podinit status --watch` with stdout a pipe: each table after a blank
/// line, no ANSI codes; SIGINT ends it with 0, and podinit's exit with 2
/// (docs/control.md, "podinit status --watch").
#[test]
fn watch_prints_each_table_to_a_pipe_and_exits_0_on_sigint() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let cfg = entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    status_until(&mut run, &sock, 0, secs(10.0));

    let mut watch = spawn_status(&sock, &["--watch"]);
    let stdout = watch.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    while lines.iter().filter(|l: &&String| l.starts_with("pod: ")).count() < 2 {
        match rx.recv_timeout(secs(10.0)) {
            Ok(line) => lines.push(line),
            Err(e) => panic!("no second table ({e}): {lines:#?}"),
        }
    }
    let text = lines.join("\n");
    assert!(!text.contains('\x1b'), "ANSI codes on a pipe: {text:?}");
    let tables: Vec<&str> = text.split("\n\n").collect();
    assert_eq!(tables.len(), 2, "{text}");
    for table in tables {
        let rows: Vec<&str> = table.lines().collect();
        assert!(rows[0].starts_with("podinit pid 1, config "), "{table}");
        assert!(rows[1].starts_with("NAME "), "{table}");
        assert!(rows[2].starts_with("app ") && rows[2].ends_with("yes"), "{table}");
        assert_eq!(rows[3], "pod: running, ready", "{table}");
    }

    assert!(send_signal(watch.id() as i32, 2));
    let t0 = Instant::now();
    let status = loop {
        if let Some(status) = watch.try_wait().unwrap() {
            break status;
        }
        assert!(t0.elapsed() < secs(5.0), "`podinit status --watch` goes on after SIGINT");
        thread::sleep(Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0), "{status:?}");

    // When podinit goes away, the watch ends as `podinit status` does when
    // no podinit answers.
    let watch = spawn_status(&sock, &["--watch"]);
    run.signal(15);
    run.wait().assert_code(0);
    let out = watch.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("podinit status: no podinit answers"), "{stderr}");
}

/// `podinit status --socket SOCK ARGS...` started, its stdout and stderr
/// piped, with no socket or config from the environment.
fn spawn_status(sock: &Path, args: &[&str]) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_podinit"))
        .arg("status")
        .arg("--socket")
        .arg(sock)
        .args(args)
        .env_remove("PODINIT_STATUS_SOCKET")
        .env_remove("PODINIT_CONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn podinit status")
}
