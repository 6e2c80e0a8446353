//! Output (README) output: prefixed lines per stream, nothing lost, last line without
//! newline, podinit's own messages on stderr, raw and json modes, stdin.

mod common;
use common::*;
use std::io::Write;
use std::process::{Command, Stdio};

/// 20 000 lines from a sidecar and 5 000 from a main that exits at once: every
/// line is on podinit's stdout, in order per entry.
#[test]
fn every_line_of_a_busy_sidecar_and_a_short_main_is_written() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "seq -f 'side %g' 1 20000\ntouch \"@DIR@/side.up\"\nexec sleep 60",
        &up_probe("side"),
    );
    cfg += &entry("app", "main", "seq -f 'main %g' 1 5000", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(20.0)).run();
    out.assert_code(0);
    let side = out.stdout_of("side");
    let app = out.stdout_of("app");
    let want_side: Vec<String> = (1..=20000).map(|i| format!("side {i}")).collect();
    let want_app: Vec<String> = (1..=5000).map(|i| format!("main {i}")).collect();
    let brief = format!(
        "side: {} lines (last {:?}), app: {} lines (last {:?})\n--- stderr (tail) ---\n{}",
        side.len(),
        side.last(),
        app.len(),
        app.last(),
        tail(&out.stderr, 2000)
    );
    assert!(side == want_side, "sidecar lines lost or out of order; {brief}");
    assert!(app == want_app, "main lines lost or out of order; {brief}");
}

#[test]
fn last_line_without_newline_is_written() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "printf 'err-tail' >&2\nprintf 'tail-no-newline'", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.stdout_of("app"), vec!["tail-no-newline"], "{}", out.report());
    assert_eq!(out.stderr_of("app"), vec!["err-tail"], "{}", out.report());
}

#[test]
fn stdout_and_stderr_lines_are_prefixed_on_their_own_streams() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "echo out-line\necho err-line >&2\necho out-2", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert_eq!(out.stdout_of("app"), vec!["out-line", "out-2"], "{}", out.report());
    assert_eq!(out.stderr_of("app"), vec!["err-line"], "{}", out.report());
}

/// Names are right-padded to the longest name's width.
#[test]
fn names_are_padded_to_one_width() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("a", "main", "echo short", "");
    cfg += &entry("longername", "main", "echo long", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines.contains(&"a          | short"), "{}", out.report());
    assert!(lines.contains(&"longername | long"), "{}", out.report());
}

/// podinit's own messages go to stderr behind `podinit | `, never to stdout.
#[test]
fn podinit_messages_go_to_stderr_with_their_prefix() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "echo hello", "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).env("PODINIT_LOG", "debug").deadline(secs(10.0)).run();
    out.assert_code(0);
    for l in out.stdout.lines() {
        assert!(l.starts_with("app | "), "stray stdout line {l:?}\n{}", out.report());
    }
    let own: Vec<&str> = out.stderr.lines().filter(|l| !l.starts_with("app | ")).collect();
    assert!(!own.is_empty(), "no podinit messages at debug level\n{}", out.report());
    for l in own {
        assert!(l.starts_with("podinit | "), "unprefixed stderr line {l:?}\n{}", out.report());
    }
}

#[test]
fn raw_mode_writes_untouched() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "echo raw-line\necho raw-err >&2", "log = \"raw\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    assert!(out.stdout.lines().any(|l| l == "raw-line"), "{}", out.report());
    assert!(out.stderr.lines().any(|l| l == "raw-err"), "{}", out.report());
}

/// json mode: one object per line with time (RFC 3339), process, stream, line.
#[test]
fn json_mode_writes_one_object_per_line() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "echo 'json \"quoted\" line'\necho json-err >&2", "log = \"json\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    // Validate with python's json module: print process|stream|line per object.
    let check = r#"
import json, sys, datetime
for raw in sys.stdin:
    raw = raw.strip()
    if not raw.startswith("{"):
        continue
    o = json.loads(raw)
    datetime.datetime.fromisoformat(o["time"].replace("Z", "+00:00"))
    print("%s|%s|%s" % (o["process"], o["stream"], o["line"]))
"#;
    let parse = |text: &str| -> String {
        let mut child = Command::new(python())
            .args(["-c", check])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
        #[allow(clippy::disallowed_methods)] // a test helper process, not podinit's child
        let o = child.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "invalid json line: {}\n{}",
            String::from_utf8_lossy(&o.stderr),
            out.report()
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    assert_eq!(parse(&out.stdout), "app|stdout|json \"quoted\" line\n", "{}", out.report());
    assert_eq!(parse(&out.stderr), "app|stderr|json-err\n", "{}", out.report());
}

/// json mode with any bytes at all: every line of a file of control
/// characters, quotes, backslashes, UTF-8 (whole and cut) and bytes that are
/// never UTF-8, at every offset and length, comes out as one JSON object
/// whose `line` is the input line with invalid bytes replaced (U+FFFD).
#[test]
fn json_mode_escapes_any_bytes_into_valid_json() {
    let pieces: [&[u8]; 10] =
        [b"\"", b"\\", b"\t", b"\r", b"\x01", b"\x7f", "é€".as_bytes(), b"\xe2\x82", b"\xff", b"\xc3"];
    let mut seed: u64 = 11;
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for len in 0..300 {
        let mut line = Vec::new();
        while line.len() < len {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            if seed >> 60 == 0 {
                line.extend_from_slice(pieces[(seed >> 32) as usize % pieces.len()]);
            } else {
                line.push(b' ' + (seed >> 40) as u8 % 90);
            }
        }
        lines.push(line);
    }
    let td = TestDir::new();
    let input: Vec<u8> = lines.iter().flat_map(|l| l.iter().copied().chain([b'\n'])).collect();
    std::fs::write(td.file("input"), &input).unwrap();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "cat @DIR@/input", "log = \"json\"");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(10.0)).run();
    out.assert_code(0);
    let got: Vec<String> = out
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}"));
            assert_eq!(v["process"], "app", "{l}");
            v["line"].as_str().unwrap_or_else(|| panic!("no line: {l}")).to_owned()
        })
        .collect();
    let want: Vec<String> = lines.iter().map(|l| String::from_utf8_lossy(l).into_owned()).collect();
    assert_eq!(got.len(), want.len(), "{}", out.report());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w, "line {i}: got {g:?}, want {w:?}");
    }
}

/// Stdin goes to the first main; every other entry reads /dev/null.
#[test]
fn stdin_goes_to_the_first_main_only() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    let reader = |n: &str| {
        format!(
            r#"if read -r line; then echo "{n} read $line" >> "@REC@"; else echo "{n} eof" >> "@REC@"; fi"#
        )
    };
    cfg += &entry("init1", "init", &reader("init1"), "");
    cfg += &entry("first", "main", &reader("first"), "");
    cfg += &entry("second", "main", &reader("second"), "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).stdin(b"hello-stdin\n").deadline(secs(10.0)).run();
    out.assert_code(0);
    let mut r = out.records.clone();
    r.sort();
    assert_eq!(r, vec!["first read hello-stdin", "init1 eof", "second eof"], "{}", out.report());
}
