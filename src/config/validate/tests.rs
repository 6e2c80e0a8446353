//! Unit tests of the config rules: each rule refused with its place, every
//! error reported at once, the command line's main, ports from the
//! environment. They read only strings given here (and /etc/passwd for
//! `user`); they start no process.

use std::time::Duration;

use super::probes::port_from_env;
use super::*;

fn check(text: &str) -> Result<PodSpec, ConfigError> {
    let source = Source { path: Some("pod.toml".into()), text: text.into(), origin: None };
    from_source(
        &source,
        &LoadOptions { command: vec![], is_root: true, start_dir: None, ..Default::default() },
    )
}

fn first_error(text: &str) -> String {
    match check(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.0[0].to_string(),
    }
}

#[test]
fn full_example_of_spec_is_accepted() {
    let text = r#"
[pod]
restart_policy = "Never"
termination_grace_period = "7s"
completion = "all"
backoff = { initial = "1s", max = "60s", reset_after = "10m" }
log = "prefixed"
status_socket = "/run/podinit.sock"

[[process]]
name = "migrate"
role = "init"
command = ["/app/migrate", "--up"]

[[process]]
name = "proxy"
role = "sidecar"
command = "exec envoy -c /etc/envoy.yaml"
env = { LOG_LEVEL = "info" }
working_dir = "/"
hold_until = "ready"
stop_signal = "SIGTERM"
log = "prefixed"
startup_probe   = { tcp_socket = { port = 15001 }, period = "100ms", failure_threshold = 300 }
readiness_probe = { http_get = { port = 15021, path = "/healthz/ready" } }
liveness_probe  = { exec = { command = ["/bin/check"] }, period = "10s", timeout = "1s", failure_threshold = 3 }
post_start = { exec = { command = ["/bin/warmup"] } }
pre_stop   = { sleep = "5s" }
oom_score_adj = 0

[[process]]
name = "app"
command = ["/app/server"]
"#;
    let spec = check(text).unwrap();
    assert_eq!(spec.entries.len(), 3);
    assert_eq!(
        spec.entries[1].argv.iter().collect::<Vec<_>>(),
        ["/bin/sh", "-c", "exec envoy -c /etc/envoy.yaml"]
    );
    let sp = spec.entries[1].startup_probe.as_ref().unwrap();
    assert_eq!(sp.period, Duration::from_millis(100));
    assert_eq!(sp.failure_threshold, 300);
    assert_eq!(sp.timeout, Duration::from_secs(1));
    assert_eq!(spec.entries[2].role, Role::Main);
    assert_eq!(spec.backoff.reset_after, Duration::from_secs(600));
}

#[test]
fn integer_seconds_are_durations() {
    let spec =
        check("[pod]\ntermination_grace_period = 3\n[[process]]\nname=\"a\"\ncommand=\"true\"\n").unwrap();
    assert_eq!(spec.termination_grace_period, Duration::from_secs(3));
}

#[test]
fn errors_name_file_line_col_and_key() {
    let e = first_error("[[process]]\nname = \"a\"\ncommand = \"x\"\nstartup_probe = { exec = { command = [\"x\"] }, perod = \"1s\" }\n");
    assert!(e.starts_with("pod.toml:4:"), "{e}");
    assert!(e.contains("process[1].startup_probe.perod"), "{e}");
    let e = first_error("[pod]\nrestart_policy = \"Sometimes\"\n[[process]]\nname=\"a\"\ncommand=\"x\"\n");
    assert!(e.starts_with("pod.toml:2:18: pod.restart_policy:"), "{e}");
    let e = first_error("[[process]]\nname = \"a\"\ncommand = \"x\"\nstop_signal = \"SIGFOO\"\n");
    assert!(e.contains("pod.toml:4:15: process[1].stop_signal: unknown signal name"), "{e}");
    let e = first_error(
        "[pod]\ntermination_grace_period = \"10parsecs\"\n[[process]]\nname=\"a\"\ncommand=\"x\"\n",
    );
    assert!(
        e.contains(":2:") && e.contains("termination_grace_period") && e.contains("invalid duration"),
        "{e}"
    );
}

#[test]
fn every_validation_rule_of_the_config_is_enforced() {
    let cases = [
        ("[[process]]\nname=\"A\"\ncommand=\"x\"\n", "bad name"),
        (&format!("[[process]]\nname=\"{}\"\ncommand=\"x\"\n", "a".repeat(64)), "longer than 63"),
        ("[[process]]\nname=\"-a\"\ncommand=\"x\"\n", "bad name"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\n[[process]]\nname=\"a\"\ncommand=\"y\"\n", "duplicate name"),
        ("[[process]]\nname=\"i\"\nrole=\"init\"\ncommand=\"x\"\nreadiness_probe={exec={command=[\"x\"]}}\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "not allowed on an init"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nliveness_probe={exec={command=[\"x\"]}, success_threshold=2}\n", "success_threshold must be 1"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nstartup_probe={exec={command=[\"x\"]}, success_threshold=2}\n", "success_threshold must be 1"),
        ("[[process]]\nname=\"a\"\ncommand=[]\n", "empty command"),
        ("[[process]]\nname=\"a\"\ncommand=\"  \"\n", "empty command"),
        ("[[process]]\nname=\"a\"\nrole=\"sidecar\"\ncommand=\"x\"\n", "no main"),
        ("[[process]]\nname=\"a\"\nrole=\"helper\"\ncommand=\"x\"\n", "unknown variant"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nuser=\"nosuchuser-podinit\"\n", "no user \"nosuchuser-podinit\" in /etc/passwd"),
        ("[pod]\nbogus=1\n", "unknown field"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_during_termination=true\n", "restart_during_termination applies to sidecars only"),
        ("[[process]]\nname=\"s\"\nrole=\"sidecar\"\ncommand=\"x\"\nrestart_policy=\"Never\"\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "restart_policy is not allowed on a sidecar"),
        ("[[process]]\nname=\"s\"\nrole=\"sidecar\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart\",exit_codes={operator=\"in\",values=[1]}}]\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "its restart_rules can only say restart_all"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart\",exit_codes={operator=\"in\",values=[1,256]}}]\n", "pod.toml:4:70: process[1].restart_rules.exit_codes.256: exit code 256 is outside 0..=255"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart\",exit_codes={operator=\"in\",values=[]}}]\n", "exit_codes.values needs 1 to 255 exit codes (found 0)"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nrestart_rules=[{action=\"restart_some\",exit_codes={operator=\"in\",values=[1]}}]\n", "unknown variant `restart_some`, expected `restart` or `restart_all`"),
        ("[[process]]\nname=\"a\"\ncommand=[\"a\\u0000b\"]\n", "pod.toml:3:9: process[1].command: a command must not contain a NUL"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nenv={\"A=B\"=\"x\"}\n", "env \"A=B\": a name must be non-empty without `=` or NUL"),
        ("[[process]]\nname=\"a\"\ncommand=\"x\"\nenv={\"\"=\"x\"}\n", "env \"\": a name must be non-empty"),
        ("[pod]\nbackoff={initial=\"5s\",max=\"1s\"}\n[[process]]\nname=\"a\"\ncommand=\"x\"\n", "pod.backoff: initial (5s) is longer than max (1s)"),
        ("bogus=1\n", "unknown field"),
        ("[[process]\n", "pod.toml:1:11: process: unclosed array table"),
    ];
    for (text, want) in cases {
        let e = first_error(text);
        assert!(e.contains(want), "{text:?}: {e}");
    }
    // `user` by name is accepted when podinit is root.
    let spec = check("[[process]]\nname=\"a\"\ncommand=\"x\"\nuser=\"root\"\n").unwrap();
    assert_eq!(spec.entries[0].user.as_ref().map(|u| (u.uid, u.gid)), Some((0, 0)));
    // `user` is refused when podinit is not root.
    let source = Source {
        path: Some("p.toml".into()),
        text: "[[process]]\nname=\"a\"\ncommand=\"x\"\nuser=\"0\"\n".into(),
        origin: None,
    };
    let e = from_source(
        &source,
        &LoadOptions { command: vec![], is_root: false, start_dir: None, ..Default::default() },
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("p.toml:4:6: process[1].user: `user` needs podinit to run as root"),
        "{e}"
    );
}

#[test]
fn all_errors_are_reported_at_once() {
    let e = check("[[process]]\nname=\"A\"\ncommand=[]\n[[process]]\nname=\"b\"\ncommand=\"x\"\nliveness_probe={exec={command=[\"x\"]}, success_threshold=2}\n").unwrap_err();
    assert_eq!(e.0.len(), 3, "{e}");
}

#[test]
fn sidecars_are_never_more_oom_killable_than_mains() {
    let text = "[[process]]\nname=\"s1\"\nrole=\"sidecar\"\ncommand=\"x\"\n[[process]]\nname=\"s2\"\nrole=\"sidecar\"\ncommand=\"x\"\noom_score_adj=-900\n[[process]]\nname=\"m\"\ncommand=\"x\"\noom_score_adj=-500\n";
    let mut spec = check(text).unwrap();
    protect_sidecars_from_oom(&mut spec.entries, 0);
    assert_eq!(spec.entries[0].oom_score_adj, Some(-500));
    assert_eq!(spec.entries[1].oom_score_adj, Some(-900));
    assert_eq!(spec.entries[2].oom_score_adj, Some(-500));
}

#[test]
fn command_line_adds_a_main() {
    let source = Source::default();
    let spec = from_source(
        &source,
        &LoadOptions { command: vec!["true".into()], is_root: false, start_dir: None, ..Default::default() },
    )
    .unwrap();
    assert_eq!(spec.entries[0].name, "main");
    assert_eq!(spec.entries[0].argv.iter().collect::<Vec<_>>(), ["true"]);
    let e = from_source(&Source::default(), &LoadOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no main"));
}

#[test]
fn ports_come_from_the_environment_or_a_default() {
    let env = |name: &str| match name {
        "SET" => Some("8081".to_owned()),
        "EMPTY" => Some(String::new()),
        _ => None,
    };
    assert_eq!(port_from_env("${SET}", env), Ok("8081".into()));
    assert_eq!(port_from_env("${SET:-9}", env), Ok("8081".into()));
    assert_eq!(port_from_env("${UNSET:-9}", env), Ok("9".into()));
    assert_eq!(port_from_env("${EMPTY:-9}", env), Ok("9".into()));
    assert!(port_from_env("${UNSET}", env).unwrap_err().contains("UNSET is not set"));
    for bad in ["8080", "$SET", "${}", "${1X}", "${SET", "x${SET}", "${SE T}"] {
        assert!(port_from_env(bad, env).unwrap_err().contains("neither a number"), "{bad}");
    }
    let text = "[[process]]\nname = \"a\"\ncommand = \"true\"\n\
        readiness_probe = { tcp_socket = { port = \"${PODINIT_TEST_SURELY_UNSET:-70000}\" } }\n";
    assert_eq!(
        first_error(text),
        "pod.toml:4:43: process[1].readiness_probe.tcp_socket.port: must be 1-65535 (found \"70000\", from \"${PODINIT_TEST_SURELY_UNSET:-70000}\")"
    );
    let text = text.replace("70000", "8080");
    let spec = check(&text).unwrap_or_else(|e| panic!("{e}"));
    let probe = spec.entries[0].readiness_probe.as_ref().map(|p| &p.action);
    assert!(matches!(probe, Some(ProbeAction::TcpSocket { port: 8080, .. })), "{probe:?}");
}
