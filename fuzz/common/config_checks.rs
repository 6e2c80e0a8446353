//! The checks of the `config` fuzz target, shared word for word with
//! `tests/config_fuzz_regressions.rs` (both include this file with `#[path]`),
//! so a saved fuzz input is replayed in `cargo test` exactly as the fuzzer ran it.
//!
//! Every check panics on failure, so the fuzzer records the input as a crash and
//! the regression test reports which file broke which rule. The rules: config
//! text in, an error or a valid `PodSpec` out, never a panic (as PID 1 a panic
//! kills the container); every issue that names a line points inside the file
//! (1 <= line <= lines + 1, col >= 1) and prints; a valid spec obeys The configuration (docs/configuration.md) and
//! `plan::render` prints it, and the lifecycle machine can start it and begin
//! termination (so a value the validator lets through cannot crash PID 1 later,
//! e.g. a duration too long to add to an `Instant`); `locate::locate` gives the
//! right line and column for any offset, including one inside a multi-byte
//! character or past the end.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::time::Instant;

use podinit::config::Role;
use podinit::config::{
    from_source, ConfigError, HookSpec, LoadOptions, PodSpec, ProbeAction, ProbeSpec, Source,
};
use podinit::lifecycle::exit_status::Exit;
use podinit::lifecycle::{Action, Event, Pod};

/// The file name every issue must carry.
pub const FILE: &str = "fuzz.toml";

/// The fuzzer's entry: non-UTF-8 input is skipped (podinit reads the file with
/// `read_to_string`, which refuses it before the parser runs). `is_root` is the
/// low bit of the last byte, so the fuzzer reaches both sides of the `user` rule.
pub fn check_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let is_root = data.last().is_some_and(|b| b & 1 == 1);
    check_text(text, is_root);
}

/// All checks on one config text, with podinit running as root or not.
pub fn check_text(text: &str, is_root: bool) {
    check_locate(text);
    let source = Source { path: Some(FILE.into()), text: text.to_owned(), origin: None };
    let opts = LoadOptions { command: vec![], is_root, ..Default::default() };
    match from_source(&source, &opts) {
        Ok(spec) => check_spec(&spec, is_root),
        Err(e) => check_error(text, &e),
    }
}

/// Lines a 1-based line number may name: the file's lines, plus the empty line
/// after a final newline (or the first line of an empty file).
fn max_line(text: &str) -> usize {
    text.lines().count() + 1
}

fn check_error(text: &str, e: &ConfigError) {
    assert!(!e.0.is_empty(), "an error without any issue");
    let max = max_line(text);
    for issue in &e.0 {
        assert_eq!(issue.file, FILE, "issue names the wrong file: {issue:?}");
        assert!(!issue.message.is_empty(), "issue without a message: {issue:?}");
        // line 0 means "not at a place in the file" (e.g. "no main to run").
        if issue.line != 0 {
            assert!(issue.line <= max, "line {} past the end ({max} lines + 1): {issue:?}", issue.line);
            assert!(issue.col >= 1, "col 0 with line {}: {issue:?}", issue.line);
        }
        let shown = issue.to_string();
        assert!(shown.starts_with(FILE), "issue printed without its file: {shown:?}");
    }
    let _ = e.to_string();
}

fn check_probe(who: &str, kind: &str, p: &ProbeSpec, single_success: bool) {
    assert!(!p.period.is_zero(), "{who}: {kind} period 0 accepted");
    assert!(!p.timeout.is_zero(), "{who}: {kind} timeout 0 accepted");
    assert!(p.success_threshold >= 1, "{who}: {kind} success_threshold 0 accepted");
    assert!(p.failure_threshold >= 1, "{who}: {kind} failure_threshold 0 accepted");
    if single_success {
        assert_eq!(p.success_threshold, 1, "{who}: {kind} success_threshold must be 1");
    } else {
        assert!(p.termination_grace_period.is_none(), "{who}: {kind} with termination_grace_period");
    }
    match &p.action {
        ProbeAction::Exec { argv } => check_argv(who, argv),
        ProbeAction::TcpSocket { port, .. } | ProbeAction::Grpc { port, .. } => {
            assert_ne!(*port, 0, "{who}: {kind} port 0 accepted");
        }
        ProbeAction::HttpGet(g) => {
            assert_ne!(g.port, 0, "{who}: {kind} port 0 accepted");
            assert!(g.path.starts_with('/'), "{who}: {kind} path {:?} without '/'", g.path);
        }
        ProbeAction::Notify => {}
        ProbeAction::Fd { fd } => {
            assert!(*fd >= 3, "{who}: {kind} fd {fd} (stdin, stdout or stderr) accepted");
            assert_ne!(kind, "liveness", "{who}: an fd liveness probe accepted");
        }
        ProbeAction::LogLine(m) => {
            assert_ne!(kind, "liveness", "{who}: a log_line liveness probe accepted");
            if let podinit::config::LineMatch::Contains(text) = m {
                assert!(!text.is_empty(), "{who}: {kind} empty log_line accepted");
            }
        }
    }
}

fn check_hook(who: &str, h: &HookSpec) {
    match h {
        HookSpec::Exec { argv } => check_argv(who, argv),
        HookSpec::HttpGet(g) => assert_ne!(g.port, 0, "{who}: hook port 0 accepted"),
        HookSpec::Sleep(_) => {}
    }
}

fn check_argv<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(who: &str, argv: &podinit::config::Argv<S>) {
    assert!(!argv.program().as_ref().is_empty(), "{who}: empty program accepted: {argv:?}");
}

/// The configuration (docs/configuration.md) on an accepted config, then the start plan.
fn check_spec(spec: &PodSpec, is_root: bool) {
    assert!(spec.entries.iter().any(|e| e.role == Role::Main), "a pod without a main accepted");
    let mut names = BTreeSet::new();
    for e in &spec.entries {
        let who = format!("entry {:?}", e.name);
        assert!(podinit::config::check_name(&e.name).is_ok(), "{who}: bad name accepted");
        assert!(names.insert(e.name.as_str()), "{who}: duplicate name accepted");
        check_argv(&who, &e.argv);
        if !is_root {
            assert!(e.user.is_none(), "{who}: `user` accepted while not root");
        }
        if let Some(o) = e.oom_score_adj {
            assert!((-1000..=1000).contains(&o), "{who}: oom_score_adj {o} accepted");
        }
        let sig = e.stop_signal;
        assert!(podinit::config::Signal::new(sig.number()) == Some(sig), "{who}: stop_signal {sig} accepted");
        if e.role == Role::Init {
            let extras = [e.startup_probe.is_some(), e.readiness_probe.is_some(), e.liveness_probe.is_some()];
            assert!(!extras.contains(&true), "{who}: probe on an init entry accepted");
            assert!(e.post_start.is_none() && e.pre_stop.is_none(), "{who}: hook on an init entry accepted");
        }
        let watches_output = [&e.startup_probe, &e.readiness_probe, &e.liveness_probe]
            .into_iter()
            .flatten()
            .any(|p| matches!(p.action, ProbeAction::LogLine(_)));
        assert!(
            !(watches_output && e.log == podinit::config::LogMode::Raw),
            "{who}: a log_line probe on raw output accepted"
        );
        for (kind, p, single) in [
            ("startup_probe", &e.startup_probe, true),
            ("liveness_probe", &e.liveness_probe, true),
            ("readiness_probe", &e.readiness_probe, false),
        ] {
            if let Some(p) = p {
                check_probe(&who, kind, p, single);
            }
        }
        for h in [&e.post_start, &e.pre_stop].into_iter().flatten() {
            check_hook(&who, h);
        }
    }
    let plan = podinit::config::plan::render(spec);
    for e in &spec.entries {
        assert!(plan.contains(&e.name), "plan does not name entry {:?}:\n{plan}", e.name);
    }
    check_runs(spec);
}

/// Runs the accepted spec through the pure lifecycle machine as a supervisor
/// where everything succeeds at once would: every spawn, probe and hook answered
/// at the same instant (inits exit 0) until the mains run, then SIGTERM. Only the machine's
/// public API, no process, no clock but `now`; it must not panic.
fn check_runs(spec: &PodSpec) {
    let now = Instant::now();
    let mut pod = Pod::new(spec.clone());
    let mut actions = pod.start(now);
    for _ in 0..4 * spec.entries.len() + 4 {
        let mut events = Vec::new();
        for a in &actions {
            match *a {
                Action::Spawn { entry, instance } => {
                    let pid = 1000 + i32::try_from(entry).unwrap_or(0);
                    events.push(Event::Spawned { entry, instance, pid });
                    if spec.entries[entry].role == Role::Init {
                        events.push(Event::Exited { entry, instance, exit: Exit::Code(0) });
                    }
                }
                Action::StartProbe { entry, instance, kind, .. } => {
                    events.push(Event::Probe { entry, instance, kind, ok: true, why: None });
                }
                Action::RunHook { entry, instance, hook, .. } => {
                    events.push(Event::Hook { entry, instance, hook, ok: true });
                }
                _ => {}
            }
        }
        if events.is_empty() {
            break;
        }
        actions = events.into_iter().flat_map(|ev| pod.handle(ev, now)).collect();
    }
    let _ = pod.handle(Event::Terminate { signal: podinit::config::Signal::TERM }, now);
}

/// Offsets worth asking `locate` about: the ends, past the end, every byte of
/// the first multi-byte character (its middle included), each line start and
/// the byte before it, and a few taken from the text's own bytes.
fn offsets(text: &str) -> Vec<usize> {
    let len = text.len();
    let mut v = vec![0, 1, len / 2, len.saturating_sub(1), len, len + 1, len + 1000, usize::MAX];
    if let Some((i, c)) = text.char_indices().find(|(_, c)| c.len_utf8() > 1) {
        v.extend(i..=i + c.len_utf8());
    }
    if let Some((i, c)) = text.char_indices().rev().find(|(_, c)| c.len_utf8() > 1) {
        v.extend(i..=i + c.len_utf8());
    }
    for (i, _) in text.match_indices('\n').take(8) {
        v.extend([i, i + 1]);
    }
    for (i, b) in text.bytes().take(4).enumerate() {
        v.push((usize::from(b) * 31 + i * 7) % (len + 2));
    }
    v
}

/// `locate` never panics, and its line and column are the true ones of the
/// character boundary at or before the offset (clamped to the end).
fn check_locate(text: &str) {
    for off in offsets(text) {
        let place = podinit::config::locate::locate(text, off);
        let mut at = off.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let before = &text[..at];
        let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        assert_eq!(
            (place.line, place.col),
            (line, col),
            "locate(text, {off}) gave {place:?}, the place is {line}:{col}"
        );
    }
}
