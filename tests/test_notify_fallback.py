"""The notify engine on kernels without what it needs (run/run.c
choose_engine, tracer/notify/probe.c): ptrace runs instead, says so in the
header and the result, and --engine notify says so on stderr.

This kernel has every feature, so the test makes it look older from the
outside: tests/candidates/fallback_old_kernel.c installs a seccomp filter
answering EINVAL where an older kernel's seccomp does (or EPERM for any
listener, as a container's filter may), and execs vigil under it.  vigil has no knob for this; what it sees is what it would see
there.  Each case is judged by what a user sees (a denied file's per-run
token never printed, a readable file printed, the stderr lines) and by
the log decoded with Python's msgpack (the refusal recorded, the engine
and why, and whether the calls were carried out by vigil, which only the
notify engine does).  Every test runs as root and as nobody."""
import json
import os
import subprocess

import pytest

from helpers import Run, caller, marker, nobody_caller, root_caller, syscalls  # noqa: F401

POLICY = """version 1
deny read $WORK/private/**
include <default>
"""

UNAVAILABLE = "notify engine unavailable (this kernel lacks %s): ptrace engine used"
NOTIFY = "notify engine: listener, ADDFD_FLAG_SEND, %s, no FD_SYNC_WAKE_UP (kernel before 6.6)"

# The wrapper's rows: what the kernel lacks -> (the engine, the note)
KERNELS = {
    "no-listener": ("ptrace", UNAVAILABLE % "SECCOMP_FILTER_FLAG_NEW_LISTENER"),
    "no-addfd-send": ("ptrace", UNAVAILABLE % "SECCOMP_IOCTL_NOTIF_ADDFD with "
                                              "SECCOMP_ADDFD_FLAG_SEND"),
    "no-wait-killable": ("notify", NOTIFY % "no WAIT_KILLABLE_RECV"),
    "no-sync-wake-up": ("notify", NOTIFY % "WAIT_KILLABLE_RECV"),
    "listener-refused": ("ptrace", UNAVAILABLE % "SECCOMP_FILTER_FLAG_NEW_LISTENER"),
}
FALLBACKS = [k for k, (engine, _) in KERNELS.items() if engine == "ptrace"]


class OldKernel:
    """vigil run under fallback_old_kernel LACKS, in a workdir holding
    public.txt and private/token.txt (a fresh token the policy denies;
    Landlock cannot, the workdir is open to the candidate)."""

    def __init__(self, caller, lacks):
        self.caller = caller
        self.lacks = lacks
        self.wrapper = caller.build("fallback_old_kernel")
        self.work = caller.dir("work")
        os.chmod(self.work, 0o777)
        os.mkdir(os.path.join(self.work, "private"))
        os.chmod(os.path.join(self.work, "private"), 0o755)
        self.token = marker()
        self.public = "public " + marker()
        for name, text in (("private/token.txt", self.token), ("public.txt", self.public)):
            with open(os.path.join(self.work, name), "w") as f:
                f.write(text + "\n")
            os.chmod(os.path.join(self.work, name), 0o644)
        self.secret = os.path.join(self.work, "private", "token.txt")
        self.policy = os.path.join(caller.dir("policy"), "fallback.policy")
        with open(self.policy, "w") as f:
            f.write(POLICY)

    def argv(self, args):
        """The caller's argv for `vigil ARGS`, with the wrapper before vigil."""
        argv = self.caller.argv(args)
        i = argv.index(self.caller.vigil)
        return [*argv[:i], self.wrapper, self.lacks, *argv[i:]]

    def run(self, *opts, cmd=("/bin/cat", "public.txt", "private/token.txt")):
        """`vigil run OPTS -- CMD` (no -q unless in OPTS, no engine unless
        in OPTS: vigil's own default); returns a Run."""
        d = self.caller.dir("run")
        log, result = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
        args = ["run", "-o", log, "--result", result, "-p", self.policy,
                "--workdir", self.work, *opts, "--", *cmd]
        p = subprocess.run(self.argv(args), env=self.caller.env(), cwd=d, text=True,
                           capture_output=True, timeout=60, errors="replace")
        return Run(p, 0, log, result)

    def vigil_log(self, *args):
        p = self.caller.vigil_raw("log", *args, timeout=30)
        assert p.returncode == 0, p.stderr
        return p.stdout


def assert_decided(r, old):
    """The run worked (the public file printed) and decided: the token
    never printed, its open refused and on record, the public one allowed."""
    assert old.public in r.stdout, r
    assert old.token not in r.stdout and old.token not in r.stderr, r
    opens = syscalls(r.recs, resolved=old.secret)
    assert opens and all(x["decision"] == "deny" for x in opens), opens
    public = syscalls(r.recs, resolved=os.path.join(old.work, "public.txt"))
    assert public and all(x["decision"] == "allow" for x in public), public
    return public


def assert_engine(r, lacks):
    """Header and result name the engine and the note; the records show
    that engine ran: only notify carries calls out (`carried`)."""
    engine, note = KERNELS[lacks]
    hdr = r.recs[0]
    assert hdr["type"] == "header" and hdr["engine"] == engine, hdr.get("engine_note")
    assert hdr["engine_note"] == note
    assert r.result["engine"] == engine and r.result["engine_note"] == note
    carried = [x for x in syscalls(r.recs) if x.get("carried")]
    assert bool(carried) == (engine == "notify"), carried[:3]


def note_lines(r):
    return [line for line in r.stderr.splitlines() if "notify engine" in line]


@pytest.mark.parametrize("lacks", KERNELS)
def test_default_engine_decides_and_says_which_ran(caller, lacks):
    """vigil's default on each older kernel: the run decides, the log
    says which engine ran and why, stderr says nothing of it (nobody
    asked for notify)."""
    old = OldKernel(caller, lacks)
    r = old.run()
    assert r.rc != 0, r  # cat could not read the token
    public = assert_decided(r, old)
    assert_engine(r, lacks)
    assert note_lines(r) == [], r.stderr
    if KERNELS[lacks][0] == "notify":  # vigil opened it and installed the fd
        assert all(x.get("carried") and x.get("installed") for x in public), public


@pytest.mark.parametrize("lacks", KERNELS)
def test_engine_notify_says_on_stderr_when_it_falls_back(caller, lacks):
    """--engine notify on a kernel without it: ptrace runs and decides,
    and stderr has the note once, -q or not (the user asked for the
    engine they did not get).  Where notify runs, stderr says nothing."""
    old = OldKernel(caller, lacks)
    engine, note = KERNELS[lacks]
    for quiet in ([], ["-q"]):
        r = old.run("--engine", "notify", *quiet)
        assert_decided(r, old)
        assert_engine(r, lacks)
        want = ["vigil: " + note] if engine == "ptrace" else []
        assert note_lines(r) == want, r.stderr


@pytest.mark.parametrize("lacks", FALLBACKS)
def test_engine_ptrace_is_silent(caller, lacks):
    old = OldKernel(caller, lacks)
    r = old.run("--engine", "ptrace")
    assert_decided(r, old)
    hdr = r.recs[0]
    assert hdr["engine"] == "ptrace" and "engine_note" not in hdr, hdr
    assert r.result["engine"] == "ptrace" and r.result["engine_note"] is None
    assert "notify" not in r.stderr, r.stderr


@pytest.mark.parametrize("lacks", KERNELS)
def test_vigil_log_shows_the_note(caller, lacks):
    old = OldKernel(caller, lacks)
    r = old.run("-q", cmd=("/bin/true",))
    assert r.rc == 0, r
    engine, note = KERNELS[lacks]
    header = old.vigil_log(r.log_path).splitlines()[0]
    assert " header " in header and f" {engine} " in header, header
    assert f'engine_note "{note}"' in header, header
    hdr = json.loads(old.vigil_log("--json", r.log_path).splitlines()[0])
    assert hdr["engine"] == engine and hdr["engine_note"] == note, hdr
