"""The calls vigil carries out behave as the kernel's: a differential test.

tests/candidates/carry_diff.c runs the edge cases of every carried call
(bad, closed, O_PATH and wrong-type fds; umask 0, 077 and a change between
two calls; O_NOFOLLOW, AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW, trailing
slashes, "." and ".."; ENOENT, EEXIST, ENOTDIR, EISDIR, ELOOP; modes,
ownership, times, xattrs) in an empty directory and prints one line per
case: result, errno and what the case left (mode, owner, size, mtime).
It runs bare, as the uid the sandbox's candidate has on the host (65534),
and under each engine with an allow-everything, record-everything policy
(policies/observe.policy) with that directory as --workdir, vigil run as
root and as nobody; the lines must be the same, but for the differences
docs/SECURITY.md explains (KNOWN below)."""
import os
import shutil
import subprocess
import tempfile

import pytest

from helpers import CANDIDATES, CFLAGS, NOBODY, caller, nobody_caller, root_caller  # noqa: F401

# case -> (callers it differs for, engines, why): docs/SECURITY.md
KNOWN = {
    # decided on the canonical path: "d/.." never searches d
    "rmdir.dotdot": ({"root", "nobody"}, {"notify"}, "a '..' after a directory the caller "
                     "cannot search"),
    # the sandbox's user namespace of an unprivileged vigil maps the
    # candidate's own ids only: chown to 0 is EINVAL there, for the kernel too
    "fchown.file.root": ({"nobody"}, {"notify", "ptrace"}, "id 0 unmapped"),
    "chown.root": ({"nobody"}, {"notify", "ptrace"}, "id 0 unmapped"),
}


@pytest.fixture(scope="module")
def candidate():
    """carry_diff built where uid 65534 can run it."""
    d = tempfile.mkdtemp(prefix="vigil-carry-diff-", dir="/tmp")
    os.chmod(d, 0o755)
    out = os.path.join(d, "carry_diff")
    subprocess.run(["gcc", *CFLAGS, "-o", out, os.path.join(CANDIDATES, "carry_diff.c")],
                   check=True, capture_output=True, text=True)
    os.chmod(out, 0o755)
    yield out
    shutil.rmtree(d, ignore_errors=True)


def scratch(base):
    d = tempfile.mkdtemp(prefix="work-", dir=base)
    os.chmod(d, 0o755)
    os.chown(d, NOBODY, NOBODY)
    return d


@pytest.fixture(scope="module")
def bare(candidate):
    d = scratch(os.path.dirname(candidate))
    p = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        candidate], cwd=d, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return p.stdout.splitlines()


def cases(lines):
    return {ln.split()[0]: ln for ln in lines}


@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_carried_calls_answer_as_the_kernel(caller, engine, candidate, bare):
    d = scratch(caller.dir("diff"))
    r = caller.run(candidate, opts=["-p", "observe", "--workdir", d, "--engine", engine],
                   cwd=d)
    assert r.rc == 0, r
    got, want = cases(r.stdout.splitlines()), cases(bare)
    assert len(want) > 250 and got.keys() == want.keys(), sorted(set(want) ^ set(got))
    differ = [f"{want[k]}  |  {got[k]}" for k in want
              if got[k] != want[k]
              and not (k in KNOWN and caller.who in KNOWN[k][0] and engine in KNOWN[k][1])]
    assert differ == [], "\n".join(differ)
