"""A call vigil carries out that blocks never holds up the candidate's
other calls (tracer/notify/notify_rx.c): while one process waits in the
open of a FIFO, or in a send into a full queue, another process's calls
(the FIFO's other end, the opens before it reads) are still decided and
served.  Before, the one notification thread waited with the blocked
call and the run hung until its timeout.

Judged from outside: the run ends by itself, with the payload through,
long before its timeout; and in the log, both ends were allowed."""
import pytest

from helpers import caller, nobody_caller, root_caller  # noqa: F401

TIMEOUT = "20s"
ENGINES = ["notify", "ptrace"]

POLICY = """version 1
default deny
allow read $WORK/** /usr/** /etc/** /proc/** / /dev /bin /sbin /lib /lib32 /lib64 /libx32 /dev/null
allow write $WORK/** /dev/null
allow exec /usr/**
allow send unix $WORK/**
allow bind unix $WORK/**
"""

# sh -c SCRIPT, in the workdir; each prints the token through the FIFO
FIFO = {
    "reader first": "mkfifo p; cat p & sleep 0.3; echo {token} > p; wait",
    "writer first": "mkfifo p; (echo {token} > p) & sleep 0.3; cat p; wait",
}


def policy(caller):
    d = caller.dir("pol")
    p = f"{d}/block.policy"
    with open(p, "w") as f:
        f.write(POLICY)
    return p


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("order", sorted(FIFO))
def test_fifo_rendezvous_between_two_processes(caller, order, engine):
    token = "fifo-" + order.split()[0]
    r = caller.run("/bin/sh", "-c", FIFO[order].format(token=token),
                   opts=["-p", policy(caller), "--timeout", TIMEOUT,
                         "--engine", engine], timeout=60)
    assert r.rc == 0 and r.stdout.strip() == token, r
    assert r.wall < 10, r.wall  # not ended by the timeout
    opens = [x for x in r.recs if x.get("type") == "syscall" and
             (x["args"].get("resolved") or "").endswith("/p") and x["name"] in ("open", "openat")]
    assert len(opens) == 2 and all(x["decision"] == "allow" for x in opens), opens


@pytest.mark.parametrize("engine", ENGINES)
def test_send_into_a_full_queue_does_not_stop_the_peer(caller, engine):
    n = 400  # far more than a unix datagram queue holds (max_dgram_qlen)
    r = caller.run("/usr/bin/python3", caller.cand("notify_block_send.py"), "/tmp/work", str(n),
                   opts=["-p", policy(caller), "--timeout", TIMEOUT,
                         "--engine", engine], timeout=60)
    assert r.rc == 0 and r.stdout.strip() == f"got {n}", r
    assert r.wall < 10, r.wall
    sends = [x for x in r.recs if x.get("type") == "syscall" and x["name"] == "sendto"]
    assert len(sends) == n and all(x["decision"] == "allow" for x in sends), sends[:2]
    if engine == "notify":
        assert all(x.get("carried") and x["ret"] == 1024 for x in sends), sends[:2]
