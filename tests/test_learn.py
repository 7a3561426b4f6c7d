"""`vigil learn` (issue 12): a dry run of a real Python candidate (it reads
an input from a bound data directory, writes in its workdir, runs a tool
the default policy refuses and reports to a host listener), the policy
learned from its log, and an enforcing run under that policy with no
refusal at all.  The learned policy must not let more through: a variant
that also reads ~/.ssh (a key with a random token in a HOME the test
controls) or connects to a second listener is refused, judged from
outside (the token never shows, the listener hears nothing) and from the
log.  The output passes `vigil check --strict`; `--diff` gives what a
policy lacks.  As root and as nobody."""
import os
import re
import shutil
import tempfile
import uuid

import pytest

from helpers import (Listener, caller, nobody_caller, root_caller, syscalls)  # noqa: F401
from outside import outside, tun_for_nobody  # noqa: F401

CAND = "learn_task.py"
REFUSED = ("deny", "kill", "would-deny", "would-kill")


class Task:
    """The candidate, its data directory and its listeners, for one caller."""

    def __init__(self, caller, outside):
        self.caller = caller
        self.outside = outside
        self.data = caller.dir("data")
        with open(os.path.join(self.data, "input.txt"), "w") as f:
            f.write("hello learn\n")
        os.chmod(os.path.join(self.data, "input.txt"), 0o644)
        self.listener = Listener(outside)  # the sandbox has its own loopback
        self.cand = caller.cand(CAND)

        # a HOME outside /tmp: the sandbox's /tmp is $TMP, which the
        # default policy lets the candidate read before it looks at ~
        self.home = tempfile.mkdtemp(prefix="vigil-learn-home-", dir="/var/tmp")
        os.chmod(self.home, 0o755)

    def run(self, *extra, opts=()):
        return self.caller.run("python3", self.cand, "/data", self.outside.addr,
                               str(self.listener.port), *extra,
                               opts=("--bind", f"{self.data}:/data", *opts),
                               env={"HOME": self.home})

    def ssh_key(self, text):
        """HOME/.ssh/id_rsa holding text, and the --bind that shows it."""
        ssh = os.path.join(self.home, ".ssh")
        os.makedirs(ssh, mode=0o755, exist_ok=True)
        key = os.path.join(ssh, "id_rsa")
        with open(key, "w") as f:
            f.write(text + "\n")
        os.chmod(key, 0o644)
        return key, ("--bind", f"{ssh}:{ssh}")

    def close(self):
        self.listener.close()
        shutil.rmtree(self.home, ignore_errors=True)


@pytest.fixture
def task(caller, outside, tun_for_nobody):  # noqa: F811
    t = Task(caller, outside)
    yield t
    t.close()


def learn(caller, log, *opts):
    p = caller.vigil_raw("learn", log, *opts, env={"HOME": "/nonexistent"})
    assert p.returncode == 0, p.stderr
    return p


def learned_policy(task):
    dry = task.run(opts=("--dry-run",))
    assert dry.result["denied"] > 0, dry          # the default policy lacks a lot
    path = os.path.join(task.caller.dir("pol"), "task.policy")
    learn(task.caller, dry.log_path, "-o", path)
    return dry, path


def refusals(run):
    return [r for r in syscalls(run.recs) if r["decision"] in REFUSED]


def rules(path):
    with open(path) as f:
        return [ln.strip() for ln in f if ln.startswith("allow ")]


def test_learned_policy_allows_the_run_and_nothing_else(task):
    caller = task.caller
    dry, policy = learned_policy(task)
    check = caller.vigil_raw("check", "--strict", "--quiet", policy)
    assert check.returncode == 0 and check.stderr == "", check.stderr
    got = rules(policy)
    assert "allow read /data/**" in got, got
    assert "allow exec /usr/bin/sha256sum" in got, got
    assert f"allow connect tcp {task.outside.addr}:{task.listener.port}" in got, got
    with open(policy) as f:
        assert "include <default>" in f.read()

    before = len(task.listener.accepted)
    ok = task.run(opts=("-p", policy))
    assert ok.rc == 0 and "done" in ok.stdout and "refused" not in ok.stdout, ok
    assert refusals(ok) == [] and ok.result["denied"] == 0, refusals(ok)
    assert len(task.listener.accepted) == before + 1

    # the same policy refuses a key it never granted ...
    token = "vigil-learn-token-" + uuid.uuid4().hex
    key, bind = task.ssh_key(token)
    bad = task.run("--ssh", key, opts=("-p", policy, *bind))
    assert token not in bad.stdout and token not in bad.stderr, bad
    assert "key refused" in bad.stdout, bad
    assert any(r["args"].get("resolved") == key and r["decision"] == "deny"
               for r in refusals(bad)), refusals(bad)

    # ... and a port it never saw
    other = Listener(task.outside)
    try:
        bad = task.run("--port2", str(other.port), opts=("-p", policy))
        assert "port2 refused" in bad.stdout, bad
        assert other.accepted == []
        assert any(r["class"] == "connect" and r["args"].get("port") == other.port
                   for r in refusals(bad)), refusals(bad)
    finally:
        other.close()


def test_probes_and_secrets_never_become_rules(task):
    caller = task.caller
    key, bind = task.ssh_key("not a key")
    dry = task.run("--ssh", key, opts=("--dry-run", *bind))
    probes = [r for r in syscalls(dry.recs) if r.get("probe")]
    assert probes, "a Python start looks up files that do not exist"
    text = learn(caller, dry.log_path).stdout
    allow = [ln for ln in text.splitlines() if ln.startswith("allow ")]
    assert not any(".ssh" in ln for ln in allow), allow
    assert re.search(r"^# not learned \(a secret .*\): read " + re.escape(key) + "$", text, re.M), text
    probe_paths = {r["args"]["resolved"] for r in probes}
    assert not any(ln.split(None, 2)[2] in probe_paths for ln in allow), allow


def test_diff_prints_what_a_policy_lacks(task):
    caller = task.caller
    dry, policy = learned_policy(task)
    lack = learn(caller, dry.log_path, "--diff", "default").stdout
    assert sorted(ln for ln in lack.splitlines() if ln.startswith("allow ")) == sorted(rules(policy))
    assert "version" not in lack and "include" not in lack
    assert learn(caller, dry.log_path, "--diff", policy).stdout.strip() == ""


def test_output_never_replaces_a_file_vigil_did_not_write(task):
    caller = task.caller
    dry = task.run(opts=("--dry-run",))
    path = os.path.join(caller.dir("pol"), "mine.policy")
    with open(path, "w") as f:
        f.write("version 1\n# my own policy\n")
    p = caller.vigil_raw("learn", dry.log_path, "-o", path)
    assert p.returncode == 1, p
    with open(path) as f:
        assert f.read() == "version 1\n# my own policy\n"


def test_standalone_when_the_run_policy_is_not_shipped(task):
    """A run under a policy of the caller's own: the learned policy stands
    alone (default deny, no include) and still lets the same run do
    everything, the kernel's Landlock layer included (the script named on
    the command line gets its own rule).  What it still refuses are probes
    only, each failing with ENOENT exactly as the lookup did."""
    caller = task.caller
    own = os.path.join(caller.dir("pol"), "own.policy")
    with open(own, "w") as f:
        f.write("version 1\nallow read /**\nallow write $WORK/**\n"
                "allow exec /usr/bin/python3*\ndefault deny\n")
    os.chmod(own, 0o644)
    dry = task.run(opts=("--dry-run", "-p", own))
    policy = os.path.join(caller.dir("pol"), "task.policy")
    learn(caller, dry.log_path, "-o", policy)
    with open(policy) as f:
        text = f.read()
    assert "include" not in text and text.rstrip().endswith("default deny"), text
    got = rules(policy)
    # (the nobody caller's copy of the candidate lies in /tmp: $TMP/**)
    assert f"allow read {task.cand}" in got or (task.cand.startswith("/tmp/") and
                                                "allow read $TMP/**" in got), got
    check = caller.vigil_raw("check", "--strict", "--quiet", policy)
    assert check.returncode == 0 and check.stderr == "", check.stderr
    before = len(task.listener.accepted)
    ok = task.run(opts=("-p", policy))
    assert ok.rc == 0 and "done" in ok.stdout and "refused" not in ok.stdout, ok
    assert len(task.listener.accepted) == before + 1
    assert all(r.get("probe") is True and r.get("errno") == 2 for r in refusals(ok)), refusals(ok)


def test_a_learned_policy_includes_a_shipped_one_by_name(caller):
    """A dry run under `-p python` that runs a program python.policy does
    not allow: the learned policy builds on it as `include <python>`, as
    a user writes it (never the path of this checkout's or this
    install's copy), and the same run under it is refused nothing."""
    d = caller.dir("learn_named")
    data = os.path.join(d, "data.txt")
    with open(data, "w") as f:
        f.write("learned\n")
    cand = os.path.join(d, "cand.py")
    with open(cand, "w") as f:
        # nproc: a program the default policy does not allow
        f.write("import subprocess, sys\nsubprocess.run(['/usr/bin/nproc'], stdout=subprocess.DEVNULL)\n"
                "print(open(sys.argv[1]).read().strip())\n")
    dry = caller.run("python3", cand, data, opts=["-p", "python", "--dry-run"], cwd=d)
    assert dry.rc == 0 and dry.result["denied"] > 0, dry
    path = os.path.join(caller.dir("pol"), "learned.policy")
    learn(caller, dry.log_path, "-o", path)
    with open(path) as f:
        text = f.read()
    includes = [ln for ln in text.splitlines() if ln.startswith("include ")]
    assert includes == ["include <python>"], text
    ok = caller.run("python3", cand, data, opts=["-p", path], cwd=d)
    assert ok.rc == 0 and ok.stdout == "learned\n" and ok.result["denied"] == 0, ok
