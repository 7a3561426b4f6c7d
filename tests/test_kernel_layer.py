"""The kernel layer alone: what holds when the supervisor lets a call
through.  A dry run is the supervisor saying yes to everything the policy
refuses (would-deny), so whatever is still refused in a dry run is refused
by the kernel (Landlock, the BPF program, the mounts), not by vigil's
decisions.  Root and nobody."""
import errno

from helpers import caller, marker, nobody_caller, root_caller, syscalls  # noqa: F401


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
