"""The network's "outside" for the tests (issue 11): with every run in a
network namespace of its own, a host listener on 127.0.0.1 can no longer
hear the candidate, so the tests build a network namespace of their own,
joined to the host by a veth pair in a private /24 (host side .1, the
outside .2), with servers in it; the sandbox reaches it only through
pasta.  Nothing of it outlives the session (`ip netns del`).

Fixtures: `outside` (session), `tun_for_nobody` (session: unprivileged
pasta needs /dev/net/tun, which Debian's udev makes 0666; a bare devtmpfs
leaves it 0600)."""
import ctypes
import os
import random
import socket
import subprocess
import uuid

import pytest

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
TUN = "/dev/net/tun"


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _taken(prefix):
    out = subprocess.run(["ip", "-4", "route", "show"], capture_output=True, text=True).stdout
    return prefix + "." in out


class Outside:
    """A network namespace with an address (self.addr) the host routes to,
    and the host's own address on that link (self.host_addr)."""

    def __init__(self):
        tag = uuid.uuid4().hex[:8]
        self.name = "vigil-out-" + tag
        host_if, out_if = "vgh" + tag, "vgo" + tag
        self._out_if = out_if
        while True:
            net = f"10.{random.randrange(200, 250)}.{random.randrange(256)}"
            if not _taken(net):
                break
        self.host_addr, self.addr = net + ".1", net + ".2"
        self._net, self._extra = net, 2
        _ip("netns", "add", self.name)
        try:
            _ip("link", "add", host_if, "type", "veth", "peer", "name", out_if,
                "netns", self.name)
            _ip("addr", "add", self.host_addr + "/24", "dev", host_if)
            _ip("link", "set", host_if, "up")
            _ip("-n", self.name, "addr", "add", self.addr + "/24", "dev", out_if)
            _ip("-n", self.name, "link", "set", out_if, "up")
            _ip("-n", self.name, "link", "set", "lo", "up")
        except subprocess.CalledProcessError:
            self.close()
            raise

    def add_addr(self):
        """Another address of the outside (net.3, net.4, ...)."""
        self._extra += 1
        addr = f"{self._net}.{self._extra}"
        _ip("-n", self.name, "addr", "add", addr + "/24", "dev", self._out_if)
        return addr

    def socket(self, family=socket.AF_INET, kind=socket.SOCK_STREAM):
        """A socket of the outside namespace (a socket keeps the namespace
        it was made in; only this thread visits)."""
        here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        there = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
        try:
            if _libc.setns(there, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns outside")
            try:
                return socket.socket(family, kind)
            finally:
                if _libc.setns(here, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back")
        finally:
            os.close(here)
            os.close(there)

    def close(self):
        # the veth pair goes with the namespace
        subprocess.run(["ip", "netns", "del", self.name], capture_output=True)


@pytest.fixture(scope="session")
def outside():
    if os.geteuid() != 0:
        pytest.skip("needs root (ip netns)")
    o = Outside()
    yield o
    o.close()


@pytest.fixture(scope="session")
def tun_for_nobody():
    mode = os.stat(TUN).st_mode & 0o777
    if mode & 0o006 != 0o006:
        os.chmod(TUN, 0o666)
    yield
    # Under pytest-xdist another worker's session may still be using it
    # (and may have seen it 0666 because of this one): left as udev makes it.
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        os.chmod(TUN, mode)


def ppid(pid):
    """The parent of a host process, -1 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def pasta_pids():
    """pids of every pasta on the host (the binary runs as passt.avx2 or passt)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            exe = os.readlink(f"/proc/{d}/exe")
        except OSError:
            continue
        if os.path.basename(exe).startswith("passt"):
            out.append(int(d))
    return out
