"""The candidate's own Python lines (issue 12): for each refused call of a
CPython process, the record's `py` is the Python stack vigil read from the
interpreter's memory, innermost first.  Judged on real candidates under
the real supervisor, both engines, as root and as nobody: each recorded
file, function and line is the one the candidate's source marks
("MARK: name" comments, found by this test), in the main script, in an
imported module, in a thread and in a Python subprocess; a deep stack is
cut at 64 frames and says so; a candidate that scribbles over what vigil
reads cannot hurt vigil; a C candidate gets its native stack and no `py`;
pyenv's 3.12 and 3.13 (shared libpython, _Py_DebugOffsets), where
installed, bound into the sandbox.
The log is read with Python's msgpack; `vigil log` must say "from
FILE:LINE in FUNC"."""
import json
import os
import re
import shutil

import pytest

from helpers import caller, nobody_caller, root_caller, syscalls  # noqa: F401
from test_viewer import at_row, open_viewer, read_records, term  # noqa: F401

PYTHON = "/usr/bin/python3"      # Debian's 3.11 (pyenv's is on PATH too)
ENGINES = ["ptrace", "notify"]
STACK_MAX = 64


def marks(path):
    """{name: line number} of the "# MARK: name" comments of a source file."""
    out = {}
    with open(path) as f:
        for i, line in enumerate(f, 1):
            m = re.search(r"# MARK: (\w+)", line)
            if m:
                out[m.group(1)] = i
    return out


def run_python(caller, engine, *scripts, opts=(), python=PYTHON, rules=""):
    """Run scripts[0] with python; every script visible at its own path, and
    its directory readable (Python lists it to import the others)."""
    files = [caller.cand(s) for s in scripts]
    d = os.path.dirname(files[0])
    pol = os.path.join(caller.dir("pol"), "py.policy")
    with open(pol, "w") as f:
        f.write("version 1\nallow read %s %s/**\n%sinclude <default>\n" % (d, d, rules))
    arts = [a for f in files for a in ("--artifact", f)]
    r = caller.run(python, files[0], opts=["-p", pol, "--engine", engine, *arts, *opts])
    return r, files


def one(recs, path):
    got = syscalls(recs, path=path)
    assert len(got) == 1, (path, got)
    return got[0]


def frame(f, file, func, line):
    assert (f["file"], f["func"], f["line"]) == (file, func, line)


def log_text(caller, r):
    p = caller.vigil_raw("log", r.log_path)
    assert p.returncode == 0, p.stderr
    return p.stdout


def check_well_formed(rec):
    py = rec.get("py", [])
    assert len(py) <= STACK_MAX
    for f in py:
        assert set(f) == {"file", "func", "line"}
        assert isinstance(f["file"], str) and isinstance(f["func"], str)
        assert isinstance(f["line"], int) and f["line"] >= 0


@pytest.mark.parametrize("engine", ENGINES)
def test_lines_match_the_source(caller, engine):
    r, (main, mod) = run_python(caller, engine, "pyframes_main.py", "pyframes_mod.py")
    assert r.rc == 0 and "pyframes done" in r.stdout, r
    m, mm = marks(main), marks(mod)
    recs = r.recs

    rec = one(recs, "/pyframes/main")
    assert rec["decision"] == "deny"
    frame(rec["py"][0], main, "read_secret", m["main"])
    frame(rec["py"][1], main, "<module>", m["call_main"])
    assert len(rec["py"]) == 2 and not rec.get("py_trunc")
    assert rec.get("stack"), "the native stack is still there"  # notify: bounced for it

    rec = one(recs, "/pyframes/mod")       # code in an imported module
    frame(rec["py"][0], mod, "probe", mm["mod"])
    frame(rec["py"][1], main, "<module>", m["call_mod"])

    rec = one(recs, "/pyframes/thread")    # in a second thread
    assert rec["tid"] != rec["pid"]
    frame(rec["py"][0], main, "Fetcher.in_thread", m["thread"])
    assert rec["py"][-1]["file"].startswith("/usr/lib/python3.11/threading.py")

    rec = one(recs, "/pyframes/child")     # in a Python subprocess
    assert rec["pid"] != one(recs, "/pyframes/main")["pid"]
    frame(rec["py"][0], main, "child", m["child"])

    rec = one(recs, "/pyframes/deep")      # deeper than vigil keeps
    assert len(rec["py"]) == STACK_MAX and rec["py_trunc"] is True
    frame(rec["py"][0], main, "attempt", m["attempt"])
    frame(rec["py"][1], main, "deep", m["deep"])
    for f in rec["py"][2:]:
        frame(f, main, "deep", m["recurse"])

    text = log_text(caller, r)
    for path, where in [("/pyframes/main", "pyframes_main.py:%d in read_secret" % m["main"]),
                        ("/pyframes/mod", "pyframes_mod.py:%d in probe" % mm["mod"]),
                        ("/pyframes/thread",
                         "pyframes_main.py:%d in Fetcher.in_thread" % m["thread"]),
                        ("/pyframes/deep", "pyframes_main.py:%d in attempt" % m["attempt"])]:
        line = next(l for l in text.splitlines() if '"%s"' % path in l)
        assert line.endswith(" from " + where), line
    js = caller.vigil_raw("log", "--json", r.log_path).stdout.splitlines()
    got = next(json.loads(l) for l in js if '"/pyframes/deep"' in l)
    assert got["py"] == one(recs, "/pyframes/deep")["py"] and got["py_trunc"] is True


# Other CPythons, where installed (pyenv): 3.12 by its table row, 3.13 by
# the _Py_DebugOffsets it publishes (libpython shared, not linked in).
PYENV = "/root/.pyenv/versions"
OTHERS = ["3.12.1/bin/python3.12", "3.13.0/bin/python3.13"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("python", OTHERS)
def test_newer_interpreters(root_caller, engine, python):
    exe = os.path.join(PYENV, python)
    if not os.access(exe, os.X_OK):
        pytest.skip("%s is not installed" % exe)
    tree = os.path.dirname(os.path.dirname(exe))
    r, (main, mod) = run_python(
        root_caller, engine, "pyframes_main.py", "pyframes_mod.py", python=exe,
        opts=["--bind", tree], rules="allow read %s/**\nallow exec %s/bin/**\n" % (tree, tree))
    assert r.rc == 0 and "pyframes done" in r.stdout, r
    m, mm = marks(main), marks(mod)
    recs = r.recs
    frame(one(recs, "/pyframes/main")["py"][0], main, "read_secret", m["main"])
    frame(one(recs, "/pyframes/mod")["py"][0], mod, "probe", mm["mod"])
    frame(one(recs, "/pyframes/thread")["py"][0], main, "Fetcher.in_thread", m["thread"])
    frame(one(recs, "/pyframes/child")["py"][0], main, "child", m["child"])
    deep = one(recs, "/pyframes/deep")
    assert len(deep["py"]) == STACK_MAX and deep["py_trunc"] is True
    frame(deep["py"][1], main, "deep", m["deep"])


@pytest.mark.parametrize("engine", ENGINES)
def test_scribbled_frames_cannot_hurt_vigil(caller, engine):
    """The candidate points its code objects' names and tables at garbage,
    gives a code object another type, loops a frame onto itself and wipes
    a code object, each during a refused open: every call is still decided
    and recorded, the run ends normally, and each `py` is well formed."""
    r, _ = run_python(caller, engine, "pyframes_scribble.py")
    assert r.rc == 0 and "scribble done" in r.stdout, r
    recs = r.recs
    assert recs[-1]["type"] == "trailer" and recs[-1]["status"] == "ok"
    for name in ["garbage", "misaligned", "huge", "notcode", "loop", "wipe"]:
        rec = one(recs, "/pyframes/" + name)
        assert rec["decision"] == "deny"
        check_well_formed(rec)
        assert rec["py"][0]["func"] == "attempt", (name, rec["py"])
    loop = one(recs, "/pyframes/loop")
    assert len(loop["py"]) == STACK_MAX and loop["py_trunc"] is True
    # the code object that is not one ends the stack there
    assert len(one(recs, "/pyframes/notcode")["py"]) == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_c_candidate_has_native_stack_and_no_py(caller, engine):
    exe = caller.build("pyframes_native")
    r = caller.run(exe, opts=["--engine", engine])
    assert r.rc == 0 and "native done -1" in r.stdout, r
    rec = one(r.recs, "/pyframes/native")
    assert rec["decision"] == "deny" and "py" not in rec and "py_trunc" not in rec
    assert "main" in [f.get("sym") for f in rec["stack"]]
    assert " from " not in next(l for l in log_text(caller, r).splitlines()
                                if "/pyframes/native" in l)


def test_py_frames_option(root_caller):
    """Refusals by default (would-deny too); `all` every call; `off` none."""
    def allowed_with_py(r):
        return [x for x in r.recs if x["type"] == "syscall" and x["decision"] == "allow"
                and x.get("py")]

    r, (main, mod) = run_python(root_caller, "ptrace", "pyframes_main.py", "pyframes_mod.py")
    assert r.rc == 0 and not allowed_with_py(r)
    r, _ = run_python(root_caller, "ptrace", "pyframes_main.py", "pyframes_mod.py",
                      opts=["--py-frames", "off"])
    assert r.rc == 0 and not [x for x in r.recs if "py" in x]
    assert "stack" in one(r.recs, "/pyframes/main")
    r, _ = run_python(root_caller, "ptrace", "pyframes_main.py", "pyframes_mod.py",
                      opts=["--py-frames", "all"])
    assert r.rc == 0
    imp = [x for x in allowed_with_py(r) if x["args"].get("path") == mod]
    assert imp, "the import's open of the module has the import's line"
    assert imp[0]["py"][-1] == {"file": main, "func": "<module>", "line": marks(main)["import"]}
    assert all(f["file"].startswith("<frozen ") for f in imp[0]["py"][:-1])
    r, _ = run_python(root_caller, "notify", "pyframes_main.py", "pyframes_mod.py",
                      opts=["--dry-run"])
    rec = one(r.recs, "/pyframes/main")
    assert rec["decision"] == "would-deny"
    assert rec["py"][0]["func"] == "read_secret"
    assert "stack" in rec  # a would-be refusal is bounced for its native stack too


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_viewer_detail_lists_the_python_stack(root_caller, term):
    """The detail pane of a refused call lists its Python stack, innermost
    first, with the frame `vigil log` names marked."""
    r, (main, _) = run_python(root_caller, "ptrace", "pyframes_main.py", "pyframes_mod.py")
    m = marks(main)
    records = read_records(r.log_path)
    row = next(i for i, (x, _, _) in enumerate(records)
               if x.get("args", {}).get("path") == "/pyframes/main") + 1
    t = open_viewer(term, r.log_path, height=60, width=160)
    t.keys("/")
    t.wait("/")
    t.type("/pyframes/main")
    t.keys("Enter")
    at_row(t, row)
    t.keys("Enter")
    detail = t.wait("python stack (2 frames)").split(" detail ")[1]
    lines = [l.strip() for l in detail.split("\n")]
    i = lines.index("python stack (2 frames)")
    assert lines[i + 1] == "> 0  %s:%d  in read_secret" % (main, m["main"])
    assert lines[i + 2] == "1  %s:%d  in <module>" % (main, m["call_main"])
    assert any(l.startswith("stack (") for l in lines[i + 3:]), "the native stack follows"
