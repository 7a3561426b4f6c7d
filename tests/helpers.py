"""Shared helpers for the end-to-end `vigil run` tests (tests/test_run_*.py):
run the real vigil on real candidates, as root or as an unprivileged user,
decode its log with Python's own msgpack, build C candidates, and look at
the host from the outside (files, processes, leftover scratch dirs).

Fixtures live here too (import them by name into a test module); conftest.py
belongs to someone else."""
import glob
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import msgpack
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
VIGIL = os.environ.get("VIGIL", os.path.join(ROOT, "vigil"))
CANDIDATES = os.path.join(ROOT, "tests", "candidates")
DEFAULT_POLICY = os.path.join(ROOT, "policies", "default.policy")
NOBODY = 65534          # the unprivileged caller, and the sandbox's host uid under root
CFLAGS = ["-g", "-O0", "-fno-omit-frame-pointer", "-pthread"]
# VIGIL_ENGINE=notify|ptrace runs every Caller.run under that engine; by
# default vigil's own default (notify where the kernel has it).
ENGINE = os.environ.get("VIGIL_ENGINE")
ENGINE_OPTS = ["--engine", ENGINE] if ENGINE else []
# VIGIL_TEST_IMAGE=1 runs every `vigil run` a Caller starts (run, popen,
# vigil_raw, argv) on an image root: with --image IMAGE_NAME, the test root
# of tests/image_tree.py imported into the caller's own store on first use
# (`make test-image`), unless the test names --image itself.
IMAGE = os.environ.get("VIGIL_TEST_IMAGE", "") not in ("", "0")
IMAGE_NAME = "vigil-test-root"
# VIGIL_TEST_HOLD=1 runs every `vigil run ... -- COMMAND` a Caller starts
# through a held sandbox (tests/hold_driver.py: prepared with the options,
# then the command sent as vigil serve's pool sends it): `make test-hold`.
HOLD = os.environ.get("VIGIL_TEST_HOLD", "") not in ("", "0")
HOLD_DRIVER = os.path.join(ROOT, "tests", "hold_driver.py")
# The engine of the test running now in a module marked `engines`
# (conftest.py, set per test): every `vigil run` of a Caller passes it,
# unless the test gives --engine itself.
TEST_ENGINE_OPTS = []


def syscall_nr(name):
    """A call's x86_64 number, from vigil's syscall table (the one place
    numbers are written: tests/test_one_table.py)."""
    with open(os.path.join(ROOT, "core", "syscalls_rows.h")) as f:
        for line in f:
            m = re.match(r"(?:ROW|HARMLESS|REFUSE)\((\d+),\s*(\w+),", line)
            if m and m.group(2) == name:
                return int(m.group(1))
    raise KeyError(name)


def on_image(reason):
    """Skip a test only on an image root (VIGIL_TEST_IMAGE), for a premise
    of the host's trees an image does not have; the reason says which."""
    return pytest.mark.skipif(IMAGE, reason="image root: " + reason)


def fails_on_image(reason):
    """A known hole of vigil on an image root: the test must fail there
    (strict), and passes on the host's trees."""
    return pytest.mark.xfail(IMAGE, reason="image root: " + reason, strict=True)


def fails_on_hold(reason):
    """A known limit of a held run (VIGIL_TEST_HOLD): the test must fail
    there (strict), and passes run cold."""
    return pytest.mark.xfail(HOLD, reason="held: " + reason, strict=True)


def marker():
    """A string no other process on the host has in its command line."""
    return "vigil-test-marker-" + uuid.uuid4().hex[:12]


# ---- the host, from the outside ----

def processes():
    """[(uid, pid, cmdline)] of every process on the host."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
            uid = os.stat(f"/proc/{d}").st_uid
        except OSError:
            continue
        out.append((uid, int(d), cmd))
    return out


def with_marker(mark):
    return [p for p in processes() if mark in p[2]]


def wait_gone(mark, within):
    """Wait up to `within` seconds for every process with `mark` to end;
    return the ones still there."""
    deadline = time.monotonic() + within
    left = with_marker(mark)
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = with_marker(mark)
    return left


def scratch_dirs():
    return set(glob.glob("/tmp/vigil-work-*"))


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Served:
    """A socket on the host's 127.0.0.1 (or in an outside namespace,
    tests/outside.py: at its address) read by a thread of its own until
    close(); subclasses say how to make it and what one read keeps."""

    def __init__(self, sock, addr="127.0.0.1"):
        self.sock = sock
        self.addr = addr
        self.sock.bind((addr, 0))
        self.sock.settimeout(0.1)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self):
        while not self._stop.is_set():
            try:
                self._one()
            except socket.timeout:
                continue

    def close(self):
        self._stop.set()
        self._thread.join()
        # what arrived and the thread had no time to read yet (a loaded
        # machine): still queued on the socket, read now
        self.sock.setblocking(False)
        try:
            while True:
                self._one()
        except OSError:  # BlockingIOError: nothing more queued
            pass
        self.sock.close()


# How long a listener waits for what an accepted connection sends: data
# relayed by pasta on a loaded machine can come seconds after the connect.
RECV_WAIT_S = 10


class Listener(_Served):
    """A TCP listener on the host's 127.0.0.1 (or outside) that records every
    connection it accepts (and what was sent on it)."""

    def __init__(self, outside=None, addr="127.0.0.1"):
        if outside:
            super().__init__(outside.socket(), outside.addr)
        else:
            super().__init__(socket.socket(), addr)
        self.sock.listen(16)
        self.accepted = []
        self._thread.start()

    def _one(self):
        conn, addr = self.sock.accept()
        # on record at once (a test that wants none sees it), its data
        # (None until then) when it comes
        entry = [addr, None]
        self.accepted.append(entry)
        conn.settimeout(RECV_WAIT_S)
        try:
            data = conn.recv(4096)
        except OSError:
            data = b""
        conn.close()
        entry[1] = data

    def data(self, want=1, wait_s=RECV_WAIT_S + 5):
        """What the accepted connections sent, once want of them have said
        it (or wait_s is over), a moment later for one that should not be."""
        deadline = time.monotonic() + wait_s
        while (sum(d is not None for _, d in self.accepted) < want and
               time.monotonic() < deadline):
            time.sleep(0.05)
        time.sleep(0.3)
        return [d for _, d in self.accepted]


UDP_RCVBUF = 32 << 20
SO_RCVBUFFORCE = 33  # <asm-generic/socket.h>; Python's socket module lacks it


class UdpListener(_Served):
    """A UDP socket on the host's 127.0.0.1 (or outside) that keeps every datagram."""

    def __init__(self, outside=None):
        if outside:
            super().__init__(outside.socket(kind=socket.SOCK_DGRAM), outside.addr)
        else:
            super().__init__(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        # a burst (attack_net_flip sends 3000) must not overflow the queue
        # while this thread waits for a CPU: root may set it past rmem_max
        try:
            self.sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, UDP_RCVBUF)
        except OSError:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, UDP_RCVBUF)
        self.got = []
        self._thread.start()

    def _one(self):
        self.got.append(self.sock.recv(65536))

    def close(self):
        time.sleep(0.3)  # a datagram still on its way is queued by now
        super().close()


# ---- the log ----

def decode_log(path):
    """Every complete record of a log, with Python's msgpack (the
    independent reader).  A record cut off at the end is left out."""
    with open(path, "rb") as f:
        up = msgpack.Unpacker(f, raw=False)
        recs = []
        try:
            for r in up:
                recs.append(r)
        except (msgpack.exceptions.OutOfData, ValueError):
            pass
    return recs


def syscalls(recs, **match):
    """The syscall records whose fields (or args fields, for keys in args)
    equal the given values."""
    out = []
    for r in recs:
        if r["type"] != "syscall":
            continue
        args = r.get("args", {})
        if all((args.get(k) if k in args else r.get(k)) == v for k, v in match.items()):
            out.append(r)
    return out


def tally(recs):
    """{(class, decision): n} over the syscall records, and the exec
    check's kill / would-kill notes (counted as exec: the check judges the
    image an exec started, after the call's own record)."""
    t = {}
    for r in recs:
        key = None
        if r["type"] == "syscall":
            key = (r["class"], r["decision"])
        elif (r["type"] == "note" and r["what"] in ("kill", "would-kill")
              and r["detail"].startswith("exec check:")):
            key = ("exec", r["what"])
        if key:
            t[key] = t.get(key, 0) + 1
    return t


def policy_sections(text):
    """The header's policy text split by its "# file: NAME" lines:
    {name: [line1, line2, ...]} (so rule lines index them 1-based)."""
    sections, cur = {}, None
    for line in text.split("\n"):
        if line.startswith("# file: "):
            cur = sections.setdefault(line[len("# file: "):], [])
        elif cur is not None:
            cur.append(line)
    return sections


def stack_symbols(rec):
    return [f.get("sym") for f in rec.get("stack", [])]


# ---- building candidates ----

def compile_c(name, outdir, extra=()):
    """Build tests/candidates/NAME.c into outdir/NAME (world-readable)."""
    src = os.path.join(CANDIDATES, name + ".c")
    out = os.path.join(outdir, name)
    subprocess.run(["gcc", *CFLAGS, *extra, "-o", out, src], check=True,
                   capture_output=True, text=True)
    os.chmod(out, 0o755)
    return out


# ---- running vigil ----

# An attack or race loop refuses by design, thousands of times, as a storm
# does: the storm caps (docs/POLICY.md, limit refusals and log), which would
# end it first, are lifted for it.
STORM_OPTS = ["--refusals", str(1 << 40), "--log-size", "4G"]

class Run:
    """One finished `vigil run`: exit status, output, wall time, the
    result record and the log."""

    def __init__(self, proc, wall, log_path, result_path):
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self.wall = wall
        self.log_path = log_path
        self.result_path = result_path
        self._recs = None

    @property
    def result(self):
        with open(self.result_path) as f:
            return json.load(f)

    @property
    def recs(self):
        if self._recs is None:
            self._recs = decode_log(self.log_path)
        return self._recs

    def __repr__(self):
        return f"<Run rc={self.rc} stdout={self.stdout[-500:]!r} stderr={self.stderr[-1500:]!r}>"


class Caller:
    """Who runs vigil: root, or the unprivileged user NOBODY (through
    setpriv), with a vigil binary, candidates and a HOME that this user can
    reach.  `dir()` gives a fresh directory the caller can write."""

    def __init__(self, who, base):
        self.who = who
        self.base = base
        os.chmod(base, 0o755)
        self._n = 0
        if who == "root":
            self.vigil = VIGIL
            self.candidates = CANDIDATES
        else:
            self.vigil = os.path.join(base, "vigil")
            shutil.copy2(VIGIL, self.vigil)
            os.chmod(self.vigil, 0o755)
            # the shipped policies beside the binary, where `-p NAME` finds them
            shutil.copytree(os.path.join(ROOT, "policies"), os.path.join(base, "policies"))
            self.candidates = os.path.join(base, "candidates")
            shutil.copytree(CANDIDATES, self.candidates)
            for dirpath, _, files in [*os.walk(self.candidates), *os.walk(os.path.join(base, "policies"))]:
                os.chmod(dirpath, 0o755)
                for f in files:
                    os.chmod(os.path.join(dirpath, f), 0o644)
        self.bin = os.path.join(base, "bin")
        os.makedirs(self.bin, mode=0o755, exist_ok=True)
        os.chmod(self.bin, 0o755)
        self.home = self.dir("home")
        self._built = {}
        self._image = None

    @property
    def root(self):
        return self.who == "root"

    def dir(self, name="d"):
        self._n += 1
        d = os.path.join(self.base, f"{name}-{self._n}")
        os.makedirs(d)
        os.chmod(d, 0o755)
        if not self.root:
            os.chown(d, NOBODY, NOBODY)
        return d

    def cand(self, name):
        return os.path.join(self.candidates, name)

    def build(self, name, extra=()):
        if name not in self._built:
            self._built[name] = compile_c(name, self.bin, extra)
        return self._built[name]

    def image(self):
        """The test root's digest in this caller's store (VIGIL_TEST_IMAGE),
        imported the first time it is asked for."""
        if self._image is None:
            from image_tree import layout_with, root_layer  # only on an image root
            d = os.path.join(self.dir("image"), "oci")
            layout_with(d, root_layer())
            subprocess.run(["chmod", "-R", "a+rX", d], check=True)
            p = self.vigil_raw("image", "import", d, "--name", IMAGE_NAME)
            assert p.returncode == 0, p.stderr
            shutil.rmtree(d)
            self._image = p.stdout.strip()
        return self._image

    def system_file(self, path):
        """Where the sandbox's system file path (/etc/hostname) is on the
        host: path itself, or on an image root its copy in the store."""
        if not IMAGE:
            return path
        return os.path.join(self.home, ".local", "state", "vigil", "images", "sha256",
                            self.image().split(":")[1], "rootfs") + path

    def argv(self, args):
        if TEST_ENGINE_OPTS and args[:1] == ["run"] and "--engine" not in args:
            args = [args[0], *TEST_ENGINE_OPTS, *args[1:]]
        opts = args[:args.index("--")] if "--" in args else args
        if IMAGE and args[:1] == ["run"] and not any(
                isinstance(a, str) and (a == "--image" or a.startswith("--image=")) for a in opts):
            self.image()
            args = [args[0], "--image", IMAGE_NAME, *args[1:]]
        held = HOLD and args[:1] == ["run"] and "--" in args and "--hold" not in opts
        prefix = ["/usr/bin/python3", HOLD_DRIVER] if held else []
        if self.root:
            return [*prefix, self.vigil, *args]
        return [*prefix, "setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                "--", self.vigil, *args]

    def env(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if k in ("PATH", "LANG", "TERM") or k.startswith("LC_")}
        env["HOME"] = self.home
        if IMAGE and "HOME" in (extra or {}):
            # the store stays this caller's when a test gives vigil another HOME
            env["XDG_STATE_HOME"] = os.path.join(self.home, ".local", "state")
        env.update(extra or {})
        return env

    def popen(self, args, env=None, cwd=None, **kw):
        return subprocess.Popen(self.argv(args), env=self.env(env), cwd=cwd or self.home, **kw)

    def vigil_raw(self, *args, env=None, cwd=None, timeout=120, stdout=subprocess.PIPE):
        """Run `vigil ARGS` as this caller; CompletedProcess (text)."""
        return subprocess.run(self.argv(list(args)), env=self.env(env), cwd=cwd or self.home,
                              stdout=stdout, stderr=subprocess.PIPE, text=True,
                              timeout=timeout, errors="replace")

    def run(self, *cmd, opts=(), env=None, timeout=120, stdout=subprocess.PIPE, cwd=None):
        """`vigil run -o LOG --result RESULT OPTS -- CMD`, in a fresh
        directory; returns a Run."""
        d = self.dir("run")
        log, result = os.path.join(d, "run.msgpack"), os.path.join(d, "result.json")
        args = ["run", "-q", "-o", log, "--result", result, *ENGINE_OPTS, *opts, "--", *cmd]
        t0 = time.monotonic()
        p = self.vigil_raw(*args, env=env, cwd=cwd or d, timeout=timeout, stdout=stdout)
        return Run(p, time.monotonic() - t0, log, result)


def make_caller(who, tmp_path_factory):
    if who == "root":
        return Caller("root", str(tmp_path_factory.mktemp("root-caller")))
    base = tempfile.mkdtemp(prefix="vigil-test-nobody-", dir="/tmp")
    return Caller("nobody", base)


_callers = {}


@pytest.fixture(scope="session")
def root_caller(tmp_path_factory):
    if "root" not in _callers:
        if os.geteuid() != 0:
            pytest.skip("needs root")
        _callers["root"] = make_caller("root", tmp_path_factory)
    return _callers["root"]


@pytest.fixture(scope="session")
def nobody_caller(tmp_path_factory):
    if "nobody" not in _callers:
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            pytest.skip("needs root (to become another user) and setpriv")
        c = make_caller("nobody", tmp_path_factory)
        _callers["nobody"] = c
        yield c
        shutil.rmtree(c.base, ignore_errors=True)
    else:
        yield _callers["nobody"]


@pytest.fixture(params=["root", "nobody"])
def caller(request):
    """Both callers: the critical isolation tests run as each."""
    return request.getfixturevalue(request.param + "_caller")


_shipped = {}
# seconds: one shipped spec built from Debian's mirror
SHIPPED_BUILD_TIMEOUT = 900


def shipped_image(c, spec):
    """The shipped spec SPEC built once per session for c, as the image
    named SPEC (what the image-SPEC policies name): its digest.  The soak
    tests that build from Debian's mirror share these builds."""
    key = (c.who, spec)
    if key not in _shipped:
        p = c.vigil_raw("image", "build", spec, "--name", spec, timeout=SHIPPED_BUILD_TIMEOUT)
        assert p.returncode == 0, p.stderr
        _shipped[key] = p.stdout.strip()
    return _shipped[key]
