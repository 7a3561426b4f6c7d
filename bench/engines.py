#!/usr/bin/python3
"""engines.py: issue 10's workloads against bwrap, in one run.

Each workload (start-up of /bin/true, python start, an import-heavy
python, a 500-spawn shell loop, gcc compiling a small file) runs under
bwrap with vigil's isolation (tools.bwrap_argv), vigil's notify engine and
vigil's ptrace engine, with hyperfine -N (medians of RUNS after WARMUP),
the commands of one workload interleaved round by round rather than one
after another, so that the VM's drift hits all three alike.  vigil runs
with --no-cgroups, as bwrap makes none.  Prints the medians and
notify / bwrap, the issue's ratio (targets: start-up no more than bwrap,
the others within 1.2x).  Run as root: python3 bench/engines.py [ROUNDS]."""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tools import bwrap_argv  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VIGIL = os.path.join(ROOT, "vigil")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 8
IMPORTS = "import json, email.parser, http.client, xml.dom.minidom, decimal, asyncio, sqlite3"
SPAWNS = 'i=0; while [ $i -lt 500 ]; do /bin/true; i=$((i+1)); done'
HELLO = "#include <stdio.h>\nint main(void) { puts(\"hello\"); return 0; }\n"


def workloads(src):
    """(name, argv, vigil policy, target ratio, file to bind for bwrap)"""
    return [
        ("/bin/true", ["/bin/true"], None, 1.0, None),
        ("python3 -c pass", ["/usr/bin/python3", "-c", "pass"], None, 1.2, None),
        ("import-heavy python", ["/usr/bin/python3", "-c", IMPORTS], None, 1.2, None),
        ("500 spawns from sh", ["/bin/sh", "-c", SPAWNS], None, 1.2, None),
        ("gcc -O2 -c hello.c", ["/usr/bin/gcc", "-O2", "-c", src, "-o", "/tmp/h.o"], "c", 1.2,
         src),
    ]


def vigil_argv(engine, policy, log, argv):
    pol = ["-p", policy] if policy else []
    return [VIGIL, "run", "-q", "--no-cgroups", "--engine", engine, "-o", log, *pol, "--", *argv]


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def one_round(cmds, out):
    """One hyperfine run of every command of a workload; the times."""
    subprocess.run(["hyperfine", "-N", "--warmup", "1", "--runs", "1", "--export-json", out,
                    "--style", "none", *[shlex.join(c) for c in cmds]],
                   check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return [r["times"][0] for r in json.load(f)["results"]]


def main():
    if not shutil.which("hyperfine") or not os.path.exists("/usr/bin/bwrap"):
        sys.exit("engines.py: needs hyperfine and bubblewrap (apt install hyperfine bubblewrap)")
    tmp = tempfile.mkdtemp(prefix="vigil-engines.", dir="/dev/shm")
    try:
        src = os.path.join(tmp, "hello.c")
        with open(src, "w") as f:
            f.write(HELLO)
        os.chmod(tmp, 0o755)
        os.chmod(src, 0o644)
        log = os.path.join(tmp, "log.msgpack")
        print(f"{'workload':22s} {'bwrap':>9s} {'notify':>9s} {'ptrace':>9s}  notify/bwrap (target)")
        for name, argv, policy, target, bind in workloads(src):
            cmds = [bwrap_argv(bind) + argv, vigil_argv("notify", policy, log, argv),
                    vigil_argv("ptrace", policy, log, argv)]
            times = [[], [], []]
            for _ in range(ROUNDS):
                for i, t in enumerate(one_round(cmds, os.path.join(tmp, "h.json"))):
                    times[i].append(t * 1000)
            b, nt, pt = (median(t) for t in times)
            verdict = "met" if nt / b <= target else "missed"
            print(f"{name:22s} {b:7.1f}ms {nt:7.1f}ms {pt:7.1f}ms  {nt / b:5.2f} "
                  f"({'<=' if target > 1 else 'no more than'} {target:g}: {verdict})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
