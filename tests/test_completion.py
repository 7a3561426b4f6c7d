"""The bash completion `vigil completion bash` prints, driven in a real
bash the way readline drives it (COMP_WORDS, COMP_CWORD, then the
function `complete` registered): it offers the commands, every option each
command's --help lists, fixed values, and the shipped policies by name."""
import os
import re
import subprocess

import pytest

from helpers import ROOT

VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
COMMANDS = ["run", "check", "log", "view", "batch", "learn", "recheck", "verify", "report",
            "serve", "submit", "image"]


def complete(*words):
    """What bash offers for the command line `vigil WORDS...` (the last word
    is the one being completed)."""
    line = ["vigil", *words]
    script = subprocess.run([VIGIL, "completion", "bash"], capture_output=True, text=True,
                            check=True).stdout
    drive = (script + "\nCOMP_WORDS=(" + " ".join("'%s'" % w for w in line) + ")\n"
             "COMP_CWORD=%d\n" % (len(line) - 1) +
             "fn=$(complete -p vigil | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p')\n"
             "\"$fn\" vigil '%s' '%s'\n" % (line[-1], line[-2]) +
             "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    r = subprocess.run(["bash", "--norc", "-c", drive], capture_output=True, text=True,
                       cwd="/", timeout=30)
    assert r.returncode == 0 and r.stderr == "", r
    return sorted(set(x for x in r.stdout.splitlines() if x))


def help_options(cmd):
    out = subprocess.run([VIGIL, cmd, "--help"], capture_output=True, text=True).stdout
    return set(re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)", out, re.M))


def test_commands_complete():
    assert complete("") == sorted(COMMANDS + ["completion", "help"])
    assert complete("ba") == ["batch"]
    assert complete("help", "l") == ["learn", "log"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_option_in_help_completes(cmd):
    offered = set(complete(cmd, "--"))
    assert help_options(cmd) <= offered, help_options(cmd) - offered
    assert len(help_options(cmd)) > 1


def test_values_complete():
    assert complete("run", "--engine", "") == ["notify", "ptrace"]
    assert complete("run", "--mode", "d") == ["dry-run"]
    assert complete("batch", "--progress", "a") == ["always", "auto"]
    shipped = subprocess.run([VIGIL, "check", "--list"], capture_output=True, text=True).stdout
    names = sorted(line.split()[0] for line in shipped.splitlines())
    assert "python" in names
    assert set(names) <= set(complete("run", "-p", ""))
    assert complete("run", "--policy", "pyt") == ["python"]
    assert complete("run", "--timeout", "") == []   # a duration: nothing to offer


def test_completion_needs_a_shell():
    r = subprocess.run([VIGIL, "completion"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "bash" in r.stderr
