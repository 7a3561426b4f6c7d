"""Policies that do what they say, under the real supervisor: a rule names
the object it spells, so `allow exec /usr/bin/python3` (a symlink to the
canonical /usr/bin/python3.11 the decider sees) lets python3 run, while
everything else stays refused; the log names the rule as written."""
import os

import pytest

from helpers import root_caller, syscalls  # noqa: F401

PYTHON = "/usr/bin/python3"
REAL = os.path.realpath(PYTHON)

pytestmark = pytest.mark.skipif(REAL == PYTHON, reason="/usr/bin/python3 is not a symlink here")


def policy(caller, text):
    path = os.path.join(caller.dir("pol"), "p.policy")
    with open(path, "w") as f:
        f.write("version 1\n" + text)
    return path


def test_symlink_rule_allows_its_target(root_caller):
    p = policy(root_caller, f"allow exec {PYTHON}\ndefault deny exec\ndefault allow read write\n")
    r = root_caller.run("python3", "-c", "print(1)", opts=["-p", p])
    assert r.rc == 0, r
    assert r.stdout == "1\n"
    execs = syscalls(r.recs, **{"class": "exec"})
    mine = [x for x in execs if x["args"].get("resolved") == REAL]
    assert mine and mine[0]["decision"] == "allow", execs
    # the rule is the one written, on its line, in its words
    assert mine[0]["rule"]["file"] == p and mine[0]["rule"]["line"] == 2
    assert mine[0]["rule"]["text"] == f"allow exec {PYTHON}"


def test_other_programs_stay_refused(root_caller):
    if not os.path.exists("/usr/bin/perl"):
        pytest.skip("no perl here")
    p = policy(root_caller, f"allow exec {PYTHON}\ndefault deny exec\ndefault allow read write\n")
    r = root_caller.run("/usr/bin/perl", "-e", "print 1", opts=["-p", p])
    assert r.rc == 126, r
    execs = syscalls(r.recs, **{"class": "exec"})
    assert execs and all(x["decision"] == "deny" for x in execs), execs
