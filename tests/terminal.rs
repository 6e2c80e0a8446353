//! PID-1 duties (README) terminal: when podinit's stdin is a terminal, the first
//! main runs in the terminal's foreground process group with the terminal as
//! stdin/stdout/stderr (unprefixed); Ctrl-C reaches it as it would without
//! podinit; sidecars stay prefixed; podinit itself is never stopped for writing
//! to the terminal while the main owns it.
//!
//! A real pseudo-terminal from openpty(3) (libc): the slave is podinit's
//! stdin, stdout and stderr and its controlling terminal (setsid + TIOCSCTTY
//! before exec), the test reads and types on the master. podinit runs as PID 1
//! of a PID namespace, as everywhere else: `unshare --fork` is the session
//! leader holding the terminal and podinit, its child, stays in that session,
//! so the terminal works there unchanged. As under `docker run -it` (where
//! podinit leads the session and its parent is outside it), podinit's process
//! group is orphaned: a background write with TOSTOP set fails with EIO unless
//! SIGTTOU is ignored (otherwise it would stop podinit); the SIGTTOU test
//! catches either way.

mod common;
use common::*;
use std::fs::{self, File};
use std::io::{Read, Write};
use std::os::fd::FromRawFd;
use std::os::unix::process::CommandExt;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The master side of a pseudo-terminal, with everything read from it so far.
struct Pty {
    master: File,
    seen: Arc<Mutex<Vec<u8>>>,
    /// The reader has seen the end: every slave descriptor is closed.
    closed: Arc<AtomicBool>,
}

impl Pty {
    /// Opens a pty (TOSTOP set on it when `tostop`); returns it and the slave.
    fn open(tostop: bool) -> (Pty, File) {
        let (mut m, mut s) = (-1, -1);
        let ws = libc::winsize { ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0 };
        // SAFETY: openpty writes two descriptors into our integers; the other
        // pointers are null (no name, default termios) or point to `ws`.
        let rc = unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), &ws) };
        assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
        // SAFETY: fcntl and tc{get,set}attr on descriptors we own, with a
        // termios struct we own.
        unsafe {
            libc::fcntl(m, libc::F_SETFD, libc::FD_CLOEXEC);
            libc::fcntl(s, libc::F_SETFD, libc::FD_CLOEXEC);
            if tostop {
                let mut t: libc::termios = std::mem::zeroed();
                assert_eq!(libc::tcgetattr(s, &mut t), 0);
                t.c_lflag |= libc::TOSTOP;
                assert_eq!(libc::tcsetattr(s, libc::TCSANOW, &t), 0);
            }
        }
        // SAFETY: both descriptors were just created and are owned by nobody else.
        let (master, slave) = unsafe { (File::from_raw_fd(m), File::from_raw_fd(s)) };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let closed = Arc::new(AtomicBool::new(false));
        let (mut r, seen2, closed2) = (master.try_clone().unwrap(), Arc::clone(&seen), Arc::clone(&closed));
        thread::spawn(move || {
            let mut buf = [0u8; 4096];
            // EIO once every slave descriptor is closed.
            while let Ok(n) = r.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen2.lock().unwrap().extend_from_slice(&buf[..n]);
            }
            closed2.store(true, Ordering::SeqCst);
        });
        (Pty { master, seen, closed }, slave)
    }

    /// Waits (5 s at most) until the reader has read everything written to
    /// the terminal: podinit's exit does not mean that this test's reader
    /// thread has taken its last lines off the pty yet.
    fn drain(&self) {
        let until = Instant::now() + Duration::from_secs(5);
        while !self.closed.load(Ordering::SeqCst) && Instant::now() < until {
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// What the terminal showed so far, `\r` removed.
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).replace('\r', "")
    }

    fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_string).collect()
    }

    fn type_bytes(&mut self, b: &[u8]) {
        self.master.write_all(b).unwrap();
    }
}

/// Spawns podinit (PID 1 of a PID namespace) on the pty's slave as its
/// controlling terminal.
fn spawn_on(l: Launcher, slave: File) -> Bare {
    l.spawn_custom(move |c| {
        c.stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave));
        // SAFETY: setsid and ioctl are async-signal-safe raw system calls.
        unsafe {
            c.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    })
}

/// The descendant of `root` whose command line is `argv` (NUL-separated).
fn find_process(root: i32, argv: &[&str]) -> Option<i32> {
    let want: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    descendants(root).into_iter().find(|p| fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c == want))
}

/// (pgrp, tpgid, state) of a process from /proc/PID/stat (host pids).
fn pgrp_tpgid_state(pid: i32) -> Option<(i32, i32, char)> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let f: Vec<&str> = s[s.rfind(')')? + 2..].split_whitespace().collect();
    Some((f[2].parse().ok()?, f[5].parse().ok()?, f[0].chars().next()?))
}

/// Waits until the process running `argv` exists and its process group is the
/// terminal's foreground group; returns its pid.
fn wait_foreground(run: &mut Bare, root: i32, argv: &[&str]) -> i32 {
    let mut found = None;
    run.wait_until(&format!("{argv:?} to own the terminal's foreground"), secs(10.0), || {
        found = find_process(root, argv)
            .filter(|&p| pgrp_tpgid_state(p).is_some_and(|(g, t, _)| g == t && g > 0));
        found.is_some()
    });
    found.unwrap()
}

/// The main sees the terminal on stdin, stdout and stderr, owns the foreground
/// (it reads what is typed), and writes unprefixed; a sidecar's stdout is a
/// pipe and its lines stay prefixed.
#[test]
fn the_main_gets_the_terminal_and_sidecars_stay_prefixed() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "if test -t 1; then echo 'side stdout tty' >> \"@REC@\"; else echo 'side stdout notty' >> \"@REC@\"; fi\n\
         echo side-hello\ntouch \"@DIR@/side.up\"\nexec sleep 60",
        &up_probe("side"),
    );
    cfg += &entry(
        "app",
        "main",
        "if test -t 0 && test -t 1 && test -t 2; then echo main-tty-yes; else echo main-tty-no; fi\n\
         echo main-err-line >&2\necho 'app checked' >> \"@REC@\"\n\
         read -r line; echo \"app read $line\" >> \"@REC@\"\nexit 0",
        "",
    );
    let path = td.config(&cfg);
    let (mut pty, slave) = Pty::open(false);
    let mut run = spawn_on(td.podinit().config(&path).deadline(secs(15.0)), slave);
    let pid = run.podinit_pid();
    run.wait_for_record_n("app checked", 1, secs(10.0));
    // The main's shell, blocked in `read`, is the terminal's foreground group.
    let mut fg = None;
    run.wait_until("the main to own the terminal's foreground", secs(5.0), || {
        fg = descendants(pid).into_iter().find(|p| {
            fs::read(format!("/proc/{p}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains("main-tty-yes"))
                && pgrp_tpgid_state(*p).is_some_and(|(g, t, _)| g == t)
        });
        fg.is_some()
    });
    pty.type_bytes(b"typed-line\n");
    run.wait_for_record_n("app read typed-line", 1, secs(5.0));
    let exit = run.wait();
    pty.drain();
    let lines = pty.lines();
    let shown = pty.text();
    assert_eq!(exit.code, Some(0), "{exit:?}\n--- terminal ---\n{}", tail(&shown, 3000));
    assert!(lines.iter().any(|l| l == "main-tty-yes"), "main did not see a terminal on 0, 1 and 2:\n{shown}");
    assert!(
        lines.iter().any(|l| l == "main-err-line"),
        "main's stderr not unprefixed on the terminal:\n{shown}"
    );
    assert!(lines.iter().any(|l| l == "side | side-hello"), "sidecar line not prefixed:\n{shown}");
    let recs = td.records();
    assert!(recs.contains(&"side stdout notty".to_string()), "sidecar's stdout is the terminal: {recs:?}");
}

/// Ctrl-C (0x03 typed on the terminal) kills a `sleep 30` main with SIGINT as
/// it would without podinit; podinit exits with the main's status (130) at
/// once, after stopping the sidecar with SIGTERM (the sidecar, in the
/// background, never sees the SIGINT).
#[test]
fn ctrl_c_stops_the_main_and_podinit_exits_with_its_status() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper_up("side"), &up_probe("side"));
    cfg += &entry("app", "main", "echo 'start app' >> \"@REC@\"\nexec sleep 30", "");
    let path = td.config(&cfg);
    let (mut pty, slave) = Pty::open(false);
    let mut run = spawn_on(td.podinit().config(&path).deadline(secs(20.0)), slave);
    let pid = run.podinit_pid();
    wait_foreground(&mut run, pid, &["sleep", "30"]);
    let typed = Instant::now();
    pty.type_bytes(&[0x03]);
    let exit = run.wait();
    let after = typed.elapsed();
    pty.drain();
    let recs = td.records();
    let shown = pty.text();
    assert_eq!(
        (exit.code, exit.signal),
        (Some(130), None),
        "podinit after Ctrl-C: {exit:?} ({after:?} after the 0x03)\n--- records ---\n{recs:?}\n--- terminal ---\n{}",
        tail(&shown, 3000)
    );
    assert!(after < secs(6.0), "podinit took {after:?} to exit after Ctrl-C\n{shown}");
    assert!(recs.contains(&"stop side".to_string()), "sidecar not stopped with SIGTERM: {recs:?}\n{shown}");
}

/// With TOSTOP on the terminal and the main in the foreground, podinit keeps
/// writing the sidecar's lines and its own messages to the terminal: it is not
/// stopped by SIGTTOU (and its writes do not fail).
#[test]
fn podinit_is_not_stopped_by_sigttou_while_the_main_owns_the_terminal() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "trap 'exit 0' TERM\ntouch \"@DIR@/side.up\"\ni=0; while :; do echo \"tick $i\"; i=$((i+1)); sleep 0.05; done",
        &up_probe("side"),
    );
    cfg += &entry("app", "main", "exec sleep 30", "");
    let path = td.config(&cfg);
    let (mut pty, slave) = Pty::open(true);
    let mut run =
        spawn_on(td.podinit().config(&path).env("PODINIT_LOG", "debug").deadline(secs(20.0)), slave);
    let pid = run.podinit_pid();
    wait_foreground(&mut run, pid, &["sleep", "30"]);
    let ticks = |p: &Pty| p.lines().iter().filter(|l| l.starts_with("side | tick ")).count();
    let before = ticks(&pty);
    let until = Instant::now() + secs(5.0);
    while ticks(&pty) < before + 10 {
        if Instant::now() > until {
            let st = pgrp_tpgid_state(pid);
            run.fail(&format!(
                "sidecar lines stopped reaching the terminal once the main owned it ({} before, {} after 5 s); podinit (pgrp, tpgid, state) = {st:?}\n--- terminal ---\n{}",
                before,
                ticks(&pty),
                tail(&pty.text(), 2000)
            ));
        }
        thread::sleep(Duration::from_millis(20));
    }
    let st = pgrp_tpgid_state(pid).map(|(_, _, s)| s);
    assert!(st.is_some_and(|s| s != 'T' && s != 't'), "podinit state {st:?}");
    let mark = pty.text().len();
    pty.type_bytes(&[0x03]);
    let exit = run.wait();
    pty.drain();
    let shown = pty.text();
    assert_eq!(exit.code, Some(130), "{exit:?}\n--- terminal ---\n{}", tail(&shown, 3000));
    // podinit's own messages after the main died (it is in the background).
    let later = &shown[mark.min(shown.len())..];
    assert!(
        later.lines().any(|l| l.starts_with("podinit | ") && l.contains("exited")),
        "no podinit message about the main's exit on the terminal after Ctrl-C:\n{later}"
    );
}
