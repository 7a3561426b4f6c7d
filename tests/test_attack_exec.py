"""Exec, attacked: a program the policy does not allow executing never runs
one instruction, whichever way the candidate gets the kernel to start it (a
#! line, a symlink swapped between the check and the exec, the command file
replaced in a writable workdir); the exec record holds the whole argv, or
says exactly what it left out (count, bytes, sha256); an argv vigil cannot
read is refused, never released.  Judged from outside (the denied program
prints VICTIM-RAN and creates a file first thing) and from the log.  Run as
root and as nobody."""
import hashlib
import os
import shutil
import subprocess

import pytest

from helpers import STORM_OPTS, caller, nobody_caller, root_caller, syscalls  # noqa: F401
from test_viewer import term  # noqa: F401

# the attacks race the engine's decision: engine by engine (conftest.py: the rule)
pytestmark = pytest.mark.engines

RAN = "VICTIM-RAN"
VICTIM_FLAGS = ["-static", "-nostdlib", "-O1"]


def policy(c, text):
    d = c.dir("pol")
    path = os.path.join(d, "exec.policy")
    with open(path, "w") as f:
        f.write("version 1\nallow read /**\nallow write $WORK/** $TMP/** /dev/null\n" + text)
    os.chmod(path, 0o644)
    return path


def workdir(c):
    """A --workdir the sandbox's user can write, holding the victim."""
    w = c.dir("work")
    os.chmod(w, 0o777)
    shutil.copy(c.build("attack_exec_victim", VICTIM_FLAGS), os.path.join(w, "victim"))
    os.chmod(os.path.join(w, "victim"), 0o755)
    return w


def workdir_with_command(c, name):
    """A workdir (see workdir) with the candidate NAME at sub/NAME, all of
    it writable by the sandbox: the command a candidate can replace."""
    w = workdir(c)
    os.makedirs(os.path.join(w, "sub"))
    os.chmod(os.path.join(w, "sub"), 0o777)
    cmd = os.path.join(w, "sub", name)
    shutil.copy(c.build(name), cmd)
    os.chmod(cmd, 0o755)
    return w


def notes(recs, what):
    return [x for x in recs if x["type"] == "note" and x["what"] == what]


def assert_killed_at_exec(r, marker):
    """The run ended on the exec check, and the killed program ran nothing:
    it printed nothing, made no file, and its process only ever exited by
    SIGKILL; no call of any task was released after the kill; the kill is
    counted as exec/kill."""
    assert RAN not in r.stdout, r
    assert not os.path.exists(marker)
    assert r.rc == 137 and r.result["status"] == "killed", r
    kill = notes(r.recs, "kill")
    assert len(kill) == 1 and kill[0]["detail"].startswith("exec check:"), kill
    after = r.recs[r.recs.index(kill[0]):]
    exits = [x for x in after if x["type"] == "proc" and x["kind"] == "exit"
             and x["pid"] == kill[0]["pid"]]
    assert all(x.get("signal") == 9 for x in exits), exits
    # Nothing at all is released once the sandbox is being killed.
    assert not [x for x in after if x["type"] == "syscall"], after[:5]
    assert r.result["counts"]["exec"]["kill"] == 1
    counts = {(x["class"], x["decision"]): x["n"] for x in r.recs[-1]["counts"]}
    assert counts.get(("exec", "kill")) == 1


def interp_script(w, marker):
    return (f'printf "#!{w}/victim {marker}\\n" > /tmp/x.sh; chmod +x /tmp/x.sh; '
            '/tmp/x.sh; echo after')


def test_denied_interpreter_is_killed_before_it_runs(caller):
    """#! names a program the policy does not allow: the script passes the
    check before execve, the interpreter is caught at the exec event and
    killed there, every time."""
    w = workdir(caller)
    pol = policy(caller, "allow exec /tmp/x.sh /usr/bin/sh /usr/bin/dash /usr/bin/chmod\n")
    marker = os.path.join(w, "ran")
    for _ in range(10):
        r = caller.run("sh", "-c", interp_script(w, marker), opts=["-p", pol, "--workdir", w])
        assert_killed_at_exec(r, marker)
        assert "after" not in r.stdout


def test_dry_run_notes_would_kill_and_lets_it_run(root_caller):
    w = workdir(root_caller)
    pol = policy(root_caller, "allow exec /tmp/x.sh /usr/bin/sh /usr/bin/dash /usr/bin/chmod\n")
    marker = os.path.join(w, "ran")
    r = root_caller.run("sh", "-c", interp_script(w, marker),
                        opts=["-p", pol, "--workdir", w, "--dry-run"])
    assert r.rc == 0 and RAN in r.stdout and "after" in r.stdout, r
    assert os.path.exists(marker)
    assert len(notes(r.recs, "would-kill")) == 1 and not notes(r.recs, "kill")
    assert r.result["counts"]["exec"]["would-kill"] == 1


def test_symlink_swapped_under_exec_never_runs_the_denied_program(caller):
    """A thread flips a symlink between an allowed and a denied program
    while the main thread execs it: when the check sees the allowed one
    and the kernel runs the denied one, that program is killed before its
    first instruction."""
    w = workdir(caller)
    pol = policy(caller, "allow exec /usr/bin/true\n")
    marker = os.path.join(w, "ran")
    swap = caller.build("attack_exec_swap")
    r = caller.run(swap, "/usr/bin/true", os.path.join(w, "victim"), marker, "5",
                   opts=[*STORM_OPTS, "-p", pol, "--workdir", w], timeout=60)
    assert RAN not in r.stdout, r
    assert not os.path.exists(marker)
    if r.rc == 137:  # the race was won (nearly always): the check ended the run
        assert_killed_at_exec(r, marker)
    else:
        assert r.rc == 0 and "tries" in r.stdout, r


def test_replaced_command_file_is_not_run(caller):
    """The command lives in a writable workdir: the candidate moves its
    directory aside, puts a denied program at the command's path and execs
    it.  The name matches, the file does not: it is judged as any other
    program and killed at its exec.  The command re-running itself
    unchanged is fine.  The host file did change, as the policy allows,
    and the log records the write."""
    w = workdir_with_command(caller, "attack_exec_replace")
    pol = policy(caller, "allow exec /usr/bin/true\n")
    marker = os.path.join(w, "ran")
    r = caller.run("sub/attack_exec_replace", os.path.join(w, "victim"), marker,
                   opts=["-p", pol, "--workdir", w], cwd=w)
    assert "the command itself ran again" in r.stdout and "replaced" in r.stdout, r
    assert RAN not in r.stdout and not os.path.exists(marker)
    again = [x for x in syscalls(r.recs, name="execve") if x["args"]["argv"][1:] == ["again"]]
    assert [x["decision"] for x in again] == ["allow"]
    # Refused at the call (the file at the path is not the command), or,
    # had the swap come after that check, killed at the exec event.
    swapped = [x for x in syscalls(r.recs, name="execve") if x["args"]["argv"][1:] == [marker]]
    assert len(swapped) == 1 and swapped[0]["decision"] == "deny", swapped
    assert swapped[0]["rule"] is None  # the default, not "(command line)"
    assert r.rc == 4 and "exec failed: Permission denied" in r.stdout, r
    writes = [x for x in r.recs if x["type"] == "syscall" and x["class"] == "write"
              and (x["args"].get("resolved") or "").startswith(w)]
    assert writes, "the replacement's writes are in the log"


def test_command_directory_swapped_under_exec_never_runs_the_denied_program(caller):
    """A thread exchanges the command's directory with one holding a denied
    program of the same name while the main thread execs the command's
    path: whichever name /proc/PID/exe shows at the exec event, the file
    that runs is not the command's inode, so it is killed there (or
    refused at the call when the check already sees it)."""
    w = workdir_with_command(caller, "attack_exec_replace_race")
    pol = policy(caller, "allow exec /usr/bin/true\n")
    marker = os.path.join(w, "ran")
    r = caller.run("sub/attack_exec_replace_race", os.path.join(w, "victim"), marker, "5",
                   opts=["-p", pol, "--workdir", w], cwd=w, timeout=60)
    assert RAN not in r.stdout and not os.path.exists(marker), r
    if r.rc == 137:  # the swap landed between the check and the exec
        assert_killed_at_exec(r, marker)
    else:
        assert r.rc == 0 and "tries" in r.stdout, r


# ---- the exec record's argv ----

def exec_records(recs):
    """The execve record of /usr/bin/true and the proc record of its image."""
    sys_ = [x for x in syscalls(recs, name="execve") if x["args"]["exe"] == "/usr/bin/true"]
    proc = [x for x in recs if x["type"] == "proc" and x["kind"] == "exec"
            and x.get("exe") == "/usr/bin/true"]
    assert len(sys_) == 1 and len(proc) == 1, (sys_, proc)
    return sys_[0]["args"], proc[0]


def argv_hash(argv):
    return hashlib.sha256(b"".join(a.encode() + b"\0" for a in argv)).hexdigest()


def run_true_with(c, args):
    """sh execs /usr/bin/true with args: the execve record and the new
    image's record both carry that argv."""
    r = c.run("sh", "-c", 'exec /usr/bin/true "$@"', "sh", *args)
    assert r.rc == 0, r
    return r, ["/usr/bin/true", *args]


def test_400_arguments_are_all_in_the_record(caller):
    token = "tok-" + os.urandom(6).hex()
    r, argv = run_true_with(caller, [f"a{i}" for i in range(399)] + [token])
    args, proc = exec_records(r.recs)
    assert args["argv"] == argv and "argv_full" not in args
    assert proc["argv"] == argv and "argv_full" not in proc


def test_12k_sh_c_payload_is_whole_in_the_record(caller):
    token = "tok-" + os.urandom(6).hex()
    payload = ": " + "x" * 12 * 1024 + " ; exec /usr/bin/true " + token
    r = caller.run("sh", "-c", payload)
    assert r.rc == 0, r
    args, proc = exec_records(r.recs)
    assert args["argv"] == ["/usr/bin/true", token]
    first = [x for x in r.recs if x["type"] == "proc" and x["kind"] == "exec"][0]
    assert first["argv"][-1] == payload and "argv_full" not in first


@pytest.mark.parametrize("shape", ["many", "long"])
def test_argv_past_the_budget_says_what_it_left_out(caller, shape):
    """3000 arguments, or one of 100 KB: the record keeps a prefix, with
    argv_full giving the full count, bytes and sha256, checked here; the
    text and JSON of `vigil log` show it."""
    token = "tok-" + os.urandom(6).hex()
    args = ([f"a{i}" for i in range(2999)] if shape == "many" else ["y" * 100000]) + [token]
    r, argv = run_true_with(caller, args)
    full = {"argc": len(argv), "bytes": sum(len(a.encode()) + 1 for a in argv),
            "sha256": argv_hash(argv)}
    sys_args, proc = exec_records(r.recs)
    for rec in (sys_args, proc):
        assert rec["argv_full"] == full, rec.get("argv_full")
        kept = rec["argv"]
        assert kept == argv[:len(kept)] or (kept[:-1] == argv[:len(kept) - 1]
                                            and argv[len(kept) - 1].startswith(kept[-1]))
        assert token not in kept
    text = caller.vigil_raw("log", r.log_path).stdout
    assert f"{len(argv)} arguments" in text and full["sha256"] in text, text[-2000:]
    js = caller.vigil_raw("log", "--json", r.log_path).stdout
    assert full["sha256"] in js and '"argv_full"' in js


def test_argv_flipped_unreadable_is_refused_never_released(caller):
    """A thread flips the page holding execve's argv pointers between
    PROT_NONE and readable while vforked children exec a program that
    creates the file its first argument names.  An exec whose argv vigil
    could not read is refused with EFAULT and recorded as unreadable;
    every file the program made is named in an allowed exec record."""
    w = workdir(caller)
    pol = policy(caller, "allow exec $WORK/victim\n")
    flip = caller.build("attack_exec_flip")
    victim = os.path.join(w, "victim")
    # 600 rounds that both ran and failed, or 30 s on a machine too loaded
    # to give this loop its rounds (one once made a single round in 4 s)
    r = caller.run(flip, victim, w, "30", opts=["-p", pol, "--workdir", w], timeout=90)
    assert r.rc == 0 and "tries" in r.stdout, r
    execs = [x for x in syscalls(r.recs, name="execve") if x["args"]["exe"] == victim]
    unreadable = [x for x in execs if x["args"].get("argv_unreadable")]
    assert unreadable, "the race never hit: no unreadable argv in %d tries" % len(execs)
    assert all(x["decision"] == "deny" and x["errno"] == 14 for x in unreadable)
    shown = {a for x in execs if x["decision"] == "allow" and not x["args"].get("argv_unreadable")
             for a in x["args"].get("argv", [])}
    made = [os.path.join(w, f) for f in os.listdir(w) if f.startswith("m-")]
    assert made, r
    assert [m for m in made if m not in shown] == []


def test_viewer_shows_what_a_cut_argv_left_out(root_caller, term):
    """The viewer's detail pane of a cut execve names the full count and
    the hash, as `vigil log` does."""
    from test_viewer import at_row, open_viewer
    r, argv = run_true_with(root_caller, [f"a{i}" for i in range(2999)] + ["last"])
    idx = next(i for i, x in enumerate(r.recs) if x["type"] == "syscall"
               and x["name"] == "execve" and x["args"]["exe"] == "/usr/bin/true")
    t = open_viewer(term, r.log_path, height=50)
    t.keys("g")
    for _ in range(idx):
        t.keys("j")
    at_row(t, idx + 1)
    t.keys("Enter")
    # wait for the pane's own line, not its heading (drawn first, under ASan
    # the lines can follow a moment later)
    s = t.wait("%d arguments" % len(argv))
    assert argv_hash(argv) in s, s


def test_strings_at_page_edges_and_past_the_read_ahead_are_whole(caller):
    """vigil reads the strings of an exec a batch at a time (a few hundred
    bytes of each, never past its page): an argument and a variable ending
    on the last byte of a page whose next page is unmapped, an empty one,
    one of 300 and one of 5000 bytes, 152 variables.  The execve record
    and the new image's record hold exactly what the candidate passed."""
    r = caller.run(caller.build("exec_edges"))
    assert r.rc == 0, r
    argv = ["/usr/bin/true", "edge-" + "e" * 34, "", "x" * 300, "y" * 5000, "end"]
    args, proc = exec_records(r.recs)
    assert args["argv"] == argv and proc["argv"] == argv
    assert args["env_names"] == [f"V{i}" for i in range(150)] + ["LONGVAR", "EDGE"]
    assert not args.get("argv_unreadable")
