"""`vigil batch` prepares the sandboxes of the tasks that run next (`vigil
run --hold`, docs/RUN.md "Many candidates"): seen from the outside, the
next task's prepared vigil is there while the current one runs (and is
not with --no-prepare); the results are those of cold runs; SIGINT or
SIGKILL while sandboxes are prepared leaves no process, cgroup, mount or
scratch directory, and a batch run again finishes; a preparation that
fails, or a request its held sandbox refuses, is said and the task runs
cold with the result a cold run gives."""
import json
import os
import signal
import subprocess
import threading
import time

from helpers import VIGIL, marker, nobody_caller, root_caller, wait_gone  # noqa: F401
from test_batch import comparable, results, vigil_py, write_tasks
from test_run_hold import mounts_of, vigil_cgroups

DEADLINE = 60


def held_vigils(out, batch):
    """{task id: pid} of the batch's prepared sandboxes' vigils waiting for
    their request: a child of the batch, `vigil run --hold` with a task's
    --workdir under out, whose run has not begun (its pid 1 and cgroup
    reaper have the same command line: they are not the batch's children)."""
    found = {}
    prefix = os.path.join(out, "tasks") + "/"
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().decode("utf-8", "replace").split("\0")
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid != batch:
            continue
        if "--hold" in argv and "--workdir" in argv:
            wd = argv[argv.index("--workdir") + 1]
            tid = wd[len(prefix):].split("/")[0]
            # a held run that got its request has its log: it is no longer waiting
            if wd.startswith(prefix) and not os.path.exists(os.path.join(prefix, tid,
                                                                          "run.msgpack")):
                found[tid] = int(d)
    return found


def wait_for(what, within=DEADLINE):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.02)
    return what()


def slow_then_quick(mark, n, sleep="30"):
    """A first task that runs until stopped, then n quick ones; every
    task's env has the marker, so its vigil (held or not), its pid 1 and
    its candidate are found by it."""
    tasks = [{"id": "slow", "argv": ["sh", "-c", "sleep %s; echo %s" % (sleep, mark)],
              "env": {"M": mark}}]
    tasks += [{"id": "q%d" % i, "argv": ["sh", "-c", "echo %d" % i], "env": {"M": mark}}
              for i in range(n)]
    return tasks


def test_the_next_tasks_sandbox_is_prepared_while_one_runs(root_caller):
    """While the slow task's candidate runs at -j 1, K other tasks wait in
    prepared sandboxes (a task whose sandbox is ready first may start
    first: results keep the task file's order)."""
    mark = marker()
    d = root_caller.dir("ahead")
    write_tasks(os.path.join(d, "tasks.jsonl"), slow_then_quick(mark, 3, sleep="2"))
    for flags, k in (((), 1), (("--prepare", "2"), 2), (("--no-prepare",), 0)):
        out = os.path.join(d, "out-%s" % "-".join(flags).strip("-"))
        p = root_caller.popen(["batch", "tasks.jsonl", "--out", out, "-j", "1", *flags], cwd=d,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert wait_for(lambda: os.path.exists(os.path.join(out, "tasks", "slow", "run.msgpack")))
        time.sleep(0.5)   # the slow task runs for 2 s: its followers are prepared by now
        got = held_vigils(out, p.pid)
        assert len(got) == k and "slow" not in got, (flags, got)
        _, err = p.communicate(timeout=DEADLINE)
        assert p.returncode == 0 and "runs cold" not in err.decode(), err.decode()
        assert [r["status"] for r in results(os.path.join(out, "results.jsonl"))] == ["ok"] * 4


def batch_child():
    """The `vigil batch` this process started (vigil.batch's)."""
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and argv[1:2] == [b"batch"]:
            return int(d)
    return None


def test_the_python_package_prepares_as_many_as_asked(root_caller):
    """vigil.batch(prepare=K): K sandboxes wait while the slow task runs;
    uid_range= gives the runs uids of that range."""
    from test_run_hostuid import free_uids
    base = min(free_uids(1)[0], 4_000_000_000)
    mark = marker()
    d = root_caller.dir("py")
    tasks = slow_then_quick(mark, 3, sleep="2")
    for k in (2, 0):
        out, got = os.path.join(d, "out-%d" % k), []
        th = threading.Thread(target=lambda: got.append(vigil_py.batch(
            tasks, out=out, jobs=1, prepare=k, uid_range=(base, base + 5), vigil=VIGIL)))
        th.start()
        try:
            assert wait_for(lambda: os.path.exists(os.path.join(out, "tasks", "slow",
                                                                "run.msgpack")))
            # k are prepared while the slow task runs (2 s): waited for, not timed
            def enough():
                got_now = held_vigils(out, batch_child())
                return got_now if len(got_now) >= k else None
            held = wait_for(enough, within=1.5) or held_vigils(out, batch_child())
        finally:
            th.join(DEADLINE)
        assert len(held) == k and "slow" not in held, (k, held)
        assert [str(r.status) for r in got[0]] == ["ok"] * 4, got
        assert all(base <= json.load(open(os.path.join(out, "tasks", t["id"], "result.json")))
                   ["host_uid"] <= base + 5 for t in tasks)


def stdin_and_input_tasks(d):
    """Tasks that read their stdin (inline and from a file) and an input."""
    with open(os.path.join(d, "case.in"), "w") as f:
        f.write("7 8\n")
    with open(os.path.join(d, "sol.py"), "w") as f:
        f.write("import sys\na, b = map(int, sys.stdin.read().split())\nprint(a * b)\n")
    return [
        {"id": "in-inline", "argv": ["python3", "sol.py"], "inputs": ["sol.py"],
         "stdin": "3 4\n", "policy": "python"},
        {"id": "in-file", "argv": ["python3", "sol.py"], "inputs": ["sol.py"],
         "stdin": {"file": "case.in"}, "policy": "python"},
        {"id": "env", "argv": ["sh", "-c", "echo $SEED"], "env": {"SEED": "41"}},
        {"id": "stderr", "argv": ["sh", "-c", "echo oops >&2; exit 3"]},
        {"id": "mem", "code": "x = bytearray(400 << 20)", "language": "python",
         "limits": {"memory": "64M"}},
    ]


def test_prepared_and_cold_batches_give_the_same_results(root_caller):
    from test_batch import mixed_tasks
    mark = marker()
    d = root_caller.dir("same")
    tasks = mixed_tasks(30, mark) + stdin_and_input_tasks(d)
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    env = {"TMPDIR": root_caller.dir("tmp")}
    recs = {}
    for how in ("--prepare", "--no-prepare"):
        out = os.path.join(d, how.strip("-"))
        args = ("--prepare", "3") if how == "--prepare" else (how,)
        p = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", "2", *args,
                                  cwd=d, env=env, timeout=300)
        assert p.returncode == 0 and "runs cold" not in p.stderr, p.stderr[-2000:]
        recs[how] = results(os.path.join(out, "results.jsonl"))
        assert [r["task_id"] for r in recs[how]] == [t["id"] for t in tasks]
        for r in recs[how]:
            assert r["log"] == os.path.join(out, "tasks", r["task_id"], "run.msgpack")
    for held, cold in zip(recs["--prepare"], recs["--no-prepare"]):
        assert comparable(held) == comparable(cold), (held, cold)
        assert held["key"] == cold["key"]
        # a traceback names the task's own work dir: the same but for the batch directory
        assert held["stderr"]["tail"].replace("/prepare/", "/X/") == \
            cold["stderr"]["tail"].replace("/no-prepare/", "/X/")
        assert (held["limit"], held["artifacts"]) == (cold["limit"], cold["artifacts"])
    by_id = {r["task_id"]: r for r in recs["--prepare"]}
    assert by_id["in-inline"]["stdout"]["tail"] == "12\n"
    assert by_id["in-file"]["stdout"]["tail"] == "56\n"
    assert by_id["env"]["stdout"]["tail"] == "41\n"
    assert by_id["stderr"]["stderr"]["tail"] == "oops\n" and by_id["stderr"]["exit_code"] == 3
    assert by_id["mem"]["status"] != "ok"
    assert os.listdir(env["TMPDIR"]) == []
    assert not wait_gone(mark, 5)


def interrupted_while_prepared(who, sig, mark):
    """A batch at -j 1 --prepare 2, stopped by sig while its slow task
    runs and two others wait prepared: what it leaves."""
    d = who.dir("stop")
    write_tasks(os.path.join(d, "tasks.jsonl"), slow_then_quick(mark, 4))
    out = os.path.join(d, "out")
    env = {"TMPDIR": who.dir("tmp")}
    p = who.popen(["batch", "tasks.jsonl", "--out", out, "-j", "1", "--prepare", "2"], cwd=d,
                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for(lambda: os.path.exists(os.path.join(out, "tasks", "slow", "run.msgpack")))
    held = wait_for(lambda: len(held_vigils(out, p.pid)) == 2 and held_vigils(out, p.pid))
    assert held and len(held) == 2 and "slow" not in held, held
    # being prepared, then built: each held vigil's cgroups come
    assert wait_for(lambda: all(vigil_cgroups(pid) for pid in held.values()))
    p.send_signal(sig)
    _, err = p.communicate(timeout=DEADLINE)
    # no candidate, vigil or pid 1 of any sandbox, held or running, is left
    assert not wait_gone(mark, 10)
    deadline = time.monotonic() + 10
    while any(vigil_cgroups(pid) for pid in held.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(vigil_cgroups(pid) for pid in held.values())
    assert not mounts_of(os.path.join(out, "tasks"))
    assert os.listdir(env["TMPDIR"]) == []
    return d, out, p.returncode, err.decode(), held


def test_sigint_while_sandboxes_are_prepared_leaves_nothing(root_caller):
    mark = marker()
    d, out, rc, err, held = interrupted_while_prepared(root_caller, signal.SIGINT, mark)
    assert rc == 3 and "stopping the runs under way" in err and "runs cold" not in err, err
    # the slow task's interrupted result is set aside, no prepared task has one
    tasks = os.path.join(out, "tasks")
    assert os.path.exists(os.path.join(tasks, "slow", "result.interrupted.json"))
    for t in ["slow", *held]:
        assert not os.path.exists(os.path.join(tasks, t, "result.json")), t
    finish_again(root_caller, d, out, mark)


def test_sigkill_while_sandboxes_are_prepared_leaves_nothing(root_caller):
    mark = marker()
    d, out, rc, _, _ = interrupted_while_prepared(root_caller, signal.SIGKILL, mark)
    assert rc == -signal.SIGKILL
    finish_again(root_caller, d, out, mark)


def finish_again(who, d, out, mark):
    """The same batch again (its slow task quick now) runs what has no result."""
    tasks = slow_then_quick(mark, 4, sleep="0")
    tasks[0]["argv"] = ["sh", "-c", "echo again"]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = who.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", "1", cwd=d, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    recs = results(os.path.join(out, "results.jsonl"))
    assert [(x["task_id"], x["status"]) for x in recs] == [(t["id"], "ok") for t in tasks]
    assert recs[0]["stdout"]["tail"] == "again\n"


def test_a_failed_preparation_runs_cold_and_says_so(root_caller):
    """A prepared vigil killed from outside (the OOM killer, an operator):
    the batch says so, on its stderr and in the task's vigil.stderr, and
    the task runs cold with its full result."""
    mark = marker()
    d = root_caller.dir("failprep")
    write_tasks(os.path.join(d, "tasks.jsonl"), slow_then_quick(mark, 2, sleep="2"))
    out = os.path.join(d, "out")
    p = root_caller.popen(["batch", "tasks.jsonl", "--out", out, "-j", "1"], cwd=d,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    held = wait_for(lambda: held_vigils(out, p.pid).get("q0"))
    assert held
    os.kill(held, signal.SIGKILL)
    _, err = p.communicate(timeout=DEADLINE)
    err = err.decode()
    assert p.returncode == 0, err
    note = "vigil batch: task q0: its prepared sandbox failed (vigil was killed by Killed): " \
           "it runs cold"
    assert note in err.splitlines(), err
    assert "1 tasks ran cold because their prepared sandbox failed" in err, err
    with open(os.path.join(out, "tasks", "q0", "vigil.stderr")) as f:
        assert note in f.read().splitlines()
    recs = {x["task_id"]: x for x in results(os.path.join(out, "results.jsonl"))}
    assert recs["q0"]["status"] == "ok" and recs["q0"]["stdout"]["tail"] == "0\n", recs["q0"]
    assert recs["q1"]["status"] == "ok" and "q1:" not in err
    assert not wait_gone(mark, 5)


def test_a_request_the_held_sandbox_refuses_runs_cold(root_caller):
    """A command naming a host file outside the work dir and the system's
    trees: a cold run shows it, a held sandbox cannot (its mounts are made)
    and refuses the request.  The batch says so and runs the task cold: the
    result is the cold run's; the held sandbox's refusal is kept aside."""
    d = root_caller.dir("refused")
    data = os.path.join(d, "data")
    os.makedirs(data)
    with open(os.path.join(data, "answer.txt"), "w") as f:
        f.write("forty-two\n")
    os.chmod(data, 0o755)
    tasks = [{"id": "abs", "argv": ["cat", os.path.join(data, "answer.txt")]},
             {"id": "plain", "argv": ["echo", "plain"]}]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    held = os.path.join(d, "held")
    r = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", held, cwd=d, timeout=DEADLINE)
    assert r.returncode == 0, r.stderr
    assert ("vigil batch: task abs: its prepared sandbox refused the request (see its "
            "vigil.stderr): it runs cold") in r.stderr.splitlines(), r.stderr
    cold = os.path.join(d, "cold")
    c = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", cold, "--no-prepare", cwd=d,
                              timeout=DEADLINE)
    assert c.returncode == 0 and "runs cold" not in c.stderr, c.stderr
    for h, k in zip(results(os.path.join(held, "results.jsonl")),
                    results(os.path.join(cold, "results.jsonl"))):
        assert comparable(h) == comparable(k) and h["artifacts"] == k["artifacts"], (h, k)
    first = results(os.path.join(held, "results.jsonl"))[0]
    assert first["stdout"]["tail"] == "forty-two\n" and first["artifacts"], first
    aside = os.path.join(held, "tasks", "abs", "result.held.json")
    with open(aside) as f:
        assert json.load(f)["status"] == "error"
    with open(os.path.join(held, "tasks", "abs", "vigil.stderr")) as f:
        said = f.read()
    assert "is not in the held sandbox" in said and "it runs cold" in said, said


def test_uid_range_gives_each_live_run_a_uid_of_its_own(root_caller, nobody_caller):
    """--uid-range: at -j 2 (two held sandboxes ahead) the runs alive at
    once are different host users, each owning its work dir and what its
    candidate wrote there (seen on the host), the result naming the uid; a
    uid is handed again once its vigil is gone.  Bad ranges and a caller
    who is not root: one line, nothing run."""
    from test_run_hostuid import free_uids, pids_of
    base = min(free_uids(1)[0], 4_000_000_000)
    rng = "%d-%d" % (base, base + 7)
    d = root_caller.dir("uids")
    tasks = [{"id": "t%d" % i, "argv": ["sh", "-c", "sleep 1; echo x > mark"]} for i in range(6)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    out = os.path.join(d, "out")
    p = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", "2",
                              "--uid-range", rng, cwd=d, timeout=DEADLINE)
    assert p.returncode == 0, p.stderr
    uids = {}
    for t in tasks:
        res = json.load(open(os.path.join(out, "tasks", t["id"], "result.json")))
        assert res["status"] == "ok", res
        mark = os.stat(os.path.join(out, "tasks", t["id"], "work", "mark"))
        assert mark.st_uid == res["host_uid"] and base <= mark.st_uid <= base + 7, (t, res)
        uids[t["id"]] = mark.st_uid
    assert uids["t0"] != uids["t1"], uids      # the first two run at once
    assert len(set(uids.values())) < len(tasks), uids   # and uids come back
    assert all(pids_of(u) == [] for u in range(base, base + 8))
    for who, args, words in (
            (root_caller, ["--uid-range", "%d-%d" % (base, base + 2)], "uids at least"),
            (root_caller, ["--uid-range", "10-20"], "from 1000 up"),
            (root_caller, ["--uid-range", "%d-%d" % (base, base + 70000)], "at most 65536"),
            (nobody_caller, ["--uid-range", rng], "needs vigil to run as root")):
        d2 = who.dir("bad")
        write_tasks(os.path.join(d2, "tasks.jsonl"), tasks)
        out2 = os.path.join(d2, "out")
        r = who.vigil_raw("batch", "tasks.jsonl", "--out", out2, "-j", "2", *args, cwd=d2)
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1 and words in lines[0], r.stderr
        assert not os.path.exists(out2)
