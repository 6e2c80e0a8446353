//! `podinit reload` (docs/control.md, "Reload") against the real binary as
//! PID 1: the config file is rewritten while the pod runs, and podinit
//! restarts what changed, starts what was added, stops what was removed,
//! never re-runs a finished init, and changes nothing for an invalid file or
//! once termination has begun.
// The tests wait for the clients they start.
#![allow(clippy::disallowed_methods)]

mod common;
use common::*;

use std::process::{Command, Stdio};
use std::time::Duration;

fn client(td: &TestDir, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(args)
        .arg("--socket")
        .arg(td.file("status.sock"))
        .stdin(Stdio::null())
        .output()
        .expect("run the podinit client");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A long-running entry that records `start NAME VERSION` and `stop NAME`.
fn versioned(name: &str, version: &str) -> String {
    format!(
        r#"trap 'echo "stop {name}" >> "@REC@"; exit 0' TERM
echo "start {name} {version}" >> "@REC@"
while :; do sleep 0.1; done"#
    )
}

fn config(sidecars: &[(&str, &str)], init: &str, app: &str) -> String {
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("init", "init", &format!("echo \"init {init}\" >> \"@REC@\""), "");
    for (name, version) in sidecars {
        let pre_stop = format!(
            r#"pre_stop = {{ exec = {{ command = ["sh", "-c", "echo 'pre_stop {name}' >> '@REC@'"] }} }}"#
        );
        cfg += &entry(name, "sidecar", &versioned(name, version), &pre_stop);
    }
    cfg += &entry("app", "main", &versioned("app", app), "");
    cfg
}

#[test]
fn reload_applies_a_changed_config_as_kubernetes_applies_a_changed_spec() {
    let td = TestDir::new();
    let path = td.config(&config(&[("side", "v1"), ("gone", "v1")], "v1", "v1"));
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    // The sidecars have no probe: each holds the start sequence only until
    // its process runs (docs/lifecycle.md rule 3), so the main's line may
    // come before theirs, and a reload before their own lines could stop a
    // shell that has no TERM trap yet.
    for line in ["start side v1", "start gone v1", "start app v1"] {
        run.wait_for_record(line, secs(10.0));
    }

    td.config(
        &config(&[("side", "v2"), ("extra", "v1")], "v2", "v2")
            .replace("\"3s\"", "\"4s\"")
            .replace("[pod]\n", "[pod]\nhttp = \"127.0.0.1:1\"\n"),
    );
    let (code, stdout, stderr) = client(&td, &["reload"]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    for want in [
        "init changed: it has finished and is not run again",
        "side changed: restarting it with its new settings",
        "app changed: restarting it with its new settings",
        "gone removed: stopping it",
        "extra added: starting it",
        "[pod] termination_grace_period changed: it applies from now on",
        "[pod] http changed: it is read at start only",
    ] {
        assert!(stdout.contains(want), "{want:?} missing from:\n{stdout}");
    }
    run.wait_for_record("start side v2", secs(10.0));
    run.wait_for_record("start app v2", secs(10.0));
    run.wait_for_record("start extra v1", secs(10.0));
    run.wait_for_record("stop gone", secs(10.0));
    // gone's trap writes its line before it exits; the entry leaves the
    // status once podinit has seen the exit.
    run.wait_until("a removed entry to leave the status", secs(10.0), |_| {
        !client(&td, &["status"]).1.lines().any(|l| l.starts_with("gone "))
    });

    // Nothing changed: nothing is touched.
    let before = td.records().len();
    let (code, stdout, _) = client(&td, &["reload"]);
    assert_eq!((code, stdout.trim()), (Some(0), "nothing changed"));

    // An invalid file is refused with its errors; nothing changes.
    td.config("[[process]]\nname = \"app\"\ncommand = 'true'\nbogus = 1\n");
    let (code, _, stderr) = client(&td, &["reload"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("nothing changed") && stderr.contains("pod.toml:4:1"), "{stderr}");
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(td.records().len(), before, "{:?}", td.records());

    run.signal(libc::SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    let r = &out.records;
    assert_eq!(count(r, "init v1"), 1, "the init ran once: {r:?}");
    assert_eq!(count(r, "init v2"), 0, "a finished init is never run again: {r:?}");
    // The changed sidecar went through its stop path: pre_stop, then its stop.
    let side_stop = pos(r, "stop side");
    assert!(pos(r, "pre_stop side") < side_stop && side_stop < pos(r, "start side v2"), "{r:?}");
    assert!(pos(r, "pre_stop gone") < pos(r, "stop gone"), "{r:?}");
    assert_eq!(count(r, "start gone v1"), 1, "a removed entry is not started again: {r:?}");
}

#[test]
fn reload_changes_nothing_once_termination_has_begun() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"4s\"\n\n");
    cfg += &entry("app", "main", &versioned("app", "v1"), r#"pre_stop = { sleep = "2s" }"#);
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    run.wait_for_record("start app v1", secs(10.0));
    run.signal(libc::SIGTERM);
    run.wait_for_stderr_containing("SIGTERM received: terminating the pod", secs(10.0));
    td.config(&cfg.replace("v1", "v2").replace("[pod]", "[pod]\n# changed"));
    let (code, _, stderr) = client(&td, &["reload"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("termination has begun"), "{stderr}");
    let out = run.wait();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app v1", "stop app"], "{}", out.report());
}

#[test]
fn reload_of_a_plain_init_is_refused() {
    let td = TestDir::new();
    let mut run = td
        .podinit()
        .args(["--", "sh", "-c", "echo started >> \"$0\"; sleep 30"])
        .arg(td.rec())
        // A plain init has a status socket only when one is named.
        .env("PODINIT_STATUS_SOCKET", td.file("status.sock"))
        .deadline(secs(30.0))
        .spawn();
    run.wait_for_record("started", secs(10.0));
    let (code, _, stderr) = client(&td, &["reload"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(stderr.contains("nothing to reload"), "{stderr}");
    run.signal(libc::SIGTERM);
    let _ = run.wait();
}

/// podinit has left its start directory for `/` by the time of a reload, yet
/// a relative `working_dir` still means the same directory: the reloaded
/// config is valid, and the entry it changes starts there again.
#[test]
fn reload_takes_a_relative_working_dir_from_the_start_directory() {
    let td = TestDir::new();
    std::fs::create_dir(td.file("sub")).unwrap();
    let side = |version: &str| {
        format!(
            "[pod]\ntermination_grace_period = \"3s\"\n\n{}{}",
            entry(
                "side",
                "sidecar",
                &format!("pwd >> \"@DIR@/side.cwd\"\n{}", versioned("side", version)),
                "working_dir = \"sub\""
            ),
            entry("app", "main", &versioned("app", "v1"), "")
        )
    };
    let path = td.config(&side("v1"));
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    // side's first shell writes its directory before its start line, which
    // may come after app's (no probe: docs/lifecycle.md rule 3).
    run.wait_for_record("start side v1", secs(10.0));
    run.wait_for_record("start app v1", secs(10.0));
    td.config(&side("v2"));
    let (code, out, err) = client(&td, &["reload"]);
    assert_eq!(code, Some(0), "{out}{err}");
    run.wait_for_record("start side v2", secs(10.0));
    run.signal(libc::SIGTERM);
    run.wait().assert_code(0);
    let sub = td.file("sub").canonicalize().unwrap();
    let cwds = std::fs::read_to_string(td.file("side.cwd")).unwrap();
    assert_eq!(cwds.lines().collect::<Vec<_>>(), [sub.to_str().unwrap(); 2], "v1, then v2");
}
