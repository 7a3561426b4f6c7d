#!/usr/bin/env python3
"""bench/recheck.py: `vigil recheck` of a batch of dry runs against
running the batch again under the new policy (issue 25).

N generated candidates (Python and shell, each a different mix of reads,
secrets probed, writes, renames and removals in its workdir, directory
listings, connections to the sandbox's loopback and programs run, every
attempt made whatever the one before it was answered) run as a `vigil
batch` of dry runs under their language's shipped policy (A).  Then
`vigil recheck -p B` of that batch, timed, and the same tasks run again as
dry runs under B, timed.  For every task, every call both of its logs have
(by class, call, resolved path or address) must get from recheck exactly
the decision B's run recorded, and the exec check the same verdict on
every image both ran; a call only one log has (the candidate went another
way: the kernel's Landlock layer refused something under one policy and
not the other) is counted, not compared.  Exit 1 on any mismatch.
Each round times the recheck and the run again once (after the batch
under A, untimed beside them); the figures are medians over the rounds,
as bench/README.md's method asks: on these VMs only ratios within one run
mean anything.  Everything is written to a tmpfs (/dev/shm).
Run as root.  Usage: bench/recheck.py [N] [JOBS] [ROUNDS]  (default 200, 2, 1)"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
SEED = 25   # the number: the same candidates every time

NEW_POLICY = """version 1
# bench/recheck.py's B: some of what A allowed is refused, some it
# refused is allowed, and a program ends the run
deny read /etc/passwd
deny write $WORK/out/**
allow connect tcp 127.0.0.1:8080
kill exec /usr/bin/wc
allow exec /usr/bin/tar
deny exec /usr/bin/id
include <python>
"""

READS = ["/etc/hostname", "/etc/passwd", "/etc/os-release", "/root/.ssh/id_rsa", "/etc/shadow",
         "/proc/self/status", "/usr/share/common-licenses/GPL-3", "/etc/nope.conf"]
LISTS = ["/etc", "/root", "/usr/bin", "/tmp"]
PROGRAMS = [["ls", "/"], ["wc", "-l", "/etc/hostname"], ["id"], ["uname", "-a"],
            ["tar", "--version"], ["curl", "--version"], ["cat", "/etc/os-release"]]
PORTS = [9, 8080]


def python_code(rng):
    lines = ["import os, socket, subprocess",
             "def attempt(fn):",
             "    try:",
             "        fn()",
             "    except (OSError, subprocess.SubprocessError):",
             "        pass"]
    for _ in range(rng.randint(4, 10)):
        op = rng.choice(["read", "read", "list", "write", "tree", "connect", "run", "run"])
        if op == "read":
            lines.append("attempt(lambda: open(%r).read())" % rng.choice(READS))
        elif op == "list":
            lines.append("attempt(lambda: os.listdir(%r))" % rng.choice(LISTS))
        elif op == "write":
            name = rng.choice(["notes.txt", "out/r.txt", "/tmp/scratch.txt", "/var/tmp/x.txt"])
            lines.append("attempt(lambda: os.makedirs('out', exist_ok=True))")
            lines.append("attempt(lambda: open(%r, 'w').write('x'))" % name)
        elif op == "tree":
            lines += ["attempt(lambda: os.makedirs('out/sub', exist_ok=True))",
                      "attempt(lambda: open('out/sub/a', 'w').write('a'))",
                      "attempt(lambda: os.rename('out/sub/a', 'out/b'))",
                      "attempt(lambda: os.unlink('out/b'))"]
        elif op == "connect":
            lines.append("attempt(lambda: socket.create_connection(('127.0.0.1', %d), timeout=1))"
                         % rng.choice(PORTS))
        else:
            lines.append("attempt(lambda: subprocess.run(%r, stdout=subprocess.DEVNULL, "
                         "stderr=subprocess.DEVNULL))" % rng.choice(PROGRAMS))
    lines.append("print('done')")
    return "\n".join(lines) + "\n"


def shell_code(rng):
    lines = []
    for _ in range(rng.randint(4, 10)):
        op = rng.choice(["read", "list", "write", "tree", "run", "run"])
        if op == "read":
            lines.append("cat %s > /dev/null 2>&1 || true" % rng.choice(READS))
        elif op == "list":
            lines.append("ls %s > /dev/null 2>&1 || true" % rng.choice(LISTS))
        elif op == "write":
            lines.append("mkdir -p out 2>/dev/null; echo x > %s 2>/dev/null || true"
                         % rng.choice(["notes.txt", "out/r.txt", "/tmp/scratch.txt"]))
        elif op == "tree":
            lines.append("mkdir -p out/sub 2>/dev/null; echo a > out/sub/a 2>/dev/null; "
                         "mv out/sub/a out/b 2>/dev/null; rm -f out/b 2>/dev/null; true")
        else:
            lines.append("%s > /dev/null 2>&1 || true" % " ".join(rng.choice(PROGRAMS)))
    lines.append("echo done")
    return "\n".join(lines) + "\n"


def tasks(n):
    rng = random.Random(SEED)
    out = []
    for i in range(n):
        if i % 2 == 0:
            out.append({"id": "c%03d" % i, "code": python_code(rng), "language": "python"})
        else:
            out.append({"id": "c%03d" % i, "code": shell_code(rng), "language": "shell"})
    return out


def write_tasks(path, ts, **extra):
    with open(path, "w") as f:
        for t in ts:
            f.write(json.dumps(dict(t, dry_run=True, **extra)) + "\n")


def timed(argv, cwd, ok=(0, 1)):
    t0 = time.perf_counter()
    p = subprocess.run(argv, cwd=cwd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if p.returncode not in ok:
        sys.exit("bench/recheck.py: %s: exit %d: %s" % (argv[1], p.returncode, p.stderr[-2000:]))
    return dt, p


def records(path):
    import msgpack  # Debian's python3-msgpack: the log decoded independently of vigil
    with open(path, "rb") as f:
        return list(msgpack.Unpacker(f, raw=False))


def key(r, work):
    """What a call is about, whoever makes it, in whichever task directory
    (a batch's workdirs are its tasks' own: the runs under A and B differ
    there)."""
    a = r.get("args", {})
    target = a.get("exe") or a.get("resolved") or "%s %s:%s" % (a.get("proto"), a.get("addr"),
                                                               a.get("port"))
    return (r["class"], r["name"], str(target).replace(work, "$WORK"),
            str(a.get("resolved2")).replace(work, "$WORK"))


def decisions(recs, new=None):
    work = recs[0]["cwd"]
    out = {}
    for r in recs:
        if r["type"] == "syscall":
            out.setdefault(key(r, work), set()).add((new or {}).get(r["seq"], r["decision"]))
    return out


def images(recs):
    return {r["exe"] for r in recs if r["type"] == "proc" and r["kind"] == "exec" and r.get("exe")}


def killed_images(recs):
    return {r["detail"].split()[2] for r in recs if r["type"] == "note" and
            r["what"] in ("kill", "would-kill") and r["detail"].startswith("exec check:")}


def predicted_kills(run, a):
    """The images the exec check kills under B: A's verdicts, but where
    recheck says another."""
    kills = killed_images(a)
    for c in run["changes"]:
        if c["kind"] == "exec-check":
            (kills.discard if c["new"]["decision"] == "allow" else kills.add)(c["target"])
    return kills


def compare(run, a_log, b_log):
    """(calls compared, calls changed, mismatches, calls in one log only)"""
    a, b = records(a_log), records(b_log)
    new = {c["seq"]: c["new"]["decision"] for c in run["changes"] if c["kind"] == "call"}
    predicted, real, was = decisions(a, new), decisions(b), decisions(a)
    common = set(predicted) & set(real)
    bad = [(k, predicted[k], real[k]) for k in sorted(common) if predicted[k] != real[k]]
    both = images(a) & images(b)
    checked = predicted_kills(run, a)
    if checked & both != killed_images(b) & both:
        bad.append(("exec check", sorted(checked & both), sorted(killed_images(b) & both)))
    changed = sum(1 for k in common if was[k] != real[k])
    return len(common), changed, bad, len(set(predicted) ^ set(real))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    jobs = sys.argv[2] if len(sys.argv) > 2 else "2"
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    if os.geteuid() != 0:
        sys.exit("bench/recheck.py: run as root")
    with tempfile.TemporaryDirectory(prefix="vigil-bench-recheck-", dir="/dev/shm") as d:
        ts = tasks(n)
        pol = os.path.join(d, "new.policy")
        with open(pol, "w") as f:
            f.write(NEW_POLICY)
        write_tasks(os.path.join(d, "a.jsonl"), ts)
        write_tasks(os.path.join(d, "b.jsonl"), ts, policy=pol)
        a_s, _ = timed([VIGIL, "batch", "a.jsonl", "--out", "a", "-j", jobs], d)
        re_times, b_times = [], []
        for r in range(rounds):
            if r:
                shutil.rmtree(os.path.join(d, "b"))  # every task runs again, not resumed
            dt, p = timed([VIGIL, "recheck", "-p", pol, "--json", "a"], d)
            re_times.append(dt)
            b_times.append(timed([VIGIL, "batch", "b.jsonl", "--out", "b", "-j", jobs], d)[0])
        re_s, b_s = statistics.median(re_times), statistics.median(b_times)
        runs = [json.loads(line) for line in p.stdout.splitlines()]
        summary = runs.pop()
        compared = changed = only = 0
        bad = []
        for run in runs:
            tid = run["task_id"]
            c, ch, b, o = compare(run, os.path.join(d, "a", "tasks", tid, "run.msgpack"),
                                  os.path.join(d, "b", "tasks", tid, "run.msgpack"))
            compared, changed, only = compared + c, changed + ch, only + o
            bad += [(tid,) + x for x in b]
        print("bench/recheck.py: %d candidates (seed %d), jobs %s, %d round%s, %s" %
              (n, SEED, jobs, rounds, "" if rounds == 1 else "s",
               subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True).stdout.strip()))
        print("  dry runs under A (vigil batch):     %7.2f s" % a_s)
        print("  vigil recheck -p B of that batch:   %7.2f s  (%d runs, %d with changes, "
              "%d decisions changed)" % (re_s, summary["runs"], summary["changed_runs"],
                                         summary["changes"]))
        print("  the same tasks run again under B:   %7.2f s  (recheck took %.1f%% of it, "
              "%.0fx faster)" % (b_s, 100 * re_s / b_s, b_s / re_s))
        print("  calls compared: %d (%d of them changed by B); in one log only: %d; "
              "mismatches: %d" % (compared, changed, only, len(bad)))
        print("  verdicts: %d would pass, %d would be refused, %d would be killed" %
              (summary["pass"], summary["refused"], summary["killed"]))
        for x in bad[:20]:
            print("  MISMATCH", x)
        return 1 if bad or summary["runs"] != n else 0


if __name__ == "__main__":
    sys.exit(main())
