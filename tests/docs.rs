//! The docs keep up with the code: every key the config accepts is in
//! docs/configuration.md. The keys are not listed here by hand: they come from
//! the config reader itself, which names every field it expects when it meets
//! an unknown one.

// The tests run podinit and taplo and wait for them: they are not podinit, so
// the one-waiter rule of clippy.toml does not apply here.
#![allow(clippy::disallowed_methods)]

use podinit::config::{from_source, LoadOptions, Source};

/// The fields of the table that `template` puts `bogus = 1` in (at `@`).
fn fields(template: &str) -> Vec<String> {
    let text = template.replace('@', "bogus = 1");
    let source = Source { path: Some("pod.toml".into()), text, origin: None };
    let err =
        from_source(&source, &LoadOptions::default()).expect_err("a bogus key was accepted").to_string();
    let list = err
        .split_once("expected one of ")
        .map(|(_, l)| l)
        .or_else(|| err.split_once("expected ").map(|(_, l)| l))
        .unwrap_or_else(|| panic!("no field list in {err:?}"));
    // serde writes `a`, `b`, `c` and, for two, `a` or `b`.
    let list = list.lines().next().unwrap_or_default().replace("` or `", "`, `");
    list.split(", ").map(|f| f.trim().trim_matches('`').to_owned()).filter(|f| !f.is_empty()).collect()
}

const PROCESS: &str = "[[process]]\nname = \"a\"\ncommand = \"x\"\n";

#[test]
fn every_config_key_is_documented() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    let tables = [
        ("top", "@\n".to_owned(), None),
        ("[pod]", "[pod]\n@\n".to_owned(), None),
        ("backoff", "[pod]\nbackoff = { @ }\n".to_owned(), None),
        ("[[process]]", format!("{PROCESS}@\n"), None),
        ("probe", format!("{PROCESS}readiness_probe = {{ @ }}\n"), None),
        ("hook", format!("{PROCESS}pre_stop = {{ @ }}\n"), None),
        ("exec", format!("{PROCESS}readiness_probe = {{ exec = {{ @ }} }}\n"), Some("exec")),
        (
            "tcp_socket",
            format!("{PROCESS}readiness_probe = {{ tcp_socket = {{ @ }} }}\n"),
            Some("tcp_socket"),
        ),
        ("http_get", format!("{PROCESS}readiness_probe = {{ http_get = {{ @ }} }}\n"), Some("http_get")),
        ("grpc", format!("{PROCESS}readiness_probe = {{ grpc = {{ @ }} }}\n"), Some("grpc")),
        ("log_line", format!("{PROCESS}readiness_probe = {{ log_line = {{ @ }} }}\n"), Some("log_line")),
        ("restart rule", format!("{PROCESS}restart_rules = [{{ @ }}]\n"), Some("restart_rules")),
        (
            "exit_codes",
            format!("{PROCESS}restart_rules = [{{ action = \"restart\", exit_codes = {{ @ }} }}]\n"),
            Some("exit_codes"),
        ),
    ];
    let mut missing = Vec::new();
    let mut total = 0;
    for (table, template, prefix) in &tables {
        let keys = fields(template);
        assert!(!keys.is_empty(), "{table}: no keys found");
        for key in keys {
            total += 1;
            let written = match prefix {
                Some(p) => format!("`{p}.{key}`"),
                None => format!("| `{key}` |"),
            };
            // The top-level keys are the section headings.
            let top = *table == "top"
                && (doc.contains(&format!("`[{key}]`")) || doc.contains(&format!("`[[{key}]]`")));
            if !doc.contains(&written) && !top {
                missing.push(format!("{table}: {key}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "keys the config accepts but docs/configuration.md does not document: {missing:?}"
    );
    assert!(total > 40, "only {total} keys found: the field lists were not read");
}

fn schema() -> serde_json::Value {
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/podinit.schema.json")).unwrap();
    serde_json::from_str(&text).expect("docs/podinit.schema.json is JSON")
}

/// The property names of a schema definition (or of the top level).
fn schema_keys(schema: &serde_json::Value, definition: Option<&str>) -> Vec<String> {
    let node = match definition {
        Some(d) => &schema["definitions"][d],
        None => schema,
    };
    let mut keys: Vec<String> = node["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{definition:?}: no properties"))
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

#[test]
fn the_json_schema_has_exactly_the_keys_the_config_reader_takes() {
    let schema = schema();
    let tables = [
        (None, "@\n".to_owned()),
        (Some("pod"), "[pod]\n@\n".to_owned()),
        (Some("backoff"), "[pod]\nbackoff = { @ }\n".to_owned()),
        (Some("process"), format!("{PROCESS}@\n")),
        (Some("probe"), format!("{PROCESS}readiness_probe = {{ @ }}\n")),
        (Some("hook"), format!("{PROCESS}pre_stop = {{ @ }}\n")),
        (Some("exec"), format!("{PROCESS}readiness_probe = {{ exec = {{ @ }} }}\n")),
        (Some("tcp_socket"), format!("{PROCESS}readiness_probe = {{ tcp_socket = {{ @ }} }}\n")),
        (Some("http_get"), format!("{PROCESS}readiness_probe = {{ http_get = {{ @ }} }}\n")),
        (Some("grpc"), format!("{PROCESS}readiness_probe = {{ grpc = {{ @ }} }}\n")),
        (Some("restart_rule"), format!("{PROCESS}restart_rules = [{{ @ }}]\n")),
        (
            Some("exit_codes"),
            format!("{PROCESS}restart_rules = [{{ action = \"restart\", exit_codes = {{ @ }} }}]\n"),
        ),
    ];
    for (definition, template) in tables {
        let mut reader = fields(&template);
        reader.sort();
        assert_eq!(schema_keys(&schema, definition), reader, "schema definition {definition:?}");
    }
}

#[test]
fn podinit_schema_prints_the_schema_in_docs() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_podinit")).arg("schema").output().unwrap();
    assert!(out.status.success());
    let docs = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/podinit.schema.json")).unwrap();
    assert_eq!(out.stdout, docs);
}

/// taplo: on PATH, or where pip put it (`.ci/run` installs PyPI's taplo).
fn taplo() -> std::path::PathBuf {
    let pip_bin = std::process::Command::new("python3")
        .args(["-c", "import sysconfig; print(sysconfig.get_path('scripts'))"])
        .output()
        .ok()
        .map(|o| std::path::PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()).join("taplo"));
    pip_bin
        .filter(|p| p.is_file())
        .or_else(|| {
            std::env::var_os("PATH")
                .and_then(|p| std::env::split_paths(&p).map(|d| d.join("taplo")).find(|t| t.is_file()))
        })
        .expect("taplo is missing: `python3 -m pip install taplo`")
}

fn taplo_check(file: &std::path::Path) -> std::process::Output {
    std::process::Command::new(taplo()).arg("check").arg(file).output().expect("run taplo")
}

#[test]
#[ignore = "needs taplo (PyPI's taplo): run with --include-ignored (bash .ci/run installs it)"]
fn every_example_is_valid_against_the_schema_with_taplo() {
    let dir = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/examples"));
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let file = entry.unwrap().path().join("podinit.toml");
        if !file.is_file() {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("#:schema ../../docs/podinit.schema.json\n"),
            "{}: no #:schema line",
            file.display()
        );
        let out = taplo_check(&file);
        assert!(out.status.success(), "{}: {}", file.display(), String::from_utf8_lossy(&out.stderr));
        checked += 1;
    }
    assert!(checked >= 3, "only {checked} examples found");
    // The check can fail: an unknown key and a signal out of range are refused.
    let td = tempfile::tempdir().unwrap();
    let bad = td.path().join("bad.toml");
    let schema = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/podinit.schema.json");
    std::fs::write(&bad, format!("#:schema {schema}\n[pod]\nbogus = 1\n[[process]]\nname = \"a\"\ncommand = \"x\"\nstop_signal = 99\n")).unwrap();
    let out = taplo_check(&bad);
    assert!(!out.status.success(), "taplo accepted a bad file: {}", String::from_utf8_lossy(&out.stderr));
}

/// Every warning of `podinit check` has its row in docs/configuration.md,
/// "Warnings", and is one of the names the JSON schema allows in
/// `allow_warnings`, and no other name is.
#[test]
fn every_warning_is_documented_and_in_the_schema() {
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/configuration.md")).unwrap();
    let section = doc.split_once("\n## Warnings\n").expect("a Warnings section").1;
    let schema = schema();
    let listed: Vec<&str> = schema["definitions"]["warnings"]["items"]["enum"]
        .as_array()
        .expect("the warnings' names in the schema")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let names: Vec<&str> = podinit::config::lint::Lint::ALL.iter().map(|l| l.name()).collect();
    assert_eq!(listed, names, "docs/podinit.schema.json, definitions.warnings");
    for name in names {
        assert!(section.contains(&format!("| `{name}` |")), "{name} has no row in \"Warnings\"");
    }
}
