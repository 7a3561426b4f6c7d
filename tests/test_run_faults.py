"""Exit codes and bad input: vigil's exit status tells the caller what
happened (the candidate's own code, 124, 125, 126, 127, 128+N), and input
it cannot use is refused up front with one line naming the problem,
leaving nothing behind but the result record saying so: no log, no
scratch dir, no process."""
import json
import os
import shutil

import pytest

from helpers import marker, root_caller, with_marker  # noqa: F401


@pytest.fixture
def clean(root_caller, tmp_path):
    """Run vigil with its scratch dirs going to a private TMPDIR (vigil
    honours TMPDIR), so that "nothing left behind" can be checked exactly,
    whatever else runs on the host meanwhile."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    scratch.chmod(0o755)

    class Clean:
        def __init__(self):
            self.dir = root_caller.dir("bad")
            self.log = os.path.join(self.dir, "run.msgpack")
            self.result = os.path.join(self.dir, "result.json")
            self.mark = marker()

        def run(self, opts, cmd=None):
            """vigil run OPTS -- CMD (by default a shell that would sleep
            with this test's marker in its command line)."""
            if cmd is None:
                cmd = ["sh", "-c", "sleep 1000", self.mark]
            args = ["run", "-o", self.log, "--result", self.result, *opts]
            if cmd:
                args += ["--", *cmd]
            return root_caller.vigil_raw(*args, env={"TMPDIR": str(scratch)}, cwd=self.dir,
                                         timeout=30)

        def assert_nothing_left(self):
            assert os.listdir(scratch) == [], "scratch dir left behind"
            assert not os.path.exists(self.log), "log left behind"
            if os.path.exists(self.result):  # the one thing an error leaves: it says so
                with open(self.result) as f:
                    res = json.load(f)
                assert res["status"] == "error" and res["exit_code"] == 125, res
            assert with_marker(self.mark) == []

    return Clean()


def one_line(stderr):
    lines = stderr.strip("\n").split("\n")
    assert len(lines) == 1, stderr
    return lines[0]


BAD = [
    (["--bogus"], "--bogus"),
    (["-t", "4s"], "'-t'"),
    (["--timeout", "soon"], "soon"),
    (["--memory", "lots"], "--memory"),
    (["--procs", "0"], "--procs"),
    (["--cpu", "-1s"], "--cpu"),
    (["--mode", "sideways"], "sideways"),
    (["--bind", "/nonexistent/bind-src"], "/nonexistent/bind-src"),
    (["--bind-rw", "/nonexistent/rw-src:/data"], "/nonexistent/rw-src"),
    (["--bind", "/etc:relative/dst"], "relative/dst"),
    (["-p", "/nonexistent/x.policy"], "/nonexistent/x.policy"),
    (["--workdir", "/nonexistent/wd"], "/nonexistent/wd"),
    (["--artifact", "/nonexistent/artifact.py"], "/nonexistent/artifact.py"),
    (["--env", "=VALUE"], "--env"),
]


@pytest.mark.parametrize("opts, named", BAD, ids=[" ".join(b[0]) for b in BAD])
def test_bad_flag_is_refused_and_leaves_nothing(clean, opts, named):
    r = clean.run(opts)
    assert r.returncode == 125, r
    line = one_line(r.stderr)
    assert named in line, line
    assert r.stdout == ""
    clean.assert_nothing_left()


def test_bad_timeout_names_the_flag_given(clean):
    r = clean.run(["--timeout", "soon"])
    assert r.returncode == 125
    assert "--timeout" in one_line(r.stderr)


def test_missing_command(clean):
    r = clean.run([], cmd=[])
    assert r.returncode == 125
    assert "COMMAND" in one_line(r.stderr)
    clean.assert_nothing_left()


def test_bad_policy_names_file_and_line(clean, tmp_path):
    pol = tmp_path / "broken.policy"
    pol.write_text("version 1\ndefault deny\nallow reed /etc/**\n")
    r = clean.run(["-p", str(pol)])
    assert r.returncode == 125
    assert f"{pol}:3" in one_line(r.stderr)
    clean.assert_nothing_left()


def test_unwritable_log_path(clean):
    r = clean.run(["-o", "/nonexistent/dir/run.msgpack"])
    assert r.returncode == 125
    assert "/nonexistent/dir/run.msgpack" in one_line(r.stderr)
    clean.assert_nothing_left()


def test_unwritable_result_path_is_refused_before_the_run(clean):
    said = "the candidate ran " + clean.mark
    r = clean.run(["--result", "/nonexistent/dir/result.json"], cmd=["echo", said])
    assert r.returncode == 125
    assert "/nonexistent/dir/result.json" in one_line(r.stderr)
    assert said not in r.stdout
    clean.assert_nothing_left()


# ---- the candidate's own fate ----

def test_candidate_exit_code_is_passed_on(root_caller):
    r = root_caller.run("sh", "-c", "exit 3")
    assert r.rc == 3, r
    assert r.result["status"] == "nonzero" and r.result["candidate_exit_code"] == 3


def test_not_executable_is_126(clean, tmp_path):
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho should not run\n")
    script.chmod(0o644)
    r = clean.run([], cmd=[str(script)])
    assert r.returncode == 126, r
    assert "should not run" not in r.stdout
    assert str(script) in r.stderr
    with open(clean.result) as f:
        res = json.load(f)
    assert res["status"] == "error" and res["exit_code"] == 126


def test_command_not_found_is_127(clean):
    name = "no-such-command-" + marker()
    r = clean.run([], cmd=[name])
    assert r.returncode == 127, r
    assert f"{name}: command not found" in r.stderr
    with open(clean.result) as f:
        res = json.load(f)
    assert res["status"] == "error" and res["exit_code"] == 127
    assert name in res["error"]


def test_quiet_still_says_why_the_command_did_not_run(root_caller):
    name = "no-such-command-" + marker()
    r = root_caller.run(name)  # runs with -q
    assert r.rc == 127
    assert f"{name}: command not found" in r.stderr


def test_relative_command_runs(root_caller, tmp_path):
    """`vigil run -- ./prog`: the program named on the command line may run."""
    prog = root_caller.build("forktree")
    d = root_caller.dir("rel")
    shutil.copy(prog, os.path.join(d, "prog"))
    r = root_caller.run("./prog", cwd=d)
    assert r.rc == 0, r
    assert "depth 3" in r.stdout


def test_candidate_killed_by_sigterm_is_143(root_caller):
    r = root_caller.run("python3", "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    assert r.rc == 143, r
    assert r.result["status"] == "signal" and r.result["signal"] == 15


def test_candidate_starts_with_default_signal_state(root_caller):
    r = root_caller.run("grep", "-E", "^Sig(Blk|Ign):", "/proc/self/status")
    state = dict(line.split() for line in r.stdout.splitlines())
    assert state == {"SigBlk:": "0000000000000000", "SigIgn:": "0000000000000000"}, r.stdout


def test_full_disk_stops_the_run_before_the_call_is_released(root_caller, tmp_path):
    """The log lives on a 64 KiB tmpfs; the candidate opens a file in a loop
    and reports how far it got.  When a record cannot be written the run
    stops: status error naming the cause, exit 125, the candidate does not
    finish its loop, and the log is readable up to its last complete
    record."""
    import subprocess
    mnt = tmp_path / "tiny"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)], check=True)
    try:
        loop = root_caller.dir("loop")
        script = os.path.join(loop, "opens.py")
        with open(script, "w") as f:
            f.write("for i in range(20000):\n    open('/etc/hostname').close()\nprint('finished')\n")
        log = str(mnt / "run.msgpack")
        result = os.path.join(loop, "result.json")
        p = root_caller.vigil_raw("run", "-q", "-o", log, "--result", result, "--",
                                  "python3", script)
        assert p.returncode == 125, p
        assert "finished" not in p.stdout
        assert "No space left on device" in p.stderr
        res = json.load(open(result))
        assert res["status"] == "error" and "log cannot be written" in res["error"]
        from helpers import decode_log
        recs = decode_log(log)
        assert recs[0]["type"] == "header" and recs[-1]["type"] != "trailer"
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
