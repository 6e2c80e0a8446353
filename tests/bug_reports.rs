//! The bug reports reported, one test each, named for the behaviour: small
//! inputs on which supervisors of this kind have failed in public. Plus the
//! security rule that podinit never writes an environment value to its logs.
//!
//! Related tests elsewhere: the stop signal to a whole group whose leader
//! traps TERM (`pid1.rs`: `stop_signal_goes_to_the_whole_process_group`); a
//! repeated SIGTERM with one main (`termination.rs`:
//! `repeated_sigterm_neither_cuts_grace_nor_signals_twice`); a sidecar that never
//! passes its startup probe, without timing (`termination.rs`:
//! `sigterm_before_any_main_ran_gives_143`); binary bytes and a 10 MB line from
//! a lone process (`output_volume.rs`); an inline misspelt probe key
//! (`config_errors.rs`: `unknown_key_nested_in_a_probe_is_refused`); a read-only
//! root as user 1000 under Docker (`docker.rs`:
//! `docker_run_read_only_as_user_1000_with_podinit_status`).

mod common;
use common::*;
use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// `/proc/PID/cmdline` with NULs as spaces.
fn cmdline(pid: i32) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ").trim().to_string()
}

/// Alive: present and not a zombie.
fn alive(pid: i32) -> bool {
    matches!(proc_state(pid), Some((s, _)) if s != 'Z')
}

/// Millisecond stamps of the records starting with `prefix` (`PREFIX MS`).
fn stamps(records: &[String], prefix: &str) -> Vec<i64> {
    records.iter().filter_map(|l| l.strip_prefix(prefix)).filter_map(|t| t.trim().parse().ok()).collect()
}

/// Lines of `name` in prefixed output, as bytes (`NAME<spaces>| line`).
fn entry_lines_bytes(out: &[u8], name: &str) -> Vec<Vec<u8>> {
    out.split(|b| *b == b'\n')
        .filter_map(|l| {
            let rest = l.strip_prefix(name.as_bytes())?;
            let i = rest.iter().position(|b| *b != b' ')?;
            let rest = &rest[i..];
            if rest == b"|" {
                return Some(Vec::new());
            }
            rest.strip_prefix(b"| ").map(<[u8]>::to_vec)
        })
        .collect()
}

/// Report 1: A main is a shell that does not exec its `sleep 300` (it has more to do
/// after it, and a TERM trap for its cleanup), beside one without a trap
/// (`sh -c 'sleep 300; ...'`, which dies of the TERM at once). On SIGTERM the
/// stop signal reaches the whole group: the trapping shell's sleep ends by
/// SIGTERM (status 143) at once, the other sleep is gone at once, and podinit
/// exits with the second main's 143 long before the 7 s grace (the bug: the
/// sleeps lived until the SIGKILL at its end). The bounds are generous (3 s,
/// 4 s): a loaded machine must not fail the test, a wait for the grace must.
#[test]
fn a_shell_that_does_not_exec_has_its_sleep_stopped_with_it() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"7s\"\n\n");
    cfg += &entry(
        "trapper",
        "main",
        r#"trap 'echo "shell got TERM" >> "@REC@"' TERM
echo "start trapper" >> "@REC@"
sleep 300
echo "sleep ended $?" >> "@REC@""#,
        "",
    );
    cfg += "[[process]]\nname = \"plain\"\ncommand = [\"sh\", \"-c\", \"sleep 300; echo after-sleep\"]\n";
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(15.0)).spawn();
    run.wait_for_record("start trapper", secs(5.0));
    let podinit = run.podinit_pid();
    let mut sleeps: Vec<i32> = Vec::new();
    run.wait_until("both sleeps, each under its shell", secs(5.0), |_| {
        sleeps = descendants(podinit).into_iter().filter(|p| cmdline(*p) == "sleep 300").collect();
        sleeps.len() == 2
    });
    for s in &sleeps {
        let parent = proc_state(*s).map_or(0, |st| st.1);
        assert_ne!(
            parent,
            podinit,
            "the shell exec'd its sleep: the test would prove nothing\n{}",
            run.report()
        );
    }
    let t0 = Instant::now();
    run.signal(SIGTERM);
    let mut gone_after = None;
    while t0.elapsed() < secs(6.0) {
        if sleeps.iter().all(|s| !alive(*s)) {
            gone_after = Some(t0.elapsed());
            break;
        }
        thread::sleep(Duration::from_millis(5));
    }
    let out = run.wait();
    let took = out.ended - t0;
    assert!(
        gone_after.is_some_and(|g| g < secs(3.0)),
        "the sleeps were still alive {gone_after:?} after SIGTERM\n{}",
        out.report()
    );
    assert_eq!(
        count(&out.records, "sleep ended 143"),
        1,
        "the trapper's sleep got no SIGTERM\n{}",
        out.report()
    );
    assert!(took < secs(4.0), "podinit took {took:?} to exit after SIGTERM\n{}", out.report());
    out.assert_code(143);
}

/// Report 2: A grandchild calls setsid (out of its entry's group) and ignores TERM,
/// HUP and INT; its entry exits at once and the pod goes on. When the pod
/// completes, podinit kills it before exiting and does not wait past the 2 s
/// budget for it. Run as child subreaper, so that the grandchild is a host
/// process whose end the test can see (as PID 1 it would die with the
/// namespace anyway).
#[test]
fn a_setsid_grandchild_is_killed_before_exit_without_waiting_past_the_budget() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "spawner",
        "main",
        r#"( setsid sh -c 'trap "" TERM HUP INT; echo $$ > "@DIR@/gc.tmp"; mv "@DIR@/gc.tmp" "@DIR@/gc.pid"; while :; do sleep 0.05; done' & )
i=0; while [ ! -f "@DIR@/gc.pid" ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done
echo "exit spawner" >> "@REC@""#,
        "",
    );
    cfg += &entry(
        "app",
        "main",
        r#"echo "start app" >> "@REC@"
i=0; while [ ! -f "@DIR@/release" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done"#,
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit_not_pid1().config(&path).deadline(secs(20.0)).spawn();
    let podinit = run.podinit_pid();
    run.wait_for_record("exit spawner", secs(5.0));
    run.wait_for_record("start app", secs(5.0));
    let pid_file = td.file("gc.pid");
    run.wait_for_file(&pid_file, secs(5.0));
    let gc: i32 = fs::read_to_string(&pid_file).unwrap().trim().parse().unwrap();
    run.wait_until("spawner's exit logged and the grandchild reparented to podinit", secs(5.0), |r| {
        r.stderr().lines().any(|l| l.starts_with("podinit | spawner (pid") && l.contains("exited"))
            && matches!(proc_state(gc), Some((s, pp)) if s != 'Z' && pp == podinit)
    });
    let t1 = Instant::now();
    fs::write(td.file("release"), "").unwrap();
    let out = run.wait();
    let took = out.ended - t1;
    let until = Instant::now() + secs(1.0);
    while alive(gc) && Instant::now() < until {
        thread::sleep(Duration::from_millis(10));
    }
    let survived = alive(gc);
    if survived {
        send_signal(gc, SIGKILL);
    }
    out.assert_code(0);
    assert!(!survived, "the setsid grandchild {gc} outlived podinit\n{}", out.report());
    assert!(
        took < secs(2.5),
        "podinit took {took:?} to exit after the pod completed (budget 2 s)\n{}",
        out.report()
    );
}

/// Report 3: Two SIGTERMs (the second while the main drains the first, as the
/// report's 200 ms apart did) while a main needs 2 s and a sidecar 0.5 s to
/// drain: each gets exactly one SIGTERM, the main drains and exits 0, only then
/// is the sidecar signalled, and podinit exits 0 after about 2.5 s (The lifecycle (docs/lifecycle.md)
/// rule 12).
#[test]
fn two_sigterms_200ms_apart_signal_each_process_once_and_keep_the_order() {
    let td = TestDir::new();
    let drainer = |name: &str, drain: &str| {
        format!(
            r#"trap 'echo "TERM {name} $(date +%s%3N)" >> "@REC@"; sleep {drain}; echo "exit {name} $(date +%s%3N)" >> "@REC@"; exit 0' TERM
echo "start {name}" >> "@REC@"
while :; do sleep 0.05; done"#
        )
    };
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"7s\"\n\n");
    cfg += &entry("side", "sidecar", &drainer("side", "0.5"), "");
    cfg += &entry("app", "main", &drainer("app", "2"), "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    run.wait_for_record("start app", secs(5.0));
    let t0 = Instant::now();
    run.signal(SIGTERM);
    // The second SIGTERM while the main drains the first one.
    run.wait_until("the main to take the first SIGTERM", secs(5.0), |_| {
        td.records().iter().any(|l| l.starts_with("TERM app "))
    });
    run.signal(SIGTERM);
    let out = run.wait();
    let took = out.ended - t0;
    let r = &out.records;
    let report = format!("podinit exited {took:?} after the first SIGTERM\n{}", out.report());
    assert_eq!(stamps(r, "TERM app ").len(), 1, "the main's SIGTERMs\n{report}");
    assert_eq!(stamps(r, "TERM side ").len(), 1, "the sidecar's SIGTERMs\n{report}");
    let (app_exit, side_term) = (stamps(r, "exit app "), stamps(r, "TERM side "));
    assert_eq!(app_exit.len(), 1, "the main must drain and exit\n{report}");
    assert!(app_exit[0] <= side_term[0], "the sidecar was signalled before the main exited\n{report}");
    out.assert_code(0);
    assert!(took >= secs(2.3) && took <= secs(5.0), "expected about 2.5 s\n{report}");
}

/// Report 4: A main that prints a final line and exits in the same instant, restarted
/// 1 000 times (`restart_policy = "Always"`, `completion = "all"`, backoff
/// 0s), then SIGTERM: for every run podinit saw exit 0, that run's final line
/// (`final PID`) is in the output.
#[test]
fn a_final_line_printed_just_before_exit_is_never_lost_over_1000_restarts() {
    const RUNS: usize = 1000;
    let td = TestDir::new();
    let cfg = r#"[pod]
restart_policy = "Always"
completion = "all"
termination_grace_period = "3s"
backoff = { initial = "0s", max = "0s" }

[[process]]
name = "app"
command = ["sh", "-c", "printf 'final %s\n' $$"]
"#;
    let path = td.config(cfg);
    let exited_0 = |stderr: &str| -> Vec<String> {
        stderr
            .lines()
            .filter_map(|l| l.strip_prefix("podinit | app (pid "))
            .filter_map(|l| l.strip_suffix(") exited with status 0"))
            .map(str::to_string)
            .collect()
    };
    let mut run = td.podinit().config(&path).deadline(secs(60.0)).spawn();
    let t0 = Instant::now();
    run.wait_until("1000 runs of the main", secs(45.0), |r| exited_0(&r.stderr()).len() >= RUNS);
    let took_runs = t0.elapsed();
    run.signal(SIGTERM);
    let out = run.wait();
    let pids = exited_0(&out.stderr);
    let finals = out.stdout_of("app");
    let missing: Vec<&String> = pids.iter().filter(|p| !finals.contains(&format!("final {p}"))).collect();
    println!("{} runs in {took_runs:?}; {} final lines", pids.len(), finals.len());
    assert!(
        missing.is_empty(),
        "{} of {} runs that exited 0 have no final line, e.g. pids {:?}\n{}",
        missing.len(),
        pids.len(),
        &missing[..missing.len().min(10)],
        out.report()
    );
    let odd: Vec<&String> = finals.iter().filter(|l| !l.starts_with("final ")).collect();
    assert!(odd.is_empty(), "mangled lines: {odd:?}");
    // SIGTERM met the last run, or caught the main between two runs.
    assert!(matches!(out.code, Some(0) | Some(143)), "{}", out.report());
}

/// Report 5: A sidecar whose startup probe never passes, then SIGTERM, with a 20 s
/// grace: it is stopped at once, and podinit exits within 3 s with 143.
#[test]
fn a_sidecar_that_never_started_is_stopped_at_once_not_after_the_grace_period() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"20s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"startup_probe = { exec = { command = ["sh", "-c", "echo probe >> @DIR@/probes; exit 1"] }, period = "100ms", failure_threshold = 1000 }"#,
    );
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    let probes = td.file("probes");
    run.wait_until("the startup probe to fail twice", secs(5.0), |_| {
        fs::read_to_string(&probes).unwrap_or_default().lines().count() >= 2
    });
    let t0 = Instant::now();
    run.signal(SIGTERM);
    let out = run.wait();
    let took = out.ended - t0;
    assert!(took < secs(3.0), "podinit took {took:?} after SIGTERM (grace 20 s)\n{}", out.report());
    assert_eq!(out.records, vec!["start side", "stop side"], "{}", out.report());
    out.assert_code(143);
}

/// Report 6: A process writes a line of invalid UTF-8, then 1 MB without newline,
/// and holds it unfinished: another entry's lines keep flowing meanwhile; the
/// invalid bytes pass through byte for byte, every byte of the long line is
/// written (in pieces) when the process exits, and no tick is lost.
#[test]
fn invalid_utf8_and_a_megabyte_without_newline_stall_no_one() {
    const BIG: usize = 1_000_000;
    let td = TestDir::new();
    td.write(
        "bin.py",
        r#"import os, sys, time
out = sys.stdout.buffer
out.write(b"before\n")
out.write(b"bad \xff\xfe\xc3( utf8 \x80\n")
out.write(b"x" * 1000000)
out.flush()
open("@DIR@/big.written", "w").close()
t = time.time()
while not os.path.exists("@DIR@/go") and time.time() - t < 10:
    time.sleep(0.02)
"#,
    );
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("bin", "main", "exec @PY@ \"@DIR@/bin.py\"", "");
    cfg += &entry(
        "ticker",
        "main",
        r#"i=0
while [ ! -f "@DIR@/go" ] && [ $i -lt 1000 ]; do i=$((i+1)); echo "tick $i"; sleep 0.02; done
echo "ticks $i" >> "@REC@""#,
        "",
    );
    let path = td.config(&cfg);
    let (out_path, err_path) = (td.file("podinit.out"), td.file("podinit.err"));
    let (o, e) = (File::create(&out_path).unwrap(), File::create(&err_path).unwrap());
    let mut run = td
        .podinit()
        .config(&path)
        .deadline(secs(30.0))
        .spawn_custom(|c| {
            c.stdin(Stdio::null()).stdout(o).stderr(e);
        })
        .log(&err_path);
    let ticks = |p: &Path| entry_lines_bytes(&fs::read(p).unwrap_or_default(), "ticker").len();
    let written = td.file("big.written");
    run.wait_until("the 1 MB to be written", secs(10.0), || written.exists());
    let t0 = ticks(&out_path);
    let t = Instant::now();
    run.wait_until("10 more ticks while the long line is unfinished", secs(3.0), || {
        ticks(&out_path) >= t0 + 10
    });
    let flowing = t.elapsed();
    fs::write(td.file("go"), "").unwrap();
    let exit = run.wait();
    let stdout = fs::read(&out_path).unwrap();
    let stderr = String::from_utf8_lossy(&fs::read(&err_path).unwrap()).into_owned();
    let records = fs::read_to_string(td.rec()).unwrap_or_default();
    let report = format!("{exit:?}\n--- records ---\n{records}\n--- stderr ---\n{}", tail(&stderr, 2000));
    assert_eq!(exit.code, Some(0), "{report}");
    println!("10 ticks in {flowing:?} while the 1 MB line was unfinished");
    let n: usize = records
        .lines()
        .find_map(|l| l.strip_prefix("ticks "))
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| panic!("no ticks record\n{report}"));
    let want: Vec<Vec<u8>> = (1..=n).map(|i| format!("tick {i}").into_bytes()).collect();
    let got = entry_lines_bytes(&stdout, "ticker");
    assert!(got == want, "ticker: {} lines, {n} expected (lost or out of order)\n{report}", got.len());
    let bin = entry_lines_bytes(&stdout, "bin");
    assert!(bin.len() >= 3, "bin wrote {} lines\n{report}", bin.len());
    assert_eq!(bin[0], b"before".to_vec(), "{report}");
    assert_eq!(bin[1], b"bad \xff\xfe\xc3( utf8 \x80".to_vec(), "invalid UTF-8 not passed through\n{report}");
    let pieces = &bin[2..];
    let bytes: usize = pieces.iter().map(Vec::len).sum();
    assert!(pieces.iter().all(|p| p.iter().all(|b| *b == b'x')), "a piece holds other bytes\n{report}");
    assert_eq!(bytes, BIG, "bytes of the long line written ({} pieces)\n{report}", pieces.len());
}

/// Runs `podinit check` and the pod (not as PID 1: nothing must start
/// anyway) on `toml`; returns what is wrong with the refusals, if anything:
/// each must exit 2, start nothing, print one message naming
/// `FILE:LINE:COL` at the line holding `needle` and the key path `key`.
fn refusal_problems(what: &str, toml: &str, needle: &str, key: &str) -> Vec<String> {
    let line = toml.lines().position(|l| l.contains(needle)).expect("needle in the config") + 1;
    let td = TestDir::new();
    let path = td.config(toml);
    let check = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
    let run = td.podinit_not_pid1().config(&path).deadline(secs(10.0)).run();
    let mut problems = Vec::new();
    for (mode, out) in [("check", &check), ("run", &run)] {
        let msg = out.stderr.trim();
        let at = format!("{}:{line}:", path.display());
        let ok = out.code == Some(2)
            && !td.file("started").exists()
            && out.stdout.trim().is_empty()
            && msg.lines().count() == 1
            && msg.contains(&at)
            && msg.contains(key);
        if !ok {
            problems.push(format!(
                "{what} [{mode}]: want exit 2 and one message naming {at}COL and `{key}`; got exit {:?}: {msg}",
                out.code
            ));
        }
    }
    problems
}

/// Report 7: A misspelt key anywhere, nested tables included and in every TOML form
/// (inline table, table header, dotted key): refused before anything starts,
/// with one message naming file:line:col and the key's whole path (the entry
/// by its 1-based index, as podinit names it elsewhere).
#[test]
fn a_misspelt_key_anywhere_is_refused_and_named_with_its_path() {
    let app = "[[process]]\nname = \"app\"\ncommand = \"touch @DIR@/started\"\n";
    let side =
        "[[process]]\nname = \"side\"\nrole = \"sidecar\"\ncommand = \"touch @DIR@/started; sleep 5\"\n";
    let cases: Vec<(&str, String, &str, &str)> = vec![
        (
            "startup_probe.perod inline",
            format!("{side}startup_probe = {{ exec = {{ command = [\"true\"] }}, perod = \"1s\" }}\n\n{app}"),
            "perod",
            "process[1].startup_probe.perod",
        ),
        (
            "startup_probe.perod under a table header",
            format!(
                "{side}\n[process.startup_probe]\nexec = {{ command = [\"true\"] }}\nperod = \"1s\"\n\n{app}"
            ),
            "perod",
            "process[1].startup_probe.perod",
        ),
        (
            "startup_probe.perod as a dotted key",
            format!("{app}\n{side}startup_probe.exec.command = [\"true\"]\nstartup_probe.perod = \"1s\"\n"),
            "perod",
            "process[2].startup_probe.perod",
        ),
        (
            "pod.backoff.intial inline",
            format!("[pod]\nbackoff = {{ intial = \"1s\" }}\n\n{app}"),
            "intial",
            "pod.backoff.intial",
        ),
        (
            "pod.backoff.intial under a table header",
            format!("[pod.backoff]\nmax = \"10s\"\nintial = \"1s\"\n\n{app}"),
            "intial",
            "pod.backoff.intial",
        ),
        (
            "post_start.exec.comand inline",
            format!("{side}post_start = {{ exec = {{ comand = [\"true\"] }} }}\n\n{app}"),
            "comand",
            "process[1].post_start.exec.comand",
        ),
        (
            "pre_stop.exec.comand under a table header",
            format!("{app}\n{side}\n[process.pre_stop.exec]\ncomand = [\"true\"]\n"),
            "comand",
            "process[2].pre_stop.exec.comand",
        ),
    ];
    let mut problems = Vec::new();
    for (what, toml, needle, key) in &cases {
        problems.extend(refusal_problems(what, toml, needle, key));
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// Report 7, the other side: The same nested keys spelt right, in the table-header
/// and dotted-key forms TOML allows: accepted by `podinit check`.
#[test]
fn nested_keys_in_header_and_dotted_form_are_accepted() {
    let app = "[[process]]\nname = \"app\"\ncommand = \"true\"\n";
    let side = "[[process]]\nname = \"side\"\nrole = \"sidecar\"\ncommand = \"sleep 5\"\n";
    let cases: Vec<(&str, String)> = vec![
        ("startup_probe under a header", format!("{side}\n[process.startup_probe]\nexec = {{ command = [\"true\"] }}\nperiod = \"1s\"\n\n{app}")),
        ("startup_probe as dotted keys", format!("{side}startup_probe.exec.command = [\"true\"]\nstartup_probe.period = \"1s\"\n\n{app}")),
        ("pre_stop.exec under a header", format!("{app}\n{side}\n[process.pre_stop.exec]\ncommand = [\"true\"]\n")),
        ("pre_stop.sleep as a dotted key", format!("{side}pre_stop.sleep = \"1s\"\n\n{app}")),
        ("pod.backoff as dotted keys", format!("[pod]\nbackoff.initial = \"2s\"\n\n{app}")),
    ];
    let mut problems = Vec::new();
    for (what, toml) in &cases {
        let td = TestDir::new();
        let path = td.config(toml);
        let out = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
        if out.code != Some(0) {
            problems.push(format!("{what}: exit {:?}: {}\n{toml}", out.code, out.stderr.trim()));
        }
    }
    assert!(problems.is_empty(), "valid TOML refused:\n{}", problems.join("\n"));
}

/// Report 8: podinit run as an unprivileged user (uid 12345, no groups) on a
/// read-only root file system (remounted read-only in podinit's own mount
/// namespace), with no status socket configured and HOME, TMPDIR and
/// XDG_RUNTIME_DIR pointing nowhere: it starts the pod, and `podinit status`
/// run as the same user without arguments answers (0 or 1); or podinit says
/// in one clear message which paths it could not write. Without root the test
/// runs podinit as the current (unprivileged) user, without the read-only root.
#[test]
fn podinit_as_an_unprivileged_user_on_a_read_only_root_starts_and_answers_status() {
    let td = TestDir::new();
    // Entries write their records to /dev/shm, the one writable place left.
    let shm = tempfile::Builder::new().prefix("podinit-test-").tempdir_in("/dev/shm").unwrap();
    for d in [td.path(), shm.path()] {
        fs::set_permissions(d, fs::Permissions::from_mode(0o777)).unwrap();
    }
    let rec = shm.path().join("rec");
    let cfg = format!(
        r#"[pod]
termination_grace_period = "3s"

[[process]]
name = "app"
command = '''
trap 'echo "stop app" >> "{rec}"; exit 0' TERM
echo "start app uid $(id -u)" >> "{rec}"
while :; do sleep 0.05; done
'''
"#,
        rec = rec.display()
    );
    let path = td.config(&cfg);
    fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
    let root = is_root();
    // SAFETY: geteuid(2) has no preconditions.
    let uid = if root { 12345 } else { unsafe { libc::geteuid() } };
    let setpriv = ["setpriv", "--reuid", "12345", "--regid", "12345", "--clear-groups", "--"];
    let mut wrapper: Vec<&str> = vec!["sh", "-c", "mount -o remount,bind,ro / && exec \"$@\"", "sh"];
    wrapper.extend(setpriv);
    let launcher = if root { td.podinit() } else { td.podinit_not_pid1() };
    let err_path = shm.path().join("podinit.err");
    let err = File::create(&err_path).unwrap();
    let clean_env = |c: &mut Command| {
        c.env_remove("PODINIT_STATUS_SOCKET")
            .env_remove("PODINIT_CONFIG")
            .env_remove("XDG_RUNTIME_DIR")
            .env("HOME", "/nonexistent")
            .env("TMPDIR", "/nonexistent");
    };
    let mut run = launcher
        .config(&path)
        .deadline(secs(20.0))
        .spawn_wrapped(if root { &wrapper[..] } else { &["env", "--"][..] }, |c| {
            clean_env(c);
            c.stdin(Stdio::null()).stdout(Stdio::null()).stderr(err);
        })
        .log(&err_path)
        .log(&rec);
    let want = format!("start app uid {uid}");
    let r = rec.clone();
    run.wait_until("the main to start", secs(10.0), || {
        fs::read_to_string(&r).unwrap_or_default().lines().any(|l| l.starts_with("start app uid"))
    });
    let started = fs::read_to_string(&rec).unwrap_or_default();

    // `podinit status` as the same user, with no arguments.
    let mut answer = None;
    let t = Instant::now();
    while t.elapsed() < secs(5.0) {
        let mut cmd = if root {
            let mut c = Command::new("setpriv");
            c.args(&setpriv[1..]).arg(env!("CARGO_BIN_EXE_podinit"));
            c
        } else {
            Command::new(env!("CARGO_BIN_EXE_podinit"))
        };
        cmd.arg("status");
        clean_env(&mut cmd);
        let out = run_with_deadline(&mut cmd, secs(5.0));
        let done = matches!(out.code, Some(0) | Some(1));
        answer = Some(out);
        if done {
            break;
        }
        thread::sleep(Duration::from_millis(100));
    }
    let answer = answer.unwrap();
    println!("podinit status as uid {uid}: {answer:?}");
    let stderr_now = String::from_utf8_lossy(&fs::read(&err_path).unwrap_or_default()).into_owned();
    run.signal(SIGTERM);
    let exit = run.wait();
    let stderr = String::from_utf8_lossy(&fs::read(&err_path).unwrap_or_default()).into_owned();
    let report = format!("status: {answer:?}\npodinit: {exit:?}\n--- stderr ---\n{}", tail(&stderr, 3000));
    assert!(started.lines().any(|l| l == want), "the main did not run as {want:?}: {started}\n{report}");
    assert!(!stderr.contains("panicked"), "{report}");
    if !matches!(answer.code, Some(0) | Some(1)) {
        let about_socket: Vec<&str> =
            stderr_now.lines().filter(|l| l.starts_with("podinit | ") && l.contains("socket")).collect();
        assert!(
            about_socket.len() == 1 && about_socket[0].contains("/dev/shm"),
            "`podinit status` did not answer, and podinit did not say once which paths it could not write\n{report}"
        );
    }
    assert_eq!(exit.code, Some(0), "{report}");
}

/// Security: podinit never writes an environment value to its logs. Secrets
/// in the entries' `env`, in their `env_file` and in podinit's own
/// environment, with `PODINIT_LOG=debug`, a crash-looping sidecar, a sidecar
/// whose startup probe fails three times, and a main whose readiness probe
/// always fails, in text and in JSON log format: no secret anywhere in
/// podinit's output, although the children got all three.
#[test]
fn environment_values_never_reach_podinits_logs() {
    const SECRETS: [&str; 3] = ["s3cr3t-value", "f1le-s3cr3t-value", "own-s3cr3t-value"];
    for json in [false, true] {
        let td = TestDir::new();
        td.write("secret.env", &format!("FILE_SECRET=\"{}\"\n", SECRETS[1]));
        for (i, s) in SECRETS.iter().enumerate() {
            td.write(&format!("want{i}"), s);
        }
        let env = "env = { SECRET = \"s3cr3t-value\" }\nenv_file = \"@DIR@/secret.env\"";
        // Compares with files: the secrets must not be in the command lines.
        let check_env = r#"[ "$SECRET" = "$(cat @DIR@/want0)" ] && [ "$FILE_SECRET" = "$(cat @DIR@/want1)" ] && [ "$OWN_SECRET" = "$(cat @DIR@/want2)" ] && echo "env ok" >> "@REC@""#;
        let mut cfg = String::from(
            "[pod]\ntermination_grace_period = \"2s\"\nbackoff = { initial = \"50ms\", max = \"100ms\" }\n\n",
        );
        cfg += &entry("crashy", "sidecar", &format!("{check_env}\necho crash >> \"@REC@\"\nexit 3"), env);
        cfg += &entry(
            "probed",
            "sidecar",
            &format!("{check_env}\n{}", sleeper("probed")),
            &format!(
                "{env}\nstartup_probe = {{ exec = {{ command = [\"sh\", \"-c\", \"echo s >> @DIR@/startup; [ $(wc -l < @DIR@/startup) -ge 4 ]\"] }}, period = \"50ms\", failure_threshold = 100 }}"
            ),
        );
        cfg += &entry(
            "app",
            "main",
            &format!(
                "{check_env}\n{}\ni=0; while [ \"$(cat @DIR@/probes 2>/dev/null | wc -l)\" -lt 3 ] && [ $i -lt 250 ]; do sleep 0.02; i=$((i+1)); done",
                sh_wait_records("crash", 5, 5)
            ),
            &format!(
                "{env}\nreadiness_probe = {{ exec = {{ command = [\"sh\", \"-c\", \"echo probe >> @DIR@/probes; exit 1\"] }}, period = \"50ms\", failure_threshold = 1 }}"
            ),
        );
        let path = td.config(&cfg);
        let mut launcher = td
            .podinit()
            .config(&path)
            .env("PODINIT_LOG", "debug")
            .env("OWN_SECRET", SECRETS[2])
            .deadline(secs(20.0));
        if json {
            launcher = launcher.arg("--log-format").arg("json");
        }
        let out = launcher.run();
        out.assert_code(0);
        assert!(count(&out.records, "env ok") >= 3, "the children did not get the secrets\n{}", out.report());
        assert!(count(&out.records, "crash") >= 5, "{}", out.report());
        let probes = fs::read_to_string(td.file("probes")).unwrap_or_default().lines().count();
        assert!(probes >= 3, "the readiness probe ran {probes} times\n{}", out.report());
        assert!(out.stderr.contains("startup probe failed"), "no probe failure logged\n{}", out.report());
        let leaks: Vec<&str> = out
            .stderr
            .lines()
            .chain(out.stdout.lines())
            .filter(|l| SECRETS.iter().any(|s| l.contains(s)))
            .collect();
        assert!(leaks.is_empty(), "secrets in podinit's output (json {json}): {leaks:#?}\n{}", out.report());
    }
}
