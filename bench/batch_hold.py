#!/usr/bin/env python3
"""bench/batch_hold.py: wall time per candidate of a batch of trivial
candidates (/bin/true) at -j 2 (and -j 1), with prepared sandboxes (`vigil
batch`'s default, --prepare N = -j) and without (--no-prepare: every run cold),
against a shell loop of bwrap with the same isolation (bench/tools.py's
bwrap_argv) and, stricter, two such loops side by side (bwrap at -j 2).
Every command once per round, rounds interleaved, so the machine's load
falls on all alike; the figure is the ratios within the run.  Run as root.
Usage: bench/batch_hold.py [TASKS] [ROUNDS]  (default 200 tasks, 3 rounds)"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from batch import arguments, trivial_tasks  # noqa: E402
from tools import bwrap_argv  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
JOBS = "2"
CAND = "/bin/true"


def timed(argv, cwd):
    """Wall seconds, CPU seconds (of every process it started), and how
    many tasks ran cold after a failed preparation."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return wall, cpu, p.stderr.count(": it runs cold")


def commands(tasks, n):
    bw = " ".join(bwrap_argv()) + " " + CAND
    loop = "i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done" % (n, bw)
    half = "i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done" % (n // 2, bw)

    def batch(*flags, jobs=JOBS):
        return lambda out: [VIGIL, "batch", tasks, "--out", out, "-j", jobs, "--progress",
                            "never", *flags]
    return {
        "vigil batch -j 2 (prepared, --prepare 2)": batch(),
        "vigil batch -j 2 --prepare 4": batch("--prepare", "4"),
        "vigil batch -j 2 --no-prepare (cold)": batch("--no-prepare"),
        "vigil batch -j 1 (prepared, --prepare 1)": batch(jobs="1"),
        "vigil batch -j 1 --no-prepare (cold)": batch("--no-prepare", jobs="1"),
        "sh loop of bwrap": lambda out: ["sh", "-c", loop],
        "2 sh loops of bwrap at once": lambda out: ["sh", "-c", "(%s) & (%s) & wait" % (half, half)],
    }


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    n, rounds = arguments("bench/batch_hold.py", 200)
    load_before = loadavg()
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        tasks = trivial_tasks(d, n, CAND)
        cmds = commands(tasks, n)
        times = {k: [] for k in cmds}
        cpus = {k: [] for k in cmds}
        fell_back = 0
        for r in range(rounds + 1):   # the first round warms caches, untimed
            for k, argv_of in cmds.items():
                out = os.path.join(d, "out")
                shutil.rmtree(out, ignore_errors=True)
                dt, cpu, cold = timed(argv_of(out), d)
                fell_back += cold
                if r:
                    times[k].append(dt)
                    cpus[k].append(cpu)
    print("%d trivial candidates (%s), %d interleaved rounds, load %s before, %s after; "
          "median ms per candidate:" % (n, CAND, rounds, load_before, loadavg()))
    ref = statistics.median(times["sh loop of bwrap"]) / n * 1e3
    for k, v in times.items():
        ms = statistics.median(v) / n * 1e3
        cpu = statistics.median(cpus[k]) / n * 1e3
        print("  %-44s %6.2f ms  (%.2fx the bwrap loop's; rounds %s)  CPU %.2f ms" % (
            k, ms, ms / ref, " ".join("%.2f" % (x / n * 1e3) for x in v), cpu))
    print("  tasks that ran cold after a failed preparation: %d" % fell_back)


if __name__ == "__main__":
    main()
