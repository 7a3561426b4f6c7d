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
# written whole, then renamed: the test reads it as soon as it exists
with open(os.path.join(shared, name + ".count.tmp"), "w") as f:
    f.write(f"{len(held)} {os.strerror(ctypes.get_errno())}")
os.rename(os.path.join(shared, name + ".count.tmp"), os.path.join(shared, name + ".count"))
end = time.monotonic() + 60
while not os.path.exists(os.path.join(shared, "done")) and time.monotonic() < end:
    time.sleep(0.02)
