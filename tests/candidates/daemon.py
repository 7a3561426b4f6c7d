"""daemon.py MARKER: the classic daemon: fork, setsid, fork again, and let
the grandchild run a long sleep whose argv[0] is MARKER.  The original
process exits as soon as the sleep is running (it waits for EOF on a
close-on-exec pipe, which only the grandchild's exec closes)."""
import os
import sys

marker = sys.argv[1]
r, w = os.pipe()  # both ends close-on-exec (Python's default)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.execv("/usr/bin/sleep", [marker, "1000"])
    os._exit(0)
os.close(w)
os.read(r, 1)  # EOF: the daemon is running
os.wait()
print("parent done")
