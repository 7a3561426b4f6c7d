"""A real `vigil serve` for the tests of its API (tests/test_serve_*.py):
started as root on a unix socket in a tmp dir, with its state in a tmp
dir and a uid range of its own; stopped with SIGTERM, after which the test
checks that nothing of it is left (processes, candidates, mounts).  Also
a small checker of the OpenAPI file's JSON Schemas, for the answers.

Fixtures live here too (import them by name into a test module)."""
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import pytest

from helpers import ROOT, VIGIL, processes

sys.path.insert(0, os.path.join(ROOT, "python"))
import vigil as vigil_py  # noqa: E402  (the package under test, from the tree)

START_S = 20          # until the socket answers
STOP_S = 60           # SIGTERM to exit: the drain cancels runs and waits for their sandboxes
# Each daemon's candidates get host uids of their own, so that another
# test's daemon (or a reliability run beside this one) is never taken for ours.
UID_BASE, UID_SPAN, UID_SLOTS = 300000, 100, 500


def claim_uid_slot():
    """(a claim, a slot of UID_SPAN uids) no other daemon of any test
    process holds: two test workers' daemons on one range took each other's
    candidates for their own.  The claim is an abstract unix socket's name,
    bound while the daemon lives: gone with the process, nothing on disk."""
    for slot in random.sample(range(UID_SLOTS), UID_SLOTS):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.bind("\0vigil-serve-test-uids-%d" % slot)
            return s, slot
        except OSError:
            s.close()
    raise AssertionError("every uid slot of the serve tests is taken")


def serve_available():
    """Whether this vigil has `serve` (the lead's issue 26)."""
    try:
        r = subprocess.run([VIGIL, "serve", "--help"], capture_output=True, text=True, timeout=20)
    except OSError:
        return False
    return r.returncode == 0 and "--listen" in r.stdout


class Raw:
    """An answer as HTTP gave it."""

    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body.decode("utf-8"))


class Daemon:
    """`vigil serve` on base/serve.sock, its state in base/state.  With
    activated, the socket is made by systemd-socket-activate and handed
    over as systemd does (LISTEN_FDS, LISTEN_PID, fd 3); else by vigil
    (--listen unix:...).  base is a directory of /tmp that other users may
    pass through (the socket is for every local user), removed by
    remove()."""

    def __init__(self, *flags, activated=False, listen=True, parent=None, argv_of=None,
                 wrap=(), sock=None):
        """flags: more `vigil serve` flags.  parent: where base is made
        (default /tmp).  argv_of(state, uid_range): the whole `vigil
        serve` command instead of this one's.  wrap: a command the daemon
        is run under (it must exec it: LISTEN_PID is the pid started).
        sock: where the daemon listens, when argv_of says so itself."""
        self.base = tempfile.mkdtemp(prefix="vigil-serve-test-", dir=parent)
        os.chmod(self.base, 0o711)
        self.sock = sock or os.path.join(self.base, "serve.sock")
        self.state = os.path.join(self.base, "state")
        self.uid_claim, slot = claim_uid_slot()
        first = UID_BASE + UID_SPAN * slot
        self.uids = range(first, first + UID_SPAN)
        self.err_path = os.path.join(self.base, "serve.stderr")
        self.seen_pids = set()
        self.activated = activated
        uid_range = "%d-%d" % (self.uids[0], self.uids[-1])
        if argv_of is not None:
            argv = argv_of(self.state, uid_range)
        else:
            argv = [VIGIL, "serve", "--state", self.state, "--uid-range", uid_range, *flags]
            if listen and not activated:
                argv[2:2] = ["--listen", "unix:" + self.sock]
        argv = list(wrap) + argv
        if activated:
            argv = ["systemd-socket-activate", "-l", self.sock] + argv
        self.err = open(self.err_path, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.err,
                                     stderr=self.err)
        try:
            self._wait_up()
        except BaseException:
            self.proc.kill()
            self.proc.wait()
            self.err.close()
            self.remove()
            raise

    def _wait_up(self):
        deadline = time.monotonic() + START_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("vigil serve exited %s: %s" % (self.proc.returncode,
                                                                   self.stderr()))
            try:
                self.client().version()
                return
            except vigil_py.ServerError:
                time.sleep(0.05)
        raise AssertionError("vigil serve did not answer in %d s: %s" % (START_S, self.stderr()))

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def client(self, **kw):
        return vigil_py.Server("unix:" + self.sock, **kw)

    def raw(self, method, path, body=None, headers=None):
        """One request below /v1, its answer whatever the status."""
        conn = vigil_py._serve._UnixHTTPConnection(self.sock, 60)
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        try:
            conn.request(method, "/v1" + path, body=data, headers=headers or {})
            r = conn.getresponse()
            return Raw(r.status, {k.lower(): v for k, v in r.getheaders()}, r.read())
        finally:
            conn.close()

    def ours(self):
        """Processes of this daemon's: its runs' vigils (their command line
        names the state dir) and candidates (a uid of its range)."""
        got = [p for p in processes()
               if p[1] != self.proc.pid and (self.state in p[2] or p[0] in self.uids)]
        self.seen_pids |= {p[1] for p in got}
        return got

    def mounts(self):
        """Mount points, in any process's view we can see, under the tmp dir."""
        with open("/proc/self/mountinfo") as f:
            return [line.split()[4] for line in f if self.base in line.split()[4]]

    def stop(self):
        """SIGTERM, as systemd stops it; the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("vigil serve still there %d s after SIGTERM: %s"
                                     % (STOP_S, self.stderr()))
        self.err.close()
        return self.proc.returncode

    def left(self):
        """What is left of it once stopped: processes, mounts."""
        deadline = time.monotonic() + 5   # a reaped child's /proc entry going away
        while self.ours() and time.monotonic() < deadline:
            time.sleep(0.05)
        return {"processes": self.ours(), "mounts": self.mounts()}

    def remove(self):
        shutil.rmtree(self.base, ignore_errors=True)
        self.uid_claim.close()


def stop_and_check(d):
    """Stop d with SIGTERM: it exits 0 and leaves nothing running; then
    its tmp dir goes."""
    try:
        code = d.stop()
        assert code == 0, (code, d.stderr())
        left = d.left()
        assert left == {"processes": [], "mounts": []}, (left, d.stderr())
    finally:
        d.remove()


def require_serve():
    if not serve_available():
        pytest.skip("this vigil has no `serve` yet")
    if os.geteuid() != 0:
        pytest.skip("vigil serve runs candidates under a range of host uids: root only")


@pytest.fixture(scope="module")
def daemon():
    """One daemon for the module, default quotas; checked clean at its end."""
    require_serve()
    d = Daemon()
    yield d
    stop_and_check(d)


class SchemaCheck:
    """The subset of JSON Schema docs/serve-openapi.yaml uses (type,
    required, properties, additionalProperties, items, enum, const,
    minimum, maximum, minItems, maxItems, allOf, oneOf, not,
    propertyNames, $ref), enough to hold an answer to the file.  Fails
    with an AssertionError naming where."""

    def __init__(self, spec):
        self.spec = spec

    def named(self, name, value):
        self.check({"$ref": "#/components/schemas/" + name}, value, name)

    def run(self, value):
        self.named("Run", value)

    def request(self, value):
        self.named("RunRequest", value)

    def _ref(self, ref):
        node = self.spec
        for part in ref[2:].split("/"):
            node = node[part]
        return node

    TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}

    def _type_ok(self, t, value):
        if t == "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        if t == "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return isinstance(value, self.TYPES[t])

    def _holds(self, schema, value):
        try:
            self.check(schema, value, "")
            return True
        except AssertionError:
            return False

    def check(self, schema, value, where):
        if "$ref" in schema:
            return self.check(self._ref(schema["$ref"]), value, where)
        types = schema.get("type")
        if types is not None:
            types = [types] if isinstance(types, str) else types
            assert any(self._type_ok(t, value) for t in types), \
                "%s: %r is not %s" % (where, value, "/".join(types))
        assert "enum" not in schema or value in schema["enum"], \
            "%s: %r not one of %s" % (where, value, schema["enum"])
        assert "const" not in schema or value == schema["const"], (where, value)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert value >= schema.get("minimum", value), (where, value)
            assert value <= schema.get("maximum", value), (where, value)
        for sub in schema.get("allOf", []):
            self.check(sub, value, where)
        if "oneOf" in schema:
            n = sum(self._holds(sub, value) for sub in schema["oneOf"])
            assert n == 1, "%s: %r matches %d of oneOf" % (where, value, n)
        if "not" in schema:
            assert not self._holds(schema["not"], value), "%s: %r matches not" % (where, value)
        if isinstance(value, dict):
            self._object(schema, value, where)
        if isinstance(value, list):
            assert len(value) >= schema.get("minItems", 0), (where, value)
            assert len(value) <= schema.get("maxItems", len(value)), (where, value)
            for i, item in enumerate(value):
                self.check(schema.get("items", {}), item, "%s[%d]" % (where, i))

    def _object(self, schema, value, where):
        for key in schema.get("required", []):
            assert key in value, "%s: no member %r in %r" % (where, key, value)
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for key, v in value.items():
            if "propertyNames" in schema:
                self.check(schema["propertyNames"], key, "%s name %r" % (where, key))
            if key in props:
                self.check(props[key], v, "%s.%s" % (where, key))
            elif extra is False:
                raise AssertionError("%s: member %r is not in the schema" % (where, key))
            elif isinstance(extra, dict):
                self.check(extra, v, "%s.%s" % (where, key))
