#!/usr/bin/python3
"""bench.py: vigil's benchmark suite (start-up, memory, audit cost), run by
bench/run.sh.  Method and latest numbers: bench/README.md.

Every figure is a ratio or a difference between commands timed in the same
interleaved rounds (harness.py); absolute times mean nothing across runs
on these VMs.  Prints compact tables, writes results JSON and Markdown.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import diag  # noqa: E402
import tools  # noqa: E402
from harness import Cmd, compare  # noqa: E402
from report import Table, fmt  # noqa: E402

# Budgets are seconds of timed rounds per comparison; each comparison gets
# at least min_rounds rounds whatever its budget (plus the warm-up round).
FULL = dict(startup=60, memory=15, workload=45, open_loop=120, unaudited=45, pinned=30,
            min_rounds=3, max_rounds=150,
            open_n=200_000, stat_n=1_000_000, getpid_n=5_000_000, diag_n=20_000)
QUICK = dict(startup=8, memory=3, workload=4, open_loop=8, unaudited=5, pinned=4,
             min_rounds=3, max_rounds=60,
             open_n=20_000, stat_n=200_000, getpid_n=1_000_000, diag_n=3_000)

IMPORTS = "import json, email, http.client, xml.dom.minidom, unittest, asyncio"
HELLO_C = '#include <stdio.h>\nint main(void) { printf("hello\\n"); return 0; }\n'
TARGET_STARTUP = "vigil adds no more than bwrap"
TARGET_AUDIT = 0.6      # vigil's added time / strace --seccomp-bpf's
TARGET_UNAUDITED = 3.0  # % over bare per unaudited call


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def ms(s):
    return None if s is None else s * 1e3


class Bench:
    def __init__(self, cfg, env, scratch, peakrss):
        self.cfg = cfg
        self.peakrss = peakrss
        self.env = env
        self.scratch = scratch
        self.errlog = os.path.join(scratch, "stderr.txt")
        # The environment vigil gives its candidates, for every tool alike.
        self.penv = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin",
                     "LANG": "C.UTF-8", "HOME": os.path.join(scratch, "home"), "TMPDIR": os.path.join(scratch, "tmp"),
                     "PYTHONDONTWRITEBYTECODE": "1"}
        # Not the work dir: vigil refuses to expose $HOME as a candidate's cwd.
        os.makedirs(self.penv["HOME"], exist_ok=True)
        os.makedirs(self.penv["TMPDIR"], exist_ok=True)
        self.tables = []
        self.data = {"config": cfg, "machine": machine()}
        self.targets = []

    def compare(self, cmds, budget):
        t0 = time.time()
        compare(cmds, budget, self.cfg["min_rounds"], self.cfg["max_rounds"], self.errlog, log)
        log("  took %.0f s" % (time.time() - t0))
        for c in cmds:
            if c.error:
                log("  %s: not measured: %s" % (c.label, c.error))
        return {c.key: c for c in cmds}

    def target(self, what, goal, value, ok):
        self.targets.append((what, goal, value, "n/a" if ok is None else ("met" if ok else "MISSED")))

    # ---- 1. start-up ----
    def startup(self):
        log("start-up: /bin/true under each tool")
        cmds = [Cmd(k, label, argv, self.penv) for k, label, argv in tools.startup_tools(self.env)]
        by = self.compare(cmds, self.cfg["startup"])
        bare = by["bare"].median()
        t = Table("Start-up: /bin/true (%d runs each, interleaved)" % len(by["bare"].times),
                  ["tool", "median ms", "IQR ms", "added ms", "x bare"])
        out = {}
        for c in cmds:
            if c.error:
                t.add(c.label + " (not run: %s)" % c.error, "-", "-", "-", "-")
                continue
            m = c.median()
            out[c.key] = {"median_ms": ms(m), "iqr_ms": ms(c.iqr()), "added_ms": ms(m - bare),
                          "ratio": m / bare, "runs": len(c.times),
                          "times_ms": [round(ms(x), 3) for x in c.times]}
            t.add(c.label, fmt(ms(m)), fmt(ms(c.iqr())), fmt(ms(m - bare)), fmt(m / bare, "%.2f"))
        self.tables.append(t)
        self.data["startup"] = out
        if "vigil" in out and "bwrap" in out:
            v, b = out["vigil"]["added_ms"], out["bwrap"]["added_ms"]
            self.target("start-up", TARGET_STARTUP, "vigil +%.1f ms, bwrap +%.1f ms" % (v, b),
                        v <= b)

    # ---- 2. memory ----
    def memory(self):
        log("memory: a static empty candidate under each tool")
        cand = [self.env.calls, "getpid", "0"]
        self.mem_cmds = []
        for k, label, argv in tools.startup_tools(self.env, cand, bind=self.env.calls):
            out = os.path.join(self.scratch, "rss-%s.txt" % k)
            c = Cmd(k, label, [self.peakrss, out] + argv, self.penv)
            c.rss_file = out
            self.mem_cmds.append(c)
        self.compare(self.mem_cmds, self.cfg["memory"])

    def memory_table(self):
        t = Table("Peak memory (MiB)", ["run", "tree max RSS", "vigil's VmHWM"],
                  "tree max RSS: ru_maxrss from wait4() in a static launcher: the largest of "
                  "the tool's processes and the candidate's (a static program of <1 MiB), "
                  "median of the runs.  vigil's VmHWM: the vigil process alone (not the "
                  "candidate), polled every 1 ms during the warm-up run of each workload "
                  "(a lower bound; too coarse for runs of a few ms, hence not given for those).")
        out = {}
        for c in self.mem_cmds:
            if c.error:
                continue
            with open(c.rss_file) as f:
                kib = [int(l) for l in f.read().split()][1:]  # the first is the warm-up's
            if not kib:
                continue
            rss = statistics.median(kib) / 1024
            out[c.key] = {"tree_maxrss_mib": rss}
            t.add(c.label + ", empty candidate", fmt(rss, "%.2f"), "-")
        for wl, c in self.vigil_workload_cmds:
            if c.hwm_kib:
                out["vigil:" + wl] = {"own_hwm_mib": c.hwm_kib / 1024}
                t.add("vigil run, " + wl, "-", fmt(c.hwm_kib / 1024, "%.2f"))
        self.tables.append(t)
        self.data["memory"] = out
        if "vigil" in out and "bwrap" in out:
            v, b = out["vigil"]["tree_maxrss_mib"], out["bwrap"]["tree_maxrss_mib"]
            self.target("supervisor memory", "no more than bwrap's (under 2 MiB)",
                        "vigil %.2f MiB, bwrap %.2f MiB" % (v, b), v <= b)

    # ---- 3. audited workloads ----
    def workloads(self):
        with open(os.path.join(self.env.work, "hello.c"), "w") as f:
            f.write(HELLO_C)
        n = self.cfg["open_n"]
        return [
            ("py-start", "python3 -c pass", lambda tag: ["/usr/bin/python3", "-c", "pass"],
             self.cfg["workload"]),
            ("py-import", "python3 -c '%s'" % IMPORTS,
             lambda tag: ["/usr/bin/python3", "-c", IMPORTS], self.cfg["workload"]),
            ("find", "find /usr/lib -name '*.so*'",
             lambda tag: ["/usr/bin/find", "/usr/lib", "-name", "*.so*"], self.cfg["workload"]),
            # -oFILE in one argument: vigil binds an existing file named by an
            # argument read-only, so a second run could not overwrite it.
            ("gcc", "gcc -O2 hello.c (compile and link)",
             lambda tag: ["/usr/bin/gcc", "-O2", "-o" + tag + ".out", "hello.c"],
             self.cfg["workload"]),
            ("open-loop", "%d x open+close, static binary" % n,
             lambda tag: [self.env.calls, "open", str(n)], self.cfg["open_loop"]),
        ]

    def audited(self):
        self.vigil_workload_cmds = []
        self.workload_argv0 = {}
        self.data["audited"] = {}
        for wl, desc, argv_of, budget in self.workloads():
            log("audited workload %s: %s" % (wl, desc))
            cmds = []
            for key, label, wrap in self.env.audit_tools():
                # Plain strace stops all 185k calls of find and every close of
                # the loop: minutes per run, and it is not the fair peer.
                if (wl in ("find", "open-loop") and key == "strace") or \
                        (wl == "open-loop" and key == "vigil-nh"):
                    continue
                tag = "%s-%s" % (wl, key)
                cmds.append(Cmd(key, label, wrap(argv_of(tag), tag), self.penv, hwm=key == "vigil"))
                cmds.append(Cmd(key + ":empty", label, wrap([self.env.calls, "getpid", "0"],
                                                            tag + "-empty"), self.penv))
            by = self.compare(cmds, budget)
            self.workload_argv0[wl] = argv_of("x")[0]
            self.data["audited"][wl] = self.derive(wl, desc, argv_of, by)
            if "vigil" in by and not by["vigil"].error:
                self.vigil_workload_cmds.append((wl, by["vigil"]))
        self.audited_tables()

    def stopped(self, wl, key, argv_of, by):
        """How many calls tool key stopped in workload wl."""
        tag = "%s-%s" % (wl, key)
        if key.startswith("vigil"):
            got = self.env.vigil_counts(tag)
            if got and got[1]:
                log("  warning: vigil refused %d calls in %s" % (got[1], wl))
            return got[0] if got else None
        if key == "bare":
            return None
        if wl == "open-loop":
            # Exact by construction: the static loop makes one openat (and one
            # close, which only plain strace stops) per iteration.
            empty = self.env.strace_count(by[key + ":empty"].argv, self.penv, self.scratch)
            per = 2 if key == "strace" else 1
            return None if empty is None else empty + per * self.cfg["open_n"]
        return self.env.strace_count(by[key].argv, self.penv, self.scratch)

    def derive(self, wl, desc, argv_of, by):
        out = {"desc": desc}
        bare, bare0 = by["bare"].median(), by["bare:empty"].median()
        for key in [k for k in by if ":" not in k]:
            c, c0 = by[key], by[key + ":empty"]
            if c.error or c0.error or bare is None:
                out[key] = {"error": c.error or c0.error}
                continue
            m, m0 = c.median(), c0.median()
            added, fixed = m - bare, m0 - bare0
            n = self.stopped(wl, key, argv_of, by)
            out[key] = {"median_ms": ms(m), "iqr_ms": ms(c.iqr()), "runs": len(c.times),
                        "times_ms": [round(ms(x), 3) for x in c.times],
                        "added_ms": ms(added), "ratio": m / bare, "fixed_ms": ms(fixed),
                        "stopped": n,
                        "us_per_call": (added - fixed) * 1e6 / n if n else None}
        return out

    def audited_tables(self):
        keys = [k for k, _, _ in self.env.audit_tools() if k != "bare"]
        t1 = Table("Audited workloads: median time added over bare, ms (x bare)",
                   ["workload", "bare ms"] + keys,
                   "vigil = vigil run as users run it; vigil-nh = the same with --artifact "
                   "naming a 2-byte file, so that vigil does not hash the command's binary "
                   "first (the open loop's binary is the empty candidate's: no need).  "
                   "strace-sc = strace -f --seccomp-bpf -e trace=%file,%network,%process (the "
                   "issue's fair peer); strace-same = strace -f --seccomp-bpf -e trace=<exactly "
                   "the calls vigil stops>.")
        t2 = Table("Audit cost per stopped call, and vigil's added time over strace's",
                   ["workload", "vigil calls", "us/call", "strace-sc stops", "us/stop",
                    "strace-same stops", "us/stop", "/sc whole", "/sc audit", "/same audit"],
                   "us/call = (added - the tool's own start-up cost, timed in the same rounds "
                   "with an empty static candidate) / calls the tool stopped; vigil's from "
                   "vigil-nh.  /sc whole = vigil's added time / strace-sc's, whole runs; "
                   "/sc audit and /same audit = the same with each tool's start-up cost (and "
                   "vigil's hashing) left out: the target's measure (<= %.1f)." % TARGET_AUDIT)
        for wl, r in self.data["audited"].items():
            cells = [wl, fmt(r.get("bare", {}).get("median_ms"))]
            for k in keys:
                x = r.get(k)
                cells.append("-" if not x or "error" in x else
                             "+%s (%.2f)" % (fmt(x["added_ms"]), x["ratio"]))
            t1.add(*cells)
            v, nh = r.get("vigil", {}), r.get("vigil-nh") or r.get("vigil", {})
            sc, same = r.get("strace-sc", {}), r.get("strace-same", {})
            ratios = {"whole": _ratio(v, sc, False), "audit": _ratio(nh, sc, True),
                      "same_audit": _ratio(nh, same, True)}
            r["vigil_over_strace"] = ratios
            if ratios["audit"] is not None:
                self.target("audit cost, " + wl, "<= %.1fx strace-sc's added time" % TARGET_AUDIT,
                            "%.2fx (whole runs %s)" % (ratios["audit"], fmt(ratios["whole"], "%.2fx")),
                            ratios["audit"] <= TARGET_AUDIT)
            t2.add(wl, fmt(nh.get("stopped"), "%d"), fmt(nh.get("us_per_call")),
                   fmt(sc.get("stopped"), "%d"), fmt(sc.get("us_per_call")),
                   fmt(same.get("stopped"), "%d"), fmt(same.get("us_per_call")),
                   *[fmt(ratios[k], "%.2f") for k in ("whole", "audit", "same_audit")])
        self.tables += [t1, t2, self.hashing_table()]

    def hashing_table(self):
        """What vigil's default artifact hashing adds: vigil - vigil-nh."""
        t = Table("Start-up hashing: vigil run - vigil run --artifact <tiny>, ms",
                  ["workload", "command binary", "MB", "hashing ms"],
                  "Before starting the candidate, vigil computes the SHA-256 of every argument "
                  "that names a regular file, the command's own binary included.")
        for wl, r in self.data["audited"].items():
            v, nh = r.get("vigil", {}), r.get("vigil-nh", {})
            if v.get("added_ms") is None or nh.get("added_ms") is None:
                continue
            exe = os.path.realpath(self.workload_argv0[wl])
            size = os.path.getsize(exe) / 1e6
            cost = v["added_ms"] - nh["added_ms"]
            r["hashing_ms"] = cost
            t.add(wl, exe, "%.1f" % size, "%.1f" % cost)
        return t

    # ---- 4. unaudited calls ----
    def unaudited(self):
        t = Table("Unaudited calls: cost per call, ns (and % over bare)",
                  ["loop", "calls", "bare ns", "vigil run", "strace-same", "bwrap"],
                  "per call = (time with N calls - time with 0 calls) / N for each tool, so "
                  "start-up costs cancel; target: vigil within %.0f%% of bare.  strace-same "
                  "has a seccomp filter of the same calls and nothing else; bwrap has vigil's "
                  "namespaces and mounts and no filter." % TARGET_UNAUDITED)
        out = {}
        tools_ = [x for x in self.env.audit_tools() if x[0] in ("bare", "vigil", "strace-same")]
        tools_.append(("bwrap", "bwrap", self.env.bwrap_run))
        for mode in ("stat", "getpid"):
            n = self.cfg[mode + "_n"]
            log("unaudited loop: %d x %s" % (n, mode))
            cmds = []
            for key, label, wrap in tools_:
                tag = "%s-%s" % (mode, key)
                cmds.append(Cmd(key, label, wrap([self.env.calls, mode, str(n)], tag), self.penv))
                cmds.append(Cmd(key + ":empty", label, wrap([self.env.calls, mode, "0"], tag + "0"),
                                self.penv))
            by = self.compare(cmds, self.cfg["unaudited"])
            per = {}
            for key, _, _ in tools_:
                c, c0 = by[key], by[key + ":empty"]
                if not (c.error or c0.error):
                    per[key] = (c.median() - c0.median()) * 1e9 / n
            out[mode] = {"n": n, "ns_per_call": per}
            cells = [mode, str(n), fmt(per.get("bare"))]
            for key in ("vigil", "strace-same", "bwrap"):
                if key in per and "bare" in per:
                    pct = (per[key] / per["bare"] - 1) * 100
                    out[mode].setdefault("pct_over_bare", {})[key] = pct
                    cells.append("%.1f (%+.1f%%)" % (per[key], pct))
                else:
                    cells.append("-")
            t.add(*cells)
            pct = out[mode].get("pct_over_bare", {}).get("vigil")
            self.target("unaudited %s" % mode, "within %.0f%% of bare" % TARGET_UNAUDITED,
                        fmt(pct, "%+.1f%%"), None if pct is None else pct <= TARGET_UNAUDITED)
        self.tables.append(t)
        self.data["unaudited"] = out

    # ---- output ----
    def targets_table(self):
        t = Table("Targets (from the issue)", ["measure", "target", "measured", "verdict"])
        for row in self.targets:
            t.add(*row)
        self.tables.append(t)


def _ratio(a, b, audit_only):
    """a's added time over b's; audit_only leaves each one's start-up out."""
    if a.get("added_ms") is None or not b.get("added_ms"):
        return None
    if not audit_only:
        return a["added_ms"] / b["added_ms"]
    den = b["added_ms"] - b["fixed_ms"]
    return (a["added_ms"] - a["fixed_ms"]) / den if den > 0 else None


def machine():
    info = {"kernel": os.uname().release, "cpus": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            info["cpu"] = next((l.split(":", 1)[1].strip() for l in f
                                if l.startswith("model name")), "?")
    except OSError:
        pass
    return info


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the ~2-minute version")
    ap.add_argument("--root", required=True, help="the vigil source tree")
    ap.add_argument("--vigil", required=True)
    ap.add_argument("--calls", required=True, help="the static loop program, built")
    ap.add_argument("--peakrss", required=True, help="the static peak-RSS launcher, built")
    ap.add_argument("--scratch", required=True, help="an empty dir on a tmpfs")
    ap.add_argument("--out", required=True, help="results dir (latest.json, summary.md)")
    ap.add_argument("--only", help="comma list of sections: startup,memory,audited,"
                                   "unaudited,diag")
    a = ap.parse_args()
    cfg = QUICK if a.quick else FULL
    work = os.path.join(a.scratch, "work")
    os.makedirs(work, exist_ok=True)
    os.chmod(work, 0o777)  # the sandbox's user is unprivileged on the host
    os.makedirs(os.path.join(a.scratch, "logs"), exist_ok=True)
    env = tools.Env(a.root, a.vigil, work, os.path.join(a.scratch, "logs"), a.calls,
                    base=os.environ.get("VIGIL_BASE") or None)
    os.chdir(work)
    b = Bench(cfg, env, a.scratch, a.peakrss)
    only = set(a.only.split(",")) if a.only else None

    def want(s):
        return only is None or s in only
    if want("startup"):
        b.startup()
    if want("memory"):
        b.memory()
    b.vigil_workload_cmds = []
    if want("audited"):
        b.audited()
    if want("memory"):
        b.memory_table()
    if want("unaudited"):
        b.unaudited()
    if want("diag"):
        b.tables += diag.run(b, log)
    b.targets_table()

    text = "\n\n".join(t.text() for t in b.tables)
    print(text)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "latest.json"), "w") as f:
        json.dump(b.data, f, indent=1, default=str)
    with open(os.path.join(a.out, "summary.md"), "w") as f:
        f.write("Machine: %s, %s CPUs, kernel %s; %s run.\n\n" % (
            b.data["machine"].get("cpu", "?"), b.data["machine"]["cpus"],
            b.data["machine"]["kernel"], "quick" if a.quick else "full"))
        f.write("\n".join(t.markdown() for t in b.tables))


if __name__ == "__main__":
    main()
