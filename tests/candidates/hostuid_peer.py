"""One of two runs side by side (tests/test_run_hostuid.py): write a file
in the work dir, say so in the shared dir, then try the other run's
candidate by the host pid the test hands over (signal, /proc, ptrace) and
write what each attempt got; stay alive until the test says done."""
import ctypes
import errno
import json
import os
import sys
import time

PTRACE_ATTACH = 16
shared, name = sys.argv[1], sys.argv[2]


def wait_for(path, within=60):
    end = time.monotonic() + within
    while not os.path.exists(path):
        if time.monotonic() > end:
            sys.exit(f"{path} never came")
        time.sleep(0.02)


def put(path, text):
    """Whole or not there: the test reads a file as soon as it exists."""
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def outcome(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


with open("mine", "w") as f:
    f.write(name)
put(os.path.join(shared, name + ".ready"), str(os.getpid()))
wait_for(os.path.join(shared, name + ".peer"))
with open(os.path.join(shared, name + ".peer")) as f:
    peer = int(f.read())
libc = ctypes.CDLL(None, use_errno=True)


def ptrace():
    if libc.ptrace(PTRACE_ATTACH, peer, None, None) != 0:
        raise OSError(ctypes.get_errno(), "ptrace")


tried = {"kill": outcome(lambda: os.kill(peer, 0)),
         "proc": outcome(lambda: open(f"/proc/{peer}/status").close()),
         "ptrace": outcome(ptrace)}
put(os.path.join(shared, name + ".tried"), json.dumps(tried))
wait_for(os.path.join(shared, "done"))
