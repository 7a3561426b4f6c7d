"""`vigil batch` knows a task by what it runs, not by its id: a task's key
hashes its command or code, the bytes of its inputs and stdin, its policy
(includes expanded), limits, env and vigil's version, so a changed task
runs again and an unchanged one never does; an interrupted or failed run
is never taken for done; `--rerun` widens what runs; stdin reaches the
candidate; relative policy paths are the batch's cwd's, and every policy
and file is checked before anything runs.  Judged from the outside: the
results file, the task directories, exit codes and what vigil says."""
import json
import os
import signal
import subprocess
import time

import pytest

from helpers import root_caller  # noqa: F401

from test_batch import results, write_tasks

DEADLINE = 60


def batch(who, d, *extra, tasks="tasks.jsonl", timeout=120):
    return who.vigil_raw("batch", tasks, "--out", "out", *extra, cwd=d, timeout=timeout)


def counts(stderr):
    """(run, already done) from the batch's last summary line."""
    line = [x for x in stderr.splitlines() if " run, " in x][-1]
    words = line.split(": ")[-1].replace(",", "").split()
    return int(words[0]), int(words[2])


def starts(d):
    """Which attempt each task's result is of: its file's mtime (start_time
    is in whole seconds).  Only results with a status count."""
    out = {}
    tasks = os.path.join(d, "out", "tasks")
    for tid in os.listdir(tasks):
        f = os.path.join(tasks, tid, "result.json")
        try:
            with open(f) as fh:
                if json.load(fh).get("status"):
                    out[tid] = os.stat(f).st_mtime_ns
        except (OSError, ValueError):
            pass
    return out


def by_id(d):
    return {r["task_id"]: r for r in results(os.path.join(d, "out", "results.jsonl"))}


def rerun_of(before, after):
    return sorted(t for t in after if before.get(t) != after[t])


def input_tasks(d, n):
    tasks = []
    for i in range(n):
        sub = os.path.join(d, "in%d" % i)
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "sol.c"), "w") as f:
            f.write("int main(void) { return %d; }\n" % i)
        tasks.append({"id": "t%d" % i, "argv": ["cat", "sol.c"], "inputs": ["in%d/sol.c" % i]})
    return tasks


def test_a_changed_task_and_only_it_runs_again(root_caller):
    d = root_caller.dir("keys")
    tasks = input_tasks(d, 4) + [
        {"id": "code", "code": "print('v1')", "language": "python"}]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (5, 0), r.stderr
    first, recs = starts(d), by_id(d)
    # same argv, different input bytes: different keys; the manifest says why
    assert len({x["key"] for x in recs.values()}) == 5
    size = len("int main(void) { return 1; }\n")
    assert recs["t1"]["inputs"] == [{"path": "in1/sol.c", "size": size,
                                     "sha256": recs["t1"]["inputs"][0]["sha256"]}]
    assert recs["t1"]["inputs"][0]["sha256"] != recs["t2"]["inputs"][0]["sha256"]
    # the same tasks again: nothing runs
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (0, 5), r.stderr
    assert starts(d) == first
    # one byte of one input: exactly that task runs, and its result is the new one
    with open(os.path.join(d, "in2", "sol.c"), "w") as f:
        f.write("int main(void) { return 9; }\n")
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (1, 4), r.stderr
    second = starts(d)
    assert rerun_of(first, second) == ["t2"]
    assert by_id(d)["t2"]["stdout"]["tail"] == "int main(void) { return 9; }\n"
    # same id, new code: exactly that task runs
    tasks[-1]["code"] = "print('v2')"
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (1, 4), r.stderr
    assert rerun_of(second, starts(d)) == ["code"]
    recs = by_id(d)
    assert recs["code"]["stdout"]["tail"] == "v2\n"
    assert [x["task_id"] for x in results(os.path.join(d, "out", "results.jsonl"))] == [
        t["id"] for t in tasks]
    # a limit or an env value is part of what runs, too
    tasks[0]["env"] = {"SEED": "1"}
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (1, 4), r.stderr


def test_an_error_result_is_not_done_and_rerun_widens(root_caller):
    d = root_caller.dir("rerun")
    tasks = [{"id": "ok%d" % i, "argv": ["true"]} for i in range(3)] + \
            [{"id": "bad%d" % i, "argv": ["sh", "-c", "exit 3"]} for i in range(2)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (5, 0), r.stderr
    first = starts(d)
    # --rerun failed: exactly those not ok
    r = batch(root_caller, d, "--rerun", "failed")
    assert r.returncode == 0 and counts(r.stderr) == (2, 3), r.stderr
    second = starts(d)
    assert rerun_of(first, second) == ["bad0", "bad1"]
    # a run that could not be carried out (status error) is no result
    res = os.path.join(d, "out", "tasks", "ok1", "result.json")
    with open(res) as f:
        rec = json.load(f)
    rec["status"] = "error"
    with open(res, "w") as f:
        json.dump(rec, f)
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (1, 4), r.stderr
    third = starts(d)
    assert rerun_of(second, third) == ["ok1"]
    assert by_id(d)["ok1"]["status"] == "ok"
    # --rerun all: every task
    r = batch(root_caller, d, "--rerun", "all")
    assert r.returncode == 0 and counts(r.stderr) == (5, 0), r.stderr
    assert rerun_of(third, starts(d)) == sorted(t["id"] for t in tasks)
    r = batch(root_caller, d, "--rerun", "some")
    assert r.returncode == 2 and "--rerun" in r.stderr, r.stderr


def done_now(d):
    return starts(d) if os.path.isdir(os.path.join(d, "out", "tasks")) else {}


def started_tasks(d):
    """Tasks whose attempt began: task.json (the key) is written first."""
    tasks = os.path.join(d, "out", "tasks")
    return {t for t in (os.listdir(tasks) if os.path.isdir(tasks) else [])
            if os.path.exists(os.path.join(tasks, t, "task.json"))}


def in_flight(d):
    return started_tasks(d) - set(done_now(d))


def test_interrupted_tasks_run_again(root_caller):
    d = root_caller.dir("sigint")
    # three quick tasks, then ones that sleep 2 s: the SIGINT, sent once 3
    # are done and one is under way, lands in the middle of a run (with
    # 0.5 s tasks it twice landed as a run was already ending: the run
    # finished, rightly recorded, and nothing was left cut off to retry)
    tasks = [{"id": "s%02d" % i, "argv": ["sh", "-c", "sleep %s; echo done %d" %
                                          ("0" if i < 3 else "2", i)]}
             for i in range(12)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    p = root_caller.popen(["batch", "tasks.jsonl", "--out", "out", "-j", "2"], cwd=d,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # SIGINT once 3 are done and a run is under way (its key written, no
    # result yet): with the signal between two runs nothing was stopped,
    # and the test once judged such a batch (a quiet make test run)
    deadline = time.monotonic() + DEADLINE
    while time.monotonic() < deadline and not (len(done_now(d)) >= 3 and in_flight(d)):
        time.sleep(0.01)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=DEADLINE)
    assert p.returncode == 3, err
    done = {t for t, _ in starts(d).items()}
    recs = by_id(d)
    # what the results file holds is exactly what finished: no error result in it
    assert set(recs) == done and all(x["status"] == "ok" for x in recs.values()), recs
    assert 3 <= len(done) < len(tasks)
    # runs were under way: started (their key written) and stopped, no result
    started = started_tasks(d)
    assert started - done, (started, done)
    before = starts(d)
    r = batch(root_caller, d, "-j", "2")
    assert r.returncode == 0, r.stderr
    assert counts(r.stderr) == (len(tasks) - len(done), len(done)), r.stderr
    after = starts(d)
    assert rerun_of(before, after) == sorted(t["id"] for t in tasks if t["id"] not in done)
    recs = by_id(d)
    assert sorted(recs) == sorted(t["id"] for t in tasks)
    assert all(x["status"] == "ok" for x in recs.values())


def test_stdin_reaches_the_candidate_and_is_in_the_key(root_caller):
    d = root_caller.dir("stdin")
    with open(os.path.join(d, "n.txt"), "w") as f:
        f.write("50\n")
    double = "print(2 * int(input()))"
    tasks = [{"id": "inline", "code": double, "language": "python", "stdin": "21\n"},
             {"id": "file", "code": double, "language": "python", "stdin": {"file": "n.txt"}},
             {"id": "none", "argv": ["sh", "-c", "cat; echo end"]}]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d)
    assert r.returncode == 0, r.stderr
    recs = by_id(d)
    assert recs["inline"]["stdout"]["tail"] == "42\n" and recs["inline"]["status"] == "ok"
    assert recs["file"]["stdout"]["tail"] == "100\n" and recs["file"]["status"] == "ok"
    assert recs["none"]["stdout"]["tail"] == "end\n"      # no stdin: /dev/null
    assert recs["file"]["stdin"]["path"] == "n.txt" and recs["file"]["stdin"]["size"] == 3
    first = starts(d)
    with open(os.path.join(d, "n.txt"), "w") as f:
        f.write("7\n")
    r = batch(root_caller, d)
    assert r.returncode == 0 and counts(r.stderr) == (1, 2), r.stderr
    assert rerun_of(first, starts(d)) == ["file"]
    assert by_id(d)["file"]["stdout"]["tail"] == "14\n"


@pytest.mark.parametrize("stdin", [5, {"path": "x"}, {"file": "x", "more": 1}])
def test_bad_stdin_is_refused(root_caller, stdin):
    d = root_caller.dir("badstdin")
    write_tasks(os.path.join(d, "tasks.jsonl"), [{"id": "a", "argv": ["true"], "stdin": stdin}])
    r = batch(root_caller, d)
    assert r.returncode == 2 and r.stderr.startswith(
        "vigil batch: tasks.jsonl:1: 'stdin' is a string or"), r.stderr
    assert os.listdir(d) == ["tasks.jsonl"]


def write_policy(d):
    os.makedirs(os.path.join(d, "pol"))
    with open(os.path.join(d, "pol", "mine.policy"), "w") as f:
        f.write("version 1\ndeny read /etc/hostname\ninclude <default>\n")


def test_relative_policy_paths_are_the_batch_cwds(root_caller):
    d = root_caller.dir("relpol")
    write_policy(d)
    tasks = [{"id": "batch-p", "argv": ["cat", "/etc/hostname"]},
             {"id": "own", "argv": ["cat", "/etc/hostname"], "policy": "pol/mine.policy"}]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d, "-p", "pol/mine.policy")
    assert r.returncode == 0, r.stderr
    for rec in by_id(d).values():
        assert rec["status"] == "nonzero" and rec["denied"] > 0, rec
        assert rec["policy"]["path"] == os.path.join(d, "pol", "mine.policy"), rec
    # the policy's text is in the key: an edit runs every task it governs
    with open(os.path.join(d, "pol", "mine.policy"), "a") as f:
        f.write("# edited\n")
    r = batch(root_caller, d, "-p", "pol/mine.policy")
    assert r.returncode == 0 and counts(r.stderr) == (2, 0), r.stderr


@pytest.mark.parametrize("task2,flags,message", [
    ({}, ["-p", "pol/missing.policy"],
     "tasks.jsonl:1: task 'a': policy 'pol/missing.policy': No such file or directory"),
    ({"policy": "pol/missing.policy"}, [],
     "tasks.jsonl:2: task 'b': policy 'pol/missing.policy': No such file or directory"),
    ({"policy": "pol/broken.policy"}, [],
     "tasks.jsonl:2: task 'b': %(d)s/pol/broken.policy:2:9: include not found"),
    ({"stdin": {"file": "no-such.txt"}}, [],
     "tasks.jsonl:2: task 'b': stdin 'no-such.txt': No such file or directory"),
    ({"inputs": ["pol/mine.policy", "mine.policy"]}, [],
     "tasks.jsonl:2: task 'b': inputs 'pol/mine.policy' and 'mine.policy' have one name"),
])
def test_a_missing_policy_or_file_runs_nothing(root_caller, task2, flags, message):
    d = root_caller.dir("nopol")
    write_policy(d)
    with open(os.path.join(d, "mine.policy"), "w") as f:
        f.write("version 1\n")
    with open(os.path.join(d, "pol", "broken.policy"), "w") as f:
        f.write("version 1\ninclude missing-include.policy\n")
    tasks = [{"id": "a", "argv": ["touch", os.path.join(d, "ran")]},
             dict({"id": "b", "argv": ["true"]}, **task2)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    before = sorted(os.listdir(d))
    r = batch(root_caller, d, *flags)
    assert r.returncode == 2, r
    assert r.stderr.startswith("vigil batch: " + message % {"d": d}), r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert sorted(os.listdir(d)) == before        # no out/, nothing ran


def test_an_interrupted_rerun_keeps_the_results_it_had(root_caller):
    """--rerun all stopped half-way, by SIGINT and by SIGKILL: every task
    still has a result of its key (the new one or the one it had), and a
    plain rerun finds them all done."""
    d = root_caller.dir("keep")
    tasks = [{"id": "k%02d" % i, "argv": ["sh", "-c", "sleep 0.4; echo %d" % i]}
             for i in range(10)]
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    r = batch(root_caller, d, "-j", "2")
    assert r.returncode == 0, r.stderr
    ids = sorted(t["id"] for t in tasks)
    for sig in (signal.SIGINT, signal.SIGKILL):
        before = starts(d)
        p = root_caller.popen(["batch", "tasks.jsonl", "--out", "out", "-j", "2", "--rerun",
                               "all"], cwd=d, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline and len(rerun_of(before, starts(d))) < 3:
            time.sleep(0.05)
        p.send_signal(sig)
        p.wait(timeout=DEADLINE)
        assert p.returncode == (3 if sig == signal.SIGINT else -signal.SIGKILL)
        r = batch(root_caller, d, "-j", "2")
        assert r.returncode == 0 and counts(r.stderr) == (0, len(tasks)), r.stderr
        recs = by_id(d)
        assert sorted(recs) == ids and all(x["status"] == "ok" for x in recs.values()), recs
        assert sorted(os.listdir(os.path.join(d, "out", "tasks"))) == ids
