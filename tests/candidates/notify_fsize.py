"""notify_fsize.py FILE SIZE: grow FILE to SIZE bytes with truncate(2) and
with ftruncate(2), SIGXFSZ ignored; print what each got:
  truncate errno=E   ftruncate errno=E   (0: it worked)"""
import os
import signal
import sys

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
path, size = sys.argv[1], int(sys.argv[2])
open(path, "w").close()
for name, grow in (("truncate", lambda: os.truncate(path, size)),
                   ("ftruncate", lambda: os.ftruncate(fd, size))):
    fd = os.open(path, os.O_WRONLY)
    try:
        grow()
        print(f"{name} errno=0")
    except OSError as e:
        print(f"{name} errno={e.errno}")
    os.close(fd)
