//! The exit statuses (docs/signals.md): 0, N, 128+N, 127, 126, 2, and plain-init mode.

mod common;
use common::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;

fn one_main(td: &TestDir, script: &str) -> std::path::PathBuf {
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", script, "");
    td.config(&cfg)
}

#[test]
fn main_exit_status_is_podinit_exit_status() {
    for code in [0, 1, 3, 42, 255] {
        let td = TestDir::new();
        let path = one_main(&td, &format!("exit {code}"));
        td.podinit().config(&path).deadline(secs(10.0)).run().assert_code(code);
    }
}

#[test]
fn main_killed_by_sigkill_gives_137() {
    let td = TestDir::new();
    let path = one_main(&td, "kill -KILL $$");
    td.podinit().config(&path).deadline(secs(10.0)).run().assert_code(137);
}

#[test]
fn main_killed_by_its_own_sigterm_gives_143() {
    let td = TestDir::new();
    let path = one_main(&td, "kill -TERM $$");
    td.podinit().config(&path).deadline(secs(10.0)).run().assert_code(143);
}

/// Pod completed: the status of the first main in FILE order whose last run
/// did not exit 0 (not the first to fail in time).
#[test]
fn first_failing_main_in_file_order_decides_the_status() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("ok", "main", "exit 0", "");
    cfg += &entry("late", "main", "sleep 0.4\nexit 5", "");
    cfg += &entry("early", "main", "exit 6", "");
    let path = td.config(&cfg);
    td.podinit().config(&path).deadline(secs(10.0)).run().assert_code(5);
}

#[test]
fn program_not_found_gives_127_and_names_the_entry_and_path() {
    let td = TestDir::new();
    let cfg = r#"[[process]]
name = "webapp"
command = ["/nonexistent/dir/server", "--port", "80"]
"#;
    let path = td.config(cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(127);
    assert!(out.stderr.contains("webapp"), "message must name the entry\n{}", out.report());
    assert!(out.stderr.contains("/nonexistent/dir/server"), "message must name the path\n{}", out.report());
}

#[test]
fn program_not_executable_gives_126_and_names_the_entry_and_path() {
    let td = TestDir::new();
    let prog = td.write("not-exec.sh", "#!/bin/sh\nexit 0\n");
    fs::set_permissions(&prog, fs::Permissions::from_mode(0o644)).unwrap();
    let cfg = format!("[[process]]\nname = \"webapp\"\ncommand = [\"{}\"]\n", prog.display());
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(126);
    assert!(out.stderr.contains("webapp"), "message must name the entry\n{}", out.report());
    assert!(out.stderr.contains(prog.to_str().unwrap()), "message must name the path\n{}", out.report());
}

#[test]
fn bad_config_gives_2() {
    let td = TestDir::new();
    let path = td.config("[[process]]\nname = \"app\"\ncommand = [\"true\"]\nbogus = 1\n");
    td.podinit().config(&path).deadline(secs(10.0)).run().assert_code(2);
}

#[test]
fn plain_init_mode_propagates_the_command_status() {
    let td = TestDir::new();
    td.podinit().args(["--", "sh", "-c", "exit 7"]).deadline(secs(10.0)).run().assert_code(7);
}

#[test]
fn plain_init_mode_program_not_found_gives_127() {
    let td = TestDir::new();
    let out = td.podinit().args(["--", "/nonexistent/prog"]).deadline(secs(10.0)).run();
    out.assert_code(127);
    assert!(out.stderr.contains("/nonexistent/prog"), "{}", out.report());
}

#[test]
fn plain_init_mode_signal_death_gives_128_plus_n() {
    let td = TestDir::new();
    td.podinit().args(["--", "sh", "-c", "kill -KILL $$"]).deadline(secs(10.0)).run().assert_code(137);
}
