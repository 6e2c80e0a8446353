//! The warnings of `podinit check` (docs/configuration.md, "Warnings"): each
//! names FILE:LINE:COL, the key and the warning; `--deny-warnings` makes them
//! errors (exit 2); `allow_warnings` and `--allow` silence them; a run starts
//! whatever they say.

mod common;
use common::*;

/// A main that records its start: no warning of its own.
const APP: &str = "[[process]]\nname = \"app\"\ncommand = \"echo app >> @REC@\"\n";

/// One config per warning: the TOML, the text on the line it must point at,
/// the key, and the warning's name.
fn cases() -> Vec<(String, &'static str, &'static str, &'static str)> {
    vec![
        (
            format!(
                "[[process]]\nname = \"side\"\nrole = \"sidecar\"\ncommand = \"sleep 30\"\nhold_until = \"started\"\nreadiness_probe = {{ exec = {{ command = [\"true\"] }} }}\n\n{APP}"
            ),
            "readiness_probe",
            "process[1].readiness_probe",
            "readiness-gates-nothing",
        ),
        (
            format!(
                "[[process]]\nname = \"side\"\nrole = \"sidecar\"\ncommand = \"sleep 30\"\nreadiness_probe = {{ exec = {{ command = [\"true\"] }}, period = \"1s\", timeout = \"5s\" }}\n\n{APP}"
            ),
            "timeout = \"5s\"",
            "process[1].readiness_probe.timeout",
            "timeout-over-period",
        ),
        (
            format!("[pod]\ntermination_grace_period = \"30s\"\n\n{APP}"),
            "termination_grace_period",
            "pod.termination_grace_period",
            "grace-over-docker-stop",
        ),
        (
            format!(
                "{APP}liveness_probe = {{ exec = {{ command = [\"true\"] }}, period = \"1s\", failure_threshold = 3 }}\n"
            ),
            "liveness_probe",
            "process[1].liveness_probe",
            "liveness-without-startup",
        ),
        (
            format!("{APP}\n[[process]]\nname = \"other\"\ncommand = [\"/no/such/binary\"]\n"),
            "/no/such/binary",
            "process[2].command",
            "program-not-found",
        ),
    ]
}

#[test]
fn each_warning_is_printed_alone_with_its_place_and_the_plan_still_is() {
    for (toml, needle, key, name) in cases() {
        let td = TestDir::new();
        let path = td.config(&toml);
        let text = std::fs::read_to_string(&path).unwrap();
        let (line, _col) = text
            .lines()
            .enumerate()
            .find_map(|(i, l)| l.find(needle).map(|c| (i + 1, c + 1)))
            .unwrap_or_else(|| panic!("{needle:?} not in {text}"));
        let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
        let ctx = format!("{name}:\n{text}\n{}", out.report());
        assert_eq!(out.code, Some(0), "{ctx}");
        assert!(out.stdout.contains(": valid\n"), "{ctx}");
        let lines: Vec<&str> = out.stderr.lines().collect();
        assert_eq!(lines.len(), 1, "exactly one warning\n{ctx}");
        let prefix = format!("podinit: warning: {}:{line}:", path.display());
        assert!(lines[0].starts_with(&prefix), "want {prefix:?}\n{ctx}");
        // The column points at the value or table, on that line.
        let after = &lines[0][prefix.len()..];
        let at: usize = after.split(':').next().unwrap().parse().unwrap();
        assert!(at >= 1 && at <= text.lines().nth(line - 1).unwrap().len() + 1, "{ctx}");
        assert!(after.contains(&format!(": {key}: ")), "want key {key}\n{ctx}");
        assert!(lines[0].ends_with(&format!("[{name}]")), "want [{name}]\n{ctx}");
    }
}

#[test]
fn deny_warnings_exits_2_without_the_plan() {
    for (toml, _, key, name) in cases() {
        let td = TestDir::new();
        let path = td.config(&toml);
        let out = td
            .podinit_not_pid1()
            .arg("check")
            .arg("--deny-warnings")
            .config(&path)
            .deadline(secs(10.0))
            .run();
        let ctx = format!("{name}:\n{}", out.report());
        assert_eq!(out.code, Some(2), "{ctx}");
        assert!(out.stdout.is_empty(), "{ctx}");
        assert!(out.stderr.starts_with("podinit: config error: ") && out.stderr.contains(key), "{ctx}");
        assert!(out.stderr.contains(&format!("[{name}]")), "{ctx}");
    }
    // Without a warning, --deny-warnings changes nothing.
    let td = TestDir::new();
    let path = td.config(APP);
    let out =
        td.podinit_not_pid1().arg("check").arg("--deny-warnings").config(&path).deadline(secs(10.0)).run();
    assert_eq!(out.code, Some(0), "{}", out.report());
    assert!(out.stderr.is_empty(), "{}", out.report());
}

#[test]
fn allow_warnings_and_allow_silence_them() {
    for (toml, _, _, name) in cases() {
        // In [pod] (a second [pod] table would not parse: the grace case
        // has one already).
        let in_pod = if toml.starts_with("[pod]\n") {
            toml.replacen("[pod]\n", &format!("[pod]\nallow_warnings = [\"{name}\"]\n"), 1)
        } else {
            format!("[pod]\nallow_warnings = [\"{name}\"]\n\n{toml}")
        };
        // On the command line.
        for (text, args) in [(in_pod, vec![]), (toml.clone(), vec!["--allow", name])] {
            let td = TestDir::new();
            let path = td.config(&text);
            let out = td
                .podinit_not_pid1()
                .arg("check")
                .arg("--deny-warnings")
                .args(args.iter().copied())
                .config(&path)
                .deadline(secs(10.0))
                .run();
            assert_eq!(out.code, Some(0), "{name} {args:?}:\n{text}\n{}", out.report());
            assert!(out.stderr.is_empty(), "{name} {args:?}:\n{}", out.report());
        }
    }
    // On the entry: silences that entry only.
    let td = TestDir::new();
    let path = td.config(
        "[[process]]\nname = \"a\"\ncommand = [\"/no/such/a\"]\nallow_warnings = [\"program-not-found\"]\n\n[[process]]\nname = \"b\"\ncommand = [\"/no/such/b\"]\n",
    );
    let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
    assert_eq!(out.code, Some(0), "{}", out.report());
    assert!(!out.stderr.contains("/no/such/a") && out.stderr.contains("/no/such/b"), "{}", out.report());
    // An unknown name is an error, as an unknown key is.
    let path = td.config(&format!("[pod]\nallow_warnings = [\"no-such-warning\"]\n\n{APP}"));
    let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
    assert_eq!(out.code, Some(2), "{}", out.report());
    assert!(
        out.stderr.contains("pod.allow_warnings: unknown warning \"no-such-warning\""),
        "{}",
        out.report()
    );
    let out = td.podinit_not_pid1().args(["check", "--allow", "no-such-warning"]).config(&path).run();
    assert_eq!(out.code, Some(2), "{}", out.report());
}

#[test]
fn a_run_starts_whatever_the_warnings_say() {
    for (toml, _, _, name) in cases() {
        let td = TestDir::new();
        let path = td.config(&toml);
        let out = td.podinit().config(&path).deadline(secs(20.0)).run();
        assert!(out.records.contains(&"app".to_owned()), "{name}: app did not start\n{}", out.report());
        assert!(
            !out.stderr.contains(&format!("[{name}]")),
            "{name}: a run printed the warning\n{}",
            out.report()
        );
    }
}

#[test]
fn the_command_after_dashes_is_looked_up_too() {
    let td = TestDir::new();
    let out = td.podinit_not_pid1().args(["check", "--", "/no/such/binary"]).deadline(secs(10.0)).run();
    assert_eq!(out.code, Some(0), "{}", out.report());
    assert!(
        out.stderr.trim()
            == "podinit: warning: <command line>: the command after `--`: program \"/no/such/binary\" does not exist (looked for on this machine: an image built elsewhere may have it) [program-not-found]",
        "{}",
        out.report()
    );
    let out = td.podinit_not_pid1().args(["check", "--", "sh", "-c", "true"]).deadline(secs(10.0)).run();
    assert!(out.stderr.is_empty(), "{}", out.report());
}

/// No example warns but those docs/configuration.md names.
#[test]
fn the_examples_warn_only_as_documented() {
    let root = env!("CARGO_MANIFEST_DIR");
    let quiet = [
        "examples/batch-job/podinit.toml",
        "examples/docker/podinit.toml",
        "examples/web-app/podinit.toml",
        "examples/kubernetes/pod.yaml",
        "examples/import/compose/web-stack/compose.yaml",
        "examples/import/compose/profiles/compose.yaml",
        "examples/import/process-compose/web-stack/process-compose.yaml",
        "examples/import/process-compose/integration-tests/process-compose.yaml",
        "examples/import/supervisord/web-stack.conf",
        "examples/import/supervisord/workers.conf",
        "examples/import/procfile/clock/Procfile",
        "examples/import/procfile/rails/Procfile",
        "tests/corpus/kubernetes/website-job.yaml",
        "tests/corpus/kubernetes/website-job-sidecar.yaml",
        "tests/corpus/kubernetes/website-deployment-sidecar.yaml",
        "tests/corpus/kubernetes/website-startup-coordination.yaml",
        "tests/corpus/process-compose/process-compose.demo.process-compose.yaml",
    ];
    let td = TestDir::new();
    for file in quiet {
        let path = std::path::Path::new(root).join(file);
        let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
        let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("warning:")).collect();
        assert!(warnings.is_empty(), "{file}: {warnings:#?}");
    }
    let path = std::path::Path::new(root).join("tests/corpus/process-compose/izanami.process-compose.yaml");
    let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
    let warnings: Vec<&str> = out.stderr.lines().filter(|l| l.contains("warning:")).collect();
    assert_eq!(warnings.len(), 2, "{warnings:#?}");
    assert!(warnings.iter().all(|w| w.ends_with("[timeout-over-period]")), "{warnings:#?}");
}
