"""diag.py: where vigil's time per audited call goes.  Not a comparison for
the targets but the diagnostics the lead asked for:
  - vigil's own system calls per audited openat (strace -c on vigil alone:
    without -f, so strace neither follows nor disturbs the candidate);
  - context switches and CPU use per call (perf stat), vigil and strace;
  - how vigil's CPU splits between kernel and its own code (perf record);
  - the same loop with supervisor and candidate pinned to one CPU, which
    separates the cost of cross-CPU wake-ups from the work done per stop.
"""
import os
import shutil
import subprocess
import time

from harness import Cmd
from report import Table, fmt

SHALLOW = "/usr/lib/os-release"
DEEP_CANDIDATES = ("/usr/share/doc/base-files/copyright", "/usr/share/common-licenses/GPL-3")


def _strace_c(argv, out, env):
    """Syscall counts of argv's first thread, by name (strace -c, no -f)."""
    subprocess.run(["/usr/bin/strace", "-c", "-o", out, "--"] + argv, env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    counts = {}
    with open(out) as f:
        for line in f:
            p = line.split()
            if len(p) >= 5 and p[-1] != "total" and p[0][0].isdigit():
                counts[p[-1]] = int(p[3])
    return counts


def own_syscalls(b, n):
    """Per audited openat: the difference between n opens and none."""
    env = b.env
    deep = next((p for p in DEEP_CANDIDATES if os.path.isfile(p)), SHALLOW)
    paths = (SHALLOW, deep, env.tiny)  # the last one in the work dir (the tmpfs)
    t = Table("vigil's own system calls per audited openat (strace -c on vigil, %d opens)" % n,
              ["syscall"] + ["%s (%d parts)" % (p, p.count("/")) for p in paths],
              "Counted on vigil's supervising thread (the output thread is not followed); "
              "the difference between a run of %d opens and a run of none, divided by %d." % (n, n))
    per = {}
    for path in paths:
        runs = []
        for k in (0, n):
            argv = env.vigil_run([env.calls, "open", str(k)], "diag", ["--env", "CALLS_PATH=" + path])
            runs.append(_strace_c(argv, os.path.join(b.scratch, "own.txt"), b.penv))
        per[path] = {s: (runs[1].get(s, 0) - runs[0].get(s, 0)) / n
                     for s in set(runs[0]) | set(runs[1])}
    names = sorted({s for p in per.values() for s, v in p.items() if v >= 0.01},
                   key=lambda s: -max(p.get(s, 0) for p in per.values()))
    for s in names:
        t.add(s, *[fmt(per[p].get(s, 0), "%.2f") for p in paths])
    t.add("total", *[fmt(sum(v for v in per[p].values() if v > 0), "%.2f") for p in paths])
    b.data.setdefault("diag", {})["own_syscalls_per_open"] = per
    return t


def _perf_stat(argv, env, out):
    r = subprocess.run(["perf", "stat", "-x,", "-o", out, "-e",
                        "task-clock,context-switches,cpu-migrations", "--"] + argv,
                       env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    vals = {}
    with open(out) as f:
        for line in f:
            p = line.strip().split(",")
            if len(p) > 3 and p[0] and p[0][0].isdigit():
                vals[p[2]] = float(p[0])
    return r.returncode, vals


def switches(b, n):
    env = b.env
    t = Table("Context switches and CPU per audited call (perf stat, %d opens)" % n,
              ["tool", "switches/call", "CPU ms/1k calls", "CPUs busy"],
              "CPUs busy = task-clock / wall time of the whole run: below 1 means the "
              "supervisor and the candidate are mostly waiting for each other.")
    out = {}
    for key, wrap in (("vigil run", env.vigil_run), ("strace-sc", env.strace_seccomp),
                      ("bare", env.bare)):
        res = []
        for k in (0, n):
            argv = wrap([env.calls, "open", str(k)], "diag-perf")
            t0 = time.perf_counter()
            rc, v = _perf_stat(argv, b.penv, os.path.join(b.scratch, "perf.txt"))
            res.append((time.perf_counter() - t0, v))
        (w0, v0), (w1, v1) = res
        sw = (v1.get("context-switches", 0) - v0.get("context-switches", 0)) / n
        cpu = (v1.get("task-clock", 0) - v0.get("task-clock", 0)) / n * 1e3  # msec per 1k
        busy = v1.get("task-clock", 0) / 1e3 / w1 if w1 else None
        out[key] = {"switches_per_call": sw, "cpu_ms_per_1k": cpu, "cpus_busy": busy}
        t.add(key, fmt(sw, "%.2f"), fmt(cpu, "%.1f"), fmt(busy, "%.2f"))
    b.data.setdefault("diag", {})["perf_stat"] = out
    return t


def profile(b, n):
    """perf record of a vigil run: share of samples by (command, where)."""
    env = b.env
    data = os.path.join(b.scratch, "perf.data")
    argv = env.vigil_run([env.calls, "open", str(n)], "diag-prof")
    subprocess.run(["perf", "record", "-q", "-F", "4000", "-o", data, "--"] + argv, env=b.penv,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r = subprocess.run(["perf", "report", "-i", data, "--no-children", "-g", "none",
                        "--sort", "comm,dso", "--stdio"], capture_output=True, text=True)
    t = Table("Where CPU time goes during %d audited opens (perf record, share of samples)" % n,
              ["process", "in", "share"],
              "vigil's own code (decode, policy, msgpack) is the 'vigil' rows outside the kernel.")
    rows = []
    for line in r.stdout.splitlines():
        p = line.split()
        if len(p) >= 3 and p[0].endswith("%") and not line.startswith("#"):
            rows.append((p[1], p[2], float(p[0][:-1])))
    for comm, dso, share in rows[:8]:
        t.add(comm, dso, "%.1f%%" % share)
    b.data.setdefault("diag", {})["profile"] = rows
    return t


def pinned(b, n):
    env = b.env
    cmds = []
    variants = [("bare", env.bare, False), ("vigil", env.vigil_run, False),
                ("vigil-pinned", env.vigil_run, True), ("strace-sc", env.strace_seccomp, False),
                ("strace-sc-pinned", env.strace_seccomp, True)]
    for key, wrap, pin in variants:
        pre = ["/usr/bin/taskset", "-c", "0"] if pin else []
        for k in (n, 0):
            tag = "pin-%s-%d" % (key, k)
            cmds.append(Cmd(key if k else key + ":empty", key,
                            pre + wrap([env.calls, "open", str(k)], tag), b.penv))
    by = b.compare(cmds, b.cfg["pinned"])
    slope = {key: (by[key].median() - by[key + ":empty"].median()) * 1e6 / n
             for key, _, _ in variants if not (by[key].error or by[key + ":empty"].error)}
    t = Table("Audited openat, free vs pinned to one CPU (us per call over bare, %d opens)" % n,
              ["tool", "free", "pinned (taskset -c 0)"],
              "Pinned, a stop and its release need no wake-up of another CPU.")
    for key in ("vigil", "strace-sc"):
        base = slope.get("bare")
        f, p = slope.get(key), slope.get(key + "-pinned")
        t.add(key, fmt(None if f is None or base is None else f - base),
              fmt(None if p is None or base is None else p - base))
    b.data.setdefault("diag", {})["pinned_us_per_call"] = slope
    return t


def run(b, log):
    n = b.cfg["diag_n"]
    tables = []
    log("diagnostics: vigil's own syscalls (strace -c)")
    tables.append(own_syscalls(b, n))
    if shutil.which("perf") and subprocess.run(["perf", "stat", "-o", "/dev/null", "true"],
                                               stdout=subprocess.DEVNULL,
                                               stderr=subprocess.DEVNULL).returncode == 0:
        log("diagnostics: perf stat, perf record")
        tables.append(switches(b, n))
        tables.append(profile(b, n))
    else:
        log("diagnostics: perf is not usable here; skipping perf stat and perf record")
    log("diagnostics: pinned to one CPU")
    tables.append(pinned(b, n))
    return tables
