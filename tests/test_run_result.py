"""The result record (`vigil run --result FILE`): every field, with values
checked against what the test knows independently (the command it gave,
hashlib, the log read by Python's msgpack, the clock)."""
import hashlib
import os
import re
import shutil
import subprocess
import time

import pytest

from helpers import DEFAULT_POLICY, VIGIL, root_caller, sha256_file, tally  # noqa: F401

LIMIT_UNITS = {"time": "ms", "cpu": "s", "cputotal": "ms", "memory": "bytes", "procs": "count",
               "files": "count", "fsize": "bytes", "output": "bytes", "tmpfs": "bytes",
               "disk": "bytes", "cpus": "millicpus", "refusals": "count", "log": "bytes"}
CLASSES = ["read", "write", "exec", "connect", "bind", "send", "system"]
DECISIONS = ["allow", "deny", "kill", "would-deny", "would-kill"]


@pytest.fixture(scope="module")
def burn(root_caller):
    """A CPU-burning Python candidate, run once with a few flags set."""
    script = root_caller.cand("cpuburn.py")
    t0 = time.time()
    r = root_caller.run("python3", script,
                        opts=["--task-id", "task-42", "--timeout", "7s", "--memory", "512M"])
    return r, script, t0


def test_identity_fields(burn):
    r, script, _ = burn
    res = r.result
    assert res["format"] == 1
    version = subprocess.run([VIGIL, "--version"], capture_output=True, text=True).stdout
    assert res["vigil_version"] == r.recs[0]["vigil"]
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", res["vigil_version"])
    assert version.split() == ["vigil", res["vigil_version"]]
    assert res["task_id"] == "task-42" and r.recs[0]["task_id"] == "task-42"
    assert res["argv"] == ["python3", script]
    assert res["mode"] == "enforce"
    assert res["log"] == r.log_path


def test_artifacts_are_hashed(burn):
    r, script, _ = burn
    arts = {a["path"]: a["sha256"] for a in r.result["artifacts"]}
    assert arts == {script: sha256_file(script)}
    assert {a["path"]: a["sha256"] for a in r.recs[0]["artifacts"]} == arts


def test_outcome_fields(burn):
    r, _, t0 = burn
    res = r.result
    assert res["status"] == "ok" and res["limit"] is None and res["error"] is None
    assert res["exit_code"] == 0 and res["candidate_exit_code"] == 0 and res["signal"] is None
    assert res["cpu_s"] > 0.2, res["cpu_s"]
    assert res["cpu_s"] == pytest.approx(res["cpu_user_s"] + res["cpu_sys_s"], abs=1e-3)
    assert 0.2 < res["wall_s"] <= r.wall + 0.01
    assert 1 << 20 < res["peak_memory_bytes"] < 512 << 20
    start = time.mktime(time.strptime(res["start_time"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert t0 - 2 <= start <= t0 + 5, (res["start_time"], t0)
    assert abs(res["start_unix_ns"] / 1e9 - start) < 1
    assert res["start_unix_ns"] == r.recs[0]["start_wall"]


def test_output_fields(burn):
    r, _, _ = burn
    res = r.result
    out = res["stdout"]
    assert out["tail"] == r.stdout and out["tail"].startswith("spins ")
    assert out["bytes"] == len(r.stdout.encode()) and out["truncated"] is False
    assert out["forwarded"] == out["bytes"]
    assert res["stderr"] == {"bytes": 0, "truncated": False, "forwarded": 0, "tail": ""}


def test_limits_fields(burn):
    r, _, _ = burn
    lim = r.result["limits"]
    assert set(lim) == set(LIMIT_UNITS)
    for name, unit in LIMIT_UNITS.items():
        assert lim[name]["unit"] == unit, name
        if name in ("cpus", "cputotal"):  # none unless one is asked for
            assert lim[name]["value"] is None and lim[name]["enforced_by"] == "none"
            continue
        if name == "disk":  # no host workdir: its tmpfs bounds the workdir
            assert lim[name]["enforced_by"] == "none"
            continue
        assert isinstance(lim[name]["value"], int) and lim[name]["value"] > 0
        assert lim[name]["enforced_by"], name
        assert lim[name]["hit"] is False
    assert lim["time"]["value"] == 7000
    assert lim["memory"]["value"] == 512 << 20
    assert r.result["limits_hit"] == []
    # the same limits as the log header
    assert {x["name"]: x["value"] for x in r.recs[0]["limits"]} == \
        {k: v["value"] for k, v in lim.items() if v["enforced_by"] != "none"}


def test_policy_fields(burn):
    r, _, _ = burn
    pol = r.result["policy"]
    hdr = r.recs[0]["policy"]
    assert pol["path"] == "(builtin) default.policy" == hdr["path"]
    assert re.fullmatch(r"[0-9a-f]{64}", pol["sha256"])
    assert pol["sha256"] == hdr["sha256"]
    assert pol["sha256"] == hashlib.sha256(hdr["text"].encode()).hexdigest()


def test_counts_equal_the_log(burn):
    r, _, _ = burn
    res = r.result
    t = tally(r.recs)
    assert set(res["counts"]) == set(CLASSES)
    for c in CLASSES:
        assert set(res["counts"][c]) == set(DECISIONS)
        for d in DECISIONS:
            assert res["counts"][c][d] == t.get((c, d), 0), (c, d)
    assert res["allowed"] == sum(n for (c, d), n in t.items() if d == "allow")
    assert res["denied"] == sum(n for (c, d), n in t.items() if d != "allow")
    assert res["allowed"] > 10  # python reads its libraries
    starts = [x for x in r.recs if x["type"] == "proc" and x["kind"] == "start"
              and not x.get("thread")]
    assert res["processes"] == len(starts)


def test_policy_file_given_with_p(root_caller, tmp_path):
    pol = tmp_path / "mine.policy"
    pol.write_text(open(DEFAULT_POLICY).read() + "# a copy, given with -p\n")
    r = root_caller.run("true", opts=["-p", str(pol)])
    assert r.rc == 0, r
    res = r.result
    assert res["policy"]["path"] == str(pol)
    assert res["policy"]["sha256"] == r.recs[0]["policy"]["sha256"]
    assert pol.read_text() in r.recs[0]["policy"]["text"]


@pytest.mark.parametrize("cmd, status, code, cand_code, sig", [
    (["true"], "ok", 0, 0, None),
    (["python3", "-c", "raise SystemExit(3)"], "nonzero", 3, 3, None),
    (["python3", "-c", "import os; os.kill(os.getpid(), 9)"], "signal", 137, None, 9),
    (["sh", "-c", "exec /usr/bin/sleep 10"], "timeout", 124, None, 9),
    (["no-such-command-anywhere"], "error", 127, None, None),
])
def test_status_values(root_caller, cmd, status, code, cand_code, sig):
    opts = ["--timeout", "1s"] if status == "timeout" else []
    r = root_caller.run(*cmd, opts=opts)
    res = r.result
    assert (r.rc, res["status"], res["exit_code"]) == (code, status, code), r
    assert res["candidate_exit_code"] == cand_code
    assert res["signal"] == sig
    assert (res["error"] is not None) == (status == "error")
    trailer = r.recs[-1]
    assert trailer["type"] == "trailer"
    assert trailer["status"] == status and trailer["exit_code"] == code


def test_scratch_workdir_is_removed_unless_kept(root_caller, tmp_path):
    """Nothing of the default workdir is left on the host (vigil makes any
    host scratch dir under $TMPDIR); with --keep it is, with the
    candidate's files."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {"TMPDIR": str(scratch)}
    r = root_caller.run("sh", "-c", "echo made > made.txt", env=env)
    res = r.result
    assert res["workdir"] == r.recs[0]["cwd"] and res["workdir_kept"] is False
    assert os.listdir(scratch) == []
    r = root_caller.run("sh", "-c", "echo made > made.txt", opts=["--keep"], env=env)
    res = r.result
    try:
        assert res["workdir_kept"] is True
        assert os.path.dirname(res["workdir"]) == str(scratch)
        with open(os.path.join(res["workdir"], "made.txt")) as f:
            assert f.read() == "made\n"
    finally:
        shutil.rmtree(res["workdir"], ignore_errors=True)


def test_given_workdir_is_the_candidates_cwd_and_stays(root_caller, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o777)
    r = root_caller.run("sh", "-c", "pwd; echo made > made.txt", opts=["--workdir", str(work)])
    assert r.rc == 0, r
    assert r.stdout == f"{work}\n"
    assert (work / "made.txt").read_text() == "made\n"
    assert r.result["workdir"] == str(work) and r.result["workdir_kept"] is True


def test_file_named_on_the_command_line_inside_the_workdir_stays_writable(root_caller, tmp_path):
    """`gcc -o prog x.c` run twice in the same --workdir: the second time
    prog exists and is named on the command line.  It is already visible
    (writable) through the workdir, so it must not be bound read-only."""
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o777)
    (work / "out.txt").write_text("old\n")
    (work / "out.txt").chmod(0o666)
    r = root_caller.run("sh", "-c", 'echo new > "$1"', "sh", "out.txt",
                        opts=["--workdir", str(work)], cwd=str(work))
    assert r.rc == 0, r
    assert (work / "out.txt").read_text() == "new\n"
    # still hashed as an artifact of the run
    assert any(a["path"] == "out.txt" for a in r.result["artifacts"]), r.result["artifacts"]
