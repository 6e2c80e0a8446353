//! The docs keep up with the code: every key the config accepts is in
//! docs/configuration.md. The keys are not listed here by hand: they come from
//! the config reader itself, which names every field it expects when it meets
//! an unknown one.

use podinit::config::{from_source, LoadOptions, Source};

/// The fields of the table that `template` puts `bogus = 1` in (at `@`).
fn fields(template: &str) -> Vec<String> {
    let text = template.replace('@', "bogus = 1");
    let source = Source { path: Some("pod.toml".into()), text };
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
