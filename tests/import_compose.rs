//! Compose files (docs/import.md, "Compose"): `podinit import` reads them as
//! Compose reads them, and the pods they make run as Compose would start and
//! stop them.
//!
//! The reference is Compose itself: Debian's `docker-compose` package
//! (Compose 1.29, Python). There is no engine here, so the comparison asks
//! Compose's own loader (`compose.config.load`, `Project.get_services`, the
//! code behind `docker-compose config` and `up`) what it makes of a file:
//! interpolation, `.env`, merges, `env_file`, profiles, the dependency order
//! (see `REFERENCE`). Those tests need `docker-compose`: without it they say
//! so and pass, except under `CI=true`, where they fail.

// This harness waits for the podinit it starts: it is not podinit, so the
// one-waiter rule of clippy.toml (for src/) does not apply here.
#![allow(clippy::disallowed_methods)]
#![cfg(feature = "import")]

mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value as Json;

fn example(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/import/compose").join(path)
}

/// What Compose 1.29 makes of a file: the services `up` would start, in its
/// order, each with its argv (entrypoint and command, strings split by
/// shlex as docker-py splits them), environment (env_file merged),
/// healthcheck, depends_on, restart, stop settings, user and directory.
const REFERENCE: &str = r#"
import json, os, shlex, sys
from docker.errors import NotFound
from compose.config import config
from compose.config.environment import Environment
from compose.project import Project

class NoEngine:
    """Stands for the engine: it has nothing (no engine is asked)."""
    def __getattr__(self, name):
        def missing(*args, **kwargs):
            raise NotFound(name)
        return missing

def words(v):
    if v is None:
        return []
    return shlex.split(v) if isinstance(v, str) else list(v)

def health(h):
    # A string test is CMD-SHELL (docs.docker.com/reference/compose-file/services/#healthcheck).
    if h and isinstance(h.get('test'), str):
        h = dict(h, test=['CMD-SHELL', h['test']])
    return h

path, profiles = sys.argv[1], sys.argv[2:]
base = os.path.dirname(os.path.abspath(path))
try:
    env = Environment.from_env_file(base)
    cfg = config.load(config.find(base, [os.path.basename(path)], env))
    project = Project.from_config('p', cfg, NoEngine(), enabled_profiles=profiles)
    services = project.get_services(None, include_deps=True)
except Exception as e:
    print(type(e).__name__ + ': ' + str(e), file=sys.stderr)
    sys.exit(3)
out = {}
for s in services:
    o = s.options
    out[s.name] = {
        'argv': words(o.get('entrypoint')) + words(o.get('command')),
        'environment': {k: v for k, v in (o.get('environment') or {}).items() if v is not None},
        'healthcheck': health(o.get('healthcheck')),
        'depends_on': {k: v['condition'] for k, v in (o.get('depends_on') or {}).items()},
        'restart': o.get('restart'),
        'stop_signal': o.get('stop_signal'),
        'stop_grace_period': o.get('stop_grace_period'),
        'user': o.get('user'),
        'working_dir': o.get('working_dir'),
    }
print(json.dumps({'order': [s.name for s in services], 'services': out}))
"#;

/// The Python that runs docker-compose (its `#!` line), or `None` (and a
/// message) when docker-compose is not installed. Under `CI=true` a missing
/// docker-compose fails the test.
fn reference_python() -> Option<PathBuf> {
    let found = Command::new("sh").args(["-c", "command -v docker-compose"]).output().ok();
    let script =
        found.filter(|o| o.status.success()).map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
    let python = script.and_then(|s| std::fs::read_to_string(s).ok()).and_then(|text| {
        text.lines().next().and_then(|l| l.strip_prefix("#!")).map(|p| PathBuf::from(p.trim()))
    });
    if python.is_none() {
        let msg = "this test compares with Compose: it needs docker-compose (Debian package docker-compose)";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{msg}");
        eprintln!("skipped: {msg}");
    }
    python
}

/// Compose's reading of `file` with these profiles and environment: the JSON
/// of `REFERENCE`, or its error.
fn reference(python: &Path, file: &Path, profiles: &[&str], env: &[(&str, &str)]) -> Result<Json, String> {
    let out = Command::new(python)
        .arg("-c")
        .arg(REFERENCE)
        .arg(file)
        .args(profiles)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    if out.status.success() {
        Ok(serde_json::from_slice(&out.stdout).unwrap())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

/// `podinit import`: exit code, stdout, stderr.
fn import(file: &Path, args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_podinit"))
        .arg("import")
        .args(args)
        .arg(file)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn import_ok(file: &Path, args: &[&str], env: &[(&str, &str)]) -> (toml::Table, String) {
    let (code, toml, report) = import(file, args, env);
    assert_eq!(code, Some(0), "podinit import {args:?} {}:\n{report}", file.display());
    (toml::from_str(&toml).unwrap_or_else(|e| panic!("{e}\n{toml}")), report)
}

fn processes(t: &toml::Table) -> Vec<&toml::Table> {
    t.get("process")
        .and_then(|p| p.as_array())
        .map_or(Vec::new(), |a| a.iter().filter_map(|p| p.as_table()).collect())
}

fn str_of<'a>(t: &'a toml::Table, key: &str) -> Option<&'a str> {
    t.get(key).and_then(|v| v.as_str())
}

/// A podinit duration ("300ms", "2s") as nanoseconds.
fn nanos(s: &str) -> i64 {
    let d = match s.strip_suffix("ms") {
        Some(ms) => Duration::from_millis(ms.parse().unwrap()),
        None => Duration::from_secs(s.strip_suffix('s').unwrap().parse().unwrap()),
    };
    d.as_nanos() as i64
}

/// A Compose duration as Compose 1.29 keeps it: "5s", "1m", "1m30s", "300ms".
fn compose_nanos(s: &str) -> i64 {
    let mut total = 0f64;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let unit = if c == 'm' && chars.peek() == Some(&'s') {
            chars.next();
            1e-3
        } else {
            match c {
                'h' => 3600.0,
                'm' => 60.0,
                's' => 1.0,
                _ => panic!("duration {s}"),
            }
        };
        total += num.parse::<f64>().unwrap() * unit;
        num.clear();
    }
    (total * 1e9).round() as i64
}

/// The environment podinit gives an entry: its env_file (read by podinit's
/// reader, with `env` for interpolation) under its `env`.
fn effective_env(p: &toml::Table, dir: &Path, vars: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut env = BTreeMap::new();
    if let Some(file) = str_of(p, "env_file") {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let pairs = podinit::config::envfile::parse_with(&text, &mut |name| {
            vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
        })
        .unwrap();
        env.extend(pairs);
    }
    for (k, v) in p.get("env").and_then(|e| e.as_table()).into_iter().flatten() {
        env.insert(k.clone(), v.as_str().unwrap().to_owned());
    }
    env
}

/// Asserts that podinit's import of `file` is what Compose reads in it.
fn same_as_compose(python: &Path, file: &Path, profiles: &[&str], commands: &[&str], vars: &[(&str, &str)]) {
    let compose = reference(python, file, profiles, vars)
        .unwrap_or_else(|e| panic!("Compose refuses {}: {e}", file.display()));
    let mut args = Vec::new();
    for p in profiles {
        args.extend(["--profile", p]);
    }
    for c in commands {
        args.extend(["--command", c]);
    }
    let (toml, report) = import_ok(file, &args, vars);
    let ctx = format!(
        "{} {args:?}\n--- Compose ---\n{compose:#}\n--- podinit ---\n{toml:#?}\n{report}",
        file.display()
    );
    let procs = processes(&toml);
    let names: Vec<&str> = procs.iter().map(|p| str_of(p, "name").unwrap()).collect();
    let services = compose["services"].as_object().unwrap();

    // The same services (profiles applied).
    let mut want: Vec<&str> = services.keys().map(String::as_str).collect();
    let mut got = names.clone();
    want.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, want, "the active services differ\n{ctx}");

    // What waits for each service decides its role.
    let mut waited: BTreeMap<&str, &str> = BTreeMap::new();
    for s in services.values() {
        for (target, cond) in s["depends_on"].as_object().unwrap() {
            let rank = |c: &str| {
                ["service_started", "service_healthy", "service_completed_successfully"]
                    .iter()
                    .position(|x| *x == c)
            };
            let cond = cond.as_str().unwrap();
            let w = waited.entry(target.as_str()).or_insert(cond);
            if rank(cond) > rank(w) {
                *w = cond;
            }
        }
    }

    for (i, p) in procs.iter().enumerate() {
        let name = names[i];
        let s = &services[name];
        let ctx = format!("service {name}\n{ctx}");

        // Every dependency starts before it.
        for target in s["depends_on"].as_object().unwrap().keys() {
            let j = names.iter().position(|n| n == target).unwrap();
            assert!(j < i, "{name} must come after {target}\n{ctx}");
        }
        let healthy_check =
            s["healthcheck"].as_object().filter(|h| h["test"].as_array().is_some_and(|t| t[0] != "NONE"));
        let (role, hold) = match waited.get(name).copied() {
            Some("service_completed_successfully") => ("init", None),
            Some("service_healthy") if healthy_check.is_some() => ("sidecar", Some("ready")),
            Some(_) => ("sidecar", Some("started")),
            None => ("main", None),
        };
        assert_eq!(str_of(p, "role"), Some(role), "role\n{ctx}");
        assert_eq!(str_of(p, "hold_until"), hold, "hold_until\n{ctx}");

        // argv: entrypoint + command, or the --command given.
        let argv: Vec<&str> = s["argv"].as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect();
        match p.get("command") {
            Some(toml::Value::Array(a)) => {
                let got: Vec<&str> = a.iter().map(|a| a.as_str().unwrap()).collect();
                assert_eq!(got, argv, "command\n{ctx}");
            }
            Some(toml::Value::String(cmd)) => {
                assert!(argv.is_empty(), "{ctx}");
                assert!(commands.contains(&format!("{name}={cmd}").as_str()), "{ctx}");
            }
            other => panic!("command {other:?}\n{ctx}"),
        }

        // The environment, env_file included, after interpolation.
        let want: BTreeMap<String, String> = s["environment"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().map_or_else(|| v.to_string(), str::to_owned)))
            .collect();
        assert_eq!(effective_env(p, file.parent().unwrap(), vars), want, "environment\n{ctx}");

        // The healthcheck: the readiness probe, with Compose's defaults.
        match (healthy_check, p.get("readiness_probe").and_then(|r| r.as_table())) {
            (Some(h), Some(probe)) if role != "init" => {
                let test: Vec<&str> =
                    h["test"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
                let exec = &probe["exec"]["command"];
                match test[0] {
                    "CMD" => assert_eq!(
                        exec.as_array().unwrap().iter().map(|a| a.as_str().unwrap()).collect::<Vec<_>>(),
                        &test[1..],
                        "{ctx}"
                    ),
                    "CMD-SHELL" => assert_eq!(exec.as_str(), Some(test[1]), "{ctx}"),
                    other => panic!("test {other}\n{ctx}"),
                }
                let ns = |k: &str, default: i64| h.get(k).and_then(Json::as_i64).unwrap_or(default);
                assert_eq!(
                    nanos(str_of(probe, "period").unwrap()),
                    ns("interval", 30_000_000_000),
                    "interval\n{ctx}"
                );
                assert_eq!(
                    nanos(str_of(probe, "timeout").unwrap()),
                    ns("timeout", 30_000_000_000),
                    "timeout\n{ctx}"
                );
                assert_eq!(probe["failure_threshold"].as_integer(), Some(ns("retries", 3)), "retries\n{ctx}");
                if hold == Some("ready") {
                    let startup = p["startup_probe"].as_table().unwrap();
                    let start_period = ns("start_period", 0);
                    let period = nanos(str_of(startup, "period").unwrap());
                    let grace = (start_period + period - 1) / period;
                    assert_eq!(
                        startup["failure_threshold"].as_integer(),
                        Some(ns("retries", 3) + grace),
                        "start_period\n{ctx}"
                    );
                }
            }
            (None, None) => {}
            (_, None) if role == "init" => {}
            (h, probe) => panic!("healthcheck {h:?} became {probe:?}\n{ctx}"),
        }

        // restart: the main's and the init's policy (a sidecar always restarts).
        let restart = s["restart"].as_object();
        let name_of = restart.and_then(|r| r["Name"].as_str()).unwrap_or("no");
        let policy = match (role, name_of) {
            ("sidecar", _) | (_, "no") => None,
            ("init", _) => Some("OnFailure"),
            (_, "on-failure") => Some("OnFailure"),
            _ => Some("Always"),
        };
        assert_eq!(str_of(p, "restart_policy"), policy, "restart\n{ctx}");
        let max = restart.and_then(|r| r["MaximumRetryCount"].as_i64()).filter(|n| *n > 0);
        assert_eq!(
            p.get("max_restarts").and_then(toml::Value::as_integer),
            max.filter(|_| role != "sidecar"),
            "{ctx}"
        );

        for key in ["stop_signal", "user", "working_dir"] {
            assert_eq!(str_of(p, key), s[key].as_str(), "{key}\n{ctx}");
        }
    }

    // One stop budget: the largest stop_grace_period (10s where none is set).
    let graces: Vec<Option<i64>> =
        services.values().map(|s| s["stop_grace_period"].as_str().map(compose_nanos)).collect();
    let pod_grace =
        toml.get("pod").and_then(|p| p.get("termination_grace_period")).and_then(|g| g.as_str()).map(nanos);
    if graces.iter().any(Option::is_some) {
        let largest = graces.iter().map(|g| g.unwrap_or(10_000_000_000)).max();
        assert_eq!(pod_grace, largest, "termination_grace_period\n{ctx}");
    } else {
        assert_eq!(pod_grace, None, "{ctx}");
    }
}

/// Every shape of a service the mapping has a row for, in one file, with a
/// `.env` and an env_file.
fn write_fixture(td: &TestDir) -> PathBuf {
    td.write(".env", "DOTENV_VAR=from-dotenv\nSHADOWED=from-dotenv\nTAG=\"1.2\"\n");
    td.write(
        "seed.env",
        "# the env-file syntax\nPLAIN=value # comment\nDQ=\"a \\\"quoted\\\" value\\tand a tab\"\nSQ='single $PLAIN'\nINTERP=\"${PLAIN}-x\"\nLIST_FORM=overridden-by-environment\n",
    );
    td.write(
        "compose.yaml",
        r#"
x-common: &common
  image: "app:${TAG}"
  stop_signal: SIGINT

services:
  db:
    image: postgres
    command: sleep 3600
    user: "1000:1000"
    healthcheck:
      test: pg_isready -U app
      interval: 1m30s
      retries: 4
      start_period: 3m
  cache:
    image: redis
    entrypoint: sh -c
    command: ["exec sleep 3600"]
    healthcheck:
      test: ["CMD", "redis-cli", "ping"]
      timeout: 5s
  seed:
    <<: *common
    command: ["sh", "-c", "echo seeding $$HOME"]
    environment:
      - LIST_FORM=a=b
      - DEFAULTED=${UNSET_VAR:-fallback}
      - DASH_FORM=${EMPTY_VAR-not-used}
      - COLON_FORM=${EMPTY_VAR:-used}
      - FROM_DOTENV=${DOTENV_VAR}
      - OVERRIDDEN=${SHADOWED}
    env_file: seed.env
    restart: always
    depends_on:
      db: {condition: service_healthy}
      cache: {condition: service_started}
  app:
    <<: *common
    command: ["sh", "-c", "sleep 3600"]
    working_dir: /srv
    stop_grace_period: 1m
    restart: on-failure:5
    healthcheck:
      test: ["CMD", "true"]
      disable: true
    depends_on:
      seed: {condition: service_completed_successfully}
      db: {condition: service_healthy}
  extra:
    image: app
    command: echo 'two words' "and \"quoted\"" $$NOT_COMPOSE
    restart: unless-stopped
    stop_grace_period: 1m30s
    healthcheck:
      test: ["NONE"]
    depends_on: [cache]
"#,
    )
}

const FIXTURE_ENV: &[(&str, &str)] = &[("SHADOWED", "from-env"), ("EMPTY_VAR", "")];

#[test]
fn a_file_with_every_mapped_key_reads_as_compose_reads_it() {
    let Some(python) = reference_python() else { return };
    let td = TestDir::new();
    let file = write_fixture(&td);
    same_as_compose(&python, &file, &[], &[], FIXTURE_ENV);
    // Spot checks of what the comparison takes from Compose.
    let (toml, _) = import_ok(&file, &[], FIXTURE_ENV);
    let procs = processes(&toml);
    let seed = procs.iter().find(|p| str_of(p, "name") == Some("seed")).unwrap();
    let env = effective_env(seed, td.path(), FIXTURE_ENV);
    assert_eq!(env["OVERRIDDEN"], "from-env");
    assert_eq!(env["DASH_FORM"], "");
    assert_eq!(env["COLON_FORM"], "used");
    assert_eq!(env["DQ"], "a \"quoted\" value\tand a tab");
    assert_eq!(env["SQ"], "single $PLAIN");
    assert_eq!(env["LIST_FORM"], "a=b");
    assert_eq!(str_of(toml["pod"].as_table().unwrap(), "termination_grace_period"), Some("90s"));
}

#[test]
fn the_examples_read_as_compose_reads_them() {
    let Some(python) = reference_python() else { return };
    same_as_compose(&python, &example("web-stack/compose.yaml"), &[], &[], &[]);
    let vars = [("APP_ENV", ""), ("LOG_LEVEL", "")];
    for profiles in [&[][..], &["jobs"], &["debug"], &["jobs", "debug"]] {
        same_as_compose(&python, &example("profiles/compose.yaml"), profiles, &[], &vars);
    }
    same_as_compose(&python, &example("profiles/compose.yaml"), &["dev"], &["mail=sleep 3600"], &[]);
}

/// What Compose refuses, podinit refuses, with the place of the problem.
#[test]
fn what_compose_refuses_is_an_error_with_its_place() {
    let python = reference_python();
    let td = TestDir::new();
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "cycle.yaml",
            "services:\n  a:\n    command: x\n    depends_on: [b]\n  b:\n    command: y\n    depends_on:\n      c: {condition: service_started}\n  c:\n    command: z\n    depends_on: [a]\n",
            &["cycle.yaml:4:18: services.a.depends_on: depends_on has a cycle: a -> b -> c -> a"],
        ),
        (
            "profile.yaml",
            "services:\n  app:\n    command: x\n    depends_on: [db]\n  db:\n    command: y\n    profiles: [dev]\n",
            &["profile.yaml:4:18: services.app.depends_on: app depends on db, which is left out", "`--profile dev` includes it"],
        ),
        (
            "undefined.yaml",
            "services:\n  app:\n    command: x\n    depends_on:\n      db:\n        condition: service_healthy\n",
            &["undefined.yaml:5:7: services.app.depends_on.db: app depends on \"db\", which is not a service of this file"],
        ),
        (
            "typo.yaml",
            "services:\n  app:\n    command: x\n    enviroment:\n      A: b\n",
            &["typo.yaml:4:5: services.app.enviroment: unknown service key \"enviroment\""],
        ),
        (
            "restart.yaml",
            "services:\n  app:\n    command: x\n    restart: sometimes\n",
            &["restart.yaml:4:14: services.app.restart: restart \"sometimes\""],
        ),
        (
            "duration.yaml",
            "services:\n  app:\n    command: x\n    healthcheck:\n      test: [\"CMD\", \"true\"]\n      interval: soon\n",
            &["duration.yaml:6:17: services.app.healthcheck.interval: \"soon\" is not a duration"],
        ),
        (
            "required.yaml",
            "services:\n  app:\n    command: echo ${NEEDED:?set NEEDED to the API key}\n",
            &["required.yaml:3:14: services.app.command: required variable NEEDED is missing a value: set NEEDED to the API key"],
        ),
        (
            "condition.yaml",
            "services:\n  app:\n    command: x\n    depends_on:\n      db: {condition: service_ready}\n  db:\n    command: y\n",
            &["condition.yaml:5:23: services.app.depends_on.db.condition: condition: expected service_started"],
        ),
    ];
    for (name, text, want) in cases {
        let file = td.write(name, text);
        let (code, toml, report) = import(&file, &[], &[]);
        assert_eq!(code, Some(2), "{name}: podinit import must refuse it\n{toml}\n{report}");
        for w in *want {
            assert!(report.contains(w), "{name}: expected {w:?} in\n{report}");
        }
        assert_eq!(report.lines().count(), 1, "{name}: one clear error\n{report}");
        if let Some(python) = &python {
            assert!(reference(python, &file, &[], &[]).is_err(), "{name}: Compose 1.29 accepts it");
        }
    }
}

/// A service without a command (its image's default) is written commented
/// out, named, and reported; a file with nothing else is refused.
#[test]
fn services_without_a_command_are_written_out_commented() {
    let td = TestDir::new();
    let file = td.write(
        "compose.yaml",
        "services:\n  db:\n    image: postgres:16\n  app:\n    image: app\n    command: [\"sleep\", \"1\"]\n    depends_on: [db]\n",
    );
    let (code, toml, report) = import(&file, &[], &[]);
    assert_eq!(code, Some(0), "{report}");
    assert!(toml.contains("# db has no command of its own: it runs the default command of image postgres:16. Give one with --command db=CMD.\n# [[process]]\n# name = \"db\""), "{toml}");
    assert!(report.contains("compose.yaml:2:3: services.db: dropped: no command or entrypoint"), "{report}");
    let parsed: toml::Table = toml::from_str(&toml).unwrap();
    assert_eq!(processes(&parsed).len(), 1);

    // --command gives one.
    let (toml, _) = import_ok(&file, &["--command", "db=sleep 5"], &[]);
    let db = processes(&toml).into_iter().find(|p| str_of(p, "name") == Some("db")).unwrap().clone();
    assert_eq!(str_of(&db, "command"), Some("sleep 5"));
    assert_eq!(str_of(&db, "role"), Some("sidecar"));

    // Running it as it is: the entry without a command is an error.
    let out = td.podinit().config(&file).run();
    out.assert_code(2);
    assert!(out.stderr.contains("db has no command of its own"), "{}", out.report());

    let only = td.write("images.yaml", "services:\n  db:\n    image: postgres\n  cache:\n    image: redis\n");
    let (code, _, report) = import(&only, &[], &[]);
    assert_eq!(code, Some(2));
    assert!(report.contains("nothing is left to run"), "{report}");
}

#[test]
fn main_chooses_the_mains_and_the_rest_become_sidecars() {
    let td = TestDir::new();
    let file = td.write(
        "compose.yaml",
        "services:\n  web:\n    command: sleep 1\n  worker:\n    command: sleep 2\n  db:\n    command: sleep 3\n",
    );
    let (toml, _) = import_ok(&file, &["--main", "worker"], &[]);
    let roles: Vec<(&str, &str)> =
        processes(&toml).iter().map(|p| (str_of(p, "name").unwrap(), str_of(p, "role").unwrap())).collect();
    assert_eq!(roles, [("web", "sidecar"), ("db", "sidecar"), ("worker", "main")]);
    let (code, _, report) = import(&file, &["--main", "nope"], &[]);
    assert_eq!(code, Some(2));
    assert!(report.contains("--main nope: no active service has this name"), "{report}");
}

#[test]
fn what_podinit_cannot_honour_is_reported() {
    let td = TestDir::new();
    let file = td.write(
        "compose.yaml",
        "version: \"3.8\"\nservices:\n  db:\n    command: sleep 9\n    image: pg\n    ports: [\"5432:5432\"]\n    deploy:\n      replicas: 2\n  app:\n    command: sleep ${UNSET_X} ${UNSET_X:-1}\n    environment: [PASSED, SET=1, EMPTY=]\n    depends_on:\n      db:\n        condition: service_started\n        restart: true\n    extends: base\n    x-note: hello\nnetworks:\n  default: {}\nx-top: 1\n",
    );
    let (code, _, report) = import(&file, &[], &[]);
    assert_eq!(code, Some(0), "{report}");
    for want in [
        "compose.yaml:1:1: version: ignored",
        "compose.yaml:5:5: services.db.image: ignored",
        "compose.yaml:6:5: services.db.ports: ignored",
        "compose.yaml:7:5: services.db.deploy: dropped",
        "services.app.environment: note: PASSED without a value",
        "services.app.depends_on.db.restart: dropped",
        "compose.yaml:16:5: services.app.extends: dropped",
        "compose.yaml:17:5: services.app.x-note: ignored",
        "compose.yaml:18:1: networks: ignored",
        "compose.yaml:20:1: x-top: ignored",
        "services.db: approximated: db is a sidecar, and podinit restarts a sidecar after every exit; the file says restart: no",
        "compose.yaml:10:14: services.app.command: note: the variable UNSET_X is not set: it is an empty string here",
    ] {
        assert!(report.contains(want), "expected {want:?} in\n{report}");
    }
}

/// web-stack: db (healthchecked, slow to be ready) and cache are sidecars,
/// migrate an init that runs once db is healthy, web and worker the mains;
/// on SIGTERM everything stops in reverse order, db last.
#[test]
fn the_web_stack_starts_in_dependency_order_and_stops_in_reverse() {
    let td = TestDir::new();
    let rec = td.rec();
    let mut run = td
        .podinit()
        .config(&example("web-stack/compose.yaml"))
        .env("EVENTS", &rec)
        .env("STATE", td.path())
        .deadline(Duration::from_secs(30))
        .spawn();
    // Each service sets its TERM trap before its first line. cache holds the
    // sequence only until started (no healthcheck: docs/lifecycle.md rule 3),
    // so the mains can be up before cache's shell has come that far.
    for line in ["cache starting", "web serving on 8080", "worker started"] {
        run.wait_for_record(line, Duration::from_secs(20));
    }
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    let r = &out.records;
    let at = |line: &str| {
        r.iter().position(|l| l == line).unwrap_or_else(|| panic!("no {line:?} recorded\n{}", out.report()))
    };
    // Start: db, held until its healthcheck passes; cache; migrate; the mains.
    assert!(at("db starting") < at("db ready"), "{}", out.report());
    assert!(at("db ready") < at("cache starting"), "db gates the sequence until healthy\n{}", out.report());
    // cache holds the sequence only until started (no healthcheck): its own
    // first line and migrate's may come in either order, podinit's log not.
    let log = |line: &str| {
        out.stderr.find(line).unwrap_or_else(|| panic!("no {line:?} in podinit's log\n{}", out.report()))
    };
    assert!(log("cache started") < log("migrate started"), "{}", out.report());
    let migrated = at("migrate ran against postgres://db:5432/shop");
    assert!(migrated < at("web serving on 8080") && migrated < at("worker started"), "{}", out.report());
    // Stop: the mains, then cache, then db.
    let mains_stopped = at("web stopping").max(at("worker stopping"));
    assert!(mains_stopped < at("cache stopping"), "{}", out.report());
    assert!(at("cache stopping") < at("db stopping"), "{}", out.report());
    assert_eq!(r.iter().filter(|l| l.starts_with("migrate ran")).count(), 1, "{}", out.report());

    // The order is one of several Compose could take: the report says which.
    let (_, report) = import_ok(&example("web-stack/compose.yaml"), &[], &[]);
    assert!(
        report.contains("the dependencies are not one chain: Compose starts services whose dependencies are met in parallel, podinit starts them one at a time in this order: db, cache, migrate"),
        "{report}"
    );
}

/// profiles: `COMPOSE_PROFILES=jobs` makes api a sidecar for the scheduler;
/// `.env` and the environment fill in the values (the environment wins).
#[test]
fn the_profiles_example_runs_with_the_profile_from_the_environment() {
    let td = TestDir::new();
    let rec = td.rec();
    let out = td
        .podinit()
        .config(&example("profiles/compose.yaml"))
        .env("EVENTS", &rec)
        .env("TMPDIR", td.path())
        .env("COMPOSE_PROFILES", "jobs")
        .env("APP_ENV", "")
        .env("LOG_LEVEL", "")
        .deadline(Duration::from_secs(20))
        .run();
    out.assert_code(0);
    // APP_ENV is set (empty): ${APP_ENV-production} keeps it empty, ${LOG_LEVEL:-info} does not.
    assert_eq!(
        out.records,
        ["api  hello, Ada Lovelace info", "scheduler debug", "api stopping"],
        "{}",
        out.report()
    );
}

/// The real files of tests/corpus/compose read as Compose reads them (with
/// a `--command` for each service that runs its image's default). Each is
/// copied to a directory where the build directories and env files it names
/// exist (empty), since Compose refuses a file without them.
#[test]
fn the_corpus_reads_as_compose_reads_it() {
    let Some(python) = reference_python() else { return };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/compose");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut compared = 0;
    for original in files {
        let base = original.file_name().unwrap().to_string_lossy().into_owned();
        if base == "SOURCES.md" || base.starts_with('.') || base.ends_with(".inc") {
            continue;
        }
        let td = TestDir::new();
        let file = td.path().join(&base);
        std::fs::copy(&original, &file).unwrap();
        let mut tries = 0;
        let compose = loop {
            match reference(&python, &file, &[], &[]) {
                Ok(c) => break c,
                Err(e) if tries < 20 => {
                    tries += 1;
                    if let Some(path) = e.split("build path ").nth(1).and_then(|r| r.split(' ').next()) {
                        std::fs::create_dir_all(path).unwrap();
                    } else if let Some(path) = e.split("Couldn't find env file: ").nth(1) {
                        let path = Path::new(path.trim());
                        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                        std::fs::write(path, "").unwrap();
                    } else {
                        panic!("Compose 1.29 refuses {base}: {e}");
                    }
                }
                Err(e) => panic!("Compose 1.29 refuses {base}: {e}"),
            }
        };
        let commands: Vec<String> = compose["services"]
            .as_object()
            .unwrap()
            .iter()
            .filter(|(_, s)| s["argv"].as_array().unwrap().is_empty())
            .map(|(name, _)| format!("{name}=true"))
            .collect();
        let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
        same_as_compose(&python, &file, &[], &commands, &[]);
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} corpus files compared");
}

/// What Compose 1.29 does not know (lifecycle hooks, several env files, an
/// optional one, start_interval) read as the Compose Specification says, and
/// run as PID 1: the hooks run, the env files' values arrive.
#[test]
fn hooks_env_files_and_start_interval_of_the_specification() {
    let td = TestDir::new();
    td.write("a.env", "SHARED=from-a\nONLY_A='literal $x'\n");
    td.write("b.env", "SHARED=\"from-b\" # later files win\nGREETING=\"say \\\"hi\\\"\"\n");
    let file = td.write(
        "compose.yaml",
        r#"
services:
  db:
    command: ["sh", "-c", "echo db >> '@REC@'; touch '@DIR@/db.ready'; exec sleep 30"]
    healthcheck:
      test: ["CMD", "test", "-f", "@DIR@/db.ready"]
      interval: 1m
      start_period: 2s
      start_interval: 100ms
    stop_signal: SIGKILL
  app:
    command:
      - sh
      - -c
      - >-
        i=0; while [ $$i -lt 500 ] && ! grep -qx post_start '@REC@'; do sleep 0.02; i=$$((i+1)); done;
        echo "app $$SHARED $$ONLY_A $$GREETING $$OWN" >> '@REC@'
    oom_score_adj: 100
    security_opt: ["no-new-privileges:true", "label=disable"]
    env_file:
      - a.env
      - path: b.env
      - path: missing.env
        required: false
    environment:
      OWN: own
    post_start:
      - command: ["sh", "-c", "echo post_start >> '@REC@'"]
      - command: echo second
    pre_stop:
      - command: sh -c 'echo pre_stop >> @REC@'
        user: root
    depends_on:
      db:
        condition: service_healthy
"#,
    );
    let (toml, report) = import_ok(&file, &[], &[]);
    let procs = processes(&toml);
    let (db, app) = (procs[0], procs[1]);
    let startup = db["startup_probe"].as_table().unwrap();
    assert_eq!(str_of(startup, "period"), Some("100ms"));
    assert_eq!(startup["failure_threshold"].as_integer(), Some(3 + 20));
    assert_eq!(str_of(db["readiness_probe"].as_table().unwrap(), "period"), Some("60s"));
    assert_eq!(app["oom_score_adj"].as_integer(), Some(100));
    assert_eq!(app["no_new_privileges"].as_bool(), Some(true));
    assert_eq!(str_of(app, "env_file"), None);
    assert_eq!(app["env"]["SHARED"].as_str(), Some("from-b"));
    assert_eq!(app["env"]["ONLY_A"].as_str(), Some("literal $x"));
    assert_eq!(app["env"]["OWN"].as_str(), Some("own"));
    for want in [
        "services.app.post_start[1]: dropped: podinit runs one hook of each kind",
        "services.app.pre_stop[0].user: dropped",
        "missing.env\" cannot be read",
        "services.app.security_opt: ignored: security_opt \"label=disable\"",
    ] {
        assert!(report.contains(want), "expected {want:?} in\n{report}");
    }

    let out = td.podinit().config(&file).deadline(Duration::from_secs(20)).run();
    out.assert_code(0);
    assert_eq!(out.records, ["db", "post_start", "app from-b literal $x say \"hi\" own"], "{}", out.report());
}

#[test]
fn a_command_for_no_service_is_an_error() {
    let td = TestDir::new();
    let file = td.write(
        "compose.yaml",
        "services:\n  app:\n    command: x\n  dev:\n    image: y\n    profiles: [dev]\n",
    );
    let (code, _, report) = import(&file, &["--command", "ap=sleep 1"], &[]);
    assert_eq!(code, Some(2), "{report}");
    assert!(report.contains("--command ap=...: no service of this file has this name"), "{report}");
    let (_, report) = import_ok(&file, &["--command", "dev=sleep 1"], &[]);
    assert!(report.contains("--command dev=...: dev is left out"), "{report}");
}

/// A service that runs a cron daemon is imported as it is, and the report
/// says it could be a scheduled entry; a service that only mentions cron is
/// not named.
#[test]
fn a_cron_sidecar_is_pointed_at_scheduled_entries() {
    let td = TestDir::new();
    let file = td.write(
        "compose.yaml",
        "services:\n  cron:\n    image: alpine\n    command: [\"busybox\", \"crond\", \"-f\"]\n  jobs:\n    command: sh -c 'exec supercronic /etc/crontab'\n  app:\n    command: echo cron\n",
    );
    let (t, report) = import_ok(&file, &[], &[]);
    assert_eq!(processes(&t).len(), 3, "the import stays as it is");
    let hint =
        "could be a scheduled entry (role = \"scheduled\"; docs/configuration.md, \"Scheduled entries\")";
    for want in [
        "compose.yaml:2:3: services.cron: note: cron: runs a cron daemon: it ",
        "services.jobs: note: jobs: runs a cron daemon",
    ] {
        assert!(report.contains(want), "expected {want:?} in\n{report}");
    }
    assert_eq!(report.matches(hint).count(), 2, "{report}");
    assert!(!report.contains("app: runs a cron daemon"), "{report}");
}
