"""guard.policy, included before the policy it guards: an attempt to delete, write, truncate or rename
anything in the system's trees (/usr, /etc, /var, /boot, the merged-/usr
links) or the homes ends the run at once (status killed) rather than
being refused again and again; what working candidates do (write their
workdir and /tmp, `mkdir -p` below a host workdir, Python's bytecode
caches) goes on as before.  Judged from the result record, the log, and
the host's files."""
import errno
import os
import shutil
import tempfile

import pytest

from helpers import caller, nobody_caller, root_caller, sha256_file, syscalls  # noqa: F401

KILLED = 128 + 9
GUARDED = "version 1\ninclude <guard>\ninclude <{}>\n"
HOST_LIB = "/usr/lib/os-release"     # what `rm -rf /usr/lib` would take first or later
HOST_ETC = "/etc/hostname"


def host_files():
    """What the guarded calls aim at, as the host has it."""
    state = {p: (sha256_file(p), os.lstat(p).st_ino) for p in (HOST_LIB, HOST_ETC)}
    state["/bin"] = (os.readlink("/bin"), os.lstat("/bin").st_ino)
    return state


def guarded(caller, base="default"):
    """A policy of the caller's: the guard, then a shipped policy."""
    pol = os.path.join(caller.dir("policy"), f"guarded-{base}.policy")
    with open(pol, "w") as f:
        f.write(GUARDED.format(base))
    os.chmod(pol, 0o644)
    return ["-p", pol]


def assert_killed_by_guard(r, call, path):
    res = r.result
    assert res["status"] == "killed" and r.rc == KILLED and res["exit_code"] == KILLED, r
    assert res["error"].startswith(f"{call} {path}: ") and "guard.policy:" in res["error"], res
    kills = [x for x in syscalls(r.recs) if x["decision"] == "kill"]
    assert len(kills) == 1 and kills[0]["class"] == "write", kills
    rule = kills[0]["rule"]
    assert rule["file"].endswith("guard.policy") and rule["text"].startswith("kill write /"), rule
    assert r.recs[-1]["type"] == "trailer" and r.recs[-1]["status"] == "killed"
    return kills[0]


def test_rm_rf_of_a_system_tree_ends_the_run(caller):
    before = host_files()
    r = caller.run("rm", "-rf", "/usr/lib", opts=guarded(caller))
    kill = assert_killed_by_guard(r, "unlinkat", kill_path(r))
    assert kill["args"]["resolved"].startswith("/usr/lib/"), kill
    # nothing was refused before it over and over: the first delete ended it
    assert sum(1 for x in syscalls(r.recs) if x["decision"] == "deny") == 0
    assert host_files() == before


def kill_path(r):
    return [x for x in syscalls(r.recs) if x["decision"] == "kill"][0]["args"]["resolved"]


@pytest.mark.parametrize("how", ["unlink", "truncate", "rename"])
def test_a_destructive_call_in_etc_ends_the_run(caller, how):
    before = host_files()
    code = {"unlink": f"os.unlink({HOST_ETC!r})",
            "truncate": f"open({HOST_ETC!r}, 'w')",
            "rename": f"os.rename({HOST_ETC!r}, '/tmp/stolen')"}[how]
    r = caller.run("python3", "-c", f"import os\n{code}\nprint('survived')",
                   opts=guarded(caller, "python"))
    assert "survived" not in r.stdout, r
    call = {"unlink": "unlink", "truncate": "openat", "rename": "rename"}[how]
    assert_killed_by_guard(r, call, HOST_ETC)
    assert host_files() == before


def test_the_rm_storm_is_killed_at_its_first_delete(caller):
    r = caller.run("sh", caller.cand("storm_rm.sh"), opts=guarded(caller, "shell"))
    assert_killed_by_guard(r, "unlinkat", "/bin")   # `/*` sorts /bin first
    assert r.result["denied"] <= 1, r.result["counts"]  # the kill, counted as refused
    assert os.path.getsize(r.log_path) < 1 << 20


LEGIT = r"""
import os, subprocess, sys, tempfile
os.makedirs("out/a/b", exist_ok=True)
with open("out/a/b/x.txt", "w") as f:
    f.write("hi")
os.rename("out/a/b/x.txt", "out/y.txt")
os.unlink("out/y.txt")
with tempfile.NamedTemporaryFile(dir="/tmp") as f:
    f.write(b"x")
os.rmdir(tempfile.mkdtemp())
# mkdir -p tries every ancestor of the workdir: they exist, EEXIST
subprocess.run(["mkdir", "-p", os.path.join(os.getcwd(), "deep", "er")], check=True)
subprocess.run(["rm", "-rf", os.path.join(os.getcwd(), "deep")], check=True)
# a bytecode cache beside a system module: refused, the program goes on
pyc = os.path.join(os.path.dirname(os.__file__), "__pycache__", "vigil-guard.pyc")
try:
    open(pyc, "wb")
except OSError as e:
    print("pycache", e.errno)
print("legit ok")
"""


@pytest.fixture
def var_workdir():
    """A host workdir below /var (a guarded tree), writable by the sandbox's user."""
    d = tempfile.mkdtemp(prefix="vigil-guard-", dir="/var/tmp")
    work = os.path.join(d, "work")
    os.mkdir(work)
    for p in (d, work):
        os.chown(p, 65534, 65534)
        os.chmod(p, 0o755)
    yield work
    shutil.rmtree(d, ignore_errors=True)


def test_a_working_candidate_is_unaffected(root_caller, var_workdir):
    for opts in ([], ["--workdir", var_workdir]):
        r = root_caller.run("python3", "-c", LEGIT, opts=[*guarded(root_caller, "python"), *opts])
        res = r.result
        assert r.rc == 0 and res["status"] == "ok", r
        assert "legit ok" in r.stdout and "pycache 13" in r.stdout, r
        assert not [x for x in syscalls(r.recs) if x["decision"] == "kill"]
    # the ancestors below /var were refused as the kernel refuses them
    ancestors = [x for x in syscalls(r.recs, name="mkdir") if x["decision"] == "deny"
                 and x["args"].get("resolved") == "/var"]
    assert ancestors and ancestors[0]["errno"] == errno.EEXIST, syscalls(r.recs, name="mkdir")


def test_a_c_candidate_builds_and_runs(root_caller):
    src = "#include <stdio.h>\nint main(void) { puts(\"built\"); return 0; }\n"
    r = root_caller.run("sh", "-c", f"printf '%s' '{src}' > h.c && gcc -o h h.c && ./h",
                        opts=guarded(root_caller, "c"))
    assert r.rc == 0 and r.result["status"] == "ok" and r.stdout == "built\n", r
