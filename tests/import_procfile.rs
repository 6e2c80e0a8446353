//! Procfiles imported (`podinit import`, docs/import.md "Procfile") and run
//! with podinit as PID 1, beside honcho (PyPI `honcho`, the Python port of
//! foreman) running the very same Procfile and `.env`: which processes start
//! and in what order, what each one's environment holds (the `.env`, `PORT`),
//! what happens when the first process exits, and the exit status.
//!
//! Needs `honcho` on PATH (`pip install honcho`). Without it the comparisons
//! check podinit alone and say so on stderr, except under `CI=true`, where a
//! missing honcho fails the test.
//!
//! Where podinit differs from honcho on purpose (docs/import.md, "Procfile"),
//! the test asserts both behaviours: Heroku's `release` is an init task that
//! runs first (honcho runs it beside the others and stops them all when it
//! exits); a line that is not `NAME: COMMAND` is an error (honcho skips it);
//! and podinit's exit status follows its own rule (docs/lifecycle.md rule 20)
//! where honcho exits with the status of the first process to exit.

// This harness waits for the processes it starts: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "import")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::*;

const WAIT: Duration = Duration::from_secs(15);

/// honcho on PATH; `None` (with a note) when it is missing, a failure under
/// `CI=true`, where .ci/run installs it.
fn honcho() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).map(|d| d.join("honcho")).find(|p| p.is_file());
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "honcho is not installed: this test compares podinit with it (pip install honcho)"
        );
        eprintln!("note: honcho is not installed (pip install honcho): podinit is checked alone");
    }
    found
}

/// A one-line Procfile command from a shell script (its lines joined by `;`).
fn one_line(script: &str) -> String {
    script.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join("; ")
}

/// `podinit import PROCFILE` (plus `args`) in the test dir, written to
/// `pod.toml` beside the Procfile (so that `env_file = ".env"` finds it).
fn import(td: &TestDir, procfile: &str, args: &[&str]) -> PathBuf {
    let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .arg("import")
        .args(args)
        .arg(procfile)
        .current_dir(td.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "podinit import {procfile} failed:\n{stderr}");
    std::fs::write(td.file("pod.toml"), &out.stdout).unwrap();
    td.file("pod.toml")
}

/// honcho run as PID 1 of a PID namespace, as podinit is (the same harness,
/// record file and deadline).
fn honcho_run(td: &TestDir, honcho: &Path, args: &[&str]) -> Launcher {
    td.podinit().binary(honcho).arg("start").arg("--no-colour").args(args.iter().copied())
}

/// Shell snippet that waits (up to 10 s) until a line of the record file
/// begins with `prefix`.
fn sh_wait_start(prefix: &str) -> String {
    format!(
        r#"i=0; while [ $i -lt 500 ]; do grep -q '^{prefix}' "@REC@" && break; sleep 0.02; i=$((i+1)); done"#
    )
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// A Rails-style Procfile with its `.env`: web and worker see the `.env`
/// values and the `PORT` honcho gives them, start together, and the run ends
/// when the worker finishes, with its status 0, the web server stopped.
/// honcho runs web and worker with `-p 5100`: the PORTs they get in the whole
/// file, where release comes first (`release_runs_first_...` shows why honcho
/// cannot run the whole file here).
#[test]
fn a_rails_style_procfile_and_its_env_run_as_under_honcho() {
    let web = one_line(
        r#"trap 'echo "stop web" >> "@REC@"; exit 0' TERM
        echo "start web PORT=$PORT RAILS_ENV=$RAILS_ENV SECRET=$SECRET_KEY_BASE" >> "@REC@"
        while :; do sleep 0.1; done"#,
    );
    let worker = format!(
        r#"QUEUES=critical sh -c 'echo "start worker PORT=$PORT QUEUES=$QUEUES" >> "@REC@"'; {}; echo "worker done" >> "@REC@""#,
        sh_wait_start("start web ")
    );
    let procfile = format!(
        "# Rails style\nrelease: echo \"release PORT=$PORT RAILS_ENV=$RAILS_ENV\" >> \"@REC@\"\nweb: {web}\nworker:  {worker}   \n"
    );
    let env = "RAILS_ENV=production\nSECRET_KEY_BASE=\"s3cret value\"\nQUEUES=default\n";
    let run_podinit = |td: &TestDir| {
        td.write("Procfile", &procfile);
        td.write(".env", env);
        let toml = import(td, "Procfile", &[]);
        td.podinit().config(&toml).run()
    };
    let td = TestDir::new();
    let out = run_podinit(&td);
    out.assert_code(0);
    let rec = out.records.clone();
    assert_eq!(rec[0], "release PORT=5000 RAILS_ENV=production", "{}", out.report());
    let expected = [
        "start web PORT=5100 RAILS_ENV=production SECRET=s3cret value",
        "start worker PORT=5200 QUEUES=critical",
        "worker done",
        "stop web",
    ];
    assert_eq!(sorted(rec[1..].to_vec()), sorted(expected.map(String::from).to_vec()), "{}", out.report());
    assert!(pos(&rec, "worker done") < pos(&rec, "stop web"));

    let Some(honcho) = honcho() else { return };
    let td = TestDir::new();
    td.write("Procfile", &procfile);
    td.write(".env", env);
    let theirs = honcho_run(&td, &honcho, &["-p", "5100", "web", "worker"]).run();
    theirs.assert_code(0);
    assert_eq!(
        sorted(theirs.records.clone()),
        sorted(expected.map(String::from).to_vec()),
        "{}",
        theirs.report()
    );
    assert!(pos(&theirs.records, "worker done") < pos(&theirs.records, "stop web"));
}

/// Heroku's release phase: podinit runs it first, as an init, and starts web
/// and worker once it exits 0; when it fails, nothing else starts and podinit
/// exits with its status. honcho runs it beside the others and ends the whole
/// run as soon as it exits, with its status.
#[test]
fn release_runs_first_where_honcho_ends_the_run_at_its_exit() {
    let procfile = format!(
        "release: echo release >> \"@REC@\"; exit ${{RELEASE_STATUS:-0}}\nweb: {}\nworker: {}\n",
        one_line(&sleeper("web")),
        one_line(&sleeper("worker"))
    );
    for status in [0, 7] {
        let td = TestDir::new();
        td.write("Procfile", &procfile);
        td.write(".env", &format!("RELEASE_STATUS={status}\n"));
        let toml = import(&td, "Procfile", &[]);
        let mut run = td.podinit().config(&toml).spawn();
        if status == 0 {
            run.wait_for_record("start web", WAIT);
            run.wait_for_record("start worker", WAIT);
            run.signal(SIGTERM);
        }
        let out = run.wait();
        let rec = &out.records;
        if status == 0 {
            out.assert_code(0);
            assert_eq!(rec[0], "release", "{}", out.report());
            assert_eq!(sorted(rec[1..].to_vec()), ["start web", "start worker", "stop web", "stop worker"]);
        } else {
            out.assert_code(7);
            assert_eq!(rec, &["release"], "{}", out.report());
        }

        let Some(honcho) = honcho() else { continue };
        let td = TestDir::new();
        td.write("Procfile", &procfile);
        td.write(".env", &format!("RELEASE_STATUS={status}\n"));
        // web and worker never exit on their own: honcho ending at all means
        // it stopped them when release exited.
        let theirs = honcho_run(&td, &honcho, &[]).run();
        theirs.assert_code(status);
        assert!(theirs.records.contains(&"release".to_owned()), "{}", theirs.report());
        let stopped = theirs.stdout.find("release.1 stopped").expect("honcho reports release's exit");
        let first_term = theirs.stdout.find("sending SIGTERM").expect("honcho stops the others");
        assert!(stopped < first_term, "{}", theirs.report());
    }
}

/// The first process to exit ends the run: the others get SIGTERM (their
/// traps record it) and the status is that process's own, 3, in both.
#[test]
fn the_first_process_to_exit_ends_the_run_with_its_status() {
    let clock = format!(
        "echo \"start clock\" >> \"@REC@\"; {}; {}; echo \"clock exits\" >> \"@REC@\"; exit 3",
        sh_wait_records("start web", 1, 10),
        sh_wait_records("start worker", 1, 10)
    );
    let procfile = format!(
        "web: {}\nclock: {clock}\nworker: {}",
        one_line(&sleeper("web")),
        one_line(&sleeper("worker"))
    );
    let check = |out: &Outcome| {
        out.assert_code(3);
        let rec = &out.records;
        for stop in ["stop web", "stop worker"] {
            assert!(pos(rec, "clock exits") < pos(rec, stop), "{}", out.report());
        }
        assert_eq!(rec.len(), 6, "{}", out.report());
    };
    let td = TestDir::new();
    td.write("Procfile", &procfile);
    let toml = import(&td, "Procfile", &[]);
    check(&td.podinit().config(&toml).run());

    let Some(honcho) = honcho() else { return };
    let td = TestDir::new();
    td.write("Procfile", &procfile);
    check(&honcho_run(&td, &honcho, &[]).run());
}

/// The first process exits 0 and stopping the other kills its shell
/// (status 143): honcho exits 0, the status of the first process to exit;
/// podinit exits 143, the status of the first main in file order that did
/// not exit 0 (docs/lifecycle.md rule 20; docs/import.md says so).
#[test]
fn exit_status_when_the_first_exits_0_and_another_is_killed_differs() {
    let procfile = format!(
        "web: echo \"start web\" >> \"@REC@\"; sleep 60\nonce: {}; echo \"once done\" >> \"@REC@\"\n",
        sh_wait_records("start web", 1, 10)
    );
    let td = TestDir::new();
    td.write("Procfile", &procfile);
    let toml = import(&td, "Procfile", &[]);
    let out = td.podinit().config(&toml).run();
    out.assert_code(143);
    assert_eq!(out.records, ["start web", "once done"], "{}", out.report());

    let Some(honcho) = honcho() else { return };
    let td = TestDir::new();
    td.write("Procfile", &procfile);
    let theirs = honcho_run(&td, &honcho, &[]).run();
    theirs.assert_code(0);
    assert_eq!(theirs.records, ["start web", "once done"], "{}", theirs.report());
}

/// `--main web`: the others are sidecars, started before web and restarted
/// when they exit; the pod ends with web. (honcho has no such option.)
#[test]
fn main_names_the_mains_and_the_others_become_sidecars() {
    let procfile = format!(
        "worker: echo \"start worker\" >> \"@REC@\"; exit 1\nweb: echo \"start web\" >> \"@REC@\"; {}; echo \"web done\" >> \"@REC@\"\n",
        sh_wait_records("start worker", 3, 10)
    );
    let td = TestDir::new();
    td.write("Procfile", &procfile);
    let toml = import(&td, "Procfile", &["--main", "web"]);
    let text = std::fs::read_to_string(&toml).unwrap();
    assert!(text.contains("name = \"worker\"\nrole = \"sidecar\""), "{text}");
    let out = td.podinit().config(&toml).env("PODINIT_LOG", "info").run();
    out.assert_code(0);
    assert!(count(&out.records, "start worker") >= 3, "{}", out.report());
    // worker holds the sequence only until started (no probe): its shell's
    // first line and web's may come in either order, podinit's log not.
    let log = |line: &str| {
        out.stderr.find(line).unwrap_or_else(|| panic!("no {line:?} in podinit's log\n{}", out.report()))
    };
    assert!(log("worker started") < log("web started"), "{}", out.report());
}

/// A line that is not `NAME: COMMAND` (a missing colon) is an error at its
/// place, and nothing starts: `podinit --config Procfile` and `podinit import`
/// both exit 2. honcho skips the line and would run without that process.
#[test]
fn a_typo_is_an_error_and_nothing_starts() {
    let td = TestDir::new();
    td.write("Procfile", "worker: echo worker >> \"@REC@\"\nweb bundle exec puma\n");
    let out = td.podinit().config(&td.file("Procfile")).run();
    out.assert_code(2);
    assert!(out.stderr.contains("Procfile:2:4: expected NAME: COMMAND"), "{}", out.report());
    assert!(out.records.is_empty(), "{}", out.report());
    let imported = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(["import", "Procfile"])
        .current_dir(td.path())
        .output()
        .unwrap();
    assert_eq!(imported.status.code(), Some(2));
    assert!(imported.stdout.is_empty());

    let Some(honcho) = honcho() else { return };
    let check = Command::new(&honcho).arg("check").current_dir(td.path()).output().unwrap();
    let said = String::from_utf8_lossy(&check.stderr).into_owned() + &String::from_utf8_lossy(&check.stdout);
    assert!(check.status.success(), "{said}");
    assert!(said.contains("(worker)"), "honcho takes only worker: {said}");
}

/// examples/import/procfile/rails runs directly (`--config Procfile`):
/// release first, then web and worker with the `.env` values and PORT, and a
/// SIGTERM stops both cleanly (exit 0).
#[test]
fn the_rails_example_runs_as_pid1() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/import/procfile/rails/Procfile");
    let td = TestDir::new();
    let mut run = td.podinit().config(&example).spawn();
    run.wait_until("web and worker up", WAIT, |r| {
        let out = r.stdout();
        entry_lines(&out, "web").iter().any(|l| l == "web: listening on port 5100 (production)")
            && entry_lines(&out, "worker").iter().any(|l| l == "worker: polling default,mailers")
    });
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    let release = out.stdout.find("release | migrated to 20240101000000").expect("release ran");
    let web = out.stdout.find("web: listening").unwrap();
    assert!(release < web, "{}", out.report());
    assert!(entry_lines(&out.stdout, "web").contains(&"web: graceful stop".to_owned()), "{}", out.report());
    assert!(entry_lines(&out.stdout, "worker").contains(&"worker: drained".to_owned()), "{}", out.report());
}

/// examples/import/procfile/clock: the clock enqueues three jobs and exits
/// 0, which ends the run; the worker ran the jobs and is stopped. The same
/// with honcho.
#[test]
fn the_clock_example_ends_when_the_clock_exits() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/import/procfile/clock/Procfile");
    let check = |out: &Outcome, prefix: &str| {
        out.assert_code(0);
        let ran = |n: u32| format!("{prefix}worker: ran job {n}");
        for n in 1..=3 {
            assert!(out.stdout.lines().any(|l| l.ends_with(&ran(n))), "job {n}: {}", out.report());
        }
        assert!(out.stdout.contains("worker: stopping"), "{}", out.report());
    };
    let td = TestDir::new();
    let queue = td.file("queue");
    check(&td.podinit().config(&example).env("QUEUE_DIR", &queue).run(), "| ");

    let Some(honcho) = honcho() else { return };
    let td = TestDir::new();
    let queue = td.file("queue");
    let procfile = example.to_str().unwrap();
    let theirs = honcho_run(&td, &honcho, &["-f", procfile, "-d", td.path().to_str().unwrap()])
        .env("QUEUE_DIR", &queue)
        .run();
    check(&theirs, "| ");
}
