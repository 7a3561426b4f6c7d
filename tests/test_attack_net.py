"""The network decisions against a candidate that attacks them (issue 8,
item 7): every message of a sendmmsg is judged, listen() on an unbound
socket is decided as a bind, an address the supervisor cannot read is
refused, TCP fast open is decided as a connect.  Each test runs real C
candidates under the real supervisor, as root and as nobody, and judges
from outside (host listeners on 127.0.0.1 hear nothing they should not)
and from the log (every attempt has its record).

Every run has a network namespace of its own (docs/POLICY.md), so the
listeners live in an outside namespace the tests make (tests/outside.py),
which the sandbox reaches through pasta when the policy allows it; a
listener on the host's own 127.0.0.1 can never hear the candidate."""
import os
import socket
import subprocess
import time
import uuid

import msgpack
import pytest

from helpers import (STORM_OPTS, Listener, Run, UdpListener, caller, free_port, nobody_caller,  # noqa: F401
                     root_caller, syscalls)
from outside import outside, tun_for_nobody  # noqa: F401

# the attacks race the engine's decision: engine by engine (conftest.py: the rule)
pytestmark = [pytest.mark.engines, pytest.mark.usefixtures("tun_for_nobody")]


def token():
    return "vigil-net-token-" + uuid.uuid4().hex


def policy(caller, text):
    d = caller.dir("policy")
    path = os.path.join(d, "net.policy")
    with open(path, "w") as f:
        f.write("version 1\n" + text + "include <default>\n")
    os.chmod(path, 0o644)
    return path


def fields(line):
    """"a=1 b=2" -> {"a": 1, "b": 2}."""
    return {k: int(v) for k, v in (w.split("=", 1) for w in line.split() if "=" in w)}


def lines(r):
    """{first word: fields} of each stdout line."""
    return {ln.split()[0]: fields(ln) for ln in r.stdout.splitlines() if ln.strip()}


# ---- sendmmsg: every message is judged ----

def test_sendmmsg_later_messages_to_a_denied_port_never_leave(caller, outside):
    ok, denied = UdpListener(outside), UdpListener(outside)
    tok, attempts, a = token(), 50, outside.addr
    pol = policy(caller, f"allow send udp {a}:{ok.port}\n")
    try:
        r = caller.run(caller.build("attack_net_mmsg"), str(ok.port), str(denied.port), tok,
                       str(attempts), a, opts=[*STORM_OPTS, "-p", pol])
    finally:
        ok.close()
        denied.close()
    assert r.rc == 0, r
    out = lines(r)
    # The control call (every message allowed) goes out: the listeners see.
    assert out["control"]["ret"] == 8 and len(ok.got) == 8, (r, ok.got)
    # No message of a call with a denied destination leaves, not even the
    # allowed first one: the whole call is refused.
    assert denied.got == [] and len(ok.got) == 8
    assert out["mixed"] == {"sent": 0, "refused": attempts, "errno": 13}, r
    assert out["tail"]["ret"] == -1 and out["tail"]["errno"] == 13, r
    recs = syscalls(r.recs, name="sendmmsg")
    assert len(recs) == 1 + attempts + 1, recs
    control, mixed, tail = recs[0], recs[1:-1], recs[-1]
    assert control["decision"] == "allow"
    assert [d["port"] for d in control["args"]["dests"]] == [ok.port]
    for rec in mixed + [tail]:
        assert rec["decision"] == "deny" and rec["errno"] == 13, rec
        # the record names the destination that decided, and every one
        assert rec["args"]["port"] == denied.port, rec
        dests = {(d["addr"], d["port"]): d for d in rec["args"]["dests"]}
        assert set(dests) == {(a, ok.port), (a, denied.port)}, rec
        assert dests[(a, ok.port)]["decision"] == "allow"
        assert dests[(a, denied.port)]["decision"] == "deny"
    counts = {(d["port"], d["msgs"]) for d in tail["args"]["dests"]}
    assert counts == {(ok.port, 1023), (denied.port, 1)}, tail


# ---- listen() on an unbound socket binds ----

def start(caller, *cmd, opts=()):
    """Start `vigil run` (like Caller.run) without waiting for it."""
    d = caller.dir("run")
    log, result = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
    args = ["run", "-q", "-o", log, "--result", result, *opts, "--", *cmd]
    p = caller.popen(args, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return p, log, result


def can_connect(port):
    """From the host: the sandbox's loopback is its own, so this is never
    true (tests/test_net_ns.py has the autobound case from every host
    address); the candidate's own client is what sees its server."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            return s.recv(64) == b"served\n"
    except OSError:
        return False


def serve(caller, mode):
    """Run the listen candidate; return (its listen line, whether the host
    reached its server, Run)."""
    pol = policy(caller, "allow bind tcp 127.0.0.1:*\n")
    t0 = time.monotonic()
    p, log, result = start(caller, caller.build("attack_net_listen"), mode, "3",
                           opts=[*STORM_OPTS, "-p", pol])
    first = fields(p.stdout.readline())
    reached = first.get("port", 0) != 0 and can_connect(first["port"])
    out, err = p.communicate(timeout=60)
    done = subprocess.CompletedProcess(p.args, p.returncode, out, err)
    return first, reached, Run(done, time.monotonic() - t0, log, result)


def test_listen_on_an_unbound_socket_is_a_bind_and_is_refused(caller):
    first, reached, r = serve(caller, "unbound")
    assert r.rc == 0, r
    assert not reached, (first, r)
    assert first == {"ret": -1, "errno": 13, "port": 0}, (first, r)
    recs = syscalls(r.recs, name="listen")
    assert len(recs) == 1, r.recs
    rec = recs[0]
    assert rec["class"] == "bind" and rec["decision"] == "deny", rec
    assert rec["args"]["addr"] == "0.0.0.0" and rec["args"]["port"] == 0, rec
    assert rec["args"]["proto"] == "tcp" and rec["args"]["family"] == "inet", rec


def test_listen_on_a_bound_socket_is_decided_at_its_bind(caller):
    first, reached, r = serve(caller, "bound")
    assert r.rc == 0, r
    assert first["ret"] == 0 and first["port"] != 0 and not reached, (first, r)
    binds = syscalls(r.recs, name="bind")
    assert len(binds) == 1 and binds[0]["decision"] == "allow", r.recs
    assert syscalls(r.recs, name="listen") == []


# ---- an address that cannot be read is refused ----

def test_sendto_address_flipped_to_prot_none_never_goes_out(caller, outside):
    denied, ok_port = UdpListener(outside), free_port()
    tok, tries = token(), 20000
    pol = policy(caller, f"allow send udp {outside.addr}:{ok_port}\n")
    try:
        r = caller.run(caller.build("attack_net_flip"), str(denied.port), tok, str(tries), "10",
                       outside.addr, opts=[*STORM_OPTS, "-p", pol], timeout=120)
    finally:
        denied.close()
    assert r.rc == 0, r
    out = lines(r)["flip"]
    assert denied.got == [] and out["sent"] == 0, (out, len(denied.got))
    assert tok not in r.stdout
    sends = sendto_records(r.log_path)
    assert len(sends) == out["tries"], (len(sends), out)   # every attempt recorded
    assert {d for d, _, _, _ in sends} == {"deny"}
    unreadable = [x for x in sends if x[1] == "(unreadable)"]
    # the race was run: some addresses could not be read, and were refused
    assert unreadable and {(e, why) for _, _, e, why in unreadable} == {
        (14, "unreadable: an argument could not be read from the candidate")}, out
    # what the candidate saw is what was recorded: no call ran at all
    assert out["efault"] == len(unreadable) and out["refused"] == len(sends) - len(unreadable)


def test_unreadable_address_is_refused_in_a_dry_run_too(root_caller, outside):
    """A dry run lets what the policy would deny go out, but a call that
    cannot be judged is refused in every mode."""
    denied, tok = UdpListener(outside), token()
    pol = policy(root_caller, f"allow send udp {outside.addr}:{free_port()}\n")
    try:
        r = root_caller.run(root_caller.build("attack_net_flip"), str(denied.port), tok, "3000",
                            "5", outside.addr, opts=[*STORM_OPTS, "-p", pol, "--dry-run"])
    finally:
        denied.close()
    assert r.rc == 0, r
    out = lines(r)["flip"]
    sends = sendto_records(r.log_path)
    unreadable = [x for x in sends if x[1] == "(unreadable)"]
    assert unreadable and {(d, e) for d, _, e, _ in unreadable} == {("deny", 14)}, out
    # the readable ones (a loaded machine may give the flipper every try)
    # are what the dry run lets through, recorded as what it would deny
    readable = [x for x in sends if x[1] != "(unreadable)"]
    assert {d for d, _, _, _ in readable} <= {"would-deny"}
    # every attempt has its record; what went out was released by the dry
    # run (a released one may still fault in the kernel on the flipped page)
    assert len(sends) == out["tries"] and len(denied.got) == out["sent"] <= len(readable)
    assert out["efault"] == len(unreadable) + len(readable) - out["sent"], out


def sendto_records(log_path):
    """(decision, addr, errno, default) of each sendto record, read as a
    stream: 20000 decoded records kept at once would grow this process,
    and with it every process it forks later (their ru_maxrss)."""
    out = []
    with open(log_path, "rb") as f:
        for rec in msgpack.Unpacker(f, raw=False):
            if rec.get("type") == "syscall" and rec.get("name") == "sendto":
                out.append((rec["decision"], rec["args"].get("addr"), rec.get("errno"),
                            rec.get("default")))
    return out


# ---- TCP fast open connects ----

def test_tcp_fast_open_is_decided_as_a_connect(caller, outside):
    with open("/proc/sys/net/ipv4/tcp_fastopen") as f:
        if not int(f.read()) & 1:
            pytest.skip("TCP fast open (client) is disabled on this host")
    denied, ok = Listener(outside), Listener(outside)
    tok, a = token(), outside.addr
    # Datagrams anywhere, TCP only to ok: a send that connects is a connect.
    pol = policy(caller, f"allow connect tcp {a}:{ok.port}\ndefault allow send\n")
    try:
        bad = caller.run(caller.build("attack_net_tfo"), str(denied.port), tok, a,
                         opts=[*STORM_OPTS, "-p", pol])
        good = caller.run(caller.build("attack_net_tfo"), str(ok.port), tok, a,
                          opts=[*STORM_OPTS, "-p", pol])
        got = ok.data(want=2)
    finally:
        denied.close()
        ok.close()
    assert bad.rc == 0 and good.rc == 0, (bad, good)
    assert denied.accepted == [], denied.accepted
    out = lines(bad)
    assert out["sendto"]["ret"] == -1 and out["sendmsg"]["ret"] == -1, bad
    for name in ("sendto", "sendmsg"):
        recs = syscalls(bad.recs, name=name, port=denied.port)
        assert len(recs) == 1, bad.recs
        assert recs[0]["class"] == "connect" and recs[0]["decision"] == "deny", recs
    # the same calls to the allowed port connect and deliver the token
    assert got == [tok.encode()] * 2, (got, good)
    for name in ("sendto", "sendmsg"):
        recs = syscalls(good.recs, name=name, port=ok.port)
        assert len(recs) == 1 and recs[0]["class"] == "connect", good.recs
        assert recs[0]["decision"] == "allow"


# ---- the unspecified address is loopback ----

def test_connect_and_send_to_0_0_0_0_are_judged_as_loopback(caller):
    tcp, udp, tok = Listener(), UdpListener(), token()
    pol = policy(caller, "deny connect tcp 127.0.0.1:*\ndeny send udp 127.0.0.1:*\n"
                         "allow connect tcp *:*\nallow send udp *:*\n")
    try:
        r = caller.run("python3", caller.cand("attack_net_anyaddr.py"), str(tcp.port),
                       str(udp.port), tok, opts=[*STORM_OPTS, "-p", pol])
        time.sleep(0.3)
    finally:
        tcp.close()
        udp.close()
    assert r.rc == 0, r
    assert tcp.accepted == [] and udp.got == [], (tcp.accepted, udp.got)
    assert "tcp refused 111" in r.stdout and "udp refused 13" in r.stdout, r
    for name, port in (("connect", tcp.port), ("sendto", udp.port)):
        recs = syscalls(r.recs, name=name, port=port)
        assert len(recs) == 1 and recs[0]["decision"] == "deny", r.recs
        assert recs[0]["args"]["addr"] == "127.0.0.1" and recs[0]["rule"]["line"] in (2, 3)
