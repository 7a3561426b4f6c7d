"""Nothing from the candidate, its log or vigil's input reaches the
reviewer's terminal raw.  A candidate (candidates/attack_terminal.py) puts
an OSC title change, a clear-screen CSI, a forged "vigil: ok" line, a bidi
override, invalid UTF-8, DEL and a C1 CSI in every name it can: its process
name, files it creates and opens, a unix socket address, a DNS name, a
program it runs, that program's argv and environment, the path a policy
kills on, the interpreter the exec check kills.  Then whatever vigil prints
of it (its stderr with and without -q, the summary and kill reason, `vigil
log` as text, JSON and summary, `vigil learn`, `vigil check` of a policy
whose file names hold the bytes, error messages naming paths and options,
`vigil batch` refusing a hostile task id) is read as bytes: none holds a
control byte but newline, a C1 control, a bidi control, a line separator or
invalid UTF-8, and no line is the forged "vigil: ok".  The log itself keeps
the candidate's bytes as they were (it is data).  Run under both engines,
whose kill paths differ."""
import json
import os
import subprocess
import unicodedata

import pytest

from helpers import IMAGE, decode_log, fails_on_hold, root_caller  # noqa: F401
from test_viewer import term  # noqa: F401

HOSTILE = b"\x1b]0;pwned\x07\x1b[2J\nvigil: ok\n\xe2\x80\xae\xff\xfe\x7f\xc2\x9b\x9b"
NO_NL = HOSTILE.replace(b"\n", b"")
WORD = NO_NL.replace(b" ", b"_")  # one policy word: a line, split at spaces
FORGED = "vigil: ok"
# what a terminal must never get raw, decoded: bidi controls and separators
BIDI = {0x061c, 0x200e, 0x200f, *range(0x202a, 0x202f), *range(0x2066, 0x206a)}
SEPARATORS = {0x2028, 0x2029}
ENGINES = ["notify", "ptrace"]


def unsafe(out):
    """What in `out` (bytes a vigil command wrote) a terminal would act on:
    a list of (offset, what), empty when the bytes are safe to show."""
    try:
        text = out.decode("utf-8")
    except UnicodeDecodeError as e:
        return [(e.start, f"invalid UTF-8 {out[e.start:e.start + 4]!r}")]
    bad = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        if (cp < 0x20 and ch != "\n") or cp == 0x7f or 0x80 <= cp <= 0x9f:
            bad.append((i, f"control U+{cp:04X}"))
        elif cp in BIDI or cp in SEPARATORS or unicodedata.category(ch) == "Zl":
            bad.append((i, f"bidi/separator U+{cp:04X}"))
    bad += [(0, "forged line")] if FORGED in text.split("\n") else []
    return bad


def assert_safe(what, out):
    bad = unsafe(out)
    assert not bad, (what, bad[:5], out[:2000])


def vigil(caller, *args, cwd=None, timeout=120):
    """vigil ARGS as the caller, output as bytes (nothing decoded away)."""
    return subprocess.run(caller.argv(list(args)), env=caller.env(), cwd=cwd or caller.home,
                          capture_output=True, timeout=timeout)


def policy(c, text):
    path = os.path.join(c.dir("pol"), "t.policy")
    with open(path, "w") as f:
        f.write("version 1\n" + text + "include <default>\n")
    os.chmod(path, 0o644)
    return path


def run(c, engine, mode, *args, pol=None, quiet=True, name=b"run"):
    """vigil run of the candidate; the log and result are NAME.msgpack and
    NAME.json in a fresh directory."""
    d = c.dir("run").encode()
    log, res = os.path.join(d, name + b".msgpack"), os.path.join(d, name + b".json")
    p = vigil(c, "run", *(["-q"] if quiet else []), "--engine", engine, "-o", log,
              "--result", res, *(["-p", pol] if pol else []), "--",
              "python3", c.cand("attack_terminal.py"), mode, *args, cwd=d)
    return p, log, res


def raw_strings(recs):
    """Every string and byte string in the decoded log, as bytes."""
    out = []

    def walk(v):
        if isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, str):
            out.append(v.encode("utf-8", "surrogateescape"))
        elif isinstance(v, bytes):
            out.append(v)
    walk(recs)
    return out


@pytest.mark.parametrize("engine", ENGINES)
@fails_on_hold("its log and result are named with bytes that are not UTF-8, and a request is JSON text")
def test_candidate_names_reach_no_terminal_raw(root_caller, engine):
    c = root_caller
    # the second run's log, result and policy have hostile names of their
    # own: the summary names them, the log's header and vigil learn too
    pol = os.path.join(c.dir("pol").encode(), b"p" + HOSTILE + b".policy")
    with open(pol, "wb") as f:
        f.write(b"version 1\ninclude <default>\n")
    for quiet, opts in ((True, {}), (False, {"pol": pol, "name": HOSTILE})):
        p, log, res = run(c, engine, "touch", quiet=quiet, **opts)
        assert p.returncode == 0, p.stderr
        assert_safe(f"vigil run stderr quiet={quiet}", p.stderr)
        assert_safe("vigil run stdout", p.stdout)
    assert b"\\x1b]0;pwned" in p.stderr  # the summary names the log, escaped
    # the log is data: the candidate's bytes are there as they were
    strings = raw_strings(decode_log(log))
    assert any(HOSTILE in s for s in strings), "the log lost the raw names"
    text = vigil(c, "log", "--all", log)
    assert text.returncode == 0 and b"\\x1b]0;pwned" in text.stdout, text
    assert_safe("vigil log", text.stdout + text.stderr)
    js = vigil(c, "log", "--json", log)
    assert js.returncode == 0, js
    assert_safe("vigil log --json", js.stdout + js.stderr)
    decoded = raw_strings([json.loads(line) for line in js.stdout.decode().splitlines()])
    assert any(b"\x1b]0;pwned" in v for v in decoded), "JSON must keep the value"
    summ = vigil(c, "log", "--summary", log)
    assert_safe("vigil log --summary", summ.stdout + summ.stderr)
    learned = vigil(c, "learn", log)
    assert_safe("vigil learn", learned.stdout + learned.stderr)
    # every line the learned policy holds is one rule or one comment of
    # plain ASCII: no name split it into a rule of the candidate's making
    # (on an image root, one more: the run's image, by digest)
    image = ["image " + c.image()] if IMAGE else []
    for line in learned.stdout.decode().splitlines():
        assert line.isascii() and (line.startswith("#") or line in image or line.split()[0] in (
            "version", "allow", "include", "default")), line
    pol = os.path.join(c.dir("learned"), "learned.policy")
    with open(pol, "wb") as f:
        f.write(learned.stdout)
    chk = vigil(c, "check", pol)
    assert chk.returncode == 0, chk
    assert_safe("vigil check of the learned policy", chk.stdout + chk.stderr)


@pytest.mark.parametrize("engine", ENGINES)
def test_policy_kill_reason_reaches_no_terminal_raw(root_caller, engine):
    """The path a kill rule ends the run on is in the reason vigil prints,
    escaped, with and without -q."""
    pol = policy(root_caller, "kill read /etc/vigil-kill-*\n")
    for quiet in (True, False):
        p, log, res = run(root_caller, engine, "kill", "vigil-kill-", pol=pol, quiet=quiet)
        assert p.returncode == 137, p.stderr
        assert_safe(f"kill reason quiet={quiet}", p.stderr)
        assert b"vigil-kill-\\x1b]0;pwned" in p.stderr, p.stderr  # said, escaped
    with open(res) as f:
        assert "\x1b]0;pwned" in json.load(f)["error"]  # JSON keeps the value


@pytest.mark.parametrize("engine", ENGINES)
def test_exec_check_reason_reaches_no_terminal_raw(root_caller, engine):
    """The exec check kills an interpreter whose name is hostile: its
    reason names it escaped."""
    pol = policy(root_caller, "allow exec $TMP/s.sh\n")
    for quiet in (True, False):
        p, log, res = run(root_caller, engine, "execcheck", pol=pol, quiet=quiet)
        assert p.returncode == 137 and b"exec check" in p.stderr, p.stderr
        assert_safe(f"exec check reason quiet={quiet}", p.stderr)
        assert b"\\x1b]0;pwned" in p.stderr, p.stderr


def test_viewer_shows_hostile_names_escaped(root_caller, term):
    """`vigil view` of the same log, in a real terminal (tmux): the detail
    pane of a hostile name (which draws the fields one character at a
    time) holds no bidi override or C1 control, and the candidate did not
    get to set the window title.  (The rows are vigil log's text, ASCII.)"""
    p, log, res = run(root_caller, "notify", "touch")
    assert p.returncode == 0, p.stderr
    t = term(log.decode(), width=250)  # wide: the whole name is on the row
    t.wait("header")
    t.keys("/")
    t.wait("/")
    t.type("pwned")
    t.keys("Enter")
    t.wait("pwned")
    t.keys("Enter")
    screen = t.wait("bytes at offset", what="the detail pane")
    assert "\\x1b]0;pwned" in screen, screen  # there, escaped
    assert_safe("vigil view detail", screen.encode())
    title = t.tmux("display-message", "-p", "#{pane_title}").stdout
    assert "pwned" not in title, title


def test_check_of_a_hostile_policy_file_reaches_no_terminal_raw(root_caller):
    """`vigil check` of a file whose name (newline and all) and include and
    rules hold the bytes: the listing, the warnings and the errors."""
    c = root_caller
    d = c.dir("hostile")
    inc = b"inc" + WORD + b".policy"
    with open(os.path.join(d.encode(), inc), "wb") as f:
        pat = b"/x" + WORD.replace(b"[", b"\\[")  # a literal '[' in a pattern
        f.write(b"version 1\nallow read " + pat + b"\nallow read " + pat + b"\n")
    top = os.path.join(d.encode(), b"p" + HOSTILE + b".policy")
    with open(top, "wb") as f:
        f.write(b"version 1\ninclude " + inc + b"\nbind /b" + WORD.replace(b"[", b"") + b"\n"
                b"env set X=" + WORD + b"\n")
    chk = vigil(c, "check", top)
    assert b"\\x1b]0;pwned" in chk.stdout, chk
    assert_safe("vigil check listing", chk.stdout + chk.stderr)
    missing = os.path.join(d.encode(), b"m" + HOSTILE + b".policy")
    with open(missing, "wb") as f:
        f.write(b"version 1\ninclude gone" + WORD + b".policy\n")
    chk = vigil(c, "check", missing)
    assert chk.returncode == 1 and chk.stderr, chk
    assert_safe("vigil check error", chk.stdout + chk.stderr)


ARGS_NAMING_PATHS = [
    ["run", "-p", b"/nonexistent/" + HOSTILE, "--", "true"],
    ["run", "--workdir", b"/nonexistent/" + HOSTILE, "--", "true"],
    ["run", "--artifact", b"/nonexistent/" + HOSTILE, "--", "true"],
    ["run", "--", b"/nonexistent/" + HOSTILE],
    ["run", b"--" + NO_NL],
    ["log", b"/nonexistent/" + HOSTILE],
    ["log", "--class", HOSTILE, "/dev/null"],
    ["learn", b"/nonexistent/" + HOSTILE],
    ["learn", b"--" + NO_NL],
    ["view", b"/nonexistent/" + HOSTILE],
    ["check", b"/nonexistent/" + HOSTILE],
    ["check", b"--" + NO_NL],
    ["batch", b"/nonexistent/" + HOSTILE, "--out", "/tmp/x"],
    [HOSTILE],
]


@pytest.mark.parametrize("args", ARGS_NAMING_PATHS, ids=lambda a: a[0] if isinstance(a[0], str) else "cmd")
def test_errors_naming_hostile_input_reach_no_terminal_raw(root_caller, args):
    p = vigil(root_caller, *args, timeout=60)
    assert p.returncode != 0 and p.stderr, p
    assert_safe(f"vigil {args[0]!r} error", p.stdout + p.stderr)


def test_batch_with_hostile_task_id_and_key_reaches_no_terminal_raw(root_caller):
    c = root_caller
    d = c.dir("batch")
    h = HOSTILE.decode("utf-8", "surrogateescape").encode("utf-8", "surrogateescape")
    text = h.decode("latin-1")  # every byte a code point: JSON \\u escapes for the controls
    for task in ({"id": text, "argv": ["true"]}, {"id": "ok", "argv": ["true"], text: 1},
                 {"id": "ok", "argv": ["true"], "policy": "/nonexistent/" + text}):
        tasks = os.path.join(d, "tasks.jsonl")
        with open(tasks, "w") as f:
            f.write(json.dumps(task) + "\n")
        p = vigil(c, "batch", tasks, "--out", os.path.join(d, "out"), timeout=120)
        assert p.returncode != 0 and p.stderr, p
        assert_safe("vigil batch", p.stdout + p.stderr)
