"""`vigil report`, the fleet view of a batch: a real batch of candidates
in three groups (a task label, `--by model`) that read secrets, connect
out, ask for a name, write and delete outside the workdir and run
programs; every number of the report (JSON, text, the HTML page's bars)
is checked against a count made here, independently, from the logs
(Python's own msgpack) and results.jsonl.  The page is opened in a real
headless browser (Debian's chromium): its DOM has the charts' bars, and
its screenshot has each bar's colour exactly where and as much as the DOM
says.  Hostile names (task ids, label values, paths with control bytes
and <script>) come out escaped in text and HTML.  A task's labels reach
its results line and never its key.  The 1,000-candidate run is soak."""
import collections
import json
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import zlib

import pytest

from helpers import ROOT, decode_log, root_caller  # noqa: F401

# The summary's frame rule (docs/FORMAT.md, --summary): library code is
# skipped for the candidate's own line.
LIB_MARKS = ("/site-packages/", "/dist-packages/", "/usr/lib/python", "/usr/local/lib/python",
             "<frozen ")
CLASSES = ["read", "write", "exec", "connect", "bind", "send", "system"]
CATEGORIES = ["secrets", "network", "exec", "writes", "deletions"]
# The page's palettes (insight/report_html.c): a class's bars and swatch.
CLASS_COLORS = dict(zip(CLASSES, [(0x4e, 0x79, 0xa7), (0xf2, 0x8e, 0x2b), (0xe1, 0x57, 0x59),
                                  (0x76, 0xb7, 0xb2), (0x59, 0xa1, 0x4f), (0xed, 0xc9, 0x48),
                                  (0xb0, 0x7a, 0xa1)]))
HOSTILE_MODEL = "<script>alert(1)</script>\x1b[31m\u202e"
HOSTILE_FILE = "/etc/\x1b]0;pwned\x07<script>x</script>"
WINDOW = (1400, 3000)
CHROMIUM_TIMEOUT_S = 120

SECRET = "try:\n    open('/root/.ssh/id_rsa').read()\nexcept OSError as e:\n    print(e)\n"
HOME_SECRET = ("import os\ntry:\n    open(os.path.expanduser('~/.ssh/id_rsa')).read()\n"
               "except OSError as e:\n    print(e)\n")
CONNECT = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 443), timeout=2)\n"
           "except OSError as e:\n    print(e)\n")
NAME = ("import socket\ntry:\n    socket.getaddrinfo('pypi.org', 443)\n"
        "except OSError as e:\n    print(e)\n")
WRITE = "try:\n    open('/etc/vigil-report-test', 'w')\nexcept OSError as e:\n    print(e)\n"
DELETE = "import os\ntry:\n    os.remove('/etc/hostname')\nexcept OSError as e:\n    print(e)\n"
PROGRAM = ("import subprocess\nsubprocess.run(['ls'])\ntry:\n"
           "    subprocess.run(['tar', '--version'])\nexcept OSError as e:\n    print(e)\n")
HOSTILE = "try:\n    open(%r, 'w')\nexcept OSError as e:\n    print(e)\n" % HOSTILE_FILE
# A candidate that swaps its script for a symlink to a host secret, or a
# FIFO, after a refusal: the report (often run as root) reads neither.
SWAP = ("import os\ntry:\n    open('/root/.ssh/id_rsa').read()\nexcept OSError:\n    pass\n"
        "os.remove('cand.py')\n%s\n")
SWAP_LINK = SWAP % "os.symlink('/etc/shadow', 'cand.py')"
SWAP_FIFO = SWAP % "os.mkfifo('cand.py')"


def small_batch():
    """Eleven candidates: alpha, beta, the hostile group, and one without
    the label.  Three groups share a line (the same refused read)."""
    tasks = [
        ("alpha-secret", "alpha", SECRET + HOME_SECRET),
        ("alpha-net", "alpha", CONNECT + NAME),
        ("alpha-clean", "alpha", "print(2 + 2)\n"),
        ("beta-write", "beta", WRITE + DELETE),
        ("beta-program", "beta", PROGRAM),
        ("beta-secret", "beta", SECRET),
        ("evil-path", HOSTILE_MODEL, HOSTILE + SECRET),
        ("evil-slow", HOSTILE_MODEL, "import time\ntime.sleep(30)\n"),
        ("evil-link", HOSTILE_MODEL, SWAP_LINK),
        ("evil-fifo", HOSTILE_MODEL, SWAP_FIFO),
        ("unlabelled", None, CONNECT),
    ]
    out = []
    for tid, model, code in tasks:
        t = {"id": tid, "code": code, "language": "python"}
        if model is not None:
            t["labels"] = {"model": model, "temperature": "0.2"}
        if tid == "evil-slow":
            t["limits"] = {"timeout": "1s"}
        out.append(t)
    return out


def write_tasks(path, tasks):
    with open(path, "w") as f:
        for t in tasks:
            f.write(json.dumps(t) + "\n")


def run_batch(caller, tasks, jobs=2, timeout=600):
    d = caller.dir("report")
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    out = os.path.join(d, "out")
    p = caller.vigil_raw("batch", "tasks.jsonl", "--out", out, "-j", str(jobs), cwd=d,
                         timeout=timeout)
    assert p.returncode == 0, p.stderr[-2000:]
    return d, out


def report(caller, *args, **kw):
    """`vigil report ARGS`; under ASan+UBSan (make sanitize) a runtime
    error, which UBSan only prints, fails the test too."""
    p = caller.vigil_raw("report", *args, **kw)
    assert "runtime error" not in p.stderr and "Sanitizer" not in p.stderr, p.stderr
    return p


def results(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# ---- the independent count ----

def user_frame(rec):
    for fr in rec.get("py") or []:
        f = fr.get("file")
        if f and not any(m in f for m in LIB_MARKS) and fr.get("line", 0) >= 0:
            return fr
    return None


def line_of(out, tid, header, fr):
    """The frame's line as the report reads it: from the task's work dir,
    for a file directly in it; None otherwise."""
    cwd = header["cwd"]
    name = fr["file"][len(cwd) + 1:] if fr["file"].startswith(cwd + "/") else None
    if not name or "/" in name:
        return None
    path = os.path.join(out, "tasks", tid, "work", name)
    if not stat.S_ISREG(os.lstat(path).st_mode):
        return None  # a symlink or a FIFO the candidate left: not followed, not read
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if not 1 <= fr["line"] <= len(lines):
        return None
    text = lines[fr["line"] - 1].strip(b" \t\r\f\v").decode()
    return text[:160] + ("..." if len(text) > 160 else "") if text else None


def log_facts(out, tid):
    """From the log alone: refusals by class, programs run, source lines."""
    recs = decode_log(os.path.join(out, "tasks", tid, "run.msgpack"))
    refusals = collections.Counter()
    programs = collections.Counter()
    sources = collections.Counter()
    places = {}
    no_source = 0
    for r in recs:
        if r["type"] == "proc" and r["kind"] == "exec" and r.get("exe"):
            programs[r["exe"]] += 1
        if r["type"] != "syscall" or r["decision"] == "allow":
            continue
        refusals[r["class"]] += 1
        fr = user_frame(r)
        if not fr:
            no_source += 1
            continue
        place = "%s:%d in %s" % (fr["file"].rsplit("/", 1)[-1], fr["line"], fr["func"])
        text = line_of(out, tid, recs[0], fr)
        key = ("t", text) if text else ("l", place)
        sources[key] += 1
        places.setdefault(key, place)
    return refusals, programs, sources, places, no_source


def fleet_name(what, workdir):
    if workdir and (what == workdir or what.startswith(workdir + "/")):
        return "$WORK" + what[len(workdir):]
    return what


class Group:
    def __init__(self):
        self.n = 0
        self.status = collections.Counter()
        self.limits = collections.Counter()
        self.refusals = collections.Counter()
        self.refused_cands = 0
        self.no_source = 0
        self.lists = {k: {"count": 0, "cands": 0, "untracked": 0, "items": {}}
                      for k in CATEGORIES + ["programs", "sources"]}

    def add_list(self, key, things):
        """things: {name: count} of one candidate."""
        li = self.lists[key]
        total = sum(things.values())
        li["count"] += total
        li["cands"] += total > 0
        for name, n in things.items():
            c, k = li["items"].get(name, (0, 0))
            li["items"][name] = (c + n, k + 1)

    def add(self, rec, facts):
        refusals, programs, sources, _, no_source = facts
        self.n += 1
        self.status[rec["status"]] += 1
        for lim in rec["limits_hit"]:
            self.limits[lim] += 1
        self.refusals.update(refusals)
        self.refused_cands += sum(refusals.values()) > 0
        self.no_source += no_source
        for cat in CATEGORIES:
            s = rec["summary"][cat]
            li = self.lists[cat]
            li["count"] += s["count"]
            li["cands"] += s["count"] > 0
            li["untracked"] += s["untracked"]
            for it in s["items"]:
                name = fleet_name(it["what"], rec["workdir"])
                c, k = li["items"].get(name, (0, 0))
                li["items"][name] = (c + it["count"], k + 1)
        self.add_list("programs", programs)
        self.add_list("sources", sources)


def independent(out, by="model"):
    recs = results(os.path.join(out, "results.jsonl"))
    fleet, groups, facts = Group(), collections.defaultdict(Group), {}
    for rec in recs:
        f = log_facts(out, rec["task_id"])
        facts[rec["task_id"]] = f
        # the result's own counts say the same as its log
        assert {c: n for c, n in f[0].items()} == {
            c: sum(v for d, v in rec["counts"][c].items() if d != "allow")
            for c in CLASSES if any(v for d, v in rec["counts"][c].items() if d != "allow")}
        fleet.add(rec, f)
        groups[rec["labels"].get(by)].add(rec, f)
    return recs, fleet, groups, facts


def report_key(item, key):
    """The report's item as the independent count names it."""
    if key == "sources":
        return ("t", item["text"]) if item["text"] is not None else ("l", item["location"])
    return item["what"]


def check_group(rep, mine):
    assert rep["candidates"] == mine.n
    assert rep["status"] == dict(mine.status)
    assert rep["limits_hit"] == dict(mine.limits)
    assert rep["refusals"] == {"total": sum(mine.refusals.values()),
                               **{c: mine.refusals[c] for c in CLASSES}}
    assert rep["refused_candidates"] == mine.refused_cands
    assert rep["refusals_without_source"] == mine.no_source
    for key, li in mine.lists.items():
        r = rep[key]
        assert (r["count"], r["candidates"]) == (li["count"], li["cands"]), key
        if key in CATEGORIES:
            assert r["untracked"] == li["untracked"]
        got = {report_key(it, key): (it["count"], it["candidates"]) for it in r["items"]}
        assert got == li["items"], key
        # most candidates first, then most counted
        weights = [(-it["candidates"], -it["count"]) for it in r["items"]]
        assert weights == sorted(weights), key


# ---- the browser ----

def chromium(*args, cwd):
    exe = shutil.which("chromium")
    assert exe, "no chromium: ./scripts/install-deps.sh test installs it"
    opts = ["--headless", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1",
            "--no-first-run", "--disable-extensions", "--user-data-dir=" + cwd,
            "--window-size=%d,%d" % WINDOW]
    if os.geteuid() == 0:
        opts.append("--no-sandbox")  # chromium's own sandbox refuses to run as root
    p = subprocess.run([exe, *opts, *args], cwd=cwd, capture_output=True, text=True,
                       timeout=CHROMIUM_TIMEOUT_S, env={**os.environ, "HOME": cwd})
    assert p.returncode == 0, p.stderr[-2000:]
    return p.stdout


def png_pixels(path):
    """(width, height, rows of (r, g, b)) of an 8-bit RGB or RGBA PNG,
    decoded here: the chunks, zlib, and the five row filters."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and not interlace, hdr
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    prev, rows, i = bytearray(stride), [], 0
    for _ in range(h):
        ft, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if ft == 1:
                line[x] = (line[x] + a) & 0xff
            elif ft == 2:
                line[x] = (line[x] + b) & 0xff
            elif ft == 3:
                line[x] = (line[x] + (a + b) // 2) & 0xff
            elif ft == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xff
        rows.append(bytes(line))
        prev = line
    return w, h, [[tuple(r[x:x + 3]) for x in range(0, stride, bpp)] for r in rows]


RECT = re.compile(r'<rect ([^>]*)>')
ATTR = re.compile(r'([\w-]+)="([^"]*)"')


def rects(dom, svg_id=None):
    """Every <rect> of the DOM (of one chart), as attribute dicts."""
    if svg_id:
        m = re.search(r'<svg id="%s".*?</svg>' % svg_id, dom, re.S)
        assert m, svg_id
        dom = m.group(0)
    return [dict(ATTR.findall(m.group(1))) for m in RECT.finditer(dom)]


def hex_rgb(s):
    return tuple(int(s[i:i + 2], 16) for i in (1, 3, 5))


def check_page(tmp, page, mine_groups, group_names):
    """The page in chromium: its bars in the DOM, their colours on screen."""
    with open(page, encoding="utf-8") as f:
        html = f.read()
    # self-contained and inert: nothing to fetch, nothing to run
    assert "<script" not in html.lower() and "http:" not in html and "https:" not in html
    assert not re.search(r"\b(src|href)=", html) and "url(" not in html
    assert "Content-Security-Policy" in html
    dom = chromium("--dump-dom", "file://" + page, cwd=tmp)
    assert "<script" not in dom.lower()
    for chart in ("chart-refusals", "chart-tried", "chart-endings", "chart-sources"):
        assert '<svg id="%s"' % chart in dom
    # the refusal bars: one per group and class refused, its number the count
    got = {(html_unescape_attr(r["data-row"]), r["data-series"]): int(r["data-value"])
           for r in rects(dom, "chart-refusals")}
    assert got == {(group_names[g], c): n for g, grp in mine_groups.items()
                   for c, n in grp.refusals.items() if n}
    # on screen: each colour as many pixels as the DOM's rects of it cover
    shot = os.path.join(tmp, "shot.png")
    chromium("--screenshot=" + shot, "file://" + page, cwd=tmp)
    w, h, px = png_pixels(shot)
    assert (w, h) == WINDOW
    counts = collections.Counter(p for row in px for p in row)
    assert sum(n for p, n in counts.items() if p != (255, 255, 255)) > w * h // 100, "blank"
    area = collections.Counter()
    for r in rects(dom):
        area[hex_rgb(r["fill"])] += int(r["width"]) * int(r["height"])
    for cls, rgb in CLASS_COLORS.items():
        refused = sum(g.refusals[cls] for g in mine_groups.values())
        if refused:
            assert area[rgb] > 0 and abs(counts[rgb] - area[rgb]) <= area[rgb] // 20 + 4, cls
        else:
            assert counts[rgb] == 0 and area[rgb] == 0, cls
    # the widest class on screen is the class most refused
    most = max(CLASSES, key=lambda c: sum(g.refusals[c] for g in mine_groups.values()))
    assert max(CLASS_COLORS, key=lambda c: counts[CLASS_COLORS[c]]) == most


def html_unescape_attr(s):
    return (s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"')
            .replace("&#39;", "'").replace("&amp;", "&"))


def shown(s):
    """s as vigil shows text from outside (util/escape.h, text form)."""
    out = []
    for b in s.encode():
        out.append(chr(b) if 0x20 <= b < 0x7f else "\\n" if b == 10 else "\\t" if b == 9
                   else "\\x%02x" % b)
    return "".join(out)


@pytest.fixture(scope="module")
def batch(root_caller):
    d, out = run_batch(root_caller, small_batch())
    return root_caller, d, out


def test_report_json_equals_an_independent_count(batch):
    caller, d, out = batch
    recs, fleet, groups, facts = independent(out)
    p = report(caller, out, "--by", "model", "--json")
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["candidates"] == len(recs) == 11 and rep["by"] == "model"
    check_group(rep["fleet"], fleet)
    # groups by name, the candidates without the label last
    assert [g["name"] for g in rep["groups"]] == ["<script>alert(1)</script>\x1b[31m\u202e",
                                                   "alpha", "beta", None]
    for g in rep["groups"]:
        check_group(g, groups[g["name"]])
    by_id = {r["task_id"]: r for r in recs}
    for c in rep["per_candidate"]:
        rec, (refusals, programs, sources, _, _) = by_id[c["task_id"]], facts[c["task_id"]]
        assert c["group"] == rec["labels"].get("model")
        assert (c["status"], c["exit_code"], c["limits_hit"]) == (
            rec["status"], rec["exit_code"], rec["limits_hit"])
        assert c["refusals"]["total"] == sum(refusals.values()) == rec["denied"]
        assert all(c["refusals"][k] == refusals[k] for k in CLASSES)
        for cat in CATEGORIES:
            assert c[cat] == rec["summary"][cat]["count"]
        assert c["programs"] == sum(programs.values())
        assert c["sources"] == sum(sources.values())
        assert c["log"] == "read" and c["summary"]
    assert [c["task_id"] for c in rep["per_candidate"]] == [r["task_id"] for r in recs]
    # the premises: what the candidates did is there to be counted
    f = rep["fleet"]
    whats = {k: {it.get("what") for it in f[k]["items"]} for k in CATEGORIES + ["programs"]}
    assert {"/root/.ssh/id_rsa", "$WORK/.ssh/id_rsa"} <= whats["secrets"]
    assert "tcp 1.1.1.1:443" in whats["network"] and "dns pypi.org" in whats["network"]
    assert "tar" in whats["exec"] and "/usr/bin/ls" in whats["programs"]
    assert "/etc/vigil-report-test" in whats["writes"] and HOSTILE_FILE in whats["writes"]
    assert "/etc/hostname" in whats["deletions"]
    assert f["limits_hit"] == {"time": 1} and f["status"]["timeout"] == 1
    # one line refused in three candidates of two groups, its text read
    top = f["sources"]["items"][0]
    assert (top["text"], top["candidates"]) == ("open('/root/.ssh/id_rsa').read()", 3)
    assert top["location"] == "cand.py:2 in <module>" and top["first_in"] == "alpha-secret"
    # the swapped scripts: their refusal is listed by its place, the
    # secret the symlink points to never read (one place, two candidates)
    work = os.path.join(out, "tasks", "%s", "work", "cand.py")
    assert os.path.islink(work % "evil-link")
    assert stat.S_ISFIFO(os.lstat(work % "evil-fifo").st_mode)
    swapped = [it for it in f["sources"]["items"] if it["text"] is None]
    assert [(it["location"], it["candidates"], it["first_in"]) for it in swapped] == [
        ("cand.py:3 in <module>", 2, "evil-link")]
    assert not any(":$" in (it["text"] or "") or "root:" in (it["text"] or "")
                   for it in f["sources"]["items"])


def test_report_text_has_the_same_numbers_escaped(batch):
    caller, d, out = batch
    _, fleet, groups, _ = independent(out)
    p = report(caller, out, "--by", "model")
    assert p.returncode == 0, p.stderr
    text = p.stdout
    # nothing from outside reaches the terminal raw
    assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f]", text) and text.isascii()
    assert "<script>alert(1)</script>\\x1b[31m\\xe2\\x80\\xae" in text
    assert shown(HOSTILE_FILE) in text
    rows = {}
    for line in text.split("\n\n")[1].splitlines()[1:-1]:
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = [int(x) for x in cells[1:]]
    names = {g: "(no model)" if g is None else shown(g) for g in groups}

    def row(table, g):
        """The row of group g: its name as shown, or cut ("...")."""
        hits = [v for k, v in table.items()
                if k == names[g] or (k.endswith("...") and names[g].startswith(k[:-3]))]
        assert len(hits) == 1, (g, list(table))
        return hits[0]

    def want(g):
        ok = g.status["ok"]
        return [g.n, ok, g.n - ok, g.refused_cands] + [g.lists[c]["cands"] for c in CATEGORIES] + \
            [max(g.limits.values(), default=0)]
    assert rows["all"] == want(fleet)
    for name, g in groups.items():
        assert row(rows, name) == want(g), name
    # refusals by class, per group
    block = text.split("refusals by class\n")[1].split("\n\n")[0].splitlines()[1:]
    got = {re.split(r"\s{2,}", l.strip())[0]: [int(x) for x in re.split(r"\s{2,}", l.strip())[1:]]
           for l in block}
    assert got["all"] == [fleet.refusals[c] for c in CLASSES] + [sum(fleet.refusals.values())]
    for name, g in groups.items():
        assert row(got, name) == [g.refusals[c] for c in CLASSES] + [sum(g.refusals.values())]


def test_report_page_renders_in_chromium(batch, tmp_path):
    caller, d, out = batch
    _, fleet, groups, _ = independent(out)
    page = os.path.join(d, "report.html")
    p = report(caller, out, "--by", "model", "-o", page)
    assert p.returncode == 0 and p.stdout == "", p.stderr
    names = {g: "(no model)" if g is None else shown(g) for g in groups}
    tmp = tempfile.mkdtemp(dir=str(tmp_path))
    check_page(tmp, page, groups, names)
    with open(page, encoding="utf-8") as f:
        html = f.read()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;\\x1b[31m\\xe2\\x80\\xae" in html
    # written again over its own page, never over another file
    assert report(caller, out, "-o", page).returncode == 0
    other = os.path.join(d, "notes.html")
    with open(other, "w") as f:
        f.write("<p>mine</p>\n")
    p = report(caller, out, "-o", other)
    assert p.returncode == 1 and open(other).read() == "<p>mine</p>\n"


def test_hostile_task_ids_are_escaped_and_never_a_path(batch):
    caller, d, out = batch
    recs = results(os.path.join(out, "results.jsonl"))
    bad = dict(recs[0], task_id="../../\x1b]0;pwned\x07<script>x</script>",
               labels={"model": "<img onerror=x>"})
    shard = os.path.join(out, "results-hostile.jsonl")
    with open(shard, "w") as f:
        for r in [bad] + recs[1:]:
            f.write(json.dumps(r) + "\n")
    p = report(caller, shard, "--by", "model")
    # its log is not looked for (exit 3, said once, escaped)
    assert p.returncode == 3, p.stderr
    assert "\x1b" not in p.stdout + p.stderr and "\x07" not in p.stdout + p.stderr
    assert "../../\\x1b]0;pwned\\x07<script>x</script>" in p.stdout
    assert "not a task id vigil batch makes" in p.stderr
    page = os.path.join(d, "hostile.html")
    p = report(caller, shard, "--by", "model", "-o", page)
    assert p.returncode == 3
    html = open(page, encoding="utf-8").read()
    assert "<script" not in html and "<img" not in html and "\x1b" not in html
    assert "&lt;img onerror=x&gt;" in html
    js = json.loads(report(caller, shard, "--json").stdout)
    assert js["per_candidate"][0]["log"] == "not looked for"


@pytest.mark.parametrize("args, message", [
    (["--by", "no such"], "not a label name"),
    (["--by", "modl"], "no task of"),
    (["--top", "0"], "--top"),
])
def test_bad_arguments_say_what_is_wrong(batch, args, message):
    caller, d, out = batch
    p = report(caller, out, *args)
    assert p.returncode in (1, 2) and message in p.stderr and p.stdout == "", p.stderr
    assert len(p.stderr.splitlines()) == 1


def test_bad_input_is_one_line_naming_it(root_caller):
    d = root_caller.dir("bad")
    p = report(root_caller, d)
    assert p.returncode == 1 and "results.jsonl" in p.stderr and "not a batch" in p.stderr
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        f.write('{"task_id": "a", "status": "ok"}\n{"task_id": "b"\n')
    p = report(root_caller, d)
    assert p.returncode == 1 and "results.jsonl:2:" in p.stderr and len(p.stderr.splitlines()) == 1
    # a record of the wrong shapes is counted as what it says, never a crash
    with open(os.path.join(d, "results.jsonl"), "w") as f:
        f.write(json.dumps({"task_id": "a", "status": "ok", "exit_code": 1e300, "log": None,
                            "summary": {"secrets": {"count": "x", "items": [1, {"what": 5}]},
                                        "network": [], "exec": None},
                            "counts": {"read": {"deny": -1}, "nope": {"deny": 3}},
                            "limits_hit": [1, "memory"], "labels": {"model": 7}}) + "\n")
    p = report(root_caller, d, "--json")
    assert p.returncode == 0, p.stderr
    c = json.loads(p.stdout)["per_candidate"][0]
    assert (c["exit_code"], c["limits_hit"], c["refusals"]["total"], c["secrets"]) == (
        None, ["memory"], 0, 0)
    assert c["log"] == "none"


def test_labels_reach_the_results_never_the_key(root_caller):
    tasks = [{"id": "a", "code": "print(1)", "language": "python",
              "labels": {"model": "m1", "prompt": "p7"}},
             {"id": "b", "code": "print(1)", "language": "python"}]
    d, out = run_batch(root_caller, tasks)
    first = results(os.path.join(out, "results.jsonl"))
    assert [r["labels"] for r in first] == [{"model": "m1", "prompt": "p7"}, {}]
    assert first[0]["key"] == first[1]["key"]  # the same run: labels are not in it
    tasks[0]["labels"]["model"] = "m2"
    write_tasks(os.path.join(d, "tasks.jsonl"), tasks)
    p = root_caller.vigil_raw("batch", "tasks.jsonl", "--out", out, cwd=d)
    assert p.returncode == 0 and "0 run, 2 already done" in p.stderr, p.stderr
    again = results(os.path.join(out, "results.jsonl"))
    assert again[0]["labels"]["model"] == "m2" and again[0]["key"] == first[0]["key"]
    assert again[0]["start_time"] == first[0]["start_time"]
    # the Python package reads them too
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import vigil as vigil_py
    assert vigil_py.Result.from_dict(again[0]).labels == {"model": "m2", "prompt": "p7"}
    for bad, message in [({"a b": "x"}, "not a label name"), ({"m": 1}, "must be a string"),
                         ([], "must be an object")]:
        write_tasks(os.path.join(d, "bad.jsonl"), [{"id": "x", "argv": ["true"], "labels": bad}])
        p = root_caller.vigil_raw("batch", "bad.jsonl", "--out", os.path.join(d, "o2"), cwd=d)
        assert p.returncode == 2 and "bad.jsonl:1: " in p.stderr and message in p.stderr
        assert not os.path.exists(os.path.join(d, "o2"))


SOAK_CANDIDATES = 1000
SOAK_GROUPS = ["model-a", "model-b", "model-c"]


@pytest.mark.soak
def test_a_1000_candidate_batch_in_three_groups(root_caller, tmp_path):
    """1,000 candidates in three groups, each group trying a mix of its own:
    every number of the report equals the count made from the logs, and
    the page opens in chromium with its plots."""
    kinds = [SECRET, CONNECT, NAME, WRITE, DELETE, PROGRAM, HOME_SECRET, "print(1)\n"]
    tasks = []
    for i in range(SOAK_CANDIDATES):
        g = i % len(SOAK_GROUPS)
        # each group leans to some kinds: the groups differ
        code = kinds[(i // len(SOAK_GROUPS) + g * (i % 2)) % len(kinds)]
        tasks.append({"id": "c%04d" % i, "code": code + "# %d\n" % i, "language": "python",
                      "labels": {"model": SOAK_GROUPS[g]}})
    d, out = run_batch(root_caller, tasks, jobs=4, timeout=3600)
    recs, fleet, groups, _ = independent(out)
    p = report(root_caller, out, "--by", "model", "--json", timeout=600)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["candidates"] == SOAK_CANDIDATES
    check_group(rep["fleet"], fleet)
    assert [g["name"] for g in rep["groups"]] == SOAK_GROUPS
    for g in rep["groups"]:
        check_group(g, groups[g["name"]])
    page = os.path.join(d, "report.html")
    assert report(root_caller, out, "--by", "model", "-o", page,
                                 timeout=600).returncode == 0
    check_page(tempfile.mkdtemp(dir=str(tmp_path)), page, groups, {g: g for g in groups})
