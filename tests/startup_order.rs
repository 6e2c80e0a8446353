//! The lifecycle (docs/lifecycle.md): init and sidecar entries start one at a time in file
//! order; mains start only after all of them, without waiting for each other.

mod common;
use common::*;

/// init a, sidecar b, init c, sidecar d, mains e and f.
#[test]
fn interleaved_inits_and_sidecars_start_one_at_a_time_in_file_order() {
    let td = TestDir::new();
    let init =
        |n: &str| format!("echo \"start {n}\" >> \"@REC@\"\nsleep 0.2\necho \"exit {n}\" >> \"@REC@\"");
    // Each main exits once the other has recorded its start (5 s at most):
    // mains that waited for each other would show an exit before a start.
    let main = |n: &str, other: &str| {
        format!(
            "echo \"start {n}\" >> \"@REC@\"\n{}\necho \"exit {n}\" >> \"@REC@\"",
            sh_wait_records(&format!("start {other}"), 1, 5)
        )
    };
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry("a", "init", &init("a"), "");
    cfg += &entry("b", "sidecar", &sleeper_up("b"), &up_probe("b"));
    cfg += &entry("c", "init", &init("c"), "");
    cfg += &entry("d", "sidecar", &sleeper_up("d"), &up_probe("d"));
    cfg += &entry("e", "main", &main("e", "f"), "");
    cfg += &entry("f", "main", &main("f", "e"), "");
    let path = td.config(&cfg);

    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    let r = &out.records;

    // The ordered list, strictly one at a time.
    assert_eq!(
        r.get(..6),
        Some(&["start a", "exit a", "start b", "start c", "exit c", "start d"].map(String::from)[..]),
        "inits and sidecars must start one at a time in file order\n{}",
        out.report()
    );
    // Mains only after the whole list, both of them.
    for m in ["e", "f"] {
        assert!(pos(r, &format!("start {m}")) > pos(r, "start d"), "{}", out.report());
        assert_eq!(count(r, &format!("start {m}")), 1, "{}", out.report());
    }
    // Mains do not wait for each other: both started before either exited.
    let first_exit = pos(r, "exit e").min(pos(r, "exit f"));
    assert!(
        pos(r, "start e") < first_exit && pos(r, "start f") < first_exit,
        "mains must start without waiting for each other\n{}",
        out.report()
    );
    // The sidecars kept running (started once, stopped only after the mains).
    for s in ["b", "d"] {
        assert_eq!(count(r, &format!("start {s}")), 1, "{}", out.report());
        let stop = pos(r, &format!("stop {s}"));
        assert!(stop > pos(r, "exit e") && stop > pos(r, "exit f"), "{}", out.report());
    }
    assert!(pos(r, "stop d") < pos(r, "stop b"), "{}", out.report());
}

/// A sidecar without probes is started as soon as its process runs: the next
/// entry starts while it is still running, and it is not run twice.
#[test]
fn sidecar_without_probes_keeps_running_while_next_entries_start() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "echo $$ > \"@DIR@/side.pid\"\necho \"start side\" >> \"@REC@\"\nexec sleep 60",
        "",
    );
    cfg += &entry(
        "app",
        "main",
        &format!(
            "{}\nkill -0 \"$(cat '@DIR@/side.pid')\" && echo \"app sees side running\" >> \"@REC@\"\necho \"exit app\" >> \"@REC@\"",
            sh_wait_records("start side", 1, 5)
        ),
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert_eq!(count(&out.records, "start side"), 1, "{}", out.report());
    assert!(out.records.contains(&"app sees side running".to_string()), "{}", out.report());
}
