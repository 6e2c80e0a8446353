//! The read-only HTTP endpoint (docs/control.md, "HTTP") with real requests
//! against the real binary as PID 1: `/livez`, `/readyz` (503 naming the
//! entries that are not ready, then 200), `/status`, `/metrics` (checked by
//! Debian's `promtool check metrics`; a probe series only for a probe an
//! entry has), 404 and 405, `PODINIT_HTTP` over
//! `[pod] http`, and a bad `PODINIT_HTTP` refused before anything starts.
// promtool is a helper process the test waits for.
#![allow(clippy::disallowed_methods)]

mod common;
use common::*;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

/// One request: status code and body.
fn request(port: u16, method: &str, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the HTTP endpoint");
    s.set_read_timeout(Some(secs(5.0))).unwrap();
    write!(s, "{method} {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

fn get(port: u16, path: &str) -> (u16, String) {
    request(port, "GET", path)
}

/// The readiness probe failures of entry "side" in a /metrics body (0 when absent).
fn readiness_failures(metrics: &str) -> u64 {
    let series = "podinit_entry_probe_failures_total{entry=\"side\",role=\"sidecar\",probe=\"readiness\"} ";
    metrics.lines().find_map(|l| l.strip_prefix(series)).and_then(|n| n.trim().parse().ok()).unwrap_or(0)
}

#[test]
fn health_status_and_metrics_over_http() {
    let td = TestDir::new();
    let port = free_port();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\nhttp = \"127.0.0.1:1\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        "hold_until = \"started\"\nreadiness_probe = { exec = { command = [\"test\", \"-f\", \"@DIR@/ready\"] }, period = \"100ms\" }",
    );
    // An init without probes: /metrics has no probe series for it.
    cfg += &entry("prepare", "init", "echo \"start prepare\" >> \"@REC@\"", "");
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    // PODINIT_HTTP wins over [pod] http (port 1 would not be free to bind).
    let mut run = td
        .podinit()
        .config(&path)
        .env("PODINIT_HTTP", format!("127.0.0.1:{port}"))
        .deadline(secs(30.0))
        .spawn();
    run.wait_for_record("start app", secs(10.0));
    assert_eq!(get(port, "/livez"), (200, "ok\n".into()));
    let (code, body) = get(port, "/readyz");
    assert_eq!(code, 503);
    assert_eq!(body, "not ready: side\n");
    // The first probe attempt may not have run yet when /readyz first
    // answers: wait for a counted failure before the file appears.
    run.wait_until("a readiness failure is counted", secs(10.0), |_| {
        readiness_failures(&get(port, "/metrics").1) >= 1
    });
    std::fs::write(td.file("ready"), "").unwrap();
    run.wait_until("/readyz says ready", secs(10.0), |_| get(port, "/readyz").0 == 200);
    let (code, body) = get(port, "/status");
    assert_eq!(code, 200);
    let v: serde_json::Value = serde_json::from_str(&body).expect("/status is JSON");
    assert_eq!(v["ready"], true);
    assert_eq!(v["entries"][0]["name"], "side");
    let (code, metrics) = get(port, "/metrics");
    assert_eq!(code, 200);
    for want in [
        "podinit_pod_ready 1",
        "podinit_entry_up{entry=\"side\",role=\"sidecar\"} 1",
        "podinit_entry_ready{entry=\"app\",role=\"main\"} 1",
        "podinit_entry_restarts_total{entry=\"side\",role=\"sidecar\"} 0",
        "podinit_entry_start_time_seconds{entry=\"side\",role=\"sidecar\"} ",
    ] {
        assert!(metrics.contains(want), "{want:?} missing from\n{metrics}");
    }
    assert!(readiness_failures(&metrics) >= 1, "the counter kept the failures:\n{metrics}");
    // A probe series only for a probe an entry has: the sidecar's readiness
    // probe, none for the init or the main, which have none.
    let probe_series: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("podinit_entry_probe_failures_total{"))
        .filter_map(|l| l.rsplit_once(' ').map(|(series, _)| series))
        .collect();
    assert_eq!(
        probe_series,
        ["podinit_entry_probe_failures_total{entry=\"side\",role=\"sidecar\",probe=\"readiness\"}"],
        "{metrics}"
    );
    assert!(
        metrics.contains("podinit_entry_last_exit_status{entry=\"prepare\",role=\"init\"} 0"),
        "the init ran:\n{metrics}"
    );
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is missing: apt-get install prometheus");
    promtool.stdin.take().unwrap().write_all(metrics.as_bytes()).unwrap();
    let checked = promtool.wait_with_output().unwrap();
    assert!(
        checked.status.success(),
        "promtool check metrics:\n{}{}\n{metrics}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
    assert_eq!(get(port, "/nope").0, 404);
    assert_eq!(request(port, "POST", "/readyz").0, 405, "read-only: no control over HTTP");
    assert_eq!(request(port, "HEAD", "/livez"), (200, String::new()), "HEAD: no body");
    let raw = |bytes: &[u8]| {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(secs(5.0))).unwrap();
        s.write_all(bytes).unwrap();
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text
    };
    assert!(raw(b"garbage\r\n\r\n").starts_with("HTTP/1.1 400 "), "not HTTP");
    let big = format!("GET /livez HTTP/1.1\r\nX-Big: {}\r\n\r\n", "a".repeat(20_000));
    assert!(raw(big.as_bytes()).starts_with("HTTP/1.1 431 "), "a head over 8 KiB");
    let put = raw(b"PUT /readyz HTTP/1.1\r\n\r\n");
    assert!(put.contains("\r\nAllow: GET, HEAD\r\n"), "{put}");
    run.signal(libc::SIGTERM);
    run.wait().assert_code(0);
}

#[test]
fn a_bad_podinit_http_is_refused_before_anything_starts() {
    let td = TestDir::new();
    let path = td.config(&entry("app", "main", "echo \"start app\" >> \"@REC@\"", ""));
    let out = td.podinit().config(&path).env("PODINIT_HTTP", "not-an-address").deadline(secs(10.0)).run();
    out.assert_code(2);
    assert!(out.stderr.contains("PODINIT_HTTP=\"not-an-address\""), "{}", out.report());
    assert!(out.records.is_empty(), "nothing started: {}", out.report());
}
