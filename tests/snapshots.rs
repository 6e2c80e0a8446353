//! Snapshots of what podinit says to people: `--help`, the start plan of
//! `podinit check`, and config error messages. A change of wording shows up
//! here as a reviewed change (STYLE.md "Tests"). `cargo insta review` or
//! `INSTA_UPDATE=always cargo test --test snapshots` updates them.

use std::process::{Command, Stdio};

fn podinit(args: &[&str]) -> (i32, String, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("PODINIT_CONFIG")
        .env_remove("PODINIT_LOG_FORMAT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("podinit starts");
    // A helper process of the test, not a child of podinit: the one-waiter rule
    // of clippy.toml is about podinit's own code.
    #[allow(clippy::disallowed_methods)]
    let out = child.wait_with_output().expect("podinit ends");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn help() {
    let (code, out, _) = podinit(&["--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

/// `podinit status --help`: its report options.
#[test]
fn status_help() {
    let (code, out, _) = podinit(&["status", "--help"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!(out);
}

#[test]
fn check_prints_the_start_plan_of_the_examples() {
    for example in ["batch-job", "web-app"] {
        let path = format!("examples/{example}/podinit.toml");
        let (code, out, err) = podinit(&["check", "--config", &path]);
        assert_eq!(code, 0, "{err}");
        insta::assert_snapshot!(format!("check_{}", example.replace('-', "_")), out);
    }
}

#[test]
fn config_errors_name_file_line_column_and_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("pod.toml");
    std::fs::write(
        &path,
        r#"[pod]
termination_grace_period = "10parsecs"

[[process]]
name = "Proxy"
role = "sidecar"
command = []
startup_probe = { tcp_socket = { port = 1 }, success_threshold = 2 }
"#,
    )
    .expect("write config");
    let (code, out, err) = podinit(&["check", "--config", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    insta::assert_snapshot!(err.replace(path.to_str().unwrap_or_default(), "pod.toml"));

    std::fs::write(
        &path,
        "[[process]]\nname = \"a\"\ncommand = \"true\"\nstartup_probe = { exec = { command = [\"true\"] }, perod = \"1s\" }\n",
    )
    .expect("write config");
    let (code, _, err) = podinit(&["check", "--config", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, 2);
    insta::assert_snapshot!("unknown_nested_key", err.replace(path.to_str().unwrap_or_default(), "pod.toml"));
}
