"""attack_terminal.py: a candidate that puts terminal control bytes in
every name vigil records and may print: its process name, the files it
creates and opens, a unix socket address, a DNS name, the program it runs,
that program's argv and environment.  The bytes (HOSTILE) are an OSC title
change, a clear-screen CSI, a forged "vigil: ok" line, a bidi override,
invalid UTF-8, DEL and a C1 CSI (as UTF-8 and as a byte).  It prints
nothing itself: whatever reaches the terminal is vigil's.
  touch       every name above, nothing refused on purpose but the exec
  kill NAME   open /etc/NAME+HOSTILE (the test's policy kills on it)
  execcheck   run a #! script whose interpreter's name is hostile (no
              newline or space: a #! line's program name ends there) for the
              exec check to kill"""
import ctypes
import os
import shutil
import socket
import struct
import sys

HOSTILE = b"\x1b]0;pwned\x07\x1b[2J\nvigil: ok\n\xe2\x80\xae\xff\xfe\x7f\xc2\x9b\x9b"
PR_SET_NAME = 15
RESOLVER = ("127.0.0.53", 53)


def attempt(fn, *args):
    """Refusals are expected: the names are what this candidate is about."""
    try:
        return fn(*args)
    except OSError:
        return None


def set_name():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_NAME, ctypes.c_char_p(HOSTILE[:15]), 0, 0, 0)


def files():
    fd = attempt(os.open, b"/tmp/" + HOSTILE, os.O_CREAT | os.O_WRONLY, 0o644)
    if fd is not None:
        os.close(fd)
    attempt(os.open, b"/etc/" + HOSTILE, os.O_RDONLY)
    attempt(os.rename, b"/tmp/" + HOSTILE, b"/tmp/" + HOSTILE + b".2")


def unix_socket():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    attempt(s.connect, b"/tmp/" + HOSTILE + b".sock")
    s.close()


def dns():
    q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0)
    q += bytes([len(HOSTILE)]) + HOSTILE + b"\0\0\1\0\1"
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(2)
    if attempt(s.sendto, q, RESOLVER):
        attempt(s.recv, 512)
    s.close()


def run(path, argv, env):
    pid = os.fork()
    if pid == 0:
        attempt(os.execve, path, argv, env)
        os._exit(127)
    os.waitpid(pid, 0)


def programs():
    prog = b"/tmp/" + HOSTILE + b"prog"
    attempt(shutil.copy, "/usr/bin/true", prog)
    attempt(os.chmod, prog, 0o755)
    env = {HOSTILE: HOSTILE, b"PATH": b"/usr/bin"}
    run(prog, [prog, HOSTILE], env)                      # denied: /tmp is not for programs
    run(b"/usr/bin/true", [HOSTILE, HOSTILE], env)       # allowed: the argv is recorded


def touch():
    set_name()
    files()
    unix_socket()
    dns()
    programs()


def execcheck():
    interp = b"/tmp/" + HOSTILE.replace(b"\n", b"").replace(b" ", b"_") + b"interp"
    shutil.copy("/usr/bin/true", interp)
    os.chmod(interp, 0o755)
    with open("/tmp/s.sh", "wb") as f:
        f.write(b"#!" + interp + b"\n")
    os.chmod("/tmp/s.sh", 0o755)
    run(b"/tmp/s.sh", [b"/tmp/s.sh"], {})


if __name__ == "__main__":
    if sys.argv[1] == "touch":
        touch()
    elif sys.argv[1] == "kill":
        attempt(os.open, b"/etc/" + sys.argv[2].encode() + HOSTILE, os.O_RDONLY)
    else:
        execcheck()
