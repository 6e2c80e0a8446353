#!/usr/bin/env python3
"""Measurements of bench/run: podinit against tini, dumb-init, catatonit,
s6, supervisord and horust.

Runs every measurement, interleaved (round-robin across tools, the order rotated
each round, several rounds) so that machine noise hits every tool alike, and
writes all raw figures to one JSON file that bench/report.py turns into Markdown.

It owns the processes it starts: each tool under test runs as PID 1 of a fresh
PID namespace (`unshare --pid --fork --mount-proc --kill-child`), in its own
session, and is killed with its whole namespace (SIGKILL to unshare, which
--kill-child passes on as the parent-death signal) when a measurement is done or
the harness stops. unshare does not forward SIGTERM, so a signal meant for the
init is sent to its host pid, read from /proc/<unshare>/task/<unshare>/children.

A peer that cannot do a job, is missing or misbehaves gets "n/a" or "failed"
with the reason; only podinit failing to run at all, or a bug here, makes the
harness exit non-zero. No figure is ever asserted.
"""

import argparse
import atexit
import json
import os
import platform
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time

UNSHARE = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
CLK_TCK = os.sysconf("SC_CLK_TCK")
LINE = "x" * 99  # 100-byte lines with the newline
TRUE = "true"
PODINIT_SHOWN = "target/x86_64-unknown-linux-musl/release/podinit"
PODINIT_SLIM_SHOWN = "podinit-slim (--no-default-features)"

PARAMS = {
    "full": dict(
        startup_rounds=8, startup_runs=40, startup_warmup=5,
        steady_rounds=2, steady_settle=2.0, steady_window=10.0,
        stop_rounds=5,
        reap_n=10000, reap_burst=100, reap_rounds=3, reap_plain_rounds=1, reap_deadline=10.0,
        # 1 GB a run: with 200 MB a run lasted 0.15-0.3 s and the rounds of
        # one mode spread from 0.65x to 1.23x a bare pipe on 2 cores.
        tput_bytes=1_000_000_000, tput_rounds=7,
        scale_sizes=[1, 10, 100, 500], scale_window=10.0,
        syscall_rounds=3,
        # A sample every 2 s: 30 in each compared minute, so that the fewest
        # descriptors seen there is one with the crash-looping children dead.
        soak_s=600.0, soak_first_s=60.0, soak_sample_s=2.0,
    ),
    "quick": dict(
        startup_rounds=2, startup_runs=10, startup_warmup=2,
        steady_rounds=1, steady_settle=0.5, steady_window=1.0,
        stop_rounds=1,
        reap_n=1000, reap_burst=100, reap_rounds=1, reap_plain_rounds=0, reap_deadline=3.0,
        tput_bytes=20_000_000, tput_rounds=1,
        scale_sizes=[1, 10], scale_window=1.0,
        syscall_rounds=1,
        soak_s=10.0, soak_first_s=4.0, soak_sample_s=1.0,
    ),
}

LIVE = []  # Popen objects still to kill at exit


def log(msg):
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def median(xs):
    return statistics.median(xs) if xs else None


def rotate(items, k):
    if not items:
        return items
    k %= len(items)
    return items[k:] + items[:k]


def run_out(argv, **kw):
    """stdout+stderr of a short command, or '' when it cannot run."""
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=20, **kw)
        return (r.stdout + r.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        return ""


# ---------------------------------------------------------------- /proc readers

def wait_blocking(popen, timeout):
    """Waits for popen in a blocking waitpid and returns True, or kills it after timeout s and
    returns False. Popen.wait(timeout=...) polls with growing sleeps (0.5, 1, 2, 4 ms...), so a
    stop measured with it lands on those steps: an exit at 1.6 ms was seen at 3.5 ms."""
    import threading
    fired = []

    def kill():
        fired.append(True)
        try:
            os.killpg(popen.pid, signal.SIGKILL)
        except OSError:
            pass
    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        popen.wait()
    finally:
        timer.cancel()
    return not fired


def proc_stat(pid):
    """(comm, state, ppid, utime+stime ticks) of pid, or None when gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    comm = s[s.index("(") + 1:s.rindex(")")]
    rest = s[s.rindex(")") + 2:].split()
    return comm, rest[0], int(rest[1]), int(rest[11]) + int(rest[12])


def proc_status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                out[k] = v.strip()
    except OSError:
        return None
    return out


def kib(status, key):
    v = status.get(key, "0 kB").split()[0]
    return int(v)


def tasks_usage(pid):
    """(run-time ns from schedstat, context switches) summed over pid's live threads."""
    ns = ctx = 0
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns += int(f.read().split()[0])
            st = proc_status(f"{pid}/task/{tid}") or {}
            ctx += int(st.get("voluntary_ctxt_switches", 0)) + int(st.get("nonvoluntary_ctxt_switches", 0))
        except (OSError, ValueError, IndexError):
            pass
    return ns, ctx


def process_table():
    """{pid: (comm, state, ppid)} of every process visible here."""
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(name)
            if st:
                table[int(name)] = st[:3]
    return table


def descendants(root, table=None):
    table = table or process_table()
    kids = {}
    for pid, (_, _, ppid) in table.items():
        kids.setdefault(ppid, []).append(pid)
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        for c in kids.get(p, []):
            out.append(c)
            todo.append(c)
    return [(p, table[p][0], table[p][1]) for p in out]


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[:-1]
    except OSError:
        return []


def elf_facts(path):
    """interp: has a PT_INTERP (dynamically linked; a static-pie has none);
    symtab: has a .symtab section (not stripped). 64-bit little-endian ELF only."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {"interp": False, "symtab": False}
    phoff, shoff = struct.unpack_from("<QQ", data, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", data, 0x36)
    interp = any(struct.unpack_from("<I", data, phoff + i * phentsize)[0] == 3 for i in range(phnum))
    symtab = any(struct.unpack_from("<I", data, shoff + i * shentsize + 4)[0] == 2 for i in range(shnum))
    return {"interp": interp, "symtab": symtab}


# ---------------------------------------------------------------- a tool as PID 1

class Pod:
    """One init under test, PID 1 of its own PID namespace (or not, pid1=False)."""

    def __init__(self, argv, logpath, pid1=True, env=None, cwd=None):
        self.argv = argv
        self.pid1 = pid1
        self.logf = open(logpath, "ab")
        self.p = subprocess.Popen(
            (UNSHARE + argv) if pid1 else argv,
            stdin=subprocess.DEVNULL, stdout=self.logf, stderr=subprocess.STDOUT,
            env=env, cwd=cwd, start_new_session=True)
        LIVE.append(self.p)
        self._inner = None

    def inner(self, timeout=10.0):
        """Host pid of the init under test (unshare's child), or None."""
        if self._inner or not self.pid1:
            return self._inner or self.p.pid
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.p.poll() is None:
            try:
                with open(f"/proc/{self.p.pid}/task/{self.p.pid}/children") as f:
                    kids = f.read().split()
                if kids:
                    # unshare has exec'd the tool once comm is no longer unshare's
                    st = proc_stat(kids[0])
                    if st and st[0] != "unshare":
                        self._inner = int(kids[0])
                        return self._inner
            except OSError:
                pass
            time.sleep(0.002)
        return None

    def wait_children(self, comm, n, timeout=20.0):
        """Waits until n descendants named comm run; True when they do."""
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.p.poll() is None:
            inner = self.inner()
            if inner:
                live = [d for d in descendants(inner) if d[1] == comm and d[2] != "Z"]
                if len(live) >= n:
                    return True
            time.sleep(0.01)
        return False

    def supervisors(self, extra_comms=()):
        """The init's own pid plus any helper supervisor processes (s6-supervise)."""
        inner = self.inner()
        if not inner:
            return []
        pids = [inner]
        if extra_comms:
            pids += [p for p, c, s in descendants(inner) if c in extra_comms and s != "Z"]
        return pids

    def kill(self):
        if self.p.poll() is None:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                self.p.kill()
            except OSError:
                pass
        try:
            self.p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        self.logf.close()
        if self.p in LIVE:
            LIVE.remove(self.p)


def kill_live():
    for p in list(LIVE):
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            p.kill()
            p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass


# ---------------------------------------------------------------- the tools

class Tool:
    """How one init is run. one(cmd): argv to run one command; multi(dir, n,
    probe_period, cmd): (argv, extra supervisor comms) to supervise n copies of
    a long-running command, or None with the reason in self.why_*."""

    def __init__(self, name, path, kind):
        self.name = name
        self.path = path
        self.kind = kind  # "single" (one command) or "multi" (several)
        self.why_no_one = None
        self.why_no_multi = None
        self.why_no_probe = None
        self.probe_periods = ()
        self.extra_supervisors = ()

    def one(self, cmd, pid1, work):
        raise NotImplementedError

    def multi(self, work, n, probe, cmd):
        raise NotImplementedError


class Single(Tool):
    """tini, tini-static, dumb-init, catatonit: one command, no configuration."""

    def __init__(self, name, path, pid1_flags=(), host_flags=(), sep=("--",)):
        super().__init__(name, path, "single")
        self.pid1_flags = list(pid1_flags)
        self.host_flags = list(host_flags)
        self.sep = list(sep)
        self.why_no_multi = "runs one command only"
        self.why_no_probe = "no health checks"

    def one(self, cmd, pid1, work):
        return [self.path] + (self.pid1_flags if pid1 else self.host_flags) + self.sep + list(cmd)


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def toml_list(cmd):
    return "[" + ", ".join(json.dumps(c) for c in cmd) + "]"


class Podinit(Tool):
    def __init__(self, path):
        super().__init__("podinit", path, "multi")
        self.probe_periods = ("100ms", "1s")

    def one(self, cmd, pid1, work):
        return [self.path, "--"] + list(cmd)

    def config(self, work, entries, probe=None, log_mode=None):
        """entries: [(name, role, cmd)]; cmd a list (exec'd) or a str (sh -c)."""
        # A socket of its own, in its scratch directory (a plain init binds
        # none: it is measured as users run it).
        text = f'[pod]\nstatus_socket = {json.dumps(os.path.join(work, "podinit.sock"))}\n'
        if log_mode:
            text += f'log = "{log_mode}"\n'
        text += "\n"
        for name, role, cmd in entries:
            c = toml_list(cmd) if isinstance(cmd, list) else json.dumps(cmd)
            text += f'[[process]]\nname = "{name}"\nrole = "{role}"\ncommand = {c}\n'
            if probe:
                text += f'readiness_probe = {{ exec = {{ command = ["{TRUE}"] }}, period = "{probe}" }}\n'
            text += "\n"
        path = os.path.join(work, "podinit.toml")
        write(path, text)
        return path

    def multi(self, work, n, probe, cmd, mains_only=False):
        if mains_only:
            entries = [(f"m{i + 1}", "main", cmd) for i in range(n)]
        else:
            # sidecars first, as a pod has them, then the main
            entries = [(f"s{i + 1}", "sidecar", cmd) for i in range(n - 1)] + [("main", "main", cmd)]
        return [self.path, "--config", self.config(work, entries, probe)]


class S6(Tool):
    def __init__(self, path):
        super().__init__("s6", path, "multi")
        self.why_no_one = "no one-shot mode: s6-svscan keeps running after its services exit"
        self.why_no_probe = "no health checks (readiness notification only)"
        self.extra_supervisors = ("s6-supervise",)

    def multi(self, work, n, probe, cmd):
        scan = os.path.join(work, "scan")
        for i in range(n):
            d = os.path.join(scan, f"s{i + 1}")
            os.makedirs(d)
            write(os.path.join(d, "run"), "#!/bin/sh\nexec " + " ".join(cmd) + "\n", 0o755)
        return [self.path, scan]


class Supervisord(Tool):
    def __init__(self, path):
        super().__init__("supervisord", path, "multi")
        self.why_no_one = "no one-shot mode: supervisord keeps running after its programs exit"
        self.why_no_probe = "no health checks"

    def multi(self, work, n, probe, cmd):
        text = (f"[supervisord]\nnodaemon=true\nlogfile={work}/supervisord.log\n"
                f"pidfile={work}/supervisord.pid\nchildlogdir={work}\n\n")
        for i in range(n):
            text += (f"[program:s{i + 1}]\ncommand={' '.join(cmd)}\nautorestart=true\n"
                     f"startsecs=0\n\n")
        path = os.path.join(work, "supervisord.conf")
        write(path, text)
        return [self.path, "-n", "-c", path]


class Horust(Tool):
    def __init__(self, path):
        super().__init__("horust", path, "multi")
        self.probe_periods = ("1s",)
        self.why_no_probe = "health-check interval fixed at 1 s in horust 0.1.x"

    def uds(self, work):
        d = os.path.join(work, "uds")
        os.makedirs(d, exist_ok=True)
        return ["--uds-folder-path", d]

    def one(self, cmd, pid1, work):
        return [self.path] + self.uds(work) + ["--"] + list(cmd)

    def multi(self, work, n, probe, cmd):
        svc = os.path.join(work, "services")
        os.makedirs(svc)
        for i in range(n):
            text = f'command = "{" ".join(cmd)}"\n[restart]\nstrategy = "always"\n'
            if probe:
                text += f'[healthiness]\ncommand = "{TRUE}"\n'
            write(os.path.join(svc, f"s{i + 1}.toml"), text)
        return [self.path] + self.uds(work) + ["--services-path", svc]


def find_tools(podinit, notes):
    tools = [Podinit(podinit)]
    missing = []

    def which(name, *alts):
        for n in (name,) + alts:
            p = shutil.which(n) or (os.path.expanduser(f"~/.cargo/bin/{n}") if os.path.exists(os.path.expanduser(f"~/.cargo/bin/{n}")) else None)
            if p:
                return p
        missing.append(name)
        return None

    p = which("tini-static")
    if p:
        tools.append(Single("tini-static", p, host_flags=["-s"]))
    p = which("tini")
    if p:
        tools.append(Single("tini", p, host_flags=["-s"]))
    p = which("dumb-init")
    if p:
        tools.append(Single("dumb-init", p, sep=()))
    p = which("catatonit")
    if p:
        tools.append(Single("catatonit", p))
    p = which("s6-svscan")
    if p:
        tools.append(S6(p))
    p = which("supervisord")
    if p:
        tools.append(Supervisord(p))
    p = which("horust")
    if p:
        tools.append(Horust(p))
    if missing:
        notes.append("not installed, so not measured: " + ", ".join(missing))
    return tools


# ---------------------------------------------------------------- the harness

class Bench:
    def __init__(self, args):
        self.args = args
        self.p = PARAMS["quick" if args.quick else "full"]
        self.work = args.work
        self.notes = []
        self.errors = []  # podinit could not be measured: the harness is broken
        self.tools = find_tools(args.podinit, self.notes)
        if args.tools:  # BENCH_TOOLS: a subset (to debug the harness; CI's quick run)
            self.tools = [t for t in self.tools if t.name in args.tools.split(",")]
        self.by_name = {t.name: t for t in self.tools}
        self.env = dict(os.environ)
        self.seq = 0
        self.commands = {}  # label -> shown command

    def newdir(self, label):
        self.seq += 1
        d = os.path.join(self.work, f"{self.seq:04d}-{label}")
        os.makedirs(d)
        return d

    def pod(self, argv, work):
        """argv as PID 1 of a new namespace, output to work/out.log; with a config, a status socket
        of its own (a plain init binds none, and with the variable set it would serve one)."""
        env = dict(self.env)
        if "--config" in argv:
            env["PODINIT_STATUS_SOCKET"] = os.path.join(work, "podinit.sock")
        return Pod(argv, os.path.join(work, "out.log"), env=env, cwd=work)

    def display(self, text):
        """text with this run's scratch paths replaced by what a reader recognises."""
        if self.args.podinit_slim:
            text = text.replace(self.args.podinit_slim, PODINIT_SLIM_SHOWN)
        text = text.replace(self.args.podinit, PODINIT_SHOWN).replace(self.args.orphans, "bench/orphans")
        return text.replace(self.work, "$WORK")

    def show(self, label, argv):
        self.commands.setdefault(label, self.display(" ".join(argv)))

    def fail(self, tool, what, why):
        msg = f"{tool}: {what}: {why}"
        log("FAILED " + msg)
        if tool == "podinit":
            self.errors.append(msg)
        return {"error": why}

    # ------------------------------------------------------------ 1. start-up

    SLOW_S = 0.25

    def startup(self):
        p = self.p
        work = self.newdir("startup")
        cmds = []  # (label, tool, pid1, argv)
        cmds.append(("bare", "bare", False, [TRUE]))
        cmds.append(("bare", "bare", True, UNSHARE + [TRUE]))
        skipped = {}
        for t in self.tools:
            if t.why_no_one:
                skipped[t.name] = t.why_no_one
                continue
            for pid1 in (False, True):
                argv = t.one([TRUE], pid1, work)
                cmds.append((t.name, t.name, pid1, (UNSHARE + argv) if pid1 else argv))
        for label, _, pid1, argv in cmds:
            self.show(f"startup {label} {'pid1' if pid1 else 'host'}", argv)
        times = {(c[1], c[2]): [] for c in cmds}
        codes = {(c[1], c[2]): set() for c in cmds}
        # A pilot run of each: a command slower than SLOW_S (horust takes seconds to
        # exit) gets one run a round instead of startup_runs, or it alone would
        # take most of the time budget.
        # --quick keeps the pilot's figure as the only run of a slow command.
        slow = set()
        for c in cmds:
            t0 = time.perf_counter()
            rc = subprocess.run(c[3], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=self.env, timeout=60).returncode
            dt = time.perf_counter() - t0
            if dt > self.SLOW_S:
                slow.add((c[1], c[2]))
                if self.args.quick:
                    times[(c[1], c[2])].append(dt)
                    codes[(c[1], c[2])].add(rc)
        hyperfine = shutil.which("hyperfine")
        timer = "hyperfine -N" if hyperfine else "python perf_counter loop (hyperfine not installed)"
        for r in range(p["startup_rounds"]):
            order = rotate(cmds, r)
            log(f"start-up round {r + 1}/{p['startup_rounds']}")
            groups = [([c for c in order if (c[1], c[2]) not in slow], p["startup_warmup"], p["startup_runs"]),
                      ([c for c in order if (c[1], c[2]) in slow and not self.args.quick], 0, 1)]
            for g, (group, warmup, runs) in enumerate(groups):
                if not group:
                    continue
                if hyperfine:
                    out = os.path.join(work, f"round{r}-{g}.json")
                    argv = [hyperfine, "-N", "-i", "--style", "none", "--warmup", str(warmup),
                            "--runs", str(runs), "--export-json", out]
                    for c in group:
                        argv += ["-n", f"{c[1]}|{int(c[2])}", " ".join(c[3])]
                    with open(os.path.join(work, "hyperfine.log"), "ab") as lf:
                        subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=lf, stderr=lf, env=self.env, check=True)
                    with open(out) as f:
                        for res in json.load(f)["results"]:
                            name, pid1 = res["command"].split("|")
                            key = (name, pid1 == "1")
                            times[key] += res["times"]
                            codes[key].update(res.get("exit_codes") or [])
                    continue
                for c in group:
                    key = (c[1], c[2])
                    for i in range(warmup + runs):
                        t0 = time.perf_counter()
                        rc = subprocess.run(c[3], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.DEVNULL, env=self.env).returncode
                        dt = time.perf_counter() - t0
                        if i >= warmup:
                            times[key].append(dt)
                            codes[key].add(rc)
        res = {"timer": timer, "runs_per_command": p["startup_rounds"] * p["startup_runs"],
               "rounds": p["startup_rounds"], "warmup": p["startup_warmup"], "na": skipped, "rows": {},
               "slow": sorted(f"{n} {'pid1' if p1 else 'host'}" for n, p1 in slow), "slow_s": self.SLOW_S}
        for (name, pid1), ts in times.items():
            row = {"median_s": median(ts), "mean_s": statistics.mean(ts), "min_s": min(ts),
                   "stdev_s": statistics.pstdev(ts), "n": len(ts), "exit_codes": sorted(codes[(name, pid1)])}
            if any(c != 0 for c in codes[(name, pid1)]):
                row["error"] = f"exit status {sorted(codes[(name, pid1)])}"
                if name == "podinit":
                    self.errors.append(f"podinit start-up: {row['error']}")
            res["rows"].setdefault(name, {})["pid1" if pid1 else "host"] = row
        return res

    # ------------------------------------------------------------ 2 + 6. memory and idle CPU

    SCENARIOS = [
        # (key, children, probe period, description)
        ("1", 1, None, "1 child"),
        ("3", 3, None, "3 children"),
        ("3p100", 3, "100ms", "3 children, a probe each every 100 ms"),
        ("3p1s", 3, "1s", "3 children, a probe each every 1 s"),
    ]

    def launch(self, t, n, probe, cmd, work, variant=None):
        """argv to run tool t with n copies of cmd (probes every `probe`), or (None, reason)."""
        if n == 1 and probe is None and (t.kind == "single" or t.name in ("podinit", "horust")):
            return t.one(cmd, True, work), None
        if t.kind == "single":
            return None, t.why_no_multi
        if probe and probe not in t.probe_periods:
            return None, t.why_no_probe or f"no probe period of {probe}"
        if variant == "mains":
            return t.multi(work, n, probe, cmd, mains_only=True), None
        return t.multi(work, n, probe, cmd), None

    def snapshot(self, pods):
        snap = {}
        for name, (pod, t) in pods.items():
            sups = pod.supervisors(t.extra_supervisors)
            ticks = ns = ctx = rss = hwm = anon = 0
            per = []
            for pid in sups:
                st = proc_stat(pid)
                status = proc_status(pid)
                if not st or not status:
                    continue
                u_ns, u_ctx = tasks_usage(pid)
                ticks += st[3]
                ns += u_ns
                ctx += u_ctx
                rss += kib(status, "VmRSS")
                hwm += kib(status, "VmHWM")
                anon += kib(status, "RssAnon")
                per.append({"pid": pid, "comm": st[0], "VmRSS_kib": kib(status, "VmRSS"),
                            "VmHWM_kib": kib(status, "VmHWM"), "threads": int(status.get("Threads", 1))})
            snap[name] = {"ticks": ticks, "ns": ns, "ctx": ctx, "rss": rss, "hwm": hwm, "anon": anon, "per": per}
        return snap

    def steady(self):
        p = self.p
        res = {"window_s": p["steady_window"], "settle_s": p["steady_settle"], "rounds": p["steady_rounds"],
               "scenarios": {k: d for k, _, _, d in self.SCENARIOS}, "rows": {}, "na": {}}
        cmd = ["sleep", "100000"]
        for r in range(p["steady_rounds"]):
            for key, n, probe, desc in self.SCENARIOS:
                log(f"memory/idle CPU round {r + 1}/{p['steady_rounds']}: {desc}")
                pods = {}
                try:
                    for t in rotate(self.tools, r):
                        work = self.newdir(f"steady-{key}-{t.name}")
                        argv, why = self.launch(t, n, probe, cmd, work)
                        if argv is None:
                            res["na"].setdefault(key, {})[t.name] = why
                            continue
                        self.show(f"steady {key} {t.name}", UNSHARE + argv)
                        pods[t.name] = (self.pod(argv, work), t)
                    for name, (pod, t) in list(pods.items()):
                        if not pod.wait_children("sleep", n):
                            res["rows"].setdefault(name, {}).setdefault(key, []).append(
                                self.fail(name, desc, f"its {n} children did not start within 20 s"))
                            pod.kill()
                            del pods[name]
                    time.sleep(p["steady_settle"])
                    s0 = self.snapshot(pods)
                    time.sleep(p["steady_window"])
                    s1 = self.snapshot(pods)
                    for name in pods:
                        a, b = s0[name], s1[name]
                        res["rows"].setdefault(name, {}).setdefault(key, []).append({
                            "VmRSS_kib": b["rss"], "VmHWM_kib": b["hwm"], "RssAnon_kib": b["anon"],
                            "per_process": b["per"],
                            "cpu_ticks": b["ticks"] - a["ticks"], "cpu_s": (b["ticks"] - a["ticks"]) / CLK_TCK,
                            "run_ns": b["ns"] - a["ns"], "ctx_switches": b["ctx"] - a["ctx"],
                            "children_alive": pods[name][0].wait_children("sleep", n, timeout=0.5),
                        })
                finally:
                    for pod, _ in pods.values():
                        pod.kill()
        return res

    # ------------------------------------------------------------ 3. size

    def sizes(self):
        rows = {}
        for t in self.tools:
            paths = [t.path]
            if t.name == "s6":  # one s6-supervise runs per service
                paths.append(shutil.which("s6-supervise") or "/usr/bin/s6-supervise")
            rows[t.name] = [self.size_of(t.name, p) for p in paths]
        if self.args.podinit_slim:
            rows["podinit (slim)"] = [self.size_of("podinit-slim", self.args.podinit_slim)]
        return rows

    def size_of(self, name, path):
        real = os.path.realpath(path)
        part = {"path": self.display(path), "bytes": os.path.getsize(real),
                "file": run_out(["file", "-b", "-L", real]) if shutil.which("file") else ""}
        with open(real, "rb") as f:
            head = f.read(256)
        if head.startswith(b"#!"):
            interp = head.split(b"\n")[0][2:].decode().split()[0]
            part.update(script=True, interpreter=interp, interpreter_bytes=os.path.getsize(os.path.realpath(interp)))
            if name == "supervisord":
                pkgdir = run_out([interp, "-c", "import os, supervisor; print(os.path.dirname(supervisor.__file__))"])
                if os.path.isdir(pkgdir):
                    part["package_dir"] = pkgdir
                    part["package_bytes"] = sum(os.path.getsize(os.path.join(d, f))
                                                for d, _, fs in os.walk(pkgdir) for f in fs)
            return part
        elf = elf_facts(real)
        part.update(static=not elf["interp"], stripped=not elf["symtab"])
        if elf["interp"]:
            libs = []
            for line in run_out(["ldd", real]).splitlines():
                m = re.search(r"=>\s*(\S+)", line)
                if m and os.path.exists(m.group(1)):
                    libs.append({"lib": m.group(1), "bytes": os.path.getsize(os.path.realpath(m.group(1)))})
            part["libs"] = libs
        if elf["symtab"] and shutil.which("strip"):
            tmp = os.path.join(self.work, f"stripped-{name}")
            if subprocess.run(["strip", "-o", tmp, real], capture_output=True).returncode == 0:
                part["stripped_bytes"] = os.path.getsize(tmp)
        return part

    # ------------------------------------------------------------ 4. reaping

    def reaping(self):
        p = self.p
        res = {"n": p["reap_n"], "deadline_s": p["reap_deadline"], "modes": {}, "na": {}}
        modes = [("burst", p["reap_burst"], p["reap_rounds"]), ("plain", 1, p["reap_plain_rounds"])]
        for mode, burst, rounds in modes:
            if rounds == 0:
                continue
            res["modes"][mode] = {"burst": burst, "rounds": rounds, "rows": {}}
            for r in range(rounds):
                for t in rotate(self.tools, r):
                    log(f"reaping ({mode}) round {r + 1}/{rounds}: {t.name}")
                    work = self.newdir(f"reap-{mode}-{t.name}")
                    out = os.path.join(work, "result")
                    load = [self.args.orphans, str(p["reap_n"]), str(burst), out, str(p["reap_deadline"])]
                    if t.name in ("s6", "supervisord"):
                        argv = t.multi(work, 1, None, load + ["--hold"])
                    else:
                        argv = t.one(load, True, work)
                    shown = UNSHARE + argv
                    if t.name in ("s6", "supervisord"):
                        shown += ["# its one service:"] + load + ["--hold"]
                    self.show(f"reap {t.name}", shown)
                    pod = self.pod(argv, work)
                    row = None
                    try:
                        end = time.monotonic() + p["reap_deadline"] + 120
                        while not os.path.exists(out) and time.monotonic() < end and pod.p.poll() is None:
                            time.sleep(0.02)
                        if os.path.exists(out):
                            fork_s, done_s, left, peak = open(out).read().split()
                            row = {"fork_loop_s": float(fork_s), "all_reaped_s": float(done_s) if float(done_s) >= 0 else None,
                                   "zombies_left": int(left), "peak_zombies": int(peak)}
                            if t.name not in ("s6", "supervisord"):
                                try:
                                    row["init_exit_status"] = pod.p.wait(timeout=15)
                                except subprocess.TimeoutExpired:
                                    row["init_exit_status"] = "did not exit within 15 s"
                        else:
                            row = self.fail(t.name, f"reaping ({mode})", f"no result (exit status {pod.p.poll()})")
                    finally:
                        pod.kill()
                    res["modes"][mode]["rows"].setdefault(t.name, []).append(row)
        return res

    # ------------------------------------------------------------ 5. stop latency

    def stop(self):
        p = self.p
        cases = []  # (label, tool, n, variant)
        res = {"rounds": p["stop_rounds"], "rows": {}, "na": {}}
        for t in self.tools:
            cases.append((t.name, t, 1, None))
        for t in self.tools:
            if t.kind != "multi":
                res["na"].setdefault("3", {})[t.name] = t.why_no_multi
            elif t.name == "podinit" or not self.args.quick:
                cases.append((t.name, t, 3, None))
            else:  # the peers' multi runs cost seconds
                res["na"].setdefault("3", {})[t.name] = "skipped in --quick"
        cases.append(("podinit (3 mains)", self.by_name["podinit"], 3, "mains"))
        cmd = ["sleep", "100000"]
        for r in range(p["stop_rounds"]):
            for label, t, n, variant in rotate(cases, r):
                log(f"stop round {r + 1}/{p['stop_rounds']}: {label}, {n} children")
                work = self.newdir(f"stop-{t.name}-{n}")
                argv, why = self.launch(t, n, None, cmd, work, variant)
                self.show(f"stop {label} {n}", UNSHARE + argv)
                pod = self.pod(argv, work)
                try:
                    if not pod.wait_children("sleep", n):
                        row = self.fail(label, "stop", f"its {n} children did not start within 20 s")
                    else:
                        time.sleep(0.3)  # let it settle: SIGTERM at start-up is another test
                        inner = pod.inner()
                        t0 = time.monotonic()
                        os.kill(inner, signal.SIGTERM)
                        if wait_blocking(pod.p, 30):
                            row = {"stop_s": time.monotonic() - t0, "exit_status": pod.p.returncode}
                        else:
                            row = {"stop_s": None, "error": "did not exit within 30 s of SIGTERM"}
                finally:
                    pod.kill()
                res["rows"].setdefault(label, {}).setdefault(str(n), []).append(row)
        return res

    # ------------------------------------------------------------ 7. output throughput

    def throughput(self):
        p = self.p
        nbytes = p["tput_bytes"]
        lines = nbytes // 100
        child = f"yes {LINE} | head -c {nbytes}"
        pod = self.by_name["podinit"]
        cases = [("raw pipe", None)] + [(f"podinit log = \"{m}\"", m) for m in ("raw", "prefixed", "json")]
        res = {"bytes": nbytes, "lines": lines, "rounds": p["tput_rounds"], "child": child, "rows": {}}
        for r in range(p["tput_rounds"]):
            for label, mode in rotate(cases, r):
                log(f"throughput round {r + 1}/{p['tput_rounds']}: {label}")
                work = self.newdir("tput")
                if mode is None:
                    script = f"set -o pipefail; sh -c '{child}' | wc -lc"
                else:
                    cfg = pod.config(work, [("main", "main", child)], log_mode=mode)
                    script = f"set -o pipefail; {pod.path} --config {cfg} 2>{work}/stderr.log | wc -lc"
                self.show(f"tput {label}", ["bash", "-c", json.dumps(script)])
                t0 = time.monotonic()
                pr = subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=self.env,
                                    stdin=subprocess.DEVNULL, timeout=600)
                dt = time.monotonic() - t0
                if pr.returncode != 0:
                    row = self.fail("podinit" if mode else "raw pipe", f"throughput {label}",
                                    f"exit status {pr.returncode}: {pr.stderr.strip()[:200]}")
                else:
                    nl, nb = (int(x) for x in pr.stdout.split())
                    row = {"s": dt, "out_lines": nl, "out_bytes": nb, "lines_ok": nl == lines}
                    if nl != lines:
                        self.notes.append(f"throughput {label}: {nl} lines out of {lines}")
                res["rows"].setdefault(label, []).append(row)
        return res

    # ------------------------------------------------------------ 8. cost as the pod grows

    def scale(self):
        """podinit alone with N sidecars, each with a 1 s tcp readiness probe, plus one main."""
        import socket
        import threading
        p = self.p
        podinit = self.by_name["podinit"]
        # One listener for every probe, outside the pod: what is measured is
        # podinit probing, not N servers.
        srv = socket.socket()
        srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        srv.bind(("127.0.0.1", 0))
        srv.listen(1024)
        port = srv.getsockname()[1]

        def accept():
            while True:
                try:
                    c, _ = srv.accept()
                    c.close()
                except OSError:
                    return
        threading.Thread(target=accept, daemon=True).start()
        res = {"sizes": p["scale_sizes"], "window_s": p["scale_window"], "rows": {}}
        for n in p["scale_sizes"]:
            log(f"scale: {n} sidecars with a 1 s tcp readiness probe")
            work = self.newdir(f"scale-{n}")
            sock = os.path.join(work, "podinit.sock")  # self.pod names it in PODINIT_STATUS_SOCKET
            text = '[pod]\ntermination_grace_period = "20s"\n\n'
            for i in range(n):
                text += (f'[[process]]\nname = "s{i + 1}"\nrole = "sidecar"\ncommand = ["sleep", "100000"]\n'
                         f'hold_until = "started"\n'
                         f'readiness_probe = {{ tcp_socket = {{ port = {port} }}, period = "1s" }}\n\n')
            text += '[[process]]\nname = "main"\ncommand = ["sleep", "100000"]\n'
            cfg = os.path.join(work, "podinit.toml")
            write(cfg, text)
            argv = [podinit.path, "--config", cfg]
            self.show(f"scale {n}", UNSHARE + argv)
            t0 = time.monotonic()
            pod = self.pod(argv, work)
            row = {}
            try:
                ready = None
                while time.monotonic() - t0 < 120 and pod.p.poll() is None:
                    st = subprocess.run([podinit.path, "status", "--socket", sock], capture_output=True,
                                        stdin=subprocess.DEVNULL, timeout=10)
                    if st.returncode == 0:
                        ready = time.monotonic() - t0
                        break
                    time.sleep(0.02)
                if ready is None:
                    row = self.fail("podinit", f"scale {n}", "not ready within 120 s")
                else:
                    time.sleep(2.0)
                    pods = {"podinit": (pod, podinit)}
                    s0 = self.snapshot(pods)
                    time.sleep(p["scale_window"])
                    s1 = self.snapshot(pods)
                    a, b = s0["podinit"], s1["podinit"]
                    inner = pod.inner()
                    t1 = time.monotonic()
                    os.kill(inner, signal.SIGTERM)
                    stop = time.monotonic() - t1 if wait_blocking(pod.p, 60) else None
                    row = {"ready_s": ready, "cpu_ns": b["ns"] - a["ns"], "window_s": p["scale_window"],
                           "VmRSS_kib": b["rss"], "threads": sum(x["threads"] for x in b["per"]),
                           "stop_s": stop}
            finally:
                pod.kill()
            res["rows"][str(n)] = row
        srv.close()
        return res

    # ------------------------------------------------------------ 9. system calls

    def syscalls(self):
        """System calls of `X -- true` under `strace -f -c` (every process, the child `true` included),
        not as PID 1 (strace must be the tracer), and as PID 1 counted as the run under unshare minus
        unshare running bare `true`."""
        if not shutil.which("strace"):
            return {"na": "strace is not installed"}
        p = self.p
        work = self.newdir("syscalls")

        def count(argv):
            out = os.path.join(work, "strace.txt")
            r = subprocess.run(["strace", "-f", "-c", "-o", out, "--"] + argv, capture_output=True,
                               stdin=subprocess.DEVNULL, env=self.env, timeout=60)
            if r.returncode != 0:
                return None, f"exit status {r.returncode}: {r.stderr.decode(errors='replace').strip()[:200]}"
            calls, by = None, {}
            with open(out) as f:
                for line in f:
                    cols = line.split()
                    if len(cols) >= 5 and cols[-1] == "total":
                        calls = int(cols[3])
                    elif len(cols) >= 5 and cols[3].isdigit():
                        by[cols[-1]] = int(cols[3])
            return (calls, by) if calls is not None else (None, "no total in strace's summary")
        # A machine may not allow tracing (no ptrace in a container): then
        # the section is not measured, which is not podinit's failure.
        n, why = count([TRUE])
        if n is None:
            return {"na": f"strace cannot trace here ({why})"}
        res = {"rounds": p["syscall_rounds"], "rows": {}}
        cases = [("bare", [TRUE], UNSHARE + [TRUE])]
        for t in self.tools:
            if t.kind == "single" or t.name == "podinit":
                host = t.one([TRUE], False, work)
                pid1 = UNSHARE + t.one([TRUE], True, work)
                cases.append((t.name, host, pid1))
        for label, host, pid1 in cases:
            self.show(f"syscalls {label}", ["strace", "-f", "-c", "--"] + host)
            row = {"host": [], "pid1_with_unshare": [], "by_call": {}}
            for _ in range(p["syscall_rounds"]):
                n, by = count(host)
                if n is None:
                    row = self.fail(label, "syscalls", by)
                    break
                row["host"].append(n)
                row["by_call"] = by
                n1, _ = count(pid1)
                row["pid1_with_unshare"].append(n1)
            res["rows"][label] = row
        return res

    # ------------------------------------------------------------ 10. soak

    SOAK_FLOOD = r"""
import signal, sys, time
n = 0
stop = False
def term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, term)
out = sys.stdout
while not stop:
    for _ in range(500):
        out.write(f"flood {n}\n")
        n += 1
    out.flush()
    time.sleep(0.05)
with open(sys.argv[1], "w") as f:
    f.write(str(n))
"""

    def soak(self):
        """podinit alone under load for soak_s: crash-looping sidecars, flapping readiness and
        liveness probes, a sidecar flooding its output, signals sent at random to podinit and
        SIGKILLs to its children. Its RSS, descriptors and threads are sampled; at the end, no
        zombie may be left and every flood line must be in the output, in order."""
        import random
        p = self.p
        podinit = self.by_name["podinit"]
        work = self.newdir("soak")
        flood_py = os.path.join(work, "flood.py")
        write(flood_py, self.SOAK_FLOOD)
        flood_total = os.path.join(work, "flood-total")
        dur = p["soak_s"]
        text = ('[pod]\ntermination_grace_period = "5s"\n'
                'backoff = { initial = "100ms", max = "1s" }\n\n')
        text += ('[[process]]\nname = "crash-exit"\nrole = "sidecar"\n'
                 'command = ["sh", "-c", "echo up; sleep 0.5; exit 3"]\n\n')
        text += ('[[process]]\nname = "crash-kill"\nrole = "sidecar"\n'
                 'command = ["sh", "-c", "echo up; sleep 1.3; kill -9 $$"]\n\n')
        text += ('[[process]]\nname = "flap"\nrole = "sidecar"\ncommand = ["sleep", "100000"]\n'
                 'readiness_probe = { exec = { command = ["sh", "-c", "test $(( $(date +%s) % 4 )) -lt 2"] }, '
                 'period = "250ms" }\n'
                 'liveness_probe = { exec = { command = ["sh", "-c", "test $(( $(date +%s) % 10 )) -ne 0"] }, '
                 'period = "500ms", failure_threshold = 2 }\n\n')
        text += ('[[process]]\nname = "flood"\nrole = "sidecar"\n'
                 f'command = ["python3", "-u", {json.dumps(flood_py)}, {json.dumps(flood_total)}]\n\n')
        text += ('[[process]]\nname = "app"\nrole = "main"\n'
                 f'command = ["sh", "-c", "trap \'\' HUP USR1 USR2 WINCH; sleep {dur:g}"]\n')
        cfg = os.path.join(work, "podinit.toml")
        write(cfg, text)
        argv = [podinit.path, "--config", cfg]
        self.show("soak", UNSHARE + argv)
        log(f"soak: {dur:g} s")
        rng = random.Random(20261201)
        pod = self.pod(argv, work)
        samples, stuck, signals_sent, kills = [], [], 0, 0
        res = {"duration_s": dur, "first_s": p["soak_first_s"], "config": text.replace(work, "$WORK")}
        try:
            inner = pod.inner()
            if not inner:
                return self.fail("podinit", "soak", "did not start")
            t0 = time.monotonic()
            next_sample = p["soak_sample_s"]
            zombies_before = set()
            while pod.p.poll() is None and time.monotonic() - t0 < dur - 1.0:
                time.sleep(rng.uniform(0.05, 0.5))
                if rng.random() < 0.7:
                    try:
                        os.kill(inner, rng.choice([signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
                                                   signal.SIGWINCH]))
                        signals_sent += 1
                    except OSError:
                        pass
                else:
                    # The flapping sidecar's `sleep 100000`, never the main's sleep.
                    victims = [d for d in descendants(inner) if d[1] == "sleep" and d[2] != "Z"
                               and cmdline(d[0]) == [b"sleep", b"100000"]]
                    if victims:
                        try:
                            os.kill(rng.choice(victims)[0], signal.SIGKILL)
                            kills += 1
                        except OSError:
                            pass
                el = time.monotonic() - t0
                if el >= next_sample:
                    st = proc_status(inner) or {}
                    # The fewest of three reads 10 ms apart: a probe's or a spawn's
                    # pipe open at the moment of one read is not a leak.
                    fds = None
                    for _ in range(3):
                        try:
                            n = len(os.listdir(f"/proc/{inner}/fd"))
                            fds = n if fds is None else min(fds, n)
                        except OSError:
                            pass
                        time.sleep(0.01)
                    zombies = {d[0] for d in descendants(inner) if d[2] == "Z"}
                    # A zombie seen at two samples in a row is one podinit did not reap.
                    stuck += sorted(zombies & zombies_before)
                    zombies_before = zombies
                    samples.append({"t_s": round(el, 1), "VmRSS_kib": kib(st, "VmRSS"),
                                    "RssAnon_kib": kib(st, "RssAnon"), "RssFile_kib": kib(st, "RssFile"),
                                    "fds": fds, "threads": int(st.get("Threads", 0))})
                    next_sample += p["soak_sample_s"]
            try:
                pod.p.wait(timeout=60)
                exit_status = pod.p.returncode
            except subprocess.TimeoutExpired:
                exit_status = None
        finally:
            pod.kill()
        total = None
        if os.path.exists(flood_total):
            with open(flood_total) as f:
                total = int(f.read().strip() or 0)
        seen, in_order = 0, True
        with open(os.path.join(work, "out.log"), "rb") as f:
            for line in f:
                i = line.rfind(b"flood ")
                if i < 0 or not line.startswith(b"flood"):
                    continue
                try:
                    n = int(line[i + 6:])
                except ValueError:
                    continue
                if n != seen:
                    in_order = False
                seen = max(seen, n + 1)
        res.update(samples=samples, stuck_zombies=stuck, signals_sent=signals_sent, kills=kills,
                   exit_status=exit_status, flood_total=total, flood_seen=seen,
                   lines_ok=total is not None and seen == total and in_order,
                   restarts=self.soak_restarts(os.path.join(work, "out.log")))
        return res

    @staticmethod
    def soak_restarts(path):
        """How often podinit logged a start of each entry (restarts are starts after the first)."""
        starts = {}
        with open(path, "rb") as f:
            for line in f:
                m = re.match(rb"podinit\s*\| (\S+) started \(pid ", line)
                if m:
                    name = m.group(1).decode(errors="replace")
                    starts[name] = starts.get(name, 0) + 1
        return starts

    # ------------------------------------------------------------ the configurations, for the report

    def samples(self):
        """The configuration files of the 3-children runs, as written (probes where the tool has them)."""
        out = {}
        for t in self.tools:
            if t.kind != "multi":
                continue
            work = self.newdir(f"sample-{t.name}")
            probe = t.probe_periods[0] if t.probe_periods else None
            argv = t.multi(work, 3, probe, ["sleep", "100000"])
            files = {}
            for d, dirs, fs in sorted(os.walk(work)):
                for f in sorted(fs):
                    path = os.path.join(d, f)
                    with open(path) as fh:
                        files[path.replace(work, "$WORK")] = fh.read().replace(work, "$WORK")
            out[t.name] = {"argv": self.display(" ".join(argv)).replace(work.replace(self.work, "$WORK"), "$WORK"),
                           "probe": probe, "files": files}
        return out

    # ------------------------------------------------------------ machine and versions

    def machine(self):
        cpu = ""
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
        mem = ""
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = line.split(":", 1)[1].strip()
                    break
        return {"nproc": os.cpu_count(), "cpu": cpu, "kernel": platform.release(), "mem": mem,
                "os": run_out(["sh", "-c", ". /etc/os-release && echo $PRETTY_NAME"]),
                "clk_tck": CLK_TCK}

    def versions(self):
        v = {}
        v["podinit"] = run_out([self.args.podinit, "--version"])
        commit = run_out(["git", "-C", self.args.repo, "rev-parse", "--short", "HEAD"])
        dirty = run_out(["git", "-C", self.args.repo, "status", "--porcelain", "--untracked-files=no"])
        v["podinit"] += f" (commit {commit}{', with uncommitted changes' if dirty else ''})"
        v["rustc"] = run_out(["rustc", "--version"])
        for t in self.tools:
            if t.name == "podinit":
                continue
            flag = {"s6": None, "horust": None}.get(t.name, "--version")
            out = (run_out([t.path, flag]).splitlines() or [""])[0] if flag else ""
            if t.name == "horust":  # no --version flag
                m = re.search(r"^horust (v\S+):", run_out(["cargo", "install", "--list"]), re.M)
                out = f"horust {m.group(1)} (cargo install --locked)" if m else "horust (version unknown)"
            pkg = {"tini-static": "tini", "s6": "s6", "supervisord": "supervisor"}.get(t.name, t.name)
            deb = run_out(["dpkg-query", "-W", "-f", "${Version}", pkg]) if t.name != "horust" else ""
            if not out and deb:
                out = f"{pkg} {deb.split('-')[0]}"
            v[t.name] = (out + (f" (Debian {pkg} {deb})" if deb else "")).strip()
        for tool in ("hyperfine", "unshare"):
            if shutil.which(tool):
                v[tool] = run_out([tool, "--version"]).splitlines()[0]
        v["python3"] = platform.python_version()
        v["cc"] = run_out(["cc", "--version"]).splitlines()[0] if shutil.which("cc") else ""
        return v

    def loadavg(self):
        with open("/proc/loadavg") as f:
            return f.read().split()[:3]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--podinit", required=True)
    ap.add_argument("--podinit-slim", help="the --no-default-features build, for its size")
    ap.add_argument("--orphans", required=True, help="the compiled bench/orphans.c")
    ap.add_argument("--work", required=True, help="scratch directory (emptied by the caller)")
    ap.add_argument("--repo", required=True)
    ap.add_argument("--json", required=True, help="where to write the results")
    ap.add_argument("--note", action="append", default=[])
    ap.add_argument("--only", help="comma-separated sections (for debugging the harness)")
    ap.add_argument("--tools", default=os.environ.get("BENCH_TOOLS"),
                    help="comma-separated tools to measure (default: every one installed)")
    args = ap.parse_args()

    atexit.register(kill_live)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    b = Bench(args)
    started = time.monotonic()
    out = {"mode": "quick" if args.quick else "full", "params": b.p, "notes": list(args.note),
           "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "machine": b.machine(), "versions": b.versions(),
           "loadavg_start": b.loadavg(), "tools": [t.name for t in b.tools], "sections": {}, "section_s": {}}
    sections = [("size", b.sizes), ("startup", b.startup), ("steady", b.steady), ("stop", b.stop),
                ("reaping", b.reaping), ("throughput", b.throughput), ("scale", b.scale),
                ("syscalls", b.syscalls), ("soak", b.soak)]
    only = set(args.only.split(",")) if args.only else None
    for name, fn in sections:
        if only and name not in only:
            continue
        t0 = time.monotonic()
        out["sections"][name] = fn()
        out["section_s"][name] = time.monotonic() - t0
    out["loadavg_end"] = b.loadavg()
    out["elapsed_s"] = time.monotonic() - started
    out["commands"] = b.commands
    out["samples"] = b.samples()
    out["notes"] += b.notes
    out["errors"] = b.errors
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    if b.errors:
        log("podinit could not be measured: " + "; ".join(b.errors))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
