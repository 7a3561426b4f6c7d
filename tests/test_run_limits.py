"""Resource limits, seen from the outside: a fork bomb, a memory hog, an
endless loop and an output flood each stop at their cap, the host stays
usable, nothing of the sandbox survives, and the result says which limit
was hit."""
import json
import os
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
    assert res["peak_memory_bytes"] < 256 << 20, res["peak_memory_bytes"]


def test_endless_loop_ends_at_the_timeout(root_caller):
    r = root_caller.run(root_caller.build("spin"), opts=["--timeout", "1s"])
    assert r.rc == 124, r
    assert 1.0 <= r.wall < 2.5, r.wall
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
    assert len(out["tail"].encode()) == cap
    assert set(out["tail"]) == {"\0"}
    assert "output" in res["limits_hit"]


def test_cpus_keeps_the_sandbox_on_that_many_cpus(root_caller):
    avail = len(os.sched_getaffinity(0))
    r = root_caller.run("grep", "Cpus_allowed_list", "/proc/self/status", opts=["--cpus", "1"])
    assert r.rc == 0, r
    allowed = r.stdout.split()[-1]
    assert "," not in allowed and "-" not in allowed, allowed  # exactly one CPU
    assert r.result["cpus"] == 1
    too_many = root_caller.vigil_raw("run", "-q", "--cpus", str(avail + 1), "--", "true")
    assert too_many.returncode == 125
    assert f"only {avail} CPUs" in too_many.stderr
