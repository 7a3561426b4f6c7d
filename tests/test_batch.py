"""`vigil batch` as a harness author uses it: many mixed candidates at
once, every result there and the same as a single `vigil run` gives,
nothing left behind; a batch killed half-way and run again finishes
without running a finished task twice; shards that together cover every
task exactly once; a misconfigured batch says so (exit 2) and creates
nothing; and the Python package on top (python/vigil)."""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import tempfile

import pytest

from helpers import (ROOT, caller, decode_log, marker, nobody_caller,  # noqa: F401
                     root_caller, wait_gone, with_marker)

sys.path.insert(0, os.path.join(ROOT, "python"))
import vigil as vigil_py  # noqa: E402  (the package under test, from the tree)


def write_tasks(path, tasks):
    with open(path, "w") as f:
        for t in tasks:
            f.write(json.dumps(t) + "\n")
    os.chmod(path, 0o644)


def results(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def mixed_tasks(n, mark):
    """n candidates of several kinds: output, exit codes, a refused read,
    a time limit, shell and Python."""
    tasks = []
    for i in range(n):
        kind = i % 5
        if kind == 0:
            t = {"code": "print(%d * %d)" % (i, i), "language": "python"}
        elif kind == 1:
            t = {"argv": ["sh", "-c", "echo shell %d; exit %d" % (i, i % 7)]}
        elif kind == 2:
            t = {"code": "open('/root/.ssh/id_rsa').read()", "language": "python"}
        elif kind == 3:
            t = {"code": "echo from-script %d\n" % i, "language": "shell"}
        else:
            t = {"code": "import time\ntime.sleep(3)  # %s" % mark, "language": "python",
                 "limits": {"timeout": "300ms"}} if i % 25 == 4 else \
                {"code": "import sys; sys.exit(%d)" % (i % 3), "language": "python"}
        t["id"] = "task-%03d" % i
        tasks.append(t)
    return tasks


def single(who, task, d, env=None):
    """The same task as one `vigil run`, the way a user would write it."""
    work = who.dir("single")
    argv = task.get("argv")
    if "code" in task:
        name = {"python": "cand.py", "shell": "cand.sh"}[task["language"]]
        with open(os.path.join(work, name), "w") as f:
            f.write(task["code"])
        argv = [{"python": "python3", "shell": "sh"}[task["language"]], name]
    os.chmod(work, 0o777)
    opts = ["--workdir", work]
    if "language" in task:
        opts += ["-p", task["language"]]
    for k, v in task.get("limits", {}).items():
        opts += ["--" + k, str(v)]
    return who.run(*argv, opts=opts, cwd=work, env=env)


def comparable(rec):
    return (rec["status"], rec["exit_code"], rec["stdout"]["tail"], rec["denied"] > 0)


def test_a_batch_of_200_equals_single_runs(caller):
    mark = marker()
    d = caller.dir("batch")
    tasks = mixed_tasks(200, mark)
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    # scratch dirs in a TMPDIR of this test's own (vigil honours it): the
    # host's /tmp has those of every other run on the machine meanwhile
    env = {"TMPDIR": caller.dir("tmp")}
    out = os.path.join(d, "out")
    p = caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", "4", cwd=d, timeout=600,
                         env=env)
    assert p.returncode == 0, p.stderr[-2000:]
    recs = results(os.path.join(out, "results.jsonl"))
    assert [r["task_id"] for r in recs] == [t["id"] for t in tasks]
    # no collisions: each record is its own task's, from its own directory
    for r in recs:
        assert r["log"] == os.path.join(out, "tasks", r["task_id"], "run.msgpack"), r
        assert decode_log(r["log"])[0]["task_id"] == r["task_id"]
    # what ran is named by its key: two tasks have one key exactly when
    # they are the same but for their id
    def content(t):
        return json.dumps({k: v for k, v in t.items() if k != "id"}, sort_keys=True)
    for t, r in zip(tasks, recs):
        assert {content(u) for u, s in zip(tasks, recs) if s["key"] == r["key"]} == {content(t)}
    assert all(len(r["key"]) == 64 and r["inputs"] == [] and r["stdin"] is None for r in recs)
    by_id = {r["task_id"]: r for r in recs}
    assert by_id["task-004"]["status"] == "timeout" and by_id["task-004"]["exit_code"] == 124
    assert by_id["task-002"]["denied"] > 0 and by_id["task-002"]["status"] == "nonzero"
    assert by_id["task-001"]["exit_code"] == 1 and "shell 1" in by_id["task-001"]["stdout"]["tail"]
    # the same as single runs
    with ThreadPoolExecutor(4) as pool:
        singles = list(pool.map(lambda t: single(caller, t, d, env), tasks))
    for t, s, r in zip(tasks, singles, recs):
        assert comparable(s.result) == comparable(r), (t, s.result, r)
    # nothing left behind: no scratch dirs, no processes, only the batch's files
    assert os.listdir(env["TMPDIR"]) == []
    assert not wait_gone(mark, 5)
    assert sorted(os.listdir(out)) == [".vigil-batch", "results.jsonl", "tasks"]
    assert sorted(os.listdir(os.path.join(out, "tasks", "task-000"))) == [
        "result.json", "run.msgpack", "task.json", "vigil.stderr", "work"]


def test_killed_batch_resumes_without_running_a_task_twice(root_caller):
    mark = marker()
    d = root_caller.dir("resume")
    tasks = [{"id": "slow-%02d" % i, "argv": ["sh", "-c", "sleep 0.4; echo %s %d" % (mark, i)]}
             for i in range(24)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    out = os.path.join(d, "out")
    p = root_caller.popen(["batch", "tasks.jsonl", "--out", out, "-j", "2"], cwd=d,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    done_dir = os.path.join(out, "tasks")
    while time.monotonic() < deadline:
        done = [t["id"] for t in tasks
                if os.path.exists(os.path.join(done_dir, t["id"], "result.json"))]
        if len(done) >= 6:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    # the runs under way died with the batch (PDEATHSIG), sandboxes too
    assert not wait_gone(mark, 10)
    first = {}
    for t in tasks:
        f = os.path.join(done_dir, t["id"], "result.json")
        try:
            first[t["id"]] = (os.stat(f).st_mtime_ns, json.load(open(f))["start_time"])
        except (OSError, ValueError, KeyError):
            pass  # cut off, or never started: the rerun does it
    assert 6 <= len(first) < len(tasks), first
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", "2", cwd=d, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "%d already done" % len(first) in r.stderr, r.stderr
    recs = results(os.path.join(out, "results.jsonl"))
    assert sorted(x["task_id"] for x in recs) == sorted(t["id"] for t in tasks)
    for tid, (mtime, start) in first.items():
        f = os.path.join(done_dir, tid, "result.json")
        assert (os.stat(f).st_mtime_ns, json.load(open(f))["start_time"]) == (mtime, start), tid
    for x in recs:
        assert x["status"] == "ok" and x["stdout"]["tail"].startswith(mark), x


def test_shards_cover_every_task_once_and_merge(root_caller):
    d = root_caller.dir("shards")
    tasks = [{"id": "s%02d" % i, "argv": ["sh", "-c", "echo %d" % i]} for i in range(40)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    out = os.path.join(d, "out")
    seen = []
    for i in range(4):
        r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "--shard", "%d/4" % i,
                                  "-j", "2", cwd=d, timeout=120)
        assert r.returncode == 0, r.stderr
        part = results(os.path.join(out, "results-%d-of-4.jsonl" % i))
        assert part, "shard %d got no task" % i
        seen += [x["task_id"] for x in part]
    assert sorted(seen) == sorted(t["id"] for t in tasks)      # every task, exactly once
    # the assignment is stable: a shard rerun (a retried array job) finds it all done
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "--shard", "2/4", cwd=d)
    assert r.returncode == 0 and " 0 run," in r.stderr, r.stderr
    # and the Slurm spelling of the same shard
    env = {"SLURM_ARRAY_TASK_ID": "7", "SLURM_ARRAY_TASK_MIN": "5", "SLURM_ARRAY_TASK_COUNT": "4"}
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, cwd=d, env=env)
    assert r.returncode == 0 and "results-2-of-4.jsonl" in r.stderr, r.stderr
    m = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "--merge", cwd=d)
    assert m.returncode == 0, m.stderr
    merged = results(os.path.join(out, "results.jsonl"))
    assert [x["task_id"] for x in merged] == [t["id"] for t in tasks]
    assert [x["stdout"]["tail"] for x in merged] == ["%d\n" % i for i in range(40)]


def test_merge_says_what_is_missing(root_caller):
    d = root_caller.dir("partial")
    tasks = [{"id": "p%d" % i, "argv": ["true"]} for i in range(6)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    out = os.path.join(d, "out")
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "--shard", "0/3", cwd=d)
    assert r.returncode == 0, r.stderr
    m = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "--merge", cwd=d)
    assert m.returncode == 3 and "have no result yet" in m.stderr, m.stderr


@pytest.mark.parametrize("lines,message", [
    (['{"id": "a", "argv": ["true"], "bogus": 1}'], "tasks.jsonl:1: unknown key 'bogus'"),
    (['{"id": "a", "argv": ["true"]}', '{"id": "a", "argv": ["false"]}'],
     "tasks.jsonl:2: duplicate id 'a' (first on line 1)"),
    (['{"id": "a", "argv": ["true"]'], "tasks.jsonl:1: byte 29: expected ',' or '}'"),
    (['{"id": "../x", "argv": ["true"]}'], "tasks.jsonl:1: 'id' must be"),
    (['{"id": "a", "code": "x"}'], "tasks.jsonl:1: 'code' is a string and needs 'language'"),
    (['{"id": "a", "argv": ["true"], "inputs": ["/no/such/file"]}'],
     "tasks.jsonl:1: task 'a': input '/no/such/file': No such file or directory"),
    (['{"id": "a", "argv": ["true"], "policy": "no-such-policy"}'],
     "tasks.jsonl:1: task 'a': policy 'no-such-policy': no such file"),
    # a key twice is not "the first (or the last) wins": it is an error
    (['{"id": "a", "argv": ["true"]}', '{"id": "b", "code": "1", "language": "python", '
      '"code": "2"}'], "tasks.jsonl:2: duplicate key 'code'"),
    (['{"id": "a", "argv": ["true"], "env": {"X": "1", "X": "2"}}'],
     "tasks.jsonl:1: env: duplicate key 'X'"),
    (['{"id": "a", "argv": ["true"], "limits": {"time": "1s", "timeout": "2s"}}'],
     "tasks.jsonl:1: limits: 'time' and 'timeout' are one limit"),
    (['{"id": "a", "argv": ["true"], "env": {"SEED": 1}}'],
     "tasks.jsonl:1: env 'SEED': the value must be a string"),
    (['{"id": "a", "argv": ["true"]}', '{"id": "b", "argv": ["echo", "caf\xe9"]}'],
     "tasks.jsonl:2: byte 34: invalid UTF-8"),
    (['{"id": "a", "argv": ["true"], "limits": {"memroy": "1G"}}'],
     "tasks.jsonl:1: limits: unknown limit 'memroy'"),
    (['{"id": "a", "argv": ["true"], "limits": {"memory": "10"}}'],
     "tasks.jsonl:1: limits 'memory': '10' is not"),
    ([], "tasks.jsonl: no tasks"),
])
def test_misconfigured_batch_exits_2_and_creates_nothing(root_caller, lines, message):
    d = root_caller.dir("bad")
    with open(os.path.join(d, "tasks.jsonl"), "wb") as f:   # latin-1: bytes as written
        f.write(("\n".join(lines) + ("\n" if lines else "")).encode("latin-1"))
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", "out", cwd=d)
    assert r.returncode == 2, r
    assert r.stderr.startswith("vigil batch: " + message), r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert os.listdir(d) == ["tasks.jsonl"]


def test_out_that_is_not_a_batch_directory_is_refused(root_caller):
    d = root_caller.dir("notours")
    write_tasks(os.path.join(d, "tasks.jsonl"), [{"id": "a", "argv": ["true"]}])
    os.makedirs(os.path.join(d, "out", "tasks", "a"))
    precious = os.path.join(d, "out", "tasks", "a", "precious.txt")
    open(precious, "w").write("keep me\n")
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", "out", cwd=d)
    assert r.returncode == 2 and "not a vigil batch directory" in r.stderr, r.stderr
    assert open(precious).read() == "keep me\n"


def test_python_package(root_caller, tmp_path, monkeypatch):
    os.environ["VIGIL"] = root_caller.vigil
    work = tmp_path / "py"
    work.mkdir()
    os.chmod(str(work), 0o777)
    with open(str(work / "cand.py"), "w") as f:
        f.write("print('from python')\nopen('/root/.ssh/id_rsa')\n")
    res = vigil_py.run(["python3", "cand.py"], policy="python", timeout="20s",
                       workdir=str(work), cwd=str(work), log=str(tmp_path / "run.msgpack"))
    assert res["status"] == "nonzero" and res["stdout"]["tail"] == "from python\n", res
    events = list(vigil_py.read_log(res["log"]))
    assert events[0]["type"] == "header" and events[-1]["type"] == "trailer"
    assert any(e["type"] == "syscall" and e["decision"] == "deny"
               and "id_rsa" in (e["args"].get("resolved") or "") for e in events)
    # the storm caps are keywords too
    res = vigil_py.run(["python3", os.path.join(ROOT, "tests", "candidates", "storm_denied.py")],
                       refusals=25, log_size="2M", log=str(tmp_path / "storm.msgpack"))
    assert res["status"] == "limit" and res["limit"] == "refusals", res
    assert res["limits"]["refusals"]["value"] == 25 and res["limits"]["log"]["value"] == 2 << 20
    recs = vigil_py.batch([{"id": "a", "code": "print(2 + 2)", "language": "python"},
                           {"id": "b", "argv": ["sh", "-c", "exit 4"]}],
                          out=str(tmp_path / "batch"), jobs=2)
    assert [(r["task_id"], r["status"], r["stdout"]["tail"]) for r in recs] == [
        ("a", "ok", "4\n"), ("b", "nonzero", "")]
    # rerun="failed" runs b again, and only b
    log_a = os.stat(recs[0]["log"]).st_mtime_ns
    log_b = os.stat(recs[1]["log"]).st_mtime_ns
    vigil_py.batch([{"id": "a", "code": "print(2 + 2)", "language": "python"},
                    {"id": "b", "argv": ["sh", "-c", "exit 4"]}],
                   out=str(tmp_path / "batch"), jobs=2, rerun="failed")
    assert os.stat(recs[0]["log"]).st_mtime_ns == log_a
    assert os.stat(recs[1]["log"]).st_mtime_ns != log_b
    with pytest.raises(vigil_py.VigilError, match="no tasks"):
        vigil_py.batch([], out=str(tmp_path / "empty"))
    with pytest.raises(TypeError):
        vigil_py.run(["true"], no_such_flag=1)
    # without log=, the log goes to vigil's state directory, and run()
    # leaves nothing of its own behind
    # its temporary files in a directory of this test's own: the host's
    # /tmp has those of every other test meanwhile
    own_tmp = tmp_path / "tmp"
    own_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own_tmp))
    before = set(glob.glob(str(own_tmp / "vigil-py-*")))
    state = tmp_path / "state"
    state.mkdir()
    os.environ["XDG_STATE_HOME"] = str(state)
    try:
        res = vigil_py.run(["true"])
    finally:
        del os.environ["XDG_STATE_HOME"]
    assert res["status"] == "ok" and res["log"].startswith(str(state / "vigil")), res["log"]
    assert set(glob.glob(str(own_tmp / "vigil-py-*"))) == before
