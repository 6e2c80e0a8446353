//! The parts of tini's and dumb-init's own test suites that apply to a
//! replacement for them, ported to `podinit -- cmd` (a plain init). Each test
//! runs the same scenario against podinit and, when the peer is installed
//! (`tini`, `dumb-init` on `PATH`), against the peer too, and asserts that
//! podinit gives what the peer gives; where podinit documents a reason to
//! differ (docs/signals.md, "Differences from tini and dumb-init"), the test
//! asserts podinit's documented behaviour, says why, and checks that the peer
//! really behaves the other way. The expected values are written down as well,
//! so that without the peers the tests still check podinit against them.
//! Written from the peers' scenarios, not from their code.
//!
//! Which peer test each one corresponds to (github.com/krallin/tini and
//! github.com/Yelp/dumb-init):
//!
//! | test here | peer test |
//! |---|---|
//! | `every_exit_status_0_to_255_passes_through` | krallin/tini `test/run_inner_tests.py` (exit code test, without `-e`); Yelp/dumb-init `tests/exit_status_test.py` (`test_exit_status_regular_exit`) |
//! | `a_command_killed_by_a_signal_gives_128_plus_n` | Yelp/dumb-init `tests/exit_status_test.py` (`test_exit_status_terminated_by_signal`) |
//! | `sigterm_sigusr1_sigusr2_end_a_command_with_default_handlers` | krallin/tini `test/signals/test.py` with `test/run_inner_tests.py` (signals test) and `test/run_outer_tests.py` (signals test) |
//! | `a_forwarded_signal_reaches_a_grandchild_in_the_group` | krallin/tini `test/pgroup/stage_1.py` with `test/run_inner_tests.py` (process group test, `-g` and `TINI_KILL_PROCESS_GROUP`) |
//! | `sigterm_reaches_every_process_of_a_shell_pipeline` | Yelp/dumb-init `tests/child_processes_test.py` (`test_setsid_signals_entire_group`, `test_no_setsid_doesnt_signal_entire_group`) |
//! | `the_command_leads_its_own_process_group` | none: checks a row of docs/signals.md, "Differences from tini and dumb-init" |
//! | `what_is_left_of_the_group_when_the_command_exits_is_killed` | Yelp/dumb-init `tests/child_processes_test.py` (`test_all_processes_receive_term_on_exit_if_setsid`) |
//! | `the_command_dies_with_an_init_that_is_killed_when_not_pid1` | none (krallin/tini `test/pdeathsignal/` is about tini's own `-p`, not ported): checks a row of docs/signals.md |
//! | `orphans_are_adopted_and_reaped_as_pid1` | krallin/tini `test/reaping/stage_1.py`, `stage_2.py` with `test/run_outer_tests.py` (reaping test); Yelp/dumb-init `tests/test-zombies` |
//! | `orphans_are_adopted_and_reaped_when_not_pid1` | krallin/tini `test/run_inner_tests.py` (reaping test through `test/subreaper-proxy.py`, `-s`, `TINI_SUBREAPER`; zombie reaping failure test) |
//! | `the_catchable_signals_reach_the_command` | Yelp/dumb-init `tests/proxies_signals_test.py` (`test_proxies_signals`, with `testing/print_signals.py`) |
//! | `sigterm_and_sigint_reach_the_command_as_themselves` | Yelp/dumb-init `tests/proxies_signals_test.py` (`test_proxies_signals`: SIGTERM and SIGINT); krallin/tini `test/run_outer_tests.py` (Ctrl-C gives 128 + SIGINT) |
//! | `a_command_that_ignores_sigterm_is_killed_at_the_end_of_the_budget`, `..._sigint_...` | krallin/tini `test/signals/test.py` (SIGTERM), with a command that goes on |
//! | `a_second_sigint_spends_the_budget` | Yelp/dumb-init `testing/print_signals.py` (the printer that ends on a second SIGINT) |
//! | `job_control_signals_neither_stop_podinit_nor_reach_the_command` | Yelp/dumb-init `tests/shell_background_test.py` (`test_shell_background_support_setsid`, `..._without_setsid`) |
//! | `the_command_keeps_the_working_directory_and_the_init_moves_to_root` | Yelp/dumb-init `tests/cwd_test.py` |
//! | `stdin_reaches_the_command` | Yelp/dumb-init `tests/tty_test.py` (`test_tty`), through a pipe instead of a terminal |
//! | `a_command_that_cannot_be_run_gives_127_or_126` | Yelp/dumb-init `tests/child_processes_test.py` (`test_fails_nonzero_with_bad_exec`); krallin/tini `test/run_outer_tests.py` (`zzzz` gives 127) |
//! | `usage_errors_help_and_the_double_dash` | Yelp/dumb-init `tests/cli_test.py` (`test_no_arguments_prints_usage`, `test_exits_invalid_with_invalid_args`, `test_help_message`); krallin/tini `test/run_outer_tests.py` (`-z`, `-h`) and `test/run_inner_tests.py` (`-e`) |
//! | `the_command_starts_with_a_clean_signal_state` | krallin/tini `test/sigconf/sigconf-test.c` with `test/run_inner_tests.py` (signal configuration test) |
//!
//! Not ported: what needs a terminal (tini's `test_tty_handling`, dumb-init's
//! `tests/tty_test.py` apart from `test_tty`; tests/terminal.rs covers
//! podinit's own terminal handling), flags podinit does not have (tini `-p`
//! parent death signal, `-w`, `-v`, `-e` beyond checking that podinit refuses
//! it; dumb-init `-r` rewrites, `-c`/`DUMB_INIT_SETSID=0`, `-v` output), exact
//! help and version texts, and tini's valgrind and package install runs.
//!
//! PID-1 runs go through `unshare --pid --fork --mount-proc --kill-child`
//! (tests/common/mod.rs). A run that must not be PID 1 and may leave orphans
//! behind (an init that is not a subreaper) runs under a holder: a small
//! program that is PID 1 of its own namespace, runs the init as its child,
//! never reaps anything else and records the init's exit status, so that
//! nothing leaks onto the host and a zombie stays visible.

mod common;

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::*;

// ----- the inits under test -----

/// One init under test: podinit or a peer, with what comes before the command.
#[derive(Clone, Debug)]
struct Init {
    name: &'static str,
    /// None: the podinit this `cargo test` built.
    bin: Option<PathBuf>,
    pre: Vec<&'static str>,
    env: Vec<(&'static str, &'static str)>,
}

fn podinit() -> Init {
    Init { name: "podinit", bin: None, pre: vec!["--"], env: Vec::new() }
}

/// A program on PATH.
fn which(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

/// A peer init, when installed; otherwise a note on stderr and None (the test
/// then checks podinit against the values written down from that peer).
fn peer(
    program: &str,
    name: &'static str,
    pre: &[&'static str],
    env: &[(&'static str, &'static str)],
) -> Option<Init> {
    match which(program) {
        Some(bin) => Some(Init { name, bin: Some(bin), pre: pre.to_vec(), env: env.to_vec() }),
        None => {
            eprintln!("note: {program} is not installed: {name} is not run, podinit is checked against its recorded behaviour");
            None
        }
    }
}

fn tini() -> Option<Init> {
    peer("tini", "tini", &["--"], &[])
}

fn dumb_init() -> Option<Init> {
    peer("dumb-init", "dumb-init", &["--"], &[])
}

/// podinit, and each peer that is installed.
fn all_three() -> Vec<Init> {
    [Some(podinit()), tini(), dumb_init()].into_iter().flatten().collect()
}

impl Init {
    fn is_podinit(&self) -> bool {
        self.bin.is_none()
    }

    /// A run of this init as PID 1 (`pid1`) or directly below the test.
    fn launcher(&self, td: &TestDir, pid1: bool) -> Launcher {
        let mut l = if pid1 { td.podinit() } else { td.podinit_not_pid1() };
        if let Some(b) = &self.bin {
            l = l.binary(b);
        }
        for (k, v) in &self.env {
            l = l.env(*k, *v);
        }
        l.args(self.pre.iter().copied())
    }

    /// A run of this init with `cmd`, as PID 1 or not.
    fn run(&self, td: &TestDir, pid1: bool, cmd: &[&str]) -> Launcher {
        self.launcher(td, pid1).args(cmd.iter().copied())
    }
}

/// `/bin/sh -c SCRIPT` after the template is expanded.
fn sh(td: &TestDir, script: &str) -> Vec<String> {
    vec!["sh".into(), "-c".into(), td.expand(script)]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Asserts a peer gives `want`, the value podinit is held to: a peer that
/// no longer behaves as recorded makes the test fail, not pass silently.
#[track_caller]
fn confirm<T: PartialEq + std::fmt::Debug>(who: &Init, what: &str, got: T, want: T, report: &str) {
    assert_eq!(got, want, "{}: {what}: the peer no longer gives the recorded value\n{report}", who.name);
}

// ----- a signal printer (after dumb-init's testing/print_signals.py) -----

/// Appends `sig N` to the record file for every signal it catches (all but
/// SIGKILL, SIGSTOP, SIGCHLD and the C library's 32 and 33), after `ready`;
/// exits 0 on a signal listed in its second argument (comma-separated).
const PRINTER: &str = r#"
import os, signal, sys, time
rec = sys.argv[1]
exit_on = {int(s) for s in sys.argv[2].split(",") if s} if len(sys.argv) > 2 else set()
def write(line):
    fd = os.open(rec, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (line + "\n").encode())
    os.close(fd)
def caught(n, _frame):
    write("sig %d" % n)
    if n in exit_on:
        sys.exit(0)
for n in range(1, 65):
    if n not in (9, 17, 19, 32, 33):
        signal.signal(n, caught)
write("ready")
while True:
    time.sleep(1)
"#;

fn printer(td: &TestDir, exit_on: &str) -> Vec<String> {
    let p = td.write("printer.py", PRINTER);
    vec![python().into(), p.display().to_string(), td.rec().display().to_string(), exit_on.into()]
}

/// The signal numbers the printer recorded, in order.
fn printed(records: &[String]) -> Vec<i32> {
    records.iter().filter_map(|l| l.strip_prefix("sig ")).filter_map(|n| n.parse().ok()).collect()
}

// ----- a holder: PID 1 of a namespace, the init below it -----

/// Runs its arguments as its child, records `init exited N` (128 + signal
/// for a signal death), then waits for the `release` file (at most 30 s)
/// and exits with the same status. It reaps nothing but that child, so an
/// orphan that the init does not adopt stays visible here, as a zombie once
/// it ends.
const HOLDER: &str = r#"
import os, subprocess, sys, time
rec, release = sys.argv[1], sys.argv[2]
st = subprocess.call(sys.argv[3:])
code = st if st >= 0 else 128 - st
with open(rec, "a") as f:
    f.write("init exited %d\n" % code)
deadline = time.time() + 30
while not os.path.exists(release) and time.time() < deadline:
    time.sleep(0.02)
sys.exit(code)
"#;

/// An init running below a holder, not PID 1, in its own PID namespace.
/// Owns the test dir, so that it outlives the run.
struct Held {
    bare: Bare,
    td: TestDir,
}

impl Held {
    fn spawn(init: &Init, td: TestDir, cmd: &[String], deadline: Duration) -> Held {
        let holder = td.write("holder.py", HOLDER);
        let (out, err) = (td.file("held.out"), td.file("held.err"));
        let (o, e) = (fs::File::create(&out).unwrap(), fs::File::create(&err).unwrap());
        let (rec, release) = (td.rec(), td.file("release"));
        let wrapper = [python(), holder.to_str().unwrap(), rec.to_str().unwrap(), release.to_str().unwrap()];
        let bare = init.run(&td, true, &strs(cmd)).deadline(deadline).spawn_wrapped(&wrapper, |c| {
            c.stdin(Stdio::null()).stdout(o).stderr(e);
        });
        Held { bare: bare.log(&out).log(&err), td }
    }

    /// Host pid of the holder.
    fn holder_pid(&mut self) -> i32 {
        self.bare.podinit_pid()
    }

    /// Host pid of the init (the holder's child).
    fn init_pid(&mut self) -> i32 {
        let holder = self.holder_pid();
        self.bare.wait_until("the init below the holder", secs(5.0), || !children(holder).is_empty());
        children(holder)[0]
    }

    /// Waits for the init to exit; its status.
    fn init_exit(&mut self, timeout: Duration) -> i32 {
        let rec = self.td.rec();
        let exited = move || -> Option<i32> {
            let text = fs::read_to_string(&rec).unwrap_or_default();
            text.lines().find_map(|l| l.strip_prefix("init exited ")).and_then(|n| n.trim().parse().ok())
        };
        let probe = exited.clone();
        self.bare.wait_until("the init's exit", timeout, move || probe().is_some());
        exited().unwrap()
    }

    fn records(&self) -> Vec<String> {
        self.td.records()
    }

    fn stderr(&self) -> String {
        fs::read_to_string(self.td.file("held.err")).unwrap_or_default()
    }

    fn report(&self) -> String {
        self.bare.report()
    }

    /// Lets the holder exit and waits for it.
    fn finish(self) -> BareExit {
        fs::write(self.td.file("release"), "").unwrap();
        self.bare.wait()
    }
}

/// Live (not zombie) processes below `pid`, with their comm.
fn live_below(pid: i32) -> Vec<(i32, String)> {
    descendants(pid)
        .into_iter()
        .filter(|p| matches!(proc_state(*p), Some((s, _)) if s != 'Z'))
        .map(|p| (p, comm(p)))
        .collect()
}

fn state(pid: i32) -> char {
    proc_state(pid).map(|(s, _)| s).unwrap_or('-')
}

// ===== exit statuses =====

#[test]
fn every_exit_status_0_to_255_passes_through() {
    let inits = all_three();
    let td = TestDir::new();
    for init in &inits {
        for code in 0..=255 {
            let script = format!("exit {code}");
            let out = init.run(&td, false, &["sh", "-c", &script]).deadline(secs(10.0)).run();
            assert_eq!(out.code, Some(code), "{}: `sh -c 'exit {code}'`\n{}", init.name, out.report());
        }
    }
}

#[test]
fn a_command_killed_by_a_signal_gives_128_plus_n() {
    let inits = all_three();
    let td = TestDir::new();
    for init in &inits {
        for sig in [libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT, libc::SIGKILL] {
            let script = format!("ulimit -c 0; kill -{sig} $$; sleep 5");
            let out = init.run(&td, true, &["sh", "-c", &script]).deadline(secs(10.0)).run();
            assert_eq!(
                out.code,
                Some(128 + sig),
                "{}: a command killed by signal {sig}\n{}",
                init.name,
                out.report()
            );
        }
    }
}

#[test]
fn sigterm_sigusr1_sigusr2_end_a_command_with_default_handlers() {
    let inits = all_three();
    for init in &inits {
        for sig in [libc::SIGTERM, libc::SIGUSR1, libc::SIGUSR2] {
            let td = TestDir::new();
            // The shell waits on a child, every disposition at its default.
            let cmd = sh(&td, r#"echo ready >> "@REC@"; sleep 100; exit 0"#);
            let mut run = init.run(&td, true, &strs(&cmd)).deadline(secs(15.0)).spawn();
            run.wait_for_record("ready", secs(5.0));
            run.signal(sig);
            let out = run.wait();
            assert_eq!(
                out.code,
                Some(128 + sig),
                "{}: signal {sig} to the init\n{}",
                init.name,
                out.report()
            );
        }
    }
}

// ===== process groups =====

/// The command ignores SIGUSR1 and waits on a grandchild that takes it with
/// the default action. podinit forwards a signal to the command's process
/// group, as `tini -g` (or TINI_KILL_PROCESS_GROUP) and dumb-init do: the
/// grandchild dies of it. Plain `tini` signals the child alone, and the
/// grandchild lives on (the difference is recorded in docs/signals.md).
#[test]
fn a_forwarded_signal_reaches_a_grandchild_in_the_group() {
    const SCRIPT: &str = r#"trap '' USR1
@PY@ -c 'import signal, sys, time
signal.signal(signal.SIGUSR1, signal.SIG_DFL)
open(sys.argv[1], "a").write("grandchild ready\n")
time.sleep(60)' "@REC@"
echo "grandchild status $?" >> "@REC@"
exit 0"#;
    let mut inits: Vec<Init> = vec![podinit()];
    inits.extend(peer("tini", "tini -g", &["-g", "--"], &[]));
    inits.extend(peer(
        "tini",
        "tini with TINI_KILL_PROCESS_GROUP",
        &["--"],
        &[("TINI_KILL_PROCESS_GROUP", "1")],
    ));
    inits.extend(dumb_init());
    for init in &inits {
        let td = TestDir::new();
        let mut run = init.run(&td, true, &strs(&sh(&td, SCRIPT))).deadline(secs(15.0)).spawn();
        run.wait_for_record("grandchild ready", secs(5.0));
        run.signal(libc::SIGUSR1);
        let out = run.wait();
        out.assert_code(0);
        assert!(
            out.records.contains(&format!("grandchild status {}", 128 + libc::SIGUSR1)),
            "{}: the grandchild did not die of SIGUSR1\n{}",
            init.name,
            out.report()
        );
    }
    // Plain tini: the signal goes to the child only.
    if let Some(t) = tini() {
        let td = TestDir::new();
        let mut run = t.run(&td, true, &strs(&sh(&td, SCRIPT))).deadline(secs(15.0)).spawn();
        run.wait_for_record("grandchild ready", secs(5.0));
        run.signal(libc::SIGUSR1);
        // Nothing is to happen: let time pass, then look.
        std::thread::sleep(secs(1.0));
        assert!(run.is_running(), "tini ended although the grandchild should live on\n{}", run.report());
        confirm(
            &t,
            "records after SIGUSR1",
            td.records(),
            vec!["grandchild ready".to_string()],
            &run.report(),
        );
    }
}

/// SIGTERM to the init reaches every process of a pipeline the command left
/// in the background (all in the command's process group). Each records the
/// SIGTERM; the command waits for the records (10 s at most; 1 s for plain
/// tini, which is expected to signal the command alone), then exits 0.
#[test]
fn sigterm_reaches_every_process_of_a_shell_pipeline() {
    let script = |wait_secs: u32| {
        format!(
            r#"member() {{ sh -c 'trap "echo TERM $0 >> @REC@; exit 0" TERM; echo "start $0" >> @REC@; while :; do sleep 0.05; done' "$1"; }}
trap 'echo "TERM main" >> "@REC@"' TERM
member a | member b &
member c | member d &
{ready}
echo ready >> "@REC@"
# The SIGTERM also reaches (and ends) this loop's grep and sleep: an empty
# count is no count.
i=0; while [ $i -lt {t} ]; do n=$(grep -c '^TERM [abcd]$' "@REC@"); [ "${{n:-0}}" -ge 4 ] && break; sleep 0.02; i=$((i+1)); done
exit 0"#,
            ready = ["a", "b", "c", "d"].map(|m| sh_wait_records(&format!("start {m}"), 1, 5)).join("\n"),
            t = wait_secs * 50
        )
    };
    let mut inits: Vec<Init> = vec![podinit()];
    inits.extend(dumb_init());
    for init in &inits {
        let td = TestDir::new();
        let mut run = init.run(&td, true, &strs(&sh(&td, &script(10)))).deadline(secs(20.0)).spawn();
        run.wait_for_record("ready", secs(10.0));
        run.signal(SIGTERM);
        let out = run.wait();
        out.assert_code(0);
        for who in ["main", "a", "b", "c", "d"] {
            assert_eq!(
                count(&out.records, &format!("TERM {who}")),
                1,
                "{}: {who}\n{}",
                init.name,
                out.report()
            );
        }
    }
    if let Some(t) = tini() {
        let td = TestDir::new();
        let mut run = t.run(&td, true, &strs(&sh(&td, &script(1)))).deadline(secs(20.0)).spawn();
        run.wait_for_record("ready", secs(10.0));
        run.signal(SIGTERM);
        let out = run.wait();
        out.assert_code(0);
        let terms: Vec<String> = out.records.iter().filter(|l| l.starts_with("TERM")).cloned().collect();
        confirm(&t, "who got SIGTERM", terms, vec!["TERM main".to_string()], &out.report());
    }
}

/// The command leaves a process in its group that traps SIGTERM, and exits
/// 3. Not PID 1 (below a holder), so that what the init does, not the end of
/// the namespace, decides. podinit SIGKILLs what is left of the group and
/// reaps it before it exits (docs/signals.md: a dead leader's group gets
/// SIGKILL, as a container's processes die with its PID 1); dumb-init sends it
/// SIGTERM and exits without waiting; tini leaves it running.
#[test]
fn what_is_left_of_the_group_when_the_command_exits_is_killed() {
    const SCRIPT: &str = r#"sh -c 'trap "echo TERM bg >> @REC@; exit 0" TERM; echo "start bg" >> @REC@; while :; do sleep 0.05; done' &
i=0; until grep -qx 'start bg' "@REC@" || [ $i -ge 250 ]; do sleep 0.02; i=$((i+1)); done
exit 3"#;
    let start = |init: &Init| -> (Held, i32) {
        let td = TestDir::new();
        let cmd = sh(&td, SCRIPT);
        let mut held = Held::spawn(init, td, &cmd, secs(20.0));
        let code = held.init_exit(secs(10.0));
        (held, code)
    };
    // The background shell, by the text of its script (a fork of it that has
    // not exec'd yet has the same).
    let background = |holder: i32| -> usize {
        live_below(holder)
            .into_iter()
            .filter(|(p, _)| {
                fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.windows(8).any(|w| w == b"start bg"))
            })
            .count()
    };

    let (mut held, code) = start(&podinit());
    assert_eq!(code, 3, "{}", held.report());
    let holder = held.holder_pid();
    let left = live_below(holder);
    assert!(left.is_empty(), "podinit left processes behind: {left:?}\n{}", held.report());
    assert!(
        !held.records().contains(&"TERM bg".to_string()),
        "podinit sent SIGTERM, not SIGKILL\n{}",
        held.report()
    );
    held.finish();

    if let Some(d) = dumb_init() {
        let (mut held, code) = start(&d);
        confirm(&d, "exit status", code, 3, &held.report());
        let rec = held.td.rec();
        held.bare.wait_until("TERM bg", secs(5.0), || {
            fs::read_to_string(&rec).unwrap_or_default().lines().any(|l| l == "TERM bg")
        });
        held.finish();
    }
    if let Some(t) = tini() {
        let (mut held, code) = start(&t);
        confirm(&t, "exit status", code, 3, &held.report());
        let holder = held.holder_pid();
        // Nothing is to happen: let time pass, then look.
        std::thread::sleep(secs(0.5));
        confirm(&t, "the background shell still running", background(holder) > 0, true, &held.report());
        confirm(&t, "TERM recorded", held.records().contains(&"TERM bg".to_string()), false, &held.report());
        held.finish();
    }
}

/// The command leads a process group of its own (the group podinit and
/// `tini -g` signal); podinit and tini keep it in the init's session,
/// dumb-init makes it lead a new session (setsid), which also gives it the
/// terminal. The command records its pid, process group and session, and
/// the init's session.
#[test]
fn the_command_leads_its_own_process_group() {
    const SCRIPT: &str = r#"set -- $(cut -d' ' -f1,5,6 /proc/$$/stat) $(cut -d' ' -f6 /proc/$PPID/stat)
[ "$2" = "$1" ] && echo "own group" >> "@REC@"
[ "$3" = "$1" ] && echo "own session" >> "@REC@"
[ "$3" = "$4" ] && echo "the init's session" >> "@REC@"
exit 0"#;
    let run = |init: &Init| -> Vec<String> {
        let td = TestDir::new();
        let out = init.run(&td, true, &strs(&sh(&td, SCRIPT))).deadline(secs(10.0)).run();
        out.assert_code(0);
        out.records
    };
    let same = ["own group", "the init's session"].map(String::from).to_vec();
    assert_eq!(run(&podinit()), same, "podinit");
    if let Some(t) = tini() {
        confirm(&t, "group and session", run(&t), same.clone(), "");
    }
    if let Some(d) = dumb_init() {
        confirm(
            &d,
            "group and session",
            run(&d),
            ["own group", "own session"].map(String::from).to_vec(),
            "",
        );
    }
}

/// Not PID 1, the init itself is SIGKILLed while its command runs. podinit
/// starts every process with the parent-death signal SIGKILL
/// (docs/signals.md, "Signals podinit sends"), so the command dies with it;
/// tini's and dumb-init's command runs on, unsupervised, and gets nothing.
#[test]
fn the_command_dies_with_an_init_that_is_killed_when_not_pid1() {
    // The command's fate, and the init's status as its parent saw it.
    let run = |init: &Init| -> (bool, i32, Held) {
        let td = TestDir::new();
        let cmd = printer(&td, "");
        let mut held = Held::spawn(init, td, &cmd, secs(20.0));
        let rec = held.td.rec();
        held.bare.wait_until("the command ready", secs(5.0), || {
            fs::read_to_string(&rec).unwrap_or_default().lines().any(|l| l == "ready")
        });
        let pid = held.init_pid();
        let command = children(pid)[0];
        send_signal(pid, SIGKILL);
        let code = held.init_exit(secs(5.0));
        let alive = || matches!(proc_state(command), Some((s, _)) if s != 'Z');
        if init.is_podinit() {
            held.bare.wait_until("the command's death", secs(5.0), || !alive());
        } else {
            // Nothing is to happen to the command: let time pass, then look.
            std::thread::sleep(secs(0.5));
        }
        (alive(), code, held)
    };
    for peer in [tini(), dumb_init()].into_iter().flatten() {
        let (alive, code, held) = run(&peer);
        confirm(&peer, "the init's status", code, 128 + SIGKILL, &held.report());
        confirm(&peer, "the command still running", alive, true, &held.report());
        confirm(&peer, "what the command got", printed(&held.records()), vec![], &held.report());
        held.finish();
    }
    let (alive, code, held) = run(&podinit());
    assert_eq!(code, 128 + SIGKILL, "{}", held.report());
    assert!(!alive, "the command outlived podinit\n{}", held.report());
    held.finish();
}

// ===== reaping =====

/// Spawns 100 orphans (their parent shell exits once it has started them
/// and written their pids), then looks at the parent of each one still
/// there: the init (`os.getppid()`) when the init adopted it. One that ended
/// before its shell did is no orphan (on a loaded machine the shell may have
/// reaped a few) and is left out. Waits until none is alive, gives the init
/// 1 s to reap them, and records `adopted: all`, `adopted: none` or
/// `adopted: A of N`, then `zombies Z` and the parents seen; exits 0 only
/// when all were adopted and none is left a zombie.
const REAPING_CHECKER: &str = r#"
import os, subprocess, sys, time
rec, pids_file = sys.argv[1], sys.argv[1] + ".pids"
init = os.getppid()
subprocess.call(["sh", "-c", 'for i in $(seq 100); do sleep 1.$((i % 4)) & echo $! >> "$0"; done', pids_file])
pids = [int(l) for l in open(pids_file).read().split()]
def stat(pid):
    try:
        s = open("/proc/%d/stat" % pid).read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2 :].split()
    return fields[0], int(fields[1])
def state(pid):
    st = stat(pid)
    return st[0] if st else None
first = [st for st in map(stat, pids) if st is not None]
adopted = sum(1 for st in first if st[1] == init)
parents = {}
for st in first:
    key = "ppid %d (%s)" % (st[1], "init" if st[1] == init else "not init")
    parents[key] = parents.get(key, 0) + 1
def alive():
    return [p for p in pids if state(p) not in (None, "Z")]
deadline = time.time() + 10
while time.time() < deadline and alive():
    time.sleep(0.02)
def zombies():
    return [p for p in pids if state(p) is not None]
deadline = time.time() + 1
while time.time() < deadline and zombies():
    time.sleep(0.02)
z = len(zombies())
if len(first) < 50:
    verdict = "too few orphans seen: %d" % len(first)
elif adopted == len(first):
    verdict = "all"
elif adopted == 0:
    verdict = "none"
else:
    verdict = "%d of %d" % (adopted, len(first))
with open(rec, "a") as f:
    f.write("adopted: %s\nzombies %d\nparents %r\n" % (verdict, z, sorted(parents.items())))
sys.exit(0 if verdict == "all" and z == 0 else 1)
"#;

fn reaping_cmd(td: &TestDir) -> Vec<String> {
    let p = td.write("checker.py", REAPING_CHECKER);
    vec![python().into(), p.display().to_string(), td.rec().display().to_string()]
}

#[test]
fn orphans_are_adopted_and_reaped_as_pid1() {
    let inits = all_three();
    for init in &inits {
        let td = TestDir::new();
        let out = init.run(&td, true, &strs(&reaping_cmd(&td))).deadline(secs(20.0)).run();
        assert_eq!(
            out.records.get(..2),
            Some(&["adopted: all", "zombies 0"].map(String::from)[..]),
            "{}\n{}",
            init.name,
            out.report()
        );
        assert_eq!(out.code, Some(0), "{}\n{}", init.name, out.report());
    }
}

/// Not PID 1, podinit registers itself as child subreaper without being
/// asked (docs/signals.md): it adopts and reaps the orphans as `tini -s` and
/// tini with TINI_SUBREAPER do. Plain tini warns and does not adopt them
/// (tini's own "zombie reaping failure test"); neither does dumb-init.
#[test]
fn orphans_are_adopted_and_reaped_when_not_pid1() {
    let mut adopting: Vec<Init> = vec![podinit()];
    adopting.extend(peer("tini", "tini -s", &["-s", "--"], &[]));
    adopting.extend(peer("tini", "tini with TINI_SUBREAPER", &["--"], &[("TINI_SUBREAPER", "1")]));
    let mut not_adopting: Vec<Init> = Vec::new();
    not_adopting.extend(tini());
    not_adopting.extend(dumb_init());
    for (init, adopts) in adopting.iter().map(|i| (i, true)).chain(not_adopting.iter().map(|i| (i, false))) {
        let td = TestDir::new();
        let cmd = reaping_cmd(&td);
        let mut held = Held::spawn(init, td, &cmd, secs(25.0));
        let code = held.init_exit(secs(20.0));
        let records = held.records();
        let report = format!("{}\n{}", init.name, held.report());
        if adopts {
            assert_eq!(code, 0, "{report}");
            assert_eq!(
                records.get(..2),
                Some(&["adopted: all", "zombies 0"].map(String::from)[..]),
                "{report}"
            );
        } else {
            confirm(init, "exit status", code, 1, &report);
            confirm(init, "adopted", records.first().map(String::as_str), Some("adopted: none"), &report);
            if init.name == "tini" {
                assert!(held.stderr().contains("zombie reaping won't work"), "{report}");
            }
        }
        if init.is_podinit() {
            assert!(!held.stderr().contains("warn"), "podinit warned\n{report}");
        }
        held.finish();
    }
}

// ===== signal forwarding =====

/// The last real-time signal: every init here forwards it, and it is
/// numbered above every signal sent before it, so that an init (and the
/// printer) that has both pending takes the other first. Once the printer
/// has recorded it, every signal sent before it has either been recorded or
/// was not forwarded.
const SENTINEL: i32 = 64;

/// Sends each of `signals` to the init, each followed by the sentinel, and
/// returns those the printer recorded.
fn forwarded_by(init: &Init, pid1: bool, signals: &[i32]) -> Vec<i32> {
    let td = TestDir::new();
    let mut run = init.run(&td, pid1, &strs(&printer(&td, ""))).deadline(secs(30.0)).spawn();
    run.wait_for_record("ready", secs(5.0));
    for (i, &s) in signals.iter().enumerate() {
        run.signal(s);
        run.signal(SENTINEL);
        run.wait_for_record_n(&format!("sig {SENTINEL}"), i + 1, secs(5.0));
    }
    let got: Vec<i32> = printed(&td.records()).into_iter().filter(|&s| s != SENTINEL).collect();
    drop(run);
    got
}

/// Every catchable signal but SIGCHLD, SIGTERM, SIGINT and the job control
/// stops (tested below), as dumb-init's NORMAL_SIGNALS, plus two real-time
/// ones. Run as PID 1, where the kernel drops a signal with the default
/// action: an init that does not catch one is neither killed nor stopped.
#[test]
fn the_catchable_signals_reach_the_command() {
    const SENT: [i32; 25] =
        [1, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 16, 18, 23, 24, 25, 26, 27, 28, 29, 30, 31, 36, 63];
    // What each peer forwarded when this test was written (tini 0.19.0,
    // dumb-init 1.2.5): tini all but the synchronous faults it leaves at
    // their default; dumb-init all of them.
    const TINI_SKIPS: [i32; 7] = [4, 5, 6, 7, 8, 11, 31];
    // podinit's documented exceptions (docs/signals.md, "What podinit does
    // with a signal it receives"), on top of the peers' forwarding.
    const PODINIT_SKIPS: [(i32, &str); 11] = [
        (4, "SIGILL: a synchronous fault of podinit itself"),
        (5, "SIGTRAP: likewise"),
        (6, "SIGABRT: likewise"),
        (7, "SIGBUS: likewise"),
        (8, "SIGFPE: likewise"),
        (11, "SIGSEGV: likewise"),
        (31, "SIGSYS: likewise"),
        (13, "SIGPIPE: ignored so that a closed stdout gives podinit an error, not death"),
        (18, "SIGCONT: job control, not forwarded"),
        (24, "SIGXCPU: podinit's own CPU limit; forwarding it would kill a main for it"),
        (25, "SIGXFSZ: podinit's own file size limit; likewise"),
    ];
    let recorded_tini: Vec<i32> = SENT.iter().copied().filter(|s| !TINI_SKIPS.contains(s)).collect();
    let recorded_dumb: Vec<i32> = SENT.to_vec();
    let mut both = recorded_tini.clone();
    if let Some(t) = tini() {
        let got = forwarded_by(&t, true, &SENT);
        confirm(&t, "forwarded signals", got.clone(), recorded_tini.clone(), "");
        both = got;
    }
    if let Some(d) = dumb_init() {
        let got = forwarded_by(&d, true, &SENT);
        confirm(&d, "forwarded signals", got.clone(), recorded_dumb, "");
        both.retain(|s| got.contains(s));
    }
    let want: Vec<i32> = both.into_iter().filter(|s| !PODINIT_SKIPS.iter().any(|(n, _)| n == s)).collect();
    let got = forwarded_by(&podinit(), true, &SENT);
    assert_eq!(
        got, want,
        "podinit forwards what both peers forward, less its documented exceptions {PODINIT_SKIPS:?}"
    );
}

/// SIGTERM and SIGINT reach the command as themselves (dumb-init and tini
/// forward both); the command exits 0 on it and so does the init. podinit
/// follows SIGTERM with SIGCONT (docs/signals.md, "Signals podinit sends"),
/// so only the first signal the command gets is compared.
#[test]
fn sigterm_and_sigint_reach_the_command_as_themselves() {
    let inits = all_three();
    let mut failures = Vec::new();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        for init in &inits {
            let td = TestDir::new();
            let mut run =
                init.run(&td, true, &strs(&printer(&td, &sig.to_string()))).deadline(secs(15.0)).spawn();
            run.wait_for_record("ready", secs(5.0));
            run.signal(sig);
            let out = run.wait();
            let first = printed(&out.records).first().copied();
            if first != Some(sig) || out.code != Some(0) {
                failures.push(format!(
                    "{}: signal {sig} to the init: the command first got {first:?}, the init exited {:?}\n{}",
                    init.name,
                    out.code,
                    out.report()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A command that catches SIGTERM and goes on (the signal printer): tini
/// and dumb-init pass the signal on, once, and wait for as long as the
/// command runs; podinit follows it with SIGCONT (so that a stopped process
/// can act on it) and sends SIGKILL once its termination budget (7 s,
/// docs/signals.md) is spent, as Kubernetes does at the end of a pod's grace
/// period, so that `docker stop` never has to. The three run side by side.
#[test]
fn a_command_that_ignores_sigterm_is_killed_at_the_end_of_the_budget() {
    let got = killed_at_the_end_of_the_budget(SIGTERM);
    assert_eq!(got, [SIGTERM, libc::SIGCONT], "what the command got from podinit");
}

/// The same with SIGINT, which the command gets as SIGINT (as from tini and
/// dumb-init), not as SIGTERM.
#[test]
fn a_command_that_ignores_sigint_is_killed_at_the_end_of_the_budget() {
    let got = killed_at_the_end_of_the_budget(SIGINT);
    assert_eq!(got.first(), Some(&SIGINT), "what the command got from podinit: {got:?}");
}

/// Sends `sig` to podinit and the peers, each running the signal printer;
/// checks that podinit SIGKILLs it at the end of the budget and that the
/// peers are still running then, their command having got `sig` once.
/// Returns the signals the command got from podinit.
fn killed_at_the_end_of_the_budget(sig: i32) -> Vec<i32> {
    let mut runs = Vec::new();
    for init in [Some(podinit()), tini(), dumb_init()].into_iter().flatten() {
        let td = TestDir::new();
        let mut run = init.run(&td, true, &strs(&printer(&td, ""))).deadline(secs(25.0)).spawn();
        run.wait_for_record("ready", secs(5.0));
        runs.push((init, td, run));
    }
    let sent = Instant::now();
    for (_, _, run) in runs.iter_mut() {
        run.signal(sig);
    }
    let mut peers = Vec::new();
    let mut podinit_run = None;
    for (init, td, run) in runs {
        if init.is_podinit() {
            podinit_run = Some((td, run));
        } else {
            peers.push((init, td, run));
        }
    }
    let (_td, run) = podinit_run.unwrap();
    let out = run.wait();
    let took = sent.elapsed();
    out.assert_code(128 + SIGKILL);
    assert!(took >= secs(5.0) && took < secs(12.0), "SIGKILL {took:?} after signal {sig}\n{}", out.report());
    for (init, td, mut run) in peers {
        confirm(&init, "still running when podinit's budget is spent", run.is_running(), true, &run.report());
        confirm(&init, "what the command got", printed(&td.records()), vec![sig], &run.report());
    }
    printed(&out.records)
}

/// Ctrl-C twice: the command catches SIGINT and goes on. tini and dumb-init
/// pass each SIGINT on and wait; podinit takes the second SIGINT as "stop
/// now" and spends the budget at once (docs/signals.md, "What podinit does
/// with a signal it receives"): SIGKILL and 137 well before the 7 s.
#[test]
fn a_second_sigint_spends_the_budget() {
    let mut runs = Vec::new();
    for init in [Some(podinit()), tini(), dumb_init()].into_iter().flatten() {
        let td = TestDir::new();
        let mut run = init.run(&td, true, &strs(&printer(&td, ""))).deadline(secs(25.0)).spawn();
        run.wait_for_record("ready", secs(5.0));
        runs.push((init, td, run));
    }
    let sent = Instant::now();
    for (_, _, run) in runs.iter_mut() {
        run.signal(SIGINT);
        run.wait_for_record(&format!("sig {SIGINT}"), secs(5.0));
        run.signal(SIGINT);
    }
    let mut podinit_run = None;
    for (init, td, mut run) in runs {
        if init.is_podinit() {
            podinit_run = Some((td, run));
            continue;
        }
        run.wait_for_record_n(&format!("sig {SIGINT}"), 2, secs(5.0));
        confirm(&init, "what the command got", printed(&td.records()), vec![SIGINT, SIGINT], &run.report());
        confirm(&init, "still running after two SIGINTs", run.is_running(), true, &run.report());
    }
    let (_td, run) = podinit_run.unwrap();
    let out = run.wait();
    let took = sent.elapsed();
    out.assert_code(128 + SIGKILL);
    assert!(
        took < secs(5.0),
        "SIGKILL {took:?} after the first SIGINT: the budget was not spent\n{}",
        out.report()
    );
}

/// SIGTSTP, SIGTTIN, SIGTTOU sent to the init, as PID 1 and not. podinit
/// blocks them and never takes them (docs/signals.md): it is not stopped,
/// and the command gets nothing. tini forwards SIGTSTP and ignores the other
/// two; dumb-init stops the command's group with SIGSTOP, then itself (which
/// the kernel does not let an init do as PID 1), until SIGCONT, which it
/// forwards.
#[test]
fn job_control_signals_neither_stop_podinit_nor_reach_the_command() {
    let stops = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU];
    for pid1 in [true, false] {
        // podinit: nothing reaches the command before the sentinel, nobody stops.
        let td = TestDir::new();
        let mut run = podinit().run(&td, pid1, &strs(&printer(&td, ""))).deadline(secs(20.0)).spawn();
        run.wait_for_record("ready", secs(5.0));
        let pid = run.podinit_pid();
        let child = children(pid)[0];
        for (i, &s) in stops.iter().enumerate() {
            run.signal(s);
            run.signal(SENTINEL);
            run.wait_for_record_n(&format!("sig {SENTINEL}"), i + 1, secs(5.0));
            let what = format!("PID 1: {pid1}, signal {s}");
            assert_eq!(printed(&td.records()), vec![SENTINEL; i + 1], "{what}\n{}", run.report());
            assert!(state(pid) != 'T' && state(child) != 'T', "{what}: stopped\n{}", run.report());
        }
        drop(run);

        if let Some(t) = tini() {
            let got = forwarded_by(&t, pid1, &stops);
            confirm(
                &t,
                &format!("PID 1: {pid1}, forwarded job control signals"),
                got,
                vec![libc::SIGTSTP],
                "",
            );
        }
        if let Some(d) = dumb_init() {
            let td = TestDir::new();
            let mut run = d.run(&td, pid1, &strs(&printer(&td, ""))).deadline(secs(20.0)).spawn();
            run.wait_for_record("ready", secs(5.0));
            let pid = run.podinit_pid();
            let child = children(pid)[0];
            // Stopped: the command, and dumb-init itself unless it is PID 1.
            for (i, &s) in stops.iter().enumerate() {
                run.signal(s);
                run.wait_until("the command stopped", secs(5.0), |_| state(child) == 'T');
                if pid1 {
                    // Nothing is to happen to dumb-init itself: let time pass, then look.
                    std::thread::sleep(secs(0.2));
                    confirm(&d, "PID 1, stopped itself", state(pid) == 'T', false, &run.report());
                } else {
                    run.wait_until("dumb-init stopped", secs(5.0), |_| state(pid) == 'T');
                }
                run.signal(libc::SIGCONT);
                run.wait_for_record_n(&format!("sig {}", libc::SIGCONT), i + 1, secs(5.0));
                let what = format!("PID 1: {pid1}, what the command got");
                confirm(&d, &what, printed(&td.records()), vec![libc::SIGCONT; i + 1], &run.report());
            }
        }
    }
}

// ===== working directory, stdin =====

/// The command starts in the directory the init was started in; the init
/// itself moves to `/`, as dumb-init does, so that it keeps no directory
/// (a mount) busy. tini stays where it was started. dumb-init moves after it
/// has started the command, so the command waits (2 s at most) for the move
/// before it records where the init is.
#[test]
fn the_command_keeps_the_working_directory_and_the_init_moves_to_root() {
    const SCRIPT: &str = r#"i=0; while [ "$(readlink /proc/$PPID/cwd)" != / ] && [ $i -lt 100 ]; do sleep 0.02; i=$((i+1)); done
readlink /proc/$PPID/cwd > "@DIR@/cwd"; readlink /proc/$$/cwd >> "@DIR@/cwd""#;
    if let Some(t) = tini() {
        let td = TestDir::new();
        let cmd = sh(&td, r#"readlink /proc/$PPID/cwd > "@DIR@/cwd"; readlink /proc/$$/cwd >> "@DIR@/cwd""#);
        let out = t.run(&td, true, &strs(&cmd)).deadline(secs(10.0)).run();
        let dir = fs::canonicalize(td.path()).unwrap().display().to_string();
        let got = fs::read_to_string(td.file("cwd")).unwrap();
        confirm(&t, "tini's cwd, then the command's", got, format!("{dir}\n{dir}\n"), &out.report());
    }
    // The peer first, so that its behaviour is confirmed whatever podinit does.
    let inits: Vec<Init> = [dumb_init(), Some(podinit())].into_iter().flatten().collect();
    for pid1 in [true, false] {
        for init in &inits {
            let td = TestDir::new();
            let cmd = sh(&td, SCRIPT);
            let out = init.run(&td, pid1, &strs(&cmd)).deadline(secs(10.0)).run();
            out.assert_code(0);
            let dir = fs::canonicalize(td.path()).unwrap().display().to_string();
            let got = fs::read_to_string(td.file("cwd")).unwrap();
            assert_eq!(
                got,
                format!("/\n{dir}\n"),
                "{} (PID 1: {pid1}): init's cwd, then the command's\n{}",
                init.name,
                out.report()
            );
        }
    }
}

#[test]
fn stdin_reaches_the_command() {
    let inits = all_three();
    for init in &inits {
        let td = TestDir::new();
        let out = init.run(&td, true, &["tac"]).stdin(b"1\n2\n3\n").deadline(secs(10.0)).run();
        assert_eq!(
            (out.code, out.stdout.as_str()),
            (Some(0), "3\n2\n1\n"),
            "{}\n{}",
            init.name,
            out.report()
        );
    }
}

// ===== command line =====

/// podinit and tini give the shell's numbers: 127 for a program that is not
/// found, 126 for one that cannot be executed (docs/signals.md, "Exit
/// statuses"); dumb-init exits 2 for both. Each names the program.
#[test]
fn a_command_that_cannot_be_run_gives_127_or_126() {
    let td = TestDir::new();
    let not_exec = td.write("not-executable", "#!/bin/sh\nexit 0\n");
    let not_exec = not_exec.to_str().unwrap();
    let cases = [("/doesnotexist", 127), (not_exec, 126)];
    let check = |init: &Init, path: &str| -> (Option<i32>, String) {
        let out = init.run(&td, false, &[path]).deadline(secs(10.0)).run();
        assert!(out.stderr.contains(path), "{}: the message names no {path}\n{}", init.name, out.report());
        (out.code, out.report())
    };
    for (path, code) in cases {
        let (got, report) = check(&podinit(), path);
        assert_eq!(got, Some(code), "podinit: {path}\n{report}");
        if let Some(t) = tini() {
            let (got, report) = check(&t, path);
            confirm(&t, path, got, Some(code), &report);
        }
        if let Some(d) = dumb_init() {
            let (got, report) = check(&d, path);
            confirm(&d, path, got, Some(2), &report);
        }
    }
}

/// No command, an unknown option, `-e` (tini's exit status remapping),
/// `-h`, and a command without `--`. podinit exits 2 on a usage error
/// (docs/signals.md, "Exit statuses"), the peers 1; neither runs anything.
/// podinit takes its command only after `--`, because a first word could be
/// one of its subcommands (`check`, `status`...); tini and dumb-init take it
/// without. podinit has no exit status remapping.
#[test]
fn usage_errors_help_and_the_double_dash() {
    let td = TestDir::new();
    let marker = td.file("ran");
    let marker_s = marker.to_str().unwrap();
    let bare = |init: &Init, args: &[&str]| -> (Option<i32>, String, String) {
        // The prefix (`--`) is what these cases are about: start from none.
        let init = Init { pre: Vec::new(), ..init.clone() };
        let out = init.run(&td, false, args).deadline(secs(10.0)).run();
        (out.code, out.stderr.clone(), out.report())
    };
    type Case<'a> = (&'a str, Vec<&'a str>, Option<i32>, Option<i32>, Option<i32>);
    // (what, args, podinit, tini, dumb-init)
    let cases: Vec<Case> = vec![
        ("no command", vec![], Some(2), Some(1), Some(1)),
        ("an unknown option", vec!["--bogus", "--", "touch", marker_s], Some(2), Some(1), Some(1)),
        ("-h", vec!["-h"], Some(0), Some(0), Some(0)),
    ];
    for (what, args, want_podinit, want_tini, want_dumb) in cases {
        let (code, stderr, report) = bare(&podinit(), &args);
        assert_eq!(code, want_podinit, "podinit, {what}\n{report}");
        if code != Some(0) {
            assert!(stderr.contains("Usage"), "podinit, {what}: no usage\n{report}");
        }
        for (peer, want) in [(tini(), want_tini), (dumb_init(), want_dumb)] {
            if let Some(p) = peer {
                let (code, _, report) = bare(&p, &args);
                confirm(&p, what, code, want, &report);
            }
        }
        assert!(!marker.exists(), "{what}: the command ran");
    }
    // A command without `--`.
    let (code, _, report) = bare(&podinit(), &["touch", marker_s]);
    assert_eq!(code, Some(2), "podinit, a command without --\n{report}");
    assert!(!marker.exists(), "podinit ran a command given without --");
    for p in [tini(), dumb_init()].into_iter().flatten() {
        let (code, _, report) = bare(&p, &["touch", marker_s]);
        confirm(&p, "a command without --", code, Some(0), &report);
        confirm(&p, "the command ran", marker.exists(), true, &report);
        fs::remove_file(&marker).unwrap();
    }
    // tini -e 143 maps the command's 143 to 0; podinit refuses -e.
    let (code, _, report) = bare(&podinit(), &["-e", "143", "--", "sh", "-c", "exit 143"]);
    assert_eq!(code, Some(2), "podinit -e\n{report}");
    if let Some(t) = tini() {
        let (code, _, report) = bare(&t, &["-e", "143", "--", "sh", "-c", "exit 143"]);
        confirm(&t, "-e 143", code, Some(0), &report);
    }
    if let Some(d) = dumb_init() {
        let (code, _, report) = bare(&d, &["-e", "143", "--", "sh", "-c", "exit 143"]);
        confirm(&d, "-e 143 (an unknown option)", code, Some(1), &report);
    }
}

// ===== the child's signal state =====

/// Ignores SIGINT, SIGTTOU and SIGUSR2 and blocks SIGTERM, SIGTTIN and
/// SIGUSR1 (tini's sigconf-test picks from the same kinds: one the init
/// forwards, one it handles itself, one it leaves alone), then execs its
/// arguments.
const SIGCONF: &str = r#"
import os, signal, sys
for s in (signal.SIGINT, signal.SIGTTOU, signal.SIGUSR2):
    signal.signal(s, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGTTIN, signal.SIGUSR1])
os.execvp(sys.argv[1], sys.argv[1:])
"#;

/// (SigBlk, SigIgn) from `grep -E '^Sig(Blk|Ign):' /proc/self/status`.
fn masks(text: &str) -> (u64, u64) {
    let field = |key: &str| -> u64 {
        let v =
            text.lines().find_map(|l| l.strip_prefix(key)).unwrap_or_else(|| panic!("no {key} in {text:?}"));
        u64::from_str_radix(v.trim(), 16).unwrap()
    };
    (field("SigBlk:"), field("SigIgn:"))
}

/// The standard signals 1 to 31 of a mask.
const STANDARD: u64 = 0x7fff_ffff;

/// The command's SigBlk and SigIgn when the init inherited an odd signal
/// state. tini hands its own inherited state on to the command; podinit starts
/// every child with default dispositions and an empty mask whatever it
/// inherited (docs/signals.md, "How children start"), as dumb-init does for
/// the standard signals (it leaves the C library's 32 and 33 as it got them,
/// and a test runner's `posix_spawn` hands them down ignored).
#[test]
fn the_command_starts_with_a_clean_signal_state() {
    let td = TestDir::new();
    let conf = td.write("sigconf.py", SIGCONF);
    let grep = ["grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status"];
    // What the odd state is, with no init in between.
    let mut direct = Command::new(python());
    direct.arg(&conf).args(grep);
    let out = run_with_deadline(&mut direct, secs(10.0));
    assert_eq!(out.code, Some(0), "{out:?}");
    let inherited = masks(&out.stdout);
    let odd = |sig: i32| 1u64 << (sig - 1);
    let want_blk = odd(libc::SIGTERM) | odd(libc::SIGTTIN) | odd(libc::SIGUSR1);
    let want_ign = odd(libc::SIGINT) | odd(libc::SIGTTOU) | odd(libc::SIGUSR2);
    assert_eq!(inherited.0 & want_blk, want_blk, "the wrapper blocked nothing: {inherited:x?}");
    assert_eq!(inherited.1 & want_ign, want_ign, "the wrapper ignored nothing: {inherited:x?}");

    let masks_under = |init: &Init| -> (u64, u64) {
        let out_path = td.file(&format!("{}.status", init.name));
        let out = fs::File::create(&out_path).unwrap();
        let wrapper = [python(), conf.to_str().unwrap()];
        let bare = init.run(&td, true, &grep).deadline(secs(10.0)).spawn_wrapped(&wrapper, |c| {
            c.stdin(Stdio::null()).stdout(out).stderr(Stdio::null());
        });
        let exit = bare.wait();
        assert_eq!(exit.code, Some(0), "{}: {exit:?}", init.name);
        masks(&fs::read_to_string(&out_path).unwrap())
    };
    assert_eq!(masks_under(&podinit()), (0, 0), "podinit passed its inherited signal state on");
    if let Some(t) = tini() {
        confirm(&t, "the command's signal state", masks_under(&t), inherited, "");
    }
    if let Some(d) = dumb_init() {
        let (blk, ign) = masks_under(&d);
        confirm(&d, "the command's standard signal state", (blk & STANDARD, ign & STANDARD), (0, 0), "");
    }
}
