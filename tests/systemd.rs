//! podinit under a service manager (docs/systemd.md): the test plays
//! systemd with a datagram socket of its own in `NOTIFY_SOCKET`, and podinit
//! runs as PID 1. Every wait reads the socket (or a file) with a generous
//! timeout; the order of `READY=1` is checked against the files that let
//! the pod get ready, never against the clock.

mod common;
use common::*;

use std::os::unix::net::UnixDatagram;
use std::time::{Duration, Instant};

/// The test's end of `NOTIFY_SOCKET`: every datagram podinit sent, in order.
struct Manager {
    socket: UnixDatagram,
    seen: Vec<String>,
}

impl Manager {
    fn bind(path: &std::path::Path) -> Manager {
        Manager { socket: UnixDatagram::bind(path).expect("bind the notify socket"), seen: Vec::new() }
    }

    fn bind_abstract(name: &[u8]) -> Manager {
        use std::os::linux::net::SocketAddrExt;
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(name).unwrap();
        Manager { socket: UnixDatagram::bind_addr(&addr).expect("bind the notify socket"), seen: Vec::new() }
    }

    /// Reads datagrams until `done` holds of what has been seen; fails
    /// with everything seen after `timeout`.
    fn wait_until(&mut self, what: &str, timeout: Duration, done: impl Fn(&Manager) -> bool) {
        let until = Instant::now() + timeout;
        let mut buf = [0u8; 4096];
        while !done(self) {
            let left = until.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "no {what} within {timeout:?}; seen: {:#?}", self.seen);
            self.socket.set_read_timeout(Some(left)).unwrap();
            match self.socket.recv(&mut buf) {
                Ok(n) => self.seen.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
                Err(e)
                    if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
                Err(e) => panic!("reading the notify socket: {e}"),
            }
        }
    }

    /// Reads datagrams until `line` has come (at least `n` times in all).
    fn wait_for_n(&mut self, line: &str, n: usize, timeout: Duration) {
        self.wait_until(&format!("{line:?} x{n}"), timeout, |m| m.count(line) >= n);
    }

    fn wait_for(&mut self, line: &str, timeout: Duration) {
        self.wait_for_n(line, 1, timeout);
    }

    /// Takes in every datagram already queued.
    fn drain(&mut self) {
        self.socket.set_nonblocking(true).unwrap();
        let mut buf = [0u8; 4096];
        while let Ok(n) = self.socket.recv(&mut buf) {
            self.seen.push(String::from_utf8_lossy(&buf[..n]).into_owned());
        }
        self.socket.set_nonblocking(false).unwrap();
    }

    fn lines(&self) -> Vec<&str> {
        self.seen.iter().flat_map(|m| m.lines()).collect()
    }

    fn count(&self, line: &str) -> usize {
        self.lines().iter().filter(|l| **l == line).count()
    }
}

/// Records which service-manager variables a shell entry got.
fn env_report(name: &str) -> String {
    format!(
        r#"echo "{name} NOTIFY_SOCKET=${{NOTIFY_SOCKET-unset}} WATCHDOG_USEC=${{WATCHDOG_USEC-unset}} WATCHDOG_PID=${{WATCHDOG_PID-unset}}" >> "@REC@""#
    )
}

/// A notify sidecar, a sidecar whose readiness waits for `side.go`, and a
/// main that starts only once `app.go` exists (its startup probe waits for
/// `app.up`, which it makes then): `READY=1` comes only after both files,
/// with `STATUS=` lines saying what the start waits for, and
/// `EXTEND_TIMEOUT_USEC=`; `WATCHDOG=1` comes every half `WATCHDOG_USEC`;
/// SIGTERM brings `STOPPING=1`. No entry gets the manager's variables but
/// the notify sidecar its own socket.
#[test]
fn podinit_tells_its_service_manager_ready_status_watchdog_and_stopping() {
    let td = TestDir::new();
    let mut manager = Manager::bind(&td.file("notify.sock"));
    let pysvc = td.write(
        "pysvc.py",
        r#"import os, signal, socket, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
with open("@REC@", "a") as f:
    f.write("pysvc NOTIFY_SOCKET=%s WATCHDOG_USEC=%s\n" % (os.environ.get("NOTIFY_SOCKET", "unset"), os.environ.get("WATCHDOG_USEC", "unset")))
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"READY=1\nSTATUS=from pysvc", os.environ["NOTIFY_SOCKET"])
while True: time.sleep(0.1)
"#,
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &format!(
        "[[process]]\nname = \"pysvc\"\nrole = \"sidecar\"\ncommand = [\"@PY@\", \"-u\", \"{}\"]\nreadiness_probe = {{ notify = true }}\n\n",
        pysvc.display()
    );
    cfg += &entry(
        "side",
        "sidecar",
        &format!("{}\n{}", env_report("side"), "trap 'exit 0' TERM\nwhile :; do sleep 0.1; done"),
        "hold_until = \"started\"\nreadiness_probe = { exec = { command = [\"test\", \"-f\", \"@DIR@/side.go\"] }, period = \"50ms\" }",
    );
    cfg += &entry(
        "app",
        "main",
        &format!(
            "{}\n{}",
            env_report("app"),
            r#"trap 'exit 0' TERM
while [ ! -f "@DIR@/app.go" ]; do sleep 0.05; done
touch "@DIR@/app.up"
while :; do sleep 0.1; done"#
        ),
        &up_probe("app"),
    );
    let path = td.config(&cfg);
    let mut run = td
        .podinit()
        .config(&path)
        .env("NOTIFY_SOCKET", td.file("notify.sock"))
        .env("WATCHDOG_USEC", "400000")
        .env("WATCHDOG_PID", "1")
        .deadline(secs(30.0))
        .spawn();
    let wait = secs(15.0);

    manager.wait_for("STATUS=starting: waiting for side (readiness probe)", wait);
    std::fs::write(td.file("side.go"), "").unwrap();
    manager.wait_for("STATUS=starting: waiting for app (startup probe)", wait);
    manager.drain();
    assert_eq!(manager.count("READY=1"), 0, "ready before app started: {:#?}", manager.seen);
    std::fs::write(td.file("app.go"), "").unwrap();
    manager.wait_for("READY=1", wait);
    assert_eq!(manager.count("STATUS=running, ready"), 1, "{:#?}", manager.seen);
    let extend = format!("EXTEND_TIMEOUT_USEC={}", 90_000_000);
    assert!(manager.count(&extend) >= 3, "each entry extends the start once: {:#?}", manager.seen);
    assert!(
        manager.lines().iter().any(|l| l.starts_with("STATUS=starting: waiting for pysvc (")),
        "{:#?}",
        manager.seen
    );

    // WATCHDOG=1 every 200 ms: two more after READY=1.
    let watchdogs = manager.count("WATCHDOG=1");
    manager.wait_for_n("WATCHDOG=1", watchdogs + 2, wait);

    run.signal(SIGTERM);
    manager.wait_for("STOPPING=1", wait);
    manager.drain();
    assert_eq!(manager.count("READY=1"), 1, "READY=1 once: {:#?}", manager.seen);
    assert_eq!(manager.count("STOPPING=1"), 1, "{:#?}", manager.seen);
    assert!(
        !manager.lines().contains(&"STATUS=from pysvc"),
        "pysvc's datagrams are podinit's: {:#?}",
        manager.seen
    );
    let out = run.wait();
    let records = out.records.clone();
    let unset = "NOTIFY_SOCKET=unset WATCHDOG_USEC=unset WATCHDOG_PID=unset";
    assert!(records.contains(&format!("side {unset}")), "{}", out.report());
    assert!(records.contains(&format!("app {unset}")), "{}", out.report());
    let py = records.iter().find(|r| r.starts_with("pysvc ")).expect("pysvc's env");
    let ours = td.file("notify.sock").display().to_string();
    assert!(py.ends_with(" WATCHDOG_USEC=unset") && !py.contains(&ours), "{py}\n{}", out.report());
    assert!(py.contains("NOTIFY_SOCKET=/"), "pysvc keeps its own socket: {py}");
}

/// An abstract `NOTIFY_SOCKET` (`@name`, as Podman's can be) works alike.
#[test]
fn an_abstract_notify_socket_gets_ready_and_stopping() {
    let td = TestDir::new();
    let name = format!("podinit-test-{}-{}", std::process::id(), td.path().display());
    let mut manager = Manager::bind_abstract(name.as_bytes());
    let cfg =
        format!("[pod]\ntermination_grace_period = \"3s\"\n\n{}", entry("app", "main", &sleeper("app"), ""));
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).env("NOTIFY_SOCKET", format!("@{name}")).spawn();
    manager.wait_for("READY=1", secs(15.0));
    run.signal(SIGTERM);
    manager.wait_for("STOPPING=1", secs(15.0));
    run.wait();
    assert_eq!(manager.count("WATCHDOG=1"), 0, "no WATCHDOG_USEC, no watchdog: {:#?}", manager.seen);
}

/// The plain init (`podinit -- cmd`) sends nothing itself and passes
/// `NOTIFY_SOCKET` on to its command unchanged, as before: a command that
/// speaks sd_notify says `READY=1` itself.
#[test]
fn the_plain_init_passes_notify_socket_on() {
    let td = TestDir::new();
    let out = td
        .podinit()
        .env("NOTIFY_SOCKET", "@podinit-plain")
        .env("WATCHDOG_USEC", "400000")
        .args(["--", "sh", "-c", "echo \"got $NOTIFY_SOCKET $WATCHDOG_USEC\""])
        .run();
    out.assert_code(0);
    assert!(out.stdout.lines().any(|l| l == "got @podinit-plain 400000"), "{}", out.report());
}
