#!/usr/bin/env python3
"""bench/hold.py: latency from a request to the candidate's first
instruction, for a prepared sandbox (`vigil run --hold`, what vigil
serve's pool hands out), a cold `vigil run`, and bwrap with the same
isolation (bench/tools.py's bwrap_argv), interleaved in one run so the
machine's load falls on all three alike.

The candidate (bench/workloads/first_instruction.c, static, no C library)
reads CLOCK_MONOTONIC as its first act and writes it to stdout; the
request is the moment the driver acts: for the held sandbox, just before
it sends the request (the sandbox was prepared and said "ready" before,
untimed, as a pool does in the background); for the cold run and bwrap,
just before it starts the process.  Also timed: request to exit (the
candidate's stdout closed and the process reaped).

Run as root (cgroups).  Usage: bench/hold.py [RUNS]  (default 200 each)"""
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from tools import bwrap_argv  # noqa: E402

VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
SOURCE = os.path.join(ROOT, "bench", "workloads", "first_instruction.c")
WARMUP = 3
STAMP = struct.Struct("<Q")
READY = b"ready\n"


def build(d):
    out = os.path.join(d, "first_instruction")
    subprocess.run(["gcc", "-O2", "-static", "-nostdlib", "-fno-stack-protector", "-o", out,
                    SOURCE], check=True)
    os.chmod(d, 0o755)
    return out


def stamp_of(fd):
    data = b""
    while len(data) < STAMP.size:
        chunk = os.read(fd, STAMP.size - len(data))
        if not chunk:
            raise RuntimeError("the candidate wrote no timestamp")
        data += chunk
    return STAMP.unpack(data)[0]


def finish(proc, r, t0):
    """(first instruction - t0, exit - t0) in ms; proc's stdout is r."""
    first = stamp_of(r)
    while os.read(r, 4096):
        pass
    os.close(r)
    rc = proc.wait()
    done = time.monotonic_ns()
    if rc != 0:
        raise RuntimeError("exit %d" % rc)
    return (first - t0) / 1e6, (done - t0) / 1e6


def started(argv, **kw):
    """(t0, proc, read end of its stdout) for argv started now."""
    r, w = os.pipe()
    t0 = time.monotonic_ns()
    proc = subprocess.Popen(argv, stdout=w, **kw)
    os.close(w)
    return t0, proc, r


def cold(cand, log):
    t0, proc, r = started([VIGIL, "run", "-q", "-o", log, "--", cand])
    return finish(proc, r, t0)


def bwrap(cand, log):
    t0, proc, r = started(bwrap_argv(cand) + [cand])
    return finish(proc, r, t0)


def held(cand, log):
    """Prepared first (untimed), then the request."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    proc = subprocess.Popen([VIGIL, "run", "-q", "--hold", str(theirs.fileno()),
                             "--artifact", cand], pass_fds=(theirs.fileno(),))
    theirs.close()
    if ours.recv(64) != READY:
        raise RuntimeError("no ready")
    r, w = os.pipe()
    with open(os.devnull, "rb") as null:
        req = ('{"argv": ["%s"], "log": "%s"}' % (cand, log)).encode()
        t0 = time.monotonic_ns()
        socket.send_fds(ours, [req], [null.fileno(), w, 2])
    os.close(w)
    ours.close()
    return finish(proc, r, t0)


MODES = [("held", "vigil run --hold (prepared)", held),
         ("cold", "vigil run (cold)", cold),
         ("bwrap", "bwrap (same isolation)", bwrap)]


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    if os.geteuid() != 0:
        sys.exit("hold: run as root (cgroups)")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
        cand = build(d)
        log = os.path.join(d, "run.msgpack")
        res = {k: ([], []) for k, _, _ in MODES}
        for i in range(WARMUP + runs):
            for key, _, fn in MODES:
                first, done = fn(cand, log)
                if os.path.exists(log):
                    os.unlink(log)
                if i >= WARMUP:
                    res[key][0].append(first)
                    res[key][1].append(done)
    print("request -> first instruction (and -> exit), %d runs each, interleaved, ms:" % runs)
    print("  %-30s %8s %8s %8s   %8s %8s" % ("", "p50", "p99", "mean", "exit p50", "exit p99"))
    for key, label, _ in MODES:
        f, e = res[key]
        print("  %-30s %8.2f %8.2f %8.2f   %8.2f %8.2f" % (
            label, pct(f, 50), pct(f, 99), statistics.mean(f), pct(e, 50), pct(e, 99)))
    p50 = {k: pct(res[k][0], 50) for k in res}
    p99 = {k: pct(res[k][0], 99) for k in res}
    print("  ratios (first instruction): cold/held p50 %.2f p99 %.2f; "
          "bwrap/held p50 %.2f p99 %.2f; cold/bwrap p50 %.2f" % (
              p50["cold"] / p50["held"], p99["cold"] / p99["held"],
              p50["bwrap"] / p50["held"], p99["bwrap"] / p99["held"],
              p50["cold"] / p50["bwrap"]))


if __name__ == "__main__":
    main()
