//! The edges of being PID 1 where an init can wedge or misbehave: deaths by
//! any signal (real-time ones included), real-time stop signals, a crash loop
//! with no backoff, children that must start clean, command lines that are not
//! UTF-8, signals podinit does not act on itself, and a stderr nobody reads.
//! Every test runs the real binary as PID 1 of a fresh PID namespace.

mod common;

use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

/// Signals whose default action does not end a process (ignore or stop).
const NOT_FATAL: [i32; 8] = [17, 18, 19, 20, 21, 22, 23, 28];

fn fatal_signals() -> impl Iterator<Item = i32> {
    (1..=64).filter(|s| !NOT_FATAL.contains(s))
}

/// The script of a main that kills itself with signal `n` (no core file).
fn dies_of(n: i32) -> String {
    format!("ulimit -c 0; kill -{n} $$; sleep 5")
}

fn killed_by_each_of(signals: impl Iterator<Item = i32>) {
    let td = TestDir::new();
    for n in signals {
        let out = td.podinit().deadline(secs(10.0)).args(["--", "sh", "-c", &dies_of(n)]).run();
        assert_eq!(out.code, Some(128 + n), "plain init, signal {n}\n{}", out.report());
        assert!(out.elapsed < secs(5.0), "plain init, signal {n}: took {:?}", out.elapsed);

        let cfg = td.config(&format!(
            "[pod]\ntermination_grace_period = \"2s\"\n\n{}",
            entry("app", "main", &dies_of(n), "")
        ));
        let out = td.podinit().deadline(secs(10.0)).config(&cfg).run();
        assert_eq!(out.code, Some(128 + n), "config, signal {n}\n{}", out.report());
        assert!(out.elapsed < secs(5.0), "config, signal {n}: took {:?}", out.elapsed);
    }
}

#[test]
fn a_main_killed_by_any_standard_fatal_signal_gives_128_plus_n_as_plain_init_and_with_a_config() {
    killed_by_each_of(fatal_signals().filter(|&n| n < 32));
}

#[test]
fn a_main_killed_by_any_real_time_signal_gives_128_plus_n_as_plain_init_and_with_a_config() {
    killed_by_each_of(fatal_signals().filter(|&n| n >= 32));
}

#[test]
fn an_orphan_killed_by_a_real_time_signal_is_reaped_and_exec_probes_go_on() {
    let td = TestDir::new();
    // The subshell's child is orphaned at once and reparented to podinit;
    // then it kills itself with SIGRTMIN+2 (36).
    let main = r#"( sh -c 'echo "orphan $$" >> "@REC@"; sleep 0.3; kill -36 $$' & )
echo "start app" >> "@REC@"
trap 'exit 0' TERM
while :; do sleep 0.05; done"#;
    let probe = r#"liveness_probe = { exec = { command = ["sh", "-c", "echo probe >> @REC@"] }, period = "100ms", timeout = "500ms", failure_threshold = 1 }"#;
    let cfg = td.config(&format!(
        "[pod]\ntermination_grace_period = \"2s\"\n\n{}",
        entry("app", "main", main, probe)
    ));
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record("start app", secs(5.0));
    let orphan_line = || td.records().into_iter().find(|l| l.starts_with("orphan "));
    run.wait_until("the orphan to start", secs(5.0), |_| orphan_line().is_some());
    // The orphan dies 0.3 s after it started; let several probe attempts
    // pass after that. Each of them must be reaped for the next to succeed.
    let probes_then = count(&td.records(), "probe");
    run.wait_until("10 more probe attempts", secs(10.0), |_| {
        count(&td.records(), "probe") >= probes_then + 10
    });
    let podinit = run.podinit_pid();
    // A zombie for the moment between an exit and its wait is normal (the
    // main's `sleep`s, the probe attempts); one that stays is not reaped.
    let zombies = lingering_zombies(podinit, secs(1.0));
    assert!(zombies.is_empty(), "zombies left: {zombies:?}\n{}", run.report());
    run.signal(SIGTERM);
    let out = run.wait();
    assert!(
        !out.stderr.contains("liveness probe failed"),
        "a probe attempt was not reaped\n{}",
        out.report()
    );
    assert!(!out.stderr.contains("SIGKILL"), "{}", out.report());
    out.assert_code(0);
}

#[test]
fn a_real_time_stop_signal_by_name_or_number_reaches_the_process() {
    for (given, number) in [("\"SIGRTMIN+1\"", 35), ("36", 36), ("\"SIGRTMAX\"", 64)] {
        let td = TestDir::new();
        let script = format!(
            r#"trap 'echo "got {number}" >> "@REC@"; exit 0' {number}
echo "start app" >> "@REC@"
while :; do sleep 0.05; done"#
        );
        let cfg = td.config(&format!(
            "[pod]\ntermination_grace_period = \"10s\"\n\n{}",
            entry("app", "main", &script, &format!("stop_signal = {given}"))
        ));
        let mut run = td.podinit().config(&cfg).spawn();
        run.wait_for_record("start app", secs(5.0));
        let sent = Instant::now();
        run.signal(SIGTERM);
        let out = run.wait();
        assert!(
            out.records.contains(&format!("got {number}")),
            "stop_signal {given} not delivered\n{}",
            out.report()
        );
        out.assert_code(0);
        assert!(sent.elapsed() < secs(5.0), "stop_signal {given}: waited for SIGKILL? {:?}", sent.elapsed());
    }
}

#[test]
fn zero_backoff_and_an_unstartable_main_under_always_still_answer_sigterm_and_log_little() {
    let td = TestDir::new();
    let cfg = td.config(
        r#"[pod]
restart_policy = "Always"
termination_grace_period = "2s"
backoff = { initial = "0s", max = "0s" }

[[process]]
name = "app"
command = ["/nonexistent/program"]
"#,
    );
    let mut run = td.podinit().deadline(secs(15.0)).config(&cfg).spawn();
    run.wait_for_stderr_containing("cannot run", secs(5.0));
    // Let the crash loop spin for a while: nothing is waited for here.
    std::thread::sleep(Duration::from_secs(1));
    let sent = Instant::now();
    run.signal(SIGTERM);
    let out = run.wait();
    let answered = sent.elapsed();
    assert!(answered < secs(2.0), "SIGTERM answered after {answered:?}\n{}", out.report());
    out.assert_code(127);
    let lines = out.stderr.lines().count();
    assert!(lines < 200, "{lines} log lines for one crash loop\n{}", out.report());
    assert!(out.stderr.contains("times in a row"), "{}", out.report());
}

/// A shell command that writes its own SigIgn and SigBlk lines to `file`.
fn masks_to(file: &str) -> String {
    format!("exec grep -E '^Sig(Ign|Blk)' /proc/self/status > {file}")
}

fn assert_clean(td: &TestDir, file: &str, who: &str) {
    let text = std::fs::read_to_string(td.file(file)).unwrap_or_else(|e| panic!("{who}: no {file}: {e}"));
    let want = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n";
    assert_eq!(text, want, "{who} did not start with default dispositions and an empty mask");
}

fn children_start_clean(bin: Option<&std::path::Path>, build: &str) {
    let td = TestDir::new();
    // No control run from here: whatever this test process inherited (a
    // signal ignored by an earlier posix_spawn, say) podinit must not pass on.
    let sh = |file: &str| format!(r#"["sh", "-c", "{}"]"#, masks_to(&td.file(file).display().to_string()));
    let cfg = td.config(&format!(
        r#"[pod]
termination_grace_period = "2s"

[[process]]
name = "plain"
role = "sidecar"
command = {plain}
post_start = {{ exec = {{ command = {hook} }} }}
startup_probe = {{ exec = {{ command = {probe} }}, period = "50ms" }}

[[process]]
name = "nnp"
role = "sidecar"
no_new_privileges = true
command = {nnp}

[[process]]
name = "app"
command = ["sh", "-c", "sleep 0.3"]
"#,
        plain = format!(r#"["sh", "-c", "{}; sleep 30"]"#, masks_to(&td.file("entry").display().to_string()))
            .replace("exec grep", "grep"),
        hook = sh("hook"),
        probe = sh("probe"),
        nnp = sh("nnp"),
    ));
    let launch = |l: Launcher| match bin {
        Some(b) => l.binary(b),
        None => l,
    };
    let out = launch(td.podinit()).config(&cfg).run();
    out.assert_code(0);
    for (file, who) in [
        ("entry", "an entry"),
        ("hook", "a post_start hook"),
        ("probe", "an exec probe"),
        ("nnp", "an entry with no_new_privileges"),
    ] {
        assert_clean(&td, file, &format!("{build}: {who}"));
    }
    let plain_file = td.file("plain-init");
    let out = launch(td.podinit()).args(["--", "sh", "-c", &masks_to(plain_file.to_str().unwrap())]).run();
    out.assert_code(0);
    assert_clean(&td, "plain-init", &format!("{build}: a plain init's command"));
}

#[test]
fn every_child_starts_with_default_dispositions_and_an_empty_mask_glibc_build() {
    children_start_clean(None, "the glibc build");
}

#[test]
#[ignore = "needs the static musl build: run with --include-ignored (bash .ci/run does)"]
fn every_child_starts_with_default_dispositions_and_an_empty_mask_musl_build() {
    children_start_clean(Some(&musl_binary()), "the musl build");
}

#[test]
fn a_command_line_and_an_environment_that_are_not_utf8_reach_the_main_byte_for_byte() {
    let td = TestDir::new();
    let arg = std::ffi::OsStr::from_bytes(b"caf\xe9 \xff\xfe");
    let value = std::ffi::OsStr::from_bytes(b"\xc3\x28 bytes");
    let script = format!("printf '%s|%s' \"$1\" \"$PODINIT_TEST_BYTES\" > {}", td.file("got").display());
    let out = td
        .podinit()
        .env("PODINIT_TEST_BYTES", value)
        .args([std::ffi::OsStr::new("--"), "sh".as_ref(), "-c".as_ref(), script.as_ref(), "sh".as_ref(), arg])
        .run();
    out.assert_code(0);
    let got = std::fs::read(td.file("got")).unwrap();
    assert_eq!(got, b"caf\xe9 \xff\xfe|\xc3\x28 bytes", "{}", out.report());
}

#[test]
fn signals_podinit_does_not_act_on_are_forwarded_to_the_main_and_sigterm_still_terminates() {
    let td = TestDir::new();
    // 30 SIGPWR, 37 SIGRTMIN+3, 14 SIGALRM, 10 SIGUSR1.
    let script = r#"for s in 30 37 14 10; do trap "echo got $s >> @REC@" $s; done
trap 'echo "stop app" >> "@REC@"; exit 0' TERM
echo "start app" >> "@REC@"
while :; do sleep 0.05; done"#;
    let script = td.expand(script);
    let mut run = td.podinit().args(["--", "sh", "-c", &script]).spawn();
    run.wait_for_record("start app", secs(5.0));
    for s in [30, 37, 14, 10] {
        run.signal(s);
        run.wait_for_record(&format!("got {s}"), secs(5.0));
    }
    run.signal(SIGTERM);
    let out = run.wait();
    assert!(out.records.contains(&"stop app".to_string()), "{}", out.report());
    out.assert_code(0);
}

/// A pipe whose write end is full: any further write to it blocks.
fn full_pipe() -> (OwnedFd, OwnedFd) {
    use nix::fcntl::{fcntl, FcntlArg, OFlag};
    let (read, write) = nix::unistd::pipe().expect("pipe");
    fcntl(write.as_raw_fd(), FcntlArg::F_SETFL(OFlag::O_NONBLOCK)).unwrap();
    let chunk = [b'x'; 4096];
    while nix::unistd::write(&write, &chunk).is_ok() {}
    // Blocking again: podinit shares this open file and must see it block.
    fcntl(write.as_raw_fd(), FcntlArg::F_SETFL(OFlag::empty())).unwrap();
    (read, write)
}

#[test]
fn a_stderr_nobody_reads_does_not_keep_the_pod_from_stopping_on_sigterm() {
    let td = TestDir::new();
    // A main that writes nothing to stderr itself (a shell would report its
    // child's death there, and block on it like anyone else).
    let main = td.expand(r#"echo "start app" >> "@REC@"; exec sleep 100"#);
    let cfg = td.config(&format!(
        "[pod]\ntermination_grace_period = \"2s\"\n\n{}{}",
        entry("side", "sidecar", &sleeper_up("side"), &up_probe("side")),
        entry("app", "main", &format!("echo to-stderr >&2\n{main}"), "")
    ));
    let plain = ["--".to_string(), "sh".into(), "-c".into(), main.clone()];
    let with_config = ["--config".to_string(), cfg.display().to_string()];
    for (what, args) in [("plain init", &plain[..]), ("a config", &with_config[..])] {
        std::fs::write(td.rec(), "").unwrap();
        let (read_end, write_end) = full_pipe();
        let mut run = td.podinit().env("PODINIT_LOG", "debug").args(args).spawn_custom(|cmd| {
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::from(write_end));
        });
        run.wait_for_record_n("start app", 1, secs(5.0));
        let sent = Instant::now();
        run.signal(SIGTERM);
        let exit = run.wait();
        let took = sent.elapsed();
        drop(read_end);
        // 2 s of grace, then at most 2 s for output that cannot be written.
        assert!(took < secs(6.0), "{what}: exit {:?} after {took:?}", exit.code);
        assert_eq!(exit.code, Some(128 + SIGTERM), "{what}: {exit:?}");
    }
}

#[test]
fn podinit_passing_its_own_file_size_limit_neither_dies_nor_kills_a_main() {
    let td = TestDir::new();
    let noisy = "i=0; while [ $i -lt 200 ]; do echo 0123456789012345678901234567890123456789 >&2; i=$((i+1)); done\nsleep 0.3\nexit 3";
    let cfg = td
        .config(&format!("[pod]\ntermination_grace_period = \"2s\"\n\n{}", entry("app", "main", noisy, "")));
    let log = td.file("stderr.log");
    let file = std::fs::File::create(&log).unwrap();
    // podinit's stderr is a regular file limited to 512 bytes: its writes past
    // that get SIGXFSZ from the kernel.
    let run = td
        .podinit()
        .config(&cfg)
        .spawn_wrapped(&["sh", "-c", "ulimit -f 1; exec \"$@\"", "sh"], |cmd| {
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::from(file));
        })
        .log(&log);
    let exit = run.wait();
    assert_eq!(exit.code, Some(3), "the main's own status, not 128 + SIGXFSZ (153): {exit:?}");
}

#[test]
fn a_flood_of_queued_real_time_signals_does_not_hold_up_the_end_of_the_pod() {
    // Real-time signals queue (up to RLIMIT_SIGPENDING of them), and whoever
    // takes them is busy for as long as the queue takes to drain: a podinit
    // whose event loop ran their handlers made no progress for as long as a
    // flood lasted, and for seconds to minutes after (tini, which reads its
    // signals with sigtimedwait, does not stall). The
    // sender here goes on until podinit is gone, so the pod must end while
    // the flood goes on. podinit's queue is capped at 40,000: the limit counts
    // every process of the user, and the tests beside this one send signals.
    let td = TestDir::new();
    let main =
        td.expand(r#"trap "" $(seq 35 64); echo "start app" >> "@REC@"; sleep 1; echo "end app" >> "@REC@""#);
    let log = td.file("podinit.log");
    let stderr = std::fs::File::create(&log).unwrap();
    let launcher = td.podinit().deadline(secs(120.0)).args(["--", "sh", "-c", &main]);
    let run = launcher.spawn_custom(|cmd| {
        use std::os::unix::process::CommandExt;
        cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(stderr);
        // SAFETY: setrlimit only, between fork and exec of the test's child.
        unsafe {
            cmd.pre_exec(|| {
                nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_SIGPENDING, 40_000, 40_000)
                    .map_err(std::io::Error::from)
            });
        }
    });
    let mut run = run.log(&log);
    run.wait_for_record_n("start app", 1, secs(5.0));
    let pid = run.podinit_pid();
    let flooding = Instant::now();
    let (mut sent, mut most_queued, mut main_ended) = (0u64, 0u64, None);
    'flood: while flooding.elapsed() < secs(30.0) {
        for _ in 0..100 {
            for sig in 35..=64 {
                // EAGAIN once the queue is full; ESRCH once podinit is gone.
                if send_signal(pid, sig) {
                    sent += 1;
                } else if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
                    break 'flood;
                }
            }
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let queued =
            status.lines().find_map(|l| l.strip_prefix("SigQ:")?.trim().split('/').next()?.parse().ok());
        most_queued = most_queued.max(queued.unwrap_or(0));
        if main_ended.is_none() && td.records().contains(&"end app".to_string()) {
            main_ended = Some(Instant::now());
        }
    }
    let flood_over = Instant::now();
    let exit = run.wait();
    // podinit may be gone before the loop looked at the records again.
    let main_ended = main_ended
        .or_else(|| td.records().contains(&"end app".to_string()).then_some(flood_over))
        .unwrap_or_else(|| panic!("the main never ended: {exit:?}, {:?}", td.records()));
    let after = flood_over - main_ended;
    assert_eq!(exit.code, Some(0), "{exit:?} after {sent} signals (up to {most_queued} queued)");
    assert!(most_queued > 1000, "the flood never queued: {sent} signals sent, up to {most_queued} queued");
    // Generous: podinit ends the pod within milliseconds of the main.
    assert!(
        after < secs(10.0),
        "podinit was still there {after:?} after the main ended, inside a flood of {sent} signals (up to {most_queued} queued)"
    );
}

/// Each thread of `pid`: its name, its blocked-signal mask (SigBlk) and the
/// signals with a handler (SigCgt, the same for every thread of a process).
fn thread_masks(pid: i32) -> Vec<(String, u64, u64)> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap().flatten() {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let mask = |key: &str| {
            let hex = status.lines().find_map(|l| l.strip_prefix(key)).map(str::trim).unwrap_or("");
            u64::from_str_radix(hex, 16).unwrap_or(0)
        };
        threads.push((comm.trim().to_owned(), mask("SigBlk:"), mask("SigCgt:")));
    }
    threads
}

/// podinit installs no handler for a signal it catches: every other thread
/// blocks them all, and the signal thread takes them off the queue
/// (sigwaitinfo).
/// So no thread's own work is ever interrupted by one, whatever threads the
/// pod starts, and a flood only keeps the signal thread busy.
#[test]
fn every_thread_blocks_the_caught_signals_and_none_has_a_handler() {
    let td = TestDir::new();
    // Output lanes (prefixed output), exec probes, the status socket and the
    // HTTP endpoint: every thread podinit starts for them.
    let cfg = td.config(&format!(
        "[pod]\nhttp = \"127.0.0.1:{}\"\n\n{}{}",
        free_port(),
        entry(
            "side",
            "sidecar",
            &format!("echo out; echo err >&2\n{}", sleeper_up("side")),
            &up_probe("side")
        ),
        entry("app", "main", "echo \"start app\" >> \"@REC@\"; echo hi; exec sleep 100", "")
    ));
    let mut run = td.podinit().config(&cfg).spawn();
    run.wait_for_record("start app", secs(10.0));
    let pid = run.podinit_pid();
    let threads = thread_masks(pid);
    // SIGHUP, SIGTERM, SIGCHLD, SIGRTMIN+3 and SIGRTMAX: some of the caught ones.
    let caught: u64 = [1, 15, 17, 37, 64].iter().map(|s| 1u64 << (s - 1)).sum();
    // The signal thread itself shows an empty SigBlk while it waits: the
    // kernel unblocks the waited-for set for the length of the sigwaitinfo
    // call (and keeps the real mask aside, so a signal it takes there is
    // never acted on by default).
    let takers: Vec<&(String, u64, u64)> =
        threads.iter().filter(|(name, m, _)| name != "podinit-signals" && m & caught != caught).collect();
    assert!(takers.is_empty(), "threads that can take a caught signal: {takers:x?} (all: {threads:x?})");
    // Under an emulator (PODINIT_TEST_RUNNER, qemu-user) the kernel sees the
    // emulator's own handlers, which catch every signal for the guest: only
    // a native run can show podinit's.
    if !matches!(std::env::var_os("PODINIT_TEST_RUNNER"), Some(r) if !r.is_empty()) {
        let handled: Vec<&(String, u64, u64)> = threads.iter().filter(|(_, _, c)| c & caught != 0).collect();
        assert!(handled.is_empty(), "caught signals with a handler: {handled:x?}");
    }
    assert!(threads.iter().any(|(name, _, _)| name == "podinit-signals"), "no signal thread: {threads:x?}");
    assert!(threads.len() >= 3, "expected output lane threads as well: {threads:x?}");
    run.signal(SIGTERM);
    let out = run.wait();
    out.assert_code(128 + SIGTERM);
}

/// A plain init (`podinit -- cmd`, no config, no status socket named) runs on
/// one thread, which blocks every signal it catches and installs no handler:
/// it takes them itself with sigtimedwait, as tini does. Then it still
/// forwards a signal to the main and ends with the main's status.
#[test]
fn a_plain_init_is_one_thread_that_blocks_what_it_catches() {
    let td = TestDir::new();
    let main = td.expand(r#"trap 'echo "got HUP" >> "@REC@"; exit 5' HUP; echo "start app" >> "@REC@"; while :; do sleep 0.05; done"#);
    let mut run = td.podinit().args(["--", "sh", "-c", &main]).spawn();
    run.wait_for_record("start app", secs(10.0));
    let pid = run.podinit_pid();
    // Under an emulator (PODINIT_TEST_RUNNER, qemu-user) the kernel sees the
    // emulator's threads, masks and handlers, not podinit's.
    if !matches!(std::env::var_os("PODINIT_TEST_RUNNER"), Some(r) if !r.is_empty()) {
        let threads = thread_masks(pid);
        assert_eq!(threads.len(), 1, "a plain init has one thread: {threads:x?}");
        let caught: u64 = [1, 15, 17, 37, 64].iter().map(|s| 1u64 << (s - 1)).sum();
        let (_, blocked, handled) = threads[0];
        assert_eq!(handled & caught, 0, "caught signals with a handler: {threads:x?}");
        // While the thread waits in sigtimedwait the kernel shows the caught
        // set unblocked (the real mask is kept aside); what stays is what
        // podinit blocks and never takes: its own stops and limits.
        let stops: u64 = [libc::SIGTSTP, libc::SIGTTIN, libc::SIGTTOU, libc::SIGXCPU, libc::SIGXFSZ]
            .iter()
            .map(|s| 1u64 << (s - 1))
            .sum();
        assert_eq!(blocked & stops, stops, "stops and limits not blocked: {threads:x?}");
    }
    run.signal(libc::SIGHUP);
    let out = run.wait();
    out.assert_code(5);
    assert!(out.records.contains(&"got HUP".to_string()), "{}", out.report());
}

/// A caught signal that podinit's parent left blocked and pending is taken
/// by podinit once it runs. It was lost as PID 1 (podinit emptied its mask
/// before blocking what it catches, so the kernel dropped the SIGTERM as one
/// with the default action, and the main ran to its end), and not as PID 1
/// it killed podinit before the main started.
#[test]
fn a_signal_the_parent_left_pending_is_taken_not_lost() {
    for pid1 in [true, false] {
        let td = TestDir::new();
        let cfg = td.config(&entry("app", "main", "echo \"start app\" >> \"@REC@\"; exec sleep 30", ""));
        let launcher = if pid1 { td.podinit() } else { td.podinit_not_pid1() };
        let block_and_raise = "import os, signal, sys\n\
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n\
            os.kill(os.getpid(), signal.SIGTERM)\n\
            os.execv(sys.argv[1], sys.argv[1:])";
        let started = Instant::now();
        let run = launcher.deadline(secs(60.0)).config(&cfg).spawn_wrapped(
            &[python(), "-c", block_and_raise],
            |cmd| {
                cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::null());
            },
        );
        let exit = run.wait();
        let took = started.elapsed();
        // Generous: the main sleeps 30 s unless the SIGTERM reaches it.
        assert!(took < secs(15.0), "pid1 {pid1}: the pending SIGTERM was lost: {exit:?} after {took:?}");
        assert_eq!(exit.code, Some(128 + libc::SIGTERM), "pid1 {pid1}: {exit:?} after {took:?}");
    }
}

/// Where `pid` runs (its working directory), from /proc.
fn cwd_of(pid: i32) -> Option<std::path::PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/cwd")).ok()
}

/// podinit does not keep the directory it was started in busy: once it has
/// started its first processes it moves to `/`, as dumb-init does, while every
/// process it starts, the first and the restarted ones, still starts there
/// (and an entry's relative `working_dir` is taken from there).
#[test]
fn podinit_moves_to_the_root_but_starts_every_process_in_its_start_directory() {
    let td = TestDir::new();
    let start = td.path().canonicalize().unwrap();
    std::fs::create_dir(td.file("sub")).unwrap();
    for pid1 in [true, false] {
        // A plain init.
        let launcher = if pid1 { td.podinit() } else { td.podinit_not_pid1() };
        let mut run = launcher
            .args([
                "--",
                "sh",
                "-c",
                &td.expand("pwd >> \"@DIR@/plain.cwd\"; echo started >> \"@REC@\"; exec sleep 30"),
            ])
            .spawn();
        run.wait_for_record("started", secs(10.0));
        let pid = run.podinit_pid();
        run.wait_until("podinit to move to /", secs(5.0), |_| {
            cwd_of(pid).as_deref() == Some(std::path::Path::new("/"))
        });
        run.signal(libc::SIGTERM);
        run.wait().assert_code(143);
        let said = std::fs::read_to_string(td.file("plain.cwd")).unwrap();
        assert_eq!(said.trim(), start.to_str().unwrap(), "pid1 {pid1}");
        std::fs::remove_file(td.file("plain.cwd")).unwrap();
        std::fs::remove_file(td.rec()).unwrap();

        // A pod: a sidecar that exits once and is started again after podinit
        // has moved, and an entry with a relative working_dir.
        let cfg = td.config(&format!(
            "{}{}",
            entry(
                "side",
                "sidecar",
                "pwd >> \"@DIR@/side.cwd\"; echo start side >> \"@REC@\"\n\
                 if [ ! -f \"@DIR@/side.again\" ]; then : > \"@DIR@/side.again\"; sleep 0.5; exit 1; fi\nexec sleep 30",
                "",
            ),
            entry("app", "main", "pwd > \"@DIR@/app.cwd\"; echo start app >> \"@REC@\"; exec sleep 30", "working_dir = \"sub\""),
        ));
        let launcher = if pid1 { td.podinit() } else { td.podinit_not_pid1() };
        let mut run = launcher.config(&cfg).spawn();
        run.wait_for_record_n("start side", 2, secs(15.0));
        run.wait_for_record("start app", secs(10.0));
        let pid = run.podinit_pid();
        run.wait_until("podinit to move to /", secs(5.0), |_| {
            cwd_of(pid).as_deref() == Some(std::path::Path::new("/"))
        });
        run.signal(libc::SIGTERM);
        run.wait();
        let side = std::fs::read_to_string(td.file("side.cwd")).unwrap();
        assert_eq!(
            side.lines().collect::<Vec<_>>(),
            [start.to_str().unwrap(); 2],
            "pid1 {pid1}: first and restarted"
        );
        let app = std::fs::read_to_string(td.file("app.cwd")).unwrap();
        assert_eq!(app.trim(), start.join("sub").to_str().unwrap(), "pid1 {pid1}");
        for f in ["side.cwd", "side.again", "app.cwd"] {
            std::fs::remove_file(td.file(f)).unwrap();
        }
        std::fs::remove_file(td.rec()).unwrap();
    }
}

/// Not PID 1 (a subreaper under `docker run --init`, systemd or a shell),
/// podinit's death does not leave what it started running: each process it
/// started gets SIGKILL from the kernel when podinit dies (PR_SET_PDEATHSIG).
/// A SIGSEGV sent with kill(1) is what killed podinit in the case seen (the
/// runtime's fault handler swallows the first one); SIGKILL is the other way
/// a subreaper dies without a word.
#[test]
fn not_pid1_what_podinit_started_dies_with_it() {
    let td = TestDir::new();
    for (how, sig) in [("SIGKILL", libc::SIGKILL), ("SIGSEGV", libc::SIGSEGV)] {
        let cfg = td.config(&format!(
            "{}{}",
            entry(
                "side",
                "sidecar",
                "echo $$ > \"@DIR@/side.pid\"; echo start side >> \"@REC@\"; exec sleep 60",
                ""
            ),
            entry(
                "app",
                "main",
                "echo $$ > \"@DIR@/app.pid\"; echo start app >> \"@REC@\"; exec sleep 60",
                ""
            ),
        ));
        let mut run = td.podinit_not_pid1().config(&cfg).spawn();
        // side holds the sequence only until started (no probe): the two
        // shells write their pid files in either order.
        run.wait_for_record("start side", secs(10.0));
        run.wait_for_record("start app", secs(10.0));
        let pids: Vec<i32> = ["side.pid", "app.pid"]
            .iter()
            .map(|f| std::fs::read_to_string(td.file(f)).unwrap().trim().parse().unwrap())
            .collect();
        // Until podinit is gone: a SIGSEGV from kill may be taken by its
        // fault handler once.
        let pid = run.podinit_pid();
        run.wait_until(&format!("podinit to die of {how}"), secs(10.0), |_| {
            let alive = proc_state(pid).is_some_and(|(state, _)| state != 'Z');
            if alive {
                send_signal(pid, sig);
                std::thread::sleep(Duration::from_millis(20));
            }
            !alive
        });
        run.wait();
        for p in pids {
            let deadline = Instant::now() + secs(10.0);
            while proc_state(p).is_some_and(|(state, _)| state != 'Z') {
                assert!(Instant::now() < deadline, "{how}: pid {p} ({}) outlived podinit", comm(p));
                std::thread::yield_now();
            }
        }
        for f in ["side.pid", "app.pid"] {
            std::fs::remove_file(td.file(f)).unwrap();
        }
        std::fs::remove_file(td.rec()).unwrap();
    }
}

/// A SIGTERM and then one SIGINT is not "a second SIGINT": the grace is not
/// cut (the main drains for 3 s and exits 0; a SIGINT taken as the second
/// one spent the budget, and the main got SIGKILL at the 2 s floor, 137).
/// Two SIGINTs are: the second one spends the budget.
#[test]
fn a_sigint_after_sigterm_does_not_cut_the_grace_but_a_second_sigint_does() {
    let td = TestDir::new();
    let script = td.expand(
        "trap 'echo took >> \"@REC@\"; sleep 3; exit 0' TERM INT\necho started >> \"@REC@\"\nwhile :; do sleep 0.1; done",
    );
    for (first, want) in [(libc::SIGTERM, 0), (libc::SIGINT, 128 + libc::SIGKILL)] {
        let mut run = td.podinit().deadline(secs(20.0)).args(["--", "sh", "-c", &script]).spawn();
        run.wait_for_record("started", secs(10.0));
        run.signal(first);
        run.wait_for_record("took", secs(10.0));
        run.signal(libc::SIGINT);
        let out = run.wait();
        assert_eq!(out.code, Some(want), "first signal {first}, then SIGINT\n{}", out.report());
        std::fs::remove_file(td.rec()).unwrap();
    }
}
