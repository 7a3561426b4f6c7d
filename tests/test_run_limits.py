"""Resource limits, seen from the outside: a fork bomb, a memory hog, an
endless loop and an output flood each stop at their cap, the host stays
usable, nothing of the sandbox survives, and the result says which limit
was hit."""
import json
import os
import re
import subprocess
import threading
import time

from helpers import ROOT, caller, nobody_caller, root_caller, with_marker  # noqa: F401

GiB = 1 << 30


class Responsiveness:
    """Start a trivial host command every 0.2 s while the test runs; the
    slowest start, in seconds, says whether the host stayed usable."""

    def __init__(self):
        self.worst = 0.0
        self.runs = 0
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def _loop(self):
        while not self._stop.wait(0.2):
            t0 = time.monotonic()
            subprocess.run(["/bin/true"], check=True)
            self.worst = max(self.worst, time.monotonic() - t0)
            self.runs += 1

    def stop(self):
        self._stop.set()
        self._t.join()


def test_fork_bomb_stops_at_the_process_cap(caller):
    bomb = caller.build("forkbomb")
    probe = Responsiveness()
    try:
        r = caller.run(bomb, opts=["--timeout", "5s", "--procs", "32"], timeout=30)
    finally:
        probe.stop()
    assert r.wall < 5 + 2, r
    res = r.result
    assert "procs" in res["limits_hit"], (res["status"], res["error"], res["limits_hit"], res["processes"])
    assert res["limits"]["procs"]["value"] == 32
    assert res["processes"] <= 32, res["processes"]
    assert probe.runs >= 10 and probe.worst < 2.0, (probe.runs, probe.worst)
    # nothing of the sandbox is left: not the bomb, not anything run as the
    # sandbox's host user from this test's files
    assert with_marker(bomb) == []
    assert [p for p in with_marker(caller.base) if p[0] == 65534] == []


def test_python_memory_hog_stops_at_the_memory_cap(root_caller):
    r = root_caller.run("python3", root_caller.cand("memhog.py"), opts=["--memory", "256M"])
    res = r.result
    assert r.rc != 0 and "allocated" not in r.stdout, r
    assert res["status"] == "limit" and res["limit"] == "memory", res
    assert res["limits"]["memory"]["value"] == 256 << 20
    assert res["limits"]["memory"]["hit"] is True
    assert "memory" in res["limits_hit"]
    assert r.recs[-1]["type"] == "trailer" and r.recs[-1]["status"] == "limit"
    assert r.recs[-1]["limit"] == "memory"


def test_c_memory_hog_cannot_go_past_the_memory_cap(root_caller):
    r = root_caller.run(root_caller.build("memhog"), opts=["--memory", "256M"])
    assert r.rc != 0, r
    assert "held 2048 MiB" not in r.stdout
    if r.stdout.startswith("malloc failed after"):
        got = int(r.stdout.split()[3])
        assert got < 256, r.stdout
    res = r.result
    assert res["peak_memory_bytes"] <= 256 << 20, res["peak_memory_bytes"]


def test_endless_loop_ends_at_the_timeout(root_caller):
    r = root_caller.run(root_caller.build("spin"), opts=["--timeout", "1s"])
    assert r.rc == 124, r
    assert 1.0 <= r.wall < 8, r.wall  # at the timeout, not the run's 60 s default
    res = r.result
    assert res["status"] == "timeout" and res["exit_code"] == 124
    assert "time" in res["limits_hit"] and res["limits"]["time"]["value"] == 1000
    assert 1.0 <= res["wall_s"] < 2.5
    assert r.recs[-1]["status"] == "timeout" and r.recs[-1]["exit_code"] == 124


def test_file_size_cap(root_caller):
    r = root_caller.run("sh", "-c", "exec head -c 2M /dev/zero > big", opts=["--fsize", "1M"])
    res = r.result
    assert res["status"] == "limit" and res["limit"] == "fsize", res
    assert r.rc == 128 + 25 and res["signal"] == 25


def test_file_size_cap_signal_ignored(root_caller):
    """A candidate that ignores SIGXFSZ gets EFBIG instead of dying: the hit
    is still reported, from the signal the kernel sent."""
    code = ("import errno, signal\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "try:\n"
            "    open('big', 'wb').write(b'x' * (2 << 20))\n"
            "except OSError as e:\n"
            "    print('errno', e.errno); raise SystemExit(3)\n")
    r = root_caller.run("/usr/bin/python3", "-c", code, opts=["--fsize", "1M"])
    res = r.result
    assert "errno 27" in r.stdout, (r.stdout, r.stderr)
    assert res["status"] == "limit" and res["limit"] == "fsize", res
    assert "fsize" in res["limits_hit"] and res["exit_code"] == 3, res


def test_file_size_under_cap_not_reported(root_caller):
    r = root_caller.run("sh", "-c", "trap '' XFSZ; head -c 1000 /dev/zero > small", opts=["--fsize", "1M"])
    assert r.result["status"] == "ok" and r.result["limits_hit"] == [], r.result


def test_open_files_cap(root_caller):
    code = ("fs = []\n"
            "try:\n"
            "    while True: fs.append(open('/etc/hostname'))\n"
            "except OSError as e: print(len(fs), e.errno)\n")
    r = root_caller.run("python3", "-c", code, opts=["--files", "16"])
    n, err = map(int, r.stdout.split())
    assert n <= 16 - 3 and err == 24, r  # EMFILE, counting stdin/out/err


def test_output_flood_keeps_vigil_small(root_caller):
    """2 GiB on stdout: vigil keeps only the tail and stays small."""
    size = 2 * GiB
    d = root_caller.dir("flood")
    log, result = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
    # vigil is started by a small static launcher: ru_maxrss also counts
    # what a child had before its exec, and a child of pytest starts with
    # all of pytest's memory (which grows with every test run before this)
    peakrss, rss_file = os.path.join(d, "peakrss"), os.path.join(d, "rss.txt")
    subprocess.run(["cc", "-O2", "-static", "-o", peakrss,
                    os.path.join(ROOT, "bench", "workloads", "peakrss.c")], check=True)
    t0 = time.monotonic()
    with open(os.devnull, "wb") as devnull:
        p = subprocess.run([peakrss, rss_file, root_caller.vigil, "run", "-q", "-o", log,
                            "--result", result, "--", "head", "-c", str(size), "/dev/zero"],
                           cwd=d, stdout=devnull, stderr=subprocess.PIPE)
    wall = time.monotonic() - t0
    assert p.returncode == 0, p.stderr
    assert wall < 60, wall
    # KiB: the largest of vigil and the processes it reaped
    maxrss = int(open(rss_file).read().split()[0])
    assert maxrss * 1024 < 64 << 20, maxrss
    with open(result) as f:
        res = json.load(f)
    out = res["stdout"]
    cap = res["limits"]["output"]["value"]
    assert out["bytes"] == size and out["truncated"] is True
    assert out["forwarded"] == cap
    assert len(out["tail"].encode()) == 4096  # the default --tail
    assert set(out["tail"]) == {"\0"}
    assert "output" in res["limits_hit"]


def test_output_flood_reaches_the_caller_only_up_to_the_cap(caller):
    """What the caller's pipe receives stops at --output; the rest is
    counted, not passed on, and the result says so."""
    r = caller.run("sh", "-c", "head -c 5M /dev/zero; head -c 3M /dev/zero >&2",
                   opts=["--output", "64k", "--tail", "1k"])
    assert r.rc == 0, r
    assert len(r.stdout) == 64 << 10 and len(r.stderr) == 64 << 10, (len(r.stdout), len(r.stderr))
    res = r.result
    for name, size in (("stdout", 5 << 20), ("stderr", 3 << 20)):
        s = res[name]
        assert s["bytes"] == size and s["forwarded"] == 64 << 10 and s["truncated"] is True
        assert len(s["tail"]) == 1024
    assert res["status"] == "ok" and "output" in res["limits_hit"]
    assert res["limits"]["output"]["hit"] is True


def test_no_forward_passes_nothing_on(caller):
    token = "vigil-token-" + os.urandom(8).hex()
    r = caller.run("sh", "-c", f"echo {token}; echo {token} >&2", opts=["--no-forward"])
    assert r.rc == 0 and token not in r.stdout and token not in r.stderr, r
    res = r.result
    assert res["stdout"]["tail"] == token + "\n" and res["stdout"]["forwarded"] == 0
    assert res["stderr"]["tail"] == token + "\n"


def test_cpuset_keeps_the_sandbox_on_those_cpus(root_caller):
    first = min(os.sched_getaffinity(0))
    r = root_caller.run("grep", "Cpus_allowed_list", "/proc/self/status",
                        opts=["--cpuset", str(first)])
    assert r.rc == 0, r
    assert r.stdout.split()[-1] == str(first)  # exactly that CPU
    assert r.result["cpuset"] == str(first)
    outside = max(os.sched_getaffinity(0)) + 1
    too_many = root_caller.vigil_raw("run", "-q", "--cpuset", f"0-{outside}", "--", "true")
    assert too_many.returncode == 125
    assert "--cpuset" in too_many.stderr and "affinity" in too_many.stderr


def _help_limits(caller):
    """{name-of-flag: default} from `vigil run --help`'s table of limits."""
    out = caller.vigil_raw("run", "--help").stdout
    out = out[out.index("  limits ("):out.index("--cpuset")]
    rows = re.findall(r"^\s+--(\S+) \S+\s+.*\(default (\S+)\)$", out, re.M)
    return dict(rows)


def test_help_docs_and_default_policy_agree_on_the_limits(root_caller):
    """One table: --help prints it, docs/POLICY.md shows the same flags and
    defaults, and the default policy does not contradict it."""
    helped = _help_limits(root_caller)
    with open(os.path.join(ROOT, "docs", "POLICY.md")) as f:
        docs = f.read()
    section = docs[docs.index("### limit\n"):docs.index("### bind")]
    rows = re.findall(r"^\| `(\w+)` \| `--([\w-]+)` \| [^|]+ \| `?([^|`]+?)`? \|", section, re.M)
    assert rows, section
    documented = {flag: default for _, flag, default in rows}
    assert documented == helped, (documented, helped)
    with open(os.path.join(ROOT, "policies", "default.policy")) as f:
        in_policy = dict(re.findall(r"^limit (\w+) (\S+)", f.read(), re.M))
    names = {flag: name for name, flag, _ in rows}
    for flag, default in helped.items():
        if names[flag] in in_policy:
            assert in_policy[names[flag]] == default, (flag, default, in_policy)


def test_command_line_and_policy_accept_the_same_values(root_caller, tmp_path):
    """The flag and the policy line share one parser: the same value is
    accepted by both or refused by both (procs of 2^30 was refused by one)."""
    cases = [("procs", "1073741824"), ("procs", "4194303"), ("procs", "4194304"),
             ("files", "1048577"),
             ("memory", "16M"), ("memory", "15M"), ("cpus", "0.5"), ("cpus", "0.001")]
    flags = {"procs": "--procs", "files": "--files", "memory": "--memory", "cpus": "--cpus"}
    for name, value in cases:
        pol = tmp_path / f"{name}-{value}.policy"
        pol.write_text(f"version 1\nlimit {name} {value}\n")
        by_policy = root_caller.vigil_raw("check", str(pol)).returncode == 0
        # parsed, then perhaps refused as above vigil's own hard rlimit,
        # but never as a bad value
        run = root_caller.vigil_raw("run", "-q", "-o", str(tmp_path / "l.msgpack"),
                                    flags[name], value, "--", "true")
        by_flag = "is not" not in run.stderr
        assert run.returncode == 0 or run.returncode == 125, run
        assert by_policy == by_flag, (name, value, by_policy, by_flag, run.stderr)


def test_a_timeout_names_its_limit(root_caller):
    r = root_caller.run(root_caller.build("spin"), opts=["--timeout", "1s"])
    assert r.rc == 124 and r.result["status"] == "timeout"
    assert r.result["limit"] == "time", r.result["limit"]


PTY_PROBE = """
import os, pty
before = sorted(os.listdir('/dev/pts'))
m, s = pty.openpty()
os.write(s, b'ping\\n')
print(before, os.ttyname(s), os.read(m, 16))
"""


def test_a_pty_opens_on_a_devpts_of_the_sandboxs_own(caller):
    """pty.openpty() works, on a fresh devpts: none of the host's
    terminals is there to be seen."""
    r = caller.run("python3", "-c", PTY_PROBE)
    assert r.rc == 0, r
    assert r.stdout == "['ptmx'] /dev/pts/0 b'ping\\r\\n'\n", r.stdout


def test_a_full_tmpfs_is_a_hit(caller):
    """ENOSPC reaches only the candidate; vigil sees /tmp full (sampled, and
    once more after the run: here the candidate ends at once)."""
    r = caller.run("sh", "-c", "head -c 8M /dev/zero > /tmp/fill", opts=["--tmpfs", "4M"])
    res = r.result
    assert r.rc == 1 and "No space left" in r.stderr, r
    assert res["status"] == "limit" and res["limit"] == "tmpfs", res
    assert res["limits"]["tmpfs"]["hit"] is True


def test_a_tmpfs_filled_and_emptied_is_seen_by_the_sampler(caller):
    r = caller.run("sh", "-c", "head -c 8M /dev/zero > /tmp/fill; sleep 0.6; rm /tmp/fill",
                   opts=["--tmpfs", "4M"])
    assert r.rc == 0, r
    assert r.result["status"] == "ok" and "tmpfs" in r.result["limits_hit"], r.result


def test_a_host_workdir_has_a_size_limit(caller):
    """What a run adds to a host --workdir is bounded by --disk: measured
    every second, the sandbox is killed past it (and what was there before
    does not count)."""
    wd = caller.dir("wd")
    with open(os.path.join(wd, "before"), "wb") as f:
        f.write(b"\\0" * (30 << 20))
    os.chmod(wd, 0o777)
    r = caller.run("sh", "-c", "for i in $(seq 20); do head -c 10M /dev/zero > f$i; sleep 0.2; done;"
                   " echo done", opts=["--workdir", wd, "--disk", "20M"], timeout=60)
    res = r.result
    assert "done" not in r.stdout, r
    assert res["status"] == "limit" and res["limit"] == "disk", res
    assert res["limits"]["disk"]["enforced_by"] == "supervisor"
    added = sum(os.path.getsize(os.path.join(wd, f)) for f in os.listdir(wd) if f != "before")
    assert 20 << 20 < added <= 80 << 20, added   # stopped within about a second


def test_the_sandboxs_own_workdir_has_no_disk_limit_but_the_tmpfs(caller):
    r = caller.run("true")
    assert r.result["limits"]["disk"] == {"value": r.result["limits"]["disk"]["value"],
                                          "unit": "bytes", "enforced_by": "none", "hit": False}


def test_a_workdir_vigil_cannot_measure_ends_the_run(caller):
    """A directory the candidate makes unreadable would hide what is in it
    from the size check: the run stops instead (fail closed)."""
    wd = caller.dir("wd")
    os.chmod(wd, 0o777)
    r = caller.run("sh", "-c", "mkdir hide && head -c 1M /dev/zero > hide/x && chmod 000 hide;"
                   " sleep 5; echo done", opts=["--workdir", wd, "--disk", "100M"], timeout=60)
    os.chmod(os.path.join(wd, "hide"), 0o755)
    res = r.result
    if caller.root:   # root reads it anyway: nothing is hidden, nothing stops
        assert r.stdout == "done\n" and res["status"] == "ok", r
    else:
        assert "done" not in r.stdout and res["limit"] == "disk", res
