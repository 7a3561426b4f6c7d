#!/usr/bin/python3
"""lookups.py: what the lookup rows cost (issue 8): the readlink/xattr rows
that are always on, and `audit lookups` (the stat family, access, getdents),
on python start, an import-heavy script and `find /usr/lib`, in one run of
interleaved rounds (harness.py), so only the ratios mean anything.

    bench/lookups.py [--base OLD_VIGIL] [--budget S]

Tools: bare; OLD_VIGIL (a vigil without the new rows) when given; vigil;
vigil with `audit lookups`.  All under bench/bench.policy (everything the
workloads do is allowed).  Run as root, like bench/run.sh."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import IMPORTS  # noqa: E402
from harness import Cmd, compare  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
NOBODY = 65534
WORKLOADS = [
    ("py-start", ["/usr/bin/python3", "-c", "pass"]),
    ("py-import", ["/usr/bin/python3", "-c", IMPORTS]),
    ("find", ["/usr/bin/find", "/usr/lib", "-name", "*.so*"]),
]


def recorded(vigil, log):
    """Audited calls in a log's trailer."""
    out = subprocess.run([vigil, "log", "--json", "--class", "trailer", log],
                         capture_output=True, text=True)
    for line in out.stdout.splitlines():
        rec = json.loads(line)
        if rec.get("type") == "trailer":
            return sum(c["n"] for c in rec.get("counts", []))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", help="a vigil binary without the lookup rows")
    ap.add_argument("--budget", type=float, default=20.0, help="seconds per workload")
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="vigil-lookups.", dir="/dev/shm")
    work = os.path.join(scratch, "work")
    os.mkdir(work)
    os.chown(work, NOBODY, NOBODY)
    home = os.path.join(scratch, "home")    # not the workdir: vigil refuses that
    os.mkdir(home)
    lookups = os.path.join(scratch, "lookups.policy")
    with open(lookups, "w") as f:
        f.write("version 1\naudit lookups\ninclude %s/bench/bench.policy\n" % ROOT)
    vigil = os.path.join(ROOT, "vigil")
    tools = [("bare", None, None)]
    if a.base:
        tools.append(("vigil-before", a.base, os.path.join(ROOT, "bench/bench.policy")))
    tools += [("vigil", vigil, os.path.join(ROOT, "bench/bench.policy")),
              ("vigil+lookups", vigil, lookups)]
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": home, "TMPDIR": work,
           "PYTHONDONTWRITEBYTECODE": "1"}
    print("| workload | " + " | ".join(k for k, _, _ in tools) + " |")
    print("|---|" + "---:|" * len(tools))
    for wl, argv in WORKLOADS:
        cmds, logs = [], {}
        for key, binary, pol in tools:
            if binary is None:
                cmds.append(Cmd(key, key, list(argv), env))
                continue
            logs[key] = os.path.join(scratch, "%s-%s.msgpack" % (wl, key))
            cmds.append(Cmd(key, key, [binary, "run", "-q", "-p", pol, "--workdir", work,
                                       "--env", "PYTHONDONTWRITEBYTECODE=1", "-o", logs[key],
                                       "--artifact", lookups, "--"] + argv, env))
        compare(cmds, a.budget, 5, 200, os.path.join(scratch, "errors.txt"))
        bare = cmds[0].median()
        cells = []
        for c in cmds:
            m = c.median()
            if m is None:
                cells.append("error: %s" % c.error)
                continue
            n = recorded(c.argv[0], logs[c.key]) if c.key in logs else None
            calls = "" if n is None else ", %d calls" % n
            cells.append("%.1f ms (x%.2f%s)" % (m * 1e3, m / bare, calls))
        print("| %s | %s |" % (wl, " | ".join(cells)), flush=True)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
