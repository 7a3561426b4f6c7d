"""chain_cost.py: what the log's chain (docs/FORMAT.md, "The chain and the
seal") costs a run, on the 200k-open workload of bench/README.md.

    cc -O2 -static -o /dev/shm/calls bench/workloads/calls.c
    VIGIL_BASE=/path/to/vigil-before-the-chain \\
        python3 bench/chain_cost.py --calls /dev/shm/calls [--opens 200000] [--budget 240]

Run as root.  vigil (this tree) and vigil-before ($VIGIL_BASE, the build
of the commit before the chain) each run `calls open N` and the empty
candidate `calls getpid 0`, interleaved round by round (bench/harness.py);
the chain's cost is vigil's added time over vigil-before's, start-up cost
left out, per record of the log and as a share of the workload's time
under vigil-before."""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Cmd, compare  # noqa: E402
import tools  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", required=True, help="bench/workloads/calls.c, built static")
    ap.add_argument("--opens", type=int, default=200000)
    ap.add_argument("--budget", type=float, default=240, help="seconds of timed rounds")
    a = ap.parse_args()
    base = os.environ.get("VIGIL_BASE")
    if not base:
        sys.exit("chain_cost.py: set VIGIL_BASE to a vigil built without the chain")
    scratch = tempfile.mkdtemp(prefix="vigil-chain.", dir="/dev/shm")
    try:
        work, logs = os.path.join(scratch, "work"), os.path.join(scratch, "logs")
        os.makedirs(work)
        os.chmod(work, 0o777)  # the sandbox's user is unprivileged on the host
        os.makedirs(logs)
        env = tools.Env(ROOT, os.path.join(ROOT, "vigil"), work, logs, a.calls, base=base)
        penv = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": scratch, "TMPDIR": scratch}
        cmds = []
        for key, wrap in (("vigil", env.vigil_run), ("before", env.vigil_before)):
            cmds.append(Cmd(key, key, wrap([a.calls, "open", str(a.opens)], key), penv))
            cmds.append(Cmd(key + ":empty", key, wrap([a.calls, "getpid", "0"], key + "0"), penv))
        by = {c.key: c for c in compare(cmds, a.budget, 5, 200, os.path.join(scratch, "err"),
                                        print)}
        for c in by.values():
            if c.error:
                sys.exit("%s: %s" % (c.key, c.error))
        records = env.vigil_counts("vigil")[0]
        size = os.path.getsize(env.log_path("vigil"))
        size0 = os.path.getsize(env.log_path("before"))
        new = by["vigil"].median() - by["vigil:empty"].median()
        old = by["before"].median() - by["before:empty"].median()
        print("rounds: %d" % len(by["vigil"].times))
        print("open loop, start-up left out: vigil %.3f s, vigil-before %.3f s" % (new, old))
        print("records: %d; log %.1f MB vs %.1f MB (+%.1f%%)" % (
            records, size / 1e6, size0 / 1e6, 100.0 * (size - size0) / size0))
        print("chain: %+.2f us per record, %+.2f%% of the workload" % (
            1e6 * (new - old) / records, 100.0 * (new - old) / old))
        print("start-up: vigil %.2f ms, vigil-before %.2f ms" % (
            1e3 * by["vigil:empty"].median(), 1e3 * by["before:empty"].median()))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
