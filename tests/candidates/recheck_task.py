"""recheck_task.py: a candidate for tests/test_recheck.py that tries, one
by one and whatever each answer is, what a stricter policy refuses: a
system file, a secret (/root/.ssh/id_rsa, a probe), a directory and files
made, renamed and removed in its workdir, a connection to the sandbox's
loopback (argv[1] the port) and a program run (cat).  It makes the same
calls however each is answered, so a run under another policy can be
compared with it call by call."""
import os
import socket
import subprocess
import sys


def attempt(what, fn):
    try:
        fn()
        print(what, "ok")
    except OSError as e:
        print(what, e.strerror)


attempt("hostname", lambda: open("/etc/hostname").read())
attempt("key", lambda: open("/root/.ssh/id_rsa").read())
attempt("mkdir", lambda: os.mkdir("out"))
attempt("write", lambda: open("out/a.txt", "w").write("a\n"))
attempt("rename", lambda: os.rename("out/a.txt", "out/b.txt"))
attempt("unlink", lambda: os.unlink("out/b.txt"))
attempt("connect", lambda: socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2))
attempt("cat", lambda: subprocess.run(["cat", "/etc/hostname"], stdout=subprocess.DEVNULL))
print("done")
