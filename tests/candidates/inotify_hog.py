"""Take inotify instances until the kernel refuses one (the per-user count,
fs.inotify.max_user_instances), write how many in SHARED/NAME.count, and
hold them until SHARED/done appears."""
import ctypes
import os
import sys
import time

shared, name = sys.argv[1], sys.argv[2]
libc = ctypes.CDLL(None, use_errno=True)
held = []
while len(held) < 100000:
    fd = libc.inotify_init1(0)
    if fd < 0:
        break
    held.append(fd)
with open(os.path.join(shared, name + ".count"), "w") as f:
    f.write(f"{len(held)} {os.strerror(ctypes.get_errno())}")
end = time.monotonic() + 60
while not os.path.exists(os.path.join(shared, "done")) and time.monotonic() < end:
    time.sleep(0.02)
