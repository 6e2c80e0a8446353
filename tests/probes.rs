//! The configuration (docs/configuration.md) probes and §2 rules 3 and 7: startup probes (exec, tcp_socket,
//! http_get) and readiness probes hold the start sequence at a sidecar;
//! `hold_until = "started"` does not wait for readiness.

mod common;
use common::*;

/// Listens on 127.0.0.1:PORT only after DELAY seconds, then writes MARKER.
const TCP_SERVER: &str = r#"
import socket, sys, time
port, delay, marker = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
time.sleep(delay)
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(64)
open(marker, "w").close()
while True:
    c, _ = s.accept()
    c.close()
"#;

/// Serves HTTP at once on 127.0.0.1:PORT, but answers 503 until DELAY seconds
/// have passed (and 404 for any path but /healthz); writes MARKER just before
/// its first 200.
const HTTP_SERVER: &str = r#"
import http.server, os, sys, time
port, delay, marker = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
t0 = time.time()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path != "/healthz":
            code = 404
        elif time.time() - t0 < delay:
            code = 503
        else:
            code = 200
            if not os.path.exists(marker):
                open(marker, "w").close()
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", port), H).serve_forever()
"#;

/// A main that records whether `@DIR@/MARKER` existed when it started.
fn main_checking(marker: &str) -> String {
    format!(
        r#"if [ -f "@DIR@/{marker}" ]; then echo "app saw {marker}" >> "@REC@"; else echo "app started early" >> "@REC@"; fi"#
    )
}

#[test]
fn exec_startup_probe_holds_the_next_entry_until_it_passes() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "sleep 0.6\ntouch \"@DIR@/side.ok\"\nexec sleep 60",
        r#"startup_probe = { exec = { command = ["test", "-f", "@DIR@/side.ok"] }, period = "100ms", failure_threshold = 100 }"#,
    );
    cfg += &entry("app", "main", &main_checking("side.ok"), "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["app saw side.ok"], "{}", out.report());
}

#[test]
fn tcp_socket_startup_probe_holds_the_next_entry_until_the_port_opens() {
    let td = TestDir::new();
    td.write("probe_tcp_server.py", TCP_SERVER);
    let port = free_port();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &format!("exec @PY@ @DIR@/probe_tcp_server.py {port} 0.6 @DIR@/listening"),
        &format!(
            "startup_probe = {{ tcp_socket = {{ port = {port} }}, period = \"100ms\", failure_threshold = 100 }}"
        ),
    );
    cfg += &entry(
        "app",
        "main",
        &format!(
            r#"if @PY@ -c 'import socket; socket.create_connection(("127.0.0.1", {port}), 2).close()'; then echo "app connected" >> "@REC@"; else echo "app refused" >> "@REC@"; fi"#
        ),
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["app connected"], "{}", out.report());
}

#[test]
fn http_get_startup_probe_holds_the_next_entry_until_it_answers_2xx() {
    let td = TestDir::new();
    td.write("probe_http_server.py", HTTP_SERVER);
    let port = free_port();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &format!("exec @PY@ @DIR@/probe_http_server.py {port} 0.8 @DIR@/http.ok"),
        &format!(
            "startup_probe = {{ http_get = {{ port = {port}, path = \"/healthz\" }}, period = \"100ms\", failure_threshold = 100 }}"
        ),
    );
    cfg += &entry("app", "main", &main_checking("http.ok"), "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["app saw http.ok"], "{}", out.report());
}

/// hold_until defaults to "ready": the readiness probe holds the sequence.
#[test]
fn readiness_probe_holds_the_next_entry_by_default() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "sleep 0.6\ntouch \"@DIR@/side.ready\"\nexec sleep 60",
        r#"readiness_probe = { exec = { command = ["test", "-f", "@DIR@/side.ready"] }, period = "100ms" }"#,
    );
    cfg += &entry("app", "main", &main_checking("side.ready"), "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["app saw side.ready"], "{}", out.report());
}

/// With hold_until = "started" a sidecar whose readiness depends on the main
/// does not hold the main (it would deadlock otherwise).
#[test]
fn hold_until_started_does_not_wait_for_readiness() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "exec sleep 60",
        r#"hold_until = "started"
readiness_probe = { exec = { command = ["test", "-f", "@DIR@/app.ran"] }, period = "100ms" }"#,
    );
    cfg += &entry(
        "app",
        "main",
        r#"echo "start app" >> "@REC@"
touch "@DIR@/app.ran"
sleep 0.3"#,
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app"], "{}", out.report());
}

/// Liveness never holds the sequence (rule 3), even when it fails from the start.
#[test]
fn liveness_probe_does_not_hold_the_sequence() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "exec sleep 60",
        r#"liveness_probe = { exec = { command = ["false"] }, period = "100ms", failure_threshold = 100 }"#,
    );
    cfg += &entry("app", "main", r#"echo "start app" >> "@REC@""#, "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app"], "{}", out.report());
}

/// Probe messages (docs/control.md): a probe that fails while the program
/// boots says nothing at the default level; a threshold crossing says so at
/// warning level with the last failure's reason; nothing says "restarting"
/// when nothing restarts.
#[test]
fn probe_messages_say_the_reason_at_the_threshold_and_nothing_while_booting() {
    let td = TestDir::new();
    let port = free_port();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\nrestart_policy = \"Never\"\n\n");
    // A sidecar that listens after 0.5 s: its early readiness failures are
    // expected and not worth a line.
    cfg += &entry(
        "side",
        "sidecar",
        &format!(
            r#"sleep 0.5
exec @PY@ -c "import socket, time; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind(('127.0.0.1', {port})); s.listen(); open('@REC@', 'a').write('listening\n'); time.sleep(60)""#
        ),
        &format!("readiness_probe = {{ tcp_socket = {{ port = {port} }}, period = \"100ms\" }}"),
    );
    // A main under Never whose liveness probe fails: it is stopped, not
    // restarted. Liveness waits for a startup probe on the main's file, made
    // once its TERM trap is in place (docs/lifecycle.md rule 9): a shell
    // slower than the probe's 200 ms would die of the TERM otherwise (143).
    let dead = free_port();
    cfg += &entry(
        "app",
        "main",
        "trap 'exit 0' TERM\ntouch \"@DIR@/app.up\"\nwhile :; do sleep 0.1; done",
        &format!(
            "{}\nliveness_probe = {{ tcp_socket = {{ port = {dead} }}, period = \"200ms\", failure_threshold = 2 }}",
            up_probe("app")
        ),
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    assert!(
        !out.stderr.lines().any(|l| l.contains("side readiness")),
        "early readiness failures say nothing at the default level:\n{}",
        out.report()
    );
    let warning = out
        .stderr
        .lines()
        .find(|l| l.contains("app liveness probe failed 2 times"))
        .unwrap_or_else(|| panic!("no threshold warning\n{}", out.report()));
    assert!(warning.starts_with("podinit | warning: "), "{warning}");
    assert!(warning.contains(&format!("(last: tcp 127.0.0.1:{dead}: Connection refused")), "{warning}");
    assert!(warning.ends_with("; stopping it"), "{warning}");
    assert!(!out.stderr.contains("restarting"), "nothing restarts under Never:\n{}", out.report());
}
