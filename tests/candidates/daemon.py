"""The classic daemon: fork, setsid, fork again, and let the grandchild
run a long sleep whose argv[0] is the marker given as argument; the
original process exits at once."""
import os
import sys

marker = sys.argv[1]
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        devnull = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.execv("/usr/bin/sleep", [marker, "1000"])
    os._exit(0)
os.wait()
print("parent done")
