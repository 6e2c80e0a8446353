//! Inputs a new user tried that podinit once got wrong (a panic at run time,
//! memory without limit, a header injected into probes, errors without a
//! place): each is now refused before anything starts, with exit 2 and one
//! message naming file, line, column and key.

use std::process::{Command, Stdio};

fn podinit(args: &[&str], env: &[(&str, &str)]) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_podinit"));
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.env_remove("PODINIT_CONFIG").env_remove("PODINIT_LOG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = cmd.spawn().expect("podinit starts");
    // A helper process of the test, not a child of podinit: the one-waiter rule
    // of clippy.toml is about podinit's own code.
    #[allow(clippy::disallowed_methods)]
    let out = child.wait_with_output().expect("podinit ends");
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

fn check(text: &[u8]) -> (i32, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("pod.toml");
    std::fs::write(&path, text).expect("write config");
    let (code, out) = podinit(&["check", "--config", path.to_str().expect("utf-8")], &[]);
    (code, out, dir)
}

#[test]
fn durations_too_long_for_the_clock_are_refused() {
    // 400 years, in hours: the duration grammar's largest unit.
    for value in ["9223372036854775807", "\"3504000h\""] {
        for key in ["[pod]\ntermination_grace_period", "[pod]\nbackoff.max"] {
            let text = format!("{key} = {value}\n[[process]]\nname = \"a\"\ncommand = \"true\"\n");
            let (code, out, _d) = check(text.as_bytes());
            assert_eq!(code, 2, "{text}\n{out}");
            assert!(out.contains("pod.toml:2:") && out.contains("too long"), "{out}");
        }
    }
    let (code, out, _d) = check(
        b"[[process]]\nname = \"a\"\ncommand = \"true\"\nliveness_probe = { exec = { command = [\"true\"] }, initial_delay = 99999999999 }\n",
    );
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("pod.toml:4:") && out.contains("initial_delay"), "{out}");
}

#[test]
fn an_endless_config_file_is_refused_not_read_into_memory() {
    let (code, out) = podinit(&["check", "--config", "/dev/zero"], &[]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("/dev/zero") && out.contains("larger than"), "{out}");
}

#[test]
fn an_endless_env_file_is_refused_at_its_key() {
    let (code, out, _d) = check(b"[[process]]\nname = \"a\"\ncommand = \"true\"\nenv_file = \"/dev/zero\"\n");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("pod.toml:4:12: process[1].env_file:") && out.contains("larger than"), "{out}");
}

#[test]
fn a_config_that_is_not_utf8_is_refused_at_its_line_and_column() {
    let (code, out, _d) = check(b"[[process]]\nname = \"a\xff\"\ncommand = \"true\"\n");
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("pod.toml:2:10:") && out.contains("not UTF-8"), "{out}");
}

#[test]
fn probe_headers_and_hosts_that_would_break_the_request_are_refused() {
    let cases: [(&str, &str); 4] = [
        (r#"headers = { "X-A" = "ok\r\nInjected: yes" }"#, "CR, LF or NUL"),
        (r#"headers = { "Bad Name" = "x" }"#, "not a valid HTTP field name"),
        (r#"host = """#, "not a host name"),
        (r#"path = "/a b""#, "must not contain spaces"),
    ];
    for (field, want) in cases {
        let text = format!(
            "[[process]]\nname = \"a\"\ncommand = \"true\"\nreadiness_probe = {{ http_get = {{ port = 80, {field} }} }}\n"
        );
        let (code, out, _d) = check(text.as_bytes());
        assert_eq!(code, 2, "{field}\n{out}");
        assert!(out.contains("pod.toml:4:") && out.contains(want), "{field}\n{out}");
    }
}

#[test]
fn a_status_socket_path_too_long_for_a_unix_socket_is_refused() {
    let text = format!(
        "[pod]\nstatus_socket = \"/tmp/{}\"\n[[process]]\nname = \"a\"\ncommand = \"true\"\n",
        "s".repeat(120)
    );
    let (code, out, _d) = check(text.as_bytes());
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("pod.toml:2:17: pod.status_socket:"), "{out}");
}

#[test]
fn errors_of_meaning_come_in_file_order() {
    let (code, out, _d) = check(
        b"[[process]]\nname = \"B\"\ncommand = []\n[[process]]\nname = \"c\"\ncommand = \"x\"\nliveness_probe = { exec = { command = [\"x\"] }, success_threshold = 2 }\n",
    );
    assert_eq!(code, 2, "{out}");
    let lines: Vec<usize> =
        out.lines().filter_map(|l| l.split(':').nth(3).and_then(|n| n.trim().parse().ok())).collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}\n{out}");
}

#[test]
fn an_empty_podinit_config_variable_counts_as_unset() {
    let (code, out) = podinit(&["--", "sh", "-c", "echo plain-line; exit 4"], &[("PODINIT_CONFIG", "")]);
    assert_eq!(code, 4, "{out}");
    // A plain init passes the command's output untouched, as tini does.
    assert!(out.lines().any(|l| l == "plain-line"), "{out}");
    assert!(!out.contains("a value is required"), "{out}");
    // A plain init is as quiet as tini: no info lines.
    assert!(!out.contains("podinit | main started"), "{out}");
}

#[test]
fn a_relative_env_file_is_read_from_the_config_files_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("app.env"), "GREETING=hello-from-env-file\n").expect("env file");
    let path = dir.path().join("pod.toml");
    std::fs::write(
        &path,
        "[[process]]\nname = \"a\"\nenv_file = \"app.env\"\ncommand = \"echo $GREETING\"\n",
    )
    .expect("config");
    let (code, out) = podinit(&["--config", path.to_str().expect("utf-8")], &[]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("hello-from-env-file"), "{out}");
}
