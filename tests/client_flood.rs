//! Client floods against the real binary as PID 1 (docs/control.md,
//! "Connections"): the status socket and the HTTP endpoint each hold at most
//! their cap of connections (a sixteenth of RLIMIT_NOFILE under `ulimit -n
//! 256`: 16). A new connection takes the slot of the oldest one that has not
//! sent its request, which is told `busy` / 503 and closed; when none is
//! idle, the new one is told so at once. A client that trickles its request
//! is cut at the 2 s deadline, and the pod keeps the descriptors its restarts
//! and exec probes need. `/livez` renders no report, so a flood of report
//! requests that fills the request queue does not fail it.

mod common;
use common::*;

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// The descriptor limit podinit runs under in these tests, and the cap it
/// gives each server under it (a sixteenth).
const NOFILE: u64 = 256;
const CAP: usize = (NOFILE / 16) as usize;

/// `ulimit -n N` and exec the rest: podinit stays PID 1.
fn ulimit_wrapper(n: u64) -> Vec<String> {
    vec!["sh".into(), "-c".into(), format!("ulimit -n {n} && exec \"$@\""), "sh".into()]
}

/// Starts podinit (PID 1, behind the `ulimit -n` wrapper) with `config`, its
/// stderr in `podinit.err`.
fn start(td: &TestDir, config: &Path, nofile: u64, deadline: Duration) -> Bare {
    let err = td.file("podinit.err");
    let err_file = fs::File::create(&err).unwrap();
    let wrapper = ulimit_wrapper(nofile);
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    td.podinit()
        .config(config)
        .deadline(deadline)
        .spawn_wrapped(&wrapper, |cmd| {
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err_file);
        })
        .log(&err)
}

/// podinit's open descriptors, and how many of them are sockets.
fn descriptors(pid: i32) -> (usize, usize) {
    let Ok(dir) = fs::read_dir(format!("/proc/{pid}/fd")) else { return (0, 0) };
    let mut all = 0;
    let mut sockets = 0;
    for e in dir.flatten() {
        all += 1;
        if fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:")) {
            sockets += 1;
        }
    }
    (all, sockets)
}

/// One HTTP GET: the whole answer, as text ("" when the connection failed).
fn http_get(port: u16, path: &str) -> String {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else { return String::new() };
    s.set_read_timeout(Some(secs(10.0))).unwrap();
    // A refused connection may be closed before the request is written: the
    // answer is still there to read.
    let _ = write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n");
    let mut text = Vec::new();
    let _ = s.read_to_end(&mut text);
    String::from_utf8_lossy(&text).into_owned()
}

fn http_code(answer: &str) -> u16 {
    answer.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0)
}

/// A podinit client command (`status`, `restart NAME`, `events`...) at `sock`.
fn client(sock: &Path, args: &[&str]) -> CmdOut {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_podinit"));
    cmd.args(args).arg("--socket").arg(sock).env_remove("PODINIT_CONFIG");
    run_with_deadline(&mut cmd, secs(10.0))
}

/// What a flood of held connections met.
#[derive(Debug, Default, Clone)]
struct Tally {
    opened: usize,
    /// Answered with the refusal at once.
    refused: usize,
    /// Closed by podinit without a word (its deadline).
    cut: usize,
    /// Answered anything else.
    other: usize,
    /// The first refusal, whole.
    first_refusal: String,
}

/// Keeps `target` silent connections open (made by `connect`, nonblocking)
/// until `stop`, opening a new one for each that podinit closes, and sorts
/// what each met: `refusal` (the start of podinit's refusal) or a cut.
fn hold<S: Read>(
    mut connect: impl FnMut() -> Option<S>,
    refusal: &'static str,
    target: usize,
    stop: &AtomicBool,
) -> Tally {
    let mut t = Tally::default();
    let mut held: Vec<S> = Vec::new();
    while !stop.load(Ordering::SeqCst) {
        while held.len() < target {
            let Some(s) = connect() else { break };
            held.push(s);
            t.opened += 1;
        }
        held.retain_mut(|s| {
            let mut buf = [0u8; 1024];
            match s.read(&mut buf) {
                Err(e) if e.kind() == ErrorKind::WouldBlock => true,
                Ok(0) | Err(_) => {
                    t.cut += 1;
                    false
                }
                Ok(n) => {
                    let text = String::from_utf8_lossy(&buf[..n]).into_owned();
                    if text.starts_with(refusal) {
                        t.refused += 1;
                        if t.first_refusal.is_empty() {
                            t.first_refusal = text;
                        }
                    } else {
                        t.other += 1;
                    }
                    false
                }
            }
        });
        // Paces the flood: a round of refills every 50 ms.
        thread::sleep(Duration::from_millis(50));
    }
    t
}

fn hold_http(port: u16, target: usize, stop: Arc<AtomicBool>) -> thread::JoinHandle<Tally> {
    thread::spawn(move || {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let connect = || {
            let s = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()?;
            s.set_nonblocking(true).ok()?;
            Some(s)
        };
        hold(connect, "HTTP/1.1 503 ", target, &stop)
    })
}

fn hold_status(sock: PathBuf, target: usize, stop: Arc<AtomicBool>) -> thread::JoinHandle<Tally> {
    thread::spawn(move || {
        let connect = || {
            let s = UnixStream::connect(&sock).ok()?;
            s.set_nonblocking(true).ok()?;
            Some(s)
        };
        hold(connect, "busy: ", target, &stop)
    })
}

/// A client that sends `prefix`, then one byte every 100 ms, never ending
/// its request; returns how long after connecting podinit closed it (None:
/// still open after 10 s).
fn slowloris<S: Read + Write>(mut s: S, prefix: &[u8]) -> Option<Duration> {
    let t0 = Instant::now();
    if s.write_all(prefix).is_err() {
        return Some(t0.elapsed());
    }
    while t0.elapsed() < secs(10.0) {
        thread::sleep(Duration::from_millis(100));
        if s.write_all(b"a").is_err() {
            return Some(t0.elapsed());
        }
        let mut buf = [0u8; 256];
        match s.read(&mut buf) {
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            _ => return Some(t0.elapsed()),
        }
    }
    None
}

/// Under `ulimit -n 256`, 150 HTTP and 150 status-socket connections held
/// open by a flood (more than podinit's whole limit), plus a slowloris on
/// each, while a sidecar crashes and is restarted and an exec probe runs:
/// podinit holds at most its caps (and a few connections each waiting for a
/// slot), tells the rest `busy` / 503 and closes them, and every restart and
/// probe still happens.
#[test]
fn a_client_flood_leaves_the_pod_its_descriptors() {
    let td = TestDir::new();
    let port = free_port();
    let sock = td.file("status.sock");
    let mut cfg = format!(
        "[pod]\ntermination_grace_period = \"2s\"\nhttp = \"127.0.0.1:{port}\"\nbackoff = {{ initial = \"50ms\", max = \"100ms\" }}\n\n"
    );
    cfg += &entry("crash", "sidecar", "echo \"start crash\" >> \"@REC@\"; sleep 0.2; exit 1", "");
    cfg += &entry(
        "watched",
        "sidecar",
        &sleeper("watched"),
        r#"readiness_probe = { exec = { command = ["sh", "-c", "echo probe >> @REC@"] }, period = "100ms" }"#,
    );
    cfg += &entry("app", "main", &sleeper("app"), "");
    let config = td.config(&cfg);
    let mut run = start(&td, &config, NOFILE, secs(60.0));
    run.wait_for_record_n("start app", 1, secs(10.0));
    run.wait_for_record_n("probe", 2, secs(10.0));
    let pid = run.podinit_pid();
    let (idle_fds, idle_sockets) = descriptors(pid);

    // The slowloris clients connect first: each gets a slot, and loses it
    // to the flood or to the deadline.
    let http_slow = thread::spawn(move || {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_nonblocking(true).unwrap();
        slowloris(s, b"GET /livez HTTP/1.1\r\nX-Slow: ")
    });
    let sock2 = sock.clone();
    let status_slow = thread::spawn(move || {
        let s = UnixStream::connect(&sock2).unwrap();
        s.set_nonblocking(true).unwrap();
        slowloris(s, b"x")
    });

    let stop = Arc::new(AtomicBool::new(false));
    let flood_http = hold_http(port, 150, Arc::clone(&stop));
    let flood_status = hold_status(sock.clone(), 150, Arc::clone(&stop));
    let crash_before = count(&run.records(), "start crash");
    let probes_before = count(&run.records(), "probe");
    let t0 = Instant::now();
    let (mut max_fds, mut max_sockets) = (0, 0);
    // A kubelet's probe among the flood: it takes an idle connection's slot.
    let mut livez = Vec::new();
    while t0.elapsed() < secs(4.0) {
        let (fds, sockets) = descriptors(pid);
        max_fds = max_fds.max(fds);
        max_sockets = max_sockets.max(sockets);
        if livez.len() < (t0.elapsed().as_millis() / 200) as usize {
            livez.push(http_code(&http_get(port, "/livez")));
        }
        thread::sleep(Duration::from_millis(10));
    }
    let livez_ok = livez.iter().filter(|c| **c == 200).count();
    let crash_during = count(&run.records(), "start crash") - crash_before;
    let probes_during = count(&run.records(), "probe") - probes_before;
    stop.store(true, Ordering::SeqCst);
    let http = flood_http.join().unwrap();
    let status = flood_status.join().unwrap();
    let http_cut_after = http_slow.join().unwrap();
    let status_cut_after = status_slow.join().unwrap();
    let held = max_sockets - idle_sockets;
    eprintln!(
        "idle: {idle_fds} descriptors ({idle_sockets} sockets); during the flood at most {max_fds} \
         ({max_sockets} sockets: {held} connections held); http {http:?}; status {status:?}; \
         slowloris closed after {http_cut_after:?} (HTTP), {status_cut_after:?} (status); \
         {crash_during} restarts and {probes_during} probe runs during the flood; \
         /livez answered 200 {livez_ok} times of {}: {livez:?}",
        livez.len()
    );
    let report = run.report();
    assert!(crash_during >= 3, "the crashing sidecar was restarted {crash_during} times in 4 s\n{report}");
    assert!(probes_during >= 5, "the exec probe ran {probes_during} times in 4 s\n{report}");
    let err = fs::read_to_string(td.file("podinit.err")).unwrap();
    assert!(!err.contains("os error 24"), "podinit ran out of descriptors\n{report}");
    assert!(
        held <= 2 * (CAP + 4 + 1),
        "podinit held {held} connections at once, over its caps of {CAP} + {CAP} \
         (and, each, 4 waiting for a slot and one being refused)\n{report}"
    );
    assert!(livez_ok * 2 > livez.len(), "/livez during the flood: {livez:?}\n{report}");
    assert!(max_fds < NOFILE as usize / 2, "podinit had {max_fds} descriptors open of {NOFILE}\n{report}");
    for (what, t, text) in [("HTTP", &http, "Connection: close"), ("status", &status, "status connections")] {
        assert!(t.refused >= 10, "{what}: too few refusals: {t:?}");
        assert!(t.first_refusal.contains(text), "{what}: {:?}", t.first_refusal);
        assert!(t.first_refusal.contains(&format!("at most {CAP} ")), "{what}: {:?}", t.first_refusal);
        assert_eq!(t.other, 0, "{what}: a silent connection got something other than a refusal: {t:?}");
    }
    for (what, cut) in [("HTTP", http_cut_after), ("status", status_cut_after)] {
        let cut = cut.unwrap_or_else(|| panic!("the {what} slowloris was still open after 10 s\n{report}"));
        assert!(cut < secs(6.0), "the {what} slowloris was closed after {cut:?}\n{report}");
    }
    run.signal(SIGTERM);
    let out = run.wait();
    assert_eq!(out.code, Some(0), "{out:?}\n{}", td.records().join("\n"));
}

/// The caps at work, one client at a time. With every status slot taken by
/// `podinit events` readers (at work, never idle), `podinit status`, a
/// control verb and `podinit events` print podinit's busy line and exit 2;
/// an events reader that goes frees its slot at once, in a pod where nothing
/// happens. With every slot taken by silent connections, a new client is
/// answered and the oldest silent one is told `busy` / 503. A client that
/// trickles its request alone is cut at the 2 s deadline.
#[test]
fn over_the_cap_clients_are_told_busy_and_idle_ones_make_room() {
    let td = TestDir::new();
    let port = free_port();
    let sock = td.file("status.sock");
    let mut cfg = format!("[pod]\ntermination_grace_period = \"2s\"\nhttp = \"127.0.0.1:{port}\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    cfg += &entry("app", "main", &sleeper("app"), "");
    let config = td.config(&cfg);
    let mut run = start(&td, &config, NOFILE, secs(40.0));
    run.wait_for_record_n("start app", 1, secs(10.0));

    let mut readers: Vec<UnixStream> = (0..CAP)
        .map(|i| {
            let mut s = UnixStream::connect(&sock).unwrap_or_else(|e| panic!("events reader {i}: {e}"));
            s.set_read_timeout(Some(secs(5.0))).unwrap();
            s.write_all(b"events\n").unwrap();
            let mut head = [0u8; 7];
            s.read_exact(&mut head).unwrap_or_else(|e| panic!("events reader {i}: {e}"));
            assert_eq!(&head, b"events\n", "events reader {i}");
            s
        })
        .collect();
    let busy = format!("busy: podinit serves at most {CAP} status connections at once; try again");
    for args in [&["status"][..], &["restart", "side"], &["events"]] {
        let out = client(&sock, args);
        assert_eq!(out.code, Some(2), "podinit {args:?}: {out:?}");
        assert_eq!(
            out.stderr,
            format!("podinit {}: {}: {busy}\n", args[0], sock.display()),
            "podinit {args:?}: {out:?}"
        );
    }
    // One reader goes: its slot is free again although no event comes.
    drop(readers.pop());
    let mut last = None;
    run.wait_until("podinit status answers again", secs(5.0), || {
        let out = client(&sock, &["status"]);
        let ok = out.code == Some(0);
        last = Some(out);
        ok
    });
    assert!(last.unwrap().stdout.contains("side"));
    drop(readers);

    // Silent connections hold every slot: a new client takes the oldest's.
    let mut silent: Vec<UnixStream> =
        (0..CAP).map(|_| UnixStream::connect(&sock).expect("connect")).collect();
    let out = client(&sock, &["status"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    silent[0].set_read_timeout(Some(secs(5.0))).unwrap();
    let mut told = String::new();
    let _ = silent[0].read_to_string(&mut told);
    assert_eq!(told, format!("{busy}\n"));
    drop(silent);
    let mut silent: Vec<TcpStream> =
        (0..CAP).map(|_| TcpStream::connect(("127.0.0.1", port)).expect("connect")).collect();
    let answer = http_get(port, "/livez");
    assert!(answer.starts_with("HTTP/1.1 200 ") && answer.ends_with("\r\n\r\nok\n"), "{answer:?}");
    silent[0].set_read_timeout(Some(secs(5.0))).unwrap();
    let mut told = String::new();
    let _ = silent[0].read_to_string(&mut told);
    assert_eq!(http_code(&told), 503, "{told:?}");
    assert!(told.contains("\r\nConnection: close\r\n"), "{told:?}");
    assert!(
        told.ends_with(&format!(
            "\r\n\r\npodinit serves at most {CAP} HTTP connections at once; try again\n"
        )),
        "{told:?}"
    );
    drop(silent);

    // Alone, a client that trickles its request is cut at the deadline.
    let http_slow = thread::spawn(move || {
        let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_nonblocking(true).unwrap();
        slowloris(s, b"GET /livez HTTP/1.1\r\nX-Slow: ")
    });
    let sock2 = sock.clone();
    let status_slow = thread::spawn(move || {
        let s = UnixStream::connect(&sock2).unwrap();
        s.set_nonblocking(true).unwrap();
        slowloris(s, b"x")
    });
    for (what, cut) in [("HTTP", http_slow.join().unwrap()), ("status", status_slow.join().unwrap())] {
        let cut = cut.unwrap_or_else(|| panic!("the {what} slowloris was still open after 10 s"));
        assert!(cut >= secs(1.5) && cut < secs(6.0), "the {what} slowloris was cut after {cut:?}");
    }
    run.signal(SIGTERM);
    let out = run.wait();
    assert_eq!(out.code, Some(0), "{out:?}\n{}", td.records().join("\n"));
}

/// A pod of 300 entries makes every report a large render. 24 status-socket
/// clients asking for it in a loop fill the request queue's share for
/// reports (some of them are told `busy`), yet every `GET /livez` and
/// `GET /readyz` is answered: neither renders the report, and the queue
/// keeps room for them.
#[test]
fn livez_answers_while_reports_fill_the_queue() {
    let td = TestDir::new();
    let port = free_port();
    let sock = td.file("status.sock");
    let mut cfg = format!("[pod]\ntermination_grace_period = \"2s\"\nhttp = \"127.0.0.1:{port}\"\n\n");
    for i in 0..300 {
        cfg += &format!(
            "[[process]]\nname = \"init-with-a-long-name-so-that-the-report-is-large-{i:04}\"\nrole = \"init\"\ncommand = [\"true\"]\n\n"
        );
    }
    cfg += &entry("app", "main", &sleeper("app"), "");
    let config = td.config(&cfg);
    // 1,024 descriptors: a cap of 32 status connections, over the 24 clients.
    let mut run = start(&td, &config, 1024, secs(90.0));
    run.wait_for_record_n("start app", 1, secs(60.0));

    let stop = Arc::new(AtomicBool::new(false));
    let askers: Vec<thread::JoinHandle<(usize, usize, usize)>> = (0..24)
        .map(|_| {
            let (sock, stop) = (sock.clone(), Arc::clone(&stop));
            thread::spawn(move || {
                let (mut answered, mut busy, mut other) = (0, 0, 0);
                while !stop.load(Ordering::SeqCst) {
                    let Ok(mut s) = UnixStream::connect(&sock) else {
                        other += 1;
                        continue;
                    };
                    s.set_read_timeout(Some(secs(10.0))).unwrap();
                    let _ = s.write_all(b"json\n");
                    let mut text = Vec::new();
                    let _ = s.read_to_end(&mut text);
                    if text.starts_with(b"ready\n") || text.starts_with(b"not ready\n") {
                        answered += 1;
                    } else if text.starts_with(b"busy: podinit's request queue is full") {
                        busy += 1;
                    } else {
                        other += 1;
                    }
                }
                (answered, busy, other)
            })
        })
        .collect();
    let mut livez = Vec::new();
    let mut readyz = Vec::new();
    for _ in 0..150 {
        livez.push(http_get(port, "/livez"));
        readyz.push(http_get(port, "/readyz"));
    }
    stop.store(true, Ordering::SeqCst);
    let (mut answered, mut busy, mut other) = (0, 0, 0);
    for a in askers {
        let (x, y, z) = a.join().unwrap();
        answered += x;
        busy += y;
        other += z;
    }
    let report = run.report();
    eprintln!("reports: {answered} answered, {busy} busy, {other} other");
    assert!(
        answered >= 10 && busy >= 10,
        "the reports did not fill the queue: {answered} answered, {busy} busy\n{report}"
    );
    assert_eq!(other, 0, "a report request got no answer and no busy line\n{report}");
    let failed: Vec<&String> = livez.iter().filter(|a| !a.ends_with("\r\n\r\nok\n")).collect();
    assert!(
        failed.is_empty(),
        "{} of {} /livez failed, the first: {:?}",
        failed.len(),
        livez.len(),
        failed[0]
    );
    let failed: Vec<&String> = readyz.iter().filter(|a| !a.ends_with("\r\n\r\nready\n")).collect();
    assert!(
        failed.is_empty(),
        "{} of {} /readyz failed, the first: {:?}",
        failed.len(),
        readyz.len(),
        failed[0]
    );
    run.signal(SIGTERM);
    let out = run.wait();
    assert_eq!(out.code, Some(0), "{out:?}");
}
