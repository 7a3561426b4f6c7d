"""Paths judged by the object they name, not by their spelling (issue 8,
items 3-5): multi-threaded C candidates that know how vigil works reach
for a file the policy denies through /proc's magic links, by renaming or
linking it (or a directory above it) to a more permissive name, and by
lookups that do not open it (readlink, xattrs, the stat family).  Judged
from outside (a per-run token in the denied file never shows, the host
file under --workdir never changes) and from the log (every attempt has
its refused record).  Each test runs as root and as nobody."""
import os
import re
import secrets

import msgpack
import pytest

from helpers import (STORM_OPTS, NOBODY, caller, nobody_caller, root_caller, sha256_file,  # noqa: F401
                     syscalls)

ROUNDS = 200         # per thread: thousands of attempts in all, a few seconds

# The attacker's ally: /proc readable as a whole, as policies often allow.
BASE_RULES = """\
allow read /usr/** /etc/** /proc/** /dev/** /tmp/** $WORK/**
allow write $WORK/** $TMP/**
allow exec /usr/**
default deny
"""


def chown_tree(top):
    """The sandbox runs as host uid NOBODY (also under root): let it write
    the workdir, so that only the policy can refuse."""
    for d, dirs, files in os.walk(top):
        for name in [d] + [os.path.join(d, f) for f in dirs + files]:
            os.lchown(name, NOBODY, NOBODY)


def workdir(caller, files):
    """A --workdir holding files {relpath: text}; returns its path."""
    top = caller.dir("work")
    for rel, text in files.items():
        path = os.path.join(top, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
        os.chmod(path, 0o666)
    chown_tree(top)
    return top


def policy(caller, head):
    d = caller.dir("policy")
    path = os.path.join(d, "p.policy")
    with open(path, "w") as f:
        f.write("version 1\n" + head + BASE_RULES)
    os.chmod(path, 0o644)
    return path


def attempts(stdout):
    """{spelling: [result, ...]} from the candidates' "WHAT: RESULT" lines."""
    out = {}
    for line in stdout.splitlines():
        m = re.match(r"(.*?): (ok.*|errno \d+)$", line)
        if m:
            out.setdefault(m.group(1), []).append(m.group(2))
    return out


def slim_recs(run):
    """The run's syscall records with only what these tests look at, read
    one at a time: the full records (stacks included) of thousands of
    refusals would grow this process, and every later test's children
    start as a copy of it (test_output_flood_keeps_vigil_small measures
    that)."""
    keep_args = ("path", "resolved", "path2", "resolved2")
    out = []
    with open(run.log_path, "rb") as f:
        up = msgpack.Unpacker(f, raw=False)
        try:
            for r in up:
                if r.get("type") != "syscall":
                    continue
                args = {k: v for k, v in r.get("args", {}).items() if k in keep_args}
                out.append({"type": "syscall", "name": r["name"], "decision": r["decision"],
                            "args": args, "rule": r.get("rule"), "default": r.get("default")})
        except (msgpack.exceptions.OutOfData, ValueError):
            pass
    return out


def why(rec):
    """The reason a record gives: its rule's text, or vigil's own words."""
    return (rec.get("rule") or {}).get("text") or rec.get("default")


def run_magic(caller, mode, pol, work, *args, opts=()):
    exe = caller.build("attack_paths_magic")
    return caller.run(exe, mode, *args, str(ROUNDS),
                      opts=[*STORM_OPTS, "-p", pol, "--workdir", work, *opts], cwd=work)


def magic_on_secret(caller, mode, opts=()):
    """attack_paths_magic MODE on $WORK/secret/token.txt, denied for
    reading; the token never shows."""
    token = secrets.token_hex(16)
    work = workdir(caller, {"secret/token.txt": token + "\n"})
    pol = policy(caller, "deny read $WORK/secret/**\n")
    r = run_magic(caller, mode, pol, work, "secret", "token.txt", opts=opts)
    assert r.rc == 0, r
    assert token not in r.stdout and token not in r.stderr
    return r, work, slim_recs(r)


def test_magic_links_do_not_reach_a_denied_file(caller):
    r, work, recs = magic_on_secret(caller, "read")
    tried = attempts(r.stdout)
    assert len(tried) == 14, r
    secret = os.path.join(work, "secret", "token.txt")
    for spelling, results in tried.items():
        assert results == ["errno 13"] * (4 * ROUNDS), (spelling, results[:3])
        got = syscalls(recs, name="openat", path=spelling)
        assert len(got) == 4 * ROUNDS, spelling
        # judged as the file the kernel opens, by the rule that denies it
        assert {(x["args"]["resolved"], x["decision"], why(x)) for x in got} == \
            {(secret, "deny", "deny read $WORK/secret/**")}, spelling


def test_magic_links_do_not_write_a_denied_file(caller):
    work = workdir(caller, {"keep.txt": "original\n"})
    keep = os.path.join(work, "keep.txt")
    before = sha256_file(keep)
    pol = policy(caller, "deny write $WORK/keep.txt\n")
    r = run_magic(caller, "write", pol, work, "keep.txt")
    assert r.rc == 0, r
    recs = slim_recs(r)
    assert sha256_file(keep) == before
    tried = attempts(r.stdout)
    assert len(tried) == 14, r
    for spelling, results in tried.items():
        assert set(results) == {"errno 13"}, spelling
        got = syscalls(recs, name="openat", path=spelling)
        assert len(got) == 4 * ROUNDS and {x["decision"] for x in got} == {"deny"}, spelling
        assert {x["args"]["resolved"] for x in got} == {keep}, spelling


@pytest.mark.parametrize("mode", ["enforce", "dry-run"])
def test_links_to_nothing_are_refused_as_unresolvable(caller, mode):
    """Refused in --dry-run too: no rule can judge them."""
    r, _, recs = magic_on_secret(caller, "unresolvable", opts=["--mode", mode])
    tried = attempts(r.stdout)
    controls = {"/proc/self/status", "/proc/cpuinfo"}
    assert len(tried) == 9 and controls <= set(tried), r
    for spelling, results in tried.items():
        got = syscalls(recs, name="openat", path=spelling)
        assert len(got) == 4 * ROUNDS, spelling
        if spelling in controls:
            # not magic: /proc/** still allows them
            assert all(x.startswith("ok") for x in results), spelling
            assert {x["decision"] for x in got} == {"allow"}, spelling
            continue
        assert set(results) == {"errno 13"}, (spelling, results[:3])
        assert {(x["decision"], why(x)) for x in got} == \
            {("deny", "unresolvable path")}, spelling
        assert all(x["args"]["resolved"].startswith("(unresolvable:") for x in got), spelling


def test_renames_and_links_do_not_free_a_denied_file(caller):
    token = secrets.token_hex(16)
    work = workdir(caller, {"data/private/token.txt": token + "\n"})
    secret = os.path.join(work, "data", "private", "token.txt")
    before = sha256_file(secret)
    pol = policy(caller, "deny read $WORK/data/private/**\n")
    exe = caller.build("attack_paths_move")
    r = caller.run(exe, str(ROUNDS), opts=[*STORM_OPTS, "-p", pol, "--workdir", work], cwd=work)
    assert r.rc == 0, r
    recs = slim_recs(r)
    assert token not in r.stdout and "read " not in r.stdout
    assert sha256_file(secret) == before
    assert sorted(os.listdir(work)) == ["data", "other-0", "other-1", "other-2", "plain2"]
    tried = attempts(r.stdout)
    assert tried.pop("rename plain plain2") == ["ok"]   # a plain move still works
    assert len(tried) == 4 * 3 + 3, sorted(tried)
    for what, results in tried.items():
        assert set(results) == {"errno 13"}, (what, results[:3])
    # libc makes link() a linkat, and renameat2 without flags a renameat
    moved = [x for x in recs if x["type"] == "syscall" and x["name"] in
             ("rename", "renameat", "renameat2", "link", "linkat")
             and "plain" not in x["args"].get("path", "")]
    assert len(moved) == 3 * (4 + 3) * ROUNDS
    assert {x["decision"] for x in moved} == {"deny"}
    # every refusal of a rename that the write rules alone allow names why
    moves = [x for x in moved if x["name"].startswith("rename")]
    assert len(moves) == 3 * 4 * ROUNDS
    assert all(why(x).startswith("new name decided more leniently than")
               for x in moves)


@pytest.mark.parametrize("lookups", [False, True], ids=["lookups-off", "lookups-on"])
def test_lookups_do_not_leak_a_denied_file(caller, lookups):
    token = secrets.token_hex(16)
    work = workdir(caller, {"secret/token.txt": token + "\n"})
    os.symlink("/" + token + "-link", os.path.join(work, "secret", "link"))
    os.lchown(os.path.join(work, "secret", "link"), NOBODY, NOBODY)
    os.setxattr(os.path.join(work, "secret", "token.txt"), "user.tok", (token + "-x").encode())
    pol = policy(caller, "deny read $WORK/secret/**\n" + ("audit lookups\n" if lookups else ""))
    exe = caller.build("attack_paths_lookup")
    r = caller.run(exe, "secret", str(ROUNDS), opts=[*STORM_OPTS, "-p", pol, "--workdir", work], cwd=work)
    assert r.rc == 0, r
    recs = slim_recs(r)
    assert token not in r.stdout, r
    tried = attempts(r.stdout)
    always = ["readlink", "readlinkat", "getxattr", "lgetxattr", "listxattr", "llistxattr",
              "fgetxattr", "flistxattr"]
    stats = ["stat", "lstat", "statx", "access", "faccessat2"]
    file = os.path.join(work, "secret", "token.txt")
    for what, results in tried.items():
        call = what.split()[0]
        if call in always or (lookups and call in stats):
            assert set(results) == {"errno 13"}, (what, results[:3])
        else:
            assert set(results) == {"ok "}, (what, results[:3])
    for call in always:
        got = [x for x in syscalls(recs, name=call)
                if x["args"]["resolved"].startswith(os.path.join(work, "secret"))]
        assert len(got) == 3 * ROUNDS and {x["decision"] for x in got} == {"deny"}, call
    stat_recs = syscalls(recs, name="newfstatat", resolved=file)
    if lookups:
        # stat and lstat both become newfstatat
        assert len(stat_recs) == 2 * 3 * ROUNDS
        assert {x["decision"] for x in stat_recs} == {"deny"}
        assert syscalls(recs, name="statx", resolved=file)
        assert syscalls(recs, name="getdents64")        # the listing is recorded too
    else:
        assert stat_recs == [] and not syscalls(recs, name="getdents64")
    # fstat on an open fd is decided at its open: never a record
    assert not [x for x in syscalls(recs, name="newfstatat") if x["args"].get("path") == ""]


def test_unix_sockets_through_magic_links_are_unresolvable(caller):
    pol = policy(caller, "allow connect unix /**\n")
    with open(caller.cand("attack_paths_unix.py")) as f:
        work = workdir(caller, {"cand.py": f.read()})
    r = caller.run("python3", "cand.py", opts=[*STORM_OPTS, "-p", pol, "--workdir", work], cwd=work)
    assert r.rc == 0, r
    tried = attempts(r.stdout)
    assert len(tried) == 2 and all(v == ["errno 111"] for v in tried.values()), r
    conns = syscalls(slim_recs(r), name="connect")
    assert len(conns) == 2
    assert {(x["decision"], why(x)) for x in conns} == {("deny", "unresolvable path")}
