//! An init task hands environment to the entries after it (the need behind
//! KEP-3721): it writes KEY=VALUE lines to the file `$PODINIT_ENV_FILE` names.
//! Real binary as PID 1.

mod common;

use common::*;

#[test]
fn an_init_hands_env_to_the_entries_after_it_and_never_logs_values() {
    let td = TestDir::new();
    let side = r#"echo "side TOKEN=${TOKEN:-unset}" >> "@REC@"
trap 'exit 0' TERM
while :; do sleep 0.05; done"#;
    let init = r#"echo "TOKEN=s3cret-value" >> "$PODINIT_ENV_FILE"
echo "SHARED=from-init" >> "$PODINIT_ENV_FILE""#;
    let main = r#"echo "app TOKEN=$TOKEN SHARED=$SHARED FILE=${PODINIT_ENV_FILE:-unset}" >> "@REC@""#;
    // The sidecar holds the sequence until it has written its line: without
    // a probe it would hold it only until its process runs (docs/lifecycle.md
    // rule 3), and the init and the main could run and end the pod first.
    let recorded = r#"startup_probe = { exec = { command = ["grep", "-q", "^side TOKEN=", "@REC@"] }, period = "50ms", failure_threshold = 400 }"#;
    let cfg = td.config(&format!(
        "[pod]\ntermination_grace_period = \"2s\"\n\n{}{}{}",
        entry("side", "sidecar", side, recorded),
        entry("secrets", "init", init, ""),
        entry("app", "main", main, "env = { SHARED = \"from-config\" }")
    ));
    let out = td.podinit().config(&cfg).run();
    out.assert_code(0);
    assert!(
        out.records.contains(&"side TOKEN=unset".to_string()),
        "a sidecar started before the init gets nothing\n{}",
        out.report()
    );
    assert!(
        out.records.contains(&"app TOKEN=s3cret-value SHARED=from-config FILE=unset".to_string()),
        "the main gets the init's values, its own env wins, and only inits get PODINIT_ENV_FILE\n{}",
        out.report()
    );
    assert!(out.stderr.contains("secrets wrote TOKEN, SHARED"), "{}", out.report());
    assert!(!out.stderr.contains("s3cret-value"), "a value reached the log\n{}", out.report());
}

#[test]
fn an_env_file_that_does_not_parse_fails_the_init() {
    let td = TestDir::new();
    let cfg = td.config(&format!(
        "[pod]\nrestart_policy = \"Never\"\n\n{}{}",
        entry("secrets", "init", r#"echo "this is not KEY=VALUE" >> "$PODINIT_ENV_FILE""#, ""),
        entry("app", "main", r#"echo "start app" >> "@REC@""#, "")
    ));
    let out = td.podinit().config(&cfg).run();
    out.assert_code(1);
    assert!(!out.records.contains(&"start app".to_string()), "{}", out.report());
    assert!(out.stderr.contains("the init counts as failed"), "{}", out.report());
}

/// An init that puts a FIFO (or a symbolic link) where its env file goes
/// cannot make podinit wait for a writer or read a file it chose: the init
/// counts as failed and podinit goes on answering.
#[test]
fn an_env_file_that_is_a_fifo_or_a_symlink_fails_the_init_without_hanging() {
    for trick in ["mkfifo \"$PODINIT_ENV_FILE\"", "ln -s /etc/passwd \"$PODINIT_ENV_FILE\""] {
        let td = TestDir::new();
        let cfg = td.config(&format!(
            "[pod]\nrestart_policy = \"Never\"\n\n{}{}",
            entry("secrets", "init", &format!("rm -f \"$PODINIT_ENV_FILE\"; {trick}"), ""),
            entry("app", "main", r#"echo "start app" >> "@REC@""#, "")
        ));
        let out = td.podinit().deadline(secs(10.0)).config(&cfg).run();
        out.assert_code(1);
        assert!(out.stderr.contains("the init counts as failed"), "{trick}\n{}", out.report());
        assert!(!out.records.contains(&"start app".to_string()), "{}", out.report());
    }
}
