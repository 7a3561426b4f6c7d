"""Real limits: where vigil may make cgroups (root here: the v1 memory,
pids and cpu controllers), memory is the sandbox's resident memory plus
swap, processes are counted by pids.max and CPU bandwidth is a quota, and
programs that reserve much more address space than they use (threads, JIT
runtimes) run normally.  Where it may not (uid 65534), the rlimits hold
and the result says so.  Each cgroup vigil makes is gone after the run."""
import glob
import os
import shutil
import signal
import subprocess
import time

import pytest

from helpers import ROOT, caller, nobody_caller, root_caller  # noqa: F401

MiB = 1 << 20
REAPER_GRACE = 5  # s: how long a killed vigil's reaper may take to remove its groups
CGROUP_MECHS = ("cgroup v1", "cgroup v2")
NODE_WORKERS = """
const { Worker } = require('worker_threads');
let done = 0;
for (let i = 0; i < 4; i++) {
  const w = new Worker('const a = new Array(1e5).fill(1); require("worker_threads").parentPort.postMessage(a.length)', {eval: true});
  w.on('message', () => { if (++done === 4) console.log('node ok'); });
}
"""


def own_groups():
    """The cgroup directories this process (and so the vigil it starts)
    sits in, one per v1 hierarchy and the v2 one, where mounted."""
    dirs = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctrls, path = line.rstrip("\n").split(":", 2)
            for c in (ctrls.split(",") if ctrls else ["unified"]):
                d = f"/sys/fs/cgroup/{c}{path}"
                if os.path.isdir(d):
                    dirs.append(d)
    return dirs


def groups_of(pid="*"):
    return {g for d in own_groups() for g in glob.glob(os.path.join(d, f"vigil-{pid}"))}


def leftovers():
    """Groups whose vigil is gone (a running vigil's own are not left over,
    whoever started it)."""
    return {g for g in groups_of()
            if not os.path.exists("/proc/" + g.rsplit("vigil-", 1)[1])}


@pytest.fixture
def nothing_left():
    before = leftovers()
    yield
    # a vigil killed outright leaves its groups to its reaper, which
    # removes them just after (launcher/cgroup.c): this test's, or another
    # worker's run that ended meanwhile; a group still there after that
    # is left behind
    deadline = time.monotonic() + REAPER_GRACE
    while leftovers() - before and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers() - before == set()


def mechanism(res, name):
    return res["limits"][name]["enforced_by"]


def test_threads_run_under_512M(caller, nothing_left):
    """20 Python threads: fine under a memory cgroup; under the rlimit
    fallback the result says it was an address-space limit."""
    outs = [caller.run("python3", caller.cand("limits_threads.py"), opts=["--memory", "512M"])
            for _ in range(5)]
    res = outs[0].result
    if caller.root:
        assert mechanism(res, "memory") in CGROUP_MECHS, res["limits"]
        for r in outs:
            assert r.rc == 0 and r.stdout == "threads ok 20\n", r
            assert r.result["status"] == "ok" and r.result["limits_hit"] == []
    else:
        assert mechanism(res, "memory") == "rlimit"
        assert mechanism(res, "procs") == "rlimit"
    assert res["limits"]["memory"]["value"] == 512 * MiB
    # as the log header says too
    hdr = {x["name"]: x["enforced_by"] for x in outs[0].recs[0]["limits"]}
    assert hdr["memory"] == mechanism(res, "memory")


@pytest.mark.skipif(not shutil.which("node"), reason="Debian's nodejs is not installed")
def test_node_runs_under_512M(root_caller, nothing_left):
    r = root_caller.run("node", "-e", NODE_WORKERS,
                        opts=["-p", os.path.join(ROOT, "policies", "node.policy"),
                              "--memory", "512M", "--timeout", "20s"])
    assert r.rc == 0 and r.stdout == "node ok\n", r
    assert r.result["status"] == "ok" and r.result["limits_hit"] == []


def test_memory_hog_is_stopped_with_limit_memory(root_caller, nothing_left):
    r = root_caller.run("python3", root_caller.cand("memhog.py"), opts=["--memory", "128M"])
    res = r.result
    assert "allocated" not in r.stdout, r
    assert res["status"] == "limit" and res["limit"] == "memory", res
    assert mechanism(res, "memory") in CGROUP_MECHS
    # the kernel's OOM killer ended it at the cap: SIGKILL, exit 137
    assert r.rc == 137 and res["signal"] == 9, r
    # peak memory is the whole sandbox's, read from the cgroup
    assert 64 * MiB < res["peak_memory_bytes"] <= 128 * MiB, res["peak_memory_bytes"]
    assert r.recs[-1]["limit"] == "memory"


def test_a_child_killed_at_the_memory_cap_is_a_hit(root_caller, nothing_left):
    """The candidate survives its child's OOM kill and exits 0: the hit is
    still recorded."""
    hog = root_caller.cand("memhog.py")
    r = root_caller.run("sh", "-c", 'python3 "$0"; echo survived', hog,
                        opts=["--memory", "128M"])
    res = r.result
    assert r.rc == 0 and r.stdout == "survived\n", r
    assert "memory" in res["limits_hit"] and res["limits"]["memory"]["hit"] is True, res


def test_tiny_memory_limit_is_a_clear_error(caller, tmp_path):
    r = caller.vigil_raw("run", "-q", "--memory", "10", "--", "true")
    assert r.returncode == 125, r
    assert "--memory" in r.stderr and "at least 16M" in r.stderr, r.stderr
    pol = os.path.join(caller.dir("pol"), "tiny.policy")
    with open(pol, "w") as f:
        f.write("version 1\nlimit memory 10\n")
    os.chmod(pol, 0o644)
    r = caller.vigil_raw("check", pol)
    assert r.returncode != 0 and "at least 16M" in r.stderr, r


def test_many_threads_hit_a_limit_that_is_named(caller, nothing_left):
    """300 threads, default limits: not a bare nonzero.  Under the cgroup
    the process cap (64) stops them; under the rlimit fallback the address
    space (1G: a malloc arena reserves 64 MiB per thread) runs out first,
    and the result says memory."""
    r = caller.run("python3", caller.cand("limits_threads.py"), "300")
    res = r.result
    assert r.rc != 0 and "threads ok" not in r.stdout, r
    assert res["status"] == "limit", res
    if caller.root:
        assert res["limit"] == "procs" and mechanism(res, "procs") == "cgroup v1", res
    else:
        assert res["limit"] == "memory" and mechanism(res, "memory") == "rlimit", res


def test_cpus_is_a_cpu_time_quota(caller, nothing_left):
    """--cpus 0.5, docker's meaning: two spinning threads get half a CPU's
    time between them, not two CPUs' worth (nor one CPU pinned)."""
    spin = caller.build("limits_spin2")
    r = caller.run(spin, "2", opts=["--cpus", "0.5"])
    res = r.result
    assert r.rc == 0 and r.stdout == "spun\n", r
    assert res["limits"]["cpus"]["value"] == 500
    if caller.root:
        assert mechanism(res, "cpus") == "cgroup v1"
        assert res["cpu_s"] <= 0.5 * res["wall_s"] * 1.25 + 0.1, (res["cpu_s"], res["wall_s"])
    else:  # the fallback: pinned to one CPU, which the result says
        assert mechanism(res, "cpus") == "affinity"
        assert res["cpu_s"] <= 1.0 * res["wall_s"] * 1.1 + 0.1, (res["cpu_s"], res["wall_s"])


def test_sandbox_is_in_its_groups_before_the_candidate_runs(root_caller, nothing_left):
    r = root_caller.run("cat", "/proc/self/cgroup")
    lines = {l.split(":")[1]: l.split(":", 2)[2] for l in r.stdout.splitlines()}
    assert lines["memory"].startswith("/vigil-"), r.stdout
    assert lines["pids"].startswith("/vigil-"), r.stdout


def test_no_group_is_left_after_errors_timeouts_and_kills(root_caller, nothing_left):
    root_caller.run(root_caller.build("spin"), opts=["--timeout", "1s"])
    root_caller.run(root_caller.build("forkbomb"), opts=["--timeout", "3s", "--procs", "16"])
    root_caller.run("no-such-command")
    root_caller.vigil_raw("run", "-q", "--cpuset", "4095", "--", "true")
    root_caller.vigil_raw("run", "-q", "-p", "/nonexistent.policy", "--", "true")


def test_no_group_is_left_when_vigil_is_killed(root_caller, nothing_left):
    """SIGKILL leaves vigil no chance to clean up: its reaper does."""
    d = root_caller.dir("killed")
    p = root_caller.popen(["run", "-q", "-o", os.path.join(d, "run.msgpack"), "--",
                           "sleep", "30"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while len(groups_of(p.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(groups_of(p.pid)) == 2, "the run made its memory and pids groups"
    p.send_signal(signal.SIGKILL)
    p.wait()
    while groups_of(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert groups_of(p.pid) == set()
