//! Unit tests of the supervisord reader: roles and order, groups, the
//! layered environment, notes for what supervisord ignores, and the
//! helpers (glob matching, typo hints). They start no process.

use std::path::Path;

use super::include::fnmatch;
use super::program::close;
use crate::import::{import, Format, ImportOptions, Imported};

fn imp(text: &str, opts: &ImportOptions) -> Imported {
    import(Format::Supervisord, Path::new("t.conf"), text, opts).unwrap_or_else(|e| panic!("{e:?}"))
}

fn procs(i: &Imported) -> Vec<toml::Value> {
    let t: toml::Table = toml::from_str(&i.toml).unwrap_or_else(|e| panic!("{e}\n{}", i.toml));
    t["process"].as_array().unwrap().clone()
}

#[test]
fn roles_and_restarts_follow_autorestart_in_priority_order() {
    let i = imp(
        "[program:d]\ncommand=d\nautorestart=true\npriority=4\n[program:c]\ncommand=c\nexitcodes=0,3\npriority=3\n\
         [program:b]\ncommand=b\nautorestart=false\npriority=2\n[program:a]\ncommand=a\nautorestart=true\npriority=1\n",
        &ImportOptions::default(),
    );
    let p = procs(&i);
    let got: Vec<(&str, &str, Option<&str>)> = p
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap(),
                p["role"].as_str().unwrap(),
                p.get("restart_policy").and_then(|v| v.as_str()),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("a", "sidecar", None),
            ("b", "main", Some("Never")),
            ("c", "main", Some("Never")),
            ("d", "main", Some("Always"))
        ]
    );
    let rule = &p[2]["restart_rules"][0];
    assert_eq!(rule["exit_codes"]["operator"].as_str(), Some("not_in"));
    assert_eq!(rule["exit_codes"]["values"].as_array().unwrap().len(), 2);
    assert!(i.toml.contains("termination_grace_period = \"40s\""), "{}", i.toml);
}

#[test]
fn a_group_orders_its_programs_by_its_own_priority() {
    let i = imp(
        "[program:x]\ncommand=x\npriority=5\n[program:y]\ncommand=y\npriority=5\n[program:z]\ncommand=z\npriority=2\n\
         [group:g]\nprograms=y,x\npriority=1\n",
        &ImportOptions::default(),
    );
    let names: Vec<String> = procs(&i).iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["y", "x", "z"]);
}

#[test]
fn environment_is_layered_and_unknown_variables_are_left_to_the_shell() {
    let i = imp(
        "[supervisord]\nenvironment=A=1,B=2\n[program:p]\ncommand=/bin/app --home %(ENV_HOME_XYZ_UNSET)s 'a b'\n\
         environment=B=3,C=\"x,y\",D=%(ENV_A)s\n",
        &ImportOptions::default(),
    );
    let p = &procs(&i)[0];
    let env = p["env"].as_table().unwrap();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str().unwrap())).collect();
    assert_eq!(env, [("A", "1"), ("B", "3"), ("C", "x,y"), ("D", "1")]);
    assert_eq!(p["command"].as_str(), Some(r#"exec /bin/app --home "${HOME_XYZ_UNSET?}" 'a b'"#));
}

#[test]
fn keys_and_sections_supervisord_ignores_are_reported() {
    let i = imp("[program:p]\ncommand=p\nautorestrt=true\n[foo]\nx=1\n", &ImportOptions::default());
    let notes: Vec<String> = i.notes.iter().map(ToString::to_string).collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("t.conf:3:1: program:p.autorestrt: ignored:")
                && n.contains("autorestart")),
        "{notes:#?}"
    );
    assert!(notes.iter().any(|n| n.starts_with("t.conf:4:1: [foo]: ignored")), "{notes:#?}");
}

#[test]
fn a_program_without_a_command_is_an_error_at_its_section() {
    let e = import(
        Format::Supervisord,
        Path::new("t.conf"),
        "\n[program:p]\nuser=x\n",
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert_eq!((e.0[0].line, e.0[0].col), (2, 1), "{e:?}");
}

#[test]
fn names_match_as_glob_matches_them() {
    assert!(fnmatch("*.conf", "web.conf"));
    assert!(!fnmatch("*.conf", "web.ini"));
    assert!(fnmatch("w?b.[ch]onf", "web.conf"));
    assert!(fnmatch("[!x]*", "abc"));
    assert!(!fnmatch("[a-c]x", "dx"));
}

#[test]
fn typos_are_one_edit_away() {
    assert!(close("autorestart", "autorestrt"));
    assert!(close("command", "comand"));
    assert!(close("priority", "priorty"));
    assert!(close("startsecs", "startsces"));
    assert!(!close("command", "directory"));
}
