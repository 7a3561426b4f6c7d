"""A prepared ("held") sandbox, `vigil run --hold FD` (docs/RUN.md,
"Prepared runs: --hold"), driven as vigil serve's pool drives it
(tests/hold_driver.py): it says "ready" once built, runs the request's
command as a cold `vigil run` of it would (same output, exit, result and
log, the candidate seeing the same sandbox), refuses a bad request in one
line, and leaves nothing behind when the request never comes."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import hold_driver
from outside import pasta_pids
from helpers import (CANDIDATES, VIGIL, decode_log, marker, root_caller,  # noqa: F401
                     wait_gone, with_marker)

CGROUP_ROOT = "/sys/fs/cgroup"
CGROUP_DEPTH = 5   # vigil's groups are children of vigil's own group
EXIT_VIGIL = 125
CLK_TCK = os.sysconf("SC_CLK_TCK")
# what a candidate reports of the sandbox it is in (tests/candidates/hold_view.py)
VIEW = os.path.join(CANDIDATES, "hold_view.py")


def hold(cwd, opts=(), env=None):
    """A `vigil run --hold` prepared with opts, ready (asserted); env is
    added to vigil's own environment."""
    h = hold_driver.Held([VIGIL, "run", "-q", *opts], cwd=cwd, env={**os.environ, **(env or {})},
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert h.ready(), h.proc.communicate(timeout=30)
    return h


def finish(h, timeout=60):
    h.close()
    out, err = h.proc.communicate(timeout=timeout)
    return h.proc.returncode, out.decode(), err.decode()


def held_run(d, argv, opts=(), stdin_data=b"", streams=None, vigil_env=None, **req):
    """The request's command through a held sandbox (vigil in d, the
    candidate's streams files in streams, else d); (rc, stdout, stderr of
    the candidate, vigil's stderr, request time)."""
    h = hold(d, opts, vigil_env)
    names = {k: os.path.join(streams or d, k) for k in ("in", "out", "err")}
    with open(names["in"], "wb") as f:
        f.write(stdin_data)
    with open(names["in"], "rb") as i, open(names["out"], "wb") as o, \
            open(names["err"], "wb") as e:
        h.send({"argv": argv, **req}, [i.fileno(), o.fileno(), e.fileno()])
    rc, _, verr = finish(h)
    with open(names["out"]) as o, open(names["err"]) as e:
        return rc, o.read(), e.read(), verr, h.t_send


def cold_run(d, argv, opts=(), stdin_data=b"", log=None, result=None, vigil_env=None):
    args = [VIGIL, "run", "-q", *opts]
    args += ["-o", log] if log else []
    args += ["--result", result] if result else []
    p = subprocess.run([*args, "--", *argv], cwd=d, input=stdin_data, capture_output=True,
                       timeout=60, env={**os.environ, **(vigil_env or {})})
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def same_every_run(out):
    """A candidate's view without what differs between two cold runs too:
    the times, vigil's pid in its cgroups' names, a made file's name."""
    view = json.loads(out)
    view.pop("times")
    view["cgroup"] = re.sub(r"vigil-\d+", "vigil-N", view["cgroup"])
    view["mounts"] = [re.sub(r"vigil-file-\w+", "vigil-file-X", m) for m in view["mounts"]]
    return view


def shape(recs):
    """What a log says, without its times and run-specific names."""
    out = []
    for r in recs:
        if r["type"] == "syscall":
            a = r.get("args", {})
            out.append(("syscall", r["pid"], r["class"], r["decision"], r.get("rule"),
                        a.get("path"), a.get("addr")))
        elif r["type"] in ("header", "trailer"):
            out.append((r["type"],))
    return out


# ---- the same run, held or cold ----

def test_a_held_run_is_the_cold_run_of_its_command(root_caller, tmp_path):
    """The candidate's output, exit, what it saw of the sandbox (pids,
    uid, cwd, environment, mounts, its fds), the result record and the
    log's decisions: the same held as cold, with the request's env
    applied as --env."""
    wd = root_caller.dir("wd")
    os.chmod(wd, 0o777)
    # in the workdir, as a pool puts a request's files (vigil runs there)
    shutil.copy(VIEW, wd)
    opts = ["-p", "python", "--workdir", wd]
    # one set, one passed through from vigil's own environment
    env = ["VIGIL_HOLD_TEST=from-request", "VIGIL_HOLD_PASS"]
    vigil_env = {"VIGIL_HOLD_PASS": "passed"}
    d1, d2 = str(tmp_path / "cold"), str(tmp_path / "held")
    os.mkdir(d1)
    os.mkdir(d2)
    argv = ["python3", "hold_view.py", "exit7"]
    crc, cout, cerr = cold_run(wd, argv, [*opts, "--env", env[0], "--env", env[1]],
                               b"stdin text\n", log=os.path.join(d1, "run.msgpack"),
                               result=os.path.join(d1, "r.json"), vigil_env=vigil_env)
    hrc, hout, herr, verr, _ = held_run(wd, argv, opts, b"stdin text\n", streams=d2, env=env,
                                        vigil_env=vigil_env,
                                        log=os.path.join(d2, "run.msgpack"),
                                        result=os.path.join(d2, "r.json"), task_id="t-1")
    assert crc == hrc == 7, (cerr, verr)
    view, cview = same_every_run(hout), same_every_run(cout)
    assert cview == view, (cout, hout)
    assert (view["pid"], view["ppid"], view["uid"]) == (2, 1, 1000), view
    assert view["stdin"] == "stdin text\n" and view["env"]["VIGIL_HOLD_TEST"] == "from-request"
    assert view["env"]["VIGIL_HOLD_PASS"] == "passed"
    assert cerr == herr == "to stderr\n"
    with open(os.path.join(d1, "r.json")) as f:
        cres = json.load(f)
    with open(os.path.join(d2, "r.json")) as f:
        hres = json.load(f)
    assert hres["task_id"] == "t-1" and hres["log"] == os.path.join(d2, "run.msgpack")
    for k in ("status", "exit_code", "argv", "policy", "artifacts", "engine", "limits"):
        assert cres.get(k) == hres.get(k), k
    assert hres["stdout"]["tail"] == hout and hres["stderr"]["tail"] == "to stderr\n"
    crecs, hrecs = (decode_log(os.path.join(d, "run.msgpack")) for d in (d1, d2))
    assert shape(crecs) == shape(hrecs)
    assert hrecs[0]["argv"] == argv and hrecs[0]["task_id"] == "t-1"
    assert sum(r[0] == "syscall" for r in shape(hrecs)) > 10, hrecs
    assert hrecs[0]["cwd"] == crecs[0]["cwd"] == wd


def test_the_candidate_starts_at_the_request_not_at_the_preparation(root_caller, tmp_path):
    """Its own start time (/proc/self/stat) is after the request was sent,
    though the sandbox was ready a second before; pid 1's is the
    preparation's (docs/SECURITY.md says so)."""
    h = hold(str(tmp_path), ["-p", "python", "--artifact", VIEW])
    t_ready = time.clock_gettime(time.CLOCK_BOOTTIME)
    time.sleep(1)
    out, result = (os.path.join(str(tmp_path), n) for n in ("out", "r.json"))
    wall_send = time.time_ns()
    with open(out, "wb") as o:
        h.send({"argv": ["python3", VIEW], "result": result}, [0, o.fileno(), 2])
    rc, _, err = finish(h)
    assert rc == 0, err
    # the run's clock too: its start and wall time are the request's
    with open(result) as f:
        res = json.load(f)
    assert res["start_unix_ns"] >= wall_send and res["wall_s"] < time.time() - wall_send / 1e9
    with open(out) as f:
        view = json.load(f)
    tick = 1 / CLK_TCK
    times = view["times"]
    assert times["start"] / CLK_TCK >= h.t_send - tick, (times, h.t_send)
    assert times["init_start"] / CLK_TCK <= t_ready + tick, (times, t_ready)


# ---- a request that never comes ----

def vigil_cgroups(pid):
    found = []
    base = CGROUP_ROOT.count("/")
    for dirpath, dirs, _ in os.walk(CGROUP_ROOT):
        found += [os.path.join(dirpath, d) for d in dirs if d == "vigil-%d" % pid]
        if dirpath.count("/") - base >= CGROUP_DEPTH:
            dirs[:] = []
    return found


def mounts_of(path):
    with open("/proc/self/mountinfo") as f:
        return [line for line in f if path in line]


@pytest.mark.parametrize("how", ["eof", "sigterm"])
def test_a_held_sandbox_without_a_request_leaves_nothing(root_caller, tmp_path, how):
    """The socket closed (the daemon gone) or SIGTERM while holding: exit
    125, one line saying so, and no process, cgroup, mount or scratch dir
    of the sandbox left; a --result given when preparing gets the error."""
    mark = marker()
    wd = root_caller.dir("wd")
    os.chmod(wd, 0o777)
    result = str(tmp_path / "r.json")
    h = hold(str(tmp_path), ["--env", "M=" + mark, "--workdir", wd, "--result", result])
    pid = h.proc.pid
    assert vigil_cgroups(pid) and len(with_marker(mark)) >= 2  # vigil and its pid 1
    if how == "sigterm":
        h.proc.send_signal(signal.SIGTERM)
    rc, _, err = finish(h)
    assert rc == EXIT_VIGIL, err
    lines = err.strip().split("\n")
    word = "closed" if how == "eof" else "Terminated"
    assert len(lines) == 1 and word in lines[0] and "destroyed unused" in lines[0], err
    assert not wait_gone(mark, 10)
    assert not vigil_cgroups(pid) and not mounts_of(wd)
    assert os.listdir(wd) == [] and sorted(os.listdir(tmp_path)) == ["r.json"]
    with open(result) as f:
        assert json.load(f)["status"] == "error"


def stat_fields(pid):
    """/proc/PID/stat after the command's name (state, ppid, ...); [] once gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()
    except OSError:
        return []


def exited(pid):
    """pid has ended (a zombie, or reaped)."""
    return stat_fields(pid)[:1] in ([], ["Z"], ["X"])


def test_a_held_sandbox_whose_way_out_ended_is_not_handed_out(root_caller, tmp_path):
    """pasta (egress: the policy allows a connect) killed while the sandbox
    is held: the request is refused, the sandbox destroyed unused, rather
    than a run started with no route out."""
    pol = tmp_path / "net.policy"
    pol.write_text("version 1\nallow connect tcp 192.0.2.1:9\ninclude <default>\n")
    h = hold(str(tmp_path), ["-p", str(pol)])
    mine = [p for p in pasta_pids() if stat_fields(p)[1:2] == [str(h.proc.pid)]]
    assert len(mine) == 1, mine
    os.kill(mine[0], signal.SIGKILL)
    deadline = time.monotonic() + 10
    while not exited(mine[0]) and time.monotonic() < deadline:
        time.sleep(0.01)
    with open(os.devnull, "rb") as null:
        h.send({"argv": ["true"]}, [null.fileno()] * 3)
    rc, _, err = finish(h)
    assert rc == EXIT_VIGIL and "pasta" in err and "destroyed unused" in err, err
    assert not vigil_cgroups(h.proc.pid)


def sandbox_init(vigil_pid):
    """The held sandbox's pid 1: vigil's child that is pid 1 of its own
    pid namespace."""
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/status" % d) as f:
                ns = [line.split()[1:] for line in f if line.startswith("NSpid:")][0]
        except (OSError, IndexError):
            continue
        if len(ns) > 1 and ns[-1] == "1" and stat_fields(int(d))[1:2] == [str(vigil_pid)]:
            return int(d)
    return None


def test_a_held_sandbox_whose_pid_1_died_goes_at_once(root_caller, tmp_path):
    """pid 1 killed while the sandbox is held: vigil ends then (exit 125,
    one line), so that the daemon or batch sees the socket close and runs
    the task cold, instead of handing a request to a dead sandbox."""
    h = hold(str(tmp_path))
    init = sandbox_init(h.proc.pid)
    assert init, "no pid 1 found"
    os.kill(init, signal.SIGKILL)
    h.proc.wait(30)                    # on its own, the socket still open
    assert h.sock.recv(64) == b""      # the daemon's side sees it go
    rc, _, err = finish(h)
    assert rc == EXIT_VIGIL and "pid 1 ended while holding" in err, err
    assert not vigil_cgroups(h.proc.pid)


# ---- bad requests ----

BAD = {
    "not json": (b"{argv", 3, "not JSON"),
    "not an object": (b"[1]", 3, "must be a JSON object"),
    "unknown key": ({"argv": ["true"], "cmd": "x"}, 3, "\"cmd\" is not a key"),
    "no argv": ({"env": []}, 3, "has no \"argv\""),
    "empty argv": ({"argv": []}, 3, "has no \"argv\""),
    "argv not strings": ({"argv": ["true", 1]}, 3, "\"argv\" must be a list of strings"),
    "env not NAME=VALUE": ({"argv": ["true"], "env": ["=x"]}, 3, "\"env\" entries"),
    "relative log": ({"argv": ["true"], "log": "run.msgpack"}, 3, "\"log\" must be an absolute"),
    # refused after the request was read, by the checks every -o gets
    "log a directory": ({"argv": ["true"], "log": "/"}, 3, "names a directory"),
    "too big": ({"argv": ["true", "x" * (200 << 10)]}, 3, "larger than 131072 bytes"),
    "two fds": ({"argv": ["true"]}, 2, "carries 2 fds"),
    "four fds": ({"argv": ["true"]}, 4, "carries 4 fds"),
}


@pytest.mark.parametrize("what", sorted(BAD))
def test_a_bad_request_is_refused_in_one_line(root_caller, tmp_path, what):
    """Exit 125, one line naming what is wrong, no log written, no cgroup
    left, and the error record where the request's "result" said (when it
    was read)."""
    request, nfds, says = BAD[what]
    d = str(tmp_path)
    result, log = os.path.join(d, "r.json"), os.path.join(d, "run.msgpack")
    if isinstance(request, dict):
        request = {**request, "result": result}
        request.setdefault("log", log)
    h = hold(d)
    with open(os.devnull, "rb") as null:
        h.send(request, [null.fileno()] * nfds)
    rc, _, err = finish(h)
    lines = err.strip().split("\n")
    assert rc == EXIT_VIGIL and len(lines) == 1 and says in lines[0], err
    assert not os.path.exists(log) and not vigil_cgroups(h.proc.pid)
    if isinstance(BAD[what][0], dict) and what != "too big":
        with open(result) as f:
            rec = json.load(f)
        assert rec["status"] == "error" and says in rec["error"], rec
    else:
        assert not os.path.exists(result)


def test_a_file_the_held_sandbox_does_not_show_is_refused(root_caller, tmp_path):
    """A file named on the command line outside the workdir and the
    system's trees would need a mount the held sandbox no longer makes:
    refused, naming it; given with --artifact when preparing, it runs."""
    script = tmp_path / "elsewhere.py"
    script.write_text("print('ran')\n")
    os.chmod(tmp_path, 0o755)
    d = root_caller.dir("run")
    rc, _, _, verr, _ = held_run(d, ["python3", str(script)], ["-p", "python"])
    assert rc == EXIT_VIGIL and str(script) in verr and "--artifact" in verr, verr
    rc, out, _, verr, _ = held_run(d, ["python3", str(script)],
                                   ["-p", "python", "--artifact", str(script)])
    assert rc == 0 and out == "ran\n", verr


def test_hold_takes_no_command_and_wants_a_seqpacket_socket(tmp_path):
    p = subprocess.run([VIGIL, "run", "--hold", "3", "--", "true"], capture_output=True,
                       text=True, timeout=30)
    assert p.returncode == EXIT_VIGIL and "--hold takes no COMMAND" in p.stderr
    with open(os.devnull) as f:
        fd = f.fileno()
        p = subprocess.run([VIGIL, "run", "--hold", str(fd)], capture_output=True, text=True,
                           timeout=30, pass_fds=(fd,))
    assert p.returncode == EXIT_VIGIL and "not an AF_UNIX SOCK_SEQPACKET socket" in p.stderr
