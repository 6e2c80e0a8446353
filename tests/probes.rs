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
