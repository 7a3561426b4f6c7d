"""limit cputotal (--cpu-total): the CPU time of the whole run, every
process and thread, where `cpu` is each process's.  With a cgroup the
supervisor reads the run's count and kills the sandbox past it, within a
few milliseconds; without one each process gets RLIMIT_CPU at the total
(looser), and the result says so.  Cheap: about a second of CPU each."""
from helpers import caller, nobody_caller, root_caller  # noqa: F401

THREADS = "4"
BUDGET_S = 1.0
# What the run may spend past its budget: the watch sleeps at most
# budget_left / CPUs, and 1 ms at the end, so a few ms on two CPUs
# (docs/POLICY.md, cputotal); this is far above that and far below what a
# fixed 250 ms sampler would let four threads spend.
OVERSHOOT_MAX_S = 0.1


def test_the_whole_run_stops_at_its_cpu_time(root_caller):
    r = root_caller.run(root_caller.build("spin_threads"), THREADS,
                        opts=["--cpu-total", f"{BUDGET_S}s", "--timeout", "60s"], timeout=90)
    res = r.result
    assert r.rc == 137, r
    assert res["status"] == "limit" and res["limit"] == "cputotal", res
    lim = res["limits"]["cputotal"]
    assert lim == {"value": int(BUDGET_S * 1000), "unit": "ms",
                   "enforced_by": lim["enforced_by"], "hit": True}, lim
    assert lim["enforced_by"] in ("cgroup v1", "cgroup v2"), lim
    assert res["limits_hit"] == ["cputotal"], res["limits_hit"]   # not `cpu`: no process hit 30 s
    # cpu_s is what the whole sandbox used, the killed threads included
    assert BUDGET_S <= res["cpu_s"] < BUDGET_S + OVERSHOOT_MAX_S, res["cpu_s"]
    assert abs(res["cpu_s"] - res["cpu_user_s"] - res["cpu_sys_s"]) < 1e-3, res
    assert r.recs[-1]["type"] == "trailer" and r.recs[-1]["limit"] == "cputotal"
    assert {x["name"]: x["enforced_by"] for x in r.recs[0]["limits"]}["cputotal"] == \
        lim["enforced_by"]


def test_a_run_under_its_cpu_time_is_not_stopped(root_caller):
    r = root_caller.run("python3", root_caller.cand("cpuburn.py"), opts=["--cpu-total", "30s"])
    res = r.result
    assert r.rc == 0 and res["status"] == "ok", r
    assert res["limits"]["cputotal"]["hit"] is False and res["limits_hit"] == []
    assert 0.5 <= res["cpu_s"] < 30, res["cpu_s"]


def test_without_a_cgroup_each_process_gets_the_total(caller):
    """--no-cgroups (root) and an unprivileged caller: RLIMIT_CPU per
    process at the total, rounded up to seconds; one process of many
    threads is held, SIGXCPU, and the result names the looser mechanism."""
    opts = ["--cpu-total", "900ms", "--timeout", "60s"] + (["--no-cgroups"] if caller.root else [])
    r = caller.run(caller.build("spin_threads"), "2", opts=opts, timeout=90)
    res = r.result
    assert r.rc == 152, r                          # SIGXCPU, as for `cpu`
    assert res["status"] == "limit" and res["limit"] == "cputotal", res
    assert res["limits"]["cputotal"]["enforced_by"] == "rlimit"
    assert res["limits_hit"] == ["cputotal"], res["limits_hit"]
    assert any("RLIMIT_CPU per process" in w and "(1s each)" in w for w in res["warnings"]), \
        res["warnings"]
    # it ran up to its limit (not stopped early); without a cgroup cpu_s is
    # getrusage's, which undercounts a process killed as the run ends
    # (0.79 s seen for a 1 s RLIMIT_CPU under ASan): a lower bound only
    assert res["cpu_s"] >= 0.5, res["cpu_s"]
