//! The configuration (docs/configuration.md) process settings: `user` (uid, gid, supplementary groups), `env`
//! and `env_file`, `working_dir`, `stop_signal`, `oom_score_adj` (and the OOM
//! protection of sidecars).

mod common;
use common::*;
use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::PermissionsExt;

/// When podinit is not root, `user` must be refused before anything starts
/// (exit 2, naming `user`). Says so loudly: the tests of `user` itself cannot
/// run then.
fn assert_user_refused_when_not_root(td: &TestDir, user: &str) {
    eprintln!(
        "!!! NOT ROOT: `user = {user:?}` cannot be tested here; checking that podinit refuses it with exit 2 instead"
    );
    let mut cfg = String::new();
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", &format!("user = \"{user}\""));
    let path = td.config(&cfg);
    let out = td.podinit_not_pid1().config(&path).deadline(secs(10.0)).run();
    out.assert_code(2);
    assert!(out.stderr.contains("user"), "{}", out.report());
    assert!(out.records.is_empty(), "{}", out.report());
}

/// Script lines printing the ids of the shell to stdout.
const PRINT_IDS: &str = r#"echo "uid $(id -u)"
echo "gid $(id -g)"
echo "groups $(id -G)"
echo "status-groups $(grep '^Groups:' /proc/self/status | cut -f2)""#;

fn value_of(lines: &[String], key: &str, report: &str) -> String {
    let prefix = format!("{key} ");
    lines
        .iter()
        .find_map(|l| l.strip_prefix(&prefix).map(|v| v.trim().to_string()))
        .or_else(|| lines.iter().find(|l| **l == key).map(|_| String::new()))
        .unwrap_or_else(|| panic!("no {key:?} line\n{report}"))
}

fn id_set(s: &str) -> BTreeSet<u32> {
    s.split_whitespace().map(|g| g.parse().unwrap_or_else(|_| panic!("bad group list {s:?}"))).collect()
}

/// `user = "65534:65534"`: the child runs with uid, gid and groups 65534.
#[test]
fn user_uid_gid_sets_uid_gid_and_groups() {
    let td = TestDir::new();
    if !is_root() {
        return assert_user_refused_when_not_root(&td, "65534:65534");
    }
    let mut cfg = String::new();
    cfg += &entry("app", "main", PRINT_IDS, "user = \"65534:65534\"\nworking_dir = \"/\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    let lines = out.stdout_of("app");
    let rep = out.report();
    assert_eq!(value_of(&lines, "uid", &rep), "65534", "{rep}");
    assert_eq!(value_of(&lines, "gid", &rep), "65534", "{rep}");
    assert_eq!(id_set(&value_of(&lines, "groups", &rep)), BTreeSet::from([65534]), "{rep}");
    assert_eq!(id_set(&value_of(&lines, "status-groups", &rep)), BTreeSet::from([65534]), "{rep}");
}

/// `user = "nobody"` is resolved from /etc/passwd (uid, primary gid) and
/// /etc/group (the groups that list it).
#[test]
fn user_name_is_resolved_from_etc_passwd() {
    let td = TestDir::new();
    if !is_root() {
        return assert_user_refused_when_not_root(&td, "nobody");
    }
    let passwd = fs::read_to_string("/etc/passwd").unwrap();
    let f: Vec<&str> = passwd
        .lines()
        .map(|l| l.split(':').collect::<Vec<_>>())
        .find(|f| f.len() >= 4 && f[0] == "nobody")
        .expect("no user nobody in /etc/passwd");
    let (uid, gid): (u32, u32) = (f[2].parse().unwrap(), f[3].parse().unwrap());
    let mut want_groups = BTreeSet::from([gid]);
    for g in fs::read_to_string("/etc/group").unwrap_or_default().lines() {
        let g: Vec<&str> = g.split(':').collect();
        if g.len() >= 4 && g[3].split(',').any(|m| m == "nobody") {
            want_groups.insert(g[2].parse().unwrap());
        }
    }
    let mut cfg = String::new();
    cfg += &entry(
        "app",
        "main",
        &format!("{PRINT_IDS}\necho \"name $(id -un)\""),
        "user = \"nobody\"\nworking_dir = \"/\"",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    let lines = out.stdout_of("app");
    let rep = out.report();
    assert_eq!(value_of(&lines, "uid", &rep), uid.to_string(), "{rep}");
    assert_eq!(value_of(&lines, "gid", &rep), gid.to_string(), "{rep}");
    assert_eq!(value_of(&lines, "name", &rep), "nobody", "{rep}");
    assert_eq!(id_set(&value_of(&lines, "groups", &rep)), want_groups, "{rep}");
}

/// The harness runs `unshare` through PATH: writes a wrapper script
/// `@DIR@/bin/unshare` (with `$UNSHARE` the real one) and returns a PATH that
/// finds it first, for `Launcher::env("PATH", ..)`. What the wrapper sets up
/// (groups, oom_score_adj) then holds for podinit itself.
fn unshare_wrapper(td: &TestDir, body: &str) -> String {
    let bin = td.file("bin");
    fs::create_dir_all(&bin).unwrap();
    let unshare = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("unshare"))
        .find(|p| p.is_file())
        .expect("unshare in PATH");
    let wrapper = bin.join("unshare");
    fs::write(&wrapper, format!("#!/bin/sh\nUNSHARE='{}'\n{body}\n", unshare.display())).unwrap();
    fs::set_permissions(&wrapper, fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default())
}

/// podinit itself runs with supplementary groups 4 and 27 (under `setpriv`,
/// through a wrapper for `unshare`): an entry without `user` keeps them, an
/// entry with `user = "65534:65534"` has none of them.
#[test]
fn user_drops_podinits_supplementary_groups() {
    let td = TestDir::new();
    if !is_root() {
        return assert_user_refused_when_not_root(&td, "65534:65534");
    }
    let path_var = unshare_wrapper(&td, "exec setpriv --groups 4,27 \"$UNSHARE\" \"$@\"");
    let mut cfg = String::new();
    cfg += &entry("asroot", "main", PRINT_IDS, "");
    cfg += &entry("asnobody", "main", PRINT_IDS, "user = \"65534:65534\"\nworking_dir = \"/\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).env("PATH", &path_var).deadline(secs(10.0)).run();
    out.assert_code(0);
    let rep = out.report();
    let root_groups = id_set(&value_of(&out.stdout_of("asroot"), "status-groups", &rep));
    assert!(
        root_groups.contains(&4) && root_groups.contains(&27),
        "test setup: podinit was meant to run with supplementary groups 4 and 27, its child has {root_groups:?}\n{rep}"
    );
    let lines = out.stdout_of("asnobody");
    assert_eq!(value_of(&lines, "uid", &rep), "65534", "{rep}");
    assert_eq!(
        id_set(&value_of(&lines, "status-groups", &rep)),
        BTreeSet::from([65534]),
        "podinit's supplementary groups were kept by a `user` entry\n{rep}"
    );
}

/// `env` and `env_file` reach the child on top of podinit's own environment;
/// `env` wins over `env_file`; the Compose env-file rules: comments, blank
/// lines, `export `, one pair of quotes stripped, `=` in values, empty values.
#[test]
fn env_and_env_file_reach_the_child_with_env_winning() {
    let td = TestDir::new();
    td.write(
        "app.env",
        r#"# a comment line
A=from_file

export B=exported
C="double quoted"
D='single quoted'
E="\"twice\""
F=a=b=c
G=
H=file_value
K=""
   # an indented comment
"#,
    );
    let vars = ["A", "B", "C", "D", "E", "F", "G", "H", "J", "K", "FROM_PODINIT"];
    let mut cfg = String::new();
    cfg += &entry(
        "app",
        "main",
        &vars
            .iter()
            .map(|v| format!(r#"printf '{v}=[%s] %s\n' "${v}" "${{{v}+set}}""#))
            .collect::<Vec<_>>()
            .join("\n"),
        "env_file = \"@DIR@/app.env\"\nenv = { H = \"from_env\", J = \"only_env\" }",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).env("FROM_PODINIT", "inherited").deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(
        out.stdout_of("app"),
        vec![
            "A=[from_file] set",
            "B=[exported] set",
            "C=[double quoted] set",
            "D=[single quoted] set",
            "E=[\"twice\"] set",
            "F=[a=b=c] set",
            "G=[] set",
            "H=[from_env] set",
            "J=[only_env] set",
            "K=[] set",
            "FROM_PODINIT=[inherited] set",
        ],
        "{}",
        out.report()
    );
}

/// Line (1-based) of the first line of `text` containing `needle`.
fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect("needle in config") + 1
}

/// Whether `stderr` names `pod.toml:LINE:COL` for some column.
fn names_line(stderr: &str, line: usize) -> bool {
    let pat = format!("pod.toml:{line}:");
    stderr.match_indices(&pat).any(|(i, _)| stderr[i + pat.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

/// A missing env_file is refused before anything starts: exit 2, naming
/// file:line:col and `env_file`.
#[test]
fn missing_env_file_is_refused_with_its_place_in_the_config() {
    let td = TestDir::new();
    let mut cfg = String::new();
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "env_file = \"@DIR@/missing.env\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(2);
    let line = line_of(&fs::read_to_string(&path).unwrap(), "env_file");
    assert!(names_line(&out.stderr, line), "expected pod.toml:{line}:COL in the message\n{}", out.report());
    assert!(out.stderr.contains("env_file"), "{}", out.report());
    assert!(out.records.is_empty(), "something started\n{}", out.report());
}

/// `working_dir` is the child's current directory.
#[test]
fn working_dir_is_the_childs_directory() {
    let td = TestDir::new();
    let wd = td.file("work dir");
    fs::create_dir(&wd).unwrap();
    let mut cfg = String::new();
    cfg += &entry("app", "main", "echo \"pwd $(pwd -P)\" >> \"@REC@\"", "working_dir = \"@DIR@/work dir\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    let want = format!("pwd {}", fs::canonicalize(&wd).unwrap().display());
    assert_eq!(out.records, vec![want], "{}", out.report());
}

/// A non-existent `working_dir` is refused before anything starts (exit 2).
#[test]
fn missing_working_dir_is_refused() {
    let td = TestDir::new();
    let mut cfg = String::new();
    cfg += &entry("side", "sidecar", &sleeper("side"), "");
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "working_dir = \"@DIR@/no-such-dir\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(2);
    assert!(out.stderr.contains("working_dir"), "{}", out.report());
    let line = line_of(&fs::read_to_string(&path).unwrap(), "working_dir");
    assert!(names_line(&out.stderr, line), "expected pod.toml:{line}:COL in the message\n{}", out.report());
    assert!(out.records.is_empty(), "something started\n{}", out.report());
}

/// On termination the main gets its `stop_signal` (SIGUSR1), not SIGTERM.
fn check_stop_signal(setting: &str) {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        r#"trap 'echo "got USR1" >> "@REC@"; exit 0' USR1
trap 'echo "got TERM" >> "@REC@"; exit 0' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.1; done"#,
        &format!("stop_signal = {setting}"),
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(0);
    assert_eq!(out.records, vec!["start app", "got USR1"], "{}", out.report());
}

#[test]
fn stop_signal_by_name_is_sent_instead_of_sigterm() {
    check_stop_signal("\"SIGUSR1\"");
}

#[test]
fn stop_signal_by_number_is_sent_instead_of_sigterm() {
    check_stop_signal("10");
}

/// Script that records its own oom_score_adj at once, read by the shell
/// itself: the value the process starts with (and that anything it forks at
/// once inherits), so podinit must have set it before the program runs.
fn oom_recorder(name: &str) -> String {
    format!(
        r#"read adj < /proc/self/oom_score_adj
echo "oom {name} $adj" >> "@REC@""#
    )
}

/// `oom_score_adj = 500` is the main's value from its start.
#[test]
fn oom_score_adj_is_set_on_the_process() {
    let td = TestDir::new();
    let mut cfg = String::new();
    cfg += &entry("app", "main", &oom_recorder("app"), "oom_score_adj = 500");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.records, vec!["oom app 500"], "{}", out.report());
}

/// Whether this process may lower an oom_score_adj (CAP_SYS_RESOURCE).
fn has_cap_sys_resource() -> bool {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 24) != 0)
}

/// A sidecar with no `oom_score_adj` and a main with `main_adj`; podinit runs
/// with `podinit_adj` (set by the unshare wrapper). Each records its value
/// once both are running (after podinit has set it). Returns the records.
fn oom_pod(podinit_adj: i32, main_adj: i32) -> Outcome {
    let td = TestDir::new();
    let path_var = unshare_wrapper(
        &td,
        &format!("echo {podinit_adj} > /proc/self/oom_score_adj || exit 99\nexec \"$UNSHARE\" \"$@\""),
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"trap 'exit 0' TERM
i=0; while [ ! -f "@DIR@/app.up" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done
read adj < /proc/self/oom_score_adj
echo "oom side $adj" >> "@REC@"
touch "@DIR@/side.up"
while :; do sleep 0.1; done"#,
        "",
    );
    cfg += &entry(
        "app",
        "main",
        r#"touch "@DIR@/app.up"
i=0; while [ ! -f "@DIR@/side.up" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done
read adj < /proc/self/oom_score_adj
echo "oom app $adj" >> "@REC@""#,
        &format!("oom_score_adj = {main_adj}"),
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).env("PATH", &path_var).deadline(secs(10.0)).run();
    out.assert_code(0);
    out
}

/// podinit at 500, a main at 200, a sidecar with no setting: the sidecar gets
/// 200, not the 500 it would inherit (lowering within what podinit may do
/// without privileges).
#[test]
fn sidecar_is_lowered_to_the_mains_oom_score_adj() {
    let out = oom_pod(500, 200);
    let mut r = out.records.clone();
    r.sort();
    assert_eq!(r, vec!["oom app 200", "oom side 200"], "{}", out.report());
}

/// A sidecar with no setting beside a main with `oom_score_adj = -100` gets
/// -100: never more likely to be OOM-killed than the main. Setting a negative
/// value needs root with CAP_SYS_RESOURCE: without it, said loudly, only the
/// order (sidecar <= main) is asserted.
#[test]
fn sidecar_is_never_more_oom_killable_than_a_negative_main() {
    let privileged = is_root() && has_cap_sys_resource();
    if !privileged {
        eprintln!("!!! NOT ROOT WITH CAP_SYS_RESOURCE: a negative oom_score_adj cannot be set here; asserting only sidecar <= main");
    }
    let out = oom_pod(0, -100);
    let value = |name: &str| -> i32 {
        let prefix = format!("oom {name} ");
        out.records
            .iter()
            .find_map(|l| l.strip_prefix(&prefix)?.parse().ok())
            .unwrap_or_else(|| panic!("no {prefix:?} record\n{}", out.report()))
    };
    let (side, app) = (value("side"), value("app"));
    assert!(
        side <= app,
        "sidecar at {side}, main at {app}: the sidecar is more OOM-killable\n{}",
        out.report()
    );
    if privileged {
        assert_eq!((side, app), (-100, -100), "{}", out.report());
    }
}

/// `no_new_privileges = true` sets PR_SET_NO_NEW_PRIVS for the entry (the
/// kernel shows it as `NoNewPrivs: 1`), and only for that entry.
#[test]
fn no_new_privileges_is_set_for_that_entry_only() {
    let td = TestDir::new();
    let record = r#"echo "nnp $(grep NoNewPrivs /proc/self/status | tr -d "[:space:]")" >> "@REC@""#;
    let cfg = format!(
        "[[process]]\nname = \"locked\"\ncommand = '{}'\nno_new_privileges = true\n\n[[process]]\nname = \"free\"\ncommand = '{}'\n",
        record.replace("nnp", "locked"),
        record.replace("nnp", "free")
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    let r = &out.records;
    assert!(r.iter().any(|l| l == "locked NoNewPrivs:1"), "{}", out.report());
    assert!(r.iter().any(|l| l == "free NoNewPrivs:0"), "{}", out.report());
}
