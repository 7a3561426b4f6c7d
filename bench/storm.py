#!/usr/bin/env python3
"""bench/storm.py: how soon a refusal storm ends under the default policy
(issue 23: "the storm candidate ends within a second ... with the cap
named in the result").  Two storms, each under both engines, RUNS times,
interleaved:

  rm      tests/candidates/storm_rm.sh, `rm -rf "$X"/*` with X unset: rm
          walks the whole tree, each unlink refused
  python  tests/candidates/storm_denied.py: a loop of refused unlinks
          and opens (each refusal with its Python source line)

For each: the median and worst wall time of `vigil run` (start-up
included), the limit the result names, the refusals in the log and its
size.  With --loaded, a busy loop runs beside every run (one CPU taken).
Run as root.  Usage: bench/storm.py [RUNS] [--loaded]  (default 5)"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
CANDS = os.path.join(ROOT, "tests", "candidates")
STORMS = {"rm": ["sh", os.path.join(CANDS, "storm_rm.sh")],
          "python": ["python3", os.path.join(CANDS, "storm_denied.py")]}
ENGINES = ("notify", "ptrace")
TIMEOUT_S = 120


def one(argv, engine, d):
    log, res = os.path.join(d, "storm.msgpack"), os.path.join(d, "r.json")
    t0 = time.perf_counter()
    subprocess.run([VIGIL, "run", "-q", "--engine", engine, "-o", log, "--result", res,
                    "--", *argv], cwd=d, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=TIMEOUT_S)
    wall = time.perf_counter() - t0
    with open(res) as f:
        r = json.load(f)
    size = os.path.getsize(log)
    os.unlink(log)
    return wall, r.get("limit"), r.get("denied"), size


def main():
    args = [a for a in sys.argv[1:] if a != "--loaded"]
    loaded = "--loaded" in sys.argv[1:]
    runs = int(args[0]) if args else 5
    hog = subprocess.Popen(["sh", "-c", "while :; do :; done"]) if loaded else None
    got = {}
    try:
        with tempfile.TemporaryDirectory(prefix="vigil-bench-storm-") as d:
            for _ in range(runs):
                for name, argv in STORMS.items():
                    for engine in ENGINES:
                        got.setdefault((name, engine), []).append(one(argv, engine, d))
    finally:
        if hog:
            hog.kill()
            hog.wait()
    print(f"storm   engine  runs  median s  worst s  limit     refusals  log KiB"
          f"{'   (beside a busy loop)' if loaded else ''}")
    for (name, engine), v in got.items():
        walls = [x[0] for x in v]
        limits = sorted({str(x[1]) for x in v})
        print(f"{name:7} {engine:7} {len(v):4}  {statistics.median(walls):8.2f}  "
              f"{max(walls):7.2f}  {','.join(limits):9} {v[0][2]:8}  {v[0][3] // 1024:7}")


if __name__ == "__main__":
    main()
