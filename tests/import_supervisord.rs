//! `podinit import` of supervisord.conf files, compared with what the real
//! supervisord does with the same file.
//!
//! Needs `supervisord` (Debian package `supervisor`, or `pip install
//! supervisor`) on PATH for the comparisons: without it they are skipped with
//! a message, and fail under `CI=true`. Each supervisord runs in the
//! foreground (`-n`) in the test's own directory, with its own log and
//! pidfile, and no control socket; it is killed with its process group if the
//! test fails.
//!
//! The examples are the runnable files of `examples/import/supervisord/`:
//! stand-ins that write `start NAME` and `stop NAME` to the file `$REC` names.

// This harness waits for the processes it starts: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "import")]

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use common::*;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/import/supervisord").join(name)
}

fn podinit_import(args: &[&str], file: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_podinit")).arg("import").args(args).arg(file).output().unwrap()
}

/// The real supervisord, or `None` (the test is skipped) outside CI.
fn supervisord() -> Option<PathBuf> {
    let found = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|d| d.join("supervisord"))
        .find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "supervisord is missing: install the Debian package `supervisor` (or `pip install supervisor`)"
        );
        eprintln!("skipped: supervisord is not installed (Debian package `supervisor`)");
    }
    found
}

/// One supervisord run of `file` in `td`.
struct Supervisord {
    child: Child,
    log: PathBuf,
    rec: PathBuf,
}

impl Supervisord {
    /// Starts `bin -n` on a copy of `file` in `td` whose last
    /// `[supervisord]` (the later key wins) puts the log and pidfile in `td`,
    /// with `REC` set to `td`'s record file.
    fn start(bin: &Path, td: &TestDir, file: &Path) -> Supervisord {
        Self::start_with(bin, td, file, &[])
    }

    /// [`Supervisord::start`] with more variables in its environment.
    fn start_with(bin: &Path, td: &TestDir, file: &Path, env: &[(&str, &str)]) -> Supervisord {
        let log = td.file("supervisord.log");
        let text = std::fs::read_to_string(file).unwrap();
        let conf = td.write(
            "supervisord.conf",
            &format!(
                "{text}\n[supervisord]\nnodaemon=true\nlogfile={}\npidfile={}\nchildlogdir={}\n",
                log.display(),
                td.file("supervisord.pid").display(),
                td.path().display(),
            ),
        );
        let child = Command::new(bin)
            .arg("-n")
            .arg("-c")
            .arg(&conf)
            .env("REC", td.rec())
            .envs(env.iter().copied())
            .current_dir(td.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        Supervisord { child, log, rec: td.rec() }
    }

    fn records(&self) -> Vec<String> {
        std::fs::read_to_string(&self.rec).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    fn wait_until(&mut self, what: &str, cond: impl Fn(&[String]) -> bool) {
        let until = Instant::now() + Duration::from_secs(15);
        while !cond(&self.records()) {
            if Instant::now() > until || self.child.try_wait().unwrap().is_some() {
                self.kill();
                panic!("supervisord: no {what}: records {:?}\nlog:\n{}", self.records(), self.log_text());
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The names supervisord spawned, in order (its log).
    fn spawned(&self) -> Vec<String> {
        self.log_text()
            .lines()
            .filter_map(|l| l.split("spawned: '").nth(1)?.split('\'').next().map(str::to_owned))
            .collect()
    }

    /// SIGTERM, then its exit status.
    fn terminate(&mut self) -> Option<i32> {
        send_signal(self.child.id() as i32, SIGTERM);
        let until = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                return st.code();
            }
            if Instant::now() > until {
                self.kill();
                panic!("supervisord did not exit after SIGTERM\n{}", self.log_text());
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    fn kill(&mut self) {
        send_signal(-(self.child.id() as i32), SIGKILL);
        let _ = self.child.wait();
    }
}

impl Drop for Supervisord {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.kill();
        }
    }
}

/// The names podinit started, in order (its log on stderr).
fn started(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("podinit | ")?.split_once(" started (pid ").map(|(n, _)| n.to_owned()))
        .collect()
}

/// `podinit import FILE` (with `args`) written into `td` as pod.toml.
fn import_into(td: &TestDir, file: &Path, args: &[&str]) -> PathBuf {
    let out = podinit_import(args, file);
    assert!(out.status.success(), "import failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let toml = td.file("pod.toml");
    std::fs::write(&toml, &out.stdout).unwrap();
    toml
}

fn stops(records: &[String]) -> Vec<String> {
    records.iter().filter(|r| r.starts_with("stop ")).cloned().collect()
}

#[test]
fn the_web_stack_starts_and_stops_in_supervisords_order() {
    let Some(bin) = supervisord() else { return };
    let file = example("web-stack.conf");
    let all = ["start php-fpm", "start nginx", "start cron"];

    let sd = TestDir::new();
    let mut s = Supervisord::start(&bin, &sd, &file);
    s.wait_until("start of every program", |r| all.iter().all(|a| r.iter().any(|l| l == a)));
    let s_code = s.terminate();
    let (s_spawned, s_records) = (s.spawned(), s.records());

    let td = TestDir::new();
    let toml = import_into(&td, &file, &[]);
    let mut p = td.podinit().config(&toml).env("REC", td.rec()).spawn();
    for a in all {
        p.wait_for_record(a, Duration::from_secs(10));
    }
    p.signal(SIGTERM);
    let out = p.wait();

    assert_eq!(s_spawned, ["php-fpm", "nginx", "cron"], "supervisord's start order");
    assert_eq!(started(&out.stderr), s_spawned, "podinit's start order\n{}", out.report());
    assert_eq!(stops(&s_records), ["stop cron", "stop nginx", "stop php-fpm"], "supervisord's stop order");
    assert_eq!(stops(&out.records), stops(&s_records), "podinit's stop order\n{}", out.report());
    assert_eq!(s_code, Some(0), "supervisord's status after SIGTERM");
    assert_eq!(out.code, s_code, "podinit's status after SIGTERM\n{}", out.report());
}

#[test]
fn workers_restart_as_supervisord_restarts_them() {
    let Some(bin) = supervisord() else { return };
    let file = example("workers.conf");
    let settled = |r: &[String]| {
        let n = |x: &str| r.iter().filter(|l| *l == x).count();
        n("start worker_0") == 2
            && n("start worker_1") == 2
            && n("start metrics") == 1
            && n("start migrate") == 1
    };

    let sd = TestDir::new();
    let mut s = Supervisord::start(&bin, &sd, &file);
    s.wait_until("second start of each worker", settled);
    // Nothing more is to happen: the migration ran once, each worker's
    // second run stays up.
    thread::sleep(Duration::from_millis(1500));
    let s_after = s.records();
    let s_code = s.terminate();
    let (s_spawned, s_records) = (s.spawned(), s.records());

    let td = TestDir::new();
    let toml = import_into(&td, &file, &[]);
    let mut p = td.podinit().config(&toml).env("REC", td.rec()).spawn();
    let rec = td.rec();
    p.wait_until("second start of each worker", Duration::from_secs(10), |_| settled(&lines(&rec)));
    thread::sleep(Duration::from_millis(1500));
    p.signal(SIGTERM);
    let out = p.wait();

    let count = |r: &[String], x: &str| r.iter().filter(|l| *l == x).count();
    for who in ["queue", "migrate", "worker_0", "worker_1", "metrics"] {
        let x = format!("start {who}");
        assert_eq!(count(&out.records, &x), count(&s_after, &x), "starts of {who}\n{}", out.report());
    }
    let first = |names: Vec<String>| {
        let mut seen: Vec<String> = Vec::new();
        for n in names {
            let n = n.replace('_', "-");
            if !seen.contains(&n) {
                seen.push(n);
            }
        }
        seen
    };
    assert_eq!(
        first(s_spawned.clone()),
        ["queue", "migrate", "worker-0", "worker-1", "metrics"],
        "{s_spawned:?}"
    );
    assert_eq!(first(started(&out.stderr)), first(s_spawned), "first starts\n{}", out.report());
    // supervisord stops metrics, then both workers, then the queue; podinit
    // stops the mains (metrics and the workers) together, then the queue.
    // (The two workers are one group: supervisord signals both at once.)
    let s_stops = stops(&s_records);
    assert_eq!(s_stops.len(), 4, "{s_records:?}");
    assert_eq!((s_stops[0].as_str(), s_stops[3].as_str()), ("stop metrics", "stop queue"), "{s_records:?}");
    let p_stops = stops(&out.records);
    assert_eq!(p_stops.len(), 4, "{}", out.report());
    assert_eq!(p_stops.last().map(String::as_str), Some("stop queue"), "{}", out.report());
    assert_eq!(s_code, Some(0));
    assert_eq!(out.code, s_code, "{}", out.report());
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(str::to_owned).collect()
}

/// Runs `bin -n` on `conf` and returns its exit status and output, when it
/// exits by itself within 10 s (a file it refuses); kills it otherwise.
fn supervisord_refuses(bin: &Path, td: &TestDir, conf: &Path) -> Option<(Option<i32>, String)> {
    let mut child = Command::new(bin)
        .arg("-n")
        .arg("-c")
        .arg(conf)
        .current_dir(td.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > until {
            send_signal(-(child.id() as i32), SIGKILL);
            let _ = child.wait();
            return None;
        }
        thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Some((out.status.code(), text))
}

/// A `[supervisord]` section that keeps supervisord's files in `td`.
fn daemon_section(td: &TestDir) -> String {
    format!(
        "[supervisord]\nnodaemon=true\nlogfile={}\npidfile={}\nchildlogdir={}\n\n",
        td.file("supervisord.log").display(),
        td.file("supervisord.pid").display(),
        td.path().display()
    )
}

#[test]
fn a_name_supervisord_cannot_expand_is_an_error_at_its_place_and_supervisord_refuses_it_too() {
    for (line, col, needle) in
        [("command=/bin/echo %(nope)s", 19, "%(nope) names nothing"), ("command=date +%Y", 15, "a lone %")]
    {
        let td = TestDir::new();
        let conf = td.write("t.conf", &format!("{}[program:a]\n{line}\n", daemon_section(&td)));
        let out = podinit_import(&[], &conf);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        let at = format!("t.conf:8:{col}: program:a.command: {needle}");
        assert!(stderr.contains(&at), "want {at:?} in:\n{stderr}");
        assert_eq!(stderr.lines().count(), 1, "one error: {stderr}");
        if let Some(bin) = supervisord() {
            let refused = supervisord_refuses(&bin, &td, &conf);
            let (code, text) = refused.unwrap_or_else(|| panic!("supervisord ran {line:?}"));
            assert_ne!(code, Some(0), "{text}");
            assert!(text.contains("program:a.command"), "{text}");
        }
    }
}

#[test]
fn numprocs_without_process_num_is_refused_as_supervisord_refuses_it() {
    let td = TestDir::new();
    let conf =
        td.write("t.conf", &format!("{}[program:a]\ncommand=sleep 1\nnumprocs=2\n", daemon_section(&td)));
    let out = podinit_import(&[], &conf);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("t.conf:8:1: program:a.command: numprocs > 1 needs %(process_num)"), "{stderr}");
    if let Some(bin) = supervisord() {
        let (code, text) =
            supervisord_refuses(&bin, &td, &conf).expect("supervisord ran numprocs=2 without process_num");
        assert_ne!(code, Some(0));
        assert!(text.contains("process_num"), "{text}");
    }
}

/// supervisord 4 starts a program with a key it does not know, without a
/// word: the importer reports the key (with the key it may be a typo of) and
/// goes on, rather than refusing a file supervisord runs.
#[test]
fn a_key_supervisord_does_not_know_is_reported_and_supervisord_ignores_it_too() {
    let td = TestDir::new();
    let conf = td.write(
        "t.conf",
        &format!(
            "{}[program:a]\ncommand=/bin/sh -c 'echo start a >> {}; exec sleep 30'\nautorestrt=true\n",
            daemon_section(&td),
            td.rec().display()
        ),
    );
    let out = podinit_import(&[], &conf);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("t.conf:9:1: program:a.autorestrt: ignored:")
            && stderr.contains("typo of autorestart"),
        "{stderr}"
    );
    if let Some(bin) = supervisord() {
        let mut s = Supervisord::start(&bin, &td, &conf);
        s.wait_until("start of a", |r| r.iter().any(|l| l == "start a"));
        assert_eq!(s.terminate(), Some(0));
    }
}

#[test]
fn an_include_that_matches_nothing_is_reported_and_one_that_leaves_nothing_to_run_is_an_error() {
    let td = TestDir::new();
    std::fs::create_dir(td.file("conf.d")).unwrap();
    td.write("conf.d/web.conf", "[program:web]\ncommand=sleep 30\nautorestart=true\n");
    let conf = td.write("main.conf", "[supervisord]\n\n[include]\nfiles = conf.d/*.conf none/*.conf\n");
    let out = podinit_import(&[], &conf);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("main.conf:4:1: include.files: ignored: no file matches"), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("name = \"web\""));

    let empty = td.write("empty.conf", "[supervisord]\n\n[include]\nfiles = none/*.conf\n");
    let out = podinit_import(&[], &empty);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("empty.conf:4:1: include.files: nothing is left to run"), "{stderr}");
}

/// `environment` (quotes, commas, `:` and `/` in values), expansions in it,
/// and `%(ENV_X)s` in the command, left to the container: the program sees
/// the same values under supervisord and under podinit. (Not with blanks in
/// a variable used in `environment`: supervisord expands it before it splits
/// the list, so `F=%(ENV_X)s` with X="a b" gives F=a and drops `b`, where
/// podinit, which leaves the variable to the container, gives "a b".)
#[test]
fn a_program_sees_the_environment_supervisord_gives_it() {
    let Some(bin) = supervisord() else { return };
    let text = r#"[program:env]
command=/bin/sh -c 'for k in A B C D E F; do eval "echo $k=\$$k"; done >> "$REC"; echo "G=%(ENV_GREETING)s" >> "$REC"; echo done >> "$REC"'
environment=A="x,y",B=2, C='/a:/b',D=http://h:80/p,E="with space",F=%(program_name)s_%(ENV_SUFFIX)s
autorestart=false
startsecs=0
"#;
    let sd = TestDir::new();
    let file = sd.write("env.conf", text);
    let env = [("GREETING", "hello world"), ("SUFFIX", "prod")];
    let mut s = Supervisord::start_with(&bin, &sd, &file, &env);
    s.wait_until("done", |r| r.iter().any(|l| l == "done"));
    assert_eq!(s.terminate(), Some(0));

    let td = TestDir::new();
    let toml = import_into(&td, &file, &[]);
    let mut launcher = td.podinit().config(&toml).env("REC", td.rec());
    for (k, v) in env {
        launcher = launcher.env(k, v);
    }
    let out = launcher.run();
    out.assert_code(0);
    let want =
        ["A=x,y", "B=2", "C=/a:/b", "D=http://h:80/p", "E=with space", "F=env_prod", "G=hello world", "done"];
    assert_eq!(s.records(), want, "supervisord");
    assert_eq!(out.records, want, "podinit\n{}", out.report());
}

#[test]
fn main_names_the_mains_and_the_others_become_sidecars() {
    let file = example("web-stack.conf");
    let out = podinit_import(&["--main", "php-fpm"], &file);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let pod: toml::Table = toml::from_str(&String::from_utf8_lossy(&out.stdout)).unwrap();
    let roles: Vec<(String, String)> = pod["process"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["role"].as_str().unwrap().to_owned()))
        .collect();
    let want = [("php-fpm", "main"), ("nginx", "sidecar"), ("cron", "sidecar")];
    assert_eq!(roles, want.map(|(a, b)| (a.to_owned(), b.to_owned())));

    let out = podinit_import(&["--main", "apache"], &file);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--main apache"));
}

/// `podinit --config supervisord.conf` runs the file through the same
/// reading as `podinit import`.
#[test]
fn podinit_runs_a_supervisord_conf_directly() {
    let td = TestDir::new();
    let mut p = td.podinit().config(&example("web-stack.conf")).env("REC", td.rec()).spawn();
    for a in ["start php-fpm", "start nginx", "start cron"] {
        p.wait_for_record(a, Duration::from_secs(10));
    }
    p.signal(SIGTERM);
    let out = p.wait();
    out.assert_code(0);
    assert_eq!(stops(&out.records), ["stop cron", "stop nginx", "stop php-fpm"], "{}", out.report());
}

#[test]
fn a_sidecar_supervisord_would_not_restart_is_reported() {
    let out = podinit_import(&["--main", "metrics"], &example("workers.conf"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("workers.conf:21:1: program:migrate.autorestart: approximated: migrate is a sidecar"),
        "{stderr}"
    );
}

/// A program that runs a cron daemon is imported as it is, and the report
/// says it could be a scheduled entry.
#[test]
fn a_cron_program_is_pointed_at_scheduled_entries() {
    let td = TestDir::new();
    let conf =
        td.write("t.conf", "[program:cron]\ncommand=/usr/sbin/cron -f\n[program:app]\ncommand=sleep 30\n");
    let out = podinit_import(&[], &conf);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("cron: runs a cron daemon: it could be a scheduled entry (role = \"scheduled\"; docs/configuration.md, \"Scheduled entries\")"),
        "{stderr}"
    );
    assert!(!stderr.contains("app: runs a cron daemon"), "{stderr}");
}
