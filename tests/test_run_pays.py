"""The run pays for its own work (docs/SECURITY.md, "What the run pays
for"): kernel memory its sockets pin counts against --memory, and vigil's
work for the run (deciding, unwinding stacks, recording its refusals)
comes out of its --cpus quota, not out of the host's.  Judged from
outside: the kernel's TCP memory (/proc/net/sockstat) and the run's memory
group while the candidate holds its buffers; vigil's own CPU time
(/proc/VIGIL/stat) while a candidate makes it refuse call after call.
Root only: an unprivileged vigil makes no cgroup (the rlimits then hold,
which bound neither; SECURITY.md says so)."""
import os
import subprocess
import time

import pytest

from helpers import STORM_OPTS, nobody_caller, root_caller, syscalls  # noqa: F401
from test_limits_cgroup import groups_of, nothing_left  # noqa: F401

MiB = 1 << 20
PAGE = os.sysconf("SC_PAGE_SIZE")
TICK = os.sysconf("SC_CLK_TCK")
MEMORY = 64 * MiB
# 100 connections, both ends filled: 760 MiB of buffers before the fix,
# under 30 MiB with it (a quarter of the limit, plus the one buffer per
# socket the kernel always grants)
CONNS = 100
HOLD_S = 2
CPUS = 0.1
LOOP_S = 3
# vigil's threads and the candidate share one quota: at most the quota
# itself, plus the kernel's bandwidth slack and a clock tick of rounding.
# Before the fix vigil took 8x the quota (notify) and 2-3x (ptrace).
CPU_RATIO_MAX = 1.5
CPU_SLACK_S = 2.0 / TICK
# launcher/limits.h: where the run does not pay, vigil unwinds this many
# stacks, then this many a second
UNWIND_BURST = 1000
UNWIND_PER_S = 200
NET_POLICY = ("version 1\nallow bind tcp 127.0.0.1:*\nallow connect tcp 127.0.0.1:*\n"
              "include <default>\n")


def tcp_pages():
    """The kernel's TCP buffer memory, every socket of the host (pages)."""
    with open("/proc/net/sockstat") as f:
        for line in f:
            if line.startswith("TCP:"):
                return int(line.split()[-1])
    raise AssertionError("no TCP line in /proc/net/sockstat")


def group_value(pid, ctrl, name):
    """A file of the run's group for ctrl, or None where there is none."""
    for g in groups_of(pid):
        if f"/{ctrl}/" in g and os.path.exists(os.path.join(g, name)):
            with open(os.path.join(g, name)) as f:
                return int(f.read())
    return None


def vigil_cpu_s(pid):
    """User + system time of every thread of vigil, exited ones too
    (not its children: the candidate's time is its own)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def start(caller, *cmd, opts=()):
    d = caller.dir("run")
    log, result = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
    args = ["run", "-q", "-o", log, "--result", result, *opts, "--", *cmd]
    return caller.popen(args, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def policy(caller, text):
    path = os.path.join(caller.dir("policy"), "net.policy")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def test_tcp_buffers_are_held_under_the_memory_limit(root_caller, nothing_left):
    """Connections on the sandbox's loopback, both ends filled and never
    read: what the kernel holds for them stays under --memory 64M (before:
    760 MiB, 12 times the limit, none of it charged)."""
    fill = root_caller.build("pays_tcp_fill")
    base = tcp_pages()
    p = start(root_caller, fill, str(CONNS), str(HOLD_S),
              opts=["-p", policy(root_caller, NET_POLICY), "--memory", "64M",
                    "--files", str(4 * CONNS), "--timeout", "30s"])
    first = p.stdout.readline()
    # while it holds everything: the kernel's count, and the group's own
    held_pages = tcp_pages() - base
    charged = group_value(p.pid, "memory", "memory.kmem.tcp.max_usage_in_bytes")
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and first.startswith("held "), (first, out, err)
    queued, conns = int(first.split()[1]), int(first.split()[3])
    assert conns == CONNS, first
    assert held_pages * PAGE < MEMORY, (held_pages * PAGE // MiB, "MiB held", first)
    assert queued < MEMORY, first
    # the group was charged (it is what held them), within the limit
    assert charged is not None and 0 < charged < MEMORY, charged


@pytest.mark.soak  # CPU time against wall time: only on a machine the test has to itself
@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_vigils_work_for_a_refusal_loop_is_within_the_cpu_quota(root_caller, nothing_left,
                                                               engine):
    """Each refused open costs vigil a decision, a stack and a record: a
    loop of them under --cpus 0.1 made vigil burn several times the
    quota outside it.  Now vigil's threads for the run share the quota,
    and the timeout still ends such a run at once (its path is outside)."""
    loop = root_caller.build("pays_refuse_loop")
    opts = ["--engine", engine, "--cpus", str(CPUS), *STORM_OPTS]
    p = start(root_caller, loop, "/root/vigil-pays-nothing", str(LOOP_S),
              opts=[*opts, "--timeout", "30s"])
    assert p.stdout.readline() == "go\n", p
    cpu0, t0 = vigil_cpu_s(p.pid), time.monotonic()
    last = p.stdout.readline()
    cpu1, wall = vigil_cpu_s(p.pid), time.monotonic() - t0
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and last.startswith("refused "), (last, out, err)
    assert int(last.split()[1]) > 0 and last.split()[3] == "0", last
    quota_s = CPUS * wall
    assert cpu1 - cpu0 <= CPU_RATIO_MAX * quota_s + CPU_SLACK_S, (
        f"vigil {cpu1 - cpu0:.2f}s for a quota of {quota_s:.2f}s over {wall:.2f}s")

    # the quota never holds up the end of the run: --timeout 1s ends a
    # 30 s loop (the I/O thread that ends it is outside the quota)
    r = root_caller.run(loop, "/root/vigil-pays-nothing", "30", opts=[*opts, "--timeout", "1s"])
    assert r.result["status"] == "timeout" and r.rc == 124, r
    assert "refused " not in r.stdout, r


@pytest.mark.soak  # a rate against wall time, and a loop that must outrun it
@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_where_the_run_cannot_pay_stacks_have_a_ceiling(nobody_caller, engine):
    """An unprivileged vigil makes no cgroup: --cpus is affinity, nothing
    bills vigil's work to the run, and a refusal loop bought a native
    stack (the dearest part of a refusal's record) for every refusal.
    Now vigil unwinds a first burst, then a steady rate, and the log says
    how many records it left without."""
    loop = nobody_caller.build("pays_refuse_loop")
    r = nobody_caller.run(loop, "/root/vigil-pays-nothing", str(LOOP_S),
                          opts=["--engine", engine, "--cpus", "1", "--timeout", "30s",
                                *STORM_OPTS])
    assert r.result["limits"]["cpus"]["enforced_by"] == "affinity", r.result["limits"]
    assert r.rc == 0 and "refused " in r.stdout, r
    refused = [x for x in syscalls(r.recs, decision="deny") if x["name"] in ("open", "openat")]
    stacked = [x for x in refused if x.get("stack")]
    ceiling = UNWIND_BURST + UNWIND_PER_S * r.wall
    notes = [n["detail"] for n in r.recs if n["type"] == "note" and n["what"] == "warning"
             and n["detail"].startswith("stacks: ")]
    assert len(notes) == 1 and f" {len(refused) - len(stacked)} " in notes[0], (
        notes, len(refused), len(stacked))
    assert UNWIND_BURST <= len(stacked) <= ceiling, (len(stacked), ceiling)
    # the loop outran the ceiling (else this test would show nothing)
    assert len(refused) > ceiling, (len(refused), ceiling)
