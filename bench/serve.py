#!/usr/bin/env python3
"""bench/serve.py: vigil serve from its client's side: latency from the
request to the candidate's first instruction, and runs per second, for a
pooled sandbox (--pool), a cold one through the daemon, a cold `vigil run`
and bwrap with the same isolation (bench/tools.py), interleaved in one run.

The candidate is bench/workloads/first_instruction.c (static, no C
library): its first act writes CLOCK_MONOTONIC to stdout.  Through the
daemon the request is the moment the client starts sending the POST, and
the stamp is read back from the run's stdout; a cold run through the
daemon is the same request with a limit of its own (no pooled sandbox has
it).  Runs per second: RUNS runs of /bin/true submitted by 4 clients at
once, each waiting for its run's end.

Run as root.  Usage: bench/serve.py [RUNS]  (default 100 of each)"""
import base64
import concurrent.futures
import http.client
import json
import os
import shutil
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from hold import build  # noqa: E402
from tools import bwrap_argv  # noqa: E402

VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
STAMP = struct.Struct("<Q")
CLIENTS = 4
POOL = 4


class Conn(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=120)
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.path)


def call(sock, method, path, body=None):
    c = Conn(sock)
    try:
        c.request(method, "/v1" + path, body=json.dumps(body).encode() if body else None)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def run_served(sock, req):
    """(t0, the run's JSON, its stdout) of one run through the daemon."""
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    status, body = call(sock, "POST", "/runs", req)
    assert status == 201, body
    rid = json.loads(body)["id"]
    while True:
        status, body = call(sock, "GET", "/runs/%s?wait=10" % rid)
        run = json.loads(body)
        if run["state"] not in ("queued", "running"):
            break
    out = call(sock, "GET", "/runs/%s/stdout" % rid)[1]
    call(sock, "DELETE", "/runs/%s" % rid)
    return t0, run, out


def first_ms(t0, out):
    return (STAMP.unpack(out[:STAMP.size])[0] - t0) / 1e6


def run_local(argv):
    r, w = os.pipe()
    t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    p = subprocess.Popen(argv, stdout=w, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 4096)
        if not chunk:
            break
        out += chunk
    os.close(r)
    p.wait()
    return first_ms(t0, out)


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    tmp = tempfile.mkdtemp(prefix="vigil-bench-serve-")
    os.chmod(tmp, 0o755)
    cand = build(tmp)
    with open(cand, "rb") as f:
        blob = base64.b64encode(f.read()).decode()
    files = [{"path": "first", "base64": blob, "executable": True}]
    pooled_req = {"argv": ["./first"], "files": files}
    cold_req = dict(pooled_req, limits={"memory": "1G"})
    sock = os.path.join(tmp, "s.sock")
    daemon = subprocess.Popen([VIGIL, "serve", "--state", os.path.join(tmp, "state"),
                               "--listen", "unix:" + sock, "--pool", str(POOL), "--workers", "2",
                               "--quota-runs", "100000/1h", "--quota-concurrent", "100",
                               "--quota-cpu", "100h/1h", "--quota-wall", "100h/1h",
                               "--quota-stored", "100G"], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while not os.path.exists(sock) and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1)  # the pool's first sandboxes prepared
        lat = {"served pooled": [], "served cold": [], "vigil run": [], "bwrap": []}
        for i in range(runs):
            t0, run, out = run_served(sock, pooled_req)
            if run["pooled"]:
                lat["served pooled"].append(first_ms(t0, out))
            t0, run, out = run_served(sock, cold_req)
            lat["served cold"].append(first_ms(t0, out))
            lat["vigil run"].append(run_local([VIGIL, "run", "-q", "--artifact", cand, "--",
                                               cand]))
            lat["bwrap"].append(run_local(bwrap_argv(tmp) + [cand]))
            time.sleep(0.05)  # the pool backfills between requests, as it does when idle
        print("# %s, %d interleaved rounds; ms from request to first instruction" %
              (time.strftime("%Y-%m-%d"), runs))
        base = statistics.median(lat["bwrap"])
        for k, xs in lat.items():
            print("%-14s n=%-4d p50 %7.2f  p99 %7.2f  p50/bwrap %.2f" %
                  (k, len(xs), pct(xs, 0.5), pct(xs, 0.99), pct(xs, 0.5) / base))
        for how, req in (("pooled", {"argv": ["/bin/true"]}),
                         ("cold", {"argv": ["/bin/true"], "limits": {"memory": "1G"}})):
            t = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(CLIENTS) as ex:
                got = list(ex.map(lambda _: run_served(sock, req)[1]["pooled"], range(runs)))
            dt = time.monotonic() - t
            print("throughput %-6s %d runs, %d clients: %.1f runs/s (%d pooled)" %
                  (how, runs, CLIENTS, runs / dt, sum(got)))
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
