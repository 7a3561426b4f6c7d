"""`vigil log` and the run-log format (docs/FORMAT.md) on synthetic logs
made by build/bench/genlog through the real writer.  Python's own msgpack
is the independent reader: what it sees is the contract."""
import io
import json
import os
import random
import re
import subprocess
import time

import msgpack
import pytest

from conftest import ROOT, VIGIL

GENLOG = os.path.join(ROOT, "build", "bench", "genlog")
TYPES = {"header", "syscall", "proc", "note", "trailer"}
CLASSES = {"read", "write", "exec", "connect", "bind", "send", "system"}
DECISIONS = {"allow", "deny", "kill", "would-deny", "would-kill"}
REFUSALS = {"deny", "kill", "would-deny", "would-kill"}


@pytest.fixture(scope="session")
def genlog():
    if not os.path.exists(GENLOG):
        subprocess.run(["make", "-s", "build/bench/genlog"], cwd=ROOT, check=True)
    def make(path, n, *extra):
        subprocess.run([GENLOG, str(path), str(n), *extra], check=True)
        return str(path)
    return make


@pytest.fixture(scope="session")
def log(genlog, tmp_path_factory):
    return genlog(tmp_path_factory.mktemp("log") / "run.msgpack", 3000, "--seed", "7")


def unpack(path):
    """Records and the byte offset where each one ends."""
    with open(path, "rb") as f:
        up = msgpack.Unpacker(f, raw=False)
        recs, ends = [], []
        for r in up:
            recs.append(r)
            ends.append(up.tell())
    return recs, ends


def as_json_value(v):
    """What `vigil log --json` prints for a decoded value: bin (a string
    that was not UTF-8) becomes text with U+FFFD for the bad bytes; a
    record's chain value and signature (bin on disk) become hex."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, dict):
        return {k: x.hex() if k in ("chain", "sig") and isinstance(x, bytes) else as_json_value(x)
                for k, x in v.items()}
    if isinstance(v, list):
        return [as_json_value(x) for x in v]
    return v


def vlog_json(vigil, *args):
    r = vigil("log", "--json", *args)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines()]


def test_schema(log):
    recs, _ = unpack(log)
    assert recs[0]["type"] == "header" and recs[-1]["type"] == "trailer"
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    ts = [r["ts"] for r in recs]
    assert ts == sorted(ts)
    for r in recs:
        assert r["type"] in TYPES
        assert isinstance(r["ts"], int) and r["ts"] >= 0
        # unset fields are left out, never written as nil (except "rule")
        assert all(v is not None for k, v in r.items() if k != "rule"), r
    h = recs[0]
    assert h["format"] == 1
    for key in ("vigil", "start_wall", "start_mono", "kernel", "argv", "cwd", "mode",
                "engine", "policy", "limits", "artifacts", "resolved"):
        assert key in h, key
    assert set(h["policy"]) == {"path", "sha256", "text"}
    assert all(set(l) == {"name", "value", "enforced_by"} for l in h["limits"])
    sys = [r for r in recs if r["type"] == "syscall"]
    assert {r["class"] for r in sys} == CLASSES
    assert {r["decision"] for r in sys} == DECISIONS
    for r in sys:
        for key in ("pid", "tid", "hpid", "htid", "proc", "nr", "name", "class", "decision", "rule"):
            assert key in r, (key, r)
        if r["rule"] is not None:
            assert set(r["rule"]) == {"file", "line", "text"}
        for fr in r.get("stack", []):
            assert "pc" in fr and set(fr) <= {"pc", "module", "sym", "off"}
        if r["decision"] != "allow":
            assert 3 <= len(r["stack"]) <= 8
    kinds = {r["kind"] for r in recs if r["type"] == "proc"}
    assert kinds == {"start", "exec", "exit"}
    t = recs[-1]
    assert t["events"] == len(recs) - 1
    assert sum(c["n"] for c in t["counts"]) == len(sys)
    # a path that is not UTF-8 is stored as bin, byte for byte
    odd = [r["args"]["path"] for r in sys if isinstance(r.get("args", {}).get("path"), bytes)]
    assert odd and all(p.startswith(b"/tmp/caf\xe9") for p in odd)


def test_json_equals_python_decoding(vigil, log):
    recs, _ = unpack(log)
    assert vlog_json(vigil, log) == [as_json_value(r) for r in recs]


@pytest.mark.parametrize("args, keep", [
    (["--deny"], lambda r: r["type"] == "syscall" and r["decision"] in REFUSALS),
    (["--class", "connect,exec"], lambda r: r.get("class") in ("connect", "exec")),
    (["--class", "proc", "--class", "read"], lambda r: r["type"] == "proc" or r.get("class") == "read"),
    (["--class", "note"], lambda r: r["type"] == "note"),
    (["--pid", "2"], lambda r: r["type"] != "header" and r.get("pid") == 2),
    (["--deny", "--class", "read", "--pid", "1"],
     lambda r: r.get("decision") in REFUSALS and r.get("class") == "read" and r.get("pid") == 1),
])
def test_filters(vigil, log, args, keep):
    recs, _ = unpack(log)
    want = [as_json_value(r) for r in recs if r["type"] != "header" and keep(r)]
    assert want, "the filter should select something in a genlog log"
    assert vlog_json(vigil, *args, log) == want


def test_text_one_line_per_record(vigil, log):
    recs, _ = unpack(log)
    r = vigil("log", log)
    assert r.returncode == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert len(lines) == len(recs)
    assert all(re.match(r"^\+\d+\.\d{6} ", l) for l in lines)
    assert "\x1b[" not in r.stdout  # not a terminal: no colours
    for line, rec in zip(lines, recs):
        if rec["type"] == "syscall":
            assert f"-> {rec['decision']} " in line
    assert lines[0].split()[1] == "header" and lines[-1].split()[1] == "trailer"
    deny = [l for l, rec in zip(lines, recs) if rec.get("decision") == "deny" and rec["class"] == "connect"]
    assert any("connect tcp 93.184.216.34:443 -> deny (default) EACCES" in l for l in deny)


def test_color(vigil, log):
    r = vigil("log", "--color", "always", "--deny", log)
    assert "\x1b[31mdeny\x1b[0m" in r.stdout
    r = vigil("log", "--color", "never", log, env={**os.environ, "NO_COLOR": "1"})
    assert "\x1b[" not in r.stdout


def test_truncated(vigil, genlog, tmp_path):
    path = genlog(tmp_path / "cut.msgpack", 500, "--truncate")
    recs, ends = unpack_prefix(path)
    size = os.path.getsize(path)
    assert ends[-1] < size  # genlog left half a record at the end
    r = vigil("log", path)
    assert r.returncode == 3
    assert len(r.stdout.splitlines()) == len(recs)
    assert r.stderr == (f"vigil: {path}: truncated at byte {ends[-1]}: no trailer "
                        "(supervisor killed or run still going)\n")


def test_no_trailer_at_record_boundary(vigil, log, tmp_path):
    recs, ends = unpack(log)
    path = tmp_path / "killed.msgpack"
    path.write_bytes(open(log, "rb").read()[:ends[100]])
    r = vigil("log", str(path))
    assert r.returncode == 3
    assert len(r.stdout.splitlines()) == 101
    assert f"truncated at byte {ends[100]}: no trailer" in r.stderr


def unpack_prefix(path):
    """Complete records of a possibly truncated file."""
    data = open(path, "rb").read()
    up = msgpack.Unpacker(io.BytesIO(data), raw=False)
    recs, ends = [], []
    try:
        for rec in up:
            recs.append(rec)
            ends.append(up.tell())
    except (msgpack.OutOfData, ValueError):
        pass
    return recs, ends


def test_corrupt_record(vigil, log, tmp_path):
    recs, ends = unpack(log)
    data = bytearray(open(log, "rb").read())
    data[ends[49]] = 0xc1  # the first byte of record 50: never valid msgpack
    path = tmp_path / "bad.msgpack"
    path.write_bytes(bytes(data))
    r = vigil("log", str(path))
    assert r.returncode == 3
    assert len(r.stdout.splitlines()) == 50
    assert r.stderr.startswith(f"vigil: {path}: corrupt record at byte {ends[49]}: ")
    assert r.stderr.count("\n") == 1


def test_random_corruption_never_crashes(vigil, genlog, tmp_path):
    path = genlog(tmp_path / "small.msgpack", 60, "--seed", "3")
    data = open(path, "rb").read()
    _, ends = unpack(path)
    rng = random.Random(1234)
    bad = tmp_path / "mut.msgpack"
    for i in range(150):
        mut = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            mut[rng.randrange(ends[0], len(mut))] = rng.randrange(256)
        if i % 5 == 0:
            mut = mut[:rng.randrange(ends[0], len(mut))]
        bad.write_bytes(bytes(mut))
        for args in ([], ["--json"]):
            r = vigil("log", *args, str(bad))
            assert r.returncode in (0, 3), (i, r.returncode, r.stderr)
            if not args:  # whatever the bytes, text output is plain, escape-free ASCII
                assert r.stdout.isascii() and "\x1b" not in r.stdout
            if r.returncode == 3:
                assert re.match(r"vigil: .*: (corrupt record|truncated) at byte \d+: ", r.stderr)


def test_not_a_log(vigil, tmp_path):
    p = tmp_path / "notes.txt"
    p.write_text("hello\n")
    r = vigil("log", str(p))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "not a vigil log" in r.stderr
    q = tmp_path / "note-first.msgpack"
    q.write_bytes(msgpack.packb({"type": "note", "seq": 0, "ts": 0, "what": "x"}))
    r = vigil("log", str(q))
    assert r.returncode == 2 and "not a vigil log" in r.stderr
    r = vigil("log", str(tmp_path / "missing.msgpack"))
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "No such file" in r.stderr


def test_unknown_record_types_are_skipped(vigil, log, tmp_path):
    recs, ends = unpack(log)
    data = open(log, "rb").read()
    extra = msgpack.packb({"type": "telemetry", "seq": 1, "ts": 0, "cpu": 0.5})
    p = tmp_path / "newer.msgpack"
    p.write_bytes(data[:ends[0]] + extra + data[ends[0]:])
    r = vigil("log", str(p))
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(recs)


@pytest.mark.parametrize("args", [["--bogus"], ["--pid", "x"], ["--class", "nope"],
                                  ["--color", "sometimes"], [], ["a", "b"]])
def test_usage_errors(vigil, log, args, tmp_path):
    # no FILE opens the latest run in the state dir: here, an empty one
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path)}
    r = vigil("log", *args, *([log] if args and args[0].startswith("-") else []), env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and r.stdout == ""


def test_help(vigil):
    r = vigil("log", "--help")
    assert r.returncode == 0 and "--follow" in r.stdout and "--deny" in r.stdout


@pytest.mark.parametrize("cmd", ["run", "check", "log", "view", "batch", "learn"])
def test_vigil_help_cmd_is_cmd_help(vigil, cmd):
    """`vigil help CMD` prints CMD's own help, as git's does."""
    own, via = vigil(cmd, "--help"), vigil("help", cmd)
    assert own.returncode == via.returncode == 0 and via.stdout == own.stdout
    assert via.stdout.startswith(f"usage: vigil {cmd}"), via.stdout


def test_follow(vigil, log, tmp_path):
    recs, ends = unpack(log)
    data = open(log, "rb").read()
    p = tmp_path / "growing.msgpack"
    cut = ends[10] + 7  # in the middle of a record
    p.write_bytes(data[:cut])
    proc = subprocess.Popen([VIGIL, "log", "--follow", str(p)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.5)
        assert proc.poll() is None, "a follower waits for the rest"
        with open(p, "ab") as f:
            f.write(data[cut:])
        out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert len(out.splitlines()) == len(recs)
