"""kernel_exec.py MARKER: copy /usr/bin/echo into the workdir and into /tmp
and run each copy (argv[1] = MARKER): a program the candidate wrote itself.
Prints "ran DEST" when the copy ran, "refused DEST ERRNO" when exec failed."""
import os
import shutil
import subprocess
import sys

marker = sys.argv[1]
for dest in (os.path.join(os.getcwd(), "mine"), "/tmp/mine"):
    shutil.copy("/usr/bin/echo", dest)
    os.chmod(dest, 0o755)
    try:
        out = subprocess.run([dest, marker], capture_output=True, text=True).stdout
        print("ran", dest, out.strip())
    except OSError as e:
        print("refused", dest, e.errno)
