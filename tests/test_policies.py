"""Every shipped policy, exercised by a real candidate under the real
supervisor: what it allows works, what it refuses is refused by the rule
the policy's own text says, and the log names that rule."""
import os
import shutil
import socket
import threading

import pytest

from helpers import ROOT, root_caller, syscalls  # noqa: F401

POLICIES = os.path.join(ROOT, "policies")


def policy(name):
    return os.path.join(POLICIES, name)


def rule_line(name, text):
    """The line number of the first line of policies/NAME containing text."""
    with open(policy(name)) as f:
        for n, line in enumerate(f, 1):
            if text in line:
                return n
    raise AssertionError(f"{text!r} not in {name}")


def decisions(recs, cls):
    return [(r["args"].get("resolved") or r["args"].get("addr"), r["decision"], r.get("rule"))
            for r in syscalls(recs, **{"class": cls})]


# each rule is decided per call: engine by engine (conftest.py: the rule)
pytestmark = pytest.mark.engines

PROBE = r'''
import os, socket, subprocess, sys
def attempt(what, fn):
    try:
        fn()
        print(what, "ok")
    except OSError as e:
        print(what, "failed", e.errno)
attempt("read-system", lambda: open("/etc/os-release").read())
attempt("write-work", lambda: open("made.txt", "w").write("x"))
attempt("write-tmp", lambda: open("/tmp/t.txt", "w").write("x"))
attempt("write-system", lambda: open("/usr/share/vigil-probe", "w"))
attempt("read-home", lambda: open(os.environ["SECRET"]).read())
attempt("connect", lambda: socket.create_connection(("93.184.216.34", 80), timeout=2))
attempt("exec-core", lambda: subprocess.run(["ls", "/"], stdout=subprocess.DEVNULL, check=True))
attempt("exec-other", lambda: subprocess.run(["/usr/bin/whoami"], stdout=subprocess.DEVNULL))
'''


@pytest.fixture
def probe(root_caller):
    d = root_caller.dir("probe")
    path = os.path.join(d, "probe.py")
    with open(path, "w") as f:
        f.write(PROBE)
    return path


@pytest.fixture
def secret():
    """A home with a key, outside /tmp (whose paths the policies allow as
    $TMP: the sandbox's /tmp is its own)."""
    import tempfile
    home = tempfile.mkdtemp(prefix="vigil-test-home-", dir="/var/tmp")
    os.makedirs(os.path.join(home, ".ssh"))
    key = os.path.join(home, ".ssh", "id_rsa")
    with open(key, "w") as f:
        f.write("PRIVATE KEY\n")
    yield home, key
    shutil.rmtree(home)


def run_probe(caller, probe, secret, name):
    """The probe under policies/NAME, told where the home's key is; returns
    the Run and {step: "ok" | "failed ERRNO"}."""
    home, key = secret
    r = caller.run("python3", probe, env={"HOME": home},
                   opts=["-p", policy(name), "--env", f"SECRET={key}"])
    assert r.rc == 0, r
    return r, dict(line.split(" ", 1) for line in r.stdout.splitlines() if " " in line)


def test_default_policy(root_caller, probe, secret):
    r, got = run_probe(root_caller, probe, secret, "default.policy")
    key = secret[1]
    assert got["read-system"] == "ok" and got["write-work"] == "ok" and got["write-tmp"] == "ok"
    assert got["write-system"].startswith("failed")
    assert got["read-home"].startswith("failed")
    assert got["connect"].startswith("failed")
    assert got["exec-core"] == "ok"
    assert got["exec-other"].startswith("failed")
    recs = r.recs
    home_reads = [d for d in decisions(recs, "read") if d[0] == key]
    assert home_reads and home_reads[0][1] == "deny"
    assert home_reads[0][2]["line"] == rule_line("default.policy", "deny read ~/**")
    assert any(d[0] == "93.184.216.34" and d[1] == "deny" for d in decisions(recs, "connect"))
    assert any(d[0] == "/usr/bin/whoami" and d[1] == "deny" for d in decisions(recs, "exec"))
    # every rule named is on the line it names, in the file it names (a line
    # with several patterns is one rule per pattern, recorded as such)
    for rec in syscalls(recs):
        rule = rec.get("rule")
        if rule and rule["file"] != "(command line)":
            with open(rule["file"]) as f:
                line = f.read().splitlines()[rule["line"] - 1]
            assert all(word in line for word in rule["text"].split()), (rule, line)


def test_python_policy_runs_multiprocessing(root_caller):
    d = root_caller.dir("mp")
    script = os.path.join(d, "mp.py")
    with open(script, "w") as f:
        f.write("import multiprocessing as mp, os\n"
                "def sq(x): return x * x\n"
                "if __name__ == '__main__':\n"
                "    with mp.Pool(2) as p: print(sum(p.map(sq, range(10))))\n"
                "    print(os.environ.get('PYTHONDONTWRITEBYTECODE'))\n")
    plain = root_caller.run("python3", script, opts=["-p", policy("default.policy")])
    r = root_caller.run("python3", script, opts=["-p", policy("python.policy")])
    assert r.rc == 0, r
    assert r.stdout.split() == ["285", "1"]
    # the default policy does not give /dev/shm, which the pool needs
    assert plain.rc != 0 or plain.stdout.split()[:1] != ["285"], plain
    shm = [x for x in decisions(r.recs, "write") if x[0] and x[0].startswith("/dev/shm/")]
    assert shm and all(x[1] == "allow" for x in shm)
    assert shm[0][2]["file"].endswith("python.policy")


@pytest.mark.skipif(not shutil.which("node"), reason="node is not installed")
def test_node_policy(root_caller):
    r = root_caller.run("node", "-e",
                        "require('fs').writeFileSync('out.txt', 'hi');"
                        "console.log(require('fs').readFileSync('out.txt', 'utf8'))",
                        opts=["-p", policy("node.policy")])
    assert r.rc == 0, r
    assert r.stdout.strip() == "hi"
    assert r.result["limits"]["memory"]["value"] == 4 << 30  # the policy's, not the default's
    writes = [x for x in decisions(r.recs, "write") if x[0] and x[0].endswith("/out.txt")]
    assert writes and writes[0][1] == "allow"


def test_shell_policy(root_caller):
    script = "printf 'b\\na\\n' | sort | sha256sum | cut -c1-8; echo x | gzip | gunzip"
    r = root_caller.run("sh", "-c", script, opts=["-p", policy("shell.policy")])
    assert r.rc == 0, r
    assert r.stdout.split() == ["6e2a36d1", "x"] or len(r.stdout.split()[0]) == 8, r
    plain = root_caller.run("sh", "-c", "echo x | gzip | gunzip", opts=["-p", policy("default.policy")])
    assert plain.rc != 0, plain  # gzip is not in the default exec list
    execs = {x[0]: x for x in decisions(r.recs, "exec")}
    assert execs["/usr/bin/gzip"][1] == "allow"
    assert execs["/usr/bin/gzip"][2]["file"].endswith("shell.policy")


HELLO_C = '#include <stdio.h>\nint main(void) { puts("hello from C"); return 0; }\n'
HELLO_CC = '#include <iostream>\nint main() { std::cout << "hello from C++" << std::endl; }\n'


def test_c_policy_compiles_and_runs(root_caller):
    d = root_caller.dir("csrc")
    for name, text in (("hello.c", HELLO_C), ("hello.cc", HELLO_CC)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
    os.chmod(d, 0o777)
    script = "gcc -O2 -o hc hello.c && ./hc && g++ -o hcc hello.cc && ./hcc"
    r = root_caller.run("sh", "-c", script, opts=["-p", "c", "--workdir", d])
    assert r.rc == 0, r
    assert r.stdout.split("\n")[:2] == ["hello from C", "hello from C++"], r
    execs = {x[0]: x for x in decisions(r.recs, "exec")}
    assert execs[os.path.join(d, "hc")][1] == "allow"
    assert execs["/usr/lib/gcc/x86_64-linux-gnu/12/cc1"][2]["file"].endswith("c.policy")
    plain = root_caller.run("sh", "-c", "gcc -O2 -o hc2 hello.c", opts=["--workdir", d])
    assert plain.rc != 0, plain  # the default policy has no compiler


HI_JAVA = 'public class Hi { public static void main(String[] a) { System.out.println("hi java"); } }\n'


@pytest.mark.skipif(not os.path.exists("/usr/bin/javac"), reason="no JDK (openjdk-17-jdk-headless)")
def test_java_policy_compiles_and_runs(root_caller):
    d = root_caller.dir("jsrc")
    with open(os.path.join(d, "Hi.java"), "w") as f:
        f.write(HI_JAVA)
    os.chmod(d, 0o777)
    r = root_caller.run("sh", "-c", "javac Hi.java && java Hi", opts=["-p", "java", "--workdir", d],
                        timeout=180)
    assert r.rc == 0 and r.stdout == "hi java\n", r
    execs = {x[0]: x for x in decisions(r.recs, "exec")}
    javac = [p for p in execs if p and p.endswith("/bin/javac")]
    assert javac and execs[javac[0]][2]["file"].endswith("java.policy")


class Server:
    """A TCP server on the host's loopback that counts what it accepts."""

    def __init__(self, port):
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.accepted = 0
        self.stop = False
        self.t = threading.Thread(target=self.loop, daemon=True)
        self.t.start()

    def loop(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            c.sendall(b"hello\n")
            c.close()

    def close(self):
        self.stop = True
        self.t.join()
        self.sock.close()


def free_port(lo, hi):
    for port in range(lo, hi):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    pytest.skip(f"no free port in {lo}-{hi}")


def test_localhost_policy(root_caller):
    """The candidate serves on the sandbox's own 127.0.0.1 and connects to
    itself; a host server on the same port never hears from it (the
    loopback is the sandbox's own), and a port outside the range is refused."""
    port = free_port(8000, 8064)
    host_same, other = Server(port), Server(free_port(9100, 9200))
    try:
        code = ("import socket, sys, threading\n"
                "srv = socket.socket()\n"
                "srv.bind(('127.0.0.1', int(sys.argv[1])))\n"
                "srv.listen(4)\n"
                "threading.Thread(target=lambda: srv.accept()[0].sendall(b'inside\\n'),\n"
                "                 daemon=True).start()\n"
                "for port in map(int, sys.argv[1:]):\n"
                "    try:\n"
                "        print(port, socket.create_connection(('127.0.0.1', port), timeout=3).recv(7))\n"
                "    except OSError as e:\n"
                "        print(port, 'failed', e.errno)\n")
        r = root_caller.run("python3", "-c", code, str(port),
                            str(other.sock.getsockname()[1]),
                            opts=["-p", policy("localhost.policy")])
    finally:
        host_same.close()
        other.close()
    assert r.rc == 0, r
    lines = r.stdout.splitlines()
    assert lines[0].endswith("b'inside\\n'"), lines
    assert "failed" in lines[1], lines
    assert host_same.accepted == 0 and other.accepted == 0
    conns = decisions(r.recs, "connect")
    assert [c[1] for c in conns] == ["allow", "deny"], conns
    assert conns[0][2]["line"] == rule_line("localhost.policy", "allow connect tcp")
    binds = decisions(r.recs, "bind")
    assert [c[1] for c in binds] == ["allow"], binds


def test_observe_policy_allows_and_records_everything(root_caller, probe, secret):
    r, got = run_probe(root_caller, probe, secret, "observe.policy")
    assert got["exec-other"] == "ok"
    # the kernel boundary still holds: /usr is read-only, the home not mounted
    assert got["write-system"] == "failed 30"
    assert got["read-home"] == "failed 2"
    recs = r.recs
    sys_recs = syscalls(recs)
    assert sys_recs and all(x["decision"] == "allow" for x in sys_recs)
    classes = {x["class"] for x in sys_recs}
    assert {"read", "write", "exec", "connect"} <= classes


def test_paths_are_judged_by_what_they_really_name(root_caller):
    """A symlink in /tmp pointing at a secret, a /tmp/../ detour and a
    relative climb are all decided on the canonical path, by the rule that
    names it (default.policy's deny of /root)."""
    code = ("import os\n"
            "os.symlink('/root/.ssh/id_rsa', '/tmp/k')\n"
            "for p in ['/tmp/k', '/tmp/../root/.ssh/id_rsa', 'a/../../../root/.ssh/x']:\n"
            "    try:\n"
            "        open(p)\n"
            "    except OSError as e:\n"
            "        print(p, e.errno)\n")
    r = root_caller.run("python3", "-c", code, opts=["-p", policy("default.policy")])
    assert r.rc == 0, r
    want = {"/tmp/k": "/root/.ssh/id_rsa", "/tmp/../root/.ssh/id_rsa": "/root/.ssh/id_rsa",
            "a/../../../root/.ssh/x": "/root/.ssh/x"}
    line = rule_line("default.policy", "deny read ~/**")
    for given, resolved in want.items():
        rec = [x for x in syscalls(r.recs, **{"class": "read"}) if x["args"]["path"] == given]
        assert rec, given
        assert rec[0]["args"]["resolved"] == resolved
        assert rec[0]["decision"] == "deny" and rec[0]["rule"]["line"] == line, rec[0]
