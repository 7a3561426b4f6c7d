"""Native stacks under the notify engine (tracer/notify/notify_stack.c),
and the signals that meet a notified call.

A caller waiting in its notification cannot be unwound, so a call whose
record wants a stack (a refusal; every call with --stacks) is answered
ERESTARTNOINTR once, stops at a ptrace stop on its way out where vigil
unwinds it, and is decided again when the kernel restarts it.  What the
candidate must never see of that: a second outcome, EINTR, the kernel's
internal 513, a call carried out twice; what the log must show: exactly
one record per call, with the stack.  Judged from what the candidate
counted and from the log (Python msgpack)."""
import os
import subprocess

import pytest

from helpers import caller, nobody_caller, root_caller, stack_symbols, syscalls  # noqa: F401
from helpers import STORM_OPTS, decode_log

ENGINES = ["notify", "ptrace"]
DENIED = "/var/lib/dpkg/status"  # fixed in stack_bounce.c; the policy grants nothing in /var

POLICY = """version 1
default deny
allow read $WORK/** /usr/** /etc/** /proc/** / /dev /bin /sbin /lib /lib32 /lib64 /libx32
allow write $WORK/** /dev/null
allow exec /usr/**
"""


def policy(caller):
    p = f"{caller.dir('pol')}/stacks.policy"
    with open(p, "w") as f:
        f.write(POLICY)
    return p


def counts(r):
    """{denied, allowed, bad, first_bad: int, excl: str} as the candidate counted."""
    got = dict(kv.split("=", 1) for kv in r.stdout.split())
    return {k: (v if k == "excl" else int(v)) for k, v in got.items()}


@pytest.mark.parametrize("engine", ENGINES)
def test_bounced_refusals_are_one_call_one_record(caller, engine):
    """Eight threads make 300 refused and 300 allowed opens each while a
    1 ms timer's handler (no SA_RESTART) makes refused opens between them:
    every refused open fails with the refusal's errno and every allowed
    one opens (no EINTR: before, a signal that came before vigil received
    the call's notification failed it so, about 3% of them here), the log
    has one deny record for each refused open the candidate made, and
    (nearly) each has the native stack."""
    r = caller.run(caller.build("stack_bounce", ["-pthread"]), "/tmp/work/new", "8", "300",
                   opts=["-p", policy(caller), "--engine", engine, "--timeout", "120s",
                         *STORM_OPTS], timeout=180)
    assert r.rc == 0, r
    got = counts(r)
    assert got["bad"] == 0, r.stdout  # never EINTR, 513 or a file
    assert got["denied"] >= 8 * 300 and got["allowed"] == 8 * 300, r.stdout
    assert got["excl"] == "ok", r.stdout
    denied = syscalls(r.recs, path=DENIED)
    assert len(denied) == got["denied"], (len(denied), got)
    assert all(x["decision"] == "deny" for x in denied)
    with_stack = [x for x in denied if "try_denied" in stack_symbols(x)]
    # a call whose restart meets a handler's call three times in a row goes
    # without (VG_NT_BOUNCE_MAX): rare, never most
    assert len(with_stack) >= 0.9 * len(denied), (len(with_stack), len(denied))


@pytest.mark.parametrize("engine", ENGINES)
def test_an_allowed_call_bounced_for_its_stack_happens_once(caller, engine):
    """--stacks: an allowed O_CREAT|O_EXCL open is bounced too; run twice
    it would fail EEXIST.  It creates the file, once, and its record has
    the stack."""
    r = caller.run(caller.build("stack_bounce", ["-pthread"]), "/tmp/work/new", "1", "1",
                   opts=["-p", policy(caller), "--engine", engine, "--stacks"], timeout=60)
    assert r.rc == 0, r
    assert counts(r)["excl"] == "ok", r.stdout
    made = syscalls(r.recs, path="/tmp/work/new")
    assert len(made) == 1 and made[0]["decision"] == "allow", made
    assert "main" in stack_symbols(made[0]), made[0]
    assert r.recs[0]["engine"] == engine


def without_wait_killable(caller, exe, *args):
    """vigil run EXE ARGS on a kernel without WAIT_KILLABLE_RECV (made so
    from outside, by tests/candidates/fallback_old_kernel.c): the
    completed process and the log's records."""
    wrapper = caller.build("fallback_old_kernel")
    d = caller.dir("run")
    log = os.path.join(d, "run.msgpack")
    argv = caller.argv(["run", "-q", "-o", log, "-p", policy(caller), "--timeout", "120s",
                        *STORM_OPTS, "--", exe, *args])
    i = argv.index(caller.vigil)
    argv = [*argv[:i], wrapper, "no-wait-killable", *argv[i:]]
    p = subprocess.run(argv, env=caller.env(), cwd=d, text=True, capture_output=True,
                       timeout=180)
    assert p.returncode == 0, (p.stdout, p.stderr)
    recs = decode_log(log)
    assert "no WAIT_KILLABLE_RECV" in recs[0]["engine_note"], recs[0]
    return p, recs


def test_a_signal_interrupts_a_blocked_open_without_wait_killable_recv(caller):
    """There the caller's signal ends its wait itself while vigil's crew
    blocks in its FIFO open: its ERESTARTSYS is the blocking call's own and
    must stay so (not the restart vigil gives a call withdrawn before it
    was received), so the openers, signalled every 5 ms, get EINTR."""
    p, _ = without_wait_killable(caller, caller.build("attack_r4_swap", ["-pthread"]), "3")
    got = {k: int(v) for k, v in (kv.split("=") for kv in p.stdout.split())}
    assert got["intr"] > 50 and got["fifo"] == 0 and got["other"] == 0, got


def test_bounce_without_wait_killable_recv(caller):
    """On a kernel without WAIT_KILLABLE_RECV (made so from outside, by
    tests/candidates/fallback_old_kernel.c) the interrupt ends the caller's
    wait itself and the kernel restarts the call: stacks, and no EINTR.
    There a signal can also withdraw a call after its record and before
    its answer; it restarts and is recorded again (docs/SECURITY.md): a
    few records more than calls, never fewer."""
    p, recs = without_wait_killable(caller, caller.build("stack_bounce", ["-pthread"]),
                                    "/tmp/work/new", "4", "200")
    got = dict(kv.split("=", 1) for kv in p.stdout.split())
    assert got["bad"] == "0" and got["allowed"] == str(4 * 200), p.stdout
    denied = syscalls(recs, path=DENIED)
    calls = int(got["denied"])
    assert calls <= len(denied) <= 1.05 * calls, (len(denied), got)
    with_stack = [x for x in denied if "try_denied" in stack_symbols(x)]
    assert len(with_stack) >= 0.9 * len(denied), (len(with_stack), len(denied))

