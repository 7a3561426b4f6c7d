#!/usr/bin/env python3
"""bench/cgroup_startup.py: what the cgroups cost at start-up.  /bin/true
under `vigil run` with its cgroups (memory and pids groups made, joined,
read and removed, plus the reaper) against `vigil run --no-cgroups`
(rlimits only), interleaved in one run so that the machine's load falls
on both alike.  Run as root (only root may make the groups here).
Usage: bench/cgroup_startup.py [RUNS]  (default 100 each)"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))


def once(extra, log):
    t0 = time.perf_counter()
    subprocess.run([VIGIL, "run", "-q", "-o", log, *extra, "--", "/bin/true"], check=True)
    dt = time.perf_counter() - t0
    os.unlink(log)
    return dt * 1000


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    if os.geteuid() != 0:
        sys.exit("cgroup_startup: run as root (only root may make the groups here)")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        log = os.path.join(d, "run.msgpack")
        for extra in ([], ["--no-cgroups"]):   # warm the page cache
            once(extra, log)
        times = {"cgroups": [], "rlimits": []}
        for _ in range(runs):
            times["cgroups"].append(once([], log))
            times["rlimits"].append(once(["--no-cgroups"], log))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"/bin/true, {runs} runs each, interleaved, median ms:")
    print(f"  with cgroups  {med['cgroups']:.2f}")
    print(f"  rlimits only  {med['rlimits']:.2f}")
    print(f"  ratio         {med['cgroups'] / med['rlimits']:.2f} "
          f"(+{med['cgroups'] - med['rlimits']:.2f} ms)")


if __name__ == "__main__":
    main()
