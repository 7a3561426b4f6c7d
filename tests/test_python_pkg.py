"""The Python package (python/vigil) as a harness author gets it: installed
by pip into a fresh venv, offline (Debian's setuptools and wheel, never
PyPI), with and without the system's msgpack; its typed results of real
candidates under the real ./vigil; every `vigil run` option a keyword;
stdin reaching the candidate; a batch reporting each task as it finishes;
the log decoded; and mypy --strict on the package."""
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from helpers import NOBODY, ROOT, VIGIL, caller, nobody_caller, root_caller  # noqa: F401

sys.path.insert(0, os.path.join(ROOT, "python"))
import vigil as vigil_py  # noqa: E402  (the package under test, from the tree)

PYTHON = "/usr/bin/python3"   # Debian's: its setuptools, wheel and msgpack
SRC = os.path.join(ROOT, "python")


def offline_env():
    """pip told nothing by this machine's configuration (no find-links,
    no index): what it does offline is what it can do alone."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               VIGIL=VIGIL)
    return env


def pip(venv, *args):
    return subprocess.run([os.path.join(venv, "bin", "pip"), *args], env=offline_env(),
                          capture_output=True, text=True, timeout=300)


def copy_src(tmp_path):
    """python/ copied: setuptools builds in the source tree (build/,
    *.egg-info), which is the checkout's, and other tests'."""
    src = tmp_path / "src"
    shutil.copytree(SRC, str(src), ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                                  "__pycache__"))
    return str(src)


def in_venv(venv, script, tmp_path):
    """Run script with the venv's python, from a directory without the
    tree's package; its last stdout line is JSON."""
    r = subprocess.run([os.path.join(venv, "bin", "python"), "-c", textwrap.dedent(script)],
                       env=offline_env(), cwd=str(tmp_path), capture_output=True, text=True,
                       timeout=300)
    return r


# A candidate that reads its stdin: what it prints proves the bytes got in.
ECHO_STDIN = "import sys; data = sys.stdin.read(); print('got', len(data), data.upper())"


@pytest.mark.soak  # a venv made and pip run: 15-50 s, an install test
def test_pip_venv_with_system_site(tmp_path):
    venv = str(tmp_path / "venv")
    subprocess.run([PYTHON, "-m", "venv", "--system-site-packages", venv], check=True)
    r = pip(venv, "install", "--no-build-isolation", "--no-index", copy_src(tmp_path))
    assert r.returncode == 0, r.stdout + r.stderr
    log = str(tmp_path / "run.msgpack")
    r = in_venv(venv, """
        import json, os, vigil
        r = vigil.run(code=%r, language="python", stdin="hello venv\\n", cpus=0.5,
                      timeout="20s", log=%r)
        try:
            vigil.run(["true"], no_such_option=1)
            bad = None
        except TypeError as e:
            bad = str(e)
        seen = []
        recs = vigil.batch([{"id": "a", "code": "print(2 + 2)", "language": "python"},
                            {"id": "b", "argv": ["sh", "-c", "exit 3"]}],
                           out=%r, jobs=2, progress=lambda rec: seen.append(rec.task_id))
        events = list(vigil.read_log(r.log))
        print(json.dumps({
            "file": vigil.__file__,
            "typed": os.path.exists(os.path.join(os.path.dirname(vigil.__file__), "py.typed")),
            "cls": type(r).__name__, "status": r.status is vigil.Status.OK,
            "exit_code": r.exit_code, "tail": r.stdout.tail, "wall": type(r.wall_s).__name__,
            "cpus": r.limits[vigil.Limit.CPUS].value, "compat": r["status"], "bad": bad,
            "seen": sorted(seen), "recs": [(x.task_id, str(x.status)) for x in recs],
            "types": [e["type"] for e in events][:1] + [events[-1]["type"]]}))
    """ % (ECHO_STDIN, log, str(tmp_path / "batch")), tmp_path)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert got["file"].startswith(venv) and got["typed"], got   # the installed copy
    assert got["cls"] == "Result" and got["status"] and got["exit_code"] == 0, got
    assert got["tail"] == "got 11 HELLO VENV\n\n" and got["wall"] == "float", got
    assert got["cpus"] == 500 and got["compat"] == "ok", got   # 0.5 CPUs, in millicpus
    assert "no_such_option" in got["bad"], got
    assert got["seen"] == ["a", "b"] and got["recs"] == [["a", "ok"], ["b", "nonzero"]], got
    assert got["types"] == ["header", "trailer"], got


@pytest.mark.soak  # a venv made and pip run: 15-50 s, an install test
def test_pip_venv_without_msgpack(tmp_path):
    """A venv of its own (no system packages): the package is a wheel
    built once by Debian's python; msgpack, a declared dependency, is not
    to be had offline, so the wheel is installed without it, and only
    read_log misses it, saying what it is and how to get it."""
    dist = str(tmp_path / "dist")
    r = subprocess.run([PYTHON, "-m", "pip", "wheel", "--no-build-isolation", "--no-index",
                        "--no-deps", "-w", dist, copy_src(tmp_path)], env=offline_env(),
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = [os.path.join(dist, w) for w in os.listdir(dist) if w.endswith(".whl")]
    venv = str(tmp_path / "venv")
    subprocess.run([PYTHON, "-m", "venv", venv], check=True)
    r = pip(venv, "install", *wheel)
    assert r.returncode != 0 and "msgpack" in r.stdout + r.stderr, r   # declared, not there
    r = pip(venv, "install", "--no-deps", *wheel)
    assert r.returncode == 0, r.stdout + r.stderr
    log = str(tmp_path / "run.msgpack")
    r = in_venv(venv, """
        import vigil
        r = vigil.run(["sh", "-c", "cat"], stdin=b"no msgpack here", log=%r)
        print(r.status, r.stdout.tail, flush=True)
        vigil.read_log(r.log)
    """ % log, tmp_path)
    assert r.stdout.startswith("ok no msgpack here"), r.stdout + r.stderr
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("vigil._errors.MissingDependencyError: vigil.read_log needs the "
                           "Python package 'msgpack'"), r.stderr
    assert "apt-get install python3-msgpack" in last and "pip install msgpack" in last, last
    # the error itself, not an ImportError from deep inside with it attached
    assert "During handling" not in r.stderr and r.stderr.count("File ") <= 3, r.stderr


def run_tree(*args, **kw):
    kw.setdefault("vigil", VIGIL)
    return vigil_py.run(*args, **kw)


@pytest.mark.parametrize("how", ["bytes", "str", "path", "file"])
def test_stdin_reaches_the_candidate(tmp_path, how):
    data = "line one\nline two\n"
    path = tmp_path / "in.txt"
    path.write_text(data)
    stdin = {"bytes": data.encode(), "str": data, "path": path}.get(how)
    with open(str(path), "rb") as f:
        r = run_tree(code=ECHO_STDIN, language="python", stdin=f if how == "file" else stdin,
                     log=str(tmp_path / "run.msgpack"))
    assert r.status is vigil_py.Status.OK and r.stdout.tail == "got 18 LINE ONE\nLINE TWO\n\n", r


def test_no_stdin_is_dev_null(tmp_path):
    r = run_tree(code=ECHO_STDIN, language="python", log=str(tmp_path / "run.msgpack"))
    assert r.stdout.tail == "got 0 \n", r


def test_result_is_typed_and_complete(tmp_path):
    r = run_tree(["sh", "-c", "echo out; echo err >&2; exit 3"], timeout=20, cpus="1.5",
                 memory="256M", log=str(tmp_path / "run.msgpack"), task_id="t-1",
                 env={"SEED": "7"})
    assert r.status is vigil_py.Status.NONZERO and r.exit_code == 3, r
    assert r.candidate_exit_code == 3 and r.signal is None and r.limit is None, r
    assert r.task_id == "t-1" and r.argv == ["sh", "-c", "echo out; echo err >&2; exit 3"]
    assert r.stdout == vigil_py.Stream(4, False, 4, "out\n") and r.stderr.tail == "err\n"
    assert r.limits[vigil_py.Limit.TIME].value == 20000 and r.limits[vigil_py.Limit.TIME].unit == "ms"
    assert r.limits[vigil_py.Limit.CPUS].value == 1500
    assert r.limits[vigil_py.Limit.MEMORY].value == 256 << 20
    assert r.mode is vigil_py.Mode.ENFORCE and r.log == str(tmp_path / "run.msgpack")
    assert isinstance(r.wall_s, float) and isinstance(r.peak_memory_bytes, int)
    assert r.policy is not None and len(r.policy.sha256 or "") == 64
    assert r.counts["exec"]["allow"] >= 1 and r.allowed and r.processes
    # every field of the record is an attribute (raw only for later ones)
    fields = {f for f in vigil_py.Result.__dataclass_fields__} - {"raw"}
    assert set(r.raw) - fields == set(), set(r.raw) - fields
    # and the dict reading of earlier versions still works
    assert r["status"] == "nonzero" and r["stdout"]["tail"] == "out\n" and "log" in r


def test_limit_enum_is_vigils_table(tmp_path):
    """Limit lists every limit vigil reports, and no other."""
    r = run_tree(["true"], log=str(tmp_path / "run.msgpack"))
    assert [lim.value for lim in vigil_py.Limit] == list(r.raw["limits"])


def test_timeout_and_limit_status(tmp_path):
    r = run_tree(["sleep", "5"], timeout="300ms", log=str(tmp_path / "run.msgpack"))
    assert r.status is vigil_py.Status.TIMEOUT and r.limit is vigil_py.Limit.TIME, r
    assert r.exit_code == 124 and vigil_py.Limit.TIME in r.limits_hit


def test_a_later_vigils_words_still_load():
    rec = {"status": "quarantined", "exit_code": 9, "limit": "gpu", "limits_hit": ["gpu"],
           "new_field": {"x": 1}}
    r = vigil_py.Result.from_dict(rec)
    assert r.status == "quarantined" and isinstance(r.status, vigil_py.Status)
    assert r.limit == "gpu" and r.raw["new_field"] == {"x": 1} and r["new_field"]["x"] == 1


def test_every_run_option_is_a_keyword():
    """Each option of `vigil run --help` is a run() keyword (or one run()
    sets itself), and each keyword a parameter of run()."""
    help_text = subprocess.run([VIGIL, "run", "--help"], capture_output=True, text=True).stdout
    flags = set(re.findall(r"^\s+(?:-\w, )?(--[\w-]+)", help_text, re.M))
    rows = {o.flag: o.keyword for o in vigil_py._run._OPTIONS}
    assert flags - set(vigil_py._run._SET_BY_RUN) == set(rows), flags ^ set(rows)
    params = inspect.signature(vigil_py.run).parameters
    assert all(params[k].kind is inspect.Parameter.KEYWORD_ONLY for k in rows.values())


def test_code_runs_as_a_batch_task_does(tmp_path):
    """code= with each language runs the command and policy a batch task
    of that language gets (the language table is batch/taskfile.c's)."""
    codes = {"python": "print('hi')", "shell": "echo hi", "node": "console.log('hi')"}
    assert set(codes) == set(vigil_py.LANGUAGES)
    recs = vigil_py.batch([{"id": lang, "code": c, "language": lang} for lang, c in codes.items()],
                          out=str(tmp_path / "b"), vigil=VIGIL)
    for rec in recs:
        r = run_tree(code=codes[rec.task_id], language=rec.task_id,
                     log=str(tmp_path / ("%s.msgpack" % rec.task_id)))
        assert (r.status, r.argv, r.policy, r.stdout.tail) == (
            rec.status, rec.argv, rec.policy, rec.stdout.tail) == (
            vigil_py.Status.OK, rec.argv, rec.policy, "hi\n"), (r, rec)


def test_inputs_are_copied_in_and_the_work_dir_removed(tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    data = tmp_path / "data.txt"
    data.write_text("input file\n")
    data.chmod(0o600)   # the caller's own: its copy is still the candidate's to read
    r = run_tree(code="print(open('data.txt').read().strip())", language="python",
                 inputs=[str(data)], log=str(tmp_path / "run.msgpack"))
    assert r.ok and r.stdout.tail == "input file\n", r
    assert r.workdir and not os.path.exists(r.workdir)   # run() made it, run() removed it
    assert not [p for p in os.listdir(str(tmp_path)) if p.startswith("vigil-py")]
    kept = run_tree(code="open('made.txt', 'w').write('x')", language="python", keep=True,
                    log=str(tmp_path / "run2.msgpack"))
    assert kept.ok and kept.workdir_kept and os.path.exists(os.path.join(kept.workdir, "made.txt"))
    # into a work dir of the caller's, nothing there is written over
    with pytest.raises(FileExistsError, match="cand.py is already in the work dir"):
        run_tree(code="print(1)", language="python", workdir=kept.workdir,
                 log=str(tmp_path / "run3.msgpack"))
    shutil.rmtree(kept.workdir)


@pytest.mark.parametrize("call, exc, words", [
    (lambda: vigil_py.run(["true"], cpus=[2]), TypeError, "cpus= must be a str or a number"),
    (lambda: vigil_py.run(["true"], dry_run="yes"), TypeError, "dry_run= is True or False"),
    (lambda: vigil_py.run("echo hi"), TypeError, "argv is a list of strings"),
    (lambda: vigil_py.run([]), ValueError, "non-empty"),
    (lambda: vigil_py.run(), TypeError, "give argv or code=, not neither"),
    (lambda: vigil_py.run(["x"], code="y"), TypeError, "not both"),
    (lambda: vigil_py.run(code="x", language="cobol"), ValueError, "language= one of python"),
    (lambda: vigil_py.run(["true"], env={"A": 1}), TypeError, "env['A'] must be a str"),
    (lambda: vigil_py.run(["true"], bind="/etc"), TypeError, "bind= is a list"),
    (lambda: vigil_py.run(["cat"], stdin=3.5), TypeError, "stdin= is bytes"),
    (lambda: vigil_py.run(["true"], cpuz=1), TypeError, "cpuz"),
    (lambda: vigil_py.batch([], out="x", jobs=0), ValueError, "jobs="),
    (lambda: vigil_py.batch([], out="x", prepare=-1), ValueError, "prepare= is a number"),
    (lambda: vigil_py.batch([], out="x", uid_range=(1,)), ValueError, "uid_range= is (FIRST"),
    (lambda: vigil_py.batch(["t"], out="x"), TypeError, "task 0 is a mapping"),
])
def test_misuse_is_a_clear_python_error(call, exc, words):
    with pytest.raises(exc, match=re.escape(words)):
        call()


def test_vigil_failing_is_vigil_error(tmp_path):
    with pytest.raises(vigil_py.VigilError, match=r"--memory: 'lots' is not a size") as e:
        run_tree(["true"], memory="lots", log=str(tmp_path / "run.msgpack"))
    assert e.value.exit_code == 125 and e.value.result is not None
    assert e.value.result.status is vigil_py.Status.ERROR
    with pytest.raises(vigil_py.VigilError, match="no vigil binary"):
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv("VIGIL", raising=False)
            mp.setenv("PATH", str(tmp_path))
            vigil_py.run(["true"])


def test_batch_reports_each_task_as_it_finishes(tmp_path):
    """progress gets each task's record once, while the batch runs: the
    last task waits (up to its time limit) for a file in its work dir
    that only the callback for the first task makes."""
    out = tmp_path / "b"
    tasks = [{"id": "first", "code": "print(5)", "language": "python"},
             {"id": "last", "argv": ["sh", "-c", "while [ ! -e go ]; do sleep 0.05; done"],
              "limits": {"timeout": "30s"}}]
    seen = []

    def progress(rec):
        seen.append((rec.task_id, str(rec.status)))
        if rec.task_id == "first":
            (out / "tasks" / "last" / "work" / "go").write_text("")

    recs = vigil_py.batch(tasks, out=str(out), jobs=2, progress=progress, vigil=VIGIL)
    assert seen == [("first", "ok"), ("last", "ok")], seen
    assert [(r.task_id, r.stdout.tail) for r in recs] == [("first", "5\n"), ("last", "")]
    assert all(r.key and len(r.key) == 64 for r in recs)
    # run again: both were done, each is reported once more, nothing runs
    again = []
    vigil_py.batch(tasks, out=str(out), progress=again.append, vigil=VIGIL)
    assert sorted(r.task_id for r in again) == ["first", "last"]


def test_batch_progress_raising_stops_it(tmp_path):
    """A callback that raises stops the batch; the error goes on; a
    second call resumes and runs only what is missing."""
    out = str(tmp_path / "b")
    tasks = [{"id": "t%d" % i, "argv": ["true"]} for i in range(4)]

    def boom(rec):
        raise KeyError("stop at " + str(rec.task_id))

    with pytest.raises(KeyError, match="stop at t0"):
        vigil_py.batch(tasks, out=out, progress=boom, vigil=VIGIL)
    recs = vigil_py.batch(tasks, out=out, vigil=VIGIL)
    assert [r.task_id for r in recs] == ["t0", "t1", "t2", "t3"] and all(r.ok for r in recs)


def test_read_log_decodes_and_fails_early(tmp_path):
    log = str(tmp_path / "run.msgpack")
    r = run_tree(["sh", "-c", "cat /root/.ssh/id_rsa"], log=log)
    events = list(vigil_py.read_log(log))
    assert events[0]["type"] == "header" and events[-1]["type"] == "trailer", events[-1]
    assert [e["args"]["resolved"] for e in events
            if e["type"] == "syscall" and e["decision"] == "deny"] == ["/root/.ssh/id_rsa"], r
    with pytest.raises(FileNotFoundError):
        vigil_py.read_log(str(tmp_path / "none.msgpack"))   # at the call, not at next()


def test_version_is_vigils():
    v = subprocess.run([VIGIL, "--version"], capture_output=True, text=True).stdout.split()
    assert v[:2] == ["vigil", vigil_py.__version__], v


def test_mypy_strict():
    if not shutil.which("mypy"):
        pytest.skip("no mypy (Debian package mypy: scripts/install-deps.sh test)")
    r = subprocess.run(["mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
                        "-p", "vigil"], cwd=SRC, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr


def test_batch_follows_results_jsonl_as_it_is_written(tmp_path):
    """Where vigil batch writes results.jsonl a line per task as it goes
    (in the order tasks finish), each whole line is a task reported with
    its key, a line not yet whole is not, and the file replaced by the
    list in task order is read again from its start, nothing twice."""
    seen = []
    results = tmp_path / "results.jsonl"
    follower = vigil_py._batch._Follower(str(tmp_path), str(results), ["a", "b"], jobs=1,
                                         progress=seen.append)

    def line(task_id):
        return json.dumps({"task_id": task_id, "status": "ok", "exit_code": 0,
                           "key": task_id * 64}) + "\n"

    follower.look()
    results.write_text(line("b") + line("a")[:10])
    follower.look()
    assert [(r.task_id, r.key) for r in seen] == [("b", "b" * 64)]
    (tmp_path / "new").write_text(line("a") + line("b"))
    os.rename(str(tmp_path / "new"), str(results))
    follower.look(final=True)
    assert [(r.task_id, r.key) for r in seen] == [("b", "b" * 64), ("a", "a" * 64)]


def test_batch_shards_are_vigils(tmp_path, monkeypatch):
    """shard=(I, N) runs vigil's shard I, and progress reports exactly its
    tasks (shard_of agrees with vigil batch); shard=None is every task,
    whatever a Slurm array's environment says."""
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "3")
    monkeypatch.setenv("SLURM_ARRAY_TASK_MIN", "0")
    ids = ["task-%d" % i for i in range(9)]
    tasks = [{"id": t, "argv": ["true"]} for t in ids]
    out = str(tmp_path / "b")
    for i in range(3):
        seen = []
        recs = vigil_py.batch(tasks, out=out, jobs=2, shard=(i, 3), progress=seen.append,
                              vigil=VIGIL)
        mine = [t for t in ids if vigil_py.shard_of(t, 3) == i]
        assert [r.task_id for r in recs] == mine and sorted(r.task_id for r in seen) == mine
    assert len({vigil_py.shard_of(t, 3) for t in ids}) > 1   # the shards are not all one
    recs = vigil_py.batch(tasks, out=str(tmp_path / "all"), vigil=VIGIL)
    assert [r.task_id for r in recs] == ids


def test_code_and_inputs_as_either_caller(caller):
    """As root (the sandbox is host nobody: run() gives it the work dir it
    makes) and as an unprivileged caller (the sandbox is that user), the
    code and a 0600 input of the caller's are the candidate's to read,
    stdin and cpus= reach the run, and run() leaves nothing in $TMPDIR."""
    d, tmp = caller.dir("py"), caller.dir("tmp")
    pkg = os.path.join(d, "python")
    shutil.copytree(SRC, pkg, ignore=shutil.ignore_patterns("build", "*.egg-info",
                                                             "__pycache__"))
    data = os.path.join(d, "data.txt")
    with open(data, "w") as f:
        f.write("the input\n")
    os.chmod(data, 0o600)
    if not caller.root:
        for p in (data, *[os.path.join(w, f) for w, _, fs in os.walk(pkg) for f in fs]):
            os.chown(p, NOBODY, NOBODY)
    script = textwrap.dedent("""
        import json, vigil
        r = vigil.run(code="print(open('data.txt').read().strip(), input())", language="python",
                      inputs=[%r], stdin="and stdin", cpus=0.5, log=%r)
        print(json.dumps([str(r.status), r.stdout.tail, r.limits[vigil.Limit.CPUS].value]))
    """ % (data, os.path.join(d, "run.msgpack")))
    argv = [PYTHON, "-c", script]
    if not caller.root:
        argv = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups", "--",
                *argv]
    env = caller.env({"PYTHONPATH": pkg, "VIGIL": caller.vigil, "TMPDIR": tmp})
    r = subprocess.run(argv, env=env, cwd=d, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["ok", "the input and stdin\n", 500], r.stdout
    assert os.listdir(tmp) == []
