"""The files vigil writes for its caller (the log, the result record):
vigil never harms what it did not create.  An output that names a device,
a fifo, a symlink, an input of the run (the policy, the candidate), the
other output, or a place the candidate can write is refused before
anything runs: exit 125, one line, the target untouched (same inode, same
bytes, still there), no stray file next to it.  Closed fds 0-2 do not let
the log become stdout.  A result exists after every error.  Without -o the
log goes to the state directory, never the current one.  Each test runs as
root and as nobody (tests/helpers.py Caller).

Device targets are mknod'd copies in a temp dir: never the real /dev."""
import glob
import json
import os
import stat
import subprocess

import pytest

from helpers import NOBODY, caller, decode_log, marker, nobody_caller, root_caller  # noqa: F401

NULL_DEV = os.makedev(1, 3)
FULL_DEV = os.makedev(1, 7)


def identity(path):
    """What "untouched" means: type, inode, size and bytes (for a regular
    file), as lstat sees it."""
    st = os.lstat(path)
    data = None
    if stat.S_ISREG(st.st_mode):
        with open(path, "rb") as f:
            data = f.read()
    elif stat.S_ISLNK(st.st_mode):
        data = os.readlink(path)
    return (stat.S_IFMT(st.st_mode), st.st_dev, st.st_ino, st.st_rdev, data)


def strays(d):
    """Temporary files of vigil's left in d."""
    return glob.glob(os.path.join(d, ".*.vigil-*"))


def one_line(stderr):
    lines = stderr.strip("\n").split("\n")
    assert len(lines) == 1, stderr
    return lines[0]


class Setup:
    """One refused-output case: a directory with the target, a candidate
    that would print a token if it ran, and the vigil arguments."""

    def __init__(self, c, kind, flag):
        self.c, self.kind, self.flag = c, kind, flag
        self.d = c.dir("out")
        self.token = marker()
        self.cand = os.path.join(self.d, "cand.py")
        self.policy = os.path.join(self.d, "p.policy")
        self.host = os.path.join(self.d, "host.txt")
        self.workdir = c.dir("wd")
        os.chown(self.workdir, NOBODY, NOBODY)  # writable by the sandbox's user
        for path, text in ((self.cand, f"print('{self.token}')\n"),
                           (self.policy, "version 1\nallow read /**\ndefault allow\n"),
                           (self.host, f"host file {self.token}\n")):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o644)
        self.target = self.make_target()

    def make_target(self):
        t = os.path.join(self.d, "target")
        k = self.kind
        if k == "null-device":
            os.mknod(t, 0o666 | stat.S_IFCHR, NULL_DEV)
        elif k == "full-device":
            os.mknod(t, 0o666 | stat.S_IFCHR, FULL_DEV)
        elif k == "fifo":
            os.mkfifo(t, 0o666)
        elif k == "symlink-to-host-file":
            os.symlink(self.host, t)
        elif k == "directory":
            os.mkdir(t, 0o777)
        elif k == "foreign-file":  # a regular file of the caller's that vigil did not write
            with open(t, "w") as f:
                f.write("notes " + self.token)
            if not self.c.root:
                os.chown(t, NOBODY, NOBODY)
        elif k == "policy":
            t = self.policy
        elif k == "candidate":
            t = self.cand
        elif k == "in-workdir":  # an empty file vigil could replace, were it not there
            t = os.path.join(self.workdir, "out.file")
            with open(t, "w"):
                pass
            if not self.c.root:
                os.chown(t, NOBODY, NOBODY)
        elif k == "proc-version":
            t = "/proc/version"
        return t

    def args(self):
        log, res = os.path.join(self.d, "run.msgpack"), os.path.join(self.d, "result.json")
        if self.kind == "same-as-other":
            self.target = log if self.flag == "--result" else res
            with open(self.target, "w"):
                pass
            if not self.c.root:
                os.chown(self.target, NOBODY, NOBODY)
        if self.flag == "-o":
            log = self.target
        else:
            res = self.target
        opts = ["run", "-q", "-o", log, "--result", res, "-p", self.policy]
        if self.kind == "in-workdir":
            opts += ["--workdir", self.workdir]
        return opts + ["--", "python3", self.cand]


KINDS = ["null-device", "full-device", "fifo", "symlink-to-host-file", "directory",
         "foreign-file", "policy", "candidate", "in-workdir", "same-as-other", "proc-version"]


@pytest.mark.parametrize("flag", ["-o", "--result"])
@pytest.mark.parametrize("kind", KINDS)
def test_output_that_is_not_vigils_is_refused_and_untouched(caller, kind, flag):
    s = Setup(caller, kind, flag)
    args = s.args()
    before = identity(s.target)
    host_before = identity(s.host)
    r = caller.vigil_raw(*args, cwd=s.d, timeout=60)
    assert r.returncode == 125, r
    line = one_line(r.stderr)
    assert s.target in line or os.path.basename(s.target) in line, line
    assert s.token not in r.stdout, "the candidate ran"
    assert identity(s.target) == before, "the target was touched"
    assert identity(s.host) == host_before
    assert strays(s.d) == [] and strays(s.workdir) == []
    assert not os.path.exists(os.path.join(s.d, "run.msgpack")) or kind == "same-as-other"
    if flag == "-o" and kind != "same-as-other":
        # the result was fine: it records the refusal (a harness needs no special case)
        with open(os.path.join(s.d, "result.json")) as f:
            res = json.load(f)
        assert res["status"] == "error" and res["exit_code"] == 125 and res["error"] in line


def test_an_earlier_log_and_result_are_replaced(caller):
    """What vigil wrote itself it may replace: the second run's records,
    in new files (new inodes), nothing left of the first."""
    d = caller.dir("again")
    log, res = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
    first = caller.vigil_raw("run", "-q", "-o", log, "--result", res, "--", "echo", "first")
    assert first.returncode == 0, first
    inodes = (os.stat(log).st_ino, os.stat(res).st_ino)
    second = caller.vigil_raw("run", "-q", "-o", log, "--result", res, "--", "echo", "second")
    assert second.returncode == 0, second
    assert (os.stat(log).st_ino, os.stat(res).st_ino) != inodes
    assert decode_log(log)[0]["argv"] == ["echo", "second"]
    with open(res) as f:
        assert json.load(f)["argv"] == ["echo", "second"]
    assert strays(d) == []


@pytest.mark.parametrize("closed", [(1, 2), (0, 1, 2)], ids=["stdout+stderr", "all-three"])
def test_closed_std_fds_leave_the_log_intact(caller, closed):
    """`vigil run ... <&- >&- 2>&-`: the log must not become fd 1 and take the
    candidate's output; it decodes record by record, every record a map,
    sequence numbers without a gap, ending with an ok trailer."""
    d = caller.dir("closed")
    log, res = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
    say = "python3 -c \"print('o' * 4000); import sys; print('e' * 4000, file=sys.stderr)\""
    p = subprocess.run(caller.argv(["run", "-q", "-o", log, "--result", res, "--",
                                    "sh", "-c", say]),
                       env=caller.env(), cwd=d, timeout=60,
                       preexec_fn=lambda: [os.close(fd) for fd in closed])
    assert p.returncode == 0
    recs = decode_log(log)
    assert all(isinstance(r, dict) for r in recs), [r for r in recs if not isinstance(r, dict)][:5]
    assert [r["seq"] for r in recs] == list(range(len(recs)))
    assert recs[-1]["type"] == "trailer" and recs[-1]["status"] == "ok"
    with open(res) as f:
        out = json.load(f)
    assert out["stdout"]["bytes"] == 4001 and out["stderr"]["bytes"] == 4001


@pytest.mark.parametrize("what", ["bad-policy", "bad-flag", "missing-command"])
def test_a_result_exists_after_an_error(caller, what):
    d = caller.dir("err")
    res = os.path.join(d, "result.json")
    pol = os.path.join(d, "broken.policy")
    with open(pol, "w") as f:
        f.write("version 1\ndefault deny\nallow reed /etc/**\n")
    tail = {"bad-policy": ["-p", pol, "--", "true"], "bad-flag": ["--bogus", "--", "true"],
            "missing-command": []}[what]
    r = caller.vigil_raw("run", "-o", os.path.join(d, "run.msgpack"), "--result", res, *tail,
                         cwd=d)
    assert r.returncode == 125, r
    line = one_line(r.stderr)
    with open(res) as f:
        out = json.load(f)
    assert out["status"] == "error" and out["exit_code"] == 125, out
    assert out["error"] and out["error"] in line, (out["error"], line)
    assert out["candidate_exit_code"] is None and out["log"] is None
    assert not os.path.exists(os.path.join(d, "run.msgpack")) and strays(d) == []


def state_env(c, home, xdg=None):
    env = {"HOME": home}
    if xdg:
        env["XDG_STATE_HOME"] = xdg
    return env


@pytest.mark.parametrize("via", ["XDG_STATE_HOME", "HOME"])
def test_no_log_in_the_current_directory(caller, via):
    """Without -o the log goes to $XDG_STATE_HOME/vigil (else
    ~/.local/state/vigil, created 0700), the current directory stays
    empty, and `vigil log` with no FILE opens that log and says which."""
    cwd, home = caller.dir("cwd"), caller.dir("home")
    xdg = os.path.join(home, "xdg-state") if via == "XDG_STATE_HOME" else None
    if xdg:
        os.mkdir(xdg)
        if not caller.root:
            os.chown(xdg, NOBODY, NOBODY)
    env = state_env(caller, home, xdg)
    token = marker()
    r = caller.vigil_raw("run", "-q", "--", "echo", token, cwd=cwd, env=env)
    assert r.returncode == 0, r
    assert os.listdir(cwd) == []
    state = os.path.join(xdg, "vigil") if xdg else os.path.join(home, ".local", "state", "vigil")
    logs = glob.glob(os.path.join(state, "vigil-*.msgpack"))
    assert len(logs) == 1, os.listdir(state)
    assert stat.S_IMODE(os.stat(state).st_mode) == 0o700
    assert r.stderr == "", r  # -q: the latest log is found by `vigil log`, below
    assert decode_log(logs[0])[0]["argv"] == ["echo", token]
    shown = caller.vigil_raw("log", "--json", cwd=cwd, env=env)
    assert shown.returncode == 0, shown
    assert logs[0] in one_line(shown.stderr)
    assert json.loads(shown.stdout.splitlines()[0])["argv"] == ["echo", token]
    viewed = caller.vigil_raw("view", cwd=cwd, env=env)  # no terminal here: it says so
    assert viewed.returncode == 2 and f"vigil: view {logs[0]}" in viewed.stderr, viewed


KEEP_LOGS = 100  # VG_STATE_KEEP_LOGS


def test_state_dir_keeps_the_newest_logs_and_nothing_else_is_touched(caller):
    """Each run without -o removes the oldest of vigil's own logs beyond the
    100 kept, so the state directory stays bounded.  What vigil did not name
    or does not own there (another file, a symlink named like a log and its
    target, a directory) is left alone."""
    cwd, home, outside = caller.dir("cwd"), caller.dir("home"), caller.dir("outside")
    env = state_env(caller, home)
    first = caller.vigil_raw("run", "-q", "--", "true", cwd=cwd, env=env)
    assert first.returncode == 0, first
    state = os.path.join(home, ".local", "state", "vigil")
    old = []
    for i in range(KEEP_LOGS + 5):  # older than any real one: 2001
        p = os.path.join(state, f"vigil-20010101-0000{i // 60:02d}-{i}.msgpack")
        with open(p, "wb") as f:
            f.write(b"old")
        os.utime(p, (1e9 + i, 1e9 + i))
        old.append(p)
    target = os.path.join(outside, "precious")
    with open(target, "w") as f:
        f.write("keep me")
    os.utime(target, (1, 1))
    link = os.path.join(state, "vigil-19700101-000000-1.msgpack")
    os.symlink(target, link)
    other = os.path.join(state, "notes.txt")
    with open(other, "w") as f:
        f.write("mine")
    os.utime(other, (1, 1))
    os.mkdir(os.path.join(state, "vigil-19700101-000000-2.msgpack"))
    if not caller.root:
        for p in old + [other, target]:
            os.chown(p, NOBODY, NOBODY)
    r = caller.vigil_raw("run", "-q", "--", "true", cwd=cwd, env=env)
    assert r.returncode == 0, r
    logs = sorted(glob.glob(os.path.join(state, "vigil-2*.msgpack")))
    assert len(logs) == KEEP_LOGS, len(logs)
    gone = [p for p in old if not os.path.exists(p)]
    assert gone == old[:len(old) + 2 - KEEP_LOGS], gone  # the oldest, and only those
    assert os.path.islink(link) and open(target).read() == "keep me"
    assert open(other).read() == "mine"
    assert os.path.isdir(os.path.join(state, "vigil-19700101-000000-2.msgpack"))


def test_state_dir_through_a_planted_symlink_is_refused(caller):
    """vigil creates the state directory's components itself and never
    follows a symlink it finds there."""
    cwd, home, elsewhere = caller.dir("cwd"), caller.dir("home"), caller.dir("elsewhere")
    os.symlink(elsewhere, os.path.join(home, ".local"))
    r = caller.vigil_raw("run", "-q", "--", "true", cwd=cwd, env=state_env(caller, home))
    assert r.returncode == 125, r
    assert ".local" in one_line(r.stderr)
    assert os.listdir(elsewhere) == [] and os.listdir(cwd) == []


def test_target_swapped_during_runs_is_never_written_through(caller):
    """Race: while vigil runs with -o TARGET (an empty file it may replace),
    another process keeps swapping TARGET between a symlink to a host file
    and a fresh empty file.  Whatever vigil meets, it never writes through
    the symlink: the host file keeps its bytes, and each run either
    succeeds or refuses with one line (exit 125)."""
    import threading
    import time
    d = caller.dir("race")
    token = marker()
    host = os.path.join(d, "host.txt")
    with open(host, "w") as f:
        f.write(token + "\n")
    if not caller.root:  # the caller's own: only vigil's care protects it
        os.chown(host, NOBODY, NOBODY)
    host_before = identity(host)
    target = os.path.join(d, "target")

    def fresh_empty(path):
        with open(path, "w"):
            pass
        if not caller.root:
            os.chown(path, NOBODY, NOBODY)

    fresh_empty(target)
    stop = threading.Event()

    def attacker():
        n = 0
        while not stop.is_set():
            n += 1
            side = os.path.join(d, f"swap-{n}")
            if n % 2:
                os.symlink(host, side)
            else:
                fresh_empty(side)
            os.rename(side, target)
            time.sleep(0.003)

    t = threading.Thread(target=attacker, daemon=True)
    t.start()
    outcomes = {0: 0, 125: 0}
    deadline = time.monotonic() + 8
    try:
        while time.monotonic() < deadline:
            r = caller.vigil_raw("run", "-q", "-o", target, "--", "true", cwd=d, timeout=60)
            assert r.returncode in outcomes, r
            if r.returncode == 125:
                assert target in one_line(r.stderr), r.stderr
            outcomes[r.returncode] += 1
            assert identity(host) == host_before
    finally:
        stop.set()
        t.join()
    assert outcomes[125] > 0, f"the race never happened: {outcomes}"
    assert identity(host) == host_before
    # vigil's own temporary files are gone; what is left under such a name
    # is the attacker's (swapped back out of TARGET), which vigil leaves be
    for s in strays(d):
        st = os.lstat(s)
        assert stat.S_ISLNK(st.st_mode) or st.st_size == 0, s
