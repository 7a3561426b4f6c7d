"""The service log of `vigil serve` (docs/FORMAT.md, "The service log").

The logs are written by serve/svclog.c itself, through the small writer
program build/tests/test_svclog (tests/unit/test_svclog.c: `write DIR`, a
daemon's whole life with hostile strings; `flood DIR`, events until it is
killed).  Python's msgpack is the independent reader; `vigil log`,
`vigil verify` and `vigil view` (in tmux) must agree with it."""
import os
import re
import shutil
import signal
import subprocess
import time

import msgpack
import pytest

from conftest import ROOT
from test_log import as_json_value, vlog_json
from test_viewer import at_row, in_detail, open_viewer, read_records, status_counts, term  # noqa: F401

UNIT_DIR = os.environ.get("UNIT_DIR", os.path.join(ROOT, "build", "tests"))
WRITER = os.path.join(UNIT_DIR, "test_svclog")
KINDS = {"start", "stop", "accepted", "refused", "prepared", "assigned", "started", "finished",
         "cancelled", "lost", "destroyed", "deleted"}
# what tests/unit/test_svclog.c writes for its hostile user, run and reason
HOSTILE_USER = "mallory\x1b]0;pwned\x07"
HOSTILE_RUN = "r-1\x1b[2J\nuid 0"
HOSTILE_REASON = b"bad\r\nrequest \xe2\x80\xae\xff\xfe"   # not UTF-8: stored as bin
FLOOD_BYTES = 4 << 20   # kill the flood once this much is written


@pytest.fixture(scope="session")
def writer():
    if not os.access(WRITER, os.X_OK):
        subprocess.run(["make", "-s", "build/tests/test_svclog"], cwd=ROOT, check=True)
    return WRITER


def write_log(writer, where):
    r = subprocess.run([writer, "write", str(where)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


@pytest.fixture(scope="session")
def svc_log(writer, tmp_path_factory):
    return write_log(writer, tmp_path_factory.mktemp("svc") / "logs")


def unpack(path):
    """Every complete record and the offset where each ends."""
    with open(path, "rb") as f:
        up = msgpack.Unpacker(f, raw=False)
        recs, ends = [], []
        try:
            for r in up:
                recs.append(r)
                ends.append(up.tell())
        except msgpack.OutOfData:
            pass
    return recs, ends


def services(recs):
    return [r for r in recs if r["type"] == "service"]


def test_file_made_as_documented(svc_log):
    d = os.path.dirname(svc_log)
    assert os.stat(d).st_mode & 0o7777 == 0o700
    assert os.stat(svc_log).st_mode & 0o7777 == 0o600
    assert re.fullmatch(r"service-\d{8}T\d{6}Z-\d+\.msgpack", os.path.basename(svc_log))


def test_format_as_python_reads_it(svc_log):
    recs, _ = unpack(svc_log)
    h, t = recs[0], recs[-1]
    assert h["type"] == "header" and h["log"] == "service" and h["format"] == 1
    assert "argv" not in h and "policy" not in h   # no candidate here
    assert t["type"] == "trailer" and t["status"] == "ok" and t["events"] == len(recs) - 1
    assert t["seal"]["head"] == recs[-2]["chain"].hex()
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    svc = services(recs)
    assert len(svc) == len(recs) - 2 and {r["kind"] for r in svc} == KINDS
    walls = [r["wall"] for r in svc]
    assert walls == sorted(walls) and h["start_wall"] <= walls[0] <= time.time_ns()
    assert [r["ts"] for r in recs[1:]] == sorted(r["ts"] for r in recs[1:])
    for r in svc:
        assert all(v is not None for v in r.values()), r   # unset is left out
        assert ("uid" in r) == (r["kind"] not in ("start", "stop", "prepared", "destroyed"))
        assert ({"exit_code", "cpu", "elapsed"} <= set(r)) == (r["kind"] == "finished")
        assert ("retry_after" in r) == ("quota" in r)
    fin = next(r for r in svc if r["kind"] == "finished")
    assert (fin["status"], fin["exit_code"], fin["cpu"], fin["elapsed"]) == \
        ("ok", 0, 250_000_000, 1_500_000_000)
    by_quota = next(r for r in svc if r.get("quota"))
    assert (by_quota["user"], by_quota["quota"], by_quota["retry_after"]) == \
        ("bob", "concurrent", 30)
    root = next(r for r in svc if r["kind"] == "refused" and "quota" not in r)
    assert root["uid"] == 0 and root["reason"].startswith("malformed JSON")
    cold = [r for r in svc if r["kind"] == "assigned" and "slot" not in r]
    assert cold and cold[0]["host_uid"] == 200002
    # attacker-chosen strings are stored exactly as given
    cancelled = next(r for r in svc if r["kind"] == "cancelled")
    assert cancelled["user"] == HOSTILE_USER and cancelled["run"] == HOSTILE_RUN
    assert cancelled["reason"] == HOSTILE_REASON


def test_log_json_is_the_records(vigil, svc_log):
    recs, _ = unpack(svc_log)
    assert vlog_json(vigil, svc_log) == [as_json_value(r) for r in recs]


def test_log_text_one_safe_line_per_record(vigil, svc_log):
    recs, _ = unpack(svc_log)
    r = vigil("log", "--color", "always", svc_log)
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.split("\n")[:-1]
    assert len(lines) == len(recs)
    assert all(re.fullmatch(r"[\x20-\x7e]*", line) for line in lines), "a control byte got out"
    assert "service log started" in lines[0] and lines[-1].split()[1:3] == ["trailer", "ok"]
    for rec, line in zip(recs[1:-1], lines[1:-1]):
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(rec["wall"] // 10**9))
        assert line.split()[1].startswith(stamp) and line.split()[2] == rec["kind"], line
        if isinstance(rec.get("user"), str) and rec["user"].isalnum():
            assert " user %s " % rec["user"] in line
    cancelled = next(l for l in lines if " cancelled " in l)
    assert 'user "mallory\\x1b]0;pwned\\x07"' in cancelled
    assert 'run "r-1\\x1b[2J\\nuid 0"' in cancelled
    assert cancelled.endswith(": bad\\x0d\\nrequest \\xe2\\x80\\xae\\xff\\xfe")


@pytest.mark.parametrize("args, keep", [
    (["--kind", "refused"], lambda r: r["kind"] == "refused"),
    (["--deny"], lambda r: r["kind"] == "refused"),
    (["--kind", "finished,lost", "--kind", "start"], lambda r: r["kind"] in ("finished", "lost", "start")),
    (["--run", "r1"], lambda r: r.get("run") == "r1"),
    (["--run", HOSTILE_RUN], lambda r: r.get("run") == HOSTILE_RUN),
    (["--user", "alice"], lambda r: r.get("user") == "alice"),
    (["--user", "1001"], lambda r: r.get("uid") == 1001),
    (["--user", "0"], lambda r: r.get("uid") == 0),
    (["--user", "alice", "--kind", "finished"], lambda r: r.get("user") == "alice" and r["kind"] == "finished"),
    (["--class", "service"], lambda r: True),
])
def test_filters(vigil, svc_log, args, keep):
    recs, _ = unpack(svc_log)
    want = [as_json_value(r) for r in services(recs) if keep(r)]
    assert want, "the filter should select something"
    assert vlog_json(vigil, *args, svc_log) == want


@pytest.mark.parametrize("args, msg", [
    (["--kind", "bogus"], "unknown kind 'bogus'"),
    (["--summary"], "a service log: --summary is what a candidate tried"),
])
def test_usage_errors(vigil, svc_log, args, msg):
    r = vigil("log", *args, svc_log)
    assert r.returncode == 2 and r.stdout == "" and msg in r.stderr
    assert len(r.stderr.splitlines()) == 1


def test_verify_intact(vigil, svc_log):
    r = vigil("verify", svc_log)
    recs, _ = unpack(svc_log)
    assert r.returncode == 0 and "intact and sealed: %d records" % len(recs) in r.stdout


def check_cut(vigil, path):
    """A log cut anywhere: every complete record is read, and both vigil
    log and vigil verify say it is truncated after the last of them."""
    recs, ends = unpack(path)
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    assert recs[-1]["type"] != "trailer"
    r = vigil("log", path)
    assert r.returncode == 3 and len(r.stdout.splitlines()) == len(recs)
    assert r.stderr == ("vigil: %s: truncated at byte %d: no trailer "
                        "(daemon killed or still running)\n" % (path, ends[-1]))
    v = vigil("verify", path)
    assert v.returncode == 3 and "truncated after record %d" % recs[-1]["seq"] in v.stderr, v.stderr
    return recs, ends


def test_cut_in_the_middle_of_a_record(vigil, svc_log, tmp_path):
    _, ends = unpack(svc_log)
    data = open(svc_log, "rb").read()
    for k in (3, 9, len(ends) - 2):        # at a boundary, and in the middle of the next
        for cut in (ends[k], (ends[k] + ends[k + 1]) // 2):
            p = tmp_path / ("cut-%d.msgpack" % cut)
            p.write_bytes(data[:cut])
            recs, _ = check_cut(vigil, str(p))
            assert len(recs) == k + 1


def test_sigkill_mid_write(vigil, writer, tmp_path):
    """The daemon killed while it writes records of a few hundred kB:
    every complete record is readable, at most the last one is cut."""
    p = subprocess.Popen([writer, "flood", str(tmp_path)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    try:
        path = p.stdout.readline().strip()
        deadline = time.monotonic() + 20
        while os.path.getsize(path) < FLOOD_BYTES and time.monotonic() < deadline:
            time.sleep(0.005)
        p.send_signal(signal.SIGKILL)
    finally:
        p.kill()
        p.wait()
    assert os.path.getsize(path) >= FLOOD_BYTES
    recs, ends = check_cut(vigil, path)
    assert len(recs) > 20 and os.path.getsize(path) - ends[-1] < 300 * 1024


@pytest.mark.skipif(not shutil.which("tmux"), reason="tmux is not installed")
def test_view(term, svc_log):   # noqa: F811 (the fixture)
    records = read_records(svc_log)
    n = len(records)
    t = open_viewer(term, svc_log, width=140)
    s = t.wait("%d/%d" % (n, n))
    rows = s.split("\n")[1:n + 1]
    for (rec, _, _), row in zip(records[1:-1], rows[1:]):
        assert "service" in row and rec["kind"] in row, row
    # d: the refused requests are the denials of a service log
    t.keys("d")
    nref = sum(rec.get("kind") == "refused" for rec, _, _ in records)
    t.wait("%d/%d" % (nref, n))
    t.keys("d")
    t.wait("%d/%d" % (n, n))
    t.keys("g", "]")   # ] jumps to the next refusal
    at_row(t, next(i for i, (rec, _, _) in enumerate(records) if rec.get("kind") == "refused") + 1)
    # a run found by its id, its detail: the reason in full
    lost = next(i for i, (rec, _, _) in enumerate(records) if rec.get("kind") == "lost")
    t.keys("/")
    t.wait("/")
    t.type("r0")
    t.keys("Enter")
    at_row(t, lost + 1)
    t.keys("Enter")
    detail = in_detail(t, "unfinished when the daemon restarted").split(" detail ")[1]
    assert "service lost" in detail and "alice" in detail and "1000" in detail
    t.keys("Enter")
    # hostile strings reach the screen as text, not as terminal control
    t.keys("/")
    t.wait("/")
    t.type("mallory")
    t.keys("Enter")
    first = next(i for i, (rec, _, _) in enumerate(records) if rec.get("user") == HOSTILE_USER)
    at_row(t, first + 1)
    s = t.screen()
    assert "mallory\\x1b]0;pwned\\x07" in s and s.split("\n")[0].startswith("   TIME")
    assert status_counts(t) == (n, n)
    # s: the summary counts the steps by kind
    t.keys("s")
    s = t.wait("Service events")
    assert "Service log (vigil serve)" in s
    assert re.search(r"\b2  refused\b", s) and re.search(r"\b2  finished\b", s)
