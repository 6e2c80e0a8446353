//! podinit as a container's ENTRYPOINT on the real Docker engine of this
//! machine: exit statuses through `docker run`, the ordered shutdown of
//! `docker stop`, `docker kill -s HUP`, `docker run -it` with Ctrl-C, podinit
//! under Docker's own init (`--init`), a `--read-only --user 1000:1000`
//! container with `podinit status` over `docker exec`, a `HEALTHCHECK` through
//! the HTTP endpoint's `/readyz`, the podinit image's own command line
//! (`--version`, `check`, `--help`), and the Compose stack of
//! `examples/docker` ending with the job's exit status.
//!
//! The engine has no registry and no images, so every image is built here
//! `FROM scratch` from the static binary (`cargo build --release --target
//! x86_64-unknown-linux-musl`, run once per test process) and Debian's
//! busybox-static (`/bin/busybox`). Each test tags its images and names its
//! containers with its own unique prefix and removes them in a guard's `Drop`,
//! so a failing test leaves nothing behind; every docker command has a hard
//! timeout and is killed with its process group past it.
//!
//! Children record events (`start NAME`, `stop NAME`, ...) in a file on a bind
//! mount; tests take the order of events from it, and check the container's
//! logs for every line written. They synchronise on those records and on log
//! lines, never on a bare sleep.
//!
//! Every test here is `#[ignore]`d, so a plain `cargo test` lists them as
//! ignored in its summary; `cargo test -- --include-ignored` (what `.ci/run`
//! runs) runs them, and then a missing engine fails them with a message that
//! says so.

// The harness waits for the docker commands it starts: it is not podinit, so
// the one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::{symlink, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// Debian busybox-static's binary, copied into every test image.
const BUSYBOX: &str = "/bin/busybox";
const MUSL_TARGET: &str = "x86_64-unknown-linux-musl";
/// Label on every container and image a test makes (value: its scope id), so
/// that leftovers of a killed test run can be found:
/// `docker ps -aq --filter label=podinit-test`.
const LABEL: &str = "podinit-test";

/// Hard timeouts of docker commands.
const QUICK: Duration = Duration::from_secs(30);
const BUILD: Duration = Duration::from_secs(180);
const COMPOSE_UP: Duration = Duration::from_secs(300);

extern "C" {
    fn kill(pid: i32, sig: i32) -> i32;
}
const SIGKILL: i32 = 9;

fn secs(s: f64) -> Duration {
    Duration::from_secs_f64(s)
}

// ---------------------------------------------------------------------------
// Running commands with a hard timeout.

/// What a finished command left.
#[derive(Debug)]
struct Out {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Out {
    fn report(&self) -> String {
        format!(
            "exit {:?} after {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code,
            self.elapsed,
            tail(&self.stdout, 4000),
            tail(&self.stderr, 4000)
        )
    }
}

fn tail(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut i = s.len() - n;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    &s[i..]
}

/// A pipe read to its end by a thread, readable meanwhile.
#[derive(Clone)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    fn start(mut r: impl Read + Send + 'static) -> (Captured, thread::JoinHandle<()>) {
        let c = Captured(Arc::new(Mutex::new(Vec::new())));
        let c2 = c.clone();
        let h = thread::spawn(move || {
            let mut chunk = [0u8; 16384];
            while let Ok(n) = r.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                c2.0.lock().unwrap().extend_from_slice(&chunk[..n]);
            }
        });
        (c, h)
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

/// A started command in its own process group, killed with the whole group
/// when dropped unfinished.
struct Proc {
    child: Child,
    what: String,
    stdout: Captured,
    stderr: Captured,
    readers: Vec<thread::JoinHandle<()>>,
    start: Instant,
}

impl Proc {
    fn spawn(mut cmd: Command, stdin: Stdio) -> Result<Proc, String> {
        let what = format!("{cmd:?}");
        cmd.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped()).process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn().map_err(|e| format!("cannot run {what}: {e}"))?;
        let (stdout, h1) = Captured::start(child.stdout.take().unwrap());
        let (stderr, h2) = Captured::start(child.stderr.take().unwrap());
        Ok(Proc { child, what, stdout, stderr, readers: vec![h1, h2], start })
    }

    fn kill_group(&mut self) {
        // SAFETY: kill(2) has no memory-safety preconditions; the negative pid
        // is the process group this command leads (process_group(0)).
        unsafe { kill(-(self.child.id() as i32), SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Waits for the exit; past `timeout` kills the group and returns Err.
    fn finish(mut self, timeout: Duration) -> Result<Out, String> {
        let until = self.start + timeout;
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(st)) => break st,
                Ok(None) => {}
                Err(e) => return Err(format!("{}: wait: {e}", self.what)),
            }
            if Instant::now() > until {
                self.kill_group();
                thread::sleep(Duration::from_millis(100));
                return Err(format!(
                    "{} did not finish within its hard timeout of {timeout:?} (killed)\n--- stdout ---\n{}\n--- stderr ---\n{}",
                    self.what,
                    tail(&self.stdout.text(), 4000),
                    tail(&self.stderr.text(), 4000)
                ));
            }
            thread::sleep(Duration::from_millis(10));
        };
        let elapsed = self.start.elapsed();
        // A grandchild (the docker CLI under `script`) may still hold a pipe:
        // wait a moment for the readers, never forever.
        let readers_until = Instant::now() + Duration::from_secs(3);
        while self.readers.iter().any(|h| !h.is_finished()) && Instant::now() < readers_until {
            thread::sleep(Duration::from_millis(10));
        }
        Ok(Out { code: status.code(), stdout: self.stdout.text(), stderr: self.stderr.text(), elapsed })
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill_group();
        }
    }
}

/// Runs a command to its end; Err on a timeout or when it cannot start.
fn try_run(cmd: Command, timeout: Duration) -> Result<Out, String> {
    Proc::spawn(cmd, Stdio::null())?.finish(timeout)
}

/// Runs a command to its end; the test fails past the timeout.
#[track_caller]
fn run(cmd: Command, timeout: Duration) -> Out {
    try_run(cmd, timeout).unwrap_or_else(|e| panic!("{e}"))
}

fn docker_cmd<I, S>(args: I) -> Command
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut c = Command::new("docker");
    c.args(args);
    c
}

/// `docker ARGS...`, which must exit 0.
#[track_caller]
fn docker_ok(args: &[&str], timeout: Duration) -> Out {
    let out = run(docker_cmd(args), timeout);
    assert_eq!(out.code, Some(0), "docker {} failed\n{}", args.join(" "), out.report());
    out
}

// ---------------------------------------------------------------------------
// The engine, the binary, Compose: found once per test process.

/// `Ok(server version)` when the engine answers.
fn engine() -> &'static Result<String, String> {
    static ENGINE: OnceLock<Result<String, String>> = OnceLock::new();
    ENGINE.get_or_init(|| match try_run(docker_cmd(["version", "--format", "{{.Server.Version}}"]), QUICK) {
        Ok(out) if out.code == Some(0) && !out.stdout.trim().is_empty() => Ok(out.stdout.trim().to_owned()),
        Ok(out) => {
            let why = out.stderr.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no answer");
            Err(format!("`docker version` did not reach the engine: {why}"))
        }
        Err(e) => Err(e.lines().next().unwrap_or_default().to_owned()),
    })
}

/// Prints a line that shows in `cargo test` output even when the test
/// passes (the harness captures `eprintln!`, not stderr itself).
fn loud(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// A test's scope; the test fails when no engine answers.
fn scope(test: &str) -> Scope {
    match engine() {
        Ok(_) => Scope::new(test),
        Err(why) => panic!(
            "Docker engine not available: the docker tests need one (`docker version` must reach the \
             server).\n{why}"
        ),
    }
}

/// The static release binary the test images get: the one `.ci/run` builds
/// before the tests (`cargo build --release --target x86_64-unknown-linux-musl`),
/// or `PODINIT_MUSL_BIN`. Built once, outside the tests: a cargo build run from
/// inside `cargo test` inherits its environment and is never a no-op.
fn podinit_static() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        let path = std::env::var_os("PODINIT_MUSL_BIN").map(PathBuf::from).unwrap_or_else(|| {
            let target_dir = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"));
            target_dir.join(MUSL_TARGET).join("release/podinit")
        });
        assert!(
            path.is_file(),
            "{} is missing: build it first with `cargo build --release --target {MUSL_TARGET}`",
            path.display()
        );
        path
    })
}

fn busybox() -> &'static Path {
    let p = Path::new(BUSYBOX);
    assert!(p.is_file(), "{BUSYBOX} missing: install Debian's busybox-static (the test images' userland)");
    p
}

/// busybox's applet names, for the /bin symlinks of the test images.
fn applets() -> &'static [String] {
    static APPLETS: OnceLock<Vec<String>> = OnceLock::new();
    APPLETS.get_or_init(|| {
        let mut c = Command::new(busybox());
        c.arg("--list");
        let out = run(c, QUICK);
        assert_eq!(out.code, Some(0), "busybox --list\n{}", out.report());
        out.stdout
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.contains('/'))
            .map(String::from)
            .collect()
    })
}

/// `docker compose` (v2) when present, else `docker-compose` (v1).
fn compose_cmd() -> &'static [&'static str] {
    static COMPOSE: OnceLock<Option<&'static [&'static str]>> = OnceLock::new();
    let found = COMPOSE.get_or_init(|| {
        let candidates: [&'static [&'static str]; 2] = [&["docker", "compose"], &["docker-compose"]];
        candidates.into_iter().find(|argv| {
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..]).arg("version");
            matches!(try_run(c, QUICK), Ok(out) if out.code == Some(0))
        })
    });
    found.unwrap_or_else(|| {
        panic!("neither `docker compose` nor `docker-compose` works: install docker-compose")
    })
}

// ---------------------------------------------------------------------------
// A test's scope: its images, containers and Compose projects, removed on drop.

static SEQ: AtomicUsize = AtomicUsize::new(0);

struct ComposeProject {
    name: String,
    dir: PathBuf,
    env: Vec<(String, String)>,
}

struct Scope {
    id: String,
    dir: tempfile::TempDir,
    containers: Vec<String>,
    images: Vec<String>,
    projects: Vec<ComposeProject>,
}

impl Scope {
    fn new(test: &str) -> Scope {
        let short: String = test
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '-' })
            .take(32)
            .collect();
        let id = format!(
            "podinit-test-{}-{}-{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::SeqCst),
            short.trim_end_matches('-')
        );
        let dir = tempfile::Builder::new().prefix("podinit-docker-").tempdir().expect("temp dir");
        let rec = dir.path().join("rec");
        fs::create_dir(&rec).unwrap();
        fs::set_permissions(&rec, fs::Permissions::from_mode(0o777)).unwrap();
        fs::write(rec.join("log"), "").unwrap();
        fs::set_permissions(rec.join("log"), fs::Permissions::from_mode(0o666)).unwrap();
        Scope { id, dir, containers: Vec::new(), images: Vec::new(), projects: Vec::new() }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The host side of the `/rec` bind mount.
    fn rec_dir(&self) -> PathBuf {
        self.path().join("rec")
    }

    /// `-v HOST:/rec`, for the record file `/rec/log`.
    fn rec_mount(&self) -> String {
        format!("{}:/rec", self.rec_dir().display())
    }

    fn records(&self) -> Vec<String> {
        fs::read_to_string(self.rec_dir().join("log"))
            .unwrap_or_default()
            .lines()
            .map(|l| l.trim().to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    }

    fn value_of(&self, key: &str) -> Option<String> {
        self.records().iter().find_map(|l| l.strip_prefix(&format!("{key} ")).map(str::to_owned))
    }

    fn next_name(&mut self, what: &str) -> String {
        format!("{}-{what}-{}", self.id, SEQ.fetch_add(1, Ordering::SeqCst))
    }

    /// A new container name, removed on drop whatever happens to it.
    fn container(&mut self) -> String {
        let name = self.next_name("c");
        self.containers.push(name.clone());
        name
    }

    /// Builds a `FROM scratch` image holding /podinit, busybox (with a /bin
    /// symlink per applet), /tmp, /etc/passwd with `app` (1000:1000) and
    /// `files` (path in the image, content; mode 0755), with `entrypoint`.
    fn image(&mut self, files: &[(&str, &str)], entrypoint: &[&str]) -> String {
        self.image_with(files, entrypoint, "")
    }

    /// [`Scope::image`] with more Dockerfile lines (a `HEALTHCHECK`, say).
    fn image_with(&mut self, files: &[(&str, &str)], entrypoint: &[&str], more: &str) -> String {
        let ctx_name = self.next_name("ctx");
        let ctx = self.path().join(ctx_name);
        let root = ctx.join("rootfs");
        for d in ["bin", "etc", "tmp"] {
            fs::create_dir_all(root.join(d)).unwrap();
        }
        fs::set_permissions(root.join("tmp"), fs::Permissions::from_mode(0o1777)).unwrap();
        fs::copy(podinit_static(), root.join("podinit")).expect("copy podinit");
        fs::copy(busybox(), root.join("bin/busybox")).expect("copy busybox");
        for a in applets() {
            if a != "busybox" {
                symlink("busybox", root.join("bin").join(a)).unwrap();
            }
        }
        fs::write(
            root.join("etc/passwd"),
            "root:x:0:0:root:/root:/bin/sh\napp:x:1000:1000:app:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n",
        )
        .unwrap();
        fs::write(root.join("etc/group"), "root:x:0:\napp:x:1000:\nnogroup:x:65534:\n").unwrap();
        for (path, content) in files {
            let p = root.join(path.trim_start_matches('/'));
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, content).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
        }
        let ep: Vec<String> = entrypoint.iter().map(|a| format!("{a:?}")).collect();
        fs::write(
            ctx.join("Dockerfile"),
            format!("FROM scratch\nCOPY rootfs/ /\nENTRYPOINT [{}]\n{more}", ep.join(", ")),
        )
        .unwrap();
        let tag = format!("{}:latest", self.next_name("img"));
        self.images.push(tag.clone());
        let label = format!("{LABEL}={}", self.id);
        docker_ok(
            &["build", "-q", "--no-cache", "--label", &label, "-t", &tag, ctx.to_str().unwrap()],
            BUILD,
        );
        tag
    }

    /// The podinit image, built as the README tells users to build it with
    /// only a local engine: the top-level Dockerfile's `local` target.
    fn podinit_image(&mut self) -> String {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let binary = podinit_static().strip_prefix(repo).unwrap_or_else(|_| {
            panic!("{} is outside the repository, so not in the build context", podinit_static().display())
        });
        let tag = format!("{}:latest", self.next_name("podinit"));
        self.images.push(tag.clone());
        let label = format!("{LABEL}={}", self.id);
        let binary_arg = format!("BINARY={}", binary.display());
        docker_ok(
            &[
                "build",
                "-q",
                "--target",
                "local",
                "--build-arg",
                &binary_arg,
                "--label",
                &label,
                "-t",
                &tag,
                repo.to_str().unwrap(),
            ],
            BUILD,
        );
        tag
    }

    /// An image whose ENTRYPOINT runs podinit with `config` at
    /// /etc/podinit.toml.
    fn pod_image(&mut self, config: &str) -> String {
        self.image(&[("/etc/podinit.toml", config)], &["/podinit", "--config", "/etc/podinit.toml"])
    }

    /// `docker run -d` (plus `args`, image, `cmd`) under a new name; returns
    /// the name once the container runs.
    #[track_caller]
    fn run_detached(&mut self, args: &[&str], image: &str, cmd: &[&str]) -> String {
        let name = self.container();
        let label = format!("{LABEL}={}", self.id);
        let mut argv = vec!["run", "-d", "--name", &name, "--label", &label];
        argv.extend_from_slice(args);
        argv.push(image);
        argv.extend_from_slice(cmd);
        docker_ok(&argv, QUICK);
        name
    }

    /// `docker logs NAME`: (stdout, stderr) as podinit wrote them.
    fn logs(&self, name: &str) -> (String, String) {
        let out = run(docker_cmd(["logs", name]), QUICK);
        (out.stdout, out.stderr)
    }

    fn inspect(&self, name: &str, format: &str) -> String {
        docker_ok(&["inspect", "-f", format, name], QUICK).stdout.trim().to_owned()
    }

    fn exit_code(&self, name: &str) -> i32 {
        let s = self.inspect(name, "{{.State.ExitCode}}");
        s.parse().unwrap_or_else(|_| panic!("exit code of {name}: {s:?}"))
    }

    fn is_running(&self, name: &str) -> bool {
        self.inspect(name, "{{.State.Running}}") == "true"
    }

    /// Records and the container's logs, for failure messages.
    fn report(&self, name: &str) -> String {
        let logs = try_run(docker_cmd(["logs", name]), QUICK)
            .map(|o| {
                format!(
                    "--- docker logs (stdout) ---\n{}\n--- docker logs (stderr) ---\n{}",
                    tail(&o.stdout, 4000),
                    tail(&o.stderr, 4000)
                )
            })
            .unwrap_or_else(|e| e);
        format!("--- records ---\n{}\n{logs}", self.records().join("\n"))
    }

    /// Polls `cond` until it holds; the test fails (with the records and logs
    /// of `name`) past `timeout`, or if the container stops first.
    #[track_caller]
    fn wait_until(&self, name: &str, what: &str, timeout: Duration, mut cond: impl FnMut(&Scope) -> bool) {
        let until = Instant::now() + timeout;
        let mut polls = 0u32;
        loop {
            if cond(self) {
                return;
            }
            polls += 1;
            // docker inspect costs ~20 ms: look at the container now and then.
            if polls.is_multiple_of(10) && !self.is_running(name) {
                if cond(self) {
                    return;
                }
                panic!("container stopped while waiting for {what}\n{}", self.report(name));
            }
            if Instant::now() > until {
                panic!("timed out after {timeout:?} waiting for {what}\n{}", self.report(name));
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    #[track_caller]
    fn wait_for_record(&self, name: &str, line: &str, timeout: Duration) {
        self.wait_until(name, &format!("record {line:?}"), timeout, |s| {
            s.records().iter().any(|l| l == line)
        });
    }

    /// `docker stop -t T NAME`; returns how long it took.
    #[track_caller]
    fn stop(&self, name: &str, t: u32) -> Duration {
        let t = t.to_string();
        let out = docker_ok(&["stop", "-t", &t, name], QUICK + Duration::from_secs(20));
        out.elapsed
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let mut problems = Vec::new();
        for p in &self.projects {
            let argv = compose_cmd();
            let mut c = Command::new(argv[0]);
            c.args(&argv[1..])
                .args([
                    "-p",
                    &p.name,
                    "-f",
                    "compose.yaml",
                    "down",
                    "--rmi",
                    "local",
                    "-v",
                    "--remove-orphans",
                    "-t",
                    "1",
                ])
                .current_dir(&p.dir)
                .envs(p.env.iter().map(|(k, v)| (k, v)));
            match try_run(c, Duration::from_secs(120)) {
                Ok(o) if o.code == Some(0) => {}
                Ok(o) => problems.push(format!("compose down {}: {}", p.name, o.report())),
                Err(e) => problems.push(e),
            }
        }
        // Also whatever carries this scope's label (a container created by a
        // `docker run` that timed out before it printed its id, say).
        let filter = format!("label={LABEL}={}", self.id);
        if let Ok(o) = try_run(docker_cmd(["ps", "-aq", "--filter", &filter]), QUICK) {
            self.containers.extend(o.stdout.split_whitespace().map(String::from));
        }
        if !self.containers.is_empty() {
            let mut args = vec!["rm".to_owned(), "-f".to_owned(), "-v".to_owned()];
            args.extend(self.containers.iter().cloned());
            if let Err(e) = try_run(docker_cmd(&args), QUICK) {
                problems.push(e);
            }
        }
        if !self.images.is_empty() {
            let mut args = vec!["rmi".to_owned(), "-f".to_owned()];
            args.extend(self.images.iter().cloned());
            if let Err(e) = try_run(docker_cmd(&args), QUICK) {
                problems.push(e);
            }
        }
        if !problems.is_empty() {
            loud(&format!("docker test cleanup of {}: {}", self.id, problems.join("\n")));
        }
    }
}

// ---------------------------------------------------------------------------
// Pod configs and what they write.

/// One `[[process]]` table whose command is a shell script (a TOML
/// multi-line literal string, run by /bin/sh -c), plus extra TOML lines.
fn entry(name: &str, role: &str, script: &str, extra: &str) -> String {
    format!("[[process]]\nname = \"{name}\"\nrole = \"{role}\"\ncommand = '''\n{script}\n'''\n{extra}\n\n")
}

/// A long-running entry that writes `NAME hello 1..100` to stdout, records
/// `start NAME`, and on SIGTERM records `stop NAME`, writes `NAME bye
/// 1..200`, takes 200 ms, records `stopped NAME` and exits 0.
fn stopper(name: &str) -> String {
    format!(
        r#"trap 'echo "stop {name}" >> /rec/log; i=1; while [ $i -le 200 ]; do echo "{name} bye $i"; i=$((i+1)); done; sleep 0.2; echo "stopped {name}" >> /rec/log; exit 0' TERM
i=1; while [ $i -le 100 ]; do echo "{name} hello $i"; i=$((i+1)); done
echo "start {name}" >> /rec/log
while :; do sleep 0.1; done"#
    )
}

/// Lines of `text` written by entry `name` in prefixed mode
/// (`^name\s*\| line$`), in order, without the prefix.
fn entry_lines(text: &str, name: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?.trim_start_matches(' ');
            if rest == "|" {
                return Some(String::new());
            }
            rest.strip_prefix("| ").map(str::to_owned)
        })
        .collect()
}

/// Index of the first line of `text` containing `needle`.
#[track_caller]
fn line_index(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

fn without_starts(r: &[String]) -> Vec<String> {
    r.iter().filter(|l| l.starts_with("stop ") || l.starts_with("stopped ")).cloned().collect()
}

// ---------------------------------------------------------------------------
// The tests.

/// `docker run` exits with the main's status: 0, 3, and 137 for a main
/// killed by SIGKILL; the sidecar is stopped after the main, quickly.
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_run_passes_the_main_exit_status_through() {
    let mut s = scope("docker_run_passes_the_main_exit_status_through");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("helper", "sidecar", "trap 'exit 0' TERM\nwhile :; do sleep 0.1; done", "");
    cfg += &entry(
        "app",
        "main",
        "echo \"app running\"\nif [ \"$CODE\" = kill ]; then kill -KILL $$; fi\nexit \"$CODE\"",
        "",
    );
    let image = s.pod_image(&cfg);
    for (code, want) in [("0", 0), ("3", 3), ("kill", 137)] {
        let name = s.container();
        let label = format!("{LABEL}={}", s.id);
        let env = format!("CODE={code}");
        let out = run(docker_cmd(["run", "--name", &name, "--label", &label, "-e", &env, &image]), QUICK);
        assert_eq!(out.code, Some(want), "docker run (CODE={code})\n{}", out.report());
        assert_eq!(s.exit_code(&name), want, "the container's recorded exit code (CODE={code})");
        assert_eq!(entry_lines(&out.stdout, "app"), ["app running"], "{}", out.report());
        // The sidecar is stopped once the main has ended, not before.
        let main_ended = line_index(&out.stderr, "app (pid");
        let helper_stopped = line_index(&out.stderr, "stopping helper");
        assert!(main_ended < helper_stopped, "helper stopped before the main ended\n{}", out.report());
        assert!(out.elapsed < secs(10.0), "docker run took {:?}\n{}", out.elapsed, out.report());
    }
}

/// The same through `ENTRYPOINT ["/podinit", "--"]` and a CMD, podinit as a
/// plain init (the README's "Use in a Dockerfile").
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_run_with_podinit_as_plain_init_passes_the_exit_status_through() {
    let mut s = scope("docker_run_with_podinit_as_plain_init_passes_the_exit_status_through");
    let image = s.image(&[], &["/podinit", "--"]);
    for (script, want) in
        [("echo plain; exit 0", 0), ("echo plain; exit 3", 3), ("echo plain; kill -KILL $$", 137)]
    {
        let name = s.container();
        let label = format!("{LABEL}={}", s.id);
        let out =
            run(docker_cmd(["run", "--name", &name, "--label", &label, &image, "sh", "-c", script]), QUICK);
        assert_eq!(out.code, Some(want), "docker run {script:?}\n{}", out.report());
        assert_eq!(s.exit_code(&name), want);
        assert!(out.stdout.contains("plain"), "the command's output is missing\n{}", out.report());
        assert!(out.elapsed < secs(10.0), "docker run took {:?}\n{}", out.elapsed, out.report());
    }
}

/// `docker stop`: SIGTERM to podinit stops the main first, then the sidecars
/// one at a time in reverse order, well inside docker's 10 s; exit 0 (not
/// docker's SIGKILL); and `docker logs` has every line every entry wrote,
/// the ones written while stopping included, in order.
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_stop_stops_the_main_then_sidecars_in_reverse_order_within_the_timeout() {
    let mut s = scope("docker_stop_stops_the_main_then_sidecars_in_reverse_order_within_the_timeout");
    // The default termination_grace_period (7 s) fits docker stop's 10 s.
    let mut cfg = String::new();
    cfg += &entry("s1", "sidecar", &stopper("s1"), "");
    cfg += &entry("s2", "sidecar", &stopper("s2"), "");
    cfg += &entry("app", "main", &stopper("app"), "");
    let image = s.pod_image(&cfg);
    let rec = s.rec_mount();
    let name = s.run_detached(&["-v", &rec], &image, &[]);
    for n in ["s1", "s2", "app"] {
        s.wait_for_record(&name, &format!("start {n}"), secs(20.0));
    }
    let took = s.stop(&name, 10);
    let code = s.exit_code(&name);
    let report = s.report(&name);
    assert_eq!(code, 0, "exit code after docker stop (137 would be docker's SIGKILL)\n{report}");
    assert!(took < secs(6.0), "docker stop took {took:?}: podinit should finish in about 1 s\n{report}");
    assert_eq!(
        without_starts(&s.records()),
        ["stop app", "stopped app", "stop s2", "stopped s2", "stop s1", "stopped s1"],
        "{report}"
    );
    let (stdout, stderr) = s.logs(&name);
    for n in ["s1", "s2", "app"] {
        let want: Vec<String> = (1..=100)
            .map(|i| format!("{n} hello {i}"))
            .chain((1..=200).map(|i| format!("{n} bye {i}")))
            .collect();
        assert_eq!(
            entry_lines(&stdout, n),
            want,
            "docker logs of {n} are not complete and in order\n{report}"
        );
    }
    assert!(stderr.contains("SIGTERM received"), "podinit's own messages are in the logs\n{report}");
}

/// `docker kill -s HUP` reaches the main (podinit forwards it to the mains'
/// process groups), not the sidecar, and does not stop the pod.
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_kill_hup_reaches_the_main() {
    let mut s = scope("docker_kill_hup_reaches_the_main");
    let hup = |n: &str| {
        format!(
            r#"trap 'echo "hup {n}" >> /rec/log; echo "{n} got HUP"' HUP
trap 'echo "stop {n}" >> /rec/log; exit 0' TERM
echo "start {n}" >> /rec/log
while :; do sleep 0.1; done"#
        )
    };
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("side", "sidecar", &hup("side"), "");
    cfg += &entry("app", "main", &hup("app"), "");
    let image = s.pod_image(&cfg);
    let rec = s.rec_mount();
    let name = s.run_detached(&["-v", &rec], &image, &[]);
    s.wait_for_record(&name, "start app", secs(20.0));
    docker_ok(&["kill", "-s", "HUP", &name], QUICK);
    s.wait_for_record(&name, "hup app", secs(10.0));
    // Let time pass: the sidecar must not get it, and the pod goes on.
    thread::sleep(secs(0.5));
    assert!(s.is_running(&name), "HUP stopped the pod\n{}", s.report(&name));
    assert!(!s.records().iter().any(|l| l == "hup side"), "the sidecar got HUP\n{}", s.report(&name));
    let took = s.stop(&name, 10);
    assert_eq!(s.exit_code(&name), 0, "{}", s.report(&name));
    assert!(took < secs(6.0), "docker stop took {took:?}\n{}", s.report(&name));
    let (stdout, _) = s.logs(&name);
    assert_eq!(entry_lines(&stdout, "app"), ["app got HUP"], "{}", s.report(&name));
}

/// `docker run -it` through a pseudo-terminal (util-linux `script`): the main
/// has the terminal (its process group is the terminal's foreground group),
/// writes to it unprefixed, and Ctrl-C (0x03 typed at the terminal) reaches it
/// as SIGINT: it exits 42 from its INT trap, and so does `docker run`.
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_run_it_gives_the_main_the_terminal_and_ctrl_c() {
    let mut s = scope("docker_run_it_gives_the_main_the_terminal_and_ctrl_c");
    let main = r#"#!/bin/sh
echo "tty: $(tty)"
set -- $(cat /proc/$$/stat)
echo "pgrp=$5 tpgid=$8"
trap 'echo "got INT"; exit 42' INT
echo "ready for ctrl-c"
while :; do sleep 0.1; done
"#;
    let image = s.image(&[("/tty-main", main)], &["/podinit", "--"]);
    let name = s.container();
    let label = format!("{LABEL}={}", s.id);
    let docker_run = format!("docker run -it --name {name} --label {label} {image} /tty-main");
    let mut cmd = Command::new("script");
    cmd.args(["-qec", &docker_run, "/dev/null"]);
    let mut proc = Proc::spawn(cmd, Stdio::piped())
        .unwrap_or_else(|e| panic!("{e} (install util-linux's `script`: Debian bsdutils)"));
    let mut stdin = proc.child.stdin.take().unwrap();
    let until = Instant::now() + secs(30.0);
    while !proc.stdout.text().contains("ready for ctrl-c") {
        if Instant::now() > until || !matches!(proc.child.try_wait(), Ok(None)) {
            let text = proc.stdout.text();
            let err = proc.stderr.text();
            drop(proc);
            panic!("the main did not come up on the terminal\n--- terminal ---\n{text}\n--- stderr ---\n{err}\n{}", s.report(&name));
        }
        thread::sleep(Duration::from_millis(20));
    }
    let typed = Instant::now();
    stdin.write_all(b"\x03").unwrap();
    stdin.flush().unwrap();
    let out = proc.finish(secs(20.0)).unwrap_or_else(|e| panic!("{e}\n{}", s.report(&name)));
    drop(stdin);
    let took = typed.elapsed();
    let terminal = out.stdout.replace('\r', "");
    let report = format!("--- terminal ---\n{terminal}\n--- stderr ---\n{}\n{}", out.stderr, s.report(&name));
    assert!(
        terminal.lines().any(|l| l.starts_with("tty: /dev/pts/")),
        "the main has a terminal on stdin and writes to it unprefixed\n{report}"
    );
    let pg = terminal.lines().find_map(|l| l.strip_prefix("pgrp=")).unwrap_or_else(|| panic!("{report}"));
    let (pgrp, tpgid) = pg.split_once(" tpgid=").unwrap();
    assert_eq!(pgrp, tpgid, "the main's process group is the terminal's foreground group\n{report}");
    assert!(terminal.contains("got INT"), "Ctrl-C did not reach the main as SIGINT\n{report}");
    assert_eq!(out.code, Some(42), "docker run -it should exit with the main's status\n{report}");
    assert_eq!(s.exit_code(&name), 42, "{report}");
    assert!(took < secs(10.0), "Ctrl-C to exit took {took:?}\n{report}");
}

/// `docker run --init`: Docker's init is PID 1 and podinit runs under it,
/// as child subreaper: an orphan of the main reparents to podinit (not to
/// PID 1) and is reaped once it ends; `docker stop` (docker-init forwards the
/// SIGTERM) still stops the main first, then the sidecar, exit 0.
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_run_init_podinit_not_pid1_still_reaps_and_stops_in_order() {
    let mut s = scope("docker_run_init_podinit_not_pid1_still_reaps_and_stops_in_order");
    let app = r#"trap 'echo "stop app" >> /rec/log; sleep 0.2; echo "stopped app" >> /rec/log; exit 0' TERM
echo "podinit-pid $PPID" >> /rec/log
echo "pid1 $(tr '\0' ' ' < /proc/1/cmdline)" >> /rec/log
sh -c 'sleep 300 & echo $! > /rec/orphan'
o=$(cat /rec/orphan)
set -- $(cat /proc/$o/stat)
echo "orphan-ppid $4" >> /rec/log
kill $o
i=0; while [ -e /proc/$o ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done
if [ -e /proc/$o ]; then set -- $(cat /proc/$o/stat); echo "orphan left in state $3" >> /rec/log; else echo "orphan reaped" >> /rec/log; fi
echo "start app" >> /rec/log
while :; do sleep 0.1; done"#;
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry("s1", "sidecar", &stopper("s1"), "");
    cfg += &entry("app", "main", app, "");
    let image = s.pod_image(&cfg);
    let rec = s.rec_mount();
    let name = s.run_detached(&["--init", "-v", &rec], &image, &[]);
    // s1 has no probe: it holds the start sequence only until its process
    // runs (docs/lifecycle.md rule 3), so app's line may come before s1 has
    // set its TERM trap.
    s.wait_for_record(&name, "start s1", secs(20.0));
    s.wait_for_record(&name, "start app", secs(20.0));
    let report = s.report(&name);
    let pid1 = s.value_of("pid1").unwrap_or_default();
    assert!(pid1.contains("docker-init"), "PID 1 is Docker's init: {pid1:?}\n{report}");
    let podinit_pid = s.value_of("podinit-pid").unwrap_or_default();
    assert_ne!(podinit_pid, "1", "podinit is not PID 1 here\n{report}");
    assert_eq!(
        s.value_of("orphan-ppid").as_deref(),
        Some(podinit_pid.as_str()),
        "the orphan reparents to podinit, the subreaper, not to PID 1\n{report}"
    );
    assert!(s.records().iter().any(|l| l == "orphan reaped"), "the orphan was not reaped\n{report}");
    let took = s.stop(&name, 10);
    let report = s.report(&name);
    assert_eq!(s.exit_code(&name), 0, "{report}");
    assert!(took < secs(6.0), "docker stop took {took:?}\n{report}");
    assert_eq!(
        without_starts(&s.records()),
        ["stop app", "stopped app", "stop s1", "stopped s1"],
        "{report}"
    );
}

/// `--read-only --user 1000:1000`: podinit runs unprivileged on a read-only
/// root, finds a place for its status socket (/dev/shm), and `podinit
/// status` through `docker exec` answers: 1 while the sidecar is not ready,
/// 0 once it is; `docker stop` then ends it with status 0.
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn docker_run_read_only_as_user_1000_with_podinit_status() {
    let mut s = scope("docker_run_read_only_as_user_1000_with_podinit_status");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "gate",
        "sidecar",
        "trap 'exit 0' TERM\necho \"gate as $(id -u):$(id -g)\"\nwhile :; do sleep 0.1; done",
        "hold_until = \"started\"\nreadiness_probe = { exec = { command = [\"test\", \"-f\", \"/dev/shm/ready\"] }, period = \"200ms\" }",
    );
    cfg += &entry(
        "app",
        "main",
        r#"trap 'exit 0' TERM
echo "app as $(id -u):$(id -g)"
if touch /written 2>/dev/null; then echo "root fs writable"; else echo "root fs read-only"; fi
while :; do sleep 0.1; done"#,
        "",
    );
    let image = s.pod_image(&cfg);
    let name = s.run_detached(&["--read-only", "--user", "1000:1000"], &image, &[]);
    // gate holds the sequence only until started (`hold_until = "started"`,
    // no startup probe): its line may come after the main's.
    s.wait_until(&name, "the first lines of the main and the sidecar in docker logs", secs(20.0), |s| {
        let stdout = s.logs(&name).0;
        entry_lines(&stdout, "app").len() >= 2 && !entry_lines(&stdout, "gate").is_empty()
    });
    let (stdout, _) = s.logs(&name);
    assert_eq!(entry_lines(&stdout, "app"), ["app as 1000:1000", "root fs read-only"], "{}", s.report(&name));
    assert_eq!(entry_lines(&stdout, "gate"), ["gate as 1000:1000"], "{}", s.report(&name));

    let status = || run(docker_cmd(["exec", &name, "/podinit", "status"]), QUICK);
    let before = status();
    assert_eq!(before.code, Some(1), "podinit status while the sidecar is not ready\n{}", before.report());
    assert!(before.stdout.contains("gate") && before.stdout.contains("app"), "{}", before.report());
    docker_ok(&["exec", &name, "touch", "/dev/shm/ready"], QUICK);
    let mut last = None;
    s.wait_until(&name, "podinit status to exit 0", secs(10.0), |_| {
        let out = status();
        let ok = out.code == Some(0);
        last = Some(out);
        ok
    });
    let after = last.unwrap();
    assert!(after.stdout.contains("gate") && after.stdout.contains("app"), "{}", after.report());
    let took = s.stop(&name, 10);
    assert_eq!(s.exit_code(&name), 0, "{}", s.report(&name));
    assert!(took < secs(6.0), "docker stop took {took:?}\n{}", s.report(&name));
}

/// A Dockerfile `HEALTHCHECK` through the HTTP endpoint's `/readyz` with
/// busybox `wget` (no `podinit status` exec): unhealthy while a sidecar is
/// not ready (503), healthy once it is (200).
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn healthcheck_through_http_readyz() {
    let mut s = scope("healthcheck_through_http_readyz");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\nhttp = \"127.0.0.1:9090\"\n\n");
    cfg += &entry(
        "gate",
        "sidecar",
        "trap 'exit 0' TERM\nwhile :; do sleep 0.1; done",
        "hold_until = \"started\"\nreadiness_probe = { exec = { command = [\"test\", \"-f\", \"/tmp/ready\"] }, period = \"200ms\" }",
    );
    cfg += &entry("app", "main", "trap 'exit 0' TERM\nwhile :; do sleep 0.1; done", "");
    let healthcheck = "HEALTHCHECK --interval=1s --timeout=2s --retries=1 CMD [\"wget\", \"-q\", \"-O\", \"/dev/null\", \"http://127.0.0.1:9090/readyz\"]\n";
    let image = s.image_with(
        &[("/etc/podinit.toml", &cfg)],
        &["/podinit", "--config", "/etc/podinit.toml"],
        healthcheck,
    );
    let name = s.run_detached(&[], &image, &[]);
    s.wait_until(&name, "a failed health check (the sidecar is not ready)", secs(20.0), |s| {
        s.inspect(&name, "{{.State.Health.Status}}") == "unhealthy"
    });
    docker_ok(&["exec", &name, "touch", "/tmp/ready"], QUICK);
    s.wait_until(&name, "healthy once it is", secs(20.0), |s| {
        s.inspect(&name, "{{.State.Health.Status}}") == "healthy"
    });
    s.stop(&name, 10);
    assert_eq!(s.exit_code(&name), 0, "{}", s.report(&name));
}

/// The podinit image itself (the top-level Dockerfile's `local` target) runs
/// podinit's command line: `--version`, `check` of a mounted config, and
/// `--help` when given nothing (docs/reference.md, "Decisions").
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn the_podinit_image_runs_podinits_command_line() {
    let mut s = scope("the_podinit_image_runs_podinits_command_line");
    let image = s.podinit_image();
    let label = format!("{LABEL}={}", s.id);
    let out = docker_ok(&["run", "--rm", "--label", &label, &image, "--version"], QUICK);
    assert_eq!(out.stdout.trim(), format!("podinit {}", env!("CARGO_PKG_VERSION")), "{}", out.report());
    let pod = s.path().join("pod");
    fs::create_dir(&pod).unwrap();
    fs::write(pod.join("podinit.toml"), entry("app", "main", "exec /app/server", "")).unwrap();
    let mount = format!("{}:/pod:ro", pod.display());
    let out = docker_ok(
        &["run", "--rm", "--label", &label, "-v", &mount, &image, "check", "--config", "/pod/podinit.toml"],
        QUICK,
    );
    assert!(out.stdout.contains("/pod/podinit.toml: valid"), "{}", out.report());
    let out = docker_ok(&["run", "--rm", "--label", &label, &image], QUICK);
    assert!(out.stdout.starts_with("podinit: "), "--help by default\n{}", out.report());
    assert!(out.stdout.contains("Usage: podinit"), "{}", out.report());
}

/// The Compose stack of examples/docker, exactly those files: `app`'s
/// healthcheck is `podinit status`, `job` depends on it with `condition:
/// service_healthy`, and `up --exit-code-from job` ends with the job's
/// status (0: it fetched the page the app's pod serves). The job started
/// only after a passing health check, and the app's pod was stopped in order
/// (web first, then the shipper).
#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn compose_up_runs_the_job_once_the_app_is_healthy_and_exits_with_its_status() {
    let mut s = scope("compose_up_runs_the_job_once_the_app_is_healthy_and_exits_with_its_status");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/docker");
    let dir = s.path().join("compose");
    fs::create_dir(&dir).unwrap();
    for e in fs::read_dir(&example).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() && e.file_name() != "busybox" {
            fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    fs::copy(busybox(), dir.join("busybox")).unwrap();
    let podinit_image = s.podinit_image();

    let project = s.id.replace('.', "-");
    let env = vec![("PODINIT_IMAGE".to_owned(), podinit_image.clone())];
    s.projects.push(ComposeProject { name: project.clone(), dir: dir.clone(), env: env.clone() });
    let argv = compose_cmd();
    let mut c = Command::new(argv[0]);
    c.args(&argv[1..])
        .args([
            "-p",
            &project,
            "-f",
            "compose.yaml",
            "up",
            "--build",
            "--no-color",
            "--exit-code-from",
            "job",
        ])
        .current_dir(&dir)
        .envs(env.iter().map(|(k, v)| (k, v)));
    let up = run(c, COMPOSE_UP);
    let container_of = |service: &str| {
        let p = format!("label=com.docker.compose.project={project}");
        let sv = format!("label=com.docker.compose.service={service}");
        let out = docker_ok(&["ps", "-aq", "--filter", &p, "--filter", &sv], QUICK);
        out.stdout
            .split_whitespace()
            .next()
            .unwrap_or_else(|| panic!("no {service} container\n{}", up.report()))
            .to_owned()
    };
    assert_eq!(up.code, Some(0), "compose up --exit-code-from job\n{}", up.report());
    assert!(up.stdout.contains("hello from podinit"), "the job's output is missing\n{}", up.report());
    assert!(up.elapsed < secs(200.0), "compose up took {:?}\n{}", up.elapsed, up.report());

    let app = container_of("app");
    let job = container_of("job");
    assert_eq!(s.exit_code(&job), 0, "{}", up.report());
    // The job started only after a health check of app had passed.
    let job_started = parse_rfc3339(&s.inspect(&job, "{{.State.StartedAt}}"));
    let health = s.inspect(&app, "{{json .State.Health.Log}}");
    let log: serde_norway::Value = serde_norway::from_str(&health).expect("health log JSON");
    let first_pass = log
        .as_sequence()
        .into_iter()
        .flatten()
        .filter(|e| e.get("ExitCode").and_then(|c| c.as_i64()) == Some(0))
        .filter_map(|e| e.get("End").and_then(|t| t.as_str()).map(parse_rfc3339))
        .min()
        .unwrap_or_else(|| panic!("no passing health check of app: {health}\n{}", up.report()));
    assert!(
        first_pass <= job_started,
        "the job started before app was healthy (health log {health}, job started {job_started})"
    );
    // Compose stopped app (SIGTERM): web first, then the shipper.
    let (_, app_err) = s.logs(&app);
    let web = line_index(&app_err, "stopping web");
    let shipper = line_index(&app_err, "stopping shipper");
    assert!(web < shipper, "app's pod did not stop the main first\n{app_err}");
}

/// Nanoseconds since the Unix epoch of an RFC 3339 time as Docker writes
/// them (`2026-11-30T12:41:22.530154062Z`, or with a `+01:00` offset).
fn parse_rfc3339(s: &str) -> i128 {
    let bad = || -> ! { panic!("not an RFC 3339 time: {s:?}") };
    let num =
        |a: usize, b: usize| -> i64 { s.get(a..b).and_then(|x| x.parse().ok()).unwrap_or_else(|| bad()) };
    let (y, mo, d, h, mi, se) = (num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19));
    let mut rest = &s[19..];
    let mut nanos: i128 = 0;
    if let Some(r) = rest.strip_prefix('.') {
        let digits: String = r.chars().take_while(char::is_ascii_digit).collect();
        let mut padded = digits.clone();
        padded.truncate(9);
        while padded.len() < 9 {
            padded.push('0');
        }
        nanos = padded.parse().unwrap_or_else(|_| bad());
        rest = &r[digits.len()..];
    }
    let offset_secs: i64 = match rest {
        "Z" | "" => 0,
        o if o.len() == 6 => {
            let sign = if o.starts_with('-') { -1 } else { 1 };
            let oh: i64 = o[1..3].parse().unwrap_or_else(|_| bad());
            let om: i64 = o[4..6].parse().unwrap_or_else(|_| bad());
            sign * (oh * 3600 + om * 60)
        }
        _ => bad(),
    };
    // Days from civil (Howard Hinnant's algorithm).
    let (y, m) = if mo <= 2 { (y - 1, mo + 9) } else { (y, mo - 3) };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * m + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset_secs;
    i128::from(secs) * 1_000_000_000 + nanos
}

#[test]
#[ignore = "needs a Docker engine: run with --include-ignored"]
fn parse_rfc3339_reads_docker_times() {
    assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), 0);
    assert_eq!(parse_rfc3339("1970-01-01T00:00:01.5Z"), 1_500_000_000);
    assert_eq!(
        parse_rfc3339("2026-11-30T12:41:22.530154062Z"),
        parse_rfc3339("2026-11-30T13:41:22.530154062+01:00")
    );
    assert!(parse_rfc3339("2026-11-30T12:41:22Z") < parse_rfc3339("2026-11-30T12:41:22.000000001Z"));
}
