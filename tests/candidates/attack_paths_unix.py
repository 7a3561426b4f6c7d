"""attack_paths_unix.py: connect to pathname unix sockets through /proc
magic links that name nothing (an unknown pid, a pipe's fd): each must be
refused as unresolvable, not judged by its spelling.  Prints
"PATH: errno N" or "PATH: ok" per attempt."""
import os
import socket

r, w = os.pipe()
for path in ("/proc/99999/cwd/x.sock", "/proc/self/fd/%d/x.sock" % r):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        print("%s: ok" % path)
    except OSError as e:
        print("%s: errno %d" % (path, e.errno))
    s.close()
