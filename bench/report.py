#!/usr/bin/env python3
"""Turns the JSON written by bench/bench.py into docs/benchmarks.md (Markdown).

Pure formatting: no process is run here, so a report can be re-rendered from a
saved JSON. Every figure is the median over the rounds (start-up: over all
runs). Ratios are against tini-static, the reference, except
throughput (against the child writing to a raw pipe) and start-up's "x bare"
(against plain `true`). MB means 10^6 bytes; /proc gives KiB.

usage: report.py RESULTS.json [--plot NAME.png] > benchmarks.md
       report.py --scale-tsv RESULTS.json > scale.tsv   (the data of bench/scale.gp)
"""

import json
import os
import statistics
import sys

REF = "tini-static"
MB = 1e6


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    if a is None or b is None or b <= 0:
        return None
    return a / b


def fx(r):
    return "–" if r is None else f"{r:.2f}×"


def fms(s, digits=2):
    return "–" if s is None else f"{s * 1000:.{digits}f}"


def fmb_kib(k):
    return "–" if k is None else f"{k * 1024 / MB:.2f}"


HOME = os.path.expanduser("~")


def tidy(text):
    """A path under $HOME (cargo's bin) as ~/..."""
    return text.replace(HOME + "/", "~/") if HOME not in ("", "/") else text


def rounds(n):
    return f"{n} round" if n == 1 else f"{n} rounds"


def table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out) + "\n"


class Report:
    def __init__(self, d):
        self.d = d
        self.s = d["sections"]
        self.tools = d["tools"]
        self.lines = []
        self.targets = []  # (target, measured, verdict, note)
        self.plot = None  # the PNG of section 8, beside the report

    def w(self, text=""):
        self.lines.append(text)

    # ------------------------------------------------------------ header

    def header(self):
        d = self.d
        m = d["machine"]
        self.w("# Benchmarks: podinit against tini, dumb-init, catatonit, s6, supervisord and horust")
        self.w()
        self.w(f"Written by `bench/run{' --quick' if d['mode'] == 'quick' else ''}` on {d['date']} "
               f"in {d['elapsed_s']:.0f} s of measuring. Do not edit by hand: run `bench/run` again.")
        self.w()
        if d["mode"] == "quick":
            self.w("**Quick mode**: a few iterations, smaller loads. These figures only show that the "
                   "harness works; they are not the benchmark.")
            self.w()
        for n in d.get("notes", []):
            self.w(f"- **Note:** {n}")
        la0, la1 = d["loadavg_start"], d["loadavg_end"]
        self.w(f"- Load average (1, 5, 15 min) at the start: {' '.join(la0)}; at the end: {' '.join(la1)}.")
        if d.get("errors"):
            for e in d["errors"]:
                self.w(f"- **Harness error:** {e}")
        self.w()
        self.w("## Machine")
        self.w()
        self.w(table(["", ""], [
            ["CPU", f"{m['cpu']}, {m['nproc']} cores (nproc)"],
            ["memory", m["mem"]],
            ["kernel", m["kernel"]],
            ["OS", m["os"]],
        ]))
        self.w("## Versions")
        self.w()
        self.w(table(["tool", "version"], [[k, f"`{v}`" if v else "–"] for k, v in d["versions"].items()]))
        self.w("Every init runs as PID 1 of a fresh PID namespace, `unshare --pid --fork --mount-proc "
               "--kill-child TOOL ...`, unless a row says \"not PID 1\". The tools are measured "
               "interleaved: each round runs every tool once (start-up: one hyperfine call over every "
               "command), the order rotated by one each round; memory and idle CPU run all tools of a "
               "scenario at the same time over the same window.")
        self.w()
        p = d["params"]
        self.w(f"Parameters: {', '.join(f'{k} = {v}' for k, v in p.items())}.")
        self.w()

    # ------------------------------------------------------------ 1

    def startup(self):
        st = self.s.get("startup")
        if not st:
            return
        self.w("## 1. Start-up overhead")
        self.w()
        self.w(f"`X -- true` against plain `true`, timed with {st['timer']}: {st['rounds']} rounds of "
               f"{st['runs_per_command'] // st['rounds']} runs per command (after {st['warmup']} warm-up runs "
               f"each round), medians of all runs. \"overhead\" is the median minus bare `true`'s median in "
               f"the same mode.")
        if st.get("slow"):
            self.w(f"Commands slower than {st['slow_s']} s in a pilot run get one run a round: "
                   f"{', '.join(st['slow'])}.")
        self.w()
        rows = st["rows"]
        for mode, title in (("pid1", "As PID 1 (`unshare --pid --fork --mount-proc --kill-child X -- true`)"),
                            ("host", "Not PID 1 (`X -- true`; tini with `-s`, subreaper)")):
            bare = rows["bare"][mode]["median_s"]
            ref = rows.get(REF, {}).get(mode, {})
            ref_med = ref.get("median_s")
            ref_ovh = None if ref_med is None else ref_med - bare
            out = []
            for name in ["bare"] + self.tools:
                if name not in rows:
                    if name in st["na"]:
                        out.append([name, "n/a", "", "", "", "", "", st["na"][name]])
                    continue
                r = rows[name][mode]
                if r.get("error"):
                    out.append([name, "failed", "", "", "", "", "", r["error"]])
                    continue
                ovh = r["median_s"] - bare
                ovh_ratio = ratio(ovh, ref_ovh) if ref_ovh and ref_ovh > 0 and name != "bare" else None
                out.append([name, fms(r["median_s"], 3), f"{fms(r['mean_s'], 3)} ± {fms(r['stdev_s'], 3)}",
                            r["n"], fx(ratio(r["median_s"], bare)),
                            "–" if name == "bare" else fms(ovh, 3),
                            fx(ratio(r["median_s"], ref_med)), fx(ovh_ratio)])
            self.w(f"### {title}")
            self.w()
            self.w(table(["tool", "median ms", "mean ± sd ms", "runs", "× bare", "overhead ms",
                          "× tini-static (time)", "× tini-static (overhead)"], out))
        # target
        pr = rows.get("podinit", {}).get("pid1", {})
        tr = rows.get(REF, {}).get("pid1", {})
        if pr.get("median_s") and tr.get("median_s"):
            bare = rows["bare"]["pid1"]["median_s"]
            po, to = pr["median_s"] - bare, tr["median_s"] - bare
            rt = pr["median_s"] / tr["median_s"]
            ro = po / to if to > 0 else None
            measured = (f"overhead {fms(po, 3)} ms vs {fms(to, 3)} ms = {fx(ro)}; "
                        f"whole run {fms(pr['median_s'], 3)} vs {fms(tr['median_s'], 3)} ms = {fx(rt)}")
            met = ro is not None and ro <= 1.1
            note = "" if met else (f"{fx(ro / 1.1) if ro else '?'} of the allowed 1.1×" if ro else
                                   "tini-static's overhead is within noise of bare `true`")
            self.targets.append(["start-up overhead as PID 1 at most 1.1× tini-static's", measured,
                                 "met" if met else "missed", note])

    # ------------------------------------------------------------ 2 + 6

    def steady_rows(self, name, key):
        return self.s["steady"]["rows"].get(name, {}).get(key, [])

    def memory(self):
        st = self.s.get("steady")
        if not st:
            return
        sc = st["scenarios"]
        self.w("## 2. Resident memory")
        self.w()
        self.w(f"VmRSS and VmHWM (peak) from `/proc/PID/status` of the supervisor itself, read after "
               f"{st['settle_s']} s to settle and a {st['window_s']} s window, median of {rounds(st['rounds'])}, "
               f"in MB (10^6 bytes). \"1 child\": `X -- sleep 100000` (podinit and horust in their one-command "
               f"mode too), s6 and supervisord with one service; \"3 children\": podinit with two sidecars and a "
               f"main, the others with 3 services. s6 is s6-svscan plus one s6-supervise per service, summed (s6-svscan alone "
               f"below). Children are `sleep 100000`; probes are exec probes running `true` (podinit: "
               f"`readiness_probe = {{ exec = {{ command = [\"true\"] }}, period = ... }}`; horust: "
               f"`[healthiness] command = \"true\"`, which horust runs every 1 s, not configurable). "
               f"In brackets: × tini-static with its one child.")
        self.w()
        ref1 = med([r.get("VmRSS_kib") for r in self.steady_rows(REF, "1")])
        refh = med([r.get("VmHWM_kib") for r in self.steady_rows(REF, "1")])
        head = ["tool"]
        for key, desc in sc.items():
            head += [f"{desc}: VmRSS", "VmHWM"]
        out = []
        for name in self.tools:
            row = [name]
            for key in sc:
                rs = self.steady_rows(name, key)
                why = st["na"].get(key, {}).get(name)
                if not rs:
                    row += [f"n/a: {why}" if why else "–", ""]
                    continue
                if any(r.get("error") for r in rs):
                    row += ["failed: " + next(r["error"] for r in rs if r.get("error")), ""]
                    continue
                rss = med([r["VmRSS_kib"] for r in rs])
                hwm = med([r["VmHWM_kib"] for r in rs])
                row += [f"{fmb_kib(rss)} ({fx(ratio(rss, ref1))})", f"{fmb_kib(hwm)} ({fx(ratio(hwm, refh))})"]
            out.append(row)
        self.w(table(head, out))
        # VmRSS counts the program's own file pages that are mapped (the
        # kernel maps up to 64 KiB around each page touched): it follows the
        # binary's size. RssAnon is what the process holds privately.
        anon = []
        for name in self.tools:
            cells = []
            for key in ("1", "3"):
                rs = [r for r in self.steady_rows(name, key) if r.get("RssAnon_kib") is not None]
                if rs and not any(r.get("error") for r in rs):
                    cells.append(f"{fmb_kib(med([r['RssAnon_kib'] for r in rs]))}")
                else:
                    cells.append("–")
            if any(c != "–" for c in cells):
                anon.append([name] + cells)
        if anon:
            self.w("Of that, the memory each holds privately (RssAnon: heap, stacks, written data), in MB; "
                   "the rest of VmRSS is pages of its program file, shared with every other process that "
                   "maps it, which the kernel can drop and read again under memory pressure:")
            self.w()
            self.w(table(["tool", f"{sc.get('1', '1')}: RssAnon", f"{sc.get('3', '3')}: RssAnon"], anon))
        s6 = self.steady_rows("s6", "3")
        if s6:
            svscan = med([next((p["VmRSS_kib"] for p in r["per_process"] if p["comm"] == "s6-svscan"), None) for r in s6])
            self.w(f"s6-svscan alone, 3 services: VmRSS {fmb_kib(svscan)} MB.")
            self.w()
        threads = {n: max((p["threads"] for r in self.steady_rows(n, "3") for p in r.get("per_process", [])), default=None)
                   for n in self.tools}
        t = ", ".join(f"{n} {v}" for n, v in threads.items() if v)
        if t:
            self.w(f"Threads of the supervisor with 3 children: {t}.")
            self.w()
        for key, limit, peers in (("1", 1.2, (REF,)), ("3", 1.5, ("s6", "horust", "supervisord"))):
            rs = self.steady_rows("podinit", key)
            if not rs or any(r.get("error") for r in rs):
                continue
            rss = med([r["VmRSS_kib"] for r in rs]) * 1024
            others = []
            for n in peers:
                r = self.steady_rows(n, key)
                if r and not any(x.get("error") for x in r):
                    others.append(f"{n} {fmb_kib(med([x['VmRSS_kib'] for x in r]))}")
            met = rss <= limit * MB
            self.targets.append([f"VmRSS with {sc.get(key, key)} at most {limit} MB",
                                 f"{rss / MB:.2f} MB" + (f" (here: {', '.join(others)} MB)" if others else ""),
                                 "met" if met else "missed",
                                 "" if met else f"over by {(rss - limit * MB) / MB:.2f} MB"])

    def cpu(self):
        st = self.s.get("steady")
        if not st:
            return
        sc = st["scenarios"]
        self.w("## 6. CPU while idle")
        self.w()
        self.w(f"CPU used by the supervisor over a {st['window_s']} s window once its children run (after "
               f"{st['settle_s']} s to settle), median of {rounds(st['rounds'])}: utime+stime from "
               f"`/proc/PID/stat` (clock ticks of 10 ms, so anything under 10 ms reads 0), run time from "
               f"`/proc/PID/task/*/schedstat` (ns, all live threads), and wake-ups as voluntary + involuntary "
               f"context switches of all its threads (`/proc/PID/task/*/status`). Same runs as section 2.")
        self.w()
        out = []
        for name in self.tools:
            for key, desc in sc.items():
                rs = self.steady_rows(name, key)
                why = st["na"].get(key, {}).get(name)
                if not rs:
                    if key == "1" or (why and "one command" not in why):
                        out.append([name, desc, f"n/a: {why}" if why else "–", "", "", ""])
                    continue
                if any(r.get("error") for r in rs):
                    out.append([name, desc, "failed", "", "", next(r["error"] for r in rs if r.get("error"))])
                    continue
                cpu_s = med([r["cpu_s"] for r in rs])
                run_ms = med([r["run_ns"] / 1e6 for r in rs])
                ctx = med([r["ctx_switches"] for r in rs])
                out.append([name, desc, f"{cpu_s:.2f}", f"{run_ms:.3f}", f"{ctx:g}",
                            f"{ctx / st['window_s']:.1f}"])
        self.w(table(["tool", "scenario", "utime+stime s", "run time ms", "wake-ups", "wake-ups/s"], out))
        p3 = self.steady_rows("podinit", "3")
        if p3 and not any(r.get("error") for r in p3):
            cpu_s = med([r["cpu_s"] for r in p3])
            run_ms = med([r["run_ns"] / 1e6 for r in p3])
            ctx = med([r["ctx_switches"] for r in p3])
            met = cpu_s == 0 and ctx == 0
            self.targets.append(["zero CPU time while idle without probes (3 children)",
                                 f"{cpu_s:.2f} s utime+stime, {run_ms:.3f} ms run time, {ctx:g} wake-ups in "
                                 f"{st['window_s']} s", "met" if met else "missed",
                                 "" if met else "the supervisor wakes up while nothing happens"])

    # ------------------------------------------------------------ 3

    def size(self):
        sz = self.s.get("size")
        if not sz:
            return
        self.w("## 3. Binary size")
        self.w()
        self.w("Size on disk as built or as the package ships it (bytes, and MB = 10^6 bytes); "
               "\"if stripped\": the size after `strip` where the file is not stripped; dynamic "
               "executables also need their shared libraries (listed with their sizes, libc included).")
        self.w()
        ref = sum(p["bytes"] for p in sz.get(REF, []))
        out = []
        for name in self.tools:
            parts = sz.get(name)
            if not parts:
                continue
            total = sum(p["bytes"] for p in parts)
            for i, p in enumerate(parts):
                if p.get("script"):
                    kind = f"script for {p['interpreter']} ({p['interpreter_bytes'] / MB:.2f} MB)"
                    if p.get("package_bytes"):
                        kind += f"; package `{p['package_dir']}` {p['package_bytes'] / MB:.2f} MB"
                    linking, stripped = kind, "–"
                else:
                    linking = "static" if p.get("static") else "dynamic: " + ", ".join(
                        f"{l['lib'].rsplit('/', 1)[-1]} {l['bytes'] / MB:.2f} MB" for l in p.get("libs", []))
                    stripped = "yes" if p.get("stripped") else (
                        f"no (if stripped: {p['stripped_bytes']:,} B = {p['stripped_bytes'] / MB:.2f} MB)"
                        if p.get("stripped_bytes") else "no")
                out.append([name if i == 0 else "", f"`{p['path']}`", f"{p['bytes']:,}", f"{p['bytes'] / MB:.2f}",
                            fx(ratio(total, ref)) if i == 0 else "", linking, stripped])
        if "podinit (slim)" in sz:
            out.append(["podinit (slim)", f"`{sz['podinit (slim)'][0]['path']}`",
                        f"{sz['podinit (slim)'][0]['bytes']:,}", f"{sz['podinit (slim)'][0]['bytes'] / MB:.2f}",
                        fx(ratio(sz["podinit (slim)"][0]["bytes"], ref)), "static" if sz["podinit (slim)"][0].get("static") else "dynamic",
                        "yes" if sz["podinit (slim)"][0].get("stripped") else "no"])
        self.w(table(["tool", "file", "bytes", "MB", "× tini-static", "linking", "stripped"], out))
        if "podinit (slim)" in sz:
            self.w("podinit (slim) is `cargo build --release --no-default-features`: no https probes, no grpc "
                   "probes (a config that asks for them is refused with the reason).")
            self.w()
        if "s6" in sz:
            self.w("s6: s6-svscan plus s6-supervise (one runs per service); × tini-static counts both.")
            self.w()
        for name, what, limit in (("podinit", "every feature", 2.0),
                                  ("podinit (slim)", "`--no-default-features` (no https, no grpc)", 1.0)):
            pp = sz.get(name)
            if not pp:
                continue
            b = pp[0]["bytes"]
            ok = pp[0].get("static") and pp[0].get("stripped")
            met = b <= limit * MB and ok
            self.targets.append([f"static binary, {what}, at most {limit} MB", f"{b:,} B = {b / MB:.2f} MB, "
                                 f"{'static' if pp[0].get('static') else 'dynamic'}, "
                                 f"{'stripped' if pp[0].get('stripped') else 'not stripped'}",
                                 "met" if met else "missed",
                                 "" if met else f"over by {(b - limit * MB) / 1e3:,.0f} kB" if ok else "not static/stripped"])

    # ------------------------------------------------------------ 4

    def reaping(self):
        rp = self.s.get("reaping")
        if not rp:
            return
        self.w("## 4. Reaping")
        self.w()
        self.w(f"`bench/orphans.c` runs as the init's only command (s6 and supervisord: as a service, "
               f"held after it reports) and makes {rp['n']:,} orphans: it forks children one after the other, "
               f"each of which forks B grandchildren that exit at once and then exits without waiting for "
               f"them, so B zombies at a time reparent to PID 1 in a burst. It then polls `/proc` (the "
               f"namespace's) until no process is in state Z, for at most {rp['deadline_s']} s. \"fork loop\" "
               f"is the time to create them all (the load, the same for every init); \"all reaped\" is from "
               f"the first fork until no zombie is left; \"lag\" the difference; \"peak\" the most zombies "
               f"seen at one poll. Median of the rounds; × tini-static of \"all reaped\".")
        self.w()
        for mode, m in rp["modes"].items():
            ref = med([r.get("all_reaped_s") for r in m["rows"].get(REF, [])])
            out = []
            for name in self.tools:
                rs = m["rows"].get(name)
                if not rs:
                    continue
                if any(r.get("error") for r in rs):
                    out.append([name, "failed", "", "", "", "", "", next(r["error"] for r in rs if r.get("error"))])
                    continue
                done = [r["all_reaped_s"] for r in rs]
                doneval = None if any(x is None for x in done) else med(done)
                fork = med([r["fork_loop_s"] for r in rs])
                exit_ = sorted({str(r.get("init_exit_status", "– (held)")) for r in rs})
                out.append([name, f"{fork:.3f}", "not within the deadline" if doneval is None else f"{doneval:.3f}",
                            "–" if doneval is None else fms(doneval - fork, 1),
                            f"{max(r['peak_zombies'] for r in rs):,}", f"{max(r['zombies_left'] for r in rs):,}",
                            fx(ratio(doneval, ref)), ", ".join(exit_)])
            self.w(f"### B = {m['burst']} ({'bursts' if m['burst'] > 1 else 'plain double fork'}), "
                   f"{m['rounds']} round{'s' if m['rounds'] > 1 else ''}")
            self.w()
            self.w(table(["tool", "fork loop s", "all reaped s", "lag ms", "peak zombies", "zombies left",
                          "× tini-static", "init's exit status"], out))
        rows = [r for m in rp["modes"].values() for r in m["rows"].get("podinit", [])]
        if rows:
            ok = all(not r.get("error") and r["zombies_left"] == 0 and r["all_reaped_s"] is not None for r in rows)
            left = max((r.get("zombies_left", 0) for r in rows), default=0)
            times = []
            for m in rp["modes"].values():
                v = med([r.get("all_reaped_s") for r in m["rows"].get("podinit", [])])
                times.append(f"{'–' if v is None else f'{v:.3f}'} s with B = {m['burst']}")
            self.targets.append([f"{rp['n']:,} orphans reaped with none left",
                                 f"{left} left; all reaped in {', '.join(times)}",
                                 "met" if ok else "missed", "" if ok else "zombies left or no result"])

    # ------------------------------------------------------------ 5

    def stop(self):
        sp = self.s.get("stop")
        if not sp:
            return
        self.w("## 5. Stop latency")
        self.w()
        self.w(f"SIGTERM to the init's host pid, once its children (`sleep 100000`, which dies on SIGTERM at "
               f"once) have run for 0.3 s, until `unshare` has exited (the init gone); median of "
               f"{rounds(sp['rounds'])}. podinit with 3 children is a main and 2 sidecars (sidecars are "
               f"stopped after the main, one at a time, in reverse order), and also 3 mains. × tini-static: "
               f"against tini-static with its one child.")
        self.w()
        ref = med([r.get("stop_s") for r in sp["rows"].get(REF, {}).get("1", [])])
        out = []
        labels = [n for n in self.tools] + [k for k in sp["rows"] if k not in self.tools]
        for name in labels:
            row = [name]
            for n in ("1", "3"):
                rs = sp["rows"].get(name, {}).get(n)
                if not rs:
                    why = sp["na"].get(n, {}).get(name)
                    row += [f"n/a: {why}" if why else "–", "", ""]
                    continue
                if any(r.get("error") for r in rs):
                    row += ["failed: " + next(r["error"] for r in rs if r.get("error")), "", ""]
                    continue
                v = med([r["stop_s"] for r in rs])
                row += [fms(v, 1), fx(ratio(v, ref)), ", ".join(sorted({str(r["exit_status"]) for r in rs}))]
            out.append(row)
        self.w(table(["tool", "1 child: ms", "× tini-static", "exit status", "3 children: ms", "× tini-static",
                      "exit status"], out))

    # ------------------------------------------------------------ 7

    def throughput(self):
        tp = self.s.get("throughput")
        if not tp:
            return
        self.w("## 7. Output throughput")
        self.w()
        self.w(f"A child writes {tp['bytes'] / MB:,.0f} MB of 100-byte lines ({tp['lines']:,} lines): "
               f"`{tp['child']}`; as podinit's only main (`command = \"...\"`, run by `/bin/sh -c`, "
               f"`[pod] log = MODE`), podinit's stdout piped into `wc -lc`, its stderr to a file; the raw pipe "
               f"is the same child piped straight into `wc -lc`. Wall time of the whole pipeline, median of "
               f"{rounds(tp['rounds'])}; MB/s and lines/s of the child's payload; × raw pipe of the throughput "
               f"(1.00× = as fast as no podinit at all). In `raw` mode the child writes to podinit's own "
               f"stdout, so it should match the raw pipe; what differs is podinit's start and exit, and noise.")
        self.w()
        raw = tp["rows"].get("raw pipe", [])
        ref = med([r.get("s") for r in raw])
        out = []
        limits = {"raw": 0.95, "prefixed": 0.85, "json": 0.6}
        for label, rs in tp["rows"].items():
            if any(r.get("error") for r in rs):
                out.append([label, "failed", "", "", "", "", "", next(r["error"] for r in rs if r.get("error"))])
                continue
            s = med([r["s"] for r in rs])
            # Each round's ratio against the raw pipe of the same round: the spread.
            per = [ratio(a.get("s"), b["s"]) for a, b in zip(raw, rs)]
            per = [x for x in per if x is not None]
            spread = f"{min(per):.2f}–{max(per):.2f}×" if per else "–"
            out.append([label, f"{s:.3f}", f"{tp['bytes'] / MB / s:,.0f}", f"{tp['lines'] / s:,.0f}",
                        fx(ratio(ref, s)), spread, f"{rs[0]['out_bytes']:,}",
                        "yes" if all(r["lines_ok"] for r in rs) else "NO"])
            mode = label.split('"')[1] if '"' in label else None
            if mode in limits:
                r = ratio(ref, s)
                met = r is not None and r >= limits[mode] and all(x["lines_ok"] for x in rs)
                self.targets.append([f"output `log = \"{mode}\"` at least {limits[mode]}× a bare pipe",
                                     f"{fx(r)} (rounds: {spread}, {rounds(len(rs))})", "met" if met else "missed",
                                     "" if met else ("lines lost" if not all(x["lines_ok"] for x in rs)
                                                     else f"{fx(r / limits[mode]) if r else '?'} of the target")])
        self.w(table(["output", "s", "MB/s", "lines/s", "× raw pipe", "spread over rounds", "bytes out",
                      "every line out"], out))
        self.w("raw's target is 0.95× rather than 1.0×: in raw mode podinit is not in the data path at all, "
               "so what is left is its own start and exit and the noise between rounds.")
        self.w()

    # ------------------------------------------------------------ targets, commands

    def scale(self):
        sc = self.s.get("scale")
        if not sc:
            return
        self.w("## 8. Cost as the pod grows")
        self.w()
        self.w(f"podinit alone, as PID 1, with N sidecars (`sleep 100000`, `hold_until = \"started\"`) "
               f"and one main, each sidecar with a tcp readiness probe every 1 s against one listener "
               f"outside the pod. Ready: from the start until `podinit status` exits 0 (all ready). CPU: "
               f"podinit's own (every thread), over {sc['window_s']:g} s once ready, as % of one core. "
               f"Stop: SIGTERM until podinit has exited (sidecars stop one at a time, in reverse order).")
        self.w()
        rows = []
        base = None
        for n in sc["sizes"]:
            r = sc["rows"].get(str(n), {})
            if r.get("error") or "ready_s" not in r:
                rows.append([str(n), "failed: " + r.get("error", "no result"), "", "", "", "", ""])
                continue
            cpu = 100.0 * r["cpu_ns"] / 1e9 / r["window_s"]
            per = r["VmRSS_kib"] / (n + 1)
            if base is None:
                base = (n, r["VmRSS_kib"])
            extra = (r["VmRSS_kib"] - base[1]) / (n - base[0]) if n > base[0] else None
            rows.append([str(n), f"{r['ready_s']:.2f}", f"{cpu:.2f} %", fmb_kib(r["VmRSS_kib"]),
                         f"{extra:.1f} KiB" if extra is not None else "–",
                         "–" if r["stop_s"] is None else f"{r['stop_s']:.2f}", str(r["threads"])])
        self.w(table(["sidecars", "start to all ready s", "CPU, % of one core", "RSS MB",
                      "RSS per added entry", "SIGTERM to exit s", "threads"], rows))
        self.w()
        cpus = []
        for n in sc["sizes"]:
            r = sc["rows"].get(str(n), {})
            if "cpu_ns" in r:
                cpus.append((n, 100.0 * r["cpu_ns"] / 1e9 / r["window_s"]))
        top = max((c for _, c in cpus), default=0.0) or 1.0
        bar = [f"{n:>4} | {'#' * max(1, round(60 * c / top))} {c:.2f} %" for n, c in cpus]
        shapes = []
        for (n0, c0), (n1, c1) in zip(cpus, cpus[1:]):
            growth = (c1 / c0) / (n1 / n0) if c0 > 0 else None
            if growth is None:
                continue
            shape = ("linear or better" if growth <= 1.0 else
                     "about linear" if growth <= 1.2 else "worse than linear")
            shapes.append(shape)
            self.w(f"- From {n0} to {n1} sidecars, CPU grows {c1 / c0:.1f}× for {n1 / n0:.0f}× the "
                   f"entries: {shape} (cost per entry × {growth:.2f}).")
        if shapes:
            self.w()
        at100 = next((c for n, c in cpus if n == 100), None)
        if at100 is not None:
            self.targets.append(["CPU with 100 sidecars, each with a 1 s tcp probe, at most 1 % of one core",
                                 f"{at100:.2f} %", "met" if at100 <= 1.0 else "missed",
                                 "" if at100 <= 1.0 else f"{at100 / 1.0:.2f}× the target"])
        if shapes:
            worse = "worse than linear" in shapes
            self.targets.append(["CPU grows linearly (or better) with the entries",
                                 "; ".join(f"{a[0]}→{b[0]}: {sh}" for a, b, sh in zip(cpus, cpus[1:], shapes)),
                                 "missed" if worse else "met", ""])
        if self.plot:
            self.w(f"![podinit's CPU and memory against the number of sidecars]({self.plot})")
            self.w()
        if bar:
            self.w("CPU against N (bar lengths relative to the largest):")
            self.w()
            self.w("```")
            for line in bar:
                self.w(line)
            self.w("```")
            self.w()

    # ------------------------------------------------------------ 9

    def syscalls(self):
        sy = self.s.get("syscalls")
        if not sy:
            return
        self.w("## 9. System calls")
        self.w()
        if sy.get("na"):
            self.w(f"Not measured: {sy['na']}.")
            self.w()
            return
        self.w("`strace -f -c -- X -- true`: every system call of the whole run, every process (the child "
               "`true` included, and the failed `execve`s of a `PATH` search), not as PID 1 (strace is the "
               "tracer). As PID 1: `strace -f -c -- unshare --pid --fork --mount-proc --kill-child X -- "
               "true` minus the same with bare `true` (what unshare itself makes). Median of "
               f"{rounds(sy['rounds'])}; the busiest calls of the last round.")
        self.w()
        out = []
        for label, r in sy["rows"].items():
            if r.get("error"):
                out.append([label, "failed", "", r["error"]])
                continue
            host = med(r["host"])
            bare1 = med(sy["rows"].get("bare", {}).get("pid1_with_unshare", []))
            pid1 = med(r["pid1_with_unshare"])
            own1 = "–" if label == "bare" or pid1 is None or bare1 is None else f"{pid1 - bare1:g}"
            top = sorted(r["by_call"].items(), key=lambda kv: -kv[1])[:5]
            out.append([label, f"{host:g}", own1, ", ".join(f"{k} {v}" for k, v in top)])
        self.w(table(["tool", "whole run, not PID 1", "as PID 1 (minus unshare)", "busiest calls"], out))
        pr = sy["rows"].get("podinit", {})
        if pr.get("host"):
            n = med(pr["host"])
            tini = med(sy["rows"].get(REF, {}).get("host", []))
            self.targets.append(["at most 100 system calls for `podinit -- true` (whole run)",
                                 f"{n:g}" + (f" (tini-static {tini:g})" if tini else ""),
                                 "met" if n <= 100 else "missed", "" if n <= 100 else f"{n / 100:.1f}× the target"])

    # ------------------------------------------------------------ 10

    def soak(self):
        so = self.s.get("soak")
        if not so or so.get("error"):
            if so:
                self.w(f"## 10. Soak\n\nfailed: {so['error']}\n")
            return
        self.w("## 10. Soak")
        self.w()
        self.w(f"podinit as PID 1 for {so['duration_s']:g} s with two crash-looping sidecars (one exits 3 "
               f"after 0.5 s, one SIGKILLs itself after 1.3 s), one whose readiness probe flaps every 2 s and "
               f"whose liveness probe fails for 1 s in every 10 (so it is killed and restarted), one that floods "
               f"its output with numbered lines (500 every 50 ms), and a main that sleeps for the whole run "
               f"(ignoring the signals below). Every 0.05–0.5 s the harness either sends podinit a SIGHUP, "
               f"SIGUSR1, SIGUSR2 or SIGWINCH (forwarded to the main) or SIGKILLs the flapping sidecar. "
               f"podinit's VmRSS, open descriptors and threads are read every "
               f"{so['samples'][1]['t_s'] - so['samples'][0]['t_s'] if len(so['samples']) > 1 else 0:.0f} s; "
               f"the first {so['first_s']:g} s against the last {so['first_s']:g} s (medians; for the "
               f"descriptors also the fewest seen in each window, which is what the target compares: a "
               f"crash-looping child alive at a sample holds its two pipes and its pidfd, so the median "
               f"moves with them, while a leak raises the floor).")
        self.w()
        self.w(f"Signals sent: {so['signals_sent']:,}; SIGKILLs: {so['kills']:,}; starts logged per entry: "
               f"{', '.join(f'{k} {v:,}' for k, v in so['restarts'].items())}; exit status "
               f"{so['exit_status']}; flood lines written {so['flood_total'] or 0:,}, in the output "
               f"{so['flood_seen']:,} ({'all, in order' if so['lines_ok'] else 'LOST OR OUT OF ORDER'}); "
               f"zombies seen at two samples in a row: {len(so['stuck_zombies'])}.")
        self.w()
        first = [x for x in so["samples"] if x["t_s"] <= so["first_s"]]
        last = [x for x in so["samples"] if x["t_s"] >= so["duration_s"] - 1.0 - so["first_s"]]
        rows, ok, lower = [], True, []
        fewest = lambda xs: min(xs) if xs else None  # noqa: E731
        # VmRSS is judged; its two parts are shown, so that a change can be
        # told apart: heap and stacks (RssAnon) or pages of the program file
        # that a path taken late touched for the first time (RssFile).
        parts = [(k, f"of it {n} KiB", med, False) for k, n in (("RssAnon_kib", "private (RssAnon)"),
                                                                 ("RssFile_kib", "file pages (RssFile)"))
                 if all(x.get(k) is not None for x in so["samples"])]
        for key, label, stat, judged in (("VmRSS_kib", "VmRSS KiB", med, True), *parts,
                                         ("fds", "open descriptors, median", med, False),
                                         ("fds", "open descriptors, fewest", fewest, True),
                                         ("threads", "threads", med, True)):
            a = stat([x[key] for x in first])
            b = stat([x[key] for x in last])
            within = a is not None and b is not None and abs(b - a) <= 0.05 * a
            if not judged:
                rows.append([label, f"{a:g}" if a is not None else "–", f"{b:g}" if b is not None else "–",
                             f"{100 * (b - a) / a:+.1f} %" if a and b is not None else "–",
                             f"{min(x[key] for x in so['samples']):g}–{max(x[key] for x in so['samples']):g}"])
                continue
            ok = ok and within
            if not within and a is not None and b is not None and b < a:
                lower.append(label)
            rows.append([label, f"{a:g}" if a is not None else "–", f"{b:g}" if b is not None else "–",
                         f"{100 * (b - a) / a:+.1f} %" if a and b is not None else "–",
                         f"{min(x[key] for x in so['samples']):g}–{max(x[key] for x in so['samples']):g}"])
        self.w(table(["", f"first {so['first_s']:g} s", f"last {so['first_s']:g} s", "change", "range"], rows))
        clean = ok and not so["stuck_zombies"] and so["lines_ok"] and so["exit_status"] == 0
        self.targets.append([f"soak of {so['duration_s']:g} s: RSS, descriptors and threads within 5 % of the "
                             f"first {so['first_s']:g} s, no zombie, no line lost",
                             "; ".join(f"{r[0]} {r[3]}" for r in rows if "median" not in r[0]) +
                             f"; {len(so['stuck_zombies'])} zombies; lines {'all' if so['lines_ok'] else 'LOST'}; "
                             f"exit {so['exit_status']}",
                             "met" if clean else "missed",
                             f"{' and '.join(lower)} lower at the end, not higher: each crash-looping child "
                             f"alive at a sample holds its pipes and pidfd, so the count moves with them"
                             if lower else ""])

    # ------------------------------------------------------- reliability

    def reliability(self):
        """Static text: the figures of tests/container_faults.rs, which `cargo test` runs (and so
        CI), not bench/run. Update it by hand when those tests or their figures change."""
        self.w("## Reliability")
        self.w()
        self.w("Not measured by `bench/run`: the faults of `tests/container_faults.rs`, which `cargo test` "
               "(and so CI) runs against the debug build, podinit as PID 1 of a fresh PID namespace "
               "(`unshare --pid --fork --mount-proc --kill-child`) and, where a row says so, not as PID 1 "
               "(child subreaper). Ranges over 8 runs of the file; the memory figures are VmRSS of the "
               "debug build, 11,196 to 11,612 KiB before the fault. The bound on memory is derived from "
               "podinit's documented buffers (`src/output/mod.rs`, `src/output/log.rs`): per child pipe a "
               "read of at most 64 KiB, an unfinished line of at most 64 KiB and a framed buffer kept up "
               "to 1 MiB; 1,024 of its own lines of at most 4,096 bytes; plus 4 MiB of slack.")
        self.w()
        self.w(table(["fault", "runs as", "survived", "memory during the fault", "lines lost", "processes left"], [
            ["log reader stalls: podinit's stdout never read, its stderr read for 100 lines then no more, "
             "while the main's two writers write numbered lines as fast as the pipes take them; SIGTERM "
             "after 2 s of stall (the scenario is a 60 s stall: the test holds it only until nothing "
             "changes but the clock)",
             "PID 1",
             "yes: the writers block; the main stops (its TERM trap exits 7), then the sidecar; podinit "
             "exits 7, 2.32 to 2.39 s after SIGTERM, inside the 5 s grace period (2 s of it the "
             "documented wait for output that cannot be written)",
             "+396 to +696 KiB while stalled (bound +12,800 KiB for 4 child pipes)",
             "0 in the middle: 320 to 363 stdout and 420 to 486 stderr lines out, numbered without a "
             "gap, only the last one cut by the full pipe; what the writers had put in their own pipes "
             "is not written once the 2 s are spent (README, \"Decisions\")",
             "0 (both pipes reach end of file)"],
            ["podinit's own messages while its stderr is stalled: a sidecar exiting at once under a zero "
             "backoff, 1,027 to 1,036 runs of three messages each; then the reader comes back",
             "PID 1",
             "yes: the sidecar is restarted all along; exit 0 on SIGTERM",
             "+72 to +96 KiB (bound +12,800 KiB)",
             "1,934 to 1,952 of podinit's own lines dropped, each counted in the `warning: N of podinit's "
             "own log lines were dropped` line written when the reader came back (messages out + "
             "reported dropped = 3 per run); none of the children's",
             "0"],
            ["podinit's stderr a pipe with no reader (EPIPE), its stdout a file or closed too; the sidecar "
             "and the main each write 20,000 lines to stderr",
             "PID 1 and subreaper",
             "yes: no SIGPIPE death, the sidecar stopped after the main, podinit exits with the main's 7",
             "–",
             "all of stderr (it has no reader); none of stdout's lines",
             "0"],
            ["a main that forks 10,000 times on SIGTERM: half exit at once, half leave its process group "
             "(setsid), ignore TERM and sleep",
             "PID 1 and subreaper",
             "yes: podinit exits with the main's 42, 2.8 to 5.5 s after SIGTERM (a sidecar's stop, held "
             "by the test while it counts, included); no zombie of the storm lingers",
             "–",
             "–",
             "0 of the 5,000 sleepers"],
        ]))

        self.w()
        self.w("Also run by `cargo test`, PID 1 unless said: a stalled log reader with a 1 s grace "
               "period (podinit exits 7, the main's status, within 1.5 s of SIGTERM; with the fixed 2 s "
               "wait for stalled output it took 2.0 s, past the grace, where `docker stop -t 1` would "
               "have SIGKILLed it); not as PID 1, podinit itself SIGKILLed or killed by a SIGSEGV from "
               "`kill(1)` (every process it started dies with it: 0 left); sixteen clients asking for "
               "the status report without pause during a start sequence of forty inits (about 0.25 s; "
               "29 s or more when the event loop served every ready request before its queue of "
               "events); an `fd` probe on each descriptor from 3 to 40 with a program that does not "
               "exist (127 and \"not found\" for each; descriptor 15 gave 1 before the descriptor was "
               "settled in the parent).")
        self.w()
        self.w("Bad input tried, each with one error and nothing started: the config errors of "
               "`tests/config_errors.rs` and `tests/config_limits.rs` (27 tests, every error with "
               "file:line:col, exit 2), the fuzz seeds and regressions replayed by "
               "`tests/config_fuzz_regressions.rs` (as root and not), and on the HTTP endpoint a request "
               "that is not HTTP/1 (400), a method other than GET and HEAD (405), a head over 8 KiB "
               "(431) and slowloris clients (cut at the 2 s deadline). Lines lost in all of the above: "
               "0 of the children's, except what a reader that never comes back leaves unwritten "
               "(counted above).")
        self.w()
        # tests/client_flood.rs, by hand as above.
        self.w('Connections: figures of the integration test `tests/client_flood.rs` (debug build, podinit as PID 1 under `ulimit -n 256`, so 16 connections each for the status socket and the HTTP endpoint; docs/control.md, "Connections"), not of `bench/run`. For 4 s, 150 silent HTTP and 150 silent status-socket connections are kept open (each one podinit closes is opened again), with a slowloris on each, while a sidecar crash-loops and an exec readiness probe runs every 100 ms.')
        self.w()
        self.w('- Connections podinit held at most: 34 to 41 (caps 16 + 16, plus those waiting for an idle connection\'s place); its descriptors at most 62 to 66 of 256 (25 before the flood). Before the caps: 234 connections, all 256 descriptors, and the sidecar\'s restarts and the probe failed with "Too many open files".')
        self.w('- Connections told `busy` / 503 and closed: about 3,600 to 6,300 of each kind in 4 s.')
        self.w("- During the flood: 12 or 13 restarts of the sidecar and 37 to 39 probe runs; `GET /livez` answered 200 19 times of 19 (1 of 19 when a new connection is refused rather than taking an idle one's place).")
        self.w('- With 24 clients asking the status socket for the report of a 301-entry pod in a loop, about half of those requests (some 5,000) were told the request queue is full, and all 150 `GET /livez` and 150 `GET /readyz` were answered (130 of 150 `/livez` failed when it asked for the report).')

    def target_table(self):
        self.w("## Targets")
        self.w()
        if not self.targets:
            self.w("No target measured in this run.")
            self.w()
            return
        self.w(table(["target", "measured", "", "note"], self.targets))

    def commands(self):
        self.w("## Commands")
        self.w()
        self.w("`$WORK` is the scratch directory of the run. `bench/run` builds podinit with `cargo build "
               "--release --target x86_64-unknown-linux-musl` (and, for its size only, the same with "
               "`--no-default-features`), installs the peers and tools (`apt-get install tini dumb-init "
               "catatonit s6 supervisor hyperfine strace gnuplot-nox`, `cargo install horust --locked`) and "
               "runs `bench/bench.py`, then this report (`bench/report.py`) and section 8's plot "
               "(`bench/scale.gp`).")
        self.w()
        self.w("```")
        for label, cmd in self.d["commands"].items():
            self.w(f"{label}: {cmd}")
        self.w("```")
        self.w()
        self.w("### Configurations (3 children, with probes where the tool has them)")
        self.w()
        for name, smp in self.d.get("samples", {}).items():
            self.w(f"**{name}**: `{smp['argv']}`")
            self.w()
            for path, text in smp["files"].items():
                self.w(f"`{path}`:")
                self.w()
                self.w("```")
                self.w(text.rstrip("\n"))
                self.w("```")
                self.w()

    def render_text(self):
        self.header()
        body_start = len(self.lines)
        self.startup()
        self.memory()
        self.size()
        self.reaping()
        self.stop()
        self.cpu()
        self.throughput()
        self.scale()
        self.syscalls()
        self.soak()
        body = self.lines[body_start:]
        self.lines = self.lines[:body_start]
        self.target_table()
        self.lines += body
        self.reliability()
        self.commands()
        return tidy("\n".join(self.lines).rstrip("\n") + "\n")


def scale_tsv(d):
    """Section 8 as columns for bench/scale.gp: sidecars, CPU % of one core, RSS MB."""
    sc = d["sections"].get("scale") or {"sizes": [], "rows": {}}
    out = ["# sidecars\tcpu_percent\trss_mb"]
    for n in sc["sizes"]:
        r = sc["rows"].get(str(n), {})
        if "cpu_ns" in r:
            out.append(f"{n}\t{100.0 * r['cpu_ns'] / 1e9 / r['window_s']:.4f}\t{r['VmRSS_kib'] * 1024 / MB:.3f}")
    return "\n".join(out) + "\n"


def main():
    args = sys.argv[1:]
    if args and args[0] == "--scale-tsv":
        with open(args[1]) as f:
            sys.stdout.write(scale_tsv(json.load(f)))
        return
    with open(args[0]) as f:
        d = json.load(f)
    r = Report(d)
    if len(args) == 3 and args[1] == "--plot":
        r.plot = args[2]
    sys.stdout.write(r.render_text())


if __name__ == "__main__":
    main()
