"""Attacks on `vigil serve` (issue 26), from inside a candidate and from
another local user, and on the daemon's own state.  Nine of these found
holes when they were written (an include spelled with '\r' that made the
root daemon read any file, and through it a bind gained while queued;
trees deeper than the walks for the disk limit and the stored quota; a
DELETE that left what lay past PATH_MAX; files refused after a restart;
damaged state files read as nothing; a multi-line error); all are fixed,
and each test now holds the fix.

Judged from outside only: HTTP answers, the host's files and processes,
the daemon's state files, its service log decoded with python3-msgpack.
Clients that must be another user run as that uid (setpriv), so the daemon
knows them by SO_PEERCRED as in production; the rest are root's (uid 0 is
a user like any other to the daemon)."""
import concurrent.futures
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from helpers import VIGIL
from serve_daemon import Daemon, stop_and_check
# the module fixtures and helpers test_serve.py has (a dir others may pass, a
# socket path other users reach, a config file, the service log decoded)
from test_serve import config, serve_dir, service_events, sock_path  # noqa: F401

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="vigil serve's uid range: root only")

ATTACKER, VICTIM = 61011, 61012
CLIENT_DIR = os.path.dirname(os.path.abspath(__file__))
WAIT_S = 60           # a run that should take a second or two, on a loaded machine
DEPTH_PAST_WALK = 70  # deeper than the 64 levels serve/persist.c and launcher/usage.c walk
MIB = 1 << 20

# A candidate's Python, run as `python3 -c CODE`: it makes a tree in its
# work dir using only short paths (renames wrap the tree one level at a
# time), so that neither vigil nor the kernel ever sees the deep path.
NEST = r"""
import os, sys
depth, name_len, size = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
os.mkdir("t")
with open("t/blob", "wb") as f:
    f.write(b"x" * size)
for i in range(depth):
    os.mkdir("w")
    os.rename("t", "w/" + ("n" * name_len))
    os.rename("w", "t")
print("nested", depth)
"""


def nest_request(depth, name_len, size, **more):
    return dict(argv=["python3", "-c", NEST, str(depth), str(name_len), str(size)], **more)


def as_uid(uid, sock, method, path, body=None):
    """(status, JSON or text body) of one request made by a process of uid."""
    code = ("import json, sys; sys.path.insert(0, %r); import serve_client as c\n"
            "s, h, b = c.call(%r, %r, %r, body=json.loads(sys.argv[1]))\n"
            "print(json.dumps([s, b.decode('utf-8', 'replace')]))\n"
            % (CLIENT_DIR, sock, method, path))
    r = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid, "--clear-groups",
                        sys.executable, "-c", code, json.dumps(body)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    status, text = json.loads(r.stdout)
    try:
        return status, json.loads(text)
    except ValueError:
        return status, text


def submit(d, req):
    r = d.raw("POST", "/runs", req)
    assert r.status == 201, (r.status, r.body)
    return r.json()["id"]


def wait(d, rid, within=WAIT_S):
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        run = d.raw("GET", "/runs/%s?wait=5" % rid).json()
        if run["state"] not in ("queued", "running"):
            return run
    raise AssertionError("run %s did not end in %d s" % (rid, within))


def run_dir(d, rid, uid=0):
    return os.path.join(d.state, "runs", str(uid), rid)


# ---- from inside a candidate: its work dir, as the daemon measures, serves
# ---- and deletes it

NEST_AND_WAIT = NEST + "import time; time.sleep(3)\n"   # past the disk limit's 1 s check


def disk_limit_status(serve_dir, depth):
    d = Daemon()
    try:
        req = dict(argv=["python3", "-c", NEST_AND_WAIT, str(depth), "1", str(16 * MIB)],
                   limits={"disk": "4M"})
        return wait(d, submit(d, req))["status"]
    finally:
        stop_and_check(d)


def test_disk_limit_holds_a_shallow_tree(serve_dir):
    """16 MB written under a 4M disk limit: the run is killed (limit)."""
    assert disk_limit_status(serve_dir, 1) == "limit"


def test_disk_limit_holds_a_tree_deeper_than_the_walk(serve_dir):
    """The same 16 MB, 70 directories down (made with short paths only):
    vigil run's disk walk never looks there, so the run ends ok with four
    times its limit, and any run can fill the host's disk."""
    assert disk_limit_status(serve_dir, DEPTH_PAST_WALK) == "limit"


def stored_after(serve_dir, depth):
    """Bytes of 'stored' charged for one run that left 8 MB depth dirs down."""
    d = Daemon()
    try:
        before = d.raw("GET", "/quota").json()["quotas"]["stored"]["used"]
        wait(d, submit(d, nest_request(depth, 1, 8 * MIB)))
        return d.raw("GET", "/quota").json()["quotas"]["stored"]["used"] - before
    finally:
        stop_and_check(d)


def test_stored_quota_counts_a_shallow_tree(serve_dir):
    assert stored_after(serve_dir, 1) >= 8 * MIB


def test_stored_quota_counts_a_tree_deeper_than_the_walk(serve_dir):
    """8 MB left 70 directories down is charged as a few hundred KB (the
    directories): a user stores without bound past the 'stored' quota."""
    assert stored_after(serve_dir, DEPTH_PAST_WALK) >= 8 * MIB


def test_delete_removes_a_tree_longer_than_path_max(serve_dir):
    """A tree 20 names of 250 bytes deep (a path of 5,000 bytes, past
    PATH_MAX) with 1 MB at its bottom: DELETE says deleted and gives the
    bytes back to the quota; the tree must then be gone from the host."""
    d = Daemon()
    try:
        rid = submit(d, nest_request(20, 250, MIB))
        assert wait(d, rid)["status"] == "ok"
        r = d.raw("DELETE", "/runs/" + rid)
        assert r.status == 200 and r.json()["deleted"] is True, r.body
        assert not os.path.exists(os.path.join(run_dir(d, rid), "work"))
    finally:
        try:
            stop_and_check(d)
        finally:   # what the daemon left, by a walk that works by fd
            subprocess.run(["rm", "-rf", d.base], check=False)


TRICKS = r"""
import os, socket
os.symlink("/etc/shadow", "link\nwith newline")
os.symlink("/etc", "etc_link")
os.mkfifo("fifo")
s = socket.socket(socket.AF_UNIX)
try:
    s.bind("sock")   # the default policy refuses a bind: then there is none
except OSError as e:
    print("bind", e.errno)
for src, dst in (("/etc/passwd", "hard_passwd"), ("/proc/self/exe", "hard_exe")):
    try:
        os.link(src, dst)
    except OSError as e:
        print("link", src, e.errno)
os.makedirs("locked/inner")
with open("locked/inner/secret", "w") as f:
    f.write("KEPT-INSIDE")
os.chmod("locked/inner", 0)
os.chmod("locked", 0)
os.symlink(os.environ["SENTINEL"], "sentinel_link")
with open("esc\x1b[2J\x07name", "w") as f:
    f.write("escapes")
print("made")
"""


def test_work_dir_tricks_serve_nothing_of_the_host_and_delete_clean(serve_dir):
    """A candidate leaves links to host files, a FIFO, a socket, names with
    a newline and terminal escapes, a chmod 000 tree and a link to a host
    file of root's: GET .../files serves none of the host's bytes (403 or
    404), the candidate's own files are served (the escape-named one, the
    one in the chmod 000 tree), DELETE removes
    everything, and the host file the link named is untouched."""
    sentinel = serve_dir / "sentinel"
    sentinel.write_text("SENTINEL-7f3a\n")
    os.chmod(sentinel, 0o600)
    before = os.stat(sentinel)
    d = Daemon()
    try:
        rid = submit(d, dict(argv=["python3", "-c", TRICKS], env={"SENTINEL": str(sentinel)}))
        run = wait(d, rid)
        out = d.raw("GET", "/runs/%s/stdout" % rid).body.decode()
        assert run["status"] == "ok" and "made" in out, (run, out)
        for name in ("link%0Awith%20newline", "etc_link/shadow", "fifo", "sock", "hard_passwd",
                     "hard_exe", "sentinel_link", "..%2Frun.json",
                     "%2E%2E/run.json", "", "."):
            r = d.raw("GET", "/runs/%s/files/%s" % (rid, name))
            assert r.status in (403, 404), (name, r.status, r.body)
            assert r.json()["error"], (name, r.body)
            assert b"root:" not in r.body and b"SENTINEL-7f3a" not in r.body, (name, r.body)
        # the candidate's own files are its user's, whatever their names and modes
        r = d.raw("GET", "/runs/%s/files/esc%%1B%%5B2J%%07name" % rid)
        assert (r.status, r.body) == (200, b"escapes"), (r.status, r.body)
        r = d.raw("GET", "/runs/%s/files/locked/inner/secret" % rid)
        assert (r.status, r.body) == (200, b"KEPT-INSIDE"), (r.status, r.body)
        r = d.raw("DELETE", "/runs/" + rid)
        assert r.status == 200, r.body
        assert os.listdir(run_dir(d, rid)) == ["run.json"]
        after = os.stat(sentinel)
        assert (after.st_uid, after.st_mode, after.st_size) == \
            (before.st_uid, before.st_mode, before.st_size)
        assert sentinel.read_text() == "SENTINEL-7f3a\n"
    finally:
        stop_and_check(d)


def test_a_files_error_is_one_line_whatever_the_name(serve_dir):
    d = Daemon()
    try:
        rid = submit(d, dict(argv=["true"]))
        wait(d, rid)
        r = d.raw("GET", "/runs/%s/files/no%%0Asuch%%1B%%5B2J" % rid)
        assert r.status == 404, r.body
        err = r.json()["error"]
        assert "\n" not in err and "\x1b" not in err, err
    finally:
        stop_and_check(d)


LEAVE_BEHIND = r"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(120)
    os._exit(0)
print("left a grandchild")
"""


def test_a_candidate_does_not_outlive_its_run(serve_dir):
    """A double-forked, setsid'd sleeper: once the run has ended no
    process of the daemon's uid range is left, while the daemon runs on."""
    d = Daemon()
    try:
        run = wait(d, submit(d, dict(argv=["python3", "-c", LEAVE_BEHIND])))
        assert run["state"] == "finished", run
        deadline = time.monotonic() + 5   # a reaped child's /proc entry going away
        while time.monotonic() < deadline and [p for p in d.ours() if p[0] in d.uids]:
            time.sleep(0.05)
        assert [p for p in d.ours() if p[0] in d.uids] == []
    finally:
        stop_and_check(d)


def restart_argv(state, sock):
    return lambda _state, uids: [VIGIL, "serve", "--state", state, "--uid-range", uids,
                                 "--listen", "unix:" + sock]


def test_a_runs_files_are_served_after_a_restart(serve_dir, sock_path):
    state = str(serve_dir / "state")
    argv = restart_argv(state, sock_path)
    d = Daemon(argv_of=argv, sock=sock_path)
    try:
        rid = submit(d, dict(argv=["sh", "-c", "echo kept > out.txt"]))
        wait(d, rid)
        r = d.raw("GET", "/runs/%s/files/out.txt" % rid)
        assert (r.status, r.body) == (200, b"kept\n"), (r.status, r.body)
    finally:
        stop_and_check(d)
    d = Daemon(argv_of=argv, sock=sock_path)
    try:
        r = d.raw("GET", "/runs/%s/files/out.txt" % rid)
        assert (r.status, r.body) == (200, b"kept\n"), (r.status, r.body)
    finally:
        stop_and_check(d)


# ---- from another local user

def test_policy_text_cannot_include_a_file_the_user_cannot_read(serve_dir, sock_path):
    """A root-only file (in a 0700 dir) that parses as a policy: a local
    user's policy_text including it with a carriage return for a space
    must be refused as any include of a host file is; else the daemon, as
    root, reads it for them (and answers 201 or the file's parse error:
    an oracle of what root-only files exist and hold)."""
    hidden = serve_dir / "root-only"
    hidden.mkdir(mode=0o700)
    (hidden / "p.policy").write_text("version 1\n")
    d = Daemon("--listen", "unix:" + sock_path)
    try:
        for text in ("version 1\ninclude\r%s/p.policy\n", "version 1\n\rinclude %s/p.policy\n",
                     "version 1\ninclude %s/p.policy\n"):
            status, body = as_uid(ATTACKER, sock_path, "POST", "/runs",
                                  {"argv": ["true"], "policy_text": text % hidden})
            assert status == 400 and "shipped" in body["error"], (repr(text), status, body)
    finally:
        stop_and_check(d)


def test_parallel_submits_and_cancels_never_exceed_the_quotas(serve_dir):
    """Eight clients of one user submit and cancel as fast as they can
    against 'runs 12/1h concurrent 2': exactly 12 are accepted, and the
    service log never has more than 2 of the user's runs accepted and not
    yet ended."""
    conf = config(serve_dir, ["quota runs 12/1h concurrent 2"])
    d = Daemon("--config", conf, "--workers", "2")
    try:
        def client(_):
            got = []
            for _ in range(12):
                r = d.raw("POST", "/runs", {"argv": ["sleep", "0.3"]})
                if r.status == 201:
                    got.append(r.json()["id"])
                    d.raw("POST", "/runs/%s/cancel" % got[-1], b"{}")
                else:
                    assert r.status == 429, r.body
            return got
        with concurrent.futures.ThreadPoolExecutor(8) as ex:
            ids = sum(ex.map(client, range(8)), [])
        for rid in ids:
            wait(d, rid)
        assert len(ids) == 12, ids
        assert d.stop() == 0, d.stderr()
        live, most = set(), 0
        for e in service_events(d):
            if e["kind"] == "accepted":
                live.add(e["run"])
            elif e["kind"] == "finished":
                live.discard(e["run"])
            most = max(most, len(live))
        assert most <= 2 and live == set(), (most, live)
    finally:
        stop_and_check(d)


def http(sock, data, read=True):
    """What the daemon answers to raw bytes, until it closes (read)."""
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(sock)
        s.sendall(data)
        if not read:
            return b""
        s.shutdown(socket.SHUT_WR)
        with s.makefile("rb") as f:
            return f.read()


def test_hostile_http_gets_clear_answers_and_runs_nothing(serve_dir):
    """15 MB of nesting, numbers that overflow, a chunked body, a body
    shorter than its Content-Length, a second request smuggled after a
    first's declared length: each gets a 4xx with a one-line error or no
    answer; no run is made but the one well-formed request; the daemon
    answers after."""
    d = Daemon()
    try:
        r = d.raw("POST", "/runs", b"[" * (15 * MIB))
        assert r.status == 400 and "\n" not in r.json()["error"], (r.status, r.body[:200])
        for limits in ({"memory": "99999999999999999999999T"}, {"time": "1e400s"},
                       {"files": "-1"}, {"time": "18446744073709551616ms"}):
            r = d.raw("POST", "/runs", {"argv": ["true"], "limits": limits})
            assert r.status == 400 and "limits." in r.json()["error"], (limits, r.body)
        body = json.dumps({"argv": ["true"]}).encode()
        chunked = http(d.sock, b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked"
                       b"\r\nConnection: close\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        assert chunked.split(b" ", 2)[1] in (b"201", b"400", b"411"), chunked[:200]
        # a body cut short, then the client gone (a half-close is held to
        # the connection's timeout, 30 s: not waited for here)
        http(d.sock, b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n" + body,
             read=False)
        smuggled = b"POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}" \
                   b"DELETE /v1/runs/r-0 HTTP/1.1\r\nHost: x\r\n\r\n"
        answers = http(d.sock, smuggled)
        assert answers.count(b"HTTP/1.1 4") == answers.count(b"HTTP/1.1 "), answers
        runs = d.raw("GET", "/runs").json()["runs"]
        made = 1 if chunked.split(b" ", 2)[1] == b"201" else 0
        assert len(runs) == made, runs
        assert d.raw("GET", "/version").status == 200
    finally:
        stop_and_check(d)


def test_images_and_task_ids_make_nothing_outside_the_state(serve_dir):
    """Image names and task ids with '/', '..', a leading '-' and a
    newline: refused, or the run fails naming the image; nothing is made
    outside the state dir (a sentinel dir beside it stays empty)."""
    beside = serve_dir / "beside"
    beside.mkdir()
    d = Daemon()
    try:
        for image in ("../../beside/x", "/etc", "-x", "a/b", "x\ny"):
            r = d.raw("POST", "/runs", {"argv": ["true"], "image": image})
            if r.status == 201:
                run = wait(d, r.json()["id"])
                assert run["state"] == "finished" and run["exit_code"] != 0, (image, run)
            else:
                assert r.status == 400 and "\n" not in r.json()["error"], (image, r.body)
        for task in ("../../beside/t", "-o/tmp/x", "a\nb"):
            r = d.raw("POST", "/runs", {"argv": ["true"], "task_id": task})
            if r.status == 201:
                assert wait(d, r.json()["id"])["status"] == "ok"
        assert os.listdir(beside) == []
    finally:
        stop_and_check(d)


# ---- the daemon's own state

def restart_on_damaged(serve_dir, sock_path, damage):
    """Three runs of 'runs 3/1h' used; the daemon stopped; damage(state)
    cuts a state file; then a new daemon on the state.  What a user then
    sees: ('refused to start', its stderr) or ('started', status of a 4th
    submit, the listed runs)."""
    conf = config(serve_dir, ["quota runs 3/1h"])
    state = str(serve_dir / "state")
    argv = lambda _s, uids: [VIGIL, "serve", "--state", state, "--config", conf,
                             "--uid-range", uids, "--listen", "unix:" + sock_path]
    d = Daemon(argv_of=argv, sock=sock_path)
    try:
        ids = [submit(d, {"argv": ["true"]}) for _ in range(3)]
        for rid in ids:
            wait(d, rid)
    finally:
        stop_and_check(d)
    damage(state, ids)
    try:
        d = Daemon(argv_of=argv, sock=sock_path)
    except AssertionError as e:
        return ("refused to start", str(e))
    try:
        r = d.raw("POST", "/runs", {"argv": ["true"]})
        listed = [x["id"] for x in d.raw("GET", "/runs").json()["runs"]]
        return ("started", r.status, sorted(listed) == sorted(ids))
    finally:
        stop_and_check(d)


def cut_half(path):
    with open(path, "r+b") as f:
        f.truncate(os.path.getsize(path) // 2)


def refused_clearly(got, name):
    return got[0] == "refused to start" and name in got[1] and "vigil serve" in got[1]


def test_a_cut_usage_file_neither_loses_charges_nor_starts_silently(serve_dir, sock_path):
    got = restart_on_damaged(serve_dir, sock_path, lambda state, ids: cut_half(
        os.path.join(state, "users", "0", "usage.json")))
    assert refused_clearly(got, "usage.json") or got[1] == 429, got


def test_a_cut_run_record_neither_loses_the_run_nor_starts_silently(serve_dir, sock_path):
    got = restart_on_damaged(serve_dir, sock_path, lambda state, ids: cut_half(
        os.path.join(state, "runs", "0", ids[0], "run.json")))
    assert refused_clearly(got, "run.json") or got == ("started", 429, True), got


def test_sigkill_while_submits_are_in_flight_keeps_every_201(serve_dir, sock_path):
    """Six clients submitting while the daemon is SIGKILLed: after a
    restart every run a client got 201 for is listed, and every listed
    run is charged (charges are saved before records)."""
    state = str(serve_dir / "state")
    conf = config(serve_dir, ["quota concurrent 100 runs 10000/1h"])
    argv = lambda _s, uids: [VIGIL, "serve", "--state", state, "--config", conf,
                             "--uid-range", uids, "--listen", "unix:" + sock_path]
    d = Daemon(argv_of=argv, sock=sock_path)
    got = []

    def client(_):
        mine = []
        for _ in range(40):
            try:
                r = d.raw("POST", "/runs", {"argv": ["true"]})
            except OSError:
                break
            if r.status == 201:
                mine.append(r.json()["id"])
        return mine
    with concurrent.futures.ThreadPoolExecutor(6) as ex:
        jobs = [ex.submit(client, i) for i in range(6)]
        runs0 = os.path.join(state, "runs", "0")
        deadline = time.monotonic() + 20   # killed once some runs are made, mid-stream
        while time.monotonic() < deadline and (
                not os.path.isdir(runs0) or len(os.listdir(runs0)) < 10):
            time.sleep(0.01)
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        d.err.close()
        for j in jobs:
            got += j.result()
    left = d.left()
    d.remove()
    assert left["processes"] == [], left
    assert len(got) >= 5, "too few submits answered before the kill: %d" % len(got)
    d = Daemon(argv_of=argv, sock=sock_path)
    try:
        listed = {x["id"] for x in d.raw("GET", "/runs").json()["runs"]}
        assert set(got) <= listed, set(got) - listed
        with open(os.path.join(state, "users", "0", "usage.json")) as f:
            charged = {c["id"] for c in json.load(f)["charges"]}
        assert listed <= charged, listed - charged
    finally:
        stop_and_check(d)


def test_a_queued_runs_policy_cannot_gain_a_bind(serve_dir, sock_path):
    """A user's own policy file, included, holds no bind at submit; the
    run waits in the queue (one worker, busy); the user rewrites the file
    to bind a host dir and the run, once started, reads it."""
    mine = serve_dir / "mine"
    mine.mkdir()
    pol = mine / "p.policy"
    pol.write_text("version 1\n")
    os.chown(mine, ATTACKER, ATTACKER)
    os.chown(pol, ATTACKER, ATTACKER)
    host = serve_dir / "host-only"
    host.mkdir()
    (host / "f").write_text("HOST-ONLY-5e1\n")
    d = Daemon("--workers", "1", "--listen", "unix:" + sock_path)
    try:
        status, hold = as_uid(ATTACKER, sock_path, "POST", "/runs", {"argv": ["sleep", "30"]})
        assert status == 201, hold
        text = "version 1\ninclude\r%s\nallow read /h7/**\ninclude <default>\n" % pol
        status, run = as_uid(ATTACKER, sock_path, "POST", "/runs",
                             {"argv": ["cat", "/h7/f"], "policy_text": text})
        if status != 201:
            return   # refused at submit: what the fix does
        pol.write_text("version 1\nbind %s /h7\n" % host)
        as_uid(ATTACKER, sock_path, "POST", "/runs/%s/cancel" % hold["id"], {})
        deadline = time.monotonic() + WAIT_S
        while run["state"] in ("queued", "running") and time.monotonic() < deadline:
            run = as_uid(ATTACKER, sock_path, "GET", "/runs/%s?wait=5" % run["id"])[1]
        out = as_uid(ATTACKER, sock_path, "GET", "/runs/%s/stdout" % run["id"])[1]
        assert "HOST-ONLY-5e1" not in str(out), out
    finally:
        stop_and_check(d)
