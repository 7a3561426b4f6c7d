#!/usr/bin/env python3
"""bench/batch.py: candidates per second for a trivial candidate
(/bin/true): `vigil batch -j 1, 2, 4` against a shell loop of `vigil run`
and a shell loop of `bwrap` (the same isolation, no supervisor), each
command once per round, rounds interleaved in one run so that the
machine's load falls on all alike.  Run as root.
Usage: bench/batch.py [TASKS] [ROUNDS]  (default 40 tasks, 3 rounds)"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools import bwrap_argv  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))


def timed(argv, cwd):
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def arguments(name, default_n):
    """(TASKS, ROUNDS) from the command line; root is required."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else default_n
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if os.geteuid() != 0:
        sys.exit("%s: run as root" % name)
    return n, rounds


def trivial_tasks(d, n, cand="/bin/true"):
    """A task file in d of n tasks running cand; its path."""
    tasks = os.path.join(d, "tasks.jsonl")
    with open(tasks, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": "t%d" % i, "argv": [cand]}) + "\n")
    return tasks


def main():
    n, rounds = arguments("bench/batch.py", 40)
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        tasks = trivial_tasks(d, n)
        bw = " ".join(bwrap_argv()) + " /bin/true"
        cmds = {
            "vigil batch -j 1": lambda out: [VIGIL, "batch", tasks, "--out", out, "-j", "1"],
            "vigil batch -j 2": lambda out: [VIGIL, "batch", tasks, "--out", out, "-j", "2"],
            "vigil batch -j 4": lambda out: [VIGIL, "batch", tasks, "--out", out, "-j", "4"],
            "sh loop of vigil run": lambda out: [
                "sh", "-c", 'mkdir -p "$1"; i=0; while [ $i -lt %d ]; do '
                '"$0" run -q -o "$1/$i.msgpack" --result "$1/$i.json" -- /bin/true; '
                'i=$((i+1)); done' % n, VIGIL, out],
            "sh loop of bwrap": lambda out: [
                "sh", "-c", "i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done" % (n, bw)],
        }
        times = {k: [] for k in cmds}
        for r in range(rounds + 1):   # the first round warms caches, untimed
            for k, argv_of in cmds.items():
                out = os.path.join(d, "out")
                shutil.rmtree(out, ignore_errors=True)
                dt = timed(argv_of(out), d)
                if r:
                    times[k].append(dt)
    print("%d trivial candidates (/bin/true), %d interleaved rounds, median:" % (n, rounds))
    loop = statistics.median(times["sh loop of vigil run"])
    for k, v in times.items():
        m = statistics.median(v)
        print("  %-22s %7.1f candidates/s  (%.2fx the vigil run loop's rate)" % (k, n / m, loop / m))


if __name__ == "__main__":
    main()
