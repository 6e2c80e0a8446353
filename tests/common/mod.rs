//! Test harness for podinit's integration tests.
//!
//! Every run of the real binary has a hard deadline: on timeout the whole
//! process tree is SIGKILLed and the test fails with the output captured so
//! far. PID-1 runs go through `unshare --pid --fork --mount-proc --kill-child`
//! (plus `--user --map-root-user` when not root), so podinit is PID 1 of a
//! fresh PID namespace and everything in it dies with it. unshare does not
//! forward signals, so `Running::signal` targets the inner podinit at its host
//! pid, read from `/proc/<unshare pid>/task/<unshare pid>/children`.
//!
//! Child processes of the pods are `/bin/sh -c` scripts that append short
//! lines (`start NAME`, `stop NAME`, ...) to one record file; tests assert the
//! order of events from that file. Config and script templates may use
//! `@DIR@` (the test's temp dir), `@REC@` (the record file) and `@PY@` (a
//! python3 interpreter); they are expanded before the file is written.
//!
//! Synchronisation is always on a file, a record line or an output line with a
//! deadline, never on a bare sleep; a bare sleep only lets time pass where a
//! test checks that nothing happens.
// The harness waits for the podinit it started: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![allow(dead_code)]

use std::ffi::OsString;
use std::fs;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

pub const SIGHUP: i32 = 1;
pub const SIGINT: i32 = 2;
pub const SIGQUIT: i32 = 3;
pub const SIGKILL: i32 = 9;
pub const SIGUSR1: i32 = 10;
pub const SIGUSR2: i32 = 12;
pub const SIGTERM: i32 = 15;
pub const SIGWINCH: i32 = 28;

/// Default hard deadline of one podinit run.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(20);

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
    fn geteuid() -> u32;
}

/// Sends `sig` to `pid`; returns false if the process does not exist.
pub fn send_signal(pid: i32, sig: i32) -> bool {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe { kill(pid, sig) == 0 }
}

pub fn is_root() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    unsafe { geteuid() == 0 }
}

/// The python3 interpreter used by probe servers (the distribution one when
/// present: the pyenv shim is a slow bash script).
pub fn python() -> &'static str {
    if Path::new("/usr/bin/python3").exists() {
        "/usr/bin/python3"
    } else {
        "python3"
    }
}

/// A TCP port that was free a moment ago on 127.0.0.1.
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    l.local_addr().unwrap().port()
}

/// Lines of `text` written by entry `name` in prefixed mode
/// (`^name\s*\| line$`), in order, without the prefix.
pub fn entry_lines(text: &str, name: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?;
            let rest = rest.trim_start_matches(' ');
            if rest == "|" {
                return Some(String::new());
            }
            rest.strip_prefix("| ").map(str::to_string)
        })
        .collect()
}

/// Position of the first element equal to `item`, panicking with the whole
/// list when absent.
pub fn pos(list: &[String], item: &str) -> usize {
    list.iter().position(|l| l == item).unwrap_or_else(|| panic!("record {item:?} missing from {list:#?}"))
}

pub fn count(list: &[String], item: &str) -> usize {
    list.iter().filter(|l| *l == item).count()
}

/// A shell script for a long-running entry that records `start NAME` once its
/// TERM trap is in place, and `stop NAME` when it gets SIGTERM (then exits 0).
pub fn sleeper(name: &str) -> String {
    format!(
        r#"trap 'echo "stop {name}" >> "@REC@"; exit 0' TERM
echo "start {name}" >> "@REC@"
while :; do sleep 0.1; done"#
    )
}

/// Shell snippet that waits (up to `secs`) until the record file holds at
/// least `n` lines equal to `line`.
pub fn sh_wait_records(line: &str, n: usize, secs: u32) -> String {
    format!(
        r#"i=0; while [ $i -lt {t} ]; do c=$(grep -cxF '{line}' "@REC@" 2>/dev/null); [ "${{c:-0}}" -ge {n} ] && break; sleep 0.02; i=$((i+1)); done"#,
        t = secs * 50
    )
}

/// One test's scratch directory: config, scripts, record file, markers.
pub struct TestDir {
    dir: tempfile::TempDir,
}

impl Default for TestDir {
    fn default() -> Self {
        Self::new()
    }
}

impl TestDir {
    pub fn new() -> Self {
        let dir = tempfile::Builder::new().prefix("podinit-test-").tempdir().expect("create temp dir");
        fs::write(dir.path().join("rec"), "").unwrap();
        TestDir { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn file(&self, name: &str) -> PathBuf {
        self.path().join(name)
    }

    pub fn rec(&self) -> PathBuf {
        self.file("rec")
    }

    /// Expands `@DIR@`, `@REC@` and `@PY@` in a template.
    pub fn expand(&self, s: &str) -> String {
        s.replace("@DIR@", self.path().to_str().unwrap())
            .replace("@REC@", self.rec().to_str().unwrap())
            .replace("@PY@", python())
    }

    /// Writes an expanded template to `name` in the test dir.
    pub fn write(&self, name: &str, content: &str) -> PathBuf {
        let p = self.file(name);
        fs::write(&p, self.expand(content)).unwrap();
        p
    }

    /// Writes the pod config (`pod.toml`), expanded.
    pub fn config(&self, toml: &str) -> PathBuf {
        self.write("pod.toml", toml)
    }

    /// The record file, one event per line.
    pub fn records(&self) -> Vec<String> {
        fs::read_to_string(self.rec())
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// A podinit run as PID 1 of a new PID namespace.
    pub fn podinit(&self) -> Launcher {
        Launcher::new(self, true)
    }

    /// A podinit run directly (not PID 1; it must act as child subreaper).
    pub fn podinit_not_pid1(&self) -> Launcher {
        Launcher::new(self, false)
    }
}

/// Builder of one podinit run.
pub struct Launcher {
    pid1: bool,
    /// The podinit binary; the one this `cargo test` built when `None`.
    bin: Option<PathBuf>,
    args: Vec<OsString>,
    env: Vec<(OsString, OsString)>,
    /// PODINIT_STATUS_SOCKET for a run with a config (`--config` or
    /// PODINIT_CONFIG), set before `env`.
    socket: OsString,
    deadline: Duration,
    dir: PathBuf,
    rec: PathBuf,
    stdin: Option<Vec<u8>>,
}

impl Launcher {
    fn new(td: &TestDir, pid1: bool) -> Self {
        Launcher {
            pid1,
            bin: None,
            args: Vec::new(),
            // A run with a config gets a status socket of its own; a plain
            // init (`-- cmd`) gets none unless the test names one, as a user's
            // plain init (it then runs on one thread, `runtime/plain.rs`).
            env: Vec::new(),
            socket: td.file("status.sock").into_os_string(),
            deadline: DEFAULT_DEADLINE,
            dir: td.path().to_path_buf(),
            rec: td.rec(),
            stdin: None,
        }
    }

    /// Runs this podinit binary instead of the one `cargo test` built (the
    /// static musl build, say).
    pub fn binary(mut self, path: &Path) -> Self {
        self.bin = Some(path.to_path_buf());
        self
    }

    pub fn arg(mut self, a: impl Into<OsString>) -> Self {
        self.args.push(a.into());
        self
    }

    pub fn args<I, S>(mut self, it: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(it.into_iter().map(Into::into));
        self
    }

    /// `--config PATH`.
    pub fn config(self, path: &Path) -> Self {
        self.arg("--config").arg(path)
    }

    pub fn env(mut self, k: impl Into<OsString>, v: impl Into<OsString>) -> Self {
        self.env.push((k.into(), v.into()));
        self
    }

    /// Feeds `data` to podinit's stdin, then closes it (default: /dev/null).
    pub fn stdin(mut self, data: &[u8]) -> Self {
        self.stdin = Some(data.to_vec());
        self
    }

    /// Hard deadline for the whole run, from spawn.
    pub fn deadline(mut self, d: Duration) -> Self {
        self.deadline = d;
        self
    }

    pub fn spawn(self) -> Running {
        let mut cmd = self.command();
        cmd.stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = cmd.spawn().expect("spawn podinit");
        let stdout = Stream::reader(child.stdout.take().unwrap());
        let stderr = Stream::reader(child.stderr.take().unwrap());
        if let (Some(data), Some(mut w)) = (self.stdin, child.stdin.take()) {
            thread::spawn(move || {
                use std::io::Write;
                let _ = w.write_all(&data);
            });
        }
        Running {
            child,
            pid1: self.pid1,
            stdout,
            stderr,
            start,
            deadline: start + self.deadline,
            rec: self.rec,
            status: None,
        }
    }

    /// Spawns and waits for the exit (hard deadline applies).
    pub fn run(self) -> Outcome {
        self.spawn().wait()
    }
}

struct Stream {
    buf: Mutex<Vec<u8>>,
    eof: AtomicBool,
}

impl Stream {
    fn reader(mut r: impl Read + Send + 'static) -> Arc<Stream> {
        let s = Arc::new(Stream { buf: Mutex::new(Vec::new()), eof: AtomicBool::new(false) });
        let s2 = Arc::clone(&s);
        thread::spawn(move || {
            let mut chunk = [0u8; 65536];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => s2.buf.lock().unwrap().extend_from_slice(&chunk[..n]),
                }
            }
            s2.eof.store(true, Ordering::SeqCst);
        });
        s
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf.lock().unwrap()).into_owned()
    }
}

/// `comm` from `/proc/PID/stat`.
pub fn comm(pid: i32) -> String {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    match (s.find('('), s.rfind(')')) {
        (Some(a), Some(b)) if a < b => s[a + 1..b].to_string(),
        _ => String::new(),
    }
}

/// Zombies among the descendants of `root` that are still zombies after
/// `grace` (a zombie is normal for the moment between a child's exit and its
/// parent's wait; one that stays is a leak). Each as (pid, ppid, comm).
pub fn lingering_zombies(root: i32, grace: Duration) -> Vec<(i32, i32, String)> {
    let zombies = |pids: &[i32]| -> Vec<(i32, i32)> {
        pids.iter()
            .filter_map(|p| match proc_state(*p) {
                Some(('Z', ppid)) => Some((*p, ppid)),
                _ => None,
            })
            .collect()
    };
    let mut left = zombies(&descendants(root));
    let until = Instant::now() + grace;
    while !left.is_empty() && Instant::now() < until {
        thread::sleep(Duration::from_millis(20));
        let pids: Vec<i32> = left.iter().map(|z| z.0).collect();
        // Same pid, still a zombie, same parent: the same zombie.
        let now = zombies(&pids);
        left.retain(|z| now.contains(z));
    }
    left.into_iter().map(|(p, pp)| (p, pp, comm(p))).collect()
}

/// Host pids of every descendant of `pid` (depth first, children before
/// grandchildren are collected, all are returned).
pub fn descendants(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    let mut todo = vec![pid];
    while let Some(p) = todo.pop() {
        for c in children(p) {
            out.push(c);
            todo.push(c);
        }
    }
    out
}

/// Direct children of `pid`, over all its threads.
pub fn children(pid: i32) -> Vec<i32> {
    let mut out = Vec::new();
    if let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) {
        for t in tasks.flatten() {
            if let Ok(s) = fs::read_to_string(t.path().join("children")) {
                out.extend(s.split_whitespace().filter_map(|x| x.parse::<i32>().ok()));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// (state, ppid) of a process from /proc/PID/stat, None if gone.
pub fn proc_state(pid: i32) -> Option<(char, i32)> {
    let s = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &s[s.rfind(')')? + 2..];
    let mut it = after.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((state, ppid))
}

/// A running podinit.
pub struct Running {
    child: Child,
    pid1: bool,
    stdout: Arc<Stream>,
    stderr: Arc<Stream>,
    start: Instant,
    deadline: Instant,
    rec: PathBuf,
    status: Option<ExitStatus>,
}

impl Running {
    pub fn stdout(&self) -> String {
        self.stdout.text()
    }

    pub fn stderr(&self) -> String {
        self.stderr.text()
    }

    fn records(&self) -> Vec<String> {
        fs::read_to_string(&self.rec)
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// Everything observed so far, for failure messages.
    pub fn report(&self) -> String {
        format!(
            "--- records ---\n{}\n--- stdout (tail) ---\n{}\n--- stderr (tail) ---\n{}",
            self.records().join("\n"),
            tail(&self.stdout(), 3000),
            tail(&self.stderr(), 3000)
        )
    }

    fn fail(&mut self, msg: &str) -> ! {
        self.kill_all();
        thread::sleep(Duration::from_millis(100));
        panic!("{msg}\n{}", self.report())
    }

    /// Host pid of podinit itself (inside unshare when PID 1).
    pub fn podinit_pid(&mut self) -> i32 {
        let (outer, pid1) = (self.child.id() as i32, self.pid1);
        match find_podinit_pid(outer, pid1, || self.exited().then(|| format!("{:?}", self.status))) {
            Ok(pid) => pid,
            Err(why) => self.fail(&why),
        }
    }

    /// Sends `sig` to podinit (the inner one when PID 1).
    pub fn signal(&mut self, sig: i32) {
        let pid = self.podinit_pid();
        if !send_signal(pid, sig) {
            self.fail(&format!("could not send signal {sig} to podinit (pid {pid})"));
        }
    }

    fn exited(&mut self) -> bool {
        if self.status.is_none() {
            if let Ok(Some(st)) = self.child.try_wait() {
                self.status = Some(st);
            }
        }
        self.status.is_some()
    }

    pub fn is_running(&mut self) -> bool {
        !self.exited()
    }

    fn check_deadline(&mut self, what: &str) {
        if Instant::now() > self.deadline {
            self.fail(&format!("hard deadline ({:?}) passed while {what}", self.deadline - self.start));
        }
    }

    /// Polls `cond` until it holds, `timeout` passes (test fails), or
    /// podinit exits before it holds (test fails).
    pub fn wait_until(&mut self, what: &str, timeout: Duration, mut cond: impl FnMut(&Self) -> bool) {
        let until = Instant::now() + timeout;
        loop {
            if cond(self) {
                return;
            }
            if self.exited() {
                // One last look: the condition may have become true just before exit.
                if cond(self) {
                    return;
                }
                let st = self.status;
                self.fail(&format!("podinit exited ({st:?}) while waiting for {what}"));
            }
            if Instant::now() > until {
                self.fail(&format!("timed out after {timeout:?} waiting for {what}"));
            }
            self.check_deadline(&format!("waiting for {what}"));
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the record file holds `line` (at least `n` times).
    pub fn wait_for_record_n(&mut self, line: &str, n: usize, timeout: Duration) {
        let what = format!("record {line:?} x{n}");
        self.wait_until(&what, timeout, |r| count(&r.records(), line) >= n);
    }

    pub fn wait_for_record(&mut self, line: &str, timeout: Duration) {
        self.wait_for_record_n(line, 1, timeout)
    }

    pub fn wait_for_file(&mut self, path: &Path, timeout: Duration) {
        let what = format!("file {}", path.display());
        let p = path.to_path_buf();
        self.wait_until(&what, timeout, move |_| p.exists());
    }

    /// Waits until podinit's stdout holds a line equal to `line`.
    pub fn wait_for_stdout_line(&mut self, line: &str, timeout: Duration) {
        let what = format!("stdout line {line:?}");
        self.wait_until(&what, timeout, |r| r.stdout().lines().any(|l| l == line));
    }

    /// Waits until podinit's stderr holds a line containing `needle`.
    pub fn wait_for_stderr_containing(&mut self, needle: &str, timeout: Duration) {
        let what = format!("stderr containing {needle:?}");
        self.wait_until(&what, timeout, |r| r.stderr().contains(needle));
    }

    /// SIGKILLs podinit and every descendant.
    fn kill_all(&mut self) {
        let outer = self.child.id() as i32;
        let all = descendants(outer);
        // Stop the supervisor first so nothing gets restarted meanwhile.
        for p in all.iter().rev() {
            send_signal(*p, SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in descendants(outer) {
            send_signal(p, SIGKILL);
        }
    }

    /// Waits for podinit to exit; past the hard deadline the whole tree is
    /// killed and the test fails with the output so far.
    pub fn wait(mut self) -> Outcome {
        while !self.exited() {
            if Instant::now() > self.deadline {
                self.fail(&format!(
                    "podinit did not exit within its hard deadline of {:?}",
                    self.deadline - self.start
                ));
            }
            thread::sleep(Duration::from_millis(5));
        }
        let ended = Instant::now();
        let status = self.status.unwrap();
        // Give the readers time to drain the pipes; a leftover process that
        // still holds them (only possible when not PID 1) must not hang us.
        let until = Instant::now() + Duration::from_secs(3);
        while !(self.stdout.eof.load(Ordering::SeqCst) && self.stderr.eof.load(Ordering::SeqCst))
            && Instant::now() < until
        {
            thread::sleep(Duration::from_millis(5));
        }
        let pipes_closed = self.stdout.eof.load(Ordering::SeqCst) && self.stderr.eof.load(Ordering::SeqCst);
        Outcome {
            code: status.code(),
            signal: status.signal(),
            stdout: self.stdout(),
            stderr: self.stderr(),
            records: self.records(),
            elapsed: ended - self.start,
            ended,
            pipes_closed,
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.exited() {
            self.kill_all();
        }
    }
}

/// How a podinit run ended and what it wrote.
#[derive(Debug)]
pub struct Outcome {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub records: Vec<String>,
    /// From spawn to exit.
    pub elapsed: Duration,
    /// When the exit was seen.
    pub ended: Instant,
    /// Both of podinit's output pipes reached EOF after its exit.
    pub pipes_closed: bool,
}

impl Outcome {
    pub fn report(&self) -> String {
        format!(
            "exit code {:?}, signal {:?}, after {:?}\n--- records ---\n{}\n--- stdout (tail) ---\n{}\n--- stderr (tail) ---\n{}",
            self.code,
            self.signal,
            self.elapsed,
            self.records.join("\n"),
            tail(&self.stdout, 3000),
            tail(&self.stderr, 3000)
        )
    }

    /// Asserts podinit exited with `code`.
    #[track_caller]
    pub fn assert_code(&self, code: i32) {
        assert_eq!(self.code, Some(code), "expected podinit to exit with status {code}\n{}", self.report());
    }

    pub fn stdout_of(&self, name: &str) -> Vec<String> {
        entry_lines(&self.stdout, name)
    }

    pub fn stderr_of(&self, name: &str) -> Vec<String> {
        entry_lines(&self.stderr, name)
    }
}

/// The last `n` bytes of `s` (at a char boundary).
pub fn tail(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut i = s.len() - n;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

pub fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

/// Like [`sleeper`], and also creates `@DIR@/NAME.up` right after recording
/// its start, for a startup probe ([`up_probe`]) to wait on.
pub fn sleeper_up(name: &str) -> String {
    format!(
        r#"trap 'echo "stop {name}" >> "@REC@"; exit 0' TERM
echo "start {name}" >> "@REC@"
touch "@DIR@/{name}.up"
while :; do sleep 0.1; done"#
    )
}

/// A startup probe line that passes once `@DIR@/NAME.up` exists.
pub fn up_probe(name: &str) -> String {
    format!(
        r#"startup_probe = {{ exec = {{ command = ["test", "-f", "@DIR@/{name}.up"] }}, period = "50ms", failure_threshold = 400 }}"#
    )
}

/// One `[[process]]` table whose command is a shell script (a TOML
/// multi-line literal string, run by /bin/sh -c), plus extra TOML lines.
pub fn entry(name: &str, role: &str, script: &str, extra: &str) -> String {
    format!("[[process]]\nname = \"{name}\"\nrole = \"{role}\"\ncommand = '''\n{script}\n'''\n{extra}\n\n")
}

// ----- podinit with descriptors wired by the test (a file, a pipe it does not
// read, a pseudo-terminal): output_volume.rs, terminal.rs -----

impl Launcher {
    /// The command [`Launcher::spawn`] would run (unshare when PID 1, args,
    /// env, working directory); stdio is left to the caller.
    pub fn command(&self) -> Command {
        self.command_behind(&[])
    }

    /// The command that runs podinit behind `wrapper` (a program that then
    /// execs its arguments; none when empty), inside unshare when PID 1.
    fn command_behind(&self, wrapper: &[&str]) -> Command {
        let mut argv: Vec<&std::ffi::OsStr> = Vec::new();
        if self.pid1 {
            argv.push("unshare".as_ref());
            if !is_root() {
                argv.extend(["--user", "--map-root-user"].map(std::ffi::OsStr::new));
            }
            argv.extend(["--pid", "--fork", "--mount-proc", "--kill-child", "--"].map(std::ffi::OsStr::new));
        }
        argv.extend(wrapper.iter().map(std::ffi::OsStr::new));
        // PODINIT_TEST_BIN runs the suite against another build (the aarch64
        // one), through PODINIT_TEST_RUNNER when set (qemu-aarch64-static).
        let other = std::env::var_os("PODINIT_TEST_BIN").filter(|b| !b.is_empty());
        let runner = std::env::var_os("PODINIT_TEST_RUNNER").filter(|r| !r.is_empty());
        let runner_ref = runner.as_deref();
        if let (Some(r), None) = (runner_ref, &self.bin) {
            argv.push(r);
        }
        argv.push(match (&self.bin, &other) {
            (Some(b), _) => b.as_os_str(),
            (None, Some(o)) => o.as_os_str(),
            (None, None) => env!("CARGO_BIN_EXE_podinit").as_ref(),
        });
        let mut cmd = Command::new(argv[0]);
        cmd.args(&argv[1..])
            .args(&self.args)
            .env_remove("PODINIT_CONFIG")
            .env_remove("PODINIT_STATUS_SOCKET");
        if self.args.iter().any(|a| a == "--config") || self.env.iter().any(|(k, _)| k == "PODINIT_CONFIG") {
            cmd.env("PODINIT_STATUS_SOCKET", &self.socket);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (k, v))).current_dir(&self.dir);
        cmd
    }

    /// Spawns [`Launcher::command`] after `setup` has set its stdio (and
    /// whatever else), under the same hard deadline.
    pub fn spawn_custom(self, setup: impl FnOnce(&mut Command)) -> Bare {
        let mut cmd = self.command();
        setup(&mut cmd);
        let start = Instant::now();
        let child = cmd.spawn().expect("spawn podinit");
        Bare {
            child,
            pid1: self.pid1,
            start,
            deadline: start + self.deadline,
            rec: self.rec,
            logs: Vec::new(),
            status: None,
        }
    }
}

/// A running podinit whose descriptors the test wired itself.
pub struct Bare {
    child: Child,
    pid1: bool,
    start: Instant,
    deadline: Instant,
    rec: PathBuf,
    logs: Vec<PathBuf>,
    status: Option<ExitStatus>,
}

/// How a [`Bare`] run ended.
#[derive(Debug, Clone, Copy)]
pub struct BareExit {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// From spawn to exit.
    pub elapsed: Duration,
}

impl Bare {
    /// Files (podinit's stderr...) whose tails go into failure messages.
    pub fn log(mut self, path: &Path) -> Self {
        self.logs.push(path.to_path_buf());
        self
    }

    pub fn records(&self) -> Vec<String> {
        fs::read_to_string(&self.rec)
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    pub fn report(&self) -> String {
        let mut s = format!("--- records ---\n{}", self.records().join("\n"));
        for p in &self.logs {
            let text = String::from_utf8_lossy(&fs::read(p).unwrap_or_default()).into_owned();
            s += &format!("\n--- {} (tail) ---\n{}", p.display(), tail(&text, 3000));
        }
        s
    }

    /// Kills the whole tree and fails the test with `msg` and the report.
    pub fn fail(&mut self, msg: &str) -> ! {
        self.kill_all();
        thread::sleep(Duration::from_millis(100));
        panic!("{msg}\n{}", self.report())
    }

    fn kill_all(&mut self) {
        let outer = self.child.id() as i32;
        for p in descendants(outer).iter().rev() {
            send_signal(*p, SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        for p in descendants(outer) {
            send_signal(p, SIGKILL);
        }
    }

    fn exited(&mut self) -> bool {
        if self.status.is_none() {
            if let Ok(Some(st)) = self.child.try_wait() {
                self.status = Some(st);
            }
        }
        self.status.is_some()
    }

    pub fn is_running(&mut self) -> bool {
        !self.exited()
    }

    /// Host pid of podinit itself (inside unshare when PID 1).
    pub fn podinit_pid(&mut self) -> i32 {
        let (outer, pid1) = (self.child.id() as i32, self.pid1);
        match find_podinit_pid(outer, pid1, || self.exited().then(|| format!("{:?}", self.status))) {
            Ok(pid) => pid,
            Err(why) => self.fail(&why),
        }
    }

    /// Sends `sig` to podinit (the inner one when PID 1).
    pub fn signal(&mut self, sig: i32) {
        let pid = self.podinit_pid();
        if !send_signal(pid, sig) {
            self.fail(&format!("could not send signal {sig} to podinit (pid {pid})"));
        }
    }

    /// Polls `cond` until it holds; fails on `timeout`, on the hard deadline,
    /// or when podinit exits before it holds.
    pub fn wait_until(&mut self, what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
        let until = Instant::now() + timeout;
        loop {
            if cond() {
                return;
            }
            if self.exited() {
                if cond() {
                    return;
                }
                let st = self.status;
                self.fail(&format!("podinit exited ({st:?}) while waiting for {what}"));
            }
            if Instant::now() > until {
                self.fail(&format!("timed out after {timeout:?} waiting for {what}"));
            }
            if Instant::now() > self.deadline {
                self.fail(&format!("hard deadline passed while waiting for {what}"));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits until the record file holds `line` (at least `n` times).
    pub fn wait_for_record_n(&mut self, line: &str, n: usize, timeout: Duration) {
        let rec = self.rec.clone();
        let what = format!("record {line:?} x{n}");
        self.wait_until(&what, timeout, || {
            let text = fs::read_to_string(&rec).unwrap_or_default();
            text.lines().filter(|l| l.trim() == line).count() >= n
        });
    }

    /// Waits for podinit to exit; past the hard deadline the whole tree is
    /// killed and the test fails.
    pub fn wait(mut self) -> BareExit {
        while !self.exited() {
            if Instant::now() > self.deadline {
                let d = self.deadline - self.start;
                self.fail(&format!("podinit did not exit within its hard deadline of {d:?}"));
            }
            thread::sleep(Duration::from_millis(5));
        }
        let status = self.status.unwrap();
        BareExit { code: status.code(), signal: status.signal(), elapsed: self.start.elapsed() }
    }
}

impl Drop for Bare {
    fn drop(&mut self) {
        if !self.exited() {
            self.kill_all();
        }
    }
}

// ----- podinit behind a wrapper program, and short-lived helper commands:
// faults.rs, bug_reports.rs -----

impl Launcher {
    /// Like [`Launcher::spawn_custom`], with `wrapper` (a program and its
    /// arguments) between unshare and podinit: `unshare ... -- WRAPPER...
    /// podinit ARGS` when PID 1, `WRAPPER... podinit ARGS` when not. The
    /// wrapper must exec podinit (`sh -c '...; exec "$@"' sh`, `setpriv ...`),
    /// so that podinit keeps its place (PID 1) and `Bare::signal` reaches it.
    pub fn spawn_wrapped(self, wrapper: &[&str], setup: impl FnOnce(&mut Command)) -> Bare {
        let mut cmd = self.command_behind(wrapper);
        setup(&mut cmd);
        let start = Instant::now();
        let child = cmd.spawn().expect("spawn podinit behind its wrapper");
        Bare {
            child,
            pid1: self.pid1,
            start,
            deadline: start + self.deadline,
            rec: self.rec,
            logs: Vec::new(),
            status: None,
        }
    }
}

/// How a helper command run by [`run_with_deadline`] ended.
#[derive(Debug)]
pub struct CmdOut {
    /// None when it was killed at its deadline (or by a signal).
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
    pub timed_out: bool,
}

/// Runs `cmd` (stdin /dev/null, output captured), SIGKILLing it once `timeout`
/// has passed.
pub fn run_with_deadline(cmd: &mut Command, timeout: Duration) -> CmdOut {
    let t0 = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
    let stdout = Stream::reader(child.stdout.take().unwrap());
    let stderr = Stream::reader(child.stderr.take().unwrap());
    let mut timed_out = false;
    let status = loop {
        if let Ok(Some(st)) = child.try_wait() {
            break st;
        }
        if t0.elapsed() > timeout {
            timed_out = true;
            let _ = child.kill();
            break child.wait().expect("wait for a killed helper");
        }
        thread::sleep(Duration::from_millis(5));
    };
    let took = t0.elapsed();
    let until = Instant::now() + Duration::from_secs(1);
    while !(stdout.eof.load(Ordering::SeqCst) && stderr.eof.load(Ordering::SeqCst)) && Instant::now() < until
    {
        thread::sleep(Duration::from_millis(2));
    }
    CmdOut { code: status.code(), stdout: stdout.text(), stderr: stderr.text(), took, timed_out }
}

/// The static musl build of podinit, as `.ci/run` builds it before the tests
/// (`cargo build --release --target x86_64-unknown-linux-musl`), or the binary
/// named by `PODINIT_MUSL_BIN`. The tests that use it are `#[ignore]`d, so a
/// plain `cargo test` lists them as ignored; run with `--include-ignored`
/// (as `.ci/run` does), they fail when it is missing.
pub fn musl_binary() -> PathBuf {
    let path = std::env::var_os("PODINIT_MUSL_BIN").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("target/x86_64-unknown-linux-musl/release/podinit")
    });
    assert!(
        path.is_file(),
        "the musl build {} is missing: run `cargo build --release --target x86_64-unknown-linux-musl` first",
        path.display()
    );
    path
}

/// The host pid of podinit: `outer` itself, or, when podinit runs as PID 1
/// under unshare, unshare's only child. `gone` says (with the status) when the
/// process has exited; gives up after 5 s.
fn find_podinit_pid(outer: i32, pid1: bool, mut gone: impl FnMut() -> Option<String>) -> Result<i32, String> {
    if !pid1 {
        return Ok(outer);
    }
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(p) = children(outer).first() {
            return Ok(*p);
        }
        if let Some(status) = gone() {
            return Err(format!("podinit already exited ({status}): no pid to signal"));
        }
        if Instant::now() > until {
            return Err("could not find the inner podinit's host pid".into());
        }
        thread::sleep(Duration::from_millis(5));
    }
}

// ----- pipes wired by the test and podinit's memory: output_volume.rs,
// container_faults.rs -----

/// A pipe (read end, write end), both close-on-exec in the test process.
pub fn pipe() -> (fs::File, std::os::fd::OwnedFd) {
    use std::os::fd::FromRawFd;
    let mut fds = [0i32; 2];
    // SAFETY: pipe2 writes two descriptors into the array we own.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just created and are owned by nobody else.
    unsafe { (fs::File::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1])) }
}

/// A `/proc/PID/status` field in KiB (`VmHWM`, `VmRSS`), None once gone.
pub fn vm_kib(pid: i32, key: &str) -> Option<u64> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with(key) && l[key.len()..].starts_with(':'))?;
    line[key.len() + 1..].trim().trim_end_matches("kB").trim().parse().ok()
}
