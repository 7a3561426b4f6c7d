"""Every run has a network namespace of its own; egress, when the policy
allows addresses beyond the sandbox, goes through pasta, and the host's own
addresses stay out of reach at the kernel layer (issue 11, docs/POLICY.md
"The sandbox's network").  Judged from outside: listeners in an outside
namespace the tests make (tests/outside.py) and on the host hear only what
the policy allows; and from the log, decoded by Python msgpack."""
import glob
import os
import signal
import socket
import subprocess
import time
import uuid

import pytest

from helpers import (Listener, Run, UdpListener, caller, nobody_caller,  # noqa: F401
                     root_caller, syscalls)
from outside import outside, pasta_pids, ppid, tun_for_nobody  # noqa: F401

PROBE = "netns_probe.py"


@pytest.fixture
def net_caller(caller, tun_for_nobody):  # noqa: F811
    return caller


def token():
    return "vigil-netns-" + uuid.uuid4().hex


def policy(caller, text):
    path = os.path.join(caller.dir("policy"), "net.policy")
    with open(path, "w") as f:
        f.write("version 1\n" + text + "env set PYTHONUNBUFFERED=1\ninclude <default>\n")
    os.chmod(path, 0o644)
    return path


def out_lines(r):
    return [ln for ln in r.stdout.splitlines() if ln.strip()]


def probe(caller, pol, *steps, opts=()):
    return caller.run("python3", caller.cand(PROBE), *steps, opts=["-p", pol, *opts])


def heard(lis):
    return lis.data(want=1)


def notes(r, what):
    return [x["detail"] for x in r.recs if x["type"] == "note" and x["what"] == what]


def test_allowed_address_and_port_reached_others_refused_and_recorded(net_caller, outside):
    ok, other_port, tok = Listener(outside), Listener(outside), token()
    uok, udenied = UdpListener(outside), UdpListener(outside)
    host = Listener(outside=None)  # the host's 127.0.0.1
    a = outside.addr
    pol = policy(net_caller, f"allow connect tcp {a}:{ok.port}\nallow send udp {a}:{uok.port}\n")
    try:
        r = probe(net_caller, pol, f"connect:{a}:{ok.port}:{tok}",
                  f"connect:{a}:{other_port.port}:{tok}",
                  f"connect:{outside.host_addr}:{ok.port}:{tok}",
                  f"connect:127.0.0.1:{host.port}:{tok}",
                  f"udp:{a}:{uok.port}:{tok}", f"udp:{a}:{udenied.port}:{tok}")
        got = heard(ok)
    finally:
        for x in (ok, other_port, uok, udenied, host):
            x.close()
    assert r.rc == 0, r
    lines = out_lines(r)
    assert lines[0] == f"connect {a} {ok.port} ok", r
    assert got == [tok.encode()], (got, r)
    assert other_port.accepted == [] and host.accepted == [], r
    assert uok.got == [tok.encode()] and udenied.got == [], r
    assert all(ln.endswith("errno 111") for ln in lines[1:4]), lines
    assert lines[4] == f"udp {a} {uok.port} ok" and lines[5].endswith("errno 13"), lines
    decided = {(x["args"]["addr"], x["args"]["port"]): x["decision"]
               for x in r.recs if x["type"] == "syscall" and x["class"] in ("connect", "send")}
    assert decided == {(a, ok.port): "allow", (a, other_port.port): "deny",
                       (outside.host_addr, ok.port): "deny", ("127.0.0.1", host.port): "deny",
                       (a, uok.port): "allow", (a, udenied.port): "deny"}, decided
    assert [n for n in notes(r, "network") if n.startswith("egress through pasta")], r.recs


def test_host_addresses_unreachable_even_when_the_supervisor_allows(net_caller, outside):
    """`allow connect tcp *:*`: the supervisor lets every connect through,
    so only the kernel layer (the namespace and its egress filter) keeps
    the host's loopback and the host's own address out, also for a socket
    bound to the egress device.  The outside is reached."""
    out_ok, lo, tok = Listener(outside), Listener(), token()
    # a listener on every address of the host's but loopback (the veth's
    # host side among them), all on one port
    anyaddr = Listener(addr="0.0.0.0")
    pol = policy(net_caller, "allow connect tcp *:*\n")
    steps = [f"connect:{outside.addr}:{out_ok.port}:{tok}",
             f"connect:{outside.host_addr}:{anyaddr.port}:{tok}",
             f"devconnect:127.0.0.1:{lo.port}:{tok}",
             f"devconnect:{outside.host_addr}:{anyaddr.port}:{tok}"]
    for ip in host_addresses():
        steps.append(f"devconnect:{ip}:{anyaddr.port}:{tok}")
    try:
        r = probe(net_caller, pol, *steps)
        got = heard(out_ok)
    finally:
        for x in (out_ok, lo, anyaddr):
            x.close()
    assert r.rc == 0, r
    assert got == [tok.encode()], r
    assert lo.accepted == [] and anyaddr.accepted == [], (lo.accepted, anyaddr.accepted, r)
    lines = out_lines(r)
    assert lines[0].endswith(" ok") and len(lines) > 3, lines
    assert all(not ln.endswith(" ok") for ln in lines[1:]), lines
    assert {x["decision"] for x in syscalls(r.recs, name="connect")} == {"allow"}


def host_addresses():
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True,
                         text=True).stdout
    return [ln.split()[3].split("/")[0] for ln in out.splitlines() if " lo " not in ln]


def test_a_host_address_named_by_a_rule_is_reached(net_caller, outside):
    hostside, tok = Listener(addr=outside.host_addr), token()
    pol = policy(net_caller, f"allow connect tcp {outside.host_addr}:{hostside.port}\n")
    try:
        r = probe(net_caller, pol, f"connect:{outside.host_addr}:{hostside.port}:{tok}")
        got = heard(hostside)
    finally:
        hostside.close()
    assert r.rc == 0 and out_lines(r) == [f"connect {outside.host_addr} {hostside.port} ok"], r
    assert got == [tok.encode()]


def test_two_runs_serving_127_0_0_1_8000_do_not_collide(net_caller):
    toks = [token(), token()]
    pol = policy(net_caller, "allow bind tcp 127.0.0.1:8000\nallow connect tcp 127.0.0.1:8000\n")
    procs = []
    for t in toks:
        d = net_caller.dir("run")
        log = os.path.join(d, "run.msgpack")
        p = net_caller.popen(["run", "-q", "-o", log, "-p", pol, "--", "python3",
                              net_caller.cand(PROBE), f"serve:8000:{t}"],
                             cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(p)
    outs = [p.communicate(timeout=60) for p in procs]
    for (out, err), t, p in zip(outs, toks, procs):
        assert p.returncode == 0, (out, err)
        assert out.strip() == f"serve 8000 got {t}", (out, err)


def test_an_autobound_listener_is_not_reachable_from_the_host(net_caller):
    pol = policy(net_caller, "allow bind tcp *:*\n")
    d = net_caller.dir("run")
    log = os.path.join(d, "run.msgpack")
    p = net_caller.popen(["run", "-q", "-o", log, "-p", pol, "--", "python3",
                          net_caller.cand(PROBE), "autolisten:3"],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = p.stdout.readline().split()
    assert first[:2] == ["autolisten", "port"], (first, p.stderr.read())
    port = int(first[2])
    reached = []
    for ip in ["127.0.0.1"] + host_addresses():
        try:
            with socket.create_connection((ip, port), timeout=1) as s:
                reached.append((ip, s.recv(20)))
        except OSError:
            pass
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, (out, err)
    assert reached == [], reached
    rec = Run(subprocess.CompletedProcess(p.args, 0, out, err), 0, log, None).recs
    listens = syscalls(rec, name="listen")
    assert len(listens) == 1 and listens[0]["decision"] == "allow", listens


def vigil_children(pid):
    return [c for c in pasta_pids() if ppid(c) == pid]


def left_behind(before):
    """The pastas started since `before` that no vigil owns any more: one
    another run on the machine (another test, another worker) started
    meanwhile is its vigil's child, and no business of this test."""
    def owned(pid):
        try:
            return os.path.basename(os.readlink(f"/proc/{ppid(pid)}/exe")) == "vigil"
        except OSError:
            return False
    return {c for c in set(pasta_pids()) - before if not owned(c)}


def test_pasta_killed_mid_run_no_network_a_note_nothing_left(net_caller, outside):
    ok, tok = Listener(outside), token()
    before = set(pasta_pids())
    files_before = set(glob.glob("/tmp/passt*") + glob.glob("/tmp/pasta*"))
    pol = policy(net_caller, f"allow connect tcp {outside.addr}:{ok.port}\n")
    d = net_caller.dir("run")
    log = os.path.join(d, "run.msgpack")
    step = f"connect:{outside.addr}:{ok.port}:{tok}"
    p = net_caller.popen(["run", "-q", "-o", log, "-p", pol, "--", "python3",
                          net_caller.cand(PROBE), step, "sleep:2", step],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        mine = vigil_children(p.pid)
        assert first.strip().endswith(" ok") and len(mine) == 1, (first, mine)
        os.kill(mine[0], signal.SIGKILL)
        out, err = p.communicate(timeout=60)
    finally:
        ok.close()
    assert p.returncode == 0, (out, err)
    assert not out.strip().endswith(" ok"), out   # the second connect had no route
    assert len(ok.accepted) == 1
    r = Run(subprocess.CompletedProcess(p.args, 0, out, err), 0, log, None)
    died = [n for n in notes(r, "network") if n.startswith("pasta (the sandbox's egress) ended")]
    assert len(died) == 1, r.recs
    assert left_behind(before) == set()
    assert set(glob.glob("/tmp/passt*") + glob.glob("/tmp/pasta*")) == files_before


def test_runs_leave_no_pasta_behind_and_vigil_killed_takes_it_along(net_caller, outside):
    before = set(pasta_pids())
    pol = policy(net_caller, f"allow connect tcp {outside.addr}:1\nallow bind tcp *:*\n")
    r = probe(net_caller, pol, "sleep:0")
    assert r.rc == 0, r
    assert left_behind(before) == set()
    d = net_caller.dir("run")
    p = net_caller.popen(["run", "-q", "-o", os.path.join(d, "run.msgpack"), "-p", pol, "--",
                          "python3", net_caller.cand(PROBE), "autolisten:30"],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stdout.readline().startswith("autolisten port")
    assert len(vigil_children(p.pid)) == 1
    p.kill()
    p.wait()
    deadline = time.monotonic() + 5
    while left_behind(before) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left_behind(before) == set()


def test_without_pasta_a_policy_needing_egress_is_refused_in_one_line(net_caller, outside):
    pol = policy(net_caller, f"allow connect tcp {outside.addr}:80\n")
    r = net_caller.run("true", opts=["-p", pol], env={"VIGIL_PASTA": "/nonexistent/pasta"})
    assert r.rc == 125, r
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "needs pasta" in lines[0], r
    # a policy that stays on the sandbox's loopback needs no pasta
    r = net_caller.run("true", opts=["-p", "localhost"], env={"VIGIL_PASTA": "/nonexistent/pasta"})
    assert r.rc == 0, r


@pytest.mark.xfail(strict=True, reason="Debian 12's pasta (2023-03-09) answers a refused "
                   "connect with nothing: the client waits out its own timeout (docs/RUN.md)")
def test_a_closed_port_of_an_allowed_host_is_refused_at_once(net_caller, outside):
    """A connect to a port nothing listens on, of an address the policy
    allows, is refused (ECONNREFUSED) as from the host, not left to the
    client's own timeout: pasta passes the host's refusal on as a reset."""
    closed = Listener(outside)
    port = closed.port
    closed.close()  # now nothing listens there
    a = outside.addr
    pol = policy(net_caller, f"allow connect tcp {a}:{port}\n")
    r = probe(net_caller, pol, f"connect:{a}:{port}:{token()}")
    assert r.rc == 0, r
    assert out_lines(r) == [f"connect {a} {port} errno 111"], r
