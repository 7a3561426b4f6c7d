"""The notify engine keeps a caller on vigil's CPU while it installs an
opened file (tracer/notify/cpu_pin.c): ADDFD wakes the caller with a
plain wake-up, which puts it on the idle CPU, and vigil then sleeps until
it has installed the file, two wake-ups across CPUs per open (on this
2-vCPU VM about 80 us an open against 35 us kept on one CPU).  What the
candidate must never see of it: fewer CPUs than it has, or a choice of
its own undone.  Judged from what the candidate read, and from the log."""
import os

import pytest

from helpers import caller, nobody_caller, root_caller, syscalls  # noqa: F401
from test_notify_stacks import ENGINES, policy  # the same small policy


@pytest.mark.parametrize("engine", ENGINES)
def test_a_caller_never_sees_fewer_cpus(caller, engine):
    """While vigil installs an opened file the caller is kept on vigil's
    CPU (tracer/notify/cpu_pin.c), and given its CPUs back before it
    runs again: read right after 20,000 opens each in four threads, a
    thread's allowed CPUs are always all of them; a thread that chose one
    CPU keeps its choice through its opens.  (Given back after the
    caller ran, a third of the reads saw one CPU.)"""
    r = caller.run(caller.build("affinity_seen", ["-pthread"]), "4", "20000",
                   opts=["-p", policy(caller), "--engine", engine], timeout=300)
    assert r.rc == 0, r
    got = dict(kv.split("=", 1) for kv in r.stdout.split())
    assert got["narrowed"] == "0" and got["kept"] == "yes", r.stdout
    if int(got["cpus"]) > 1 and engine == "notify":
        opens = syscalls(r.recs, path="/etc/hostname")
        assert len(opens) == 5 * 20000 and all(x.get("installed") for x in opens), len(opens)


def rounds_of(caller, engine, threads):
    r = caller.run(caller.build("spread_openers", ["-pthread"]), str(threads), "3",
                   opts=["--engine", engine], timeout=60)
    assert r.rc == 0, r
    return int(r.stdout.split("=")[1])


@pytest.mark.parametrize("engine", [
    pytest.param("notify", marks=pytest.mark.xfail(
        strict=False, reason="notify: about 1 run in 12 still falls below 1.5x here, the "
                             "cause not found yet (docs/SECURITY.md); every run did before")),
    "ptrace"])
@pytest.mark.soak  # a throughput ratio: only on a machine the test has to itself
def test_two_openers_keep_both_cpus(caller, engine):
    """Two threads that open a file and compute 300 us in turn make at
    least 1.5x the rounds of one: vigil never packs them on one CPU.  It
    did when its notification thread stayed on the CPU of the last call it
    served: the next caller, woken there, was narrowed to that CPU for its
    install and ran on there, beside the first."""
    if os.cpu_count() < 2:
        pytest.skip("needs two CPUs")
    one = rounds_of(caller, engine, 1)
    two = rounds_of(caller, engine, 2)
    assert two >= 1.5 * one, (one, two)
