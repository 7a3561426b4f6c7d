"""notify_emfile.py: open /etc/hostname until the open-files limit says
EMFILE; print how many it got.  Exit 0 when it met the limit."""
import errno
import os
import sys

fds = []
while True:
    try:
        fds.append(os.open("/etc/hostname", os.O_RDONLY))
    except OSError as e:
        if e.errno != errno.EMFILE:
            raise
        print(f"emfile after {len(fds)}")
        sys.exit(0)
