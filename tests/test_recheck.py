"""`vigil recheck` (issue 25): the decisions a log records, made again under
another policy, checked against running the candidates again under it.

Three candidates (Python, C, shell: tests/candidates/recheck_task.*) make
the same calls whatever each is answered.  Each is run as a dry run under
`observe` (A: everything allowed and recorded), then again as a dry run
under a stricter policy (B).  `vigil recheck -p B` of A's log must give,
for every call both logs have (by class, call, resolved path or address),
exactly the decision B's own run recorded, and the exec check's verdicts on
the images both ran; a log rechecked under its own policy changes nothing.
Under both engines.  A run on an image is rechecked in that image's
trees.  Then an enforcing log (what changes after a changed
answer is said, not guessed), a run whose policy did not audit reads, a
`vigil batch` directory (its table, --json, a task with no log), and bad
input: each a one-line error, exit 2."""
import json
import os
import shutil

import pytest

from helpers import decode_log, root_caller  # noqa: F401

PORT = "9"  # nothing listens on the sandbox's own loopback: refused either way
STRICT = ("version 1\n"
          "deny read /etc/hostname\n"
          "deny write $WORK/out/**\n"
          "deny connect tcp 127.0.0.1:*\n"
          "kill exec /usr/bin/cat\n"
          "include <%s>\n")
LANGS = {"python": "python", "c": "c", "shell": "shell"}


def command(caller, lang):
    if lang == "python":
        return ["python3", caller.cand("recheck_task.py"), PORT]
    if lang == "c":
        return [caller.build("recheck_task"), PORT]
    return ["sh", caller.cand("recheck_task.sh")]


def write(caller, name, text):
    path = os.path.join(caller.dir("pol"), name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return path


def strict(caller, lang):
    return write(caller, "strict.policy", STRICT % LANGS[lang])


def recheck(caller, *args):
    return caller.vigil_raw("recheck", *args)


def recheck_json(caller, policy, *what):
    p = recheck(caller, "-p", policy, "--json", *what)
    assert p.returncode in (0, 1), p.stderr
    objs = [json.loads(line) for line in p.stdout.splitlines()]
    assert objs and objs[-1]["type"] == "summary", p.stdout
    return p, objs[:-1], objs[-1]


def key(r):
    """What a call is about, whoever makes it, whenever."""
    a = r.get("args", {})
    target = a.get("exe") or a.get("resolved") or "%s %s:%s" % (a.get("proto"), a.get("addr"),
                                                               a.get("port"))
    return (r["class"], r["name"], target, a.get("resolved2"))


def decisions(recs, new=None):
    """{call: {decisions}} over the syscall records; new: seq -> the
    decision recheck gives the record instead."""
    out = {}
    for r in recs:
        if r["type"] == "syscall":
            out.setdefault(key(r), set()).add((new or {}).get(r["seq"], r["decision"]))
    return out


def images(recs):
    return {r["exe"] for r in recs if r["type"] == "proc" and r["kind"] == "exec" and r.get("exe")}


def checked_out(recs):
    """The images the run's exec check would have killed."""
    return {r["detail"].split()[2] for r in recs if r["type"] == "note" and
            r["what"] in ("kill", "would-kill") and r["detail"].startswith("exec check:")}


def new_decisions(run, kind):
    return {c["seq"]: c["new"]["decision"] for c in run["changes"] if c["kind"] == kind}


def dry(caller, lang, engine, policy, *opts):
    r = caller.run(*command(caller, lang), opts=("--engine", engine, "--dry-run", "-p", policy,
                                                  *opts))
    assert r.rc == 0 and "done" in r.stdout, r
    return r


@pytest.mark.parametrize("engine", ["notify", "ptrace"])
@pytest.mark.parametrize("lang", sorted(LANGS))
def test_recheck_is_what_running_again_gives(root_caller, lang, engine):  # noqa: F811
    c = root_caller
    b_policy = strict(c, lang)
    a = dry(c, lang, engine, "observe", *(["--py-frames", "all"] if lang == "python" else []))
    b = dry(c, lang, engine, b_policy)
    p, runs, summary = recheck_json(c, b_policy, a.log_path)
    assert p.returncode == 1 and len(runs) == 1 and summary["changed_runs"] == 1, p.stdout
    run = runs[0]
    assert run["mode"] == "dry-run" and run["complete"], run

    # call by call, on every call both runs made
    predicted = decisions(a.recs, new_decisions(run, "call"))
    real = decisions(b.recs)
    common = set(predicted) & set(real)
    differ = {k: (predicted[k], real[k]) for k in common if predicted[k] != real[k]}
    assert not differ, differ
    # and what changed is what the new policy is about, none of it missed
    was = decisions(a.recs)
    changed = {k for k in common if was[k] != real[k]}
    assert ("read", "openat", "/etc/hostname", None) in changed, changed
    assert ("write", "mkdir", "/tmp/work/out", None) in changed, changed
    assert ("exec", "execve", "/usr/bin/cat", None) in changed, changed
    if lang != "shell":
        assert ("connect", "connect", "tcp 127.0.0.1:%s" % PORT, None) in changed, changed
    assert real[("exec", "execve", "/usr/bin/cat", None)] == {"would-kill"}

    # the exec check, on every image both runs ran
    both = images(a.recs) & images(b.recs)
    killed = checked_out(a.recs)  # A's verdicts, where recheck gives no other
    for ch in run["changes"]:
        if ch["kind"] == "exec-check":
            (killed.discard if ch["new"]["decision"] == "allow" else killed.add)(ch["target"])
    assert killed & both == checked_out(b.recs) & both, (killed, checked_out(b.recs))
    assert "/usr/bin/cat" in killed
    assert not run["passes"] and run["verdict"].startswith("would be killed at"), run
    assert "exec /usr/bin/cat" in run["verdict"], run
    first = min(ch["seq"] for ch in run["changes"] if not ch["probe"])
    assert run["first_refused_seq"] == first and run["diverges_seq"] is None, run

    # the rule that decides now, and the candidate's line (the A run kept
    # every call's Python stack)
    host = [ch for ch in run["changes"] if ch["target"] == "/etc/hostname"][0]
    assert host["new"]["rule"]["line"] == 2 and host["new"]["rule"]["text"] == \
        "deny read /etc/hostname", host
    if lang == "python":
        with open(c.cand("recheck_task.py")) as f:
            line = [i for i, t in enumerate(f, 1) if '"/etc/hostname"' in t and "attempt" in t][0]
        assert host["source"] == "recheck_task.py:%d in <lambda>" % line, host

    # a log rechecked under its own policy: nothing changes
    for log, policy in ((a.log_path, "observe"), (b.log_path, b_policy)):
        p = recheck(c, "-p", policy, log)
        assert p.returncode == 0 and " 0 differ" in p.stdout, p.stdout + p.stderr


def test_an_enforcing_log_says_where_it_stops_knowing(root_caller):  # noqa: F811
    c = root_caller
    b_policy = strict(c, "python")
    r = c.run(*command(c, "python"), opts=("-p", b_policy))
    assert "hostname Permission denied" in r.stdout, r
    p, (run,), _ = recheck_json(c, "observe", r.log_path)
    assert p.returncode == 1 and run["mode"] == "enforce", p.stdout
    host = [ch for ch in run["changes"] if ch["target"] == "/etc/hostname"][0]
    assert (host["old"]["decision"], host["new"]["decision"]) == ("deny", "allow"), host
    assert host["old"]["rule"]["line"] == 2 and host["source"], host  # a refusal has its stack
    assert run["to_allowed"] >= 1 and run["passes"], run
    first = min(ch["seq"] for ch in run["changes"] if not ch["probe"])
    assert run["diverges_seq"] == first, run
    assert any("after the old answer" in u for u in run["unknown"]), run["unknown"]
    text = recheck(c, "-p", "observe", r.log_path).stdout
    assert "cannot know: from +" in text and "deny (strict.policy:2 deny read /etc/hostname)" \
        " -> allow" in text, text


def test_calls_the_run_did_not_record_are_said(root_caller):  # noqa: F811
    c = root_caller
    writes_only = write(c, "writes.policy", "version 1\ndefault allow\ndeny write /etc/**\n")
    r = dry(c, "python", "notify", writes_only)
    assert not [x for x in decode_log(r.log_path) if x.get("class") == "read"]
    p, (run,), _ = recheck_json(c, strict(c, "python"), r.log_path)
    unknown = "\n".join(run["unknown"])
    for cls in ("read", "exec", "connect"):
        assert "%s calls: the run's policy did not audit them" % cls in unknown, unknown
    assert "mkdir" in {ch["name"] for ch in run["changes"]}, run  # the writes it has


def test_a_batch(root_caller):  # noqa: F811
    c = root_caller
    d = c.dir("batch")
    tasks = [{"id": "clean", "code": "print(6 * 7)", "language": "python"},
             {"id": "reads", "code": "print(open('/etc/hostname').read())", "language": "python"},
             {"id": "cats", "code": "cat /etc/hostname", "language": "shell"},
             {"id": "gone", "code": "print(1)", "language": "python"}]
    with open(os.path.join(d, "tasks.jsonl"), "w") as f:
        f.writelines(json.dumps(dict(t, dry_run=True)) + "\n" for t in tasks)
    out = os.path.join(d, "out")
    b = c.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", "2", cwd=d, timeout=300)
    assert b.returncode == 0, b.stderr
    os.unlink(os.path.join(out, "tasks", "gone", "run.msgpack"))  # as a run that never started
    b_policy = strict(c, "python")

    p = recheck(c, "-p", b_policy, out)
    assert p.returncode == 1, p.stderr
    rows = {line.split()[0]: line for line in p.stdout.splitlines()[-6:]}
    assert "would pass" in rows["clean"] and "dry-run" in rows["clean"], p.stdout
    assert "would be refused 1 call" in rows["reads"], p.stdout
    assert "would be killed at" in rows["cats"] and "/usr/bin/cat" in rows["cats"], p.stdout
    assert "no log" in rows["gone"], p.stdout
    assert p.stdout.splitlines()[-1].startswith("3 runs: 1 would pass, 1 would be refused, "
                                                "1 would be killed"), p.stdout

    p, runs, summary = recheck_json(c, b_policy, out)
    assert [r["task_id"] for r in runs] == ["clean", "reads", "cats"], runs
    assert (summary["runs"], summary["pass"], summary["refused"], summary["killed"],
            summary["missing"]) == (3, 1, 1, 1, 1), summary
    # a task's object is its log's own recheck
    _, (alone,), _ = recheck_json(c, b_policy, os.path.join(out, "tasks", "reads", "run.msgpack"))
    assert alone["changes"] == runs[1]["changes"] and alone["verdict"] == runs[1]["verdict"]


def test_a_run_on_an_image_is_rechecked_in_its_trees(root_caller):  # noqa: F811
    """A rule on a link only the image has (usr/bin/vtool) also holds for
    what the link resolves to there: the new policy is resolved in the
    run's image, as vigil run resolves it; a log of an image this store
    lacks says its policy was resolved on the host's trees instead."""
    from image_tree import layout_with, runnable_layer
    c = root_caller
    d = os.path.join(c.dir("layout"), "oci")
    layout_with(d, runnable_layer({"usr/lib/vtool/real": b"vtool\n"},
                                  {"usr/bin/vtool": "../lib/vtool/real"}))
    p = c.vigil_raw("image", "import", d, "--name", "recheck-img")
    assert p.returncode == 0, p.stderr
    digest = p.stdout.strip()
    cmd = ("sh", "-c", "read -r x < /usr/lib/vtool/real; echo done")
    a = c.run(*cmd, opts=("--image", digest, "--dry-run", "-p", "observe"))
    new = write(c, "vtool.policy", "version 1\ndeny read /usr/bin/vtool\ninclude <default>\n")
    b = c.run(*cmd, opts=("--image", digest, "--dry-run", "-p", new))
    assert a.rc == 0 and b.rc == 0, (a, b)
    _, (run,), _ = recheck_json(c, new, a.log_path)
    vtool = [ch for ch in run["changes"] if ch["target"] == "/usr/lib/vtool/real"]
    assert vtool and vtool[0]["new"]["decision"] == "would-deny", run["changes"]
    assert vtool[0]["new"]["rule"]["text"] == "deny read /usr/bin/vtool"
    real = decisions(b.recs)
    predicted = decisions(a.recs, new_decisions(run, "call"))
    assert all(predicted[k] == real[k] for k in set(predicted) & set(real))
    assert not any("image" in u for u in run["unknown"]), run["unknown"]

    with open(a.log_path, "rb") as f:
        data = f.read()
    gone = digest[:-4] + "0000" if not digest.endswith("0000") else digest[:-4] + "1111"
    other = os.path.join(c.dir("gone"), "run.msgpack")
    with open(other, "wb") as f:
        f.write(data.replace(digest.encode(), gone.encode()))
    _, (run,), _ = recheck_json(c, new, other)
    assert any("which this store does not have" in u and "host's trees" in u
               for u in run["unknown"]), run["unknown"]
    assert c.vigil_raw("image", "rm", "recheck-img").returncode == 0


def one_line_error(p, *words):
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and all(w in lines[0] for w in words), p.stderr


def test_bad_input(root_caller):  # noqa: F811
    c = root_caller
    a = dry(c, "shell", "notify", "shell")
    d = c.dir("bad")
    with open(a.log_path, "rb") as f:
        data = f.read()
    import msgpack
    up = msgpack.Unpacker(raw=False)
    up.feed(data)
    ends = []
    for _ in up:
        ends.append(up.tell())
    mid = ends[len(ends) // 2]
    corrupt = os.path.join(d, "corrupt.msgpack")
    with open(corrupt, "wb") as f:
        f.write(data[:mid] + b"\xc1" + data[mid:])  # a byte msgpack never uses
    cut = os.path.join(d, "cut.msgpack")
    with open(cut, "wb") as f:
        f.write(data[:mid + 3])
    twice = os.path.join(d, "twice.msgpack")
    with open(twice, "wb") as f:
        f.write(data[:ends[0]] + data)  # a header, then a whole log
    text = os.path.join(d, "notes.txt")
    with open(text, "w") as f:
        f.write("not a log\n")

    one_line_error(recheck(c, "-p", "shell", os.path.join(d, "missing.msgpack")),
                   "missing.msgpack", "No such file")
    one_line_error(recheck(c, "-p", "shell", corrupt), "corrupt.msgpack",
                   "corrupt record at byte %d" % mid)
    one_line_error(recheck(c, "-p", "shell", text), "notes.txt", "not a vigil log")
    one_line_error(recheck(c, "-p", "shell", twice), "twice.msgpack", "a second header",
                   "record 2")
    bad = write(c, "bad.policy", "version 1\nallow connect tcp 1.2.3.4:70000\n")
    p = recheck(c, "-p", bad, a.log_path)
    one_line_error(p, "bad.policy:2:")
    assert p.stdout == ""
    one_line_error(recheck(c, "-p", "no-such-policy", a.log_path), "no-such-policy")
    one_line_error(recheck(c, a.log_path), "-p POLICY")
    one_line_error(recheck(c, "-p", "shell", d), "not a vigil batch directory")
    # a log cut off is rechecked up to its last record, and says so
    p = recheck(c, "-p", "shell", cut)
    assert p.returncode == 0 and "cannot know: the log has no trailer" in p.stdout, p.stdout
    # one bad log among good ones: the good ones are rechecked, exit 2
    p = recheck(c, "-p", "shell", a.log_path, corrupt)
    assert p.returncode == 2 and " 0 differ" in p.stdout and "not rechecked" in p.stdout, p
    shutil.rmtree(d)
