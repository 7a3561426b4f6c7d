"""`vigil view`: the ncurses viewer, driven in a real terminal (tmux).

Every check is written as a helper that takes any log path and derives
what the screen must show from the log itself (read with python-msgpack),
so the same checks run on genlog's synthetic logs and on real run logs.
"""
import os
import re
import shlex
import subprocess
import time

import msgpack
import pytest

from conftest import ROOT, VIGIL

GENLOG = os.environ.get("GENLOG", os.path.join(ROOT, "build", "bench", "genlog"))
REFUSED = {"deny", "kill", "would-deny", "would-kill"}
CLASSES = ["read", "write", "exec", "connect", "bind", "send", "system"]
DECISIONS = ["allow", "deny", "kill", "would-deny", "would-kill"]

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v tmux"], capture_output=True).returncode != 0,
    reason="tmux is not installed")


# ---- reading logs ----

def read_records(path):
    """[(record, start, end)] for every complete record, via Unpacker.tell()."""
    out = []
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, strict_map_key=False)
        start = 0
        for rec in u:
            end = u.tell()
            out.append((rec, start, end))
            start = end
    return out


def refused(rec):
    return rec.get("type") == "syscall" and rec.get("decision") in REFUSED


def processes(records):
    """{proc id: {"pid", "cmd"}}: the command as the tree shows it (the last
    exec's argv, else what the parent ran when it forked)."""
    procs = {}
    for rec, _, _ in records:
        if rec.get("type") != "proc":
            continue
        p = procs.setdefault(rec["proc"], {"pid": rec["pid"], "cmd": ""})
        if rec["kind"] == "start" and rec.get("parent") in procs:
            p["cmd"] = procs[rec["parent"]]["cmd"]
        elif rec["kind"] == "exec":
            p["cmd"] = " ".join(rec.get("argv", []))
    return procs


def proc_rows(records, proc_id, pid):
    """How many rows the list shows when filtered to one process."""
    n = 0
    for rec, _, _ in records:
        t = rec.get("type")
        if t in ("syscall", "proc") and rec.get("proc") == proc_id:
            n += 1
        elif t == "note" and rec.get("pid", 0) == pid:
            n += 1
    return n


# ---- the terminal ----

class Term:
    """One viewer in a private tmux server."""
    counter = 0

    def __init__(self, args, width=100, height=30, env=None):
        Term.counter += 1
        self.sock = "vgview-%d-%d" % (os.getpid(), Term.counter)
        self.env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TMUX")}
        cmd = "%s view %s; echo \"[exit $?]\"; sleep 600" % (
            shlex.quote(VIGIL), " ".join(shlex.quote(a) for a in args))
        extra = []
        for k, v in {"LANG": "C.UTF-8", **(env or {})}.items():
            extra += ["-e", "%s=%s" % (k, v)]
        self.tmux("new-session", "-d", "-x", str(width), "-y", str(height), *extra,
                  "sh", "-c", cmd)

    def tmux(self, *args):
        return subprocess.run(["tmux", "-L", self.sock, "-f", "/dev/null", *args],
                              capture_output=True, text=True, env=self.env, timeout=20)

    def screen(self, escapes=False):
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else [])).stdout

    def keys(self, *keys):
        self.tmux("send-keys", *keys)

    def type(self, text):
        self.tmux("send-keys", "-l", text)

    def wait(self, pred, timeout=15, what=None):
        """Poll the screen until pred(screen) holds; returns the screen."""
        if isinstance(pred, str):
            text, what = pred, what or pred
            pred = lambda s: text in s
        deadline = time.monotonic() + timeout
        while True:
            s = self.screen()
            if pred(s):
                return s
            if time.monotonic() > deadline:
                raise AssertionError("waited for %s; screen:\n%s" % (what or pred, s))
            time.sleep(0.05)

    def status(self, screen=None):
        """The status bar of screen (a fresh capture when None)."""
        lines = (self.screen() if screen is None else screen).rstrip("\n").split("\n")
        return lines[-2] if len(lines) >= 2 else ""

    def resize(self, width, height):
        self.tmux("resize-window", "-x", str(width), "-y", str(height))

    def close(self):
        self.tmux("kill-server")


@pytest.fixture
def term():
    made = []

    def start(*args, **kw):
        t = Term(args, **kw)
        made.append(t)
        return t
    yield start
    for t in made:
        t.close()


@pytest.fixture(scope="session")
def genlog():
    if not os.access(GENLOG, os.X_OK):
        subprocess.run(["make", "-C", ROOT, "build/bench/genlog"], check=True,
                       capture_output=True)

    def run(path, n, *flags):
        subprocess.run([GENLOG, str(path), str(n), *flags], check=True, timeout=120)
        return str(path)
    return run


@pytest.fixture(scope="session")
def small_log(genlog, tmp_path_factory):
    return genlog(tmp_path_factory.mktemp("viewer") / "run.log", 400)


def at_row(t, row):
    """Wait until the status bar says the selection is on row `row` (1-based)."""
    t.wait(lambda s: re.search(r"\brow %d\b" % row, t.status(s)), what="row %d" % row)


def status_counts(term):
    m = re.search(r"(\d+)/(\d+)", term.status())
    assert m, term.status()
    return int(m.group(1)), int(m.group(2))


def open_viewer(term, path, *args, **kw):
    t = term(*args, path, **kw)
    n = len(read_records(path))
    t.wait(lambda s: "%d/%d" % (n, n) in s or "follow" in s, what="the status bar")
    return t


# ---- checks that take any log ----

def check_list(t, path):
    records = read_records(path)
    n = len(records)
    s = t.wait("%d/%d" % (n, n))
    lines = s.split("\n")
    assert "TIME" in lines[0] and "DECISION" in lines[0]
    assert "header" in lines[1] and "+0.000" in lines[1]
    # One row per record, in order: the class (or record type) column.
    for i, line in enumerate(lines[1:10]):
        rec = records[i][0]
        want = rec["class"] if rec["type"] == "syscall" else rec["type"]
        assert want in line, (i, line)
        if rec["type"] == "syscall":
            assert rec["decision"] in line


def check_denials(t, path):
    records = read_records(path)
    n, nref = len(records), sum(refused(r) for r, _, _ in records)
    t.keys("d")
    s = t.wait("%d/%d" % (nref, n))
    assert "filter: denials" in t.status()
    rows = s.split("\n")[1:-3]
    assert rows and all(any(d in row for d in REFUSED) for row in rows if row.strip())
    t.keys("d")
    t.wait("%d/%d" % (n, n))


def check_search(t, path, needle):
    records = read_records(path)
    want = next(i for i, (r, _, _) in enumerate(records)
                if i > 0 and needle in str(r.get("args", {}).get("path", "")))
    t.keys("/")
    t.wait("/")
    t.type(needle)
    t.keys("Enter")
    at_row(t, want + 1)
    t.keys("Enter")
    in_detail(t, needle)


def in_detail(t, text):
    """Wait until the detail pane shows text.  The help line says "Enter
    detail" too, so the word alone does not prove the pane is open."""
    return t.wait(lambda s: any(text in part for part in s.split(" detail ")[1:]),
                  what="the detail pane showing %r" % text)


def check_detail(t, path):
    """The first denial's rule text and stack frames, in the detail pane."""
    records = read_records(path)
    idx, rec = next((i, r) for i, (r, _, _) in enumerate(records)
                    if refused(r) and r.get("stack"))
    t.keys("g")
    for _ in range(sum(refused(r) for r, _, _ in records[:idx + 1])):
        t.keys("]")
    at_row(t, idx + 1)
    t.keys("Enter")
    rule = (rec.get("rule") or {}).get("text") or rec.get("default")
    # the pane may be caught half drawn on a loaded machine: wait for its
    # rule and its first frame both, then judge that one screen
    first = "#0  0x%016x" % rec["stack"][0]["pc"]
    s = t.wait(lambda s: any(rule in part and first in part for part in s.split(" detail ")[1:]),
               what="the detail pane with %r and frame #0" % rule)
    detail = s.split(" detail ")[1]
    if rec.get("rule"):
        assert "%s:%d" % (rec["rule"]["file"], rec["rule"]["line"]) in detail
    assert "stack (%d frame" % len(rec["stack"]) in detail
    f = rec["stack"][0]
    assert "#0  0x%016x" % f["pc"] in detail
    line = next(l for l in detail.split("\n") if "#0  " in l)
    frame = "%s  %s" % (f.get("module", "?"), "%s+0x%x" % (f["sym"], f.get("off", 0))
                        if f.get("sym") else "?")
    assert frame.startswith(line.split("0x%016x  " % f["pc"])[1].strip())
    t.keys("Enter")


def check_tree(t, path):
    records = read_records(path)
    procs = processes(records)
    t.keys("p")
    s = t.wait("[processes]")
    shown = 0
    for p in procs.values():
        line = next((l for l in s.split("\n") if re.search(r"\bpid %d\b" % p["pid"], l)), None)
        if line is None:
            continue
        shown += 1
        assert p["cmd"][:10] in line, (p, line)
    assert shown >= min(len(procs), 10)
    # Enter filters the list to the selected process (the first line: the root).
    root_id, root = next(iter(procs.items()))
    t.keys("g", "Enter")
    want = proc_rows(records, root_id, root["pid"])
    t.wait(lambda s: "filter: pid=%d" % root["pid"] in t.status(s), what="the process filter")
    assert status_counts(t) == (want, len(records))
    t.keys("x")
    t.wait("%d/%d" % (len(records), len(records)))


def check_summary(t, path):
    records = read_records(path)
    counts = {(c, d): 0 for c in CLASSES for d in DECISIONS}
    for r, _, _ in records:
        if r.get("type") == "syscall":
            counts[(r["class"], r["decision"])] += 1
    t.keys("s")
    s = t.wait("Counts")
    for c in CLASSES:
        line = next(l for l in s.split("\n") if l.startswith("  %-8s" % c))
        assert [int(x) for x in line.split()[1:]] == \
            [counts[(c, d)] for d in DECISIONS] + [sum(counts[(c, d)] for d in DECISIONS)]
    trailer = records[-1][0]
    if trailer.get("type") == "trailer":
        assert "ended     %s" % trailer["status"] in s
    t.keys("q")
    t.wait("DECISION")


# ---- tests ----

# The views are checked on a generated log (every kind of record) and on
# the log of a real run (the bundled candidate under the default policy).
LOGS = pytest.mark.parametrize("log_name", ["small_log", "real_log"])


@LOGS
def test_list_filters_search(term, request, log_name):
    log = request.getfixturevalue(log_name)
    t = open_viewer(term, log)
    check_list(t, log)
    check_denials(t, log)
    check_search(t, log, "id_rsa")


@LOGS
def test_detail_pane(term, request, log_name):
    log = request.getfixturevalue(log_name)
    check_detail(open_viewer(term, log, height=50), log)


@LOGS
def test_process_tree(term, request, log_name):
    log = request.getfixturevalue(log_name)
    check_tree(open_viewer(term, log, height=40), log)


@LOGS
def test_summary(term, request, log_name):
    log = request.getfixturevalue(log_name)
    check_summary(open_viewer(term, log, height=40), log)


def test_class_filter_and_clear(term, small_log):
    records = read_records(small_log)
    n = len(records)
    nread = sum(r.get("type") == "syscall" and r["class"] == "read" for r, _, _ in records)
    t = open_viewer(term, small_log)
    t.keys("c")
    t.wait(lambda s: "filter: class=read" in t.status(s), what="class=read")
    assert status_counts(t) == (nread, n)
    t.keys("x")
    t.wait("%d/%d" % (n, n))
    assert "filter: none" in t.status()


def test_help_lists_every_key_and_q_closes(term, small_log):
    t = open_viewer(term, small_log, height=50)
    t.keys("?")
    s = t.wait("[help]")
    for key, text in [("d", "denials only"), ("/", "search"), ("]", "next denial"),
                      ("F", "follow"), ("Space", "replay"), ("p, Tab", "process tree"),
                      ("s", "summary")]:
        assert re.search(r"^\s+%s\s+.*%s" % (re.escape(key), text), s, re.M), (key, s)
    t.keys("q")
    t.wait("DECISION")
    t.keys("q")
    t.wait("[exit 0]")


def test_replay(term, small_log):
    n = len(read_records(small_log))
    t = open_viewer(term, small_log)
    t.keys(".")  # step: replay starts, paused, at the selected (first) event
    t.wait(lambda s: "replay paused 1x" in t.status(s), what="replay paused")
    assert status_counts(t) == (1, n)
    t.keys(".")
    t.wait("2/%d" % n)
    t.keys("+", "+")
    t.wait(lambda s: "replay paused 4x" in t.status(s), what="4x")
    t.keys("Space")
    # Playing reveals the rest in time order, then replay ends.
    t.wait(lambda s: "%d/%d" % (n, n) in t.status(s) and "replay" not in t.status(s),
           timeout=30, what="the end of the replay")
    t.keys("-", "-", "-", "-", "-", "-")
    t.wait(lambda s: "speed 0.25x" in t.status(s), what="0.25x")


def split_log(src, dst, k):
    """Write the first k records of src to dst; returns (data, offset of k)."""
    data = open(src, "rb").read()
    cut = read_records(src)[k - 1][2]
    with open(dst, "wb") as f:
        f.write(data[:cut])
    return data, cut


def test_follow_shows_appended_events(term, genlog, tmp_path):
    full = genlog(tmp_path / "full.log", 300)
    live = str(tmp_path / "live.log")
    records = read_records(full)
    data, cut = split_log(full, live, 100)
    t = term("--follow", live)
    t.wait(lambda s: "100/100" in t.status(s) and "follow" in t.status(s), what="100 events")
    assert "truncated" not in t.status()  # a log being written has no trailer yet
    t.keys("G")
    # Half a record more: nothing new, no complaint.
    half = records[150][1] + (records[150][2] - records[150][1]) // 2
    with open(live, "ab") as f:
        f.write(data[cut:half])
    t.wait(lambda s: "150/150" in t.status(s), what="150 events")
    with open(live, "ab") as f:
        f.write(data[half:])
    s = t.wait(lambda s: "300/300" in t.status(s) and "row 300" in t.status(s),
               what="300 events, bottom row selected")
    # The list stuck to the bottom: the trailer is on screen and selected.
    assert "trailer" in s
    t.keys("F")
    t.wait(lambda s: "follow" not in t.status(s), what="follow off")


def test_follow_starts_on_empty_file(term, genlog, tmp_path):
    full = genlog(tmp_path / "full.log", 50)
    live = tmp_path / "live.log"
    live.write_bytes(b"")
    t = term("--follow", str(live))
    t.wait("no events yet")
    live.write_bytes(open(full, "rb").read())
    t.wait(lambda s: "50/50" in t.status(s), what="50 events")


def test_truncated_log_warns(term, genlog, tmp_path):
    path = genlog(tmp_path / "cut.log", 300, "--truncate")
    records = read_records(path)
    end = records[-1][2]
    assert end < os.path.getsize(path)  # a record was cut in half
    t = term(path)
    t.wait(lambda s: "truncated at byte %d: no trailer" % end in t.status(s),
           what="the truncation warning")
    assert status_counts(t) == (len(records), len(records))


def test_resize(term, small_log):
    n = len(read_records(small_log))
    t = open_viewer(term, small_log)
    t.resize(80, 24)
    s = t.wait(lambda s: len(s.rstrip("\n").split("\n")) == 24 and "%d/%d" % (n, n) in s
               and "DECISION" in s.split("\n")[0], what="80x24")
    assert all(len(line) <= 80 for line in s.split("\n"))
    t.keys("Enter")
    t.wait("detail")
    t.resize(40, 8)
    t.wait("terminal too small")
    t.resize(100, 30)
    t.wait(lambda s: "%d/%d" % (n, n) in t.status(s) and "detail" in s, what="usable again")
    t.keys("q")
    t.wait("[exit 0]")


COLOUR_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colour_codes(screen):
    """SGR parameters that set a foreground or background colour (39 and 49,
    back to the default, are what tmux writes between any two cells)."""
    found = []
    for m in COLOUR_SGR.finditer(screen):
        for p in m.group(1).split(";"):
            if p.isdigit() and (30 <= int(p) <= 48 or 90 <= int(p) <= 107) and p != "39":
                found.append(p)
    return found


def test_colours_and_no_color(term, small_log):
    t = open_viewer(term, small_log)
    t.keys("d")
    t.wait(lambda s: "filter: denials" in t.status(s), what="denials")
    assert colour_codes(t.screen(escapes=True))  # deny is red, kill magenta, ...
    t2 = open_viewer(term, small_log, env={"NO_COLOR": "1"})
    t2.keys("d")
    t2.wait(lambda s: "filter: denials" in t2.status(), what="denials")
    assert colour_codes(t2.screen(escapes=True)) == []


def test_not_a_terminal(vigil, small_log):
    r = vigil("view", small_log)
    assert r.returncode == 2
    assert r.stderr == ("vigil: view needs a terminal; use 'vigil log %s' for text or --json\n"
                        % small_log)
    assert r.stdout == ""


def test_bad_files(vigil, tmp_path):
    r = vigil("view", str(tmp_path / "missing.log"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "missing.log: No such file or directory" in r.stderr
    junk = tmp_path / "notes.txt"
    junk.write_text("hello\n")
    r = vigil("view", str(junk))
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "not a vigil log" in r.stderr
    r = vigil("view", env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert r.returncode == 2 and "no run log in" in r.stderr  # no FILE: the latest run
    r = vigil("view", "--help")
    assert r.returncode == 0 and "usage: vigil view [--follow] [FILE]" in r.stdout


def test_hostile_strings_are_shown_escaped(term, small_log, tmp_path):
    """A path with an escape sequence and a newline reaches the screen as
    text (\\x1b, \\x0a), not as terminal control."""
    records = [r for r, _, _ in read_records(small_log)]
    i = next(i for i, r in enumerate(records) if r.get("type") == "syscall"
             and r.get("args", {}).get("path"))
    records[i]["args"]["path"] = "/tmp/evil\x1b[2J\nname"
    records[i]["args"].pop("resolved", None)
    path = tmp_path / "hostile.log"
    path.write_bytes(b"".join(msgpack.packb(r, use_bin_type=True) for r in records))
    t = open_viewer(term, str(path))
    t.keys("/")
    t.wait("/")
    t.type("evil")
    t.keys("Enter")
    at_row(t, i + 1)
    assert "evil\\x1b[2J" in t.screen()  # the list (the shared summary quotes it)
    t.keys("Enter")
    # the raw field, escaped by the viewer
    s = in_detail(t, "/tmp/evil\\x1b[2J\\x0aname")
    assert s.split("\n")[0].startswith("   TIME")  # nothing was cleared or moved


# ---- on a log from a real run ----

@pytest.fixture(scope="session")
def real_log(tmp_path_factory):
    """vigil run on the bundled sloppy candidate: real denials with stacks
    and a trailer."""
    d = tmp_path_factory.mktemp("real")
    log = str(d / "run.msgpack")
    example = os.path.join(os.path.dirname(__file__), "..", "examples", "sloppy_cleanup.py")
    r = subprocess.run([VIGIL, "run", "-q", "-o", log, "--", "python3", os.path.abspath(example)],
                       capture_output=True, text=True, timeout=120, cwd=str(d))
    # The candidate's rm -rf of /* takes its own workdir (/tmp/work) with
    # it, so its last step may fail: what matters here is the log.
    assert r.returncode in (0, 1), r.stderr
    return log

