#!/usr/bin/python3
"""bench/cpython_suite.py [VIGIL]: CPython's own tests of the calls vigil
carries out (test_os, test_shutil, test_posix, test_tempfile, from Debian's
libpython3.11-testsuite) bare as uid 65534 and under each engine with
policies/observe.policy, vigil run as root and as 65534; prints every test
whose outcome differs from the bare run and exits 1 if any does.  About a
minute per run (five runs): not part of tests/run.sh.  Run as root."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

NOBODY = 65534
MODULES = ["test_os", "test_shutil", "test_posix", "test_tempfile"]
PY = "/usr/bin/python3"
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
RESULT = re.compile(r"^(test\w+ \([\w.]+\)) \.\.\. (ok|skipped|FAIL|ERROR|expected failure)")
DIFFS_SHOWN = 40
AS_NOBODY = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]


def outcomes(text):
    return dict(m.groups() for m in map(RESULT.match, text.splitlines()) if m)


def scratch(base):
    d = tempfile.mkdtemp(dir=base)
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    return d


def run(argv, cwd, home):
    env = {"PATH": "/usr/bin:/bin", "HOME": home, "TMPDIR": cwd, "LANG": "C.UTF-8"}
    p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
    got = outcomes(p.stdout + p.stderr)
    if not got:
        print(f"  no test ran: {p.stderr[-600:]}")
    return got


def main():
    vigil = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "vigil")
    if not os.path.exists(f"/usr/lib/python3.11/test/{MODULES[0]}.py"):
        sys.exit("apt-get install libpython3.11-testsuite first")
    base = tempfile.mkdtemp(prefix="vigil-cpython-", dir="/tmp")
    os.chmod(base, 0o755)
    tests = [PY, "-m", "test", "-v", *MODULES]
    try:
        home = scratch(base)  # vigil's own HOME (its state directory), never a workdir
        d = scratch(base)
        bare = run(AS_NOBODY + tests, d, d)
        print(f"bare: {len(bare)} tests")
        differ = 0
        for engine in ("notify", "ptrace"):
            for who in ("root", "nobody"):
                d = scratch(base)
                cmd = [vigil, "run", "-q", "--timeout", "900s", "--cpu", "900s", "--engine", engine,
                       "-p", "observe", "--workdir", d, "--env", f"TMPDIR={d}",
                       "-o", os.path.join(home, f"{engine}-{who}.msgpack"), "--", *tests]
                got = run((AS_NOBODY if who == "nobody" else []) + cmd, d, home)
                diffs = sorted(k for k in bare.keys() | got.keys() if bare.get(k) != got.get(k))
                if not got:
                    differ += 1
                    continue
                print(f"{engine} as {who}: {len(got)} tests, {len(diffs)} differ")
                for k in diffs[:DIFFS_SHOWN]:
                    print(f"  {k}: bare {bare.get(k)}, vigil {got.get(k)}")
                differ += len(diffs)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    sys.exit(1 if differ or not bare else 0)


if __name__ == "__main__":
    main()
