"""audit.py: one of each kind of attempt, in a known order, each on a path
or address nothing else in the run touches.  Prints one line per step."""
import os
import socket
import subprocess


def step(name, fn):
    try:
        fn()
        print(name, "ok", flush=True)
    except OSError as e:
        print(name, "failed", e.errno, flush=True)


def connect():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.connect(("127.0.0.1", 9))


step("read", lambda: open("/etc/hostname").read())
step("create", lambda: open("audit-out.txt", "w").write("data\n"))
step("write-system", lambda: open("/usr/share/vigil-audit-test", "w"))
step("read-secret", lambda: open("/root/.ssh/id_rsa").read())
step("delete", lambda: os.unlink("audit-out.txt"))
step("connect", connect)
step("run-allowed", lambda: subprocess.run(["/usr/bin/echo", "child says hi"], check=True))
step("run-denied", lambda: subprocess.run(["/usr/bin/whoami"], check=True))
