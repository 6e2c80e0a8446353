//! Fault injection: podinit as PID 1 of a fresh PID namespace, attacked
//! the way a container's world attacks its init. Children SIGKILLed at random
//! moments in every phase; a burst of 1 000 signals; a fork storm of 10 000
//! orphans while a sidecar crash-loops; daemons and grandchildren holding
//! pipes; 32 open files; 500 entries; 200 status clients at once. Each run
//! must end with podinit supervising correctly or exiting with a clear error
//! and the right status, within its budget, with no zombie left and no output
//! lost.
//!
//! Already covered elsewhere, so not repeated here: podinit's stdout a closed
//! pipe (`output_volume.rs`: `a_closed_stdout_does_not_kill_podinit`, and
//! `..._as_pid1`); a grandchild in its own session holding a main's pipe, silent
//! or chatty, as PID 1 (`output_volume.rs`:
//! `a_grandchild_holding_the_pipe_does_not_delay_exit`,
//! `a_chatty_grandchild_does_not_delay_exit`); a `setsid sleep` orphan killed
//! when not PID 1 (`pid1.rs`: `leftover_orphans_are_killed_before_exit_when_not_pid1`).
//!
//! Random choices come from a seed printed at the start of the test (and in
//! every failure message); `PODINIT_FAULT_SEED=N` replays one.

mod common;
use common::*;
use std::fs::{self, File};
use std::io::Write;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

// ----- helpers -----

/// xorshift64*: enough randomness for choosing moments and victims.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi` (`hi` > `lo`).
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    fn millis(&mut self, lo: u64, hi: u64) -> Duration {
        Duration::from_millis(self.range(lo, hi))
    }
}

/// The seed of this run: `PODINIT_FAULT_SEED`, else the clock. Printed.
fn seed(test: &str) -> u64 {
    let s = std::env::var("PODINIT_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64));
    println!("{test}: seed {s} (replay with PODINIT_FAULT_SEED={s})");
    s
}

/// `/proc/PID/cmdline` with NULs as spaces ("" once gone or for a zombie).
fn cmdline(pid: i32) -> String {
    let raw = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ").trim().to_string()
}

/// The pid of a host process inside its own (innermost) PID namespace.
fn ns_pid(pid: i32) -> Option<i32> {
    let s = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("NSpid:"))?;
    line.split_whitespace().last()?.parse().ok()
}

/// Lines of podinit's own messages (`podinit | ...`), without the prefix.
fn podinit_lines(stderr: &str) -> Vec<String> {
    stderr.lines().filter_map(|l| l.strip_prefix("podinit | ")).map(str::to_string).collect()
}

/// The exit status in a podinit message `NAME (pid P) exited with status S`
/// or `NAME (pid P) exited with signal SIG (status S)`: (name, pid, status).
fn exit_event(line: &str) -> Option<(String, i32, i32)> {
    let (name, rest) = line.split_once(" (pid ")?;
    let (pid, rest) = rest.split_once(") exited with ")?;
    let status = if let Some(s) = rest.strip_prefix("status ") {
        s.trim().parse().ok()?
    } else {
        let s = rest.rsplit_once("(status ")?.1;
        s.trim_end_matches(')').trim().parse().ok()?
    };
    Some((name.to_string(), pid.parse().ok()?, status))
}

/// `NAME started (pid P)`: (name, pid).
fn start_event(line: &str) -> Option<(String, i32)> {
    let (name, rest) = line.split_once(" started (pid ")?;
    Some((name.to_string(), rest.trim_end_matches(')').parse().ok()?))
}

/// Runs `podinit status --socket SOCK`, killed after 5 s.
fn status(sock: &Path) -> CmdOut {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_podinit"));
    cmd.arg("status")
        .arg("--socket")
        .arg(sock)
        .env_remove("PODINIT_STATUS_SOCKET")
        .env_remove("PODINIT_CONFIG");
    run_with_deadline(&mut cmd, secs(5.0))
}

/// Short form of a long line for messages.
fn short(s: &str) -> String {
    if s.len() <= 200 {
        return s.to_string();
    }
    let mut i = 200;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    format!("{}...", &s[..i])
}

// ----- random SIGKILLs in every phase -----

/// A victim of a random SIGKILL, as seen just before the kill.
#[derive(Debug, Clone)]
#[allow(dead_code)] // every field is read through Debug, in failure messages
struct Kill {
    phase: &'static str,
    host_pid: i32,
    ns_pid: Option<i32>,
    /// The entry whose own process this was (a direct child of podinit whose
    /// command line carries the entry's marker), if any.
    entry: Option<String>,
    cmd: String,
}

/// SIGKILLs one descendant of podinit chosen at random; None when there was
/// nothing to kill or it was already gone (or a zombie).
fn kill_random(podinit: i32, rng: &mut Rng, phase: &'static str, names: &[&str]) -> Option<Kill> {
    let all = descendants(podinit);
    if all.is_empty() {
        return None;
    }
    let victim = all[rng.range(0, all.len() as u64) as usize];
    let (state, ppid) = proc_state(victim)?;
    if state == 'Z' {
        return None;
    }
    let cmd = cmdline(victim);
    let ns = ns_pid(victim);
    let entry = if ppid == podinit {
        names.iter().find(|n| cmd.contains(&format!("\"start {n}\""))).map(|n| n.to_string())
    } else {
        None
    };
    if !send_signal(victim, SIGKILL) {
        return None;
    }
    Some(Kill { phase, host_pid: victim, ns_pid: ns, entry, cmd: short(&cmd) })
}

/// A script that records `start NAME`, optionally marks itself up after
/// 100 ms (for its startup probe), loops, and on SIGTERM records `stop NAME`,
/// drains for `drain_ticks` x 50 ms and exits 0. The mark is retried until
/// it is made: a random SIGKILL of the `touch` itself must not leave the
/// sidecar running but never started (its startup probe would then take its
/// whole 20 s to fail, as long as the test waits for the mains).
fn drainer(name: &str, up: bool, drain_ticks: u32) -> String {
    let (rm, touch) = if up {
        (
            format!("rm -f \"@DIR@/{name}.up\"\n"),
            format!("sleep 0.1\nuntil touch \"@DIR@/{name}.up\"; do :; done\n"),
        )
    } else {
        (String::new(), String::new())
    };
    format!(
        r#"trap 'echo "stop {name}" >> "@REC@"; i=0; while [ $i -lt {drain_ticks} ]; do sleep 0.05; i=$((i+1)); done; exit 0' TERM
{rm}echo "start {name}" >> "@REC@"
{touch}while :; do sleep 0.05; done"#
    )
}

/// A small pod (an init, two sidecars with startup and liveness probes, two
/// mains; OnFailure, short backoff) has random descendants SIGKILLed while it
/// starts, while it runs and while it terminates. podinit restarts what the
/// rules say (the init until it succeeds and never after, sidecars always,
/// mains after a kill), no main starts before the sequence is done, nothing
/// starts once termination has begun, no zombie stays, the exit status follows
/// the mains' last runs, and the whole run is bounded.
#[test]
fn random_sigkills_in_every_phase_leave_a_correct_pod() {
    let seed = seed("random_sigkills_in_every_phase_leave_a_correct_pod");
    let mut rng = Rng::new(seed);
    let td = TestDir::new();
    let names = ["setup", "s1", "s2", "m1", "m2"];
    let mut cfg = String::from(
        "[pod]\nrestart_policy = \"OnFailure\"\ntermination_grace_period = \"5s\"\n\
         backoff = { initial = \"20ms\", max = \"100ms\" }\n\n",
    );
    cfg += &entry(
        "setup",
        "init",
        "echo \"start setup\" >> \"@REC@\"\ni=0; while [ $i -lt 6 ]; do sleep 0.05; i=$((i+1)); done\n\
         echo \"done setup\" >> \"@REC@\"",
        "",
    );
    for s in ["s1", "s2"] {
        let probes = format!(
            "{}\nliveness_probe = {{ exec = {{ command = [\"true\"] }}, period = \"100ms\", failure_threshold = 3 }}",
            up_probe(s)
        );
        cfg += &entry(s, "sidecar", &drainer(s, true, 8), &probes);
    }
    for m in ["m1", "m2"] {
        cfg += &entry(m, "main", &drainer(m, false, 8), "");
    }
    let path = td.config(&cfg);
    let t_start = Instant::now();
    let mut run = td.podinit().config(&path).deadline(secs(40.0)).spawn();
    let podinit = run.podinit_pid();
    let mut kills: Vec<Kill> = Vec::new();
    let ctx = |kills: &[Kill]| format!("seed {seed}; kills: {kills:#?}");

    // Startup: up to 10 kills until both mains have started.
    while count(&td.records(), "start m1") == 0 || count(&td.records(), "start m2") == 0 {
        if !run.is_running() || t_start.elapsed() > secs(20.0) {
            panic!("the mains did not start: {}\n{}", ctx(&kills), run.report());
        }
        thread::sleep(rng.millis(20, 150));
        if kills.len() < 10 {
            kills.extend(kill_random(podinit, &mut rng, "startup", &names));
        }
    }

    // Running: 6 kills at random moments.
    let mut running_kills = 0;
    while running_kills < 6 {
        thread::sleep(rng.millis(20, 150));
        if let Some(k) = kill_random(podinit, &mut rng, "running", &names) {
            kills.push(k);
            running_kills += 1;
        }
    }
    // Every entry killed so far is running again: its exit is logged and it
    // has one more start than exits (sidecars always restart; mains under
    // OnFailure after a SIGKILL). Synchronised on podinit's log.
    let killed_entries: Vec<(String, i32)> =
        kills.iter().filter_map(|k| Some((k.entry.clone()?, k.ns_pid?))).collect();
    let k = ctx(&kills);
    run.wait_until("every killed entry to be running again", secs(10.0), |r| {
        let lines = podinit_lines(&r.stderr());
        let exits: Vec<(String, i32, i32)> = lines.iter().filter_map(|l| exit_event(l)).collect();
        let starts: Vec<(String, i32)> = lines.iter().filter_map(|l| start_event(l)).collect();
        killed_entries.iter().all(|(n, p)| exits.iter().any(|(en, ep, _)| en == n && ep == p))
            && ["s1", "s2", "m1", "m2"].iter().all(|n| {
                let e = exits.iter().filter(|x| x.0 == *n).count();
                let s = starts.iter().filter(|x| x.0 == *n).count();
                s == e + 1
            })
    });
    let zombies = lingering_zombies(podinit, secs(1.0));
    assert!(zombies.is_empty(), "zombies before termination: {zombies:?}\n{k}\n{}", run.report());

    // Termination: SIGTERM, then kills at random moments while it lasts.
    let t_term = Instant::now();
    run.signal(SIGTERM);
    let mut zombie_checks = Vec::new();
    for _ in 0..4 {
        thread::sleep(rng.millis(30, 200));
        if !run.is_running() {
            break;
        }
        kills.extend(kill_random(podinit, &mut rng, "termination", &names));
    }
    if run.is_running() {
        // podinit may end meanwhile; then there is nothing left to check.
        zombie_checks = lingering_zombies(podinit, secs(0.5));
    }
    let out = run.wait();
    let took_term = out.ended - t_term;
    for k in &kills {
        println!("killed in {}: {:?} {:?} {}", k.phase, k.ns_pid, k.entry, k.cmd);
    }
    let k = ctx(&kills);
    let report = format!("{k}\n{}", out.report());
    assert!(zombie_checks.is_empty(), "zombies during termination: {zombie_checks:?}\n{report}");

    // The log, split at the start of termination.
    let lines = podinit_lines(&out.stderr);
    let term_at = lines
        .iter()
        .position(|l| l.starts_with("SIGTERM received"))
        .unwrap_or_else(|| panic!("no `SIGTERM received` message\n{report}"));
    let (before, after) = lines.split_at(term_at);
    let started_after: Vec<&String> = after.iter().filter(|l| start_event(l).is_some()).collect();
    assert!(started_after.is_empty(), "started after termination began: {started_after:?}\n{report}");

    // The init ran until it succeeded, and never after.
    let setup_exits: Vec<i32> =
        lines.iter().filter_map(|l| exit_event(l)).filter(|e| e.0 == "setup").map(|e| e.2).collect();
    let setup_starts = lines.iter().filter_map(|l| start_event(l)).filter(|e| e.0 == "setup").count();
    assert_eq!(setup_exits.iter().filter(|s| **s == 0).count(), 1, "setup exits {setup_exits:?}\n{report}");
    assert_eq!(setup_exits.last(), Some(&0), "setup ran again after succeeding: {setup_exits:?}\n{report}");
    assert_eq!(setup_starts, setup_exits.len(), "setup starts vs exits\n{report}");

    // No main before the sequence was done.
    let first = |pred: &dyn Fn(&str) -> bool| lines.iter().position(|l| pred(l));
    let m_first = first(&|l| l.starts_with("m1 started") || l.starts_with("m2 started")).unwrap();
    for (what, at) in [
        ("setup succeeded", first(&|l| l.starts_with("setup (pid") && l.ends_with("exited with status 0"))),
        ("s1 started", first(&|l| l.starts_with("s1 startup probe succeeded"))),
        ("s2 started", first(&|l| l.starts_with("s2 startup probe succeeded"))),
    ] {
        assert!(at.is_some_and(|a| a < m_first), "a main started before {what}\n{report}");
    }

    // Restarts before termination: one start more than exits per entry, or
    // as many when termination caught it in backoff.
    for n in ["s1", "s2", "m1", "m2"] {
        let e = before.iter().filter_map(|l| exit_event(l)).filter(|x| x.0 == n).count();
        let s = before.iter().filter_map(|l| start_event(l)).filter(|x| x.0 == n).count();
        assert!(s == e + 1 || s == e, "{n}: {s} starts for {e} exits before termination\n{report}");
    }

    // Every entry process the test killed died of that SIGKILL, per podinit.
    for k in kills.iter().filter(|k| k.entry.is_some()) {
        let (n, p) = (k.entry.clone().unwrap(), k.ns_pid.unwrap_or(-1));
        let e = lines.iter().filter_map(|l| exit_event(l)).find(|e| e.0 == n && e.1 == p);
        assert!(e.is_some(), "no exit logged for killed {n} (pid {p})\n{report}");
    }

    // Exit status: the first main in file order whose last run was not 0.
    let last_of = |n: &str| lines.iter().rev().filter_map(|l| exit_event(l)).find(|e| e.0 == n).map(|e| e.2);
    let (l1, l2) = (last_of("m1"), last_of("m2"));
    let want = match (l1, l2) {
        (Some(a), _) if a != 0 => a,
        (_, Some(b)) if b != 0 => b,
        _ => 0,
    };
    assert_eq!(out.code, Some(want), "exit status vs the mains' last runs {l1:?} {l2:?}\n{report}");
    assert!([0, 137].contains(&want), "a main's last run ended with {want}\n{report}");
    assert!(took_term < secs(5.0), "termination took {took_term:?}\n{report}");
    assert!(out.elapsed < secs(30.0), "the run took {:?}\n{report}", out.elapsed);
}

// ----- a burst of 1 000 signals -----

/// 1 000 signals in one burst (HUP, USR1, USR2, WINCH and QUIT, with 5 TERM
/// and 3 INT among them at random places). podinit survives; the first
/// TERM/INT begins termination; the main gets its stop signal exactly once
/// (a repeated TERM changes nothing; a second INT may spend the budget, which
/// only brings the sidecar's stop forward); every forwarded kind reaches the
/// main and none reaches the sidecar; TERM and INT are never forwarded; the
/// main drains and exits 0, so podinit exits 0, promptly.
#[test]
fn a_burst_of_a_thousand_mixed_signals() {
    let seed = seed("a_burst_of_a_thousand_mixed_signals");
    let mut rng = Rng::new(seed);
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"5s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        r#"for s in HUP USR1 USR2 WINCH QUIT INT; do trap "echo \"side got $s\" >> \"@REC@\"" $s; done
trap 'echo "TERM side" >> "@REC@"; exit 0' TERM
echo "start side" >> "@REC@"
while :; do sleep 0.05; done"#,
        "",
    );
    cfg += &entry(
        "app",
        "main",
        r#"for s in HUP USR1 USR2 WINCH QUIT INT; do trap "echo \"got $s\" >> \"@REC@\"" $s; done
term=0
trap 'echo "TERM app" >> "@REC@"; term=1' TERM
echo "start app" >> "@REC@"
while [ $term -eq 0 ]; do sleep 0.05; done
i=0; while [ $i -lt 20 ]; do sleep 0.05; i=$((i+1)); done
echo "exit app" >> "@REC@"
exit 0"#,
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(20.0)).spawn();
    run.wait_for_record("start side", secs(5.0));
    run.wait_for_record("start app", secs(5.0));
    let podinit = run.podinit_pid();
    let kinds = [SIGHUP, SIGUSR1, SIGUSR2, SIGWINCH, SIGQUIT];
    let mut burst: Vec<i32> = (0..992).map(|i| kinds[i % kinds.len()]).collect();
    for sig in [SIGTERM, SIGTERM, SIGTERM, SIGTERM, SIGTERM, SIGINT, SIGINT, SIGINT] {
        let at = rng.range(0, burst.len() as u64 + 1) as usize;
        burst.insert(at, sig);
    }
    for i in (1..burst.len()).rev() {
        let j = rng.range(0, i as u64 + 1) as usize;
        burst.swap(i, j);
    }
    let t0 = Instant::now();
    let sent = burst.iter().filter(|s| send_signal(podinit, **s)).count();
    let took_burst = t0.elapsed();
    let out = run.wait();
    let report = format!("seed {seed}; {sent} signals sent in {took_burst:?}\n{}", out.report());
    assert_eq!(sent, 1000, "podinit vanished during the burst\n{report}");
    assert_eq!((out.code, out.signal), (Some(0), None), "podinit must exit 0\n{report}");
    let r = &out.records;
    assert_eq!(count(r, "TERM app"), 1, "the main's stop signal, exactly once\n{report}");
    assert_eq!(count(r, "TERM side"), 1, "the sidecar's stop signal, exactly once\n{report}");
    assert_eq!(count(r, "exit app"), 1, "the main must drain and exit\n{report}");
    for k in ["HUP", "USR1", "USR2", "WINCH", "QUIT"] {
        assert!(count(r, &format!("got {k}")) >= 1, "SIG{k} never reached the main\n{report}");
    }
    assert_eq!(count(r, "got INT"), 0, "SIGINT must not be forwarded\n{report}");
    let side_got: Vec<&String> = r.iter().filter(|l| l.starts_with("side got")).collect();
    assert!(side_got.is_empty(), "forwarded to the sidecar: {side_got:?}\n{report}");
    let took = out.ended - t0;
    println!("records after the burst: {r:?}");
    assert!(took < secs(4.0), "podinit took {took:?} after the burst\n{report}");
}

// ----- a fork storm -----

/// 10 000 double-forked orphans (two loops of `( : & )`, throttled so that
/// unreaped zombies could not exhaust the machine's pids) while a sidecar
/// crash-loops with a 10-20 ms backoff: the sidecar keeps being restarted
/// during and after the storm, no zombie stays, and the main's status 7 is
/// podinit's.
#[test]
fn a_fork_storm_of_ten_thousand_orphans_leaves_no_zombie() {
    let td = TestDir::new();
    let mut cfg = String::from(
        "[pod]\ntermination_grace_period = \"3s\"\nbackoff = { initial = \"10ms\", max = \"20ms\" }\n\n",
    );
    cfg += &entry("side", "sidecar", "echo \"start side\" >> \"@REC@\"\nexit 1", "");
    cfg += &entry(
        "storm",
        "main",
        r#"storm() {
  i=0
  while [ $i -lt 5000 ]; do
    ( : & )
    i=$((i+1))
    if [ $((i % 250)) -eq 0 ]; then
      j=0
      while [ "$(ls /proc | grep -c '^[0-9]')" -gt 400 ]; do
        j=$((j+1))
        if [ $j -gt 100 ]; then echo "storm stalled at $i" >> "@REC@"; return; fi
        sleep 0.01
      done
    fi
  done
  echo "storm half done" >> "@REC@"
}
echo "storm begin" >> "@REC@"
storm &
storm &
wait
echo "storm done" >> "@REC@"
i=0; while [ ! -f "@DIR@/release" ] && [ $i -lt 1500 ]; do sleep 0.02; i=$((i+1)); done
exit 7"#,
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(60.0)).spawn();
    let podinit = run.podinit_pid();
    run.wait_for_record("storm begin", secs(5.0));
    let c0 = count(&td.records(), "start side");
    let t0 = Instant::now();
    run.wait_until("the storm to end", secs(45.0), |_| {
        let r = td.records();
        count(&r, "storm done") == 1 || r.iter().any(|l| l.starts_with("storm stalled"))
    });
    let storm_took = t0.elapsed();
    let r = td.records();
    assert_eq!(count(&r, "storm half done"), 2, "the storm stalled: zombies not reaped?\n{}", run.report());
    let c1 = count(&r, "start side");
    assert!(c1 >= c0 + 5, "the sidecar was restarted {} times during a {storm_took:?} storm", c1 - c0);
    let zombies = lingering_zombies(podinit, secs(1.0));
    assert!(zombies.is_empty(), "zombies after the storm: {:?}", &zombies[..zombies.len().min(20)]);
    run.wait_for_record_n("start side", c1 + 3, secs(5.0));
    fs::write(td.file("release"), "").unwrap();
    let out = run.wait();
    println!("storm of 10 000 orphans took {storm_took:?}; {} sidecar starts during it", c1 - c0);
    out.assert_code(7);
}

// ----- daemons and grandchildren holding pipes -----

/// Three mains that leave behind, in new sessions, processes that ignore
/// TERM, HUP and INT: a daemon (double fork, setsid, descriptors closed), one
/// holding podinit's own stdout and stderr (a `raw` entry's grandchild), and
/// one that keeps writing to its entry's pipe. When the mains exit, podinit
/// exits 0 within the 2 s budget, with their lines written, its own pipes
/// closed, and every one of those processes gone.
fn daemons_and_pipe_holders(td: &TestDir, launcher: Launcher) {
    let wait_release =
        "i=0; while [ ! -f \"@DIR@/release\" ] && [ $i -lt 500 ]; do sleep 0.02; i=$((i+1)); done";
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry(
        "daemon",
        "main",
        &format!(
            "( setsid sh -c 'trap \"\" TERM HUP INT; exec sleep 300' </dev/null >/dev/null 2>&1 & )\n\
             echo \"up daemon\" >> \"@REC@\"\n{wait_release}"
        ),
        "",
    );
    cfg += &entry(
        "holder",
        "main",
        &format!(
            "( setsid sh -c 'trap \"\" TERM HUP INT; exec sleep 301' & )\necho \"holder line\"\n\
             echo \"up holder\" >> \"@REC@\"\n{wait_release}"
        ),
        "log = \"raw\"",
    );
    cfg += &entry(
        "piper",
        "main",
        &format!(
            "( setsid sh -c 'trap \"\" TERM HUP INT; while :; do echo piper-grandchild; sleep 0.05; done' & )\n\
             echo \"piper line\"\necho \"up piper\" >> \"@REC@\"\n{wait_release}"
        ),
        "",
    );
    let path = td.config(&cfg);
    let mut run = launcher.config(&path).deadline(secs(20.0)).spawn();
    let podinit = run.podinit_pid();
    for n in ["daemon", "holder", "piper"] {
        run.wait_for_record(&format!("up {n}"), secs(5.0));
    }
    let is_escapee = |p: &i32| {
        let c = cmdline(*p);
        c == "sleep 300" || c == "sleep 301" || (c.contains("piper-grandchild") && c.starts_with("sh -c"))
    };
    let mut escapees: Vec<i32> = Vec::new();
    run.wait_until("the three escapees, reparented to podinit", secs(5.0), |_| {
        escapees = descendants(podinit).into_iter().filter(is_escapee).collect();
        escapees.len() == 3
            && escapees.iter().all(|p| matches!(proc_state(*p), Some((_, pp)) if pp == podinit))
    });
    let t1 = Instant::now();
    fs::write(td.file("release"), "").unwrap();
    let out = run.wait();
    let took = out.ended - t1;
    // Dead means gone, or a zombie waiting for its new parent.
    let until = Instant::now() + secs(1.0);
    let alive: Vec<(i32, String)> = loop {
        let alive: Vec<(i32, String)> = escapees
            .iter()
            .filter(|p| matches!(proc_state(**p), Some((s, _)) if s != 'Z'))
            .map(|p| (*p, cmdline(*p)))
            .collect();
        if alive.is_empty() || Instant::now() > until {
            break alive;
        }
        thread::sleep(Duration::from_millis(20));
    };
    for (p, _) in &alive {
        send_signal(*p, SIGKILL); // leak nothing on the host
    }
    out.assert_code(0);
    assert!(alive.is_empty(), "survived podinit: {alive:?}\n{}", out.report());
    assert!(took < secs(3.0), "podinit took {took:?} after the mains exited (budget 2 s)\n{}", out.report());
    assert!(out.pipes_closed, "podinit's stdout/stderr still open after its exit\n{}", out.report());
    assert!(out.stdout.lines().any(|l| l == "holder line"), "{}", out.report());
    assert!(out.stdout_of("piper").contains(&"piper line".to_string()), "{}", out.report());
}

#[test]
fn daemons_and_pipe_holders_are_killed_within_the_budget_as_pid1() {
    let td = TestDir::new();
    daemons_and_pipe_holders(&td, td.podinit());
}

#[test]
fn daemons_and_pipe_holders_are_killed_within_the_budget_as_subreaper() {
    let td = TestDir::new();
    daemons_and_pipe_holders(&td, td.podinit_not_pid1());
}

// ----- 32 open files -----

/// `ulimit -n 32` with 10 entries (an init, three sidecars with exec startup
/// and liveness probes, six mains): podinit either runs the pod (status 0,
/// every line out) or exits with a clear error naming the cause; it never
/// hangs, never panics, and is never killed by a signal.
#[test]
fn ten_entries_under_32_open_files_work_or_fail_clearly() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"2s\"\n\n");
    cfg += &entry("setup", "init", "echo \"nofile $(ulimit -n)\" >> \"@REC@\"", "");
    for s in ["s1", "s2", "s3"] {
        let probes = format!(
            "{}\nliveness_probe = {{ exec = {{ command = [\"true\"] }}, period = \"100ms\" }}",
            up_probe(s)
        );
        cfg += &entry(s, "sidecar", &sleeper_up(s), &probes);
    }
    for m in 1..=6 {
        cfg += &entry(
            &format!("m{m}"),
            "main",
            &format!("echo \"start m{m}\" >> \"@REC@\"\necho \"line from m{m}\"\nsleep 0.3"),
            "",
        );
    }
    let path = td.config(&cfg);
    let (out_path, err_path) = (td.file("podinit.out"), td.file("podinit.err"));
    let (o, e) = (File::create(&out_path).unwrap(), File::create(&err_path).unwrap());
    let run = td
        .podinit()
        .config(&path)
        .deadline(secs(20.0))
        .spawn_wrapped(&["sh", "-c", "ulimit -n 32 && exec \"$@\"", "sh"], |c| {
            c.stdin(Stdio::null()).stdout(o).stderr(e);
        })
        .log(&err_path)
        .log(&out_path);
    let exit = run.wait();
    let stdout = String::from_utf8_lossy(&fs::read(&out_path).unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&fs::read(&err_path).unwrap()).into_owned();
    let records = fs::read_to_string(td.rec()).unwrap_or_default();
    let report = format!(
        "{exit:?}\n--- records ---\n{records}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        tail(&stdout, 2000),
        tail(&stderr, 3000)
    );
    assert!(records.contains("nofile 32") || exit.code != Some(0), "the limit did not apply\n{report}");
    assert!(
        !stderr.contains("panicked") && !stderr.contains("internal error"),
        "podinit panicked or hit an internal error\n{report}"
    );
    assert_eq!(exit.signal, None, "podinit was killed by a signal\n{report}");
    assert!(exit.elapsed < secs(10.0), "took {:?}\n{report}", exit.elapsed);
    println!("under 32 open files: {exit:?}\n{records}\n{}", tail(&stderr, 1500));
    if exit.code == Some(0) {
        for m in 1..=6 {
            assert!(
                entry_lines(&stdout, &format!("m{m}")).contains(&format!("line from m{m}")),
                "m{m}'s line lost\n{report}"
            );
        }
    } else {
        let own: Vec<&str> = stderr.lines().filter(|l| l.starts_with("podinit")).collect();
        let clear = own.iter().any(|l| {
            let l = l.to_lowercase();
            l.contains("open files") || l.contains("descriptor") || l.contains("emfile")
        });
        assert!(clear, "exit {:?} without a message naming the open-files limit\n{report}", exit.code);
    }
}

// ----- 500 entries -----

/// 250 sidecars without probes and 250 mains that exit 0 at once (the last
/// one once every sidecar has recorded its start): `podinit check` passes and
/// plans all 500; the run starts every entry exactly once, stops the
/// sidecars, and exits 0 in bounded time.
#[test]
fn five_hundred_entries_run_and_complete() {
    let td = TestDir::new();
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"10s\"\n\n");
    for i in 1..=250 {
        cfg += &format!(
            "[[process]]\nname = \"s{i}\"\nrole = \"sidecar\"\ncommand = 'echo \"start s{i}\" >> \"@REC@\"; exec sleep 300'\n\n"
        );
    }
    // The sidecars have no probe: each holds the sequence only until its
    // process runs (docs/lifecycle.md rule 3), so the mains can all be done
    // and the sidecars stopped before a slow sidecar shell has written its
    // line. The last main waits (20 s at most) until all 250 are there.
    let all_sidecars = r#"; i=0; while [ "$(grep -c "^start s" "@REC@")" -lt 250 ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done"#;
    for i in 1..=250 {
        let wait = if i == 250 { all_sidecars } else { "" };
        cfg +=
            &format!("[[process]]\nname = \"m{i}\"\ncommand = 'echo \"start m{i}\" >> \"@REC@\"{wait}'\n\n");
    }
    let path = td.config(&cfg);
    let check = td.podinit_not_pid1().arg("check").config(&path).deadline(secs(10.0)).run();
    check.assert_code(0);
    for n in ["s1 ", "s250 ", "m1 ", "m250 "] {
        assert!(check.stdout.lines().any(|l| l.contains(n)), "plan without {n:?}\n{}", check.report());
    }
    let out = td.podinit().config(&path).deadline(secs(60.0)).run();
    out.assert_code(0);
    let mut missing = Vec::new();
    for i in 1..=250 {
        for n in [format!("s{i}"), format!("m{i}")] {
            let c = count(&out.records, &format!("start {n}"));
            if c != 1 {
                missing.push(format!("{n} x{c}"));
            }
        }
    }
    assert!(missing.is_empty(), "start records not exactly once: {missing:?}\n{}", out.report());
    assert_eq!(out.records.len(), 500, "{}", out.report());
    assert!(out.elapsed < secs(25.0), "500 entries took {:?}\n{}", out.elapsed, out.report());
    println!("500 entries: {:?}", out.elapsed);
}

// ----- a status client flood -----

/// 200 status clients at once: 100 that connect and never write, 100 that ask
/// and never read. Meanwhile three real `podinit status` calls answer (exit 0
/// or 1) within 2 s, a sidecar's readiness probe keeps running, and when the
/// test touches a file the main exits and podinit completes the pod with 0.
#[test]
fn a_flood_of_status_clients_does_not_stop_supervision() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let mut cfg = String::from("[pod]\ntermination_grace_period = \"3s\"\n\n");
    cfg += &entry(
        "side",
        "sidecar",
        &sleeper("side"),
        r#"readiness_probe = { exec = { command = ["sh", "-c", "echo probe >> @DIR@/probes"] }, period = "100ms" }"#,
    );
    cfg += &entry(
        "app",
        "main",
        "echo \"start app\" >> \"@REC@\"\n\
         i=0; while [ ! -f \"@DIR@/finish\" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done\n\
         echo \"exit app\" >> \"@REC@\"",
        "",
    );
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(30.0)).spawn();
    run.wait_for_record("start app", secs(5.0));
    let s = sock.clone();
    run.wait_until("the status socket to answer", secs(5.0), move |_| status(&s).code == Some(0));

    // The flood, from a thread (a connect that blocks must not hang the test).
    let (tx, rx) = mpsc::channel();
    let s: PathBuf = sock.clone();
    thread::spawn(move || {
        let mut held = Vec::new();
        let mut errors = Vec::new();
        for i in 0..200 {
            match UnixStream::connect(&s) {
                Ok(mut c) => {
                    if i % 2 == 1 {
                        let _ = c.write_all(b"text\n");
                    }
                    held.push(c);
                }
                Err(e) => errors.push(format!("client {i}: {e}")),
            }
        }
        let _ = tx.send((held, errors));
    });
    let (held, errors) = rx.recv_timeout(secs(10.0)).unwrap_or_else(|_| {
        panic!("200 connects did not finish within 10 s\n{}", run.report());
    });
    assert!(errors.is_empty(), "connects refused: {errors:?}\n{}", run.report());

    let probes_before = fs::read_to_string(td.file("probes")).unwrap_or_default().lines().count();
    let askers: Vec<_> = (0..3)
        .map(|_| {
            thread::spawn({
                let s = sock.clone();
                move || status(&s)
            })
        })
        .collect();
    let answers: Vec<CmdOut> = askers.into_iter().map(|h| h.join().unwrap()).collect();
    for a in &answers {
        assert!(
            matches!(a.code, Some(0) | Some(1)) && a.took < secs(2.0),
            "a status call during the flood: {a:?}\n{}",
            run.report()
        );
    }
    let p = td.file("probes");
    run.wait_until("the readiness probe to keep running", secs(3.0), |_| {
        fs::read_to_string(&p).unwrap_or_default().lines().count() >= probes_before + 3
    });
    let t1 = Instant::now();
    fs::write(td.file("finish"), "").unwrap();
    let out = run.wait();
    drop(held);
    out.assert_code(0);
    assert_eq!(count(&out.records, "exit app"), 1, "{}", out.report());
    let took = out.ended - t1;
    assert!(took < secs(3.0), "the pod took {took:?} to complete after the main's release\n{}", out.report());
}

// ----- a steady stream of status requests -----

/// Sixteen clients ask for the status report without pause while the pod
/// runs its start sequence (forty inits, then a main that exits 0): every
/// turn of the event loop steps one queued lifecycle event whatever else is
/// ready, so the requests cannot hold the start sequence back. The bound is
/// 40 times what it takes (about 0.25 s); when the loop served every ready
/// request before its queue of events, it took 29 s or more.
#[test]
fn a_steady_stream_of_status_requests_does_not_hold_up_the_start_sequence() {
    let td = TestDir::new();
    let sock = td.file("status.sock");
    let mut cfg = String::new();
    // The first init waits for the flood to be under way.
    cfg += &entry(
        "i0",
        "init",
        "i=0; while [ ! -f \"@DIR@/go\" ] && [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done",
        "",
    );
    for i in 1..40 {
        cfg += &format!("[[process]]\nname = \"i{i}\"\nrole = \"init\"\ncommand = [\"true\"]\n\n");
    }
    cfg += &entry("app", "main", "echo \"start app\" >> \"@REC@\"", "");
    let path = td.config(&cfg);
    let mut run = td.podinit().config(&path).deadline(secs(60.0)).spawn();
    let s = sock.clone();
    run.wait_until("the status socket to answer", secs(10.0), move |_| UnixStream::connect(&s).is_ok());
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let (s, stop, answered) = (sock.clone(), stop.clone(), answered.clone());
            thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(mut c) = UnixStream::connect(&s) else { continue };
                    let _ = c.set_read_timeout(Some(secs(5.0)));
                    if c.write_all(b"text\n").is_ok() {
                        let mut reply = Vec::new();
                        if std::io::Read::read_to_end(&mut c, &mut reply).is_ok() && !reply.is_empty() {
                            answered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    let a = answered.clone();
    run.wait_until("the flood to be answered", secs(10.0), move |_| {
        a.load(std::sync::atomic::Ordering::Relaxed) >= 100
    });
    fs::write(td.file("go"), "").unwrap();
    let t1 = Instant::now();
    let r = td.rec();
    run.wait_until("the main to start behind forty inits", secs(10.0), move |_| {
        fs::read_to_string(&r).unwrap_or_default().contains("start app")
    });
    let took = t1.elapsed();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    let out = run.wait();
    out.assert_code(0);
    eprintln!(
        "start sequence under the flood: {took:?}; {} reports answered",
        answered.load(std::sync::atomic::Ordering::Relaxed)
    );
}
