"""Round 4 attacks on the notify engine's new paths: opens run through an
io_uring under the crew's credentials (tracer/notify/uring.h), files
installed with the answer (ADDFD_FLAG_SEND, the `installed` record), and
several notification threads while calls block (notify_rx.c).

Judged from outside (what the candidate printed, a token never shown, the
run's end, the host's process list) and from the log (Python msgpack).
Where the notify engine opens differently from the kernel's own open, the
case is an expected failure (strict) with the reason."""
import pytest

from helpers import caller, nobody_caller, root_caller, wait_gone, marker  # noqa: F401
from helpers import STORM_OPTS, decode_log

POLICY = """version 1
default deny
allow read $WORK/** /usr/** /etc/** /proc/** / /dev/** /bin /sbin /lib /lib32 /lib64 /libx32
allow write $WORK/** /dev/null /dev/tty
allow exec /usr/** /bin/**
"""


def policy(caller):
    p = f"{caller.dir('pol')}/r4.policy"
    with open(p, "w") as f:
        f.write(POLICY)
    return p


def run(caller, name, *args, engine="notify", opts=(), timeout=60, extra=("-pthread",)):
    # races and floods by design (attack_r4_swap's 3 s made a 22 MB log on
    # a loaded machine): the storm caps are not what these tests try
    return caller.run(caller.build(name, extra), *args,
                      opts=[*STORM_OPTS, "-p", policy(caller), "--engine", engine, *opts],
                      timeout=timeout)


# ---- 1. opens through the ring meet the kernel's checks ----

_matrix = {}


def matrix(caller, engine):
    """{name: outcome} of attack_r4_matrix under ENGINE (run once each)."""
    key = (caller.who, engine)
    if key not in _matrix:
        r = run(caller, "attack_r4_matrix", engine=engine)
        assert r.rc == 0, r
        _matrix[key] = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    return _matrix[key]


# What the candidate's own open gets (the ptrace engine lets the kernel
# open) and vigil's open must get too.
SAME = ["noatime-not-owner", "noatime-owner", "directory-on-file", "directory-on-dir",
        "mode-000", "readonly-tree-write", "readonly-tree-rdwr-usr", "dir-for-write",
        "regular-plain", "dev-null", "dev-zero-nonblock", "dev-tty", "self-status",
        "child-status", "nofollow-link", "tmpfile", "append-sync",
        # O_PATH failed with EINVAL (openat2 refuses O_NOCTTY beside it, and
        # ADDFD takes no O_PATH file); now let through after the decision
        "mode-000-path", "path-with-rdwr",
        # the caller's own /proc/PID/mem: vigil opens it itself, read-only
        "self-mem",
        # 'file/' is ENOTDIR: the decided path keeps its trailing slash now
        "trailing-slash-file"]
# Where they differ (all refusals: fail closed, but not the kernel's answer)
DIFFER = {
    "child-mem": "/proc/CHILD/mem is opened by vigil's crew thread: its ptrace access check "
                 "fails, as the crew is not in the sandbox's user namespace (commoncap wants "
                 "CAP_SYS_PTRACE there) and has a Landlock domain of its own, not an ancestor "
                 "of the caller's; a thread cannot join a user namespace (docs/SECURITY.md). "
                 "A parent may read its dumpable child's memory, not through vigil",
    "child-environ": "as child-mem (PTRACE_MODE_READ)",
    # Checked by giving the ring vigil's own credentials (personality 0):
    # then these three open, so it is the crew's credentials (its own
    # Landlock domain, not the candidate's) that refuse, not the thread.
}


@pytest.mark.parametrize("name", SAME)
def test_open_outcome_is_the_kernels(caller, name):
    """The kernel's checks hold for an open vigil makes as the candidate:
    DAC as its uid (mode 000 refused though root-run vigil could open it),
    O_NOATIME's owner rule, read-only mounts, O_DIRECTORY, /dev/tty."""
    got, want = matrix(caller, "notify"), matrix(caller, "ptrace")
    assert got[name] == want[name], (name, got[name], want[name])


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=why))
                                  for n, why in sorted(DIFFER.items())])
def test_open_outcome_differs(caller, name):
    got, want = matrix(caller, "notify"), matrix(caller, "ptrace")
    assert got[name] == want[name], (name, got[name], want[name])


@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_non_dumpable_childs_memory_stays_closed(caller, engine):
    """A child that made itself non-dumpable keeps a token in memory; its
    parent (same uid, no capabilities) opens /proc/CHILD/mem.  vigil's
    thread that opens it owns the sandbox's user namespace when vigil runs
    unprivileged: the refusal must still hold."""
    token = "r4mem-" + marker()[-12:]
    r = run(caller, "attack_r4_mem", token, engine=engine)
    assert r.rc == 0, r
    assert token not in r.stdout and token not in r.stderr, r
    assert "open: EACCES" in r.stdout or "open: EPERM" in r.stdout, r


_swap = {}


def swap(caller, engine):
    """attack_r4_swap's counts under ENGINE (run once each)."""
    key = (caller.who, engine)
    if key not in _swap:
        r = run(caller, "attack_r4_swap", "3", engine=engine, timeout=90)
        assert r.rc == 0, r
        _swap[key] = {k: int(v) for k, v in (kv.split("=") for kv in r.stdout.split())}
    return _swap[key]


@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_fifo_swapped_in_after_the_look_never_opens_at_once(caller, engine):
    """x flips between a regular file and a FIFO nobody writes while
    threads open it O_RDONLY: no open ever gives the FIFO's read end at
    once (as the ring's forced O_NONBLOCK would), none shows O_NONBLOCK.
    Weak under notify: its openers block for good (next test), so the
    race runs only for the first few opens."""
    got = swap(caller, engine)
    assert got["fifo"] == 0 and got["nonblock"] == 0 and got["other"] == 0, got


@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_a_signal_interrupts_a_blocked_open(caller, engine):
    """The same run: each opener is signalled every 5 ms (a handler without
    SA_RESTART), so an open blocked on the FIFO ends with EINTR and the
    opener goes on (alarm() around a blocking open or connect relies on
    it).  Under notify vigil sees the caught signal pending (it looks every
    5 ms), interrupts its crew's open and answers ERESTARTSYS, as the
    kernel does (tracer/notify/notify_call.c, restart_for_signal); before,
    the openers waited for the run's end."""
    got = swap(caller, engine)
    # Each opener is interrupted again and again, not once (before, they
    # waited for the run's end: none); counts, not rates: a loaded machine
    # gave 41 interruptions in the 3 s once, where a quiet one gives hundreds.
    assert got["intr"] >= 10 and got["reg"] > 20, got


@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_a_process_signal_interrupts_the_main_threads_blocked_open(caller, engine):
    """alarm()'s SIGALRM is for the whole process; with a second thread
    that does not block it, the kernel still hands it to the main thread
    first, so the main thread's open of a FIFO nobody writes fails with
    EINTR after a second.  Under notify vigil counts a process's pending
    signal for a caller that is its main thread (before, only for a
    process of one thread: the open waited for the run's timeout)."""
    fifo = "/tmp/work/fifo"
    r = run(caller, "fifo_alarm_threads", fifo, engine=engine, opts=["--timeout", "20s"],
            timeout=60)
    assert r.rc == 0, r
    word, ms = r.stdout.split()
    assert word == "eintr" and 900 <= int(ms) < 5000, r.stdout


# ---- 2. ADDFD with SEND: the record and what the candidate got ----

def test_installed_records_account_for_every_open_at_the_limit(caller):
    """At RLIMIT_NOFILE with threads taking and freeing the last slots, an
    open's record says `installed` before the install: each one that then
    failed with EMFILE must be followed by its note, so records minus notes
    is exactly what the candidate saw open."""
    r = run(caller, "attack_r4_emfile", "2", timeout=90)
    assert r.rc == 0, r
    got = {k: int(v) for k, v in (kv.split("=") for kv in r.stdout.split())}
    assert got["ok"] > 0 and got["emfile"] > 0 and got["other"] == 0, got
    opens = [x for x in r.recs if x.get("type") == "syscall"
             and x["args"].get("resolved") == "/etc/passwd" and x["name"] == "openat"]
    assert all(x["decision"] == "allow" and x.get("installed") for x in opens), opens[:2]
    failed = [x for x in r.recs if x.get("type") == "note" and x.get("what") == "limit"
              and "/etc/passwd: the file vigil opened could not be installed" in x["detail"]]
    assert len(opens) == got["ok"] + got["emfile"], (len(opens), got)
    assert len(failed) == got["emfile"], (len(failed), got)


# ---- 3. calls that block: the run ends, nothing is left ----

def blocked_run(caller, threads, mode, timeout_s):
    mark = marker()
    r = run(caller, "attack_r4_block", str(threads), mode, mark,
            opts=["--procs", "300", "--timeout", f"{timeout_s}s"], timeout=60)
    left = wait_gone(mark, 5)
    return r, left


def fifo_opens(r):
    return [x for x in r.recs if x.get("type") == "syscall" and x["name"] == "openat"
            and "/tmp/work/fifo" in (x["args"].get("resolved") or "")]


def test_blocked_opens_then_exit_end_the_run_at_once(caller):
    """60 threads blocked in FIFO opens (60 crews busy), then the process
    exits: the run ends now, not at its timeout, and leaves nothing."""
    r, left = blocked_run(caller, 60, "die", 20)
    assert r.rc == 0 and r.wall < 8, (r, r.wall)
    assert not left, left
    assert len(fifo_opens(r)) == 60, len(fifo_opens(r))


@pytest.mark.xfail(strict=False, reason="a call held up behind a crowd of blocked FIFO opens, "
                   "now and then past the timeout: a known limit (docs/SECURITY.md)")
def test_more_blocked_calls_than_threads_end_by_the_timeout(caller):
    """100 blocked FIFO opens, more than the 64 notification threads vigil
    once had at most (the others' calls then waited): the candidate's other
    calls are still served (tests/test_notify_threads.py), and the run
    still ends by its timeout with no vigil process or candidate left."""
    # the timeout leaves a loaded machine time to start 100 threads
    r, left = blocked_run(caller, 100, "wait", 10)
    assert r.result["status"] == "timeout", r.result
    assert r.wall < 10 + 8, r.wall
    assert "plain: OK" in r.stdout, r  # not held up: no fixed cap
    assert not left, left
    assert len(fifo_opens(r)) == 100, len(fifo_opens(r))


@pytest.mark.xfail(strict=False, reason="a call held up behind a crowd of blocked FIFO opens, "
                   "now and then past the timeout: a known limit (docs/SECURITY.md)")
def test_blocked_calls_below_the_limit_do_not_hold_up_others(caller):
    r, left = blocked_run(caller, 60, "wait", 10)
    assert "plain: OK" in r.stdout, r
    assert r.result["status"] == "timeout" and r.wall < 10 + 8, (r.result, r.wall)
    assert not left, left


# An open that sleeps on a regular file (a lease break) once waited with
# the engine lock held, so the holder's SIGIO stop and calls waited too
# (45 s, the kernel's lease-break-time); every crew open and truncate now
# release the lock (notify_open.c, notify_fs.c).
@pytest.mark.parametrize("flags,holder", [("plain", "call"), ("trunc", "call"),
                                          ("plain", "quiet"), ("truncate", "call")])
@pytest.mark.parametrize("engine", ["notify", "ptrace"])
def test_an_open_breaking_a_lease_does_not_stall_the_holder(caller, engine, flags, holder):
    """A child holds a read lease on a file; its parent opens the file for
    writing (or truncates it), which signals the child (SIGIO) and waits for it to let go.
    The child's signal and its next call must be served meanwhile, as with
    the kernel's own open, so the open ends at once."""
    r = run(caller, "attack_r4_lease", flags, holder, engine=engine,
            opts=["--timeout", "40s"], timeout=90)
    assert r.rc == 0 and r.stdout.startswith("open: OK"), r
    assert r.wall < 30, r.wall  # a stall lasts the kernel's 45 s lease-break-time


# ---- the log cannot be written: nothing is answered ----

@pytest.fixture
def small_fs(caller):
    """A 16 KiB tmpfs the caller can write, for a log that fills it."""
    import subprocess
    d = caller.dir("small")
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k,mode=0777", "tmpfs", d], check=True)
    yield d
    subprocess.run(["umount", d], check=True)


def test_an_open_whose_record_cannot_be_written_is_never_answered(caller, small_fs):
    """The log's file system fills while the candidate opens in a loop: the
    run stops, and every open it saw work has its record in the log."""
    log = f"{small_fs}/run.msgpack"
    p = caller.vigil_raw("run", "-q", "-o", log, "-p", policy(caller), "--engine", "notify",
                         "--", caller.build("attack_r4_logfull"), timeout=60)
    assert p.returncode != 0 and "log cannot be written" in p.stderr, p
    seen = sum(1 for line in p.stdout.splitlines() if line.startswith("opened "))
    opens = [x for x in decode_log(log) if x.get("type") == "syscall"
             and x["args"].get("resolved") == "/etc/hostname"]
    assert seen > 0, p  # the log held some
    assert seen <= len(opens), (seen, len(opens))


# ---- several notification threads: what the log says about order ----

@pytest.mark.parametrize("engine", [
    pytest.param("notify", marks=pytest.mark.xfail(strict=True, reason=(
        "a call that blocks is recorded when it ends (decide, carry out, record): the reader's "
        "open, made ~0.3 s before the writer's, has the later ts (seen: reader ts 341.76 ms, "
        "writer 341.84 ms), and nothing in the record says when the call was made or how long "
        "it waited; FORMAT.md does not say which time ts is"))),
    "ptrace"])
def test_a_blocked_open_is_recorded_at_the_time_it_was_made(caller, engine):
    """cat opens a FIFO and waits; 0.3 s later the shell opens it for
    writing.  The log should show the reader's open first, by about that
    gap, as it happened."""
    r = caller.run("/bin/sh", "-c", "mkfifo p; cat p & sleep 0.3; echo r4 > p; wait",
                   opts=["-p", policy(caller), "--engine", engine, "--timeout", "20s"],
                   timeout=60)
    assert r.rc == 0 and r.stdout.strip() == "r4", r
    opens = [x for x in r.recs if x.get("type") == "syscall" and x["name"] in ("open", "openat")
             and (x["args"].get("resolved") or "").endswith("/p")]
    reader = [x for x in opens if x["args"]["flags"] == ["O_RDONLY"]]
    writer = [x for x in opens if "O_WRONLY" in x["args"]["flags"]]
    assert len(reader) == 1 and len(writer) == 1, opens
    assert writer[0]["ts"] - reader[0]["ts"] > 150_000_000, (reader[0]["ts"], writer[0]["ts"])
