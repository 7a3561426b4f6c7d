"""The second layer against a candidate that attacks vigil's own seccomp
filter (issue 8, items 1 and 2): a listener of its own, filters that
answer ALLOW/LOG/TRACE/ERRNO/TRAP for vigil's calls, children made with
CLONE_UNTRACED, a SIGSYS it catches, ignores, blocks or forges.  The
baseline's refusals are the kernel's (the filter returns RET_TRAP) and
stay on record; audited calls stay decided and recorded.  Judged from the
outside (a per-run token in a file the policy denies never shows, a file
a refused child would write never appears) and from the log.  Every test
runs as root and as nobody."""
import os

import pytest

from helpers import STORM_OPTS, caller, marker, nobody_caller, root_caller, syscall_nr, syscalls  # noqa: F401

# the attacks target the engine's own filter: engine by engine (conftest.py: the rule)
pytestmark = pytest.mark.engines

POLICY = """version 1
deny read $WORK/private/**
deny write $WORK/private/**
include <default>
"""


class Vault:
    """A workdir holding private/token.txt (a fresh token) and a policy
    that denies it; Landlock cannot (the workdir is open to the
    candidate), so only vigil's decision keeps it."""

    def __init__(self, caller):
        self.work = caller.dir("work")
        os.chmod(self.work, 0o777)
        private = os.path.join(self.work, "private")
        os.mkdir(private)
        os.chmod(private, 0o755)
        self.token = marker()
        self.secret = os.path.join(private, "token.txt")
        with open(self.secret, "w") as f:
            f.write(self.token + "\n")
        os.chmod(self.secret, 0o644)
        self.policy = os.path.join(caller.dir("policy"), "vault.policy")
        with open(self.policy, "w") as f:
            f.write(POLICY)
        self.opts = ["-p", self.policy, "--workdir", self.work]


def lines(r):
    """{NAME: (ret, errno name)} of the candidate's result lines."""
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].startswith("ret=") and parts[2].startswith("errno="):
            out[parts[0]] = (int(parts[1][4:]), parts[2][6:])
    return out


def run_in_vault(caller, candidate, *args):
    """Run the C candidate with args in a fresh Vault: (vault, run, lines)."""
    vault = Vault(caller)
    r = caller.run(caller.build(candidate), *args, opts=vault.opts, timeout=60)
    assert r.rc == 0, r
    return vault, r, lines(r)


def refused(r, name, **match):
    """The log's baseline refusals of NAME (asserting they are that)."""
    recs = syscalls(r.recs, name=name, **match)
    for x in recs:
        assert x["class"] == "system" and x["decision"] == "deny", x
        assert x["default"].startswith("baseline:"), x
    return recs


def assert_secret_kept(r, vault):
    assert vault.token not in r.stdout and vault.token not in r.stderr, r
    opens = syscalls(r.recs, resolved=vault.secret)
    assert opens and all(x["decision"] == "deny" for x in opens), opens
    return opens


# ---- (a) a listener of the candidate's own ----

def test_own_listener_is_refused_and_hides_nothing(caller):
    vault, r, got = run_in_vault(caller, "attack_filter_listener")
    assert got["listener"] == (-1, "EPERM"), r
    assert got["listener_tsync"] == (-1, "EPERM"), r
    assert got["open_secret"] == (-1, "EACCES"), r
    assert got["io_uring_setup"] == (-1, "EPERM"), r
    # prctl cannot ask for a listener: the notifying filter only restricts
    assert got["prctl_filter"] == (0, "0") and got["prctl_open_secret"] == (-1, "ENOSYS"), r
    assert_secret_kept(r, vault)
    listen = refused(r, "seccomp")
    assert len(listen) == 2, listen
    assert all("SECCOMP_FILTER_FLAG_NEW_LISTENER" in x["args"]["flags"] for x in listen)
    assert len(refused(r, "io_uring_setup")) == 1


# ---- (b) a filter of the candidate's own that answers for vigil's calls ----

BASELINE = {  # attempt: (log name, errno)
    "io_uring_setup": ("io_uring_setup", "EPERM"), "ptrace": ("ptrace", "EPERM"),
    "tiocsti": ("ioctl", "EPERM"), "socket_netlink": ("socket", "EAFNOSUPPORT"),
    "unshare_user": ("unshare", "EPERM"), "clone_untraced": ("clone", "EPERM"),
    "seccomp_listener": ("seccomp", "EPERM"),
}
SYS_IOCTL, SYS_GETPPID, SYS_IO_URING_SETUP = map(syscall_nr, ("ioctl", "getppid", "io_uring_setup"))


def sigsys_lines(r):
    return [int(line.split("=")[1]) for line in r.stdout.splitlines()
            if line.startswith("sigsys nr=")]


@pytest.mark.parametrize("mode", ["allow", "log", "trace0", "trace1", "traceffff",
                                  "errno", "trap"])
def test_own_filter_outranks_nothing(caller, mode):
    port = 9  # discard: nothing listens inside the sandbox either way
    vault, r, got = run_in_vault(caller, "attack_filter_outrank", mode, str(port))
    assert got["install"] == (0, "0"), r
    # the baseline holds, and each refusal is on record once
    for attempt, (name, err) in BASELINE.items():
        assert got[attempt] == (-1, err), (attempt, r)
        assert len(refused(r, name)) == 1, (attempt, refused(r, name))
    assert SYS_IO_URING_SETUP not in sigsys_lines(r), r
    # harmless arguments of conditional rows, and calls vigil has no row
    # for, are the candidate's filter's business alone
    assert got["socket_unix"][0] >= 0, r
    if mode == "errno":
        assert got["fionread"] == got["getppid"] == (-1, "EDOM"), r
    elif mode == "trap":
        # its own SIGSYS, delivered untouched (the call returns its number)
        assert got["fionread"] == (SYS_IOCTL, "0") and got["getppid"] == (SYS_GETPPID, "0"), r
        assert {SYS_IOCTL, SYS_GETPPID} <= set(sigsys_lines(r)), r
    else:
        assert got["fionread"] == (0, "0") and got["getppid"][0] > 0, r
        assert sigsys_lines(r) == [], r
    # audited calls are still decided and recorded
    assert got["open_secret"] == (-1, "EACCES"), r
    assert_secret_kept(r, vault)
    assert got["open_hostname"][0] >= 0 and got["create_work"][0] >= 0, r
    assert got["connect"] == (-1, "ECONNREFUSED"), r
    assert [x["decision"] for x in syscalls(r.recs, resolved="/etc/hostname")] == ["allow"]
    created = syscalls(r.recs, resolved=os.path.join(vault.work, "outrank.txt"))
    assert [(x["class"], x["decision"]) for x in created] == [("write", "allow")]
    assert [x["decision"] for x in syscalls(r.recs, name="connect", port=port)] == ["deny"]


# ---- (c) children vigil would not follow ----

def proc_records(recs, pid, thread=False):
    """{kind: [records]} of the proc records of candidate-view pid."""
    out = {}
    for x in recs:
        if x["type"] == "proc" and x["pid"] == pid and bool(x.get("thread")) == thread:
            out.setdefault(x["kind"], []).append(x)
    return out


def test_untraced_children_are_refused_and_every_other_is_followed(caller):
    vault, r, got = run_in_vault(caller, "attack_filter_untraced")
    for attempt in ("clone_untraced", "clone_untraced_hi", "clone_untraced_vfork"):
        assert got[attempt] == (-1, "EPERM"), (attempt, r)
    assert not [f for f in os.listdir(vault.work) if f.startswith("untraced")]
    refusals = refused(r, "clone")
    assert len(refusals) == 3, refusals
    assert all("CLONE_UNTRACED" in x["args"]["flags"] for x in refusals), refusals
    kids = {k: int(v.split("=")[1]) for k, v in
            (line.split()[1:] for line in r.stdout.splitlines() if line.startswith("child "))}
    assert set(kids) == {"fork", "vfork", "spawn", "clone", "thread"}, r
    for kind, pid in kids.items():
        thread = kind == "thread"
        life = proc_records(r.recs, pid, thread)
        assert len(life.get("start", [])) == 1, (kind, life)
        if not thread:
            assert len(life.get("exit", [])) == 1, (kind, life)
        if kind in ("vfork", "spawn"):
            assert [x["exe"] for x in life.get("exec", [])] == ["/usr/bin/true"], (kind, life)
        else:
            f = os.path.join(vault.work, kind + ".txt")
            assert os.path.exists(f), kind
            writes = syscalls(r.recs, resolved=f)
            key = "tid" if thread else "pid"
            assert [(x[key], x["decision"]) for x in writes] == [(pid, "allow")], (kind, writes)


# ---- (d) the baseline's SIGSYS is vigil's, whatever the candidate does with SIGSYS ----

def counters(r, prefix):
    """The k=v counters of the output line starting with prefix."""
    for line in r.stdout.splitlines():
        if line.startswith(prefix):
            return {k: int(v) if v.lstrip("-").isdigit() else v
                    for k, v in (w.split("=") for w in line.split() if "=" in w)}
    raise AssertionError(f"no {prefix!r} line in {r!r}")


@pytest.mark.parametrize("mode, opts", [("handler", []), ("ignore", []), ("block", []),
                                        ("handler", ["--dry-run"])],
                         ids=["handler", "ignore", "block", "dry-run"])
def test_baseline_refusal_survives_any_sigsys_disposition(caller, mode, opts):
    r = caller.run(caller.build("attack_filter_sigsys"), mode, opts=[*STORM_OPTS, *opts], timeout=60)
    assert r.rc == 0, r
    c = counters(r, "calls=")
    # every call failed with the row's errno, and the candidate saw no SIGSYS
    assert c["refused"] == c["calls"] and c.get("handled", 0) == 0, r
    recs = refused(r, "io_uring_setup")
    assert len(recs) == c["calls"], len(recs)
    assert all(x["errno"] == 1 for x in recs)  # EPERM


# ---- (e) a SIGSYS the candidate forges, or its own filter's trap of another ABI ----

def test_forged_sigsys_is_delivered_untouched_and_never_recorded(caller):
    r = caller.run(caller.build("attack_filter_sigsys"), "forge", opts=STORM_OPTS, timeout=60)
    assert r.rc == 0, r
    f = counters(r, "forged=")
    # to its own thread: each arrives, as sent, and the send itself
    # returned 0 (vigil did not touch its registers)
    assert f["sent"] == f["forged"] == f["handled"] == f["faithful"], r
    # at the process while a worker's calls trap: some reach the worker,
    # whose every call still failed with the row's errno
    raced = counters(r, "raced ")
    assert raced["refused"] == raced["calls"] and raced["handled"] > 0, r
    # the 32-bit calls its own filter trapped are its business
    assert counters(r, "i386 ")["handled"] == 2, r
    # a forged SIGSYS already pending when a baseline call traps: the kernel
    # keeps the forged siginfo and drops its own; vigil goes by the
    # registers, so the call is refused and recorded, and the forged signal
    # (now fatal: the trap reset the blocked SIGSYS) does not reach it
    p = counters(r, "pending ")
    assert (p["ret"], p["errno"], p["handled"]) == (-1, "EPERM", 0), r
    # the log holds exactly the real refusals: nothing forged, nothing lost
    assert len(refused(r, "io_uring_setup")) == raced["calls"] + 1
    assert syscalls(r.recs, name="ioctl") == []
