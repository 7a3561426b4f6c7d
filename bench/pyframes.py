#!/usr/bin/python3
"""pyframes.py: what reading the Python stack costs (issue 12), in one run
of interleaved rounds (harness.py), so only the ratios mean anything.

    bench/pyframes.py [--budget S] [--calls N] [--depth D]

Workloads:
  refused  N refused opens from a function D frames deep: the cost per
           refused call is (median with frames - median without) / N
  demo     examples/sloppy_cleanup.py, the bundled demo candidate, whole run
Tools: vigil --py-frames off, vigil (default: refused calls), vigil
--py-frames all (every audited call), each under the default policy; the
refused workload also under --engine notify.  Run as root."""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Cmd, compare  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PY = "/usr/bin/python3"
REFUSED = """import sys
def down(d, n):
    if d:
        return down(d - 1, n)
    for _ in range(n):
        try:
            open("/pyframes-bench/secret")
        except OSError:
            pass
down(int(sys.argv[1]), int(sys.argv[2]))
"""
MODES = [("off", ["--py-frames", "off"]), ("refused", []), ("all", ["--py-frames", "all"])]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=float, default=20.0, help="seconds per workload")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--depth", type=int, default=20)
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="vigil-pyframes.", dir="/dev/shm")
    script = os.path.join(scratch, "refused.py")
    with open(script, "w") as f:
        f.write(REFUSED)
    vigil = os.path.join(ROOT, "vigil")
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": scratch}
    # as `make demo` runs it: from the source tree, its path relative
    os.chdir(ROOT)
    demo = os.path.join("examples", "sloppy_cleanup.py")
    workloads = [
        ("refused", [PY, script, str(a.depth), str(a.calls)], ["ptrace", "notify"]),
        ("demo", [PY, demo], ["ptrace"]),
    ]
    print("| workload | engine | " + " | ".join("frames %s" % m for m, _ in MODES) +
          " | per refused call |")
    print("|---|---|" + "---:|" * (len(MODES) + 1))
    for name, argv, engines in workloads:
        for engine in engines:
            cmds = [Cmd(m, m, [vigil, "run", "-q", "--engine", engine, *opts, "-o",
                               os.path.join(scratch, "%s-%s-%s.msgpack" % (name, engine, m)),
                               "--", *argv], env) for m, opts in MODES]
            compare(cmds, a.budget, 5, 200, os.path.join(scratch, "errors.txt"))
            base = cmds[0].median()
            cells = []
            for c in cmds:
                m = c.median()
                cells.append("error: %s" % c.error if m is None else
                             "%.1f ms (x%.3f)" % (m * 1e3, m / base))
            per = ""
            if name == "refused" and cmds[1].median() is not None and base:
                per = "%.1f us" % ((cmds[1].median() - base) / a.calls * 1e6)
            print("| %s | %s | %s | %s |" % (name, engine, " | ".join(cells), per), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
