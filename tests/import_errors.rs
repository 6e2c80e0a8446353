//! Bad input in every format podinit reads gets one clear error with its
//! place and exit status 2, and nothing starts: wrong types, unknown keys,
//! a YAML bomb of anchors and aliases, a file far larger than any config
//! (each format's own cycles and expansions are tested beside its reader).

// This harness waits for the podinit it starts: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "import")]

mod common;

use std::process::Command;

use common::TestDir;

/// Runs `podinit import --from FORMAT FILE` and `podinit --config FILE`
/// (the run, not a check: nothing may start) on `text`; both must exit 2
/// with `want` on stderr, and the record file must stay empty.
fn refused(format: &str, name: &str, text: &str, want: &str) {
    let td = TestDir::new();
    let file = td.write(name, text);
    refused_file(&td, format, name, &file, want);
}

/// As [`refused`], for a file already in `td`.
fn refused_file(td: &TestDir, format: &str, name: &str, file: &std::path::Path, want: &str) {
    let import = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .args(["import", "--from", format])
        .arg(file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&import.stderr);
    assert_eq!(import.status.code(), Some(2), "import {name}: {stderr}");
    assert!(stderr.contains(want), "import {name}: want {want:?} in:\n{stderr}");
    assert!(import.stdout.is_empty(), "import {name} wrote TOML although it failed");
    let run = td.podinit().config(file).run();
    assert_eq!(run.code, Some(2), "run {name}: {}", run.stderr);
    assert!(run.stderr.contains(want), "run {name}: want {want:?} in:\n{}", run.stderr);
    assert!(td.records().is_empty(), "{name}: something ran: {:?}", td.records());
}

#[test]
fn wrong_types_are_refused_with_their_place_in_every_format() {
    refused(
        "kubernetes",
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: a\n      command: [\"sh\", \"-c\", \"echo x >> @REC@\"]\n      env:\n        - name: N\n          value: 3\n",
        "pod.yaml:9:18: spec.containers[0].env[0].value: expected a string, found a number",
    );
    refused(
        "compose",
        "compose.yaml",
        "services:\n  a:\n    command: [\"sh\", \"-c\", \"echo x >> @REC@\"]\n    healthcheck:\n      retries: many\n",
        "compose.yaml:5:",
    );
    refused(
        "process-compose",
        "process-compose.yaml",
        "processes:\n  a:\n    command: \"echo x >> @REC@\"\n    availability:\n      max_restarts: [1]\n",
        "process-compose.yaml:5:",
    );
}

#[test]
fn unknown_keys_are_refused_with_their_place_in_every_format() {
    refused(
        "kubernetes",
        "pod.yaml",
        "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n    - name: a\n      comand: [\"sh\", \"-c\", \"echo x >> @REC@\"]\n",
        "pod.yaml:6:7: spec.containers[0].comand: unknown field",
    );
    refused(
        "compose",
        "compose.yaml",
        "services:\n  a:\n    command: [\"sh\", \"-c\", \"echo x >> @REC@\"]\n    restrat: always\n",
        "compose.yaml:4:5",
    );
    refused(
        "process-compose",
        "process-compose.yaml",
        "processes:\n  a:\n    command: \"echo x >> @REC@\"\n    avilability: {}\n",
        "process-compose.yaml:4:5",
    );
    refused("procfile", "Procfile", "web: echo x >> @REC@\nnot a process line\n", "Procfile:2:");
}

/// Nine levels of ten aliases each: a billion nodes once expanded.
fn bomb(prefix: &str) -> String {
    let mut text = String::from(prefix);
    text.push_str("x-a0: &a0 [\"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\", \"x\"]\n");
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!(
            "x-a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    text
}

#[test]
fn a_yaml_bomb_is_one_error_in_every_yaml_format() {
    let want = "more than 1000000 YAML nodes";
    refused("kubernetes", "pod.yaml", &bomb("apiVersion: v1\nkind: Pod\n"), want);
    refused("compose", "compose.yaml", &bomb("services:\n  a:\n    command: [\"true\"]\n"), want);
    refused(
        "process-compose",
        "process-compose.yaml",
        &bomb("processes:\n  a:\n    command: \"true\"\n"),
        want,
    );
}

#[test]
fn a_file_of_100_mb_is_refused_unread_in_every_format() {
    for (format, name) in [
        ("kubernetes", "pod.yaml"),
        ("compose", "compose.yaml"),
        ("supervisord", "supervisord.conf"),
        ("procfile", "Procfile"),
        ("process-compose", "process-compose.yaml"),
    ] {
        let td = TestDir::new();
        let file = td.file(name);
        // A sparse file: 100 MB of zero bytes that take no disk.
        std::fs::File::create(&file).unwrap().set_len(100 << 20).unwrap();
        refused_file(&td, format, name, &file, "larger than 4 MiB");
    }
}
