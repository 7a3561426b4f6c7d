"""The kernel layer alone: what holds when the supervisor lets a call
through.  A dry run is the supervisor saying yes to everything the policy
refuses (would-deny), so whatever is still refused in a dry run is refused
by the kernel (Landlock, the BPF program, the mounts), not by vigil's
decisions.  Root and nobody."""
import errno
import os

import pytest

from helpers import caller, marker, nobody_caller, root_caller, syscalls  # noqa: F401

# each engine installs its own filter: what holds beneath it, engine by engine (conftest.py: the rule)
pytestmark = pytest.mark.engines


def test_program_the_candidate_wrote_cannot_run_even_when_vigil_allows(caller):
    mark = marker()
    r = caller.run("python3", caller.cand("kernel_exec.py"), mark, opts=["--dry-run"])
    assert r.rc == 0, r
    assert mark not in r.stdout, r
    for dest in ("mine", "/tmp/mine"):
        line = [x for x in r.stdout.splitlines() if x.startswith("refused") and dest in x]
        assert line and line[0].endswith(str(errno.EACCES)), r
    # the supervisor did let them through: the refusal is Landlock's
    tried = [x for x in syscalls(r.recs) if x["class"] == "exec"
             and x["args"].get("resolved", "").endswith("/mine")]
    assert len(tried) == 2 and all(x["decision"] == "would-deny" for x in tried), tried


def test_programs_the_policy_allows_still_run(caller):
    r = caller.run("sh", "-c", "echo hi | /usr/bin/tr a-z A-Z")
    assert r.rc == 0 and r.stdout.strip() == "HI", r


def test_a_file_no_read_rule_grants_stays_unreadable_even_when_vigil_allows(caller):
    """A read rule on a path the sandbox does not have (/sys/devices/system/cpu,
    as default.policy has) must not become a Landlock rule on an ancestor
    ("/"), which would make every file readable: /etc, granted nowhere
    here, stays unreadable in a dry run."""
    pol = os.path.join(caller.dir("pol"), "narrow.policy")
    with open(pol, "w") as f:
        f.write("version 1\ndefault deny\n"
                "allow read $WORK/** $TMP/** /usr/** /proc/** /sys/devices/system/cpu/**\n"
                "allow read / /dev /bin /sbin /lib /lib64 /dev/{null,zero,urandom,tty}\n"
                "allow write $WORK/** $TMP/** /dev/null\n"
                "allow exec /usr/bin/{sh,dash,cat}\n")
    os.chmod(pol, 0o644)
    with open(caller.system_file("/etc/hostname")) as f:
        host = f.read().strip()
    r = caller.run("sh", "-c", "cat /etc/hostname; echo rc=$?", opts=["--dry-run", "-p", pol])
    assert "rc=1" in r.stdout and "Permission denied" in r.stderr, r
    assert host not in r.stdout.replace("rc=1", ""), r
    tried = [x for x in syscalls(r.recs) if x["args"].get("resolved") == "/etc/hostname"]
    assert tried and all(x["decision"] == "would-deny" for x in tried), tried


def test_what_vigil_shows_on_purpose_stays_readable_in_a_dry_run(caller):
    """A bound directory is what the user chose to show: the kernel lets the
    candidate read it even where the policy has no rule (the supervisor
    still judges each read), so a dry run of a task with inputs goes on."""
    d = caller.dir("inputs")
    with open(f"{d}/input", "w") as f:
        f.write("bound-input\n")
    os.chmod(f"{d}/input", 0o644)
    r = caller.run("sh", "-c", "cat /data/input", opts=["--dry-run", "--bind", f"{d}:/data"])
    assert r.rc == 0 and r.stdout.strip() == "bound-input", r
    tried = [x for x in syscalls(r.recs) if x["args"].get("resolved") == "/data/input"]
    assert tried and all(x["decision"] == "would-deny" for x in tried), tried


def test_files_named_on_the_command_line_stay_readable(caller):
    """The supervisor lets the candidate read its own command-line files
    whatever the policy says; Landlock grants them too."""
    d = caller.dir("cand")
    with open(f"{d}/c.py", "w") as f:
        f.write("print('cand-ok')\n")
    os.chmod(f"{d}/c.py", 0o644)
    r = caller.run("python3", f"{d}/c.py")
    assert r.rc == 0 and r.stdout.strip() == "cand-ok", r
