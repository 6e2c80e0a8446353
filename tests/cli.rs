//! The command line (README) command line: --config / PODINIT_CONFIG, the command after `--`,
//! --help, --version, usage errors.

mod common;
use common::*;

#[test]
fn podinit_config_env_is_used_without_flag() {
    let td = TestDir::new();
    let path = td.config("[[process]]\nname = \"app\"\ncommand = \"echo ran >> @REC@\"\n");
    let out = td.podinit().env("PODINIT_CONFIG", &path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["ran"], "{}", out.report());
}

/// The command after `--` is added as a main named `main`, after the
/// configured sidecars have started; a config with no main of its own is
/// then valid.
#[test]
fn command_after_double_dash_becomes_a_main_named_main() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("side", "sidecar", &sleeper_up("side"), &up_probe("side"));
    let path = td.config(&cfg);
    let out = td
        .podinit()
        .config(&path)
        .args(["--", "sh", "-c", "echo from-cmd; echo \"start cmd\" >> \"$0\"", td.rec().to_str().unwrap()])
        .deadline(secs(10.0))
        .run();
    out.assert_code(0);
    assert_eq!(out.stdout_of("main"), vec!["from-cmd"], "{}", out.report());
    assert_eq!(out.records, vec!["start side", "start cmd", "stop side"], "{}", out.report());
}

#[test]
fn plain_init_mode_runs_the_command() {
    let td = TestDir::new();
    let out = td
        .podinit()
        .args(["--", "sh", "-c", "echo plain >> \"$0\"", td.rec().to_str().unwrap()])
        .deadline(secs(10.0))
        .run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["plain"], "{}", out.report());
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let td = TestDir::new();
    let out = td
        .podinit_not_pid1()
        .args(["--no-such-flag", "--", "touch", td.file("started").to_str().unwrap()])
        .deadline(secs(10.0))
        .run();
    out.assert_code(2);
    assert!(!td.file("started").exists(), "{}", out.report());
    assert!(out.stderr.contains("--no-such-flag"), "{}", out.report());
}

#[test]
fn missing_config_file_is_refused_with_2() {
    let td = TestDir::new();
    let missing = td.file("nope.toml");
    let out = td.podinit().config(&missing).deadline(secs(10.0)).run();
    out.assert_code(2);
    assert!(out.stderr.contains(missing.to_str().unwrap()), "{}", out.report());
}

#[test]
fn help_and_version() {
    let td = TestDir::new();
    let out = td.podinit_not_pid1().arg("--help").deadline(secs(10.0)).run();
    out.assert_code(0);
    assert!(out.stdout.contains("--config"), "{}", out.report());
    let out = td.podinit_not_pid1().arg("--version").deadline(secs(10.0)).run();
    out.assert_code(0);
    assert!(out.stdout.contains(env!("CARGO_PKG_VERSION")), "{}", out.report());
}
