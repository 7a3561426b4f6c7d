"""Default-deny at the kernel: a system call the syscall table has no
decoder for never reaches a file the policy denies.  A candidate calls,
by number, the xattr calls by path that are newer than the C library's
headers (getxattrat, setxattrat, listxattrat, removexattrat: x86_64
463..466) on a file the policy denies for reading and writing, numbers
no kernel has yet, and socket options that reroute a packet.  Judged from
the outside (the host file's xattrs, the token never in the candidate's
output) and from the log.  Both engines, as root and as nobody."""
import os

import pytest

from helpers import caller, marker, nobody_caller, root_caller, syscalls  # noqa: F401

POLICY = """version 1
deny read $WORK/private/**
deny write $WORK/private/**
include <default>
"""
ENGINES = ["notify", "ptrace"]


def lines(r):
    """{NAME: (ret, errno name)} of the candidate's result lines."""
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].startswith("ret=") and parts[2].startswith("errno="):
            out[parts[0]] = (int(parts[1][4:]), parts[2][6:])
    return out


def prepare(caller):
    """A workdir with private/token.txt (mode 666: only the policy keeps it)
    carrying user.tok = a fresh token and user.keep; the policy."""
    work = caller.dir("work")
    os.chmod(work, 0o777)
    private = os.path.join(work, "private")
    os.mkdir(private)
    os.chmod(private, 0o777)
    secret = os.path.join(private, "token.txt")
    with open(secret, "w") as f:
        f.write("contents\n")
    os.chmod(secret, 0o666)
    token = marker()
    os.setxattr(secret, "user.tok", token.encode())
    os.setxattr(secret, "user.keep", b"kept")
    pol = os.path.join(caller.dir("policy"), "sysnr.policy")
    with open(pol, "w") as f:
        f.write(POLICY)
    return work, secret, token, ["-p", pol, "--workdir", work]


def run(caller, engine, *args):
    work, secret, token, opts = prepare(caller)
    r = caller.run(caller.build("attack_sysnr"), *args, opts=[*opts, "--engine", engine],
                   cwd=work, timeout=60)
    assert r.rc == 0, r
    return secret, token, r


@pytest.mark.parametrize("engine", ENGINES)
def test_xattr_calls_by_path_are_refused(caller, engine):
    secret, token, r = run(caller, engine, "xattr", "private/token.txt")
    got = lines(r)
    for call in ("getxattrat", "listxattrat", "setxattrat", "removexattrat"):
        assert got[call] == (-1, "ENOSYS"), (call, r)
    # nothing of the file reached the candidate, nothing of it changed
    assert token not in r.stdout and "user.keep" not in r.stdout, r
    assert sorted(os.listxattr(secret)) == ["user.keep", "user.tok"]
    assert os.getxattr(secret, "user.keep") == b"kept"
    assert os.getxattr(secret, "user.tok") == token.encode()


@pytest.mark.parametrize("engine", ENGINES)
def test_numbers_no_kernel_has_are_refused(caller, engine):
    _, _, r = run(caller, engine, "unassigned")
    assert "unassigned tried=51 other=0" in r.stdout, r
    # refused by the filter itself: nothing reached the supervisor
    assert not [x for x in syscalls(r.recs) if x["nr"] >= 470], r


@pytest.mark.parametrize("engine", ENGINES)
def test_socket_options_that_reroute_are_refused(caller, engine):
    _, _, r = run(caller, engine, "sockopt")
    got = lines(r)
    assert got["socket6"][0] >= 0 and got["socket4"][0] >= 0, r
    # an IPv6 segment routing header: the kernel takes it without a
    # capability; the filter refuses it
    assert got["ipv6_rthdr"] == (-1, "EPERM"), r
    assert got["ip_options"] == (-1, "EPERM"), r
    # the options that do not reroute still work
    assert got["so_reuseaddr"] == (0, "0") and got["ipv6_v6only"] == (0, "0"), r
    # the baseline's refusals are on record, one each
    refusals = syscalls(r.recs, name="setsockopt")
    assert len(refusals) == 2, refusals
    assert {x["decision"] for x in refusals} == {"deny"}
    assert all(x["default"].startswith("baseline:") for x in refusals), refusals
    assert sorted(x["args"]["flags_raw"] for x in refusals) == [4, 57]  # IP_OPTIONS, IPV6_RTHDR
