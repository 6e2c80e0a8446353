//! The configuration (docs/configuration.md): invalid configuration is refused before anything starts, with
//! exit status 2 and a message naming FILE:LINE:COL and the key; and
//! `podinit check` prints the start plan of a good config.

mod common;
use common::*;
use std::path::Path;

/// 1-based line of the `nth` (1-based) line of `toml` containing `needle`.
fn line_of(toml: &str, needle: &str, nth: usize) -> usize {
    toml.lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .nth(nth - 1)
        .unwrap_or_else(|| panic!("{needle:?} x{nth} not in config"))
        .0
        + 1
}

/// Every `PATH:LINE:COL` location in `text`.
fn locations(text: &str, path: &Path) -> Vec<(usize, usize)> {
    let p = format!("{}:", path.display());
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(&p) {
        rest = &rest[i + p.len()..];
        let mut nums = rest.splitn(3, ':');
        let l = nums.next().and_then(|x| x.parse::<usize>().ok());
        let c = nums.next().and_then(|x| {
            let d: String = x.chars().take_while(|c| c.is_ascii_digit()).collect();
            d.parse::<usize>().ok()
        });
        if let (Some(l), Some(c)) = (l, c) {
            out.push((l, c));
        }
    }
    out
}

/// Runs the pod and `podinit check` on `toml`: both must exit 2 without
/// starting anything, and name `PATH:LINE:COL` (when `line` is given) and
/// `key` (when given).
#[track_caller]
fn assert_refused(toml: &str, line: Option<usize>, key: Option<&str>) {
    let td = TestDir::new();
    let path = td.config(toml);
    let run = td.podinit().config(&path).deadline(secs(10.0)).run();
    let check = td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run();
    for (what, out) in [("run", &run), ("check", &check)] {
        let ctx = format!("[{what}] config:\n{toml}\n{}", out.report());
        assert_eq!(out.code, Some(2), "expected exit 2\n{ctx}");
        assert!(!td.file("started").exists(), "an entry was started\n{ctx}");
        assert!(out.stdout.trim().is_empty(), "nothing should reach stdout\n{ctx}");
        assert!(out.stderr.contains(path.to_str().unwrap()), "the message must name the config file\n{ctx}");
        if let Some(line) = line {
            let locs = locations(&out.stderr, &path);
            assert!(
                locs.iter().any(|&(l, c)| l == line && c >= 1),
                "expected location {}:{line}:COL, found {locs:?}\n{ctx}",
                path.display()
            );
        }
        if let Some(key) = key {
            assert!(out.stderr.contains(key), "the message must name the key {key:?}\n{ctx}");
        }
    }
}

/// A config with one offending line: located by `needle`, naming `key`.
#[track_caller]
fn refused_at(toml: &str, needle: &str, key: &str) {
    assert_refused(toml, Some(line_of(toml, needle, 1)), Some(key));
}

const APP: &str = "[[process]]\nname = \"app\"\ncommand = \"touch @DIR@/started\"\n";

#[test]
fn unknown_top_level_key_is_refused() {
    let toml = format!("colour = \"red\"\n\n{APP}");
    refused_at(&toml, "colour", "colour");
}

#[test]
fn unknown_key_in_pod_is_refused() {
    let toml = format!("[pod]\nrestart_policy = \"Never\"\ngrace = \"1s\"\n\n{APP}");
    refused_at(&toml, "grace =", "grace");
}

#[test]
fn unknown_key_in_a_process_is_refused() {
    let toml = format!("{APP}restart = \"Always\"\n");
    refused_at(&toml, "restart =", "restart");
}

#[test]
fn unknown_key_nested_in_a_probe_is_refused() {
    let toml = format!(
        r#"[[process]]
name = "side"
role = "sidecar"
command = "touch @DIR@/started; sleep 5"
startup_probe = {{ exec = {{ command = ["true"] }}, perod = "1s" }}

{APP}"#
    );
    refused_at(&toml, "perod", "perod");
}

#[test]
fn duplicate_name_is_refused() {
    let toml = format!("{APP}\n{APP}");
    assert_refused(&toml, Some(line_of(&toml, "name = \"app\"", 2)), Some("name"));
}

#[test]
fn bad_names_are_refused() {
    let long = "a".repeat(64);
    for bad in ["App", long.as_str(), "-app", "app-", "my_app", ""] {
        let toml = format!(
            "[[process]]\nname = \"{bad}\"\ncommand = \"touch @DIR@/started\"\n\n{}",
            APP.replace("\"app\"", "\"other\"")
        );
        refused_at(&toml, &format!("name = \"{bad}\""), "name");
    }
}

#[test]
fn longest_valid_name_is_accepted() {
    // 63 characters is the DNS-label limit: accepted.
    let td = TestDir::new();
    let name = "a".repeat(63);
    let path = td.config(&format!("[[process]]\nname = \"{name}\"\ncommand = \"exit 0\"\n"));
    td.podinit().config(&path).deadline(secs(10.0)).run().assert_code(0);
}

#[test]
fn probes_on_an_init_entry_are_refused() {
    for probe in ["startup_probe", "readiness_probe", "liveness_probe"] {
        let toml = format!(
            r#"[[process]]
name = "setup"
role = "init"
command = "touch @DIR@/started"
{probe} = {{ exec = {{ command = ["true"] }} }}

{APP}"#
        );
        refused_at(&toml, probe, probe);
    }
}

#[test]
fn success_threshold_other_than_1_on_liveness_or_startup_is_refused() {
    for probe in ["liveness_probe", "startup_probe"] {
        let toml = format!(
            r#"[[process]]
name = "side"
role = "sidecar"
command = "touch @DIR@/started; sleep 5"
{probe} = {{ exec = {{ command = ["true"] }}, success_threshold = 2 }}

{APP}"#
        );
        refused_at(&toml, probe, "success_threshold");
    }
}

#[test]
fn success_threshold_2_on_readiness_is_accepted() {
    let td = TestDir::new();
    let toml = r#"[pod]
termination_grace_period = "2s"

[[process]]
name = "side"
role = "sidecar"
command = "exec sleep 30"
readiness_probe = { exec = { command = ["true"] }, period = "100ms", success_threshold = 2 }

[[process]]
name = "app"
command = "echo ran >> @REC@"
"#;
    let path = td.config(toml);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["ran"], "{}", out.report());
}

#[test]
fn empty_commands_are_refused() {
    for empty in ["[]", "\"\""] {
        let toml = format!("[[process]]\nname = \"side\"\nrole = \"sidecar\"\ncommand = {empty}\n\n{APP}");
        refused_at(&toml, &format!("command = {empty}"), "command");
    }
}

#[test]
fn bad_durations_are_refused() {
    let toml = format!("[pod]\ntermination_grace_period = \"10parsecs\"\n\n{APP}");
    refused_at(&toml, "10parsecs", "termination_grace_period");
    let toml = format!(
        r#"[[process]]
name = "side"
role = "sidecar"
command = "touch @DIR@/started; sleep 5"
readiness_probe = {{ exec = {{ command = ["true"] }}, period = "10parsecs" }}

{APP}"#
    );
    refused_at(&toml, "10parsecs", "period");
}

/// One grammar for duration strings (docs/configuration.md): numbers with
/// units ms, s, m, h, as Go and Kubernetes write them; what humantime also
/// read (spaces, other units) is refused with the reason.
#[test]
fn durations_follow_the_documented_grammar() {
    for (text, why) in [
        ("-5s", "\"-5s\": a duration cannot be negative"),
        ("5 sec", "unknown unit \" sec\": the units are ms, s, m or h"),
        ("1d", "unknown unit \"d\": the units are ms, s, m or h"),
        ("10", "10 has no unit"),
    ] {
        let toml = format!("[pod]\ntermination_grace_period = \"{text}\"\n\n{APP}");
        refused_at(&toml, "termination_grace_period", why);
    }
    for text in ["1h30m", "1.5s", "250ms", "0.5m", "\"1m30s\"", "90"] {
        let quoted = if text.starts_with('"') || text.parse::<u32>().is_ok() {
            text.to_owned()
        } else {
            format!("\"{text}\"")
        };
        let td = TestDir::new();
        let path = td.config(&format!("[pod]\ntermination_grace_period = {quoted}\n\n{APP}"));
        let out = td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run();
        assert_eq!(out.code, Some(0), "{text}: {}", out.report());
    }
}

/// Shape errors come together: the first of [pod], of each [[process]] and of
/// each other top-level key (docs/configuration.md); a syntax error alone.
#[test]
fn shape_errors_of_every_table_are_reported_at_once() {
    let toml = r#"bogus = 1

[pod]
termination_grace_period = "-5s"

[[process]]
name = "a"
command = "true"
startup_probe = { exec = { command = ["true"] }, perod = "1s" }

[[process]]
name = "b"
role = "sidekick"
command = "touch @DIR@/started"
"#;
    let td = TestDir::new();
    let path = td.config(toml);
    for out in [
        td.podinit().config(&path).deadline(secs(10.0)).run(),
        td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run(),
    ] {
        assert_eq!(out.code, Some(2), "{}", out.report());
        assert!(!td.file("started").exists());
        let lines: Vec<&str> = out.stderr.lines().collect();
        let want = [
            (1, "bogus: unknown field `bogus`"),
            (4, "pod.termination_grace_period: invalid duration \"-5s\": a duration cannot be negative"),
            (9, "process[1].startup_probe.perod: unknown field `perod`"),
            (13, "process[2].role: unknown variant `sidekick`"),
        ];
        assert_eq!(lines.len(), want.len(), "{}", out.report());
        for (got, (line, text)) in lines.iter().zip(want) {
            let at = format!("{}:{line}:", path.display());
            assert!(got.contains(&at) && got.contains(text), "want {at}..{text} in {got}\n{}", out.report());
        }
    }
    refused_at(
        "[[process]]\nname = \"a\"\ncommand = \"true\n\n[pod]\nbogus = 1\n",
        "command",
        "invalid basic string",
    );
}

#[test]
fn unknown_signal_name_is_refused() {
    let toml = format!("{APP}stop_signal = \"SIGFOO\"\n");
    refused_at(&toml, "SIGFOO", "stop_signal");
}

#[test]
fn unknown_role_is_refused() {
    let toml = "[[process]]\nname = \"app\"\nrole = \"worker\"\ncommand = \"touch @DIR@/started\"\n";
    refused_at(toml, "worker", "role");
}

#[test]
fn toml_syntax_error_is_refused_with_its_location() {
    let toml = "[[process]]\nname = \"app\"\ncommand = [\"sh\", \"-c\" \"touch @DIR@/started\"]\n";
    assert_refused(toml, Some(3), None);
}

#[test]
fn config_without_any_main_is_refused() {
    let toml = r#"[[process]]
name = "setup"
role = "init"
command = "touch @DIR@/started"

[[process]]
name = "side"
role = "sidecar"
command = "touch @DIR@/started; sleep 5"
"#;
    assert_refused(toml, None, None);
    // And the message says what is missing.
    let td = TestDir::new();
    let path = td.config(toml);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    assert!(out.stderr.to_lowercase().contains("main"), "{}", out.report());
}

#[test]
fn check_prints_the_start_plan_of_a_good_config() {
    let td = TestDir::new();
    let toml = r#"[pod]
termination_grace_period = "2s"

[[process]]
name = "migrate"
role = "init"
command = "touch @DIR@/started"

[[process]]
name = "proxy"
role = "sidecar"
command = "touch @DIR@/started"

[[process]]
name = "web"
command = "touch @DIR@/started"

[[process]]
name = "seed"
role = "init"
command = "touch @DIR@/started"

[[process]]
name = "cache"
role = "sidecar"
command = "touch @DIR@/started"

[[process]]
name = "worker"
role = "main"
command = "touch @DIR@/started"
"#;
    let path = td.config(toml);
    let out = td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert!(!td.file("started").exists(), "check must not start anything\n{}", out.report());
    // Start order: the ordered list in file order, then the mains.
    let plan = [
        ("migrate", "init"),
        ("proxy", "sidecar"),
        ("seed", "init"),
        ("cache", "sidecar"),
        ("web", "main"),
        ("worker", "main"),
    ];
    let lines: Vec<&str> = out.stdout.lines().collect();
    let mut last = None;
    for (name, role) in plan {
        let idx = lines
            .iter()
            .position(|l| l.split(|c: char| !c.is_ascii_alphanumeric() && c != '-').any(|w| w == name))
            .unwrap_or_else(|| panic!("{name} not in the plan\n{}", out.report()));
        assert!(
            lines[idx].contains(role),
            "{name} should be shown as {role}: {:?}\n{}",
            lines[idx],
            out.report()
        );
        assert!(last.is_none_or(|l| idx > l), "{name} out of start order\n{}", out.report());
        last = Some(idx);
    }
}

/// A podinit built without the `https` or `grpc` feature (`cargo build
/// --no-default-features`) refuses a config that asks for that probe kind,
/// at its key and before anything starts; a build with the feature accepts
/// the same config. So this test checks whichever build it runs against.
#[test]
fn https_and_grpc_probes_are_refused_only_by_a_build_without_their_feature() {
    let side =
        "[[process]]\nname = \"side\"\nrole = \"sidecar\"\ncommand = \"touch @DIR@/started; sleep 5\"\n";
    let cases = [
        (
            format!("{side}startup_probe = {{ http_get = {{ port = 8443, scheme = \"https\" }} }}\n\n{APP}"),
            "scheme",
            cfg!(feature = "https"),
        ),
        (
            format!("{side}startup_probe = {{ grpc = {{ port = 9090 }} }}\n\n{APP}"),
            "grpc",
            cfg!(feature = "grpc"),
        ),
    ];
    for (toml, key, built_with_it) in cases {
        if built_with_it {
            let td = TestDir::new();
            let path = td.config(&toml);
            let out =
                td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run();
            out.assert_code(0);
        } else {
            refused_at(&toml, "startup_probe", key);
        }
    }
}

/// A scheduled entry after `APP`, with `keys` added.
#[cfg(feature = "schedule")]
fn scheduled(keys: &str) -> String {
    format!("{APP}\n[[process]]\nname = \"job\"\nrole = \"scheduled\"\ncommand = \"touch @DIR@/started\"\n{keys}\n")
}

#[cfg(feature = "schedule")]
#[test]
fn bad_schedules_are_refused_naming_the_field_and_value() {
    for (keys, needle, says) in [
        (
            "schedule = \"61 * * * *\"",
            "schedule =",
            "\"61 * * * *\": minute \"61\": number out of bounds (0-59)",
        ),
        (
            "schedule = \"* * * FOO *\"",
            "schedule =",
            "month \"FOO\": illegal character 'F' (1-12 or JAN-DEC)",
        ),
        ("schedule = \"0 0 * * MON#6\"", "schedule =", "day of week \"MON#6\": nth specifier out of bounds"),
        ("schedule = \"* * * *\"", "schedule =", "4 fields"),
        ("schedule = \"0 0 30 2 *\"", "schedule =", "it never runs"),
        ("schedule = \"@reboot\"", "schedule =", "unknown macro"),
        ("every = \"0.5s\"", "every =", "every must be at least 1s"),
        ("schedule = \"@daily\"\nevery = \"1h\"", "schedule =", "schedule and every exclude each other"),
        (
            "schedule = \"@daily\"\ntime_zone = \"Nowhere/Atlantis\"",
            "time_zone =",
            "unknown time zone \"Nowhere/Atlantis\"",
        ),
        ("schedule = \"@daily\"\ntime_zone = \"../../etc/passwd\"", "time_zone =", "is not a time zone name"),
        ("every = \"1m\"\ntime_zone = \"UTC\"", "time_zone =", "time_zone applies to `schedule`"),
        (
            "every = \"1m\"\nconcurrency_policy = \"Forbid\"\nmax_concurrent = 2",
            "max_concurrent =",
            "max_concurrent applies to concurrency_policy \"Allow\"",
        ),
        ("every = \"1m\"\nmax_concurrent = 0", "max_concurrent =", "max_concurrent must be at least 1"),
        ("every = \"1m\"\nrestart_policy = \"Always\"", "restart_policy =", "\"Always\" is not allowed on a scheduled entry"),
        ("every = \"1m\"\nhold_until = \"started\"", "hold_until =", "not allowed on a scheduled entry"),
        ("every = \"1m\"\nmax_restarts = 3", "max_restarts =", "it needs restart_policy = \"OnFailure\""),
        (
            "every = \"1m\"\nrestart_rules = [{ action = \"restart\", exit_codes = { operator = \"in\", values = [1] } }]",
            "restart_rules =",
            "not allowed on a scheduled entry",
        ),
        (
            "every = \"1m\"\nliveness_probe = { exec = { command = [\"true\"] } }",
            "liveness_probe =",
            "not allowed on a scheduled entry",
        ),
    ] {
        let toml = scheduled(keys);
        refused_at(&toml, needle, "process[2].");
        let td = TestDir::new();
        let path = td.config(&toml);
        let out = td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run();
        assert!(out.stderr.contains(says), "{keys:?}: expected {says:?}\n{}", out.report());
    }
    // Without `schedule` or `every`; and the schedule keys on another role.
    assert_refused(&scheduled(""), Some(line_of(&scheduled(""), "[[process]]", 2)), None);
    let main = format!("{APP}every = \"1m\"\n");
    refused_at(&main, "every =", "process[1].every");
}

#[cfg(feature = "schedule")]
#[test]
fn check_prints_the_next_three_runs_of_each_scheduled_entry() {
    let td = TestDir::new();
    let toml = scheduled(
        "schedule = \"0 12 * * *\"\ntime_zone = \"Asia/Kolkata\"\nconcurrency_policy = \"Replace\"\nrun_on_start = true\n\n\
         [[process]]\nname = \"tick\"\nrole = \"scheduled\"\nevery = \"30s\"\ncommand = \"true\"\n",
    );
    let path = td.config(&toml);
    let out = td.podinit_not_pid1().arg("check").arg("--config").arg(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert!(!td.file("started").exists(), "check must not start anything\n{}", out.report());
    let runs =
        out.stdout.lines().find(|l| l.contains("next runs")).unwrap_or_else(|| panic!("{}", out.report()));
    let times: Vec<&str> = runs.split("next runs ").nth(1).unwrap().split(", ").collect();
    assert_eq!(times.len(), 3, "{}", out.report());
    for t in &times {
        // Noon in India, every day: 12:00:00 at +05:30.
        assert!(t.ends_with("T12:00:00+05:30"), "{t}\n{}", out.report());
    }
    assert!(out.stdout.contains("schedule \"0 12 * * *\" in Asia/Kolkata"), "{}", out.report());
    assert!(out.stdout.contains("concurrency_policy Replace, run_on_start"), "{}", out.report());
    assert!(out.stdout.contains("every 30s, from when the mains are reached"), "{}", out.report());
}

#[cfg(not(feature = "schedule"))]
#[test]
fn a_build_without_the_schedule_feature_refuses_scheduled_entries() {
    let toml = format!(
        "{APP}\n[[process]]\nname = \"job\"\nrole = \"scheduled\"\nevery = \"1m\"\ncommand = \"true\"\n"
    );
    refused_at(&toml, "role = \"scheduled\"", "process[2].role");
}
