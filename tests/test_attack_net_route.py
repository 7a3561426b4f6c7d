"""Sends that end somewhere else than the address vigil decided, or at more
than one host: a routing header or IPv4 source route (setsockopt, control
messages), and multicast, broadcast and the host's subnet-router anycast
address, which pasta would send from the host's own stack to the host's
wildcard-bound services (docs/SECURITY.md "Network").

Nothing here leaves the namespaces the test makes: vigil (and so pasta, its
"host") runs in a namespace of the test's own, HOST, joined by a veth pair
to another, OUT, which holds the allowed address A and an address VIA no
rule names.  HOST forwards IPv6, so it answers its prefix's subnet-router
anycast address.  Judged from outside (UDP listeners on A and VIA, and
listeners in HOST bound to the wildcard address, never get the token) and
from the log (each attempt's record says deny, and why).  Both engines,
root and nobody."""
import ctypes
import os
import random
import socket
import subprocess
import threading
import time
import uuid

import pytest

from helpers import (caller, marker, nobody_caller, root_caller, syscalls,  # noqa: F401
                     with_marker)
from outside import tun_for_nobody  # noqa: F401

pytestmark = pytest.mark.usefixtures("tun_for_nobody")

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)
ENGINES = ["notify", "ptrace"]
EPERM, EACCES = 1, 13
SPECIAL_RULE = ("multicast, broadcast and the host's anycast addresses: only a rule naming "
                "the address exactly allows them (net/net.h)")


def _ip(*args):
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


class Net:
    """HOST (where vigil and pasta run) and OUT, a /24 and a /64 between
    them: HOST .1 / ::1, OUT .2 / ::2 (A) and .3 / ::3 (VIA)."""

    def __init__(self):
        tag = uuid.uuid4().hex[:8]
        self.host, self.out = "vigil-rh-" + tag, "vigil-ro-" + tag
        n, m = random.randrange(200, 250), random.randrange(256)
        self.v4 = f"10.{n}.{m}"
        self.v6 = f"fd{n:02x}:{m:x}:{random.randrange(1 << 16):x}:1"
        self.a4, self.via4, self.host4 = self.v4 + ".2", self.v4 + ".3", self.v4 + ".1"
        self.a6, self.via6, self.host6 = self.v6 + "::2", self.v6 + "::3", self.v6 + "::1"
        self.brd4, self.anycast6 = self.v4 + ".255", self.v6 + "::"
        _ip("netns", "add", self.host)
        try:
            _ip("netns", "add", self.out)
            self._links(tag)
        except subprocess.CalledProcessError:
            self.close()
            raise

    def _links(self, tag):
        h, o = "vrh" + tag, "vro" + tag
        _ip("-n", self.host, "link", "add", h, "type", "veth", "peer", "name", o,
            "netns", self.out)
        for ns, dev in ((self.host, h), (self.out, o)):
            _ip("-n", ns, "link", "set", "lo", "up")
            _ip("-n", ns, "link", "set", dev, "up")
        _ip("-n", self.host, "addr", "add", self.host4 + "/24", "brd", "+", "dev", h)
        _ip("-n", self.host, "addr", "add", self.host6 + "/64", "dev", h, "nodad")
        for a4, a6 in ((self.a4, self.a6), (self.via4, self.via6)):
            _ip("-n", self.out, "addr", "add", a4 + "/24", "dev", o)
            _ip("-n", self.out, "addr", "add", a6 + "/64", "dev", o, "nodad")
        _ip("-n", self.host, "route", "add", "default", "via", self.a4)
        _ip("-n", self.host, "-6", "route", "add", "default", "via", self.a6)
        # a router answers its prefixes' subnet-router anycast addresses
        subprocess.run(["ip", "netns", "exec", self.host, "sysctl", "-q", "-w",
                        "net.ipv6.conf.all.forwarding=1"], check=True, capture_output=True)

    def socket(self, ns, family, kind=socket.SOCK_DGRAM):
        here = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        there = os.open(f"/run/netns/{ns}", os.O_RDONLY)
        try:
            if _libc.setns(there, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns")
            try:
                return socket.socket(family, kind)
            finally:
                if _libc.setns(here, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns back")
        finally:
            os.close(here)
            os.close(there)

    def close(self):
        for ns in (self.host, self.out):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


@pytest.fixture(scope="module")
def net():
    if os.geteuid() != 0:
        pytest.skip("needs root (ip netns)")
    n = Net()
    yield n
    n.close()


class Udp:
    """A UDP socket in a namespace of the test's, on addr:port, keeping
    every datagram."""

    def __init__(self, net, ns, addr, port=0):
        fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
        self.sock = net.socket(ns, fam)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if fam == socket.AF_INET6:
            self.sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        self.sock.bind((addr, port))
        self.port = self.sock.getsockname()[1]
        self.sock.settimeout(0.1)
        self.got = []
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._loop, daemon=True)
        self._t.start()

    def _loop(self):
        while not self._stop.is_set():
            try:
                self.got.append(self.sock.recv(65536))
            except socket.timeout:
                continue

    def wait(self, count=1, within=10):
        """Until count datagrams came (or within seconds): one still in
        pasta's queue is lost if the run that owns pasta ends first."""
        deadline = time.monotonic() + within
        while len(self.got) < count and time.monotonic() < deadline:
            time.sleep(0.02)

    def close(self):
        self._stop.wait(0.3)  # a datagram still on its way is queued by now
        self._stop.set()
        self._t.join()
        # what is queued and the thread had no time to read (a loaded
        # machine): read now
        self.sock.setblocking(False)
        try:
            while True:
                self.got.append(self.sock.recv(65536))
        except BlockingIOError:
            pass
        self.sock.close()


def token():
    return "vigil-route-" + uuid.uuid4().hex


def policy(caller, text):
    path = os.path.join(caller.dir("policy"), "net.policy")
    with open(path, "w") as f:
        f.write("version 1\n" + text + "include <default>\n")
    os.chmod(path, 0o644)
    return path


def run_in(net, caller, engine, pol, tok, steps, opts=()):
    """The candidate under vigil, vigil in HOST (pasta's host is HOST)."""
    binary = caller.build("attack_net_route")
    outer = caller.argv
    caller.argv = lambda args: ["nsenter", f"--net=/run/netns/{net.host}", "--", *outer(args)]
    try:
        return caller.run(binary, tok, *steps, opts=["-p", pol, "--engine", engine, *opts])
    finally:
        del caller.argv  # the class's again


def results(r):
    """{step: (opt errno, ret, errno)} of the candidate's lines (a step
    name again: "udp#2")."""
    out = {}
    for ln in r.stdout.splitlines():
        w = ln.split()
        if len(w) == 4 and w[1].startswith("opt="):
            name, n = w[0], 1
            while name in out:
                n += 1
                name = f"{w[0]}#{n}"
            out[name] = (int(w[1].split("/")[1]), int(w[2][4:]), int(w[3][6:]))
    return out


def v6(addr):
    return addr.replace(":", "-")


def check_header(r, engine):
    assert r.rc == 0, r
    hdr = next(x for x in r.recs if x["type"] == "header")
    assert hdr["engine"] == engine, hdr.get("engine_note")


# ---- routing headers and source routes ----

@pytest.mark.parametrize("engine", ENGINES)
def test_routing_headers_and_source_routes_never_redirect_a_send(net, caller, engine):
    """Only A:PORT is allowed.  A type 2 routing header (or an IPv4 loose
    source route) through VIA makes the kernel put VIA in the destination
    field: the datagram would go to VIA, which no rule names, under a
    record of a send to A.  Refused as a control message (sendmsg, with
    an address and on a connected socket); as a setsockopt it is the
    seccomp filter's refusal (launcher/filter.c) and, whatever gets past
    it, the sandbox's nftables table drops every packet with a routing
    header."""
    tok = token()
    a4, via4 = Udp(net, net.out, net.a4), None
    port = a4.port
    via4 = Udp(net, net.out, net.via4, port)
    a6, via6 = Udp(net, net.out, net.a6, port), Udp(net, net.out, net.via6, port)
    pol = policy(caller, f"allow send udp {net.a4}:{port}\nallow send udp [{net.a6}]:{port}\n"
                         f"allow connect udp {net.a4}:{port}\nallow connect udp [{net.a6}]:{port}\n")
    steps = [f"udp:{net.a4}:{port}", f"udp:{v6(net.a6)}:{port}",
             f"rthdr-cmsg:{v6(net.a6)}:{port}:{v6(net.via6)}",
             f"rthdr-conn:{v6(net.a6)}:{port}:{v6(net.via6)}",
             f"lsrr-cmsg:{net.a4}:{port}:{net.via4}",
             f"lsrr-conn:{net.a4}:{port}:{net.via4}",
             f"rthdr-sockopt:{v6(net.a6)}:{port}:{v6(net.via6)}",
             f"ttl-conn:{net.a4}:{port}", f"ttl-conn:{v6(net.a6)}:{port}"]
    try:
        r = run_in(net, caller, engine, pol, tok, steps)
    finally:
        for x in (a4, via4, a6, via6):
            x.close()
    check_header(r, engine)
    out = results(r)
    # the plain sends reach A, and so do those with a harmless control
    # message on a connected socket (carried out by vigil under notify)
    assert out["udp"][1:] == (len(tok), 0) and a4.got == [tok.encode()] * 2, (r, a4.got)
    # the setsockopt is refused (filter), or the send is dropped (nft);
    # refused, the candidate's send goes on without the header and reaches A
    opt_errno, ret, err = out["rthdr-sockopt"]
    assert opt_errno == EPERM or (ret, err) == (-1, EPERM), (out["rthdr-sockopt"], r)
    plain6 = 3 if (ret, err) == (len(tok), 0) else 2
    assert out["udp#2"][1:] == (len(tok), 0) and a6.got == [tok.encode()] * plain6, (r, a6.got)
    assert out["ttl-conn"][1:] == out["ttl-conn#2"][1:] == (len(tok), 0), r
    # nothing reaches VIA, nothing more reaches A
    assert via4.got == [] and via6.got == [], (via4.got, via6.got, r)
    for name in ("rthdr-cmsg", "rthdr-conn", "lsrr-cmsg", "lsrr-conn"):
        assert out[name] == (0, -1, EPERM), (name, r)
    # each control message has its record: denied, and why
    recs = [x for x in syscalls(r.recs, name="sendmsg")]
    whys = sorted(x["default"] for x in recs if x["decision"] == "deny")
    assert len(recs) == 4 and len(whys) == 4, recs
    assert sum("IPV6_RTHDR" in w for w in whys) == 2, whys
    assert sum("IP_RETOPTS" in w for w in whys) == 2, whys
    assert {x["errno"] for x in recs} == {EPERM}, recs
    # those with an address name the decided one
    assert {x["args"].get("addr") for x in recs} == {net.a6, net.a4, None}, recs


# ---- multicast, broadcast, anycast ----

def special_steps(net, port):
    return {"224.0.0.1": f"udp:224.0.0.1:{port}", "ff02::1": f"udp:{v6('ff02::1')}:{port}",
            "255.255.255.255": f"udp:255.255.255.255:{port}",
            net.brd4: f"udp:{net.brd4}:{port}", net.anycast6: f"udp:{v6(net.anycast6)}:{port}"}


def special_run(net, caller, engine, pol_text, opts=()):
    """Each special destination on its own run (the candidate prints one
    line per step with the same name): (Run, what the host heard)."""
    tok = token()
    h4 = Udp(net, net.host, "0.0.0.0")
    port = h4.port
    h6 = Udp(net, net.host, "::", port)
    o4, o6 = Udp(net, net.out, "0.0.0.0", port), Udp(net, net.out, "::", port)
    pol = policy(caller, pol_text.format(port=port))
    runs = {}
    try:
        for addr, st in special_steps(net, port).items():
            runs[addr] = run_in(net, caller, engine, pol, tok, [st], opts)
    finally:
        for x in (h4, h6, o4, o6):
            x.close()
    return runs, {"host": h4.got + h6.got, "out": o4.got + o6.got}, tok


@pytest.mark.parametrize("engine", ENGINES)
def test_multicast_broadcast_anycast_never_reach_the_host_under_a_wide_rule(net, caller,
                                                                               engine):
    """`allow send udp *:*` and `allow send udp 0.0.0.0/0:*`: a wide rule
    does not cover 224.0.0.1, ff02::1, 255.255.255.255, the host's
    directed broadcast or its subnet-router anycast address: each send is
    refused (EACCES) and recorded so; no wildcard listener hears it."""
    runs, heard, tok = special_run(net, caller, engine,
                                   "allow send udp *:*\nallow send udp 0.0.0.0/0:*\n"
                                   "allow send udp [::/0]:*\n")
    assert heard == {"host": [], "out": []}, heard
    for addr, r in runs.items():
        check_header(r, engine)
        assert results(r)["udp"] == (0, -1, EACCES), (addr, r)
        recs = syscalls(r.recs, name="sendto")
        assert len(recs) == 1 and recs[0]["decision"] == "deny", (addr, recs)
        assert recs[0]["args"]["addr"] == addr and recs[0]["rule"]["text"] == SPECIAL_RULE


@pytest.mark.parametrize("engine", ENGINES)
def test_the_kernel_drops_special_destinations_in_a_dry_run(net, caller, engine):
    """A dry run lets what the supervisor would deny go out: only the
    sandbox's nftables table stands between the send and the host, and it
    drops each one (the send fails EPERM)."""
    runs, heard, tok = special_run(net, caller, engine, "allow send udp *:*\n",
                                   opts=["--dry-run"])
    assert heard == {"host": [], "out": []}, heard
    for addr, r in runs.items():
        check_header(r, engine)
        assert results(r)["udp"] == (0, -1, EPERM), (addr, r)
        recs = syscalls(r.recs, name="sendto")
        assert len(recs) == 1 and recs[0]["decision"] == "would-deny", (addr, recs)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_rule_naming_a_special_address_exactly_allows_it(net, caller, engine):
    """Only an exact rule opens one: the host's directed broadcast named
    in the policy with a port is decided allow on that port; on another
    port, and for the other specials, the wide rule still does not
    count."""
    tok = token()
    h4 = Udp(net, net.host, "0.0.0.0")
    port = h4.port
    other = port + 1 if port < 65535 else port - 1
    pol = policy(caller, f"allow send udp {net.brd4}:{port}\nallow send udp *:*\n")
    try:
        r = run_in(net, caller, engine, pol, tok,
                   [f"udp:{net.brd4}:{port}", f"udp:{net.brd4}:{other}",
                    f"udp:224.0.0.1:{port}"])
    finally:
        h4.close()
    check_header(r, engine)
    recs = {(x["args"]["addr"], x["args"]["port"]): x for x in syscalls(r.recs, name="sendto")}
    assert recs[(net.brd4, port)]["decision"] == "allow", recs
    assert recs[(net.brd4, port)]["rule"]["line"] == 2, recs
    for key in ((net.brd4, other), ("224.0.0.1", port)):
        assert recs[key]["decision"] == "deny" and recs[key]["rule"]["text"] == SPECIAL_RULE


# ---- the kernel layer alone ----

SEND_WITH_OPTIONS = r"""
import socket, sys
tok, port, a4, via4, a6, via6 = sys.argv[1], int(sys.argv[2]), *sys.argv[3:7]
def send(name, fam, dest, opt=None):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if opt:
        s.setsockopt(*opt)
    try:
        s.sendto(tok.encode(), (dest, port))
        print(name, 0)
    except OSError as e:
        print(name, e.errno)
ip4 = lambda t: socket.inet_pton(socket.AF_INET, t)
ip6 = lambda t: socket.inet_pton(socket.AF_INET6, t)
send("plain4", socket.AF_INET, a4)
send("plain6", socket.AF_INET6, a6)
# a loose source route through via4: [type, length, pointer, via4, end]
send("lsrr", socket.AF_INET, a4,
     (socket.IPPROTO_IP, socket.IP_OPTIONS, bytes([0x83, 7, 4]) + ip4(via4) + b"\0"))
# a segment routing header [a6, via6], one segment left: via6 goes first
srh = bytes([0, 4, 4, 1, 1, 0, 0, 0]) + ip6(a6) + ip6(via6)
send("srh", socket.AF_INET6, a6, (socket.IPPROTO_IPV6, 57, srh))
"""


def candidate_pid(mark, within=10):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        for _, pid, cmd in with_marker(mark):
            if cmd.startswith("python3 -c"):
                return pid
        time.sleep(0.05)
    return None


@pytest.mark.parametrize("engine", ENGINES)
def test_the_kernel_drops_routing_headers_and_ip_options_whatever_the_supervisor(net, caller,
                                                                                 engine):
    """What the supervisor never sees: root, from outside, sends in the
    sandbox's own network namespace (nsenter) with the capability the
    candidate lacks: an IPv4 loose source route and a segment routing
    header through VIA.  The sandbox's nftables table drops both (EPERM);
    plain datagrams still reach A; VIA hears nothing."""
    mark = marker()
    a4 = Udp(net, net.out, net.a4)
    port = a4.port
    via4, a6, via6 = (Udp(net, net.out, x, port) for x in (net.via4, net.a6, net.via6))
    pol = policy(caller, f"allow send udp {net.a4}:{port}\n")
    d = caller.dir("run")
    cmd = ["run", "-q", "-o", os.path.join(d, "run.msgpack"), "-p", pol, "--engine", engine,
           "--", "python3", "-c", "import sys, time; print('up', flush=True); time.sleep(30)",
           mark]
    argv = ["nsenter", f"--net=/run/netns/{net.host}", "--", *caller.argv(cmd)]
    p = subprocess.Popen(argv, env=caller.env(), cwd=d, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "up", p.stderr.read()
        pid = candidate_pid(mark)
        assert pid, with_marker(mark)
        tok = token()
        sent = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "--", "/usr/bin/python3",
                               "-c", SEND_WITH_OPTIONS, tok, str(port), net.a4, net.via4,
                               net.a6, net.via6], capture_output=True, text=True, timeout=30)
        a4.wait()
        a6.wait()
    finally:
        p.kill()
        p.communicate()
        for x in (a4, via4, a6, via6):
            x.close()
    out = dict(ln.split() for ln in sent.stdout.splitlines())
    assert out == {"plain4": "0", "plain6": "0", "lsrr": str(EPERM), "srh": str(EPERM)}, sent
    assert a4.got == [tok.encode()] and a6.got == [tok.encode()], (a4.got, a6.got)
    assert via4.got == [] and via6.got == [], (via4.got, via6.got)
