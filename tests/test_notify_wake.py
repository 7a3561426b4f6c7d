"""The notify engine keeps a caller on vigil's CPU while it installs an
opened file (tracer/notify/wake_here.c): ADDFD wakes the caller with a
plain wake-up, which puts it on the idle CPU, and vigil then sleeps until
it has installed the file, two wake-ups across CPUs per open (on this
2-vCPU VM about 80 us an open against 35 us kept on one CPU).  What the
candidate must never see of it: fewer CPUs than it has, or a choice of
its own undone.  Judged from what the candidate read, and from the log."""
import pytest

from helpers import caller, nobody_caller, root_caller, syscalls  # noqa: F401
from test_notify_stacks import ENGINES, policy  # the same small policy


@pytest.mark.parametrize("engine", ENGINES)
def test_a_caller_never_sees_fewer_cpus(caller, engine):
    """While vigil installs an opened file the caller is kept on vigil's
    CPU (tracer/notify/wake_here.c), and given its CPUs back before it
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
