#!/usr/bin/env python3
"""bench/net.py: what a network namespace of its own and egress through
pasta cost (issue 11).  Run as root.  One run, interleaved rounds
(harness.py), ratios within it:

  start-up   /bin/true: bare, bwrap --unshare-all, vigil with egress off
             (loopback-only policy), vigil with egress on (pasta started,
             the filter installed)
  connect    N connects (default 2000) and a byte back: to a server on the
             caller's own loopback (egress off) and to a server in an
             outside network namespace (egress on: the host's netns for
             bare, bwrap --share-net, pasta for vigil)
  helper     pasta's and slirp4netns's own start (spawn -> namespace
             configured) and resident memory, on an `unshare -Urn` holder

Usage: bench/net.py [N]  (BENCH_QUICK=1: fewer rounds)"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import harness  # noqa: E402
from outside import Outside  # noqa: E402
from net_connect import serve  # noqa: E402
from tools import bwrap_argv  # noqa: E402

ROOT = os.path.abspath(os.path.join(HERE, ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
QUICK = os.environ.get("BENCH_QUICK") == "1"
CLIENT = os.path.join(HERE, "net_connect.py")
PY = "/usr/bin/python3"


def serve_outside(out):
    srv = out.socket()
    srv.bind((out.addr, 0))
    srv.listen(512)
    serve(srv)
    return srv.getsockname()[1]


def policies(d, out):
    common = "allow read /** \nallow exec /usr/bin/** /bin/**\n"
    off = os.path.join(d, "off.policy")
    on = os.path.join(d, "on.policy")
    with open(off, "w") as f:
        f.write("version 1\n" + common + "allow bind tcp 127.0.0.1:*\n"
                "allow connect tcp 127.0.0.1:*\ndefault deny\n")
    with open(on, "w") as f:
        f.write("version 1\n" + common + f"allow connect tcp {out.addr}:*\n"
                "allow bind tcp 127.0.0.1:*\nallow connect tcp 127.0.0.1:*\ndefault deny\n")
    return off, on


def vigil(pol, log, art, cmd):
    """--artifact: the client script only (shown in the sandbox, hashed),
    so no run hashes the interpreter."""
    return [VIGIL, "run", "-q", "-p", pol, "-o", log, "--artifact", art, "--", *cmd]


def table(title, cmds, base="bare"):
    ref = next(c for c in cmds if c.key == base).median()
    print(f"\n{title}  (median ms, ratio to {base})")
    for c in cmds:
        if c.error:
            print(f"  {c.label:34s} error: {c.error}")
            continue
        m = c.median()
        print(f"  {c.label:34s} {m * 1000:9.2f}  x{m / ref:6.2f}")


def helper_start(kind, runs, far=None):
    """(median ms to ready, RSS MiB once ready, ms of the connect loop far
    run in the namespace through it) of pasta or slirp4netns."""
    times, rss, loops = [], [], []
    for _ in range(runs):
        holder = subprocess.Popen(["unshare", "-Urn", "sleep", "30"])
        time.sleep(0.1)
        r, w = os.pipe()
        if kind == "pasta":
            argv = ["/usr/bin/pasta", "-f", "-q", "--config-net", "-t", "none", "-u", "none",
                    "-T", "none", "-U", "none", "--no-map-gw", "-D", "none", "-S", "none",
                    "--runas", "0", "-P", f"/dev/fd/{w}", str(holder.pid)]
        else:
            argv = ["/usr/bin/slirp4netns", "--configure", "--disable-host-loopback",
                    "--ready-fd", str(w), str(holder.pid), "tap0"]
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, pass_fds=(w,), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        os.close(w)
        ok = os.read(r, 64)
        dt = time.perf_counter() - t0
        os.close(r)
        if ok:
            times.append(dt * 1000)
            with open(f"/proc/{p.pid}/status") as f:
                kib = [int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:")]
            rss.append(kib[0] / 1024 if kib else 0)
            if far:
                t0 = time.perf_counter()
                done = subprocess.run(["nsenter", "-t", str(holder.pid), "-U", "-n",
                                       "--preserve-credentials", *far])
                if done.returncode == 0:
                    loops.append((time.perf_counter() - t0) * 1000)
        p.kill()
        p.wait()
        holder.kill()
        holder.wait()
    if not times:
        return None
    return (statistics.median(times), statistics.median(rss),
            statistics.median(loops) if loops else None)


def main():
    if os.geteuid() != 0:
        sys.exit("net.py: run as root (ip netns, bwrap)")
    n = int(sys.argv[1]) if len(sys.argv) > 1 else (500 if QUICK else 2000)
    budget, rounds = (10, 3) if QUICK else (40, 5)
    out = Outside()
    try:
        port = serve_outside(out)
        with tempfile.TemporaryDirectory(dir="/dev/shm") as d:
            off, on = policies(d, out)
            log = os.path.join(d, "run.msgpack")
            art = CLIENT  # the one file the runs need, and a small one to hash
            err = os.path.join(d, "err")
            env = {"PATH": "/usr/bin:/bin"}
            true = ["/bin/true"]
            start = [harness.Cmd("bare", "bare", true, env),
                     harness.Cmd("bwrap", "bwrap --unshare-all", bwrap_argv() + true, env),
                     harness.Cmd("off", "vigil, egress off", vigil(off, log, art, true), env),
                     harness.Cmd("on", "vigil, egress on (pasta)", vigil(on, log, art, true), env)]
            harness.compare(start, budget, rounds, 200, err)
            table("start-up: /bin/true", start)
            local = [PY, CLIENT, "local", "0", str(n)]
            far = [PY, CLIENT, out.addr, str(port), str(n)]
            bw = bwrap_argv(bind=CLIENT)
            bw_net = [a for a in bw if a != "--unshare-all"]
            bw_net[1:1] = ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
            conn = [harness.Cmd("bare", "bare, loopback", local, env),
                    harness.Cmd("bwrap", "bwrap --unshare-all, loopback", bw + local, env),
                    harness.Cmd("voff", "vigil egress off, loopback", vigil(off, log, art, local), env),
                    harness.Cmd("bare_far", "bare, outside netns", far, env),
                    harness.Cmd("bwrap_far", "bwrap (host net), outside", bw_net + far, env),
                    harness.Cmd("von", "vigil egress on, outside (pasta)", vigil(on, log, art, far),
                                env)]
            harness.compare(conn, budget * 2, 3, 50, err)
            table(f"connect: {n} connects and a byte back", conn)
        print("\nthe egress helper alone, on an `unshare -Urn` holder, median of runs:"
              f"\n  spawn -> configured, resident memory then, {n} connects through it")
        for kind in ("pasta", "slirp4netns"):
            got = helper_start(kind, 5 if QUICK else 15, far)
            print(f"  {kind:12s} " + ("not available" if not got else
                                      f"{got[0]:7.2f} ms  {got[1]:5.1f} MiB  "
                                      + (f"{got[2]:8.1f} ms" if got[2] else "loop failed")))
    finally:
        out.close()


if __name__ == "__main__":
    main()
