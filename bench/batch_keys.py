#!/usr/bin/env python3
"""bench/batch_keys.py: what a nightly evaluation pays for knowing its
tasks by key.  N trivial candidates (/bin/true, each with an input file of
its own, so that every key hashes a file) at `vigil batch -j 2`:

  first    every task runs: candidates per second
  again    the same tasks: every one skipped (the keys made, every result
           read back); its time and tasks per second
  changed  one byte of 1% of the inputs changed: exactly those run (the
           script fails otherwise)

against a shell loop of `vigil run` and one of `bwrap` (the same isolation,
no supervisor) over LOOP candidates (default min(N, 200): the loops' rate
is what is compared).  Everything on a tmpfs.  Run as root.
Usage: bench/batch_keys.py [N] [LOOP]  (default 500)"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools import bwrap_argv  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
JOBS = "2"
CHANGED_SHARE = 100   # 1 task in 100 changes
SUMMARY = re.compile(r"(\d+) tasks: (\d+) run, (\d+) already done")


def timed(argv, cwd):
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("bench/batch_keys.py: %s exited %d: %s" % (argv[:3], p.returncode,
                                                            p.stderr[-500:]))
    return dt, p.stderr


def batch(d):
    dt, err = timed([VIGIL, "batch", "tasks.jsonl", "--out", "out", "-j", JOBS,
                     "--progress", "never"], d)
    total, ran, skipped = map(int, SUMMARY.findall(err)[-1])
    return dt, ran, skipped


def write_tasks(d, n):
    os.makedirs(os.path.join(d, "in"))
    with open(os.path.join(d, "tasks.jsonl"), "w") as f:
        for i in range(n):
            with open(os.path.join(d, "in", "%d.txt" % i), "w") as inp:
                inp.write("case %d\n" % i)
            f.write(json.dumps({"id": "t%d" % i, "argv": ["/bin/true"],
                                "inputs": ["in/%d.txt" % i]}) + "\n")


def loops(d, n):
    bw = " ".join(bwrap_argv()) + " /bin/true"
    vrun, _ = timed(["sh", "-c", 'mkdir -p "$1"; i=0; while [ $i -lt %d ]; do '
                     '"$0" run -q -o "$1/$i.msgpack" --result "$1/$i.json" -- /bin/true; '
                     'i=$((i+1)); done' % n, VIGIL, os.path.join(d, "loop")], d)
    bwrap = None
    if os.access("/usr/bin/bwrap", os.X_OK):
        bwrap, _ = timed(["sh", "-c", "i=0; while [ $i -lt %d ]; do %s; i=$((i+1)); done"
                          % (n, bw)], d)
    return vrun, bwrap


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    loop_n = int(sys.argv[2]) if len(sys.argv) > 2 else min(n, 200)
    if os.geteuid() != 0:
        sys.exit("bench/batch_keys.py: run as root")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        write_tasks(d, n)
        first, ran, _ = batch(d)
        assert ran == n, ran
        again, ran, skipped = batch(d)
        assert (ran, skipped) == (0, n), (ran, skipped)
        changed = list(range(0, n, CHANGED_SHARE))
        for i in changed:
            with open(os.path.join(d, "in", "%d.txt" % i), "a") as inp:
                inp.write("!")
        third, ran, skipped = batch(d)
        assert (ran, skipped) == (len(changed), n - len(changed)), (ran, skipped)
        shutil.rmtree(os.path.join(d, "out"))
        vrun, bwrap = loops(d, loop_n)
    print("%d trivial candidates (/bin/true + an input each), vigil batch -j %s:" % (n, JOBS))
    print("  first run          %7.1f s  %7.1f candidates/s" % (first, n / first))
    print("  second (all skip)  %7.2f s  %7.1f tasks/s checked" % (again, n / again))
    print("  1%% changed (%d run) %6.2f s" % (len(changed), third))
    print("loops of %d:" % loop_n)
    print("  sh loop of vigil run %5.1f candidates/s" % (loop_n / vrun))
    print("  sh loop of bwrap     %s" % ("%5.1f candidates/s" % (loop_n / bwrap) if bwrap
                                        else "(no /usr/bin/bwrap)"))


if __name__ == "__main__":
    main()
