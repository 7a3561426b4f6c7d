"""vigil run --host-uid UID (issue 26): each run's candidate is a host user
of its own, so two runs are two users to the kernel.  Seen from the
outside: the candidate's process and files carry the uid; a process with
one run's uid can neither signal nor ptrace nor read the /proc of the
other's; the per-user inotify count of one run does not starve the other;
and vigil refuses a uid that is root's, the system's, an account's or a
live process's, or any from a caller who is not root."""
import ctypes
import json
import os
import random
import signal
import subprocess
import time

import msgpack
import pytest

from helpers import Listener, nobody_caller, root_caller  # noqa: F401
from outside import outside, pasta_pids, ppid  # noqa: F401

# Far above any account's uid, as vigil serve's range is (docs/SERVE.md).
UID_BASE = 2_000_000_000
UID_SPAN = 100_000_000
WAIT_S = 60
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def ids_in_use():
    used = set()
    for d in os.listdir("/proc"):
        try:
            with open(f"/proc/{d}/status") as f:
                for line in f:
                    if line.startswith(("Uid:", "Gid:")):
                        used.update(int(x) for x in line.split()[1:])
        except (OSError, ValueError):
            pass
    return used


def free_uids(n):
    used = ids_in_use()
    out = []
    while len(out) < n:
        u = UID_BASE + random.randrange(UID_SPAN)
        if u not in used and u not in out:
            out.append(u)
    return out


def status_ids(pid):
    """{"Uid": [r, e, s, fs], "Gid": [...]} of a host process."""
    with open(f"/proc/{pid}/status") as f:
        return {k: [int(x) for x in v.split()]
                for k, v in (line.split(":", 1) for line in f) if k in ("Uid", "Gid")}


def pids_of(uid):
    """Host processes whose real uid is uid (the candidate, and its children)."""
    out = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if status_ids(d)["Uid"][0] == uid:
                    out.append(int(d))
            except (OSError, KeyError):
                pass
    return out


def wait_file(path, procs):
    end = time.monotonic() + WAIT_S
    while not os.path.exists(path):
        for p in procs:
            assert p.poll() is None, (path, p.returncode, p.stderr.read())
        assert time.monotonic() < end, f"{path} never came"
        time.sleep(0.02)
    with open(path) as f:
        return f.read()


def shared_dir(c, name):
    d = c.dir(name)
    os.chmod(d, 0o777)
    return d


def start(c, uid, shared, cand, name, extra=()):
    args = ["run", "-q", "--host-uid", str(uid), "--bind-rw", f"{shared}:/tmp/shared", *extra,
            "--", "python3", c.cand(cand), "/tmp/shared", name]
    return c.popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(procs, shared):
    with open(os.path.join(shared, "done"), "w"):
        pass
    for p in procs:
        out, err = p.communicate(timeout=WAIT_S)
        assert p.returncode == 0, (p.returncode, out, err)


# What a host process running as uid does to pid: kill(pid, 0), reading
# /proc/pid/environ, and (when asked) PTRACE_ATTACH, each "ok" or its errno.
AS_UID = """
import ctypes, errno, json, os, sys
pid, trace = int(sys.argv[1]), sys.argv[2] == "1"
def outcome(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode[e.errno]
libc = ctypes.CDLL(None, use_errno=True)
def ptrace():
    if libc.ptrace(%d, pid, None, None) != 0:
        raise OSError(ctypes.get_errno(), "ptrace")
    libc.ptrace(%d, pid, None, None)
got = {"kill": outcome(lambda: os.kill(pid, 0)),
       "environ": outcome(lambda: open(f"/proc/{pid}/environ").read())}
if trace:
    got["ptrace"] = outcome(ptrace)
print(json.dumps(got))
""" % (PTRACE_ATTACH, PTRACE_DETACH)


def as_uid(uid, pid, trace):
    p = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                        "/usr/bin/python3", "-c", AS_UID, str(pid), "1" if trace else "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=WAIT_S)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_two_runs_are_two_users_of_the_host(root_caller):
    c = root_caller
    uids = free_uids(2)
    shared = shared_dir(c, "shared")
    works = [shared_dir(c, "work") for _ in uids]
    names = ["a", "b"]
    procs = [start(c, u, shared, "hostuid_peer.py", n, ["--workdir", w])
             for u, n, w in zip(uids, names, works)]
    try:
        for n in names:
            wait_file(os.path.join(shared, n + ".ready"), procs)
        host = {}
        for u, n in zip(uids, names):
            pids = pids_of(u)
            assert len(pids) == 1, (u, pids)
            host[n] = pids[0]
            # ps and /proc show the run's own uid and gid, all four of each
            assert status_ids(host[n]) == {"Uid": [u] * 4, "Gid": [u] * 4}
            ps = subprocess.run(["ps", "-o", "uid=,gid=", "-p", str(host[n])],
                                stdout=subprocess.PIPE, text=True, check=True)
            assert ps.stdout.split() == [str(u), str(u)]
        # From a host process of one run's uid, the other run's candidate
        # is another user's: no signal, no /proc beyond what is public, no
        # ptrace.  The same attempts by its own uid go through (the
        # attempts can succeed: uid is what stops them).
        for (u, n), other in zip(zip(uids, names), reversed(names)):
            assert as_uid(u, host[other], trace=True) == \
                {"kill": "EPERM", "environ": "EACCES", "ptrace": "EPERM"}, (n, other)
            assert as_uid(u, host[n], trace=False) == {"kill": "ok", "environ": "ok"}
        # From inside, the other candidate is not even there to be named.
        for n, other in zip(names, reversed(names)):
            # whole or not there: the candidate reads it once it exists
            peer = os.path.join(shared, n + ".peer")
            with open(peer + ".tmp", "w") as f:
                f.write(str(host[other]))
            os.rename(peer + ".tmp", peer)
        for n in names:
            tried = json.loads(wait_file(os.path.join(shared, n + ".tried"), procs))
            # no such process in its pid namespace; its /proc is not there, or
            # the policy refuses it; ptrace is the baseline's refusal
            assert tried["kill"] == "ESRCH" and tried["ptrace"] == "EPERM", (n, tried)
            assert tried["proc"] in ("ENOENT", "EACCES"), (n, tried)
    finally:
        finish(procs, shared)
    # the file each candidate wrote in its --workdir is its uid's on the host
    for u, n, w in zip(uids, names, works):
        st = os.stat(os.path.join(w, "mine"))
        assert (st.st_uid, st.st_gid) == (u, u), (n, st)


def test_one_run_taking_every_inotify_instance_leaves_the_others(root_caller):
    """fs.inotify.max_user_instances is a per-user count; the sandbox's user
    namespace is the run's uid's, so each run has the whole count (without
    --host-uid every root-started run shares root's)."""
    c = root_caller
    with open("/proc/sys/fs/inotify/max_user_instances") as f:
        cap = int(f.read())
    uids = free_uids(2)
    shared = shared_dir(c, "ino")
    first = start(c, uids[0], shared, "inotify_hog.py", "a")
    procs = [first]
    try:
        got_a = wait_file(os.path.join(shared, "a.count"), procs)
        procs.append(start(c, uids[1], shared, "inotify_hog.py", "b"))
        got_b = wait_file(os.path.join(shared, "b.count"), procs)   # while a holds its own
    finally:
        finish(procs, shared)
    assert got_a == f"{cap} Too many open files", got_a
    assert got_b == f"{cap} Too many open files", got_b


def test_the_log_and_the_result_name_the_host_uid(root_caller):
    uid, = free_uids(1)
    r = root_caller.run("true", opts=["--host-uid", str(uid)])
    assert r.rc == 0, r
    assert r.result["host_uid"] == uid
    assert r.recs[0]["type"] == "header" and r.recs[0]["host_uid"] == uid
    plain = root_caller.run("true")
    assert plain.result["host_uid"] == 65534 and plain.recs[0]["host_uid"] == 65534


def refused(c, uid, *opts):
    tmp = c.dir("refused")
    log, result = os.path.join(tmp, "l.msgpack"), os.path.join(tmp, "r.json")
    p = c.vigil_raw("run", "-q", "-o", log, "--result", result, "--host-uid", uid, *opts,
                    "--", "true")
    assert p.returncode == 125, p
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and "--host-uid" in lines[0], p.stderr
    assert not os.path.exists(log)     # nothing left behind but the error record
    with open(result) as f:
        rec = json.load(f)
    assert rec["status"] == "error" and rec["error"] in lines[0], (rec, lines)
    return lines[0]


def test_a_host_uid_that_is_not_the_runs_own_is_refused(root_caller, nobody_caller):
    assert "not a number" in refused(root_caller, "12ab")
    assert "is root" in refused(root_caller, "0")
    assert "outside 1000.." in refused(root_caller, "999")
    assert "outside" in refused(root_caller, "4294967295")
    assert "user nobody's" in refused(root_caller, "65534")
    uid, = free_uids(1)
    live = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                             "sleep", "30"])
    try:
        deadline = time.monotonic() + WAIT_S
        while not pids_of(uid):
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert f"in use by process {live.pid}" in refused(root_caller, str(uid))
    finally:
        live.kill()
        live.wait()
    assert "needs vigil to run as root" in refused(nobody_caller, str(uid))


def test_a_run_with_a_host_uid_has_its_way_out_and_takes_pasta_along(root_caller, outside):
    """pasta, the relay beyond the sandbox, enters a namespace the run's
    uid owns (vigil hands it the namespaces, opened as root): the allowed
    address is reached and the other is not, as without --host-uid; and a
    vigil killed with SIGKILL takes its pasta along (pasta stays uid 0, so
    keeps its parent-death signal), leaving no process of the run's uid."""
    uid, = free_uids(1)
    ok, other, tok = Listener(outside), Listener(outside), "vigil-hostuid-" + str(uid)
    pol = os.path.join(root_caller.dir("pol"), "out.policy")
    with open(pol, "w") as f:
        f.write(f"version 1\nallow connect tcp {outside.addr}:{ok.port}\n"
                "env set PYTHONUNBUFFERED=1\ninclude <default>\n")
    os.chmod(pol, 0o644)
    steps = [f"connect:{outside.addr}:{ok.port}:{tok}", f"connect:{outside.addr}:{other.port}:{tok}",
             "sleep:30"]
    before = set(pasta_pids())
    p = root_caller.popen(["run", "-q", "--host-uid", str(uid), "-p", pol, "--", "python3",
                           root_caller.cand("netns_probe.py"), *steps],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = [p.stdout.readline().strip() for _ in steps[:2]]
        got = ok.data(want=1)
        # pasta under its keeper, vigil's child (net/egress.c)
        mine = [c for c in set(pasta_pids()) - before if ppid(ppid(c)) == p.pid]
        assert pids_of(uid), "the candidate runs as the run's uid"
    finally:
        p.kill()
        p.wait()
        ok.close()
        other.close()
    assert lines[0] == f"connect {outside.addr} {ok.port} ok", (lines, p.stderr.read())
    assert lines[1].endswith("errno 111"), lines
    assert got == [tok.encode()] and other.accepted == [], got
    assert len(mine) == 1, mine
    deadline = time.monotonic() + WAIT_S
    while (os.path.exists(f"/proc/{mine[0]}") or pids_of(uid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{mine[0]}") and pids_of(uid) == []


def test_pasta_killed_under_its_keeper_is_noted_and_the_run_has_no_way_out(root_caller, outside):
    """With --host-uid pasta runs under its keeper (net/egress.c): pasta
    killed mid-run ends the keeper too, which vigil sees as pasta's end
    (the log's network note), the next connect has no route, and the
    keeper's namespace leaves nothing behind."""
    uid, = free_uids(1)
    ok, tok = Listener(outside), "vigil-keeper-" + str(uid)
    pol = os.path.join(root_caller.dir("pol"), "out.policy")
    with open(pol, "w") as f:
        f.write(f"version 1\nallow connect tcp {outside.addr}:{ok.port}\n"
                "env set PYTHONUNBUFFERED=1\ninclude <default>\n")
    os.chmod(pol, 0o644)
    step = f"connect:{outside.addr}:{ok.port}:{tok}"
    log = os.path.join(root_caller.dir("run"), "run.msgpack")
    before = set(pasta_pids())
    p = root_caller.popen(["run", "-q", "--host-uid", str(uid), "-o", log, "-p", pol, "--",
                           "python3", root_caller.cand("netns_probe.py"), step, "sleep:2", step],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = p.stdout.readline()
        mine = [c for c in set(pasta_pids()) - before if ppid(ppid(c)) == p.pid]
        assert first.strip().endswith(" ok") and len(mine) == 1, (first, mine)
        keeper = ppid(mine[0])
        os.kill(mine[0], signal.SIGKILL)
        out, err = p.communicate(timeout=WAIT_S)
    finally:
        ok.close()
    assert p.returncode == 0, (out, err)
    assert not out.strip().endswith(" ok"), out      # the second connect had no route
    assert len(ok.accepted) == 1
    with open(log, "rb") as f:
        notes = [r["detail"] for r in msgpack.Unpacker(f, raw=False)
                 if r.get("type") == "note" and r.get("what") == "network"]
    assert [n for n in notes if n.startswith("pasta (the sandbox's egress) ended")], notes
    assert not os.path.exists(f"/proc/{keeper}") and pids_of(uid) == []
