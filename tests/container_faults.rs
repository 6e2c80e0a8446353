//! Faults a container's world brings to its init, with podinit as PID 1 of a
//! fresh PID namespace: a log reader that stalls (podinit's stdout and stderr
//! pipes stop being read while an entry writes all it can), podinit's stderr
//! closed (alone or with its stdout), and a main that forks 10 000 processes
//! when it is told to stop.
//!
//! Already covered elsewhere, so not repeated here: podinit's stdout alone a
//! closed pipe (`output_volume.rs`: `a_closed_stdout_does_not_kill_podinit`,
//! `..._as_pid1`); podinit's stdout alone left unread while a sidecar writes
//! 50 MB, podinit's stderr a file (`output_volume.rs`:
//! `a_blocked_stdout_blocks_the_writer_not_podinit`); podinit's stderr a full
//! pipe with a quiet pod (`pid1_edges.rs`:
//! `a_stderr_nobody_reads_does_not_keep_the_pod_from_stopping_on_sigterm`); a
//! fork storm of 10 000 orphans while the pod runs (`faults.rs`:
//! `a_fork_storm_of_ten_thousand_orphans_leaves_no_zombie`).

mod common;
use common::*;
use podinit::output::log::{LOG_QUEUE, MAX_LOG_LINE};
use podinit::output::{MAX_LINE, READ_SIZE};
use std::fs::{self, File};
use std::io::Read;
use std::os::fd::AsRawFd;
use std::process::{Command, Stdio};
use std::sync::{mpsc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

// ----- helpers -----

/// The most podinit may hold for output, in KiB, with `pipes` child pipes
/// copied, per its documented bounds (src/output/mod.rs, "Memory is bounded",
/// and src/output/log.rs): per child pipe a read buffer of at most
/// `READ_SIZE`, an unfinished line of at most `MAX_LINE` and a framed buffer
/// kept up to 16 × `READ_SIZE` (`pump`); for its own messages a queue of
/// `LOG_QUEUE` lines of at most `MAX_LOG_LINE` bytes each.
fn output_bound_kib(pipes: usize) -> u64 {
    let per_pipe = READ_SIZE + MAX_LINE + 16 * READ_SIZE;
    ((pipes * per_pipe + LOG_QUEUE * MAX_LOG_LINE) / 1024) as u64
}

/// Room on top of [`output_bound_kib`] for what the allocator keeps and the
/// stacks the stall touches (KiB): generous, a leak of output grows by MBs a
/// second against a stalled reader.
const SLACK_KIB: u64 = 4 * 1024;

/// Reads `r` on a thread until end of file; the bytes come back on the
/// channel. A reader that never ends (a process of the pod left holding the
/// pipe) shows as a timeout of the receiver.
fn read_to_end_on_a_thread(mut r: File) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        let _ = tx.send(v);
    });
    rx
}

/// The count in a progress file (one line its writer rewrites in place), 0
/// while there is none.
fn counter(path: &std::path::Path) -> u64 {
    fs::read_to_string(path).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
}

/// Checks `text` (what came out of one of podinit's pipes) line by line:
/// every line is `app | TAG NNNNNNNNN PAD` (the name padded to the longest
/// one), numbered from 1 without a gap, or one of podinit's own (`podinit |
/// ...`) when `own` allows them. Only the very end may be cut: a write that a
/// full pipe took in part. Returns (app's lines, podinit's lines, the cut end).
fn check_stream(text: &str, tag: &str, pad: &str, own: bool) -> Result<(u64, Vec<String>, String), String> {
    let (complete, cut) = match text.rfind('\n') {
        Some(i) => (&text[..=i], &text[i + 1..]),
        None => ("", text),
    };
    // `app`, the padding, `| `.
    let prefix = complete
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("app")?.trim_start_matches(' ');
            rest.starts_with("| ").then(|| l[..l.len() - rest.len() + 2].to_string())
        })
        .unwrap_or_else(|| "app | ".to_string());
    let mut n = 0u64;
    let mut podinit = Vec::new();
    for (i, l) in complete.lines().enumerate() {
        if own && l.starts_with("podinit | ") {
            podinit.push(l.to_string());
            continue;
        }
        let want = format!("{prefix}{tag} {:09} {pad}", n + 1);
        if l != want {
            return Err(format!("line {} is {:?}, expected {:?}", i + 1, tail(l, 200), tail(&want, 200)));
        }
        n += 1;
    }
    let next = format!("{prefix}{tag} {:09} {pad}\n", n + 1);
    let own_cut = own && (cut.starts_with("podinit | ") || "podinit | ".starts_with(cut));
    if !cut.is_empty() && !next.starts_with(cut) && !own_cut {
        return Err(format!("the output ends in {:?}, not a part of the next line {next:?}", tail(cut, 200)));
    }
    Ok((n, podinit, cut.to_string()))
}

/// Host pids of every process whose command line holds `marker`.
fn host_processes_with(marker: &str) -> Vec<(i32, String)> {
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        let raw = fs::read(e.path().join("cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&raw).replace('\0', " ");
        if cmd.contains(marker) {
            found.push((pid, cmd.trim().to_string()));
        }
    }
    found
}

// ----- the log reader stalls -----

/// A writer of numbered lines `TAG NNNNNNNNN PAD` to descriptor FD, as fast
/// as the pipe takes them; after each batch it rewrites `@DIR@/TAG.progress`
/// with how many lines its pipe has taken.
const CHAT_PY: &str = r#"import os, sys
fd, tag = int(sys.argv[1]), sys.argv[2].encode()
pad = b"x" * 150
prog = os.open("@DIR@/" + sys.argv[2] + ".progress", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
n = 0
while True:
    view = memoryview(b"".join(b"%s %09d %s\n" % (tag, i, pad) for i in range(n + 1, n + 21)))
    while view:
        view = view[os.write(fd, view):]
    n += 20
    os.pwrite(prog, b"%09d\n" % n, 0)
"#;

/// podinit's stdout and stderr are two pipes, as a container engine gives
/// them to its log driver, and the reader stalls: nobody ever reads stdout,
/// and stderr is read a little (the first 100 lines), then no more. The main
/// runs two writers as fast as the pipes take them, one on its stdout, one on
/// its stderr. podinit passes the stall on to the writers (they block), its
/// memory stays within its documented buffers, and SIGTERM during the stall
/// stops the main (which exits 7 from its TERM trap), then the sidecar, and
/// podinit exits 7 within the 5 s grace period although neither pipe has
/// room. What is in the pipes afterwards is whole lines in order with no gap,
/// only the very end cut.
#[test]
fn a_stalled_log_reader_does_not_hold_up_termination_or_grow_memory() {
    let td = TestDir::new();
    td.write("chat.py", CHAT_PY);
    let pad = "x".repeat(150);
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    cfg += &entry(
        "app",
        "main",
        "trap 'echo \"stop app\" >> \"@REC@\"; exit 7' TERM\necho \"start app\" >> \"@REC@\"\n\
         i=0; while [ ! -f \"@DIR@/go\" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done\n\
         @PY@ \"@DIR@/chat.py\" 1 out &\n@PY@ \"@DIR@/chat.py\" 2 err &\nwait",
        "",
    );
    let path = td.config(&cfg);
    let (out_r, out_w) = pipe();
    let (mut err_r, err_w) = pipe();
    let mut run = td.podinit().config(&path).deadline(secs(40.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(out_w).stderr(err_w);
    });
    let pid = run.podinit_pid();
    run.wait_for_record_n("start app", 1, secs(10.0));
    run.wait_for_record_n("start side", 1, secs(10.0));
    // Before any output: what podinit holds with its lanes started and empty.
    let baseline = vm_kib(pid, "VmRSS").unwrap_or(0);
    assert!(baseline > 0, "could not read podinit's VmRSS (pid {pid})");
    let bound = baseline + output_bound_kib(4) + SLACK_KIB; // app's two pipes, side's two

    // The stderr reader takes the first 100 of app's lines, then stops.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&v).contains(" err 000000100 ") {
            match err_r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => v.extend_from_slice(&buf[..n]),
            }
        }
        let _ = tx.send((err_r, v));
    });
    fs::write(td.file("go"), "").unwrap();
    let (err_r, err_head) = rx.recv_timeout(secs(10.0)).unwrap_or_else(|_| {
        run.fail("the first 100 stderr lines of app did not come within 10 s");
    });

    // The stall. The scenario is a log driver stuck for 60 s; here the stall
    // lasts as long as the test holds it: until both writers are blocked (a
    // progress file unchanged for 500 ms), then 2 s more. Past that point
    // nothing changes but the clock. VmRSS is sampled all along.
    let (out_p, err_p) = (td.file("out.progress"), td.file("err.progress"));
    let mut peak = baseline;
    let mut last = (0, 0);
    let mut still_since = Instant::now();
    run.wait_until("both writers to block on the stalled pipes", secs(15.0), || {
        peak = peak.max(vm_kib(pid, "VmRSS").unwrap_or(0));
        let now = (counter(&out_p), counter(&err_p));
        if now != last || now.0 == 0 || now.1 == 0 {
            last = now;
            still_since = Instant::now();
        }
        thread::sleep(Duration::from_millis(40));
        still_since.elapsed() >= secs(0.5)
    });
    let blocked_at = last;
    let hold = Instant::now();
    run.wait_until("2 s of stall", secs(3.0), || {
        peak = peak.max(vm_kib(pid, "VmRSS").unwrap_or(0));
        thread::sleep(Duration::from_millis(40));
        hold.elapsed() >= secs(2.0)
    });
    let stalled_at = (counter(&out_p), counter(&err_p));
    if stalled_at != blocked_at {
        run.fail(&format!("the writers went on during the stall: {blocked_at:?} then {stalled_at:?} lines"));
    }

    // SIGTERM while neither pipe has room.
    let sent = Instant::now();
    run.signal(SIGTERM);
    let mut exit_seen = None;
    while exit_seen.is_none() {
        peak = peak.max(vm_kib(pid, "VmRSS").unwrap_or(0));
        if !run.is_running() {
            exit_seen = Some(sent.elapsed());
        } else if sent.elapsed() > secs(15.0) {
            run.fail("podinit did not exit within 15 s of SIGTERM with its output pipes stalled");
        } else {
            thread::sleep(Duration::from_millis(20));
        }
    }
    let records = run.records();
    let exit = run.wait();
    let took = exit_seen.unwrap();

    // Afterwards the pipes are read: they reach end of file (nothing of the
    // pod holds them) and hold whole lines in order, only the end cut.
    let out_text =
        read_to_end_on_a_thread(out_r).recv_timeout(secs(5.0)).expect("stdout reached no end of file");
    let err_rest =
        read_to_end_on_a_thread(err_r).recv_timeout(secs(5.0)).expect("stderr reached no end of file");
    let out_text = String::from_utf8_lossy(&out_text).into_owned();
    let err_text = String::from_utf8_lossy(&[err_head, err_rest].concat()).into_owned();
    let report = format!(
        "{exit:?} {took:?} after SIGTERM; writers blocked at {blocked_at:?} lines; VmRSS {baseline} KiB before, peak {peak} KiB, bound {bound} KiB\n--- records ---\n{}\n--- stderr (tail) ---\n{}",
        records.join("\n"),
        tail(&err_text, 2000)
    );
    let (out_lines, _, out_cut) =
        check_stream(&out_text, "out", &pad, false).unwrap_or_else(|e| panic!("stdout: {e}\n{report}"));
    let (err_lines, own, err_cut) =
        check_stream(&err_text, "err", &pad, true).unwrap_or_else(|e| panic!("stderr: {e}\n{report}"));
    eprintln!(
        "stalled log reader: writers blocked at {blocked_at:?} lines; podinit VmRSS {baseline} KiB before, \
         peak {peak} KiB while stalled (bound {bound} KiB); exit {:?} {took:?} after SIGTERM; \
         in the pipes: {out_lines} + {err_lines} lines in order, {} podinit lines, cut ends of {} and {} bytes",
        exit.code,
        own.len(),
        out_cut.len(),
        err_cut.len()
    );
    assert_eq!((exit.code, exit.signal), (Some(7), None), "{report}");
    assert!(took < secs(5.0), "podinit took {took:?} after SIGTERM (grace period 5 s)\n{report}");
    assert!(pos(&records, "stop app") < pos(&records, "stop side"), "{report}");
    assert!(peak <= bound, "podinit's VmRSS reached {peak} KiB while stalled, over {bound} KiB\n{report}");
    // The stall reached the writers: they stopped long before the pipes had
    // taken what they would in 2 s (hundreds of MB).
    assert!(out_lines >= 1 && err_lines >= 100, "{report}");
    assert!(out_lines <= blocked_at.0 && err_lines <= blocked_at.1, "more lines out than written\n{report}");
    // Fewer than LOG_QUEUE messages: none of podinit's own lines was dropped
    // (src/output/log.rs), so no line says so.
    assert!(own.iter().all(|l| !l.contains("were dropped")), "{report}");
}

/// podinit's own messages while its stderr is stalled: a sidecar that exits
/// at once under a zero backoff makes podinit log about a thousand lines a
/// second while the test, having read a few, reads no more (its pipe shrunk
/// to one page, so that the queue of `LOG_QUEUE` lines fills fast). The pod
/// goes on (the sidecar keeps being restarted), podinit's memory stays within
/// its bounds, and when the reader comes back, a line says how many of
/// podinit's lines were dropped: every line is either out or counted.
#[test]
fn own_lines_dropped_while_stderr_stalls_are_counted_when_the_reader_returns() {
    let td = TestDir::new();
    let mut cfg =
        String::from("[pod]\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"0s\" }\n\n");
    cfg += &entry("blink", "sidecar", "echo run >> \"@DIR@/runs\"\nexit 1", "");
    cfg += &entry("app", "main", &sleeper("app"), "");
    let path = td.config(&cfg);
    let (mut err_r, err_w) = pipe();
    // SAFETY: fcntl(2) on a pipe this test owns; the kernel rounds up to a page.
    let size = unsafe { libc::fcntl(err_r.as_raw_fd(), libc::F_SETPIPE_SZ, 4096) };
    assert!(size > 0, "F_SETPIPE_SZ: {}", std::io::Error::last_os_error());
    let mut run = td.podinit().config(&path).deadline(secs(40.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err_w);
    });
    let pid = run.podinit_pid();
    run.wait_for_record_n("start app", 1, secs(10.0));
    let baseline = vm_kib(pid, "VmRSS").unwrap_or(0);
    let bound = baseline + output_bound_kib(4) + SLACK_KIB;
    let mut head = vec![0u8; 4096];
    let n = err_r.read(&mut head).unwrap();
    head.truncate(n);
    // Stalled: enough runs for three times the queue of podinit's lines
    // (three lines a run: started, exited, restarting).
    let runs = || fs::read_to_string(td.file("runs")).map_or(0, |s| s.lines().count());
    let runs_before = runs();
    let mut peak = baseline;
    run.wait_until("the sidecar's runs to fill podinit's log queue", secs(20.0), || {
        peak = peak.max(vm_kib(pid, "VmRSS").unwrap_or(0));
        thread::sleep(Duration::from_millis(20));
        runs() >= runs_before + LOG_QUEUE
    });
    // The reader comes back; the pod goes on until a line reports the drops.
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    thread::spawn(move || {
        let mut buf = [0u8; 65536];
        loop {
            match err_r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut text = String::from_utf8_lossy(&head).into_owned();
    let mut rest = Vec::new();
    run.wait_until("podinit to say that lines were dropped", secs(10.0), || {
        rest.extend(rx.try_iter().flatten());
        String::from_utf8_lossy(&rest).contains("lines were dropped")
    });
    run.signal(SIGTERM);
    let exit = run.wait();
    let mut got_eof = false;
    let until = Instant::now() + secs(5.0);
    while Instant::now() < until {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(chunk) => rest.extend(chunk),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                got_eof = true;
                break;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    text += &String::from_utf8_lossy(&rest);
    let total_runs = runs();
    let report = format!("{exit:?}; {total_runs} runs\n--- stderr (tail) ---\n{}", tail(&text, 3000));
    assert!(got_eof, "podinit's stderr reached no end of file\n{report}");
    assert_eq!(exit.code, Some(0), "{report}");
    let mut dropped = 0u64;
    let mut notes = 0;
    let mut blink_lines = 0u64;
    for l in text.lines() {
        // The main's shell may report its `sleep` killed (`app | Terminated`).
        let Some(msg) = l.strip_prefix("podinit | ") else {
            assert!(l.starts_with("app "), "a line neither podinit's nor app's: {l:?}\n{report}");
            continue;
        };
        if let Some(n) = msg.strip_prefix("warning: ").and_then(|m| {
            m.strip_suffix(" of podinit's own log lines were dropped (stderr was not being read)")
        }) {
            dropped += n.parse::<u64>().unwrap_or_else(|_| panic!("drop count {n:?}\n{report}"));
            notes += 1;
        } else if msg.starts_with("blink ") || msg == "restarting blink" {
            blink_lines += 1;
        }
    }
    eprintln!(
        "own lines while stderr stalled: {total_runs} sidecar runs, {blink_lines} of their lines out, \
         {dropped} reported dropped in {notes} notes; VmRSS {baseline} KiB before, peak {peak} KiB (bound {bound} KiB)"
    );
    assert!(notes >= 1 && dropped >= 1, "no drop was reported\n{report}");
    // Every line is out or counted: three a run, the last run's maybe not
    // all (SIGTERM), and a few other messages among the dropped.
    let want = 3 * total_runs as u64;
    let seen = blink_lines + dropped;
    assert!(
        seen + 3 >= want && seen <= want + 20,
        "{blink_lines} sidecar lines out + {dropped} dropped against {want} logged\n{report}"
    );
    assert!(peak <= bound, "podinit's VmRSS reached {peak} KiB, over {bound} KiB\n{report}");
}

// ----- podinit's stderr closed -----

/// podinit's stderr is a pipe whose read end is closed before anything is
/// written (with its stdout a file, or closed too). The sidecar and the main
/// each write 20 000 lines to stderr (and a line to stdout); the pod runs as
/// ever: the main exits 7, podinit stops the sidecar and exits 7, not by
/// SIGPIPE nor with an error status, and nothing of the pod outlives it. Its
/// own messages are lost with the rest of stderr; the records show the order.
fn closed_stderr(td: &TestDir, launcher: Launcher, stdout_closed: bool) {
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    // Bounded (15 s): not as PID 1, a podinit killed by SIGPIPE would leave it behind.
    let side = "seq 1 20000 >&2\necho side-line\ntrap 'echo \"stop side\" >> \"@REC@\"; exit 0' TERM\n\
                echo \"start side\" >> \"@REC@\"\ntouch \"@DIR@/side.up\"\n\
                i=0; while [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done";
    cfg += &entry("side", "sidecar", side, &up_probe("side"));
    cfg += &entry("app", "main", "seq 1 20000 >&2\necho app-line\necho 'app wrote' >> \"@REC@\"\nexit 7", "");
    let path = td.config(&cfg);
    let out_path = td.file("podinit.out");
    // Both read ends are closed before podinit starts: its first write fails.
    let (err_r, err_w) = pipe();
    let (out_r, out_w) = pipe();
    drop((err_r, out_r));
    let out_file = File::create(&out_path).unwrap();
    let run = launcher.config(&path).deadline(secs(15.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stderr(err_w);
        if stdout_closed {
            c.stdout(out_w);
        } else {
            c.stdout(out_file);
        }
    });
    let run = run.log(&out_path);
    let exit = run.wait();
    // The entries' shells carry the test's directory in their command lines.
    let left = host_processes_with(&td.path().display().to_string());
    for (p, _) in &left {
        send_signal(*p, SIGKILL); // leak nothing on the host
    }
    let records = fs::read_to_string(td.rec()).unwrap_or_default();
    let stdout = fs::read_to_string(&out_path).unwrap_or_default();
    let report = format!("{exit:?}\n--- records ---\n{records}\n--- stdout ---\n{}", tail(&stdout, 2000));
    assert_eq!((exit.code, exit.signal), (Some(7), None), "podinit with a closed stderr\n{report}");
    assert!(left.is_empty(), "processes of the pod outlived podinit: {left:?}\n{report}");
    let recs: Vec<String> = records.lines().map(str::to_string).collect();
    assert!(pos(&recs, "start side") < pos(&recs, "app wrote"), "{report}");
    assert!(pos(&recs, "app wrote") < pos(&recs, "stop side"), "{report}");
    if !stdout_closed {
        // stdout's lane is not held up by stderr's errors.
        assert_eq!(entry_lines(&stdout, "side"), vec!["side-line"], "{report}");
        assert_eq!(entry_lines(&stdout, "app"), vec!["app-line"], "{report}");
    }
}

#[test]
fn a_closed_stderr_does_not_stop_the_pod_as_pid1() {
    let td = TestDir::new();
    closed_stderr(&td, td.podinit(), false);
}

/// Not as PID 1 (child subreaper, `docker run --init`), where a default
/// SIGPIPE would kill podinit.
#[test]
fn a_closed_stderr_does_not_stop_the_pod_as_subreaper() {
    let td = TestDir::new();
    closed_stderr(&td, td.podinit_not_pid1(), false);
}

#[test]
fn closed_stdout_and_stderr_do_not_stop_the_pod_as_pid1() {
    let td = TestDir::new();
    closed_stderr(&td, td.podinit(), true);
}

#[test]
fn closed_stdout_and_stderr_do_not_stop_the_pod_as_subreaper() {
    let td = TestDir::new();
    closed_stderr(&td, td.podinit_not_pid1(), true);
}

// ----- a main that forks 10 000 times while the pod terminates -----

/// Waits for SIGTERM, then forks N children: the even ones exit at once, the
/// odd ones leave the process group (setsid), ignore TERM, HUP and INT, say
/// so on a pipe and sleep for ever. Once every one has said so (end of file on
/// the pipe), it records `forked K, apart S` (K forks worked, S children in
/// sessions of their own) and exits 42. Its argv carries the test's marker,
/// and so does every child's.
const FORKER_C: &str = r#"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 4) return 2;
    const char *rec = argv[1];
    long n = atol(argv[2]);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    sigprocmask(SIG_BLOCK, &term, NULL);
    FILE *f = fopen(rec, "a");
    if (!f) return 3;
    fprintf(f, "start app\n");
    fflush(f);
    int sig;
    sigwait(&term, &sig);
    fprintf(f, "stop app\n");
    fflush(f);
    int apart[2];
    if (pipe(apart) != 0) return 4;
    long forked = 0;
    for (long i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            if (i % 2 == 0) _exit(0);
            setsid();
            signal(SIGTERM, SIG_IGN);
            signal(SIGHUP, SIG_IGN);
            signal(SIGINT, SIG_IGN);
            if (write(apart[1], "x", 1) != 1) _exit(5);
            close(apart[1]);
            close(apart[0]);
            for (;;) pause();
        }
        forked++;
    }
    close(apart[1]);
    long settled = 0;
    char buf[4096];
    ssize_t got;
    while ((got = read(apart[0], buf, sizeof buf)) > 0) settled += got;
    fprintf(f, "forked %ld, apart %ld\n", forked, settled);
    fclose(f);
    return 42;
}
"#;

/// The two runs fork 10 000 processes each; one at a time, so that together
/// with the rest of the suite they stay far from the kernel's pid limit.
static FORK_STORMS: Mutex<()> = Mutex::new(());

/// On SIGTERM the main forks 10 000 children (half exit at once, half escape
/// into sessions of their own and ignore TERM), then exits 42; a sidecar
/// takes its time to stop (until the test lets it). While the sidecar stops,
/// no zombie of the storm lingers (podinit reaps the 5 000 orphans that
/// reparent to it); then podinit exits 42 and no process of the storm is
/// left anywhere on the host.
fn fork_storm_on_sigterm(td: &TestDir, launcher: Launcher) {
    const FORKS: u64 = 10_000;
    let _one_at_a_time = FORK_STORMS.lock().unwrap_or_else(|e| e.into_inner());
    let src = td.write("forker.c", FORKER_C);
    // The marker: this test's own directory, in every storm process's argv.
    let bin = td.file("forker");
    let cc = run_with_deadline(Command::new("cc").arg("-O2").arg("-o").arg(&bin).arg(&src), secs(60.0));
    assert_eq!(cc.code, Some(0), "cc failed: {cc:?}");
    let marker = bin.display().to_string();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"20s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "trap 'echo \"stop side\" >> \"@REC@\"; i=0; while [ ! -f \"@DIR@/release\" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done; exit 0' TERM\n\
         echo \"start side\" >> \"@REC@\"\nwhile :; do sleep 0.1; done",
        "",
    );
    cfg += &format!(
        "[[process]]\nname = \"app\"\nrole = \"main\"\ncommand = [\"{marker}\", \"@REC@\", \"{FORKS}\", \"storm\"]\n"
    );
    let path = td.config(&cfg);
    let mut run = launcher.config(&path).deadline(secs(45.0)).spawn();
    let podinit = run.podinit_pid();
    run.wait_for_record("start app", secs(10.0));
    run.wait_for_record("start side", secs(10.0));
    let sent = Instant::now();
    run.signal(SIGTERM);
    // The sidecar is stopped once the main is gone: the storm is over then.
    run.wait_for_record("stop side", secs(30.0));
    let forked_line = td.records().into_iter().find(|l| l.starts_with("forked "));
    // The sleepers of the storm, alive (a zombie's command line is empty).
    let sleepers = host_processes_with(&marker).len();
    let zombies = lingering_zombies(podinit, secs(2.0));
    fs::write(td.file("release"), "").unwrap();
    let out = run.wait();
    let took = out.ended - sent;
    // Alive ones only: a zombie (its command line empty) is dead already.
    let left = host_processes_with(&marker);
    for (p, _) in &left {
        send_signal(*p, SIGKILL); // leak nothing on the host
    }
    eprintln!(
        "fork storm on SIGTERM: {forked_line:?}, {sleepers} of its sleepers alive while the sidecar stopped, \
         {} zombies lingering, exit {:?} {took:?} after SIGTERM, {} storm processes left",
        zombies.len(),
        out.code,
        left.len()
    );
    assert_eq!(forked_line.as_deref(), Some("forked 10000, apart 5000"), "{}", out.report());
    assert!(zombies.is_empty(), "zombies while the sidecar stopped: {:?}", &zombies[..zombies.len().min(20)]);
    assert_eq!(sleepers, (FORKS / 2) as usize, "the storm's sleepers alive while the sidecar stopped");
    out.assert_code(42);
    assert!(
        left.is_empty(),
        "{} storm processes outlived podinit: {:?}",
        left.len(),
        &left[..left.len().min(10)]
    );
    assert!(took < secs(20.0), "podinit took {took:?} after SIGTERM (grace period 20 s)\n{}", out.report());
}

#[test]
fn a_main_forking_ten_thousand_times_on_sigterm_leaves_nothing_as_pid1() {
    let td = TestDir::new();
    fork_storm_on_sigterm(&td, td.podinit());
}

#[test]
fn a_main_forking_ten_thousand_times_on_sigterm_leaves_nothing_as_subreaper() {
    let td = TestDir::new();
    fork_storm_on_sigterm(&td, td.podinit_not_pid1());
}

/// With the log reader stalled, podinit still exits inside a short grace
/// period: `docker stop -t 1` (or the kubelet) SIGKILLs it when the grace
/// period ends, and the main's status would be lost to that (137). The wait
/// for output still in the stalled pipes is cut to the end of the grace
/// period that the signal began (it was a fixed 2 s).
#[test]
fn a_stalled_log_reader_does_not_keep_podinit_past_a_short_grace_period() {
    let td = TestDir::new();
    td.write("chat.py", CHAT_PY);
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"1s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        "trap 'exit 7' TERM\n@PY@ \"@DIR@/chat.py\" 1 out &\necho \"start app\" >> \"@REC@\"\nwait",
        "",
    );
    let path = td.config(&cfg);
    let (_out_r, out_w) = pipe();
    let (_err_r, err_w) = pipe();
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(out_w).stderr(err_w);
    });
    run.wait_for_record_n("start app", 1, secs(10.0));
    // The writer has filled the pipe nobody reads once its count stops.
    let progress = td.file("out.progress");
    let mut last = (0, Instant::now());
    run.wait_until("the writer to block on the stalled pipe", secs(15.0), || {
        let n = counter(&progress);
        if n != last.0 || n == 0 {
            last = (n, Instant::now());
        }
        thread::sleep(Duration::from_millis(40));
        last.1.elapsed() >= secs(0.5)
    });
    let sent = Instant::now();
    run.signal(SIGTERM);
    let mut took = None;
    while took.is_none() {
        if !run.is_running() {
            took = Some(sent.elapsed());
        } else if sent.elapsed() > secs(10.0) {
            run.fail("podinit did not exit within 10 s of SIGTERM");
        } else {
            thread::sleep(Duration::from_millis(10));
        }
    }
    let exit = run.wait();
    let took = took.unwrap_or_default();
    assert_eq!(exit.code, Some(7), "{exit:?}");
    // The grace period is 1 s; what sent SIGTERM would SIGKILL podinit then.
    // 0.5 s of room for a loaded machine (it took 2.3 s with the fixed wait).
    assert!(took < secs(1.5), "podinit exited {took:?} after SIGTERM, past the 1 s grace period");
}
