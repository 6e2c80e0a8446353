//! Output (README) output under load and in odd conditions: a million lines
//! from five processes, a 10 MB line without newline, binary bytes, json
//! objects and podinit's json events, raw mode's shared descriptors, a closed
//! stdout, grandchildren holding the pipe, a slow stdout at exit, a stdout
//! nobody reads, and podinit's own messages amid a child's long lines.
//!
//! Runs that need podinit's stdout as bytes, a file, a closed pipe or an unread
//! pipe use `Launcher::spawn_custom` (same unshare, deadline and tree kill as
//! `Launcher::spawn`).

mod common;
use common::*;
use std::fs::{self, File};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

/// Peak RSS allowed for podinit.
const RSS_LIMIT_KIB: u64 = 16 * 1024;

/// `l` with its middle cut out when long, for messages.
fn short(l: &str) -> String {
    let c: Vec<char> = l.chars().collect();
    if c.len() <= 160 {
        return format!("{l:?}");
    }
    let head: String = c[..70].iter().collect();
    let tail: String = c[c.len() - 70..].iter().collect();
    format!("{head:?} ... ({} chars) ... {tail:?}", c.len())
}

/// First index where `got` and `want` differ, with both sides and the raw
/// lines of `text` (podinit's output) around that place, for messages.
fn first_diff(got: &[String], want: &[String], text: &str, name: &str) -> String {
    let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
    let mut around = String::new();
    if let Some(prev) = i.checked_sub(1).and_then(|j| want.get(j)) {
        let raw: Vec<&str> = text.lines().collect();
        let at = raw.iter().position(|l| l.starts_with(name) && l.ends_with(&format!("| {prev}")));
        if let Some(at) = at {
            for l in &raw[at..raw.len().min(at + 4)] {
                around += &format!("\n    {}", short(l));
            }
        }
    }
    format!(
        "{} lines, {} expected; first difference at index {i}: got {}, expected {}; raw lines from the one before:{around}",
        got.len(),
        want.len(),
        got.get(i).map_or("none".into(), |l| short(l)),
        want.get(i).map_or("none".into(), |l| short(l))
    )
}

/// 10^6 lines: four sidecars and a main each write 150 000 numbered lines to
/// stdout and 50 000 to stderr at the same time; the main exits as soon as it
/// and the sidecars have written (the sidecars are then stopped, maybe with
/// output still in their pipes). Every line is out exactly once, in order per
/// process and stream, and nothing else is on stdout.
#[test]
fn a_million_lines_from_five_processes_are_all_written_in_order() {
    const OUT: usize = 150_000;
    const ERR: usize = 50_000;
    let td = TestDir::new();
    let writer = format!("seq -f 'o%g' 1 {OUT} &\nseq -f 'e%g' 1 {ERR} >&2\nwait");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    let names = ["side1", "side2", "side3", "side4"];
    for n in names {
        // Up before writing: the main starts while the sidecars write.
        let script = format!("touch \"@DIR@/{n}.up\"\n{writer}\ntouch \"@DIR@/{n}.done\"\nexec sleep 60");
        cfg += &entry(n, "sidecar", &script, &up_probe(n));
    }
    let wait_done = names
        .iter()
        .map(|n| {
            format!(
                "i=0; while [ ! -f \"@DIR@/{n}.done\" ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done"
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    cfg += &entry("app", "main", &format!("{writer}\n{wait_done}\nexit 0"), "");
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(45.0)).run();
    assert_eq!(
        out.code,
        Some(0),
        "exit {:?} signal {:?} after {:?}\n--- stderr (tail) ---\n{}",
        out.code,
        out.signal,
        out.elapsed,
        tail(&out.stderr, 2000)
    );
    let want_out: Vec<String> = (1..=OUT).map(|i| format!("o{i}")).collect();
    let want_err: Vec<String> = (1..=ERR).map(|i| format!("e{i}")).collect();
    let mut failures = Vec::new();
    for n in names.iter().copied().chain(["app"]) {
        let got = out.stdout_of(n);
        if got != want_out {
            failures.push(format!("{n} stdout: {}", first_diff(&got, &want_out, &out.stdout, n)));
        }
        let got = out.stderr_of(n);
        if got != want_err {
            failures.push(format!("{n} stderr: {}", first_diff(&got, &want_err, &out.stderr, n)));
        }
    }
    let total = out.stdout.lines().count();
    if total != 5 * OUT {
        failures.push(format!("stdout holds {total} lines, expected exactly {}", 5 * OUT));
    }
    assert!(
        failures.is_empty(),
        "lines lost, duplicated or out of order:\n{}\n--- stderr (podinit lines) ---\n{}",
        failures.join("\n"),
        out.stderr.lines().filter(|l| l.starts_with("podinit")).collect::<Vec<_>>().join("\n")
    );
}

/// podinit's own messages and a child's lines share podinit's stderr: a
/// message never lands inside a child's line, even when the child floods
/// stderr with long lines (writes larger than PIPE_BUF are not atomic) while a
/// crashing sidecar makes podinit log several events a second.
#[test]
fn podinit_messages_never_split_a_childs_line() {
    let td = TestDir::new();
    // 1.5 s of 2 KB lines at about 10 MB/s; the count goes to a file.
    td.write(
        "flood.py",
        r#"import os, time
end = time.time() + 1.5
n = 0
while time.time() < end:
    view = memoryview(b"".join(b"%06d %s\n" % (i, b"y" * 2000) for i in range(n + 1, n + 101)))
    while view:
        view = view[os.write(2, view):]
    n += 100
    time.sleep(0.02)
open("@DIR@/flood.count", "w").write(str(n))
"#,
    );
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"2s\"\nbackoff = { initial = \"10ms\", max = \"20ms\" }\n\n",
    );
    cfg += &entry("blink", "sidecar", "exit 1", "");
    cfg += &entry("flood", "sidecar", "@PY@ \"@DIR@/flood.py\"\nexec sleep 60", "");
    cfg += &entry(
        "app",
        "main",
        "i=0; while [ ! -f \"@DIR@/flood.count\" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done",
        "",
    );
    let path = td.config(&cfg);
    // podinit's stderr is a pipe read slowly (16 KiB, then 1 ms), so that its
    // output thread is mostly in the middle of a large write.
    let (mut read_end, write_end) = pipe();
    let run = td.podinit().config(&path).deadline(secs(30.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(write_end);
    });
    let reader = thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = vec![0u8; 16384];
        while let Ok(n) = read_end.read(&mut buf) {
            if n == 0 {
                break;
            }
            v.extend_from_slice(&buf[..n]);
            thread::sleep(Duration::from_millis(1));
        }
        v
    });
    let exit = run.wait();
    let stderr = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(exit.code, Some(0), "{exit:?}\n{}", tail(&stderr, 3000));
    let lines: usize = fs::read_to_string(td.file("flood.count")).unwrap().trim().parse().unwrap();
    let want: Vec<String> = (1..=lines).map(|i| format!("{i:06} {}", "y".repeat(2000))).collect();
    let got = entry_lines(&stderr, "flood");
    let own = stderr.lines().filter(|l| l.starts_with("podinit | ")).count();
    let bad: Vec<&str> = stderr
        .lines()
        .filter(|l| !["podinit | ", "blink | ", "flood | ", "app   | "].iter().any(|p| l.starts_with(p)))
        .collect();
    assert!(
        got == want && bad.is_empty(),
        "flood's stderr: {}\n{} podinit messages; {} mangled lines, the first ones:\n{}",
        first_diff(&got, &want, &stderr, "flood"),
        own,
        bad.len(),
        bad.iter().take(4).map(|l| format!("    {}", short(l))).collect::<Vec<_>>().join("\n")
    );
}

/// The main writes 3 MB and exits at once while podinit's stdout is read
/// slowly: what was still in the main's pipe and in podinit when it exited
/// is written before podinit exits, in order.
#[test]
fn output_still_in_the_pipe_when_the_main_exits_is_written() {
    const LINES: usize = 30_000; // 100 bytes each
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        &format!("@PY@ -c 'import sys; sys.stdout.write(\"\".join(\"%07d %s\\n\" % (i, \"z\" * 91) for i in range(1, {LINES} + 1)))'"),
        "",
    );
    let path = td.config(&cfg);
    let (mut read_end, write_end) = pipe();
    let err_path = td.file("podinit.err");
    let err_file = File::create(&err_path).unwrap();
    let run = td.podinit().config(&path).deadline(secs(30.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(write_end).stderr(err_file);
    });
    let run = run.log(&err_path);
    // About 3 MB/s: the main is done long before podinit's output is.
    let reader = thread::spawn(move || {
        let mut v = Vec::new();
        let mut buf = vec![0u8; 8192];
        while let Ok(n) = read_end.read(&mut buf) {
            if n == 0 {
                break;
            }
            v.extend_from_slice(&buf[..n]);
            thread::sleep(Duration::from_millis(2));
        }
        v
    });
    let exit = run.wait();
    let text = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    let err = String::from_utf8_lossy(&fs::read(&err_path).unwrap()).into_owned();
    assert_eq!(exit.code, Some(0), "{exit:?}\n{}", tail(&err, 2000));
    let want: Vec<String> = (1..=LINES).map(|i| format!("{i:07} {}", "z".repeat(91))).collect();
    let got = entry_lines(&text, "app");
    assert!(
        got == want,
        "main's lines after a slow drain: {}\n--- podinit stderr ---\n{}",
        first_diff(&got, &want, &text, "app"),
        tail(&err, 2000)
    );
}

/// A 10 MB line without newline: every byte is out, in prefixed pieces of at
/// most 64 KiB, and podinit's peak RSS (VmHWM, read after the writer is done
/// and before podinit exits) stays under 16 MB.
#[test]
fn a_ten_megabyte_line_is_split_and_memory_stays_bounded() {
    const SIZE: usize = 10_000_000;
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        &format!(
            "head -c {SIZE} /dev/zero | tr '\\0' x\ntouch \"@DIR@/written\"\n\
             i=0; while [ ! -f \"@DIR@/go\" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done"
        ),
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    let pid = run.podinit_pid();
    let mut peak = 0;
    run.wait_until("the 10 MB line to be written", secs(20.0), |_| {
        peak = peak.max(vm_kib(pid, "VmHWM").unwrap_or(0));
        td.file("written").exists()
    });
    peak = peak.max(vm_kib(pid, "VmHWM").unwrap_or(0));
    fs::write(td.file("go"), "").unwrap();
    let out = run.wait();
    out.assert_code(0);
    let mut pieces = 0usize;
    let mut bytes = 0usize;
    let mut longest = 0usize;
    for l in out.stdout.lines() {
        let payload = l
            .strip_prefix("app | ")
            .unwrap_or_else(|| panic!("stdout line without the `app | ` prefix: {}", short(l)));
        assert!(payload.bytes().all(|b| b == b'x'), "a piece holds bytes other than 'x'");
        pieces += 1;
        bytes += payload.len();
        longest = longest.max(payload.len());
    }
    let seen = format!(
        "{bytes} payload bytes (expected {SIZE}) in {pieces} pieces, longest {longest} (at most 65536), podinit VmHWM {peak} KiB (under {RSS_LIMIT_KIB})"
    );
    eprintln!("10 MB line: {seen}");
    assert!(peak > 0, "could not read VmHWM of podinit (pid {pid})");
    assert!(
        longest <= 65536 && bytes == SIZE && peak < RSS_LIMIT_KIB,
        "{seen}\n--- stderr ---\n{}",
        tail(&out.stderr, 2000)
    );
}

/// Lines of arbitrary bytes (every value but 0x0a) pass through prefixed mode
/// byte for byte, on stdout and on stderr.
#[test]
fn binary_output_passes_through_prefixed_mode_byte_for_byte() {
    let td = TestDir::new();
    // Writes the same lines to fd 1 (and others to fd 2) and to files, in
    // irregular chunks so that lines straddle podinit's reads.
    td.write(
        "bin.py",
        r#"import os, random
random.seed(4)
def lines(n):
    out = [bytes(b for b in range(256) if b != 10)]
    for _ in range(n):
        out.append(bytes(random.choice([b for b in range(256) if b != 10]) for _ in range(random.randint(1, 4000))))
    out.append(b"\x00\r\x1b[31m\xff\xfe\xc3(\xed\xa0\x80 tail")
    return b"".join(l + b"\n" for l in out)
for fd, name in ((1, "sent-out"), (2, "sent-err")):
    data = lines(300 if fd == 1 else 50)
    with open("@DIR@/" + name, "wb") as f:
        f.write(data)
    i = 0
    while i < len(data):
        j = min(len(data), i + random.randint(1, 9000))
        view = memoryview(data)[i:j]
        while view:
            view = view[os.write(fd, view):]
        i = j
"#,
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("app", "main", "exec @PY@ \"@DIR@/bin.py\"", "");
    let path = td.config(&cfg);
    let (out_path, err_path) = (td.file("podinit.out"), td.file("podinit.err"));
    let (out_file, err_file) = (File::create(&out_path).unwrap(), File::create(&err_path).unwrap());
    let run = td.podinit().config(&path).env("PODINIT_LOG", "error").deadline(secs(20.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(out_file).stderr(err_file);
    });
    let run = run.log(&err_path);
    let exit = run.wait();
    assert_eq!(exit.code, Some(0), "{exit:?}\n{}", String::from_utf8_lossy(&fs::read(&err_path).unwrap()));
    let prefixed = |sent: &[u8]| -> Vec<u8> {
        let mut v = Vec::new();
        for l in sent.split_inclusive(|&b| b == b'\n') {
            v.extend_from_slice(b"app | ");
            v.extend_from_slice(l);
        }
        v
    };
    let compare = |what: &str, got: &[u8], want: &[u8]| {
        if got != want {
            let i = got.iter().zip(want).position(|(a, b)| a != b).unwrap_or(got.len().min(want.len()));
            let from = i.saturating_sub(40);
            panic!(
                "{what}: {} bytes out, {} expected; first difference at byte {i}:\n got  {:?}\n want {:?}",
                got.len(),
                want.len(),
                String::from_utf8_lossy(&got[from..got.len().min(i + 40)]),
                String::from_utf8_lossy(&want[from..want.len().min(i + 40)])
            );
        }
    };
    let got_out = fs::read(&out_path).unwrap();
    compare("stdout", &got_out, &prefixed(&fs::read(td.file("sent-out")).unwrap()));
    // stderr also holds podinit's own lines (errors only here): drop them.
    let got_err: Vec<u8> = fs::read(&err_path)
        .unwrap()
        .split_inclusive(|&b| b == b'\n')
        .filter(|l| !l.starts_with(b"podinit | "))
        .flatten()
        .copied()
        .collect();
    compare("stderr", &got_err, &prefixed(&fs::read(td.file("sent-err")).unwrap()));
}

/// json mode (per entry and as the pod default): every line of stdout and
/// stderr parses with serde_json, with the right `process` and `stream`, a
/// `time` in RFC 3339 with sub-second digits, and invalid UTF-8 replaced by
/// U+FFFD. With `--log-format json`, podinit's own events parse too and carry
/// `event`, `pid` and `status`.
#[test]
fn json_lines_and_json_events_parse_with_the_right_fields() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\nlog = \"json\"\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        "echo side-out\necho side-err >&2\ntouch \"@DIR@/side.up\"\nexec sleep 60",
        &up_probe("side"),
    );
    cfg += &entry(
        "app",
        "main",
        "echo plain\nprintf 'bad \\377\\376 end\\n'\nprintf 'tab\\there \"q\" \\\\ \\001\\n'\n\
         echo app-err >&2\nprintf 'no-newline'\nexit 4",
        "log = \"json\"",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).args(["--log-format", "json"]).deadline(secs(15.0)).run();
    out.assert_code(4);
    let parse = |l: &str| -> serde_json::Value {
        serde_json::from_str(l).unwrap_or_else(|e| panic!("line is not JSON ({e}): {l:?}\n{}", out.report()))
    };
    let field = |v: &serde_json::Value, k: &str| -> String {
        v.get(k)
            .and_then(|x| x.as_str())
            .unwrap_or_else(|| panic!("no string field {k:?} in {v}"))
            .to_string()
    };
    let check_time = |v: &serde_json::Value| {
        let t = field(v, "time");
        assert!(humantime::parse_rfc3339_weak(&t).is_ok(), "time {t:?} is not RFC 3339 in {v}");
        let secs_frac = t.split('T').nth(1).unwrap_or("");
        assert!(secs_frac.contains('.'), "time {t:?} has no sub-second digits in {v}");
    };
    let mut got_out: Vec<(String, String, String)> = Vec::new();
    for l in out.stdout.lines() {
        let v = parse(l);
        check_time(&v);
        got_out.push((field(&v, "process"), field(&v, "stream"), field(&v, "line")));
    }
    let mut children_err = Vec::new();
    let mut events = Vec::new();
    for l in out.stderr.lines() {
        let v = parse(l);
        check_time(&v);
        match field(&v, "stream").as_str() {
            "podinit" => events.push(v),
            _ => children_err.push((field(&v, "process"), field(&v, "stream"), field(&v, "line"))),
        }
    }
    let of = |list: &[(String, String, String)], p: &str| -> Vec<(String, String)> {
        list.iter().filter(|(q, _, _)| q == p).map(|(_, s, l)| (s.clone(), l.clone())).collect()
    };
    let pair = |s: &str, l: &str| (s.to_string(), l.to_string());
    assert_eq!(of(&got_out, "side"), vec![pair("stdout", "side-out")], "{}", out.report());
    let app = of(&got_out, "app");
    assert_eq!(app.len(), 4, "app stdout objects: {app:?}\n{}", out.report());
    assert!(app.iter().all(|(s, _)| s == "stdout"), "{app:?}");
    assert_eq!(app[0].1, "plain");
    let bad = &app[1].1;
    let middle = bad.strip_prefix("bad ").and_then(|r| r.strip_suffix(" end"));
    assert!(
        middle.is_some_and(|m| !m.is_empty() && m.chars().all(|c| c == '\u{fffd}')),
        "invalid UTF-8 not replaced by U+FFFD: {bad:?}"
    );
    assert_eq!(app[2].1, "tab\there \"q\" \\ \u{1}");
    assert_eq!(app[3].1, "no-newline");
    assert_eq!(got_out.len(), 5, "stray stdout objects: {got_out:?}");
    assert_eq!(of(&children_err, "side"), vec![pair("stderr", "side-err")], "{}", out.report());
    assert_eq!(of(&children_err, "app"), vec![pair("stderr", "app-err")], "{}", out.report());
    assert_eq!(children_err.len(), 2, "stray stderr objects: {children_err:?}");
    // podinit's events: `event` everywhere, `pid` on started/exited, `status` on exited.
    for e in &events {
        assert!(e.get("event").and_then(|x| x.as_str()).is_some(), "event object without `event`: {e}");
    }
    let find = |ev: &str, p: &str| -> &serde_json::Value {
        events
            .iter()
            .find(|e| e["event"] == ev && e["process"] == p)
            .unwrap_or_else(|| panic!("no {ev:?} event for {p:?}\n{}", out.stderr))
    };
    let started = find("started", "app");
    let pid = started["pid"].as_i64().unwrap_or_else(|| panic!("started without a numeric pid: {started}"));
    assert!(pid > 1, "{started}");
    let exited = find("exited", "app");
    assert_eq!(exited["pid"].as_i64(), Some(pid), "exited event's pid: {exited}");
    assert_eq!(exited["status"].as_i64(), Some(4), "exited event's status: {exited}");
    assert!(find("started", "side")["pid"].as_i64().is_some_and(|p| p > 1));
    let i_started = events.iter().position(|e| e == started).unwrap();
    let i_exited = events.iter().position(|e| e == exited).unwrap();
    assert!(i_started < i_exited, "exited before started:\n{}", out.stderr);
}

/// raw mode: the child's fd 1 and 2 are podinit's own (the same pipes), while a
/// prefixed entry's stdout is a pipe of podinit's.
#[test]
fn raw_mode_children_share_podinits_descriptors() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    // $$, not self: in $(...) readlink's own stdout is the substitution pipe.
    let links = |n: &str| {
        format!(
            "echo \"{n} fd1 $(readlink /proc/$$/fd/1)\" >> \"@REC@\"\n\
             echo \"{n} fd2 $(readlink /proc/$$/fd/2)\" >> \"@REC@\"\n\
             echo \"{n} init1 $(readlink /proc/1/fd/1)\" >> \"@REC@\"\n\
             echo \"{n} init2 $(readlink /proc/1/fd/2)\" >> \"@REC@\""
        )
    };
    cfg += &entry(
        "side",
        "sidecar",
        &format!(
            "trap 'exit 0' TERM\n{}\ntouch \"@DIR@/side.up\"\nwhile :; do sleep 0.1; done",
            links("side")
        ),
        &up_probe("side"),
    );
    cfg += &entry(
        "app",
        "main",
        &format!(
            "{}\ntouch \"@DIR@/app.up\"\ni=0; while [ ! -f \"@DIR@/go\" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done",
            links("app")
        ),
        "log = \"raw\"",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    let pid = run.podinit_pid();
    run.wait_for_file(&td.file("app.up"), secs(10.0));
    let host1 = fs::read_link(format!("/proc/{pid}/fd/1")).unwrap().display().to_string();
    let host2 = fs::read_link(format!("/proc/{pid}/fd/2")).unwrap().display().to_string();
    fs::write(td.file("go"), "").unwrap();
    let out = run.wait();
    out.assert_code(0);
    let get = |k: &str| -> String {
        out.records
            .iter()
            .find_map(|r| r.strip_prefix(&format!("{k} ")))
            .unwrap_or_else(|| panic!("record {k:?} missing\n{}", out.report()))
            .to_string()
    };
    assert!(get("app init1").starts_with("pipe:"), "{}", out.report());
    assert_ne!(
        get("app init1"),
        get("app init2"),
        "podinit's stdout and stderr are one file\n{}",
        out.report()
    );
    assert_eq!(get("app init1"), host1, "/proc/1 is not the podinit the test started\n{}", out.report());
    assert_eq!(get("app init2"), host2, "{}", out.report());
    assert_eq!(get("app fd1"), get("app init1"), "raw child's fd 1 is not podinit's fd 1\n{}", out.report());
    assert_eq!(get("app fd2"), get("app init2"), "raw child's fd 2 is not podinit's fd 2\n{}", out.report());
    // Contrast: a prefixed entry writes to a pipe of podinit's, not to fd 1.
    assert_ne!(
        get("side fd1"),
        get("side init1"),
        "prefixed sidecar writes to podinit's fd 1\n{}",
        out.report()
    );
    assert_ne!(get("side fd2"), get("side init2"), "{}", out.report());
}

/// podinit's stdout is a pipe whose read end is closed before anything is
/// written: podinit neither dies of SIGPIPE nor stops supervising; it stops the
/// sidecar and exits with the main's status. As PID 1 of a namespace the
/// kernel never delivers a default-action SIGPIPE to podinit, so the run that
/// matters is the one not as PID 1 (child subreaper, `docker run --init`).
fn closed_stdout(td: &TestDir, launcher: Launcher) {
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    // Bounded (15 s): not as PID 1, a podinit killed by SIGPIPE would leave it behind.
    let side = "seq 1 20000\ntrap 'echo \"stop side\" >> \"@REC@\"; exit 0' TERM\necho \"start side\" >> \"@REC@\"\n\
                touch \"@DIR@/side.up\"\ni=0; while [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done";
    cfg += &entry("side", "sidecar", side, &up_probe("side"));
    cfg += &entry("app", "main", "seq 1 100000\necho 'app wrote' >> \"@REC@\"\nexit 3", "");
    let path = td.config(&cfg);
    let err_path = td.file("podinit.err");
    let err_file = File::create(&err_path).unwrap();
    let (read_end, write_end) = pipe();
    drop(read_end);
    let run = launcher.config(&path).deadline(secs(15.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(write_end).stderr(err_file);
    });
    let run = run.log(&err_path);
    let exit = run.wait();
    let records = fs::read_to_string(td.rec()).unwrap_or_default();
    let err = String::from_utf8_lossy(&fs::read(&err_path).unwrap()).into_owned();
    assert_eq!(
        (exit.code, exit.signal),
        (Some(3), None),
        "podinit with a closed stdout: {exit:?}\n--- records ---\n{records}\n--- stderr ---\n{}",
        tail(&err, 3000)
    );
    let recs: Vec<String> = records.lines().map(str::to_string).collect();
    assert!(pos(&recs, "start side") < pos(&recs, "app wrote"), "{records}");
    assert!(pos(&recs, "app wrote") < pos(&recs, "stop side"), "{records}");
}

#[test]
fn a_closed_stdout_does_not_kill_podinit() {
    let td = TestDir::new();
    closed_stdout(&td, td.podinit_not_pid1());
}

#[test]
fn a_closed_stdout_does_not_kill_podinit_as_pid1() {
    let td = TestDir::new();
    closed_stdout(&td, td.podinit());
}

/// A grandchild in its own session keeps the main's stdout pipe open after the
/// main exits: podinit writes the main's line and exits within the termination
/// budget (2 s), not when the grandchild lets go.
#[test]
fn a_grandchild_holding_the_pipe_does_not_delay_exit() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        "setsid sleep 100 &\necho \"holder $!\" >> \"@REC@\"\necho line-before-exit\nexit 0",
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert!(out.elapsed < secs(6.0), "podinit took {:?} to exit\n{}", out.elapsed, out.report());
    assert_eq!(out.stdout_of("app"), vec!["line-before-exit"], "{}", out.report());
    assert!(out.pipes_closed, "podinit's output pipes still open after its exit\n{}", out.report());
}

/// The same with a grandchild that keeps writing: podinit drains what is there
/// and closes; it does not copy forever.
#[test]
fn a_chatty_grandchild_does_not_delay_exit() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "app",
        "main",
        "setsid sh -c 'while :; do echo grandchild; sleep 0.01; done' &\necho line-before-exit\nexit 0",
        "",
    );
    let path = td.config(&cfg);
    let out = td.podinit().config(&path).deadline(secs(15.0)).run();
    out.assert_code(0);
    assert!(out.elapsed < secs(6.0), "podinit took {:?} to exit\n{}", out.elapsed, out.report());
    assert!(out.stdout_of("app").contains(&"line-before-exit".to_string()), "{}", out.report());
}

/// Back-pressure: podinit's stdout is a pipe the test leaves unread for 2 s
/// while a sidecar tries to write 50 MB. The writer blocks (it does not get
/// far), podinit's RSS stays under 16 MB, the main's liveness probe keeps
/// running, and SIGTERM during the stall stops main and sidecar. Once the test
/// reads, podinit exits with every line the writer got into its pipe, in order.
#[test]
fn a_blocked_stdout_blocks_the_writer_not_podinit() {
    const LINES: usize = 500_000; // 100 bytes each: 50 MB
    let td = TestDir::new();
    // Records in `progress` how many lines the pipe has accepted, every 2 KB
    // (far less than the pipe holds, so losing the pipe's content shows).
    td.write(
        "writer.py",
        &format!(
            r#"import os, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
prog = os.open("@DIR@/progress", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
n = 0
while n < {LINES}:
    k = min(20, {LINES} - n)
    view = memoryview(b"".join(b"%07d %s\n" % (i, b"x" * 91) for i in range(n + 1, n + k + 1)))
    while view:
        view = view[os.write(1, view):]
    n += k
    os.pwrite(prog, b"%07d\n" % n, 0)
"#
        ),
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"20s\"\n\n");
    cfg += &entry(
        "writer",
        "sidecar",
        "trap 'echo \"stop writer\" >> \"@REC@\"; exit 0' TERM\necho \"start writer\" >> \"@REC@\"\n\
         @PY@ \"@DIR@/writer.py\" &\nwait\necho 'writer finished' >> \"@REC@\"\nwhile :; do sleep 0.1; done",
        "",
    );
    cfg += &entry(
        "app",
        "main",
        &sleeper("app"),
        r#"liveness_probe = { exec = { command = ["sh", "-c", 'echo probe >> "@REC@"'] }, period = "100ms" }"#,
    );
    let path = td.config(&cfg);
    let err_path = td.file("podinit.err");
    let err_file = File::create(&err_path).unwrap();
    let (mut read_end, write_end) = pipe();
    let mut run = td.podinit().config(&path).deadline(secs(40.0)).spawn_custom(|c| {
        c.stdin(Stdio::null()).stdout(write_end).stderr(err_file);
    });
    run = run.log(&err_path);
    let pid = run.podinit_pid();
    let progress = || -> usize {
        fs::read_to_string(td.file("progress")).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(0)
    };
    run.wait_for_record_n("start app", 1, secs(10.0));
    run.wait_until("the writer to write", secs(10.0), || progress() > 0);
    let probes = |r: &Bare| count(&r.records(), "probe");
    let probes_before = probes(&run);
    // The stall: 2 s without reading podinit's stdout; RSS sampled all along.
    let stall = Instant::now();
    let mut peak_rss = 0;
    while stall.elapsed() < secs(2.0) {
        peak_rss = peak_rss.max(vm_kib(pid, "VmRSS").unwrap_or(0));
        if !run.is_running() {
            run.fail("podinit exited during the stall");
        }
        thread::sleep(Duration::from_millis(50));
    }
    let hwm = vm_kib(pid, "VmHWM").unwrap_or(0);
    let stalled_at = progress();
    let probes_during = probes(&run) - probes_before;
    let mut problems = Vec::new();
    if stalled_at >= LINES {
        problems.push(format!(
            "the writer wrote all {LINES} lines while nobody read podinit's stdout: no back-pressure"
        ));
    }
    if hwm >= RSS_LIMIT_KIB {
        problems.push(format!(
            "podinit's VmHWM reached {hwm} KiB, over {RSS_LIMIT_KIB} KiB, while its stdout was blocked"
        ));
    }
    if probes_during < 5 {
        problems.push(format!(
            "only {probes_during} liveness probe runs in 2 s of blocked stdout (period 100ms)"
        ));
    }
    if !problems.is_empty() {
        run.fail(&format!(
            "{}\n(writer at {stalled_at}/{LINES} lines, VmHWM {hwm} KiB, VmRSS peak {peak_rss} KiB, {probes_during} probe runs)",
            problems.join("\n")
        ));
    }
    // Termination still works while stdout is blocked.
    run.signal(SIGTERM);
    run.wait_for_record_n("stop app", 1, secs(5.0));
    run.wait_for_record_n("stop writer", 1, secs(5.0));
    let reader = thread::spawn(move || {
        let mut v = Vec::new();
        let _ = read_end.read_to_end(&mut v);
        v
    });
    let exit = run.wait();
    let written = progress();
    let data = reader.join().unwrap();
    let text = String::from_utf8_lossy(&data);
    let err = String::from_utf8_lossy(&fs::read(&err_path).unwrap()).into_owned();
    assert_eq!(exit.code, Some(0), "{exit:?}\n--- stderr ---\n{}", tail(&err, 3000));
    let lines: Vec<&str> = text.lines().collect();
    let mut n = 0usize;
    eprintln!(
        "blocked stdout: writer stalled at {stalled_at}/{LINES} lines, podinit VmHWM {hwm} KiB (VmRSS peak {peak_rss} KiB), {probes_during} probe runs in the stall, {written} lines in the pipe at the end"
    );
    for (i, l) in lines.iter().enumerate() {
        let payload = l.strip_prefix("writer | ").unwrap_or_else(|| panic!("stray stdout line {}", short(l)));
        let want = format!("{:07} {}", i + 1, "x".repeat(91));
        if payload == want {
            n = i + 1;
        } else {
            // Only the very last line may be cut (the writer was killed mid-write).
            assert!(
                i + 1 == lines.len() && want.starts_with(payload),
                "line {} is {payload:?}, expected {want:?}",
                i + 1
            );
        }
    }
    assert!(
        n >= written,
        "the writer got {written} lines into its pipe but only {n} complete lines are out (stalled at {stalled_at})"
    );
}

/// The size of every pipe among `pid`'s descriptors (F_GETPIPE_SZ, bytes),
/// each opened through `/proc/PID/fd/N`, which opens the same pipe.
fn pipe_sizes(pid: i32) -> Vec<i32> {
    let mut sizes = Vec::new();
    for fd in fs::read_dir(format!("/proc/{pid}/fd")).unwrap().flatten() {
        let is_pipe = fs::read_link(fd.path()).is_ok_and(|t| t.to_string_lossy().starts_with("pipe:"));
        if !is_pipe {
            continue;
        }
        let Ok(f) = fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(fd.path()) else {
            continue;
        };
        // SAFETY: fcntl(2) on a descriptor this test owns.
        let size = unsafe { libc::fcntl(std::os::fd::AsRawFd::as_raw_fd(&f), libc::F_GETPIPE_SZ) };
        sizes.push(size);
    }
    sizes
}

/// A child pipe that podinit finds busy when it reads is grown to 256 KiB,
/// so that a flooding writer blocks less; the pipes of a quiet entry keep the
/// kernel's 64 KiB (the pipe memory of a user is limited). The flood is
/// written 2,100 bytes at a time, the worst case: the kernel puts one such
/// write in each page, so even a full pipe holds only 33,600 bytes.
#[test]
fn a_busy_child_pipe_is_grown_and_a_quiet_one_is_not() {
    let td = TestDir::new();
    let flood = format!(
        r#"{} -c 'import os
line = b"x" * 2099 + b"\n"
for _ in range(10000): os.write(1, line)'
echo "flooded" >> "@REC@"
exec sleep 100"#,
        python()
    );
    let cfg = td.config(&format!(
        "{}{}",
        entry("quiet", "sidecar", "echo hello; exec sleep 100", ""),
        entry("app", "main", &flood, "")
    ));
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record("flooded", secs(60.0));
    let sizes = pipe_sizes(run.podinit_pid());
    run.signal(libc::SIGTERM);
    let out = run.wait();
    // app's stdout only: its stderr and the quiet sidecar's two pipes saw
    // little, and podinit's own stdout and stderr are not its to grow.
    assert_eq!(
        sizes.iter().filter(|&&s| s == 256 * 1024).count(),
        1,
        "pipe sizes {sizes:?}\n{}",
        out.report()
    );
    assert!(sizes.iter().filter(|&&s| s == 64 * 1024).count() >= 3, "pipe sizes {sizes:?}\n{}", out.report());
}
