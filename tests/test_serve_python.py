"""vigil.Server, the Python client of `vigil serve`, against the real
daemon on a unix socket (and TCP with a token), as root: a run submitted
with files and stdin, waited for, its Result, outputs, a file it left and
its log decoded; a quota refusal as QuotaExceeded with the quota and
Retry-After; another user's run not there for them; cancel and delete;
the daemon started by socket activation as systemd starts it; and after
SIGTERM, nothing of any run left."""
import hashlib
import json
import os
import pathlib
import secrets
import subprocess
import sys
import textwrap

import pytest

from helpers import NOBODY, ROOT, free_port
import serve_daemon
from serve_daemon import Daemon, daemon, require_serve, stop_and_check  # noqa: F401

sys.path.insert(0, os.path.join(ROOT, "python"))
import vigil as vigil_py  # noqa: E402  (the package under test, from the tree)

WAIT_S = 60        # a trivial run's end, on a loaded 2-core VM
LONG = ["sleep", "120"]   # a run that is still running when the test acts on it


@pytest.fixture
def fresh():
    """A daemon of the test's own, built by the test with its flags."""
    require_serve()
    made = []

    def start(*flags, **kw):
        made.append(Daemon(*flags, **kw))
        return made[-1]
    yield start
    for d in made:
        stop_and_check(d)


def test_submit_wait_result_outputs_and_log(daemon, tmp_path):  # noqa: F811
    host = tmp_path / "host.bin"
    host.write_bytes(bytes(range(256)))
    srv = daemon.client()
    code = ("import sys, hashlib\n"
            "data = sys.stdin.buffer.read()\n"
            "print('stdin', data.decode())\n"
            "print('bin', hashlib.sha256(open('d/raw.bin', 'rb').read()).hexdigest())\n"
            "print('host', hashlib.sha256(open('host.bin', 'rb').read()).hexdigest())\n"
            "print('to stderr', file=sys.stderr)\n"
            "open('left.txt', 'w').write('made here')\n"
            "sys.exit(3)\n")
    run = srv.submit(["python3", "cand.py"], policy="python", task_id="py-1",
                     files={"cand.py": code, "d/raw.bin": b"\0\xff\x00", "host.bin": host},
                     stdin="from stdin", limits={"memory": "256M"}, env={"GREETING": "hi"})
    assert isinstance(run, vigil_py.Run) and run.state in ("queued", "running", "finished")
    assert run.wait(WAIT_S) is run and run.state == "finished", run.info
    assert run.status is vigil_py.Status.NONZERO and run.exit_code == 3, run.info
    res = run.result()
    assert isinstance(res, vigil_py.Result), res
    assert res.task_id == "py-1" and res.exit_code == 3 and res.argv == ["python3", "cand.py"]
    assert res.limits[vigil_py.Limit.MEMORY].value == 256 * 1024 * 1024, res.limits
    out = run.stdout.decode()
    assert "stdin from stdin\n" in out, out
    assert "bin %s\n" % hashlib.sha256(b"\0\xff\x00").hexdigest() in out, out
    assert "host %s\n" % hashlib.sha256(bytes(range(256))).hexdigest() in out, out
    assert run.stderr == b"to stderr\n"
    assert run.file("left.txt") == b"made here"
    recs = run.log()
    assert recs[0]["type"] == "header" and recs[-1]["type"] == "trailer", recs[-1]
    assert any(r["type"] == "syscall" for r in recs)
    assert run.id in [r.id for r in srv.runs()]
    assert srv.get(run.id).state == "finished"


def test_env_and_stdin_text_reach_the_candidate(daemon):  # noqa: F811
    run = daemon.client().submit(["sh", "-c", 'printf "%s:" "$GREETING"; cat'],
                                 stdin="from stdin", env={"GREETING": "hi"})
    assert run.wait(WAIT_S).status == "ok", run.info
    assert run.stdout == b"hi:from stdin"


def test_binary_stdin_reaches_the_candidate(daemon):  # noqa: F811
    run = daemon.client().submit(["cat"], stdin=b"\x00\x01\xfe")
    run.wait(WAIT_S)
    assert run.stdout == b"\x00\x01\xfe"          # the bytes got there and back
    assert run.status == "ok", run.info


def test_a_local_executable_runs_by_name(daemon, tmp_path):  # noqa: F811
    """A file given as a path keeps its x bit: a script or a compiled
    candidate sent so runs as ./NAME."""
    script = tmp_path / "cand.sh"
    script.write_text("#!/bin/sh\necho ran-by-name\n")
    script.chmod(0o755)
    run = daemon.client().submit(["./cand.sh"], files={"cand.sh": script})
    assert run.wait(WAIT_S).status == "ok", run.info
    assert run.stdout == b"ran-by-name\n"


def test_bad_request_is_a_server_error_naming_it(daemon):  # noqa: F811
    srv = daemon.client()
    with pytest.raises(vigil_py.ServerError) as e:
        srv.submit(["true"], files={"../escape.txt": "x"})
    assert e.value.status == 400 and "files[0].path" in str(e.value), e.value
    assert not isinstance(e.value, vigil_py.QuotaExceeded)
    with pytest.raises(vigil_py.ServerError) as e:
        srv.get("r-0000000000")
    assert e.value.status == 404, e.value
    with pytest.raises(TypeError):
        srv.submit("echo hi")          # a str is not an argv


def test_quota_refusal_is_quota_exceeded(fresh):
    d = fresh("--quota-runs", "1/1h")
    srv = d.client()
    srv.submit(["true"]).wait(WAIT_S)
    with pytest.raises(vigil_py.QuotaExceeded) as e:
        srv.submit(["true"])
    q = e.value
    assert q.status == 429 and q.quota == "runs", (q, q.body)
    assert q.retry_after is not None and 0 < q.retry_after <= 3600, q.retry_after
    assert q.body["retry_after"] == q.retry_after and "runs" in str(q), q.body
    assert isinstance(q, vigil_py.ServerError) and isinstance(q, vigil_py.VigilError)


def as_nobody(script, sock):
    """Run script with the tree's package as uid 65534; its JSON line."""
    r = subprocess.run(["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY,
                        "--clear-groups", sys.executable, "-c", textwrap.dedent(script)],
                       env={"PYTHONPATH": os.path.join(ROOT, "python"), "SOCK": sock,
                            "PATH": os.environ["PATH"]},
                       capture_output=True, text=True, timeout=120, cwd="/")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_another_users_run_is_not_there(daemon):  # noqa: F811
    """root's run does not exist for nobody: not by id, not in the list,
    not its outputs; nobody's own run is nobody's (and not root's)."""
    mine = daemon.client().submit(["echo", "root's secret"])
    mine.wait(WAIT_S)
    got = as_nobody("""
        import json, os, vigil
        srv = vigil.Server("unix:" + os.environ["SOCK"])
        theirs = vigil.Run(srv, {"id": %r})

        def attempt(fn):
            try:
                fn()
                return "answered"
            except vigil.ServerError as e:
                return e.status
        out = {"list": [r.id for r in srv.runs()], "get": attempt(lambda: srv.get(theirs.id)),
               "stdout": attempt(lambda: theirs.stdout), "cancel": attempt(theirs.cancel)}
        own = srv.submit(["id", "-u"])
        out["own"] = own.id
        out["own_state"] = own.wait(%d).state
        print(json.dumps(out))
    """ % (mine.id, WAIT_S), daemon.sock)
    assert got["get"] == got["stdout"] == got["cancel"] == 404, got
    assert mine.id not in got["list"], got
    assert got["own_state"] == "finished", got
    assert got["own"] not in [r.id for r in daemon.client().runs()], got
    assert daemon.client().get(mine.id).state == "finished"   # nobody's cancel did nothing


def test_cancel_ends_the_run_and_its_sandbox(daemon):  # noqa: F811
    srv = daemon.client()
    run = srv.submit(LONG)
    assert run.cancel() is run
    assert run.wait(WAIT_S).state == "cancelled", run.info
    assert daemon.left()["processes"] == [], daemon.left()
    assert run.delete() is run and run.info["deleted"] is True, run.info
    assert srv.get(run.id).info["deleted"] is True   # still listed: its quota windows
    for gone in (lambda: run.stdout, run.log, run.result):
        with pytest.raises(vigil_py.ServerError) as e:
            gone()
        assert e.value.status == 410, e.value


def test_wait_gives_up_with_timeout_error(daemon):  # noqa: F811
    run = daemon.client().submit(LONG)
    try:
        with pytest.raises(TimeoutError) as e:
            run.wait(timeout=1)
        assert run.id in str(e.value) and run.state in ("queued", "running"), run.info
    finally:
        run.cancel().wait(WAIT_S)


def test_result_before_the_end_is_409(daemon):  # noqa: F811
    run = daemon.client().submit(LONG)
    try:
        with pytest.raises(vigil_py.ServerError) as e:
            run.result()
        assert e.value.status == 409, e.value
    finally:
        run.cancel().wait(WAIT_S)


def test_sigterm_with_runs_under_way_leaves_nothing(fresh):
    d = fresh()
    runs = [d.client().submit(LONG) for _ in range(2)]
    for r in runs:
        r.refresh()
    assert d.ours(), "the runs never started"    # the check below sees runs when there are
    stop_and_check(d)
    assert d.seen_pids


def test_socket_activation_as_systemd_does_it(fresh):
    """As vigil-serve.socket starts it: the listening socket is fd 3
    (LISTEN_FDS=1, LISTEN_PID its pid), made by someone else, with no
    --listen.  The daemon serves on it, and on SIGTERM leaves it where it
    is (it did not make it, so it does not unlink it)."""
    d = fresh(activated=True)
    before = os.stat(d.sock)
    run = d.client().submit(["echo", "activated"])
    assert run.wait(WAIT_S).stdout == b"activated\n"
    assert d.stop() == 0, d.stderr()
    after = os.stat(d.sock)
    assert (after.st_ino, after.st_dev) == (before.st_ino, before.st_dev)


def test_tcp_with_a_token(fresh):
    token = secrets.token_hex(32)
    port = free_port()
    conf = pathlib.Path(serve_daemon.tempfile.mkdtemp(prefix="vigil-serve-conf-")) / "serve.conf"
    conf.write_text("user ci uid 299999 token sha256:%s\n" % hashlib.sha256(token.encode())
                    .hexdigest())
    try:
        d = fresh("--listen", "tcp:127.0.0.1:%d" % port, "--config", str(conf))
        tcp = vigil_py.Server("http://127.0.0.1:%d" % port, token=token)
        run = tcp.submit(["echo", "over tcp"])
        assert run.wait(WAIT_S).stdout == b"over tcp\n"
        for bad in (None, token[:-1] + ("0" if token[-1] != "0" else "1")):
            with pytest.raises(vigil_py.ServerError) as e:
                vigil_py.Server("http://127.0.0.1:%d" % port, token=bad).runs()
            assert e.value.status == 401, e.value
        # the token user's runs are not root's (the unix socket's uid 0)
        assert run.id not in [r.id for r in d.client().runs()]
    finally:
        conf.unlink()
        conf.parent.rmdir()


def test_no_daemon_is_a_server_error(tmp_path):
    with pytest.raises(vigil_py.ServerError) as e:
        vigil_py.Server("unix:" + str(tmp_path / "none.sock")).version()
    assert e.value.status is None and "none.sock" in str(e.value)
    with pytest.raises(ValueError):
        vigil_py.Server("ftp://host")
    assert vigil_py.Server().address == os.environ.get("VIGIL_SERVER",
                                                       "unix:/run/vigil/serve.sock")

