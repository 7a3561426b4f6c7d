"""The calls the notify engine hands back to the kernel (CONTINUE) are
only those whose decision does not depend on memory the kernel reads
again (docs/SECURITY.md lists each class and why).  These are the ones
that did:

* openat2's flags are in its open_how, in memory: a policy that audits
  writes only (every read allowed) let an open_how decoded as O_RDONLY
  through unrecorded, and the kernel read O_WRONLY|O_TRUNC instead
  (tests/candidates/race_open_flip.c `how`, judged from outside: the
  protected file is never written);
* an openat2 with O_PATH in its open_how was let through the same way:
  it is refused ENOSYS (what openat2's users fall back from to openat);
* sendmsg with no address in its msghdr (memory) on a datagram socket:
  the kernel read the msghdr again, and a flipped msg_name sent to a
  denied port (tests/candidates/notify_sendmsg_flip.c, judged by a
  listener on the denied port that never hears a byte)."""
import errno
import os
import pathlib
import uuid

import pytest

from helpers import STORM_OPTS, NOBODY, caller, nobody_caller, root_caller, syscall_nr  # noqa: F401
from outside import outside, tun_for_nobody  # noqa: F401
from test_notify_carry import net_pair

SECONDS = 3  # a race loop under make soak (conftest.Race); make test's is shorter
OPEN_TRIES, SEND_TRIES = 1000, 300  # what SECONDS of each loop makes at least

ENGINES = [
    "notify",
    pytest.param("ptrace", marks=pytest.mark.xfail(
        strict=False, reason="ptrace engine: the kernel reads the arguments again after "
                             "the decision (docs/SECURITY.md)")),
]

# reads are not audited at all (every one allowed): only writes are decided
WRITES_ONLY = """version 1
default allow read
deny write $WORK/keep.txt
allow write /dev/null $WORK/**
allow exec $WORK/** /usr/**
"""


def work_dir(caller, policy):
    base = pathlib.Path(caller.dir("cont"))
    work = base / "work"
    work.mkdir()
    keep = work / "keep.txt"
    keep.write_text("keep\n")
    keep.chmod(0o666)
    pol = base / "cont.policy"
    pol.write_text(policy)
    pol.chmod(0o644)
    os.chown(work, NOBODY, NOBODY)
    return work, keep, str(pol)


@pytest.mark.parametrize("engine", ENGINES)
def test_open_how_flip_with_reads_unaudited_never_writes(caller, engine, race):
    work, keep, pol = work_dir(caller, WRITES_ONLY)
    r = caller.run(caller.build("race_open_flip"), "how", str(keep), race.seconds(SECONDS),
                   opts=[*STORM_OPTS, "-p", pol, "--workdir", str(work), "--engine", engine])
    assert r.rc == 0, r
    assert race.often(r.stdout.split("tries ")[1].split()[0], OPEN_TRIES), r.stdout[-300:]
    assert keep.read_text() == "keep\n"
    assert " won 0" in r.stdout, r.stdout[-300:]


OPATH = r"""
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
SYS_openat2, O_PATH = %d, 0o10000000
how = struct.pack("QQQ", O_PATH, 0, 0)
fd = libc.syscall(SYS_openat2, -100, b"keep.txt", how, len(how))
print("opath", fd if fd < 0 else "fd", ctypes.get_errno() if fd < 0 else 0)
fd = os.open("keep.txt", os.O_PATH)
print("openat", "fd" if fd >= 0 else fd)
""" % syscall_nr("openat2")


def test_openat2_o_path_is_refused_enosys(caller):
    work, _, pol = work_dir(caller, WRITES_ONLY)
    r = caller.run("python3", "-c", OPATH,
                   opts=[*STORM_OPTS, "-p", pol, "--workdir", str(work), "--engine", "notify"], cwd=str(work))
    assert r.rc == 0, r
    assert f"opath -1 {errno.ENOSYS}" in r.stdout, r.stdout
    assert "openat fd" in r.stdout, r.stdout


def udp_policy(caller, port, addr):
    """The UDP socket may be connected to addr:port and send there only."""
    path = os.path.join(caller.dir("policy"), "udp.policy")
    with open(path, "w") as f:
        f.write(f"version 1\nallow connect udp {addr}:{port}\nallow send udp {addr}:{port}\n"
                "include <default>\n")
    os.chmod(path, 0o644)
    return path


@pytest.mark.parametrize("engine", ENGINES)
def test_sendmsg_name_flip_never_reaches_the_denied_listener(caller, engine, race,
                                                              outside, tun_for_nobody):  # noqa: F811
    """The listeners live outside the sandbox (its loopback is its own):
    UDP, two ports on one address (Landlock has no UDP rules)."""
    ok, bad = net_pair(False, outside, outside.addr)
    tok = "vigil-sendmsg-token-" + uuid.uuid4().hex
    try:
        r = caller.run(caller.build("notify_sendmsg_flip"), outside.addr, str(ok.port),
                       outside.addr, str(bad.port), tok, race.seconds(SECONDS),
                       opts=[*STORM_OPTS, "-p", udp_policy(caller, ok.port, outside.addr), "--engine", engine])
    finally:
        ok.close()
        bad.close()
    assert r.rc == 0, r
    line = [ln for ln in r.stdout.splitlines() if ln.startswith("flip ")][0]
    out = dict(w.split("=", 1) for w in line.split()[1:])
    assert bad.heard == [], (out, len(bad.heard))
    assert race.often(out["tries"], SEND_TRIES) and race.met(out["ok"]) and race.met(out["refused"]), out
    assert race.met(len(ok.heard)), out
