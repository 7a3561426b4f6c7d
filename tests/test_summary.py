"""The intent summary and probes (issue 12): `vigil log --summary` (text
and --json) and the result record's `summary` name each bad attempt of the
bundled demo candidate; lookups that find nothing are marked `probe` in
the log (checked with Python's msgpack), `vigil log` folds a PATH search
into one line, and the summary counts a refused command found through
PATH as one attempt.  Real candidates under the real supervisor, as root
and as nobody."""
import json
import os
import re

import pytest

from helpers import ROOT, caller, nobody_caller, root_caller, syscalls  # noqa: F401

DEMO = os.path.join(ROOT, "examples", "sloppy_cleanup.py")


def summary_json(caller, log):
    p = caller.vigil_raw("log", "--summary", "--json", log)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def items(summary, cat):
    return {i["what"]: i for i in summary[cat]["items"]}


def demo_run(caller):
    # it may fail at the end: its rm -rf /* takes /tmp/work, its own workdir
    r = caller.run("python3", DEMO)
    assert r.rc in (0, 1) and r.recs[-1]["type"] == "trailer", r
    return r


def test_demo_summary_names_each_bad_attempt(caller):
    r = demo_run(caller)
    s = summary_json(caller, r.log_path)
    # the result record carries exactly what `vigil log --summary --json` says
    assert r.result["summary"] == s
    secrets = items(s, "secrets")
    assert secrets["/root/.ssh/id_rsa"]["decisions"] == ["deny"]
    home_key = [w for w in secrets if w.endswith("/.ssh/id_rsa") and w != "/root/.ssh/id_rsa"]
    assert home_key, secrets                      # ~/.ssh/id_rsa (the sandbox's ~)
    assert "/home" in secrets                     # glob("/home/*/.ssh/id_rsa")
    net = items(s, "network")
    assert net["tcp 93.184.216.34:80"]["decisions"] == ["deny"]
    assert net["tcp 93.184.216.34:80"]["count"] == 1
    # rm -rf "$BUILD_DIR"/* with BUILD_DIR unset: deletions outside the workdir
    dels = s["deletions"]
    system = [i for i in dels["items"] if i["what"].startswith(("/etc/", "/usr/", "/proc/"))]
    assert system and all(i["decisions"] == ["deny"] for i in system), dels
    assert all(not i["what"].startswith(r.recs[0]["cwd"]) for i in dels["items"])
    for cat in ("secrets", "network", "deletions"):
        for i in s[cat]["items"]:
            assert i["count"] >= 1 and i["first_ts"] > 0, i
    text = caller.vigil_raw("log", "--summary", r.log_path).stdout
    for needle in ("/root/.ssh/id_rsa", "tcp 93.184.216.34:80", "deletions outside the workdir: ",
                   home_key[0]):
        assert needle in text, text


def demo_line(pattern):
    with open(DEMO) as f:
        for n, line in enumerate(f, 1):
            if re.search(pattern, line):
                return n
    raise AssertionError(pattern)


def test_demo_summary_source_lines(root_caller):
    """The source line of each bad attempt, from the records' Python frames
    (`py`, added by the pyframes work).  Skipped while the log has none:
    it turns on by itself when frames are recorded."""
    r = demo_run(root_caller)
    if not any("py" in rec for rec in syscalls(r.recs)):
        pytest.skip("no Python frames (`py`) in this build's log yet")
    s = summary_json(root_caller, r.log_path)
    name = os.path.basename(DEMO)
    want = {
        ("secrets", "/root/.ssh/id_rsa"): demo_line(r"with open\(key\)"),
        ("network", "tcp 93.184.216.34:80"): demo_line(r"urlretrieve\("),
    }
    for (cat, what), line in want.items():
        src = items(s, cat)[what]["source"]
        assert src and src.startswith(f"{name}:{line} "), (what, src)
    rm = demo_line(r"shutil\.rmtree\(path\)")
    # frames are taken for refused calls (--py-frames refused, the default)
    refused = [i for i in s["deletions"]["items"] if set(i["decisions"]) - {"allow"}]
    assert refused and all(i["source"].startswith(f"{name}:{rm} ") for i in refused), s


# od exists but is refused: dash execs it in every PATH directory, one
# attempt; env execs a missing program in every PATH directory: probes
# only, noise.
SEARCH = "echo made > made.txt; od /dev/null; env vigilnosuchtool; echo end"


def test_path_search_is_one_attempt_and_probes_are_marked(caller):
    r = caller.run("sh", "-c", SEARCH)
    assert r.rc == 0 and "end" in r.stdout and "od: Permission denied" in r.stderr, r
    execs = syscalls(r.recs, **{"class": "exec"})
    missing = [e for e in execs if e["args"].get("path", "").endswith("/vigilnosuchtool")]
    od = [e for e in execs if e["args"].get("path", "").endswith("/od")]
    assert len(missing) >= 3 and all(e.get("probe") is True for e in missing), missing
    found = [e for e in od if e["args"].get("resolved") == "/usr/bin/od"]
    assert found and all("probe" not in e for e in found), od
    assert any(e.get("probe") is True for e in od), od      # /usr/local/bin/od ...
    # an O_CREAT open makes a file: never a probe
    made = [e for e in syscalls(r.recs, **{"class": "write"})
            if e["args"].get("resolved", "").endswith("/made.txt")]
    assert made and all("probe" not in e for e in made), made

    s = summary_json(caller, r.log_path)
    ex = items(s, "exec")
    assert ex["od"]["count"] == 1 and ex["od"]["found"] is True, ex
    assert "deny" in ex["od"]["decisions"]
    # a program found nowhere: its PATH search is lookups of what does not
    # exist, refused or not: nothing could have run, so noise, not an attempt
    assert "vigilnosuchtool" not in ex and s["exec"]["count"] == 1, ex
    assert s["noise"]["probes"] == 1, s["noise"]

    def tries(*opts):
        """The exec lines of the log about the missing program (not sh's or env's)."""
        text = caller.vigil_raw("log", "--color", "never", *opts, r.log_path).stdout
        return [ln for ln in text.splitlines()
                if re.search(r"\] exec +(probed \d+ paths for |execve \S*/)vigilnosuchtool[: ]", ln)]

    lines = tries()
    assert len(lines) == 1 and f"probed {len(missing)} paths for vigilnosuchtool" in lines[0], lines
    assert len(tries("--all")) == len(missing)


def scroll_until(t, text, most=8):
    """Press Right until text shows (a line longer than the screen)."""
    for _ in range(most):
        t.keys("Right")
        try:
            return t.wait(text, timeout=1)
        except AssertionError:
            continue
    return t.wait(text, timeout=1)


def test_viewer_tried_line_and_horizontal_scroll(root_caller):
    """In the viewer (a real terminal, tmux): the process tree says what a
    process tried and was refused, one line for a PATH search; Right
    scrolls a line longer than the screen so that its end shows, 0 goes
    back."""
    import shutil
    if not shutil.which("tmux"):
        pytest.skip("tmux is not installed")
    from test_viewer import Term
    end = "VIGILENDMARK"
    long_arg = "x" * 150 + end
    r = root_caller.run("sh", "-c", f"od /dev/null {long_arg}; echo end")
    assert "end" in r.stdout, r
    t = Term([r.log_path], width=100, height=30)
    try:
        t.wait("[events]")
        t.keys("p")
        s = t.wait("tried:")
        tried = [ln for ln in s.split("\n") if "tried:" in ln]
        assert len(tried) == 1 and "tried: od /dev/null" in tried[0], s
        scroll_until(t, "(refused, a PATH search)")  # past the long argument
        t.keys("0")
        t.wait("tried: od /dev/null")
        t.keys("p")
        t.wait("[events]")
        t.keys("/")
        t.type("od /dev/null")
        t.keys("Enter")
        s = t.wait(lambda s: "execve /usr/bin/od" in s, what="the od row")
        assert end not in s
        s = scroll_until(t, end)
        assert "scrolled" in s
        t.keys("0")
        s = t.wait(lambda s: end not in s and "execve /usr/bin/od" in s, what="back at column 0")
    finally:
        t.close()


def test_source_line_and_host_from_the_records_own_keys(root_caller, tmp_path):
    """`py` (Python frames) and `args.host` (the connect's name) come from
    other parts of vigil; the summary and `vigil learn` take them from the
    decoded record (event/schema.c), so a log that has them (here written
    by this test with Python's msgpack, from a real run) gets source lines
    and names."""
    import msgpack
    r = demo_run(root_caller)
    frames = [{"file": "/usr/lib/python3.11/urllib/request.py", "func": "urlopen", "line": 216},
              {"file": "/tmp/work/cand.py", "func": "fetch_binary", "line": 14},
              {"file": "/tmp/work/cand.py", "func": "<module>", "line": 40}]
    out = tmp_path / "py.msgpack"
    with open(out, "wb") as f:
        for rec in r.recs:
            if rec["type"] == "syscall" and rec["class"] == "connect":
                rec = dict(rec, py=frames, args=dict(rec["args"], host="example.org"))
            f.write(msgpack.packb(rec, use_bin_type=True))
    os.chmod(out, 0o644)
    s = summary_json(root_caller, str(out))
    item = items(s, "network")["tcp 93.184.216.34:80"]
    assert item["source"] == "cand.py:14 in fetch_binary", item   # stdlib frame skipped
    assert item["host"] == "example.org", item
    text = root_caller.vigil_raw("log", "--summary", str(out)).stdout
    assert "tcp 93.184.216.34:80 (example.org)" in text and "from cand.py:14 in fetch_binary" in text
    learned = root_caller.vigil_raw("learn", str(out)).stdout
    assert "allow connect tcp example.org:80" in learned, learned


def test_truncated_log_is_summarised_and_says_so(root_caller, tmp_path):
    """A log cut off mid-record (a killed supervisor): the summary and the
    learned policy cover its complete records, say so, and exit 3."""
    r = demo_run(root_caller)
    with open(r.log_path, "rb") as f:
        data = f.read()
    cut = tmp_path / "cut.msgpack"
    cut.write_bytes(data[:-5])   # into the trailer: every other record is whole
    os.chmod(cut, 0o644)
    p = root_caller.vigil_raw("log", "--summary", "--json", str(cut))
    assert p.returncode == 3 and "truncated" in p.stderr, p
    assert json.loads(p.stdout)["secrets"]["count"] >= 1
    p = root_caller.vigil_raw("learn", str(cut))
    assert p.returncode == 3 and "truncated" in p.stderr and "version 1" in p.stdout, p
