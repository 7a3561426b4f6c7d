"""vigil's resolver (issue 11, DNS through vigil): in a run with a network
namespace of its own, /etc/resolv.conf names vigil's resolver, every query
is a `dns` record, names the policy's host-name rules allow are resolved
upstream and others refused without upstream hearing of them, and a
host-name rule matches only the addresses vigil handed out for it in the
run.  A fake upstream DNS server on the host's 127.0.0.1 (--dns-upstream)
answers a few names and logs what it was asked.  Real candidates (Python's
getaddrinfo, getent, curl) under the real supervisor, as root and as
nobody; judged from outside (the fake server's query log, the candidate's
output) and from the log decoded with Python's msgpack."""
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import threading
import uuid

import pytest

from helpers import caller, nobody_caller, root_caller, syscalls  # noqa: F401
from outside import tun_for_nobody  # noqa: F401

# egress (pasta) as nobody needs /dev/net/tun usable by it
pytestmark = pytest.mark.usefixtures("tun_for_nobody")

PRIVATE = {}  # every run has its own netns and vigil's resolver
# what the candidate sees: an allowed connect to 10.77/16 finds no route in
# its namespace; a refused one fails as vigil refuses connects
ECONNREFUSED = 111
# an allowed connect to 10.77/16 goes out through pasta (egress): whatever
# the outside makes of it, it is not vigil's refusal
PORT = 8443
SVC = {"svc.test": ["10.77.0.1"], "a.wild.test": ["10.77.0.2"], "wild.test": ["10.77.0.3"],
       "two.test": ["10.77.0.4", "10.77.0.5"], "loop.test": ["127.0.0.1"]}
SVC6 = {"svc.test": ["fd00::77:1"]}


class FakeDNS:
    """A DNS server on 127.0.0.1 answering A/AAAA for SVC/SVC6, NXDOMAIN
    for the rest; `asked` lists every (name, qtype) it received."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.asked = []
        self._stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    @property
    def upstream(self):
        return f"127.0.0.1:{self.port}"

    def names(self):
        return [n for n, _ in self.asked]

    def _answer(self, data):
        qid, _flags = struct.unpack(">HH", data[:4])
        i, labels = 12, []
        while data[i]:
            labels.append(data[i + 1:i + 1 + data[i]].decode())
            i += 1 + data[i]
        qtype, = struct.unpack(">H", data[i + 1:i + 3])
        name = ".".join(labels).lower()
        self.asked.append((name, qtype))
        table = SVC if qtype == 1 else SVC6 if qtype == 28 else {}
        fam = socket.AF_INET if qtype == 1 else socket.AF_INET6
        rrs = b"".join(b"\xc0\x0c" + struct.pack(">HHIH", qtype, 1, 30, 4 if qtype == 1 else 16) +
                       socket.inet_pton(fam, a) for a in table.get(name, []))
        rcode = 0 if name in SVC or name in SVC6 else 3
        n = len(table.get(name, []))
        return struct.pack(">HHHHHH", qid, 0x8180 | rcode, 1, n, 0, 0) + data[12:i + 5] + rrs

    def _loop(self):
        self.sock.settimeout(0.2)
        while not self._stop:
            try:
                data, peer = self.sock.recvfrom(4096)
            except socket.timeout:
                continue
            except OSError:
                return
            self.sock.sendto(self._answer(data), peer)

    def close(self):
        self._stop = True
        self.thread.join()
        self.sock.close()


@pytest.fixture
def dns():
    d = FakeDNS()
    yield d
    d.close()


def policy(caller, text=""):
    path = os.path.join(caller.dir("policy"), "dns.policy")
    with open(path, "w") as f:
        f.write("version 1\n"
                f"allow connect tcp svc.test:{PORT} two.test:{PORT}\n"
                f"allow connect tcp *.wild.test:{PORT}\n"
                "allow exec /usr/bin/getent /usr/bin/curl\n" + text + "include <default>\n")
    os.chmod(path, 0o644)
    return path


def run(caller, dns, *steps, opts=(), text="", env=PRIVATE, timeout=60):
    opts = ["-p", policy(caller, text), "--dns-upstream", dns.upstream, *opts]
    return caller.run("python3", caller.cand("dns_client.py"), *steps, opts=opts, env=env,
                      timeout=timeout)


def out(r):
    """{"resolve NAME": rest, "connect A:P": rest} of the candidate's lines."""
    return {" ".join(ln.split()[:2]): " ".join(ln.split()[2:]) for ln in r.stdout.splitlines()}


def logtext(caller, r):
    """`vigil log` of the run, less the reads: for failure messages."""
    text = caller.vigil_raw("log", r.log_path).stdout
    return "\n".join(ln for ln in text.splitlines() if " read " not in ln)


def dns_recs(r, **match):
    return [x for x in r.recs if x["type"] == "dns" and all(x.get(k) == v for k, v in match.items())]


def connects(r, addr):
    """The candidate's TCP connects to addr (getaddrinfo's own UDP connects,
    made to sort addresses, left out)."""
    return [x for x in syscalls(r.recs, **{"class": "connect"})
            if x["args"].get("addr") == addr and x["args"].get("proto") == "tcp"]


def test_allowed_name_is_resolved_recorded_and_names_the_connect(caller, dns):
    r = run(caller, dns, "resolve", "svc.test", "connect", f"10.77.0.1:{PORT}")
    assert r.rc == 0, r
    o = out(r)
    assert o["resolve svc.test"] == "ok 10.77.0.1,fd00::77:1", r
    assert o[f"connect 10.77.0.1:{PORT}"] != f"errno={ECONNREFUSED}", r   # allowed
    assert ("svc.test", 1) in dns.asked and ("svc.test", 28) in dns.asked
    a = dns_recs(r, name="svc.test", qtype="A")
    assert a and a[0]["decision"] == "allow" and a[0]["rcode"] == "NOERROR", a
    assert a[0]["answers"] == ["10.77.0.1"] and a[0]["proto"] == "udp"
    assert a[0]["rule"]["line"] == 2 and "svc.test" in a[0]["rule"]["text"]
    assert "pid" not in a[0]
    assert dns_recs(r, name="svc.test", qtype="AAAA")[0]["answers"] == ["fd00::77:1"]
    c = connects(r, "10.77.0.1")
    assert c and c[0]["decision"] == "allow" and c[0]["args"]["host"] == "svc.test", c
    assert c[0]["rule"]["line"] == 2
    # the way to the resolver is vigil's own rule
    to_resolver = [x for x in syscalls(r.recs, addr="127.0.0.53") if x["class"] in ("connect", "send")]
    assert to_resolver and all(x["decision"] == "allow" and x["rule"]["file"] == "(vigil)"
                               for x in to_resolver)
    text = caller.vigil_raw("log", r.log_path).stdout
    assert f"connect tcp svc.test(10.77.0.1):{PORT} -> allow" in text, text
    assert "dns     A svc.test -> allow (dns.policy:2) NOERROR 10.77.0.1" in text, text
    js = [json.loads(ln) for ln in caller.vigil_raw("log", "--json", "--class", "dns",
                                                   r.log_path).stdout.splitlines()]
    assert js and all(j["type"] == "dns" for j in js)
    assert {"name": "svc.test", "qtype": "A", "answers": ["10.77.0.1"]}.items() <= js[0].items()


def test_denied_name_is_refused_recorded_and_never_asked_upstream(caller, dns):
    secret = "secret-" + uuid.uuid4().hex[:12] + ".test"
    r = run(caller, dns, "resolve", secret, "resolve", "wild.test", "resolve", "svc.test")
    assert r.rc == 0, r
    o = out(r)
    assert o[f"resolve {secret}"].startswith("fail"), r
    assert o["resolve wild.test"].startswith("fail"), r        # *.wild.test is not wild.test
    assert o["resolve svc.test"].startswith("ok"), r           # the resolver still works
    assert secret not in dns.names() and "wild.test" not in dns.names(), dns.asked
    for name in (secret, "wild.test"):
        recs = dns_recs(r, name=name)
        assert recs and all(x["decision"] == "deny" and x["rcode"] == "NXDOMAIN" and
                            x["rule"] is None and "answers" not in x for x in recs), recs
        assert recs[0]["default"] == "no allow rule names this host"


def test_wildcard_rule_allows_names_below_it(caller, dns):
    r = run(caller, dns, "resolve", "a.wild.test", "connect", f"10.77.0.2:{PORT}")
    assert out(r)["resolve a.wild.test"] == "ok 10.77.0.2", r
    assert dns_recs(r, name="a.wild.test", qtype="A")[0]["decision"] == "allow"
    assert out(r)[f"connect 10.77.0.2:{PORT}"] != f"errno={ECONNREFUSED}", r   # allowed
    c = connects(r, "10.77.0.2")
    assert c[0]["decision"] == "allow" and c[0]["args"]["host"] == "a.wild.test", c


def test_an_address_never_handed_out_matches_no_name_rule(caller, dns):
    # 10.77.0.1 is svc.test's, and localhost is 127.0.0.1 to the host:
    # neither came from vigil's resolver in this run
    r = run(caller, dns, "connect", f"10.77.0.1:{PORT}", "connect", f"127.0.0.1:{PORT}",
            text=f"allow connect tcp localhost:{PORT}\n")
    assert r.rc == 0, r
    o = out(r)
    assert o[f"connect 10.77.0.1:{PORT}"] == f"errno={ECONNREFUSED}", r  # refused by vigil
    for addr in ("10.77.0.1", "127.0.0.1"):
        c = connects(r, addr)
        assert c and c[0]["decision"] == "deny" and "host" not in c[0]["args"], c
    assert "resolved" not in r.recs[0]   # nothing resolved ahead in a run with a resolver
    assert dns.asked == []


def test_a_name_rule_matches_only_its_own_names_addresses(caller, dns):
    # two.test's addresses are allowed on PORT; svc.test's address is not
    # two.test's even after both were resolved
    r = run(caller, dns, "resolve", "two.test", "resolve", "svc.test",
            "connect", f"10.77.0.5:{PORT}", "connect", f"10.77.0.1:{PORT + 1}")
    o = out(r)
    assert o["resolve two.test"] == "ok 10.77.0.4,10.77.0.5", r
    assert o[f"connect 10.77.0.5:{PORT}"] != f"errno={ECONNREFUSED}", r   # allowed
    assert o[f"connect 10.77.0.1:{PORT + 1}"] == f"errno={ECONNREFUSED}", r
    assert connects(r, "10.77.0.1")[0]["decision"] == "deny"
    assert connects(r, "10.77.0.5")[0]["args"]["host"] == "two.test"
    assert connects(r, "10.77.0.1")[0]["args"]["host"] == "svc.test"  # named, and still denied


def test_sendmmsg_destinations_name_their_host(caller, dns):
    # loop.test is 127.0.0.1: after resolving it, a sendmmsg to it on an
    # allowed port goes out; the call mixing in a denied port does not,
    # and each destination of the record names its host
    ok, denied = 8500, 8501
    prog = caller.build("attack_net_mmsg")
    r = caller.run("sh", "-c", 'python3 "$1" resolve loop.test && "$2" %d %d tok 2' % (ok, denied),
                   "sh", caller.cand("dns_client.py"), prog,
                   opts=["-p", policy(caller, f"allow send udp loop.test:{ok}\nallow exec {prog}\n"),
                         "--dns-upstream", dns.upstream], env=PRIVATE)
    assert "resolve loop.test ok 127.0.0.1" in r.stdout and "control ret=8" in r.stdout, r
    recs = syscalls(r.recs, name="sendmmsg")
    assert recs[0]["decision"] == "allow" and recs[0]["args"]["host"] == "loop.test", recs[0]
    mixed = recs[1]
    assert mixed["decision"] == "deny" and mixed["args"]["port"] == denied, mixed
    assert {(d["port"], d["host"], d["decision"]) for d in mixed["args"]["dests"]} == {
        (ok, "loop.test", "allow"), (denied, "loop.test", "deny")}, mixed


def test_malformed_query_flood_neither_crashes_nor_hangs(caller, dns):
    r = run(caller, dns, "flood", "20000", "resolve", "svc.test", timeout=60)
    assert r.rc == 0, r
    o = out(r)
    assert o["flood 20000"] == "done" and o["resolve svc.test"].startswith("ok"), r
    bad = dns_recs(r, rcode="FORMERR")
    assert len(bad) > 1000 and all(x["decision"] == "deny" and
                                   x["default"] == "malformed query" for x in bad)
    assert r.recs[-1]["type"] == "trailer" and r.recs[-1]["status"] == "ok"
    assert set(dns.names()) <= {"svc.test"}, dns.asked        # garbage never went upstream


def test_getent_and_curl_resolve_through_vigil(caller, dns):
    cmd = "getent ahostsv4 svc.test; getent hosts nope.test; echo getent=$?"
    if shutil.which("curl"):
        cmd += f"; curl -s -m 3 http://svc.test:{PORT}/ ; echo curl=$?"
    r = caller.run("sh", "-c", cmd, opts=["-p", policy(caller), "--dns-upstream", dns.upstream],
                   env=PRIVATE, timeout=60)
    assert "10.77.0.1" in r.stdout and "svc.test" in r.stdout, (r, logtext(caller, r))
    assert "getent=2" in r.stdout, r       # nope.test: not found
    assert dns_recs(r, name="nope.test")[0]["decision"] == "deny"
    if shutil.which("curl"):
        # resolved: whatever the outside makes of the connect through
        # pasta, curl did not fail with 6, "could not resolve host"
        assert "curl=" in r.stdout and "curl=6" not in r.stdout, r
        c = connects(r, "10.77.0.1")
        assert c and c[0]["decision"] == "allow" and c[0]["args"]["host"] == "svc.test", r


def silent_run(caller, *steps):
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # hears, never answers
    silent.bind(("127.0.0.1", 0))
    try:
        return caller.run("python3", caller.cand("dns_client.py"), *steps,
                          opts=["-p", policy(caller), "--dns-upstream",
                                "127.0.0.1:%d" % silent.getsockname()[1]], env=PRIVATE)
    finally:
        silent.close()


def test_a_silent_upstream_is_servfail_in_time(caller):
    r = silent_run(caller, "raw", "svc.test")
    assert out(r)["raw svc.test"] == "rcode=2 answers=0", r     # SERVFAIL, before 5 s
    rec = dns_recs(r, name="svc.test")
    assert rec and rec[0]["decision"] == "allow" and rec[0]["rcode"] == "SERVFAIL", rec
    assert "answers" not in rec[0]


@pytest.mark.soak  # judged by the run's wall time (make test's load made one 1.4 s)
def test_a_query_in_flight_does_not_hold_up_the_end_of_the_run(caller):
    # the candidate asks and exits: vigil stops waiting for upstream (it
    # waited its 1.5 s before), and the query is still on record
    r = silent_run(caller, "send", "svc.test")
    assert r.rc == 0 and out(r)["send svc.test"] == "", r
    assert r.wall < 1.2, r
    rec = dns_recs(r, name="svc.test")
    assert rec and rec[0]["rcode"] == "SERVFAIL", r.recs[-3:]


def test_resolv_conf_is_vigils_and_read_only(caller, dns):
    r = caller.run("sh", "-c", "cat /etc/resolv.conf; echo x >> /etc/resolv.conf; echo w=$?",
                   opts=["-p", policy(caller), "--dns-upstream", dns.upstream], env=PRIVATE)
    assert r.stdout.splitlines()[0] == "nameserver 127.0.0.53", r
    assert "w=0" not in r.stdout, r


def test_dry_run_answers_a_denied_name_as_would_deny(caller, dns):
    r = run(caller, dns, "resolve", "svc.test", "resolve", "nope.test", opts=["--dry-run"])
    assert out(r)["resolve nope.test"].startswith("fail"), r   # upstream's NXDOMAIN
    assert "nope.test" in dns.names()
    recs = dns_recs(r, name="nope.test", qtype="A")
    assert recs[0]["decision"] == "would-deny" and recs[0]["rcode"] == "NXDOMAIN", recs


def test_a_run_without_network_refuses_every_name(caller, dns):
    # the default policy grants no network: a private namespace anyway,
    # whose resolver answers nothing
    r = caller.run("python3", caller.cand("dns_client.py"), "resolve", "svc.test",
                   opts=["--dns-upstream", dns.upstream])
    assert out(r)["resolve svc.test"].startswith("fail"), r
    assert dns.asked == []
    assert dns_recs(r, name="svc.test") and all(
        x["decision"] == "deny" for x in dns_recs(r, name="svc.test"))


def test_every_run_answers_its_first_query(caller, dns):
    # the socket is bound while pid 1 brings `lo` up: a run whose resolver
    # lost its replies waited out glibc's 5 s timeouts and failed; one in
    # ten did before the bind waited for `lo`
    # glibc asks once and waits longer than the run may last: a lost query
    # is a failed run, not a slow one (no wall time to judge under load)
    pol = policy(caller)
    for i in range(30):
        r = caller.run("getent", "ahostsv4", "svc.test",
                       opts=["-p", pol, "--dns-upstream", dns.upstream, "--time", "20s",
                             "--env", "RES_OPTIONS=attempts:1 timeout:30"],
                       env=PRIVATE)
        assert r.rc == 0 and "10.77.0.1" in r.stdout, (i, r)
        assert len(dns_recs(r, name="svc.test")) == 1, (i, dns_recs(r))


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed")
def test_viewer_shows_dns_records_and_the_host(root_caller, dns):
    from test_viewer import Term, at_row, read_records  # the viewer in a private tmux server
    name = "nope-" + uuid.uuid4().hex[:8] + ".test"
    r = run(root_caller, dns, "resolve", name, "resolve", "svc.test", "connect", f"10.77.0.1:{PORT}")
    assert r.rc == 0, r
    t = Term([r.log_path], width=160, height=50)
    try:
        t.wait(lambda s: "row 1" in t.status(s), what="the status bar")
        t.keys("/")
        t.wait("/")
        t.type("A " + name)       # the dns record's summary, not the exec's argv
        t.keys("Enter")
        # on its row before Enter opens the detail: an Enter that comes
        # while the search still runs is lost (seen under load)
        at_row(t, 1 + next(i for i, (x, _, _) in enumerate(read_records(r.log_path))
                           if x.get("type") == "dns" and x.get("name") == name
                           and x.get("qtype") == "A"))
        t.keys("Enter")
        s = t.wait(lambda s: "no allow rule names this host" in s and " detail " in s
                   and "not known" in s.split(" detail ")[1], what="the record's detail")
        row = next(ln for ln in s.splitlines() if name in ln and " dns " in ln)
        assert "deny" in row and "NXDOMAIN" in row, s
        assert "not known" in s.split(" detail ")[1], s
        t.close()
        t = Term([r.log_path], width=160, height=50)
        t.wait(lambda s: "row 1" in t.status(s), what="the status bar")
        t.keys("/")
        t.wait("/")
        t.type("svc.test(10.77.0.1)")
        t.keys("Enter")
        t.wait(lambda s: not re.search(r"\brow 1\b", t.status(s)), what="the search's row")
        t.keys("Enter")
        s = t.wait(lambda s: " detail " in s and "host" in s.split(" detail ")[1], what="host")
        assert "svc.test" in s.split(" detail ")[1], s
    finally:
        t.close()
