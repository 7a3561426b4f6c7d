"""spawner.py MARKER [DEPTH]: start two sleeping children whose argv[0] is
MARKER and, while DEPTH > 0, one more spawner one level down (so there are
grandchildren too); the top one prints 'ready' once everything is started
and then sleeps.  Used to check that killing vigil ends them all."""
import os
import subprocess
import sys
import time

marker = sys.argv[1]
depth = int(sys.argv[2]) if len(sys.argv) > 2 else 2
for _ in range(2):
    subprocess.Popen([marker, "1000"], executable="/usr/bin/sleep")
if depth > 0:
    sub = subprocess.Popen([sys.executable, __file__, marker, str(depth - 1)],
                           stdout=subprocess.PIPE)
    sub.stdout.readline()  # wait until the subtree is up
# fill the log a little so that the kill lands in the middle of it
for _ in range(100):
    open("/etc/hostname").close()
print("ready", flush=True)
time.sleep(1000)
